//! The purgatory's synchronisation primitives: std's, or loom's when the
//! crate's tests are built with `--cfg loom` (so that loom explores every
//! interleaving of the real completion and watch code).

#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(all(loom, test))]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::{Mutex, MutexGuard};

use std::sync::PoisonError;

/// Locks `mutex`, ignoring poisoning (a panicking callback must not make
/// the purgatory unusable).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
