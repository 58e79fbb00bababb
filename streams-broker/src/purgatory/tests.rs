//! Ports of Kafka's `DelayedOperationTest` on a mock clock (exact times
//! instead of waits), the purge interval, and a stress test with real
//! threads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::timer::{MockTime, RealTime, Time};

/// Kafka's `MockDelayedOperation`: completes once `completable` is set.
#[derive(Default)]
struct MockOp {
    completable: AtomicBool,
    completions: AtomicUsize,
    expirations: AtomicUsize,
    tries: AtomicUsize,
    tries_unlocked: AtomicUsize,
    events: Mutex<Vec<&'static str>>,
    this: OnceLock<Weak<Delayed<MockOp>>>,
}

impl DelayedOperation for MockOp {
    fn try_complete(&self) -> bool {
        self.tries.fetch_add(1, Ordering::SeqCst);
        if let Some(this) = self.this.get().and_then(Weak::upgrade)
            && !this.is_locked()
        {
            self.tries_unlocked.fetch_add(1, Ordering::SeqCst);
        }
        self.completable.load(Ordering::SeqCst)
    }
    fn on_complete(&self) {
        self.completions.fetch_add(1, Ordering::SeqCst);
        self.events.lock().unwrap().push("complete");
    }
    fn on_expiration(&self) {
        self.expirations.fetch_add(1, Ordering::SeqCst);
        self.events.lock().unwrap().push("expire");
    }
}

impl MockOp {
    fn set_completable(&self) {
        self.completable.store(true, Ordering::SeqCst);
    }
    fn counts(&self) -> (usize, usize) {
        (
            self.completions.load(Ordering::SeqCst),
            self.expirations.load(Ordering::SeqCst),
        )
    }
}

fn op(delay_ms: i64) -> Arc<Delayed<MockOp>> {
    let op = Delayed::new(MockOp::default(), delay_ms);
    let _ = op.operation().this.set(Arc::downgrade(&op));
    op
}

fn purgatory(time: &MockTime, config: PurgatoryConfig) -> Purgatory<String, MockOp> {
    Purgatory::new("mock", Timer::new(Arc::new(time.clone())), config)
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|k| (*k).to_owned()).collect()
}

fn both_configs() -> [PurgatoryConfig; 2] {
    [PurgatoryConfig::sharded(), PurgatoryConfig::global_lock()]
}

#[test]
fn request_satisfaction() {
    for config in both_configs() {
        let time = MockTime::new(0);
        let p = purgatory(&time, config);
        let (r1, r2) = (op(100_000), op(100_000));
        let (test1, test2) = ("test1".to_owned(), "test2".to_owned());
        assert_eq!(p.check_and_complete(&test1), 0, "no waiting requests");
        assert!(!p.try_complete_else_watch(&r1, &keys(&["test1"])).unwrap());
        assert_eq!(p.check_and_complete(&test1), 0, "still nothing satisfied");
        assert!(!p.try_complete_else_watch(&r2, &keys(&["test2"])).unwrap());
        assert_eq!(p.check_and_complete(&test2), 0);
        r1.operation().set_completable();
        assert_eq!(p.check_and_complete(&test1), 1, "r1 satisfied");
        assert_eq!(p.check_and_complete(&test1), 0, "nothing satisfied");
        r2.operation().set_completable();
        assert_eq!(p.check_and_complete(&test2), 1, "r2 satisfied");
        assert_eq!(p.check_and_complete(&test2), 0);
        assert_eq!(r1.operation().counts(), (1, 0));
        assert_eq!(r2.operation().counts(), (1, 0));
        assert_eq!((p.watched(), p.num_delayed()), (0, 0));
    }
}

#[test]
fn request_expiry_at_exactly_the_deadline() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let (r1, r2) = (op(20), op(200_000));
    assert!(!p.try_complete_else_watch(&r1, &keys(&["test1"])).unwrap());
    assert!(!p.try_complete_else_watch(&r2, &keys(&["test2"])).unwrap());
    assert_eq!(r1.deadline_ms(), Some(20));
    // The reaper's loop: on the mock clock advance_clock(200) moves the
    // clock to the next due bucket.
    while !r1.is_completed() {
        p.advance_clock(REAPER_TIMEOUT_MS);
    }
    assert_eq!(time.milliseconds(), 20, "expired at exactly its deadline");
    assert_eq!(r1.operation().counts(), (1, 1));
    assert_eq!(
        *r1.operation().events.lock().unwrap(),
        ["complete", "expire"]
    );
    assert!(!r2.is_completed());
    assert_eq!(p.num_delayed(), 1);
    // Still watched under test1 until a check or purge removes it.
    assert_eq!(p.watched(), 2);
    assert_eq!(p.check_and_complete(&"test1".to_owned()), 0);
    assert_eq!(p.watched(), 1);
}

#[test]
fn completion_before_and_at_the_deadline() {
    let time = MockTime::new(1_000);
    let p = purgatory(&time, PurgatoryConfig::default());
    let early = op(100);
    let at_deadline = op(100);
    let expires = op(100);
    for (o, k) in [(&early, "a"), (&at_deadline, "b"), (&expires, "c")] {
        assert!(!p.try_complete_else_watch(o, &keys(&[k])).unwrap());
    }
    assert_eq!(p.num_delayed(), 3);
    time.advance(99);
    p.advance_clock(0);
    assert!(!early.is_completed() && !expires.is_completed());
    early.operation().set_completable();
    assert_eq!(p.check_and_complete(&"a".to_owned()), 1);
    assert_eq!(p.num_delayed(), 2, "completion takes it out of the timer");
    // At the deadline, a check before the timer is driven completes it
    // normally; the one nobody completes expires.
    time.advance(1);
    at_deadline.operation().set_completable();
    assert_eq!(p.check_and_complete(&"b".to_owned()), 1);
    assert!(p.advance_clock(0));
    assert_eq!(early.operation().counts(), (1, 0));
    assert_eq!(at_deadline.operation().counts(), (1, 0));
    assert_eq!(expires.operation().counts(), (1, 1));
    // Completing after expiry does nothing.
    expires.operation().set_completable();
    assert_eq!(p.check_and_complete(&"c".to_owned()), 0);
    assert!(!expires.force_complete());
    assert_eq!(expires.operation().counts(), (1, 1));
    time.advance(10_000);
    p.advance_clock(0);
    assert_eq!(early.operation().counts(), (1, 0));
    assert_eq!(p.num_delayed(), 0);
}

#[test]
fn request_purge() {
    for config in both_configs() {
        let time = MockTime::new(0);
        let p = purgatory(&time, config);
        let (r1, r2, r3) = (op(100_000), op(100_000), op(100_000));
        p.try_complete_else_watch(&r1, &keys(&["test1"])).unwrap();
        p.try_complete_else_watch(&r2, &keys(&["test1", "test2"]))
            .unwrap();
        p.try_complete_else_watch(&r3, &keys(&["test1", "test2", "test3"]))
            .unwrap();
        assert_eq!(p.num_delayed(), 3, "3 total delayed operations");
        assert_eq!(p.watched(), 6, "6 watched elements");

        // Completing takes it out of the timer at once ...
        r2.operation().set_completable();
        assert!(r2.try_complete());
        assert_eq!(p.num_delayed(), 2);
        r3.operation().set_completable();
        assert!(r3.try_complete());
        assert_eq!(p.num_delayed(), 1);

        // ... and checking a key purges its list.
        p.check_and_complete(&"test1".to_owned());
        assert_eq!(p.watched(), 4);
        p.check_and_complete(&"test2".to_owned());
        assert_eq!(p.watched(), 2);
        p.check_and_complete(&"test3".to_owned());
        assert_eq!(p.watched(), 1);
    }
}

#[test]
fn purge_runs_when_the_estimate_exceeds_the_delayed_by_the_interval() {
    for (ops, purged) in [(10, false), (11, true)] {
        let time = MockTime::new(0);
        let p = purgatory(&time, PurgatoryConfig::default().purge_interval(10));
        let all: Vec<_> = (0..ops).map(|_| op(100_000)).collect();
        for (i, o) in all.iter().enumerate() {
            let key = format!("key{i}");
            p.try_complete_else_watch(o, &[key.clone(), format!("{key}-b")])
                .unwrap();
        }
        for o in &all {
            assert!(o.force_complete());
        }
        assert_eq!((p.watched(), p.num_delayed()), (2 * ops, 0));
        p.advance_clock(0);
        let expected = if purged { 0 } else { 2 * ops };
        assert_eq!(p.watched(), expected, "{ops} completed operations");
    }
    // The default interval is 1000: 1001 completed operations purge.
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let all: Vec<_> = (0..1001).map(|_| op(100_000)).collect();
    for (i, o) in all.iter().enumerate() {
        p.try_complete_else_watch(o, &[format!("k{}", i % 7)])
            .unwrap();
    }
    assert_eq!(p.num_delayed(), 1001);
    for o in &all[..1000] {
        o.force_complete();
    }
    p.advance_clock(0);
    assert_eq!(p.watched(), 1001, "1001 - 1 delayed is not above 1000");
    all[1000].force_complete();
    p.advance_clock(0);
    assert_eq!(p.watched(), 0);
}

#[test]
fn cancel_for_key_returns_the_cancelled_operations() {
    for config in both_configs() {
        let time = MockTime::new(0);
        let p = purgatory(&time, config);
        let (a, b, c) = (op(10_000), op(10_000), op(10_000));
        p.try_complete_else_watch(&a, &keys(&["key"])).unwrap();
        p.try_complete_else_watch(&b, &keys(&["key"])).unwrap();
        p.try_complete_else_watch(&c, &keys(&["key2"])).unwrap();
        let cancelled = p.cancel_for_key(&"key".to_owned());
        assert_eq!(cancelled.len(), 2);
        assert!(Arc::ptr_eq(&cancelled[0], &a) && Arc::ptr_eq(&cancelled[1], &b));
        assert_eq!(p.num_delayed(), 1);
        assert_eq!(p.watched(), 1);
        // Cancelled: neither completed nor expired, even past the deadline.
        time.advance(20_000);
        while p.advance_clock(0) {}
        assert_eq!(a.operation().counts(), (0, 0));
        assert!(!a.is_completed());
        assert_eq!(c.operation().counts(), (1, 1));
        assert!(p.cancel_for_key(&"key".to_owned()).is_empty());
    }
}

#[test]
fn cancel_for_a_key_nobody_watches_is_empty() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    assert!(p.cancel_for_key(&"key".to_owned()).is_empty());
}

#[test]
fn try_complete_else_watch_holds_the_operation_lock() {
    // testLockInTryCompleteElseWatch: both tries run under the lock.
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let o = op(100_000);
    assert!(!p.try_complete_else_watch(&o, &keys(&["key"])).unwrap());
    assert_eq!(o.operation().tries.load(Ordering::SeqCst), 2);
    assert_eq!(o.operation().tries_unlocked.load(Ordering::SeqCst), 0);
    // check_and_complete tries under the lock too.
    o.operation().set_completable();
    assert_eq!(p.check_and_complete(&"key".to_owned()), 1);
    assert_eq!(o.operation().tries.load(Ordering::SeqCst), 3);
    assert_eq!(o.operation().tries_unlocked.load(Ordering::SeqCst), 0);
}

#[test]
fn safe_try_complete_or_else() {
    let not_ready = op(100_000);
    let mut ran = false;
    assert!(!not_ready.safe_try_complete_or_else(|| ran = true));
    assert!(ran);
    let ready = op(100_000);
    ready.operation().set_completable();
    assert!(ready.safe_try_complete_or_else(|| panic!("must not run")));
    assert_eq!(ready.operation().tries_unlocked.load(Ordering::SeqCst), 0);
}

#[test]
fn an_operation_that_can_complete_is_never_watched() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    for _ in 0..2 {
        let o = op(100_000);
        o.operation().set_completable();
        assert!(p.try_complete_else_watch(&o, &keys(&["key"])).unwrap());
        assert!(o.is_completed());
        assert_eq!(o.operation().tries.load(Ordering::SeqCst), 1);
    }
    assert_eq!((p.watched(), p.num_delayed()), (0, 0));
}

#[test]
fn an_operation_completed_through_one_key_stays_on_the_others_until_checked() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let o = op(100_000);
    p.try_complete_else_watch(&o, &keys(&["a", "b", "c"]))
        .unwrap();
    o.operation().set_completable();
    assert_eq!(p.check_and_complete(&"b".to_owned()), 1);
    assert_eq!(p.watched(), 2);
    assert_eq!(p.check_and_complete(&"a".to_owned()), 0);
    assert_eq!(p.check_and_complete(&"c".to_owned()), 0);
    assert_eq!(p.watched(), 0);
    assert_eq!(o.operation().counts(), (1, 0));
}

#[test]
fn empty_watch_keys_are_a_typed_error() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let err = p.try_complete_else_watch(&op(10), &[]).unwrap_err();
    assert!(matches!(&err, PurgatoryError::NoWatchKeys { purgatory } if purgatory == "mock"));
    assert_eq!(
        err.to_string(),
        "purgatory mock: the watch key list can't be empty"
    );
    assert_eq!(p.num_delayed(), 0);
}

#[test]
fn without_the_timer_nothing_expires() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default().timer_enabled(false));
    let o = op(10);
    p.try_complete_else_watch(&o, &keys(&["k"])).unwrap();
    assert_eq!(p.num_delayed(), 0);
    time.advance(1_000);
    p.advance_clock(0);
    assert!(!o.is_completed());
    o.operation().set_completable();
    assert_eq!(p.check_and_complete(&"k".to_owned()), 1);
}

#[test]
fn an_expired_operation_added_with_no_delay_expires_at_once() {
    let time = MockTime::new(0);
    let p = purgatory(&time, PurgatoryConfig::default());
    let o = op(0);
    assert!(!p.try_complete_else_watch(&o, &keys(&["k"])).unwrap());
    assert_eq!(o.operation().counts(), (1, 1));
    assert_eq!(p.num_delayed(), 0);
}

#[test]
fn try_complete_with_multiple_threads() {
    // testTryCompleteWithMultipleThreads: 100 operations, each completable
    // only at its 20th attempt; attempts from 4 threads in a seeded random
    // order, each followed by check_and_complete. None may be missed.
    const OPS: usize = 100;
    const ATTEMPTS: usize = 20;
    struct Countdown {
        remaining: AtomicUsize,
        completable: AtomicBool,
        completions: AtomicUsize,
    }
    impl DelayedOperation for Countdown {
        fn try_complete(&self) -> bool {
            let ready = self.completable.load(Ordering::SeqCst);
            std::thread::yield_now();
            ready
        }
        fn on_complete(&self) {
            self.completions.fetch_add(1, Ordering::SeqCst);
        }
        fn on_expiration(&self) {}
    }
    let time = MockTime::new(0);
    let p: Arc<Purgatory<String, Countdown>> = Arc::new(Purgatory::new(
        "mock",
        Timer::new(Arc::new(time.clone())),
        PurgatoryConfig::default(),
    ));
    let ops: Vec<_> = (0..OPS)
        .map(|i| {
            let o = Delayed::new(
                Countdown {
                    remaining: AtomicUsize::new(ATTEMPTS),
                    completable: AtomicBool::new(false),
                    completions: AtomicUsize::new(0),
                },
                10_000,
            );
            assert!(!p.try_complete_else_watch(&o, &[format!("key{i}")]).unwrap());
            o
        })
        .collect();
    let mut schedule: Vec<usize> = (0..ATTEMPTS).flat_map(|_| 0..OPS).collect();
    let mut rng = StdRng::seed_from_u64(6431);
    for i in (1..schedule.len()).rev() {
        schedule.swap(i, rng.random_range(0..=i));
    }
    let ops = Arc::new(ops);
    let threads: Vec<_> = schedule
        .chunks(schedule.len() / 4)
        .map(|chunk| {
            let (chunk, p, ops) = (chunk.to_vec(), p.clone(), ops.clone());
            std::thread::spawn(move || {
                for i in chunk {
                    let op = ops[i].operation();
                    if op.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
                        op.completable.store(true, Ordering::SeqCst);
                    }
                    p.check_and_complete(&format!("key{i}"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for o in ops.iter() {
        assert!(o.is_completed(), "operation should have completed");
        assert_eq!(o.operation().completions.load(Ordering::SeqCst), 1);
    }
    assert_eq!((p.watched(), p.num_delayed()), (0, 0));
}

/// For the stress test: records how it ended.
#[derive(Default)]
struct StressOp {
    ready: AtomicBool,
    completions: AtomicUsize,
    expirations: AtomicUsize,
    out_of_order: AtomicBool,
}

impl DelayedOperation for StressOp {
    fn try_complete(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
    fn on_complete(&self) {
        self.completions.fetch_add(1, Ordering::SeqCst);
    }
    fn on_expiration(&self) {
        if self.completions.load(Ordering::SeqCst) != 1 {
            self.out_of_order.store(true, Ordering::SeqCst);
        }
        self.expirations.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn stress_every_operation_completes_or_expires_exactly_once() {
    // 4 threads, 10,000 operations over 64 keys, seeded; completions,
    // checks, the mock clock's advance and expiry all race.
    const THREADS: u64 = 4;
    const OPS_PER_THREAD: usize = 2_500;
    const KEYS: u64 = 64;
    const SEED: u64 = 0x6431;
    for config in both_configs() {
        let time = MockTime::new(0);
        let p: Arc<Purgatory<u64, StressOp>> = Arc::new(Purgatory::new(
            "stress",
            Timer::new(Arc::new(time.clone())),
            config.purge_interval(100),
        ));
        let claimed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (p, time, claimed) = (p.clone(), time.clone(), claimed.clone());
                std::thread::spawn(move || {
                    let mut rng = StdRng::seed_from_u64(SEED + t);
                    let mut mine: Vec<(Arc<Delayed<StressOp>>, Vec<u64>)> = Vec::new();
                    for i in 0..OPS_PER_THREAD {
                        let op = Delayed::new(StressOp::default(), rng.random_range(1..=50));
                        let n = rng.random_range(1..=3);
                        let keys: Vec<u64> = (0..n).map(|_| rng.random_range(0..KEYS)).collect();
                        if rng.random_bool(0.1) {
                            op.operation().ready.store(true, Ordering::SeqCst);
                        }
                        if p.try_complete_else_watch(&op, &keys).unwrap() {
                            claimed.fetch_add(1, Ordering::SeqCst);
                        }
                        mine.push((op, keys));
                        // Make an earlier operation ready and check one of its keys.
                        let (other, keys) = &mine[rng.random_range(0..mine.len())];
                        other.operation().ready.store(true, Ordering::SeqCst);
                        let key = keys[rng.random_range(0..keys.len())];
                        claimed.fetch_add(p.check_and_complete(&key), Ordering::SeqCst);
                        if i % 8 == 0 {
                            time.advance(1);
                            p.advance_clock(0);
                        }
                    }
                    mine.into_iter().map(|(op, _)| op).collect::<Vec<_>>()
                })
            })
            .collect();
        let ops: Vec<_> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        time.advance(100);
        while p.num_delayed() > 0 {
            p.advance_clock(100);
        }
        let expired: usize = ops
            .iter()
            .map(|o| o.operation().expirations.load(Ordering::SeqCst))
            .sum();
        for o in &ops {
            let op = o.operation();
            assert!(o.is_completed());
            assert_eq!(op.completions.load(Ordering::SeqCst), 1);
            assert!(op.expirations.load(Ordering::SeqCst) <= 1);
            assert!(!op.out_of_order.load(Ordering::SeqCst));
        }
        // Each operation was completed by exactly one caller: a try that
        // returned true, a check that counted it, or its expiry.
        assert_eq!(claimed.load(Ordering::SeqCst) + expired, ops.len());
        assert!(expired > 0 && expired < ops.len(), "{expired} expired");
        for key in 0..KEYS {
            assert_eq!(p.check_and_complete(&key), 0);
        }
        assert_eq!((p.watched(), p.num_delayed()), (0, 0));
    }
}

#[test]
fn the_reaper_expires_on_a_real_clock() {
    let p: Arc<Purgatory<String, MockOp>> = Arc::new(Purgatory::new(
        "real",
        Timer::new(Arc::new(RealTime::new())),
        PurgatoryConfig::default(),
    ));
    let start = p.timer().time().milliseconds();
    let reaper = p.start_reaper().unwrap();
    let r1 = op(20);
    let r2 = op(200_000);
    p.try_complete_else_watch(&r1, &keys(&["test1"])).unwrap();
    p.try_complete_else_watch(&r2, &keys(&["test2"])).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !r1.is_completed() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let elapsed = p.timer().time().milliseconds() - start;
    reaper.shutdown();
    assert!(r1.is_completed(), "r1 completed due to expiration");
    assert!(elapsed >= 20, "expired after {elapsed} ms");
    assert!(!r2.is_completed());
    assert_eq!(r1.operation().counts(), (1, 1));
}

#[test]
fn the_benchmarks_10000_keys_spread_over_the_512_shards() {
    // The contention benchmark's keys (0..10,000 as u64): every shard gets
    // some, none more than twice its share (19.5), so two threads on
    // random keys meet in a shard about once in 512 locks.
    let time = MockTime::new(0);
    let p: Purgatory<u64, MockOp> = Purgatory::new(
        "spread",
        Timer::new(Arc::new(time)),
        PurgatoryConfig::sharded(),
    );
    let mut counts = vec![0usize; SHARDS];
    for key in 0..10_000u64 {
        counts[p.shard_index(&key)] += 1;
    }
    let (min, max) = (
        counts.iter().copied().min().unwrap(),
        counts.iter().copied().max().unwrap(),
    );
    assert!(min >= 5 && max <= 39, "keys per shard from {min} to {max}");
    // The global lock has one shard for everything.
    let g: Purgatory<u64, MockOp> = Purgatory::new(
        "global",
        Timer::new(Arc::new(MockTime::new(0))),
        PurgatoryConfig::global_lock(),
    );
    assert!((0..10_000u64).all(|key| g.shard_index(&key) == 0));
}
