//! The wire format checked against Kafka itself: golden files that Kafka
//! 4.4.0's own classes wrote (`compat/broker`: `MemoryRecordsBuilder` for
//! batches, `BuiltInPartitioner.partitionForKey` and `Utils.murmur2` for
//! partitions), and a few batches derived by hand from Kafka's
//! `DefaultRecordBatch.writeHeader` and `DefaultRecord.writeTo`.
//!
//! For every golden batch, the builder must write exactly Kafka's bytes
//! from the case's fields, and reading Kafka's bytes must give the fields
//! back. Every mismatch is collected and reported with the case's name.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use bytes::Bytes;
use serde_json::Value;
use streams_broker::partitioner::{murmur2, partition_for_key};
use streams_broker::record::{
    ControlRecordType, Header, LogRecord, Record, RecordBatch, RecordBatchBuilder, TimestampType,
    end_transaction_marker,
};

fn golden(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../compat/broker/golden")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden file {} is missing ({e}); generate it with Kafka 4.4.0's own classes in compat/broker \
             (the oracle writes compat/broker/golden/batches.json and partitions.json)",
            path.display()
        )
    });
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("golden file {} is not valid JSON: {e}", path.display()))
}

/// The cases of a golden file: a JSON array, or an object holding one.
fn cases(value: &Value, file: &str) -> Vec<Value> {
    match value {
        Value::Array(cases) => cases.clone(),
        Value::Object(map) => map
            .values()
            .find_map(|v| v.as_array().cloned())
            .unwrap_or_else(|| panic!("{file}: expected an array of cases")),
        _ => panic!("{file}: expected an array of cases"),
    }
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex string {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|e| format!("bad hex {:?}: {e}", &s[i..i + 2]))
        })
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One case's fields, read with errors that name the field.
struct Fields<'a> {
    case: &'a Value,
}

impl Fields<'_> {
    fn get(&self, key: &str) -> Result<&Value, String> {
        self.case
            .get(key)
            .ok_or_else(|| format!("field {key:?} is missing"))
    }

    fn i64(&self, key: &str) -> Result<i64, String> {
        self.get(key)?
            .as_i64()
            .ok_or_else(|| format!("field {key:?} is not an integer"))
    }

    fn opt_i64(&self, key: &str) -> Result<Option<i64>, String> {
        match self.case.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("field {key:?} is not an integer or null")),
        }
    }

    fn bool(&self, key: &str) -> Result<bool, String> {
        match self.case.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| format!("field {key:?} is not a boolean")),
        }
    }

    fn str(&self, key: &str) -> Result<&str, String> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| format!("field {key:?} is not a string"))
    }

    fn opt_hex(&self, key: &str) -> Result<Option<Bytes>, String> {
        match self.case.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => hex(s)
                .map(|b| Some(Bytes::from(b)))
                .map_err(|e| format!("field {key:?}: {e}")),
            Some(_) => Err(format!("field {key:?} is not a hex string or null")),
        }
    }
}

fn int<T: TryFrom<i64>>(value: i64, what: &str) -> Result<T, String> {
    T::try_from(value).map_err(|_| format!("{what} {value} is out of range"))
}

/// A golden record: its offset delta and what the producer sent.
struct GoldenRecord {
    offset_delta: i64,
    record: Record,
    /// The timestamp Kafka's reader gives the record, when the file has it.
    read_timestamp: Option<i64>,
}

struct GoldenBatch {
    name: String,
    base_offset: i64,
    partition_leader_epoch: i32,
    timestamp_type: TimestampType,
    log_append_time: Option<i64>,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    transactional: bool,
    control: bool,
    delete_horizon_ms: Option<i64>,
    records: Vec<GoldenRecord>,
    /// The header fields Kafka's reader gives, when the file has them
    /// (`batch_length`, `magic`, `crc`, `attributes`, `last_offset_delta`,
    /// `base_timestamp`, `max_timestamp`, `records_count`).
    header: Option<serde_json::Map<String, Value>>,
    bytes: Vec<u8>,
}

fn parse_batch(case: &Value, index: usize) -> Result<GoldenBatch, String> {
    let f = Fields { case };
    let name = f
        .str("name")
        .map_or_else(|_| format!("case {index}"), str::to_owned);
    let timestamp_type = match f.str("timestamp_type")? {
        "CreateTime" | "CREATE_TIME" => TimestampType::CreateTime,
        "LogAppendTime" | "LOG_APPEND_TIME" => TimestampType::LogAppendTime,
        other => return Err(format!("unknown timestamp_type {other:?}")),
    };
    let mut records = Vec::new();
    for (i, r) in f
        .get("records")?
        .as_array()
        .ok_or("field \"records\" is not an array")?
        .iter()
        .enumerate()
    {
        let rf = Fields { case: r };
        let mut headers = Vec::new();
        if let Some(hs) = r.get("headers").and_then(Value::as_array) {
            for h in hs {
                let hf = Fields { case: h };
                headers.push(Header {
                    key: hf
                        .str("key")
                        .map_err(|e| format!("record {i} header: {e}"))?
                        .to_owned(),
                    value: hf
                        .opt_hex("value_hex")
                        .map_err(|e| format!("record {i} header: {e}"))?,
                });
            }
        }
        records.push(GoldenRecord {
            offset_delta: rf
                .i64("offset_delta")
                .map_err(|e| format!("record {i}: {e}"))?,
            record: Record {
                key: rf
                    .opt_hex("key_hex")
                    .map_err(|e| format!("record {i}: {e}"))?,
                value: rf
                    .opt_hex("value_hex")
                    .map_err(|e| format!("record {i}: {e}"))?,
                headers,
                timestamp: rf
                    .i64("timestamp")
                    .map_err(|e| format!("record {i}: {e}"))?,
            },
            read_timestamp: rf
                .opt_i64("read_timestamp")
                .map_err(|e| format!("record {i}: {e}"))?,
        });
    }
    Ok(GoldenBatch {
        name,
        base_offset: f.i64("base_offset")?,
        partition_leader_epoch: int(
            f.opt_i64("partition_leader_epoch")?.unwrap_or(-1),
            "partition_leader_epoch",
        )?,
        timestamp_type,
        log_append_time: f.opt_i64("log_append_time")?,
        producer_id: f.opt_i64("producer_id")?.unwrap_or(-1),
        producer_epoch: int(f.opt_i64("producer_epoch")?.unwrap_or(-1), "producer_epoch")?,
        base_sequence: int(f.opt_i64("base_sequence")?.unwrap_or(-1), "base_sequence")?,
        transactional: f.bool("transactional")?,
        control: f.bool("control")?,
        delete_horizon_ms: f.opt_i64("delete_horizon_ms")?,
        records,
        header: case.get("header").and_then(Value::as_object).cloned(),
        bytes: hex(f.str("bytes_hex")?).map_err(|e| format!("field \"bytes_hex\": {e}"))?,
    })
}

/// The name of the batch header field at byte `at`, for mismatch reports.
fn field_at(at: usize) -> &'static str {
    match at {
        0..=7 => "base offset",
        8..=11 => "length",
        12..=15 => "partition leader epoch",
        16 => "magic",
        17..=20 => "crc",
        21..=22 => "attributes",
        23..=26 => "last offset delta",
        27..=34 => "base timestamp",
        35..=42 => "max timestamp",
        43..=50 => "producer id",
        51..=52 => "producer epoch",
        53..=56 => "base sequence",
        57..=60 => "record count",
        _ => "records",
    }
}

fn compare_bytes(what: &str, ours: &[u8], kafka: &[u8]) -> Result<(), String> {
    if ours == kafka {
        return Ok(());
    }
    let first = ours
        .iter()
        .zip(kafka)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(kafka.len()));
    Err(format!(
        "{what}: bytes differ from Kafka's at byte {first} ({}); sizes {} vs Kafka's {}\n  ours:  {}\n  kafka: {}",
        field_at(first),
        ours.len(),
        kafka.len(),
        to_hex(ours),
        to_hex(kafka)
    ))
}

fn build(case: &GoldenBatch) -> Result<RecordBatch, String> {
    let mut builder = RecordBatchBuilder::new(case.base_offset)
        .partition_leader_epoch(case.partition_leader_epoch)
        .producer(case.producer_id, case.producer_epoch, case.base_sequence)
        .transactional(case.transactional)
        .control(case.control)
        .delete_horizon_ms(case.delete_horizon_ms)
        .timestamp_type(case.timestamp_type);
    if case.timestamp_type == TimestampType::LogAppendTime
        && let Some(t) = case.log_append_time
    {
        builder = builder.log_append_time(t);
    }
    for (i, r) in case.records.iter().enumerate() {
        builder
            .append_with_offset(case.base_offset + r.offset_delta, &r.record)
            .map_err(|e| format!("record {i}: the builder refused it: {e}"))?;
    }
    builder
        .build()
        .map_err(|e| format!("the builder refused the batch: {e}"))
}

fn check_decoded(case: &GoldenBatch) -> Result<(), String> {
    let batch = RecordBatch::from_bytes(Bytes::from(case.bytes.clone()))
        .map_err(|e| format!("reading Kafka's bytes failed: {e}"))?;
    let mut wrong = Vec::new();
    let mut check = |what: &str, ours: String, expected: String| {
        if ours != expected {
            wrong.push(format!("{what}: read {ours}, expected {expected}"));
        }
    };
    check(
        "base offset",
        batch.base_offset().to_string(),
        case.base_offset.to_string(),
    );
    check(
        "partition leader epoch",
        batch.partition_leader_epoch().to_string(),
        case.partition_leader_epoch.to_string(),
    );
    check(
        "timestamp type",
        batch.timestamp_type().to_string(),
        case.timestamp_type.to_string(),
    );
    check(
        "producer id",
        batch.producer_id().to_string(),
        case.producer_id.to_string(),
    );
    check(
        "producer epoch",
        batch.producer_epoch().to_string(),
        case.producer_epoch.to_string(),
    );
    check(
        "base sequence",
        batch.base_sequence().to_string(),
        case.base_sequence.to_string(),
    );
    check(
        "transactional",
        batch.is_transactional().to_string(),
        case.transactional.to_string(),
    );
    check(
        "control",
        batch.is_control().to_string(),
        case.control.to_string(),
    );
    let horizon = case.delete_horizon_ms.filter(|&h| h >= 0);
    check(
        "delete horizon",
        format!("{:?}", batch.delete_horizon_ms()),
        format!("{horizon:?}"),
    );
    check(
        "record count",
        batch.record_count().to_string(),
        case.records.len().to_string(),
    );
    if let Some(last) = case.records.last() {
        check(
            "last offset",
            batch.last_offset().to_string(),
            (case.base_offset + last.offset_delta).to_string(),
        );
    }
    if case.timestamp_type == TimestampType::LogAppendTime {
        check(
            "max timestamp",
            batch.max_timestamp().to_string(),
            case.log_append_time.unwrap_or(-1).to_string(),
        );
    }
    if let Some(header) = &case.header {
        let ours: [(&str, i64); 8] = [
            ("batch_length", batch.size_in_bytes() as i64 - 12),
            ("magic", i64::from(batch.magic())),
            ("crc", i64::from(batch.crc())),
            ("attributes", i64::from(batch.attributes().raw())),
            ("last_offset_delta", i64::from(batch.last_offset_delta())),
            ("base_timestamp", batch.base_timestamp()),
            ("max_timestamp", batch.max_timestamp()),
            ("records_count", i64::from(batch.record_count())),
        ];
        for (key, value) in ours {
            if let Some(expected) = header.get(key).and_then(Value::as_i64) {
                check(
                    &format!("header {key}"),
                    value.to_string(),
                    expected.to_string(),
                );
            }
        }
    }
    let read: Vec<LogRecord> = batch.records().collect();
    for (i, (got, want)) in read.iter().zip(&case.records).enumerate() {
        let expected_timestamp = want.read_timestamp.unwrap_or(match case.timestamp_type {
            TimestampType::LogAppendTime => batch.max_timestamp(),
            TimestampType::CreateTime => want.record.timestamp,
        });
        check(
            &format!("record {i} offset"),
            got.offset.to_string(),
            (case.base_offset + want.offset_delta).to_string(),
        );
        check(
            &format!("record {i} timestamp"),
            got.timestamp.to_string(),
            expected_timestamp.to_string(),
        );
        check(
            &format!("record {i} key"),
            format!("{:?}", got.key),
            format!("{:?}", want.record.key),
        );
        check(
            &format!("record {i} value"),
            format!("{:?}", got.value),
            format!("{:?}", want.record.value),
        );
        check(
            &format!("record {i} headers"),
            format!("{:?}", got.headers),
            format!("{:?}", want.record.headers),
        );
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

/// A control case that is a transaction marker is also written by
/// `end_transaction_marker`, as Kafka's `MemoryRecords.withEndTransactionMarker`.
fn check_marker(case: &GoldenBatch) -> Result<(), String> {
    let [only] = case.records.as_slice() else {
        return Ok(());
    };
    let (Some(key), Some(value)) = (&only.record.key, &only.record.value) else {
        return Ok(());
    };
    let Some(kind) = ControlRecordType::parse_key(key) else {
        return Ok(());
    };
    if value.len() < 6 || !case.control || !case.transactional {
        return Ok(());
    }
    let coordinator_epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
    let batch = end_transaction_marker(
        case.base_offset,
        only.record.timestamp,
        case.producer_id,
        case.producer_epoch,
        case.partition_leader_epoch,
        coordinator_epoch,
        kind,
    );
    compare_bytes("end_transaction_marker", batch.as_bytes(), &case.bytes)?;
    let read =
        RecordBatch::from_bytes(Bytes::from(case.bytes.clone())).map_err(|e| e.to_string())?;
    match read.end_transaction_marker() {
        Some(m) if m.kind == kind && m.coordinator_epoch == coordinator_epoch => Ok(()),
        other => Err(format!(
            "reading the marker gave {other:?}, expected {kind} with coordinator epoch {coordinator_epoch}"
        )),
    }
}

#[test]
fn golden_batches_are_byte_exact_with_kafka() {
    let file = golden("batches.json");
    let cases = cases(&file, "batches.json");
    assert!(!cases.is_empty(), "batches.json has no cases");
    let mut failures = Vec::new();
    let mut checked = 0;
    for (index, case) in cases.iter().enumerate() {
        let case = match parse_batch(case, index) {
            Ok(case) => case,
            Err(e) => {
                failures.push(format!("case {index}: {e}"));
                continue;
            }
        };
        let mut problems = Vec::new();
        if case.records.is_empty() {
            // Kafka's builder writes no batch for no records; only reading is checked.
        } else {
            match build(&case) {
                Ok(batch) => {
                    if let Err(e) = compare_bytes("builder", batch.as_bytes(), &case.bytes) {
                        problems.push(e);
                    }
                }
                Err(e) => problems.push(e),
            }
        }
        if let Err(e) = check_decoded(&case) {
            problems.push(e);
        }
        if let Err(e) = check_marker(&case) {
            problems.push(e);
        }
        if problems.is_empty() {
            checked += 1;
        } else {
            failures.push(format!("{}: {}", case.name, problems.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden batches differ from Kafka 4.4.0:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
    assert_eq!(checked, cases.len());
    eprintln!("{checked} golden batches byte-exact with Kafka 4.4.0");
}

#[test]
fn golden_partitions_match_kafkas_default_partitioner() {
    let file = golden("partitions.json");
    let rows = cases(&file, "partitions.json");
    assert!(!rows.is_empty(), "partitions.json has no rows");
    let mut failures = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let f = Fields { case: row };
        let result = (|| -> Result<(), String> {
            let key = f
                .opt_hex("key_hex")?
                .ok_or("key_hex is null: a null key has no hash")?;
            let n = int::<i32>(f.i64("num_partitions")?, "num_partitions")?;
            let expected_hash = int::<i32>(f.i64("murmur2")?, "murmur2")?;
            let expected_partition = int::<i32>(f.i64("partition")?, "partition")?;
            let hash = murmur2(&key);
            let partition = partition_for_key(&key, n).map_err(|e| e.to_string())?;
            if (hash, partition) != (expected_hash, expected_partition) {
                return Err(format!(
                    "key {} over {n} partitions: murmur2 {hash}, partition {partition}; Kafka: murmur2 {expected_hash}, partition {expected_partition}",
                    to_hex(&key)
                ));
            }
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("row {i}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} partition rows differ from Kafka 4.4.0:\n  {}",
        failures.len(),
        rows.len(),
        failures.join("\n  ")
    );
    eprintln!("{} golden partition rows match Kafka 4.4.0", rows.len());
}

// Batches derived by hand from Kafka's sources (writeHeader, writeTo,
// ByteUtils varints) with an independent bit-by-bit CRC-32C.

fn hand(hex_str: &str) -> Vec<u8> {
    hex(hex_str).unwrap_or_default()
}

#[test]
fn hand_derived_plain_batch() {
    let mut builder = RecordBatchBuilder::new(0);
    builder.append(&Record::new(Some("k"), Some("v"), 1000));
    let batch = builder.build().unwrap();
    let kafka = hand(concat!(
        "0000000000000000",
        "0000003a",
        "ffffffff",
        "02",
        "716a6189",
        "0000",
        "00000000",
        "00000000000003e8",
        "00000000000003e8",
        "ffffffffffffffff",
        "ffff",
        "ffffffff",
        "00000001",
        "10000000026b027600",
    ));
    compare_bytes("plain batch", batch.as_bytes(), &kafka).unwrap();
}

#[test]
fn hand_derived_commit_marker() {
    let batch = end_transaction_marker(5, 1000, 42, 3, 3, 7, ControlRecordType::Commit);
    let kafka = hand(concat!(
        "0000000000000005000000420000000302dbc3b9ad0030000000000000000000",
        "0003e800000000000003e8000000000000002a0003ffffffff00000001",
        "2000000008000000010c00000000000700",
    ));
    compare_bytes("commit marker", batch.as_bytes(), &kafka).unwrap();
}

#[test]
fn hand_derived_delete_horizon_log_append_time_batch() {
    let mut builder = RecordBatchBuilder::new(10)
        .partition_leader_epoch(7)
        .delete_horizon_ms(Some(900))
        .log_append_time(2000);
    builder
        .append_with_offset(
            10,
            &Record::tombstone("a", 1000)
                .with_header("h1", "x")
                .with_null_header("h2"),
        )
        .unwrap();
    builder
        .append_with_offset(13, &Record::unkeyed("vv", 1050))
        .unwrap();
    let batch = builder.build().unwrap();
    let kafka = hand(concat!(
        "000000000000000a0000004d000000070211bb7ce0004800000003000000000000038400000000000007d0",
        "ffffffffffffffffffffffffffff00000002",
        "2200c80100026101040468310278046832011200ac02060104767600",
    ));
    compare_bytes("horizon batch", batch.as_bytes(), &kafka).unwrap();
}
