//! The transactions a cleaning walks through (Kafka's
//! `CleanedTransactionMetadata`): which batches belong to aborted
//! transactions, and when a marker may go.

use std::collections::{BTreeMap, BTreeSet};

use crate::log::AbortedTxn;
use crate::record::{ControlRecordType, RecordBatch};

/// The cleaner's view of the transactions around the batch it is at.
#[derive(Debug)]
pub(super) struct CleanedTransactionMetadata {
    /// Aborted transactions not reached yet, by first offset (a sorted
    /// queue; `next` is the head).
    aborted: Vec<AbortedTxn>,
    next: usize,
    /// Producers whose committed transaction had a batch read since its
    /// start.
    ongoing_committed: BTreeSet<i64>,
    /// Producers in an aborted transaction, with the transaction and the
    /// last offset of the last batch of it read (`None` while none has been).
    ongoing_aborted: BTreeMap<i64, (AbortedTxn, Option<i64>)>,
    /// The aborted transactions whose marker stays with batches of theirs
    /// (Kafka's cleaned transaction index).
    pub(super) retained: Vec<AbortedTxn>,
}

impl CleanedTransactionMetadata {
    pub(super) fn new(mut aborted: Vec<AbortedTxn>) -> Self {
        aborted.sort_by_key(|t| t.first_offset);
        Self {
            aborted,
            next: 0,
            ongoing_committed: BTreeSet::new(),
            ongoing_aborted: BTreeMap::new(),
            retained: Vec::new(),
        }
    }

    fn consume_aborted_up_to(&mut self, offset: i64) {
        while let Some(txn) = self
            .aborted
            .get(self.next)
            .filter(|t| t.first_offset <= offset)
        {
            self.ongoing_aborted
                .entry(txn.producer_id)
                .or_insert((*txn, None));
            self.next += 1;
        }
    }

    /// A control batch read: whether it may be discarded (Kafka's
    /// `onControlBatchRead`): an abort marker once no batch of its
    /// transaction was read, a commit marker likewise; an empty control
    /// batch (cleaned before) always.
    pub(super) fn on_control_batch_read(&mut self, batch: &RecordBatch) -> bool {
        self.consume_aborted_up_to(batch.last_offset());
        if batch.record_count() == 0 {
            return true;
        }
        let producer_id = batch.producer_id();
        match batch.control_record_type() {
            Some(ControlRecordType::Abort) => match self.ongoing_aborted.remove(&producer_id) {
                // Retained while batches of the transaction are left, and
                // so is its entry in the index.
                Some((txn, Some(_))) => {
                    self.retained.push(txn);
                    false
                }
                _ => true,
            },
            Some(ControlRecordType::Commit) => !self.ongoing_committed.remove(&producer_id),
            None => false,
        }
    }

    /// A data batch read: whether it belongs to an aborted transaction
    /// (Kafka's `onBatchRead`).
    pub(super) fn on_batch_read(&mut self, batch: &RecordBatch) -> bool {
        self.consume_aborted_up_to(batch.last_offset());
        if !batch.is_transactional() {
            return false;
        }
        let producer_id = batch.producer_id();
        if let Some((_, last)) = self.ongoing_aborted.get_mut(&producer_id) {
            *last = Some(batch.last_offset());
            true
        } else {
            self.ongoing_committed.insert(producer_id);
            false
        }
    }
}

/// Kafka's `LogCleanerTest` cases for transactions, on a log appended to
/// as the leader and coordinator do. Kafka's test offset map keeps its
/// latest offset across cleanings, so a cleaning there without new data
/// still walks the log; here such a pass cleans from offset 0, which
/// rebuilds the same map.
#[cfg(test)]
mod tests {
    use crate::cleaner::{LogToClean, TombstoneRetention, clean};
    use crate::log::{AbortedTxn, LogConfig, UnifiedLog};
    use crate::record::{ControlRecordType, Record, RecordBatchBuilder, end_transaction_marker};
    use crate::topic_partition::TopicPartition;

    /// Kafka's `largeTimestamp`.
    const LARGE: i64 = i64::MAX - 24 * 60 * 60 * 1000;
    const DAY: i64 = 24 * 60 * 60 * 1000;

    fn log() -> UnifiedLog {
        let config = LogConfig::from_pairs([("cleanup.policy", "compact")]).unwrap();
        UnifiedLog::new(TopicPartition::new("test", 0), config, 0)
    }

    /// Kafka's `appendTransactionalAsLeader`: each call a batch of the
    /// keys (value = key), its sequence following the last.
    struct Appender {
        producer_id: i64,
        sequence: i32,
    }

    impl Appender {
        fn new(producer_id: i64) -> Self {
            Self {
                producer_id,
                sequence: 0,
            }
        }

        fn append(&mut self, log: &mut UnifiedLog, keys: &[u32]) {
            let mut builder = RecordBatchBuilder::new(0)
                .producer(self.producer_id, 0, self.sequence)
                .transactional(true);
            for key in keys {
                let k = key.to_string();
                builder.append(&Record::new(Some(k.clone()), Some(k), 0));
            }
            log.append_as_leader(builder.build().unwrap(), 0).unwrap();
            self.sequence += i32::try_from(keys.len()).unwrap();
        }
    }

    fn marker(log: &mut UnifiedLog, producer_id: i64, kind: ControlRecordType) {
        let batch = end_transaction_marker(0, 0, producer_id, 0, -1, 0, kind);
        log.append_as_leader(batch, 0).unwrap();
    }

    /// Cleans `[first_dirty, active segment)` at `now`; returns the new
    /// dirty offset.
    fn clean_at(log: &mut UnifiedLog, first_dirty: i64, now: i64) -> i64 {
        let to_clean = LogToClean {
            first_dirty_offset: first_dirty,
            first_uncleanable_offset: log.active_segment().base_offset(),
            clean_bytes: 0,
            cleanable_bytes: 0,
            need_compaction_now: false,
        };
        clean(log, &to_clean, now, TombstoneRetention::DeleteHorizon)
            .map_or(first_dirty, |r| r.end_offset)
    }

    /// Kafka's `runTwoPassClean`: at `now`, then past the delete horizon.
    fn two_pass_clean(log: &mut UnifiedLog, now: i64) -> i64 {
        clean_at(log, 0, now);
        clean_at(log, 0, now + DAY + 1)
    }

    /// Kafka's `keysInLog`: the keys of the data records with a value.
    fn keys(log: &UnifiedLog) -> Vec<String> {
        log.segments()
            .iter()
            .flat_map(|s| s.batches())
            .filter(|b| !b.is_control())
            .flat_map(|b| b.records())
            .filter(|r| r.value.is_some())
            .filter_map(|r| r.key.map(|k| String::from_utf8_lossy(&k).into_owned()))
            .collect()
    }

    /// Kafka's `offsetsInLog`: every record with a key and a value,
    /// markers included.
    fn offsets(log: &UnifiedLog) -> Vec<i64> {
        log.segments()
            .iter()
            .flat_map(|s| s.batches())
            .flat_map(|b| b.records())
            .filter(|r| r.key.is_some() && r.value.is_some())
            .map(|r| r.offset)
            .collect()
    }

    /// Kafka's `lastOffsetsPerBatchInLog`.
    fn last_offsets(log: &UnifiedLog) -> Vec<i64> {
        log.segments()
            .iter()
            .flat_map(|s| s.batches())
            .map(|b| b.last_offset())
            .collect()
    }

    #[test]
    fn basic_transaction_aware_cleaning() {
        let mut log = log();
        let (mut p1, mut p2) = (Appender::new(1), Appender::new(2));
        p1.append(&mut log, &[1, 2]);
        p2.append(&mut log, &[2, 3]);
        p1.append(&mut log, &[3, 4]);
        marker(&mut log, 1, ControlRecordType::Abort);
        marker(&mut log, 2, ControlRecordType::Commit);
        p1.append(&mut log, &[2]);
        marker(&mut log, 1, ControlRecordType::Commit);
        let aborted = log.collect_aborted_transactions(0, log.log_end_offset());
        assert_eq!(
            aborted,
            [AbortedTxn {
                producer_id: 1,
                first_offset: 0,
                last_offset: 6,
                last_stable_offset: 2,
            }]
        );
        log.roll(0);
        clean_at(&mut log, 0, 0);
        assert_eq!(keys(&log), ["3", "2"]);
        assert_eq!(offsets(&log), [3, 6, 7, 8, 9]);
        // The index is still right.
        assert_eq!(
            log.collect_aborted_transactions(0, log.log_end_offset()),
            aborted
        );
    }

    #[test]
    fn commit_marker_removal() {
        let mut log = log();
        let mut producer = Appender::new(1);
        producer.append(&mut log, &[1]);
        producer.append(&mut log, &[2, 3]);
        marker(&mut log, 1, ControlRecordType::Commit);
        producer.append(&mut log, &[2]);
        marker(&mut log, 1, ControlRecordType::Commit);
        log.roll(0);
        // The marker cannot go in this pass: its transaction has records.
        let dirty = clean_at(&mut log, 0, LARGE);
        assert_eq!(keys(&log), ["1", "3", "2"]);
        assert_eq!(offsets(&log), [0, 2, 3, 4, 5]);

        producer.append(&mut log, &[1, 3]);
        marker(&mut log, 1, ControlRecordType::Commit);
        log.roll(0);
        // The marker at 3 stays: the batches of its transaction were read.
        clean_at(&mut log, dirty, LARGE);
        assert_eq!(keys(&log), ["2", "1", "3"]);
        assert_eq!(offsets(&log), [3, 4, 5, 6, 7, 8]);
        // Again at the same time: it gets its horizon, and stays.
        clean_at(&mut log, 0, LARGE);
        assert_eq!(offsets(&log), [3, 4, 5, 6, 7, 8]);
        let horizon = log.segments()[0].batches()[0].delete_horizon_ms();
        assert_eq!(horizon, Some(LARGE + DAY));
        // At the end of time, past its horizon: removed.
        clean_at(&mut log, 0, i64::MAX);
        assert_eq!(keys(&log), ["2", "1", "3"]);
        assert_eq!(offsets(&log), [4, 5, 6, 7, 8]);
    }

    #[test]
    fn abort_marker_removal() {
        let mut log = log();
        let mut producer = Appender::new(1);
        producer.append(&mut log, &[1]);
        producer.append(&mut log, &[2, 3]);
        marker(&mut log, 1, ControlRecordType::Abort);
        producer.append(&mut log, &[3]);
        marker(&mut log, 1, ControlRecordType::Commit);
        log.roll(0);
        // Aborted records are removed, the abort marker kept.
        clean_at(&mut log, 0, LARGE);
        assert_eq!(keys(&log), ["3"]);
        assert_eq!(offsets(&log), [3, 4, 5]);
        // The first pass sets the marker's delete horizon, the second
        // removes it.
        two_pass_clean(&mut log, LARGE - DAY - 1);
        assert_eq!(keys(&log), ["3"]);
        assert_eq!(offsets(&log), [4, 5]);
    }

    #[test]
    fn abort_marker_retention_with_empty_batch() {
        let mut log = log();
        let mut producer = Appender::new(1);
        producer.append(&mut log, &[2, 3]); // last offset 1
        marker(&mut log, 1, ControlRecordType::Abort);
        log.roll(0);
        let indexed = |log: &UnifiedLog| {
            let aborted = log.collect_aborted_transactions(0, 100);
            assert_eq!(aborted.len(), 1);
            assert_eq!(
                (
                    aborted[0].producer_id,
                    aborted[0].first_offset,
                    aborted[0].last_offset
                ),
                (1, 0, 2)
            );
        };
        indexed(&log);

        // The records go; the batch stays empty (it holds the producer's
        // last sequence), and so the marker stays.
        let dirty = clean_at(&mut log, 0, LARGE);
        indexed(&log);
        assert!(keys(&log).is_empty());
        assert_eq!(offsets(&log), [2]);
        assert_eq!(last_offsets(&log), [1, 2]);
        let empty = &log.segments()[0].batches()[0];
        assert_eq!((empty.record_count(), empty.last_sequence()), (0, 1));

        // Cleaned again, the empty batch stays: it still holds the last sequence.
        two_pass_clean(&mut log, LARGE - DAY - 1);
        indexed(&log);
        assert_eq!(offsets(&log), [2]);
        assert_eq!(last_offsets(&log), [1, 2]);

        // A new last sequence: the empty batch goes; the marker not yet,
        // since the empty batch was read in this pass.
        producer.append(&mut log, &[1]);
        log.roll(0);
        clean_at(&mut log, dirty, LARGE);
        indexed(&log);
        assert_eq!(keys(&log), ["1"]);
        assert_eq!(offsets(&log), [2, 3]);
        assert_eq!(last_offsets(&log), [2, 3]);

        // Then the horizon, then the marker goes.
        two_pass_clean(&mut log, LARGE - DAY - 1);
        assert_eq!(keys(&log), ["1"]);
        assert_eq!(offsets(&log), [3]);
        assert_eq!(last_offsets(&log), [3]);
        // Its data and marker gone, the transaction leaves the index.
        assert!(log.collect_aborted_transactions(0, 100).is_empty());
    }
}
