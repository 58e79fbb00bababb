//! The producer's transactional half (Kafka's `TransactionManager`, the
//! client side of KIP-98 and KIP-447): a producer with a `transactional.id`
//! calls [`Producer::init_transactions`] once (a producer id and a new
//! epoch, which fences every older producer of the same id and aborts its
//! open transaction), then for each transaction
//! [`begin_transaction`](Producer::begin_transaction), sends,
//! [`send_offsets_to_transaction`](Producer::send_offsets_to_transaction)
//! and [`commit_transaction`](Producer::commit_transaction) or
//! [`abort_transaction`](Producer::abort_transaction). Its batches carry
//! its producer id, epoch and base sequence and the transactional flag.
//!
//! The client's states and transitions are Kafka's (`UNINITIALIZED`,
//! `READY`, `IN_TRANSACTION`, `COMMITTING_TRANSACTION`,
//! `ABORTING_TRANSACTION`, `ABORTABLE_ERROR`, `FATAL_ERROR`); a call the
//! state does not allow is a [`BrokerError::InvalidTxnState`] that names
//! the state and says what to do, and a fenced producer gets
//! [`BrokerError::ProducerFenced`] from then on.
//!
//! ```
//! use streams_broker::{BrokerError, Cluster, NewTopic, ProducerConfig, ProducerRecord};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("out", 1))?;
//! let config = ProducerConfig::new().transactional_id("tx");
//! let zombie = cluster.producer_with(config.clone());
//! zombie.init_transactions()?;
//! zombie.begin_transaction()?;
//! zombie.send(ProducerRecord::new("out", "k", "v"))?;
//!
//! let successor = cluster.producer_with(config);
//! successor.init_transactions()?; // aborts the zombie's transaction
//! let err = zombie.commit_transaction().unwrap_err();
//! assert!(matches!(err, BrokerError::ProducerFenced { epoch: 0, current_epoch: 2, .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::MutexGuard;

use super::producer::Producer;
use crate::cluster::State;
use crate::error::{BrokerError, Result};
use crate::log::LogAppendInfo;
use crate::record::RecordBatchBuilder;
use crate::topic_partition::TopicPartition;
use streams_clients::GroupMetadata;

/// The transactional producer's state (Kafka's `TransactionManager.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionManagerState {
    /// Before `init_transactions`.
    Uninitialized,
    /// Initialized, no transaction open.
    Ready,
    /// Between `begin_transaction` and its end.
    InTransaction,
    /// A commit in progress.
    CommittingTransaction,
    /// An abort in progress.
    AbortingTransaction,
    /// A call failed in the transaction: only an abort is possible.
    AbortableError,
    /// Fenced or broken: the producer cannot be used any more.
    FatalError,
}

impl TransactionManagerState {
    /// Kafka's name (`READY`, `IN_TRANSACTION`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TransactionManagerState::Uninitialized => "UNINITIALIZED",
            TransactionManagerState::Ready => "READY",
            TransactionManagerState::InTransaction => "IN_TRANSACTION",
            TransactionManagerState::CommittingTransaction => "COMMITTING_TRANSACTION",
            TransactionManagerState::AbortingTransaction => "ABORTING_TRANSACTION",
            TransactionManagerState::AbortableError => "ABORTABLE_ERROR",
            TransactionManagerState::FatalError => "FATAL_ERROR",
        }
    }

    /// What to do in this state when a call is not allowed.
    fn hint(self) -> &'static str {
        match self {
            TransactionManagerState::Uninitialized => "call init_transactions first",
            TransactionManagerState::Ready => "call begin_transaction first",
            TransactionManagerState::InTransaction => {
                "commit_transaction or abort_transaction the open transaction first"
            }
            TransactionManagerState::CommittingTransaction
            | TransactionManagerState::AbortingTransaction => {
                "the transaction is ending; retry the same call"
            }
            TransactionManagerState::AbortableError => {
                "an earlier call of this transaction failed: call abort_transaction"
            }
            TransactionManagerState::FatalError => {
                "the producer was fenced or failed: close it and create a new one"
            }
        }
    }
}

impl fmt::Display for TransactionManagerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The client's transaction state machine and its producer id, epoch and
/// sequences.
#[derive(Debug)]
pub(crate) struct TransactionManager {
    transactional_id: String,
    state: TransactionManagerState,
    producer_id: i64,
    epoch: i16,
    /// The next sequence per partition, in this epoch.
    sequences: HashMap<TopicPartition, i32>,
    /// The partitions added to the open transaction.
    partitions: BTreeSet<TopicPartition>,
    /// Whether offsets were sent in the open transaction.
    offsets_sent: bool,
    /// The error that made the state fatal.
    fatal: Option<BrokerError>,
}

impl TransactionManager {
    pub(crate) fn new(transactional_id: String) -> Self {
        Self {
            transactional_id,
            state: TransactionManagerState::Uninitialized,
            producer_id: -1,
            epoch: -1,
            sequences: HashMap::new(),
            partitions: BTreeSet::new(),
            offsets_sent: false,
            fatal: None,
        }
    }

    fn refuse(&self, operation: &'static str) -> BrokerError {
        if let Some(err) = &self.fatal {
            return err.clone();
        }
        BrokerError::InvalidTxnState {
            transactional_id: self.transactional_id.clone(),
            operation,
            state: self.state.name(),
            hint: self.state.hint(),
        }
    }

    fn require(&self, operation: &'static str, allowed: &[TransactionManagerState]) -> Result<()> {
        if allowed.contains(&self.state) {
            Ok(())
        } else {
            Err(self.refuse(operation))
        }
    }

    /// A fenced producer is done; another failure inside a transaction
    /// leaves only an abort.
    fn on_error(&mut self, err: BrokerError) -> BrokerError {
        let err = match err {
            BrokerError::InvalidProducerEpoch { current_epoch, .. } => {
                BrokerError::ProducerFenced {
                    transactional_id: self.transactional_id.clone(),
                    producer_id: self.producer_id,
                    epoch: self.epoch,
                    current_epoch,
                }
            }
            other => other,
        };
        match &err {
            BrokerError::ProducerFenced { .. }
            | BrokerError::OutOfOrderSequence { .. }
            | BrokerError::InvalidTxnTransition { .. } => {
                self.state = TransactionManagerState::FatalError;
                self.fatal = Some(err.clone());
            }
            BrokerError::ConcurrentTransactions { .. } => {}
            _ if self.state == TransactionManagerState::InTransaction => {
                self.state = TransactionManagerState::AbortableError;
            }
            _ => {}
        }
        err
    }
}

/// The builder with the transaction's producer id, epoch and base
/// sequence, and the transactional flag; as it was without one.
pub(super) fn transactional_builder(
    builder: RecordBatchBuilder,
    txn: Option<(i64, i16, i32)>,
) -> RecordBatchBuilder {
    match txn {
        Some((producer_id, epoch, sequence)) => builder
            .producer(producer_id, epoch, sequence)
            .transactional(true),
        None => builder,
    }
}

impl Producer {
    fn manager(&self, operation: &'static str) -> Result<MutexGuard<'_, TransactionManager>> {
        let manager = self
            .transaction
            .as_ref()
            .ok_or(BrokerError::TransactionalIdRequired { operation })?;
        Ok(manager
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// The transactional state, or `None` for a producer without a
    /// `transactional.id`.
    pub fn transaction_state(&self) -> Option<TransactionManagerState> {
        self.manager("transaction_state").ok().map(|m| m.state)
    }

    /// The producer id and epoch the coordinator gave (-1, -1 before
    /// `init_transactions`), or `None` for a producer that is not
    /// transactional.
    pub fn producer_id_and_epoch(&self) -> Option<(i64, i16)> {
        self.manager("producer_id_and_epoch")
            .ok()
            .map(|m| (m.producer_id, m.epoch))
    }

    /// `initTransactions`: a producer id and a new epoch from the
    /// coordinator. Every older producer of the same `transactional.id` is
    /// fenced, and its open transaction aborted.
    ///
    /// # Errors
    /// [`BrokerError::TransactionalIdRequired`],
    /// [`BrokerError::InvalidTxnState`] when called twice,
    /// [`BrokerError::InvalidTransactionTimeout`],
    /// [`BrokerError::ConcurrentTransactions`] (retriable: the old
    /// transaction's markers cannot be written yet).
    pub fn init_transactions(&self) -> Result<()> {
        // The cluster's lock first, then the manager's, as a send takes them.
        let mut state = self.cluster.state();
        let mut manager = self.manager("init_transactions")?;
        manager.require(
            "init_transactions",
            &[TransactionManagerState::Uninitialized],
        )?;
        let (producer_id, epoch) = state.init_producer_id(
            &manager.transactional_id,
            self.config.transaction_timeout_ms,
        )?;
        state.after_change();
        manager.producer_id = producer_id;
        manager.epoch = epoch;
        manager.sequences.clear();
        manager.state = TransactionManagerState::Ready;
        Ok(())
    }

    /// `beginTransaction`: opens a transaction on the client (the
    /// coordinator learns of it with its first partition or offsets).
    ///
    /// # Errors
    /// [`BrokerError::TransactionalIdRequired`], or
    /// [`BrokerError::InvalidTxnState`] outside `READY` (before
    /// `init_transactions`, or with a transaction open).
    pub fn begin_transaction(&self) -> Result<()> {
        let mut manager = self.manager("begin_transaction")?;
        manager.require("begin_transaction", &[TransactionManagerState::Ready])?;
        manager.partitions.clear();
        manager.offsets_sent = false;
        manager.state = TransactionManagerState::InTransaction;
        Ok(())
    }

    /// `sendOffsetsToTransaction`: the consumer positions (the offset of the
    /// next record to read, per partition) become the group's committed
    /// offsets when the transaction commits, and are discarded when it
    /// aborts. The member and generation of `group_metadata` (a consumer's
    /// [`group_metadata`](crate::Consumer::group_metadata)) are checked
    /// against the group, unless the member id is empty and the generation
    /// -1 (offsets from outside the group's membership).
    ///
    /// # Errors
    /// [`BrokerError::InvalidTxnState`] outside a transaction,
    /// [`BrokerError::ProducerFenced`], and for a member the group no
    /// longer has or an old generation [`BrokerError::UnknownMemberId`] or
    /// [`BrokerError::IllegalGeneration`] (the transaction must then be
    /// aborted).
    pub fn send_offsets_to_transaction(
        &self,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
        group_metadata: &GroupMetadata,
    ) -> Result<()> {
        let offsets: BTreeMap<TopicPartition, i64> = offsets.into_iter().collect();
        let mut state = self.cluster.state();
        let mut manager = self.manager("send_offsets_to_transaction")?;
        manager.require(
            "send_offsets_to_transaction",
            &[TransactionManagerState::InTransaction],
        )?;
        let result = state.add_offsets_to_txn(
            &manager.transactional_id,
            manager.producer_id,
            manager.epoch,
            &group_metadata.group_id,
            group_metadata.generation,
            &group_metadata.member_id,
            offsets,
        );
        drop(state);
        match result {
            Ok(()) => {
                manager.offsets_sent = true;
                Ok(())
            }
            Err(err) => Err(manager.on_error(err)),
        }
    }

    /// `commitTransaction`: the coordinator writes a COMMIT marker to every
    /// partition of the transaction, and the offsets sent to it become the
    /// group's. It returns once the coordinator has decided; a partition
    /// whose leader cannot be reached gets its marker later (its last
    /// stable offset waits), and this producer's next transaction gets
    /// [`BrokerError::ConcurrentTransactions`] until then.
    ///
    /// # Errors
    /// [`BrokerError::InvalidTxnState`] without an open transaction (or
    /// after a failed call: abort then), [`BrokerError::ProducerFenced`],
    /// [`BrokerError::InvalidTxnTransition`] when the coordinator aborted
    /// the transaction on its timeout (fatal: the producer is done).
    pub fn commit_transaction(&self) -> Result<()> {
        self.end_transaction(true)
    }

    /// `abortTransaction`: the coordinator writes an ABORT marker to every
    /// partition of the transaction; its records stay in the log, invisible
    /// to `read_committed` consumers, and its offsets are discarded.
    ///
    /// # Errors
    /// [`BrokerError::InvalidTxnState`] without an open transaction,
    /// [`BrokerError::ProducerFenced`], [`BrokerError::ConcurrentTransactions`]
    /// (retriable).
    pub fn abort_transaction(&self) -> Result<()> {
        self.end_transaction(false)
    }

    fn end_transaction(&self, commit: bool) -> Result<()> {
        let (operation, allowed, during): (_, &[_], _) = if commit {
            (
                "commit_transaction",
                &[
                    TransactionManagerState::InTransaction,
                    TransactionManagerState::CommittingTransaction,
                ],
                TransactionManagerState::CommittingTransaction,
            )
        } else {
            (
                "abort_transaction",
                &[
                    TransactionManagerState::InTransaction,
                    TransactionManagerState::AbortingTransaction,
                    TransactionManagerState::AbortableError,
                ],
                TransactionManagerState::AbortingTransaction,
            )
        };
        let mut state = self.cluster.state();
        let mut manager = self.manager(operation)?;
        manager.require(operation, allowed)?;
        manager.state = during;
        if manager.partitions.is_empty() && !manager.offsets_sent {
            // Nothing reached the coordinator: nothing to end there.
            manager.state = TransactionManagerState::Ready;
            return Ok(());
        }
        let result = state.end_txn(
            &manager.transactional_id,
            manager.producer_id,
            manager.epoch,
            commit,
        );
        state.after_change();
        drop(state);
        match result {
            Ok((producer_id, epoch)) => {
                // Transactions V2: the next transaction is in the bumped
                // epoch, its sequences from 0.
                if (producer_id, epoch) != (manager.producer_id, manager.epoch) {
                    manager.producer_id = producer_id;
                    manager.epoch = epoch;
                    manager.sequences.clear();
                }
                manager.state = TransactionManagerState::Ready;
                manager.partitions.clear();
                manager.offsets_sent = false;
                Ok(())
            }
            Err(err) => Err(manager.on_error(err)),
        }
    }

    /// Before a send: for a transactional producer, the partition joins
    /// the open transaction, and the batch gets the producer id, epoch and
    /// next sequence; `None` for a producer that is not transactional.
    pub(super) fn before_send(
        &self,
        state: &mut State,
        tp: &TopicPartition,
    ) -> Result<Option<(i64, i16, i32)>> {
        if self.transaction.is_none() {
            return Ok(None);
        }
        let mut manager = self.manager("send")?;
        manager.require("send", &[TransactionManagerState::InTransaction])?;
        if !manager.partitions.contains(tp) {
            let added = state.add_partition_to_txn(
                &manager.transactional_id,
                manager.producer_id,
                manager.epoch,
                tp,
            );
            if let Err(err) = added {
                return Err(manager.on_error(err));
            }
            manager.partitions.insert(tp.clone());
        }
        let sequence = manager.sequences.get(tp).copied().unwrap_or(0);
        Ok(Some((manager.producer_id, manager.epoch, sequence)))
    }

    /// After the append of a transactional batch: the sequence moves on,
    /// or the error is the client's (a fenced epoch is `ProducerFenced`).
    pub(super) fn after_send(
        &self,
        tp: &TopicPartition,
        txn: Option<(i64, i16, i32)>,
        result: Result<LogAppendInfo>,
    ) -> Result<LogAppendInfo> {
        let Some((_, _, sequence)) = txn else {
            return result;
        };
        let mut manager = self.manager("send")?;
        match result {
            Ok(info) => {
                manager
                    .sequences
                    .insert(tp.clone(), sequence.wrapping_add(info.record_count));
                Ok(info)
            }
            Err(err) => Err(manager.on_error(err)),
        }
    }
}
