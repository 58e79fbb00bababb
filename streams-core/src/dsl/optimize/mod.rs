//! Kafka's topology optimizations (`topology.optimization`), applied when
//! a topology is built with a config: [`StreamsBuilder::build_with`].
//!
//! Kafka's DSL builds a graph first and writes it into a topology at
//! `build(props)`, rewriting the graph on the way
//! (`InternalStreamsBuilder.optimizeTopology`). Ours adds nodes as
//! operators are called, so the DSL records what Kafka's graph knows
//! (which nodes change keys or values, which are merges, each repartition
//! topic with a recipe to make it again, each source table's store, each
//! stream-stream join with a recipe for its self-join form), and
//! [`optimize`] rewrites the built topology the way Kafka rewrites its
//! graph, on a graph of the same shape ([`graph`]):
//!
//! - `reuse.ktable.source.topics`: each source table's store (when it has
//!   one) logs nothing; its changelog is the source topic
//!   (`TableSourceNode.reuseSourceTopicForChangeLog`).
//! - `merge.repartition.topics` ([`merge_repartitions`]): Kafka's
//!   `mergeRepartitionTopics`.
//! - `single.store.self.join` ([`self_join`]): Kafka's
//!   `rewriteSingleStoreSelfJoin` (KIP-862).
//!
//! Then the nodes are written again in Kafka's build order (each where
//! Kafka's graph node of the same build priority puts it), which keeps
//! `describe()` and the sub-topology numbers Kafka's.
//!
//! [`StreamsBuilder::build_with`]: crate::StreamsBuilder::build_with

use std::any::Any;
use std::collections::HashSet;
use std::rc::Rc;

use crate::config::TopologyOptimizations;
use crate::error::{Result, StreamsError, TopologyError};
use crate::state::StoreBuilder;
use crate::topology::{Topology, TypeSig};

mod graph;
mod merge_repartitions;
pub(crate) mod self_join;

use graph::{Graph, Unit};

/// What the DSL records for the optimizations, as it builds.
#[derive(Default)]
pub(crate) struct OptimizationMetadata {
    /// Nodes that change the key (`map`, `flat_map`, `select_key`, the
    /// key selection of `group_by`): Kafka's `keyChangingOperation`.
    pub(crate) key_changing: HashSet<String>,
    /// Nodes that change the value (`map_values`, `flat_map_values`):
    /// Kafka's `valueChangingOperation`.
    pub(crate) value_changing: HashSet<String>,
    /// `merge` nodes: Kafka's `mergeNode`.
    pub(crate) merges: HashSet<String>,
    /// Every repartition topic the DSL sent a stream through, in the
    /// order they were made.
    pub(crate) repartitions: Vec<RepartitionDef>,
    /// Every table read from a topic with a store it may have.
    pub(crate) table_sources: Vec<TableSourceDef>,
    /// Every stream-stream join.
    pub(crate) stream_joins: Vec<StreamJoinDef>,
    /// The nodes whose merged repartition topic already took its three
    /// counter numbers (a second `build_with` takes none).
    pub(crate) numbered: HashSet<String>,
}

/// Makes a repartition topic's three nodes (filter, sink, source) with the
/// given names, serdes (type-erased `SerdeRef`s of the repartition's own
/// key and value types) and parents.
pub(crate) type MakeRepartition = Rc<
    dyn Fn(
        &mut Topology,
        &RepartitionNames,
        Option<&Rc<dyn Any>>,
        Option<&Rc<dyn Any>>,
        &[&str],
    ) -> Result<(), TopologyError>,
>;

/// The names of a repartition topic and its nodes.
#[derive(Debug, Clone)]
pub(crate) struct RepartitionNames {
    /// The topic, without the application id.
    pub(crate) topic: String,
    pub(crate) filter: String,
    pub(crate) sink: String,
    pub(crate) source: String,
}

/// One repartition topic the DSL made (Kafka's `BaseRepartitionNode`).
pub(crate) struct RepartitionDef {
    pub(crate) names: RepartitionNames,
    /// Whether Kafka may merge it (`OptimizableRepartitionNode`: grouping,
    /// joins, `to_table`, cogroup); `repartition()` may not.
    pub(crate) optimizable: bool,
    /// The key and value types it carries.
    pub(crate) types: TypeSig,
    /// The serdes it was given, as `SerdeRef<K>` / `SerdeRef<V>`.
    pub(crate) key_serde: Option<Rc<dyn Any>>,
    pub(crate) value_serde: Option<Rc<dyn Any>>,
    /// Makes one like it.
    pub(crate) make: MakeRepartition,
}

/// A table read from a topic (Kafka's `TableSourceNode`).
pub(crate) struct TableSourceDef {
    pub(crate) store: String,
    pub(crate) topic: String,
    /// The store's builder with logging off.
    pub(crate) unlogged: Rc<dyn Fn() -> Rc<dyn StoreBuilder>>,
}

/// A stream-stream join (Kafka's `StreamStreamJoinNode` and its two
/// `WindowedStreamProcessorNode`s).
pub(crate) struct StreamJoinDef {
    pub(crate) this_windowed: String,
    pub(crate) other_windowed: String,
    pub(crate) this_join: String,
    pub(crate) other_join: String,
    pub(crate) merge: String,
    pub(crate) other_store: String,
    pub(crate) outer_store: Option<String>,
    /// Adds the self-join processor (named as the merge, under the
    /// this-side windowed node, reading its store); `None` when both
    /// sides' values differ in type (then it cannot be a self-join).
    pub(crate) make_self_join: Option<Rc<dyn Fn(&mut Topology) -> Result<()>>>,
}

/// Applies `optimizations` to `topology`, which the DSL described in
/// `meta`; `new_name` takes a counter number (the merged repartition
/// topics take three each, as in Kafka).
///
/// # Errors
/// [`TopologyError::CannotOptimize`] where a repartition topic cannot be
/// merged, or an error of the rewritten topology.
pub(crate) fn optimize(
    topology: &Topology,
    meta: &mut OptimizationMetadata,
    optimizations: TopologyOptimizations,
    mut new_name: impl FnMut(&str) -> String,
) -> Result<Topology> {
    if optimizations.is_none() {
        return Ok(topology.clone());
    }
    // reuse.ktable.source.topics: the source tables' stores, if they have one.
    let mut reused: Vec<(String, String, Rc<dyn StoreBuilder>)> = Vec::new();
    if optimizations.reuse_ktable_source_topics {
        for table in &meta.table_sources {
            if topology.store_names().contains(&table.store.as_str()) {
                reused.push((table.store.clone(), table.topic.clone(), (table.unlogged)()));
            }
        }
    }
    let mut graph = Graph::new(topology, meta);
    let mut renames: Vec<(String, String)> = Vec::new();
    if optimizations.merge_repartition_topics {
        renames = merge_repartitions::merge(&mut graph, topology, meta, &mut new_name)?;
    }
    let mut dropped_stores: HashSet<String> = HashSet::new();
    if optimizations.single_store_self_join {
        dropped_stores = self_join::rewrite(&mut graph, meta);
    }
    // Write the nodes again, in Kafka's build order.
    let mut rewrite = topology.rewrite(|store| {
        if dropped_stores.contains(store.name()) {
            return None;
        }
        match reused.iter().find(|(name, _, _)| name == store.name()) {
            Some((_, _, unlogged)) => Some(unlogged.clone()),
            None => Some(store.clone()),
        }
    });
    for (store, topic, _) in &reused {
        rewrite.topology().set_source_changelog(store, topic);
    }
    for id in graph.build_order() {
        let parents: Vec<&str> = graph
            .parents(id)
            .iter()
            .map(|&p| graph.output_name(p))
            .collect();
        match graph.unit(id) {
            Unit::Node(i) => rewrite.copy_node(*i, &parents)?,
            Unit::Repartition {
                filter,
                sink,
                source,
                ..
            } => {
                rewrite.copy_node(*filter, &parents)?;
                rewrite.copy_node(*sink, &[topology.node_name_at(*filter)])?;
                rewrite.copy_node(*source, &[])?;
            }
            Unit::Merged {
                def,
                names,
                key_serde,
                value_serde,
            } => (meta.repartitions[*def].make)(
                rewrite.topology(),
                names,
                key_serde.as_ref(),
                value_serde.as_ref(),
                &parents,
            )?,
            Unit::SelfJoin { join } => {
                if let Some(make) = &meta.stream_joins[*join].make_self_join {
                    make(rewrite.topology())?;
                }
            }
        }
    }
    for (from, to) in &renames {
        rewrite.rename_in_copartition_groups(from, to);
    }
    let optimized = rewrite.finish();
    optimized.validate()?;
    optimized.validate_copartition()?;
    Ok(optimized)
}

/// The error of an optimization that cannot be applied at `node`.
fn cannot(optimization: &'static str, node: &str, reason: String) -> StreamsError {
    TopologyError::CannotOptimize {
        optimization,
        node: node.to_owned(),
        reason,
    }
    .into()
}
