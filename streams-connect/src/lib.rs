//! A Kafka Connect-style sink pipeline over the client API, with
//! Connect's error handling (KIP-298): `errors.tolerance`, retries with
//! backoff on the client clock, the error log and a dead letter queue
//! whose `__connect.errors.*` headers say what failed, where and why.
//!
//! Why a crate of its own: Connect is not Streams. It stands, like the
//! Streams runtime, on the client API (`streams-clients`: a consumer
//! reads the topics, a producer writes the DLQ, the clock times retries),
//! and borrows only the serdes of `streams-core` (to use them as
//! converters); it knows nothing of topologies or of the simulated
//! broker, which `streams-test` plugs in underneath.
//!
//! The pipeline, as Kafka's `WorkerSinkTask` runs it for each record:
//!
//! 1. [`Converter`]s turn the key, value and headers from bytes into
//!    Connect data ([`data::Value`] with an optional [`data::Schema`]):
//!    [`StringConverter`], [`json::JsonConverter`] (with and without
//!    schemas), [`converter::SerdeConverter`] for the project's serdes.
//! 2. The transforms ([`transforms`]: `InsertField`, `ReplaceField`,
//!    `Cast`, `Filter`, each with an optional predicate) change or drop
//!    the [`SinkRecord`].
//! 3. The [`SinkTask`] receives the batch in `put`.
//!
//! Each stage runs under the [`errors::RetryWithToleranceOperator`]:
//! a retriable error is retried (300 ms, 600 ms, 1200 ms, ... up to
//! `errors.retry.delay.max.ms`, until `errors.retry.timeout`); a
//! converter's or transform's error (a retriable one too, once its
//! retries run out) is tolerated under
//! `errors.tolerance=all` (the record is skipped, logged with
//! `errors.log.enable`, and written to `errors.deadletterqueue.topic.name`
//! as consumed) and fails the task under `none`, with a [`TaskError`]
//! naming the topic, partition, offset and stage. The counts are
//! Connect's task error metrics ([`errors::ErrorHandlingMetrics`]).
//! The built-in converters and transforms only raise `DataException`s,
//! so they are tolerated, never retried; a custom one that returns
//! [`ConnectError::retriable`] is retried, as in Kafka. A retriable error
//! from `put` is Kafka's other path: the worker redelivers the whole batch
//! on a later poll (after [`SinkTaskContext::timeout`], if the task set
//! one), without `errors.retry.timeout`; any other `put` error fails the
//! task whatever the tolerance; a record the task reports as errant
//! ([`SinkTaskContext::report`]) goes to the DLQ with stage `TASK_PUT`.
//!
//! A JSON value that does not parse, with `errors.tolerance=all` and a
//! DLQ, on the simulated cluster:
//!
//! ```
//! use streams_broker::clients::api::SimulatedClients;
//! use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};
//! use streams_connect::json::JsonConverter;
//! use streams_connect::worker::WorkerSinkTask;
//! use streams_connect::{ConnectError, SinkConnectorConfig, SinkRecord, SinkTask, SinkTaskContext};
//!
//! #[derive(Debug, Default)]
//! struct Collect(Vec<SinkRecord>);
//! impl SinkTask for Collect {
//!     fn put(&mut self, records: &[SinkRecord], _: &mut SinkTaskContext) -> Result<(), ConnectError> {
//!         self.0.extend_from_slice(records);
//!         Ok(())
//!     }
//! }
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("orders", 1))?;
//! let producer = cluster.producer();
//! producer.send(ProducerRecord::new("orders", "o-1", r#"{"id":1}"#))?;
//! producer.send(ProducerRecord::new("orders", "o-2", "{not json"))?;
//! let config = SinkConnectorConfig::from_props([
//!     ("name", "orders-sink"),
//!     ("topics", "orders"),
//!     ("errors.tolerance", "all"),
//!     ("errors.deadletterqueue.topic.name", "dlq"),
//!     ("errors.deadletterqueue.topic.replication.factor", "1"),
//!     ("errors.deadletterqueue.context.headers.enable", "true"),
//! ])?;
//! let mut worker = WorkerSinkTask::builder(config)
//!     .value_converter(JsonConverter::schemaless())
//!     .build(Collect::default(), &SimulatedClients::new(cluster.clone()))?;
//! worker.poll_once()?;
//!
//! assert_eq!(worker.task().0.len(), 1);
//! let dlq = cluster.log_records(&TopicPartition::new("dlq", 0))?;
//! assert_eq!(dlq[0].value.as_deref(), Some(&b"{not json"[..]));
//! let stage = dlq[0].headers.iter().find(|h| h.key == "__connect.errors.stage");
//! assert_eq!(stage.and_then(|h| h.value.as_deref()), Some(&b"VALUE_CONVERTER"[..]));
//! assert_eq!(worker.metric("total-records-skipped"), Some(1.0));
//! assert_eq!(worker.metric("deadletterqueue-produce-requests"), Some(1.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Kafka Connect 4.4.0 is the oracle: `compat/connect` runs the same
//! scenarios through Kafka's own error handling and
//! `tests/oracle.rs` compares the DLQ records (every header byte for
//! byte, the stack trace by its first line), the kept records, the
//! metrics, the retry waits, the error log and the failures.
//!
//! Where this differs from Kafka, the item says so: the stack trace
//! header has no Java frames ([`ConnectError::stacktrace`]); an error is
//! one of Connect's three exceptions, never another Java class
//! ([`ErrorKind`]); `last-error-timestamp` reads the client clock, not
//! the wall clock; the retry delay past the maximum is the maximum, not a
//! random value below it;
//! there is no `SimpleHeaderConverter` (headers default to
//! [`StringConverter`]); converters only read (there is no
//! `fromConnectData`); the task is assigned its topics' partitions rather
//! than joining a group.
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

pub mod config;
pub mod converter;
pub mod data;
pub mod error;
pub mod errors;
pub mod json;
pub mod record;
pub mod task;
pub mod transforms;
pub mod worker;

pub use config::{SinkConnectorConfig, ToleranceType};
pub use converter::{Converter, HeaderConverter, StringConverter};
pub use error::{ConfigError, ConnectError, ErrorKind, RecordFailure, TaskError};
pub use errors::Stage;
pub use record::SinkRecord;
pub use task::{SinkTask, SinkTaskContext};
pub use worker::{PollOutcome, WorkerSinkTask};
