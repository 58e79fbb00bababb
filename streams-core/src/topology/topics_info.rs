//! What each sub-topology reads, writes and keeps: Kafka's
//! `InternalTopologyBuilder.TopicsInfo`, which the runtime uses to make
//! tasks (one per sub-topology and partition), to create internal topics
//! (repartition topics, changelogs) and to check co-partitioning.
//!
//! ```
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("words")
//!     .group_by(|_, w| w.clone())
//!     .count()
//!     .to_stream()
//!     .to("counts");
//! let info = builder.build()?.topics_info("app");
//! assert_eq!(info.len(), 2);
//! assert_eq!(info[0].source_topics, ["words"]);
//! assert_eq!(info[0].repartition_sink_topics, ["app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"]);
//! assert_eq!(info[1].repartition_source_topics, ["app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"]);
//! assert_eq!(info[1].sink_topics, ["counts"]);
//! assert_eq!(
//!     info[1].changelog_topics,
//!     [("KSTREAM-AGGREGATE-STATE-STORE-0000000002".to_owned(), "app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog".to_owned())]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::TopologyError;
use crate::state::changelog_topic;
use crate::topology::{NodeKind, Topology};

/// One sub-topology's topics and stores, by their full names (internal
/// topics with the `application.id` prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicsInfo {
    /// The sub-topology's id: the first part of its tasks' ids.
    pub subtopology: usize,
    /// The user topics its sources read, in the order the sources were added.
    pub source_topics: Vec<String>,
    /// The topic patterns its sources read, as written.
    pub source_patterns: Vec<String>,
    /// The repartition topics its sources read.
    pub repartition_source_topics: Vec<String>,
    /// The user topics its sinks write.
    pub sink_topics: Vec<String>,
    /// The repartition topics its sinks write.
    pub repartition_sink_topics: Vec<String>,
    /// Its stores, by name, in the order they were added.
    pub stores: Vec<String>,
    /// Each logged store with its changelog topic.
    pub changelog_topics: Vec<(String, String)>,
    /// Each store whose changelog is the source topic its table reads
    /// (`reuse.ktable.source.topics`, Kafka's source-topic changelogs),
    /// with that topic: it writes no changelog of its own, and is restored
    /// from the topic up to the group's committed offset.
    pub source_changelog_topics: Vec<(String, String)>,
    /// The topic configs a store asked for its changelog, by changelog
    /// topic (only stores that asked for some).
    pub changelog_configs:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    /// Whether a sink chooses its topic per record (then the topics it
    /// writes are known only when it runs).
    pub dynamic_sink: bool,
    /// Groups of source topics that must have the same partition count,
    /// because a join reads them together (Kafka's co-partition groups):
    /// registered by the DSL's joins (stream-stream, stream-table,
    /// table-table), as Kafka's `copartitionSources`, each the source
    /// topics upstream of the two joined streams or tables; groups that
    /// share a topic are merged, as Kafka's `copartitionGroups` does.
    /// Processor API processors that share a store make no group, as in
    /// Kafka. Sorted, and each group's topics sorted.
    pub copartition_groups: Vec<Vec<String>>,
    /// The repartition topics its sources read whose partition count was
    /// given (`Repartitioned::with_number_of_partitions`, Kafka's enforced
    /// count), with it.
    pub enforced_partitions: std::collections::BTreeMap<String, i32>,
}

impl TopicsInfo {
    /// Every topic its sources read, user and repartition topics.
    pub fn all_source_topics(&self) -> impl Iterator<Item = &str> {
        self.source_topics
            .iter()
            .chain(&self.repartition_source_topics)
            .map(String::as_str)
    }

    /// Whether it keeps state (its tasks have stores, so standbys make sense).
    pub fn is_stateful(&self) -> bool {
        !self.stores.is_empty()
    }
}

impl Topology {
    /// Each sub-topology's topics and stores for an application named
    /// `application_id`, by sub-topology id. See [`TopicsInfo`].
    pub fn topics_info(&self, application_id: &str) -> Vec<TopicsInfo> {
        let nodes = self.nodes();
        let (groups, _) = super::description::node_groups(self);
        let builders = self.store_builders();
        groups
            .into_iter()
            .map(|(id, members)| {
                let mut info = TopicsInfo {
                    subtopology: id,
                    source_topics: Vec::new(),
                    source_patterns: Vec::new(),
                    repartition_source_topics: Vec::new(),
                    sink_topics: Vec::new(),
                    repartition_sink_topics: Vec::new(),
                    stores: Vec::new(),
                    changelog_topics: Vec::new(),
                    source_changelog_topics: Vec::new(),
                    changelog_configs: std::collections::BTreeMap::new(),
                    dynamic_sink: false,
                    copartition_groups: Vec::new(),
                    enforced_partitions: std::collections::BTreeMap::new(),
                };
                for &i in &members {
                    let def = &nodes[i];
                    match &def.kind {
                        NodeKind::Source { topics, pattern } => {
                            for t in topics {
                                let name = t.full_name(application_id);
                                if t.internal {
                                    if let Some(n) = self.repartition_partitions(&t.name) {
                                        info.enforced_partitions.insert(name.clone(), n);
                                    }
                                    info.repartition_source_topics.push(name);
                                } else {
                                    info.source_topics.push(name);
                                }
                            }
                            if let Some((_, written)) = pattern {
                                info.source_patterns.push(written.clone());
                            }
                        }
                        NodeKind::Sink { topic: Some(t), .. } => {
                            let list = if t.internal {
                                &mut info.repartition_sink_topics
                            } else {
                                &mut info.sink_topics
                            };
                            let name = t.full_name(application_id);
                            if !list.contains(&name) {
                                list.push(name);
                            }
                        }
                        NodeKind::Sink { topic: None, .. } => info.dynamic_sink = true,
                        NodeKind::Processor => {}
                    }
                }
                for builder in builders {
                    let used = members
                        .iter()
                        .any(|&i| nodes[i].stores.iter().any(|s| s == builder.name()));
                    if used {
                        info.stores.push(builder.name().to_owned());
                        if let Some((_, topic)) = self
                            .source_changelogs()
                            .iter()
                            .find(|(s, _)| s == builder.name())
                        {
                            info.source_changelog_topics
                                .push((builder.name().to_owned(), topic.clone()));
                        } else if builder.logging_enabled() {
                            let config = builder.changelog_config();
                            if !config.is_empty() {
                                info.changelog_configs.insert(
                                    changelog_topic(application_id, builder.name()),
                                    config,
                                );
                            }
                            info.changelog_topics.push((
                                builder.name().to_owned(),
                                changelog_topic(application_id, builder.name()),
                            ));
                        }
                    }
                }
                info.copartition_groups = copartition_groups(self, &members, application_id);
                info
            })
            .collect()
    }

    /// Kafka's `InternalTopologyBuilder.validateCopartition`, run when the
    /// DSL builds: a co-partition group made only of repartition topics
    /// given a partition count must have one count.
    ///
    /// # Errors
    /// [`TopologyError::EnforcedPartitionsDiffer`] with the group's topics
    /// (names without the application id) and counts.
    pub(crate) fn validate_copartition(&self) -> Result<(), TopologyError> {
        const APP: &str = "app";
        // Only groups of topics with enforced counts can differ: without
        // both, there is nothing to compute (most topologies, every build).
        if self.copartition_node_groups().is_empty() || !self.has_repartition_partitions() {
            return Ok(());
        }
        for info in self.topics_info(APP) {
            for group in &info.copartition_groups {
                let given: Vec<(String, i32)> = group
                    .iter()
                    .filter_map(|t| {
                        let name = t.strip_prefix("app-")?;
                        Some((name.to_owned(), self.repartition_partitions(name)?))
                    })
                    .collect();
                if given.len() == group.len() && given.windows(2).any(|w| w[0].1 != w[1].1) {
                    let mut topics = given;
                    topics.sort();
                    return Err(TopologyError::EnforcedPartitionsDiffer { topics });
                }
            }
        }
        Ok(())
    }

    /// The node indexes of the sub-topology `id`, in the order they were
    /// added; `None` when there is no such sub-topology.
    pub(crate) fn subtopology_nodes(&self, id: usize) -> Option<Vec<usize>> {
        super::description::node_groups(self)
            .0
            .into_iter()
            .find(|(g, _)| *g == id)
            .map(|(_, members)| members)
    }
}

/// Kafka's `InternalTopologyBuilder.copartitionGroups`: each group the
/// DSL's joins registered ([`Topology::copartition`]) as the source topics
/// upstream of its nodes, groups that share a topic merged (Kafka's
/// transitive closure), each topic list sorted; only the groups whose
/// topics `members` (one sub-topology's nodes) read.
fn copartition_groups(
    topology: &Topology,
    members: &[usize],
    application_id: &str,
) -> Vec<Vec<String>> {
    use std::collections::BTreeSet;
    let nodes = topology.nodes();
    let sources_above = |start: usize, topics: &mut BTreeSet<String>| {
        let mut seen = vec![false; nodes.len()];
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            if let NodeKind::Source { topics: t, .. } = &nodes[i].kind {
                topics.extend(t.iter().map(|t| t.full_name(application_id)));
            }
            stack.extend(nodes[i].parents.iter().copied());
        }
    };
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    for registered in topology.copartition_node_groups() {
        let mut group = BTreeSet::new();
        for node in registered {
            if let Some(i) = topology.node_index(node) {
                sources_above(i, &mut group);
            }
        }
        if group.is_empty() {
            continue;
        }
        // Merge every group this one touches into one.
        let (touching, mut rest): (Vec<_>, Vec<_>) =
            groups.into_iter().partition(|g| !g.is_disjoint(&group));
        for g in touching {
            group.extend(g);
        }
        rest.push(group);
        groups = rest;
    }
    let read: BTreeSet<String> = members
        .iter()
        .filter_map(|&i| match &nodes[i].kind {
            NodeKind::Source { topics, .. } => Some(topics),
            _ => None,
        })
        .flatten()
        .map(|t| t.full_name(application_id))
        .collect();
    let mut mine: Vec<Vec<String>> = groups
        .into_iter()
        .filter(|g| !g.is_disjoint(&read))
        .map(|g| g.into_iter().collect())
        .collect();
    mine.sort();
    mine
}
