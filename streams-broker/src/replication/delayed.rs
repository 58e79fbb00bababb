//! Delayed produce and delayed fetch, held in the cluster's purgatories
//! (Kafka's `DelayedProduce` and `DelayedFetch`) and expired by their
//! timing wheels on the cluster's mock clock.
//!
//! An operation decides from what the partition published last (its
//! high watermark, leader, epoch and ISR size, in atomics), so that the
//! purgatory can try it while the cluster is locked: the cluster publishes
//! after every change and then checks the operations watched under the
//! partitions that changed.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{BrokerError, Result};
use crate::topic_partition::TopicPartition;

/// What a partition last published for the operations waiting on it.
#[derive(Debug, Default)]
pub(crate) struct PartitionProgress {
    high_watermark: AtomicI64,
    /// The leader, -1 for none.
    leader: AtomicI32,
    epoch: AtomicI32,
    isr: AtomicUsize,
    min_isr: AtomicUsize,
}

impl PartitionProgress {
    pub(crate) fn publish(
        &self,
        hw: i64,
        leader: Option<i32>,
        epoch: i32,
        isr: usize,
        min_isr: usize,
    ) {
        self.high_watermark.store(hw, Ordering::Release);
        self.leader.store(leader.unwrap_or(-1), Ordering::Release);
        self.epoch.store(epoch, Ordering::Release);
        self.isr.store(isr, Ordering::Release);
        self.min_isr.store(min_isr, Ordering::Release);
    }
}

/// An `acks=all` produce waiting for the high watermark to pass its
/// records.
#[derive(Debug)]
pub(crate) struct DelayedProduce {
    tp: TopicPartition,
    progress: Arc<PartitionProgress>,
    required: i64,
    leader: i32,
    timeout_ms: i64,
    outcome: Mutex<Option<Result<()>>>,
}

impl DelayedProduce {
    pub(crate) fn new(
        tp: TopicPartition,
        progress: Arc<PartitionProgress>,
        required: i64,
        leader: Option<i32>,
        timeout_ms: i64,
    ) -> Self {
        Self {
            tp,
            progress,
            required,
            leader: leader.unwrap_or(-1),
            timeout_ms,
            outcome: Mutex::new(None),
        }
    }

    /// How the produce ended, once it has.
    pub(crate) fn outcome(&self) -> Option<Result<()>> {
        self.outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set(&self, outcome: Result<()>) {
        let mut slot = self
            .outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(outcome);
        }
    }

    /// Kafka's `checkEnoughReplicasReachOffset` and leadership check.
    fn evaluate(&self) -> Option<Result<()>> {
        let p = &self.progress;
        // Kafka fails a delayed produce only when the broker is no longer
        // the leader; the cluster checks it after every change, so a
        // leadership lost and regained is seen as lost.
        if p.leader.load(Ordering::Acquire) != self.leader {
            return Some(Err(BrokerError::NotLeaderOrFollower {
                topic: self.tp.topic.clone(),
                partition: self.tp.partition,
                broker: self.leader,
            }));
        }
        if p.high_watermark.load(Ordering::Acquire) < self.required {
            return None;
        }
        let (isr, min_isr) = (
            p.isr.load(Ordering::Acquire),
            p.min_isr.load(Ordering::Acquire),
        );
        if isr < min_isr {
            return Some(Err(BrokerError::NotEnoughReplicasAfterAppend {
                topic: self.tp.topic.clone(),
                partition: self.tp.partition,
                offset: self.required - 1,
                isr,
                min_isr: i32::try_from(min_isr).unwrap_or(i32::MAX),
            }));
        }
        Some(Ok(()))
    }
}

impl crate::purgatory::DelayedOperation for DelayedProduce {
    fn try_complete(&self) -> bool {
        match self.evaluate() {
            Some(outcome) => {
                self.set(outcome);
                true
            }
            None => false,
        }
    }

    fn on_complete(&self) {}

    fn on_expiration(&self) {
        self.set(Err(BrokerError::RequestTimedOut {
            topic: self.tp.topic.clone(),
            partition: self.tp.partition,
            timeout_ms: self.timeout_ms,
        }));
    }
}

/// A fetch waiting for `fetch.min.bytes` to become readable, or for
/// `fetch.max.wait.ms` to pass.
#[derive(Debug)]
pub(crate) struct DelayedFetch {
    /// The readable bytes past the consumer's positions, as the cluster
    /// last measured them.
    pub(crate) available_bytes: AtomicI64,
    min_bytes: i64,
    expired: AtomicBool,
}

impl DelayedFetch {
    pub(crate) fn new(min_bytes: i64, available_bytes: i64) -> Self {
        Self {
            available_bytes: AtomicI64::new(available_bytes),
            min_bytes,
            expired: AtomicBool::new(false),
        }
    }

    /// Whether it ended by `fetch.max.wait.ms` rather than by data.
    pub(crate) fn expired(&self) -> bool {
        self.expired.load(Ordering::Acquire)
    }
}

impl crate::purgatory::DelayedOperation for DelayedFetch {
    fn try_complete(&self) -> bool {
        self.available_bytes.load(Ordering::Acquire) >= self.min_bytes
    }

    fn on_complete(&self) {}

    fn on_expiration(&self) {
        self.expired.store(true, Ordering::Release);
    }
}
