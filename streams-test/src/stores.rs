//! Reading and writing a running topology's state stores from a test.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::RangeBounds;

use streams_core::state::{
    KeyValueStore, StateStore, StoreKind, TimestampedKeyValueStore, ValueAndTimestamp,
};
use streams_core::{Result, StreamsError};

use crate::TopologyTestDriver;

/// A handle on a key-value store of a running driver: each call reads or
/// writes the live store, as Kafka's `getKeyValueStore`. Writes go to the
/// changelog too.
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
/// assert_eq!(store.get(&"a".to_string()), Some(7));
/// assert_eq!(store.approximate_num_entries(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct KeyValueStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KeyValueStoreView<'_, K, V> {
    fn with<R>(&self, f: impl FnOnce(&mut KeyValueStore<K, V>) -> Result<R>) -> Result<R> {
        self.driver
            .with_state(|s| f(&mut *s.task().store::<KeyValueStore<K, V>>(&self.name)?))
    }

    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&KeyValueStore<K, V>) -> R) -> R {
        match self.with(|s| Ok(f(s))) {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value for `key`.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn get(&self, key: &K) -> Option<V> {
        self.read(|s| s.get(key).cloned())
    }

    /// Every entry, in key order.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn all(&self) -> Vec<(K, V)> {
        self.read(|s| s.all().map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    /// The entries whose key is in `range`, in key order.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn range<R: RangeBounds<K>>(&self, range: R) -> Vec<(K, V)> {
        self.read(|s| {
            s.range(range)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
    }

    /// The entries as a map.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn to_map(&self) -> BTreeMap<K, V> {
        self.all().into_iter().collect()
    }

    /// How many entries there are.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(|s| s.approximate_num_entries())
    }

    /// Puts a value, as a test setting up state would (the changelog gets it).
    ///
    /// # Errors
    /// The changelog serde failed, or the driver was closed.
    pub fn put(&self, key: K, value: V) -> Result<Option<V>> {
        self.with(|s| s.put(key, value))
    }

    /// Deletes a key (the changelog gets a tombstone).
    ///
    /// # Errors
    /// The changelog serde failed, or the driver was closed.
    pub fn delete(&self, key: &K) -> Result<Option<V>> {
        self.with(|s| s.delete(key))
    }
}

/// A handle on a timestamped key-value store of a running driver.
#[derive(Debug)]
pub struct TimestampedKeyValueStoreView<'d, K, V> {
    driver: &'d TopologyTestDriver,
    name: String,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedKeyValueStoreView<'_, K, V> {
    #[track_caller]
    fn read<R>(&self, f: impl FnOnce(&TimestampedKeyValueStore<K, V>) -> R) -> R {
        let result = self.driver.with_state(|s| {
            Ok(f(&*s
                .task()
                .store::<TimestampedKeyValueStore<K, V>>(&self.name)?))
        });
        match result {
            Ok(r) => r,
            Err(e) => panic!("reading store `{}` failed: {e}", self.name),
        }
    }

    /// The value and its timestamp for `key`.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn get(&self, key: &K) -> Option<ValueAndTimestamp<V>> {
        self.read(|s| s.get(key).cloned())
    }

    /// Every entry, in key order.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn all(&self) -> Vec<(K, ValueAndTimestamp<V>)> {
        self.read(|s| s.all().map(|(k, v)| (k.clone(), v.clone())).collect())
    }

    /// The values without timestamps, as a map.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn to_map(&self) -> BTreeMap<K, V> {
        self.all().into_iter().map(|(k, v)| (k, v.value)).collect()
    }

    /// How many entries there are.
    ///
    /// # Panics
    /// If the driver was closed.
    #[track_caller]
    pub fn approximate_num_entries(&self) -> u64 {
        self.read(|s| s.approximate_num_entries())
    }
}

impl TopologyTestDriver {
    fn check_store<S: StateStore>(&self, name: &str, kind: StoreKind, what: &str) -> Result<()> {
        self.with_state(|s| {
            let actual = s.task().store_kind(name)?;
            if actual != kind {
                return Err(StreamsError::WrongStoreType {
                    store: name.to_owned(),
                    expected: what.to_owned(),
                    actual,
                });
            }
            // The types: borrow once to check them.
            s.task().store::<S>(name).map(|_| ())
        })
    }

    /// The key-value store `name`, typed.
    ///
    /// # Errors
    /// No such store (the error lists the stores that exist), or the store
    /// is of another kind or other types (the error names its kind).
    pub fn key_value_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<KeyValueStoreView<'_, K, V>> {
        self.check_store::<KeyValueStore<K, V>>(name, StoreKind::KeyValue, "key-value store")?;
        Ok(KeyValueStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
        })
    }

    /// The timestamped key-value store `name`, typed.
    ///
    /// # Errors
    /// As [`TopologyTestDriver::key_value_store`].
    pub fn timestamped_key_value_store<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<TimestampedKeyValueStoreView<'_, K, V>> {
        self.check_store::<TimestampedKeyValueStore<K, V>>(
            name,
            StoreKind::TimestampedKeyValue,
            "timestamped key-value store",
        )?;
        Ok(TimestampedKeyValueStoreView {
            driver: self,
            name: name.to_owned(),
            _types: PhantomData,
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
