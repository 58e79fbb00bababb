//! Model-checked races of the real completion and watch code, with loom
//! (the purgatory's primitives become loom's under `--cfg loom`):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p streams-broker --lib --release purgatory::loom
//! ```

use std::sync::Arc;

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::*;
use crate::timer::{RealTime, Timer};

struct LoomOp {
    ready: AtomicBool,
    completions: AtomicUsize,
    expirations: AtomicUsize,
    expired_before_complete: AtomicBool,
}

impl LoomOp {
    fn new(ready: bool) -> Self {
        Self {
            ready: AtomicBool::new(ready),
            completions: AtomicUsize::new(0),
            expirations: AtomicUsize::new(0),
            expired_before_complete: AtomicBool::new(false),
        }
    }
}

impl DelayedOperation for LoomOp {
    fn try_complete(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
    fn on_complete(&self) {
        self.completions.fetch_add(1, Ordering::SeqCst);
    }
    fn on_expiration(&self) {
        if self.completions.load(Ordering::SeqCst) != 1 {
            self.expired_before_complete.store(true, Ordering::SeqCst);
        }
        self.expirations.fetch_add(1, Ordering::SeqCst);
    }
}

/// A completing thread (a check that finds the operation ready) against
/// the expiry: exactly one wins; on_complete runs once, and on_expiration
/// only if the expiry won, after on_complete.
#[test]
fn complete_and_expire_race() {
    loom::model(|| {
        let op = Delayed::new(LoomOp::new(true), 100);
        let completer = {
            let op = op.clone();
            loom::thread::spawn(move || op.safe_try_complete())
        };
        let expired = op.expire();
        let completed = completer.join().unwrap_or(false);
        assert!(completed ^ expired, "exactly one caller completes it");
        let o = op.operation();
        assert_eq!(o.completions.load(Ordering::SeqCst), 1);
        assert_eq!(o.expirations.load(Ordering::SeqCst), usize::from(expired));
        assert!(!o.expired_before_complete.load(Ordering::SeqCst));
        assert!(op.is_completed());
    });
}

/// Two force_complete calls and an expiry: one winner.
#[test]
fn three_way_completion_race() {
    loom::model(|| {
        let op = Delayed::new(LoomOp::new(false), 100);
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let op = op.clone();
                loom::thread::spawn(move || op.force_complete())
            })
            .collect();
        let expired = op.expire();
        let wins = threads
            .into_iter()
            .map(|t| t.join().unwrap_or(false))
            .filter(|won| *won)
            .count()
            + usize::from(expired);
        assert_eq!(wins, 1);
        assert_eq!(op.operation().completions.load(Ordering::SeqCst), 1);
        assert!(
            !op.operation()
                .expired_before_complete
                .load(Ordering::SeqCst)
        );
    });
}

/// The lost wake-up: one thread watches an operation while another makes
/// it ready and checks its key. Whatever the interleaving, it completes
/// (the second try sees the change, or the check finds it watched), once.
#[test]
fn try_complete_else_watch_loses_no_wake_up() {
    loom::model(|| {
        let purgatory: Arc<Purgatory<u8, LoomOp>> = Arc::new(Purgatory::new(
            "loom",
            Timer::new(Arc::new(RealTime::new())),
            PurgatoryConfig::global_lock().timer_enabled(false),
        ));
        let op = Delayed::new(LoomOp::new(false), 100);
        let watcher = {
            let (purgatory, op) = (purgatory.clone(), op.clone());
            loom::thread::spawn(move || {
                purgatory
                    .try_complete_else_watch(&op, &[7])
                    .unwrap_or(false)
            })
        };
        op.operation().ready.store(true, Ordering::SeqCst);
        let checked = purgatory.check_and_complete(&7);
        let watched_and_completed = watcher.join().unwrap_or(false);
        assert!(op.is_completed(), "a wake-up was lost");
        assert_eq!(usize::from(watched_and_completed) + checked, 1);
        assert_eq!(op.operation().completions.load(Ordering::SeqCst), 1);
    });
}

/// Two threads check the two keys of one ready operation: one completes
/// it, the other loses the race to the operation's lock. Neither list may
/// keep it (the loser must still drop the completed operation).
#[test]
fn checks_racing_on_two_keys_leave_no_completed_operation_watched() {
    loom::model(|| {
        let purgatory: Arc<Purgatory<u8, LoomOp>> = Arc::new(Purgatory::new(
            "loom",
            Timer::new(Arc::new(RealTime::new())),
            PurgatoryConfig::global_lock().timer_enabled(false),
        ));
        let op = Delayed::new(LoomOp::new(false), 100);
        assert!(
            !purgatory
                .try_complete_else_watch(&op, &[1, 2])
                .unwrap_or(true)
        );
        op.operation().ready.store(true, Ordering::SeqCst);
        let other = {
            let purgatory = purgatory.clone();
            loom::thread::spawn(move || purgatory.check_and_complete(&2))
        };
        let here = purgatory.check_and_complete(&1);
        let there = other.join().unwrap_or(0);
        assert_eq!(here + there, 1);
        assert_eq!(
            purgatory.watched(),
            0,
            "a completed operation stayed watched"
        );
    });
}
