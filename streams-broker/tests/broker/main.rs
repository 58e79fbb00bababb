//! The simulated broker's scenarios: segments, retention, delete-records,
//! the log cleaner (KAFKA-8522, ports of Kafka's `LogCleanerTest`), the
//! clients and their consumer groups, and property tests against naive
//! reference models.
#![allow(clippy::unwrap_used)]

mod cleaner;
mod client_api;
mod clients;
mod delete_records;
mod groups;
mod log;
mod properties;
mod replication;
mod support;
mod transactions;
