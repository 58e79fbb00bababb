//! The clients of the simulated cluster, as Kafka's client library has
//! them: a [`Producer`] (transactional with a `transactional.id`), a
//! [`Consumer`] (with an [`IsolationLevel`]) and an [`Admin`], the
//! [`group`] coordinator that shares a subscribed group's partitions out,
//! and the client API's traits over them ([`api`]: [`SimulatedClients`]
//! supplies them to a Streams runtime). Keys, values and headers are bytes;
//! typed records go through the project's serdes in `streams-test`.

mod admin;
pub mod api;
mod assignor;
mod consumer;
mod coordinator;
mod delayed_fetch;
pub mod group;
mod isolation;
mod producer;
mod transactional;

pub use api::{ApiProducer, SimulatedClients};
pub use assignor::RangeAssignor;
pub use group::{GroupDescription, GroupState, MemberDescription};

pub use admin::{Admin, AlterConfigOp, ConfigEntry, ListedOffset, NewTopic, OffsetSpec};
pub use consumer::{AutoOffsetReset, Consumer, ConsumerConfig, ConsumerRecord};
pub use isolation::IsolationLevel;
pub use producer::{
    Acks, PendingBatch, PendingSend, Producer, ProducerConfig, ProducerRecord, RecordMetadata,
};
pub use transactional::TransactionManagerState;
