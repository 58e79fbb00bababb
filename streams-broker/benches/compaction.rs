//! Compacts a log of 1,000,000 records over 10,000 keys with the
//! simulated broker's log cleaner, beside a hand-written pass over the same
//! (key, value) pairs that keeps the last record of every key in a
//! `HashMap` (std's hasher, as the cleaner's offset map); prints records per
//! second for both and their time ratio.
//!
//! The log is built through the public API in the setup, outside the
//! timing: a compacted topic with small segments (`internal.segment.bytes`
//! 1 MiB: about 40 segments), records appended with `Producer::send_batch`
//! 100 at a time, then rolled so that everything but the (empty) active
//! segment is cleanable. Only `Cluster::run_cleaner` is timed.
//!
//! Run: `cargo bench -p streams-broker --bench compaction`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion and prints the ratio only;
//! `STREAMS_BENCH_PROFILE_BROKER=1` runs only the cleaner, for profilers)

use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use streams_broker::record::Record;
use streams_broker::{Cluster, NewTopic, TopicPartition};

const RECORDS: usize = 1_000_000;
const KEYS: usize = 10_000;
const BATCH: usize = 100;
const TOPIC: &str = "compacted";

/// The records, key `i % KEYS`, each value distinct.
fn inputs() -> Vec<(Bytes, Bytes)> {
    (0..RECORDS)
        .map(|i| {
            (
                Bytes::from(format!("key-{:05}", i % KEYS)),
                Bytes::from(format!("value-{i:08}")),
            )
        })
        .collect()
}

/// A cluster holding `inputs` in one compacted partition, every segment
/// but the empty active one cleanable.
fn build_log(inputs: &[(Bytes, Bytes)]) -> Cluster {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    cluster
        .admin()
        .create_topic(
            NewTopic::new(TOPIC, 1)
                .config("cleanup.policy", "compact")
                .config("internal.segment.bytes", (1024 * 1024).to_string()),
        )
        .expect("topic");
    let tp = TopicPartition::new(TOPIC, 0);
    let producer = cluster.producer();
    for (n, chunk) in inputs.chunks(BATCH).enumerate() {
        let records = chunk.iter().enumerate().map(|(i, (k, v))| {
            let ts = i64::try_from(n * BATCH + i).unwrap_or(i64::MAX);
            Record::new(Some(k.clone()), Some(v.clone()), ts)
        });
        producer.send_batch(&tp, records).expect("send");
    }
    cluster.roll(&tp).expect("roll");
    cluster
}

/// The broker: one run of the log cleaner; returns the records kept.
fn clean(cluster: &Cluster) -> usize {
    let results = cluster.run_cleaner();
    results.iter().map(|r| r.records_retained).sum()
}

/// By hand: the last record of every key, in a `HashMap`.
fn by_hand(inputs: &[(Bytes, Bytes)]) -> usize {
    let mut last: HashMap<&[u8], &[u8]> = HashMap::new();
    for (k, v) in inputs {
        last.insert(k, v);
    }
    last.len()
}

fn time_clean(inputs: &[(Bytes, Bytes)]) -> Duration {
    let cluster = build_log(inputs);
    let start = Instant::now();
    black_box(clean(&cluster));
    let elapsed = start.elapsed();
    drop(cluster);
    elapsed
}

fn best_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap_or_default()
}

fn main() {
    let inputs = inputs();
    if std::env::var_os("STREAMS_BENCH_PROFILE_BROKER").is_some() {
        for _ in 0..5 {
            black_box(time_clean(&inputs));
        }
        return;
    }

    // The cleaner keeps exactly the hand-written pass's records.
    let cluster = build_log(&inputs);
    let tp = TopicPartition::new(TOPIC, 0);
    let results = cluster.run_cleaner();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].records_read, RECORDS);
    assert_eq!(results[0].records_retained, by_hand(&inputs));
    let kept: Vec<(Bytes, Bytes)> = cluster
        .log_records(&tp)
        .expect("records")
        .into_iter()
        .map(|r| (r.key.expect("key"), r.value.expect("value")))
        .collect();
    let expected: Vec<(Bytes, Bytes)> = inputs[RECORDS - KEYS..].to_vec();
    assert_eq!(kept, expected);
    drop(cluster);

    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion(&inputs);
    }

    // The ratio, measured back to back in this process (best of 3 cleanings,
    // of 5 hand-written passes).
    let broker = best_of(3, || time_clean(&inputs));
    let hand = best_of(5, || {
        let start = Instant::now();
        black_box(by_hand(black_box(&inputs)));
        start.elapsed()
    });
    let rate = |d: Duration| RECORDS as f64 / d.as_secs_f64();
    println!(
        "log cleaner: {:.2} M records/s ({:.1} ms); hand-written HashMap pass: {:.2} M records/s ({:.1} ms); cleaner/hand-written time ratio: {:.2}x",
        rate(broker) / 1e6,
        broker.as_secs_f64() * 1e3,
        rate(hand) / 1e6,
        hand.as_secs_f64() * 1e3,
        broker.as_secs_f64() / hand.as_secs_f64()
    );
}

fn run_criterion(inputs: &[(Bytes, Bytes)]) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .configure_from_args();
    let mut group = criterion.benchmark_group("compact_1m_records_10k_keys");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(RECORDS as u64));
    group.bench_function("run_cleaner", |b| {
        b.iter_batched(
            || build_log(inputs),
            |cluster| {
                black_box(clean(&cluster));
                cluster
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("hand_written_hashmap", |b| {
        b.iter(|| by_hand(black_box(inputs)));
    });
    group.finish();
    criterion.final_summary();
}
