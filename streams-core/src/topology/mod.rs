//! The topology: a graph of sources, processors and sinks, and the
//! low-level Processor API that builds it.
//!
//! [`Topology`] is Kafka's `Topology`: nodes are added by name, each naming
//! its parents; sources read topics (by name or by pattern), sinks write
//! topics (fixed, or chosen per record). Types are checked as nodes are
//! connected: a child must read what its parents forward. The DSL
//! ([`StreamsBuilder`](crate::StreamsBuilder)) builds a `Topology` too.
//!
//! ```
//! use streams_core::{Topics, Topology};
//!
//! let mut topology = Topology::new();
//! topology
//!     .add_source::<String, String>("orders", Topics::pattern("orders-.*"))?
//!     .add_sink::<String, String>("copy", "all-orders", &["orders"])?;
//! // A child whose types differ from its parent's is refused at once:
//! let err = topology.add_sink::<String, i64>("bad", "numbers", &["orders"]).unwrap_err();
//! assert!(err.to_string().contains("node `bad` reads records of type (alloc::string::String, i64)"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use crate::config::{StreamsConfig, resolve_serde};
use crate::error::{RecordPart, Result, TopologyError};
use crate::processor::Processor;
use crate::processor::StreamPartitioner;
use crate::processor::node::{ErasedNode, ProcessorNode};
use crate::record::Record;
use crate::serde::{Serde, SerdeRef};
use crate::state::StoreBuilder;

mod description;
mod global;
mod nodes;
mod null_keys;
mod rewrite;
mod topics_info;

pub(crate) use global::GlobalStoreParts;
pub(crate) use nodes::GlobalSourceNode;
pub(crate) use nodes::SinkPartitioning;
use nodes::{ResolvedSinkTopic, SinkNode, SourceNode};

pub use description::{
    Destination, Dot, GlobalStore, Mermaid, Node, NodeType, ParseError, Subtopology,
    TopologyDescription,
};
pub use topics_info::TopicsInfo;

/// The topics a source reads: names, or a regex pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topics {
    /// These topics, by name.
    Names(Vec<String>),
    /// Every topic whose whole name matches this regex.
    Pattern(String),
}

impl Topics {
    /// Every topic whose whole name matches `regex`, as Kafka's
    /// `Pattern.compile(regex)` source.
    pub fn pattern(regex: impl Into<String>) -> Self {
        Topics::Pattern(regex.into())
    }
}

impl From<&str> for Topics {
    fn from(t: &str) -> Self {
        Topics::Names(vec![t.to_owned()])
    }
}
impl From<String> for Topics {
    fn from(t: String) -> Self {
        Topics::Names(vec![t])
    }
}
impl From<&[&str]> for Topics {
    fn from(t: &[&str]) -> Self {
        Topics::Names(t.iter().map(|s| (*s).to_owned()).collect())
    }
}
impl<const N: usize> From<[&str; N]> for Topics {
    fn from(t: [&str; N]) -> Self {
        Topics::Names(t.iter().map(|s| (*s).to_owned()).collect())
    }
}
impl From<Vec<&str>> for Topics {
    fn from(t: Vec<&str>) -> Self {
        Topics::Names(t.into_iter().map(str::to_owned).collect())
    }
}
impl From<Vec<String>> for Topics {
    fn from(t: Vec<String>) -> Self {
        Topics::Names(t)
    }
}

/// A topic name as a node knows it: internal topics (repartition,
/// changelog) get the `application.id` prefix when the topology runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicName {
    /// The name without prefix.
    pub name: String,
    /// Whether it is an internal topic.
    pub internal: bool,
}

impl TopicName {
    pub(crate) fn external(name: impl Into<String>) -> Self {
        TopicName {
            name: name.into(),
            internal: false,
        }
    }

    pub(crate) fn internal(name: impl Into<String>) -> Self {
        TopicName {
            name: name.into(),
            internal: true,
        }
    }

    /// The name the topic has when the application runs.
    pub fn full_name(&self, application_id: &str) -> String {
        if self.internal {
            [application_id, "-", &self.name].concat()
        } else {
            self.name.clone()
        }
    }
}

impl fmt::Display for TopicName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// What kind of node, with its topics.
#[derive(Debug, Clone)]
pub(crate) enum NodeKind {
    Source {
        topics: Vec<TopicName>,
        /// The compiled, anchored pattern and the pattern as written.
        pattern: Option<(regex_lite::Regex, String)>,
    },
    Processor,
    #[allow(
        dead_code,
        reason = "the extractor is shown by the topology description, still to come"
    )]
    Sink {
        /// `None` when the topic is chosen per record.
        topic: Option<TopicName>,
        /// How the per-record extractor shows in descriptions.
        extractor: Option<String>,
    },
}

/// The key and value types of records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TypeSig {
    key: TypeId,
    value: TypeId,
    key_name: &'static str,
    value_name: &'static str,
}

impl TypeSig {
    pub(crate) fn of<K: 'static, V: 'static>() -> Self {
        TypeSig {
            key: TypeId::of::<K>(),
            value: TypeId::of::<V>(),
            key_name: std::any::type_name::<K>(),
            value_name: std::any::type_name::<V>(),
        }
    }

    pub(crate) fn same(&self, other: &TypeSig) -> bool {
        self.key == other.key && self.value == other.value
    }

    /// Whether both have the same key type.
    pub(crate) fn same_key(&self, other: &TypeSig) -> bool {
        self.key == other.key
    }

    /// Whether both have the same value type.
    pub(crate) fn same_value(&self, other: &TypeSig) -> bool {
        self.value == other.value
    }
}

impl fmt::Display for TypeSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.key_name, self.value_name)
    }
}

/// Chooses a sink's topic per record.
pub(crate) type TopicExtractor<K, V> = Rc<dyn Fn(&Record<K, V>) -> String>;

/// Chooses the topic of each record a sink writes, Kafka's
/// `TopicNameExtractor`. Closures `Fn(&Record<K, V>) -> String` are
/// extractors; implement it on a type of your own to give the extractor
/// the name that `describe()` shows (Kafka prints the extractor's
/// `toString()`).
///
/// ```
/// use streams_core::topology::TopicNameExtractor;
/// use streams_core::Record;
///
/// struct ByFirstChar;
/// impl TopicNameExtractor<String, String> for ByFirstChar {
///     fn extract(&self, record: &Record<String, String>) -> String {
///         let first = record.value.as_deref().and_then(|v| v.chars().next()).unwrap_or('_');
///         format!("out-{first}")
///     }
///     fn name(&self) -> String {
///         "FirstCharTopicExtractor".to_owned()
///     }
/// }
/// let r = Record::new(None, Some("apple".to_string()), 0);
/// assert_eq!(ByFirstChar.extract(&r), "out-a");
/// ```
pub trait TopicNameExtractor<K, V>: 'static {
    /// The topic for this record.
    fn extract(&self, record: &Record<K, V>) -> String;

    /// How `describe()` shows the extractor; the type's name by default.
    fn name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

impl<K, V, F: Fn(&Record<K, V>) -> String + 'static> TopicNameExtractor<K, V> for F {
    fn extract(&self, record: &Record<K, V>) -> String {
        self(record)
    }
}

/// A topic extractor and the name `describe()` shows.
pub(crate) fn extractor_parts<K: 'static, V: 'static>(
    extractor: impl TopicNameExtractor<K, V>,
) -> (TopicExtractor<K, V>, String) {
    let shown = extractor.name();
    (Rc::new(move |r: &Record<K, V>| extractor.extract(r)), shown)
}

pub(crate) type NodeFactory = Rc<dyn Fn(&StreamsConfig, &str) -> Result<Box<dyn ErasedNode>>>;

/// One node of a topology.
#[derive(Clone)]
#[allow(
    dead_code,
    reason = "parents, stores and input are read by the topology description, still to come"
)]
pub(crate) struct NodeDef {
    pub(crate) name: String,
    pub(crate) kind: NodeKind,
    pub(crate) parents: Vec<usize>,
    pub(crate) children: Vec<usize>,
    pub(crate) stores: Vec<String>,
    /// What the node reads (`None` for sources).
    pub(crate) input: Option<TypeSig>,
    /// What the node forwards (`None` for sinks).
    pub(crate) output: Option<TypeSig>,
    pub(crate) factory: NodeFactory,
}

/// A graph of sources, processors and sinks. See the [module docs](self).
///
/// Cloning is cheap and gives an independent copy of the graph: the nodes
/// are shared until one of the copies changes one of them; processor
/// suppliers are shared, and every run calls them anew. A test suite can
/// build its topology once and give each test's driver a clone:
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_core::serde::StringSerde;
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
/// let topology = builder.build()?;
/// for word in ["a", "b"] {
///     let driver = TopologyTestDriver::new(topology.clone())?;
///     let input = driver.create_input_topic("in", StringSerde, StringSerde);
///     let output = driver.create_output_topic("out", StringSerde, StringSerde);
///     input.pipe_value(word);
///     assert_eq!(output.read_value(), Some(word.to_uppercase()));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct Topology {
    /// The nodes, each shared between clones until one of them changes it
    /// (`Rc::make_mut`): [`StreamsBuilder::build`](crate::StreamsBuilder::build)
    /// hands out a copy of the builder's topology per call.
    nodes: Vec<Rc<NodeDef>>,
    /// Node name -> index in `nodes`; foldhash rather than SipHash (a test
    /// suite builds a topology per test, and names come from the code),
    /// shared between clones as the nodes are.
    index: Rc<HashMap<String, usize, foldhash::fast::FixedState>>,
    stores: Vec<Rc<dyn StoreBuilder>>,
    /// Global stores, shown by [`Topology::describe`] and run by the
    /// engine.
    pub(crate) global_stores: Vec<description::GlobalStoreDef>,
    /// How the engine runs each global store, at the same index as
    /// `global_stores` (see `global.rs`).
    global_runtimes: Vec<global::GlobalRuntime>,
    /// The grace period of each windowed aggregation, by the name of its
    /// store: where `suppress(until_window_closes(..))` finds when windows
    /// close (see `dsl/grace_search.rs`).
    window_grace: HashMap<String, i64>,
    /// The partition count a repartition topic was given
    /// (`Repartitioned::with_number_of_partitions`), by its name without
    /// the application id.
    repartition_partitions: HashMap<String, i32>,
    /// Kafka's `copartitionSourceGroups`: for each join the DSL built, the
    /// nodes it joins, whose upstream sources must be co-partitioned (see
    /// [`Topology::copartition`]).
    copartition_node_groups: Vec<Vec<String>>,
    /// Kafka's source stores: a store whose changelog is the topic its
    /// table reads (`reuse.ktable.source.topics`), with that topic; the
    /// store itself logs nothing.
    source_changelogs: Vec<(String, String)>,
    /// The DSL's repartition filters, each with its two forms, and the
    /// joins that keep records without a key (see `null_keys.rs`).
    null_keys: null_keys::NullKeyFilters,
}

/// The factory of a processor node running what `supplier` makes.
pub(crate) fn processor_factory<KIn, VIn, KOut, VOut, P, F>(supplier: F) -> NodeFactory
where
    KIn: 'static,
    VIn: 'static,
    KOut: 'static,
    VOut: 'static,
    P: Processor<KIn, VIn, KOut, VOut>,
    F: Fn() -> P + 'static,
{
    Rc::new(move |_config: &StreamsConfig, node: &str| {
        Ok(Box::new(ProcessorNode::<P, KIn, VIn, KOut, VOut>::new(
            supplier(),
            node,
        )) as Box<dyn ErasedNode>)
    })
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("nodes", &self.node_names())
            .field("stores", &self.store_names())
            .finish()
    }
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Self {
        Topology::default()
    }

    pub(crate) fn nodes(&self) -> &[Rc<NodeDef>] {
        &self.nodes
    }

    /// The names of all nodes, in the order they were added.
    pub fn node_names(&self) -> Vec<&str> {
        self.nodes.iter().map(|n| n.name.as_str()).collect()
    }

    /// Records that `store` keeps a windowed aggregation's windows, closed
    /// `grace_ms` after they end.
    /// Fixes the partition count of repartition topic `topic` (its name
    /// without the application id).
    pub(crate) fn set_repartition_partitions(&mut self, topic: &str, partitions: i32) {
        self.repartition_partitions
            .insert(topic.to_owned(), partitions);
    }

    /// The partition count repartition topic `topic` was given, if any.
    /// Registers a co-partition group, Kafka's
    /// `InternalTopologyBuilder.copartitionSources`: the source topics
    /// upstream of `nodes` (in their sub-topology) must have the same
    /// number of partitions, because a join reads them together. The DSL's
    /// joins call it with the two nodes they join; the Processor API has
    /// no such call, as in Kafka.
    pub(crate) fn copartition(&mut self, nodes: &[&str]) {
        self.copartition_node_groups
            .push(nodes.iter().map(|n| (*n).to_owned()).collect());
    }

    /// The registered co-partition groups, as node names.
    pub(crate) fn copartition_node_groups(&self) -> &[Vec<String>] {
        &self.copartition_node_groups
    }

    /// Whether any repartition topic has an enforced partition count.
    pub(crate) fn has_repartition_partitions(&self) -> bool {
        !self.repartition_partitions.is_empty()
    }

    pub(crate) fn repartition_partitions(&self, topic: &str) -> Option<i32> {
        self.repartition_partitions.get(topic).copied()
    }

    pub(crate) fn set_window_grace(&mut self, store: &str, grace_ms: i64) {
        self.window_grace.insert(store.to_owned(), grace_ms);
    }

    /// The grace period of the windowed aggregation whose store is `store`.
    pub(crate) fn window_grace(&self, store: &str) -> Option<i64> {
        self.window_grace.get(store).copied()
    }

    pub(crate) fn store_builders(&self) -> &[Rc<dyn StoreBuilder>] {
        &self.stores
    }

    /// The names of all stores, in the order they were added.
    pub fn store_names(&self) -> Vec<&str> {
        self.stores.iter().map(|s| s.name()).collect()
    }

    /// The stores connected to the node `name`, in the order they were
    /// connected; `None` if there is no such node.
    pub fn node_store_names(&self, name: &str) -> Option<&[String]> {
        self.index
            .get(name)
            .map(|&i| self.nodes[i].stores.as_slice())
    }

    /// Adds a state store and connects it to `processors` (which may be
    /// empty: connect later with
    /// [`connect_processor_and_state_stores`](Topology::connect_processor_and_state_stores)).
    ///
    /// # Errors
    /// A store of that name exists, or a name in `processors` is not a processor.
    pub fn add_state_store(
        &mut self,
        builder: impl StoreBuilder + 'static,
        processors: &[&str],
    ) -> Result<&mut Self> {
        let name = builder.name().to_owned();
        if self.stores.iter().any(|s| s.name() == name) || self.is_global_store_name(&name) {
            return Err(TopologyError::DuplicateStore { store: name }.into());
        }
        for p in processors {
            self.processor_index(p)?;
        }
        self.stores.push(Rc::new(builder));
        for p in processors {
            self.connect_processor_and_state_stores(p, &[&name])?;
        }
        Ok(self)
    }

    /// The index of the node named `name`.
    pub(crate) fn node_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn processor_index(&self, name: &str) -> Result<usize, TopologyError> {
        match self.index.get(name) {
            Some(&i) if matches!(self.nodes[i].kind, NodeKind::Processor) => Ok(i),
            _ => Err(TopologyError::NotAProcessor {
                node: name.to_owned(),
            }),
        }
    }

    /// Connects existing stores to an existing processor.
    ///
    /// # Errors
    /// The processor or a store does not exist.
    pub fn connect_processor_and_state_stores(
        &mut self,
        processor: &str,
        stores: &[&str],
    ) -> Result<&mut Self> {
        let i = self.processor_index(processor)?;
        for &store in stores {
            if !self.stores.iter().any(|s| s.name() == store) {
                return Err(TopologyError::UnknownStore {
                    node: processor.to_owned(),
                    store: store.to_owned(),
                }
                .into());
            }
            if !self.nodes[i].stores.iter().any(|s| s == store) {
                Rc::make_mut(&mut self.nodes[i])
                    .stores
                    .push(store.to_owned());
            }
        }
        Ok(self)
    }

    /// Whether a node has this name.
    pub fn contains_node(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The topics read by sources, by name (internal ones without the
    /// `application.id` prefix), in the order sources were added.
    pub fn source_topics(&self) -> Vec<&TopicName> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Source { topics, .. } => Some(topics.iter()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// The fixed topics written by sinks, in the order sinks were added.
    pub fn sink_topics(&self) -> Vec<&TopicName> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Sink { topic: Some(t), .. } => Some(t),
                _ => None,
            })
            .collect()
    }

    /// Checks that the topology can run: it has at least one source or
    /// global store. (Everything else is checked as nodes are added.)
    ///
    /// # Errors
    /// [`TopologyError::NoSource`].
    pub fn validate(&self) -> Result<()> {
        if self.global_stores.is_empty()
            && !self
                .nodes
                .iter()
                .any(|n| matches!(n.kind, NodeKind::Source { .. }))
        {
            return Err(TopologyError::NoSource.into());
        }
        Ok(())
    }

    fn check_new_name(&self, name: &str) -> Result<(), TopologyError> {
        if name.is_empty() {
            return Err(TopologyError::EmptyName);
        }
        if self.index.contains_key(name) || self.is_global_node_name(name) {
            return Err(TopologyError::DuplicateName {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// Adds a node after checking its name, parents and types.
    pub(crate) fn add_node(
        &mut self,
        name: &str,
        kind: NodeKind,
        parents: &[&str],
        input: Option<TypeSig>,
        output: Option<TypeSig>,
        factory: NodeFactory,
    ) -> Result<(), TopologyError> {
        self.check_new_name(name)?;
        let is_source = matches!(kind, NodeKind::Source { .. });
        if !is_source && parents.is_empty() {
            return Err(TopologyError::NoParent {
                node: name.to_owned(),
            });
        }
        let mut parent_ids = Vec::with_capacity(parents.len());
        for &p in parents {
            let &id = self
                .index
                .get(p)
                .ok_or_else(|| TopologyError::UnknownParent {
                    node: name.to_owned(),
                    parent: p.to_owned(),
                })?;
            let parent = &self.nodes[id];
            let Some(parent_output) = parent.output else {
                return Err(TopologyError::SinkAsParent {
                    node: name.to_owned(),
                    parent: p.to_owned(),
                });
            };
            if let Some(input) = &input
                && !parent_output.same(input)
            {
                return Err(TopologyError::TypeMismatch {
                    parent: p.to_owned(),
                    parent_output: parent_output.to_string(),
                    child: name.to_owned(),
                    child_input: input.to_string(),
                });
            }
            if !parent_ids.contains(&id) {
                parent_ids.push(id);
            }
        }
        if let NodeKind::Source { topics, .. } = &kind {
            for t in topics {
                if t.name.is_empty() {
                    return Err(TopologyError::EmptyTopic {
                        node: name.to_owned(),
                    });
                }
                if let Some(existing) = self.nodes.iter().find(|n| match &n.kind {
                    NodeKind::Source { topics, .. } => topics.contains(t),
                    _ => false,
                }) {
                    return Err(TopologyError::TopicAlreadyRead {
                        topic: t.name.clone(),
                        existing: existing.name.clone(),
                    });
                }
                if let Some(existing) = self.global_source_of(&t.name) {
                    return Err(TopologyError::TopicAlreadyRead {
                        topic: t.name.clone(),
                        existing: existing.to_owned(),
                    });
                }
            }
        }
        let id = self.nodes.len();
        for &p in &parent_ids {
            Rc::make_mut(&mut self.nodes[p]).children.push(id);
        }
        self.nodes.push(Rc::new(NodeDef {
            name: name.to_owned(),
            kind,
            parents: parent_ids,
            children: Vec::new(),
            stores: Vec::new(),
            input,
            output,
            factory,
        }));
        Rc::make_mut(&mut self.index).insert(name.to_owned(), id);
        Ok(())
    }

    pub(crate) fn source_kind(name: &str, topics: Topics) -> Result<NodeKind, TopologyError> {
        match topics {
            Topics::Names(names) => {
                if names.is_empty() {
                    return Err(TopologyError::NoTopic {
                        kind: "source",
                        node: name.to_owned(),
                    });
                }
                Ok(NodeKind::Source {
                    topics: names.into_iter().map(TopicName::external).collect(),
                    pattern: None,
                })
            }
            Topics::Pattern(p) => {
                // Kafka matches the whole topic name.
                let anchored = format!("^(?:{p})$");
                match regex_lite::Regex::new(&anchored) {
                    Ok(_) if p.is_empty() => Err(TopologyError::InvalidPattern {
                        node: name.to_owned(),
                        pattern: p,
                        reason: "the pattern is empty".to_owned(),
                    }),
                    Ok(re) => Ok(NodeKind::Source {
                        topics: Vec::new(),
                        pattern: Some((re, p)),
                    }),
                    Err(e) => Err(TopologyError::InvalidPattern {
                        node: name.to_owned(),
                        pattern: p,
                        reason: e.to_string(),
                    }),
                }
            }
        }
    }

    pub(crate) fn add_typed_source<K: Clone + 'static, V: Clone + 'static>(
        &mut self,
        name: &str,
        kind: NodeKind,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> Result<(), TopologyError> {
        let factory: NodeFactory = Rc::new(move |config: &StreamsConfig, node: &str| {
            Ok(Box::new(SourceNode::<K, V> {
                key: resolve_serde(&key_serde, config, node, RecordPart::Key)?,
                value: resolve_serde(&value_serde, config, node, RecordPart::Value)?,
            }) as Box<dyn ErasedNode>)
        });
        self.add_node(name, kind, &[], None, Some(TypeSig::of::<K, V>()), factory)
    }

    pub(crate) fn add_typed_sink<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        topic: SinkTopic<K, V>,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
        partitioning: impl Into<SinkPartitioning<K, V>>,
        parents: &[&str],
    ) -> Result<(), TopologyError> {
        let partitioning = partitioning.into();
        let kind = match &topic {
            SinkTopic::Fixed(t) => {
                if t.name.is_empty() {
                    return Err(TopologyError::NoTopic {
                        kind: "sink",
                        node: name.to_owned(),
                    });
                }
                NodeKind::Sink {
                    topic: Some(t.clone()),
                    extractor: None,
                }
            }
            SinkTopic::Extractor(_, shown) => NodeKind::Sink {
                topic: None,
                extractor: Some(shown.clone()),
            },
        };
        let factory: NodeFactory = Rc::new(move |config: &StreamsConfig, node: &str| {
            let target = topic.resolve(config.application_id());
            Ok(Box::new(SinkNode::<K, V> {
                target,
                key: resolve_serde(&key_serde, config, node, RecordPart::Key)?,
                value: resolve_serde(&value_serde, config, node, RecordPart::Value)?,
                partitioning: partitioning.clone(),
            }) as Box<dyn ErasedNode>)
        });
        self.add_node(
            name,
            kind,
            parents,
            Some(TypeSig::of::<K, V>()),
            None,
            factory,
        )
    }

    pub(crate) fn add_typed_processor<KIn, VIn, KOut, VOut, P, F>(
        &mut self,
        name: &str,
        supplier: F,
        parents: &[&str],
    ) -> Result<(), TopologyError>
    where
        KIn: 'static,
        VIn: 'static,
        KOut: 'static,
        VOut: 'static,
        P: Processor<KIn, VIn, KOut, VOut>,
        F: Fn() -> P + 'static,
    {
        let factory = processor_factory::<KIn, VIn, KOut, VOut, P, F>(supplier);
        self.add_node(
            name,
            NodeKind::Processor,
            parents,
            Some(TypeSig::of::<KIn, VIn>()),
            Some(TypeSig::of::<KOut, VOut>()),
            factory,
        )
    }

    /// Adds a source that reads `topics` (names or a pattern) with the
    /// default serdes for `K` and `V` (the config's, else the built-in
    /// ones for `String`, `Vec<u8>`, `i32`, `i64`, `f64`, `()`).
    ///
    /// # Errors
    /// A name already used, no topic, a topic another source reads, or a
    /// pattern that does not compile.
    pub fn add_source<K: Clone + 'static, V: Clone + 'static>(
        &mut self,
        name: &str,
        topics: impl Into<Topics>,
    ) -> Result<&mut Self> {
        let kind = Self::source_kind(name, topics.into())?;
        self.add_typed_source::<K, V>(name, kind, None, None)?;
        Ok(self)
    }

    /// Adds a source that reads `topics` with these serdes.
    ///
    /// # Errors
    /// As [`Topology::add_source`].
    pub fn add_source_with_serdes<K: Clone + 'static, V: Clone + 'static>(
        &mut self,
        name: &str,
        topics: impl Into<Topics>,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Result<&mut Self> {
        let kind = Self::source_kind(name, topics.into())?;
        self.add_typed_source::<K, V>(
            name,
            kind,
            Some(std::sync::Arc::new(key_serde)),
            Some(std::sync::Arc::new(value_serde)),
        )?;
        Ok(self)
    }

    /// Adds a processor made by `supplier` (called once per run) under
    /// `parents`, which must forward `(KIn, VIn)`.
    ///
    /// # Errors
    /// A name already used, no parent, an unknown parent, a sink as parent,
    /// or parents forwarding other types.
    pub fn add_processor<KIn, VIn, KOut, VOut, P>(
        &mut self,
        name: &str,
        supplier: impl Fn() -> P + 'static,
        parents: &[&str],
    ) -> Result<&mut Self>
    where
        KIn: 'static,
        VIn: 'static,
        KOut: 'static,
        VOut: 'static,
        P: Processor<KIn, VIn, KOut, VOut>,
    {
        self.add_typed_processor::<KIn, VIn, KOut, VOut, P, _>(name, supplier, parents)?;
        Ok(self)
    }

    /// Adds a sink writing to `topic` with the default serdes for `K` and `V`.
    ///
    /// # Errors
    /// As [`Topology::add_processor`], or an empty topic.
    pub fn add_sink<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        topic: &str,
        parents: &[&str],
    ) -> Result<&mut Self> {
        self.add_typed_sink::<K, V>(
            name,
            SinkTopic::Fixed(TopicName::external(topic)),
            None,
            None,
            None,
            parents,
        )?;
        Ok(self)
    }

    /// Adds a sink writing to `topic` with these serdes.
    ///
    /// # Errors
    /// As [`Topology::add_sink`].
    pub fn add_sink_with_serdes<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
        parents: &[&str],
    ) -> Result<&mut Self> {
        self.add_typed_sink::<K, V>(
            name,
            SinkTopic::Fixed(TopicName::external(topic)),
            Some(std::sync::Arc::new(key_serde)),
            Some(std::sync::Arc::new(value_serde)),
            None,
            parents,
        )?;
        Ok(self)
    }

    /// Adds a sink writing to `topic` with the default serdes, each record
    /// to the partitions `partitioner` chooses, as Kafka's
    /// `addSink(name, topic, partitioner, parentNames)`.
    ///
    /// ```
    /// use streams_core::Topology;
    /// use streams_core::engine::StreamTask;
    /// use streams_core::record::RawRecord;
    /// use streams_core::StreamsConfig;
    ///
    /// let mut topology = Topology::new();
    /// // Every record to every partition: a broadcast (KIP-837).
    /// struct Broadcast;
    /// impl streams_core::processor::StreamPartitioner<String, String> for Broadcast {
    ///     fn partitions(&self, _: &str, _: Option<&String>, _: Option<&String>, n: i32) -> Option<std::collections::BTreeSet<i32>> {
    ///         Some((0..n).collect())
    ///     }
    /// }
    /// topology
    ///     .add_source::<String, String>("source", "in")?
    ///     .add_sink_with_partitioner::<String, String>("sink", "out", Broadcast, &["source"])?;
    /// let mut task = StreamTask::for_subtopology(&topology, &StreamsConfig::new("app"), 0, 0, 0)?;
    /// task.set_partition_count_lookup(Box::new(|_| Ok(Some(3))));
    /// task.process("in", 0, RawRecord::new(Some(b"k".to_vec()), Some(b"v".to_vec()), 5))?;
    /// let partitions: Vec<_> = task.take_produced().iter().map(|r| r.partition).collect();
    /// assert_eq!(partitions, [Some(0), Some(1), Some(2)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Topology::add_sink`].
    pub fn add_sink_with_partitioner<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        topic: &str,
        partitioner: impl StreamPartitioner<K, V>,
        parents: &[&str],
    ) -> Result<&mut Self> {
        self.add_typed_sink::<K, V>(
            name,
            SinkTopic::Fixed(TopicName::external(topic)),
            None,
            None,
            SinkPartitioning::Custom(Rc::new(partitioner)),
            parents,
        )?;
        Ok(self)
    }

    /// As [`Topology::add_sink_with_partitioner`], with these serdes.
    ///
    /// # Errors
    /// As [`Topology::add_sink`].
    pub fn add_sink_with_serdes_and_partitioner<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
        partitioner: impl StreamPartitioner<K, V>,
        parents: &[&str],
    ) -> Result<&mut Self> {
        self.add_typed_sink::<K, V>(
            name,
            SinkTopic::Fixed(TopicName::external(topic)),
            Some(std::sync::Arc::new(key_serde)),
            Some(std::sync::Arc::new(value_serde)),
            SinkPartitioning::Custom(Rc::new(partitioner)),
            parents,
        )?;
        Ok(self)
    }

    /// Adds a sink that chooses its topic per record, Kafka's
    /// `TopicNameExtractor`, with the default serdes.
    ///
    /// # Errors
    /// As [`Topology::add_processor`].
    pub fn add_sink_with_extractor<K: 'static, V: 'static>(
        &mut self,
        name: &str,
        extractor: impl TopicNameExtractor<K, V>,
        parents: &[&str],
    ) -> Result<&mut Self> {
        let (extractor, shown) = extractor_parts(extractor);
        self.add_typed_sink::<K, V>(
            name,
            SinkTopic::Extractor(extractor, shown),
            None,
            None,
            None,
            parents,
        )?;
        Ok(self)
    }
}

/// Where a sink writes, as the topology defines it: a topic name as given
/// (an internal topic's still without the application id), or an extractor
/// with the text `describe()` shows for it. Each task resolves it into a
/// [`ResolvedSinkTopic`] when it instantiates the sink.
pub(crate) enum SinkTopic<K, V> {
    Fixed(TopicName),
    Extractor(TopicExtractor<K, V>, String),
}

impl<K, V> SinkTopic<K, V> {
    /// Where a sink of an application with this id writes.
    fn resolve(&self, application_id: &str) -> ResolvedSinkTopic<K, V> {
        match self {
            SinkTopic::Fixed(t) => ResolvedSinkTopic::Fixed(t.full_name(application_id).into()),
            SinkTopic::Extractor(f, _) => ResolvedSinkTopic::Extractor(f.clone()),
        }
    }
}
