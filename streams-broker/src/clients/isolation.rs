//! `isolation.level`: what a consumer reads of transactional data. Under
//! `read_uncommitted` (Kafka's default) every data record below the high
//! watermark; under `read_committed` only below the last stable offset,
//! and never the records of aborted transactions, which the fetch skips
//! with the partition's aborted-transactions index as Kafka's
//! `CompletedFetch` does. Control batches (markers) are never returned.
//!
//! ```
//! use streams_broker::{AutoOffsetReset, Cluster, ConsumerConfig, IsolationLevel, NewTopic};
//! use streams_broker::{ProducerConfig, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("t", 1))?;
//! let producer = cluster.producer_with(ProducerConfig::new().transactional_id("tx"));
//! producer.init_transactions()?;
//! producer.begin_transaction()?;
//! producer.send(ProducerRecord::new("t", "k", "open"))?;
//! let read = |level| -> Result<usize, streams_broker::BrokerError> {
//!     let mut consumer = cluster.consumer(
//!         ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest).isolation_level(level),
//!     );
//!     consumer.assign([TopicPartition::new("t", 0)]);
//!     Ok(consumer.poll()?.len())
//! };
//! assert_eq!(read(IsolationLevel::ReadUncommitted)?, 1);
//! assert_eq!(read(IsolationLevel::ReadCommitted)?, 0); // the LSO is 0 while it is open
//! producer.abort_transaction()?;
//! assert_eq!(read(IsolationLevel::ReadCommitted)?, 0); // aborted: never seen
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use crate::log::{AbortedTxn, UnifiedLog};
use crate::record::RecordBatch;

/// `isolation.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// `read_uncommitted` (Kafka's default): every data record below the
    /// high watermark, those of open and aborted transactions too.
    #[default]
    ReadUncommitted,
    /// `read_committed`: below the last stable offset, without aborted data.
    ReadCommitted,
}

impl IsolationLevel {
    /// Where a fetch stops: the high watermark, or the last stable offset.
    pub fn fetch_upper_bound(self, log: &UnifiedLog) -> i64 {
        match self {
            IsolationLevel::ReadUncommitted => log.high_watermark(),
            IsolationLevel::ReadCommitted => log.last_stable_offset(),
        }
    }
}

/// A `read_committed` fetch's aborted transactions, consumed in offset
/// order as the batches go by (Kafka's `CompletedFetch`): a transactional
/// batch of a producer in an aborted transaction is skipped, up to that
/// transaction's abort marker.
#[derive(Debug, Default)]
pub(crate) struct AbortedBatches {
    /// Aborted transactions not reached yet, by first offset.
    pending: Vec<AbortedTxn>,
    next: usize,
    producers: BTreeSet<i64>,
    active: bool,
}

impl AbortedBatches {
    /// For a fetch of `[start, upper)` at `level`.
    pub(crate) fn new(level: IsolationLevel, log: &UnifiedLog, start: i64, upper: i64) -> Self {
        if level == IsolationLevel::ReadUncommitted {
            return Self::default();
        }
        let mut pending = log.collect_aborted_transactions(start, upper);
        pending.sort_by_key(|t| t.first_offset);
        Self {
            pending,
            next: 0,
            producers: BTreeSet::new(),
            active: true,
        }
    }

    /// Whether the consumer skips `batch`'s records (an abort marker ends
    /// its producer's aborted transaction and is itself skipped as every
    /// control batch is).
    pub(crate) fn skips(&mut self, batch: &RecordBatch) -> bool {
        if !self.active || batch.producer_id() < 0 {
            return false;
        }
        while let Some(txn) = self
            .pending
            .get(self.next)
            .filter(|t| t.first_offset <= batch.last_offset())
        {
            self.producers.insert(txn.producer_id);
            self.next += 1;
        }
        if batch.control_record_type() == Some(crate::record::ControlRecordType::Abort) {
            self.producers.remove(&batch.producer_id());
            return false;
        }
        batch.is_transactional() && self.producers.contains(&batch.producer_id())
    }
}
