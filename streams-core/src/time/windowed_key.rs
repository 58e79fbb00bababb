//! Windowed keys: [`Window`], [`Windowed`] and their serde, [`WindowedSerde`].
//!
//! A windowed aggregation's result table is keyed by [`Windowed<K>`]: the
//! record key and the window it was aggregated in. Windows are half-open
//! `[start, end)` for time windows (a record at exactly `end` belongs to
//! the next window) and closed `[start, end]` for sliding and session
//! windows, as in Kafka; the struct is the same for all three.
//!
//! On a topic, a windowed key is written as Kafka's `TimeWindowedSerde`
//! writes it (the inner key's bytes, then the window start as 8 bytes
//! big-endian) or as its `SessionWindowedSerde` does (inner key, window
//! end, window start). A time-windowed key does not carry its end, so it is
//! read back with the window size it was written with
//! ([`WindowedSerde::time_with_size`]), or with an end of `i64::MAX` when
//! the size is not known ([`WindowedSerde::time`]), as Kafka reads it.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{Window, Windowed, WindowedSerde};
//! use streams_core::serde::{Serde, StringSerde};
//!
//! let key = Windowed::new("alice".to_string(), Window::new(300_000, 600_000));
//! assert_eq!(key.to_string(), "[alice@300000/600000]");
//! let serde = WindowedSerde::time_with_size(StringSerde, Duration::from_secs(300));
//! let bytes = serde.serialize("out", &key)?;
//! assert_eq!(bytes, [&b"alice"[..], &300_000_i64.to_be_bytes()].concat());
//! assert_eq!(serde.deserialize("out", &bytes)?, key);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::serde::{Serde, SerdeError, SerdeRef};

/// A window: its start and end, in epoch milliseconds, Kafka's `Window`
/// (`TimeWindow` and `SessionWindow` alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Window {
    /// The start, inclusive.
    pub start: i64,
    /// The end: exclusive for time windows, inclusive for sliding and
    /// session windows.
    pub end: i64,
}

impl Window {
    /// The window from `start` to `end`.
    pub const fn new(start: i64, end: i64) -> Self {
        Window { start, end }
    }

    /// The time window of `size_ms` starting at `start`; an end past
    /// `i64::MAX` is cut to `i64::MAX`, as Kafka's `timeWindowForSize`.
    pub const fn of_size(start: i64, size_ms: i64) -> Self {
        Window {
            start,
            end: start.saturating_add(size_ms),
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{},{})", self.start, self.end)
    }
}

/// A key and the window it belongs to, Kafka's `Windowed<K>`: the key of
/// a windowed aggregation's result table.
///
/// Displays as Kafka's `Windowed.toString()` does, `[key@start/end]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Windowed<K> {
    /// The record key.
    pub key: K,
    /// The window.
    pub window: Window,
}

impl<K> Windowed<K> {
    /// `key` in `window`.
    pub const fn new(key: K, window: Window) -> Self {
        Windowed { key, window }
    }
}

impl<K: fmt::Display> fmt::Display for Windowed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}@{}/{}]",
            self.key, self.window.start, self.window.end
        )
    }
}

const TIMESTAMP_SIZE: usize = 8;

/// Reads a big-endian `i64` at `at`, if the bytes are there.
pub(crate) fn read_i64(bytes: &[u8], at: usize) -> Option<i64> {
    let end = at.checked_add(TIMESTAMP_SIZE)?;
    let arr: [u8; TIMESTAMP_SIZE] = bytes.get(at..end)?.try_into().ok()?;
    Some(i64::from_be_bytes(arr))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Key, start; the end is `start + size` (`None`: `i64::MAX`).
    Time { size_ms: Option<i64> },
    /// Key, end, start.
    Session,
}

/// The serde of windowed keys, Kafka's `WindowedSerdes`: a time-windowed
/// key is `inner key ++ start` (8 bytes big-endian), a session-windowed
/// key is `inner key ++ end ++ start`.
///
/// ```
/// use streams_core::dsl::{Window, Windowed, WindowedSerde};
/// use streams_core::serde::{Serde, StringSerde};
///
/// let serde = WindowedSerde::session(StringSerde);
/// let key = Windowed::new("k".to_string(), Window::new(1, 2));
/// let bytes = serde.serialize("t", &key)?;
/// assert_eq!(bytes, [&b"k"[..], &2_i64.to_be_bytes(), &1_i64.to_be_bytes()].concat());
/// assert_eq!(serde.deserialize("t", &bytes)?, key);
/// assert!(serde.deserialize("t", b"short").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WindowedSerde<K> {
    inner: SerdeRef<K>,
    layout: Layout,
}

impl<K> Clone for WindowedSerde<K> {
    fn clone(&self) -> Self {
        WindowedSerde {
            inner: self.inner.clone(),
            layout: self.layout,
        }
    }
}

impl<K> fmt::Debug for WindowedSerde<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowedSerde")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl<K: 'static> WindowedSerde<K> {
    /// Time-windowed keys whose window size is not known: they read back
    /// with an end of `i64::MAX`, as Kafka's `TimeWindowedDeserializer`
    /// without a window size.
    pub fn time(inner: impl Serde<K>) -> Self {
        WindowedSerde {
            inner: Arc::new(inner),
            layout: Layout::Time { size_ms: None },
        }
    }

    /// Time-windowed keys of windows of `size`: they read back with an end
    /// of `start + size`, as Kafka's `timeWindowedSerdeFrom(type, size)`.
    pub fn time_with_size(inner: impl Serde<K>, size: Duration) -> Self {
        Self::time_with_size_ms(Arc::new(inner), duration_ms(size))
    }

    pub(crate) fn time_with_size_ms(inner: SerdeRef<K>, size_ms: i64) -> Self {
        WindowedSerde {
            inner,
            layout: Layout::Time {
                size_ms: Some(size_ms),
            },
        }
    }

    /// Session-windowed keys, Kafka's `SessionWindowedSerde`.
    pub fn session(inner: impl Serde<K>) -> Self {
        Self::session_ref(Arc::new(inner))
    }

    pub(crate) fn session_ref(inner: SerdeRef<K>) -> Self {
        WindowedSerde {
            inner,
            layout: Layout::Session,
        }
    }
}

impl<K: 'static> Serde<Windowed<K>> for WindowedSerde<K> {
    fn serialize(&self, topic: &str, value: &Windowed<K>) -> Result<Vec<u8>, SerdeError> {
        let mut bytes = self.inner.serialize(topic, &value.key)?;
        match self.layout {
            Layout::Time { .. } => bytes.extend_from_slice(&value.window.start.to_be_bytes()),
            Layout::Session => {
                bytes.extend_from_slice(&value.window.end.to_be_bytes());
                bytes.extend_from_slice(&value.window.start.to_be_bytes());
            }
        }
        Ok(bytes)
    }

    fn serialize_base_key(
        &self,
        topic: &str,
        value: &Windowed<K>,
    ) -> Option<Result<Vec<u8>, SerdeError>> {
        Some(self.inner.serialize(topic, &value.key))
    }

    fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<Windowed<K>, SerdeError> {
        let suffix = match self.layout {
            Layout::Time { .. } => TIMESTAMP_SIZE,
            Layout::Session => 2 * TIMESTAMP_SIZE,
        };
        let Some(key_len) = bytes.len().checked_sub(suffix) else {
            return Err(SerdeError::new(format!(
                "a windowed key needs at least {suffix} bytes for its window, but got {}",
                bytes.len()
            )));
        };
        let key = self.inner.deserialize(topic, &bytes[..key_len])?;
        let window = match self.layout {
            Layout::Time { size_ms } => {
                let start = read_i64(bytes, key_len).unwrap_or_default();
                Window::of_size(start, size_ms.unwrap_or(i64::MAX))
            }
            Layout::Session => Window::new(
                read_i64(bytes, key_len + TIMESTAMP_SIZE).unwrap_or_default(),
                read_i64(bytes, key_len).unwrap_or_default(),
            ),
        };
        Ok(Windowed::new(key, window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::{I64Serde, StringSerde};

    #[test]
    fn time_windowed_keys_use_kafkas_layout() {
        let key = Windowed::new(7_i64, Window::new(5, 15));
        let serde = WindowedSerde::time_with_size(I64Serde, Duration::from_millis(10));
        let bytes = serde.serialize("t", &key).unwrap_or_default();
        assert_eq!(bytes, [7_i64.to_be_bytes(), 5_i64.to_be_bytes()].concat());
        assert_eq!(serde.deserialize("t", &bytes).ok(), Some(key));
        // Without a size the end is Long.MAX_VALUE, as Kafka reads it.
        let unsized_ = WindowedSerde::time(I64Serde);
        assert_eq!(
            unsized_.deserialize("t", &bytes).ok(),
            Some(Windowed::new(7, Window::new(5, i64::MAX)))
        );
    }

    #[test]
    fn short_or_bad_bytes_are_errors() {
        let serde = WindowedSerde::time(StringSerde);
        assert!(serde.deserialize("t", &[1, 2, 3]).is_err());
        let mut bad = vec![0xff];
        bad.extend_from_slice(&0_i64.to_be_bytes());
        assert!(serde.deserialize("t", &bad).is_err());
    }

    #[test]
    fn display_is_kafkas() {
        let w = Windowed::new("k1", Window::new(0, 2));
        assert_eq!(w.to_string(), "[k1@0/2]");
        assert_eq!(Window::new(0, 10).to_string(), "[0,10)");
        assert_eq!(Window::of_size(5, i64::MAX).end, i64::MAX);
    }
}
