//! Kafka Streams-style stream processing in Rust, built to be tested in
//! memory.
//!
//! The core types:
//! - [`StreamsBuilder`] and [`KStream`]: the DSL. Operators (`filter`,
//!   `map_values`, `split`, `to`, ...) add nodes to a [`Topology`].
//! - [`Topology`]: the graph of sources, processors and sinks, also built
//!   directly with the Processor API ([`Topology::add_source`],
//!   [`Topology::add_processor`], [`Topology::add_sink`]) and a
//!   [`Processor`](processor::Processor) of your own.
//! - [`Record`]: what flows between processors, typed: deserialized once
//!   at a source by a [`Serde`](serde::Serde), serialized once at a sink.
//! - [`StreamTask`](engine::StreamTask): the engine that runs a topology;
//!   the `streams-test` crate's `TopologyTestDriver` drives one.
//! - [`KafkaStreams`](runtime::KafkaStreams): the runtime, a topology run
//!   as an application on a cluster, one task per sub-topology and
//!   partition, shared by the application's instances; it knows only the
//!   client API (`streams-clients`), so the same code runs on the
//!   simulated cluster in tests and on a real one.
//!
//! ```
//! use streams_core::engine::StreamTask;
//! use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("greetings")
//!     .filter(|_, v| v.starts_with("hello"))
//!     .map_values(|v| v.len() as i64)
//!     .to("lengths");
//! let mut task = StreamTask::new(&builder.build()?, &StreamsConfig::new("app"), 0)?;
//! task.process("greetings", 0, RawRecord::new(None, Some(b"hello world".to_vec()), 1))?;
//! task.process("greetings", 1, RawRecord::new(None, Some(b"bye".to_vec()), 2))?;
//! let out = task.take_produced();
//! assert_eq!(out.len(), 1);
//! assert_eq!(out[0].record.value, Some(11_i64.to_be_bytes().to_vec()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]

pub mod config;
pub mod dsl;
pub mod engine;
pub mod error;
pub mod processor;
pub mod record;
pub mod runtime;
pub mod serde;
pub mod state;
pub mod time;
pub mod topology;

/// The longer pages of the guide, each a file of the crate's `docs/`
/// directory whose examples run as doc tests.
pub mod guide {
    #[doc = include_str!("../docs/VISUALIZE.md")]
    pub mod pictures {}
}

#[allow(deprecated)]
pub use config::{DeserializationHandling, StreamsConfig};
pub use dsl::{
    Branched, BranchedKStream, Consumed, GlobalKTable, Grouped, Joined, KGroupedStream,
    KGroupedTable, KStream, KTable, Materialized, Produced, Repartitioned, StreamsBuilder,
};
pub use dsl::{
    BufferConfig, SessionWindowedKStream, SessionWindows, SlidingWindows, Suppressed,
    TimeWindowedKStream, TimeWindows, Window, Windowed, WindowedSerde,
};
pub use error::{
    RecordOrigin, RecordPart, Result, SerdeError, StreamsError, TopologyError, UserCodePanic,
};
pub use record::{Change, ConsumerRecord, Header, Headers, RawRecord, Record, RecordMetadata};
pub use topology::{TopicName, Topics, Topology};
