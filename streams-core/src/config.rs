//! Configuration of a streams application, Kafka's `StreamsConfig`.
//!
//! ```
//! use streams_core::{StreamsConfig, serde::StringSerde};
//!
//! let config = StreamsConfig::new("word-count")
//!     .with_default_key_serde(StringSerde)
//!     .with_default_value_serde(StringSerde);
//! assert_eq!(config.application_id(), "word-count");
//! assert_eq!(config.default_key_serde().map(|s| s.type_name()), Some("alloc::string::String"));
//! ```

use std::collections::BTreeMap;

use crate::error::{RecordPart, Result, StreamsError};
use crate::serde::{AnySerde, Serde, SerdeRef, builtin_serde};

/// What to do with a record whose key or value cannot be deserialized,
/// Kafka's `default.deserialization.exception.handler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeserializationHandling {
    /// Stop with an error naming the topic, partition and offset
    /// (Kafka's `LogAndFailExceptionHandler`, the default).
    #[default]
    Fail,
    /// Skip the record and count it in the `dropped_records` metric
    /// (Kafka's `LogAndContinueExceptionHandler`).
    Continue,
}

/// The configuration of a streams application.
///
/// Only what the engine uses is typed; any other Kafka property can be kept
/// in [`StreamsConfig::properties`] for processors to read.
#[derive(Debug, Clone)]
pub struct StreamsConfig {
    application_id: String,
    default_key_serde: Option<AnySerde>,
    default_value_serde: Option<AnySerde>,
    deserialization_handling: DeserializationHandling,
    properties: BTreeMap<String, String>,
}

impl Default for StreamsConfig {
    fn default() -> Self {
        StreamsConfig::new(Self::DEFAULT_APPLICATION_ID)
    }
}

impl StreamsConfig {
    /// The application id used when none is given.
    pub const DEFAULT_APPLICATION_ID: &'static str = "test-app";

    /// A config with this `application.id` and no default serdes.
    pub fn new(application_id: impl Into<String>) -> Self {
        StreamsConfig {
            application_id: application_id.into(),
            default_key_serde: None,
            default_value_serde: None,
            deserialization_handling: DeserializationHandling::Fail,
            properties: BTreeMap::new(),
        }
    }

    /// Sets `default.key.serde`: used by sources and sinks of key type `T`
    /// that were given no serde.
    #[must_use]
    pub fn with_default_key_serde<T: 'static>(mut self, serde: impl Serde<T>) -> Self {
        self.default_key_serde = Some(AnySerde::new(serde));
        self
    }

    /// Sets `default.value.serde`: used by sources and sinks of value type
    /// `T` that were given no serde.
    #[must_use]
    pub fn with_default_value_serde<T: 'static>(mut self, serde: impl Serde<T>) -> Self {
        self.default_value_serde = Some(AnySerde::new(serde));
        self
    }

    /// Sets what happens to records that cannot be deserialized.
    #[must_use]
    pub fn with_deserialization_handling(mut self, handling: DeserializationHandling) -> Self {
        self.deserialization_handling = handling;
        self
    }

    /// Sets any other property, by its Kafka name.
    #[must_use]
    pub fn with_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// The `application.id`: the prefix of internal topic names.
    pub fn application_id(&self) -> &str {
        &self.application_id
    }

    /// The default key serde, if set.
    pub fn default_key_serde(&self) -> Option<&AnySerde> {
        self.default_key_serde.as_ref()
    }

    /// The default value serde, if set.
    pub fn default_value_serde(&self) -> Option<&AnySerde> {
        self.default_value_serde.as_ref()
    }

    /// What happens to records that cannot be deserialized.
    pub fn deserialization_handling(&self) -> DeserializationHandling {
        self.deserialization_handling
    }

    /// Every property set with [`StreamsConfig::with_property`].
    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }
}

/// Resolves the serde of a source or sink: the one given, else the
/// config's default for the type, else the built-in for the type.
pub(crate) fn resolve_serde<T: 'static>(
    given: &Option<SerdeRef<T>>,
    config: &StreamsConfig,
    node: &str,
    part: RecordPart,
) -> Result<SerdeRef<T>> {
    if let Some(s) = given {
        return Ok(s.clone());
    }
    let default = match part {
        RecordPart::Key => config.default_key_serde(),
        RecordPart::Value => config.default_value_serde(),
    };
    default
        .and_then(|d| d.typed::<T>())
        .or_else(builtin_serde::<T>)
        .ok_or_else(|| StreamsError::MissingSerde {
            node: node.to_owned(),
            part,
            type_name: std::any::type_name::<T>(),
        })
}
