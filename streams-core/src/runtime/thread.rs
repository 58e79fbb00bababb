//! A stream thread (Kafka's `StreamThread`): one consumer in the
//! application's group, one producer (transactional under
//! `exactly_once_v2`), a restore consumer, and the tasks the group gave
//! it. On the simulated cluster it is stepped, not spawned: each
//! [`StreamThread::step`] polls once, acts on a rebalance, restores new
//! tasks' stores, processes what was fetched, punctuates and commits when
//! `commit.interval.ms` has passed on the clients' clock.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use streams_clients::{
    ClientConfig, ClientSupplier, Clock, Consumer, Producer, Rebalance, TopicPartition,
};

use crate::config::StreamsConfig;
use crate::engine::{GlobalStores, StreamTask};
use crate::runtime::config::{ProcessingGuarantee, RuntimeConfig};
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::metadata::{TaskMetadata, TopologyMetadata};
use crate::runtime::restore::{RestoreListener, Restorer};
use crate::runtime::streams_assignor::{OwnedTasks, StreamsAssignor, assigned_tasks};
use crate::runtime::task::{Task, changelog_partitions, source_changelog_partitions, to_raw};
use crate::runtime::task_id::TaskId;
use crate::topology::Topology;

/// A stream thread's life, Kafka's `StreamThread.State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadState {
    /// Made, not polled yet.
    Created,
    /// Joining the group, or between a revocation and the next assignment.
    PartitionsRevoked,
    /// Assigned; restoring its tasks' stores.
    PartitionsAssigned,
    /// Processing.
    Running,
    /// Closed.
    Dead,
}

/// What one step did, for the caller's idle check.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepOutcome {
    pub(crate) processed: usize,
    pub(crate) fetched: usize,
    pub(crate) rebalanced: bool,
    pub(crate) committed: bool,
}

/// A standby task: stores kept up to date from their changelogs.
#[derive(Debug)]
pub(crate) struct Standby {
    pub(crate) engine: StreamTask,
    pub(crate) meta: TaskMetadata,
    pub(crate) changelog_offsets: BTreeMap<TopicPartition, i64>,
}

/// A stream thread. See the [module docs](self).
pub(crate) struct StreamThread {
    pub(crate) name: String,
    state: ThreadState,
    consumer: Box<dyn Consumer>,
    producer: Box<dyn Producer>,
    restorer: Restorer,
    standby_consumer: Box<dyn Consumer>,
    clock: Arc<dyn Clock>,
    topology: Topology,
    streams_config: StreamsConfig,
    config: RuntimeConfig,
    metadata: Arc<TopologyMetadata>,
    pub(crate) tasks: BTreeMap<TaskId, Task>,
    /// Tasks revoked by the last rebalance, kept until the assignment says
    /// whether they stay (then they resume without restoring).
    suspended: BTreeMap<TaskId, Task>,
    pub(crate) standbys: BTreeMap<TaskId, Standby>,
    owned: Arc<Mutex<OwnedTasks>>,
    assignment_failure: Arc<Mutex<Option<crate::runtime::assignor::TaskAssignmentError>>>,
    last_commit_ms: i64,
    /// When repartition topics were last purged (never yet: the first
    /// commit purges, as Kafka's thread does on a real clock).
    last_purge_ms: Option<i64>,
    in_transaction: bool,
    /// Input partitions whose committed offset is pending in another
    /// producer's open transaction (KIP-447): paused, sought and resumed
    /// once the offset is stable.
    awaiting_offsets: BTreeSet<TopicPartition>,
    /// Shared with the tasks, which ask it for their sinks' partition
    /// counts.
    admin: Rc<RefCell<Box<dyn streams_clients::Admin>>>,
    /// The instance's global stores, which every task reads.
    globals: Option<GlobalStores>,
    clients: Arc<dyn ClientSupplier>,
    producer_config: ClientConfig,
    /// Under exactly-once, a producer made while the cluster could not be
    /// reached: its `init_transactions` is tried again before the thread
    /// processes (Kafka Streams retries it the same way).
    producer_needs_init: bool,
    /// Told of every change of `state` at once, even in the middle of a
    /// step (a `ThreadedKafkaStreams` shows it while the thread waits on
    /// the cluster).
    state_listener: Option<Box<dyn FnMut(ThreadState)>>,
}

impl std::fmt::Debug for StreamThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamThread")
            .field("name", &self.name)
            .field("state", &self.state)
            .field("tasks", &self.tasks.keys().collect::<Vec<_>>())
            .field("standbys", &self.standbys.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl StreamThread {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        index: usize,
        process_id: &str,
        topology: &Topology,
        streams_config: &StreamsConfig,
        config: &RuntimeConfig,
        metadata: Arc<TopologyMetadata>,
        clients: Arc<dyn ClientSupplier>,
        listener: Option<Arc<Mutex<dyn RestoreListener>>>,
        globals: Option<GlobalStores>,
    ) -> Result<Self> {
        let name = format!("{process_id}-StreamThread-{}", index + 1);
        let eos = config.guarantee == ProcessingGuarantee::ExactlyOnceV2;
        let isolation = if eos {
            "read_committed"
        } else {
            "read_uncommitted"
        };
        let mut consumer_config = ClientConfig::new()
            .set("client.id", format!("{name}-consumer"))
            .set("group.id", &config.application_id)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", isolation)
            .set("max.poll.records", config.max_poll_records.to_string());
        if let Some(ms) = &config.session_timeout_ms {
            consumer_config.insert("session.timeout.ms", ms.clone());
        }
        if let Some(ms) = &config.max_poll_interval_ms {
            consumer_config.insert("max.poll.interval.ms", ms.clone());
        }
        let client_err = |what: &str| {
            let what = format!("stream thread {name}: {what}");
            move |e| RuntimeError::client(what, e)
        };
        let mut consumer = clients
            .consumer(&consumer_config)
            .map_err(client_err("creating its consumer"))?;
        let restore_config = ClientConfig::new()
            .set("client.id", format!("{name}-restore-consumer"))
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", isolation);
        let restore_consumer = clients
            .consumer(&restore_config)
            .map_err(client_err("creating its restore consumer"))?;
        let standby_consumer = clients
            .consumer(
                &restore_config
                    .clone()
                    .set("client.id", format!("{name}-standby-consumer")),
            )
            .map_err(client_err("creating its standby consumer"))?;
        let mut producer_config = ClientConfig::new().set("client.id", format!("{name}-producer"));
        if eos {
            // Kafka Streams' transactional.id under exactly_once_v2, and its
            // override of the producer's transaction timeout (10 s, so that
            // a crashed instance's open transaction is aborted soon).
            producer_config.insert(
                "transactional.id",
                format!("{}-{process_id}-{}", config.application_id, index + 1),
            );
            producer_config.insert("transaction.timeout.ms", "10000");
        }
        let mut producer = clients
            .producer(&producer_config)
            .map_err(client_err("creating its producer"))?;
        if eos {
            producer
                .init_transactions()
                .map_err(client_err("initializing its transactional producer"))?;
        }
        let admin = clients
            .admin(&ClientConfig::new().set("client.id", format!("{name}-admin")))
            .map_err(client_err("creating its admin client"))?;
        let owned = Arc::new(Mutex::new(OwnedTasks::default()));
        let assignment_failure: Arc<Mutex<Option<crate::runtime::assignor::TaskAssignmentError>>> =
            Arc::new(Mutex::new(None));
        let assignor = Arc::new(StreamsAssignor {
            process_id: process_id.to_owned(),
            thread: name.clone(),
            metadata: metadata.clone(),
            num_standby_replicas: config.num_standby_replicas,
            owned: owned.clone(),
            failure: assignment_failure.clone(),
        });
        consumer
            .subscribe(&metadata.source_topics(), assignor)
            .map_err(client_err("subscribing to the source topics"))?;
        let clock = clients.clock();
        let now = clock.now_ms();
        Ok(StreamThread {
            name,

            state: ThreadState::Created,
            consumer,
            producer,
            restorer: Restorer::new(restore_consumer, listener),
            standby_consumer,
            clock,
            topology: topology.clone(),
            streams_config: streams_config.clone(),
            config: config.clone(),
            metadata,
            tasks: BTreeMap::new(),
            suspended: BTreeMap::new(),
            standbys: BTreeMap::new(),
            owned,
            assignment_failure,
            last_commit_ms: now,
            last_purge_ms: None,
            in_transaction: false,
            awaiting_offsets: BTreeSet::new(),
            admin: Rc::new(RefCell::new(admin)),
            globals,
            clients,
            producer_config,
            producer_needs_init: false,
            state_listener: None,
        })
    }

    fn set_state(&mut self, state: ThreadState) {
        if self.state != state {
            self.state = state;
            if let Some(listener) = &mut self.state_listener {
                listener(state);
            }
        }
    }

    /// Calls `listener` on every change of the thread's state, as it
    /// happens.
    pub(crate) fn set_state_listener(&mut self, listener: impl FnMut(ThreadState) + 'static) {
        self.state_listener = Some(Box::new(listener));
    }

    pub(crate) fn state(&self) -> ThreadState {
        self.state
    }

    fn eos(&self) -> bool {
        self.config.guarantee == ProcessingGuarantee::ExactlyOnceV2
    }

    /// One round: poll, rebalance, restore, process, punctuate, commit.
    /// A fenced producer or a refused commit (Kafka's
    /// `TaskMigratedException`) closes the tasks without committing and
    /// starts them again from the committed offsets, with a new producer.
    pub(crate) fn step(&mut self) -> Result<StepOutcome> {
        match self.step_inner() {
            Err(e) if e.is_task_migrated() => {
                self.recover_from_migration()?;
                Ok(StepOutcome {
                    rebalanced: true,
                    ..StepOutcome::default()
                })
            }
            other => other,
        }
    }

    /// Kafka Streams' handling of `TaskMigratedException`: the tasks are
    /// closed dirty (their uncommitted work is dropped, an open
    /// transaction aborted or already aborted by the coordinator), the
    /// producer is replaced (under exactly-once it was fenced), and the
    /// tasks the thread still owns start again: stores restored, input
    /// from the committed offsets. If the group moved on, the next poll
    /// reports the rebalance as usual.
    fn recover_from_migration(&mut self) -> Result<()> {
        let ids: Vec<TaskId> = self.tasks.keys().copied().collect();
        self.in_transaction = false;
        self.tasks.clear();
        self.replace_producer()?;
        let now = self.clock.now_ms();
        let assigned = self.consumer.assignment();
        for id in ids {
            let Some(meta) = self.metadata.tasks.get(&id).cloned() else {
                continue;
            };
            if !meta.partitions.iter().all(|tp| assigned.contains(tp)) {
                // Gone in a rebalance: the next poll says so.
                continue;
            }
            let engine = self.new_engine(id, now)?;
            let mut task = Task::new(engine, meta);
            self.restorer.restore(&mut task, self.consumer.as_ref())?;
            for tp in &task.meta.partitions {
                self.rewind_to_committed(tp)?;
            }
            self.tasks.insert(id, task);
        }
        self.last_commit_ms = now;
        Ok(())
    }

    /// Moves the position of `tp` back to its committed offset. While that
    /// offset is pending in an open transaction (KIP-447's unstable offset:
    /// another producer is about to commit a newer one) the partition is
    /// paused instead, and [`retry_awaiting_offsets`](Self::retry_awaiting_offsets)
    /// rewinds it once the offset is stable: starting from the old offset
    /// would process again what that transaction commits.
    fn rewind_to_committed(&mut self, tp: &TopicPartition) -> Result<()> {
        match self.consumer.committed(tp) {
            Ok(committed) => {
                self.consumer
                    .seek(tp, committed.unwrap_or(0))
                    .map_err(|e| RuntimeError::client(format!("seek {tp}"), e))?;
                if self.awaiting_offsets.remove(tp) {
                    self.consumer.pause(std::slice::from_ref(tp), false);
                }
                Ok(())
            }
            Err(streams_clients::ClientError::UnstableOffsetCommit { .. }) => {
                if self.awaiting_offsets.insert(tp.clone()) {
                    self.consumer.pause(std::slice::from_ref(tp), true);
                }
                Ok(())
            }
            Err(e) => Err(RuntimeError::client(
                format!("stream thread {}: committed offset of {tp}", self.name),
                e,
            )),
        }
    }

    /// Asks again for the committed offsets that were pending in a
    /// transaction (see [`rewind_to_committed`](Self::rewind_to_committed)).
    fn retry_awaiting_offsets(&mut self) -> Result<()> {
        let waiting: Vec<TopicPartition> = self.awaiting_offsets.iter().cloned().collect();
        for tp in waiting {
            self.rewind_to_committed(&tp)?;
        }
        Ok(())
    }

    /// A new producer in place of one that may be fenced (under
    /// exactly-once it is initialized: the coordinator aborts what the
    /// old one left open and fences it).
    fn replace_producer(&mut self) -> Result<()> {
        let name = self.name.clone();
        let producer = self.clients.producer(&self.producer_config).map_err(|e| {
            RuntimeError::client(format!("stream thread {name}: replacing its producer"), e)
        })?;
        self.producer = producer;
        self.producer_needs_init = self.eos();
        if self.eos() {
            self.init_producer()?;
        }
        Ok(())
    }

    /// Initializes the transactional producer made by
    /// [`replace_producer`](Self::replace_producer); returns whether it is
    /// ready. A cluster that cannot be reached (a timeout) leaves it for
    /// the next round instead of failing the thread, so that a broker
    /// that restarts does not take the instance down.
    fn init_producer(&mut self) -> Result<bool> {
        match self.producer.init_transactions() {
            Ok(()) => {
                self.producer_needs_init = false;
                Ok(true)
            }
            Err(e) if e.is_retriable() => Ok(false),
            Err(e) => Err(RuntimeError::client(
                format!("stream thread {}: initializing its new producer", self.name),
                e,
            )),
        }
    }

    /// The engine of task `id`: its sub-topology instantiated for its partition.
    /// Its stream partitioners learn partition counts from the cluster.
    fn new_engine(&self, id: TaskId, now: i64) -> Result<StreamTask> {
        let subtopology = usize::try_from(id.subtopology).unwrap_or(usize::MAX);
        let partition = i32::try_from(id.partition).unwrap_or(i32::MAX);
        let (topology, config) = (&self.topology, &self.streams_config);
        let mut engine = match &self.globals {
            Some(globals) => StreamTask::for_subtopology_with_globals(
                topology,
                config,
                subtopology,
                partition,
                now,
                globals,
            )?,
            None => StreamTask::for_subtopology(topology, config, subtopology, partition, now)?,
        };
        let admin = self.admin.clone();
        engine.set_partition_count_lookup(Box::new(move |topic| {
            admin
                .borrow_mut()
                .partition_count(topic)
                .map_err(|e| e.to_string())
        }));
        Ok(engine)
    }

    fn step_inner(&mut self) -> Result<StepOutcome> {
        let mut outcome = StepOutcome::default();
        if self.state == ThreadState::Dead {
            return Ok(outcome);
        }
        if !self.awaiting_offsets.is_empty() {
            self.retry_awaiting_offsets()?;
        }
        let polled = self
            .consumer
            .poll()
            .map_err(|e| RuntimeError::client(format!("stream thread {}: poll", self.name), e))?;
        if let Some(failure) = self
            .assignment_failure
            .lock()
            .ok()
            .and_then(|mut f| f.take())
        {
            return Err(RuntimeError::Assignment(failure));
        }
        match polled.rebalance {
            Some(Rebalance::Revoked(_)) => {
                outcome.rebalanced = true;
                self.on_revoked()?;
                return Ok(outcome);
            }
            Some(Rebalance::Lost(_)) => {
                outcome.rebalanced = true;
                self.on_lost()?;
                return Ok(outcome);
            }
            Some(Rebalance::Assigned {
                partitions,
                user_data,
                ..
            }) => {
                outcome.rebalanced = true;
                let (active, standby) = assigned_tasks(&self.metadata, &partitions, &user_data);
                self.on_assigned(&active, &standby)?;
            }
            None => {}
        }
        outcome.fetched = polled.records.len();
        // A poll's records come partition by partition: look the task up
        // once per run of one partition, not per record.
        let mut last: Option<(Arc<str>, i32, Option<TaskId>)> = None;
        for record in polled.records {
            let id = match &last {
                Some((topic, partition, id))
                    if *partition == record.partition && **topic == *record.topic =>
                {
                    *id
                }
                _ => {
                    let tp = TopicPartition::new(&*record.topic, record.partition);
                    let id = self.metadata.task_of(&tp);
                    last = Some((record.topic.clone(), record.partition, id));
                    id
                }
            };
            if let Some(id) = id
                && let Some(task) = self.tasks.get_mut(&id)
            {
                task.add(record);
            }
        }
        if self.state == ThreadState::Created || self.state == ThreadState::PartitionsRevoked {
            return Ok(outcome);
        }
        if self.producer_needs_init && !self.init_producer()? {
            // Not yet: the records wait in their tasks' queues.
            return Ok(outcome);
        }
        self.set_state(ThreadState::Running);
        let now = self.clock.now_ms();
        let max = usize::try_from(self.config.max_poll_records).unwrap_or(usize::MAX);
        // Each partition's lag (records on the broker not fetched yet), as
        // Kafka's `updateLags` gives it to the tasks once per round.
        let lags = self.current_lags()?;
        let lag = |tp: &TopicPartition| lags.get(tp).copied();
        let eos = self.eos();
        for task in self.tasks.values_mut() {
            if eos && !self.in_transaction && task.buffered() > 0 {
                self.producer.begin_transaction().map_err(|e| {
                    RuntimeError::client(
                        format!("stream thread {}: begin_transaction", self.name),
                        e,
                    )
                })?;
                self.in_transaction = true;
            }
            outcome.processed += task.process(
                max,
                now,
                self.config.max_task_idle_ms,
                &lag,
                self.producer.as_mut(),
            )?;
        }
        if eos && !self.in_transaction && self.tasks.values().any(|t| t.dirty) {
            // Wall-clock punctuations may produce: they run in a transaction too.
            self.producer.begin_transaction().map_err(|e| {
                RuntimeError::client(format!("stream thread {}: begin_transaction", self.name), e)
            })?;
            self.in_transaction = true;
        }
        for task in self.tasks.values_mut() {
            task.punctuate_wall_clock(now, self.producer.as_mut())?;
        }
        self.update_standbys()?;
        // Kafka's `maybeCommit`: once more than commit.interval.ms passed.
        if now - self.last_commit_ms > self.config.commit_interval_ms {
            outcome.committed = self.commit()?;
        }
        Ok(outcome)
    }

    /// The lag of the active tasks' input partitions (records on the
    /// broker not fetched yet, against the last stable offset under
    /// exactly-once), unless `max.task.idle.ms` is -1 and no task looks
    /// at lags.
    fn current_lags(&mut self) -> Result<BTreeMap<TopicPartition, i64>> {
        if self.config.max_task_idle_ms < 0 {
            return Ok(BTreeMap::new());
        }
        let partitions: Vec<TopicPartition> = self
            .tasks
            .values()
            .flat_map(|t| t.meta.partitions.iter().cloned())
            .collect();
        if partitions.is_empty() {
            return Ok(BTreeMap::new());
        }
        self.consumer.current_lags(&partitions).map_err(|e| {
            RuntimeError::client(format!("stream thread {}: end offsets", self.name), e)
        })
    }

    /// Whether any task processed records that are not committed.
    pub(crate) fn has_uncommitted(&self) -> bool {
        self.tasks.values().any(|t| t.dirty)
    }

    /// When the next commit is due on the clock: the first instant more
    /// than `commit.interval.ms` after the last.
    pub(crate) fn next_commit_ms(&self) -> i64 {
        self.last_commit_ms
            .saturating_add(self.config.commit_interval_ms)
            .saturating_add(1)
    }

    /// When a task waiting out `max.task.idle.ms` may process again.
    pub(crate) fn next_idle_deadline_ms(&self) -> Option<i64> {
        self.tasks.values().filter_map(Task::idle_deadline).min()
    }

    /// Kafka's `maybeCommit` once `commit.interval.ms` has passed: commits
    /// every task, then, at most every `repartition.purge.interval.ms`,
    /// deletes what the tasks consumed of repartition topics. Returns
    /// whether anything was committed.
    pub(crate) fn commit(&mut self) -> Result<bool> {
        let committed = self.commit_tasks()?;
        let now = self.clock.now_ms();
        // Kafka's thread starts with its last purge at 0: the first commit
        // purges (on a real clock), unless the interval is longer than
        // the clock's reading (`Long.MAX_VALUE`: never).
        if now.saturating_sub(self.last_purge_ms.unwrap_or(0))
            > self.config.repartition_purge_interval_ms
        {
            self.purge_repartition_topics();
            self.last_purge_ms = Some(now);
        }
        Ok(committed)
    }

    /// Commits every task: flushes caches, sends, waits for the
    /// acknowledgements, then commits the input offsets (in the
    /// transaction, under exactly-once). Returns whether anything was
    /// committed.
    fn commit_tasks(&mut self) -> Result<bool> {
        self.last_commit_ms = self.clock.now_ms();
        if !self.tasks.values().any(|t| t.dirty) {
            return Ok(false);
        }
        let mut offsets = BTreeMap::new();
        for task in self.tasks.values_mut() {
            if task.dirty {
                offsets.extend(task.prepare_commit(self.producer.as_mut())?);
            }
        }
        let name = self.name.clone();
        let migrated = |e: streams_clients::ClientError, what: &str| {
            RuntimeError::client(format!("stream thread {name}: {what}"), e)
        };
        let result = if self.eos() {
            let group = self.consumer.group_metadata();
            match group {
                Some(group) if self.in_transaction => self
                    .producer
                    .send_offsets_to_transaction(&offsets, &group)
                    .and_then(|()| self.producer.commit_transaction())
                    .map_err(|e| migrated(e, "committing its transaction")),
                _ => Ok(()),
            }
        } else {
            self.producer
                .flush()
                .map(|_| ())
                .map_err(|e| migrated(e, "flushing its producer"))
                .and_then(|()| {
                    self.consumer
                        .commit(&offsets)
                        .map_err(|e| migrated(e, "committing offsets"))
                })
        };
        self.in_transaction = false;
        // A migrated task's error goes up to `step`, which starts the
        // tasks again from the committed offsets.
        result?;
        for task in self.tasks.values_mut() {
            task.dirty = false;
        }
        Ok(true)
    }

    /// Kafka Streams deletes the records of repartition topics that its
    /// tasks consumed and committed (`TaskManager.maybePurgeCommittedRecords`).
    /// A failure is not fatal, as in Kafka: the next purge asks again.
    fn purge_repartition_topics(&mut self) {
        let repartition: BTreeSet<&String> = self
            .metadata
            .subtopologies
            .iter()
            .flat_map(|i| &i.repartition_source_topics)
            .collect();
        let purge: BTreeMap<TopicPartition, i64> = self
            .tasks
            .values()
            .flat_map(|t| t.consumed())
            .filter(|(tp, _)| repartition.contains(&tp.topic))
            .collect();
        if !purge.is_empty() {
            let _ = self.admin.borrow_mut().delete_records(&purge);
        }
    }

    fn on_revoked(&mut self) -> Result<()> {
        // The consumer forgets its paused partitions in a rebalance.
        self.awaiting_offsets.clear();
        // Eager protocol: commit what was processed, keep the tasks aside
        // until the assignment says whether they stay.
        self.commit_tasks()?;
        if self.eos() && self.in_transaction {
            let _ = self.producer.abort_transaction();
            self.in_transaction = false;
        }
        for (id, mut task) in std::mem::take(&mut self.tasks) {
            task.clear_buffers();
            self.suspended.insert(id, task);
        }
        self.set_state(ThreadState::PartitionsRevoked);
        Ok(())
    }

    /// Kafka's `handleLostAll`: the active tasks are closed as zombies
    /// (no commit; standbys stay), and under exactly-once the producer is
    /// replaced, as its transaction may have been aborted and its epoch
    /// fenced meanwhile.
    fn on_lost(&mut self) -> Result<()> {
        // The consumer forgets its paused partitions in a rebalance.
        self.awaiting_offsets.clear();
        self.close_tasks_dirty();
        self.suspended.clear();
        self.set_state(ThreadState::PartitionsRevoked);
        if self.eos() {
            self.replace_producer()?;
        }
        Ok(())
    }

    /// Closes every task without committing: their uncommitted work is
    /// processed again by their next owner.
    fn close_tasks_dirty(&mut self) {
        if self.eos() && self.in_transaction {
            let _ = self.producer.abort_transaction();
            self.in_transaction = false;
        }
        self.tasks.clear();
        if let Ok(mut owned) = self.owned.lock() {
            owned.active.clear();
        }
    }

    fn on_assigned(&mut self, active: &BTreeSet<TaskId>, standby: &BTreeSet<TaskId>) -> Result<()> {
        self.set_state(ThreadState::PartitionsAssigned);
        let now = self.clock.now_ms();
        let mut suspended = std::mem::take(&mut self.suspended);
        // Tasks still open (restarted after a failed commit) count as
        // suspended: they stay only if assigned again.
        for (id, mut task) in std::mem::take(&mut self.tasks) {
            task.clear_buffers();
            suspended.insert(id, task);
        }
        for &id in active {
            let Some(meta) = self.metadata.tasks.get(&id).cloned() else {
                continue;
            };
            let task = if let Some(mut task) = suspended.remove(&id) {
                // Stayed with this thread: resume from the committed offsets.
                task.clear_consumed();
                task
            } else if let Some(standby) = self.standbys.remove(&id) {
                let mut task = Task::new(standby.engine, meta);
                task.changelog_offsets = standby.changelog_offsets;
                self.restorer.restore(&mut task, self.consumer.as_ref())?;
                task
            } else {
                let engine = self.new_engine(id, now)?;
                let mut task = Task::new(engine, meta);
                self.restorer.restore(&mut task, self.consumer.as_ref())?;
                task
            };
            // The consumer starts each newly assigned partition at the
            // group's committed offset (or the beginning), as Kafka's does.
            self.tasks.insert(id, task);
        }
        // Suspended tasks that moved elsewhere are closed (committed already).
        drop(suspended);
        // Standbys: keep those still assigned, add new ones.
        self.standbys.retain(|id, _| standby.contains(id));
        for &id in standby {
            if self.standbys.contains_key(&id) {
                continue;
            }
            let Some(meta) = self.metadata.tasks.get(&id).cloned() else {
                continue;
            };
            let engine = self.new_engine(id, now)?;
            self.standbys.insert(
                id,
                Standby {
                    engine,
                    meta,
                    changelog_offsets: BTreeMap::new(),
                },
            );
        }
        let standby_partitions: Vec<TopicPartition> = self
            .standbys
            .values()
            .flat_map(|s| {
                changelog_partitions(&s.meta)
                    .into_iter()
                    .chain(source_changelog_partitions(&s.meta))
                    .map(|(_, tp)| tp)
            })
            .collect();
        self.standby_consumer
            .assign(&standby_partitions)
            .map_err(|e| {
                RuntimeError::client(
                    format!("stream thread {}: assigning standby changelogs", self.name),
                    e,
                )
            })?;
        for s in self.standbys.values() {
            for (tp, offset) in &s.changelog_offsets {
                let _ = self.standby_consumer.seek(tp, *offset);
            }
        }
        if let Ok(mut owned) = self.owned.lock() {
            owned.active = active.clone();
            owned.standby = standby.clone();
        }
        self.last_commit_ms = now;
        self.set_state(ThreadState::Running);
        Ok(())
    }

    /// Applies what the standby changelogs got since the last step.
    fn update_standbys(&mut self) -> Result<()> {
        if self.standbys.is_empty() {
            return Ok(());
        }
        let polled = self.standby_consumer.poll().map_err(|e| {
            RuntimeError::client(
                format!("stream thread {}: polling standby changelogs", self.name),
                e,
            )
        })?;
        // A source store's standby stops at the group's committed offset,
        // as Kafka's `updateLimitOffsetsForStandbyChangelogs`: the active
        // task applies what comes after (a pending offset holds it where
        // it is).
        let mut limits: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for standby in self.standbys.values() {
            for (_, tp) in source_changelog_partitions(&standby.meta) {
                let limit = match self.consumer.committed(&tp) {
                    Ok(committed) => committed.unwrap_or(0),
                    Err(streams_clients::ClientError::UnstableOffsetCommit { .. }) => {
                        standby.changelog_offsets.get(&tp).copied().unwrap_or(0)
                    }
                    Err(e) => {
                        return Err(RuntimeError::client(
                            format!("stream thread {}: committed offset of {tp}", self.name),
                            e,
                        ));
                    }
                };
                limits.insert(tp, limit);
            }
        }
        let mut held_back: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for record in polled.records {
            let tp = TopicPartition::new(&*record.topic, record.partition);
            if let Some(&limit) = limits.get(&tp)
                && record.offset >= limit
            {
                held_back.entry(tp).or_insert(record.offset);
                continue;
            }
            for (id, standby) in &mut self.standbys {
                let own = changelog_partitions(&standby.meta)
                    .into_iter()
                    .find(|(_, t)| *t == tp);
                let source = source_changelog_partitions(&standby.meta)
                    .into_iter()
                    .find(|(_, t)| *t == tp);
                let Some((store, _)) = own.clone().or(source.clone()) else {
                    continue;
                };
                let offset = record.offset;
                // A source topic may hold records without a key.
                if own.is_some() || record.key.is_some() {
                    standby
                        .engine
                        .restore_store(&store, &[to_raw(record.clone())])
                        .map_err(|source| RuntimeError::task(*id, source))?;
                }
                standby.changelog_offsets.insert(tp.clone(), offset + 1);
            }
        }
        // Fetch what was held back again once the limit moves.
        for (tp, offset) in held_back {
            let _ = self.standby_consumer.seek(&tp, offset);
        }
        Ok(())
    }

    /// Closes the thread without committing, as a thread that died: an
    /// open transaction is aborted, what was processed since the last
    /// commit is processed again by the tasks' next owner.
    pub(crate) fn close_dirty(&mut self) {
        if self.state == ThreadState::Dead {
            return;
        }
        self.close_tasks_dirty();
        self.consumer.close(false);
        self.suspended.clear();
        self.standbys.clear();
        self.set_state(ThreadState::Dead);
    }

    /// Closes the thread: commits (a clean close), then releases the
    /// clients; the consumer leaves the group only if `leave_group`.
    pub(crate) fn close(&mut self, leave_group: bool) -> Result<()> {
        if self.state == ThreadState::Dead {
            return Ok(());
        }
        let result = self.commit_tasks();
        self.consumer.close(leave_group);
        self.tasks.clear();
        self.standbys.clear();
        self.set_state(ThreadState::Dead);
        result.map(|_| ())
    }
}
