//! `TopicPartition`: a topic's name and a partition number, written
//! `topic-partition` as Kafka writes it. It belongs to the client API
//! (`streams-clients`), the floor this broker stands on.
//!
//! ```
//! use streams_broker::TopicPartition;
//!
//! assert_eq!(TopicPartition::new("orders", 2).to_string(), "orders-2");
//! ```

pub use streams_clients::TopicPartition;
