//! Time: the windows records are grouped into, and windowed keys.
//!
//! The layer above serdes and below everything that keeps or processes
//! records in windows: the window stores (`state`) and the windowed
//! operators of the DSL (`dsl`). Two files, two ideas:
//! - `windows.rs`: window *definitions*, Kafka's `Windows` classes:
//!   [`TimeWindows`] (tumbling and hopping), [`SlidingWindows`] and
//!   [`SessionWindows`], each with its grace period.
//! - `windowed_key.rs`: one window and a key in it: [`Window`],
//!   [`Windowed`] and its serde, [`WindowedSerde`].
//!
//! Every type is also exported from [`crate::dsl`] and the crate root, where
//! the DSL uses them.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::time::{TimeWindows, Window, Windowed};
//!
//! let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
//! let [window] = windows.windows_for(12)[..] else { unreachable!() };
//! assert_eq!(window, Window::new(10, 20));
//! assert_eq!(Windowed::new("k", window).to_string(), "[k@10/20]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod windowed_key;
mod windows;

pub(crate) use windowed_key::read_i64;
pub use windowed_key::{Window, Windowed, WindowedSerde};
pub use windows::{SessionWindows, SlidingWindows, TimeWindows};

use std::time::Duration;

use crate::error::{Result, StreamsError};

/// Milliseconds of a duration, or an error naming what it was for when it
/// does not fit in an `i64` (Kafka's `validateMillisecondDuration`).
pub(crate) fn millis(d: Duration, what: &'static str) -> Result<i64> {
    i64::try_from(d.as_millis()).map_err(|_| StreamsError::DurationTooLarge { what, duration: d })
}
