//! The oracle's `TopologyScenarios`: node naming, several sources and
//! sinks, pattern sources, repartition topics, fan-out order and a
//! feedback loop (an output topic that is also an input topic).

use streams_core::dsl::{Branched, Consumed, KStream, Produced, Repartitioned};
use streams_core::{StreamsBuilder, Topics};
use streams_test::TestRecord;

use super::{Recorder, Scenario, ScenarioResult, input, jlen, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(named_operators),
    scenario!(generated_names),
    scenario!(mixed_named_and_generated),
    scenario!(pattern_source),
    scenario!(multiple_sources_and_sinks),
    scenario!(fan_out_order),
    scenario!(repartition_unnamed),
    scenario!(repartition_named),
    scenario!(feedback_loop),
];

fn named_operators() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream_with::<S, S>("in", Consumed::as_("src"))
        .named("keep-long")
        .filter(|_, v| jlen(v) > 1)
        .map_values(|v| v.to_uppercase())
        .named("rekey")
        .select_key(|_, v| v.clone())
        .peek(|_, _| {})
        .to_with("out", Produced::as_("sink"));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "bb", 1);
    g.output(&driver, "out");
    g.finish(driver)
}

fn generated_names() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s1 = b.stream::<S, S>("in1");
    let s2 = b.stream::<S, S>("in2");
    s1.merge(&s2)
        .filter(|_, v| !v.is_empty())
        .split()
        .branch(
            |_, v| v.starts_with('a'),
            Branched::with_function(|ks: KStream<S, S>| {
                ks.to("out-a");
                None
            }),
        )
        .default_branch(Branched::with_function(|ks: KStream<S, S>| {
            ks.map_values(|v| format!("{v}?")).to("out-rest");
            None
        }));
    let driver = g.start(b.build()?)?;
    let in1 = input(&driver, "in1");
    let in2 = input(&driver, "in2");
    in1.pipe_key_value_at("k1", "apple", 0);
    in2.pipe_key_value_at("k2", "kiwi", 1);
    in2.pipe_key_value_at("k3", "", 2);
    g.output(&driver, "out-a");
    g.output(&driver, "out-rest");
    g.finish(driver)
}

fn mixed_named_and_generated() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values(|v| format!("{v}1"))
        .named("second")
        .map_values(|v| format!("{v}2"))
        .map_values(|v| format!("{v}3"))
        .named("always")
        .filter(|_, _| true)
        .filter(|_, _| true)
        .to("out");
    let driver = g.start(b.build()?)?;
    input(&driver, "in").pipe_key_value_at("k", "v", 0);
    g.output(&driver, "out");
    g.finish(driver)
}

fn pattern_source() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>(Topics::pattern("in-.*"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let driver = g.start(b.build()?)?;
    let a = input(&driver, "in-a");
    let bb = input(&driver, "in-b");
    a.pipe_key_value_at("k1", "a1", 0);
    bb.pipe_key_value_at("k2", "b1", 1);
    a.pipe_key_value_at("k3", "a2", 2);
    g.output(&driver, "out");
    g.finish(driver)
}

fn multiple_sources_and_sinks() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let a = b.stream::<S, S>("a");
    let bs = b.stream::<S, S>("b");
    let cd = b.stream::<S, S>(["c", "d"]);
    a.clone().filter(|_, v| jlen(v) > 1).to("out1");
    a.to("out2");
    bs.clone().map_values(|v| v.to_uppercase()).to("out1");
    bs.to("out2");
    cd.to("out3");
    let driver = g.start(b.build()?)?;
    let ta = input(&driver, "a");
    let tb = input(&driver, "b");
    let tc = input(&driver, "c");
    let td = input(&driver, "d");
    ta.pipe_key_value_at("ka", "x", 0);
    ta.pipe_key_value_at("ka", "xy", 1);
    tb.pipe_key_value_at("kb", "y", 2);
    tc.pipe_key_value_at("kc", "z", 3);
    td.pipe_key_value_at("kd", "w", 4);
    tc.pipe_key_value_at("kc", "z2", 5);
    g.output(&driver, "out1");
    g.output(&driver, "out2");
    g.output(&driver, "out3");
    g.finish(driver)
}

fn fan_out_order() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().map_values(|v| format!("1:{v}")).to("out");
    s.clone().map_values(|v| format!("2:{v}")).to("out");
    s.filter(|_, v| v == "b").to("out-b");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "b", 1);
    g.output(&driver, "out");
    g.output(&driver, "out-b");
    g.finish(driver)
}

fn repartition_unnamed() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .repartition()
        .map_values(|v| format!("{v}!"))
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "b", 1);
    g.output(&driver, "out");
    g.finish(driver)
}

fn repartition_named() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .repartition_with(Repartitioned::as_("rekeyed"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_record(
        TestRecord::<S, S>::key_value("k1", "a")
            .at(0)
            .with_header("h", "1"),
    );
    i.pipe_key_value_at("k2", "b", 1);
    g.output(&driver, "out");
    g.finish(driver)
}

fn feedback_loop() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let o = obs.clone();
    b.stream::<S, S>("a")
        .peek(move |_, v| o.push(format!("a:{v}")))
        .flat_map_values(|v: &S| vec![format!("{v}1"), format!("{v}2")])
        .to("b");
    let o = obs.clone();
    let bs = b
        .stream::<S, S>("b")
        .peek(move |_, v| o.push(format!("b:{v}")));
    bs.clone().to("out");
    bs.filter(|_, v| jlen(v) < 3)
        .flat_map_values(|v: &S| vec![format!("{v}x"), format!("{v}y")])
        .to("b");
    let driver = g.start(b.build()?)?;
    let a = input(&driver, "a");
    a.pipe_key_value_at("k", "p", 0);
    obs.push("-- second input --");
    a.pipe_key_value_at("k", "q", 1);
    g.output(&driver, "b");
    g.output(&driver, "out");
    g.finish(driver)
}
