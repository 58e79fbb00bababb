//! The purgatory with 2 threads watching and completing operations over
//! 10,000 keys: Kafka's 512 watcher shards (each its own lock) against the
//! single global lock of the pre-KAFKA-6431 design, in the same process;
//! prints operations per second for both and the ratio.
//!
//! Each thread, seeded: watch a new operation under 3 random keys (a
//! produce to 3 partitions; `try_complete_else_watch`, which also adds it
//! to the timer), and once 64 are pending make the oldest ready and
//! `check_and_complete` each of its keys (the first completes it and takes
//! it out of the timer, the others drop it from their lists). The clock is a mock
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
/// Keys per operation (a produce to 3 partitions watches 3 keys).
const KEYS_PER_OP: usize = 3;

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
    run_threads(config, THREADS)
}

/// [`run`] with `threads` threads.
fn run_threads(config: PurgatoryConfig, threads: usize) -> Duration {
    let time = MockTime::new(0);
    let purgatory: Arc<Purgatory<u64, BenchOp>> =
        Arc::new(Purgatory::new("bench", Timer::new(Arc::new(time)), config));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (purgatory, barrier) = (purgatory.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(6431 + t as u64);
                let keys: Vec<Vec<u64>> = (0..OPS_PER_THREAD)
                    .map(|_| {
                        (0..KEYS_PER_OP)
                            .map(|_| rng.random_range(0..KEYS))
                            .collect()
                    })
                    .collect();
                let mut pending = VecDeque::with_capacity(PENDING + 1);
                let mut completed = 0;
                barrier.wait();
                for op_keys in keys {
                    let op = Delayed::new(
                        BenchOp {
                            ready: AtomicBool::new(false),
                            completed: AtomicUsize::new(0),
                        },
                        30_000,
                    );
                    let done = purgatory
                        .try_complete_else_watch(&op, &op_keys)
                        .expect("keys");
                    assert!(!done);
                    pending.push_back((op, op_keys));
                    if pending.len() > PENDING
                        && let Some((op, op_keys)) = pending.pop_front()
                    {
                        op.operation().ready.store(true, Ordering::Release);
                        for key in &op_keys {
                            completed += purgatory.check_and_complete(key);
                        }
                    }
                }
                for (op, op_keys) in pending.drain(..) {
                    op.operation().ready.store(true, Ordering::Release);
                    for key in &op_keys {
                        completed += purgatory.check_and_complete(key);
                    }
                }
                completed
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    let completed: usize = handles.into_iter().map(|t| t.join().expect("thread")).sum();
    let elapsed = start.elapsed();
    assert_eq!(completed, threads * OPS_PER_THREAD);
    assert_eq!((purgatory.watched(), purgatory.num_delayed()), (0, 0));
    black_box(&purgatory);
    elapsed
}

/// Rounds of the ratio measurement: each round runs both variants, one
/// after the other, so that both see the same machine.
const ROUNDS: usize = 7;

/// `ROUNDS` interleaved runs of `a` and `b`: their times, in round order.
fn interleaved(
    a: impl Fn() -> Duration,
    b: impl Fn() -> Duration,
) -> (Vec<Duration>, Vec<Duration>) {
    (0..ROUNDS).map(|_| (a(), b())).unzip()
}

fn min(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

/// The median of the rounds' ratios `slow / fast`.
fn median_ratio(slow: &[Duration], fast: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = slow
        .iter()
        .zip(fast)
        .map(|(s, f)| s.as_secs_f64() / f.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(0.0)
}

/// The machine's parallelism, with nothing shared: `threads` threads each
/// spinning on the same local arithmetic, from a barrier to the last join.
fn spin(threads: usize) -> Duration {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ t as u64;
                for _ in 0..20_000_000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                }
                black_box(x)
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for handle in handles {
        black_box(handle.join().expect("thread"));
    }
    start.elapsed()
}

/// The 1-minute load average (Linux), to print next to the figures.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned())
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
    println!(
        "{ROUNDS} rounds, sharded and global lock interleaved; load average before: {}",
        load()
    );
    for (label, timer) in [("timer enabled", true), ("timer disabled", false)] {
        let (sharded, global) = interleaved(
            || run(PurgatoryConfig::sharded().timer_enabled(timer)),
            || run(PurgatoryConfig::global_lock().timer_enabled(timer)),
        );
        let (best_sharded, best_global) = (min(&sharded), min(&global));
        println!(
            "purgatory, 2 threads, 10,000 keys, {label}: sharded (512) {:.2} M ops/s ({:.1} ms); global lock {:.2} M ops/s ({:.1} ms); sharded speed-up {:.2}x best-of-{ROUNDS}, {:.2}x median of the rounds",
            ops / best_sharded.as_secs_f64() / 1e6,
            best_sharded.as_secs_f64() * 1e3,
            ops / best_global.as_secs_f64() / 1e6,
            best_global.as_secs_f64() * 1e3,
            best_global.as_secs_f64() / best_sharded.as_secs_f64(),
            median_ratio(&global, &sharded),
        );
    }
    // How much parallelism the machine gave: the same per-thread work on 1
    // thread against 2 (2.0 = two free cores; near 1.0 = no contention is
    // possible, the threads take turns).
    let (one, two) = interleaved(
        || run_threads(PurgatoryConfig::sharded(), 1),
        || run(PurgatoryConfig::sharded()),
    );
    let (one_untimed, two_untimed) = interleaved(
        || run_threads(PurgatoryConfig::sharded().timer_enabled(false), 1),
        || run(PurgatoryConfig::sharded().timer_enabled(false)),
    );
    let (spin_one, spin_two) = interleaved(|| spin(1), || spin(2));
    let scaling =
        |one: &[Duration], two: &[Duration]| 2.0 * min(one).as_secs_f64() / min(two).as_secs_f64();
    println!(
        "parallel scaling, sharded, 2 threads against 1 (best of {ROUNDS}): {:.2}x the throughput with the timer, {:.2}x without; 2 threads sharing nothing: {:.2}x; load average after: {}",
        scaling(&one, &two),
        scaling(&one_untimed, &two_untimed),
        scaling(&spin_one, &spin_two),
        load()
    );
}
