//! `TopicPartition`: a topic's name and a partition number, written
//! `topic-partition` as Kafka writes it.

use std::fmt;

/// A topic and one of its partitions.
///
/// ```
/// use streams_broker::TopicPartition;
///
/// assert_eq!(TopicPartition::new("orders", 2).to_string(), "orders-2");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    /// The topic's name.
    pub topic: String,
    /// The partition, from 0.
    pub partition: i32,
}

impl TopicPartition {
    /// The partition `partition` of `topic`.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}
