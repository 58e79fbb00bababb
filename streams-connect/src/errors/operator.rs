//! Kafka's `RetryWithToleranceOperator`, on the client clock.

use streams_clients::Producer;

use super::reporter::{DeadLetterQueueReporter, LogReporter};
use super::{ErrorHandlingMetrics, ProcessingContext, RetryState, Stage};
use crate::config::{SinkConnectorConfig, ToleranceType};
use crate::error::{ConnectError, RecordFailure, TaskError};

/// The first backoff, in ms (Kafka's `RETRIES_DELAY_MIN_MS`); each retry
/// doubles it, up to `errors.retry.delay.max.ms`.
pub const RETRIES_DELAY_MIN_MS: i64 = 300;

/// What an attempt at a stage came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempt<T> {
    /// The stage is over: its result, or `None` when the record failed
    /// (tolerated: skipped and reported) or had failed before.
    Done(Option<T>),
    /// A retriable error: try the stage again once the clock reads this
    /// time (Kafka sleeps here).
    RetryAt(i64),
}

/// Retries retriable errors with exponential backoff within
/// `errors.retry.timeout`, and tolerates other errors of converters and
/// transforms under `errors.tolerance=all`; every failure goes to the
/// reporters (the dead letter queue, then the log) and the metrics. See
/// the [module docs](super).
///
/// Where Kafka draws a random delay below `errors.retry.delay.max.ms` once
/// the doubling passes it (jitter), this operator waits the maximum, so a
/// test knows each instant.
#[derive(Debug)]
pub struct RetryWithToleranceOperator {
    retry_timeout_ms: i64,
    retry_delay_max_ms: i64,
    tolerance: ToleranceType,
    total_failures: u64,
    metrics: ErrorHandlingMetrics,
    connector: String,
    task: i32,
    dlq: Option<DeadLetterQueueReporter>,
    log: Option<LogReporter>,
}

impl RetryWithToleranceOperator {
    /// An operator with `errors.retry.timeout`, `errors.retry.delay.max.ms`
    /// and `errors.tolerance`, and no reporters.
    pub fn new(retry_timeout_ms: i64, retry_delay_max_ms: i64, tolerance: ToleranceType) -> Self {
        Self {
            retry_timeout_ms,
            retry_delay_max_ms,
            tolerance,
            total_failures: 0,
            metrics: ErrorHandlingMetrics::default(),
            connector: String::new(),
            task: 0,
            dlq: None,
            log: None,
        }
    }

    /// The operator of a connector's task, with its reporters in Kafka's
    /// order (`Worker.sinkTaskReporters`): the log reporter, then the DLQ
    /// (when `errors.deadletterqueue.topic.name` is set, through
    /// `dlq_producer`).
    pub fn for_task(
        config: &SinkConnectorConfig,
        task: i32,
        dlq_producer: Option<Box<dyn Producer>>,
    ) -> Self {
        let mut operator = Self::new(
            config.retry_timeout_ms,
            config.retry_delay_max_ms,
            config.tolerance,
        );
        operator.connector.clone_from(&config.name);
        operator.task = task;
        operator.dlq = dlq_producer
            .filter(|_| !config.dlq_topic_name.is_empty())
            .map(|producer| DeadLetterQueueReporter::new(producer, config, task));
        operator.log = Some(LogReporter::new(config, task));
        operator
    }

    /// The metrics so far.
    pub fn metrics(&self) -> &ErrorHandlingMetrics {
        &self.metrics
    }

    /// The dead letter queue reporter, if there is one.
    pub fn dead_letter_queue(&mut self) -> Option<&mut DeadLetterQueueReporter> {
        self.dlq.as_mut()
    }

    /// The lines the log reporter wrote (`errors.log.enable`).
    pub fn logged(&self) -> &[String] {
        self.log.as_ref().map_or(&[], LogReporter::lines)
    }

    /// Whether the failures so far are within `errors.tolerance`.
    pub fn within_tolerance_limits(&self) -> bool {
        match self.tolerance {
            ToleranceType::None => self.total_failures == 0,
            ToleranceType::All => true,
        }
    }

    /// Runs `operation` for the record of `context` at `stage`, as Kafka's
    /// `execute`: a record that failed before is passed over; a retriable
    /// error is retried (answering [`Attempt::RetryAt`]) until
    /// `errors.retry.timeout`, then handled as any other error (Kafka
    /// counts that last failure twice in `total-record-failures`); an error
    /// is tolerated (the record skipped) under `errors.tolerance=all` when
    /// it is retriable or the stage is a converter or transform. Every
    /// failure is reported.
    ///
    /// # Errors
    /// [`TaskError::ToleranceExceeded`] under `errors.tolerance=none`,
    /// [`TaskError::Unhandled`] for an error the stage never tolerates.
    pub fn execute<T>(
        &mut self,
        context: &mut ProcessingContext,
        stage: Stage,
        class_name: &str,
        now: i64,
        operation: impl FnOnce() -> Result<T, ConnectError>,
    ) -> Result<Attempt<T>, TaskError> {
        context.current(stage, class_name);
        if context.failed() {
            return Ok(Attempt::Done(None));
        }
        let deadline = match &context.retry {
            Some(retry) if now < retry.next_at => return Ok(Attempt::RetryAt(retry.next_at)),
            Some(retry) => {
                self.metrics.total_retries += 1;
                retry.deadline
            }
            None => {
                context.attempt = 0;
                if self.retry_timeout_ms >= 0 {
                    now.saturating_add(self.retry_timeout_ms)
                } else {
                    i64::MAX
                }
            }
        };
        context.attempt += 1;
        let error = match operation() {
            Ok(value) => {
                context.retry = None;
                return Ok(Attempt::Done(Some(value)));
            }
            Err(error) => error,
        };
        context.retry = None;
        self.metrics.total_record_failures += 1;
        if error.is_retriable() {
            if now < deadline {
                let next_at = now + self.backoff(context.attempt, deadline, now);
                context.retry = Some(RetryState {
                    deadline,
                    next_at,
                    error,
                });
                return Ok(Attempt::RetryAt(next_at));
            }
            // Out of time: Kafka's execAndRetry rethrows the last error and
            // execAndHandleError counts the failure a second time, then
            // handles it as any other: a retriable error is tolerable at
            // every stage, so the record is skipped under
            // errors.tolerance=all and fails the task under none.
            self.metrics.total_record_failures += 1;
        }
        self.mark_as_failed(now);
        context.set_error(error.clone());
        let outcome = if !stage.tolerates_all_errors() && !error.is_retriable() {
            Err(self.task_error(context, error, false))
        } else if !self.within_tolerance_limits() {
            Err(self.task_error(context, error, true))
        } else {
            self.metrics.total_records_skipped += 1;
            Ok(Attempt::Done(None))
        };
        self.finish(context);
        outcome
    }

    /// Reports a failure that happened outside the operator (Kafka's
    /// `executeFailed`): a record the sink task reported as errant.
    ///
    /// # Errors
    /// [`TaskError::ToleranceExceeded`] under `errors.tolerance=none`,
    /// after the record was reported.
    pub fn execute_failed(
        &mut self,
        context: &mut ProcessingContext,
        stage: Stage,
        class_name: &str,
        error: ConnectError,
        now: i64,
    ) -> Result<(), TaskError> {
        self.mark_as_failed(now);
        context.current(stage, class_name);
        context.set_error(error.clone());
        self.metrics.total_record_failures += 1;
        self.report(context);
        if !self.within_tolerance_limits() {
            self.metrics.total_record_errors += 1;
            return Err(self.task_error(context, error, true));
        }
        Ok(())
    }

    /// Gives up on a record waiting for a retry because the task stops
    /// (Kafka's `triggerStop` during a backoff): the retry counts, the
    /// record is skipped and reported.
    pub fn stop_retrying(&mut self, context: &mut ProcessingContext, now: i64) {
        let Some(retry) = context.retry.take() else {
            return;
        };
        if context.failed() {
            return;
        }
        self.metrics.total_retries += 1;
        // Kafka's context keeps the last attempt's error.
        context.set_error(retry.error);
        self.mark_as_failed(now);
        self.metrics.total_records_skipped += 1;
        self.finish(context);
    }

    fn task_error(
        &self,
        context: &ProcessingContext,
        error: ConnectError,
        tolerance: bool,
    ) -> TaskError {
        let original = context.original();
        let (connector, task) = (self.connector.clone(), self.task);
        let (topic, partition, offset) = (
            original.topic.to_string(),
            original.partition,
            original.offset,
        );
        let failure = Box::new(RecordFailure {
            connector,
            task,
            topic,
            partition,
            offset,
            stage: context.stage().unwrap_or(Stage::TaskPut),
            class_name: context.class_name().to_owned(),
            error,
        });
        if tolerance {
            TaskError::ToleranceExceeded(failure)
        } else {
            TaskError::Unhandled(failure)
        }
    }

    fn mark_as_failed(&mut self, now: i64) {
        self.metrics.last_error_timestamp = now;
        self.total_failures += 1;
    }

    fn finish(&mut self, context: &ProcessingContext) {
        self.metrics.total_record_errors += 1;
        self.report(context);
    }

    fn report(&mut self, context: &ProcessingContext) {
        if let Some(log) = &mut self.log {
            log.report(context, &mut self.metrics);
        }
        if let Some(dlq) = &mut self.dlq {
            dlq.report(context, &mut self.metrics);
        }
    }

    /// Kafka's `backoff`: `300 << (attempt - 1)` ms, at most
    /// `errors.retry.delay.max.ms`, never past the deadline.
    fn backoff(&self, attempt: u32, deadline: i64, now: i64) -> i64 {
        let doubled = attempt
            .checked_sub(1)
            .and_then(|n| RETRIES_DELAY_MIN_MS.checked_mul(1i64.checked_shl(n)?))
            .filter(|d| *d > 0)
            .unwrap_or(i64::MAX);
        let delay = doubled.min(self.retry_delay_max_ms.max(0));
        delay.min(deadline.saturating_sub(now)).max(0)
    }

    /// Flushes the DLQ producer so its records are on the cluster.
    pub fn flush(&mut self) {
        if let Some(dlq) = &mut self.dlq {
            dlq.flush(&mut self.metrics);
        }
    }
}

#[cfg(test)]
mod tests {
    use streams_clients::{ConsumerRecord, TimestampType};

    use super::*;

    fn context() -> ProcessingContext {
        ProcessingContext::new(ConsumerRecord {
            topic: "t".into(),
            partition: 0,
            offset: 0,
            timestamp: 0,
            timestamp_type: TimestampType::CreateTime,
            key: None,
            value: None,
            headers: vec![],
            leader_epoch: -1,
        })
    }

    /// Runs an operation failing `failures` times retriably then
    /// succeeding (or not), moving the clock to each retry, as Kafka's
    /// `execAndHandleRetriableError` test does: the waits between attempts.
    fn waits(
        timeout: i64,
        failures: usize,
        max: i64,
    ) -> (Vec<i64>, Option<&'static str>, ErrorHandlingMetrics) {
        let mut operator = RetryWithToleranceOperator::new(timeout, max, ToleranceType::All);
        let mut ctx = context();
        let mut now = 0;
        let mut calls = 0;
        let mut waits = Vec::new();
        loop {
            let attempt = operator
                .execute(&mut ctx, Stage::Transformation, "T", now, || {
                    calls += 1;
                    if calls <= failures {
                        Err(ConnectError::retriable("Test"))
                    } else {
                        Ok("Success")
                    }
                })
                .expect("tolerated");
            match attempt {
                Attempt::RetryAt(at) => {
                    waits.push(at - now);
                    now = at;
                }
                Attempt::Done(result) => return (waits, result, *operator.metrics()),
            }
        }
    }

    #[test]
    fn kafkas_retry_waits() {
        // RetryWithToleranceOperatorTest.testExecAndHandleRetriableErrorThrice
        let (w, result, _) = waits(6_000, 3, 60_000);
        assert_eq!(w, [300, 600, 1_200]);
        assert_eq!(result, Some("Success"));
        // ...WithInfiniteRetries
        let (w, result, _) = waits(-1, 8, 60_000);
        assert_eq!(w, [300, 600, 1_200, 2_400, 4_800, 9_600, 19_200, 38_400]);
        assert_eq!(result, Some("Success"));
        // ...WithMaxRetriesExceeded: the last wait ends at the deadline;
        // the last failure counts twice, as in Kafka 4.4.0
        // (compat/connect/golden/retry_timeout_gives_up_at_the_deadline.json)
        let (w, result, metrics) = waits(6_000, 6, 60_000);
        assert_eq!(w, [300, 600, 1_200, 2_400, 1_500]);
        assert_eq!(result, None);
        assert_eq!(metrics.total_record_failures, 7);
        assert_eq!(metrics.total_retries, 5);
        assert_eq!(metrics.total_records_skipped, 1);
        assert_eq!(metrics.total_record_errors, 1);
        // capped by errors.retry.delay.max.ms
        let (w, _, _) = waits(-1, 5, 1_000);
        assert_eq!(w, [300, 600, 1_000, 1_000, 1_000]);
        // errors.retry.timeout=0 (the default): no retry at all
        let (w, result, metrics) = waits(0, 1, 60_000);
        assert!(w.is_empty());
        assert_eq!(result, None);
        assert_eq!(
            (metrics.total_record_failures, metrics.total_retries),
            (2, 0)
        );
    }

    #[test]
    fn tolerance_none_fails_and_a_failed_record_is_passed_over() {
        let mut operator = RetryWithToleranceOperator::new(0, 60_000, ToleranceType::None);
        let mut ctx = context();
        let err = operator
            .execute(&mut ctx, Stage::ValueConverter, "C", 7, || {
                Err::<(), _>(ConnectError::data("bad"))
            })
            .expect_err("fails");
        assert!(
            matches!(&err, TaskError::ToleranceExceeded(f) if f.stage == Stage::ValueConverter && f.offset == 0)
        );
        assert_eq!(operator.metrics().last_error_timestamp, 7);
        assert_eq!(operator.metrics().total_records_skipped, 0);
        let again = operator
            .execute(&mut ctx, Stage::HeaderConverter, "H", 8, || Ok(1))
            .expect("passed over");
        assert_eq!(again, Attempt::Done(None));
    }

    /// Kafka 4.4.0 (compat/connect/golden/retries_exhausted_under_tolerance_none.json):
    /// retries that run out under errors.tolerance=none fail the task.
    #[test]
    fn retries_exhausted_under_tolerance_none_fail_the_task() {
        let mut operator = RetryWithToleranceOperator::new(1_000, 60_000, ToleranceType::None);
        let mut ctx = context();
        let mut attempt = |now| {
            operator.execute(&mut ctx, Stage::Transformation, "T", now, || {
                Err::<(), _>(ConnectError::retriable("busy"))
            })
        };
        assert_eq!(attempt(0).ok(), Some(Attempt::RetryAt(300)));
        assert_eq!(attempt(300).ok(), Some(Attempt::RetryAt(900)));
        assert_eq!(attempt(900).ok(), Some(Attempt::RetryAt(1_000)));
        let err = attempt(1_000).expect_err("fails");
        assert!(
            matches!(&err, TaskError::ToleranceExceeded(f) if f.error.is_retriable() && f.stage == Stage::Transformation)
        );
        let m = operator.metrics();
        assert_eq!(
            (
                m.total_record_failures,
                m.total_retries,
                m.total_records_skipped,
                m.total_record_errors
            ),
            (5, 3, 0, 1)
        );
    }

    /// A task stopped during a backoff reports the last attempt's error.
    #[test]
    fn stopping_during_a_backoff_reports_the_last_error() {
        let mut operator = RetryWithToleranceOperator::new(-1, 60_000, ToleranceType::All);
        let mut ctx = context();
        let attempt = operator.execute(&mut ctx, Stage::Transformation, "T", 0, || {
            Err::<(), _>(ConnectError::retriable("lookup service unavailable"))
        });
        assert_eq!(attempt.ok(), Some(Attempt::RetryAt(300)));
        operator.stop_retrying(&mut ctx, 0);
        assert_eq!(
            ctx.error().map(ConnectError::message),
            Some("lookup service unavailable")
        );
        assert_eq!(operator.metrics().total_records_skipped, 1);
    }

    #[test]
    fn a_non_retriable_put_error_is_unhandled() {
        let mut operator = RetryWithToleranceOperator::new(0, 60_000, ToleranceType::All);
        let err = operator
            .execute(&mut context(), Stage::TaskPut, "S", 0, || {
                Err::<(), _>(ConnectError::connect("down"))
            })
            .expect_err("fails");
        assert!(matches!(&err, TaskError::Unhandled(f) if f.stage == Stage::TaskPut));
    }
}
