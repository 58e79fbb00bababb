//! The driver and the simulated broker together: a [`TopologyTestDriver`](crate::TopologyTestDriver)
//! given a [`Cluster`] appends every record it captures for output,
//! repartition and changelog topics to that cluster's topics too, and
//! restores its stores from the cluster's changelog topics when it is
//! built (a table's store whose changelog is its source topic, under
//! `reuse.ktable.source.topics`, from that topic, which the test writes
//! to the cluster itself). A test can then compact a changelog, delete records from a
//! repartition topic as Kafka Streams does after a commit, and build a
//! second driver whose stores come back from the compacted changelog.
//!
//! Topics the topology writes and the cluster lacks are created on first
//! write with one partition, as Kafka Streams creates its internal topics:
//! changelogs with `cleanup.policy=compact`, repartition topics with
//! `cleanup.policy=delete` and `retention.ms=-1`. Records go to the
//! partition Kafka's default partitioner picks.
//!
//! [`TypedProducer`] and [`read_topic`] cross the boundary with serdes:
//! the broker holds bytes, a test speaks in keys and values.
//!
//! ```
//! use streams_broker::{Cluster, TopicPartition};
//! use streams_core::StreamsBuilder;
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_test::TopologyTestDriver;
//!
//! let cluster = Cluster::builder().log_cleaner_enable(false).build();
//! let topology = || -> Result<_, Box<dyn std::error::Error>> {
//!     let builder = StreamsBuilder::new();
//!     builder
//!         .stream::<String, String>("words")
//!         .group_by_key()
//!         .count()
//!         .to_stream()
//!         .to("counts");
//!     Ok(builder.build()?)
//! };
//! let driver = TopologyTestDriver::builder(topology()?).cluster(cluster.clone()).build()?;
//! let words = driver.create_input_topic("words", StringSerde, StringSerde);
//! words.pipe_key_values([("a", ""), ("b", ""), ("a", "")]);
//! driver.close()?;
//!
//! // The changelog is on the cluster, compacted by its policy.
//! let changelog = "test-app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog";
//! assert_eq!(cluster.log_info(&TopicPartition::new(changelog, 0))?.log_end_offset, 3);
//!
//! // A second driver restores the count from it.
//! let driver = TopologyTestDriver::builder(topology()?).cluster(cluster.clone()).build()?;
//! let words = driver.create_input_topic("words", StringSerde, StringSerde);
//! let counts = driver.create_output_topic("counts", StringSerde, I64Serde);
//! words.pipe_key_values([("a", "")]);
//! assert_eq!(counts.read_value(), Some(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use streams_broker::{
    AutoOffsetReset, Cluster, ConsumerConfig, IsolationLevel, NewTopic, Producer, ProducerRecord,
    RecordMetadata, TopicPartition,
};
use streams_core::serde::Serde;
use streams_core::{Headers, RawRecord, RecordPart, Result, StreamsError};

use crate::TestRecord;

fn cluster_error(topic: &str, source: streams_broker::BrokerError) -> StreamsError {
    StreamsError::Cluster {
        topic: topic.to_owned(),
        source: Box::new(source),
    }
}

/// What the driver writes to its cluster.
#[derive(Debug)]
pub(crate) struct ClusterMirror {
    cluster: Cluster,
    producer: Producer,
    known: BTreeSet<String>,
}

impl ClusterMirror {
    pub(crate) fn new(cluster: Cluster) -> Self {
        let producer = cluster.producer();
        Self {
            cluster,
            producer,
            known: BTreeSet::new(),
        }
    }

    fn ensure_topic(&mut self, topic: &str) -> Result<()> {
        if self.known.contains(topic) {
            return Ok(());
        }
        if !self.cluster.topic_names().iter().any(|t| t == topic) {
            let mut new = NewTopic::new(topic, 1);
            if topic.ends_with("-changelog") {
                new = new.config("cleanup.policy", "compact");
            } else if topic.ends_with("-repartition") {
                new = new
                    .config("cleanup.policy", "delete")
                    .config("retention.ms", "-1");
            }
            self.cluster
                .admin()
                .create_topic(new)
                .map_err(|e| cluster_error(topic, e))?;
        }
        self.known.insert(topic.to_owned());
        Ok(())
    }

    /// Appends a record the topology produced to `topic`.
    pub(crate) fn append(&mut self, topic: &str, record: &RawRecord) -> Result<()> {
        self.ensure_topic(topic)?;
        let mut out = ProducerRecord::from_parts(
            topic,
            record.key.clone().map(Into::into),
            record.value.clone().map(Into::into),
        )
        .timestamp(record.timestamp);
        for header in record.headers.iter() {
            out.headers.push(match &header.value {
                Some(v) => streams_broker::record::Header::new(header.key.clone(), v.clone()),
                None => streams_broker::record::Header::null(header.key.clone()),
            });
        }
        self.producer
            .send(out)
            .map(|_| ())
            .map_err(|e| cluster_error(topic, e))
    }

    /// Every record of `topic`, partition after partition, in offset order;
    /// `None` when the cluster has no such topic.
    pub(crate) fn read_all(&self, topic: &str) -> Result<Option<Vec<RawRecord>>> {
        read_raw(&self.cluster, topic)
    }
}

fn read_raw(cluster: &Cluster, topic: &str) -> Result<Option<Vec<RawRecord>>> {
    if !cluster.topic_names().iter().any(|t| t == topic) {
        return Ok(None);
    }
    let admin = cluster.admin();
    let partitions = admin
        .partition_count(topic)
        .map_err(|e| cluster_error(topic, e))?;
    let mut out = Vec::new();
    for p in 0..partitions {
        let records = cluster
            .log_records(&TopicPartition::new(topic, p))
            .map_err(|e| cluster_error(topic, e))?;
        for r in records {
            let mut raw = RawRecord::new(
                r.key.map(|k| k.to_vec()),
                r.value.map(|v| v.to_vec()),
                r.timestamp,
            );
            raw.headers = to_headers(&r.headers);
            out.push(raw);
        }
    }
    Ok(Some(out))
}

/// A producer of typed records to one topic of a [`Cluster`].
pub struct TypedProducer<K, V> {
    producer: Producer,
    topic: String,
    key_serde: Box<dyn Serde<K>>,
    value_serde: Box<dyn Serde<V>>,
}

impl<K, V> std::fmt::Debug for TypedProducer<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedProducer")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl<K: 'static, V: 'static> TypedProducer<K, V> {
    /// A producer to `topic` with these serdes.
    pub fn new(
        cluster: &Cluster,
        topic: impl Into<String>,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Self {
        Self {
            producer: cluster.producer(),
            topic: topic.into(),
            key_serde: Box::new(key_serde),
            value_serde: Box::new(value_serde),
        }
    }

    /// Sends `key` = `value` (a tombstone for `None`) at `timestamp`.
    ///
    /// # Errors
    /// A serde failure, or the broker's error (unknown topic, record too
    /// large, ...).
    pub fn send(&self, key: &K, value: Option<&V>, timestamp: i64) -> Result<RecordMetadata> {
        let serialization = |part, reason| StreamsError::Serialization {
            topic: self.topic.clone(),
            node: None,
            part,
            reason,
        };
        let key_bytes = self
            .key_serde
            .serialize(&self.topic, key)
            .map_err(|e| serialization(RecordPart::Key, e))?;
        let value_bytes = value
            .map(|v| self.value_serde.serialize(&self.topic, v))
            .transpose()
            .map_err(|e| serialization(RecordPart::Value, e))?;
        self.producer
            .send(
                ProducerRecord::from_parts(
                    self.topic.clone(),
                    Some(key_bytes.into()),
                    value_bytes.map(Into::into),
                )
                .timestamp(timestamp),
            )
            .map_err(|e| cluster_error(&self.topic, e))
    }
}

/// Every record of `topic` on `cluster` as a consumer from the earliest
/// offset reads it, partition after partition, decoded with the serdes.
///
/// # Errors
/// The topic is unknown, or a record does not decode.
pub fn read_topic<K: 'static, V: 'static>(
    cluster: &Cluster,
    topic: &str,
    key_serde: impl Serde<K>,
    value_serde: impl Serde<V>,
) -> Result<Vec<TestRecord<K, V>>> {
    read_topic_as(
        cluster,
        topic,
        None,
        IsolationLevel::ReadUncommitted,
        key_serde,
        value_serde,
    )
}

/// As [`read_topic`], as a `read_committed` consumer reads it: only the
/// records of committed transactions (and records written outside any
/// transaction), below the last stable offset.
///
/// # Errors
/// The topic is unknown, or a record does not decode.
pub fn read_topic_committed<K: 'static, V: 'static>(
    cluster: &Cluster,
    topic: &str,
    key_serde: impl Serde<K>,
    value_serde: impl Serde<V>,
) -> Result<Vec<TestRecord<K, V>>> {
    read_topic_as(
        cluster,
        topic,
        None,
        IsolationLevel::ReadCommitted,
        key_serde,
        value_serde,
    )
}

/// The records of one partition of `topic`, in offset order, as a
/// consumer with `isolation` reads them.
///
/// # Errors
/// The topic or partition is unknown, or a record does not decode.
pub fn read_partition<K: 'static, V: 'static>(
    cluster: &Cluster,
    topic: &str,
    partition: i32,
    isolation: IsolationLevel,
    key_serde: impl Serde<K>,
    value_serde: impl Serde<V>,
) -> Result<Vec<TestRecord<K, V>>> {
    read_topic_as(
        cluster,
        topic,
        Some(partition),
        isolation,
        key_serde,
        value_serde,
    )
}

fn read_topic_as<K: 'static, V: 'static>(
    cluster: &Cluster,
    topic: &str,
    only: Option<i32>,
    isolation: IsolationLevel,
    key_serde: impl Serde<K>,
    value_serde: impl Serde<V>,
) -> Result<Vec<TestRecord<K, V>>> {
    let partitions = cluster
        .admin()
        .partition_count(topic)
        .map_err(|e| cluster_error(topic, e))?;
    let mut consumer = cluster.consumer(
        ConsumerConfig::new()
            .auto_offset_reset(AutoOffsetReset::Earliest)
            .isolation_level(isolation)
            .max_poll_records(usize::MAX),
    );
    let mut out = Vec::new();
    if let Some(p) = only
        && !(0..partitions).contains(&p)
    {
        return Err(StreamsError::Cluster {
            topic: topic.to_owned(),
            source: Box::new(streams_broker::BrokerError::UnknownPartition {
                topic: topic.to_owned(),
                partition: p,
                partitions,
            }),
        });
    }
    for p in (0..partitions).filter(|p| only.is_none_or(|o| o == *p)) {
        consumer.assign([TopicPartition::new(topic, p)]);
        loop {
            let records = consumer.poll().map_err(|e| cluster_error(topic, e))?;
            if records.is_empty() {
                break;
            }
            for r in records {
                let deserialization = |part, reason| StreamsError::Deserialization {
                    topic: topic.to_owned(),
                    partition: r.partition,
                    offset: r.offset,
                    part,
                    reason,
                };
                let headers = to_headers(&r.headers);
                let key = r
                    .key
                    .as_ref()
                    .map(|k| key_serde.deserialize_with_headers(topic, &headers, k))
                    .transpose()
                    .map_err(|e| deserialization(RecordPart::Key, e))?;
                let value = r
                    .value
                    .as_ref()
                    .map(|v| value_serde.deserialize_with_headers(topic, &headers, v))
                    .transpose()
                    .map_err(|e| deserialization(RecordPart::Value, e))?;
                let mut record = TestRecord::new(key, value);
                record.timestamp = Some(r.timestamp);
                record.headers = headers;
                out.push(record);
            }
        }
    }
    Ok(out)
}

/// A cluster record's headers as the driver's.
fn to_headers(from: &[streams_broker::record::Header]) -> Headers {
    let mut headers = Headers::new();
    for h in from {
        match &h.value {
            Some(v) => headers.add(h.key.clone(), v.to_vec()),
            None => headers.add_null(h.key.clone()),
        };
    }
    headers
}
