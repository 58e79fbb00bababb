//! Integration tests: ports of Kafka's `TestTopicsTest` and
//! `TopologyTestDriverTest` (the scenarios that apply to stateless
//! topologies), one test per stateless DSL operator, the Processor API,
//! error reporting, and property tests.
//!
//! Expected values come from Kafka's tests and from the Kafka oracle's
//! golden files in `compat/golden/` (what Kafka 4.4's own
//! `TopologyTestDriver` produced for the same scenario).

mod cluster_changelog;
mod compat;
mod compat_runtime;
mod dead_letter_queue;
mod driver;
mod driver_stores;
mod dsl;
mod errors;
mod optimization;
mod processor_api;
mod properties;
mod readme_example;
mod readme_runtime;
mod readme_stateful;
mod record_cache;
mod regressions;
mod repartition_required;
mod runtime;
mod runtime_global;
mod runtime_optimization;
mod runtime_partitioner;
mod runtime_tasks;
mod runtime_threads;
mod runtime_versioned;
mod stream_joins;
mod support;
mod to_table;
mod topics;
