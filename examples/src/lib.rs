//! Example topologies, each a function shared by its runnable program
//! (under `bin/`, run with `cargo run --example <name>`) and its tests.
//!
//! - [`connect_dead_letter_queue`]: a sink connector whose transform fails
//!   on one record, with `errors.tolerance=all` and a dead letter queue.
//! - [`poison_pill`]: a malformed JSON record and an Avro record with an
//!   unknown schema id among good ones, under fail, continue and a dead
//!   letter queue.
//! - [`compacted_word_count`]: word count whose changelog is compacted on
//!   the simulated broker and restored into a new driver.
//! - [`tombstone_life`]: a GDPR tombstone's life on a compacted topic, with
//!   KIP-534's fix and the KAFKA-8522 bug side by side.
//! - [`zombie_replica`]: KAFKA-6880 on a three-broker simulated cluster,
//!   the zombie fenced by leader epochs next to the pre-KIP-101 divergence.
//! - [`customer_addresses`]: the latest address per customer as a table,
//!   orders joined with it, and GDPR erasure by tombstone.
//! - [`orders`]: JSON orders parsed, filtered, enriched, split by region
//!   and routed to one topic per region.
//! - [`word_count`]: Kafka's word count, a grouped count kept in a store.
//! - [`runtime_word_count`]: the same word count run by `KafkaStreams` on
//!   the simulated cluster, 2 instances over 4 partitions, one crashing,
//!   under at-least-once and exactly-once.
//! - [`windowed_count`]: page views per user in tumbling windows, suppressed
//!   to one final count per window.
//!
//! ```
//! use streams_examples::orders;
//! let topology = orders::topology()?;
//! assert!(topology.node_names().contains(&"route-eu"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

pub mod compacted_word_count;
pub mod connect_dead_letter_queue;
pub mod customer_addresses;
pub mod orders;
pub mod poison_pill;
pub mod runtime_word_count;
pub mod tombstone_life;
pub mod windowed_count;
pub mod word_count;
pub mod zombie_replica;
