//! A sink connector's configuration, by Kafka Connect's names, defaults
//! and validation (`ConnectorConfig`, `SinkConnectorConfig`):
//!
//! | name | default |
//! |---|---|
//! | `name` | required |
//! | `topics` | required (a comma-separated list) |
//! | `errors.tolerance` | `none` (or `all`) |
//! | `errors.retry.timeout` | `0` ms (no retries; `-1`: retry forever) |
//! | `errors.retry.delay.max.ms` | `60000` |
//! | `errors.log.enable` | `false` |
//! | `errors.log.include.messages` | `false` |
//! | `errors.deadletterqueue.topic.name` | `""` (no DLQ) |
//! | `errors.deadletterqueue.topic.replication.factor` | `3` |
//! | `errors.deadletterqueue.context.headers.enable` | `false` |
//! | `offset.flush.interval.ms` | `60000` (a worker config in Kafka) |
//!
//! ```
//! use streams_connect::config::{SinkConnectorConfig, ToleranceType};
//!
//! let config = SinkConnectorConfig::from_props([
//!     ("name", "jdbc-sink"),
//!     ("topics", "orders"),
//!     ("errors.tolerance", "all"),
//!     ("errors.deadletterqueue.topic.name", "dlq-orders"),
//! ])?;
//! assert_eq!(config.tolerance, ToleranceType::All);
//! assert_eq!(config.retry_timeout_ms, 0);
//! assert_eq!(config.retry_delay_max_ms, 60_000);
//! assert_eq!(config.dlq_topic_replication_factor, 3);
//!
//! let refused = SinkConnectorConfig::from_props([("name", "s"), ("topics", "t"), ("errors.tolerance", "some")]);
//! assert_eq!(
//!     refused.expect_err("fails").to_string(),
//!     "Invalid value some for configuration errors.tolerance: String must be one of: none, all"
//! );
//! # Ok::<(), streams_connect::ConfigError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::error::ConfigError;

/// `errors.tolerance`.
pub const ERRORS_TOLERANCE_CONFIG: &str = "errors.tolerance";
/// `errors.retry.timeout`.
pub const ERRORS_RETRY_TIMEOUT_CONFIG: &str = "errors.retry.timeout";
/// `errors.retry.delay.max.ms`.
pub const ERRORS_RETRY_MAX_DELAY_CONFIG: &str = "errors.retry.delay.max.ms";
/// `errors.log.enable`.
pub const ERRORS_LOG_ENABLE_CONFIG: &str = "errors.log.enable";
/// `errors.log.include.messages`.
pub const ERRORS_LOG_INCLUDE_MESSAGES_CONFIG: &str = "errors.log.include.messages";
/// `errors.deadletterqueue.topic.name`.
pub const DLQ_TOPIC_NAME_CONFIG: &str = "errors.deadletterqueue.topic.name";
/// `errors.deadletterqueue.topic.replication.factor`.
pub const DLQ_TOPIC_REPLICATION_FACTOR_CONFIG: &str =
    "errors.deadletterqueue.topic.replication.factor";
/// `errors.deadletterqueue.context.headers.enable`.
pub const DLQ_CONTEXT_HEADERS_ENABLE_CONFIG: &str = "errors.deadletterqueue.context.headers.enable";
/// `offset.flush.interval.ms` (a worker config in Kafka).
pub const OFFSET_FLUSH_INTERVAL_MS_CONFIG: &str = "offset.flush.interval.ms";

/// `errors.tolerance`: Kafka Connect's `ToleranceType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToleranceType {
    /// `none` (the default): any error fails the task.
    #[default]
    None,
    /// `all`: skip problematic records.
    All,
}

impl fmt::Display for ToleranceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToleranceType::None => "none",
            ToleranceType::All => "all",
        })
    }
}

/// A sink connector's configuration. See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkConnectorConfig {
    /// `name`: the connector's name.
    pub name: String,
    /// `topics`: the topics the connector reads.
    pub topics: Vec<String>,
    /// `errors.tolerance`.
    pub tolerance: ToleranceType,
    /// `errors.retry.timeout`, in ms; `-1` retries forever.
    pub retry_timeout_ms: i64,
    /// `errors.retry.delay.max.ms`.
    pub retry_delay_max_ms: i64,
    /// `errors.log.enable`.
    pub log_enable: bool,
    /// `errors.log.include.messages`.
    pub log_include_messages: bool,
    /// `errors.deadletterqueue.topic.name`, trimmed; empty: no DLQ.
    pub dlq_topic_name: String,
    /// `errors.deadletterqueue.topic.replication.factor`.
    pub dlq_topic_replication_factor: i16,
    /// `errors.deadletterqueue.context.headers.enable`.
    pub dlq_context_headers_enable: bool,
    /// `offset.flush.interval.ms`.
    pub offset_flush_interval_ms: i64,
    /// Every property as given (the sink task's `start` receives them).
    pub props: BTreeMap<String, String>,
}

fn invalid(name: &str, value: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_owned(),
        value: value.to_owned(),
        message: message.into(),
    }
}

fn long(props: &BTreeMap<String, String>, name: &str, default: i64) -> Result<i64, ConfigError> {
    match props.get(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| invalid(name, v, "Not a number of type LONG")),
    }
}

fn boolean(
    props: &BTreeMap<String, String>,
    name: &str,
    default: bool,
) -> Result<bool, ConfigError> {
    match props.get(name) {
        None => Ok(default),
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(invalid(
                name,
                v,
                "Expected value to be either true or false",
            )),
        },
    }
}

impl SinkConnectorConfig {
    /// The configuration of these properties, validated as Kafka validates
    /// a sink connector's: types, `errors.tolerance` in `none, all`, a
    /// `topics` list, and a DLQ topic that is not one of the topics read.
    ///
    /// # Errors
    /// [`ConfigError`] with Kafka's message.
    pub fn from_props<K: Into<String>, V: Into<String>>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConfigError> {
        let props: BTreeMap<String, String> = props
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let name = props
            .get("name")
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| ConfigError::Missing {
                name: "name".to_owned(),
            })?;
        let topics: Vec<String> = props
            .get("topics")
            .map(|t| {
                t.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if topics.is_empty() {
            return Err(invalid(
                "topics",
                props.get("topics").map_or("", String::as_str),
                "Must configure one of topics or topics.regex",
            ));
        }
        let tolerance = match props.get(ERRORS_TOLERANCE_CONFIG) {
            None => ToleranceType::None,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "none" => ToleranceType::None,
                "all" => ToleranceType::All,
                _ => {
                    return Err(invalid(
                        ERRORS_TOLERANCE_CONFIG,
                        v,
                        "String must be one of: none, all",
                    ));
                }
            },
        };
        let retry_timeout_ms = long(&props, ERRORS_RETRY_TIMEOUT_CONFIG, 0)?;
        let retry_delay_max_ms = long(&props, ERRORS_RETRY_MAX_DELAY_CONFIG, 60_000)?;
        let log_enable = boolean(&props, ERRORS_LOG_ENABLE_CONFIG, false)?;
        let log_include_messages = boolean(&props, ERRORS_LOG_INCLUDE_MESSAGES_CONFIG, false)?;
        let dlq_topic_name = props
            .get(DLQ_TOPIC_NAME_CONFIG)
            .map(|t| t.trim().to_owned())
            .unwrap_or_default();
        let dlq_topic_replication_factor = match props.get(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG) {
            None => 3,
            Some(v) => v.trim().parse::<i16>().map_err(|_| {
                invalid(
                    DLQ_TOPIC_REPLICATION_FACTOR_CONFIG,
                    v,
                    "Not a number of type SHORT",
                )
            })?,
        };
        let dlq_context_headers_enable = boolean(&props, DLQ_CONTEXT_HEADERS_ENABLE_CONFIG, false)?;
        let offset_flush_interval_ms = long(&props, OFFSET_FLUSH_INTERVAL_MS_CONFIG, 60_000)?;
        if !dlq_topic_name.is_empty() && topics.contains(&dlq_topic_name) {
            return Err(invalid(
                "topics",
                props.get("topics").map_or("", String::as_str),
                format!(
                    "The DLQ topic '{dlq_topic_name}' may not be included in the list of topics ('topics=[{}]') consumed by the connector",
                    topics.join(", ")
                ),
            ));
        }
        Ok(Self {
            name,
            topics,
            tolerance,
            retry_timeout_ms,
            retry_delay_max_ms,
            log_enable,
            log_include_messages,
            dlq_topic_name,
            dlq_topic_replication_factor,
            dlq_context_headers_enable,
            offset_flush_interval_ms,
            props,
        })
    }
}
