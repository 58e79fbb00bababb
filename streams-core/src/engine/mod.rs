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

use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;
use std::sync::Arc;

pub use crate::processor::task::TaskMetrics;
pub use crate::record::collector::ProducedRecord;

use crate::config::StreamsConfig;
use crate::error::{Result, StreamsError};
use crate::processor::PunctuationType;
use crate::processor::task::{Handlers, NodeMeta, TaskState};
use crate::record::RawRecord;
use crate::record::RecordMetadata;
use crate::record::collector::RecordCollector;
use crate::state::{StateStore, StoreContext};
use crate::topology::{NodeKind, Topology};

/// A topology instantiated as one running task. See the [module docs](self).
pub struct StreamTask {
    state: TaskState,
    /// Source topic (full name) -> source node.
    sources: Vec<(Arc<str>, usize)>,
    /// Source patterns -> source node.
    patterns: Vec<(regex_lite::Regex, String, usize)>,
    /// Sink topics (full names) that are not computed per record.
    sink_topics: Vec<String>,
    /// Global topic -> the source node of its global store.
    globals: Vec<(Arc<str>, usize)>,
    /// Whether its global stores are another task's (see
    /// [`StreamTask::for_subtopology_with_globals`]): closing it leaves
    /// them open.
    shares_globals: bool,
    closed: bool,
}

/// A source node of a [`StreamTask`], found once by topic with
/// [`StreamTask::source_id`], to process records with
/// [`StreamTask::process_from`] without looking their topic up by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceId(usize);

/// Handles on the global stores of one task, which other tasks of the
/// instance read (see [`StreamTask::for_subtopology_with_globals`]).
#[derive(Clone)]
pub struct GlobalStores {
    stores: Vec<Rc<RefCell<Box<dyn StateStore>>>>,
}

impl std::fmt::Debug for GlobalStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.stores.iter().map(|s| s.borrow().name().to_owned()))
            .finish()
    }
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
        Self::build(topology, config, None, 0, wall_clock_ms, None)
    }

    /// Instantiates the sub-topology `subtopology` of `topology` as the
    /// task that processes its partition `partition` (Kafka's task
    /// `<subtopology>_<partition>`): only that sub-topology's processors
    /// are initialized and only its stores built, its sources read only
    /// its topics, and records carry `partition` in their metadata. The
    /// runtime (`KafkaStreams`) makes one per sub-topology and partition.
    ///
    /// ```
    /// use streams_core::engine::StreamTask;
    /// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("words").group_by(|_, w| w.clone()).count();
    /// let topology = builder.build()?;
    /// let config = StreamsConfig::new("app");
    /// let first = StreamTask::for_subtopology(&topology, &config, 0, 3, 0)?;
    /// assert_eq!(first.source_topics(), ["words"]);
    /// assert!(first.store_names().is_empty());
    /// let second = StreamTask::for_subtopology(&topology, &config, 1, 3, 0)?;
    /// assert_eq!(second.source_topics(), ["app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"]);
    /// assert_eq!(second.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000002"]);
    /// assert_eq!(second.partition(), 3);
    /// // The count's changelog record, for the runtime to send to partition 3.
    /// let mut second = second;
    /// let repartition = "app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition";
    /// second.process(repartition, 0, RawRecord::new(Some(b"hi".to_vec()), Some(b"hi".to_vec()), 5))?;
    /// second.commit()?;
    /// let produced = second.take_produced();
    /// assert_eq!(&*produced[0].topic, "app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`StreamsError::UnknownSubtopology`] when the topology has no such
    /// sub-topology; otherwise as [`StreamTask::new`].
    pub fn for_subtopology(
        topology: &Topology,
        config: &StreamsConfig,
        subtopology: usize,
        partition: i32,
        wall_clock_ms: i64,
    ) -> Result<Self> {
        Self::build_subtopology(
            topology,
            config,
            subtopology,
            partition,
            wall_clock_ms,
            None,
        )
    }

    /// A sub-topology's task, with its own global stores or `globals`.
    fn build_subtopology(
        topology: &Topology,
        config: &StreamsConfig,
        subtopology: usize,
        partition: i32,
        wall_clock_ms: i64,
        globals: Option<&GlobalStores>,
    ) -> Result<Self> {
        let Some(members) = topology.subtopology_nodes(subtopology) else {
            return Err(StreamsError::UnknownSubtopology {
                subtopology,
                count: topology.topics_info(config.application_id()).len(),
            });
        };
        Self::build(
            topology,
            config,
            Some((subtopology, &members)),
            partition,
            wall_clock_ms,
            globals,
        )
    }

    /// As [`StreamTask::for_subtopology`], for a task that reads the
    /// global stores of another task, `globals` (from
    /// [`StreamTask::global_stores`]) instead of keeping its own: Kafka
    /// Streams keeps one copy of each global store per instance, which its
    /// global thread updates and every stream task reads. The task has no
    /// global sources; [`StreamTask::process_global`] goes to the task that
    /// owns the stores, and closing this task leaves them open.
    ///
    /// ```
    /// use streams_core::engine::StreamTask;
    /// use streams_core::record::RawRecord;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// let prices = builder.global_table::<String, String>("prices");
    /// builder
    ///     .stream::<String, String>("orders")
    ///     .join_global(&prices, |_, item| item.clone(), |order, price| format!("{order}@{price}"))
    ///     .to("priced");
    /// let topology = builder.build()?;
    /// let config = StreamsConfig::new("shop");
    /// let mut global = StreamTask::for_global_stores(&topology, &config, 0)?;
    /// // Sub-topology 0 is the global store's, as in Kafka's describe().
    /// let mut task = StreamTask::for_subtopology_with_globals(&topology, &config, 1, 1, 0, &global.global_stores())?;
    /// global.process_global("prices", 0, RawRecord::new(Some(b"tea".to_vec()), Some(b"3".to_vec()), 1))?;
    /// task.process("orders", 0, RawRecord::new(Some(b"o1".to_vec()), Some(b"tea".to_vec()), 2))?;
    /// let produced = task.take_produced();
    /// assert_eq!(produced[0].record.value.as_deref(), Some(&b"tea@3"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`StreamTask::for_subtopology`].
    pub fn for_subtopology_with_globals(
        topology: &Topology,
        config: &StreamsConfig,
        subtopology: usize,
        partition: i32,
        wall_clock_ms: i64,
        globals: &GlobalStores,
    ) -> Result<Self> {
        Self::build_subtopology(
            topology,
            config,
            subtopology,
            partition,
            wall_clock_ms,
            Some(globals),
        )
    }

    /// The task of an instance's global stores, as Kafka's global stream
    /// thread runs them: only the global sources, processors and stores of
    /// `topology`, fed with [`StreamTask::process_global`]. Stream tasks
    /// read its stores through [`StreamTask::global_stores`].
    ///
    /// # Errors
    /// As [`StreamTask::new`].
    pub fn for_global_stores(
        topology: &Topology,
        config: &StreamsConfig,
        wall_clock_ms: i64,
    ) -> Result<Self> {
        Self::build(topology, config, Some((0, &[])), 0, wall_clock_ms, None)
    }

    /// Handles on the task's global stores, for stream tasks built with
    /// [`StreamTask::for_subtopology_with_globals`] to read.
    pub fn global_stores(&self) -> GlobalStores {
        GlobalStores {
            stores: self.state.stores[self.state.global_stores_from..].to_vec(),
        }
    }

    fn build(
        topology: &Topology,
        config: &StreamsConfig,
        subtopology: Option<(usize, &[usize])>,
        partition: i32,
        wall_clock_ms: i64,
        shared_globals: Option<&GlobalStores>,
    ) -> Result<Self> {
        // A topology without sources makes a task that reads nothing, as
        // Kafka's driver allows (the runtime refuses it: KafkaStreams::new).
        // Kafka's StreamsConfig refuses a bad `topology.optimization`, for
        // a driver as for an application.
        config.topology_optimizations()?;
        let handlers = Handlers::from_config(config)?;
        let task_id = format!("{}_{partition}", subtopology.map_or(0, |(s, _)| s));
        let members = subtopology.map(|(_, m)| m);
        let member = |i: usize| members.is_none_or(|m| m.contains(&i));
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
            if !member(i) {
                continue;
            }
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
        let own_globals: Vec<_> = if shared_globals.is_some() {
            Vec::new()
        } else {
            topology.global_store_parts().collect()
        };
        for (def, runtime) in &own_globals {
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
        let collector = Rc::new(RefCell::new(RecordCollector::default()));
        // Kafka's record context: the last record's (or punctuation's)
        // timestamp, which changelog records written outside processing
        // (a test writing a store) carry; 0 before the first, as Kafka's
        // driver sets it.
        let record_timestamp = Rc::new(Cell::new(0));
        let store_context = StoreContext::new(collector.clone(), record_timestamp.clone(), app)
            .with_state_dir(config.state_dir().join(app).join(&task_id));
        let mut stores = Vec::new();
        for def in topology.store_builders() {
            let used = defs
                .iter()
                .enumerate()
                .any(|(i, d)| member(i) && d.stores.iter().any(|s| s == def.name()));
            if members.is_some() && !used {
                continue;
            }
            let mut store = def.build(config)?;
            store.init(&store_context)?;
            stores.push(Rc::new(RefCell::new(store)));
        }
        let global_stores_from = stores.len();
        match shared_globals {
            Some(shared) => stores.extend(shared.stores.iter().cloned()),
            None => {
                let global_context =
                    store_context.with_state_dir(config.state_dir().join(app).join("global"));
                for (_, runtime) in &own_globals {
                    let mut store = runtime.store.build(config)?;
                    store.init(&global_context)?;
                    stores.push(Rc::new(RefCell::new(store)));
                }
            }
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
                subtopology: subtopology.map_or(0, |(s, _)| s),
                partition,
                partition_counts: RefCell::default(),
                stream_time: Cell::new(-1),
                wall_clock: Cell::new(wall_clock_ms),
                current: RefCell::new(RecordMetadata {
                    topic: Arc::from(""),
                    partition: 0,
                    offset: -1,
                }),
                in_record: Cell::new(false),
                collector,
                punctuations: Default::default(),
                metrics: Cell::new(TaskMetrics::default()),
                dropped_by_node: RefCell::new(Vec::new()),
                dropped_by_store: store_context.dropped.clone(),
                config: config.clone(),
                commit_hooks: RefCell::new(Vec::new()),
                store_shared: RefCell::default(),
                task_id,
                handlers,
                source_raw: RefCell::new(None),
                unit_mark: Cell::new(0),
                poisoned: Cell::new(false),
            },
            sources,
            patterns,
            sink_topics,
            globals,
            shares_globals: shared_globals.is_some(),
            closed: false,
        };
        // Global state first, as Kafka's driver initializes its global
        // task before the stream task.
        let first_global = defs.len();
        let order =
            (first_global..task.state.nodes.len()).chain((0..first_global).filter(|&i| member(i)));
        for i in order {
            task.state.nodes[i].borrow_mut().init(&task.state, i)?;
        }
        Ok(task)
    }

    /// Tells the task how to learn a topic's partition count, which its
    /// sinks' [`StreamPartitioner`](crate::processor::StreamPartitioner)s
    /// are given. Each count is asked for once. Without a lookup every
    /// topic has one partition, as in Kafka's `TopologyTestDriver`; the
    /// runtime asks the cluster.
    ///
    /// ```
    /// use streams_core::dsl::Produced;
    /// use streams_core::engine::StreamTask;
    /// use streams_core::record::RawRecord;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// let last = |_: &str, _: Option<&String>, _: Option<&String>, n: i32| Some(n - 1);
    /// builder
    ///     .stream::<String, String>("in")
    ///     .to_with("out", Produced::default().with_stream_partitioner(last));
    /// let topology = builder.build()?;
    /// let mut task = StreamTask::for_subtopology(&topology, &StreamsConfig::new("app"), 0, 0, 0)?;
    /// task.set_partition_count_lookup(Box::new(|topic| Ok((topic == "out").then_some(6))));
    /// task.process("in", 0, RawRecord::new(Some(b"k".to_vec()), Some(b"v".to_vec()), 5))?;
    /// assert_eq!(task.take_produced()[0].partition, Some(5));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_partition_count_lookup(&mut self, lookup: crate::processor::PartitionCountLookup) {
        self.state.partition_counts.borrow_mut().set_lookup(lookup);
    }

    /// The partition the task processes (0 for [`StreamTask::new`]'s task).
    pub fn partition(&self) -> i32 {
        self.state.partition
    }

    /// The topics sources read, by full name, in the order sources were added.
    pub fn source_topics(&self) -> Vec<&str> {
        self.sources.iter().map(|(t, _)| &**t).collect()
    }

    /// The source topic patterns, as written.
    pub fn source_patterns(&self) -> Vec<&str> {
        self.patterns.iter().map(|(_, p, _)| p.as_str()).collect()
    }

    /// A source topic named in the topology that, read as a regex,
    /// matches `topic` without being `topic` (a name with a `.`, such as
    /// `orders.v1` against `ordersXv1`): Kafka's driver refuses to pipe such
    /// a topic (`validateSourceTopicNameRegexPattern`).
    pub fn source_name_read_as_regex(&self, topic: &str) -> Option<&str> {
        self.sources
            .iter()
            .map(|(name, _)| &**name)
            .filter(|name| {
                *name != topic
                    && name.contains(['.', '*', '+', '?', '[', '(', '|', '^', '$', '\\', '{'])
            })
            .find(|name| {
                regex_lite::Regex::new(&format!("^(?:{name})$")).is_ok_and(|re| re.is_match(topic))
            })
    }

    /// The pattern (as written) through which a source reads `topic`, when
    /// no source names it: Kafka's driver queues every topic of a pattern
    /// in one partition named after the pattern.
    pub fn source_pattern_of(&self, topic: &str) -> Option<&str> {
        if self.sources.iter().any(|(t, _)| &**t == topic) {
            return None;
        }
        self.patterns
            .iter()
            .find(|(p, _, _)| p.is_match(topic))
            .map(|(_, written, _)| written.as_str())
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
        // The record's timestamp stays the task's after it is processed,
        // as Kafka's record context does.
        self.state.record_timestamp.set(record.timestamp);
        self.state.process_source(source, record)
    }

    /// The source that reads `topic` (by name or by pattern), to process
    /// its records with [`process_from`](StreamTask::process_from), which
    /// does not look the topic up again for each record.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use streams_core::engine::StreamTask;
    /// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
    /// let mut task = StreamTask::new(&builder.build()?, &StreamsConfig::default(), 0)?;
    /// assert!(task.source_id("elsewhere").is_none());
    /// let source = task.source_id("in").expect("a source reads `in`");
    /// let topic: Arc<str> = Arc::from("in");
    /// task.process_from(source, &topic, 0, RawRecord::new(None, Some(b"hi".to_vec()), 7))?;
    /// assert_eq!(task.take_produced()[0].record.value.as_deref(), Some(&b"HI"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn source_id(&self, topic: &str) -> Option<SourceId> {
        self.source_for(topic).map(SourceId)
    }

    /// As [`process`](StreamTask::process), for a record of `topic`
    /// read by `source` (from [`source_id`](StreamTask::source_id) of this
    /// task for that topic): the topic is not looked up by name, and its
    /// name is shared, not copied.
    ///
    /// # Errors
    /// As [`process`](StreamTask::process); [`StreamsError::UnknownTopic`]
    /// if `source` is not a source of this task.
    #[inline]
    pub fn process_from(
        &mut self,
        source: SourceId,
        topic: &Arc<str>,
        offset: i64,
        record: RawRecord,
    ) -> Result<()> {
        if self.closed {
            return Err(StreamsError::Closed("task"));
        }
        let known = self.sources.iter().any(|&(_, n)| n == source.0)
            || self.patterns.iter().any(|&(_, _, n)| n == source.0);
        if !known {
            return Err(StreamsError::UnknownTopic {
                topic: topic.to_string(),
                known: self
                    .source_topics()
                    .into_iter()
                    .chain(self.source_patterns())
                    .map(str::to_owned)
                    .collect(),
            });
        }
        self.state.enter_record(Some(topic), topic, offset);
        // As in `process`: the record's timestamp stays the task's.
        self.state.record_timestamp.set(record.timestamp);
        self.state.process_source(source.0, record)
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
    #[inline]
    pub fn commit(&mut self) -> Result<()> {
        if self.closed {
            return Err(StreamsError::Closed("task"));
        }
        self.state.commit()
    }

    /// Fires the stream-time punctuations that are due. Returns whether any fired.
    ///
    /// # Errors
    /// The first error a punctuating processor returns.
    #[inline]
    pub fn maybe_punctuate_stream_time(&mut self) -> Result<bool> {
        let now = self.state.stream_time.get();
        if now < 0 || self.state.punctuations.is_empty() {
            return Ok(false);
        }
        self.state.punctuate(PunctuationType::StreamTime, now)
    }

    /// Sets the wall clock to `now` (it never goes back) and fires the
    /// wall-clock punctuations that are due. Returns whether any fired.
    ///
    /// # Errors
    /// The first error a punctuating processor returns.
    pub fn maybe_punctuate_wall_clock(&mut self, now: i64) -> Result<bool> {
        if now > self.state.wall_clock.get() {
            self.state.wall_clock.set(now);
        }
        self.state
            .punctuate(PunctuationType::WallClockTime, self.state.wall_clock.get())
    }

    /// Whether sinks or changelogs produced records not yet taken.
    #[inline]
    pub fn has_produced(&self) -> bool {
        !self.state.collector.borrow().is_empty()
    }

    /// Takes the records sinks produced since the last call, in order.
    pub fn take_produced(&mut self) -> Vec<ProducedRecord> {
        self.state.collector.borrow_mut().take_records()
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
    #[inline]
    pub fn take_produced_numbered(&mut self, into: &mut Vec<(usize, RawRecord)>) {
        self.state.collector.borrow_mut().take_numbered(into);
    }

    /// The name of the topic numbered `number` in
    /// [`take_produced_numbered`](StreamTask::take_produced_numbered); a
    /// topic keeps its number for the task's life.
    pub fn produced_topic(&self, number: usize) -> Option<Arc<str>> {
        self.state.collector.borrow().topic(number)
    }

    /// The current stream time; `-1` before the first record.
    #[inline]
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
        self.state.store(None, name, || {
            crate::error::short_type_name(std::any::type_name::<S>())
        })
    }

    /// The store `name`, whatever its type (to downcast with
    /// [`StateStore::as_any_mut`]).
    ///
    /// # Errors
    /// [`StreamsError::UnknownStore`] naming the stores that exist, or the
    /// store is borrowed already.
    pub fn store_dyn(&self, name: &str) -> Result<RefMut<'_, dyn StateStore>> {
        self.state.store_dyn(None, name)
    }

    /// Replays changelog records into the store `name` before processing
    /// (restoration, as Kafka Streams restores a task's stores); returns
    /// whether the store restores (custom stores may not).
    ///
    /// # Errors
    /// [`StreamsError::UnknownStore`], or a record the store cannot decode.
    pub fn restore_store(&self, name: &str, records: &[RawRecord]) -> Result<bool> {
        let i = self.state.store_index(name)?;
        self.state.stores[i].borrow_mut().restore_changelog(records)
    }

    /// The config the task was built with.
    pub fn config(&self) -> &StreamsConfig {
        &self.state.config
    }

    /// Whether any store of the task keeps files (RocksDB), Kafka's
    /// `hasPersistentStores`: the driver then cleans the state directory
    /// at close.
    pub fn has_persistent_stores(&self) -> bool {
        self.state
            .stores
            .iter()
            .any(|s| s.try_borrow().is_ok_and(|s| s.persistent()))
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
        self.state.metrics()
    }

    /// Where [`TaskMetrics::dropped_records`] came from: the nodes that
    /// dropped records, by name, with how many each (a source for
    /// undecodable records, a processor for failed user code or a late
    /// window record, a sink for unserializable records). Nodes that
    /// dropped nothing are left out, so the counts add up to
    /// `dropped_records`.
    pub fn dropped_records_by_node(&self) -> std::collections::BTreeMap<String, u64> {
        self.state.dropped_records_by_node()
    }

    /// The `application.id` this task runs with.
    pub fn application_id(&self) -> &str {
        &self.state.application_id
    }

    /// Closes every processor, in the order they were added, and stops
    /// all punctuation. Every processor is closed even if one fails; the
    /// first error is returned. Closing twice does nothing.
    ///
    /// # Errors
    /// The first error a processor or store returned from its `close`.
    pub fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        self.state.punctuations.clear();
        let mut first = None;
        for cell in &self.state.nodes {
            if let Err(e) = cell.borrow_mut().close()
                && first.is_none()
            {
                first = Some(e);
            }
        }
        let owned = if self.shares_globals {
            &self.state.stores[..self.state.global_stores_from]
        } else {
            &self.state.stores[..]
        };
        for cell in owned {
            if let Err(e) = cell.borrow_mut().close()
                && first.is_none()
            {
                first = Some(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
