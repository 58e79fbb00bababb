//! The hierarchical timing wheel itself (Kafka's `TimingWheel`,
//! `TimerTaskList` and `TimerTaskEntry`), single-threaded: the
//! [`Timer`](super::Timer) keeps it under one lock.
//!
//! Entries live in a slab; every bucket is a doubly linked list threaded
//! through the slab by index, so an entry knows its bucket and its
//! neighbours and leaves in O(1). Buckets whose expiration was set are
//! queued by (expiration, bucket number), Kafka's `DelayQueue`: that
//! order, and first-in first-out within a bucket, make the order in which
//! tasks run deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use super::{TimerHandle, TimerTask};

/// No slot / no bucket.
const NIL: usize = usize::MAX;
/// A bucket with no expiration set (Kafka uses -1; times may be negative
/// on a mock clock, so the minimum is used instead).
const UNSET: i64 = i64::MIN;
/// Expirations are clamped to this (about 146 million years), so that the
/// top wheel's interval can saturate without wrapping.
pub(crate) const MAX_EXPIRATION_MS: i64 = i64::MAX / 2;

/// One level of the hierarchy.
#[derive(Clone, Copy, Debug)]
struct Level {
    tick_ms: i64,
    interval_ms: i64,
    current_ms: i64,
}

/// A bucket: a list of entries that expire in the same tick of its level.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    expiration_ms: i64,
    head: usize,
    tail: usize,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        expiration_ms: UNSET,
        head: NIL,
        tail: NIL,
    };
}

/// A slab slot: an entry while `task` is set, free otherwise.
struct Slot {
    task: Option<Arc<dyn TimerTask>>,
    expiration_ms: i64,
    generation: u64,
    bucket: usize,
    prev: usize,
    next: usize,
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

/// The wheels, their buckets, the slab of entries and the queue of
/// buckets by expiration.
pub(crate) struct Wheels {
    wheel_size: usize,
    levels: Vec<Level>,
    buckets: Vec<Bucket>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    queue: BinaryHeap<Reverse<(i64, usize)>>,
    size: usize,
    scratch: Vec<usize>,
}

impl Wheels {
    /// The first wheel: `tick_ms` (at least 1), `wheel_size` buckets (at
    /// least 2), its time `start_ms` rounded down to a tick.
    pub(crate) fn new(tick_ms: i64, wheel_size: usize, start_ms: i64) -> Self {
        let tick_ms = tick_ms.max(1);
        let wheel_size = wheel_size.max(2);
        let size_i64 = i64::try_from(wheel_size).unwrap_or(i64::MAX);
        Self {
            wheel_size,
            levels: vec![Level {
                tick_ms,
                interval_ms: tick_ms.saturating_mul(size_i64),
                current_ms: start_ms - start_ms.rem_euclid(tick_ms),
            }],
            buckets: vec![Bucket::EMPTY; wheel_size],
            slots: Vec::new(),
            free: Vec::new(),
            queue: BinaryHeap::new(),
            size: 0,
            scratch: Vec::new(),
        }
    }

    /// Entries in buckets (Kafka's task counter).
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The levels created so far, finest first.
    pub(crate) fn levels(&self) -> Vec<WheelLevel> {
        self.levels
            .iter()
            .map(|l| WheelLevel {
                tick_ms: l.tick_ms,
                interval_ms: l.interval_ms,
                current_ms: l.current_ms,
            })
            .collect()
    }

    /// The expiration of the earliest queued bucket.
    pub(crate) fn next_expiration(&self) -> Option<i64> {
        self.queue.peek().map(|Reverse((e, _))| *e)
    }

    /// Adds `task` to expire at `expiration_ms`. `Ok(handle)` when it went
    /// into a bucket (the bool: a bucket was newly queued, so a waiter may
    /// want to wake up); `Err(task)` when it has already expired and must
    /// run now.
    pub(crate) fn add(
        &mut self,
        task: Arc<dyn TimerTask>,
        expiration_ms: i64,
    ) -> Result<(TimerHandle, bool), Arc<dyn TimerTask>> {
        let expiration_ms = expiration_ms.min(MAX_EXPIRATION_MS);
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.slots.push(Slot {
                    task: None,
                    expiration_ms,
                    generation: 0,
                    bucket: NIL,
                    prev: NIL,
                    next: NIL,
                });
                self.slots.len() - 1
            }
        };
        self.slots[index].expiration_ms = expiration_ms;
        match self.place(index) {
            Some(queued) => {
                let slot = &mut self.slots[index];
                slot.task = Some(task);
                Ok((
                    TimerHandle {
                        index,
                        generation: slot.generation,
                        expiration_ms,
                    },
                    queued,
                ))
            }
            None => {
                drop(self.release(index));
                Err(task)
            }
        }
    }

    /// Removes the entry of `handle` if it is still waiting; true if it was.
    pub(crate) fn cancel(&mut self, handle: TimerHandle) -> bool {
        match self.slots.get(handle.index) {
            Some(slot) if slot.generation == handle.generation && slot.task.is_some() => {}
            _ => return false,
        }
        if self.slots[handle.index].bucket != NIL {
            self.unlink(handle.index);
        }
        // The task is dropped here: a cancelled task never runs.
        drop(self.release(handle.index));
        true
    }

    /// Expires every bucket due at `now_ms`, earliest first: each moves the
    /// wheels' time to its expiration and re-adds its entries, which land
    /// in finer buckets or, if their time has come, are pushed onto `due`
    /// in order. Returns whether any bucket expired.
    pub(crate) fn expire_due(&mut self, now_ms: i64, due: &mut Vec<Arc<dyn TimerTask>>) -> bool {
        let mut any = false;
        while let Some(&Reverse((expiration, bucket))) = self.queue.peek() {
            if expiration > now_ms {
                break;
            }
            self.queue.pop();
            any = true;
            if self.buckets[bucket].expiration_ms != expiration {
                continue; // defensive: a bucket is queued once per expiration
            }
            self.advance(expiration);
            // Flush the bucket (Kafka's TimerTaskList.flush), then re-add.
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let mut next = self.buckets[bucket].head;
            while next != NIL {
                scratch.push(next);
                let slot = &mut self.slots[next];
                slot.bucket = NIL;
                next = slot.next;
            }
            self.buckets[bucket] = Bucket::EMPTY;
            self.size -= scratch.len();
            for &index in &scratch {
                if self.place(index).is_none() {
                    due.extend(self.release(index));
                }
            }
            self.scratch = scratch;
        }
        any
    }

    /// Moves the first wheel's time to `time_ms` (rounded down to its
    /// tick) and each overflow wheel's after it, as Kafka's
    /// `TimingWheel.advanceClock`.
    fn advance(&mut self, time_ms: i64) {
        let mut time = time_ms;
        for level in &mut self.levels {
            if time >= level.current_ms.saturating_add(level.tick_ms) {
                level.current_ms = time - time.rem_euclid(level.tick_ms);
                time = level.current_ms;
            } else {
                break;
            }
        }
    }

    /// Puts the entry at `index` into its bucket, creating overflow wheels
    /// as needed. `Some(queued)` if placed, `None` if already expired.
    fn place(&mut self, index: usize) -> Option<bool> {
        let expiration = self.slots[index].expiration_ms;
        let mut depth = 0;
        loop {
            let level = self.levels[depth];
            if expiration < level.current_ms.saturating_add(level.tick_ms) {
                return None;
            }
            if expiration < level.current_ms.saturating_add(level.interval_ms) {
                let virtual_id = expiration.div_euclid(level.tick_ms);
                let size = i64::try_from(self.wheel_size).unwrap_or(i64::MAX);
                let within = usize::try_from(virtual_id.rem_euclid(size)).unwrap_or(0);
                let bucket = depth * self.wheel_size + within;
                self.link(bucket, index);
                let bucket_expiration = virtual_id * level.tick_ms;
                let state = &mut self.buckets[bucket];
                if state.expiration_ms != bucket_expiration {
                    state.expiration_ms = bucket_expiration;
                    self.queue.push(Reverse((bucket_expiration, bucket)));
                    return Some(true);
                }
                return Some(false);
            }
            if depth + 1 == self.levels.len() {
                // The overflow wheel, created on demand: its tick is this
                // wheel's interval, its time this wheel's, rounded down.
                let tick = level.interval_ms;
                let size = i64::try_from(self.wheel_size).unwrap_or(i64::MAX);
                self.levels.push(Level {
                    tick_ms: tick,
                    interval_ms: tick.saturating_mul(size),
                    current_ms: level.current_ms - level.current_ms.rem_euclid(tick),
                });
                self.buckets
                    .extend(std::iter::repeat_n(Bucket::EMPTY, self.wheel_size));
            }
            depth += 1;
        }
    }

    /// Appends the entry at `index` to `bucket`'s tail.
    fn link(&mut self, bucket: usize, index: usize) {
        let tail = self.buckets[bucket].tail;
        {
            let slot = &mut self.slots[index];
            slot.bucket = bucket;
            slot.prev = tail;
            slot.next = NIL;
        }
        if tail == NIL {
            self.buckets[bucket].head = index;
        } else {
            self.slots[tail].next = index;
        }
        self.buckets[bucket].tail = index;
        self.size += 1;
    }

    /// Takes the entry at `index` out of its bucket.
    fn unlink(&mut self, index: usize) {
        let (bucket, prev, next) = {
            let slot = &self.slots[index];
            (slot.bucket, slot.prev, slot.next)
        };
        if prev == NIL {
            self.buckets[bucket].head = next;
        } else {
            self.slots[prev].next = next;
        }
        if next == NIL {
            self.buckets[bucket].tail = prev;
        } else {
            self.slots[next].prev = prev;
        }
        let slot = &mut self.slots[index];
        slot.bucket = NIL;
        slot.prev = NIL;
        slot.next = NIL;
        self.size -= 1;
    }

    /// Frees the slot at `index` (not in a bucket) and returns its task.
    fn release(&mut self, index: usize) -> Option<Arc<dyn TimerTask>> {
        let slot = &mut self.slots[index];
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(index);
        slot.task.take()
    }
}
