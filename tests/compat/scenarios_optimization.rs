//! The oracle's `OptimizationScenarios`: `topology.optimization`, which
//! Kafka applies in `StreamsBuilder.build(Properties)` and we in
//! `StreamsBuilder::build_with(&StreamsConfig)`; each scenario builds with
//! the config it starts the driver with. `reuse.ktable.source.topics` (no
//! changelog for a source table's store), `merge.repartition.topics` (one
//! repartition topic per key change), `single.store.self.join` (one store
//! for a stream joined with itself) and the error of a bad value.

use std::time::Duration;

use streams_core::config::{
    MERGE_REPARTITION_TOPICS, OPTIMIZE, REUSE_KTABLE_SOURCE_TOPICS, SINGLE_STORE_SELF_JOIN,
};
use streams_core::dsl::{
    Grouped, JoinWindows, Materialized, Produced, StreamJoined, TimeWindows, WindowedSerde,
};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig, Topology};

use super::scenarios_stateful::{changelog, repartition};
use super::{
    Recorder, Scenario, ScenarioResult, config, counts, first_char, input, longs, scenario, show,
};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(optimize_reuse_ktable_source_topics),
    scenario!(optimize_merge_repartition_topics),
    scenario!(optimize_merge_repartition_topics_after_merge),
    scenario!(optimize_merge_single_repartition_and_map_values),
    scenario!(optimize_merge_repartition_topics_join_and_cogroup),
    scenario!(optimize_merge_shared_child_error),
    scenario!(optimize_single_store_self_join),
    scenario!(optimize_self_join_left_join),
    scenario!(optimize_self_join_after_repartition),
    scenario!(optimize_config_only_at_driver_changes_nothing),
    scenario!(optimize_unknown_value_error),
    scenario!(optimize_all_with_none_error),
];

/// The oracle's config with `topology.optimization = value`.
fn optimized(value: &str) -> StreamsConfig {
    config().with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, value)
}

/// The oracle's `build(b, value)`: Kafka's `build(props)`.
fn build(b: &StreamsBuilder, value: &str) -> streams_core::Result<Topology> {
    b.build_with(&optimized(value))
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn optimize_reuse_ktable_source_topics() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let users = b.table_with::<S, S>("users", Materialized::as_("users-store"));
    let cities = b.table::<S, S>("cities");
    let clicks = b.stream::<S, S>("clicks");
    clicks
        .clone()
        .join(&users, |c, u| format!("{u} clicked {c}"))
        .left_join(&cities, |s, city| format!("{s} in {}", show(city)))
        .to("out");
    clicks
        .to_table_with(Materialized::as_("latest"))
        .to_stream()
        .to("out-latest");
    let topology = build(&b, REUSE_KTABLE_SOURCE_TOPICS)?;
    let driver = g.start_with(topology, optimized(REUSE_KTABLE_SOURCE_TOPICS))?;
    let u = input(&driver, "users");
    let c = input(&driver, "cities");
    let k = input(&driver, "clicks");
    u.pipe_key_value_at("u1", "ann", 0);
    c.pipe_key_value_at("u1", "Oslo", 1);
    k.pipe_key_value_at("u1", "home", 2);
    u.pipe_key_value_at("u2", "bob", 3);
    k.pipe_key_value_at("u2", "cart", 4);
    u.pipe_record(streams_test::TestRecord::tombstone("u1").at(5));
    k.pipe_key_value_at("u1", "exit", 6);
    g.output(&driver, "out");
    g.output(&driver, "out-latest");
    g.output(&driver, &changelog("users-store"));
    g.output(&driver, &changelog("cities-STATE-STORE-0000000002"));
    g.output(&driver, &changelog("latest"));
    g.finish(driver)
}

fn optimize_merge_repartition_topics() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let names = b.table::<S, S>("names");
    let mapped = b
        .stream::<S, S>("in")
        .map(|k, v| (first_char(v), format!("{}:{v}", show(k))));
    mapped
        .clone()
        .group_by_key_with(Grouped::as_("counts"))
        .count_with(counts("count-store"))
        .to_stream()
        .to_with("out-counts", longs());
    mapped
        .clone()
        .filter(|_, v| !v.ends_with('x'))
        .peek(move |k, v| obs.push(format!("peek:{}={v}", show(k))))
        .group_by_key()
        .reduce_with(|a, v| format!("{a}+{v}"), Materialized::as_("reduce-store"))
        .to_stream()
        .to("out-reduced");
    mapped
        .clone()
        .named("latest")
        .to_table_with(Materialized::as_("latest-store"))
        .to_stream()
        .to("out-latest");
    mapped
        .join(&names, |v, n| format!("{v}/{n}"))
        .to("out-joined");
    let topology = build(&b, MERGE_REPARTITION_TOPICS)?;
    let driver = g.start_with(topology, optimized(MERGE_REPARTITION_TOPICS))?;
    let n = input(&driver, "names");
    let i = input(&driver, "in");
    n.pipe_key_value_at("a", "ann", 0);
    i.pipe_key_value_at("k1", "ab", 1);
    i.pipe_key_value_at("k2", "ax", 2);
    i.pipe_key_value_at("k3", "bc", 3);
    n.pipe_key_value_at("b", "bob", 4);
    i.pipe_key_value_at("k4", "bd", 5);
    g.output_as(&driver, "out-counts", StringSerde, I64Serde);
    g.output(&driver, "out-reduced");
    g.output(&driver, "out-latest");
    g.output(&driver, "out-joined");
    g.output(&driver, &repartition("counts"));
    g.finish(driver)
}

fn optimize_merge_repartition_topics_after_merge() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let key = |v: &S| v.split(':').next().unwrap_or_default().to_owned();
    let a = b
        .stream::<S, S>("inA")
        .named("mappedA")
        .map(move |_, v| (key(v), v.clone()));
    let c = b
        .stream::<S, S>("inB")
        .named("mappedB")
        .map(move |_, v| (key(v), v.clone()));
    let merged = a.named("merged").merge(&c);
    merged
        .clone()
        .named("long-count")
        .group_by_key_with(Grouped::as_("long-groupByKey"))
        .count_with(counts("long-store"))
        .to_stream()
        .to_with("out-long", longs());
    merged
        .named("string-count")
        .group_by_key_with(Grouped::as_("string-groupByKey"))
        .count_with(counts("string-store"))
        .to_stream()
        .map_values(|v| format!("n={v}"))
        .to("out-string");
    let topology = build(&b, OPTIMIZE)?;
    let driver = g.start_with(topology, optimized(OPTIMIZE))?;
    let ia = input(&driver, "inA");
    let ib = input(&driver, "inB");
    ia.pipe_key_value_at("x", "A:1", 0);
    ib.pipe_key_value_at("y", "B:2", 1);
    ia.pipe_key_value_at("z", "A:3", 2);
    ib.pipe_key_value_at("w", "A:4", 3);
    g.output_as(&driver, "out-long", StringSerde, I64Serde);
    g.output(&driver, "out-string");
    g.output(&driver, &repartition("long-groupByKey"));
    g.finish(driver)
}

fn optimize_merge_single_repartition_and_map_values() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let keyed = b.stream::<S, S>("in").select_key(|_, v| first_char(v));
    keyed
        .clone()
        .map_values(|v| v.to_uppercase())
        .group_by_key()
        .count()
        .to_stream()
        .to_with("out-upper", longs());
    keyed
        .flat_map_values(|v| v.split(' ').map(str::to_owned).collect::<Vec<_>>())
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .count()
        .to_stream()
        .to_with(
            "out-windowed",
            Produced::with(WindowedSerde::time_with_size(StringSerde, ms(10)), I64Serde),
        );
    b.stream::<S, S>("other")
        .select_key(|_, v| v.clone())
        .group_by_key()
        .count()
        .to_stream()
        .to_with("out-other", longs());
    let topology = build(&b, OPTIMIZE)?;
    let driver = g.start_with(topology, optimized(OPTIMIZE))?;
    let i = input(&driver, "in");
    let other = input(&driver, "other");
    i.pipe_key_value_at("k1", "ab cd", 1);
    i.pipe_key_value_at("k2", "ae", 2);
    other.pipe_key_value_at("k3", "x", 3);
    other.pipe_key_value_at("k4", "x", 4);
    g.output_as(&driver, "out-upper", StringSerde, I64Serde);
    g.output_as(
        &driver,
        "out-windowed",
        WindowedSerde::time_with_size(StringSerde, ms(10)),
        I64Serde,
    );
    g.output_as(&driver, "out-other", StringSerde, I64Serde);
    g.finish(driver)
}

fn optimize_single_store_self_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone()
        .join_stream(
            &s,
            |l, r| format!("{l}{r}"),
            JoinWindows::of_time_difference_with_no_grace(ms(100))?,
        )
        .to("out");
    let topology = build(&b, SINGLE_STORE_SELF_JOIN)?;
    let driver = g.start_with(topology, optimized(SINGLE_STORE_SELF_JOIN))?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("A", "1", 1);
    i.pipe_key_value_at("B", "1", 2);
    i.pipe_key_value_at("A", "2", 3);
    i.pipe_key_value_at("B", "2", 4);
    i.pipe_key_value_at("B", "3", 5);
    i.pipe_key_value_at("A", "3", 150);
    i.pipe_key_value_at("A", "0", 40);
    g.output(&driver, "out");
    g.output_as(
        &driver,
        &changelog("KSTREAM-JOINTHIS-0000000003-store"),
        BytesSerde,
        StringSerde,
    );
    g.finish(driver)
}

fn optimize_self_join_left_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone()
        .left_join_stream_with(
            &s,
            |l, r| format!("{l}/{}", show(r)),
            JoinWindows::of_time_difference_and_grace(ms(10), ms(5))?,
            StreamJoined::as_("self"),
        )
        .to("out");
    let topology = build(&b, OPTIMIZE)?;
    let driver = g.start_with(topology, optimized(OPTIMIZE))?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("A", "1", 0);
    i.pipe_record(streams_test::TestRecord::value("x").at(1));
    i.pipe_key_value_at("A", "2", 8);
    i.pipe_key_value_at("B", "1", 30);
    i.pipe_key_value_at("A", "3", 12);
    i.pipe_key_value_at("A", "4", 50);
    g.output(&driver, "out");
    g.finish(driver)
}

fn optimize_self_join_after_repartition() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let keyed = b.stream::<S, S>("in").select_key(|_, v| first_char(v));
    keyed
        .clone()
        .join_stream(
            &keyed,
            |l, r| format!("{l}&{r}"),
            JoinWindows::of_time_difference_with_no_grace(ms(5))?,
        )
        .to("out");
    let topology = build(&b, OPTIMIZE)?;
    let driver = g.start_with(topology, optimized(OPTIMIZE))?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 0);
    i.pipe_key_value_at("k2", "ac", 3);
    i.pipe_key_value_at("k3", "bd", 4);
    g.output(&driver, "out");
    g.output(&driver, &repartition("KSTREAM-KEY-SELECT-0000000001"));
    g.finish(driver)
}

fn optimize_config_only_at_driver_changes_nothing() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let keyed = b.stream::<S, S>("in").select_key(|_, v| first_char(v));
    keyed
        .clone()
        .group_by_key()
        .count_with(counts("first"))
        .to_stream()
        .to_with("out-first", longs());
    keyed
        .group_by_key()
        .count_with(counts("second"))
        .to_stream()
        .to_with("out-second", longs());
    let driver = g.start_with(b.build()?, optimized(OPTIMIZE))?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 0);
    i.pipe_key_value_at("k2", "ac", 1);
    g.output_as(&driver, "out-first", StringSerde, I64Serde);
    g.output_as(&driver, "out-second", StringSerde, I64Serde);
    g.finish(driver)
}

fn optimize_unknown_value_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    g.expect_error(build(&b, "merge.repartition.topics, self.join").map(|_| ()));
    Ok(g.finish_without_driver())
}

fn optimize_all_with_none_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    g.expect_error(build(&b, "all,none").map(|_| ()));
    Ok(g.finish_without_driver())
}

fn optimize_merge_repartition_topics_join_and_cogroup() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let mapped = b
        .stream::<S, S>("in")
        .map(|k, v| (first_char(v), format!("{}:{v}", show(k))));
    mapped
        .clone()
        .join_stream_with(
            &mapped.clone().filter(|_, v| !v.ends_with('x')),
            |l, r| format!("{l}&{r}"),
            JoinWindows::of_time_difference_with_no_grace(ms(10))?,
            StreamJoined::as_("joined"),
        )
        .to("out-joined");
    mapped
        .clone()
        .group_by_key()
        .count_with(counts("counts"))
        .to_stream()
        .to_with("out-counts", longs());
    mapped
        .group_by_key()
        .cogroup(|_, v: &S, agg: S| format!("{agg}{}", v.len()))
        .aggregate_with(String::new, Materialized::as_("lengths"))
        .to_stream()
        .to("out-lengths");
    let topology = build(&b, MERGE_REPARTITION_TOPICS)?;
    let driver = g.start_with(topology, optimized(MERGE_REPARTITION_TOPICS))?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 0);
    i.pipe_key_value_at("k22", "ac", 3);
    i.pipe_key_value_at("k3", "bx", 4);
    i.pipe_key_value_at("k4", "ad", 20);
    g.output(&driver, "out-joined");
    g.output_as(&driver, "out-counts", StringSerde, I64Serde);
    g.output(&driver, "out-lengths");
    g.output(&driver, &repartition("KSTREAM-MAP-0000000001"));
    g.finish(driver)
}

fn optimize_merge_shared_child_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let peeked = b
        .stream::<S, S>("in")
        .map(|_, v| (first_char(v), v.clone()))
        .peek(|_, _| {});
    peeked
        .clone()
        .group_by_key()
        .count_with(counts("c1"))
        .to_stream()
        .to_with("o1", longs());
    peeked
        .group_by_key()
        .count_with(counts("c2"))
        .to_stream()
        .to_with("o2", longs());
    g.expect_error(build(&b, MERGE_REPARTITION_TOPICS).map(|_| ()));
    Ok(g.finish_without_driver())
}
