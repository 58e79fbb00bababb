//! A partition's producer state (Kafka's `ProducerStateManager`): for each
//! producer id the latest epoch, last sequence and last data offset, the
//! transactions still open (their first offsets), the transactions whose
//! marker is written but not yet below the high watermark, and the
//! aborted-transactions index (Kafka's `TransactionIndex`) that
//! `read_committed` fetches use to skip aborted data.
//!
//! The first unstable offset is the first offset of the earliest open (or
//! completed but not yet replicated) transaction; the log's last stable
//! offset is that, or the high watermark when it is lower or there is none.
//!
//! ```
//! use streams_broker::log::ProducerStateManager;
//! use streams_broker::record::{ControlRecordType, Record, RecordBatchBuilder, end_transaction_marker};
//!
//! let mut state = ProducerStateManager::default();
//! let mut builder = RecordBatchBuilder::new(0).producer(7, 0, 0).transactional(true);
//! builder.append(&Record::new(Some("k"), Some("v"), 0));
//! state.update(&builder.build()?);
//! assert_eq!(state.first_unstable_offset(1), Some(0));
//! state.update(&end_transaction_marker(1, 0, 7, 0, 0, 0, ControlRecordType::Abort));
//! assert_eq!(state.first_unstable_offset(2), None);
//! assert_eq!(state.aborted_transactions(0, 2)[0].last_offset, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use crate::record::{ControlRecordType, NO_PRODUCER_ID, RecordBatch};

/// What the log knows of one producer id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerStateEntry {
    /// The producer id.
    pub producer_id: i64,
    /// The latest epoch seen (data or marker).
    pub producer_epoch: i16,
    /// The last sequence of its last data batch, -1 before any.
    pub last_sequence: i32,
    /// The last offset of its last data batch.
    pub last_data_offset: Option<i64>,
    /// The first offset of its open transaction.
    pub current_txn_first_offset: Option<i64>,
    /// The coordinator epoch of its last marker.
    pub coordinator_epoch: i32,
}

/// An aborted transaction in the index (Kafka's `AbortedTxn`): its
/// producer, its first offset, the offset of its abort marker, and the
/// last stable offset when it was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortedTxn {
    /// The producer id.
    pub producer_id: i64,
    /// The transaction's first offset.
    pub first_offset: i64,
    /// The abort marker's offset.
    pub last_offset: i64,
    /// The last stable offset right after the abort.
    pub last_stable_offset: i64,
}

/// Why a producer's batch is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProducerStateError {
    /// The batch's epoch is older than the producer's latest
    /// (`INVALID_PRODUCER_EPOCH`): a zombie.
    InvalidProducerEpoch {
        /// The producer id.
        producer_id: i64,
        /// The batch's epoch.
        epoch: i16,
        /// The latest epoch the log has seen.
        current_epoch: i16,
    },
    /// The batch's base sequence does not follow the last one
    /// (`OUT_OF_ORDER_SEQUENCE_NUMBER`).
    OutOfOrderSequence {
        /// The producer id.
        producer_id: i64,
        /// The sequence expected.
        expected: i32,
        /// The batch's base sequence.
        got: i32,
    },
}

/// A partition's producer state: each producer id's epoch, sequence and
/// open transaction, the completed transactions whose marker is not yet
/// below the high watermark, and the aborted-transactions index. The first
/// unstable offset is the first offset of the earliest of those
/// transactions.
///
/// ```
/// use streams_broker::log::ProducerStateManager;
/// use streams_broker::record::{Record, RecordBatchBuilder};
///
/// let mut state = ProducerStateManager::default();
/// let mut builder = RecordBatchBuilder::new(5).producer(1, 0, 0).transactional(true);
/// builder.append(&Record::new(Some("k"), Some("v"), 0));
/// state.update(&builder.build()?);
/// assert_eq!(state.ongoing_transactions().collect::<Vec<_>>(), [(5, 1)]);
/// assert_eq!(state.producer(1).map(|p| p.last_sequence), Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerStateEntry>,
    /// Open transactions: first offset to producer id.
    ongoing: BTreeMap<i64, i64>,
    /// Completed transactions whose marker may be at or above the high
    /// watermark: first offset to marker offset.
    unreplicated: BTreeMap<i64, i64>,
    aborted: Vec<AbortedTxn>,
}

impl ProducerStateManager {
    /// What the log knows of `producer_id`.
    pub fn producer(&self, producer_id: i64) -> Option<&ProducerStateEntry> {
        self.producers.get(&producer_id)
    }

    /// Every producer id's state, by id.
    pub fn producers(&self) -> impl Iterator<Item = &ProducerStateEntry> {
        self.producers.values()
    }

    /// Checks a batch the leader is about to append (Kafka's
    /// `ProducerAppendInfo.checkProducerEpoch` and sequence check): an
    /// epoch older than the latest is fenced; a data batch of the latest
    /// epoch must continue its sequence, one of a newer epoch start at 0.
    ///
    /// # Errors
    /// [`ProducerStateError`] naming the producer and the epochs or
    /// sequences.
    pub fn check(&self, batch: &RecordBatch) -> Result<(), ProducerStateError> {
        let producer_id = batch.producer_id();
        if producer_id == NO_PRODUCER_ID {
            return Ok(());
        }
        let Some(entry) = self.producers.get(&producer_id) else {
            return Ok(());
        };
        let epoch = batch.producer_epoch();
        if epoch < entry.producer_epoch {
            return Err(ProducerStateError::InvalidProducerEpoch {
                producer_id,
                epoch,
                current_epoch: entry.producer_epoch,
            });
        }
        if batch.is_control() {
            return Ok(());
        }
        let expected = if epoch > entry.producer_epoch || entry.last_sequence < 0 {
            0
        } else {
            entry.last_sequence.wrapping_add(1)
        };
        if batch.base_sequence() != expected {
            return Err(ProducerStateError::OutOfOrderSequence {
                producer_id,
                expected,
                got: batch.base_sequence(),
            });
        }
        Ok(())
    }

    /// Takes in an appended batch (its offsets final): a data batch moves
    /// its producer's sequence and may open a transaction; a marker closes
    /// it, and an abort marker adds it to the aborted-transactions index.
    pub fn update(&mut self, batch: &RecordBatch) {
        let producer_id = batch.producer_id();
        if producer_id == NO_PRODUCER_ID {
            return;
        }
        let entry = self
            .producers
            .entry(producer_id)
            .or_insert(ProducerStateEntry {
                producer_id,
                producer_epoch: batch.producer_epoch(),
                last_sequence: -1,
                last_data_offset: None,
                current_txn_first_offset: None,
                coordinator_epoch: -1,
            });
        if batch.producer_epoch() > entry.producer_epoch {
            entry.producer_epoch = batch.producer_epoch();
            entry.last_sequence = -1;
        }
        if let Some(marker) = batch.end_transaction_marker() {
            let first = entry
                .current_txn_first_offset
                .take()
                .unwrap_or(batch.base_offset());
            entry.coordinator_epoch = marker.coordinator_epoch;
            self.ongoing.remove(&first);
            let last = batch.last_offset();
            self.unreplicated.insert(first, last);
            if marker.kind == ControlRecordType::Abort {
                // Kafka's lastStableOffset(completedTxn): the first offset
                // of another open transaction, else past the marker.
                let last_stable_offset = self.ongoing.keys().next().copied().unwrap_or(last + 1);
                self.aborted.push(AbortedTxn {
                    producer_id,
                    first_offset: first,
                    last_offset: last,
                    last_stable_offset,
                });
            }
            return;
        }
        if batch.is_control() {
            return;
        }
        if batch.record_count() > 0 || batch.base_sequence() >= 0 {
            entry.last_sequence = batch.last_sequence();
        }
        entry.last_data_offset = Some(batch.last_offset());
        if batch.is_transactional() && entry.current_txn_first_offset.is_none() {
            entry.current_txn_first_offset = Some(batch.base_offset());
            self.ongoing.insert(batch.base_offset(), producer_id);
        }
    }

    /// The first offset of the earliest transaction that is open, or
    /// completed with its marker at or above `high_watermark`.
    pub fn first_unstable_offset(&self, high_watermark: i64) -> Option<i64> {
        let open = self.ongoing.keys().next().copied();
        let unreplicated = self
            .unreplicated
            .iter()
            .find(|(_, last)| **last >= high_watermark)
            .map(|(first, _)| *first);
        match (open, unreplicated) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Forgets completed transactions whose marker is below the high
    /// watermark (they are stable now).
    pub(crate) fn on_high_watermark_update(&mut self, high_watermark: i64) {
        self.unreplicated.retain(|_, last| *last >= high_watermark);
    }

    /// The open transactions, as (first offset, producer id), oldest first.
    pub fn ongoing_transactions(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.ongoing.iter().map(|(o, p)| (*o, *p))
    }

    /// The aborted transactions a fetch of `[start_offset, upper_bound)`
    /// must know of (Kafka's `collectAbortedTransactions`): those whose
    /// marker is at or after `start_offset` and that began before
    /// `upper_bound`, in the order they were aborted.
    pub fn aborted_transactions(&self, start_offset: i64, upper_bound: i64) -> Vec<AbortedTxn> {
        self.aborted
            .iter()
            .filter(|t| t.last_offset >= start_offset && t.first_offset < upper_bound)
            .copied()
            .collect()
    }

    /// After a cleaning of `[from, to)`: the index entries whose marker is
    /// there are those the cleaner kept (Kafka rewrites a cleaned
    /// segment's transaction index with them); an aborted transaction
    /// whose data is all gone needs no entry.
    pub(crate) fn on_cleaned(&mut self, from: i64, to: i64, kept: &[AbortedTxn]) {
        self.aborted
            .retain(|t| t.last_offset < from || t.last_offset >= to || kept.contains(t));
    }

    /// Drops index entries wholly below the log start offset.
    pub(crate) fn on_log_start_offset(&mut self, log_start_offset: i64) {
        self.aborted.retain(|t| t.last_offset >= log_start_offset);
    }

    /// The active producers with their last data offset and epoch (Kafka's
    /// `lastRecordsOfActiveProducers`), which the cleaner keeps batches for.
    pub fn last_records_of_active_producers(&self) -> BTreeMap<i64, (Option<i64>, i16)> {
        self.producers
            .values()
            .map(|e| (e.producer_id, (e.last_data_offset, e.producer_epoch)))
            .collect()
    }

    /// The state rebuilt from `batches` (a log read from its start after a
    /// truncation), keeping the index entries of `previous` below
    /// `truncated_at` (the data of those transactions may be cleaned away
    /// already, so the log alone cannot restore their first offsets).
    pub(crate) fn rebuild<'a>(
        previous: &ProducerStateManager,
        truncated_at: i64,
        batches: impl IntoIterator<Item = &'a RecordBatch>,
    ) -> ProducerStateManager {
        let mut state = ProducerStateManager::default();
        for batch in batches {
            state.update(batch);
        }
        state.aborted = previous
            .aborted
            .iter()
            .filter(|t| t.last_offset < truncated_at)
            .copied()
            .collect();
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BrokerError;
    use crate::log::{LogConfig, UnifiedLog};
    use crate::record::{Record, RecordBatchBuilder, end_transaction_marker};
    use crate::topic_partition::TopicPartition;

    fn data(producer_id: i64, epoch: i16, sequence: i32, records: usize) -> RecordBatch {
        let mut builder = RecordBatchBuilder::new(0)
            .producer(producer_id, epoch, sequence)
            .transactional(true);
        for i in 0..records {
            builder.append(&Record::new(Some("k"), Some(i.to_string()), 0));
        }
        builder.build().unwrap()
    }

    fn log() -> UnifiedLog {
        UnifiedLog::new(TopicPartition::new("t", 0), LogConfig::default(), 0)
    }

    #[test]
    fn an_older_epoch_is_fenced_and_sequences_must_follow() {
        let mut log = log();
        log.append_as_leader(data(7, 1, 0, 2), 0).unwrap();
        let err = log.append_as_leader(data(7, 0, 2, 1), 0).unwrap_err();
        assert_eq!(
            err,
            BrokerError::InvalidProducerEpoch {
                topic: "t".to_owned(),
                partition: 0,
                producer_id: 7,
                epoch: 0,
                current_epoch: 1,
            }
        );
        let err = log.append_as_leader(data(7, 1, 5, 1), 0).unwrap_err();
        assert!(matches!(
            err,
            BrokerError::OutOfOrderSequence {
                expected: 2,
                got: 5,
                ..
            }
        ));
        // A new epoch starts its sequence at 0; nothing above was appended.
        log.append_as_leader(data(7, 2, 0, 1), 0).unwrap();
        assert_eq!(log.log_end_offset(), 3);
        // A marker with an older epoch is refused as well.
        let marker = end_transaction_marker(0, 0, 7, 1, -1, 0, ControlRecordType::Commit);
        assert!(log.append_as_leader(marker, 0).is_err());
    }

    #[test]
    fn a_marker_above_the_high_watermark_keeps_the_lso_at_its_transaction() {
        let mut log = log();
        log.append_as_replicated_leader(data(1, 0, 0, 3), 0)
            .unwrap();
        log.set_high_watermark(3);
        assert_eq!(log.last_stable_offset(), 0);
        let marker = end_transaction_marker(0, 0, 1, 0, -1, 0, ControlRecordType::Commit);
        log.append_as_replicated_leader(marker, 0).unwrap();
        // Completed, but its marker (offset 3) is not replicated yet.
        assert_eq!(log.producer_state().ongoing_transactions().count(), 0);
        assert_eq!(log.last_stable_offset(), 0);
        log.set_high_watermark(4);
        assert_eq!(log.last_stable_offset(), 4);
        assert_eq!(log.first_unstable_offset(), None);
    }

    #[test]
    fn truncation_rebuilds_the_state_from_the_batches_left() {
        let mut log = log();
        log.append_as_leader(data(1, 0, 0, 2), 0).unwrap(); // 0-1
        let abort = end_transaction_marker(0, 0, 1, 0, -1, 0, ControlRecordType::Abort);
        log.append_as_leader(abort, 0).unwrap(); // 2
        log.append_as_replicated_leader(data(2, 0, 0, 2), 0)
            .unwrap(); // 3-4, open
        assert_eq!(log.first_unstable_offset(), Some(3));
        // A follower truncating to 3 loses the open transaction, not the
        // aborted one.
        log.truncate_to(3, 0);
        assert_eq!(log.first_unstable_offset(), None);
        assert_eq!(log.last_stable_offset(), 3);
        assert_eq!(log.collect_aborted_transactions(0, 3).len(), 1);
        assert!(log.producer_state().producer(2).is_none());
        // Producer 1's sequence goes on where it was.
        assert_eq!(log.producer_state().producer(1).unwrap().last_sequence, 1);
        log.append_as_leader(data(1, 0, 2, 1), 0).unwrap();
    }
}
