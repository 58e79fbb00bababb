//! Produces 1,000,000 records of 100 bytes to one partition of the
//! simulated broker and fetches them all back with a consumer (assign, poll
//! until a poll returns nothing), beside a hand-written append of the same
//! bytes to one `Vec<u8>` (each behind a 4-byte length) and a scan of it;
//! prints records per second for produce and fetch and the time ratios.
//!
//! Two ways to produce: `Producer::send` (one batch per record, as a
//! producer with `linger.ms=0` and one record in flight sends them) and
//! `Producer::send_batch` with 100 records per batch (about what Kafka's
//! producer packs into its `batch.size=16384` for 100-byte values).
//!
//! Run: `cargo bench -p streams-broker --bench produce_fetch`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion and prints the ratios only;
//! `STREAMS_BENCH_PROFILE_BROKER=1` runs only the broker side, for profilers;
//! `=send` or `=batch` only one way of producing)

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BatchSize, Criterion, SamplingMode, Throughput};
use streams_broker::record::{Record, TimestampType};
use streams_broker::{
    AutoOffsetReset, Cluster, ConsumerConfig, ConsumerRecord, NewTopic, ProducerRecord,
    TopicPartition,
};

const RECORDS: usize = 1_000_000;
const VALUE_SIZE: usize = 100;
const BATCH: usize = 100;
const TOPIC: &str = "perf";

/// 1,000,000 distinct values of 100 bytes, slices of one buffer.
fn inputs() -> Vec<Bytes> {
    let mut all = Vec::with_capacity(RECORDS * VALUE_SIZE);
    for i in 0..RECORDS {
        let start = all.len();
        all.extend_from_slice(&(i as u64).to_be_bytes());
        all.resize(start + VALUE_SIZE, b'a' + (i % 26) as u8);
    }
    let all = Bytes::from(all);
    (0..RECORDS)
        .map(|i| all.slice(i * VALUE_SIZE..(i + 1) * VALUE_SIZE))
        .collect()
}

fn empty_cluster() -> Cluster {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    cluster
        .admin()
        .create_topic(NewTopic::new(TOPIC, 1))
        .expect("topic");
    cluster
}

/// Produce with `send`: one record, one batch.
fn produce_send(cluster: &Cluster, values: &[Bytes]) {
    let producer = cluster.producer();
    for v in values {
        producer
            .send(ProducerRecord::unkeyed(TOPIC, v.clone()))
            .expect("send");
    }
}

/// Produce with `send_batch`: `BATCH` records a batch.
fn produce_batches(cluster: &Cluster, values: &[Bytes]) {
    let producer = cluster.producer();
    let tp = TopicPartition::new(TOPIC, 0);
    for chunk in values.chunks(BATCH) {
        producer
            .send_batch(&tp, chunk.iter().map(|v| Record::unkeyed(v.clone(), 0)))
            .expect("send");
    }
}

/// Fetch everything with a consumer; returns the record count and the sum
/// of the values' first bytes (so that every value is touched).
fn fetch(cluster: &Cluster) -> (usize, u64) {
    let mut consumer =
        cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
    consumer.assign([TopicPartition::new(TOPIC, 0)]);
    let (mut count, mut sum) = (0, 0u64);
    loop {
        let records = consumer.poll().expect("poll");
        if records.is_empty() {
            return (count, sum);
        }
        count += records.len();
        for r in &records {
            sum += u64::from(r.value.as_ref().map_or(0, |v| v[0]));
        }
    }
}

/// By hand: append every value, behind its length, to one buffer.
fn append_by_hand(values: &[Bytes]) -> Vec<u8> {
    let mut log = Vec::new();
    for v in values {
        log.extend_from_slice(&(v.len() as u32).to_be_bytes());
        log.extend_from_slice(v);
    }
    log
}

/// By hand: scan the buffer, value by value.
fn scan_by_hand(log: &[u8]) -> (usize, u64) {
    let (mut count, mut sum, mut pos) = (0, 0u64, 0);
    while pos + 4 <= log.len() {
        let len = u32::from_be_bytes([log[pos], log[pos + 1], log[pos + 2], log[pos + 3]]) as usize;
        let value = &log[pos + 4..pos + 4 + len];
        sum += u64::from(value[0]);
        count += 1;
        pos += 4 + len;
    }
    (count, sum)
}

/// The consumer API's own share of a fetch: the hand-written scan, but
/// handing out what a poll does, 500 `ConsumerRecord`s at a time (the topic
/// name shared, copied once a poll as a poll does; the value a slice of the
/// buffer), dropped after use.
fn scan_into_consumer_records(log: &Bytes) -> (usize, u64) {
    let (mut count, mut sum, mut pos) = (0, 0u64, 0);
    while pos + 4 <= log.len() {
        let topic: Arc<str> = Arc::from(TOPIC);
        let mut records = Vec::with_capacity(500);
        while records.len() < 500 && pos + 4 <= log.len() {
            let len =
                u32::from_be_bytes([log[pos], log[pos + 1], log[pos + 2], log[pos + 3]]) as usize;
            records.push(ConsumerRecord {
                topic: Arc::clone(&topic),
                partition: 0,
                offset: count as i64 + records.len() as i64,
                timestamp: 0,
                timestamp_type: TimestampType::CreateTime,
                key: None,
                value: Some(log.slice(pos + 4..pos + 4 + len)),
                headers: Vec::new(),
                leader_epoch: 0,
            });
            pos += 4 + len;
        }
        count += records.len();
        for r in &records {
            sum += u64::from(r.value.as_ref().map_or(0, |v| v[0]));
        }
    }
    (count, sum)
}

/// Produce and fetch timings of one run (the cluster dropped untimed).
fn broker_run(values: &[Bytes], produce: fn(&Cluster, &[Bytes])) -> (Duration, Duration) {
    let cluster = empty_cluster();
    let start = Instant::now();
    produce(&cluster, values);
    let produced = start.elapsed();
    let start = Instant::now();
    let got = black_box(fetch(&cluster));
    let fetched = start.elapsed();
    assert_eq!(got.0, RECORDS);
    drop(cluster);
    (produced, fetched)
}

fn hand_run(values: &[Bytes]) -> (Duration, Duration) {
    let start = Instant::now();
    let log = black_box(append_by_hand(values));
    let appended = start.elapsed();
    let start = Instant::now();
    let got = black_box(scan_by_hand(&log));
    let scanned = start.elapsed();
    assert_eq!(got.0, RECORDS);
    drop(log);
    (appended, scanned)
}

/// The best produce and the best fetch of `runs` runs.
fn best_of(runs: usize, mut f: impl FnMut() -> (Duration, Duration)) -> (Duration, Duration) {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        let (a, b) = f();
        best = (best.0.min(a), best.1.min(b));
    }
    best
}

fn main() {
    let values = inputs();
    if let Some(mode) = std::env::var_os("STREAMS_BENCH_PROFILE_BROKER") {
        // `send` or `batch` profiles one way of producing, anything else both.
        for _ in 0..3 {
            if mode != "batch" {
                black_box(broker_run(&values, produce_send));
            }
            if mode != "send" {
                black_box(broker_run(&values, produce_batches));
            }
        }
        return;
    }

    // Both ways of producing store the same values, and the consumer reads
    // them back as the scan does.
    let expected = scan_by_hand(&append_by_hand(&values));
    assert_eq!(
        scan_into_consumer_records(&Bytes::from(append_by_hand(&values))),
        expected
    );
    for produce in [produce_send as fn(&Cluster, &[Bytes]), produce_batches] {
        let cluster = empty_cluster();
        produce(&cluster, &values);
        assert_eq!(fetch(&cluster), expected);
    }

    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        run_criterion(&values);
    }

    // The ratios, measured back to back in this process (best of 3 each).
    let hand = best_of(3, || hand_run(&values));
    let log = Bytes::from(append_by_hand(&values));
    let floor = (0..3)
        .map(|_| {
            let start = Instant::now();
            black_box(scan_into_consumer_records(&log));
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    drop(log);
    let send = best_of(3, || broker_run(&values, produce_send));
    let batched = best_of(3, || broker_run(&values, produce_batches));
    let rate = |d: Duration| RECORDS as f64 / d.as_secs_f64() / 1e6;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let total = |(a, b): (Duration, Duration)| a + b;
    println!(
        "hand-written Vec<u8>: append {:.2} M records/s ({:.1} ms), scan {:.2} M records/s ({:.1} ms)",
        rate(hand.0),
        ms(hand.0),
        rate(hand.1),
        ms(hand.1)
    );
    println!(
        "hand-written scan into ConsumerRecords (the consumer API's floor): {:.2} M records/s ({:.1} ms, {:.2}x the scan)",
        rate(floor),
        ms(floor),
        floor.as_secs_f64() / hand.1.as_secs_f64()
    );
    for (name, run) in [("send", send), ("send_batch(100)", batched)] {
        println!(
            "broker, {name}: produce {:.2} M records/s ({:.1} ms, {:.2}x), fetch {:.2} M records/s ({:.1} ms, {:.2}x); produce+fetch/hand-written time ratio: {:.2}x",
            rate(run.0),
            ms(run.0),
            run.0.as_secs_f64() / hand.0.as_secs_f64(),
            rate(run.1),
            ms(run.1),
            run.1.as_secs_f64() / hand.1.as_secs_f64(),
            total(run).as_secs_f64() / total(hand).as_secs_f64()
        );
    }
}

fn run_criterion(values: &[Bytes]) {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let mut group = criterion.benchmark_group("produce_fetch_1m_records_100b");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(RECORDS as u64));
    // `send` (about half a second a run) is timed by the ratio lines only,
    // so that the whole bench stays within seconds.
    group.bench_function("produce_send_batch_100", |b| {
        b.iter_batched(
            empty_cluster,
            |cluster| {
                produce_batches(&cluster, values);
                cluster
            },
            BatchSize::LargeInput,
        );
    });
    let cluster = empty_cluster();
    produce_batches(&cluster, values);
    group.bench_function("fetch", |b| b.iter(|| fetch(&cluster)));
    group.bench_function("hand_written_append", |b| {
        b.iter(|| append_by_hand(black_box(values)));
    });
    let log = append_by_hand(values);
    group.bench_function("hand_written_scan", |b| {
        b.iter(|| scan_by_hand(black_box(&log)));
    });
    group.finish();
    criterion.final_summary();
}
