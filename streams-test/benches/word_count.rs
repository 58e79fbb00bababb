//! Word count over 1,000,000 words through the driver (flat_map_values,
//! group_by with its repartition topic, count into a store with a
//! changelog, to_stream, to), beside two baselines in the same process: a
//! plain `HashMap` count of the same words (none of the driver's work
//! besides counting), and the same-work baseline (each line split, each
//! word serialized into a repartition record and read back, counted in a
//! `HashMap`, its count serialized into a changelog record and an output
//! record, both kept, as the driver must); prints words per second for
//! each and the ratios.
//!
//! Run: `cargo bench -p streams-test --bench word_count`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion's sampling;
//! `STREAMS_BENCH_PROFILE_DRIVER=1` runs only the driver, for profilers.)

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use streams_core::StreamsBuilder;
use streams_core::dsl::{Materialized, Produced};
use streams_core::serde::{I64Serde, Serde, StringSerde};
use streams_test::TopologyTestDriver;

const WORDS_PER_LINE: usize = 10;
const LINES: usize = 100_000;
const WORDS: usize = WORDS_PER_LINE * LINES;

/// 100,000 lines of 10 words drawn from a 5,000-word vocabulary.
fn lines() -> Vec<String> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..LINES)
        .map(|_| {
            (0..WORDS_PER_LINE)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    format!("Word{}", state % 5_000)
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn split(line: &str) -> impl Iterator<Item = String> + '_ {
    line.split(' ').map(str::to_lowercase)
}

fn through_driver(lines: &[String]) -> usize {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| split(line).collect::<Vec<_>>())
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let input = driver.create_input_topic("lines", StringSerde, StringSerde);
    for line in lines {
        input.pipe_value(line.as_str());
    }
    let counts = driver
        .timestamped_key_value_store::<String, i64>("counts")
        .expect("store");
    counts.approximate_num_entries() as usize
}

fn by_hand(lines: &[String]) -> usize {
    let mut counts: HashMap<String, i64> = HashMap::new();
    for line in lines {
        for word in split(line) {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    counts.len()
}

/// The same-work baseline: what the driver's word count must do besides
/// routing. Each line is serialized and decoded at the source, split; each
/// word goes through a repartition record (serialized, kept, read back),
/// is counted in a `HashMap`, and its new count is serialized into a
/// changelog record and an output record, both kept.
fn same_work(lines: &[String]) -> usize {
    let (s, longs) = (StringSerde, I64Serde);
    let mut counts: HashMap<String, i64> = HashMap::new();
    let mut repartition: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut changelog: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut output: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for line in lines {
        let bytes = s.serialize_owned("lines", line.clone()).expect("ser");
        let line = s.deserialize_owned("lines", bytes).expect("de");
        repartition.clear();
        for word in split(&line) {
            let key = s.serialize("rep", &word).expect("ser");
            repartition.push((key, s.serialize_owned("rep", word).expect("ser")));
        }
        for (k, _v) in repartition.drain(..) {
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
    black_box((changelog.len(), output.len()));
    counts.len()
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

fn run_criterion(lines: &[String]) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .configure_from_args();
    let mut group = criterion.benchmark_group("word_count_1m_words");
    group.throughput(Throughput::Elements(WORDS as u64));
    group.bench_function("driver", |b| b.iter(|| through_driver(black_box(lines))));
    group.bench_function("hand_written_hashmap", |b| {
        b.iter(|| by_hand(black_box(lines)))
    });
    group.bench_function("same_work_baseline", |b| {
        b.iter(|| same_work(black_box(lines)))
    });
    group.finish();
    criterion.final_summary();
}

fn main() {
    let lines = lines();
    if std::env::var_os("STREAMS_BENCH_PROFILE_DRIVER").is_some() {
        // For profilers: the driver's side only, a few times.
        for _ in 0..3 {
            black_box(through_driver(&lines));
        }
        return;
    }
    assert_eq!(through_driver(&lines), by_hand(&lines));
    assert_eq!(through_driver(&lines), same_work(&lines));
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion(&lines);
    }
    let driver = best_of(3, || through_driver(&lines));
    let hand = best_of(3, || by_hand(&lines));
    let same = best_of(3, || same_work(&lines));
    let rate = |d: Duration| WORDS as f64 / d.as_secs_f64();
    println!(
        "driver: {:.2} M words/s; hand-written HashMap: {:.2} M words/s; same-work baseline: {:.2} M words/s; \
         driver/HashMap time ratio: {:.2}x; driver/same-work time ratio: {:.2}x",
        rate(driver) / 1e6,
        rate(hand) / 1e6,
        rate(same) / 1e6,
        driver.as_secs_f64() / hand.as_secs_f64(),
        driver.as_secs_f64() / same.as_secs_f64()
    );
}
