//! The client API's traits ([`streams_clients`]) over the simulated
//! cluster's clients, so that a Streams runtime that knows only the traits
//! runs on the simulated cluster: [`SimulatedClients`] is the
//! [`ClientSupplier`] (Kafka Streams' `KafkaClientSupplier`), which reads
//! Kafka's configuration names; the native [`Consumer`] and [`Admin`]
//! implement the traits themselves; [`ApiProducer`] is the producer.
//! Broker errors become [`ClientError`]s by meaning (an unknown topic, a
//! topic that exists, a commit the group refused, a timeout); the others
//! travel as the `source` of [`ClientError::Implementation`].
//!
//! ```
//! use std::sync::Arc;
//! use streams_broker::{Cluster, RangeAssignor, SimulatedClients};
//! use streams_clients::{ClientConfig, ClientSupplier, NewTopic, ProducerRecord, Rebalance};
//!
//! let clients = SimulatedClients::new(Cluster::new());
//! clients.admin(&ClientConfig::new())?.create_topic(&NewTopic::new("words", 2))?;
//! let mut producer = clients.producer(&ClientConfig::new())?;
//! producer.send(ProducerRecord::new("words", "hello", "1"))?;
//! assert_eq!(producer.flush()?.len(), 1);
//!
//! let config = ClientConfig::new().set("group.id", "count").set("auto.offset.reset", "earliest");
//! let mut consumer = clients.consumer(&config)?;
//! consumer.subscribe(&["words".to_owned()], Arc::new(RangeAssignor))?;
//! let polled = consumer.poll()?; // joins, leads, assigns itself both partitions, fetches
//! assert!(matches!(polled.rebalance, Some(Rebalance::Assigned { generation: 1, .. })));
//! assert_eq!(polled.records.len(), 1);
//! assert!(clients.consumer(&config.set("isolation.level", "serializable")).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use streams_clients::{
    ClientConfig, ClientError, ClientSupplier, Clock, GroupMetadata, PartitionAssignor, Polled,
    ProducerRecord, RecordMetadata, TopicPartition,
};

use crate::clients::{
    Acks, Admin, AutoOffsetReset, Consumer, ConsumerConfig, IsolationLevel, NewTopic, PendingBatch,
    Producer, ProducerConfig,
};
use crate::cluster::Cluster;
use crate::error::BrokerError;

/// A broker error as the client API's error, by meaning; `client` names
/// the client, `operation` the call.
pub fn client_error(client: &str, operation: &'static str, err: BrokerError) -> ClientError {
    match err {
        BrokerError::UnknownTopic { topic } => ClientError::UnknownTopicOrPartition {
            topic,
            partition: None,
        },
        BrokerError::UnknownPartition {
            topic, partition, ..
        } => ClientError::UnknownTopicOrPartition {
            topic,
            partition: Some(partition),
        },
        BrokerError::TopicAlreadyExists { topic } => ClientError::TopicExists { topic },
        BrokerError::IllegalGeneration { ref group, .. }
        | BrokerError::UnknownMemberId { ref group, .. }
        | BrokerError::RebalanceInProgress { ref group } => ClientError::CommitFailed {
            group: group.clone(),
            detail: err.to_string(),
        },
        BrokerError::RequestTimedOut {
            topic,
            partition,
            timeout_ms,
        } => ClientError::Timeout {
            operation: format!("{operation} to {topic}-{partition}"),
            timeout_ms,
        },
        BrokerError::UnstableOffsetCommit {
            group,
            topic,
            partition,
        } => ClientError::UnstableOffsetCommit {
            group,
            topic,
            partition,
        },
        BrokerError::GroupIdRequired { .. } => ClientError::InvalidState {
            client: client.to_owned(),
            operation,
            state: "without a group.id".to_owned(),
            hint: "set group.id in the consumer's config",
        },
        BrokerError::NotAssigned { topic, partition } => ClientError::InvalidState {
            client: client.to_owned(),
            operation,
            state: format!("without an assignment of {topic}-{partition}"),
            hint: "assign or subscribe to the partition first",
        },
        BrokerError::ProducerFenced {
            transactional_id,
            producer_id,
            epoch,
            current_epoch,
        } => ClientError::ProducerFenced {
            transactional_id,
            detail: format!(
                "producer id {producer_id} at epoch {epoch}, fenced by epoch {current_epoch}"
            ),
        },
        BrokerError::InvalidTxnState {
            operation,
            state,
            hint,
            ..
        } => ClientError::InvalidState {
            client: client.to_owned(),
            operation,
            state: state.to_owned(),
            hint,
        },
        BrokerError::TransactionalIdRequired { operation } => ClientError::InvalidState {
            client: client.to_owned(),
            operation,
            state: "non-transactional (made without a transactional.id)".to_owned(),
            hint: "create the producer with a transactional.id to use transactions",
        },
        BrokerError::ConsumerClosed { .. } => ClientError::InvalidState {
            client: client.to_owned(),
            operation,
            state: "closed".to_owned(),
            hint: "create a new consumer",
        },
        other => ClientError::Implementation {
            client: client.to_owned(),
            source: Box::new(other),
        },
    }
}

fn invalid(name: &str, value: &str, reason: &str) -> ClientError {
    ClientError::InvalidConfig {
        name: name.to_owned(),
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A number of at least `min`, or `default` when unset.
fn at_least(config: &ClientConfig, name: &str, default: i64, min: i64) -> Result<i64, ClientError> {
    let value = config.get_i64(name, default)?;
    if value < min {
        return Err(invalid(
            name,
            config.get(name).unwrap_or_default(),
            &format!("expected at least {min}"),
        ));
    }
    Ok(value)
}

/// The native consumer's settings from Kafka's names: `client.id`,
/// `group.id`, `auto.offset.reset`, `max.poll.records`,
/// `enable.auto.commit`, `auto.commit.interval.ms`, `session.timeout.ms`,
/// `max.poll.interval.ms`, `fetch.min.bytes`, `fetch.max.wait.ms`,
/// `isolation.level`; other names are ignored, as Kafka's clients only warn
/// about them.
///
/// # Errors
/// [`ClientError::InvalidConfig`] for a value Kafka would refuse.
pub fn consumer_config(config: &ClientConfig) -> Result<ConsumerConfig, ClientError> {
    let mut native = ConsumerConfig::new();
    native.client_id = config.get("client.id").map(str::to_owned);
    native.group_id = config.get("group.id").map(str::to_owned);
    if let Some(reset) = config.get("auto.offset.reset") {
        native.auto_offset_reset = match reset.trim() {
            "earliest" => AutoOffsetReset::Earliest,
            "latest" => AutoOffsetReset::Latest,
            "none" => AutoOffsetReset::None,
            _ => {
                return Err(invalid(
                    "auto.offset.reset",
                    reset,
                    "expected earliest, latest or none",
                ));
            }
        };
    }
    let max_poll_records = at_least(config, "max.poll.records", 500, 1)?;
    native.max_poll_records = usize::try_from(max_poll_records).unwrap_or(usize::MAX);
    native.enable_auto_commit = config.get_bool("enable.auto.commit", true)?;
    native.auto_commit_interval_ms = at_least(config, "auto.commit.interval.ms", 5_000, 0)?;
    native.session_timeout_ms = at_least(config, "session.timeout.ms", 45_000, 1)?;
    native.max_poll_interval_ms = at_least(config, "max.poll.interval.ms", 300_000, 1)?;
    native.fetch_min_bytes = at_least(config, "fetch.min.bytes", 1, 0)?.max(1);
    native.fetch_max_wait_ms = at_least(config, "fetch.max.wait.ms", 500, 0)?;
    if let Some(level) = config.get("isolation.level") {
        native.isolation_level = match level.trim() {
            "read_uncommitted" => IsolationLevel::ReadUncommitted,
            "read_committed" => IsolationLevel::ReadCommitted,
            _ => {
                return Err(invalid(
                    "isolation.level",
                    level,
                    "expected read_uncommitted or read_committed",
                ));
            }
        };
    }
    Ok(native)
}

/// The native producer's settings from Kafka's names: `acks`,
/// `request.timeout.ms`, `batch.size`, `transactional.id`,
/// `transaction.timeout.ms`; other names are ignored.
///
/// # Errors
/// [`ClientError::InvalidConfig`] for a value Kafka would refuse.
pub fn producer_config(config: &ClientConfig) -> Result<ProducerConfig, ClientError> {
    let mut native = ProducerConfig::new();
    if let Some(acks) = config.get("acks") {
        native.acks = match acks.trim() {
            "0" => Acks::Zero,
            "1" => Acks::One,
            "all" | "-1" => Acks::All,
            _ => return Err(invalid("acks", acks, "expected all, -1, 0 or 1")),
        };
    }
    native.request_timeout_ms = at_least(config, "request.timeout.ms", 30_000, 1)?;
    let batch_size = at_least(config, "batch.size", 16_384, 0)?;
    native.batch_size = usize::try_from(batch_size).unwrap_or(usize::MAX);
    native.transactional_id = config.get("transactional.id").map(str::to_owned);
    native.transaction_timeout_ms = at_least(config, "transaction.timeout.ms", 60_000, 1)?;
    Ok(native)
}

/// A producer for `config` on `cluster`: an [`ApiProducer`] over the
/// native [`Producer`].
///
/// # Errors
/// [`ClientError::InvalidConfig`] for a value Kafka would refuse.
pub fn producer_for(
    cluster: &Cluster,
    config: &ClientConfig,
) -> Result<Box<dyn streams_clients::Producer>, ClientError> {
    let native = producer_config(config)?;
    let client = config.get("client.id").unwrap_or("producer").to_owned();
    Ok(Box::new(ApiProducer::new(
        cluster.producer_with(native),
        client,
    )))
}

/// The client API's producer over the native [`Producer`]: `send` appends
/// at once ([`Producer::send_async`]) and `flush` waits for each pending
/// send as a blocking `send().get()` would (replication first, the clock
/// only while followers lag). With a `transactional.id` the transactional
/// calls are the native producer's (`commit_transaction` flushes first, as
/// Kafka's does); without one they fail with [`ClientError::InvalidState`].
#[derive(Debug)]
pub struct ApiProducer {
    producer: Producer,
    client: String,
    pending: Vec<PendingBatch>,
}

impl ApiProducer {
    /// A producer over `producer`, named `client` in its errors.
    pub fn new(producer: Producer, client: impl Into<String>) -> Self {
        Self {
            producer,
            client: client.into(),
            pending: Vec::new(),
        }
    }

    /// How many sends wait for their `acks`.
    pub fn pending(&self) -> usize {
        self.pending.iter().map(PendingBatch::len).sum()
    }
}

impl streams_clients::Producer for ApiProducer {
    fn send(&mut self, record: ProducerRecord) -> Result<(), ClientError> {
        let pending = self
            .producer
            .send_async(record)
            .map_err(|e| client_error(&self.client, "send", e))?;
        self.pending.push(pending.into());
        Ok(())
    }

    fn send_all(&mut self, records: Vec<ProducerRecord>) -> Result<(), ClientError> {
        self.producer
            .send_all_async(records, &mut self.pending)
            .map_err(|e| client_error(&self.client, "send", e))
    }

    fn flush(&mut self) -> Result<Vec<RecordMetadata>, ClientError> {
        let mut sent = Vec::with_capacity(self.pending());
        let mut first_error = None;
        for pending in self.pending.drain(..) {
            match pending.wait() {
                Ok(metadata) => sent.extend(metadata),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(client_error(&self.client, "flush", e)),
            None => Ok(sent),
        }
    }

    fn init_transactions(&mut self) -> Result<(), ClientError> {
        self.producer
            .init_transactions()
            .map_err(|e| client_error(&self.client, "init_transactions", e))
    }

    fn begin_transaction(&mut self) -> Result<(), ClientError> {
        self.producer
            .begin_transaction()
            .map_err(|e| client_error(&self.client, "begin_transaction", e))
    }

    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        group: &GroupMetadata,
    ) -> Result<(), ClientError> {
        self.producer
            .send_offsets_to_transaction(offsets.iter().map(|(tp, o)| (tp.clone(), *o)), group)
            .map_err(|e| client_error(&self.client, "send_offsets_to_transaction", e))
    }

    fn commit_transaction(&mut self) -> Result<(), ClientError> {
        // Kafka's commitTransaction flushes first; a failed send fails it.
        streams_clients::Producer::flush(self)?;
        self.producer
            .commit_transaction()
            .map_err(|e| client_error(&self.client, "commit_transaction", e))
    }

    fn abort_transaction(&mut self) -> Result<(), ClientError> {
        // The sends in flight belong to the aborted transaction: their
        // outcome no longer matters.
        for pending in self.pending.drain(..) {
            let _ = pending.wait();
        }
        self.producer
            .abort_transaction()
            .map_err(|e| client_error(&self.client, "abort_transaction", e))
    }
}

impl Consumer {
    fn client_name(&self) -> String {
        self.config()
            .client_id
            .clone()
            .unwrap_or_else(|| "consumer".to_owned())
    }
}

/// The native consumer as the client API's consumer: `poll` is
/// [`Consumer::poll_with_rebalance`], `close` is [`Consumer::close_with`].
impl streams_clients::Consumer for Consumer {
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<(), ClientError> {
        {
            let state = self.cluster().state();
            for tp in partitions {
                state
                    .partition(tp)
                    .map_err(|e| client_error(&self.client_name(), "assign", e))?;
            }
        }
        Consumer::assign(self, partitions.iter().cloned());
        Ok(())
    }

    fn subscribe(
        &mut self,
        topics: &[String],
        assignor: Arc<dyn PartitionAssignor>,
    ) -> Result<(), ClientError> {
        self.subscribe_with(topics.iter().cloned(), assignor)
            .map_err(|e| client_error(&self.client_name(), "subscribe", e))
    }

    fn poll(&mut self) -> Result<Polled, ClientError> {
        self.poll_with_rebalance()
            .map_err(|e| client_error(&self.client_name(), "poll", e))
    }

    fn assignment(&self) -> Vec<TopicPartition> {
        Consumer::assignment(self).to_vec()
    }

    fn position(&mut self, partition: &TopicPartition) -> Result<i64, ClientError> {
        Consumer::position(self, partition)
            .map_err(|e| client_error(&self.client_name(), "position", e))
    }

    fn seek(&mut self, partition: &TopicPartition, offset: i64) -> Result<(), ClientError> {
        Consumer::seek(self, partition, offset)
            .map_err(|e| client_error(&self.client_name(), "seek", e))
    }

    fn pause(&mut self, partitions: &[TopicPartition], paused: bool) {
        Consumer::pause(self, partitions, paused);
    }

    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<(), ClientError> {
        self.commit_offsets(offsets.iter().map(|(tp, o)| (tp.clone(), *o)))
            .map_err(|e| client_error(&self.client_name(), "commit", e))
    }

    fn committed(&self, partition: &TopicPartition) -> Result<Option<i64>, ClientError> {
        Consumer::committed(self, partition)
            .map_err(|e| client_error(&self.client_name(), "committed", e))
    }

    fn end_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>, ClientError> {
        Consumer::end_offsets(self, partitions)
            .map_err(|e| client_error(&self.client_name(), "end_offsets", e))
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        Consumer::group_metadata(self)
    }

    fn close(&mut self, leave_group: bool) {
        self.close_with(leave_group);
    }
}

/// The native admin client as the client API's.
impl streams_clients::Admin for Admin {
    fn list_topics(&mut self) -> Result<Vec<String>, ClientError> {
        Ok(Admin::list_topics(self))
    }

    fn create_topic(&mut self, topic: &streams_clients::NewTopic) -> Result<(), ClientError> {
        let mut native = NewTopic::new(topic.name.clone(), topic.partitions);
        // -1: the broker's default.replication.factor, which is 1.
        if topic.replication_factor != -1 {
            native = native.replication_factor(topic.replication_factor);
        }
        for (name, value) in &topic.configs {
            native = native.config(name.clone(), value.clone());
        }
        Admin::create_topic(self, native).map_err(|e| client_error("admin", "create_topic", e))
    }

    fn partition_count(&mut self, topic: &str) -> Result<Option<i32>, ClientError> {
        match Admin::partition_count(self, topic) {
            Ok(n) => Ok(Some(n)),
            Err(BrokerError::UnknownTopic { .. }) => Ok(None),
            Err(e) => Err(client_error("admin", "partition_count", e)),
        }
    }

    fn delete_records(
        &mut self,
        before: &BTreeMap<TopicPartition, i64>,
    ) -> Result<(), ClientError> {
        let results = Admin::delete_records(self, before.iter().map(|(tp, o)| (tp.clone(), *o)));
        for result in results.into_values() {
            result.map_err(|e| client_error("admin", "delete_records", e))?;
        }
        Ok(())
    }
}

/// The cluster's mock clock.
impl Clock for Cluster {
    fn now_ms(&self) -> i64 {
        Cluster::now_ms(self)
    }
}

/// The simulated cluster's clients for a Streams runtime (Kafka Streams'
/// `KafkaClientSupplier`), configured by Kafka's names, on the cluster's
/// mock clock. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct SimulatedClients {
    cluster: Cluster,
}

impl SimulatedClients {
    /// The clients of `cluster`.
    pub fn new(cluster: Cluster) -> Self {
        Self { cluster }
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
}

impl ClientSupplier for SimulatedClients {
    fn producer(
        &self,
        config: &ClientConfig,
    ) -> Result<Box<dyn streams_clients::Producer>, ClientError> {
        producer_for(&self.cluster, config)
    }

    fn consumer(
        &self,
        config: &ClientConfig,
    ) -> Result<Box<dyn streams_clients::Consumer>, ClientError> {
        Ok(Box::new(self.cluster.consumer(consumer_config(config)?)))
    }

    fn admin(
        &self,
        _config: &ClientConfig,
    ) -> Result<Box<dyn streams_clients::Admin>, ClientError> {
        Ok(Box::new(self.cluster.admin()))
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(self.cluster.clone())
    }
}
