//! An in-memory test driver for `streams-core` topologies: Kafka's
//! `TopologyTestDriver`, `TestInputTopic` and `TestOutputTopic`, in Rust.
//!
//! Build a [`Topology`](streams_core::Topology), hand it to a
//! [`TopologyTestDriver`], pipe typed records into a [`TestInputTopic`]
//! and read typed results from a [`TestOutputTopic`]. No broker, no
//! threads, no real clock: every record is processed before the pipe
//! returns, and time moves only when the test moves it.
//!
//! ```
//! use streams_core::serde::StringSerde;
//! use streams_core::StreamsBuilder;
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("orders")
//!     .filter(|_, v| v.contains("priority"))
//!     .to("urgent");
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! let orders = driver.create_input_topic("orders", StringSerde, StringSerde);
//! let urgent = driver.create_output_topic("urgent", StringSerde, StringSerde);
//! orders.pipe_key_value("o-1", "priority: high");
//! orders.pipe_key_value("o-2", "normal");
//! assert_eq!(urgent.read_key_values_to_list(), [KeyValue::pair("o-1", "priority: high")]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]

pub mod app;
pub mod cluster;
pub mod connect;
mod driver;
mod example;
pub mod fluent;
mod input_topic;
mod output_queue;
mod output_topic;
pub mod semantics;
#[cfg(feature = "snapshot")]
#[cfg_attr(docsrs, doc(cfg(feature = "snapshot")))]
pub mod snapshot;
mod stores;
mod test_record;

pub use cluster::{TypedProducer, read_partition, read_topic, read_topic_committed};
pub use driver::{DEFAULT_START_MS, DriverBuilder, TopologyTestDriver};
pub use example::{Example, example, example_with_config};
pub use fluent::{
    IntoKeyValue, IntoTopology, RecordAssert, Snapshot, StoreAssert, TableAssert, TestInput,
    TestOutput, TestTopology,
};
pub use input_topic::TestInputTopic;
pub use output_topic::TestOutputTopic;
pub use stores::{
    KeyValueStoreView, SessionStoreView, StateStoreView, TimestampedKeyValueStoreView,
    TimestampedWindowStoreView, VersionedKeyValueStoreView, WindowStoreView,
};
pub use test_record::{KeyValue, TestRecord};
