//! The admin client, as much of Kafka's `Admin` as a Streams runtime
//! needs: create its internal topics, learn partition counts, and purge
//! repartition topics with delete-records.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::record::TopicPartition;

/// A topic to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    /// The name.
    pub name: String,
    /// The partition count.
    pub partitions: i32,
    /// The replication factor (`-1`: the broker's default).
    pub replication_factor: i16,
    /// Topic configs by Kafka's names (`cleanup.policy`, ...).
    pub configs: BTreeMap<String, String>,
}

impl NewTopic {
    /// A topic of `partitions` partitions with the broker's default
    /// replication factor and configs.
    pub fn new(name: impl Into<String>, partitions: i32) -> Self {
        Self {
            name: name.into(),
            partitions,
            replication_factor: -1,
            configs: BTreeMap::new(),
        }
    }

    /// Sets a topic config.
    #[must_use]
    pub fn config(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.configs.insert(name.into(), value.into());
        self
    }

    /// Sets the replication factor.
    #[must_use]
    pub fn replication_factor(mut self, factor: i16) -> Self {
        self.replication_factor = factor;
        self
    }
}

/// An admin client. See the [module docs](self).
pub trait Admin: Send + std::fmt::Debug {
    /// Creates `topic`.
    ///
    /// # Errors
    /// [`crate::ClientError::TopicExists`], or the broker refused a config.
    fn create_topic(&mut self, topic: &NewTopic) -> Result<()>;

    /// The names of the cluster's topics, sorted, without Kafka's own
    /// internal topics (`__consumer_offsets`, `__transaction_state`), as
    /// Kafka's `listTopics()` gives them.
    ///
    /// # Errors
    /// The cluster could not be asked.
    fn list_topics(&mut self) -> Result<Vec<String>>;

    /// The partition count of `topic`, `None` when it does not exist.
    ///
    /// # Errors
    /// The cluster could not be asked.
    fn partition_count(&mut self, topic: &str) -> Result<Option<i32>>;

    /// Deletes the records before each given offset (Kafka's
    /// `deleteRecords`): the log start offset moves there.
    ///
    /// # Errors
    /// A partition that does not exist, or an offset above its high
    /// watermark.
    fn delete_records(&mut self, before: &BTreeMap<TopicPartition, i64>) -> Result<()>;
}
