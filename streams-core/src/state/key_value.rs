//! In-memory key-value stores, plain and timestamped.

use std::any::Any;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::RangeBounds;

use super::{Changelog, MakeStore, StateStore, StoreContext, StoreKind, StoreParts};
use crate::error::{Result, StreamsError};
use crate::record::RawRecord;

/// A value with the timestamp of the record that wrote it, Kafka's
/// `ValueAndTimestamp`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueAndTimestamp<V> {
    /// The value.
    pub value: V,
    /// Epoch millis.
    pub timestamp: i64,
}

impl<V> ValueAndTimestamp<V> {
    /// A value at a timestamp.
    pub fn new(value: V, timestamp: i64) -> Self {
        ValueAndTimestamp { value, timestamp }
    }
}

/// The entries of a key-value store, in key order, found fast.
///
/// Entries live in `slots` (any order); `index` orders their keys and
/// says where each one is (a key is kept twice, cloned once when it is
/// first inserted). Two things spare most searches of the ordered index:
/// the slot of the last key found (processors read a key and then write
/// it, and the record cache logs it), and, for keys of the types tests use
/// most (strings, bytes, integers: see [`key_hash`]), a table from the
/// key's hash to its slot.
struct Entries<K, S> {
    index: BTreeMap<K, usize>,
    slots: Vec<(K, S)>,
    /// The slot of the last key found or inserted; `usize::MAX` for none.
    last: Cell<usize>,
    /// The hash of a key, for the types that have one here.
    hash: fn(&K) -> Option<u64>,
    /// Hash -> (the slot of a key with that hash, or `usize::MAX` if that
    /// key was removed; how many keys have that hash). Kept when `hash`
    /// hashes this store's keys.
    hashed: Option<HashMap<u64, (usize, usize), BuildHasherDefault<KeyHashHasher>>>,
}

impl<K: Ord + Clone + 'static, S> Entries<K, S> {
    fn new() -> Self {
        Self::with_hash(key_hash::<K>)
    }

    fn with_hash(hash: fn(&K) -> Option<u64>) -> Self {
        Entries {
            index: BTreeMap::new(),
            slots: Vec::new(),
            last: Cell::new(usize::MAX),
            hash,
            hashed: None,
        }
    }

    fn find(&self, key: &K) -> Option<usize> {
        let last = self.last.get();
        if let Some((k, _)) = self.slots.get(last)
            && k == key
        {
            return Some(last);
        }
        let found = match (&self.hashed, (self.hash)(key)) {
            (Some(table), Some(h)) => match table.get(&h) {
                // No key has this hash.
                None => return None,
                Some(&(i, keys)) if i != usize::MAX => {
                    if self.slots[i].0 == *key {
                        Some(i)
                    } else if keys == 1 {
                        // The only key with this hash is another one.
                        return None;
                    } else {
                        None
                    }
                }
                // Several keys share this hash and the one it points to
                // is gone: the ordered index decides.
                Some(_) => None,
            },
            _ => None,
        };
        let i = match found {
            Some(i) => i,
            None => *self.index.get(key)?,
        };
        self.last.set(i);
        Some(i)
    }

    fn get(&self, key: &K) -> Option<&S> {
        self.find(key).map(|i| &self.slots[i].1)
    }

    /// Sets `key` to `value`, returning the old value. As a `BTreeMap`, an
    /// existing entry keeps its key.
    fn insert(&mut self, key: K, value: S) -> Option<S> {
        if let Some(i) = self.find(&key) {
            return Some(std::mem::replace(&mut self.slots[i].1, value));
        }
        let i = self.slots.len();
        if let Some(h) = (self.hash)(&key) {
            let table = self.hashed.get_or_insert_with(HashMap::default);
            let entry = table.entry(h).or_insert((usize::MAX, 0));
            if entry.0 == usize::MAX {
                entry.0 = i;
            }
            entry.1 += 1;
        }
        self.index.insert(key.clone(), i);
        self.slots.push((key, value));
        self.last.set(i);
        None
    }

    fn remove(&mut self, key: &K) -> Option<S> {
        let i = self.index.remove(key)?;
        let (_, value) = self.slots.swap_remove(i);
        if let (Some(table), Some(h)) = (&mut self.hashed, (self.hash)(key))
            && let Some(entry) = table.get_mut(&h)
        {
            entry.1 -= 1;
            if entry.1 == 0 {
                table.remove(&h);
            } else if entry.0 == i {
                entry.0 = usize::MAX;
            }
        }
        // The last slot moved into the hole.
        let moved = self.slots.len();
        if i < moved {
            let moved_key = &self.slots[i].0;
            if let Some(slot) = self.index.get_mut(moved_key) {
                *slot = i;
            }
            if let (Some(table), Some(h)) = (&mut self.hashed, (self.hash)(moved_key))
                && let Some(entry) = table.get_mut(&h)
                && entry.0 == moved
            {
                entry.0 = i;
            }
        }
        let last = self.last.get();
        if last == i {
            self.last.set(usize::MAX);
        } else if last == moved {
            self.last.set(i);
        }
        Some(value)
    }

    fn range<R: RangeBounds<K>>(&self, range: R) -> impl DoubleEndedIterator<Item = (&K, &S)> {
        self.index.range(range).map(|(k, &i)| (k, &self.slots[i].1))
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// The hash of a key of a type whose value is easily hashed (`String`,
/// `Vec<u8>`, the integers), chosen by type at run time, as the stores'
/// keys need only `Ord`; `None` for other types, whose look-ups search
/// the ordered index.
fn key_hash<K: 'static>(key: &K) -> Option<u64> {
    use std::any::TypeId;
    let any: &dyn Any = key;
    let id = TypeId::of::<K>();
    let h = if id == TypeId::of::<String>() {
        hash_bytes(any.downcast_ref::<String>()?.as_bytes())
    } else if id == TypeId::of::<Vec<u8>>() {
        hash_bytes(any.downcast_ref::<Vec<u8>>()?)
    } else if id == TypeId::of::<i64>() {
        mix(*any.downcast_ref::<i64>()? as u64)
    } else if id == TypeId::of::<i32>() {
        mix(*any.downcast_ref::<i32>()? as u64)
    } else if id == TypeId::of::<u64>() {
        mix(*any.downcast_ref::<u64>()?)
    } else {
        return None;
    };
    Some(h)
}

/// A fast hash of bytes (no protection against chosen collisions, which
/// only make look-ups search the ordered index).
fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0_u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    let mut tail = [0_u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(tail)).wrapping_mul(0x517c_c1b7_2722_0a95);
    mix(h)
}

/// Spreads a value's bits over the whole word (the table uses its top bits).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x
}

/// The hasher of the hash table, whose keys are hashes already.
#[derive(Default)]
struct KeyHashHasher(u64);

impl Hasher for KeyHashHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<K, S> Entries<K, S> {
    fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &S)> {
        self.index.iter().map(|(k, &i)| (k, &self.slots[i].1))
    }
}

impl<K: fmt::Debug, S: fmt::Debug> fmt::Debug for Entries<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The shared body of both key-value stores: `S` is what the map holds,
/// `V` what the changelog carries.
struct KvCore<K, S, V> {
    name: String,
    map: Entries<K, S>,
    changelog: Changelog<K, V>,
    /// The changelog value and timestamp of a stored value.
    to_log: fn(&S) -> (&V, Option<i64>),
    /// A stored value from a changelog value and timestamp.
    from_log: fn(V, i64) -> S,
}

impl<K: Ord + Clone + 'static, S, V: 'static> KvCore<K, S, V> {
    fn put(&mut self, key: K, value: S) -> Result<Option<S>> {
        let (v, ts) = (self.to_log)(&value);
        self.changelog.log(&key, Some(v), ts)?;
        Ok(self.map.insert(key, value))
    }

    /// Kafka's record cache in front of the changelog: the map changes
    /// now, the changelog when the cache is flushed ([`KvCore::log_current`]).
    fn put_unlogged(&mut self, key: K, value: S) -> Option<S> {
        self.map.insert(key, value)
    }

    fn delete_unlogged(&mut self, key: &K) -> Option<S> {
        self.map.remove(key)
    }

    /// Writes `key`'s current value (a tombstone when it has none) to the
    /// changelog: what a flush of the record cache writes.
    fn log_current(&self, key: &K) -> Result<()> {
        match self.map.get(key) {
            Some(value) => {
                let (v, ts) = (self.to_log)(value);
                self.changelog.log(key, Some(v), ts)
            }
            None => self.changelog.log(key, None, None),
        }
    }

    fn delete(&mut self, key: &K) -> Result<Option<S>> {
        let old = self.map.remove(key);
        if old.is_some() || self.changelog.sink.is_some() {
            self.changelog.log(key, None, None)?;
        }
        Ok(old)
    }

    fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = match &self.changelog.sink {
            Some((t, _)) => t.to_string(),
            None => format!("{}-changelog", self.name),
        };
        for (offset, record) in records.into_iter().enumerate() {
            let offset = offset as i64;
            let Some(key) = &record.key else {
                return Err(StreamsError::InvalidChangelogRecord {
                    store: self.name.clone(),
                    topic,
                    offset,
                    reason: "has no key",
                });
            };
            let key = self.changelog.decode_key(&topic, offset, key)?;
            match &record.value {
                Some(bytes) => {
                    let value = self.changelog.decode_value(&topic, offset, bytes)?;
                    self.map
                        .insert(key, (self.from_log)(value, record.timestamp));
                }
                None => {
                    self.map.remove(&key);
                }
            }
        }
        Ok(())
    }
}

macro_rules! kv_store_common {
    ($store:ident, $stored:ty, $kind:expr) => {
        impl<K: Ord + Clone + 'static, V: Clone + 'static> $store<K, V> {
            /// The store's name.
            pub fn name(&self) -> &str {
                &self.core.name
            }

            /// The value for `key`.
            pub fn get(&self, key: &K) -> Option<&$stored> {
                self.core.map.get(key)
            }

            /// Removes `key` and writes a tombstone to the changelog.
            /// Returns the old value.
            ///
            /// # Errors
            /// The changelog serde failed.
            pub fn delete(&mut self, key: &K) -> Result<Option<$stored>> {
                self.core.delete(key)
            }

            /// Every entry, in key order.
            pub fn all(&self) -> impl DoubleEndedIterator<Item = (&K, &$stored)> {
                self.core.map.iter()
            }

            /// The entries whose key is in `range` (for example `a..=c`, as
            /// Kafka's inclusive `range(from, to)`), in key order; `.rev()`
            /// gives Kafka's `reverseRange`.
            pub fn range<R: RangeBounds<K>>(
                &self,
                range: R,
            ) -> impl DoubleEndedIterator<Item = (&K, &$stored)> {
                self.core.map.range(range)
            }

            /// How many entries there are (exact for in-memory stores).
            pub fn approximate_num_entries(&self) -> u64 {
                self.core.map.len() as u64
            }

            /// Whether the store is empty.
            pub fn is_empty(&self) -> bool {
                self.core.map.is_empty()
            }

            /// Replays changelog records (in offset order) into the store:
            /// the last value per key wins and a tombstone deletes. Nothing
            /// is written to the changelog.
            ///
            /// # Errors
            /// A record without a key, or one the serdes cannot decode
            /// (named by changelog topic and offset).
            pub fn restore<'a>(
                &mut self,
                records: impl IntoIterator<Item = &'a RawRecord>,
            ) -> Result<()> {
                self.core.restore(records)
            }

            /// Whether the store writes a changelog.
            pub fn logging_enabled(&self) -> bool {
                self.core.changelog.enabled
            }
        }

        impl<K: Ord + Clone + 'static, V: Clone + 'static> StateStore for $store<K, V> {
            fn name(&self) -> &str {
                &self.core.name
            }
            fn kind(&self) -> StoreKind {
                $kind
            }
            fn init(&mut self, context: &StoreContext) -> Result<()> {
                let name = self.core.name.clone();
                self.core.changelog.init(&name, context);
                Ok(())
            }
            fn as_any(&self) -> &dyn Any {
                self
            }
            fn as_any_mut(&mut self) -> &mut dyn Any {
                self
            }
            fn restore_changelog(&mut self, records: &[RawRecord]) -> Result<bool> {
                self.restore(records)?;
                Ok(true)
            }
        }

        impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for $store<K, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($store))
                    .field("name", &self.core.name)
                    .field("entries", &self.core.map)
                    .finish()
            }
        }
    };
}

/// An in-memory key-value store, Kafka's `KeyValueStore` with an
/// in-memory supplier. Entries are ordered by key.
pub struct KeyValueStore<K, V> {
    core: KvCore<K, V, V>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KeyValueStore<K, V> {
    pub(crate) fn new(name: &str, changelog: Changelog<K, V>) -> Self {
        KeyValueStore {
            core: KvCore {
                name: name.to_owned(),
                map: Entries::new(),
                changelog,
                to_log: |v| (v, None),
                from_log: |v, _| v,
            },
        }
    }

    /// Sets `key` to `value` and writes it to the changelog at the current
    /// record's timestamp. Returns the old value.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(&mut self, key: K, value: V) -> Result<Option<V>> {
        self.core.put(key, value)
    }

    /// Sets `key` to `value` only if it has no value; returns the value it
    /// already had, if any.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put_if_absent(&mut self, key: K, value: V) -> Result<Option<V>> {
        match self.core.map.get(&key) {
            Some(v) => Ok(Some(v.clone())),
            None => self.core.put(key, value).map(|_| None),
        }
    }

    /// Puts every pair, in order.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put_all(&mut self, entries: impl IntoIterator<Item = (K, V)>) -> Result<()> {
        for (k, v) in entries {
            self.core.put(k, v)?;
        }
        Ok(())
    }
}

kv_store_common!(KeyValueStore, V, StoreKind::KeyValue);

/// An in-memory key-value store whose values keep the timestamp of the
/// record that wrote them, Kafka's `TimestampedKeyValueStore`. Its
/// changelog records carry the value's own timestamp.
pub struct TimestampedKeyValueStore<K, V> {
    core: KvCore<K, ValueAndTimestamp<V>, V>,
    /// Whether the DSL operator writing it keeps Kafka's record cache in
    /// front of it (see `crate::dsl::cache`).
    pub(crate) caching: bool,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedKeyValueStore<K, V> {
    pub(crate) fn new(name: &str, changelog: Changelog<K, V>) -> Self {
        TimestampedKeyValueStore {
            core: KvCore {
                name: name.to_owned(),
                map: Entries::new(),
                changelog,
                to_log: |vt| (&vt.value, Some(vt.timestamp)),
                from_log: ValueAndTimestamp::new,
            },
            caching: false,
        }
    }

    /// Sets `key` without writing the changelog (the record cache writes
    /// it at its flush). Returns the old value.
    pub(crate) fn put_unlogged(
        &mut self,
        key: K,
        value: V,
        timestamp: i64,
    ) -> Option<ValueAndTimestamp<V>> {
        self.core
            .put_unlogged(key, ValueAndTimestamp::new(value, timestamp))
    }

    /// Removes `key` without writing the changelog. Returns the old value.
    pub(crate) fn delete_unlogged(&mut self, key: &K) -> Option<ValueAndTimestamp<V>> {
        self.core.delete_unlogged(key)
    }

    /// Writes `key`'s current value, or a tombstone, to the changelog.
    pub(crate) fn log_current(&self, key: &K) -> Result<()> {
        self.core.log_current(key)
    }

    /// Sets `key` to `value` at `timestamp`. Returns the old value.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(
        &mut self,
        key: K,
        value: V,
        timestamp: i64,
    ) -> Result<Option<ValueAndTimestamp<V>>> {
        self.core.put(key, ValueAndTimestamp::new(value, timestamp))
    }

    /// Sets `key` only if it has no value; returns the value it already had.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put_if_absent(
        &mut self,
        key: K,
        value: V,
        timestamp: i64,
    ) -> Result<Option<ValueAndTimestamp<V>>> {
        match self.core.map.get(&key) {
            Some(v) => Ok(Some(v.clone())),
            None => self
                .core
                .put(key, ValueAndTimestamp::new(value, timestamp))
                .map(|_| None),
        }
    }
}

kv_store_common!(
    TimestampedKeyValueStore,
    ValueAndTimestamp<V>,
    StoreKind::TimestampedKeyValue
);

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for KeyValueStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = ();

    fn make(name: &str, (): &(), parts: StoreParts<K, V>) -> Result<Self> {
        Ok(KeyValueStore::new(name, parts.changelog))
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for TimestampedKeyValueStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = ();

    fn make(name: &str, (): &(), parts: StoreParts<K, V>) -> Result<Self> {
        let mut store = TimestampedKeyValueStore::new(name, parts.changelog);
        store.caching = parts.caching;
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::{Entries, hash_bytes, key_hash};

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        Get(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..12_u8, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0..12_u8).prop_map(Op::Remove),
            (0..12_u8).prop_map(Op::Get),
        ]
    }

    /// Runs `ops` on `entries` (keys as `key` makes them) and on a
    /// `BTreeMap`, checking that they agree after each.
    fn check<K: Ord + Clone + std::fmt::Debug + 'static>(
        mut entries: Entries<K, u32>,
        key: impl Fn(u8) -> K,
        ops: Vec<Op>,
    ) -> Result<(), TestCaseError> {
        let mut model = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    prop_assert_eq!(entries.insert(key(k), v), model.insert(key(k), v))
                }
                Op::Remove(k) => prop_assert_eq!(entries.remove(&key(k)), model.remove(&key(k))),
                Op::Get(k) => prop_assert_eq!(entries.get(&key(k)), model.get(&key(k))),
            }
            prop_assert_eq!(entries.len(), model.len());
            prop_assert!(entries.iter().eq(model.iter()));
            prop_assert!(
                entries
                    .range(key(3)..=key(7))
                    .rev()
                    .eq(model.range(key(3)..=key(7)).rev())
            );
        }
        for k in 0..12 {
            prop_assert_eq!(entries.get(&key(k)), model.get(&key(k)));
        }
        prop_assert_eq!(format!("{entries:?}"), format!("{model:?}"));
        Ok(())
    }

    proptest! {
        /// The entries behave as a `BTreeMap` whatever the order of
        /// inserts, removes and reads (which move the remembered slot):
        /// keys without a hash here, hashed keys, and hashed keys whose
        /// hashes collide (three hashes for twelve keys).
        #[test]
        fn entries_behave_as_a_btree_map(ops in proptest::collection::vec(op(), 0..200)) {
            check(Entries::new(), |k| (k, ()), ops.clone())?;
            check(Entries::new(), |k| format!("k{k:02}"), ops.clone())?;
            check(Entries::new(), i64::from, ops.clone())?;
            check(Entries::with_hash(|k: &String| Some(k.len() as u64 % 3 + u64::from(k.as_bytes()[2] % 3))), |k| format!("k{k:02}"), ops)?;
        }
    }

    #[test]
    fn common_key_types_are_hashed() {
        assert!(key_hash(&"a".to_string()).is_some());
        assert!(key_hash(&vec![1_u8]).is_some());
        assert!(key_hash(&1_i64).is_some());
        assert!(key_hash(&1_i32).is_some());
        assert!(key_hash(&(1_u8, ())).is_none());
        assert_ne!(hash_bytes(b"word1"), hash_bytes(b"word2"));
        assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
    }
}
