//! The punctuation queue: the schedules processors registered with
//! [`ProcessorContext::schedule`](super::ProcessorContext::schedule), and
//! which of them is due next.
//!
//! Due schedules fire in the order of their due time, then of the order
//! they were (re)scheduled in; a schedule that missed several intervals
//! fires once and is moved to its next due time after `now`, as Kafka's
//! `PunctuationQueue` does.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::{Cancellable, PunctuationType};

/// One schedule: which node it calls, on which clock, and when next.
pub(crate) struct Schedule {
    pub(crate) id: u64,
    seq: u64,
    pub(crate) node: usize,
    pub(crate) kind: PunctuationType,
    pub(crate) interval: i64,
    next: i64,
    cancelled: Rc<Cell<bool>>,
}

/// The schedules of one task.
#[derive(Default)]
pub(crate) struct PunctuationQueue {
    schedules: RefCell<Vec<Schedule>>,
    next_id: Cell<u64>,
}

impl PunctuationQueue {
    fn fresh_id(&self) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    /// Adds a schedule for `node` every `interval` of `kind`'s clock; the
    /// wall clock reads `wall_clock` now.
    pub(crate) fn schedule(
        &self,
        node: usize,
        interval: i64,
        kind: PunctuationType,
        wall_clock: i64,
    ) -> Cancellable {
        let id = self.fresh_id();
        let cancelled = Rc::new(Cell::new(false));
        let next = match kind {
            // Aligned to 0: fires on the first record.
            PunctuationType::StreamTime => 0,
            PunctuationType::WallClockTime => wall_clock.saturating_add(interval),
        };
        let seq = self.fresh_id();
        self.schedules.borrow_mut().push(Schedule {
            id,
            seq,
            node,
            kind,
            interval,
            next,
            cancelled: cancelled.clone(),
        });
        Cancellable::new(id, cancelled)
    }

    /// Whether nothing is scheduled.
    pub(crate) fn is_empty(&self) -> bool {
        self.schedules.borrow().is_empty()
    }

    /// Drops every schedule (the task closed).
    pub(crate) fn clear(&self) {
        self.schedules.borrow_mut().clear();
    }

    /// Takes out the schedule of `kind` due at `now` with the smallest due
    /// time (then the oldest), dropping cancelled ones on the way.
    pub(crate) fn pop_due(&self, kind: PunctuationType, now: i64) -> Option<Schedule> {
        let mut schedules = self.schedules.borrow_mut();
        schedules.retain(|s| !s.cancelled.get());
        let best = schedules
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == kind && s.next <= now)
            .min_by_key(|(_, s)| (s.next, s.seq))
            .map(|(i, _)| i)?;
        Some(schedules.swap_remove(best))
    }

    /// Puts back a schedule that fired at `now`, due at its next interval
    /// after `now`, unless it was cancelled while it ran.
    pub(crate) fn reschedule(&self, due: Schedule, now: i64) {
        if due.cancelled.get() {
            return;
        }
        let mut next = due.next + due.interval;
        if now >= next {
            let missed = (now - due.next) / due.interval;
            next = due.next + (missed + 1) * due.interval;
        }
        let seq = self.fresh_id();
        self.schedules
            .borrow_mut()
            .push(Schedule { next, seq, ..due });
    }
}
