//! Control batches: the end-of-transaction markers a transaction
//! coordinator writes (`ControlRecordType`, `EndTransactionMarker`).

use std::fmt;

use bytes::Bytes;

use super::{LogRecord, NO_SEQUENCE, RecordBatch, RecordBatchBuilder};

/// The kind of a transaction marker: the key of its control record is
/// `version: i16 = 0, type: i16` (Kafka's `ControlRecordType`; the KRaft
/// types are not written by this broker and read back as `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// The transaction was aborted (type 0): consumers reading committed skip its records.
    Abort,
    /// The transaction was committed (type 1).
    Commit,
}

impl ControlRecordType {
    /// The type id in the control record's key.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
        }
    }

    /// The transaction marker type with the given id.
    pub fn from_id(id: i16) -> Option<ControlRecordType> {
        match id {
            0 => Some(ControlRecordType::Abort),
            1 => Some(ControlRecordType::Commit),
            _ => None,
        }
    }

    /// Reads the type from a control record's key (`ControlRecordType.parse`):
    /// at least 4 bytes, a version that is not negative, then the type id.
    pub fn parse_key(key: &[u8]) -> Option<ControlRecordType> {
        let version = i16::from_be_bytes([*key.first()?, *key.get(1)?]);
        if version < 0 {
            return None;
        }
        ControlRecordType::from_id(i16::from_be_bytes([*key.get(2)?, *key.get(3)?]))
    }

    /// The control record's key: version 0, then the type id.
    pub fn record_key(self) -> [u8; 4] {
        let [a, b] = self.id().to_be_bytes();
        [0, 0, a, b]
    }
}

impl fmt::Display for ControlRecordType {
    /// Kafka's enum names: `ABORT`, `COMMIT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
        })
    }
}

/// A transaction marker read back: its kind and the coordinator epoch in
/// its value (`version: i16 = 0, coordinator_epoch: i32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTransactionMarker {
    /// Commit or abort.
    pub kind: ControlRecordType,
    /// The transaction coordinator's epoch.
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    /// Reads a marker from a control record (`EndTransactionMarker.deserialize`).
    pub fn from_record(record: &LogRecord) -> Option<EndTransactionMarker> {
        let kind = ControlRecordType::parse_key(record.key.as_deref()?)?;
        let value = record.value.as_deref()?;
        let version = i16::from_be_bytes([*value.first()?, *value.get(1)?]);
        if version < 0 {
            return None;
        }
        let epoch: [u8; 4] = value.get(2..6)?.try_into().ok()?;
        let coordinator_epoch = i32::from_be_bytes(epoch);
        Some(EndTransactionMarker {
            kind,
            coordinator_epoch,
        })
    }

    /// The control record's value: version 0, then the coordinator epoch.
    pub fn record_value(&self) -> [u8; 6] {
        let [a, b, c, d] = self.coordinator_epoch.to_be_bytes();
        [0, 0, a, b, c, d]
    }
}

/// The control batch that ends a transaction, as Kafka's
/// `MemoryRecords.withEndTransactionMarker` writes it: transactional and
/// control, `CreateTime`, base sequence -1, one record at `base_offset`
/// whose key is the marker type and whose value is the coordinator epoch.
/// Fields are written as given, unchecked.
///
/// ```
/// use streams_broker::record::{ControlRecordType, end_transaction_marker};
///
/// let batch = end_transaction_marker(9, 1_000, 42, 3, 5, 7, ControlRecordType::Commit);
/// assert!(batch.is_control() && batch.is_transactional());
/// assert_eq!(batch.control_record_type(), Some(ControlRecordType::Commit));
/// let marker = batch.end_transaction_marker().unwrap();
/// assert_eq!((marker.kind, marker.coordinator_epoch), (ControlRecordType::Commit, 7));
/// assert_eq!(batch.size_in_bytes(), 61 + 17);
/// ```
pub fn end_transaction_marker(
    base_offset: i64,
    timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    partition_leader_epoch: i32,
    coordinator_epoch: i32,
    kind: ControlRecordType,
) -> RecordBatch {
    let mut builder = RecordBatchBuilder::with_capacity(base_offset, 1)
        .producer(producer_id, producer_epoch, NO_SEQUENCE)
        .transactional(true)
        .control(true)
        .partition_leader_epoch(partition_leader_epoch);
    let marker = EndTransactionMarker {
        kind,
        coordinator_epoch,
    };
    builder.push_unchecked(
        timestamp,
        Bytes::copy_from_slice(&kind.record_key()),
        Bytes::copy_from_slice(&marker.record_value()),
    );
    builder.encode()
}

impl RecordBatch {
    /// The type of a control batch's record, or `None` for a data batch or
    /// a control record of another kind.
    pub fn control_record_type(&self) -> Option<ControlRecordType> {
        if !self.is_control() {
            return None;
        }
        ControlRecordType::parse_key(self.records().next()?.key.as_deref()?)
    }

    /// The transaction marker a control batch holds, or `None`.
    pub fn end_transaction_marker(&self) -> Option<EndTransactionMarker> {
        if !self.is_control() {
            return None;
        }
        EndTransactionMarker::from_record(&self.records().next()?)
    }
}
