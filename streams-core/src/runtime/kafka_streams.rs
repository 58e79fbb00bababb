//! [`KafkaStreams`]: a topology running as one instance of an application,
//! its work split into tasks that the instances of the application share
//! through a consumer group.

use std::cell::RefMut;
use std::sync::{Arc, Mutex};

use streams_clients::ClientSupplier;

use crate::config::StreamsConfig;
use crate::engine::TaskMetrics;
use crate::runtime::config::{ProcessingGuarantee, RuntimeConfig};
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::global_thread::GlobalThread;
use crate::runtime::internal_topics;
use crate::runtime::metadata::TopologyMetadata;
use crate::runtime::restore::RestoreListener;
use crate::runtime::task_id::TaskId;
use crate::runtime::thread::{StepOutcome, StreamThread, ThreadState};
use crate::state::StateStore;
use crate::topology::Topology;

/// An instance's state, Kafka's `KafkaStreams.State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Made, not started.
    Created,
    /// Started; some stream thread is joining the group or restoring.
    Rebalancing,
    /// Every stream thread is processing its tasks.
    Running,
    /// Closing.
    PendingShutdown,
    /// Closed cleanly.
    NotRunning,
    /// A stream thread failed; shutting down.
    PendingError,
    /// Failed (see the error the failing call returned).
    Error,
}

impl State {
    /// Whether Kafka allows moving from `self` to `next`.
    pub fn is_valid_transition(self, next: State) -> bool {
        use State::*;
        matches!(
            (self, next),
            (Created, Rebalancing | PendingShutdown | PendingError)
                | (
                    Rebalancing,
                    Running | Rebalancing | PendingShutdown | PendingError
                )
                | (Running, Rebalancing | PendingShutdown | PendingError)
                | (PendingShutdown, NotRunning)
                | (PendingError, Error)
                | (Error, PendingShutdown)
        )
    }

    /// Whether the instance is started and not closing (Kafka's `isRunningOrRebalancing`).
    pub fn is_running_or_rebalancing(self) -> bool {
        matches!(self, State::Running | State::Rebalancing)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Created => "CREATED",
            State::Rebalancing => "REBALANCING",
            State::Running => "RUNNING",
            State::PendingShutdown => "PENDING_SHUTDOWN",
            State::NotRunning => "NOT_RUNNING",
            State::PendingError => "PENDING_ERROR",
            State::Error => "ERROR",
        })
    }
}

/// A stream thread's tasks, Kafka's `ThreadMetadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadMetadata {
    /// The thread's name, `<process id>-StreamThread-<n>`.
    pub thread_name: String,
    /// The tasks it processes.
    pub active_tasks: Vec<TaskId>,
    /// The tasks it keeps standby stores for.
    pub standby_tasks: Vec<TaskId>,
}

type StateListener = Box<dyn FnMut(State, State) + Send>;

/// One instance of a Streams application. See the [module docs](super).
pub struct KafkaStreams {
    topology: Topology,
    streams_config: StreamsConfig,
    config: RuntimeConfig,
    clients: Arc<dyn ClientSupplier>,
    process_id: String,
    state: State,
    listener: Option<StateListener>,
    restore_listener: Option<Arc<Mutex<dyn RestoreListener>>>,
    threads: Vec<StreamThread>,
    /// The global stores and their consumer, when the topology has any.
    global: Option<GlobalThread>,
    metadata: Option<Arc<TopologyMetadata>>,
}

impl std::fmt::Debug for KafkaStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaStreams")
            .field("process_id", &self.process_id)
            .field("state", &self.state)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl KafkaStreams {
    /// An instance of `topology` with `config` (Kafka's properties:
    /// `application.id`, `num.stream.threads`, `commit.interval.ms`,
    /// `processing.guarantee`, `num.standby.replicas`, `max.task.idle.ms`,
    /// `client.id`), taking its clients from `clients`. Its process id is
    /// `client.id` when set, else the `application.id`: give each instance
    /// of an application its own `client.id`.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidConfig`] and
    /// [`RuntimeError::InvalidApplicationId`] with Kafka's messages.
    pub fn new(
        topology: &Topology,
        config: StreamsConfig,
        clients: Arc<dyn ClientSupplier>,
    ) -> Result<Self> {
        let runtime = RuntimeConfig::from_streams_config(&config)?;
        // Kafka's StreamsConfig refuses a bad `topology.optimization` too.
        config.topology_optimizations()?;
        topology.validate()?;
        let process_id = config
            .properties()
            .get("client.id")
            .cloned()
            .unwrap_or_else(|| runtime.application_id.clone());
        Ok(KafkaStreams {
            topology: topology.clone(),
            streams_config: config,
            config: runtime,
            clients,
            process_id,
            state: State::Created,
            listener: None,
            restore_listener: None,
            threads: Vec::new(),
            global: None,
            metadata: None,
        })
    }

    /// The instance's process id.
    pub fn process_id(&self) -> &str {
        &self.process_id
    }

    /// The processing guarantee it runs with.
    pub fn processing_guarantee(&self) -> ProcessingGuarantee {
        self.config.guarantee
    }

    /// Its state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Calls `listener(new, old)` on every state change (Kafka's
    /// `setStateListener`).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use streams_broker::clients::api::SimulatedClients;
    /// use streams_broker::{Cluster, NewTopic};
    /// use streams_core::runtime::KafkaStreams;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").to("out");
    /// let cluster = Cluster::new();
    /// cluster.admin().create_topic(NewTopic::new("in", 1))?;
    /// let mut app = KafkaStreams::new(&builder.build()?, StreamsConfig::new("copy"), Arc::new(SimulatedClients::new(cluster)))?;
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = seen.clone();
    /// app.set_state_listener(move |new, old| log.lock().unwrap().push(format!("{old} -> {new}")));
    /// app.start()?;
    /// app.step()?;
    /// app.close()?;
    /// assert_eq!(
    ///     *seen.lock().unwrap(),
    ///     ["CREATED -> REBALANCING", "REBALANCING -> RUNNING", "RUNNING -> PENDING_SHUTDOWN", "PENDING_SHUTDOWN -> NOT_RUNNING"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_state_listener(&mut self, listener: impl FnMut(State, State) + Send + 'static) {
        self.listener = Some(Box::new(listener));
    }

    /// Tells `listener` about every store restoration (Kafka's
    /// `setGlobalStateRestoreListener`). Set it before [`start`](Self::start).
    pub fn set_global_state_restore_listener(&mut self, listener: Arc<Mutex<dyn RestoreListener>>) {
        self.restore_listener = Some(listener);
    }

    fn set_state(&mut self, next: State) {
        if self.state == next && next != State::Rebalancing {
            return;
        }
        if !self.state.is_valid_transition(next) {
            return;
        }
        let old = std::mem::replace(&mut self.state, next);
        if old == next {
            return;
        }
        if let Some(l) = &mut self.listener {
            l(next, old);
        }
    }

    /// Starts the instance: checks the source topics, creates the
    /// internal topics it needs (repartition topics with the partition
    /// count Kafka picks, changelogs compacted with one partition per
    /// task), makes its stream threads and joins the group. Nothing is
    /// processed until [`step`](Self::step).
    ///
    /// # Errors
    /// [`RuntimeError::IllegalState`] unless the instance is CREATED;
    /// [`RuntimeError::MissingSourceTopics`];
    /// [`RuntimeError::NotCopartitioned`]; a client error creating topics
    /// (an existing internal topic with the wrong partition count says so).
    pub fn start(&mut self) -> Result<()> {
        if self.state != State::Created {
            return Err(RuntimeError::IllegalState {
                operation: "start",
                state: self.state,
                hint: "an instance starts once; make a new KafkaStreams to start again",
            });
        }
        let (metadata, mut admin) = internal_topics::prepare(
            &self.topology,
            &self.config.application_id,
            &self.process_id,
            &*self.clients,
        )?;
        let metadata = Arc::new(metadata);
        self.metadata = Some(metadata.clone());
        self.set_state(State::Rebalancing);
        // The global stores first, read up to the end of their topics
        // before any stream thread exists (Kafka's global thread
        // bootstraps before the stream threads start).
        let isolation = match self.config.guarantee {
            ProcessingGuarantee::ExactlyOnceV2 => "read_committed",
            ProcessingGuarantee::AtLeastOnce => "read_uncommitted",
        };
        let mut global = GlobalThread::new(
            &self.topology,
            &self.streams_config,
            &self.process_id,
            isolation,
            &self.clients,
            &mut *admin,
        )?;
        if let Some(g) = &mut global
            && let Err(e) = g.bootstrap(self.restore_listener.as_ref())
        {
            g.close();
            self.fail();
            return Err(e);
        }
        let globals = global.as_ref().map(GlobalThread::global_stores);
        self.global = global;
        let mut threads = Vec::with_capacity(self.config.num_stream_threads);
        for i in 0..self.config.num_stream_threads {
            threads.push(StreamThread::new(
                i,
                &self.process_id,
                &self.topology,
                &self.streams_config,
                &self.config,
                metadata.clone(),
                self.clients.clone(),
                self.restore_listener.clone(),
                globals.clone(),
            )?);
        }
        self.threads = threads;
        Ok(())
    }

    /// Steps every stream thread once (poll, rebalance, restore, process,
    /// punctuate, commit when due) and returns whether anything happened.
    /// On the simulated cluster this is how the instance runs: the test
    /// decides when, and every run of a test is the same.
    ///
    /// # Errors
    /// [`RuntimeError::IllegalState`] unless started; a thread's error,
    /// which also puts the instance in state ERROR.
    pub fn step(&mut self) -> Result<bool> {
        Ok(self.step_outcome()?.processed > 0)
    }

    pub(crate) fn step_outcome(&mut self) -> Result<StepOutcome> {
        if !self.state.is_running_or_rebalancing() {
            return Err(RuntimeError::IllegalState {
                operation: "step",
                state: self.state,
                hint: "start the instance first; a closed or failed instance does not run",
            });
        }
        let mut total = StepOutcome::default();
        if let Some(global) = &mut self.global {
            match global.poll() {
                Ok(n) => {
                    total.processed += n;
                    total.fetched += n;
                }
                Err(e) => {
                    self.fail();
                    return Err(e);
                }
            }
        }
        for i in 0..self.threads.len() {
            match self.threads[i].step() {
                Ok(o) => {
                    total.processed += o.processed;
                    total.fetched += o.fetched;
                    total.rebalanced |= o.rebalanced;
                    total.committed |= o.committed;
                }
                Err(e) => {
                    self.fail();
                    return Err(e);
                }
            }
        }
        let running = self
            .threads
            .iter()
            .all(|t| t.state() == ThreadState::Running);
        if running {
            self.set_state(State::Running);
        } else if self.state == State::Running {
            self.set_state(State::Rebalancing);
        }
        Ok(total)
    }

    /// A thread failed: the others close, the instance goes to ERROR.
    fn fail(&mut self) {
        self.set_state(State::PendingError);
        for t in &mut self.threads {
            let _ = t.close(false);
        }
        if let Some(g) = &mut self.global {
            g.close();
        }
        self.set_state(State::Error);
    }

    /// Whether a task processed records it has not committed yet.
    pub fn has_uncommitted(&self) -> bool {
        self.threads.iter().any(StreamThread::has_uncommitted)
    }

    /// When the earliest thread's next commit is due, on the clients' clock.
    pub fn next_commit_ms(&self) -> Option<i64> {
        self.threads.iter().map(StreamThread::next_commit_ms).min()
    }

    /// When a task that waits out `max.task.idle.ms` for an empty
    /// partition may process its buffered records, on the clients' clock.
    pub fn next_idle_deadline_ms(&self) -> Option<i64> {
        self.threads
            .iter()
            .filter_map(StreamThread::next_idle_deadline_ms)
            .min()
    }

    /// Commits every thread's tasks now, as if `commit.interval.ms` had
    /// passed (Kafka commits on close and on revocation the same way).
    ///
    /// # Errors
    /// [`RuntimeError::IllegalState`] unless started; a client's error.
    pub fn commit(&mut self) -> Result<()> {
        if !self.state.is_running_or_rebalancing() {
            return Err(RuntimeError::IllegalState {
                operation: "commit",
                state: self.state,
                hint: "start the instance first",
            });
        }
        for t in &mut self.threads {
            t.commit()?;
        }
        Ok(())
    }

    /// Closes the instance cleanly: every thread commits and closes its
    /// clients. Its consumers do not leave the group (Kafka Streams'
    /// default), so the group rebalances when their sessions time out;
    /// [`close_and_leave_group`](Self::close_and_leave_group) leaves at once.
    ///
    /// # Errors
    /// A commit that failed (the instance is closed anyway).
    pub fn close(&mut self) -> Result<()> {
        self.close_with(false)
    }

    /// Closes the instance and leaves the group at once (Kafka's
    /// `CloseOptions.leaveGroup(true)`).
    ///
    /// # Errors
    /// A commit that failed (the instance is closed anyway).
    pub fn close_and_leave_group(&mut self) -> Result<()> {
        self.close_with(true)
    }

    fn close_with(&mut self, leave_group: bool) -> Result<()> {
        if matches!(self.state, State::NotRunning) {
            return Ok(());
        }
        self.set_state(State::PendingShutdown);
        let mut first = Ok(());
        for t in &mut self.threads {
            if let Err(e) = t.close(leave_group)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        self.threads.clear();
        if let Some(mut g) = self.global.take() {
            g.close();
        }
        self.set_state(State::NotRunning);
        first
    }

    /// The instance dies at once, as a killed process: no commit, no
    /// flush, no leave-group. Its group membership lasts until its
    /// session times out on the cluster's clock; what it processed since
    /// its last commit is processed again by the next owner of its tasks.
    pub fn crash(self) {
        drop(self);
    }

    /// Each stream thread's tasks (Kafka's `metadataForLocalThreads`).
    pub fn threads(&self) -> Vec<ThreadMetadata> {
        self.threads
            .iter()
            .map(|t| ThreadMetadata {
                thread_name: t.name.clone(),
                active_tasks: t.tasks.keys().copied().collect(),
                standby_tasks: t.standbys.keys().copied().collect(),
            })
            .collect()
    }

    /// The active tasks of every thread, in task order.
    pub fn active_tasks(&self) -> Vec<TaskId> {
        let mut all: Vec<TaskId> = self
            .threads
            .iter()
            .flat_map(|t| t.tasks.keys().copied())
            .collect();
        all.sort();
        all
    }

    /// The standby tasks of every thread, in task order.
    pub fn standby_tasks(&self) -> Vec<TaskId> {
        let mut all: Vec<TaskId> = self
            .threads
            .iter()
            .flat_map(|t| t.standbys.keys().copied())
            .collect();
        all.sort();
        all
    }

    /// The store `name` of the active task `task` on this instance.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use streams_broker::clients::api::SimulatedClients;
    /// use streams_broker::{Cluster, NewTopic, ProducerRecord};
    /// use streams_core::dsl::Materialized;
    /// use streams_core::runtime::{KafkaStreams, RuntimeError, TaskId};
    /// use streams_core::state::TimestampedKeyValueStore;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("words").group_by_key().count_with(Materialized::as_("counts"));
    /// let cluster = Cluster::new();
    /// cluster.admin().create_topic(NewTopic::new("words", 2))?;
    /// let mut app = KafkaStreams::new(&builder.build()?, StreamsConfig::new("wc"), Arc::new(SimulatedClients::new(cluster.clone())))?;
    /// app.start()?;
    /// cluster.producer().send(ProducerRecord::new("words", "kafka", "kafka").partition(1))?;
    /// for _ in 0..3 {
    ///     app.step()?;
    /// }
    /// let store = app.store::<TimestampedKeyValueStore<String, i64>>("counts", TaskId::new(0, 1))?;
    /// assert_eq!(store.get("kafka")?.map(|v| v.value), Some(1));
    /// drop(store);
    /// let missing = app.store::<TimestampedKeyValueStore<String, i64>>("counts", TaskId::new(0, 7));
    /// assert!(matches!(missing, Err(RuntimeError::StoreNotLocal { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RuntimeError::StoreNotLocal`] when `task` is not active here (the
    /// store may have migrated); a store of another type or name.
    pub fn store<S: StateStore>(&self, name: &str, task: TaskId) -> Result<RefMut<'_, S>> {
        let Some(t) = self.threads.iter().find_map(|t| t.tasks.get(&task)) else {
            return Err(RuntimeError::StoreNotLocal {
                store: name.to_owned(),
                task: Some(task),
            });
        };
        Ok(t.engine.store::<S>(name)?)
    }

    /// The global store `name` of this instance (a `GlobalKTable`'s or one
    /// added with `Topology::add_global_store`): every instance keeps the
    /// whole of it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use streams_broker::clients::api::SimulatedClients;
    /// use streams_broker::{Cluster, NewTopic, ProducerRecord};
    /// use streams_core::dsl::Materialized;
    /// use streams_core::runtime::KafkaStreams;
    /// use streams_core::state::TimestampedKeyValueStore;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.global_table_with::<String, String>("prices", Materialized::as_("prices-store"));
    /// let cluster = Cluster::new();
    /// cluster.admin().create_topic(NewTopic::new("prices", 3))?;
    /// cluster.producer().send(ProducerRecord::new("prices", "tea", "3").partition(2))?;
    /// let mut app = KafkaStreams::new(&builder.build()?, StreamsConfig::new("shop"), Arc::new(SimulatedClients::new(cluster.clone())))?;
    /// app.start()?; // reads the global topic to its end
    /// let store = app.global_store::<TimestampedKeyValueStore<String, String>>("prices-store")?;
    /// assert_eq!(store.get("tea")?.map(|v| v.value), Some("3".to_owned()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RuntimeError::StoreNotLocal`] before `start` or after `close`; a
    /// store of another type or name.
    pub fn global_store<S: StateStore>(&self, name: &str) -> Result<RefMut<'_, S>> {
        match &self.global {
            Some(g) => g.store::<S>(name),
            None => Err(RuntimeError::StoreNotLocal {
                store: name.to_owned(),
                task: None,
            }),
        }
    }

    /// The store `name` of a standby task `task` on this instance.
    ///
    /// # Errors
    /// [`RuntimeError::StoreNotLocal`] when `task` is no standby here.
    pub fn standby_store<S: StateStore>(&self, name: &str, task: TaskId) -> Result<RefMut<'_, S>> {
        let Some(t) = self.threads.iter().find_map(|t| t.standbys.get(&task)) else {
            return Err(RuntimeError::StoreNotLocal {
                store: name.to_owned(),
                task: Some(task),
            });
        };
        Ok(t.engine.store::<S>(name)?)
    }

    /// What active task `task` on this instance processed and dropped
    /// (Kafka's task-level `process-total` and `dropped-records-total`),
    /// `None` when the task is not active here. The counts restart when a
    /// task moves to another instance or thread.
    pub fn task_metrics(&self, task: TaskId) -> Option<TaskMetrics> {
        self.threads
            .iter()
            .find_map(|t| t.tasks.get(&task))
            .map(|t| t.engine.metrics())
    }

    /// The tasks whose store `name` is on this instance, active ones.
    pub fn tasks_with_store(&self, name: &str) -> Vec<TaskId> {
        let mut tasks: Vec<TaskId> = self
            .threads
            .iter()
            .flat_map(|t| t.tasks.iter())
            .filter(|(_, task)| {
                task.meta.changelogs.iter().any(|(s, _)| s == name)
                    || task.engine.store_names().iter().any(|s| s == name)
            })
            .map(|(id, _)| *id)
            .collect();
        tasks.sort();
        tasks
    }

    /// The resolved topology (partition counts, tasks), once started.
    pub fn topology_metadata(&self) -> Option<&TopologyMetadata> {
        self.metadata.as_deref()
    }
}
