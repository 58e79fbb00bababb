//! The broker's errors, one variant per Kafka error code that a client of
//! the simulated cluster can meet, each naming the topic, partition,
//! offset, group or config involved and saying what to do.
//!
//! ```
//! use streams_broker::{BrokerError, Cluster, NewTopic, TopicPartition};
//!
//! let cluster = Cluster::new();
//! let admin = cluster.admin();
//! admin.create_topic(NewTopic::new("orders", 1))?;
//! let err = admin.delete_records_before(&TopicPartition::new("orders", 0), 5).unwrap_err();
//! assert!(matches!(err, BrokerError::OffsetOutOfRange { offset: 5, .. }));
//! assert_eq!(
//!     err.to_string(),
//!     "offset 5 of partition orders-0 is out of range: the log holds 0..0 \
//!      (log start offset 0, high watermark 0)"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::log::ConfigError;
use crate::record::CorruptRecordError;

/// The result type of the broker and its clients.
pub type Result<T, E = BrokerError> = std::result::Result<T, E>;

/// What went wrong in a request to the simulated cluster, after Kafka's
/// error codes (`UNKNOWN_TOPIC_OR_PARTITION`, `OFFSET_OUT_OF_RANGE`,
/// `POLICY_VIOLATION`, ...).
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BrokerError {
    /// The topic does not exist (`UNKNOWN_TOPIC_OR_PARTITION`).
    #[error("unknown topic {topic}: create it first with Admin::create_topic")]
    UnknownTopic {
        /// The topic asked for.
        topic: String,
    },
    /// The topic exists but has no such partition
    /// (`UNKNOWN_TOPIC_OR_PARTITION`).
    #[error(
        "unknown partition {topic}-{partition}: the topic has {partitions} partition(s), numbered from 0"
    )]
    UnknownPartition {
        /// The topic.
        topic: String,
        /// The partition asked for.
        partition: i32,
        /// How many partitions the topic has.
        partitions: i32,
    },
    /// A topic of that name exists already (`TOPIC_ALREADY_EXISTS`).
    #[error("topic {topic} already exists")]
    TopicAlreadyExists {
        /// The topic.
        topic: String,
    },
    /// The topic name is not legal (`INVALID_TOPIC_EXCEPTION`).
    #[error("invalid topic name {topic:?}: {reason}")]
    InvalidTopic {
        /// The name given.
        topic: String,
        /// Why Kafka refuses it.
        reason: String,
    },
    /// The partition count is below 1 (`INVALID_PARTITIONS`).
    #[error("invalid partition count {partitions} for topic {topic}: it must be at least 1")]
    InvalidPartitions {
        /// The topic.
        topic: String,
        /// The partition count given.
        partitions: i32,
    },
    /// The replication factor cannot be met (`INVALID_REPLICATION_FACTOR`).
    #[error(
        "unable to replicate topic {topic} {replication_factor} time(s): the target replication factor of {replication_factor} cannot be reached because only {brokers} broker(s) are registered"
    )]
    InvalidReplicationFactor {
        /// The topic.
        topic: String,
        /// The replication factor asked for.
        replication_factor: i16,
        /// How many brokers the cluster has.
        brokers: usize,
    },
    /// A topic config is unknown or has an invalid value
    /// (`INVALID_CONFIG`).
    #[error("topic {topic}: {source}")]
    InvalidConfig {
        /// The topic.
        topic: String,
        /// The config, the value and the allowed range.
        source: ConfigError,
    },
    /// An offset below the log start offset or above the high watermark
    /// (`OFFSET_OUT_OF_RANGE`).
    #[error(
        "offset {offset} of partition {topic}-{partition} is out of range: the log holds {log_start_offset}..{high_watermark} (log start offset {log_start_offset}, high watermark {high_watermark})"
    )]
    OffsetOutOfRange {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The offset asked for.
        offset: i64,
        /// The partition's log start offset.
        log_start_offset: i64,
        /// The partition's high watermark.
        high_watermark: i64,
    },
    /// Deleting records from a topic whose `cleanup.policy` lacks `delete`
    /// (`POLICY_VIOLATION`).
    #[error(
        "records of partition {topic}-{partition} can not be deleted due to the configured policy (cleanup.policy={policy}); add delete to the topic's cleanup.policy to allow it"
    )]
    PolicyViolation {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The topic's `cleanup.policy`.
        policy: String,
    },
    /// A batch larger than the topic's `max.message.bytes`
    /// (`MESSAGE_TOO_LARGE`).
    #[error(
        "the batch for partition {topic}-{partition} is {size} bytes, larger than the topic's max.message.bytes of {max}; raise max.message.bytes or send smaller records"
    )]
    RecordTooLarge {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The batch's size in bytes.
        size: usize,
        /// The topic's `max.message.bytes`.
        max: i32,
    },
    /// A consumer has no position and no committed offset, and its
    /// `auto.offset.reset` is `none` (`NoOffsetForPartitionException`).
    #[error(
        "undefined offset with no reset policy for partition {topic}-{partition}: commit an offset, seek, or set auto.offset.reset to earliest or latest"
    )]
    NoOffsetForPartition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// A `read_committed` consumer asked for a committed offset that an
    /// open transaction is about to replace (KIP-447's
    /// `UNSTABLE_OFFSET_COMMIT`, answered to an OffsetFetch with
    /// `require_stable`): the offset is known once that transaction commits
    /// or aborts (or the coordinator aborts it on its timeout).
    #[error(
        "the committed offset of {topic}-{partition} for group {group} is pending in an open transaction: retry after the transaction ends (KIP-447)"
    )]
    UnstableOffsetCommit {
        /// The consumer group.
        group: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// An operation that needs a `group.id` on a consumer without one
    /// (`InvalidGroupIdException`).
    #[error("{operation} needs a consumer group: set group_id in the ConsumerConfig")]
    GroupIdRequired {
        /// What was attempted (`subscribe`, `commit`, ...).
        operation: &'static str,
    },
    /// A consumer operation on a partition it is not assigned
    /// (`IllegalStateException: No current assignment for partition`).
    #[error(
        "no current assignment for partition {topic}-{partition}: assign or subscribe to it first"
    )]
    NotAssigned {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The partition has no leader (`LEADER_NOT_AVAILABLE`): every replica
    /// is down, or none may lead.
    #[error(
        "partition {topic}-{partition} has no leader: start a broker that holds an in-sync replica, or allow unclean.leader.election.enable"
    )]
    LeaderNotAvailable {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The broker asked is not the partition's leader (or follower) any
    /// more (`NOT_LEADER_OR_FOLLOWER`).
    #[error(
        "broker {broker} is not the leader of {topic}-{partition} any more: refresh the metadata and retry on the new leader"
    )]
    NotLeaderOrFollower {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The broker that was asked.
        broker: i32,
    },
    /// `acks=all` with fewer in-sync replicas than `min.insync.replicas`,
    /// before the append (`NOT_ENOUGH_REPLICAS`): nothing was written.
    #[error(
        "not enough in-sync replicas for {topic}-{partition}: the ISR has {isr} replica(s), min.insync.replicas is {min_isr}; nothing was written"
    )]
    NotEnoughReplicas {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The ISR's size.
        isr: usize,
        /// The topic's `min.insync.replicas`.
        min_isr: i32,
    },
    /// `acks=all` written to the leader, but the ISR fell below
    /// `min.insync.replicas` before the replicas had it
    /// (`NOT_ENOUGH_REPLICAS_AFTER_APPEND`): the record may or may not stay.
    #[error(
        "the record at {topic}-{partition} offset {offset} was written to the leader but the ISR fell to {isr} replica(s), below min.insync.replicas {min_isr}; it may be retried"
    )]
    NotEnoughReplicasAfterAppend {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The record's offset on the leader.
        offset: i64,
        /// The ISR's size.
        isr: usize,
        /// The topic's `min.insync.replicas`.
        min_isr: i32,
    },
    /// The request was not answered in `request.timeout.ms`
    /// (`REQUEST_TIMED_OUT`).
    #[error(
        "request to {topic}-{partition} timed out after {timeout_ms} ms: the leader is unreachable or the in-sync replicas did not catch up"
    )]
    RequestTimedOut {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The timeout.
        timeout_ms: i64,
    },
    /// No broker with that id.
    #[error("unknown broker {broker}: the cluster has brokers 1..={brokers}")]
    UnknownBroker {
        /// The id asked for.
        broker: i32,
        /// How many brokers the cluster has.
        brokers: usize,
    },
    /// The operation needs a broker in another state (a restart of a
    /// running broker, a pause of a stopped one, ...).
    #[error("broker {broker} is {state}: {operation} needs it {needed}")]
    BrokerState {
        /// The broker.
        broker: i32,
        /// Its state.
        state: &'static str,
        /// What was attempted.
        operation: &'static str,
        /// The state the operation needs.
        needed: &'static str,
    },
    /// A batch from a producer epoch older than the partition's latest for
    /// that producer id (`INVALID_PRODUCER_EPOCH`): a zombie's write.
    #[error(
        "epoch {epoch} of producer {producer_id} is smaller than the last epoch {current_epoch} partition {topic}-{partition} has seen: a newer producer with the same transactional.id took over; close this producer"
    )]
    InvalidProducerEpoch {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The producer id.
        producer_id: i64,
        /// The batch's epoch.
        epoch: i16,
        /// The partition's latest epoch for the producer.
        current_epoch: i16,
    },
    /// A batch whose base sequence does not follow the producer's last one
    /// (`OUT_OF_ORDER_SEQUENCE_NUMBER`).
    #[error(
        "out of order sequence number for producer {producer_id} at partition {topic}-{partition}: {got} (expected {expected}); abort the transaction or create a new producer"
    )]
    OutOfOrderSequence {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// The producer id.
        producer_id: i64,
        /// The sequence expected.
        expected: i32,
        /// The sequence the batch had.
        got: i32,
    },
    /// A newer producer with the same `transactional.id` has initialized,
    /// or the coordinator aborted this one's transaction on its timeout and
    /// bumped the epoch (`ProducerFencedException`). The producer cannot be
    /// used any more.
    #[error(
        "producer with transactionalId '{transactional_id}' and (producerId={producer_id}, epoch={epoch}) has been fenced by another producer with the same transactionalId (epoch {current_epoch}): close it; a new producer must call init_transactions"
    )]
    ProducerFenced {
        /// The `transactional.id`.
        transactional_id: String,
        /// The producer id.
        producer_id: i64,
        /// This producer's epoch.
        epoch: i16,
        /// The epoch that fenced it.
        current_epoch: i16,
    },
    /// A transactional call in a state that does not allow it (Kafka's
    /// `IllegalStateException` of the `TransactionManager`).
    #[error("TransactionalId {transactional_id}: cannot {operation} in state {state}: {hint}")]
    InvalidTxnState {
        /// The `transactional.id`.
        transactional_id: String,
        /// What was attempted (`begin_transaction`, `send`, ...).
        operation: &'static str,
        /// The client's transaction state (`READY`, `IN_TRANSACTION`, ...).
        state: &'static str,
        /// What to do.
        hint: &'static str,
    },
    /// The coordinator refuses to end the transaction this way
    /// (`INVALID_TXN_STATE`): it ended otherwise already, as when it
    /// aborted it on `transaction.timeout.ms`. Fatal for the producer.
    #[error(
        "the producer attempted a transactional operation in an invalid state: transactionalId {transactional_id} cannot {operation}, its transaction is {state} (the coordinator aborted it after transaction.timeout.ms); close the producer and create a new one"
    )]
    InvalidTxnTransition {
        /// The `transactional.id`.
        transactional_id: String,
        /// The coordinator's state of the transaction.
        state: String,
        /// `commit` or `abort`.
        operation: &'static str,
    },
    /// A transactional call on a producer without a `transactional.id`.
    #[error(
        "transactional method {operation} invoked on a non-transactional producer: set transactional_id in the ProducerConfig"
    )]
    TransactionalIdRequired {
        /// What was attempted.
        operation: &'static str,
    },
    /// A `transaction.timeout.ms` above the broker's
    /// `transaction.max.timeout.ms` (`INVALID_TRANSACTION_TIMEOUT`).
    #[error(
        "transaction.timeout.ms {timeout_ms} of transactionalId {transactional_id} is not in 1..={max_ms} (transaction.max.timeout.ms): lower it"
    )]
    InvalidTransactionTimeout {
        /// The `transactional.id`.
        transactional_id: String,
        /// The timeout asked for.
        timeout_ms: i64,
        /// The broker's maximum.
        max_ms: i64,
    },
    /// The coordinator is still writing the markers of the previous
    /// transaction (`CONCURRENT_TRANSACTIONS`, retriable): move the clock
    /// and try again.
    #[error(
        "transactionalId {transactional_id}: the previous transaction is still completing (markers for {pending} partition(s) not written); advance the clock and retry"
    )]
    ConcurrentTransactions {
        /// The `transactional.id`.
        transactional_id: String,
        /// Partitions whose marker is not written yet.
        pending: usize,
    },
    /// A stored batch failed its checks.
    #[error("partition {topic}-{partition}: {source}")]
    CorruptRecord {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
        /// What is wrong with the batch.
        source: CorruptRecordError,
    },
    /// The member is not in the group (`UNKNOWN_MEMBER_ID`): it left, or
    /// the group removed it when its session timed out or it did not poll
    /// within `max.poll.interval.ms`, or it has not joined yet.
    #[error(
        "{} is not a member of group {group} (UNKNOWN_MEMBER_ID): it left, was removed after its session timed out or it did not poll within max.poll.interval.ms, or has not joined; poll to join the group again",
        if member.is_empty() { "this consumer".to_owned() } else { format!("member {member}") }
    )]
    UnknownMemberId {
        /// The group.
        group: String,
        /// The member id sent (empty: none).
        member: String,
    },
    /// A request of an older generation (`ILLEGAL_GENERATION`): the group
    /// rebalanced since the member's assignment.
    #[error(
        "member {member} of group {group} sent generation {generation} but the group is at generation {current} (ILLEGAL_GENERATION): its partitions were reassigned by a rebalance; poll to rejoin"
    )]
    IllegalGeneration {
        /// The group.
        group: String,
        /// The member.
        member: String,
        /// The generation the member sent.
        generation: i32,
        /// The group's generation.
        current: i32,
    },
    /// The group is rebalancing (`REBALANCE_IN_PROGRESS`): the member has
    /// rejoined and has no assignment to commit for yet.
    #[error(
        "group {group} is rebalancing (REBALANCE_IN_PROGRESS): poll until the rebalance completes, then commit the new assignment's offsets"
    )]
    RebalanceInProgress {
        /// The group.
        group: String,
    },
    /// A member joined with an assignor the group's members do not use
    /// (`INCONSISTENT_GROUP_PROTOCOL`).
    #[error(
        "group {group}'s members use the {group_protocol} assignor, and a member joined with {protocol} (INCONSISTENT_GROUP_PROTOCOL): give every member of a group the same assignor"
    )]
    InconsistentGroupProtocol {
        /// The group.
        group: String,
        /// The joining member's assignor.
        protocol: String,
        /// The assignor of the group's members.
        group_protocol: String,
    },
    /// No group of that id (`GROUP_ID_NOT_FOUND`).
    #[error("group {group} does not exist (GROUP_ID_NOT_FOUND)")]
    GroupIdNotFound {
        /// The group.
        group: String,
    },
    /// Deleting a group that still has members (`NON_EMPTY_GROUP`).
    #[error(
        "group {group} has {members} member(s) (NON_EMPTY_GROUP): close its consumers, or wait for their sessions to time out, before deleting it"
    )]
    NonEmptyGroup {
        /// The group.
        group: String,
        /// How many members it has.
        members: usize,
    },
    /// A call on a consumer after its `close`.
    #[error("consumer {client:?} is closed: cannot {operation}; create a new consumer")]
    ConsumerClosed {
        /// The consumer's `client.id` (empty when it had none).
        client: String,
        /// What was attempted.
        operation: &'static str,
    },
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for BrokerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
