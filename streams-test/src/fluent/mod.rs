//! Tests that read like the requirement: a one-line [`TestTopology`],
//! chained inputs, fluent assertions on output topics, tables and stores,
//! and snapshots.
//!
//! Kafka's `TestInputTopic` and `TestOutputTopic` (KAFKA-8233) removed the
//! boilerplate of consumer records and factories; people then wrote
//! fluent wrappers on top, bakdata's fluent-kafka-streams-tests the best
//! known. This module is that layer, built in:
//!
//! - [`TestTopology`]: a topology (or a function building one), its
//!   config and its driver. It finds the topics the topology reads and
//!   writes, internal ones hidden, so one input and one output need no
//!   names: [`input()`](TestTopology::input), [`output()`](TestTopology::output).
//! - [`TestInput`]: `add(k, v)`, `add_value(v)`, `add_tombstone(k)`, with
//!   a sticky [`at(ts)`](TestInput::at) and [`with_header`](TestInput::with_header).
//! - [`TestOutput`] and [`RecordAssert`]: `expect_next_record().has_key(k)
//!   .has_value(v).and()...`, `expect_records`, `expect_no_more_records`.
//! - [`TableAssert`] and [`StoreAssert`]: `has_entry`, `has_no_key`,
//!   `has_size` over the latest value per key of a topic, or a store.
//! - [`Snapshot`]: a whole topic or store for insta snapshot tests.
//!
//! Every failed check panics at the test's line (`#[track_caller]`) with
//! the topic or store, the offset, expected against actual (a
//! pretty_assertions diff for values spanning several lines) and what is
//! left in the topic. A record the serdes cannot decode fails with the
//! serde's error, the topic and the offset.
//!
//! The same test, with the plain driver and fluently:
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::{Result, StreamsBuilder, Topology};
//! use streams_test::{KeyValue, TestTopology, TopologyTestDriver};
//!
//! fn lengths() -> Result<Topology> {
//!     let builder = StreamsBuilder::new();
//!     builder.stream::<String, String>("words").map_values(|w| w.len() as i64).to("lengths");
//!     builder.build()
//! }
//!
//! // Plain:
//! let driver = TopologyTestDriver::new(lengths()?)?;
//! let words = driver.create_input_topic("words", StringSerde, StringSerde);
//! let out = driver.create_output_topic("lengths", StringSerde, I64Serde);
//! words.pipe_key_value("a", "kafka");
//! words.pipe_key_value("b", "rust");
//! assert_eq!(out.read_key_value(), KeyValue::pair("a", 5));
//! assert_eq!(out.read_key_value(), KeyValue::pair("b", 4));
//! assert!(out.is_empty());
//!
//! // Fluent:
//! let topology = TestTopology::new(lengths)?;
//! topology.input().add("a", "kafka").add("b", "rust");
//! topology
//!     .output()
//!     .with_value_serde(I64Serde)
//!     .expect_records([("a", 5), ("b", 4)])
//!     .expect_no_more_records();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A failure says where and what:
//!
//! ```
//! # use streams_core::StreamsBuilder;
//! # use streams_test::TestTopology;
//! let topology = TestTopology::new(|b: &StreamsBuilder| {
//!     b.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
//! })?;
//! topology.input().add("a", "x").add("b", "y");
//! let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
//!     topology.output().expect_next_record().has_value("x");
//! }))
//! .unwrap_err();
//! assert_eq!(
//!     failure.downcast_ref::<String>().map(String::as_str),
//!     Some(concat!(
//!         "record at offset 0 of topic `out`: the value is not the expected one\n",
//!         "expected: \"x\"\n",
//!         "  actual: \"X\"\n",
//!         "\n",
//!         "records left in topic `out` from offset 0:\n",
//!         "  offset 0: key \"a\", value \"X\", timestamp 0\n",
//!         "  offset 1: key \"b\", value \"Y\", timestamp 0",
//!     ))
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod input;
mod output;
mod record_assert;
mod report;
mod snapshot;
mod store_assert;
mod stream_assert;
mod table_assert;
mod test_topology;

pub use input::TestInput;
pub use output::TestOutput;
pub use record_assert::RecordAssert;
pub use snapshot::{REDACTED, Snapshot};
pub use store_assert::StoreAssert;
pub use stream_assert::IntoKeyValue;
pub use table_assert::TableAssert;
pub use test_topology::{IntoTopology, TestTopology};
