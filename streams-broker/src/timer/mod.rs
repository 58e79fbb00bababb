//! Kafka's hierarchical timing wheel (`TimingWheel`, `TimerTaskList`,
//! `SystemTimer` in server-common's `util/timer`) and the clocks it runs
//! on.
//!
//! A [`Timer`] holds tasks until their expiration and runs each once, on
//! the thread that drives it with [`Timer::advance_clock`] (Kafka's
//! expiration reaper calls it with 200 ms in a loop). It keeps the shape of
//! Kafka's timer:
//!
//! - the first wheel has a 1 ms tick and 20 buckets (an interval of 20
//!   ms); a task beyond it goes to an overflow wheel whose tick is the
//!   interval below (20 ms, then 400 ms, 8 s, 160 s, ...), created only
//!   when first needed ([`Timer::levels`] shows them);
//! - a bucket's expiration is the start of its range; buckets are queued by
//!   expiration, and when one expires the wheels' time moves to it and its
//!   tasks are re-added: into finer wheels, or run if their time has come;
//! - adding costs O(number of wheels), cancelling O(1) (an entry knows its
//!   bucket and neighbours); a task whose time has already come when it is
//!   added runs at once, on the adding thread;
//! - tasks run in a deterministic order: buckets by (expiration, level,
//!   slot), first-in first-out within a bucket;
//! - it is locked as Kafka's `SystemTimer`: adds and cancels take a read
//!   lock on the wheels and then only the lock of the bucket they touch
//!   (and of the adding thread's entry shard), so threads adding and
//!   cancelling in parallel do not serialise on one mutex; expiring
//!   buckets, which moves the wheels' time, takes the write lock. Overflow
//!   wheels are created under the read lock, once, in a `OnceLock`.
//!
//! Time comes from a [`Time`]: [`MockTime`] for tests (nothing happens
//! until the test moves it, and [`Timer::advance_clock`] moves it as a
//! sleep would) or [`RealTime`].
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use streams_broker::timer::{MockTime, Time, Timer};
//!
//! let time = MockTime::new(0);
//! let timer = Timer::new(Arc::new(time.clone()));
//! let fired = Arc::new(Mutex::new(Vec::new()));
//! for delay in [30, 5, 450] {
//!     let (fired, time) = (fired.clone(), time.clone());
//!     timer.add(Arc::new(move || fired.lock().unwrap().push((delay, time.milliseconds()))), delay);
//! }
//! // 5 ms fits the first wheel, 30 ms the 20 ms wheel, 450 ms the 400 ms one.
//! let ticks: Vec<i64> = timer.levels().iter().map(|l| l.tick_ms).collect();
//! assert_eq!(ticks, [1, 20, 400]);
//! let cancelled = timer.add(Arc::new(|| unreachable!()), 10).unwrap();
//! assert!(timer.cancel(cancelled));
//!
//! // On a mock clock, advance_clock(timeout) moves the clock to the next
//! // due bucket (at most `timeout` ms) and runs what is due.
//! while timer.size() > 0 {
//!     timer.advance_clock(200);
//! }
//! assert_eq!(*fired.lock().unwrap(), [(5, 5), (30, 30), (450, 450)]);
//! ```

mod time;
mod wheel;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use time::{MockTime, RealTime, Time};
pub(crate) use wheel::CachePadded;
pub use wheel::WheelLevel;

use wheel::{Wheels, lock};

/// Kafka's default tick: 1 ms.
pub const DEFAULT_TICK_MS: i64 = 1;
/// Kafka's default wheel size: 20 buckets.
pub const DEFAULT_WHEEL_SIZE: usize = 20;

/// Something to run when its time comes (Kafka's `TimerTask.run`). Any
/// `Fn() + Send + Sync` closure is one.
pub trait TimerTask: Send + Sync {
    /// Runs the task; the timer calls it at most once per
    /// [`Timer::add`], outside its lock, so it may add tasks itself.
    fn run(&self);
}

impl<F: Fn() + Send + Sync> TimerTask for F {
    fn run(&self) {
        self()
    }
}

/// A task waiting in a [`Timer`], for [`Timer::cancel`]. It stays valid
/// (and harmless) after the task ran or was cancelled: cancelling it then
/// returns false.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerHandle {
    shard: usize,
    index: usize,
    generation: u64,
    expiration_ms: i64,
}

impl TimerHandle {
    /// When the task expires: the time it was added plus its delay.
    pub fn expiration_ms(&self) -> i64 {
        self.expiration_ms
    }
}

/// The shape of a timer's wheels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerConfig {
    /// The first wheel's tick in ms (Kafka's default 1; at least 1).
    pub tick_ms: i64,
    /// Buckets per wheel (Kafka's default 20; at least 2).
    pub wheel_size: usize,
}

impl Default for TimerConfig {
    fn default() -> Self {
        Self {
            tick_ms: DEFAULT_TICK_MS,
            wheel_size: DEFAULT_WHEEL_SIZE,
        }
    }
}

/// A [`TimerConfig`] that no timer can have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimerError {
    /// The tick is below 1 ms.
    #[error("timer tick must be at least 1 ms, got {0}")]
    InvalidTick(i64),
    /// The wheel has fewer than 2 buckets.
    #[error("timer wheel size must be at least 2, got {0}")]
    InvalidWheelSize(usize),
}

struct Shared {
    time: Arc<dyn Time>,
    wheels: Arc<Wheels>,
}

/// A hierarchical timing wheel on a [`Time`] (Kafka's `SystemTimer`),
/// `Send + Sync` and cheap to clone (clones share the wheels).
///
/// Unlike Kafka's, it runs expired tasks on the thread that drives it (no
/// executor thread), so a mock clock gives the same runs in the same order
/// every time.
#[derive(Clone)]
pub struct Timer {
    shared: Arc<Shared>,
}

/// A reference to a timer's wheels, kept by tasks that cancel themselves.
/// It does not keep the timer alive (a strong one would keep the timer
/// and its tasks alive in a cycle): when the last [`Timer`] clone is
/// dropped, its waiting tasks are dropped and cancelling returns false.
/// Unlike a `Weak`, cancelling through it needs no upgrade of a count
/// shared by every thread.
#[derive(Clone)]
pub(crate) struct WeakTimer(Arc<Wheels>);

impl WeakTimer {
    /// Cancels `handle` if the timer is still alive.
    pub(crate) fn cancel(&self, handle: TimerHandle) -> bool {
        self.0.cancel(handle)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Breaks the cycle wheels -> task -> WeakTimer -> wheels.
        self.wheels.clear();
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Timer>();
};

impl Timer {
    /// A timer with Kafka's shape (1 ms tick, 20 buckets), its first wheel
    /// starting at the clock's current time.
    pub fn new(time: Arc<dyn Time>) -> Self {
        let start = time.milliseconds();
        Self::build(time, TimerConfig::default(), start)
    }

    /// A timer of another shape (Kafka's tests use a wheel size of 3).
    ///
    /// # Errors
    /// [`TimerError::InvalidTick`] for a tick below 1 ms and
    /// [`TimerError::InvalidWheelSize`] for fewer than 2 buckets.
    pub fn with_config(time: Arc<dyn Time>, config: TimerConfig) -> Result<Self, TimerError> {
        if config.tick_ms < 1 {
            return Err(TimerError::InvalidTick(config.tick_ms));
        }
        if config.wheel_size < 2 {
            return Err(TimerError::InvalidWheelSize(config.wheel_size));
        }
        let start = time.milliseconds();
        Ok(Self::build(time, config, start))
    }

    fn build(time: Arc<dyn Time>, config: TimerConfig, start_ms: i64) -> Self {
        Self {
            shared: Arc::new(Shared {
                time,
                wheels: Arc::new(Wheels::new(config.tick_ms, config.wheel_size, start_ms)),
            }),
        }
    }

    /// The timer's clock.
    pub fn time(&self) -> &Arc<dyn Time> {
        &self.shared.time
    }

    pub(crate) fn downgrade(&self) -> WeakTimer {
        WeakTimer(Arc::clone(&self.shared.wheels))
    }

    /// Adds `task` to run `delay_ms` from now (the clock's time). Returns
    /// its handle, or `None` if its time had already come (a delay of 0 or
    /// less, or within the current tick): then it has already run, on this
    /// thread, before `add` returns. Expirations are capped at about 146
    /// million years.
    pub fn add(&self, task: Arc<dyn TimerTask>, delay_ms: i64) -> Option<TimerHandle> {
        let expiration = self.shared.time.milliseconds().saturating_add(delay_ms);
        self.add_at(task, expiration)
    }

    /// Adds `task` to run at the absolute time `expiration_ms`, as
    /// [`Timer::add`].
    pub fn add_at(&self, task: Arc<dyn TimerTask>, expiration_ms: i64) -> Option<TimerHandle> {
        match self.shared.wheels.add(task, expiration_ms) {
            Ok(handle) => Some(handle),
            Err(task) => {
                task.run();
                None
            }
        }
    }

    /// Removes a waiting task so that it never runs; true if it was waiting
    /// (false if it already ran, was cancelled, or is running now). Takes
    /// the read lock and the task's bucket's lock only.
    pub fn cancel(&self, handle: TimerHandle) -> bool {
        self.shared.wheels.cancel(handle)
    }

    /// The number of tasks waiting (Kafka's `size`, the purgatory's
    /// `NumDelayedOperations`).
    pub fn size(&self) -> usize {
        self.shared.wheels.size()
    }

    /// The wheels created so far, finest first.
    pub fn levels(&self) -> Vec<WheelLevel> {
        self.shared.wheels.levels()
    }

    /// The expiration of the earliest bucket with tasks (its start: tasks
    /// in it expire at or after it).
    pub fn next_expiration_ms(&self) -> Option<i64> {
        self.shared.wheels.next_expiration()
    }

    /// Kafka's `SystemTimer.advanceClock`: if a bucket is due, expires
    /// every due bucket (under the write lock), runs the tasks whose time
    /// has come (in order, on this thread, outside the timer's locks) and
    /// returns true. Otherwise waits up to `timeout_ms` for a bucket to
    /// come due, then does the same; false if none did.
    ///
    /// Waiting on a mock clock ([`Time::sleep_moves_clock`]) moves it: to
    /// the next bucket's expiration if that is within `timeout_ms`, else by
    /// `timeout_ms`. On a real clock the thread sleeps, woken early when an
    /// earlier bucket is added or by [`Timer::wake`]. `advance_clock(0)`
    /// only runs what is due now.
    pub fn advance_clock(&self, timeout_ms: i64) -> bool {
        let time = &self.shared.time;
        let wheels = &self.shared.wheels;
        let start = time.milliseconds();
        let deadline = start.saturating_add(timeout_ms.max(0));
        let mut queue = lock(&wheels.queue);
        let epoch = queue.wake_epoch;
        loop {
            let now = time.milliseconds();
            if queue.next_expiration().is_some_and(|e| e <= now) {
                drop(queue);
                let mut due = Vec::new();
                if wheels.expire_due(now, &mut due) {
                    for task in due {
                        task.run();
                    }
                    return true;
                }
                // Another thread expired it first: look again.
                queue = lock(&wheels.queue);
                continue;
            }
            if now >= deadline || queue.wake_epoch != epoch {
                return false;
            }
            let until = queue
                .next_expiration()
                .map_or(deadline, |e| e.min(deadline));
            let wait = until.saturating_sub(now).max(1);
            if time.sleep_moves_clock() {
                drop(queue);
                time.sleep(wait);
                queue = lock(&wheels.queue);
            } else {
                queue.waiters += 1;
                let millis = u64::try_from(wait).unwrap_or(u64::MAX);
                queue = wheels
                    .changed
                    .wait_timeout(queue, Duration::from_millis(millis))
                    .map(|(guard, _)| guard)
                    .unwrap_or_else(|poisoned| poisoned.into_inner().0);
                queue.waiters -= 1;
            }
        }
    }

    /// Wakes every thread waiting in [`Timer::advance_clock`]; they return
    /// (false unless something came due). For shutting a reaper down.
    pub fn wake(&self) {
        let mut queue = lock(&self.shared.wheels.queue);
        queue.wake_epoch = queue.wake_epoch.wrapping_add(1);
        self.shared.wheels.changed.notify_all();
    }
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer")
            .field("size", &self.size())
            .field("levels", &self.levels())
            .finish()
    }
}
