//! A test harness for `streams-connect` sink connectors on the simulated
//! cluster, in the style of the [`TopologyTestDriver`](crate::TopologyTestDriver):
//! pipe typed records (or bad bytes) into the connector's topics, run the
//! worker, move the mock clock, and read what the sink task received and
//! what went to the dead letter queue, its `__connect.errors.*` headers
//! decoded.
//!
//! - [`SinkTestDriver`]: the worker of one sink task over a [`Cluster`]
//!   (its own single-broker cluster unless given one), with the
//!   connector's topics created (one partition each, unless said).
//! - [`SinkInputTopic`]: a typed producer into one of the topics.
//! - [`RecordingSink`]: a sink task that keeps every record it is put, and
//!   can be told to fail: retriably for some puts, fatally at an offset,
//!   or by reporting records as errant.
//! - [`DeadLetterRecord`] and [`ConnectErrorHeaders`]: a DLQ record as
//!   written, and its error context.
//!
//! ```
//! use streams_connect::json::JsonConverter;
//! use streams_core::serde::StringSerde;
//! use streams_test::connect::{RecordingSink, SinkTestDriver};
//!
//! let mut driver = SinkTestDriver::builder([
//!     ("name", "orders-sink"),
//!     ("topics", "orders"),
//!     ("errors.tolerance", "all"),
//!     ("errors.deadletterqueue.topic.name", "dlq"),
//!     ("errors.deadletterqueue.topic.replication.factor", "1"),
//!     ("errors.deadletterqueue.context.headers.enable", "true"),
//! ])
//! .value_converter(JsonConverter::schemaless())
//! .build(RecordingSink::new())?;
//! let orders = driver.input_topic("orders", StringSerde, StringSerde);
//! orders.pipe_key_value("o-1", r#"{"id":1}"#)?;
//! orders.pipe_key_value("o-2", "{not json")?;
//! driver.run()?;
//!
//! assert_eq!(driver.sink().records().len(), 1);
//! let dlq = driver.dead_letter_queue()?;
//! assert_eq!(dlq[0].value.as_deref(), Some(&b"{not json"[..]));
//! let errors = dlq[0].errors.as_ref().expect("context headers");
//! assert_eq!((errors.stage.as_str(), errors.offset), ("VALUE_CONVERTER", 1));
//! assert_eq!(driver.metric("total-records-skipped"), 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use streams_broker::clients::api::SimulatedClients;
use streams_broker::record::Header;
use streams_broker::{BrokerError, Cluster, NewTopic, ProducerRecord, TopicPartition};
use streams_connect::errors::{
    ERROR_HEADER_CONNECTOR_NAME, ERROR_HEADER_EXCEPTION, ERROR_HEADER_EXCEPTION_MESSAGE,
    ERROR_HEADER_EXCEPTION_STACK_TRACE, ERROR_HEADER_EXECUTING_CLASS, ERROR_HEADER_ORIG_OFFSET,
    ERROR_HEADER_ORIG_PARTITION, ERROR_HEADER_ORIG_TOPIC, ERROR_HEADER_STAGE, ERROR_HEADER_TASK_ID,
    HEADER_PREFIX,
};
use streams_connect::transforms::TransformStage;
use streams_connect::worker::WorkerSinkTaskBuilder;
use streams_connect::{
    ConfigError, ConnectError, Converter, HeaderConverter, PollOutcome, SinkConnectorConfig,
    SinkRecord, SinkTask, SinkTaskContext, TaskError, WorkerSinkTask,
};
use streams_core::RecordPart;
use streams_core::SerdeError;
use streams_core::serde::Serde;

/// Most polls [`SinkTestDriver::run`] makes before it gives up on a sink
/// that never stops asking for an immediate redelivery.
pub const MAX_POLLS_PER_RUN: usize = 10_000;

/// What went wrong in the harness.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum ConnectTestError {
    /// The connector's configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The sink task failed (or could not start).
    #[error(transparent)]
    Task(Box<TaskError>),
    /// The cluster refused a call about `topic`.
    #[error("the simulated cluster refused a call on topic '{topic}': {source}")]
    Cluster {
        /// The topic.
        topic: String,
        /// The broker's error.
        source: BrokerError,
    },
    /// A serde could not write a record piped into `topic`.
    #[error("cannot serialize the {part} of a record for topic '{topic}': {source}")]
    Serialization {
        /// The topic.
        topic: String,
        /// Key or value.
        part: RecordPart,
        /// The serde's error.
        source: SerdeError,
    },
    /// The sink asked for immediate redelivery [`MAX_POLLS_PER_RUN`] times.
    #[error(
        "connector '{connector}': {polls} polls without becoming idle; the sink keeps failing retriably without a timeout (set one with SinkTaskContext::timeout, or advance the clock)"
    )]
    NeverIdle {
        /// The connector.
        connector: String,
        /// How many polls were made.
        polls: usize,
    },
}

impl From<TaskError> for ConnectTestError {
    fn from(error: TaskError) -> Self {
        ConnectTestError::Task(Box::new(error))
    }
}

/// A harness result.
pub type Result<T, E = ConnectTestError> = std::result::Result<T, E>;

/// Builds a [`SinkTestDriver`].
pub struct SinkTestDriverBuilder {
    props: Vec<(String, String)>,
    cluster: Option<Cluster>,
    partitions: i32,
    worker: Box<dyn FnOnce(WorkerSinkTaskBuilder) -> WorkerSinkTaskBuilder>,
}

impl fmt::Debug for SinkTestDriverBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkTestDriverBuilder")
            .field("props", &self.props)
            .field("partitions", &self.partitions)
            .finish_non_exhaustive()
    }
}

impl SinkTestDriverBuilder {
    /// Runs on `cluster` instead of a new single-broker one.
    #[must_use]
    pub fn cluster(mut self, cluster: Cluster) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Creates the connector's missing topics with `partitions` partitions
    /// (1 by default).
    #[must_use]
    pub fn partitions(mut self, partitions: i32) -> Self {
        self.partitions = partitions;
        self
    }

    fn with(
        mut self,
        f: impl FnOnce(WorkerSinkTaskBuilder) -> WorkerSinkTaskBuilder + 'static,
    ) -> Self {
        let before = self.worker;
        self.worker = Box::new(move |b| f(before(b)));
        self
    }

    /// The key converter.
    #[must_use]
    pub fn key_converter(self, converter: impl Converter + 'static) -> Self {
        self.with(move |b| b.key_converter(converter))
    }

    /// The value converter.
    #[must_use]
    pub fn value_converter(self, converter: impl Converter + 'static) -> Self {
        self.with(move |b| b.value_converter(converter))
    }

    /// The header converter.
    #[must_use]
    pub fn header_converter(self, converter: impl HeaderConverter + 'static) -> Self {
        self.with(move |b| b.header_converter(converter))
    }

    /// Appends a transform.
    #[must_use]
    pub fn transform(self, stage: TransformStage) -> Self {
        self.with(move |b| b.transform(stage))
    }

    /// Validates the configuration, creates the topics, and starts `sink`
    /// under a worker.
    ///
    /// # Errors
    /// The configuration's error, a topic the cluster refused, or the
    /// worker's (a DLQ topic it cannot create, a task that cannot start).
    pub fn build<S: SinkTask>(self, sink: S) -> Result<SinkTestDriver<S>> {
        let config = SinkConnectorConfig::from_props(self.props)?;
        let cluster = self.cluster.unwrap_or_default();
        let existing: BTreeSet<String> = cluster.topic_names().into_iter().collect();
        for topic in &config.topics {
            if !existing.contains(topic) {
                cluster
                    .admin()
                    .create_topic(NewTopic::new(topic.clone(), self.partitions))
                    .map_err(|source| ConnectTestError::Cluster {
                        topic: topic.clone(),
                        source,
                    })?;
            }
        }
        let dlq = config.dlq_topic_name.clone();
        let clients = SimulatedClients::new(cluster.clone());
        let worker = (self.worker)(WorkerSinkTask::builder(config)).build(sink, &clients)?;
        Ok(SinkTestDriver {
            cluster,
            worker,
            dlq,
        })
    }
}

/// One sink task's worker on the simulated cluster. See the
/// [module docs](self).
#[derive(Debug)]
pub struct SinkTestDriver<S> {
    cluster: Cluster,
    worker: WorkerSinkTask<S>,
    dlq: String,
}

impl SinkTestDriver<()> {
    /// A builder for a connector of these properties (Kafka's names:
    /// `name`, `topics`, `errors.*`).
    pub fn builder<K: Into<String>, V: Into<String>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> SinkTestDriverBuilder {
        SinkTestDriverBuilder {
            props: props
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            cluster: None,
            partitions: 1,
            worker: Box::new(|b| b),
        }
    }
}

impl<S: SinkTask> SinkTestDriver<S> {
    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// A typed producer into `topic`.
    pub fn input_topic<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> SinkInputTopic<K, V> {
        SinkInputTopic {
            cluster: self.cluster.clone(),
            topic: topic.to_owned(),
            partition: None,
            key_serde: Box::new(key_serde),
            value_serde: Box::new(value_serde),
        }
    }

    /// Polls the worker until it is idle (nothing more to read) or waits
    /// for the clock (a retry backoff, a redelivery timeout); the last
    /// outcome.
    ///
    /// # Errors
    /// The task's failure, or [`ConnectTestError::NeverIdle`].
    pub fn run(&mut self) -> Result<PollOutcome> {
        for _ in 0..MAX_POLLS_PER_RUN {
            match self.worker.poll_once()? {
                PollOutcome::Delivered { .. } => {}
                PollOutcome::Waiting { until_ms } if until_ms <= self.cluster.now_ms() => {}
                outcome => return Ok(outcome),
            }
        }
        Err(ConnectTestError::NeverIdle {
            connector: self.worker.config().name.clone(),
            polls: MAX_POLLS_PER_RUN,
        })
    }

    /// Moves the mock clock by `ms`.
    pub fn advance_ms(&self, ms: i64) {
        self.cluster.advance_ms(ms);
    }

    /// Moves the mock clock by `ms`, then [`run`](Self::run)s.
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub fn advance_and_run(&mut self, ms: i64) -> Result<PollOutcome> {
        self.advance_ms(ms);
        self.run()
    }

    /// The clock now.
    pub fn now_ms(&self) -> i64 {
        self.cluster.now_ms()
    }

    /// The sink task.
    pub fn sink(&self) -> &S {
        self.worker.task()
    }

    /// The worker.
    pub fn worker(&mut self) -> &mut WorkerSinkTask<S> {
        &mut self.worker
    }

    /// A metric by Kafka's name (`total-record-failures`,
    /// `total-records-skipped`, `total-retries`, `total-errors-logged`,
    /// `deadletterqueue-produce-requests`, `sink-record-read-total`, ...).
    ///
    /// # Panics
    /// For a name the worker does not have, listing those it has.
    #[track_caller]
    pub fn metric(&self, name: &str) -> f64 {
        match self.worker.metric(name) {
            Some(value) => value,
            None => panic!(
                "no metric '{name}'; there are {}, sink-record-read-total and sink-record-send-total",
                streams_connect::errors::ErrorHandlingMetrics::NAMES.join(", ")
            ),
        }
    }

    /// Every record of the dead letter queue topic, in offset order (none
    /// when the connector has no DLQ).
    ///
    /// # Errors
    /// The cluster could not be read.
    pub fn dead_letter_queue(&self) -> Result<Vec<DeadLetterRecord>> {
        if self.dlq.is_empty() || !self.cluster.topic_names().contains(&self.dlq) {
            return Ok(Vec::new());
        }
        let records = self
            .cluster
            .log_records(&TopicPartition::new(self.dlq.clone(), 0))
            .map_err(|source| ConnectTestError::Cluster {
                topic: self.dlq.clone(),
                source,
            })?;
        Ok(records
            .into_iter()
            .map(|r| {
                DeadLetterRecord::new(
                    r.offset,
                    r.timestamp,
                    r.key.as_deref(),
                    r.value.as_deref(),
                    &r.headers,
                )
            })
            .collect())
    }

    /// The offsets the worker committed last.
    pub fn committed_offsets(&self) -> &BTreeMap<TopicPartition, i64> {
        self.worker.committed_offsets()
    }

    /// Stops the worker (a final commit, then the task's `stop`).
    ///
    /// # Errors
    /// The final commit failed.
    pub fn stop(&mut self) -> Result<()> {
        Ok(self.worker.stop()?)
    }
}

/// A typed producer into one of the connector's topics.
pub struct SinkInputTopic<K, V> {
    cluster: Cluster,
    topic: String,
    partition: Option<i32>,
    key_serde: Box<dyn Serde<K>>,
    value_serde: Box<dyn Serde<V>>,
}

impl<K, V> fmt::Debug for SinkInputTopic<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SinkInputTopic")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl<K: 'static, V: 'static> SinkInputTopic<K, V> {
    /// The same producer, writing every record to `partition` instead of
    /// the one Kafka's partitioner picks.
    #[must_use]
    pub fn to_partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// Sends `key` = `value` at the clock's time.
    ///
    /// # Errors
    /// A serde failure or the cluster's refusal.
    pub fn pipe_key_value(&self, key: impl Into<K>, value: impl Into<V>) -> Result<i64> {
        let key = self.serialize(RecordPart::Key, |t| {
            self.key_serde.serialize(t, &key.into())
        })?;
        let value = self.serialize(RecordPart::Value, |t| {
            self.value_serde.serialize(t, &value.into())
        })?;
        self.pipe_raw(Some(&key), Some(&value), &[])
    }

    /// Sends a tombstone for `key`.
    ///
    /// # Errors
    /// As [`pipe_key_value`](Self::pipe_key_value).
    pub fn pipe_tombstone(&self, key: impl Into<K>) -> Result<i64> {
        let key = self.serialize(RecordPart::Key, |t| {
            self.key_serde.serialize(t, &key.into())
        })?;
        self.pipe_raw(Some(&key), None, &[])
    }

    /// Sends bytes as they are (a poison pill: bytes no converter reads)
    /// with these headers; returns the record's offset.
    ///
    /// # Errors
    /// The cluster's refusal.
    pub fn pipe_raw(
        &self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[(&str, Option<&[u8]>)],
    ) -> Result<i64> {
        let mut record = ProducerRecord::from_parts(
            self.topic.clone(),
            key.map(|k| k.to_vec().into()),
            value.map(|v| v.to_vec().into()),
        )
        .timestamp(self.cluster.now_ms());
        record.partition = self.partition;
        for (k, v) in headers {
            record.headers.push(match v {
                Some(v) => Header::new(*k, v.to_vec()),
                None => Header::null(*k),
            });
        }
        self.cluster
            .producer()
            .send(record)
            .map(|m| m.offset)
            .map_err(|source| ConnectTestError::Cluster {
                topic: self.topic.clone(),
                source,
            })
    }

    fn serialize(
        &self,
        part: RecordPart,
        f: impl FnOnce(&str) -> std::result::Result<Vec<u8>, SerdeError>,
    ) -> Result<Vec<u8>> {
        f(&self.topic).map_err(|source| ConnectTestError::Serialization {
            topic: self.topic.clone(),
            part,
            source,
        })
    }
}

/// The error context Kafka Connect writes into a DLQ record's headers
/// (`errors.deadletterqueue.context.headers.enable=true`), decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectErrorHeaders {
    /// `__connect.errors.topic`.
    pub topic: String,
    /// `__connect.errors.partition`.
    pub partition: i32,
    /// `__connect.errors.offset`.
    pub offset: i64,
    /// `__connect.errors.connector.name`.
    pub connector_name: String,
    /// `__connect.errors.task.id`.
    pub task_id: i32,
    /// `__connect.errors.stage`.
    pub stage: String,
    /// `__connect.errors.class.name`.
    pub class_name: String,
    /// `__connect.errors.exception.class.name`.
    pub exception_class_name: Option<String>,
    /// `__connect.errors.exception.message`.
    pub exception_message: Option<String>,
    /// `__connect.errors.exception.stacktrace`.
    pub exception_stacktrace: Option<String>,
}

/// A record of the dead letter queue topic, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterRecord {
    /// Its offset in the DLQ topic.
    pub offset: i64,
    /// Its timestamp (the original's).
    pub timestamp: i64,
    /// The original key bytes.
    pub key: Option<Vec<u8>>,
    /// The original value bytes.
    pub value: Option<Vec<u8>>,
    /// Every header, in order: the original's, then the error context's.
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    /// The error context, when its headers are there.
    pub errors: Option<ConnectErrorHeaders>,
}

impl DeadLetterRecord {
    fn new(
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Self {
        let headers: Vec<(String, Option<Vec<u8>>)> = headers
            .iter()
            .map(|h| (h.key.clone(), h.value.as_ref().map(|v| v.to_vec())))
            .collect();
        let text = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.as_ref())
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        let errors = (|| {
            Some(ConnectErrorHeaders {
                topic: text(ERROR_HEADER_ORIG_TOPIC)?,
                partition: text(ERROR_HEADER_ORIG_PARTITION)?.parse().ok()?,
                offset: text(ERROR_HEADER_ORIG_OFFSET)?.parse().ok()?,
                connector_name: text(ERROR_HEADER_CONNECTOR_NAME)?,
                task_id: text(ERROR_HEADER_TASK_ID)?.parse().ok()?,
                stage: text(ERROR_HEADER_STAGE)?,
                class_name: text(ERROR_HEADER_EXECUTING_CLASS)?,
                exception_class_name: text(ERROR_HEADER_EXCEPTION),
                exception_message: text(ERROR_HEADER_EXCEPTION_MESSAGE),
                exception_stacktrace: text(ERROR_HEADER_EXCEPTION_STACK_TRACE),
            })
        })();
        Self {
            offset,
            timestamp,
            key: key.map(<[u8]>::to_vec),
            value: value.map(<[u8]>::to_vec),
            headers,
            errors,
        }
    }

    /// The value of header `name` (the first, if it repeats).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The headers the original record had (those not of the error
    /// context).
    pub fn original_headers(&self) -> Vec<(String, Option<Vec<u8>>)> {
        self.headers
            .iter()
            .filter(|(k, _)| !k.starts_with(HEADER_PREFIX))
            .cloned()
            .collect()
    }
}

/// A sink task that keeps what it is put and fails when told to. See the
/// [module docs](self).
#[derive(Default)]
pub struct RecordingSink {
    records: Vec<SinkRecord>,
    puts: usize,
    started: Option<BTreeMap<String, String>>,
    stopped: bool,
    retriable_failures: usize,
    redelivery_timeout_ms: Option<i64>,
    fatal_at: Option<i64>,
    errant: Option<Box<dyn Fn(&SinkRecord) -> Option<ConnectError> + Send>>,
}

impl fmt::Debug for RecordingSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingSink")
            .field("records", &self.records.len())
            .field("puts", &self.puts)
            .field("retriable_failures", &self.retriable_failures)
            .field("fatal_at", &self.fatal_at)
            .finish_non_exhaustive()
    }
}

impl RecordingSink {
    /// A sink that accepts everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next `n` puts of a non-empty batch fail with a
    /// `RetriableException` ("sink busy"): the worker redelivers the batch.
    #[must_use]
    pub fn fail_retriably(mut self, n: usize) -> Self {
        self.retriable_failures = n;
        self
    }

    /// On a retriable failure, asks the worker to wait `ms` before
    /// redelivering (`SinkTaskContext::timeout`).
    #[must_use]
    pub fn redelivery_timeout_ms(mut self, ms: i64) -> Self {
        self.redelivery_timeout_ms = Some(ms);
        self
    }

    /// A put of a batch holding the record at `offset` fails with a
    /// `ConnectException`: the task dies.
    #[must_use]
    pub fn fail_fatally_at(mut self, offset: i64) -> Self {
        self.fatal_at = Some(offset);
        self
    }

    /// Records for which `check` returns an error are reported as errant
    /// (Kafka's `ErrantRecordReporter`) instead of kept.
    #[must_use]
    pub fn report_errant(
        mut self,
        check: impl Fn(&SinkRecord) -> Option<ConnectError> + Send + 'static,
    ) -> Self {
        self.errant = Some(Box::new(check));
        self
    }

    /// Every record kept, in the order put.
    pub fn records(&self) -> &[SinkRecord] {
        &self.records
    }

    /// How many non-empty batches were put (failed attempts included).
    pub fn puts(&self) -> usize {
        self.puts
    }

    /// The properties `start` received.
    pub fn started_with(&self) -> Option<&BTreeMap<String, String>> {
        self.started.as_ref()
    }

    /// Whether `stop` was called.
    pub fn stopped(&self) -> bool {
        self.stopped
    }
}

impl SinkTask for RecordingSink {
    fn start(&mut self, props: &BTreeMap<String, String>) -> std::result::Result<(), ConnectError> {
        self.started = Some(props.clone());
        Ok(())
    }

    fn put(
        &mut self,
        records: &[SinkRecord],
        context: &mut SinkTaskContext,
    ) -> std::result::Result<(), ConnectError> {
        if records.is_empty() {
            return Ok(());
        }
        self.puts += 1;
        if let Some(offset) = self.fatal_at
            && records.iter().any(|r| r.kafka_offset == offset)
        {
            return Err(ConnectError::connect(format!(
                "the sink cannot write the record at offset {offset}"
            )));
        }
        if self.retriable_failures > 0 {
            self.retriable_failures -= 1;
            if let Some(ms) = self.redelivery_timeout_ms {
                context.timeout(ms);
            }
            return Err(ConnectError::retriable("sink busy"));
        }
        for record in records {
            match self.errant.as_ref().and_then(|check| check(record)) {
                Some(error) => context.report(record, error),
                None => self.records.push(record.clone()),
            }
        }
        Ok(())
    }

    fn stop(&mut self) {
        self.stopped = true;
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for ConnectTestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
