//! A running task: a [`StreamTask`] for one sub-topology and partition,
//! the records fetched for its partitions and not processed yet (Kafka's
//! `PartitionGroup`), the offsets it has processed, and what it produced
//! for the stream thread to send.
//!
//! The next record is the head with the lowest timestamp among the
//! partitions' queues (ties to the partition listed first), as Kafka's
//! `PartitionGroup.nextRecord` picks it. While a partition's queue is
//! empty the task waits, unless the partition is caught up (nothing more
//! on the broker: `max.task.idle.ms=0`, Kafka's default), the wait has
//! lasted `max.task.idle.ms`, or the setting is `-1` (never wait).

use std::collections::{BTreeMap, VecDeque};

use streams_clients::{ConsumerRecord, Header, Producer, ProducerRecord, TopicPartition};

use crate::engine::StreamTask;
use crate::record::RawRecord;
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::metadata::TaskMetadata;
use crate::runtime::task_id::TaskId;

/// An active task. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Task {
    pub(crate) id: TaskId,
    pub(crate) engine: StreamTask,
    pub(crate) meta: TaskMetadata,
    queues: BTreeMap<TopicPartition, VecDeque<ConsumerRecord>>,
    /// The next offset to commit per input partition.
    pub(crate) consumed: BTreeMap<TopicPartition, i64>,
    /// Whether it processed records since its last commit.
    pub(crate) dirty: bool,
    /// Since when it has waited for an empty partition.
    idle_since: Option<i64>,
    /// Changelog partition -> next offset, as far as the stores hold.
    pub(crate) changelog_offsets: BTreeMap<TopicPartition, i64>,
}

impl Task {
    pub(crate) fn new(engine: StreamTask, meta: TaskMetadata) -> Self {
        let queues = meta
            .partitions
            .iter()
            .map(|tp| (tp.clone(), VecDeque::new()))
            .collect();
        Task {
            id: meta.id,
            engine,
            meta,
            queues,
            consumed: BTreeMap::new(),
            dirty: false,
            idle_since: None,
            changelog_offsets: BTreeMap::new(),
        }
    }

    /// The changelog partitions of its stores.
    pub(crate) fn changelog_partitions(&self) -> Vec<(String, TopicPartition)> {
        changelog_partitions(&self.meta)
    }

    pub(crate) fn add(&mut self, record: ConsumerRecord) {
        let tp = TopicPartition::new(&*record.topic, record.partition);
        if let Some(q) = self.queues.get_mut(&tp) {
            q.push_back(record);
        }
    }

    /// Records buffered and not processed.
    pub(crate) fn buffered(&self) -> usize {
        self.queues.values().map(VecDeque::len).sum()
    }

    /// Drops what is buffered (a task closed without commit).
    pub(crate) fn clear_buffers(&mut self) {
        self.queues.values_mut().for_each(VecDeque::clear);
    }

    /// The partition whose head is processed next, if the task may process
    /// now. `caught_up` says whether an empty partition has nothing more on
    /// the broker.
    fn next_partition(
        &mut self,
        now: i64,
        max_idle_ms: i64,
        caught_up: &dyn Fn(&TopicPartition) -> bool,
    ) -> Option<TopicPartition> {
        let mut best: Option<(&TopicPartition, i64)> = None;
        let mut waiting = false;
        for (tp, q) in &self.queues {
            match q.front() {
                Some(r) => {
                    if best.is_none_or(|(_, ts)| r.timestamp < ts) {
                        best = Some((tp, r.timestamp));
                    }
                }
                None => waiting |= !caught_up(tp),
            }
        }
        let best = best?.0.clone();
        if waiting && max_idle_ms >= 0 {
            let since = *self.idle_since.get_or_insert(now);
            if now - since < max_idle_ms || max_idle_ms == 0 {
                return None;
            }
        } else {
            self.idle_since = None;
        }
        Some(best)
    }

    /// Processes up to `max` records; returns how many.
    pub(crate) fn process(
        &mut self,
        max: usize,
        now: i64,
        max_idle_ms: i64,
        caught_up: &dyn Fn(&TopicPartition) -> bool,
        producer: &mut dyn Producer,
    ) -> Result<usize> {
        let mut n = 0;
        while n < max {
            let Some(tp) = self.next_partition(now, max_idle_ms, caught_up) else {
                break;
            };
            let Some(record) = self.queues.get_mut(&tp).and_then(VecDeque::pop_front) else {
                break;
            };
            let offset = record.offset;
            let raw = to_raw(record);
            self.engine
                .process(&tp.topic, offset, raw)
                .map_err(|source| RuntimeError::Task {
                    task: self.id,
                    source,
                })?;
            self.consumed.insert(tp, offset + 1);
            self.dirty = true;
            self.engine
                .maybe_punctuate_stream_time()
                .map_err(|source| RuntimeError::Task {
                    task: self.id,
                    source,
                })?;
            self.send_produced(producer)?;
            n += 1;
        }
        Ok(n)
    }

    /// Fires the wall-clock punctuations that are due and sends what they
    /// produced.
    pub(crate) fn punctuate_wall_clock(
        &mut self,
        now: i64,
        producer: &mut dyn Producer,
    ) -> Result<()> {
        if self
            .engine
            .maybe_punctuate_wall_clock(now)
            .map_err(|source| RuntimeError::Task {
                task: self.id,
                source,
            })?
        {
            self.dirty = true;
        }
        self.send_produced(producer)
    }

    /// Flushes the record caches (Kafka's commit of a task) and sends what
    /// they forwarded; returns the offsets to commit.
    pub(crate) fn prepare_commit(
        &mut self,
        producer: &mut dyn Producer,
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        self.engine.commit().map_err(|source| RuntimeError::Task {
            task: self.id,
            source,
        })?;
        self.send_produced(producer)?;
        Ok(self.consumed.clone())
    }

    /// Sends what sinks and changelogs produced: a changelog record to the
    /// task's partition of its changelog, a sink record to the partition
    /// the producer's default partitioner picks for its key.
    pub(crate) fn send_produced(&mut self, producer: &mut dyn Producer) -> Result<()> {
        if !self.engine.has_produced() {
            return Ok(());
        }
        let partition = i32::try_from(self.id.partition).unwrap_or(i32::MAX);
        for produced in self.engine.take_produced() {
            let is_changelog = self
                .meta
                .changelogs
                .iter()
                .any(|(_, t)| *t == *produced.topic);
            let r = produced.record;
            let mut record = ProducerRecord::from_parts(
                &*produced.topic,
                r.key.map(bytes::Bytes::from),
                r.value.map(bytes::Bytes::from),
            )
            .timestamp(r.timestamp);
            record.headers = r
                .headers
                .iter()
                .map(|h| Header {
                    key: h.key.clone(),
                    value: h.value.clone().map(bytes::Bytes::from),
                })
                .collect();
            if is_changelog {
                record = record.partition(partition);
            }
            producer.send(record).map_err(|e| {
                RuntimeError::client(
                    format!("task {} sending to topic {}", self.id, produced.topic),
                    e,
                )
            })?;
        }
        Ok(())
    }
}

/// The changelog partitions of a task's stores: the task's partition of
/// each changelog topic, with the store's name.
pub(crate) fn changelog_partitions(meta: &TaskMetadata) -> Vec<(String, TopicPartition)> {
    let partition = i32::try_from(meta.id.partition).unwrap_or(i32::MAX);
    meta.changelogs
        .iter()
        .map(|(store, topic)| (store.clone(), TopicPartition::new(topic, partition)))
        .collect()
}

/// A fetched record as the engine takes it.
pub(crate) fn to_raw(record: ConsumerRecord) -> RawRecord {
    let mut raw = RawRecord::new(
        record.key.map(|b| b.to_vec()),
        record.value.map(|b| b.to_vec()),
        record.timestamp,
    );
    for h in record.headers {
        match h.value {
            Some(v) => raw.headers.add(h.key, v.to_vec()),
            None => raw.headers.add_null(h.key),
        };
    }
    raw
}
