//! What a picture shows: the vertices (nodes, topics, stores), the links
//! between them and the boxes (one per sub-topology or global store),
//! built from a [`TopologyDescription`] alone.

use std::collections::HashMap;

use streams_core::Topics;
use streams_core::topology::{Destination, NodeType, TopologyDescription};

/// What a vertex is; each kind has a shape of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A source node.
    Source,
    /// A processor node.
    Processor,
    /// A sink node.
    Sink,
    /// A topic, by name.
    Topic,
    /// The topics a source's pattern matches.
    Pattern,
    /// The topics a sink's extractor chooses.
    Extractor,
    /// A state store.
    Store,
}

impl Kind {
    /// The word used for it in classes, legends and lists.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Source => "source",
            Kind::Processor => "processor",
            Kind::Sink => "sink",
            Kind::Topic => "topic",
            Kind::Pattern => "pattern",
            Kind::Extractor => "extractor",
            Kind::Store => "store",
        }
    }

    /// A node of the topology (drawn inside a box), not a topic or store.
    pub(crate) fn is_node(self) -> bool {
        matches!(self, Kind::Source | Kind::Processor | Kind::Sink)
    }

    /// A topic, a pattern of topics or an extractor's topics.
    pub(crate) fn is_topic(self) -> bool {
        matches!(self, Kind::Topic | Kind::Pattern | Kind::Extractor)
    }
}

/// Something drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vertex {
    pub(crate) kind: Kind,
    /// The node's, topic's or store's name (a pattern, an extractor).
    pub(crate) name: String,
    /// The box it is drawn in, if any.
    pub(crate) cluster: Option<usize>,
}

/// How two vertices are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Link {
    /// Records flow: topic to source, node to node, sink to topic.
    Records,
    /// A processor uses a store (drawn from the processor to the store).
    Store,
}

/// A link between two vertices, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Edge {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) link: Link,
}

/// A box: a sub-topology, or a global store's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cluster {
    /// Kafka's id of the sub-topology.
    pub(crate) id: usize,
    /// A global store's sub-topology (it makes no tasks).
    pub(crate) global: bool,
}

impl Cluster {
    /// The box's title, as Kafka names the block.
    pub(crate) fn title(&self) -> String {
        if self.global {
            format!("Sub-topology: {} for global store", self.id)
        } else {
            format!("Sub-topology: {}", self.id)
        }
    }
}

/// The graph of one description: vertices in a stable order (box by box,
/// nodes as Kafka prints them, topics and stores where first met).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Model {
    pub(crate) vertices: Vec<Vertex>,
    pub(crate) edges: Vec<Edge>,
    pub(crate) clusters: Vec<Cluster>,
}

#[derive(Default)]
struct Builder {
    model: Model,
    by_key: HashMap<(Kind, String), usize>,
    /// The clusters using each store vertex.
    store_users: HashMap<usize, Vec<usize>>,
}

impl Builder {
    fn vertex(&mut self, kind: Kind, name: &str, cluster: Option<usize>) -> usize {
        if let Some(&i) = self.by_key.get(&(kind, name.to_owned())) {
            return i;
        }
        let i = self.model.vertices.len();
        self.model.vertices.push(Vertex {
            kind,
            name: name.to_owned(),
            cluster,
        });
        self.by_key.insert((kind, name.to_owned()), i);
        i
    }

    fn store(&mut self, cluster: usize, name: &str) -> usize {
        let i = self.vertex(Kind::Store, name, None);
        let users = self.store_users.entry(i).or_default();
        if !users.contains(&cluster) {
            users.push(cluster);
        }
        i
    }

    fn edge(&mut self, from: usize, to: usize, link: Link) {
        let edge = Edge { from, to, link };
        if !self.model.edges.contains(&edge) {
            self.model.edges.push(edge);
        }
    }
}

impl Model {
    /// The picture of `description`: sub-topologies and global stores in
    /// the order of their ids, as Kafka prints them.
    pub(crate) fn of(description: &TopologyDescription) -> Model {
        enum Block<'a> {
            Sub(&'a streams_core::topology::Subtopology),
            Global(&'a streams_core::topology::GlobalStore),
        }
        let mut blocks: Vec<(usize, Block<'_>)> = description
            .subtopologies()
            .iter()
            .map(|s| (s.id(), Block::Sub(s)))
            .chain(
                description
                    .global_stores()
                    .iter()
                    .map(|g| (g.id(), Block::Global(g))),
            )
            .collect();
        blocks.sort_by_key(|(id, _)| *id);
        let mut b = Builder::default();
        for (id, block) in blocks {
            let c = b.model.clusters.len();
            match block {
                Block::Sub(sub) => {
                    b.model.clusters.push(Cluster { id, global: false });
                    let ids: Vec<usize> = sub
                        .nodes()
                        .iter()
                        .map(|n| {
                            let kind = match n.kind() {
                                NodeType::Source { .. } => Kind::Source,
                                NodeType::Processor { .. } => Kind::Processor,
                                NodeType::Sink { .. } => Kind::Sink,
                            };
                            b.vertex(kind, n.name(), Some(c))
                        })
                        .collect();
                    for (node, &me) in sub.nodes().iter().zip(&ids) {
                        match node.kind() {
                            NodeType::Source { topics } => match topics {
                                Topics::Names(names) => {
                                    for t in names {
                                        let t = b.vertex(Kind::Topic, t, None);
                                        b.edge(t, me, Link::Records);
                                    }
                                }
                                Topics::Pattern(p) => {
                                    let t = b.vertex(Kind::Pattern, p, None);
                                    b.edge(t, me, Link::Records);
                                }
                            },
                            NodeType::Processor { stores } => {
                                for s in stores {
                                    let s = b.store(c, s);
                                    b.edge(me, s, Link::Store);
                                }
                            }
                            NodeType::Sink { destination } => {
                                let t = match destination {
                                    Destination::Topic(t) => b.vertex(Kind::Topic, t, None),
                                    Destination::Extractor(e) => b.vertex(Kind::Extractor, e, None),
                                };
                                b.edge(me, t, Link::Records);
                            }
                        }
                        for succ in node.successors() {
                            if let Some(to) = sub
                                .nodes()
                                .iter()
                                .position(|n| n.name() == succ)
                                .map(|k| ids[k])
                            {
                                b.edge(me, to, Link::Records);
                            }
                        }
                    }
                }
                Block::Global(global) => {
                    b.model.clusters.push(Cluster { id, global: true });
                    let source = b.vertex(Kind::Source, global.source(), Some(c));
                    let processor = b.vertex(Kind::Processor, global.processor(), Some(c));
                    let topic = b.vertex(Kind::Topic, global.topic(), None);
                    let store = b.store(c, global.store());
                    b.edge(topic, source, Link::Records);
                    b.edge(source, processor, Link::Records);
                    b.edge(processor, store, Link::Store);
                }
            }
        }
        // A store goes in the box of the one sub-topology that uses it;
        // one used by several stays outside.
        for (i, users) in &b.store_users {
            if let [only] = users.as_slice() {
                b.model.vertices[*i].cluster = Some(*only);
            }
        }
        b.model
    }

    /// The vertices of cluster `c`, in order.
    pub(crate) fn members(&self, c: usize) -> Vec<usize> {
        (0..self.vertices.len())
            .filter(|&i| self.vertices[i].cluster == Some(c))
            .collect()
    }
}
