//! Kafka's client API as Rust traits: the floor of the workspace.
//!
//! Kafka's layering, bottom up: the clients (producer, consumer, admin)
//! and the records they carry; behind them, a cluster (the simulated one
//! in `streams-broker`, a real one through rdkafka); above them, Streams,
//! which knows only these traits. This crate is that floor and nothing
//! else: no broker, no serdes, no Streams. Keys and values are bytes.
//!
//! - [`record`]: [`ProducerRecord`], [`RecordMetadata`], [`ConsumerRecord`],
//!   [`Header`], [`TopicPartition`].
//! - [`Producer`]: sends and flushes, and transactions.
//! - [`Consumer`]: assignment or group subscription with a
//!   [`PartitionAssignor`], polls that report rebalances, commits.
//! - [`Admin`]: topics, partition counts, delete-records.
//! - [`ClientSupplier`]: where a runtime gets the three, and the
//!   [`Clock`] they live on.
//! - [`ClientConfig`]: Kafka's configuration names and values.
//! - [`ClientError`]: errors by what the caller must do.
//!
//! ```
//! use std::collections::BTreeMap;
//! use streams_clients::{ClientError, RecordMetadata, Producer, ProducerRecord, Result};
//! use streams_clients::{GroupMetadata, TopicPartition};
//!
//! /// A producer that writes to a vector: enough to show the shape.
//! #[derive(Debug, Default)]
//! struct VecProducer { sent: Vec<ProducerRecord>, pending: usize }
//!
//! impl Producer for VecProducer {
//!     fn send(&mut self, record: ProducerRecord) -> Result<()> {
//!         self.sent.push(record);
//!         self.pending += 1;
//!         Ok(())
//!     }
//!     fn flush(&mut self) -> Result<Vec<RecordMetadata>> {
//!         let from = self.sent.len() - self.pending;
//!         self.pending = 0;
//!         Ok(self.sent[from..].iter().enumerate().map(|(i, r)| RecordMetadata {
//!             topic: r.topic.clone(), partition: 0, offset: (from + i) as i64, timestamp: -1,
//!         }).collect())
//!     }
//!     fn init_transactions(&mut self) -> Result<()> { Err(not_transactional("init_transactions")) }
//!     fn begin_transaction(&mut self) -> Result<()> { Err(not_transactional("begin_transaction")) }
//!     fn send_offsets_to_transaction(&mut self, _: &BTreeMap<TopicPartition, i64>, _: &GroupMetadata) -> Result<()> {
//!         Err(not_transactional("send_offsets_to_transaction"))
//!     }
//!     fn commit_transaction(&mut self) -> Result<()> { Err(not_transactional("commit_transaction")) }
//!     fn abort_transaction(&mut self) -> Result<()> { Err(not_transactional("abort_transaction")) }
//! }
//!
//! fn not_transactional(operation: &'static str) -> ClientError {
//!     ClientError::InvalidState {
//!         client: "vec-producer".into(), operation, state: "non-transactional".into(),
//!         hint: "configure a transactional.id",
//!     }
//! }
//!
//! let mut producer = VecProducer::default();
//! producer.send(ProducerRecord::new("out", "k", "v"))?;
//! assert_eq!(producer.flush()?[0].offset, 0);
//! assert!(producer.begin_transaction().is_err());
//! # Ok::<(), ClientError>(())
//! ```
#![deny(missing_docs)]

pub mod admin;
pub mod config;
pub mod consumer;
pub mod error;
pub mod partitioner;
pub mod producer;
pub mod record;
pub mod supplier;

pub use admin::{Admin, NewTopic};
pub use config::ClientConfig;
pub use consumer::{
    Assignment, Consumer, GroupMetadata, PartitionAssignor, Polled, Rebalance, Subscription,
};
pub use error::{ClientError, Result};
pub use producer::Producer;
pub use record::{
    ConsumerRecord, Header, ProducerRecord, RecordMetadata, TimestampType, TopicPartition,
};
pub use supplier::{ClientSupplier, Clock};
