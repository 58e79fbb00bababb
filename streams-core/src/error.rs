//! The crate's error types.
//!
//! Every error names what it is about: the topic, partition and offset of a
//! record that could not be read, the node or store that failed, the topics
//! that do exist when an unknown one was asked for. Messages are lowercase
//! and end with what to do where there is something to do.
//!
//! ```
//! use streams_core::{StreamsError, Topology};
//!
//! let err = Topology::new().validate().unwrap_err();
//! assert!(matches!(err, StreamsError::Topology(_)));
//! assert_eq!(
//!     err.to_string(),
//!     "invalid topology: the topology has no source; add one with `add_source` or `StreamsBuilder::stream`"
//! );
//! ```

use std::fmt;
use std::time::Duration;

/// Which half of a record a serde was working on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordPart {
    /// The record's key.
    Key,
    /// The record's value.
    Value,
}

impl fmt::Display for RecordPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordPart::Key => "key",
            RecordPart::Value => "value",
        })
    }
}

/// The reason a serde could not serialize or deserialize a value.
///
/// Serdes return this; the engine wraps it in [`StreamsError::Deserialization`]
/// or [`StreamsError::Serialization`] with the topic, partition and offset.
#[derive(thiserror::Error)]
#[error("{message}")]
pub struct SerdeError {
    message: String,
    /// The message Kafka's own deserializer gives for the same bytes,
    /// where a built-in serde knows it: what a dead letter queue record's
    /// `__streams.errors.message` header carries.
    kafka_message: Option<&'static str>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl SerdeError {
    /// An error with a message and no underlying cause.
    pub fn new(message: impl Into<String>) -> Self {
        SerdeError {
            message: message.into(),
            kafka_message: None,
            source: None,
        }
    }

    /// An error caused by another error, whose text becomes the message.
    pub fn from_error(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        SerdeError {
            message: error.to_string(),
            kafka_message: None,
            source: Some(Box::new(error)),
        }
    }

    /// The message, without the topic or offset context.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Sets the message Kafka's own serde gives for the same failure (for
    /// example `Size of data received by LongDeserializer is not 8`): the
    /// dead letter queue's `__streams.errors.message` header carries it, so
    /// that DLQ records match Kafka's byte for byte.
    #[must_use]
    pub fn with_kafka_message(mut self, message: &'static str) -> Self {
        self.kafka_message = Some(message);
        self
    }

    /// The message Kafka's own serde gives for the same failure, where it
    /// is known (see [`SerdeError::with_kafka_message`]).
    pub fn kafka_message(&self) -> Option<&'static str> {
        self.kafka_message
    }
}

/// An error found while building a [`Topology`](crate::Topology).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// Two nodes were given the same name.
    #[error("node name `{name}` is already used by another node; node names must be unique")]
    DuplicateName {
        /// The name used twice.
        name: String,
    },
    /// A record was piped to a topic that the name of a source topic
    /// matches when read as a regex (Kafka's driver refuses it: "Topology
    /// add source of type String for topic: .. cannot contain regex
    /// pattern for input record topic: ..").
    #[error(
        "source topic `{source_topic}` cannot contain regex pattern for input record topic `{topic}`: its name, read as a regex, matches it; pipe to `{source_topic}` itself, or read `{topic}` with a pattern source"
    )]
    SourceTopicMatchesAsRegex {
        /// The source topic named in the topology.
        source_topic: String,
        /// The topic piped to.
        topic: String,
    },
    /// A node name was empty.
    #[error("a node name must not be empty")]
    EmptyName,
    /// Repartition topics that must be co-partitioned (a join's two
    /// sides) were given different partition counts.
    #[error(
        "Following topics do not have the same number of partitions: [{{{}}}]; give them the same count",
        topics.iter().map(|(t, n)| format!("{t}={n}")).collect::<Vec<_>>().join(", ")
    )]
    EnforcedPartitionsDiffer {
        /// The topics (without the application id) with their counts.
        topics: Vec<(String, i32)>,
    },
    /// A topology optimization (`topology.optimization`) cannot be applied
    /// at a node: for `merge.repartition.topics`, the repartition topics
    /// after a key change carry other types than the node forwards (Kafka
    /// would fail at run time with a `ClassCastException`).
    #[error(
        "cannot apply {optimization} at node `{node}`: {reason}; build without it (topology.optimization), \
         or send the stream through `repartition()` yourself"
    )]
    CannotOptimize {
        /// The optimization (`merge.repartition.topics`, ...).
        optimization: &'static str,
        /// The node it would rewrite.
        node: String,
        /// Why it cannot.
        reason: String,
    },
    /// A repartition topic was given fewer than one partition.
    #[error(
        "repartition topic `{topic}` was given {partitions} partitions; Number of partitions must be at least 1"
    )]
    InvalidPartitionCount {
        /// The repartition topic, without the application id.
        topic: String,
        /// The count given.
        partitions: i32,
    },
    /// A node names a parent that does not exist (yet).
    #[error(
        "node `{node}` names parent `{parent}`, which does not exist; add parents before their children"
    )]
    UnknownParent {
        /// The node being added.
        node: String,
        /// The parent it named.
        parent: String,
    },
    /// A processor or sink was added without any parent.
    #[error("node `{node}` has no parent; a processor or sink needs at least one")]
    NoParent {
        /// The node being added.
        node: String,
    },
    /// A sink was named as a parent.
    #[error("node `{node}` names sink `{parent}` as its parent; a sink cannot have children")]
    SinkAsParent {
        /// The node being added.
        node: String,
        /// The sink it named.
        parent: String,
    },
    /// The topology has no source node.
    #[error("the topology has no source; add one with `add_source` or `StreamsBuilder::stream`")]
    NoSource,
    /// A source or sink has no topic.
    #[error("{kind} `{node}` has no topic; give it at least one topic name")]
    NoTopic {
        /// `source` or `sink`.
        kind: &'static str,
        /// The node.
        node: String,
    },
    /// A topic name was empty.
    #[error("node `{node}` names an empty topic; topic names must not be empty")]
    EmptyTopic {
        /// The node.
        node: String,
    },
    /// A topic is read by two sources.
    #[error(
        "topic `{topic}` is already read by source `{existing}`; a topic can be read by one source only"
    )]
    TopicAlreadyRead {
        /// The topic.
        topic: String,
        /// The source that reads it already.
        existing: String,
    },
    /// A source pattern is not a valid regular expression.
    #[error("source `{node}` has an invalid topic pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The source.
        node: String,
        /// The pattern as given.
        pattern: String,
        /// What the regex engine said.
        reason: String,
    },
    /// A child's input types are not its parent's output types.
    #[error(
        "node `{child}` reads records of type ({child_input}) but its parent `{parent}` forwards ({parent_output}); \
         connect nodes whose types agree"
    )]
    TypeMismatch {
        /// The parent.
        parent: String,
        /// What the parent forwards, as `key, value` type names.
        parent_output: String,
        /// The child.
        child: String,
        /// What the child reads.
        child_input: String,
    },
    /// A store was connected to a processor but never added.
    #[error(
        "processor `{node}` is connected to store `{store}`, which was never added; add it with `add_state_store`"
    )]
    UnknownStore {
        /// The processor.
        node: String,
        /// The store.
        store: String,
    },
    /// A store name was used twice.
    #[error("store `{store}` is already added; store names must be unique")]
    DuplicateStore {
        /// The store.
        store: String,
    },
    /// A processor named in `connect_processor_and_state_stores` does not exist or is not a processor.
    #[error(
        "`{node}` is not a processor of this topology; stores can be connected to processors only"
    )]
    NotAProcessor {
        /// The name given.
        node: String,
    },
    /// A duration or interval was not valid.
    #[error("{what} must be positive, but was {millis} ms")]
    NonPositiveDuration {
        /// What the duration is for.
        what: &'static str,
        /// The value given.
        millis: i128,
    },
}

/// Any error of this library.
///
/// Variants name the topic, partition, offset, node or store involved.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum StreamsError {
    /// The topology could not be built.
    #[error("invalid topology: {0}")]
    Topology(#[from] TopologyError),
    /// A record read from a topic could not be deserialized.
    #[error(
        "cannot deserialize the {part} of the record at {topic}-{partition} offset {offset}: {reason}; \
         check the serde configured for this topic"
    )]
    Deserialization {
        /// The topic read.
        topic: String,
        /// The partition read.
        partition: i32,
        /// The record's offset.
        offset: i64,
        /// Key or value.
        part: RecordPart,
        /// What the serde said.
        #[source]
        reason: SerdeError,
    },
    /// A record could not be serialized for a topic.
    #[error(
        "cannot serialize the {part} of a record for topic `{topic}`{}: {reason}",
        node_suffix(node)
    )]
    Serialization {
        /// The topic written.
        topic: String,
        /// The sink or store that serialized, if any.
        node: Option<String>,
        /// Key or value.
        part: RecordPart,
        /// What the serde said.
        #[source]
        reason: SerdeError,
    },
    /// No serde was given and there is no default for the type.
    #[error(
        "node `{node}` needs a {part} serde for type `{type_name}`, and none was given; \
         pass one (for example `Consumed::with(..)` or `Produced::with(..)`) or set a default serde for this type in the config"
    )]
    MissingSerde {
        /// The source or sink.
        node: String,
        /// Key or value.
        part: RecordPart,
        /// The Rust type that needed a serde.
        type_name: &'static str,
    },
    /// A processor forwarded to a child it does not have.
    #[error(
        "processor `{node}` forwarded to child `{child}`, which is not one of its children {children:?}"
    )]
    UnknownChild {
        /// The forwarding processor.
        node: String,
        /// The child it named.
        child: String,
        /// Its real children.
        children: Vec<String>,
    },
    /// A topic that no source reads.
    #[error("unknown topic: {topic}; the topology reads {known:?}")]
    UnknownTopic {
        /// The topic asked for.
        topic: String,
        /// The topics that do exist.
        known: Vec<String>,
    },
    /// A sub-topology id the topology does not have.
    #[error(
        "the topology has no sub-topology {subtopology}; its sub-topologies are 0..{count} (see Topology::describe)"
    )]
    UnknownSubtopology {
        /// The id asked for.
        subtopology: usize,
        /// How many sub-topologies there are.
        count: usize,
    },
    /// A record timestamp was negative.
    #[error(
        "record timestamp {timestamp} for topic `{topic}` is negative; timestamps are epoch milliseconds >= 0"
    )]
    NegativeTimestamp {
        /// The topic.
        topic: String,
        /// The timestamp given.
        timestamp: i64,
    },
    /// A duration does not fit in an `i64` of milliseconds (Kafka's
    /// `validateMillisecondDuration`).
    #[error("{what} {duration:?} is too large; it must fit in an i64 of milliseconds")]
    DurationTooLarge {
        /// What the duration is for (`window size`, `punctuation interval`, ..).
        what: &'static str,
        /// The duration given.
        duration: Duration,
    },
    /// Time windows of a size of zero or less.
    #[error("window size must be larger than zero, but was {size_ms} ms; give a positive size")]
    WindowSizeNotPositive {
        /// The size given.
        size_ms: i64,
    },
    /// Hopping windows whose advance is zero or larger than their size.
    #[error(
        "window advance must be more than zero and no more than the window size of {size_ms} ms, \
         but was {advance_ms} ms; give an advance in (0, {size_ms}]"
    )]
    WindowAdvanceOutOfRange {
        /// The window size.
        size_ms: i64,
        /// The advance given.
        advance_ms: i64,
    },
    /// Session windows with an inactivity gap of zero or less.
    #[error(
        "session inactivity gap must be larger than zero, but was {gap_ms} ms; give a positive gap"
    )]
    InactivityGapNotPositive {
        /// The gap given.
        gap_ms: i64,
    },
    /// Join windows whose bounds and grace add up past an `i64` of milliseconds.
    #[error(
        "join windows before={before_ms} ms, after={after_ms} ms and grace={grace_ms} ms \
         add up to more than an i64 of milliseconds; use smaller durations"
    )]
    JoinWindowsOverflow {
        /// Milliseconds before.
        before_ms: i64,
        /// Milliseconds after.
        after_ms: i64,
        /// The grace period.
        grace_ms: i64,
    },
    /// A window or session store retains its records for less time than
    /// its windows need.
    #[error(
        "the retention period of the {kind} `{store}` must be no smaller than {minimum}; \
         got retention={retention_ms} ms against a minimum of {minimum_ms} ms; give a longer retention"
    )]
    RetentionTooShort {
        /// The store.
        store: String,
        /// Its kind (a window or a session store).
        kind: StoreKind,
        /// The retention given.
        retention_ms: i64,
        /// The smallest retention allowed.
        minimum_ms: i64,
        /// What the minimum is, in words (`its window size plus the grace period`).
        minimum: &'static str,
    },
    /// A configuration value that cannot be read.
    #[error(
        "config `{config}` must be {expected}, but was {value:?}; fix its value in the StreamsConfig"
    )]
    InvalidConfig {
        /// The config key.
        config: &'static str,
        /// The value set.
        value: String,
        /// What it must be, in words.
        expected: &'static str,
    },
    /// `topology.optimization` is not `none`, `all` or a list of Kafka's
    /// optimizations (Kafka's `ConfigException`, whose message this one
    /// starts with: see [`StreamsError::kafka_message`]).
    #[error(
        "{kafka} (topology.optimization was {value:?}: {problem}; use none, all, or a comma-separated list of \
         reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join)",
        kafka = optimization_kafka_message(value, unknown.as_deref()),
        problem = match unknown {
            Some(u) => format!("`{u}` is not an optimization"),
            None => "`none` and `all` cannot be combined with other values".to_owned(),
        }
    )]
    InvalidTopologyOptimization {
        /// The value set.
        value: String,
        /// The part of it that is not an optimization; `None` when `none`
        /// or `all` was combined with another value.
        unknown: Option<String>,
    },
    /// `suppress(until_window_closes(..))` on a table that no windowed
    /// aggregation feeds (Kafka's `GraphGraceSearchUtil`).
    #[error(
        "suppression at node `{node}` waits for windows to close, but window close time is only defined \
         for windowed computations; got [{chain}]; suppress a windowed aggregation's table or use `until_time_limit`"
    )]
    NotWindowed {
        /// The node the suppression follows.
        node: String,
        /// The chain of nodes searched for a windowed aggregation, `a->b`.
        chain: String,
    },
    /// `StreamsBuilder::build` was called again after it had failed.
    #[error("this builder failed earlier: {first}; fix that error and start a new StreamsBuilder")]
    BuilderFailedEarlier {
        /// The first failure's message.
        first: String,
    },
    /// A serialized record was handed to a node that is not a source.
    #[error(
        "node `{node}` is not a source and cannot read serialized records; pipe records to a source topic"
    )]
    NotASource {
        /// The node.
        node: String,
    },
    /// A record was forwarded to a global source, which only reads its topic.
    #[error(
        "global source `{node}` reads its topic only; it has no parent, so do not forward records to it"
    )]
    GlobalSourceForwardedTo {
        /// The global source.
        node: String,
    },
    /// A node received a record of other types than it reads.
    #[error(
        "node `{node}` expected a record of type ({expected}) but received another type; connect nodes whose types agree"
    )]
    RecordTypeMismatch {
        /// The node.
        node: String,
        /// What it reads, as `key, value` type names.
        expected: String,
    },
    /// A store handle was asked for while another handle to it is held.
    #[error("store `{store}` is already borrowed; drop the previous handle to it first")]
    StoreAlreadyBorrowed {
        /// The store.
        store: String,
    },
    /// A sink's topic name extractor returned an empty name.
    #[error(
        "the topic name extractor of sink `{node}` returned an empty topic name; return the name of a topic"
    )]
    EmptyExtractedTopic {
        /// The sink.
        node: String,
    },
    /// A sink with a stream partitioner could not learn the partition count
    /// of its topic (Kafka's `Could not get partition information for topic
    /// ... for task ...`).
    #[error(
        "could not get partition information for topic `{topic}` for task {task}: {reason}; \
         create the topic (with its partition count) before the application writes to it"
    )]
    PartitionInfo {
        /// The sink's topic.
        topic: String,
        /// The task, as `<sub-topology>_<partition>`.
        task: String,
        /// Why the count is not known.
        reason: String,
    },
    /// A global store was built with its changelog enabled.
    #[error(
        "global store `{store}` must have logging disabled: its topic `{topic}` is its changelog; \
         build it with `with_logging_disabled()`"
    )]
    GlobalStoreLogging {
        /// The store.
        store: String,
        /// The topic it is restored from.
        topic: String,
    },
    /// A changelog record that the store it restores cannot have written.
    #[error(
        "changelog record at {topic} offset {offset} {reason}; store `{store}` cannot restore from it, \
         check that the topic is this store's changelog"
    )]
    InvalidChangelogRecord {
        /// The store being restored.
        store: String,
        /// The changelog topic.
        topic: String,
        /// The record's offset.
        offset: i64,
        /// What is wrong with it (`has no key`, ..).
        reason: &'static str,
    },
    /// The test driver was called while it was already running (from a
    /// processor, for example).
    #[error(
        "the test driver is already in use (re-entered from a processor?); do not call the driver from inside a topology"
    )]
    DriverInUse,
    /// A processor failed while processing a record or punctuating.
    #[error("{} failed: {source}", processor_name(node))]
    Processing {
        /// The processor, once the engine has named it; `None` while the
        /// error is on its way out of the processor's own code.
        node: Option<String>,
        /// What went wrong.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A processing error that the processing exception handler answered
    /// with fail (Kafka's `FailedProcessingException`, reported as
    /// `Exception caught in process. taskId=.., processor=.., topic=..,
    /// partition=.., offset=..`).
    #[error("exception caught in process: {origin}, processor `{node}`: {source}")]
    ProcessingFailed {
        /// The processor whose code failed.
        node: String,
        /// The task and the source record being processed.
        origin: Box<RecordOrigin>,
        /// The error the processor's code returned (a
        /// [`StreamsError::Processing`]).
        #[source]
        source: Box<StreamsError>,
    },
    /// A production error (a record a sink could not serialize) that the
    /// production exception handler answered with fail or retry (Kafka's
    /// `Unable to serialize record. ProducerRecord(topic=[..], ..)`).
    #[error(
        "unable to produce a record to topic `{topic}` (timestamp {timestamp}), {origin}: {source}"
    )]
    ProductionFailed {
        /// The topic written.
        topic: String,
        /// The record's timestamp.
        timestamp: i64,
        /// The task and the source record being processed.
        origin: Box<RecordOrigin>,
        /// The serialization error (a [`StreamsError::Serialization`]).
        #[source]
        source: Box<StreamsError>,
    },
    /// A processor was entered again while it was already running
    /// (a cycle between processors of one task).
    #[error(
        "processor `{node}` was re-entered while processing; processors of one sub-topology must not form a cycle"
    )]
    Reentrant {
        /// The processor.
        node: String,
    },
    /// A store that does not exist.
    #[error("no store named `{store}`; the stores are {existing:?}")]
    UnknownStore {
        /// The name asked for.
        store: String,
        /// The stores that exist.
        existing: Vec<String>,
    },
    /// A store asked for as the wrong kind or type: the message names
    /// the store's real kind and types and the getter that reads it.
    #[error(
        "store `{store}` is a {actual}{}, not the {expected} asked for; read it with {}",
        actual_types_shown(*actual, actual_types),
        read_with(store, *actual, actual_types)
    )]
    WrongStoreType {
        /// The store.
        store: String,
        /// What was asked for: a kind with its types (`key-value
        /// store<String, i64>`) or a type (`KeyValueStore<String, i64>`).
        expected: String,
        /// What the store is.
        actual: StoreKind,
        /// Its key and value types (`String, i64`), or for a store of your
        /// own its type (`Counter`), without their paths.
        actual_types: String,
    },
    /// A built-in store asked for through the getter of stores of your own
    /// (`state_store`, Kafka's `getStateStore`, which refuses built-in
    /// stores too).
    #[error(
        "store `{store}` is a {kind}, not a store of your own: read it with `{}::<K, V>(\"{store}\")`",
        kind.getter()
    )]
    BuiltInStore {
        /// The store.
        store: String,
        /// Its kind.
        kind: StoreKind,
    },
    /// A store was asked to write a changelog record at a negative
    /// timestamp, which Kafka's producer refuses (Kafka's value-only view
    /// of a timestamped store writes at -1).
    #[error(
        "cannot write a record at timestamp {timestamp} to the changelog `{topic}`: Kafka refuses negative timestamps (the value-only view of a timestamped store writes at -1, as Kafka's does); write through the timestamped getter with a timestamp, or build the store with its logging disabled"
    )]
    NegativeChangelogTimestamp {
        /// The changelog topic.
        topic: String,
        /// The timestamp asked for.
        timestamp: i64,
    },
    /// A persistent (RocksDB) store could not open, read or write its
    /// files.
    #[error(
        "store `{store}` cannot {action} its RocksDB files at {}: {reason}; check that the directory can be created and written (`state.dir`), and that no other driver or application uses the same `state.dir` and `application.id` (RocksDB locks a store's directory)",
        path.display()
    )]
    StoreIo {
        /// The store.
        store: String,
        /// The store's directory.
        path: std::path::PathBuf,
        /// What failed: `open`, `read`, `write`, `create its directory`,
        /// `decode a value of`.
        action: &'static str,
        /// RocksDB's or the file system's reason.
        reason: String,
    },
    /// The test driver could not delete the state directory at close.
    #[error(
        "cannot delete the state directory {} at close: {reason}; delete it yourself, and check that nothing else uses it",
        path.display()
    )]
    StateDirCleanup {
        /// `<state.dir>/<application.id>`.
        path: std::path::PathBuf,
        /// The file system's reason.
        reason: String,
    },
    /// A store was to live in RocksDB (the config's DSL store suppliers),
    /// but the crate was built without its `rocksdb` feature.
    #[error(
        "store `{store}` is to be a persistent (RocksDB) store, but streams-core was built without its `rocksdb` feature; enable it (`streams-core = {{ version = \"..\", features = [\"rocksdb\"] }}`) or keep the DSL's stores in memory (drop `dsl.store.suppliers.class` / `default.dsl.store` from the config)"
    )]
    PersistentStoresNotEnabled {
        /// The store.
        store: String,
    },
    /// A store was asked for something its kind does not do (Kafka's
    /// `UnsupportedOperationException`).
    #[error("store `{store}` does not support `{operation}`; use {instead}")]
    StoreOperationNotSupported {
        /// The store.
        store: String,
        /// What was asked.
        operation: &'static str,
        /// What to call instead.
        instead: &'static str,
    },
    /// A processor used a store it is not connected to.
    #[error(
        "processor `{node}` has no access to store `{store}`: the store is not connected to it; connect it with `add_state_store(.., &[\"{node}\"])` or `connect_processor_and_state_stores`"
    )]
    StoreNotConnected {
        /// The processor.
        node: String,
        /// The store.
        store: String,
    },
    /// A foreign-key join read a subscription or response of a version
    /// it cannot process (Kafka's `UnsupportedVersionException`, "is of
    /// an incompatible version"): written by a newer Kafka or library.
    #[error(
        "foreign-key join node `{node}` read a {what} of version {version} from `{topic}`, newer than \
         the version {newest} it reads; run the same version on every instance (upgrade the \
         older ones first)"
    )]
    UnsupportedForeignKeyJoinVersion {
        /// The processor that read it.
        node: String,
        /// The internal topic it came from (empty if not known).
        topic: String,
        /// `subscription` or `response`.
        what: &'static str,
        /// The version it has.
        version: u8,
        /// The newest version this library reads.
        newest: u8,
    },
    /// A versioned store with a setting Kafka refuses (Kafka's
    /// `IllegalArgumentException` from `Stores.persistentVersionedKeyValueStore`).
    #[error("versioned store `{store}`: {problem} (was {millis} ms); {fix}")]
    InvalidVersionedStore {
        /// The store.
        store: String,
        /// Kafka's message (`historyRetention cannot be negative`, ..).
        problem: &'static str,
        /// The value given.
        millis: i64,
        /// What to do instead.
        fix: &'static str,
    },
    /// A stream-table join with a grace period on a table that is not
    /// versioned (Kafka's `IllegalArgumentException`).
    #[error(
        "stream-table join `{node}`: KTable must be versioned to use a grace period in a stream table join; \
         materialize the table in a versioned store (`Stores::persistent_versioned_key_value_store`) or remove the grace period"
    )]
    JoinGraceOnUnversionedTable {
        /// The join node.
        node: String,
    },
    /// A stream-table join whose grace period is longer than its
    /// versioned table keeps history (Kafka's `IllegalArgumentException`).
    #[error(
        "stream-table join `{node}`: History retention must be at least grace period; the grace period is \
         {grace_ms} ms but store `{store}` keeps {history_retention_ms} ms of history; shorten the grace period or lengthen the history retention"
    )]
    JoinGraceExceedsHistoryRetention {
        /// The join node.
        node: String,
        /// The versioned store of the table.
        store: String,
        /// The join's grace period.
        grace_ms: i64,
        /// The store's history retention.
        history_retention_ms: i64,
    },
    /// A versioned table where versioned tables are not allowed (Kafka's
    /// `TopologyException` for a `suppress` or a global table), or an
    /// operator that cannot keep its result in a versioned store here.
    #[error("{what}: {reason}")]
    VersionedNotSupported {
        /// The operator or store.
        what: String,
        /// Kafka's message, or what this library does not do.
        reason: &'static str,
    },
    /// The driver or task was used after `close`.
    #[error("the {0} is closed")]
    Closed(&'static str),
    /// The cluster a test driver mirrors its topics to refused a request
    /// (creating a topic, appending a record, or reading a changelog).
    #[error("cluster topic `{topic}`: {source}")]
    Cluster {
        /// The topic involved.
        topic: String,
        /// The broker's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn processor_name(node: &Option<String>) -> String {
    match node {
        Some(n) => format!("processor `{n}`"),
        None => "a processor".to_owned(),
    }
}

/// The message of the `ConfigException` Kafka 4.4's `StreamsConfig`
/// throws for a bad `topology.optimization` `value`: for a part that is
/// not an optimization (`unknown`), or for `none` or `all` next to another
/// part. The constant names inside the quotes are Kafka's own text (a slip
/// of its string concatenation), kept so that the messages match.
fn optimization_kafka_message(value: &str, unknown: Option<&str>) -> String {
    const ACCEPTABLE: &str = "Acceptable values are: \"+NO_OPTIMIZATION+\", \"+OPTIMIZE+\", or a comma \
        separated list of specific optimizations: (\"+REUSE_KTABLE_SOURCE_TOPICS+\", \
        \"+MERGE_REPARTITION_TOPICS+\" + \"SINGLE_STORE_SELF_JOIN+\").";
    match unknown {
        Some(_) => format!("Unrecognized config. {ACCEPTABLE}"),
        None => format!("\"{value}\" is not a valid optimization config. {ACCEPTABLE}"),
    }
}

fn node_suffix(node: &Option<String>) -> String {
    match node {
        Some(n) => format!(" in node `{n}`"),
        None => String::new(),
    }
}

impl StreamsError {
    /// An error for a processor to return from `process` or `punctuate`
    /// with a message of its own; the engine adds the processor's name.
    pub fn processing(message: impl Into<String>) -> Self {
        StreamsError::Processing {
            node: None,
            source: message.into().into(),
        }
    }
}

impl StreamsError {
    /// The Java class name Kafka Streams would report for this error, as
    /// the dead letter queue's `__streams.errors.exception` header carries
    /// it: `org.apache.kafka.common.errors.SerializationException` for a
    /// key or value that cannot be (de)serialized, `java.lang.RuntimeException`
    /// for an error or panic of user code (Rust errors have no Java class;
    /// Kafka reports the class the user threw), and
    /// `org.apache.kafka.streams.errors.StreamsException` for anything else.
    ///
    /// ```
    /// use streams_core::StreamsError;
    /// assert_eq!(StreamsError::processing("boom").exception_class(), "java.lang.RuntimeException");
    /// ```
    pub fn exception_class(&self) -> &'static str {
        match self {
            StreamsError::Deserialization { .. } | StreamsError::Serialization { .. } => {
                "org.apache.kafka.common.errors.SerializationException"
            }
            StreamsError::Processing { .. } => "java.lang.RuntimeException",
            StreamsError::ProcessingFailed { source, .. }
            | StreamsError::ProductionFailed { source, .. } => source.exception_class(),
            _ => "org.apache.kafka.streams.errors.StreamsException",
        }
    }

    /// The message Kafka's own exception has for this error, where Kafka
    /// has one to compare with: for
    /// [`InvalidTopologyOptimization`](StreamsError::InvalidTopologyOptimization),
    /// the `ConfigException`'s message exactly as Kafka 4.4 writes it (ours
    /// extends it); for [`BuiltInStore`](StreamsError::BuiltInStore), the
    /// `IllegalArgumentException` of Kafka's `getStateStore`.
    ///
    /// ```
    /// use streams_core::config::TopologyOptimizations;
    /// let err = TopologyOptimizations::parse("all,none").unwrap_err();
    /// assert!(err.kafka_message().unwrap().starts_with("\"all,none\" is not a valid optimization config."));
    /// assert!(err.to_string().starts_with(&err.kafka_message().unwrap()));
    /// ```
    pub fn kafka_message(&self) -> Option<String> {
        match self {
            StreamsError::InvalidTopologyOptimization { value, unknown } => {
                Some(optimization_kafka_message(value, unknown.as_deref()))
            }
            StreamsError::BuiltInStore { store, kind } => Some(format!(
                "Store {store} is a {kind} and should be accessed via `{}()`",
                kind.kafka_getter()
            )),
            _ => None,
        }
    }

    /// The exception message Kafka Streams would report for this error,
    /// as the dead letter queue's `__streams.errors.message` header
    /// carries it: a serde's message (Kafka's own where the serde knows it,
    /// [`SerdeError::kafka_message`]), the text of user code's error, or
    /// this error's text.
    ///
    /// ```
    /// use streams_core::StreamsError;
    /// assert_eq!(StreamsError::processing("boom").exception_message(), "boom");
    /// ```
    pub fn exception_message(&self) -> String {
        match self {
            StreamsError::Deserialization { reason, .. }
            | StreamsError::Serialization { reason, .. } => reason
                .kafka_message()
                .unwrap_or(reason.message())
                .to_owned(),
            StreamsError::Processing { source, .. } => source.to_string(),
            StreamsError::ProcessingFailed { source, .. }
            | StreamsError::ProductionFailed { source, .. } => source.exception_message(),
            other => other.to_string(),
        }
    }
}

/// The task and the source record an error happened in: what
/// [`StreamsError::ProcessingFailed`] and [`StreamsError::ProductionFailed`]
/// name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOrigin {
    /// The task, `<subtopology>_<partition>`.
    pub task_id: String,
    /// The source topic of the record being processed (empty outside a
    /// record, as in a punctuation).
    pub topic: String,
    /// Its partition (`-1` outside a record).
    pub partition: i32,
    /// Its offset (`-1` outside a record).
    pub offset: i64,
}

impl fmt::Display for RecordOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.topic.is_empty() {
            return write!(f, "task {}, in a punctuation", self.task_id);
        }
        write!(
            f,
            "task {}, topic `{}`, partition {}, offset {}",
            self.task_id, self.topic, self.partition, self.offset
        )
    }
}

/// A panic in user code, caught at the node it happened in and reported as
/// the source of a [`StreamsError::Processing`] naming the node.
#[derive(thiserror::Error)]
#[error("user code panicked: {message}")]
pub struct UserCodePanic {
    /// The panic's message (its payload, when it is a string).
    pub message: String,
}

impl UserCodePanic {
    /// The panic of a caught payload (`std::panic::catch_unwind`'s error).
    pub fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic payload that is not a string".to_owned());
        UserCodePanic { message }
    }
}

/// `<K, V>` after a built-in kind, ` `Type`` after a custom one.
fn actual_types_shown(kind: StoreKind, types: &str) -> String {
    match kind {
        StoreKind::Custom => format!(" `{types}`"),
        _ => format!("<{types}>"),
    }
}

/// The getter call that reads a store of this kind and these types.
fn read_with(store: &str, kind: StoreKind, types: &str) -> String {
    let call = |getter: &str| format!("`{getter}::<{types}>(\"{store}\")`");
    match kind {
        StoreKind::Custom => format!("`state_store(\"{store}\")` as a `{types}`"),
        StoreKind::TimestampedKeyValue => format!(
            "{}, or {} for its values only",
            call(kind.getter()),
            call(StoreKind::KeyValue.getter())
        ),
        StoreKind::TimestampedWindow => format!(
            "{}, or {} for its values only",
            call(kind.getter()),
            call(StoreKind::Window.getter())
        ),
        _ => call(kind.getter()),
    }
}

/// A Rust type's name without its paths, for messages:
/// `alloc::vec::Vec<alloc::string::String>` is `Vec<String>`.
///
/// ```
/// use streams_core::error::short_type_name;
/// assert_eq!(short_type_name(std::any::type_name::<Vec<String>>()), "Vec<String>");
/// assert_eq!(short_type_name("(alloc::string::String, core::option::Option<i64>)"), "(String, Option<i64>)");
/// ```
pub fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut path = String::new();
    let flush = |path: &mut String, out: &mut String| {
        out.push_str(path.rsplit("::").next().unwrap_or_default());
        path.clear();
    };
    for c in name.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
        } else {
            flush(&mut path, &mut out);
            out.push(c);
        }
    }
    flush(&mut path, &mut out);
    out
}

/// The result type of this crate.
pub type Result<T, E = StreamsError> = std::result::Result<T, E>;

/// The kinds of built-in store, as the driver's typed getters name them
/// and errors tell them; also exported as `state::StoreKind`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// [`KeyValueStore`](crate::state::KeyValueStore).
    KeyValue,
    /// [`TimestampedKeyValueStore`](crate::state::TimestampedKeyValueStore).
    TimestampedKeyValue,
    /// [`WindowStore`](crate::state::WindowStore).
    Window,
    /// [`TimestampedWindowStore`](crate::state::TimestampedWindowStore):
    /// the store of a DSL windowed aggregation.
    TimestampedWindow,
    /// [`SessionStore`](crate::state::SessionStore).
    Session,
    /// [`VersionedKeyValueStore`](crate::state::VersionedKeyValueStore).
    VersionedKeyValue,
    /// A store of the user's own type.
    Custom,
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreKind::KeyValue => "key-value store",
            StoreKind::TimestampedKeyValue => "timestamped key-value store",
            StoreKind::Window => "window store",
            StoreKind::TimestampedWindow => "timestamped window store",
            StoreKind::Session => "session store",
            StoreKind::VersionedKeyValue => "versioned key-value store",
            StoreKind::Custom => "custom store",
        })
    }
}

impl StoreKind {
    /// The getter that reads a store of this kind, on the test driver and
    /// on a processor's context alike: `key_value_store`,
    /// `timestamped_key_value_store`, `window_store`,
    /// `timestamped_window_store`, `session_store`,
    /// `versioned_key_value_store`, or `state_store` for a store of your
    /// own.
    ///
    /// ```
    /// use streams_core::state::StoreKind;
    /// assert_eq!(StoreKind::TimestampedKeyValue.getter(), "timestamped_key_value_store");
    /// ```
    pub fn getter(self) -> &'static str {
        match self {
            StoreKind::KeyValue => "key_value_store",
            StoreKind::TimestampedKeyValue => "timestamped_key_value_store",
            StoreKind::Window => "window_store",
            StoreKind::TimestampedWindow => "timestamped_window_store",
            StoreKind::Session => "session_store",
            StoreKind::VersionedKeyValue => "versioned_key_value_store",
            StoreKind::Custom => "state_store",
        }
    }

    /// Kafka's `TopologyTestDriver` getter for this kind.
    fn kafka_getter(self) -> &'static str {
        match self {
            StoreKind::KeyValue => "getKeyValueStore",
            StoreKind::TimestampedKeyValue => "getTimestampedKeyValueStore",
            StoreKind::Window => "getWindowStore",
            StoreKind::TimestampedWindow => "getTimestampedWindowStore",
            StoreKind::Session => "getSessionStore",
            StoreKind::VersionedKeyValue => "getVersionedKeyValueStore",
            StoreKind::Custom => "getStateStore",
        }
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for SerdeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for TopologyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for StreamsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for UserCodePanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{
        RecordOrigin, RecordPart, SerdeError, StoreKind, StreamsError, TopologyError, UserCodePanic,
    };

    /// The variant's name; the match has no wildcard, so a new variant
    /// does not compile until it has a sample below.
    fn streams_variant(e: &StreamsError) -> &'static str {
        match e {
            StreamsError::Topology(_) => "Topology",
            StreamsError::Deserialization { .. } => "Deserialization",
            StreamsError::Serialization { .. } => "Serialization",
            StreamsError::MissingSerde { .. } => "MissingSerde",
            StreamsError::UnknownChild { .. } => "UnknownChild",
            StreamsError::UnknownTopic { .. } => "UnknownTopic",
            StreamsError::UnknownSubtopology { .. } => "UnknownSubtopology",
            StreamsError::NegativeTimestamp { .. } => "NegativeTimestamp",
            StreamsError::DurationTooLarge { .. } => "DurationTooLarge",
            StreamsError::WindowSizeNotPositive { .. } => "WindowSizeNotPositive",
            StreamsError::WindowAdvanceOutOfRange { .. } => "WindowAdvanceOutOfRange",
            StreamsError::InactivityGapNotPositive { .. } => "InactivityGapNotPositive",
            StreamsError::JoinWindowsOverflow { .. } => "JoinWindowsOverflow",
            StreamsError::RetentionTooShort { .. } => "RetentionTooShort",
            StreamsError::InvalidConfig { .. } => "InvalidConfig",
            StreamsError::InvalidTopologyOptimization { .. } => "InvalidTopologyOptimization",
            StreamsError::NotWindowed { .. } => "NotWindowed",
            StreamsError::BuilderFailedEarlier { .. } => "BuilderFailedEarlier",
            StreamsError::NotASource { .. } => "NotASource",
            StreamsError::GlobalSourceForwardedTo { .. } => "GlobalSourceForwardedTo",
            StreamsError::RecordTypeMismatch { .. } => "RecordTypeMismatch",
            StreamsError::StoreAlreadyBorrowed { .. } => "StoreAlreadyBorrowed",
            StreamsError::EmptyExtractedTopic { .. } => "EmptyExtractedTopic",
            StreamsError::PartitionInfo { .. } => "PartitionInfo",
            StreamsError::GlobalStoreLogging { .. } => "GlobalStoreLogging",
            StreamsError::InvalidChangelogRecord { .. } => "InvalidChangelogRecord",
            StreamsError::DriverInUse => "DriverInUse",
            StreamsError::Processing { .. } => "Processing",
            StreamsError::ProcessingFailed { .. } => "ProcessingFailed",
            StreamsError::ProductionFailed { .. } => "ProductionFailed",
            StreamsError::Reentrant { .. } => "Reentrant",
            StreamsError::UnknownStore { .. } => "UnknownStore",
            StreamsError::WrongStoreType { .. } => "WrongStoreType",
            StreamsError::BuiltInStore { .. } => "BuiltInStore",
            StreamsError::StoreIo { .. } => "StoreIo",
            StreamsError::StateDirCleanup { .. } => "StateDirCleanup",
            StreamsError::PersistentStoresNotEnabled { .. } => "PersistentStoresNotEnabled",
            StreamsError::StoreOperationNotSupported { .. } => "StoreOperationNotSupported",
            StreamsError::NegativeChangelogTimestamp { .. } => "NegativeChangelogTimestamp",
            StreamsError::StoreNotConnected { .. } => "StoreNotConnected",
            StreamsError::UnsupportedForeignKeyJoinVersion { .. } => {
                "UnsupportedForeignKeyJoinVersion"
            }
            StreamsError::InvalidVersionedStore { .. } => "InvalidVersionedStore",
            StreamsError::JoinGraceOnUnversionedTable { .. } => "JoinGraceOnUnversionedTable",
            StreamsError::JoinGraceExceedsHistoryRetention { .. } => {
                "JoinGraceExceedsHistoryRetention"
            }
            StreamsError::VersionedNotSupported { .. } => "VersionedNotSupported",
            StreamsError::Closed(_) => "Closed",
            StreamsError::Cluster { .. } => "Cluster",
        }
    }

    fn topology_variant(e: &TopologyError) -> &'static str {
        match e {
            TopologyError::DuplicateName { .. } => "DuplicateName",
            TopologyError::EmptyName => "EmptyName",
            TopologyError::UnknownParent { .. } => "UnknownParent",
            TopologyError::NoParent { .. } => "NoParent",
            TopologyError::SinkAsParent { .. } => "SinkAsParent",
            TopologyError::NoSource => "NoSource",
            TopologyError::SourceTopicMatchesAsRegex { .. } => "SourceTopicMatchesAsRegex",
            TopologyError::NoTopic { .. } => "NoTopic",
            TopologyError::EmptyTopic { .. } => "EmptyTopic",
            TopologyError::TopicAlreadyRead { .. } => "TopicAlreadyRead",
            TopologyError::InvalidPattern { .. } => "InvalidPattern",
            TopologyError::TypeMismatch { .. } => "TypeMismatch",
            TopologyError::UnknownStore { .. } => "UnknownStore",
            TopologyError::DuplicateStore { .. } => "DuplicateStore",
            TopologyError::NotAProcessor { .. } => "NotAProcessor",
            TopologyError::NonPositiveDuration { .. } => "NonPositiveDuration",
            TopologyError::InvalidPartitionCount { .. } => "InvalidPartitionCount",
            TopologyError::EnforcedPartitionsDiffer { .. } => "EnforcedPartitionsDiffer",
            TopologyError::CannotOptimize { .. } => "CannotOptimize",
        }
    }

    fn s(x: &str) -> String {
        x.to_owned()
    }

    fn topology_samples() -> Vec<TopologyError> {
        vec![
            TopologyError::DuplicateName { name: s("n") },
            TopologyError::EmptyName,
            TopologyError::UnknownParent {
                node: s("n"),
                parent: s("p"),
            },
            TopologyError::NoParent { node: s("n") },
            TopologyError::SinkAsParent {
                node: s("n"),
                parent: s("sink"),
            },
            TopologyError::NoSource,
            TopologyError::SourceTopicMatchesAsRegex {
                source_topic: s("orders.v1"),
                topic: s("ordersXv1"),
            },
            TopologyError::NoTopic {
                kind: "source",
                node: s("n"),
            },
            TopologyError::EmptyTopic { node: s("n") },
            TopologyError::TopicAlreadyRead {
                topic: s("t"),
                existing: s("src"),
            },
            TopologyError::InvalidPattern {
                node: s("n"),
                pattern: s("("),
                reason: s("unclosed group"),
            },
            TopologyError::TypeMismatch {
                parent: s("p"),
                parent_output: s("String, i64"),
                child: s("c"),
                child_input: s("String, String"),
            },
            TopologyError::UnknownStore {
                node: s("n"),
                store: s("st"),
            },
            TopologyError::DuplicateStore { store: s("st") },
            TopologyError::NotAProcessor { node: s("n") },
            TopologyError::NonPositiveDuration {
                what: "punctuation interval",
                millis: 0,
            },
            TopologyError::InvalidPartitionCount {
                topic: s("wide-repartition"),
                partitions: 0,
            },
            TopologyError::EnforcedPartitionsDiffer {
                topics: vec![(s("l-repartition"), 2), (s("r-repartition"), 3)],
            },
            TopologyError::CannotOptimize {
                optimization: "merge.repartition.topics",
                node: s("KSTREAM-MAP-0000000001"),
                reason: s(
                    "its repartition topic `counts-repartition` carries (String, i64), but the node forwards (String, String)",
                ),
            },
        ]
    }

    fn streams_samples() -> Vec<StreamsError> {
        let serde = || SerdeError::new("3 bytes are not a long");
        vec![
            StreamsError::Topology(TopologyError::NoSource),
            StreamsError::Deserialization {
                topic: s("t"),
                partition: 0,
                offset: 7,
                part: RecordPart::Value,
                reason: serde(),
            },
            StreamsError::Serialization {
                topic: s("t"),
                node: Some(s("sink")),
                part: RecordPart::Key,
                reason: serde(),
            },
            StreamsError::Serialization {
                topic: s("t"),
                node: None,
                part: RecordPart::Key,
                reason: serde(),
            },
            StreamsError::MissingSerde {
                node: s("n"),
                part: RecordPart::Value,
                type_name: "i64",
            },
            StreamsError::UnknownChild {
                node: s("n"),
                child: s("c"),
                children: vec![s("a"), s("b")],
            },
            StreamsError::UnknownTopic {
                topic: s("nope"),
                known: vec![s("in")],
            },
            StreamsError::UnknownSubtopology {
                subtopology: 3,
                count: 2,
            },
            StreamsError::NegativeTimestamp {
                topic: s("t"),
                timestamp: -1,
            },
            StreamsError::DurationTooLarge {
                what: "window size",
                duration: Duration::MAX,
            },
            StreamsError::WindowSizeNotPositive { size_ms: 0 },
            StreamsError::WindowAdvanceOutOfRange {
                size_ms: 10,
                advance_ms: 11,
            },
            StreamsError::InactivityGapNotPositive { gap_ms: 0 },
            StreamsError::JoinWindowsOverflow {
                before_ms: i64::MAX,
                after_ms: 1,
                grace_ms: 0,
            },
            StreamsError::RetentionTooShort {
                store: s("counts"),
                kind: StoreKind::Window,
                retention_ms: 12,
                minimum_ms: 15,
                minimum: "its window size plus the grace period",
            },
            StreamsError::InvalidConfig {
                config: "c",
                value: s("soon"),
                expected: "a number of milliseconds",
            },
            StreamsError::InvalidTopologyOptimization {
                value: s("merge"),
                unknown: Some(s("merge")),
            },
            StreamsError::InvalidTopologyOptimization {
                value: s("all,none"),
                unknown: None,
            },
            StreamsError::NotWindowed {
                node: s("t"),
                chain: s("src->t"),
            },
            StreamsError::BuilderFailedEarlier {
                first: s("invalid topology: ..."),
            },
            StreamsError::NotASource { node: s("n") },
            StreamsError::GlobalSourceForwardedTo { node: s("g") },
            StreamsError::RecordTypeMismatch {
                node: s("n"),
                expected: s("String, i64"),
            },
            StreamsError::StoreAlreadyBorrowed { store: s("st") },
            StreamsError::EmptyExtractedTopic { node: s("sink") },
            StreamsError::PartitionInfo {
                topic: s("out"),
                task: s("1_2"),
                reason: s("this can happen if the topic does not exist"),
            },
            StreamsError::GlobalStoreLogging {
                store: s("st"),
                topic: s("t"),
            },
            StreamsError::InvalidChangelogRecord {
                store: s("st"),
                topic: s("st-changelog"),
                offset: 3,
                reason: "has no key",
            },
            StreamsError::DriverInUse,
            StreamsError::Processing {
                node: Some(s("p")),
                source: "boom".into(),
            },
            StreamsError::processing("boom"),
            StreamsError::ProcessingFailed {
                node: s("p"),
                origin: Box::new(RecordOrigin {
                    task_id: s("0_1"),
                    topic: s("t"),
                    partition: 1,
                    offset: 7,
                }),
                source: Box::new(StreamsError::Processing {
                    node: Some(s("p")),
                    source: Box::new(UserCodePanic { message: s("oops") }),
                }),
            },
            StreamsError::ProductionFailed {
                topic: s("out"),
                timestamp: 5,
                origin: Box::new(RecordOrigin {
                    task_id: s("0_0"),
                    topic: s("t"),
                    partition: 0,
                    offset: 3,
                }),
                source: Box::new(StreamsError::Serialization {
                    topic: s("out"),
                    node: Some(s("sink")),
                    part: RecordPart::Value,
                    reason: SerdeError::new("too big"),
                }),
            },
            StreamsError::Reentrant { node: s("p") },
            StreamsError::UnknownStore {
                store: s("nope"),
                existing: vec![s("st")],
            },
            StreamsError::WrongStoreType {
                store: s("st"),
                expected: s("window store<String, i64>"),
                actual: StoreKind::KeyValue,
                actual_types: s("String, i64"),
            },
            StreamsError::WrongStoreType {
                store: s("counts"),
                expected: s("KeyValueStore<String, String>"),
                actual: StoreKind::TimestampedKeyValue,
                actual_types: s("String, i64"),
            },
            StreamsError::WrongStoreType {
                store: s("counter"),
                expected: s("session store<String, i64>"),
                actual: StoreKind::Custom,
                actual_types: s("Counter"),
            },
            StreamsError::BuiltInStore {
                store: s("counts"),
                kind: StoreKind::TimestampedKeyValue,
            },
            StreamsError::NegativeChangelogTimestamp {
                topic: s("app-counts-changelog"),
                timestamp: -1,
            },
            StreamsError::StoreIo {
                store: s("counts"),
                path: std::path::PathBuf::from("/tmp/kafka-streams/app/0_0/rocksdb/counts"),
                action: "open",
                reason: s("IO error: lock hold by current process"),
            },
            StreamsError::StateDirCleanup {
                path: std::path::PathBuf::from("/tmp/kafka-streams/app"),
                reason: s("Permission denied (os error 13)"),
            },
            StreamsError::PersistentStoresNotEnabled { store: s("counts") },
            StreamsError::StoreOperationNotSupported {
                store: s("sessions"),
                operation: "find_sessions_ending_between",
                instead: "find_sessions_in_range(.., earliest_end, latest_start) or all(); Kafka's RocksDB session store throws UnsupportedOperationException here too",
            },
            StreamsError::StoreNotConnected {
                node: s("p"),
                store: s("st"),
            },
            StreamsError::UnsupportedForeignKeyJoinVersion {
                node: s("KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011"),
                topic: s("app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic"),
                what: "subscription",
                version: 2,
                newest: 1,
            },
            StreamsError::InvalidVersionedStore {
                store: s("v"),
                problem: "historyRetention cannot be negative",
                millis: -1,
                fix: "give a history retention of zero or more",
            },
            StreamsError::JoinGraceOnUnversionedTable {
                node: s("KSTREAM-JOIN-0000000004"),
            },
            StreamsError::JoinGraceExceedsHistoryRetention {
                node: s("KSTREAM-JOIN-0000000004"),
                store: s("v"),
                grace_ms: 20,
                history_retention_ms: 10,
            },
            StreamsError::VersionedNotSupported {
                what: s("suppress `KTABLE-SUPPRESS-0000000003`"),
                reason: "suppress() is only supported for non-versioned KTables (note that version semantics might be inherited from upstream)",
            },
            StreamsError::Closed("test driver"),
            StreamsError::Cluster {
                topic: s("t"),
                source: "topic exists".into(),
            },
        ]
    }

    #[test]
    fn every_error_message() {
        let mut text = String::new();
        for e in streams_samples() {
            text.push_str(&format!("{}: {e}\n", streams_variant(&e)));
        }
        for e in topology_samples() {
            text.push_str(&format!("Topology::{}: {e}\n", topology_variant(&e)));
        }
        let serde = SerdeError::from_error(std::fmt::Error);
        text.push_str(&format!(
            "SerdeError::new: {}\n",
            SerdeError::new("not a long")
        ));
        text.push_str(&format!("SerdeError::from_error: {serde}\n"));
        insta::assert_snapshot!(text, @r#"
        Topology: invalid topology: the topology has no source; add one with `add_source` or `StreamsBuilder::stream`
        Deserialization: cannot deserialize the value of the record at t-0 offset 7: 3 bytes are not a long; check the serde configured for this topic
        Serialization: cannot serialize the key of a record for topic `t` in node `sink`: 3 bytes are not a long
        Serialization: cannot serialize the key of a record for topic `t`: 3 bytes are not a long
        MissingSerde: node `n` needs a value serde for type `i64`, and none was given; pass one (for example `Consumed::with(..)` or `Produced::with(..)`) or set a default serde for this type in the config
        UnknownChild: processor `n` forwarded to child `c`, which is not one of its children ["a", "b"]
        UnknownTopic: unknown topic: nope; the topology reads ["in"]
        UnknownSubtopology: the topology has no sub-topology 3; its sub-topologies are 0..2 (see Topology::describe)
        NegativeTimestamp: record timestamp -1 for topic `t` is negative; timestamps are epoch milliseconds >= 0
        DurationTooLarge: window size 18446744073709551615.999999999s is too large; it must fit in an i64 of milliseconds
        WindowSizeNotPositive: window size must be larger than zero, but was 0 ms; give a positive size
        WindowAdvanceOutOfRange: window advance must be more than zero and no more than the window size of 10 ms, but was 11 ms; give an advance in (0, 10]
        InactivityGapNotPositive: session inactivity gap must be larger than zero, but was 0 ms; give a positive gap
        JoinWindowsOverflow: join windows before=9223372036854775807 ms, after=1 ms and grace=0 ms add up to more than an i64 of milliseconds; use smaller durations
        RetentionTooShort: the retention period of the window store `counts` must be no smaller than its window size plus the grace period; got retention=12 ms against a minimum of 15 ms; give a longer retention
        InvalidConfig: config `c` must be a number of milliseconds, but was "soon"; fix its value in the StreamsConfig
        InvalidTopologyOptimization: Unrecognized config. Acceptable values are: "+NO_OPTIMIZATION+", "+OPTIMIZE+", or a comma separated list of specific optimizations: ("+REUSE_KTABLE_SOURCE_TOPICS+", "+MERGE_REPARTITION_TOPICS+" + "SINGLE_STORE_SELF_JOIN+"). (topology.optimization was "merge": `merge` is not an optimization; use none, all, or a comma-separated list of reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join)
        InvalidTopologyOptimization: "all,none" is not a valid optimization config. Acceptable values are: "+NO_OPTIMIZATION+", "+OPTIMIZE+", or a comma separated list of specific optimizations: ("+REUSE_KTABLE_SOURCE_TOPICS+", "+MERGE_REPARTITION_TOPICS+" + "SINGLE_STORE_SELF_JOIN+"). (topology.optimization was "all,none": `none` and `all` cannot be combined with other values; use none, all, or a comma-separated list of reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join)
        NotWindowed: suppression at node `t` waits for windows to close, but window close time is only defined for windowed computations; got [src->t]; suppress a windowed aggregation's table or use `until_time_limit`
        BuilderFailedEarlier: this builder failed earlier: invalid topology: ...; fix that error and start a new StreamsBuilder
        NotASource: node `n` is not a source and cannot read serialized records; pipe records to a source topic
        GlobalSourceForwardedTo: global source `g` reads its topic only; it has no parent, so do not forward records to it
        RecordTypeMismatch: node `n` expected a record of type (String, i64) but received another type; connect nodes whose types agree
        StoreAlreadyBorrowed: store `st` is already borrowed; drop the previous handle to it first
        EmptyExtractedTopic: the topic name extractor of sink `sink` returned an empty topic name; return the name of a topic
        PartitionInfo: could not get partition information for topic `out` for task 1_2: this can happen if the topic does not exist; create the topic (with its partition count) before the application writes to it
        GlobalStoreLogging: global store `st` must have logging disabled: its topic `t` is its changelog; build it with `with_logging_disabled()`
        InvalidChangelogRecord: changelog record at st-changelog offset 3 has no key; store `st` cannot restore from it, check that the topic is this store's changelog
        DriverInUse: the test driver is already in use (re-entered from a processor?); do not call the driver from inside a topology
        Processing: processor `p` failed: boom
        Processing: a processor failed: boom
        ProcessingFailed: exception caught in process: task 0_1, topic `t`, partition 1, offset 7, processor `p`: processor `p` failed: user code panicked: oops
        ProductionFailed: unable to produce a record to topic `out` (timestamp 5), task 0_0, topic `t`, partition 0, offset 3: cannot serialize the value of a record for topic `out` in node `sink`: too big
        Reentrant: processor `p` was re-entered while processing; processors of one sub-topology must not form a cycle
        UnknownStore: no store named `nope`; the stores are ["st"]
        WrongStoreType: store `st` is a key-value store<String, i64>, not the window store<String, i64> asked for; read it with `key_value_store::<String, i64>("st")`
        WrongStoreType: store `counts` is a timestamped key-value store<String, i64>, not the KeyValueStore<String, String> asked for; read it with `timestamped_key_value_store::<String, i64>("counts")`, or `key_value_store::<String, i64>("counts")` for its values only
        WrongStoreType: store `counter` is a custom store `Counter`, not the session store<String, i64> asked for; read it with `state_store("counter")` as a `Counter`
        BuiltInStore: store `counts` is a timestamped key-value store, not a store of your own: read it with `timestamped_key_value_store::<K, V>("counts")`
        NegativeChangelogTimestamp: cannot write a record at timestamp -1 to the changelog `app-counts-changelog`: Kafka refuses negative timestamps (the value-only view of a timestamped store writes at -1, as Kafka's does); write through the timestamped getter with a timestamp, or build the store with its logging disabled
        StoreIo: store `counts` cannot open its RocksDB files at /tmp/kafka-streams/app/0_0/rocksdb/counts: IO error: lock hold by current process; check that the directory can be created and written (`state.dir`), and that no other driver or application uses the same `state.dir` and `application.id` (RocksDB locks a store's directory)
        StateDirCleanup: cannot delete the state directory /tmp/kafka-streams/app at close: Permission denied (os error 13); delete it yourself, and check that nothing else uses it
        PersistentStoresNotEnabled: store `counts` is to be a persistent (RocksDB) store, but streams-core was built without its `rocksdb` feature; enable it (`streams-core = { version = "..", features = ["rocksdb"] }`) or keep the DSL's stores in memory (drop `dsl.store.suppliers.class` / `default.dsl.store` from the config)
        StoreOperationNotSupported: store `sessions` does not support `find_sessions_ending_between`; use find_sessions_in_range(.., earliest_end, latest_start) or all(); Kafka's RocksDB session store throws UnsupportedOperationException here too
        StoreNotConnected: processor `p` has no access to store `st`: the store is not connected to it; connect it with `add_state_store(.., &["p"])` or `connect_processor_and_state_stores`
        UnsupportedForeignKeyJoinVersion: foreign-key join node `KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-0000000011` read a subscription of version 2 from `app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic`, newer than the version 1 it reads; run the same version on every instance (upgrade the older ones first)
        InvalidVersionedStore: versioned store `v`: historyRetention cannot be negative (was -1 ms); give a history retention of zero or more
        JoinGraceOnUnversionedTable: stream-table join `KSTREAM-JOIN-0000000004`: KTable must be versioned to use a grace period in a stream table join; materialize the table in a versioned store (`Stores::persistent_versioned_key_value_store`) or remove the grace period
        JoinGraceExceedsHistoryRetention: stream-table join `KSTREAM-JOIN-0000000004`: History retention must be at least grace period; the grace period is 20 ms but store `v` keeps 10 ms of history; shorten the grace period or lengthen the history retention
        VersionedNotSupported: suppress `KTABLE-SUPPRESS-0000000003`: suppress() is only supported for non-versioned KTables (note that version semantics might be inherited from upstream)
        Closed: the test driver is closed
        Cluster: cluster topic `t`: topic exists
        Topology::DuplicateName: node name `n` is already used by another node; node names must be unique
        Topology::EmptyName: a node name must not be empty
        Topology::UnknownParent: node `n` names parent `p`, which does not exist; add parents before their children
        Topology::NoParent: node `n` has no parent; a processor or sink needs at least one
        Topology::SinkAsParent: node `n` names sink `sink` as its parent; a sink cannot have children
        Topology::NoSource: the topology has no source; add one with `add_source` or `StreamsBuilder::stream`
        Topology::SourceTopicMatchesAsRegex: source topic `orders.v1` cannot contain regex pattern for input record topic `ordersXv1`: its name, read as a regex, matches it; pipe to `orders.v1` itself, or read `ordersXv1` with a pattern source
        Topology::NoTopic: source `n` has no topic; give it at least one topic name
        Topology::EmptyTopic: node `n` names an empty topic; topic names must not be empty
        Topology::TopicAlreadyRead: topic `t` is already read by source `src`; a topic can be read by one source only
        Topology::InvalidPattern: source `n` has an invalid topic pattern `(`: unclosed group
        Topology::TypeMismatch: node `c` reads records of type (String, String) but its parent `p` forwards (String, i64); connect nodes whose types agree
        Topology::UnknownStore: processor `n` is connected to store `st`, which was never added; add it with `add_state_store`
        Topology::DuplicateStore: store `st` is already added; store names must be unique
        Topology::NotAProcessor: `n` is not a processor of this topology; stores can be connected to processors only
        Topology::NonPositiveDuration: punctuation interval must be positive, but was 0 ms
        Topology::InvalidPartitionCount: repartition topic `wide-repartition` was given 0 partitions; Number of partitions must be at least 1
        Topology::EnforcedPartitionsDiffer: Following topics do not have the same number of partitions: [{l-repartition=2, r-repartition=3}]; give them the same count
        Topology::CannotOptimize: cannot apply merge.repartition.topics at node `KSTREAM-MAP-0000000001`: its repartition topic `counts-repartition` carries (String, i64), but the node forwards (String, String); build without it (topology.optimization), or send the stream through `repartition()` yourself
        SerdeError::new: not a long
        SerdeError::from_error: an error occurred when formatting an argument
        "#);
    }
}
