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
use std::sync::Arc;

use crate::error::{RecordPart, Result, StreamsError};
use crate::serde::{AnySerde, Serde, SerdeRef, builtin_serde};

mod handlers;
mod optimization;

pub use handlers::{
    DefaultProductionExceptionHandler, DeserializationExceptionHandler, ErrorHandlerContext,
    FixedProductionExceptionHandler, HEADER_ERRORS_EXCEPTION_MESSAGE_NAME,
    HEADER_ERRORS_EXCEPTION_NAME, HEADER_ERRORS_OFFSET_NAME, HEADER_ERRORS_PARTITION_NAME,
    HEADER_ERRORS_STACKTRACE_NAME, HEADER_ERRORS_TOPIC_NAME, HandlerResult,
    LogAndContinueExceptionHandler, LogAndContinueProcessingExceptionHandler,
    LogAndFailExceptionHandler, LogAndFailProcessingExceptionHandler, ProcessingExceptionHandler,
    ProductionExceptionHandler, Response, build_dead_letter_queue_record,
    maybe_build_dead_letter_queue_records,
};
pub(crate) use handlers::{
    SharedDeserializationHandler, SharedProcessingHandler, SharedProductionHandler,
};
pub use optimization::{
    MERGE_REPARTITION_TOPICS, NO_OPTIMIZATION, OPTIMIZE, REUSE_KTABLE_SOURCE_TOPICS,
    SINGLE_STORE_SELF_JOIN, TopologyOptimizations,
};

/// What to do with a record whose key or value cannot be deserialized:
/// the older, closed form of [`DeserializationExceptionHandler`].
#[deprecated(
    since = "0.1.0",
    note = "use StreamsConfig::with_deserialization_exception_handler(LogAndContinueExceptionHandler) \
            or the `deserialization.exception.handler` property"
)]
#[allow(deprecated)]
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
///
/// # Bad records
/// Three handlers decide what happens to a record that cannot be read,
/// processed or written; each is set by its Kafka property (a Kafka class
/// name, full or simple) or by a typed builder taking any implementation of
/// the handler's trait (which wins over the property). A dead letter queue
/// (`errors.dead.letter.queue.topic.name`, KIP-1034) receives the bad
/// record under every built-in handler, fail included.
///
/// | property | default | built-ins |
/// | --- | --- | --- |
/// | `deserialization.exception.handler` (formerly `default.deserialization.exception.handler`, still read) | `LogAndFailExceptionHandler` | [`LogAndFailExceptionHandler`], [`LogAndContinueExceptionHandler`] |
/// | `processing.exception.handler` | `LogAndFailProcessingExceptionHandler` | [`LogAndFailProcessingExceptionHandler`], [`LogAndContinueProcessingExceptionHandler`] |
/// | `production.exception.handler` | `DefaultProductionExceptionHandler` (fail) | [`DefaultProductionExceptionHandler`]; `CONTINUE`, `FAIL`, `RETRY` ([`FixedProductionExceptionHandler`]) |
///
/// ```
/// use streams_core::engine::StreamTask;
/// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, i64>("in").to("out");
/// let config = StreamsConfig::new("app")
///     .with_property("deserialization.exception.handler", "LogAndContinueExceptionHandler")
///     .with_dead_letter_queue_topic("dlq");
/// let mut task = StreamTask::new(&builder.build()?, &config, 0)?;
/// task.process("in", 3, RawRecord::new(None, Some(b"bad".to_vec()), 7))?;
/// let produced = task.take_produced();
/// assert_eq!(&*produced[0].topic, "dlq");
/// assert_eq!(produced[0].record.headers.last("__streams.errors.offset"), Some(&b"3"[..]));
/// assert_eq!(task.metrics().dropped_records, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct StreamsConfig {
    application_id: String,
    default_key_serde: Option<AnySerde>,
    default_value_serde: Option<AnySerde>,
    deserialization_handler: Option<SharedDeserializationHandler>,
    processing_handler: Option<SharedProcessingHandler>,
    production_handler: Option<SharedProductionHandler>,
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

    /// `state.dir`: where persistent (RocksDB) stores keep their files,
    /// `<state.dir>/<application.id>/<task>/rocksdb/<store>`, as Kafka
    /// lays them out.
    pub const STATE_DIR_CONFIG: &'static str = "state.dir";

    /// Kafka's default `state.dir`: `kafka-streams` in the system's
    /// temporary directory (`/tmp/kafka-streams` on Linux). Tests should
    /// give each driver a directory of its own.
    pub const DEFAULT_STATE_DIR: &'static str = "/tmp/kafka-streams";

    /// `dsl.store.suppliers.class` (KIP-954): which stores the DSL builds
    /// when an operator's `Materialized` names none; Kafka's
    /// `BuiltInDslStoreSuppliers$RocksDBDslStoreSuppliers` (its default) or
    /// `$InMemoryDslStoreSuppliers`. Here DSL stores stay in memory unless
    /// this (or the older `default.dsl.store = rocksDB`) asks for RocksDB:
    /// see [`StreamsConfig::dsl_stores_persistent`].
    pub const DSL_STORE_SUPPLIERS_CLASS_CONFIG: &'static str = "dsl.store.suppliers.class";

    /// `default.dsl.store` (Kafka 3.x, deprecated by
    /// `dsl.store.suppliers.class`): `rocksDB` or `in_memory`.
    pub const DEFAULT_DSL_STORE_CONFIG: &'static str = "default.dsl.store";

    /// `deserialization.exception.handler`: the handler of records that
    /// cannot be deserialized.
    pub const DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG: &'static str =
        "deserialization.exception.handler";
    /// `default.deserialization.exception.handler`: the deprecated name of
    /// [`Self::DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG`], read when
    /// the new name is not set.
    pub const DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG: &'static str =
        "default.deserialization.exception.handler";
    /// `processing.exception.handler` (KIP-1033): the handler of errors of
    /// user code in processors.
    pub const PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG: &'static str =
        "processing.exception.handler";
    /// `production.exception.handler` (KIP-1065): the handler of records
    /// sinks cannot produce.
    pub const PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG: &'static str =
        "production.exception.handler";
    /// `errors.dead.letter.queue.topic.name` (KIP-1034): the topic the
    /// built-in handlers send bad records to.
    pub const ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG: &'static str =
        "errors.dead.letter.queue.topic.name";

    /// `topology.optimization`: which topology optimizations
    /// [`StreamsBuilder::build_with`](crate::StreamsBuilder::build_with)
    /// applies (`none` by default; see [`TopologyOptimizations`]).
    pub const TOPOLOGY_OPTIMIZATION_CONFIG: &'static str = "topology.optimization";

    /// A config with this `application.id` and no default serdes.
    pub fn new(application_id: impl Into<String>) -> Self {
        StreamsConfig {
            application_id: application_id.into(),
            default_key_serde: None,
            default_value_serde: None,
            deserialization_handler: None,
            processing_handler: None,
            production_handler: None,
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
    #[deprecated(
        since = "0.1.0",
        note = "use with_deserialization_exception_handler(LogAndContinueExceptionHandler)"
    )]
    #[allow(deprecated)]
    #[must_use]
    pub fn with_deserialization_handling(self, handling: DeserializationHandling) -> Self {
        match handling {
            DeserializationHandling::Fail => {
                self.with_deserialization_exception_handler(LogAndFailExceptionHandler)
            }
            DeserializationHandling::Continue => {
                self.with_deserialization_exception_handler(LogAndContinueExceptionHandler)
            }
        }
    }

    /// Sets the handler of records that cannot be deserialized (over the
    /// `deserialization.exception.handler` property).
    ///
    /// ```
    /// use streams_core::config::LogAndContinueExceptionHandler;
    /// use streams_core::engine::StreamTask;
    /// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, i64>("in").to("out");
    /// let config = StreamsConfig::new("app").with_deserialization_exception_handler(LogAndContinueExceptionHandler);
    /// let mut task = StreamTask::new(&builder.build()?, &config, 0)?;
    /// task.process("in", 0, RawRecord::new(None, Some(b"bad".to_vec()), 7))?;
    /// assert!(task.take_produced().is_empty());
    /// assert_eq!(task.metrics().dropped_records, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_deserialization_exception_handler(
        mut self,
        handler: impl DeserializationExceptionHandler,
    ) -> Self {
        self.deserialization_handler = Some(Arc::new(handler));
        self
    }

    /// Sets the handler of errors of user code in processors (over the
    /// `processing.exception.handler` property).
    ///
    /// ```
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_core::engine::StreamTask;
    /// use streams_core::{RawRecord, StreamsBuilder, StreamsConfig};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .try_map_values(|v| if v == "boom" { Err("boom") } else { Ok(v.to_uppercase()) })
    ///     .to("out");
    /// let config = StreamsConfig::new("app")
    ///     .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
    /// let mut task = StreamTask::new(&builder.build()?, &config, 0)?;
    /// task.process("in", 0, RawRecord::new(None, Some(b"boom".to_vec()), 7))?;
    /// task.process("in", 1, RawRecord::new(None, Some(b"ok".to_vec()), 8))?;
    /// assert_eq!(task.take_produced().len(), 1);
    /// assert_eq!(task.metrics().dropped_records, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_processing_exception_handler(
        mut self,
        handler: impl ProcessingExceptionHandler,
    ) -> Self {
        self.processing_handler = Some(Arc::new(handler));
        self
    }

    /// Sets the handler of records sinks cannot produce (over the
    /// `production.exception.handler` property).
    ///
    /// ```
    /// use streams_core::config::{FixedProductionExceptionHandler, HandlerResult};
    /// use streams_core::StreamsConfig;
    ///
    /// let config = StreamsConfig::new("app")
    ///     .with_production_exception_handler(FixedProductionExceptionHandler(HandlerResult::Resume));
    /// assert_eq!(
    ///     format!("{:?}", config.production_exception_handler()?),
    ///     "FixedProductionExceptionHandler(Resume)"
    /// );
    /// let by_name = StreamsConfig::new("app").with_property("production.exception.handler", "CONTINUE");
    /// assert_eq!(format!("{:?}", by_name.production_exception_handler()?), "FixedProductionExceptionHandler(Resume)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_production_exception_handler(
        mut self,
        handler: impl ProductionExceptionHandler,
    ) -> Self {
        self.production_handler = Some(Arc::new(handler));
        self
    }

    /// Sets `errors.dead.letter.queue.topic.name` (KIP-1034): the built-in
    /// handlers send each bad record there, with the `__streams.errors.*`
    /// headers.
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// let config = StreamsConfig::new("app").with_dead_letter_queue_topic("dlq");
    /// assert_eq!(config.dead_letter_queue_topic(), Some("dlq"));
    /// assert_eq!(config.properties()["errors.dead.letter.queue.topic.name"], "dlq");
    /// ```
    #[must_use]
    pub fn with_dead_letter_queue_topic(self, topic: impl Into<String>) -> Self {
        self.with_property(Self::ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, topic)
    }

    /// Sets any other property, by its Kafka name.
    #[must_use]
    pub fn with_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Sets `topology.optimization` to `optimizations` (Kafka's
    /// `StreamsConfig.OPTIMIZE`, a list, or `none`). As in Kafka, the
    /// optimizations are applied when the topology is built with this
    /// config: [`StreamsBuilder::build_with`](crate::StreamsBuilder::build_with).
    ///
    /// ```
    /// use streams_core::config::TopologyOptimizations;
    /// use streams_core::StreamsConfig;
    ///
    /// let config = StreamsConfig::new("app").with_topology_optimization(TopologyOptimizations::ALL);
    /// assert_eq!(config.properties()["topology.optimization"], "all");
    /// assert_eq!(config.topology_optimizations()?, TopologyOptimizations::ALL);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_topology_optimization(self, optimizations: TopologyOptimizations) -> Self {
        self.with_property(
            Self::TOPOLOGY_OPTIMIZATION_CONFIG,
            optimizations.to_string(),
        )
    }

    /// The optimizations `topology.optimization` chooses (none when unset).
    ///
    /// # Errors
    /// [`StreamsError::InvalidTopologyOptimization`] when the value is not
    /// `none`, `all` or a comma-separated list of optimizations, with
    /// Kafka's message.
    pub fn topology_optimizations(&self) -> Result<TopologyOptimizations> {
        match self.properties.get(Self::TOPOLOGY_OPTIMIZATION_CONFIG) {
            None => Ok(TopologyOptimizations::NONE),
            Some(v) => TopologyOptimizations::parse(v),
        }
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

    /// What happens to records that cannot be deserialized, in the older
    /// closed form: `Continue` when the handler is
    /// [`LogAndContinueExceptionHandler`], else `Fail`.
    #[deprecated(since = "0.1.0", note = "use deserialization_exception_handler()")]
    #[allow(deprecated)]
    pub fn deserialization_handling(&self) -> DeserializationHandling {
        match self.deserialization_exception_handler() {
            Ok(h) if format!("{h:?}") == "LogAndContinueExceptionHandler" => {
                DeserializationHandling::Continue
            }
            _ => DeserializationHandling::Fail,
        }
    }

    /// `errors.dead.letter.queue.topic.name`, if set.
    pub fn dead_letter_queue_topic(&self) -> Option<&str> {
        self.properties
            .get(Self::ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG)
            .map(String::as_str)
    }

    /// The deserialization handler: the one set by
    /// [`with_deserialization_exception_handler`](Self::with_deserialization_exception_handler),
    /// else the one `deserialization.exception.handler` (or the deprecated
    /// `default.deserialization.exception.handler`) names, else
    /// [`LogAndFailExceptionHandler`].
    ///
    /// # Errors
    /// [`StreamsError::InvalidConfig`] when the property names no built-in
    /// handler.
    pub fn deserialization_exception_handler(
        &self,
    ) -> Result<Arc<dyn DeserializationExceptionHandler>> {
        if let Some(h) = &self.deserialization_handler {
            return Ok(h.clone());
        }
        let (key, value) = match (
            self.properties
                .get(Self::DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG),
            self.properties
                .get(Self::DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG),
        ) {
            (Some(v), _) => (Self::DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, v),
            (None, Some(v)) => (
                Self::DEFAULT_DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
                v,
            ),
            (None, None) => return Ok(Arc::new(LogAndFailExceptionHandler)),
        };
        let choices: [(&str, fn() -> SharedDeserializationHandler); 2] = [
            (LogAndFailExceptionHandler::JAVA_CLASS, || {
                Arc::new(LogAndFailExceptionHandler)
            }),
            (LogAndContinueExceptionHandler::JAVA_CLASS, || {
                Arc::new(LogAndContinueExceptionHandler)
            }),
        ];
        handlers::named(
            key,
            value,
            &choices,
            "LogAndFailExceptionHandler or LogAndContinueExceptionHandler",
        )
    }

    /// The processing handler: the one set by
    /// [`with_processing_exception_handler`](Self::with_processing_exception_handler),
    /// else the one `processing.exception.handler` names, else
    /// [`LogAndFailProcessingExceptionHandler`].
    ///
    /// # Errors
    /// [`StreamsError::InvalidConfig`] when the property names no built-in
    /// handler.
    pub fn processing_exception_handler(&self) -> Result<Arc<dyn ProcessingExceptionHandler>> {
        if let Some(h) = &self.processing_handler {
            return Ok(h.clone());
        }
        let Some(value) = self
            .properties
            .get(Self::PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG)
        else {
            return Ok(Arc::new(LogAndFailProcessingExceptionHandler));
        };
        let choices: [(&str, fn() -> SharedProcessingHandler); 2] = [
            (LogAndFailProcessingExceptionHandler::JAVA_CLASS, || {
                Arc::new(LogAndFailProcessingExceptionHandler)
            }),
            (LogAndContinueProcessingExceptionHandler::JAVA_CLASS, || {
                Arc::new(LogAndContinueProcessingExceptionHandler)
            }),
        ];
        handlers::named(
            Self::PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
            value,
            &choices,
            "LogAndFailProcessingExceptionHandler or LogAndContinueProcessingExceptionHandler",
        )
    }

    /// The production handler: the one set by
    /// [`with_production_exception_handler`](Self::with_production_exception_handler),
    /// else the one `production.exception.handler` names
    /// (`DefaultProductionExceptionHandler`, or one of KIP-1065's responses
    /// `CONTINUE`, `FAIL`, `RETRY` for a [`FixedProductionExceptionHandler`]),
    /// else [`DefaultProductionExceptionHandler`].
    ///
    /// # Errors
    /// [`StreamsError::InvalidConfig`] when the property names no built-in
    /// handler.
    pub fn production_exception_handler(&self) -> Result<Arc<dyn ProductionExceptionHandler>> {
        if let Some(h) = &self.production_handler {
            return Ok(h.clone());
        }
        let Some(value) = self
            .properties
            .get(Self::PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG)
        else {
            return Ok(Arc::new(DefaultProductionExceptionHandler));
        };
        let fixed = |r| -> SharedProductionHandler { Arc::new(FixedProductionExceptionHandler(r)) };
        match value.as_str() {
            "CONTINUE" | "RESUME" => return Ok(fixed(HandlerResult::Resume)),
            "FAIL" => return Ok(fixed(HandlerResult::Fail)),
            "RETRY" => return Ok(fixed(HandlerResult::Retry)),
            _ => {}
        }
        let choices: [(&str, fn() -> SharedProductionHandler); 1] =
            [(DefaultProductionExceptionHandler::JAVA_CLASS, || {
                Arc::new(DefaultProductionExceptionHandler)
            })];
        handlers::named(
            Self::PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG,
            value,
            &choices,
            "DefaultProductionExceptionHandler, CONTINUE, FAIL or RETRY",
        )
    }

    /// Whether a handler was set with a typed builder (it may read the
    /// source record's bytes, which sources then keep).
    pub(crate) fn has_typed_exception_handler(&self) -> bool {
        self.deserialization_handler.is_some()
            || self.processing_handler.is_some()
            || self.production_handler.is_some()
    }

    /// Every property set with [`StreamsConfig::with_property`].
    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    /// `state.dir`, or Kafka's default ([`StreamsConfig::DEFAULT_STATE_DIR`]).
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// let config = StreamsConfig::new("app").with_property("state.dir", "/var/lib/streams");
    /// assert_eq!(config.state_dir(), std::path::Path::new("/var/lib/streams"));
    /// assert_eq!(StreamsConfig::new("app").state_dir(), std::path::Path::new("/tmp/kafka-streams"));
    /// ```
    pub fn state_dir(&self) -> std::path::PathBuf {
        self.properties
            .get(Self::STATE_DIR_CONFIG)
            .map_or(Self::DEFAULT_STATE_DIR, String::as_str)
            .into()
    }

    /// Whether the DSL's key-value stores (tables, aggregations) live in
    /// RocksDB: only when `dsl.store.suppliers.class` names Kafka's
    /// `RocksDBDslStoreSuppliers` or `default.dsl.store` is `rocksDB`.
    /// Kafka's default is RocksDB; here it is memory, which keeps tests
    /// fast and needs no files (and no `rocksdb` feature), with the same
    /// key order and the same results.
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// assert!(!StreamsConfig::new("app").dsl_stores_persistent());
    /// let rocks = StreamsConfig::new("app").with_property("default.dsl.store", "rocksDB");
    /// assert!(rocks.dsl_stores_persistent());
    /// ```
    pub fn dsl_stores_persistent(&self) -> bool {
        self.checked_dsl_stores_persistent().unwrap_or(false)
    }

    /// As [`dsl_stores_persistent`](Self::dsl_stores_persistent), refusing
    /// what Kafka refuses: a `default.dsl.store` other than `rocksDB` or
    /// `in_memory`, a `dsl.store.suppliers.class` other than Kafka's two
    /// built-in suppliers (this crate has no others).
    pub(crate) fn checked_dsl_stores_persistent(&self) -> Result<bool> {
        if let Some(class) = self.properties.get(Self::DSL_STORE_SUPPLIERS_CLASS_CONFIG) {
            let class = class.trim();
            if class.ends_with("RocksDBDslStoreSuppliers") {
                return Ok(true);
            }
            if class.ends_with("InMemoryDslStoreSuppliers") {
                return Ok(false);
            }
            return Err(StreamsError::InvalidConfig {
                config: Self::DSL_STORE_SUPPLIERS_CLASS_CONFIG,
                value: class.to_owned(),
                expected: "one of Kafka's built-in DSL store suppliers, org.apache.kafka.streams.state.BuiltInDslStoreSuppliers$RocksDBDslStoreSuppliers or $InMemoryDslStoreSuppliers",
            });
        }
        match self
            .properties
            .get(Self::DEFAULT_DSL_STORE_CONFIG)
            .map(|v| v.trim())
        {
            None | Some("in_memory") => Ok(false),
            Some("rocksDB") => Ok(true),
            Some(other) => Err(StreamsError::InvalidConfig {
                config: Self::DEFAULT_DSL_STORE_CONFIG,
                value: other.to_owned(),
                expected: "one of rocksDB, in_memory (Kafka's \"String must be one of: rocksDB, in_memory\")",
            }),
        }
    }

    /// Whether the config leaves Kafka's record cache on: it is off when
    /// the cache size is 0 (`statestore.cache.max.bytes`, or else the
    /// older `cache.max.bytes.buffering`); Kafka's default is 10 MB.
    pub(crate) fn record_cache_enabled(&self) -> bool {
        let size = self
            .properties
            .get("statestore.cache.max.bytes")
            .or_else(|| self.properties.get("cache.max.bytes.buffering"));
        !matches!(size.map(|s| s.trim().parse::<i64>()), Some(Ok(0)))
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
