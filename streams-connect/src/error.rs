//! The errors of the pipeline, by what Kafka Connect does with them.
//!
//! - [`ConnectError`]: what a converter, transform or sink task raises,
//!   with Kafka's exception class ([`ErrorKind`]): a `DataException` (bad
//!   data: tolerated under `errors.tolerance=all`, never retried), a
//!   `RetriableException` (retried with backoff), or a `ConnectException`.
//! - [`ConfigError`]: a configuration Kafka would refuse, with Kafka's
//!   message (`Invalid value x for configuration errors.tolerance: ...`).
//! - [`TaskError`]: why a sink task stopped, naming the connector, the task
//!   and, for a record, its topic, partition, offset and stage.
//!
//! ```
//! use streams_connect::error::{ConnectError, ErrorKind};
//!
//! let error = ConnectError::data("Invalid bytes field");
//! assert_eq!(error.kind(), ErrorKind::Data);
//! assert_eq!(error.exception_class_name(), "org.apache.kafka.connect.errors.DataException");
//! assert!(!error.is_retriable());
//! assert!(ConnectError::retriable("database busy").is_retriable());
//! ```

use std::fmt;

use crate::errors::Stage;

/// Which of Kafka Connect's exceptions an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `org.apache.kafka.connect.errors.DataException`: the data is bad.
    Data,
    /// `org.apache.kafka.connect.errors.RetriableException`: try again.
    Retriable,
    /// `org.apache.kafka.connect.errors.ConnectException`: anything else.
    Connect,
}

impl ErrorKind {
    /// Kafka's exception class name.
    pub fn exception_class_name(self) -> &'static str {
        match self {
            ErrorKind::Data => "org.apache.kafka.connect.errors.DataException",
            ErrorKind::Retriable => "org.apache.kafka.connect.errors.RetriableException",
            ErrorKind::Connect => "org.apache.kafka.connect.errors.ConnectException",
        }
    }
}

/// An error raised in a stage of the pipeline. Its message is Kafka's
/// `getMessage()`; the cause, when there is one, is the underlying
/// parser's or serde's text (Java's `Caused by:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    kind: ErrorKind,
    message: String,
    cause: Option<Box<(String, String)>>,
}

impl ConnectError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            cause: None,
        }
    }

    /// A `DataException`: the record's data is bad.
    pub fn data(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Data, message)
    }

    /// A `RetriableException`: the operation may succeed if tried again.
    pub fn retriable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Retriable, message)
    }

    /// A `ConnectException`: any other failure.
    pub fn connect(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Connect, message)
    }

    /// The same error with a cause: `class` is the cause's exception class
    /// (as Kafka names it), `message` its text.
    #[must_use]
    pub fn caused_by(mut self, class: impl Into<String>, message: impl Into<String>) -> Self {
        self.cause = Some(Box::new((class.into(), message.into())));
        self
    }

    /// Kafka's exception class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether Kafka retries it (a `RetriableException`).
    pub fn is_retriable(&self) -> bool {
        self.kind == ErrorKind::Retriable
    }

    /// The message, as Java's `getMessage()`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The cause's class and message, if any.
    pub fn cause(&self) -> Option<(&str, &str)> {
        self.cause.as_deref().map(|(c, m)| (c.as_str(), m.as_str()))
    }

    /// Kafka's exception class name, as the DLQ's
    /// `__connect.errors.exception.class.name` header holds it.
    pub fn exception_class_name(&self) -> &'static str {
        self.kind.exception_class_name()
    }

    /// The error as Java's `printStackTrace` begins it: the class and
    /// message, then `Caused by:` and the cause. (A Rust pipeline has no
    /// Java frames, so the `\tat ...` lines Kafka writes are absent.)
    pub fn stacktrace(&self) -> String {
        let mut out = format!("{}: {}\n", self.exception_class_name(), self.message);
        if let Some((class, message)) = self.cause.as_deref() {
            out.push_str(&format!("Caused by: {class}: {message}\n"));
        }
        out
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.exception_class_name(), self.message)?;
        if let Some((class, message)) = self.cause.as_deref() {
            write!(f, " (caused by {class}: {message})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConnectError {}

/// A configuration Kafka would refuse.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value of the wrong type or out of range: Kafka's
    /// `ConfigException(name, value, message)`.
    #[error("Invalid value {value} for configuration {name}: {message}")]
    Invalid {
        /// The configuration's name.
        name: String,
        /// The value given.
        value: String,
        /// Why, as Kafka says it.
        message: String,
    },
    /// A required configuration is absent.
    #[error("Missing required configuration \"{name}\" which has no default value.")]
    Missing {
        /// The configuration's name.
        name: String,
    },
    /// A transform or predicate configured so that it cannot work (Kafka's
    /// `ConfigException(message)`).
    #[error("{message}")]
    Transform {
        /// Kafka's message.
        message: String,
    },
}

/// A record's failure at a stage: where, what and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordFailure {
    /// The connector.
    pub connector: String,
    /// The task number.
    pub task: i32,
    /// The record's topic.
    pub topic: String,
    /// The record's partition.
    pub partition: i32,
    /// The record's offset.
    pub offset: i64,
    /// The stage that failed.
    pub stage: Stage,
    /// The class that failed.
    pub class_name: String,
    /// The error.
    pub error: ConnectError,
}

impl fmt::Display for RecordFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "connector '{}' task {}, stage {} (class {}) failed on the record of topic '{}' partition {} at offset {}: {}",
            self.connector,
            self.task,
            self.stage,
            self.class_name,
            self.topic,
            self.partition,
            self.offset,
            self.error
        )
    }
}

/// Why a sink task stopped. Every variant names the connector and task.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// A record failed a stage and the failure is not tolerated
    /// (`errors.tolerance=none`, Kafka's "Tolerance exceeded in error
    /// handler"). The record went to the DLQ first, if one is configured.
    #[error(
        "Tolerance exceeded in error handler: {0}; set errors.tolerance=all to skip such records (with errors.deadletterqueue.topic.name to keep them), or fix the data"
    )]
    ToleranceExceeded(Box<RecordFailure>),
    /// A stage raised an error of a kind the stage never tolerates (Kafka's
    /// "Unhandled exception in error handler").
    #[error("Unhandled exception in error handler: {0}")]
    Unhandled(Box<RecordFailure>),
    /// `put` raised an error that is not retriable: Kafka's "Exiting
    /// WorkerSinkTask due to unrecoverable exception." The batch's offsets
    /// are not committed; a restarted task reads it again.
    #[error(
        "Exiting WorkerSinkTask due to unrecoverable exception: connector '{connector}' task {task}, put of {records} records (first: topic '{topic}' partition {partition} offset {offset}) failed: {error}; fix the sink and restart the task (return a retriable error to have the batch redelivered instead)"
    )]
    Unrecoverable {
        /// The connector.
        connector: String,
        /// The task number.
        task: i32,
        /// How many records the batch held.
        records: usize,
        /// The first record's topic (empty for an empty batch).
        topic: String,
        /// The first record's partition (-1 for an empty batch).
        partition: i32,
        /// The first record's offset (-1 for an empty batch).
        offset: i64,
        /// The error.
        error: ConnectError,
    },
    /// The dead letter queue topic could not be created.
    #[error(
        "Could not initialize dead letter queue with topic={topic} for connector '{connector}' task {task}: {source}; create the topic, or lower errors.deadletterqueue.topic.replication.factor to the cluster's broker count"
    )]
    DeadLetterQueue {
        /// The connector.
        connector: String,
        /// The task number.
        task: i32,
        /// The DLQ topic.
        topic: String,
        /// The client's error.
        source: Box<streams_clients::ClientError>,
    },
    /// A client call of the worker failed.
    #[error("connector '{connector}' task {task}: {operation} failed: {source}")]
    Client {
        /// The connector.
        connector: String,
        /// The task number.
        task: i32,
        /// The call.
        operation: &'static str,
        /// The client's error.
        source: Box<streams_clients::ClientError>,
    },
    /// The connector's configuration is invalid.
    #[error("connector '{connector}': {source}")]
    Config {
        /// The connector (as configured, possibly empty).
        connector: String,
        /// The configuration error.
        source: ConfigError,
    },
    /// The sink task's `start` failed.
    #[error("connector '{connector}' task {task}: the sink task failed to start: {error}")]
    Start {
        /// The connector.
        connector: String,
        /// The task number.
        task: i32,
        /// The task's error.
        error: ConnectError,
    },
    /// The task failed earlier and was not restarted.
    #[error(
        "connector '{connector}' task {task} has failed and cannot run until restarted: {reason}"
    )]
    Failed {
        /// The connector.
        connector: String,
        /// The task number.
        task: i32,
        /// The failure, as first reported.
        reason: String,
    },
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for TaskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
