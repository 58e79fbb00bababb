//! In-memory window stores, plain and timestamped, Kafka's
//! `InMemoryWindowStore`.
//!
//! A window store keeps one value per key and *window start*. It keeps
//! records for its *retention period*: the store tracks its own stream
//! time, the largest window start put so far, and a window whose start is
//! at or before `stream time - retention` is expired: puts for it are
//! ignored and reads no longer see it. With `retain_duplicates` (as for
//! the windows of a stream-stream join) every put adds a new entry, told
//! apart by a sequence number, and a delete does nothing.
//!
//! Each change is written to the changelog with Kafka's binary key: the
//! key's bytes, the window start as 8 bytes big-endian and a sequence
//! number as 4 bytes big-endian (0 unless duplicates are retained); a
//! delete writes a tombstone. [`WindowStore::restore`] replays a changelog.
//!
//! Within one window start, keys are in Kafka's order, by their
//! serialized bytes (see [`key_value`](super::KeyValueStore)), as Kafka's
//! in-memory window store orders them.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_core::state::{StoreKind, Stores, WindowStore};
//! use streams_core::StreamsConfig;
//!
//! let builder = Stores::window_store_builder(
//!     "clicks",
//!     Duration::from_millis(100),
//!     Duration::from_millis(10),
//!     false,
//!     StringSerde,
//!     I64Serde,
//! );
//! let mut boxed = streams_core::state::StoreBuilder::build(&builder, &StreamsConfig::default())?;
//! assert_eq!(boxed.kind(), StoreKind::Window);
//! let store = boxed.as_any_mut().downcast_mut::<WindowStore<String, i64>>().ok_or("type")?;
//! store.put("a".into(), 1, 0)?;
//! store.put("a".into(), 2, 10)?;
//! store.put("b".into(), 3, 10)?;
//! let a: Vec<_> = store.fetch("a", 0..=10)?.collect();
//! assert_eq!(a, [(0, 1), (10, 2)]);
//! // Stream time 150: windows starting at or before 50 have expired.
//! store.put("a".into(), 4, 150)?;
//! assert_eq!(store.fetch("a", 0..=200)?.count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::Duration;

use super::key_order::{KeyOrder, OrderedKey, empty_range, owned_bound};
use super::{
    BuiltInStoreBuilder, Changelog, KeyValueIterator, MakeStore, PendingWrites, StateStore,
    StoreContext, StoreKind, StoreParts, Stores, ValueAndTimestamp,
};
use crate::error::{RecordPart, Result, StreamsError};
use crate::record::{RawRecord, Record};
use crate::serde::Serde;
use crate::time::{Window, Windowed};

#[cfg(feature = "rocksdb")]
use super::key_value::not_open;
#[cfg(feature = "rocksdb")]
use super::rocksdb::KeySchema;

const SEQNUM_SIZE: usize = 4;
const TIMESTAMP_SIZE: usize = 8;

/// Changelog writing with raw keys, shared by the window and session stores.
impl<K: 'static, V: 'static> Changelog<K, V> {
    /// The changelog topic, or a name for errors when logging is off.
    pub(crate) fn topic_or(&self, store: &str) -> String {
        match &self.sink {
            Some((t, _)) => t.to_string(),
            None => format!("{store}-changelog"),
        }
    }

    pub(crate) fn value_bytes(&self, topic: &str, value: &V) -> Result<Vec<u8>> {
        self.value_serde
            .serialize(topic, value)
            .map_err(|reason| StreamsError::Serialization {
                topic: topic.to_owned(),
                node: None,
                part: RecordPart::Value,
                reason,
            })
    }

    /// The key and value bytes of a change, when the store logs; `suffix`
    /// is appended to the key's bytes.
    pub(crate) fn encode_raw(
        &self,
        key: &K,
        suffix: &[u8],
        value: Option<&V>,
    ) -> Result<Option<(Vec<u8>, Option<Vec<u8>>)>> {
        let Some((topic, _)) = &self.sink else {
            return Ok(None);
        };
        let mut key_bytes = self.key_bytes(topic, key)?;
        key_bytes.extend_from_slice(suffix);
        let value = value.map(|v| self.value_bytes(topic, v)).transpose()?;
        Ok(Some((key_bytes, value)))
    }

    /// As [`Changelog::encode_raw`], with the key's bytes when the caller
    /// has them already.
    pub(crate) fn encode_raw_with(
        &self,
        key: &K,
        key_bytes: Option<&[u8]>,
        suffix: &[u8],
        value: Option<&V>,
    ) -> Result<Option<(Vec<u8>, Option<Vec<u8>>)>> {
        let Some(bytes) = key_bytes else {
            return self.encode_raw(key, suffix, value);
        };
        let Some((topic, _)) = &self.sink else {
            return Ok(None);
        };
        let mut key_bytes = Vec::with_capacity(bytes.len() + suffix.len());
        key_bytes.extend_from_slice(bytes);
        key_bytes.extend_from_slice(suffix);
        let value = value.map(|v| self.value_bytes(topic, v)).transpose()?;
        Ok(Some((key_bytes, value)))
    }

    /// Writes an encoded change at `timestamp`, or at the current record's.
    pub(crate) fn log_raw(
        &self,
        encoded: Option<(Vec<u8>, Option<Vec<u8>>)>,
        timestamp: Option<i64>,
    ) {
        if let (Some((topic, ctx)), Some((key, value))) = (&self.sink, encoded) {
            let ts = timestamp.unwrap_or_else(|| ctx.timestamp());
            ctx.log(topic, Record::new(Some(key), value, ts));
        }
    }
}

/// The inclusive bounds of a time range; `None` when it is empty.
pub(crate) fn time_bounds(range: impl RangeBounds<i64>) -> Option<(i64, i64)> {
    let lo = match range.start_bound() {
        Bound::Included(&x) => x,
        Bound::Excluded(&x) => x.checked_add(1)?,
        Bound::Unbounded => i64::MIN,
    };
    let hi = match range.end_bound() {
        Bound::Included(&x) => x,
        Bound::Excluded(&x) => x.checked_sub(1)?,
        Bound::Unbounded => i64::MAX,
    };
    (lo <= hi).then_some((lo, hi))
}

/// An error for a changelog record that cannot be a window or session
/// store record.
pub(crate) fn bad_changelog_key(
    store: &str,
    topic: &str,
    offset: i64,
    reason: &'static str,
) -> StreamsError {
    StreamsError::InvalidChangelogRecord {
        store: store.to_owned(),
        topic: topic.to_owned(),
        offset,
        reason,
    }
}

/// The shared body of both window stores: `S` is what the store holds, `V`
/// what the changelog carries.
struct WindowCore<K, S, V> {
    name: String,
    retention_ms: i64,
    window_size_ms: i64,
    retain_duplicates: bool,
    /// Window start -> (key in Kafka's order, sequence number) -> value.
    segments: BTreeMap<i64, BTreeMap<(OrderedKey<K>, u32), S>>,
    observed_stream_time: i64,
    seqnum: u32,
    order: KeyOrder<K>,
    changelog: Changelog<K, V>,
    to_log: fn(&S) -> (&V, Option<i64>),
    from_log: fn(V, i64) -> S,
    /// Kafka's record cache of a Processor API store (`super::store_cache`):
    /// the writes the next commit logs, by key and window start.
    pending: Option<PendingWrites<(OrderedKey<K>, i64), S>>,
    /// Whether a stored value has a timestamp (kept in RocksDB before the
    /// value, as Kafka's timestamped stores write it).
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    timestamped: bool,
    /// Whether the store keeps its entries in RocksDB, in segments (opened
    /// at `init`).
    persistent: bool,
    #[cfg(feature = "rocksdb")]
    rocks: Option<super::rocksdb::RocksSegmented>,
}

/// Entries of a window store as reads return them: `(window start,
/// value)` for one key, `(windowed key, value)` across keys.
type ByStart<S> = Vec<(i64, S)>;
type ByWindow<K, S> = Vec<(Windowed<K>, S)>;

impl<K: Ord + Clone + 'static, S: Clone, V: 'static> WindowCore<K, S, V> {
    /// Window starts at or before this have expired.
    fn expired_up_to(&self) -> i64 {
        self.observed_stream_time.saturating_sub(self.retention_ms)
    }

    /// The earliest live window start.
    fn min_live(&self) -> i64 {
        self.expired_up_to().saturating_add(1)
    }

    fn next_seqnum(&mut self) -> u32 {
        if self.retain_duplicates {
            self.seqnum = (self.seqnum + 1) & 0x7FFF_FFFF;
            self.seqnum
        } else {
            0
        }
    }

    fn put(&mut self, key: K, value: Option<S>, window_start: i64) -> Result<()> {
        let seqnum = if self.retain_duplicates {
            (self.seqnum + 1) & 0x7FFF_FFFF
        } else {
            0
        };
        let mut suffix = [0_u8; TIMESTAMP_SIZE + SEQNUM_SIZE];
        suffix[..TIMESTAMP_SIZE].copy_from_slice(&window_start.to_be_bytes());
        suffix[TIMESTAMP_SIZE..].copy_from_slice(&seqnum.to_be_bytes());
        let key = self.order.ordered(key)?;
        if let (Some(pending), Some((_, ctx))) = (&mut self.pending, &self.changelog.sink) {
            // Cached (never with duplicates): logged at the commit.
            self.changelog
                .check_timestamp(value.as_ref().and_then(|s| (self.to_log)(s).1))?;
            pending.write((key.clone(), window_start), value.clone(), ctx.timestamp());
            return self.apply(key, value, window_start, 0);
        }
        let logged = value.as_ref().map(|s| (self.to_log)(s));
        let encoded = self.changelog.encode_raw_with(
            &key.key,
            key.bytes.as_deref(),
            &suffix,
            logged.map(|(v, _)| v),
        )?;
        let timestamp = logged.and_then(|(_, ts)| ts);
        self.changelog.check_timestamp(timestamp)?;
        let seqnum = self.next_seqnum();
        self.apply(key, value, window_start, seqnum)?;
        self.changelog.log_raw(encoded, timestamp);
        Ok(())
    }

    /// Logs the writes the record cache held, Kafka's caching window
    /// store's flush: per key and window its latest value (a tombstone for
    /// a delete) at the timestamp of the record that wrote it (a
    /// timestamped value at its own), whether or not the window has
    /// expired since, in the order of the latest writes.
    fn commit(&mut self) -> Result<()> {
        let Some(pending) = &mut self.pending else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        for ((key, window_start), value, timestamp) in pending.drain() {
            let mut suffix = [0_u8; TIMESTAMP_SIZE + SEQNUM_SIZE];
            suffix[..TIMESTAMP_SIZE].copy_from_slice(&window_start.to_be_bytes());
            let logged = value.as_ref().map(|s| (self.to_log)(s));
            let encoded = self.changelog.encode_raw_with(
                &key.key,
                key.bytes.as_deref(),
                &suffix,
                logged.map(|(v, _)| v),
            )?;
            let at = logged.and_then(|(_, ts)| ts).unwrap_or(timestamp);
            self.changelog.log_raw(encoded, Some(at));
        }
        Ok(())
    }

    /// Kafka's `InMemoryWindowStore.put` (or `RocksDBWindowStore.put`),
    /// without logging.
    fn apply(
        &mut self,
        key: OrderedKey<K>,
        value: Option<S>,
        window_start: i64,
        seqnum: u32,
    ) -> Result<()> {
        self.observed_stream_time = self.observed_stream_time.max(window_start);
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            if value.is_none() && self.retain_duplicates {
                return Ok(());
            }
            let store_key = self.store_key(&key, window_start, seqnum)?;
            let bytes = value.as_ref().map(|s| self.encode(s)).transpose()?;
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            db.put(&store_key, bytes.as_deref())?;
            return Ok(());
        }
        if window_start > self.expired_up_to() {
            match value {
                Some(v) => {
                    self.segments
                        .entry(window_start)
                        .or_default()
                        .insert((key, seqnum), v);
                }
                // A delete is a no-op when duplicates are retained.
                None if !self.retain_duplicates => {
                    if let Some(segment) = self.segments.get_mut(&window_start) {
                        segment.remove(&(key, 0));
                        if segment.is_empty() {
                            self.segments.remove(&window_start);
                        }
                    }
                }
                None => {}
            }
        }
        // Kafka keeps segments from max(0, stream time - retention + 1).
        let min_live = self.min_live().max(0);
        self.segments = self.segments.split_off(&min_live);
        Ok(())
    }

    fn get(&self, key: &OrderedKey<K>, window_start: i64) -> Result<Option<S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let store_key = self.store_key(key, window_start, 0)?;
            let db = self.rocks()?;
            return db.get(&store_key)?.map(|b| self.decode(db, &b)).transpose();
        }
        if window_start <= self.expired_up_to() {
            return Ok(None);
        }
        Ok(self
            .segments
            .get(&window_start)
            .and_then(|segment| segment.get(&(key.clone(), 0)))
            .cloned())
    }

    fn segments_in(
        &self,
        bounds: Option<(i64, i64)>,
    ) -> impl DoubleEndedIterator<Item = (&i64, &BTreeMap<(OrderedKey<K>, u32), S>)> {
        let bounds = bounds
            .map(|(lo, hi)| (lo.max(self.min_live()), hi))
            .filter(|(lo, hi)| lo <= hi);
        bounds
            .map(|(lo, hi)| self.segments.range(lo..=hi))
            .into_iter()
            .flatten()
    }

    /// The values of `key` in the windows starting within `bounds`, by
    /// start (and sequence number).
    fn fetch(&self, key: &OrderedKey<K>, bounds: Option<(i64, i64)>) -> Result<ByStart<S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let Some((lo, hi)) = bounds else {
                return Ok(Vec::new());
            };
            let key_bytes = self.order.bytes_of(key)?;
            let db = self.rocks()?;
            let mut out = Vec::new();
            for (store_key, value) in db.fetch_key(&key_bytes, lo, hi, true)? {
                let start = KeySchema::Window.segment_timestamp(&store_key);
                out.push((start, self.decode(db, &value)?));
            }
            return Ok(out);
        }
        let (from, to) = ((key.clone(), 0), (key.clone(), u32::MAX));
        Ok(self
            .segments_in(bounds)
            .flat_map(|(&start, segment)| {
                segment
                    .range(from.clone()..=to.clone())
                    .map(move |(_, v)| (start, v.clone()))
            })
            .collect())
    }

    fn windowed(&self, start: i64, key: &K) -> Windowed<K> {
        Windowed::new(key.clone(), Window::of_size(start, self.window_size_ms))
    }

    /// The entries of the keys within `keys` in the windows starting
    /// within `bounds`, by window start, then key in Kafka's order, as
    /// Kafka's in-memory store gives them.
    fn fetch_range(
        &self,
        keys: (Bound<OrderedKey<K>>, Bound<OrderedKey<K>>),
        bounds: Option<(i64, i64)>,
    ) -> Result<ByWindow<K, S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self.persistent_fetch_range(keys, bounds);
        }
        if empty_range(keys.0.as_ref(), keys.1.as_ref()) {
            return Ok(Vec::new());
        }
        let start = match keys.0 {
            Bound::Included(k) => Bound::Included((k, 0)),
            Bound::Excluded(k) => Bound::Excluded((k, u32::MAX)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let end = match keys.1 {
            Bound::Included(k) => Bound::Included((k, u32::MAX)),
            Bound::Excluded(k) => Bound::Excluded((k, 0)),
            Bound::Unbounded => Bound::Unbounded,
        };
        Ok(self
            .segments_in(bounds)
            .flat_map(|(&window_start, segment)| {
                segment
                    .range((start.clone(), end.clone()))
                    .map(move |((k, _), v)| (self.windowed(window_start, &k.key), v.clone()))
            })
            .collect())
    }

    /// Every key's entries in the windows starting within `bounds`: by
    /// window start, then key in memory; segment by segment, then by key
    /// bytes and window start in RocksDB, as Kafka's stores give them.
    fn fetch_all(&self, bounds: Option<(i64, i64)>) -> Result<ByWindow<K, S>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let Some((lo, hi)) = bounds else {
                return Ok(Vec::new());
            };
            let db = self.rocks()?;
            return db
                .fetch_all(lo, hi, true)?
                .iter()
                .map(|(k, v)| self.decode_entry(db, k, v))
                .collect();
        }
        self.fetch_range((Bound::Unbounded, Bound::Unbounded), bounds)
    }

    fn len(&self) -> usize {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            return self
                .fetch_all(Some((0, i64::MAX)))
                .map_or(0, |all| all.len());
        }
        self.segments_in(Some((i64::MIN, i64::MAX)))
            .map(|(_, s)| s.len())
            .sum()
    }

    fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.changelog.topic_or(&self.name);
        for (offset, record) in records.into_iter().enumerate() {
            let offset = offset as i64;
            let Some(key) = &record.key else {
                return Err(bad_changelog_key(&self.name, &topic, offset, "has no key"));
            };
            let Some(key_len) = key.len().checked_sub(TIMESTAMP_SIZE + SEQNUM_SIZE) else {
                return Err(bad_changelog_key(
                    &self.name,
                    &topic,
                    offset,
                    "has a key too short for a window store (key, 8-byte window start, 4-byte sequence number)",
                ));
            };
            let start = crate::time::read_i64(key, key_len).unwrap_or_default();
            let mut seq = [0_u8; SEQNUM_SIZE];
            seq.copy_from_slice(&key[key_len + TIMESTAMP_SIZE..]);
            let seqnum = u32::from_be_bytes(seq);
            let k = OrderedKey {
                key: self.changelog.decode_key(&topic, offset, &key[..key_len])?,
                bytes: self.order.by_bytes().then(|| key[..key_len].into()),
            };
            let value = match &record.value {
                Some(bytes) => {
                    let v = self.changelog.decode_value(&topic, offset, bytes)?;
                    Some((self.from_log)(v, record.timestamp))
                }
                None => None,
            };
            if self.retain_duplicates {
                self.seqnum = self.seqnum.max(seqnum);
            }
            self.apply(k, value, start, seqnum)?;
        }
        Ok(())
    }
}

macro_rules! window_store_common {
    ($store:ident, $stored:ty, $kind:expr) => {
        impl<K: Ord + Clone + 'static, V: Clone + 'static> $store<K, V> {
            /// The store's name.
            pub fn name(&self) -> &str {
                &self.core.name
            }

            /// The value of `key` (in any borrowed form of the key type)
            /// in the window starting at `window_start`, Kafka's
            /// `fetch(key, time)`; `None` once the window expired. (With
            /// retained duplicates, the first of them.)
            ///
            /// # Errors
            /// The key serde failed (a store ordering keys by their bytes
            /// serializes the key to find it).
            pub fn get<Q>(&self, key: &Q, window_start: i64) -> Result<Option<$stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                let key = self.core.order.ordered(key.to_owned())?;
                if self.core.retain_duplicates {
                    return Ok(self
                        .core
                        .fetch(&key, Some((window_start, window_start)))?
                        .into_iter()
                        .next()
                        .map(|(_, v)| v));
                }
                self.core.get(&key, window_start)
            }

            /// The values of `key` in the windows starting in `range` (for
            /// example `from..=to`, as Kafka's inclusive `fetch(key, from,
            /// to)`), by window start.
            ///
            /// # Errors
            /// The key serde failed.
            pub fn fetch<Q>(
                &self,
                key: &Q,
                range: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<i64, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                let key = self.core.order.ordered(key.to_owned())?;
                Ok(self.core.fetch(&key, time_bounds(range))?.into())
            }

            /// As [`fetch`](Self::fetch), latest window first, Kafka's
            /// `backwardFetch(key, from, to)`.
            ///
            /// # Errors
            /// The key serde failed.
            pub fn backward_fetch<Q>(
                &self,
                key: &Q,
                range: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<i64, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                let mut found = self.fetch(key, range)?.collect::<Vec<_>>();
                found.reverse();
                Ok(found.into())
            }

            /// The entries of the keys in `keys` in the windows starting in
            /// `times`, by window start, then key in Kafka's order (by the
            /// keys' serialized bytes), Kafka's `fetch(keyFrom, keyTo,
            /// timeFrom, timeTo)`. Keys whose bytes start after the end's
            /// give nothing, as in Kafka.
            ///
            /// # Errors
            /// The key serde failed.
            pub fn fetch_range<Q, R>(
                &self,
                keys: R,
                times: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<Windowed<K>, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
                R: RangeBounds<Q>,
            {
                let order = &self.core.order;
                let keys = (
                    order.bound(owned_bound(keys.start_bound()))?,
                    order.bound(owned_bound(keys.end_bound()))?,
                );
                Ok(self.core.fetch_range(keys, time_bounds(times))?.into())
            }

            /// As [`fetch_range`](Self::fetch_range), in the reverse
            /// order, Kafka's `backwardFetch(keyFrom, keyTo, timeFrom,
            /// timeTo)`.
            ///
            /// # Errors
            /// The key serde failed.
            pub fn backward_fetch_range<Q, R>(
                &self,
                keys: R,
                times: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<Windowed<K>, $stored>>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
                R: RangeBounds<Q>,
            {
                let mut found = self.fetch_range(keys, times)?.collect::<Vec<_>>();
                found.reverse();
                Ok(found.into())
            }

            /// Every key's values in the windows starting in `range`, by
            /// window start, then key in Kafka's order, Kafka's
            /// `fetchAll(from, to)`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn fetch_all(
                &self,
                range: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<Windowed<K>, $stored>> {
                Ok(self.core.fetch_all(time_bounds(range))?.into())
            }

            /// As [`fetch_all`](Self::fetch_all), in the reverse order,
            /// Kafka's `backwardFetchAll(from, to)`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn backward_fetch_all(
                &self,
                range: impl RangeBounds<i64>,
            ) -> Result<KeyValueIterator<Windowed<K>, $stored>> {
                let mut found = self.core.fetch_all(time_bounds(range))?;
                found.reverse();
                Ok(found.into())
            }

            /// Every live entry, by window start, then key in Kafka's
            /// order, Kafka's `all()`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn all(&self) -> Result<KeyValueIterator<Windowed<K>, $stored>> {
                if self.core.persistent {
                    // Kafka's RocksDB store reads from window start 0 on.
                    return self.fetch_all(0..);
                }
                self.fetch_all(..)
            }

            /// Every live entry, in the reverse order, Kafka's
            /// `backwardAll()`.
            ///
            /// # Errors
            /// None for a store in memory.
            pub fn backward_all(&self) -> Result<KeyValueIterator<Windowed<K>, $stored>> {
                if self.core.persistent {
                    return self.backward_fetch_all(0..);
                }
                self.backward_fetch_all(..)
            }

            /// Removes the value of `key` in the window at `window_start`
            /// and writes a tombstone, as Kafka's `put(key, null, start)`; a
            /// no-op (still logged) when duplicates are retained.
            ///
            /// # Errors
            /// The changelog serde failed.
            pub fn delete<Q>(&mut self, key: &Q, window_start: i64) -> Result<()>
            where
                K: std::borrow::Borrow<Q>,
                Q: Ord + ToOwned<Owned = K> + ?Sized,
            {
                self.core.put(key.to_owned(), None, window_start)
            }

            /// How many live entries there are.
            pub fn approximate_num_entries(&self) -> u64 {
                self.core.len() as u64
            }

            /// Whether there is no live entry.
            pub fn is_empty(&self) -> bool {
                self.core.len() == 0
            }

            /// The store's stream time: the largest window start put, or
            /// `-1` before the first put.
            pub fn observed_stream_time(&self) -> i64 {
                self.core.observed_stream_time
            }

            /// The retention period, in milliseconds.
            pub fn retention_ms(&self) -> i64 {
                self.core.retention_ms
            }

            /// The window size, in milliseconds: a window's end is its
            /// start plus this.
            pub fn window_size_ms(&self) -> i64 {
                self.core.window_size_ms
            }

            /// Whether every put is kept, even for the same key and window.
            pub fn retains_duplicates(&self) -> bool {
                self.core.retain_duplicates
            }

            /// Whether the store writes a changelog.
            pub fn logging_enabled(&self) -> bool {
                self.core.changelog.enabled
            }

            /// Replays changelog records (in offset order) into the store,
            /// as a put each (a tombstone deletes), with the same expiry as
            /// live puts. Nothing is written to the changelog.
            ///
            /// # Errors
            /// A record without a key, a key too short for a window store
            /// key, or bytes the serdes cannot decode (named by changelog
            /// topic and offset).
            pub fn restore<'a>(
                &mut self,
                records: impl IntoIterator<Item = &'a RawRecord>,
            ) -> Result<()> {
                self.core.restore(records)
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

        impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for $store<K, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($store))
                    .field("name", &self.core.name)
                    .field("retention_ms", &self.core.retention_ms)
                    .field("window_size_ms", &self.core.window_size_ms)
                    .field("observed_stream_time", &self.core.observed_stream_time)
                    .field("segments", &self.core.segments)
                    .finish()
            }
        }
    };
}

/// The settings of a window store once checked (by [`window_params`], or
/// by the DSL operator that keeps the store), in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowParams {
    pub(crate) retention_ms: i64,
    pub(crate) window_size_ms: i64,
    pub(crate) retain_duplicates: bool,
}

impl<K: Ord + Clone + 'static, S: Clone, V: 'static> WindowCore<K, S, V> {
    fn new(
        name: &str,
        params: WindowParams,
        changelog: Changelog<K, V>,
        to_log: fn(&S) -> (&V, Option<i64>),
        from_log: fn(V, i64) -> S,
    ) -> Self {
        WindowCore {
            name: name.to_owned(),
            retention_ms: params.retention_ms,
            window_size_ms: params.window_size_ms,
            retain_duplicates: params.retain_duplicates,
            segments: BTreeMap::new(),
            observed_stream_time: -1,
            seqnum: 0,
            order: KeyOrder::new(changelog.key_serde.clone(), format!("{name}-changelog")),
            changelog,
            to_log,
            from_log,
            pending: None,
            timestamped: false,
            persistent: false,
            #[cfg(feature = "rocksdb")]
            rocks: None,
        }
    }

    /// A store whose values carry timestamps.
    fn timestamped(mut self) -> Self {
        self.timestamped = true;
        self
    }

    /// Where the store keeps its entries: in RocksDB when `persistent`
    /// (an error without the `rocksdb` feature).
    fn set_persistent(&mut self, persistent: bool) -> Result<()> {
        self.persistent = super::rocksdb_available(&self.name, persistent)?;
        Ok(())
    }

    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let name = self.name.clone();
        self.changelog.init(&name, context);
        self.order.set_topic(context.changelog_topic(&name));
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            // Kafka keeps a segmented store's files in `<task>/<store>`.
            let path = context.state_dir().join(&self.name);
            let db = super::rocksdb::RocksSegmented::open(
                &self.name,
                &path,
                KeySchema::Window,
                self.retention_ms,
                super::rocksdb::default_segment_interval(self.retention_ms),
            )?;
            self.rocks = Some(db);
        }
        Ok(())
    }

    fn close(&mut self) {
        #[cfg(feature = "rocksdb")]
        {
            self.rocks = None;
        }
    }
}

/// The RocksDB side of a persistent window store: Kafka's
/// `RocksDBWindowStore` over its segmented bytes store.
#[cfg(feature = "rocksdb")]
impl<K: Ord + Clone + 'static, S: Clone, V: 'static> WindowCore<K, S, V> {
    /// The database; an error before `init`.
    fn rocks(&self) -> Result<&super::rocksdb::RocksSegmented> {
        self.rocks.as_ref().ok_or_else(|| not_open(&self.name))
    }

    /// Kafka's window store key: the key's bytes, the window start and
    /// the sequence number, big-endian.
    fn store_key(&self, key: &OrderedKey<K>, window_start: i64, seqnum: u32) -> Result<Vec<u8>> {
        let mut out = self.order.bytes_of(key)?;
        out.extend_from_slice(&window_start.to_be_bytes());
        out.extend_from_slice(&seqnum.to_be_bytes());
        Ok(out)
    }

    /// A stored value's bytes: the value's, after its timestamp (8 bytes
    /// big-endian) in a timestamped store.
    fn encode(&self, stored: &S) -> Result<Vec<u8>> {
        let (v, ts) = (self.to_log)(stored);
        let value = self.changelog.value_bytes(self.order.topic(), v)?;
        if !self.timestamped {
            return Ok(value);
        }
        let mut out = Vec::with_capacity(TIMESTAMP_SIZE + value.len());
        out.extend_from_slice(&ts.unwrap_or(-1).to_be_bytes());
        out.extend_from_slice(&value);
        Ok(out)
    }

    fn decode(&self, db: &super::rocksdb::RocksSegmented, bytes: &[u8]) -> Result<S> {
        let (ts, value) = if self.timestamped {
            let Some(ts) = crate::time::read_i64(bytes, 0) else {
                return Err(db
                    .db()
                    .corrupt("a value shorter than its 8-byte timestamp".to_owned()));
            };
            (ts, &bytes[TIMESTAMP_SIZE..])
        } else {
            (-1, bytes)
        };
        let v = self
            .changelog
            .value_serde
            .deserialize(self.order.topic(), value)
            .map_err(|e| db.db().corrupt(e.to_string()))?;
        Ok((self.from_log)(v, ts))
    }

    /// A windowed key and its value from a store key and value.
    fn decode_entry(
        &self,
        db: &super::rocksdb::RocksSegmented,
        store_key: &[u8],
        value: &[u8],
    ) -> Result<(Windowed<K>, S)> {
        let key = self
            .changelog
            .key_serde
            .deserialize(self.order.topic(), KeySchema::Window.key_bytes(store_key))
            .map_err(|e| db.db().corrupt(e.to_string()))?;
        let start = KeySchema::Window.segment_timestamp(store_key);
        Ok((self.windowed(start, &key), self.decode(db, value)?))
    }

    /// Kafka's `fetch(keyFrom, keyTo, timeFrom, timeTo)` on RocksDB:
    /// segment by segment, then by key bytes and window start. An
    /// excluded bound (a Rust range's) is the inclusive one without that
    /// key.
    fn persistent_fetch_range(
        &self,
        keys: (Bound<OrderedKey<K>>, Bound<OrderedKey<K>>),
        bounds: Option<(i64, i64)>,
    ) -> Result<ByWindow<K, S>> {
        let Some((lo, hi)) = bounds else {
            return Ok(Vec::new());
        };
        let range = self.order.byte_range(&keys)?;
        let db = self.rocks()?;
        let found = db.fetch_keys(range.first(), range.last(), lo, hi, true)?;
        let mut out = Vec::with_capacity(found.len());
        for (store_key, value) in found {
            if !range.excludes(KeySchema::Window.key_bytes(&store_key)) {
                out.push(self.decode_entry(db, &store_key, &value)?);
            }
        }
        Ok(out)
    }
}

/// An in-memory window store, Kafka's `WindowStore` with an in-memory
/// supplier; build one with [`Stores::window_store_builder`].
///
/// It keeps one value per key and *window start*, for its *retention
/// period*: the store tracks its own stream time, the largest window start
/// put so far, and a window whose start is at or before `stream time -
/// retention` is expired: puts for it are ignored and reads no longer see
/// it. With `retain_duplicates` (as for the windows of a stream-stream
/// join) every put adds a new entry, told apart by a sequence number, and
/// a delete does nothing.
///
/// Each change is written to the changelog with Kafka's binary key: the
/// key's bytes, the window start as 8 bytes big-endian and a sequence
/// number as 4 bytes big-endian (0 unless duplicates are retained); a
/// delete writes a tombstone. [`WindowStore::restore`] replays a
/// changelog. Reads across keys are by window start, then key in Kafka's
/// order (by the keys' serialized bytes), as Kafka's in-memory window
/// store gives them.
///
/// ```
/// use std::time::Duration;
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::state::{StoreBuilder, Stores, WindowStore};
/// use streams_core::StreamsConfig;
///
/// let (retention, size) = (Duration::from_secs(1), Duration::from_millis(10));
/// let builder = Stores::window_store_builder("w", retention, size, false, I64Serde, StringSerde);
/// let mut built = builder.build(&StreamsConfig::default())?;
/// let store = built.as_any_mut().downcast_mut::<WindowStore<i64, String>>().ok_or("type")?;
/// for (key, start) in [(1, 0), (-1, 0), (2, 10)] {
///     store.put(key, format!("v{key}"), start)?;
/// }
/// // By window start, then key bytes: -1 (0xff..) after 1.
/// let shown = |w: streams_core::dsl::Windowed<i64>| format!("{}@{}", w.key, w.window.start);
/// let all: Vec<String> = store.all()?.map(|(w, _)| shown(w)).collect();
/// assert_eq!(all, ["1@0", "-1@0", "2@10"]);
/// // Keys 1 to -1 compare as bytes: every key from 1 on.
/// let (from, to) = (1, -1);
/// assert_eq!(store.fetch_range(from..=to, 0..=10)?.count(), 3);
/// assert_eq!(store.backward_fetch_all(..)?.next().map(|(w, _)| shown(w)).as_deref(), Some("2@10"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WindowStore<K, V> {
    core: WindowCore<K, V, V>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> WindowStore<K, V> {
    pub(crate) fn new(name: &str, params: WindowParams, changelog: Changelog<K, V>) -> Self {
        WindowStore {
            core: WindowCore::new(name, params, changelog, |v| (v, None), |v, _| v),
        }
    }

    /// Puts `value` for `key` in the window starting at `window_start`,
    /// Kafka's `put(key, value, windowStart)`, and writes it to the
    /// changelog at the current record's timestamp. A put for an expired
    /// window is ignored (and still logged, as Kafka does).
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(&mut self, key: K, value: V, window_start: i64) -> Result<()> {
        self.core.put(key, Some(value), window_start)
    }

    /// As [`WindowStore::put`], with `None` for Kafka's `put(key, null,
    /// windowStart)`: a delete, a no-op (still logged) when duplicates are
    /// retained.
    pub(crate) fn put_option(&mut self, key: K, value: Option<V>, window_start: i64) -> Result<()> {
        self.core.put(key, value, window_start)
    }
}

window_store_common!(WindowStore, V, StoreKind::Window);

/// An in-memory window store whose values keep the timestamp of the
/// record that wrote them, Kafka's `TimestampedWindowStore`: the store of
/// the DSL's windowed aggregations. Changelog records carry the value's
/// own timestamp.
pub struct TimestampedWindowStore<K, V> {
    core: WindowCore<K, ValueAndTimestamp<V>, V>,
    /// Whether the DSL operator writing it keeps Kafka's record cache in
    /// front of it (see `crate::dsl::cache`).
    pub(crate) caching: bool,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimestampedWindowStore<K, V> {
    pub(crate) fn new(name: &str, params: WindowParams, changelog: Changelog<K, V>) -> Self {
        TimestampedWindowStore {
            core: WindowCore::new(
                name,
                params,
                changelog,
                |vt| (&vt.value, Some(vt.timestamp)),
                ValueAndTimestamp::new,
            )
            .timestamped(),
            caching: false,
        }
    }

    /// Puts without writing the changelog (the record cache writes it at
    /// its flush, [`TimestampedWindowStore::log_current`]).
    pub(crate) fn put_unlogged(
        &mut self,
        key: K,
        value: V,
        timestamp: i64,
        window_start: i64,
    ) -> Result<()> {
        let key = self.core.order.ordered(key)?;
        let seqnum = self.core.next_seqnum();
        self.core.apply(
            key,
            Some(ValueAndTimestamp::new(value, timestamp)),
            window_start,
            seqnum,
        )
    }

    /// Writes `logged` (a value and its timestamp; a tombstone for `None`)
    /// for `key` in the window at `window_start` to the changelog, whether
    /// or not the store holds the window (a record cache's flush).
    pub(crate) fn log_value(
        &self,
        key: &K,
        window_start: i64,
        logged: Option<(&V, i64)>,
    ) -> Result<()> {
        let mut suffix = [0_u8; TIMESTAMP_SIZE + SEQNUM_SIZE];
        suffix[..TIMESTAMP_SIZE].copy_from_slice(&window_start.to_be_bytes());
        let encoded = self
            .core
            .changelog
            .encode_raw(key, &suffix, logged.map(|(v, _)| v))?;
        self.core.changelog.log_raw(encoded, logged.map(|(_, t)| t));
        Ok(())
    }

    /// Puts `value` at `timestamp` for `key` in the window starting at
    /// `window_start`. A put for an expired window is ignored (and still
    /// logged, as Kafka does).
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(&mut self, key: K, value: V, timestamp: i64, window_start: i64) -> Result<()> {
        self.core.put(
            key,
            Some(ValueAndTimestamp::new(value, timestamp)),
            window_start,
        )
    }
}

window_store_common!(
    TimestampedWindowStore,
    ValueAndTimestamp<V>,
    StoreKind::TimestampedWindow
);

/// Checks window store settings as Kafka's `Stores.inMemoryWindowStore`.
pub(crate) fn window_params(
    name: &str,
    retention: Duration,
    window_size: Duration,
    retain_duplicates: bool,
) -> Result<WindowParams> {
    let retention_ms = crate::time::millis(retention, "retention period")?;
    let window_size_ms = crate::time::millis(window_size, "window size")?;
    if window_size_ms > retention_ms {
        return Err(StreamsError::RetentionTooShort {
            store: name.to_owned(),
            kind: StoreKind::Window,
            retention_ms,
            minimum_ms: window_size_ms,
            minimum: "its window size",
        });
    }
    Ok(WindowParams {
        retention_ms,
        window_size_ms,
        retain_duplicates,
    })
}

/// What a window store is built from besides its name and changelog: how
/// long it keeps windows, their size, and whether it keeps every put (the
/// windows of a stream-stream join). Checked when the store is built, as
/// Kafka's `Stores.inMemoryWindowStore` checks them.
#[derive(Debug, Clone, Copy)]
pub struct WindowSettings {
    pub(crate) retention: Duration,
    pub(crate) window_size: Duration,
    pub(crate) retain_duplicates: bool,
}

impl From<WindowParams> for WindowSettings {
    /// The settings of parameters a DSL operator has already checked.
    fn from(params: WindowParams) -> Self {
        WindowSettings {
            retention: Duration::from_millis(params.retention_ms.unsigned_abs()),
            window_size: Duration::from_millis(params.window_size_ms.unsigned_abs()),
            retain_duplicates: params.retain_duplicates,
        }
    }
}

impl WindowSettings {
    fn check(&self, name: &str) -> Result<WindowParams> {
        window_params(
            name,
            self.retention,
            self.window_size,
            self.retain_duplicates,
        )
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for WindowStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = WindowSettings;

    fn retention_ms(settings: &WindowSettings) -> Option<i64> {
        i64::try_from(settings.retention.as_millis()).ok()
    }

    fn make(name: &str, settings: &WindowSettings, parts: StoreParts<K, V>) -> Result<Self> {
        let mut store = WindowStore::new(name, settings.check(name)?, parts.changelog);
        // Kafka disables the cache of a store that keeps duplicates.
        store.core.pending = (parts.cache && !settings.retain_duplicates).then(PendingWrites::new);
        store.core.set_persistent(parts.persistent)?;
        Ok(store)
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for TimestampedWindowStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = WindowSettings;

    fn retention_ms(settings: &WindowSettings) -> Option<i64> {
        i64::try_from(settings.retention.as_millis()).ok()
    }

    fn make(name: &str, settings: &WindowSettings, parts: StoreParts<K, V>) -> Result<Self> {
        let mut store = TimestampedWindowStore::new(name, settings.check(name)?, parts.changelog);
        store.caching = parts.caching;
        store.core.pending = (parts.cache && !settings.retain_duplicates).then(PendingWrites::new);
        store.core.set_persistent(parts.persistent)?;
        Ok(store)
    }
}

/// Builds window stores; see [`Stores::window_store_builder`].
pub type WindowStoreBuilder<K, V> = BuiltInStoreBuilder<WindowStore<K, V>>;

impl Stores {
    /// A builder of in-memory [`WindowStore`]s named `name`, keeping
    /// windows of `window_size` for `retention` (which must be at least the
    /// window size), and every put when `retain_duplicates` (for joins),
    /// Kafka's `windowStoreBuilder(inMemoryWindowStore(..), ..)`. Invalid
    /// settings are reported when the store is built.
    pub fn window_store_builder<K, V>(
        name: &str,
        retention: Duration,
        window_size: Duration,
        retain_duplicates: bool,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> WindowStoreBuilder<K, V>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        let settings = WindowSettings {
            retention,
            window_size,
            retain_duplicates,
        };
        BuiltInStoreBuilder::new(
            name,
            settings,
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
        .with_persistent(Some(false))
    }

    /// As [`Stores::window_store_builder`], for [`TimestampedWindowStore`]s.
    pub fn timestamped_window_store_builder<K, V>(
        name: &str,
        retention: Duration,
        window_size: Duration,
        retain_duplicates: bool,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> BuiltInStoreBuilder<TimestampedWindowStore<K, V>>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        let settings = WindowSettings {
            retention,
            window_size,
            retain_duplicates,
        };
        BuiltInStoreBuilder::new(
            name,
            settings,
            Some(Arc::new(key_serde)),
            Some(Arc::new(value_serde)),
        )
        .with_persistent(Some(false))
    }
}

#[cfg(feature = "rocksdb")]
impl Stores {
    /// A builder of [`WindowStore`]s kept in RocksDB (feature `rocksdb`),
    /// Kafka's `windowStoreBuilder(persistentWindowStore(name, retention,
    /// windowSize, retainDuplicates), ..)`: the store's files are under
    /// `<state.dir>/<application.id>/<task>/<name>`, in segments of
    /// `max(retention / 2, 60 s)` as Kafka's. Reads across keys go
    /// segment by segment (oldest first), then by the keys' serialized
    /// bytes and window start, as Kafka's RocksDB store gives them (the
    /// in-memory store gives them by window start, then key).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::Stores;
    ///
    /// let minute = Duration::from_secs(60);
    /// let builder = Stores::persistent_window_store_builder("clicks", minute, minute, false, StringSerde, I64Serde);
    /// # let _ = builder;
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    pub fn persistent_window_store_builder<K, V>(
        name: &str,
        retention: Duration,
        window_size: Duration,
        retain_duplicates: bool,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> WindowStoreBuilder<K, V>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        Self::window_store_builder(
            name,
            retention,
            window_size,
            retain_duplicates,
            key_serde,
            value_serde,
        )
        .with_persistent(Some(true))
    }

    /// As [`Stores::persistent_window_store_builder`], for
    /// [`TimestampedWindowStore`]s, Kafka's
    /// `timestampedWindowStoreBuilder(persistentTimestampedWindowStore(..), ..)`.
    #[cfg_attr(docsrs, doc(cfg(feature = "rocksdb")))]
    pub fn persistent_timestamped_window_store_builder<K, V>(
        name: &str,
        retention: Duration,
        window_size: Duration,
        retain_duplicates: bool,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> BuiltInStoreBuilder<TimestampedWindowStore<K, V>>
    where
        K: Ord + Clone + 'static,
        V: Clone + 'static,
    {
        Self::timestamped_window_store_builder(
            name,
            retention,
            window_size,
            retain_duplicates,
            key_serde,
            value_serde,
        )
        .with_persistent(Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::collector::RecordCollector;
    use crate::serde::{I64Serde, StringSerde};
    use crate::state::StoreBuilder;
    use proptest::prelude::*;
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    fn context() -> (StoreContext, Rc<RefCell<RecordCollector>>, Rc<Cell<i64>>) {
        let produced = Rc::new(RefCell::new(RecordCollector::default()));
        let timestamp = Rc::new(Cell::new(0));
        (
            StoreContext::new(produced.clone(), timestamp.clone(), "app"),
            produced,
            timestamp,
        )
    }

    fn params(retention_ms: i64, window_size_ms: i64, retain_duplicates: bool) -> WindowParams {
        WindowParams {
            retention_ms,
            window_size_ms,
            retain_duplicates,
        }
    }

    fn store(retention: i64, size: i64, dups: bool) -> WindowStore<String, i64> {
        WindowStore::new(
            "w",
            params(retention, size, dups),
            Changelog::new(Arc::new(StringSerde), Arc::new(I64Serde)),
        )
    }

    fn timestamped(retention: i64, size: i64, dups: bool) -> TimestampedWindowStore<String, i64> {
        TimestampedWindowStore::new(
            "w",
            params(retention, size, dups),
            Changelog::new(Arc::new(StringSerde), Arc::new(I64Serde)),
        )
    }

    fn k(s: &str) -> String {
        s.to_owned()
    }

    #[test]
    fn fetch_by_key_and_time_range_in_time_order() -> Result<()> {
        let mut s = store(100, 10, false);
        for (key, value, start) in [("a", 1, 20), ("b", 2, 10), ("a", 3, 0), ("a", 4, 10)] {
            s.put(k(key), value, start)?;
        }
        let fetched: Vec<_> = s.fetch("a", 0..=20)?.collect();
        assert_eq!(fetched, [(0, 3), (10, 4), (20, 1)]);
        let backward: Vec<_> = s.backward_fetch("a", 5..=20)?.map(|(t, _)| t).collect();
        assert_eq!(backward, [20, 10]);
        assert_eq!(s.get("b", 10)?, Some(2));
        assert_eq!(s.get("b", 0)?, None);
        let all: Vec<_> = s.fetch_all(10..=10)?.collect();
        assert_eq!(
            all,
            [
                (Windowed::new(k("a"), Window::new(10, 20)), 4),
                (Windowed::new(k("b"), Window::new(10, 20)), 2)
            ]
        );
        // An inverted range is empty, not a panic.
        let (from, to) = (20, 0);
        assert_eq!(s.fetch("a", from..=to)?.count(), 0);
        assert_eq!(s.approximate_num_entries(), 4);
        Ok(())
    }

    // Kafka's AbstractWindowBytesStoreTest.shouldNotIncludeDeletedFromRangeResult
    // and the in-memory store's expiry (InMemoryWindowStoreTest.shouldExpire...).
    #[test]
    fn windows_expire_after_retention() -> Result<()> {
        let mut s = store(3, 1, false);
        s.put(k("a"), 0, 0)?;
        s.put(k("b"), 1, 1)?;
        s.put(k("c"), 2, 2)?;
        s.put(k("d"), 3, 3)?;
        // Stream time 3, retention 3: start 0 expired (0 <= 3 - 3).
        let keys: Vec<_> = s.all()?.map(|(w, _)| (w.key, w.window.start)).collect();
        assert_eq!(keys, [(k("b"), 1), (k("c"), 2), (k("d"), 3)]);
        assert_eq!(s.get("a", 0)?, None);
        // A put for an expired window is ignored.
        s.put(k("z"), 9, 0)?;
        assert_eq!(s.get("z", 0)?, None);
        s.put(k("e"), 4, 5)?;
        let keys: Vec<_> = s.all()?.map(|(w, _)| w.key).collect();
        assert_eq!(keys, [k("d"), k("e")]);
        s.delete("d", 3)?;
        assert_eq!(s.fetch_all(..)?.count(), 1);
        Ok(())
    }

    #[test]
    fn duplicates_are_retained_with_sequence_numbers() -> Result<()> {
        let (ctx, produced, _) = context();
        let mut s = store(100, 10, true);
        s.init(&ctx)?;
        s.put(k("a"), 1, 0)?;
        s.put(k("a"), 2, 0)?;
        s.delete("a", 0)?;
        let values: Vec<_> = s.fetch("a", 0..=0)?.map(|(_, v)| v).collect();
        assert_eq!(values, [1, 2]);
        let keys: Vec<_> = produced
            .borrow()
            .records()
            .iter()
            .map(|p| p.record.key.clone().unwrap_or_default())
            .collect();
        let key = |seq: u32| [&b"a"[..], &0_i64.to_be_bytes(), &seq.to_be_bytes()].concat();
        assert_eq!(keys, [key(1), key(2), key(3)]);
        Ok(())
    }

    #[test]
    fn changelog_uses_kafkas_window_key_and_tombstones() -> Result<()> {
        let (ctx, produced, ts) = context();
        let mut s = store(100, 10, false);
        s.init(&ctx)?;
        ts.set(42);
        s.put(k("k"), 7, 10)?;
        s.delete("k", 10)?;
        let records = produced.borrow().records();
        assert_eq!(&*records[0].topic, "app-w-changelog");
        let key = [&b"k"[..], &10_i64.to_be_bytes(), &0_u32.to_be_bytes()].concat();
        assert_eq!(records[0].record.key.as_deref(), Some(&key[..]));
        assert_eq!(records[0].record.value, Some(7_i64.to_be_bytes().to_vec()));
        assert_eq!(records[0].record.timestamp, 42);
        assert_eq!(records[1].record.key.as_deref(), Some(&key[..]));
        assert_eq!(records[1].record.value, None);
        Ok(())
    }

    #[test]
    fn timestamped_changelog_carries_the_value_timestamp() -> Result<()> {
        let (ctx, produced, _) = context();
        let mut s = timestamped(100, 10, false);
        s.init(&ctx)?;
        s.put(k("k"), 7, 99, 10)?;
        assert_eq!(produced.borrow().records()[0].record.timestamp, 99);
        let raw: Vec<RawRecord> = produced
            .borrow()
            .records()
            .iter()
            .map(|p| p.record.clone())
            .collect();
        let mut restored = timestamped(100, 10, false);
        restored.restore(&raw)?;
        assert_eq!(restored.get("k", 10)?, Some(ValueAndTimestamp::new(7, 99)));
        Ok(())
    }

    #[test]
    fn restore_rejects_bad_keys() {
        let mut s = store(100, 10, false);
        let short = RawRecord::new(Some(vec![1, 2, 3]), Some(vec![0; 8]), 0);
        let err = s.restore([&short]).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("w-changelog offset 0")));
        let keyless = RawRecord::new(None, Some(vec![0; 8]), 0);
        assert!(matches!(
            s.restore([&keyless]),
            Err(StreamsError::InvalidChangelogRecord { store, topic, offset: 0, reason: "has no key" })
                if store == "w" && topic == "w-changelog"
        ));
    }

    #[test]
    fn builder_checks_retention_against_window_size() {
        let b = Stores::window_store_builder(
            "w",
            Duration::from_millis(5),
            Duration::from_millis(10),
            false,
            StringSerde,
            I64Serde,
        );
        assert!(matches!(
            b.build(&crate::StreamsConfig::default()),
            Err(StreamsError::RetentionTooShort {
                kind: StoreKind::Window,
                retention_ms: 5,
                minimum_ms: 10,
                minimum: "its window size",
                ..
            })
        ));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Put(u8, i64, i64),
        Delete(u8, i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..4_u8, any::<i64>(), 0..60_i64).prop_map(|(k, v, t)| Op::Put(k, v, t)),
            1 => (0..4_u8, 0..60_i64).prop_map(|(k, t)| Op::Delete(k, t)),
        ]
    }

    fn snapshot<V: Clone>(
        all: impl Iterator<Item = (Windowed<String>, V)>,
    ) -> Vec<(Windowed<String>, V)> {
        all.collect()
    }

    proptest! {
        /// For any puts and deletes, a window store restored from its
        /// changelog equals the original.
        #[test]
        fn restored_from_changelog_equals_original(
            ops in proptest::collection::vec(op(), 0..60),
            retention in 10..80_i64,
            dups in any::<bool>(),
        ) {
            let (ctx, produced, ts) = context();
            let mut original = timestamped(retention, 10, dups);
            original.init(&ctx).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for (i, op) in ops.iter().enumerate() {
                ts.set(i as i64);
                let result = match op {
                    Op::Put(key, v, t) => original.put(format!("k{key}"), *v, *t + 1000, *t),
                    Op::Delete(key, t) => original.delete(format!("k{key}").as_str(), *t),
                };
                result.map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let raw: Vec<RawRecord> = produced.borrow().records().iter().map(|p| p.record.clone()).collect();
            let mut restored = timestamped(retention, 10, dups);
            restored.restore(&raw).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let fail = |e: StreamsError| TestCaseError::fail(e.to_string());
            prop_assert_eq!(
                snapshot(original.all().map_err(fail)?),
                snapshot(restored.all().map_err(fail)?)
            );
            prop_assert_eq!(original.observed_stream_time(), restored.observed_stream_time());
            for key in 0..4 {
                let key = format!("k{key}");
                let a: Vec<_> = original.fetch(&key, ..).map_err(fail)?.collect();
                let b: Vec<_> = restored.fetch(&key, ..).map_err(fail)?.collect();
                prop_assert_eq!(a, b);
            }
        }

        /// A plain window store against a naive model: the last put per
        /// key and start wins, a delete removes, and only windows after
        /// `max start - retention` are visible.
        #[test]
        fn window_store_matches_a_model(
            ops in proptest::collection::vec(op(), 0..60),
            retention in 10..80_i64,
        ) {
            let mut s = store(retention, 10, false);
            let mut model: BTreeMap<(i64, String), i64> = BTreeMap::new();
            let mut time = -1_i64;
            for op in &ops {
                match op {
                    Op::Put(key, v, t) => {
                        s.put(format!("k{key}"), *v, *t).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        time = time.max(*t);
                        if *t > time - retention {
                            model.insert((*t, format!("k{key}")), *v);
                        }
                    }
                    Op::Delete(key, t) => {
                        s.delete(format!("k{key}").as_str(), *t).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        time = time.max(*t);
                        if *t > time - retention {
                            model.remove(&(*t, format!("k{key}")));
                        }
                    }
                }
            }
            let expected: Vec<_> = model
                .into_iter()
                .filter(|((t, _), _)| *t > time - retention)
                .map(|((t, k), v)| (Windowed::new(k, Window::of_size(t, 10)), v))
                .collect();
            let actual: Vec<_> = s.all().map_err(|e| TestCaseError::fail(e.to_string()))?.collect();
            prop_assert_eq!(actual, expected);
        }
    }
}
