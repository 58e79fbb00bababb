//! The consumer: reads partitions from a position, as Kafka's
//! `KafkaConsumer` does, either assigned partitions by hand or subscribed
//! to topics in a group whose partitions the group shares out (Kafka's
//! range assignor). Positions move past what was read; a group commits
//! them; `auto.offset.reset` decides where to start without one, and where
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

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cluster::{Cluster, Group, State};
use crate::error::{BrokerError, Result};
use crate::topic_partition::TopicPartition;

use super::isolation::{AbortedBatches, IsolationLevel};
use streams_clients::GroupMetadata;

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
}

pub use streams_clients::ConsumerRecord;

/// A consumer on the simulated cluster.
#[derive(Debug)]
pub struct Consumer {
    cluster: Cluster,
    config: ConsumerConfig,
    member_id: Option<String>,
    generation: i32,
    subscription: Vec<String>,
    assignment: Vec<TopicPartition>,
    positions: BTreeMap<TopicPartition, i64>,
    next_partition: usize,
    last_auto_commit_ms: i64,
}

impl Consumer {
    pub(crate) fn new(cluster: Cluster, config: ConsumerConfig) -> Self {
        let now = cluster.now_ms();
        Self {
            cluster,
            config,
            member_id: None,
            generation: 0,
            subscription: Vec::new(),
            assignment: Vec::new(),
            positions: BTreeMap::new(),
            next_partition: 0,
            last_auto_commit_ms: now,
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

    /// The group member id, once subscribed.
    pub fn member_id(&self) -> Option<&str> {
        self.member_id.as_deref()
    }

    /// The member's group identity (group, generation, member id) while it
    /// holds an assignment (Kafka's `groupMetadata()`).
    pub fn group_metadata(&self) -> Option<GroupMetadata> {
        let group_id = self.config.group_id.clone()?;
        let member_id = self.member_id.clone()?;
        Some(GroupMetadata {
            group_id,
            generation: self.generation,
            member_id,
        })
    }

    /// Reads exactly these partitions (no group membership); positions of
    /// partitions kept are kept.
    pub fn assign(&mut self, partitions: impl IntoIterator<Item = TopicPartition>) {
        self.leave_group();
        self.subscription.clear();
        self.assignment = partitions.into_iter().collect();
        let assigned = self.assignment.clone();
        self.positions.retain(|tp, _| assigned.contains(tp));
    }

    /// Joins the group with a subscription to `topics`; the group's
    /// members share the topics' partitions out (range assignment), and
    /// each poll picks up a new share after members join or leave.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn subscribe<S: Into<String>>(
        &mut self,
        topics: impl IntoIterator<Item = S>,
    ) -> Result<()> {
        let group_id = self
            .config
            .group_id
            .clone()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "subscribe",
            })?;
        self.subscription = topics.into_iter().map(Into::into).collect();
        let mut state = self.cluster.state();
        let member = match &self.member_id {
            Some(m) => m.clone(),
            None => {
                let n = state.next_member_id;
                state.next_member_id += 1;
                let client = self
                    .config
                    .client_id
                    .clone()
                    .unwrap_or_else(|| format!("consumer-{group_id}-{n}"));
                format!("{client}-{n}")
            }
        };
        let group = state.groups.entry(group_id).or_default();
        group
            .members
            .insert(member.clone(), self.subscription.clone());
        drop(state);
        self.member_id = Some(member);
        self.sync_group();
        Ok(())
    }

    fn sync_group(&mut self) {
        let (Some(group_id), Some(member)) = (self.config.group_id.clone(), self.member_id.clone())
        else {
            return;
        };
        let mut state = self.cluster.state();
        let partitions_of: BTreeMap<String, i32> = state
            .topics
            .iter()
            .map(|(name, t)| (name.clone(), i32::try_from(t.partitions.len()).unwrap_or(0)))
            .collect();
        let group = state.groups.entry(group_id).or_default();
        let assignment = range_assign(group, &partitions_of);
        if assignment != group.assignment {
            group.assignment = assignment;
            group.generation += 1;
        }
        if group.generation != self.generation || self.assignment.is_empty() {
            self.generation = group.generation;
            self.assignment = group.assignment.get(&member).cloned().unwrap_or_default();
            let assigned = self.assignment.clone();
            self.positions.retain(|tp, _| assigned.contains(tp));
        }
    }

    fn leave_group(&mut self) {
        if let (Some(group_id), Some(member)) = (&self.config.group_id, self.member_id.take()) {
            let mut state = self.cluster.state();
            if let Some(group) = state.groups.get_mut(group_id) {
                group.members.remove(&member);
            }
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
    /// started at), and moves the positions past them.
    ///
    /// # Errors
    /// [`BrokerError::OffsetOutOfRange`] or
    /// [`BrokerError::NoOffsetForPartition`] under `auto.offset.reset=none`;
    /// the positions of partitions read before the error have moved.
    pub fn poll(&mut self) -> Result<Vec<ConsumerRecord>> {
        self.sync_group();
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
            // One copy of the name for the partition's records.
            let topic: Arc<str> = Arc::from(tp.topic.as_str());
            let mut position = resolve_position(&self.config, &self.positions, &state, tp)?;
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
        if !self.config.enable_auto_commit || self.config.group_id.is_none() {
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
    /// group.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn commit_sync(&mut self) -> Result<()> {
        let positions: Vec<(TopicPartition, i64)> = self
            .positions
            .iter()
            .map(|(tp, o)| (tp.clone(), *o))
            .collect();
        self.commit_offsets(positions)
    }

    /// Commits the given offsets (the offset of the next record to read).
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn commit_offsets(
        &mut self,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        let group_id = self
            .config
            .group_id
            .clone()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "commit",
            })?;
        let mut state = self.cluster.state();
        let group = state.groups.entry(group_id).or_default();
        group.offsets.extend(offsets);
        Ok(())
    }

    /// The group's committed offset of `tp`.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdRequired`] without a `group.id`.
    pub fn committed(&self, tp: &TopicPartition) -> Result<Option<i64>> {
        let group_id = self
            .config
            .group_id
            .as_ref()
            .ok_or(BrokerError::GroupIdRequired {
                operation: "committed",
            })?;
        let state = self.cluster.state();
        Ok(state
            .groups
            .get(group_id)
            .and_then(|g| g.offsets.get(tp).copied()))
    }

    /// Leaves the group (its partitions go to the other members at their
    /// next poll); also done on drop.
    pub fn close(mut self) {
        self.leave_group();
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        self.leave_group();
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

/// Kafka's `RangeAssignor`: per topic, the members subscribed to it in
/// member-id order each get a contiguous range of partitions, the first
/// ones one more when they do not divide evenly.
fn range_assign(
    group: &Group,
    partitions_of: &BTreeMap<String, i32>,
) -> BTreeMap<String, Vec<TopicPartition>> {
    let mut assignment: BTreeMap<String, Vec<TopicPartition>> = group
        .members
        .keys()
        .map(|m| (m.clone(), Vec::new()))
        .collect();
    let mut topics: Vec<&String> = group.members.values().flatten().collect();
    topics.sort();
    topics.dedup();
    for topic in topics {
        let Some(&count) = partitions_of.get(topic) else {
            continue;
        };
        let members: Vec<&String> = group
            .members
            .iter()
            .filter(|(_, subs)| subs.contains(topic))
            .map(|(m, _)| m)
            .collect();
        if members.is_empty() {
            continue;
        }
        let m = i32::try_from(members.len()).unwrap_or(i32::MAX);
        let (per, extra) = (count / m, count % m);
        for (i, member) in members.into_iter().enumerate() {
            let i = i32::try_from(i).unwrap_or(i32::MAX);
            let start = per * i + i.min(extra);
            let len = per + i32::from(i < extra);
            if let Some(list) = assignment.get_mut(member) {
                list.extend((start..start + len).map(|p| TopicPartition::new(topic.clone(), p)));
            }
        }
    }
    assignment
}
