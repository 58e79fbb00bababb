//! The hierarchical timing wheel against a binary heap for 1,000,000
//! timers of which 90% are cancelled before they fire; prints timers per
//! second for both and the ratio.
//!
//! Both are thread-safe timers (one mutex each) holding the same kind of
//! task (an `Arc` with a counter), on a mock clock: 1,000,000 timers with
//! seeded random delays of 1 ms to 30 s are added, 900,000 of them (every
//! one whose number is not a multiple of 10) cancelled, and the clock is
//! driven until the 100,000 left have fired. The wheel cancels by
//! unlinking its entry (O(1)); a heap cannot remove from the middle, so
//! it marks the task cancelled and drops it when it reaches the top (as a
//! `DelayQueue`-based timer that leaves cancelled entries in place).
//!
//! Run: `cargo bench -p streams-broker --bench timer_wheel`
//! (`STREAMS_BENCH_RATIO_ONLY=1` skips criterion and prints the ratio)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use streams_broker::timer::{MockTime, Time, Timer, TimerTask};

const TIMERS: usize = 1_000_000;
const MAX_DELAY_MS: i64 = 30_000;

struct Task {
    fired: Arc<AtomicUsize>,
    cancelled: AtomicBool,
}

impl TimerTask for Task {
    fn run(&self) {
        self.fired.fetch_add(1, Ordering::Relaxed);
    }
}

fn delays() -> Vec<i64> {
    let mut rng = StdRng::seed_from_u64(6431);
    (0..TIMERS)
        .map(|_| rng.random_range(1..=MAX_DELAY_MS))
        .collect()
}

fn task(fired: &Arc<AtomicUsize>) -> Arc<Task> {
    Arc::new(Task {
        fired: fired.clone(),
        cancelled: AtomicBool::new(false),
    })
}

fn wheel(delays: &[i64]) -> Duration {
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let fired = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let handles: Vec<_> = delays
        .iter()
        .map(|&delay| timer.add(task(&fired), delay))
        .collect();
    for (i, handle) in handles.iter().enumerate() {
        if i % 10 != 0
            && let Some(handle) = handle
        {
            timer.cancel(*handle);
        }
    }
    while timer.size() > 0 {
        timer.advance_clock(1_000);
    }
    let elapsed = start.elapsed();
    assert_eq!(fired.load(Ordering::Relaxed), TIMERS / 10);
    elapsed
}

/// A binary-heap timer: entries by (expiration, sequence), cancelled lazily.
struct HeapTimer {
    heap: Mutex<BinaryHeap<Reverse<(i64, u64, HeapEntry)>>>,
}

struct HeapEntry(Arc<Task>);

impl PartialEq for HeapEntry {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapEntry {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn heap(delays: &[i64]) -> Duration {
    let time = MockTime::new(0);
    let timer = HeapTimer {
        heap: Mutex::new(BinaryHeap::new()),
    };
    let fired = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let now = time.milliseconds();
    let tasks: Vec<Arc<Task>> = delays
        .iter()
        .enumerate()
        .map(|(seq, &delay)| {
            let t = task(&fired);
            timer.heap.lock().expect("heap").push(Reverse((
                now + delay,
                seq as u64,
                HeapEntry(t.clone()),
            )));
            t
        })
        .collect();
    for (i, t) in tasks.iter().enumerate() {
        if i % 10 != 0 {
            t.cancelled.store(true, Ordering::Release);
        }
    }
    drop(tasks);
    loop {
        time.advance(1_000);
        let now = time.milliseconds();
        let mut due = Vec::new();
        let empty = {
            let mut heap = timer.heap.lock().expect("heap");
            while heap.peek().is_some_and(|Reverse((e, _, _))| *e <= now) {
                if let Some(Reverse((_, _, HeapEntry(t)))) = heap.pop()
                    && !t.cancelled.load(Ordering::Acquire)
                {
                    due.push(t);
                }
            }
            heap.is_empty()
        };
        for t in due {
            t.run();
        }
        if empty {
            break;
        }
    }
    let elapsed = start.elapsed();
    assert_eq!(fired.load(Ordering::Relaxed), TIMERS / 10);
    elapsed
}

fn best_of(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap_or_default()
}

fn main() {
    let delays = delays();
    if std::env::var_os("STREAMS_BENCH_RATIO_ONLY").is_none() {
        let mut criterion = Criterion::default()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(4))
            .configure_from_args();
        let mut group = criterion.benchmark_group("timers_1m_90pct_cancelled");
        group.throughput(Throughput::Elements(TIMERS as u64));
        group.bench_function("timing_wheel", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| wheel(black_box(&delays))).sum())
        });
        group.bench_function("binary_heap", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| heap(black_box(&delays))).sum())
        });
        group.finish();
        criterion.final_summary();
    }
    let w = best_of(5, || wheel(&delays));
    let h = best_of(5, || heap(&delays));
    let rate = |d: Duration| TIMERS as f64 / d.as_secs_f64() / 1e6;
    println!(
        "1,000,000 timers, 90% cancelled: timing wheel {:.2} M timers/s ({:.1} ms); binary heap {:.2} M timers/s ({:.1} ms); wheel speed-up {:.2}x",
        rate(w),
        w.as_secs_f64() * 1e3,
        rate(h),
        h.as_secs_f64() * 1e3,
        h.as_secs_f64() / w.as_secs_f64()
    );
}
