//! Joins and global tables, ported from Kafka's `KStreamKTableJoinTest`,
//! `KStreamKTableLeftJoinTest`, `KTableKTableInnerJoinTest`,
//! `KTableKTableLeftJoinTest`, `KTableKTableOuterJoinTest`,
//! `KStreamGlobalKTableJoinTest` and `KStreamGlobalKTableLeftJoinTest`
//! with their exact expected outputs (Kafka's `MockValueJoiner`,
//! `v1 + "+" + v2` with `null` for a missing side), then global stores
//! through the Processor API and the driver, and property tests: a
//! `table()` is the latest value per key, and a store restored from its
//! changelog equals the original.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::error::Error;
use std::rc::Rc;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{BytesSerde, I32Serde, StringSerde};
use streams_core::state::{Stores, TimestampedKeyValueStore, ValueAndTimestamp};
use streams_core::{
    Change, Consumed, Joined, KStream, KTable, Materialized, RawRecord, Record, StreamsBuilder,
    StreamsConfig, StreamsError, Topology, TopologyError,
};
use streams_test::{KeyValue, TestInputTopic, TestOutputTopic, TestRecord, TopologyTestDriver};

type S = String;
type TestResult = Result<(), Box<dyn Error>>;

const KEYS: [i32; 4] = [0, 1, 2, 3];

/// Kafka's `MockValueJoiner.TOSTRING_JOINER`: `v1+v2`, `null` for a
/// missing side.
fn tostring(a: Option<&S>, b: Option<&S>) -> S {
    format!(
        "{}+{}",
        a.map_or("null", S::as_str),
        b.map_or("null", S::as_str)
    )
}

/// A record as Kafka's tests compare it: key, value, timestamp.
type Kvt = (Option<i32>, Option<S>, i64);

fn kvt(key: i32, value: &str, ts: i64) -> Kvt {
    (Some(key), Some(value.to_owned()), ts)
}

fn tomb(key: i32, ts: i64) -> Kvt {
    (Some(key), None, ts)
}

fn drain(out: &TestOutputTopic<'_, i32, S>) -> Vec<Kvt> {
    out.read_records_to_list()
        .into_iter()
        .map(|r| (r.key, r.value, r.timestamp.unwrap_or(-1)))
        .collect()
}

// ---------------------------------------------------------------------
// Stream-table joins (KStreamKTableJoinTest, KStreamKTableLeftJoinTest)
// ---------------------------------------------------------------------

fn stream_table_topology(left: bool) -> Result<Topology, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<i32, S>("streamTopic");
    let table = builder.table::<i32, S>("tableTopic");
    let joined: KStream<i32, S> = if left {
        stream.left_join(&table, |v, t| tostring(Some(v), t))
    } else {
        stream.join(&table, |v, t| tostring(Some(v), Some(t)))
    };
    joined.to("out");
    Ok(builder.build()?)
}

struct StreamTable<'d> {
    stream: TestInputTopic<'d, i32, S>,
    table: TestInputTopic<'d, i32, S>,
    out: TestOutputTopic<'d, i32, S>,
}

impl<'d> StreamTable<'d> {
    fn new(driver: &'d TopologyTestDriver) -> Self {
        StreamTable {
            stream: driver.create_input_topic("streamTopic", I32Serde, StringSerde),
            table: driver.create_input_topic("tableTopic", I32Serde, StringSerde),
            out: driver.create_output_topic("out", I32Serde, StringSerde),
        }
    }

    /// Kafka's `pushToStream`: keys 0.. at timestamps 0..
    fn push_to_stream(&self, count: usize, prefix: &str) {
        for (i, k) in KEYS.iter().take(count).enumerate() {
            self.stream
                .pipe_key_value_at(*k, format!("{prefix}{k}"), i as i64);
        }
    }

    /// Kafka's `pushToTable` (there at random timestamps, which the
    /// results do not depend on).
    fn push_to_table(&self, count: usize, prefix: &str) {
        for (i, k) in KEYS.iter().take(count).enumerate() {
            self.table
                .pipe_key_value_at(*k, format!("{prefix}{k}"), 1_000_003 * (i as i64 + 1));
        }
    }

    fn push_null_values_to_table(&self, count: usize) {
        for k in KEYS.iter().take(count) {
            self.table.pipe_tombstone(*k);
        }
    }
}

#[test]
fn stream_table_join_should_not_join_with_empty_table_on_stream_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(false)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_stream(2, "X");
    assert_eq!(drain(&t.out), []);
    Ok(())
}

#[test]
fn stream_table_join_should_not_join_on_table_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(false)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_stream(2, "X");
    assert_eq!(drain(&t.out), []);
    t.push_to_table(2, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(drain(&t.out), [kvt(0, "X0+Y0", 0), kvt(1, "X1+Y1", 1)]);
    t.push_to_table(4, "YY");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+YY0", 0),
            kvt(1, "X1+YY1", 1),
            kvt(2, "X2+YY2", 2),
            kvt(3, "X3+YY3", 3)
        ]
    );
    t.push_to_table(4, "YYY");
    assert_eq!(drain(&t.out), []);
    Ok(())
}

#[test]
fn stream_table_join_should_join_only_if_match_found_on_stream_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(false)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(2, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(drain(&t.out), [kvt(0, "X0+Y0", 0), kvt(1, "X1+Y1", 1)]);
    Ok(())
}

#[test]
fn stream_table_join_should_clear_table_entry_on_null_value_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(false)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(4, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+Y0", 0),
            kvt(1, "X1+Y1", 1),
            kvt(2, "X2+Y2", 2),
            kvt(3, "X3+Y3", 3)
        ]
    );
    t.push_null_values_to_table(2);
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "XX");
    assert_eq!(drain(&t.out), [kvt(2, "XX2+Y2", 2), kvt(3, "XX3+Y3", 3)]);
    Ok(())
}

/// Kafka's `shouldLogAndMeterWhenSkippingNullLeftKey` and
/// `...NullLeftValue`: both are dropped and counted.
#[test]
fn stream_table_join_should_drop_and_count_null_key_and_null_value() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(false)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(2, "Y");
    t.stream.pipe_record(TestRecord::value("A"));
    t.stream.pipe_tombstone(1);
    assert_eq!(drain(&t.out), []);
    assert_eq!(driver.metrics().dropped_records, 2);
    Ok(())
}

#[test]
fn stream_table_left_join_should_join_with_empty_table_on_stream_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(true)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_stream(2, "X");
    assert_eq!(drain(&t.out), [kvt(0, "X0+null", 0), kvt(1, "X1+null", 1)]);
    Ok(())
}

#[test]
fn stream_table_left_join_should_not_join_on_table_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(true)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_stream(2, "X");
    assert_eq!(drain(&t.out), [kvt(0, "X0+null", 0), kvt(1, "X1+null", 1)]);
    t.push_to_table(2, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+Y0", 0),
            kvt(1, "X1+Y1", 1),
            kvt(2, "X2+null", 2),
            kvt(3, "X3+null", 3)
        ]
    );
    t.push_to_table(4, "YY");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+YY0", 0),
            kvt(1, "X1+YY1", 1),
            kvt(2, "X2+YY2", 2),
            kvt(3, "X3+YY3", 3)
        ]
    );
    t.push_to_table(4, "YYY");
    assert_eq!(drain(&t.out), []);
    Ok(())
}

#[test]
fn stream_table_left_join_should_join_regardless_if_match_found_on_stream_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(true)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(2, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+Y0", 0),
            kvt(1, "X1+Y1", 1),
            kvt(2, "X2+null", 2),
            kvt(3, "X3+null", 3)
        ]
    );
    Ok(())
}

#[test]
fn stream_table_left_join_should_clear_table_entry_on_null_value_updates() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(true)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(4, "Y");
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "X");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "X0+Y0", 0),
            kvt(1, "X1+Y1", 1),
            kvt(2, "X2+Y2", 2),
            kvt(3, "X3+Y3", 3)
        ]
    );
    t.push_null_values_to_table(2);
    assert_eq!(drain(&t.out), []);
    t.push_to_stream(4, "XX");
    assert_eq!(
        drain(&t.out),
        [
            kvt(0, "XX0+null", 0),
            kvt(1, "XX1+null", 1),
            kvt(2, "XX2+Y2", 2),
            kvt(3, "XX3+Y3", 3)
        ]
    );
    Ok(())
}

/// KIP-962: a left join keeps a record without a key (joined with
/// nothing); a record without a value is still dropped and counted.
#[test]
fn stream_table_left_join_joins_null_keys_and_drops_null_values() -> TestResult {
    let driver = TopologyTestDriver::new(stream_table_topology(true)?)?;
    let t = StreamTable::new(&driver);
    t.push_to_table(1, "Y");
    t.stream.pipe_record(TestRecord::value("A").at(3));
    t.stream.pipe_record(TestRecord::tombstone(0).at(4));
    assert_eq!(drain(&t.out), [(None, Some("A+null".to_owned()), 3)]);
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

/// The join reads the table's store: it is connected to it, and the
/// table gets materialized for it (`tableTopic-STATE-STORE-0000000001`).
#[test]
fn stream_table_join_connects_the_join_to_the_tables_store() -> TestResult {
    let topology = stream_table_topology(false)?;
    assert_eq!(
        topology.store_names(),
        ["tableTopic-STATE-STORE-0000000001"]
    );
    assert_eq!(
        topology.node_store_names("KSTREAM-JOIN-0000000004"),
        Some(&["tableTopic-STATE-STORE-0000000001".to_owned()][..])
    );
    let left = stream_table_topology(true)?;
    assert!(left.contains_node("KSTREAM-LEFTJOIN-0000000004"));
    Ok(())
}

/// Kafka's `shouldReuseRepartitionTopicWithGeneratedName`.
#[test]
fn stream_table_join_should_reuse_repartition_topic_with_generated_name() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream_with::<S, S>("topic", Consumed::with(StringSerde, StringSerde));
    let table_b = builder.table::<S, S>("topic2");
    let table_c = builder.table::<S, S>("topic3");
    let rekeyed = stream_a.map(|k, v| (v.clone(), k.cloned().unwrap_or_default()));
    rekeyed
        .clone()
        .join(&table_b, |a, b| format!("{a}{b}"))
        .to("out-one");
    rekeyed
        .join(&table_c, |a, b| format!("{a}{b}"))
        .to("out-two");
    let expected = "Topologies:\n   Sub-topology: 0\n\
        \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n\
        \x20     --> KSTREAM-MAP-0000000007\n\
        \x20   Processor: KSTREAM-MAP-0000000007 (stores: [])\n\
        \x20     --> KSTREAM-FILTER-0000000009\n\
        \x20     <-- KSTREAM-SOURCE-0000000000\n\
        \x20   Processor: KSTREAM-FILTER-0000000009 (stores: [])\n\
        \x20     --> KSTREAM-SINK-0000000008\n\
        \x20     <-- KSTREAM-MAP-0000000007\n\
        \x20   Sink: KSTREAM-SINK-0000000008 (topic: KSTREAM-MAP-0000000007-repartition)\n\
        \x20     <-- KSTREAM-FILTER-0000000009\n\
        \n  Sub-topology: 1\n\
        \x20   Source: KSTREAM-SOURCE-0000000010 (topics: [KSTREAM-MAP-0000000007-repartition])\n\
        \x20     --> KSTREAM-JOIN-0000000011, KSTREAM-JOIN-0000000016\n\
        \x20   Processor: KSTREAM-JOIN-0000000011 (stores: [topic2-STATE-STORE-0000000001])\n\
        \x20     --> KSTREAM-SINK-0000000012\n\
        \x20     <-- KSTREAM-SOURCE-0000000010\n\
        \x20   Processor: KSTREAM-JOIN-0000000016 (stores: [topic3-STATE-STORE-0000000004])\n\
        \x20     --> KSTREAM-SINK-0000000017\n\
        \x20     <-- KSTREAM-SOURCE-0000000010\n\
        \x20   Source: KSTREAM-SOURCE-0000000002 (topics: [topic2])\n\
        \x20     --> KTABLE-SOURCE-0000000003\n\
        \x20   Source: KSTREAM-SOURCE-0000000005 (topics: [topic3])\n\
        \x20     --> KTABLE-SOURCE-0000000006\n\
        \x20   Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n\
        \x20     <-- KSTREAM-JOIN-0000000011\n\
        \x20   Sink: KSTREAM-SINK-0000000017 (topic: out-two)\n\
        \x20     <-- KSTREAM-JOIN-0000000016\n\
        \x20   Processor: KTABLE-SOURCE-0000000003 (stores: [topic2-STATE-STORE-0000000001])\n\
        \x20     --> none\n\
        \x20     <-- KSTREAM-SOURCE-0000000002\n\
        \x20   Processor: KTABLE-SOURCE-0000000006 (stores: [topic3-STATE-STORE-0000000004])\n\
        \x20     --> none\n\
        \x20     <-- KSTREAM-SOURCE-0000000005\n\n";
    assert_eq!(builder.build()?.describe().to_string(), expected);
    Ok(())
}

/// Kafka's `shouldCreateRepartitionTopicsWithUserProvidedName`.
#[test]
fn stream_table_join_should_create_repartition_topics_with_user_provided_name() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream_a = builder.stream_with::<S, S>("topic", Consumed::with(StringSerde, StringSerde));
    let table_b = builder.table::<S, S>("topic2");
    let table_c = builder.table::<S, S>("topic3");
    let rekeyed = stream_a.map(|k, v| (v.clone(), k.cloned().unwrap_or_default()));
    rekeyed
        .clone()
        .join_with(
            &table_b,
            |a, b| format!("{a}{b}"),
            Joined::with(StringSerde, StringSerde).with_name("first-join"),
        )
        .to("out-one");
    rekeyed
        .join_with(
            &table_c,
            |a, b| format!("{a}{b}"),
            Joined::with(StringSerde, StringSerde).with_name("second-join"),
        )
        .to("out-two");
    let expected = "Topologies:\n   Sub-topology: 0\n\
        \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n\
        \x20     --> KSTREAM-MAP-0000000007\n\
        \x20   Processor: KSTREAM-MAP-0000000007 (stores: [])\n\
        \x20     --> first-join-repartition-filter, second-join-repartition-filter\n\
        \x20     <-- KSTREAM-SOURCE-0000000000\n\
        \x20   Processor: first-join-repartition-filter (stores: [])\n\
        \x20     --> first-join-repartition-sink\n\
        \x20     <-- KSTREAM-MAP-0000000007\n\
        \x20   Processor: second-join-repartition-filter (stores: [])\n\
        \x20     --> second-join-repartition-sink\n\
        \x20     <-- KSTREAM-MAP-0000000007\n\
        \x20   Sink: first-join-repartition-sink (topic: first-join-repartition)\n\
        \x20     <-- first-join-repartition-filter\n\
        \x20   Sink: second-join-repartition-sink (topic: second-join-repartition)\n\
        \x20     <-- second-join-repartition-filter\n\
        \n  Sub-topology: 1\n\
        \x20   Source: first-join-repartition-source (topics: [first-join-repartition])\n\
        \x20     --> first-join\n\
        \x20   Source: KSTREAM-SOURCE-0000000002 (topics: [topic2])\n\
        \x20     --> KTABLE-SOURCE-0000000003\n\
        \x20   Processor: first-join (stores: [topic2-STATE-STORE-0000000001])\n\
        \x20     --> KSTREAM-SINK-0000000012\n\
        \x20     <-- first-join-repartition-source\n\
        \x20   Sink: KSTREAM-SINK-0000000012 (topic: out-one)\n\
        \x20     <-- first-join\n\
        \x20   Processor: KTABLE-SOURCE-0000000003 (stores: [topic2-STATE-STORE-0000000001])\n\
        \x20     --> none\n\
        \x20     <-- KSTREAM-SOURCE-0000000002\n\
        \n  Sub-topology: 2\n\
        \x20   Source: second-join-repartition-source (topics: [second-join-repartition])\n\
        \x20     --> second-join\n\
        \x20   Source: KSTREAM-SOURCE-0000000005 (topics: [topic3])\n\
        \x20     --> KTABLE-SOURCE-0000000006\n\
        \x20   Processor: second-join (stores: [topic3-STATE-STORE-0000000004])\n\
        \x20     --> KSTREAM-SINK-0000000017\n\
        \x20     <-- second-join-repartition-source\n\
        \x20   Sink: KSTREAM-SINK-0000000017 (topic: out-two)\n\
        \x20     <-- second-join\n\
        \x20   Processor: KTABLE-SOURCE-0000000006 (stores: [topic3-STATE-STORE-0000000004])\n\
        \x20     --> none\n\
        \x20     <-- KSTREAM-SOURCE-0000000005\n\n";
    assert_eq!(builder.build()?.describe().to_string(), expected);
    Ok(())
}

/// A re-keyed stream is joined after going through its repartition topic.
#[test]
fn stream_table_join_after_a_key_change_goes_through_the_repartition_topic() -> TestResult {
    let builder = StreamsBuilder::new();
    let orders = builder.stream::<S, S>("orders"); // order id -> customer
    let customers = builder.table::<S, S>("customers");
    orders
        .select_key(|_, customer| customer.clone())
        .join(&customers, |customer, name| format!("{customer}={name}"))
        .to("out");
    let driver = TopologyTestDriver::builder(builder.build()?)
        .config(StreamsConfig::new("app"))
        .build()?;
    let customers_in = driver.create_input_topic("customers", StringSerde, StringSerde);
    let orders_in = driver.create_input_topic("orders", StringSerde, StringSerde);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    customers_in.pipe_key_value("c1", "Ann");
    orders_in.pipe_key_value("o1", "c1");
    assert_eq!(
        out.read_key_values_to_list(),
        [KeyValue::pair("c1", "c1=Ann")]
    );
    assert!(
        driver
            .produced_topic_names()
            .contains("app-KSTREAM-KEY-SELECT-0000000004-repartition")
    );
    Ok(())
}

// ---------------------------------------------------------------------
// Table-table joins (KTableKTable{Inner,Left,Outer}JoinTest)
// ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    Inner,
    Left,
    Outer,
}

fn join_tables(
    t1: KTable<i32, S>,
    t2: &KTable<i32, S>,
    how: How,
    materialized: Option<Materialized<i32, S>>,
) -> KTable<i32, S> {
    match (how, materialized) {
        (How::Inner, None) => t1.join(t2, |a, b| tostring(Some(a), Some(b))),
        (How::Inner, Some(m)) => t1.join_with(t2, |a, b| tostring(Some(a), Some(b)), m),
        (How::Left, None) => t1.left_join(t2, |a, b| tostring(Some(a), b)),
        (How::Left, Some(m)) => t1.left_join_with(t2, |a, b| tostring(Some(a), b), m),
        (How::Outer, None) => t1.outer_join(t2, tostring),
        (How::Outer, Some(m)) => t1.outer_join_with(t2, tostring, m),
    }
}

/// Kafka's `doTestJoin`: the result table written to `output`.
fn table_join_to_output(
    how: How,
    materialized: Option<Materialized<i32, S>>,
) -> Result<Topology, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let t1 = builder.table::<i32, S>("topic1");
    let t2 = builder.table::<i32, S>("topic2");
    join_tables(t1, &t2, how, materialized)
        .to_stream()
        .to("output");
    Ok(builder.build()?)
}

/// Captures the `Change`s a table node forwards, as Kafka's
/// `MockApiProcessor` attached with `addProcessor("proc", ..)`.
#[derive(Clone, Default)]
struct Captured(Rc<RefCell<Vec<(i32, Option<S>, Option<S>, i64)>>>);

impl Captured {
    fn take(&self) -> Vec<(i32, Option<S>, Option<S>, i64)> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Processor<i32, Change<S>, (), ()> for Captured {
    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, (), ()>,
        r: Record<i32, Change<S>>,
    ) -> streams_core::Result<()> {
        if let (Some(k), Some(c)) = (r.key, r.value) {
            self.0.borrow_mut().push((k, c.new, c.old, r.timestamp));
        }
        Ok(())
    }
}

/// Kafka's `testNotSendingOldValue(s)` / `testSendingOldValue(s)`: a
/// processor attached to the join node. `send_old` asks the join for old
/// values as a downstream `group_by` does (Kafka's test calls
/// `enableSendingOldValues` itself).
fn table_join_captured(
    how: How,
    materialized: Option<Materialized<i32, S>>,
    send_old: bool,
) -> Result<(Topology, Captured), Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let t1 = builder.table::<i32, S>("topic1");
    let t2 = builder.table::<i32, S>("topic2");
    let joined = join_tables(t1, &t2, how, materialized);
    if send_old {
        joined.clone().group_by(|k, v| (*k, v.clone()));
    }
    let mut topology = builder.build()?;
    let captured = Captured::default();
    let c = captured.clone();
    topology.add_processor("proc", move || c.clone(), &[joined.node_name()])?;
    Ok((topology, captured))
}

/// Kafka's table-table test script, the same in every join test: eight
/// steps, each followed by `after` (which reads what the step produced).
fn table_join_script<T>(
    driver: &TopologyTestDriver,
    mut after: impl FnMut() -> Vec<T>,
) -> Vec<Vec<T>> {
    let in1 = driver.create_input_topic::<i32, S>("topic1", I32Serde, StringSerde);
    let in2 = driver.create_input_topic::<i32, S>("topic2", I32Serde, StringSerde);
    let mut steps = Vec::new();
    // Two items to the primary stream; the other table is empty. A null
    // key is discarded.
    for (i, k) in KEYS.iter().take(2).enumerate() {
        in1.pipe_key_value_at(*k, format!("X{k}"), 5 + i as i64);
    }
    in1.pipe_record(TestRecord::value("SomeVal").at(42));
    steps.push(after());
    // Two items to the other stream.
    for (i, k) in KEYS.iter().take(2).enumerate() {
        in2.pipe_key_value_at(*k, format!("Y{k}"), 10 * i as i64);
    }
    in2.pipe_record(TestRecord::value("AnotherVal").at(73));
    steps.push(after());
    for k in KEYS {
        in1.pipe_key_value_at(k, format!("XX{k}"), 7);
    }
    steps.push(after());
    for k in KEYS {
        in2.pipe_key_value_at(k, format!("YY{k}"), i64::from(k) * 5);
    }
    steps.push(after());
    for k in KEYS {
        in1.pipe_key_value_at(k, format!("XXX{k}"), 6);
    }
    steps.push(after());
    // Two deletes on the other stream.
    in2.pipe_record(TestRecord::tombstone(KEYS[0]).at(5));
    in2.pipe_record(TestRecord::tombstone(KEYS[1]).at(7));
    steps.push(after());
    for k in KEYS {
        in1.pipe_key_value_at(k, format!("XXXX{k}"), 13);
    }
    steps.push(after());
    // Four deletes on the primary stream.
    for (k, ts) in KEYS.iter().zip([0, 42, 5, 20]) {
        in1.pipe_record(TestRecord::tombstone(*k).at(ts));
    }
    steps.push(after());
    steps
}

fn run_to_output(topology: Topology) -> Result<Vec<Vec<Kvt>>, Box<dyn Error>> {
    let driver = TopologyTestDriver::new(topology)?;
    let out = driver.create_output_topic::<i32, S>("output", I32Serde, StringSerde);
    let steps = table_join_script(&driver, || drain(&out));
    // The two null keys were dropped by the table sources.
    assert_eq!(driver.metrics().dropped_records, 2);
    Ok(steps)
}

type Chg = (i32, Option<S>, Option<S>, i64);

fn chg(k: i32, new: Option<&str>, old: Option<&str>, ts: i64) -> Chg {
    (k, new.map(str::to_owned), old.map(str::to_owned), ts)
}

fn run_captured(topology: Topology, captured: &Captured) -> Result<Vec<Vec<Chg>>, Box<dyn Error>> {
    let driver = TopologyTestDriver::new(topology)?;
    Ok(table_join_script(&driver, || captured.take()))
}

fn inner_join_expected() -> Vec<Vec<Kvt>> {
    vec![
        vec![],
        vec![kvt(0, "X0+Y0", 5), kvt(1, "X1+Y1", 10)],
        vec![kvt(0, "XX0+Y0", 7), kvt(1, "XX1+Y1", 10)],
        vec![
            kvt(0, "XX0+YY0", 7),
            kvt(1, "XX1+YY1", 7),
            kvt(2, "XX2+YY2", 10),
            kvt(3, "XX3+YY3", 15),
        ],
        vec![
            kvt(0, "XXX0+YY0", 6),
            kvt(1, "XXX1+YY1", 6),
            kvt(2, "XXX2+YY2", 10),
            kvt(3, "XXX3+YY3", 15),
        ],
        vec![tomb(0, 6), tomb(1, 7)],
        vec![kvt(2, "XXXX2+YY2", 13), kvt(3, "XXXX3+YY3", 15)],
        vec![tomb(2, 10), tomb(3, 20)],
    ]
}

#[test]
fn ktable_ktable_inner_join_test_join() -> TestResult {
    assert_eq!(
        run_to_output(table_join_to_output(How::Inner, None)?)?,
        inner_join_expected()
    );
    Ok(())
}

#[test]
fn ktable_ktable_inner_join_test_queryable_join() -> TestResult {
    let topology =
        table_join_to_output(How::Inner, Some(Materialized::with(I32Serde, StringSerde)))?;
    assert_eq!(
        topology.store_names(),
        [
            "topic1-STATE-STORE-0000000000",
            "topic2-STATE-STORE-0000000003",
            "KTABLE-MERGE-STATE-STORE-0000000006"
        ]
    );
    assert_eq!(run_to_output(topology)?, inner_join_expected());
    Ok(())
}

#[test]
fn ktable_ktable_inner_join_test_not_sending_old_values() -> TestResult {
    for materialized in [None, Some(Materialized::with(I32Serde, StringSerde))] {
        let (topology, captured) = table_join_captured(How::Inner, materialized, false)?;
        assert_eq!(
            run_captured(topology, &captured)?,
            vec![
                vec![],
                vec![
                    chg(0, Some("X0+Y0"), None, 5),
                    chg(1, Some("X1+Y1"), None, 10)
                ],
                vec![
                    chg(0, Some("XX0+Y0"), None, 7),
                    chg(1, Some("XX1+Y1"), None, 10)
                ],
                vec![
                    chg(0, Some("XX0+YY0"), None, 7),
                    chg(1, Some("XX1+YY1"), None, 7),
                    chg(2, Some("XX2+YY2"), None, 10),
                    chg(3, Some("XX3+YY3"), None, 15)
                ],
                vec![
                    chg(0, Some("XXX0+YY0"), None, 6),
                    chg(1, Some("XXX1+YY1"), None, 6),
                    chg(2, Some("XXX2+YY2"), None, 10),
                    chg(3, Some("XXX3+YY3"), None, 15)
                ],
                vec![chg(0, None, None, 6), chg(1, None, None, 7)],
                vec![
                    chg(2, Some("XXXX2+YY2"), None, 13),
                    chg(3, Some("XXXX3+YY3"), None, 15)
                ],
                vec![chg(2, None, None, 10), chg(3, None, None, 20)],
            ]
        );
    }
    Ok(())
}

#[test]
fn ktable_ktable_inner_join_test_sending_old_values() -> TestResult {
    let (topology, captured) = table_join_captured(How::Inner, None, true)?;
    assert_eq!(
        run_captured(topology, &captured)?,
        vec![
            vec![],
            vec![
                chg(0, Some("X0+Y0"), None, 5),
                chg(1, Some("X1+Y1"), None, 10)
            ],
            vec![
                chg(0, Some("XX0+Y0"), Some("X0+Y0"), 7),
                chg(1, Some("XX1+Y1"), Some("X1+Y1"), 10)
            ],
            vec![
                chg(0, Some("XX0+YY0"), Some("XX0+Y0"), 7),
                chg(1, Some("XX1+YY1"), Some("XX1+Y1"), 7),
                chg(2, Some("XX2+YY2"), None, 10),
                chg(3, Some("XX3+YY3"), None, 15)
            ],
            vec![
                chg(0, Some("XXX0+YY0"), Some("XX0+YY0"), 6),
                chg(1, Some("XXX1+YY1"), Some("XX1+YY1"), 6),
                chg(2, Some("XXX2+YY2"), Some("XX2+YY2"), 10),
                chg(3, Some("XXX3+YY3"), Some("XX3+YY3"), 15)
            ],
            vec![
                chg(0, None, Some("XXX0+YY0"), 6),
                chg(1, None, Some("XXX1+YY1"), 7)
            ],
            vec![
                chg(2, Some("XXXX2+YY2"), Some("XXX2+YY2"), 13),
                chg(3, Some("XXXX3+YY3"), Some("XXX3+YY3"), 15)
            ],
            vec![
                chg(2, None, Some("XXXX2+YY2"), 10),
                chg(3, None, Some("XXXX3+YY3"), 20)
            ],
        ]
    );
    Ok(())
}

fn left_join_expected() -> Vec<Vec<Kvt>> {
    vec![
        vec![kvt(0, "X0+null", 5), kvt(1, "X1+null", 6)],
        vec![kvt(0, "X0+Y0", 5), kvt(1, "X1+Y1", 10)],
        vec![
            kvt(0, "XX0+Y0", 7),
            kvt(1, "XX1+Y1", 10),
            kvt(2, "XX2+null", 7),
            kvt(3, "XX3+null", 7),
        ],
        vec![
            kvt(0, "XX0+YY0", 7),
            kvt(1, "XX1+YY1", 7),
            kvt(2, "XX2+YY2", 10),
            kvt(3, "XX3+YY3", 15),
        ],
        vec![
            kvt(0, "XXX0+YY0", 6),
            kvt(1, "XXX1+YY1", 6),
            kvt(2, "XXX2+YY2", 10),
            kvt(3, "XXX3+YY3", 15),
        ],
        vec![kvt(0, "XXX0+null", 6), kvt(1, "XXX1+null", 7)],
        vec![
            kvt(0, "XXXX0+null", 13),
            kvt(1, "XXXX1+null", 13),
            kvt(2, "XXXX2+YY2", 13),
            kvt(3, "XXXX3+YY3", 15),
        ],
        // Deleting the left rows: a tombstone for each.
        vec![tomb(0, 0), tomb(1, 42), tomb(2, 10), tomb(3, 20)],
    ]
}

#[test]
fn ktable_ktable_left_join_test_join() -> TestResult {
    assert_eq!(
        run_to_output(table_join_to_output(How::Left, None)?)?,
        left_join_expected()
    );
    Ok(())
}

#[test]
fn ktable_ktable_left_join_queryable_keeps_the_result_in_its_store() -> TestResult {
    let topology = table_join_to_output(How::Left, Some(Materialized::as_("left-joined")))?;
    let driver = TopologyTestDriver::new(topology)?;
    let out = driver.create_output_topic::<i32, S>("output", I32Serde, StringSerde);
    let store = driver.timestamped_key_value_store::<i32, S>("left-joined")?;
    let mut snapshots = Vec::new();
    let steps = table_join_script(&driver, || {
        snapshots.push(store.to_map());
        drain(&out)
    });
    assert_eq!(steps, left_join_expected());
    let after = |step: usize| snapshots[step].clone();
    assert_eq!(
        after(6),
        BTreeMap::from([
            (0, "XXXX0+null".to_owned()),
            (1, "XXXX1+null".to_owned()),
            (2, "XXXX2+YY2".to_owned()),
            (3, "XXXX3+YY3".to_owned()),
        ])
    );
    assert_eq!(after(7), BTreeMap::new());
    Ok(())
}

#[test]
fn ktable_ktable_left_join_test_not_sending_old_value() -> TestResult {
    let (topology, captured) = table_join_captured(How::Left, None, false)?;
    assert_eq!(
        run_captured(topology, &captured)?,
        vec![
            vec![
                chg(0, Some("X0+null"), None, 5),
                chg(1, Some("X1+null"), None, 6)
            ],
            vec![
                chg(0, Some("X0+Y0"), None, 5),
                chg(1, Some("X1+Y1"), None, 10)
            ],
            vec![
                chg(0, Some("XX0+Y0"), None, 7),
                chg(1, Some("XX1+Y1"), None, 10),
                chg(2, Some("XX2+null"), None, 7),
                chg(3, Some("XX3+null"), None, 7)
            ],
            vec![
                chg(0, Some("XX0+YY0"), None, 7),
                chg(1, Some("XX1+YY1"), None, 7),
                chg(2, Some("XX2+YY2"), None, 10),
                chg(3, Some("XX3+YY3"), None, 15)
            ],
            vec![
                chg(0, Some("XXX0+YY0"), None, 6),
                chg(1, Some("XXX1+YY1"), None, 6),
                chg(2, Some("XXX2+YY2"), None, 10),
                chg(3, Some("XXX3+YY3"), None, 15)
            ],
            vec![
                chg(0, Some("XXX0+null"), None, 6),
                chg(1, Some("XXX1+null"), None, 7)
            ],
            vec![
                chg(0, Some("XXXX0+null"), None, 13),
                chg(1, Some("XXXX1+null"), None, 13),
                chg(2, Some("XXXX2+YY2"), None, 13),
                chg(3, Some("XXXX3+YY3"), None, 15)
            ],
            vec![
                chg(0, None, None, 0),
                chg(1, None, None, 42),
                chg(2, None, None, 10),
                chg(3, None, None, 20)
            ],
        ]
    );
    Ok(())
}

#[test]
fn ktable_ktable_left_join_test_sending_old_value() -> TestResult {
    let (topology, captured) = table_join_captured(How::Left, None, true)?;
    assert_eq!(
        run_captured(topology, &captured)?,
        vec![
            vec![
                chg(0, Some("X0+null"), None, 5),
                chg(1, Some("X1+null"), None, 6)
            ],
            vec![
                chg(0, Some("X0+Y0"), Some("X0+null"), 5),
                chg(1, Some("X1+Y1"), Some("X1+null"), 10)
            ],
            vec![
                chg(0, Some("XX0+Y0"), Some("X0+Y0"), 7),
                chg(1, Some("XX1+Y1"), Some("X1+Y1"), 10),
                chg(2, Some("XX2+null"), None, 7),
                chg(3, Some("XX3+null"), None, 7)
            ],
            vec![
                chg(0, Some("XX0+YY0"), Some("XX0+Y0"), 7),
                chg(1, Some("XX1+YY1"), Some("XX1+Y1"), 7),
                chg(2, Some("XX2+YY2"), Some("XX2+null"), 10),
                chg(3, Some("XX3+YY3"), Some("XX3+null"), 15)
            ],
            vec![
                chg(0, Some("XXX0+YY0"), Some("XX0+YY0"), 6),
                chg(1, Some("XXX1+YY1"), Some("XX1+YY1"), 6),
                chg(2, Some("XXX2+YY2"), Some("XX2+YY2"), 10),
                chg(3, Some("XXX3+YY3"), Some("XX3+YY3"), 15)
            ],
            vec![
                chg(0, Some("XXX0+null"), Some("XXX0+YY0"), 6),
                chg(1, Some("XXX1+null"), Some("XXX1+YY1"), 7)
            ],
            vec![
                chg(0, Some("XXXX0+null"), Some("XXX0+null"), 13),
                chg(1, Some("XXXX1+null"), Some("XXX1+null"), 13),
                chg(2, Some("XXXX2+YY2"), Some("XXX2+YY2"), 13),
                chg(3, Some("XXXX3+YY3"), Some("XXX3+YY3"), 15)
            ],
            vec![
                chg(0, None, Some("XXXX0+null"), 0),
                chg(1, None, Some("XXXX1+null"), 42),
                chg(2, None, Some("XXXX2+YY2"), 10),
                chg(3, None, Some("XXXX3+YY3"), 20)
            ],
        ]
    );
    Ok(())
}

/// Kafka's `shouldNotThrowIllegalStateExceptionWhenMultiCacheEvictions`
/// (KAFKA-4492): chained left joins over an aggregation, a mapped table
/// and a join result, fed pseudo-random updates, run without error, and
/// the final table (the last value per key of its stream) equals a naive
/// model: the latest row of every input table in a `BTreeMap`, the
/// reduction of a table re-keyed to its own key being that table, and
/// each left join `left+right` (`null` for no right row).
#[test]
fn kafka_4492_chained_left_joins_match_a_reference_model() -> TestResult {
    let builder = StreamsBuilder::new();
    let mat = |name: &str| Materialized::<i64, S>::as_(name);
    let agg = builder
        .table_with::<i64, S>("agg", mat("agg-base-store"))
        .group_by(|k, v| (*k, v.clone()))
        .reduce_with(
            |a, b| format!("{a}{b}"),
            |a, b| a.replacen(b.as_str(), "", 1),
            mat("agg-store"),
        );
    let tables: Vec<KTable<i64, S>> = [
        "tableOne",
        "tableTwo",
        "tableThree",
        "tableFour",
        "tableFive",
        "tableSix",
    ]
    .iter()
    .map(|t| builder.table_with::<i64, S>(t, mat(&format!("{t}-base-store"))))
    .collect();
    let joiner = |a: &S, b: Option<&S>| tostring(Some(a), b);
    let seven = tables[0].clone().map_values(|_, v| v.to_uppercase());
    let eight = tables[5].clone().left_join(&seven, joiner);
    agg.left_join(&tables[0], joiner)
        .left_join(&tables[1], joiner)
        .left_join(&tables[2], joiner)
        .left_join(&tables[3], joiner)
        .left_join(&tables[4], joiner)
        .left_join(&eight, joiner)
        .map_values(|_, v| v.to_uppercase())
        .to_stream()
        .to("final");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let values = [
        "a",
        "AA",
        "BBB",
        "CCCC",
        "DD",
        "EEEEEEEE",
        "F",
        "GGGGGGGGGGGGGGG",
        "HHH",
        "IIIIIIIIII",
        "J",
        "KK",
        "LLLL",
        "NNNNN",
        "O",
        "P",
        "QQQQQ",
        "R",
        "SSSS",
        "T",
        "UU",
    ];
    let inputs = [
        "agg",
        "tableOne",
        "tableTwo",
        "tableThree",
        "tableFour",
        "tableFive",
        "tableSix",
    ];
    let mut model: BTreeMap<&str, BTreeMap<i64, S>> = BTreeMap::new();
    let mut seed: u64 = 4492;
    let mut next = move |bound: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % bound
    };
    for _ in 0..200 {
        for input in inputs {
            let topic = driver.create_input_topic::<i64, S>(
                input,
                streams_core::serde::I64Serde,
                StringSerde,
            );
            let key = next(50) as i64;
            let value = values[next(values.len() as u64) as usize];
            topic.try_pipe_record(TestRecord::key_value(key, value))?;
            model
                .entry(input)
                .or_default()
                .insert(key, value.to_owned());
        }
    }
    let final_out =
        driver.create_output_topic::<i64, S>("final", streams_core::serde::I64Serde, StringSerde);
    let mut seen = BTreeMap::new();
    for kv in final_out.read_key_values_to_list() {
        let key = kv.key.expect("a table's rows have keys");
        match kv.value {
            Some(v) => seen.insert(key, v),
            None => seen.remove(&key),
        };
    }
    let table = |name: &str| model.get(name).cloned().unwrap_or_default();
    let seven: BTreeMap<i64, S> = table("tableOne")
        .into_iter()
        .map(|(k, v)| (k, v.to_uppercase()))
        .collect();
    let eight: BTreeMap<i64, S> = table("tableSix")
        .into_iter()
        .map(|(k, v)| {
            let joined = tostring(Some(&v), seven.get(&k));
            (k, joined)
        })
        .collect();
    let rights = [
        table("tableOne"),
        table("tableTwo"),
        table("tableThree"),
        table("tableFour"),
        table("tableFive"),
        eight,
    ];
    let expected: BTreeMap<i64, S> = table("agg")
        .into_iter()
        .map(|(k, v)| {
            let joined = rights
                .iter()
                .fold(v, |left, right| tostring(Some(&left), right.get(&k)));
            (k, joined.to_uppercase())
        })
        .collect();
    assert_eq!(expected.len(), 49, "the seeded keys cover 49 of 0..50");
    assert_eq!(seen, expected);
    Ok(())
}

fn outer_join_expected() -> Vec<Vec<Kvt>> {
    let mut expected = left_join_expected();
    // Deleting the left rows: keys 2 and 3 still have a right row.
    expected[7] = vec![
        tomb(0, 0),
        tomb(1, 42),
        kvt(2, "null+YY2", 10),
        kvt(3, "null+YY3", 20),
    ];
    expected
}

#[test]
fn ktable_ktable_outer_join_test_join() -> TestResult {
    assert_eq!(
        run_to_output(table_join_to_output(How::Outer, None)?)?,
        outer_join_expected()
    );
    Ok(())
}

#[test]
fn ktable_ktable_outer_join_test_not_sending_old_value() -> TestResult {
    let (topology, captured) = table_join_captured(How::Outer, None, false)?;
    let expected: Vec<Vec<Chg>> = outer_join_expected()
        .into_iter()
        .map(|step| {
            step.into_iter()
                .map(|(k, v, ts)| (k.unwrap_or(-1), v, None, ts))
                .collect()
        })
        .collect();
    assert_eq!(run_captured(topology, &captured)?, expected);
    Ok(())
}

#[test]
fn ktable_ktable_outer_join_test_sending_old_value() -> TestResult {
    let (topology, captured) = table_join_captured(How::Outer, None, true)?;
    let steps = run_captured(topology, &captured)?;
    // As the left join until the last step, where the right rows remain.
    assert_eq!(
        steps[1],
        [
            chg(0, Some("X0+Y0"), Some("X0+null"), 5),
            chg(1, Some("X1+Y1"), Some("X1+null"), 10)
        ]
    );
    assert_eq!(
        steps[5],
        [
            chg(0, Some("XXX0+null"), Some("XXX0+YY0"), 6),
            chg(1, Some("XXX1+null"), Some("XXX1+YY1"), 7)
        ]
    );
    assert_eq!(
        steps[7],
        [
            chg(0, None, Some("XXXX0+null"), 0),
            chg(1, None, Some("XXXX1+null"), 42),
            chg(2, Some("null+YY2"), Some("XXXX2+YY2"), 10),
            chg(3, Some("null+YY3"), Some("XXXX3+YY3"), 20)
        ]
    );
    Ok(())
}

/// An outer join emits a tombstone only when the last of both rows goes.
#[test]
fn ktable_ktable_outer_join_deleting_both_sides_ends_in_a_tombstone() -> TestResult {
    let driver = TopologyTestDriver::new(table_join_to_output(How::Outer, None)?)?;
    let in1 = driver.create_input_topic::<i32, S>("topic1", I32Serde, StringSerde);
    let in2 = driver.create_input_topic::<i32, S>("topic2", I32Serde, StringSerde);
    let out = driver.create_output_topic::<i32, S>("output", I32Serde, StringSerde);
    in1.pipe_key_value_at(1, "a", 1);
    in2.pipe_key_value_at(1, "b", 2);
    in1.pipe_record(TestRecord::tombstone(1).at(3));
    in2.pipe_record(TestRecord::tombstone(1).at(4));
    // A delete of a key neither side has produces nothing.
    in2.pipe_record(TestRecord::tombstone(9).at(5));
    assert_eq!(
        drain(&out),
        [
            kvt(1, "a+null", 1),
            kvt(1, "a+b", 2),
            kvt(1, "null+b", 3),
            tomb(1, 4)
        ]
    );
    Ok(())
}

/// Node names and store connections of a table-table join, as Kafka's
/// `KTableKTableJoinNode` writes them; a name given with `named` names
/// all three nodes.
#[test]
fn ktable_ktable_join_node_names_and_stores() -> TestResult {
    let builder = StreamsBuilder::new();
    let t1 = builder.table::<i32, S>("topic1");
    let t2 = builder.table::<i32, S>("topic2");
    let joined = t1.clone().join(&t2, |a, b| format!("{a}{b}"));
    assert_eq!(joined.node_name(), "KTABLE-MERGE-0000000006");
    t1.named("named-join")
        .left_join(&t2, |a, _| a.clone())
        .to_stream()
        .to("out");
    let topology = builder.build()?;
    let names = topology.node_names();
    for n in [
        "KTABLE-JOINTHIS-0000000007",
        "KTABLE-JOINOTHER-0000000008",
        "KTABLE-MERGE-0000000006",
        "named-join",
        "named-join-join-this",
        "named-join-join-other",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    assert_eq!(
        topology.node_store_names("KTABLE-JOINTHIS-0000000007"),
        Some(&["topic2-STATE-STORE-0000000003".to_owned()][..])
    );
    assert_eq!(
        topology.node_store_names("KTABLE-JOINOTHER-0000000008"),
        Some(&["topic1-STATE-STORE-0000000000".to_owned()][..])
    );
    Ok(())
}

/// A join of a join result (no store of its own) reads both sides'
/// stores through the first join's value getter.
#[test]
fn ktable_join_of_an_unmaterialized_join_result_uses_its_value_getter() -> TestResult {
    let builder = StreamsBuilder::new();
    let a = builder.table::<i32, S>("a");
    let b = builder.table::<i32, S>("b");
    let c = builder.table::<i32, S>("c");
    let ab = a.join(&b, |x, y| format!("{x}{y}"));
    c.join(&ab, |z, xy| format!("{z}:{xy}"))
        .to_stream()
        .to("out");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let ins: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|t| driver.create_input_topic::<i32, S>(t, I32Serde, StringSerde))
        .collect();
    let out = driver.create_output_topic::<i32, S>("out", I32Serde, StringSerde);
    ins[0].pipe_key_value_at(1, "x", 1);
    ins[1].pipe_key_value_at(1, "y", 2);
    ins[2].pipe_key_value_at(1, "z", 3);
    ins[0].pipe_key_value_at(1, "X", 4);
    ins[1].pipe_record(TestRecord::tombstone(1).at(5));
    assert_eq!(
        drain(&out),
        [kvt(1, "z:xy", 3), kvt(1, "z:Xy", 4), tomb(1, 5)]
    );
    Ok(())
}

// ---------------------------------------------------------------------
// Global tables (KStreamGlobalKTableJoinTest, ...LeftJoinTest)
// ---------------------------------------------------------------------

struct GlobalJoin {
    driver: TopologyTestDriver,
}

impl GlobalJoin {
    fn new(left: bool) -> Result<Self, Box<dyn Error>> {
        let builder = StreamsBuilder::new();
        let stream = builder.stream::<i32, S>("streamTopic");
        let table = builder.global_table::<S, S>("globalTableTopic");
        // The value is comma delimited; its second token, if any, is the
        // key of the global table.
        let key_mapper = |_: Option<&i32>, v: &S| v.split(',').nth(1).map(str::to_owned);
        let joined = if left {
            stream.left_join_global(&table, key_mapper, |v, g| tostring(Some(v), g))
        } else {
            stream.join_global(&table, key_mapper, |v, g| tostring(Some(v), Some(g)))
        };
        joined.to("out");
        Ok(GlobalJoin {
            driver: TopologyTestDriver::new(builder.build()?)?,
        })
    }

    fn run(&self, steps: impl FnOnce(&GlobalTopics<'_>)) {
        let topics = GlobalTopics {
            // Stream timestamps auto-advance by 1 ms, as in Kafka's test.
            stream: self.driver.create_input_topic_with_time(
                "streamTopic",
                I32Serde,
                StringSerde,
                0,
                std::time::Duration::from_millis(1),
            ),
            table: self
                .driver
                .create_input_topic("globalTableTopic", StringSerde, StringSerde),
            out: self
                .driver
                .create_output_topic("out", I32Serde, StringSerde),
        };
        steps(&topics);
    }
}

struct GlobalTopics<'d> {
    stream: TestInputTopic<'d, i32, S>,
    table: TestInputTopic<'d, S, S>,
    out: TestOutputTopic<'d, i32, S>,
}

impl GlobalTopics<'_> {
    fn push_to_stream(&self, count: usize, prefix: &str, foreign_key: bool, null_key: bool) {
        for (i, k) in KEYS.iter().take(count).enumerate() {
            let mut value = format!("{prefix}{k}");
            if foreign_key {
                value.push_str(&format!(",FKey{k}"));
            }
            let key = (!(null_key && i == 0)).then_some(*k);
            self.stream.pipe_record(TestRecord::new(key, Some(value)));
        }
    }

    fn push_to_global_table(&self, count: usize, prefix: &str) {
        for k in KEYS.iter().take(count) {
            self.table
                .pipe_key_value(format!("FKey{k}"), format!("{prefix}{k}"));
        }
    }

    fn push_null_values_to_global_table(&self, count: usize) {
        for k in KEYS.iter().take(count) {
            self.table.pipe_tombstone(format!("FKey{k}"));
        }
    }

    fn drain(&self) -> Vec<Kvt> {
        drain(&self.out)
    }
}

#[test]
fn global_join_should_not_join_with_empty_global_table_on_stream_updates() -> TestResult {
    GlobalJoin::new(false)?.run(|t| {
        t.push_to_stream(2, "X", true, false);
        assert_eq!(t.drain(), []);
    });
    Ok(())
}

#[test]
fn global_join_should_not_join_on_global_table_updates() -> TestResult {
    GlobalJoin::new(false)?.run(|t| {
        t.push_to_stream(2, "X", true, false);
        assert_eq!(t.drain(), []);
        t.push_to_global_table(2, "Y");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [kvt(0, "X0,FKey0+Y0", 2), kvt(1, "X1,FKey1+Y1", 3)]
        );
        t.push_to_global_table(4, "YY");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+YY0", 6),
                kvt(1, "X1,FKey1+YY1", 7),
                kvt(2, "X2,FKey2+YY2", 8),
                kvt(3, "X3,FKey3+YY3", 9)
            ]
        );
        t.push_to_global_table(4, "YYY");
        assert_eq!(t.drain(), []);
    });
    Ok(())
}

#[test]
fn global_join_should_join_only_if_match_found_on_stream_updates() -> TestResult {
    GlobalJoin::new(false)?.run(|t| {
        t.push_to_global_table(2, "Y");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [kvt(0, "X0,FKey0+Y0", 0), kvt(1, "X1,FKey1+Y1", 1)]
        );
    });
    Ok(())
}

#[test]
fn global_join_should_clear_global_table_entry_on_null_value_updates() -> TestResult {
    GlobalJoin::new(false)?.run(|t| {
        t.push_to_global_table(4, "Y");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+Y0", 0),
                kvt(1, "X1,FKey1+Y1", 1),
                kvt(2, "X2,FKey2+Y2", 2),
                kvt(3, "X3,FKey3+Y3", 3)
            ]
        );
        t.push_null_values_to_global_table(2);
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "XX", true, false);
        assert_eq!(
            t.drain(),
            [kvt(2, "XX2,FKey2+Y2", 6), kvt(3, "XX3,FKey3+Y3", 7)]
        );
    });
    Ok(())
}

#[test]
fn global_join_should_not_join_on_null_key_mapper_values() -> TestResult {
    let join = GlobalJoin::new(false)?;
    join.run(|t| {
        t.push_to_global_table(4, "Y");
        t.push_to_stream(4, "XXX", false, false);
        assert_eq!(t.drain(), []);
    });
    assert_eq!(join.driver.metrics().dropped_records, 4);
    Ok(())
}

#[test]
fn global_join_should_join_on_null_key_with_non_null_key_mapper_values() -> TestResult {
    GlobalJoin::new(false)?.run(|t| {
        t.push_to_global_table(2, "Y");
        t.push_to_stream(4, "X", true, true);
        assert_eq!(
            t.drain(),
            [
                (None, Some("X0,FKey0+Y0".to_owned()), 0),
                kvt(1, "X1,FKey1+Y1", 1)
            ]
        );
    });
    Ok(())
}

#[test]
fn global_left_join_should_join_with_empty_global_table_on_stream_updates() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_stream(2, "X", true, false);
        assert_eq!(
            t.drain(),
            [kvt(0, "X0,FKey0+null", 0), kvt(1, "X1,FKey1+null", 1)]
        );
    });
    Ok(())
}

#[test]
fn global_left_join_should_not_join_on_global_table_updates() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_stream(2, "X", true, false);
        assert_eq!(
            t.drain(),
            [kvt(0, "X0,FKey0+null", 0), kvt(1, "X1,FKey1+null", 1)]
        );
        t.push_to_global_table(2, "Y");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+Y0", 2),
                kvt(1, "X1,FKey1+Y1", 3),
                kvt(2, "X2,FKey2+null", 4),
                kvt(3, "X3,FKey3+null", 5)
            ]
        );
        t.push_to_global_table(4, "YY");
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+YY0", 6),
                kvt(1, "X1,FKey1+YY1", 7),
                kvt(2, "X2,FKey2+YY2", 8),
                kvt(3, "X3,FKey3+YY3", 9)
            ]
        );
        t.push_to_global_table(4, "YYY");
        assert_eq!(t.drain(), []);
    });
    Ok(())
}

#[test]
fn global_left_join_should_join_regardless_if_match_found_on_stream_updates() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_global_table(2, "Y");
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+Y0", 0),
                kvt(1, "X1,FKey1+Y1", 1),
                kvt(2, "X2,FKey2+null", 2),
                kvt(3, "X3,FKey3+null", 3)
            ]
        );
    });
    Ok(())
}

#[test]
fn global_left_join_should_clear_global_table_entry_on_null_value_updates() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_global_table(4, "Y");
        t.push_to_stream(4, "X", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "X0,FKey0+Y0", 0),
                kvt(1, "X1,FKey1+Y1", 1),
                kvt(2, "X2,FKey2+Y2", 2),
                kvt(3, "X3,FKey3+Y3", 3)
            ]
        );
        t.push_null_values_to_global_table(2);
        assert_eq!(t.drain(), []);
        t.push_to_stream(4, "XX", true, false);
        assert_eq!(
            t.drain(),
            [
                kvt(0, "XX0,FKey0+null", 4),
                kvt(1, "XX1,FKey1+null", 5),
                kvt(2, "XX2,FKey2+Y2", 6),
                kvt(3, "XX3,FKey3+Y3", 7)
            ]
        );
    });
    Ok(())
}

#[test]
fn global_left_join_should_not_join_on_null_key_mapper_values() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_global_table(4, "Y");
        t.push_to_stream(4, "XXX", false, false);
        assert_eq!(t.drain(), []);
    });
    Ok(())
}

#[test]
fn global_left_join_should_join_on_null_key_with_non_null_key_mapper_values() -> TestResult {
    GlobalJoin::new(true)?.run(|t| {
        t.push_to_global_table(4, "Y");
        t.push_to_stream(4, "X", true, true);
        assert_eq!(
            t.drain(),
            [
                (None, Some("X0,FKey0+Y0".to_owned()), 0),
                kvt(1, "X1,FKey1+Y1", 1),
                kvt(2, "X2,FKey2+Y2", 2),
                kvt(3, "X3,FKey3+Y3", 3)
            ]
        );
    });
    Ok(())
}

/// Global topics are processed at once: they do not move stream time,
/// are not produced topics (unless written), and fill the store, where a
/// tombstone deletes.
#[test]
fn global_table_records_update_the_store_at_once_without_moving_stream_time() -> TestResult {
    let builder = StreamsBuilder::new();
    let rates = builder.global_table_with::<S, S>("rates", Materialized::as_("rates-store"));
    assert_eq!(rates.queryable_store_name(), Some("rates-store"));
    builder.stream::<S, S>("in").to("out");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let input = driver.create_input_topic::<S, S>("rates", StringSerde, StringSerde);
    input.pipe_key_value_at("EUR", "1.1", 500);
    input.pipe_key_value_at("GBP", "1.3", 600);
    input.pipe_record(TestRecord::tombstone("EUR").at(700));
    input.pipe_record(TestRecord::value("no key").at(800));
    assert_eq!(driver.stream_time(), -1);
    assert!(driver.produced_topic_names().is_empty());
    let store = driver.timestamped_key_value_store::<S, S>("rates-store")?;
    assert_eq!(
        store.to_map(),
        BTreeMap::from([("GBP".to_owned(), "1.3".to_owned())])
    );
    assert_eq!(store.get(&"GBP".to_owned()).map(|v| v.timestamp), Some(600));
    // A global store writes no changelog.
    assert!(
        !driver
            .produced_topic_names()
            .iter()
            .any(|t| t.ends_with("-changelog"))
    );
    Ok(())
}

/// Kafka's `shouldUseSpecifiedNameForGlobalTableSourceProcessor`: store
/// names `<topic>-STATE-STORE-<n>`; a name in `Consumed` names the
/// processor and `<name>-table-source`, and still takes numbers.
#[test]
fn global_table_names_follow_kafka() -> TestResult {
    let builder = StreamsBuilder::new();
    let first = builder.global_table_consumed::<S, S>(
        "stream-topic",
        Consumed::as_("source-processor"),
        Materialized::default(),
    );
    let second = builder.global_table::<S, S>("stream-topic-two");
    assert_eq!(first.store_name(), "stream-topic-STATE-STORE-0000000000");
    assert_eq!(
        second.store_name(),
        "stream-topic-two-STATE-STORE-0000000003"
    );
    assert_eq!(second.queryable_store_name(), None);
    let description = builder.build()?.describe();
    let globals = description.global_stores();
    assert_eq!(globals.len(), 2);
    assert_eq!(globals[0].source(), "source-processor-table-source");
    assert_eq!(globals[0].processor(), "source-processor");
    assert_eq!(globals[1].source(), "KSTREAM-SOURCE-0000000004");
    assert_eq!(globals[1].processor(), "KTABLE-SOURCE-0000000005");
    Ok(())
}

/// `describe()` prints a global table as its own sub-topology, numbered
/// where it was added.
#[test]
fn global_table_describes_as_a_global_store_sub_topology() -> TestResult {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<S, S>("in");
    let table = builder.global_table::<S, S>("g");
    stream
        .join_global(&table, |k, _| k.cloned(), |v, g| format!("{v}{g}"))
        .to("out");
    let expected = "Topologies:\n   Sub-topology: 0\n\
        \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n\
        \x20     --> KSTREAM-LEFTJOIN-0000000004\n\
        \x20   Processor: KSTREAM-LEFTJOIN-0000000004 (stores: [])\n\
        \x20     --> KSTREAM-SINK-0000000005\n\
        \x20     <-- KSTREAM-SOURCE-0000000000\n\
        \x20   Sink: KSTREAM-SINK-0000000005 (topic: out)\n\
        \x20     <-- KSTREAM-LEFTJOIN-0000000004\n\
        \n  Sub-topology: 1 for global store (will not generate tasks)\n\
        \x20   Source: KSTREAM-SOURCE-0000000002 (topics: [g])\n\
        \x20     --> KTABLE-SOURCE-0000000003\n\
        \x20   Processor: KTABLE-SOURCE-0000000003 (stores: [g-STATE-STORE-0000000001])\n\
        \x20     --> none\n\
        \x20     <-- KSTREAM-SOURCE-0000000002\n";
    assert_eq!(builder.build()?.describe().to_string(), expected);
    Ok(())
}

/// A global store through the Processor API: the processor keeps it up
/// to date, any processor reads it unconnected, and its records written
/// by a sink are applied at once (as Kafka's driver feeds them back).
#[test]
fn add_global_store_in_the_processor_api() -> TestResult {
    struct Update;
    impl Processor<S, S, (), ()> for Update {
        fn process(
            &mut self,
            ctx: &mut ProcessorContext<'_, (), ()>,
            r: Record<S, S>,
        ) -> streams_core::Result<()> {
            let mut store = ctx.key_value_store::<S, S>("names")?;
            match (r.key, r.value) {
                (Some(k), Some(v)) => {
                    store.put(k, v)?;
                }
                (Some(k), None) => {
                    store.delete(&k)?;
                }
                (None, _) => {}
            }
            Ok(())
        }
    }
    struct Lookup;
    impl Processor<S, S> for Lookup {
        fn process(
            &mut self,
            ctx: &mut ProcessorContext<'_, S, S>,
            r: Record<S, S>,
        ) -> streams_core::Result<()> {
            let name = {
                let store = ctx.key_value_store::<S, S>("names")?;
                match r.key.as_ref() {
                    Some(k) => store.get(k)?,
                    None => None,
                }
            };
            ctx.forward(r.with_value(name))
        }
    }
    let mut topology = Topology::new();
    topology
        .add_global_store(
            Stores::key_value_store_builder("names", StringSerde, StringSerde)
                .with_logging_disabled(),
            "names-source",
            "names",
            "names-updater",
            || Update,
        )?
        .add_source::<S, S>("ids", "ids")?
        .add_processor("lookup", || Lookup, &["ids"])?
        .add_sink::<S, S>("out", "out", &["lookup"])?
        .add_source::<S, S>("renames", "renames")?
        .add_sink::<S, S>("to-names", "names", &["renames"])?;
    // A global topic cannot be read by a stream source too.
    let mut copy = topology.clone();
    assert!(matches!(
        copy.add_source::<S, S>("again", "names"),
        Err(StreamsError::Topology(
            TopologyError::TopicAlreadyRead { .. }
        ))
    ));
    let driver = TopologyTestDriver::new(topology)?;
    let names = driver.create_input_topic::<S, S>("names", StringSerde, StringSerde);
    let ids = driver.create_input_topic::<S, S>("ids", StringSerde, StringSerde);
    let renames = driver.create_input_topic::<S, S>("renames", StringSerde, StringSerde);
    let out = driver.create_output_topic::<S, S>("out", StringSerde, StringSerde);
    names.pipe_key_value("1", "Ann");
    ids.pipe_key_value("1", "?");
    renames.pipe_key_value("1", "Anna");
    ids.pipe_key_value("1", "?");
    names.pipe_tombstone("1");
    ids.pipe_key_value("1", "?");
    assert_eq!(
        out.read_key_values_to_list(),
        [
            KeyValue::pair("1", "Ann"),
            KeyValue::pair("1", "Anna"),
            KeyValue::tombstone("1")
        ]
    );
    // Written by a sink: now a produced topic.
    assert!(driver.produced_topic_names().contains("names"));
    Ok(())
}

#[test]
fn add_global_store_refuses_a_logged_store_and_taken_names() -> TestResult {
    let update = || GlobalNoop;
    let mut topology = Topology::new();
    let logged = topology.add_global_store(
        Stores::key_value_store_builder("s", StringSerde, StringSerde),
        "src",
        "t",
        "proc",
        update,
    );
    assert!(
        matches!(&logged, Err(StreamsError::GlobalStoreLogging { store, topic }) if store == "s" && topic == "t"),
        "{logged:?}"
    );
    topology.add_global_store(
        Stores::key_value_store_builder("s", StringSerde, StringSerde).with_logging_disabled(),
        "src",
        "t",
        "proc",
        update,
    )?;
    let same_topic = topology.add_global_store(
        Stores::key_value_store_builder("s2", StringSerde, StringSerde).with_logging_disabled(),
        "src2",
        "t",
        "proc2",
        update,
    );
    assert!(
        matches!(
            &same_topic,
            Err(StreamsError::Topology(TopologyError::TopicAlreadyRead { topic, .. })) if topic == "t"
        ),
        "{same_topic:?}"
    );
    let same_name = topology.add_source::<S, S>("proc", "other");
    assert!(
        matches!(
            &same_name,
            Err(StreamsError::Topology(TopologyError::DuplicateName { name })) if name == "proc"
        ),
        "{same_name:?}"
    );
    // A global-only topology is valid.
    assert!(topology.validate().is_ok());
    Ok(())
}

struct GlobalNoop;
impl Processor<S, S, (), ()> for GlobalNoop {
    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, (), ()>,
        _r: Record<S, S>,
    ) -> streams_core::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------
// Tables against a reference model, and restore from the changelog
// ---------------------------------------------------------------------

/// A put (`Some`) or a tombstone (`None`) of a small key.
fn updates() -> impl Strategy<Value = Vec<(u8, Option<i32>)>> {
    prop::collection::vec((0u8..8, prop::option::of(any::<i32>())), 0..60)
}

const APP: &str = "prop-app";
const STORE: &str = "table-store";

fn table_topology() -> Result<Topology, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    builder
        .table_with::<S, i32>("table-in", Materialized::as_(STORE))
        .to_stream()
        .to("table-out");
    Ok(builder.build()?)
}

/// The store's entries with timestamps, the changelog as read back (raw),
/// and the reference model.
type TableRun = (
    Vec<(S, ValueAndTimestamp<i32>)>,
    Vec<RawRecord>,
    BTreeMap<S, i32>,
);

/// Pipes the updates; returns the store's content, the changelog as
/// read back (raw) and the reference model: the latest value per key.
fn run_table(updates: &[(u8, Option<i32>)]) -> Result<TableRun, Box<dyn Error>> {
    let driver = TopologyTestDriver::builder(table_topology()?)
        .config(StreamsConfig::new(APP))
        .build()?;
    let input =
        driver.create_input_topic::<S, i32>("table-in", StringSerde, streams_core::serde::I32Serde);
    let mut model = BTreeMap::new();
    for (i, (k, v)) in updates.iter().enumerate() {
        let key = format!("k{k}");
        input.pipe_record(TestRecord::new(Some(key.clone()), *v).at(i as i64));
        match v {
            Some(v) => model.insert(key, *v),
            None => model.remove(&key),
        };
    }
    let store = driver.timestamped_key_value_store::<S, i32>(STORE)?.all();
    let changelog = driver
        .create_output_topic::<Vec<u8>, Vec<u8>>(
            &format!("{APP}-{STORE}-changelog"),
            BytesSerde,
            BytesSerde,
        )
        .read_records_to_list()
        .into_iter()
        .map(|r| RawRecord::new(r.key, r.value, r.timestamp.unwrap_or(-1)))
        .collect();
    Ok((store, changelog, model))
}

proptest! {
    /// A `table()` over a topic holds the latest value per key, for any
    /// sequence of puts and tombstones (read back from its store).
    #[test]
    fn table_equals_the_latest_value_per_key(updates in updates()) {
        let (store, _, model) = run_table(&updates).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let store: BTreeMap<S, i32> = store.into_iter().map(|(k, v)| (k, v.value)).collect();
        prop_assert_eq!(store, model);
    }

    /// A store restored from the table's changelog topic equals the
    /// original store.
    #[test]
    fn store_restored_from_its_changelog_equals_the_original(updates in updates()) {
        let (store, changelog, _) = run_table(&updates).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let builder = Stores::timestamped_key_value_store_builder::<S, i32>(STORE, StringSerde, I32Serde);
        let mut restored = streams_core::state::StoreBuilder::build(&builder, &StreamsConfig::new(APP))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let restored = restored
            .as_any_mut()
            .downcast_mut::<TimestampedKeyValueStore<S, i32>>()
            .ok_or_else(|| TestCaseError::fail("not a timestamped store"))?;
        restored.restore(&changelog).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let restored: Vec<(S, ValueAndTimestamp<i32>)> =
            restored.all().map_err(|e| TestCaseError::fail(e.to_string()))?.collect();
        prop_assert_eq!(restored, store);
    }
}
