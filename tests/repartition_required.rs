//! The "repartition required" mark of a stream, operator by operator, as
//! Kafka's `KStreamImpl` carries it: `map`, `flat_map`, `select_key`,
//! `process` and `group_by` set it; `filter`, `filter_not`, `peek`,
//! `map_values`, `flat_map_values`, `split` branches and global-table
//! joins keep it; `merge` is marked when either side is; `repartition`,
//! stream-table joins and stream-stream joins clear it.
//!
//! Each test re-keys the records of `in` (`(k1,ab) (k2,a) (k3,ba)
//! (k4,ac)`) by the first letter of the value, applies the operator, and
//! counts by key into the store `counts`: a marked stream goes through
//! `compat-counts-repartition` first. Kafka 4.4's driver gives the same
//! topics, node names and outputs for the chained shapes of the oracle's
//! `RepartitionScenarios` (`compat/golden/repartition_mark_*.json`).

use std::collections::BTreeSet;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::dsl::{JoinWindows, Materialized};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{
    Branched, KStream, Produced, Record, Repartitioned, Result, StreamsBuilder, StreamsConfig,
    Topology,
};
use streams_test::{KeyValue, TopologyTestDriver};

/// The oracle's application id: internal topics are `compat-...`.
const APP: &str = "compat";

/// The count's repartition topic.
const REPARTITION: &str = "compat-counts-repartition";

/// The count's changelog.
const CHANGELOG: &str = "compat-counts-changelog";

type S = String;

fn first_char(v: &str) -> S {
    v.chars().take(1).collect()
}

/// `in`, re-keyed by the first letter of the value (a `select_key`).
fn rekeyed(builder: &StreamsBuilder) -> KStream<S, S> {
    builder
        .stream::<S, S>("in")
        .select_key(|_, v| first_char(v))
}

/// Counts `stream` by key into the store `counts`, written to `out`.
fn count_by_key(stream: KStream<S, S>) {
    stream
        .group_by_key()
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
}

fn start(builder: &StreamsBuilder) -> (Topology, TopologyTestDriver) {
    let topology = builder.build().expect("valid topology");
    let driver = TopologyTestDriver::with_config(topology.clone(), StreamsConfig::new(APP))
        .expect("driver starts");
    (topology, driver)
}

/// Pipes `(k1,ab,0) (k2,a,1) (k3,ba,2) (k4,ac,3)` into `in`.
fn pipe(driver: &TopologyTestDriver) {
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "ab", 0);
    input.pipe_key_value_at("k2", "a", 1);
    input.pipe_key_value_at("k3", "ba", 2);
    input.pipe_key_value_at("k4", "ac", 3);
}

fn counts(driver: &TopologyTestDriver) -> Vec<KeyValue<S, i64>> {
    driver
        .create_output_topic("out", StringSerde, I64Serde)
        .read_key_values_to_list()
}

fn repartitioned(driver: &TopologyTestDriver, topic: &str) -> Vec<KeyValue<S, S>> {
    driver
        .create_output_topic(topic, StringSerde, StringSerde)
        .read_key_values_to_list()
}

fn topics(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn kv(k: &str, v: i64) -> KeyValue<S, i64> {
    KeyValue::pair(k, v)
}

fn kvs(k: &str, v: &str) -> KeyValue<S, S> {
    KeyValue::pair(k, v)
}

/// `rekeyed(in)`, then `op`, then the count: checks that the count went
/// through the repartition topic, with `expected` counts and `passed`
/// records in the topic.
#[track_caller]
fn assert_marked(
    op: impl FnOnce(KStream<S, S>) -> KStream<S, S>,
    expected: &[KeyValue<S, i64>],
    passed: &[KeyValue<S, S>],
) {
    let builder = StreamsBuilder::new();
    count_by_key(op(rekeyed(&builder)));
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    pipe(&driver);
    assert_eq!(counts(&driver), expected);
    assert_eq!(repartitioned(&driver, REPARTITION), passed);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out", CHANGELOG, REPARTITION])
    );
}

/// The shape: `map(..).filter(..).group_by_key()` counts through
/// a repartition topic (Kafka's `filter` keeps `repartitionRequired`).
#[test]
fn filter_keeps_the_mark() {
    let builder = StreamsBuilder::new();
    let stream = builder
        .stream::<S, S>("in")
        .map(|_, v| (first_char(v), v.clone()))
        .filter(|_, v| v.len() > 1);
    count_by_key(stream);
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-MAP-0000000001
    Processor: KSTREAM-MAP-0000000001 (stores: [])
      --> KSTREAM-FILTER-0000000002
      <-- KSTREAM-SOURCE-0000000000
    Processor: KSTREAM-FILTER-0000000002 (stores: [])
      --> counts-repartition-filter
      <-- KSTREAM-MAP-0000000001
    Processor: counts-repartition-filter (stores: [])
      --> counts-repartition-sink
      <-- KSTREAM-FILTER-0000000002
    Sink: counts-repartition-sink (topic: counts-repartition)
      <-- counts-repartition-filter

  Sub-topology: 1
    Source: counts-repartition-source (topics: [counts-repartition])
      --> KSTREAM-AGGREGATE-0000000003
    Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts])
      --> KTABLE-TOSTREAM-0000000007
      <-- counts-repartition-source
    Processor: KTABLE-TOSTREAM-0000000007 (stores: [])
      --> KSTREAM-SINK-0000000008
      <-- KSTREAM-AGGREGATE-0000000003
    Sink: KSTREAM-SINK-0000000008 (topic: out)
      <-- KTABLE-TOSTREAM-0000000007

"
    );
    pipe(&driver);
    assert_eq!(counts(&driver), [kv("a", 1), kv("b", 1), kv("a", 2)]);
    assert_eq!(
        repartitioned(&driver, REPARTITION),
        [kvs("a", "ab"), kvs("b", "ba"), kvs("a", "ac")]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out", CHANGELOG, REPARTITION])
    );
}

#[test]
fn filter_not_keeps_the_mark() {
    assert_marked(
        |s| s.filter_not(|_, v| v.len() > 1),
        &[kv("a", 1)],
        &[kvs("a", "a")],
    );
}

#[test]
fn peek_keeps_the_mark() {
    assert_marked(
        |s| s.peek(|_, _| ()),
        &[kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)],
        &[
            kvs("a", "ab"),
            kvs("a", "a"),
            kvs("b", "ba"),
            kvs("a", "ac"),
        ],
    );
}

#[test]
fn map_values_keeps_the_mark() {
    assert_marked(
        |s| s.map_values(|v| v.to_uppercase()).filter(|_, v| v != "A"),
        &[kv("a", 1), kv("b", 1), kv("a", 2)],
        &[kvs("a", "AB"), kvs("b", "BA"), kvs("a", "AC")],
    );
    assert_marked(
        |s| s.map_values_with_key(|k, v| format!("{}{v}", k.map_or("?", String::as_str))),
        &[kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)],
        &[
            kvs("a", "aab"),
            kvs("a", "aa"),
            kvs("b", "bba"),
            kvs("a", "aac"),
        ],
    );
}

#[test]
fn flat_map_values_keeps_the_mark() {
    assert_marked(
        |s| s.flat_map_values(|v| v.chars().skip(1).map(String::from).collect::<Vec<_>>()),
        &[kv("a", 1), kv("b", 1), kv("a", 2)],
        &[kvs("a", "b"), kvs("b", "a"), kvs("a", "c")],
    );
    assert_marked(
        |s| s.flat_map_values_with_key(|_, v| [v.clone()]),
        &[kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)],
        &[
            kvs("a", "ab"),
            kvs("a", "a"),
            kvs("b", "ba"),
            kvs("a", "ac"),
        ],
    );
}

#[test]
fn flat_map_and_map_set_the_mark() {
    let builder = StreamsBuilder::new();
    let stream = builder
        .stream::<S, S>("in")
        .flat_map(|_, v| {
            v.chars()
                .map(|c| (c.to_string(), v.clone()))
                .collect::<Vec<_>>()
        })
        .filter(|k, _| k.is_some_and(|k| k != "b"));
    count_by_key(stream);
    let (_, driver) = start(&builder);
    pipe(&driver);
    assert_eq!(
        counts(&driver),
        [kv("a", 1), kv("a", 2), kv("a", 3), kv("a", 4), kv("c", 1)]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out", CHANGELOG, REPARTITION])
    );
}

/// Re-keys each record by its value's last letter.
struct LastLetterKey;

impl Processor<S, S> for LastLetterKey {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let key = r
            .value
            .as_ref()
            .and_then(|v| v.chars().last())
            .map(String::from);
        ctx.forward(r.with_key(key))
    }
}

/// `process` may change the key, so Kafka marks its result.
#[test]
fn process_sets_the_mark() {
    let builder = StreamsBuilder::new();
    let stream = builder
        .stream::<S, S>("in")
        .process::<S, S, _>(|| LastLetterKey)
        .filter(|_, _| true);
    count_by_key(stream);
    let (_, driver) = start(&builder);
    pipe(&driver);
    assert_eq!(
        counts(&driver),
        [kv("b", 1), kv("a", 1), kv("a", 2), kv("c", 1)]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out", CHANGELOG, REPARTITION])
    );
}

/// A plain stream, or one through a repartition, is not marked: no
/// repartition topic before the count.
#[test]
fn unmarked_streams_count_in_place() {
    let builder = StreamsBuilder::new();
    count_by_key(
        builder
            .stream::<S, S>("in")
            .filter(|_, _| true)
            .peek(|_, _| ()),
    );
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 1);
    pipe(&driver);
    assert_eq!(
        counts(&driver),
        [kv("k1", 1), kv("k2", 1), kv("k3", 1), kv("k4", 1)]
    );
    assert_eq!(driver.produced_topic_names(), topics(&["out", CHANGELOG]));
}

#[test]
fn repartition_clears_the_mark() {
    let builder = StreamsBuilder::new();
    let stream = rekeyed(&builder)
        .repartition_with(Repartitioned::as_("rekeyed"))
        .filter(|_, v| v.len() > 1);
    count_by_key(stream);
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    pipe(&driver);
    assert_eq!(counts(&driver), [kv("a", 1), kv("b", 1), kv("a", 2)]);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out", CHANGELOG, "compat-rekeyed-repartition"])
    );
}

/// Kafka: `repartitionRequired = this.repartitionRequired ||
/// other.repartitionRequired`.
#[test]
fn merge_is_marked_when_either_side_is() {
    for (self_marked, other_marked) in [(true, false), (false, true), (true, true), (false, false)]
    {
        let builder = StreamsBuilder::new();
        let side = |topic: &str, marked: bool| {
            let s = builder.stream::<S, S>(topic);
            if marked {
                s.select_key(|_, v| first_char(v))
            } else {
                s
            }
        };
        let (a, b) = (side("in", self_marked), side("other", other_marked));
        count_by_key(a.merge(&b).filter(|_, _| true));
        let (topology, driver) = start(&builder);
        let marked = self_marked || other_marked;
        let expected_subtopologies = if marked { 2 } else { 1 };
        assert_eq!(
            topology.describe().subtopologies().len(),
            expected_subtopologies,
            "merge of marked={self_marked} with marked={other_marked}"
        );
        pipe(&driver);
        let expected = if self_marked {
            vec![kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)]
        } else {
            vec![kv("k1", 1), kv("k2", 1), kv("k3", 1), kv("k4", 1)]
        };
        assert_eq!(counts(&driver), expected);
        let mut produced = vec!["out", CHANGELOG];
        if marked {
            produced.push(REPARTITION);
        }
        assert_eq!(driver.produced_topic_names(), topics(&produced));
    }
}

/// Every branch of a split keeps the mark, including one changed by a
/// `Branched::with_function` chain of value operators.
#[test]
fn split_branches_keep_the_mark() {
    let builder = StreamsBuilder::new();
    let mut branches = rekeyed(&builder)
        .named("split-")
        .split()
        .branch(
            |_, v| v.len() > 1,
            Branched::with_function(|s: KStream<S, S>| Some(s.map_values(|v| v.to_uppercase())))
                .with_name("long"),
        )
        .default_branch("short");
    let long = branches.remove("split-long").expect("branch split-long");
    let short = branches.remove("split-short").expect("branch split-short");
    count_by_key(long.merge(&short));
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    pipe(&driver);
    assert_eq!(
        counts(&driver),
        [kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)]
    );
    assert_eq!(
        repartitioned(&driver, REPARTITION),
        [
            kvs("a", "AB"),
            kvs("a", "a"),
            kvs("b", "BA"),
            kvs("a", "AC")
        ]
    );
}

/// The join: `map(..).filter(..).join(table)` reads the re-keyed
/// records from a repartition topic named after the filter; the join's
/// result is partitioned like the table, so the count after it needs no
/// repartition topic of its own.
#[test]
fn filter_before_a_table_join_keeps_the_mark_and_the_join_clears_it() {
    let builder = StreamsBuilder::new();
    let names = builder.table::<S, S>("names");
    let joined = builder
        .stream::<S, S>("in")
        .map(|_, v| (first_char(v), v.clone()))
        .filter(|_, v| v.len() > 1)
        .join(&names, |v, n| format!("{v}/{n}"));
    count_by_key(joined);
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    let names_in = driver.create_input_topic("names", StringSerde, StringSerde);
    names_in.pipe_key_value_at("a", "ann", 0);
    pipe(&driver);
    assert_eq!(counts(&driver), [kv("a", 1), kv("a", 2)]);
    let repartition = "compat-KSTREAM-FILTER-0000000005-repartition";
    assert_eq!(
        repartitioned(&driver, repartition),
        [kvs("a", "ab"), kvs("b", "ba"), kvs("a", "ac")]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&[
            "out",
            CHANGELOG,
            "compat-names-STATE-STORE-0000000000-changelog",
            repartition
        ])
    );
}

/// A left join with a table clears the mark too.
#[test]
fn table_left_join_clears_the_mark() {
    let builder = StreamsBuilder::new();
    let names = builder.table::<S, S>("names");
    let joined = rekeyed(&builder).peek(|_, _| ()).left_join(&names, |v, n| {
        format!("{v}/{}", n.map_or("null", String::as_str))
    });
    count_by_key(joined);
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    pipe(&driver);
    assert_eq!(
        counts(&driver),
        [kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&[
            "out",
            CHANGELOG,
            "compat-KSTREAM-PEEK-0000000005-repartition"
        ])
    );
}

/// A global-table join looks up the key it computes, so it needs no
/// repartition and keeps the stream's key and mark.
#[test]
fn global_table_joins_keep_the_mark() {
    for left in [false, true] {
        let builder = StreamsBuilder::new();
        let colors = builder.global_table::<S, S>("colors");
        let s = rekeyed(&builder);
        let joined = if left {
            s.left_join_global(&colors, |_, v| v.clone(), |v, _| v.clone())
        } else {
            s.join_global(&colors, |_, v| v.clone(), |v, c| format!("{v}/{c}"))
        };
        count_by_key(joined);
        let (_, driver) = start(&builder);
        let colors_in = driver.create_input_topic("colors", StringSerde, StringSerde);
        colors_in.pipe_key_value_at("ab", "red", 0);
        colors_in.pipe_key_value_at("ba", "blue", 0);
        pipe(&driver);
        let expected = if left {
            vec![kv("a", 1), kv("a", 2), kv("b", 1), kv("a", 3)]
        } else {
            vec![kv("a", 1), kv("b", 1)]
        };
        assert_eq!(counts(&driver), expected, "left: {left}");
        assert_eq!(
            driver.produced_topic_names(),
            topics(&["out", CHANGELOG, REPARTITION])
        );
    }
}

/// `map(..).filter(..)` before a stream-stream join: the marked side goes
/// through `<filter>-repartition`, the other side does not, and the
/// join's result is unmarked.
#[test]
fn filter_before_a_stream_stream_join_keeps_the_mark_and_the_join_clears_it() {
    let builder = StreamsBuilder::new();
    let left = builder
        .stream::<S, S>("in")
        .map(|_, v| (first_char(v), v.clone()))
        .filter(|_, v| v.len() > 1);
    let right = builder.stream::<S, S>("right");
    let windows = JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(10))
        .expect("valid windows");
    count_by_key(left.join_stream(&right, |l, r| format!("{l}+{r}"), windows));
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    let right_in = driver.create_input_topic("right", StringSerde, StringSerde);
    right_in.pipe_key_value_at("a", "r1", 0);
    pipe(&driver);
    assert_eq!(counts(&driver), [kv("a", 1), kv("a", 2)]);
    let repartition = "compat-KSTREAM-FILTER-0000000002-repartition";
    assert_eq!(
        driver.produced_topic_names(),
        topics(&[
            "out",
            CHANGELOG,
            "compat-KSTREAM-JOINOTHER-0000000010-store-changelog",
            "compat-KSTREAM-JOINTHIS-0000000009-store-changelog",
            repartition
        ])
    );
}

/// Windowed aggregations read the mark through `group_by_key` too.
#[test]
fn windowed_count_after_filter_repartitions() {
    let builder = StreamsBuilder::new();
    rekeyed(&builder)
        .filter(|_, v| v.len() > 1)
        .group_by_key()
        .windowed_by(
            streams_core::dsl::TimeWindows::of_size_with_no_grace(Duration::from_millis(10))
                .expect("valid windows"),
        )
        .count_with(Materialized::as_("counts"));
    let (topology, driver) = start(&builder);
    assert_eq!(topology.describe().subtopologies().len(), 2);
    pipe(&driver);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&[CHANGELOG, REPARTITION])
    );
}

// Null keys at repartition topics: Kafka drops a record without a key
// before a repartition topic unless a join that takes records without a
// key is downstream (`InternalStreamsBuilder.rewriteRepartitionNodes`);
// the oracle's `null_keys_at_repartition_topics` checks a count, a
// `repartition()` and a stream-table left join against Kafka 4.4.

/// `in` re-keyed by the value's first letter, with no key for a value
/// starting with `-`.
fn rekeyed_nullable(builder: &StreamsBuilder) -> KStream<S, S> {
    builder
        .stream::<S, S>("in")
        .select_key_nullable(|_, v| v.filter(|v| !v.starts_with('-')).map(|v| first_char(v)))
}

/// Pipes `(k1,ab,1) (k2,-x,2) (k3,bc,3)` into `in`.
fn pipe_a_null_key(driver: &TopologyTestDriver) {
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "ab", 1);
    input.pipe_key_value_at("k2", "-x", 2);
    input.pipe_key_value_at("k3", "bc", 3);
}

/// The keys written to `topic`, in order (`None` for no key).
fn keys_of(driver: &TopologyTestDriver, topic: &str) -> Vec<Option<S>> {
    driver
        .create_output_topic(topic, StringSerde, StringSerde)
        .read_records_to_list()
        .into_iter()
        .map(|r| r.key)
        .collect()
}

#[test]
fn an_outer_stream_stream_join_downstream_keeps_null_keys_but_an_inner_one_does_not() {
    for (outer, expected) in [
        (true, vec![Some(s("a")), None, Some(s("b"))]),
        (false, vec![Some(s("a")), Some(s("b"))]),
    ] {
        let builder = StreamsBuilder::new();
        let other = builder.stream::<S, S>("other");
        let windows = JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(10))
            .expect("a valid window");
        let joined = if outer {
            rekeyed_nullable(&builder).outer_join_stream(
                &other,
                |l, r| format!("{l:?}+{r:?}"),
                windows,
            )
        } else {
            rekeyed_nullable(&builder).join_stream(&other, |l, r| format!("{l}+{r}"), windows)
        };
        joined.to("out");
        let (_, driver) = start(&builder);
        pipe_a_null_key(&driver);
        let topic = "compat-KSTREAM-KEY-SELECT-0000000002-repartition";
        assert_eq!(keys_of(&driver, topic), expected, "outer join: {outer}");
    }
}

#[test]
fn a_left_global_table_join_downstream_of_a_repartition_keeps_null_keys() {
    for (left, expected) in [
        (true, vec![Some(s("a")), None, Some(s("b"))]),
        (false, vec![Some(s("a")), Some(s("b"))]),
    ] {
        let builder = StreamsBuilder::new();
        let names = builder.global_table::<S, S>("names");
        let moved = rekeyed_nullable(&builder).repartition_with(Repartitioned::as_("moved"));
        if left {
            moved
                .left_join_global(&names, |_, v| v.clone(), |v, n| format!("{v}/{n:?}"))
                .to("out");
        } else {
            moved
                .join_global(&names, |_, v| v.clone(), |v, n| format!("{v}/{n}"))
                .to("out");
        }
        let (_, driver) = start(&builder);
        pipe_a_null_key(&driver);
        assert_eq!(
            keys_of(&driver, "compat-moved-repartition"),
            expected,
            "left join: {left}"
        );
    }
}

#[test]
fn a_left_join_two_repartition_topics_downstream_keeps_null_keys_at_both() {
    // in -> select_key -> repartition("first") -> map_values ->
    // repartition("second") -> left join with a table: both filters see
    // the left join downstream, through the first topic.
    let builder = StreamsBuilder::new();
    let names = builder.table::<S, S>("names");
    rekeyed_nullable(&builder)
        .repartition_with(Repartitioned::as_("first"))
        .map_values(|v| v.to_uppercase())
        .repartition_with(Repartitioned::as_("second"))
        .left_join(&names, |v, n| format!("{v}/{n:?}"))
        .to("out");
    // A count beside it, whose own repartition topic drops the null key.
    count_by_key(rekeyed_nullable_second(&builder));
    let (_, driver) = start(&builder);
    pipe_a_null_key(&driver);
    let all = vec![Some(s("a")), None, Some(s("b"))];
    assert_eq!(keys_of(&driver, "compat-first-repartition"), all);
    assert_eq!(keys_of(&driver, "compat-second-repartition"), all);
    assert_eq!(
        driver
            .create_output_topic("out", StringSerde, StringSerde)
            .read_values_to_list(),
        [Some(s("AB/None")), Some(s("-X/None")), Some(s("BC/None"))]
    );
}

/// A second stream of `in2`, re-keyed as [`rekeyed_nullable`] does.
fn rekeyed_nullable_second(builder: &StreamsBuilder) -> KStream<S, S> {
    builder
        .stream::<S, S>("in2")
        .select_key_nullable(|_, v| v.filter(|v| !v.starts_with('-')).map(|v| first_char(v)))
}

fn s(v: &str) -> S {
    v.to_owned()
}
