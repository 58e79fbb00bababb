//! What a test can see of a partition: its offsets (the last stable offset
//! among them), segments and dirty ratio ([`LogInfo`]), and every retained
//! batch with its attributes and delete horizon, transaction markers
//! included, written out as Kafka's `kafka-dump-log` prints them
//! ([`LogDump`]).
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("t", 1))?;
//! cluster.producer().send(ProducerRecord::new("t", "k", "v").timestamp(5))?;
//! let dump = cluster.dump_log(&TopicPartition::new("t", 0))?.to_string();
//! assert!(dump.starts_with("Dumping t-0 (log start offset 0, log end offset 1, high watermark 1, last stable offset 1)\n"));
//! assert!(dump.contains("| offset: 0 CreateTime: 5 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::cleaner::LogToClean;
use crate::log::{CleanupPolicy, UnifiedLog};
use crate::record::RecordBatch;
use crate::topic_partition::TopicPartition;

/// One segment as a test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The segment's base offset.
    pub base_offset: i64,
    /// The offset after its last batch.
    pub next_offset: i64,
    /// Its size in bytes.
    pub size_bytes: usize,
    /// How many batches it holds.
    pub batch_count: usize,
    /// How many records it holds.
    pub record_count: usize,
    /// Its largest timestamp (-1 when empty).
    pub largest_timestamp: i64,
    /// When it was last written, on the cluster's clock.
    pub last_modified_ms: i64,
}

/// A partition's offsets, segments and cleaning state.
#[derive(Debug, Clone, PartialEq)]
pub struct LogInfo {
    /// The partition.
    pub topic_partition: TopicPartition,
    /// The topic's `cleanup.policy`.
    pub cleanup_policy: CleanupPolicy,
    /// The first readable offset.
    pub log_start_offset: i64,
    /// The offset the next record gets.
    pub log_end_offset: i64,
    /// The last committed offset plus one.
    pub high_watermark: i64,
    /// The last stable offset: the first offset of the earliest open
    /// transaction, else the high watermark (what `read_committed`
    /// consumers read up to).
    pub last_stable_offset: i64,
    /// The log's size in bytes.
    pub size_bytes: usize,
    /// Where the cleaner's dirty part starts.
    pub first_dirty_offset: i64,
    /// The dirty ratio the cleaner compares with
    /// `min.cleanable.dirty.ratio`.
    pub dirty_ratio: f64,
    /// The segments, oldest first (the last is the active one).
    pub segments: Vec<SegmentInfo>,
}

impl LogInfo {
    pub(crate) fn of(log: &UnifiedLog, to_clean: &LogToClean) -> Self {
        Self {
            topic_partition: log.topic_partition().clone(),
            cleanup_policy: log.config().cleanup_policy,
            log_start_offset: log.log_start_offset(),
            log_end_offset: log.log_end_offset(),
            high_watermark: log.high_watermark(),
            last_stable_offset: log.last_stable_offset(),
            size_bytes: log.size(),
            first_dirty_offset: to_clean.first_dirty_offset,
            dirty_ratio: to_clean.cleanable_ratio(),
            segments: log
                .segments()
                .iter()
                .map(|s| SegmentInfo {
                    base_offset: s.base_offset(),
                    next_offset: s.next_offset(),
                    size_bytes: s.size(),
                    batch_count: s.batches().len(),
                    record_count: s.record_count(),
                    largest_timestamp: s.largest_timestamp(),
                    last_modified_ms: s.last_modified_ms(),
                })
                .collect(),
        }
    }

    /// The segments' base offsets.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.segments.iter().map(|s| s.base_offset).collect()
    }
}

/// A partition's batches and records in `kafka-dump-log`'s words
/// (`--print-data-log`), one segment after another.
#[derive(Debug, Clone)]
pub struct LogDump {
    info: LogInfo,
    segments: Vec<(i64, Vec<RecordBatch>)>,
}

impl LogDump {
    pub(crate) fn new(info: LogInfo, segments: Vec<(i64, Vec<RecordBatch>)>) -> Self {
        Self { info, segments }
    }

    /// The partition's offsets and segments.
    pub fn info(&self) -> &LogInfo {
        &self.info
    }
}

fn text(bytes: Option<&[u8]>) -> String {
    match bytes {
        None => "null".to_owned(),
        Some(b) => String::from_utf8_lossy(b).into_owned(),
    }
}

impl fmt::Display for LogDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.info;
        writeln!(
            f,
            "Dumping {} (log start offset {}, log end offset {}, high watermark {}, last stable offset {})",
            i.topic_partition,
            i.log_start_offset,
            i.log_end_offset,
            i.high_watermark,
            i.last_stable_offset
        )?;
        for (base, batches) in &self.segments {
            writeln!(f, "Log segment {base:020}.log")?;
            let mut position = 0usize;
            for batch in batches {
                let horizon = match batch.delete_horizon_ms() {
                    Some(h) => format!("OptionalLong[{h}]"),
                    None => "OptionalLong.empty".to_owned(),
                };
                writeln!(
                    f,
                    "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {} position: {} {}: {} size: {} magic: 2 compresscodec: none crc: {} isvalid: true",
                    batch.base_offset(),
                    batch.last_offset(),
                    batch.record_count(),
                    batch.base_sequence(),
                    batch.last_sequence(),
                    batch.producer_id(),
                    batch.producer_epoch(),
                    batch.partition_leader_epoch(),
                    batch.is_transactional(),
                    batch.is_control(),
                    horizon,
                    position,
                    batch.timestamp_type(),
                    batch.max_timestamp(),
                    batch.size_in_bytes(),
                    batch.crc(),
                )?;
                position += batch.size_in_bytes();
                for record in batch.records() {
                    let header_keys: Vec<&str> =
                        record.headers.iter().map(|h| h.key.as_str()).collect();
                    // A marker prints as kafka-dump-log prints it: its kind
                    // and coordinator epoch instead of key and payload.
                    let content = match crate::record::EndTransactionMarker::from_record(&record)
                        .filter(|_| batch.is_control())
                    {
                        Some(marker) => format!(
                            "endTxnMarker: {} coordinatorEpoch: {}",
                            marker.kind, marker.coordinator_epoch
                        ),
                        None => format!(
                            "key: {} payload: {}",
                            text(record.key.as_deref()),
                            text(record.value.as_deref())
                        ),
                    };
                    writeln!(
                        f,
                        "| offset: {} {}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}] {}",
                        record.offset,
                        batch.timestamp_type(),
                        record.timestamp,
                        record.key.as_ref().map_or(-1, |k| k.len() as i64),
                        record.value.as_ref().map_or(-1, |v| v.len() as i64),
                        if batch.base_sequence() < 0 {
                            -1
                        } else {
                            i64::from(batch.base_sequence()) + (record.offset - batch.base_offset())
                        },
                        header_keys.join(","),
                        content,
                    )?;
                }
            }
        }
        Ok(())
    }
}
