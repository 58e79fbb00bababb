//! The record a sink task receives: Kafka Connect's `SinkRecord`, its
//! key, value and headers converted to Connect data, with where it was
//! read (topic, partition, offset) and its timestamp.
//!
//! ```
//! use streams_connect::data::{Schema, Value};
//! use streams_connect::SinkRecord;
//!
//! let record = SinkRecord::new("orders", 0, 41, Some(1_000))
//!     .with_key(Some(Schema::optional_string()), Value::string("o-1"))
//!     .with_value(None, Value::string("{}"));
//! assert_eq!((record.kafka_partition, record.kafka_offset), (0, 41));
//! assert_eq!(record.key, Value::string("o-1"));
//! assert!(record.original().is_none());
//! ```

use std::sync::Arc;

use streams_clients::{ConsumerRecord, TimestampType};

use crate::data::{Schema, Value};

/// A header of a sink record, converted by the header converter.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectHeader {
    /// The header's key.
    pub key: String,
    /// The value's schema, if any.
    pub schema: Option<Schema>,
    /// The value.
    pub value: Value,
}

/// A record for a sink task. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct SinkRecord {
    /// The topic (a transform may change it).
    pub topic: String,
    /// The partition it was read from.
    pub kafka_partition: i32,
    /// The offset it was read at.
    pub kafka_offset: i64,
    /// The timestamp; `None` when the record had none (-1).
    pub timestamp: Option<i64>,
    /// Whose time the timestamp is.
    pub timestamp_type: TimestampType,
    /// The key's schema.
    pub key_schema: Option<Schema>,
    /// The key.
    pub key: Value,
    /// The value's schema.
    pub value_schema: Option<Schema>,
    /// The value.
    pub value: Value,
    /// The headers, in order.
    pub headers: Vec<ConnectHeader>,
    original: Option<Arc<ConsumerRecord>>,
}

impl PartialEq for SinkRecord {
    /// Equal when every public field is; where the record came from does
    /// not count.
    fn eq(&self, other: &Self) -> bool {
        self.topic == other.topic
            && self.kafka_partition == other.kafka_partition
            && self.kafka_offset == other.kafka_offset
            && self.timestamp == other.timestamp
            && self.timestamp_type == other.timestamp_type
            && self.key_schema == other.key_schema
            && self.key == other.key
            && self.value_schema == other.value_schema
            && self.value == other.value
            && self.headers == other.headers
    }
}

impl SinkRecord {
    /// A record of `topic`, `partition` and `offset` with a null key and
    /// value and no headers.
    pub fn new(
        topic: impl Into<String>,
        partition: i32,
        offset: i64,
        timestamp: Option<i64>,
    ) -> Self {
        Self {
            topic: topic.into(),
            kafka_partition: partition,
            kafka_offset: offset,
            timestamp,
            timestamp_type: TimestampType::CreateTime,
            key_schema: None,
            key: Value::Null,
            value_schema: None,
            value: Value::Null,
            headers: Vec::new(),
            original: None,
        }
    }

    /// The same record with this key.
    #[must_use]
    pub fn with_key(mut self, schema: Option<Schema>, key: Value) -> Self {
        self.key_schema = schema;
        self.key = key;
        self
    }

    /// The same record with this value.
    #[must_use]
    pub fn with_value(mut self, schema: Option<Schema>, value: Value) -> Self {
        self.value_schema = schema;
        self.value = value;
        self
    }

    /// The same record with a header added.
    #[must_use]
    pub fn with_header(
        mut self,
        key: impl Into<String>,
        schema: Option<Schema>,
        value: Value,
    ) -> Self {
        self.headers.push(ConnectHeader {
            key: key.into(),
            schema,
            value,
        });
        self
    }

    /// The consumed record this one was converted from (Kafka's
    /// `InternalSinkRecord`): what the dead letter queue receives when the
    /// task reports this record as errant. `None` for a record the worker
    /// did not make.
    pub fn original(&self) -> Option<&ConsumerRecord> {
        self.original.as_deref()
    }

    pub(crate) fn set_original(&mut self, original: Arc<ConsumerRecord>) {
        self.original = Some(original);
    }
}
