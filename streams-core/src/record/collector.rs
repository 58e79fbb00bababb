//! The record collector, Kafka's `RecordCollector`: where sinks and
//! changelogging stores put the records they produce, for the engine's
//! caller to take.
//!
//! It sits with the records, below the stores and the engine, so that a
//! store can log its changes without knowing the engine that runs it.

use std::sync::Arc;

use super::RawRecord;

/// A record a sink produced, with the topic it went to.
#[derive(Debug, Clone, PartialEq)]
pub struct ProducedRecord {
    /// The topic written (internal topics with their full, prefixed name).
    pub topic: Arc<str>,
    /// The partition a sink's stream partitioner chose; `None` for the
    /// producer's default partitioner (and for changelog records, which
    /// go to the task's partition).
    pub partition: Option<i32>,
    /// The serialized record.
    pub record: RawRecord,
}

/// What sinks and changelogs produced and the caller has not taken yet:
/// each record with the number of its topic. Topics are numbered in the
/// order they are first written (a topic's number never changes), so that
/// a record carries no reference-counted name and its topic is found by
/// number.
#[derive(Debug, Default)]
pub(crate) struct RecordCollector {
    topics: Vec<Arc<str>>,
    /// The number of the topic written last: a sink writes one topic.
    last: usize,
    records: Vec<(usize, RawRecord)>,
    /// The partitions stream partitioners chose, by index into `records`
    /// (ascending): most records have none, so they carry none.
    partitions: Vec<(usize, i32)>,
}

impl RecordCollector {
    /// Adds a record written to `topic`.
    pub(crate) fn push(&mut self, topic: &Arc<str>, record: RawRecord) {
        let number = match self.topics.get(self.last) {
            Some(t) if Arc::ptr_eq(t, topic) => self.last,
            _ => self.number(topic, || topic.clone()),
        };
        self.records.push((number, record));
    }

    /// Adds a record written to the topic named `topic` (a name computed
    /// per record).
    pub(crate) fn push_named(&mut self, topic: &str, record: RawRecord) {
        let number = self.number(topic, || Arc::from(topic));
        self.records.push((number, record));
    }

    /// Adds a record written to partition `partition` of `topic`.
    pub(crate) fn push_to_partition(&mut self, topic: &str, partition: i32, record: RawRecord) {
        let number = match self.topics.get(self.last) {
            Some(t) if &**t == topic => self.last,
            _ => self.number(topic, || Arc::from(topic)),
        };
        self.partitions.push((self.records.len(), partition));
        self.records.push((number, record));
    }

    fn number(&mut self, topic: &str, shared: impl FnOnce() -> Arc<str>) -> usize {
        let number = match self.topics.iter().position(|t| &**t == topic) {
            Some(n) => n,
            None => {
                self.topics.push(shared());
                self.topics.len() - 1
            }
        };
        self.last = number;
        number
    }

    /// How many records wait to be taken.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Drops the records after the first `len` (what a panic undoes).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.records.truncate(len);
        let kept = self.partitions.partition_point(|&(i, _)| i < len);
        self.partitions.truncate(kept);
    }

    /// Whether no record waits to be taken.
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The records, with their topics' names.
    pub(crate) fn take_records(&mut self) -> Vec<ProducedRecord> {
        let mut partitions = self.partitions.drain(..).peekable();
        self.records
            .drain(..)
            .enumerate()
            .map(|(i, (n, record))| ProducedRecord {
                topic: self.topics[n].clone(),
                partition: partitions.next_if(|(at, _)| *at == i).map(|(_, p)| p),
                record,
            })
            .collect()
    }

    /// Moves the records, each with its topic's number, to the end of
    /// `into`; when `into` is empty the two buffers trade places and
    /// nothing is copied. The partitions stream partitioners chose are
    /// dropped: the test driver's topics have one partition.
    pub(crate) fn take_numbered(&mut self, into: &mut Vec<(usize, RawRecord)>) {
        self.partitions.clear();
        if into.is_empty() {
            std::mem::swap(into, &mut self.records);
        } else {
            into.append(&mut self.records);
        }
    }

    /// The name of the topic numbered `number`.
    pub(crate) fn topic(&self, number: usize) -> Option<Arc<str>> {
        self.topics.get(number).cloned()
    }

    /// The records not taken yet, with their topics' names (copies).
    #[cfg(test)]
    pub(crate) fn records(&self) -> Vec<ProducedRecord> {
        self.records
            .iter()
            .enumerate()
            .map(|(i, (n, record))| ProducedRecord {
                topic: self.topics[*n].clone(),
                partition: self
                    .partitions
                    .iter()
                    .find(|(at, _)| *at == i)
                    .map(|(_, p)| *p),
                record: record.clone(),
            })
            .collect()
    }
}
