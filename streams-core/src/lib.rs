//! Kafka Streams-style stream processing in Rust, built to be tested in
//! memory.
//!
//! The core types:
//! - [`StreamsBuilder`] and [`KStream`], [`KTable`]: the DSL. Operators
//!   (`filter`, `map_values`, `split`, `group_by`, `join`, `to`, ...) add
//!   nodes to a [`Topology`], named as Kafka names them.
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
//!   simulated cluster in tests and on a real one (`streams-kafka`).
//!
//! This page is the guide; each section ends with where to read more.
//!
//! - [A first topology](#a-first-topology), tested
//! - [The DSL](#the-dsl)
//! - [The Processor API, stores and punctuation](#the-processor-api-stores-and-punctuation)
//! - [Serdes and bad records](#serdes-and-bad-records)
//! - [Pictures](#pictures)
//! - [Running an application](#running-an-application)
//! - [Differences from Kafka Streams](#differences-from-kafka-streams)
//!
//! # A first topology
//!
//! A topology is a function of a [`StreamsBuilder`]; the application runs
//! it and its tests drive it with `streams-test`'s `TopologyTestDriver`:
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::{Produced, Result, StreamsBuilder, Topology};
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! /// Words of more than four letters, counted.
//! fn long_words() -> Result<Topology> {
//!     let builder = StreamsBuilder::new();
//!     builder
//!         .stream::<String, String>("lines")
//!         .flat_map_values(|line| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
//!         .filter(|_, word| word.len() > 4)
//!         .group_by(|_, word| word.clone())
//!         .count()
//!         .to_stream()
//!         .to_with("long-words", Produced::with(StringSerde, I64Serde));
//!     builder.build()
//! }
//!
//! let driver = TopologyTestDriver::new(long_words()?)?;
//! let lines = driver.create_input_topic("lines", StringSerde, StringSerde);
//! let counts = driver.create_output_topic("long-words", StringSerde, I64Serde);
//! lines.pipe_value("stream processing in rust");
//! lines.pipe_value("stream it");
//! assert_eq!(
//!     counts.read_key_values_to_list(),
//!     [KeyValue::pair("stream", 1), KeyValue::pair("processing", 1), KeyValue::pair("stream", 2)]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The driver's semantics, stores, clocks and the fluent assertions are
//! the guide of the `streams-test` crate.
//!
//! # The DSL
//!
//! Operators mirror Kafka Streams' names in snake_case (Kafka's camelCase
//! names are search aliases: `mapValues` finds
//! [`map_values`](KStream::map_values)), and each method has a runnable
//! example that asserts its result (or points to one that calls it). What
//! to know, with the section that explains it:
//!
//! - Closures see a key as `Option<&K>` and a value as `&V`; a tombstone
//!   never reaches them, and the `*_nullable` forms see it as Kafka's do:
//!   [keys, values and tombstones](dsl#keys-values-and-tombstones).
//! - A key change (`map`, `select_key`, `group_by`, ...) sends the stream
//!   through a repartition topic before a grouping or a join, named as
//!   Kafka names it: [`KStream`].
//! - Tables and aggregations keep Kafka's record cache in front of their
//!   stores: [the record cache](dsl#the-record-cache).
//! - Joins of every kind ([joins](dsl#joins), [stream-stream
//!   joins](dsl#stream-stream-joins), [foreign-key
//!   joins](dsl#foreign-key-joins)), windows ([`TimeWindows`],
//!   [`SlidingWindows`], [`SessionWindows`]) with
//!   [`suppress`](KTable::suppress), [cogroup](dsl#cogroup), [versioned
//!   tables](dsl#versioned-tables), and Kafka's [topology
//!   optimization](dsl#topology-optimization).
//! - User code that can fail returns a `Result`: [the `try_`
//!   operators](KStream::try_map_values), and the exception handlers
//!   below.
//!
//! # The Processor API, stores and punctuation
//!
//! A [`Processor`](processor::Processor) sees every record as is, keeps
//! state in the stores connected to it ([`state`]) and schedules
//! punctuations by stream time or wall-clock time
//! ([`ProcessorContext::schedule`](processor::ProcessorContext::schedule)).
//! Here a processor sums amounts per key in a store and, every 10 ms of
//! stream time, forwards every total:
//!
//! ```
//! use std::time::Duration;
//! use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::state::Stores;
//! use streams_core::{Record, Result, Topology};
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! struct Totals;
//! impl Processor<String, i64> for Totals {
//!     fn init(&mut self, ctx: &mut ProcessorContext<'_, String, i64>) -> Result<()> {
//!         ctx.schedule(Duration::from_millis(10), PunctuationType::StreamTime)?;
//!         Ok(())
//!     }
//!     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, i64>) -> Result<()> {
//!         let (Some(key), Some(amount)) = (r.key, r.value) else { return Ok(()) };
//!         let mut totals = ctx.key_value_store::<String, i64>("totals")?;
//!         let total = totals.get(&key)?.unwrap_or(0) + amount;
//!         totals.put(key, total)?;
//!         Ok(())
//!     }
//!     fn punctuate(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, now: i64, _: &Punctuation) -> Result<()> {
//!         let totals: Vec<(String, i64)> = {
//!             let store = ctx.key_value_store::<String, i64>("totals")?;
//!             store.all()?.collect()
//!         };
//!         for (key, total) in totals {
//!             ctx.forward(Record::new(Some(key), Some(total), now))?;
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let mut topology = Topology::new();
//! topology
//!     .add_source::<String, i64>("amounts", "amounts")?
//!     .add_processor("totals", || Totals, &["amounts"])?
//!     .add_state_store(Stores::key_value_store_builder("totals", StringSerde, I64Serde), &["totals"])?
//!     .add_sink::<String, i64>("sink", "totals", &["totals"])?;
//! let driver = TopologyTestDriver::new(topology)?;
//! let amounts = driver.create_input_topic("amounts", StringSerde, I64Serde);
//! let totals = driver.create_output_topic("totals", StringSerde, I64Serde);
//! amounts.pipe_key_value_at("ann", 5, 12); // stream time 12: the schedule fires
//! amounts.pipe_key_value_at("bob", 7, 15); // its next boundary is 20
//! amounts.pipe_key_value_at("ann", 1, 21); // past 20: it fires again
//! assert_eq!(
//!     totals.read_key_values_to_list(),
//!     [KeyValue::pair("ann", 5), KeyValue::pair("ann", 6), KeyValue::pair("bob", 7)]
//! );
//! // The store writes its changelog, `<application.id>-<store>-changelog`.
//! assert!(driver.produced_topic_names().contains("test-app-totals-changelog"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! More: [`processor`] (and [`FixedKeyProcessor`](processor::FixedKeyProcessor)
//! for [`KStream::process_values`]), [`topology`], [`state`] (every kind of
//! store, their changelogs, versioned stores), [`time`] (windows and
//! windowed keys).
//!
//! # Serdes and bad records
//!
//! A [`Serde`](serde::Serde) turns a key or value into bytes and back, and
//! sees the record's headers. Built in: strings, bytes, numbers, JSON, and
//! with the `avro` feature Avro and Confluent's wire format with a mock
//! schema registry: [`serde`]. A record that cannot be read, processed or
//! written goes to Kafka's exception handlers
//! (`deserialization.exception.handler`, `processing.exception.handler`,
//! `production.exception.handler`) and, if configured, to a dead letter
//! queue with Kafka's headers (KIP-1034): [`StreamsConfig`]. Errors are
//! [`StreamsError`] values whose messages name the topic, partition,
//! offset, node or store involved: [`error`].
//!
//! # Pictures
//!
//! `topology.describe()` prints exactly what Kafka's `describe()` prints,
//! parses back, and draws as DOT or Mermaid; the `topology-viz` command
//! draws SVG and an explorable HTML page from it, Java's text or ours.
//!
//! ```
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").filter(|_, v| !v.is_empty()).to("out");
//! let description = builder.build()?.describe();
//! assert_eq!(
//!     description.to_string(),
//!     "Topologies:\n   Sub-topology: 0\n\
//!     \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n\
//!     \x20     --> KSTREAM-FILTER-0000000001\n\
//!     \x20   Processor: KSTREAM-FILTER-0000000001 (stores: [])\n\
//!     \x20     --> KSTREAM-SINK-0000000002\n\
//!     \x20     <-- KSTREAM-SOURCE-0000000000\n\
//!     \x20   Sink: KSTREAM-SINK-0000000002 (topic: out)\n\
//!     \x20     <-- KSTREAM-FILTER-0000000001\n\n"
//! );
//! assert!(description.mermaid().to_string().starts_with("flowchart TB"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! More: [`guide::pictures`] (the API, snapshots in tests, the
//! `topology-viz` command line).
//!
//! # Running an application
//!
//! [`KafkaStreams`](runtime::KafkaStreams) runs a topology as Kafka
//! Streams does: tasks per sub-topology and partition, internal topics
//! with Kafka's names and partition counts, a consumer group with Kafka's
//! sticky task assignor and standby replicas, restoration from
//! changelogs, `at_least_once` and `exactly_once_v2`. It spawns no thread:
//! the application calls [`step`](runtime::KafkaStreams::step) in a loop,
//! and a test steps, crashes and restarts instances on a mock clock
//! (`streams-test`'s `app::StreamsCluster`). More: [`runtime`].
//!
//! # Differences from Kafka Streams
//!
//! Checked against Kafka 4.4.0 (the `compat/` oracles of the repository
//! run the same scenarios in Kafka and compare every output, `describe()`
//! text, internal topic and error kind), this library differs from Kafka
//! Streams in the following ways. The repository's README has the same
//! list.
//!
//! ## On purpose
//!
//! - **Closures and tombstones.** DSL closures see a key as `Option<&K>`
//!   and a value as `&V`, and never see a tombstone: value operators pass
//!   it on, `foreach` skips it, `map`, `flat_map` and `select_key` drop it
//!   and count it as dropped, `split` sends it to the default branch.
//!   Kafka's lambdas receive `null`; the `*_nullable` forms
//!   ([`dsl::nullable`]) do the same, with Kafka's node names. Table
//!   predicates and mappers see rows (`&K`, `&V`); joiners see values
//!   (`Option<&V>` where Kafka passes `null`). See [keys, values and
//!   tombstones](dsl#keys-values-and-tombstones) and [joins](dsl#joins).
//! - **User code fails with `Result`.** Kafka's lambdas throw; here the
//!   `try_` operators ([`KStream::try_map_values`] and its siblings) and
//!   [`Processor::process`](processor::Processor::process) return an
//!   error, which the processing exception handler answers; a panic is
//!   caught at its node and handled the same way. See
//!   [`StreamsConfig`].
//! - **Errors at build.** DSL calls do not fail on the spot as Kafka's
//!   throw: the builder keeps the first error and
//!   [`StreamsBuilder::build`] returns it.
//! - **One source per topic.** A second source of a topic is refused
//!   ([`TopologyError::TopicAlreadyRead`]), two `stream()`s of it too,
//!   which Kafka merges into one source (so that `s1.join(s2)` of one
//!   topic is a self-join there; here write `s.join_stream(&s, ..)`). See
//!   [`StreamsBuilder::build`].
//! - **Types are checked when the topology is built.** A node whose input
//!   types are not what its parents forward is refused at once (Kafka
//!   fails with a `ClassCastException` when a record arrives), and so are
//!   repartition topics that `merge.repartition.topics` would merge across
//!   a type change ([`TopologyError::CannotOptimize`]). See [`topology`]
//!   and [`StreamsBuilder::build_with`].
//! - **Built-in serdes by type.** A source or sink without a serde (given,
//!   or the config's default) for `String`, `Vec<u8>`, `i32`, `i64`,
//!   `f64` or `()` uses the built-in one, where Kafka fails for want of a
//!   serde: [`serde::builtin_serde`].
//! - **Co-partitioning is always checked.** `KafkaStreams` refuses to start
//!   when the topics a join reads together have different partition counts
//!   ([`RuntimeError::NotCopartitioned`](runtime::RuntimeError::NotCopartitioned));
//!   Kafka 4.4 checks only when the topology has a repartition topic, and
//!   otherwise joins partitions that have no partner. A repartition topic
//!   gets the largest partition count of all its writers' source topics,
//!   where Kafka's depends on hash order. See [`runtime::metadata`].
//! - **Versioned stores, foreign-key joins and topology optimization**
//!   differ in details no scenario shows (a versioned store in memory with
//!   `valid_to` filled in; a `TableJoined` partitioner returning several
//!   partitions sends to each; subscriptions always in version 1; merges
//!   of repartition topics in the order they were made): see [versioned
//!   tables](dsl#versioned-tables), [`state::VersionedKeyValueStore`],
//!   [`TableJoined`](dsl::TableJoined), [topology
//!   optimization](dsl#topology-optimization), and the tables of
//!   `compat/README.md` in the repository, each with Kafka's behaviour.
//!
//! ## Not supported yet
//!
//! - **Persistent stores.** Every store is in memory (RocksDB stores are
//!   not there, `Stores::persistent_versioned_key_value_store` keeps
//!   Kafka's name), so an instance that restarts restores its stores from
//!   their changelogs; there is no `state.dir`. See [`state`].
//! - **Custom stores in the DSL.** `Materialized::as_` takes a store name
//!   or a versioned store supplier, not a store supplier of your own; a
//!   versioned store cannot hold an aggregation's or a table-table join's
//!   result (Kafka's can). See [`Materialized`] and [versioned
//!   tables](dsl#versioned-tables).
//! - **Stores for `process`.** `KStream::process` takes no store names and
//!   `StreamsBuilder` has no `addStateStore`: add the store to the built
//!   topology, as the example of [`KStream::process`] shows.
//! - **Timestamp extractors and reset policies.** A record keeps the
//!   timestamp it was written with, and a topic without a committed offset
//!   is read from its earliest one: see [`Consumed`].
//! - **Interactive queries.** [`KafkaStreams::store`](runtime::KafkaStreams::store)
//!   reads a store of a task of this instance; there is no IQv2 and no
//!   metadata to find the instance that holds a key.
//! - **Threads and topics found later.** `KafkaStreams` spawns no thread:
//!   the caller steps it ([`KafkaStreams::step`](runtime::KafkaStreams::step)),
//!   its stream threads in turn. A source pattern matches the topics that
//!   exist when the instance starts; a topic created later is read after
//!   a restart. See [`runtime`].
//! - **On a real cluster** (`streams-kafka`, over librdkafka): librdkafka's
//!   eager `range` assignor instead of Kafka Streams' sticky one, so no
//!   standby replicas and no sticky assignment, and an instance leaves
//!   its group when it closes. See the crate docs of
//!   [`streams-kafka`](https://docs.rs/streams-kafka).
//! - **Kafka Connect** (`streams-connect`): sink connectors only, tasks
//!   assigned their topics' partitions rather than joining a group,
//!   converters that only read, no `SimpleHeaderConverter`. See the crate
//!   docs of [`streams-connect`](https://docs.rs/streams-connect).
//! - **Metrics.** A task counts processed, dropped and dead-lettered
//!   records ([`TaskMetrics`](engine::TaskMetrics)); Kafka's other metrics
//!   are not there.
//!
//! What the `TopologyTestDriver` does differently from Kafka's is in the
//! guide of the `streams-test` crate.
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
