//! The DSL: [`StreamsBuilder`], [`KStream`] and their options.
//!
//! Operators mirror Kafka Streams' names in snake_case. Each adds a node
//! named as Kafka would name it (`KSTREAM-FILTER-0000000001`), unless the
//! stream is [`named`](KStream::named) first.
//!
//! # Keys, values and tombstones
//! Closures see a key as `Option<&K>`, since records on a stream often
//! have none, and a value as `&V`. A record whose value is `None` (a
//! tombstone) never reaches a closure:
//! - `filter`, `filter_not`, `peek`, `merge`, `repartition` and `to` pass
//!   it on unchanged; `map_values` and `flat_map_values` pass it on as a
//!   tombstone of the new value type; `split` sends it to the default branch;
//! - `foreach` skips it;
//! - `map`, `flat_map` and `select_key`, which need the value to compute a
//!   key, drop it and count it in the task's `dropped_records` metric.
//!
//! Kafka's closures receive `null` instead; the [`nullable`] forms
//! (`filter_nullable`, `map_values_nullable`, `foreach_nullable`, ...) do
//! the same, with Kafka's node names. [`KStream::process`] and
//! [`KStream::process_values`] (a fixed-key processor, KIP-820) see every
//! record as is.
//!
//! # The record cache
//! Tables and aggregations keep Kafka's record cache in front of their
//! stores, as Kafka's `TopologyTestDriver` does (its default 10 MB cache,
//! flushed after each input record): the updates one input record makes
//! are collected per key, and at the end of that record each changed key
//! is forwarded once (and written to the changelog once), with its
//! latest value and its value before the record. So a record that
//! updates a count three times gives one result, and deleting a row that
//! never existed gives none; records that go through a repartition topic
//! are input records of their own, so a word count still counts word by
//! word. [`Materialized::with_caching_disabled`] turns the cache off for
//! one store, `statestore.cache.max.bytes = 0` in the config for all:
//! then every update is forwarded at once. Key-value, window and session
//! stores of the DSL have the cache; stream-stream join stores,
//! suppression buffers and the stores of the Processor API do not (as in
//! Kafka). Kafka's cache also keeps flushed entries for reads: a session
//! the store has already expired can still be merged, as in Kafka.
//!
//! # Cogroup
//! [`KGroupedStream::cogroup`] starts a [`CogroupedKStream`]: grouped
//! streams of different value types, each with its aggregator, updating
//! one aggregate per key in one store (KIP-150), as a table, or per window
//! or session with [`CogroupedKStream::windowed_by`]. Each input's
//! aggregation closes windows by its own stream time, as in Kafka, and
//! they share the store's record cache. See the [`cogroup`] module.
//!
//! # Joins
//! With Kafka's semantics and node names; the record cache above sits in
//! front of the joined tables' stores and of a materialized table-table
//! join's result:
//! - [`KStream::join`] / [`KStream::left_join`] with a [`KTable`]
//!   (`KSTREAM-JOIN-`/`KSTREAM-LEFTJOIN-`): each stream record looks its
//!   key up in the table's store; table updates only change the table. A
//!   record without a value is dropped and counted, as is one without a
//!   key in an inner join; a left join joins a record without a key (or
//!   without a row) with `None`. Options: [`Joined`].
//! - [`KTable::join`], [`KTable::left_join`], [`KTable::outer_join`]
//!   (`KTABLE-JOINTHIS-`, `KTABLE-JOINOTHER-`, `KTABLE-MERGE-`): an update
//!   of either side is joined with the other's current row, at the later
//!   of both timestamps. Tombstones as in Kafka: an inner join whenever a
//!   row is deleted while the other side has one, a left join when a left
//!   row is deleted, an outer join when the last of both rows goes.
//! - [`KStream::join_global`] / [`KStream::left_join_global`] with a
//!   [`GlobalKTable`] (made by [`StreamsBuilder::global_table`]): the key
//!   is computed from each record, so no repartition is needed.
//!
//! # Foreign-key joins
//! [`KTable::join_on_foreign_key`] and [`KTable::left_join_on_foreign_key`]
//! (KIP-213) join each row of a table with the row of another table whose
//! key a foreign-key extractor finds in the row (`Fn(&V) -> Option<KO>`,
//! or with the key too through [`ForeignKeyExtractor`], KIP-1104), under
//! the first table's key. As in Kafka 4.4, with its node, store and topic
//! names and its wire formats: subscriptions travel keyed by foreign key
//! through `<app>-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-<n>-topic`
//! (partitioned like the foreign table) into the store
//! `KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-<n>`; answers come back through
//! `<app>-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-<n>-topic` (partitioned like
//! the first table) and are dropped, and counted in `dropped_records`,
//! when the row changed since it asked (a murmur3 hash of its value). A
//! row that moves to another foreign key leaves the old one; deleting
//! either row gives a tombstone (a left join keeps the row, joined with
//! `None`, when the foreign row goes); an extractor's `None` drops the row
//! from an inner join (counted) and joins it with `None` in a left join.
//! Options: [`TableJoined`] (a name for every node, topic and store, and
//! the partitioners of both topics) and [`Materialized`] for the result.
//!
//! # Versioned tables
//! A table materialized in a versioned store (KIP-914), with
//! `Materialized::as_(Stores::persistent_versioned_key_value_store(name,
//! history))`, keeps every version of each row for its history retention,
//! in a [`VersionedKeyValueStore`](crate::state::VersionedKeyValueStore)
//! (Kafka's RocksDB store, in memory here), without a record cache. As in
//! Kafka 4.4:
//! - an update older than the row's newest version is stored as history
//!   and still forwarded (`to_stream` passes it on), but marked as not the
//!   newest ([`Change::is_latest`](crate::Change)): table-table joins,
//!   foreign-key joins and `group_by` skip it (the joins count it in
//!   `dropped_records`); an update older than the history retention is
//!   neither stored nor forwarded, and counted;
//! - `filter` and `map_values` without a store of their own give versioned
//!   tables too, and with a versioned `Materialized` they keep their own
//!   versions; a filter of a versioned table forwards a change that was and
//!   stays filtered out (Kafka's versioned semantics);
//! - [`KStream::join`] / [`KStream::left_join`] with a versioned table
//!   find the row valid at each stream record's timestamp;
//!   [`Joined::with_grace_period`] (KIP-923) holds stream records in a
//!   buffer (`<join node>-Buffer`, with its changelog) until the stream time
//!   has passed them by the grace period, so that late table updates are
//!   seen, and then joins them in timestamp order. The grace period needs a
//!   versioned table that keeps at least that much history;
//! - `suppress` of a versioned table and a versioned global table are
//!   refused with Kafka's messages. Aggregations and table-table joins
//!   cannot keep their results in a versioned store here (Kafka's can): a
//!   versioned `Materialized` for them fails the build.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::state::Stores;
//! use streams_core::Materialized;
//! use streams_test::{TestRecord, example};
//!
//! let driver = example(|builder| {
//!     let history = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
//!     let prices = builder.table_with::<String, String>("prices", Materialized::as_(history));
//!     builder
//!         .stream::<String, String>("orders")
//!         .join(&prices, |order, price| format!("{order} at {price}"))
//!         .to("priced");
//! });
//! let prices = driver.input::<String, String>("prices");
//! let orders = driver.input::<String, String>("orders");
//! prices.pipe_key_value_at("pen", "1.00", 10);
//! prices.pipe_key_value_at("pen", "1.20", 30);
//! orders.pipe_key_value_at("pen", "order-1", 20); // the price as of 20
//! prices.pipe_key_value_at("pen", "0.90", 15); // late: history only
//! orders.pipe_key_value_at("pen", "order-2", 16);
//! let priced = driver.output::<String, String>("priced");
//! assert_eq!(
//!     priced.read_records_to_list(),
//!     [
//!         TestRecord::key_value("pen", "order-1 at 1.00").at(20),
//!         TestRecord::key_value("pen", "order-2 at 0.90").at(16),
//!     ]
//! );
//! ```
//!
//! # Stream-stream joins
//! [`KStream::join_stream`], [`KStream::left_join_stream`] and
//! [`KStream::outer_join_stream`] join two streams within [`JoinWindows`]:
//! records with equal keys whose timestamps are at most `before`/`after`
//! apart, each side's records kept in a window store for `before + after +
//! grace`. Left and outer joins emit a record that found no match padded
//! with `None` only once its window has closed (KIP-633), checked at most
//! once per [`OUTER_JOIN_EMIT_INTERVAL_CONFIG`] of wall-clock time, as in
//! Kafka. Records without a key or value cannot join and are dropped and
//! counted. Options: [`StreamJoined`].
//!
//! Joiners see values: `Fn(&V, &VO)` for inner joins, `Fn(&V, Option<&VO>)`
//! for left joins, `Fn(Option<&V>, Option<&VO>)` for outer joins.
//!
//! # Topology optimization
//! Kafka's `topology.optimization` ([`StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG`]:
//! `none`, the default, `all`, or a comma-separated list of
//! `reuse.ktable.source.topics`, `merge.repartition.topics` and
//! `single.store.self.join`) rewrites the topology when it is built with
//! the config, [`StreamsBuilder::build_with`], as Kafka's
//! `build(Properties)` does; [`StreamsBuilder::build`] and a config given
//! only to the driver or the application change nothing, as in Kafka.
//! Each rewrite is Kafka 4.4's, with its `describe()` text:
//! - `reuse.ktable.source.topics`: the store of a table read with
//!   [`StreamsBuilder::table`] (when it has one) writes no changelog; the
//!   table's topic is its changelog, which the runtime restores up to the
//!   group's committed offset. `to_table` and global tables are not
//!   concerned.
//! - `merge.repartition.topics`: the repartition topics that grouping,
//!   joins, `to_table` and cogroup add after one key change (`map`,
//!   `select_key`, `flat_map`, `group_by`, or a `merge` of such streams)
//!   become one, right after the key change, named after the first
//!   (`<topic>-filter`, `-sink`, `-source`, even a lone one); what sat
//!   between the key change and a repartition topic (a `filter`, a `peek`)
//!   runs after it. A `map_values` or `flat_map_values` in between keeps a
//!   topic apart; `repartition()` is never merged. As in Kafka, a node that
//!   leads to two of the topics (a `peek`, a `split`) cannot be moved for
//!   both, and the build fails.
//! - `single.store.self.join` (KIP-862): a stream joined with itself
//!   (`s.join_stream(&s, ..)`) keeps one window store and one join
//!   processor named as the join's merge node; left and outer self-joins
//!   become this inner one, as in Kafka (each record matches itself).
//!
//! ```
//! use std::time::Duration;
//! use streams_core::StreamsConfig;
//! use streams_core::dsl::JoinWindows;
//! use streams_test::{KeyValue, example_with_config};
//!
//! let config = StreamsConfig::new("app").with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, "all");
//! let driver = example_with_config(config, |builder| {
//!     let users = builder.table::<String, String>("users");
//!     let clicks = builder.stream::<String, String>("clicks");
//!     clicks.clone().join(&users, |click, user| format!("{user}:{click}")).to("named");
//!     let within = JoinWindows::of_time_difference_with_no_grace(Duration::from_secs(1)).unwrap();
//!     clicks.clone().join_stream(&clicks, |a, b| format!("{a}+{b}"), within).to("pairs");
//! });
//! driver.input::<String, String>("users").pipe_key_value("u1", "ann");
//! driver.input::<String, String>("clicks").pipe_key_values([("u1", "home"), ("u1", "cart")]);
//! assert_eq!(
//!     driver.output::<String, String>("named").read_values_to_list(),
//!     [Some("ann:home".to_owned()), Some("ann:cart".to_owned())]
//! );
//! assert_eq!(
//!     driver.output::<String, String>("pairs").read_key_values_to_list(),
//!     [
//!         KeyValue::pair("u1", "home+home"),
//!         KeyValue::pair("u1", "cart+home"),
//!         KeyValue::pair("u1", "home+cart"),
//!         KeyValue::pair("u1", "cart+cart"),
//!     ]
//! );
//! // No changelog for the table's store, one store for the self-join.
//! assert_eq!(
//!     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
//!     ["app-KSTREAM-JOINTHIS-0000000008-store-changelog", "named", "pairs"]
//! );
//! ```
//!
//! [`StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG`]: crate::StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG
//!
//! ```
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! let words = builder.stream::<String, String>("text")
//!     .flat_map_values(|line| line.split(' ').map(str::to_owned).collect::<Vec<_>>());
//! words.clone().filter(|_, w| w.len() > 3).to("long-words");
//! words.filter_not(|_, w| w.len() > 3).to("short-words");
//! assert_eq!(builder.build()?.node_names().len(), 6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
pub(crate) mod cache;
mod change_serde;
pub mod cogroup;
mod fallible;
mod foreign_key_join;
mod foreign_key_join_processors;
mod foreign_key_join_wire;
mod global;
mod grace_search;
mod grouped_stream;
mod grouped_table;
mod join;
mod join_processors;
mod kstream;
mod ktable;
pub mod nullable;
pub(crate) mod optimize;
mod options;
mod processors;
mod repartition;
mod session_windowed_stream;
mod split;
mod stream_join;
mod stream_join_processors;
mod suppress;
mod table_processors;
mod time_windowed_stream;
mod to_table;
mod window_processors;
mod windowed_stream;

pub use crate::time::{
    SessionWindows, SlidingWindows, TimeWindows, Window, Windowed, WindowedSerde,
};
pub use builder::StreamsBuilder;
pub use cogroup::{
    CogroupWindowedBy, CogroupedKStream, SessionWindowedCogroupedKStream,
    TimeWindowedCogroupedKStream,
};
pub use fallible::UserError;
pub use foreign_key_join::{ForeignKeyExtractor, TableJoined};
pub use global::GlobalKTable;
pub use grouped_stream::KGroupedStream;
pub use grouped_table::KGroupedTable;
pub use join::Joined;
pub use kstream::KStream;
pub use ktable::KTable;
pub use options::{
    Branched, Consumed, Grouped, Materialized, MaterializedAs, Produced, Repartitioned,
};
pub use session_windowed_stream::SessionWindowedKStream;
pub use split::BranchedKStream;
pub use stream_join::{JoinWindows, OUTER_JOIN_EMIT_INTERVAL_CONFIG, StreamJoined};
pub use suppress::{BufferConfig, EagerBufferConfig, StrictBufferConfig, Suppressed};
pub use time_windowed_stream::TimeWindowedKStream;
pub use windowed_stream::WindowedBy;
