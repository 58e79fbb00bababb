//! Key-value stores, plain and timestamped, Kafka's `KeyValueStore` and
//! `TimestampedKeyValueStore` (see [`KeyValueStore`] for their order and
//! an example).

use std::any::Any;
use std::borrow::Borrow;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::iter::FusedIterator;
use std::ops::{Bound, RangeBounds};
use std::rc::Rc;

use super::key_order::{KeyOrder, empty_range, owned_bound};
use super::{Changelog, MakeStore, PendingWrites, StateStore, StoreContext, StoreKind, StoreParts};
use crate::error::{Result, StreamsError};
use crate::record::RawRecord;
use crate::serde::Serde;

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

/// Entries a store read out, in the store's order, Kafka's
/// `KeyValueIterator`: what `all`, `range`, `prefix_scan` and the window
/// and session stores' fetches return. It owns its entries (taken when
/// the read was made), so the store may change while you walk them.
///
/// ```
/// use streams_core::state::KeyValueIterator;
///
/// let mut it = KeyValueIterator::from(vec![("a", 1), ("b", 2)]);
/// assert_eq!(it.peek_next_key(), Some(&"a"));
/// assert_eq!(it.next_back(), Some(("b", 2)));
/// assert_eq!(it.collect::<Vec<_>>(), [("a", 1)]);
/// ```
#[derive(Debug, Clone)]
pub struct KeyValueIterator<K, V> {
    entries: std::vec::IntoIter<(K, V)>,
}

impl<K, V> KeyValueIterator<K, V> {
    /// The key of the next entry, without taking it, Kafka's `peekNextKey`.
    pub fn peek_next_key(&self) -> Option<&K> {
        self.entries.as_slice().first().map(|(k, _)| k)
    }
}

impl<K, V> From<Vec<(K, V)>> for KeyValueIterator<K, V> {
    fn from(entries: Vec<(K, V)>) -> Self {
        KeyValueIterator {
            entries: entries.into_iter(),
        }
    }
}

impl<K, V> Default for KeyValueIterator<K, V> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<K, V> Iterator for KeyValueIterator<K, V> {
    type Item = (K, V);
    fn next(&mut self) -> Option<(K, V)> {
        self.entries.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for KeyValueIterator<K, V> {
    fn next_back(&mut self) -> Option<(K, V)> {
        self.entries.next_back()
    }
}

impl<K, V> ExactSizeIterator for KeyValueIterator<K, V> {}

impl<K, V> FusedIterator for KeyValueIterator<K, V> {}

/// What a store keeps to order its keys by their bytes: each slot's key
/// bytes, and the slots by them.
struct ByteIndex {
    of_slot: Vec<Rc<[u8]>>,
    order: BTreeMap<Rc<[u8]>, usize>,
}

/// The entries of an in-memory key-value store, found fast, in Kafka's
/// order.
///
/// Entries live in `slots` (any order); `index` orders their keys by `Ord`
/// and says where each one is (a key is kept twice, cloned once when it is
/// first inserted). When the key serde's bytes do not order keys as `Ord`
/// does, `bytes` keeps each key's bytes and orders the slots by them,
/// Kafka's order; else `index` is the order. Two things spare most
/// searches of the ordered index: the slot of the last key found
/// (processors read a key and then write it, and the record cache logs
/// it), and, for keys of the types tests use most (strings, bytes,
/// integers: see [`key_hash`]), a table from the key's hash to its slot.
struct Entries<K, S> {
    index: BTreeMap<K, usize>,
    slots: Vec<(K, S)>,
    bytes: Option<ByteIndex>,
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
    /// Entries ordered by their keys' bytes when `by_bytes`, else by `Ord`.
    fn new(by_bytes: bool) -> Self {
        Self::with_hash(by_bytes, key_hash::<K>)
    }

    fn with_hash(by_bytes: bool, hash: fn(&K) -> Option<u64>) -> Self {
        Entries {
            index: BTreeMap::new(),
            slots: Vec::new(),
            bytes: by_bytes.then(|| ByteIndex {
                of_slot: Vec::new(),
                order: BTreeMap::new(),
            }),
            last: Cell::new(usize::MAX),
            hash,
            hashed: None,
        }
    }

    fn by_bytes(&self) -> bool {
        self.bytes.is_some()
    }

    /// The slot of `key`, by hash when its type has one.
    fn find_key(&self, key: &K) -> Option<usize> {
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

    /// The slot of a key given in any borrowed form.
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
    {
        let last = self.last.get();
        if let Some((k, _)) = self.slots.get(last)
            && k.borrow() == key
        {
            return Some(last);
        }
        let i = *self.index.get(key)?;
        self.last.set(i);
        Some(i)
    }

    fn get_key(&self, key: &K) -> Option<&S> {
        self.find_key(key).map(|i| &self.slots[i].1)
    }

    fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&S>
    where
        K: Borrow<Q>,
    {
        self.find(key).map(|i| &self.slots[i].1)
    }

    /// Sets `key` to `value`, returning the old value. As a `BTreeMap`, an
    /// existing entry keeps its key. A new key's bytes come from `bytes`
    /// when the entries are ordered by them (nothing changes if it fails).
    fn insert(
        &mut self,
        key: K,
        value: S,
        bytes: impl FnOnce(&K) -> Result<Vec<u8>>,
    ) -> Result<Option<S>> {
        if let Some(i) = self.find_key(&key) {
            return Ok(Some(std::mem::replace(&mut self.slots[i].1, value)));
        }
        self.insert_new(key, value, bytes)
    }

    /// [`Entries::insert`] of a borrowed key: cloned only when the store
    /// does not have it yet (a processor writing a key it read keeps its
    /// own).
    fn insert_ref(
        &mut self,
        key: &K,
        value: S,
        bytes: impl FnOnce(&K) -> Result<Vec<u8>>,
    ) -> Result<Option<S>> {
        if let Some(i) = self.find_key(key) {
            return Ok(Some(std::mem::replace(&mut self.slots[i].1, value)));
        }
        self.insert_new(key.clone(), value, bytes)
    }

    /// Adds `key`, which the entries do not have.
    fn insert_new(
        &mut self,
        key: K,
        value: S,
        bytes: impl FnOnce(&K) -> Result<Vec<u8>>,
    ) -> Result<Option<S>> {
        let i = self.slots.len();
        if let Some(index) = &mut self.bytes {
            let b: Rc<[u8]> = Rc::from(bytes(&key)?);
            index.order.insert(b.clone(), i);
            index.of_slot.push(b);
        }
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
        Ok(None)
    }

    /// Removes `key`, returning the key stored and its value.
    fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<(K, S)>
    where
        K: Borrow<Q>,
    {
        let i = self.index.remove(key)?;
        let (key, value) = self.slots.swap_remove(i);
        if let Some(index) = &mut self.bytes {
            let b = index.of_slot.swap_remove(i);
            index.order.remove(&b);
        }
        if let (Some(table), Some(h)) = (&mut self.hashed, (self.hash)(&key))
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
            if let Some(slot) = self.index.get_mut::<K>(moved_key) {
                *slot = i;
            }
            if let Some(index) = &mut self.bytes
                && let Some(slot) = index.order.get_mut(&index.of_slot[i])
            {
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
        Some((key, value))
    }

    /// Every slot, in the store's order.
    fn ordered(&self) -> Vec<usize> {
        match &self.bytes {
            Some(index) => index.order.values().copied().collect(),
            None => self.index.values().copied().collect(),
        }
    }

    /// The slots of the keys between `start` and `end` by `Ord` (entries
    /// ordered by `Ord` only).
    fn range_by_ord<Q: Ord + ?Sized>(&self, start: Bound<&Q>, end: Bound<&Q>) -> Vec<usize>
    where
        K: Borrow<Q>,
    {
        if empty_range(start, end) {
            return Vec::new();
        }
        self.index
            .range::<Q, _>((start, end))
            .map(|(_, &i)| i)
            .collect()
    }

    /// The slots of the keys whose bytes are between `start` and `end`
    /// (entries ordered by bytes only).
    fn range_by_bytes(&self, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Vec<usize> {
        let Some(index) = &self.bytes else {
            return Vec::new();
        };
        if empty_range(start, end) {
            return Vec::new();
        }
        index
            .order
            .range::<[u8], _>((start, end))
            .map(|(_, &i)| i)
            .collect()
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    #[cfg(test)]
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

impl<K: Ord + Clone + fmt::Debug + 'static, S: fmt::Debug> fmt::Debug for Entries<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.ordered().into_iter().map(|i| {
                let (k, s) = &self.slots[i];
                (k, s)
            }))
            .finish()
    }
}

/// The shared body of both key-value stores: `S` is what the map holds,
/// `V` what the changelog carries.
struct KvCore<K, S, V> {
    name: String,
    /// The entries, when the store is in memory.
    map: Entries<K, S>,
    order: KeyOrder<K>,
    changelog: Changelog<K, V>,
    /// The changelog value and timestamp of a stored value.
    to_log: fn(&S) -> (&V, Option<i64>),
    /// A stored value from a changelog value and timestamp.
    from_log: fn(V, i64) -> S,
    /// Whether a stored value has a timestamp (kept in RocksDB before the
    /// value, as Kafka's timestamped stores write it).
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    timestamped: bool,
    /// Kafka's record cache of a Processor API store (`super::store_cache`):
    /// the writes the next commit logs.
    pending: Option<PendingWrites<K, S>>,
    /// Whether the store keeps its entries in RocksDB (opened at `init`).
    persistent: bool,
    #[cfg(feature = "rocksdb")]
    rocks: Option<super::rocksdb::RocksKv>,
}

impl<K: Ord + Clone + 'static, S: Clone, V: 'static> KvCore<K, S, V> {
    fn new(
        name: &str,
        changelog: Changelog<K, V>,
        to_log: fn(&S) -> (&V, Option<i64>),
        from_log: fn(V, i64) -> S,
        timestamped: bool,
    ) -> Self {
        let order = KeyOrder::new(changelog.key_serde.clone(), format!("{name}-changelog"));
        KvCore {
            name: name.to_owned(),
            map: Entries::new(order.by_bytes()),
            order,
            changelog,
            to_log,
            from_log,
            timestamped,
            pending: None,
            persistent: false,
            #[cfg(feature = "rocksdb")]
            rocks: None,
        }
    }

    /// Where the store keeps its entries: in RocksDB when `persistent`
    /// (an error without the `rocksdb` feature).
    fn set_persistent(&mut self, persistent: bool) -> Result<()> {
        self.persistent = super::rocksdb_available(&self.name, persistent)?;
        Ok(())
    }

    fn init(&mut self, context: &StoreContext) -> Result<()> {
        self.changelog.init(&self.name, context);
        self.order.set_topic(context.changelog_topic(&self.name));
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let path = context.state_dir().join("rocksdb").join(&self.name);
            self.rocks = Some(super::rocksdb::RocksKv::open(&self.name, &path, true)?);
        }
        Ok(())
    }

    fn close(&mut self) {
        #[cfg(feature = "rocksdb")]
        {
            self.rocks = None;
        }
    }

    /// The database of a persistent store; an error before `init`.
    #[cfg(feature = "rocksdb")]
    fn rocks(&self) -> Option<&super::rocksdb::RocksKv> {
        self.rocks.as_ref()
    }

    /// A stored value's bytes in RocksDB: the value's, after its
    /// timestamp (8 bytes big-endian) in a timestamped store.
    #[cfg(feature = "rocksdb")]
    fn encode(&self, stored: &S) -> Result<Vec<u8>> {
        let (v, ts) = (self.to_log)(stored);
        let value = self.changelog.value_bytes(self.order.topic(), v)?;
        if !self.timestamped {
            return Ok(value);
        }
        let mut out = Vec::with_capacity(8 + value.len());
        out.extend_from_slice(&ts.unwrap_or(-1).to_be_bytes());
        out.extend_from_slice(&value);
        Ok(out)
    }

    /// A stored value from its bytes in RocksDB.
    #[cfg(feature = "rocksdb")]
    fn decode(&self, db: &super::rocksdb::RocksKv, bytes: &[u8]) -> Result<S> {
        let (ts, value) = if self.timestamped {
            let Some(ts) = crate::time::read_i64(bytes, 0) else {
                return Err(db.corrupt("a value shorter than its 8-byte timestamp".to_owned()));
            };
            (ts, &bytes[8..])
        } else {
            (-1, bytes)
        };
        let v = self
            .changelog
            .value_serde
            .deserialize(self.order.topic(), value)
            .map_err(|e| db.corrupt(e.to_string()))?;
        Ok((self.from_log)(v, ts))
    }

    /// A key from its bytes in RocksDB.
    #[cfg(feature = "rocksdb")]
    fn decode_key(&self, db: &super::rocksdb::RocksKv, bytes: &[u8]) -> Result<K> {
        self.changelog
            .key_serde
            .deserialize(self.order.topic(), bytes)
            .map_err(|e| db.corrupt(e.to_string()))
    }

    /// Sets `key` to `value` where the entries are; returns the old value.
    /// `key_bytes`, when the caller has them, spare a serialization.
    fn insert(&mut self, key: K, value: S, key_bytes: Option<&Vec<u8>>) -> Result<Option<S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let k = match key_bytes {
                Some(b) => b.clone(),
                None => self.order.bytes(&key)?,
            };
            let v = self.encode(&value)?;
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            let old = db.put(&k, &v)?;
            let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
            return old.map(|b| self.decode(db, &b)).transpose();
        }
        let order = &self.order;
        self.map.insert(key, value, |k| match key_bytes {
            Some(bytes) => Ok(bytes.clone()),
            None => order.bytes(k),
        })
    }

    /// Removes `key` where the entries are; returns the key stored and
    /// its value.
    fn remove<Q>(&mut self, key: &Q) -> Result<Option<(K, S)>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let key = key.to_owned();
            let k = self.order.bytes(&key)?;
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            let old = db.delete(&k)?;
            let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
            return Ok(old
                .map(|b| self.decode(db, &b))
                .transpose()?
                .map(|s| (key, s)));
        }
        Ok(self.map.remove(key))
    }

    /// The value of `key`, in any borrowed form.
    fn get<Q>(&self, key: &Q) -> Result<Option<S>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let db = self.rocks().ok_or_else(|| not_open(&self.name))?;
            let k = self.order.bytes(&key.to_owned())?;
            return db.get(&k)?.map(|b| self.decode(db, &b)).transpose();
        }
        Ok(self.map.get(key).cloned())
    }

    /// The value of `key`, found by hash in memory (the DSL's look-ups).
    fn get_key(&self, key: &K) -> Result<Option<S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.get(key);
        }
        Ok(self.map.get_key(key).cloned())
    }

    fn len(&self) -> u64 {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.rocks().map_or(0, super::rocksdb::RocksKv::len);
        }
        self.map.len() as u64
    }

    /// The entries of RocksDB between these bounds of key bytes, decoded.
    #[cfg(feature = "rocksdb")]
    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        forward: bool,
        prefix: Option<&[u8]>,
    ) -> Result<KeyValueIterator<K, S>> {
        let db = self.rocks().ok_or_else(|| not_open(&self.name))?;
        if empty_range(start, end) {
            return Ok(KeyValueIterator::default());
        }
        let raw = db.range(start, end, forward, |k| {
            prefix.is_none_or(|p| k.starts_with(p))
        })?;
        let mut out = Vec::with_capacity(raw.len());
        for (k, v) in raw {
            out.push((self.decode_key(db, &k)?, self.decode(db, &v)?));
        }
        Ok(out.into())
    }

    fn put(&mut self, key: K, value: S) -> Result<Option<S>> {
        let (v, ts) = (self.to_log)(&value);
        self.changelog.check_timestamp(ts)?;
        if self.pending.is_some()
            && let Some((_, ctx)) = &self.changelog.sink
        {
            let at = ctx.timestamp();
            let old = self.insert(key.clone(), value.clone(), None)?;
            if let Some(pending) = &mut self.pending {
                pending.write(key, Some(value), at);
            }
            return Ok(old);
        }
        let encoded = self.changelog.encode_raw(&key, &[], Some(v))?;
        let old = self.insert(key, value, encoded.as_ref().map(|(k, _)| k))?;
        self.changelog.log_raw(encoded, ts);
        Ok(old)
    }

    /// Kafka's record cache in front of the changelog: the map changes
    /// now, the changelog when the cache is flushed ([`KvCore::log_current`]).
    fn put_unlogged(&mut self, key: &K, value: S) -> Result<Option<S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.insert(key.clone(), value, None);
        }
        let order = &self.order;
        self.map.insert_ref(key, value, |k| order.bytes(k))
    }

    fn delete_unlogged(&mut self, key: &K) -> Result<Option<S>> {
        Ok(self.remove(key)?.map(|(_, s)| s))
    }

    /// Writes `key`'s current value (a tombstone when it has none) to the
    /// changelog: what a flush of the record cache writes.
    fn log_current(&self, key: &K) -> Result<()> {
        match self.get_key(key)? {
            Some(value) => {
                let (v, ts) = (self.to_log)(&value);
                self.changelog.log(key, Some(v), ts)
            }
            None => self.changelog.log(key, None, None),
        }
    }

    fn delete<Q>(&mut self, key: &Q) -> Result<Option<S>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        if self.pending.is_some()
            && let Some((_, ctx)) = &self.changelog.sink
        {
            // Cached: the tombstone waits for the commit, even for a key
            // the store never had, as Kafka's caching store's does.
            let at = ctx.timestamp();
            let (key, old) = match self.remove(key)? {
                Some((k, old)) => (k, Some(old)),
                None => (key.to_owned(), None),
            };
            if let Some(pending) = &mut self.pending {
                pending.write(key, None, at);
            }
            return Ok(old);
        }
        match self.remove(key)? {
            Some((k, old)) => {
                self.changelog.log(&k, None, None)?;
                Ok(Some(old))
            }
            None => {
                // Kafka's logging store logs a delete of a key it never had.
                if self.changelog.sink.is_some() {
                    self.changelog.log(&key.to_owned(), None, None)?;
                }
                Ok(None)
            }
        }
    }

    /// Logs the writes the record cache held, Kafka's caching store's
    /// flush: per key its latest value at the timestamp of the record
    /// that wrote it (a timestamped value at its own), in the order of
    /// the keys' latest writes.
    fn commit(&mut self) -> Result<()> {
        let Some(pending) = &mut self.pending else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        for (key, value, timestamp) in pending.drain() {
            match &value {
                Some(stored) => {
                    let (v, ts) = (self.to_log)(stored);
                    self.changelog
                        .log(&key, Some(v), Some(ts.unwrap_or(timestamp)))?;
                }
                None => self.changelog.log(&key, None, Some(timestamp))?,
            }
        }
        Ok(())
    }

    /// The entries of these slots (in memory), in this order.
    fn entries(&self, slots: Vec<usize>, forward: bool) -> KeyValueIterator<K, S> {
        let mut out: Vec<(K, S)> = slots
            .into_iter()
            .map(|i| {
                let (k, s) = &self.map.slots[i];
                (k.clone(), s.clone())
            })
            .collect();
        if !forward {
            out.reverse();
        }
        out.into()
    }

    /// Every entry, in Kafka's order (the reverse when not `forward`).
    fn all(&self, forward: bool) -> Result<KeyValueIterator<K, S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.scan(Bound::Unbounded, Bound::Unbounded, forward, None);
        }
        Ok(self.entries(self.map.ordered(), forward))
    }

    fn range<Q, R>(&self, range: R, forward: bool) -> Result<KeyValueIterator<K, S>>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        let by_bytes = self.map.by_bytes() || self.persistent;
        let slots = if by_bytes {
            let bytes = |bound: Bound<&Q>| -> Result<Bound<Vec<u8>>> {
                Ok(match owned_bound(bound) {
                    Bound::Included(k) => Bound::Included(self.order.bytes(&k)?),
                    Bound::Excluded(k) => Bound::Excluded(self.order.bytes(&k)?),
                    Bound::Unbounded => Bound::Unbounded,
                })
            };
            let (start, end) = (bytes(range.start_bound())?, bytes(range.end_bound())?);
            let (start, end) = (
                start.as_ref().map(Vec::as_slice),
                end.as_ref().map(Vec::as_slice),
            );
            #[cfg(feature = "rocksdb")]
            if self.persistent {
                return self.scan(start, end, forward, None);
            }
            self.map.range_by_bytes(start, end)
        } else {
            self.map
                .range_by_ord(range.start_bound(), range.end_bound())
        };
        Ok(self.entries(slots, forward))
    }

    fn prefix_scan(&self, prefix: &[u8]) -> Result<KeyValueIterator<K, S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.scan(
                Bound::Included(prefix),
                Bound::Unbounded,
                true,
                Some(prefix),
            );
        }
        let slots = if self.map.by_bytes() {
            self.map
                .range_by_bytes(Bound::Included(prefix), Bound::Unbounded)
                .into_iter()
                .take_while(|&i| {
                    self.map
                        .bytes
                        .as_ref()
                        .is_some_and(|b| b.of_slot[i].starts_with(prefix))
                })
                .collect()
        } else {
            // Ordered by `Ord`, which is the bytes' order: start at the
            // key whose bytes the prefix is, when there is one, and
            // serialize the keys from there on.
            let from = match self.order.key_of(prefix) {
                Some(k) => self.map.range_by_ord(Bound::Included(&k), Bound::Unbounded),
                None => self.map.ordered(),
            };
            let mut slots = Vec::new();
            for i in from {
                let bytes = self.order.bytes(&self.map.slots[i].0)?;
                if bytes.starts_with(prefix) {
                    slots.push(i);
                } else if bytes.as_slice() > prefix {
                    break;
                }
            }
            slots
        };
        Ok(self.entries(slots, true))
    }

    fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.changelog.topic_or(&self.name);
        for (offset, record) in records.into_iter().enumerate() {
            let offset = offset as i64;
            let Some(key_bytes) = &record.key else {
                return Err(StreamsError::InvalidChangelogRecord {
                    store: self.name.clone(),
                    topic,
                    offset,
                    reason: "has no key",
                });
            };
            let key = self.changelog.decode_key(&topic, offset, key_bytes)?;
            match &record.value {
                Some(bytes) => {
                    let value = self.changelog.decode_value(&topic, offset, bytes)?;
                    let stored = (self.from_log)(value, record.timestamp);
                    self.insert(key, stored, Some(key_bytes))?;
                }
                None => {
                    self.remove(&key)?;
                }
            }
        }
        Ok(())
    }
}

/// The error of a persistent store used before its task started it.
#[cfg(feature = "rocksdb")]
pub(crate) fn not_open(store: &str) -> StreamsError {
    StreamsError::StoreIo {
        store: store.to_owned(),
        path: std::path::PathBuf::new(),
        action: "read or write",
        reason: "the store is not open: its task has not started it (init) or has closed it"
            .to_owned(),
    }
}

macro_rules! kv_store_common {
    ($store:ident, $stored:ty, $kind:expr) => {
        impl<K: Ord + Clone + 'static, V: Clone + 'static> $store<K, V> {
            /// The store's name.
            pub fn name(&self) -> &str {
                &self.core.name
            }

            /// The value for `key`, which may be given in any borrowed
            /// form of the key type (`get("a")` on `String` keys), as
            /// `HashMap::get`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn get<Q>(&self, key: &Q) -> Result<Option<$stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                self.core.get(key)
            }

            /// Removes `key` and writes a tombstone to the changelog (even
            /// for a key the store does not have, as Kafka's logging store
            /// does). Returns the old value.
            ///
            /// # Errors
            /// The changelog serde failed.
            pub fn delete<Q>(&mut self, key: &Q) -> Result<Option<$stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                self.core.delete(key)
            }

            /// Every entry, in Kafka's key order (by the keys' serialized
            /// bytes), Kafka's `all()`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn all(&self) -> Result<KeyValueIterator<K, $stored>> {
                self.core.all(true)
            }

            /// Every entry, last key first, Kafka's `reverseAll()`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn reverse_all(&self) -> Result<KeyValueIterator<K, $stored>> {
                self.core.all(false)
            }

            /// The entries whose key is in `range`, in Kafka's key order:
            /// `from..=to` is Kafka's `range(from, to)`, `from..` its
            /// `range(from, null)`. Bounds are compared as serialized
            /// bytes, as Kafka compares them: a start whose bytes come
            /// after the end's gives nothing (for `i64` keys, `-1..=1`),
            /// and `1..=-1` is every key from `1` on (Clippy's
            /// `reversed_empty_ranges` takes such a literal range for a
            /// mistake: allow it where you mean it).
            ///
            /// # Errors
            /// The key serde cannot serialize a bound.
            pub fn range<Q, R>(&self, range: R) -> Result<KeyValueIterator<K, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
                R: RangeBounds<Q>,
            {
                self.core.range(range, true)
            }

            /// As [`range`](Self::range), last key first, Kafka's
            /// `reverseRange(from, to)`.
            ///
            /// # Errors
            /// The key serde cannot serialize a bound.
            pub fn reverse_range<Q, R>(&self, range: R) -> Result<KeyValueIterator<K, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
                R: RangeBounds<Q>,
            {
                self.core.range(range, false)
            }

            /// The entries whose key's bytes start with `prefix`'s, as
            /// `prefix_serde` writes it, in Kafka's key order, Kafka's
            /// `prefixScan(prefix, prefixKeySerializer)`.
            ///
            /// ```
            /// use streams_core::serde::StringSerde;
            /// use streams_core::state::{KeyValueStore, StoreBuilder, Stores};
            /// use streams_core::StreamsConfig;
            ///
            /// let mut built = Stores::key_value_store_builder("s", StringSerde, StringSerde).build(&StreamsConfig::default())?;
            /// let store = built.as_any_mut().downcast_mut::<KeyValueStore<String, String>>().ok_or("type")?;
            /// for k in ["b", "ab", "a", "abc", "aa"] {
            ///     store.put(k.into(), k.to_uppercase())?;
            /// }
            /// let found: Vec<String> = store.prefix_scan(&"ab".to_string(), StringSerde)?.map(|(k, _)| k).collect();
            /// assert_eq!(found, ["ab", "abc"]);
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            ///
            /// # Errors
            /// `prefix_serde` or the key serde failed.
            pub fn prefix_scan<P>(
                &self,
                prefix: &P,
                prefix_serde: impl Serde<P>,
            ) -> Result<KeyValueIterator<K, $stored>> {
                let topic = self.core.changelog.topic_or(&self.core.name);
                let bytes = prefix_serde.serialize(&topic, prefix).map_err(|reason| {
                    StreamsError::Serialization {
                        topic: topic.clone(),
                        node: None,
                        part: crate::error::RecordPart::Key,
                        reason,
                    }
                })?;
                self.core.prefix_scan(&bytes)
            }

            /// How many entries there are (exact for in-memory stores).
            pub fn approximate_num_entries(&self) -> u64 {
                self.core.len()
            }

            /// Whether the store is empty.
            pub fn is_empty(&self) -> bool {
                self.core.len() == 0
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
            fn store_types(&self) -> String {
                super::key_value_types::<K, V>()
            }
            fn init(&mut self, context: &StoreContext) -> Result<()> {
                self.core.init(context)
            }
            fn close(&mut self) -> Result<()> {
                self.core.close();
                Ok(())
            }
            fn persistent(&self) -> bool {
                self.core.persistent
            }
            fn commit(&mut self) -> Result<()> {
                self.core.commit()
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

        impl<K: Ord + Clone + fmt::Debug + 'static, V: fmt::Debug> fmt::Debug for $store<K, V> {
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
/// in-memory supplier.
///
/// Keys are in Kafka's order, by their serialized bytes (see
/// [`Serde::bytes_preserve_order`](crate::serde::Serde::bytes_preserve_order)):
/// a store of `i64` keys with [`I64Serde`](crate::serde::I64Serde), Kafka's
/// big-endian `Serdes.Long()`, lists `0, 1, .., -2, -1`, as Kafka's
/// in-memory and RocksDB stores do, and `range(-1..=1)` is empty (its
/// start's bytes come after its end's; Kafka returns nothing too).
///
/// Reads give owned values and iterators that own what they hold (a
/// [`KeyValueIterator`]), so a processor can change the store while it
/// walks a range, as Kafka's do; look-ups take any borrowed form of the
/// key, as `HashMap`'s do (`get("a")` on a `String`-keyed store).
///
/// ```
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::state::{KeyValueStore, StoreBuilder, Stores};
/// use streams_core::StreamsConfig;
///
/// let mut built = Stores::key_value_store_builder("s", I64Serde, StringSerde).build(&StreamsConfig::default())?;
/// let store = built.as_any_mut().downcast_mut::<KeyValueStore<i64, String>>().ok_or("type")?;
/// for k in [-2, 1, -1, 0, 2] {
///     store.put(k, format!("v{k}"))?;
/// }
/// let keys: Vec<i64> = store.all()?.map(|(k, _)| k).collect();
/// assert_eq!(keys, [0, 1, 2, -2, -1]);
/// assert_eq!(store.range(-1..=1)?.count(), 0);
/// assert_eq!(store.reverse_range(1..=-2)?.map(|(k, _)| k).collect::<Vec<_>>(), [-2, 2, 1]);
/// // Walk a range and delete as you go: the iterator owns its entries.
/// for (k, _) in store.range(1..)? {
///     store.delete(&k)?;
/// }
/// assert_eq!(store.approximate_num_entries(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KeyValueStore<K, V> {
    core: KvCore<K, V, V>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KeyValueStore<K, V> {
    pub(crate) fn new(name: &str, changelog: Changelog<K, V>) -> Self {
        KeyValueStore {
            core: KvCore::new(name, changelog, |v| (v, None), |v, _| v, false),
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
        match self.core.get_key(&key)? {
            Some(v) => Ok(Some(v)),
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
/// changelog records carry the value's own timestamp. Entries are in
/// Kafka's order, by their keys' serialized bytes, and reads work as a
/// [`KeyValueStore`]'s.
pub struct TimestampedKeyValueStore<K, V> {
    core: KvCore<K, ValueAndTimestamp<V>, V>,
    /// Whether the DSL operator writing it keeps Kafka's record cache in
    /// front of it (see `crate::dsl::cache`).
    pub(crate) caching: bool,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedKeyValueStore<K, V> {
    pub(crate) fn new(name: &str, changelog: Changelog<K, V>) -> Self {
        TimestampedKeyValueStore {
            core: KvCore::new(
                name,
                changelog,
                |vt| (&vt.value, Some(vt.timestamp)),
                ValueAndTimestamp::new,
                true,
            ),
            caching: false,
        }
    }

    /// As `get`, by hash for the key types that have one here: the DSL's
    /// processors look up this way.
    pub(crate) fn get_key(&self, key: &K) -> Result<Option<ValueAndTimestamp<V>>> {
        self.core.get_key(key)
    }

    /// Sets `key` without writing the changelog (the record cache writes
    /// it at its flush). Returns the old value.
    pub(crate) fn put_unlogged(
        &mut self,
        key: &K,
        value: V,
        timestamp: i64,
    ) -> Result<Option<ValueAndTimestamp<V>>> {
        self.core
            .put_unlogged(key, ValueAndTimestamp::new(value, timestamp))
    }

    /// Removes `key` without writing the changelog. Returns the old value.
    pub(crate) fn delete_unlogged(&mut self, key: &K) -> Result<Option<ValueAndTimestamp<V>>> {
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
        match self.core.get_key(&key)? {
            Some(v) => Ok(Some(v)),
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
        let mut store = KeyValueStore::new(name, parts.changelog);
        store.core.pending = parts.cache.then(PendingWrites::new);
        store.core.set_persistent(parts.persistent)?;
        Ok(store)
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for TimestampedKeyValueStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = ();

    fn make(name: &str, (): &(), parts: StoreParts<K, V>) -> Result<Self> {
        let mut store = TimestampedKeyValueStore::new(name, parts.changelog);
        store.caching = parts.caching;
        store.core.pending = parts.cache.then(PendingWrites::new);
        store.core.set_persistent(parts.persistent)?;
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::{Entries, hash_bytes, key_hash};
    use crate::error::Result;

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

    /// Runs `ops` on `entries` (keys as `key` makes them, bytes as `bytes`
    /// writes them) and on a `BTreeMap` of the keys' bytes, Kafka's store,
    /// checking that they agree after each: values, order, ranges.
    fn check<K: Ord + Clone + std::fmt::Debug + 'static>(
        mut entries: Entries<K, u32>,
        key: impl Fn(u8) -> K,
        bytes: impl Fn(&K) -> Vec<u8>,
        ops: Vec<Op>,
    ) -> std::result::Result<(), TestCaseError> {
        let mut model: BTreeMap<Vec<u8>, (K, u32)> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    let old = entries
                        .insert(key(k), v, |k| Ok(bytes(k)))
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(old, model.insert(bytes(&key(k)), (key(k), v)).map(|e| e.1));
                }
                Op::Remove(k) => prop_assert_eq!(
                    entries.remove(&key(k)).map(|e| e.1),
                    model.remove(&bytes(&key(k))).map(|e| e.1)
                ),
                Op::Get(k) => prop_assert_eq!(
                    entries.get(&key(k)),
                    model.get(&bytes(&key(k))).map(|e| &e.1)
                ),
            }
            prop_assert_eq!(entries.len(), model.len());
            let ordered: Vec<(K, u32)> = entries
                .ordered()
                .into_iter()
                .map(|i| entries.slots[i].clone())
                .collect();
            prop_assert_eq!(ordered, model.values().cloned().collect::<Vec<_>>());
            let (lo, hi) = (bytes(&key(3)), bytes(&key(7)));
            let in_range: Vec<K> = if entries.by_bytes() {
                entries.range_by_bytes(
                    std::ops::Bound::Included(&lo[..]),
                    std::ops::Bound::Included(&hi[..]),
                )
            } else {
                entries.range_by_ord(
                    std::ops::Bound::Included(&key(3)),
                    std::ops::Bound::Included(&key(7)),
                )
            }
            .into_iter()
            .map(|i| entries.slots[i].0.clone())
            .collect();
            let expected: Vec<K> = if lo <= hi {
                model.range(lo..=hi).map(|(_, (k, _))| k.clone()).collect()
            } else {
                Vec::new()
            };
            prop_assert_eq!(in_range, expected);
        }
        for k in 0..12 {
            prop_assert_eq!(
                entries.get_key(&key(k)),
                model.get(&bytes(&key(k))).map(|e| &e.1)
            );
        }
        Ok(())
    }

    fn json(k: &(u8, String)) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({ "n": k.0, "s": k.1 })).unwrap_or_default()
    }

    proptest! {
        /// The entries behave as Kafka's store, a `BTreeMap` of the keys'
        /// bytes, whatever the order of inserts, removes and reads (which
        /// move the remembered slot): strings (whose bytes order as
        /// `Ord`), `i64` in Kafka's big-endian bytes with negatives
        /// (ordered by bytes), JSON objects (ordered by their text), and
        /// hashed keys whose hashes collide (three hashes for twelve keys).
        #[test]
        fn entries_behave_as_kafkas_store_of_bytes(ops in proptest::collection::vec(op(), 0..200)) {
            check(Entries::new(false), |k| format!("k{k:02}"), |k| k.as_bytes().to_vec(), ops.clone())?;
            check(Entries::new(true), |k| i64::from(k) - 6, |k| k.to_be_bytes().to_vec(), ops.clone())?;
            check(Entries::new(true), |k| (k % 4, format!("{}", 11 - k)), json, ops.clone())?;
            check(Entries::with_hash(false, |k: &String| Some(k.len() as u64 % 3 + u64::from(k.as_bytes()[2] % 3))), |k| format!("k{k:02}"), |k| k.as_bytes().to_vec(), ops.clone())?;
            check(Entries::with_hash(true, |k: &i64| Some(k.unsigned_abs() % 3)), |k| i64::from(k) - 6, |k| k.to_be_bytes().to_vec(), ops)?;
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

    #[test]
    fn a_key_whose_bytes_fail_is_not_stored() {
        let mut entries: Entries<i64, u32> = Entries::new(true);
        let failed: Result<Option<u32>> = entries.insert(1, 1, |_| {
            Err(crate::StreamsError::Serialization {
                topic: "t".into(),
                node: None,
                part: crate::error::RecordPart::Key,
                reason: crate::serde::SerdeError::new("no"),
            })
        });
        assert!(failed.is_err());
        assert!(entries.is_empty() && entries.get_key(&1).is_none());
    }
}
