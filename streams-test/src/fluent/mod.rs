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
#![doc = ""]
#![doc = include_str!("../../docs/FLUENT.md")]

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
