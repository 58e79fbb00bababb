//! The oracle's `StatefulScenarios`: word count, aggregations of grouped
//! streams and grouped tables, tables with tombstones, a Processor API
//! key-value store, and the contents of repartition and changelog topics
//! (read like any output topic).

use std::time::Duration;

use streams_core::dsl::{Consumed, Grouped, Materialized, Produced};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::state::Stores;
use streams_core::{Record, Result, StreamsBuilder, StreamsConfig, Topology};
use streams_test::TestRecord;

use super::{
    APPLICATION_ID, Recorder, Scenario, ScenarioResult, config, first_char, input, jlen, no_cache,
    scenario, show,
};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(word_count),
    scenario!(count_group_by_key),
    scenario!(reduce_grouped_named),
    scenario!(aggregate_after_select_key),
    scenario!(table_tombstones_filter_map_values),
    scenario!(table_materialized_changelog),
    scenario!(table_materialized_changelog_cache_off),
    scenario!(kv_store_changelog_deletes),
    scenario!(table_group_by_count),
    scenario!(table_group_by_reduce),
    scenario!(table_group_by_named_grouped),
    scenario!(table_group_by_aggregate),
    scenario!(to_table_plain_and_named_materialized),
    scenario!(to_table_after_key_change),
    scenario!(anonymous_materialized_takes_a_number),
];

/// The changelog topic of `store`, as the driver names it.
pub(super) fn changelog(store: &str) -> String {
    format!("{APPLICATION_ID}-{store}-changelog")
}

/// The repartition topic with base name `base`, as the driver names it.
pub(super) fn repartition(base: &str) -> String {
    format!("{APPLICATION_ID}-{base}-repartition")
}

/// A key every input record of the scenario has (Java would throw on `null`).
fn key(k: Option<&S>) -> S {
    k.cloned()
        .expect("every input record of this scenario has a key")
}

fn word_count() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("text")
        .flat_map_values(|line: &S| {
            line.to_lowercase()
                .split(' ')
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "text");
    i.pipe_key_value_at("l1", "the quick brown fox", 0);
    i.pipe_key_value_at("l2", "the lazy dog", 5);
    i.pipe_key_value_at("l3", "The Fox", 10);
    i.pipe_key_value_at("l4", "dog eat dog", 15);
    g.output_as(&driver, "counts-out", StringSerde, I64Serde);
    g.output(&driver, &repartition("counts"));
    g.output_as(&driver, &changelog("counts"), StringSerde, I64Serde);
    g.finish(driver)
}

fn count_group_by_key() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .count()
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("a", "1", 0);
    i.pipe_key_value_at("b", "2", 1);
    i.pipe_key_value_at("a", "3", 2);
    i.pipe_record(TestRecord::new(None, Some("4".to_owned())).at(3));
    i.pipe_record(TestRecord::new(Some("a".to_owned()), None).at(4));
    i.pipe_key_value_at("b", "5", 5);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output_as(
        &driver,
        &changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"),
        StringSerde,
        I64Serde,
    );
    g.finish(driver)
}

fn reduce_grouped_named() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_with(|k, _| first_char(&key(k)), Grouped::as_("by-initial"))
        .reduce_with(|agg, v| format!("{agg}+{v}"), Materialized::as_("reduced"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("apple", "1", 0);
    i.pipe_key_value_at("banana", "2", 1);
    i.pipe_key_value_at("avocado", "3", 2);
    i.pipe_key_value_at("blueberry", "4", 3);
    i.pipe_key_value_at("apricot", "5", 4);
    g.output(&driver, "out");
    g.output(&driver, &repartition("by-initial"));
    g.output(&driver, &changelog("reduced"));
    g.finish(driver)
}

fn aggregate_after_select_key() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| first_char(v))
        .group_by_key_with(Grouped::with(StringSerde, StringSerde))
        .aggregate_with(
            || 0_i64,
            |_, v, agg| agg + jlen(v) as i64,
            Materialized::as_("lengths").with_value_serde(I64Serde),
        )
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "xy", 0);
    i.pipe_key_value_at("k2", "z", 1);
    i.pipe_key_value_at("k3", "xyz", 2);
    i.pipe_key_value_at("k4", "zz", 3);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output(&driver, &repartition("lengths"));
    g.output_as(&driver, &changelog("lengths"), StringSerde, I64Serde);
    g.finish(driver)
}

fn table_tombstones_filter_map_values() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table::<S, S>("in")
        .filter(|_, v| jlen(v) > 1)
        .filter_not(|_, v| v.starts_with('x'))
        .map_values(|_, v| v.to_uppercase())
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("a", "aa", 0);
    i.pipe_key_value_at("b", "b", 1);
    i.pipe_record(TestRecord::tombstone("a").at(2));
    i.pipe_key_value_at("c", "xc", 3);
    i.pipe_key_value_at("c", "cc", 4);
    i.pipe_record(TestRecord::tombstone("d").at(5));
    i.pipe_key_value_at("c", "c", 6);
    i.pipe_record(TestRecord::new(None, Some("nk".to_owned())).at(7));
    i.pipe_key_value_at("a", "aaa", 8);
    g.output(&driver, "out");
    g.finish(driver)
}

fn table_materialized_changelog() -> ScenarioResult {
    table_materialized_changelog_with(config())
}

fn table_materialized_changelog_cache_off() -> ScenarioResult {
    table_materialized_changelog_with(no_cache())
}

fn table_materialized_changelog_with(config: StreamsConfig) -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table_with::<S, S>("in", Materialized::as_("table-store"))
        .to_stream()
        .to("out");
    let driver = g.start_with(b.build()?, config)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("a", "1", 0);
    i.pipe_key_value_at("b", "2", 1);
    i.pipe_key_value_at("a", "3", 2);
    i.pipe_record(TestRecord::tombstone("a").at(3));
    i.pipe_record(TestRecord::tombstone("c").at(4));
    i.pipe_record(TestRecord::tombstone("b").at(5));
    i.pipe_key_value_at("a", "4", 6);
    g.output(&driver, "out");
    g.output(&driver, &changelog("table-store"));
    g.finish(driver)
}

/// The oracle's `KvProcessor`: `DEL` deletes the key, `?x` is
/// `put_if_absent(key, "x")`, anything else is `put(key, value)`; forwards
/// what happened and the store's contents in key order.
struct KvProcessor;

impl Processor<S, S> for KvProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let k = key(r.key.as_ref());
        let v = show(r.value.as_ref()).to_owned();
        let value = {
            let mut store = ctx.key_value_store::<S, S>("kv")?;
            let what = if v == "DEL" {
                format!("delete -> {}", show(store.delete(&k)?.as_ref()))
            } else if let Some(rest) = v.strip_prefix('?') {
                let previous = store.put_if_absent(k, rest.to_owned())?;
                format!("putIfAbsent {rest} -> {}", show(previous.as_ref()))
            } else {
                store.put(k, v.clone())?;
                format!("put {v}")
            };
            let contents: Vec<String> = store.all()?.map(|(k, v)| format!("{k}={v}")).collect();
            format!("{what} [{}]", contents.join(", "))
        };
        ctx.forward(r.with_value(Some(value)))
    }
}

fn kv_store_changelog_deletes() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Store", || KvProcessor, &["Source"])?
        .add_state_store(
            Stores::key_value_store_builder("kv", StringSerde, StringSerde),
            &["Store"],
        )?
        .add_sink::<S, S>("Sink", "out", &["Store"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("a", "1", 0);
    i.pipe_key_value_at("b", "2", 1);
    i.pipe_key_value_at("a", "DEL", 2);
    i.pipe_key_value_at("c", "DEL", 3);
    i.pipe_key_value_at("b", "?9", 4);
    i.pipe_key_value_at("a", "?5", 5);
    i.pipe_key_value_at("b", "3", 6);
    i.pipe_key_value_at("b", "DEL", 7);
    g.output(&driver, "out");
    g.output(&driver, &changelog("kv"));
    g.finish(driver)
}

fn table_group_by_count() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table::<S, S>("user-regions")
        .group_by(|user, region| (region.clone(), user.clone()))
        .count_with(Materialized::as_("region-counts"))
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "user-regions");
    i.pipe_key_value_at("alice", "eu", 0);
    i.pipe_key_value_at("bob", "us", 1);
    i.pipe_key_value_at("carol", "eu", 2);
    i.pipe_key_value_at("alice", "us", 3);
    i.pipe_record(TestRecord::tombstone("bob").at(4));
    i.pipe_record(TestRecord::tombstone("dave").at(5));
    i.pipe_key_value_at("carol", "eu", 6);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output_as(
        &driver,
        &repartition("region-counts"),
        StringSerde,
        BytesSerde,
    );
    g.output_as(&driver, &changelog("region-counts"), StringSerde, I64Serde);
    g.finish(driver)
}

fn table_group_by_reduce() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table_consumed::<S, i64>(
        "amounts",
        Consumed::with(StringSerde, I64Serde),
        Materialized::default(),
    )
    .group_by_with(
        |k, v| (first_char(k), *v),
        Grouped::with(StringSerde, I64Serde),
    )
    .reduce(|agg, v| agg + v, |agg, v| agg - v)
    .to_stream()
    .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i =
        driver.create_input_topic_with_time("amounts", StringSerde, I64Serde, 0, Duration::ZERO);
    i.pipe_key_value_at("a1", 10, 0);
    i.pipe_key_value_at("a2", 5, 1);
    i.pipe_key_value_at("b1", 7, 2);
    i.pipe_key_value_at("a1", 20, 3);
    i.pipe_record(TestRecord::tombstone("a2").at(4));
    i.pipe_record(TestRecord::tombstone("b1").at(5));
    i.pipe_key_value_at("b2", 1, 6);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.finish(driver)
}

fn table_group_by_named_grouped() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table::<S, S>("user-regions")
        .group_by_with(
            |user, region| (region.clone(), user.clone()),
            Grouped::with(StringSerde, StringSerde).with_name("by-region"),
        )
        .count()
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "user-regions");
    i.pipe_key_value_at("alice", "eu", 0);
    i.pipe_key_value_at("bob", "us", 1);
    i.pipe_key_value_at("alice", "us", 2);
    i.pipe_record(TestRecord::tombstone("bob").at(3));
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output_as(&driver, &repartition("by-region"), StringSerde, BytesSerde);
    g.output_as(
        &driver,
        &changelog("KTABLE-AGGREGATE-STATE-STORE-0000000004"),
        StringSerde,
        I64Serde,
    );
    g.finish(driver)
}

fn table_group_by_aggregate() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table::<S, S>("in")
        .group_by(|k, v| (first_char(v), format!("{k}={v}")))
        .aggregate_with(
            String::new,
            |_, v, agg| format!("{agg}+{v}"),
            |_, v, agg| format!("{agg}-{v}"),
            Materialized::as_("agg"),
        )
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a1", 0);
    i.pipe_key_value_at("k2", "a2", 1);
    i.pipe_key_value_at("k1", "b1", 2);
    i.pipe_key_value_at("k2", "a3", 3);
    i.pipe_record(TestRecord::tombstone("k2").at(4));
    i.pipe_key_value_at("k3", "b3", 5);
    g.output(&driver, "out");
    g.output(&driver, &changelog("agg"));
    g.finish(driver)
}

fn to_table_plain_and_named_materialized() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().to_table().to_stream().to("out");
    s.named("latest")
        .to_table_with(Materialized::as_("latest-store"))
        .to_stream()
        .to("out-materialized");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("a", "1", 0);
    i.pipe_key_value_at("b", "2", 1);
    i.pipe_key_value_at("a", "3", 2);
    i.pipe_record(TestRecord::tombstone("a").at(3));
    i.pipe_record(TestRecord::tombstone("c").at(4));
    i.pipe_record(TestRecord::value("nk").at(5));
    i.pipe_key_value_at("b", "4", 6);
    i.pipe_key_value_at("a", "5", 3);
    g.output(&driver, "out");
    g.output(&driver, "out-materialized");
    g.output(&driver, &changelog("latest-store"));
    g.finish(driver)
}

fn to_table_after_key_change() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map(|k, v| (v[..1].to_owned(), format!("{}:{v}", show(k))))
        .filter(|_, v| !v.ends_with('x'))
        .to_table_with(Materialized::as_("by-initial"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "apple", 0);
    i.pipe_key_value_at("k2", "banana", 1);
    i.pipe_key_value_at("k3", "avocado", 2);
    i.pipe_key_value_at("k4", "box", 3);
    i.pipe_key_value_at("k5", "blueberry", 4);
    i.pipe_key_value_at("k6", "apricot", 1);
    g.output(&driver, "out");
    g.output(&driver, &repartition("KSTREAM-TOTABLE-0000000003"));
    g.output(&driver, &changelog("by-initial"));
    g.finish(driver)
}

/// An anonymous `Materialized` (serdes only) on a table filter and on a
/// count takes a store number; the filter builds no store.
fn anonymous_materialized_takes_a_number() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table::<S, S>("t")
        .filter_with(
            |_, v| !v.is_empty(),
            Materialized::with(StringSerde, StringSerde),
        )
        .map_values(|_, v| format!("{v}!"))
        .to_stream()
        .to("out-table");
    b.stream::<S, S>("s")
        .group_by_key()
        .count_with(Materialized::with(StringSerde, I64Serde))
        .to_stream()
        .to_with("out-count", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    input(&driver, "t").pipe_key_value_at("a", "x", 0);
    input(&driver, "t").pipe_key_value_at("b", "", 1);
    input(&driver, "s").pipe_key_value_at("a", "1", 2);
    input(&driver, "s").pipe_key_value_at("a", "2", 3);
    g.output(&driver, "out-table");
    g.output_as(&driver, "out-count", StringSerde, I64Serde);
    g.finish(driver)
}
