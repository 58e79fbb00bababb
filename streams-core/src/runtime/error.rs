//! The runtime's errors: set-up errors found at `start` (a missing or
//! not co-partitioned source topic, a bad config), state errors (a call
//! the instance's state does not allow, a store that is not here) and
//! failures while running (a client's error, a processor's error), each
//! naming the topic, task or store and saying what to do.

use streams_clients::ClientError;

use crate::error::StreamsError;
use crate::runtime::assignor::TaskAssignmentError;
use crate::runtime::task_id::TaskId;

/// What went wrong in a [`KafkaStreams`](super::KafkaStreams) instance.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A configuration value out of its range, with Kafka's message.
    #[error("Invalid value {value} for configuration {name}: {reason}")]
    InvalidConfig {
        /// Kafka's name of the configuration.
        name: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// An `application.id` that cannot prefix topic names.
    #[error(
        "application.id '{application_id}' is illegal: it prefixes the names of internal topics, so it may contain only ASCII alphanumerics, '.', '_' and '-' (at most 249 characters)"
    )]
    InvalidApplicationId {
        /// The id given.
        application_id: String,
    },
    /// Source topics that do not exist on the cluster (Kafka's
    /// `MissingSourceTopicException`).
    #[error(
        "Missing source topics: {topics:?}; create them (with the partition counts you want) before starting the application"
    )]
    MissingSourceTopics {
        /// The topics missing.
        topics: Vec<String>,
    },
    /// Topics that a join reads together have different partition counts
    /// (Kafka's `TopologyException` from the co-partitioning check).
    #[error(
        "Invalid topology: Topics not co-partitioned: [{}]; give them the same number of partitions, or repartition one side (for example with KStream::repartition)",
        topics.iter().map(|(t, n)| format!("{t} ({n} partitions)")).collect::<Vec<_>>().join(",")
    )]
    NotCopartitioned {
        /// Each topic with its partition count.
        topics: Vec<(String, i32)>,
    },
    /// Repartition topics of one co-partition group were given different
    /// partition counts (`Repartitioned::with_number_of_partitions`).
    #[error(
        "Invalid topology: Following topics do not have the same number of partitions: [{{{}}}]; give the co-partitioned repartition topics the same count",
        topics.iter().map(|(t, n)| format!("{t}={n}")).collect::<Vec<_>>().join(", ")
    )]
    EnforcedPartitionsDiffer {
        /// The group's repartition topics with their counts, by name.
        topics: Vec<(String, i32)>,
    },
    /// A repartition topic given a partition count is co-partitioned with
    /// user topics of another count.
    #[error(
        "Invalid topology: Number of partitions [{partitions}] of repartition topic [{topic}] doesn't match number of partitions [{source_partitions}] of the source topic. Give it the source topics' count, or none"
    )]
    EnforcedPartitionsMismatch {
        /// The repartition topic.
        topic: String,
        /// The count it was given.
        partitions: i32,
        /// The count of the topics it is co-partitioned with.
        source_partitions: i32,
    },
    /// An internal topic exists with another partition count than the
    /// topology needs (Kafka's `InternalTopicManager` message).
    #[error(
        "Existing internal topic {topic} has invalid partitions: expected: {expected}; actual: {actual}. Use 'org.apache.kafka.tools.StreamsResetter' tool to clean up invalid topics before processing."
    )]
    InvalidInternalTopicPartitions {
        /// The internal topic.
        topic: String,
        /// The partition count the topology needs.
        expected: i32,
        /// The partition count it has.
        actual: i32,
    },
    /// A topology feature the runtime does not run yet.
    #[error("the KafkaStreams runtime does not support {feature} yet; {hint}")]
    Unsupported {
        /// The feature.
        feature: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// A call that the instance's state does not allow.
    #[error("cannot {operation}: KafkaStreams is in state {state}; {hint}")]
    IllegalState {
        /// The call.
        operation: &'static str,
        /// The state the instance is in.
        state: super::State,
        /// What to do.
        hint: &'static str,
    },
    /// A store that no local task of this instance has (Kafka's
    /// `InvalidStateStoreException`).
    #[error(
        "The state store, {store}, may have migrated to another instance{}; ask the instance that owns the task (KafkaStreams::tasks lists this one's)",
        task.map(|t| format!(" (task {t} is not active here)")).unwrap_or_default()
    )]
    StoreNotLocal {
        /// The store.
        store: String,
        /// The task asked for, if one was.
        task: Option<TaskId>,
    },
    /// A client call failed.
    #[error("{context}: {source}")]
    Client {
        /// What the runtime was doing, with the topic, partition or task.
        context: String,
        /// The client's error (boxed: the runtime's errors stay small).
        source: Box<ClientError>,
    },
    /// A task's processing failed.
    #[error("task {task} failed: {source}")]
    Task {
        /// The task.
        task: TaskId,
        /// The error (boxed: the runtime's errors stay small).
        source: Box<StreamsError>,
    },
    /// The global stores' processing failed (a global topic's record
    /// that does not decode, a global processor's error): Kafka's global
    /// stream thread dies and takes the instance to ERROR.
    #[error(
        "the global stream thread failed: {source}; fix the global topic's records or serdes and restart the instance"
    )]
    GlobalThread {
        /// What failed.
        source: Box<StreamsError>,
    },
    /// The global stores' bootstrap stopped below the end of a global
    /// topic's partition (Kafka's "Global task did not make progress to
    /// restore state", after `task.timeout.ms`).
    #[error(
        "Global task did not make progress to restore state: partition {partition} stopped at offset {position}, below its end offset {end}; check the global topic's records (an open transaction holds read_committed back)"
    )]
    GlobalRestoreStalled {
        /// The global topic's partition.
        partition: streams_clients::TopicPartition,
        /// Where the global consumer stopped.
        position: i64,
        /// The end offset it had to reach.
        end: i64,
    },
    /// The topology could not be instantiated or assigned.
    #[error(transparent)]
    Streams(Box<StreamsError>),
    /// A stream thread of a [`ThreadedKafkaStreams`](super::ThreadedKafkaStreams)
    /// panicked outside the processors (whose panics are processing errors).
    #[error(
        "stream thread {thread} panicked; the instance shut down (see the panic message above)"
    )]
    ThreadPanicked {
        /// The thread's name.
        thread: String,
    },
    /// The topology supplier of a [`ThreadedKafkaStreams`](super::ThreadedKafkaStreams)
    /// built another topology for a stream thread than at `start`.
    #[error(
        "the topology supplier built a different topology for stream thread {thread} than at start; it must build the same topology on every call"
    )]
    TopologySupplierMismatch {
        /// The thread's name.
        thread: String,
    },
    /// The operating system refused a stream thread.
    #[error("could not spawn stream thread {thread}: {reason}")]
    ThreadSpawn {
        /// The thread's name.
        thread: String,
        /// The system's reason.
        reason: String,
    },
    /// The task assignment failed.
    #[error(transparent)]
    Assignment(#[from] TaskAssignmentError),
}

impl RuntimeError {
    pub(crate) fn client(context: impl Into<String>, source: ClientError) -> Self {
        RuntimeError::Client {
            context: context.into(),
            source: Box::new(source),
        }
    }

    pub(crate) fn task(task: TaskId, source: StreamsError) -> Self {
        RuntimeError::Task {
            task,
            source: Box::new(source),
        }
    }

    /// Whether the error means the instance lost a task to another one (a
    /// fenced producer, a commit refused after a rebalance): Kafka's
    /// `TaskMigratedException`, which the runtime handles by closing the
    /// task as a zombie and rejoining.
    pub fn is_task_migrated(&self) -> bool {
        matches!(self, RuntimeError::Client { source, .. } if source.is_task_migrated())
    }
}

impl From<StreamsError> for RuntimeError {
    fn from(e: StreamsError) -> Self {
        RuntimeError::Streams(Box::new(e))
    }
}

// Small enough to return by value everywhere (clippy's result_large_err
// bound is 128 bytes).
const _: () = assert!(std::mem::size_of::<RuntimeError>() <= 96);

/// A runtime call's result.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
