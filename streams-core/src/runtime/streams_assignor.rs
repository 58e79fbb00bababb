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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use streams_clients::{Assignment, PartitionAssignor, Subscription};

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
