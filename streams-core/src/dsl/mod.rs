//! The DSL: [`StreamsBuilder`], [`KStream`] and their options.
//!
//! Operators mirror Kafka Streams' names in snake_case. Each adds a node
//! named as Kafka would name it (`KSTREAM-FILTER-0000000001`), unless the
//! stream is [`named`](KStream::named) first.
//!
//! # Keys, values and tombstones
//! Closures see a key as `Option<&K>`, since records on a stream often
//! have none, and a value as `&V`. A record whose value is `None` (a
//! tombstone) never reaches a closure:
//! - `filter`, `filter_not`, `peek`, `merge`, `repartition` and `to` pass
//!   it on unchanged; `map_values` and `flat_map_values` pass it on as a
//!   tombstone of the new value type; `split` sends it to the default branch;
//! - `foreach` skips it;
//! - `map`, `flat_map` and `select_key`, which need the value to compute a
//!   key, drop it and count it in the task's `dropped_records` metric.
//!
//! This is the one place where we differ from Kafka, whose closures receive
//! `null`; use [`KStream::process`] to see tombstones yourself.
//!
//! ```
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! let words = builder.stream::<String, String>("text")
//!     .flat_map_values(|line| line.split(' ').map(str::to_owned).collect::<Vec<_>>());
//! words.clone().filter(|_, w| w.len() > 3).to("long-words");
//! words.filter_not(|_, w| w.len() > 3).to("short-words");
//! assert_eq!(builder.build()?.node_names().len(), 6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod grouped;
mod kstream;
mod ktable;
mod options;
mod processors;
mod split;
mod table_processors;

pub use builder::StreamsBuilder;
pub use grouped::{KGroupedStream, KGroupedTable};
pub use kstream::KStream;
pub use ktable::KTable;
pub use options::{Branched, Consumed, Grouped, Materialized, Produced, Repartitioned};
pub use split::BranchedKStream;
