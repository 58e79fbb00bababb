//! The engine: one stream task that runs a topology's processors.
//!
//! A [`StreamTask`] is an instantiated [`Topology`]: every processor built
//! from its supplier and initialized, serdes resolved against the
//! [`StreamsConfig`]. It takes serialized records from source topics one at
//! a time, runs them through the processors (typed from the source to the
//! sink: deserialized once, serialized once), keeps stream time, fires
//! punctuations, and collects what sinks produced for the caller to route.
//! A test driver (such as `streams-test`'s `TopologyTestDriver`) owns one
//! and decides which record comes next.
//!
//! ```
//! use streams_core::engine::StreamTask;
//! use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
//! let mut task = StreamTask::new(&builder.build()?, &StreamsConfig::default(), 0)?;
//! task.process("in", 0, RawRecord::new(None, Some(b"hi".to_vec()), 7))?;
//! let produced = task.take_produced();
//! assert_eq!(&*produced[0].topic, "out");
//! assert_eq!(produced[0].record.value.as_deref(), Some(&b"HI"[..]));
//! assert_eq!(task.stream_time(), 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod global;
mod nodes;

pub(crate) use global::GlobalSourceNode;
pub(crate) use nodes::{ErasedNode, ProcessorNode, SinkNode, SinkTarget, SourceNode};

use std::any::Any;
use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;

use crate::config::StreamsConfig;
use crate::error::{Result, StreamsError};
use crate::processor::{Cancellable, PunctuationType};
use crate::record::{RawRecord, Record, RecordMetadata};
use crate::state::{StateStore, StoreContext};
use crate::topology::{NodeKind, Topology};

/// A record a sink produced, with the topic it went to.
#[derive(Debug, Clone, PartialEq)]
pub struct ProducedRecord {
    /// The topic written (internal topics with their full, prefixed name).
    pub topic: Arc<str>,
    /// The serialized record.
    pub record: RawRecord,
}

/// What sinks and changelogs produced and the caller has not taken yet:
/// each record with the number of its topic. Topics are numbered in the
/// order they are first written (a topic's number never changes), so that
/// a record carries no reference-counted name and its topic is found by
/// number.
#[derive(Debug, Default)]
pub(crate) struct Produced {
    topics: Vec<Arc<str>>,
    /// The number of the topic written last: a sink writes one topic.
    last: usize,
    records: Vec<(usize, RawRecord)>,
}

impl Produced {
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

    /// The records, with their topics' names: for tests and for callers of
    /// [`StreamTask::take_produced`].
    pub(crate) fn take_records(&mut self) -> Vec<ProducedRecord> {
        self.records
            .drain(..)
            .map(|(n, record)| ProducedRecord {
                topic: self.topics[n].clone(),
                record,
            })
            .collect()
    }

    /// The records not taken yet, with their topics' names (copies).
    #[cfg(test)]
    pub(crate) fn records(&self) -> Vec<ProducedRecord> {
        self.records
            .iter()
            .map(|(n, record)| ProducedRecord {
                topic: self.topics[*n].clone(),
                record: record.clone(),
            })
            .collect()
    }
}

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

struct Schedule {
    id: u64,
    seq: u64,
    node: usize,
    kind: PunctuationType,
    interval: i64,
    next: i64,
    cancelled: Rc<Cell<bool>>,
}

struct NodeMeta {
    name: String,
    children: Vec<usize>,
}

/// The shared state of a running task that processors reach through
/// their context.
pub(crate) struct TaskState {
    meta: Vec<NodeMeta>,
    stores: Vec<RefCell<Box<dyn StateStore>>>,
    /// The stores' names, by index: found without borrowing the stores.
    store_names: Vec<Box<str>>,
    /// Store indexes each node is connected to.
    node_stores: Vec<Vec<usize>>,
    /// Stores from this index on are global: every node may read them.
    global_stores_from: usize,
    /// The timestamp of the record a node is processing (or of the
    /// punctuation running): what changelog records carry.
    record_timestamp: Rc<Cell<i64>>,
    nodes: Vec<RefCell<Box<dyn ErasedNode>>>,
    application_id: String,
    stream_time: Cell<i64>,
    wall_clock: Cell<i64>,
    /// Where the record being processed came from, valid while
    /// `in_record` is set. Kept between records so that the next record
    /// of the same topic only changes the offset (no reference counting
    /// per record).
    current: RefCell<RecordMetadata>,
    in_record: Cell<bool>,
    produced: Rc<RefCell<Produced>>,
    schedules: RefCell<Vec<Schedule>>,
    next_id: Cell<u64>,
    metrics: Cell<TaskMetrics>,
    config: StreamsConfig,
    /// What runs at each commit, in store order: the flushes of the DSL's
    /// record caches.
    commit_hooks: RefCell<Vec<CommitHook>>,
}

/// A flush run at commit: the store's index (which orders the flushes, as
/// Kafka flushes stores in the order they were registered), the node that
/// forwards what is flushed, and the flush.
struct CommitHook {
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
    fn enter_record(&self, shared: Option<&Arc<str>>, topic: &str, offset: i64) {
        let mut current = self.current.borrow_mut();
        match shared {
            Some(t) if Arc::ptr_eq(t, &current.topic) => {}
            Some(t) => current.topic = t.clone(),
            None if &*current.topic == topic => {}
            None => current.topic = Arc::from(topic),
        }
        current.partition = 0;
        current.offset = offset;
        self.in_record.set(true);
    }

    /// Runs the source `node` on a serialized record, as the current record.
    fn process_source(&self, node: usize, record: RawRecord) -> Result<()> {
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
        self.produced.borrow_mut().push(topic, record);
    }

    /// A sink's record for the topic named `topic` (computed per record).
    pub(crate) fn produce_named(&self, topic: &str, record: RawRecord) {
        self.produced.borrow_mut().push_named(topic, record);
    }

    pub(crate) fn count(&self, f: impl FnOnce(&mut TaskMetrics)) {
        let mut m = self.metrics.get();
        f(&mut m);
        self.metrics.set(m);
    }

    fn fresh_id(&self) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    pub(crate) fn schedule(
        &self,
        node: usize,
        interval: i64,
        kind: PunctuationType,
    ) -> Cancellable {
        let id = self.fresh_id();
        let cancelled = Rc::new(Cell::new(false));
        let next = match kind {
            // Aligned to 0: fires on the first record.
            PunctuationType::StreamTime => 0,
            PunctuationType::WallClockTime => self.wall_clock.get().saturating_add(interval),
        };
        let seq = self.fresh_id();
        self.schedules.borrow_mut().push(Schedule {
            id,
            seq,
            node,
            kind,
            interval,
            next,
            cancelled: cancelled.clone(),
        });
        Cancellable::new(id, cancelled)
    }

    fn store_index(&self, name: &str) -> Result<usize> {
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
            StreamsError::InvalidArgument(format!(
                "store `{name}` is already borrowed; drop the previous handle to it first"
            ))
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
    fn commit(&self) -> Result<()> {
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

    fn punctuate(&self, kind: PunctuationType, now: i64) -> Result<bool> {
        let mut fired = false;
        loop {
            // The due schedule with the smallest time (then the oldest).
            let due = {
                let mut schedules = self.schedules.borrow_mut();
                schedules.retain(|s| !s.cancelled.get());
                let best = schedules
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.kind == kind && s.next <= now)
                    .min_by_key(|(_, s)| (s.next, s.seq))
                    .map(|(i, _)| i);
                match best {
                    Some(i) => schedules.swap_remove(i),
                    None => return Ok(fired),
                }
            };
            fired = true;
            self.record_timestamp.set(now);
            let punctuation = crate::processor::Punctuation {
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
            if !due.cancelled.get() {
                let mut next = due.next + due.interval;
                if now >= next {
                    let missed = (now - due.next) / due.interval;
                    next = due.next + (missed + 1) * due.interval;
                }
                let seq = self.fresh_id();
                self.schedules
                    .borrow_mut()
                    .push(Schedule { next, seq, ..due });
            }
        }
    }
}

/// A topology instantiated as one running task. See the [module docs](self).
pub struct StreamTask {
    state: TaskState,
    /// Source topic (full name) -> source node.
    sources: Vec<(Arc<str>, usize)>,
    /// Source patterns -> source node.
    patterns: Vec<(regex::Regex, String, usize)>,
    /// Sink topics (full names) that are not computed per record.
    sink_topics: Vec<String>,
    /// Global topic -> the source node of its global store.
    globals: Vec<(Arc<str>, usize)>,
    closed: bool,
}

impl std::fmt::Debug for StreamTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamTask")
            .field("application_id", &self.state.application_id)
            .field(
                "nodes",
                &self.state.meta.iter().map(|m| &m.name).collect::<Vec<_>>(),
            )
            .field("stream_time", &self.state.stream_time.get())
            .finish_non_exhaustive()
    }
}

impl StreamTask {
    /// Instantiates `topology` with `config`, the wall clock starting at
    /// `wall_clock_ms`, and initializes every processor (parents first).
    ///
    /// # Errors
    /// The topology is invalid, a serde is missing, or a processor's
    /// `init` failed.
    pub fn new(topology: &Topology, config: &StreamsConfig, wall_clock_ms: i64) -> Result<Self> {
        topology.validate()?;
        let app = config.application_id();
        let defs = topology.nodes();
        let mut nodes = Vec::with_capacity(defs.len());
        let mut meta = Vec::with_capacity(defs.len());
        let mut sources = Vec::new();
        let mut patterns = Vec::new();
        let mut sink_topics = Vec::new();
        for (i, def) in defs.iter().enumerate() {
            nodes.push(RefCell::new((def.factory)(config, &def.name)?));
            meta.push(NodeMeta {
                name: def.name.clone(),
                children: def.children.clone(),
            });
            match &def.kind {
                NodeKind::Source { topics, pattern } => {
                    for t in topics {
                        sources.push((Arc::from(t.full_name(app)), i));
                    }
                    if let Some((re, written)) = pattern {
                        patterns.push((re.clone(), written.clone(), i));
                    }
                }
                NodeKind::Sink { topic: Some(t), .. } => sink_topics.push(t.full_name(app)),
                _ => {}
            }
        }
        // Global stores: their source and processor follow the topology's
        // nodes; the processor is connected to its store.
        let mut globals = Vec::new();
        let mut global_nodes = Vec::new();
        for (def, runtime) in topology.global_store_parts() {
            let (source, processor) = (nodes.len(), nodes.len() + 1);
            nodes.push(RefCell::new((runtime.source_factory)(config, &def.source)?));
            nodes.push(RefCell::new((runtime.processor_factory)(
                config,
                &def.processor,
            )?));
            meta.push(NodeMeta {
                name: def.source.clone(),
                children: vec![processor],
            });
            meta.push(NodeMeta {
                name: def.processor.clone(),
                children: Vec::new(),
            });
            globals.push((Arc::from(def.topic.as_str()), source));
            global_nodes.push((source, processor, def.store.clone()));
        }
        let produced = Rc::new(RefCell::new(Produced::default()));
        let record_timestamp = Rc::new(Cell::new(-1));
        let store_context = StoreContext {
            produced: produced.clone(),
            timestamp: record_timestamp.clone(),
            application_id: app.to_owned(),
        };
        let mut stores = Vec::new();
        for def in topology.store_builders() {
            let mut store = def.build(config)?;
            store.init(&store_context)?;
            stores.push(RefCell::new(store));
        }
        let global_stores_from = stores.len();
        for (_, runtime) in topology.global_store_parts() {
            let mut store = runtime.store.build(config)?;
            store.init(&store_context)?;
            stores.push(RefCell::new(store));
        }
        let mut node_stores: Vec<Vec<usize>> = defs
            .iter()
            .map(|d| {
                d.stores
                    .iter()
                    .filter_map(|name| stores.iter().position(|s| s.borrow().name() == name))
                    .collect()
            })
            .collect();
        for (_, processor, store) in &global_nodes {
            node_stores.resize(processor + 1, Vec::new());
            node_stores[*processor] = stores
                .iter()
                .position(|s| s.borrow().name() == store)
                .into_iter()
                .collect();
        }
        let task = StreamTask {
            state: TaskState {
                meta,
                store_names: stores.iter().map(|s| s.borrow().name().into()).collect(),
                stores,
                node_stores,
                global_stores_from,
                record_timestamp,
                nodes,
                application_id: app.to_owned(),
                stream_time: Cell::new(-1),
                wall_clock: Cell::new(wall_clock_ms),
                current: RefCell::new(RecordMetadata {
                    topic: Arc::from(""),
                    partition: 0,
                    offset: -1,
                }),
                in_record: Cell::new(false),
                produced,
                schedules: RefCell::new(Vec::new()),
                next_id: Cell::new(0),
                metrics: Cell::new(TaskMetrics::default()),
                config: config.clone(),
                commit_hooks: RefCell::new(Vec::new()),
            },
            sources,
            patterns,
            sink_topics,
            globals,
            closed: false,
        };
        // Global state first, as Kafka's driver initializes its global
        // task before the stream task.
        let first_global = defs.len();
        let order = (first_global..task.state.nodes.len()).chain(0..first_global);
        for i in order {
            task.state.nodes[i].borrow_mut().init(&task.state, i)?;
        }
        Ok(task)
    }

    /// The topics sources read, by full name, in the order sources were added.
    pub fn source_topics(&self) -> Vec<&str> {
        self.sources.iter().map(|(t, _)| &**t).collect()
    }

    /// The source topic patterns, as written.
    pub fn source_patterns(&self) -> Vec<&str> {
        self.patterns.iter().map(|(_, p, _)| p.as_str()).collect()
    }

    /// The fixed topics sinks write to, by full name.
    pub fn sink_topics(&self) -> &[String] {
        &self.sink_topics
    }

    /// Whether a source reads `topic`, by name or by pattern.
    pub fn reads(&self, topic: &str) -> bool {
        self.source_for(topic).is_some()
    }

    fn source_for(&self, topic: &str) -> Option<usize> {
        self.sources
            .iter()
            .find(|(t, _)| &**t == topic)
            .map(|&(_, n)| n)
            .or_else(|| {
                self.patterns
                    .iter()
                    .find(|(p, _, _)| p.is_match(topic))
                    .map(|&(_, _, n)| n)
            })
    }

    /// Processes one serialized record read from `topic` at `offset`
    /// (partition 0): deserializes it at its source, advances stream time,
    /// and runs it through the processors.
    ///
    /// # Errors
    /// [`StreamsError::UnknownTopic`] if no source reads `topic`; a
    /// deserialization error (unless the config says to continue), or any
    /// error a processor or sink returned.
    pub fn process(&mut self, topic: &str, offset: i64, record: RawRecord) -> Result<()> {
        if self.closed {
            return Err(StreamsError::Closed("task"));
        }
        // One pass: the source and the topic name it shares (a pattern
        // source gets the name of the topic matched).
        let named = self.sources.iter().find(|(t, _)| &**t == topic);
        let (shared, source): (Option<&Arc<str>>, usize) = match named {
            Some((t, n)) => (Some(t), *n),
            None => match self.source_for(topic) {
                Some(n) => (None, n),
                None => {
                    return Err(StreamsError::UnknownTopic {
                        topic: topic.to_owned(),
                        known: self
                            .source_topics()
                            .into_iter()
                            .chain(self.source_patterns())
                            .map(str::to_owned)
                            .collect(),
                    });
                }
            },
        };
        self.state.enter_record(shared, topic, offset);
        self.state.process_source(source, record)
    }

    /// The topics of global stores, by name, in the order the stores were added.
    pub fn global_topics(&self) -> Vec<&str> {
        self.globals.iter().map(|(t, _)| &**t).collect()
    }

    /// Whether `topic` is the topic of a global store.
    pub fn reads_global(&self, topic: &str) -> bool {
        self.globals.iter().any(|(t, _)| &**t == topic)
    }

    /// Processes one serialized record of a global store's topic at
    /// `offset`: deserializes it and hands it to the store's processor at
    /// once, as Kafka's global state update task. Stream time does not
    /// move and no punctuation runs.
    ///
    /// # Errors
    /// [`StreamsError::UnknownTopic`] if no global store reads `topic`; a
    /// deserialization error (unless the config says to continue), or any
    /// error the processor returned.
    pub fn process_global(&mut self, topic: &str, offset: i64, record: RawRecord) -> Result<()> {
        if self.closed {
            return Err(StreamsError::Closed("task"));
        }
        let Some((shared, source)) = self.globals.iter().find(|(t, _)| &**t == topic) else {
            return Err(StreamsError::UnknownTopic {
                topic: topic.to_owned(),
                known: self
                    .global_topics()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            });
        };
        self.state.enter_record(Some(shared), topic, offset);
        self.state.process_source(*source, record)
    }

    /// Commits, as Kafka's driver does after each record and each
    /// wall-clock punctuation: flushes the DSL's record caches, which
    /// forwards what they held (see `streams_core::dsl` on the record
    /// cache).
    ///
    /// # Errors
    /// Any error of the processors the flushed records reach.
    pub fn commit(&mut self) -> Result<()> {
        if self.closed {
            return Err(StreamsError::Closed("task"));
        }
        self.state.commit()
    }

    /// Fires the stream-time punctuations that are due. Returns whether any fired.
    pub fn maybe_punctuate_stream_time(&mut self) -> Result<bool> {
        let now = self.state.stream_time.get();
        if now < 0 || self.state.schedules.borrow().is_empty() {
            return Ok(false);
        }
        self.state.punctuate(PunctuationType::StreamTime, now)
    }

    /// Sets the wall clock to `now` (it never goes back) and fires the
    /// wall-clock punctuations that are due. Returns whether any fired.
    pub fn maybe_punctuate_wall_clock(&mut self, now: i64) -> Result<bool> {
        if now > self.state.wall_clock.get() {
            self.state.wall_clock.set(now);
        }
        self.state
            .punctuate(PunctuationType::WallClockTime, self.state.wall_clock.get())
    }

    /// Whether sinks or changelogs produced records not yet taken.
    pub fn has_produced(&self) -> bool {
        !self.state.produced.borrow().records.is_empty()
    }

    /// Takes the records sinks produced since the last call, in order.
    pub fn take_produced(&mut self) -> Vec<ProducedRecord> {
        self.state.produced.borrow_mut().take_records()
    }

    /// Moves the records sinks produced since the last call to the end of
    /// `into`.
    pub fn take_produced_into(&mut self, into: &mut Vec<ProducedRecord>) {
        into.append(&mut self.take_produced());
    }

    /// Moves the records sinks produced since the last call to the end of
    /// `into`, each with the number of its topic (see
    /// [`produced_topic`](StreamTask::produced_topic)): no topic name is
    /// passed per record. The task keeps a buffer for reuse: its own, or,
    /// when `into` is empty, `into`'s (the two trade places and nothing is
    /// copied).
    ///
    /// ```
    /// use streams_core::engine::StreamTask;
    /// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").to("out");
    /// let mut task = StreamTask::new(&builder.build()?, &StreamsConfig::default(), 0)?;
    /// task.process("in", 0, RawRecord::new(None, Some(b"hi".to_vec()), 7))?;
    /// let mut produced = Vec::new();
    /// task.take_produced_numbered(&mut produced);
    /// let (topic, record) = &produced[0];
    /// assert_eq!(task.produced_topic(*topic).as_deref(), Some("out"));
    /// assert_eq!(record.value.as_deref(), Some(&b"hi"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_produced_numbered(&mut self, into: &mut Vec<(usize, RawRecord)>) {
        let mut produced = self.state.produced.borrow_mut();
        if into.is_empty() {
            std::mem::swap(into, &mut produced.records);
        } else {
            into.append(&mut produced.records);
        }
    }

    /// The name of the topic numbered `number` in
    /// [`take_produced_numbered`](StreamTask::take_produced_numbered); a
    /// topic keeps its number for the task's life.
    pub fn produced_topic(&self, number: usize) -> Option<Arc<str>> {
        self.state.produced.borrow().topics.get(number).cloned()
    }

    /// The current stream time; `-1` before the first record.
    pub fn stream_time(&self) -> i64 {
        self.state.stream_time.get()
    }

    /// The current wall-clock time.
    pub fn wall_clock_time(&self) -> i64 {
        self.state.wall_clock.get()
    }

    /// The names of the task's stores, in the order they were added.
    pub fn store_names(&self) -> Vec<String> {
        self.state.store_names()
    }

    /// The store `name` as type `S` (for example
    /// `KeyValueStore<String, i64>`), to read or to write.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStore`] naming the stores that exist, or
    /// [`StreamsError::WrongStoreType`] naming the store's kind.
    pub fn store<S: StateStore>(&self, name: &str) -> Result<RefMut<'_, S>> {
        self.state
            .store(None, name, || std::any::type_name::<S>().to_owned())
    }

    /// Replays changelog records into the store `name` before processing
    /// (restoration, as Kafka Streams restores a task's stores); returns
    /// whether the store restores (custom stores may not).
    ///
    /// # Errors
    /// [`StreamsError::UnknownStore`], or a record the store cannot decode.
    pub fn restore_store(&self, name: &str, records: &[crate::record::RawRecord]) -> Result<bool> {
        let i = self.state.store_index(name)?;
        self.state.stores[i].borrow_mut().restore_changelog(records)
    }

    /// What kind of store `name` is.
    ///
    /// # Errors
    /// [`StreamsError::UnknownStore`].
    pub fn store_kind(&self, name: &str) -> Result<crate::state::StoreKind> {
        let i = self.state.store_index(name)?;
        Ok(self.state.stores[i].borrow().kind())
    }

    /// What the task processed and dropped so far.
    pub fn metrics(&self) -> TaskMetrics {
        self.state.metrics.get()
    }

    /// The `application.id` this task runs with.
    pub fn application_id(&self) -> &str {
        &self.state.application_id
    }

    /// Closes every processor, in the order they were added, and stops
    /// all punctuation. Every processor is closed even if one fails; the
    /// first error is returned. Closing twice does nothing.
    pub fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.state.schedules.borrow_mut().clear();
        let mut first = None;
        for cell in &self.state.nodes {
            if let Err(e) = cell.borrow_mut().close()
                && first.is_none()
            {
                first = Some(e);
            }
        }
        for cell in &self.state.stores {
            if let Err(e) = cell.borrow_mut().close()
                && first.is_none()
            {
                first = Some(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
