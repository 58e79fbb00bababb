//! The built topology as Kafka's DSL graph sees it (`GraphNode`): a unit
//! per node, except that a repartition topic the DSL made (filter, sink
//! and source) is one unit, as Kafka's `BaseRepartitionNode` is one graph
//! node. Parents and children are ordered sets, changed with Kafka's
//! `addChild`, `removeChild` and `clearChildren`; an internal topic's
//! source has the sinks writing the topic as parents when the graph is
//! searched upwards, as Kafka's graph links them.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::dsl::optimize::{OptimizationMetadata, RepartitionNames};
use crate::topology::Topology;

/// What a graph node writes into the topology.
pub(super) enum Unit {
    /// One node of the built topology, by index.
    Node(usize),
    /// A repartition topic the DSL made: its definition and the indexes
    /// of its filter, sink and source.
    Repartition {
        def: usize,
        filter: usize,
        sink: usize,
        source: usize,
    },
    /// A repartition topic made by `merge.repartition.topics`, like
    /// repartition `def`, with these names and serdes.
    Merged {
        def: usize,
        names: RepartitionNames,
        key_serde: Option<Rc<dyn Any>>,
        value_serde: Option<Rc<dyn Any>>,
    },
    /// The self-join processor of stream-stream join `join`.
    SelfJoin { join: usize },
}

struct GraphNode {
    unit: Unit,
    /// The name of the node its children read from.
    name: String,
    parents: Vec<usize>,
    children: Vec<usize>,
    /// Kafka's build priority: the order graph nodes are written in.
    priority: (usize, usize),
    live: bool,
    key_changing: bool,
    value_changing: bool,
    merge: bool,
    /// Whether it is a repartition Kafka may merge.
    optimizable: bool,
}

/// See the [module docs](self).
pub(super) struct Graph {
    nodes: Vec<GraphNode>,
    /// The unit of each node of the built topology, by index.
    of_index: Vec<usize>,
    /// Extra parents when searching upwards: an internal topic's source's
    /// sinks.
    links: HashMap<usize, Vec<usize>>,
    /// The unit of each node of the built topology, by name.
    names: HashMap<String, usize>,
}

impl Graph {
    /// The graph of `topology`, which the DSL described in `meta`.
    pub(super) fn new(topology: &Topology, meta: &OptimizationMetadata) -> Self {
        let count = topology.node_names().len();
        let mut triplet_of: HashMap<usize, usize> = HashMap::new();
        for (def, r) in meta.repartitions.iter().enumerate() {
            for name in [&r.names.filter, &r.names.sink, &r.names.source] {
                if let Some(i) = topology.node_index(name) {
                    triplet_of.insert(i, def);
                }
            }
        }
        let mut graph = Graph {
            nodes: Vec::new(),
            of_index: vec![usize::MAX; count],
            links: HashMap::new(),
            names: HashMap::new(),
        };
        for i in 0..count {
            if graph.of_index[i] != usize::MAX {
                continue;
            }
            let name = topology.node_name_at(i).to_owned();
            let unit = match triplet_of.get(&i) {
                Some(&def) => {
                    let r = &meta.repartitions[def].names;
                    let index = |n: &str| topology.node_index(n).unwrap_or(i);
                    Unit::Repartition {
                        def,
                        filter: index(&r.filter),
                        sink: index(&r.sink),
                        source: index(&r.source),
                    }
                }
                None => Unit::Node(i),
            };
            let (members, output, optimizable) = match &unit {
                Unit::Repartition {
                    def,
                    filter,
                    sink,
                    source,
                } => (
                    vec![*filter, *sink, *source],
                    topology.node_name_at(*source).to_owned(),
                    meta.repartitions[*def].optimizable,
                ),
                _ => (vec![i], name.clone(), false),
            };
            let id = graph.nodes.len();
            for m in members {
                graph.of_index[m] = id;
                graph.names.insert(topology.node_name_at(m).to_owned(), id);
            }
            graph.nodes.push(GraphNode {
                unit,
                key_changing: meta.key_changing.contains(&output),
                value_changing: meta.value_changing.contains(&output),
                merge: meta.merges.contains(&output),
                name: output,
                parents: Vec::new(),
                children: Vec::new(),
                priority: (i, 0),
                live: true,
                optimizable,
            });
        }
        // Parents (the filter's, for a repartition), then children in
        // the order they were added.
        for id in 0..graph.nodes.len() {
            let entry = match graph.nodes[id].unit {
                Unit::Node(i) => i,
                Unit::Repartition { filter, .. } => filter,
                _ => continue,
            };
            for &p in topology.node_parents(entry) {
                let parent = graph.of_index[p];
                graph.add_child(parent, id);
            }
        }
        // An internal topic's source hangs under the sinks that write it.
        let sinks: Vec<(usize, Vec<&str>)> = (0..count)
            .filter(|&i| topology.is_sink(i))
            .map(|i| (i, topology.internal_topics_of(i)))
            .collect();
        for i in 0..count {
            let id = graph.of_index[i];
            if !matches!(graph.nodes[id].unit, Unit::Node(_)) || topology.is_sink(i) {
                continue;
            }
            let topics = topology.internal_topics_of(i);
            let writers: Vec<usize> = sinks
                .iter()
                .filter(|(_, written)| written.iter().any(|t| topics.contains(t)))
                .map(|(s, _)| graph.of_index[*s])
                .collect();
            if !writers.is_empty() {
                graph.links.insert(id, writers);
            }
        }
        graph
    }

    /// What graph node `id` writes.
    pub(super) fn unit(&self, id: usize) -> &Unit {
        &self.nodes[id].unit
    }

    /// The live graph node of the built topology's node `name`, when it
    /// is a graph node of its own.
    pub(super) fn find_node(&self, name: &str) -> Option<usize> {
        let &id = self.names.get(name)?;
        (self.nodes[id].live && matches!(self.nodes[id].unit, Unit::Node(_))).then_some(id)
    }

    /// The name of the node the children of `id` read from.
    pub(super) fn output_name(&self, id: usize) -> &str {
        &self.nodes[id].name
    }

    /// Its parents, in order.
    pub(super) fn parents(&self, id: usize) -> &[usize] {
        &self.nodes[id].parents
    }

    /// Its children, in order.
    pub(super) fn children(&self, id: usize) -> &[usize] {
        &self.nodes[id].children
    }

    pub(super) fn is_key_changing(&self, id: usize) -> bool {
        self.nodes[id].key_changing
    }

    pub(super) fn is_value_changing(&self, id: usize) -> bool {
        self.nodes[id].value_changing
    }

    pub(super) fn is_merge(&self, id: usize) -> bool {
        self.nodes[id].merge
    }

    /// Whether it is a repartition topic Kafka may merge.
    pub(super) fn is_optimizable_repartition(&self, id: usize) -> bool {
        self.nodes[id].optimizable
    }

    pub(super) fn priority(&self, id: usize) -> (usize, usize) {
        self.nodes[id].priority
    }

    /// Every graph node in the order the DSL made them.
    pub(super) fn in_creation_order(&self) -> Vec<usize> {
        let mut ids: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].live)
            .collect();
        ids.sort_by_key(|&i| self.nodes[i].priority);
        ids
    }

    /// The live graph nodes in Kafka's build order (build priority).
    pub(super) fn build_order(&self) -> Vec<usize> {
        self.in_creation_order()
    }

    /// Adds a graph node that writes `unit`, read from as `name`, built
    /// at `priority`.
    pub(super) fn add(&mut self, unit: Unit, name: String, priority: (usize, usize)) -> usize {
        self.nodes.push(GraphNode {
            unit,
            name,
            parents: Vec::new(),
            children: Vec::new(),
            priority,
            live: true,
            key_changing: false,
            value_changing: false,
            merge: false,
            optimizable: true,
        });
        self.nodes.len() - 1
    }

    /// Takes `id` out of the build (it writes nothing).
    pub(super) fn remove(&mut self, id: usize) {
        self.nodes[id].live = false;
    }

    /// Kafka's `addChild`: `child` after the other children of `parent`,
    /// `parent` after the other parents of `child` (each once).
    pub(super) fn add_child(&mut self, parent: usize, child: usize) {
        if !self.nodes[parent].children.contains(&child) {
            self.nodes[parent].children.push(child);
        }
        if !self.nodes[child].parents.contains(&parent) {
            self.nodes[child].parents.push(parent);
        }
    }

    /// Kafka's `removeChild`.
    pub(super) fn remove_child(&mut self, parent: usize, child: usize) {
        self.nodes[parent].children.retain(|&c| c != child);
        self.nodes[child].parents.retain(|&p| p != parent);
    }

    /// Kafka's `clearChildren`.
    pub(super) fn clear_children(&mut self, parent: usize) {
        for child in std::mem::take(&mut self.nodes[parent].children) {
            self.nodes[child].parents.retain(|&p| p != parent);
        }
    }

    /// The parents of `id` as Kafka's graph has them: its own, or for an
    /// internal topic's source, the sinks that write the topic.
    pub(super) fn graph_parents(&self, id: usize) -> Vec<usize> {
        let mut parents = self.nodes[id].parents.clone();
        if let Some(links) = self.links.get(&id) {
            parents.extend(links.iter().copied().filter(|l| self.nodes[*l].live));
        }
        parents
    }

    /// Kafka's `findParentNodeMatching`: `start` if it matches, else the
    /// first match searching its parents depth first, in order.
    pub(super) fn find(
        &self,
        start: usize,
        matches: &dyn Fn(&Graph, usize) -> bool,
    ) -> Option<usize> {
        let mut seen = HashSet::new();
        self.find_from(start, matches, &mut seen)
    }

    fn find_from(
        &self,
        start: usize,
        matches: &dyn Fn(&Graph, usize) -> bool,
        seen: &mut HashSet<usize>,
    ) -> Option<usize> {
        if matches(self, start) {
            return Some(start);
        }
        if !seen.insert(start) {
            return None;
        }
        for parent in self.graph_parents(start) {
            if matches(self, parent) {
                return Some(parent);
            }
            if let Some(found) = self.find_from(parent, matches, seen) {
                return Some(found);
            }
        }
        None
    }
}
