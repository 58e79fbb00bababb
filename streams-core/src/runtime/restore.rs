//! Restoring a task's stores from their changelogs before it processes,
//! as Kafka Streams' `StoreChangelogReader` does, with Kafka's
//! `StateRestoreListener` callbacks.
//!
//! A task restores each store from its changelog partition (the task's
//! partition of `<application.id>-<store>-changelog`), from where its
//! stores already are (the beginning, or a standby's position) up to the
//! end offset it finds when the restore starts (the last stable offset
//! under exactly-once, so aborted writes are not restored).
//!
//! A source store (`reuse.ktable.source.topics`: a table's store whose
//! changelog is the topic the table reads) is restored from the task's
//! partition of that topic, up to the smaller of its end and the group's
//! committed offset there (Kafka's `changelogAsSource`): the task
//! processes the rest. Records without a key are skipped, as Kafka's
//! `StoreChangelogReader` skips them. While the committed offset is
//! pending in an open transaction (KIP-447), the restore reads to the end
//! of the topic instead: the task then applies the records after the
//! committed offset again, which leaves the same rows.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use streams_clients::{Consumer, TopicPartition};

use crate::record::RawRecord;
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::task::{Task, to_raw};

/// Kafka's `StateRestoreListener`: told when a store's restoration starts,
/// after each batch, and when it ends.
pub trait RestoreListener: Send + std::fmt::Debug {
    /// Restoration of `store` from `partition` starts at offset `start`
    /// and runs to `end` (exclusive).
    fn on_restore_start(&mut self, partition: &TopicPartition, store: &str, start: i64, end: i64);
    /// A batch of `records` was restored, up to `batch_end_offset`.
    fn on_batch_restored(
        &mut self,
        partition: &TopicPartition,
        store: &str,
        batch_end_offset: i64,
        records: usize,
    );
    /// Restoration of `store` ended after `total` records.
    fn on_restore_end(&mut self, partition: &TopicPartition, store: &str, total: usize);
}

/// One restoration, as a [`RestoreListener`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restoration {
    /// The changelog partition.
    pub partition: TopicPartition,
    /// The store.
    pub store: String,
    /// The first offset restored.
    pub start: i64,
    /// The end offset (exclusive).
    pub end: i64,
    /// The records restored.
    pub restored: usize,
}

/// A [`RestoreListener`] that keeps every restoration, for tests and
/// examples.
#[derive(Debug, Default, Clone)]
pub struct RecordingRestoreListener {
    /// The restorations, in the order they ended.
    pub restorations: Vec<Restoration>,
    current: BTreeMap<(TopicPartition, String), Restoration>,
}

impl RestoreListener for RecordingRestoreListener {
    fn on_restore_start(&mut self, partition: &TopicPartition, store: &str, start: i64, end: i64) {
        self.current.insert(
            (partition.clone(), store.to_owned()),
            Restoration {
                partition: partition.clone(),
                store: store.to_owned(),
                start,
                end,
                restored: 0,
            },
        );
    }

    fn on_batch_restored(
        &mut self,
        partition: &TopicPartition,
        store: &str,
        _end: i64,
        records: usize,
    ) {
        if let Some(r) = self.current.get_mut(&(partition.clone(), store.to_owned())) {
            r.restored += records;
        }
    }

    fn on_restore_end(&mut self, partition: &TopicPartition, store: &str, _total: usize) {
        if let Some(r) = self.current.remove(&(partition.clone(), store.to_owned())) {
            self.restorations.push(r);
        }
    }
}

/// A stream thread's restore consumer and the listener.
#[derive(Debug)]
pub(crate) struct Restorer {
    consumer: Box<dyn Consumer>,
    listener: Option<Arc<Mutex<dyn RestoreListener>>>,
}

impl Restorer {
    pub(crate) fn new(
        consumer: Box<dyn Consumer>,
        listener: Option<Arc<Mutex<dyn RestoreListener>>>,
    ) -> Self {
        Restorer { consumer, listener }
    }

    fn tell(&self, f: impl FnOnce(&mut dyn RestoreListener)) {
        if let Some(l) = &self.listener
            && let Ok(mut l) = l.lock()
        {
            f(&mut *l);
        }
    }

    /// Restores every store of `task` up to its changelog's current end
    /// (a source store up to the committed offset `group`, the thread's
    /// group consumer, gives).
    pub(crate) fn restore(&mut self, task: &mut Task, group: &dyn Consumer) -> Result<()> {
        for (store, tp, from_source) in task.changelog_partitions() {
            let context =
                |what: &str| format!("task {}: {what} changelog {tp} of store {store}", task.id);
            let mut end = self
                .consumer
                .end_offsets(std::slice::from_ref(&tp))
                .map_err(|e| RuntimeError::client(context("reading the end of"), e))?
                .get(&tp)
                .copied()
                .unwrap_or(0);
            if from_source {
                match group.committed(&tp) {
                    Ok(committed) => end = end.min(committed.unwrap_or(0)),
                    Err(streams_clients::ClientError::UnstableOffsetCommit { .. }) => {}
                    Err(e) => {
                        return Err(RuntimeError::client(
                            context("reading the committed offset of"),
                            e,
                        ));
                    }
                }
            }
            let start = task.changelog_offsets.get(&tp).copied().unwrap_or(0);
            self.consumer
                .assign(std::slice::from_ref(&tp))
                .map_err(|e| RuntimeError::client(context("assigning"), e))?;
            self.consumer
                .seek(&tp, start)
                .map_err(|e| RuntimeError::client(context("seeking"), e))?;
            self.tell(|l| l.on_restore_start(&tp, &store, start, end));
            let mut total = 0;
            let mut position = start;
            while position < end {
                let polled = self
                    .consumer
                    .poll()
                    .map_err(|e| RuntimeError::client(context("reading"), e))?;
                let before = position;
                let batch: Vec<RawRecord> = polled
                    .records
                    .into_iter()
                    .filter(|r| {
                        r.offset < end && *r.topic == *tp.topic && r.partition == tp.partition
                    })
                    .filter_map(|r| {
                        position = position.max(r.offset + 1);
                        // A source topic may hold records without a key.
                        (!from_source || r.key.is_some()).then(|| to_raw(r))
                    })
                    .collect();
                let moved = self
                    .consumer
                    .position(&tp)
                    .map_err(|e| RuntimeError::client(context("reading the position in"), e))?;
                if position == before && moved <= position {
                    // Nothing more to read below `end` (control records and
                    // aborted data take offsets but restore nothing).
                    break;
                }
                position = position.max(moved.min(end));
                if !batch.is_empty() {
                    task.engine
                        .restore_store(&store, &batch)
                        .map_err(|source| RuntimeError::task(task.id, source))?;
                    total += batch.len();
                    self.tell(|l| l.on_batch_restored(&tp, &store, position, batch.len()));
                }
            }
            task.changelog_offsets
                .insert(tp.clone(), position.max(start));
            self.tell(|l| l.on_restore_end(&tp, &store, total));
        }
        self.consumer.assign(&[]).map_err(|e| {
            RuntimeError::client(format!("task {}: releasing its changelogs", task.id), e)
        })?;
        Ok(())
    }
}
