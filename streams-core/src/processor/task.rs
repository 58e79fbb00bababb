//! The state of a running task that processors reach through their
//! context: the nodes and their stores, the clocks, the record being
//! processed, the record collector, the punctuation queue and the commit
//! hooks. The engine's `StreamTask` owns one and drives it; a
//! [`ProcessorContext`](super::ProcessorContext) is a node's view of it.

use std::any::Any;
use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;

use super::node::ErasedNode;
use super::punctuation_queue::PunctuationQueue;
use super::{Cancellable, Punctuation, PunctuationType};
use crate::config::StreamsConfig;
use crate::error::{Result, StreamsError};
use crate::record::collector::RecordCollector;
use crate::record::{RawRecord, Record, RecordMetadata};
use crate::state::StateStore;

/// Counters of what the engine did not process, so that nothing is lost
/// silently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskMetrics {
    /// Records processed by a source.
    pub processed_records: u64,
    /// Records dropped: undecodable under
    /// [`DeserializationHandling::Continue`](crate::DeserializationHandling),
    /// or tombstones reaching an operator that must change their key.
    pub dropped_records: u64,
}

/// A node's name and children, found without borrowing the node.
pub(crate) struct NodeMeta {
    pub(crate) name: String,
    pub(crate) children: Vec<usize>,
}

/// The shared state of a running task that processors reach through
/// their context.
pub(crate) struct TaskState {
    pub(crate) meta: Vec<NodeMeta>,
    /// Shared: a stream task's global stores are its instance's.
    pub(crate) stores: Vec<Rc<RefCell<Box<dyn StateStore>>>>,
    /// The stores' names, by index: found without borrowing the stores.
    pub(crate) store_names: Vec<Box<str>>,
    /// Store indexes each node is connected to.
    pub(crate) node_stores: Vec<Vec<usize>>,
    /// Stores from this index on are global: every node may read them.
    pub(crate) global_stores_from: usize,
    /// The timestamp of the record a node is processing (or of the
    /// punctuation running): what changelog records carry.
    pub(crate) record_timestamp: Rc<Cell<i64>>,
    pub(crate) nodes: Vec<RefCell<Box<dyn ErasedNode>>>,
    pub(crate) application_id: String,
    /// The sub-topology the task runs (its id's first part; 0 in the test
    /// driver's single task, which runs them all).
    pub(crate) subtopology: usize,
    /// The partition the task processes (its id's second part; 0 in the
    /// test driver's single task).
    pub(crate) partition: i32,
    /// Sink topics' partition counts, for stream partitioners.
    pub(crate) partition_counts: RefCell<super::partitioner::PartitionCounts>,
    pub(crate) stream_time: Cell<i64>,
    pub(crate) wall_clock: Cell<i64>,
    /// Where the record being processed came from, valid while
    /// `in_record` is set. Kept between records so that the next record
    /// of the same topic only changes the offset (no reference counting
    /// per record).
    pub(crate) current: RefCell<RecordMetadata>,
    pub(crate) in_record: Cell<bool>,
    /// Where sinks and changelogs put what they produce.
    pub(crate) collector: Rc<RefCell<RecordCollector>>,
    pub(crate) punctuations: PunctuationQueue,
    pub(crate) metrics: Cell<TaskMetrics>,
    pub(crate) config: StreamsConfig,
    /// What runs at each commit, in store order: the flushes of the DSL's
    /// record caches.
    pub(crate) commit_hooks: RefCell<Vec<CommitHook>>,
}

/// A flush run at commit: the store's index (which orders the flushes, as
/// Kafka flushes stores in the order they were registered), the node that
/// forwards what is flushed, and the flush.
pub(crate) struct CommitHook {
    store: usize,
    node: usize,
    run: Rc<dyn Fn(&TaskState, usize) -> Result<()>>,
}

impl TaskState {
    pub(crate) fn node_name(&self, node: usize) -> &str {
        &self.meta[node].name
    }

    pub(crate) fn children(&self, node: usize) -> &[usize] {
        &self.meta[node].children
    }

    pub(crate) fn application_id(&self) -> &str {
        &self.application_id
    }

    pub(crate) fn config(&self) -> &StreamsConfig {
        &self.config
    }

    pub(crate) fn current_metadata(&self) -> Option<RecordMetadata> {
        self.in_record.get().then(|| self.current.borrow().clone())
    }

    /// Makes `topic` at `offset` the current record's origin; `shared` is
    /// the topic's name as the task keeps it, if it does.
    pub(crate) fn enter_record(&self, shared: Option<&Arc<str>>, topic: &str, offset: i64) {
        let mut current = self.current.borrow_mut();
        match shared {
            Some(t) if Arc::ptr_eq(t, &current.topic) => {}
            Some(t) => current.topic = t.clone(),
            None if &*current.topic == topic => {}
            None => current.topic = Arc::from(topic),
        }
        current.partition = self.partition;
        current.offset = offset;
        self.in_record.set(true);
    }

    /// Runs the source `node` on a serialized record, as the current record.
    pub(crate) fn process_source(&self, node: usize, record: RawRecord) -> Result<()> {
        let result = match self.nodes[node].try_borrow_mut() {
            Ok(mut guard) => {
                let metadata = self.current.borrow();
                guard.process_raw(self, node, &metadata, record)
            }
            Err(_) => Err(StreamsError::Reentrant {
                node: self.meta[node].name.clone(),
            }),
        };
        self.in_record.set(false);
        result
    }

    pub(crate) fn stream_time(&self) -> i64 {
        self.stream_time.get()
    }

    pub(crate) fn advance_stream_time(&self, timestamp: i64) {
        if timestamp > self.stream_time.get() {
            self.stream_time.set(timestamp);
        }
    }

    pub(crate) fn wall_clock_time(&self) -> i64 {
        self.wall_clock.get()
    }

    /// A sink's record for `topic`.
    pub(crate) fn produce(&self, topic: &Arc<str>, record: RawRecord) {
        self.collector.borrow_mut().push(topic, record);
    }

    /// A sink's record for the topic named `topic` (computed per record).
    pub(crate) fn produce_named(&self, topic: &str, record: RawRecord) {
        self.collector.borrow_mut().push_named(topic, record);
    }

    /// A sink's record for partition `partition` of `topic`, as its
    /// stream partitioner chose it.
    pub(crate) fn produce_to_partition(&self, topic: &str, partition: i32, record: RawRecord) {
        self.collector
            .borrow_mut()
            .push_to_partition(topic, partition, record);
    }

    /// The partition count of `topic` for a sink's stream partitioner.
    ///
    /// # Errors
    /// [`StreamsError::PartitionInfo`] when the topic does not exist or
    /// its count cannot be found out.
    pub(crate) fn partition_count(&self, topic: &str) -> Result<i32> {
        self.partition_counts
            .borrow_mut()
            .count(topic)
            .map_err(|reason| StreamsError::PartitionInfo {
                topic: topic.to_owned(),
                task: format!("{}_{}", self.subtopology, self.partition),
                reason,
            })
    }

    pub(crate) fn count(&self, f: impl FnOnce(&mut TaskMetrics)) {
        let mut m = self.metrics.get();
        f(&mut m);
        self.metrics.set(m);
    }

    pub(crate) fn schedule(
        &self,
        node: usize,
        interval: i64,
        kind: PunctuationType,
    ) -> Cancellable {
        self.punctuations
            .schedule(node, interval, kind, self.wall_clock.get())
    }

    pub(crate) fn store_index(&self, name: &str) -> Result<usize> {
        self.store_names
            .iter()
            .position(|s| &**s == name)
            .ok_or_else(|| StreamsError::UnknownStore {
                store: name.to_owned(),
                existing: self.store_names(),
            })
    }

    pub(crate) fn store_names(&self) -> Vec<String> {
        self.store_names.iter().map(|s| s.to_string()).collect()
    }

    /// The store `name` as type `S`, for processor `node` (which must be
    /// connected to it) or for the driver (`node` = `None`).
    pub(crate) fn store<S: StateStore>(
        &self,
        node: Option<usize>,
        name: &str,
        expected: impl FnOnce() -> String,
    ) -> Result<RefMut<'_, S>> {
        let index = self.store_index(name)?;
        if let Some(node) = node
            && index < self.global_stores_from
            && !self.node_stores[node].contains(&index)
        {
            return Err(StreamsError::StoreNotConnected {
                node: self.meta[node].name.clone(),
                store: name.to_owned(),
            });
        }
        let guard = self.stores[index].try_borrow_mut().map_err(|_| {
            StreamsError::StoreAlreadyBorrowed {
                store: name.to_owned(),
            }
        })?;
        RefMut::filter_map(guard, |s| s.as_any_mut().downcast_mut::<S>()).map_err(|guard| {
            StreamsError::WrongStoreType {
                store: name.to_owned(),
                expected: expected(),
                actual: guard.kind(),
            }
        })
    }

    /// Registers `run` to be called at each commit for `node`, ordered
    /// by the index of `store`.
    pub(crate) fn add_commit_hook(
        &self,
        store: &str,
        node: usize,
        run: Rc<dyn Fn(&TaskState, usize) -> Result<()>>,
    ) -> Result<()> {
        let store = self.store_index(store)?;
        let mut hooks = self.commit_hooks.borrow_mut();
        let at = hooks.partition_point(|h| h.store <= store);
        hooks.insert(at, CommitHook { store, node, run });
        Ok(())
    }

    /// Runs `f` with `metadata` and `timestamp` as the current record's
    /// (what `record_metadata` tells and changelog records carry), then
    /// restores them: Kafka's `setRecordContext` around a cache flush.
    pub(crate) fn with_record_context<R>(
        &self,
        metadata: Option<&RecordMetadata>,
        timestamp: i64,
        f: impl FnOnce() -> R,
    ) -> R {
        let previous_timestamp = self.record_timestamp.replace(timestamp);
        let previous_in_record = self.in_record.get();
        // The origin's topic is usually the current one: then only the
        // partition and offset change (no reference counting).
        let swap = |current: &mut RecordMetadata, m: &RecordMetadata| {
            if Arc::ptr_eq(&current.topic, &m.topic) {
                let previous = (current.partition, current.offset);
                current.partition = m.partition;
                current.offset = m.offset;
                Err(previous)
            } else {
                Ok(std::mem::replace(current, m.clone()))
            }
        };
        let previous = metadata.map(|m| swap(&mut self.current.borrow_mut(), m));
        self.in_record.set(metadata.is_some());
        let result = f();
        match previous {
            Some(Ok(previous)) => *self.current.borrow_mut() = previous,
            Some(Err((partition, offset))) => {
                let mut current = self.current.borrow_mut();
                current.partition = partition;
                current.offset = offset;
            }
            None => {}
        }
        self.in_record.set(previous_in_record);
        self.record_timestamp.set(previous_timestamp);
        result
    }

    /// Kafka's commit: flushes the record caches, store by store.
    pub(crate) fn commit(&self) -> Result<()> {
        // By index, each hook taken out of the borrow before it runs: a
        // hook may reach the task again (nothing is collected per commit).
        let mut i = 0;
        loop {
            let (node, run) = match self.commit_hooks.borrow().get(i) {
                Some(h) => (h.node, h.run.clone()),
                None => return Ok(()),
            };
            run(self, node)?;
            i += 1;
        }
    }

    /// Runs one typed record through a node.
    pub(crate) fn dispatch<K: 'static, V: 'static>(
        &self,
        node: usize,
        record: Record<K, V>,
    ) -> Result<()> {
        // As Kafka's record context: the child sees the forwarded record's
        // timestamp, and the parent gets its own back afterwards.
        let previous = self.record_timestamp.replace(record.timestamp);
        let mut slot = Some(record);
        let result = match self.nodes[node].try_borrow_mut() {
            Ok(mut guard) => guard.process(self, node, &mut slot as &mut dyn Any),
            Err(_) => Err(StreamsError::Reentrant {
                node: self.meta[node].name.clone(),
            }),
        };
        self.record_timestamp.set(previous);
        result
    }

    /// Fires the punctuations of `kind` due at `now`, earliest first;
    /// returns whether any fired.
    pub(crate) fn punctuate(&self, kind: PunctuationType, now: i64) -> Result<bool> {
        let mut fired = false;
        while let Some(due) = self.punctuations.pop_due(kind, now) {
            fired = true;
            self.record_timestamp.set(now);
            let punctuation = Punctuation {
                id: due.id,
                kind,
                interval: std::time::Duration::from_millis(due.interval.unsigned_abs()),
            };
            {
                let mut node =
                    self.nodes[due.node]
                        .try_borrow_mut()
                        .map_err(|_| StreamsError::Reentrant {
                            node: self.meta[due.node].name.clone(),
                        })?;
                node.punctuate(self, due.node, now, &punctuation)?;
            }
            self.punctuations.reschedule(due, now);
        }
        Ok(fired)
    }
}
