//! The oracle's `CogroupScenarios`: cogrouped streams (KIP-150) of
//! different value types aggregated through one store, with Kafka's node
//! and store names, the repartition of a re-keyed input named after the
//! store, and the time-, sliding- and session-windowed forms.

use std::time::Duration;

use streams_core::StreamsBuilder;
use streams_core::dsl::{
    Consumed, Grouped, Materialized, Produced, SessionWindows, SlidingWindows, TimeWindows,
    WindowedSerde,
};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_test::TopologyTestDriver;

use super::scenarios_stateful::{changelog, repartition};
use super::{Recorder, Scenario, ScenarioResult, input, no_cache, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(cogroup_two_streams),
    scenario!(cogroup_repartition_named_materialized_cache_off),
    scenario!(cogroup_tumbling_windows),
    scenario!(cogroup_sliding_windows),
    scenario!(cogroup_session_windows),
];

const STORE: &str = "COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002";

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Pipes `(topic, key, value, ts)` records; `None` is a tombstone.
fn pipe(driver: &TopologyTestDriver, records: &[(&str, &str, Option<&str>, i64)]) {
    for &(topic, k, v, ts) in records {
        let i = input(driver, topic);
        match v {
            Some(v) => i.pipe_key_value_at(k, v, ts),
            None => i.pipe_record(streams_test::TestRecord::tombstone(k.to_owned()).at(ts)),
        }
    }
}

/// Java's `a.cogroup((k, v, agg) -> agg + "a" + v).cogroup(b, (k, v, agg) -> agg + "b" + v)`.
fn tagged(b: &StreamsBuilder) -> streams_core::dsl::CogroupedKStream<S, S> {
    let a = b.stream::<S, S>("a").group_by_key();
    let c = b.stream::<S, S>("b").group_by_key();
    a.cogroup(|_, v: &S, agg: S| format!("{agg}a{v}"))
        .cogroup(c, |_, v: &S, agg: S| format!("{agg}b{v}"))
}

fn cogroup_two_streams() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    tagged(&b).aggregate(String::new).to_stream().to("out");
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "k1", Some("1"), 0),
            ("b", "k1", Some("2"), 1),
            ("b", "k2", Some("3"), 2),
            ("a", "k1", None, 3),
            ("a", "k2", Some("4"), 4),
            ("b", "k1", Some("5"), 5),
        ],
    );
    g.output(&driver, "out");
    g.output(&driver, &changelog(STORE));
    g.finish(driver)
}

fn cogroup_repartition_named_materialized_cache_off() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let words = b
        .stream::<S, S>("words")
        .group_by(|_, v| v.chars().next().map(String::from).unwrap_or_default());
    let amounts = b
        .stream_with::<S, i64>("amounts", Consumed::with(StringSerde, I64Serde))
        .group_by_key_with(Grouped::with(StringSerde, I64Serde));
    words
        .cogroup(|_, v: &S, agg: i64| agg + v.len() as i64)
        .cogroup(amounts, |_, v: &i64, agg: i64| agg + v)
        .named("score")
        .aggregate_with(|| 0, Materialized::as_("scores").with_value_serde(I64Serde))
        .to_stream()
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver = g.start_with(b.build()?, no_cache())?;
    let amounts_in =
        driver.create_input_topic_with_time("amounts", StringSerde, I64Serde, 0, ms(0));
    let words_in = input(&driver, "words");
    words_in.pipe_key_value_at("x", "apple", 0);
    amounts_in.pipe_key_value_at("a", 100, 1);
    words_in.pipe_key_value_at("y", "banana", 2);
    words_in.pipe_key_value_at("z", "avocado", 3);
    amounts_in.pipe_key_value_at("b", 7, 4);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output(&driver, &repartition("scores"));
    g.output_as(&driver, &changelog("scores"), StringSerde, I64Serde);
    g.finish(driver)
}

fn cogroup_tumbling_windows() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    tagged(&b)
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(5))?)
        .aggregate(String::new)
        .to_stream()
        .to_with(
            "out",
            Produced::with(
                WindowedSerde::time_with_size(StringSerde, ms(10)),
                StringSerde,
            ),
        );
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "k", Some("1"), 1),
            ("b", "k", Some("2"), 8),
            ("b", "k", Some("3"), 12),
            ("a", "k", Some("4"), 9),
            ("a", "k", Some("5"), 22),
            ("b", "k", Some("6"), 3),
        ],
    );
    g.output_as(
        &driver,
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(10)),
        StringSerde,
    );
    g.output_as(&driver, &changelog(STORE), BytesSerde, StringSerde);
    g.finish(driver)
}

fn cogroup_sliding_windows() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    tagged(&b)
        .windowed_by(SlidingWindows::of_time_difference_with_no_grace(ms(5))?)
        .aggregate(String::new)
        .to_stream()
        .to_with(
            "out",
            Produced::with(
                WindowedSerde::time_with_size(StringSerde, ms(5)),
                StringSerde,
            ),
        );
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "k", Some("1"), 10),
            ("b", "k", Some("2"), 13),
            ("a", "k", Some("3"), 20),
        ],
    );
    g.output_as(
        &driver,
        "out",
        WindowedSerde::time_with_size(StringSerde, ms(5)),
        StringSerde,
    );
    g.finish(driver)
}

fn cogroup_session_windows() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    tagged(&b)
        .windowed_by(SessionWindows::of_inactivity_gap_and_grace(ms(5), ms(3))?)
        .aggregate(String::new, |left, right| format!("{left}|{right}"))
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::session(StringSerde), StringSerde),
        );
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "k", Some("1"), 0),
            ("b", "k", Some("2"), 12),
            ("a", "k", Some("3"), 7),
            ("b", "k", Some("4"), 30),
        ],
    );
    g.output_as(
        &driver,
        "out",
        WindowedSerde::session(StringSerde),
        StringSerde,
    );
    g.output_as(&driver, &changelog(STORE), BytesSerde, StringSerde);
    g.finish(driver)
}
