//! `KStream::to_table`: ports of Kafka's `KStreamImplTest` toTable cases
//! (describe() text and outputs as Kafka's tests expect them) and
//! `StreamsBuilderTest.shouldNotReuseRepartitionTopicAsChangelogs`, plus
//! the names Kafka gives a named `toTable` and its repartition topic.

use std::collections::{BTreeMap, HashMap};

use pretty_assertions::assert_eq;
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::{Consumed, Grouped, Materialized, StreamsBuilder, StreamsConfig, Topology};
use streams_test::{TestRecord, TopologyTestDriver};

use crate::support::r;

type S = String;

fn consumed() -> Consumed<S, S> {
    Consumed::with(StringSerde, StringSerde)
}

fn driver(topology: &Topology) -> TopologyTestDriver {
    TopologyTestDriver::with_config(topology.clone(), StreamsConfig::new("test-app"))
        .expect("driver starts")
}

/// The six records of Kafka's toTable tests, with out-of-order timestamps.
fn pipe_six(driver: &TopologyTestDriver) {
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("A", "01", 5);
    input.pipe_key_value_at("B", "02", 100);
    input.pipe_key_value_at("C", "03", 0);
    input.pipe_key_value_at("D", "04", 0);
    input.pipe_key_value_at("A", "05", 10);
    input.pipe_key_value_at("A", "06", 8);
}

fn map_of<V: Clone>(pairs: &[(&str, V)]) -> HashMap<S, Option<V>> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Some(v.clone())))
        .collect()
}

/// `KStreamImplTest.shouldNotMaterializedKTableFromKStream`.
#[test]
fn should_not_materialize_ktable_from_kstream() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .to_table()
        .to_stream()
        .to("output");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n\
         \x20     --> KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000003\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000003 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000004\n\
         \x20     <-- KSTREAM-TOTABLE-0000000001\n\
         \x20   Sink: KSTREAM-SINK-0000000004 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000003\n\n"
    );
    let driver = driver(&topology);
    pipe_six(&driver);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    assert_eq!(
        output.read_records_to_list(),
        [
            r("A", "01", 5),
            r("B", "02", 100),
            r("C", "03", 0),
            r("D", "04", 0),
            r("A", "05", 10),
            r("A", "06", 8),
        ]
    );
    assert!(driver.produced_topic_names().iter().all(|t| t == "output"));
}

/// `KStreamImplTest.shouldMaterializeKTableFromKStream`.
#[test]
fn should_materialize_ktable_from_kstream() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .to_table_with(Materialized::as_("store"));
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n\
         \x20     --> KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000001 (stores: [store])\n\
         \x20     --> none\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\n"
    );
    let driver = driver(&topology);
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value("A", "01");
    input.pipe_key_value("B", "02");
    input.pipe_key_value("A", "03");
    let store = driver
        .timestamped_key_value_store::<S, S>("store")
        .expect("the store exists")
        .to_map();
    assert_eq!(
        store,
        BTreeMap::from([("A".into(), "03".into()), ("B".into(), "02".into())])
    );
}

/// `KStreamImplTest.shouldSupportKeyChangeKTableFromKStream`: a `map`
/// before `toTable` sends the records through
/// `KSTREAM-TOTABLE-0000000002-repartition`, with the key serde of the
/// `Materialized` and the stream's value serde.
#[test]
fn should_support_key_change_ktable_from_kstream() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .map(|k, v| {
            (
                i32::from(k.map_or(0, |k| k.as_bytes()[0])) - i32::from(b'A'),
                v.clone(),
            )
        })
        .to_table_with(Materialized::default().with_key_serde(I32Serde))
        .to_stream()
        .to("output");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n\
         \x20     --> KSTREAM-MAP-0000000001\n\
         \x20   Processor: KSTREAM-MAP-0000000001 (stores: [])\n\
         \x20     --> KSTREAM-FILTER-0000000005\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: KSTREAM-FILTER-0000000005 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000004\n\
         \x20     <-- KSTREAM-MAP-0000000001\n\
         \x20   Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-TOTABLE-0000000002-repartition)\n\
         \x20     <-- KSTREAM-FILTER-0000000005\n\
         \n\
         \x20 Sub-topology: 1\n\
         \x20   Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-TOTABLE-0000000002-repartition])\n\
         \x20     --> KSTREAM-TOTABLE-0000000002\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000002 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000007\n\
         \x20     <-- KSTREAM-SOURCE-0000000006\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000007 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000008\n\
         \x20     <-- KSTREAM-TOTABLE-0000000002\n\
         \x20   Sink: KSTREAM-SINK-0000000008 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000007\n\n"
    );
    let driver = driver(&topology);
    pipe_six(&driver);
    let output = driver.create_output_topic("output", I32Serde, StringSerde);
    let rec = |k: i32, v: &str, ts: i64| TestRecord::key_value(k, v.to_owned()).at(ts);
    assert_eq!(
        output.read_records_to_list(),
        [
            rec(0, "01", 5),
            rec(1, "02", 100),
            rec(2, "03", 0),
            rec(3, "04", 0),
            rec(0, "05", 10),
            rec(0, "06", 8),
        ]
    );
    // The repartition topic holds the keys as the Materialized's serde
    // writes them.
    let repartition = driver.create_output_topic(
        "test-app-KSTREAM-TOTABLE-0000000002-repartition",
        I32Serde,
        StringSerde,
    );
    assert_eq!(repartition.read_records_to_list().len(), 6);
}

/// `KStreamImplTest.shouldSupportTableTableJoinWithKStreamToKTable`: the
/// join materializes both tables (`KSTREAM-TOTABLE-STATE-STORE-...`).
#[test]
fn should_support_table_table_join_with_kstream_to_ktable() {
    let builder = StreamsBuilder::new();
    let table1 = builder.stream_with("left", consumed()).to_table();
    let table2 = builder.stream_with("right", consumed()).to_table();
    table1
        .join(&table2, |l, r| format!("{l}+{r}"))
        .to_stream()
        .to("output");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [left])\n\
         \x20     --> KSTREAM-TOTABLE-0000000001\n\
         \x20   Source: KSTREAM-SOURCE-0000000003 (topics: [right])\n\
         \x20     --> KSTREAM-TOTABLE-0000000004\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n\
         \x20     --> KTABLE-JOINTHIS-0000000007\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000004 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])\n\
         \x20     --> KTABLE-JOINOTHER-0000000008\n\
         \x20     <-- KSTREAM-SOURCE-0000000003\n\
         \x20   Processor: KTABLE-JOINOTHER-0000000008 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n\
         \x20     --> KTABLE-MERGE-0000000006\n\
         \x20     <-- KSTREAM-TOTABLE-0000000004\n\
         \x20   Processor: KTABLE-JOINTHIS-0000000007 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000005])\n\
         \x20     --> KTABLE-MERGE-0000000006\n\
         \x20     <-- KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KTABLE-MERGE-0000000006 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000009\n\
         \x20     <-- KTABLE-JOINTHIS-0000000007, KTABLE-JOINOTHER-0000000008\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000009 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000010\n\
         \x20     <-- KTABLE-MERGE-0000000006\n\
         \x20   Sink: KSTREAM-SINK-0000000010 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000009\n\n"
    );
    let driver = driver(&topology);
    let left = driver.create_input_topic("left", StringSerde, StringSerde);
    let right = driver.create_input_topic("right", StringSerde, StringSerde);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    right.pipe_key_value("lhs1", "rhsValue1");
    right.pipe_key_value("rhs2", "rhsValue2");
    right.pipe_key_value("lhs3", "rhsValue3");
    assert_eq!(output.read_key_values_to_map(), HashMap::new());
    left.pipe_key_value("lhs1", "lhsValue1");
    left.pipe_key_value("lhs2", "lhsValue2");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs1", "lhsValue1+rhsValue1".to_owned())])
    );
    left.pipe_key_value("lhs3", "lhsValue3");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs3", "lhsValue3+rhsValue3".to_owned())])
    );
    left.pipe_key_value("lhs1", "lhsValue4");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs1", "lhsValue4+rhsValue1".to_owned())])
    );
}

/// `KStreamImplTest.shouldSupportStreamTableJoinWithKStreamToKTable`.
#[test]
fn should_support_stream_table_join_with_kstream_to_ktable() {
    let builder = StreamsBuilder::new();
    let stream = builder.stream_with("streamTopic", consumed());
    let table = builder.stream_with("tableTopic", consumed()).to_table();
    stream.join(&table, |l, r| format!("{l}+{r}")).to("output");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [streamTopic])\n\
         \x20     --> KSTREAM-JOIN-0000000004\n\
         \x20   Processor: KSTREAM-JOIN-0000000004 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000003])\n\
         \x20     --> KSTREAM-SINK-0000000005\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Source: KSTREAM-SOURCE-0000000001 (topics: [tableTopic])\n\
         \x20     --> KSTREAM-TOTABLE-0000000002\n\
         \x20   Sink: KSTREAM-SINK-0000000005 (topic: output)\n\
         \x20     <-- KSTREAM-JOIN-0000000004\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000002 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000003])\n\
         \x20     --> none\n\
         \x20     <-- KSTREAM-SOURCE-0000000001\n\n"
    );
    let driver = driver(&topology);
    let left = driver.create_input_topic("streamTopic", StringSerde, StringSerde);
    let right = driver.create_input_topic("tableTopic", StringSerde, StringSerde);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    right.pipe_key_value("lhs1", "rhsValue1");
    right.pipe_key_value("rhs2", "rhsValue2");
    right.pipe_key_value("lhs3", "rhsValue3");
    assert_eq!(output.read_key_values_to_map(), HashMap::new());
    left.pipe_key_value("lhs1", "lhsValue1");
    left.pipe_key_value("lhs2", "lhsValue2");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs1", "lhsValue1+rhsValue1".to_owned())])
    );
    left.pipe_key_value("lhs3", "lhsValue3");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs3", "lhsValue3+rhsValue3".to_owned())])
    );
    left.pipe_key_value("lhs1", "lhsValue4");
    assert_eq!(
        output.read_key_values_to_map(),
        map_of(&[("lhs1", "lhsValue4+rhsValue1".to_owned())])
    );
}

/// `KStreamImplTest.shouldSupportGroupByCountWithKStreamToKTable`: the
/// table's `group_by` needs old values, which materializes it.
#[test]
fn should_support_group_by_count_with_kstream_to_ktable() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .to_table()
        .group_by_with(
            |_, v| (v.clone(), v.clone()),
            Grouped::with(StringSerde, StringSerde),
        )
        .count()
        .to_stream()
        .to("output");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n\
         \x20     --> KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000001 (stores: [KSTREAM-TOTABLE-STATE-STORE-0000000002])\n\
         \x20     --> KTABLE-SELECT-0000000003\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: KTABLE-SELECT-0000000003 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000005\n\
         \x20     <-- KSTREAM-TOTABLE-0000000001\n\
         \x20   Sink: KSTREAM-SINK-0000000005 (topic: KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition)\n\
         \x20     <-- KTABLE-SELECT-0000000003\n\
         \n\
         \x20 Sub-topology: 1\n\
         \x20   Source: KSTREAM-SOURCE-0000000006 (topics: [KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition])\n\
         \x20     --> KTABLE-AGGREGATE-0000000007\n\
         \x20   Processor: KTABLE-AGGREGATE-0000000007 (stores: [KTABLE-AGGREGATE-STATE-STORE-0000000004])\n\
         \x20     --> KTABLE-TOSTREAM-0000000008\n\
         \x20     <-- KSTREAM-SOURCE-0000000006\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000008 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000009\n\
         \x20     <-- KTABLE-AGGREGATE-0000000007\n\
         \x20   Sink: KSTREAM-SINK-0000000009 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000008\n\n"
    );
    let driver = driver(&topology);
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("A", "green", 10);
    input.pipe_key_value_at("B", "green", 9);
    input.pipe_key_value_at("A", "blue", 12);
    input.pipe_key_value_at("C", "yellow", 15);
    input.pipe_key_value_at("D", "green", 11);
    let output = driver.create_output_topic("output", StringSerde, I64Serde);
    let rec = |k: &str, v: i64, ts: i64| TestRecord::key_value(k.to_owned(), v).at(ts);
    assert_eq!(
        output.read_records_to_list(),
        [
            rec("green", 1, 10),
            rec("green", 2, 10),
            rec("green", 1, 12),
            rec("blue", 1, 12),
            rec("yellow", 1, 15),
            rec("green", 2, 12),
        ]
    );
}

/// `KStreamImplTest.shouldSupportTriggerMaterializedWithKTableFromKStream`:
/// a materialized `map_values` below leaves the source table without a store.
#[test]
fn should_support_trigger_materialized_with_ktable_from_kstream() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .to_table()
        .map_values_with(
            |_, v| i32::from(v.as_bytes()[0]) - i32::from(b'a'),
            Materialized::as_("store")
                .with_key_serde(StringSerde)
                .with_value_serde(I32Serde),
        )
        .to_stream()
        .to_with(
            "output",
            streams_core::Produced::with(StringSerde, I32Serde),
        );
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [input])\n\
         \x20     --> KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KSTREAM-TOTABLE-0000000001 (stores: [])\n\
         \x20     --> KTABLE-MAPVALUES-0000000003\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: KTABLE-MAPVALUES-0000000003 (stores: [store])\n\
         \x20     --> KTABLE-TOSTREAM-0000000004\n\
         \x20     <-- KSTREAM-TOTABLE-0000000001\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000004 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000005\n\
         \x20     <-- KTABLE-MAPVALUES-0000000003\n\
         \x20   Sink: KSTREAM-SINK-0000000005 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000004\n\n"
    );
    let driver = driver(&topology);
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("A", "green", 10);
    input.pipe_key_value_at("B", "green", 9);
    input.pipe_key_value_at("A", "blue", 12);
    input.pipe_key_value_at("C", "yellow", 15);
    input.pipe_key_value_at("D", "green", 11);
    let store: BTreeMap<S, i32> = driver
        .timestamped_key_value_store::<S, i32>("store")
        .expect("the store exists")
        .to_map();
    assert_eq!(
        store,
        BTreeMap::from([
            ("A".into(), 1),
            ("B".into(), 6),
            ("C".into(), 24),
            ("D".into(), 6)
        ])
    );
    let output = driver.create_output_topic("output", StringSerde, I32Serde);
    let rec = |k: &str, v: i32, ts: i64| TestRecord::key_value(k.to_owned(), v).at(ts);
    assert_eq!(
        output.read_records_to_list(),
        [
            rec("A", 6, 10),
            rec("B", 6, 9),
            rec("A", 1, 12),
            rec("C", 24, 15),
            rec("D", 6, 11),
        ]
    );
}

/// `StreamsBuilderTest.shouldNotReuseRepartitionTopicAsChangelogs` (here
/// without `topology.optimization`, which gives the same): the store after
/// a `repartition()` logs to its own changelog.
#[test]
fn should_not_reuse_repartition_topic_as_changelogs() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<i64, S>("topic")
        .repartition()
        .to_table_with(Materialized::as_("store"));
    let topology = builder.build().expect("valid topology");
    assert_eq!(topology.store_names(), ["store"]);
    let info = topology.topics_info("appId");
    assert_eq!(info.len(), 2);
    assert_eq!(
        info[1].changelog_topics,
        [("store".to_owned(), "appId-store-changelog".to_owned())]
    );
    assert!(info[0].changelog_topics.is_empty());
}

/// A named `toTable` (Kafka's `toTable(Named)`) still takes a counter
/// number; its repartition topic and nodes are named after it, and still
/// take three numbers.
#[test]
fn named_to_table_names_its_node_and_repartition_topic() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .named("latest")
        .to_table_with(Materialized::as_("latest-store"))
        .to_stream()
        .to("out");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n\
         \x20     --> KSTREAM-KEY-SELECT-0000000001\n\
         \x20   Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n\
         \x20     --> latest-repartition-filter\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: latest-repartition-filter (stores: [])\n\
         \x20     --> latest-repartition-sink\n\
         \x20     <-- KSTREAM-KEY-SELECT-0000000001\n\
         \x20   Sink: latest-repartition-sink (topic: latest-repartition)\n\
         \x20     <-- latest-repartition-filter\n\
         \n\
         \x20 Sub-topology: 1\n\
         \x20   Source: latest-repartition-source (topics: [latest-repartition])\n\
         \x20     --> latest\n\
         \x20   Processor: latest (stores: [latest-store])\n\
         \x20     --> KTABLE-TOSTREAM-0000000006\n\
         \x20     <-- latest-repartition-source\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000006 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000007\n\
         \x20     <-- latest\n\
         \x20   Sink: KSTREAM-SINK-0000000007 (topic: out)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000006\n\n"
    );
}

/// Tombstones delete the row (and reach the table's changelog); a record
/// without a key is dropped and counted; the record cache sends one
/// update per key and input record, as for `builder.table`.
#[test]
fn tombstones_delete_and_null_keys_are_dropped() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with("input", consumed())
        .to_table_with(Materialized::as_("rows"))
        .to_stream()
        .to("output");
    let topology = builder.build().expect("valid topology");
    let driver = driver(&topology);
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    input.pipe_key_value_at("a", "1", 0);
    input.pipe_record(TestRecord::tombstone("a").at(1));
    input.pipe_record(TestRecord::tombstone("never").at(2));
    input.pipe_record(TestRecord::value("no key".to_owned()).at(3));
    input.pipe_key_value_at("b", "2", 4);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    assert_eq!(
        output.read_records_to_list(),
        [
            r("a", "1", 0),
            TestRecord::tombstone("a".to_owned()).at(1),
            r("b", "2", 4),
        ]
    );
    assert_eq!(driver.metrics().dropped_records, 1);
    let store = driver
        .timestamped_key_value_store::<S, S>("rows")
        .expect("the store exists")
        .to_map();
    assert_eq!(store, BTreeMap::from([("b".into(), "2".into())]));
}
