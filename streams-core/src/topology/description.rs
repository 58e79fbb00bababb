//! [`TopologyDescription`]: what [`Topology::describe`] returns, with
//! Kafka's text, a parser for it, and DOT and Mermaid renderings; the
//! guide is on [`TopologyDescription`].

mod build;
mod dot;
mod graph;
mod java;
mod mermaid;
mod parse;

use std::fmt;

pub use dot::Dot;
pub use mermaid::Mermaid;
pub use parse::ParseError;

use crate::topology::{Topics, Topology};

pub(crate) use build::node_groups;

/// A global store as the topology keeps it, for [`Topology::describe`]:
/// Kafka's `addGlobalStore` adds a source reading `topic` and a processor
/// updating `store`, which form their own sub-topology.
///
/// `Topology::add_global_store` and `StreamsBuilder::global_table` push
/// one of these on `Topology::global_stores`; the engine runs it through
/// the matching `GlobalRuntime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GlobalStoreDef {
    /// The source node's name.
    pub(crate) source: String,
    /// The topic it reads.
    pub(crate) topic: String,
    /// The processor node's name.
    pub(crate) processor: String,
    /// The store the processor updates.
    pub(crate) store: String,
    /// How many nodes the topology had when the global store was added:
    /// its place among the nodes, which numbers the sub-topologies.
    pub(crate) node_position: usize,
}

impl Topology {
    /// Describes the topology as Kafka's `Topology.describe()` does: its
    /// sub-topologies and global stores, each node with its topics or
    /// stores, successors and predecessors. Print it for Kafka's text.
    ///
    /// Internal topics (repartition) show without the `application.id`
    /// prefix, as in Kafka.
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").repartition().to("out");
    /// let description = builder.build()?.describe();
    /// assert_eq!(description.subtopologies().len(), 2);
    /// assert!(description.to_string().contains("(topics: [KSTREAM-REPARTITION-0000000001-repartition])"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn describe(&self) -> TopologyDescription {
        build::describe(self)
    }
}

/// The structure of a topology, Kafka's `TopologyDescription`: its
/// [sub-topologies](Subtopology) and [global stores](GlobalStore), ordered
/// by id, made by [`Topology::describe`].
///
/// Its [`Display`](fmt::Display) text is byte for byte Kafka's
/// `TopologyDescription.toString()`, ordering quirks included (nodes by
/// sub-tree size then name, `-->`/`<--` lists in the order Kafka's
/// `TreeSet`s end up in, stores and topics in Java `HashSet` order), so a
/// Rust topology and its Java twin compare as text, and tools written for
/// Kafka's output read ours. [`TopologyDescription::parse`] reads that
/// text back, from Kafka or from us; [`TopologyDescription::dot`] and
/// [`TopologyDescription::mermaid`] draw it.
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_core::topology::TopologyDescription;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").filter(|_, v| !v.is_empty()).to("out");
/// let description = builder.build()?.describe();
/// let text = description.to_string();
/// assert_eq!(
///     text,
///     "Topologies:\n   Sub-topology: 0\n\
///     \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n\
///     \x20     --> KSTREAM-FILTER-0000000001\n\
///     \x20   Processor: KSTREAM-FILTER-0000000001 (stores: [])\n\
///     \x20     --> KSTREAM-SINK-0000000002\n\
///     \x20     <-- KSTREAM-SOURCE-0000000000\n\
///     \x20   Sink: KSTREAM-SINK-0000000002 (topic: out)\n\
///     \x20     <-- KSTREAM-FILTER-0000000001\n\n"
/// );
/// assert_eq!(TopologyDescription::parse(&text)?, description);
/// assert!(description.mermaid().to_string().starts_with("flowchart TB\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologyDescription {
    subtopologies: Vec<Subtopology>,
    global_stores: Vec<GlobalStore>,
}

/// A connected part of a topology, run by its own tasks, Kafka's
/// `TopologyDescription.Subtopology`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtopology {
    id: usize,
    nodes: Vec<Node>,
}

/// A global store: a source reading one topic and a processor writing
/// every record to the store, Kafka's `TopologyDescription.GlobalStore`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalStore {
    id: usize,
    source: String,
    topic: String,
    processor: String,
    store: String,
}

/// A source, processor or sink, Kafka's `TopologyDescription.Node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    name: String,
    kind: NodeType,
    successors: Vec<String>,
    predecessors: Vec<String>,
}

/// What a [`Node`] is, with what it reads, keeps or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeType {
    /// A source, reading topics by name (in the order Kafka prints them)
    /// or by pattern (as written).
    Source {
        /// The topics it reads.
        topics: Topics,
    },
    /// A processor.
    Processor {
        /// The stores connected to it, in the order Kafka prints them.
        stores: Vec<String>,
    },
    /// A sink.
    Sink {
        /// Where it writes.
        destination: Destination,
    },
}

/// Where a sink writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// One topic, named (an internal topic without the `application.id` prefix).
    Topic(String),
    /// The topic a per-record extractor chooses; this is how the extractor
    /// shows (Kafka prints its `toString()`).
    Extractor(String),
}

impl TopologyDescription {
    /// The sub-topologies, by id.
    pub fn subtopologies(&self) -> &[Subtopology] {
        &self.subtopologies
    }

    /// The global stores, by id.
    pub fn global_stores(&self) -> &[GlobalStore] {
        &self.global_stores
    }

    /// The node named `name`, in any sub-topology (global stores' nodes
    /// are not [`Node`]s; see [`GlobalStore`]).
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.subtopologies.iter().find_map(|s| s.node(name))
    }

    /// Whether there is nothing to describe.
    pub fn is_empty(&self) -> bool {
        self.subtopologies.is_empty() && self.global_stores.is_empty()
    }

    /// Reads Kafka's `describe()` text back. `parse(&d.to_string()) == d`
    /// for every description `d`, and printing what Kafka's text parses to
    /// gives that text again.
    ///
    /// # Errors
    /// A [`ParseError`] naming the line and what was expected there: for
    /// malformed lines, unknown node kinds, names in `-->`/`<--` lists
    /// that are not nodes of the sub-topology or that do not list the node
    /// back, cycles, and names or ids used twice.
    ///
    /// ```
    /// use streams_core::topology::TopologyDescription;
    ///
    /// let err = TopologyDescription::parse("Topologies:\n   Sub-topology: 0\n    Spout: s (topics: [t])\n")
    ///     .unwrap_err();
    /// assert_eq!(err.to_string(), "line 3: unknown node kind `Spout`, expected `Source`, `Processor` or `Sink`");
    /// assert_eq!(err.line(), 3);
    /// ```
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        parse::parse(text)
    }

    /// The description as a Graphviz DOT graph (see [`Dot`]).
    pub fn dot(&self) -> Dot<'_> {
        Dot::new(self)
    }

    /// The description as a Mermaid flowchart (see [`Mermaid`]).
    pub fn mermaid(&self) -> Mermaid<'_> {
        Mermaid::new(self)
    }
}

impl Subtopology {
    /// Its id, the first part of its tasks' ids.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Its nodes, in Kafka's order: larger sub-tree first, then by name.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Its node named `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

impl GlobalStore {
    /// Its id, from the same counter as the sub-topologies'.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The source node's name.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The topic the source reads.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The processor node's name.
    pub fn processor(&self) -> &str {
        &self.processor
    }

    /// The store the processor fills.
    pub fn store(&self) -> &str {
        &self.store
    }
}

impl Node {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it is.
    pub fn kind(&self) -> &NodeType {
        &self.kind
    }

    /// The nodes it forwards to, in Kafka's order (none for a sink).
    pub fn successors(&self) -> &[String] {
        &self.successors
    }

    /// The nodes it reads from, in Kafka's order (none for a source).
    pub fn predecessors(&self) -> &[String] {
        &self.predecessors
    }

    /// The stores of a processor; empty for other nodes.
    pub fn stores(&self) -> &[String] {
        match &self.kind {
            NodeType::Processor { stores } => stores,
            _ => &[],
        }
    }
}

/// Java's `Set.toString()`: `[a, b]`.
fn write_set(f: &mut fmt::Formatter<'_>, items: &[String]) -> fmt::Result {
    write!(f, "[{}]", items.join(", "))
}

/// Kafka's `nodeNames`: `a, b`, or `none`.
fn write_names(f: &mut fmt::Formatter<'_>, names: &[String]) -> fmt::Result {
    if names.is_empty() {
        f.write_str("none")
    } else {
        f.write_str(&names.join(", "))
    }
}

/// A sub-topology or a global store, as printed.
#[derive(Debug, Clone, Copy)]
enum Block<'a> {
    Sub(&'a Subtopology),
    Global(&'a GlobalStore),
}

impl TopologyDescription {
    /// The blocks in Kafka's printing order: the two id-ordered sets
    /// merged, a sub-topology whenever its id is the one expected next,
    /// else a global store.
    fn blocks(&self) -> Vec<Block<'_>> {
        let mut out = Vec::with_capacity(self.subtopologies.len() + self.global_stores.len());
        let mut subs = self.subtopologies.iter().peekable();
        let mut globals = self.global_stores.iter().peekable();
        let mut expected = 0;
        while let (Some(&sub), Some(&global)) = (subs.peek(), globals.peek()) {
            if sub.id == expected {
                out.push(Block::Sub(sub));
                subs.next();
            } else {
                out.push(Block::Global(global));
                globals.next();
            }
            expected += 1;
        }
        out.extend(subs.map(Block::Sub));
        out.extend(globals.map(Block::Global));
        out
    }
}

/// Kafka's text, from `Topologies:` on.
impl fmt::Display for TopologyDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Topologies:\n ")?;
        for block in self.blocks() {
            match block {
                Block::Sub(sub) => write!(f, "  {sub}")?,
                Block::Global(global) => write!(f, "  {global}")?,
            }
        }
        Ok(())
    }
}

/// Kafka's text: `Sub-topology: N`, the nodes, and an empty line.
impl fmt::Display for Subtopology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Sub-topology: {}", self.id)?;
        for node in &self.nodes {
            writeln!(f, "    {node}")?;
        }
        writeln!(f)
    }
}

/// Kafka's text: `Sub-topology: N for global store (will not generate
/// tasks)` and its two nodes, with no empty line after.
impl fmt::Display for GlobalStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Sub-topology: {} for global store (will not generate tasks)",
            self.id
        )?;
        writeln!(
            f,
            "    Source: {} (topics: [{}])\n      --> {}",
            self.source, self.topic, self.processor
        )?;
        writeln!(
            f,
            "    Processor: {} (stores: [{}])\n      --> none\n      <-- {}",
            self.processor, self.store, self.source
        )
    }
}

/// Kafka's text for one node, without the leading indentation and the
/// final newline.
impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            NodeType::Source { topics } => {
                write!(f, "Source: {} (topics: ", self.name)?;
                match topics {
                    Topics::Names(names) => write_set(f, names)?,
                    Topics::Pattern(p) => f.write_str(p)?,
                }
                f.write_str(")\n      --> ")?;
                write_names(f, &self.successors)
            }
            NodeType::Processor { stores } => {
                write!(f, "Processor: {} (stores: ", self.name)?;
                write_set(f, stores)?;
                f.write_str(")\n      --> ")?;
                write_names(f, &self.successors)?;
                f.write_str("\n      <-- ")?;
                write_names(f, &self.predecessors)
            }
            NodeType::Sink { destination } => {
                match destination {
                    Destination::Topic(t) => write!(f, "Sink: {} (topic: {t})", self.name)?,
                    Destination::Extractor(e) => {
                        write!(f, "Sink: {} (extractor class: {e})", self.name)?;
                    }
                }
                f.write_str("\n      <-- ")?;
                write_names(f, &self.predecessors)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;
    use crate::processor::{Processor, ProcessorContext};

    struct Pass;
    impl Processor<String, String> for Pass {
        fn process(
            &mut self,
            ctx: &mut ProcessorContext<'_, String, String>,
            record: Record<String, String>,
        ) -> crate::Result<()> {
            ctx.forward(record)
        }
    }

    fn global(t: &mut Topology, n: &str) {
        let node_position = t.nodes.len();
        t.global_stores.push(GlobalStoreDef {
            source: format!("gsrc{n}"),
            topic: format!("gt{n}"),
            processor: format!("gproc{n}"),
            store: format!("gs{n}"),
            node_position,
        });
    }

    /// Kafka 4.4.0's text for the same `addGlobalStore` calls.
    #[test]
    fn global_stores_take_ids_in_node_order() -> crate::Result<()> {
        let mut t = Topology::new();
        global(&mut t, "");
        let text = "Topologies:\n   Sub-topology: 0 for global store (will not generate tasks)\n    \
            Source: gsrc (topics: [gt])\n      --> gproc\n    Processor: gproc (stores: [gs])\n      \
            --> none\n      <-- gsrc\n";
        assert_eq!(t.describe().to_string(), text);
        assert_eq!(TopologyDescription::parse(text), Ok(t.describe()));

        let mut t = Topology::new();
        t.add_source::<String, String>("a", "ta")?
            .add_processor("p", || Pass, &["a"])?
            .add_sink::<String, String>("s", "out", &["p"])?;
        global(&mut t, "");
        t.add_source::<String, String>("b", "tb")?
            .add_sink::<String, String>("s2", "out", &["b"])?;
        global(&mut t, "2");
        let text = "Topologies:\n   Sub-topology: 0\n    Source: a (topics: [ta])\n      --> p\n    \
            Processor: p (stores: [])\n      --> s\n      <-- a\n    Sink: s (topic: out)\n      <-- p\n\n  \
            Sub-topology: 1 for global store (will not generate tasks)\n    Source: gsrc (topics: [gt])\n      \
            --> gproc\n    Processor: gproc (stores: [gs])\n      --> none\n      <-- gsrc\n  \
            Sub-topology: 2\n    Source: b (topics: [tb])\n      --> s2\n    Sink: s2 (topic: out)\n      \
            <-- b\n\n  Sub-topology: 3 for global store (will not generate tasks)\n    \
            Source: gsrc2 (topics: [gt2])\n      --> gproc2\n    Processor: gproc2 (stores: [gs2])\n      \
            --> none\n      <-- gsrc2\n";
        assert_eq!(t.describe().to_string(), text);
        let parsed = TopologyDescription::parse(text).expect("the text parses back");
        assert_eq!(parsed, t.describe());
        assert_eq!(parsed.global_stores()[1].store(), "gs2");
        Ok(())
    }

    #[test]
    fn an_empty_topology_prints_the_header_only() {
        assert_eq!(Topology::new().describe().to_string(), "Topologies:\n ");
    }
}
