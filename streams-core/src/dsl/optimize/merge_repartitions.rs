//! `merge.repartition.topics`: Kafka's `mergeRepartitionTopics`.
//!
//! Each repartition topic Kafka may merge (grouping, joins, `to_table`,
//! cogroup; not `repartition()`) belongs to the key-changing node above
//! it, when the first node above it that changes the key *or the value*
//! is that key-changing node (`getKeyChangingParentNode`: a `map_values`
//! in between keeps it apart). Repartition topics below a `merge` whose
//! inputs changed the key belong to the merge instead, when all of a key
//! changer's repartition topics are below the merge
//! (`maybeUpdateKeyChangingRepartitionNodeMap`). Then, for each node with
//! repartition topics (one is enough), one repartition topic right after
//! the node replaces them all:
//!
//! - it is named after the first of them, `<topic>-filter`,
//!   `<topic>-sink`, `<topic>-source` (never the generated names), and
//!   takes three numbers of the counter, as Kafka's
//!   `createRepartitionNode` does;
//! - its serdes are the first key serde and the first value serde given
//!   to any of them;
//! - the node's child on the way to each old repartition topic moves
//!   below the new one, with everything under it (a `filter` between a
//!   `map` and a `group_by_key` then runs after the repartition); what
//!   read each old repartition topic reads from the node above it.
//!
//! This is Kafka 4.4's code, after KAFKA-8705 (several children of one key
//! change) and KAFKA-9739 (merges whose key changers have no repartition
//! topic of their own, `StreamsGraphTest.shouldNotThrowNPEWithMergeNodes`).
//! One case still fails in Kafka: a node below the key change that leads
//! to two of its repartition topics (a `peek` with two groupings below, a
//! `split`) is moved for the first and no longer leads back for the second
//! (`Found a null keyChangingChild node`); we refuse the same topologies,
//! with [`TopologyError::CannotOptimize`](crate::TopologyError::CannotOptimize).

use std::any::Any;
use std::rc::Rc;

use crate::dsl::optimize::graph::{Graph, Unit};
use crate::dsl::optimize::{OptimizationMetadata, RepartitionNames, cannot};
use crate::error::Result;
use crate::topology::Topology;

const OPTIMIZATION: &str = "merge.repartition.topics";

/// Merges the repartition topics in `graph`; returns the old source names
/// with the new one each stands for (for the co-partition groups).
pub(super) fn merge(
    graph: &mut Graph,
    topology: &Topology,
    meta: &mut OptimizationMetadata,
    new_name: &mut impl FnMut(&str) -> String,
) -> Result<Vec<(String, String)>> {
    let groups = groups(graph);
    let mut renames = Vec::new();
    for (changer, repartitions) in groups {
        if repartitions.is_empty() {
            continue;
        }
        let changer_name = graph.output_name(changer).to_owned();
        let defs: Vec<usize> = repartitions
            .iter()
            .filter_map(|&r| match graph.unit(r) {
                Unit::Repartition { def, .. } => Some(*def),
                _ => None,
            })
            .collect();
        let first = &meta.repartitions[defs[0]];
        // The merged topic sits right after the node: it must carry what
        // the node forwards.
        let forwards = match graph.unit(changer) {
            Unit::Node(i) => topology.node_output(*i),
            _ => None,
        };
        if let Some(forwards) = forwards
            && !forwards.same(&first.types)
        {
            return Err(cannot(
                OPTIMIZATION,
                &changer_name,
                format!(
                    "its repartition topic `{}` carries ({}), but the node forwards ({forwards})",
                    first.names.topic, first.types
                ),
            ));
        }
        let key_serde = first_serde(meta, &defs, &changer_name, true)?;
        let value_serde = first_serde(meta, &defs, &changer_name, false)?;
        let topic = first.names.topic.clone();
        let names = RepartitionNames {
            filter: format!("{topic}-filter"),
            sink: format!("{topic}-sink"),
            source: format!("{topic}-source"),
            topic,
        };
        if meta.numbered.insert(changer_name.clone()) {
            for prefix in ["KSTREAM-SINK-", "KSTREAM-FILTER-", "KSTREAM-SOURCE-"] {
                new_name(prefix);
            }
        }
        let (p, _) = graph.priority(changer);
        let merged = graph.add(
            Unit::Merged {
                def: defs[0],
                names: names.clone(),
                key_serde,
                value_serde,
            },
            names.source.clone(),
            (p, 1),
        );
        for &repartition in &repartitions {
            let child = graph
                .find(repartition, &|g, n| g.graph_parents(n).contains(&changer))
                .ok_or_else(|| {
                    cannot(
                        OPTIMIZATION,
                        &changer_name,
                        format!(
                            "its repartition topic `{}` is below a node that leads to another of its \
                             repartition topics too and was moved already (Kafka 4.4 fails the same \
                             way: Found a null keyChangingChild node)",
                            topology_topic(meta, graph, repartition)
                        ),
                    )
                })?;
            graph.add_child(merged, child);
            graph.remove_child(changer, child);
            let children = graph.children(repartition).to_vec();
            let parents = graph.parents(repartition).to_vec();
            for &c in &children {
                for &p in &parents {
                    graph.add_child(p, c);
                }
            }
            for &p in &parents {
                graph.remove_child(p, repartition);
            }
            graph.clear_children(repartition);
            graph.remove(repartition);
            renames.push((
                graph.output_name(repartition).to_owned(),
                names.source.clone(),
            ));
        }
        graph.add_child(changer, merged);
    }
    Ok(renames)
}

/// The topic of repartition `id`.
fn topology_topic(meta: &OptimizationMetadata, graph: &Graph, id: usize) -> String {
    match graph.unit(id) {
        Unit::Repartition { def, .. } => meta.repartitions[*def].names.topic.clone(),
        _ => graph.output_name(id).to_owned(),
    }
}

/// Kafka's `keyChangingOperationsToOptimizableRepartitionNodes` after
/// `maybeUpdateKeyChangingRepartitionNodeMap`: each key-changing node (or
/// merge) with its repartition topics, in the order the nodes were made.
fn groups(graph: &Graph) -> Vec<(usize, Vec<usize>)> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut merges = Vec::new();
    for id in graph.in_creation_order() {
        if graph.is_key_changing(id) {
            groups.push((id, Vec::new()));
        } else if graph.is_optimizable_repartition(id) {
            let changer = key_changing_parent(graph, id);
            if let Some((_, reps)) = changer.and_then(|c| groups.iter_mut().find(|(k, _)| *k == c))
            {
                reps.push(id);
            }
        } else if graph.is_merge(id) {
            merges.push(id);
        }
    }
    // Merges take the repartition topics of the key changers above them
    // when every one of those topics is below the merge.
    let mut moved = Vec::new();
    let mut merge_groups = Vec::new();
    for &merge in &merges {
        let mut reps: Vec<usize> = Vec::new();
        for (changer, changer_reps) in &groups {
            let all_below = changer_reps.iter().all(|&r| {
                graph
                    .find(r, &|g, n| g.graph_parents(n).contains(&merge))
                    .is_some()
            });
            let below_changer = graph
                .find(merge, &|g, n| g.graph_parents(n).contains(changer))
                .is_some();
            if all_below && below_changer {
                for r in changer_reps {
                    if !reps.contains(r) {
                        reps.push(*r);
                    }
                }
                moved.push(*changer);
            }
        }
        merge_groups.push((merge, reps));
    }
    groups.retain(|(k, _)| !moved.contains(k));
    groups.extend(merge_groups);
    groups
}

/// Kafka's `getKeyChangingParentNode`: the key-changing node above
/// `repartition`, if the first node above it that changes the key or the
/// value is that one.
fn key_changing_parent(graph: &Graph, repartition: usize) -> Option<usize> {
    let first_change = graph.find(repartition, &|g, n| {
        g.is_key_changing(n) || g.is_value_changing(n)
    })?;
    let key_change = graph.find(repartition, &|g, n| g.is_key_changing(n))?;
    (first_change == key_change).then_some(key_change)
}

/// The first key (or value) serde given to any of `defs`, as Kafka's
/// `getRepartitionSerdes` picks it; it must be of the first one's type.
fn first_serde(
    meta: &OptimizationMetadata,
    defs: &[usize],
    changer: &str,
    key: bool,
) -> Result<Option<Rc<dyn Any>>> {
    let first = &meta.repartitions[defs[0]];
    for &d in defs {
        let r = &meta.repartitions[d];
        let serde = if key { &r.key_serde } else { &r.value_serde };
        let Some(serde) = serde else { continue };
        let same = if key {
            r.types.same_key(&first.types)
        } else {
            r.types.same_value(&first.types)
        };
        if !same {
            return Err(cannot(
                OPTIMIZATION,
                changer,
                format!(
                    "the {} serde of repartition topic `{}` is for ({}), not ({}) as `{}`",
                    if key { "key" } else { "value" },
                    r.names.topic,
                    r.types,
                    first.types,
                    first.names.topic
                ),
            ));
        }
        return Ok(Some(serde.clone()));
    }
    Ok(None)
}
