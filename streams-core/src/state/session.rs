//! The in-memory session store, Kafka's `InMemorySessionStore`.
//!
//! A session store keeps one value per key and session window `[start,
//! end]`. It tracks its own stream time, the largest session end put so
//! far, and keeps sessions for its retention period: a session whose end
//! is at or before `stream time - retention` is expired.
//!
//! Each change is written to the changelog with Kafka's session key: the
//! key's bytes, then the session end and start, 8 bytes big-endian each; a
//! removal writes a tombstone. [`SessionStore::restore`] replays a changelog.
//! Reads across keys are by session end, then key in Kafka's order (by the
//! keys' serialized bytes), as Kafka's in-memory session store gives them.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{Window, Windowed};
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::state::{SessionStore, StoreBuilder, Stores};
//! use streams_core::StreamsConfig;
//!
//! let builder = Stores::session_store_builder("sessions", Duration::from_millis(100), StringSerde, I64Serde);
//! let mut boxed = builder.build(&StreamsConfig::default())?;
//! let store = boxed.as_any_mut().downcast_mut::<SessionStore<String, i64>>().ok_or("type")?;
//! let alice = |start, end| Windowed::new("alice".to_string(), Window::new(start, end));
//! store.put(alice(0, 10), 2)?;
//! store.put(alice(40, 50), 1)?;
//! // Sessions of alice ending at or after 5 and starting at or before 45.
//! let found: Vec<_> = store.find_sessions("alice", 5, 45)?.map(|(w, v)| (w.window, v)).collect();
//! assert_eq!(found, [(Window::new(0, 10), 2), (Window::new(40, 50), 1)]);
//! store.remove(&alice(0, 10))?;
//! assert_eq!(store.fetch("alice")?.count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::Duration;

use super::key_order::{KeyOrder, OrderedKey, empty_range, owned_bound};
#[cfg(feature = "rocksdb")]
use super::key_value::not_open;
#[cfg(feature = "rocksdb")]
use super::rocksdb::KeySchema;
use super::window::bad_changelog_key;
use super::{
    BuiltInStoreBuilder, Changelog, KeyValueIterator, MakeStore, PendingWrites, StateStore,
    StoreContext, StoreKind, StoreParts, Stores,
};
use crate::error::{Result, StreamsError};
use crate::record::RawRecord;
use crate::serde::Serde;
use crate::time::read_i64;
use crate::time::{Window, Windowed};

const TIMESTAMP_SIZE: usize = 8;

/// Session end -> key in Kafka's order -> session start -> value.
type Sessions<K, V> = BTreeMap<i64, BTreeMap<OrderedKey<K>, BTreeMap<i64, V>>>;

/// An in-memory session store, Kafka's `SessionStore` with an in-memory
/// supplier; build one with [`Stores::session_store_builder`].
///
/// It keeps one value per key and session window `[start, end]`. It
/// tracks its own stream time, the largest session end put so far, and
/// keeps sessions for its retention period: a session whose end is at or
/// before `stream time - retention` is expired.
///
/// Each change is written to the changelog with Kafka's session key: the
/// key's bytes, then the session end and start, 8 bytes big-endian each;
/// a removal writes a tombstone. [`SessionStore::restore`] replays a
/// changelog. Reads across keys are by session end, then key in Kafka's
/// order (by the keys' serialized bytes).
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{Window, Windowed};
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::state::{SessionStore, StoreBuilder, Stores};
/// use streams_core::StreamsConfig;
///
/// let builder = Stores::session_store_builder("s", Duration::from_secs(1), I64Serde, StringSerde);
/// let mut built = builder.build(&StreamsConfig::default())?;
/// let store = built.as_any_mut().downcast_mut::<SessionStore<i64, String>>().ok_or("type")?;
/// for key in [-1, 1] {
///     store.put(Windowed::new(key, Window::new(0, 5)), format!("v{key}"))?;
/// }
/// let keys: Vec<i64> = store.all()?.map(|(w, _)| w.key).collect();
/// assert_eq!(keys, [1, -1]);
/// let (from, to) = (-1, 1); // -1's bytes come after 1's: nothing
/// assert_eq!(store.fetch_range(from..=to)?.count(), 0);
/// assert_eq!(store.fetch_session(&-1, 0, 5)?.as_deref(), Some("v-1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SessionStore<K, V> {
    name: String,
    retention_ms: i64,
    sessions: Sessions<K, V>,
    observed_stream_time: i64,
    order: KeyOrder<K>,
    changelog: Changelog<K, V>,
    /// Kafka's record cache of a Processor API store (`super::store_cache`):
    /// the writes the next commit logs, by key and session.
    pending: Option<PendingWrites<(OrderedKey<K>, Window), V>>,
    /// Whether the DSL operator writing it keeps Kafka's record cache in
    /// front of it (see `crate::dsl::cache`).
    pub(crate) caching: bool,
    /// Whether the store keeps its sessions in RocksDB, in segments by
    /// session end (opened at `init`).
    persistent: bool,
    #[cfg(feature = "rocksdb")]
    rocks: Option<super::rocksdb::RocksSegmented>,
}

fn session_suffix(window: &Window) -> [u8; 2 * TIMESTAMP_SIZE] {
    let mut suffix = [0_u8; 2 * TIMESTAMP_SIZE];
    suffix[..TIMESTAMP_SIZE].copy_from_slice(&window.end.to_be_bytes());
    suffix[TIMESTAMP_SIZE..].copy_from_slice(&window.start.to_be_bytes());
    suffix
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> SessionStore<K, V> {
    pub(crate) fn new(name: &str, retention_ms: i64, changelog: Changelog<K, V>) -> Self {
        SessionStore {
            name: name.to_owned(),
            retention_ms,
            sessions: BTreeMap::new(),
            observed_stream_time: -1,
            order: KeyOrder::new(changelog.key_serde.clone(), format!("{name}-changelog")),
            changelog,
            pending: None,
            caching: false,
            persistent: false,
            #[cfg(feature = "rocksdb")]
            rocks: None,
        }
    }

    /// Where the store keeps its sessions: in RocksDB when `persistent`
    /// (an error without the `rocksdb` feature).
    fn set_persistent(&mut self, persistent: bool) -> Result<()> {
        self.persistent = super::rocksdb_available(&self.name, persistent)?;
        Ok(())
    }

    /// Puts without writing the changelog (the record cache writes it at
    /// its flush, [`SessionStore::log_value`]).
    pub(crate) fn put_unlogged(&mut self, session: Windowed<K>, value: V) -> Result<()> {
        let key = self.order.ordered(session.key)?;
        self.apply(key, session.window, Some(value))
    }

    /// Removes without writing the changelog.
    pub(crate) fn remove_unlogged(&mut self, session: &Windowed<K>) -> Result<()> {
        let key = self.order.ordered(session.key.clone())?;
        self.remove_entry(&key, &session.window)
    }

    /// Writes `value` (a tombstone for `None`) for `session` to the
    /// changelog, whether or not the store still keeps the session, as
    /// Kafka's cache flush does.
    pub(crate) fn log_value(&self, session: &Windowed<K>, value: Option<&V>) -> Result<()> {
        let encoded =
            self.changelog
                .encode_raw(&session.key, &session_suffix(&session.window), value)?;
        self.changelog.log_raw(encoded, None);
        Ok(())
    }

    /// Sessions ending at or before this have expired.
    fn expired_up_to(&self) -> i64 {
        self.observed_stream_time.saturating_sub(self.retention_ms)
    }

    fn min_live_end(&self) -> i64 {
        self.expired_up_to().saturating_add(1)
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Puts `value` for the session `session`, Kafka's `put(sessionKey,
    /// aggregate)`, and writes it to the changelog at the current record's
    /// timestamp. A put for an expired session is ignored (and still
    /// logged, as Kafka does).
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(&mut self, session: Windowed<K>, value: V) -> Result<()> {
        let Windowed { key, window } = session;
        let key = self.order.ordered(key)?;
        if let (Some(pending), Some((_, ctx))) = (&mut self.pending, &self.changelog.sink) {
            pending.write((key.clone(), window), Some(value.clone()), ctx.timestamp());
            return self.apply(key, window, Some(value));
        }
        let encoded = self.changelog.encode_raw_with(
            &key.key,
            key.bytes.as_deref(),
            &session_suffix(&window),
            Some(&value),
        )?;
        self.apply(key, window, Some(value))?;
        self.changelog.log_raw(encoded, None);
        Ok(())
    }

    /// Removes the session `session` and writes a tombstone for it, Kafka's
    /// `remove(sessionKey)`.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn remove(&mut self, session: &Windowed<K>) -> Result<()> {
        let key = self.order.ordered(session.key.clone())?;
        if let (Some(pending), Some((_, ctx))) = (&mut self.pending, &self.changelog.sink) {
            pending.write((key.clone(), session.window), None, ctx.timestamp());
            return self.remove_entry(&key, &session.window);
        }
        let encoded = self.changelog.encode_raw_with(
            &key.key,
            key.bytes.as_deref(),
            &session_suffix(&session.window),
            None,
        )?;
        self.remove_entry(&key, &session.window)?;
        self.changelog.log_raw(encoded, None);
        Ok(())
    }

    /// Kafka's `remove(sessionKey)`, without logging (on RocksDB it moves
    /// stream time, as Kafka's does).
    fn remove_entry(&mut self, key: &OrderedKey<K>, window: &Window) -> Result<()> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            self.observed_stream_time = self.observed_stream_time.max(window.end);
            let store_key = self.store_key(key, window)?;
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            return db.remove(&store_key);
        }
        let end = window.end;
        let Some(keys) = self.sessions.get_mut(&end) else {
            return Ok(());
        };
        let Some(starts) = keys.get_mut(key) else {
            return Ok(());
        };
        starts.remove(&window.start);
        if starts.is_empty() {
            keys.remove(key);
            if keys.is_empty() {
                self.sessions.remove(&end);
            }
        }
        Ok(())
    }

    /// Kafka's `InMemorySessionStore.put` (or `RocksDBSessionStore.put`),
    /// without logging.
    fn apply(&mut self, key: OrderedKey<K>, window: Window, value: Option<V>) -> Result<()> {
        let end = window.end;
        self.observed_stream_time = self.observed_stream_time.max(end);
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let store_key = self.store_key(&key, &window)?;
            let bytes = value
                .as_ref()
                .map(|v| self.changelog.value_bytes(self.order.topic(), v))
                .transpose()?;
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            db.put(&store_key, bytes.as_deref())?;
            return Ok(());
        }
        if end > self.expired_up_to() {
            match value {
                Some(v) => {
                    self.sessions
                        .entry(end)
                        .or_default()
                        .entry(key)
                        .or_default()
                        .insert(window.start, v);
                }
                None => self.remove_entry(&key, &window)?,
            }
        }
        let min_live = self.min_live_end().max(0);
        self.sessions = self.sessions.split_off(&min_live);
        Ok(())
    }

    /// The live sessions whose end is at or after `earliest_end`, by end.
    fn ends_from(
        &self,
        earliest_end: i64,
    ) -> impl DoubleEndedIterator<Item = (&i64, &BTreeMap<OrderedKey<K>, BTreeMap<i64, V>>)> {
        let from = earliest_end.max(self.min_live_end());
        self.sessions.range(from..)
    }

    /// The value of exactly this session (the key in any borrowed form of
    /// the key type), Kafka's `fetchSession(key, start, end)`.
    ///
    /// # Errors
    /// The key serde failed (a store ordering keys by their bytes
    /// serializes the key to find it).
    pub fn fetch_session<Q>(&self, key: &Q, start: i64, end: i64) -> Result<Option<V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        let key = self.order.ordered(key.to_owned())?;
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let store_key = self.store_key(&key, &Window::new(start, end))?;
            let db = self.rocks()?;
            return db
                .get(&store_key)?
                .map(|b| self.decode_value(db, &b))
                .transpose();
        }
        if end <= self.expired_up_to() {
            return Ok(None);
        }
        Ok((|| {
            self.sessions.get(&end)?.get(&key)?.get(&start).cloned()
        })())
    }

    /// The sessions of the keys in `keys` that end at or after
    /// `earliest_end` and start at or before `latest_start`: by session
    /// end, then key in Kafka's order, then (within one key and end)
    /// latest start first, as Kafka's in-memory store gives them; the
    /// reverse order when not `forward`.
    fn find(
        &self,
        keys: (Bound<OrderedKey<K>>, Bound<OrderedKey<K>>),
        earliest_end: i64,
        latest_start: i64,
        forward: bool,
    ) -> Result<KeyValueIterator<Windowed<K>, V>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.persistent_find(keys, earliest_end, latest_start, forward);
        }
        if empty_range(keys.0.as_ref(), keys.1.as_ref()) {
            return Ok(KeyValueIterator::default());
        }
        let mut found = Vec::new();
        for (&end, by_key) in self.ends_from(earliest_end) {
            for (key, starts) in by_key.range((keys.0.as_ref(), keys.1.as_ref())) {
                for (&start, v) in starts.range(..=latest_start).rev() {
                    found.push((
                        Windowed::new(key.key.clone(), Window::new(start, end)),
                        v.clone(),
                    ));
                }
            }
        }
        if !forward {
            found.reverse();
        }
        Ok(found.into())
    }

    /// The key `key` as a range of one key.
    fn one_key<Q>(&self, key: &Q) -> Result<(Bound<OrderedKey<K>>, Bound<OrderedKey<K>>)>
    where
        Q: ToOwned<Owned = K> + ?Sized,
    {
        let key = self.order.ordered(key.to_owned())?;
        Ok((Bound::Included(key.clone()), Bound::Included(key)))
    }

    /// The bounds of a key range, as the store orders keys.
    fn key_range<Q, R>(&self, keys: &R) -> Result<(Bound<OrderedKey<K>>, Bound<OrderedKey<K>>)>
    where
        Q: ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        Ok((
            self.order.bound(owned_bound(keys.start_bound()))?,
            self.order.bound(owned_bound(keys.end_bound()))?,
        ))
    }

    /// The sessions of `key` that end at or after `earliest_session_end`
    /// and start at or before `latest_session_start`, Kafka's
    /// `findSessions`: by session end, then (within one end) latest start
    /// first, as Kafka's in-memory store returns them. These are the
    /// sessions a record could merge with.
    ///
    /// # Errors
    /// The key serde failed.
    pub fn find_sessions<Q>(
        &self,
        key: &Q,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> Result<KeyValueIterator<Windowed<K>, V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.find(
            self.one_key(key)?,
            earliest_session_end,
            latest_session_start,
            true,
        )
    }

    /// As [`SessionStore::find_sessions`], in the reverse order (latest
    /// end first, and within one end, earliest start first), Kafka's
    /// `backwardFindSessions`.
    ///
    /// # Errors
    /// The key serde failed.
    pub fn backward_find_sessions<Q>(
        &self,
        key: &Q,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> Result<KeyValueIterator<Windowed<K>, V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.find(
            self.one_key(key)?,
            earliest_session_end,
            latest_session_start,
            false,
        )
    }

    /// The sessions of the keys in `keys` that end at or after
    /// `earliest_session_end` and start at or before
    /// `latest_session_start`, by session end, then key in Kafka's order
    /// (by the keys' serialized bytes), Kafka's `findSessions(keyFrom,
    /// keyTo, earliestSessionEndTime, latestSessionStartTime)`.
    ///
    /// # Errors
    /// The key serde failed.
    pub fn find_sessions_in_range<Q, R>(
        &self,
        keys: R,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> Result<KeyValueIterator<Windowed<K>, V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.find(
            self.key_range(&keys)?,
            earliest_session_end,
            latest_session_start,
            true,
        )
    }

    /// Every key's sessions that end between `earliest_session_end` and
    /// `latest_session_end` (inclusive), by end, then key in Kafka's
    /// order, Kafka's `findSessions(earliestSessionEndTime,
    /// latestSessionEndTime)`.
    ///
    /// # Errors
    /// None for a store in memory.
    pub fn find_sessions_ending_between(
        &self,
        earliest_session_end: i64,
        latest_session_end: i64,
    ) -> Result<KeyValueIterator<Windowed<K>, V>> {
        if self.persistent {
            return Err(StreamsError::StoreOperationNotSupported {
                store: self.name.clone(),
                operation: "find_sessions_ending_between",
                instead: "find_sessions_in_range(.., earliest_end, latest_start) or all(); Kafka's RocksDB session store throws UnsupportedOperationException here too",
            });
        }
        let mut found = Vec::new();
        for (&end, by_key) in self
            .ends_from(earliest_session_end)
            .take_while(|(end, _)| **end <= latest_session_end)
        {
            for (key, starts) in by_key {
                for (&start, v) in starts.iter().rev() {
                    found.push((
                        Windowed::new(key.key.clone(), Window::new(start, end)),
                        v.clone(),
                    ));
                }
            }
        }
        Ok(found.into())
    }

    /// Every live session of `key`, Kafka's `fetch(key)`.
    ///
    /// # Errors
    /// The key serde failed.
    pub fn fetch<Q>(&self, key: &Q) -> Result<KeyValueIterator<Windowed<K>, V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.find_sessions(key, i64::MIN, i64::MAX)
    }

    /// Every live session of the keys in `keys`, by end, then key in
    /// Kafka's order, Kafka's `fetch(keyFrom, keyTo)`.
    ///
    /// # Errors
    /// The key serde failed.
    pub fn fetch_range<Q, R>(&self, keys: R) -> Result<KeyValueIterator<Windowed<K>, V>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
        R: RangeBounds<Q>,
    {
        self.find_sessions_in_range(keys, i64::MIN, i64::MAX)
    }

    /// Every live session, by end, then key in Kafka's order.
    ///
    /// # Errors
    /// None for a store in memory.
    pub fn all(&self) -> Result<KeyValueIterator<Windowed<K>, V>> {
        if self.persistent {
            // Kafka's `fetch(null, null)`: sessions ending from 0 on.
            return self.find((Bound::Unbounded, Bound::Unbounded), 0, i64::MAX, true);
        }
        self.find_sessions_ending_between(i64::MIN, i64::MAX)
    }

    /// How many live sessions there are.
    pub fn approximate_num_entries(&self) -> u64 {
        if self.persistent {
            return self.all().map_or(0, |all| all.count() as u64);
        }
        self.ends_from(i64::MIN)
            .flat_map(|(_, keys)| keys.values())
            .map(|starts| starts.len() as u64)
            .sum()
    }

    /// Whether there is no live session.
    pub fn is_empty(&self) -> bool {
        self.approximate_num_entries() == 0
    }

    /// The store's stream time: the largest session end put, or `-1`.
    pub fn observed_stream_time(&self) -> i64 {
        self.observed_stream_time
    }

    /// The retention period, in milliseconds.
    pub fn retention_ms(&self) -> i64 {
        self.retention_ms
    }

    /// Whether the store writes a changelog.
    pub fn logging_enabled(&self) -> bool {
        self.changelog.enabled
    }

    /// Replays changelog records (in offset order) into the store: a put
    /// each, a tombstone removes. Nothing is written to the changelog.
    ///
    /// # Errors
    /// A record without a key, a key too short for a session key, or bytes
    /// the serdes cannot decode (named by changelog topic and offset).
    pub fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.changelog.topic_or(&self.name);
        for (offset, record) in records.into_iter().enumerate() {
            let offset = offset as i64;
            let Some(key) = &record.key else {
                return Err(bad_changelog_key(&self.name, &topic, offset, "has no key"));
            };
            let Some(key_len) = key.len().checked_sub(2 * TIMESTAMP_SIZE) else {
                return Err(bad_changelog_key(
                    &self.name,
                    &topic,
                    offset,
                    "has a key too short for a session store (key, 8-byte end, 8-byte start)",
                ));
            };
            let end = read_i64(key, key_len).unwrap_or_default();
            let start = read_i64(key, key_len + TIMESTAMP_SIZE).unwrap_or_default();
            let k = OrderedKey {
                key: self.changelog.decode_key(&topic, offset, &key[..key_len])?,
                bytes: self.order.by_bytes().then(|| key[..key_len].into()),
            };
            let window = Window::new(start, end);
            match &record.value {
                Some(bytes) => {
                    let value = self.changelog.decode_value(&topic, offset, bytes)?;
                    self.apply(k, window, Some(value))?;
                }
                // Kafka's RocksDB store replays a tombstone as a put of
                // null, which moves stream time.
                None if self.persistent => self.apply(k, window, None)?,
                // A removal, as the live in-memory store did it: without
                // moving stream time.
                None => self.remove_entry(&k, &window)?,
            }
        }
        Ok(())
    }
}

/// The RocksDB side of a persistent session store: Kafka's
/// `RocksDBSessionStore` over its segmented bytes store.
#[cfg(feature = "rocksdb")]
impl<K: Ord + Clone + 'static, V: Clone + 'static> SessionStore<K, V> {
    /// The database; an error before `init`.
    fn rocks(&self) -> Result<&super::rocksdb::RocksSegmented> {
        self.rocks.as_ref().ok_or_else(|| not_open(&self.name))
    }

    /// Kafka's session key: the key's bytes, the session end and start.
    fn store_key(&self, key: &OrderedKey<K>, window: &Window) -> Result<Vec<u8>> {
        let mut out = self.order.bytes_of(key)?;
        out.extend_from_slice(&session_suffix(window));
        Ok(out)
    }

    fn decode_value(&self, db: &super::rocksdb::RocksSegmented, bytes: &[u8]) -> Result<V> {
        self.changelog
            .value_serde
            .deserialize(self.order.topic(), bytes)
            .map_err(|e| db.db().corrupt(e.to_string()))
    }

    /// Kafka's `findSessions(keyFrom, keyTo, earliestSessionEndTime,
    /// latestSessionStartTime)` on RocksDB: segment by segment (by session
    /// end), then by key bytes, end and start. An excluded bound (a Rust
    /// range's) is the inclusive one without that key.
    fn persistent_find(
        &self,
        keys: (Bound<OrderedKey<K>>, Bound<OrderedKey<K>>),
        earliest_end: i64,
        latest_start: i64,
        forward: bool,
    ) -> Result<KeyValueIterator<Windowed<K>, V>> {
        let range = self.order.byte_range(&keys)?;
        let db = self.rocks()?;
        let found = match (range.first(), range.last()) {
            (Some(f), Some(t)) if f == t => db.fetch_key(f, earliest_end, latest_start, forward)?,
            (first, last) => db.fetch_keys(first, last, earliest_end, latest_start, forward)?,
        };
        let mut out = Vec::with_capacity(found.len());
        for (store_key, value) in found {
            let key_bytes = KeySchema::Session.key_bytes(&store_key);
            if range.excludes(key_bytes) {
                continue;
            }
            let key = self
                .changelog
                .key_serde
                .deserialize(self.order.topic(), key_bytes)
                .map_err(|e| db.db().corrupt(e.to_string()))?;
            let end = KeySchema::Session.segment_timestamp(&store_key);
            let start = read_i64(&store_key, key_bytes.len() + TIMESTAMP_SIZE).unwrap_or(-1);
            out.push((
                Windowed::new(key, Window::new(start, end)),
                self.decode_value(db, &value)?,
            ));
        }
        Ok(out.into())
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> StateStore for SessionStore<K, V> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> StoreKind {
        StoreKind::Session
    }
    fn store_types(&self) -> String {
        super::key_value_types::<K, V>()
    }
    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let name = self.name.clone();
        self.changelog.init(&name, context);
        self.order.set_topic(context.changelog_topic(&name));
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            // Kafka keeps a segmented store's files in `<task>/<store>`.
            let path = context.state_dir().join(&self.name);
            self.rocks = Some(super::rocksdb::RocksSegmented::open(
                &self.name,
                &path,
                KeySchema::Session,
                self.retention_ms,
                super::rocksdb::default_segment_interval(self.retention_ms),
            )?);
        }
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        #[cfg(feature = "rocksdb")]
        {
            self.rocks = None;
        }
        Ok(())
    }
    fn persistent(&self) -> bool {
        self.persistent
    }
    /// Logs the writes the record cache held, Kafka's caching session
    /// store's flush: per session its latest value (a tombstone for a
    /// removal) at the timestamp of the record that wrote it.
    fn commit(&mut self) -> Result<()> {
        let Some(pending) = &mut self.pending else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        for ((key, window), value, timestamp) in pending.drain() {
            let encoded = self.changelog.encode_raw_with(
                &key.key,
                key.bytes.as_deref(),
                &session_suffix(&window),
                value.as_ref(),
            )?;
            self.changelog.log_raw(encoded, Some(timestamp));
        }
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

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SessionStore<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionStore")
            .field("name", &self.name)
            .field("retention_ms", &self.retention_ms)
            .field("observed_stream_time", &self.observed_stream_time)
            .field("sessions", &self.sessions)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for SessionStore<K, V> {
    type Key = K;
    type Value = V;
    /// How long sessions are kept after they end.
    type Params = Duration;

    fn retention_ms(retention: &Duration) -> Option<i64> {
        i64::try_from(retention.as_millis()).ok()
    }

    fn make(name: &str, retention: &Duration, parts: StoreParts<K, V>) -> Result<Self> {
        let retention_ms = crate::time::millis(*retention, "retention period")?;
        let mut store = SessionStore::new(name, retention_ms, parts.changelog);
        store.caching = parts.caching;
        store.pending = parts.cache.then(PendingWrites::new);
        store.set_persistent(parts.persistent)?;
        Ok(store)
    }
}

/// Builds session stores; see [`Stores::session_store_builder`].
pub type SessionStoreBuilder<K, V> = BuiltInStoreBuilder<SessionStore<K, V>>;

impl Stores {
    /// A builder of in-memory [`SessionStore`]s named `name`, keeping
    /// sessions for `retention` after they end, Kafka's
    /// `sessionStoreBuilder(inMemorySessionStore(..), ..)`.
    pub fn session_store_builder<K, V>(
        name: &str,
        retention: Duration,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> SessionStoreBuilder<K, V>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        BuiltInStoreBuilder::new(
            name,
            retention,
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
        .with_persistent(Some(false))
    }

    /// A builder of [`SessionStore`]s kept in RocksDB (feature
    /// `rocksdb`), Kafka's `sessionStoreBuilder(persistentSessionStore(name,
    /// retention), ..)`: the store's files are under
    /// `<state.dir>/<application.id>/<task>/<name>`, in segments of
    /// `max(retention / 2, 60 s)` by session end, as Kafka's. Reads across
    /// keys go segment by segment (oldest first), then by the keys'
    /// serialized bytes, session end and start, as Kafka's RocksDB store
    /// gives them; `find_sessions_ending_between` is refused, as Kafka's
    /// RocksDB store refuses it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::Stores;
    ///
    /// let builder = Stores::persistent_session_store_builder("visits", Duration::from_secs(60), StringSerde, I64Serde);
    /// # let _ = builder;
    /// ```
    #[cfg(feature = "rocksdb")]
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    pub fn persistent_session_store_builder<K, V>(
        name: &str,
        retention: Duration,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> SessionStoreBuilder<K, V>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        Self::session_store_builder(name, retention, key_serde, value_serde)
            .with_persistent(Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::collector::RecordCollector;
    use crate::serde::{I64Serde, StringSerde};
    use proptest::prelude::*;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    fn store(retention: i64) -> SessionStore<String, i64> {
        SessionStore::new(
            "s",
            retention,
            Changelog::new(Arc::new(StringSerde), Arc::new(I64Serde)),
        )
    }

    fn logged(retention: i64) -> (SessionStore<String, i64>, Rc<RefCell<RecordCollector>>) {
        let produced = Rc::new(RefCell::new(RecordCollector::default()));
        let ctx = StoreContext::new(produced.clone(), Rc::new(Cell::new(3)), "app");
        let mut s = store(retention);
        let _ = s.init(&ctx);
        (s, produced)
    }

    fn w(key: &str, start: i64, end: i64) -> Windowed<String> {
        Windowed::new(key.to_owned(), Window::new(start, end))
    }

    // Kafka's AbstractSessionBytesStoreTest.shouldFindValuesWithinMergingSessionWindowRange.
    #[test]
    fn find_sessions_within_merging_range() -> Result<()> {
        let mut s = store(10_000);
        let key = "a".to_owned();
        s.put(w("a", 0, 0), 1)?;
        s.put(w("a", 1000, 1000), 2)?;
        let found: Vec<_> = s
            .find_sessions(&key, -1, 1000)?
            .map(|(w, v)| (w.window, v))
            .collect();
        assert_eq!(
            found,
            [(Window::new(0, 0), 1), (Window::new(1000, 1000), 2)]
        );
        Ok(())
    }

    // Kafka's AbstractSessionBytesStoreTest.shouldRemove and shouldFetchExactKeys.
    #[test]
    fn remove_and_fetch_exact_keys() -> Result<()> {
        let mut s = store(10_000);
        s.put(w("a", 0, 1000), 1)?;
        s.put(w("a", 1500, 2500), 2)?;
        s.put(w("aa", 0, 10), 3)?;
        s.remove(&w("a", 0, 1000))?;
        let a = "a".to_owned();
        assert_eq!(s.find_sessions(&a, 0, 1000)?.count(), 0);
        let all: Vec<_> = s.fetch(&a)?.map(|(w, v)| (w.window, v)).collect();
        assert_eq!(all, [(Window::new(1500, 2500), 2)]);
        assert_eq!(s.fetch_session("aa", 0, 10)?, Some(3));
        assert_eq!(s.approximate_num_entries(), 2);
        Ok(())
    }

    #[test]
    fn sessions_expire_after_retention() -> Result<()> {
        let mut s = store(10);
        s.put(w("a", 0, 5), 1)?;
        s.put(w("b", 10, 15), 2)?;
        // Stream time 15, retention 10: ends at or before 5 are expired.
        let keys: Vec<_> = s.all()?.map(|(w, _)| w.key).collect();
        assert_eq!(keys, ["b"]);
        assert_eq!(s.fetch_session("a", 0, 5)?, None);
        s.put(w("c", 0, 4), 3)?;
        assert_eq!(s.approximate_num_entries(), 1);
        Ok(())
    }

    #[test]
    fn order_is_end_then_key_then_latest_start_first() -> Result<()> {
        let mut s = store(1000);
        s.put(w("b", 5, 10), 1)?;
        s.put(w("a", 2, 10), 2)?;
        s.put(w("a", 7, 10), 3)?;
        s.put(w("a", 0, 3), 4)?;
        let all: Vec<_> = s.all()?.map(|(w, v)| (w.to_string(), v)).collect();
        assert_eq!(
            all,
            [
                ("[a@0/3]".to_owned(), 4),
                ("[a@7/10]".to_owned(), 3),
                ("[a@2/10]".to_owned(), 2),
                ("[b@5/10]".to_owned(), 1)
            ]
        );
        let a = "a".to_owned();
        let back: Vec<_> = s
            .backward_find_sessions(&a, 0, 100)?
            .map(|(_, v)| v)
            .collect();
        assert_eq!(back, [2, 3, 4]);
        let ending: Vec<_> = s
            .find_sessions_ending_between(4, 10)?
            .map(|(_, v)| v)
            .collect();
        assert_eq!(ending, [3, 2, 1]);
        Ok(())
    }

    #[test]
    fn changelog_uses_kafkas_session_key_and_tombstones() -> Result<()> {
        let (mut s, produced) = logged(100);
        s.put(w("k", 1, 2), 7)?;
        s.remove(&w("k", 1, 2))?;
        let records = produced.borrow().records();
        let key = [&b"k"[..], &2_i64.to_be_bytes(), &1_i64.to_be_bytes()].concat();
        assert_eq!(&*records[0].topic, "app-s-changelog");
        assert_eq!(records[0].record.key.as_deref(), Some(&key[..]));
        assert_eq!(records[0].record.value, Some(7_i64.to_be_bytes().to_vec()));
        assert_eq!(records[0].record.timestamp, 3);
        assert_eq!(records[1].record.key.as_deref(), Some(&key[..]));
        assert_eq!(records[1].record.value, None);
        Ok(())
    }

    /// Kafka's RocksDB session store refuses `findSessions(earliestEnd,
    /// latestEnd)` (UnsupportedOperationException); so does ours, naming
    /// the store and what to call instead. It keeps its files in
    /// `<task>/<store>`, and reads them back when opened again.
    #[cfg(feature = "rocksdb")]
    #[test]
    fn a_persistent_store_refuses_find_sessions_ending_between() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("session-rocks-{}", std::process::id()));
        let ctx = StoreContext::new(
            Rc::new(RefCell::new(RecordCollector::default())),
            Rc::new(Cell::new(3)),
            "app",
        )
        .with_state_dir(dir.clone());
        let mut s = store(1_000);
        s.set_persistent(true)?;
        s.init(&ctx)?;
        s.put(w("a", 0, 5), 1)?;
        let err = s.find_sessions_ending_between(0, 10).err();
        assert!(
            matches!(&err, Some(StreamsError::StoreOperationNotSupported { store, operation: "find_sessions_ending_between", .. }) if store == "s"),
            "{err:?}"
        );
        assert!(dir.join("s").is_dir());
        s.close()?;
        let mut again = store(1_000);
        again.set_persistent(true)?;
        again.init(&ctx)?;
        assert_eq!(again.fetch_session("a", 0, 5)?, Some(1));
        again.close()?;
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn restore_rejects_short_keys() {
        let mut s = store(100);
        let short = RawRecord::new(Some(vec![0; 15]), Some(vec![0; 8]), 0);
        assert!(matches!(
            s.restore([&short]),
            Err(crate::StreamsError::InvalidChangelogRecord { offset: 0, .. })
        ));
    }

    proptest! {
        /// For any puts and removes, a session store restored from its
        /// changelog equals the original.
        #[test]
        fn restored_from_changelog_equals_original(
            ops in proptest::collection::vec((0..3_u8, 0..40_i64, 0..10_i64, any::<i64>(), any::<bool>()), 0..50),
            retention in 5..60_i64,
        ) {
            let (mut original, produced) = logged(retention);
            for (key, start, len, value, remove) in &ops {
                let session = w(&format!("k{key}"), *start, start + len);
                let result = if *remove { original.remove(&session) } else { original.put(session, *value) };
                result.map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let raw: Vec<RawRecord> = produced.borrow().records().iter().map(|p| p.record.clone()).collect();
            let mut restored = store(retention);
            restored.restore(&raw).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let fail = |e: crate::StreamsError| TestCaseError::fail(e.to_string());
            let a: Vec<_> = original.all().map_err(fail)?.collect();
            let b: Vec<_> = restored.all().map_err(fail)?.collect();
            prop_assert_eq!(a, b);
        }
    }
}
