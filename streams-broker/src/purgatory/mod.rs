//! Kafka's delayed-operation purgatory (`DelayedOperationPurgatory`): where
//! a request that cannot be answered yet waits, watched under the keys
//! whose changes may complete it, until one of them does or its timeout
//! expires it.
//!
//! The rules, as Kafka's (core `DelayedOperation.scala`, server-common
//! `purgatory/`):
//!
//! - an operation ([`Delayed`] around a [`DelayedOperation`]) completes
//!   exactly once: [`Delayed::force_complete`] flips an atomic flag, takes
//!   the operation out of the timer and runs `on_complete`; expiry is
//!   `force_complete` then `on_expiration`;
//! - [`Purgatory::try_complete_else_watch`]: under the operation's lock,
//!   try; if not done, watch it under every key and try again (a change
//!   between the two tries finds it watched: no lost wake-up); if still
//!   not done, add it to the timer;
//! - [`Purgatory::check_and_complete`] tries the operations watched under a
//!   key and returns how many it completed; a watcher list that becomes
//!   empty is removed. Completing an operation does not take it off its
//!   other keys' lists: [`Purgatory::advance_clock`] purges completed
//!   operations when the estimated number watched exceeds the delayed ones
//!   by the purge interval (1000);
//! - [`Purgatory::cancel_for_key`] stops watching a key and returns its
//!   operations, neither completed nor expired.
//!
//! The watcher lists are sharded (KAFKA-6431): 512 shards, each behind its
//! own lock, so that threads working on unrelated keys do not serialise.
//! [`PurgatoryConfig::global_lock`] keeps the single lock of the old design
//! (every key behind one mutex), as the benchmark's baseline.
//!
//! Expirations run when the purgatory's clock is driven:
//! [`Purgatory::advance_clock`] (as Kafka's expiration reaper, which calls
//! it with 200 ms in a loop; [`Purgatory::start_reaper`] runs that loop on
//! a thread for a real clock). On a [`MockTime`](crate::timer::MockTime)
//! nothing expires until the test moves the clock.
//!
//! For delayed produce (`acks=all`): an operation per produce request,
//! watched under its partitions' keys, whose `try_complete` checks the high
//! watermark against the required offsets and whose `on_complete` sends the
//! response; the replication code calls `check_and_complete(partition)`
//! when the high watermark moves or leadership changes. For delayed fetch:
//! `try_complete` checks the accumulated bytes against `fetch.min.bytes`,
//! with `fetch.max.wait.ms` as the delay, and appends call
//! `check_and_complete`.
//!
//! The concurrency is tested, not assumed: a seeded stress test (4
//! threads, 10,000 operations, each completed or expired exactly once) and
//! a loom model of the complete/expire race and of the watch/check race
//! (no lost wake-up), run on the real code with loom's primitives:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p streams-broker --lib --release purgatory::loom
//! ```
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
//! use streams_broker::purgatory::{Delayed, DelayedOperation, Purgatory, PurgatoryConfig};
//! use streams_broker::timer::{MockTime, Timer};
//!
//! #[derive(Default)]
//! struct Produce { acked: AtomicBool, completed: AtomicUsize, expired: AtomicUsize }
//! impl DelayedOperation for Produce {
//!     fn try_complete(&self) -> bool { self.acked.load(Ordering::SeqCst) }
//!     fn on_complete(&self) { self.completed.fetch_add(1, Ordering::SeqCst); }
//!     fn on_expiration(&self) { self.expired.fetch_add(1, Ordering::SeqCst); }
//! }
//!
//! let time = MockTime::new(0);
//! let purgatory = Purgatory::new("produce", Timer::new(Arc::new(time.clone())), PurgatoryConfig::default());
//!
//! // Waits under its partition's key until the high watermark moves ...
//! let acked = Delayed::new(Produce::default(), 30_000);
//! assert!(!purgatory.try_complete_else_watch(&acked, &["orders-0"])?);
//! assert_eq!((purgatory.watched(), purgatory.num_delayed()), (1, 1));
//! acked.operation().acked.store(true, Ordering::SeqCst);
//! assert_eq!(purgatory.check_and_complete(&"orders-0"), 1);
//! assert_eq!(purgatory.num_delayed(), 0);
//!
//! // ... or times out: at exactly its deadline, on_complete then on_expiration.
//! let late = Delayed::new(Produce::default(), 30_000);
//! assert!(!purgatory.try_complete_else_watch(&late, &["orders-1"])?);
//! time.advance(29_999);
//! purgatory.advance_clock(0);
//! assert!(!late.is_completed());
//! time.advance(1);
//! purgatory.advance_clock(0);
//! assert_eq!(late.operation().completed.load(Ordering::SeqCst), 1);
//! assert_eq!(late.operation().expired.load(Ordering::SeqCst), 1);
//! # Ok::<(), streams_broker::purgatory::PurgatoryError>(())
//! ```

mod operation;
mod sync;

#[cfg(all(test, loom))]
mod loom_model;
#[cfg(all(test, not(loom)))]
mod tests;

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, Hash};
use std::sync::Arc;
use std::sync::atomic::AtomicBool as StdAtomicBool;
use std::thread::JoinHandle;

pub use operation::{Delayed, DelayedOperation};

use crate::timer::{CachePadded, Timer};
use sync::{AtomicUsize, Mutex, Ordering, lock};

/// Kafka's number of watcher shards.
pub const SHARDS: usize = 512;
/// Kafka's default purge interval: purge when the estimated number of
/// watched operations exceeds the delayed ones by more than this.
pub const DEFAULT_PURGE_INTERVAL: usize = 1000;
/// The timeout Kafka's expiration reaper passes to `advance_clock`.
pub const REAPER_TIMEOUT_MS: i64 = 200;

/// How a [`Purgatory`] keeps its watcher lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PurgatoryConfig {
    /// Watcher shards, each behind its own lock: [`SHARDS`] (512) by
    /// default, 1 for the single global lock of the pre-KAFKA-6431 design.
    /// 0 is taken as 1.
    pub shards: usize,
    /// Completed operations are purged from the watcher lists when the
    /// estimated number watched exceeds the delayed ones by more than this
    /// ([`DEFAULT_PURGE_INTERVAL`]).
    pub purge_interval: usize,
    /// Whether operations that cannot complete go into the timer to expire
    /// (Kafka's `timerEnabled`, true by default); without it they wait
    /// until completed or cancelled.
    pub timer_enabled: bool,
}

impl Default for PurgatoryConfig {
    fn default() -> Self {
        Self {
            shards: SHARDS,
            purge_interval: DEFAULT_PURGE_INTERVAL,
            timer_enabled: true,
        }
    }
}

impl PurgatoryConfig {
    /// Kafka's design: 512 shards (the default).
    pub fn sharded() -> Self {
        Self::default()
    }

    /// The single global lock over every watcher list (before KAFKA-6431):
    /// the benchmark's baseline.
    pub fn global_lock() -> Self {
        Self {
            shards: 1,
            ..Self::default()
        }
    }

    /// The same with `purge_interval`.
    #[must_use]
    pub fn purge_interval(self, purge_interval: usize) -> Self {
        Self {
            purge_interval,
            ..self
        }
    }

    /// The same with the timer enabled or not.
    #[must_use]
    pub fn timer_enabled(self, timer_enabled: bool) -> Self {
        Self {
            timer_enabled,
            ..self
        }
    }
}

/// What the purgatory rejects.
#[derive(Debug, thiserror::Error)]
pub enum PurgatoryError {
    /// `try_complete_else_watch` was given no key to watch (Kafka asserts
    /// the list is not empty).
    #[error("purgatory {purgatory}: the watch key list can't be empty")]
    NoWatchKeys {
        /// The purgatory's name.
        purgatory: String,
    },
    /// The reaper thread could not be started.
    #[error("purgatory {purgatory}: cannot start the expiration reaper: {source}")]
    Reaper {
        /// The purgatory's name.
        purgatory: String,
        /// The spawn error.
        source: std::io::Error,
    },
}

/// The operations watched under one key.
struct Watchers<O> {
    operations: Mutex<Vec<Arc<Delayed<O>>>>,
}

type Shard<K, O> = HashMap<K, Arc<Watchers<O>>, BuildHasherDefault<DefaultHasher>>;

/// Kafka's `DelayedOperationPurgatory`, generic over the watch key `K`
/// (a partition, a group: anything hashable) and the operation `O`.
/// `Send + Sync`: share it behind an `Arc`.
pub struct Purgatory<K, O> {
    name: String,
    /// Each on its own cache lines: two threads locking neighbouring
    /// shards must not contend for one line.
    shards: Box<[CachePadded<Mutex<Shard<K, O>>>]>,
    hasher: BuildHasherDefault<DefaultHasher>,
    timer: Timer,
    estimated_total: AtomicUsize,
    config: PurgatoryConfig,
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    #[allow(dead_code)]
    fn purgatory_is_send_sync<K: Hash + Eq + Clone + Send + Sync, O: DelayedOperation>() {
        send_sync::<Purgatory<K, O>>();
        send_sync::<Delayed<O>>();
    }
};

impl<K, O> Purgatory<K, O>
where
    K: Hash + Eq + Clone + Send + Sync,
    O: DelayedOperation,
{
    /// A purgatory named `name` (for errors and `Debug`) whose operations
    /// expire on `timer`.
    pub fn new(name: impl Into<String>, timer: Timer, config: PurgatoryConfig) -> Self {
        let shards = config.shards.max(1);
        Self {
            name: name.into(),
            shards: (0..shards)
                .map(|_| CachePadded(Mutex::new(HashMap::default())))
                .collect(),
            hasher: BuildHasherDefault::default(),
            timer,
            estimated_total: AtomicUsize::new(0),
            config: PurgatoryConfig { shards, ..config },
        }
    }

    /// The purgatory's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its configuration.
    pub fn config(&self) -> PurgatoryConfig {
        self.config
    }

    /// The timer its operations expire on.
    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    /// The shard of `key`: its SipHash (std's `DefaultHasher`) modulo the
    /// shard count.
    fn shard_index(&self, key: &K) -> usize {
        let hash = self.hasher.hash_one(key);
        // The remainder is below the shard count, so it fits a usize.
        usize::try_from(hash % self.shards.len() as u64).unwrap_or(0)
    }

    fn shard(&self, key: &K) -> &Mutex<Shard<K, O>> {
        &self.shards[self.shard_index(key)]
    }

    /// Tries to complete `operation`; if it cannot complete now, watches it
    /// under every key in `keys` and tries again, and if it still cannot,
    /// adds it to the timer. Returns true if this call completed it.
    ///
    /// Both tries and the watching run under the operation's lock, so a
    /// [`Purgatory::check_and_complete`] on another thread either finds it
    /// watched or its second try sees what that thread changed. If it
    /// completes after being watched under some keys, it stays on those
    /// lists until a check or a purge removes it.
    ///
    /// # Errors
    ///
    /// [`PurgatoryError::NoWatchKeys`] if `keys` is empty (nothing would
    /// ever complete it but its timeout).
    pub fn try_complete_else_watch(
        &self,
        operation: &Arc<Delayed<O>>,
        keys: &[K],
    ) -> Result<bool, PurgatoryError> {
        if keys.is_empty() {
            return Err(PurgatoryError::NoWatchKeys {
                purgatory: self.name.clone(),
            });
        }
        let completed = operation.safe_try_complete_or_else(|| {
            for key in keys {
                self.watch(key, operation);
            }
            self.estimated_total.fetch_add(1, Ordering::AcqRel);
        });
        if completed {
            return Ok(true);
        }
        if !operation.is_completed() && self.config.timer_enabled {
            operation.add_to_timer(&self.timer);
        }
        Ok(false)
    }

    /// Tries every operation watched under `key` (each under its lock) and
    /// returns how many this call completed. Completed operations leave the
    /// key's list, and a list left empty is removed.
    pub fn check_and_complete(&self, key: &K) -> usize {
        let watchers = lock(self.shard(key)).get(key).cloned();
        match watchers {
            Some(watchers) => self.try_complete_watched(key, &watchers),
            None => 0,
        }
    }

    /// Stops watching `key` and returns the operations that were watched
    /// under it, taken out of the timer but neither completed nor expired
    /// (they stay on other keys' lists).
    pub fn cancel_for_key(&self, key: &K) -> Vec<Arc<Delayed<O>>> {
        let mut shard = lock(self.shard(key));
        let Some(watchers) = shard.remove(key) else {
            return Vec::new();
        };
        let operations = std::mem::take(&mut *lock(&watchers.operations));
        for operation in &operations {
            operation.cancel();
        }
        operations
    }

    /// The total length of the watcher lists (Kafka's `PurgatorySize`): an
    /// operation counts once per key, and completed operations count until
    /// a check or a purge removes them, so this may exceed the operations
    /// really waiting.
    pub fn watched(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| {
                lock(shard)
                    .values()
                    .map(|watchers| lock(&watchers.operations).len())
                    .sum::<usize>()
            })
            .sum()
    }

    /// The operations waiting in the timer (Kafka's
    /// `NumDelayedOperations`).
    pub fn num_delayed(&self) -> usize {
        self.timer.size()
    }

    /// Kafka's `advanceClock`: drives the timer
    /// ([`Timer::advance_clock`]: expires due operations, waiting up to
    /// `timeout_ms` for one), then purges completed operations from the
    /// watcher lists if the estimated number watched exceeds the delayed
    /// ones by more than the purge interval. Returns whether the timer
    /// expired a bucket.
    pub fn advance_clock(&self, timeout_ms: i64) -> bool {
        let advanced = self.timer.advance_clock(timeout_ms);
        let delayed = self.num_delayed();
        let estimated = self.estimated_total.load(Ordering::Acquire);
        if estimated.saturating_sub(delayed) > self.config.purge_interval {
            // Operations completed during the purge leave the estimate a
            // little high, as in Kafka.
            self.estimated_total.store(delayed, Ordering::Release);
            self.purge_completed();
        }
        advanced
    }

    /// Removes completed operations from every watcher list (and the lists
    /// left empty); returns how many entries it removed.
    fn purge_completed(&self) -> usize {
        let mut purged = 0;
        for shard in self.shards.iter() {
            let lists: Vec<(K, Arc<Watchers<O>>)> = lock(shard)
                .iter()
                .map(|(key, watchers)| (key.clone(), watchers.clone()))
                .collect();
            for (key, watchers) in lists {
                let empty = {
                    let mut operations = lock(&watchers.operations);
                    let before = operations.len();
                    operations.retain(|op| !op.is_completed());
                    purged += before - operations.len();
                    operations.is_empty()
                };
                if empty {
                    self.remove_key_if_empty(&key, &watchers);
                }
            }
        }
        purged
    }

    /// Watches `operation` under `key`, under the shard's lock (so that the
    /// list cannot be removed meanwhile).
    fn watch(&self, key: &K, operation: &Arc<Delayed<O>>) {
        let mut shard = lock(self.shard(key));
        let watchers = match shard.get(key) {
            Some(watchers) => watchers,
            None => shard.entry(key.clone()).or_insert_with(|| {
                Arc::new(Watchers {
                    operations: Mutex::new(Vec::new()),
                })
            }),
        };
        lock(&watchers.operations).push(operation.clone());
    }

    /// Kafka's `tryCompleteWatched`: tries a snapshot of the list (outside
    /// its lock, so callbacks may use the purgatory), then drops the
    /// completed operations.
    fn try_complete_watched(&self, key: &K, watchers: &Arc<Watchers<O>>) -> usize {
        let snapshot: Vec<Arc<Delayed<O>>> = lock(&watchers.operations).clone();
        let mut completed = 0;
        let mut any_completed = false;
        for operation in &snapshot {
            if operation.is_completed() {
                any_completed = true;
            } else if operation.safe_try_complete() {
                completed += 1;
                any_completed = true;
            } else if operation.is_completed() {
                // Another thread completed it (through another key) between
                // the check above and the lock: drop it from this list too,
                // or it stays watched until a purge.
                any_completed = true;
            }
        }
        if any_completed || snapshot.is_empty() {
            let empty = {
                let mut operations = lock(&watchers.operations);
                operations.retain(|op| !op.is_completed());
                operations.is_empty()
            };
            if empty {
                self.remove_key_if_empty(key, watchers);
            }
        }
        completed
    }

    /// Removes `key`'s list if it is still `watchers` and empty.
    fn remove_key_if_empty(&self, key: &K, watchers: &Arc<Watchers<O>>) {
        let mut shard = lock(self.shard(key));
        let current = shard.get(key).is_some_and(|w| Arc::ptr_eq(w, watchers));
        if current && lock(&watchers.operations).is_empty() {
            shard.remove(key);
        }
    }
}

impl<K, O> Purgatory<K, O>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    O: DelayedOperation,
{
    /// Starts Kafka's expiration reaper on a thread: `advance_clock(200)`
    /// in a loop until the returned handle is shut down or dropped. For a
    /// real clock; on a mock clock it would move the clock by itself.
    ///
    /// # Errors
    ///
    /// [`PurgatoryError::Reaper`] if the thread cannot be spawned.
    pub fn start_reaper(self: &Arc<Self>) -> Result<ExpirationReaper, PurgatoryError> {
        let stop = Arc::new(StdAtomicBool::new(false));
        let purgatory = Arc::clone(self);
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("ExpirationReaper-{}", self.name))
            .spawn(move || {
                while !stopping.load(std::sync::atomic::Ordering::Acquire) {
                    purgatory.advance_clock(REAPER_TIMEOUT_MS);
                }
            })
            .map_err(|source| PurgatoryError::Reaper {
                purgatory: self.name.clone(),
                source,
            })?;
        Ok(ExpirationReaper {
            stop,
            timer: self.timer.clone(),
            thread: Some(thread),
        })
    }
}

impl<K, O> fmt::Debug for Purgatory<K, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Purgatory")
            .field("name", &self.name)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The thread running a purgatory's expiration reaper; stops (and joins)
/// on [`ExpirationReaper::shutdown`] or drop.
#[derive(Debug)]
pub struct ExpirationReaper {
    stop: Arc<StdAtomicBool>,
    timer: Timer,
    thread: Option<JoinHandle<()>>,
}

impl ExpirationReaper {
    /// Stops the reaper and waits for its thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        self.timer.wake();
        if let Some(thread) = self.thread.take() {
            // A panicking callback ended the thread: nothing left to stop.
            let _ = thread.join();
        }
    }
}

impl Drop for ExpirationReaper {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}
