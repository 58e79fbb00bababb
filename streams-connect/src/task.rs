//! The sink task: Kafka Connect's `SinkTask` and `SinkTaskContext`.
//!
//! The worker calls [`SinkTask::start`] once with the connector's
//! properties, [`SinkTask::put`] with each batch of converted and
//! transformed records, [`SinkTask::pre_commit`] before it commits
//! offsets (by default: [`SinkTask::flush`], then commit what was put),
//! and [`SinkTask::stop`] at the end. What `put` returns decides what
//! happens to the batch, as in Kafka's `WorkerSinkTask`:
//!
//! - `Ok(())`: delivered. Records reported with
//!   [`SinkTaskContext::report`] (Kafka's `ErrantRecordReporter`) go to
//!   the dead letter queue with stage `TASK_PUT`.
//! - a retriable error ([`ConnectError::retriable`]): the same batch is
//!   delivered again on a later poll, after [`SinkTaskContext::timeout`]
//!   if the task set one; nothing new is read meanwhile.
//! - any other error: the task fails, whatever `errors.tolerance` says.
//!
//! ```
//! use streams_connect::task::{SinkTask, SinkTaskContext};
//! use streams_connect::{ConnectError, SinkRecord};
//!
//! #[derive(Debug, Default)]
//! struct Collect(Vec<SinkRecord>);
//!
//! impl SinkTask for Collect {
//!     fn put(&mut self, records: &[SinkRecord], context: &mut SinkTaskContext) -> Result<(), ConnectError> {
//!         for record in records {
//!             if record.value.as_str() == Some("poison") {
//!                 context.report(record, ConnectError::data("cannot store poison"));
//!             } else {
//!                 self.0.push(record.clone());
//!             }
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let mut task = Collect::default();
//! let mut context = SinkTaskContext::default();
//! task.put(&[SinkRecord::new("t", 0, 0, None)], &mut context)?;
//! assert_eq!(task.0.len(), 1);
//! assert!(context.reported().is_empty());
//! # Ok::<(), ConnectError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use streams_clients::TopicPartition;

use crate::error::ConnectError;
use crate::record::SinkRecord;

/// What a sink task may ask of the worker during a `put` (Kafka's
/// `SinkTaskContext` and its `ErrantRecordReporter`).
#[derive(Debug, Default)]
pub struct SinkTaskContext {
    reported: Vec<(SinkRecord, ConnectError)>,
    timeout_ms: Option<i64>,
}

impl SinkTaskContext {
    /// Reports `record` as errant (Kafka's
    /// `errantRecordReporter().report(record, error)`): it goes to the
    /// DLQ as its consumed original with stage `TASK_PUT`; under
    /// `errors.tolerance=none` the task then fails.
    pub fn report(&mut self, record: &SinkRecord, error: ConnectError) {
        self.reported.push((record.clone(), error));
    }

    /// The records reported so far in this `put`.
    pub fn reported(&self) -> &[(SinkRecord, ConnectError)] {
        &self.reported
    }

    /// Asks the worker to wait `ms` before redelivering a batch that
    /// failed with a retriable error (Kafka's `context.timeout(ms)`).
    pub fn timeout(&mut self, ms: i64) {
        self.timeout_ms = Some(ms);
    }

    pub(crate) fn take(&mut self) -> (Vec<(SinkRecord, ConnectError)>, Option<i64>) {
        (std::mem::take(&mut self.reported), self.timeout_ms.take())
    }
}

/// A sink: where records leave Kafka. See the [module docs](self).
pub trait SinkTask: Send + fmt::Debug {
    /// Starts the task with the connector's properties.
    ///
    /// # Errors
    /// A task that cannot start; the worker fails.
    fn start(&mut self, props: &BTreeMap<String, String>) -> Result<(), ConnectError> {
        let _ = props;
        Ok(())
    }

    /// Writes a batch (possibly empty, as Kafka's worker calls it on every
    /// poll).
    ///
    /// # Errors
    /// A retriable error has the batch redelivered; another fails the task.
    fn put(
        &mut self,
        records: &[SinkRecord],
        context: &mut SinkTaskContext,
    ) -> Result<(), ConnectError>;

    /// Makes everything put so far durable.
    ///
    /// # Errors
    /// The worker does not commit, and rewinds to the last commit.
    fn flush(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), ConnectError> {
        let _ = offsets;
        Ok(())
    }

    /// The offsets (next to read, per partition) safe to commit, given
    /// those of what was put (Kafka's `preCommit`; the default flushes and
    /// returns them).
    ///
    /// # Errors
    /// As [`flush`](Self::flush).
    fn pre_commit(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
    ) -> Result<BTreeMap<TopicPartition, i64>, ConnectError> {
        self.flush(offsets)?;
        Ok(offsets.clone())
    }

    /// Stops the task.
    fn stop(&mut self) {}

    /// The class the DLQ's `__connect.errors.class.name` names for a
    /// record this task reported (Kafka writes
    /// `org.apache.kafka.connect.sink.SinkTask`).
    fn class_name(&self) -> String {
        "org.apache.kafka.connect.sink.SinkTask".to_owned()
    }
}
