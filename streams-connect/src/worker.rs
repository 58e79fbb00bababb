//! The worker loop of one sink task: Kafka Connect's `WorkerSinkTask`.
//!
//! Each [`WorkerSinkTask::poll_once`] is one iteration of Kafka's loop:
//! commit offsets when `offset.flush.interval.ms` has passed, poll the
//! consumer, run each record through the key, value and header
//! converters and the transforms under the
//! [`RetryWithToleranceOperator`], and `put` the batch. Nothing blocks:
//! where Kafka sleeps for a retry, `poll_once` answers
//! [`PollOutcome::Waiting`] and the caller moves the clock (on the
//! simulated cluster) or calls again later.
//!
//! The task reads every partition of its `topics` (assigned, in the
//! consumer group `connect-<name>` for its commits), from the committed
//! offset or the earliest, as Kafka's sink tasks do.
//!
//! ```
//! use streams_broker::Cluster;
//! use streams_broker::clients::api::SimulatedClients;
//! use streams_connect::worker::{PollOutcome, WorkerSinkTask};
//! use streams_connect::{ConnectError, SinkConnectorConfig, SinkRecord, SinkTask, SinkTaskContext};
//!
//! #[derive(Debug, Default)]
//! struct Collect(Vec<SinkRecord>);
//! impl SinkTask for Collect {
//!     fn put(&mut self, records: &[SinkRecord], _: &mut SinkTaskContext) -> Result<(), ConnectError> {
//!         self.0.extend_from_slice(records);
//!         Ok(())
//!     }
//! }
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(streams_broker::NewTopic::new("orders", 1))?;
//! cluster.producer().send(streams_broker::ProducerRecord::new("orders", "k", "v"))?;
//! let config = SinkConnectorConfig::from_props([("name", "collect"), ("topics", "orders")])?;
//! let mut worker = WorkerSinkTask::builder(config).build(Collect::default(), &SimulatedClients::new(cluster))?;
//! assert_eq!(worker.poll_once()?, PollOutcome::Delivered { records: 1 });
//! assert_eq!(worker.task().0[0].value.as_str(), Some("v"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use streams_clients::{
    ClientConfig, ClientError, ClientSupplier, Clock, Consumer, ConsumerRecord, NewTopic,
    TopicPartition,
};

use crate::config::SinkConnectorConfig;
use crate::converter::{Converter, HeaderConverter, StringConverter};
use crate::data::{SchemaAndValue, Value};
use crate::error::{ConnectError, TaskError};
use crate::errors::{
    Attempt, ErrorHandlingMetrics, ProcessingContext, RetryWithToleranceOperator, Stage,
};
use crate::record::{ConnectHeader, SinkRecord};
use crate::task::{SinkTask, SinkTaskContext};
use crate::transforms::TransformStage;

/// What one iteration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollOutcome {
    /// Records were read and a batch of `records` (possibly 0, when every
    /// record failed or was filtered) was put.
    Delivered {
        /// The batch's size.
        records: usize,
    },
    /// Nothing was read and nothing is pending.
    Idle,
    /// A stage waits for a retry, or a batch for redelivery, until the
    /// clock reads `until_ms`.
    Waiting {
        /// When to poll again.
        until_ms: i64,
    },
}

/// The sink task's own metrics, by Kafka's names where Kafka has them
/// (`sink-task-metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinkTaskMetrics {
    /// `sink-record-read-total`: records read from Kafka.
    pub sink_record_read_total: u64,
    /// `sink-record-send-total`: records put to the task successfully.
    pub sink_record_send_total: u64,
    /// Records a transform dropped on purpose (`Filter`); Kafka counts
    /// them nowhere.
    pub records_filtered: u64,
    /// Batches redelivered after a retriable `put` error.
    pub redeliveries: u64,
}

/// Builds a [`WorkerSinkTask`]: converters (string, Kafka's defaults are
/// JSON, this crate's are [`StringConverter`]) and transforms.
#[derive(Debug)]
pub struct WorkerSinkTaskBuilder {
    config: SinkConnectorConfig,
    task: i32,
    key_converter: Box<dyn Converter>,
    value_converter: Box<dyn Converter>,
    header_converter: Box<dyn HeaderConverter>,
    transforms: Vec<TransformStage>,
}

impl WorkerSinkTaskBuilder {
    /// The task number (`__connect.errors.task.id`), 0 by default.
    #[must_use]
    pub fn task_id(mut self, task: i32) -> Self {
        self.task = task;
        self
    }

    /// The key converter.
    #[must_use]
    pub fn key_converter(mut self, converter: impl Converter + 'static) -> Self {
        self.key_converter = Box::new(converter);
        self
    }

    /// The value converter.
    #[must_use]
    pub fn value_converter(mut self, converter: impl Converter + 'static) -> Self {
        self.value_converter = Box::new(converter);
        self
    }

    /// The header converter.
    #[must_use]
    pub fn header_converter(mut self, converter: impl HeaderConverter + 'static) -> Self {
        self.header_converter = Box::new(converter);
        self
    }

    /// Appends a transform to the chain.
    #[must_use]
    pub fn transform(mut self, stage: TransformStage) -> Self {
        self.transforms.push(stage);
        self
    }

    /// Creates the clients from `clients`, creates the DLQ topic if it is
    /// missing (one partition, `errors.deadletterqueue.topic.replication.factor`
    /// replicas, as Kafka does), assigns the consumer every partition of
    /// `topics`, and starts `task`. Consumer configs can be overridden with
    /// `consumer.override.<name>` properties, as in Kafka.
    ///
    /// # Errors
    /// A topic that does not exist, a DLQ topic that cannot be created, a
    /// client refused, or the task's `start` failed.
    pub fn build<S: SinkTask>(
        self,
        task: S,
        clients: &dyn ClientSupplier,
    ) -> Result<WorkerSinkTask<S>, TaskError> {
        let name = self.config.name.clone();
        let id = self.task;
        let client_error = |operation: &'static str| {
            let name = name.clone();
            move |source| TaskError::Client {
                connector: name,
                task: id,
                operation,
                source: Box::new(source),
            }
        };
        let mut admin = clients
            .admin(&ClientConfig::new())
            .map_err(client_error("create the admin client"))?;
        let mut partitions = Vec::new();
        for topic in &self.config.topics {
            let count = admin
                .partition_count(topic)
                .map_err(client_error("describe the topics"))?
                .ok_or_else(|| TaskError::Client {
                    connector: name.clone(),
                    task: id,
                    operation: "assign the topics",
                    source: Box::new(ClientError::UnknownTopicOrPartition {
                        topic: topic.clone(),
                        partition: None,
                    }),
                })?;
            partitions.extend((0..count).map(|p| TopicPartition::new(topic.clone(), p)));
        }
        let dlq_producer = if self.config.dlq_topic_name.is_empty() {
            None
        } else {
            let topic = self.config.dlq_topic_name.clone();
            let dlq_error = |source| TaskError::DeadLetterQueue {
                connector: name.clone(),
                task: id,
                topic: topic.clone(),
                source: Box::new(source),
            };
            if admin.partition_count(&topic).map_err(dlq_error)?.is_none() {
                let new = NewTopic::new(topic.clone(), 1)
                    .replication_factor(self.config.dlq_topic_replication_factor);
                match admin.create_topic(&new) {
                    Ok(()) | Err(ClientError::TopicExists { .. }) => {}
                    Err(e) => return Err(dlq_error(e)),
                }
            }
            let producer_config = ClientConfig::new()
                .set("client.id", format!("connector-dlq-producer-{name}-{id}"))
                .set("acks", "all");
            Some(
                clients
                    .producer(&producer_config)
                    .map_err(client_error("create the DLQ producer"))?,
            )
        };
        let mut consumer_config = ClientConfig::new()
            .set("group.id", format!("connect-{name}"))
            .set("client.id", format!("connector-consumer-{name}-{id}"))
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "false");
        for (key, value) in &self.config.props {
            if let Some(consumer_key) = key.strip_prefix("consumer.override.") {
                consumer_config.insert(consumer_key, value.clone());
            }
        }
        let mut consumer = clients
            .consumer(&consumer_config)
            .map_err(client_error("create the consumer"))?;
        consumer
            .assign(&partitions)
            .map_err(client_error("assign the topics"))?;
        let mut last_committed = BTreeMap::new();
        for tp in &partitions {
            let position = consumer.position(tp).map_err(client_error("position"))?;
            last_committed.insert(tp.clone(), position);
        }
        let operator = RetryWithToleranceOperator::for_task(&self.config, id, dlq_producer);
        let clock = clients.clock();
        let mut task = task;
        task.start(&self.config.props)
            .map_err(|error| TaskError::Start {
                connector: name.clone(),
                task: id,
                error,
            })?;
        let next_commit = clock
            .now_ms()
            .saturating_add(self.config.offset_flush_interval_ms);
        Ok(WorkerSinkTask {
            current_offsets: last_committed.clone(),
            last_committed,
            config: self.config,
            id,
            task,
            consumer,
            clock,
            key_converter: self.key_converter,
            value_converter: self.value_converter,
            header_converter: self.header_converter,
            transforms: self.transforms,
            operator,
            pending: VecDeque::new(),
            in_flight: None,
            batch: Vec::new(),
            orig_offsets: BTreeMap::new(),
            redeliver_at: None,
            next_commit,
            failed: None,
            stopped: false,
            metrics: SinkTaskMetrics::default(),
        })
    }
}

#[derive(Debug)]
struct InFlight {
    context: ProcessingContext,
    step: usize,
    key: Option<SchemaAndValue>,
    value: Option<SchemaAndValue>,
    headers: Option<Vec<ConnectHeader>>,
    record: Option<SinkRecord>,
}

/// One sink task at work. See the [module docs](self).
#[derive(Debug)]
pub struct WorkerSinkTask<S> {
    config: SinkConnectorConfig,
    id: i32,
    task: S,
    consumer: Box<dyn Consumer>,
    clock: Arc<dyn Clock>,
    key_converter: Box<dyn Converter>,
    value_converter: Box<dyn Converter>,
    header_converter: Box<dyn HeaderConverter>,
    transforms: Vec<TransformStage>,
    operator: RetryWithToleranceOperator,
    pending: VecDeque<ConsumerRecord>,
    in_flight: Option<InFlight>,
    batch: Vec<SinkRecord>,
    orig_offsets: BTreeMap<TopicPartition, i64>,
    current_offsets: BTreeMap<TopicPartition, i64>,
    last_committed: BTreeMap<TopicPartition, i64>,
    redeliver_at: Option<i64>,
    next_commit: i64,
    failed: Option<String>,
    stopped: bool,
    metrics: SinkTaskMetrics,
}

impl WorkerSinkTask<()> {
    /// A builder for a task of `config`.
    pub fn builder(config: SinkConnectorConfig) -> WorkerSinkTaskBuilder {
        WorkerSinkTaskBuilder {
            config,
            task: 0,
            key_converter: Box::new(StringConverter),
            value_converter: Box::new(StringConverter),
            header_converter: Box::new(StringConverter),
            transforms: Vec::new(),
        }
    }
}

impl<S: SinkTask> WorkerSinkTask<S> {
    /// The sink task.
    pub fn task(&self) -> &S {
        &self.task
    }

    /// The sink task, mutably.
    pub fn task_mut(&mut self) -> &mut S {
        &mut self.task
    }

    /// The configuration.
    pub fn config(&self) -> &SinkConnectorConfig {
        &self.config
    }

    /// The error handling metrics (`task-error-metrics`).
    pub fn error_metrics(&self) -> &ErrorHandlingMetrics {
        self.operator.metrics()
    }

    /// The sink task metrics.
    pub fn sink_metrics(&self) -> &SinkTaskMetrics {
        &self.metrics
    }

    /// A metric by Kafka's name: the error metrics' names,
    /// `sink-record-read-total` and `sink-record-send-total`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        match name {
            "sink-record-read-total" => Some(self.metrics.sink_record_read_total as f64),
            "sink-record-send-total" => Some(self.metrics.sink_record_send_total as f64),
            _ => self.operator.metrics().metric(name),
        }
    }

    /// What the log reporter wrote (`errors.log.enable`).
    pub fn logged_errors(&self) -> &[String] {
        self.operator.logged()
    }

    /// The offsets committed last, per partition.
    pub fn committed_offsets(&self) -> &BTreeMap<TopicPartition, i64> {
        &self.last_committed
    }

    /// Why the task failed, if it has.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// One iteration of the worker loop. See the [module docs](self).
    ///
    /// # Errors
    /// The [`TaskError`] that failed the task (then every later call
    /// returns [`TaskError::Failed`]); records it reported went to the DLQ
    /// first.
    pub fn poll_once(&mut self) -> Result<PollOutcome, TaskError> {
        if let Some(reason) = &self.failed {
            return Err(TaskError::Failed {
                connector: self.config.name.clone(),
                task: self.id,
                reason: reason.clone(),
            });
        }
        let result = self.iteration();
        self.operator.flush();
        if let Err(error) = &result {
            self.failed = Some(error.to_string());
        }
        result
    }

    fn client_error(&self, operation: &'static str) -> impl FnOnce(ClientError) -> TaskError {
        let connector = self.config.name.clone();
        let task = self.id;
        move |source| TaskError::Client {
            connector,
            task,
            operation,
            source: Box::new(source),
        }
    }

    fn iteration(&mut self) -> Result<PollOutcome, TaskError> {
        let now = self.clock.now_ms();
        if now >= self.next_commit {
            self.commit_offsets(false)?;
            self.next_commit = now.saturating_add(self.config.offset_flush_interval_ms);
        }
        if let Some(at) = self.redeliver_at {
            if now < at {
                return Ok(PollOutcome::Waiting { until_ms: at });
            }
            self.metrics.redeliveries += 1;
            return self.deliver(now);
        }
        if self.pending.is_empty() && self.in_flight.is_none() {
            let polled = self.consumer.poll().map_err(self.client_error("poll"))?;
            self.metrics.sink_record_read_total += polled.records.len() as u64;
            if polled.records.is_empty() && self.batch.is_empty() {
                // Kafka's worker puts an empty batch on every poll.
                let mut context = SinkTaskContext::default();
                return match self.task.put(&[], &mut context) {
                    Err(error) if !error.is_retriable() => Err(self.unrecoverable(error)),
                    _ => Ok(PollOutcome::Idle),
                };
            }
            self.pending.extend(polled.records);
        }
        while self.in_flight.is_some() || !self.pending.is_empty() {
            if let Some(until_ms) = self.convert_next(now)? {
                return Ok(PollOutcome::Waiting { until_ms });
            }
        }
        self.deliver(now)
    }

    /// Runs the next record through the converters and transforms;
    /// `Some(t)` when a stage waits for a retry at `t`.
    fn convert_next(&mut self, now: i64) -> Result<Option<i64>, TaskError> {
        let mut flight = match self.in_flight.take() {
            Some(flight) => flight,
            None => match self.pending.pop_front() {
                Some(record) => InFlight {
                    context: ProcessingContext::new(record),
                    step: 0,
                    key: None,
                    value: None,
                    headers: None,
                    record: None,
                },
                None => return Ok(None),
            },
        };
        let original = Arc::clone(flight.context.original_arc());
        let topic: &str = &original.topic;
        let operator = &mut self.operator;
        loop {
            let step = flight.step;
            let attempt = match step {
                0 => {
                    let converter = &self.key_converter;
                    operator
                        .execute(
                            &mut flight.context,
                            Stage::KeyConverter,
                            &converter.class_name(),
                            now,
                            || converter.to_connect_data(topic, original.key.as_deref()),
                        )?
                        .map(|key| flight.key = key)
                }
                1 => {
                    let converter = &self.value_converter;
                    operator
                        .execute(
                            &mut flight.context,
                            Stage::ValueConverter,
                            &converter.class_name(),
                            now,
                            || converter.to_connect_data(topic, original.value.as_deref()),
                        )?
                        .map(|value| flight.value = value)
                }
                2 => {
                    let converter = &self.header_converter;
                    operator
                        .execute(
                            &mut flight.context,
                            Stage::HeaderConverter,
                            &converter.class_name(),
                            now,
                            || {
                                original
                                    .headers
                                    .iter()
                                    .map(|h| {
                                        let converted = converter.to_connect_header(
                                            topic,
                                            &h.key,
                                            h.value.as_deref(),
                                        )?;
                                        Ok(ConnectHeader {
                                            key: h.key.clone(),
                                            schema: converted.schema,
                                            value: converted.value,
                                        })
                                    })
                                    .collect::<Result<Vec<_>, ConnectError>>()
                            },
                        )?
                        .map(|headers| flight.headers = headers)
                }
                3 => {
                    if !flight.context.failed() {
                        let key = flight.key.take().unwrap_or_default();
                        let value = flight.value.take().unwrap_or_default();
                        let mut record = SinkRecord::new(
                            original.topic.to_string(),
                            original.partition,
                            original.offset,
                            (original.timestamp >= 0).then_some(original.timestamp),
                        )
                        .with_key(key.schema, key.value)
                        .with_value(value.schema, value.value);
                        record.timestamp_type = original.timestamp_type;
                        record.headers = flight.headers.take().unwrap_or_default();
                        flight.record = Some(record);
                    }
                    Attempt::Done(Some(()))
                }
                n => match (self.transforms.get(n - 4), flight.record.clone()) {
                    (Some(stage), Some(record)) => operator
                        .execute(
                            &mut flight.context,
                            Stage::Transformation,
                            &stage.class_name(),
                            now,
                            || stage.apply(record),
                        )?
                        .map(|out| flight.record = out.flatten()),
                    _ => break,
                },
            };
            if let Attempt::RetryAt(at) = attempt {
                self.in_flight = Some(flight);
                return Ok(Some(at));
            }
            flight.step += 1;
        }
        let tp = TopicPartition::new(original.topic.to_string(), original.partition);
        self.orig_offsets.insert(tp, original.offset + 1);
        match flight.record {
            Some(mut record) => {
                record.set_original(original);
                self.batch.push(record);
            }
            None if !flight.context.failed() => self.metrics.records_filtered += 1,
            None => {}
        }
        Ok(None)
    }

    fn unrecoverable(&self, error: ConnectError) -> TaskError {
        let first = self.batch.first();
        TaskError::Unrecoverable {
            connector: self.config.name.clone(),
            task: self.id,
            records: self.batch.len(),
            topic: first.map(|r| r.topic.clone()).unwrap_or_default(),
            partition: first.map_or(-1, |r| r.kafka_partition),
            offset: first.map_or(-1, |r| r.kafka_offset),
            error,
        }
    }

    fn report_errant(
        &mut self,
        reported: Vec<(SinkRecord, ConnectError)>,
        now: i64,
    ) -> Result<(), TaskError> {
        let class_name = self.task.class_name();
        for (record, error) in reported {
            let original = match record.original() {
                Some(original) => original.clone(),
                None => ConsumerRecord {
                    topic: record.topic.as_str().into(),
                    partition: record.kafka_partition,
                    offset: record.kafka_offset,
                    timestamp: record.timestamp.unwrap_or(-1),
                    timestamp_type: record.timestamp_type,
                    key: raw(&record.key),
                    value: raw(&record.value),
                    headers: Vec::new(),
                    leader_epoch: -1,
                },
            };
            let mut context = ProcessingContext::new(original);
            self.operator
                .execute_failed(&mut context, Stage::TaskPut, &class_name, error, now)?;
        }
        Ok(())
    }

    fn deliver(&mut self, now: i64) -> Result<PollOutcome, TaskError> {
        let mut context = SinkTaskContext::default();
        let result = self.task.put(&self.batch, &mut context);
        let (reported, timeout) = context.take();
        self.report_errant(reported, now)?;
        match result {
            Ok(()) => {
                let records = self.batch.len();
                self.metrics.sink_record_send_total += records as u64;
                self.current_offsets.append(&mut self.orig_offsets);
                self.batch.clear();
                self.redeliver_at = None;
                Ok(PollOutcome::Delivered { records })
            }
            Err(error) if error.is_retriable() => {
                let at = now.saturating_add(timeout.unwrap_or(0).max(0));
                self.redeliver_at = Some(at);
                Ok(PollOutcome::Waiting { until_ms: at })
            }
            Err(error) => Err(self.unrecoverable(error)),
        }
    }

    /// Commits the offsets of what was put, as Kafka's `commitOffsets`:
    /// the task's `pre_commit` decides what is safe; a `pre_commit` error
    /// rewinds the consumer to the last commit (unless closing).
    ///
    /// # Errors
    /// The consumer's commit failed.
    pub fn commit_offsets(&mut self, closing: bool) -> Result<(), TaskError> {
        self.operator.flush();
        if self.current_offsets == self.last_committed {
            return Ok(());
        }
        let provided = match self.task.pre_commit(&self.current_offsets) {
            Ok(provided) => provided,
            Err(_) if closing => return Ok(()),
            Err(_) => {
                for (tp, offset) in &self.last_committed {
                    self.consumer
                        .seek(tp, *offset)
                        .map_err(self.client_error("seek"))?;
                }
                self.current_offsets.clone_from(&self.last_committed);
                self.pending.clear();
                self.in_flight = None;
                self.batch.clear();
                self.orig_offsets.clear();
                self.redeliver_at = None;
                return Ok(());
            }
        };
        let mut committable = self.last_committed.clone();
        for (tp, offset) in provided {
            if let Some(current) = self.current_offsets.get(&tp)
                && offset <= *current
            {
                committable.insert(tp, offset);
            }
        }
        if committable == self.last_committed {
            return Ok(());
        }
        self.consumer
            .commit(&committable)
            .map_err(self.client_error("commit"))?;
        self.last_committed = committable;
        Ok(())
    }

    /// Stops the task as Kafka's worker does: a record waiting for a retry
    /// is given up (skipped and reported), offsets of what was put are
    /// committed (also after a failure), the sink task stops and the
    /// consumer leaves.
    ///
    /// # Errors
    /// The final commit failed.
    pub fn stop(&mut self) -> Result<(), TaskError> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let now = self.clock.now_ms();
        if let Some(mut flight) = self.in_flight.take() {
            self.operator.stop_retrying(&mut flight.context, now);
        }
        // Kafka closes the partitions of a failed task too: what was put
        // before the failure is committed.
        let result = self.commit_offsets(true);
        self.operator.flush();
        self.task.stop();
        self.consumer.close(true);
        result
    }
}

fn raw(value: &Value) -> Option<bytes::Bytes> {
    match value {
        Value::String(s) => Some(bytes::Bytes::copy_from_slice(s.as_bytes())),
        Value::Bytes(b) => Some(bytes::Bytes::copy_from_slice(b)),
        _ => None,
    }
}

impl<T> Attempt<T> {
    fn map(self, f: impl FnOnce(Option<T>)) -> Attempt<()> {
        match self {
            Attempt::Done(value) => {
                f(value);
                Attempt::Done(Some(()))
            }
            Attempt::RetryAt(at) => Attempt::RetryAt(at),
        }
    }
}
