//! Clocks for the timer: [`MockTime`], which only a test moves, and
//! [`RealTime`], a monotonic clock on [`std::time::Instant`].

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// A millisecond clock, as Kafka's `Time` (`hiResClockMs` and `sleep`).
///
/// The [`Timer`](super::Timer) reads it to compute expirations and to know
/// which buckets are due; when it has to wait it either sleeps on its own
/// condition variable (a real clock, [`Time::sleep_moves_clock`] false) or
/// calls [`Time::sleep`], which moves a mock clock forward at once.
pub trait Time: Send + Sync + fmt::Debug {
    /// The current time in milliseconds (monotonic; the origin is the
    /// clock's own).
    fn milliseconds(&self) -> i64;

    /// Sleeps for `ms` milliseconds: a real clock blocks the thread, a mock
    /// clock moves forward by `ms` and returns at once. Non-positive values
    /// return at once.
    fn sleep(&self, ms: i64);

    /// Whether [`Time::sleep`] moves the clock itself (a mock clock), so a
    /// waiter advances time instead of waiting for it. False by default.
    fn sleep_moves_clock(&self) -> bool {
        false
    }
}

/// A mock clock shared by its clones (an `Arc<AtomicI64>`): it stands still
/// until a test calls [`MockTime::advance`], [`MockTime::set`] or
/// [`Time::sleep`], so every expiry happens at an exact, repeatable time.
///
/// ```
/// use streams_broker::timer::{MockTime, Time};
///
/// let time = MockTime::new(1_000);
/// let shared = time.clone();
/// time.advance(5);
/// assert_eq!(shared.milliseconds(), 1_005);
/// shared.sleep(10); // a mock sleep moves the clock
/// assert_eq!(time.milliseconds(), 1_015);
/// ```
#[derive(Clone, Debug, Default)]
pub struct MockTime {
    now_ms: Arc<AtomicI64>,
}

impl MockTime {
    /// A mock clock reading `start_ms`.
    pub fn new(start_ms: i64) -> Self {
        Self::from_shared(Arc::new(AtomicI64::new(start_ms)))
    }

    /// A mock clock reading (and moving) an existing shared counter, for a
    /// caller that keeps its own clock in an `AtomicI64`.
    pub fn from_shared(now_ms: Arc<AtomicI64>) -> Self {
        Self { now_ms }
    }

    /// The shared counter behind this clock.
    pub fn shared(&self) -> &Arc<AtomicI64> {
        &self.now_ms
    }

    /// Moves the clock forward by `ms` (saturating; negative values are
    /// ignored, the clock never goes back this way).
    pub fn advance(&self, ms: i64) {
        let ms = ms.max(0);
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .now_ms
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                Some(now.saturating_add(ms))
            });
    }

    /// Sets the clock to `now_ms` (it may go back: tests of a clock that
    /// jumps use it).
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::Release);
    }
}

impl Time for MockTime {
    fn milliseconds(&self) -> i64 {
        self.now_ms.load(Ordering::Acquire)
    }

    fn sleep(&self, ms: i64) {
        self.advance(ms);
    }

    fn sleep_moves_clock(&self) -> bool {
        true
    }
}

/// A real monotonic clock: milliseconds since it was created, plus a start
/// offset (0 by [`RealTime::new`]).
///
/// ```
/// use streams_broker::timer::{RealTime, Time};
///
/// let time = RealTime::new();
/// let before = time.milliseconds();
/// time.sleep(2);
/// assert!(time.milliseconds() >= before + 2);
/// ```
#[derive(Clone, Debug)]
pub struct RealTime {
    origin: Instant,
    offset_ms: i64,
}

impl RealTime {
    /// A clock reading 0 now.
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// A clock reading `start_ms` now.
    pub fn starting_at(start_ms: i64) -> Self {
        Self {
            origin: Instant::now(),
            offset_ms: start_ms,
        }
    }
}

impl Default for RealTime {
    fn default() -> Self {
        Self::new()
    }
}

impl Time for RealTime {
    fn milliseconds(&self) -> i64 {
        let elapsed = i64::try_from(self.origin.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.offset_ms.saturating_add(elapsed)
    }

    fn sleep(&self, ms: i64) {
        if let Ok(ms) = u64::try_from(ms) {
            std::thread::sleep(Duration::from_millis(ms));
        }
    }
}
