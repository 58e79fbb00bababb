//! State stores: where stateful processors keep what they remember.
//!
//! A store is built per task by a [`StoreBuilder`] (see [`Stores`]), added
//! to a topology with [`Topology::add_state_store`](crate::Topology::add_state_store)
//! and reached from a connected processor through its context. Stores hold
//! typed keys and values in memory, or (feature `rocksdb`, with
//! `Stores::persistent_key_value_store`, `persistent_window_store_builder`,
//! `persistent_session_store_builder`, or the config's RocksDB DSL store
//! suppliers) their bytes in RocksDB under the config's `state.dir`, in
//! Kafka's key order either way (by the keys' serialized bytes; window and
//! session stores in RocksDB in segments of time first, as Kafka's); a
//! store built
//! [`with_caching_enabled`](BuiltInStoreBuilder::with_caching_enabled)
//! keeps Kafka's record cache. A store whose logging is enabled (the
//! default) also writes every change to its *changelog* topic,
//! `<application.id>-<store>-changelog`, serialized once: a put writes the
//! key and value, a delete writes a tombstone (the key with no value).
//! Changelog topics are compacted topics, so the latest record per key is
//! the store's content, and [`KeyValueStore::restore`] rebuilds a store
//! from them.
//!
//! The kinds: [`KeyValueStore`] and [`TimestampedKeyValueStore`],
//! [`WindowStore`] and [`TimestampedWindowStore`], [`SessionStore`],
//! [`VersionedKeyValueStore`] (every version of a key for a history
//! retention, KIP-889; see [`Stores::persistent_versioned_key_value_store`]),
//! and the buffers of `suppress` ([`TimeOrderedKeyValueBuffer`]) and of a
//! stream-table join with a grace period ([`TimeOrderedStreamBuffer`]).
//!
//! ```
//! use streams_core::processor::{Processor, ProcessorContext};
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::state::Stores;
//! use streams_core::{Record, Result, Topology};
//!
//! /// Counts records per key in the store `counts`.
//! struct Count;
//! impl Processor<String, String, String, i64> for Count {
//!     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, String>) -> Result<()> {
//!         let Some(key) = r.key.clone() else { return Ok(()) };
//!         let count = {
//!             let mut store = ctx.key_value_store::<String, i64>("counts")?;
//!             let count = store.get(&key)?.unwrap_or(0) + 1;
//!             store.put(key, count)?;
//!             count
//!         };
//!         ctx.forward(r.with_value(Some(count)))
//!     }
//! }
//!
//! let mut topology = Topology::new();
//! topology
//!     .add_source::<String, String>("source", "words")?
//!     .add_processor("count", || Count, &["source"])?
//!     .add_state_store(Stores::key_value_store_builder("counts", StringSerde, I64Serde), &["count"])?
//!     .add_sink::<String, i64>("sink", "counts-out", &["count"])?;
//! assert_eq!(topology.store_names(), ["counts"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builder;
mod key_order;
mod key_value;
#[cfg(feature = "rocksdb")]
mod rocksdb;
mod session;
mod store_cache;
mod time_ordered_buffer;
mod time_ordered_stream_buffer;
mod versioned;
mod window;

pub use builder::{BuiltInStore, BuiltInStoreBuilder};
pub(crate) use builder::{MakeStore, StoreParts};
pub use key_value::{KeyValueIterator, KeyValueStore, TimestampedKeyValueStore, ValueAndTimestamp};
pub use session::{SessionStore, SessionStoreBuilder};
pub(crate) use store_cache::PendingWrites;
pub use time_ordered_buffer::TimeOrderedKeyValueBuffer;
pub(crate) use time_ordered_buffer::{BufferedContext, buffer_full};
pub use time_ordered_stream_buffer::TimeOrderedStreamBuffer;
pub(crate) use versioned::VersionedParams;
pub use versioned::{VersionedBytesStoreSupplier, VersionedKeyValueStore, VersionedRecord};
pub use window::{TimestampedWindowStore, WindowStore, WindowStoreBuilder};
pub(crate) use window::{WindowParams, WindowSettings};

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

pub use crate::error::StoreKind;
use crate::error::{RecordPart, Result, StreamsError};
use crate::record::collector::RecordCollector;
use crate::record::{Headers, Record};
use crate::serde::{ReadAt, Serde, SerdeRef};

/// What a store is given when its task starts: where its changelog goes.
#[derive(Clone)]
pub struct StoreContext {
    pub(crate) collector: Rc<RefCell<RecordCollector>>,
    pub(crate) timestamp: Rc<Cell<i64>>,
    pub(crate) application_id: String,
    /// Records the stores dropped (a versioned store's expired puts), by
    /// store: the task adds them to its `dropped-records-total`.
    pub(crate) dropped: Rc<RefCell<std::collections::BTreeMap<String, u64>>>,
    /// The task's state directory, `<state.dir>/<application.id>/<task>`.
    pub(crate) state_dir: std::path::PathBuf,
}

impl fmt::Debug for StoreContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreContext")
            .field("application_id", &self.application_id)
            .finish_non_exhaustive()
    }
}

impl StoreContext {
    /// A context that logs to `collector`, stamping changelog records with
    /// `timestamp` unless told otherwise.
    pub(crate) fn new(
        collector: Rc<RefCell<RecordCollector>>,
        timestamp: Rc<Cell<i64>>,
        application_id: &str,
    ) -> Self {
        StoreContext {
            collector,
            timestamp,
            application_id: application_id.to_owned(),
            dropped: Rc::default(),
            state_dir: std::path::PathBuf::from(crate::StreamsConfig::DEFAULT_STATE_DIR)
                .join(application_id)
                .join("0_0"),
        }
    }

    /// The same context for the stores of the task whose state directory
    /// is `state_dir`.
    pub(crate) fn with_state_dir(&self, state_dir: std::path::PathBuf) -> Self {
        StoreContext {
            state_dir,
            ..self.clone()
        }
    }

    /// The task's state directory, Kafka's `stateDir()`:
    /// `<state.dir>/<application.id>/<task id>` (`global` for global
    /// stores), where a persistent store keeps its files.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// Counts a record that store `store` dropped in the task's
    /// `dropped-records-total` (Kafka's stores record it in the task's
    /// dropped-records sensor).
    pub fn count_dropped(&self, store: &str) {
        *self
            .dropped
            .borrow_mut()
            .entry(store.to_owned())
            .or_default() += 1;
    }

    /// The `application.id`.
    pub fn application_id(&self) -> &str {
        &self.application_id
    }

    /// The changelog topic of a store: `<application.id>-<store>-changelog`.
    pub fn changelog_topic(&self, store: &str) -> String {
        changelog_topic(&self.application_id, store)
    }

    /// The timestamp of the record being processed (or of the punctuation
    /// running), which changelog records carry.
    pub fn timestamp(&self) -> i64 {
        self.timestamp.get()
    }

    /// Writes a changelog record.
    pub fn log(&self, topic: &Arc<str>, record: Record<Vec<u8>, Vec<u8>>) {
        self.collector.borrow_mut().push(topic, record);
    }
}

/// A store's key and value types, as errors name them: `String, i64`.
pub(crate) fn key_value_types<K, V>() -> String {
    format!(
        "{}, {}",
        crate::error::short_type_name(std::any::type_name::<K>()),
        crate::error::short_type_name(std::any::type_name::<V>())
    )
}

/// Deletes the state directory of `config`'s application,
/// `<state.dir>/<application.id>`, and everything in it, as Kafka's
/// driver does at close (`StateDirectory.clean`); nothing happens when it
/// does not exist.
///
/// ```
/// use streams_core::StreamsConfig;
/// use streams_core::state::clean_state_dir;
///
/// let dir = std::env::temp_dir().join("streams-core-doc-clean");
/// let config = StreamsConfig::new("app").with_property("state.dir", dir.to_str().unwrap());
/// std::fs::create_dir_all(dir.join("app/0_0"))?;
/// clean_state_dir(&config)?;
/// assert!(!dir.join("app").exists());
/// clean_state_dir(&config)?; // already gone: fine
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The directory exists and cannot be removed.
pub fn clean_state_dir(config: &crate::StreamsConfig) -> std::io::Result<()> {
    let dir = config.state_dir().join(config.application_id());
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The changelog topic of `store` for `application_id`.
pub fn changelog_topic(application_id: &str, store: &str) -> String {
    // Without `format!`'s machinery: drivers are built per test.
    [application_id, "-", store, "-changelog"].concat()
}

/// A state store, as the engine sees it. The built-in stores implement it;
/// implement it for a store of your own and reach it with
/// [`ProcessorContext::state_store`](crate::processor::ProcessorContext::state_store).
pub trait StateStore: Any {
    /// The store's name.
    fn name(&self) -> &str;

    /// Which kind of store this is.
    fn kind(&self) -> StoreKind {
        StoreKind::Custom
    }

    /// Whether the store keeps its data in files (RocksDB), Kafka's
    /// `persistent()`: the test driver then cleans the state directory
    /// at close.
    fn persistent(&self) -> bool {
        false
    }

    /// Called once when the task starts, before any processor's `init`.
    ///
    /// # Errors
    /// An error fails the task's start.
    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let _ = context;
        Ok(())
    }

    /// Called at each commit of the task (Kafka's driver commits after
    /// each record and each wall-clock punctuation; the runtime every
    /// `commit.interval.ms`): a store built
    /// [`with_caching_enabled`](BuiltInStoreBuilder::with_caching_enabled)
    /// writes what its record cache held to its changelog, as Kafka's
    /// caching stores do at their flush.
    ///
    /// # Errors
    /// An error fails the commit.
    fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    /// Called when the task closes.
    ///
    /// # Errors
    /// An error is returned from the task's close, which closes the other
    /// stores all the same.
    fn close(&mut self) -> Result<()> {
        Ok(())
    }

    /// What errors call the store's types: a built-in store's key and
    /// value types (`String, i64`), another store's own type (`Counter`),
    /// without their paths.
    fn store_types(&self) -> String {
        crate::error::short_type_name(std::any::type_name::<Self>())
    }

    /// The store, to be downcast to its type.
    fn as_any(&self) -> &dyn Any;

    /// The store, to be downcast to its type.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// Replays changelog records (in offset order) into the store, as Kafka
    /// Streams restores a store before its task processes; nothing is
    /// written to the changelog. Returns whether the store restores: the
    /// built-in stores do, a custom store does not unless it says so.
    ///
    /// # Errors
    /// A record the store cannot decode, named by changelog topic and
    /// offset.
    fn restore_changelog(&mut self, records: &[crate::record::RawRecord]) -> Result<bool> {
        let _ = records;
        Ok(false)
    }
}

/// Builds a fresh store for each task, Kafka's `StoreBuilder`.
pub trait StoreBuilder {
    /// The name of the stores it builds.
    fn name(&self) -> &str;

    /// Whether the stores write a changelog.
    fn logging_enabled(&self) -> bool;

    /// The changelog topic's configs beyond Kafka Streams' own (none by
    /// default), which the runtime applies when it creates the topic.
    fn changelog_config(&self) -> std::collections::BTreeMap<String, String> {
        std::collections::BTreeMap::new()
    }

    /// Builds a store; serdes not given are resolved against `config`'s
    /// defaults.
    ///
    /// # Errors
    /// A serde is missing.
    fn build(&self, config: &crate::StreamsConfig) -> Result<Box<dyn StateStore>>;
}

/// The changelog side of a store: its topic and serdes.
pub(crate) struct Changelog<K, V> {
    pub(crate) key_serde: SerdeRef<K>,
    pub(crate) value_serde: SerdeRef<V>,
    pub(crate) enabled: bool,
    /// Set at `init`.
    pub(crate) sink: Option<(Arc<str>, StoreContext)>,
}

impl<K, V> Clone for Changelog<K, V> {
    fn clone(&self) -> Self {
        Changelog {
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            enabled: self.enabled,
            sink: None,
        }
    }
}

impl<K: 'static, V: 'static> Changelog<K, V> {
    pub(crate) fn new(key_serde: SerdeRef<K>, value_serde: SerdeRef<V>) -> Self {
        Changelog {
            key_serde,
            value_serde,
            enabled: true,
            sink: None,
        }
    }

    pub(crate) fn init(&mut self, store: &str, context: &StoreContext) {
        if self.enabled {
            self.sink = Some((Arc::from(context.changelog_topic(store)), context.clone()));
        }
    }

    /// Refuses a changelog record at a negative timestamp (`timestamp`, or
    /// the current record's), as Kafka's producer does, before the store
    /// changes.
    pub(crate) fn check_timestamp(&self, timestamp: Option<i64>) -> Result<()> {
        let Some((topic, ctx)) = &self.sink else {
            return Ok(());
        };
        let timestamp = timestamp.unwrap_or_else(|| ctx.timestamp());
        if timestamp < 0 {
            return Err(StreamsError::NegativeChangelogTimestamp {
                topic: topic.to_string(),
                timestamp,
            });
        }
        Ok(())
    }

    pub(crate) fn key_bytes(&self, topic: &str, key: &K) -> Result<Vec<u8>> {
        self.key_serde
            .serialize(topic, key)
            .map_err(|reason| StreamsError::Serialization {
                topic: topic.to_owned(),
                node: None,
                part: RecordPart::Key,
                reason,
            })
    }

    /// Writes `key -> value` (a tombstone for `None`) at `timestamp`, or at
    /// the current record's timestamp.
    pub(crate) fn log(&self, key: &K, value: Option<&V>, timestamp: Option<i64>) -> Result<()> {
        let Some((topic, ctx)) = &self.sink else {
            return Ok(());
        };
        let key = self.key_bytes(topic, key)?;
        let value = match value {
            Some(v) => Some(self.value_serde.serialize(topic, v).map_err(|reason| {
                StreamsError::Serialization {
                    topic: topic.to_string(),
                    node: None,
                    part: RecordPart::Value,
                    reason,
                }
            })?),
            None => None,
        };
        let ts = timestamp.unwrap_or_else(|| ctx.timestamp());
        ctx.log(topic, Record::new(Some(key), value, ts));
        Ok(())
    }

    /// Decodes a key read from the changelog `topic` (partition 0) at `offset`.
    pub(crate) fn decode_key(&self, topic: &str, offset: i64, bytes: &[u8]) -> Result<K> {
        let at = ReadAt {
            topic,
            partition: 0,
            offset,
        };
        at.decode(&*self.key_serde, bytes, RecordPart::Key, &Headers::new())
    }

    /// Decodes a value read from the changelog `topic` (partition 0) at `offset`.
    pub(crate) fn decode_value(&self, topic: &str, offset: i64, bytes: &[u8]) -> Result<V> {
        let at = ReadAt {
            topic,
            partition: 0,
            offset,
        };
        at.decode(
            &*self.value_serde,
            bytes,
            RecordPart::Value,
            &Headers::new(),
        )
    }
}

/// Where a key-value store keeps its entries, Kafka's
/// `KeyValueBytesStoreSupplier`: a name, in memory
/// ([`Stores::in_memory_key_value_store`], or just a name) or in RocksDB
/// (`Stores::persistent_key_value_store`, feature `rocksdb`). Give it
/// to [`Stores::key_value_store_builder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValueBytesStoreSupplier {
    name: String,
    persistent: bool,
}

impl KeyValueBytesStoreSupplier {
    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the store keeps its entries in RocksDB.
    pub fn persistent(&self) -> bool {
        self.persistent
    }
}

/// `persistent` for the store `store`, or the error that the crate was
/// built without RocksDB (its `rocksdb` feature).
pub(crate) fn rocksdb_available(store: &str, persistent: bool) -> Result<bool> {
    if persistent && !cfg!(feature = "rocksdb") {
        return Err(crate::StreamsError::PersistentStoresNotEnabled {
            store: store.to_owned(),
        });
    }
    Ok(persistent)
}

/// A name is an in-memory store of that name, as
/// [`Stores::in_memory_key_value_store`] gives.
impl From<&str> for KeyValueBytesStoreSupplier {
    fn from(name: &str) -> Self {
        Stores::in_memory_key_value_store(name)
    }
}

/// A name is an in-memory store of that name.
impl From<&String> for KeyValueBytesStoreSupplier {
    fn from(name: &String) -> Self {
        Stores::in_memory_key_value_store(name)
    }
}

/// A name is an in-memory store of that name.
impl From<String> for KeyValueBytesStoreSupplier {
    fn from(name: String) -> Self {
        Stores::in_memory_key_value_store(&name)
    }
}

/// Builders of the built-in stores, Kafka's `Stores`: each hands out a
/// [`BuiltInStoreBuilder`] of its store type.
#[derive(Debug, Clone, Copy)]
pub struct Stores;

impl Stores {
    /// An in-memory key-value store named `name`, Kafka's
    /// `inMemoryKeyValueStore(name)` (a name alone means the same).
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::{KeyValueBytesStoreSupplier, StoreBuilder, Stores};
    ///
    /// let supplier = Stores::in_memory_key_value_store("counts");
    /// assert_eq!((supplier.name(), supplier.persistent()), ("counts", false));
    /// assert_eq!(supplier, KeyValueBytesStoreSupplier::from("counts"));
    /// let builder = Stores::key_value_store_builder(supplier, StringSerde, I64Serde);
    /// assert_eq!(builder.name(), "counts");
    /// ```
    pub fn in_memory_key_value_store(name: &str) -> KeyValueBytesStoreSupplier {
        KeyValueBytesStoreSupplier {
            name: name.to_owned(),
            persistent: false,
        }
    }

    /// A key-value store named `name` kept in RocksDB, Kafka's
    /// `persistentKeyValueStore(name)` (feature `rocksdb`): its files are
    /// under `<state.dir>/<application.id>/<task>/rocksdb/<name>`, and the
    /// test driver deletes them at close. Its keys are in Kafka's order,
    /// as in memory.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::Stores;
    ///
    /// let supplier = Stores::persistent_key_value_store("counts");
    /// assert!(supplier.persistent());
    /// let builder = Stores::key_value_store_builder(supplier, StringSerde, I64Serde);
    /// # let _ = builder;
    /// ```
    #[cfg(feature = "rocksdb")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    pub fn persistent_key_value_store(name: &str) -> KeyValueBytesStoreSupplier {
        KeyValueBytesStoreSupplier {
            name: name.to_owned(),
            persistent: true,
        }
    }

    /// As [`Stores::persistent_key_value_store`], Kafka's
    /// `persistentTimestampedKeyValueStore(name)`: give it to
    /// [`Stores::timestamped_key_value_store_builder`].
    #[cfg(feature = "rocksdb")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    pub fn persistent_timestamped_key_value_store(name: &str) -> KeyValueBytesStoreSupplier {
        Self::persistent_key_value_store(name)
    }

    /// A builder of [`KeyValueStore`]s as `supplier` says (a name alone:
    /// in memory), whose changelog uses these serdes, Kafka's
    /// `keyValueStoreBuilder(supplier, keySerde, valueSerde)`.
    pub fn key_value_store_builder<K, V>(
        supplier: impl Into<KeyValueBytesStoreSupplier>,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        let supplier = supplier.into();
        BuiltInStoreBuilder::new(
            supplier.name,
            (),
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
        .with_persistent(Some(supplier.persistent))
    }

    /// A builder of [`TimestampedKeyValueStore`]s as `supplier` says (a
    /// name alone: in memory): each value is kept with the timestamp of
    /// the record that wrote it, Kafka's `timestampedKeyValueStoreBuilder`.
    pub fn timestamped_key_value_store_builder<K, V>(
        supplier: impl Into<KeyValueBytesStoreSupplier>,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> BuiltInStoreBuilder<TimestampedKeyValueStore<K, V>>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        let supplier = supplier.into();
        BuiltInStoreBuilder::new(
            supplier.name,
            (),
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
        .with_persistent(Some(supplier.persistent))
    }
}

impl Stores {
    /// A versioned key-value store named `name` keeping
    /// `history_retention` of history, Kafka's
    /// `persistentVersionedKeyValueStore(name, historyRetention)`, with
    /// Kafka's default segment interval for it. Kafka's store is RocksDB;
    /// this one keeps Kafka's name and rules but lives in memory (see
    /// [`VersionedKeyValueStore`]). Give it to
    /// [`Stores::versioned_key_value_store_builder`] for the Processor API,
    /// or to [`Materialized::as_`](crate::dsl::Materialized::as_) for a
    /// DSL table.
    ///
    /// A [`Duration`](std::time::Duration) cannot be negative; for a
    /// retention in signed milliseconds (and Kafka's refusal of a negative
    /// one) see [`VersionedBytesStoreSupplier::of_millis`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::state::Stores;
    ///
    /// let supplier = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(3600))?;
    /// assert_eq!((supplier.name(), supplier.history_retention_ms(), supplier.segment_interval_ms()), ("prices", 3_600_000, 300_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A retention of more milliseconds than an `i64` holds.
    pub fn persistent_versioned_key_value_store(
        name: &str,
        history_retention: std::time::Duration,
    ) -> Result<VersionedBytesStoreSupplier> {
        VersionedBytesStoreSupplier::of_durations(name, history_retention, None)
    }

    /// As [`Stores::persistent_versioned_key_value_store`], with a segment
    /// interval, Kafka's `persistentVersionedKeyValueStore(name,
    /// historyRetention, segmentInterval)`. The in-memory store does not
    /// use segments: the interval changes nothing you can see.
    ///
    /// # Errors
    /// A zero segment interval (Kafka's "segmentInterval cannot be zero or
    /// negative"), or a duration of more milliseconds than an `i64` holds.
    pub fn persistent_versioned_key_value_store_with_segment_interval(
        name: &str,
        history_retention: std::time::Duration,
        segment_interval: std::time::Duration,
    ) -> Result<VersionedBytesStoreSupplier> {
        VersionedBytesStoreSupplier::of_durations(name, history_retention, Some(segment_interval))
    }

    /// A builder of [`VersionedKeyValueStore`]s as `supplier` describes,
    /// whose changelog uses these serdes, Kafka's
    /// `versionedKeyValueStoreBuilder`. The changelog topic keeps records
    /// for the history retention plus a day before compacting them
    /// (`min.compaction.lag.ms`), as Kafka sets it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::{StoreBuilder, Stores};
    ///
    /// let supplier = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60))?;
    /// let builder = Stores::versioned_key_value_store_builder(supplier, StringSerde, I64Serde);
    /// assert_eq!(builder.changelog_config()["min.compaction.lag.ms"], "86460000");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn versioned_key_value_store_builder<K, V>(
        supplier: VersionedBytesStoreSupplier,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> BuiltInStoreBuilder<VersionedKeyValueStore<K, V>>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        BuiltInStoreBuilder::new(
            supplier.name(),
            supplier.params(),
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
    }
}

/// Builds key-value stores; see [`Stores::key_value_store_builder`].
pub type KeyValueStoreBuilder<K, V> = BuiltInStoreBuilder<KeyValueStore<K, V>>;
