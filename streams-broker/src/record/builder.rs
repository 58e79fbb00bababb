//! Writing a v2 batch as Kafka's `MemoryRecordsBuilder` does, uncompressed.

use bytes::Bytes;

use super::batch::{ATTRIBUTES_OFFSET, BatchAttributes, CRC_OFFSET, RecordBatch};
use super::varint::put_varint;
use super::{
    Header, LOG_OVERHEAD, LogRecord, MAGIC_VALUE_V2, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, Record,
    RecordBatchBuildError, TimestampType, record_body_size, varint,
};

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
/// Each record is encoded into the batch's buffer as it is appended (as
/// Kafka's builder writes into its `ByteBuffer`): the builder keeps no
/// reference to the records' buffers, and
/// [`build`](RecordBatchBuilder::build) only writes the header and the CRC.
/// The buffer is sized on the first record for as many records of that
/// size as [`with_capacity`](RecordBatchBuilder::with_capacity) was told;
/// [`estimated_size_in_bytes`](RecordBatchBuilder::estimated_size_in_bytes)
/// is the exact size so far.
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
    /// The batch so far: room for the header (written by `encode`), then
    /// the records, encoded; empty until the first record.
    buf: Vec<u8>,
    /// How many records the caller expects (the first sizes the buffer).
    expected_records: usize,
    /// How many records were appended.
    count: usize,
    /// The first record's timestamp.
    first_timestamp: Option<i64>,
    /// The last record's offset.
    last_record_offset: Option<i64>,
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
            buf: Vec::new(),
            expected_records: records,
            count: 0,
            first_timestamp: None,
            last_record_offset: None,
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
        let old_base = self.base_timestamp().unwrap_or(NO_TIMESTAMP);
        self.delete_horizon_ms = delete_horizon_ms.filter(|&h| h >= 0);
        let new_base = self.base_timestamp().unwrap_or(NO_TIMESTAMP);
        if self.count > 0 && new_base != old_base {
            self.buf = rebase_timestamps(&self.buf, old_base, new_base);
        }
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
        self.last_record_offset
            .map_or(self.base_offset, |o| o.wrapping_add(1))
    }

    /// How many records were appended.
    pub fn num_records(&self) -> usize {
        self.count
    }

    /// Whether no record was appended yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The size the batch will have, header included (exact: nothing is compressed).
    pub fn estimated_size_in_bytes(&self) -> usize {
        self.buf.len().max(RECORD_BATCH_OVERHEAD)
    }

    /// Whether `record` fits in `write_limit` bytes with the records so far
    /// (Kafka's `hasRoomFor`): the first record always fits.
    pub fn has_room_for(&self, record: &Record, write_limit: usize) -> bool {
        if self.is_empty() {
            return true;
        }
        let base_timestamp = self.base_timestamp().unwrap_or(record.timestamp);
        let size = record_body_size(
            offset_delta(self.base_offset, self.next_offset()),
            record.timestamp.wrapping_sub(base_timestamp),
            record.key.as_ref().map(Bytes::len),
            record.value.as_ref().map(Bytes::len),
            &record.headers,
        );
        let size = size.saturating_add(varint::size_of_varint(
            i32::try_from(size).unwrap_or(i32::MAX),
        ));
        write_limit >= self.estimated_size_in_bytes().saturating_add(size)
    }

    fn base_timestamp(&self) -> Option<i64> {
        self.delete_horizon_ms.or(self.first_timestamp)
    }

    /// Appends `record` at the next offset (the base offset, then one past
    /// the last). A record Kafka's builder would refuse (a timestamp below
    /// -1, a key or value over 2 GiB) is not appended, and
    /// [`build`](RecordBatchBuilder::build) reports the first such error;
    /// use [`append_with_offset`](RecordBatchBuilder::append_with_offset)
    /// for the error at once.
    pub fn append(&mut self, record: &Record) {
        let result = match self.next_record_offset() {
            Some(offset) => self.push(
                offset,
                record.timestamp,
                record.key.as_deref(),
                record.value.as_deref(),
                &record.headers,
            ),
            None => Err(self.offset_overflow()),
        };
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    /// [`append`](RecordBatchBuilder::append) for a record the caller
    /// gives up (the producer's path); its bytes are copied into the batch
    /// as `append` copies them.
    pub(crate) fn append_owned(&mut self, record: Record) {
        self.append(&record);
    }

    /// The offset `append` gives the next record; `None` past `i64::MAX`.
    fn next_record_offset(&self) -> Option<i64> {
        match self.last_record_offset {
            None => Some(self.base_offset),
            Some(last) => last.checked_add(1),
        }
    }

    fn offset_overflow(&self) -> RecordBatchBuildError {
        RecordBatchBuildError::OffsetDeltaOverflow {
            offset: i64::MAX,
            base_offset: self.base_offset,
        }
    }

    /// Appends `record` at `offset`: offsets must increase strictly, with
    /// gaps allowed (as the cleaner writes retained records), and stay
    /// within a 32-bit delta of the base offset.
    ///
    /// # Errors
    /// A [`RecordBatchBuildError`] if `offset` is not above the previous
    /// record's, is below the base offset or is more than a 32-bit delta
    /// away from it.
    pub fn append_with_offset(
        &mut self,
        offset: i64,
        record: &Record,
    ) -> Result<(), RecordBatchBuildError> {
        self.push(
            offset,
            record.timestamp,
            record.key.as_deref(),
            record.value.as_deref(),
            &record.headers,
        )
    }

    /// Appends a record read from another batch at its own offset, as the
    /// log cleaner copies the records it retains.
    ///
    /// # Errors
    /// As [`append_with_offset`](RecordBatchBuilder::append_with_offset), for
    /// the record's own offset.
    pub fn append_log_record(&mut self, record: &LogRecord) -> Result<(), RecordBatchBuildError> {
        self.push(
            record.offset,
            record.timestamp,
            record.key.as_deref(),
            record.value.as_deref(),
            &record.headers,
        )
    }

    fn push(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<(), RecordBatchBuildError> {
        if let Some(last) = self.last_record_offset
            && offset <= last
        {
            return Err(RecordBatchBuildError::OffsetNotIncreasing {
                offset,
                previous: last,
            });
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
            ("key", key.map_or(0, <[u8]>::len)),
            ("value", value.map_or(0, <[u8]>::len)),
        ] {
            if len > max {
                return Err(too_large(what, len));
            }
        }
        if headers.len() > max {
            return Err(too_large("header list", headers.len()));
        }
        for h in headers {
            let len = h.key.len().max(h.value.as_ref().map_or(0, Bytes::len));
            if len > max {
                return Err(too_large("header", len));
            }
        }
        self.push_checked(offset, timestamp, key, value, headers)
    }

    /// Encodes a record that passed `push`'s checks (or a control record,
    /// well formed by construction) at the end of the buffer.
    fn push_checked(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        headers: &[Header],
    ) -> Result<(), RecordBatchBuildError> {
        let max = i32::MAX as usize;
        let base_timestamp = self.base_timestamp().unwrap_or(timestamp);
        let offset_delta = offset_delta(self.base_offset, offset);
        let timestamp_delta = timestamp.wrapping_sub(base_timestamp);
        let body = record_body_size(
            offset_delta,
            timestamp_delta,
            key.map(<[u8]>::len),
            value.map(<[u8]>::len),
            headers,
        );
        let framed = framed_size(body);
        let size = self.estimated_size_in_bytes().saturating_add(framed);
        if size > max {
            return Err(RecordBatchBuildError::TooLarge {
                offset,
                what: "batch",
                size,
            });
        }
        if self.buf.is_empty() {
            // Room for the header and, with a count from `with_capacity`,
            // that many records of this one's size (a varint or two more
            // each, for growing offset deltas), up to 1 MiB (Kafka's
            // default `max.message.bytes`); past that the buffer grows.
            let first = RECORD_BATCH_OVERHEAD.saturating_add(framed);
            let rest = self.expected_records.saturating_sub(1);
            let room = first
                .saturating_add(rest.saturating_mul(framed.saturating_add(2)))
                .min(first.max(1 << 20));
            self.buf.reserve_exact(room);
            self.buf.resize(RECORD_BATCH_OVERHEAD, 0);
        }
        write_record(
            &mut self.buf,
            body,
            offset_delta,
            timestamp_delta,
            key,
            value,
            headers,
        );
        debug_assert_eq!(self.buf.len(), size, "the size accounting matches");
        if self.first_timestamp.is_none() {
            self.first_timestamp = Some(timestamp);
        }
        self.last_record_offset = Some(offset);
        self.count += 1;
        if timestamp > self.max_timestamp {
            self.max_timestamp = timestamp;
        }
        Ok(())
    }

    /// Writes the batch: the header, the records, the CRC-32C over the
    /// attributes to the end. Fails for an empty builder, for the first
    /// error an [`append`](RecordBatchBuilder::append) met, and for
    /// producer state Kafka's builder refuses (`validateProducerState`).
    ///
    /// # Errors
    /// [`RecordBatchBuildError::Empty`] if no record was appended, the first
    /// error an append met, or the error for producer state Kafka refuses.
    pub fn build(self) -> Result<RecordBatch, RecordBatchBuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.is_empty() {
            return Err(RecordBatchBuildError::Empty {
                base_offset: self.base_offset,
            });
        }
        if let (Some(last), Some(record_offset)) = (self.last_offset, self.last_record_offset) {
            if last < record_offset {
                return Err(RecordBatchBuildError::OffsetNotIncreasing {
                    offset: last,
                    previous: record_offset,
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
            .or(self.last_record_offset)
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
        let mut out = self.buf;
        if out.is_empty() {
            out.resize(RECORD_BATCH_OVERHEAD, 0);
        }
        let length = i32::try_from(out.len().saturating_sub(LOG_OVERHEAD)).unwrap_or(i32::MAX);
        let count = i32::try_from(self.count).unwrap_or(i32::MAX);
        let mut header = [0u8; RECORD_BATCH_OVERHEAD];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            header[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&self.base_offset.to_be_bytes());
        put(&length.to_be_bytes());
        put(&self.partition_leader_epoch.to_be_bytes());
        put(&[MAGIC_VALUE_V2 as u8]);
        put(&[0; 4]); // the CRC, once the rest is written
        put(&attributes.raw().to_be_bytes());
        put(&offset_delta(self.base_offset, last_offset).to_be_bytes());
        put(&base_timestamp.to_be_bytes());
        put(&max_timestamp.to_be_bytes());
        put(&self.producer_id.to_be_bytes());
        put(&self.producer_epoch.to_be_bytes());
        put(&self.base_sequence.to_be_bytes());
        put(&count.to_be_bytes());
        debug_assert_eq!(at, RECORD_BATCH_OVERHEAD);
        out[..RECORD_BATCH_OVERHEAD].copy_from_slice(&header);
        let crc = crc32c::crc32c(out.get(ATTRIBUTES_OFFSET..).unwrap_or_default());
        if let Some(dst) = out.get_mut(CRC_OFFSET..CRC_OFFSET + 4) {
            dst.copy_from_slice(&crc.to_be_bytes());
        }
        RecordBatch::from_valid(Bytes::from(out))
    }

    /// Appends a record without the checks, for a control batch whose
    /// record is known to be well formed.
    pub(super) fn push_unchecked(&mut self, timestamp: i64, key: Bytes, value: Bytes) {
        let offset = self.next_offset();
        // A control record's key and value are a few bytes: the batch
        // cannot be too large.
        let pushed = self.push_checked(offset, timestamp, Some(&key), Some(&value), &[]);
        debug_assert!(pushed.is_ok(), "a control record fits in a batch");
    }
}

fn offset_delta(base_offset: i64, offset: i64) -> i32 {
    i32::try_from(offset.wrapping_sub(base_offset)).unwrap_or(i32::MAX)
}

/// A record's size with its length varint, from its body size.
fn framed_size(body: usize) -> usize {
    body.saturating_add(varint::size_of_varint(
        i32::try_from(body).unwrap_or(i32::MAX),
    ))
}

/// A few varints written into a small buffer, appended to the batch at
/// once (one bounds check rather than one a byte).
struct Varints {
    bytes: [u8; 32],
    len: usize,
}

impl Varints {
    fn new() -> Varints {
        Varints {
            bytes: [0; 32],
            len: 0,
        }
    }

    /// At most 32 bytes of varints in all: 3 varints and a varlong, or
    /// fewer (the callers' counts).
    #[inline]
    fn put_unsigned(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes[self.len] = (value as u8) | 0x80;
            self.len += 1;
            value >>= 7;
        }
        self.bytes[self.len] = value as u8;
        self.len += 1;
    }

    #[inline]
    fn put_varint(&mut self, value: i32) {
        self.put_unsigned(u64::from(((value << 1) ^ (value >> 31)) as u32));
    }

    #[inline]
    fn put_varlong(&mut self, value: i64) {
        self.put_unsigned(((value << 1) ^ (value >> 63)) as u64);
    }

    #[inline]
    fn put_byte(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    #[inline]
    fn flush(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.bytes[..self.len]);
        self.len = 0;
    }
}

fn len_varint(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

fn put_nullable(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => put_varint(out, -1),
        Some(bytes) => {
            put_varint(out, len_varint(bytes.len()));
            out.extend_from_slice(bytes);
        }
    }
}

/// `DefaultRecord.writeTo`, for a record whose body size is `body`.
fn write_record(
    out: &mut Vec<u8>,
    body: usize,
    offset_delta: i32,
    timestamp_delta: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[Header],
) {
    // length (5) + attributes (1) + timestamp delta (10) + offset delta
    // (5) + key length (5): 26 bytes at most.
    let mut v = Varints::new();
    v.put_varint(len_varint(body));
    v.put_byte(0); // record attributes: none are used
    v.put_varlong(timestamp_delta);
    v.put_varint(offset_delta);
    match key {
        None => v.put_varint(-1),
        Some(key) => {
            v.put_varint(len_varint(key.len()));
            v.flush(out);
            out.extend_from_slice(key);
        }
    }
    // value length (5) + header count (5) when there is no key's bytes
    // between: 26 + 10 bytes at most before a flush.
    match value {
        None => v.put_varint(-1),
        Some(value) => {
            v.put_varint(len_varint(value.len()));
            v.flush(out);
            out.extend_from_slice(value);
        }
    }
    v.put_varint(len_varint(headers.len()));
    v.flush(out);
    for h in headers {
        put_nullable(out, Some(h.key.as_bytes()));
        put_nullable(out, h.value.as_deref());
    }
}

/// The records of `buf` (a builder's buffer: header room, then records)
/// with their timestamp deltas taken from `old_base` to `new_base`; every
/// other byte of each record as it was.
fn rebase_timestamps(buf: &[u8], old_base: i64, new_base: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(buf.len() + 16);
    out.extend_from_slice(&buf[..RECORD_BATCH_OVERHEAD]);
    let mut pos = RECORD_BATCH_OVERHEAD;
    while pos < buf.len() {
        // The builder wrote these records: their framing is valid.
        let Some(size) = varint::read_varint(buf, &mut pos) else {
            break;
        };
        let end = pos + usize::try_from(size).unwrap_or(0);
        let mut p = pos + 1; // attributes
        let Some(delta) = varint::read_varlong(buf, &mut p) else {
            break;
        };
        let timestamp = old_base.wrapping_add(delta);
        let rest = &buf[p..end];
        let mut v = Varints::new();
        v.put_byte(0);
        v.put_varlong(timestamp.wrapping_sub(new_base));
        let body = v.len + rest.len();
        let mut framed = Varints::new();
        framed.put_varint(len_varint(body));
        framed.flush(&mut out);
        v.flush(&mut out);
        out.extend_from_slice(rest);
        pos = end;
    }
    out
}
