//! Topic configs (Kafka's `LogConfig`): the names, defaults and validation
//! of Kafka 4.4's topic-level settings that the simulated log honours.
//!
//! Values are given as strings by Kafka's names, as with `kafka-configs` or
//! the admin client, and checked as Kafka's `ConfigDef` checks them:
//!
//! ```
//! use streams_broker::log::{CleanupPolicy, LogConfig};
//!
//! let config = LogConfig::from_pairs([
//!     ("cleanup.policy", "compact"),
//!     ("delete.retention.ms", "100"),
//! ])?;
//! assert_eq!(config.cleanup_policy, CleanupPolicy::Compact);
//! assert_eq!(config.delete_retention_ms, 100);
//! assert_eq!(config.min_cleanable_dirty_ratio, 0.5); // Kafka's default
//!
//! let err = LogConfig::from_pairs([("retention.ms", "-5")]).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "Invalid value -5 for configuration retention.ms: Value must be at least -1"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::record::TimestampType;

/// A topic config that is unknown or has a value Kafka would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Not a topic config this broker knows (Kafka's
    /// `InvalidConfigurationException`).
    #[error("Unknown topic config name: {name} (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The names this broker knows, comma separated.
        known: String,
    },
    /// A value outside the config's range or of the wrong type (Kafka's
    /// `ConfigException`, with its message).
    #[error("Invalid value {value} for configuration {name}: {reason}")]
    InvalidValue {
        /// The config's name.
        name: String,
        /// The value given.
        value: String,
        /// The allowed range or type, in Kafka's words.
        reason: String,
    },
}

/// `cleanup.policy`: what happens to old segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CleanupPolicy {
    /// `delete`: retention by time and size deletes whole segments.
    Delete,
    /// `compact`: the log cleaner keeps the latest record per key.
    Compact,
    /// `compact,delete`: both.
    CompactAndDelete,
}

impl CleanupPolicy {
    /// Whether old segments are deleted by retention (`delete` is in the
    /// policy).
    pub fn delete(self) -> bool {
        matches!(self, Self::Delete | Self::CompactAndDelete)
    }

    /// Whether the log cleaner compacts the log (`compact` is in the
    /// policy).
    pub fn compact(self) -> bool {
        matches!(self, Self::Compact | Self::CompactAndDelete)
    }
}

impl fmt::Display for CleanupPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Delete => "delete",
            Self::Compact => "compact",
            Self::CompactAndDelete => "compact,delete",
        })
    }
}

/// The topic-level configs of one log, with Kafka 4.4's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    /// `cleanup.policy` (default `delete`).
    pub cleanup_policy: CleanupPolicy,
    /// `retention.ms` (default 7 days; -1: no time limit).
    pub retention_ms: i64,
    /// `retention.bytes` (default -1: no size limit).
    pub retention_bytes: i64,
    /// The segment size at which the log rolls: `segment.bytes` (default
    /// 1 GiB, at least 1 MiB as in Kafka 4), or Kafka's test-only
    /// `internal.segment.bytes` when set (at least 14 bytes), which wins.
    pub segment_bytes: i32,
    /// `segment.ms` (default 7 days): roll when the incoming batch's
    /// timestamp is this much later than the segment's first batch.
    pub segment_ms: i64,
    /// `min.cleanable.dirty.ratio` (default 0.5).
    pub min_cleanable_dirty_ratio: f64,
    /// `min.compaction.lag.ms` (default 0).
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms` (default `i64::MAX`).
    pub max_compaction_lag_ms: i64,
    /// `delete.retention.ms` (default 1 day): how long a tombstone stays
    /// readable after the cleaner first keeps it.
    pub delete_retention_ms: i64,
    /// `message.timestamp.type` (default `CreateTime`).
    pub message_timestamp_type: TimestampType,
    /// `max.message.bytes` (default 1048588): the largest batch accepted.
    pub max_message_bytes: i32,
    /// `min.insync.replicas` (default 1): how many in-sync replicas an
    /// `acks=all` produce needs.
    pub min_insync_replicas: i32,
    /// `unclean.leader.election.enable` (default false): whether a replica
    /// outside the ISR may become leader when no in-sync one is alive.
    pub unclean_leader_election_enable: bool,
}

/// One MiB: Kafka 4's minimum `segment.bytes`.
pub const MIN_SEGMENT_BYTES: i64 = 1024 * 1024;
/// The smallest `internal.segment.bytes` (Kafka's legacy record overhead).
pub const MIN_INTERNAL_SEGMENT_BYTES: i64 = 14;

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            cleanup_policy: CleanupPolicy::Delete,
            retention_ms: 7 * 24 * 60 * 60 * 1000,
            retention_bytes: -1,
            segment_bytes: 1024 * 1024 * 1024,
            segment_ms: 7 * 24 * 60 * 60 * 1000,
            min_cleanable_dirty_ratio: 0.5,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            delete_retention_ms: 24 * 60 * 60 * 1000,
            message_timestamp_type: TimestampType::CreateTime,
            max_message_bytes: 1024 * 1024 + 12,
            min_insync_replicas: 1,
            unclean_leader_election_enable: false,
        }
    }
}

/// The topic configs this broker knows, by Kafka's names.
pub const CONFIG_NAMES: &[&str] = &[
    "cleanup.policy",
    "retention.ms",
    "retention.bytes",
    "segment.bytes",
    "internal.segment.bytes",
    "segment.ms",
    "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "delete.retention.ms",
    "message.timestamp.type",
    "max.message.bytes",
    "min.insync.replicas",
    "unclean.leader.election.enable",
];

fn invalid(name: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::InvalidValue {
        name: name.to_owned(),
        value: value.to_owned(),
        reason: reason.into(),
    }
}

fn parse_long(name: &str, value: &str, min: i64) -> Result<i64, ConfigError> {
    let n: i64 = value
        .trim()
        .parse()
        .map_err(|_| invalid(name, value, "Not a number of type LONG"))?;
    if n < min {
        return Err(invalid(
            name,
            value,
            format!("Value must be at least {min}"),
        ));
    }
    Ok(n)
}

fn parse_int(name: &str, value: &str, min: i64) -> Result<i32, ConfigError> {
    let n: i32 = value
        .trim()
        .parse()
        .map_err(|_| invalid(name, value, "Not a number of type INT"))?;
    if i64::from(n) < min {
        return Err(invalid(
            name,
            value,
            format!("Value must be at least {min}"),
        ));
    }
    Ok(n)
}

impl LogConfig {
    /// Kafka's defaults with the given configs applied, each validated.
    ///
    /// # Errors
    /// [`ConfigError::Unknown`] for a name this broker does not know, and
    /// [`ConfigError::InvalidValue`] for a value Kafka refuses.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        let mut internal_segment_bytes = None;
        for (name, value) in pairs {
            let (name, value) = (name.as_ref(), value.as_ref());
            if name == "internal.segment.bytes" {
                internal_segment_bytes = Some(parse_int(name, value, MIN_INTERNAL_SEGMENT_BYTES)?);
            } else {
                config.set(name, value)?;
            }
        }
        if let Some(bytes) = internal_segment_bytes {
            config.segment_bytes = bytes;
        }
        config.validate()?;
        Ok(config)
    }

    /// Sets one config by its Kafka name.
    ///
    /// # Errors
    /// As [`LogConfig::from_pairs`].
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        match name {
            "cleanup.policy" => {
                let mut delete = false;
                let mut compact = false;
                for part in value.split(',').map(str::trim) {
                    match part {
                        "delete" => delete = true,
                        "compact" => compact = true,
                        _ => {
                            return Err(invalid(
                                name,
                                value,
                                "String must be one of: compact, delete",
                            ));
                        }
                    }
                }
                self.cleanup_policy = match (compact, delete) {
                    (true, true) => CleanupPolicy::CompactAndDelete,
                    (true, false) => CleanupPolicy::Compact,
                    _ => CleanupPolicy::Delete,
                };
            }
            "retention.ms" => self.retention_ms = parse_long(name, value, -1)?,
            "retention.bytes" => self.retention_bytes = parse_long(name, value, i64::MIN)?,
            "segment.bytes" => self.segment_bytes = parse_int(name, value, MIN_SEGMENT_BYTES)?,
            "internal.segment.bytes" => {
                self.segment_bytes = parse_int(name, value, MIN_INTERNAL_SEGMENT_BYTES)?;
            }
            "segment.ms" => self.segment_ms = parse_long(name, value, 1)?,
            "min.cleanable.dirty.ratio" => {
                let ratio: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(name, value, "Not a number of type DOUBLE"))?;
                if ratio.is_nan() || ratio < 0.0 {
                    return Err(invalid(name, value, "Value must be at least 0"));
                }
                if ratio > 1.0 {
                    return Err(invalid(name, value, "Value must be no more than 1"));
                }
                self.min_cleanable_dirty_ratio = ratio;
            }
            "min.compaction.lag.ms" => self.min_compaction_lag_ms = parse_long(name, value, 0)?,
            "max.compaction.lag.ms" => self.max_compaction_lag_ms = parse_long(name, value, 1)?,
            "delete.retention.ms" => self.delete_retention_ms = parse_long(name, value, 0)?,
            "message.timestamp.type" => {
                self.message_timestamp_type = match value.trim() {
                    "CreateTime" => TimestampType::CreateTime,
                    "LogAppendTime" => TimestampType::LogAppendTime,
                    _ => {
                        return Err(invalid(
                            name,
                            value,
                            "String must be one of: CreateTime, LogAppendTime",
                        ));
                    }
                }
            }
            "max.message.bytes" => self.max_message_bytes = parse_int(name, value, 0)?,
            "min.insync.replicas" => self.min_insync_replicas = parse_int(name, value, 1)?,
            "unclean.leader.election.enable" => {
                self.unclean_leader_election_enable = match value.trim() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(invalid(
                            name,
                            value,
                            "Expected value to be either true or false",
                        ));
                    }
                }
            }
            _ => {
                return Err(ConfigError::Unknown {
                    name: name.to_owned(),
                    known: CONFIG_NAMES.join(", "),
                });
            }
        }
        Ok(())
    }

    /// Checks the rules between configs: `min.compaction.lag.ms` may not
    /// exceed `max.compaction.lag.ms` (Kafka's `validateValues`).
    ///
    /// # Errors
    /// [`ConfigError::InvalidValue`] naming `max.compaction.lag.ms`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(invalid(
                "max.compaction.lag.ms",
                &self.max_compaction_lag_ms.to_string(),
                format!(
                    "conflict: min.compaction.lag.ms={} must not be more than max.compaction.lag.ms",
                    self.min_compaction_lag_ms
                ),
            ));
        }
        Ok(())
    }

    /// The config's current value as Kafka writes it, by name.
    pub fn get(&self, name: &str) -> Option<String> {
        Some(match name {
            "cleanup.policy" => self.cleanup_policy.to_string(),
            "retention.ms" => self.retention_ms.to_string(),
            "retention.bytes" => self.retention_bytes.to_string(),
            "segment.bytes" | "internal.segment.bytes" => self.segment_bytes.to_string(),
            "segment.ms" => self.segment_ms.to_string(),
            "min.cleanable.dirty.ratio" => self.min_cleanable_dirty_ratio.to_string(),
            "min.compaction.lag.ms" => self.min_compaction_lag_ms.to_string(),
            "max.compaction.lag.ms" => self.max_compaction_lag_ms.to_string(),
            "delete.retention.ms" => self.delete_retention_ms.to_string(),
            "message.timestamp.type" => self.message_timestamp_type.to_string(),
            "max.message.bytes" => self.max_message_bytes.to_string(),
            "min.insync.replicas" => self.min_insync_replicas.to_string(),
            "unclean.leader.election.enable" => self.unclean_leader_election_enable.to_string(),
            _ => return None,
        })
    }

    /// Every config with its current value, by name (without
    /// `internal.segment.bytes`, which reads as `segment.bytes`).
    pub fn to_map(&self) -> BTreeMap<String, String> {
        CONFIG_NAMES
            .iter()
            .filter(|name| **name != "internal.segment.bytes")
            .filter_map(|name| self.get(name).map(|v| ((*name).to_owned(), v)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas() {
        let c = LogConfig::default();
        assert_eq!(c.to_map()["retention.ms"], "604800000");
        assert_eq!(c.to_map()["segment.bytes"], "1073741824");
        assert_eq!(c.to_map()["delete.retention.ms"], "86400000");
        assert_eq!(c.to_map()["max.message.bytes"], "1048588");
        assert_eq!(c.to_map()["cleanup.policy"], "delete");
        assert_eq!(c.to_map()["message.timestamp.type"], "CreateTime");
    }

    #[test]
    fn invalid_values_name_the_config_and_range() {
        let cases = [
            ("retention.ms", "-2", "Value must be at least -1"),
            ("segment.bytes", "1000", "Value must be at least 1048576"),
            ("internal.segment.bytes", "10", "Value must be at least 14"),
            ("segment.ms", "0", "Value must be at least 1"),
            (
                "min.cleanable.dirty.ratio",
                "1.5",
                "Value must be no more than 1",
            ),
            (
                "min.cleanable.dirty.ratio",
                "-0.1",
                "Value must be at least 0",
            ),
            ("delete.retention.ms", "abc", "Not a number of type LONG"),
            (
                "cleanup.policy",
                "forever",
                "String must be one of: compact, delete",
            ),
            (
                "message.timestamp.type",
                "Now",
                "String must be one of: CreateTime, LogAppendTime",
            ),
        ];
        for (name, value, reason) in cases {
            let err = LogConfig::from_pairs([(name, value)]).unwrap_err();
            assert_eq!(
                err,
                ConfigError::InvalidValue {
                    name: name.into(),
                    value: value.into(),
                    reason: reason.into()
                },
                "{name}={value}"
            );
        }
    }

    #[test]
    fn unknown_names_and_conflicts_are_refused() {
        let err = LogConfig::from_pairs([("retention.hours", "1")]).unwrap_err();
        assert!(matches!(err, ConfigError::Unknown { ref name, .. } if name == "retention.hours"));
        let err = LogConfig::from_pairs([
            ("min.compaction.lag.ms", "100"),
            ("max.compaction.lag.ms", "10"),
        ])
        .unwrap_err();
        assert!(
            matches!(err, ConfigError::InvalidValue { ref name, .. } if name == "max.compaction.lag.ms")
        );
    }

    #[test]
    fn internal_segment_bytes_wins_over_segment_bytes() {
        let c = LogConfig::from_pairs([
            ("internal.segment.bytes", "1024"),
            ("segment.bytes", "2097152"),
        ])
        .unwrap();
        assert_eq!(c.segment_bytes, 1024);
        let c = LogConfig::from_pairs([("cleanup.policy", "delete,compact")]).unwrap();
        assert_eq!(c.cleanup_policy, CleanupPolicy::CompactAndDelete);
        assert!(c.cleanup_policy.delete() && c.cleanup_policy.compact());
    }
}
