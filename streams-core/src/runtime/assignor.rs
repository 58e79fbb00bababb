//! Task assignment: which `KafkaStreams` instance runs which task, and
//! which of its stream threads runs it, as Kafka Streams' sticky assignor
//! decides it.
//!
//! Several instances of one application share its tasks. At each rebalance
//! the group leader takes the tasks (one per sub-topology and partition,
//! each stateful or not), the instances (a process id, a number of stream
//! threads, the tasks each had before) and `num.standby.replicas`, and
//! hands every task to exactly one instance as an *active* task, and every
//! stateful task to up to `num.standby.replicas` other instances as a
//! *standby* that keeps a warm copy of its stores. Then each instance
//! spreads its tasks over its threads.
//!
//! - [`StickyTaskAssignor::assign`] is Kafka 4.4's `StickyTaskAssignor`
//!   (`processor.assignment.assignors`, the sticky assignor since Kafka
//!   3.8; `LegacyStickyTaskAssignor` in `processor.internals.assignment` is
//!   its older twin) without rack awareness: tasks stay with their previous
//!   active owner up to its proportional share `⌈tasks × threads / all
//!   threads⌉` (KAFKA-20198; the legacy assignor's quota, `threads ×
//!   ⌊tasks / all threads⌋`, is smaller and moves more tasks), then go to
//!   an instance that had them as standby, then each remaining task
//!   (in task-id order) to its previous owner unless that instance is full
//!   and another is less loaded, else to a warm standby owner, else to the
//!   least-loaded instance. Standbys go, task by task, to the instances that
//!   do not hold the task yet, by the same rule.
//! - [`KafkaStreamsAssignment::assign_tasks_to_threads`] is
//!   `StreamsPartitionAssignor.assignTasksToThreads`: stateful active
//!   tasks, then standbys, then stateless active tasks, each balanced over
//!   the threads (no thread more than one task above another) and each
//!   stateful task kept on the thread that had it while balance allows.
//!
//! Everything here is a pure function of its inputs: no clock, no I/O,
//! and no hash-order iteration. Where Kafka iterates a `HashMap` or
//! `HashSet` (and so depends on hash codes), this module iterates in
//! order: tasks by [`TaskId`], instances by process id, threads by name.
//! Kafka's own tests accept any of the outcomes its hash order may give;
//! this module gives one of them, always the same. Where that order cannot
//! matter the results are Kafka's: a test replays 400 inputs through
//! Kafka 4.4.0's own class (`compat/assignor/`) and compares.
//!
//! Load is counted as Kafka counts it: an instance's load is its assigned
//! tasks (active and standby) divided by its threads. When there are fewer
//! tasks than threads, Kafka keeps a task on its previous owner while that
//! owner has less than one task per thread, so a 4-thread instance may keep
//! 4 tasks beside an idle one; otherwise no instance ends more than one task
//! above its share by threads (see [`StickyTaskAssignor::assign`]). An
//! instance may end further below its share: previous owners keep their
//! rounded-up shares first, so one that joins two instances running 2 tasks
//! each of 4 gets none.
//!
//! ```
//! use std::collections::BTreeSet;
//!
//! use streams_core::runtime::assignor::{
//!     KafkaStreamsState, StickyTaskAssignor, StreamThreadState, TaskInfo,
//! };
//! use streams_core::runtime::task_id::TaskId;
//!
//! // Two sub-topologies of 2 partitions; sub-topology 1 has a store.
//! let tasks = [
//!     TaskInfo::stateless(TaskId::new(0, 0)),
//!     TaskInfo::stateless(TaskId::new(0, 1)),
//!     TaskInfo::stateful(TaskId::new(1, 0)),
//!     TaskInfo::stateful(TaskId::new(1, 1)),
//! ];
//! // "a" ran every task; "b" kept standbys of the stateful ones.
//! let a = KafkaStreamsState::new("a", 1).with_previous_active_tasks(tasks.iter().map(|t| t.id()));
//! let b = KafkaStreamsState::new("b", 1)
//!     .with_previous_standby_tasks([TaskId::new(1, 0), TaskId::new(1, 1)]);
//! let assignment = StickyTaskAssignor::new(1).assign(&tasks, &[a, b])?;
//!
//! // Two tasks each: "a" keeps two of its own, the stateful tasks move to
//! // "b", whose stores are warm, and "a" keeps their standbys.
//! let shown = |s: &BTreeSet<TaskId>| s.iter().map(|t| t.to_string()).collect::<Vec<_>>();
//! let (a, b) = (assignment.client("a").unwrap(), assignment.client("b").unwrap());
//! assert_eq!(shown(a.active_tasks()), ["0_0", "0_1"]);
//! assert_eq!(shown(b.active_tasks()), ["1_0", "1_1"]);
//! assert_eq!(shown(a.standby_tasks()), ["1_0", "1_1"]);
//! assert!(b.standby_tasks().is_empty());
//!
//! // "b" runs two stream threads: one task each.
//! let threads = [StreamThreadState::new("t1"), StreamThreadState::new("t2")];
//! let per_thread = b.assign_tasks_to_threads(&threads)?;
//! assert_eq!(shown(per_thread["t1"].active_tasks()), ["1_0"]);
//! assert_eq!(shown(per_thread["t2"].active_tasks()), ["1_1"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::fmt;

use crate::runtime::task_id::TaskId;

/// A task to assign: its id, and whether its sub-topology has state stores
/// (only such tasks get standbys). Kafka's `TaskInfo` (`id()`,
/// `isStateful()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskInfo {
    id: TaskId,
    stateful: bool,
}

impl TaskInfo {
    /// A task whose sub-topology is stateful or not, as `stateful` says.
    #[must_use]
    pub const fn new(id: TaskId, stateful: bool) -> Self {
        TaskInfo { id, stateful }
    }

    /// A task of a sub-topology with state stores (and so changelogs): it
    /// gets standbys.
    #[must_use]
    pub const fn stateful(id: TaskId) -> Self {
        TaskInfo { id, stateful: true }
    }

    /// A task of a sub-topology without state stores: it never gets a
    /// standby.
    #[must_use]
    pub const fn stateless(id: TaskId) -> Self {
        TaskInfo {
            id,
            stateful: false,
        }
    }

    /// The task's id.
    #[must_use]
    pub const fn id(&self) -> TaskId {
        self.id
    }

    /// Whether the task's sub-topology has state stores.
    #[must_use]
    pub const fn is_stateful(&self) -> bool {
        self.stateful
    }
}

/// One `KafkaStreams` instance as the assignor sees it: its process id,
/// its number of stream threads (its capacity) and the tasks it had before
/// the rebalance. Kafka's `KafkaStreamsState` (`processId()`,
/// `numProcessingThreads()`, `previousActiveTasks()`,
/// `previousStandbyTasks()`).
///
/// Built with [`new`](Self::new) and `with_` methods, so that further
/// inputs (Kafka's per-task lags, `lagFor`) can be added without changing
/// existing callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaStreamsState {
    process_id: String,
    num_processing_threads: u32,
    previous_active: BTreeSet<TaskId>,
    previous_standby: BTreeSet<TaskId>,
}

impl KafkaStreamsState {
    /// An instance with no previous tasks (new, or restarted without
    /// state), running `num_processing_threads` stream threads.
    pub fn new(process_id: impl Into<String>, num_processing_threads: u32) -> Self {
        KafkaStreamsState {
            process_id: process_id.into(),
            num_processing_threads,
            previous_active: BTreeSet::new(),
            previous_standby: BTreeSet::new(),
        }
    }

    /// Adds tasks the instance ran as active tasks before the rebalance.
    #[must_use]
    pub fn with_previous_active_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.previous_active.extend(tasks);
        self
    }

    /// Adds tasks the instance kept standbys of before the rebalance (its
    /// stores for them are warm).
    #[must_use]
    pub fn with_previous_standby_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.previous_standby.extend(tasks);
        self
    }

    /// The instance's process id.
    #[must_use]
    pub fn process_id(&self) -> &str {
        &self.process_id
    }

    /// Its number of stream threads: its capacity.
    #[must_use]
    pub fn num_processing_threads(&self) -> u32 {
        self.num_processing_threads
    }

    /// The tasks it ran as active tasks before the rebalance.
    #[must_use]
    pub fn previous_active_tasks(&self) -> &BTreeSet<TaskId> {
        &self.previous_active
    }

    /// The tasks it kept standbys of before the rebalance.
    #[must_use]
    pub fn previous_standby_tasks(&self) -> &BTreeSet<TaskId> {
        &self.previous_standby
    }
}

/// Why tasks could not be assigned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskAssignmentError {
    /// There are tasks but no instance to run them.
    #[error(
        "cannot assign {tasks} tasks: no KafkaStreams instance is in the group; \
         start at least one instance of the application with num.stream.threads >= 1"
    )]
    NoClients {
        /// How many tasks there are.
        tasks: usize,
    },
    /// An instance has no stream thread, so it cannot take a task.
    #[error(
        "KafkaStreams instance `{process_id}` has num.stream.threads = 0 and cannot run tasks: \
         leave it out of the assignment (an instance without stream threads does not join \
         the group) or give it at least one stream thread"
    )]
    NoProcessingThreads {
        /// The instance's process id.
        process_id: String,
    },
    /// Two instances have the same process id.
    #[error(
        "process id `{process_id}` is given for two KafkaStreams instances: \
         each instance needs its own process id"
    )]
    DuplicateProcessId {
        /// The process id given twice.
        process_id: String,
    },
    /// A task is listed twice.
    #[error(
        "task {task} is listed twice: list each task once, with its sub-topology's stateful flag"
    )]
    DuplicateTask {
        /// The task listed twice.
        task: TaskId,
    },
    /// An instance was given tasks but no stream thread to run them on.
    #[error(
        "KafkaStreams instance `{process_id}` was assigned {tasks} tasks but no stream thread \
         to run them: pass its stream threads to assign_tasks_to_threads"
    )]
    NoStreamThreads {
        /// The instance's process id.
        process_id: String,
        /// How many tasks (active and standby) it was assigned.
        tasks: usize,
    },
    /// Two stream threads of one instance have the same name.
    #[error(
        "stream thread `{thread}` of KafkaStreams instance `{process_id}` is given twice: \
         each thread needs its own name"
    )]
    DuplicateStreamThread {
        /// The instance's process id.
        process_id: String,
        /// The thread name given twice.
        thread: String,
    },
}

/// Kafka Streams' sticky task assignor (`StickyTaskAssignor`), without rack
/// awareness and without lag information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StickyTaskAssignor {
    num_standby_replicas: u32,
}

impl StickyTaskAssignor {
    /// An assignor that gives each stateful task `num_standby_replicas`
    /// standbys (Kafka's `num.standby.replicas`, default 0), as many as
    /// there are other instances to hold them.
    #[must_use]
    pub const fn new(num_standby_replicas: u32) -> Self {
        StickyTaskAssignor {
            num_standby_replicas,
        }
    }

    /// The `num.standby.replicas` it assigns.
    #[must_use]
    pub const fn num_standby_replicas(&self) -> u32 {
        self.num_standby_replicas
    }

    /// Assigns `tasks` to `clients`: each task to exactly one client as
    /// active, each stateful task to `min(num.standby.replicas, clients -
    /// 1)` other clients as standby (never two copies of a task on one
    /// client), as Kafka's `StickyTaskAssignor.assign` does:
    ///
    /// 1. Each previous active task stays with its previous owner while the
    ///    owner has fewer than its share, `⌈tasks × threads / all threads⌉`,
    ///    of active tasks (tasks in id order; if two clients claim a task,
    ///    the one whose process id sorts last keeps the claim, as Kafka's
    ///    map does).
    /// 2. Each task still unassigned goes to the first client (by process
    ///    id) that had it as standby and is under that quota.
    /// 3. Each task still unassigned (in id order) goes to its previous
    ///    owner (previous active, else the least-loaded previous standby)
    ///    unless that owner has at least one task per thread and another
    ///    client is less loaded; then to the least-loaded previous standby
    ///    owner under the same condition; else to the least-loaded client.
    /// 4. Standbys, task by task in id order, replica by replica, go by the
    ///    rule of step 3 among the clients that do not hold the task yet.
    ///    The least-loaded choice prefers, as Kafka's `TaskPairs` does, a
    ///    client where the task forms a pair with a task not yet seen
    ///    together, so that no two clients end with the same tasks.
    ///
    /// "Least loaded" is the lowest (active + standby) / threads; ties go to
    /// the client whose process id sorts first, and an empty client is
    /// taken at once. So an instance never gets a task in step 3 unless it
    /// has less than one task per thread or is among the least loaded:
    /// each client ends with at most `max(threads, ⌈threads × tasks / all
    /// threads⌉)` active tasks; without previous tasks, with equal thread
    /// counts and at least one task per thread, active counts differ by at
    /// most one.
    ///
    /// A stateful task for which there are not enough clients gets fewer
    /// standbys; [`TaskAssignment::standby_shortfalls`] lists them, as
    /// Kafka logs them.
    ///
    /// Previous tasks that are not in `tasks` are ignored. The result
    /// depends only on the inputs, not on their order.
    ///
    /// # Errors
    /// - [`TaskAssignmentError::NoClients`] if there are tasks and no
    ///   client (no tasks and no clients give an empty assignment);
    /// - [`TaskAssignmentError::NoProcessingThreads`] for a client with 0
    ///   threads;
    /// - [`TaskAssignmentError::DuplicateProcessId`] and
    ///   [`TaskAssignmentError::DuplicateTask`] for an input given twice.
    pub fn assign(
        &self,
        tasks: &[TaskInfo],
        clients: &[KafkaStreamsState],
    ) -> Result<TaskAssignment, TaskAssignmentError> {
        let mut all_tasks = BTreeMap::new();
        for task in tasks {
            if all_tasks.insert(task.id, task.stateful).is_some() {
                return Err(TaskAssignmentError::DuplicateTask { task: task.id });
            }
        }
        let mut sorted: Vec<&KafkaStreamsState> = clients.iter().collect();
        sorted.sort_by(|a, b| a.process_id.cmp(&b.process_id));
        for pair in sorted.windows(2) {
            if pair[0].process_id == pair[1].process_id {
                return Err(TaskAssignmentError::DuplicateProcessId {
                    process_id: pair[0].process_id.clone(),
                });
            }
        }
        if let Some(client) = sorted.iter().find(|c| c.num_processing_threads == 0) {
            return Err(TaskAssignmentError::NoProcessingThreads {
                process_id: client.process_id.clone(),
            });
        }
        if sorted.is_empty() && !all_tasks.is_empty() {
            return Err(TaskAssignmentError::NoClients {
                tasks: all_tasks.len(),
            });
        }

        let mut state = AssignmentState::new(&sorted, all_tasks.len());
        state.assign_active(&all_tasks);
        let standby_shortfalls = state.assign_standby(&all_tasks, self.num_standby_replicas);

        let clients = sorted
            .iter()
            .zip(state.assigned)
            .map(|(client, assigned)| {
                let mut assignment = KafkaStreamsAssignment {
                    process_id: client.process_id.clone(),
                    active: BTreeSet::new(),
                    stateful_active: BTreeSet::new(),
                    standby: BTreeSet::new(),
                };
                for (task, kind) in assigned {
                    match kind {
                        Kind::Active => {
                            assignment.active.insert(task);
                            if all_tasks.get(&task).copied().unwrap_or(false) {
                                assignment.stateful_active.insert(task);
                            }
                        }
                        Kind::Standby => {
                            assignment.standby.insert(task);
                        }
                    }
                }
                (client.process_id.clone(), assignment)
            })
            .collect();
        Ok(TaskAssignment {
            clients,
            standby_shortfalls,
        })
    }
}

/// Whether a client holds a task as active or as standby.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Active,
    Standby,
}

/// The assignor's working state (Kafka's `StickyTaskAssignor.AssignmentState`):
/// clients by index, in process-id order.
struct AssignmentState {
    /// Each client's threads.
    capacity: Vec<u64>,
    /// Each client's tasks so far.
    assigned: Vec<BTreeMap<TaskId, Kind>>,
    /// Each client's active tasks so far.
    active_count: Vec<u64>,
    /// The previous active owner of each task.
    previous_active: BTreeMap<TaskId, usize>,
    /// The previous standby owners of each task, in process-id order.
    previous_standby: BTreeMap<TaskId, BTreeSet<usize>>,
    pairs: TaskPairs,
}

impl AssignmentState {
    fn new(clients: &[&KafkaStreamsState], task_count: usize) -> Self {
        let mut previous_active = BTreeMap::new();
        let mut previous_standby: BTreeMap<TaskId, BTreeSet<usize>> = BTreeMap::new();
        for (index, client) in clients.iter().enumerate() {
            for &task in &client.previous_active {
                previous_active.insert(task, index);
            }
            for &task in &client.previous_standby {
                previous_standby.entry(task).or_default().insert(index);
            }
        }
        AssignmentState {
            capacity: clients
                .iter()
                .map(|c| u64::from(c.num_processing_threads))
                .collect(),
            assigned: vec![BTreeMap::new(); clients.len()],
            active_count: vec![0; clients.len()],
            previous_active,
            previous_standby,
            pairs: TaskPairs::new(task_count),
        }
    }

    fn client_count(&self) -> usize {
        self.capacity.len()
    }

    /// Tasks (active and standby) of `client`.
    fn count(&self, client: usize) -> u64 {
        self.assigned[client].len() as u64
    }

    /// Whether `a`'s load is strictly below `b`'s (tasks per thread,
    /// compared exactly: `a_tasks / a_threads < b_tasks / b_threads`).
    fn less_loaded(&self, a: usize, b: usize) -> bool {
        self.count(a) * self.capacity[b] < self.count(b) * self.capacity[a]
    }

    fn finalize(&mut self, task: TaskId, client: usize, kind: Kind) {
        self.pairs.add_pairs(task, self.assigned[client].keys());
        self.assigned[client].insert(task, kind);
        if kind == Kind::Active {
            self.active_count[client] += 1;
        }
    }

    /// Kafka's `hasRoomForActiveTask` (as in Kafka 4.4.0, since KAFKA-20198): the
    /// client's proportional share, `⌈tasks × threads / all threads⌉`.
    fn has_room_for_active(&self, client: usize, tasks: u64, total_capacity: u64) -> bool {
        self.active_count[client] < (tasks * self.capacity[client]).div_ceil(total_capacity)
    }

    fn assign_active(&mut self, tasks: &BTreeMap<TaskId, bool>) {
        if tasks.is_empty() {
            return;
        }
        let total_capacity: u64 = self.capacity.iter().sum();
        let task_count = tasks.len() as u64;
        let mut unassigned: BTreeSet<TaskId> = tasks.keys().copied().collect();

        // Previous active tasks stay with their owner up to its quota.
        let previous: Vec<(TaskId, usize)> = self
            .previous_active
            .iter()
            .filter(|(task, _)| tasks.contains_key(task))
            .map(|(&task, &client)| (task, client))
            .collect();
        for (task, client) in previous {
            if self.has_room_for_active(client, task_count, total_capacity) {
                self.finalize(task, client, Kind::Active);
                unassigned.remove(&task);
            }
        }

        // Then to a client that had the task as standby, up to its quota.
        for task in unassigned.clone() {
            let standbys: Vec<usize> = self
                .previous_standby
                .get(&task)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default();
            if let Some(client) = standbys
                .into_iter()
                .find(|&c| self.has_room_for_active(c, task_count, total_capacity))
            {
                self.finalize(task, client, Kind::Active);
                unassigned.remove(&task);
            }
        }

        // Then the rest, in task order.
        let everyone: Vec<usize> = (0..self.client_count()).collect();
        for task in unassigned {
            let client = self.find_best_client(task, &everyone);
            self.finalize(task, client, Kind::Active);
        }
    }

    fn assign_standby(
        &mut self,
        tasks: &BTreeMap<TaskId, bool>,
        num_standby_replicas: u32,
    ) -> Vec<StandbyShortfall> {
        let mut shortfalls = Vec::new();
        for (&task, _) in tasks.iter().filter(|(_, stateful)| **stateful) {
            for replica in 0..num_standby_replicas {
                let candidates: Vec<usize> = (0..self.client_count())
                    .filter(|&c| !self.assigned[c].contains_key(&task))
                    .collect();
                if candidates.is_empty() {
                    shortfalls.push(StandbyShortfall {
                        task,
                        requested: num_standby_replicas,
                        unassigned: num_standby_replicas - replica,
                    });
                    break;
                }
                let client = self.find_best_client(task, &candidates);
                self.finalize(task, client, Kind::Standby);
            }
        }
        shortfalls
    }

    /// Kafka's `findBestClientForTask`; `within` is non-empty and sorted.
    fn find_best_client(&self, task: TaskId, within: &[usize]) -> usize {
        if let [only] = within {
            return *only;
        }
        let previous = self
            .previous_active
            .get(&task)
            .copied()
            .filter(|c| within.contains(c))
            .or_else(|| self.least_loaded_previous_standby(task, within));
        let Some(previous) = previous else {
            return self.least_loaded(task, within);
        };
        if self.should_balance_load(previous) {
            match self.least_loaded_previous_standby(task, within) {
                Some(standby) if !self.should_balance_load(standby) => standby,
                _ => self.least_loaded(task, within),
            }
        } else {
            previous
        }
    }

    fn least_loaded_previous_standby(&self, task: TaskId, within: &[usize]) -> Option<usize> {
        let standbys: Vec<usize> = self
            .previous_standby
            .get(&task)?
            .iter()
            .copied()
            .filter(|c| within.contains(c))
            .collect();
        self.find_least_loaded(task, &standbys)
    }

    /// The least-loaded client of a non-empty `ids`.
    fn least_loaded(&self, task: TaskId, ids: &[usize]) -> usize {
        self.find_least_loaded(task, ids).unwrap_or(ids[0])
    }

    /// Kafka's `findLeastLoadedClient`: an empty client at once; else the
    /// least loaded among those where `task` makes a new pair; else the
    /// least loaded. `None` only for an empty `ids`.
    fn find_least_loaded(&self, task: TaskId, ids: &[usize]) -> Option<usize> {
        let mut least: Option<usize> = None;
        for &client in ids {
            if self.count(client) == 0 {
                return Some(client);
            }
            if least.is_none_or(|l| self.less_loaded(client, l))
                && self.pairs.has_new_pair(task, self.assigned[client].keys())
            {
                least = Some(client);
            }
        }
        if least.is_some() {
            return least;
        }
        for &client in ids {
            if least.is_none_or(|l| self.less_loaded(client, l)) {
                least = Some(client);
            }
        }
        least
    }

    /// Kafka's `shouldBalanceLoad`: the client has at least one task per
    /// thread and some client is less loaded.
    fn should_balance_load(&self, client: usize) -> bool {
        self.count(client) >= self.capacity[client]
            && (0..self.client_count()).any(|other| self.less_loaded(other, client))
    }
}

/// Kafka's `TaskPairs`: the pairs of tasks already placed on one client
/// together. Only ever asked about membership, so a hash set is safe for
/// determinism.
struct TaskPairs {
    pairs: HashSet<(TaskId, TaskId)>,
    max_pairs: usize,
}

impl TaskPairs {
    fn new(task_count: usize) -> Self {
        TaskPairs {
            pairs: HashSet::new(),
            max_pairs: task_count * task_count.saturating_sub(1) / 2,
        }
    }

    fn pair(a: TaskId, b: TaskId) -> (TaskId, TaskId) {
        if a < b { (a, b) } else { (b, a) }
    }

    fn has_new_pair<'a>(&self, task: TaskId, others: impl Iterator<Item = &'a TaskId>) -> bool {
        if self.pairs.len() >= self.max_pairs {
            return false;
        }
        let mut others = others;
        others.any(|&other| !self.pairs.contains(&Self::pair(task, other)))
    }

    fn add_pairs<'a>(&mut self, task: TaskId, others: impl Iterator<Item = &'a TaskId>) {
        for &other in others {
            self.pairs.insert(Self::pair(task, other));
        }
    }
}

/// A stateful task that got fewer standbys than `num.standby.replicas`
/// asks for, because every client already holds a copy of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandbyShortfall {
    /// The task.
    pub task: TaskId,
    /// `num.standby.replicas`.
    pub requested: u32,
    /// How many of those replicas it did not get.
    pub unassigned: u32,
}

impl fmt::Display for StandbyShortfall {
    /// Kafka's warning, word for word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Unable to assign {} of {} standby tasks for task [{}]. There is not enough available \
             capacity. You should increase the number of threads and/or application instances to \
             maintain the requested number of standby replicas.",
            self.unassigned, self.requested, self.task
        )
    }
}

/// The result of [`StickyTaskAssignor::assign`]: one
/// [`KafkaStreamsAssignment`] per client (empty for a client that got no
/// task), by process id. Kafka's `TaskAssignment`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskAssignment {
    clients: BTreeMap<String, KafkaStreamsAssignment>,
    standby_shortfalls: Vec<StandbyShortfall>,
}

impl TaskAssignment {
    /// The assignment of the client with this process id.
    #[must_use]
    pub fn client(&self, process_id: &str) -> Option<&KafkaStreamsAssignment> {
        self.clients.get(process_id)
    }

    /// Every client's assignment, by process id.
    #[must_use]
    pub fn clients(&self) -> &BTreeMap<String, KafkaStreamsAssignment> {
        &self.clients
    }

    /// The process id of the client that runs `task` as active, if `task`
    /// was assigned.
    #[must_use]
    pub fn active_owner(&self, task: TaskId) -> Option<&str> {
        self.clients
            .values()
            .find(|c| c.active.contains(&task))
            .map(KafkaStreamsAssignment::process_id)
    }

    /// The process ids of the clients that keep a standby of `task`, in
    /// order.
    #[must_use]
    pub fn standby_owners(&self, task: TaskId) -> Vec<&str> {
        self.clients
            .values()
            .filter(|c| c.standby.contains(&task))
            .map(KafkaStreamsAssignment::process_id)
            .collect()
    }

    /// The stateful tasks that got fewer standbys than asked for, in task
    /// order; each one's `Display` is Kafka's warning.
    #[must_use]
    pub fn standby_shortfalls(&self) -> &[StandbyShortfall] {
        &self.standby_shortfalls
    }
}

/// The tasks one `KafkaStreams` instance runs after a rebalance: Kafka's
/// `KafkaStreamsAssignment`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaStreamsAssignment {
    process_id: String,
    active: BTreeSet<TaskId>,
    stateful_active: BTreeSet<TaskId>,
    standby: BTreeSet<TaskId>,
}

impl KafkaStreamsAssignment {
    /// The instance's process id.
    #[must_use]
    pub fn process_id(&self) -> &str {
        &self.process_id
    }

    /// The tasks it runs as active tasks.
    #[must_use]
    pub fn active_tasks(&self) -> &BTreeSet<TaskId> {
        &self.active
    }

    /// The tasks it keeps standbys of.
    #[must_use]
    pub fn standby_tasks(&self) -> &BTreeSet<TaskId> {
        &self.standby
    }

    /// Whether it was assigned no task at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.active.is_empty() && self.standby.is_empty()
    }

    /// Spreads this instance's tasks over its stream threads, as Kafka's
    /// `StreamsPartitionAssignor.assignTasksToThreads` does, in three
    /// rounds that share the threads' running load: stateful active tasks,
    /// then standbys, then stateless active tasks. In each round, with `m
    /// = ⌊(tasks of the round + load so far) / threads⌋`:
    ///
    /// 1. (stateful rounds) each thread, in name order, takes back the
    ///    tasks it had before (in task order) until it holds `m`; the rest
    ///    of its old tasks are remembered;
    /// 2. the remaining tasks, in task order, are dealt round-robin to the
    ///    threads below `m`, until each holds `m`;
    /// 3. what is left goes one per thread to threads still at `m`: first
    ///    a remembered task to its old thread, then the rest in task order.
    ///
    /// So thread loads differ by at most one, and a stateful task stays on
    /// its thread while balance allows. A thread's previous tasks are tried
    /// in task order (Kafka sorts them by lag first; lag is not an input
    /// yet). Threads are ordered by name as strings (`t10 < t2`), as Kafka
    /// orders its consumers.
    ///
    /// # Errors
    /// - [`TaskAssignmentError::NoStreamThreads`] if `threads` is empty
    ///   and the instance has tasks (no tasks and no threads give an empty
    ///   map);
    /// - [`TaskAssignmentError::DuplicateStreamThread`] for a thread name
    ///   given twice.
    pub fn assign_tasks_to_threads(
        &self,
        threads: &[StreamThreadState],
    ) -> Result<BTreeMap<String, ThreadAssignment>, TaskAssignmentError> {
        let mut sorted: Vec<&StreamThreadState> = threads.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        for pair in sorted.windows(2) {
            if pair[0].name == pair[1].name {
                return Err(TaskAssignmentError::DuplicateStreamThread {
                    process_id: self.process_id.clone(),
                    thread: pair[0].name.clone(),
                });
            }
        }
        if sorted.is_empty() {
            if self.is_empty() {
                return Ok(BTreeMap::new());
            }
            return Err(TaskAssignmentError::NoStreamThreads {
                process_id: self.process_id.clone(),
                tasks: self.active.len() + self.standby.len(),
            });
        }
        let previous: Vec<&BTreeSet<TaskId>> = sorted.iter().map(|t| &t.previous_tasks).collect();
        let mut load = vec![0_usize; sorted.len()];
        let stateless_active: BTreeSet<TaskId> = self
            .active
            .difference(&self.stateful_active)
            .copied()
            .collect();
        let stateful = assign_round(&self.stateful_active, true, &previous, &mut load);
        let standby = assign_round(&self.standby, true, &previous, &mut load);
        let stateless = assign_round(&stateless_active, false, &previous, &mut load);
        Ok(sorted
            .iter()
            .zip(stateful.into_iter().zip(standby).zip(stateless))
            .map(|(thread, ((mut active, standby), stateless))| {
                active.extend(stateless);
                (thread.name.clone(), ThreadAssignment { active, standby })
            })
            .collect())
    }
}

/// One round of Kafka's `assignTasksToThreads`: `tasks` over the threads
/// (in name order) whose previous stateful tasks are `previous`, `load`
/// carried between rounds.
fn assign_round(
    tasks: &BTreeSet<TaskId>,
    stateful: bool,
    previous: &[&BTreeSet<TaskId>],
    load: &mut [usize],
) -> Vec<BTreeSet<TaskId>> {
    let threads = load.len();
    let mut assignment: Vec<BTreeSet<TaskId>> = vec![BTreeSet::new(); threads];
    let mut unassigned = tasks.clone();
    if !unassigned.is_empty() {
        let total = tasks.len() + load.iter().sum::<usize>();
        let min = total / threads;
        let mut to_fill = VecDeque::new();
        // Tasks a thread had but could not take back yet, with that thread.
        let mut skipped: BTreeMap<TaskId, usize> = BTreeMap::new();

        for thread in 0..threads {
            let target = min.saturating_sub(load[thread]);
            if stateful {
                for &task in previous[thread] {
                    if unassigned.contains(&task) {
                        if assignment[thread].len() < target {
                            assignment[thread].insert(task);
                            unassigned.remove(&task);
                        } else {
                            skipped.insert(task, thread);
                        }
                    }
                }
            }
            if assignment[thread].len() < target {
                to_fill.push_back(thread);
            }
        }

        while let Some(thread) = to_fill.pop_front() {
            let Some(task) = unassigned.pop_first() else {
                break;
            };
            assignment[thread].insert(task);
            if assignment[thread].len() + load[thread] < min {
                to_fill.push_back(thread);
            }
        }

        if !unassigned.is_empty() {
            let mut at_min: VecDeque<usize> = (0..threads)
                .filter(|&t| assignment[t].len() + load[t] == min)
                .collect();
            for (task, thread) in skipped {
                if at_min.contains(&thread) && unassigned.remove(&task) {
                    assignment[thread].insert(task);
                    at_min.retain(|&t| t != thread);
                }
            }
            for task in std::mem::take(&mut unassigned) {
                // Every thread holds at least `min` now and fewer tasks are
                // left than threads at `min`; the fallback (the least-loaded
                // thread) keeps this total even if that ever changed.
                let thread = at_min.pop_front().unwrap_or_else(|| {
                    (0..threads)
                        .min_by_key(|&t| assignment[t].len() + load[t])
                        .unwrap_or(0)
                });
                assignment[thread].insert(task);
            }
        }
    }
    for (thread, tasks) in assignment.iter().enumerate() {
        load[thread] += tasks.len();
    }
    assignment
}

/// One stream thread of an instance as [`assign_tasks_to_threads`] sees
/// it: its name (Kafka uses the thread's consumer) and the stateful tasks
/// (active or standby) it had before the rebalance.
///
/// [`assign_tasks_to_threads`]: KafkaStreamsAssignment::assign_tasks_to_threads
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamThreadState {
    name: String,
    previous_tasks: BTreeSet<TaskId>,
}

impl StreamThreadState {
    /// A thread with no previous tasks.
    pub fn new(name: impl Into<String>) -> Self {
        StreamThreadState {
            name: name.into(),
            previous_tasks: BTreeSet::new(),
        }
    }

    /// Adds tasks (active or standby) the thread had before the rebalance.
    #[must_use]
    pub fn with_previous_tasks(mut self, tasks: impl IntoIterator<Item = TaskId>) -> Self {
        self.previous_tasks.extend(tasks);
        self
    }

    /// The thread's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tasks it had before the rebalance.
    #[must_use]
    pub fn previous_tasks(&self) -> &BTreeSet<TaskId> {
        &self.previous_tasks
    }
}

/// The tasks one stream thread runs: its active tasks (stateful and
/// stateless) and its standbys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThreadAssignment {
    active: BTreeSet<TaskId>,
    standby: BTreeSet<TaskId>,
}

impl ThreadAssignment {
    /// The thread's active tasks.
    #[must_use]
    pub fn active_tasks(&self) -> &BTreeSet<TaskId> {
        &self.active
    }

    /// The thread's standby tasks.
    #[must_use]
    pub fn standby_tasks(&self) -> &BTreeSet<TaskId> {
        &self.standby
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! Scenarios named after the Kafka tests they reproduce
    //! (`LegacyStickyTaskAssignorTest` and `CustomStickyTaskAssignorTest`,
    //! which test the two sticky assignors with the same scenarios, and
    //! `StreamsPartitionAssignorTest` for the per-thread split), asserting
    //! what Kafka's test asserts; where Kafka accepts any of several
    //! hash-order outcomes, the one this module picks is asserted too.
    //! Clients `pid-1`.. are Kafka's `PID_1`.. (its tests keep clients in a
    //! `TreeMap`, so the order is the same).

    use super::*;
    use proptest::prelude::*;

    fn t(subtopology: u32, partition: u32) -> TaskId {
        TaskId::new(subtopology, partition)
    }

    fn ids(text: &[&str]) -> BTreeSet<TaskId> {
        text.iter().map(|s| s.parse().unwrap()).collect()
    }

    fn stateless(text: &[&str]) -> Vec<TaskInfo> {
        ids(text).into_iter().map(TaskInfo::stateless).collect()
    }

    fn stateful(text: &[&str]) -> Vec<TaskInfo> {
        ids(text).into_iter().map(TaskInfo::stateful).collect()
    }

    fn pid(n: u32) -> String {
        format!("pid-{n}")
    }

    fn client(n: u32, threads: u32) -> KafkaStreamsState {
        KafkaStreamsState::new(pid(n), threads)
    }

    fn with_active(n: u32, threads: u32, active: &[&str]) -> KafkaStreamsState {
        client(n, threads).with_previous_active_tasks(ids(active))
    }

    fn assign(standbys: u32, tasks: &[TaskInfo], clients: &[KafkaStreamsState]) -> TaskAssignment {
        StickyTaskAssignor::new(standbys)
            .assign(tasks, clients)
            .unwrap()
    }

    fn active(a: &TaskAssignment, n: u32) -> BTreeSet<TaskId> {
        a.client(&pid(n)).unwrap().active_tasks().clone()
    }

    fn standby(a: &TaskAssignment, n: u32) -> BTreeSet<TaskId> {
        a.client(&pid(n)).unwrap().standby_tasks().clone()
    }

    fn all(a: &TaskAssignment, n: u32) -> BTreeSet<TaskId> {
        &active(a, n) | &standby(a, n)
    }

    fn all_active(a: &TaskAssignment) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = a
            .clients()
            .values()
            .flat_map(|c| c.active_tasks().iter().copied())
            .collect();
        v.sort();
        v
    }

    fn all_standby(a: &TaskAssignment) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = a
            .clients()
            .values()
            .flat_map(|c| c.standby_tasks().iter().copied())
            .collect();
        v.sort();
        v
    }

    fn subtopologies_of_active(a: &TaskAssignment, n: u32) -> Vec<u32> {
        active(a, n).iter().map(|t| t.subtopology).collect()
    }

    #[test]
    fn should_assign_one_active_task_to_each_process_when_task_count_same_as_process_count() {
        let a = assign(
            0,
            &stateless(&["0_0", "0_1", "0_2"]),
            &[client(1, 1), client(2, 1), client(3, 1)],
        );
        for n in 1..=3 {
            assert_eq!(active(&a, n).len(), 1);
        }
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert_eq!(active(&a, 2), ids(&["0_1"]));
        assert_eq!(active(&a, 3), ids(&["0_2"]));
    }

    #[test]
    fn should_assign_topic_group_id_evenly_across_clients_with_no_stand_by_tasks() {
        let tasks = stateless(&["1_0", "1_1", "2_2", "2_0", "2_1", "1_2"]);
        let a = assign(0, &tasks, &[client(1, 2), client(2, 2), client(3, 2)]);
        for n in 1..=3 {
            assert_eq!(subtopologies_of_active(&a, n), [1, 2]);
        }
    }

    #[test]
    fn should_assign_topic_group_id_evenly_across_clients_with_stand_by_tasks() {
        let tasks = stateful(&["2_0", "1_1", "1_2", "1_0", "2_1", "2_2"]);
        let a = assign(1, &tasks, &[client(1, 2), client(2, 2), client(3, 2)]);
        for n in 1..=3 {
            assert_eq!(subtopologies_of_active(&a, n), [1, 2]);
        }
        assert_eq!(all_standby(&a), all_active(&a));
    }

    #[test]
    fn should_not_migrate_active_task_to_other_process() {
        let tasks = stateless(&["0_0", "0_1", "0_2"]);
        let a = assign(
            0,
            &tasks,
            &[with_active(1, 1, &["0_0"]), with_active(2, 1, &["0_1"])],
        );
        assert!(active(&a, 1).contains(&t(0, 0)));
        assert!(active(&a, 2).contains(&t(0, 1)));
        assert_eq!(all_active(&a), [t(0, 0), t(0, 1), t(0, 2)]);

        // Flip the previous active tasks around.
        let a = assign(
            0,
            &tasks,
            &[with_active(1, 1, &["0_1"]), with_active(2, 1, &["0_2"])],
        );
        assert!(active(&a, 1).contains(&t(0, 1)));
        assert!(active(&a, 2).contains(&t(0, 2)));
        assert_eq!(all_active(&a), [t(0, 0), t(0, 1), t(0, 2)]);
        assert_eq!(active(&a, 1), ids(&["0_0", "0_1"]));
    }

    #[test]
    fn should_migrate_active_tasks_to_new_process_without_changing_all_assignments() {
        let tasks = stateless(&["0_0", "0_1", "0_2"]);
        let clients = [
            with_active(1, 1, &["0_0", "0_2"]),
            with_active(2, 1, &["0_1"]),
            client(3, 1),
        ];
        let a = assign(0, &tasks, &clients);
        assert_eq!(active(&a, 2), ids(&["0_1"]));
        assert_eq!(active(&a, 1).len(), 1);
        assert_eq!(active(&a, 3).len(), 1);
        assert_eq!(all_active(&a), [t(0, 0), t(0, 1), t(0, 2)]);
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert_eq!(active(&a, 3), ids(&["0_2"]));
    }

    #[test]
    fn should_assign_based_on_capacity() {
        let a = assign(
            0,
            &stateless(&["0_0", "0_1", "0_2"]),
            &[client(1, 1), client(2, 2)],
        );
        assert_eq!(active(&a, 1).len(), 1);
        assert_eq!(active(&a, 2).len(), 2);
    }

    #[test]
    fn should_assign_tasks_evenly_with_unequal_topic_group_sizes() {
        let names = ["1_0", "0_0", "0_1", "0_2", "0_3", "0_4", "0_5"];
        let a = assign(
            0,
            &stateless(&names),
            &[with_active(1, 1, &names), client(2, 1)],
        );
        let (one, two) = (active(&a, 1), active(&a, 2));
        assert!((one.len(), two.len()) == (3, 4) || (one.len(), two.len()) == (4, 3));
        assert_eq!(two, &ids(&names) - &one);
        // pid-1's share is ⌈7 / 2⌉ = 4: it keeps its first four.
        assert_eq!(one, ids(&["0_0", "0_1", "0_2", "0_3"]));
    }

    #[test]
    fn should_keep_active_task_stickiness_when_more_client_than_active_tasks() {
        let tasks = stateless(&["0_0", "0_1", "0_2"]);
        let clients = [
            with_active(1, 1, &["0_0"]),
            with_active(2, 1, &["0_2"]),
            with_active(3, 1, &["0_1"]),
            client(4, 1),
            client(5, 1),
        ];
        let a = assign(0, &tasks, &clients);
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert_eq!(active(&a, 2), ids(&["0_2"]));
        assert_eq!(active(&a, 3), ids(&["0_1"]));
        assert!(all(&a, 4).is_empty() && all(&a, 5).is_empty());

        // Change up the assignment and make sure it is still sticky.
        let clients = [
            client(1, 1),
            with_active(2, 1, &["0_0"]),
            client(3, 1),
            with_active(4, 1, &["0_2"]),
            with_active(5, 1, &["0_1"]),
        ];
        let a = assign(0, &tasks, &clients);
        assert_eq!(active(&a, 2), ids(&["0_0"]));
        assert_eq!(active(&a, 4), ids(&["0_2"]));
        assert_eq!(active(&a, 5), ids(&["0_1"]));
        assert!(all(&a, 1).is_empty() && all(&a, 3).is_empty());
    }

    #[test]
    fn should_assign_tasks_to_client_with_previous_standby_tasks() {
        let clients = [
            client(1, 1).with_previous_standby_tasks(ids(&["0_2"])),
            client(2, 1).with_previous_standby_tasks(ids(&["0_1"])),
            client(3, 1).with_previous_standby_tasks(ids(&["0_0"])),
        ];
        let a = assign(0, &stateless(&["0_0", "0_1", "0_2"]), &clients);
        assert_eq!(active(&a, 1), ids(&["0_2"]));
        assert_eq!(active(&a, 2), ids(&["0_1"]));
        assert_eq!(active(&a, 3), ids(&["0_0"]));
    }

    #[test]
    fn should_assign_based_on_capacity_when_multiple_client_have_standby_tasks() {
        let clients = [
            with_active(1, 1, &["0_0"]).with_previous_standby_tasks(ids(&["0_1"])),
            with_active(2, 2, &["0_2"]).with_previous_standby_tasks(ids(&["0_1"])),
        ];
        let a = assign(0, &stateless(&["0_0", "0_1", "0_2"]), &clients);
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert_eq!(active(&a, 2), ids(&["0_1", "0_2"]));
    }

    #[test]
    fn should_assign_standby_tasks_to_different_client_than_corresponding_active_task_is_assigned_to()
     {
        let clients = [
            with_active(1, 1, &["0_0"]),
            with_active(2, 1, &["0_1"]),
            with_active(3, 1, &["0_2"]),
            with_active(4, 1, &["0_3"]),
        ];
        let a = assign(1, &stateful(&["0_0", "0_1", "0_2", "0_3"]), &clients);
        for (n, own) in [(1, t(0, 0)), (2, t(0, 1)), (3, t(0, 2)), (4, t(0, 3))] {
            assert!(active(&a, n).contains(&own));
            assert!(!standby(&a, n).contains(&own));
            assert!(standby(&a, n).len() <= 2);
        }
        let non_empty = (1..=4).filter(|&n| !standby(&a, n).is_empty()).count();
        assert!(non_empty >= 3);
        assert_eq!(all_standby(&a), [t(0, 0), t(0, 1), t(0, 2), t(0, 3)]);
        // Standbys in task order, each to the first least-loaded client
        // (in process-id order) where it makes a new pair: 0_0 to pid-2;
        // 0_1 not to pid-1 (0_0 and 0_1 are paired) but pid-3; 0_2 to
        // pid-1; 0_3 to pid-1, all three candidates being at 2 tasks.
        assert_eq!(standby(&a, 1), ids(&["0_2", "0_3"]));
        assert_eq!(standby(&a, 2), ids(&["0_0"]));
        assert_eq!(standby(&a, 3), ids(&["0_1"]));
        assert!(standby(&a, 4).is_empty());
    }

    #[test]
    fn should_assign_multiple_replicas_of_standby_task() {
        let clients = [
            with_active(1, 1, &["0_0"]),
            with_active(2, 1, &["0_1"]),
            with_active(3, 1, &["0_2"]),
        ];
        let a = assign(2, &stateful(&["0_0", "0_1", "0_2"]), &clients);
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert_eq!(active(&a, 2), ids(&["0_1"]));
        assert_eq!(active(&a, 3), ids(&["0_2"]));
        assert_eq!(standby(&a, 1), ids(&["0_1", "0_2"]));
        assert_eq!(standby(&a, 2), ids(&["0_2", "0_0"]));
        assert_eq!(standby(&a, 3), ids(&["0_0", "0_1"]));
    }

    #[test]
    fn should_not_assign_standby_task_replicas_when_no_client_available_without_having_the_task_assigned()
     {
        let a = assign(2, &stateful(&["0_0"]), &[with_active(1, 1, &["0_0"])]);
        assert_eq!(active(&a, 1), ids(&["0_0"]));
        assert!(standby(&a, 1).is_empty());
        assert_eq!(
            a.standby_shortfalls(),
            [StandbyShortfall {
                task: t(0, 0),
                requested: 2,
                unassigned: 2
            }]
        );
        assert_eq!(
            a.standby_shortfalls()[0].to_string(),
            "Unable to assign 2 of 2 standby tasks for task [0_0]. There is not enough available \
             capacity. You should increase the number of threads and/or application instances to \
             maintain the requested number of standby replicas."
        );
    }

    #[test]
    fn should_assign_active_and_standby_tasks() {
        let a = assign(
            1,
            &stateful(&["0_0", "0_1", "0_2"]),
            &[client(1, 1), client(2, 1), client(3, 1)],
        );
        assert_eq!(all_active(&a), [t(0, 0), t(0, 1), t(0, 2)]);
        assert_eq!(all_standby(&a), [t(0, 0), t(0, 1), t(0, 2)]);
        assert!(a.standby_shortfalls().is_empty());
    }

    #[test]
    fn should_assign_at_least_one_task_to_each_client_if_possible() {
        let a = assign(
            0,
            &stateless(&["0_0", "0_1", "0_2"]),
            &[client(1, 3), client(2, 1), client(3, 1)],
        );
        for n in 1..=3 {
            assert_eq!(all(&a, n).len(), 1);
        }
    }

    #[test]
    fn should_assign_each_active_task_to_one_client_when_more_clients_than_tasks() {
        let clients: Vec<_> = (1..=6).map(|n| client(n, 1)).collect();
        let a = assign(0, &stateless(&["0_0", "0_1", "0_2"]), &clients);
        assert_eq!(all_active(&a), [t(0, 0), t(0, 1), t(0, 2)]);
        assert!(all_standby(&a).is_empty());
        assert_eq!((1..=6).filter(|&n| !all(&a, n).is_empty()).count(), 3);
    }

    #[test]
    fn should_balance_active_and_standby_tasks_across_available_clients() {
        let clients: Vec<_> = (1..=6).map(|n| client(n, 1)).collect();
        let a = assign(1, &stateful(&["0_0", "0_1", "0_2"]), &clients);
        for n in 1..=6 {
            assert_eq!(all(&a, n).len(), 1);
        }
    }

    #[test]
    fn should_assign_more_tasks_to_client_with_more_capacity() {
        let names = [
            "0_0", "0_1", "0_2", "1_0", "1_1", "1_2", "2_0", "2_1", "2_2", "3_0", "3_1", "3_2",
        ];
        let a = assign(0, &stateless(&names), &[client(2, 2), client(1, 1)]);
        assert_eq!(all(&a, 2).len(), 8);
        assert_eq!(all(&a, 1).len(), 4);
    }

    #[test]
    fn should_evenly_distribute_by_task_id_and_partition() {
        let tasks: Vec<TaskInfo> = (0..2)
            .flat_map(|s| (0..8).map(move |p| TaskInfo::stateful(t(s, p))))
            .rev()
            .collect();
        let clients: Vec<_> = (1..=4).map(|n| client(n, 4)).collect();
        let a = assign(1, &tasks, &clients);
        let sorted: Vec<TaskId> = (0..2).flat_map(|s| (0..8).map(move |p| t(s, p))).collect();
        let expected = |i: [usize; 4]| i.iter().map(|&i| sorted[i]).collect::<BTreeSet<_>>();
        assert_eq!(active(&a, 1), expected([0, 4, 8, 12]));
        assert_eq!(active(&a, 2), expected([1, 5, 9, 13]));
        assert_eq!(active(&a, 3), expected([2, 6, 10, 14]));
        assert_eq!(active(&a, 4), expected([3, 7, 11, 15]));
    }

    fn assert_no_two_clients_have_the_same_tasks(a: &TaskAssignment, clients: &[u32]) {
        for &x in clients {
            for &y in clients {
                if x != y {
                    assert_ne!(
                        all(a, x),
                        all(a, y),
                        "pid-{x} and pid-{y} have the same tasks"
                    );
                }
            }
        }
    }

    #[test]
    fn should_not_have_same_assignment_on_any_two_hosts() {
        let clients: Vec<_> = (1..=4).map(|n| client(n, 1)).collect();
        let a = assign(1, &stateful(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        assert_no_two_clients_have_the_same_tasks(&a, &[1, 2, 3, 4]);
    }

    #[test]
    fn should_not_have_same_assignment_on_any_two_hosts_when_there_are_previous_active_tasks() {
        let clients = [
            with_active(1, 1, &["0_1", "0_2"]),
            with_active(2, 1, &["0_3"]),
            with_active(3, 1, &["0_0"]),
            client(4, 1),
        ];
        let a = assign(1, &stateful(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        assert_no_two_clients_have_the_same_tasks(&a, &[1, 2, 3]);
    }

    #[test]
    fn should_not_have_same_assignment_on_any_two_hosts_when_there_are_previous_standby_tasks() {
        let clients = [
            with_active(1, 1, &["0_1", "0_2"]).with_previous_standby_tasks(ids(&["0_3", "0_0"])),
            with_active(2, 1, &["0_3", "0_0"]).with_previous_standby_tasks(ids(&["0_1", "0_2"])),
            client(3, 1),
            client(4, 1),
        ];
        let a = assign(1, &stateful(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        assert_no_two_clients_have_the_same_tasks(&a, &[1, 2, 3, 4]);
    }

    #[test]
    fn should_re_balance_tasks_across_all_clients_when_capacity_and_task_count_the_same() {
        let clients = [
            with_active(3, 1, &["0_0", "0_1", "0_2", "0_3"]),
            client(1, 1),
            client(2, 1),
            client(4, 1),
        ];
        let a = assign(0, &stateless(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        for n in 1..=4 {
            assert_eq!(all(&a, n).len(), 1);
        }
        assert_eq!(active(&a, 3), ids(&["0_0"]));
    }

    #[test]
    fn should_re_balance_tasks_across_clients_when_capacity_less_than_task_count() {
        let clients = [
            with_active(3, 1, &["0_0", "0_1", "0_2", "0_3"]),
            client(1, 1),
            client(2, 1),
        ];
        let a = assign(0, &stateless(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        assert_eq!(all(&a, 3).len(), 2);
        assert_eq!(all(&a, 1).len(), 1);
        assert_eq!(all(&a, 2).len(), 1);
        // Its share is ⌈4 / 3⌉ = 2: it keeps its first two.
        assert_eq!(active(&a, 3), ids(&["0_0", "0_1"]));
    }

    #[test]
    fn should_rebalance_tasks_to_clients_based_on_capacity() {
        let clients = [with_active(2, 1, &["0_0", "0_3", "0_2"]), client(3, 2)];
        let a = assign(0, &stateless(&["0_0", "0_2", "0_3"]), &clients);
        assert_eq!(all(&a, 2).len(), 1);
        assert_eq!(all(&a, 3).len(), 2);
    }

    #[test]
    fn should_move_minimal_number_of_tasks_when_previously_above_capacity_and_new_client_added() {
        let clients = [
            with_active(1, 1, &["0_0", "0_2"]),
            with_active(2, 1, &["0_1", "0_3"]),
            client(3, 1),
        ];
        let a = assign(0, &stateless(&["0_0", "0_2", "0_1", "0_3"]), &clients);
        // Kafka's legacy test asserts that pid-3 gets one task, taken from
        // one of the others. Kafka 4.4's StickyTaskAssignor (KAFKA-20198)
        // gives each client its rounded-up share, ⌈4 / 3⌉ = 2, so both keep
        // theirs and the new client gets none: fewest moves, zero (Kafka
        // 4.4.0's own class gives the same on this input).
        assert_eq!(active(&a, 1), ids(&["0_0", "0_2"]));
        assert_eq!(active(&a, 2), ids(&["0_1", "0_3"]));
        assert!(active(&a, 3).is_empty());
    }

    #[test]
    fn should_not_move_any_tasks_when_new_tasks_added() {
        let clients = [
            with_active(1, 1, &["0_0", "0_1"]),
            with_active(2, 1, &["0_2", "0_3"]),
        ];
        let a = assign(
            0,
            &stateless(&["0_3", "0_1", "0_4", "0_2", "0_0", "0_5"]),
            &clients,
        );
        assert!(active(&a, 1).is_superset(&ids(&["0_0", "0_1"])));
        assert!(active(&a, 2).is_superset(&ids(&["0_2", "0_3"])));
    }

    #[test]
    fn should_assign_new_tasks_to_new_client_when_previous_tasks_assigned_to_old_clients() {
        let clients = [
            with_active(1, 1, &["0_2", "0_1"]),
            with_active(2, 1, &["0_0", "0_3"]),
            client(3, 1),
        ];
        let a = assign(
            0,
            &stateless(&["0_3", "0_1", "0_4", "0_2", "0_0", "0_5"]),
            &clients,
        );
        assert!(active(&a, 1).is_superset(&ids(&["0_2", "0_1"])));
        assert!(active(&a, 2).is_superset(&ids(&["0_0", "0_3"])));
        assert!(active(&a, 3).is_superset(&ids(&["0_4", "0_5"])));
    }

    const TWELVE: [&str; 12] = [
        "0_0", "1_0", "0_1", "0_2", "1_1", "2_0", "0_3", "1_2", "2_1", "1_3", "2_2", "2_3",
    ];

    #[test]
    fn should_assign_tasks_not_previously_active_to_new_client() {
        let clients = [
            with_active(1, 1, &["0_1", "1_2", "1_3"])
                .with_previous_standby_tasks(ids(&["0_0", "1_1", "2_0", "2_1", "2_3"])),
            with_active(2, 1, &["0_0", "1_1", "2_2"]).with_previous_standby_tasks(ids(&[
                "0_1", "1_0", "0_2", "2_0", "0_3", "1_2", "2_1", "1_3", "2_3",
            ])),
            with_active(3, 1, &["2_0", "2_1", "2_3"])
                .with_previous_standby_tasks(ids(&["0_2", "1_2"])),
            client(4, 1).with_previous_standby_tasks(ids(&TWELVE)),
        ];
        let a = assign(0, &stateless(&TWELVE), &clients);
        assert_eq!(active(&a, 1), ids(&["0_1", "1_2", "1_3"]));
        assert_eq!(active(&a, 2), ids(&["0_0", "1_1", "2_2"]));
        assert_eq!(active(&a, 3), ids(&["2_0", "2_1", "2_3"]));
        assert_eq!(active(&a, 4), ids(&["0_2", "0_3", "1_0"]));
    }

    #[test]
    fn should_assign_tasks_not_previously_active_to_multiple_new_clients() {
        let clients = [
            with_active(1, 1, &["0_1", "1_2", "1_3"])
                .with_previous_standby_tasks(ids(&["0_0", "1_1", "2_0", "2_1", "2_3"])),
            with_active(2, 1, &["0_0", "1_1", "2_2"]).with_previous_standby_tasks(ids(&[
                "0_1", "1_0", "0_2", "2_0", "0_3", "1_2", "2_1", "1_3", "2_3",
            ])),
            client(3, 1).with_previous_standby_tasks(ids(&["2_0", "2_1", "2_3"])),
            client(4, 1).with_previous_standby_tasks(ids(&["0_2", "0_3", "1_0"])),
        ];
        let a = assign(0, &stateless(&TWELVE), &clients);
        assert_eq!(active(&a, 1), ids(&["0_1", "1_2", "1_3"]));
        assert_eq!(active(&a, 2), ids(&["0_0", "1_1", "2_2"]));
        assert_eq!(active(&a, 3), ids(&["2_0", "2_1", "2_3"]));
        assert_eq!(active(&a, 4), ids(&["0_2", "0_3", "1_0"]));
    }

    #[test]
    fn should_assign_tasks_to_new_client() {
        let a = assign(
            0,
            &stateless(&["0_1", "0_2"]),
            &[with_active(1, 1, &["0_1", "0_2"]), client(2, 1)],
        );
        assert_eq!(active(&a, 1).len(), 1);
        assert_eq!(active(&a, 1), ids(&["0_1"]));
        assert_eq!(active(&a, 2), ids(&["0_2"]));
    }

    #[test]
    fn should_assign_tasks_to_new_client_without_flipping_assignment_between_existing_clients() {
        let clients = [
            with_active(1, 1, &["0_0", "0_1", "0_2"]),
            with_active(2, 1, &["0_3", "0_4", "0_5"]),
            client(3, 1),
        ];
        let a = assign(
            0,
            &stateless(&["0_0", "0_1", "0_2", "0_3", "0_4", "0_5"]),
            &clients,
        );
        assert!(active(&a, 1).is_subset(&ids(&["0_0", "0_1", "0_2"])));
        assert_eq!(active(&a, 1).len(), 2);
        assert!(active(&a, 2).is_subset(&ids(&["0_3", "0_4", "0_5"])));
        assert_eq!(active(&a, 2).len(), 2);
        assert_eq!(active(&a, 3).len(), 2);
        assert_eq!(active(&a, 3), ids(&["0_2", "0_5"]));
    }

    #[test]
    fn should_assign_tasks_to_new_client_without_flipping_assignment_between_existing_and_bounced_clients()
     {
        let clients = [
            with_active(1, 1, &["0_0", "0_1", "0_2", "0_6"]),
            client(2, 1).with_previous_standby_tasks(ids(&["0_3", "0_4", "0_5"])),
            client(3, 1),
        ];
        let a = assign(
            0,
            &stateless(&["0_0", "0_1", "0_2", "0_3", "0_4", "0_5", "0_6"]),
            &clients,
        );
        assert!(active(&a, 1).is_disjoint(&ids(&["0_3", "0_4", "0_5"])));
        assert!(active(&a, 1).len() >= 2);
        assert!(active(&a, 2).is_disjoint(&ids(&["0_0", "0_1", "0_2"])));
        assert!(active(&a, 2).len() >= 2);
        // Kafka's legacy test asserts 2 for the new client; with Kafka 4.4's
        // shares of ⌈7 / 3⌉ = 3, pid-1 keeps three and pid-2 takes its three
        // warm tasks, so the new client gets 1 (as Kafka 4.4.0's own class).
        assert_eq!(active(&a, 1), ids(&["0_0", "0_1", "0_2"]));
        assert_eq!(active(&a, 2), ids(&["0_3", "0_4", "0_5"]));
        assert_eq!(active(&a, 3), ids(&["0_6"]));
    }

    #[test]
    fn should_assign_multiple_standbys() {
        let tasks = [
            TaskInfo::stateful(t(0, 0)),
            TaskInfo::stateless(t(0, 1)),
            TaskInfo::stateless(t(0, 2)),
        ];
        let clients: Vec<_> = (1..=4).map(|n| client(n, 1)).collect();
        let a = assign(3, &tasks, &clients);
        assert!(standby(&a, 1).is_empty());
        assert_eq!(standby(&a, 2), ids(&["0_0"]));
        assert_eq!(standby(&a, 3), ids(&["0_0"]));
        assert_eq!(standby(&a, 4), ids(&["0_0"]));
    }

    #[test]
    fn large_assignment_should_terminate_within_acceptable_time() {
        let tasks: Vec<TaskInfo> = (0..10)
            .flat_map(|s| (0..30).map(move |p| TaskInfo::stateful(t(s, p))))
            .collect();
        let clients: Vec<_> = (1..=20).map(|n| client(n, 50)).collect();
        let a = assign(2, &tasks, &clients);
        assert_eq!(all_active(&a).len(), 300);
        assert_eq!(all_standby(&a).len(), 600);
        assert_valid(&tasks, &clients, 2, &a).unwrap();
    }

    // The per-thread split: StreamsPartitionAssignorTest.

    fn on_client(
        stateful_active: &[&str],
        standby: &[&str],
        stateless_active: &[&str],
    ) -> KafkaStreamsAssignment {
        KafkaStreamsAssignment {
            process_id: "pid-1".to_owned(),
            active: &ids(stateful_active) | &ids(stateless_active),
            stateful_active: ids(stateful_active),
            standby: ids(standby),
        }
    }

    fn thread(name: &str, previous: &[&str]) -> StreamThreadState {
        StreamThreadState::new(name).with_previous_tasks(ids(previous))
    }

    fn active_by_thread(
        split: &BTreeMap<String, ThreadAssignment>,
    ) -> BTreeMap<&str, BTreeSet<TaskId>> {
        split
            .iter()
            .map(|(name, a)| (name.as_str(), a.active_tasks().clone()))
            .collect()
    }

    const EIGHT: [&str; 8] = ["0_0", "0_1", "0_2", "0_3", "1_0", "1_1", "1_2", "1_3"];

    fn previous_threads() -> Vec<StreamThreadState> {
        vec![
            thread("consumer1", &["0_0", "1_1", "1_3"]),
            thread("consumer2", &["0_3", "1_0"]),
            thread("consumer3", &["0_1", "0_2", "1_2"]),
        ]
    }

    #[test]
    fn should_produce_sticky_and_balanced_assignment_when_nothing_changes() {
        let split = on_client(&EIGHT, &[], &[])
            .assign_tasks_to_threads(&previous_threads())
            .unwrap();
        let expected: BTreeMap<&str, BTreeSet<TaskId>> = [
            ("consumer1", ids(&["0_0", "1_1", "1_3"])),
            ("consumer2", ids(&["0_3", "1_0"])),
            ("consumer3", ids(&["0_1", "0_2", "1_2"])),
        ]
        .into();
        assert_eq!(active_by_thread(&split), expected);
    }

    #[test]
    fn should_produce_sticky_and_balanced_assignment_when_new_tasks_are_added() {
        let mut tasks = EIGHT.to_vec();
        tasks.push("2_0");
        let split = on_client(&tasks, &[], &[])
            .assign_tasks_to_threads(&previous_threads())
            .unwrap();
        let expected: BTreeMap<&str, BTreeSet<TaskId>> = [
            ("consumer1", ids(&["0_0", "1_1", "1_3"])),
            ("consumer2", ids(&["0_3", "1_0", "2_0"])),
            ("consumer3", ids(&["0_1", "0_2", "1_2"])),
        ]
        .into();
        assert_eq!(active_by_thread(&split), expected);
    }

    #[test]
    fn should_produce_maximally_sticky_assignment_when_member_leaves() {
        let threads = &previous_threads()[..2];
        let split = on_client(&EIGHT, &[], &[])
            .assign_tasks_to_threads(threads)
            .unwrap();
        let by_thread = active_by_thread(&split);
        assert!(by_thread["consumer1"].is_superset(&ids(&["0_0", "1_1", "1_3"])));
        assert!(by_thread["consumer2"].is_superset(&ids(&["0_3", "1_0"])));
        assert_eq!(by_thread["consumer1"].len(), 4);
        assert_eq!(by_thread["consumer2"].len(), 4);
        assert_eq!(by_thread["consumer1"], ids(&["0_0", "0_1", "1_1", "1_3"]));
    }

    #[test]
    fn should_produce_sticky_enough_assignment_when_new_member_joins() {
        let mut threads = previous_threads();
        threads.push(thread("consumer4", &[]));
        let split = on_client(&EIGHT, &[], &[])
            .assign_tasks_to_threads(&threads)
            .unwrap();
        let by_thread = active_by_thread(&split);
        assert!(ids(&["0_0", "1_1", "1_3"]).is_superset(&by_thread["consumer1"]));
        assert!(ids(&["0_1", "0_2", "1_2"]).is_superset(&by_thread["consumer3"]));
        assert!(by_thread["consumer2"].is_superset(&ids(&["0_3", "1_0"])));
        for name in ["consumer1", "consumer2", "consumer3", "consumer4"] {
            assert_eq!(by_thread[name].len(), 2, "{name}");
        }
        assert_eq!(by_thread["consumer4"], ids(&["1_2", "1_3"]));
    }

    #[test]
    fn should_interleave_tasks_by_group_id_during_new_assignment() {
        let tasks = [
            "2_1", "0_3", "1_0", "0_0", "1_2", "0_2", "2_0", "0_1", "1_1",
        ];
        let threads = [
            thread("consumer1", &[]),
            thread("consumer2", &[]),
            thread("consumer3", &[]),
        ];
        let split = on_client(&tasks, &[], &[])
            .assign_tasks_to_threads(&threads)
            .unwrap();
        let expected: BTreeMap<&str, BTreeSet<TaskId>> = [
            ("consumer1", ids(&["0_0", "0_3", "1_2"])),
            ("consumer2", ids(&["0_1", "1_0", "2_0"])),
            ("consumer3", ids(&["0_2", "1_1", "2_1"])),
        ]
        .into();
        assert_eq!(active_by_thread(&split), expected);
    }

    #[test]
    fn threads_share_load_across_active_standby_and_stateless_rounds() {
        // 3 stateful active, 2 standby, 2 stateless over 2 threads: the
        // rounds share the running load, so each thread ends with 3 or 4.
        let client = on_client(&["1_0", "1_1", "1_2"], &["1_3", "1_4"], &["0_0", "0_1"]);
        let threads = [thread("t1", &["1_2", "1_3"]), thread("t2", &["1_0"])];
        let split = client.assign_tasks_to_threads(&threads).unwrap();
        // Stateful active (3 tasks, min 1): t1 takes back 1_2, t2 1_0, and
        // 1_1 goes to the first thread at min, t1. Standby (5 in all, min
        // 2): t1 is at 2 and remembers 1_3; t2 takes the smallest task,
        // 1_3, to reach 2; 1_4 goes to t1 (1_3 is gone). Stateless (7, min
        // 3): t2 takes 0_0 to reach 3, 0_1 goes to t1.
        assert_eq!(split["t1"].active_tasks(), &ids(&["0_1", "1_1", "1_2"]));
        assert_eq!(split["t1"].standby_tasks(), &ids(&["1_4"]));
        assert_eq!(split["t2"].active_tasks(), &ids(&["0_0", "1_0"]));
        assert_eq!(split["t2"].standby_tasks(), &ids(&["1_3"]));
    }

    // Join, leave and crash of one of 2 to 4 clients, 4 partitions of 2
    // sub-topologies (0 stateless, 1 stateful, as in a word count).

    fn word_count_tasks() -> Vec<TaskInfo> {
        (0..4)
            .map(|p| TaskInfo::stateless(t(0, p)))
            .chain((0..4).map(|p| TaskInfo::stateful(t(1, p))))
            .collect()
    }

    /// The clients as they come out of `a`: what each had is what it was
    /// assigned.
    fn after(a: &TaskAssignment, threads: u32) -> Vec<KafkaStreamsState> {
        a.clients()
            .values()
            .map(|c| {
                KafkaStreamsState::new(c.process_id(), threads)
                    .with_previous_active_tasks(c.active_tasks().iter().copied())
                    .with_previous_standby_tasks(c.standby_tasks().iter().copied())
            })
            .collect()
    }

    fn spread(a: &TaskAssignment) -> (usize, usize) {
        let counts: Vec<usize> = a
            .clients()
            .values()
            .map(|c| c.active_tasks().len())
            .collect();
        (
            counts.iter().copied().min().unwrap(),
            counts.iter().copied().max().unwrap(),
        )
    }

    #[test]
    fn join_of_one_client_moves_only_the_tasks_it_takes() {
        let tasks = word_count_tasks();
        for threads in [1, 2] {
            for n in 1..=3 {
                let clients: Vec<_> = (1..=n).map(|i| client(i, threads)).collect();
                let before = assign(0, &tasks, &clients);
                let mut clients = after(&before, threads);
                clients.push(client(n + 1, threads));
                let now = assign(0, &tasks, &clients);
                let joined = pid(n + 1);
                let mut moved = 0;
                for task in &tasks {
                    let (old, new) = (
                        before.active_owner(task.id()).unwrap(),
                        now.active_owner(task.id()).unwrap(),
                    );
                    if old != new {
                        assert_eq!(
                            new,
                            joined,
                            "{} moved from {old} to {new} ({n} clients)",
                            task.id()
                        );
                        moved += 1;
                    }
                }
                assert_eq!(moved, now.client(&joined).unwrap().active_tasks().len());
                assert_eq!(
                    moved,
                    8 / (n as usize + 1),
                    "{n} clients of {threads} threads"
                );
                let (min, max) = spread(&now);
                assert!(max - min <= 1, "{n} clients: {min}..{max}");
            }
        }
    }

    #[test]
    fn leave_of_one_client_moves_only_its_tasks() {
        let tasks = word_count_tasks();
        for (n, threads) in (2..=4).flat_map(|n| [(n, 1), (n, 2)]) {
            for leaving in 1..=n {
                let clients: Vec<_> = (1..=n).map(|i| client(i, threads)).collect();
                let before = assign(0, &tasks, &clients);
                let clients: Vec<_> = after(&before, threads)
                    .into_iter()
                    .filter(|c| c.process_id() != pid(leaving))
                    .collect();
                let now = assign(0, &tasks, &clients);
                for c in &clients {
                    assert!(
                        now.client(c.process_id())
                            .unwrap()
                            .active_tasks()
                            .is_superset(c.previous_active_tasks()),
                        "{} lost a task when pid-{leaving} of {n} left",
                        c.process_id()
                    );
                }
                let (min, max) = spread(&now);
                assert!(
                    max - min <= 1,
                    "{n} clients, pid-{leaving} left: {min}..{max}"
                );
            }
        }
    }

    #[test]
    fn crash_of_one_client_moves_its_stateful_tasks_to_their_warm_standbys() {
        let tasks = word_count_tasks();
        for (n, threads) in (2..=4).flat_map(|n| [(n, 1), (n, 2)]) {
            for crashed in 1..=n {
                let clients: Vec<_> = (1..=n).map(|i| client(i, threads)).collect();
                let before = assign(1, &tasks, &clients);
                let clients: Vec<_> = after(&before, threads)
                    .into_iter()
                    .filter(|c| c.process_id() != pid(crashed))
                    .collect();
                let now = assign(1, &tasks, &clients);
                assert_valid(&tasks, &clients, 1, &now).unwrap();
                for c in &clients {
                    assert!(
                        now.client(c.process_id())
                            .unwrap()
                            .active_tasks()
                            .is_superset(c.previous_active_tasks()),
                        "{} lost a task when pid-{crashed} of {n} crashed",
                        c.process_id()
                    );
                }
                let lost = before.client(&pid(crashed)).unwrap();
                for &task in lost.active_tasks().iter().filter(|t| t.subtopology == 1) {
                    let warm = before.standby_owners(task);
                    let owner = now.active_owner(task).unwrap();
                    assert!(
                        warm.contains(&owner),
                        "{task} went to {owner}, not to its standby {warm:?} \
                         (pid-{crashed} of {n} crashed)"
                    );
                }
            }
        }
    }

    #[test]
    fn a_restarted_client_with_warm_standbys_takes_the_stateful_tasks() {
        let tasks = [
            TaskInfo::stateless(t(0, 0)),
            TaskInfo::stateless(t(0, 1)),
            TaskInfo::stateful(t(1, 0)),
            TaskInfo::stateful(t(1, 1)),
        ];
        let a = KafkaStreamsState::new("a", 1)
            .with_previous_active_tasks(tasks.iter().map(TaskInfo::id));
        let b = KafkaStreamsState::new("b", 1).with_previous_standby_tasks([t(1, 0), t(1, 1)]);
        let out = assign(1, &tasks, &[b.clone(), a.clone()]);
        assert_eq!(out.active_owner(t(0, 0)), Some("a"));
        assert_eq!(out.active_owner(t(1, 0)), Some("b"));
        assert_eq!(out.active_owner(t(1, 1)), Some("b"));
        assert_eq!(out.standby_owners(t(1, 1)), ["a"]);
        assert_eq!(out.standby_owners(t(0, 0)), Vec::<&str>::new());
        assert_eq!(out, assign(1, &tasks, &[a, b]));
    }

    /// Kafka 4.4.0's own `StickyTaskAssignor` on 400 seeded inputs on which
    /// its hash-order iteration cannot matter (see
    /// `compat/assignor/AssignorOracle.java`; `compat/assignor/regenerate`
    /// reruns it): every assignment equal.
    #[test]
    fn matches_kafka_4_4_on_the_golden_cases() {
        let golden = include_str!("../../../compat/assignor/golden.txt");
        let tasks_of = |csv: &str| -> Vec<TaskId> {
            csv.split(',')
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect()
        };
        let mut cases = 0;
        for block in golden.split("end\n").filter(|b| !b.trim().is_empty()) {
            let mut name = "";
            let mut standbys = 0;
            let mut tasks = Vec::new();
            let mut clients = Vec::new();
            let mut expected = BTreeMap::new();
            for line in block.lines() {
                let words: Vec<&str> = line.split(' ').collect();
                match words[0] {
                    "case" => name = words[1],
                    "standbys" => standbys = words[1].parse().unwrap(),
                    "tasks" => {
                        for task in &words[1..] {
                            let (id, kind) = task.split_once(':').unwrap();
                            tasks.push(TaskInfo::new(id.parse().unwrap(), kind == "s"));
                        }
                    }
                    "client" => clients.push(
                        client(words[1].parse().unwrap(), words[2].parse().unwrap())
                            .with_previous_active_tasks(tasks_of(&words[3][2..]))
                            .with_previous_standby_tasks(tasks_of(&words[4][2..])),
                    ),
                    "expect" => {
                        let active: BTreeSet<TaskId> =
                            tasks_of(&words[2][2..]).into_iter().collect();
                        let standby: BTreeSet<TaskId> =
                            tasks_of(&words[3][2..]).into_iter().collect();
                        expected.insert(pid(words[1].parse().unwrap()), (active, standby));
                    }
                    other => panic!("unknown line `{other}` in golden.txt"),
                }
            }
            let got: BTreeMap<String, (BTreeSet<TaskId>, BTreeSet<TaskId>)> =
                assign(standbys, &tasks, &clients)
                    .clients()
                    .iter()
                    .map(|(id, c)| {
                        (
                            id.clone(),
                            (c.active_tasks().clone(), c.standby_tasks().clone()),
                        )
                    })
                    .collect();
            assert_eq!(got, expected, "case {name}");
            cases += 1;
        }
        assert_eq!(cases, 400);
    }

    // Bad input.

    #[test]
    fn bad_input_is_a_typed_error_that_says_what_to_do() {
        let tasks = stateful(&["0_0"]);
        let cases: Vec<(
            Result<TaskAssignment, TaskAssignmentError>,
            TaskAssignmentError,
            &str,
        )> = vec![
            (
                StickyTaskAssignor::new(0).assign(&tasks, &[]),
                TaskAssignmentError::NoClients { tasks: 1 },
                "cannot assign 1 tasks: no KafkaStreams instance is in the group; start at least \
                 one instance of the application with num.stream.threads >= 1",
            ),
            (
                StickyTaskAssignor::new(0).assign(&tasks, &[client(1, 1), client(2, 0)]),
                TaskAssignmentError::NoProcessingThreads { process_id: pid(2) },
                "KafkaStreams instance `pid-2` has num.stream.threads = 0 and cannot run tasks: \
                 leave it out of the assignment (an instance without stream threads does not join \
                 the group) or give it at least one stream thread",
            ),
            (
                StickyTaskAssignor::new(0).assign(&tasks, &[client(1, 1), client(1, 2)]),
                TaskAssignmentError::DuplicateProcessId { process_id: pid(1) },
                "process id `pid-1` is given for two KafkaStreams instances: each instance needs \
                 its own process id",
            ),
            (
                StickyTaskAssignor::new(0).assign(
                    &[TaskInfo::stateful(t(0, 0)), TaskInfo::stateless(t(0, 0))],
                    &[client(1, 1)],
                ),
                TaskAssignmentError::DuplicateTask { task: t(0, 0) },
                "task 0_0 is listed twice: list each task once, with its sub-topology's stateful flag",
            ),
        ];
        for (result, error, message) in cases {
            assert_eq!(result.unwrap_err(), error);
            assert_eq!(error.to_string(), message);
        }

        let empty = StickyTaskAssignor::new(1).assign(&[], &[]).unwrap();
        assert!(empty.clients().is_empty());
        let idle = StickyTaskAssignor::new(1)
            .assign(&[], &[client(1, 1)])
            .unwrap();
        assert!(idle.client(&pid(1)).unwrap().is_empty());

        let one = on_client(&["0_0"], &[], &[]);
        let error = one.assign_tasks_to_threads(&[]).unwrap_err();
        assert_eq!(
            error,
            TaskAssignmentError::NoStreamThreads {
                process_id: pid(1),
                tasks: 1
            }
        );
        assert_eq!(
            error.to_string(),
            "KafkaStreams instance `pid-1` was assigned 1 tasks but no stream thread to run them: \
             pass its stream threads to assign_tasks_to_threads"
        );
        let error = one
            .assign_tasks_to_threads(&[thread("t", &[]), thread("t", &[])])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "stream thread `t` of KafkaStreams instance `pid-1` is given twice: each thread needs its own name"
        );
        assert!(
            on_client(&[], &[], &[])
                .assign_tasks_to_threads(&[])
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_task_claimed_by_two_clients_stays_with_the_one_that_sorts_last() {
        let tasks = stateless(&["0_0", "0_1"]);
        let a = assign(
            0,
            &tasks,
            &[with_active(2, 1, &["0_0"]), with_active(1, 1, &["0_0"])],
        );
        assert_eq!(a.active_owner(t(0, 0)), Some("pid-2"));
        assert_eq!(a.active_owner(t(0, 1)), Some("pid-1"));
    }

    #[test]
    fn previous_tasks_that_no_longer_exist_are_ignored() {
        let a = assign(
            0,
            &stateless(&["0_0"]),
            &[with_active(1, 1, &["5_5"]), with_active(2, 1, &["0_0"])],
        );
        assert_eq!(a.active_owner(t(0, 0)), Some("pid-2"));
        assert!(active(&a, 1).is_empty());
    }

    // The invariants, for random inputs.

    /// Checks what every assignment must satisfy; `Err` says what broke.
    fn assert_valid(
        tasks: &[TaskInfo],
        clients: &[KafkaStreamsState],
        standbys: u32,
        a: &TaskAssignment,
    ) -> Result<(), String> {
        let known: BTreeMap<TaskId, bool> =
            tasks.iter().map(|t| (t.id(), t.is_stateful())).collect();
        let names: BTreeSet<&str> = clients.iter().map(KafkaStreamsState::process_id).collect();
        let got: BTreeSet<&str> = a.clients().keys().map(String::as_str).collect();
        if names != got {
            return Err(format!("clients {names:?}, assignment for {got:?}"));
        }
        let total_capacity: u64 = clients
            .iter()
            .map(|c| u64::from(c.num_processing_threads()))
            .sum();
        let expected_standbys = (standbys as usize).min(clients.len().saturating_sub(1));
        for (&task, &stateful) in &known {
            let actives = a
                .clients()
                .values()
                .filter(|c| c.active_tasks().contains(&task))
                .count();
            if actives != 1 {
                return Err(format!("{task} has {actives} active owners"));
            }
            let copies = a.standby_owners(task).len();
            let expected = if stateful { expected_standbys } else { 0 };
            if copies != expected {
                return Err(format!("{task} has {copies} standbys, expected {expected}"));
            }
            let short = a.standby_shortfalls().iter().any(|s| s.task == task);
            if short != (copies < standbys as usize && stateful) {
                return Err(format!(
                    "{task}: shortfall listed {short} with {copies} of {standbys}"
                ));
            }
        }
        for c in a.clients().values() {
            if let Some(task) = c.active_tasks().intersection(c.standby_tasks()).next() {
                return Err(format!(
                    "{} holds {task} as active and standby",
                    c.process_id()
                ));
            }
            if let Some(task) = c
                .active_tasks()
                .iter()
                .chain(c.standby_tasks())
                .find(|t| !known.contains_key(t))
            {
                return Err(format!("{} was given unknown task {task}", c.process_id()));
            }
            if c.stateful_active
                .iter()
                .any(|t| known.get(t) != Some(&true))
            {
                return Err(format!("{}: stateful_active is wrong", c.process_id()));
            }
            let threads = u64::from(
                clients
                    .iter()
                    .find(|k| k.process_id() == c.process_id())
                    .unwrap()
                    .num_processing_threads(),
            );
            let share = (threads * known.len() as u64).div_ceil(total_capacity.max(1));
            let bound = threads.max(share);
            if c.active_tasks().len() as u64 > bound {
                return Err(format!(
                    "{} has {} active tasks, above max(threads {threads}, share {share})",
                    c.process_id(),
                    c.active_tasks().len()
                ));
            }
        }
        Ok(())
    }

    #[derive(Debug, Clone)]
    struct Input {
        tasks: Vec<TaskInfo>,
        clients: Vec<KafkaStreamsState>,
        standbys: u32,
    }

    fn input(equal_threads: bool) -> impl Strategy<Value = Input> {
        let topology = prop::collection::vec((1..=6_u32, any::<bool>()), 1..=3);
        let shape = (topology, 1..=5_usize, 1..=3_u32, 0..=3_u32);
        shape
            .prop_flat_map(move |(subtopologies, n, threads, standbys)| {
                let tasks: Vec<TaskInfo> = subtopologies
                    .iter()
                    .enumerate()
                    .flat_map(|(s, &(partitions, stateful))| {
                        (0..partitions)
                            .map(move |p| TaskInfo::new(TaskId::new(s as u32, p), stateful))
                    })
                    .collect();
                let count = tasks.len();
                let per_client_threads = prop::collection::vec(
                    if equal_threads {
                        (threads..=threads).boxed()
                    } else {
                        (1..=4_u32).boxed()
                    },
                    n,
                );
                // Per task: a previous active owner (n = none), a second claim,
                // and a bit mask of previous standby owners.
                let history = prop::collection::vec((0..=n, 0..=n * 3, 0..(1_u32 << n)), count);
                (
                    Just(tasks),
                    per_client_threads,
                    history,
                    Just(standbys),
                    any::<bool>(),
                )
            })
            .prop_map(|(tasks, threads, history, standbys, gone)| {
                let mut clients: Vec<KafkaStreamsState> = threads
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| KafkaStreamsState::new(format!("c{i}"), k))
                    .collect();
                for (task, &(owner, second, mask)) in tasks.iter().zip(&history) {
                    if let Some(c) = clients.get_mut(owner) {
                        *c = c.clone().with_previous_active_tasks([task.id()]);
                    }
                    if let Some(c) = clients.get_mut(second) {
                        *c = c.clone().with_previous_active_tasks([task.id()]);
                    }
                    for (i, c) in clients.iter_mut().enumerate() {
                        if mask & (1 << i) != 0 {
                            *c = c.clone().with_previous_standby_tasks([task.id()]);
                        }
                    }
                }
                if gone {
                    // A task of a sub-topology that no longer exists.
                    clients[0] = clients[0]
                        .clone()
                        .with_previous_active_tasks([TaskId::new(99, 0)]);
                }
                Input {
                    tasks,
                    clients,
                    standbys,
                }
            })
    }

    fn assign_input(input: &Input) -> TaskAssignment {
        StickyTaskAssignor::new(input.standbys)
            .assign(&input.tasks, &input.clients)
            .unwrap()
    }

    fn check_valid(input: &Input) -> Result<(), TestCaseError> {
        let a = assign_input(input);
        assert_valid(&input.tasks, &input.clients, input.standbys, &a).map_err(TestCaseError::fail)
    }

    fn check_order_independent(input: &Input) -> Result<(), TestCaseError> {
        let mut reversed = input.clone();
        reversed.tasks.reverse();
        reversed.clients.reverse();
        prop_assert_eq!(assign_input(&reversed), assign_input(input));
        Ok(())
    }

    fn check_spread(input: &Input) -> Result<(), TestCaseError> {
        let threads: u32 = input
            .clients
            .iter()
            .map(KafkaStreamsState::num_processing_threads)
            .sum();
        if input.tasks.len() >= threads as usize {
            let mut fresh = input.clone();
            for c in &mut fresh.clients {
                *c = KafkaStreamsState::new(c.process_id(), c.num_processing_threads());
            }
            let (min, max) = spread(&assign_input(&fresh));
            prop_assert!(max - min <= 1, "active counts {}..{}", min, max);
        }
        Ok(())
    }

    fn check_kept(input: &Input) -> Result<(), TestCaseError> {
        let a = assign_input(input);
        let known: BTreeSet<TaskId> = input.tasks.iter().map(TaskInfo::id).collect();
        let threads: u64 = input
            .clients
            .iter()
            .map(|c| u64::from(c.num_processing_threads()))
            .sum();
        let task_count = known.len() as u64;
        // A task claimed twice counts for the client that sorts last.
        let mut sorted: Vec<&KafkaStreamsState> = input.clients.iter().collect();
        sorted.sort_by_key(|c| c.process_id());
        let mut claims: BTreeMap<TaskId, &str> = BTreeMap::new();
        for c in &sorted {
            for task in c.previous_active_tasks().intersection(&known) {
                claims.insert(*task, c.process_id());
            }
        }
        for c in &sorted {
            let own: BTreeSet<TaskId> = claims
                .iter()
                .filter(|(_, owner)| **owner == c.process_id())
                .map(|(task, _)| *task)
                .collect();
            let now = a.client(c.process_id()).unwrap().active_tasks();
            let kept = now.intersection(&own).count() as u64;
            let quota = (task_count * u64::from(c.num_processing_threads())).div_ceil(threads);
            prop_assert!(
                kept >= quota.min(own.len() as u64),
                "{} kept {} of {:?} (quota {})",
                c.process_id(),
                kept,
                own,
                quota
            );
        }
        Ok(())
    }

    fn check_threads(
        input: &Input,
        thread_count: usize,
        history: &[usize],
    ) -> Result<(), TestCaseError> {
        for c in assign_input(input).clients().values() {
            let mut threads: Vec<StreamThreadState> = (0..thread_count)
                .map(|i| StreamThreadState::new(format!("t{i}")))
                .collect();
            for (task, &who) in input.tasks.iter().zip(history) {
                if let Some(th) = threads.get_mut(who) {
                    *th = th.clone().with_previous_tasks([task.id()]);
                }
            }
            let split = c.assign_tasks_to_threads(&threads).unwrap();
            prop_assert_eq!(split.len(), thread_count);
            let mut active = BTreeSet::new();
            let mut standby = BTreeSet::new();
            for th in split.values() {
                for task in th.active_tasks() {
                    prop_assert!(active.insert(*task), "{} on two threads", task);
                }
                for task in th.standby_tasks() {
                    prop_assert!(standby.insert(*task), "{} on two threads", task);
                }
            }
            prop_assert_eq!(&active, c.active_tasks());
            prop_assert_eq!(&standby, c.standby_tasks());
            let loads: Vec<usize> = split
                .values()
                .map(|th| th.active_tasks().len() + th.standby_tasks().len())
                .collect();
            let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
            prop_assert!(max - min <= 1, "thread loads {:?}", loads);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn every_assignment_is_valid_and_balanced(input in input(false)) {
            check_valid(&input)?;
        }

        #[test]
        fn the_result_does_not_depend_on_input_order(input in input(false)) {
            check_order_independent(&input)?;
        }

        /// Without previous tasks, with equal thread counts and at least
        /// one task per thread, active counts differ by at most one.
        #[test]
        fn from_scratch_with_equal_threads_active_counts_differ_by_at_most_one(
            input in input(true),
        ) {
            check_spread(&input)?;
        }

        #[test]
        fn each_client_keeps_its_previous_tasks_up_to_its_quota(input in input(false)) {
            check_kept(&input)?;
        }

        #[test]
        fn threads_get_every_task_once_and_balanced_loads(
            input in input(false),
            thread_count in 1..=4_usize,
            history in prop::collection::vec(0..5_usize, 0..40),
        ) {
            check_threads(&input, thread_count, &history)?;
        }
    }
}
