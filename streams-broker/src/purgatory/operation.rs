//! A delayed operation: the user's [`DelayedOperation`] inside a
//! [`Delayed`], which holds Kafka's completed flag, the operation's lock
//! and its timer entry.

use std::fmt;
use std::sync::Arc;

use super::sync::{AtomicBool, Mutex, Ordering, lock};
use crate::timer::{Timer, TimerHandle, TimerTask, WeakTimer};

/// What a delayed request does (Kafka's abstract `DelayedOperation`): a
/// delayed produce waiting for its acks, a delayed fetch for its bytes.
///
/// The purgatory calls these through [`Delayed`], which makes sure that
/// [`on_complete`](DelayedOperation::on_complete) runs exactly once and
/// [`on_expiration`](DelayedOperation::on_expiration) at most once, after
/// it.
pub trait DelayedOperation: Send + Sync + 'static {
    /// Whether the operation can complete now. Called under the
    /// operation's lock (never by two threads at once), by
    /// [`Purgatory::try_complete_else_watch`](super::Purgatory::try_complete_else_watch)
    /// (twice: before and after watching) and by
    /// [`Purgatory::check_and_complete`](super::Purgatory::check_and_complete)
    /// for every key it is watched under. Returning true completes it (if
    /// no other thread did first). It must not call into the purgatory
    /// for a key this operation is watched under.
    fn try_complete(&self) -> bool;

    /// The completion: build the response. Runs exactly once, whether the
    /// operation completed or expired, on the thread that completed it.
    fn on_complete(&self);

    /// Runs after [`DelayedOperation::on_complete`] when the operation was
    /// completed by its expiration (Kafka's metrics hook: expired
    /// requests).
    fn on_expiration(&self);
}

/// The completed flag: set once, by the one thread that wins.
pub(crate) struct CompletionFlag(AtomicBool);

impl CompletionFlag {
    pub(crate) fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// Sets the flag; true for the one caller that set it.
    pub(crate) fn claim(&self) -> bool {
        self.0
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub(crate) fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

struct TimerLink {
    timer: WeakTimer,
    handle: TimerHandle,
}

/// A [`DelayedOperation`] with its deadline and state: the completed flag
/// (atomic), the lock `try_complete` runs under, and its timer entry.
/// Shared as `Arc<Delayed<O>>` between the caller, the purgatory's watcher
/// lists and the timer.
///
/// ```
/// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
/// use streams_broker::purgatory::{Delayed, DelayedOperation};
///
/// #[derive(Default)]
/// struct Op { ready: AtomicBool, completions: AtomicUsize, expirations: AtomicUsize }
/// impl DelayedOperation for Op {
///     fn try_complete(&self) -> bool { self.ready.load(Ordering::SeqCst) }
///     fn on_complete(&self) { self.completions.fetch_add(1, Ordering::SeqCst); }
///     fn on_expiration(&self) { self.expirations.fetch_add(1, Ordering::SeqCst); }
/// }
///
/// let op = Delayed::new(Op::default(), 30_000);
/// assert!(!op.try_complete()); // not ready
/// op.operation().ready.store(true, Ordering::SeqCst);
/// assert!(op.try_complete()); // this caller completed it
/// assert!(!op.force_complete()); // only once
/// assert!(!op.expire()); // too late to expire
/// assert_eq!(op.operation().completions.load(Ordering::SeqCst), 1);
/// assert_eq!(op.operation().expirations.load(Ordering::SeqCst), 0);
/// ```
pub struct Delayed<O> {
    operation: O,
    delay_ms: i64,
    completed: CompletionFlag,
    lock: Mutex<()>,
    timer: Mutex<Option<TimerLink>>,
}

impl<O: DelayedOperation> Delayed<O> {
    /// `operation`, to expire `delay_ms` after it is added to a purgatory's
    /// timer.
    pub fn new(operation: O, delay_ms: i64) -> Arc<Self> {
        Arc::new(Self {
            operation,
            delay_ms,
            completed: CompletionFlag::new(),
            lock: Mutex::new(()),
            timer: Mutex::new(None),
        })
    }

    /// The operation.
    pub fn operation(&self) -> &O {
        &self.operation
    }

    /// The delay before it expires, from when it is added to the timer.
    pub fn delay_ms(&self) -> i64 {
        self.delay_ms
    }

    /// Its deadline, once a purgatory's timer holds it (the time it was
    /// added plus its delay); `None` before, or after it was cancelled.
    pub fn deadline_ms(&self) -> Option<i64> {
        lock(&self.timer)
            .as_ref()
            .map(|link| link.handle.expiration_ms())
    }

    /// Whether it has completed (by [`Delayed::force_complete`], by a
    /// successful try, or by expiring).
    pub fn is_completed(&self) -> bool {
        self.completed.is_set()
    }

    /// Completes it if nobody has: sets the completed flag atomically,
    /// takes it out of the timer and runs
    /// [`DelayedOperation::on_complete`]. True only for the one caller that
    /// completed it; every other call, from any thread, returns false.
    pub fn force_complete(&self) -> bool {
        if self.completed.claim() {
            self.cancel();
            self.operation.on_complete();
            true
        } else {
            false
        }
    }

    /// Asks [`DelayedOperation::try_complete`] (unless already completed)
    /// and, if it can, completes it: true if this call completed it. Does
    /// not take the operation's lock (the purgatory's calls do).
    pub fn try_complete(&self) -> bool {
        !self.is_completed() && self.operation.try_complete() && self.force_complete()
    }

    /// The expiry (Kafka's `run` of the timer task):
    /// [`Delayed::force_complete`], then, if that completed it,
    /// [`DelayedOperation::on_expiration`]. True if it expired.
    pub fn expire(&self) -> bool {
        if self.force_complete() {
            self.operation.on_expiration();
            true
        } else {
            false
        }
    }

    /// Takes it out of its timer without completing it (Kafka's
    /// `TimerTask.cancel`; the purgatory's `cancel_for_key` uses it): it
    /// will not expire, and no callback runs.
    pub fn cancel(&self) {
        if let Some(link) = lock(&self.timer).take() {
            link.timer.cancel(link.handle);
        }
    }

    /// [`Delayed::try_complete`] under the operation's lock.
    pub(crate) fn safe_try_complete(&self) -> bool {
        let _guard = lock(&self.lock);
        self.try_complete()
    }

    /// Under the operation's lock: try; if not completed, run `watch` and
    /// try again (Kafka's `safeTryCompleteOrElse`), so a completion that
    /// becomes possible while `watch` runs is not missed.
    pub(crate) fn safe_try_complete_or_else(&self, watch: impl FnOnce()) -> bool {
        let _guard = lock(&self.lock);
        if self.try_complete() {
            return true;
        }
        watch();
        self.try_complete()
    }

    /// Whether its lock is held (for tests of what runs under it).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn is_locked(&self) -> bool {
        self.lock.try_lock().is_err()
    }
}

impl<O: DelayedOperation> Delayed<O> {
    /// Adds it to `timer` (replacing an earlier entry); if it completed
    /// meanwhile, takes it out again (Kafka's check after `timer.add`).
    pub(crate) fn add_to_timer(self: &Arc<Self>, timer: &Timer) {
        self.cancel();
        let task: Arc<dyn TimerTask> = self.clone();
        if let Some(handle) = timer.add(task, self.delay_ms) {
            *lock(&self.timer) = Some(TimerLink {
                timer: timer.downgrade(),
                handle,
            });
            if self.is_completed() {
                self.cancel();
            }
        }
    }
}

impl<O: DelayedOperation> TimerTask for Delayed<O> {
    fn run(&self) {
        self.expire();
    }
}

impl<O: fmt::Debug> fmt::Debug for Delayed<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delayed")
            .field("operation", &self.operation)
            .field("delay_ms", &self.delay_ms)
            .field("completed", &self.completed.is_set())
            .finish()
    }
}
