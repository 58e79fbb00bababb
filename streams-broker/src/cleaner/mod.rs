//! The log cleaner (Kafka's `LogCleaner`): compaction keeps the latest
//! record of every key, keeps offsets (gaps, never renumbering), merges
//! small segments up to `segment.bytes`, and removes tombstones once their
//! delete horizon has passed.
//!
//! Tombstones, as Kafka 3.1+ handles them (KIP-534, the fix of
//! KAFKA-8522): the first cleaning that keeps a tombstone stamps its batch
//! with a delete horizon of `now + delete.retention.ms`; a later cleaning at
//! or after the horizon removes it. A cleaning needs a dirty log, so with no
//! new writes a tombstone stays. [`TombstoneRetention::LegacyLastModified`]
//! keeps the pre-fix rule (a tombstone goes when its segment was last
//! modified more than `delete.retention.ms` before the last clean segment),
//! under which constant re-cleaning keeps a tombstone forever.
//!
//! Transactions, as Kafka's cleaner treats them (`CleanedTransactionMetadata`):
//! the records of aborted transactions are removed (and never enter the
//! offset map); a transaction marker stays while any batch of its
//! transaction is left, then is handled as a tombstone is: the first
//! cleaning that finds it alone stamps its batch with a delete horizon, a
//! cleaning after the horizon removes it. The batch holding an active
//! producer's last sequence (or, with no data left, its last marker) is
//! kept, empty if need be, so that the producer's state survives.
//! The cleaner never cleans at or past the last stable offset.
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(
//!     NewTopic::new("addresses", 1)
//!         .config("cleanup.policy", "compact")
//!         .config("segment.ms", "100")
//!         .config("min.cleanable.dirty.ratio", "0.01"),
//! )?;
//! let producer = cluster.producer();
//! for (i, (key, value)) in [("alice", "a1"), ("bob", "b1"), ("alice", "a2")].into_iter().enumerate() {
//!     producer.send(ProducerRecord::new("addresses", key, value).timestamp(i as i64))?;
//! }
//! // A record 100 ms later rolls the segment, so the first one can be cleaned.
//! producer.send(ProducerRecord::new("addresses", "carol", "c1").timestamp(200))?;
//! let cleaned = cluster.run_cleaner();
//! assert_eq!(cleaned.len(), 1);
//!
//! let offsets: Vec<i64> = cluster
//!     .log_records(&TopicPartition::new("addresses", 0))?
//!     .iter()
//!     .map(|r| r.offset)
//!     .collect();
//! assert_eq!(offsets, [1, 2, 3]); // alice's first value (offset 0) is gone
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod manager;
mod transactions;

pub use manager::LogToClean;

use std::collections::{BTreeMap, HashMap};

use crate::log::{LogSegment, UnifiedLog};
use crate::record::{LogRecord, NO_PRODUCER_ID, RecordBatch, RecordBatchBuilder, TimestampType};
use transactions::CleanedTransactionMetadata;

/// How the cleaner decides that a tombstone may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TombstoneRetention {
    /// KIP-534 (Kafka 3.1 and later): a batch's delete horizon, stamped at
    /// the first cleaning that keeps its tombstones.
    #[default]
    DeleteHorizon,
    /// Before KIP-534: tombstones go from segments last modified more than
    /// `delete.retention.ms` before the last clean segment was. Cleaning
    /// rewrites segments with the last-modified time of the newest one in
    /// its group, so steady writes keep a tombstone forever (KAFKA-8522).
    LegacyLastModified,
}

/// What one cleaning of one log did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleaningResult {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The broker whose replica was cleaned.
    pub broker: i32,
    /// The first dirty offset the cleaning started from.
    pub first_dirty_offset: i64,
    /// Where the next cleaning's dirty part starts (the new checkpoint).
    pub end_offset: i64,
    /// Records read in the cleaned segments.
    pub records_read: usize,
    /// Records kept.
    pub records_retained: usize,
    /// Tombstones removed because their horizon had passed.
    pub tombstones_removed: usize,
    /// Batches stamped with a delete horizon by this cleaning.
    pub horizons_set: usize,
    /// Transaction markers removed (their transaction's data was gone and
    /// their delete horizon had passed).
    pub markers_removed: usize,
    /// How many segments were rewritten, and into how many.
    pub segments_before: usize,
    /// How many segments the cleaned ones became.
    pub segments_after: usize,
}

/// Cleans `log` as Kafka's `Cleaner.doClean` does and returns what it did,
/// or `None` when the dirty part is empty.
pub(crate) fn clean(
    log: &mut UnifiedLog,
    to_clean: &LogToClean,
    now_ms: i64,
    retention: TombstoneRetention,
) -> Option<CleaningResult> {
    clean_with(log, to_clean, now_ms, retention, true)
}

/// [`clean`], with the shortcut for batches that lose every record on or
/// off (off, every record of every batch is looked up in the map: the
/// tests compare both ways).
fn clean_with(
    log: &mut UnifiedLog,
    to_clean: &LogToClean,
    now_ms: i64,
    retention: TombstoneRetention,
    skip_dropped_batches: bool,
) -> Option<CleaningResult> {
    let first_dirty = to_clean.first_dirty_offset;
    let upper_bound = to_clean.first_uncleanable_offset;
    let config = log.config().clone();
    let segments = log.segments();

    // The horizon of the pre-KIP-534 rule.
    let clean_range = if first_dirty > 0 {
        log.segment_range(0, first_dirty)
    } else {
        0..0
    };
    let legacy_horizon = segments[clean_range]
        .last()
        .map_or(0, |s| s.last_modified_ms() - config.delete_retention_ms);

    // The offset map: the latest offset of every key in the dirty part.
    // Its keys are borrowed from the segments' buffers, which stay put
    // until the cleaned segments replace them.
    let mut map: HashMap<&[u8], i64> = HashMap::new();
    let mut latest_offset = -1_i64;
    if upper_bound > first_dirty {
        let dirty = log.segment_range(first_dirty, upper_bound);
        let dirty_segments = &segments[dirty];
        // Aborted batches do not enter the map (Kafka's buildOffsetMap).
        let mut txns = CleanedTransactionMetadata::new(
            log.collect_aborted_transactions(first_dirty, upper_bound),
        );
        for (i, segment) in dirty_segments.iter().enumerate() {
            for batch in segment.batches() {
                if batch.base_offset() >= upper_bound {
                    break;
                }
                let aborted = if batch.is_control() {
                    txns.on_control_batch_read(batch);
                    true
                } else {
                    txns.on_batch_read(batch)
                };
                if !aborted {
                    for record in batch.record_keys() {
                        if record.offset >= first_dirty
                            && let Some(key) = record.key
                        {
                            map.insert(key, record.offset);
                        }
                    }
                }
                if batch.last_offset() >= first_dirty {
                    latest_offset = latest_offset.max(batch.last_offset());
                }
            }
            let next_start = dirty_segments
                .get(i + 1)
                .map_or(upper_bound, LogSegment::base_offset);
            latest_offset = latest_offset.max(next_start - 1);
        }
    }
    if latest_offset < 0 {
        return None;
    }
    let end_offset = latest_offset + 1;

    // Group the segments to clean, [0, end_offset), by size.
    let range = log.segment_range(0, end_offset);
    let first_index = range.start;
    let to_rewrite = &segments[range];
    let mut groups: Vec<&[LogSegment]> = Vec::new();
    let mut start = 0;
    while start < to_rewrite.len() {
        let mut size = to_rewrite[start].size();
        let mut end = start + 1;
        while end < to_rewrite.len()
            && size + to_rewrite[end].size() <= usize::try_from(config.segment_bytes).unwrap_or(0)
        {
            size += to_rewrite[end].size();
            end += 1;
        }
        groups.push(&to_rewrite[start..end]);
        start = end;
    }

    let mut result = CleaningResult {
        topic: log.topic_partition().topic.clone(),
        partition: log.topic_partition().partition,
        broker: 0,
        first_dirty_offset: first_dirty,
        end_offset,
        records_read: 0,
        records_retained: 0,
        tombstones_removed: 0,
        horizons_set: 0,
        markers_removed: 0,
        segments_before: to_rewrite.len(),
        segments_after: groups.len(),
    };
    // The offsets the map keeps, sorted: a batch of the dirty part holding
    // none of them loses every record, which tells without reading it.
    let mut latest_offsets: Vec<i64> = if skip_dropped_batches {
        map.values().copied().collect()
    } else {
        Vec::new()
    };
    latest_offsets.sort_unstable();
    let first_rewritten = to_rewrite.first().map_or(0, LogSegment::base_offset);
    let mut txns = CleanedTransactionMetadata::new(
        log.collect_aborted_transactions(first_rewritten, end_offset.max(upper_bound)),
    );
    let filter = RecordFilter {
        active_producers: log.producer_state().last_records_of_active_producers(),
        map: &map,
        latest_offsets: skip_dropped_batches.then_some(&latest_offsets[..]),
        first_dirty,
        latest_offset,
        now_ms,
        delete_retention_ms: config.delete_retention_ms,
        retention,
        upper_bound,
    };
    let mut cleaned = Vec::with_capacity(groups.len());
    for group in &groups {
        let mut batches = Vec::new();
        for segment in *group {
            let retain_legacy_deletes = segment.last_modified_ms() > legacy_horizon;
            for batch in segment.batches() {
                if let Some(kept) =
                    filter.filter_batch(batch, retain_legacy_deletes, &mut txns, &mut result)
                {
                    batches.push(kept);
                }
            }
        }
        let (first, last) = (&group[0], &group[group.len() - 1]);
        cleaned.push(LogSegment::from_batches(
            first.base_offset(),
            batches,
            first.created_ms(),
            last.last_modified_ms(),
        ));
    }
    let counts: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let rewritten_end = segments
        .get(first_index + to_rewrite.len())
        .map_or(log.log_end_offset(), LogSegment::base_offset);
    for (i, (segment, count)) in cleaned.into_iter().zip(counts).enumerate() {
        log.replace_segments(first_index + i, count, segment);
    }
    log.on_cleaned(first_rewritten, rewritten_end, &txns.retained);
    Some(result)
}

struct RecordFilter<'a> {
    /// Producer id to its last data offset and epoch.
    active_producers: BTreeMap<i64, (Option<i64>, i16)>,
    map: &'a HashMap<&'a [u8], i64>,
    /// The map's offsets, sorted (when the shortcut is on).
    latest_offsets: Option<&'a [i64]>,
    first_dirty: i64,
    latest_offset: i64,
    now_ms: i64,
    delete_retention_ms: i64,
    retention: TombstoneRetention,
    upper_bound: i64,
}

impl RecordFilter<'_> {
    /// Kafka's `shouldRetainRecord`.
    fn retain(
        &self,
        batch: &RecordBatch,
        record: &LogRecord,
        retain_legacy_deletes: bool,
        result: &mut CleaningResult,
    ) -> bool {
        if record.offset > self.latest_offset {
            return true;
        }
        let Some(key) = &record.key else {
            return false;
        };
        let latest = self
            .map
            .get(&key[..])
            .is_none_or(|found| record.offset >= *found);
        if !latest {
            return false;
        }
        if record.value.is_some() {
            return true;
        }
        let retain_deletes = match self.retention {
            TombstoneRetention::DeleteHorizon => batch
                .delete_horizon_ms()
                .is_none_or(|horizon| self.now_ms < horizon),
            TombstoneRetention::LegacyLastModified => retain_legacy_deletes,
        };
        if !retain_deletes {
            result.tombstones_removed += 1;
        }
        retain_deletes
    }

    /// Whether `batch` lies wholly in the mapped dirty part, at or below
    /// the latest offset, and holds none of the offsets the map keeps: then
    /// every record of it goes (a keyed record stays only when it is its
    /// key's latest, and the map has the latest of every key there).
    fn drops_every_record(&self, batch: &RecordBatch) -> bool {
        let Some(offsets) = self.latest_offsets else {
            return false;
        };
        let (base, last) = (batch.base_offset(), batch.last_offset());
        if base < self.first_dirty || last > self.latest_offset || base >= self.upper_bound {
            return false;
        }
        let i = offsets.partition_point(|&o| o < base);
        offsets.get(i).is_none_or(|&o| o > last)
    }

    /// Kafka's `filterTo` for one batch: the batch as it was when every
    /// record stays and no horizon is needed, rebuilt with the kept records
    /// (base and last offsets kept), an empty batch when it ends the
    /// cleaning round, or nothing.
    fn filter_batch(
        &self,
        batch: &RecordBatch,
        retain_legacy_deletes: bool,
        txns: &mut CleanedTransactionMetadata,
        result: &mut CleaningResult,
    ) -> Option<RecordBatch> {
        if batch.producer_id() != NO_PRODUCER_ID {
            return self.filter_producer_batch(batch, retain_legacy_deletes, txns, result);
        }
        if self.drops_every_record(batch) {
            // As the loop below would find: no record is the latest of its
            // key (the map holds every key of the dirty part), none is past
            // the latest offset, so none is kept and no tombstone counted.
            result.records_read += usize::try_from(batch.record_count()).unwrap_or(0);
            return (batch.next_offset() == self.upper_bound)
                .then(|| RecordBatch::empty_like(batch));
        }
        let mut kept = Vec::new();
        let mut all_kept = true;
        let mut has_tombstone = false;
        for record in batch.records() {
            result.records_read += 1;
            if self.retain(batch, &record, retain_legacy_deletes, result) {
                has_tombstone |= record.value.is_none();
                kept.push(record);
            } else {
                all_kept = false;
            }
        }
        result.records_retained += kept.len();
        let set_horizon = self.retention == TombstoneRetention::DeleteHorizon
            && has_tombstone
            && batch.delete_horizon_ms().is_none();
        if !kept.is_empty() {
            if all_kept && !set_horizon {
                return Some(batch.clone());
            }
            let horizon = if set_horizon {
                result.horizons_set += 1;
                Some(self.now_ms.saturating_add(self.delete_retention_ms))
            } else {
                batch.delete_horizon_ms()
            };
            return rebuild(batch, &kept, horizon);
        }
        if batch.next_offset() == self.upper_bound {
            return Some(RecordBatch::empty_like(batch));
        }
        None
    }
}

impl RecordFilter<'_> {
    /// Kafka's `checkBatchRetention` and `filterTo` for a batch with a
    /// producer id: aborted data goes, a marker goes once its transaction's
    /// data is gone and its delete horizon has passed, and an active
    /// producer's last batch stays (empty when its records go).
    fn filter_producer_batch(
        &self,
        batch: &RecordBatch,
        retain_legacy_deletes: bool,
        txns: &mut CleanedTransactionMetadata,
        result: &mut CleaningResult,
    ) -> Option<RecordBatch> {
        let can_discard = if batch.is_control() {
            txns.on_control_batch_read(batch)
        } else {
            txns.on_batch_read(batch)
        };
        let discard_records = if batch.is_control() {
            can_discard && batch.delete_horizon_ms().is_some_and(|h| h <= self.now_ms)
        } else {
            can_discard
        };
        let last_of_producer =
            self.active_producers
                .get(&batch.producer_id())
                .is_some_and(|(last_data, epoch)| match last_data {
                    Some(offset) => batch.last_offset() == *offset,
                    None => batch.is_control() && batch.producer_epoch() == *epoch,
                });
        let retain_empty = last_of_producer || batch.next_offset() == self.upper_bound;
        if discard_records && !retain_empty {
            // BatchRetention.DELETE: the batch goes without a look at its records.
            result.records_read += usize::try_from(batch.record_count()).unwrap_or(0);
            if batch.is_control() {
                result.markers_removed += 1;
            }
            return None;
        }
        let mut kept = Vec::new();
        let mut all_kept = true;
        let mut has_tombstone = false;
        for record in batch.records() {
            result.records_read += 1;
            let retain = if discard_records {
                false
            } else if batch.is_control() {
                true
            } else {
                self.retain(batch, &record, retain_legacy_deletes, result)
            };
            if retain {
                has_tombstone |= record.value.is_none();
                kept.push(record);
            } else {
                all_kept = false;
            }
        }
        if discard_records && batch.is_control() {
            result.markers_removed += 1;
        }
        result.records_retained += kept.len();
        let marker_for_empty_txn = can_discard && batch.is_control();
        if !kept.is_empty() {
            let set_horizon = (has_tombstone || marker_for_empty_txn)
                && batch.delete_horizon_ms().is_none()
                && self.retention == TombstoneRetention::DeleteHorizon;
            if all_kept && !set_horizon {
                return Some(batch.clone());
            }
            let horizon = if set_horizon {
                result.horizons_set += 1;
                Some(self.now_ms.saturating_add(self.delete_retention_ms))
            } else {
                batch.delete_horizon_ms()
            };
            return rebuild(batch, &kept, horizon);
        }
        retain_empty.then(|| RecordBatch::empty_like(batch))
    }
}

/// The batch with only `kept`, its base and last offsets, producer fields,
/// timestamp type and leader epoch as they were (Kafka's
/// `buildRetainedRecordsInto`).
fn rebuild(batch: &RecordBatch, kept: &[LogRecord], horizon: Option<i64>) -> Option<RecordBatch> {
    let mut builder = RecordBatchBuilder::new(batch.base_offset())
        .partition_leader_epoch(batch.partition_leader_epoch())
        .producer(
            batch.producer_id(),
            batch.producer_epoch(),
            batch.base_sequence(),
        )
        .transactional(batch.is_transactional())
        .control(batch.is_control())
        .delete_horizon_ms(horizon);
    if batch.timestamp_type() == TimestampType::LogAppendTime {
        builder = builder.log_append_time(batch.max_timestamp());
    }
    for record in kept {
        builder.append_log_record(record).ok()?;
    }
    // Kafka keeps the original last offset, so that the producer's last
    // sequence survives compaction.
    builder = builder.last_offset(batch.last_offset());
    builder.build().ok()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use proptest::prelude::*;

    use super::*;
    use crate::log::LogConfig;
    use crate::record::Record;
    use crate::topic_partition::TopicPartition;

    #[derive(Debug, Clone)]
    enum Op {
        /// A batch of (key, value) records; `None` keys and values too.
        Append(Vec<(Option<u8>, Option<u8>)>),
        Roll,
        Clean,
        /// Moves the log start offset forward by this much (below the high
        /// watermark), as delete-records does.
        DeleteRecords(u8),
        /// Moves the clock (delete horizons pass).
        Advance(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        let record = (
            proptest::option::weighted(0.9, 0u8..8),
            proptest::option::weighted(0.8, any::<u8>()),
        );
        prop_oneof![
            6 => proptest::collection::vec(record, 1..6).prop_map(Op::Append),
            1 => Just(Op::Roll),
            2 => Just(Op::Clean),
            1 => (0u8..4).prop_map(Op::DeleteRecords),
            1 => (0u16..400).prop_map(Op::Advance),
        ]
    }

    fn batch_of(records: &[(Option<u8>, Option<u8>)], now: i64) -> RecordBatch {
        let mut builder = RecordBatchBuilder::new(0);
        for (k, v) in records {
            builder.append(&Record::new(
                k.map(|k| Bytes::from(vec![b'k', k])),
                v.map(|v| Bytes::from(vec![v; 3])),
                now,
            ));
        }
        builder.build().unwrap()
    }

    fn dump(log: &UnifiedLog) -> Vec<(i64, Vec<Bytes>)> {
        log.segments()
            .iter()
            .map(|s| {
                let batches = s.batches().iter().map(|b| b.as_bytes().clone()).collect();
                (s.base_offset(), batches)
            })
            .collect()
    }

    proptest! {
        /// Skipping the batches that lose every record changes nothing: the
        /// same results, the same segments byte for byte, as looking up
        /// every record, cleaning after cleaning.
        #[test]
        fn skipping_dropped_batches_cleans_as_looking_up_every_record(
            ops in proptest::collection::vec(op(), 1..80),
            legacy in any::<bool>(),
        ) {
            let config = LogConfig::from_pairs([
                ("cleanup.policy", "compact"),
                ("internal.segment.bytes", "300"),
                ("delete.retention.ms", "100"),
            ])
            .unwrap();
            let retention = if legacy {
                TombstoneRetention::LegacyLastModified
            } else {
                TombstoneRetention::DeleteHorizon
            };
            let mut now = 0_i64;
            let mut log = UnifiedLog::new(TopicPartition::new("t", 0), config, now);
            let mut checkpoint = None;
            for op in ops {
                match op {
                    Op::Append(records) => {
                        log.append_as_leader(batch_of(&records, now), now).unwrap();
                    }
                    Op::Roll => log.roll(now),
                    Op::DeleteRecords(n) => {
                        let to = (log.log_start_offset() + i64::from(n)).min(log.high_watermark());
                        log.maybe_increment_log_start_offset(to).unwrap();
                        log.delete_old_segments(now);
                    }
                    Op::Advance(ms) => now += i64::from(ms),
                    Op::Clean => {
                        let to_clean = LogToClean::measure(&log, checkpoint, now);
                        let mut slow = log.clone();
                        let fast_result = clean_with(&mut log, &to_clean, now, retention, true);
                        let slow_result = clean_with(&mut slow, &to_clean, now, retention, false);
                        prop_assert_eq!(&fast_result, &slow_result);
                        prop_assert_eq!(dump(&log), dump(&slow));
                        if let Some(r) = fast_result {
                            checkpoint = Some(r.end_offset);
                        }
                    }
                }
            }
        }
    }
}
