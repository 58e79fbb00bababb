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
//! let found: Vec<_> = store.find_sessions(&"alice".to_string(), 5, 45).map(|(w, v)| (w.window, *v)).collect();
//! assert_eq!(found, [(Window::new(0, 10), 2), (Window::new(40, 50), 1)]);
//! store.remove(&alice(0, 10))?;
//! assert_eq!(store.fetch(&"alice".to_string()).count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::window::bad_changelog_key;
use super::{
    BuiltInStoreBuilder, Changelog, MakeStore, StateStore, StoreContext, StoreKind, StoreParts,
    Stores,
};
use crate::error::Result;
use crate::record::RawRecord;
use crate::serde::Serde;
use crate::time::read_i64;
use crate::time::{Window, Windowed};

const TIMESTAMP_SIZE: usize = 8;

/// Session end -> key -> session start -> value.
type Sessions<K, V> = BTreeMap<i64, BTreeMap<K, BTreeMap<i64, V>>>;

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
/// changelog.
pub struct SessionStore<K, V> {
    name: String,
    retention_ms: i64,
    sessions: Sessions<K, V>,
    observed_stream_time: i64,
    changelog: Changelog<K, V>,
    /// Whether the DSL operator writing it keeps Kafka's record cache in
    /// front of it (see `crate::dsl::cache`).
    pub(crate) caching: bool,
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
            changelog,
            caching: false,
        }
    }

    /// Puts without writing the changelog (the record cache writes it at
    /// its flush, [`SessionStore::log_value`]).
    pub(crate) fn put_unlogged(&mut self, session: Windowed<K>, value: V) {
        self.apply(session, Some(value));
    }

    /// Removes without writing the changelog.
    pub(crate) fn remove_unlogged(&mut self, session: &Windowed<K>) {
        self.remove_entry(session);
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
        let encoded = self.changelog.encode_raw(
            &session.key,
            &session_suffix(&session.window),
            Some(&value),
        )?;
        self.apply(session, Some(value));
        self.changelog.log_raw(encoded, None);
        Ok(())
    }

    /// Removes the session `session` and writes a tombstone for it, Kafka's
    /// `remove(sessionKey)`.
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn remove(&mut self, session: &Windowed<K>) -> Result<()> {
        let encoded =
            self.changelog
                .encode_raw(&session.key, &session_suffix(&session.window), None)?;
        self.remove_entry(session);
        self.changelog.log_raw(encoded, None);
        Ok(())
    }

    fn remove_entry(&mut self, session: &Windowed<K>) {
        let end = session.window.end;
        let Some(keys) = self.sessions.get_mut(&end) else {
            return;
        };
        let Some(starts) = keys.get_mut(&session.key) else {
            return;
        };
        starts.remove(&session.window.start);
        if starts.is_empty() {
            keys.remove(&session.key);
            if keys.is_empty() {
                self.sessions.remove(&end);
            }
        }
    }

    /// Kafka's `InMemorySessionStore.put`, without logging.
    fn apply(&mut self, session: Windowed<K>, value: Option<V>) {
        let end = session.window.end;
        self.observed_stream_time = self.observed_stream_time.max(end);
        if end > self.expired_up_to() {
            match value {
                Some(v) => {
                    self.sessions
                        .entry(end)
                        .or_default()
                        .entry(session.key)
                        .or_default()
                        .insert(session.window.start, v);
                }
                None => self.remove_entry(&session),
            }
        }
        let min_live = self.min_live_end().max(0);
        self.sessions = self.sessions.split_off(&min_live);
    }

    /// The live sessions whose end is at or after `earliest_end`, by end.
    fn ends_from(
        &self,
        earliest_end: i64,
    ) -> impl DoubleEndedIterator<Item = (&i64, &BTreeMap<K, BTreeMap<i64, V>>)> {
        let from = earliest_end.max(self.min_live_end());
        self.sessions.range(from..)
    }

    /// The value of exactly this session, Kafka's `fetchSession(key,
    /// start, end)`.
    pub fn fetch_session(&self, key: &K, start: i64, end: i64) -> Option<&V> {
        if end <= self.expired_up_to() {
            return None;
        }
        self.sessions.get(&end)?.get(key)?.get(&start)
    }

    /// The sessions of `key` that end at or after `earliest_session_end`
    /// and start at or before `latest_session_start`, Kafka's
    /// `findSessions`: by session end, then (within one end) latest start
    /// first, as Kafka's in-memory store returns them. These are the
    /// sessions a record could merge with.
    pub fn find_sessions<'a>(
        &'a self,
        key: &'a K,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> impl Iterator<Item = (Windowed<K>, &'a V)> + 'a {
        self.ends_from(earliest_session_end)
            .flat_map(move |(&end, keys)| {
                keys.get(key).into_iter().flat_map(move |starts| {
                    starts
                        .range(..=latest_session_start)
                        .rev()
                        .map(move |(&start, v)| {
                            (Windowed::new(key.clone(), Window::new(start, end)), v)
                        })
                })
            })
    }

    /// As [`SessionStore::find_sessions`], latest end first (and within one
    /// end, earliest start first), Kafka's `backwardFindSessions`.
    pub fn backward_find_sessions<'a>(
        &'a self,
        key: &'a K,
        earliest_session_end: i64,
        latest_session_start: i64,
    ) -> impl Iterator<Item = (Windowed<K>, &'a V)> + 'a {
        self.ends_from(earliest_session_end)
            .rev()
            .flat_map(move |(&end, keys)| {
                keys.get(key).into_iter().flat_map(move |starts| {
                    starts
                        .range(..=latest_session_start)
                        .map(move |(&start, v)| {
                            (Windowed::new(key.clone(), Window::new(start, end)), v)
                        })
                })
            })
    }

    /// Every key's sessions that end between `earliest_session_end` and
    /// `latest_session_end` (inclusive), by end then key, Kafka's
    /// `findSessions(earliestSessionEndTime, latestSessionEndTime)`.
    pub fn find_sessions_ending_between(
        &self,
        earliest_session_end: i64,
        latest_session_end: i64,
    ) -> impl Iterator<Item = (Windowed<K>, &V)> {
        self.ends_from(earliest_session_end)
            .take_while(move |(end, _)| **end <= latest_session_end)
            .flat_map(|(&end, keys)| {
                keys.iter().flat_map(move |(k, starts)| {
                    starts.iter().rev().map(move |(&start, v)| {
                        (Windowed::new(k.clone(), Window::new(start, end)), v)
                    })
                })
            })
    }

    /// Every live session of `key`, Kafka's `fetch(key)`.
    pub fn fetch<'a>(&'a self, key: &'a K) -> impl Iterator<Item = (Windowed<K>, &'a V)> + 'a {
        self.find_sessions(key, i64::MIN, i64::MAX)
    }

    /// Every live session, by end then key.
    pub fn all(&self) -> impl Iterator<Item = (Windowed<K>, &V)> {
        self.find_sessions_ending_between(i64::MIN, i64::MAX)
    }

    /// How many live sessions there are.
    pub fn approximate_num_entries(&self) -> u64 {
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
            let k = self.changelog.decode_key(&topic, offset, &key[..key_len])?;
            let session = Windowed::new(k, Window::new(start, end));
            match &record.value {
                Some(bytes) => {
                    let value = self.changelog.decode_value(&topic, offset, bytes)?;
                    self.apply(session, Some(value));
                }
                // A removal, as the live store did it: without moving
                // stream time (Kafka's restore replays it as a put of
                // null, which does).
                None => self.remove_entry(&session),
            }
        }
        Ok(())
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> StateStore for SessionStore<K, V> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> StoreKind {
        StoreKind::Session
    }
    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let name = self.name.clone();
        self.changelog.init(&name, context);
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
            .find_sessions(&key, -1, 1000)
            .map(|(w, v)| (w.window, *v))
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
        assert_eq!(s.find_sessions(&a, 0, 1000).count(), 0);
        let all: Vec<_> = s.fetch(&a).map(|(w, v)| (w.window, *v)).collect();
        assert_eq!(all, [(Window::new(1500, 2500), 2)]);
        assert_eq!(s.fetch_session(&"aa".to_owned(), 0, 10), Some(&3));
        assert_eq!(s.approximate_num_entries(), 2);
        Ok(())
    }

    #[test]
    fn sessions_expire_after_retention() -> Result<()> {
        let mut s = store(10);
        s.put(w("a", 0, 5), 1)?;
        s.put(w("b", 10, 15), 2)?;
        // Stream time 15, retention 10: ends at or before 5 are expired.
        let keys: Vec<_> = s.all().map(|(w, _)| w.key).collect();
        assert_eq!(keys, ["b"]);
        assert_eq!(s.fetch_session(&"a".to_owned(), 0, 5), None);
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
        let all: Vec<_> = s.all().map(|(w, v)| (w.to_string(), *v)).collect();
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
            .backward_find_sessions(&a, 0, 100)
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(back, [2, 3, 4]);
        let ending: Vec<_> = s
            .find_sessions_ending_between(4, 10)
            .map(|(_, v)| *v)
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
            let a: Vec<_> = original.all().map(|(w, v)| (w, *v)).collect();
            let b: Vec<_> = restored.all().map(|(w, v)| (w, *v)).collect();
            prop_assert_eq!(a, b);
        }
    }
}
