//! The consumer: reads partitions from a position, as Kafka's
//! `KafkaConsumer` does, either assigned partitions by hand or subscribed
//! to topics in a group whose partitions the group's leader shares out
//! with its assignor ([`RangeAssignor`](crate::RangeAssignor) unless
//! [`Consumer::subscribe_with`] names another), through the cluster's
//! [group coordinator](crate::clients::group). Positions move past what was
//! read; a group commits them; `auto.offset.reset` decides where to start without one, and where
//! to go when the position fell below the log start offset (after
//! retention or delete-records) or past the end.
//!
//! ```
//! use streams_broker::{AutoOffsetReset, Cluster, ConsumerConfig, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("events", 1))?;
//! let producer = cluster.producer();
//! for i in 0..5 {
//!     producer.send(ProducerRecord::new("events", "k", format!("v{i}")))?;
//! }
//! let mut consumer = cluster.consumer(
//!     ConsumerConfig::new()
//!         .group_id("audit")
//!         .auto_offset_reset(AutoOffsetReset::Earliest)
//!         .max_poll_records(2),
//! );
//! consumer.subscribe(["events"])?;
//! let first: Vec<i64> = consumer.poll()?.iter().map(|r| r.offset).collect();
//! assert_eq!(first, [0, 1]);
//! consumer.commit_sync()?;
//! assert_eq!(consumer.committed(&TopicPartition::new("events", 0))?, Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use streams_clients::{GroupMetadata, PartitionAssignor, Polled, Rebalance};

use crate::clients::assignor::RangeAssignor;
use crate::clients::coordinator::ConsumerCoordinator;
use crate::cluster::{Cluster, State};
use crate::error::{BrokerError, Result};
use crate::topic_partition::TopicPartition;

use super::isolation::{AbortedBatches, IsolationLevel};

/// `auto.offset.reset`: where a consumer starts without a committed
/// offset, and where it goes when its position is out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoOffsetReset {
    /// `earliest`: the log start offset.
    Earliest,
    /// `latest` (Kafka's default): the high watermark.
    #[default]
    Latest,
    /// `none`: an error ([`BrokerError::NoOffsetForPartition`] or
    /// [`BrokerError::OffsetOutOfRange`]).
    None,
}

/// Consumer settings, by Kafka's names, with Kafka's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerConfig {
    /// `group.id` (default none: no subscribe, no commits).
    pub group_id: Option<String>,
    /// `client.id` (default `consumer-<group>-<n>`, as Kafka names them).
    pub client_id: Option<String>,
    /// `auto.offset.reset` (default `latest`).
    pub auto_offset_reset: AutoOffsetReset,
    /// `max.poll.records` (default 500).
    pub max_poll_records: usize,
    /// `enable.auto.commit` (default true, only with a group).
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms` (default 5000), on the cluster's clock.
    pub auto_commit_interval_ms: i64,
    /// `fetch.min.bytes` (default 1): how many bytes
    /// [`Consumer::poll_timeout`] waits for in the broker's fetch purgatory.
    pub fetch_min_bytes: i64,
    /// `fetch.max.wait.ms` (default 500): how long the broker holds a fetch
    /// that has fewer than `fetch.min.bytes`.
    pub fetch_max_wait_ms: i64,
    /// `isolation.level` (default `read_uncommitted`).
    pub isolation_level: IsolationLevel,
    /// `session.timeout.ms` (default 45000): how long the group keeps a
    /// member whose client stopped (dropped, or closed without leaving).
    pub session_timeout_ms: i64,
    /// `max.poll.interval.ms` (default 300000): a member that does not poll
    /// for this long leaves its group; also its rebalance timeout.
    pub max_poll_interval_ms: i64,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        Self {
            group_id: None,
            client_id: None,
            auto_offset_reset: AutoOffsetReset::Latest,
            max_poll_records: 500,
            enable_auto_commit: true,
            auto_commit_interval_ms: 5_000,
            fetch_min_bytes: 1,
            fetch_max_wait_ms: 500,
            isolation_level: IsolationLevel::ReadUncommitted,
            session_timeout_ms: 45_000,
            max_poll_interval_ms: 300_000,
        }
    }
}

impl ConsumerConfig {
    /// Kafka's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// `group.id`.
    #[must_use]
    pub fn group_id(mut self, group: impl Into<String>) -> Self {
        self.group_id = Some(group.into());
        self
    }

    /// `client.id`.
    #[must_use]
    pub fn client_id(mut self, client: impl Into<String>) -> Self {
        self.client_id = Some(client.into());
        self
    }

    /// `auto.offset.reset`.
    #[must_use]
    pub fn auto_offset_reset(mut self, reset: AutoOffsetReset) -> Self {
        self.auto_offset_reset = reset;
        self
    }

    /// `max.poll.records` (at least 1).
    #[must_use]
    pub fn max_poll_records(mut self, max: usize) -> Self {
        self.max_poll_records = max.max(1);
        self
    }

    /// `fetch.min.bytes` (at least 1).
    #[must_use]
    pub fn fetch_min_bytes(mut self, bytes: i64) -> Self {
        self.fetch_min_bytes = bytes.max(1);
        self
    }

    /// `fetch.max.wait.ms`.
    #[must_use]
    pub fn fetch_max_wait_ms(mut self, ms: i64) -> Self {
        self.fetch_max_wait_ms = ms.max(0);
        self
    }

    /// `isolation.level`: `read_committed` reads below the last stable
    /// offset and skips aborted transactions.
    #[must_use]
    pub fn isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation_level = level;
        self
    }

    /// `enable.auto.commit`.
    #[must_use]
    pub fn enable_auto_commit(mut self, enable: bool) -> Self {
        self.enable_auto_commit = enable;
        self
    }

    /// `session.timeout.ms` (at least 1).
    #[must_use]
    pub fn session_timeout_ms(mut self, ms: i64) -> Self {
        self.session_timeout_ms = ms.max(1);
        self
    }

    /// `max.poll.interval.ms` (at least 1).
    #[must_use]
    pub fn max_poll_interval_ms(mut self, ms: i64) -> Self {
        self.max_poll_interval_ms = ms.max(1);
        self
    }
}

pub use streams_clients::ConsumerRecord;

/// A consumer on the simulated cluster.
#[derive(Debug)]
pub struct Consumer {
    cluster: Cluster,
    config: ConsumerConfig,
    /// The group membership of a subscribed consumer.
    coordinator: Option<ConsumerCoordinator>,
    assignment: Vec<TopicPartition>,
    positions: BTreeMap<TopicPartition, i64>,
    paused: BTreeSet<TopicPartition>,
    next_partition: usize,
    last_auto_commit_ms: i64,
    closed: bool,
}

impl Consumer {
    pub(crate) fn new(cluster: Cluster, config: ConsumerConfig) -> Self {
        let now = cluster.now_ms();
        Self {
            cluster,
            config,
            coordinator: None,
            assignment: Vec::new(),
            positions: BTreeMap::new(),
            paused: BTreeSet::new(),
            next_partition: 0,
            last_auto_commit_ms: now,
            closed: false,
        }
    }

    /// The settings.
    pub fn config(&self) -> &ConsumerConfig {
        &self.config
    }

    pub(crate) fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The partitions this consumer reads, in order.
    pub fn assignment(&self) -> &[TopicPartition] {
        &self.assignment
    }

    /// The group member id, once joined.
    pub fn member_id(&self) -> Option<&str> {
        self.coordinator.as_ref().and_then(|c| c.member_id())
    }

    /// The member's group identity (group, generation, member id) while it
    /// holds an assignment (Kafka's `groupMetadata()`).
    pub fn group_metadata(&self) -> Option<GroupMetadata> {
        self.coordinator.as_ref().and_then(|c| c.group_metadata())
    }

    /// Reads exactly these partitions (no group membership: a subscribed
    /// consumer leaves its group first, as Kafka's `unsubscribe` does);
    /// positions of partitions kept are kept.
    pub fn assign(&mut self, partitions: impl IntoIterator<Item = TopicPartition>) {
        self.leave_group(true);
        self.assignment = partitions.into_iter().collect();
        let assigned = self.assignment.clone();
        self.positions.retain(|tp, _| assigned.contains(tp));
        self.paused.retain(|tp| assigned.contains(tp));
    }

    /// Subscribes to `topics` in the consumer's group with Kafka's
    /// [`RangeAssignor`]. See [`Consumer::subscribe_with`].
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn subscribe<S: Into<String>>(
        &mut self,
        topics: impl IntoIterator<Item = S>,
    ) -> Result<()> {
        self.subscribe_with(topics, Arc::new(RangeAssignor))
    }

    /// Subscribes to `topics` in the consumer's group; `assignor` shares
    /// the partitions out when this member leads. The next poll joins the
    /// group (or, for a member with an assignment and a new subscription,
    /// revokes it and the one after rejoins).
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn subscribe_with<S: Into<String>>(
        &mut self,
        topics: impl IntoIterator<Item = S>,
        assignor: Arc<dyn PartitionAssignor>,
    ) -> Result<()> {
        let group_id = self
            .config
            .group_id
            .clone()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "subscribe",
            })?;
        let topics: BTreeSet<String> = topics.into_iter().map(Into::into).collect();
        if let Some(coordinator) = &mut self.coordinator {
            coordinator.resubscribe(topics, assignor);
            return Ok(());
        }
        let client_id = match &self.config.client_id {
            Some(client) => client.clone(),
            None => {
                let mut state = self.cluster.state();
                let n = state.next_member_id;
                state.next_member_id += 1;
                format!("consumer-{group_id}-{n}")
            }
        };
        // Partitions assigned by hand are given up.
        self.assignment.clear();
        self.positions.clear();
        self.paused.clear();
        self.coordinator = Some(ConsumerCoordinator::new(
            group_id,
            client_id,
            topics,
            assignor,
            self.config.session_timeout_ms,
            self.config.max_poll_interval_ms,
        ));
        Ok(())
    }

    /// Leaves the group (`leave_group`) or stops heartbeating, and drops
    /// the subscription.
    fn leave_group(&mut self, leave_group: bool) {
        if let Some(mut coordinator) = self.coordinator.take() {
            coordinator.close(&self.cluster, leave_group);
            self.assignment.clear();
        }
    }

    /// Stops (`paused`) or resumes fetching from assigned `partitions`
    /// without giving them up (Kafka's `pause`/`resume`); a rebalance that
    /// takes a partition away forgets that it was paused.
    pub fn pause(&mut self, partitions: &[TopicPartition], paused: bool) {
        for tp in partitions {
            if paused && self.assignment.contains(tp) {
                self.paused.insert(tp.clone());
            } else if !paused {
                self.paused.remove(tp);
            }
        }
    }

    /// The paused partitions, in order.
    pub fn paused(&self) -> Vec<TopicPartition> {
        self.paused.iter().cloned().collect()
    }

    /// The end offset of each partition (Kafka's `endOffsets`): its high
    /// watermark, or its last stable offset under `read_committed`.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`] or
    /// [`BrokerError::LeaderNotAvailable`].
    pub fn end_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        let state = self.cluster.state();
        let isolation = self.config.isolation_level;
        partitions
            .iter()
            .map(|tp| Ok((tp.clone(), isolation.fetch_upper_bound(state.log(tp)?))))
            .collect()
    }

    fn check_open(&self, operation: &'static str) -> Result<()> {
        if self.closed {
            Err(BrokerError::ConsumerClosed {
                client: self.config.client_id.clone().unwrap_or_default(),
                operation,
            })
        } else {
            Ok(())
        }
    }

    fn check_assigned(&self, tp: &TopicPartition) -> Result<()> {
        if self.assignment.contains(tp) {
            Ok(())
        } else {
            Err(BrokerError::NotAssigned {
                topic: tp.topic.clone(),
                partition: tp.partition,
            })
        }
    }

    /// Moves the position of an assigned partition.
    ///
    /// # Errors
    /// [`BrokerError::NotAssigned`] for a partition not assigned.
    pub fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<()> {
        self.check_assigned(tp)?;
        self.positions.insert(tp.clone(), offset);
        Ok(())
    }

    /// Moves the position to the log start offset.
    ///
    /// # Errors
    /// [`BrokerError::NotAssigned`], or the partition is unknown.
    pub fn seek_to_beginning(&mut self, tp: &TopicPartition) -> Result<()> {
        self.check_assigned(tp)?;
        let start = self.cluster.state().log(tp)?.log_start_offset();
        self.positions.insert(tp.clone(), start);
        Ok(())
    }

    /// Moves the position to the high watermark.
    ///
    /// # Errors
    /// [`BrokerError::NotAssigned`], or the partition is unknown.
    pub fn seek_to_end(&mut self, tp: &TopicPartition) -> Result<()> {
        self.check_assigned(tp)?;
        let end = self
            .config
            .isolation_level
            .fetch_upper_bound(self.cluster.state().log(tp)?);
        self.positions.insert(tp.clone(), end);
        Ok(())
    }

    /// The offset of the next record to read from `tp`, resolving it from
    /// the committed offset or `auto.offset.reset` when unknown.
    ///
    /// # Errors
    /// [`BrokerError::NotAssigned`], [`BrokerError::NoOffsetForPartition`],
    /// or the partition is unknown.
    pub fn position(&mut self, tp: &TopicPartition) -> Result<i64> {
        self.check_assigned(tp)?;
        let state = self.cluster.state();
        let position = resolve_position(&self.config, &self.positions, &state, tp)?;
        drop(state);
        self.positions.insert(tp.clone(), position);
        Ok(position)
    }

    /// Reads up to `max.poll.records` records from the assigned partitions,
    /// partition after partition (starting after the one the last poll
    /// started at), and moves the positions past them; a subscribed
    /// consumer takes its group step first, as
    /// [`Consumer::poll_with_rebalance`] does (whose event this drops).
    ///
    /// # Errors
    /// [`BrokerError::OffsetOutOfRange`] or
    /// [`BrokerError::NoOffsetForPartition`] under `auto.offset.reset=none`;
    /// the positions of partitions read before the error have moved.
    pub fn poll(&mut self) -> Result<Vec<ConsumerRecord>> {
        Ok(self.poll_with_rebalance()?.records)
    }

    /// A poll with its rebalance event: a subscribed consumer heartbeats,
    /// and in a rebalance first reports [`Rebalance::Revoked`] with every
    /// partition it had and no records (with `enable.auto.commit` it has
    /// committed their positions; it may still commit itself), rejoins with
    /// the next poll, and reports [`Rebalance::Assigned`] with the poll that
    /// brings the new generation's assignment (positions then start from
    /// the committed offsets). A member the group removed (its poll
    /// interval passed) reports [`Rebalance::Lost`] and rejoins next.
    ///
    /// # Errors
    /// As [`Consumer::poll`]; [`BrokerError::InconsistentGroupProtocol`]
    /// when the group's members use another assignor;
    /// [`BrokerError::ConsumerClosed`] after close.
    pub fn poll_with_rebalance(&mut self) -> Result<Polled> {
        self.check_open("poll")?;
        let rebalance = match &mut self.coordinator {
            Some(coordinator) => coordinator.poll(&self.cluster)?,
            None => None,
        };
        match &rebalance {
            Some(Rebalance::Revoked(_)) => {
                // Kafka's onJoinPrepare: auto-commit before revoking; the
                // positions stay for a commit of the caller's own.
                if self.config.enable_auto_commit {
                    let _ = self.commit_sync();
                }
                self.assignment.clear();
                self.paused.clear();
                return Ok(Polled {
                    records: Vec::new(),
                    rebalance,
                });
            }
            Some(Rebalance::Lost(_)) => {
                self.assignment.clear();
                self.positions.clear();
                self.paused.clear();
                return Ok(Polled {
                    records: Vec::new(),
                    rebalance,
                });
            }
            Some(Rebalance::Assigned { partitions, .. }) => {
                self.assignment.clone_from(partitions);
                self.positions.clear();
                self.paused.clear();
                self.last_auto_commit_ms = self.cluster.now_ms();
            }
            None => {}
        }
        let records = self.fetch()?;
        Ok(Polled { records, rebalance })
    }

    fn fetch(&mut self) -> Result<Vec<ConsumerRecord>> {
        self.maybe_auto_commit()?;
        let mut out = Vec::new();
        let n = self.assignment.len();
        if n == 0 {
            return Ok(out);
        }
        let start = self.next_partition % n;
        self.next_partition = (start + 1) % n;
        let state = self.cluster.state();
        for i in 0..n {
            let remaining = self.config.max_poll_records - out.len();
            if remaining == 0 {
                break;
            }
            let tp = &self.assignment[(start + i) % n];
            if self.paused.contains(tp) {
                continue;
            }
            // One copy of the name for the partition's records.
            let topic: Arc<str> = Arc::from(tp.topic.as_str());
            let mut position = match resolve_position(&self.config, &self.positions, &state, tp) {
                Ok(position) => position,
                // KIP-447: no position until the pending offset is
                // committed or aborted; this poll reads the others.
                Err(BrokerError::UnstableOffsetCommit { .. }) => continue,
                Err(err) => return Err(err),
            };
            let log = state.log(tp)?;
            let isolation = self.config.isolation_level;
            let upper = isolation.fetch_upper_bound(log);
            let batches = match log.read_batches_below(position, remaining, upper) {
                Ok(batches) => batches,
                Err(err @ BrokerError::OffsetOutOfRange { .. }) => {
                    position = match self.config.auto_offset_reset {
                        AutoOffsetReset::Earliest => log.log_start_offset(),
                        AutoOffsetReset::Latest => upper,
                        AutoOffsetReset::None => return Err(err),
                    };
                    log.read_batches_below(position, remaining, upper)?
                }
                Err(err) => return Err(err),
            };
            let mut aborted = AbortedBatches::new(isolation, log, position, upper);
            // Room for what the batches hold (at most what is asked for),
            // at once rather than by doubling.
            let incoming: usize = batches
                .iter()
                .filter(|b| !b.is_control())
                .map(|b| usize::try_from(b.record_count()).unwrap_or(0))
                .sum();
            out.reserve(incoming.min(remaining));
            for batch in &batches {
                let mut taken_all = true;
                // Every batch goes by the aborted index (an abort marker
                // ends its producer's aborted transaction).
                let skipped = aborted.skips(batch);
                if !batch.is_control() && !skipped {
                    let timestamp_type = batch.timestamp_type();
                    let leader_epoch = batch.partition_leader_epoch();
                    for record in batch.records() {
                        if record.offset < position {
                            continue;
                        }
                        if out.len() == self.config.max_poll_records {
                            taken_all = false;
                            break;
                        }
                        position = record.offset + 1;
                        out.push(ConsumerRecord {
                            topic: Arc::clone(&topic),
                            partition: tp.partition,
                            offset: record.offset,
                            timestamp: record.timestamp,
                            timestamp_type,
                            key: record.key,
                            value: record.value,
                            headers: record.headers,
                            leader_epoch,
                        });
                    }
                }
                if !taken_all {
                    break;
                }
                position = position.max(batch.next_offset());
            }
            self.positions.insert(tp.clone(), position);
        }
        Ok(out)
    }

    fn maybe_auto_commit(&mut self) -> Result<()> {
        if !self.config.enable_auto_commit
            || self.config.group_id.is_none()
            || self.coordinator.as_ref().is_some_and(|c| !c.is_stable())
        {
            return Ok(());
        }
        let now = self.cluster.now_ms();
        if now - self.last_auto_commit_ms >= self.config.auto_commit_interval_ms {
            self.last_auto_commit_ms = now;
            self.commit_sync()?;
        }
        Ok(())
    }

    /// Commits the current positions of the assigned partitions to the
    /// group (after a [`Rebalance::Revoked`], of the partitions revoked).
    ///
    /// # Errors
    /// As [`Consumer::commit_offsets`].
    pub fn commit_sync(&mut self) -> Result<()> {
        let positions: Vec<(TopicPartition, i64)> = self
            .positions
            .iter()
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        self.commit_offsets(positions)
    }

    /// Commits the given offsets (the offset of the next record to read).
    /// A subscribed member commits with its generation, which the
    /// coordinator accepts while it is current (also while the group
    /// prepares a rebalance); a consumer with assigned partitions commits
    /// with none, which only an `Empty` group accepts.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`;
    /// [`BrokerError::IllegalGeneration`] once the group's next generation
    /// began, [`BrokerError::UnknownMemberId`] from a member the group
    /// removed (or without a generation in a group that has members).
    pub fn commit_offsets(
        &mut self,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        self.check_open("commit")?;
        let group_id = self
            .config
            .group_id
            .clone()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "commit",
            })?;
        let (member, generation) = match &self.coordinator {
            Some(coordinator) => coordinator.commit_identity()?,
            None => (None, -1),
        };
        self.cluster
            .state()
            .commit_group_offsets(&group_id, member, generation, offsets)
    }

    /// The group's committed offset of `tp`.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`;
    /// [`BrokerError::UnstableOffsetCommit`] for a `read_committed`
    /// consumer while an open transaction holds an offset of its group for
    /// `tp` (KIP-447; Kafka's consumer retries until its timeout, this one
    /// answers at once: ask again after the transaction ends).
    pub fn committed(&self, tp: &TopicPartition) -> Result<Option<i64>> {
        let group_id = self
            .config
            .group_id
            .as_ref()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "committed",
            })?;
        let mut state = self.cluster.state();
        check_stable(&self.config, &state, tp)?;
        Ok(state.committed_offset(group_id, tp))
    }

    /// Closes the consumer and leaves the group at once (Kafka's
    /// `close()`): its partitions go to the other members at the next
    /// rebalance.
    pub fn close(mut self) {
        self.close_with(true);
    }

    /// Closes the consumer: commits its positions when
    /// `enable.auto.commit`, then leaves the group (`leave_group`) or
    /// stops heartbeating and stays a member until `session.timeout.ms`
    /// passes (Kafka Streams closes its consumers so). Later calls fail with
    /// [`BrokerError::ConsumerClosed`].
    pub fn close_with(&mut self, leave_group: bool) {
        if self.closed {
            return;
        }
        if self.config.enable_auto_commit && self.config.group_id.is_some() {
            let _ = self.commit_sync();
        }
        self.leave_group(leave_group);
        self.positions.clear();
        self.closed = true;
    }
}

/// A consumer dropped without [`Consumer::close`] is a crashed process: it
/// stops heartbeating without leaving, and its group removes it when its
/// session times out.
impl Drop for Consumer {
    fn drop(&mut self) {
        self.leave_group(false);
    }
}

/// KIP-447: a `read_committed` consumer's OffsetFetch asks for stable
/// offsets, and is answered `UNSTABLE_OFFSET_COMMIT` while an open
/// transaction holds an offset of its group for `tp`.
fn check_stable(config: &ConsumerConfig, state: &State, tp: &TopicPartition) -> Result<()> {
    match &config.group_id {
        Some(group)
            if config.isolation_level == IsolationLevel::ReadCommitted
                && state.has_pending_txn_offset(group, tp) =>
        {
            Err(BrokerError::UnstableOffsetCommit {
                group: group.clone(),
                topic: tp.topic.clone(),
                partition: tp.partition,
            })
        }
        _ => Ok(()),
    }
}

fn resolve_position(
    config: &ConsumerConfig,
    positions: &BTreeMap<TopicPartition, i64>,
    state: &State,
    tp: &TopicPartition,
) -> Result<i64> {
    if let Some(p) = positions.get(tp) {
        return Ok(*p);
    }
    check_stable(config, state, tp)?;
    if let Some(committed) = config
        .group_id
        .as_ref()
        .and_then(|g| state.groups.get(g))
        .and_then(|g| g.offsets.get(tp))
    {
        return Ok(*committed);
    }
    let log = state.log(tp)?;
    match config.auto_offset_reset {
        AutoOffsetReset::Earliest => Ok(log.log_start_offset()),
        AutoOffsetReset::Latest => Ok(config.isolation_level.fetch_upper_bound(log)),
        AutoOffsetReset::None => Err(BrokerError::NoOffsetForPartition {
            topic: tp.topic.clone(),
            partition: tp.partition,
        }),
    }
}
