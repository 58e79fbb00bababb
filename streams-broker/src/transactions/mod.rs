//! The transaction coordinator (Kafka's `TransactionCoordinator` and
//! `TransactionStateManager`, KIP-98 and KIP-447): it gives each
//! `transactional.id` a producer id and an epoch, fences older producers of
//! the same id by bumping the epoch, records the partitions and consumer
//! groups a transaction writes to, and ends a transaction by writing a
//! COMMIT or ABORT marker (a control batch, which takes an offset) to each
//! of its partitions; the offsets a transaction sent become the group's
//! committed offsets only when it commits. An Ongoing transaction older
//! than its `transaction.timeout.ms` is aborted by the coordinator, on the
//! cluster's clock, every
//! `transaction.abort.timed.out.transaction.cleanup.interval.ms`, with its
//! epoch bumped: the late producer's commit is refused
//! (`INVALID_TXN_STATE`, fatal for the producer), as Kafka 4.4.0 answers.
//!
//! Epochs follow Transactions V2 (KIP-890, the default of Kafka 4): every
//! commit or abort bumps the producer's epoch, the markers carry the new
//! one, and the producer's next transaction starts its sequences at 0 in
//! it. `init_transactions` bumps it too; when it finds an older producer's
//! transaction open, it aborts it first with one more bump (its markers)
//! and the new producer gets the next: a producer at epoch 3 with an open
//! transaction, fenced, leaves an ABORT marker of epoch 4 and a successor
//! at epoch 5, as the real broker writes them.
//!
//! The client half is [`Producer`](crate::Producer)'s transactional API
//! (`init_transactions`, `begin_transaction`, `send_offsets_to_transaction`,
//! `commit_transaction`, `abort_transaction`); the log's half is
//! [`ProducerStateManager`](crate::log::ProducerStateManager) and the last
//! stable offset.
//!
//! Three transactions on one partition: 10 records committed, 5 aborted,
//! 1 committed. Each marker takes an offset: 10, 16 and 18, and the high
//! watermark is 19; a `read_committed` consumer gets the 11 committed
//! records.
//!
//! ```
//! use streams_broker::{AutoOffsetReset, Cluster, ConsumerConfig, IsolationLevel, NewTopic};
//! use streams_broker::{ProducerConfig, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("out", 1))?;
//! let producer = cluster.producer_with(ProducerConfig::new().transactional_id("app-0_0"));
//! producer.init_transactions()?;
//! for (count, commit) in [(10, true), (5, false), (1, true)] {
//!     producer.begin_transaction()?;
//!     for i in 0..count {
//!         producer.send(ProducerRecord::new("out", "k", format!("v{i}")))?;
//!     }
//!     if commit { producer.commit_transaction()? } else { producer.abort_transaction()? }
//! }
//! let tp = TopicPartition::new("out", 0);
//! let info = cluster.log_info(&tp)?;
//! assert_eq!((info.high_watermark, info.last_stable_offset), (19, 19));
//!
//! let mut consumer = cluster.consumer(
//!     ConsumerConfig::new()
//!         .auto_offset_reset(AutoOffsetReset::Earliest)
//!         .isolation_level(IsolationLevel::ReadCommitted),
//! );
//! consumer.assign([tp]);
//! let offsets: Vec<i64> = consumer.poll()?.iter().map(|r| r.offset).collect();
//! assert_eq!(offsets, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 17]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod coordinator;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::topic_partition::TopicPartition;

pub(crate) use coordinator::TransactionCoordinator;

/// The coordinator's broker settings, by Kafka's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionConfig {
    /// `transaction.max.timeout.ms` (default 900000): the largest
    /// `transaction.timeout.ms` a producer may ask for.
    pub transaction_max_timeout_ms: i64,
    /// `transaction.abort.timed.out.transaction.cleanup.interval.ms`
    /// (default 10000): how often the coordinator looks for transactions
    /// past their timeout.
    pub abort_timed_out_transaction_cleanup_interval_ms: i64,
}

impl Default for TransactionConfig {
    fn default() -> Self {
        Self {
            transaction_max_timeout_ms: 900_000,
            abort_timed_out_transaction_cleanup_interval_ms: 10_000,
        }
    }
}

/// A transaction's state on the coordinator (Kafka's `TransactionState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionState {
    /// No transaction yet (after `init_transactions`).
    Empty,
    /// Partitions or offsets were added: the transaction is open.
    Ongoing,
    /// Commit decided; markers being written.
    PrepareCommit,
    /// Abort decided; markers being written.
    PrepareAbort,
    /// Every COMMIT marker is written.
    CompleteCommit,
    /// Every ABORT marker is written.
    CompleteAbort,
}

impl fmt::Display for TransactionState {
    /// Kafka's names, as `kafka-transactions describe` prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransactionState::Empty => "Empty",
            TransactionState::Ongoing => "Ongoing",
            TransactionState::PrepareCommit => "PrepareCommit",
            TransactionState::PrepareAbort => "PrepareAbort",
            TransactionState::CompleteCommit => "CompleteCommit",
            TransactionState::CompleteAbort => "CompleteAbort",
        })
    }
}

/// What the coordinator holds for one `transactional.id` (Kafka's
/// `TransactionMetadata`, as `Admin.describeTransactions` shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMetadata {
    /// The `transactional.id`.
    pub transactional_id: String,
    /// The producer id.
    pub producer_id: i64,
    /// The current epoch: a producer with an older one is fenced.
    pub producer_epoch: i16,
    /// `transaction.timeout.ms`.
    pub timeout_ms: i64,
    /// The state.
    pub state: TransactionState,
    /// The partitions the open (or last) transaction wrote to.
    pub partitions: BTreeSet<TopicPartition>,
    /// When the open transaction started (its first partition or offsets),
    /// on the cluster's clock; -1 with none open.
    pub txn_start_ms: i64,
    /// Partitions whose marker is not written yet (a leader was away).
    pub pending_markers: BTreeSet<TopicPartition>,
    /// Offsets sent to the transaction, by group: committed with it.
    pub pending_offsets: BTreeMap<String, BTreeMap<TopicPartition, i64>>,
}
