//! The oracle's `ErrorScenarios`: one pipe call fails; its error is
//! recorded (its kind is compared) and outputs before and after are read.

use streams_core::dsl::{Consumed, Produced};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::{StreamsBuilder, Topics};
use streams_test::TestRecord;

use super::{Recorder, Scenario, ScenarioResult, input, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(unknown_topic_error),
    scenario!(pattern_unknown_topic_error),
    scenario!(deserialization_error),
    scenario!(negative_timestamp_error),
    scenario!(user_exception_error),
    scenario!(no_source_unknown_topic_error),
    scenario!(source_name_with_regex_characters_error),
];

fn unknown_topic_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    let nope = input(&driver, "nope");
    i.pipe_key_value_at("k1", "a", 0);
    g.expect_error(nope.try_pipe_record(TestRecord::key_value("k2", "b").at(1)));
    i.pipe_key_value_at("k3", "c", 2);
    g.output(&driver, "out");
    g.finish(driver)
}

fn pattern_unknown_topic_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>(Topics::pattern("in-.*")).to("out");
    let driver = g.start(b.build()?)?;
    let ok = input(&driver, "in-x");
    let bad = input(&driver, "other");
    ok.pipe_key_value_at("k1", "a", 0);
    g.expect_error(bad.try_pipe_record(TestRecord::key_value("k2", "b").at(1)));
    g.output(&driver, "out");
    g.finish(driver)
}

fn deserialization_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream_with::<S, i64>("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start(b.build()?)?;
    let i = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        BytesSerde,
        0,
        std::time::Duration::ZERO,
    );
    i.pipe_key_value_at("k1", vec![0, 0, 0, 0, 0, 0, 0, 7], 0);
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k2", vec![1, 2, 3]).at(1)));
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.finish(driver)
}

fn negative_timestamp_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k2", "b").at(-1)));
    g.output(&driver, "out");
    g.finish(driver)
}

/// Java's `mapValues(v -> { if (v.equals("boom")) throw ..; return v; })`
/// is a `try_map_values` whose closure returns `Err`.
fn user_exception_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .try_map_values(|v| {
            if v == "boom" {
                Err("boom")
            } else {
                Ok(v.clone())
            }
        })
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k2", "boom").at(1)));
    g.output(&driver, "out");
    g.finish(driver)
}

/// An empty topology: the driver starts, piping fails as to an unknown topic.
fn no_source_unknown_topic_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = g.start(StreamsBuilder::new().build()?)?;
    let i = input(&driver, "in");
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k1", "a").at(0)));
    g.finish(driver)
}

/// A source named `orders.v1`: piping to `ordersXv1`, which the name
/// matches as a regex, is refused with Kafka's error.
fn source_name_with_regex_characters_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("orders.v1").to("out");
    let driver = g.start(b.build()?)?;
    let named = input(&driver, "orders.v1");
    let other = input(&driver, "ordersXv1");
    named.pipe_key_value_at("k1", "a", 0);
    g.expect_error(other.try_pipe_record(TestRecord::key_value("k2", "b").at(1)));
    named.pipe_key_value_at("k3", "c", 2);
    g.output(&driver, "out");
    g.finish(driver)
}
