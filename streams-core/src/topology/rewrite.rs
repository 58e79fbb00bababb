//! Writing a topology again in another shape: the primitive under the
//! DSL's topology optimizations (`dsl/optimize.rs`), which decide what
//! moves; this module only copies.
//!
//! A [`Rewrite`] starts as a copy of a topology without its nodes (stores,
//! global stores, co-partition groups and the other per-topology facts
//! kept), then takes nodes in their new order: each old node with new
//! parents ([`Rewrite::copy_node`]), or new nodes added through the usual
//! typed calls ([`Rewrite::topology`]). As nodes are added, children lists
//! follow the new order of their children, as Kafka's
//! `InternalTopologyBuilder` fills them in the order nodes are written.

use std::rc::Rc;

use crate::error::TopologyError;
use crate::state::StoreBuilder;
use crate::topology::{NodeKind, Topology, TypeSig};

/// A topology being written again. See the [module docs](self).
pub(crate) struct Rewrite<'a> {
    old: &'a Topology,
    new: Topology,
}

impl Topology {
    /// Starts writing this topology again: its stores (each passed through
    /// `store`, which drops one with `None` or replaces it) and everything
    /// else but its nodes.
    pub(crate) fn rewrite(
        &self,
        mut store: impl FnMut(&Rc<dyn StoreBuilder>) -> Option<Rc<dyn StoreBuilder>>,
    ) -> Rewrite<'_> {
        let new = Topology {
            nodes: Vec::new(),
            index: Default::default(),
            stores: self.stores.iter().filter_map(&mut store).collect(),
            global_stores: self.global_stores.clone(),
            global_runtimes: self.global_runtimes.clone(),
            window_grace: self.window_grace.clone(),
            repartition_partitions: self.repartition_partitions.clone(),
            copartition_node_groups: self.copartition_node_groups.clone(),
            source_changelogs: self.source_changelogs.clone(),
            null_keys: self.null_keys.clone(),
        };
        Rewrite { old: self, new }
    }

    /// The name of node `index`.
    pub(crate) fn node_name_at(&self, index: usize) -> &str {
        &self.nodes[index].name
    }

    /// What node `index` forwards (`None` for a sink).
    pub(crate) fn node_output(&self, index: usize) -> Option<TypeSig> {
        self.nodes[index].output
    }

    /// The parents of node `index`, in the order they were given.
    pub(crate) fn node_parents(&self, index: usize) -> &[usize] {
        &self.nodes[index].parents
    }

    /// The internal topics node `index` reads (a source) or writes (a sink).
    pub(crate) fn internal_topics_of(&self, index: usize) -> Vec<&str> {
        match &self.nodes[index].kind {
            NodeKind::Source { topics, .. } => topics
                .iter()
                .filter(|t| t.internal)
                .map(|t| t.name.as_str())
                .collect(),
            NodeKind::Sink { topic: Some(t), .. } if t.internal => vec![t.name.as_str()],
            _ => Vec::new(),
        }
    }

    /// Whether node `index` is a sink.
    pub(crate) fn is_sink(&self, index: usize) -> bool {
        matches!(self.nodes[index].kind, NodeKind::Sink { .. })
    }

    /// Makes topic `topic` the changelog of source store `store`: the
    /// store writes none of its own and is restored from the topic (Kafka's
    /// `connectSourceStoreAndTopic`, under `reuse.ktable.source.topics`).
    pub(crate) fn set_source_changelog(&mut self, store: &str, topic: &str) {
        self.source_changelogs.retain(|(s, _)| s.as_str() != store);
        self.source_changelogs
            .push((store.to_owned(), topic.to_owned()));
    }

    /// The stores restored from a source topic instead of a changelog of
    /// their own, with the topic (its name as written, external).
    pub(crate) fn source_changelogs(&self) -> &[(String, String)] {
        &self.source_changelogs
    }
}

impl Rewrite<'_> {
    /// Adds old node `index` again, under `parents` (names of nodes
    /// already added), connected to the stores it was connected to.
    ///
    /// # Errors
    /// A parent that is missing or forwards other types.
    pub(crate) fn copy_node(
        &mut self,
        index: usize,
        parents: &[&str],
    ) -> Result<(), TopologyError> {
        let def = &self.old.nodes[index];
        self.new.add_node(
            &def.name,
            def.kind.clone(),
            parents,
            def.input,
            def.output,
            def.factory.clone(),
        )?;
        let added = self.new.nodes.len() - 1;
        Rc::make_mut(&mut self.new.nodes[added]).stores = def.stores.clone();
        Ok(())
    }

    /// The topology being written, to add new nodes to.
    pub(crate) fn topology(&mut self) -> &mut Topology {
        &mut self.new
    }

    /// Replaces node name `from` by `to` in the co-partition groups
    /// (Kafka's `maybeUpdateCopartitionSourceGroups`).
    pub(crate) fn rename_in_copartition_groups(&mut self, from: &str, to: &str) {
        for group in &mut self.new.copartition_node_groups {
            for node in group.iter_mut() {
                if node == from {
                    to.clone_into(node);
                }
            }
        }
    }

    /// The topology written.
    pub(crate) fn finish(self) -> Topology {
        self.new
    }
}
