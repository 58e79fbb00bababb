//! Records and record batches in Kafka's v2 wire format (magic 2), byte for
//! byte as Kafka 4.4.0's `MemoryRecordsBuilder` writes them.
//!
//! A producer sends [`Record`]s; a [`RecordBatchBuilder`] packs them into a
//! [`RecordBatch`], one encoded buffer holding the 61-byte batch header
//! (base offset, length, partition leader epoch, magic, CRC-32C,
//! [`BatchAttributes`], last offset delta, base and max timestamp, producer
//! id, epoch and base sequence, record count) and the records, each a
//! varint-framed [`LogRecord`] whose key and value read back as zero-copy
//! slices of that buffer. [`RecordBatch::from_bytes`] validates bytes from
//! elsewhere (length, magic, CRC, every record's framing) so that reading
//! the records afterwards cannot fail. The broker's rewrites are methods:
//! [`RecordBatch::with_base_offset`] on append,
//! [`RecordBatch::with_log_append_time`] for `LogAppendTime` topics, and
//! [`end_transaction_marker`] writes a transaction's control batch.
//!
//! ```
//! use streams_broker::record::{Record, RecordBatch, RecordBatchBuilder};
//!
//! let mut builder = RecordBatchBuilder::new(0);
//! builder.append(&Record::new(Some("k"), Some("v"), 1_000).with_header("h", "x"));
//! builder.append(&Record::tombstone("k", 1_005));
//! let batch = builder.build()?.with_base_offset(42);
//!
//! let read = RecordBatch::from_bytes(batch.as_bytes().clone())?;
//! assert_eq!((read.base_offset(), read.last_offset(), read.max_timestamp()), (42, 43, 1_005));
//! let records: Vec<_> = read.records().collect();
//! assert_eq!(records[0].value.as_deref(), Some(&b"v"[..]));
//! assert!(records[1].is_tombstone());
//! assert_eq!(read.size_in_bytes(), 61 + 13 + 8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use bytes::Bytes;

mod batch;
mod builder;
mod control;
mod error;
#[cfg(test)]
mod tests;
mod varint;

pub use batch::{BatchAttributes, CompressionType, RecordBatch, RecordIter};
pub use builder::RecordBatchBuilder;
pub use control::{ControlRecordType, EndTransactionMarker, end_transaction_marker};
pub use error::{CorruptRecordError, RecordBatchBuildError};

/// The size of a v2 batch header, before the first record
/// (`DefaultRecordBatch.RECORD_BATCH_OVERHEAD`).
pub const RECORD_BATCH_OVERHEAD: usize = 61;

/// The bytes before a batch's length field counts: the base offset and the
/// length itself (`Records.LOG_OVERHEAD`).
pub const LOG_OVERHEAD: usize = 12;

/// The only message format version written and read: v2.
pub const MAGIC_VALUE_V2: i8 = 2;

/// The timestamp of a record that has none (`RecordBatch.NO_TIMESTAMP`).
pub const NO_TIMESTAMP: i64 = -1;

/// The producer id of a batch from a producer that is not idempotent
/// (`RecordBatch.NO_PRODUCER_ID`).
pub const NO_PRODUCER_ID: i64 = -1;

/// The producer epoch of a batch without a producer id (`RecordBatch.NO_PRODUCER_EPOCH`).
pub const NO_PRODUCER_EPOCH: i16 = -1;

/// The base sequence of a batch without a producer id (`RecordBatch.NO_SEQUENCE`).
pub const NO_SEQUENCE: i32 = -1;

/// The partition leader epoch of a batch the leader has not stamped yet
/// (`RecordBatch.NO_PARTITION_LEADER_EPOCH`).
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;

// The timestamp type and headers belong to the client API, the floor
// this broker stands on.
pub use streams_clients::{Header, TimestampType};

/// A record as a producer sends it: key, value, headers and timestamp, but
/// no offset yet.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Record {
    /// The key; `None` is a null key (the partitioner then sticks to a partition).
    pub key: Option<Bytes>,
    /// The value; `None` is a null value, a tombstone in a compacted topic.
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<Header>,
    /// The producer's timestamp in milliseconds, or [`NO_TIMESTAMP`].
    pub timestamp: i64,
}

impl Record {
    /// A record with the given key and value (either may be `None`; write
    /// `None::<Bytes>` for a `None` that has no type, or use
    /// [`tombstone`](Record::tombstone) and [`unkeyed`](Record::unkeyed)).
    pub fn new<K: Into<Bytes>, V: Into<Bytes>>(
        key: Option<K>,
        value: Option<V>,
        timestamp: i64,
    ) -> Record {
        Record {
            key: key.map(Into::into),
            value: value.map(Into::into),
            headers: Vec::new(),
            timestamp,
        }
    }

    /// A tombstone: a key with a null value.
    pub fn tombstone(key: impl Into<Bytes>, timestamp: i64) -> Record {
        Record {
            key: Some(key.into()),
            value: None,
            headers: Vec::new(),
            timestamp,
        }
    }

    /// A record without a key.
    pub fn unkeyed(value: impl Into<Bytes>, timestamp: i64) -> Record {
        Record {
            key: None,
            value: Some(value.into()),
            headers: Vec::new(),
            timestamp,
        }
    }

    /// This record with one more header, after the others.
    #[must_use]
    pub fn with_header(mut self, key: impl Into<String>, value: impl Into<Bytes>) -> Record {
        self.headers.push(Header::new(key, value));
        self
    }

    /// This record with one more header whose value is null.
    #[must_use]
    pub fn with_null_header(mut self, key: impl Into<String>) -> Record {
        self.headers.push(Header::null(key));
        self
    }

    /// Whether the value is null.
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }
}

/// A record read back from a batch, with its offset. Its key, value and
/// header values are slices of the batch's buffer, not copies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LogRecord {
    /// The record's offset: the batch's base offset plus its offset delta.
    pub offset: i64,
    /// The record's timestamp: the base timestamp plus its delta, or the
    /// batch's max timestamp in a `LogAppendTime` batch (as Kafka reads it).
    pub timestamp: i64,
    /// The key; `None` is a null key.
    pub key: Option<Bytes>,
    /// The value; `None` is a null value.
    pub value: Option<Bytes>,
    /// The headers, in order.
    pub headers: Vec<Header>,
}

impl LogRecord {
    /// Whether the value is null: a tombstone in a compacted topic.
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }

    /// The record without its offset, as a producer would send it again.
    pub fn to_record(&self) -> Record {
        Record {
            key: self.key.clone(),
            value: self.value.clone(),
            headers: self.headers.clone(),
            timestamp: self.timestamp,
        }
    }
}

/// The encoded size of one v2 record, its length varint included
/// (`DefaultRecord.sizeInBytes`): `None` lengths are null keys or values.
///
/// ```
/// use streams_broker::record::{Header, record_size_in_bytes};
///
/// // length, attributes, timestamp delta, offset delta, key, value, header count
/// assert_eq!(record_size_in_bytes(0, 0, Some(1), Some(1), &[]), 1 + 1 + 1 + 1 + 2 + 2 + 1);
/// assert_eq!(record_size_in_bytes(0, 0, None, None, &[Header::null("h")]), 1 + 1 + 1 + 1 + 1 + 1 + 1 + 2 + 1);
/// ```
pub fn record_size_in_bytes(
    offset_delta: i32,
    timestamp_delta: i64,
    key_len: Option<usize>,
    value_len: Option<usize>,
    headers: &[Header],
) -> usize {
    let body = record_body_size(offset_delta, timestamp_delta, key_len, value_len, headers);
    body.saturating_add(varint::size_of_varint(clamp_len(body)))
}

/// A length as the `i32` a varint holds, saturated for lengths the v2
/// format cannot hold (the builder refuses those).
fn clamp_len(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

fn nullable_size(len: Option<usize>) -> usize {
    match len {
        None => 1,
        Some(len) => varint::size_of_varint(clamp_len(len)).saturating_add(len),
    }
}

/// `DefaultRecord.sizeOfBodyInBytes`: everything after the length varint.
fn record_body_size(
    offset_delta: i32,
    timestamp_delta: i64,
    key_len: Option<usize>,
    value_len: Option<usize>,
    headers: &[Header],
) -> usize {
    let mut size =
        1 + varint::size_of_varint(offset_delta) + varint::size_of_varlong(timestamp_delta);
    size = size.saturating_add(nullable_size(key_len));
    size = size.saturating_add(nullable_size(value_len));
    size = size.saturating_add(varint::size_of_varint(clamp_len(headers.len())));
    for header in headers {
        size = size.saturating_add(nullable_size(Some(header.key.len())));
        size = size.saturating_add(nullable_size(header.value.as_ref().map(Bytes::len)));
    }
    size
}
