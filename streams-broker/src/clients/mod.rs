//! The clients of the simulated cluster, as Kafka's client library has
//! them: a [`Producer`], a [`Consumer`] and an [`Admin`]. Keys, values and
//! headers are bytes; typed records go through the project's serdes in
//! `streams-test`.

mod admin;
mod consumer;
mod delayed_fetch;
mod producer;

pub use admin::{Admin, AlterConfigOp, ConfigEntry, ListedOffset, NewTopic, OffsetSpec};
pub use consumer::{AutoOffsetReset, Consumer, ConsumerConfig, ConsumerRecord};
pub use producer::{Acks, PendingSend, Producer, ProducerConfig, ProducerRecord, RecordMetadata};
