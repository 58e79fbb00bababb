//! What the driver promises, each promise with a doc test that fails if it
//! stops being true. The integration tests (`tests/driver.rs`,
//! `tests/topics.rs`, `tests/properties.rs`) cite this page.
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
