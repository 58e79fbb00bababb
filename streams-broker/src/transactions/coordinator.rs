//! The coordinator's requests (`InitProducerId`, `AddPartitionsToTxn`,
//! `AddOffsetsToTxn` with `TxnOffsetCommit`, `EndTxn`), the markers it
//! writes, and the abort of timed-out transactions, as methods of the
//! cluster's state.

use std::collections::{BTreeMap, BTreeSet};

use super::{TransactionConfig, TransactionMetadata, TransactionState};
use crate::cluster::{Cluster, State};
use crate::error::{BrokerError, Result};
use crate::record::{ControlRecordType, end_transaction_marker};
use crate::topic_partition::TopicPartition;

/// The coordinator's state: every `transactional.id`'s metadata and the
/// next producer id to give out.
#[derive(Debug, Clone)]
pub(crate) struct TransactionCoordinator {
    pub(crate) config: TransactionConfig,
    transactions: BTreeMap<String, TransactionMetadata>,
    next_producer_id: i64,
    /// When the next look for timed-out transactions is due.
    pub(crate) next_abort_check_ms: i64,
}

/// The coordinator epoch written in markers (one coordinator, never moved).
const COORDINATOR_EPOCH: i32 = 0;

impl TransactionCoordinator {
    pub(crate) fn new(config: TransactionConfig, now_ms: i64) -> Self {
        Self {
            config,
            transactions: BTreeMap::new(),
            next_producer_id: 0,
            next_abort_check_ms: now_ms
                .saturating_add(config.abort_timed_out_transaction_cleanup_interval_ms),
        }
    }
}

fn fenced(txn: &TransactionMetadata, producer_id: i64, epoch: i16) -> BrokerError {
    BrokerError::ProducerFenced {
        transactional_id: txn.transactional_id.clone(),
        producer_id,
        epoch,
        current_epoch: txn.producer_epoch,
    }
}

impl State {
    /// Whether an open transaction holds an offset of `group` for `tp`
    /// that is not committed yet (Kafka's
    /// `GroupMetadata.hasPendingOffsetCommitsForTopicPartition`): an
    /// OffsetFetch with `require_stable` is answered
    /// `UNSTABLE_OFFSET_COMMIT` until it ends (KIP-447).
    pub(crate) fn has_pending_txn_offset(&self, group: &str, tp: &TopicPartition) -> bool {
        self.transactions.transactions.values().any(|t| {
            t.pending_offsets
                .get(group)
                .is_some_and(|o| o.contains_key(tp))
        })
    }

    fn txn(&self, transactional_id: &str) -> Option<&TransactionMetadata> {
        self.transactions.transactions.get(transactional_id)
    }

    /// The metadata of `transactional_id` when `producer_id` and `epoch`
    /// are its current ones (Kafka answers `PRODUCER_FENCED` otherwise).
    fn checked_txn(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
    ) -> Result<&mut TransactionMetadata> {
        let txn = self
            .transactions
            .transactions
            .get_mut(transactional_id)
            .ok_or_else(|| BrokerError::ProducerFenced {
                transactional_id: transactional_id.to_owned(),
                producer_id,
                epoch,
                current_epoch: -1,
            })?;
        if txn.producer_id != producer_id || txn.producer_epoch != epoch {
            return Err(fenced(txn, producer_id, epoch));
        }
        Ok(txn)
    }

    /// `InitProducerId`: a producer id and a new epoch for
    /// `transactional_id`. An open transaction of an older producer is
    /// aborted first (its epoch bumped, so it is fenced).
    ///
    /// # Errors
    /// [`BrokerError::InvalidTransactionTimeout`], or
    /// [`BrokerError::ConcurrentTransactions`] while markers of the last
    /// transaction cannot be written.
    pub(crate) fn init_producer_id(
        &mut self,
        transactional_id: &str,
        timeout_ms: i64,
    ) -> Result<(i64, i16)> {
        let max_ms = self.transactions.config.transaction_max_timeout_ms;
        if timeout_ms < 1 || timeout_ms > max_ms {
            return Err(BrokerError::InvalidTransactionTimeout {
                transactional_id: transactional_id.to_owned(),
                timeout_ms,
                max_ms,
            });
        }
        if self.txn(transactional_id).is_none() {
            let producer_id = self.transactions.next_producer_id;
            self.transactions.next_producer_id += 1;
            self.transactions.transactions.insert(
                transactional_id.to_owned(),
                TransactionMetadata {
                    transactional_id: transactional_id.to_owned(),
                    producer_id,
                    producer_epoch: 0,
                    timeout_ms,
                    state: TransactionState::Empty,
                    partitions: BTreeSet::new(),
                    txn_start_ms: -1,
                    pending_markers: BTreeSet::new(),
                    pending_offsets: BTreeMap::new(),
                },
            );
            return Ok((producer_id, 0));
        }
        self.complete_markers(transactional_id)?;
        if self
            .txn(transactional_id)
            .is_some_and(|t| t.state == TransactionState::Ongoing)
        {
            // The old producer's transaction: fenced and aborted.
            self.bump_epoch(transactional_id);
            self.end_with_markers(transactional_id, false);
            self.complete_markers(transactional_id)?;
        }
        self.bump_epoch(transactional_id);
        let txn = self
            .transactions
            .transactions
            .get_mut(transactional_id)
            // Inserted above when missing: this cannot fail.
            .ok_or(BrokerError::TransactionalIdRequired {
                operation: "init_transactions",
            })?;
        txn.timeout_ms = timeout_ms;
        txn.state = TransactionState::Empty;
        txn.partitions.clear();
        txn.pending_offsets.clear();
        txn.txn_start_ms = -1;
        Ok((txn.producer_id, txn.producer_epoch))
    }

    /// Bumps the epoch; at the last epoch a new producer id at epoch 0
    /// (Kafka's epoch exhaustion).
    fn bump_epoch(&mut self, transactional_id: &str) {
        let next_producer_id = self.transactions.next_producer_id;
        if let Some(txn) = self.transactions.transactions.get_mut(transactional_id) {
            if txn.producer_epoch >= i16::MAX - 1 {
                txn.producer_id = next_producer_id;
                txn.producer_epoch = 0;
                self.transactions.next_producer_id += 1;
            } else {
                txn.producer_epoch += 1;
            }
        }
    }

    /// Writes the pending markers; fails while some cannot be.
    fn complete_markers(&mut self, transactional_id: &str) -> Result<()> {
        self.write_pending_markers(transactional_id);
        match self.txn(transactional_id) {
            Some(txn) if !txn.pending_markers.is_empty() => {
                Err(BrokerError::ConcurrentTransactions {
                    transactional_id: transactional_id.to_owned(),
                    pending: txn.pending_markers.len(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Starts the transaction if it is not open yet.
    fn ensure_ongoing(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
    ) -> Result<()> {
        self.complete_markers(transactional_id)?;
        let now = self.now_ms;
        let txn = self.checked_txn(transactional_id, producer_id, epoch)?;
        if txn.state != TransactionState::Ongoing {
            txn.state = TransactionState::Ongoing;
            txn.partitions.clear();
            txn.pending_offsets.clear();
            txn.txn_start_ms = now;
        }
        Ok(())
    }

    /// `AddPartitionsToTxn`: `tp` is part of the transaction (which opens
    /// with its first partition).
    ///
    /// # Errors
    /// [`BrokerError::ProducerFenced`], [`BrokerError::UnknownTopic`] or
    /// [`BrokerError::UnknownPartition`], [`BrokerError::ConcurrentTransactions`].
    pub(crate) fn add_partition_to_txn(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        tp: &TopicPartition,
    ) -> Result<()> {
        self.partition(tp)?;
        self.ensure_ongoing(transactional_id, producer_id, epoch)?;
        let txn = self.checked_txn(transactional_id, producer_id, epoch)?;
        txn.partitions.insert(tp.clone());
        Ok(())
    }

    /// `AddOffsetsToTxn` and `TxnOffsetCommit`: the offsets wait in the
    /// transaction for its commit. A member id or a generation (not -1) is
    /// checked against the group as Kafka does.
    ///
    /// # Errors
    /// [`BrokerError::ProducerFenced`], [`BrokerError::UnknownMemberId`],
    /// [`BrokerError::IllegalGeneration`], [`BrokerError::ConcurrentTransactions`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_offsets_to_txn(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        group_id: &str,
        generation_id: i32,
        member_id: &str,
        offsets: BTreeMap<TopicPartition, i64>,
    ) -> Result<()> {
        self.checked_txn(transactional_id, producer_id, epoch)?;
        if !member_id.is_empty() || generation_id >= 0 {
            // The group coordinator's OffsetCommit checks, nothing stored.
            let member = (!member_id.is_empty()).then_some(member_id);
            self.commit_group_offsets(group_id, member, generation_id, std::iter::empty())?;
        }
        self.ensure_ongoing(transactional_id, producer_id, epoch)?;
        let txn = self.checked_txn(transactional_id, producer_id, epoch)?;
        txn.pending_offsets
            .entry(group_id.to_owned())
            .or_default()
            .extend(offsets);
        Ok(())
    }

    /// `EndTxn`: commits or aborts the open transaction and writes its
    /// markers, bumping the epoch as Transactions V2 does (the markers
    /// carry the new epoch, which the producer goes on with: the answer).
    /// The answer comes once the decision is taken, as Kafka's does: a marker whose partition has no reachable leader stays
    /// pending (PrepareCommit/PrepareAbort) and is retried by the
    /// coordinator's periodic task and by the id's next request, which
    /// gets [`BrokerError::ConcurrentTransactions`] until every marker is
    /// written. A retried end of a transaction that already ended the same
    /// way succeeds.
    ///
    /// # Errors
    /// [`BrokerError::ProducerFenced`], [`BrokerError::ConcurrentTransactions`]
    /// for a retry while markers are still pending,
    /// [`BrokerError::InvalidTxnTransition`] for a commit of a transaction
    /// the coordinator aborted on its timeout.
    pub(crate) fn end_txn(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        epoch: i16,
        commit: bool,
    ) -> Result<(i64, i16)> {
        let Some(txn) = self.txn(transactional_id) else {
            return Err(BrokerError::ProducerFenced {
                transactional_id: transactional_id.to_owned(),
                producer_id,
                epoch,
                current_epoch: -1,
            });
        };
        let (state, current) = (txn.state, txn.producer_epoch);
        // Transactions V2 (KIP-890, Kafka 4's default): every end bumps the
        // epoch, so a request of the epoch just before the current one is a
        // retry of the end that bumped it (Kafka's endTxnEpochBumped).
        let bumped_from = current.checked_sub(1) == Some(epoch) && txn.producer_id == producer_id;
        if state == TransactionState::Ongoing {
            self.checked_txn(transactional_id, producer_id, epoch)?;
            // Decided: Kafka answers once PrepareCommit/PrepareAbort is
            // logged; markers that cannot be written yet are retried.
            self.bump_epoch(transactional_id);
            self.end_with_markers(transactional_id, commit);
            return self
                .txn(transactional_id)
                .map(|t| (t.producer_id, t.producer_epoch))
                .ok_or(BrokerError::TransactionalIdRequired {
                    operation: "end_transaction",
                });
        }
        if state == TransactionState::Empty && epoch == current {
            // Nothing was added (the client does not send EndTxn then).
            return Ok((producer_id, epoch));
        }
        if !bumped_from {
            let txn = self.checked_txn(transactional_id, producer_id, epoch)?;
            return Err(fenced(txn, producer_id, epoch));
        }
        match (state, commit) {
            (TransactionState::CompleteCommit, true) | (TransactionState::CompleteAbort, false) => {
                Ok((producer_id, current))
            }
            (TransactionState::PrepareCommit, true) | (TransactionState::PrepareAbort, false) => {
                self.complete_markers(transactional_id)?;
                Ok((producer_id, current))
            }
            // The other outcome: the coordinator aborted it on its timeout
            // (Kafka's INVALID_TXN_STATE).
            _ => Err(BrokerError::InvalidTxnTransition {
                transactional_id: transactional_id.to_owned(),
                state: state.to_string(),
                operation: if commit { "commit" } else { "abort" },
            }),
        }
    }

    /// PrepareCommit or PrepareAbort, then the markers to every partition
    /// of the transaction; the group offsets become committed with the
    /// commit (they are discarded on abort).
    fn end_with_markers(&mut self, transactional_id: &str, commit: bool) {
        let Some(txn) = self.transactions.transactions.get_mut(transactional_id) else {
            return;
        };
        txn.state = if commit {
            TransactionState::PrepareCommit
        } else {
            TransactionState::PrepareAbort
        };
        txn.pending_markers = txn.partitions.clone();
        let offsets = std::mem::take(&mut txn.pending_offsets);
        if commit {
            for (group, offsets) in offsets {
                self.groups
                    .entry(group)
                    .or_default()
                    .offsets
                    .extend(offsets);
            }
        }
        self.write_pending_markers(transactional_id);
    }

    /// Writes the markers still pending; completes the transaction when
    /// none is left.
    fn write_pending_markers(&mut self, transactional_id: &str) {
        let Some(txn) = self.txn(transactional_id) else {
            return;
        };
        let kind = match txn.state {
            TransactionState::PrepareCommit => ControlRecordType::Commit,
            TransactionState::PrepareAbort => ControlRecordType::Abort,
            _ => return,
        };
        let (producer_id, epoch) = (txn.producer_id, txn.producer_epoch);
        let pending: Vec<TopicPartition> = txn.pending_markers.iter().cloned().collect();
        let now = self.now_ms;
        let mut written = Vec::new();
        for tp in pending {
            let marker =
                end_transaction_marker(0, now, producer_id, epoch, -1, COORDINATOR_EPOCH, kind);
            if self.append(&tp, marker).is_ok() {
                written.push(tp);
            }
        }
        if let Some(txn) = self.transactions.transactions.get_mut(transactional_id) {
            for tp in &written {
                txn.pending_markers.remove(tp);
            }
            if txn.pending_markers.is_empty() {
                txn.state = match kind {
                    ControlRecordType::Commit => TransactionState::CompleteCommit,
                    ControlRecordType::Abort => TransactionState::CompleteAbort,
                };
                txn.txn_start_ms = -1;
            }
        }
    }

    /// The coordinator's periodic task: markers that could not be written
    /// are retried, and every Ongoing transaction older than its timeout is
    /// aborted with its epoch bumped (Kafka's `abortTimedOutTransactions`
    /// with `prepareFenceProducerEpoch`), so its producer is fenced.
    pub(crate) fn abort_timed_out_transactions(&mut self) {
        let now = self.now_ms;
        let ids: Vec<String> = self.transactions.transactions.keys().cloned().collect();
        for id in ids {
            self.write_pending_markers(&id);
            let timed_out = self.txn(&id).is_some_and(|t| {
                t.state == TransactionState::Ongoing
                    && t.txn_start_ms.saturating_add(t.timeout_ms) < now
            });
            if timed_out {
                self.bump_epoch(&id);
                self.end_with_markers(&id, false);
            }
        }
    }
}

impl Cluster {
    /// What the transaction coordinator holds for `transactional_id`
    /// (Kafka's `Admin.describeTransactions`), or `None` for an id no
    /// producer initialized.
    pub fn describe_transaction(&self, transactional_id: &str) -> Option<TransactionMetadata> {
        self.state().txn(transactional_id).cloned()
    }

    /// Runs the coordinator's look for timed-out transactions now (it also
    /// runs every `transaction.abort.timed.out.transaction.cleanup.interval.ms`
    /// as the clock moves).
    pub fn abort_timed_out_transactions(&self) {
        let mut state = self.state();
        state.abort_timed_out_transactions();
        state.after_change();
    }
}
