//! Client configuration as Kafka passes it: string names and string
//! values (`bootstrap.servers`, `group.id`, `isolation.level`, ...), so
//! that any implementation (the simulated cluster, rdkafka) reads the same
//! map. Typed getters parse and say which entry is wrong.
//!
//! ```
//! use streams_clients::ClientConfig;
//!
//! let config = ClientConfig::new().set("group.id", "word-count").set("max.poll.records", "500");
//! assert_eq!(config.get("group.id"), Some("word-count"));
//! assert_eq!(config.get_i64("max.poll.records", 100)?, 500);
//! assert_eq!(config.get_i64("session.timeout.ms", 45_000)?, 45_000);
//! # Ok::<(), streams_clients::ClientError>(())
//! ```

use std::collections::BTreeMap;

use crate::error::{ClientError, Result};

/// A client's configuration: Kafka's names to values, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientConfig {
    entries: BTreeMap<String, String>,
}

impl ClientConfig {
    /// An empty configuration (every client default applies).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` to `value`.
    #[must_use]
    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.entries.insert(name.into(), value.into());
        self
    }

    /// Sets `name` to `value` in place.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.entries.insert(name.into(), value.into());
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }

    /// The value of `name` as a number, or `default` when unset.
    ///
    /// # Errors
    /// [`ClientError::InvalidConfig`] when the value is not a whole number.
    pub fn get_i64(&self, name: &str, default: i64) -> Result<i64> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.trim().parse().map_err(|_| ClientError::InvalidConfig {
                name: name.to_owned(),
                value: v.to_owned(),
                reason: "expected a whole number".to_owned(),
            }),
        }
    }

    /// The value of `name` as a boolean (`true`/`false`), or `default`.
    ///
    /// # Errors
    /// [`ClientError::InvalidConfig`] when the value is neither.
    pub fn get_bool(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => match v.trim() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(ClientError::InvalidConfig {
                    name: name.to_owned(),
                    value: v.to_owned(),
                    reason: "expected true or false".to_owned(),
                }),
            },
        }
    }

    /// Every entry, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}
