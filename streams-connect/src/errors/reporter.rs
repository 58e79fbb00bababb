//! The reporters: Kafka's `DeadLetterQueueReporter` and `LogReporter.Sink`.

use streams_clients::{Header, Producer, ProducerRecord, TimestampType};

use super::{ErrorHandlingMetrics, ProcessingContext};
use crate::config::SinkConnectorConfig;

/// `__connect.errors.`: the prefix of every error context header.
pub const HEADER_PREFIX: &str = "__connect.errors.";
/// The original record's topic.
pub const ERROR_HEADER_ORIG_TOPIC: &str = "__connect.errors.topic";
/// The original record's partition, as decimal text.
pub const ERROR_HEADER_ORIG_PARTITION: &str = "__connect.errors.partition";
/// The original record's offset, as decimal text.
pub const ERROR_HEADER_ORIG_OFFSET: &str = "__connect.errors.offset";
/// The connector's name.
pub const ERROR_HEADER_CONNECTOR_NAME: &str = "__connect.errors.connector.name";
/// The task number, as decimal text.
pub const ERROR_HEADER_TASK_ID: &str = "__connect.errors.task.id";
/// The stage that failed (`VALUE_CONVERTER`, ...).
pub const ERROR_HEADER_STAGE: &str = "__connect.errors.stage";
/// The class that failed.
pub const ERROR_HEADER_EXECUTING_CLASS: &str = "__connect.errors.class.name";
/// The error's exception class.
pub const ERROR_HEADER_EXCEPTION: &str = "__connect.errors.exception.class.name";
/// The error's message.
pub const ERROR_HEADER_EXCEPTION_MESSAGE: &str = "__connect.errors.exception.message";
/// The error's stack trace.
pub const ERROR_HEADER_EXCEPTION_STACK_TRACE: &str = "__connect.errors.exception.stacktrace";

/// Writes a failed record, as consumed (key, value, headers and timestamp
/// unchanged), to `errors.deadletterqueue.topic.name`, with the error
/// context headers when `errors.deadletterqueue.context.headers.enable`
/// is on: each value is UTF-8 text, numbers in decimal, as Kafka writes
/// them.
#[derive(Debug)]
pub struct DeadLetterQueueReporter {
    producer: Box<dyn Producer>,
    topic: String,
    context_headers: bool,
    connector: String,
    task: i32,
    unflushed: u64,
}

impl DeadLetterQueueReporter {
    /// A reporter for `config`'s DLQ topic through `producer`.
    pub fn new(producer: Box<dyn Producer>, config: &SinkConnectorConfig, task: i32) -> Self {
        Self {
            producer,
            topic: config.dlq_topic_name.clone(),
            context_headers: config.dlq_context_headers_enable,
            connector: config.name.clone(),
            task,
            unflushed: 0,
        }
    }

    /// The DLQ topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The record Kafka sends for `context`.
    pub fn dlq_record(&self, context: &ProcessingContext) -> ProducerRecord {
        let original = context.original();
        let mut record = ProducerRecord::from_parts(
            self.topic.clone(),
            original.key.clone(),
            original.value.clone(),
        );
        record.headers.clone_from(&original.headers);
        if original.timestamp != -1 {
            record.timestamp = Some(original.timestamp);
        }
        if self.context_headers {
            let headers = &mut record.headers;
            headers.push(Header::new(
                ERROR_HEADER_ORIG_TOPIC,
                original.topic.to_string(),
            ));
            headers.push(Header::new(
                ERROR_HEADER_ORIG_PARTITION,
                original.partition.to_string(),
            ));
            headers.push(Header::new(
                ERROR_HEADER_ORIG_OFFSET,
                original.offset.to_string(),
            ));
            headers.push(Header::new(
                ERROR_HEADER_CONNECTOR_NAME,
                self.connector.clone(),
            ));
            headers.push(Header::new(ERROR_HEADER_TASK_ID, self.task.to_string()));
            if let Some(stage) = context.stage() {
                headers.push(Header::new(ERROR_HEADER_STAGE, stage.name()));
            }
            headers.push(Header::new(
                ERROR_HEADER_EXECUTING_CLASS,
                context.class_name().to_owned(),
            ));
            if let Some(error) = context.error() {
                headers.push(Header::new(
                    ERROR_HEADER_EXCEPTION,
                    error.exception_class_name(),
                ));
                headers.push(Header::new(
                    ERROR_HEADER_EXCEPTION_MESSAGE,
                    error.message().to_owned(),
                ));
                headers.push(Header::new(
                    ERROR_HEADER_EXCEPTION_STACK_TRACE,
                    error.stacktrace(),
                ));
            }
        }
        record
    }

    pub(crate) fn report(
        &mut self,
        context: &ProcessingContext,
        metrics: &mut ErrorHandlingMetrics,
    ) {
        if self.topic.is_empty() {
            return;
        }
        metrics.deadletterqueue_produce_requests += 1;
        let record = self.dlq_record(context);
        match self.producer.send(record) {
            Ok(()) => self.unflushed += 1,
            Err(_) => metrics.deadletterqueue_produce_failures += 1,
        }
    }

    pub(crate) fn flush(&mut self, metrics: &mut ErrorHandlingMetrics) {
        if self.unflushed == 0 {
            return;
        }
        if self.producer.flush().is_err() {
            metrics.deadletterqueue_produce_failures += self.unflushed;
        }
        self.unflushed = 0;
    }
}

/// Kafka's `LogReporter.Sink`: with `errors.log.enable`, one line per
/// failure, `Error encountered in task <connector>-<task>. Executing stage
/// '<STAGE>' with class '<class>'` and, with
/// `errors.log.include.messages`, where the record was consumed. The
/// lines are kept for a test to read.
#[derive(Debug)]
pub struct LogReporter {
    enabled: bool,
    include_messages: bool,
    task_id: String,
    lines: Vec<String>,
}

impl LogReporter {
    /// The reporter of `config` for `task`.
    pub fn new(config: &SinkConnectorConfig, task: i32) -> Self {
        Self {
            enabled: config.log_enable,
            include_messages: config.log_include_messages,
            task_id: format!("{}-{task}", config.name),
            lines: Vec::new(),
        }
    }

    /// The lines written so far.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Kafka's message for `context`.
    pub fn message(&self, context: &ProcessingContext) -> String {
        let mut line = format!(
            "Error encountered in task {}. Executing stage '{}' with class '{}'",
            self.task_id,
            context.stage().map_or("null", |s| s.name()),
            context.class_name()
        );
        if self.include_messages {
            let r = context.original();
            line.push_str(&format!(
                ", where consumed record is {{topic='{}', partition={}, offset={}",
                r.topic, r.partition, r.offset
            ));
            if r.timestamp != -1 {
                let kind = match r.timestamp_type {
                    TimestampType::CreateTime => "CreateTime",
                    TimestampType::LogAppendTime => "LogAppendTime",
                };
                line.push_str(&format!(
                    ", timestamp={}, timestampType={kind}",
                    r.timestamp
                ));
            }
            line.push('}');
        }
        line.push('.');
        line
    }

    pub(crate) fn report(
        &mut self,
        context: &ProcessingContext,
        metrics: &mut ErrorHandlingMetrics,
    ) {
        if !self.enabled || !context.failed() {
            return;
        }
        let line = self.message(context);
        self.lines.push(line);
        metrics.total_errors_logged += 1;
    }
}
