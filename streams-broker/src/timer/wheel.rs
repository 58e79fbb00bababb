//! The hierarchical timing wheel itself (Kafka's `TimingWheel`,
//! `TimerTaskList` and `TimerTaskEntry`), locked the way Kafka's
//! `SystemTimer` locks it:
//!
//! - the wheels' structure (each level's current time) is behind a
//!   `RwLock`: adding and cancelling take the read lock, so they run in
//!   parallel; expiring buckets (which moves the levels' time) takes the
//!   write lock;
//! - every bucket has its own `Mutex` (Kafka synchronises on each
//!   `TimerTaskList`): two adds or cancels serialise only when they touch
//!   the same bucket;
//! - overflow wheels are created lazily under the read lock, each in a
//!   `OnceLock` (Kafka's double-checked `overflowWheel`), so that two
//!   adders racing to create one agree on it;
//! - buckets whose expiration was set are queued by (expiration, bucket
//!   number) in one mutex-protected heap (Kafka's `DelayQueue`), touched by
//!   an add only when it sets a bucket's expiration (once per bucket and
//!   round of the wheel) and by the thread that drives the clock.
//!
//! Entries live in slabs sharded by the adding thread (each shard its own
//! `Mutex`, so two threads' adds do not share one), and a
//! [`TimerHandle`] names its shard, slot and generation. An entry knows its
//! bucket and its node there; a bucket is a doubly linked list of nodes in
//! its own slab, so an entry leaves it in O(1) under the bucket's lock.
//! Locks are always taken in the order wheels (read or write), entry
//! shard, bucket, queue, and never two of one kind at once.
//!
//! The order in which tasks run is deterministic: buckets by (expiration,
//! bucket number), first-in first-out within a bucket.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{
    Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard,
    RwLockWriteGuard,
};

use super::{TimerHandle, TimerTask};

/// No node / no bucket.
const NIL: usize = usize::MAX;
/// A bucket with no expiration set (Kafka uses -1; times may be negative
/// on a mock clock, so the minimum is used instead).
const UNSET: i64 = i64::MIN;
/// Expirations are clamped to this (about 146 million years), so that the
/// top wheel's interval can saturate without wrapping.
pub(crate) const MAX_EXPIRATION_MS: i64 = i64::MAX / 2;
/// Room for more levels than any expiration needs: each level's interval
/// is at least twice the one below, and saturates at `i64::MAX` by the
/// 63rd.
const MAX_LEVELS: usize = 64;
/// Entry slab shards: threads are spread over them round-robin.
const ENTRY_SHARDS: usize = 16;

/// A value alone on its cache lines (128 bytes: two lines, for the
/// adjacent-line prefetcher), so that two threads locking neighbouring
/// shards do not bounce one line between their cores.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Locks `mutex`, ignoring poisoning (a panicking task must not make the
/// timer unusable; no task runs under a timer lock).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This thread's entry shard (threads are numbered in the order they first
/// add a task, so a few threads get distinct shards).
fn shard_hint() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static HINT: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    // During thread-local destruction, fall back to shard 0.
    HINT.try_with(|hint| *hint).unwrap_or(0)
}

/// One level of the hierarchy. `current_ms` moves only under the write
/// lock.
struct Level {
    tick_ms: i64,
    interval_ms: i64,
    current_ms: i64,
    buckets: Box<[Bucket]>,
}

impl Level {
    fn new(tick_ms: i64, wheel_size: usize, current_ms: i64) -> Self {
        let size = i64::try_from(wheel_size).unwrap_or(i64::MAX);
        Self {
            tick_ms,
            interval_ms: tick_ms.saturating_mul(size),
            current_ms,
            buckets: (0..wheel_size).map(|_| Bucket::new()).collect(),
        }
    }
}

/// A bucket (Kafka's `TimerTaskList`): the entries that expire in the same
/// tick of its level, behind its own lock, and its expiration (the start
/// of the tick), set by adds under the read lock.
struct Bucket {
    expiration_ms: AtomicI64,
    list: Mutex<List>,
}

impl Bucket {
    fn new() -> Self {
        Self {
            expiration_ms: AtomicI64::new(UNSET),
            list: Mutex::new(List::default()),
        }
    }
}

/// Which entry a node holds: its shard and slot.
#[derive(Clone, Copy, Debug)]
struct EntryRef {
    shard: usize,
    slot: usize,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    entry: EntryRef,
    prev: usize,
    next: usize,
}

/// A doubly linked list of entries, threaded through its own slab of
/// nodes: appending and unlinking are O(1), and a node's index stays put
/// until it is unlinked or the bucket is flushed.
#[derive(Default)]
struct List {
    nodes: Vec<Node>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
}

impl List {
    fn is_empty(&self) -> bool {
        self.nodes.len() == self.free.len()
    }

    /// Appends `entry` at the tail; returns its node.
    fn push(&mut self, entry: EntryRef) -> usize {
        if self.is_empty() {
            self.head = NIL;
            self.tail = NIL;
        }
        let node = Node {
            entry,
            prev: self.tail,
            next: NIL,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.nodes[index] = node;
                index
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        match self.nodes.get_mut(self.tail) {
            Some(tail) => tail.next = index,
            None => self.head = index,
        }
        self.tail = index;
        index
    }

    /// Unlinks node `index` (which must be linked).
    fn unlink(&mut self, index: usize) {
        let Some(&Node { prev, next, .. }) = self.nodes.get(index) else {
            return;
        };
        match self.nodes.get_mut(prev) {
            Some(node) => node.next = next,
            None => self.head = next,
        }
        match self.nodes.get_mut(next) {
            Some(node) => node.prev = prev,
            None => self.tail = prev,
        }
        self.free.push(index);
    }

    /// Takes every entry out, first-in first-out (Kafka's
    /// `TimerTaskList.flush`), into `out`.
    fn drain_into(&mut self, out: &mut Vec<EntryRef>) {
        if !self.is_empty() {
            let mut next = self.head;
            while let Some(node) = self.nodes.get(next) {
                out.push(node.entry);
                next = node.next;
            }
        }
        self.nodes.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
    }
}

/// An entry's slot: waiting while `task` is set, free otherwise.
struct Slot {
    task: Option<Arc<dyn TimerTask>>,
    expiration_ms: i64,
    generation: u64,
    /// The bucket's number (`level * wheel_size + index`) and the entry's
    /// node in it.
    bucket: usize,
    node: usize,
}

/// A shard of entries and the number of them waiting.
#[derive(Default)]
struct EntryShard {
    slots: Vec<Slot>,
    free: Vec<usize>,
    waiting: usize,
}

impl EntryShard {
    /// A slot for `task`; returns its index and generation.
    fn alloc(&mut self, task: Arc<dyn TimerTask>, expiration_ms: i64) -> (usize, u64) {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.slots.push(Slot {
                    task: None,
                    expiration_ms,
                    generation: 0,
                    bucket: NIL,
                    node: NIL,
                });
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.task = Some(task);
        slot.expiration_ms = expiration_ms;
        self.waiting += 1;
        (index, slot.generation)
    }

    /// Frees the slot at `index` and returns its task.
    fn release(&mut self, index: usize) -> Option<Arc<dyn TimerTask>> {
        let slot = self.slots.get_mut(index)?;
        let task = slot.task.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        slot.bucket = NIL;
        slot.node = NIL;
        self.waiting -= 1;
        self.free.push(index);
        Some(task)
    }
}

/// The levels, behind the [`RwLock`]: the first created with the wheels,
/// the others on demand.
struct Levels {
    levels: Box<[OnceLock<Level>]>,
    /// Reused by `expire_due` (under the write lock).
    scratch: Vec<EntryRef>,
}

impl Levels {
    fn bucket(&self, bucket: usize, wheel_size: usize) -> Option<&Bucket> {
        self.levels
            .get(bucket / wheel_size)?
            .get()?
            .buckets
            .get(bucket % wheel_size)
    }

    /// Moves the first wheel's time to `time_ms` (rounded down to its
    /// tick) and each overflow wheel's after it, as Kafka's
    /// `TimingWheel.advanceClock`.
    fn advance(&mut self, time_ms: i64) {
        let mut time = time_ms;
        for level in self.levels.iter_mut() {
            let Some(level) = level.get_mut() else {
                break;
            };
            if time >= level.current_ms.saturating_add(level.tick_ms) {
                level.current_ms = time - time.rem_euclid(level.tick_ms);
                time = level.current_ms;
            } else {
                break;
            }
        }
    }
}

/// The queue of buckets by expiration (Kafka's `DelayQueue`) and the state
/// of the threads waiting for it in `advance_clock`.
pub(crate) struct Queue {
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// Threads in `advance_clock` waiting on the condition variable.
    pub(crate) waiters: usize,
    /// Bumped by `wake`: waiters return.
    pub(crate) wake_epoch: u64,
}

impl Queue {
    /// The expiration of the earliest queued bucket.
    pub(crate) fn next_expiration(&self) -> Option<i64> {
        self.heap.peek().map(|Reverse((e, _))| *e)
    }
}

/// A level's tick, interval and current time, for tests and diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WheelLevel {
    /// The level's tick: 1 ms for the first wheel, then 20, 400, 8000 ...
    /// (each level's tick is the interval of the level below).
    pub tick_ms: i64,
    /// The time the level's buckets span: tick times wheel size.
    pub interval_ms: i64,
    /// The level's current time, a multiple of its tick; it moves only
    /// when a bucket expires.
    pub current_ms: i64,
}

/// The wheels, their buckets, the entries and the queue of buckets, `Sync`
/// with the locking described in the module's documentation.
pub(crate) struct Wheels {
    wheel_size: usize,
    levels: RwLock<Levels>,
    entries: Box<[CachePadded<Mutex<EntryShard>>]>,
    pub(crate) queue: Mutex<Queue>,
    /// Signalled when a bucket is queued while a thread waits, or on wake.
    pub(crate) changed: Condvar,
}

impl Wheels {
    /// The first wheel: `tick_ms` (at least 1), `wheel_size` buckets (at
    /// least 2), its time `start_ms` rounded down to a tick.
    pub(crate) fn new(tick_ms: i64, wheel_size: usize, start_ms: i64) -> Self {
        let tick_ms = tick_ms.max(1);
        let wheel_size = wheel_size.max(2);
        let levels: Box<[OnceLock<Level>]> = (0..MAX_LEVELS).map(|_| OnceLock::new()).collect();
        if let Some(first) = levels.first() {
            let current_ms = start_ms - start_ms.rem_euclid(tick_ms);
            let _ = first.set(Level::new(tick_ms, wheel_size, current_ms));
        }
        Self {
            wheel_size,
            levels: RwLock::new(Levels {
                levels,
                scratch: Vec::new(),
            }),
            entries: (0..ENTRY_SHARDS)
                .map(|_| CachePadded(Mutex::new(EntryShard::default())))
                .collect(),
            queue: Mutex::new(Queue {
                heap: BinaryHeap::new(),
                waiters: 0,
                wake_epoch: 0,
            }),
            changed: Condvar::new(),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Levels> {
        self.levels.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Levels> {
        self.levels.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Drops every waiting task (the timer is gone): later cancels find
    /// nothing.
    pub(crate) fn clear(&self) {
        for shard in self.entries.iter() {
            let slots = std::mem::take(&mut *lock(shard));
            drop(slots);
        }
    }

    /// Entries in buckets (Kafka's task counter).
    pub(crate) fn size(&self) -> usize {
        self.entries.iter().map(|shard| lock(shard).waiting).sum()
    }

    /// The levels created so far, finest first.
    pub(crate) fn levels(&self) -> Vec<WheelLevel> {
        self.read()
            .levels
            .iter()
            .map_while(OnceLock::get)
            .map(|l| WheelLevel {
                tick_ms: l.tick_ms,
                interval_ms: l.interval_ms,
                current_ms: l.current_ms,
            })
            .collect()
    }

    /// The expiration of the earliest queued bucket.
    pub(crate) fn next_expiration(&self) -> Option<i64> {
        lock(&self.queue).next_expiration()
    }

    /// Adds `task` to expire at `expiration_ms`, under the read lock.
    /// `Ok(handle)` when it went into a bucket; `Err(task)` when it has
    /// already expired and must run now.
    pub(crate) fn add(
        &self,
        task: Arc<dyn TimerTask>,
        expiration_ms: i64,
    ) -> Result<TimerHandle, Arc<dyn TimerTask>> {
        let expiration_ms = expiration_ms.min(MAX_EXPIRATION_MS);
        let levels = self.read();
        let Some((number, bucket, bucket_expiration)) = self.locate(&levels, expiration_ms) else {
            return Err(task);
        };
        let shard = shard_hint() % self.entries.len();
        let mut entries = lock(&self.entries[shard]);
        let (slot, generation) = entries.alloc(task, expiration_ms);
        let node = self.link(number, bucket, bucket_expiration, EntryRef { shard, slot });
        let entry = &mut entries.slots[slot];
        entry.bucket = number;
        entry.node = node;
        Ok(TimerHandle {
            shard,
            index: slot,
            generation,
            expiration_ms,
        })
    }

    /// Removes the entry of `handle` if it is still waiting, under the read
    /// lock and its bucket's lock; true if it was.
    pub(crate) fn cancel(&self, handle: TimerHandle) -> bool {
        let levels = self.read();
        let Some(shard) = self.entries.get(handle.shard) else {
            return false;
        };
        let task = {
            let mut entries = lock(shard);
            let (number, node) = match entries.slots.get(handle.index) {
                Some(slot) if slot.generation == handle.generation && slot.task.is_some() => {
                    (slot.bucket, slot.node)
                }
                _ => return false,
            };
            if let Some(bucket) = levels.bucket(number, self.wheel_size) {
                lock(&bucket.list).unlink(node);
            }
            entries.release(handle.index)
        };
        drop(levels);
        // The task is dropped here, outside the locks: a cancelled task
        // never runs.
        drop(task);
        true
    }

    /// Under the write lock, expires every bucket due at `now_ms`, earliest
    /// first: each moves the wheels' time to its expiration and re-adds its
    /// entries, which land in finer buckets or, if their time has come, are
    /// pushed onto `due` in order. Returns whether any bucket expired.
    pub(crate) fn expire_due(&self, now_ms: i64, due: &mut Vec<Arc<dyn TimerTask>>) -> bool {
        let mut levels = self.write();
        let mut scratch = std::mem::take(&mut levels.scratch);
        let mut any = false;
        loop {
            let (expiration, number) = {
                let mut queue = lock(&self.queue);
                match queue.heap.peek() {
                    Some(&Reverse((expiration, number))) if expiration <= now_ms => {
                        queue.heap.pop();
                        (expiration, number)
                    }
                    _ => break,
                }
            };
            any = true;
            levels.advance(expiration);
            let levels: &Levels = &levels;
            let Some(bucket) = levels.bucket(number, self.wheel_size) else {
                continue;
            };
            if bucket.expiration_ms.load(Ordering::Acquire) != expiration {
                continue; // defensive: a bucket is queued once per expiration
            }
            scratch.clear();
            lock(&bucket.list).drain_into(&mut scratch);
            bucket.expiration_ms.store(UNSET, Ordering::Release);
            for &entry in &scratch {
                let mut entries = lock(&self.entries[entry.shard]);
                let Some(expiration_ms) = entries.slots.get(entry.slot).map(|s| s.expiration_ms)
                else {
                    continue;
                };
                match self.locate(levels, expiration_ms) {
                    Some((number, bucket, bucket_expiration)) => {
                        let node = self.link(number, bucket, bucket_expiration, entry);
                        let slot = &mut entries.slots[entry.slot];
                        slot.bucket = number;
                        slot.node = node;
                    }
                    None => due.extend(entries.release(entry.slot)),
                }
            }
        }
        scratch.clear();
        levels.scratch = scratch;
        any
    }

    /// The bucket for `expiration` (creating overflow wheels as needed):
    /// its number, the bucket and its expiration; `None` if it has expired
    /// (it is within the first wheel's current tick, or before).
    fn locate<'a>(&self, levels: &'a Levels, expiration: i64) -> Option<(usize, &'a Bucket, i64)> {
        let size = i64::try_from(self.wheel_size).unwrap_or(i64::MAX);
        let mut depth = 0;
        let mut level = levels.levels.first()?.get()?;
        loop {
            if expiration < level.current_ms.saturating_add(level.tick_ms) {
                return None;
            }
            let top = depth + 1 >= levels.levels.len();
            if top || expiration < level.current_ms.saturating_add(level.interval_ms) {
                let virtual_id = expiration.div_euclid(level.tick_ms);
                let within = usize::try_from(virtual_id.rem_euclid(size)).unwrap_or(0);
                let bucket = level.buckets.get(within)?;
                let number = depth * self.wheel_size + within;
                return Some((number, bucket, virtual_id.saturating_mul(level.tick_ms)));
            }
            // The overflow wheel, created on demand (once, whichever adder
            // gets there first): its tick is this wheel's interval, its
            // time this wheel's, rounded down.
            let below = level;
            level = levels.levels.get(depth + 1)?.get_or_init(|| {
                let tick = below.interval_ms;
                let current = below.current_ms - below.current_ms.rem_euclid(tick);
                Level::new(tick, self.wheel_size, current)
            });
            depth += 1;
        }
    }

    /// Appends `entry` to `bucket` (number `number`) under its lock, and
    /// sets the bucket's expiration, queueing it if that changed (Kafka's
    /// `bucket.setExpiration` then `queue.offer`). Returns the entry's node.
    fn link(
        &self,
        number: usize,
        bucket: &Bucket,
        bucket_expiration: i64,
        entry: EntryRef,
    ) -> usize {
        let node = lock(&bucket.list).push(entry);
        // Every add into a bucket under one read lock computes the same
        // expiration, so only the first queues it.
        // The load first: a bucket's line is written only when its
        // expiration really changes.
        if bucket.expiration_ms.load(Ordering::Acquire) != bucket_expiration
            && bucket
                .expiration_ms
                .swap(bucket_expiration, Ordering::AcqRel)
                != bucket_expiration
        {
            let mut queue = lock(&self.queue);
            queue.heap.push(Reverse((bucket_expiration, number)));
            if queue.waiters > 0 {
                self.changed.notify_all();
            }
        }
        node
    }
}
