//! The cost of a test: 2,000 tiny word-count tests, each building its
//! topology (`flat_map_values`, `group_by` with its repartition topic,
//! `count` into an in-memory store with a changelog, `to_stream`, `to`),
//! creating a driver and its two topics, piping 5 lines, reading the
//! counts back and closing the driver, as a test suite of many small tests
//! does. Beside it in the same process, the same-work baseline: the
//! per-record work of those 5 lines without any setup (each line
//! serialized and decoded, split, each word through a serialized
//! repartition record, counted in a `HashMap`, its new count serialized
//! into a changelog and an output record, both kept, as the driver's
//! commit after each repartition record flushes its record cache; the
//! output decoded on read). Prints tests per second for each, the ratio,
//! and where a test's time goes (topology, driver, piping, reading,
//! closing); and the same tests of a suite that builds its topology once
//! and hands each test a clone of it. Its Java twin, for Kafka's own driver, is
//! `compat/oracle/src/main/java/compat/oracle/PerTestPeer.java`;
//! `compat/bench` runs both.
//!
//! Run: `cargo bench -p streams-test --bench per_test`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion's sampling;
//! `STREAMS_BENCH_PROFILE_DRIVER=1` runs only the driver's tests, for
//! profilers.)

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use streams_core::dsl::{Materialized, Produced};
use streams_core::serde::{I64Serde, Serde, StringSerde};
use streams_core::{StreamsBuilder, Topology};
use streams_test::TopologyTestDriver;

/// Tests per run.
const TESTS: usize = 2_000;

/// The lines every test pipes (the same in `PerTestPeer.java`).
const LINES: [&str; 5] = [
    "Hello Kafka Streams",
    "All streams lead to Kafka",
    "Join Kafka Summit",
    "the quick brown fox jumps over the lazy dog",
    "a tiny test of the test driver",
];

/// Lower-case words, as Kafka's `WordCountDemo` splits on `\W+`.
fn words(line: &str) -> Vec<String> {
    line.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn topology() -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| words(line))
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
    builder.build().expect("topology")
}

/// One test: topology, driver, topics, 5 lines, read, close. Returns how
/// many count updates it read.
fn one_test() -> usize {
    one_test_of(topology())
}

/// One test of a topology already built: driver, topics, 5 lines, read,
/// close.
fn one_test_of(topology: Topology) -> usize {
    let driver = TopologyTestDriver::new(topology).expect("driver");
    let input = driver.create_input_topic("lines", StringSerde, StringSerde);
    let output = driver.create_output_topic("counts-out", StringSerde, I64Serde);
    for line in LINES {
        input.pipe_value(line);
    }
    let read = output.read_key_values_to_list().len();
    drop((input, output));
    driver.close().expect("close");
    read
}

fn through_driver() -> usize {
    (0..TESTS).map(|_| black_box(one_test())).sum()
}

/// The tests of a suite that builds its topology once and gives each test
/// a clone of it (nodes and their index shared, copied on change).
fn through_driver_built_once() -> usize {
    let built = topology();
    (0..TESTS)
        .map(|_| black_box(one_test_of(built.clone())))
        .sum()
}

/// The per-record work of one test's 5 lines, without setup.
fn same_work_once() -> usize {
    let (s, longs) = (StringSerde, I64Serde);
    let mut counts: HashMap<String, i64> = HashMap::new();
    let mut changelog: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut output: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for line in LINES {
        let bytes = s.serialize_owned("lines", line.to_owned()).expect("ser");
        let line = s.deserialize_owned("lines", bytes).expect("de");
        let mut repartition: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for word in words(&line) {
            let key = s.serialize("rep", &word).expect("ser");
            repartition.push((key, s.serialize_owned("rep", word).expect("ser")));
        }
        for (k, _v) in repartition {
            let word = s.deserialize_owned("rep", k).expect("de");
            let count = counts.entry(word.clone()).or_insert(0);
            *count += 1;
            let key = s.serialize("changelog", &word).expect("ser");
            changelog.push((key, longs.serialize("changelog", count).expect("ser")));
            output.push((
                s.serialize_owned("out", word).expect("ser"),
                longs.serialize("out", count).expect("ser"),
            ));
        }
    }
    black_box(changelog.len());
    let read: Vec<(String, i64)> = output
        .into_iter()
        .map(|(k, v)| {
            (
                s.deserialize_owned("out", k).expect("de"),
                longs.deserialize("out", &v).expect("de"),
            )
        })
        .collect();
    read.len()
}

fn same_work() -> usize {
    (0..TESTS).map(|_| black_box(same_work_once())).sum()
}

/// Where a test's time goes: the mean of each phase over `TESTS` tests,
/// in microseconds (topology, driver, topics and piping, read, close).
fn phases() -> [f64; 5] {
    let mut total = [Duration::ZERO; 5];
    for _ in 0..TESTS {
        let t0 = Instant::now();
        let topology = topology();
        let t1 = Instant::now();
        let driver = TopologyTestDriver::new(topology).expect("driver");
        let t2 = Instant::now();
        let input = driver.create_input_topic("lines", StringSerde, StringSerde);
        let output = driver.create_output_topic("counts-out", StringSerde, I64Serde);
        for line in LINES {
            input.pipe_value(line);
        }
        let t3 = Instant::now();
        black_box(output.read_key_values_to_list());
        let t4 = Instant::now();
        drop((input, output));
        driver.close().expect("close");
        let t5 = Instant::now();
        for (i, (a, b)) in [(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5)]
            .into_iter()
            .enumerate()
        {
            total[i] += b - a;
        }
    }
    total.map(|d| d.as_secs_f64() * 1e6 / TESTS as f64)
}

fn best_of(runs: usize, f: impl Fn() -> usize) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn run_criterion() {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let mut group = criterion.benchmark_group("word_count_2000_tests");
    group.throughput(Throughput::Elements(TESTS as u64));
    group.bench_function("driver", |b| b.iter(through_driver));
    group.bench_function("driver_topology_built_once", |b| {
        b.iter(through_driver_built_once)
    });
    group.bench_function("same_work_baseline", |b| b.iter(same_work));
    group.finish();
    criterion.final_summary();
}

fn main() {
    if std::env::var_os("STREAMS_BENCH_PROFILE_DRIVER").is_some() {
        // For profilers: the driver's tests only, a few times.
        for _ in 0..5 {
            black_box(through_driver());
        }
        return;
    }
    let read = one_test();
    assert_eq!(read, same_work_once(), "the driver and the baseline differ");
    assert_eq!(through_driver_built_once(), read * TESTS);
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion();
    }
    let driver = best_of(5, through_driver);
    let same = best_of(5, same_work);
    let rate = |d: Duration| TESTS as f64 / d.as_secs_f64();
    println!(
        "driver: {:.0} tests/s ({:.1} µs a test, {read} records read each); same-work baseline: {:.0} tests/s \
         ({:.1} µs); driver/same-work time ratio: {:.2}x",
        rate(driver),
        driver.as_secs_f64() * 1e6 / TESTS as f64,
        rate(same),
        same.as_secs_f64() * 1e6 / TESTS as f64,
        driver.as_secs_f64() / same.as_secs_f64()
    );
    let once = best_of(5, through_driver_built_once);
    println!(
        "driver, topology built once: {:.0} tests/s ({:.1} µs a test)",
        rate(once),
        once.as_secs_f64() * 1e6 / TESTS as f64
    );
    // The phases, best of 3 runs by their sum.
    let best = (0..3)
        .map(|_| phases())
        .min_by(|a, b| a.iter().sum::<f64>().total_cmp(&b.iter().sum::<f64>()))
        .unwrap_or_default();
    println!(
        "phases (µs a test): topology {:.1}, driver {:.1}, topics and piping 5 lines {:.1}, read {:.1}, close {:.1}",
        best[0], best[1], best[2], best[3], best[4]
    );
}
