//! One test per stateless DSL operator, with the outputs and node names
//! Kafka's own `TopologyTestDriver` gives for the same topology (the
//! oracle's golden files, `compat/golden/<scenario>.json`).
//!
//! Node names: one counter per builder, `PREFIX-%010d`. Kafka burns a
//! counter value for every operator, named or not (`NamedInternal.
//! orElseGenerateWithPrefix`: "we still need to burn index for the
//! operation to keep topology backward compatibility"), except `process`
//! and a named `repartition`; `split` burns one per branch and
//! `repartition` three more (sink, filter, source).

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{
    Branched, Consumed, KStream, Produced, Record, Repartitioned, Result, StreamsBuilder,
    StreamsConfig, Topology,
};
use streams_test::{TestRecord, TopologyTestDriver};

use crate::support::{Log, r, rec, show};

/// The oracle's application id: internal topics are `compat-...`.
const APP: &str = "compat";

fn start(builder: &StreamsBuilder) -> (Topology, TopologyTestDriver) {
    let topology = builder.build().expect("valid topology");
    let driver = TopologyTestDriver::with_config(topology.clone(), StreamsConfig::new(APP))
        .expect("driver starts");
    (topology, driver)
}

fn in_stream(builder: &StreamsBuilder) -> KStream<String, String> {
    builder.stream::<String, String>("in")
}

/// The oracle's `pipeFour`: (k1,a,0) (k2,abcd,1) (k3,abc,2) (k4,abcdef,3).
fn pipe_four(driver: &TopologyTestDriver) {
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "abcd", 1);
    input.pipe_key_value_at("k3", "abc", 2);
    input.pipe_key_value_at("k4", "abcdef", 3);
}

fn read(driver: &TopologyTestDriver, topic: &str) -> Vec<TestRecord<String, String>> {
    driver
        .create_output_topic(topic, StringSerde, StringSerde)
        .read_records_to_list()
}

fn topics(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn filter() {
    let builder = StreamsBuilder::new();
    in_stream(&builder).filter(|_, v| v.len() > 3).to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FILTER-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    pipe_four(&driver);
    assert_eq!(
        read(&driver, "out"),
        [r("k2", "abcd", 1), r("k4", "abcdef", 3)]
    );
}

#[test]
fn filter_not() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .filter_not(|_, v| v.starts_with('x'))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FILTER-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "xa", 0);
    input.pipe_key_value_at("k2", "b", 1);
    input.pipe_key_value_at("k3", "x", 2);
    input.pipe_key_value_at("k4", "cx", 3);
    assert_eq!(read(&driver, "out"), [r("k2", "b", 1), r("k4", "cx", 3)]);
}

#[test]
fn map() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .map(|k, v| (v.clone(), show(k).to_owned()))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-MAP-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    pipe_four(&driver);
    assert_eq!(
        read(&driver, "out"),
        [
            r("a", "k1", 0),
            r("abcd", "k2", 1),
            r("abc", "k3", 2),
            r("abcdef", "k4", 3)
        ]
    );
}

#[test]
fn map_values() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .map_values(|v| v.to_uppercase())
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-MAPVALUES-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    pipe_four(&driver);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "A", 0),
            r("k2", "ABCD", 1),
            r("k3", "ABC", 2),
            r("k4", "ABCDEF", 3)
        ]
    );
}

#[test]
fn map_values_to_another_type() {
    let builder = StreamsBuilder::new();
    in_stream(&builder).map_values(|v| v.len() as i64).to("out");
    let (_, driver) = start(&builder);
    pipe_four(&driver);
    let out = driver.create_output_topic("out", StringSerde, I64Serde);
    assert_eq!(
        out.read_values_to_list(),
        [Some(1), Some(4), Some(3), Some(6)]
    );
}

#[test]
fn map_values_with_key() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .map_values_with_key(|k, v| format!("{}={v}", show(k)))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-MAPVALUES-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    pipe_four(&driver);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "k1=a", 0),
            r("k2", "k2=abcd", 1),
            r("k3", "k3=abc", 2),
            r("k4", "k4=abcdef", 3)
        ]
    );
}

#[test]
fn flat_map() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .flat_map(|k, v| {
            let k = show(k).to_owned();
            if v.is_empty() {
                Vec::new()
            } else {
                vec![(k.clone(), v.clone()), (v.clone(), k)]
            }
        })
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FLATMAP-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 10);
    input.pipe_key_value_at("k2", "", 20);
    input.pipe_key_value_at("k3", "bc", 30);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "a", 10),
            r("a", "k1", 10),
            r("k3", "bc", 30),
            r("bc", "k3", 30)
        ]
    );
}

#[test]
fn flat_map_values() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .flat_map_values(|v| v.chars().map(String::from).collect::<Vec<_>>())
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FLATMAPVALUES-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "ab", 10);
    input.pipe_key_value_at("k2", "", 20);
    input.pipe_key_value_at("k3", "xyz", 30);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "a", 10),
            r("k1", "b", 10),
            r("k3", "x", 30),
            r("k3", "y", 30),
            r("k3", "z", 30)
        ]
    );
}

#[test]
fn select_key() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .select_key(|_, v| v.chars().take(1).collect::<String>())
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-KEY-SELECT-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    pipe_four(&driver);
    assert_eq!(
        read(&driver, "out"),
        [
            r("a", "a", 0),
            r("a", "abcd", 1),
            r("a", "abc", 2),
            r("a", "abcdef", 3)
        ]
    );
}

/// The oracle's `peek_and_foreach`: children run depth-first, in the
/// order they were added.
#[test]
fn peek() {
    let log = Log::new();
    let builder = StreamsBuilder::new();
    let s = in_stream(&builder);
    let (lp, lf) = (log.clone(), log.clone());
    s.clone()
        .peek(move |k, v| lp.push(format!("peek:{}={v}", show(k))))
        .to("out");
    s.foreach(move |k, v| lf.push(format!("foreach:{}={v}", show(k))));
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-PEEK-0000000001",
            "KSTREAM-SINK-0000000002",
            "KSTREAM-FOREACH-0000000003"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(read(&driver, "out"), [r("k1", "a", 0), r("k2", "b", 1)]);
    assert_eq!(
        log.entries(),
        ["peek:k1=a", "foreach:k1=a", "peek:k2=b", "foreach:k2=b"]
    );
}

/// The oracle's `foreach_only`: a topology without any sink. Kafka's
/// closure also sees the tombstone (`foreach:k3=null`); here closures
/// never see tombstones and `foreach` skips them (see `streams_core::dsl`).
#[test]
fn foreach() {
    let log = Log::new();
    let builder = StreamsBuilder::new();
    let lf = log.clone();
    in_stream(&builder).foreach(move |k, v| lf.push(format!("foreach:{}={v}", show(k))));
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        ["KSTREAM-SOURCE-0000000000", "KSTREAM-FOREACH-0000000001"]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_record(TestRecord::value("b").at(1));
    input.pipe_record(TestRecord::tombstone("k3").at(2));
    assert_eq!(log.entries(), ["foreach:k1=a", "foreach:null=b"]);
    assert_eq!(driver.produced_topic_names(), BTreeSet::new());
    assert_eq!(driver.metrics().processed_records, 3);
}

/// The oracle's `split_named_branches`, outputs only.
#[test]
fn split_named_branches_and_with_function() {
    let builder = StreamsBuilder::new();
    let branches = in_stream(&builder)
        .named("split-")
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::as_("a"))
        .branch(
            |_, v| v.starts_with('b'),
            Branched::with_function(|ks: KStream<String, String>| {
                Some(ks.map_values(|v| v.to_uppercase()))
            })
            .with_name("b"),
        )
        .default_branch(Branched::as_("other"));
    assert_eq!(
        branches.keys().map(String::as_str).collect::<Vec<_>>(),
        ["split-a", "split-b", "split-other"]
    );
    for (name, topic) in [
        ("split-a", "out-a"),
        ("split-b", "out-b"),
        ("split-other", "out-other"),
    ] {
        branches[name].clone().to(topic);
    }
    let (_, driver) = start(&builder);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "apple", 0);
    input.pipe_key_value_at("k2", "banana", 1);
    input.pipe_key_value_at("k3", "cherry", 2);
    input.pipe_key_value_at("k4", "ab", 3);
    input.pipe_key_value_at("k5", "avocado", 4);
    assert_eq!(
        read(&driver, "out-a"),
        [r("k1", "apple", 0), r("k4", "ab", 3), r("k5", "avocado", 4)]
    );
    assert_eq!(read(&driver, "out-b"), [r("k2", "BANANA", 1)]);
    assert_eq!(read(&driver, "out-other"), [r("k3", "cherry", 2)]);
}

/// The oracle's `split_named_branches`, node names: the named splitter
/// and every branch burn a counter value.
#[test]
fn split_named_branches_node_names() {
    let builder = StreamsBuilder::new();
    let branches = in_stream(&builder)
        .named("split-")
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::as_("a"))
        .branch(
            |_, v| v.starts_with('b'),
            Branched::with_function(|ks: KStream<String, String>| {
                Some(ks.map_values(|v| v.to_uppercase()))
            })
            .with_name("b"),
        )
        .default_branch(Branched::as_("other"));
    for (name, topic) in [
        ("split-a", "out-a"),
        ("split-b", "out-b"),
        ("split-other", "out-other"),
    ] {
        branches[name].clone().to(topic);
    }
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "split-",
            "split-a",
            "split-b",
            "KSTREAM-MAPVALUES-0000000004",
            "split-other",
            "KSTREAM-SINK-0000000006",
            "KSTREAM-SINK-0000000007",
            "KSTREAM-SINK-0000000008",
        ]
    );
}

/// The oracle's `split_generated_branch_names`: branches are named after
/// their position (the default branch is 0), each burning a counter value.
#[test]
fn split_unnamed_branches_with_default() {
    let builder = StreamsBuilder::new();
    let branches = in_stream(&builder)
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::new())
        .branch(|_, v| v.starts_with('b'), Branched::new())
        .default_branch(Branched::new());
    let keys: Vec<String> = branches.keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "KSTREAM-BRANCH-00000000010",
            "KSTREAM-BRANCH-00000000011",
            "KSTREAM-BRANCH-00000000012"
        ]
    );
    for key in &keys {
        let suffix = &key[key.len() - 1..];
        branches[key].clone().to(&format!("out-{suffix}"));
    }
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-BRANCH-0000000001",
            "KSTREAM-BRANCH-00000000011",
            "KSTREAM-BRANCH-00000000012",
            "KSTREAM-BRANCH-00000000010",
            "KSTREAM-SINK-0000000005",
            "KSTREAM-SINK-0000000006",
            "KSTREAM-SINK-0000000007",
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "apple", 0);
    input.pipe_key_value_at("k2", "banana", 1);
    input.pipe_key_value_at("k3", "cherry", 2);
    assert_eq!(read(&driver, "out-0"), [r("k3", "cherry", 2)]);
    assert_eq!(read(&driver, "out-1"), [r("k1", "apple", 0)]);
    assert_eq!(read(&driver, "out-2"), [r("k2", "banana", 1)]);
}

/// The oracle's `split_unnamed_no_default`: branches consumed by their
/// function (Kafka's `Branched.withConsumer`) are not in the map, and
/// records no predicate matches are dropped.
#[test]
fn split_without_default_branch() {
    let builder = StreamsBuilder::new();
    let branches = in_stream(&builder)
        .split()
        .branch(
            |_, v| v.starts_with('a'),
            Branched::with_function(|ks: KStream<String, String>| {
                ks.to("out-a");
                None
            }),
        )
        .branch(
            |_, v| v.starts_with('b'),
            Branched::with_function(|ks: KStream<String, String>| {
                ks.to("out-b");
                None
            }),
        )
        .no_default_branch();
    assert!(branches.is_empty());
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-BRANCH-0000000001",
            "KSTREAM-BRANCH-00000000011",
            "KSTREAM-SINK-0000000003",
            "KSTREAM-BRANCH-00000000012",
            "KSTREAM-SINK-0000000005",
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "apple", 0);
    input.pipe_key_value_at("k2", "banana", 1);
    input.pipe_key_value_at("k3", "cherry", 2);
    assert_eq!(read(&driver, "out-a"), [r("k1", "apple", 0)]);
    assert_eq!(read(&driver, "out-b"), [r("k2", "banana", 1)]);
    assert_eq!(driver.produced_topic_names(), topics(&["out-a", "out-b"]));
}

/// The oracle's `merge`: records keep their order of arrival, not of
/// timestamp.
#[test]
fn merge() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<String, String>("in1");
    let s2 = builder.stream::<String, String>("in2");
    s1.merge(&s2).to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-SOURCE-0000000001",
            "KSTREAM-MERGE-0000000002",
            "KSTREAM-SINK-0000000003"
        ]
    );
    let in1 = driver.create_input_topic("in1", StringSerde, StringSerde);
    let in2 = driver.create_input_topic("in2", StringSerde, StringSerde);
    in1.pipe_key_value_at("a1", "x", 5);
    in2.pipe_key_value_at("b1", "y", 3);
    in1.pipe_key_value_at("a2", "z", 1);
    in2.pipe_key_value_at("b2", "w", 7);
    assert_eq!(
        read(&driver, "out"),
        [
            r("a1", "x", 5),
            r("b1", "y", 3),
            r("a2", "z", 1),
            r("b2", "w", 7)
        ]
    );
}

/// The oracle's `merge_with_self_derived`: the source forwards to the
/// mapValues node first (added first), then to the merge.
#[test]
fn merge_with_self_derived_stream() {
    let builder = StreamsBuilder::new();
    let s = in_stream(&builder);
    let mapped = s.clone().map_values(|v| format!("{v}'"));
    s.merge(&mapped).to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-MAPVALUES-0000000001",
            "KSTREAM-MERGE-0000000002",
            "KSTREAM-SINK-0000000003"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "a'", 0),
            r("k1", "a", 0),
            r("k2", "b'", 1),
            r("k2", "b", 1)
        ]
    );
}

/// The oracle's `to_fixed_topic`.
#[test]
fn to_fixed_topic() {
    let builder = StreamsBuilder::new();
    in_stream(&builder).to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        ["KSTREAM-SOURCE-0000000000", "KSTREAM-SINK-0000000001"]
    );
    assert_eq!(
        topology
            .sink_topics()
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["out"]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "v1", 100);
    input.pipe_record(TestRecord::value("v2").at(50));
    assert_eq!(
        read(&driver, "out"),
        [r("k1", "v1", 100), rec(None, Some("v2"), 50)]
    );
    assert_eq!(driver.produced_topic_names(), topics(&["out"]));
}

#[test]
fn to_with_produced_serdes_and_name() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<String, String>(
            "in",
            Consumed::with(StringSerde, StringSerde).with_name("src"),
        )
        .map_values(|v| v.len() as i64)
        .to_with(
            "out",
            Produced::with(StringSerde, I64Serde).with_name("sink"),
        );
    let (topology, driver) = start(&builder);
    assert_eq!(topology.node_names()[0], "src");
    assert_eq!(topology.node_names()[2], "sink");
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "four", 4);
    assert_eq!(
        driver
            .create_output_topic("out", StringSerde, I64Serde)
            .read_record(),
        TestRecord::key_value("k", 4).at(4)
    );
}

fn first_char_topic(record: &Record<String, String>) -> String {
    let first: String = record
        .value
        .as_deref()
        .unwrap_or_default()
        .chars()
        .take(1)
        .collect();
    format!("out-{first}")
}

/// The oracle's `to_topic_name_extractor`.
#[test]
fn to_dynamic() {
    let builder = StreamsBuilder::new();
    in_stream(&builder).to_dynamic(first_char_topic);
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        ["KSTREAM-SOURCE-0000000000", "KSTREAM-SINK-0000000001"]
    );
    assert!(
        topology.sink_topics().is_empty(),
        "the topic is chosen per record"
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "x1", 0);
    input.pipe_key_value_at("k2", "y1", 1);
    input.pipe_key_value_at("k3", "x2", 2);
    input.pipe_key_value_at("k4", "z1", 3);
    assert_eq!(read(&driver, "out-x"), [r("k1", "x1", 0), r("k3", "x2", 2)]);
    assert_eq!(read(&driver, "out-y"), [r("k2", "y1", 1)]);
    assert_eq!(read(&driver, "out-z"), [r("k4", "z1", 3)]);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out-x", "out-y", "out-z"])
    );
}

/// The oracle's `process_custom_processor`: forwards the record with
/// `@timestamp` appended, then a running count.
struct CountingProcessor {
    count: u64,
}

impl Processor<String, String> for CountingProcessor {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        self.count += 1;
        let ts = record.timestamp;
        let value = format!("{}@{ts}", record.value.clone().unwrap_or_default());
        ctx.forward(record.with_value(Some(value)))?;
        ctx.forward(Record::new(
            Some("count".to_owned()),
            Some(self.count.to_string()),
            ts,
        ))
    }
}

#[test]
fn process_with_custom_processor() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .process(|| CountingProcessor { count: 0 })
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-PROCESSOR-0000000001",
            "KSTREAM-SINK-0000000002"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 10);
    input.pipe_key_value_at("k2", "b", 20);
    input.pipe_key_value_at("k3", "c", 15);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "a@10", 10),
            r("count", "1", 10),
            r("k2", "b@20", 20),
            r("count", "2", 20),
            r("k3", "c@15", 15),
            r("count", "3", 15),
        ]
    );
}

/// `repartition()` right after the source: the internal topic takes the
/// repartition's counter value, 1, and the sink, filter and source burn
/// three more.
#[test]
fn repartition_unnamed_after_source() {
    let builder = StreamsBuilder::new();
    in_stream(&builder).repartition().to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FILTER-0000000003",
            "KSTREAM-SINK-0000000002",
            "KSTREAM-SOURCE-0000000004",
            "KSTREAM-SINK-0000000005",
        ]
    );
    let internal = "KSTREAM-REPARTITION-0000000001-repartition";
    let source_topics: Vec<_> = topology.source_topics().into_iter().cloned().collect();
    assert_eq!(source_topics.len(), 2);
    assert_eq!(
        (source_topics[1].name.as_str(), source_topics[1].internal),
        (internal, true)
    );
    assert_eq!(source_topics[1].full_name(APP), format!("{APP}-{internal}"));

    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "v", 3);
    assert_eq!(read(&driver, "out"), [r("k", "v", 3)]);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["compat-KSTREAM-REPARTITION-0000000001-repartition", "out"])
    );
    assert_eq!(
        read(&driver, "compat-KSTREAM-REPARTITION-0000000001-repartition"),
        [r("k", "v", 3)],
        "the internal topic's records are readable too"
    );
}

/// The oracle's `repartition_unnamed`.
#[test]
fn repartition_unnamed_after_select_key() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .select_key(|_, v| v.clone())
        .repartition()
        .map_values(|v| format!("{v}!"))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-KEY-SELECT-0000000001",
            "KSTREAM-FILTER-0000000004",
            "KSTREAM-SINK-0000000003",
            "KSTREAM-SOURCE-0000000005",
            "KSTREAM-MAPVALUES-0000000006",
            "KSTREAM-SINK-0000000007",
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(read(&driver, "out"), [r("a", "a!", 0), r("b", "b!", 1)]);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["compat-KSTREAM-REPARTITION-0000000002-repartition", "out"])
    );
}

/// The oracle's `repartition_named`: headers survive the internal topic.
#[test]
fn repartition_named() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .select_key(|_, v| v.clone())
        .repartition_with(Repartitioned::as_("rekeyed"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-KEY-SELECT-0000000001",
            "rekeyed-repartition-filter",
            "rekeyed-repartition-sink",
            "rekeyed-repartition-source",
            "KSTREAM-MAPVALUES-0000000005",
            "KSTREAM-SINK-0000000006",
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(TestRecord::key_value("k1", "a").with_header("h", "1").at(0));
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(
        read(&driver, "out"),
        [r("a", "a!", 0).with_header("h", "1"), r("b", "b!", 1)]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["compat-rekeyed-repartition", "out"])
    );
}

/// The oracle's `generated_names`: merge, filter, an unnamed split whose
/// branches are consumed by functions, the default branch mapped.
#[test]
fn generated_names_with_counter_gaps() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<String, String>("in1");
    let s2 = builder.stream::<String, String>("in2");
    let _ = s1
        .merge(&s2)
        .filter(|_, v| !v.is_empty())
        .split()
        .branch(
            |_, v| v.starts_with('a'),
            Branched::with_function(|ks: KStream<String, String>| {
                ks.to("out-a");
                None
            }),
        )
        .default_branch(Branched::with_function(|ks: KStream<String, String>| {
            ks.map_values(|v| format!("{v}?")).to("out-rest");
            None
        }));
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-SOURCE-0000000001",
            "KSTREAM-MERGE-0000000002",
            "KSTREAM-FILTER-0000000003",
            "KSTREAM-BRANCH-0000000004",
            "KSTREAM-BRANCH-00000000041",
            "KSTREAM-SINK-0000000006",
            "KSTREAM-BRANCH-00000000040",
            "KSTREAM-MAPVALUES-0000000008",
            "KSTREAM-SINK-0000000009",
        ]
    );
    let in1 = driver.create_input_topic("in1", StringSerde, StringSerde);
    let in2 = driver.create_input_topic("in2", StringSerde, StringSerde);
    in1.pipe_key_value_at("k1", "apple", 0);
    in2.pipe_key_value_at("k2", "kiwi", 1);
    in2.pipe_key_value_at("k3", "", 2);
    assert_eq!(read(&driver, "out-a"), [r("k1", "apple", 0)]);
    assert_eq!(read(&driver, "out-rest"), [r("k2", "kiwi?", 1)]);
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["out-a", "out-rest"])
    );
}

/// The oracle's `named_operators`: named operators (`Consumed::as_`,
/// `named`, `Produced::as_`) take their name and still burn a counter
/// value, so the generated names in between have gaps.
#[test]
fn named_operators_burn_counter_values() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<String, String>("in", Consumed::as_("src"))
        .named("keep-long")
        .filter(|_, v| v.len() > 1)
        .map_values(|v| v.to_uppercase())
        .named("rekey")
        .select_key(|_, v| v.clone())
        .peek(|_, _| {})
        .to_with("out", Produced::as_("sink"));
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "src",
            "keep-long",
            "KSTREAM-MAPVALUES-0000000002",
            "rekey",
            "KSTREAM-PEEK-0000000004",
            "sink"
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "bb", 1);
    assert_eq!(read(&driver, "out"), [r("BB", "BB", 1)]);
}

/// The oracle's `mixed_named_and_generated`.
#[test]
fn mixed_named_and_generated_names() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .map_values(|v| format!("{v}1"))
        .named("second")
        .map_values(|v| format!("{v}2"))
        .map_values(|v| format!("{v}3"))
        .named("always")
        .filter(|_, _| true)
        .filter(|_, _| true)
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-MAPVALUES-0000000001",
            "second",
            "KSTREAM-MAPVALUES-0000000003",
            "always",
            "KSTREAM-FILTER-0000000005",
            "KSTREAM-SINK-0000000006",
        ]
    );
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "v", 0);
    assert_eq!(read(&driver, "out"), [r("k", "v123", 0)]);
}

/// Kafka's `process` with a name does not burn a counter value.
#[test]
fn named_process_takes_no_counter_value() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .named("counter")
        .process(|| CountingProcessor { count: 0 })
        .to("out");
    let topology = builder.build().expect("valid topology");
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "counter",
            "KSTREAM-SINK-0000000001"
        ]
    );
}

/// The oracle's `chained_operators`.
#[test]
fn chained_operators() {
    let builder = StreamsBuilder::new();
    in_stream(&builder)
        .filter(|_, v| !v.is_empty())
        .map_values(|v| v.to_uppercase())
        .select_key(|k, v| format!("{}-{}", show(k), v.len()))
        .flat_map_values(|v| vec![v.clone(), format!("{v}{v}")])
        .filter_not(|_, v| v == "BB")
        .map(|k, v| (v.clone(), show(k).to_owned()))
        .to("out");
    let (topology, driver) = start(&builder);
    assert_eq!(
        topology.node_names(),
        [
            "KSTREAM-SOURCE-0000000000",
            "KSTREAM-FILTER-0000000001",
            "KSTREAM-MAPVALUES-0000000002",
            "KSTREAM-KEY-SELECT-0000000003",
            "KSTREAM-FLATMAPVALUES-0000000004",
            "KSTREAM-FILTER-0000000005",
            "KSTREAM-MAP-0000000006",
            "KSTREAM-SINK-0000000007",
        ]
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "", 1);
    input.pipe_key_value_at("k3", "b", 2);
    input.pipe_key_value_at("k4", "cd", 3);
    assert_eq!(
        read(&driver, "out"),
        [
            r("A", "k1-1", 0),
            r("AA", "k1-1", 0),
            r("B", "k3-1", 2),
            r("CD", "k4-2", 3),
            r("CDCD", "k4-2", 3),
        ]
    );
}

/// The oracle's `fan_out_order`: children get each record in the order
/// they were added, depth-first.
#[test]
fn fan_out_order() {
    let builder = StreamsBuilder::new();
    let s = in_stream(&builder);
    s.clone().map_values(|v| format!("1:{v}")).to("out");
    s.clone().map_values(|v| format!("2:{v}")).to("out");
    s.filter(|_, v| v == "b").to("out-b");
    let (_, driver) = start(&builder);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "1:a", 0),
            r("k1", "2:a", 0),
            r("k2", "1:b", 1),
            r("k2", "2:b", 1)
        ]
    );
    assert_eq!(read(&driver, "out-b"), [r("k2", "b", 1)]);
}

/// The oracle's `pattern_source`.
#[test]
fn pattern_source() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(streams_core::Topics::pattern("in-.*"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let (_, driver) = start(&builder);
    let a = driver.create_input_topic("in-a", StringSerde, StringSerde);
    let b = driver.create_input_topic("in-b", StringSerde, StringSerde);
    a.pipe_key_value_at("k1", "a1", 0);
    b.pipe_key_value_at("k2", "b1", 1);
    a.pipe_key_value_at("k3", "a2", 2);
    assert_eq!(
        read(&driver, "out"),
        [r("k1", "a1!", 0), r("k2", "b1!", 1), r("k3", "a2!", 2)]
    );
}

/// The oracle's `null_keys_and_values`, the parts where this library
/// agrees with Kafka: null keys and tombstones pass through `to`,
/// `map_values` keeps a null key, and a tombstone stays a tombstone.
/// (Kafka's closures also see tombstones: its `mapValues` maps the null
/// to `"<null>"` and its `filter((k, v) -> k != null)` drops
/// `(null, null)`; here closures never see tombstones, see
/// `streams_core::dsl`.)
#[test]
fn null_keys_and_tombstones() {
    let builder = StreamsBuilder::new();
    let s = in_stream(&builder);
    s.clone().to("out-raw");
    s.clone().map_values(|v| v.to_uppercase()).to("out-mapped");
    s.filter(|k, _| k.is_some()).to("out-filtered");
    let (_, driver) = start(&builder);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(TestRecord::value("x").at(0));
    input.pipe_record(TestRecord::tombstone("k2").at(1));
    input.pipe_record(TestRecord::new(None, None).at(2));
    input.pipe_key_value_at("k4", "y", 3);
    assert_eq!(
        read(&driver, "out-raw"),
        [
            rec(None, Some("x"), 0),
            rec(Some("k2"), None, 1),
            rec(None, None, 2),
            rec(Some("k4"), Some("y"), 3)
        ]
    );
    assert_eq!(
        read(&driver, "out-mapped"),
        [
            rec(None, Some("X"), 0),
            rec(Some("k2"), None, 1),
            rec(None, None, 2),
            rec(Some("k4"), Some("Y"), 3)
        ]
    );
    // Kafka: [(k2, null, 1), (k4, y, 3)]; here the tombstone with a null
    // key passes the filter unseen.
    assert_eq!(
        read(&driver, "out-filtered"),
        [
            rec(Some("k2"), None, 1),
            rec(None, None, 2),
            rec(Some("k4"), Some("y"), 3)
        ]
    );
}

/// Operators that must compute a key from the value drop tombstones and
/// count them; the others pass them on.
#[test]
fn key_changing_operators_drop_and_count_tombstones() {
    let builder = StreamsBuilder::new();
    let s = in_stream(&builder);
    s.clone()
        .map(|k, v| (v.clone(), show(k).to_owned()))
        .to("mapped");
    s.clone()
        .flat_map(|k, v| [(v.clone(), show(k).to_owned())])
        .to("flat-mapped");
    s.clone().select_key(|_, v| v.clone()).to("rekeyed");
    s.flat_map_values(|v| [v.clone(), v.clone()])
        .to("flat-mapped-values");
    let (_, driver) = start(&builder);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(TestRecord::tombstone("k").at(5));
    assert_eq!(driver.metrics().processed_records, 1);
    assert_eq!(driver.metrics().dropped_records, 3);
    assert_eq!(
        read(&driver, "flat-mapped-values"),
        [rec(Some("k"), None, 5)]
    );
    assert_eq!(
        driver.produced_topic_names(),
        topics(&["flat-mapped-values"])
    );
}
