//! The DSL on versioned tables (KIP-914, KIP-923), ported from Kafka's
//! tests with their exact expected values: `KStreamKTableJoinTest`'s
//! grace-period cases, `StreamTableJoinIntegrationTest` and
//! `StreamTableJoinWithGraceIntegrationTest`'s versioned joins (cache on
//! and off), `KTableFilterTest`'s versioned cases; and the refusals Kafka
//! makes (a grace period on a table that is not versioned, a grace longer
//! than the history, `suppress` and global tables on versioned stores).
//!
//! Kafka throws some of these at `join(..)`; here the builder keeps the
//! error and `build()` returns it, as for every DSL error.

use std::error::Error;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::dsl::{BufferConfig, Joined, Materialized, Suppressed};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::state::Stores;
use streams_core::{Change, Consumed, Record, StreamsBuilder, StreamsConfig, StreamsError};
use streams_test::{TestRecord, TopologyTestDriver};

type TestResult = Result<(), Box<dyn Error>>;
type S = String;

fn versioned<K: 'static, V: 'static>(name: &str, history: Duration) -> Materialized<K, V> {
    Materialized::as_(Stores::persistent_versioned_key_value_store(name, history).expect("valid"))
}

fn minutes(n: u64) -> Duration {
    Duration::from_secs(60 * n)
}

// --- KStreamKTableJoinTest: the grace period ---

/// The refusals of `KStreamKTableJoinTest`: Kafka's messages are in ours.
#[test]
fn should_fail_if_table_is_not_versioned() {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream::<S, S>("topic");
    let table_b = builder.table::<S, S>("topic2");
    stream_a
        .join_with(
            &table_b,
            |v1, v2| format!("{v1}{v2}"),
            Joined::as_("first-join").with_grace_period(Duration::from_millis(6)),
        )
        .to("out-one");
    let err = builder.build().expect_err("must fail");
    assert!(
        matches!(&err, StreamsError::JoinGraceOnUnversionedTable { node } if node == "first-join")
    );
    assert!(
        err.to_string()
            .contains("KTable must be versioned to use a grace period in a stream table join"),
        "{err}"
    );
}

#[test]
fn should_fail_if_table_is_not_versioned_but_materialization_is_inherited() {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream::<S, S>("topic");
    let source = builder.table_with::<S, S>("topic2", Materialized::as_("tableB"));
    // the filter operation forces the table materialization to be inherited
    let table_b = source.filter(|_, _| true);
    stream_a
        .join_with(
            &table_b,
            |v1, v2| format!("{v1}{v2}"),
            Joined::as_("first-join").with_grace_period(Duration::from_millis(6)),
        )
        .to("out-one");
    let err = builder.build().expect_err("must fail");
    assert!(
        matches!(err, StreamsError::JoinGraceOnUnversionedTable { .. }),
        "{err}"
    );
}

#[test]
fn should_not_fail_if_table_is_versioned_but_materialization_is_inherited() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream::<S, S>("topic");
    let source = builder.table_with::<S, S>("topic2", versioned("tableB", minutes(5)));
    let table_b = source.filter(|_, _| true);
    assert!(table_b.is_versioned());
    stream_a
        .join_with(
            &table_b,
            |v1, v2| format!("{v1}{v2}"),
            Joined::as_("first-join").with_grace_period(Duration::from_millis(6)),
        )
        .to("out-one");
    // should not throw an error
    builder.build()?;
    Ok(())
}

#[test]
fn should_fail_if_grace_period_is_longer_than_history_retention() {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream::<S, S>("topic");
    let table_b = builder.table_with::<S, S>("topic2", versioned("tableB", minutes(5)));
    stream_a
        .join_with(
            &table_b,
            |v1, v2| format!("{v1}{v2}"),
            Joined::as_("first-join").with_grace_period(minutes(6)),
        )
        .to("out-one");
    let err = builder.build().expect_err("must fail");
    assert!(
        matches!(
            &err,
            StreamsError::JoinGraceExceedsHistoryRetention { store, grace_ms: 360_000, history_retention_ms: 300_000, .. }
                if store == "tableB"
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("History retention must be at least grace period"),
        "{err}"
    );
}

#[test]
fn should_fail_if_grace_period_is_longer_than_history_retention_and_inherited_store() {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream::<S, S>("topic");
    let source = builder.table_with::<S, S>("topic2", versioned("V-grace", minutes(0)));
    let table_b = source.filter(|_, _| true);
    stream_a
        .join_with(
            &table_b,
            |v1, v2| format!("{v1}{v2}"),
            Joined::as_("first-join").with_grace_period(Duration::from_millis(6)),
        )
        .to("out-one");
    let err = builder.build().expect_err("must fail");
    assert!(
        matches!(err, StreamsError::JoinGraceExceedsHistoryRetention { .. }),
        "{err}"
    );
}

/// `KStreamKTableJoinTest.makeJoin`: Integer keys, a versioned table of
/// five minutes' history, `TOSTRING_JOINER` ("v1+v2"), grace `grace`.
fn make_join(grace: Duration) -> TopologyTestDriver {
    let builder = StreamsBuilder::new();
    let consumed = || Consumed::with(I32Serde, StringSerde);
    let stream = builder.stream_with::<i32, S>("streamTopic", consumed());
    let table = builder.table_consumed("tableTopic2", consumed(), versioned("V-grace", minutes(5)));
    stream
        .join_with(
            &table,
            |v1, v2| format!("{v1}+{v2}"),
            Joined::with(I32Serde, StringSerde)
                .with_name("Grace")
                .with_grace_period(grace),
        )
        .to("out");
    let config = StreamsConfig::default()
        .with_default_key_serde(I32Serde)
        .with_default_value_serde(StringSerde);
    TopologyTestDriver::with_config(builder.build().expect("topology"), config).expect("driver")
}

struct JoinFixture {
    driver: TopologyTestDriver,
}

impl JoinFixture {
    fn push_to_stream(&self, count: i32, prefix: &str) {
        let topic = self
            .driver
            .create_input_topic("streamTopic", I32Serde, StringSerde);
        for i in 0..count {
            topic.pipe_key_value_at(i, format!("{prefix}{i}"), i64::from(i));
        }
    }

    fn push_to_table_non_random(&self, count: i32, prefix: &str) {
        let topic = self
            .driver
            .create_input_topic("tableTopic2", I32Serde, StringSerde);
        for i in 0..count {
            topic.pipe_key_value_at(i, format!("{prefix}{i}"), 0);
        }
    }

    fn results(&self) -> Vec<(i32, S, i64)> {
        self.driver
            .create_output_topic("out", I32Serde, StringSerde)
            .read_records_to_list()
            .into_iter()
            .map(|r| {
                (
                    r.key.unwrap_or(-1),
                    r.value.unwrap_or_default(),
                    r.timestamp.unwrap_or(-1),
                )
            })
            .collect()
    }
}

fn kvt(k: i32, v: &str, ts: i64) -> (i32, S, i64) {
    (k, v.to_owned(), ts)
}

#[test]
fn should_delay_join_by_grace_period() {
    let f = JoinFixture {
        driver: make_join(Duration::from_millis(2)),
    };
    // push four items to the table. this should not produce any item.
    f.push_to_table_non_random(4, "Y");
    assert_eq!(f.results(), []);
    // push all four items to the primary stream. this should produce two items.
    f.push_to_stream(4, "X");
    assert_eq!(f.results(), [kvt(0, "X0+Y0", 0), kvt(1, "X1+Y1", 1)]);
    // push all items to the table. this should not produce any item
    f.push_to_table_non_random(4, "YY");
    assert_eq!(f.results(), []);
    // push all four items to the primary stream. this should produce two items.
    f.push_to_stream(4, "X");
    assert_eq!(f.results(), [kvt(0, "X0+YY0", 0), kvt(1, "X1+YY1", 1)]);
    f.driver
        .create_input_topic("streamTopic", I32Serde, StringSerde)
        .pipe_key_value_at(5, "test", 7);
    assert_eq!(
        f.results(),
        [
            kvt(2, "X2+YY2", 2),
            kvt(2, "X2+YY2", 2),
            kvt(3, "X3+YY3", 3),
            kvt(3, "X3+YY3", 3)
        ]
    );
    // push all items to the table. this should not produce any item
    f.push_to_table_non_random(4, "YYY");
    assert_eq!(f.results(), []);
}

#[test]
fn should_handle_late_joins_with_grace_period() {
    let f = JoinFixture {
        driver: make_join(Duration::from_millis(2)),
    };
    // push four items to the table. this should not produce any item.
    f.push_to_table_non_random(4, "Y");
    assert_eq!(f.results(), []);
    // push 4 records into the buffer and evict the first two
    f.push_to_stream(4, "X");
    assert_eq!(f.results(), [kvt(0, "X0+Y0", 0), kvt(1, "X1+Y1", 1)]);
    // should be processed immediately and not evict any other records
    f.push_to_stream(1, "X");
    assert_eq!(f.results(), [kvt(0, "X0+Y0", 0)]);
}

// --- StreamTableJoinIntegrationTest / StreamTableJoinWithGraceIntegrationTest ---

const LEFT: &str = "inputTopicLeft";
const RIGHT: &str = "inputTopicRight";

/// `AbstractJoinIntegrationTest.input`: every record has key 0.
const INPUT: [(&str, Option<&str>, i64); 23] = [
    (LEFT, None, 1),
    (RIGHT, None, 2),
    (LEFT, Some("A"), 3),
    (RIGHT, Some("a"), 4),
    (LEFT, Some("B"), 5),
    (RIGHT, Some("b"), 6),
    (LEFT, None, 7),
    (RIGHT, None, 8),
    (LEFT, Some("C"), 9),
    (RIGHT, Some("c"), 10),
    (RIGHT, None, 11),
    (LEFT, None, 12),
    (RIGHT, None, 13),
    (RIGHT, Some("d"), 7), // out-of-order data with null as latest
    (LEFT, Some("D"), 6),
    (LEFT, None, 2),
    (RIGHT, None, 3),
    (RIGHT, Some("e"), 14),
    (LEFT, Some("E"), 15),
    (LEFT, None, 10), // out-of-order data with non-null as latest
    (RIGHT, None, 9),
    (LEFT, Some("F"), 4),
    (RIGHT, Some("f"), 3),
];

/// `runTestWithDriver`: pipes [`INPUT`] and checks the output after each
/// record (`None`: nothing).
fn run_join_test(
    left: bool,
    joined: Joined<i64, S>,
    cache: bool,
    expected: [Option<(&str, i64)>; 23],
) -> TestResult {
    let builder = StreamsBuilder::new();
    let left_stream = builder.stream::<i64, S>(LEFT);
    let right_table = builder.table_with::<i64, S>(RIGHT, versioned("table-store", minutes(5)));
    if left {
        left_stream
            .left_join_with(
                &right_table,
                |l, r| format!("{l}-{}", r.map_or("null", String::as_str)),
                joined,
            )
            .to("outputTopic");
    } else {
        left_stream
            .join_with(&right_table, |l, r| format!("{l}-{r}"), joined)
            .to("outputTopic");
    }
    let mut config = StreamsConfig::default()
        .with_default_key_serde(I64Serde)
        .with_default_value_serde(StringSerde);
    if !cache {
        config = config.with_property("statestore.cache.max.bytes", "0");
    }
    let driver = TopologyTestDriver::with_config(builder.build()?, config)?;
    let output = driver.create_output_topic("outputTopic", I64Serde, StringSerde);
    for (i, ((topic, value, ts), expected)) in INPUT.iter().zip(expected).enumerate() {
        driver
            .create_input_topic(topic, I64Serde, StringSerde)
            .pipe_record(TestRecord::new(Some(0_i64), value.map(str::to_owned)).at(*ts));
        let expected: Vec<TestRecord<i64, S>> = expected
            .map(|(v, ts)| TestRecord::key_value(0_i64, v.to_owned()).at(ts))
            .into_iter()
            .collect();
        assert_eq!(output.read_records_to_list(), expected, "after input {i}");
    }
    Ok(())
}

#[test]
fn stream_table_inner_join_with_versioned_store() -> TestResult {
    for cache in [true, false] {
        let mut expected = [None; 23];
        expected[4] = Some(("B-a", 5));
        expected[14] = Some(("D-b", 6));
        expected[18] = Some(("E-e", 15));
        expected[21] = Some(("F-a", 4));
        run_join_test(false, Joined::default(), cache, expected)?;
    }
    Ok(())
}

#[test]
fn stream_table_left_join_with_versioned_store() -> TestResult {
    for cache in [true, false] {
        let mut expected = [None; 23];
        expected[2] = Some(("A-null", 3));
        expected[4] = Some(("B-a", 5));
        expected[8] = Some(("C-null", 9));
        expected[14] = Some(("D-b", 6));
        expected[18] = Some(("E-e", 15));
        expected[21] = Some(("F-a", 4));
        run_join_test(true, Joined::default(), cache, expected)?;
    }
    Ok(())
}

fn grace() -> Joined<i64, S> {
    Joined::with(I64Serde, StringSerde)
        .with_name("Grace")
        .with_grace_period(Duration::from_millis(2))
}

#[test]
fn stream_table_inner_join_with_grace_and_versioned_store() -> TestResult {
    for cache in [true, false] {
        let mut expected = [None; 23];
        expected[8] = Some(("B-a", 5));
        expected[14] = Some(("D-b", 6));
        expected[21] = Some(("F-a", 4));
        run_join_test(false, grace(), cache, expected)?;
    }
    Ok(())
}

#[test]
fn stream_table_left_join_with_grace_and_versioned_store() -> TestResult {
    for cache in [true, false] {
        let mut expected = [None; 23];
        expected[4] = Some(("A-null", 3));
        expected[8] = Some(("B-a", 5));
        expected[14] = Some(("D-b", 6));
        expected[18] = Some(("C-null", 9));
        expected[21] = Some(("F-a", 4));
        run_join_test(true, grace(), cache, expected)?;
    }
    Ok(())
}

// --- KTableFilterTest: versioned semantics ---

/// Records the changes it receives.
struct Capture(std::rc::Rc<std::cell::RefCell<Vec<(S, Option<S>, Option<S>, i64)>>>);

impl Processor<S, Change<S>, S, S> for Capture {
    fn process(
        &mut self,
        _: &mut ProcessorContext<'_, S, S>,
        r: Record<S, Change<S>>,
    ) -> streams_core::Result<()> {
        let change = r.value.unwrap_or(Change::new(None, None));
        self.0.borrow_mut().push((
            r.key.unwrap_or_default(),
            change.new,
            change.old,
            r.timestamp,
        ));
        Ok(())
    }
}

type Changes = Vec<(S, Option<S>, Option<S>, i64)>;

/// `doTestSkipNullOnMaterialization`: what the table and its filter
/// forward for three rejected rows.
fn skip_null_on_materialization(
    builder: &StreamsBuilder,
    table1: &str,
    table2: &str,
) -> Result<(Changes, Changes), Box<dyn Error>> {
    let mut topology = builder.build()?;
    let first = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let second = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (f, s) = (first.clone(), second.clone());
    topology.add_processor("proc1", move || Capture(f.clone()), &[table1])?;
    topology.add_processor("proc2", move || Capture(s.clone()), &[table2])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("topic1", StringSerde, StringSerde);
    input.pipe_key_value_at("A", "reject", 5);
    input.pipe_key_value_at("B", "reject", 10);
    input.pipe_key_value_at("C", "reject", 20);
    let result = (first.borrow().clone(), second.borrow().clone());
    Ok(result)
}

fn rejected(old_reject: bool) -> Changes {
    ["A", "B", "C"]
        .into_iter()
        .zip([5, 10, 20])
        .map(|(k, ts)| {
            (
                k.to_owned(),
                old_reject.then(|| "reject".to_owned()),
                None,
                ts,
            )
        })
        .collect()
}

#[test]
fn should_not_skip_null_if_versioned_upstream() -> TestResult {
    // stateful downstream operation enables sendOldValues, but duplicate
    // nulls will still be sent because the source table is versioned
    let builder = StreamsBuilder::new();
    let table1 = builder.table_consumed::<S, S>(
        "topic1",
        Consumed::with(StringSerde, StringSerde),
        versioned("versioned", minutes(5)),
    );
    let table2 = table1
        .clone()
        .filter(|_, v| v.eq_ignore_ascii_case("accept"));
    table2
        .clone()
        .group_by(|k, v| (k.clone(), v.clone()))
        .reduce(|a, b| format!("{a}{b}"), |a, b| a.replace(b.as_str(), ""));
    let (first, second) =
        skip_null_on_materialization(&builder, table1.node_name(), table2.node_name())?;
    assert_eq!(first, rejected(true));
    assert_eq!(second, rejected(false));
    Ok(())
}

#[test]
fn should_skip_null_if_versioned_downstream() -> TestResult {
    // materializing the result of the filter as a versioned store does not
    // prevent duplicate tombstones from being sent, as it's whether the
    // input table is versioned or not that determines whether the
    // optimization is enabled
    let builder = StreamsBuilder::new();
    let table1 = builder.table_consumed::<S, S>(
        "topic1",
        Consumed::with(StringSerde, StringSerde),
        Materialized::as_("store"),
    );
    let table2 = table1.clone().filter_with(
        |_, v| v.eq_ignore_ascii_case("accept"),
        versioned("versioned", minutes(5)),
    );
    table2
        .clone()
        .group_by(|k, v| (k.clone(), v.clone()))
        .reduce(|a, b| format!("{a}{b}"), |a, b| a.replace(b.as_str(), ""));
    let (first, second) =
        skip_null_on_materialization(&builder, table1.node_name(), table2.node_name())?;
    assert_eq!(first, rejected(true));
    assert_eq!(second, []);
    Ok(())
}

// --- what Kafka refuses ---

#[test]
fn suppress_of_a_versioned_table_is_refused_with_kafkas_message() {
    let builder = StreamsBuilder::new();
    builder
        .table_with::<S, S>("t", versioned("v", minutes(1)))
        .filter(|_, _| true)
        .suppress(Suppressed::until_time_limit(
            Duration::from_millis(5),
            BufferConfig::unbounded(),
        ))
        .to_stream()
        .to("out");
    let err = builder.build().expect_err("must fail");
    assert!(
        err.to_string()
            .contains("suppress() is only supported for non-versioned KTables (note that version semantics might be inherited from upstream)"),
        "{err}"
    );
}

#[test]
fn a_versioned_global_table_is_refused_with_kafkas_message() {
    let builder = StreamsBuilder::new();
    builder.global_table_with::<S, S>("g", versioned("v", minutes(1)));
    let err = builder.build().expect_err("must fail");
    assert_eq!(
        err.to_string(),
        "global table of `g`: GlobalTables cannot be versioned."
    );
}

#[test]
fn operators_whose_versioned_result_is_not_supported_here_say_so() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .group_by_key()
        .count_with(versioned("counts", minutes(1)));
    let err = builder.build().expect_err("must fail");
    assert!(
        matches!(err, StreamsError::VersionedNotSupported { .. }),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("aggregation store `counts`"),
        "{err}"
    );
}

#[test]
fn a_table_table_join_drops_and_counts_out_of_order_updates_of_a_versioned_table() -> TestResult {
    let builder = StreamsBuilder::new();
    let prices = builder.table_with::<S, S>("prices", versioned("prices", minutes(1)));
    let names = builder.table::<S, S>("names");
    prices
        .clone()
        .join(&names, |p, n| format!("{p}/{n}"))
        .to_stream()
        .to("joined");
    prices.to_stream().to("updates");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let p = driver.create_input_topic("prices", StringSerde, StringSerde);
    driver
        .create_input_topic("names", StringSerde, StringSerde)
        .pipe_key_value_at("k", "ann", 0);
    p.pipe_key_value_at("k", "b", 20);
    p.pipe_key_value_at("k", "a", 10); // out of order: history only
    let joined = driver.create_output_topic("joined", StringSerde, StringSerde);
    let updates = driver.create_output_topic("updates", StringSerde, StringSerde);
    assert_eq!(
        joined.read_records_to_list(),
        [TestRecord::key_value("k", "b/ann").at(20)]
    );
    // toStream() passes the out-of-order update on, as Kafka's does.
    assert_eq!(
        updates.read_records_to_list(),
        [
            TestRecord::key_value("k", "b").at(20),
            TestRecord::key_value("k", "a").at(10)
        ]
    );
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}
