//! What can be wrong with bytes that claim to be a batch, and with a batch
//! a builder is asked to write.

use super::RECORD_BATCH_OVERHEAD;
use super::batch::CompressionType;

/// Bytes that are not a valid, uncompressed v2 record batch, as Kafka's
/// `CorruptRecordException` and `InvalidRecordException` report them.
///
/// Every variant but [`TooSmall`](CorruptRecordError::TooSmall) names the
/// base offset the batch claims, so that a log can say which batch is bad.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CorruptRecordError {
    /// Fewer bytes than the fixed 61-byte batch header.
    #[error(
        "record batch is {size} bytes, smaller than the minimum batch overhead of {RECORD_BATCH_OVERHEAD} bytes; the batch is truncated"
    )]
    TooSmall {
        /// How many bytes were given.
        size: usize,
    },
    /// The batch length field does not match the bytes given.
    #[error(
        "record batch at base offset {base_offset}: the length field gives a batch of {declared} bytes, but {actual} bytes were given"
    )]
    LengthMismatch {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The batch size the length field gives (length plus the 12 bytes of offset and length).
        declared: i64,
        /// How many bytes were given.
        actual: usize,
    },
    /// A magic byte other than 2: the v0 and v1 message formats are not supported.
    #[error(
        "record batch at base offset {base_offset}: magic {magic} is unsupported; only the v2 format (magic 2) is read"
    )]
    UnsupportedMagic {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The magic byte found.
        magic: i8,
    },
    /// The stored CRC-32C does not match the bytes from the attributes to the end.
    #[error(
        "record batch at base offset {base_offset}: crc mismatch: stored {stored:#010x}, computed {computed:#010x}; the batch is corrupt"
    )]
    CrcMismatch {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The CRC stored in the batch.
        stored: u32,
        /// The CRC computed over the bytes.
        computed: u32,
    },
    /// A compressed batch: the simulated broker stores uncompressed batches only.
    #[error(
        "record batch at base offset {base_offset}: compression {compression} is unsupported; the simulated broker reads uncompressed batches (compression.type=none) only"
    )]
    UnsupportedCompression {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The compression the attributes name.
        compression: CompressionType,
    },
    /// A negative record count.
    #[error("record batch at base offset {base_offset}: invalid record count {count}")]
    InvalidRecordCount {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The record count found.
        count: i32,
    },
    /// A record whose framing is broken.
    #[error(
        "record batch at base offset {base_offset}: record {index} (at byte {position}): {reason}"
    )]
    InvalidRecord {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The record's index in the batch, from 0.
        index: i32,
        /// Where the record starts in the batch.
        position: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Bytes left over after the declared number of records.
    #[error(
        "record batch at base offset {base_offset}: {remaining} bytes remain after the {count} records the batch declares; incorrect declared batch size"
    )]
    TrailingBytes {
        /// The base offset the batch claims.
        base_offset: i64,
        /// The record count the batch declares.
        count: i32,
        /// How many bytes are left over.
        remaining: usize,
    },
}

/// A batch that [`RecordBatchBuilder`](super::RecordBatchBuilder) refuses to
/// write, for the reasons Kafka's `MemoryRecordsBuilder` refuses it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordBatchBuildError {
    /// No records were appended: Kafka's builder writes no batch at all then.
    #[error(
        "record batch at base offset {base_offset} has no records; an empty batch is not written"
    )]
    Empty {
        /// The builder's base offset.
        base_offset: i64,
    },
    /// An offset not above the previous record's.
    #[error(
        "illegal offset {offset} following previous offset {previous} (offsets must increase monotonically)"
    )]
    OffsetNotIncreasing {
        /// The offset given.
        offset: i64,
        /// The previous record's offset.
        previous: i64,
    },
    /// An offset below the batch's base offset.
    #[error("illegal offset {offset} below the batch's base offset {base_offset}")]
    OffsetBelowBase {
        /// The offset given.
        offset: i64,
        /// The builder's base offset.
        base_offset: i64,
    },
    /// An offset too far above the base offset for a 32-bit offset delta.
    #[error("maximum offset delta exceeded, base offset: {base_offset}, last offset: {offset}")]
    OffsetDeltaOverflow {
        /// The offset given.
        offset: i64,
        /// The builder's base offset.
        base_offset: i64,
    },
    /// A timestamp below -1 (`NO_TIMESTAMP`).
    #[error("invalid negative timestamp {timestamp} for the record at offset {offset}")]
    InvalidTimestamp {
        /// The record's offset.
        offset: i64,
        /// The timestamp given.
        timestamp: i64,
    },
    /// A key, value or header longer than a 32-bit length can say, or a batch larger than 2 GiB.
    #[error("the record at offset {offset} is too large for the v2 format: {what} of {size} bytes")]
    TooLarge {
        /// The record's offset.
        offset: i64,
        /// What is too large (`"key"`, `"value"`, `"header"`, `"batch"`).
        what: &'static str,
        /// Its size.
        size: usize,
    },
    /// A transactional batch without a producer id.
    #[error("cannot write transactional messages without a valid producer id")]
    TransactionalWithoutProducerId,
    /// A producer id with the epoch -1.
    #[error("invalid negative producer epoch {producer_epoch} for producer id {producer_id}")]
    InvalidProducerEpoch {
        /// The producer id.
        producer_id: i64,
        /// The producer epoch.
        producer_epoch: i16,
    },
    /// A producer id with a negative base sequence, outside a control batch.
    #[error("invalid negative sequence number {base_sequence} used for producer id {producer_id}")]
    InvalidBaseSequence {
        /// The producer id.
        producer_id: i64,
        /// The base sequence.
        base_sequence: i32,
    },
}
