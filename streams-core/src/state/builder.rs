//! The one builder of every built-in store kind, Kafka's
//! `AbstractStoreBuilder`: a name, the key and value serdes, whether the
//! stores write a changelog, and whether a DSL operator keeps its record
//! cache in front of them. What only one kind has (a window store's
//! retention and window size) is its [`MakeStore::Params`]; how a store
//! is made from all that is its `MakeStore` impl, next to the store.
//!
//! [`Stores`](super::Stores) hands these builders out for the Processor
//! API; the DSL builds its stores with the same type, from the operator's
//! `Materialized`, with serdes left to the config's defaults when none
//! are given.
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::state::{KeyValueStore, StoreBuilder, Stores};
//! use streams_core::StreamsConfig;
//!
//! let builder = Stores::key_value_store_builder("counts", StringSerde, I64Serde).with_logging_disabled();
//! assert_eq!((builder.name(), builder.logging_enabled()), ("counts", false));
//! let mut boxed = builder.build(&StreamsConfig::default())?;
//! let store = boxed.as_any_mut().downcast_mut::<KeyValueStore<String, i64>>().ok_or("type")?;
//! store.put("a".into(), 1)?;
//! assert_eq!(store.get("a")?, Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use super::{Changelog, StateStore, StoreBuilder};
use crate::config::{StreamsConfig, resolve_serde};
use crate::error::{RecordPart, Result};
use crate::serde::SerdeRef;

/// What a store is made from besides its name and the settings of its
/// kind: its changelog (serdes, and whether it is written) and whether a
/// DSL operator keeps its record cache in front of it.
pub struct StoreParts<K, V> {
    pub(crate) changelog: Changelog<K, V>,
    /// Whether a DSL operator keeps its record cache in front of the
    /// store (`crate::dsl::cache`); kinds without one ignore it.
    pub(crate) caching: bool,
    /// Whether the store keeps Kafka's record cache itself, for the
    /// Processor API ([`BuiltInStoreBuilder::with_caching_enabled`], and
    /// the config's cache size not 0; see `super::store_cache`).
    pub(crate) cache: bool,
    /// Whether the store keeps its entries in RocksDB: as its supplier
    /// says, else as the config's DSL store suppliers say. Kinds that live
    /// in memory only (versioned stores, buffers) ignore it.
    pub(crate) persistent: bool,
}

impl<K, V> fmt::Debug for StoreParts<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreParts")
            .field("logging", &self.changelog.enabled)
            .field("caching", &self.caching)
            .field("cache", &self.cache)
            .field("persistent", &self.persistent)
            .finish_non_exhaustive()
    }
}

/// How a built-in store kind is made: implemented next to each store,
/// it is what a new kind adds to get [`BuiltInStoreBuilder`]. Not
/// reachable outside the crate, so [`BuiltInStore`] stays sealed.
pub trait MakeStore: StateStore + Sized {
    /// The type of the store's keys.
    type Key: 'static;
    /// The type of the store's values.
    type Value: 'static;
    /// What only this kind is built from (`()` when nothing).
    type Params: Clone + fmt::Debug;

    /// Makes a store named `name`.
    ///
    /// # Errors
    /// `params` are invalid (a window store keeping windows for less than
    /// their size, a duration out of range).
    fn make(
        name: &str,
        params: &Self::Params,
        parts: StoreParts<Self::Key, Self::Value>,
    ) -> Result<Self>;

    /// How long the store keeps what it holds, for a windowed kind (window
    /// and session stores): its changelog is then `compact,delete` with
    /// that retention plus a day, as Kafka Streams'
    /// `WindowedChangelogTopicConfig` makes it. `None` for other kinds.
    fn retention_ms(_params: &Self::Params) -> Option<i64> {
        None
    }

    /// How long a versioned kind keeps its history: its changelog then
    /// keeps records at least that plus a day before compacting them
    /// (`min.compaction.lag.ms`), as Kafka Streams'
    /// `VersionedChangelogTopicConfig` sets it. `None` for other kinds.
    fn min_compaction_lag_ms(_params: &Self::Params) -> Option<i64> {
        None
    }
}

/// Kafka Streams' default `windowstore.changelog.additional.retention.ms`:
/// a windowed store's changelog keeps a day more than the store.
pub(crate) const WINDOWSTORE_CHANGELOG_ADDITIONAL_RETENTION_MS: i64 = 24 * 60 * 60 * 1000;

/// Kafka Streams' `VERSIONED_STORE_CHANGE_LOG_ADDITIONAL_COMPACTION_LAG_MS`:
/// a versioned store's changelog compacts nothing younger than its
/// history retention plus a day.
pub(crate) const VERSIONED_STORE_CHANGELOG_ADDITIONAL_COMPACTION_LAG_MS: i64 = 24 * 60 * 60 * 1000;

/// A built-in store, which [`BuiltInStoreBuilder`] builds: the key-value,
/// window and session stores, plain and timestamped, the versioned
/// key-value store, and the buffers of `suppress` and of a stream-table
/// join with a grace period. Sealed.
pub trait BuiltInStore: MakeStore {}

impl<S: MakeStore> BuiltInStore for S {}

/// Builds a fresh store of type `S` for each task: the builder of every
/// built-in store, whatever its kind, Kafka's `AbstractStoreBuilder`.
/// [`Stores`](super::Stores) makes one; stores write a changelog unless
/// [`with_logging_disabled`](BuiltInStoreBuilder::with_logging_disabled)
/// says otherwise.
pub struct BuiltInStoreBuilder<S: BuiltInStore> {
    name: String,
    params: S::Params,
    key_serde: Option<SerdeRef<S::Key>>,
    value_serde: Option<SerdeRef<S::Value>>,
    logging: bool,
    changelog_config: std::collections::BTreeMap<String, String>,
    caching: bool,
    store_cache: bool,
    /// `Some` when a supplier said where the stores live; `None` (the
    /// DSL's stores) leaves it to the config.
    persistent: Option<bool>,
}

impl<S: BuiltInStore> BuiltInStoreBuilder<S> {
    /// A builder of stores named `name`, with the settings of their kind;
    /// a serde not given is resolved against the config's defaults when
    /// the store is built. Logging on, no record cache.
    pub(crate) fn new(
        name: impl Into<String>,
        params: S::Params,
        key_serde: Option<SerdeRef<S::Key>>,
        value_serde: Option<SerdeRef<S::Value>>,
    ) -> Self {
        BuiltInStoreBuilder {
            name: name.into(),
            params,
            key_serde,
            value_serde,
            logging: true,
            changelog_config: std::collections::BTreeMap::new(),
            caching: false,
            store_cache: false,
            persistent: None,
        }
    }

    /// Stores built will not write a changelog.
    #[must_use]
    pub fn with_logging_disabled(self) -> Self {
        self.with_logging(false)
    }

    /// Stores built write a changelog (the default).
    #[must_use]
    pub fn with_logging_enabled(self) -> Self {
        self.with_logging(true)
    }

    /// Stores built write a changelog whose topic the runtime creates with
    /// these configs on top of Kafka Streams' (Kafka's
    /// `withLoggingEnabled(Map)`).
    #[must_use]
    pub fn with_logging_enabled_and_config<N: Into<String>, T: Into<String>>(
        self,
        configs: impl IntoIterator<Item = (N, T)>,
    ) -> Self {
        self.with_logging(true).with_changelog_config(
            configs
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }

    /// Stores built keep Kafka's record cache in front of them, Kafka's
    /// `StoreBuilder.withCachingEnabled()`: a processor's writes are read
    /// back at once, and reach the changelog when the task commits (Kafka's
    /// driver commits after each record), one record per key changed since
    /// the last commit, its latest value, at the timestamp of the record
    /// that wrote it; nothing is forwarded (only the DSL's caches forward).
    /// A store without a changelog, a window store that keeps duplicates
    /// (Kafka disables its cache too) and a config whose cache size is 0
    /// (`statestore.cache.max.bytes`) keep no cache.
    ///
    /// ```
    /// use streams_core::processor::{Processor, ProcessorContext};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::Stores;
    /// use streams_core::{Record, Result, Topology};
    /// use streams_test::TopologyTestDriver;
    ///
    /// /// Counts each word of a line, one put per word.
    /// struct Count;
    /// impl Processor<String, String, String, i64> for Count {
    ///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, String>) -> Result<()> {
    ///         let mut store = ctx.key_value_store::<String, i64>("counts")?;
    ///         for word in r.value.unwrap_or_default().split(' ') {
    ///             let n = store.get(word)?.unwrap_or(0) + 1;
    ///             store.put(word.to_owned(), n)?;
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// let mut topology = Topology::new();
    /// topology
    ///     .add_source::<String, String>("in", "lines")?
    ///     .add_processor("count", || Count, &["in"])?
    ///     .add_state_store(
    ///         Stores::key_value_store_builder("counts", StringSerde, I64Serde).with_caching_enabled(),
    ///         &["count"],
    ///     )?;
    /// let driver = TopologyTestDriver::new(topology)?;
    /// driver.create_input_topic("lines", StringSerde, StringSerde).pipe_value("a b a");
    /// let changelog = driver.create_output_topic("test-app-counts-changelog", StringSerde, I64Serde);
    /// // Three puts, one changelog record per key, with its latest value.
    /// assert_eq!(changelog.read_key_values_to_list().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_caching_enabled(mut self) -> Self {
        self.store_cache = true;
        self
    }

    /// Stores built keep no record cache (the default for the Processor
    /// API, as in Kafka), Kafka's `withCachingDisabled()`.
    #[must_use]
    pub fn with_caching_disabled(mut self) -> Self {
        self.store_cache = false;
        self
    }

    /// Whether stores built keep Kafka's record cache (see
    /// [`with_caching_enabled`](Self::with_caching_enabled)).
    pub fn caching_enabled(&self) -> bool {
        self.store_cache
    }

    /// Where the stores live, when a supplier says (`None`: as the
    /// config's DSL store suppliers say).
    #[must_use]
    pub(crate) fn with_persistent(mut self, persistent: Option<bool>) -> Self {
        self.persistent = persistent;
        self
    }

    #[must_use]
    pub(crate) fn with_changelog_config(
        mut self,
        config: std::collections::BTreeMap<String, String>,
    ) -> Self {
        self.changelog_config = config;
        self
    }

    /// Whether stores built write a changelog.
    #[must_use]
    pub(crate) fn with_logging(mut self, logging: bool) -> Self {
        self.logging = logging;
        self
    }

    /// Whether the DSL operator that writes the stores keeps Kafka's
    /// record cache in front of them (see `crate::dsl::cache`); kinds
    /// without a cache ignore it.
    #[must_use]
    pub(crate) fn with_caching(mut self, caching: bool) -> Self {
        self.caching = caching;
        self
    }
}

impl<S: BuiltInStore> StoreBuilder for BuiltInStoreBuilder<S> {
    fn name(&self) -> &str {
        &self.name
    }

    fn logging_enabled(&self) -> bool {
        self.logging
    }

    fn changelog_config(&self) -> std::collections::BTreeMap<String, String> {
        let mut config = std::collections::BTreeMap::new();
        if let Some(retention) = S::retention_ms(&self.params) {
            config.insert("cleanup.policy".to_owned(), "compact,delete".to_owned());
            config.insert(
                "retention.ms".to_owned(),
                retention
                    .saturating_add(WINDOWSTORE_CHANGELOG_ADDITIONAL_RETENTION_MS)
                    .to_string(),
            );
        }
        if let Some(lag) = S::min_compaction_lag_ms(&self.params) {
            config.insert(
                "min.compaction.lag.ms".to_owned(),
                lag.saturating_add(VERSIONED_STORE_CHANGELOG_ADDITIONAL_COMPACTION_LAG_MS)
                    .to_string(),
            );
        }
        config.extend(self.changelog_config.clone());
        config
    }

    fn build(&self, config: &StreamsConfig) -> Result<Box<dyn StateStore>> {
        let node = ["store ", &self.name].concat();
        let mut changelog = Changelog::new(
            resolve_serde(&self.key_serde, config, &node, RecordPart::Key)?,
            resolve_serde(&self.value_serde, config, &node, RecordPart::Value)?,
        );
        changelog.enabled = self.logging;
        let parts = StoreParts {
            changelog,
            caching: self.caching,
            cache: self.store_cache && self.logging && config.record_cache_enabled(),
            persistent: match self.persistent {
                Some(persistent) => persistent,
                None => config.checked_dsl_stores_persistent()?,
            },
        };
        Ok(Box::new(S::make(&self.name, &self.params, parts)?))
    }
}

impl<S: BuiltInStore> fmt::Debug for BuiltInStoreBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltInStoreBuilder")
            .field("name", &self.name)
            .field("store", &std::any::type_name::<S>())
            .field("params", &self.params)
            .field("logging", &self.logging)
            .field("caching", &self.caching)
            .field("store_cache", &self.store_cache)
            .field("persistent", &self.persistent)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::serde::{I64Serde, StringSerde};
    use crate::state::{KeyValueStore, TimestampedKeyValueStore};

    #[test]
    fn a_serde_not_given_comes_from_the_config_else_the_build_fails_naming_the_store() {
        let builder = BuiltInStoreBuilder::<KeyValueStore<String, Vec<u8>>>::new(
            "s",
            (),
            Some(Arc::new(StringSerde)),
            None,
        );
        // Vec<u8> has a built-in serde.
        assert!(builder.build(&StreamsConfig::default()).is_ok());
        #[derive(Clone)]
        struct NoSerde;
        let builder =
            BuiltInStoreBuilder::<KeyValueStore<String, NoSerde>>::new("s", (), None, None);
        let err = builder.build(&StreamsConfig::default()).err();
        assert!(matches!(
            err,
            Some(crate::StreamsError::MissingSerde { ref node, part: RecordPart::Value, .. })
                if node == "store s"
        ));
    }

    #[test]
    fn logging_and_caching_reach_the_store() {
        let builder = BuiltInStoreBuilder::<TimestampedKeyValueStore<String, i64>>::new(
            "t",
            (),
            Some(Arc::new(StringSerde)),
            Some(Arc::new(I64Serde)),
        )
        .with_logging(false)
        .with_caching(true);
        assert!(!builder.logging_enabled());
        let mut boxed = builder.build(&StreamsConfig::default()).ok();
        let store = boxed.as_mut().and_then(|b| {
            b.as_any_mut()
                .downcast_mut::<TimestampedKeyValueStore<String, i64>>()
        });
        assert_eq!(
            store.map(|s| (s.caching, s.logging_enabled())),
            Some((true, false))
        );
    }
}
