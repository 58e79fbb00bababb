//! Running the real runtime, [`KafkaStreams`], on the simulated cluster:
//! several instances of an application over partitioned topics, stepped
//! deterministically, crashed and restarted on purpose. It reads like the
//! driver: create topics, start instances, produce typed input, run, read
//! typed output.
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::{StreamsBuilder, StreamsConfig};
//! use streams_test::app::StreamsCluster;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("words")
//!     .group_by(|_, w| w.clone())
//!     .count()
//!     .to_stream()
//!     .to_with("counts", streams_core::dsl::Produced::with(StringSerde, I64Serde));
//! let topology = builder.build()?;
//!
//! let mut app = StreamsCluster::new();
//! app.create_topic("words", 4)?;
//! app.create_topic("counts", 4)?;
//! app.start("a", &topology, StreamsConfig::new("word-count"))?;
//! app.start("b", &topology, StreamsConfig::new("word-count"))?;
//! let words = app.producer("words", StringSerde, StringSerde);
//! for (i, w) in ["kafka", "streams", "kafka"].iter().enumerate() {
//!     words.send(&format!("line-{i}"), Some(&w.to_string()), 10)?;
//! }
//! app.run_until_idle()?;
//! // Two instances share the 8 tasks (2 sub-topologies x 4 partitions).
//! assert_eq!(app.instance("a").unwrap().active_tasks().len(), 4);
//! let counts = app.latest_by_key("counts", StringSerde, I64Serde)?;
//! assert_eq!(counts.get("kafka"), Some(&2));
//! assert_eq!(counts.get("streams"), Some(&1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use streams_broker::clients::api::SimulatedClients;
use streams_broker::{Cluster, NewTopic};
use streams_core::runtime::{KafkaStreams, RuntimeError, State};
use streams_core::serde::Serde;
use streams_core::topology::Topology;
use streams_core::{StreamsConfig, StreamsError};

use crate::TestRecord;
use crate::cluster::{TypedProducer, read_partition, read_topic, read_topic_committed};
pub use streams_broker::IsolationLevel;

/// Why a [`StreamsCluster`] call failed.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// An instance's runtime failed.
    #[error("instance {instance}: {source}")]
    Runtime {
        /// The instance's name.
        instance: String,
        /// Its error.
        source: Box<RuntimeError>,
    },
    /// The cluster refused (a topic that exists, a bad partition count).
    #[error("the simulated cluster refused: {0}")]
    Cluster(#[from] streams_broker::BrokerError),
    /// Reading or writing typed records failed.
    #[error(transparent)]
    Records(#[from] StreamsError),
    /// No instance of this name is running.
    #[error("no instance named {name} is running; running: {running:?}")]
    UnknownInstance {
        /// The name asked for.
        name: String,
        /// The instances there are.
        running: Vec<String>,
    },
    /// An instance of this name is running already.
    #[error("an instance named {name} is running already; give each instance its own name")]
    DuplicateInstance {
        /// The name.
        name: String,
    },
    /// The instances kept working for longer than the bound.
    #[error(
        "the instances did not become idle within {rounds} rounds and {simulated_ms} ms of simulated time; something keeps producing (a punctuator?) or a group never stabilizes"
    )]
    NotIdle {
        /// Rounds stepped.
        rounds: usize,
        /// Simulated time advanced.
        simulated_ms: i64,
    },
}

/// What [`StreamsCluster::run_until_idle`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunStats {
    /// Rounds (each instance stepped once per round).
    pub rounds: usize,
    /// Records processed, over all instances.
    pub processed: usize,
    /// Simulated milliseconds the clock advanced (to commit intervals, or
    /// while a group waited).
    pub advanced_ms: i64,
}

/// A simulated cluster with `KafkaStreams` instances. See the [module docs](self).
#[derive(Debug)]
pub struct StreamsCluster {
    cluster: Cluster,
    clients: Arc<SimulatedClients>,
    instances: Vec<(String, KafkaStreams)>,
    /// Rounds and simulated time `run_until_idle` may spend.
    max_rounds: usize,
    max_wait_ms: i64,
}

impl Default for StreamsCluster {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamsCluster {
    /// A cluster of one broker on a mock clock at 0.
    pub fn new() -> Self {
        Self::with_cluster(Cluster::new())
    }

    /// Instances on `cluster` (several brokers, faults, other settings).
    pub fn with_cluster(cluster: Cluster) -> Self {
        StreamsCluster {
            clients: Arc::new(SimulatedClients::new(cluster.clone())),
            cluster,
            instances: Vec::new(),
            max_rounds: 100_000,
            max_wait_ms: 30 * 60 * 1000,
        }
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Creates `topic` with `partitions` partitions.
    ///
    /// # Errors
    /// The topic exists, or the count is not positive.
    pub fn create_topic(&self, topic: &str, partitions: i32) -> Result<(), AppError> {
        self.cluster
            .admin()
            .create_topic(NewTopic::new(topic, partitions))?;
        Ok(())
    }

    /// A typed producer to `topic`.
    pub fn producer<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> TypedProducer<K, V> {
        TypedProducer::new(&self.cluster, topic, key_serde, value_serde)
    }

    /// Starts an instance named `name` (its `client.id` and process id)
    /// of `topology` with `config`.
    ///
    /// # Errors
    /// A name already running; the runtime's errors at start (missing
    /// source topics, not co-partitioned topics, bad configs).
    pub fn start(
        &mut self,
        name: &str,
        topology: &Topology,
        config: StreamsConfig,
    ) -> Result<(), AppError> {
        self.start_with(name, topology, config, |_| {})
    }

    /// As [`start`](Self::start), with `prepare` called on the instance
    /// before it starts (a state listener, a restore listener).
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn start_with(
        &mut self,
        name: &str,
        topology: &Topology,
        config: StreamsConfig,
        prepare: impl FnOnce(&mut KafkaStreams),
    ) -> Result<(), AppError> {
        if self.instances.iter().any(|(n, _)| n == name) {
            return Err(AppError::DuplicateInstance {
                name: name.to_owned(),
            });
        }
        let runtime = |source| AppError::Runtime {
            instance: name.to_owned(),
            source: Box::new(source),
        };
        let config = config.with_property("client.id", name);
        let mut streams =
            KafkaStreams::new(topology, config, self.clients.clone()).map_err(runtime)?;
        prepare(&mut streams);
        streams.start().map_err(runtime)?;
        self.instances.push((name.to_owned(), streams));
        Ok(())
    }

    /// The running instance `name`.
    pub fn instance(&self, name: &str) -> Option<&KafkaStreams> {
        self.instances
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// The running instance `name`, to step or commit by hand.
    pub fn instance_mut(&mut self, name: &str) -> Option<&mut KafkaStreams> {
        self.instances
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// The names of the running instances, in the order they started.
    pub fn instance_names(&self) -> Vec<&str> {
        self.instances.iter().map(|(n, _)| n.as_str()).collect()
    }

    fn take(&mut self, name: &str) -> Result<KafkaStreams, AppError> {
        match self.instances.iter().position(|(n, _)| n == name) {
            Some(i) => Ok(self.instances.remove(i).1),
            None => Err(AppError::UnknownInstance {
                name: name.to_owned(),
                running: self
                    .instance_names()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }),
        }
    }

    /// Kills instance `name` as a process dies: no commit, no flush, no
    /// leave-group. The group notices when its session times out.
    ///
    /// # Errors
    /// No such instance.
    pub fn crash(&mut self, name: &str) -> Result<(), AppError> {
        self.take(name)?.crash();
        Ok(())
    }

    /// Closes instance `name` cleanly (it commits); it stays in the group
    /// until its session times out, as Kafka Streams' close does.
    ///
    /// # Errors
    /// No such instance, or its final commit failed.
    pub fn close(&mut self, name: &str) -> Result<(), AppError> {
        let mut streams = self.take(name)?;
        streams.close().map_err(|source| AppError::Runtime {
            instance: name.to_owned(),
            source: Box::new(source),
        })
    }

    /// Moves the cluster's clock by `ms` (sessions expire, commit
    /// intervals and transaction timeouts pass, the cleaner runs).
    pub fn advance(&mut self, ms: i64) {
        self.cluster.advance_ms(ms);
    }

    /// Steps every instance once, in the order they started; returns the
    /// records processed.
    ///
    /// # Errors
    /// An instance's error (the instance is then in state ERROR).
    pub fn step(&mut self) -> Result<usize, AppError> {
        let mut processed = 0;
        for (name, streams) in &mut self.instances {
            if !streams.state().is_running_or_rebalancing() {
                continue;
            }
            let before = streams.state();
            let progressed = streams.step().map_err(|source| AppError::Runtime {
                instance: name.clone(),
                source: Box::new(source),
            })?;
            let _ = before;
            processed += usize::from(progressed);
        }
        Ok(processed)
    }

    /// Steps the instances until nothing is left to do: all input
    /// processed and committed, every group settled. When no instance can
    /// move, the clock advances to the next commit (so caches flush and
    /// offsets commit, as `commit.interval.ms` would) or to the end of a
    /// task's `max.task.idle.ms` wait, or by a second while an instance
    /// waits for its group (a crashed member's session, a rebalance).
    ///
    /// # Errors
    /// An instance's error; [`AppError::NotIdle`] past the bounds.
    pub fn run_until_idle(&mut self) -> Result<RunStats, AppError> {
        let mut stats = RunStats::default();
        let mut quiet_rounds = 0;
        loop {
            if stats.rounds >= self.max_rounds || stats.advanced_ms > self.max_wait_ms {
                return Err(AppError::NotIdle {
                    rounds: stats.rounds,
                    simulated_ms: stats.advanced_ms,
                });
            }
            stats.rounds += 1;
            let processed = self.step()?;
            stats.processed += processed;
            if processed > 0 {
                quiet_rounds = 0;
                continue;
            }
            // A round without processing may still have moved a group
            // along; give it two more before moving the clock.
            quiet_rounds += 1;
            if quiet_rounds < 3 {
                continue;
            }
            let now = self.cluster.now_ms();
            let waiting = self
                .instances
                .iter()
                .any(|(_, s)| s.state() == State::Rebalancing);
            let next_commit = self
                .instances
                .iter()
                .filter(|(_, s)| s.has_uncommitted())
                .filter_map(|(_, s)| s.next_commit_ms())
                .chain(
                    self.instances
                        .iter()
                        .filter_map(|(_, s)| s.next_idle_deadline_ms()),
                )
                .min();
            let advance = match (waiting, next_commit) {
                (true, Some(at)) => (at - now).clamp(1, 1000),
                (true, None) => 1000,
                (false, Some(at)) => (at - now).max(1),
                (false, None) => return Ok(stats),
            };
            self.cluster.advance_ms(advance);
            stats.advanced_ms += advance;
            quiet_rounds = 0;
        }
    }

    /// Every record of `topic`, partition after partition, as a
    /// `read_uncommitted` consumer reads it (duplicates included).
    ///
    /// # Errors
    /// The topic is unknown, or a record does not decode.
    pub fn read<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Result<Vec<TestRecord<K, V>>, AppError> {
        Ok(read_topic(&self.cluster, topic, key_serde, value_serde)?)
    }

    /// As [`read`](Self::read), as a `read_committed` consumer: aborted
    /// transactions' records are not there.
    ///
    /// # Errors
    /// The topic is unknown, or a record does not decode.
    pub fn read_committed<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Result<Vec<TestRecord<K, V>>, AppError> {
        Ok(read_topic_committed(
            &self.cluster,
            topic,
            key_serde,
            value_serde,
        )?)
    }

    /// The records of partition `partition` of `topic`, in offset order,
    /// as a consumer with `isolation` reads them.
    ///
    /// ```
    /// use streams_core::serde::StringSerde;
    /// use streams_test::app::{IsolationLevel, StreamsCluster};
    ///
    /// let app = StreamsCluster::new();
    /// app.create_topic("t", 2)?;
    /// let p = app.producer("t", StringSerde, StringSerde);
    /// p.send(&"k".to_owned(), Some(&"v".to_owned()), 0)?;
    /// let (zero, one) = (
    ///     app.read_partition("t", 0, IsolationLevel::ReadUncommitted, StringSerde, StringSerde)?,
    ///     app.read_partition("t", 1, IsolationLevel::ReadUncommitted, StringSerde, StringSerde)?,
    /// );
    /// assert_eq!(zero.len() + one.len(), 1);
    /// assert!(app.read_partition("t", 2, IsolationLevel::ReadCommitted, StringSerde, StringSerde).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// The topic or partition is unknown, or a record does not decode.
    pub fn read_partition<K: 'static, V: 'static>(
        &self,
        topic: &str,
        partition: i32,
        isolation: IsolationLevel,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Result<Vec<TestRecord<K, V>>, AppError> {
        Ok(read_partition(
            &self.cluster,
            topic,
            partition,
            isolation,
            key_serde,
            value_serde,
        )?)
    }

    /// The last value per key of `topic` (read committed), as a table
    /// reading the topic would hold it; tombstones remove keys.
    ///
    /// # Errors
    /// The topic is unknown, or a record does not decode.
    pub fn latest_by_key<K: Ord + 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> Result<BTreeMap<K, V>, AppError> {
        let mut table = BTreeMap::new();
        for r in self.read_committed(topic, key_serde, value_serde)? {
            if let Some(k) = r.key {
                match r.value {
                    Some(v) => {
                        table.insert(k, v);
                    }
                    None => {
                        table.remove(&k);
                    }
                }
            }
        }
        Ok(table)
    }
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
