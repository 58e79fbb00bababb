//! Ports of Kafka's `TimerTest` and `TimerTaskListTest`, and the wheel's
//! overflow levels, on a mock clock with exact times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::*;

/// Kafka's tests build `SystemTimer("test", 1, 3, now)`: tick 1, 3 buckets.
fn kafka_test_timer(time: &MockTime) -> Timer {
    Timer::with_config(
        Arc::new(time.clone()),
        TimerConfig {
            tick_ms: 1,
            wheel_size: 3,
        },
    )
    .unwrap()
}

/// A task recording (id, the clock when it ran) once.
fn recorder(id: i64, time: &MockTime, out: &Arc<Mutex<Vec<(i64, i64)>>>) -> Arc<dyn TimerTask> {
    let (time, out) = (time.clone(), out.clone());
    Arc::new(move || out.lock().unwrap().push((id, time.milliseconds())))
}

#[test]
fn already_expired_tasks_run_at_once() {
    let time = MockTime::new(1_000);
    let timer = kafka_test_timer(&time);
    let out = Arc::new(Mutex::new(Vec::new()));
    for i in -5..0 {
        assert_eq!(timer.add(recorder(i, &time, &out), i), None);
    }
    // They ran inside add, in order, before any advance_clock.
    assert_eq!(
        *out.lock().unwrap(),
        [(-5, 1000), (-4, 1000), (-3, 1000), (-2, 1000), (-1, 1000)]
    );
    assert_eq!(timer.size(), 0);
    assert!(!timer.advance_clock(0));
    // A delay of 0 has expired too: it is within the current tick.
    assert_eq!(timer.add(recorder(0, &time, &out), 0), None);
    assert_eq!(out.lock().unwrap().len(), 6);
}

#[test]
fn task_expiration_runs_every_task_at_its_time() {
    // Kafka's testTaskExpiration: ids 0..5 once, 10..100 twice, 100..500 once.
    let time = MockTime::new(0);
    let timer = kafka_test_timer(&time);
    let out = Arc::new(Mutex::new(Vec::new()));
    let mut ids = Vec::new();
    for i in 0..5 {
        timer.add(recorder(i, &time, &out), i);
        ids.push(i);
    }
    for i in 10..100 {
        timer.add(recorder(i, &time, &out), i);
        timer.add(recorder(i, &time, &out), i);
        ids.push(i);
        ids.push(i);
    }
    for i in 100..500 {
        timer.add(recorder(i, &time, &out), i);
        ids.push(i);
    }
    // Delay 0 ran at once; the rest wait.
    assert_eq!(timer.size(), ids.len() - 1);
    while timer.advance_clock(2000) {}
    let out = out.lock().unwrap().clone();
    let ran: Vec<i64> = out.iter().map(|(id, _)| *id).collect();
    // In exactly delay order (Kafka's test sorts; here the order is exact).
    assert_eq!(ran, ids);
    // Each at exactly its expiration.
    assert!(out.iter().all(|(id, at)| id == at), "{out:?}");
    assert_eq!(timer.size(), 0);
    // The loop's last call waited the full 2000 ms from 499.
    assert_eq!(time.milliseconds(), 2499);
}

#[test]
fn overflow_wheels_are_created_lazily_and_tasks_come_back_down() {
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let ticks = |t: &Timer| t.levels().iter().map(|l| l.tick_ms).collect::<Vec<_>>();
    let out = Arc::new(Mutex::new(Vec::new()));
    assert_eq!(ticks(&timer), [1]);
    timer.add(recorder(19, &time, &out), 19);
    assert_eq!(ticks(&timer), [1], "19 ms fits the first wheel (20 x 1 ms)");
    timer.add(recorder(20, &time, &out), 20);
    assert_eq!(ticks(&timer), [1, 20]);
    timer.add(recorder(399, &time, &out), 399);
    assert_eq!(ticks(&timer), [1, 20]);
    timer.add(recorder(400, &time, &out), 400);
    assert_eq!(ticks(&timer), [1, 20, 400]);
    timer.add(recorder(8_000, &time, &out), 8_000);
    assert_eq!(ticks(&timer), [1, 20, 400, 8_000]);
    timer.add(recorder(8_001, &time, &out), 8_001);
    timer.add(recorder(200_000, &time, &out), 200_000);
    assert_eq!(ticks(&timer), [1, 20, 400, 8_000, 160_000]);
    let intervals: Vec<i64> = timer.levels().iter().map(|l| l.interval_ms).collect();
    assert_eq!(intervals, [20, 400, 8_000, 160_000, 3_200_000]);
    assert_eq!(timer.size(), 7);

    // Drive the clock: each task cascades down and runs at its exact time.
    while timer.size() > 0 {
        timer.advance_clock(1_000_000);
    }
    assert_eq!(
        *out.lock().unwrap(),
        [
            (19, 19),
            (20, 20),
            (399, 399),
            (400, 400),
            (8_000, 8_000),
            (8_001, 8_001),
            (200_000, 200_000)
        ]
    );
    // The wheels' times followed the buckets that expired.
    let currents: Vec<i64> = timer.levels().iter().map(|l| l.current_ms).collect();
    assert_eq!(currents, [200_000, 200_000, 200_000, 200_000, 160_000]);
}

#[test]
fn a_task_in_an_overflow_bucket_waits_for_the_right_tick() {
    // 25 ms from 0 goes to the 20 ms wheel's bucket [20, 40); at 20 it
    // comes down to the first wheel and runs at 25, not before.
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    let handle = timer.add(recorder(25, &time, &out), 25).unwrap();
    assert_eq!(handle.expiration_ms(), 25);
    assert_eq!(timer.next_expiration_ms(), Some(20));
    assert!(timer.advance_clock(100));
    assert_eq!(time.milliseconds(), 20);
    assert!(out.lock().unwrap().is_empty());
    assert_eq!(timer.next_expiration_ms(), Some(25));
    assert_eq!(timer.size(), 1, "moving down keeps the count");
    assert!(timer.advance_clock(100));
    assert_eq!(*out.lock().unwrap(), [(25, 25)]);
}

#[test]
fn cancelled_tasks_never_run_and_leave_at_once() {
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<TimerHandle> = (1..=10)
        .map(|i| timer.add(recorder(i, &time, &out), i * 100).unwrap())
        .collect();
    assert_eq!(timer.size(), 10);
    for handle in handles.iter().step_by(2) {
        assert!(timer.cancel(*handle));
    }
    assert_eq!(timer.size(), 5);
    assert!(!timer.cancel(handles[0]), "a second cancel finds nothing");
    while timer.size() > 0 {
        timer.advance_clock(10_000);
    }
    let ran: Vec<i64> = out.lock().unwrap().iter().map(|(id, _)| *id).collect();
    assert_eq!(ran, [2, 4, 6, 8, 10]);
    assert!(
        !timer.cancel(handles[1]),
        "cancelling after it ran does nothing"
    );
    // A freed slot is reused; the stale handle does not cancel the new task.
    let fresh = timer.add(recorder(99, &time, &out), 5).unwrap();
    assert!(!timer.cancel(handles[1]));
    assert!(timer.cancel(fresh));
}

#[test]
fn tasks_in_the_same_tick_run_in_insertion_order() {
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    // Both expire at 25: one added at 0 (via the 20 ms wheel), one at 10
    // (the first wheel has not moved: it goes to the same bucket), one at
    // 20 after the overflow bucket came down (first wheel directly).
    timer.add(recorder(1, &time, &out), 25);
    time.advance(10);
    timer.add(recorder(2, &time, &out), 15);
    timer.advance_clock(10); // to 20: the bucket comes down
    assert_eq!(time.milliseconds(), 20);
    timer.add(recorder(3, &time, &out), 5);
    timer.add(recorder(4, &time, &out), 4);
    while timer.size() > 0 {
        timer.advance_clock(100);
    }
    assert_eq!(*out.lock().unwrap(), [(4, 24), (1, 25), (2, 25), (3, 25)]);
}

#[test]
fn a_late_driver_runs_everything_due_in_order() {
    // The clock jumps far ahead before the timer is driven: every bucket
    // due is expired in one call, in expiration order.
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    for delay in [9_000, 3, 450, 21, 160_001] {
        timer.add(recorder(delay, &time, &out), delay);
    }
    time.advance(10_000);
    assert!(timer.advance_clock(0));
    let ran: Vec<i64> = out.lock().unwrap().iter().map(|(id, _)| *id).collect();
    assert_eq!(ran, [3, 21, 450, 9_000]);
    assert_eq!(timer.size(), 1);
    assert!(!timer.advance_clock(0));
}

#[test]
fn size_counts_entries_as_they_move_between_wheels() {
    // TimerTaskListTest's point: moving an entry does not change the count.
    let time = MockTime::new(0);
    let timer = kafka_test_timer(&time);
    let runs = Arc::new(AtomicUsize::new(0));
    for delay in 1..=10 {
        let runs = runs.clone();
        timer.add(
            Arc::new(move || {
                runs.fetch_add(1, Ordering::SeqCst);
            }),
            delay * 10,
        );
    }
    assert_eq!(timer.size(), 10);
    let mut seen = Vec::new();
    while timer.advance_clock(1_000) {
        seen.push((time.milliseconds(), timer.size()));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 10);
    // At every step size = 10 - tasks run so far.
    for (at, size) in &seen {
        assert_eq!(*size, 10 - usize::try_from(*at / 10).unwrap(), "at {at}");
    }
}

#[test]
fn invalid_configs_are_typed_errors() {
    let time: Arc<dyn Time> = Arc::new(MockTime::new(0));
    let err = Timer::with_config(
        time.clone(),
        TimerConfig {
            tick_ms: 0,
            wheel_size: 20,
        },
    )
    .unwrap_err();
    assert_eq!(err, TimerError::InvalidTick(0));
    let err = Timer::with_config(
        time,
        TimerConfig {
            tick_ms: 1,
            wheel_size: 1,
        },
    )
    .unwrap_err();
    assert_eq!(err, TimerError::InvalidWheelSize(1));
}

#[test]
fn extreme_delays_and_negative_clocks_do_not_break_the_wheel() {
    let time = MockTime::new(-1_000);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    let far = timer.add(recorder(1, &time, &out), i64::MAX).unwrap();
    assert_eq!(far.expiration_ms(), wheel::MAX_EXPIRATION_MS);
    timer.add(recorder(2, &time, &out), 1_500);
    assert!(timer.levels().len() <= 16);
    while out.lock().unwrap().is_empty() {
        timer.advance_clock(1_000);
    }
    assert_eq!(*out.lock().unwrap(), [(2, 500)]);
    assert!(timer.cancel(far));
    assert_eq!(timer.size(), 0);
}

#[test]
fn a_task_may_add_tasks_when_it_runs() {
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let out = Arc::new(Mutex::new(Vec::new()));
    let (inner_timer, inner_out, inner_time) = (timer.clone(), out.clone(), time.clone());
    timer.add(
        Arc::new(move || {
            inner_out
                .lock()
                .unwrap()
                .push((1, inner_time.milliseconds()));
            inner_timer.add(recorder(2, &inner_time, &inner_out), 7);
        }),
        3,
    );
    while timer.advance_clock(100) {}
    assert_eq!(*out.lock().unwrap(), [(1, 3), (2, 10)]);
}

#[test]
fn a_real_clock_waits_and_wakes() {
    let timer = Timer::new(Arc::new(RealTime::new()));
    let out = Arc::new(AtomicUsize::new(0));
    let o = out.clone();
    timer.add(
        Arc::new(move || {
            o.fetch_add(1, Ordering::SeqCst);
        }),
        5,
    );
    let start = std::time::Instant::now();
    while out.load(Ordering::SeqCst) == 0 {
        timer.advance_clock(200);
    }
    assert!(start.elapsed() >= std::time::Duration::from_millis(4));
    // wake() ends a wait early.
    let waiter = timer.clone();
    let handle = std::thread::spawn(move || waiter.advance_clock(60_000));
    while !handle.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(5));
        timer.wake();
    }
    assert!(!handle.join().unwrap());
}

#[test]
fn concurrent_adds_cancels_and_expiry_run_each_task_once_or_cancel_it() {
    // 4 threads add and cancel under the read lock while a fifth moves the
    // mock clock and expires buckets under the write lock; seeded. Every
    // task either ran once (never before its expiration) or was cancelled
    // by exactly one successful cancel, and the count ends at 0.
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    struct Counted {
        runs: AtomicUsize,
        ran_at: std::sync::atomic::AtomicI64,
        time: MockTime,
    }
    impl TimerTask for Counted {
        fn run(&self) {
            self.ran_at
                .store(self.time.milliseconds(), Ordering::SeqCst);
            self.runs.fetch_add(1, Ordering::SeqCst);
        }
    }

    const THREADS: u64 = 4;
    const TASKS_PER_THREAD: usize = 5_000;
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let adding = Arc::new(AtomicUsize::new(THREADS as usize));
    let driver = {
        let (timer, time, adding) = (timer.clone(), time.clone(), adding.clone());
        std::thread::spawn(move || {
            while adding.load(Ordering::SeqCst) > 0 {
                time.advance(1);
                timer.advance_clock(0);
                std::thread::yield_now();
            }
        })
    };
    let adders: Vec<_> = (0..THREADS)
        .map(|t| {
            let (timer, time, adding) = (timer.clone(), time.clone(), adding.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(0x7131 + t);
                let mut mine = Vec::with_capacity(TASKS_PER_THREAD);
                for _ in 0..TASKS_PER_THREAD {
                    let task = Arc::new(Counted {
                        runs: AtomicUsize::new(0),
                        ran_at: std::sync::atomic::AtomicI64::new(i64::MIN),
                        time: time.clone(),
                    });
                    // From already expired to a few overflow wheels up.
                    let delay = match rng.random_range(0..4) {
                        0 => rng.random_range(-5..20),
                        1 => rng.random_range(20..400),
                        2 => rng.random_range(400..8_000),
                        _ => rng.random_range(8_000..200_000),
                    };
                    let handle = timer.add(task.clone(), delay);
                    let cancelled = match handle {
                        Some(handle) if rng.random_bool(0.5) => {
                            let first = timer.cancel(handle);
                            assert!(!timer.cancel(handle), "a handle cancels once");
                            first
                        }
                        _ => false,
                    };
                    mine.push((task, handle, cancelled));
                }
                adding.fetch_sub(1, Ordering::SeqCst);
                mine
            })
        })
        .collect();
    let tasks: Vec<_> = adders.into_iter().flat_map(|t| t.join().unwrap()).collect();
    driver.join().unwrap();
    while timer.size() > 0 {
        timer.advance_clock(1_000_000);
    }
    let mut ran = 0;
    for (task, handle, cancelled) in &tasks {
        let runs = task.runs.load(Ordering::SeqCst);
        assert_eq!(runs + usize::from(*cancelled), 1, "{handle:?}");
        if runs == 1 {
            ran += 1;
            if let Some(handle) = handle {
                assert!(task.ran_at.load(Ordering::SeqCst) >= handle.expiration_ms());
            }
        }
    }
    assert!(ran > 0 && ran < tasks.len(), "{ran} ran");
    assert_eq!(timer.size(), 0);
    assert_eq!(timer.next_expiration_ms(), None);
    // The overflow wheels the threads raced to create form one chain.
    let ticks: Vec<i64> = timer.levels().iter().map(|l| l.tick_ms).collect();
    assert_eq!(ticks, [1, 20, 400, 8_000, 160_000]);
}

#[test]
fn threads_racing_to_create_overflow_wheels_agree_on_them() {
    for round in 0..20 {
        let time = MockTime::new(round);
        let timer = Timer::new(Arc::new(time.clone()));
        let barrier = Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (timer, barrier) = (timer.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    timer.add(Arc::new(|| {}), 1_000_000 + t).unwrap()
                })
            })
            .collect();
        let handles: Vec<TimerHandle> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let ticks: Vec<i64> = timer.levels().iter().map(|l| l.tick_ms).collect();
        assert_eq!(ticks, [1, 20, 400, 8_000, 160_000]);
        assert_eq!(timer.size(), 4);
        for handle in handles {
            assert!(timer.cancel(handle));
        }
        assert_eq!(timer.size(), 0);
    }
}

#[test]
fn dropping_the_timer_drops_its_waiting_tasks() {
    // A task that can cancel itself holds the wheels (WeakTimer); dropping
    // the last Timer clone must still free it (no cycle).
    let time = MockTime::new(0);
    let timer = Timer::new(Arc::new(time.clone()));
    let task: Arc<dyn TimerTask> = Arc::new(|| {});
    let handle = timer.add(task.clone(), 1_000).unwrap();
    let canceller = timer.downgrade();
    assert_eq!(Arc::strong_count(&task), 2);
    drop(timer);
    assert_eq!(Arc::strong_count(&task), 1, "the waiting task was dropped");
    assert!(!canceller.cancel(handle), "nothing left to cancel");
}
