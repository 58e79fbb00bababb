//! A simulated Kafka broker, bytes-level and deterministic, for tests that
//! need what a real broker does to data over time: partitioned logs whose
//! offsets never go back, segments that roll, retention that deletes, a
//! log cleaner that keeps the latest value per key and removes tombstones
//! exactly when Kafka would (KIP-534, with the pre-fix KAFKA-8522 rule
//! beside it), and delete-records (KAFKA-5925's ground), all on a mock
//! clock that only the test moves. With several brokers it replicates:
//! leader epochs that fence zombie replicas (KAFKA-6880, with the pre-fix
//! rules beside it), the in-sync replicas, `acks=all` waiting in a
//! sharded purgatory on a timing wheel (KAFKA-6431), faults that are one
//! call each, and seeded fault schedules that replay exactly.
//!
//! Why a crate of its own: Kafka's layering. The client API (producer,
//! consumer, admin, records and batches) is the floor; this broker is one
//! implementation behind it, a real cluster another. It knows nothing of
//! Streams: `streams-test` depends on it (typed records through serdes at
//! the boundary), never the reverse.
//!
//! The core types:
//! - [`Cluster`]: the brokers' state and the mock clock; hands out clients.
//! - [`Producer`], [`Consumer`], [`Admin`]: Kafka's three clients.
//! - [`clients::group`]: the group coordinator (Kafka's classic protocol:
//!   generations, a leader that runs its assignor, eager rebalances,
//!   session and poll-interval timeouts); [`SimulatedClients`]: the client
//!   API's traits over the clients, for a Streams runtime.
//! - [`record::RecordBatch`]: Kafka's v2 batch, byte for byte.
//! - [`log::UnifiedLog`] and [`cleaner`]: a partition's log and its
//!   compaction.
//! - [`replication`]: brokers, leaders, epochs, the ISR and the faults;
//!   [`replication::schedule`]: seeded fault schedules.
//! - [`purgatory`] and [`timer`]: Kafka's delayed operations on a
//!   hierarchical timing wheel, which `acks=all` produces and waiting
//!   fetches use.
//! - [`transactions`]: the transaction coordinator; with the
//!   transactional [`Producer`], the last stable offset of the log and
//!   `read_committed` consumers, exactly-once (KIP-98, KIP-447).
//!
//! ```
//! use streams_broker::{AutoOffsetReset, Cluster, ConsumerConfig, NewTopic, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("greetings", 1))?;
//! let sent = cluster.producer().send(ProducerRecord::new("greetings", "en", "hello"))?;
//! assert_eq!((sent.partition, sent.offset), (0, 0));
//!
//! let mut consumer = cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
//! consumer.assign([TopicPartition::new("greetings", 0)]);
//! let records = consumer.poll()?;
//! assert_eq!(records[0].value.as_deref(), Some(&b"hello"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod cleaner;
pub mod clients;
pub mod cluster;
pub mod error;
pub mod inspect;
pub mod log;
pub use streams_clients::partitioner;
pub mod purgatory;
pub mod record;
pub mod replication;
pub mod timer;
mod topic_partition;
pub mod transactions;

pub use cleaner::{CleaningResult, TombstoneRetention};
pub use clients::{
    Acks, Admin, AlterConfigOp, AutoOffsetReset, ConfigEntry, Consumer, ConsumerConfig,
    ConsumerRecord, ListedOffset, NewTopic, OffsetSpec, PendingSend, Producer, ProducerConfig,
    ProducerRecord, RecordMetadata,
};
pub use clients::{
    ApiProducer, GroupDescription, GroupState, MemberDescription, RangeAssignor, SimulatedClients,
};
pub use clients::{IsolationLevel, TransactionManagerState};
pub use cluster::{BrokerConfig, Cluster, ClusterBuilder};
pub use error::{BrokerError, Result};
pub use inspect::{LogDump, LogInfo, SegmentInfo};
pub use replication::{BrokerId, BrokerStatus, PartitionState, ReplicationMode, TimelineEvent};
pub use streams_clients::{Polled, Rebalance};
pub use topic_partition::TopicPartition;
pub use transactions::{TransactionConfig, TransactionMetadata, TransactionState};
