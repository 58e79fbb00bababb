//! What the driver promises, each promise with a doc test that fails if it
//! stops being true. The integration tests (`tests/driver.rs`,
//! `tests/topics.rs`, `tests/properties.rs`, `tests/record_cache.rs`) cite
//! this page: a semantic a test relies on is written here, not in a file
//! outside the repository.
//!
//! # Clocks
//! The driver has two clocks, and a test moves both. *Stream time* is the
//! largest timestamp of the records processed so far, `-1` before the
//! first, and never goes back. The *wall clock* starts at
//! [`DEFAULT_START_MS`](crate::DEFAULT_START_MS) (or
//! [`DriverBuilder::initial_wall_clock_time`](crate::DriverBuilder::initial_wall_clock_time))
//! and moves only with
//! [`advance_wall_clock_time`](crate::TopologyTestDriver::advance_wall_clock_time);
//! neither moves the other.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::StreamsBuilder;
//! use streams_core::serde::StringSerde;
//! use streams_test::TopologyTestDriver;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").to("out");
//! let driver = TopologyTestDriver::builder(builder.build()?).initial_wall_clock_time(1_000).build()?;
//! let input = driver.create_input_topic("in", StringSerde, StringSerde);
//! assert_eq!((driver.stream_time(), driver.wall_clock_time()), (-1, 1_000));
//! input.pipe_key_value_at("k", "v", 7);
//! input.pipe_key_value_at("k", "v", 3);
//! driver.advance_wall_clock_time(Duration::from_millis(250));
//! assert_eq!((driver.stream_time(), driver.wall_clock_time()), (7, 1_250));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Topic clocks
//! Each input topic has a clock of its own, starting at the driver's start
//! time (or the `start_ms` of
//! [`create_input_topic_with_time`](crate::TopologyTestDriver::create_input_topic_with_time)).
//! A record piped without a timestamp gets the clock's time, and the clock
//! then moves by the topic's auto-advance step; a record piped with a
//! timestamp leaves the clock alone. `advance_time` moves the topic clock
//! only: not stream time, not the wall clock.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::StreamsBuilder;
//! use streams_core::serde::StringSerde;
//! use streams_test::TopologyTestDriver;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").to("out");
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! let input = driver.create_input_topic_with_time("in", StringSerde, StringSerde, 1_000, Duration::from_millis(10));
//! let output = driver.create_output_topic("out", StringSerde, StringSerde);
//! input.pipe_value("a");
//! input.pipe_value_at("b", 5_000);
//! input.pipe_value("c");
//! input.advance_time(Duration::from_millis(100));
//! let times: Vec<Option<i64>> = output.read_records_to_list().iter().map(|r| r.timestamp).collect();
//! assert_eq!(times, [Some(1_000), Some(5_000), Some(1_010)]);
//! assert_eq!(input.current_time(), 1_120);
//! assert_eq!(driver.stream_time(), 5_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Output topics, and topics that are both
//! Everything a sink writes is captured, by topic, until read;
//! [`produced_topic_names`](crate::TopologyTestDriver::produced_topic_names)
//! lists every topic written so far (internal topics with their
//! `<application.id>-` prefix). A record written to a topic the topology
//! also reads is processed too, after the records already waiting, so a
//! feedback loop runs breadth-first (KAFKA-9503).
//!
//! ```
//! use std::collections::BTreeSet;
//! use streams_core::StreamsBuilder;
//! use streams_core::serde::StringSerde;
//! use streams_test::TopologyTestDriver;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("a").flat_map_values(|v| [format!("{v}1"), format!("{v}2")]).to("b");
//! let b = builder.stream::<String, String>("b");
//! b.clone().filter(|_, v| v.len() < 3).map_values(|v| format!("{v}x")).to("b");
//! b.to("out");
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! driver.create_input_topic("a", StringSerde, StringSerde).pipe_value("p");
//! let out = driver.create_output_topic("out", StringSerde, StringSerde);
//! let values: Vec<_> = out.read_values_to_list().into_iter().flatten().collect();
//! assert_eq!(values, ["p1", "p2", "p1x", "p2x"]);
//! assert_eq!(driver.produced_topic_names(), BTreeSet::from(["b".to_owned(), "out".to_owned()]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Punctuation
//! A stream-time schedule of interval `i` is aligned to 0: it fires on the
//! first record that brings stream time to or past its next boundary, with
//! that stream time, and then waits for the first boundary after it (the
//! ticks it missed are skipped, not fired in a row). A wall-clock schedule
//! is due `i` after the wall clock when it was made, and fires as
//! `advance_wall_clock_time` passes it. `tests/properties.rs` checks the
//! stream-time rule against a model of it on random timestamps.
//!
//! # Task idling (`max.task.idle.ms`)
//! The driver runs one task over every source topic of the topology,
//! repartition topics included, and picks the queued record with the
//! smallest timestamp first, as Kafka's `PartitionGroup` does. With
//! `max.task.idle.ms` above 0 (Kafka's default is 0), a record waits while
//! another input of the task has none: until that input has records, or
//! until the wall clock reaches the idle deadline (set when the input is
//! first seen empty while records wait: wall clock plus `max.task.idle.ms`).
//! A re-keyed record waits in its repartition topic the same way. `-1`
//! disables idling. The oracle scenarios `task_idling_*` (compat/) check
//! this against Kafka's driver.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::serde::StringSerde;
//! use streams_core::StreamsConfig;
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! let builder = streams_core::StreamsBuilder::new();
//! let orders = builder.stream::<String, String>("orders");
//! orders.merge(&builder.stream::<String, String>("payments")).to("events");
//! let config = StreamsConfig::new("app").with_property("max.task.idle.ms", "1000");
//! let driver = TopologyTestDriver::with_config(builder.build()?, config)?;
//! let orders = driver.create_input_topic("orders", StringSerde, StringSerde);
//! let payments = driver.create_input_topic("payments", StringSerde, StringSerde);
//! let events = driver.create_output_topic("events", StringSerde, StringSerde);
//! orders.pipe_key_value_at("o1", "ordered", 0);
//! assert!(events.is_empty()); // "payments" has no record yet
//! payments.pipe_key_value_at("o1", "paid", 5);
//! assert_eq!(events.read_key_values_to_list(), [KeyValue::pair("o1", "ordered")]);
//! driver.advance_wall_clock_time(Duration::from_secs(1)); // the idle deadline passes
//! assert_eq!(events.read_key_values_to_list(), [KeyValue::pair("o1", "paid")]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Pipes that fail
//! Piping to a topic that no source (and no global table) reads fails with
//! [`StreamsError::UnknownTopic`](streams_core::StreamsError::UnknownTopic),
//! naming the topics that exist; a negative timestamp fails with
//! [`StreamsError::NegativeTimestamp`](streams_core::StreamsError::NegativeTimestamp).
//! Neither record is processed, and the driver stays usable.
//!
//! ```
//! use streams_core::StreamsError;
//! use streams_test::{TestRecord, example};
//!
//! let driver = example(|builder| builder.stream::<String, String>("in").to("out"));
//! let err = driver.input::<String, String>("typo").try_pipe_record(TestRecord::key_value("k", "v"));
//! assert!(matches!(err, Err(StreamsError::UnknownTopic { topic, known }) if topic == "typo" && known == ["in"]));
//! let input = driver.input::<String, String>("in");
//! let err = input.try_pipe_record(TestRecord::key_value("k", "v").at(-1));
//! assert!(matches!(err, Err(StreamsError::NegativeTimestamp { timestamp: -1, .. })));
//! input.pipe_key_value("k", "v");
//! assert_eq!(driver.output::<String, String>("out").read_values_to_list(), [Some("v".to_owned())]);
//! ```
//!
//! # Reading output
//! A topic the topology never wrote and a topic whose records were all
//! read look alike to every read but the failing ones: the `try_` reads
//! give `None`, list reads an empty list, map reads an empty map. The
//! failing reads (`read_value`, ...) panic with `uninitialized topic: x`
//! for the first and `empty topic: x` for the second. A record piped into
//! a topic is not itself readable on that topic: only what the topology
//! writes is. `read_key_values_to_map` keeps the last value per key, a
//! tombstone keeping its key with `None`; `read_table` drops the key.
//!
//! ```
//! use std::collections::HashMap;
//! use std::panic::{AssertUnwindSafe, catch_unwind};
//! use streams_test::example;
//!
//! let driver = example(|builder| builder.stream::<String, i64>("in").to("out"));
//! let input = driver.input::<String, i64>("in");
//! let (out, nowhere) = (driver.output::<String, i64>("out"), driver.output::<String, i64>("nowhere"));
//! assert_eq!((nowhere.try_read_value().ok(), nowhere.read_values_to_list()), (Some(None), vec![]));
//! let panic = catch_unwind(AssertUnwindSafe(|| nowhere.read_value())).unwrap_err();
//! assert!(panic.downcast_ref::<String>().is_some_and(|m| m.starts_with("uninitialized topic: nowhere")));
//! for (k, v) in [("a", Some(1)), ("b", Some(2)), ("a", Some(3)), ("b", None)] {
//!     input.pipe_record(streams_test::TestRecord::new(Some(k.to_owned()), v));
//! }
//! assert!(driver.output::<String, i64>("in").is_empty());
//! let map = HashMap::from([("a".to_owned(), Some(3)), ("b".to_owned(), None)]);
//! assert_eq!(out.read_key_values_to_map(), map);
//! let panic = catch_unwind(AssertUnwindSafe(|| out.read_value())).unwrap_err();
//! assert!(panic.downcast_ref::<String>().is_some_and(|m| m.starts_with("empty topic: out")));
//! input.pipe_key_value("a", 1);
//! input.pipe_tombstone("a");
//! input.pipe_key_value("c", 4);
//! assert_eq!(out.read_table(), HashMap::from([("c".to_owned(), 4)]));
//! ```
//!
//! # The record cache, and commits
//! After each input record (and after each wall-clock advance) the driver
//! commits, as Kafka's driver does: the record caches in front of the
//! DSL's table and aggregation stores flush then. So a store gives at
//! most one update per key and input record, however often the record
//! changed it; with the cache off (`Materialized::with_caching_disabled`
//! for one store, `statestore.cache.max.bytes = 0` for all), every update
//! comes out.
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::{Produced, StreamsConfig};
//! use streams_test::{KeyValue, example_with_config};
//!
//! // Words per user: one input line updates the user's count once per word.
//! let counts = |config: StreamsConfig| {
//!     let driver = example_with_config(config, |builder| {
//!         builder
//!             .stream::<String, String>("lines")
//!             .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
//!             .group_by_key()
//!             .count()
//!             .to_stream()
//!             .to_with("counts", Produced::with(StringSerde, I64Serde));
//!     });
//!     let lines = driver.input::<String, String>("lines");
//!     lines.pipe_key_value("ann", "a b a");
//!     lines.pipe_key_value("bob", "c");
//!     driver.output::<String, i64>("counts").read_key_values_to_list()
//! };
//! assert_eq!(counts(StreamsConfig::default()), [KeyValue::pair("ann", 3), KeyValue::pair("bob", 1)]);
//! let uncached = StreamsConfig::default().with_property("statestore.cache.max.bytes", "0");
//! assert_eq!(
//!     counts(uncached),
//!     [KeyValue::pair("ann", 1), KeyValue::pair("ann", 2), KeyValue::pair("ann", 3), KeyValue::pair("bob", 1)]
//! );
//! ```
