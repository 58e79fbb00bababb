//! Kafka Streams' `StreamsPartitionAssignor`: the consumer-group assignor
//! every stream thread plugs into its consumer. Each member tells the
//! leader its process (instance), its thread and the tasks it had; the
//! leader turns the topology into tasks, shares them among the instances
//! with the [`StickyTaskAssignor`] (by thread count, sticky, with
//! standbys), then among each instance's threads, and gives every member
//! the input partitions of its active tasks plus, as user data, its active
//! and standby tasks.
//!
//! The user data is text, one `name=value` line each (`process`,
//! `thread`, `active`, `standby`; task lists as `0_1,1_0`), so that a
//! rebalance can be read in a log.
//!
//! A client that cannot run this assignor (rdkafka: librdkafka runs only
//! its built-in assignors, and `streams-kafka` uses the eager `range`
//! one) assigns partitions with no user data. Then a thread's active
//! tasks are derived from its partitions ([`tasks_from_partitions`]):
//! every task whose input partitions are all assigned to it, and no
//! standbys. Range assignment gives partition `p` of every subscribed
//! topic with the same partition count to the same member, so a task that
//! reads co-partitioned topics (a join, or a sub-topology that reads two
//! topics) is assigned whole; a task whose partitions were split between
//! members (topics of different partition counts in one sub-topology) runs
//! nowhere until the next rebalance, which is why such topics must be
//! co-partitioned.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use streams_clients::{Assignment, PartitionAssignor, Subscription, TopicPartition};

use crate::runtime::assignor::{
    KafkaStreamsState, StickyTaskAssignor, StreamThreadState, TaskAssignmentError, TaskInfo,
};
use crate::runtime::metadata::TopologyMetadata;
use crate::runtime::task_id::TaskId;

/// The tasks a stream thread has, shared between the thread and its
/// consumer's assignor.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct OwnedTasks {
    pub(crate) active: BTreeSet<TaskId>,
    pub(crate) standby: BTreeSet<TaskId>,
}

/// A thread's assignor. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct StreamsAssignor {
    pub(crate) process_id: String,
    pub(crate) thread: String,
    pub(crate) metadata: Arc<TopologyMetadata>,
    pub(crate) num_standby_replicas: u32,
    pub(crate) owned: Arc<Mutex<OwnedTasks>>,
    /// An assignment that failed, for the thread to report.
    pub(crate) failure: Arc<Mutex<Option<TaskAssignmentError>>>,
}

fn tasks_text(tasks: &BTreeSet<TaskId>) -> String {
    tasks
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The `name=value` lines of user data.
pub(crate) fn parse_lines(data: &[u8]) -> BTreeMap<String, String> {
    String::from_utf8_lossy(data)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// A task list written by [`tasks_text`]; text that is not a task is
/// skipped (user data from this module is always well formed).
pub(crate) fn parse_tasks(text: Option<&String>) -> BTreeSet<TaskId> {
    text.map(|t| t.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_default()
}

/// The active tasks of a member assigned `partitions` without task
/// lists: every task whose input partitions are all among them. See the
/// [module docs](self).
pub(crate) fn tasks_from_partitions(
    metadata: &TopologyMetadata,
    partitions: &[TopicPartition],
) -> BTreeSet<TaskId> {
    let assigned: BTreeSet<&TopicPartition> = partitions.iter().collect();
    metadata
        .tasks
        .values()
        .filter(|t| !t.partitions.is_empty() && t.partitions.iter().all(|tp| assigned.contains(tp)))
        .map(|t| t.id)
        .collect()
}

/// The active and standby tasks of an assignment: from the user data this
/// assignor wrote, or, when there is none (a client that ran another
/// assignor), derived from the partitions with no standbys.
pub(crate) fn assigned_tasks(
    metadata: &TopologyMetadata,
    partitions: &[TopicPartition],
    user_data: &[u8],
) -> (BTreeSet<TaskId>, BTreeSet<TaskId>) {
    if user_data.is_empty() {
        return (tasks_from_partitions(metadata, partitions), BTreeSet::new());
    }
    let lines = parse_lines(user_data);
    (
        parse_tasks(lines.get("active")),
        parse_tasks(lines.get("standby")),
    )
}

impl PartitionAssignor for StreamsAssignor {
    fn name(&self) -> &str {
        "stream"
    }

    fn subscription_user_data(&self, _topics: &BTreeSet<String>) -> Bytes {
        let owned = self.owned.lock().map(|o| o.clone()).unwrap_or_default();
        Bytes::from(format!(
            "process={}\nthread={}\nactive={}\nstandby={}\n",
            self.process_id,
            self.thread,
            tasks_text(&owned.active),
            tasks_text(&owned.standby)
        ))
    }

    fn assign(
        &self,
        _partitions_per_topic: &BTreeMap<String, i32>,
        members: &BTreeMap<String, Subscription>,
    ) -> BTreeMap<String, Assignment> {
        match self.try_assign(members) {
            Ok(a) => a,
            Err(e) => {
                if let Ok(mut f) = self.failure.lock() {
                    *f = Some(e);
                }
                BTreeMap::new()
            }
        }
    }
}

impl StreamsAssignor {
    fn try_assign(
        &self,
        members: &BTreeMap<String, Subscription>,
    ) -> Result<BTreeMap<String, Assignment>, TaskAssignmentError> {
        // Members by process: (member id, thread name, previous tasks).
        struct Member<'a> {
            id: &'a str,
            thread: String,
            active: BTreeSet<TaskId>,
            standby: BTreeSet<TaskId>,
        }
        let mut processes: BTreeMap<String, Vec<Member<'_>>> = BTreeMap::new();
        for (id, sub) in members {
            let lines = parse_lines(&sub.user_data);
            let process = lines.get("process").cloned().unwrap_or_else(|| id.clone());
            processes.entry(process).or_default().push(Member {
                id,
                // The member id names the thread in the assignment: a
                // restarted instance's new member and its old one (until
                // its session expires) have the same thread name.
                thread: id.clone(),
                active: parse_tasks(lines.get("active")),
                standby: parse_tasks(lines.get("standby")),
            });
        }
        let tasks: Vec<TaskInfo> = self
            .metadata
            .tasks
            .values()
            .map(|t| TaskInfo::new(t.id, t.stateful))
            .collect();
        let clients: Vec<KafkaStreamsState> = processes
            .iter()
            .map(|(process, ms)| {
                KafkaStreamsState::new(process.clone(), u32::try_from(ms.len()).unwrap_or(u32::MAX))
                    .with_previous_active_tasks(ms.iter().flat_map(|m| m.active.iter().copied()))
                    .with_previous_standby_tasks(ms.iter().flat_map(|m| m.standby.iter().copied()))
            })
            .collect();
        let assignment =
            StickyTaskAssignor::new(self.num_standby_replicas).assign(&tasks, &clients)?;
        let mut out = BTreeMap::new();
        for (process, ms) in &processes {
            let Some(client) = assignment.client(process) else {
                continue;
            };
            let threads: Vec<StreamThreadState> = ms
                .iter()
                .map(|m| {
                    StreamThreadState::new(m.thread.clone())
                        .with_previous_tasks(m.active.iter().chain(&m.standby).copied())
                })
                .collect();
            let per_thread = client.assign_tasks_to_threads(&threads)?;
            for m in ms {
                let Some(t) = per_thread.get(&m.thread) else {
                    continue;
                };
                let partitions = t
                    .active_tasks()
                    .iter()
                    .filter_map(|id| self.metadata.tasks.get(id))
                    .flat_map(|task| task.partitions.iter().cloned())
                    .collect();
                let user_data = Bytes::from(format!(
                    "active={}\nstandby={}\n",
                    tasks_text(t.active_tasks()),
                    tasks_text(t.standby_tasks())
                ));
                out.insert(
                    m.id.to_owned(),
                    Assignment {
                        partitions,
                        user_data,
                    },
                );
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::metadata::TaskMetadata;

    fn metadata() -> TopologyMetadata {
        let task = |sub, p, topics: &[&str]| {
            let id = TaskId::new(sub, p);
            let partitions = topics
                .iter()
                .map(|t| TopicPartition::new(*t, i32::try_from(p).unwrap_or(0)))
                .collect();
            (
                id,
                TaskMetadata {
                    id,
                    partitions,
                    changelogs: Vec::new(),
                    source_changelogs: Vec::new(),
                    stateful: false,
                },
            )
        };
        TopologyMetadata {
            subtopologies: Vec::new(),
            partitions: BTreeMap::from([
                ("orders".to_owned(), 2),
                ("customers".to_owned(), 2),
                ("app-repartition".to_owned(), 2),
            ]),
            tasks: BTreeMap::from([
                // Sub-topology 0 joins two co-partitioned topics.
                task(0, 0, &["orders", "customers"]),
                task(0, 1, &["orders", "customers"]),
                task(1, 0, &["app-repartition"]),
                task(1, 1, &["app-repartition"]),
            ]),
        }
    }

    #[test]
    fn tasks_whose_partitions_are_all_assigned() {
        let assigned = [
            TopicPartition::new("orders", 0),
            TopicPartition::new("customers", 0),
            TopicPartition::new("orders", 1),
            TopicPartition::new("app-repartition", 1),
        ];
        // 0_1 lacks customers-1: not a task of this member.
        assert_eq!(
            tasks_from_partitions(&metadata(), &assigned),
            BTreeSet::from([TaskId::new(0, 0), TaskId::new(1, 1)])
        );
        assert_eq!(tasks_from_partitions(&metadata(), &[]), BTreeSet::new());
    }

    #[test]
    fn user_data_wins_over_partitions() {
        let assigned = [TopicPartition::new("app-repartition", 0)];
        assert_eq!(
            assigned_tasks(&metadata(), &assigned, b""),
            (BTreeSet::from([TaskId::new(1, 0)]), BTreeSet::new())
        );
        assert_eq!(
            assigned_tasks(&metadata(), &assigned, b"active=0_1\nstandby=1_0,1_1\n"),
            (
                BTreeSet::from([TaskId::new(0, 1)]),
                BTreeSet::from([TaskId::new(1, 0), TaskId::new(1, 1)])
            )
        );
    }
}
