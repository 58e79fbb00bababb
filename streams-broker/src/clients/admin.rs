//! The admin client: creates and deletes topics, reads and alters their
//! configs, lists offsets, and deletes records (Kafka's `Admin`).
//!
//! ```
//! use streams_broker::{Cluster, NewTopic, OffsetSpec, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::new();
//! let admin = cluster.admin();
//! admin.create_topic(NewTopic::new("payments", 1))?;
//! let producer = cluster.producer();
//! for i in 0..10 {
//!     producer.send(ProducerRecord::new("payments", "k", "v").timestamp(i * 10))?;
//! }
//! let tp = TopicPartition::new("payments", 0);
//! assert_eq!(admin.delete_records_before(&tp, 4)?, 4); // the new low watermark
//! assert_eq!(admin.list_offsets(&tp, OffsetSpec::Earliest)?.map(|o| o.offset), Some(4));
//! assert_eq!(admin.list_offsets(&tp, OffsetSpec::Latest)?.map(|o| o.offset), Some(10));
//! assert_eq!(admin.list_offsets(&tp, OffsetSpec::Timestamp(55))?.map(|o| o.offset), Some(6));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use crate::cluster::{Cluster, Topic};
use crate::error::{BrokerError, Result};
use crate::log::LogConfig;
use crate::replication::Partition;
use crate::topic_partition::TopicPartition;

use super::IsolationLevel;

/// A topic to create: name, partition count, replication factor and
/// config overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTopic {
    /// The name.
    pub name: String,
    /// How many partitions.
    pub num_partitions: i32,
    /// How many replicas of each partition (at most the cluster's brokers).
    pub replication_factor: i16,
    /// Topic configs by Kafka's names.
    pub configs: Vec<(String, String)>,
}

impl NewTopic {
    /// A topic with `num_partitions` partitions and replication factor 1.
    pub fn new(name: impl Into<String>, num_partitions: i32) -> Self {
        Self {
            name: name.into(),
            num_partitions,
            replication_factor: 1,
            configs: Vec::new(),
        }
    }

    /// The replication factor.
    #[must_use]
    pub fn replication_factor(mut self, replication_factor: i16) -> Self {
        self.replication_factor = replication_factor;
        self
    }

    /// Sets a topic config (`cleanup.policy`, `retention.ms`, ...).
    #[must_use]
    pub fn config(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.configs.push((name.into(), value.into()));
        self
    }
}

/// Which offset [`Admin::list_offsets`] asks for (Kafka's `OffsetSpec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log start offset.
    Earliest,
    /// The high watermark.
    Latest,
    /// The first offset whose record's timestamp is at or after this one.
    Timestamp(i64),
    /// The record with the largest timestamp (KIP-734's
    /// `OffsetSpec.maxTimestamp()`): the first record of that timestamp in
    /// the first batch whose max timestamp it is.
    MaxTimestamp,
}

/// An offset [`Admin::list_offsets`] found (Kafka's
/// `ListOffsetsResultInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedOffset {
    /// The offset.
    pub offset: i64,
    /// The record's timestamp for [`OffsetSpec::Timestamp`] and
    /// [`OffsetSpec::MaxTimestamp`], else `None`.
    pub timestamp: Option<i64>,
}

/// A change to a topic's configs (Kafka's `AlterConfigOp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterConfigOp {
    /// Sets a config.
    Set(String, String),
    /// Removes an override: the config goes back to its default.
    Delete(String),
}

/// A topic's config as [`Admin::describe_configs`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The value in force.
    pub value: String,
    /// Whether the topic overrides the default.
    pub is_default: bool,
}

/// The admin client of the simulated cluster.
#[derive(Debug, Clone)]
pub struct Admin {
    pub(crate) cluster: Cluster,
}

/// Kafka's `Topic.validate`: 1 to 249 characters of `[a-zA-Z0-9._-]`, and
/// not `.` or `..`.
fn validate_topic_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("topic name is illegal, it can't be empty".to_owned())
    } else if name == "." || name == ".." {
        Some("topic name cannot be \".\" or \"..\"".to_owned())
    } else if name.len() > 249 {
        Some(format!(
            "topic name is longer than 249 characters ({})",
            name.len()
        ))
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        Some(
            "topic name contains a character other than ASCII alphanumerics, '.', '_' and '-'"
                .to_owned(),
        )
    } else {
        None
    };
    match reason {
        Some(reason) => Err(BrokerError::InvalidTopic {
            topic: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

impl Admin {
    pub(crate) fn new(cluster: Cluster) -> Self {
        Self { cluster }
    }

    /// Creates a topic, its partitions empty, their configs checked.
    ///
    /// # Errors
    /// [`BrokerError::InvalidTopic`], [`BrokerError::TopicAlreadyExists`],
    /// [`BrokerError::InvalidPartitions`],
    /// [`BrokerError::InvalidReplicationFactor`] or
    /// [`BrokerError::InvalidConfig`]; nothing is created then.
    pub fn create_topic(&self, topic: NewTopic) -> Result<()> {
        validate_topic_name(&topic.name)?;
        if topic.num_partitions < 1 {
            return Err(BrokerError::InvalidPartitions {
                topic: topic.name,
                partitions: topic.num_partitions,
            });
        }
        let brokers = self.cluster.state().brokers.len();
        if topic.replication_factor < 1
            || usize::try_from(topic.replication_factor).unwrap_or(0) > brokers
        {
            return Err(BrokerError::InvalidReplicationFactor {
                topic: topic.name,
                replication_factor: topic.replication_factor,
                brokers,
            });
        }
        let config =
            LogConfig::from_pairs(topic.configs.iter().map(|(k, v)| (k, v))).map_err(|source| {
                BrokerError::InvalidConfig {
                    topic: topic.name.clone(),
                    source,
                }
            })?;
        let mut state = self.cluster.state();
        if state.topics.contains_key(&topic.name) {
            return Err(BrokerError::TopicAlreadyExists { topic: topic.name });
        }
        let now = state.now_ms;
        // Kafka's rack-unaware assignment without its random start: the
        // replicas of partition p are brokers p, p+1, ... (mod the count),
        // the first the preferred leader.
        let ids: Vec<i32> = state.brokers.iter().map(|b| b.id).collect();
        let rf = usize::try_from(topic.replication_factor).unwrap_or(1);
        let partitions = (0..topic.num_partitions)
            .map(|p| {
                let first = usize::try_from(p).unwrap_or(0);
                let assignment = (0..rf).map(|i| ids[(first + i) % ids.len()]).collect();
                Partition::new(
                    &TopicPartition::new(topic.name.clone(), p),
                    &config,
                    assignment,
                    now,
                )
            })
            .collect();
        state.topics.insert(
            topic.name,
            Topic {
                overrides: topic.configs.into_iter().collect(),
                config,
                partitions,
            },
        );
        Ok(())
    }

    /// Creates each topic in turn, stopping at the first that fails.
    ///
    /// # Errors
    /// As [`Admin::create_topic`]; the topics before the failing one exist.
    pub fn create_topics(&self, topics: impl IntoIterator<Item = NewTopic>) -> Result<()> {
        topics.into_iter().try_for_each(|t| self.create_topic(t))
    }

    /// Deletes a topic and all its records.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`].
    pub fn delete_topic(&self, topic: &str) -> Result<()> {
        let mut state = self.cluster.state();
        if state.topics.remove(topic).is_none() {
            return Err(BrokerError::UnknownTopic {
                topic: topic.to_owned(),
            });
        }
        Ok(())
    }

    /// The topics' names, sorted.
    pub fn list_topics(&self) -> Vec<String> {
        self.cluster.topic_names()
    }

    /// How many partitions a topic has.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`].
    pub fn partition_count(&self, topic: &str) -> Result<i32> {
        let state = self.cluster.state();
        Ok(i32::try_from(state.topic(topic)?.partitions.len()).unwrap_or(i32::MAX))
    }

    /// Every config of a topic with its value and whether it is the
    /// default.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`].
    pub fn describe_configs(&self, topic: &str) -> Result<BTreeMap<String, ConfigEntry>> {
        let state = self.cluster.state();
        let t = state.topic(topic)?;
        let overridden = |name: &str| {
            t.overrides.contains_key(name)
                || (name == "segment.bytes" && t.overrides.contains_key("internal.segment.bytes"))
        };
        Ok(t.config
            .to_map()
            .into_iter()
            .map(|(name, value)| {
                let is_default = !overridden(&name);
                (name, ConfigEntry { value, is_default })
            })
            .collect())
    }

    /// Sets or removes topic configs (Kafka's `incrementalAlterConfigs`);
    /// every partition's log takes the new configs at once.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::InvalidConfig`];
    /// nothing changes then.
    pub fn incremental_alter_configs(
        &self,
        topic: &str,
        ops: impl IntoIterator<Item = AlterConfigOp>,
    ) -> Result<()> {
        let mut state = self.cluster.state();
        let t = state
            .topics
            .get_mut(topic)
            .ok_or_else(|| BrokerError::UnknownTopic {
                topic: topic.to_owned(),
            })?;
        let mut overrides = t.overrides.clone();
        for op in ops {
            match op {
                AlterConfigOp::Set(name, value) => {
                    overrides.insert(name, value);
                }
                AlterConfigOp::Delete(name) => {
                    overrides.remove(&name);
                }
            }
        }
        let config = LogConfig::from_pairs(overrides.iter()).map_err(|source| {
            BrokerError::InvalidConfig {
                topic: topic.to_owned(),
                source,
            }
        })?;
        for log in t.partitions.iter_mut().flat_map(|p| p.logs_mut()) {
            log.set_config(config.clone());
        }
        t.overrides = overrides;
        t.config = config;
        Ok(())
    }

    /// The offset `spec` asks for; `None` for a timestamp later than every
    /// record, and for [`OffsetSpec::MaxTimestamp`] on a log without
    /// records (Kafka answers offset -1, timestamp -1 to both).
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn list_offsets(
        &self,
        tp: &TopicPartition,
        spec: OffsetSpec,
    ) -> Result<Option<ListedOffset>> {
        self.list_offsets_with(tp, spec, IsolationLevel::ReadUncommitted)
    }

    /// [`list_offsets`](Admin::list_offsets) at an isolation level (Kafka's
    /// `ListOffsetsOptions(isolationLevel)`): under `read_committed`,
    /// [`OffsetSpec::Latest`] is the last stable offset, and an offset
    /// found by timestamp must be below it.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`] or [`BrokerError::UnknownPartition`].
    pub fn list_offsets_with(
        &self,
        tp: &TopicPartition,
        spec: OffsetSpec,
        isolation: IsolationLevel,
    ) -> Result<Option<ListedOffset>> {
        let state = self.cluster.state();
        let log = state.log(tp)?;
        let stable = |found: Option<ListedOffset>| match isolation {
            IsolationLevel::ReadUncommitted => found,
            IsolationLevel::ReadCommitted => found.filter(|o| o.offset < log.last_stable_offset()),
        };
        Ok(match spec {
            OffsetSpec::Earliest => Some(ListedOffset {
                offset: log.log_start_offset(),
                timestamp: None,
            }),
            OffsetSpec::Latest => Some(ListedOffset {
                offset: isolation.fetch_upper_bound(log),
                timestamp: None,
            }),
            OffsetSpec::Timestamp(ts) => stable(log.offset_for_timestamp(ts).map(
                |(offset, timestamp)| ListedOffset {
                    offset,
                    timestamp: Some(timestamp),
                },
            )),
            OffsetSpec::MaxTimestamp => stable(log.offset_of_max_timestamp().map(
                |(offset, timestamp)| ListedOffset {
                    offset,
                    timestamp: Some(timestamp),
                },
            )),
        })
    }

    /// Deletes the records of each partition below its offset (Kafka's
    /// `deleteRecords`; -1 means the high watermark): moves the log start
    /// offset there and returns the new low watermark per partition, or
    /// that partition's error. Segments wholly below the new start are
    /// removed at the next retention check, as in Kafka.
    pub fn delete_records(
        &self,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> BTreeMap<TopicPartition, Result<i64>> {
        offsets
            .into_iter()
            .map(|(tp, offset)| {
                let result = self.delete_records_before(&tp, offset);
                (tp, result)
            })
            .collect()
    }

    /// [`Admin::delete_records`] for one partition.
    ///
    /// # Errors
    /// [`BrokerError::UnknownTopic`], [`BrokerError::UnknownPartition`],
    /// [`BrokerError::PolicyViolation`] when `cleanup.policy` lacks
    /// `delete`, and [`BrokerError::OffsetOutOfRange`] for an offset above
    /// the high watermark or below -1; nothing changes then.
    pub fn delete_records_before(&self, tp: &TopicPartition, offset: i64) -> Result<i64> {
        let mut state = self.cluster.state();
        let log = state.log_mut(tp)?;
        let policy = log.config().cleanup_policy;
        if !policy.delete() {
            return Err(BrokerError::PolicyViolation {
                topic: tp.topic.clone(),
                partition: tp.partition,
                policy: policy.to_string(),
            });
        }
        let offset = if offset == -1 {
            log.high_watermark()
        } else {
            offset
        };
        if offset < 0 {
            return Err(BrokerError::OffsetOutOfRange {
                topic: tp.topic.clone(),
                partition: tp.partition,
                offset,
                log_start_offset: log.log_start_offset(),
                high_watermark: log.high_watermark(),
            });
        }
        log.maybe_increment_log_start_offset(offset)
    }
}
