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
//! In production, on a real cluster, [`ThreadedKafkaStreams`] runs the
//! same stream threads as OS threads that step themselves
//! (`num.stream.threads` of them), each with its own topology from a
//! topology supplier, because a [`Topology`](crate::topology::Topology)
//! is not `Send`; its handle is `Send + Sync` and `close` joins the
//! threads.
//!
//! The parts, in the order a record meets them:
//! - [`metadata`]: partition counts (repartition topics get Kafka's) and
//!   the tasks, from the topology's [`TopicsInfo`](crate::topology::TopicsInfo),
//!   with source patterns resolved against the cluster's topics at start
//!   and the co-partition groups the DSL's joins registered;
//! - [`assignor`]: Kafka's sticky task assignor over plain data, plugged
//!   into each stream thread's consumer as the `stream` partition assignor;
//! - a stream thread: its consumer, producer and tasks; each task keeps
//!   Kafka's `PartitionGroup` order (lowest head timestamp first,
//!   `max.task.idle.ms`);
//! - [`restore`]: stores restored from their changelogs, with Kafka's
//!   restore-listener callbacks;
//! - the global stores (a `GlobalKTable`'s, `Topology::add_global_store`'s):
//!   one copy per instance, read to the end of their topics at `start`
//!   and updated at the start of every step, which every task reads
//!   ([`KafkaStreams::global_store`]);
//! - sinks with a [`StreamPartitioner`](crate::processor::StreamPartitioner)
//!   are told the cluster's partition count of their topic;
//! - [`KafkaStreams`]: the instance, its [`State`] and state listener;
//!   [`ThreadedKafkaStreams`]: the same on OS threads.
//!
//! Two instances of a word count over a 2-partition topic on the
//! simulated cluster, one of them crashing (`streams_test::app` wraps the
//! same calls for tests):
//!
//! ```
//! use std::sync::Arc;
//! use streams_broker::clients::api::SimulatedClients;
//! use streams_broker::{Cluster, NewTopic, ProducerRecord};
//! use streams_core::runtime::{KafkaStreams, State, TaskId};
//! use streams_core::{StreamsBuilder, StreamsConfig};
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("words").group_by(|_, w| w.clone()).count().to_stream().to("counts");
//! let topology = builder.build()?;
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("words", 2))?;
//! cluster.admin().create_topic(NewTopic::new("counts", 2))?;
//! let clients = Arc::new(SimulatedClients::new(cluster.clone()));
//! let config = |name: &str| StreamsConfig::new("wc").with_property("client.id", name);
//! let mut a = KafkaStreams::new(&topology, config("a"), clients.clone())?;
//! let mut b = KafkaStreams::new(&topology, config("b"), clients.clone())?;
//! a.start()?;
//! b.start()?;
//! for _ in 0..4 {
//!     a.step()?;
//!     b.step()?;
//! }
//! assert_eq!((a.state(), b.state()), (State::Running, State::Running));
//! // 2 sub-topologies x 2 partitions, shared: a keeps what it had first.
//! assert_eq!(a.active_tasks(), [TaskId::new(0, 0), TaskId::new(0, 1)]);
//! assert_eq!(b.active_tasks(), [TaskId::new(1, 0), TaskId::new(1, 1)]);
//!
//! cluster.producer().send(ProducerRecord::new("words", "k", "kafka"))?;
//! b.crash(); // no commit, no leave-group: the group waits for its session
//! cluster.advance_ms(45_000);
//! for _ in 0..4 {
//!     a.step()?;
//! }
//! assert_eq!(a.active_tasks().len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
pub mod assignor;
mod config;
mod error;
mod global_thread;
mod internal_topics;
mod kafka_streams;
pub mod metadata;
pub mod restore;
mod streams_assignor;
mod task;
pub mod task_id;
mod thread;
mod threaded;

pub use config::ProcessingGuarantee;
pub use error::{Result, RuntimeError};
pub use kafka_streams::{KafkaStreams, State, ThreadMetadata};
pub use metadata::{TaskMetadata, TopologyMetadata};
pub use restore::{RecordingRestoreListener, Restoration, RestoreListener};
pub use task_id::TaskId;
pub use thread::ThreadState;
pub use threaded::{ThreadedKafkaStreams, TopologySupplier};
