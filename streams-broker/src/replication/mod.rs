//! Replication: brokers holding replicas of each partition, a controller
//! that elects leaders and bumps the leader epoch on every election, the
//! in-sync replica set that shrinks after `replica.lag.time.max.ms` and
//! grows when a follower catches up, and followers that fetch from their
//! leader with their leader epoch and last fetched epoch (KIP-320): a stale
//! epoch is fenced (`FENCED_LEADER_EPOCH`), a newer one unknown
//! (`UNKNOWN_LEADER_EPOCH`), and a diverging log is truncated where the
//! leader's epoch ended (KIP-101/KIP-279), never to a guess.
//!
//! [`ReplicationMode::LegacyHighWatermark`] keeps the pre-KIP-101 rules: no
//! epoch in the fetch, truncation to the high watermark only when the
//! leader changes. A paused follower that misses elections and comes back
//! to the same leader then keeps records the leader no longer has
//! (KAFKA-6880).
//!
//! Every step is recorded in the cluster's timeline
//! ([`Cluster::timeline`](crate::Cluster::timeline)).
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::builder().brokers(3).build();
//! cluster.admin().create_topic(NewTopic::new("t", 1).replication_factor(3))?;
//! let tp = TopicPartition::new("t", 0);
//! cluster.producer().send(ProducerRecord::new("t", "k", "v"))?; // acks=all
//! assert_eq!(cluster.replica_log_end_offsets(&tp)?, [(1, 1), (2, 1), (3, 1)]);
//!
//! cluster.stop_broker(1)?;
//! assert_eq!(cluster.partition_state(&tp)?.leader, Some(2));
//! assert_eq!(cluster.partition_state(&tp)?.leader_epoch, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod delayed;
mod faults;
mod partition;
pub mod schedule;

pub use partition::BrokerId;
pub(crate) use partition::Partition;

use std::fmt;

use crate::cluster::State;
use crate::topic_partition::TopicPartition;

/// How followers find where their log diverges from the leader's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplicationMode {
    /// Kafka since 2.0/2.7 (KIP-101, KIP-279, KIP-320): fetches carry the
    /// follower's leader epoch and last fetched epoch; a diverging follower
    /// truncates to the leader's end offset of that epoch.
    #[default]
    LeaderEpochs,
    /// Before KIP-101: no epochs in fetches; a follower truncates to its
    /// high watermark when it learns of a new leader, and not at all when
    /// the leader is the same broker again (KAFKA-6880).
    LegacyHighWatermark,
}

/// A broker's state, as the faults leave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerStatus {
    /// Serving.
    Running,
    /// Frozen (a long GC pause): keeps its state, answers nothing, and
    /// comes back believing what it believed.
    Paused,
    /// Down.
    Stopped,
}

impl fmt::Display for BrokerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Stopped => "stopped",
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct BrokerNode {
    pub(crate) id: BrokerId,
    pub(crate) status: BrokerStatus,
    /// Cut off from the controller.
    pub(crate) isolated: bool,
    /// The controller's view: not alive (stopped, or its session expired).
    pub(crate) fenced: bool,
    /// Since when the controller has not heard from it.
    pub(crate) silent_since_ms: Option<i64>,
}

impl BrokerNode {
    pub(crate) fn new(id: BrokerId, _now_ms: i64) -> Self {
        Self {
            id,
            status: BrokerStatus::Running,
            isolated: false,
            fenced: false,
            silent_since_ms: None,
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        self.status == BrokerStatus::Running
    }

    pub(crate) fn reaches_controller(&self) -> bool {
        self.is_running() && !self.isolated
    }

    pub(crate) fn alive(&self) -> bool {
        self.status != BrokerStatus::Stopped && !self.fenced
    }
}

/// Why a follower truncated its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TruncationReason {
    /// The leader's end offset for the follower's last epoch (KIP-101).
    DivergingEpoch {
        /// The epoch the leader answered for.
        epoch: i32,
        /// Where that epoch ends on the leader.
        end_offset: i64,
    },
    /// The follower's high watermark, on learning of a new leader
    /// (pre-KIP-101).
    HighWatermark,
    /// The leader's log ends before the follower's (pre-KIP-101
    /// out-of-range handling).
    LeaderLogEnd,
    /// A restart lost what was not flushed.
    Unflushed,
}

/// One step of the cluster's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A broker was stopped.
    BrokerStopped {
        /// The broker.
        broker: BrokerId,
    },
    /// A broker started again.
    BrokerStarted {
        /// The broker.
        broker: BrokerId,
    },
    /// A broker froze.
    BrokerPaused {
        /// The broker.
        broker: BrokerId,
    },
    /// A paused broker resumed.
    BrokerResumed {
        /// The broker.
        broker: BrokerId,
    },
    /// A broker was cut off from the controller.
    BrokerIsolated {
        /// The broker.
        broker: BrokerId,
    },
    /// The link between two brokers was cut.
    LinkCut {
        /// One broker.
        a: BrokerId,
        /// The other.
        b: BrokerId,
    },
    /// Every cut and isolation healed.
    Healed,
    /// The controller fenced a broker it lost (stopped, or silent past
    /// `broker.session.timeout.ms`).
    BrokerFenced {
        /// The broker.
        broker: BrokerId,
    },
    /// The controller elected a leader.
    LeaderElected {
        /// The partition.
        tp: TopicPartition,
        /// The new leader.
        leader: BrokerId,
        /// The new leader epoch.
        epoch: i32,
        /// Whether the leader came from outside the ISR.
        unclean: bool,
    },
    /// No replica could lead.
    LeaderLost {
        /// The partition.
        tp: TopicPartition,
        /// The epoch the partition is left at.
        epoch: i32,
    },
    /// The leader removed a follower from the ISR.
    IsrShrunk {
        /// The partition.
        tp: TopicPartition,
        /// The follower removed.
        broker: BrokerId,
        /// The ISR after.
        isr: Vec<BrokerId>,
    },
    /// A caught-up follower joined the ISR.
    IsrExpanded {
        /// The partition.
        tp: TopicPartition,
        /// The follower added.
        broker: BrokerId,
        /// The ISR after.
        isr: Vec<BrokerId>,
    },
    /// A fetch with a stale leader epoch was refused
    /// (`FENCED_LEADER_EPOCH`).
    FetchFenced {
        /// The partition.
        tp: TopicPartition,
        /// The follower.
        broker: BrokerId,
        /// The broker it fetched from.
        leader: BrokerId,
        /// The epoch it sent.
        epoch: i32,
        /// The leader's epoch.
        leader_epoch: i32,
    },
    /// A fetch with a newer leader epoch than the leader knows
    /// (`UNKNOWN_LEADER_EPOCH`).
    FetchUnknownEpoch {
        /// The partition.
        tp: TopicPartition,
        /// The follower.
        broker: BrokerId,
        /// The broker it fetched from.
        leader: BrokerId,
        /// The epoch it sent.
        epoch: i32,
        /// The leader's epoch.
        leader_epoch: i32,
    },
    /// A fetch from a broker that is no longer the leader
    /// (`NOT_LEADER_OR_FOLLOWER`).
    FetchNotLeader {
        /// The partition.
        tp: TopicPartition,
        /// The follower.
        broker: BrokerId,
        /// The broker it fetched from.
        asked: BrokerId,
    },
    /// A follower truncated its log.
    Truncated {
        /// The partition.
        tp: TopicPartition,
        /// The broker.
        broker: BrokerId,
        /// Its log end offset before.
        from: i64,
        /// Its log end offset after.
        to: i64,
        /// Why.
        reason: TruncationReason,
    },
    /// A broker learned the current leader and epoch from the controller.
    MetadataUpdated {
        /// The partition.
        tp: TopicPartition,
        /// The broker.
        broker: BrokerId,
        /// The leader it now knows.
        leader: Option<BrokerId>,
        /// The epoch it now knows.
        epoch: i32,
    },
}

/// An event and when it happened, on the cluster's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEvent {
    /// When.
    pub at_ms: i64,
    /// What.
    pub event: Event,
}

fn list(brokers: &[BrokerId]) -> String {
    let items: Vec<String> = brokers.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

impl fmt::Display for TimelineEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8} ms  ", self.at_ms)?;
        match &self.event {
            Event::BrokerStopped { broker } => write!(f, "broker {broker} stopped"),
            Event::BrokerStarted { broker } => write!(f, "broker {broker} started"),
            Event::BrokerPaused { broker } => write!(f, "broker {broker} paused"),
            Event::BrokerResumed { broker } => write!(f, "broker {broker} resumed"),
            Event::BrokerIsolated { broker } => {
                write!(f, "broker {broker} cut off from the controller")
            }
            Event::LinkCut { a, b } => write!(f, "link between brokers {a} and {b} cut"),
            Event::Healed => write!(f, "network healed"),
            Event::BrokerFenced { broker } => write!(f, "controller fenced broker {broker}"),
            Event::LeaderElected {
                tp,
                leader,
                epoch,
                unclean,
            } => write!(
                f,
                "{tp}: broker {leader} elected leader, epoch {epoch}{}",
                if *unclean { " (unclean)" } else { "" }
            ),
            Event::LeaderLost { tp, epoch } => write!(f, "{tp}: no leader, epoch {epoch}"),
            Event::IsrShrunk { tp, broker, isr } => {
                write!(f, "{tp}: broker {broker} left the ISR, now {}", list(isr))
            }
            Event::IsrExpanded { tp, broker, isr } => {
                write!(f, "{tp}: broker {broker} joined the ISR, now {}", list(isr))
            }
            Event::FetchFenced {
                tp,
                broker,
                leader,
                epoch,
                leader_epoch,
            } => write!(
                f,
                "{tp}: broker {broker} fetched from broker {leader} with epoch {epoch}: FENCED_LEADER_EPOCH (leader epoch {leader_epoch})"
            ),
            Event::FetchUnknownEpoch {
                tp,
                broker,
                leader,
                epoch,
                leader_epoch,
            } => write!(
                f,
                "{tp}: broker {broker} fetched from broker {leader} with epoch {epoch}: UNKNOWN_LEADER_EPOCH (leader epoch {leader_epoch})"
            ),
            Event::FetchNotLeader { tp, broker, asked } => write!(
                f,
                "{tp}: broker {broker} fetched from broker {asked}: NOT_LEADER_OR_FOLLOWER"
            ),
            Event::Truncated {
                tp,
                broker,
                from,
                to,
                reason,
            } => {
                write!(
                    f,
                    "{tp}: broker {broker} truncated its log from {from} to {to} ("
                )?;
                match reason {
                    TruncationReason::DivergingEpoch { epoch, end_offset } => {
                        write!(f, "the leader's epoch {epoch} ends at {end_offset}")?
                    }
                    TruncationReason::HighWatermark => write!(f, "its high watermark")?,
                    TruncationReason::LeaderLogEnd => write!(f, "the leader's log end")?,
                    TruncationReason::Unflushed => write!(f, "lost what was not flushed")?,
                }
                write!(f, ")")
            }
            Event::MetadataUpdated {
                tp,
                broker,
                leader,
                epoch,
            } => match leader {
                Some(l) => write!(f, "{tp}: broker {broker} learns leader {l}, epoch {epoch}"),
                None => write!(
                    f,
                    "{tp}: broker {broker} learns there is no leader, epoch {epoch}"
                ),
            },
        }
    }
}

/// A partition's replication state as the controller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    /// The replicas' brokers, the preferred leader first.
    pub replicas: Vec<BrokerId>,
    /// The leader, if any.
    pub leader: Option<BrokerId>,
    /// The leader epoch.
    pub leader_epoch: i32,
    /// The in-sync replicas.
    pub isr: Vec<BrokerId>,
    /// The leader's high watermark (0 without a leader).
    pub high_watermark: i64,
}

impl State {
    /// What waiting operations read of `tp`, published again.
    pub(crate) fn publish(
        &mut self,
        tp: &TopicPartition,
    ) -> Option<std::sync::Arc<delayed::PartitionProgress>> {
        let p = self.partition(tp).ok()?;
        let (hw, leader, epoch, isr) = (
            p.leader_log().map_or(0, |l| l.high_watermark()),
            p.leader,
            p.leader_epoch,
            p.isr.len(),
        );
        let min_isr = p.min_insync_replicas();
        let progress = match self.progress.get(tp) {
            Some(progress) => progress.clone(),
            None => self.progress.entry(tp.clone()).or_default().clone(),
        };
        progress.publish(hw, leader, epoch, isr, min_isr);
        Some(progress)
    }

    /// After anything changed: every partition publishes, the operations
    /// watched under it are tried, waiting fetches measure what they could
    /// read now, and the purgatories' timers expire what is due.
    pub(crate) fn after_change(&mut self) {
        self.time.set(self.now_ms);
        for tp in self.partition_keys() {
            self.publish(&tp);
            self.produce_purgatory.check_and_complete(&tp);
        }
        if !self.pending_fetches.is_empty() {
            let pending = std::mem::take(&mut self.pending_fetches);
            let mut still = Vec::new();
            for (op, positions) in pending {
                let bytes = self.readable_bytes(&positions);
                op.operation()
                    .available_bytes
                    .store(bytes, std::sync::atomic::Ordering::Release);
                for (tp, _) in &positions {
                    self.fetch_purgatory.check_and_complete(tp);
                }
                if !op.is_completed() {
                    still.push((op, positions));
                }
            }
            self.pending_fetches = still;
        }
        self.produce_purgatory.advance_clock(0);
        self.fetch_purgatory.advance_clock(0);
        self.pending_fetches.retain(|(op, _)| !op.is_completed());
    }

    /// The bytes of the batches between each position and its partition's
    /// high watermark, on the leader.
    pub(crate) fn readable_bytes(&self, positions: &[(TopicPartition, i64)]) -> i64 {
        positions
            .iter()
            .filter_map(|(tp, position)| {
                let log = self.log(tp).ok()?;
                let batches = log.read(*position, usize::MAX).ok()?;
                Some(
                    batches
                        .iter()
                        .map(|b| b.size_in_bytes() as i64)
                        .sum::<i64>(),
                )
            })
            .sum()
    }

    pub(crate) fn record(&mut self, event: Event) {
        let at_ms = self.now_ms;
        self.timeline.push(TimelineEvent { at_ms, event });
    }

    fn link_up(&self, a: BrokerId, b: BrokerId) -> bool {
        let (x, y) = (a.min(b), a.max(b));
        !self.cut_links.contains(&(x, y))
    }

    fn broker_running(&self, id: BrokerId) -> bool {
        self.broker(id).is_some_and(BrokerNode::is_running)
    }

    fn broker_alive(&self, id: BrokerId) -> bool {
        self.broker(id).is_some_and(BrokerNode::alive)
    }

    fn broker_reaches_controller(&self, id: BrokerId) -> bool {
        self.broker(id).is_some_and(BrokerNode::reaches_controller)
    }

    fn partition_keys(&self) -> Vec<TopicPartition> {
        self.topics
            .iter()
            .flat_map(|(name, t)| {
                (0..t.partitions.len()).map(move |p| {
                    TopicPartition::new(name.clone(), i32::try_from(p).unwrap_or(i32::MAX))
                })
            })
            .collect()
    }

    /// Whether any partition has more than one replica (replication has
    /// work to do).
    pub(crate) fn is_replicated(&self) -> bool {
        self.brokers.len() > 1
    }

    /// One round of replication: every running follower fetches from the
    /// leader it believes in; then leaders shrink their ISR, the controller
    /// fences silent brokers, and brokers that reach it learn the current
    /// leadership.
    pub(crate) fn replication_round(&mut self) {
        for tp in self.partition_keys() {
            self.fetch_round(&tp);
        }
        self.shrink_isrs();
        self.fence_silent_brokers();
        for tp in self.partition_keys() {
            self.sync_metadata(&tp);
            self.elect_if_offline(&tp);
        }
    }

    fn fetch_round(&mut self, tp: &TopicPartition) {
        let Ok(partition) = self.partition(tp) else {
            return;
        };
        let followers: Vec<(BrokerId, BrokerId)> = partition
            .replicas
            .iter()
            .filter_map(|r| match r.believed_leader {
                Some(l) if l != r.broker => Some((r.broker, l)),
                _ => None,
            })
            .collect();
        for (follower, leader) in followers {
            if self.broker_running(follower)
                && self.broker_running(leader)
                && self.link_up(follower, leader)
            {
                self.fetch(tp, follower, leader);
            }
        }
    }

    /// One fetch of `follower` from `leader`, with Kafka's checks.
    fn fetch(&mut self, tp: &TopicPartition, follower: BrokerId, leader: BrokerId) {
        let now = self.now_ms;
        let mode = self.config.replication_mode;
        let leader_reaches_controller = self.broker_reaches_controller(leader);
        // Kafka's isReplicaIsrEligible (KIP-841): a fenced or stopped broker
        // does not join the ISR.
        let follower_eligible = self.broker_alive(follower);
        let Ok(partition) = self.partition(tp) else {
            return;
        };
        let (Some(l), Some(f)) = (partition.replica(leader), partition.replica(follower)) else {
            return;
        };
        if l.believed_leader != Some(leader) {
            self.record(Event::FetchNotLeader {
                tp: tp.clone(),
                broker: follower,
                asked: leader,
            });
            return;
        }
        let (leader_epoch, follower_epoch) = (l.believed_epoch, f.believed_epoch);
        if mode == ReplicationMode::LeaderEpochs {
            if follower_epoch < leader_epoch {
                self.record(Event::FetchFenced {
                    tp: tp.clone(),
                    broker: follower,
                    leader,
                    epoch: follower_epoch,
                    leader_epoch,
                });
                return;
            }
            if follower_epoch > leader_epoch {
                self.record(Event::FetchUnknownEpoch {
                    tp: tp.clone(),
                    broker: follower,
                    leader,
                    epoch: follower_epoch,
                    leader_epoch,
                });
                return;
            }
        }
        let leader_cache = l.log.epoch_cache().clone();
        // The follower must also have caught up to the start of the
        // leader's current epoch to join the ISR.
        let epoch_start = leader_cache
            .entries()
            .iter()
            .rev()
            .find(|e| e.epoch <= leader_epoch)
            .map_or(0, |e| e.start_offset);
        let (l_leo, l_hw, l_lso) = (
            l.log.log_end_offset(),
            l.log.high_watermark(),
            l.log.log_start_offset(),
        );
        let mut truncations = Vec::new();
        let mut diverged = false;
        {
            let Ok(partition) = self.partition_mut(tp) else {
                return;
            };
            let Some(f) = partition.replica_mut(follower) else {
                return;
            };
            if mode == ReplicationMode::LeaderEpochs {
                // KIP-320: the leader checks the last fetched epoch; a
                // diverging follower truncates and asks again until its
                // last epoch is one the leader has, ending where the
                // leader's does (Kafka's AbstractFetcherThread).
                let rounds = f.log.epoch_cache().entries().len() + 1;
                for _ in 0..rounds {
                    let Some(last_epoch) = f.log.epoch_cache().latest_epoch() else {
                        break;
                    };
                    let f_leo = f.log.log_end_offset();
                    let entries_before = f.log.epoch_cache().entries().len();
                    match leader_cache.end_offset_for(last_epoch, l_leo) {
                        Some((epoch, end)) if epoch == last_epoch && end >= f_leo => break,
                        Some((epoch, end)) => {
                            let follower = f.log.end_offset_for_epoch(epoch);
                            let to = match follower {
                                Some((_, follower_end)) => end.min(follower_end),
                                None => end.min(f_leo),
                            }
                            .min(f_leo);
                            f.log.truncate_to(to, now);
                            truncations.push((
                                f_leo,
                                f.log.log_end_offset(),
                                TruncationReason::DivergingEpoch {
                                    epoch,
                                    end_offset: end,
                                },
                            ));
                            let unchanged = f.log.log_end_offset() == f_leo
                                && f.log.epoch_cache().entries().len() == entries_before;
                            if unchanged {
                                // Nothing left to cut: the follower has no
                                // data of the diverging epochs.
                                break;
                            }
                        }
                        None => {
                            // The leader knows no epoch at or below the
                            // follower's (Kafka answers OffsetOutOfRange):
                            // keep only what is committed.
                            let hw = f.log.high_watermark();
                            f.log.truncate_to(hw, now);
                            truncations.push((
                                f_leo,
                                f.log.log_end_offset(),
                                TruncationReason::HighWatermark,
                            ));
                            break;
                        }
                    }
                }
                // Converged only when the last epoch is one the leader has,
                // ending no earlier than the follower's log.
                let converged = f.log.epoch_cache().latest_epoch().is_none_or(|last| {
                    leader_cache
                        .end_offset_for(last, l_leo)
                        .is_some_and(|(e, end)| e == last && end >= f.log.log_end_offset())
                });
                if !converged {
                    diverged = true;
                }
            }
            let f_leo = f.log.log_end_offset();
            if f_leo > l_leo {
                f.log.truncate_to(l_leo, now);
                truncations.push((
                    f_leo,
                    f.log.log_end_offset(),
                    TruncationReason::LeaderLogEnd,
                ));
            }
        }
        for (from, to, reason) in truncations {
            if from != to {
                self.record(Event::Truncated {
                    tp: tp.clone(),
                    broker: follower,
                    from,
                    to,
                    reason,
                });
            }
        }
        if diverged {
            // Truncation has not converged: no append, no ISR change; the
            // next fetch asks again.
            return;
        }
        let Ok(partition) = self.partition_mut(tp) else {
            return;
        };
        let fetch_offset = partition
            .replica(follower)
            .map_or(0, |f| f.log.log_end_offset());
        let batches = partition
            .replica(leader)
            .and_then(|l| {
                l.log
                    .read_for_follower(fetch_offset.max(l_lso), usize::MAX)
                    .ok()
            })
            .unwrap_or_default();
        let Some(f) = partition.replica_mut(follower) else {
            return;
        };
        f.log.append_as_follower(&batches, now);
        let f_leo = f.log.log_end_offset();
        if f_leo >= l_leo {
            f.last_caught_up_ms = now;
        }
        let current_leadership =
            partition.leader == Some(leader) && partition.leader_epoch == leader_epoch;
        let Some(f) = partition.replica_mut(follower) else {
            return;
        };
        if current_leadership || mode == ReplicationMode::LegacyHighWatermark {
            f.reported_leo = Some(f_leo);
        }
        // Only the controller's leader keeps an ISR.
        let mut expanded = None;
        if partition.leader == Some(leader)
            && partition.leader_epoch == leader_epoch
            && !partition.isr.contains(&follower)
            && f_leo >= l_hw
            && f_leo >= epoch_start
            && follower_eligible
            && leader_reaches_controller
        {
            partition.isr.push(follower);
            let order = partition.assignment.clone();
            partition
                .isr
                .sort_by_key(|b| order.iter().position(|o| o == b));
            expanded = Some(partition.isr.clone());
        }
        let hw_moved = partition.leader == Some(leader) && partition.maybe_advance_high_watermark();
        let leader_hw = partition
            .replica(leader)
            .map_or(0, |l| l.log.high_watermark());
        if let Some(f) = partition.replica_mut(follower) {
            let hw = leader_hw.min(f.log.log_end_offset());
            if hw > f.log.high_watermark() {
                f.log.set_high_watermark(hw);
            }
            // The leader's log start offset, as far as the follower has
            // committed data (delete-records reaches followers this way).
            let start = l_lso.min(f.log.high_watermark());
            let _ = f.log.maybe_increment_log_start_offset(start);
        }
        if let Some(isr) = expanded {
            self.record(Event::IsrExpanded {
                tp: tp.clone(),
                broker: follower,
                isr,
            });
        }
        if hw_moved {
            // Kafka tries the delayed produces as soon as the high watermark
            // moves (Partition.updateFollowerFetchState).
            self.publish(tp);
            self.produce_purgatory.check_and_complete(tp);
        }
    }

    /// Leaders drop followers that have not caught up for
    /// `replica.lag.time.max.ms` (the change needs the controller).
    fn shrink_isrs(&mut self) {
        let now = self.now_ms;
        let lag = self.config.replica_lag_time_max_ms;
        for tp in self.partition_keys() {
            let Ok(partition) = self.partition(&tp) else {
                continue;
            };
            let Some(leader) = partition.leader else {
                continue;
            };
            if !self.broker_reaches_controller(leader) {
                continue;
            }
            let leader_leo = partition.leader_log().map_or(0, |l| l.log_end_offset());
            let stale: Vec<BrokerId> = partition
                .isr
                .iter()
                .copied()
                .filter(|&b| b != leader)
                .filter(|&b| {
                    // Kafka's isCaughtUp: at the leader's end, or caught up
                    // within replica.lag.time.max.ms.
                    partition.replica(b).is_some_and(|r| {
                        r.reported_leo != Some(leader_leo) && now - r.last_caught_up_ms > lag
                    })
                })
                .collect();
            for broker in stale {
                let Ok(partition) = self.partition_mut(&tp) else {
                    continue;
                };
                partition.isr.retain(|b| *b != broker);
                let isr = partition.isr.clone();
                let hw_moved = partition.maybe_advance_high_watermark();
                self.record(Event::IsrShrunk {
                    tp: tp.clone(),
                    broker,
                    isr,
                });
                if hw_moved {
                    self.publish(&tp);
                    self.produce_purgatory.check_and_complete(&tp);
                }
            }
        }
    }

    /// The controller fences brokers silent past the session timeout.
    fn fence_silent_brokers(&mut self) {
        let now = self.now_ms;
        let timeout = self.config.broker_session_timeout_ms;
        let silent: Vec<BrokerId> = self
            .brokers
            .iter()
            .filter(|b| !b.fenced && b.silent_since_ms.is_some_and(|t| now - t >= timeout))
            .map(|b| b.id)
            .collect();
        for broker in silent {
            self.fence_broker(broker);
        }
    }

    /// The controller loses `broker`: out of every ISR (never emptying
    /// one), and a new leader where it led.
    pub(crate) fn fence_broker(&mut self, broker: BrokerId) {
        let already = self
            .brokers
            .iter_mut()
            .find(|b| b.id == broker)
            .is_some_and(|node| std::mem::replace(&mut node.fenced, true));
        if !already {
            self.record(Event::BrokerFenced { broker });
        }
        // Out of every ISR even if it was fenced before (it may have been
        // let back in): a stopped broker is never in sync.
        for tp in self.partition_keys() {
            let Ok(partition) = self.partition_mut(&tp) else {
                continue;
            };
            if !partition.assignment.contains(&broker) {
                continue;
            }
            if partition.isr.len() > 1 && partition.isr.contains(&broker) {
                partition.isr.retain(|b| *b != broker);
                let isr = partition.isr.clone();
                let was_leader = partition.leader == Some(broker);
                self.record(Event::IsrShrunk {
                    tp: tp.clone(),
                    broker,
                    isr,
                });
                if !was_leader {
                    if let Ok(p) = self.partition_mut(&tp) {
                        p.maybe_advance_high_watermark();
                    }
                    continue;
                }
            }
            if self.partition(&tp).is_ok_and(|p| p.leader == Some(broker)) {
                let _ = self.elect(&tp, None);
            }
        }
    }

    /// Elects a leader for `tp`: `preferred` if given and eligible, else
    /// the first alive in-sync replica in assignment order, else (with
    /// `unclean.leader.election.enable`) the first alive replica. Bumps the
    /// epoch. Returns the leader.
    pub(crate) fn elect(
        &mut self,
        tp: &TopicPartition,
        preferred: Option<BrokerId>,
    ) -> Option<BrokerId> {
        let now = self.now_ms;
        let partition = self.partition(tp).ok()?;
        let unclean_allowed = partition
            .replicas
            .first()
            .is_some_and(|r| r.log.config().unclean_leader_election_enable);
        let alive: Vec<BrokerId> = partition
            .assignment
            .iter()
            .copied()
            .filter(|&b| self.broker_alive(b))
            .collect();
        let in_sync: Vec<BrokerId> = alive
            .iter()
            .copied()
            .filter(|b| partition.isr.contains(b))
            .collect();
        let (choice, unclean) = match preferred {
            Some(p) if in_sync.contains(&p) => (Some(p), false),
            Some(p) if alive.contains(&p) && unclean_allowed && in_sync.is_empty() => {
                (Some(p), true)
            }
            Some(_) => (None, false),
            None => match in_sync.first() {
                Some(&b) => (Some(b), false),
                None if unclean_allowed => (alive.first().copied(), true),
                None => (None, false),
            },
        };
        // Kafka keeps a valid current leader: electing it again changes
        // nothing, not even the epoch.
        if let Some(current) = partition.leader
            && in_sync.contains(&current)
            && preferred.is_none_or(|p| p == current)
        {
            return Some(current);
        }
        let partition = self.partition_mut(tp).ok()?;
        if preferred.is_some() && choice.is_none() {
            return None;
        }
        partition.leader_epoch += 1;
        let epoch = partition.leader_epoch;
        partition.leader = choice;
        let Some(leader) = choice else {
            self.record(Event::LeaderLost {
                tp: tp.clone(),
                epoch,
            });
            return None;
        };
        if unclean {
            partition.isr = vec![leader];
        }
        for r in &mut partition.replicas {
            if r.broker != leader {
                r.last_caught_up_ms = now;
                r.reported_leo = None;
            }
        }
        // The new leader learns of its leadership from the controller, as
        // every broker does (sync_metadata below, or later if it cannot be
        // reached now).
        self.record(Event::LeaderElected {
            tp: tp.clone(),
            leader,
            epoch,
            unclean,
        });
        self.sync_metadata(tp);
        Some(leader)
    }

    pub(crate) fn try_elect_offline(&mut self, tp: &TopicPartition) {
        self.elect_if_offline(tp);
    }

    fn elect_if_offline(&mut self, tp: &TopicPartition) {
        let offline = self.partition(tp).is_ok_and(|p| {
            p.leader.is_none() && p.assignment.iter().any(|&b| self.broker_alive(b))
        });
        if offline {
            // Only elect when someone eligible is there, so that the epoch
            // does not climb while the partition waits.
            let eligible = self.partition(tp).is_ok_and(|p| {
                let unclean = p
                    .replicas
                    .first()
                    .is_some_and(|r| r.log.config().unclean_leader_election_enable);
                p.assignment
                    .iter()
                    .any(|&b| self.broker_alive(b) && (unclean || p.isr.contains(&b)))
            });
            if eligible {
                self.elect(tp, None);
            }
        }
    }

    /// Brokers that reach the controller learn the current leadership; a
    /// legacy follower whose leader changed truncates to its high
    /// watermark.
    pub(crate) fn sync_metadata(&mut self, tp: &TopicPartition) {
        let mode = self.config.replication_mode;
        let now = self.now_ms;
        let reachable: Vec<BrokerId> = self
            .brokers
            .iter()
            .filter(|b| b.reaches_controller())
            .map(|b| b.id)
            .collect();
        let Ok(partition) = self.partition_mut(tp) else {
            return;
        };
        let (leader, epoch) = (partition.leader, partition.leader_epoch);
        let mut events = Vec::new();
        for r in &mut partition.replicas {
            if !reachable.contains(&r.broker) {
                continue;
            }
            if r.believed_leader == leader && r.believed_epoch == epoch {
                continue;
            }
            let leader_changed = r.believed_leader != leader;
            r.believed_leader = leader;
            r.believed_epoch = epoch;
            events.push(Event::MetadataUpdated {
                tp: tp.clone(),
                broker: r.broker,
                leader,
                epoch,
            });
            if leader == Some(r.broker) {
                r.log.become_leader(epoch);
            } else if mode == ReplicationMode::LegacyHighWatermark && leader_changed {
                let (from, hw) = (r.log.log_end_offset(), r.log.high_watermark());
                r.log.truncate_to(hw, now);
                if r.log.log_end_offset() != from {
                    events.push(Event::Truncated {
                        tp: tp.clone(),
                        broker: r.broker,
                        from,
                        to: r.log.log_end_offset(),
                        reason: TruncationReason::HighWatermark,
                    });
                }
            }
        }
        for e in events {
            self.record(e);
        }
    }

    pub(crate) fn partition_state(
        &self,
        tp: &TopicPartition,
    ) -> crate::error::Result<PartitionState> {
        let p = self.partition(tp)?;
        Ok(PartitionState {
            replicas: p.assignment.clone(),
            leader: p.leader,
            leader_epoch: p.leader_epoch,
            isr: p.isr.clone(),
            high_watermark: p.leader_log().map_or(0, |l| l.high_watermark()),
        })
    }
}
