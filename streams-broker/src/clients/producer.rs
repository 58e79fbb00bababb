//! The producer: sends records to a topic's partitions, as Kafka's
//! `KafkaProducer` with `acks=1` does, but synchronously: `send` returns
//! once the record is in the log, with its partition and offset.
//!
//! The partition is the record's own, or Kafka's default partitioner's
//! choice: murmur2 of the key bytes for keyed records (the same partition
//! Kafka's producer picks), sticky partitioning for records without a key.
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, ProducerRecord};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("words", 3))?;
//! let producer = cluster.producer();
//! let first = producer.send(ProducerRecord::new("words", "hello", "1"))?;
//! let again = producer.send(ProducerRecord::new("words", "hello", "2"))?;
//! assert_eq!(first.partition, again.partition); // the key decides
//! assert_eq!((first.offset, again.offset), (0, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;

use std::sync::Arc;

use crate::cluster::{Cluster, State};
use crate::error::{BrokerError, Result};
use crate::partitioner::{DefaultPartitioner, partition_for_key};
use crate::purgatory::Delayed;
use crate::record::{Record, RecordBatchBuilder, record_size_in_bytes};
use crate::replication::delayed::DelayedProduce;
use crate::topic_partition::TopicPartition;

use super::transactional::{TransactionManager, transactional_builder};

pub use streams_clients::{ProducerRecord, RecordMetadata};

/// `acks`: how many replicas must have a record before a send succeeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acks {
    /// `acks=0`: no answer awaited; the offset is unknown (-1).
    Zero,
    /// `acks=1`: the leader has it.
    One,
    /// `acks=all` (Kafka's default): every in-sync replica has it, with at
    /// least `min.insync.replicas` in sync.
    #[default]
    All,
}

/// Producer settings, by Kafka's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerConfig {
    /// `batch.size` (default 16384): how many bytes the sticky partitioner
    /// sends to one partition before it moves on.
    pub batch_size: usize,
    /// `acks` (default all).
    pub acks: Acks,
    /// `request.timeout.ms` (default 30000): how long an `acks=all` send
    /// waits for the in-sync replicas, on the cluster's clock.
    pub request_timeout_ms: i64,
    /// `transactional.id` (default none): with one, the producer is
    /// transactional (and idempotent): see [`Producer::init_transactions`].
    pub transactional_id: Option<String>,
    /// `transaction.timeout.ms` (default 60000): how long the coordinator
    /// lets a transaction stay open before it aborts it.
    pub transaction_timeout_ms: i64,
}

impl Default for ProducerConfig {
    fn default() -> Self {
        Self {
            batch_size: 16_384,
            acks: Acks::All,
            request_timeout_ms: 30_000,
            transactional_id: None,
            transaction_timeout_ms: 60_000,
        }
    }
}

impl ProducerConfig {
    /// Kafka's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// `acks`.
    #[must_use]
    pub fn acks(mut self, acks: Acks) -> Self {
        self.acks = acks;
        self
    }

    /// `request.timeout.ms`.
    #[must_use]
    pub fn request_timeout_ms(mut self, ms: i64) -> Self {
        self.request_timeout_ms = ms.max(1);
        self
    }

    /// `transactional.id`: makes the producer transactional.
    #[must_use]
    pub fn transactional_id(mut self, id: impl Into<String>) -> Self {
        self.transactional_id = Some(id.into());
        self
    }

    /// `transaction.timeout.ms` (checked against the broker's
    /// `transaction.max.timeout.ms` by `init_transactions`).
    #[must_use]
    pub fn transaction_timeout_ms(mut self, ms: i64) -> Self {
        self.transaction_timeout_ms = ms;
        self
    }
}

/// A producer on the simulated cluster: synchronous (a send returns when
/// its `acks` are met, moving the cluster's clock while an `acks=all` send
/// waits for followers). Without a `transactional.id` it is not idempotent
/// (batches carry no producer id); with one, its batches carry its producer
/// id, epoch and sequences and belong to its transactions.
#[derive(Debug)]
pub struct Producer {
    pub(super) cluster: Cluster,
    pub(super) config: ProducerConfig,
    partitioners: Mutex<HashMap<String, DefaultPartitioner>>,
    pub(super) transaction: Option<Mutex<TransactionManager>>,
}

impl Producer {
    pub(crate) fn new(cluster: Cluster, config: ProducerConfig) -> Self {
        let transaction = config
            .transactional_id
            .clone()
            .map(|id| Mutex::new(TransactionManager::new(id)));
        Self {
            cluster,
            config,
            partitioners: Mutex::new(HashMap::new()),
            transaction,
        }
    }

    /// The record's partition of the topic's `partitions`.
    fn choose_partition(
        &self,
        record: &ProducerRecord,
        size: usize,
        partitions: usize,
    ) -> Result<i32> {
        let partitions = i32::try_from(partitions).unwrap_or(i32::MAX);
        if let Some(p) = record.partition {
            return Ok(p);
        }
        let mut partitioners = self
            .partitioners
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = record.key.as_deref();
        // One lookup by the topic's name; its name is copied only the first time.
        let chosen = match partitioners.get_mut(&record.topic) {
            Some(partitioner) => partitioner.partition(key, size, partitions),
            None => partitioners
                .entry(record.topic.clone())
                .or_insert_with(|| DefaultPartitioner::new(self.config.batch_size))
                .partition(key, size, partitions),
        };
        chosen.map_err(|_| BrokerError::UnknownTopic {
            topic: record.topic.clone(),
        })
    }

    /// Sends one record as one batch and returns where it landed, once its
    /// `acks` are met: for `acks=all`, replication runs at once and then the
    /// cluster's clock moves a fetch interval at a time until every in-sync
    /// replica has it (Kafka's `DelayedProduce`), as a blocking
    /// `send().get()` waits in real time.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`],
    /// [`BrokerError::RecordTooLarge`], [`BrokerError::LeaderNotAvailable`]
    /// or [`BrokerError::NotEnoughReplicas`], with nothing written; after
    /// the append [`BrokerError::NotEnoughReplicasAfterAppend`],
    /// [`BrokerError::NotLeaderOrFollower`] or
    /// [`BrokerError::RequestTimedOut`].
    pub fn send(&self, record: ProducerRecord) -> Result<RecordMetadata> {
        self.send_async(record)?.wait()
    }

    /// Appends one record to its partition's leader and returns the send in
    /// flight, without waiting for its `acks`: a test can make faults
    /// happen and move the clock before it asks how the send ended.
    ///
    /// # Errors
    /// As [`Producer::send`], for what fails before the append.
    pub fn send_async(&self, record: ProducerRecord) -> Result<PendingSend> {
        // One hold of the cluster's lock for the clock, the partition count
        // and the append (the partitioners' lock is only ever taken inside it).
        let mut state = self.cluster.state();
        let timestamp = record.timestamp.unwrap_or(state.now_ms);
        let partitions = state.topic(&record.topic)?.partitions.len();
        let size = record_size_in_bytes(
            0,
            0,
            record.key.as_ref().map(Bytes::len),
            record.value.as_ref().map(Bytes::len),
            &record.headers,
        );
        let partition = self.choose_partition(&record, size, partitions)?;
        let ProducerRecord {
            topic,
            key,
            value,
            headers,
            ..
        } = record;
        let tp = TopicPartition::new(topic, partition);
        let txn = self.before_send(&mut state, &tp)?;
        let mut builder = transactional_builder(RecordBatchBuilder::with_capacity(0, 1), txn);
        builder.append_owned(Record {
            key,
            value,
            headers,
            timestamp,
        });
        let batch = builder.build().map_err(|_| BrokerError::UnknownTopic {
            topic: tp.topic.clone(),
        })?;
        self.check_isr_before(&state, &tp)?;
        let info = self.after_send(&tp, txn, state.append(&tp, batch))?;
        let metadata = RecordMetadata {
            topic: tp.topic.clone(),
            partition,
            offset: if self.config.acks == Acks::Zero {
                -1
            } else {
                info.first_offset
            },
            timestamp: info.log_append_time.unwrap_or(timestamp),
        };
        let operation = self.delay(&mut state, &tp, info.last_offset);
        drop(state);
        Ok(PendingSend {
            cluster: self.cluster.clone(),
            metadata,
            operation,
            replicated: false,
        })
    }

    /// Sends `records`, those that go to one partition as one batch in
    /// the order sent (what Kafka's producer gathers for a partition
    /// before it sends), pushing a pending send per batch's record to
    /// `pending`: the partitions, offsets within each partition and
    /// timestamps of [`send_async`](Self::send_async) one by one, in
    /// fewer batches. `pending` lists the records partition by partition,
    /// as Kafka's producer completes them batch by batch.
    ///
    /// # Errors
    /// As [`send_async`](Self::send_async) for the first record or batch
    /// that fails: an unknown topic or partition sends nothing; a batch
    /// that fails leaves the batches before it sent (and in `pending`).
    pub fn send_all_async(
        &self,
        records: Vec<ProducerRecord>,
        pending: &mut Vec<PendingBatch>,
    ) -> Result<()> {
        let mut state = self.cluster.state();
        // Each partition's records in the order sent, the partitions in
        // the order first sent to (Kafka's accumulator keeps a batch per
        // partition; the order within a partition is the order sent).
        // A run is cut at `batch.size` bytes, as the accumulator starts a
        // new batch there (a record larger than that is a batch alone).
        let mut runs: Vec<(TopicPartition, Vec<Record>, usize)> = Vec::new();
        let mut known: Option<(String, usize)> = None;
        for record in records {
            let timestamp = record.timestamp.unwrap_or(state.now_ms);
            let partitions = match &known {
                Some((topic, n)) if *topic == record.topic => *n,
                _ => {
                    let n = state.topic(&record.topic)?.partitions.len();
                    known = Some((record.topic.clone(), n));
                    n
                }
            };
            let count = i32::try_from(partitions).unwrap_or(i32::MAX);
            let size = record_size_in_bytes(
                0,
                0,
                record.key.as_ref().map(Bytes::len),
                record.value.as_ref().map(Bytes::len),
                &record.headers,
            );
            // A keyed record's partition needs no partitioner state.
            let partition = match (record.partition, record.key.as_deref()) {
                (Some(p), _) if (0..count).contains(&p) => p,
                (Some(p), _) => {
                    return Err(BrokerError::UnknownPartition {
                        topic: record.topic,
                        partition: p,
                        partitions: count,
                    });
                }
                (None, Some(key)) => {
                    partition_for_key(key, count).map_err(|_| BrokerError::UnknownTopic {
                        topic: record.topic.clone(),
                    })?
                }
                (None, None) => self.choose_partition(&record, size, partitions)?,
            };
            let entry = Record {
                key: record.key,
                value: record.value,
                headers: record.headers,
                timestamp,
            };
            let open = runs
                .iter_mut()
                .rev()
                .find(|(tp, _, _)| tp.partition == partition && tp.topic == record.topic);
            match open {
                Some((_, run, bytes)) if *bytes + size <= self.config.batch_size => {
                    run.push(entry);
                    *bytes += size;
                }
                _ => runs.push((
                    TopicPartition::new(record.topic, partition),
                    vec![entry],
                    size,
                )),
            }
        }
        for (tp, run, _) in runs {
            pending.push(self.append_run(&mut state, tp, run)?);
        }
        Ok(())
    }

    /// Appends `records` to `tp` as one batch.
    fn append_run(
        &self,
        state: &mut State,
        tp: TopicPartition,
        records: Vec<Record>,
    ) -> Result<PendingBatch> {
        let rest: Vec<i64> = records.iter().skip(1).map(|r| r.timestamp).collect();
        let first_timestamp = records.first().map_or(-1, |r| r.timestamp);
        let txn = self.before_send(state, &tp)?;
        let mut builder =
            transactional_builder(RecordBatchBuilder::with_capacity(0, records.len()), txn);
        for record in records {
            builder.append_owned(record);
        }
        let batch = builder.build().map_err(|_| BrokerError::UnknownTopic {
            topic: tp.topic.clone(),
        })?;
        self.check_isr_before(state, &tp)?;
        let info = self.after_send(&tp, txn, state.append(&tp, batch))?;
        let operation = self.delay(state, &tp, info.last_offset);
        Ok(PendingBatch {
            send: PendingSend {
                cluster: self.cluster.clone(),
                metadata: RecordMetadata {
                    topic: tp.topic,
                    partition: tp.partition,
                    offset: if self.config.acks == Acks::Zero {
                        -1
                    } else {
                        info.first_offset
                    },
                    timestamp: info.log_append_time.unwrap_or(first_timestamp),
                },
                operation,
                replicated: false,
            },
            rest,
            log_append_time: info.log_append_time,
        })
    }

    /// For `acks=all`, the produce as a delayed operation in the cluster's
    /// produce purgatory, watched under its partition and expiring after
    /// `request.timeout.ms`; tried at once (a single replica completes it).
    fn delay(
        &self,
        state: &mut State,
        tp: &TopicPartition,
        last_offset: i64,
    ) -> Option<Arc<Delayed<DelayedProduce>>> {
        if self.config.acks != Acks::All {
            return None;
        }
        // Already in every in-sync replica (a single replica, or followers
        // that caught up in the append's round): nothing to wait for, and
        // no delayed operation on the per-record path.
        let done = state.partition(tp).is_ok_and(|p| {
            p.isr.len() >= p.min_insync_replicas()
                && p.leader_log()
                    .is_some_and(|l| l.high_watermark() > last_offset)
        });
        if done {
            return None;
        }
        let progress = state.publish(tp)?;
        let leader = state.partition(tp).map(|p| p.leader).ok()?;
        let operation = Delayed::new(
            DelayedProduce::new(
                tp.clone(),
                progress,
                last_offset + 1,
                leader,
                self.config.request_timeout_ms,
            ),
            self.config.request_timeout_ms,
        );
        // A partition always watches under its own key: never an empty
        // key list, so this cannot fail.
        let _ = state
            .produce_purgatory
            .try_complete_else_watch(&operation, std::slice::from_ref(tp));
        Some(operation)
    }

    /// `acks=all` with an ISR below `min.insync.replicas`: refused before
    /// the append.
    fn check_isr_before(&self, state: &State, tp: &TopicPartition) -> Result<()> {
        if self.config.acks != Acks::All {
            return Ok(());
        }
        let partition = state.partition(tp)?;
        let min_isr = i32::try_from(partition.min_insync_replicas()).unwrap_or(i32::MAX);
        if partition.isr.len() < partition.min_insync_replicas() {
            return Err(BrokerError::NotEnoughReplicas {
                topic: tp.topic.clone(),
                partition: tp.partition,
                isr: partition.isr.len(),
                min_isr,
            });
        }
        Ok(())
    }

    /// Sends `records` to one partition as one batch (as Kafka's producer
    /// sends what it gathered for a partition in `linger.ms`); returns the
    /// first and last offsets given. An empty `records` sends nothing and
    /// returns `None`.
    ///
    /// # Errors
    /// As [`Producer::send`]; nothing of the batch is written then.
    pub fn send_batch(
        &self,
        tp: &TopicPartition,
        records: impl IntoIterator<Item = Record>,
    ) -> Result<Option<(i64, i64)>> {
        let records = records.into_iter();
        // A transactional producer takes the cluster's lock first, for its
        // producer id, epoch and sequence; a plain one builds unlocked.
        let mut locked = None;
        let mut txn = None;
        if self.transaction.is_some() {
            let mut state = self.cluster.state();
            txn = self.before_send(&mut state, tp)?;
            locked = Some(state);
        }
        let mut builder = transactional_builder(
            RecordBatchBuilder::with_capacity(0, records.size_hint().0),
            txn,
        );
        for record in records {
            builder.append_owned(record);
        }
        if builder.is_empty() {
            return Ok(None);
        }
        let batch = builder.build().map_err(|_| BrokerError::UnknownTopic {
            topic: tp.topic.clone(),
        })?;
        let mut state = match locked {
            Some(state) => state,
            None => self.cluster.state(),
        };
        self.check_isr_before(&state, tp)?;
        let info = self.after_send(tp, txn, state.append(tp, batch))?;
        let operation = self.delay(&mut state, tp, info.last_offset);
        drop(state);
        PendingSend {
            cluster: self.cluster.clone(),
            metadata: RecordMetadata {
                topic: tp.topic.clone(),
                partition: tp.partition,
                offset: info.first_offset,
                timestamp: info.max_timestamp,
            },
            operation,
            replicated: false,
        }
        .wait()?;
        Ok(Some((info.first_offset, info.last_offset)))
    }
}

/// A batch of records of one partition in flight
/// ([`Producer::send_all_async`]): one [`PendingSend`] for the batch and
/// what the records after its first need for their metadata.
#[derive(Debug)]
pub struct PendingBatch {
    send: PendingSend,
    /// The timestamps of the records after the first.
    rest: Vec<i64>,
    log_append_time: Option<i64>,
}

impl From<PendingSend> for PendingBatch {
    fn from(send: PendingSend) -> Self {
        PendingBatch {
            send,
            rest: Vec::new(),
            log_append_time: None,
        }
    }
}

impl PendingBatch {
    /// How many records the batch holds.
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    /// Whether it holds no record (never: a batch has its first).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Waits as [`PendingSend::wait`], then gives each record's metadata
    /// in order.
    ///
    /// # Errors
    /// As [`PendingSend::wait`].
    pub fn wait(self) -> Result<Vec<RecordMetadata>> {
        let first = self.send.wait()?;
        let mut all = Vec::with_capacity(1 + self.rest.len());
        for (i, timestamp) in (1_i64..).zip(self.rest) {
            all.push(RecordMetadata {
                topic: first.topic.clone(),
                partition: first.partition,
                offset: if first.offset < 0 {
                    -1
                } else {
                    first.offset + i
                },
                timestamp: self.log_append_time.unwrap_or(timestamp),
            });
        }
        all.insert(0, first);
        Ok(all)
    }
}

/// A send in flight: appended to the leader, waiting for its `acks` as a
/// delayed produce in the cluster's purgatory (Kafka's `DelayedProduce`).
#[derive(Debug)]
pub struct PendingSend {
    cluster: Cluster,
    metadata: RecordMetadata,
    operation: Option<Arc<Delayed<DelayedProduce>>>,
    replicated: bool,
}

impl PendingSend {
    /// Where the record went on the leader.
    pub fn metadata(&self) -> &RecordMetadata {
        &self.metadata
    }

    /// How the send ended, if it has, at the cluster's current time.
    pub fn poll(&self) -> Option<Result<RecordMetadata>> {
        let Some(operation) = &self.operation else {
            return Some(Ok(self.metadata.clone()));
        };
        if !operation.is_completed() {
            return None;
        }
        operation
            .operation()
            .outcome()
            .map(|outcome| outcome.map(|()| self.metadata.clone()))
    }

    /// Waits for the end: replication at once, then the cluster's clock a
    /// fetch interval at a time until the purgatory completes or expires
    /// the produce.
    ///
    /// # Errors
    /// [`BrokerError::NotEnoughReplicasAfterAppend`],
    /// [`BrokerError::NotLeaderOrFollower`] or
    /// [`BrokerError::RequestTimedOut`].
    pub fn wait(mut self) -> Result<RecordMetadata> {
        loop {
            if let Some(outcome) = self.poll() {
                return outcome;
            }
            let step = {
                let mut state = self.cluster.state();
                if !self.replicated && state.is_replicated() {
                    self.replicated = true;
                    state.replication_round();
                    state.after_change();
                    continue;
                }
                let deadline = self
                    .operation
                    .as_ref()
                    .and_then(|o| o.deadline_ms())
                    .unwrap_or(state.now_ms);
                state
                    .config
                    .replica_fetch_interval_ms
                    .min(deadline - state.now_ms)
                    .max(1)
            };
            self.cluster.advance_ms(step);
        }
    }
}
