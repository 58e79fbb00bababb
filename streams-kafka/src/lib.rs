//! The client API (`streams-clients`) over rdkafka, so that the
//! `KafkaStreams` runtime of `streams-core`, which knows only that API,
//! runs on a real Kafka cluster. The simulated cluster's supplier
//! (`streams-broker`'s `SimulatedClients`) runs the same runtime in tests
//! on a mock clock; this one runs it in real time, through librdkafka.
//!
//! Why a crate of its own: rdkafka builds librdkafka from C sources (about
//! four minutes cold on two cores) and links it; users of the
//! `TopologyTestDriver` and of the simulated cluster never compile it.
//! Add it only to the binary that goes to production.
//!
//! - [`KafkaClients`]: the [`ClientSupplier`], from a `bootstrap.servers`
//!   and extra librdkafka settings; Kafka's configuration names are mapped
//!   to librdkafka's ([`config`]).
//! - [`KafkaProducer`]: sends, flushes that return the metadata in send
//!   order, and transactions (`exactly_once_v2`).
//! - [`KafkaConsumer`]: group subscription with rebalances reported by
//!   `poll`, manual assignment, seeks, commits, end offsets (the last
//!   stable offset under `read_committed`).
//! - [`KafkaAdmin`]: topics, partition counts, delete-records.
//!
//! What works and what does not, compared with Kafka Streams:
//! - The rebalance protocol is Kafka's classic consumer-group protocol
//!   with librdkafka's eager `range` assignor: librdkafka cannot run a
//!   custom assignor, so Kafka Streams' `stream` assignor does not run and
//!   a `Rebalance::Assigned` carries no task lists. The runtime then
//!   derives its active tasks from the partitions it got: every task whose
//!   input partitions are all assigned to it. Range assignment gives
//!   partition `p` of every subscribed topic with the same partition count
//!   to the same member, so a task that reads co-partitioned topics (a
//!   join) gets all of its inputs.
//! - So there are no standby replicas and no sticky task assignment: a
//!   rebalance may move a stateful task, which then restores its stores
//!   from the changelog; `num.standby.replicas` is ignored.
//! - `exactly_once_v2` uses librdkafka's transactional producer with the
//!   consumer's group metadata; `at_least_once` commits after the
//!   producer's acknowledgements.
//! - librdkafka leaves the group on close (there is no close without
//!   leave-group short of `group.instance.id`).
//! - `num.stream.threads` above one means real threads with
//!   `streams_core::runtime::ThreadedKafkaStreams`: one OS thread per
//!   stream thread, each a member of the group with its own topology from
//!   a topology supplier (a `Topology` holds `Rc`s and stays on its
//!   thread), and a `close` that joins them. The stepped `KafkaStreams`
//!   runs its stream threads in turn on the caller's thread.
//! - Kafka's client configuration names reach librdkafka unchanged,
//!   renamed where librdkafka spells them differently, or dropped where
//!   they are Java-only ([`config`]); `security.protocol`, `sasl.*` and
//!   `ssl.*` pass through (Java's `sasl.jaas.config` is refused with a
//!   message saying what librdkafka takes instead).
//!
//! Security: give the settings to every client with [`KafkaClients::with`]
//! (`security.protocol=SASL_PLAINTEXT` or `SASL_SSL`, `sasl.mechanism`,
//! `sasl.username`, `sasl.password`, `ssl.*`). A refused authentication
//! is [`ClientError::Authentication`] as soon as librdkafka hears of it
//! (librdkafka itself would only time out), so an application with wrong
//! credentials fails to start within about a second, in state ERROR.
//! Secret values (`sasl.password`, `ssl.key.password`, a JAAS config, any
//! setting [`config::is_secret`] names) never appear in a `Debug` output,
//! an error, or a log line: librdkafka's log lines and error callbacks go
//! to the `log` crate (target `librdkafka`) with them replaced by
//! `[redacted]`.
//!
//! When the cluster goes away: every blocking call of these clients is
//! bounded by `default.api.timeout.ms` (Kafka's 30 s; settable for all
//! clients with [`KafkaClients::with`]) and fails with a typed error
//! ([`ClientError::Unreachable`] when no broker or coordinator answers,
//! [`ClientError::Timeout`]); a poll only waits. A running application
//! rides out a broker that restarts: its consumers lose their group
//! session after `session.timeout.ms` (the instance goes REBALANCING,
//! tasks closed without committing), rejoin when the broker is back, and
//! the tasks start again from the committed offsets, restoring their
//! stores. A commit that cannot reach the cluster in time fails the
//! instance (ERROR, the typed error in `error()`), as does a start that
//! cannot. The end offsets a task looks at each round
//! ([`Consumer::current_lags`]) come from the last fetch responses
//! (librdkafka's statistics, every 100 ms), not from a request.
//!
//! Real time: the clients' [`Clock`] is the system clock; each stream
//! thread of a `ThreadedKafkaStreams` steps itself in a loop (a stepped
//! `KafkaStreams` is stepped by its caller), and each poll waits up to
//! [`KafkaClients::poll_timeout`] for records. End offsets are asked on a
//! side client of each consumer, because a broker answers one request per
//! connection at a time and a ListOffsets queued behind a long-polling
//! fetch would wait `fetch.wait.max.ms`.
//!
//! Tested end to end against a real Kafka 4.4.0 broker (`tests/real_kafka`,
//! which starts one with `scripts/kafka-up` when Java and Maven are there):
//! the client traits, and a word count over 3 partitions whose output
//! equals the `TopologyTestDriver`'s, with one instance, under
//! `exactly_once_v2`, with two instances sharing the tasks, with an
//! instance that joins a running one, takes over tasks and restores their
//! counts from the changelog, and with two OS stream threads over 4
//! partitions; and an instance killed (`SIGKILL`, a child process) with
//! uncommitted work, whose tasks another instance takes over: under
//! `exactly_once_v2` the `read_committed` output is the driver's, one
//! record per counted word, the dead instance's in an aborted
//! transaction; under `at_least_once` nothing is lost and only the words
//! counted after the last commit are counted again. And a broker stopped
//! and started again (`scripts/kafka-down --keep`, `scripts/kafka-up
//! --dir`): an idle `exactly_once_v2` application goes REBALANCING and
//! back to RUNNING with the driver's counts, an application started
//! meanwhile fails in bounded time with [`ClientError::Unreachable`] and
//! goes to ERROR, and one closed meanwhile with uncommitted work fails its
//! commit in bounded time, typed, its successor losing nothing. And
//! SASL/PLAIN on a `SASL_PLAINTEXT` listener (`scripts/kafka-up --sasl`):
//! the driver's counts with the right password; with a wrong one the
//! application, a consumer's poll and `init_transactions` fail with
//! [`ClientError::Authentication`] in about a second, and neither password
//! is in any `Debug`, error or log line (librdkafka's debug logs on).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use streams_core::runtime::{State, ThreadedKafkaStreams};
//! use streams_core::{StreamsBuilder, StreamsConfig};
//! use streams_kafka::KafkaClients;
//!
//! // Called once per stream thread: each builds its own topology.
//! let topology = || {
//!     let builder = StreamsBuilder::new();
//!     builder.stream::<String, String>("words").group_by(|_, w| w.clone()).count().to_stream().to("counts");
//!     builder.build()
//! };
//! let config = StreamsConfig::new("word-count").with_property("num.stream.threads", "2");
//! let clients = Arc::new(KafkaClients::new("127.0.0.1:9092"));
//! let app = ThreadedKafkaStreams::new(topology, config, clients)?;
//! app.start()?;
//! app.wait_for(Duration::from_secs(60), |s| s == State::Running);
//! // ... until the process is told to stop:
//! app.close()?; // commits, and joins the threads
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_secrets() {
        let clients = KafkaClients::new("127.0.0.1:1")
            .with("sasl.password", "hunter2")
            .with("sasl.username", "alice");
        let shown = format!("{clients:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("alice") && shown.contains("[redacted]"),
            "{shown}"
        );
    }

    /// `sasl.password`, `ssl.key.password` and a JAAS config never show:
    /// not in `Debug`, not in the error of a client that refuses them
    /// (librdkafka knows no `sasl.jaas.config`, a Java-only setting).
    #[test]
    fn secrets_stay_out_of_debug_and_errors() {
        let clients = KafkaClients::new("127.0.0.1:1")
            .with("sasl.password", "hunter2")
            .with("ssl.key.password", "keypass7")
            .with(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"jaaspass9\";",
            );
        let err = clients.producer(&ClientConfig::new()).unwrap_err();
        assert!(
            matches!(&err, ClientError::InvalidConfig { name, value, .. } if name == "sasl.jaas.config" && value == "[redacted]"),
            "{err}"
        );
        let shown = format!("{clients:?} {err} {err:?}");
        for secret in ["hunter2", "keypass7", "jaaspass9"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    /// An unreachable cluster is an error that says so within
    /// `default.api.timeout.ms`, not a hang.
    #[test]
    fn unreachable_bootstrap_fails_in_time() {
        let clients = KafkaClients::new("127.0.0.1:1");
        let mut admin = clients
            .admin(&ClientConfig::new().set("default.api.timeout.ms", "1000"))
            .unwrap();
        let started = std::time::Instant::now();
        let err = admin.partition_count("words").unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(
                err,
                ClientError::Timeout { .. } | ClientError::Unreachable { .. }
            ) && err.is_retriable(),
            "{text}"
        );
        assert!(text.starts_with("rdkafka-admin: "), "{text}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// An application whose bootstrap server cannot be reached fails to
    /// start with a typed, retriable client error within
    /// `default.api.timeout.ms`, and is in state ERROR.
    #[test]
    fn unreachable_bootstrap_puts_the_application_in_error() {
        use streams_core::runtime::{RuntimeError, State, ThreadedKafkaStreams};
        let topology = || {
            let builder = streams_core::StreamsBuilder::new();
            builder.stream::<String, String>("in").to("out");
            builder.build()
        };
        let clients = KafkaClients::new("127.0.0.1:1").with("default.api.timeout.ms", "1500");
        let app = ThreadedKafkaStreams::new(
            topology,
            streams_core::StreamsConfig::new("unreachable"),
            Arc::new(clients),
        )
        .unwrap();
        let started = std::time::Instant::now();
        let err = app.start().unwrap_err();
        assert!(
            matches!(&err, RuntimeError::Client { source, .. } if source.is_retriable()),
            "{err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(app.state(), State::Error);
    }
}

pub mod admin;
pub mod config;
pub mod consumer;
mod error;
mod health;
pub mod producer;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use streams_clients::{
    Admin, ClientConfig, ClientError, ClientSupplier, Clock, Consumer, Producer, Result,
};

pub use admin::KafkaAdmin;
pub use consumer::KafkaConsumer;
pub use producer::KafkaProducer;

use crate::config::{Role, to_rdkafka};
use crate::consumer::{Registry, Settings};
use crate::health::Health;

/// The system clock: real clients live in real time.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// The rdkafka client supplier. See the [crate docs](crate). Its `Debug`
/// output shows secrets (`sasl.password`, `ssl.key.password`, ...) as
/// `[redacted]`.
///
/// ```no_run
/// use streams_clients::{ClientConfig, ClientSupplier, ProducerRecord};
/// use streams_kafka::KafkaClients;
///
/// let clients = KafkaClients::new("127.0.0.1:9092").with("linger.ms", "5");
/// let mut producer = clients.producer(&ClientConfig::new())?;
/// producer.send(ProducerRecord::new("words", "k", "hello"))?;
/// assert_eq!(producer.flush()?.len(), 1);
/// # Ok::<(), streams_clients::ClientError>(())
/// ```
pub struct KafkaClients {
    bootstrap: String,
    extra: BTreeMap<String, String>,
    poll_timeout: Duration,
    registry: Arc<Registry>,
    members: AtomicUsize,
    health: Arc<Health>,
}

impl std::fmt::Debug for KafkaClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let extra: BTreeMap<&str, &str> = self
            .extra
            .iter()
            .map(|(k, v)| (k.as_str(), config::shown(k, v)))
            .collect();
        f.debug_struct("KafkaClients")
            .field("bootstrap", &self.bootstrap)
            .field("extra", &extra)
            .field("poll_timeout", &self.poll_timeout)
            .finish_non_exhaustive()
    }
}

impl KafkaClients {
    /// Clients of the cluster at `bootstrap_servers` (`host:port,...`).
    pub fn new(bootstrap_servers: impl Into<String>) -> Self {
        KafkaClients {
            bootstrap: bootstrap_servers.into(),
            extra: BTreeMap::new(),
            poll_timeout: Duration::from_millis(100),
            registry: Arc::new(Registry::default()),
            members: AtomicUsize::new(0),
            health: Arc::new(Health::default()),
        }
    }

    /// Adds a librdkafka setting for every client (by librdkafka's name;
    /// a client's own config, by Kafka's names, wins). The names this
    /// crate reads itself count too: `default.api.timeout.ms` bounds every
    /// blocking call of every client (Kafka's default, 30 s).
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let (name, value) = (name.into(), value.into());
        self.health.add_secrets([(name.as_str(), value.as_str())]);
        self.extra.insert(name, value);
        self
    }

    /// How long a poll waits for a first record (default 100 ms): the
    /// runtime's `step` takes about this long when there is nothing to do.
    #[must_use]
    pub fn poll_timeout(mut self, timeout: Duration) -> Self {
        self.poll_timeout = timeout;
        self
    }

    /// The bootstrap servers.
    pub fn bootstrap_servers(&self) -> &str {
        &self.bootstrap
    }

    /// `default.api.timeout.ms` of the client's config, else of the
    /// supplier's settings, else Kafka's 30 s: how long a blocking call
    /// (a flush, a commit, end offsets, an admin call) may take.
    fn api_timeout(&self, config: &ClientConfig) -> Result<Duration> {
        let name = "default.api.timeout.ms";
        let ms = match (config.get(name), self.extra.get(name)) {
            (Some(_), _) => config.get_i64(name, 30_000)?,
            (None, Some(v)) => v.trim().parse().map_err(|_| ClientError::InvalidConfig {
                name: name.to_owned(),
                value: v.clone(),
                reason: "expected a positive number of milliseconds".to_owned(),
            })?,
            (None, None) => 30_000,
        };
        u64::try_from(ms)
            .ok()
            .filter(|&ms| ms > 0)
            .map(Duration::from_millis)
            .ok_or_else(|| ClientError::InvalidConfig {
                name: "default.api.timeout.ms".to_owned(),
                value: ms.to_string(),
                reason: "expected a positive number of milliseconds".to_owned(),
            })
    }

    /// The admin client that [`admin`](ClientSupplier::admin) boxes, for
    /// what only a real cluster answers, such as
    /// [`KafkaAdmin::topic_configs`].
    ///
    /// # Errors
    ///
    /// `InvalidConfig` for a setting librdkafka or this crate refuses.
    pub fn kafka_admin(&self, config: &ClientConfig) -> Result<KafkaAdmin> {
        self.health.add_secrets(config.iter());
        let native = to_rdkafka(Role::Admin, &self.bootstrap, &self.extra, config)?;
        KafkaAdmin::new(
            &native,
            Self::client_name(config, "admin"),
            self.api_timeout(config)?,
            self.health.clone(),
        )
    }

    fn client_name(config: &ClientConfig, kind: &str) -> String {
        config
            .get("client.id")
            .map_or_else(|| format!("rdkafka-{kind}"), str::to_owned)
    }
}

impl ClientSupplier for KafkaClients {
    fn producer(&self, config: &ClientConfig) -> Result<Box<dyn Producer>> {
        self.health.add_secrets(config.iter());
        let native = to_rdkafka(Role::Producer, &self.bootstrap, &self.extra, config)?;
        Ok(Box::new(KafkaProducer::new(
            &native,
            Self::client_name(config, "producer"),
            self.api_timeout(config)?,
            self.registry.clone(),
            self.health.clone(),
        )?))
    }

    fn consumer(&self, config: &ClientConfig) -> Result<Box<dyn Consumer>> {
        self.health.add_secrets(config.iter());
        let mut native = to_rdkafka(Role::Consumer, &self.bootstrap, &self.extra, config)?;
        let max_poll_records = config.get_i64("max.poll.records", 500)?;
        let max_poll_records = usize::try_from(max_poll_records)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| ClientError::InvalidConfig {
                name: "max.poll.records".to_owned(),
                value: max_poll_records.to_string(),
                reason: "expected at least 1".to_owned(),
            })?;
        let reset = config.get("auto.offset.reset").unwrap_or("latest").trim();
        let client = Self::client_name(config, "consumer");
        let n = self.members.fetch_add(1, Ordering::Relaxed);
        if config.get("group.id").is_none() {
            // librdkafka assigns partitions only through a group handle:
            // a consumer outside any group gets a group id of its own,
            // never joined, committed to or read from.
            native.set(
                "group.id",
                format!("streams-kafka-unjoined-{}-{n}", std::process::id()),
            );
            native.set("enable.auto.commit", "false");
            native.set("enable.auto.offset.store", "false");
        }
        let settings = Settings {
            member_id: format!("{client}#{n}"),
            client,
            group_id: config.get("group.id").map(str::to_owned),
            max_poll_records,
            poll_timeout: self.poll_timeout,
            api_timeout: self.api_timeout(config)?,
            earliest: reset == "earliest",
        };
        Ok(Box::new(KafkaConsumer::new(
            &native,
            settings,
            self.registry.clone(),
            self.health.clone(),
        )?))
    }

    fn admin(&self, config: &ClientConfig) -> Result<Box<dyn Admin>> {
        Ok(Box::new(self.kafka_admin(config)?))
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(SystemClock)
    }
}
