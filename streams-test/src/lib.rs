//! An in-memory test driver for `streams-core` topologies: Kafka's
//! `TopologyTestDriver`, `TestInputTopic` and `TestOutputTopic`, in Rust.
//!
//! Build a [`Topology`](streams_core::Topology), hand it to a
//! [`TopologyTestDriver`], pipe typed records into a [`TestInputTopic`]
//! and read typed results from a [`TestOutputTopic`]. No broker, no
//! threads, no real clock: every record is processed before the pipe
//! returns, and time moves only when the test moves it, so a test gives
//! the same result on every run.
//!
//! This page is the guide; each section ends with where to read more.
//!
//! - [A first test](#a-first-test)
//! - [What the driver does](#what-the-driver-does): processing, clocks,
//!   reading output, failures
//! - [Stores](#stores)
//! - [Time and punctuation](#time-and-punctuation)
//! - [Fluent tests](#fluent-tests)
//! - [Pictures and snapshots](#pictures-and-snapshots)
//! - [Beyond the driver](#beyond-the-driver): partitions, instances,
//!   crashes, connectors
//! - [Examples in three lines](#examples-in-three-lines)
//! - [Differences from Kafka's `TopologyTestDriver`](#differences-from-kafkas-topologytestdriver)
//!
//! # A first test
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
//! assert!(urgent.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In a test crate this is the body of a `#[test] fn ...() -> Result<(),
//! Box<dyn std::error::Error>>`; an error prints its message (an unknown
//! topic lists the topics that exist). Share the topology function
//! between the application and its tests, as Kafka's `WordCountDemoTest`
//! does (`examples/src/word_count.rs` in the repository).
//!
//! # What the driver does
//!
//! As Kafka's driver does:
//!
//! - Each pipe processes the record to completion: through every
//!   processor, then stream-time punctuation, then the records the
//!   topology wrote to topics it also reads (repartition topics, or a sink
//!   writing to a source topic), smallest timestamp first. All topics have
//!   one partition, 0; one task runs the whole topology.
//! - *Stream time* is the largest record timestamp processed (`-1` before
//!   the first). The *wall clock* moves only with
//!   [`advance_wall_clock_time`](TopologyTestDriver::advance_wall_clock_time).
//!   Each input topic has a clock of its own for records piped without a
//!   timestamp, with an optional auto-advance step
//!   ([`create_input_topic_with_time`](TopologyTestDriver::create_input_topic_with_time)).
//! - After each input record the driver commits: the record caches in
//!   front of the DSL's stores flush, so an aggregation gives at most one
//!   result per key and input record (Kafka's driver keeps the default
//!   10 MB cache too; `statestore.cache.max.bytes = 0` turns it off).
//! - Output topics read values, key-values or whole records (timestamp
//!   and headers), one at a time or all at once, as a map of the latest
//!   value per key (a tombstone keeps its key) or as a table (a tombstone
//!   removes it). Each failing read (`read_value`, panicking with Kafka's
//!   `empty topic: out`) has a `try_` form that returns `Ok(None)` for an
//!   empty topic and an error for a record the serdes cannot decode.
//! - Piping to a topic that no source reads fails with the topics that
//!   exist. The pipes of single records have `try_` forms
//!   (`try_pipe_record`, `try_pipe_key_value`, ...) that return the error
//!   (an unknown topic, a negative timestamp, a processing error) instead
//!   of panicking.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::serde::StringSerde;
//! use streams_core::StreamsBuilder;
//! use streams_test::{TestRecord, TopologyTestDriver};
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").to("out");
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! let input = driver.create_input_topic_with_time("in", StringSerde, StringSerde, 1_000, Duration::from_millis(10));
//! let output = driver.create_output_topic("out", StringSerde, StringSerde);
//! input.pipe_value("a"); // at the topic's clock, 1000, which then moves to 1010
//! input.pipe_value_at("b", 5_000); // an explicit timestamp leaves the topic's clock alone
//! input.pipe_value("c");
//! assert_eq!(
//!     output.read_records_to_list(),
//!     [
//!         TestRecord::new(None, Some("a".to_owned())).at(1_000),
//!         TestRecord::new(None, Some("b".to_owned())).at(5_000),
//!         TestRecord::new(None, Some("c".to_owned())).at(1_010),
//!     ]
//! );
//! assert_eq!((driver.stream_time(), driver.wall_clock_time()), (5_000, 0));
//! assert_eq!(output.try_read_value()?, None); // empty: nothing left
//! assert!(driver.create_input_topic("typo", StringSerde, StringSerde).try_pipe_value("x").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every promise, with a doc test that fails if it stops being true:
//! [`semantics`]. The bad-record handlers and the dead letter queue are
//! configured as in Kafka: see [`StreamsConfig`](streams_core::StreamsConfig).
//!
//! # Stores
//!
//! The driver hands out the topology's stores by name and kind, typed:
//! [`key_value_store`](TopologyTestDriver::key_value_store),
//! [`timestamped_key_value_store`](TopologyTestDriver::timestamped_key_value_store)
//! (the DSL's tables and aggregations), [`window_store`](TopologyTestDriver::window_store),
//! [`session_store`](TopologyTestDriver::session_store),
//! [`versioned_key_value_store`](TopologyTestDriver::versioned_key_value_store);
//! [`state_stores`](TopologyTestDriver::state_stores) lists them with
//! their kinds. A wrong name is an error that lists the stores that
//! exist; a wrong kind or types, one that names the store's kind. A store
//! with logging on writes its changelog, `<application.id>-<store>-changelog`,
//! which a test reads as any output topic.
//!
//! ```
//! use streams_core::Materialized;
//! use streams_core::state::StoreKind;
//! use streams_test::{KeyValue, example};
//!
//! let driver = example(|builder| {
//!     builder.stream::<String, String>("clicks").group_by_key().count_with(Materialized::as_("clicks-per-user"));
//! });
//! driver.input::<String, String>("clicks").pipe_key_values([("ann", "home"), ("bob", "home"), ("ann", "cart")]);
//! assert_eq!(driver.state_stores()["clicks-per-user"], StoreKind::TimestampedKeyValue);
//! let counts = driver.timestamped_key_value_store::<String, i64>("clicks-per-user")?;
//! assert_eq!(counts.to_map(), [("ann".to_owned(), 2), ("bob".to_owned(), 1)].into());
//! let changelog = driver.output::<String, i64>("test-app-clicks-per-user-changelog");
//! assert_eq!(
//!     changelog.read_key_values_to_list(),
//!     [KeyValue::pair("ann", 1), KeyValue::pair("bob", 1), KeyValue::pair("ann", 2)]
//! );
//! assert!(driver.key_value_store::<String, i64>("no-such-store").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The store kinds and their rules: [`streams_core::state`]; the DSL's
//! record cache: [the DSL docs](streams_core::dsl#the-record-cache).
//!
//! # Time and punctuation
//!
//! A processor schedules a punctuation on either clock
//! ([`ProcessorContext::schedule`](streams_core::processor::ProcessorContext::schedule)).
//! A stream-time schedule is aligned to 0 and fires when a record moves
//! stream time to or past its next boundary, once however many
//! boundaries the record jumps; a wall-clock schedule fires when the test
//! advances the wall clock past it, at most once per advance.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
//! use streams_core::{Record, Result, Topology};
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! /// Counts records; reports the count as "stream" every 10 ms of stream
//! /// time and as "wall" every minute of wall-clock time.
//! #[derive(Default)]
//! struct Ticker {
//!     seen: i64,
//! }
//! impl Processor<String, String, String, i64> for Ticker {
//!     fn init(&mut self, ctx: &mut ProcessorContext<'_, String, i64>) -> Result<()> {
//!         ctx.schedule(Duration::from_millis(10), PunctuationType::StreamTime)?;
//!         ctx.schedule(Duration::from_secs(60), PunctuationType::WallClockTime)?;
//!         Ok(())
//!     }
//!     fn process(&mut self, _: &mut ProcessorContext<'_, String, i64>, _: Record<String, String>) -> Result<()> {
//!         self.seen += 1;
//!         Ok(())
//!     }
//!     fn punctuate(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, at: i64, p: &Punctuation) -> Result<()> {
//!         let clock = match p.kind {
//!             PunctuationType::StreamTime => "stream",
//!             PunctuationType::WallClockTime => "wall",
//!         };
//!         ctx.forward(Record::new(Some(clock.to_owned()), Some(self.seen), at))
//!     }
//! }
//!
//! let mut topology = Topology::new();
//! topology
//!     .add_source::<String, String>("source", "events")?
//!     .add_processor("ticker", Ticker::default, &["source"])?
//!     .add_sink::<String, i64>("sink", "ticks", &["ticker"])?;
//! let driver = TopologyTestDriver::new(topology)?;
//! let events = driver.create_input_topic("events", StringSerde, StringSerde);
//! let ticks = driver.create_output_topic("ticks", StringSerde, I64Serde);
//! events.pipe_value_at("a", 3); // stream time 3: the first boundary, 0, is passed
//! events.pipe_value_at("b", 7);
//! events.pipe_value_at("c", 35); // jumps 10, 20 and 30: fires once, at 35
//! assert_eq!(ticks.read_key_values_to_list(), [KeyValue::pair("stream", 1), KeyValue::pair("stream", 3)]);
//! driver.advance_wall_clock_time(Duration::from_secs(150)); // two minutes pass: fires once
//! assert_eq!(ticks.read_key_values_to_list(), [KeyValue::pair("wall", 3)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Windows, grace periods and suppression follow stream time the same way:
//! see [`streams_core::dsl`] and [`semantics`].
//!
//! # Fluent tests
//!
//! [`TestTopology`] (module [`fluent`], after bakdata's
//! fluent-kafka-streams-tests) finds the topics from the topology and
//! checks outputs, tables and stores in chained lines; a failed check
//! says which topic and offset, expected against actual, and what is left.
//!
//! ```
//! use streams_core::StreamsBuilder;
//! use streams_test::TestTopology;
//!
//! let topology = TestTopology::new(|builder: &StreamsBuilder| {
//!     builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
//! })?;
//! topology.input().add("a", "x").at(10).add("b", "y");
//! topology
//!     .output()
//!     .expect_next_record().has_key("a").has_value("X").has_timestamp(0)
//!     .and()
//!     .expect_next_record().has_key("b").has_value("Y").has_timestamp(10)
//!     .and()
//!     .expect_no_more_records();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The whole API, side by side with the plain driver, with its failure
//! messages and snapshots: [`fluent`].
//!
//! # Pictures and snapshots
//!
//! `topology.describe()` prints exactly what Kafka's `describe()` prints,
//! and draws as DOT or Mermaid (the `topology-viz` command draws SVG and
//! an HTML page from it): see
//! [`streams_core::guide::pictures`]. In a test,
//! [`assert_topology_snapshot!`] (feature `snapshot`, on by default)
//! keeps the text in an insta snapshot, so that a change to the graph
//! shows up as a diff to review:
//!
//! ```
//! # #[cfg(feature = "snapshot")] {
//! use streams_core::StreamsBuilder;
//! use streams_test::assert_topology_snapshot;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").select_key(|_, v| v.clone()).group_by_key().count();
//! assert_topology_snapshot!(builder.build()?, @r"
//! Topologies:
//!    Sub-topology: 0
//!     Source: KSTREAM-SOURCE-0000000000 (topics: [in])
//!       --> KSTREAM-KEY-SELECT-0000000001
//!     Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
//!       --> KSTREAM-FILTER-0000000005
//!       <-- KSTREAM-SOURCE-0000000000
//!     Processor: KSTREAM-FILTER-0000000005 (stores: [])
//!       --> KSTREAM-SINK-0000000004
//!       <-- KSTREAM-KEY-SELECT-0000000001
//!     Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition)
//!       <-- KSTREAM-FILTER-0000000005
//!
//!   Sub-topology: 1
//!     Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition])
//!       --> KSTREAM-AGGREGATE-0000000003
//!     Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])
//!       --> none
//!       <-- KSTREAM-SOURCE-0000000006
//! ");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Beyond the driver
//!
//! Kafka's driver runs one task on partition 0. Bugs that need partitions,
//! several instances, a rebalance or a crash show up only on a cluster
//! (features `cluster` and `connect`, on by default; without them the
//! crate is the driver alone and builds about a third faster):
//!
//! - [`DriverBuilder::cluster`]: the driver mirrors its output, repartition
//!   and changelog topics to a simulated cluster (`streams-broker`) and
//!   restores its stores from it, so a test can compact a changelog and
//!   start a second driver from it ([`cluster`]).
//! - [`app::StreamsCluster`]: the real runtime, `KafkaStreams`, with
//!   several instances over partitioned topics on the simulated cluster,
//!   stepped, crashed and restarted by the test, on a mock clock.
//! - [`connect::SinkTestDriver`]: a Kafka Connect-style sink connector
//!   with Connect's error handling and dead letter queue.
//!
//! # Examples in three lines
//!
//! [`example`] builds a topology in a closure and returns a running
//! driver whose [`input`](Example::input) and [`output`](Example::output)
//! topics take the built-in serdes, so that a doc example is its topology,
//! its input and its assertion:
//!
//! ```
//! use streams_test::{KeyValue, example};
//!
//! let driver = example(|b| b.stream::<String, i64>("amounts").filter(|_, n| *n > 0).to("credits"));
//! driver.input::<String, i64>("amounts").pipe_key_values([("a", 5), ("b", -2)]);
//! assert_eq!(driver.output::<String, i64>("credits").read_key_values_to_list(), [KeyValue::pair("a", 5)]);
//! ```
//!
//! # Differences from Kafka's `TopologyTestDriver`
//!
//! What the DSL and the runtime do differently from Kafka Streams is in
//! [`streams_core`'s list](streams_core#differences-from-kafka-streams).
//! The driver itself differs in these, on purpose:
//!
//! - **Fixed clocks.** The wall clock and every input topic's clock start
//!   at [`DEFAULT_START_MS`] (0) unless the test says otherwise
//!   ([`DriverBuilder::initial_wall_clock_time`],
//!   [`create_input_topic_with_time`](TopologyTestDriver::create_input_topic_with_time)),
//!   never the machine's clock as Kafka's do; and the default
//!   `application.id` is `test-app`, where Kafka's driver makes up a random
//!   one. So internal topic names and timestamps are the same on every run.
//! - **Fallible forms.** Every read that can fail, and every pipe of a
//!   single record, has a `try_` form returning a `Result` (the other form
//!   panics at the test's line, with Kafka's message where Kafka has one:
//!   `empty topic: out`); see [`TestInputTopic`] and [`TestOutputTopic`]. Errors are
//!   [`StreamsError`](streams_core::StreamsError) values whose messages name
//!   the topic, partition, offset, node or store involved.
//! - **Borrowed handles.** Topics and store views borrow the driver, so
//!   none outlives it; [`close`](TopologyTestDriver::close) takes the
//!   driver and returns the first error a processor's `close` gave, and
//!   dropping the driver closes it too.
//! - **Metrics.** [`metrics`](TopologyTestDriver::metrics) has three task
//!   counters (processed, dropped, dead-lettered records), and
//!   [`dropped_records_by_node`](TopologyTestDriver::dropped_records_by_node)
//!   says where records were dropped; Kafka's driver exposes every
//!   registered metric, which this one does not have.
//! - **More than Kafka's.** A driver can mirror to a simulated cluster and
//!   restore its stores from it ([`cluster`]), and the fluent API, topology
//!   snapshots and the [`example`] helper come with it.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]

#[cfg(feature = "cluster")]
#[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
pub mod app;
#[cfg(feature = "cluster")]
#[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
pub mod cluster;
#[cfg(feature = "connect")]
#[cfg_attr(docsrs, doc(cfg(feature = "connect")))]
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

#[cfg(feature = "cluster")]
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
