//! One encoded v2 record batch (`DefaultRecordBatch`): its header fields,
//! validation of foreign bytes, its records, and the broker's rewrites.

use std::fmt;

use bytes::Bytes;

use super::varint::{read_varint, read_varlong};
use super::{
    CorruptRecordError, Header, LOG_OVERHEAD, LogRecord, MAGIC_VALUE_V2, NO_SEQUENCE,
    RECORD_BATCH_OVERHEAD, TimestampType,
};

pub(super) const BASE_OFFSET_OFFSET: usize = 0;
pub(super) const LENGTH_OFFSET: usize = 8;
pub(super) const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
pub(super) const MAGIC_OFFSET: usize = 16;
pub(super) const CRC_OFFSET: usize = 17;
pub(super) const ATTRIBUTES_OFFSET: usize = 21;
pub(super) const LAST_OFFSET_DELTA_OFFSET: usize = 23;
pub(super) const BASE_TIMESTAMP_OFFSET: usize = 27;
pub(super) const MAX_TIMESTAMP_OFFSET: usize = 35;
pub(super) const PRODUCER_ID_OFFSET: usize = 43;
pub(super) const PRODUCER_EPOCH_OFFSET: usize = 51;
pub(super) const BASE_SEQUENCE_OFFSET: usize = 53;
pub(super) const RECORDS_COUNT_OFFSET: usize = 57;

pub(super) const COMPRESSION_CODEC_MASK: i16 = 0x07;
pub(super) const TIMESTAMP_TYPE_MASK: i16 = 0x08;
pub(super) const TRANSACTIONAL_FLAG_MASK: i16 = 0x10;
pub(super) const CONTROL_FLAG_MASK: i16 = 0x20;
pub(super) const DELETE_HORIZON_FLAG_MASK: i16 = 0x40;

/// The compression codec named by bits 0-2 of a batch's attributes.
/// Batches written here are always [`None`](CompressionType::None); any
/// other codec is refused by [`RecordBatch::from_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompressionType {
    /// No compression (id 0).
    None,
    /// gzip (id 1).
    Gzip,
    /// snappy (id 2).
    Snappy,
    /// lz4 (id 3).
    Lz4,
    /// zstd (id 4).
    Zstd,
    /// An id Kafka does not define (5 to 7).
    Unknown(u8),
}

impl CompressionType {
    /// The codec with the given id (the attributes' bits 0-2).
    pub fn from_id(id: u8) -> CompressionType {
        match id {
            0 => CompressionType::None,
            1 => CompressionType::Gzip,
            2 => CompressionType::Snappy,
            3 => CompressionType::Lz4,
            4 => CompressionType::Zstd,
            other => CompressionType::Unknown(other),
        }
    }
}

impl fmt::Display for CompressionType {
    /// Kafka's names (`compression.type`): `none`, `gzip`, `snappy`, `lz4`, `zstd`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompressionType::None => f.write_str("none"),
            CompressionType::Gzip => f.write_str("gzip"),
            CompressionType::Snappy => f.write_str("snappy"),
            CompressionType::Lz4 => f.write_str("lz4"),
            CompressionType::Zstd => f.write_str("zstd"),
            CompressionType::Unknown(id) => write!(f, "unknown codec {id}"),
        }
    }
}

/// A batch's 16-bit attributes: compression (bits 0-2), timestamp type
/// (bit 3), transactional (bit 4), control (bit 5) and the KIP-534 delete
/// horizon flag (bit 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BatchAttributes(i16);

impl BatchAttributes {
    /// Attributes from their raw value.
    pub fn from_raw(raw: i16) -> BatchAttributes {
        BatchAttributes(raw)
    }

    /// Attributes with the given flags and no compression, as Kafka's
    /// `computeAttributes` writes them.
    pub fn new(
        timestamp_type: TimestampType,
        transactional: bool,
        control: bool,
        delete_horizon: bool,
    ) -> BatchAttributes {
        let mut raw = 0;
        if timestamp_type == TimestampType::LogAppendTime {
            raw |= TIMESTAMP_TYPE_MASK;
        }
        if transactional {
            raw |= TRANSACTIONAL_FLAG_MASK;
        }
        if control {
            raw |= CONTROL_FLAG_MASK;
        }
        if delete_horizon {
            raw |= DELETE_HORIZON_FLAG_MASK;
        }
        BatchAttributes(raw)
    }

    /// The raw 16-bit value.
    pub fn raw(self) -> i16 {
        self.0
    }

    /// The compression codec (bits 0-2).
    pub fn compression(self) -> CompressionType {
        CompressionType::from_id((self.0 & COMPRESSION_CODEC_MASK) as u8)
    }

    /// The timestamp type (bit 3).
    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & TIMESTAMP_TYPE_MASK == 0 {
            TimestampType::CreateTime
        } else {
            TimestampType::LogAppendTime
        }
    }

    /// Whether the batch belongs to a transaction (bit 4).
    pub fn is_transactional(self) -> bool {
        self.0 & TRANSACTIONAL_FLAG_MASK != 0
    }

    /// Whether the batch holds control records, such as a transaction marker (bit 5).
    pub fn is_control(self) -> bool {
        self.0 & CONTROL_FLAG_MASK != 0
    }

    /// Whether the base timestamp holds a delete horizon (bit 6, KIP-534).
    pub fn has_delete_horizon(self) -> bool {
        self.0 & DELETE_HORIZON_FLAG_MASK != 0
    }
}

/// One encoded v2 record batch: cheap to clone (a reference-counted
/// buffer), valid by construction (built by
/// [`RecordBatchBuilder`](super::RecordBatchBuilder) or checked by
/// [`from_bytes`](RecordBatch::from_bytes)).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RecordBatch {
    bytes: Bytes,
}

impl RecordBatch {
    /// Wraps bytes the caller has just encoded correctly.
    pub(super) fn from_valid(bytes: Bytes) -> RecordBatch {
        RecordBatch { bytes }
    }

    /// Checks that `bytes` are exactly one valid, uncompressed v2 batch:
    /// at least 61 bytes, a length field that matches, magic 2, a CRC-32C
    /// over the attributes to the end that matches the stored one, no
    /// compression, and records whose framing adds up to exactly the
    /// declared count and size.
    ///
    /// # Errors
    /// A [`CorruptRecordError`] if the bytes are shorter than a batch header,
    /// their length field disagrees with their size, the magic byte is not 2
    /// or the stored CRC does not match the computed one.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use streams_broker::record::{Record, RecordBatch, RecordBatchBuilder};
    ///
    /// let mut builder = RecordBatchBuilder::new(12);
    /// builder.append(&Record::new(Some("k"), Some("v"), 0));
    /// let mut bytes = builder.build()?.as_bytes().to_vec();
    /// *bytes.last_mut().unwrap() ^= 1;
    /// let err = RecordBatch::from_bytes(Bytes::from(bytes)).unwrap_err();
    /// assert!(err.to_string().starts_with("record batch at base offset 12: crc mismatch: stored 0x"));
    /// assert!(err.to_string().ends_with("; the batch is corrupt"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: Bytes) -> Result<RecordBatch, CorruptRecordError> {
        if bytes.len() < RECORD_BATCH_OVERHEAD {
            return Err(CorruptRecordError::TooSmall { size: bytes.len() });
        }
        let batch = RecordBatch { bytes };
        let base_offset = batch.base_offset();
        let declared = LOG_OVERHEAD as i64 + i64::from(batch.i32_at(LENGTH_OFFSET));
        if declared != batch.bytes.len() as i64 {
            return Err(CorruptRecordError::LengthMismatch {
                base_offset,
                declared,
                actual: batch.bytes.len(),
            });
        }
        let magic = batch.magic();
        if magic != MAGIC_VALUE_V2 {
            return Err(CorruptRecordError::UnsupportedMagic { base_offset, magic });
        }
        let stored = batch.crc();
        let computed = batch.compute_crc();
        if stored != computed {
            return Err(CorruptRecordError::CrcMismatch {
                base_offset,
                stored,
                computed,
            });
        }
        let compression = batch.attributes().compression();
        if compression != CompressionType::None {
            return Err(CorruptRecordError::UnsupportedCompression {
                base_offset,
                compression,
            });
        }
        let count = batch.record_count();
        if count < 0 {
            return Err(CorruptRecordError::InvalidRecordCount { base_offset, count });
        }
        let mut pos = RECORD_BATCH_OVERHEAD;
        for index in 0..count {
            match read_record(&batch.bytes, pos) {
                Ok(next) => pos = next,
                Err(reason) => {
                    return Err(CorruptRecordError::InvalidRecord {
                        base_offset,
                        index,
                        position: pos,
                        reason,
                    });
                }
            }
        }
        if pos != batch.bytes.len() {
            return Err(CorruptRecordError::TrailingBytes {
                base_offset,
                count,
                remaining: batch.bytes.len() - pos,
            });
        }
        Ok(batch)
    }

    /// An empty batch in place of `batch`, as Kafka's cleaner writes one
    /// when it removes every record of a batch whose header must stay
    /// (`DefaultRecordBatch.writeEmptyHeader`): the same base and last
    /// offsets, producer id, epoch and base sequence, leader epoch,
    /// timestamp type, max timestamp, transactional and control flags; no
    /// records, the base timestamp -1 and no delete horizon.
    ///
    /// ```
    /// use streams_broker::record::{Record, RecordBatch, RecordBatchBuilder};
    ///
    /// let mut builder = RecordBatchBuilder::new(7).producer(3, 1, 40);
    /// builder.append(&Record::tombstone("k", 50));
    /// builder.append(&Record::tombstone("k", 60));
    /// let empty = RecordBatch::empty_like(&builder.build()?);
    /// assert_eq!((empty.base_offset(), empty.last_offset(), empty.record_count()), (7, 8, 0));
    /// assert_eq!((empty.last_sequence(), empty.max_timestamp(), empty.base_timestamp()), (41, 60, -1));
    /// assert_eq!(empty.size_in_bytes(), 61);
    /// assert_eq!(RecordBatch::from_bytes(empty.as_bytes().clone())?, empty);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn empty_like(batch: &RecordBatch) -> RecordBatch {
        let attributes = BatchAttributes::new(
            batch.timestamp_type(),
            batch.is_transactional(),
            batch.is_control(),
            false,
        );
        let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD);
        out.extend_from_slice(&batch.base_offset().to_be_bytes());
        out.extend_from_slice(&((RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) as i32).to_be_bytes());
        out.extend_from_slice(&batch.partition_leader_epoch().to_be_bytes());
        out.push(MAGIC_VALUE_V2 as u8);
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&attributes.raw().to_be_bytes());
        out.extend_from_slice(&batch.last_offset_delta().to_be_bytes());
        out.extend_from_slice(&super::NO_TIMESTAMP.to_be_bytes());
        out.extend_from_slice(&batch.max_timestamp().to_be_bytes());
        out.extend_from_slice(&batch.producer_id().to_be_bytes());
        out.extend_from_slice(&batch.producer_epoch().to_be_bytes());
        out.extend_from_slice(&batch.base_sequence().to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        let crc = crc32c::crc32c(out.get(ATTRIBUTES_OFFSET..).unwrap_or_default());
        put(&mut out, CRC_OFFSET, &crc.to_be_bytes());
        RecordBatch {
            bytes: Bytes::from(out),
        }
    }

    /// Splits bytes holding batches back to back (a log segment, a fetch
    /// response) into validated batches.
    ///
    /// # Errors
    /// A [`CorruptRecordError`] if the bytes end in the middle of a batch or
    /// any batch fails the checks of [`from_bytes`](RecordBatch::from_bytes).
    pub fn split_batches(bytes: Bytes) -> Result<Vec<RecordBatch>, CorruptRecordError> {
        let mut batches = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            if rest.len() < RECORD_BATCH_OVERHEAD {
                return Err(CorruptRecordError::TooSmall { size: rest.len() });
            }
            let length = i64::from(i32_at(&rest, LENGTH_OFFSET));
            let size = LOG_OVERHEAD as i64 + length;
            if size < RECORD_BATCH_OVERHEAD as i64 || size > rest.len() as i64 {
                return Err(CorruptRecordError::LengthMismatch {
                    base_offset: i64_at(&rest, BASE_OFFSET_OFFSET),
                    declared: size,
                    actual: rest.len(),
                });
            }
            let tail = rest.split_off(size as usize);
            batches.push(RecordBatch::from_bytes(rest)?);
            rest = tail;
        }
        Ok(batches)
    }

    /// The encoded batch.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The encoded batch, given up.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// The batch's size in bytes, header included.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    fn i16_at(&self, at: usize) -> i16 {
        self.bytes
            .get(at..at + 2)
            .and_then(|b| b.try_into().ok())
            .map_or(0, i16::from_be_bytes)
    }

    fn i32_at(&self, at: usize) -> i32 {
        i32_at(&self.bytes, at)
    }

    fn i64_at(&self, at: usize) -> i64 {
        i64_at(&self.bytes, at)
    }

    /// The offset of the first record (before compaction: the first offset the batch held).
    pub fn base_offset(&self) -> i64 {
        self.i64_at(BASE_OFFSET_OFFSET)
    }

    /// The last record's offset minus the base offset, kept through compaction.
    pub fn last_offset_delta(&self) -> i32 {
        self.i32_at(LAST_OFFSET_DELTA_OFFSET)
    }

    /// The last offset the batch covers.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(i64::from(self.last_offset_delta()))
    }

    /// The offset after the batch: its last offset plus one.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// The leader epoch the broker stamped on the batch (-1 before that).
    pub fn partition_leader_epoch(&self) -> i32 {
        self.i32_at(PARTITION_LEADER_EPOCH_OFFSET)
    }

    /// The magic byte: always 2.
    pub fn magic(&self) -> i8 {
        self.bytes.get(MAGIC_OFFSET).map_or(0, |&b| b as i8)
    }

    /// The attributes.
    pub fn attributes(&self) -> BatchAttributes {
        BatchAttributes(self.i16_at(ATTRIBUTES_OFFSET))
    }

    /// The base timestamp: the first record's timestamp, or the delete
    /// horizon when the KIP-534 flag is set.
    pub fn base_timestamp(&self) -> i64 {
        self.i64_at(BASE_TIMESTAMP_OFFSET)
    }

    /// The largest record timestamp, or the broker's append time in a
    /// `LogAppendTime` batch.
    pub fn max_timestamp(&self) -> i64 {
        self.i64_at(MAX_TIMESTAMP_OFFSET)
    }

    /// The producer id, or -1.
    pub fn producer_id(&self) -> i64 {
        self.i64_at(PRODUCER_ID_OFFSET)
    }

    /// The producer epoch, or -1.
    pub fn producer_epoch(&self) -> i16 {
        self.i16_at(PRODUCER_EPOCH_OFFSET)
    }

    /// The first record's sequence number, or -1.
    pub fn base_sequence(&self) -> i32 {
        self.i32_at(BASE_SEQUENCE_OFFSET)
    }

    /// The last record's sequence number, wrapping past `i32::MAX` to 0 as
    /// Kafka's `incrementSequence` does; -1 without a base sequence.
    pub fn last_sequence(&self) -> i32 {
        let base = self.base_sequence();
        if base == NO_SEQUENCE {
            return NO_SEQUENCE;
        }
        increment_sequence(base, self.last_offset_delta())
    }

    /// How many records the batch holds.
    pub fn record_count(&self) -> i32 {
        self.i32_at(RECORDS_COUNT_OFFSET)
    }

    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        self.i32_at(CRC_OFFSET) as u32
    }

    /// The CRC-32C of the bytes from the attributes to the end.
    fn compute_crc(&self) -> u32 {
        crc32c::crc32c(self.bytes.get(ATTRIBUTES_OFFSET..).unwrap_or_default())
    }

    /// The timestamp type.
    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes().timestamp_type()
    }

    /// Whether the batch belongs to a transaction.
    pub fn is_transactional(&self) -> bool {
        self.attributes().is_transactional()
    }

    /// Whether the batch holds control records.
    pub fn is_control(&self) -> bool {
        self.attributes().is_control()
    }

    /// The KIP-534 delete horizon: the base timestamp when the flag is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes()
            .has_delete_horizon()
            .then(|| self.base_timestamp())
    }

    /// The records, in offset order. Key, value and header values are
    /// slices of the batch's buffer.
    pub fn records(&self) -> RecordIter<'_> {
        let log_append_time =
            (self.timestamp_type() == TimestampType::LogAppendTime).then(|| self.max_timestamp());
        RecordIter {
            data: &self.bytes,
            pos: RECORD_BATCH_OVERHEAD,
            remaining: self.record_count().max(0),
            base_offset: self.base_offset(),
            base_timestamp: self.base_timestamp(),
            log_append_time,
        }
    }

    /// The records' offsets and keys, and whether their values are null,
    /// read in place: no copies, no reference counts, headers skipped (the
    /// cleaner's offset map reads every record this way).
    pub(crate) fn record_keys(&self) -> RecordKeys<'_> {
        RecordKeys {
            data: &self.bytes,
            pos: RECORD_BATCH_OVERHEAD,
            remaining: self.record_count().max(0),
            base_offset: self.base_offset(),
        }
    }

    fn rewritten(&self, edit: impl FnOnce(&mut [u8])) -> RecordBatch {
        let mut bytes = self.bytes.to_vec();
        edit(&mut bytes);
        RecordBatch {
            bytes: Bytes::from(bytes),
        }
    }

    /// This batch with `edit` applied to its bytes: in place when nothing
    /// else shares its buffer (a batch a producer has just built), else on
    /// a copy.
    fn into_rewritten(self, edit: impl FnOnce(&mut [u8])) -> RecordBatch {
        match self.bytes.try_into_mut() {
            Ok(mut bytes) => {
                edit(&mut bytes);
                RecordBatch {
                    bytes: bytes.freeze(),
                }
            }
            Err(bytes) => RecordBatch { bytes }.rewritten(edit),
        }
    }

    /// [`with_base_offset`](RecordBatch::with_base_offset) and
    /// [`with_partition_leader_epoch`](RecordBatch::with_partition_leader_epoch)
    /// at once, on the batch itself when its buffer is not shared: the
    /// leader's stamp on append (both fields are outside the CRC).
    pub(crate) fn into_stamped(self, base_offset: i64, epoch: i32) -> RecordBatch {
        if self.base_offset() == base_offset && self.partition_leader_epoch() == epoch {
            return self;
        }
        self.into_rewritten(|b| {
            put(b, BASE_OFFSET_OFFSET, &base_offset.to_be_bytes());
            put(b, PARTITION_LEADER_EPOCH_OFFSET, &epoch.to_be_bytes());
        })
    }

    /// This batch with another base offset, as the broker assigns offsets
    /// on append. The base offset is outside the CRC, so the CRC stays.
    #[must_use]
    pub fn with_base_offset(&self, base_offset: i64) -> RecordBatch {
        self.rewritten(|b| put(b, BASE_OFFSET_OFFSET, &base_offset.to_be_bytes()))
    }

    /// This batch with another partition leader epoch, as the leader stamps
    /// it on append. The epoch is outside the CRC, so the CRC stays.
    #[must_use]
    pub fn with_partition_leader_epoch(&self, epoch: i32) -> RecordBatch {
        self.rewritten(|b| put(b, PARTITION_LEADER_EPOCH_OFFSET, &epoch.to_be_bytes()))
    }

    /// This batch with the given timestamp type and max timestamp, the
    /// CRC recomputed (Kafka's `setMaxTimestamp`): attributes are rewritten
    /// from their known flags, and a batch that already has both is
    /// returned as it is.
    #[must_use]
    pub fn with_max_timestamp(
        &self,
        timestamp_type: TimestampType,
        max_timestamp: i64,
    ) -> RecordBatch {
        if self.timestamp_type() == timestamp_type && self.max_timestamp() == max_timestamp {
            return self.clone();
        }
        let old = self.attributes();
        let attributes = BatchAttributes::new(
            timestamp_type,
            old.is_transactional(),
            old.is_control(),
            old.has_delete_horizon(),
        )
        .raw()
            | (old.raw() & COMPRESSION_CODEC_MASK);
        self.rewritten(|b| {
            put(b, ATTRIBUTES_OFFSET, &attributes.to_be_bytes());
            put(b, MAX_TIMESTAMP_OFFSET, &max_timestamp.to_be_bytes());
            let crc = crc32c::crc32c(b.get(ATTRIBUTES_OFFSET..).unwrap_or_default());
            put(b, CRC_OFFSET, &crc.to_be_bytes());
        })
    }

    /// This batch stamped with the broker's clock for a `LogAppendTime`
    /// topic: the timestamp type bit set, the max timestamp `now_ms`, the
    /// CRC recomputed. Every record then reads back with `now_ms`.
    #[must_use]
    pub fn with_log_append_time(&self, now_ms: i64) -> RecordBatch {
        self.with_max_timestamp(TimestampType::LogAppendTime, now_ms)
    }
}

impl fmt::Debug for RecordBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordBatch")
            .field("base_offset", &self.base_offset())
            .field("last_offset", &self.last_offset())
            .field("record_count", &self.record_count())
            .field("partition_leader_epoch", &self.partition_leader_epoch())
            .field("attributes", &self.attributes())
            .field("base_timestamp", &self.base_timestamp())
            .field("max_timestamp", &self.max_timestamp())
            .field("producer_id", &self.producer_id())
            .field("producer_epoch", &self.producer_epoch())
            .field("base_sequence", &self.base_sequence())
            .field("crc", &format_args!("{:#010x}", self.crc()))
            .field("size_in_bytes", &self.size_in_bytes())
            .finish()
    }
}

impl<'a> IntoIterator for &'a RecordBatch {
    type Item = LogRecord;
    type IntoIter = RecordIter<'a>;

    fn into_iter(self) -> RecordIter<'a> {
        self.records()
    }
}

/// The records of a [`RecordBatch`], from [`RecordBatch::records`].
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    data: &'a Bytes,
    pos: usize,
    remaining: i32,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
}

impl RecordIter<'_> {
    /// Reads the record at `pos` of a batch known to be valid (its framing
    /// was checked by `read_record` when the batch was built or read in):
    /// the same fields, without working out why bytes would be wrong.
    /// `None` only for bytes that are not a valid batch.
    #[inline]
    fn read_valid(&mut self) -> Option<LogRecord> {
        let data: &[u8] = self.data;
        let mut p = self.pos;
        let size = usize::try_from(read_varint(data, &mut p)?).ok()?;
        let end = p.checked_add(size)?;
        let body = data.get(..end)?;
        p += 1; // attributes
        let timestamp_delta = read_varlong(body, &mut p)?;
        let offset_delta = read_varint(body, &mut p)?;
        let key = read_range(body, &mut p)?;
        let value = read_range(body, &mut p)?;
        let count = usize::try_from(read_varint(body, &mut p)?).ok()?;
        let mut headers = Vec::new();
        if count > 0 {
            headers.reserve_exact(count.min(body.len().saturating_sub(p)));
            for _ in 0..count {
                let key_len = usize::try_from(read_varint(body, &mut p)?).ok()?;
                let key_end = p.checked_add(key_len)?;
                let key = std::str::from_utf8(body.get(p..key_end)?).ok()?;
                p = key_end;
                let value = read_range(body, &mut p)?;
                headers.push(Header {
                    key: key.to_owned(),
                    value: value.map(|(s, e)| self.data.slice(s..e)),
                });
            }
        }
        if p != end {
            return None;
        }
        self.pos = end;
        let slice =
            |range: Option<(usize, usize)>| range.map(|(start, end)| self.data.slice(start..end));
        Some(LogRecord {
            offset: self.base_offset.wrapping_add(i64::from(offset_delta)),
            timestamp: self
                .log_append_time
                .unwrap_or(self.base_timestamp.wrapping_add(timestamp_delta)),
            key: slice(key),
            value: slice(value),
            headers,
        })
    }
}

/// A nullable field's byte range in a valid record: `Some(None)` for null.
#[inline]
fn read_range(body: &[u8], pos: &mut usize) -> Option<Option<(usize, usize)>> {
    let len = read_varint(body, pos)?;
    if len < 0 {
        return Some(None);
    }
    let start = *pos;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    if end > body.len() {
        return None;
    }
    *pos = end;
    Some(Some((start, end)))
}

impl Iterator for RecordIter<'_> {
    type Item = LogRecord;

    #[inline]
    fn next(&mut self) -> Option<LogRecord> {
        if self.remaining <= 0 {
            return None;
        }
        let Some(record) = self.read_valid() else {
            // Unreachable for a validated batch; end rather than fail.
            self.remaining = 0;
            return None;
        };
        self.remaining -= 1;
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(0);
        (n, Some(n))
    }
}

impl ExactSizeIterator for RecordIter<'_> {}

/// A record's offset and key, and whether its value is null, borrowed from
/// its batch ([`RecordBatch::record_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordKey<'a> {
    pub(crate) offset: i64,
    pub(crate) key: Option<&'a [u8]>,
    pub(crate) null_value: bool,
}

/// The records of a batch as [`RecordKey`]s.
#[derive(Debug, Clone)]
pub(crate) struct RecordKeys<'a> {
    data: &'a [u8],
    pos: usize,
    remaining: i32,
    base_offset: i64,
}

impl<'a> RecordKeys<'a> {
    fn read(&mut self) -> Option<RecordKey<'a>> {
        let data = self.data;
        let mut p = self.pos;
        let size = usize::try_from(read_varint(data, &mut p)?).ok()?;
        let end = p.checked_add(size)?;
        let body = data.get(..end)?;
        p += 1; // attributes
        read_varlong(body, &mut p)?;
        let offset_delta = read_varint(body, &mut p)?;
        let key_len = read_varint(body, &mut p)?;
        let key = if key_len < 0 {
            None
        } else {
            let start = p;
            p = p.checked_add(usize::try_from(key_len).ok()?)?;
            Some(body.get(start..p)?)
        };
        let null_value = read_varint(body, &mut p)? < 0;
        // The value and the headers are not needed: the record ends where
        // its length says (checked when the batch was validated).
        self.pos = end;
        Some(RecordKey {
            offset: self.base_offset.wrapping_add(i64::from(offset_delta)),
            key,
            null_value,
        })
    }
}

impl<'a> Iterator for RecordKeys<'a> {
    type Item = RecordKey<'a>;

    #[inline]
    fn next(&mut self) -> Option<RecordKey<'a>> {
        if self.remaining <= 0 {
            return None;
        }
        let Some(record) = self.read() else {
            // Unreachable for a validated batch; end rather than fail.
            self.remaining = 0;
            return None;
        };
        self.remaining -= 1;
        Some(record)
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap from
/// `i32::MAX` to 0.
pub(super) fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    // Java's int arithmetic, wrapping, for any delta the bytes hold.
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

fn put(bytes: &mut [u8], at: usize, value: &[u8]) {
    if let Some(dst) = bytes.get_mut(at..at + value.len()) {
        dst.copy_from_slice(value);
    }
}

fn i32_at(bytes: &[u8], at: usize) -> i32 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i32::from_be_bytes)
}

fn i64_at(bytes: &[u8], at: usize) -> i64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, i64::from_be_bytes)
}

/// Reads a nullable byte field (a varint length, -1 or any negative for
/// null, then the bytes) within `data`, as Kafka's `Utils.readBytes`.
fn read_nullable(
    data: &[u8],
    pos: &mut usize,
    what: &str,
) -> Result<Option<(usize, usize)>, String> {
    let len =
        read_varint(data, pos).ok_or_else(|| format!("{what} length is truncated or malformed"))?;
    if len < 0 {
        return Ok(None);
    }
    let start = *pos;
    let end = start.saturating_add(len as usize);
    if end > data.len() {
        return Err(format!(
            "{what} of {len} bytes runs past the record's end ({} bytes remain)",
            data.len() - start
        ));
    }
    *pos = end;
    Ok(Some((start, end)))
}

/// Checks the record at `pos` as Kafka's `DefaultRecord.readFrom` reads
/// it: its framing, its fields, its headers. Returns the position after
/// it. (Reading a checked batch's records is `RecordIter`'s.)
pub(super) fn read_record(data: &Bytes, pos: usize) -> Result<usize, String> {
    let mut p = pos;
    let size = read_varint(data, &mut p).ok_or("record length is truncated or malformed")?;
    if size < 0 {
        return Err(format!("invalid record size {size}"));
    }
    let end = p.saturating_add(size as usize);
    if end > data.len() {
        return Err(format!(
            "invalid record size: expected {size} bytes in record payload, but only {} bytes remain",
            data.len() - p
        ));
    }
    let body_start = p;
    let body = data.get(..end).ok_or("record runs past the batch")?;
    let _attributes = *body.get(p).ok_or("record has no attributes byte")?;
    p += 1;
    read_varlong(body, &mut p).ok_or("timestamp delta is truncated or malformed")?;
    read_varint(body, &mut p).ok_or("offset delta is truncated or malformed")?;
    read_nullable(body, &mut p, "key")?;
    read_nullable(body, &mut p, "value")?;
    let count = read_varint(body, &mut p).ok_or("header count is truncated or malformed")?;
    if count < 0 {
        return Err(format!("found invalid number of record headers {count}"));
    }
    if count as usize > body.len() - p {
        return Err(format!(
            "found invalid number of record headers: {count} is larger than the remaining size of the record"
        ));
    }
    for index in 0..count {
        let key_len =
            read_varint(body, &mut p).ok_or("header key length is truncated or malformed")?;
        if key_len < 0 {
            return Err(format!("invalid negative header key size {key_len}"));
        }
        let key_start = p;
        let key_end = p.saturating_add(key_len as usize);
        let key_bytes = body.get(key_start..key_end).ok_or_else(|| {
            format!("header {index} key of {key_len} bytes runs past the record's end")
        })?;
        std::str::from_utf8(key_bytes)
            .map_err(|e| format!("header {index} key is not valid utf-8: {e}"))?;
        p = key_end;
        read_nullable(body, &mut p, "header value")?;
    }
    if p != end {
        return Err(format!(
            "invalid record size: expected to read {size} bytes in record payload, but instead read {}",
            p - body_start
        ));
    }
    Ok(end)
}
