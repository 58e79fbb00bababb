//! Window definitions: [`TimeWindows`] (tumbling and hopping),
//! [`SlidingWindows`] and [`SessionWindows`], as Kafka's.
//!
//! Every window definition has a *grace period*: how long after a window
//! ends it still accepts out-of-order records. A window is *closed* once
//! stream time reaches its end plus the grace period; later records for it
//! are dropped and counted in the task's `dropped_records` metric.
//!
//! Time windows are aligned to the epoch: a window of size `s` advancing
//! by `a` starts at multiples of `a`, and covers `[start, start + s)`, so
//! that a record exactly at a window's end belongs to the next window.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{TimeWindows, Window};
//!
//! let tumbling = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
//! assert_eq!(tumbling.windows_for(10), [Window::new(10, 20)]);
//! let hopping = tumbling.advance_by(Duration::from_millis(5))?;
//! assert_eq!(hopping.windows_for(12), [Window::new(5, 15), Window::new(10, 20)]);
//! assert!(matches!(
//!     TimeWindows::of_size_with_no_grace(Duration::ZERO),
//!     Err(streams_core::StreamsError::WindowSizeNotPositive { size_ms: 0 })
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

use super::{Window, millis};
use crate::error::{Result, StreamsError};

/// Fixed-size windows aligned to the epoch, Kafka's `TimeWindows`:
/// tumbling when they advance by their size (the default), hopping when
/// they advance by less.
///
/// A window of size `s` advancing by `a` starts at a multiple of `a` and
/// covers `[start, start + s)`: a record exactly at a window's end belongs
/// to the next window. A window is *closed* once stream time reaches its
/// end plus the grace period; later records for it are dropped and counted
/// in the task's `dropped_records` metric.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{TimeWindows, Window};
///
/// let tumbling = TimeWindows::of_size_and_grace(Duration::from_millis(10), Duration::from_millis(2))?;
/// assert_eq!(tumbling.windows_for(10), [Window::new(10, 20)]);
/// assert_eq!(tumbling.grace_ms(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeWindows {
    size_ms: i64,
    advance_ms: i64,
    grace_ms: i64,
}

impl TimeWindows {
    fn new(size_ms: i64, advance_ms: i64, grace_ms: i64) -> Result<Self> {
        if size_ms <= 0 {
            return Err(StreamsError::WindowSizeNotPositive { size_ms });
        }
        if advance_ms <= 0 || advance_ms > size_ms {
            return Err(StreamsError::WindowAdvanceOutOfRange {
                size_ms,
                advance_ms,
            });
        }
        Ok(TimeWindows {
            size_ms,
            advance_ms,
            grace_ms,
        })
    }

    /// Tumbling windows of `size` that close as soon as they end, Kafka's
    /// `ofSizeWithNoGrace`.
    ///
    /// # Errors
    /// A zero size, or one too large for milliseconds in an `i64`.
    pub fn of_size_with_no_grace(size: Duration) -> Result<Self> {
        Self::of_size_and_grace(size, Duration::ZERO)
    }

    /// Tumbling windows of `size` that accept records up to `grace` after
    /// they end, Kafka's `ofSizeAndGrace`.
    ///
    /// # Errors
    /// A zero size, or a duration too large for milliseconds in an `i64`.
    pub fn of_size_and_grace(size: Duration, grace: Duration) -> Result<Self> {
        let size_ms = millis(size, "window size")?;
        let grace_ms = millis(grace, "grace period")?;
        Self::new(size_ms, size_ms, grace_ms)
    }

    /// The same windows advancing by `advance`: hopping windows when it is
    /// less than the size, Kafka's `advanceBy`.
    ///
    /// # Errors
    /// An advance of zero or larger than the window size.
    pub fn advance_by(self, advance: Duration) -> Result<Self> {
        let advance_ms = millis(advance, "window advance")?;
        Self::new(self.size_ms, advance_ms, self.grace_ms)
    }

    /// The window size, in milliseconds.
    pub fn size_ms(&self) -> i64 {
        self.size_ms
    }

    /// How far windows advance, in milliseconds.
    pub fn advance_ms(&self) -> i64 {
        self.advance_ms
    }

    /// The grace period, in milliseconds.
    pub fn grace_ms(&self) -> i64 {
        self.grace_ms
    }

    /// The windows a record at `timestamp` belongs to, by start, Kafka's
    /// `windowsFor`: each `[start, start + size)` with `start` a multiple of
    /// the advance, `start <= timestamp < start + size`.
    pub fn windows_for(&self, timestamp: i64) -> Vec<Window> {
        let first = timestamp
            .saturating_sub(self.size_ms)
            .saturating_add(self.advance_ms)
            .max(0);
        let mut start = first / self.advance_ms * self.advance_ms;
        let mut windows = Vec::new();
        while start <= timestamp {
            windows.push(Window::of_size(start, self.size_ms));
            match start.checked_add(self.advance_ms) {
                Some(next) => start = next,
                None => break,
            }
        }
        windows
    }
}

/// Windows of a fixed maximum time difference between records, Kafka's
/// `SlidingWindows`: a window `[start, start + difference]` (both ends
/// inclusive) exists for each distinct set of records that fall within
/// the difference of each other.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::SlidingWindows;
///
/// let w = SlidingWindows::of_time_difference_and_grace(Duration::from_millis(10), Duration::from_millis(5))?;
/// assert_eq!((w.time_difference_ms(), w.grace_ms()), (10, 5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlidingWindows {
    time_difference_ms: i64,
    grace_ms: i64,
}

impl SlidingWindows {
    /// Sliding windows that close as soon as they end, Kafka's
    /// `ofTimeDifferenceWithNoGrace`.
    ///
    /// # Errors
    /// A duration too large for milliseconds in an `i64`.
    pub fn of_time_difference_with_no_grace(time_difference: Duration) -> Result<Self> {
        Self::of_time_difference_and_grace(time_difference, Duration::ZERO)
    }

    /// Sliding windows that accept records up to `grace` after they end,
    /// Kafka's `ofTimeDifferenceAndGrace`.
    ///
    /// # Errors
    /// A duration too large for milliseconds in an `i64`.
    pub fn of_time_difference_and_grace(
        time_difference: Duration,
        grace: Duration,
    ) -> Result<Self> {
        Ok(SlidingWindows {
            time_difference_ms: millis(time_difference, "window time difference")?,
            grace_ms: millis(grace, "grace period")?,
        })
    }

    /// The largest time difference between records of one window, in
    /// milliseconds (also the window's size).
    pub fn time_difference_ms(&self) -> i64 {
        self.time_difference_ms
    }

    /// The grace period, in milliseconds.
    pub fn grace_ms(&self) -> i64 {
        self.grace_ms
    }
}

/// Windows of activity separated by gaps of inactivity, Kafka's
/// `SessionWindows`: records of one key closer than the gap to each other
/// form one session `[first, last]`, and a record that bridges two
/// sessions merges them.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::SessionWindows;
///
/// let w = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_secs(300))?;
/// assert_eq!((w.inactivity_gap_ms(), w.grace_ms()), (300_000, 0));
/// assert!(matches!(
///     SessionWindows::of_inactivity_gap_with_no_grace(Duration::ZERO),
///     Err(streams_core::StreamsError::InactivityGapNotPositive { gap_ms: 0 })
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionWindows {
    gap_ms: i64,
    grace_ms: i64,
}

impl SessionWindows {
    /// Sessions that close as soon as the gap after them has passed,
    /// Kafka's `ofInactivityGapWithNoGrace`.
    ///
    /// # Errors
    /// A zero gap, or one too large for milliseconds in an `i64`.
    pub fn of_inactivity_gap_with_no_grace(gap: Duration) -> Result<Self> {
        Self::of_inactivity_gap_and_grace(gap, Duration::ZERO)
    }

    /// Sessions that accept records up to `grace` after the gap after them
    /// has passed, Kafka's `ofInactivityGapAndGrace`.
    ///
    /// # Errors
    /// A zero gap, or a duration too large for milliseconds in an `i64`.
    pub fn of_inactivity_gap_and_grace(gap: Duration, grace: Duration) -> Result<Self> {
        let gap_ms = millis(gap, "inactivity gap")?;
        if gap_ms <= 0 {
            return Err(StreamsError::InactivityGapNotPositive { gap_ms });
        }
        Ok(SessionWindows {
            gap_ms,
            grace_ms: millis(grace, "grace period")?,
        })
    }

    /// The inactivity gap, in milliseconds.
    pub fn inactivity_gap_ms(&self) -> i64 {
        self.gap_ms
    }

    /// The grace period, in milliseconds.
    pub fn grace_ms(&self) -> i64 {
        self.grace_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    // Kafka's TimeWindowsTest.
    #[test]
    fn should_compute_windows_for_hopping_windows() -> Result<()> {
        let windows = TimeWindows::of_size_with_no_grace(ms(12))?.advance_by(ms(5))?;
        assert_eq!(
            windows.windows_for(21),
            [
                Window::new(10, 22),
                Window::new(15, 27),
                Window::new(20, 32)
            ]
        );
        Ok(())
    }

    #[test]
    fn should_compute_windows_for_barely_overlapping_hopping_windows() -> Result<()> {
        let windows = TimeWindows::of_size_with_no_grace(ms(6))?.advance_by(ms(5))?;
        assert_eq!(windows.windows_for(7), [Window::new(5, 11)]);
        Ok(())
    }

    #[test]
    fn should_compute_windows_for_tumbling_windows() -> Result<()> {
        let windows = TimeWindows::of_size_with_no_grace(ms(12))?;
        assert_eq!(windows.windows_for(21), [Window::new(12, 24)]);
        // A record exactly at a window's end belongs to the next window.
        assert_eq!(windows.windows_for(24), [Window::new(24, 36)]);
        assert_eq!(windows.windows_for(23), [Window::new(12, 24)]);
        assert_eq!(windows.windows_for(0), [Window::new(0, 12)]);
        Ok(())
    }

    #[test]
    fn invalid_windows_are_errors() {
        use crate::StreamsError;
        assert!(matches!(
            TimeWindows::of_size_with_no_grace(Duration::ZERO),
            Err(StreamsError::WindowSizeNotPositive { size_ms: 0 })
        ));
        assert!(matches!(
            TimeWindows::of_size_with_no_grace(ms(10)).and_then(|w| w.advance_by(Duration::ZERO)),
            Err(StreamsError::WindowAdvanceOutOfRange {
                size_ms: 10,
                advance_ms: 0
            })
        ));
        assert!(matches!(
            TimeWindows::of_size_with_no_grace(ms(10)).and_then(|w| w.advance_by(ms(11))),
            Err(StreamsError::WindowAdvanceOutOfRange {
                size_ms: 10,
                advance_ms: 11
            })
        ));
        assert!(matches!(
            TimeWindows::of_size_with_no_grace(Duration::MAX),
            Err(StreamsError::DurationTooLarge {
                what: "window size",
                duration: Duration::MAX
            })
        ));
        assert!(matches!(
            SessionWindows::of_inactivity_gap_with_no_grace(Duration::ZERO),
            Err(StreamsError::InactivityGapNotPositive { gap_ms: 0 })
        ));
        assert!(SlidingWindows::of_time_difference_with_no_grace(Duration::ZERO).is_ok());
    }

    #[test]
    fn grace_is_kept() -> Result<()> {
        let w = TimeWindows::of_size_and_grace(ms(10), ms(3))?.advance_by(ms(5))?;
        assert_eq!((w.size_ms(), w.advance_ms(), w.grace_ms()), (10, 5, 3));
        Ok(())
    }
}
