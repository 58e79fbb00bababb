//! The clients of the simulated cluster, as Kafka's client library has
//! them: a [`Producer`] (transactional with a `transactional.id`), a
//! [`Consumer`] (with an [`IsolationLevel`]) and an [`Admin`]. Keys, values and
//! headers are bytes; typed records go through the project's serdes in
//! `streams-test`.

mod admin;
mod consumer;
mod delayed_fetch;
mod isolation;
mod producer;
mod transactional;

pub use admin::{Admin, AlterConfigOp, ConfigEntry, ListedOffset, NewTopic, OffsetSpec};
pub use consumer::{AutoOffsetReset, Consumer, ConsumerConfig, ConsumerRecord};
pub use isolation::IsolationLevel;
pub use producer::{Acks, PendingSend, Producer, ProducerConfig, ProducerRecord, RecordMetadata};
pub use transactional::TransactionManagerState;
