//! The oracle's `RepartitionScenarios`: the "repartition required" mark
//! of Kafka's `KStreamImpl` after a key change. `filter`, `filter_not`,
//! `peek`, `map_values`, `flat_map_values`, `split` branches and a
//! global-table join keep it, `merge` keeps either side's, `map`,
//! `select_key`, `flat_map` and `process` set it, `repartition`, a
//! stream-table join and a stream-stream join clear it. Each scenario
//! chains them before `group_by_key` or a join and reads the repartition
//! topics Kafka builds (or does not build).

use std::collections::BTreeMap;
use std::time::Duration;

use streams_core::dsl::{Branched, JoinWindows, KStream, Repartitioned};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Record, Result, StreamsBuilder};

use super::scenarios_stateful::{changelog, repartition};
use super::{
    Recorder, Scenario, ScenarioResult, counts, first_char, input, jlen, longs, scenario, show,
};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(repartition_mark_kept_by_filter_and_peek),
    scenario!(repartition_mark_kept_by_map_values_before_table_joins),
    scenario!(repartition_mark_of_merge),
    scenario!(repartition_mark_kept_by_split_branches),
    scenario!(repartition_mark_set_by_process_cleared_by_repartition),
    scenario!(repartition_mark_after_table_and_global_joins),
    scenario!(repartition_mark_filter_before_stream_stream_join),
    scenario!(null_keys_at_repartition_topics),
];

/// The branch `name` of a split, taken out of the map.
fn branch(
    branches: &mut BTreeMap<S, KStream<S, S>>,
    name: &str,
) -> std::result::Result<KStream<S, S>, String> {
    branches
        .remove(name)
        .ok_or_else(|| format!("no branch `{name}` in {:?}", branches.keys()))
}

fn repartition_mark_kept_by_filter_and_peek() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map(|k, v| (first_char(v), format!("{}:{v}", show(k))))
        .filter(|_, v| jlen(v) > 4)
        .filter_not(|_, v| v.ends_with('x'))
        .peek(move |k, v| obs.push(format!("peek:{}={v}", show(k))))
        .group_by_key()
        .count_with(counts("counts"))
        .to_stream()
        .to_with("out", longs());
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 0);
    i.pipe_key_value_at("k2", "a", 1);
    i.pipe_key_value_at("k3", "abx", 2);
    i.pipe_key_value_at("k4", "ac", 3);
    i.pipe_key_value_at("k5", "bd", 4);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output(&driver, &repartition("counts"));
    g.output_as(&driver, &changelog("counts"), StringSerde, I64Serde);
    g.finish(driver)
}

fn repartition_mark_kept_by_map_values_before_table_joins() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let names = b.table::<S, S>("names");
    let s = b
        .stream::<S, S>("in")
        .select_key(|_, v| first_char(v))
        .map_values(|v| v.to_uppercase())
        .flat_map_values(|v| [v.clone(), format!("{v}!")]);
    s.clone()
        .join(&names, |v, n| format!("{v}/{n}"))
        .to("out-inner");
    s.left_join(&names, |v, n| format!("{v}/{}", show(n)))
        .to("out-left");
    let driver = g.start(b.build()?)?;
    let t = input(&driver, "names");
    let i = input(&driver, "in");
    t.pipe_key_value_at("a", "ann", 0);
    i.pipe_key_value_at("k1", "ab", 1);
    i.pipe_key_value_at("k2", "bc", 2);
    t.pipe_key_value_at("b", "bob", 3);
    i.pipe_key_value_at("k3", "bd", 4);
    g.output(&driver, "out-inner");
    g.output(&driver, "out-left");
    g.output(&driver, &repartition("KSTREAM-FLATMAPVALUES-0000000006"));
    g.finish(driver)
}

fn repartition_mark_of_merge() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let a = b.stream::<S, S>("a");
    let rekeyed = b.stream::<S, S>("b").select_key(|_, v| first_char(v));
    let c = b.stream::<S, S>("c");
    a.clone()
        .merge(&rekeyed)
        .group_by_key()
        .count_with(counts("merged"))
        .to_stream()
        .to_with("out-merged", longs());
    a.merge(&c)
        .group_by_key()
        .count_with(counts("plain"))
        .to_stream()
        .to_with("out-plain", longs());
    let driver = g.start(b.build()?)?;
    let (ia, ib, ic) = (
        input(&driver, "a"),
        input(&driver, "b"),
        input(&driver, "c"),
    );
    ia.pipe_key_value_at("x", "a1", 0);
    ib.pipe_key_value_at("k1", "x2", 1);
    ic.pipe_key_value_at("x", "c3", 2);
    ib.pipe_key_value_at("k2", "y4", 3);
    ia.pipe_key_value_at("y", "a5", 4);
    g.output_as(&driver, "out-merged", StringSerde, I64Serde);
    g.output_as(&driver, "out-plain", StringSerde, I64Serde);
    g.output(&driver, &repartition("merged"));
    g.finish(driver)
}

fn repartition_mark_kept_by_split_branches() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let mut branches = b
        .stream::<S, S>("in")
        .select_key(|_, v| first_char(v))
        .named("split-")
        .split()
        .branch(|_, v| jlen(v) > 2, Branched::as_("long"))
        .default_branch(Branched::as_("short"));
    branch(&mut branches, "split-long")?
        .group_by_key()
        .count_with(counts("long"))
        .to_stream()
        .to_with("out-long", longs());
    branch(&mut branches, "split-short")?
        .group_by_key()
        .count_with(counts("short"))
        .to_stream()
        .to_with("out-short", longs());
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "abc", 0);
    i.pipe_key_value_at("k2", "ab", 1);
    i.pipe_key_value_at("k3", "ade", 2);
    i.pipe_key_value_at("k4", "b", 3);
    g.output_as(&driver, "out-long", StringSerde, I64Serde);
    g.output_as(&driver, "out-short", StringSerde, I64Serde);
    g.output(&driver, &repartition("long"));
    g.output(&driver, &repartition("short"));
    g.finish(driver)
}

/// The oracle's `FirstLetterKey`: each record forwarded with its value's
/// first letter as the key.
struct FirstLetterKey;

impl Processor<S, S> for FirstLetterKey {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let key = r.value.as_deref().map(first_char);
        ctx.forward(r.with_key(key))
    }
}

fn repartition_mark_set_by_process_cleared_by_repartition() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone()
        .process::<S, S, _>(|| FirstLetterKey)
        .filter(|_, v| !v.starts_with('c'))
        .group_by_key()
        .count_with(counts("processed"))
        .to_stream()
        .to_with("out-processed", longs());
    s.select_key(|_, v| v.chars().skip(1).take(1).collect::<S>())
        .repartition_with(Repartitioned::as_("rekeyed"))
        .filter(|_, v| !v.starts_with('c'))
        .group_by_key()
        .count_with(counts("repartitioned"))
        .to_stream()
        .to_with("out-repartitioned", longs());
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 0);
    i.pipe_key_value_at("k2", "ba", 1);
    i.pipe_key_value_at("k3", "cb", 2);
    i.pipe_key_value_at("k4", "ab", 3);
    g.output_as(&driver, "out-processed", StringSerde, I64Serde);
    g.output_as(&driver, "out-repartitioned", StringSerde, I64Serde);
    g.output(&driver, &repartition("processed"));
    g.output(&driver, &repartition("rekeyed"));
    g.finish(driver)
}

fn repartition_mark_after_table_and_global_joins() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let names = b.table::<S, S>("names");
    let colors = b.global_table::<S, S>("colors");
    let rekeyed = b.stream::<S, S>("in").select_key(|_, v| first_char(v));
    rekeyed
        .clone()
        .join(&names, |v, n| format!("{v}/{n}"))
        .group_by_key()
        .count_with(counts("joined"))
        .to_stream()
        .to_with("out-joined", longs());
    rekeyed
        .join_global(&colors, |_, v| v.clone(), |v, c| format!("{v}/{c}"))
        .group_by_key()
        .count_with(counts("global"))
        .to_stream()
        .to_with("out-global", longs());
    let driver = g.start(b.build()?)?;
    let n = input(&driver, "names");
    let c = input(&driver, "colors");
    let i = input(&driver, "in");
    n.pipe_key_value_at("a", "ann", 0);
    n.pipe_key_value_at("b", "bob", 0);
    c.pipe_key_value_at("ab", "red", 0);
    c.pipe_key_value_at("bc", "blue", 0);
    i.pipe_key_value_at("k1", "ab", 1);
    i.pipe_key_value_at("k2", "bc", 2);
    i.pipe_key_value_at("k3", "ab", 3);
    g.output_as(&driver, "out-joined", StringSerde, I64Serde);
    g.output_as(&driver, "out-global", StringSerde, I64Serde);
    g.output(&driver, &repartition("KSTREAM-KEY-SELECT-0000000007"));
    g.output(&driver, &repartition("global"));
    g.finish(driver)
}

fn repartition_mark_filter_before_stream_stream_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let left = b
        .stream::<S, S>("left")
        .map(|_, v| (first_char(v), v.clone()))
        .filter(|_, v| jlen(v) > 1);
    let right = b.stream::<S, S>("right");
    left.join_stream(
        &right,
        |l, r| format!("{l}+{r}"),
        JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(10))?,
    )
    .group_by_key()
    .count_with(counts("join-counts"))
    .to_stream()
    .to_with("out", longs());
    let driver = g.start(b.build()?)?;
    let l = input(&driver, "left");
    let r = input(&driver, "right");
    r.pipe_key_value_at("a", "r1", 0);
    l.pipe_key_value_at("k1", "ab", 1);
    l.pipe_key_value_at("k2", "a", 2);
    r.pipe_key_value_at("b", "r2", 3);
    l.pipe_key_value_at("k3", "bc", 4);
    l.pipe_key_value_at("k4", "ad", 30);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output(&driver, &repartition("KSTREAM-FILTER-0000000002"));
    g.finish(driver)
}

/// Records whose new key is `None` never reach the repartition topics of a
/// count or of `repartition()`, but do reach the one of a left join with a
/// table, whose joiner sees them with no row (KIP-962).
fn null_keys_at_repartition_topics() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let names = b.table::<S, S>("names");
    let s = b
        .stream::<S, S>("in")
        .select_key_nullable(|_, v| v.filter(|v| !v.starts_with('-')).map(|v| first_char(v)));
    s.clone()
        .group_by_key()
        .count_with(counts("counts"))
        .to_stream()
        .to_with("out-counts", longs());
    s.clone()
        .repartition_with(Repartitioned::as_("moved"))
        .to("out-moved");
    s.left_join(&names, |v, n| format!("{v}/{}", show(n)))
        .to("out-left");
    let driver = g.start(b.build()?)?;
    let t = input(&driver, "names");
    let i = input(&driver, "in");
    t.pipe_key_value_at("a", "ann", 0);
    i.pipe_key_value_at("k1", "ab", 1);
    i.pipe_key_value_at("k2", "-x", 2);
    i.pipe_key_value_at("k3", "bc", 3);
    i.pipe_key_value_at("k4", "-y", 4);
    i.pipe_key_value_at("k5", "ad", 5);
    g.output_as(&driver, "out-counts", StringSerde, I64Serde);
    g.output(&driver, "out-moved");
    g.output(&driver, "out-left");
    g.output(&driver, &repartition("counts"));
    g.output(&driver, &repartition("moved"));
    g.output(&driver, &repartition("KSTREAM-KEY-SELECT-0000000004"));
    g.finish(driver)
}
