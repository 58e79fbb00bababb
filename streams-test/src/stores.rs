//! Reading and writing a running topology's state stores from a test.
//!
//! A view borrows the driver, so it cannot outlive it: `close` consumes the
//! driver, and a view still in use after it does not compile.
//!
//! ```compile_fail,E0505
//! use streams_core::serde::StringSerde;
//! use streams_core::{Consumed, Materialized, StreamsBuilder};
//! use streams_test::TopologyTestDriver;
//!
//! let builder = StreamsBuilder::new();
//! builder.table_consumed::<String, String>(
//!     "in",
//!     Consumed::with(StringSerde, StringSerde),
//!     Materialized::as_("names"),
//! );
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! let store = driver.timestamped_key_value_store::<String, String>("names")?;
//! driver.close()?;
//! store.all(); // error[E0505]: cannot move out of `driver` because it is borrowed
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::RangeBounds;

use streams_core::dsl::Windowed;
use streams_core::engine::StreamTask;
use streams_core::serde::Serde;
use streams_core::state::{
    KeyValueIterator, KeyValueStore, SessionStore, StateStore, StoreKind, TimestampedKeyValueStore,
    TimestampedWindowStore, ValueAndTimestamp, VersionedKeyValueStore, VersionedRecord,
    WindowStore,
};
use streams_core::{Result, StreamsError};

use crate::TopologyTestDriver;

/// A handle on a key-value store of a running driver: each call reads or
/// writes the live store, as Kafka's `getKeyValueStore`. Writes go to the
/// changelog too.
///
/// It reads a timestamped key-value store too (the store of a DSL table,
/// aggregation or global table), showing its values without their
/// timestamps, as Kafka's `getKeyValueStore` does (its
/// `KeyValueStoreFacade`); a value written through it gets the timestamp
/// `-1`, as Kafka's, so into a store with a changelog it fails (Kafka's
/// producer refuses a record at a negative timestamp): write with a
/// timestamp through
/// [`timestamped_key_value_store`](TopologyTestDriver::timestamped_key_value_store).
///
/// ```
/// use streams_core::processor::{Processor, ProcessorContext};
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::state::Stores;
/// use streams_core::{Record, Result, Topology};
/// use streams_test::TopologyTestDriver;
///
/// struct Remember;
/// impl Processor<String, i64, String, i64> for Remember {
///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, i64>) -> Result<()> {
///         if let (Some(k), Some(v)) = (r.key, r.value) {
///             ctx.key_value_store::<String, i64>("last")?.put(k, v)?;
///         }
///         Ok(())
///     }
/// }
/// let mut topology = Topology::new();
/// topology
///     .add_source::<String, i64>("in", "in")?
///     .add_processor("remember", || Remember, &["in"])?
///     .add_state_store(Stores::key_value_store_builder("last", StringSerde, I64Serde), &["remember"])?;
/// let driver = TopologyTestDriver::new(topology)?;
/// driver.create_input_topic("in", StringSerde, I64Serde).pipe_key_value("a", 7);
/// let store = driver.key_value_store::<String, i64>("last")?;
/// assert_eq!(store.get("a"), Some(7));
/// assert_eq!(store.approximate_num_entries(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A count's store, read as Kafka's `getKeyValueStore` reads it:
///
/// ```
/// use streams_core::Materialized;
/// use streams_test::example;
///
/// let driver = example(|builder| {
///     builder.stream::<String, String>("words").group_by_key().count_with(Materialized::as_("counts"));
/// });
/// driver.input::<String, String>("words").pipe_key_values([("a", "x"), ("a", "y")]);
/// assert_eq!(driver.key_value_store::<String, i64>("counts")?.get("a"), Some(2));
/// assert_eq!(driver.timestamped_key_value_store::<String, i64>("counts")?.get("a").map(|v| v.value), Some(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct KeyValueStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    timestamped: bool,
    _types: PhantomData<fn() -> (K, V)>,
}

/// The store a [`KeyValueStoreView`] reads.
enum Kv<'a, K, V> {
    Plain(&'a mut KeyValueStore<K, V>),
    /// Read for its values only.
    Timestamped(&'a mut TimestampedKeyValueStore<K, V>),
}

/// The entries without their timestamps.
fn values<K, V>(entries: KeyValueIterator<K, ValueAndTimestamp<V>>) -> Vec<(K, V)> {
    entries.map(|(k, v)| (k, v.value)).collect()
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KeyValueStoreView<'_, K, V> {
    fn with<R>(&self, f: impl FnOnce(Kv<'_, K, V>) -> Result<R>) -> Result<R> {
        self.driver.with_state(|s| {
            if self.timestamped {
                let mut store = s
                    .task()
                    .store::<TimestampedKeyValueStore<K, V>>(&self.name)?;
                f(Kv::Timestamped(&mut store))
            } else {
                f(Kv::Plain(
                    &mut *s.task().store::<KeyValueStore<K, V>>(&self.name)?,
                ))
            }
        })
    }

    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(Kv<'_, K, V>) -> Result<R>) -> R {
        match self.with(f) {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the store is a timestamped one, read for its values only.
    pub fn is_timestamped(&self) -> bool {
        self.timestamped
    }

    /// The value for `key`, given in any borrowed form of the key type
    /// (`get("a")` on `String` keys).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| match s {
            Kv::Plain(s) => s.get(key),
            Kv::Timestamped(s) => Ok(s.get(key)?.map(|v| v.value)),
        })
    }

    /// Every entry, in Kafka's key order (by the keys' serialized bytes).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn all(&self) -> Vec<(K, V)> {
        self.read(|s| match s {
            Kv::Plain(s) => s.all().map(Iterator::collect),
            Kv::Timestamped(s) => s.all().map(values),
        })
    }

    /// Every entry, last key first, Kafka's `reverseAll`.
    ///
    /// # Panics
    /// As [`KeyValueStoreView::all`].
    #[track_caller]
    pub fn reverse_all(&self) -> Vec<(K, V)> {
        self.read(|s| match s {
            Kv::Plain(s) => s.reverse_all().map(Iterator::collect),
            Kv::Timestamped(s) => s.reverse_all().map(values),
        })
    }

    /// The entries whose key is in `range`, in Kafka's key order (see
    /// [`KeyValueStore::range`]).
    ///
    /// # Panics
    /// As [`KeyValueStoreView::all`], or the key serde fails.
    #[track_caller]
    pub fn range<Q, R>(&self, range: R) -> Vec<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.read(|s| match s {
            Kv::Plain(s) => s.range(range).map(Iterator::collect),
            Kv::Timestamped(s) => s.range(range).map(values),
        })
    }

    /// As [`KeyValueStoreView::range`], last key first, Kafka's
    /// `reverseRange`.
    ///
    /// # Panics
    /// As [`KeyValueStoreView::range`].
    #[track_caller]
    pub fn reverse_range<Q, R>(&self, range: R) -> Vec<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.read(|s| match s {
            Kv::Plain(s) => s.reverse_range(range).map(Iterator::collect),
            Kv::Timestamped(s) => s.reverse_range(range).map(values),
        })
    }

    /// The entries whose key's bytes start with `prefix`'s, Kafka's
    /// `prefixScan` (see [`KeyValueStore::prefix_scan`]).
    ///
    /// # Panics
    /// As [`KeyValueStoreView::all`], or a serde fails.
    #[track_caller]
    pub fn prefix_scan<P>(&self, prefix: &P, prefix_serde: impl Serde<P>) -> Vec<(K, V)> {
        self.read(|s| match s {
            Kv::Plain(s) => s.prefix_scan(prefix, prefix_serde).map(Iterator::collect),
            Kv::Timestamped(s) => s.prefix_scan(prefix, prefix_serde).map(values),
        })
    }

    /// The entries as a map.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn to_map(&self) -> BTreeMap<K, V> {
        self.all().into_iter().collect()
    }

    /// How many entries there are.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(|s| match s {
            Kv::Plain(s) => Ok(s.approximate_num_entries()),
            Kv::Timestamped(s) => Ok(s.approximate_num_entries()),
        })
    }

    /// Puts a value, as a test setting up state would (the changelog gets
    /// it, at the timestamp of the last record the driver processed).
    /// Returns the old value. In a timestamped store the value's timestamp
    /// is `-1`, as Kafka's facade writes it.
    ///
    /// # Errors
    /// The changelog serde failed; the store is timestamped and writes a
    /// changelog ([`StreamsError::NegativeChangelogTimestamp`]: Kafka's
    /// producer refuses the record at -1); or the driver is in use.
    pub fn put(&self, key: K, value: V) -> Result<Option<V>> {
        self.with(|s| match s {
            Kv::Plain(s) => s.put(key, value),
            Kv::Timestamped(s) => Ok(s.put(key, value, -1)?.map(|v| v.value)),
        })
    }

    /// Deletes a key (the changelog gets a tombstone). Returns the old value.
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn delete<Q>(&self, key: &Q) -> Result<Option<V>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.with(|s| match s {
            Kv::Plain(s) => s.delete(key),
            Kv::Timestamped(s) => Ok(s.delete(key)?.map(|v| v.value)),
        })
    }
}

/// A handle on a timestamped key-value store of a running driver, Kafka's
/// `getTimestampedKeyValueStore`: values with the timestamp of the record
/// that wrote them. Writes go to the changelog too, at the value's
/// timestamp.
#[derive(Debug)]
pub struct TimestampedKeyValueStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedKeyValueStoreView<'_, K, V> {
    fn with<R>(
        &self,
        f: impl FnOnce(&mut TimestampedKeyValueStore<K, V>) -> Result<R>,
    ) -> Result<R> {
        self.driver.with_state(|s| {
            f(&mut *s
                .task()
                .store::<TimestampedKeyValueStore<K, V>>(&self.name)?)
        })
    }

    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&TimestampedKeyValueStore<K, V>) -> Result<R>) -> R {
        let result = self.with(|s| f(s));
        match result {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value and its timestamp for `key`, given in any borrowed form
    /// of the key type.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get<Q>(&self, key: &Q) -> Option<ValueAndTimestamp<V>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.get(key))
    }

    /// Every entry, in Kafka's key order (by the keys' serialized bytes).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn all(&self) -> Vec<(K, ValueAndTimestamp<V>)> {
        self.read(|s| s.all().map(Iterator::collect))
    }

    /// The entries whose key is in `range`, in Kafka's key order (see
    /// [`KeyValueStore::range`]).
    ///
    /// # Panics
    /// As [`TimestampedKeyValueStoreView::all`], or the key serde fails.
    #[track_caller]
    pub fn range<Q, R>(&self, range: R) -> Vec<(K, ValueAndTimestamp<V>)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.read(|s| s.range(range).map(Iterator::collect))
    }

    /// The values without timestamps, as a map.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn to_map(&self) -> BTreeMap<K, V> {
        self.all().into_iter().map(|(k, v)| (k, v.value)).collect()
    }

    /// How many entries there are.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(|s| Ok(s.approximate_num_entries()))
    }

    /// Puts a value at `timestamp`, as a test setting up state would (the
    /// changelog gets it at that timestamp). Returns the old value.
    ///
    /// # Errors
    /// The changelog serde failed, a negative timestamp in a store with a
    /// changelog, or the driver is in use.
    pub fn put(&self, key: K, value: V, timestamp: i64) -> Result<Option<ValueAndTimestamp<V>>> {
        self.with(|s| s.put(key, value, timestamp))
    }

    /// Deletes a key (the changelog gets a tombstone). Returns the old value.
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn delete<Q>(&self, key: &Q) -> Result<Option<ValueAndTimestamp<V>>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.with(|s| s.delete(key))
    }
}

/// A handle on a versioned key-value store of a running driver, Kafka's
/// `getVersionedKeyValueStore`: each call reads or writes the live store.
/// Writes go to the changelog too.
///
/// ```
/// use std::time::Duration;
/// use streams_core::state::{Stores, VersionedRecord};
/// use streams_core::Materialized;
/// use streams_test::example;
///
/// let driver = example(|builder| {
///     let prices = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
///     builder.table_with::<String, String>("prices", Materialized::as_(prices));
/// });
/// let prices = driver.input::<String, String>("prices");
/// prices.pipe_key_value_at("pen", "1.00", 10);
/// prices.pipe_key_value_at("pen", "1.20", 30);
/// prices.pipe_key_value_at("pen", "0.90", 20); // out of order: history only
/// let store = driver.versioned_key_value_store::<String, String>("prices")?;
/// assert_eq!(store.get("pen"), Some(VersionedRecord::new("1.20".to_string(), 30)));
/// assert_eq!(store.get_as_of("pen", 25), Some(VersionedRecord::with_valid_to("0.90".to_string(), 20, 30)));
/// assert_eq!(store.history_retention_ms(), 60_000);
/// // The wrong getter names the kind of the store.
/// let err = driver.timestamped_key_value_store::<String, String>("prices").unwrap_err();
/// assert!(err.to_string().contains("is a versioned key-value store"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct VersionedKeyValueStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> VersionedKeyValueStoreView<'_, K, V> {
    fn with<R>(&self, f: impl FnOnce(&mut VersionedKeyValueStore<K, V>) -> Result<R>) -> Result<R> {
        self.driver
            .with_state(|s| f(&mut *s.task().store::<VersionedKeyValueStore<K, V>>(&self.name)?))
    }

    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&VersionedKeyValueStore<K, V>) -> Result<R>) -> R {
        match self.with(|s| f(s)) {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The newest version of `key`, unless it is a tombstone.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get<Q>(&self, key: &Q) -> Option<VersionedRecord<V>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.get(key))
    }

    /// The version of `key` valid at `as_of` (see
    /// [`VersionedKeyValueStore::get_as_of`]).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get_as_of<Q>(&self, key: &Q, as_of: i64) -> Option<VersionedRecord<V>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.get_as_of(key, as_of))
    }

    /// Every version still reachable, per key oldest first (`None` for a
    /// tombstone).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn versions(&self) -> Vec<(K, i64, Option<V>)> {
        self.read(VersionedKeyValueStore::versions)
    }

    /// How long the store keeps history, in milliseconds.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn history_retention_ms(&self) -> i64 {
        self.read(|s| Ok(s.history_retention_ms()))
    }

    /// The largest timestamp put so far (-1 before the first).
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn observed_stream_time(&self) -> i64 {
        self.read(|s| Ok(s.observed_stream_time()))
    }

    /// Puts a version, as a test setting up state would (the changelog
    /// gets it); returns what [`VersionedKeyValueStore::put`] returns.
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn put(&self, key: K, value: Option<V>, timestamp: i64) -> Result<i64> {
        self.with(|s| s.put(key, value, timestamp))
    }

    /// Deletes a key from `timestamp` on (the changelog gets a tombstone).
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn delete<Q>(&self, key: &Q, timestamp: i64) -> Result<Option<VersionedRecord<V>>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.with(|s| s.delete(key, timestamp))
    }
}

/// Which window store type a [`WindowStoreView`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowFlavor {
    Plain,
    Timestamped,
}

/// A handle on a window store of a running driver, Kafka's
/// `getWindowStore`: each call reads or writes the live store. It reads
/// the stores of windowed aggregations too (which keep a timestamp with
/// each value) and shows their values only, as Kafka's facade does.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{TimeWindows, Window, Windowed};
/// use streams_core::serde::StringSerde;
/// use streams_core::{Materialized, StreamsBuilder};
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("clicks")
///     .group_by_key()
///     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?)
///     .with_retention(Duration::from_millis(100)) // the default (size + grace) keeps one window
///     .count_with(Materialized::as_("counts"));
/// let driver = TopologyTestDriver::new(builder.build()?)?;
/// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
/// clicks.pipe_key_value_at("alice", "home", 3);
/// clicks.pipe_key_value_at("alice", "cart", 12);
/// let store = driver.window_store::<String, i64>("counts")?;
/// assert_eq!(store.fetch(&"alice".to_string(), 0..=10), [(0, 1), (10, 1)]);
/// assert_eq!(store.all()[1], (Windowed::new("alice".to_string(), Window::new(10, 20)), 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WindowStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    flavor: WindowFlavor,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> WindowStoreView<'_, K, V> {
    fn with<R>(
        &self,
        plain: impl FnOnce(&mut WindowStore<K, V>) -> Result<R>,
        timestamped: impl FnOnce(&mut TimestampedWindowStore<K, V>) -> Result<R>,
    ) -> Result<R> {
        self.driver.with_state(|s| match self.flavor {
            WindowFlavor::Plain => plain(&mut *s.task().store::<WindowStore<K, V>>(&self.name)?),
            WindowFlavor::Timestamped => {
                timestamped(&mut *s.task().store::<TimestampedWindowStore<K, V>>(&self.name)?)
            }
        })
    }

    #[track_caller]
    fn read<R>(
        &self,
        plain: impl FnOnce(&WindowStore<K, V>) -> Result<R>,
        timestamped: impl FnOnce(&TimestampedWindowStore<K, V>) -> Result<R>,
    ) -> R {
        match self.with(|s| plain(s), |s| timestamped(s)) {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value of `key` (in any borrowed form of the key type) in the
    /// window starting at `window_start`.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get<Q>(&self, key: &Q, window_start: i64) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(
            |s| s.get(key, window_start),
            |s| Ok(s.get(key, window_start)?.map(|vt| vt.value)),
        )
    }

    /// The values of `key` in the windows starting in `range` (for example
    /// `from..=to`, as Kafka's `fetch(key, from, to)`), by window start.
    ///
    /// # Panics
    /// As [`WindowStoreView::get`].
    #[track_caller]
    pub fn fetch<Q, R>(&self, key: &Q, range: R) -> Vec<(i64, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<i64> + Clone,
    {
        let r = range.clone();
        self.read(
            |s| s.fetch(key, range).map(Iterator::collect),
            |s| Ok(s.fetch(key, r)?.map(|(t, v)| (t, v.value)).collect()),
        )
    }

    /// As [`WindowStoreView::fetch`], latest window first, Kafka's `backwardFetch`.
    ///
    /// # Panics
    /// As [`WindowStoreView::get`].
    #[track_caller]
    pub fn backward_fetch<Q, R>(&self, key: &Q, range: R) -> Vec<(i64, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<i64> + Clone,
    {
        let mut all = self.fetch(key, range);
        all.reverse();
        all
    }

    /// The entries of the keys in `keys` in the windows starting in
    /// `times`, by window start, then key in Kafka's order, Kafka's
    /// `fetch(keyFrom, keyTo, timeFrom, timeTo)`.
    ///
    /// # Panics
    /// As [`WindowStoreView::get`].
    #[track_caller]
    pub fn fetch_range<Q, R, T>(&self, keys: R, times: T) -> Vec<(Windowed<K>, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q> + Clone,
        T: RangeBounds<i64> + Clone,
    {
        let (k, t) = (keys.clone(), times.clone());
        self.read(
            |s| s.fetch_range(keys, times).map(Iterator::collect),
            |s| Ok(s.fetch_range(k, t)?.map(|(w, v)| (w, v.value)).collect()),
        )
    }

    /// Every key's values in the windows starting in `range`, by window
    /// start, then key in Kafka's order, Kafka's `fetchAll(from, to)`.
    ///
    /// # Panics
    /// As [`WindowStoreView::get`].
    #[track_caller]
    pub fn fetch_all<R: RangeBounds<i64> + Clone>(&self, range: R) -> Vec<(Windowed<K>, V)> {
        let r = range.clone();
        self.read(
            |s| s.fetch_all(range).map(Iterator::collect),
            |s| Ok(s.fetch_all(r)?.map(|(w, v)| (w, v.value)).collect()),
        )
    }

    /// Every live entry, by window start, then key in Kafka's order.
    ///
    /// # Panics
    /// As [`WindowStoreView::get`].
    #[track_caller]
    pub fn all(&self) -> Vec<(Windowed<K>, V)> {
        self.fetch_all(..)
    }

    /// How many live entries there are.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(
            |s| Ok(s.approximate_num_entries()),
            |s| Ok(s.approximate_num_entries()),
        )
    }

    /// Puts a value, as a test setting up state would (the changelog gets
    /// it). In the store of a windowed aggregation the value's timestamp is
    /// unknown (`-1`), as with Kafka's facade.
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn put(&self, key: K, value: V, window_start: i64) -> Result<()> {
        let (k, v) = (key.clone(), value.clone());
        self.with(
            |s| s.put(key, value, window_start),
            |s| s.put(k, v, -1, window_start),
        )
    }
}

/// A handle on the timestamped window store of a running driver (the
/// store of a windowed aggregation), Kafka's `getTimestampedWindowStore`:
/// values with the timestamp of the latest record in their window.
#[derive(Debug)]
pub struct TimestampedWindowStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedWindowStoreView<'_, K, V> {
    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&TimestampedWindowStore<K, V>) -> Result<R>) -> R {
        let result = self
            .driver
            .with_state(|s| f(&*s.task().store::<TimestampedWindowStore<K, V>>(&self.name)?));
        match result {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value and timestamp of `key` (in any borrowed form of the key
    /// type) in the window at `window_start`.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn get<Q>(&self, key: &Q, window_start: i64) -> Option<ValueAndTimestamp<V>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.get(key, window_start))
    }

    /// The values of `key` in the windows starting in `range`, by start.
    ///
    /// # Panics
    /// As [`TimestampedWindowStoreView::get`].
    #[track_caller]
    pub fn fetch<Q>(
        &self,
        key: &Q,
        range: impl RangeBounds<i64>,
    ) -> Vec<(i64, ValueAndTimestamp<V>)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.fetch(key, range).map(Iterator::collect))
    }

    /// Every live entry, by window start, then key in Kafka's order.
    ///
    /// # Panics
    /// As [`TimestampedWindowStoreView::get`].
    #[track_caller]
    pub fn all(&self) -> Vec<(Windowed<K>, ValueAndTimestamp<V>)> {
        self.read(|s| s.all().map(Iterator::collect))
    }
}

/// A handle on a session store of a running driver, Kafka's
/// `getSessionStore`.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{SessionWindows, Window};
/// use streams_core::serde::StringSerde;
/// use streams_core::{Materialized, StreamsBuilder};
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("clicks")
///     .group_by_key()
///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(5))?)
///     .count_with(Materialized::as_("sessions"));
/// let driver = TopologyTestDriver::new(builder.build()?)?;
/// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
/// clicks.pipe_key_value_at("alice", "home", 0);
/// clicks.pipe_key_value_at("alice", "cart", 4);
/// let store = driver.session_store::<String, i64>("sessions")?;
/// let sessions = store.fetch(&"alice".to_string());
/// assert_eq!(sessions.len(), 1);
/// assert_eq!((sessions[0].0.window, sessions[0].1), (Window::new(0, 4), 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SessionStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> SessionStoreView<'_, K, V> {
    fn with<R>(&self, f: impl FnOnce(&mut SessionStore<K, V>) -> Result<R>) -> Result<R> {
        self.driver
            .with_state(|s| f(&mut *s.task().store::<SessionStore<K, V>>(&self.name)?))
    }

    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&SessionStore<K, V>) -> Result<R>) -> R {
        match self.with(|s| f(s)) {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every live session of `key` (in any borrowed form of the key
    /// type), Kafka's `fetch(key)`.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own
    /// processors), or the store fails.
    #[track_caller]
    pub fn fetch<Q>(&self, key: &Q) -> Vec<(Windowed<K>, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.fetch(key).map(Iterator::collect))
    }

    /// Every live session of the keys in `keys`, by end, then key in
    /// Kafka's order, Kafka's `fetch(keyFrom, keyTo)`.
    ///
    /// # Panics
    /// As [`SessionStoreView::fetch`].
    #[track_caller]
    pub fn fetch_range<Q, R>(&self, keys: R) -> Vec<(Windowed<K>, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.read(|s| s.fetch_range(keys).map(Iterator::collect))
    }

    /// The sessions of `key` that end at or after `earliest_session_end`
    /// and start at or before `latest_session_start`, Kafka's `findSessions`.
    ///
    /// # Panics
    /// As [`SessionStoreView::fetch`].
    #[track_caller]
    pub fn find_sessions<Q>(
        &self,
        key: &Q,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> Vec<(Windowed<K>, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| {
            s.find_sessions(key, earliest_session_end, latest_session_start)
                .map(Iterator::collect)
        })
    }

    /// The value of exactly this session, Kafka's `fetchSession`.
    ///
    /// # Panics
    /// As [`SessionStoreView::fetch`].
    #[track_caller]
    pub fn fetch_session<Q>(&self, key: &Q, start: i64, end: i64) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.read(|s| s.fetch_session(key, start, end))
    }

    /// Every live session, by end, then key in Kafka's order.
    ///
    /// # Panics
    /// As [`SessionStoreView::fetch`].
    #[track_caller]
    pub fn all(&self) -> Vec<(Windowed<K>, V)> {
        self.read(|s| s.all().map(Iterator::collect))
    }

    /// How many live sessions there are.
    ///
    /// # Panics
    /// If the driver is in use (called from inside one of its own processors).
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(|s| Ok(s.approximate_num_entries()))
    }

    /// Puts a session's value (the changelog gets it).
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn put(&self, session: Windowed<K>, value: V) -> Result<()> {
        self.with(|s| s.put(session, value))
    }

    /// Removes a session (the changelog gets a tombstone).
    ///
    /// # Errors
    /// The changelog serde failed, or the driver is in use.
    pub fn remove(&self, session: &Windowed<K>) -> Result<()> {
        self.with(|s| s.remove(session))
    }
}

/// A handle on a store of your own type in a running driver, Kafka's
/// `getStateStore`: reach the store itself with
/// [`with`](StateStoreView::with), as the type you built it as.
///
/// ```
/// use std::any::Any;
/// use streams_core::processor::{Processor, ProcessorContext};
/// use streams_core::serde::StringSerde;
/// use streams_core::state::{StateStore, StoreBuilder};
/// use streams_core::{Record, Result, StreamsConfig, Topology};
/// use streams_test::TopologyTestDriver;
///
/// /// Counts the records it is told about.
/// #[derive(Default)]
/// struct Counter { name: String, count: u64 }
/// impl StateStore for Counter {
///     fn name(&self) -> &str { &self.name }
///     fn as_any(&self) -> &dyn Any { self }
///     fn as_any_mut(&mut self) -> &mut dyn Any { self }
/// }
/// struct CounterBuilder;
/// impl StoreBuilder for CounterBuilder {
///     fn name(&self) -> &str { "counter" }
///     fn logging_enabled(&self) -> bool { false }
///     fn build(&self, _: &StreamsConfig) -> Result<Box<dyn StateStore>> {
///         Ok(Box::new(Counter { name: "counter".into(), count: 0 }))
///     }
/// }
/// struct Count;
/// impl Processor<String, String, String, String> for Count {
///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, String>, _: Record<String, String>) -> Result<()> {
///         ctx.state_store::<Counter>("counter")?.count += 1;
///         Ok(())
///     }
/// }
/// let mut topology = Topology::new();
/// topology
///     .add_source::<String, String>("in", "in")?
///     .add_processor("count", || Count, &["in"])?
///     .add_state_store(CounterBuilder, &["count"])?;
/// let driver = TopologyTestDriver::new(topology)?;
/// driver.create_input_topic("in", StringSerde, StringSerde).pipe_values(["a", "b"]);
/// let counter = driver.state_store("counter")?;
/// assert_eq!(counter.with(|c: &mut Counter| c.count)?, 2);
/// assert_eq!(counter.with_dyn(|s| s.name().to_owned())?, "counter");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StateStoreView<'d> {
    driver: &'d TopologyTestDriver,
    name: String,
}

impl StateStoreView<'_> {
    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `f` on the store, as type `S` (the type its builder built).
    ///
    /// # Errors
    /// The store is not an `S` ([`StreamsError::WrongStoreType`], naming
    /// its type), or the driver is in use or closed.
    pub fn with<S: StateStore, R>(&self, f: impl FnOnce(&mut S) -> R) -> Result<R> {
        self.driver
            .with_state(|s| Ok(f(&mut *s.task().store::<S>(&self.name)?)))
    }

    /// Runs `f` on the store, whatever its type (to downcast it yourself
    /// with [`StateStore::as_any_mut`]).
    ///
    /// # Errors
    /// The driver is in use or closed.
    pub fn with_dyn<R>(&self, f: impl FnOnce(&mut dyn StateStore) -> R) -> Result<R> {
        self.driver
            .with_state(|s| Ok(f(&mut *s.task().store_dyn(&self.name)?)))
    }
}

impl TopologyTestDriver {
    /// Checks that store `name` is of one of `kinds` and, as its kind's
    /// type `S` of the kind found, of the types asked for; returns its kind.
    fn check_store(
        &self,
        name: &str,
        kinds: &[StoreKind],
        typed: impl FnOnce(&StreamTask, StoreKind) -> Result<()>,
    ) -> Result<StoreKind> {
        self.with_state(|s| {
            let actual = s.task().store_kind(name)?;
            if !kinds.contains(&actual) {
                // The type check fails, naming what was asked for, what
                // is there and the getter that reads it.
                typed(s.task(), kinds[0])?;
                return Err(StreamsError::WrongStoreType {
                    store: name.to_owned(),
                    expected: kinds[0].to_string(),
                    actual,
                    actual_types: s.task().store_dyn(name)?.store_types(),
                });
            }
            typed(s.task(), actual)?;
            Ok(actual)
        })
    }

    /// The key-value store `name`, typed, Kafka's `getKeyValueStore`: a
    /// [`KeyValueStore`], or a [`TimestampedKeyValueStore`] (a DSL table's,
    /// an aggregation's, a global table's) read for its values only, as
    /// Kafka's driver reads it (see [`KeyValueStoreView`]).
    ///
    /// # Errors
    /// No such store (the error lists the stores that exist), or the store
    /// is of another kind or other types (the error names its kind).
    #[doc(alias = "getKeyValueStore")]
    pub fn key_value_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<KeyValueStoreView<'_, K, V>> {
        let kind = self.check_store(
            name,
            &[StoreKind::KeyValue, StoreKind::TimestampedKeyValue],
            |task, kind| match kind {
                StoreKind::TimestampedKeyValue => {
                    task.store::<TimestampedKeyValueStore<K, V>>(name).map(drop)
                }
                _ => task.store::<KeyValueStore<K, V>>(name).map(drop),
            },
        )?;
        Ok(KeyValueStoreView {
            driver: self,
            name: name.to_owned(),
            timestamped: kind == StoreKind::TimestampedKeyValue,
            _types: PhantomData,
        })
    }

    /// The timestamped key-value store `name`, typed, Kafka's
    /// `getTimestampedKeyValueStore` (which a plain key-value store is
    /// not).
    ///
    /// # Errors
    /// As [`TopologyTestDriver::key_value_store`].
    #[doc(alias = "getTimestampedKeyValueStore")]
    pub fn timestamped_key_value_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<TimestampedKeyValueStoreView<'_, K, V>> {
        self.check_store(name, &[StoreKind::TimestampedKeyValue], |task, _| {
            task.store::<TimestampedKeyValueStore<K, V>>(name).map(drop)
        })?;
        Ok(TimestampedKeyValueStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
        })
    }

    /// The versioned key-value store `name`, typed, Kafka's
    /// `getVersionedKeyValueStore`.
    ///
    /// # Errors
    /// As [`TopologyTestDriver::key_value_store`].
    #[doc(alias = "getVersionedKeyValueStore")]
    pub fn versioned_key_value_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<VersionedKeyValueStoreView<'_, K, V>> {
        self.check_store(name, &[StoreKind::VersionedKeyValue], |task, _| {
            task.store::<VersionedKeyValueStore<K, V>>(name).map(drop)
        })?;
        Ok(VersionedKeyValueStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
        })
    }

    /// The window store `name`, typed, Kafka's `getWindowStore`: a store
    /// of [`Stores::window_store_builder`](streams_core::state::Stores::window_store_builder),
    /// or a [`TimestampedWindowStore`] (a windowed aggregation's) read for
    /// its values only, as Kafka's driver reads it.
    ///
    /// # Errors
    /// No such store (the error lists the stores that exist), or the store
    /// is of another kind or other types (the error names its kind).
    #[doc(alias = "getWindowStore")]
    pub fn window_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<WindowStoreView<'_, K, V>> {
        let kind = self.check_store(
            name,
            &[StoreKind::Window, StoreKind::TimestampedWindow],
            |task, kind| match kind {
                StoreKind::TimestampedWindow => {
                    task.store::<TimestampedWindowStore<K, V>>(name).map(drop)
                }
                _ => task.store::<WindowStore<K, V>>(name).map(drop),
            },
        )?;
        Ok(WindowStoreView {
            driver: self,
            name: name.to_owned(),
            flavor: match kind {
                StoreKind::TimestampedWindow => WindowFlavor::Timestamped,
                _ => WindowFlavor::Plain,
            },
            _types: PhantomData,
        })
    }

    /// The timestamped window store `name` (the store of a windowed
    /// aggregation), typed, Kafka's `getTimestampedWindowStore`.
    ///
    /// # Errors
    /// As [`TopologyTestDriver::window_store`].
    #[doc(alias = "getTimestampedWindowStore")]
    pub fn timestamped_window_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<TimestampedWindowStoreView<'_, K, V>> {
        self.check_store(name, &[StoreKind::TimestampedWindow], |task, _| {
            task.store::<TimestampedWindowStore<K, V>>(name).map(drop)
        })?;
        Ok(TimestampedWindowStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
        })
    }

    /// The session store `name`, typed, Kafka's `getSessionStore`.
    ///
    /// # Errors
    /// As [`TopologyTestDriver::window_store`].
    #[doc(alias = "getSessionStore")]
    pub fn session_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<SessionStoreView<'_, K, V>> {
        self.check_store(name, &[StoreKind::Session], |task, _| {
            task.store::<SessionStore<K, V>>(name).map(drop)
        })?;
        Ok(SessionStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
        })
    }

    /// The store `name` of your own type (any [`StateStore`] your
    /// topology built: `StoreKind::Custom`), a global store too, Kafka's
    /// `getStateStore`; see [`StateStoreView`]. Kafka's refuses the
    /// built-in stores, which have getters of their own, and so does this.
    ///
    /// # Errors
    /// No such store ([`StreamsError::UnknownStore`], listing the stores
    /// that exist), or a built-in store ([`StreamsError::BuiltInStore`],
    /// naming the getter to call; its
    /// [`kafka_message`](StreamsError::kafka_message) is Kafka's).
    pub fn state_store(&self, name: &str) -> Result<StateStoreView<'_>> {
        let kind = self.with_state(|s| s.task().store_kind(name))?;
        if kind != StoreKind::Custom {
            return Err(StreamsError::BuiltInStore {
                store: name.to_owned(),
                kind,
            });
        }
        Ok(StateStoreView {
            driver: self,
            name: name.to_owned(),
        })
    }

    /// Every store of the topology, by name, with its kind.
    pub fn state_stores(&self) -> BTreeMap<String, StoreKind> {
        self.with_state(|s| {
            let task = s.task();
            Ok(task
                .store_names()
                .into_iter()
                .filter_map(|n| task.store_kind(&n).ok().map(|k| (n, k)))
                .collect())
        })
        .unwrap_or_default()
    }
}
