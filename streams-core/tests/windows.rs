//! Windowed aggregations, window and session stores, and `suppress`,
//! through the test driver: ports of Kafka's `KStreamWindowAggregateTest`,
//! `KStreamSlidingWindowAggregateTest`,
//! `KStreamSessionWindowAggregateProcessorTest` and `SuppressScenarioTest`
//! (the `ON_WINDOW_UPDATE` strategy), with Kafka's expected values. The
//! driver keeps Kafka's record cache and flushes it after each input
//! record, as Kafka's driver does, so piping one record at a time shows a
//! window's update of every record; where Kafka's test flushed a cache
//! over several records, the expected values here are per record,
//! derived from the same rules.

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::dsl::{
    BufferConfig, Consumed, Grouped, Materialized, Produced, SessionWindows, SlidingWindows,
    Suppressed, TimeWindows, Window, Windowed, WindowedSerde,
};
use streams_core::serde::{I64Serde, Serde, StringSerde};
use streams_core::state::{StoreKind, ValueAndTimestamp};
use streams_core::{KTable, StreamsBuilder, StreamsConfig, StreamsError};
use streams_test::{TestRecord, TopologyTestDriver};

type TestResult = Result<(), Box<dyn Error>>;
type S = String;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(v: &str) -> String {
    v.to_owned()
}

fn w(key: &str, start: i64, end: i64) -> Windowed<String> {
    Windowed::new(s(key), Window::new(start, end))
}

/// (key as Kafka prints it, value, timestamp), as Kafka's `KeyValueTimestamp`.
type Kvt<V> = (String, Option<V>, i64);

fn kvt<V>(key: &str, value: impl Into<Option<V>>, timestamp: i64) -> Kvt<V> {
    (s(key), value.into(), timestamp)
}

fn drain<V>(records: Vec<TestRecord<Windowed<String>, V>>) -> Vec<Kvt<V>> {
    records
        .into_iter()
        .map(|r| {
            let key = r.key.map(|k| k.to_string()).unwrap_or_default();
            (key, r.value, r.timestamp.unwrap_or(-1))
        })
        .collect()
}

/// Kafka's `MockInitializer.STRING_INIT` and `MockAggregator.TOSTRING_ADDER`.
fn string_init() -> String {
    s("0")
}

fn to_string_adder(_: &String, value: &String, agg: String) -> String {
    format!("{agg}+{value}")
}

// ---------------------------------------------------------------------
// Time windows: KStreamWindowAggregateTest and TimeWindowedKStreamImplTest
// ---------------------------------------------------------------------

// KStreamWindowAggregateTest.testAggBasic
#[test]
fn kstream_window_aggregate_agg_basic() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<S, S>("topic1", Consumed::with(StringSerde, StringSerde))
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(100))?.advance_by(ms(5))?)
        .aggregate_with(
            string_init,
            to_string_adder,
            Materialized::as_("topic1-Canonized").with_value_serde(StringSerde),
        )
        .to_stream()
        .to_with(
            "out",
            Produced::with(
                WindowedSerde::time_with_size(StringSerde, ms(10)),
                StringSerde,
            ),
        );
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("topic1", StringSerde, StringSerde);
    let out = driver.create_output_topic(
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(10)),
        StringSerde,
    );
    for (k, v, t) in [
        ("A", "1", 0),
        ("B", "2", 1),
        ("C", "3", 2),
        ("D", "4", 3),
        ("A", "1", 4),
        ("A", "1", 5),
        ("B", "2", 6),
        ("D", "4", 7),
        ("B", "2", 8),
        ("C", "3", 9),
        ("A", "1", 10),
        ("B", "2", 11),
        ("D", "4", 12),
        ("B", "2", 13),
        ("C", "3", 14),
        ("B", "1", 3),
        ("B", "2", 2),
        ("B", "3", 9),
    ] {
        input.pipe_key_value_at(k, v, t);
    }
    let expected: Vec<Kvt<S>> = vec![
        kvt("[A@0/10]", s("0+1"), 0),
        kvt("[B@0/10]", s("0+2"), 1),
        kvt("[C@0/10]", s("0+3"), 2),
        kvt("[D@0/10]", s("0+4"), 3),
        kvt("[A@0/10]", s("0+1+1"), 4),
        kvt("[A@0/10]", s("0+1+1+1"), 5),
        kvt("[A@5/15]", s("0+1"), 5),
        kvt("[B@0/10]", s("0+2+2"), 6),
        kvt("[B@5/15]", s("0+2"), 6),
        kvt("[D@0/10]", s("0+4+4"), 7),
        kvt("[D@5/15]", s("0+4"), 7),
        kvt("[B@0/10]", s("0+2+2+2"), 8),
        kvt("[B@5/15]", s("0+2+2"), 8),
        kvt("[C@0/10]", s("0+3+3"), 9),
        kvt("[C@5/15]", s("0+3"), 9),
        kvt("[A@5/15]", s("0+1+1"), 10),
        kvt("[A@10/20]", s("0+1"), 10),
        kvt("[B@5/15]", s("0+2+2+2"), 11),
        kvt("[B@10/20]", s("0+2"), 11),
        kvt("[D@5/15]", s("0+4+4"), 12),
        kvt("[D@10/20]", s("0+4"), 12),
        kvt("[B@5/15]", s("0+2+2+2+2"), 13),
        kvt("[B@10/20]", s("0+2+2"), 13),
        kvt("[C@5/15]", s("0+3+3"), 14),
        kvt("[C@10/20]", s("0+3"), 14),
        kvt("[B@0/10]", s("0+2+2+2+1"), 8),
        kvt("[B@0/10]", s("0+2+2+2+1+2"), 8),
        kvt("[B@0/10]", s("0+2+2+2+1+2+3"), 9),
        kvt("[B@5/15]", s("0+2+2+2+2+3"), 13),
    ];
    assert_eq!(drain(out.read_records_to_list()), expected);
    Ok(())
}

fn expired_window_topology(
    advance: u64,
    retention: Option<u64>,
) -> Result<StreamsBuilder, StreamsError> {
    let builder = StreamsBuilder::new();
    let mut windowed = builder
        .stream_with::<S, S>("topic", Consumed::with(StringSerde, StringSerde))
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(90))?.advance_by(ms(advance))?);
    if let Some(r) = retention {
        windowed = windowed.with_retention(ms(r));
    }
    windowed
        .aggregate_with(
            String::new,
            |_, v: &String, agg: String| format!("{agg}+{v}"),
            Materialized::as_("topic1-Canonicalized")
                .with_value_serde(StringSerde)
                .with_logging_disabled(),
        )
        .to_stream()
        .map(|k, v| (k.map(ToString::to_string).unwrap_or_default(), v.clone()))
        .to_with("output", Produced::with(StringSerde, StringSerde));
    Ok(builder)
}

fn read_string_pairs(driver: &TopologyTestDriver, topic: &str) -> Vec<Kvt<S>> {
    driver
        .create_output_topic(topic, StringSerde, StringSerde)
        .read_records_to_list()
        .into_iter()
        .map(|r| {
            (
                r.key.unwrap_or_default(),
                r.value,
                r.timestamp.unwrap_or(-1),
            )
        })
        .collect()
}

// KStreamWindowAggregateTest.shouldLogAndMeterWhenSkippingExpiredWindow
#[test]
fn kstream_window_aggregate_drops_and_counts_expired_windows() -> TestResult {
    let builder = expired_window_topology(5, Some(100))?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    for t in [100, 0, 1, 2, 3, 4, 5, 6, 105, 106] {
        input.pipe_key_value_at("k", t.to_string(), t);
    }
    // Kafka: "how many events get dropped": 7 (one per expired window).
    assert_eq!(driver.metrics().dropped_records, 7);
    assert_eq!(
        read_string_pairs(&driver, "output"),
        vec![
            kvt("[k@95/105]", s("+100"), 100),
            kvt("[k@100/110]", s("+100"), 100),
            kvt("[k@5/15]", s("+5"), 5),
            kvt("[k@5/15]", s("+5+6"), 6),
            kvt("[k@100/110]", s("+100+105"), 105),
            kvt("[k@105/115]", s("+105"), 105),
            kvt("[k@100/110]", s("+100+105+106"), 106),
            kvt("[k@105/115]", s("+105+106"), 106),
        ]
    );
    Ok(())
}

// KStreamWindowAggregateTest.shouldLogAndMeterWhenSkippingExpiredWindowByGrace
#[test]
fn kstream_window_aggregate_drops_and_counts_windows_closed_by_grace() -> TestResult {
    let builder = expired_window_topology(10, None)?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "100", 200);
    for (v, t) in [
        ("0", 100),
        ("1", 101),
        ("2", 102),
        ("3", 103),
        ("4", 104),
        ("5", 105),
        ("6", 6),
    ] {
        input.pipe_key_value_at("k", v, t);
    }
    assert_eq!(driver.metrics().dropped_records, 7);
    assert_eq!(
        read_string_pairs(&driver, "output"),
        vec![kvt("[k@200/210]", s("+100"), 200)]
    );
    Ok(())
}

#[test]
fn a_record_exactly_at_a_window_end_belongs_to_the_next_window() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .with_retention(ms(100))
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to("out");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let out = driver.create_output_topic(
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(10)),
        I64Serde,
    );
    input.pipe_key_value_at("a", "x", 9);
    input.pipe_key_value_at("a", "x", 10);
    input.pipe_key_value_at("a", "x", 19);
    input.pipe_key_value_at("a", "x", 20);
    assert_eq!(
        drain(out.read_records_to_list()),
        vec![
            kvt("[a@0/10]", 1, 9),
            kvt("[a@10/20]", 1, 10),
            kvt("[a@10/20]", 2, 19),
            kvt("[a@20/30]", 1, 20),
        ]
    );
    // No grace: stream time 20 closed [10, 20); a late record for it is dropped.
    input.pipe_key_value_at("a", "x", 15);
    assert!(out.is_empty());
    assert_eq!(driver.metrics().dropped_records, 1);
    let store = driver.window_store::<S, i64>("counts")?;
    assert_eq!(store.fetch(&s("a"), 0..=20), [(0, 1), (10, 2), (20, 1)]);
    assert_eq!(store.backward_fetch(&s("a"), 5..=20), [(20, 1), (10, 2)]);
    assert_eq!(store.get(&s("a"), 10), Some(2));
    Ok(())
}

#[test]
fn hopping_windows_count_a_record_in_every_window_it_falls_in() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(12))?.advance_by(ms(5))?)
        .count()
        .to_stream()
        .to("out");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let out = driver.create_output_topic(
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(12)),
        I64Serde,
    );
    input.pipe_key_value_at("k", "v", 21);
    input.pipe_key_value_at("k", "v", 22);
    assert_eq!(
        drain(out.read_records_to_list()),
        vec![
            kvt("[k@10/22]", 1, 21),
            kvt("[k@15/27]", 1, 21),
            kvt("[k@20/32]", 1, 21),
            // 22 is past [10, 22): it belongs to the next two windows only.
            kvt("[k@15/27]", 2, 22),
            kvt("[k@20/32]", 2, 22),
        ]
    );
    // 14 belongs to [5, 17) and [10, 22), both closed at stream time 22
    // (no grace): dropped, and counted once per window.
    input.pipe_key_value_at("k", "v", 14);
    assert!(out.is_empty());
    assert_eq!(driver.metrics().dropped_records, 2);
    Ok(())
}

// TimeWindowedKStreamImplTest.shouldCountWindowed / shouldReduceWindowed /
// shouldAggregateWindowed: the same input through the three aggregations.
#[test]
fn time_windowed_count_reduce_and_aggregate() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<S, S>("in");
    let windowed = || -> Result<_, StreamsError> {
        Ok(stream
            .clone()
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(500))?))
    };
    let serde = || WindowedSerde::time_with_size(StringSerde, ms(500));
    windowed()?.count().to_stream().to("count");
    windowed()?
        .reduce(|a, b| format!("{a}+{b}"))
        .to_stream()
        .to_with("reduce", Produced::with(serde(), StringSerde));
    windowed()?
        .aggregate(string_init, to_string_adder)
        .to_stream()
        .to_with("aggregate", Produced::with(serde(), StringSerde));
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for (k, v, t) in [
        ("1", "1", 10),
        ("1", "2", 15),
        ("1", "3", 500),
        ("2", "1", 500),
    ] {
        input.pipe_key_value_at(k, v, t);
    }
    let count = driver.create_output_topic("count", serde(), I64Serde);
    assert_eq!(
        drain(count.read_records_to_list()),
        vec![
            kvt("[1@0/500]", 1, 10),
            kvt("[1@0/500]", 2, 15),
            kvt("[1@500/1000]", 1, 500),
            kvt("[2@500/1000]", 1, 500),
        ]
    );
    let reduce = driver.create_output_topic("reduce", serde(), StringSerde);
    assert_eq!(
        drain(reduce.read_records_to_list()),
        vec![
            kvt("[1@0/500]", s("1"), 10),
            kvt("[1@0/500]", s("1+2"), 15),
            kvt("[1@500/1000]", s("3"), 500),
            kvt("[2@500/1000]", s("1"), 500),
        ]
    );
    let aggregate = driver.create_output_topic("aggregate", serde(), StringSerde);
    assert_eq!(
        drain(aggregate.read_records_to_list()),
        vec![
            kvt("[1@0/500]", s("0+1"), 10),
            kvt("[1@0/500]", s("0+1+2"), 15),
            kvt("[1@500/1000]", s("0+3"), 500),
            kvt("[2@500/1000]", s("0+1"), 500),
        ]
    );
    Ok(())
}

#[test]
fn windowed_keys_are_written_as_kafka_writes_them() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(100))?)
        .count()
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::time(StringSerde), I64Serde),
        );
    let driver = TopologyTestDriver::new(builder.build()?)?;
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "v", 250);
    // Raw bytes: the key, then the window start (8 bytes big-endian).
    let raw = driver.create_output_topic("out", streams_core::serde::BytesSerde, I64Serde);
    let record = raw.read_record();
    assert_eq!(
        record.key,
        Some([&b"k"[..], &200_i64.to_be_bytes()].concat())
    );
    // Read back without the size, the end is unknown (i64::MAX), as in Kafka.
    let bytes = record.key.unwrap_or_default();
    assert_eq!(
        WindowedSerde::time(StringSerde).deserialize("out", &bytes)?,
        Windowed::new(s("k"), Window::new(200, i64::MAX))
    );
    Ok(())
}

#[test]
fn windowed_aggregation_names_and_changelog_follow_kafka() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .count()
        .to_stream()
        .to("out");
    let topology = builder.build()?;
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-AGGREGATE-0000000002",
            "KTABLE-TOSTREAM-0000000003",
            "KSTREAM-SINK-0000000004"
        ]
    );
    let store = "KSTREAM-AGGREGATE-STATE-STORE-0000000001";
    assert_eq!(topology.store_names(), [store]);
    let driver = TopologyTestDriver::with_config(topology, StreamsConfig::new("app"))?;
    assert_eq!(
        driver.state_stores().get(store),
        Some(&StoreKind::TimestampedWindow)
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "v", 12);
    input.pipe_key_value_at("k", "v", 15);
    let changelog = format!("app-{store}-changelog");
    assert!(driver.produced_topic_names().contains(&changelog));
    let raw = driver.create_output_topic(&changelog, streams_core::serde::BytesSerde, I64Serde);
    let key = [&b"k"[..], &10_i64.to_be_bytes(), &0_i32.to_be_bytes()].concat();
    let records: Vec<_> = raw
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key, r.value, r.timestamp))
        .collect();
    assert_eq!(
        records,
        [
            (Some(key.clone()), Some(1), Some(12)),
            (Some(key), Some(2), Some(15))
        ]
    );
    // The timestamped view shows the largest record timestamp per window.
    let view = driver.timestamped_window_store::<S, i64>(store)?;
    assert_eq!(view.get(&s("k"), 10), Some(ValueAndTimestamp::new(2, 15)));
    Ok(())
}

#[test]
fn a_too_short_retention_is_an_error() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(5))?)
        .with_retention(ms(12))
        .count()
        .to_stream()
        .to("out");
    let err = builder
        .build()
        .expect_err("12 ms retain less than 10 + 5 ms");
    assert!(
        matches!(
            &err,
            StreamsError::RetentionTooShort {
                retention_ms: 12,
                minimum_ms: 15,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("must be no smaller than its window size plus the grace period"),
        "{err}"
    );
    Ok(())
}

#[test]
fn driver_getters_name_the_stores_kind() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(ms(10))?)
        .count_with(Materialized::as_("sessions"));
    builder
        .stream::<S, S>("in2")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .count_with(Materialized::as_("windows"));
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let message = |e: streams_core::StreamsError| e.to_string();
    assert_eq!(
        driver
            .window_store::<S, i64>("sessions")
            .err()
            .map(message)
            .as_deref(),
        Some(
            "store `sessions` is a session store<String, i64>, not the WindowStore<String, i64> asked for; read it with `session_store::<String, i64>(\"sessions\")`"
        )
    );
    assert_eq!(
        driver
            .session_store::<S, i64>("windows")
            .err()
            .map(message)
            .as_deref(),
        Some(
            "store `windows` is a timestamped window store<String, i64>, not the SessionStore<String, i64> asked for; read it with `timestamped_window_store::<String, i64>(\"windows\")`, or `window_store::<String, i64>(\"windows\")` for its values only"
        )
    );
    assert_eq!(
        driver
            .key_value_store::<S, i64>("windows")
            .err()
            .map(message)
            .as_deref(),
        Some(
            "store `windows` is a timestamped window store<String, i64>, not the KeyValueStore<String, i64> asked for; read it with `timestamped_window_store::<String, i64>(\"windows\")`, or `window_store::<String, i64>(\"windows\")` for its values only"
        )
    );
    // The right kind, the wrong types: the message gives the store's own.
    assert_eq!(
        driver
            .window_store::<S, S>("windows")
            .err()
            .map(message)
            .as_deref(),
        Some(
            "store `windows` is a timestamped window store<String, i64>, not the TimestampedWindowStore<String, String> asked for; read it with `timestamped_window_store::<String, i64>(\"windows\")`, or `window_store::<String, i64>(\"windows\")` for its values only"
        )
    );
    assert!(driver.window_store::<S, i64>("nope").is_err());
    Ok(())
}

// ---------------------------------------------------------------------
// Sliding windows: KStreamSlidingWindowAggregateTest
// ---------------------------------------------------------------------

/// Kafka's `gatherOutput`: the values (and timestamps) seen per window start.
type ByStart<V> = BTreeMap<i64, BTreeSet<(V, i64)>>;

fn by_start<V: Ord>(records: Vec<TestRecord<Windowed<String>, V>>) -> ByStart<V> {
    let mut out = ByStart::new();
    for r in records {
        if let (Some(k), Some(v), Some(t)) = (r.key, r.value, r.timestamp) {
            out.entry(k.window.start).or_default().insert((v, t));
        }
    }
    out
}

fn expect<V: Ord + Clone>(entries: &[(i64, &[(V, i64)])]) -> ByStart<V> {
    entries
        .iter()
        .map(|(start, values)| (*start, values.iter().cloned().collect()))
        .collect()
}

fn sliding_driver(
    diff: u64,
    grace: u64,
    reduce: bool,
) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let windowed = builder
        .stream_with::<S, S>("topic", Consumed::with(StringSerde, StringSerde))
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .windowed_by(SlidingWindows::of_time_difference_and_grace(
            ms(diff),
            ms(grace),
        )?);
    let table = if reduce {
        windowed.reduce_with(|a, b| format!("{a}+{b}"), Materialized::as_("store-name"))
    } else {
        windowed.aggregate_with(
            string_init,
            to_string_adder,
            Materialized::as_("store-name").with_value_serde(StringSerde),
        )
    };
    table.to_stream().to_with(
        "out",
        Produced::with(
            WindowedSerde::time_with_size(StringSerde, ms(diff)),
            StringSerde,
        ),
    );
    Ok(TopologyTestDriver::new(builder.build()?)?)
}

fn sliding_output(driver: &TopologyTestDriver, diff: u64) -> ByStart<String> {
    by_start(
        driver
            .create_output_topic(
                "out",
                WindowedSerde::time_with_size(StringSerde, ms(diff)),
                StringSerde,
            )
            .read_records_to_list(),
    )
}

// KStreamSlidingWindowAggregateTest.testAggregateSmallInput
#[test]
fn sliding_aggregate_small_input() -> TestResult {
    let driver = sliding_driver(10, 5, false)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    for (v, t) in [
        ("1", 10),
        ("2", 10),
        ("3", 14),
        ("4", 15),
        ("5", 20),
        ("6", 22),
        ("7", 30),
    ] {
        input.pipe_key_value_at("A", v, t);
    }
    let st = |v: &str, t| (s(v), t);
    let expected = expect(&[
        (0, &[st("0+1", 10), st("0+1+2", 10)]),
        (4, &[st("0+1+2+3", 14)]),
        (5, &[st("0+1+2+3+4", 15)]),
        (10, &[st("0+1+2+3+4+5", 20)]),
        (11, &[st("0+3", 14), st("0+3+4", 15), st("0+3+4+5", 20)]),
        (12, &[st("0+3+4+5+6", 22)]),
        (15, &[st("0+4", 15), st("0+4+5", 20), st("0+4+5+6", 22)]),
        (16, &[st("0+5", 20), st("0+5+6", 22)]),
        (20, &[st("0+5+6+7", 30)]),
        (21, &[st("0+6", 22), st("0+6+7", 30)]),
        (23, &[st("0+7", 30)]),
    ]);
    assert_eq!(sliding_output(&driver, 10), expected);
    Ok(())
}

// KStreamSlidingWindowAggregateTest.testReduceSmallInput
#[test]
fn sliding_reduce_small_input() -> TestResult {
    let driver = sliding_driver(10, 5, true)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    for (v, t) in [
        ("1", 10),
        ("2", 14),
        ("3", 15),
        ("4", 22),
        ("5", 26),
        ("6", 30),
    ] {
        input.pipe_key_value_at("A", v, t);
    }
    let st = |v: &str, t| (s(v), t);
    let expected = expect(&[
        (0, &[st("1", 10)]),
        (4, &[st("1+2", 14)]),
        (5, &[st("1+2+3", 15)]),
        (11, &[st("2", 14), st("2+3", 15)]),
        (12, &[st("2+3+4", 22)]),
        (15, &[st("3", 15), st("3+4", 22)]),
        (16, &[st("4", 22), st("4+5", 26)]),
        (20, &[st("4+5+6", 30)]),
        (23, &[st("5", 26), st("5+6", 30)]),
        (27, &[st("6", 30)]),
    ]);
    assert_eq!(sliding_output(&driver, 10), expected);
    Ok(())
}

// KStreamSlidingWindowAggregateTest.testEarlyRecordsSmallInput
#[test]
fn sliding_early_records_small_input() -> TestResult {
    let driver = sliding_driver(50, 0, false)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    for (v, t) in [
        ("1", 0),
        ("2", 5),
        ("3", 6),
        ("4", 3),
        ("5", 13),
        ("6", 10),
        ("7", 70),
    ] {
        input.pipe_key_value_at("A", v, t);
    }
    let st = |v: &str, t| (s(v), t);
    let expected = expect(&[
        (
            0,
            &[
                st("0+1", 0),
                st("0+1+2", 5),
                st("0+1+2+3", 6),
                st("0+1+2+3+4", 6),
                st("0+1+2+3+4+5", 13),
                st("0+1+2+3+4+5+6", 13),
            ],
        ),
        (
            1,
            &[
                st("0+2", 5),
                st("0+2+3", 6),
                st("0+2+3+4", 6),
                st("0+2+3+4+5", 13),
                st("0+2+3+4+5+6", 13),
            ],
        ),
        (4, &[st("0+2+3", 6), st("0+2+3+5", 13), st("0+2+3+5+6", 13)]),
        (6, &[st("0+3", 6), st("0+3+5", 13), st("0+3+5+6", 13)]),
        (7, &[st("0+5", 13), st("0+5+6", 13)]),
        (11, &[st("0+5", 13)]),
        (20, &[st("0+7", 70)]),
    ]);
    assert_eq!(sliding_output(&driver, 50), expected);
    Ok(())
}

// KStreamSlidingWindowAggregateTest.testEarlyRecordsRepeatedInput
#[test]
fn sliding_early_records_repeated_input() -> TestResult {
    let driver = sliding_driver(5, 0, false)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    for (v, t) in [
        ("1", 0),
        ("2", 2),
        ("3", 4),
        ("4", 0),
        ("5", 2),
        ("6", 2),
        ("7", 0),
        ("8", 7),
    ] {
        input.pipe_key_value_at("A", v, t);
    }
    let st = |v: &str, t| (s(v), t);
    let expected = expect(&[
        (
            0,
            &[
                st("0+1", 0),
                st("0+1+2", 2),
                st("0+1+2+3+4+5", 4),
                st("0+1+2+3+4+5+6", 4),
                st("0+1+2+3", 4),
                st("0+1+2+3+4", 4),
                st("0+1+2+3+4+5+6+7", 4),
            ],
        ),
        (
            1,
            &[
                st("0+2+3+5+6", 4),
                st("0+2", 2),
                st("0+2+3", 4),
                st("0+2+3+5", 4),
            ],
        ),
        (2, &[st("0+2+3+5+6+8", 7)]),
        (3, &[st("0+3", 4), st("0+3+8", 7)]),
        (5, &[st("0+8", 7)]),
    ]);
    assert_eq!(sliding_output(&driver, 5), expected);
    Ok(())
}

// KStreamSlidingWindowAggregateTest.shouldLogAndMeterWhenSkippingExpiredWindowByGrace
#[test]
fn sliding_drops_and_counts_records_past_the_grace_period() -> TestResult {
    let driver = sliding_driver(10, 90, false)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "100", 200);
    for (v, t) in [
        ("0", 100),
        ("1", 101),
        ("2", 102),
        ("3", 103),
        ("4", 104),
        ("5", 105),
        ("6", 15),
        ("101", 300),
        ("102", 400),
    ] {
        input.pipe_key_value_at("k", v, t);
    }
    // Kafka: 7 dropped, the left windows [90,100] .. [95,105] (closed at
    // 110) and the record at 15 ([15,25]).
    assert_eq!(driver.metrics().dropped_records, 7);
    let st = |v: &str, t| (s(v), t);
    assert_eq!(
        sliding_output(&driver, 10),
        expect(&[
            (190, &[st("0+100", 200)]),
            (290, &[st("0+101", 300)]),
            (390, &[st("0+102", 400)])
        ])
    );
    Ok(())
}

// ---------------------------------------------------------------------
// Session windows: KStreamSessionWindowAggregateProcessorTest
// ---------------------------------------------------------------------

const GAP_MS: i64 = 5 * 60 * 1000;

fn session_driver(gap: i64, grace: i64) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_and_grace(
            ms(gap.unsigned_abs()),
            ms(grace.unsigned_abs()),
        )?)
        .with_retention(ms(gap.unsigned_abs() * 3))
        .aggregate_with(
            || 0_i64,
            |_, _, agg| agg + 1,
            |_, a, b| a + b,
            Materialized::as_("session-store").with_value_serde(I64Serde),
        )
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::session(StringSerde), I64Serde),
        );
    Ok(TopologyTestDriver::new(builder.build()?)?)
}

fn session_output(driver: &TopologyTestDriver) -> Vec<(Windowed<String>, Option<i64>, i64)> {
    driver
        .create_output_topic("out", WindowedSerde::session(StringSerde), I64Serde)
        .read_records_to_list()
        .into_iter()
        .filter_map(|r| Some((r.key?, r.value, r.timestamp?)))
        .collect()
}

// shouldCreateSingleSessionWhenWithinGap
#[test]
fn session_single_session_within_gap() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("john", "first", 0);
    input.pipe_key_value_at("john", "second", 500);
    let store = driver.session_store::<S, i64>("session-store")?;
    let found = store.find_sessions(&s("john"), 0, 2000);
    assert_eq!(found[0].1, 2);
    Ok(())
}

// shouldMergeSessions
#[test]
fn session_merges_sessions() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let store = driver.session_store::<S, i64>("session-store")?;
    input.pipe_key_value_at("mel", "first", 0);
    assert!(!store.find_sessions(&s("mel"), 0, 0).is_empty());
    input.pipe_key_value_at("mel", "second", GAP_MS + 1);
    assert!(
        !store
            .find_sessions(&s("mel"), GAP_MS + 1, GAP_MS + 1)
            .is_empty()
    );
    assert!(!store.find_sessions(&s("mel"), 0, 0).is_empty());
    input.pipe_key_value_at("mel", "third", GAP_MS / 2);
    let found = store.find_sessions(&s("mel"), 0, GAP_MS + 1);
    assert_eq!(found, [(w("mel", 0, GAP_MS + 1), 3)]);
    Ok(())
}

// shouldUpdateSessionIfTheSameTime
#[test]
fn session_updated_for_the_same_time() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("mel", "first", 0);
    input.pipe_key_value_at("mel", "second", 0);
    let store = driver.session_store::<S, i64>("session-store")?;
    assert_eq!(store.find_sessions(&s("mel"), 0, 0), [(w("mel", 0, 0), 2)]);
    // The same window: no tombstone, just the update.
    assert_eq!(
        session_output(&driver),
        [(w("mel", 0, 0), Some(1), 0), (w("mel", 0, 0), Some(2), 0)]
    );
    Ok(())
}

// shouldHaveMultipleSessionsForSameIdWhenTimestampApartBySessionGap
#[test]
fn session_multiple_sessions_apart_by_the_gap() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let mut now = 0;
    input.pipe_key_value_at("mel", "first", now);
    now += GAP_MS + 1;
    input.pipe_key_value_at("mel", "second", now);
    input.pipe_key_value_at("mel", "second", now);
    now += GAP_MS + 1;
    for _ in 0..3 {
        input.pipe_key_value_at("mel", "third", now);
    }
    let g = GAP_MS + 1;
    assert_eq!(
        session_output(&driver),
        [
            (w("mel", 0, 0), Some(1), 0),
            (w("mel", g, g), Some(1), g),
            (w("mel", g, g), Some(2), g),
            (w("mel", now, now), Some(1), now),
            (w("mel", now, now), Some(2), now),
            (w("mel", now, now), Some(3), now),
        ]
    );
    Ok(())
}

// shouldRemoveMergedSessionsFromStateStore
#[test]
fn session_merged_sessions_leave_the_store() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let store = driver.session_store::<S, i64>("session-store")?;
    input.pipe_key_value_at("a", "1", 0);
    assert_eq!(store.find_sessions(&s("a"), 0, 0), [(w("a", 0, 0), 1)]);
    input.pipe_key_value_at("a", "2", 100);
    assert_eq!(store.find_sessions(&s("a"), 0, 100), [(w("a", 0, 100), 2)]);
    Ok(())
}

// shouldHandleMultipleSessionsAndMerging, without a cache: every update and
// the tombstone of each merged session.
#[test]
fn session_multiple_sessions_and_merging() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let (g, h) = (GAP_MS + 1, GAP_MS + 1 + GAP_MS / 2);
    for (k, v, t) in [
        ("a", "1", 0),
        ("b", "1", 0),
        ("c", "1", 0),
        ("d", "1", 0),
        ("d", "2", GAP_MS / 2),
        ("a", "2", g),
        ("b", "2", g),
        ("a", "3", h),
        ("c", "3", h),
    ] {
        input.pipe_key_value_at(k, v, t);
    }
    assert_eq!(
        session_output(&driver),
        [
            (w("a", 0, 0), Some(1), 0),
            (w("b", 0, 0), Some(1), 0),
            (w("c", 0, 0), Some(1), 0),
            (w("d", 0, 0), Some(1), 0),
            (w("d", 0, 0), None, 0),
            (w("d", 0, GAP_MS / 2), Some(2), GAP_MS / 2),
            (w("a", g, g), Some(1), g),
            (w("b", g, g), Some(1), g),
            (w("a", g, g), None, g),
            (w("a", g, h), Some(2), h),
            (w("c", h, h), Some(1), h),
        ]
    );
    Ok(())
}

// shouldImmediatelyForwardRemovedSessionsWhenMerging
#[test]
fn session_merge_forwards_a_tombstone_for_the_merged_session() -> TestResult {
    let driver = session_driver(GAP_MS, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("a", "1", 0);
    input.pipe_key_value_at("a", "1", 5);
    assert_eq!(
        session_output(&driver),
        [
            (w("a", 0, 0), Some(1), 0),
            (w("a", 0, 0), None, 0),
            (w("a", 0, 5), Some(2), 5)
        ]
    );
    Ok(())
}

// shouldLogAndMeterWhenSkippingLateRecordWithZeroGrace
#[test]
fn session_late_record_with_zero_grace_is_dropped_and_counted() -> TestResult {
    let driver = session_driver(10, 0)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("dummy", "dummy", 0);
    input.pipe_key_value_at("OnTime1", "1", 0);
    input.pipe_key_value_at("dummy", "dummy", 11);
    assert_eq!(driver.metrics().dropped_records, 0);
    input.pipe_key_value_at("Late1", "1", 0);
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

// shouldLogAndMeterWhenSkippingLateRecordWithNonzeroGrace
#[test]
fn session_late_record_with_nonzero_grace_is_dropped_and_counted() -> TestResult {
    let driver = session_driver(10, 1)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("dummy", "dummy", 0);
    input.pipe_key_value_at("OnTime1", "1", 0);
    input.pipe_key_value_at("dummy", "dummy", 11);
    input.pipe_key_value_at("OnTime2", "1", 0);
    input.pipe_key_value_at("dummy", "dummy", 12);
    assert_eq!(driver.metrics().dropped_records, 0);
    input.pipe_key_value_at("Late1", "1", 0);
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

#[test]
fn session_changelog_has_kafkas_keys_and_tombstones() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(ms(5))?)
        .count_with(Materialized::as_("sessions"));
    let driver = TopologyTestDriver::with_config(builder.build()?, StreamsConfig::new("app"))?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "v", 0);
    input.pipe_key_value_at("k", "v", 3);
    let raw = driver.create_output_topic(
        "app-sessions-changelog",
        streams_core::serde::BytesSerde,
        I64Serde,
    );
    let key = |end: i64, start: i64| [&b"k"[..], &end.to_be_bytes(), &start.to_be_bytes()].concat();
    let records: Vec<_> = raw
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key, r.value, r.timestamp))
        .collect();
    assert_eq!(
        records,
        [
            (Some(key(0, 0)), Some(1), Some(0)),
            (Some(key(0, 0)), None, Some(3)),
            (Some(key(3, 0)), Some(2), Some(3)),
        ]
    );
    Ok(())
}

#[test]
fn session_reduce_merges_with_the_reducer() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(ms(5))?)
        // Long enough to keep both sessions (the default, gap + grace, is 5).
        .with_retention(ms(100))
        .reduce(|a, b| format!("{a}+{b}"))
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::session(StringSerde), StringSerde),
        );
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "a", 0);
    input.pipe_key_value_at("k", "b", 10);
    // Bridges both sessions: their aggregates merge, then the value is added.
    input.pipe_key_value_at("k", "c", 5);
    let out = driver.create_output_topic("out", WindowedSerde::session(StringSerde), StringSerde);
    assert_eq!(
        drain(out.read_records_to_list()),
        vec![
            kvt("[k@0/0]", s("a"), 0),
            kvt("[k@10/10]", s("b"), 10),
            kvt::<S>("[k@0/0]", None, 0),
            kvt::<S>("[k@10/10]", None, 10),
            kvt("[k@0/10]", s("a+b+c"), 10),
        ]
    );
    Ok(())
}

// ---------------------------------------------------------------------
// Suppression: SuppressScenarioTest
// ---------------------------------------------------------------------

fn windowed_counts<W>(
    windows: W,
    key_serde: WindowedSerde<String>,
) -> Result<StreamsBuilder, Box<dyn Error>>
where
    W: streams_core::dsl::WindowedBy<String, String>,
    W::Output: CountsTable,
{
    let builder = StreamsBuilder::new();
    let counts = builder
        .stream_with::<S, S>("input", Consumed::with(StringSerde, StringSerde))
        .group_by_with(
            |k, _| k.cloned().unwrap_or_default(),
            Grouped::with(StringSerde, StringSerde),
        )
        .windowed_by(windows)
        .counts();
    counts
        .clone()
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
        .to_stream()
        .to_with(
            "output-suppressed",
            Produced::with(key_serde.clone(), I64Serde),
        );
    counts
        .to_stream()
        .to_with("output-raw", Produced::with(key_serde, I64Serde));
    Ok(builder)
}

/// `count(Materialized.as("counts"))` on either windowed stream.
trait CountsTable {
    fn counts(self) -> KTable<Windowed<String>, i64>;
}

impl CountsTable for streams_core::TimeWindowedKStream<S, S> {
    fn counts(self) -> KTable<Windowed<String>, i64> {
        // As Kafka's SuppressScenarioTest: `as("counts").withCachingDisabled()`.
        self.count_with(Materialized::as_("counts").with_caching_disabled())
    }
}

impl CountsTable for streams_core::SessionWindowedKStream<S, S> {
    fn counts(self) -> KTable<Windowed<String>, i64> {
        // As Kafka's SuppressScenarioTest: `as("counts").withCachingDisabled()`.
        self.count_with(Materialized::as_("counts").with_caching_disabled())
    }
}

fn read_windowed(
    driver: &TopologyTestDriver,
    topic: &str,
    serde: WindowedSerde<String>,
) -> Vec<Kvt<i64>> {
    drain(
        driver
            .create_output_topic(topic, serde, I64Serde)
            .read_records_to_list(),
    )
}

// SuppressScenarioTest.shouldSupportFinalResultsForTimeWindows
#[test]
fn suppress_final_results_for_time_windows() -> TestResult {
    let serde = WindowedSerde::time_with_size(StringSerde, ms(2));
    let builder = windowed_counts(TimeWindows::of_size_and_grace(ms(2), ms(1))?, serde.clone())?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    for t in [0, 1, 2, 1, 0, 5, 0] {
        input.pipe_key_value_at("k1", "v1", t);
    }
    assert_eq!(
        read_windowed(&driver, "output-raw", serde.clone()),
        vec![
            kvt("[k1@0/2]", 1, 0),
            kvt("[k1@0/2]", 2, 1),
            kvt("[k1@2/4]", 1, 2),
            kvt("[k1@0/2]", 3, 1),
            kvt("[k1@0/2]", 4, 1),
            kvt("[k1@4/6]", 1, 5),
        ]
    );
    assert_eq!(
        read_windowed(&driver, "output-suppressed", serde),
        vec![kvt("[k1@0/2]", 4, 1), kvt("[k1@2/4]", 1, 2)]
    );
    // The last record was dropped: its window had closed.
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

// SuppressScenarioTest.shouldSupportFinalResultsForTimeWindowsWithLargeJump
#[test]
fn suppress_final_results_for_time_windows_with_large_jump() -> TestResult {
    let serde = WindowedSerde::time_with_size(StringSerde, ms(2));
    let builder = windowed_counts(TimeWindows::of_size_and_grace(ms(2), ms(2))?, serde.clone())?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    for t in [0, 1, 2, 0, 3, 0, 4, 0, 30] {
        input.pipe_key_value_at("k1", "v1", t);
    }
    assert_eq!(
        read_windowed(&driver, "output-raw", serde.clone()),
        vec![
            kvt("[k1@0/2]", 1, 0),
            kvt("[k1@0/2]", 2, 1),
            kvt("[k1@2/4]", 1, 2),
            kvt("[k1@0/2]", 3, 1),
            kvt("[k1@2/4]", 2, 3),
            kvt("[k1@0/2]", 4, 1),
            kvt("[k1@4/6]", 1, 4),
            kvt("[k1@30/32]", 1, 30),
        ]
    );
    assert_eq!(
        read_windowed(&driver, "output-suppressed", serde),
        vec![
            kvt("[k1@0/2]", 4, 1),
            kvt("[k1@2/4]", 2, 3),
            kvt("[k1@4/6]", 1, 4)
        ]
    );
    Ok(())
}

// SuppressScenarioTest.shouldSupportFinalResultsForSlidingWindows
#[test]
fn suppress_final_results_for_sliding_windows() -> TestResult {
    let serde = WindowedSerde::time_with_size(StringSerde, ms(5));
    let builder = windowed_counts(
        SlidingWindows::of_time_difference_and_grace(ms(5), ms(15))?,
        serde.clone(),
    )?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    for t in [10, 11, 10, 13, 10, 24, 5, 7, 90] {
        input.pipe_key_value_at("k1", "v1", t);
    }
    let mut raw = read_windowed(&driver, "output-raw", serde.clone());
    raw.sort_by(|a, b| (&a.0, a.2).cmp(&(&b.0, b.2)));
    assert_eq!(
        raw,
        vec![
            kvt("[k1@11/16]", 1, 11),
            kvt("[k1@11/16]", 2, 13),
            kvt("[k1@12/17]", 1, 13),
            kvt("[k1@19/24]", 1, 24),
            kvt("[k1@5/10]", 1, 10),
            kvt("[k1@5/10]", 2, 10),
            kvt("[k1@5/10]", 3, 10),
            kvt("[k1@5/10]", 4, 10),
            kvt("[k1@5/10]", 5, 10),
            kvt("[k1@6/11]", 2, 11),
            kvt("[k1@6/11]", 3, 11),
            kvt("[k1@6/11]", 4, 11),
            kvt("[k1@6/11]", 5, 11),
            kvt("[k1@8/13]", 4, 13),
            kvt("[k1@8/13]", 5, 13),
            kvt("[k1@85/90]", 1, 90),
        ]
    );
    assert_eq!(
        read_windowed(&driver, "output-suppressed", serde),
        vec![
            kvt("[k1@5/10]", 5, 10),
            kvt("[k1@6/11]", 5, 11),
            kvt("[k1@8/13]", 5, 13),
            kvt("[k1@11/16]", 2, 13),
            kvt("[k1@12/17]", 1, 13),
            kvt("[k1@19/24]", 1, 24),
        ]
    );
    Ok(())
}

// SuppressScenarioTest.shouldSupportFinalResultsForSessionWindows
#[test]
fn suppress_final_results_for_session_windows() -> TestResult {
    let serde = WindowedSerde::session(StringSerde);
    let builder = windowed_counts(
        SessionWindows::of_inactivity_gap_with_no_grace(ms(5))?,
        serde.clone(),
    )?;
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "v1", 0);
    input.pipe_key_value_at("k1", "v1", 5);
    // Disordered records are admitted until stream time passes end + gap + grace.
    input.pipe_key_value_at("k1", "v1", 1);
    input.pipe_key_value_at("k2", "v1", 11);
    // Late for the first window, which is now closed: dropped.
    input.pipe_key_value_at("k1", "v1", 5);
    input.pipe_key_value_at("k1", "v1", 30);
    assert_eq!(
        read_windowed(&driver, "output-raw", serde.clone()),
        vec![
            kvt("[k1@0/0]", 1, 0),
            kvt("[k1@0/0]", None, 0),
            kvt("[k1@0/5]", 2, 5),
            kvt("[k1@0/5]", None, 5),
            kvt("[k1@0/5]", 3, 5),
            kvt("[k2@11/11]", 1, 11),
            kvt("[k1@30/30]", 1, 30),
        ]
    );
    assert_eq!(
        read_windowed(&driver, "output-suppressed", serde),
        vec![kvt("[k1@0/5]", 3, 5), kvt("[k2@11/11]", 1, 11)]
    );
    Ok(())
}

/// SuppressScenarioTest's table: values counted per value of `input`.
fn value_counts(builder: &StreamsBuilder, materialized_count: bool) -> KTable<S, i64> {
    let grouped = builder
        .table_consumed::<S, S>(
            "input",
            Consumed::with(StringSerde, StringSerde),
            Materialized::with(StringSerde, StringSerde).with_logging_disabled(),
        )
        .group_by_with(
            |k, v| (v.clone(), k.clone()),
            Grouped::with(StringSerde, StringSerde),
        );
    if materialized_count {
        grouped.count_with(Materialized::with(StringSerde, I64Serde))
    } else {
        grouped.count()
    }
}

fn time_limited(
    suppressed: Suppressed<S>,
    materialized_count: bool,
) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let counts = value_counts(&builder, materialized_count);
    counts
        .clone()
        .suppress(suppressed)
        .to_stream()
        .to_with("output-suppressed", Produced::with(StringSerde, I64Serde));
    counts
        .to_stream()
        .to_with("output-raw", Produced::with(StringSerde, I64Serde));
    // Kafka's driver's default application id, for the same buffer sizes.
    let config = StreamsConfig::new("dummy-topology-test-driver-app-id");
    Ok(TopologyTestDriver::with_config(builder.build()?, config)?)
}

fn read_counts(driver: &TopologyTestDriver, topic: &str) -> Vec<Kvt<i64>> {
    driver
        .create_output_topic(topic, StringSerde, I64Serde)
        .read_records_to_list()
        .into_iter()
        .map(|r| {
            (
                r.key.unwrap_or_default(),
                r.value,
                r.timestamp.unwrap_or(-1),
            )
        })
        .collect()
}

fn first_three(driver: &TopologyTestDriver) {
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "v1", 0);
    input.pipe_key_value_at("k1", "v2", 1);
    input.pipe_key_value_at("k2", "v1", 2);
}

fn raw_of_first_three() -> Vec<Kvt<i64>> {
    vec![
        kvt("v1", 1, 0),
        kvt("v1", 0, 1),
        kvt("v2", 1, 1),
        kvt("v1", 1, 2),
    ]
}

// SuppressScenarioTest.shouldImmediatelyEmitEventsWithZeroEmitAfter
#[test]
fn suppress_with_zero_time_limit_emits_immediately() -> TestResult {
    let driver = time_limited(
        Suppressed::until_time_limit(Duration::ZERO, BufferConfig::unbounded()),
        false,
    )?;
    first_three(&driver);
    assert_eq!(read_counts(&driver, "output-raw"), raw_of_first_three());
    assert_eq!(
        read_counts(&driver, "output-suppressed"),
        raw_of_first_three()
    );
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("x", "x", 3);
    assert_eq!(read_counts(&driver, "output-raw"), vec![kvt("x", 1, 3)]);
    assert_eq!(
        read_counts(&driver, "output-suppressed"),
        vec![kvt("x", 1, 3)]
    );
    input.pipe_key_value_at("x", "y", 4);
    let expected = vec![kvt("x", 0, 4), kvt("y", 1, 4)];
    assert_eq!(read_counts(&driver, "output-raw"), expected);
    assert_eq!(read_counts(&driver, "output-suppressed"), expected);
    Ok(())
}

// SuppressScenarioTest.shouldSuppressIntermediateEventsWithTimeLimit
#[test]
fn suppress_intermediate_events_with_time_limit() -> TestResult {
    let driver = time_limited(
        Suppressed::until_time_limit(ms(2), BufferConfig::unbounded()),
        false,
    )?;
    first_three(&driver);
    assert_eq!(read_counts(&driver, "output-raw"), raw_of_first_three());
    assert_eq!(
        read_counts(&driver, "output-suppressed"),
        vec![kvt("v1", 1, 2)]
    );
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    // A "tick" to advance stream time.
    input.pipe_key_value_at("tick", "tick", 3);
    assert_eq!(read_counts(&driver, "output-raw"), vec![kvt("tick", 1, 3)]);
    assert_eq!(
        read_counts(&driver, "output-suppressed"),
        vec![kvt("v2", 1, 1)]
    );
    input.pipe_key_value_at("tick", "tock", 4);
    assert_eq!(
        read_counts(&driver, "output-raw"),
        vec![kvt("tick", 0, 4), kvt("tock", 1, 4)]
    );
    // "tick" is still buffered: first buffered at 3, and it is only 4.
    assert_eq!(read_counts(&driver, "output-suppressed"), vec![]);
    Ok(())
}

fn check_record_limit_scenario(driver: &TopologyTestDriver) {
    first_three(driver);
    assert_eq!(read_counts(driver, "output-raw"), raw_of_first_three());
    // Consecutive updates to v1 are suppressed into the latter; the last
    // update stays until another key comes along.
    assert_eq!(
        read_counts(driver, "output-suppressed"),
        vec![kvt("v1", 0, 1), kvt("v2", 1, 1)]
    );
    driver
        .create_input_topic("input", StringSerde, StringSerde)
        .pipe_key_value_at("x", "x", 3);
    assert_eq!(read_counts(driver, "output-raw"), vec![kvt("x", 1, 3)]);
    assert_eq!(
        read_counts(driver, "output-suppressed"),
        vec![kvt("v1", 1, 2)]
    );
}

// SuppressScenarioTest.shouldSuppressIntermediateEventsWithRecordLimit
#[test]
fn suppress_intermediate_events_with_record_limit() -> TestResult {
    let limit = ms(i64::MAX.unsigned_abs());
    let driver = time_limited(
        Suppressed::until_time_limit(limit, BufferConfig::max_records(1).emit_early_when_full()),
        true,
    )?;
    check_record_limit_scenario(&driver);
    Ok(())
}

// SuppressScenarioTest.shouldSuppressIntermediateEventsWithBytesLimit
#[test]
fn suppress_intermediate_events_with_bytes_limit() -> TestResult {
    let limit = ms(i64::MAX.unsigned_abs());
    let driver = time_limited(
        Suppressed::until_time_limit(limit, BufferConfig::max_bytes(200).emit_early_when_full()),
        false,
    )?;
    check_record_limit_scenario(&driver);
    Ok(())
}

#[test]
fn a_full_strict_buffer_fails_the_task() -> TestResult {
    let driver = time_limited(
        Suppressed::until_time_limit(ms(1000), BufferConfig::max_records(1).shut_down_when_full()),
        false,
    )?;
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "v1", 0);
    let err = input
        .try_pipe_record(TestRecord::key_value("k2", "v2").at(1))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains(
            "KTABLE-SUPPRESS-0000000008 buffer exceeded its max capacity. Currently [2/1] records"
        ),
        "{err}"
    );
    Ok(())
}

// SuppressScenarioTest.shouldWorkBeforeGroupBy
#[test]
fn suppress_works_before_group_by() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .table_consumed::<S, S>(
            "topic",
            Consumed::with(StringSerde, StringSerde),
            Materialized::default(),
        )
        .suppress(Suppressed::until_time_limit(
            ms(10),
            BufferConfig::unbounded(),
        ))
        .group_by_with(
            |k, v| (k.clone(), v.clone()),
            Grouped::with(StringSerde, StringSerde),
        )
        .count()
        .to_stream()
        .to_with("output", Produced::with(StringSerde, I64Serde));
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("topic", StringSerde, StringSerde);
    input.pipe_key_value_at("A", "a", 0);
    input.pipe_key_value_at("tick", "tick", 10);
    assert_eq!(read_counts(&driver, "output"), vec![kvt("A", 1, 0)]);
    Ok(())
}

#[test]
fn until_window_closes_needs_a_windowed_aggregation() -> TestResult {
    let builder = StreamsBuilder::new();
    let _suppressed = builder
        .table::<Windowed<S>, i64>("windowed")
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()));
    let err = builder
        .build()
        .expect_err("no windowed aggregation upstream");
    assert!(matches!(&err, StreamsError::NotWindowed { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("window close time is only defined for windowed computations"),
        "{err}"
    );
    Ok(())
}

#[test]
fn suppress_names_follow_kafka_and_the_buffer_has_a_changelog() -> TestResult {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .count()
        .filter(|_, c| *c > 0)
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::time_with_size(StringSerde, ms(10)), I64Serde),
        );
    let topology = builder.build()?;
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-AGGREGATE-0000000002",
            "KTABLE-FILTER-0000000003",
            "KTABLE-SUPPRESS-0000000004",
            "KTABLE-TOSTREAM-0000000006",
            "KSTREAM-SINK-0000000007"
        ]
    );
    assert_eq!(
        topology.store_names(),
        [
            "KSTREAM-AGGREGATE-STATE-STORE-0000000001",
            "KTABLE-SUPPRESS-STATE-STORE-0000000005"
        ]
    );
    let driver = TopologyTestDriver::with_config(topology, StreamsConfig::new("app"))?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "v", 1);
    input.pipe_key_value_at("k", "v", 2);
    input.pipe_key_value_at("k", "v", 10);
    let out = driver.create_output_topic(
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(10)),
        I64Serde,
    );
    assert_eq!(
        drain(out.read_records_to_list()),
        vec![kvt("[k@0/10]", 2, 2)]
    );
    let changelog = "app-KTABLE-SUPPRESS-STATE-STORE-0000000005-changelog";
    let raw = driver.create_output_topic(
        changelog,
        streams_core::serde::BytesSerde,
        streams_core::serde::BytesSerde,
    );
    let records = raw.read_records_to_list();
    // Three buffered updates, then the eviction of [k@0/10] (a tombstone).
    // The record at 10 changes two keys; Kafka writes them in the order of
    // its HashSet of key bytes: [k@10/20] first.
    let key = [&b"k"[..], &0_i64.to_be_bytes()].concat();
    let later = [&b"k"[..], &10_i64.to_be_bytes()].concat();
    let keyed: Vec<_> = records
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                r.value.is_some(),
                r.headers.last("v").map(<[u8]>::to_vec),
            )
        })
        .collect();
    assert_eq!(keyed[0], (Some(key.clone()), true, Some(vec![3])));
    assert_eq!(keyed[2], (Some(later), true, Some(vec![3])));
    assert_eq!(keyed[3], (Some(key), false, None));
    assert_eq!(keyed.len(), 4);
    // Written without a timestamp, as Kafka writes them.
    assert!(records.iter().all(|r| r.timestamp.is_none()));
    Ok(())
}

#[test]
fn a_windowed_aggregation_store_restores_from_its_changelog() -> TestResult {
    use streams_core::RawRecord;
    use streams_core::serde::BytesSerde;
    use streams_core::state::{StoreBuilder, Stores, TimestampedWindowStore};

    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(5))?)
        .count_with(Materialized::as_("counts"));
    let driver = TopologyTestDriver::with_config(builder.build()?, StreamsConfig::new("app"))?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for (k, t) in [
        ("a", 1),
        ("b", 3),
        ("a", 12),
        ("a", 8),
        ("b", 25),
        ("a", 2),
        ("c", 30),
    ] {
        input.pipe_key_value_at(k, "v", t);
    }
    let changelog: Vec<RawRecord> = driver
        .create_output_topic("app-counts-changelog", BytesSerde, BytesSerde)
        .read_records_to_list()
        .into_iter()
        .map(|r| RawRecord::new(r.key, r.value, r.timestamp.unwrap_or(-1)))
        .collect();
    // The DSL store's retention: window size plus grace.
    let store_builder = Stores::timestamped_window_store_builder(
        "counts",
        ms(15),
        ms(10),
        false,
        StringSerde,
        I64Serde,
    );
    let mut boxed = store_builder.build(&StreamsConfig::new("app"))?;
    let restored = boxed
        .as_any_mut()
        .downcast_mut::<TimestampedWindowStore<S, i64>>()
        .ok_or("not a timestamped window store")?;
    restored.restore(&changelog)?;
    let restored: Vec<_> = restored.all()?.collect();
    let live = driver.timestamped_window_store::<S, i64>("counts")?.all();
    assert_eq!(restored, live);
    assert_eq!(
        live.iter()
            .map(|(w, v)| (w.to_string(), v.value))
            .collect::<Vec<_>>(),
        [(s("[b@20/30]"), 1), (s("[c@30/40]"), 1)]
    );
    Ok(())
}

fn show(v: Option<&String>) -> String {
    v.cloned().unwrap_or_else(|| s("null"))
}

fn read_joined(driver: &TopologyTestDriver) -> Vec<Kvt<S>> {
    read_string_pairs(driver, "output")
}

fn suppressed_join(suppress_left: bool) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let table = |topic: &str, suppress: bool| {
        let t = builder.table_consumed::<S, S>(
            topic,
            Consumed::with(StringSerde, StringSerde),
            Materialized::default(),
        );
        if suppress {
            t.suppress(Suppressed::until_time_limit(
                ms(10),
                BufferConfig::unbounded(),
            ))
        } else {
            t
        }
    };
    let left = table("left", suppress_left);
    let right = table("right", !suppress_left);
    left.outer_join(&right, |l, r| format!("({},{})", show(l), show(r)))
        .to_stream()
        .to_with("output", Produced::with(StringSerde, StringSerde));
    Ok(TopologyTestDriver::new(builder.build()?)?)
}

// SuppressScenarioTest.shouldWorkBeforeJoinRight: the suppressed table's
// value getter shows a buffered key's prior value, else the parent's.
#[test]
fn suppress_works_before_join_right() -> TestResult {
    let driver = suppressed_join(false)?;
    let right = driver.create_input_topic("right", StringSerde, StringSerde);
    let left = driver.create_input_topic("left", StringSerde, StringSerde);
    right.pipe_key_value_at("B", "1", 0);
    right.pipe_key_value_at("A", "1", 0);
    assert_eq!(read_joined(&driver), vec![]);
    right.pipe_key_value_at("tick", "tick", 10);
    assert_eq!(
        read_joined(&driver),
        vec![kvt("A", s("(null,1)"), 0), kvt("B", s("(null,1)"), 0)]
    );
    right.pipe_key_value_at("A", "2", 11);
    assert_eq!(read_joined(&driver), vec![]);
    left.pipe_key_value_at("A", "a", 12);
    assert_eq!(read_joined(&driver), vec![kvt("A", s("(a,1)"), 12)]);
    left.pipe_key_value_at("B", "b", 12);
    assert_eq!(read_joined(&driver), vec![kvt("B", s("(b,1)"), 12)]);
    left.pipe_key_value_at("A", "b", 13);
    assert_eq!(read_joined(&driver), vec![kvt("A", s("(b,1)"), 13)]);
    right.pipe_key_value_at("tick", "tick1", 21);
    assert_eq!(
        read_joined(&driver),
        vec![kvt("tick", s("(null,tick1)"), 21), kvt("A", s("(b,2)"), 13)]
    );
    Ok(())
}

// SuppressScenarioTest.shouldWorkBeforeJoinLeft
#[test]
fn suppress_works_before_join_left() -> TestResult {
    let driver = suppressed_join(true)?;
    let right = driver.create_input_topic("right", StringSerde, StringSerde);
    let left = driver.create_input_topic("left", StringSerde, StringSerde);
    left.pipe_key_value_at("B", "1", 0);
    left.pipe_key_value_at("A", "1", 0);
    assert_eq!(read_joined(&driver), vec![]);
    left.pipe_key_value_at("tick", "tick", 10);
    assert_eq!(
        read_joined(&driver),
        vec![kvt("A", s("(1,null)"), 0), kvt("B", s("(1,null)"), 0)]
    );
    left.pipe_key_value_at("A", "2", 11);
    assert_eq!(read_joined(&driver), vec![]);
    right.pipe_key_value_at("A", "a", 12);
    assert_eq!(read_joined(&driver), vec![kvt("A", s("(1,a)"), 12)]);
    right.pipe_key_value_at("B", "b", 12);
    assert_eq!(read_joined(&driver), vec![kvt("B", s("(1,b)"), 12)]);
    right.pipe_key_value_at("A", "b", 13);
    assert_eq!(read_joined(&driver), vec![kvt("A", s("(1,b)"), 13)]);
    left.pipe_key_value_at("tick", "tick1", 21);
    assert_eq!(
        read_joined(&driver),
        vec![kvt("tick", s("(tick1,null)"), 21), kvt("A", s("(2,b)"), 13)]
    );
    Ok(())
}

// KStreamWindowAggregate checks only for a null key: the windowed count
// counts a record with a null value, as Kafka's count aggregator does;
// reduce and aggregate (whose closures see `&V`) drop and count it.
#[test]
fn windowed_count_counts_tombstones_and_reduce_drops_them() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<S, S>("in");
    let windowed = || -> Result<_, StreamsError> {
        Ok(stream
            .clone()
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?))
    };
    windowed()?.count_with(Materialized::as_("counts"));
    windowed()?.reduce_with(|a, b| format!("{a}{b}"), Materialized::as_("reduced"));
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "a", 1);
    input.pipe_record(TestRecord::<S, S>::tombstone("k").at(2));
    assert_eq!(
        driver.window_store::<S, i64>("counts")?.get(&s("k"), 0),
        Some(2)
    );
    assert_eq!(
        driver.window_store::<S, S>("reduced")?.get(&s("k"), 0),
        Some(s("a"))
    );
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

/// `Materialized::with_retention` keeps closed windows queryable longer
/// than the default (window size plus grace), and wins over the windowed
/// stream's own `with_retention`.
#[test]
fn materialized_retention_keeps_windows_in_the_store() -> TestResult {
    let counts_with = |retention: Option<Duration>| -> Result<Vec<(i64, i64)>, Box<dyn Error>> {
        let builder = StreamsBuilder::new();
        let materialized = Materialized::as_("counts");
        let materialized = match retention {
            Some(r) => materialized.with_retention(r),
            None => materialized,
        };
        builder
            .stream::<String, String>("clicks")
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
            .with_retention(ms(20))
            .count_with(materialized);
        let driver = TopologyTestDriver::new(builder.build()?)?;
        let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
        clicks.pipe_key_value_at("a", "x", 5);
        clicks.pipe_key_value_at("a", "x", 500);
        let store = driver.window_store::<String, i64>("counts")?;
        Ok(store.fetch(&s("a"), 0..=1000))
    };
    // The stream's retention (20 ms) has expired the window at 0 by stream time 500.
    assert_eq!(counts_with(None)?, [(500, 1)]);
    assert_eq!(counts_with(Some(ms(1000)))?, [(0, 1), (500, 1)]);
    Ok(())
}
