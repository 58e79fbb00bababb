//! The `KafkaStreams` runtime: a topology run as an application on a
//! cluster, its work split into tasks (one per sub-topology and partition,
//! Kafka's task ids `0_0`, `1_2`) that the instances of the application
//! share through a consumer group, with Kafka Streams' sticky assignor,
//! standby replicas, restoration from changelogs, commits every
//! `commit.interval.ms`, and `at_least_once` or `exactly_once_v2`.
//!
//! The runtime knows only the client API (`streams-clients`): its clients
//! come from a [`ClientSupplier`](streams_clients::ClientSupplier), Kafka
//! Streams' `KafkaClientSupplier`. `streams-broker`'s `SimulatedClients`
//! supplies the simulated cluster's clients, on its mock clock; there the
//! runtime spawns no thread: [`KafkaStreams::step`] runs each stream thread
//! once, so a test decides the interleaving of instances, crashes and
//! clock advances, and every run is the same.
//!
//! The parts, in the order a record meets them:
//! - [`metadata`]: partition counts (repartition topics get Kafka's) and
//!   the tasks, from the topology's [`TopicsInfo`](crate::topology::TopicsInfo);
//! - [`assignor`]: Kafka's sticky task assignor over plain data, plugged
//!   into each stream thread's consumer as the `stream` partition assignor;
//! - a stream thread: its consumer, producer and tasks; each task keeps
//!   Kafka's `PartitionGroup` order (lowest head timestamp first,
//!   `max.task.idle.ms`);
//! - [`restore`]: stores restored from their changelogs, with Kafka's
//!   restore-listener callbacks;
//! - [`KafkaStreams`]: the instance, its [`State`] and state listener.
pub mod assignor;
mod config;
mod error;
mod kafka_streams;
pub mod metadata;
pub mod restore;
mod streams_assignor;
mod task;
pub mod task_id;
mod thread;

pub use config::ProcessingGuarantee;
pub use error::{Result, RuntimeError};
pub use kafka_streams::{KafkaStreams, State, ThreadMetadata};
pub use metadata::{TaskMetadata, TopologyMetadata};
pub use restore::{RecordingRestoreListener, Restoration, RestoreListener};
pub use task_id::TaskId;
pub use thread::ThreadState;
