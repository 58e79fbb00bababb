//! The picture both renderers draw: a petgraph graph of nodes, topics
//! and stores, with the nodes grouped by sub-topology.

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};

use super::{Block, Destination, NodeType, TopologyDescription};
use crate::topology::Topics;

/// Something drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Vertex<'a> {
    /// A source node.
    Source(&'a str),
    /// A processor node.
    Processor(&'a str),
    /// A sink node.
    Sink(&'a str),
    /// A topic, by name.
    Topic(&'a str),
    /// The topics a pattern matches.
    Pattern(&'a str),
    /// The topics a sink's extractor chooses.
    Extractor(&'a str),
    /// A state store.
    Store(&'a str),
}

impl<'a> Vertex<'a> {
    /// The text shown.
    pub(super) fn label(&self) -> &'a str {
        match *self {
            Vertex::Source(s)
            | Vertex::Processor(s)
            | Vertex::Sink(s)
            | Vertex::Topic(s)
            | Vertex::Pattern(s)
            | Vertex::Extractor(s)
            | Vertex::Store(s) => s,
        }
    }
}

/// How two vertices are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Link {
    /// Records flow (topic to source, node to node, sink to topic).
    Records,
    /// A processor uses a store.
    Store,
}

/// A sub-topology or global store, drawn as a box around its vertices.
#[derive(Debug)]
pub(super) struct Cluster {
    /// `Sub-topology: N`, or `... for global store`.
    pub(super) title: String,
    /// Its vertices, in the order added.
    pub(super) members: Vec<NodeIndex>,
}

/// The graph: vertices in a stable order (block by block, each node as
/// Kafka orders it, topics and stores where first met), edges likewise.
#[derive(Debug)]
pub(super) struct Picture<'a> {
    pub(super) graph: DiGraph<Vertex<'a>, Link>,
    pub(super) clusters: Vec<Cluster>,
    /// Vertices in no cluster: topics, and stores used by several.
    pub(super) outside: Vec<NodeIndex>,
}

#[derive(Default)]
struct Builder<'a> {
    graph: DiGraph<Vertex<'a>, Link>,
    by_key: HashMap<Vertex<'a>, NodeIndex>,
    /// For each store vertex, the clusters that use it.
    store_users: HashMap<NodeIndex, Vec<usize>>,
    clusters: Vec<Cluster>,
}

impl<'a> Builder<'a> {
    /// The vertex, added when first met.
    fn vertex(&mut self, v: Vertex<'a>) -> NodeIndex {
        if let Some(&i) = self.by_key.get(&v) {
            return i;
        }
        let i = self.graph.add_node(v);
        self.by_key.insert(v, i);
        i
    }

    fn member(&mut self, cluster: usize, v: Vertex<'a>) -> NodeIndex {
        let i = self.vertex(v);
        self.clusters[cluster].members.push(i);
        i
    }

    fn store(&mut self, cluster: usize, name: &'a str) -> NodeIndex {
        let i = self.vertex(Vertex::Store(name));
        let users = self.store_users.entry(i).or_default();
        if !users.contains(&cluster) {
            users.push(cluster);
        }
        i
    }
}

impl<'a> Picture<'a> {
    pub(super) fn of(description: &'a TopologyDescription) -> Self {
        let mut b = Builder::default();
        for block in description.blocks() {
            let c = b.clusters.len();
            match block {
                Block::Sub(sub) => {
                    b.clusters.push(Cluster {
                        title: format!("Sub-topology: {}", sub.id),
                        members: Vec::new(),
                    });
                    let ids: Vec<NodeIndex> = sub
                        .nodes
                        .iter()
                        .map(|n| {
                            b.member(
                                c,
                                match n.kind {
                                    NodeType::Source { .. } => Vertex::Source(&n.name),
                                    NodeType::Processor { .. } => Vertex::Processor(&n.name),
                                    NodeType::Sink { .. } => Vertex::Sink(&n.name),
                                },
                            )
                        })
                        .collect();
                    let index: HashMap<&str, NodeIndex> = sub
                        .nodes
                        .iter()
                        .zip(&ids)
                        .map(|(n, &i)| (n.name.as_str(), i))
                        .collect();
                    for (node, &me) in sub.nodes.iter().zip(&ids) {
                        match &node.kind {
                            NodeType::Source { topics } => {
                                let read: Vec<Vertex<'a>> = match topics {
                                    Topics::Names(names) => {
                                        names.iter().map(|t| Vertex::Topic(t)).collect()
                                    }
                                    Topics::Pattern(p) => vec![Vertex::Pattern(p)],
                                };
                                for t in read {
                                    let t = b.vertex(t);
                                    b.graph.add_edge(t, me, Link::Records);
                                }
                            }
                            NodeType::Processor { stores } => {
                                for s in stores {
                                    let s = b.store(c, s);
                                    b.graph.add_edge(me, s, Link::Store);
                                }
                            }
                            NodeType::Sink { destination } => {
                                let t = b.vertex(match destination {
                                    Destination::Topic(t) => Vertex::Topic(t),
                                    Destination::Extractor(e) => Vertex::Extractor(e),
                                });
                                b.graph.add_edge(me, t, Link::Records);
                            }
                        }
                        for succ in &node.successors {
                            if let Some(&to) = index.get(succ.as_str()) {
                                b.graph.add_edge(me, to, Link::Records);
                            }
                        }
                    }
                }
                Block::Global(global) => {
                    b.clusters.push(Cluster {
                        title: format!("Sub-topology: {} for global store", global.id),
                        members: Vec::new(),
                    });
                    let source = b.member(c, Vertex::Source(&global.source));
                    let processor = b.member(c, Vertex::Processor(&global.processor));
                    let topic = b.vertex(Vertex::Topic(&global.topic));
                    let store = b.store(c, &global.store);
                    b.graph.add_edge(topic, source, Link::Records);
                    b.graph.add_edge(source, processor, Link::Records);
                    b.graph.add_edge(processor, store, Link::Store);
                }
            }
        }
        // A store goes in the box of the one sub-topology that uses it.
        let mut outside = Vec::new();
        for i in b.graph.node_indices() {
            if b.clusters.iter().any(|c| c.members.contains(&i)) {
                continue;
            }
            match b.store_users.get(&i).map(Vec::as_slice) {
                Some(&[only]) => b.clusters[only].members.push(i),
                _ => outside.push(i),
            }
        }
        Picture {
            graph: b.graph,
            clusters: b.clusters,
            outside,
        }
    }
}
