//! From a [`Topology`] to its [`TopologyDescription`], as Kafka's
//! `InternalTopologyBuilder.describe()` does it.
//!
//! Sub-topologies are the connected components of the graph (`makeNodeGroups`):
//! a node joins its parents, processors sharing a store are joined, topics
//! join nothing. Ids follow the order in which nodes were added, global
//! stores included. Within a sub-topology, Kafka connects the nodes in
//! `HashMap` order of their names and fills each node's successor and
//! predecessor `TreeSet`s while the sub-tree sizes that the comparator
//! reads are still growing; the lists keep the places their elements got
//! then. [`java`](super::java) reproduces the collections involved.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::java::{JavaHashSet, JavaTreeSet, compare_strings};
use super::{Destination, GlobalStore, Node, NodeType, Subtopology, TopologyDescription};
use crate::topology::{NodeDef, NodeKind, Topics, Topology};

/// Union-find over node ids (Kafka's `QuickUnion`; only the components
/// matter, not which root wins).
struct Components {
    parent: Vec<usize>,
}

impl Components {
    fn new(n: usize) -> Self {
        Components {
            parent: (0..n).collect(),
        }
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn unite(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra] = rb;
        }
    }
}

/// Kafka's node order: the topology's nodes with its global stores
/// (a source and a processor each) in between, where they were added.
enum Added {
    Node(usize),
    Global(usize),
}

/// The sub-topologies (Kafka's `makeNodeGroups`): each its id and its
/// node indexes in the order the nodes were added; and the global stores
/// with the ids they take from the same counter.
pub(crate) fn node_groups(topology: &Topology) -> (Vec<(usize, Vec<usize>)>, Vec<GlobalStore>) {
    let nodes = topology.nodes();
    let mut components = Components::new(nodes.len());
    let mut first_user: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        for &p in &node.parents {
            components.unite(i, p);
        }
        for store in &node.stores {
            match first_user.get(store.as_str()) {
                Some(&user) => components.unite(user, i),
                None => {
                    first_user.insert(store, i);
                }
            }
        }
    }

    let mut added = Vec::with_capacity(nodes.len() + topology.global_stores.len());
    for i in 0..=nodes.len() {
        for (g, def) in topology.global_stores.iter().enumerate() {
            if def.node_position.min(nodes.len()) == i {
                added.push(Added::Global(g));
            }
        }
        if i < nodes.len() {
            added.push(Added::Node(i));
        }
    }

    let mut next_id = 0;
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of_root: HashMap<usize, usize> = HashMap::new();
    let mut global_stores = Vec::new();
    for a in added {
        match a {
            Added::Global(g) => {
                let def = &topology.global_stores[g];
                global_stores.push(GlobalStore {
                    id: next_id,
                    source: def.source.clone(),
                    topic: def.topic.clone(),
                    processor: def.processor.clone(),
                    store: def.store.clone(),
                });
                next_id += 1;
            }
            Added::Node(i) => {
                let root = components.root(i);
                match group_of_root.get(&root) {
                    Some(&g) => groups[g].1.push(i),
                    None => {
                        group_of_root.insert(root, groups.len());
                        groups.push((next_id, vec![i]));
                        next_id += 1;
                    }
                }
            }
        }
    }

    (groups, global_stores)
}

pub(super) fn describe(topology: &Topology) -> TopologyDescription {
    let nodes = topology.nodes();
    let (groups, global_stores) = node_groups(topology);
    TopologyDescription {
        subtopologies: groups
            .into_iter()
            .map(|(id, members)| describe_subtopology(nodes, id, &members))
            .collect(),
        global_stores,
    }
}

/// Kafka's `NodeComparator`: larger sub-tree first (as Java's
/// `size2 - size1`, overflow included), then name.
fn compare(names: &[&str], sizes: &[i32], a: usize, b: usize) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match sizes[b].wrapping_sub(sizes[a]).cmp(&0) {
        Ordering::Equal => compare_strings(names[a], names[b]),
        other => other,
    }
}

/// `describeSubtopology`: `members` are node ids in the order they were added.
fn describe_subtopology(
    nodes: &[std::rc::Rc<NodeDef>],
    id: usize,
    members: &[usize],
) -> Subtopology {
    // `nodeGroup` (a HashSet filled in node order) is copied into
    // `nodesByName` (a HashMap of the same size): both iterate in bucket
    // order, ties in node order.
    let in_hash_order = JavaHashSet::from_inserts(members.iter().map(|&i| nodes[i].name.as_str()));
    let local: HashMap<&str, usize> = members
        .iter()
        .enumerate()
        .map(|(l, &i)| (nodes[i].name.as_str(), l))
        .collect();
    let names: Vec<&str> = members.iter().map(|&i| nodes[i].name.as_str()).collect();
    let parents: Vec<Vec<usize>> = members
        .iter()
        .map(|&i| {
            nodes[i]
                .parents
                .iter()
                .filter_map(|&p| local.get(nodes[p].name.as_str()).copied())
                .collect()
        })
        .collect();

    let n = members.len();
    let mut sizes = vec![1_i32; n];
    let mut preds = vec![JavaTreeSet::default(); n];
    let mut succs = vec![JavaTreeSet::default(); n];
    let mut connected: Vec<Vec<usize>> = vec![Vec::new(); n];
    for name in in_hash_order.iter() {
        let Some(&node) = local.get(name) else {
            continue;
        };
        for &pred in &parents[node] {
            preds[node].insert(pred, |a, b| compare(&names, &sizes, a, b));
            succs[pred].insert(node, |a, b| compare(&names, &sizes, a, b));
            connected[node].push(pred);
            let delta = sizes[node];
            update_size(&mut sizes, &connected, pred, delta);
        }
    }

    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| compare(&names, &sizes, a, b));
    let to_names = |keys: Vec<usize>| keys.into_iter().map(|k| names[k].to_owned()).collect();
    Subtopology {
        id,
        nodes: order
            .into_iter()
            .map(|l| {
                let def = &nodes[members[l]];
                Node {
                    name: def.name.clone(),
                    kind: node_type(def),
                    successors: to_names(succs[l].keys()),
                    predecessors: to_names(preds[l].keys()),
                }
            })
            .collect(),
    }
}

/// `updateSize(node, delta)`: adds `delta` to the node and, recursively,
/// to every predecessor connected so far, once per path. Computed with
/// path counts instead of Kafka's recursion (which is exponential on
/// stacked diamonds), in the same wrapping `int` arithmetic.
fn update_size(sizes: &mut [i32], connected: &[Vec<usize>], start: usize, delta: i32) {
    // Reverse post-order of a walk up the predecessor edges: each node
    // comes before its predecessors.
    let mut post = Vec::new();
    let mut seen = vec![false; sizes.len()];
    let mut stack = vec![(start, 0_usize)];
    seen[start] = true;
    while let Some((node, next)) = stack.pop() {
        if let Some(&pred) = connected[node].get(next) {
            stack.push((node, next + 1));
            if !seen[pred] {
                seen[pred] = true;
                stack.push((pred, 0));
            }
        } else {
            post.push(node);
        }
    }
    let mut paths = vec![0_i32; sizes.len()];
    paths[start] = 1;
    for &node in post.iter().rev() {
        sizes[node] = sizes[node].wrapping_add(delta.wrapping_mul(paths[node]));
        for &pred in &connected[node] {
            paths[pred] = paths[pred].wrapping_add(paths[node]);
        }
    }
}

/// What a node shows: topics in `HashSet` order, stores as the copy
/// `new HashSet<>(stateStoreNames)` orders them.
fn node_type(def: &NodeDef) -> NodeType {
    match &def.kind {
        NodeKind::Source {
            pattern: Some((_, pattern)),
            ..
        } => NodeType::Source {
            topics: Topics::Pattern(pattern.clone()),
        },
        NodeKind::Source { topics, .. } => NodeType::Source {
            topics: Topics::Names(
                JavaHashSet::copy_of(topics.iter().map(|t| t.name.as_str())).to_vec(),
            ),
        },
        NodeKind::Processor => {
            let stores = JavaHashSet::from_inserts(def.stores.iter().map(String::as_str));
            NodeType::Processor {
                stores: JavaHashSet::copy_of(stores.iter()).to_vec(),
            }
        }
        NodeKind::Sink {
            topic: Some(topic), ..
        } => NodeType::Sink {
            destination: Destination::Topic(topic.name.clone()),
        },
        NodeKind::Sink { extractor, .. } => NodeType::Sink {
            destination: Destination::Extractor(extractor.clone().unwrap_or_default()),
        },
    }
}
