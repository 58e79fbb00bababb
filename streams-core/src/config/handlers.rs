//! The exception handlers, Kafka's `DeserializationExceptionHandler`,
//! `ProcessingExceptionHandler` (KIP-1033) and `ProductionExceptionHandler`
//! (KIP-1065), and the dead letter queue records they answer with
//! (KIP-1034).
//!
//! Each handler receives an [`ErrorHandlerContext`] (where the bad record
//! came from, its raw bytes, the node and the task) and the error, and
//! answers with a [`Response`]: fail, resume (skip the record and count it
//! in `dropped-records-total`) or, for production errors, retry; with the
//! dead letter queue records to produce either way. The built-in handlers
//! add one DLQ record when `errors.dead.letter.queue.topic.name` is set,
//! built by [`build_dead_letter_queue_record`] exactly as Kafka's
//! `ExceptionHandlerUtils` builds it.
//!
//! ```
//! use streams_core::config::{
//!     DeserializationExceptionHandler, ErrorHandlerContext, HandlerResult, Response,
//! };
//! use streams_core::{StreamsConfig, StreamsError};
//!
//! /// Skips records of the `audit` topic, fails on any other.
//! #[derive(Debug)]
//! struct SkipAudit;
//! impl DeserializationExceptionHandler for SkipAudit {
//!     fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, _: &StreamsError) -> Response {
//!         if ctx.topic == "audit" { Response::resume() } else { Response::fail() }
//!     }
//! }
//! let config = StreamsConfig::new("app").with_deserialization_exception_handler(SkipAudit);
//! assert_eq!(format!("{:?}", config.deserialization_exception_handler()?), "SkipAudit");
//! assert_eq!(Response::resume().result(), HandlerResult::Resume);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Debug};
use std::sync::Arc;

use crate::error::{RecordPart, StreamsError};
use crate::record::collector::ProducedRecord;
use crate::record::{Headers, RawRecord};

/// `__streams.errors.exception`: the exception's Java class name.
pub const HEADER_ERRORS_EXCEPTION_NAME: &str = "__streams.errors.exception";
/// `__streams.errors.stacktrace`: the exception's stack trace.
pub const HEADER_ERRORS_STACKTRACE_NAME: &str = "__streams.errors.stacktrace";
/// `__streams.errors.message`: the exception's message.
pub const HEADER_ERRORS_EXCEPTION_MESSAGE_NAME: &str = "__streams.errors.message";
/// `__streams.errors.topic`: the source topic of the bad record.
pub const HEADER_ERRORS_TOPIC_NAME: &str = "__streams.errors.topic";
/// `__streams.errors.partition`: its partition, in decimal text.
pub const HEADER_ERRORS_PARTITION_NAME: &str = "__streams.errors.partition";
/// `__streams.errors.offset`: its offset, in decimal text.
pub const HEADER_ERRORS_OFFSET_NAME: &str = "__streams.errors.offset";

/// Where an error happened, Kafka's `ErrorHandlerContext`: the record
/// being processed (as read from its source topic) and the node and task
/// processing it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ErrorHandlerContext<'a> {
    /// The source topic of the record being processed; empty in a
    /// punctuation (Kafka's `null`).
    pub topic: &'a str,
    /// Its partition; `-1` in a punctuation.
    pub partition: i32,
    /// Its offset; `-1` in a punctuation.
    pub offset: i64,
    /// The timestamp of the record being processed.
    pub timestamp: i64,
    /// The headers of the record being processed.
    pub headers: &'a Headers,
    /// The key of the source record, as read (Kafka's `sourceRawKey`).
    pub source_raw_key: Option<&'a [u8]>,
    /// The value of the source record, as read (Kafka's `sourceRawValue`).
    pub source_raw_value: Option<&'a [u8]>,
    /// The node whose code failed (Kafka's `processorNodeId`): the source
    /// for a deserialization error, the sink for a production error.
    pub processor_node_id: &'a str,
    /// The task, `<subtopology>_<partition>` (Kafka's `taskId`).
    pub task_id: &'a str,
    /// `errors.dead.letter.queue.topic.name`, if set: what Kafka hands its
    /// handlers through `configure`.
    pub dead_letter_queue_topic: Option<&'a str>,
}

/// What a handler decided, Kafka's `Response.Result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerResult {
    /// Skip the record and go on (Kafka's `RESUME`, formerly `CONTINUE`);
    /// the record is counted in `dropped-records-total`.
    Resume,
    /// Stop processing with the error.
    Fail,
    /// Try again (production errors only; Kafka treats `RETRY` for an
    /// error that is not retriable, which every serialization error is,
    /// as `FAIL`, and so does this crate).
    Retry,
}

/// A handler's answer, Kafka's `Response`: fail, resume or retry, and the
/// dead letter queue records to produce in any case.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    result: HandlerResult,
    dead_letter_queue_records: Vec<ProducedRecord>,
}

impl Response {
    /// Stop processing; produce nothing to a DLQ.
    pub fn fail() -> Self {
        Response::fail_with(Vec::new())
    }

    /// Stop processing, after producing `records` (to their topics).
    pub fn fail_with(records: Vec<ProducedRecord>) -> Self {
        Response {
            result: HandlerResult::Fail,
            dead_letter_queue_records: records,
        }
    }

    /// Skip the record and go on; produce nothing to a DLQ.
    pub fn resume() -> Self {
        Response::resume_with(Vec::new())
    }

    /// Skip the record and go on, after producing `records`.
    pub fn resume_with(records: Vec<ProducedRecord>) -> Self {
        Response {
            result: HandlerResult::Resume,
            dead_letter_queue_records: records,
        }
    }

    /// Retry (production errors only; see [`HandlerResult::Retry`]).
    pub fn retry() -> Self {
        Response {
            result: HandlerResult::Retry,
            dead_letter_queue_records: Vec::new(),
        }
    }

    /// What the handler decided.
    pub fn result(&self) -> HandlerResult {
        self.result
    }

    /// The records to produce to dead letter queues.
    pub fn dead_letter_queue_records(&self) -> &[ProducedRecord] {
        &self.dead_letter_queue_records
    }

    /// The records to produce to dead letter queues, taken.
    pub fn into_dead_letter_queue_records(self) -> Vec<ProducedRecord> {
        self.dead_letter_queue_records
    }
}

/// Decides about a record whose key or value cannot be deserialized,
/// Kafka's `DeserializationExceptionHandler`; configured by
/// `deserialization.exception.handler`.
pub trait DeserializationExceptionHandler: Debug + Send + Sync + 'static {
    /// Answers for the record `ctx` describes, which failed with `error` (a
    /// [`StreamsError::Deserialization`], or a [`StreamsError::Processing`]
    /// when the deserializer panicked).
    fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> Response;
}

/// Decides about an error that user code returned (or a panic it raised)
/// in a processor, Kafka's `ProcessingExceptionHandler` (KIP-1033);
/// configured by `processing.exception.handler`.
pub trait ProcessingExceptionHandler: Debug + Send + Sync + 'static {
    /// Answers for the record `ctx` describes, which failed in node
    /// `ctx.processor_node_id` with `error` (a [`StreamsError::Processing`]).
    /// The typed record is not passed: its types are erased here; its
    /// source record's bytes are in `ctx`.
    fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> Response;
}

/// Decides about a record a sink cannot produce, Kafka's
/// `ProductionExceptionHandler` (KIP-1065); configured by
/// `production.exception.handler`. In the test driver every production
/// error is a serialization error: nothing is sent over a network.
pub trait ProductionExceptionHandler: Debug + Send + Sync + 'static {
    /// Answers for a record the sink `ctx.processor_node_id` could not
    /// serialize for `topic` (its `part`), with `error` (a
    /// [`StreamsError::Serialization`]). [`HandlerResult::Retry`] is
    /// treated as fail, as Kafka does for errors that are not retriable.
    fn handle_serialization_error(
        &self,
        ctx: &ErrorHandlerContext<'_>,
        topic: &str,
        part: RecordPart,
        error: &StreamsError,
    ) -> Response;
}

/// The dead letter queue record of a failed record, Kafka's
/// `ExceptionHandlerUtils.buildDeadLetterQueueRecord`: the source record's
/// raw key and value, the timestamp and headers of the record being
/// processed, and the `__streams.errors.*` headers in Kafka's order
/// (exception, message, stacktrace, topic, partition, offset), each value
/// UTF-8 text. The stack trace is not Java's: its first line is Java's
/// (`<exception class>: <message>`), the lines after it name the node, the
/// task and the record, then each cause of the error.
///
/// ```
/// use streams_core::config::{build_dead_letter_queue_record, ErrorHandlerContext, HEADER_ERRORS_OFFSET_NAME};
/// use streams_core::{Headers, StreamsError};
///
/// let headers = Headers::default();
/// let ctx = ErrorHandlerContext::new("in", 0, 41, 7, &headers, Some(b"k"), Some(b"v"), "MAP", "0_0", Some("dlq"));
/// let dlq = build_dead_letter_queue_record("dlq", &ctx, &StreamsError::processing("boom"));
/// assert_eq!(&*dlq.topic, "dlq");
/// assert_eq!(dlq.record.headers.last(HEADER_ERRORS_OFFSET_NAME), Some(&b"41"[..]));
/// assert_eq!(dlq.record.headers.last("__streams.errors.exception"), Some(&b"java.lang.RuntimeException"[..]));
/// ```
pub fn build_dead_letter_queue_record(
    topic: &str,
    ctx: &ErrorHandlerContext<'_>,
    error: &StreamsError,
) -> ProducedRecord {
    let class = error.exception_class();
    let message = error.exception_message();
    let mut headers = ctx.headers.clone();
    headers.add(HEADER_ERRORS_EXCEPTION_NAME, class);
    headers.add(HEADER_ERRORS_EXCEPTION_MESSAGE_NAME, message.as_str());
    headers.add(HEADER_ERRORS_STACKTRACE_NAME, stack_trace(ctx, error));
    // Outside a record (a punctuation) Kafka's topic is null: a null value.
    if ctx.topic.is_empty() {
        headers.add_null(HEADER_ERRORS_TOPIC_NAME);
    } else {
        headers.add(HEADER_ERRORS_TOPIC_NAME, ctx.topic);
    }
    headers.add(HEADER_ERRORS_PARTITION_NAME, ctx.partition.to_string());
    headers.add(HEADER_ERRORS_OFFSET_NAME, ctx.offset.to_string());
    let record = RawRecord {
        key: ctx.source_raw_key.map(<[u8]>::to_vec),
        value: ctx.source_raw_value.map(<[u8]>::to_vec),
        timestamp: ctx.timestamp,
        headers,
    };
    ProducedRecord {
        topic: Arc::from(topic),
        // As Kafka's: no partition, the producer's partitioner picks one.
        partition: None,
        record,
    }
}

/// The DLQ records a built-in handler answers with: one when
/// `errors.dead.letter.queue.topic.name` is set (Kafka's
/// `maybeBuildDeadLetterQueueRecords`).
pub fn maybe_build_dead_letter_queue_records(
    ctx: &ErrorHandlerContext<'_>,
    error: &StreamsError,
) -> Vec<ProducedRecord> {
    ctx.dead_letter_queue_topic
        .map(|t| build_dead_letter_queue_record(t, ctx, error))
        .into_iter()
        .collect()
}

/// Our stack trace: Java's first line, then where, then the causes.
fn stack_trace(ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> String {
    use std::error::Error;
    use std::fmt::Write;
    let mut text = format!(
        "{}: {}\n",
        error.exception_class(),
        error.exception_message()
    );
    let _ = writeln!(
        text,
        "\tat {} (task {}, {}-{} offset {})",
        ctx.processor_node_id, ctx.task_id, ctx.topic, ctx.partition, ctx.offset
    );
    let _ = writeln!(text, "Caused by: {error}");
    let mut cause = error.source();
    while let Some(c) = cause {
        let _ = writeln!(text, "Caused by: {c}");
        cause = c.source();
    }
    text
}

impl<'a> ErrorHandlerContext<'a> {
    /// A context, for handlers' own tests (the engine makes the real ones).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        topic: &'a str,
        partition: i32,
        offset: i64,
        timestamp: i64,
        headers: &'a Headers,
        source_raw_key: Option<&'a [u8]>,
        source_raw_value: Option<&'a [u8]>,
        processor_node_id: &'a str,
        task_id: &'a str,
        dead_letter_queue_topic: Option<&'a str>,
    ) -> Self {
        ErrorHandlerContext {
            topic,
            partition,
            offset,
            timestamp,
            headers,
            source_raw_key,
            source_raw_value,
            processor_node_id,
            task_id,
            dead_letter_queue_topic,
        }
    }
}

macro_rules! builtin_handler {
    ($(#[$doc:meta])* $name:ident, $java:literal, $trait:ident, $result:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;

        impl $name {
            /// Kafka's class name, which `StreamsConfig` properties accept
            /// (as does the simple name).
            pub const JAVA_CLASS: &'static str = $java;
        }

        impl $trait for $name {
            fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> Response {
                Response {
                    result: HandlerResult::$result,
                    dead_letter_queue_records: maybe_build_dead_letter_queue_records(ctx, error),
                }
            }
        }
    };
}

builtin_handler!(
    /// Fails on a record that cannot be deserialized, after producing its
    /// DLQ record if a DLQ is set: Kafka's `LogAndFailExceptionHandler`,
    /// the default.
    LogAndFailExceptionHandler,
    "org.apache.kafka.streams.errors.LogAndFailExceptionHandler",
    DeserializationExceptionHandler,
    Fail
);
builtin_handler!(
    /// Skips a record that cannot be deserialized (counted in
    /// `dropped-records-total`), producing its DLQ record if a DLQ is set:
    /// Kafka's `LogAndContinueExceptionHandler`.
    LogAndContinueExceptionHandler,
    "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
    DeserializationExceptionHandler,
    Resume
);
builtin_handler!(
    /// Fails on an error of user code, after producing the record's DLQ
    /// record if a DLQ is set: Kafka's
    /// `LogAndFailProcessingExceptionHandler`, the default.
    LogAndFailProcessingExceptionHandler,
    "org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler",
    ProcessingExceptionHandler,
    Fail
);
builtin_handler!(
    /// Skips a record on which user code failed (counted in
    /// `dropped-records-total`), producing its DLQ record if a DLQ is set:
    /// Kafka's `LogAndContinueProcessingExceptionHandler`.
    LogAndContinueProcessingExceptionHandler,
    "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler",
    ProcessingExceptionHandler,
    Resume
);

/// Fails on a record a sink cannot serialize, after producing the source
/// record's DLQ record if a DLQ is set: Kafka's
/// `DefaultProductionExceptionHandler`, the default (which retries
/// retriable send errors; the driver has none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultProductionExceptionHandler;

impl DefaultProductionExceptionHandler {
    /// Kafka's class name, which `StreamsConfig` properties accept (as
    /// does the simple name).
    pub const JAVA_CLASS: &'static str =
        "org.apache.kafka.streams.errors.DefaultProductionExceptionHandler";
}

impl ProductionExceptionHandler for DefaultProductionExceptionHandler {
    fn handle_serialization_error(
        &self,
        ctx: &ErrorHandlerContext<'_>,
        _topic: &str,
        _part: RecordPart,
        error: &StreamsError,
    ) -> Response {
        Response::fail_with(maybe_build_dead_letter_queue_records(ctx, error))
    }
}

/// A production handler that answers the same for every record: resume
/// (skip the record, counted in `dropped-records-total`), fail or retry
/// (treated as fail), producing the source record's DLQ record if a DLQ is
/// set. Kafka has no such class; `production.exception.handler` accepts
/// `CONTINUE`, `FAIL` and `RETRY` for it (KIP-1065's responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedProductionExceptionHandler(pub HandlerResult);

impl ProductionExceptionHandler for FixedProductionExceptionHandler {
    fn handle_serialization_error(
        &self,
        ctx: &ErrorHandlerContext<'_>,
        _topic: &str,
        _part: RecordPart,
        error: &StreamsError,
    ) -> Response {
        Response {
            result: self.0,
            dead_letter_queue_records: maybe_build_dead_letter_queue_records(ctx, error),
        }
    }
}

/// A shared deserialization handler, as a config holds it.
pub(crate) type SharedDeserializationHandler = Arc<dyn DeserializationExceptionHandler>;
/// A shared processing handler, as a config holds it.
pub(crate) type SharedProcessingHandler = Arc<dyn ProcessingExceptionHandler>;
/// A shared production handler, as a config holds it.
pub(crate) type SharedProductionHandler = Arc<dyn ProductionExceptionHandler>;

/// The handler a property names: Kafka's class name or its simple name.
pub(crate) fn named<T: ?Sized>(
    config: &'static str,
    value: &str,
    choices: &[(&str, fn() -> Arc<T>)],
    expected: &'static str,
) -> Result<Arc<T>, StreamsError> {
    let simple = value.rsplit('.').next().unwrap_or(value);
    choices
        .iter()
        .find(|(java, _)| *java == value || java.rsplit('.').next() == Some(simple))
        .map(|(_, make)| make())
        .ok_or_else(|| StreamsError::InvalidConfig {
            config,
            value: value.to_owned(),
            expected,
        })
}

impl fmt::Display for HandlerResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandlerResult::Resume => "RESUME",
            HandlerResult::Fail => "FAIL",
            HandlerResult::Retry => "RETRY",
        })
    }
}
