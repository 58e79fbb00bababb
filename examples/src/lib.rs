//! Example topologies, each a function shared by its runnable program
//! (under `bin/`, run with `cargo run --example <name>`) and its tests.
//!
//! - [`orders`]: JSON orders parsed, filtered, enriched, split by region
//!   and routed to one topic per region.
//! - [`word_count`]: Kafka's word count, a grouped count kept in a store.
//!
//! ```
//! use streams_examples::orders;
//! let topology = orders::topology()?;
//! assert!(topology.node_names().contains(&"route-eu"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod orders;
pub mod word_count;
