//! What the runtime derives from the topology and the cluster before it
//! runs: the partition count of every topic a task reads (repartition
//! topics get the count Kafka would pick), the tasks (one per
//! sub-topology and partition) and each task's input partitions and
//! changelogs.
//!
//! Kafka's rules (`RepartitionTopics`, `DefaultPartitionGrouper`,
//! `CopartitionedTopicsEnforcer`):
//! - a repartition topic gets the largest partition count among the source
//!   topics of the sub-topologies that write to it (resolved through
//!   chains of repartition topics);
//! - a sub-topology has as many tasks as its source topic with the most
//!   partitions; task `s_p` reads partition `p` of each of its topics that
//!   has one;
//! - changelog topics get one partition per task of their sub-topology.
//!
//! `tests/compat_runtime.rs` compares these results with what Kafka 4.4.0's
//! own classes derive for the same topologies (`compat/runtime/`). Where we
//! differ, by design:
//! - we check co-partitioning always; Kafka only when the topology has a
//!   repartition topic, and otherwise runs a join of topics with 3 and 2
//!   partitions (its task `0_2` reads one side only);
//! - a repartition topic gets the largest count among *all* its writers'
//!   source topics; Kafka visits sub-topologies in `HashSet` order and takes
//!   the largest count known when it gets there, so downstream of a
//!   repartition topic not counted yet its result depends on topic names;
//! - the co-partition groups are Kafka's, registered by the DSL's joins
//!   (see [`TopicsInfo::copartition_groups`](crate::topology::TopicsInfo::copartition_groups)),
//!   except after a second join of one re-keyed stream: Kafka's second
//!   group names a source node it never adds (so the second table is not
//!   checked), ours names the reused repartition topic.

use std::collections::{BTreeMap, BTreeSet};

use streams_clients::TopicPartition;

use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::task_id::TaskId;
use crate::topology::TopicsInfo;

/// One task: what it reads and what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskMetadata {
    /// The task.
    pub id: TaskId,
    /// The partitions it reads.
    pub partitions: Vec<TopicPartition>,
    /// Its stores with their changelog topics (the task's partition of
    /// each is its changelog partition).
    pub changelogs: Vec<(String, String)>,
    /// Its source stores (`reuse.ktable.source.topics`) with the source
    /// topic each is restored from (the task's partition of it), up to
    /// the group's committed offset: they write no changelog.
    pub source_changelogs: Vec<(String, String)>,
    /// Whether it has state stores.
    pub stateful: bool,
}

/// The resolved topology: partition counts and tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyMetadata {
    /// Each sub-topology's topics.
    pub subtopologies: Vec<TopicsInfo>,
    /// The partition count of every source and repartition topic.
    pub partitions: BTreeMap<String, i32>,
    /// The tasks, by id.
    pub tasks: BTreeMap<TaskId, TaskMetadata>,
}

impl TopologyMetadata {
    /// Kafka's pattern subscription, resolved once: each source pattern of
    /// `subtopologies` becomes the topics of `topics` (the cluster's, as
    /// [`Admin::list_topics`](streams_clients::Admin::list_topics) gives
    /// them) that it matches whole, as Java's `Pattern.matcher(topic).matches()`,
    /// added to its sub-topology's source topics; the patterns are then
    /// cleared. Kafka's own topics (`__` prefix), this application's
    /// internal topics (`<application.id>-…-repartition` and
    /// `-changelog`) and topics a source names are not matched. A pattern
    /// that matches nothing reads nothing (no error, as in Kafka).
    ///
    /// Kafka's consumer also picks up topics created later, at its next
    /// metadata refresh, and rebalances; this runtime resolves the patterns
    /// when the instance starts: restart it to read topics created since.
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    /// use streams_core::runtime::TopologyMetadata;
    /// use streams_core::topology::Topics;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>(Topics::pattern("orders-.*")).to("all-orders");
    /// let mut infos = builder.build()?.topics_info("app");
    /// let topics = ["orders-eu", "orders-us", "orders", "all-orders", "app-x-changelog"].map(String::from);
    /// TopologyMetadata::resolve_source_patterns(&mut infos, &topics, "app");
    /// assert_eq!(infos[0].source_topics, ["orders-eu", "orders-us"]);
    /// assert!(infos[0].source_patterns.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve_source_patterns(
        subtopologies: &mut [TopicsInfo],
        topics: &[String],
        application_id: &str,
    ) {
        let named: BTreeSet<String> = subtopologies
            .iter()
            .flat_map(|i| i.source_topics.iter().cloned())
            .collect();
        let app_prefix = format!("{application_id}-");
        let candidates: Vec<&String> = topics
            .iter()
            .filter(|t| !t.starts_with("__") && !named.contains(*t))
            .filter(|t| {
                !(t.starts_with(&app_prefix)
                    && (t.ends_with("-repartition") || t.ends_with("-changelog")))
            })
            .collect();
        for info in subtopologies.iter_mut() {
            for written in std::mem::take(&mut info.source_patterns) {
                // The topology checked the pattern when the source was added.
                let Ok(re) = regex_lite::Regex::new(&format!("^(?:{written})$")) else {
                    continue;
                };
                for topic in &candidates {
                    if re.is_match(topic) && !info.source_topics.contains(*topic) {
                        info.source_topics.push((*topic).clone());
                    }
                }
            }
        }
    }

    /// Resolves `subtopologies` against the cluster's partition counts
    /// (`count_of` answers for topics that exist) and the topics that must
    /// be co-partitioned (`copartition_groups`): a group's repartition
    /// topics take the count of its user topics, or the group's largest
    /// when it has none.
    ///
    /// # Errors
    /// [`RuntimeError::MissingSourceTopics`] for user source topics that do
    /// not exist; [`RuntimeError::NotCopartitioned`] when the topics of a
    /// co-partition group differ in partition count;
    /// [`RuntimeError::Unsupported`] for pattern sources.
    pub fn resolve(
        subtopologies: Vec<TopicsInfo>,
        copartition_groups: &[Vec<String>],
        mut count_of: impl FnMut(&str) -> Result<Option<i32>>,
    ) -> Result<Self> {
        let mut partitions = BTreeMap::new();
        let mut missing = Vec::new();
        for info in &subtopologies {
            if !info.source_patterns.is_empty() {
                return Err(RuntimeError::Unsupported {
                    feature: "sources whose topic patterns are not resolved",
                    hint: "resolve them against the cluster's topics first \
                           (TopologyMetadata::resolve_source_patterns; KafkaStreams::start does)",
                });
            }
            for topic in &info.source_topics {
                if partitions.contains_key(topic) || missing.contains(topic) {
                    continue;
                }
                match count_of(topic)? {
                    Some(n) => {
                        partitions.insert(topic.clone(), n);
                    }
                    None => missing.push(topic.clone()),
                }
            }
        }
        if !missing.is_empty() {
            return Err(RuntimeError::MissingSourceTopics { topics: missing });
        }
        // Repartition topics given a count keep it (Kafka's enforced
        // number of partitions); the others take the largest count among
        // their writers' sources, repeated until every chain is resolved.
        let repartition: BTreeSet<&String> = subtopologies
            .iter()
            .flat_map(|i| &i.repartition_source_topics)
            .collect();
        let enforced: BTreeMap<String, i32> = subtopologies
            .iter()
            .flat_map(|i| i.enforced_partitions.clone())
            .collect();
        partitions.extend(enforced.clone());
        loop {
            let mut progress = false;
            for topic in &repartition {
                if partitions.contains_key(*topic) {
                    continue;
                }
                let mut count = None;
                let mut unresolved = false;
                for writer in subtopologies
                    .iter()
                    .filter(|i| i.repartition_sink_topics.contains(topic))
                {
                    for source in writer.all_source_topics() {
                        match partitions.get(source) {
                            Some(&n) => count = Some(count.map_or(n, |c: i32| c.max(n))),
                            None => unresolved = true,
                        }
                    }
                }
                if let (Some(n), false) = (count, unresolved) {
                    partitions.insert((*topic).clone(), n);
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        // Kafka's CopartitionedTopicsEnforcer: in a co-partition group,
        // user topics must agree and the repartition topics take their
        // count; a group of repartition topics only takes the count given
        // to those that were given one (which must agree), else its
        // largest. A repartition topic given a count keeps it, and must
        // match.
        for group in copartition_groups {
            let user: Vec<(String, i32)> = group
                .iter()
                .filter(|t| !repartition.contains(t))
                .filter_map(|t| partitions.get(t).map(|&n| (t.clone(), n)))
                .collect();
            if user.windows(2).any(|w| w[0].1 != w[1].1) {
                return Err(RuntimeError::NotCopartitioned { topics: user });
            }
            let given: Vec<(String, i32)> = group
                .iter()
                .filter_map(|t| enforced.get(t).map(|&n| (t.clone(), n)))
                .collect();
            let target = match (user.first(), given.first()) {
                (Some(u), _) => Some(u.1),
                (None, Some(first)) => {
                    if given.iter().any(|(_, n)| *n != first.1) {
                        let mut topics: Vec<(String, i32)> = group
                            .iter()
                            .filter_map(|t| partitions.get(t).map(|&n| (t.clone(), n)))
                            .collect();
                        topics.sort();
                        return Err(RuntimeError::EnforcedPartitionsDiffer { topics });
                    }
                    Some(first.1)
                }
                (None, None) => group
                    .iter()
                    .filter_map(|t| partitions.get(t))
                    .max()
                    .copied(),
            };
            let Some(target) = target else { continue };
            for t in group.iter().filter(|t| repartition.contains(t)) {
                match enforced.get(t) {
                    Some(&n) if n != target => {
                        return Err(RuntimeError::EnforcedPartitionsMismatch {
                            topic: t.clone(),
                            partitions: n,
                            source_partitions: target,
                        });
                    }
                    Some(_) => {}
                    None => {
                        partitions.insert(t.clone(), target);
                    }
                }
            }
        }
        let mut tasks = BTreeMap::new();
        for info in &subtopologies {
            let count = info
                .all_source_topics()
                .filter_map(|t| partitions.get(t))
                .max()
                .copied()
                .unwrap_or(0);
            let sub = u32::try_from(info.subtopology).unwrap_or(u32::MAX);
            for p in 0..count {
                let id = TaskId::new(sub, u32::try_from(p).unwrap_or(0));
                let task_partitions = info
                    .all_source_topics()
                    .filter(|t| partitions.get(*t).is_some_and(|&n| n > p))
                    .map(|t| TopicPartition::new(t, p))
                    .collect();
                tasks.insert(
                    id,
                    TaskMetadata {
                        id,
                        partitions: task_partitions,
                        changelogs: info.changelog_topics.clone(),
                        source_changelogs: info.source_changelog_topics.clone(),
                        stateful: info.is_stateful(),
                    },
                );
            }
        }
        Ok(TopologyMetadata {
            subtopologies,
            partitions,
            tasks,
        })
    }

    /// The task that reads `partition`, if any.
    pub fn task_of(&self, partition: &TopicPartition) -> Option<TaskId> {
        self.tasks
            .values()
            .find(|t| t.partitions.contains(partition))
            .map(|t| t.id)
    }

    /// The number of tasks of the sub-topology that writes changelog
    /// `topic` (its partition count).
    pub fn changelog_partitions(&self, topic: &str) -> Option<i32> {
        let info = self
            .subtopologies
            .iter()
            .find(|i| i.changelog_topics.iter().any(|(_, t)| t == topic))?;
        let sub = u32::try_from(info.subtopology).ok()?;
        let n = self.tasks.keys().filter(|t| t.subtopology == sub).count();
        i32::try_from(n).ok()
    }

    /// Every source topic (user and repartition), sorted.
    pub fn source_topics(&self) -> Vec<String> {
        let all: BTreeSet<&str> = self
            .subtopologies
            .iter()
            .flat_map(TopicsInfo::all_source_topics)
            .collect();
        all.into_iter().map(str::to_owned).collect()
    }
}
