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
    /// Producers in an aborted transaction, with the last offset of the
    /// last batch of it read (`None` while none has been).
    ongoing_aborted: BTreeMap<i64, Option<i64>>,
}

impl CleanedTransactionMetadata {
    pub(super) fn new(mut aborted: Vec<AbortedTxn>) -> Self {
        aborted.sort_by_key(|t| t.first_offset);
        Self {
            aborted,
            next: 0,
            ongoing_committed: BTreeSet::new(),
            ongoing_aborted: BTreeMap::new(),
        }
    }

    fn consume_aborted_up_to(&mut self, offset: i64) {
        while let Some(txn) = self
            .aborted
            .get(self.next)
            .filter(|t| t.first_offset <= offset)
        {
            self.ongoing_aborted.entry(txn.producer_id).or_insert(None);
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
            Some(ControlRecordType::Abort) => {
                // Retained while batches of the transaction are left.
                !matches!(self.ongoing_aborted.remove(&producer_id), Some(Some(_)))
            }
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
        if let Some(last) = self.ongoing_aborted.get_mut(&producer_id) {
            *last = Some(batch.last_offset());
            true
        } else {
            self.ongoing_committed.insert(producer_id);
            false
        }
    }
}
