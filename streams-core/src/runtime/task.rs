//! A running task: a [`StreamTask`] for one sub-topology and partition,
//! the records fetched for its partitions and not processed yet (Kafka's
//! `PartitionGroup`), the offsets it has processed, and what it produced
//! for the stream thread to send.
//!
//! The next record is the head with the lowest timestamp among the
//! partitions' queues (ties to the partition listed first), as Kafka's
//! `PartitionGroup.nextRecord` picks it. While a partition's queue is
//! empty the task waits, as Kafka's `readyToProcess` does since KIP-695:
//! for as long as the partition has records on the broker that are not
//! fetched yet, and, once it is caught up, for `max.task.idle.ms` more
//! (0, Kafka's default: not at all); `-1` never waits.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

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
    /// Each input partition's fetched records, in the partitions' order
    /// (a vector: a task reads a few partitions, and the per-record path
    /// finds its queue by index, not by name).
    queues: Vec<(TopicPartition, VecDeque<ConsumerRecord>)>,
    /// The next offset to commit per input partition, at the index of its
    /// queue; `None` until the partition's first record is processed.
    consumed: Vec<Option<i64>>,
    /// Whether each topic the engine produced to (by the `Arc` the engine
    /// names it with) is a changelog: found once per topic, not per
    /// record.
    changelog_topics: Vec<(Arc<str>, bool)>,
    /// Whether it processed records since its last commit.
    pub(crate) dirty: bool,
    /// Per empty, caught-up partition: until when the task waits for it
    /// (`max.task.idle.ms` after it first found it empty).
    idle_deadlines: BTreeMap<TopicPartition, i64>,
    /// Changelog partition -> next offset, as far as the stores hold.
    pub(crate) changelog_offsets: BTreeMap<TopicPartition, i64>,
}

impl Task {
    pub(crate) fn new(engine: StreamTask, meta: TaskMetadata) -> Self {
        let mut partitions = meta.partitions.clone();
        partitions.sort();
        partitions.dedup();
        let consumed = vec![None; partitions.len()];
        let queues = partitions
            .into_iter()
            .map(|tp| (tp, VecDeque::new()))
            .collect();
        Task {
            id: meta.id,
            engine,
            meta,
            queues,
            consumed,
            changelog_topics: Vec::new(),
            dirty: false,
            idle_deadlines: BTreeMap::new(),
            changelog_offsets: BTreeMap::new(),
        }
    }

    /// The changelog partitions of its stores, each with whether it is a
    /// source topic (restored up to the committed offset only).
    pub(crate) fn changelog_partitions(&self) -> Vec<(String, TopicPartition, bool)> {
        let own = changelog_partitions(&self.meta)
            .into_iter()
            .map(|(s, tp)| (s, tp, false));
        let source = source_changelog_partitions(&self.meta)
            .into_iter()
            .map(|(s, tp)| (s, tp, true));
        own.chain(source).collect()
    }

    pub(crate) fn add(&mut self, record: ConsumerRecord) {
        if let Some((_, q)) = self
            .queues
            .iter_mut()
            .find(|(tp, _)| tp.partition == record.partition && *tp.topic == *record.topic)
        {
            q.push_back(record);
        }
    }

    /// The next offset to commit per input partition processed since the
    /// task started or last resumed.
    pub(crate) fn consumed(&self) -> BTreeMap<TopicPartition, i64> {
        self.queues
            .iter()
            .zip(&self.consumed)
            .filter_map(|((tp, _), o)| o.map(|o| (tp.clone(), o)))
            .collect()
    }

    /// Forgets what was processed (the task resumes from its committed
    /// offsets).
    pub(crate) fn clear_consumed(&mut self) {
        self.consumed.iter_mut().for_each(|o| *o = None);
    }

    /// The earliest instant at which a caught-up empty partition stops
    /// holding back buffered records (`max.task.idle.ms`), if the task
    /// waits for one.
    pub(crate) fn idle_deadline(&self) -> Option<i64> {
        if self.buffered() == 0 {
            return None;
        }
        self.idle_deadlines.values().min().copied()
    }

    /// Records buffered and not processed.
    pub(crate) fn buffered(&self) -> usize {
        self.queues.iter().map(|(_, q)| q.len()).sum()
    }

    /// Drops what is buffered (a task closed without commit).
    pub(crate) fn clear_buffers(&mut self) {
        self.queues.iter_mut().for_each(|(_, q)| q.clear());
    }

    /// Whether the task may process now, Kafka's
    /// `PartitionGroup.readyToProcess` (KIP-695): with `max_idle_ms = -1`
    /// always; else every empty partition must be known to have nothing
    /// more on the broker (`lag` 0; an unknown lag or one above 0 waits for
    /// the fetch, however long), and must have stayed empty
    /// `max_idle_ms` since the task first found it so (its deadline, kept
    /// per partition and dropped when records or lag show up). With the
    /// default 0 the deadline is now: only data on the broker is waited
    /// for.
    fn ready_to_process(
        &mut self,
        now: i64,
        max_idle_ms: i64,
        lag: &dyn Fn(&TopicPartition) -> Option<i64>,
    ) -> bool {
        if max_idle_ms < 0 {
            return true;
        }
        let mut ready = true;
        for (tp, q) in &self.queues {
            if !q.is_empty() {
                if !self.idle_deadlines.is_empty() {
                    self.idle_deadlines.remove(tp);
                }
                continue;
            }
            match lag(tp) {
                Some(0) => {
                    let deadline = *self
                        .idle_deadlines
                        .entry(tp.clone())
                        .or_insert_with(|| now.saturating_add(max_idle_ms));
                    if now < deadline {
                        ready = false;
                    }
                }
                _ => {
                    self.idle_deadlines.remove(tp);
                    return false;
                }
            }
        }
        ready
    }

    /// The partition whose head is processed next: the lowest head
    /// timestamp (ties to the partition listed first), as Kafka's
    /// `PartitionGroup.nextRecord` picks it, if the task is ready to
    /// process. `lag` says how many records of a partition are on the
    /// broker and not fetched yet, if known.
    fn next_partition(
        &mut self,
        now: i64,
        max_idle_ms: i64,
        lag: &dyn Fn(&TopicPartition) -> Option<i64>,
    ) -> Option<usize> {
        if !self.ready_to_process(now, max_idle_ms, lag) {
            return None;
        }
        let mut best: Option<(usize, i64)> = None;
        for (i, (_, q)) in self.queues.iter().enumerate() {
            if let Some(r) = q.front()
                && best.is_none_or(|(_, ts)| r.timestamp < ts)
            {
                best = Some((i, r.timestamp));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Processes up to `max` records; returns how many.
    pub(crate) fn process(
        &mut self,
        max: usize,
        now: i64,
        max_idle_ms: i64,
        lag: &dyn Fn(&TopicPartition) -> Option<i64>,
        producer: &mut dyn Producer,
    ) -> Result<usize> {
        let mut n = 0;
        while n < max {
            let Some(i) = self.next_partition(now, max_idle_ms, lag) else {
                break;
            };
            let (tp, queue) = &mut self.queues[i];
            let Some(record) = queue.pop_front() else {
                break;
            };
            let offset = record.offset;
            let raw = to_raw(record);
            self.engine
                .process(&tp.topic, offset, raw)
                .map_err(|source| RuntimeError::task(self.id, source))?;
            self.consumed[i] = Some(offset + 1);
            self.dirty = true;
            self.engine
                .maybe_punctuate_stream_time()
                .map_err(|source| RuntimeError::task(self.id, source))?;
            n += 1;
        }
        // What the records produced goes to the producer at once, so that
        // it batches each partition's records (nothing reads them before
        // this step ends: the thread polls at the start of a step).
        self.send_produced(producer)?;
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
            .map_err(|source| RuntimeError::task(self.id, source))?
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
        self.engine
            .commit()
            .map_err(|source| RuntimeError::task(self.id, source))?;
        self.send_produced(producer)?;
        Ok(self.consumed())
    }

    /// Sends what sinks and changelogs produced: a changelog record to the
    /// task's partition of its changelog, a sink record to the partition
    /// its stream partitioner chose, or else to the one the producer's
    /// default partitioner picks for its key.
    pub(crate) fn send_produced(&mut self, producer: &mut dyn Producer) -> Result<()> {
        if !self.engine.has_produced() {
            return Ok(());
        }
        let partition = i32::try_from(self.id.partition).unwrap_or(i32::MAX);
        let produced = self.engine.take_produced();
        let mut records = Vec::with_capacity(produced.len());
        let mut topics: Vec<Arc<str>> = Vec::new();
        for produced in produced {
            if topics
                .last()
                .is_none_or(|t| !Arc::ptr_eq(t, &produced.topic))
            {
                topics.push(produced.topic.clone());
            }
            let is_changelog = match self
                .changelog_topics
                .iter()
                .find(|(t, _)| Arc::ptr_eq(t, &produced.topic))
            {
                Some((_, known)) => *known,
                None => {
                    let is = self
                        .meta
                        .changelogs
                        .iter()
                        .any(|(_, t)| *t == *produced.topic);
                    self.changelog_topics.push((produced.topic.clone(), is));
                    is
                }
            };
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
            } else if let Some(chosen) = produced.partition {
                record = record.partition(chosen);
            }
            records.push(record);
        }
        // One call: the producer batches each partition's consecutive
        // records, as Kafka's does.
        producer.send_all(records).map_err(|e| {
            let mut names: Vec<&str> = topics.iter().map(|t| &**t).collect();
            names.sort_unstable();
            names.dedup();
            RuntimeError::client(
                format!("task {} sending to topics {}", self.id, names.join(", ")),
                e,
            )
        })?;
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

/// The source-topic partitions a task's source stores are restored from
/// (`reuse.ktable.source.topics`): the task's partition of each topic,
/// with the store's name.
pub(crate) fn source_changelog_partitions(meta: &TaskMetadata) -> Vec<(String, TopicPartition)> {
    let partition = i32::try_from(meta.id.partition).unwrap_or(i32::MAX);
    meta.source_changelogs
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
