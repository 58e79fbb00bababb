//! The consumer, as Kafka's `Consumer` interface: assigned partitions by
//! hand, or subscribed in a group whose partitions a
//! [`PartitionAssignor`] shares out (Kafka's classic group protocol, with
//! the assignor run for the whole group by its leader), positions,
//! commits, and rebalances reported as events of a poll.
//!
//! A rebalance is eager, as Kafka's classic protocol without cooperative
//! assignors: a poll first reports [`Rebalance::Revoked`] with every
//! partition the member had (the caller commits what it processed, then
//! polls again, which rejoins), and a later poll reports
//! [`Rebalance::Assigned`] with the member's new partitions and the
//! assignor's data for it. Records of a poll belong to the partitions
//! assigned at that moment.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use crate::error::Result;
use crate::record::{ConsumerRecord, TopicPartition};

/// What a poll returned: records, and a rebalance if one happened.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Polled {
    /// The records read, in offset order per partition.
    pub records: Vec<ConsumerRecord>,
    /// A rebalance step the caller must act on before the records (there
    /// are no records when it is [`Rebalance::Revoked`]).
    pub rebalance: Option<Rebalance>,
}

/// A step of a rebalance, as Kafka's `ConsumerRebalanceListener` hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebalance {
    /// The group is rebalancing: these partitions are no longer this
    /// member's. Commit what was processed before polling again; a commit
    /// after the next poll fails with `CommitFailed`.
    Revoked(Vec<TopicPartition>),
    /// The rebalance completed: the member's partitions now.
    Assigned {
        /// The partitions.
        partitions: Vec<TopicPartition>,
        /// What the assignor gave this member besides partitions (Kafka
        /// Streams: its active and standby tasks).
        user_data: Bytes,
        /// The group generation the assignment belongs to.
        generation: i32,
    },
    /// The member was removed from the group without a chance to commit
    /// (its session expired): these partitions are gone
    /// (`onPartitionsLost`). Do not commit; rejoin with the next poll.
    Lost(Vec<TopicPartition>),
}

/// A member's identity in its group, for offsets sent to a transaction
/// (Kafka's `ConsumerGroupMetadata`): the coordinator refuses offsets from
/// a member of an older generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// The group id.
    pub group_id: String,
    /// The generation the member belongs to.
    pub generation: i32,
    /// The member id.
    pub member_id: String,
}

/// One member's subscription, as the group leader's assignor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The topics the member subscribed to.
    pub topics: BTreeSet<String>,
    /// What the member's assignor said about it at join
    /// ([`PartitionAssignor::subscription_user_data`]).
    pub user_data: Bytes,
    /// The partitions the member owned before this rebalance.
    pub owned_partitions: Vec<TopicPartition>,
}

/// One member's share of the group, as the leader's assignor decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    /// The partitions the member reads.
    pub partitions: Vec<TopicPartition>,
    /// Data for the member's assignor (Kafka Streams: its tasks).
    pub user_data: Bytes,
}

/// How a group's partitions are shared out (Kafka's
/// `ConsumerPartitionAssignor`). Every member supplies one; the group
/// leader's is run for all members.
pub trait PartitionAssignor: Send + Sync + std::fmt::Debug {
    /// The protocol name (`range`, `stream`).
    fn name(&self) -> &str;

    /// What this member tells the leader at join (Kafka Streams: its
    /// process id, the tasks it owned, its thread count).
    fn subscription_user_data(&self, topics: &BTreeSet<String>) -> Bytes;

    /// The group's assignment: `partitions_per_topic` holds the partition
    /// count of every subscribed topic that exists; `members` maps member
    /// ids, in id order, to their subscriptions. Members missing from the
    /// result get nothing.
    fn assign(
        &self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &BTreeMap<String, Subscription>,
    ) -> BTreeMap<String, Assignment>;
}

/// A consumer. See the [module docs](self).
pub trait Consumer: Send + std::fmt::Debug {
    /// Reads exactly these partitions, outside any group's management;
    /// positions start from the committed offset or `auto.offset.reset`.
    ///
    /// # Errors
    /// A partition that does not exist.
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<()>;

    /// Joins the consumer's `group.id` with a subscription to `topics`;
    /// `assignor` shares the partitions out when this member leads.
    ///
    /// # Errors
    /// No `group.id` configured.
    fn subscribe(
        &mut self,
        topics: &[String],
        assignor: std::sync::Arc<dyn PartitionAssignor>,
    ) -> Result<()>;

    /// Fetches what is there (at most `max.poll.records`), or a rebalance
    /// step; a subscribed member's poll is also its heartbeat.
    ///
    /// # Errors
    /// Neither subscribed nor assigned, or the fetch failed.
    fn poll(&mut self) -> Result<Polled>;

    /// The partitions read now.
    fn assignment(&self) -> Vec<TopicPartition>;

    /// The next offset to read from `partition`.
    ///
    /// # Errors
    /// `partition` is not assigned.
    fn position(&mut self, partition: &TopicPartition) -> Result<i64>;

    /// Moves the position of `partition` to `offset`.
    ///
    /// # Errors
    /// `partition` is not assigned.
    fn seek(&mut self, partition: &TopicPartition, offset: i64) -> Result<()>;

    /// Stops (`true`) or resumes (`false`) fetching from `partitions`
    /// without giving them up.
    fn pause(&mut self, partitions: &[TopicPartition], paused: bool);

    /// Commits `offsets` (the next offset to read, per partition) for the
    /// consumer's group.
    ///
    /// # Errors
    /// [`crate::ClientError::CommitFailed`] when the group rebalanced since
    /// this member's generation.
    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<()>;

    /// The group's committed offset for `partition`, if any.
    ///
    /// # Errors
    /// No `group.id`.
    fn committed(&self, partition: &TopicPartition) -> Result<Option<i64>>;

    /// The end offsets of `partitions`: the high watermark, or the last
    /// stable offset under `isolation.level=read_committed`.
    ///
    /// # Errors
    /// A partition that does not exist.
    fn end_offsets(&self, partitions: &[TopicPartition]) -> Result<BTreeMap<TopicPartition, i64>>;

    /// How many records of each of `partitions` are on the cluster past
    /// this consumer's position (Kafka's `currentLag`, KIP-695, which a
    /// Streams task asks each round to decide whether to wait for an empty
    /// partition). A partition whose lag is not known is left out.
    ///
    /// The default asks [`end_offsets`](Self::end_offsets) and
    /// [`position`](Self::position); a client that knows the lag from its
    /// last fetch, as Kafka's does, answers without asking the cluster.
    ///
    /// # Errors
    /// As [`end_offsets`](Self::end_offsets).
    fn current_lags(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        let ends = self.end_offsets(partitions)?;
        Ok(ends
            .iter()
            .filter_map(|(tp, end)| {
                let position = self.position(tp).ok()?;
                Some((tp.clone(), (end - position).max(0)))
            })
            .collect())
    }

    /// The member's group identity, once it has joined.
    fn group_metadata(&self) -> Option<GroupMetadata>;

    /// Leaves the group (when `leave_group`) and releases the consumer.
    fn close(&mut self, leave_group: bool);
}
