//! `topology.optimization` (`StreamsBuilder::build_with`): ports of Kafka's
//! `StreamsGraphTest`, `RepartitionOptimizingTest`,
//! `RepartitionWithMergeOptimizingTest`, the optimization cases of
//! `StreamsBuilderTest`, `InternalStreamsBuilderTest` and
//! `KStreamKStreamSelfJoinTest`, with Kafka's expected `describe()` texts
//! and outputs, and the bad input of our own. The oracle scenarios of
//! `compat/` (`OptimizationScenarios`) check the same against Kafka 4.4.0
//! itself.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::config::{NO_OPTIMIZATION, OPTIMIZE};
use streams_core::dsl::{BufferConfig, JoinWindows, StreamJoined, Suppressed, TimeWindows};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::{
    Branched, Consumed, Grouped, Joined, KStream, Materialized, Produced, Record, Result,
    StreamsBuilder, StreamsConfig, Topology,
};
use streams_test::TopologyTestDriver;

type S = String;

fn optimized(value: &str) -> StreamsConfig {
    StreamsConfig::new("test-app").with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, value)
}

fn describe(t: &Topology) -> String {
    t.describe().to_string()
}

/// `StreamsGraphTest.shouldOptimizeSeveralMergeNodesWithCommonKeyChangingParent`.
#[test]
fn should_optimize_several_merge_nodes_with_common_key_changing_parent() {
    let builder = StreamsBuilder::new();
    let parent = builder
        .stream_with("input_topic", Consumed::with(I32Serde, I32Serde))
        .select_key(|k, v| k.copied().unwrap_or(0) + v);
    let child1 = parent.clone().map_values(|v| v + 1);
    let child2 = parent.clone().map_values(|v| v + 2);
    let child3 = parent.map_values(|v| v + 3);
    child1.merge(&child2).merge(&child3).to("output_topic");
    let topology = builder.build_with(&optimized("all")).expect("optimized");
    assert_eq!(
        describe(&topology),
        "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: [input_topic])\n      --> KSTREAM-KEY-SELECT-0000000001\n    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])\n      --> KSTREAM-MAPVALUES-0000000002, KSTREAM-MAPVALUES-0000000003, KSTREAM-MAPVALUES-0000000004\n      <-- KSTREAM-SOURCE-0000000000\n    Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])\n      --> KSTREAM-MERGE-0000000005\n      <-- KSTREAM-KEY-SELECT-0000000001\n    Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])\n      --> KSTREAM-MERGE-0000000005\n      <-- KSTREAM-KEY-SELECT-0000000001\n    Processor: KSTREAM-MAPVALUES-0000000004 (stores: [])\n      --> KSTREAM-MERGE-0000000006\n      <-- KSTREAM-KEY-SELECT-0000000001\n    Processor: KSTREAM-MERGE-0000000005 (stores: [])\n      --> KSTREAM-MERGE-0000000006\n      <-- KSTREAM-MAPVALUES-0000000002, KSTREAM-MAPVALUES-0000000003\n    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n      --> KSTREAM-SINK-0000000007\n      <-- KSTREAM-MERGE-0000000005, KSTREAM-MAPVALUES-0000000004\n    Sink: KSTREAM-SINK-0000000007 (topic: output_topic)\n      <-- KSTREAM-MERGE-0000000006\n\n"
    );
}

/// A processor that forwards what it gets (the `processorSupplier` of
/// `StreamsGraphTest.shouldNotThrowNPEWithMergeNodes`).
struct Forward;

impl Processor<S, S> for Forward {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        ctx.forward(r)
    }
}

/// `StreamsGraphTest.shouldNotThrowNPEWithMergeNodes` (KAFKA-9739): merge
/// nodes whose key-changing parents have no repartition topic of their
/// own, and a lone repartition topic rewritten after its `flatMap` (its
/// `peek` now after it), with Kafka's exact text.
#[test]
fn should_not_throw_npe_with_merge_nodes() {
    let builder = StreamsBuilder::new();
    let initializer = String::new;
    let aggregator = |_: &S, v: &S, agg: S| format!("{agg}{}", v.len());
    let retry = builder
        .stream_with::<S, S>("retryTopic", Consumed::with(StringSerde, StringSerde))
        .process(|| Forward)
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .aggregate(initializer, aggregator)
        .suppress(Suppressed::until_time_limit(
            Duration::from_secs(500),
            BufferConfig::max_bytes(64_000_000),
        ))
        .to_stream()
        .flat_map(|_, _| Vec::<(S, S)>::new());
    let id_table = builder
        .stream_with::<S, S>("id-table-topic", Consumed::with(StringSerde, StringSerde))
        .flat_map(|_, _| Vec::<(S, S)>::new())
        .peek(|_, _| {})
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .aggregate(initializer, aggregator);
    let join = builder
        .stream_with::<S, S>(
            "internal-topic-command",
            Consumed::with(StringSerde, StringSerde),
        )
        .peek(|_, _| {})
        .map_values_with_key(|_, v| v.clone())
        .merge(&retry)
        .left_join_with(
            &id_table,
            |v1, v2| format!("{v1}{}", v2.map_or("null", String::as_str)),
            Joined::with(StringSerde, StringSerde),
        );
    join.split()
        .branch(
            |_, v| v == "some-value",
            Branched::with_function(|ks: KStream<S, S>| {
                ks.map(|k, v| (k.cloned().unwrap_or_default(), v.clone()))
                    .peek(|_, _| {})
                    .to_with("external-command", Produced::with(StringSerde, StringSerde));
                None
            }),
        )
        .default_branch(Branched::with_function(|ks: KStream<S, S>| {
            ks.clone()
                .filter(|_, _| true)
                .peek(|_, _| {})
                .map_values_with_key(|_, v| v.clone())
                .to_with("dlq-topic", Produced::with(StringSerde, StringSerde));
            ks.map(|k, v| (k.cloned().unwrap_or_default(), v.clone()))
                .to_with("retryTopic", Produced::with(StringSerde, StringSerde));
            None
        }));
    let topology = builder.build_with(&optimized(OPTIMIZE)).expect("optimized");
    assert_eq!(describe(&topology), EXPECTED_COMPLEX_MERGE_OPTIMIZED);
}

const EXPECTED_COMPLEX_MERGE_OPTIMIZED: &str = "Topologies:\n\
   \x20  Sub-topology: 0\n\
   \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [retryTopic])\n\
   \x20     --> KSTREAM-PROCESSOR-0000000001\n\
   \x20   Processor: KSTREAM-PROCESSOR-0000000001 (stores: [])\n\
   \x20     --> KSTREAM-FILTER-0000000005\n\
   \x20     <-- KSTREAM-SOURCE-0000000000\n\
   \x20   Processor: KSTREAM-FILTER-0000000005 (stores: [])\n\
   \x20     --> KSTREAM-SINK-0000000004\n\
   \x20     <-- KSTREAM-PROCESSOR-0000000001\n\
   \x20   Sink: KSTREAM-SINK-0000000004 (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition)\n\
   \x20     <-- KSTREAM-FILTER-0000000005\n\
   \n\
   \x20 Sub-topology: 1\n\
   \x20   Source: KSTREAM-SOURCE-0000000006 (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition])\n\
   \x20     --> KSTREAM-AGGREGATE-0000000003\n\
   \x20   Processor: KSTREAM-AGGREGATE-0000000003 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000002])\n\
   \x20     --> KTABLE-SUPPRESS-0000000007\n\
   \x20     <-- KSTREAM-SOURCE-0000000006\n\
   \x20   Source: KSTREAM-SOURCE-0000000019 (topics: [internal-topic-command])\n\
   \x20     --> KSTREAM-PEEK-0000000020\n\
   \x20   Processor: KTABLE-SUPPRESS-0000000007 (stores: [KTABLE-SUPPRESS-STATE-STORE-0000000008])\n\
   \x20     --> KTABLE-TOSTREAM-0000000009\n\
   \x20     <-- KSTREAM-AGGREGATE-0000000003\n\
   \x20   Processor: KSTREAM-PEEK-0000000020 (stores: [])\n\
   \x20     --> KSTREAM-MAPVALUES-0000000021\n\
   \x20     <-- KSTREAM-SOURCE-0000000019\n\
   \x20   Processor: KTABLE-TOSTREAM-0000000009 (stores: [])\n\
   \x20     --> KSTREAM-FLATMAP-0000000010\n\
   \x20     <-- KTABLE-SUPPRESS-0000000007\n\
   \x20   Processor: KSTREAM-FLATMAP-0000000010 (stores: [])\n\
   \x20     --> KSTREAM-MERGE-0000000022\n\
   \x20     <-- KTABLE-TOSTREAM-0000000009\n\
   \x20   Processor: KSTREAM-MAPVALUES-0000000021 (stores: [])\n\
   \x20     --> KSTREAM-MERGE-0000000022\n\
   \x20     <-- KSTREAM-PEEK-0000000020\n\
   \x20   Processor: KSTREAM-MERGE-0000000022 (stores: [])\n\
   \x20     --> KSTREAM-FILTER-0000000024\n\
   \x20     <-- KSTREAM-MAPVALUES-0000000021, KSTREAM-FLATMAP-0000000010\n\
   \x20   Processor: KSTREAM-FILTER-0000000024 (stores: [])\n\
   \x20     --> KSTREAM-SINK-0000000023\n\
   \x20     <-- KSTREAM-MERGE-0000000022\n\
   \x20   Sink: KSTREAM-SINK-0000000023 (topic: KSTREAM-MERGE-0000000022-repartition)\n\
   \x20     <-- KSTREAM-FILTER-0000000024\n\
   \n\
   \x20 Sub-topology: 2\n\
   \x20   Source: KSTREAM-SOURCE-0000000011 (topics: [id-table-topic])\n\
   \x20     --> KSTREAM-FLATMAP-0000000012\n\
   \x20   Processor: KSTREAM-FLATMAP-0000000012 (stores: [])\n\
   \x20     --> KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-filter\n\
   \x20     <-- KSTREAM-SOURCE-0000000011\n\
   \x20   Processor: KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-filter (stores: [])\n\
   \x20     --> KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-sink\n\
   \x20     <-- KSTREAM-FLATMAP-0000000012\n\
   \x20   Sink: KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-sink (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition)\n\
   \x20     <-- KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-filter\n\
   \n\
   \x20 Sub-topology: 3\n\
   \x20   Source: KSTREAM-SOURCE-0000000025 (topics: [KSTREAM-MERGE-0000000022-repartition])\n\
   \x20     --> KSTREAM-LEFTJOIN-0000000026\n\
   \x20   Processor: KSTREAM-LEFTJOIN-0000000026 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000014])\n\
   \x20     --> KSTREAM-BRANCH-0000000027\n\
   \x20     <-- KSTREAM-SOURCE-0000000025\n\
   \x20   Processor: KSTREAM-BRANCH-0000000027 (stores: [])\n\
   \x20     --> KSTREAM-BRANCH-00000000270, KSTREAM-BRANCH-00000000271\n\
   \x20     <-- KSTREAM-LEFTJOIN-0000000026\n\
   \x20   Processor: KSTREAM-BRANCH-00000000270 (stores: [])\n\
   \x20     --> KSTREAM-FILTER-0000000033, KSTREAM-MAP-0000000037\n\
   \x20     <-- KSTREAM-BRANCH-0000000027\n\
   \x20   Processor: KSTREAM-BRANCH-00000000271 (stores: [])\n\
   \x20     --> KSTREAM-MAP-0000000029\n\
   \x20     <-- KSTREAM-BRANCH-0000000027\n\
   \x20   Processor: KSTREAM-FILTER-0000000033 (stores: [])\n\
   \x20     --> KSTREAM-PEEK-0000000034\n\
   \x20     <-- KSTREAM-BRANCH-00000000270\n\
   \x20   Source: KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-source (topics: [KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition])\n\
   \x20     --> KSTREAM-PEEK-0000000013\n\
   \x20   Processor: KSTREAM-MAP-0000000029 (stores: [])\n\
   \x20     --> KSTREAM-PEEK-0000000030\n\
   \x20     <-- KSTREAM-BRANCH-00000000271\n\
   \x20   Processor: KSTREAM-PEEK-0000000034 (stores: [])\n\
   \x20     --> KSTREAM-MAPVALUES-0000000035\n\
   \x20     <-- KSTREAM-FILTER-0000000033\n\
   \x20   Processor: KSTREAM-MAP-0000000037 (stores: [])\n\
   \x20     --> KSTREAM-SINK-0000000038\n\
   \x20     <-- KSTREAM-BRANCH-00000000270\n\
   \x20   Processor: KSTREAM-MAPVALUES-0000000035 (stores: [])\n\
   \x20     --> KSTREAM-SINK-0000000036\n\
   \x20     <-- KSTREAM-PEEK-0000000034\n\
   \x20   Processor: KSTREAM-PEEK-0000000013 (stores: [])\n\
   \x20     --> KSTREAM-AGGREGATE-0000000015\n\
   \x20     <-- KSTREAM-AGGREGATE-STATE-STORE-0000000014-repartition-source\n\
   \x20   Processor: KSTREAM-PEEK-0000000030 (stores: [])\n\
   \x20     --> KSTREAM-SINK-0000000031\n\
   \x20     <-- KSTREAM-MAP-0000000029\n\
   \x20   Processor: KSTREAM-AGGREGATE-0000000015 (stores: [KSTREAM-AGGREGATE-STATE-STORE-0000000014])\n\
   \x20     --> none\n\
   \x20     <-- KSTREAM-PEEK-0000000013\n\
   \x20   Sink: KSTREAM-SINK-0000000031 (topic: external-command)\n\
   \x20     <-- KSTREAM-PEEK-0000000030\n\
   \x20   Sink: KSTREAM-SINK-0000000036 (topic: dlq-topic)\n\
   \x20     <-- KSTREAM-MAPVALUES-0000000035\n\
   \x20   Sink: KSTREAM-SINK-0000000038 (topic: retryTopic)\n\
   \x20     <-- KSTREAM-MAP-0000000037\n\n";

/// `StreamsGraphTest.shouldBeAbleToBuildTopologyIncrementally`: each
/// `build` writes what the DSL added since.
#[test]
fn should_be_able_to_build_topology_incrementally() {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<S, S>("topic");
    let other = builder.stream::<S, S>("other-topic");
    let windows = JoinWindows::of_time_difference_and_grace(ms(5000), ms(86_395_000)).unwrap();
    let joined = stream.join_stream(&other, |v, v2| format!("{v}{v2}"), windows);
    let join = "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: [topic])\n      --> KSTREAM-WINDOWED-0000000002\n    Source: KSTREAM-SOURCE-0000000001 (topics: [other-topic])\n      --> KSTREAM-WINDOWED-0000000003\n    Processor: KSTREAM-WINDOWED-0000000002 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n      --> KSTREAM-JOINTHIS-0000000004\n      <-- KSTREAM-SOURCE-0000000000\n    Processor: KSTREAM-WINDOWED-0000000003 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n      --> KSTREAM-JOINOTHER-0000000005\n      <-- KSTREAM-SOURCE-0000000001\n    Processor: KSTREAM-JOINOTHER-0000000005 (stores: [KSTREAM-JOINTHIS-0000000004-store])\n      --> KSTREAM-MERGE-0000000006\n      <-- KSTREAM-WINDOWED-0000000003\n    Processor: KSTREAM-JOINTHIS-0000000004 (stores: [KSTREAM-JOINOTHER-0000000005-store])\n      --> KSTREAM-MERGE-0000000006\n      <-- KSTREAM-WINDOWED-0000000002\n    Processor: KSTREAM-MERGE-0000000006 (stores: [])\n";
    assert_eq!(
        describe(&builder.build().unwrap()),
        format!(
            "{join}      --> none\n      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n\n"
        )
    );
    let filtered = joined.filter(|_, v| v == "foo");
    let filter = "    Processor: KSTREAM-FILTER-0000000007 (stores: [])\n";
    assert_eq!(
        describe(&builder.build().unwrap()),
        format!(
            "{join}      --> KSTREAM-FILTER-0000000007\n      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n{filter}      --> none\n      <-- KSTREAM-MERGE-0000000006\n\n"
        )
    );
    filtered
        .map_values(|v| format!("{v}some value"))
        .to("output-topic");
    assert_eq!(
        describe(&builder.build().unwrap()),
        format!(
            "{join}      --> KSTREAM-FILTER-0000000007\n      <-- KSTREAM-JOINTHIS-0000000004, KSTREAM-JOINOTHER-0000000005\n{filter}      --> KSTREAM-MAPVALUES-0000000008\n      <-- KSTREAM-MERGE-0000000006\n    Processor: KSTREAM-MAPVALUES-0000000008 (stores: [])\n      --> KSTREAM-SINK-0000000009\n      <-- KSTREAM-FILTER-0000000007\n    Sink: KSTREAM-SINK-0000000009 (topic: output-topic)\n      <-- KSTREAM-MAPVALUES-0000000008\n\n"
        )
    );
}

/// `StreamsGraphTest.shouldBeAbleToProcessNestedMultipleKeyChangingNodes`:
/// two named groupings of one `select_key` merge into `count-repartition`.
#[test]
fn should_be_able_to_process_nested_multiple_key_changing_nodes() {
    let builder = StreamsBuilder::new();
    let changed = builder
        .stream::<S, S>("inputTopic")
        .select_key(|_, v| v.chars().take(5).collect::<S>());
    changed
        .clone()
        .group_by_key_with(Grouped::as_("count-repartition"))
        .count_with(Materialized::as_("count-store"))
        .to_stream()
        .to_with("count-topic", Produced::with(StringSerde, I64Serde));
    changed
        .group_by_key_with(Grouped::as_("windowed-repartition"))
        .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(5)).unwrap())
        .count_with(Materialized::as_("windowed-count-store"))
        .to_stream()
        .map(|k, v| (k.map(|w| w.key.clone()).unwrap_or_default(), *v))
        .to_with("windowed-count", Produced::with(StringSerde, I64Serde));
    let topology = builder.build_with(&optimized(OPTIMIZE)).unwrap();
    let described = describe(&topology);
    assert_eq!(repartition_topics(&described), 1, "{described}");
    assert!(described.contains("Sink: count-repartition-sink (topic: count-repartition)"));
}

/// The number of repartition sinks in a description (Kafka's tests'
/// `Sink: .*-repartition`).
fn repartition_topics(described: &str) -> usize {
    described
        .lines()
        .filter(|l| l.trim_start().starts_with("Sink:") && l.contains("-repartition)"))
        .count()
}

/// `StreamsGraphTest.shouldNotOptimizeWithValueOrKeyChangingOperatorsAfterInitialKeyChange`.
#[test]
fn should_not_optimize_with_value_or_key_changing_operators_after_initial_key_change() {
    let topology = |value: &str| {
        let builder = StreamsBuilder::new();
        let keyed = builder
            .stream::<S, S>("input")
            .select_key(|k, v| format!("{}{v}", k.map_or("null", String::as_str)));
        keyed
            .clone()
            .map_values(|v| v.to_uppercase())
            .group_by_key()
            .count()
            .to_stream()
            .to("output");
        keyed
            .flat_map_values(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(5000)).unwrap())
            .count()
            .to_stream()
            .to("windowed-output");
        builder.build_with(&optimized(value)).unwrap()
    };
    let (attempted, plain) = (
        describe(&topology(OPTIMIZE)),
        describe(&topology(NO_OPTIMIZATION)),
    );
    assert_eq!(attempted, plain);
    assert_eq!(repartition_topics(&attempted), 2);
}

/// `StreamsGraphTest.shouldNotOptimizeWhenRepartitionOperationIsDone`.
#[test]
fn should_not_optimize_when_repartition_operation_is_done() {
    let topology = |value: &str| {
        let builder = StreamsBuilder::new();
        let keyed = builder
            .stream::<S, S>("input")
            .select_key(|k, v| format!("{}{v}", k.map_or("null", String::as_str)));
        keyed
            .clone()
            .repartition()
            .group_by_key()
            .count()
            .to_stream()
            .to("output");
        keyed
            .repartition()
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(5000)).unwrap())
            .count()
            .to_stream()
            .to("windowed-output");
        builder.build_with(&optimized(value)).unwrap()
    };
    let (attempted, plain) = (
        describe(&topology(OPTIMIZE)),
        describe(&topology(NO_OPTIMIZATION)),
    );
    assert_eq!(attempted, plain);
    assert_eq!(repartition_topics(&attempted), 2);
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Collects the values it sees (the `SimpleProcessor` of
/// `RepartitionOptimizingTest`).
struct Collect(Rc<RefCell<Vec<S>>>);

impl Processor<S, S, (), ()> for Collect {
    fn process(&mut self, _: &mut ProcessorContext<'_, (), ()>, r: Record<S, S>) -> Result<()> {
        self.0.borrow_mut().extend(r.value);
        Ok(())
    }
}

/// `RepartitionOptimizingTest.runTest`: one `map` feeding a count, an
/// aggregate, a filtered and peeked reduce and a filtered stream-stream
/// join with the count's stream. Kafka's test gives the join stores of
/// their own (`join-store`, `other-join-store`); ours are named by
/// `StreamJoined::with_store_name("join")` (`join-this-join-store`,
/// `join-other-join-store`), the one difference in the texts.
fn repartition_optimizing(value: &str) -> (String, TopologyTestDriver, Rc<RefCell<Vec<S>>>) {
    let builder = StreamsBuilder::new();
    let mapped = builder
        .stream_with::<S, S>(
            "input",
            Consumed::with(StringSerde, StringSerde).with_name("sourceStream"),
        )
        .named("source-map")
        .map(|k, v| (k.map(|k| k.to_uppercase()).unwrap_or_default(), v.clone()));
    let collected = Rc::new(RefCell::new(Vec::new()));
    let sink = collected.clone();
    mapped
        .clone()
        .named("process-filter")
        .filter(|k, _| k.is_some_and(|k| k == "B"))
        .named("process-mapValues")
        .map_values(|v| v.to_uppercase())
        .named("process")
        .process::<(), (), _>(move || Collect(sink.clone()));
    let count_stream = mapped
        .clone()
        .named("count")
        .group_by_key_with(Grouped::as_("count-groupByKey"))
        .count_with(
            Materialized::as_("count-store")
                .with_key_serde(StringSerde)
                .with_value_serde(I64Serde),
        )
        .named("count-toStream")
        .to_stream();
    count_stream
        .clone()
        .named("count-to")
        .to_with("outputTopic_0", Produced::with(StringSerde, I64Serde));
    mapped
        .clone()
        .named("aggregate")
        .group_by_key_with(Grouped::as_("aggregate-groupByKey"))
        .aggregate_with(
            || 0_i32,
            |_, v, agg| agg + i32::try_from(v.len()).unwrap_or(0),
            Materialized::as_("aggregate-store")
                .with_key_serde(StringSerde)
                .with_value_serde(I32Serde),
        )
        .named("aggregate-toStream")
        .to_stream()
        .named("reduce-to")
        .to_with("outputTopic_1", Produced::with(StringSerde, I32Serde));
    mapped
        .clone()
        .named("reduce-filter")
        .filter(|_, _| true)
        .named("reduce-peek")
        .peek(|_, _| {})
        .named("reducer")
        .group_by_key_with(Grouped::as_("reduce-groupByKey"))
        .reduce_with(
            |v1, v2| format!("{v1}:{v2}"),
            Materialized::as_("reduce-store"),
        )
        .named("reduce-toStream")
        .to_stream()
        .to_with("outputTopic_2", Produced::with(StringSerde, StringSerde));
    mapped
        .named("join-filter")
        .filter(|k, _| k.is_some_and(|k| k == "A"))
        .join_stream_with(
            &count_stream,
            |v1, v2| format!("{v1}:{v2}"),
            JoinWindows::of_time_difference_and_grace(ms(5000), ms(86_395_000)).unwrap(),
            StreamJoined::with(StringSerde, StringSerde, I64Serde)
                .with_name("join")
                .with_store_name("join"),
        )
        .named("join-to")
        .to("joinedOutputTopic");
    let config = StreamsConfig::new("test-app")
        .with_default_key_serde(StringSerde)
        .with_default_value_serde(StringSerde)
        .with_property("statestore.cache.max.bytes", "10240")
        .with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, value);
    let topology = builder.build_with(&config).unwrap();
    let described = describe(&topology);
    let driver = TopologyTestDriver::with_config(topology, config).unwrap();
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    for key in ["a", "b", "c"] {
        for value in ["foo", "bar", "baz"] {
            input.pipe_key_value(key, value);
        }
    }
    (described, driver, collected)
}

/// Kafka's expected text with our join store names.
fn with_our_join_stores(kafka: &str) -> String {
    kafka
        .replace("[join-store]", "[join-this-join-store]")
        .replace("[other-join-store]", "[join-other-join-store]")
}

fn check_repartition_optimizing_outputs(
    driver: &TopologyTestDriver,
    collected: &Rc<RefCell<Vec<S>>>,
) {
    assert_eq!(*collected.borrow(), ["FOO", "BAR", "BAZ"]);
    let map = |topic: &str| -> BTreeMap<S, S> {
        driver
            .create_output_topic(topic, StringSerde, StringSerde)
            .read_key_values_to_map()
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect()
    };
    let counts: BTreeMap<S, Option<i64>> = driver
        .create_output_topic("outputTopic_0", StringSerde, I64Serde)
        .read_key_values_to_map()
        .into_iter()
        .collect();
    assert_eq!(
        counts,
        [("A", 3), ("B", 3), ("C", 3)]
            .map(|(k, v)| (k.to_owned(), Some(v)))
            .into()
    );
    let aggregates: BTreeMap<S, Option<i32>> = driver
        .create_output_topic("outputTopic_1", StringSerde, I32Serde)
        .read_key_values_to_map()
        .into_iter()
        .collect();
    assert_eq!(
        aggregates,
        [("A", 9), ("B", 9), ("C", 9)]
            .map(|(k, v)| (k.to_owned(), Some(v)))
            .into()
    );
    let reduced = map("outputTopic_2");
    assert_eq!(
        reduced,
        [
            ("A", "foo:bar:baz"),
            ("B", "foo:bar:baz"),
            ("C", "foo:bar:baz")
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into()
    );
    assert_eq!(
        map("joinedOutputTopic"),
        [("A".to_owned(), "baz:3".to_owned())].into()
    );
}

/// `RepartitionOptimizingTest.shouldSendCorrectRecords_OPTIMIZED`.
#[test]
fn repartition_optimizing_should_send_correct_records_optimized() {
    let (described, driver, collected) = repartition_optimizing(OPTIMIZE);
    assert_eq!(described, with_our_join_stores(REPARTITION_OPTIMIZED));
    assert_eq!(repartition_topics(&described), 1);
    check_repartition_optimizing_outputs(&driver, &collected);
}

/// `RepartitionOptimizingTest.shouldSendCorrectResults_NO_OPTIMIZATION`.
#[test]
fn repartition_optimizing_should_send_correct_results_no_optimization() {
    let (described, driver, collected) = repartition_optimizing(NO_OPTIMIZATION);
    assert_eq!(described, with_our_join_stores(REPARTITION_UNOPTIMIZED));
    assert_eq!(repartition_topics(&described), 4);
    check_repartition_optimizing_outputs(&driver, &collected);
}

/// `RepartitionWithMergeOptimizingTest.runTest`: two maps merged, two
/// named counts.
fn repartition_with_merge(value: &str) -> (String, TopologyTestDriver) {
    let builder = StreamsBuilder::new();
    let key = |v: &S| v.split(':').next().unwrap_or_default().to_owned();
    let a = builder
        .stream_with::<S, S>(
            "inputA",
            Consumed::with(StringSerde, StringSerde).with_name("sourceAStream"),
        )
        .named("mappedAStream")
        .map(move |_, v| (key(v), v.clone()));
    let b = builder
        .stream_with::<S, S>(
            "inputB",
            Consumed::with(StringSerde, StringSerde).with_name("sourceBStream"),
        )
        .named("mappedBStream")
        .map(move |_, v| (key(v), v.clone()));
    let merged = a.named("mergedStream").merge(&b);
    merged
        .clone()
        .named("long-count")
        .group_by_key_with(Grouped::as_("long-groupByKey"))
        .count_with(Materialized::as_("long-store"))
        .named("long-toStream")
        .to_stream()
        .named("long-to")
        .to_with("outputTopic_0", Produced::with(StringSerde, I64Serde));
    merged
        .named("string-count")
        .group_by_key_with(Grouped::as_("string-groupByKey"))
        .count_with(Materialized::as_("string-store"))
        .named("string-toStream")
        .to_stream()
        .named("string-mapValues")
        .map_values(i64::to_string)
        .named("string-to")
        .to_with("outputTopic_1", Produced::with(StringSerde, StringSerde));
    let config = StreamsConfig::new("test-app")
        .with_default_key_serde(StringSerde)
        .with_default_value_serde(StringSerde)
        .with_property("statestore.cache.max.bytes", "10240")
        .with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, value);
    let topology = builder.build_with(&config).unwrap();
    let described = describe(&topology);
    let driver = TopologyTestDriver::with_config(topology, config).unwrap();
    for topic in ["inputA", "inputB"] {
        let input = driver.create_input_topic(topic, StringSerde, StringSerde);
        for key in ["X", "Y", "Z"] {
            for value in ["A:foo", "B:foo", "C:foo"] {
                input.pipe_key_value(key, value);
            }
        }
    }
    (described, driver)
}

fn check_repartition_with_merge_outputs(driver: &TopologyTestDriver) {
    let counts: BTreeMap<S, Option<i64>> = driver
        .create_output_topic("outputTopic_0", StringSerde, I64Serde)
        .read_key_values_to_map()
        .into_iter()
        .collect();
    assert_eq!(
        counts,
        [("A", 6), ("B", 6), ("C", 6)]
            .map(|(k, v)| (k.to_owned(), Some(v)))
            .into()
    );
    let strings: BTreeMap<S, Option<S>> = driver
        .create_output_topic("outputTopic_1", StringSerde, StringSerde)
        .read_key_values_to_map()
        .into_iter()
        .collect();
    assert_eq!(
        strings,
        [("A", "6"), ("B", "6"), ("C", "6")]
            .map(|(k, v)| (k.to_owned(), Some(v.to_owned())))
            .into()
    );
}

/// `RepartitionWithMergeOptimizingTest.shouldSendCorrectRecords_OPTIMIZED`.
#[test]
fn repartition_with_merge_should_send_correct_records_optimized() {
    let (described, driver) = repartition_with_merge(OPTIMIZE);
    assert_eq!(described, MERGE_OPTIMIZED);
    assert_eq!(repartition_topics(&described), 1);
    check_repartition_with_merge_outputs(&driver);
}

/// `RepartitionWithMergeOptimizingTest.shouldSendCorrectResults_NO_OPTIMIZATION`.
#[test]
fn repartition_with_merge_should_send_correct_results_no_optimization() {
    let (described, driver) = repartition_with_merge(NO_OPTIMIZATION);
    assert_eq!(described, MERGE_UNOPTIMIZED);
    assert_eq!(repartition_topics(&described), 2);
    check_repartition_with_merge_outputs(&driver);
}

const REPARTITION_OPTIMIZED: &str = "Topologies:\n\
\x20  Sub-topology: 0\n\
\x20   Source: sourceStream (topics: [input])\n\
\x20     --> source-map\n\
\x20   Processor: source-map (stores: [])\n\
\x20     --> process-filter, count-groupByKey-repartition-filter\n\
\x20     <-- sourceStream\n\
\x20   Processor: process-filter (stores: [])\n\
\x20     --> process-mapValues\n\
\x20     <-- source-map\n\
\x20   Processor: count-groupByKey-repartition-filter (stores: [])\n\
\x20     --> count-groupByKey-repartition-sink\n\
\x20     <-- source-map\n\
\x20   Processor: process-mapValues (stores: [])\n\
\x20     --> process\n\
\x20     <-- process-filter\n\
\x20   Sink: count-groupByKey-repartition-sink (topic: count-groupByKey-repartition)\n\
\x20     <-- count-groupByKey-repartition-filter\n\
\x20   Processor: process (stores: [])\n\
\x20     --> none\n\
\x20     <-- process-mapValues\n\
\n\
\x20 Sub-topology: 1\n\
\x20   Source: count-groupByKey-repartition-source (topics: [count-groupByKey-repartition])\n\
\x20     --> aggregate, count, join-filter, reduce-filter\n\
\x20   Processor: count (stores: [count-store])\n\
\x20     --> count-toStream\n\
\x20     <-- count-groupByKey-repartition-source\n\
\x20   Processor: count-toStream (stores: [])\n\
\x20     --> join-other-windowed, count-to\n\
\x20     <-- count\n\
\x20   Processor: join-filter (stores: [])\n\
\x20     --> join-this-windowed\n\
\x20     <-- count-groupByKey-repartition-source\n\
\x20   Processor: reduce-filter (stores: [])\n\
\x20     --> reduce-peek\n\
\x20     <-- count-groupByKey-repartition-source\n\
\x20   Processor: join-other-windowed (stores: [other-join-store])\n\
\x20     --> join-other-join\n\
\x20     <-- count-toStream\n\
\x20   Processor: join-this-windowed (stores: [join-store])\n\
\x20     --> join-this-join\n\
\x20     <-- join-filter\n\
\x20   Processor: reduce-peek (stores: [])\n\
\x20     --> reducer\n\
\x20     <-- reduce-filter\n\
\x20   Processor: aggregate (stores: [aggregate-store])\n\
\x20     --> aggregate-toStream\n\
\x20     <-- count-groupByKey-repartition-source\n\
\x20   Processor: join-other-join (stores: [join-store])\n\
\x20     --> join-merge\n\
\x20     <-- join-other-windowed\n\
\x20   Processor: join-this-join (stores: [other-join-store])\n\
\x20     --> join-merge\n\
\x20     <-- join-this-windowed\n\
\x20   Processor: reducer (stores: [reduce-store])\n\
\x20     --> reduce-toStream\n\
\x20     <-- reduce-peek\n\
\x20   Processor: aggregate-toStream (stores: [])\n\
\x20     --> reduce-to\n\
\x20     <-- aggregate\n\
\x20   Processor: join-merge (stores: [])\n\
\x20     --> join-to\n\
\x20     <-- join-this-join, join-other-join\n\
\x20   Processor: reduce-toStream (stores: [])\n\
\x20     --> KSTREAM-SINK-0000000023\n\
\x20     <-- reducer\n\
\x20   Sink: KSTREAM-SINK-0000000023 (topic: outputTopic_2)\n\
\x20     <-- reduce-toStream\n\
\x20   Sink: count-to (topic: outputTopic_0)\n\
\x20     <-- count-toStream\n\
\x20   Sink: join-to (topic: joinedOutputTopic)\n\
\x20     <-- join-merge\n\
\x20   Sink: reduce-to (topic: outputTopic_1)\n\
\x20     <-- aggregate-toStream\n\
\n\
";

const REPARTITION_UNOPTIMIZED: &str = "Topologies:\n\
\x20  Sub-topology: 0\n\
\x20   Source: sourceStream (topics: [input])\n\
\x20     --> source-map\n\
\x20   Processor: source-map (stores: [])\n\
\x20     --> reduce-filter, process-filter, aggregate-groupByKey-repartition-filter, count-groupByKey-repartition-filter, join-filter\n\
\x20     <-- sourceStream\n\
\x20   Processor: reduce-filter (stores: [])\n\
\x20     --> reduce-peek\n\
\x20     <-- source-map\n\
\x20   Processor: join-filter (stores: [])\n\
\x20     --> join-left-repartition-filter\n\
\x20     <-- source-map\n\
\x20   Processor: process-filter (stores: [])\n\
\x20     --> process-mapValues\n\
\x20     <-- source-map\n\
\x20   Processor: reduce-peek (stores: [])\n\
\x20     --> reduce-groupByKey-repartition-filter\n\
\x20     <-- reduce-filter\n\
\x20   Processor: aggregate-groupByKey-repartition-filter (stores: [])\n\
\x20     --> aggregate-groupByKey-repartition-sink\n\
\x20     <-- source-map\n\
\x20   Processor: count-groupByKey-repartition-filter (stores: [])\n\
\x20     --> count-groupByKey-repartition-sink\n\
\x20     <-- source-map\n\
\x20   Processor: join-left-repartition-filter (stores: [])\n\
\x20     --> join-left-repartition-sink\n\
\x20     <-- join-filter\n\
\x20   Processor: process-mapValues (stores: [])\n\
\x20     --> process\n\
\x20     <-- process-filter\n\
\x20   Processor: reduce-groupByKey-repartition-filter (stores: [])\n\
\x20     --> reduce-groupByKey-repartition-sink\n\
\x20     <-- reduce-peek\n\
\x20   Sink: aggregate-groupByKey-repartition-sink (topic: aggregate-groupByKey-repartition)\n\
\x20     <-- aggregate-groupByKey-repartition-filter\n\
\x20   Sink: count-groupByKey-repartition-sink (topic: count-groupByKey-repartition)\n\
\x20     <-- count-groupByKey-repartition-filter\n\
\x20   Sink: join-left-repartition-sink (topic: join-left-repartition)\n\
\x20     <-- join-left-repartition-filter\n\
\x20   Processor: process (stores: [])\n\
\x20     --> none\n\
\x20     <-- process-mapValues\n\
\x20   Sink: reduce-groupByKey-repartition-sink (topic: reduce-groupByKey-repartition)\n\
\x20     <-- reduce-groupByKey-repartition-filter\n\
\n\
\x20 Sub-topology: 1\n\
\x20   Source: count-groupByKey-repartition-source (topics: [count-groupByKey-repartition])\n\
\x20     --> count\n\
\x20   Processor: count (stores: [count-store])\n\
\x20     --> count-toStream\n\
\x20     <-- count-groupByKey-repartition-source\n\
\x20   Processor: count-toStream (stores: [])\n\
\x20     --> join-other-windowed, count-to\n\
\x20     <-- count\n\
\x20   Source: join-left-repartition-source (topics: [join-left-repartition])\n\
\x20     --> join-this-windowed\n\
\x20   Processor: join-other-windowed (stores: [other-join-store])\n\
\x20     --> join-other-join\n\
\x20     <-- count-toStream\n\
\x20   Processor: join-this-windowed (stores: [join-store])\n\
\x20     --> join-this-join\n\
\x20     <-- join-left-repartition-source\n\
\x20   Processor: join-other-join (stores: [join-store])\n\
\x20     --> join-merge\n\
\x20     <-- join-other-windowed\n\
\x20   Processor: join-this-join (stores: [other-join-store])\n\
\x20     --> join-merge\n\
\x20     <-- join-this-windowed\n\
\x20   Processor: join-merge (stores: [])\n\
\x20     --> join-to\n\
\x20     <-- join-this-join, join-other-join\n\
\x20   Sink: count-to (topic: outputTopic_0)\n\
\x20     <-- count-toStream\n\
\x20   Sink: join-to (topic: joinedOutputTopic)\n\
\x20     <-- join-merge\n\
\n\
\x20 Sub-topology: 2\n\
\x20   Source: aggregate-groupByKey-repartition-source (topics: [aggregate-groupByKey-repartition])\n\
\x20     --> aggregate\n\
\x20   Processor: aggregate (stores: [aggregate-store])\n\
\x20     --> aggregate-toStream\n\
\x20     <-- aggregate-groupByKey-repartition-source\n\
\x20   Processor: aggregate-toStream (stores: [])\n\
\x20     --> reduce-to\n\
\x20     <-- aggregate\n\
\x20   Sink: reduce-to (topic: outputTopic_1)\n\
\x20     <-- aggregate-toStream\n\
\n\
\x20 Sub-topology: 3\n\
\x20   Source: reduce-groupByKey-repartition-source (topics: [reduce-groupByKey-repartition])\n\
\x20     --> reducer\n\
\x20   Processor: reducer (stores: [reduce-store])\n\
\x20     --> reduce-toStream\n\
\x20     <-- reduce-groupByKey-repartition-source\n\
\x20   Processor: reduce-toStream (stores: [])\n\
\x20     --> KSTREAM-SINK-0000000023\n\
\x20     <-- reducer\n\
\x20   Sink: KSTREAM-SINK-0000000023 (topic: outputTopic_2)\n\
\x20     <-- reduce-toStream\n\
\n\
";

const MERGE_OPTIMIZED: &str = "Topologies:\n\
\x20  Sub-topology: 0\n\
\x20   Source: sourceAStream (topics: [inputA])\n\
\x20     --> mappedAStream\n\
\x20   Source: sourceBStream (topics: [inputB])\n\
\x20     --> mappedBStream\n\
\x20   Processor: mappedAStream (stores: [])\n\
\x20     --> mergedStream\n\
\x20     <-- sourceAStream\n\
\x20   Processor: mappedBStream (stores: [])\n\
\x20     --> mergedStream\n\
\x20     <-- sourceBStream\n\
\x20   Processor: mergedStream (stores: [])\n\
\x20     --> long-groupByKey-repartition-filter\n\
\x20     <-- mappedAStream, mappedBStream\n\
\x20   Processor: long-groupByKey-repartition-filter (stores: [])\n\
\x20     --> long-groupByKey-repartition-sink\n\
\x20     <-- mergedStream\n\
\x20   Sink: long-groupByKey-repartition-sink (topic: long-groupByKey-repartition)\n\
\x20     <-- long-groupByKey-repartition-filter\n\
\n\
\x20 Sub-topology: 1\n\
\x20   Source: long-groupByKey-repartition-source (topics: [long-groupByKey-repartition])\n\
\x20     --> long-count, string-count\n\
\x20   Processor: string-count (stores: [string-store])\n\
\x20     --> string-toStream\n\
\x20     <-- long-groupByKey-repartition-source\n\
\x20   Processor: long-count (stores: [long-store])\n\
\x20     --> long-toStream\n\
\x20     <-- long-groupByKey-repartition-source\n\
\x20   Processor: string-toStream (stores: [])\n\
\x20     --> string-mapValues\n\
\x20     <-- string-count\n\
\x20   Processor: long-toStream (stores: [])\n\
\x20     --> long-to\n\
\x20     <-- long-count\n\
\x20   Processor: string-mapValues (stores: [])\n\
\x20     --> string-to\n\
\x20     <-- string-toStream\n\
\x20   Sink: long-to (topic: outputTopic_0)\n\
\x20     <-- long-toStream\n\
\x20   Sink: string-to (topic: outputTopic_1)\n\
\x20     <-- string-mapValues\n\
\n\
";

const MERGE_UNOPTIMIZED: &str = "Topologies:\n\
\x20  Sub-topology: 0\n\
\x20   Source: sourceAStream (topics: [inputA])\n\
\x20     --> mappedAStream\n\
\x20   Source: sourceBStream (topics: [inputB])\n\
\x20     --> mappedBStream\n\
\x20   Processor: mappedAStream (stores: [])\n\
\x20     --> mergedStream\n\
\x20     <-- sourceAStream\n\
\x20   Processor: mappedBStream (stores: [])\n\
\x20     --> mergedStream\n\
\x20     <-- sourceBStream\n\
\x20   Processor: mergedStream (stores: [])\n\
\x20     --> long-groupByKey-repartition-filter, string-groupByKey-repartition-filter\n\
\x20     <-- mappedAStream, mappedBStream\n\
\x20   Processor: long-groupByKey-repartition-filter (stores: [])\n\
\x20     --> long-groupByKey-repartition-sink\n\
\x20     <-- mergedStream\n\
\x20   Processor: string-groupByKey-repartition-filter (stores: [])\n\
\x20     --> string-groupByKey-repartition-sink\n\
\x20     <-- mergedStream\n\
\x20   Sink: long-groupByKey-repartition-sink (topic: long-groupByKey-repartition)\n\
\x20     <-- long-groupByKey-repartition-filter\n\
\x20   Sink: string-groupByKey-repartition-sink (topic: string-groupByKey-repartition)\n\
\x20     <-- string-groupByKey-repartition-filter\n\
\n\
\x20 Sub-topology: 1\n\
\x20   Source: long-groupByKey-repartition-source (topics: [long-groupByKey-repartition])\n\
\x20     --> long-count\n\
\x20   Processor: long-count (stores: [long-store])\n\
\x20     --> long-toStream\n\
\x20     <-- long-groupByKey-repartition-source\n\
\x20   Processor: long-toStream (stores: [])\n\
\x20     --> long-to\n\
\x20     <-- long-count\n\
\x20   Sink: long-to (topic: outputTopic_0)\n\
\x20     <-- long-toStream\n\
\n\
\x20 Sub-topology: 2\n\
\x20   Source: string-groupByKey-repartition-source (topics: [string-groupByKey-repartition])\n\
\x20     --> string-count\n\
\x20   Processor: string-count (stores: [string-store])\n\
\x20     --> string-toStream\n\
\x20     <-- string-groupByKey-repartition-source\n\
\x20   Processor: string-toStream (stores: [])\n\
\x20     --> string-mapValues\n\
\x20     <-- string-count\n\
\x20   Processor: string-mapValues (stores: [])\n\
\x20     --> string-to\n\
\x20     <-- string-toStream\n\
\x20   Sink: string-to (topic: outputTopic_1)\n\
\x20     <-- string-mapValues\n\
\n\
";

// ---------------------------------------------------------------------------
// reuse.ktable.source.topics: StreamsBuilderTest.
// ---------------------------------------------------------------------------

/// `StreamsBuilderTest.shouldReuseSourceTopicAsChangelogsWithOptimization20`.
#[test]
fn should_reuse_source_topic_as_changelogs_with_optimization() {
    let builder = StreamsBuilder::new();
    builder.table_with::<i64, S>("topic", Materialized::as_("store"));
    let topology = builder.build_with(&optimized(OPTIMIZE)).unwrap();
    let info = topology.topics_info("appId");
    assert_eq!(topology.store_names(), ["store"]);
    assert_eq!(
        info[0].source_changelog_topics,
        [("store".to_owned(), "topic".to_owned())]
    );
    assert!(info[0].changelog_topics.is_empty());
    // The store logs nothing: a driver produces no changelog.
    let driver = TopologyTestDriver::with_config(topology, optimized(OPTIMIZE)).unwrap();
    driver
        .create_input_topic("topic", I64Serde, StringSerde)
        .pipe_key_value(1, "one");
    assert!(driver.produced_topic_names().is_empty());
    let store = driver
        .timestamped_key_value_store::<i64, S>("store")
        .unwrap();
    assert_eq!(store.get(&1).map(|v| v.value), Some("one".to_owned()));
}

/// `StreamsBuilderTest.shouldNotReuseRepartitionTopicAsChangelogs`: a
/// `to_table` is no source table.
#[test]
fn should_not_reuse_repartition_topic_as_changelogs() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<i64, S>("topic")
        .repartition()
        .to_table_with(Materialized::as_("store"));
    let topology = builder.build_with(&optimized(OPTIMIZE)).unwrap();
    let info = topology.topics_info("appId");
    assert_eq!(
        info[1].changelog_topics,
        [("store".to_owned(), "appId-store-changelog".to_owned())]
    );
    assert!(info.iter().all(|i| i.source_changelog_topics.is_empty()));
}

/// `StreamsBuilderTest.shouldNotReuseSourceTopicAsChangelogsByDefault`.
#[test]
fn should_not_reuse_source_topic_as_changelogs_by_default() {
    let builder = StreamsBuilder::new();
    builder.table_with::<i64, S>("topic", Materialized::as_("store"));
    for topology in [
        builder.build().unwrap(),
        builder.build_with(&StreamsConfig::new("appId")).unwrap(),
    ] {
        let info = topology.topics_info("appId");
        assert_eq!(
            info[0].changelog_topics,
            [("store".to_owned(), "appId-store-changelog".to_owned())]
        );
        assert!(info[0].source_changelog_topics.is_empty());
    }
}

/// `StreamsBuilderTest.shouldNotThrowNullPointerIfOptimizationsNotSpecified`
/// (here: `build_with` a config without the property builds what `build`
/// builds, byte for byte).
#[test]
fn should_build_as_build_does_if_optimizations_not_specified() {
    let builder = StreamsBuilder::new();
    let keyed = builder.stream::<S, S>("in").select_key(|_, v| v.clone());
    keyed.clone().group_by_key().count().to_stream().to("a");
    keyed.group_by_key().count().to_stream().to("b");
    let plain = describe(&builder.build().unwrap());
    assert_eq!(
        describe(&builder.build_with(&StreamsConfig::default()).unwrap()),
        plain
    );
    assert_eq!(
        describe(&builder.build_with(&optimized(NO_OPTIMIZATION)).unwrap()),
        plain
    );
}

/// An unmaterialized source table has no store to reuse (Kafka's
/// `tableSource.stores()` is null), and a global table's store logs
/// nothing anyway: neither changes.
#[test]
fn reuse_touches_only_source_tables_with_a_store() {
    let builder = StreamsBuilder::new();
    builder.table::<S, S>("plain").to_stream().to("out");
    builder.global_table::<S, S>("global");
    let plain = builder.build().unwrap().topics_info("app");
    let reused = builder
        .build_with(&optimized("reuse.ktable.source.topics"))
        .unwrap()
        .topics_info("app");
    assert_eq!(plain, reused);
}

/// A driver on a cluster restores a source store from the table's topic.
#[test]
fn a_driver_on_a_cluster_restores_a_source_store_from_its_topic() {
    let cluster = streams_broker::Cluster::builder()
        .log_cleaner_enable(false)
        .build();
    cluster
        .admin()
        .create_topic(streams_broker::NewTopic::new("users", 1))
        .unwrap();
    let users =
        streams_test::cluster::TypedProducer::new(&cluster, "users", StringSerde, StringSerde);
    users
        .send(&"u1".to_owned(), Some(&"ann".to_owned()), 0)
        .unwrap();
    users
        .send(&"u2".to_owned(), Some(&"bob".to_owned()), 1)
        .unwrap();
    users.send(&"u1".to_owned(), None, 2).unwrap();
    let builder = StreamsBuilder::new();
    builder.table_with::<S, S>("users", Materialized::as_("users-store"));
    let config = optimized("reuse.ktable.source.topics");
    let topology = builder.build_with(&config).unwrap();
    let driver = TopologyTestDriver::builder(topology)
        .config(config)
        .cluster(cluster.clone())
        .build()
        .unwrap();
    let store = driver
        .timestamped_key_value_store::<S, S>("users-store")
        .unwrap();
    assert_eq!(store.to_map(), [("u2".to_owned(), "bob".to_owned())].into());
    assert!(
        !cluster
            .topic_names()
            .iter()
            .any(|t| t.ends_with("-changelog"))
    );
}

// ---------------------------------------------------------------------------
// single.store.self.join: InternalStreamsBuilderTest and
// KStreamKStreamSelfJoinTest. Kafka's tests that read one topic with two
// `stream` calls (merged into one source by Kafka's builder) read it once
// here: our builder refuses a topic read by two sources.
// ---------------------------------------------------------------------------

fn windows(millis: u64) -> JoinWindows {
    JoinWindows::of_time_difference_with_no_grace(ms(millis)).unwrap()
}

fn joiner(v: &S, o: &S) -> S {
    format!("{v}+{o}")
}

/// The windowed nodes (one per side of each join, one per self-join) and
/// the self-join processors of a description.
fn join_nodes(builder: &StreamsBuilder, value: &str) -> (usize, usize) {
    let described = describe(&builder.build_with(&optimized(value)).unwrap());
    let windowed = described.matches("Processor: KSTREAM-WINDOWED-").count();
    let self_joins = described
        .lines()
        .filter(|l| l.contains("Processor: KSTREAM-MERGE-") && l.contains("-store]"))
        .count();
    (windowed, self_joins)
}

/// `InternalStreamsBuilderTest.shouldMarkStreamStreamJoinAsSelfJoinSingleStream`.
#[test]
fn should_mark_stream_stream_join_as_self_join_single_stream() {
    let builder = StreamsBuilder::new();
    let stream = builder.stream::<S, S>("t1");
    stream.clone().join_stream(&stream, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (1, 1));
}

/// `..SelfJoinMergeTwoStreams`: the join's one parent is a merge.
#[test]
fn should_mark_stream_stream_join_as_self_join_merge_two_streams() {
    let builder = StreamsBuilder::new();
    let merged = builder
        .stream::<S, S>("t1")
        .merge(&builder.stream::<S, S>("t2"));
    merged.clone().join_stream(&merged, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (1, 1));
}

/// `..SelfJoin3WayJoin` and `..SelfJoinNway`: the second join has two
/// parents (the first join and another stream).
#[test]
fn should_mark_first_stream_stream_join_as_self_join_3way_join() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    let s3 = builder.stream::<S, S>("t3");
    s1.clone()
        .join_stream(&s1, joiner, windows(100))
        .join_stream(&s3, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (3, 1));
}

/// `..SelfJoinNwaySameSource`: the second join's sides are the first
/// join and its input: two parents.
#[test]
fn should_mark_first_stream_stream_join_as_self_join_nway_same_source() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    s1.clone()
        .join_stream(&s1, joiner, windows(100))
        .join_stream(&s1, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (3, 1));
}

/// `shouldMarkAllStreamStreamJoinsAsSelfJoin` and
/// `..SelfJoinTwoJoinsSameSource`.
#[test]
fn should_mark_all_stream_stream_joins_as_self_join() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    let s2 = builder.stream::<S, S>("t2");
    let first = s1.clone().join_stream(&s1, joiner, windows(100));
    let second = s2.clone().join_stream(&s2, joiner, windows(100));
    let _ = first.merge(&second);
    s1.clone().join_stream(&s1, joiner, windows(50));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (3, 3));
}

/// `..SelfJoinTwoStreamsWithNoOpFilter`: a filter beside the join does not
/// matter.
#[test]
fn should_mark_stream_stream_join_as_self_join_with_no_op_filter() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    let _ = s1.clone().filter(|_, _| true);
    s1.clone().join_stream(&s1, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (1, 1));
}

/// `shouldNotMarkStreamStreamJoinAsSelfJoinTwoStreamsWithFilter`,
/// `..OneStreamWithMap` and `..MultipleSources`: two parents.
#[test]
fn should_not_mark_stream_stream_join_as_self_join_with_two_parents() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    s1.clone()
        .filter(|_, _| true)
        .join_stream(&s1, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (2, 0));
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    s1.clone()
        .map_values(S::clone)
        .join_stream(&s1, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (2, 0));
    let builder = StreamsBuilder::new();
    let s2 = builder.stream::<S, S>("t2");
    builder
        .stream::<S, S>("t1")
        .join_stream(&s2, joiner, windows(100));
    assert_eq!(join_nodes(&builder, OPTIMIZE), (2, 0));
}

/// `shouldOptimizeJoinWhenInConfig` and `shouldNotOptimizeJoinWhenNotInConfig`.
#[test]
fn should_optimize_join_only_when_in_config() {
    let builder = StreamsBuilder::new();
    let s1 = builder.stream::<S, S>("t1");
    s1.clone().join_stream(&s1, joiner, windows(100));
    assert_eq!(join_nodes(&builder, "single.store.self.join"), (1, 1));
    assert_eq!(
        join_nodes(
            &builder,
            "reuse.ktable.source.topics,merge.repartition.topics"
        ),
        (2, 0)
    );
}

/// Joins `in` with itself within `windows` and returns every result with
/// its timestamp, as Kafka's `MockApiProcessor` sees them.
fn self_join_results(
    windows: JoinWindows,
    optimization: &str,
    input: &[(&str, &str, i64)],
) -> (String, Vec<(S, S, i64)>) {
    let builder = StreamsBuilder::new();
    let stream = builder.stream_with::<S, S>("topic1", Consumed::with(StringSerde, StringSerde));
    stream
        .clone()
        .join_stream_with(
            &stream,
            |v, v2| format!("{v}{v2}"),
            windows,
            StreamJoined::with(StringSerde, StringSerde, StringSerde),
        )
        .to("out");
    let config = optimized(optimization);
    let topology = builder.build_with(&config).unwrap();
    let described = describe(&topology);
    let driver = TopologyTestDriver::with_config(topology, config).unwrap();
    let topic = driver.create_input_topic("topic1", StringSerde, StringSerde);
    for (k, v, ts) in input {
        topic.pipe_key_value_at(*k, *v, *ts);
    }
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    let results = out
        .read_records_to_list()
        .into_iter()
        .map(|r| {
            (
                r.key.unwrap_or_default(),
                r.value.unwrap_or_default(),
                r.timestamp.unwrap_or(-1),
            )
        })
        .collect();
    (described, results)
}

/// `KStreamKStreamSelfJoinTest`: the self-join gives what the inner join of
/// the stream with itself gives, record for record, with one store.
#[test]
fn self_join_matches_inner_join_of_the_stream_with_itself() {
    let ab = [
        ("A", "1", 1),
        ("B", "1", 2),
        ("A", "2", 3),
        ("B", "2", 4),
        ("B", "3", 5),
    ];
    let spread = [
        ("A", "1", 0),
        ("A", "2", 11_000),
        ("B", "1", 12_000),
        ("A", "3", 13_000),
        ("A", "4", 15_000),
        ("C", "1", 16_000),
        ("D", "1", 17_000),
        ("A", "5", 30_000),
    ];
    let out_of_order = [
        ("A", "1", 0),
        ("A", "2", 9999),
        ("B", "1", 11_000),
        ("A", "3", 13_000),
        ("A", "4", 15_000),
        ("C", "1", 16_000),
        ("D", "1", 17_000),
        ("A", "5", 30_000),
        ("A", "5", 6000),
    ];
    let cases: [(&str, JoinWindows, &[(&str, &str, i64)]); 3] = [
        // shouldMatchInnerJoinWithSelfJoinWithSingleStream (and ..WithTwoStreams)
        ("single stream", windows(100), &ab),
        // shouldMatchInnerJoinWithSelfJoinDifferentBeforeAfterWindows
        (
            "with grace",
            JoinWindows::of_time_difference_and_grace(
                Duration::from_secs(11),
                Duration::from_secs(10),
            )
            .unwrap(),
            &spread,
        ),
        // shouldMatchInnerJoinWithSelfJoinOutOfOrderMessages
        ("out of order", windows(10_000), &out_of_order),
    ];
    for (case, windows, input) in cases {
        let (plain_text, expected) = self_join_results(windows, NO_OPTIMIZATION, input);
        let (self_text, actual) = self_join_results(windows, OPTIMIZE, input);
        assert_eq!(actual, expected, "{case}");
        assert_eq!(
            plain_text.matches("Processor: KSTREAM-WINDOWED-").count(),
            2,
            "{case}"
        );
        assert!(self_text.contains(
            "Processor: KSTREAM-MERGE-0000000005 (stores: [KSTREAM-JOINTHIS-0000000003-store])"
        ));
    }
    // Kafka's results for the first input, in order.
    let (_, results) = self_join_results(windows(100), OPTIMIZE, &ab);
    let expected: Vec<(S, S, i64)> = [
        ("A", "11", 1),
        ("B", "11", 2),
        ("A", "21", 3),
        ("A", "12", 3),
        ("A", "22", 3),
        ("B", "21", 4),
        ("B", "12", 4),
        ("B", "22", 4),
        ("B", "31", 5),
        ("B", "32", 5),
        ("B", "13", 5),
        ("B", "23", 5),
        ("B", "33", 5),
    ]
    .map(|(k, v, t)| (k.to_owned(), v.to_owned(), t))
    .to_vec();
    assert_eq!(results, expected);
}

// ---------------------------------------------------------------------------
// Bad input and edge cases of our own.
// ---------------------------------------------------------------------------

/// A bad value is refused by `build_with`, the driver and the runtime,
/// with Kafka's message first.
#[test]
fn an_unknown_optimization_is_refused_everywhere() {
    let builder = StreamsBuilder::new();
    builder.stream::<S, S>("in").to("out");
    let bad = optimized("merge.repartition.topics,self.join");
    let err = builder.build_with(&bad).unwrap_err();
    assert!(
        matches!(&err, streams_core::StreamsError::InvalidTopologyOptimization { unknown: Some(u), .. } if u == "self.join")
    );
    assert_eq!(
        err.kafka_message().unwrap(),
        "Unrecognized config. Acceptable values are: \"+NO_OPTIMIZATION+\", \"+OPTIMIZE+\", or a comma separated list of specific optimizations: (\"+REUSE_KTABLE_SOURCE_TOPICS+\", \"+MERGE_REPARTITION_TOPICS+\" + \"SINGLE_STORE_SELF_JOIN+\")."
    );
    assert!(
        err.to_string()
            .contains("`self.join` is not an optimization")
    );
    let topology = builder.build().unwrap();
    let driver_err = TopologyTestDriver::with_config(topology.clone(), bad.clone()).unwrap_err();
    assert_eq!(driver_err.to_string(), err.to_string());
    let clients = std::sync::Arc::new(streams_broker::clients::api::SimulatedClients::new(
        streams_broker::Cluster::new(),
    ));
    let runtime_err =
        streams_core::runtime::KafkaStreams::new(&topology, bad, clients).unwrap_err();
    assert!(
        runtime_err.to_string().contains("Unrecognized config."),
        "{runtime_err}"
    );
    let err = builder.build_with(&optimized("none,all")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("\"none,all\" is not a valid optimization config.")
    );
}

struct ToLength;

impl Processor<S, S, S, i64> for ToLength {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, i64>, r: Record<S, S>) -> Result<()> {
        let len = r
            .value
            .as_ref()
            .map(|v| i64::try_from(v.len()).unwrap_or(0));
        ctx.forward(r.with_value(len))
    }
}

/// Kafka merges a repartition topic whose records a `process` between the
/// key change and the grouping turned into other types (and would fail at
/// run time with a `ClassCastException`); we refuse at build, naming the
/// node and the types.
#[test]
fn a_merge_across_a_type_change_is_refused() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .process::<S, i64, _>(|| ToLength)
        .group_by_key()
        .count()
        .to_stream()
        .to("out");
    // Without the merge it builds.
    builder.build().unwrap();
    let err = builder.build_with(&optimized(OPTIMIZE)).unwrap_err();
    assert!(
        matches!(
            &err,
            streams_core::StreamsError::Topology(streams_core::TopologyError::CannotOptimize { node, .. })
                if node == "KSTREAM-KEY-SELECT-0000000001"
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("carries (alloc::string::String, i64), but the node forwards (alloc::string::String, alloc::string::String)"), "{err}");
}

/// The merged repartition topic takes three numbers of the counter, as
/// Kafka's `createRepartitionNode` does, once: building again takes none.
#[test]
fn merged_repartition_topics_take_three_numbers_once() {
    let builder = StreamsBuilder::new();
    let keyed = builder.stream::<S, S>("in").select_key(|_, v| v.clone());
    keyed.clone().group_by_key().count().to_stream().to("a");
    keyed.group_by_key().count().to_stream().to("b");
    let first = describe(&builder.build_with(&optimized(OPTIMIZE)).unwrap());
    assert_eq!(
        describe(&builder.build_with(&optimized(OPTIMIZE)).unwrap()),
        first
    );
    // The DSL used 0..=15; the merge took 16, 17 and 18.
    builder.stream::<S, S>("later").to("c");
    let topology = builder.build().unwrap();
    assert_eq!(
        topology.node_names().last().copied(),
        Some("KSTREAM-SINK-0000000020")
    );
}
