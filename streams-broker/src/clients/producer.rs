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

use crate::cluster::Cluster;
use crate::error::{BrokerError, Result};
use crate::partitioner::DefaultPartitioner;
use crate::record::{Header, Record, RecordBatchBuilder, record_size_in_bytes};
use crate::topic_partition::TopicPartition;

/// A record to send: topic, optional partition, key, value, headers and an
/// optional timestamp (the producer's clock, the cluster's, when absent).
#[derive(Debug, Clone, PartialEq)]
pub struct ProducerRecord {
    /// The topic.
    pub topic: String,
    /// The partition; `None` lets the partitioner choose.
    pub partition: Option<i32>,
    /// The key, `None` for a record without one.
    pub key: Option<Bytes>,
    /// The value, `None` for a tombstone.
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<Header>,
    /// The record's `CreateTime`; `None` takes the cluster's clock.
    pub timestamp: Option<i64>,
}

impl ProducerRecord {
    /// A keyed record.
    pub fn new(topic: impl Into<String>, key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Self::from_parts(topic, Some(key.into()), Some(value.into()))
    }

    /// A tombstone: a key with no value, which compaction eventually
    /// removes with every earlier record of the key.
    pub fn tombstone(topic: impl Into<String>, key: impl Into<Bytes>) -> Self {
        Self::from_parts(topic, Some(key.into()), None)
    }

    /// A record without a key.
    pub fn unkeyed(topic: impl Into<String>, value: impl Into<Bytes>) -> Self {
        Self::from_parts(topic, None, Some(value.into()))
    }

    /// A record from an optional key and value.
    pub fn from_parts(topic: impl Into<String>, key: Option<Bytes>, value: Option<Bytes>) -> Self {
        Self {
            topic: topic.into(),
            partition: None,
            key,
            value,
            headers: Vec::new(),
            timestamp: None,
        }
    }

    /// Sends to this partition instead of the partitioner's choice.
    #[must_use]
    pub fn partition(mut self, partition: i32) -> Self {
        self.partition = Some(partition);
        self
    }

    /// The record's timestamp.
    #[must_use]
    pub fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, key: impl Into<String>, value: impl Into<Bytes>) -> Self {
        self.headers.push(Header::new(key, value));
        self
    }
}

/// Where a sent record landed (Kafka's `RecordMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMetadata {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The record's offset.
    pub offset: i64,
    /// The record's timestamp as stored: its own under `CreateTime`, the
    /// broker's under `LogAppendTime`.
    pub timestamp: i64,
}

/// Producer settings, by Kafka's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerConfig {
    /// `batch.size` (default 16384): how many bytes the sticky partitioner
    /// sends to one partition before it moves on.
    pub batch_size: usize,
}

impl Default for ProducerConfig {
    fn default() -> Self {
        Self { batch_size: 16_384 }
    }
}

/// A producer on the simulated cluster (`acks=1`, synchronous, not
/// idempotent: batches carry no producer id).
#[derive(Debug)]
pub struct Producer {
    cluster: Cluster,
    config: ProducerConfig,
    partitioners: Mutex<HashMap<String, DefaultPartitioner>>,
}

impl Producer {
    pub(crate) fn new(cluster: Cluster, config: ProducerConfig) -> Self {
        Self {
            cluster,
            config,
            partitioners: Mutex::new(HashMap::new()),
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

    /// Sends one record as one batch and returns where it landed.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`] or
    /// [`BrokerError::RecordTooLarge`]; nothing is written then.
    pub fn send(&self, record: ProducerRecord) -> Result<RecordMetadata> {
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
        let mut builder = RecordBatchBuilder::with_capacity(0, 1);
        builder.append_owned(Record {
            key,
            value,
            headers,
            timestamp,
        });
        let batch = builder.build().map_err(|_| BrokerError::UnknownTopic {
            topic: topic.clone(),
        })?;
        let tp = TopicPartition::new(topic, partition);
        let info = state.append(&tp, batch)?;
        drop(state);
        Ok(RecordMetadata {
            topic: tp.topic,
            partition,
            offset: info.first_offset,
            timestamp: info.log_append_time.unwrap_or(timestamp),
        })
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
        let mut builder = RecordBatchBuilder::with_capacity(0, records.size_hint().0);
        for record in records {
            builder.append_owned(record);
        }
        if builder.is_empty() {
            return Ok(None);
        }
        let batch = builder.build().map_err(|_| BrokerError::UnknownTopic {
            topic: tp.topic.clone(),
        })?;
        let info = self.cluster.state().append(tp, batch)?;
        Ok(Some((info.first_offset, info.last_offset)))
    }
}
