//! The records the clients carry: what a producer sends
//! ([`ProducerRecord`]), where it landed ([`RecordMetadata`]), what a
//! consumer reads ([`ConsumerRecord`]), and their parts ([`Header`],
//! [`TimestampType`], [`TopicPartition`]). Keys, values and header values
//! are [`Bytes`]: serialization is the caller's business (Streams'
//! serdes sit above this layer).
//!
//! ```
//! use streams_clients::{ProducerRecord, TopicPartition};
//!
//! let record = ProducerRecord::new("orders", "o-1", "{}").partition(2).timestamp(7);
//! assert_eq!(record.partition, Some(2));
//! assert_eq!(TopicPartition::new("orders", 2).to_string(), "orders-2");
//! ```

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

/// A topic and one of its partitions, written `topic-partition` as Kafka
/// writes it.
///
/// ```
/// use streams_clients::TopicPartition;
///
/// assert_eq!(TopicPartition::new("orders", 2).to_string(), "orders-2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// The topic's name.
    pub topic: String,
    /// The partition, from 0.
    pub partition: i32,
}

impl TopicPartition {
    /// The partition `partition` of `topic`.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

/// Which clock a record's timestamp comes from (`message.timestamp.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// The producer's timestamps, as sent (Kafka's default).
    #[default]
    CreateTime,
    /// The broker's clock when it appended the batch: every record reads
    /// back with the batch's max timestamp.
    LogAppendTime,
}

impl fmt::Display for TimestampType {
    /// Kafka's names: `CreateTime`, `LogAppendTime`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        })
    }
}

/// A record header: a UTF-8 key, and a value that may be null. Headers are
/// ordered and a key may repeat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// The header key.
    pub key: String,
    /// The header value; `None` is a null value.
    pub value: Option<Bytes>,
}

impl Header {
    /// A header with a value.
    pub fn new(key: impl Into<String>, value: impl Into<Bytes>) -> Header {
        Header {
            key: key.into(),
            value: Some(value.into()),
        }
    }

    /// A header whose value is null.
    pub fn null(key: impl Into<String>) -> Header {
        Header {
            key: key.into(),
            value: None,
        }
    }
}

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
    /// The record's `CreateTime`; `None` takes the producer's clock.
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
    /// The record's offset (-1 under `acks=0`, which awaits no answer).
    pub offset: i64,
    /// The record's timestamp as stored: its own under `CreateTime`, the
    /// broker's under `LogAppendTime`.
    pub timestamp: i64,
}

/// A record a consumer read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    /// The topic: one name shared by the records of a poll (a clone is a
    /// reference count, not a copy); it reads as a `&str` (`&*r.topic`,
    /// `r.topic.as_ref()`, or `r.topic.to_string()` for a `String`).
    pub topic: Arc<str>,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// The timestamp (the broker's under `LogAppendTime`).
    pub timestamp: i64,
    /// Whose time the timestamp is.
    pub timestamp_type: TimestampType,
    /// The key.
    pub key: Option<Bytes>,
    /// The value; `None` for a tombstone.
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<Header>,
    /// The leader epoch of the batch the record came in (-1 when unknown).
    pub leader_epoch: i32,
}
