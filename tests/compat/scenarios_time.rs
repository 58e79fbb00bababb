//! The oracle's `TimeScenarios`: explicit and auto-advanced timestamps,
//! stream-time and wall-clock punctuation, and the times a processor
//! sees. The driver's wall clock starts at 0.

use std::time::Duration;

use streams_core::processor::{
    Cancellable, Processor, ProcessorContext, Punctuation, PunctuationType,
};
use streams_core::serde::StringSerde;
use streams_core::{Record, Result, Topology};
use streams_test::{TestRecord, TopologyTestDriver};

use super::{Observer, Recorder, Scenario, ScenarioResult, input, scenario, show};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(timestamps_explicit),
    scenario!(timestamps_auto_advance),
    scenario!(punctuate_stream_time),
    scenario!(punctuate_wall_clock),
    scenario!(punctuate_cancel),
    scenario!(punctuate_stream_and_wall),
    scenario!(punctuate_scheduled_in_process),
    scenario!(processor_context_time),
    scenario!(task_idling_two_inputs),
    scenario!(task_idling_with_a_repartition_topic),
];

/// Source(in) -> Sink(out).
fn pass_through() -> Result<Topology> {
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_sink::<S, S>("Sink", "out", &["Source"])?;
    Ok(t)
}

fn timestamps_explicit() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = g.start(pass_through()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 1000);
    i.pipe_key_value_at("k2", "b", 0);
    i.pipe_key_value_at("k3", "c", 999_999_999_999);
    i.pipe_key_value_at("k4", "d", 500);
    i.pipe_key_value_at("k5", "e", 500);
    g.output(&driver, "out");
    g.finish(driver)
}

fn timestamps_auto_advance() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = g.start(pass_through()?)?;
    let i = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        StringSerde,
        1000,
        Duration::from_millis(10),
    );
    i.pipe_key_value("k1", "a"); // 1000
    i.pipe_key_value("k2", "b"); // 1010
    i.pipe_key_value_at("k3", "c", 5000); // explicit
    i.pipe_key_value("k4", "d"); // 1020
    i.advance_time(Duration::from_millis(100)); // 1030 -> 1130
    i.pipe_key_value("k5", "e"); // 1130
    i.pipe_value("f"); // null key, 1140
    i.pipe_values(["g", "h"]); // 1150, 1160
    i.pipe_key_values_timed([("k8", "i"), ("k9", "j")], 0, Duration::from_millis(1)); // 0, 1
    i.pipe_record(TestRecord::key_value("k10", "k")); // 1170
    i.pipe_record(TestRecord::key_value("k11", "l").with_header("h", "1")); // 1180
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `Ticker`: schedules a 10 ms punctuation of each type in
/// `init`; each punctuation observes and forwards `("tick", "<label>@<ts>")`
/// and cancels its schedule on the `cancel_after`-th punctuation (shared
/// count); each record is observed and forwarded.
struct Ticker {
    obs: Observer,
    types: Vec<PunctuationType>,
    cancel_after: u32,
    punctuations: u32,
    handles: Vec<Cancellable>,
}

fn label(kind: PunctuationType) -> &'static str {
    match kind {
        PunctuationType::StreamTime => "stream",
        PunctuationType::WallClockTime => "wall",
    }
}

impl Processor<S, S> for Ticker {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, S, S>) -> Result<()> {
        for &kind in &self.types {
            self.handles
                .push(ctx.schedule(Duration::from_millis(10), kind)?);
        }
        Ok(())
    }

    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        self.obs
            .push(format!("process {}@{}", show(r.key.as_ref()), r.timestamp));
        ctx.forward(r)
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, S, S>,
        ts: i64,
        p: &Punctuation,
    ) -> Result<()> {
        let label = label(p.kind);
        self.punctuations += 1;
        self.obs.push(format!("punctuate {label}@{ts}"));
        ctx.forward(Record::new(
            Some("tick".to_owned()),
            Some(format!("{label}@{ts}")),
            ts,
        ))?;
        if self.cancel_after > 0 && self.punctuations == self.cancel_after {
            self.obs.push(format!("cancel {label}"));
            for h in self.handles.iter().filter(|h| h.id() == p.id) {
                h.cancel();
            }
        }
        Ok(())
    }
}

fn ticker_topology(
    obs: &Observer,
    cancel_after: u32,
    types: &[PunctuationType],
) -> Result<Topology> {
    let (obs, types) = (obs.clone(), types.to_vec());
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor(
            "Ticker",
            move || Ticker {
                obs: obs.clone(),
                types: types.clone(),
                cancel_after,
                punctuations: 0,
                handles: Vec::new(),
            },
            &["Source"],
        )?
        .add_sink::<S, S>("Sink", "out", &["Ticker"])?;
    Ok(t)
}

/// The oracle's `advance(g, n)`: observed, then the driver's wall clock moves.
fn advance(obs: &Observer, driver: &TopologyTestDriver, ms: u64) -> Result<()> {
    obs.push(format!("advanceWallClockTime({ms})"));
    driver.try_advance_wall_clock_time(Duration::from_millis(ms))
}

fn pipe_numbered(driver: &TopologyTestDriver, times: &[i64]) {
    let i = input(driver, "in");
    for (n, &ts) in times.iter().enumerate() {
        i.pipe_key_value_at(format!("r{}", n + 1), format!("v{}", n + 1), ts);
    }
}

fn punctuate_stream_time() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let driver = g.start(ticker_topology(&obs, 0, &[PunctuationType::StreamTime])?)?;
    pipe_numbered(&driver, &[0, 5, 10, 25, 31, 29, 40, 100]);
    g.output(&driver, "out");
    g.finish(driver)
}

fn punctuate_wall_clock() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let driver = g.start(ticker_topology(&obs, 0, &[PunctuationType::WallClockTime])?)?;
    let i = input(&driver, "in");
    advance(&obs, &driver, 5)?;
    advance(&obs, &driver, 5)?;
    advance(&obs, &driver, 3)?;
    i.pipe_key_value_at("r1", "v1", 100);
    for ms in [30, 1, 6, 0, 25] {
        advance(&obs, &driver, ms)?;
    }
    g.output(&driver, "out");
    g.finish(driver)
}

fn punctuate_cancel() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let driver = g.start(ticker_topology(&obs, 2, &[PunctuationType::StreamTime])?)?;
    pipe_numbered(&driver, &[0, 10, 20, 30, 40]);
    g.output(&driver, "out");
    g.finish(driver)
}

fn punctuate_stream_and_wall() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let types = [PunctuationType::StreamTime, PunctuationType::WallClockTime];
    let driver = g.start(ticker_topology(&obs, 0, &types)?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("r1", "v1", 0);
    advance(&obs, &driver, 10)?;
    i.pipe_key_value_at("r2", "v2", 10);
    i.pipe_key_value_at("r3", "v3", 20);
    advance(&obs, &driver, 15)?;
    i.pipe_key_value_at("r4", "v4", 1000);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `LateScheduler`: on the first record, schedules a 10 ms
/// stream-time and a 10 ms wall-clock punctuation; forwards every record.
struct LateScheduler {
    obs: Observer,
    scheduled: bool,
}

impl Processor<S, S> for LateScheduler {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        self.obs
            .push(format!("process {}@{}", show(r.key.as_ref()), r.timestamp));
        if !self.scheduled {
            self.scheduled = true;
            self.obs.push("schedule stream+wall 10ms");
            ctx.schedule(Duration::from_millis(10), PunctuationType::StreamTime)?;
            ctx.schedule(Duration::from_millis(10), PunctuationType::WallClockTime)?;
        }
        ctx.forward(r)
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, S, S>,
        ts: i64,
        p: &Punctuation,
    ) -> Result<()> {
        let label = label(p.kind);
        self.obs.push(format!("punctuate {label}@{ts}"));
        ctx.forward(Record::new(
            Some("tick".to_owned()),
            Some(format!("{label}@{ts}")),
            ts,
        ))
    }
}

fn punctuate_scheduled_in_process() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let o = obs.clone();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor(
            "LateScheduler",
            move || LateScheduler {
                obs: o.clone(),
                scheduled: false,
            },
            &["Source"],
        )?
        .add_sink::<S, S>("Sink", "out", &["LateScheduler"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    advance(&obs, &driver, 3)?;
    i.pipe_key_value_at("r1", "v1", 7);
    i.pipe_key_value_at("r2", "v2", 12);
    i.pipe_key_value_at("r3", "v3", 17);
    i.pipe_key_value_at("r4", "v4", 18);
    advance(&obs, &driver, 9)?;
    advance(&obs, &driver, 1)?;
    i.pipe_key_value_at("r5", "v5", 30);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `ContextProbe`: the value becomes the record's timestamp,
/// stream time, wall-clock time and metadata.
struct ContextProbe;

impl Processor<S, S> for ContextProbe {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let meta = ctx.record_metadata().map_or_else(
            || "no-metadata".to_owned(),
            |m| {
                format!(
                    "topic={},partition={},offset={}",
                    m.topic, m.partition, m.offset
                )
            },
        );
        let value = format!(
            "ts={},st={},wc={},{meta}",
            r.timestamp,
            ctx.stream_time(),
            ctx.wall_clock_time()
        );
        ctx.forward(r.with_value(Some(value)))
    }
}

fn processor_context_time() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", ["in", "in2"])?
        .add_processor("Probe", || ContextProbe, &["Source"])?
        .add_sink::<S, S>("Sink", "out", &["Probe"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    let i2 = input(&driver, "in2");
    i.pipe_key_value_at("k1", "a", 5);
    driver.try_advance_wall_clock_time(Duration::from_millis(100))?;
    i.pipe_key_value_at("k2", "b", 3);
    i.pipe_key_value_at("k3", "c", 50);
    i2.pipe_key_value_at("k4", "d", 1);
    i.pipe_key_value_at("k5", "e", 60);
    g.output(&driver, "out");
    g.finish(driver)
}

/// `max.task.idle.ms` as Kafka's driver honours it.
fn idle_config(ms: i64) -> streams_core::StreamsConfig {
    super::config().with_property("max.task.idle.ms", ms.to_string())
}

fn task_idling_two_inputs() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let seen = obs.clone();
    let b = streams_core::StreamsBuilder::new();
    let one = b.stream::<String, String>("input1");
    let two = b.stream::<String, String>("input2");
    one.merge(&two)
        .peek(move |k, v| seen.push(format!("seen:{}={v}", show(k))))
        .to("output");
    let driver = g.start_with(b.build()?, idle_config(1000))?;
    let (in1, in2) = (input(&driver, "input1"), input(&driver, "input2"));
    obs.push("pipe input1 A@0");
    in1.pipe_key_value_at("A", "alpha", 0);
    advance(&obs, &driver, 1)?;
    obs.push("pipe input2 B@5");
    in2.pipe_key_value_at("B", "beta", 5);
    advance(&obs, &driver, 998)?;
    advance(&obs, &driver, 1)?;
    obs.push("pipe input1 C@3");
    in1.pipe_key_value_at("C", "gamma", 3);
    obs.push("pipe input2 D@2");
    in2.pipe_key_value_at("D", "delta", 2);
    advance(&obs, &driver, 2000)?;
    g.output(&driver, "output");
    g.finish(driver)
}

fn task_idling_with_a_repartition_topic() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let seen = obs.clone();
    let b = streams_core::StreamsBuilder::new();
    b.stream::<String, String>("in")
        .select_key(|_, v| v.clone())
        .group_by_key()
        .count()
        .to_stream()
        .map_values(|n| n.to_string())
        .peek(move |k, v| seen.push(format!("seen:{}={v}", show(k))))
        .to("out");
    let driver = g.start_with(b.build()?, idle_config(100))?;
    let i = input(&driver, "in");
    obs.push("pipe a@0");
    i.pipe_key_value_at("k1", "a", 0);
    advance(&obs, &driver, 50)?;
    obs.push("pipe b@1");
    i.pipe_key_value_at("k2", "b", 1);
    advance(&obs, &driver, 100)?;
    advance(&obs, &driver, 100)?;
    obs.push("pipe a@2");
    i.pipe_key_value_at("k3", "a", 2);
    advance(&obs, &driver, 100)?;
    g.output(&driver, "out");
    g.finish(driver)
}
