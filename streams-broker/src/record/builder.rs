//! Writing a v2 batch as Kafka's `MemoryRecordsBuilder` does, uncompressed.

use bytes::Bytes;

use super::batch::{ATTRIBUTES_OFFSET, BatchAttributes, CRC_OFFSET, RecordBatch};
use super::varint::{put_varint, put_varlong};
use super::{
    Header, LOG_OVERHEAD, LogRecord, MAGIC_VALUE_V2, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, Record,
    RecordBatchBuildError, TimestampType, record_body_size, varint,
};

/// A record waiting in the builder, with its absolute offset and timestamp.
#[derive(Debug, Clone)]
struct Pending {
    offset: i64,
    timestamp: i64,
    key: Option<Bytes>,
    value: Option<Bytes>,
    headers: Vec<Header>,
    /// The record's body size (`sizeOfBodyInBytes`) against the batch's
    /// base timestamp, worked out on append (and again when a delete
    /// horizon moves the base timestamp), so that `encode` need not.
    body: usize,
}

/// Builds one uncompressed v2 [`RecordBatch`], byte for byte as Kafka's
/// `MemoryRecordsBuilder` (magic 2, `Compression.NONE`) writes it.
///
/// Defaults are Kafka's for a plain producer: `CreateTime`, partition
/// leader epoch -1, producer id, epoch and base sequence -1, neither
/// transactional nor control, no delete horizon. The base timestamp is the
/// first record's timestamp, or the delete horizon when one is set (as
/// Kafka's builder writes it for a batch the cleaner stamps, KIP-534);
/// record timestamps are written as deltas from it. The max timestamp is
/// the largest record timestamp (-1 if all are -1), or the log append time
/// in a `LogAppendTime` batch.
///
/// Records are kept (their buffers shared, not copied) until
/// [`build`](RecordBatchBuilder::build), which knows the exact size and so
/// writes the batch into one buffer allocated once;
/// [`estimated_size_in_bytes`](RecordBatchBuilder::estimated_size_in_bytes)
/// is that exact size.
///
/// ```
/// use streams_broker::record::{Record, RecordBatchBuilder, TimestampType};
///
/// let mut builder = RecordBatchBuilder::new(100).producer(7, 0, 10);
/// builder.append(&Record::new(Some("a"), Some("1"), 5));
/// builder.append_with_offset(105, &Record::new(Some("b"), Some("2"), 3))?;  // a gap, as the cleaner leaves
/// assert!(builder.append_with_offset(105, &Record::tombstone("c", 3)).is_err());
/// let batch = builder.build()?;
/// assert_eq!((batch.base_offset(), batch.last_offset(), batch.record_count()), (100, 105, 2));
/// assert_eq!((batch.base_timestamp(), batch.max_timestamp(), batch.last_sequence()), (5, 5, 15));
/// assert_eq!(batch.records().map(|r| r.offset).collect::<Vec<_>>(), [100, 105]);
/// assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RecordBatchBuilder {
    base_offset: i64,
    timestamp_type: TimestampType,
    log_append_time: i64,
    partition_leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    delete_horizon_ms: Option<i64>,
    last_offset: Option<i64>,
    records: Vec<Pending>,
    /// The exact encoded size of the batch so far, header included.
    size: usize,
    max_timestamp: i64,
    /// The first error of an [`append`](RecordBatchBuilder::append), reported by `build`.
    error: Option<RecordBatchBuildError>,
}

impl RecordBatchBuilder {
    /// A builder for a batch whose first offset is `base_offset`.
    pub fn new(base_offset: i64) -> RecordBatchBuilder {
        RecordBatchBuilder::with_capacity(base_offset, 0)
    }

    /// A builder with room for `records` records before it reallocates.
    pub fn with_capacity(base_offset: i64, records: usize) -> RecordBatchBuilder {
        RecordBatchBuilder {
            base_offset,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: NO_TIMESTAMP,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            base_sequence: NO_SEQUENCE,
            transactional: false,
            control: false,
            delete_horizon_ms: None,
            last_offset: None,
            records: Vec::with_capacity(records),
            size: RECORD_BATCH_OVERHEAD,
            max_timestamp: NO_TIMESTAMP,
            error: None,
        }
    }

    /// The timestamp type. A `LogAppendTime` batch without a
    /// [`log_append_time`](RecordBatchBuilder::log_append_time) has the max
    /// timestamp -1, as Kafka's builder writes it.
    #[must_use]
    pub fn timestamp_type(mut self, timestamp_type: TimestampType) -> RecordBatchBuilder {
        self.timestamp_type = timestamp_type;
        self
    }

    /// The broker's append time: sets the timestamp type to `LogAppendTime`
    /// and the batch's max timestamp to `now_ms`.
    #[must_use]
    pub fn log_append_time(mut self, now_ms: i64) -> RecordBatchBuilder {
        self.timestamp_type = TimestampType::LogAppendTime;
        self.log_append_time = now_ms;
        self
    }

    /// The partition leader epoch.
    #[must_use]
    pub fn partition_leader_epoch(mut self, epoch: i32) -> RecordBatchBuilder {
        self.partition_leader_epoch = epoch;
        self
    }

    /// The idempotent producer's id, epoch and first sequence number.
    /// `build` refuses a producer id with epoch -1, or with a negative base
    /// sequence outside a control batch, as Kafka's builder does.
    #[must_use]
    pub fn producer(
        mut self,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
    ) -> RecordBatchBuilder {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// Whether the batch belongs to a transaction (it then needs a producer id).
    #[must_use]
    pub fn transactional(mut self, transactional: bool) -> RecordBatchBuilder {
        self.transactional = transactional;
        self
    }

    /// Whether the batch holds control records. The records' keys and
    /// values are written as given; [`end_transaction_marker`](super::end_transaction_marker)
    /// writes a transaction marker.
    #[must_use]
    pub fn control(mut self, control: bool) -> RecordBatchBuilder {
        self.control = control;
        self
    }

    /// The KIP-534 delete horizon: sets the attribute flag and writes the
    /// horizon as the base timestamp, record timestamps as deltas from it.
    /// A negative horizon is no horizon, as in Kafka's builder.
    #[must_use]
    pub fn delete_horizon_ms(mut self, delete_horizon_ms: Option<i64>) -> RecordBatchBuilder {
        self.delete_horizon_ms = delete_horizon_ms.filter(|&h| h >= 0);
        let base_timestamp = self.base_timestamp().unwrap_or(NO_TIMESTAMP);
        let mut size = RECORD_BATCH_OVERHEAD;
        for r in &mut self.records {
            r.body = body_size(self.base_offset, base_timestamp, r);
            size = size.saturating_add(framed_size(r.body));
        }
        self.size = size;
        self
    }

    /// The batch's last offset when it is past the last record's, as the
    /// cleaner keeps a batch's offset range (Kafka's `overrideLastOffset`):
    /// `build` refuses one below the last record's offset or beyond a
    /// 32-bit delta from the base offset.
    #[must_use]
    pub fn last_offset(mut self, last_offset: i64) -> RecordBatchBuilder {
        self.last_offset = Some(last_offset);
        self
    }

    /// The base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The offset [`append`](RecordBatchBuilder::append) gives the next record.
    pub fn next_offset(&self) -> i64 {
        self.records
            .last()
            .map_or(self.base_offset, |r| r.offset.wrapping_add(1))
    }

    /// How many records were appended.
    pub fn num_records(&self) -> usize {
        self.records.len()
    }

    /// Whether no record was appended yet.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The size the batch will have, header included (exact: nothing is compressed).
    pub fn estimated_size_in_bytes(&self) -> usize {
        self.size
    }

    /// Whether `record` fits in `write_limit` bytes with the records so far
    /// (Kafka's `hasRoomFor`): the first record always fits.
    pub fn has_room_for(&self, record: &Record, write_limit: usize) -> bool {
        if self.records.is_empty() {
            return true;
        }
        let base_timestamp = self.base_timestamp().unwrap_or(record.timestamp);
        let pending = Pending {
            offset: self.next_offset(),
            timestamp: record.timestamp,
            key: record.key.clone(),
            value: record.value.clone(),
            headers: Vec::new(),
            body: 0,
        };
        let size = record_body_size(
            offset_delta(self.base_offset, pending.offset),
            pending.timestamp.wrapping_sub(base_timestamp),
            pending.key.as_ref().map(Bytes::len),
            pending.value.as_ref().map(Bytes::len),
            &record.headers,
        );
        let size = size.saturating_add(varint::size_of_varint(
            i32::try_from(size).unwrap_or(i32::MAX),
        ));
        write_limit >= self.size.saturating_add(size)
    }

    fn base_timestamp(&self) -> Option<i64> {
        self.delete_horizon_ms
            .or(self.records.first().map(|r| r.timestamp))
    }

    /// Appends `record` at the next offset (the base offset, then one past
    /// the last). A record Kafka's builder would refuse (a timestamp below
    /// -1, a key or value over 2 GiB) is not appended, and
    /// [`build`](RecordBatchBuilder::build) reports the first such error;
    /// use [`append_with_offset`](RecordBatchBuilder::append_with_offset)
    /// for the error at once.
    pub fn append(&mut self, record: &Record) {
        let offset = match self.records.last() {
            None => Some(self.base_offset),
            Some(last) => last.offset.checked_add(1),
        };
        let result = match offset {
            Some(offset) => self.push(
                offset,
                record.timestamp,
                record.key.clone(),
                record.value.clone(),
                record.headers.clone(),
            ),
            None => Err(RecordBatchBuildError::OffsetDeltaOverflow {
                offset: i64::MAX,
                base_offset: self.base_offset,
            }),
        };
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    /// [`append`](RecordBatchBuilder::append) for a record the caller
    /// gives up: its buffers move into the builder, not a reference
    /// count more (the producer's path).
    pub(crate) fn append_owned(&mut self, record: Record) {
        let offset = match self.records.last() {
            None => Some(self.base_offset),
            Some(last) => last.offset.checked_add(1),
        };
        let result = match offset {
            Some(offset) => self.push(
                offset,
                record.timestamp,
                record.key,
                record.value,
                record.headers,
            ),
            None => Err(RecordBatchBuildError::OffsetDeltaOverflow {
                offset: i64::MAX,
                base_offset: self.base_offset,
            }),
        };
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    /// Appends `record` at `offset`: offsets must increase strictly, with
    /// gaps allowed (as the cleaner writes retained records), and stay
    /// within a 32-bit delta of the base offset.
    pub fn append_with_offset(
        &mut self,
        offset: i64,
        record: &Record,
    ) -> Result<(), RecordBatchBuildError> {
        self.push(
            offset,
            record.timestamp,
            record.key.clone(),
            record.value.clone(),
            record.headers.clone(),
        )
    }

    /// Appends a record read from another batch at its own offset, as the
    /// log cleaner copies the records it retains.
    pub fn append_log_record(&mut self, record: &LogRecord) -> Result<(), RecordBatchBuildError> {
        self.push(
            record.offset,
            record.timestamp,
            record.key.clone(),
            record.value.clone(),
            record.headers.clone(),
        )
    }

    fn push(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<Bytes>,
        value: Option<Bytes>,
        headers: Vec<Header>,
    ) -> Result<(), RecordBatchBuildError> {
        if let Some(last) = self.records.last() {
            if offset <= last.offset {
                return Err(RecordBatchBuildError::OffsetNotIncreasing {
                    offset,
                    previous: last.offset,
                });
            }
        }
        if offset < self.base_offset {
            return Err(RecordBatchBuildError::OffsetBelowBase {
                offset,
                base_offset: self.base_offset,
            });
        }
        match offset.checked_sub(self.base_offset) {
            Some(delta) if delta <= i64::from(i32::MAX) => {}
            _ => {
                return Err(RecordBatchBuildError::OffsetDeltaOverflow {
                    offset,
                    base_offset: self.base_offset,
                });
            }
        }
        if timestamp < NO_TIMESTAMP {
            return Err(RecordBatchBuildError::InvalidTimestamp { offset, timestamp });
        }
        let too_large = |what: &'static str, size: usize| RecordBatchBuildError::TooLarge {
            offset,
            what,
            size,
        };
        let max = i32::MAX as usize;
        for (what, len) in [
            ("key", key.as_ref().map_or(0, Bytes::len)),
            ("value", value.as_ref().map_or(0, Bytes::len)),
        ] {
            if len > max {
                return Err(too_large(what, len));
            }
        }
        if headers.len() > max {
            return Err(too_large("header list", headers.len()));
        }
        for h in &headers {
            let len = h.key.len().max(h.value.as_ref().map_or(0, Bytes::len));
            if len > max {
                return Err(too_large("header", len));
            }
        }
        let mut pending = Pending {
            offset,
            timestamp,
            key,
            value,
            headers,
            body: 0,
        };
        let base_timestamp = self.base_timestamp().unwrap_or(timestamp);
        pending.body = body_size(self.base_offset, base_timestamp, &pending);
        let size = self.size.saturating_add(framed_size(pending.body));
        if size > max {
            return Err(too_large("batch", size));
        }
        self.size = size;
        if timestamp > self.max_timestamp {
            self.max_timestamp = timestamp;
        }
        self.records.push(pending);
        Ok(())
    }

    /// Writes the batch: the header, the records, the CRC-32C over the
    /// attributes to the end. Fails for an empty builder, for the first
    /// error an [`append`](RecordBatchBuilder::append) met, and for
    /// producer state Kafka's builder refuses (`validateProducerState`).
    pub fn build(self) -> Result<RecordBatch, RecordBatchBuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.records.is_empty() {
            return Err(RecordBatchBuildError::Empty {
                base_offset: self.base_offset,
            });
        }
        if let (Some(last), Some(record)) = (self.last_offset, self.records.last()) {
            if last < record.offset {
                return Err(RecordBatchBuildError::OffsetNotIncreasing {
                    offset: last,
                    previous: record.offset,
                });
            }
            match last.checked_sub(self.base_offset) {
                Some(delta) if delta <= i64::from(i32::MAX) => {}
                _ => {
                    return Err(RecordBatchBuildError::OffsetDeltaOverflow {
                        offset: last,
                        base_offset: self.base_offset,
                    });
                }
            }
        }
        if self.transactional && self.producer_id == NO_PRODUCER_ID {
            return Err(RecordBatchBuildError::TransactionalWithoutProducerId);
        }
        if self.producer_id != NO_PRODUCER_ID {
            if self.producer_epoch == NO_PRODUCER_EPOCH {
                return Err(RecordBatchBuildError::InvalidProducerEpoch {
                    producer_id: self.producer_id,
                    producer_epoch: self.producer_epoch,
                });
            }
            if self.base_sequence < 0 && !self.control {
                return Err(RecordBatchBuildError::InvalidBaseSequence {
                    producer_id: self.producer_id,
                    base_sequence: self.base_sequence,
                });
            }
        }
        Ok(self.encode())
    }

    /// Writes the batch without the producer-state checks (the records
    /// themselves were checked on append).
    pub(super) fn encode(self) -> RecordBatch {
        let base_timestamp = self.base_timestamp().unwrap_or(NO_TIMESTAMP);
        let last_offset = self
            .last_offset
            .or(self.records.last().map(|r| r.offset))
            .unwrap_or(self.base_offset);
        let max_timestamp = match self.timestamp_type {
            TimestampType::LogAppendTime => self.log_append_time,
            TimestampType::CreateTime => self.max_timestamp,
        };
        let attributes = BatchAttributes::new(
            self.timestamp_type,
            self.transactional,
            self.control,
            self.delete_horizon_ms.is_some(),
        );
        let mut out = Vec::with_capacity(self.size);
        out.extend_from_slice(&self.base_offset.to_be_bytes());
        let length = i32::try_from(self.size.saturating_sub(LOG_OVERHEAD)).unwrap_or(i32::MAX);
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&self.partition_leader_epoch.to_be_bytes());
        out.push(MAGIC_VALUE_V2 as u8);
        out.extend_from_slice(&[0; 4]); // the CRC, once the rest is written
        out.extend_from_slice(&attributes.raw().to_be_bytes());
        out.extend_from_slice(&offset_delta(self.base_offset, last_offset).to_be_bytes());
        out.extend_from_slice(&base_timestamp.to_be_bytes());
        out.extend_from_slice(&max_timestamp.to_be_bytes());
        out.extend_from_slice(&self.producer_id.to_be_bytes());
        out.extend_from_slice(&self.producer_epoch.to_be_bytes());
        out.extend_from_slice(&self.base_sequence.to_be_bytes());
        let count = i32::try_from(self.records.len()).unwrap_or(i32::MAX);
        out.extend_from_slice(&count.to_be_bytes());
        for r in &self.records {
            write_record(&mut out, self.base_offset, base_timestamp, r);
        }
        let crc = crc32c::crc32c(out.get(ATTRIBUTES_OFFSET..).unwrap_or_default());
        if let Some(dst) = out.get_mut(CRC_OFFSET..CRC_OFFSET + 4) {
            dst.copy_from_slice(&crc.to_be_bytes());
        }
        debug_assert_eq!(
            out.len(),
            self.size,
            "the size accounting matches the bytes written"
        );
        RecordBatch::from_valid(Bytes::from(out))
    }

    /// Appends a record without the checks, for a control batch whose
    /// record is known to be well formed.
    pub(super) fn push_unchecked(&mut self, timestamp: i64, key: Bytes, value: Bytes) {
        let mut pending = Pending {
            offset: self.next_offset(),
            timestamp,
            key: Some(key),
            value: Some(value),
            headers: Vec::new(),
            body: 0,
        };
        let base_timestamp = self.base_timestamp().unwrap_or(timestamp);
        pending.body = body_size(self.base_offset, base_timestamp, &pending);
        self.size = self.size.saturating_add(framed_size(pending.body));
        self.max_timestamp = self.max_timestamp.max(timestamp);
        self.records.push(pending);
    }
}

fn offset_delta(base_offset: i64, offset: i64) -> i32 {
    i32::try_from(offset.wrapping_sub(base_offset)).unwrap_or(i32::MAX)
}

/// The record's body size against `base_timestamp`.
fn body_size(base_offset: i64, base_timestamp: i64, r: &Pending) -> usize {
    record_body_size(
        offset_delta(base_offset, r.offset),
        r.timestamp.wrapping_sub(base_timestamp),
        r.key.as_ref().map(Bytes::len),
        r.value.as_ref().map(Bytes::len),
        &r.headers,
    )
}

/// A record's size with its length varint, from its body size.
fn framed_size(body: usize) -> usize {
    body.saturating_add(varint::size_of_varint(
        i32::try_from(body).unwrap_or(i32::MAX),
    ))
}

fn put_nullable(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => put_varint(out, -1),
        Some(bytes) => {
            put_varint(out, i32::try_from(bytes.len()).unwrap_or(i32::MAX));
            out.extend_from_slice(bytes);
        }
    }
}

/// `DefaultRecord.writeTo`.
fn write_record(out: &mut Vec<u8>, base_offset: i64, base_timestamp: i64, r: &Pending) {
    let offset_delta = offset_delta(base_offset, r.offset);
    let timestamp_delta = r.timestamp.wrapping_sub(base_timestamp);
    let body = r.body;
    debug_assert_eq!(body, body_size(base_offset, base_timestamp, r));
    put_varint(out, i32::try_from(body).unwrap_or(i32::MAX));
    out.push(0); // record attributes: none are used
    put_varlong(out, timestamp_delta);
    put_varint(out, offset_delta);
    put_nullable(out, r.key.as_deref());
    put_nullable(out, r.value.as_deref());
    put_varint(out, i32::try_from(r.headers.len()).unwrap_or(i32::MAX));
    for h in &r.headers {
        put_nullable(out, Some(h.key.as_bytes()));
        put_nullable(out, h.value.as_deref());
    }
}
