//! The state of a running task that processors reach through their
//! context: the nodes and their stores, the clocks, the record being
//! processed, the record collector, the punctuation queue and the commit
//! hooks. The engine's `StreamTask` owns one and drives it; a
//! [`ProcessorContext`](super::ProcessorContext) is a node's view of it.

use std::any::Any;
use std::cell::{Cell, Ref, RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;

use super::node::ErasedNode;
use super::punctuation_queue::PunctuationQueue;
use super::{Cancellable, Punctuation, PunctuationType};
use crate::config::{
    DeserializationExceptionHandler, ErrorHandlerContext, HandlerResult,
    ProcessingExceptionHandler, ProductionExceptionHandler, Response, StreamsConfig,
};
use crate::error::{RecordOrigin, RecordPart, Result, StreamsError};
use crate::record::Headers;
use crate::record::collector::RecordCollector;
use crate::record::{RawRecord, Record, RecordMetadata};
use crate::state::StateStore;

/// Counters of what the engine did not process, so that nothing is lost
/// silently: each record read is processed, skipped (`dropped_records`)
/// or fails the task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskMetrics {
    /// Records processed by a source (decoded and passed on).
    pub processed_records: u64,
    /// Records dropped, Kafka's task metric `dropped-records-total`: a
    /// record an exception handler answered with resume (undecodable,
    /// failed or panicked in user code, or unserializable at a sink), or a
    /// tombstone reaching an operator that must change its key.
    pub dropped_records: u64,
    /// Records produced to the dead letter queue by exception handlers.
    pub dead_letter_queue_records: u64,
}

impl TaskMetrics {
    /// Kafka's name of [`TaskMetrics::dropped_records`].
    pub const DROPPED_RECORDS_TOTAL: &'static str = "dropped-records-total";

    /// A metric by its Kafka name (`dropped-records-total`), or by this
    /// crate's name for those Kafka has none for
    /// (`processed-records-total`, `dead-letter-queue-records-total`).
    ///
    /// ```
    /// use streams_core::engine::TaskMetrics;
    /// assert_eq!(TaskMetrics::default().get("dropped-records-total"), Some(0));
    /// assert_eq!(TaskMetrics::default().get("nope"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<u64> {
        match name {
            Self::DROPPED_RECORDS_TOTAL => Some(self.dropped_records),
            "processed-records-total" => Some(self.processed_records),
            "dead-letter-queue-records-total" => Some(self.dead_letter_queue_records),
            _ => None,
        }
    }
}

/// The exception handlers a task runs with, resolved from its config.
pub(crate) struct Handlers {
    pub(crate) deserialization: Arc<dyn DeserializationExceptionHandler>,
    pub(crate) processing: Arc<dyn ProcessingExceptionHandler>,
    pub(crate) production: Arc<dyn ProductionExceptionHandler>,
    pub(crate) dead_letter_queue_topic: Option<String>,
    /// Whether sources keep the serialized record for the handlers: when
    /// a DLQ topic or a handler of the user's is configured.
    pub(crate) keep_source_raw: bool,
}

impl Handlers {
    pub(crate) fn from_config(config: &StreamsConfig) -> Result<Self> {
        Ok(Handlers {
            deserialization: config.deserialization_exception_handler()?,
            processing: config.processing_exception_handler()?,
            production: config.production_exception_handler()?,
            dead_letter_queue_topic: config.dead_letter_queue_topic().map(str::to_owned),
            keep_source_raw: config.dead_letter_queue_topic().is_some()
                || config.has_typed_exception_handler(),
        })
    }
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
    /// Records dropped per node (by node index): where the task's
    /// `dropped_records` came from.
    pub(crate) dropped_by_node: RefCell<Vec<u64>>,
    /// Records dropped by stores (a versioned store's expired puts), by
    /// store name: shared with the stores' `StoreContext`.
    pub(crate) dropped_by_store: Rc<RefCell<std::collections::BTreeMap<String, u64>>>,
    pub(crate) config: StreamsConfig,
    /// What runs at each commit, in store order: the flushes of the DSL's
    /// record caches.
    pub(crate) commit_hooks: RefCell<Vec<CommitHook>>,
    /// What the processors sharing a store share about it beyond the
    /// store, by store name and kind (a DSL record cache, the sessions
    /// a cache has seen): one per store, as Kafka has one cache per store
    /// whichever of its processors writes (a cogroup's aggregations).
    pub(crate) store_shared:
        RefCell<std::collections::HashMap<(String, &'static str), Rc<dyn Any>>>,
    /// The task's id, `<subtopology>_<partition>`.
    pub(crate) task_id: String,
    pub(crate) handlers: Handlers,
    /// The serialized record being processed, kept by its source when
    /// [`Handlers::keep_source_raw`].
    pub(crate) source_raw: RefCell<Option<RawRecord>>,
    /// How many records the collector held when the record (or
    /// punctuation, or commit) being processed began: what a panic undoes
    /// back to.
    pub(crate) unit_mark: Cell<usize>,
    /// Set when user code panicked on the record being processed: sinks
    /// then drop what the record still causes.
    pub(crate) poisoned: Cell<bool>,
}

/// Where a bad record came from, for a handler's context.
pub(crate) struct BadRecord<'a> {
    pub(crate) node: usize,
    pub(crate) timestamp: i64,
    pub(crate) headers: &'a Headers,
    pub(crate) key: Option<&'a [u8]>,
    pub(crate) value: Option<&'a [u8]>,
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

    /// Starts a unit of work (a record, a punctuation, a commit): what a
    /// panic in it undoes back to.
    pub(crate) fn begin_unit(&self) {
        self.unit_mark.set(self.collector.borrow().len());
        self.poisoned.set(false);
    }

    /// Whether user code panicked in the current unit of work: its
    /// further output is dropped.
    pub(crate) fn poisoned(&self) -> bool {
        self.poisoned.get()
    }

    /// A panic was caught: drops what the unit of work produced so far.
    pub(crate) fn undo_unit(&self) {
        self.collector.borrow_mut().truncate(self.unit_mark.get());
        self.poisoned.set(true);
    }

    /// Asks `ask` (one of the handlers) about `error` for the record
    /// `bad` describes; produces the DLQ records it answers with and
    /// returns what it decided.
    fn ask_handler(
        &self,
        bad: &BadRecord<'_>,
        error: &StreamsError,
        ask: impl FnOnce(&ErrorHandlerContext<'_>) -> Response,
    ) -> HandlerResult {
        let current = self.current.borrow();
        let (topic, partition, offset) = if self.in_record.get() {
            (&*current.topic, current.partition, current.offset)
        } else {
            ("", -1, -1)
        };
        let ctx = ErrorHandlerContext::new(
            topic,
            partition,
            offset,
            bad.timestamp,
            bad.headers,
            bad.key,
            bad.value,
            self.node_name(bad.node),
            &self.task_id,
            self.handlers.dead_letter_queue_topic.as_deref(),
        );
        let _ = error;
        let response = ask(&ctx);
        drop(current);
        let result = response.result();
        let records = response.into_dead_letter_queue_records();
        self.count(|m| m.dead_letter_queue_records += records.len() as u64);
        let mut collector = self.collector.borrow_mut();
        for r in records {
            match r.partition {
                Some(partition) => collector.push_to_partition(&r.topic, partition, r.record),
                None => collector.push(&r.topic, r.record),
            }
        }
        result
    }

    /// A record whose key or value cannot be deserialized: asks the
    /// deserialization handler; `Ok` when it resumed (the record is
    /// counted as dropped).
    pub(crate) fn deserialization_failed(
        &self,
        bad: &BadRecord<'_>,
        error: StreamsError,
    ) -> Result<()> {
        let handler = self.handlers.deserialization.clone();
        match self.ask_handler(bad, &error, |ctx| handler.handle_error(ctx, &error)) {
            HandlerResult::Resume => {
                self.count_dropped(bad.node);
                Ok(())
            }
            HandlerResult::Fail | HandlerResult::Retry => Err(error),
        }
    }

    /// The record being processed, as its source read it, for a handler:
    /// its key and value (when kept) and headers, with `timestamp` (the
    /// timestamp of the record at the failing node).
    fn with_source_record<R>(&self, node: usize, f: impl FnOnce(&BadRecord<'_>) -> R) -> R {
        let raw = self.source_raw.borrow();
        let empty = Headers::default();
        let bad = BadRecord {
            node,
            timestamp: self.record_timestamp.get(),
            headers: raw.as_ref().map_or(&empty, |r| &r.headers),
            key: raw.as_ref().and_then(|r| r.key.as_deref()),
            value: raw.as_ref().and_then(|r| r.value.as_deref()),
        };
        f(&bad)
    }

    /// User code in `node` failed with `error` (a `Processing` error
    /// naming the node): asks the processing handler; `Ok` when it resumed
    /// (the record is counted as dropped), else Kafka's failed-processing
    /// error naming the task, node, topic, partition and offset.
    pub(crate) fn processing_failed(&self, node: usize, error: StreamsError) -> Result<()> {
        let handler = self.handlers.processing.clone();
        let result = self.with_source_record(node, |bad| {
            self.ask_handler(bad, &error, |ctx| handler.handle_error(ctx, &error))
        });
        match result {
            HandlerResult::Resume => {
                self.count_dropped(node);
                Ok(())
            }
            HandlerResult::Fail | HandlerResult::Retry => Err(self.failed(node, error)),
        }
    }

    fn failed(&self, node: usize, error: StreamsError) -> StreamsError {
        StreamsError::ProcessingFailed {
            node: self.node_name(node).to_owned(),
            origin: Box::new(self.origin()),
            source: Box::new(error),
        }
    }

    /// The task and the record being processed, as errors name them.
    fn origin(&self) -> RecordOrigin {
        let metadata = self.current_metadata();
        RecordOrigin {
            task_id: self.task_id.clone(),
            topic: metadata
                .as_ref()
                .map_or_else(String::new, |m| m.topic.to_string()),
            partition: metadata.as_ref().map_or(-1, |m| m.partition),
            offset: metadata.as_ref().map_or(-1, |m| m.offset),
        }
    }

    /// The sink `node` could not serialize the `part` of a record for
    /// `topic`: asks the production handler; `Ok` when it resumed (the
    /// record is counted as dropped).
    pub(crate) fn production_failed(
        &self,
        node: usize,
        topic: &str,
        part: RecordPart,
        timestamp: i64,
        error: StreamsError,
    ) -> Result<()> {
        let handler = self.handlers.production.clone();
        let result = self.with_source_record(node, |bad| {
            self.ask_handler(bad, &error, |ctx| {
                handler.handle_serialization_error(ctx, topic, part, &error)
            })
        });
        match result {
            HandlerResult::Resume => {
                self.count_dropped(node);
                Ok(())
            }
            HandlerResult::Fail | HandlerResult::Retry => Err(StreamsError::ProductionFailed {
                topic: topic.to_owned(),
                timestamp,
                origin: Box::new(self.origin()),
                source: Box::new(error),
            }),
        }
    }

    /// Runs the source `node` on a serialized record, as the current record.
    pub(crate) fn process_source(&self, node: usize, record: RawRecord) -> Result<()> {
        self.begin_unit();
        let result = match self.nodes[node].try_borrow_mut() {
            // The source reads the record's origin (`source_position`) while it
            // decodes, not while it forwards: a processor may run code as
            // of another record (`with_record_context`, as a stream-table
            // join releasing buffered records does).
            Ok(mut guard) => guard.process_raw(self, node, record),
            Err(_) => Err(StreamsError::Reentrant {
                node: self.meta[node].name.clone(),
            }),
        };
        self.in_record.set(false);
        self.source_raw.borrow_mut().take();
        result
    }

    /// Where the current record was read (its topic, partition and
    /// offset), borrowed: what a source's decoding errors name. Held while
    /// the source decodes, not while it forwards (a processor may run code
    /// as of another record). `None` only if the metadata is being
    /// changed, which nothing does while a source decodes.
    pub(crate) fn source_position(&self) -> Option<Ref<'_, RecordMetadata>> {
        self.current.try_borrow().ok()
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

    /// Counts one record dropped at `node`: in the task's
    /// `dropped_records` and in the node's own count.
    pub(crate) fn count_dropped(&self, node: usize) {
        self.count(|m| m.dropped_records += 1);
        let mut by_node = self.dropped_by_node.borrow_mut();
        if by_node.len() <= node {
            by_node.resize(node + 1, 0);
        }
        by_node[node] += 1;
    }

    /// The nodes (and stores) that dropped records, by name, with how
    /// many each.
    pub(crate) fn dropped_records_by_node(&self) -> std::collections::BTreeMap<String, u64> {
        let mut by_name: std::collections::BTreeMap<String, u64> = self
            .dropped_by_node
            .borrow()
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (self.node_name(i).to_owned(), *n))
            .collect();
        for (store, n) in self.dropped_by_store.borrow().iter() {
            *by_name.entry(store.clone()).or_default() += n;
        }
        by_name
    }

    /// What the task processed and dropped so far, the records its stores
    /// dropped included.
    pub(crate) fn metrics(&self) -> TaskMetrics {
        let mut metrics = self.metrics.get();
        metrics.dropped_records += self.dropped_by_store.borrow().values().sum::<u64>();
        metrics
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

    /// The store `name` whatever its type, for processor `node` (which
    /// must be connected to it) or for the driver (`node` = `None`).
    pub(crate) fn store_dyn(
        &self,
        node: Option<usize>,
        name: &str,
    ) -> Result<RefMut<'_, dyn StateStore>> {
        let guard = self.borrow_store(node, name)?;
        Ok(RefMut::map(guard, |s| &mut **s))
    }

    /// The store `name` borrowed for processor `node` (which must be
    /// connected to it; a global store is connected to every node) or for
    /// the driver (`node` = `None`).
    fn borrow_store(
        &self,
        node: Option<usize>,
        name: &str,
    ) -> Result<RefMut<'_, Box<dyn StateStore>>> {
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
        self.stores[index]
            .try_borrow_mut()
            .map_err(|_| StreamsError::StoreAlreadyBorrowed {
                store: name.to_owned(),
            })
    }

    /// The store `name` as type `S`, for processor `node` (which must be
    /// connected to it) or for the driver (`node` = `None`).
    pub(crate) fn store<S: StateStore>(
        &self,
        node: Option<usize>,
        name: &str,
        expected: impl FnOnce() -> String,
    ) -> Result<RefMut<'_, S>> {
        let guard = self.borrow_store(node, name)?;
        RefMut::filter_map(guard, |s| s.as_any_mut().downcast_mut::<S>()).map_err(|guard| {
            StreamsError::WrongStoreType {
                store: name.to_owned(),
                expected: expected(),
                actual: guard.kind(),
                actual_types: guard.store_types(),
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
        self.begin_unit();
        // Store by store, as Kafka flushes them: the DSL's record caches
        // (commit hooks, ordered by store), then the store's own. Each
        // hook is taken out of the borrow before it runs: a hook may
        // reach the task again (nothing is collected per commit).
        let mut i = 0;
        for (index, store) in self.stores.iter().enumerate() {
            loop {
                let (node, run) = match self.commit_hooks.borrow().get(i) {
                    Some(h) if h.store == index => (h.node, h.run.clone()),
                    _ => break,
                };
                run(self, node)?;
                i += 1;
            }
            let mut store =
                store
                    .try_borrow_mut()
                    .map_err(|_| StreamsError::StoreAlreadyBorrowed {
                        store: self.store_names[index].to_string(),
                    })?;
            store.commit()?;
        }
        Ok(())
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
            self.begin_unit();
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
