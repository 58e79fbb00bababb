//! [`ThreadedKafkaStreams`]: an instance whose stream threads are OS
//! threads that run themselves, in real time, as Kafka Streams' do.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use streams_clients::{ClientConfig, ClientSupplier};

use crate::config::StreamsConfig;
use crate::runtime::config::{ProcessingGuarantee, RuntimeConfig};
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::global_thread::GlobalThread;
use crate::runtime::internal_topics;
use crate::runtime::kafka_streams::{State, ThreadMetadata};
use crate::runtime::metadata::TopologyMetadata;
use crate::runtime::restore::RestoreListener;
use crate::runtime::task_id::TaskId;
use crate::runtime::thread::{StreamThread, ThreadState};
use crate::topology::Topology;

/// Builds the topology, once per stream thread (and once at `start`).
pub type TopologySupplier = dyn Fn() -> crate::error::Result<Topology> + Send + Sync;

type StateListener = Box<dyn FnMut(State, State) + Send>;

/// What the threads and the handle share.
struct Shared {
    inner: Mutex<Inner>,
    changed: Condvar,
    shutdown: AtomicBool,
    /// Taken only by the thread that delivers state changes.
    listener: Mutex<Option<StateListener>>,
}

struct Inner {
    state: State,
    threads: Vec<ThreadView>,
    /// Threads that have not exited yet.
    live: usize,
    error: Option<Arc<RuntimeError>>,
    /// State changes not told to the listener yet, oldest first.
    events: VecDeque<(State, State)>,
    /// Whether some thread is telling the listener (it tells them all).
    delivering: bool,
    thread_ids: Vec<ThreadId>,
}

struct ThreadView {
    state: ThreadState,
    metadata: ThreadMetadata,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Moves to `next` if Kafka allows it, then tells the listener (on
    /// this thread, unless another is telling it already).
    fn set_state(&self, next: State) {
        let mut inner = self.lock();
        Self::transition(&mut inner, next);
        self.deliver(inner);
    }

    fn transition(inner: &mut Inner, next: State) {
        if inner.state == next || !inner.state.is_valid_transition(next) {
            return;
        }
        let old = std::mem::replace(&mut inner.state, next);
        inner.events.push_back((next, old));
    }

    /// Tells the listener every pending state change, in order. Whoever
    /// finds no one delivering delivers, without holding `inner`, so a
    /// listener may call back into the instance.
    fn deliver<'a>(&'a self, mut inner: MutexGuard<'a, Inner>) {
        self.changed.notify_all();
        if inner.delivering || inner.events.is_empty() {
            return;
        }
        inner.delivering = true;
        loop {
            let Some((next, old)) = inner.events.pop_front() else {
                inner.delivering = false;
                return;
            };
            drop(inner);
            if let Ok(mut listener) = self.listener.lock()
                && let Some(l) = listener.as_mut()
            {
                l(next, old);
            }
            inner = self.lock();
        }
    }

    /// A thread's state or tasks changed: the instance is RUNNING when
    /// every thread runs, REBALANCING otherwise.
    fn report(&self, index: usize, state: ThreadState, metadata: Option<ThreadMetadata>) {
        let mut inner = self.lock();
        if let Some(view) = inner.threads.get_mut(index) {
            view.state = state;
            if let Some(m) = metadata {
                view.metadata = m;
            }
        }
        let running = inner
            .threads
            .iter()
            .all(|t| t.state == ThreadState::Running);
        if running {
            Self::transition(&mut inner, State::Running);
        } else if inner.state == State::Running {
            Self::transition(&mut inner, State::Rebalancing);
        }
        self.deliver(inner);
    }

    /// A thread failed: keep the first error, stop every thread.
    fn fail(&self, error: RuntimeError) {
        let mut inner = self.lock();
        if inner.error.is_none() {
            inner.error = Some(Arc::new(error));
        }
        Self::transition(&mut inner, State::PendingError);
        self.shutdown.store(true, Ordering::SeqCst);
        self.deliver(inner);
    }

    /// A thread exited; the last one out of a failed instance moves it to
    /// ERROR.
    fn exited(&self, index: usize) {
        let mut inner = self.lock();
        inner.live = inner.live.saturating_sub(1);
        if let Some(view) = inner.threads.get_mut(index) {
            view.state = ThreadState::Dead;
        }
        if inner.live == 0 && inner.state == State::PendingError {
            Self::transition(&mut inner, State::Error);
        }
        self.deliver(inner);
    }
}

/// Marks its thread exited when dropped, a panic included.
struct ExitGuard {
    shared: Arc<Shared>,
    index: usize,
    name: String,
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.shared.fail(RuntimeError::ThreadPanicked {
                thread: self.name.clone(),
            });
        }
        self.shared.exited(self.index);
    }
}

/// Everything a stream thread needs besides its topology.
struct ThreadContext {
    index: usize,
    name: String,
    supplier: Arc<TopologySupplier>,
    description: String,
    process_id: String,
    streams_config: StreamsConfig,
    config: RuntimeConfig,
    metadata: Arc<TopologyMetadata>,
    clients: Arc<dyn ClientSupplier>,
    restore_listener: Option<Arc<Mutex<dyn RestoreListener>>>,
    shared: Arc<Shared>,
    leave_group: Arc<AtomicBool>,
}

impl ThreadContext {
    /// The thread's life: build, run until told to stop or failing, close.
    fn run(self) -> Result<()> {
        let _guard = ExitGuard {
            shared: self.shared.clone(),
            index: self.index,
            name: self.name.clone(),
        };
        let mut parts = match self.build() {
            Ok(parts) => parts,
            Err(e) => {
                self.shared.fail(e);
                return Ok(());
            }
        };
        let (global, thread) = (&mut parts.0, &mut parts.1);
        // A change of state shows at once, also while the thread waits on
        // the cluster in the middle of a step (tasks once the step ends).
        let shared = self.shared.clone();
        let index = self.index;
        thread.set_state_listener(move |state| shared.report(index, state, None));
        let mut reported = (thread.state(), Vec::new());
        while !self.shared.shutdown.load(Ordering::SeqCst) {
            let stepped = match global.as_mut().map_or(Ok(0), GlobalThread::poll) {
                Ok(n) => thread
                    .step()
                    .map(|o| (n + o.processed + o.fetched, o.rebalanced)),
                Err(e) => Err(e),
            };
            let (work, rebalanced) = match stepped {
                Ok(done) => done,
                Err(e) => {
                    // The others stop first; this one drops its
                    // uncommitted work, as a killed thread would.
                    self.shared.fail(e);
                    thread.close_dirty();
                    if let Some(g) = global.as_mut() {
                        g.close();
                    }
                    return Ok(());
                }
            };
            let state = thread.state();
            if rebalanced || state != reported.0 {
                let active: Vec<TaskId> = thread.tasks.keys().copied().collect();
                if state != reported.0 || active != reported.1 {
                    self.shared.report(
                        self.index,
                        state,
                        Some(ThreadMetadata {
                            thread_name: self.name.clone(),
                            active_tasks: active.clone(),
                            standby_tasks: thread.standbys.keys().copied().collect(),
                        }),
                    );
                    reported = (state, active);
                }
            }
            if work == 0 && !rebalanced {
                // A real consumer's poll waits for records by itself; a
                // client that answers at once must not spin a core.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let closed = thread.close(self.leave_group.load(Ordering::SeqCst));
        if let Some(g) = global.as_mut() {
            g.close();
        }
        closed
    }

    /// The thread's topology (checked against the instance's), its global
    /// stores bootstrapped, and its stream thread in the group.
    fn build(&self) -> Result<(Option<GlobalThread>, StreamThread)> {
        let topology = (self.supplier)()?;
        if topology.describe().to_string() != self.description {
            return Err(RuntimeError::TopologySupplierMismatch {
                thread: self.name.clone(),
            });
        }
        let mut global = None;
        if !topology.describe().global_stores().is_empty() {
            let mut admin = self
                .clients
                .admin(&ClientConfig::new().set("client.id", format!("{}-admin", self.name)))
                .map_err(|e| RuntimeError::client("creating the admin client", e))?;
            let isolation = match self.config.guarantee {
                ProcessingGuarantee::ExactlyOnceV2 => "read_committed",
                ProcessingGuarantee::AtLeastOnce => "read_uncommitted",
            };
            global = GlobalThread::new(
                &topology,
                &self.streams_config,
                &self.name,
                isolation,
                &self.clients,
                &mut *admin,
            )?;
            if let Some(g) = &mut global
                && let Err(e) = g.bootstrap(self.restore_listener.as_ref())
            {
                g.close();
                return Err(e);
            }
        }
        let globals = global.as_ref().map(GlobalThread::global_stores);
        let thread = StreamThread::new(
            self.index,
            &self.process_id,
            &topology,
            &self.streams_config,
            &self.config,
            self.metadata.clone(),
            self.clients.clone(),
            self.restore_listener.clone(),
            globals,
        )?;
        Ok((global, thread))
    }
}

/// One instance of a Streams application whose stream threads are OS
/// threads that run themselves, in real time, as Kafka Streams' do.
///
/// A [`Topology`] holds `Rc`s (the DSL's closures need not be `Send`, and
/// the driver pays no atomic reference counts), so a topology cannot move
/// to another thread. Each stream thread therefore builds its own from a
/// topology supplier, `Fn() -> Result<Topology> + Send + Sync`, called
/// once by [`start`](ThreadedKafkaStreams::start) on the caller's thread
/// (to resolve the topics and create the internal ones) and once on each
/// stream thread; every call must build the same topology (the threads
/// compare its `describe()` with the first). The stores, caches and tasks
/// live on their thread and never leave it; the handle shares only the
/// states, the thread metadata and the first error, so it is `Send` and
/// `Sync`: a signal handler or another thread may call
/// [`close`](Self::close).
///
/// Each thread runs the stepped runtime's stream thread in a loop (poll,
/// rebalance, restore, process, punctuate, commit when
/// `commit.interval.ms` has passed), so the two behave alike; only the
/// interleaving of the threads is the operating system's. Where they
/// differ: the global stores are kept once per stream thread, each with
/// its own global consumer (Kafka keeps one copy per instance, fed by a
/// global thread), and stores are not queried from outside (read the
/// output topics, or use the stepped [`KafkaStreams`](super::KafkaStreams)).
///
/// A stream thread that fails (a client's error, a processing error the
/// handlers do not resume from, a panic) closes its tasks without
/// committing, the other threads close cleanly, and the instance goes
/// `PENDING_ERROR` then `ERROR` (Kafka's default `SHUTDOWN_CLIENT`);
/// [`error`](ThreadedKafkaStreams::error) says why.
///
/// On the simulated cluster, which moves only when a test moves its
/// clock, use the stepped [`KafkaStreams`](super::KafkaStreams): it is
/// deterministic, and this is not.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use streams_broker::clients::api::SimulatedClients;
/// use streams_broker::{Cluster, NewTopic};
/// use streams_core::runtime::{State, ThreadedKafkaStreams};
/// use streams_core::{StreamsBuilder, StreamsConfig};
///
/// let topology = || {
///     let builder = StreamsBuilder::new();
///     builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
///     builder.build()
/// };
/// let cluster = Cluster::new();
/// cluster.admin().create_topic(NewTopic::new("in", 2))?;
/// cluster.admin().create_topic(NewTopic::new("out", 2))?;
/// let config = StreamsConfig::new("shout").with_property("num.stream.threads", "2");
/// let app = ThreadedKafkaStreams::new(topology, config, Arc::new(SimulatedClients::new(cluster.clone())))?;
/// app.start()?;
/// assert_eq!(app.wait_for(Duration::from_secs(30), |s| s == State::Running), State::Running);
/// assert_eq!(app.threads().len(), 2);
/// app.close()?; // joins the threads
/// assert_eq!(app.state(), State::NotRunning);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ThreadedKafkaStreams {
    supplier: Arc<TopologySupplier>,
    streams_config: StreamsConfig,
    config: RuntimeConfig,
    clients: Arc<dyn ClientSupplier>,
    process_id: String,
    shared: Arc<Shared>,
    restore_listener: Mutex<Option<Arc<Mutex<dyn RestoreListener>>>>,
    handles: Mutex<Vec<JoinHandle<Result<()>>>>,
    leave_group: Arc<AtomicBool>,
}

impl std::fmt::Debug for ThreadedKafkaStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadedKafkaStreams")
            .field("process_id", &self.process_id)
            .field("state", &self.state())
            .field("threads", &self.threads())
            .finish_non_exhaustive()
    }
}

impl ThreadedKafkaStreams {
    /// An instance of the topology `supplier` builds, with `config`
    /// (Kafka's properties, as [`KafkaStreams::new`](super::KafkaStreams::new)
    /// reads them; `num.stream.threads` OS threads), taking its clients
    /// from `clients`. The supplier is called once here, to check the
    /// topology and the config, once by `start` and once per thread.
    ///
    /// # Errors
    /// [`RuntimeError::InvalidConfig`], [`RuntimeError::InvalidApplicationId`];
    /// the supplier's error, or the topology's (no source).
    pub fn new(
        supplier: impl Fn() -> crate::error::Result<Topology> + Send + Sync + 'static,
        config: StreamsConfig,
        clients: Arc<dyn ClientSupplier>,
    ) -> Result<Self> {
        let runtime = RuntimeConfig::from_streams_config(&config)?;
        config.topology_optimizations()?;
        supplier()?.validate()?;
        let process_id = config
            .properties()
            .get("client.id")
            .cloned()
            .unwrap_or_else(|| runtime.application_id.clone());
        Ok(ThreadedKafkaStreams {
            supplier: Arc::new(supplier),
            streams_config: config,
            config: runtime,
            clients,
            process_id,
            shared: Arc::new(Shared {
                inner: Mutex::new(Inner {
                    state: State::Created,
                    threads: Vec::new(),
                    live: 0,
                    error: None,
                    events: VecDeque::new(),
                    delivering: false,
                    thread_ids: Vec::new(),
                }),
                changed: Condvar::new(),
                shutdown: AtomicBool::new(false),
                listener: Mutex::new(None),
            }),
            restore_listener: Mutex::new(None),
            handles: Mutex::new(Vec::new()),
            leave_group: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The instance's process id (`client.id`, else the `application.id`).
    pub fn process_id(&self) -> &str {
        &self.process_id
    }

    /// The processing guarantee it runs with.
    pub fn processing_guarantee(&self) -> ProcessingGuarantee {
        self.config.guarantee
    }

    /// Its state.
    pub fn state(&self) -> State {
        self.shared.lock().state
    }

    /// Calls `listener(new, old)` on every state change (Kafka's
    /// `setStateListener`), from whichever thread made the change, one
    /// change at a time and in order. The listener may call the instance
    /// (a `close` from it does not wait for the threads).
    pub fn set_state_listener(&self, listener: impl FnMut(State, State) + Send + 'static) {
        if let Ok(mut l) = self.shared.listener.lock() {
            *l = Some(Box::new(listener));
        }
    }

    /// Tells `listener` about every store restoration (Kafka's
    /// `setGlobalStateRestoreListener`). Set it before [`start`](Self::start).
    pub fn set_global_state_restore_listener(&self, listener: Arc<Mutex<dyn RestoreListener>>) {
        if let Ok(mut l) = self.restore_listener.lock() {
            *l = Some(listener);
        }
    }

    /// Starts the instance: on this thread, checks the source topics and
    /// creates the internal topics (as
    /// [`KafkaStreams::start`](super::KafkaStreams::start)), then spawns
    /// one OS thread per stream thread, which builds its topology, joins
    /// the group and runs until [`close`](Self::close). Returns once the
    /// threads are spawned.
    ///
    /// # Errors
    /// [`RuntimeError::IllegalState`] unless CREATED. Any other error (a
    /// missing source topic, a cluster that cannot be reached within
    /// `default.api.timeout.ms`, a refused authentication) also moves the
    /// instance to ERROR.
    pub fn start(&self) -> Result<()> {
        {
            let inner = self.shared.lock();
            if inner.state != State::Created {
                return Err(RuntimeError::IllegalState {
                    operation: "start",
                    state: inner.state,
                    hint: "an instance starts once; make a new ThreadedKafkaStreams to start again",
                });
            }
        }
        match self.spawn() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.shared.set_state(State::PendingError);
                self.shared.set_state(State::Error);
                Err(e)
            }
        }
    }

    fn spawn(&self) -> Result<()> {
        let topology = (self.supplier)()?;
        let description = topology.describe().to_string();
        let (metadata, admin) = internal_topics::prepare(
            &topology,
            &self.config.application_id,
            &self.process_id,
            &*self.clients,
        )?;
        drop(admin);
        drop(topology);
        let metadata = Arc::new(metadata);
        let n = self.config.num_stream_threads;
        let names: Vec<String> = (0..n)
            .map(|i| format!("{}-StreamThread-{}", self.process_id, i + 1))
            .collect();
        {
            let mut inner = self.shared.lock();
            inner.threads = names
                .iter()
                .map(|name| ThreadView {
                    state: ThreadState::Created,
                    metadata: ThreadMetadata {
                        thread_name: name.clone(),
                        active_tasks: Vec::new(),
                        standby_tasks: Vec::new(),
                    },
                })
                .collect();
            inner.live = n;
            Shared::transition(&mut inner, State::Rebalancing);
            self.shared.deliver(inner);
        }
        let restore_listener = self.restore_listener.lock().ok().and_then(|l| l.clone());
        let mut handles = self
            .handles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (index, name) in names.into_iter().enumerate() {
            let context = ThreadContext {
                index,
                name: name.clone(),
                supplier: self.supplier.clone(),
                description: description.clone(),
                process_id: self.process_id.clone(),
                streams_config: self.streams_config.clone(),
                config: self.config.clone(),
                metadata: metadata.clone(),
                clients: self.clients.clone(),
                restore_listener: restore_listener.clone(),
                shared: self.shared.clone(),
                leave_group: self.leave_group.clone(),
            };
            let spawned = std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || context.run());
            match spawned {
                Ok(handle) => {
                    self.shared.lock().thread_ids.push(handle.thread().id());
                    handles.push(handle);
                }
                Err(e) => {
                    // The threads not spawned never run: count them out.
                    for i in index..n {
                        self.shared.exited(i);
                    }
                    self.shared.fail(RuntimeError::ThreadSpawn {
                        thread: name,
                        reason: e.to_string(),
                    });
                    break;
                }
            }
        }
        Ok(())
    }

    /// Waits until `until(state)` holds or `timeout` passed, and returns
    /// the state then.
    pub fn wait_for(&self, timeout: Duration, until: impl Fn(State) -> bool) -> State {
        let deadline = Instant::now() + timeout;
        let mut inner = self.shared.lock();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if until(inner.state) || left.is_zero() {
                return inner.state;
            }
            inner = self
                .shared
                .changed
                .wait_timeout(inner, left)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
    }

    /// The error that stopped a stream thread and put the instance in
    /// ERROR, if one did.
    pub fn error(&self) -> Option<Arc<RuntimeError>> {
        self.shared.lock().error.clone()
    }

    /// Each stream thread's tasks (Kafka's `metadataForLocalThreads`), as
    /// the thread last reported them.
    pub fn threads(&self) -> Vec<ThreadMetadata> {
        self.shared
            .lock()
            .threads
            .iter()
            .map(|t| t.metadata.clone())
            .collect()
    }

    /// The active tasks of every thread, in task order.
    pub fn active_tasks(&self) -> Vec<TaskId> {
        let mut all: Vec<TaskId> = self
            .threads()
            .into_iter()
            .flat_map(|t| t.active_tasks)
            .collect();
        all.sort();
        all
    }

    /// Closes the instance cleanly and waits for its threads: each commits
    /// and closes its clients, without leaving the group (Kafka Streams'
    /// default; librdkafka's consumer leaves anyway).
    ///
    /// # Errors
    /// A thread's failed commit (the instance is closed anyway).
    pub fn close(&self) -> Result<()> {
        self.close_with(false, None).map(|_| ())
    }

    /// Closes the instance and leaves the group at once (Kafka's
    /// `CloseOptions.leaveGroup(true)`).
    ///
    /// # Errors
    /// A thread's failed commit (the instance is closed anyway).
    pub fn close_and_leave_group(&self) -> Result<()> {
        self.close_with(true, None).map(|_| ())
    }

    /// [`close`](Self::close), waiting at most `timeout` for the threads
    /// (Kafka's `close(Duration)`); returns whether they all stopped. The
    /// threads not stopped in time go on closing, and the instance stays
    /// PENDING_SHUTDOWN until a later close finds them stopped.
    ///
    /// # Errors
    /// A thread's failed commit.
    pub fn close_timeout(&self, timeout: Duration) -> Result<bool> {
        self.close_with(false, Some(timeout))
    }

    fn close_with(&self, leave_group: bool, timeout: Option<Duration>) -> Result<bool> {
        if leave_group {
            self.leave_group.store(true, Ordering::SeqCst);
        }
        let on_own_thread = {
            let mut inner = self.shared.lock();
            if inner.state == State::NotRunning {
                return Ok(true);
            }
            Shared::transition(&mut inner, State::PendingShutdown);
            self.shared.shutdown.store(true, Ordering::SeqCst);
            let own = inner.thread_ids.contains(&std::thread::current().id());
            self.shared.deliver(inner);
            own
        };
        if on_own_thread {
            // Called from a stream thread (a state listener): it stops at
            // its next round; waiting for itself would never end.
            return Ok(false);
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        {
            let mut inner = self.shared.lock();
            while inner.live > 0 {
                let left = match deadline {
                    Some(d) => d.saturating_duration_since(Instant::now()),
                    None => Duration::from_secs(3600),
                };
                if left.is_zero() {
                    return Ok(false);
                }
                inner = self
                    .shared
                    .changed
                    .wait_timeout(inner, left)
                    .map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
        }
        let handles: Vec<JoinHandle<Result<()>>> = std::mem::take(
            &mut *self
                .handles
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut first = Ok(());
        for handle in handles {
            // A panicked thread was reported by its exit guard.
            if let Ok(Err(e)) = handle.join()
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        // A failed instance is ERROR by now: ERROR -> PENDING_SHUTDOWN.
        self.shared.set_state(State::PendingShutdown);
        self.shared.set_state(State::NotRunning);
        first.map(|()| true)
    }
}

impl Drop for ThreadedKafkaStreams {
    /// Closes the instance (see [`close`](Self::close)) if it still runs:
    /// its threads never outlive it.
    fn drop(&mut self) {
        let _ = self.close_with(false, None);
    }
}

// The handle crosses threads; what the threads share must too.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<ThreadedKafkaStreams>();
};
