//! Pipes 1,000,000 string records through `filter` + `map_values` in the
//! test driver and reads them back, beside two baselines in the same
//! process: a hand-written loop doing the same serialization and closure
//! work with copying serdes, and the same-work floor (each record encoded,
//! decoded once, the two closures, encoded once and kept, then decoded on
//! read, with the serdes' owned, non-copying forms, as the driver uses
//! them); prints records per second for each and the ratios.
//!
//! Run: `cargo bench -p streams-test --bench stateless`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use streams_core::StreamsBuilder;
use streams_core::serde::{Serde, StringSerde};
use streams_test::TopologyTestDriver;

const RECORDS: usize = 1_000_000;

fn inputs() -> Vec<(String, String)> {
    (0..RECORDS)
        .map(|i| (format!("key-{}", i % 1000), format!("value number {i}")))
        .collect()
}

fn keep(value: &str) -> bool {
    !value.ends_with('7')
}

/// The driver: pipe every record, then read the output back typed.
fn through_driver(inputs: &[(String, String)]) -> usize {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("input")
        .filter(|_, v| keep(v))
        .map_values(|v| v.to_ascii_uppercase())
        .to("output");
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    for (k, v) in inputs {
        input.pipe_key_value(k.as_str(), v.as_str());
    }
    let out = output.read_key_values_to_list();
    out.len()
}

/// The same work by hand: serialize in, deserialize, filter, map,
/// serialize out, deserialize on read.
fn by_hand(inputs: &[(String, String)]) -> usize {
    let serde = StringSerde;
    let mut topic: Vec<(Option<Vec<u8>>, Option<Vec<u8>>, i64)> = Vec::new();
    for (k, v) in inputs {
        // A typed key and value, as a test pipes them.
        let (k, v) = (k.clone(), v.clone());
        let kb = serde.serialize("input", &k).expect("ser");
        let vb = serde.serialize("input", &v).expect("ser");
        let key = serde.deserialize("input", &kb).expect("de");
        let value = serde.deserialize("input", &vb).expect("de");
        if keep(&value) {
            let mapped = value.to_ascii_uppercase();
            topic.push((
                Some(serde.serialize("output", &key).expect("ser")),
                Some(serde.serialize("output", &mapped).expect("ser")),
                0,
            ));
        }
    }
    let out: Vec<(Option<String>, Option<String>)> = topic
        .iter()
        .map(|(k, v, _)| {
            (
                k.as_ref()
                    .map(|b| serde.deserialize("output", b).expect("de")),
                v.as_ref()
                    .map(|b| serde.deserialize("output", b).expect("de")),
            )
        })
        .collect();
    out.len()
}

/// The same-work floor: what the driver cannot avoid. A typed record
/// becomes bytes (the owned serde forms move the strings' buffers), is
/// decoded once, filtered and mapped, encoded once into a kept output
/// record, and decoded when read back.
fn floor(inputs: &[(String, String)]) -> usize {
    let serde = StringSerde;
    let mut topic: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(inputs.len());
    for (k, v) in inputs {
        let (k, v) = (k.clone(), v.clone());
        let kb = serde.serialize_owned("input", k).expect("ser");
        let vb = serde.serialize_owned("input", v).expect("ser");
        let key = serde.deserialize_owned("input", kb).expect("de");
        let value = serde.deserialize_owned("input", vb).expect("de");
        if keep(&value) {
            let mapped = value.to_ascii_uppercase();
            topic.push((
                serde.serialize_owned("output", key).expect("ser"),
                serde.serialize_owned("output", mapped).expect("ser"),
            ));
        }
    }
    let out: Vec<(String, String)> = topic
        .into_iter()
        .map(|(k, v)| {
            (
                serde.deserialize_owned("output", k).expect("de"),
                serde.deserialize_owned("output", v).expect("de"),
            )
        })
        .collect();
    out.len()
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

fn main() {
    let inputs = inputs();
    if std::env::var_os("STREAMS_BENCH_PROFILE_DRIVER").is_some() {
        // For profilers: the driver's side only, a few times.
        for _ in 0..5 {
            black_box(through_driver(&inputs));
        }
        return;
    }
    if std::env::var_os("STREAMS_BENCH_PROFILE_FLOOR").is_some() {
        // For profilers: the same-work floor only, as many times.
        for _ in 0..5 {
            black_box(floor(&inputs));
        }
        return;
    }
    assert_eq!(through_driver(&inputs), by_hand(&inputs));
    assert_eq!(through_driver(&inputs), floor(&inputs));

    // STREAMS_BENCH_RATIO_ONLY=1 skips criterion's sampling and prints the ratio only.
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion(&inputs);
    }

    // The ratio, measured back to back in this process (best of 5 each).
    let driver = best_of(5, || through_driver(&inputs));
    let hand = best_of(5, || by_hand(&inputs));
    let floor = best_of(5, || floor(&inputs));
    let rate = |d: Duration| RECORDS as f64 / d.as_secs_f64();
    println!(
        "driver: {:.2} M records/s; hand-written: {:.2} M records/s; same-work floor: {:.2} M records/s; \
         driver/hand-written time ratio: {:.2}x; driver/floor time ratio: {:.2}x",
        rate(driver) / 1e6,
        rate(hand) / 1e6,
        rate(floor) / 1e6,
        driver.as_secs_f64() / hand.as_secs_f64(),
        driver.as_secs_f64() / floor.as_secs_f64()
    );
}

fn run_criterion(inputs: &[(String, String)]) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .configure_from_args();
    let mut group = criterion.benchmark_group("filter_map_values_1m");
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("driver", |b| b.iter(|| through_driver(black_box(inputs))));
    group.bench_function("hand_written", |b| b.iter(|| by_hand(black_box(inputs))));
    group.bench_function("same_work_floor", |b| b.iter(|| floor(black_box(inputs))));
    group.finish();
    criterion.final_summary();
}
