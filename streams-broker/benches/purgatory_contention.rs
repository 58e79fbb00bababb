//! The purgatory with 2 threads watching and completing operations over
//! 10,000 keys: Kafka's 512 watcher shards (each its own lock) against the
//! single global lock of the pre-KAFKA-6431 design, in the same process;
//! prints operations per second for both and the ratio.
//!
//! Each thread, seeded: watch a new operation under a random key
//! (`try_complete_else_watch`, which also adds it to the timer), and once
//! 64 are pending make the oldest ready and `check_and_complete` its key
//! (which completes it and takes it out of the timer). The clock is a mock
//! that does not move, so nothing expires: only watching and completing
//! are measured. Also measured with the timer disabled (the watcher locks
//! alone).
//!
//! Run: `cargo bench -p streams-broker --bench purgatory_contention`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion and prints the ratios)

use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use streams_broker::purgatory::{Delayed, DelayedOperation, Purgatory, PurgatoryConfig};
use streams_broker::timer::{MockTime, Timer};

const THREADS: usize = 2;
const KEYS: u64 = 10_000;
const OPS_PER_THREAD: usize = 100_000;
const PENDING: usize = 64;

struct BenchOp {
    ready: AtomicBool,
    completed: AtomicUsize,
}

impl DelayedOperation for BenchOp {
    fn try_complete(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
    fn on_complete(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }
    fn on_expiration(&self) {}
}

/// One run: both threads' operations, timed from the barrier to the last
/// join. Checks that every operation completed.
fn run(config: PurgatoryConfig) -> Duration {
    let time = MockTime::new(0);
    let purgatory: Arc<Purgatory<u64, BenchOp>> =
        Arc::new(Purgatory::new("bench", Timer::new(Arc::new(time)), config));
    let barrier = Arc::new(Barrier::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (purgatory, barrier) = (purgatory.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(6431 + t as u64);
                let keys: Vec<u64> = (0..OPS_PER_THREAD)
                    .map(|_| rng.random_range(0..KEYS))
                    .collect();
                let mut pending = VecDeque::with_capacity(PENDING + 1);
                let mut completed = 0;
                barrier.wait();
                for key in keys {
                    let op = Delayed::new(
                        BenchOp {
                            ready: AtomicBool::new(false),
                            completed: AtomicUsize::new(0),
                        },
                        30_000,
                    );
                    let done = purgatory
                        .try_complete_else_watch(&op, &[key])
                        .expect("keys");
                    assert!(!done);
                    pending.push_back((op, key));
                    if pending.len() > PENDING {
                        if let Some((op, key)) = pending.pop_front() {
                            op.operation().ready.store(true, Ordering::Release);
                            completed += purgatory.check_and_complete(&key);
                        }
                    }
                }
                for (op, key) in pending.drain(..) {
                    op.operation().ready.store(true, Ordering::Release);
                    completed += purgatory.check_and_complete(&key);
                }
                completed
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let completed: usize = threads.into_iter().map(|t| t.join().expect("thread")).sum();
    let elapsed = start.elapsed();
    assert_eq!(completed, THREADS * OPS_PER_THREAD);
    assert_eq!(purgatory.num_delayed(), 0);
    black_box(&purgatory);
    elapsed
}

fn best_of(runs: usize, config: PurgatoryConfig) -> Duration {
    (0..runs).map(|_| run(config)).min().unwrap_or_default()
}

fn main() {
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        let mut criterion = Criterion::default()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args();
        let mut group = criterion.benchmark_group("purgatory_2_threads_10k_keys");
        group.throughput(Throughput::Elements((THREADS * OPS_PER_THREAD) as u64));
        for (name, config) in [
            ("sharded_512", PurgatoryConfig::sharded()),
            ("global_lock", PurgatoryConfig::global_lock()),
        ] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| run(config)).sum())
            });
        }
        group.finish();
        criterion.final_summary();
    }

    let ops = (THREADS * OPS_PER_THREAD) as f64;
    for (label, timer) in [("timer enabled", true), ("timer disabled", false)] {
        let sharded = best_of(5, PurgatoryConfig::sharded().timer_enabled(timer));
        let global = best_of(5, PurgatoryConfig::global_lock().timer_enabled(timer));
        println!(
            "purgatory, 2 threads, 10,000 keys, {label}: sharded (512) {:.2} M ops/s ({:.1} ms); global lock {:.2} M ops/s ({:.1} ms); sharded speed-up {:.2}x",
            ops / sharded.as_secs_f64() / 1e6,
            sharded.as_secs_f64() * 1e3,
            ops / global.as_secs_f64() / 1e6,
            global.as_secs_f64() * 1e3,
            global.as_secs_f64() / sharded.as_secs_f64()
        );
    }
}
