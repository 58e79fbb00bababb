//! Kafka Connect's error handling (KIP-298), as `connect/runtime/errors`
//! has it: the [`Stage`] a record failed in, the [`ProcessingContext`] of
//! one record, the [`RetryWithToleranceOperator`] that retries retriable
//! errors and tolerates the rest (`errors.tolerance`), the reporters that
//! write a failed record to the dead letter queue
//! ([`DeadLetterQueueReporter`], with the `__connect.errors.*` headers) and
//! to the log ([`LogReporter`]), and the task's [`ErrorHandlingMetrics`].
//!
//! Retries wait on the client [`Clock`](streams_clients::Clock), never the
//! machine's: where Kafka sleeps, the operator answers
//! [`Attempt::RetryAt`] and the worker tries again once the clock has
//! reached that time.
//!
//! ```
//! use streams_connect::config::ToleranceType;
//! use streams_connect::errors::{Attempt, ProcessingContext, RetryWithToleranceOperator, Stage};
//! use streams_connect::ConnectError;
//! # use streams_clients::{ConsumerRecord, TimestampType};
//! # let record = ConsumerRecord { topic: "t".into(), partition: 0, offset: 0, timestamp: 0,
//! #     timestamp_type: TimestampType::CreateTime, key: None, value: None, headers: vec![], leader_epoch: -1 };
//!
//! // errors.retry.timeout=1000: attempts at 0, 300 and 900 ms, the last at the deadline.
//! let mut operator = RetryWithToleranceOperator::new(1_000, 60_000, ToleranceType::All);
//! let mut context = ProcessingContext::new(record);
//! let mut attempt = |now| operator.execute(&mut context, Stage::Transformation, "T", now,
//!     || Err::<(), _>(ConnectError::retriable("busy")));
//! assert_eq!(attempt(0)?, Attempt::RetryAt(300));
//! assert_eq!(attempt(300)?, Attempt::RetryAt(900));
//! assert_eq!(attempt(900)?, Attempt::RetryAt(1_000));
//! assert_eq!(attempt(1_000)?, Attempt::Done(None));
//! assert_eq!(operator.metrics().total_retries, 3);
//! // Four failed attempts; Kafka counts the last one twice.
//! assert_eq!(operator.metrics().total_record_failures, 5);
//! assert_eq!(operator.metrics().total_records_skipped, 1);
//! # Ok::<(), streams_connect::TaskError>(())
//! ```

mod operator;
mod reporter;

use std::fmt;
use std::sync::Arc;

use streams_clients::ConsumerRecord;

use crate::error::ConnectError;

pub use operator::{Attempt, RETRIES_DELAY_MIN_MS, RetryWithToleranceOperator};
pub use reporter::{
    DeadLetterQueueReporter, ERROR_HEADER_CONNECTOR_NAME, ERROR_HEADER_EXCEPTION,
    ERROR_HEADER_EXCEPTION_MESSAGE, ERROR_HEADER_EXCEPTION_STACK_TRACE,
    ERROR_HEADER_EXECUTING_CLASS, ERROR_HEADER_ORIG_OFFSET, ERROR_HEADER_ORIG_PARTITION,
    ERROR_HEADER_ORIG_TOPIC, ERROR_HEADER_STAGE, ERROR_HEADER_TASK_ID, HEADER_PREFIX, LogReporter,
};

/// A logical stage of the pipeline, by Kafka's `Stage` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// `KEY_CONVERTER`.
    KeyConverter,
    /// `VALUE_CONVERTER`.
    ValueConverter,
    /// `HEADER_CONVERTER`.
    HeaderConverter,
    /// `TRANSFORMATION`.
    Transformation,
    /// `TASK_PUT`: a record the sink task reported as errant.
    TaskPut,
}

impl Stage {
    /// Kafka's name, as the `__connect.errors.stage` header holds it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::KeyConverter => "KEY_CONVERTER",
            Stage::ValueConverter => "VALUE_CONVERTER",
            Stage::HeaderConverter => "HEADER_CONVERTER",
            Stage::Transformation => "TRANSFORMATION",
            Stage::TaskPut => "TASK_PUT",
        }
    }

    /// Whether every error of this stage can be tolerated (converters and
    /// transforms), or only retriable ones (Kafka's `TOLERABLE_EXCEPTIONS`).
    pub fn tolerates_all_errors(self) -> bool {
        !matches!(self, Stage::TaskPut)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetryState {
    pub(crate) deadline: i64,
    pub(crate) next_at: i64,
    /// The error of the attempt that failed: what the record is reported
    /// with if the task stops before the retry.
    pub(crate) error: ConnectError,
}

/// What is known about one consumed record while it goes through the
/// pipeline (Kafka's `ProcessingContext`): the original, the stage and
/// class running, the attempts made and the error, if any.
#[derive(Debug, Clone)]
pub struct ProcessingContext {
    original: Arc<ConsumerRecord>,
    stage: Option<Stage>,
    class_name: String,
    attempt: u32,
    error: Option<ConnectError>,
    pub(crate) retry: Option<RetryState>,
}

impl ProcessingContext {
    /// The context of `original`, before any stage.
    pub fn new(original: impl Into<Arc<ConsumerRecord>>) -> Self {
        Self {
            original: original.into(),
            stage: None,
            class_name: String::new(),
            attempt: 0,
            error: None,
            retry: None,
        }
    }

    /// The record as consumed.
    pub fn original(&self) -> &ConsumerRecord {
        &self.original
    }

    pub(crate) fn original_arc(&self) -> &Arc<ConsumerRecord> {
        &self.original
    }

    /// The stage running (or last run).
    pub fn stage(&self) -> Option<Stage> {
        self.stage
    }

    /// The class running (or last run).
    pub fn class_name(&self) -> &str {
        &self.class_name
    }

    /// Attempts made at the current stage.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The error, once the record has failed.
    pub fn error(&self) -> Option<&ConnectError> {
        self.error.as_ref()
    }

    /// Whether the record has failed.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    pub(crate) fn current(&mut self, stage: Stage, class_name: &str) {
        self.stage = Some(stage);
        class_name.clone_into(&mut self.class_name);
    }

    pub(crate) fn set_error(&mut self, error: ConnectError) {
        self.error = Some(error);
    }
}

/// A sink task's error metrics, by Kafka Connect's names
/// (`task-error-metrics`); read one by name with [`metric`](Self::metric).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorHandlingMetrics {
    /// `total-record-failures`: failed attempts, retriable or not.
    pub total_record_failures: u64,
    /// `total-record-errors`: records whose processing failed for good.
    pub total_record_errors: u64,
    /// `total-records-skipped`: records skipped because of errors.
    pub total_records_skipped: u64,
    /// `total-retries`: retries made.
    pub total_retries: u64,
    /// `total-errors-logged`: errors the log reporter wrote.
    pub total_errors_logged: u64,
    /// `deadletterqueue-produce-requests`: records sent to the DLQ.
    pub deadletterqueue_produce_requests: u64,
    /// `deadletterqueue-produce-failures`: DLQ sends that failed.
    pub deadletterqueue_produce_failures: u64,
    /// `last-error-timestamp`: the client clock's time of the last failure
    /// (0: none). Kafka's reads the wall clock (`Time.SYSTEM`) whatever the
    /// task's clock; this one reads the clock the retries run on, so that a
    /// test knows it.
    pub last_error_timestamp: i64,
}

impl ErrorHandlingMetrics {
    /// Every metric's name, as Kafka names them.
    pub const NAMES: [&'static str; 8] = [
        "total-record-failures",
        "total-record-errors",
        "total-records-skipped",
        "total-retries",
        "total-errors-logged",
        "deadletterqueue-produce-requests",
        "deadletterqueue-produce-failures",
        "last-error-timestamp",
    ];

    /// The metric `name` (one of [`NAMES`](Self::NAMES)), as Kafka reports
    /// it (a double); `None` for another name.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let value = match name {
            "total-record-failures" => self.total_record_failures,
            "total-record-errors" => self.total_record_errors,
            "total-records-skipped" => self.total_records_skipped,
            "total-retries" => self.total_retries,
            "total-errors-logged" => self.total_errors_logged,
            "deadletterqueue-produce-requests" => self.deadletterqueue_produce_requests,
            "deadletterqueue-produce-failures" => self.deadletterqueue_produce_failures,
            "last-error-timestamp" => return Some(self.last_error_timestamp as f64),
            _ => return None,
        };
        Some(value as f64)
    }
}
