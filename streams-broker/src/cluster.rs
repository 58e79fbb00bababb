//! The simulated cluster: topics of partition logs, the log cleaner and
//! retention on a schedule, consumer groups and their committed offsets,
//! all on a mock clock that only the test moves.
//!
//! A [`Cluster`] is a cheap handle (clone it freely); its clients
//! ([`Producer`], [`Consumer`], [`Admin`]) hold one too. Scheduled work
//! runs when [`Cluster::advance_ms`] passes its time: the log cleaner every
//! `log.cleaner.backoff.ms` (default 15 s), retention every
//! `log.retention.check.interval.ms` (default 5 minutes), each at its exact
//! instant. Both also run on demand ([`Cluster::run_cleaner`],
//! [`Cluster::run_retention`]).
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::builder().log_retention_check_interval_ms(1_000).build();
//! cluster.admin().create_topic(
//!     NewTopic::new("clicks", 1)
//!         .config("retention.ms", "5000")
//!         .config("segment.ms", "1000"),
//! )?;
//! let producer = cluster.producer();
//! producer.send(ProducerRecord::new("clicks", "a", "1").timestamp(0))?;
//! producer.send(ProducerRecord::new("clicks", "b", "2").timestamp(2_000))?; // rolls
//! cluster.advance_ms(6_000); // retention at 6 s: the first segment's records are 6 s old
//! let tp = TopicPartition::new("clicks", 0);
//! assert_eq!(cluster.log_info(&tp)?.log_start_offset, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::cleaner::{self, CleaningResult, LogToClean, TombstoneRetention};
use crate::clients::group::Group;
use crate::clients::{Admin, Consumer, ConsumerConfig, Producer, ProducerConfig};
use crate::error::{BrokerError, Result};
use crate::inspect::{LogDump, LogInfo};
use crate::log::{LogAppendInfo, LogConfig, UnifiedLog};
use crate::purgatory::{Delayed, Purgatory, PurgatoryConfig};
use crate::record::{LogRecord, RecordBatch};
use crate::replication::delayed::{DelayedFetch, DelayedProduce, PartitionProgress};
use crate::replication::{BrokerId, BrokerNode, Partition, TimelineEvent};
use crate::timer::{MockTime, Timer};
use crate::topic_partition::TopicPartition;
use crate::transactions::{TransactionConfig, TransactionCoordinator};

/// The broker-level settings of the simulated cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct BrokerConfig {
    /// `log.cleaner.enable` (default true).
    pub log_cleaner_enable: bool,
    /// `log.cleaner.backoff.ms` (default 15000): how long the cleaner
    /// sleeps when it found nothing to clean.
    pub log_cleaner_backoff_ms: i64,
    /// `log.retention.check.interval.ms` (default 300000).
    pub log_retention_check_interval_ms: i64,
    /// How the cleaner treats tombstones (default: KIP-534's delete
    /// horizon; the pre-fix rule shows KAFKA-8522).
    pub tombstone_retention: TombstoneRetention,
    /// The clock's time when the cluster starts (default 0).
    pub start_time_ms: i64,
    /// How many brokers (default 1), numbered from 1.
    pub brokers: usize,
    /// `replica.lag.time.max.ms` (default 30000): a follower that has not
    /// caught up for this long leaves the ISR.
    pub replica_lag_time_max_ms: i64,
    /// How often followers fetch from their leader on the mock clock
    /// (default 10 ms; a real follower long-polls continuously).
    pub replica_fetch_interval_ms: i64,
    /// `broker.session.timeout.ms` (default 9000): how long the controller
    /// waits for a paused or cut-off broker before it fences it.
    pub broker_session_timeout_ms: i64,
    /// How followers find where their log and the leader's diverge.
    pub replication_mode: crate::replication::ReplicationMode,
    /// `group.initial.rebalance.delay.ms`: how long a new consumer group
    /// waits for more members before its first generation. Default 0, as
    /// Kafka's test clusters set it (a production broker's default is 3000).
    pub group_initial_rebalance_delay_ms: i64,
    /// The transaction coordinator's settings.
    pub transactions: TransactionConfig,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        Self {
            log_cleaner_enable: true,
            log_cleaner_backoff_ms: 15_000,
            log_retention_check_interval_ms: 300_000,
            tombstone_retention: TombstoneRetention::DeleteHorizon,
            start_time_ms: 0,
            brokers: 1,
            replica_lag_time_max_ms: 30_000,
            replica_fetch_interval_ms: 10,
            broker_session_timeout_ms: 9_000,
            replication_mode: crate::replication::ReplicationMode::LeaderEpochs,
            group_initial_rebalance_delay_ms: 0,
            transactions: TransactionConfig::default(),
        }
    }
}

/// Builds a [`Cluster`] with broker settings other than Kafka's defaults.
#[derive(Debug, Clone, Default)]
pub struct ClusterBuilder {
    config: BrokerConfig,
}

impl ClusterBuilder {
    /// `log.cleaner.backoff.ms`.
    #[must_use]
    pub fn log_cleaner_backoff_ms(mut self, ms: i64) -> Self {
        self.config.log_cleaner_backoff_ms = ms.max(1);
        self
    }

    /// `log.retention.check.interval.ms`.
    #[must_use]
    pub fn log_retention_check_interval_ms(mut self, ms: i64) -> Self {
        self.config.log_retention_check_interval_ms = ms.max(1);
        self
    }

    /// `log.cleaner.enable`: with `false` the cleaner runs only on demand.
    #[must_use]
    pub fn log_cleaner_enable(mut self, enable: bool) -> Self {
        self.config.log_cleaner_enable = enable;
        self
    }

    /// How the cleaner decides that a tombstone may go.
    #[must_use]
    pub fn tombstone_retention(mut self, retention: TombstoneRetention) -> Self {
        self.config.tombstone_retention = retention;
        self
    }

    /// The clock's time at start.
    #[must_use]
    pub fn start_time_ms(mut self, ms: i64) -> Self {
        self.config.start_time_ms = ms;
        self
    }

    /// How many brokers, numbered from 1 (at least 1).
    #[must_use]
    pub fn brokers(mut self, brokers: usize) -> Self {
        self.config.brokers = brokers.max(1);
        self
    }

    /// `replica.lag.time.max.ms`.
    #[must_use]
    pub fn replica_lag_time_max_ms(mut self, ms: i64) -> Self {
        self.config.replica_lag_time_max_ms = ms.max(1);
        self
    }

    /// How often followers fetch on the mock clock.
    #[must_use]
    pub fn replica_fetch_interval_ms(mut self, ms: i64) -> Self {
        self.config.replica_fetch_interval_ms = ms.max(1);
        self
    }

    /// `broker.session.timeout.ms`.
    #[must_use]
    pub fn broker_session_timeout_ms(mut self, ms: i64) -> Self {
        self.config.broker_session_timeout_ms = ms.max(1);
        self
    }

    /// How followers find where their log diverges from the leader's: the
    /// leader epochs of KIP-101/KIP-320 (default), or the pre-KIP-101
    /// truncation to the high watermark, which lets a zombie diverge
    /// (KAFKA-6880).
    #[must_use]
    pub fn replication_mode(mut self, mode: crate::replication::ReplicationMode) -> Self {
        self.config.replication_mode = mode;
        self
    }

    /// `group.initial.rebalance.delay.ms`.
    #[must_use]
    pub fn group_initial_rebalance_delay_ms(mut self, ms: i64) -> Self {
        self.config.group_initial_rebalance_delay_ms = ms.max(0);
        self
    }

    /// The transaction coordinator's settings (`transaction.max.timeout.ms`,
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`).
    #[must_use]
    pub fn transaction_config(mut self, config: TransactionConfig) -> Self {
        self.config.transactions = config;
        self
    }

    /// The cluster.
    pub fn build(self) -> Cluster {
        Cluster::with_config(self.config)
    }
}

#[derive(Debug)]
pub(crate) struct Topic {
    pub(crate) overrides: BTreeMap<String, String>,
    pub(crate) config: LogConfig,
    pub(crate) partitions: Vec<Partition>,
}

#[derive(Debug)]
pub(crate) struct State {
    pub(crate) now_ms: i64,
    pub(crate) config: BrokerConfig,
    pub(crate) topics: BTreeMap<String, Topic>,
    pub(crate) groups: BTreeMap<String, Group>,
    pub(crate) next_member_id: u64,
    next_cleaner_ms: i64,
    next_retention_ms: i64,
    pub(crate) next_replication_ms: i64,
    cleanings: Vec<CleaningResult>,
    pub(crate) brokers: Vec<BrokerNode>,
    pub(crate) cut_links: BTreeSet<(BrokerId, BrokerId)>,
    pub(crate) timeline: Vec<TimelineEvent>,
    /// The purgatories' clock, kept at `now_ms`.
    pub(crate) time: MockTime,
    pub(crate) progress: HashMap<TopicPartition, Arc<PartitionProgress>>,
    pub(crate) produce_purgatory: Purgatory<TopicPartition, DelayedProduce>,
    pub(crate) fetch_purgatory: Purgatory<TopicPartition, DelayedFetch>,
    /// Fetches waiting, with the positions they wait past.
    pub(crate) pending_fetches: Vec<(Arc<Delayed<DelayedFetch>>, Vec<(TopicPartition, i64)>)>,
    /// The transaction coordinator.
    pub(crate) transactions: TransactionCoordinator,
}

/// A handle to the simulated cluster (cheap to clone; every clone is the
/// same cluster).
#[derive(Debug, Clone)]
pub struct Cluster {
    state: Arc<Mutex<State>>,
}

impl Default for Cluster {
    fn default() -> Self {
        Self::new()
    }
}

impl Cluster {
    /// A cluster with Kafka's broker defaults, its clock at 0.
    pub fn new() -> Self {
        Self::with_config(BrokerConfig::default())
    }

    /// A builder for broker settings.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// A cluster with these broker settings.
    pub fn with_config(config: BrokerConfig) -> Self {
        let now = config.start_time_ms;
        let broker_count = config.brokers.max(1);
        let time = MockTime::new(now);
        Self {
            state: Arc::new(Mutex::new(State {
                now_ms: now,
                next_cleaner_ms: now.saturating_add(config.log_cleaner_backoff_ms),
                next_retention_ms: now.saturating_add(config.log_retention_check_interval_ms),
                transactions: TransactionCoordinator::new(config.transactions, now),
                config,
                topics: BTreeMap::new(),
                groups: BTreeMap::new(),
                next_member_id: 1,
                next_replication_ms: now,
                cleanings: Vec::new(),
                brokers: (1..=broker_count)
                    .map(|id| BrokerNode::new(i32::try_from(id).unwrap_or(i32::MAX), now))
                    .collect(),
                cut_links: BTreeSet::new(),
                timeline: Vec::new(),
                progress: HashMap::new(),
                produce_purgatory: Purgatory::new(
                    "Produce",
                    Timer::new(Arc::new(time.clone())),
                    PurgatoryConfig::sharded(),
                ),
                fetch_purgatory: Purgatory::new(
                    "Fetch",
                    Timer::new(Arc::new(time.clone())),
                    PurgatoryConfig::sharded(),
                ),
                pending_fetches: Vec::new(),
                time,
            })),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave the state half
        // written in a way later calls trip on: every mutation is applied
        // after its checks. So a poisoned lock is taken as it is.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The broker settings.
    pub fn broker_config(&self) -> BrokerConfig {
        self.state().config.clone()
    }

    /// The clock, in milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.state().now_ms
    }

    /// Moves the clock forward by `ms`, running the cleaner and retention
    /// at each instant they are scheduled for on the way.
    pub fn advance_ms(&self, ms: i64) {
        let mut state = self.state();
        let target = state.now_ms.saturating_add(ms.max(0));
        loop {
            // The next scheduled task; at the same instant replication
            // first, then retention, then the cleaner (Kafka's threads have
            // no order between them; this one is fixed so that runs replay).
            let replication = state
                .is_replicated()
                .then_some(state.next_replication_ms)
                .filter(|t| *t <= target);
            let retention = Some(state.next_retention_ms).filter(|t| *t <= target);
            let cleaner = state
                .config
                .log_cleaner_enable
                .then_some(state.next_cleaner_ms)
                .filter(|t| *t <= target);
            let groups = state.next_group_deadline().filter(|t| *t <= target);
            let transactions =
                Some(state.transactions.next_abort_check_ms).filter(|t| *t <= target);
            let next = [replication, retention, cleaner, groups, transactions]
                .into_iter()
                .flatten()
                .min();
            let Some(at) = next else {
                break;
            };
            state.now_ms = state.now_ms.max(at);
            if replication == Some(at) {
                state.replication_round();
                state.after_change();
                state.next_replication_ms =
                    at.saturating_add(state.config.replica_fetch_interval_ms);
            } else if groups == Some(at) {
                state.expire_groups();
            } else if transactions == Some(at) {
                state.abort_timed_out_transactions();
                state.after_change();
                state.transactions.next_abort_check_ms = at.saturating_add(
                    state
                        .transactions
                        .config
                        .abort_timed_out_transaction_cleanup_interval_ms,
                );
            } else if retention == Some(at) {
                state.run_retention();
                state.next_retention_ms = state
                    .now_ms
                    .saturating_add(state.config.log_retention_check_interval_ms);
            } else {
                state.run_cleaner();
                state.next_cleaner_ms = state
                    .now_ms
                    .saturating_add(state.config.log_cleaner_backoff_ms);
            }
        }
        state.now_ms = target;
        state.after_change();
    }

    /// Moves the clock forward by `duration`.
    pub fn advance(&self, duration: std::time::Duration) {
        self.advance_ms(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX));
    }

    /// Runs the log cleaner now, as its thread does: the filthiest
    /// cleanable log first, each cleanable log once, then retention of the
    /// logs that compact and delete. Returns what each cleaning did.
    pub fn run_cleaner(&self) -> Vec<CleaningResult> {
        self.state().run_cleaner()
    }

    /// Runs retention on every log now (segments below the log start
    /// offset, and for `delete` topics by size and time); returns how many
    /// segments were deleted.
    pub fn run_retention(&self) -> usize {
        self.state().run_retention()
    }

    /// Every cleaning done so far, oldest first.
    pub fn cleanings(&self) -> Vec<CleaningResult> {
        self.state().cleanings.clone()
    }

    /// A producer with Kafka's defaults.
    pub fn producer(&self) -> Producer {
        Producer::new(self.clone(), ProducerConfig::default())
    }

    /// A producer with `config`.
    pub fn producer_with(&self, config: ProducerConfig) -> Producer {
        Producer::new(self.clone(), config)
    }

    /// A consumer with `config`.
    pub fn consumer(&self, config: ConsumerConfig) -> Consumer {
        Consumer::new(self.clone(), config)
    }

    /// An admin client.
    pub fn admin(&self) -> Admin {
        Admin::new(self.clone())
    }

    /// The topics' names, sorted.
    pub fn topic_names(&self) -> Vec<String> {
        self.state().topics.keys().cloned().collect()
    }

    /// A partition's offsets, segments and dirty ratio.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn log_info(&self, tp: &TopicPartition) -> Result<LogInfo> {
        let state = self.state();
        let partition = state.partition(tp)?;
        let replica =
            partition
                .leader_replica()
                .ok_or_else(|| BrokerError::LeaderNotAvailable {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                })?;
        let to_clean = LogToClean::measure(&replica.log, replica.cleaner_checkpoint, state.now_ms);
        Ok(LogInfo::of(&replica.log, &to_clean))
    }

    /// Every record a partition holds from its log start offset, in offset
    /// order, as stored (tombstones included, control records not).
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn log_records(&self, tp: &TopicPartition) -> Result<Vec<LogRecord>> {
        Ok(self.state().log(tp)?.records())
    }

    /// Every batch a partition holds, oldest first, with its attributes
    /// and delete horizon.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn log_batches(&self, tp: &TopicPartition) -> Result<Vec<RecordBatch>> {
        Ok(self
            .state()
            .log(tp)?
            .segments()
            .iter()
            .flat_map(|s| s.batches().iter().cloned())
            .collect())
    }

    /// The partition's log written out as Kafka's `kafka-dump-log` prints
    /// it (`Display`).
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn dump_log(&self, tp: &TopicPartition) -> Result<LogDump> {
        let info = self.log_info(tp)?;
        let batches = {
            let state = self.state();
            state
                .log(tp)?
                .segments()
                .iter()
                .map(|s| (s.base_offset(), s.batches().to_vec()))
                .collect()
        };
        Ok(LogDump::new(info, batches))
    }

    /// Rolls a partition's active segment now (as Kafka's log does when a
    /// segment is full or old); nothing happens when it is empty.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn roll(&self, tp: &TopicPartition) -> Result<()> {
        let mut state = self.state();
        let now = state.now_ms;
        state.log_mut(tp)?.roll(now);
        Ok(())
    }
}

impl State {
    pub(crate) fn topic(&self, topic: &str) -> Result<&Topic> {
        self.topics
            .get(topic)
            .ok_or_else(|| BrokerError::UnknownTopic {
                topic: topic.to_owned(),
            })
    }

    pub(crate) fn log(&self, tp: &TopicPartition) -> Result<&UnifiedLog> {
        let topic = self.topic(&tp.topic)?;
        let partition = usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
            .ok_or_else(|| unknown_partition(tp, topic.partitions.len()))?;
        partition
            .leader_log()
            .ok_or_else(|| BrokerError::LeaderNotAvailable {
                topic: tp.topic.clone(),
                partition: tp.partition,
            })
    }

    pub(crate) fn partition(&self, tp: &TopicPartition) -> Result<&Partition> {
        let topic = self.topic(&tp.topic)?;
        usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get(p))
            .ok_or_else(|| unknown_partition(tp, topic.partitions.len()))
    }

    pub(crate) fn partition_mut(&mut self, tp: &TopicPartition) -> Result<&mut Partition> {
        let topic = self
            .topics
            .get_mut(&tp.topic)
            .ok_or_else(|| BrokerError::UnknownTopic {
                topic: tp.topic.clone(),
            })?;
        let count = topic.partitions.len();
        usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get_mut(p))
            .ok_or_else(|| unknown_partition(tp, count))
    }

    pub(crate) fn log_mut(&mut self, tp: &TopicPartition) -> Result<&mut UnifiedLog> {
        let topic = self
            .topics
            .get_mut(&tp.topic)
            .ok_or_else(|| BrokerError::UnknownTopic {
                topic: tp.topic.clone(),
            })?;
        let count = topic.partitions.len();
        let partition = usize::try_from(tp.partition)
            .ok()
            .and_then(|p| topic.partitions.get_mut(p))
            .ok_or_else(|| unknown_partition(tp, count))?;
        partition
            .leader_log_mut()
            .ok_or_else(|| BrokerError::LeaderNotAvailable {
                topic: tp.topic.clone(),
                partition: tp.partition,
            })
    }

    pub(crate) fn append(
        &mut self,
        tp: &TopicPartition,
        batch: RecordBatch,
    ) -> Result<LogAppendInfo> {
        let now = self.now_ms;
        let leader = self.partition(tp)?.leader;
        match leader.and_then(|b| self.broker(b)) {
            None => {
                return Err(BrokerError::LeaderNotAvailable {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                });
            }
            Some(node) if !node.is_running() => {
                return Err(BrokerError::RequestTimedOut {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    timeout_ms: 0,
                });
            }
            Some(_) => {}
        }
        let partition = self.partition_mut(tp)?;
        // A leader that has not learned of its leadership yet (the
        // controller could not reach it) refuses writes, as Kafka's does.
        let believes = leader.is_some_and(|l| {
            partition.replica(l).is_some_and(|r| {
                r.believed_leader == Some(l) && r.believed_epoch == partition.leader_epoch
            })
        });
        if !believes {
            return Err(BrokerError::NotLeaderOrFollower {
                topic: tp.topic.clone(),
                partition: tp.partition,
                broker: leader.unwrap_or(-1),
            });
        }
        let log = partition
            .leader_log_mut()
            .ok_or_else(|| BrokerError::LeaderNotAvailable {
                topic: tp.topic.clone(),
                partition: tp.partition,
            })?;
        let info = log.append_as_replicated_leader(batch, now)?;
        partition.maybe_advance_high_watermark();
        self.publish(tp);
        Ok(info)
    }

    pub(crate) fn broker(&self, id: BrokerId) -> Option<&BrokerNode> {
        self.brokers.iter().find(|b| b.id == id)
    }

    fn run_cleaner(&mut self) -> Vec<CleaningResult> {
        let now = self.now_ms;
        let retention = self.config.tombstone_retention;
        let running: Vec<BrokerId> = self
            .brokers
            .iter()
            .filter(|b| b.is_running())
            .map(|b| b.id)
            .collect();
        let mut done = Vec::new();
        let mut cleaned: Vec<(TopicPartition, BrokerId)> = Vec::new();
        loop {
            // Kafka's grabFilthiestCompactedLog: the cleanable log with the
            // highest dirty ratio (the first in name order on a tie). Each
            // broker cleans its own replicas.
            let mut filthiest: Option<(TopicPartition, BrokerId, LogToClean)> = None;
            for topic in self.topics.values() {
                if !topic.config.cleanup_policy.compact() {
                    continue;
                }
                for partition in &topic.partitions {
                    for replica in &partition.replicas {
                        if !running.contains(&replica.broker) {
                            continue;
                        }
                        let tp = replica.log.topic_partition();
                        if cleaned.iter().any(|(t, b)| t == tp && *b == replica.broker) {
                            continue;
                        }
                        let to_clean =
                            LogToClean::measure(&replica.log, replica.cleaner_checkpoint, now);
                        if !to_clean.is_cleanable(replica.log.config().min_cleanable_dirty_ratio) {
                            continue;
                        }
                        let better = filthiest.as_ref().is_none_or(|(_, _, best)| {
                            to_clean.cleanable_ratio() > best.cleanable_ratio()
                        });
                        if better {
                            filthiest = Some((tp.clone(), replica.broker, to_clean));
                        }
                    }
                }
            }
            let Some((tp, broker, to_clean)) = filthiest else {
                break;
            };
            cleaned.push((tp.clone(), broker));
            let Some(replica) = self
                .partition_mut(&tp)
                .ok()
                .and_then(|p| p.replica_mut(broker))
            else {
                continue;
            };
            if let Some(mut result) = cleaner::clean(&mut replica.log, &to_clean, now, retention) {
                replica.cleaner_checkpoint = Some(result.end_offset);
                result.broker = broker;
                done.push(result);
            }
        }
        // The cleaner also runs retention for logs that compact and delete.
        for topic in self.topics.values_mut() {
            if topic.config.cleanup_policy.compact() && topic.config.cleanup_policy.delete() {
                for partition in &mut topic.partitions {
                    for replica in &mut partition.replicas {
                        if running.contains(&replica.broker) {
                            replica.log.delete_old_segments(now);
                        }
                    }
                }
            }
        }
        self.cleanings.extend(done.iter().cloned());
        done
    }

    fn run_retention(&mut self) -> usize {
        let now = self.now_ms;
        let running: Vec<BrokerId> = self
            .brokers
            .iter()
            .filter(|b| b.is_running())
            .map(|b| b.id)
            .collect();
        self.topics
            .values_mut()
            .flat_map(|t| t.partitions.iter_mut())
            .flat_map(|p| p.replicas.iter_mut())
            .filter(|r| running.contains(&r.broker))
            .map(|r| r.log.delete_old_segments(now).total())
            .sum()
    }
}

pub(crate) fn unknown_partition(tp: &TopicPartition, partitions: usize) -> BrokerError {
    BrokerError::UnknownPartition {
        topic: tp.topic.clone(),
        partition: tp.partition,
        partitions: i32::try_from(partitions).unwrap_or(i32::MAX),
    }
}
