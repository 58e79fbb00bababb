//! Exact bytes derived by hand from Kafka's `DefaultRecordBatch.writeHeader`
//! and `DefaultRecord.writeTo` (checked with an independent bit-by-bit
//! CRC-32C), round trips, rewrites, and property tests.

#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use proptest::prelude::*;

use super::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn one_record_batch() -> RecordBatch {
    let mut b = RecordBatchBuilder::new(0);
    b.append(&Record::new(Some("k"), Some("v"), 1000));
    b.build().unwrap()
}

#[test]
fn one_record_batch_is_byte_exact() {
    let expected = hex(concat!(
        "0000000000000000", // base offset
        "0000003a",         // length: 70 - 12
        "ffffffff",         // partition leader epoch
        "02",               // magic
        "716a6189",         // crc-32c
        "0000",             // attributes
        "00000000",         // last offset delta
        "00000000000003e8", // base timestamp
        "00000000000003e8", // max timestamp
        "ffffffffffffffff", // producer id
        "ffff",             // producer epoch
        "ffffffff",         // base sequence
        "00000001",         // record count
        "10",
        "00",
        "00",
        "00",
        "026b",
        "0276",
        "00",
    ));
    let batch = one_record_batch();
    assert_eq!(batch.as_bytes().as_ref(), &expected[..]);
    assert_eq!(batch.crc(), 0x716a_6189);
    assert_eq!(batch.size_in_bytes(), RECORD_BATCH_OVERHEAD + 9);
    assert_eq!(record_size_in_bytes(0, 0, Some(1), Some(1), &[]), 9);
}

#[test]
fn end_transaction_marker_is_byte_exact() {
    let batch = end_transaction_marker(5, 1000, 42, 3, 3, 7, ControlRecordType::Commit);
    let expected = hex(concat!(
        "0000000000000005000000420000000302dbc3b9ad0030000000000000000000",
        "0003e800000000000003e8000000000000002a0003ffffffff00000001",
        "2000000008000000010c00000000000700",
    ));
    assert_eq!(batch.as_bytes().as_ref(), &expected[..]);
    let read = RecordBatch::from_bytes(batch.as_bytes().clone()).unwrap();
    assert_eq!(
        read.end_transaction_marker(),
        Some(EndTransactionMarker {
            kind: ControlRecordType::Commit,
            coordinator_epoch: 7
        })
    );
    assert_eq!(read.control_record_type(), Some(ControlRecordType::Commit));
    assert_eq!((read.base_sequence(), read.last_sequence()), (-1, -1));
    let abort = end_transaction_marker(0, 0, 1, 0, 0, 0, ControlRecordType::Abort);
    assert_eq!(abort.control_record_type(), Some(ControlRecordType::Abort));
    assert_eq!(one_record_batch().control_record_type(), None);
}

fn horizon_batch() -> RecordBatch {
    let mut b = RecordBatchBuilder::new(10)
        .partition_leader_epoch(7)
        .delete_horizon_ms(Some(900))
        .log_append_time(2000);
    b.append_with_offset(
        10,
        &Record::tombstone("a", 1000)
            .with_header("h1", "x")
            .with_null_header("h2"),
    )
    .unwrap();
    b.append_with_offset(13, &Record::unkeyed("vv", 1050))
        .unwrap();
    b.build().unwrap()
}

#[test]
fn delete_horizon_log_append_time_headers_and_gaps_are_byte_exact() {
    let expected = hex(concat!(
        "000000000000000a0000004d000000070211bb7ce0004800000003000000000000038400000000000007d0",
        "ffffffffffffffffffffffffffff00000002",
        "2200c80100026101040468310278046832011200ac02060104767600",
    ));
    let batch = horizon_batch();
    assert_eq!(batch.as_bytes().as_ref(), &expected[..]);
    assert_eq!(batch.delete_horizon_ms(), Some(900));
    assert_eq!(batch.base_timestamp(), 900);
    assert_eq!(batch.attributes().raw(), 0x48);
    assert!(batch.attributes().has_delete_horizon());
    assert_eq!(batch.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(
        (
            batch.last_offset_delta(),
            batch.last_offset(),
            batch.next_offset()
        ),
        (3, 13, 14)
    );
    let records: Vec<LogRecord> = batch.records().collect();
    assert_eq!(records.len(), 2);
    // LogAppendTime: every record reads back with the batch's max timestamp.
    assert_eq!(
        records.iter().map(|r| r.timestamp).collect::<Vec<_>>(),
        [2000, 2000]
    );
    assert_eq!(
        records[0].headers,
        vec![Header::new("h1", "x"), Header::null("h2")]
    );
    assert!(records[0].is_tombstone() && records[0].key.as_deref() == Some(&b"a"[..]));
    assert_eq!((records[1].offset, records[1].key.clone()), (13, None));
}

#[test]
fn sizes_match_default_record_size_in_bytes() {
    // Kafka's DefaultRecordBatchTest.testSizeInBytes records: the builder's
    // size is the sum of DefaultRecord.sizeInBytes plus the overhead.
    let t = 1_700_000_000_000;
    let headers = [Header::new("foo", "value"), Header::null("bar")];
    let mut b = RecordBatchBuilder::new(0);
    b.append(&Record::new(Some("key"), Some("value"), t));
    b.append(&Record::unkeyed("value", t + 30000));
    b.append(&Record::tombstone("key", t + 60000));
    let mut r = Record::new(Some("key"), Some("value"), t + 60000);
    r.headers = headers.to_vec();
    b.append(&r);
    let expected = RECORD_BATCH_OVERHEAD
        + record_size_in_bytes(0, 0, Some(3), Some(5), &[])
        + record_size_in_bytes(1, 30000, None, Some(5), &[])
        + record_size_in_bytes(2, 60000, Some(3), None, &[])
        + record_size_in_bytes(3, 60000, Some(3), Some(5), &headers);
    assert_eq!(b.estimated_size_in_bytes(), expected);
    assert_eq!(b.build().unwrap().size_in_bytes(), expected);
    // 1 length + 1 attributes + 1 timestamp + 1 offset + 4 key + 6 value + 1 count
    assert_eq!(record_size_in_bytes(0, 0, Some(3), Some(5), &[]), 15);
    // timestamp delta 60000 is a 3-byte varlong; headers: 4 + 6 and 4 + 1
    assert_eq!(
        record_size_in_bytes(3, 60000, Some(3), Some(5), &headers),
        1 + 1 + 3 + 1 + 4 + 6 + 1 + 10 + 5
    );
    // The end transaction marker record (CURRENT_END_TXN_SCHEMA_RECORD_SIZE).
    assert_eq!(record_size_in_bytes(0, 0, Some(4), Some(6), &[]), 17);
}

#[test]
fn rewrites_keep_or_recompute_the_crc() {
    let batch = one_record_batch();
    let moved = batch.with_base_offset(1234).with_partition_leader_epoch(9);
    assert_eq!(
        (
            moved.base_offset(),
            moved.partition_leader_epoch(),
            moved.crc()
        ),
        (1234, 9, batch.crc())
    );
    let moved = RecordBatch::from_bytes(moved.into_bytes()).unwrap();
    assert_eq!(moved.records().next().unwrap().offset, 1234);

    let stamped = batch.with_log_append_time(5000);
    assert_ne!(stamped.crc(), batch.crc());
    let stamped = RecordBatch::from_bytes(stamped.as_bytes().clone()).unwrap();
    assert_eq!(
        (stamped.timestamp_type(), stamped.max_timestamp()),
        (TimestampType::LogAppendTime, 5000)
    );
    assert_eq!(stamped.records().next().unwrap().timestamp, 5000);
    // The same as building it with the log append time.
    let mut b = RecordBatchBuilder::new(0).log_append_time(5000);
    b.append(&Record::new(Some("k"), Some("v"), 1000));
    assert_eq!(b.build().unwrap(), stamped);
    assert_eq!(stamped.with_log_append_time(5000), stamped);
}

#[test]
fn builder_refuses_what_kafka_refuses() {
    assert_eq!(
        RecordBatchBuilder::new(3).build().unwrap_err(),
        RecordBatchBuildError::Empty { base_offset: 3 }
    );
    let mut b = RecordBatchBuilder::new(10);
    let r = Record::unkeyed("v", 0);
    assert_eq!(
        b.append_with_offset(9, &r).unwrap_err(),
        RecordBatchBuildError::OffsetBelowBase {
            offset: 9,
            base_offset: 10
        }
    );
    b.append_with_offset(12, &r).unwrap();
    let err = b.append_with_offset(12, &r).unwrap_err();
    assert_eq!(
        err.to_string(),
        "illegal offset 12 following previous offset 12 (offsets must increase monotonically)"
    );
    assert!(matches!(
        b.append_with_offset(10 + i64::from(i32::MAX) + 1, &r),
        Err(RecordBatchBuildError::OffsetDeltaOverflow { .. })
    ));
    assert!(matches!(
        b.append_with_offset(20, &Record::unkeyed("v", -2)),
        Err(RecordBatchBuildError::InvalidTimestamp {
            offset: 20,
            timestamp: -2
        })
    ));
    b.append(&Record::unkeyed("v", -5));
    assert_eq!(b.num_records(), 1);
    assert!(matches!(
        b.build(),
        Err(RecordBatchBuildError::InvalidTimestamp {
            offset: 13,
            timestamp: -5
        })
    ));

    let mut b = RecordBatchBuilder::new(0).transactional(true);
    b.append(&r);
    assert_eq!(
        b.build().unwrap_err(),
        RecordBatchBuildError::TransactionalWithoutProducerId
    );
    let mut b = RecordBatchBuilder::new(0).producer(1, -1, 0);
    b.append(&r);
    assert!(matches!(
        b.build(),
        Err(RecordBatchBuildError::InvalidProducerEpoch { .. })
    ));
    let mut b = RecordBatchBuilder::new(0).producer(1, 0, -1);
    b.append(&r);
    assert!(matches!(
        b.build(),
        Err(RecordBatchBuildError::InvalidBaseSequence { .. })
    ));

    let mut b = RecordBatchBuilder::new(i64::MAX);
    b.append(&r);
    b.append(&r);
    assert!(matches!(
        b.build(),
        Err(RecordBatchBuildError::OffsetDeltaOverflow { .. })
    ));
    // -1 (no timestamp) is fine; a negative horizon is no horizon.
    let mut b = RecordBatchBuilder::new(0).delete_horizon_ms(Some(-1));
    b.append(&Record::unkeyed("v", -1));
    let batch = b.build().unwrap();
    assert_eq!(
        (
            batch.delete_horizon_ms(),
            batch.base_timestamp(),
            batch.max_timestamp()
        ),
        (None, -1, -1)
    );
}

#[test]
fn delete_horizon_set_after_appends_recomputes_sizes() {
    let mut b = RecordBatchBuilder::new(0);
    b.append(&Record::new(Some("k"), Some("v"), 1_000_000));
    let b = b.delete_horizon_ms(Some(0));
    let size = b.estimated_size_in_bytes();
    let batch = b.build().unwrap();
    assert_eq!(batch.size_in_bytes(), size);
    assert_eq!(batch.records().next().unwrap().timestamp, 1_000_000);
}

#[test]
fn has_room_for_follows_kafka() {
    let r = Record::new(Some("k"), Some("v"), 0);
    let mut b = RecordBatchBuilder::new(0);
    assert!(b.has_room_for(&r, 0), "the first record always fits");
    b.append(&r);
    assert!(b.has_room_for(&r, 61 + 9 + 9));
    assert!(!b.has_room_for(&r, 61 + 9 + 8));
}

#[test]
fn corrupt_batches_name_what_is_wrong() {
    let good = one_record_batch().into_bytes();
    let err = RecordBatch::from_bytes(good.slice(..60)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record batch is 60 bytes, smaller than the minimum batch overhead of 61 bytes; the batch is truncated"
    );
    let err = RecordBatch::from_bytes(good.slice(..69)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record batch at base offset 0: the length field gives a batch of 70 bytes, but 69 bytes were given"
    );

    let mut bytes = good.to_vec();
    bytes[16] = 1;
    let err = RecordBatch::from_bytes(Bytes::from(bytes)).unwrap_err();
    assert_eq!(
        err,
        CorruptRecordError::UnsupportedMagic {
            base_offset: 0,
            magic: 1
        }
    );

    let mut bytes = good.to_vec();
    bytes[69] = 1;
    let err = RecordBatch::from_bytes(Bytes::from(bytes)).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "record batch at base offset 0: crc mismatch: stored 0x716a6189, computed 0x"
        ),
        "{err}"
    );

    // Compression: a valid CRC over gzip attributes is still refused.
    let mut bytes = good.to_vec();
    bytes[22] = 1;
    let crc = crc32c::crc32c(&bytes[21..]);
    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    let err = RecordBatch::from_bytes(Bytes::from(bytes)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "record batch at base offset 0: compression gzip is unsupported; the simulated broker reads uncompressed batches (compression.type=none) only"
    );

    // A record count that does not match the records.
    for (count, expected) in [
        (2, "record 1 (at byte 70)"),
        (0, "9 bytes remain after the 0 records"),
    ] {
        let mut bytes = good.to_vec();
        bytes[57..61].copy_from_slice(&i32::to_be_bytes(count));
        let crc = crc32c::crc32c(&bytes[21..]);
        bytes[17..21].copy_from_slice(&crc.to_be_bytes());
        let err = RecordBatch::from_bytes(Bytes::from(bytes)).unwrap_err();
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn split_batches_reads_a_log_segment() {
    let a = one_record_batch();
    let b = horizon_batch();
    let mut all = a.as_bytes().to_vec();
    all.extend_from_slice(b.as_bytes());
    assert_eq!(
        RecordBatch::split_batches(Bytes::from(all.clone())).unwrap(),
        vec![a, b]
    );
    all.truncate(all.len() - 1);
    assert!(RecordBatch::split_batches(Bytes::from(all)).is_err());
    assert_eq!(RecordBatch::split_batches(Bytes::new()).unwrap(), vec![]);
}

#[test]
fn records_are_zero_copy_slices() {
    let batch = one_record_batch();
    let record = batch.records().next().unwrap();
    let start = batch.as_bytes().as_ptr() as usize;
    let key = record.key.unwrap().as_ptr() as usize;
    assert!(key > start && key < start + batch.size_in_bytes());
    assert_eq!(batch.records().len(), 1);
    assert_eq!((&batch).into_iter().count(), 1);
}

#[test]
fn display_names_are_kafkas() {
    assert_eq!(TimestampType::CreateTime.to_string(), "CreateTime");
    assert_eq!(TimestampType::LogAppendTime.to_string(), "LogAppendTime");
    assert_eq!(ControlRecordType::Commit.to_string(), "COMMIT");
    assert_eq!(CompressionType::Zstd.to_string(), "zstd");
    assert_eq!(batch::increment_sequence(5, 5), 10);
    assert_eq!(batch::increment_sequence(i32::MAX, 1), 0);
    assert_eq!(batch::increment_sequence(i32::MAX - 5, 10), 4);
}

fn arb_bytes() -> impl Strategy<Value = Option<Bytes>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from))
}

fn arb_record() -> impl Strategy<Value = (u32, Record)> {
    let header = ("[a-zé]{0,6}", arb_bytes()).prop_map(|(key, value)| Header { key, value });
    (
        0u32..5,
        arb_bytes(),
        arb_bytes(),
        proptest::collection::vec(header, 0..4),
        -1i64..10_000_000,
    )
        .prop_map(|(gap, key, value, headers, timestamp)| {
            (
                gap,
                Record {
                    key,
                    value,
                    headers,
                    timestamp,
                },
            )
        })
}

#[derive(Debug, Clone)]
struct Case {
    base_offset: i64,
    epoch: i32,
    producer: Option<(i64, i16, i32)>,
    transactional: bool,
    horizon: Option<i64>,
    log_append_time: Option<i64>,
    records: Vec<(u32, Record)>,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (
        0i64..1 << 40,
        -1i32..100,
        proptest::option::of((0i64..1000, 0i16..10, 0i32..1000)),
        any::<bool>(),
        proptest::option::of(0i64..20_000_000),
        proptest::option::of(0i64..20_000_000),
        proptest::collection::vec(arb_record(), 1..12),
    )
        .prop_map(
            |(base_offset, epoch, producer, transactional, horizon, log_append_time, records)| {
                Case {
                    base_offset,
                    epoch,
                    transactional: transactional && producer.is_some(),
                    producer,
                    horizon,
                    log_append_time,
                    records,
                }
            },
        )
}

fn build_case(case: &Case) -> (RecordBatch, Vec<i64>) {
    let mut b = RecordBatchBuilder::new(case.base_offset)
        .partition_leader_epoch(case.epoch)
        .transactional(case.transactional)
        .delete_horizon_ms(case.horizon);
    if let Some((id, epoch, seq)) = case.producer {
        b = b.producer(id, epoch, seq);
    }
    if let Some(t) = case.log_append_time {
        b = b.log_append_time(t);
    }
    let mut offsets = Vec::new();
    let mut offset = case.base_offset;
    for (i, (gap, record)) in case.records.iter().enumerate() {
        if i > 0 {
            offset += i64::from(*gap) + 1;
        }
        b.append_with_offset(offset, record).unwrap();
        offsets.push(offset);
    }
    let size = b.estimated_size_in_bytes();
    let batch = b.build().unwrap();
    assert_eq!(batch.size_in_bytes(), size);
    (batch, offsets)
}

proptest! {
    #[test]
    fn random_batches_round_trip(case in arb_case()) {
        let (batch, offsets) = build_case(&case);
        let read = RecordBatch::from_bytes(batch.as_bytes().clone()).unwrap();
        prop_assert_eq!(&read, &batch);
        prop_assert_eq!(read.base_offset(), case.base_offset);
        prop_assert_eq!(read.last_offset(), *offsets.last().unwrap());
        prop_assert_eq!(read.record_count() as usize, case.records.len());
        prop_assert_eq!(read.partition_leader_epoch(), case.epoch);
        prop_assert_eq!(read.delete_horizon_ms(), case.horizon);
        prop_assert_eq!(read.is_transactional(), case.transactional);
        let (pid, pepoch, seq) = case.producer.unwrap_or((-1, -1, -1));
        prop_assert_eq!((read.producer_id(), read.producer_epoch(), read.base_sequence()), (pid, pepoch, seq));
        let max = case.records.iter().map(|(_, r)| r.timestamp).max().unwrap();
        prop_assert_eq!(read.max_timestamp(), case.log_append_time.unwrap_or(max));
        let records: Vec<LogRecord> = read.records().collect();
        prop_assert_eq!(records.len(), case.records.len());
        for ((record, (_, sent)), offset) in records.iter().zip(&case.records).zip(&offsets) {
            prop_assert_eq!(record.offset, *offset);
            prop_assert_eq!(record.timestamp, case.log_append_time.unwrap_or(sent.timestamp));
            prop_assert_eq!(&record.key, &sent.key);
            prop_assert_eq!(&record.value, &sent.value);
            prop_assert_eq!(&record.headers, &sent.headers);
        }
        // The cleaner's in-place reading sees the same offsets and keys.
        let keys: Vec<(i64, Option<Vec<u8>>, bool)> = read
            .record_keys()
            .map(|r| (r.offset, r.key.map(<[u8]>::to_vec), r.null_value))
            .collect();
        let expected: Vec<(i64, Option<Vec<u8>>, bool)> = records
            .iter()
            .map(|r| (r.offset, r.key.as_ref().map(|k| k.to_vec()), r.value.is_none()))
            .collect();
        prop_assert_eq!(keys, expected);
        // The cleaner's copy: the same records at their offsets give the same bytes.
        let mut copy = RecordBatchBuilder::new(case.base_offset)
            .partition_leader_epoch(case.epoch)
            .transactional(case.transactional)
            .delete_horizon_ms(case.horizon);
        if let Some((id, epoch, seq)) = case.producer {
            copy = copy.producer(id, epoch, seq);
        }
        if case.log_append_time.is_none() {
            for r in &records {
                copy.append_log_record(r).unwrap();
            }
            prop_assert_eq!(copy.build().unwrap(), batch);
        }
    }

    #[test]
    fn any_changed_byte_in_the_crc_region_is_rejected(case in arb_case(), at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let (batch, _) = build_case(&case);
        let mut bytes = batch.as_bytes().to_vec();
        let i = 17 + at.index(bytes.len() - 17); // the crc itself and everything it covers
        bytes[i] ^= flip;
        prop_assert!(RecordBatch::from_bytes(Bytes::from(bytes)).is_err());
    }

    #[test]
    fn from_bytes_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = RecordBatch::from_bytes(Bytes::from(bytes.clone()));
        let _ = RecordBatch::split_batches(Bytes::from(bytes));
    }

    #[test]
    fn from_bytes_never_panics_on_damaged_batches(case in arb_case(), cut in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let (batch, _) = build_case(&case);
        let bytes = batch.as_bytes();
        let truncated = bytes.slice(..cut.index(bytes.len()));
        prop_assert!(RecordBatch::from_bytes(truncated).is_err());
        // A damaged record area with the CRC fixed up: the framing checks must hold.
        let mut damaged = bytes.to_vec();
        let i = 21 + at.index(damaged.len() - 21);
        damaged[i] = byte;
        let crc = crc32c::crc32c(&damaged[21..]);
        damaged[17..21].copy_from_slice(&crc.to_be_bytes());
        if let Ok(read) = RecordBatch::from_bytes(Bytes::from(damaged)) {
            let n = read.records().count();
            prop_assert_eq!(n, read.record_count() as usize);
        }
    }
}

#[test]
fn owned_appends_write_the_bytes_of_borrowed_ones() {
    let records = [
        Record::new(Some("k"), Some("v"), 1_000).with_header("h", "x"),
        Record::tombstone("k", 990),
        Record::unkeyed("u", 1_010).with_null_header("n"),
    ];
    let mut borrowed = RecordBatchBuilder::new(5).producer(9, 0, 3);
    let mut owned = RecordBatchBuilder::with_capacity(5, 3).producer(9, 0, 3);
    for r in &records {
        borrowed.append(r);
        owned.append_owned(r.clone());
    }
    assert_eq!(
        owned.estimated_size_in_bytes(),
        borrowed.estimated_size_in_bytes()
    );
    assert_eq!(owned.build().unwrap(), borrowed.build().unwrap());
    // An append the builder refuses is reported by build, as with `append`.
    let mut refused = RecordBatchBuilder::new(0);
    refused.append_owned(Record::new(Some("k"), Some("v"), -2));
    assert!(matches!(
        refused.build(),
        Err(RecordBatchBuildError::InvalidTimestamp { .. })
    ));
}

#[test]
fn stamping_writes_in_place_only_an_unshared_batch() {
    let batch = one_record_batch();
    let expected = batch.with_base_offset(42).with_partition_leader_epoch(7);
    // Shared: the other handle keeps its bytes.
    let other = batch.clone();
    let stamped = batch.into_stamped(42, 7);
    assert_eq!(stamped, expected);
    assert_eq!(
        (other.base_offset(), other.partition_leader_epoch()),
        (0, -1)
    );
    assert_eq!(other, one_record_batch());
    // Unshared: the same buffer, stamped.
    let only = one_record_batch();
    let address = only.as_bytes().as_ptr();
    let stamped = only.into_stamped(42, 7);
    assert_eq!(stamped, expected);
    assert_eq!(stamped.as_bytes().as_ptr(), address);
    assert_eq!(
        RecordBatch::from_bytes(stamped.as_bytes().clone()).unwrap(),
        expected
    );
}
