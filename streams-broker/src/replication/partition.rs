//! A partition's replicas and the controller's view of it: the assigned
//! brokers, the leader and its epoch, the in-sync replicas, and each
//! replica's own log with what its broker believes about the leadership.

use crate::log::{LogConfig, UnifiedLog};
use crate::topic_partition::TopicPartition;

/// A broker's id (`node.id`); the simulated cluster numbers its brokers
/// from 1.
pub type BrokerId = i32;

/// One broker's copy of a partition.
#[derive(Debug, Clone)]
pub(crate) struct Replica {
    pub(crate) broker: BrokerId,
    pub(crate) log: UnifiedLog,
    /// The leader this broker believes in, and its epoch: stale while the
    /// broker misses the controller's updates (paused, cut off).
    pub(crate) believed_leader: Option<BrokerId>,
    pub(crate) believed_epoch: i32,
    /// The offset up to which the log was flushed: a restart that loses
    /// unflushed data truncates here.
    pub(crate) recovery_point: i64,
    /// The cleaner's checkpoint on this broker.
    pub(crate) cleaner_checkpoint: Option<i64>,
    /// The leader's record of when this follower last caught up.
    pub(crate) last_caught_up_ms: i64,
    /// The log end offset this follower reported to the current leader in
    /// its last fetch; unknown (`None`) after an election until it fetches
    /// (Kafka's `resetReplicaState`).
    pub(crate) reported_leo: Option<i64>,
}

/// A partition: the controller's view plus every replica.
#[derive(Debug, Clone)]
pub(crate) struct Partition {
    pub(crate) assignment: Vec<BrokerId>,
    pub(crate) leader: Option<BrokerId>,
    pub(crate) leader_epoch: i32,
    pub(crate) isr: Vec<BrokerId>,
    pub(crate) replicas: Vec<Replica>,
}

impl Partition {
    /// A new partition on `assignment` (the first broker leads, epoch 0,
    /// every replica in sync).
    pub(crate) fn new(
        tp: &TopicPartition,
        config: &LogConfig,
        assignment: Vec<BrokerId>,
        now_ms: i64,
    ) -> Self {
        let leader = assignment.first().copied();
        let replicas = assignment
            .iter()
            .map(|&broker| Replica {
                broker,
                log: UnifiedLog::new(tp.clone(), config.clone(), now_ms),
                believed_leader: leader,
                believed_epoch: 0,
                recovery_point: 0,
                cleaner_checkpoint: None,
                last_caught_up_ms: now_ms,
                reported_leo: Some(0),
            })
            .collect();
        Self {
            isr: assignment.clone(),
            assignment,
            leader,
            leader_epoch: 0,
            replicas,
        }
    }

    pub(crate) fn replica(&self, broker: BrokerId) -> Option<&Replica> {
        self.replicas.iter().find(|r| r.broker == broker)
    }

    pub(crate) fn replica_mut(&mut self, broker: BrokerId) -> Option<&mut Replica> {
        self.replicas.iter_mut().find(|r| r.broker == broker)
    }

    pub(crate) fn leader_replica(&self) -> Option<&Replica> {
        self.leader.and_then(|b| self.replica(b))
    }

    pub(crate) fn leader_log(&self) -> Option<&UnifiedLog> {
        self.leader_replica().map(|r| &r.log)
    }

    pub(crate) fn leader_log_mut(&mut self) -> Option<&mut UnifiedLog> {
        let leader = self.leader?;
        self.replica_mut(leader).map(|r| &mut r.log)
    }

    /// Every replica's log.
    pub(crate) fn logs_mut(&mut self) -> impl Iterator<Item = &mut UnifiedLog> {
        self.replicas.iter_mut().map(|r| &mut r.log)
    }

    /// The topic's `min.insync.replicas` (every replica has the topic's
    /// configs).
    pub(crate) fn min_insync_replicas(&self) -> usize {
        // Kafka's effectiveMinIsr: never more than the replicas.
        let configured = self.replicas.first().map_or(1, |r| {
            usize::try_from(r.log.config().min_insync_replicas).unwrap_or(1)
        });
        configured.min(self.assignment.len()).max(1)
    }

    /// Moves the leader's high watermark to the smallest log end offset of
    /// the in-sync replicas, never back, and not while the ISR is below
    /// `min.insync.replicas` (Kafka 3.7+). Returns whether it moved.
    pub(crate) fn maybe_advance_high_watermark(&mut self) -> bool {
        let Some(leader) = self.leader else {
            return false;
        };
        if self.isr.len() < self.min_insync_replicas() {
            return false;
        }
        let isr = self.isr.clone();
        // The leader knows its own log end offset; a follower's only as it
        // last reported it in a fetch (unknown blocks the high watermark).
        let mut min_leo = Some(i64::MAX);
        for r in self.replicas.iter().filter(|r| isr.contains(&r.broker)) {
            let leo = if r.broker == leader {
                Some(r.log.log_end_offset())
            } else {
                r.reported_leo
            };
            min_leo = match (min_leo, leo) {
                (Some(m), Some(l)) => Some(m.min(l)),
                _ => None,
            };
        }
        let Some(replica) = self.replica_mut(leader) else {
            return false;
        };
        match min_leo {
            Some(hw) if hw > replica.log.high_watermark() => {
                replica.log.set_high_watermark(hw);
                true
            }
            _ => false,
        }
    }
}
