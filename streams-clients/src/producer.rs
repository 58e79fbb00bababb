//! The producer, as Kafka's `Producer` interface: sends that complete when
//! the broker acknowledges them (`flush` waits for all), and transactions
//! (`init_transactions`, `begin_transaction`, `send_offsets_to_transaction`,
//! `commit_transaction`, `abort_transaction`) when the producer was made
//! with a `transactional.id`.
//!
//! Sends are asynchronous in Kafka; here a send hands the record over and
//! `flush` returns where every record sent since the last flush landed, in
//! the order sent, or the first error. The Streams runtime flushes before
//! it commits, as Kafka Streams' `RecordCollector` does.

use std::collections::BTreeMap;

use crate::consumer::GroupMetadata;
use crate::error::Result;
use crate::record::{ProducerRecord, RecordMetadata, TopicPartition};

/// A producer. See the [module docs](self).
pub trait Producer: Send + std::fmt::Debug {
    /// Hands `record` to the producer. An error here is one the producer
    /// knows at once (an unknown topic or partition, a fenced or
    /// misconfigured transactional producer); others surface at `flush`.
    ///
    /// # Errors
    /// As above.
    fn send(&mut self, record: ProducerRecord) -> Result<()>;

    /// Hands `records` to the producer, as `send` would one by one; a
    /// producer may put the records of one partition into one batch (as
    /// Kafka's producer batches what it gathers for a partition), keeping
    /// their order within the partition. The default sends each in
    /// order. On an error some of the records may be sent.
    ///
    /// # Errors
    /// As [`send`](Producer::send), for the first record that fails.
    fn send_all(&mut self, records: Vec<ProducerRecord>) -> Result<()> {
        for record in records {
            self.send(record)?;
        }
        Ok(())
    }

    /// Waits until every record sent since the last flush is acknowledged,
    /// and returns their metadata: in the order sent within each
    /// partition (a producer that batches gives them batch by batch).
    ///
    /// # Errors
    /// The first send that failed.
    fn flush(&mut self) -> Result<Vec<RecordMetadata>>;

    /// Registers the `transactional.id` with the coordinator: fences every
    /// older producer of the same id and aborts its open transaction.
    ///
    /// # Errors
    /// The producer has no `transactional.id`, or the coordinator refused.
    fn init_transactions(&mut self) -> Result<()>;

    /// Starts a transaction.
    ///
    /// # Errors
    /// Not initialized, a transaction already open, or fenced.
    fn begin_transaction(&mut self) -> Result<()>;

    /// Adds consumed offsets (the next offset to read, per partition) to the
    /// open transaction: they become `group`'s committed offsets when it
    /// commits, and vanish if it aborts.
    ///
    /// # Errors
    /// No open transaction, fenced, or the group generation is stale.
    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        group: &GroupMetadata,
    ) -> Result<()>;

    /// Flushes and commits the open transaction.
    ///
    /// # Errors
    /// No open transaction, or fenced (then nothing of it is visible to
    /// `read_committed` consumers).
    fn commit_transaction(&mut self) -> Result<()>;

    /// Aborts the open transaction: its records stay in the log, invisible
    /// to `read_committed` consumers, and its offsets are discarded.
    ///
    /// # Errors
    /// No open transaction, or fenced.
    fn abort_transaction(&mut self) -> Result<()>;
}
