//! The errors a client returns, by what the caller must do about them.
//!
//! A Streams runtime reacts to a client error by its kind, not its text:
//! a fenced producer or a failed commit means the task has migrated to
//! another instance (close it as a zombie, rejoin); an unknown topic is a
//! set-up error to report; a timeout may be retried. Each variant names the
//! client resource involved; an implementation's own error travels as the
//! `source` of [`ClientError::Implementation`].
//!
//! ```
//! use streams_clients::ClientError;
//!
//! let fenced = ClientError::ProducerFenced {
//!     transactional_id: "app-1-0".into(),
//!     detail: "epoch 3 is older than the coordinator's 4".into(),
//! };
//! assert!(fenced.is_task_migrated());
//! assert!(fenced.to_string().contains("app-1-0"));
//! ```

/// What went wrong in a client call.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A newer producer with the same `transactional.id` has called
    /// `init_transactions`, or the coordinator aborted this producer's
    /// transaction on its timeout: this producer is a zombie.
    #[error(
        "producer with transactional.id '{transactional_id}' is fenced: {detail}; close it and create a new one (another instance owns its work now)"
    )]
    ProducerFenced {
        /// The producer's `transactional.id`.
        transactional_id: String,
        /// The epochs or the reason, as the implementation knows them.
        detail: String,
    },
    /// The group has rebalanced since this member's generation: an offset
    /// commit (or a transaction's offsets) from it is refused.
    #[error(
        "offset commit for group '{group}' failed: {detail}; the partitions were reassigned by a rebalance, so poll again to rejoin and process from the committed offsets"
    )]
    CommitFailed {
        /// The consumer group.
        group: String,
        /// The generation or the reason, as the implementation knows them.
        detail: String,
    },
    /// The group's members run a rebalance protocol this member does not
    /// (the broker's `INCONSISTENT_GROUP_PROTOCOL`): a group runs one
    /// assignor (or one group protocol), and its members have another,
    /// such as a Kafka Streams application (the `stream` assignor) in the
    /// group of an application on librdkafka's `range`. Not retriable:
    /// the member is refused for as long as the others stay.
    #[error(
        "group '{group}' refused this member: its members run another rebalance protocol ({detail}); a group runs one protocol, so give this application an application.id (group.id) of its own, or stop the group's other members first"
    )]
    InconsistentGroupProtocol {
        /// The consumer group (for a Streams application, its `application.id`).
        group: String,
        /// What the cluster said.
        detail: String,
    },
    /// The topic (or this partition of it) does not exist.
    #[error("topic '{topic}'{} does not exist; create it first (or check the name)", partition.map(|p| format!(" partition {p}")).unwrap_or_default())]
    UnknownTopicOrPartition {
        /// The topic.
        topic: String,
        /// The partition, when one was named.
        partition: Option<i32>,
    },
    /// A topic to create exists already.
    #[error("topic '{topic}' already exists")]
    TopicExists {
        /// The topic.
        topic: String,
    },
    /// A call was made in a state that does not allow it (a send outside a
    /// transaction on a transactional producer, a commit without
    /// `begin_transaction`, a poll without a subscription or assignment).
    #[error("{client}: cannot {operation} in state {state}; {hint}")]
    InvalidState {
        /// The client, as its `client.id` or kind.
        client: String,
        /// The call.
        operation: &'static str,
        /// The state it was in.
        state: String,
        /// What to do.
        hint: &'static str,
    },
    /// A configuration value the client does not accept.
    #[error("invalid value '{value}' for configuration '{name}': {reason}")]
    InvalidConfig {
        /// The configuration's name (Kafka's, such as `isolation.level`).
        name: String,
        /// The value given.
        value: String,
        /// Why, and what is accepted.
        reason: String,
    },
    /// The committed offset of a partition is pending in an open
    /// transaction (KIP-447's `UNSTABLE_OFFSET_COMMIT`, seen by a
    /// `read_committed` consumer): ask again once the transaction ended.
    /// Retriable; Kafka's consumer retries it until its timeout.
    #[error(
        "the committed offset of {topic}-{partition} for group {group} is pending in an open transaction; retry once it commits or aborts"
    )]
    UnstableOffsetCommit {
        /// The consumer group.
        group: String,
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The operation did not complete in its time.
    #[error("{operation} timed out after {timeout_ms} ms; retry, or raise the timeout")]
    Timeout {
        /// The operation.
        operation: String,
        /// The time it had.
        timeout_ms: i64,
    },
    /// No broker of the cluster (or not the one the operation needs, such
    /// as the group or transaction coordinator) could be reached: a wrong
    /// `bootstrap.servers`, brokers down, a network in between. Retriable:
    /// the same call may work once the cluster is back.
    #[error(
        "{client}: {operation}: the cluster cannot be reached ({detail}); check bootstrap.servers and that the brokers are up"
    )]
    Unreachable {
        /// The client, as its `client.id` or kind.
        client: String,
        /// The operation.
        operation: String,
        /// What the client saw.
        detail: String,
    },
    /// The cluster refused the client's credentials (SASL authentication
    /// failed, or the mechanism is not enabled on the listener). Not
    /// retriable: fix `sasl.username`, `sasl.password`, `sasl.mechanism`
    /// or `security.protocol`. Never carries the secret.
    #[error(
        "{client}: authentication failed: {detail}; check security.protocol, sasl.mechanism, sasl.username and sasl.password"
    )]
    Authentication {
        /// The client, as its `client.id` or kind.
        client: String,
        /// What the cluster or the client said (without secrets).
        detail: String,
    },
    /// An error of the implementation (the simulated broker's, rdkafka's).
    #[error("{client}: {source}")]
    Implementation {
        /// The client that failed.
        client: String,
        /// The implementation's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ClientError {
    /// Whether the error means another instance owns the work now (a
    /// fenced producer, a commit after a rebalance): Kafka Streams'
    /// `TaskMigratedException`.
    pub fn is_task_migrated(&self) -> bool {
        matches!(
            self,
            ClientError::ProducerFenced { .. } | ClientError::CommitFailed { .. }
        )
    }
}

impl ClientError {
    /// Whether asking again later may succeed: a timeout, a cluster that
    /// cannot be reached, or a committed offset pending in an open
    /// transaction.
    ///
    /// ```
    /// use streams_clients::ClientError;
    ///
    /// let unstable = ClientError::UnstableOffsetCommit {
    ///     group: "app".into(),
    ///     topic: "in".into(),
    ///     partition: 0,
    /// };
    /// assert!(unstable.is_retriable());
    /// assert!(!unstable.is_task_migrated());
    /// ```
    pub fn is_retriable(&self) -> bool {
        matches!(
            self,
            ClientError::Timeout { .. }
                | ClientError::Unreachable { .. }
                | ClientError::UnstableOffsetCommit { .. }
        )
    }
}

/// A client call's result.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
