//! The oracle's `WindowScenarios`: tumbling, hopping, sliding and session
//! windows with grace periods, `suppress(until_window_closes)`, the window
//! and session stores' changelogs (keys read as bytes) and the bytes of
//! windowed keys. Results are written with our `WindowedSerde` (String
//! inner keys) and read back as `[key@start/end]`, as the oracle reads
//! Kafka's windowed serdes.

use std::time::Duration;

use streams_core::dsl::{
    BufferConfig, Materialized, Produced, SessionWindows, SlidingWindows, Suppressed, TimeWindows,
    WindowedSerde,
};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::TopologyTestDriver;

use super::scenarios_stateful::changelog;
use super::{Recorder, Scenario, ScenarioResult, config, input, no_cache, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(tumbling_window_count),
    scenario!(named_aggregations),
    scenario!(hopping_window_aggregate),
    scenario!(sliding_window_reduce),
    scenario!(session_window_count),
    scenario!(session_window_count_cache_off),
    scenario!(suppress_tumbling_final_results),
    scenario!(suppress_tumbling_final_results_cache_off),
    scenario!(suppress_session_final_results),
    scenario!(windowed_key_bytes),
];

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Pipes `(key, value, ts)` records to `in`.
fn pipe(driver: &TopologyTestDriver, records: &[(&str, &str, i64)]) {
    let i = input(driver, "in");
    for &(k, v, ts) in records {
        i.pipe_key_value_at(k, v, ts);
    }
}

/// Kafka's `TimeWindowedSerde` for String keys of windows of `size`.
fn time_windowed(size: u64) -> WindowedSerde<S> {
    WindowedSerde::time_with_size(StringSerde, ms(size))
}

/// Kafka's `SessionWindowedSerde` for String keys.
fn session_windowed() -> WindowedSerde<S> {
    WindowedSerde::session(StringSerde)
}

fn named_aggregations() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone()
        .group_by_key()
        .named("plain-count")
        .count()
        .to_stream()
        .to_with("counts", Produced::with(StringSerde, I64Serde));
    s.clone()
        .group_by(|_, v| v.clone())
        .named("by-value-reduce")
        .reduce_with(|a, v| format!("{a}{v}"), Materialized::as_("by-value"))
        .to_stream()
        .to("reduced");
    s.clone()
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .named("windowed-count")
        .count()
        .to_stream()
        .to_with("windowed", Produced::with(time_windowed(10), I64Serde));
    s.group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(ms(5))?)
        .named("session-reduce")
        .reduce(|a, v| format!("{a}{v}"))
        .to_stream()
        .to_with("sessions", Produced::with(session_windowed(), StringSerde));
    b.table::<S, S>("regions")
        .group_by(|k, v| (v.clone(), k.clone()))
        .named("region-agg")
        .aggregate_with(
            String::new,
            |_, v, agg| format!("{agg}+{v}"),
            |_, v, agg| format!("{agg}-{v}"),
            Materialized::as_("region-members"),
        )
        .to_stream()
        .to("members");
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[("a", "x", 1), ("b", "y", 3), ("a", "x", 4), ("a", "z", 12)],
    );
    let regions = input(&driver, "regions");
    regions.pipe_key_value_at("ann", "eu", 0);
    regions.pipe_key_value_at("bob", "eu", 1);
    regions.pipe_key_value_at("ann", "us", 2);
    g.output_as(&driver, "counts", StringSerde, I64Serde);
    g.output(&driver, "reduced");
    g.output_as(&driver, "windowed", time_windowed(10), I64Serde);
    g.output_as(&driver, "sessions", session_windowed(), StringSerde);
    g.output(&driver, "members");
    g.finish(driver)
}

fn tumbling_window_count() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(5))?)
        .count()
        .to_stream()
        .to_with("out", Produced::with(time_windowed(10), I64Serde));
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "1", 0),
            ("a", "2", 9),
            ("a", "3", 10),
            ("b", "4", 12),
            ("a", "5", 7),
            ("a", "6", 20),
            ("a", "7", 4),
            ("a", "8", 14),
        ],
    );
    g.output_as(&driver, "out", time_windowed(10), I64Serde);
    g.output_as(
        &driver,
        &changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"),
        BytesSerde,
        I64Serde,
    );
    g.finish(driver)
}

fn hopping_window_aggregate() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(2))?.advance_by(ms(5))?)
        .aggregate_with(
            String::new,
            |_, v, agg| format!("{agg}{v}"),
            Materialized::as_("hops"),
        )
        .to_stream()
        .to_with("out", Produced::with(time_windowed(10), StringSerde));
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "x", 0),
            ("a", "y", 6),
            ("a", "z", 10),
            ("b", "w", 3),
            ("a", "u", 4),
            ("a", "p", 17),
            ("a", "q", 5),
            ("a", "r", 13),
        ],
    );
    g.output_as(&driver, "out", time_windowed(10), StringSerde);
    g.output_as(&driver, &changelog("hops"), BytesSerde, StringSerde);
    g.finish(driver)
}

fn sliding_window_reduce() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SlidingWindows::of_time_difference_and_grace(ms(10), ms(5))?)
        .reduce(|agg, v| format!("{agg}{v}"))
        .to_stream()
        .to_with("out", Produced::with(time_windowed(10), StringSerde));
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "1", 10),
            ("a", "2", 15),
            ("a", "3", 30),
            ("a", "4", 22),
            ("a", "5", 12),
            ("b", "6", 31),
            ("a", "7", 26),
        ],
    );
    g.output_as(&driver, "out", time_windowed(10), StringSerde);
    g.finish(driver)
}

fn session_window_count() -> ScenarioResult {
    session_window_count_with(config())
}

fn session_window_count_cache_off() -> ScenarioResult {
    session_window_count_with(no_cache())
}

fn session_window_count_with(config: StreamsConfig) -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_and_grace(ms(5), ms(3))?)
        .count()
        .to_stream()
        .to_with("out", Produced::with(session_windowed(), I64Serde));
    let driver = g.start_with(b.build()?, config)?;
    pipe(
        &driver,
        &[
            ("a", "1", 0),
            ("a", "2", 4),
            ("a", "3", 20),
            ("a", "4", 12),
            ("a", "5", 16),
            ("a", "6", 3),
            ("b", "7", 21),
            ("a", "8", 25),
        ],
    );
    g.output_as(&driver, "out", session_windowed(), I64Serde);
    g.output_as(
        &driver,
        &changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"),
        BytesSerde,
        I64Serde,
    );
    g.finish(driver)
}

fn suppress_tumbling_final_results() -> ScenarioResult {
    suppress_tumbling_final_results_with(config())
}

fn suppress_tumbling_final_results_cache_off() -> ScenarioResult {
    suppress_tumbling_final_results_with(no_cache())
}

fn suppress_tumbling_final_results_with(config: StreamsConfig) -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(10), ms(5))?)
        .count_with(Materialized::with(StringSerde, I64Serde))
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()).with_name("final"))
        .to_stream()
        .to_with("out", Produced::with(time_windowed(10), I64Serde));
    let driver = g.start_with(b.build()?, config)?;
    pipe(
        &driver,
        &[
            ("a", "1", 0),
            ("a", "2", 5),
            ("b", "3", 8),
            ("a", "4", 12),
            ("a", "5", 14),
            ("c", "6", 15),
            ("a", "7", 3),
            ("a", "8", 30),
        ],
    );
    g.output_as(&driver, "out", time_windowed(10), I64Serde);
    g.output_as(&driver, &changelog("final-store"), BytesSerde, BytesSerde);
    g.finish(driver)
}

fn suppress_session_final_results() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_and_grace(ms(5), ms(2))?)
        .count_with(Materialized::with(StringSerde, I64Serde))
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
        .to_stream()
        .to_with("out", Produced::with(session_windowed(), I64Serde));
    let driver = g.start(b.build()?)?;
    pipe(
        &driver,
        &[
            ("a", "1", 0),
            ("a", "2", 4),
            ("b", "3", 6),
            ("a", "4", 8),
            ("a", "5", 15),
            ("b", "6", 16),
            ("a", "7", 30),
        ],
    );
    g.output_as(&driver, "out", session_windowed(), I64Serde);
    g.finish(driver)
}

fn windowed_key_bytes() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let stream = b.stream::<S, S>("in");
    stream
        .clone()
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(ms(10))?)
        .count()
        .to_stream()
        .to_with("out-time", Produced::with(time_windowed(10), I64Serde));
    stream
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(ms(5))?)
        .count()
        .to_stream()
        .to_with("out-session", Produced::with(session_windowed(), I64Serde));
    let driver = g.start(b.build()?)?;
    pipe(&driver, &[("k", "1", 3), ("k", "2", 7), ("k", "3", 300)]);
    g.output_as(&driver, "out-time", BytesSerde, I64Serde);
    g.output_as(&driver, "out-session", BytesSerde, I64Serde);
    g.finish(driver)
}
