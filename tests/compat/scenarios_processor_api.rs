//! The oracle's `ProcessorApiScenarios`: topologies built with
//! `Topology::add_source` / `add_processor` / `add_sink` and the node
//! names given.

use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Record, Result, StreamsError, Topology};
use streams_test::TestRecord;

use super::{Recorder, Scenario, ScenarioResult, input, scenario, show};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(papi_basic),
    scenario!(papi_forward_to_named_child),
    scenario!(papi_multiple_parents),
    scenario!(papi_explicit_serdes),
    scenario!(papi_swap_and_shift_timestamp),
];

/// The oracle's `UpperProcessor`.
struct UpperProcessor;

impl Processor<S, S> for UpperProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let value = r.value.as_ref().map(|v| v.to_uppercase());
        ctx.forward(r.with_value(value))
    }
}

fn papi_basic() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Upper", || UpperProcessor, &["Source"])?
        .add_sink::<S, S>("Sink", "out", &["Upper"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "hello", 0);
    i.pipe_key_value_at("k2", "World", 7);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `RouterProcessor`: `all` to every child, else by parity
/// to `EvenSink` or `OddSink`.
struct RouterProcessor;

impl Processor<S, S> for RouterProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let value = show(r.value.as_ref()).to_owned();
        if value == "all" {
            return ctx.forward(r);
        }
        let n: i32 = value
            .parse()
            .map_err(|e| StreamsError::processing(format!("not an int: {value:?}: {e}")))?;
        let child = if n % 2 == 0 { "EvenSink" } else { "OddSink" };
        ctx.forward_to(child, r)
    }
}

fn papi_forward_to_named_child() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Router", || RouterProcessor, &["Source"])?
        .add_sink::<S, S>("EvenSink", "out-even", &["Router"])?
        .add_sink::<S, S>("OddSink", "out-odd", &["Router"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "1", 0);
    i.pipe_key_value_at("k2", "2", 1);
    i.pipe_key_value_at("k3", "all", 2);
    i.pipe_key_value_at("k4", "4", 3);
    g.output(&driver, "out-even");
    g.output(&driver, "out-odd");
    g.finish(driver)
}

/// The oracle's `TopicPrefixProcessor`: `<source topic>:<value>`.
struct TopicPrefixProcessor;

impl Processor<S, S> for TopicPrefixProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let topic = ctx
            .record_metadata()
            .map_or_else(|| "?".to_owned(), |m| m.topic.to_string());
        let value = format!("{topic}:{}", show(r.value.as_ref()));
        ctx.forward(r.with_value(Some(value)))
    }
}

fn papi_multiple_parents() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("SourceA", "in-a")?
        .add_source::<S, S>("SourceB", "in-b")?
        .add_processor("Prefix", || TopicPrefixProcessor, &["SourceA", "SourceB"])?
        .add_sink::<S, S>("Sink", "out", &["Prefix"])?;
    let driver = g.start(t)?;
    let a = input(&driver, "in-a");
    let bb = input(&driver, "in-b");
    a.pipe_key_value_at("k1", "x", 0);
    bb.pipe_key_value_at("k2", "y", 1);
    a.pipe_key_value_at("k3", "z", 2);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `LongToStringProcessor`: (value * 2, key) at timestamp + 1000.
struct LongToStringProcessor;

impl Processor<S, i64, i64, S> for LongToStringProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, i64, S>, r: Record<S, i64>) -> Result<()> {
        ctx.forward(Record::new(
            r.value.map(|v| v.wrapping_mul(2)),
            r.key,
            r.timestamp + 1000,
        ))
    }
}

fn papi_explicit_serdes() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source_with_serdes::<S, i64>("Source", "in", StringSerde, I64Serde)?
        .add_processor("Convert", || LongToStringProcessor, &["Source"])?
        .add_sink_with_serdes::<i64, S>("Sink", "out", I64Serde, StringSerde, &["Convert"])?;
    let driver = g.start(t)?;
    let i = driver.create_input_topic("in", StringSerde, I64Serde);
    i.pipe_key_value_at("a", 1, 10);
    i.pipe_key_value_at("b", -21, 20);
    g.output_as(&driver, "out", I64Serde, StringSerde);
    g.finish(driver)
}

/// The oracle's `SwapAndShiftProcessor`: key and value swapped, timestamp
/// + 1000, headers kept.
struct SwapAndShiftProcessor;

impl Processor<S, S> for SwapAndShiftProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        ctx.forward(Record {
            key: r.value,
            value: r.key,
            timestamp: r.timestamp + 1000,
            headers: r.headers,
        })
    }
}

fn papi_swap_and_shift_timestamp() -> ScenarioResult {
    let mut g = Recorder::new();
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Swap", || SwapAndShiftProcessor, &["Source"])?
        .add_sink::<S, S>("Sink", "out", &["Swap"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    i.pipe_record(
        TestRecord::<S, S>::key_value("k1", "v1")
            .at(5)
            .with_header("h", "x"),
    );
    i.pipe_key_value_at("k2", "v2", 3);
    g.output(&driver, "out");
    g.finish(driver)
}
