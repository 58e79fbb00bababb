//! The word count over 4 partitions run by the `KafkaStreams` runtime, two
//! instances on the simulated cluster (`streams_test::app::StreamsCluster`),
//! beside the same topology and the same input in the
//! `TopologyTestDriver`, in the same process; prints words per second for
//! both and the runtime's share of the driver's throughput.
//!
//! Runtime, timed: `run_until_idle` from two started instances to the
//! end: the group's join and rebalance, every line fetched from the input
//! topic's 4 partitions, split into words sent to the repartition topic's
//! 4 partitions, fetched again and counted in the task of its partition
//! (changelog records, output records), commits. The 100,000 lines are
//! produced to the cluster beforehand, not timed. Driver, timed: a new
//! driver, every line piped through a `TestInputTopic` (which serializes
//! it), the same processing on one task. Both with Kafka's defaults (the
//! record cache on: the driver flushes it after each input record, as
//! Kafka's driver does; the runtime at each commit). Both counts are
//! checked equal.
//!
//! Run: `cargo bench -p streams-test --bench runtime_word_count`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion's sampling;
//! `STREAMS_BENCH_PROFILE_RUNTIME=1` runs only the runtime, for profilers.)

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use streams_core::dsl::{Materialized, Produced};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::topology::Topology;
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::TopologyTestDriver;
use streams_test::app::StreamsCluster;

const WORDS_PER_LINE: usize = 10;
const LINES: usize = 100_000;
const WORDS: usize = WORDS_PER_LINE * LINES;
const PARTITIONS: i32 = 4;
const APP: &str = "runtime-word-count-bench";
/// Rounds of the ratio, each timing the runtime and then the driver.
const ROUNDS: usize = 5;

/// 100,000 lines of 10 words drawn from a 5,000-word vocabulary (the
/// driver word-count benchmark's lines), keyed `line-<n>`.
fn lines() -> Vec<(String, String)> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..LINES)
        .map(|n| {
            let line = (0..WORDS_PER_LINE)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    format!("Word{}", state % 5_000)
                })
                .collect::<Vec<_>>()
                .join(" ");
            (format!("line-{n}"), line)
        })
        .collect()
}

fn topology() -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| line.split(' ').map(str::to_lowercase).collect::<Vec<_>>())
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
    builder.build().expect("topology")
}

/// Two started instances on a cluster holding every line (not timed).
fn cluster_with_input(topology: &Topology, lines: &[(String, String)]) -> StreamsCluster {
    let mut app = StreamsCluster::new();
    app.create_topic("lines", PARTITIONS).expect("topic");
    app.create_topic("counts-out", PARTITIONS).expect("topic");
    let producer = app.producer("lines", StringSerde, StringSerde);
    for (key, line) in lines {
        producer.send(key, Some(line), 0).expect("send");
    }
    for name in ["a", "b"] {
        app.start(name, topology, StreamsConfig::new(APP))
            .expect("start");
    }
    app
}

/// Timed: the runtime processes everything.
fn through_runtime(mut app: StreamsCluster) -> StreamsCluster {
    let stats = app.run_until_idle().expect("run");
    black_box(stats);
    app
}

fn runtime_counts(app: &StreamsCluster) -> BTreeMap<String, i64> {
    app.latest_by_key("counts-out", StringSerde, I64Serde)
        .expect("read")
}

fn through_driver(topology: &Topology, lines: &[(String, String)]) -> TopologyTestDriver {
    let driver =
        TopologyTestDriver::with_config(topology.clone(), StreamsConfig::new(APP)).expect("driver");
    let input = driver.create_input_topic("lines", StringSerde, StringSerde);
    for (key, line) in lines {
        input.pipe_key_value(key.as_str(), line.as_str());
    }
    driver
}

fn driver_counts(driver: &TopologyTestDriver) -> BTreeMap<String, i64> {
    driver
        .timestamped_key_value_store::<String, i64>("counts")
        .expect("store")
        .to_map()
        .into_iter()
        .collect()
}

/// The time this thread has spent on a CPU (Linux's
/// `/proc/thread-self/schedstat`, in nanoseconds), if the system says.
fn on_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Times `f` once, on the wall clock and on the CPU (its set-up and the
/// drop of what it returns not timed).
fn time<T, U>(setup: impl FnOnce() -> T, f: impl FnOnce(T) -> U) -> (Duration, Option<Duration>) {
    let input = setup();
    let (start, cpu_start) = (Instant::now(), on_cpu());
    let output = black_box(f(input));
    let (elapsed, cpu) = (start.elapsed(), on_cpu());
    drop(output);
    (elapsed, cpu.zip(cpu_start).map(|(end, start)| end - start))
}

fn run_criterion(topology: &Topology, lines: &[(String, String)]) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .configure_from_args();
    let mut group = criterion.benchmark_group("runtime_word_count_1m_words");
    group.throughput(Throughput::Elements(WORDS as u64));
    // A run takes a second or more: 10 runs a sample set, not 55.
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function("runtime_2_instances_4_partitions", |b| {
        b.iter_batched(
            || cluster_with_input(topology, lines),
            through_runtime,
            BatchSize::PerIteration,
        )
    });
    group.bench_function("driver", |b| {
        b.iter(|| through_driver(topology, black_box(lines)))
    });
    group.finish();
    criterion.final_summary();
}

fn main() {
    let topology = topology();
    let lines = lines();
    if std::env::var_os("STREAMS_BENCH_PROFILE_RUNTIME").is_some() {
        // For profilers: the runtime's side only (its set-up included).
        for _ in 0..3 {
            black_box(through_runtime(cluster_with_input(&topology, &lines)));
        }
        return;
    }
    let app = through_runtime(cluster_with_input(&topology, &lines));
    let counts = runtime_counts(&app);
    assert_eq!(counts.values().sum::<i64>(), WORDS as i64);
    let driver = through_driver(&topology, &lines);
    assert_eq!(counts, driver_counts(&driver));
    // What each wrote: the runtime flushes its record cache at commits,
    // the driver after every input record.
    let runtime_out = app
        .read("counts-out", StringSerde, I64Serde)
        .expect("read")
        .len();
    let driver_out = driver
        .create_output_topic("counts-out", StringSerde, I64Serde)
        .queue_size();
    println!("count updates written: runtime {runtime_out}, driver {driver_out}");
    drop((app, driver));
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion(&topology, &lines);
    }
    // Alternately, so that both see the same load: the best of each, and
    // the median of the rounds' ratios.
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let runtime = time(|| cluster_with_input(&topology, &lines), through_runtime);
        let driver = time(|| (), |()| through_driver(&topology, &lines));
        rounds.push((runtime, driver));
    }
    let rate = |d: Duration| WORDS as f64 / d.as_secs_f64();
    let report = |what: &str, runtime: Vec<Duration>, driver: Vec<Duration>| {
        let best = |d: &[Duration]| d.iter().min().copied().unwrap_or_default();
        let mut ratios: Vec<f64> = runtime
            .iter()
            .zip(&driver)
            .map(|(&r, &d)| rate(r) / rate(d))
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!(
            "{what}: runtime (2 instances, 4 partitions) {:.2} M words/s; driver {:.2} M words/s (best of {ROUNDS}, alternately); runtime/driver throughput {:.2}x, median of the rounds {:.2}x (target at least 0.50x)",
            rate(best(&runtime)) / 1e6,
            rate(best(&driver)) / 1e6,
            rate(best(&runtime)) / rate(best(&driver)),
            ratios.get(ratios.len() / 2).copied().unwrap_or_default()
        );
    };
    report(
        "wall clock",
        rounds.iter().map(|r| r.0.0).collect(),
        rounds.iter().map(|r| r.1.0).collect(),
    );
    let cpu: Option<(Vec<Duration>, Vec<Duration>)> = rounds
        .iter()
        .map(|(r, d)| r.1.zip(d.1))
        .collect::<Option<Vec<_>>>()
        .map(|pairs| pairs.into_iter().unzip());
    if let Some((runtime, driver)) = cpu {
        // Time on a CPU leaves out the waits of a shared machine.
        report("on CPU", runtime, driver);
    }
}
