//! Windowed stream-stream joins: ports of Kafka's `KStreamKStreamJoinTest`,
//! `KStreamKStreamLeftJoinTest` and `KStreamKStreamOuterJoinTest` with
//! their exact expected results (key, value, timestamp), plus the
//! stores, changelogs, drops and the emit interval of the outer store.

use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::dsl::{JoinWindows, OUTER_JOIN_EMIT_INTERVAL_CONFIG, StreamJoined};
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::{KStream, StreamsBuilder, StreamsConfig};
use streams_test::{TestInputTopic, TestOutputTopic, TopologyTestDriver};

type Out<'a> = TestOutputTopic<'a, i32, String>;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Kafka's `MockValueJoiner.TOSTRING_JOINER`: `left+right`, `null` for a
/// missing side.
fn show<T: std::fmt::Display>(v: Option<&T>) -> String {
    v.map_or_else(|| "null".to_owned(), ToString::to_string)
}

fn streams(builder: &StreamsBuilder) -> (KStream<i32, String>, KStream<i32, String>) {
    (
        builder.stream::<i32, String>("topic1"),
        builder.stream::<i32, String>("topic2"),
    )
}

fn driver(builder: &StreamsBuilder) -> TopologyTestDriver {
    TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver")
}

fn topics(
    driver: &TopologyTestDriver,
) -> (
    TestInputTopic<'_, i32, String>,
    TestInputTopic<'_, i32, String>,
    Out<'_>,
) {
    (
        driver.create_input_topic("topic1", I32Serde, StringSerde),
        driver.create_input_topic("topic2", I32Serde, StringSerde),
        driver.create_output_topic("out", I32Serde, StringSerde),
    )
}

#[track_caller]
fn expect(out: &Out<'_>, expected: &[(i32, &str, i64)]) {
    let actual: Vec<(i32, String, i64)> = out
        .read_records_to_list()
        .into_iter()
        .map(|r| {
            (
                r.key.expect("a key"),
                r.value.expect("a value"),
                r.timestamp.expect("a timestamp"),
            )
        })
        .collect();
    let expected: Vec<(i32, String, i64)> = expected
        .iter()
        .map(|&(k, v, t)| (k, v.to_owned(), t))
        .collect();
    assert_eq!(actual, expected);
}

/// The inner/outer join scenario both of Kafka's `testJoin` and
/// `testOuterJoin` run (all records at time 0, so nothing ever closes).
fn run_join_scenario(
    in1: &TestInputTopic<'_, i32, String>,
    in2: &TestInputTopic<'_, i32, String>,
    out: &Out<'_>,
) {
    let keys = [0, 1, 2, 3];
    for k in &keys[..2] {
        in1.pipe_key_value_at(*k, format!("A{k}"), 0);
    }
    expect(out, &[]);
    for k in &keys[..2] {
        in2.pipe_key_value_at(*k, format!("a{k}"), 0);
    }
    expect(out, &[(0, "A0+a0", 0), (1, "A1+a1", 0)]);
    for k in keys {
        in1.pipe_key_value_at(k, format!("B{k}"), 0);
    }
    expect(out, &[(0, "B0+a0", 0), (1, "B1+a1", 0)]);
    for k in keys {
        in2.pipe_key_value_at(k, format!("b{k}"), 0);
    }
    expect(
        out,
        &[
            (0, "A0+b0", 0),
            (0, "B0+b0", 0),
            (1, "A1+b1", 0),
            (1, "B1+b1", 0),
            (2, "B2+b2", 0),
            (3, "B3+b3", 0),
        ],
    );
    for k in keys {
        in1.pipe_key_value_at(k, format!("C{k}"), 0);
    }
    expect(
        out,
        &[
            (0, "C0+a0", 0),
            (0, "C0+b0", 0),
            (1, "C1+a1", 0),
            (1, "C1+b1", 0),
            (2, "C2+b2", 0),
            (3, "C3+b3", 0),
        ],
    );
    for k in &keys[..2] {
        in2.pipe_key_value_at(*k, format!("c{k}"), 0);
    }
    expect(
        out,
        &[
            (0, "A0+c0", 0),
            (0, "B0+c0", 0),
            (0, "C0+c0", 0),
            (1, "A1+c1", 0),
            (1, "B1+c1", 0),
            (1, "C1+c1", 0),
        ],
    );
}

#[test]
fn inner_join_matches_every_pair_within_the_window() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.join_stream_with(
        &s2,
        |a, b| format!("{a}+{b}"),
        JoinWindows::of_time_difference_with_no_grace(ms(100)).expect("windows"),
        StreamJoined::with(I32Serde, StringSerde, StringSerde),
    )
    .to("out");
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    run_join_scenario(&in1, &in2, &out);
}

#[test]
fn outer_join_matches_as_inner_while_windows_are_open() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.outer_join_stream(
        &s2,
        |a, b| format!("{}+{}", show(a), show(b)),
        JoinWindows::of_time_difference_and_grace(ms(100), Duration::from_secs(24 * 3600))
            .expect("windows"),
    )
    .to("out");
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    run_join_scenario(&in1, &in2, &out);
}

/// Kafka's `testLeftJoinedRecordsWithZeroAfterAreEmitted`.
#[test]
fn left_join_with_zero_after_emits_unmatched_records_once_their_window_closes() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.left_join_stream(
        &s2,
        |a, b| format!("{a}+{}", show(b)),
        JoinWindows::of_time_difference_with_no_grace(ms(100))
            .and_then(|w| w.after(Duration::ZERO))
            .expect("windows"),
    )
    .to("out");
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    let keys = [0, 1, 2, 3];
    for (i, k) in keys.iter().enumerate() {
        in1.pipe_key_value_at(*k, format!("A{k}"), 1000 + i as i64);
    }
    expect(
        &out,
        &[
            (0, "A0+null", 1000),
            (1, "A1+null", 1001),
            (2, "A2+null", 1002),
        ],
    );
    let rounds: [(&str, i64, &[(i32, &str, i64)]); 6] = [
        (
            "a",
            999,
            &[
                (0, "A0+a0", 1000),
                (1, "A1+a1", 1001),
                (2, "A2+a2", 1002),
                (3, "A3+a3", 1003),
            ],
        ),
        (
            "b",
            1000,
            &[
                (0, "A0+b0", 1000),
                (1, "A1+b1", 1001),
                (2, "A2+b2", 1002),
                (3, "A3+b3", 1003),
            ],
        ),
        (
            "c",
            1001,
            &[(1, "A1+c1", 1001), (2, "A2+c2", 1002), (3, "A3+c3", 1003)],
        ),
        ("d", 1002, &[(2, "A2+d2", 1002), (3, "A3+d3", 1003)]),
        ("e", 1003, &[(3, "A3+e3", 1003)]),
        ("f", 1100, &[]),
    ];
    for (prefix, ts, expected) in rounds {
        for k in keys {
            in2.pipe_key_value_at(k, format!("{prefix}{k}"), ts);
        }
        expect(&out, expected);
    }
}

/// Kafka's `testEmitAllNonJoinedResultsForAsymmetricWindow` (outer join,
/// before 5 ms, after 20 ms, no grace).
#[test]
fn outer_join_emits_unmatched_records_of_both_sides_for_an_asymmetric_window() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<i32, String>("topic1");
    let s2 = builder.stream::<i32, i64>("topic2");
    s1.outer_join_stream_with(
        &s2,
        |a, b| format!("{}+{}", show(a), show(b)),
        JoinWindows::of_time_difference_with_no_grace(ms(5))
            .and_then(|w| w.after(ms(20)))
            .expect("windows"),
        StreamJoined::with(I32Serde, StringSerde, I64Serde),
    )
    .to("out");
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let in1 = driver.create_input_topic("topic1", I32Serde, StringSerde);
    let in2 = driver.create_input_topic("topic2", I32Serde, I64Serde);
    let out = driver.create_output_topic("out", I32Serde, StringSerde);
    in1.pipe_key_value_at(0, "A0", 29);
    in1.pipe_key_value_at(1, "A1", 30);
    in2.pipe_key_value_at(2, 12_i64, 31);
    in2.pipe_key_value_at(3, 13_i64, 36);
    expect(&out, &[]);
    in2.pipe_key_value_at(4, 14_i64, 37);
    expect(&out, &[(2, "null+12", 31)]);
    in2.pipe_key_value_at(5, 15_i64, 50);
    expect(
        &out,
        &[(0, "A0+null", 29), (3, "null+13", 36), (4, "null+14", 37)],
    );
}

fn left_join_topology() -> StreamsBuilder {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.left_join_stream(
        &s2,
        |a, b| format!("{a}+{}", show(b)),
        JoinWindows::of_time_difference_with_no_grace(ms(10)).expect("windows"),
    )
    .to("out");
    builder
}

#[test]
fn node_and_store_names_are_kafkas() {
    let builder = left_join_topology();
    let topology = builder.build().expect("topology");
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-SOURCE-0000000001",
            "KSTREAM-WINDOWED-0000000002",
            "KSTREAM-WINDOWED-0000000003",
            "KSTREAM-JOINTHIS-0000000004",
            "KSTREAM-OUTEROTHER-0000000005",
            "KSTREAM-MERGE-0000000006",
            "KSTREAM-SINK-0000000007",
        ]
    );
    assert_eq!(
        topology.store_names(),
        [
            "KSTREAM-JOINTHIS-0000000004-store",
            "KSTREAM-OUTEROTHER-0000000005-store",
            "KSTREAM-OUTERSHARED-0000000004-store",
        ]
    );
}

#[test]
fn named_join_names_its_nodes_and_stores() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.outer_join_stream_with(
        &s2,
        |a, b| format!("{}+{}", show(a), show(b)),
        JoinWindows::of_time_difference_with_no_grace(ms(10)).expect("windows"),
        StreamJoined::as_("st").with_name("j"),
    )
    .to("out");
    let topology = builder.build().expect("topology");
    assert_eq!(
        topology.node_names()[2..7],
        [
            "j-this-windowed",
            "j-other-windowed",
            "j-outer-this-join",
            "j-outer-other-join",
            "j-merge",
        ]
    );
    assert_eq!(
        topology.store_names(),
        [
            "st-outer-this-join-store",
            "st-outer-other-join-store",
            "st-outer-shared-join-store",
        ]
    );
}

#[test]
fn a_left_record_with_no_key_is_emitted_at_once_and_one_with_no_value_is_dropped() {
    let builder = left_join_topology();
    let driver = driver(&builder);
    let (in1, _in2, out) = topics(&driver);
    in1.pipe_record(streams_test::TestRecord::new(None, Some("A".to_owned())).at(5));
    in1.pipe_record(streams_test::TestRecord::new(Some(1), None).at(6));
    let records = out.read_records_to_list();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].key, records[0].value.as_deref()),
        (None, Some("A+null"))
    );
    assert_eq!(driver.metrics().dropped_records, 1);
}

#[test]
fn a_record_for_an_expired_segment_is_counted_as_dropped() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    s1.join_stream(
        &s2,
        |a, b| format!("{a}+{b}"),
        JoinWindows::of_time_difference_with_no_grace(ms(10)).expect("windows"),
    )
    .to("out");
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    in1.pipe_key_value_at(1, "A", 200_000);
    in2.pipe_key_value_at(1, "b", 199_995);
    expect(&out, &[(1, "A+b", 200_000)]);
    // The right store keeps before + after + grace = 20 ms: a record at
    // 199 970 is too old to join, but Kafka's default store (segments of
    // max(retention / 2, 60 s)) only drops and counts a put once its whole
    // segment has expired, as for one at 100 000.
    in1.pipe_key_value_at(1, "A2", 199_975);
    in2.pipe_key_value_at(1, "old", 199_970);
    expect(&out, &[]);
    assert_eq!(driver.metrics().dropped_records, 0);
    in2.pipe_key_value_at(1, "late", 100_000);
    expect(&out, &[]);
    assert_eq!(driver.metrics().dropped_records, 1);
}

#[test]
fn the_join_stores_and_their_changelogs_hold_every_record() {
    let builder = left_join_topology();
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    in1.pipe_key_value_at(1, "A", 100);
    in2.pipe_key_value_at(2, "b", 100);
    in1.pipe_key_value_at(1, "A", 105); // a duplicate is kept apart
    expect(&out, &[]);
    let this = driver
        .window_store::<i32, String>("KSTREAM-JOINTHIS-0000000004-store")
        .expect("this side's store");
    let kept: Vec<(i64, String)> = this.fetch(&1, 0..=200);
    assert_eq!(kept, [(100, "A".to_owned()), (105, "A".to_owned())]);
    drop(this);
    let changelog = driver.create_output_topic(
        "test-app-KSTREAM-JOINTHIS-0000000004-store-changelog",
        streams_core::serde::BytesSerde,
        StringSerde,
    );
    let keys: Vec<Vec<u8>> = changelog
        .read_records_to_list()
        .into_iter()
        .map(|r| r.key.expect("key").to_vec())
        .collect();
    // key (4 bytes), window start (8 bytes), sequence number (4 bytes).
    let mut first = 1_i32.to_be_bytes().to_vec();
    first.extend_from_slice(&100_i64.to_be_bytes());
    first.extend_from_slice(&1_u32.to_be_bytes());
    let mut second = 1_i32.to_be_bytes().to_vec();
    second.extend_from_slice(&105_i64.to_be_bytes());
    second.extend_from_slice(&2_u32.to_be_bytes());
    assert_eq!(keys, [first, second]);
    // The outer store's changelog: A@100 waits, then A@105 waits; the
    // right record (key 2) never waits in a left join.
    let shared = driver.create_output_topic(
        "test-app-KSTREAM-OUTERSHARED-0000000004-store-changelog",
        streams_core::serde::BytesSerde,
        streams_core::serde::BytesSerde,
    );
    let logged: Vec<(Vec<u8>, Option<Vec<u8>>)> = shared
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key.expect("key").to_vec(), r.value.map(|v| v.to_vec())))
        .collect();
    let entry = |ts: i64| {
        let mut k = ts.to_be_bytes().to_vec();
        k.push(1); // the left side
        k.extend_from_slice(&1_i32.to_be_bytes());
        k
    };
    // Kafka's list serialization: strategy 1, one entry of 2 bytes: side 1, "A".
    let list = vec![1, 0, 0, 0, 1, 0, 0, 0, 2, 1, b'A'];
    assert_eq!(
        logged,
        [(entry(100), Some(list.clone())), (entry(105), Some(list))]
    );
    // Stream time 115 closes A@100's window (100 + 10 + 0 < 115) but not
    // A@105's: one null-padded result and one tombstone in the changelog.
    in2.pipe_key_value_at(3, "z", 115);
    expect(&out, &[(1, "A+null", 100)]);
    let logged: Vec<(Vec<u8>, Option<Vec<u8>>)> = shared
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key.expect("key").to_vec(), r.value.map(|v| v.to_vec())))
        .collect();
    assert_eq!(logged, [(entry(100), None)]);
}

#[test]
fn an_emit_interval_throttles_null_padded_results_by_wall_clock_time() {
    let builder = left_join_topology();
    let config =
        StreamsConfig::new("test-app").with_property(OUTER_JOIN_EMIT_INTERVAL_CONFIG, "1000");
    let driver = TopologyTestDriver::with_config(builder.build().expect("topology"), config)
        .expect("driver");
    let in1 = driver.create_input_topic("topic1", I32Serde, StringSerde);
    let out: Out<'_> = driver.create_output_topic("out", I32Serde, StringSerde);
    in1.pipe_key_value_at(1, "A", 0);
    // A itself took the first look, at wall-clock 0, when nothing had
    // closed (Kafka's tracker starts with no minimum and looks at once).
    in1.pipe_key_value_at(2, "B", 20);
    in1.pipe_key_value_at(3, "C", 40);
    // A's and B's windows have closed, but the next look is 1000 ms of
    // wall-clock time away.
    expect(&out, &[]);
    driver.advance_wall_clock_time(Duration::from_millis(1000));
    in1.pipe_key_value_at(4, "D", 60);
    expect(
        &out,
        &[(1, "A+null", 0), (2, "B+null", 20), (3, "C+null", 40)],
    );
    in1.pipe_key_value_at(5, "E", 80);
    expect(&out, &[]);
}

#[test]
fn re_keyed_streams_are_repartitioned_first() {
    let builder = StreamsBuilder::new();
    let (s1, s2) = streams(&builder);
    let s1 = s1.select_key(|_, v: &String| v.len() as i32);
    s1.join_stream_with(
        &s2,
        |a, b| format!("{a}+{b}"),
        JoinWindows::of_time_difference_with_no_grace(ms(10)).expect("windows"),
        StreamJoined::default().with_name("j"),
    )
    .to("out");
    let topology = builder.build().expect("topology");
    assert!(
        topology.node_names().contains(&"j-left-repartition-source"),
        "{:?}",
        topology.node_names()
    );
    let driver = driver(&builder);
    let (in1, in2, out) = topics(&driver);
    in2.pipe_key_value_at(3, "x", 0);
    in1.pipe_key_value_at(9, "abc", 1);
    expect(&out, &[(3, "abc+x", 1)]);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// One input record: which side, key, timestamp step after the last.
    fn records() -> impl Strategy<Value = Vec<(bool, i32, i64)>> {
        proptest::collection::vec((any::<bool>(), 0..3_i32, 0..8_i64), 0..40)
    }

    proptest! {
        /// With records in time order and some grace, a left join emits
        /// exactly every pair within the window (Kafka's rule: right time
        /// in [left - before, left + after]) and, once all windows have
        /// closed, every left record that had no pair, once, padded with
        /// `None`. (Without grace the boundary differs, see
        /// `with_no_grace_and_no_time_difference_records_at_the_same_time_do_not_join`.)
        #[test]
        fn left_join_equals_the_nested_loop_join(
            input in records(),
            before in 0..6_u64,
            after in 0..6_u64,
            grace in 1..4_u64,
        ) {
            let builder = StreamsBuilder::new();
            let (s1, s2) = streams(&builder);
            let windows = JoinWindows::of_time_difference_and_grace(ms(before), ms(grace))
                .and_then(|w| w.after(ms(after)))
                .expect("windows");
            s1.left_join_stream(&s2, |a, b| format!("{a}+{}", show(b)), windows)
                .to("out");
            let driver = driver(&builder);
            let (in1, in2, out) = topics(&driver);
            let (mut lefts, mut rights) = (Vec::new(), Vec::new());
            let mut ts = 0;
            for (i, (is_left, key, step)) in input.iter().enumerate() {
                ts += step;
                if *is_left {
                    in1.pipe_key_value_at(*key, format!("L{i}"), ts);
                    lefts.push((*key, format!("L{i}"), ts));
                } else {
                    in2.pipe_key_value_at(*key, format!("R{i}"), ts);
                    rights.push((*key, format!("R{i}"), ts));
                }
            }
            // A record far ahead closes every window.
            in2.pipe_key_value_at(99, "flush", ts + 1_000);
            let mut actual: Vec<(i32, String, i64)> = out
                .read_records_to_list()
                .into_iter()
                .map(|r| (r.key.expect("key"), r.value.expect("value"), r.timestamp.expect("ts")))
                .collect();
            let (before, after) = (before as i64, after as i64);
            let mut expected = Vec::new();
            for (lk, lv, lt) in &lefts {
                let mut matched = false;
                for (rk, rv, rt) in &rights {
                    if lk == rk && *rt >= lt - before && *rt <= lt + after {
                        expected.push((*lk, format!("{lv}+{rv}"), *lt.max(rt)));
                        matched = true;
                    }
                }
                if !matched {
                    expected.push((*lk, format!("{lv}+null"), *lt));
                }
            }
            actual.sort();
            expected.sort();
            prop_assert_eq!(actual, expected);
        }
    }
}

/// Kafka 4.4.0's `describe()` of this left join, as its own driver printed
/// it (the processor's stores in Kafka's order).
#[test]
fn describe_matches_kafka() {
    let builder = left_join_topology();
    let expected = "Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [topic1])
      --> KSTREAM-WINDOWED-0000000002
    Source: KSTREAM-SOURCE-0000000001 (topics: [topic2])
      --> KSTREAM-WINDOWED-0000000003
    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])
      --> KSTREAM-JOINTHIS-0000000004
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-OUTEROTHER-0000000005-store])
      --> KSTREAM-OUTEROTHER-0000000005
      <-- KSTREAM-SOURCE-0000000001
    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-OUTEROTHER-0000000005-store, KSTREAM-OUTERSHARED-0000000004-store])
      --> KSTREAM-MERGE-0000000006
      <-- KSTREAM-WINDOWED-0000000002
    Processor: KSTREAM-OUTEROTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store, KSTREAM-OUTERSHARED-0000000004-store])
      --> KSTREAM-MERGE-0000000006
      <-- KSTREAM-WINDOWED-0000000003
    Processor: KSTREAM-MERGE-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000007
      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-OUTEROTHER-0000000005
    Sink: KSTREAM-SINK-0000000007 (topic: out)
      <-- KSTREAM-MERGE-0000000006

";
    assert_eq!(
        builder.build().expect("topology").describe().to_string(),
        expected
    );
}

/// With no grace, a record exactly `before` earlier than the other side's
/// newest one is already outside the store's retention when that side
/// looks (Kafka's fetch starts at `stream time - retention + 1`), so it
/// does not join: Kafka 4.4.0 gives `L0+null` here, and `L0+R1` with 1 ms
/// of grace.
#[test]
fn with_no_grace_and_no_time_difference_records_at_the_same_time_do_not_join() {
    for (grace, expected) in [(0, "L0+null"), (1, "L0+R1")] {
        let builder = StreamsBuilder::new();
        let (s1, s2) = streams(&builder);
        s1.left_join_stream(
            &s2,
            |a, b| format!("{a}+{}", show(b)),
            JoinWindows::of_time_difference_and_grace(Duration::ZERO, ms(grace)).expect("windows"),
        )
        .to("out");
        let driver = driver(&builder);
        let (in1, in2, out) = topics(&driver);
        in1.pipe_key_value_at(0, "L0", 0);
        in2.pipe_key_value_at(0, "R1", 0);
        in2.pipe_key_value_at(99, "flush", 1000);
        expect(&out, &[(0, expected, 0)]);
        assert_eq!(driver.metrics().dropped_records, 0);
    }
}
