//! Faults, each one call on the cluster: stop a broker, restart it
//! (keeping its log, or losing what was not flushed), pause it (a long GC
//! pause), cut it off from the controller or from one peer, heal, and
//! force an election. Plus what a test reads back: the timeline, each
//! partition's leadership and each replica's log.

use crate::cluster::{Cluster, State};
use crate::error::{BrokerError, Result};
use crate::record::LogRecord;
use crate::replication::{
    BrokerId, BrokerStatus, Event, PartitionState, TimelineEvent, TruncationReason,
};
use crate::topic_partition::TopicPartition;

impl State {
    fn node_mut(&mut self, broker: BrokerId) -> Result<&mut crate::replication::BrokerNode> {
        let count = self.brokers.len();
        self.brokers
            .iter_mut()
            .find(|b| b.id == broker)
            .ok_or(BrokerError::UnknownBroker {
                broker,
                brokers: count,
            })
    }

    fn expect_status(
        &mut self,
        broker: BrokerId,
        needed: BrokerStatus,
        operation: &'static str,
    ) -> Result<()> {
        let node = self.node_mut(broker)?;
        if node.status == needed {
            return Ok(());
        }
        let state = match node.status {
            BrokerStatus::Running => "running",
            BrokerStatus::Paused => "paused",
            BrokerStatus::Stopped => "stopped",
        };
        let needed = match needed {
            BrokerStatus::Running => "running",
            BrokerStatus::Paused => "paused",
            BrokerStatus::Stopped => "stopped",
        };
        Err(BrokerError::BrokerState {
            broker,
            state,
            operation,
            needed,
        })
    }

    fn after_broker_returns(&mut self) {
        for tp in self.all_partitions() {
            self.sync_metadata(&tp);
        }
        for tp in self.all_partitions() {
            let offline = self.partition(&tp).is_ok_and(|p| p.leader.is_none());
            if offline {
                self.try_elect_offline(&tp);
            }
        }
    }

    pub(crate) fn all_partitions(&self) -> Vec<TopicPartition> {
        self.topics
            .iter()
            .flat_map(|(name, t)| {
                (0..t.partitions.len()).map(move |p| {
                    TopicPartition::new(name.clone(), i32::try_from(p).unwrap_or(i32::MAX))
                })
            })
            .collect()
    }
}

impl Cluster {
    /// Stops a broker (its log is kept as flushed: a clean shutdown
    /// flushes); the controller fences it at once and moves its
    /// leaderships.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`], or [`BrokerError::BrokerState`] when
    /// it is not running or paused.
    pub fn stop_broker(&self, broker: BrokerId) -> Result<()> {
        let mut state = self.state();
        let node = state.node_mut(broker)?;
        if node.status == BrokerStatus::Stopped {
            return state.expect_status(broker, BrokerStatus::Running, "stop");
        }
        node.status = BrokerStatus::Stopped;
        state.record(Event::BrokerStopped { broker });
        state.fence_broker(broker);
        state.after_change();
        Ok(())
    }

    /// Restarts a stopped broker with its log, or, with `lose_unflushed`,
    /// without what it had not flushed (see [`Cluster::flush_broker`]). It
    /// registers with the controller again, learns the leadership, and its
    /// followers catch up.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`], or [`BrokerError::BrokerState`] when
    /// it is not stopped.
    pub fn restart_broker(&self, broker: BrokerId, lose_unflushed: bool) -> Result<()> {
        let mut state = self.state();
        state.expect_status(broker, BrokerStatus::Stopped, "restart")?;
        let now = state.now_ms;
        let mut events = Vec::new();
        if lose_unflushed {
            for tp in state.all_partitions() {
                if let Ok(p) = state.partition_mut(&tp)
                    && let Some(r) = p.replica_mut(broker)
                {
                    let from = r.log.log_end_offset();
                    let to = r.recovery_point;
                    r.log.truncate_to(to, now);
                    if r.log.log_end_offset() != from {
                        events.push(Event::Truncated {
                            tp: tp.clone(),
                            broker,
                            from,
                            to: r.log.log_end_offset(),
                            reason: TruncationReason::Unflushed,
                        });
                    }
                }
            }
        }
        // The leaders know nothing of what the restarted broker holds.
        for tp in state.all_partitions() {
            if let Ok(p) = state.partition_mut(&tp)
                && let Some(r) = p.replica_mut(broker)
            {
                r.reported_leo = None;
            }
        }
        let node = state.node_mut(broker)?;
        node.status = BrokerStatus::Running;
        node.fenced = false;
        node.silent_since_ms = None;
        state.record(Event::BrokerStarted { broker });
        for e in events {
            state.record(e);
        }
        state.after_broker_returns();
        state.after_change();
        Ok(())
    }

    /// Freezes a broker (a long GC pause): it keeps its state and answers
    /// nothing; the controller fences it after
    /// `broker.session.timeout.ms`.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`], or [`BrokerError::BrokerState`] when
    /// it is not running.
    pub fn pause_broker(&self, broker: BrokerId) -> Result<()> {
        let mut state = self.state();
        state.expect_status(broker, BrokerStatus::Running, "pause")?;
        let now = state.now_ms;
        let node = state.node_mut(broker)?;
        node.status = BrokerStatus::Paused;
        node.silent_since_ms.get_or_insert(now);
        state.record(Event::BrokerPaused { broker });
        Ok(())
    }

    /// Resumes a paused broker, believing what it believed: it learns what
    /// changed only from the controller, after it has acted on its old
    /// beliefs (a zombie's first fetch uses its stale epoch).
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`], or [`BrokerError::BrokerState`] when
    /// it is not paused.
    pub fn resume_broker(&self, broker: BrokerId) -> Result<()> {
        let mut state = self.state();
        state.expect_status(broker, BrokerStatus::Paused, "resume")?;
        let node = state.node_mut(broker)?;
        node.status = BrokerStatus::Running;
        if !node.isolated {
            node.silent_since_ms = None;
            node.fenced = false;
        }
        state.record(Event::BrokerResumed { broker });
        state.after_change();
        Ok(())
    }

    /// Cuts a broker off from the controller (it still talks to its
    /// peers); the controller fences it after `broker.session.timeout.ms`.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`].
    pub fn isolate_broker(&self, broker: BrokerId) -> Result<()> {
        let mut state = self.state();
        let now = state.now_ms;
        let node = state.node_mut(broker)?;
        node.isolated = true;
        node.silent_since_ms.get_or_insert(now);
        state.record(Event::BrokerIsolated { broker });
        Ok(())
    }

    /// Cuts the link between two brokers (both ways).
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`] for either.
    pub fn cut_link(&self, a: BrokerId, b: BrokerId) -> Result<()> {
        let mut state = self.state();
        state.node_mut(a)?;
        state.node_mut(b)?;
        state.cut_links.insert((a.min(b), a.max(b)));
        state.record(Event::LinkCut { a, b });
        Ok(())
    }

    /// Restores one cut link.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`] for either.
    pub fn restore_link(&self, a: BrokerId, b: BrokerId) -> Result<()> {
        let mut state = self.state();
        state.node_mut(a)?;
        state.node_mut(b)?;
        state.cut_links.remove(&(a.min(b), a.max(b)));
        Ok(())
    }

    /// Heals every cut link and isolation; isolated brokers register with
    /// the controller again.
    pub fn heal(&self) {
        let mut state = self.state();
        state.cut_links.clear();
        for node in &mut state.brokers {
            if node.isolated {
                node.isolated = false;
                if node.is_running() {
                    node.silent_since_ms = None;
                    node.fenced = false;
                }
            }
        }
        state.record(Event::Healed);
        state.after_broker_returns();
        state.after_change();
    }

    /// Forces an election of `tp`: of `leader` if given (it must be alive
    /// and in sync, or unclean election allowed), else of the first alive
    /// in-sync replica. Returns the new leader.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`],
    /// [`BrokerError::UnknownBroker`], or
    /// [`BrokerError::LeaderNotAvailable`] when no replica may lead.
    pub fn force_election(
        &self,
        tp: &TopicPartition,
        leader: Option<BrokerId>,
    ) -> Result<BrokerId> {
        let mut state = self.state();
        if let Some(b) = leader {
            state.node_mut(b)?;
        }
        state.partition(tp)?;
        let elected = state.elect(tp, leader);
        state.after_change();
        elected.ok_or_else(|| BrokerError::LeaderNotAvailable {
            topic: tp.topic.clone(),
            partition: tp.partition,
        })
    }

    /// Flushes a broker's logs: a later restart that loses unflushed data
    /// keeps everything up to here.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`].
    pub fn flush_broker(&self, broker: BrokerId) -> Result<()> {
        let mut state = self.state();
        state.node_mut(broker)?;
        for tp in state.all_partitions() {
            if let Ok(p) = state.partition_mut(&tp)
                && let Some(r) = p.replica_mut(broker)
            {
                r.recovery_point = r.log.log_end_offset();
            }
        }
        Ok(())
    }

    /// Runs one round of replication now, without moving the clock.
    pub fn replicate(&self) {
        let mut state = self.state();
        state.replication_round();
        state.after_change();
    }

    /// A broker's state.
    ///
    /// # Errors
    /// [`BrokerError::UnknownBroker`].
    pub fn broker_status(&self, broker: BrokerId) -> Result<BrokerStatus> {
        let mut state = self.state();
        Ok(state.node_mut(broker)?.status)
    }

    /// Every event so far, oldest first.
    pub fn timeline(&self) -> Vec<TimelineEvent> {
        self.state().timeline.clone()
    }

    /// A partition's replicas, leader, epoch, ISR and high watermark.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn partition_state(&self, tp: &TopicPartition) -> Result<PartitionState> {
        self.state().partition_state(tp)
    }

    /// Each replica's log end offset, by broker.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn replica_log_end_offsets(&self, tp: &TopicPartition) -> Result<Vec<(BrokerId, i64)>> {
        let state = self.state();
        Ok(state
            .partition(tp)?
            .replicas
            .iter()
            .map(|r| (r.broker, r.log.log_end_offset()))
            .collect())
    }

    /// Every record of one broker's replica, in offset order (what that
    /// broker would serve if it led).
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`] or
    /// [`BrokerError::UnknownBroker`].
    pub fn replica_records(&self, tp: &TopicPartition, broker: BrokerId) -> Result<Vec<LogRecord>> {
        let state = self.state();
        let count = state.brokers.len();
        let p = state.partition(tp)?;
        p.replica(broker)
            .map(|r| r.log.records())
            .ok_or(BrokerError::UnknownBroker {
                broker,
                brokers: count,
            })
    }

    /// One broker's leader-epoch cache of a partition, as
    /// `(epoch, start offset)`.
    ///
    /// # Errors
    /// As [`Cluster::replica_records`].
    pub fn replica_epochs(&self, tp: &TopicPartition, broker: BrokerId) -> Result<Vec<(i32, i64)>> {
        let state = self.state();
        let count = state.brokers.len();
        let p = state.partition(tp)?;
        p.replica(broker)
            .map(|r| {
                r.log
                    .epoch_cache()
                    .entries()
                    .iter()
                    .map(|e| (e.epoch, e.start_offset))
                    .collect()
            })
            .ok_or(BrokerError::UnknownBroker {
                broker,
                brokers: count,
            })
    }
}
