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
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SerdeError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl SerdeError {
    /// An error with a message and no underlying cause.
    pub fn new(message: impl Into<String>) -> Self {
        SerdeError {
            message: message.into(),
            source: None,
        }
    }

    /// An error caused by another error, whose text becomes the message.
    pub fn from_error(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        SerdeError {
            message: error.to_string(),
            source: Some(Box::new(error)),
        }
    }

    /// The message, without the topic or offset context.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// An error found while building a [`Topology`](crate::Topology).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// Two nodes were given the same name.
    #[error("node name `{name}` is already used by another node; node names must be unique")]
    DuplicateName {
        /// The name used twice.
        name: String,
    },
    /// A node name was empty.
    #[error("a node name must not be empty")]
    EmptyName,
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
#[derive(Debug, thiserror::Error)]
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
    /// A store asked for as the wrong kind or type.
    #[error(
        "store `{store}` is a {actual} of other types than asked for ({expected}); use the getter for a {actual}, with its key and value types"
    )]
    WrongStoreType {
        /// The store.
        store: String,
        /// What was asked for, as `kind<K, V>`.
        expected: String,
        /// What the store is.
        actual: StoreKind,
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
    /// A window store.
    Window,
    /// A session store.
    Session,
    /// A store of the user's own type.
    Custom,
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreKind::KeyValue => "key-value store",
            StoreKind::TimestampedKeyValue => "timestamped key-value store",
            StoreKind::Window => "window store",
            StoreKind::Session => "session store",
            StoreKind::Custom => "custom store",
        })
    }
}
