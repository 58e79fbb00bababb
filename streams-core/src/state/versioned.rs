//! Versioned key-value stores (KIP-889): see [`VersionedKeyValueStore`].

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Bound;
use std::time::Duration;

use super::{Changelog, MakeStore, StateStore, StoreContext, StoreKind, StoreParts};
use crate::error::{Result, StreamsError};
use crate::record::RawRecord;

#[cfg(feature = "rocksdb")]
use super::key_value::not_open;

/// A value and the time from which it is valid, Kafka's `VersionedRecord`:
/// what a [`VersionedKeyValueStore`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VersionedRecord<V> {
    /// The value.
    pub value: V,
    /// The timestamp the value was put with: it is valid from then on.
    pub timestamp: i64,
    /// Until when the value was valid (exclusive), when a newer version
    /// ended it; `None` for the newest version.
    ///
    /// Kafka's typed store (`MeteredVersionedKeyValueStore`) leaves it
    /// empty in what it returns; its bytes store (`RocksDBVersionedStore`)
    /// fills it as this one does.
    pub valid_to: Option<i64>,
}

impl<V> VersionedRecord<V> {
    /// A version valid from `timestamp` on, with no known end.
    pub fn new(value: V, timestamp: i64) -> Self {
        VersionedRecord {
            value,
            timestamp,
            valid_to: None,
        }
    }

    /// A version valid from `timestamp` until `valid_to` (exclusive).
    pub fn with_valid_to(value: V, timestamp: i64, valid_to: i64) -> Self {
        VersionedRecord {
            value,
            timestamp,
            valid_to: Some(valid_to),
        }
    }
}

/// What a versioned store is built from besides its name: its history
/// retention and segment interval, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionedParams {
    pub(crate) history_retention_ms: i64,
    pub(crate) segment_interval_ms: i64,
}

/// Kafka's `RocksDbVersionedKeyValueBytesStoreSupplier.defaultSegmentInterval`.
fn default_segment_interval(history_retention_ms: i64) -> i64 {
    if history_retention_ms <= 60_000 {
        (history_retention_ms / 3).max(2_000)
    } else if history_retention_ms <= 300_000 {
        (history_retention_ms / 5).max(20_000)
    } else if history_retention_ms <= 3_600_000 {
        (history_retention_ms / 12).max(60_000)
    } else {
        (history_retention_ms / 24).max(300_000)
    }
}

/// A versioned store's name and settings, Kafka's
/// `VersionedBytesStoreSupplier`: made by
/// [`Stores::persistent_versioned_key_value_store`](super::Stores::persistent_versioned_key_value_store),
/// given to [`Stores::versioned_key_value_store_builder`](super::Stores::versioned_key_value_store_builder)
/// or to [`Materialized::as_`](crate::dsl::Materialized::as_) for a DSL table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedBytesStoreSupplier {
    name: String,
    params: VersionedParams,
}

impl VersionedBytesStoreSupplier {
    /// A supplier of stores named `name` keeping `history_retention_ms`
    /// of history, in segments of `segment_interval_ms` (Kafka's default
    /// for the retention when `None`). For durations in signed
    /// milliseconds, as Java code has them; the [`Stores`](super::Stores)
    /// constructors take a [`Duration`].
    ///
    /// ```
    /// use streams_core::state::VersionedBytesStoreSupplier;
    ///
    /// let supplier = VersionedBytesStoreSupplier::of_millis("s", 300_000, None)?;
    /// assert_eq!((supplier.history_retention_ms(), supplier.segment_interval_ms()), (300_000, 60_000));
    /// let err = VersionedBytesStoreSupplier::of_millis("s", -1, None).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "versioned store `s`: historyRetention cannot be negative (was -1 ms); give a history retention of zero or more"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A negative history retention, or a segment interval below 1 ms,
    /// each with Kafka's message.
    pub fn of_millis(
        name: &str,
        history_retention_ms: i64,
        segment_interval_ms: Option<i64>,
    ) -> Result<Self> {
        if history_retention_ms < 0 {
            return Err(StreamsError::InvalidVersionedStore {
                store: name.to_owned(),
                problem: "historyRetention cannot be negative",
                millis: history_retention_ms,
                fix: "give a history retention of zero or more",
            });
        }
        let segment_interval_ms =
            segment_interval_ms.unwrap_or_else(|| default_segment_interval(history_retention_ms));
        if segment_interval_ms < 1 {
            return Err(StreamsError::InvalidVersionedStore {
                store: name.to_owned(),
                problem: "segmentInterval cannot be zero or negative",
                millis: segment_interval_ms,
                fix: "give a segment interval of 1 ms or more",
            });
        }
        Ok(VersionedBytesStoreSupplier {
            name: name.to_owned(),
            params: VersionedParams {
                history_retention_ms,
                segment_interval_ms,
            },
        })
    }

    pub(crate) fn of_durations(
        name: &str,
        history_retention: Duration,
        segment_interval: Option<Duration>,
    ) -> Result<Self> {
        let millis = |what: &'static str, d: Duration| {
            i64::try_from(d.as_millis())
                .map_err(|_| StreamsError::DurationTooLarge { what, duration: d })
        };
        let history = millis("history retention", history_retention)?;
        let segment = segment_interval
            .map(|d| millis("segment interval", d))
            .transpose()?;
        Self::of_millis(name, history, segment)
    }

    /// The name of the stores.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long versions are kept, in milliseconds.
    pub fn history_retention_ms(&self) -> i64 {
        self.params.history_retention_ms
    }

    /// How long a segment is, in milliseconds (Kafka's default
    /// for the retention unless given). It changes nothing you can see
    /// here: this store keeps versions per key, not in segments.
    pub fn segment_interval_ms(&self) -> i64 {
        self.params.segment_interval_ms
    }

    pub(crate) fn params(&self) -> VersionedParams {
        self.params
    }
}

/// The versions of one key, by timestamp; `None` is a tombstone.
type Versions<V> = BTreeMap<i64, Option<V>>;

/// A versioned key-value store (KIP-889), Kafka's
/// `VersionedKeyValueStore`: every value a key had, each with the
/// timestamp from which it was valid, kept for a history retention.
///
/// Kafka's only implementation is `RocksDBVersionedStore`, built by
/// `Stores.persistentVersionedKeyValueStore`. Here
/// [`Stores::persistent_versioned_key_value_store`](super::Stores::persistent_versioned_key_value_store)
/// keeps Kafka's name and Kafka's rules, and holds the versions in memory,
/// or, with the `rocksdb` feature, in RocksDB when the config asks for
/// Kafka's RocksDB DSL store suppliers (`default.dsl.store = rocksDB`, as
/// for the other stores a supplier leaves to the config): one database
/// per store under `<state.dir>/<application.id>/<task>/rocksdb/<store>`,
/// each key's versions under its bytes, the same rules. The rules, from
/// `RocksDBVersionedStore`:
///
/// - A put or delete at a timestamp older than the *observed stream time*
///   (the largest timestamp put so far) minus the history retention is
///   expired: nothing changes, the put returns
///   [`PUT_RETURN_CODE_NOT_PUT`](VersionedKeyValueStore::PUT_RETURN_CODE_NOT_PUT)
///   and the task's `dropped-records-total` counts it. The history retention
///   is also the grace period.
/// - Otherwise the version is inserted where its timestamp puts it (or
///   replaces the one at the same timestamp), and the observed stream
///   time moves up to its timestamp; a tombstone (a `None` value,
///   or a delete) is a version too, which ends the one before it. A put
///   returns the timestamp of the next newer version, until which the new
///   one is valid, or
///   [`PUT_RETURN_CODE_VALID_TO_UNDEFINED`](VersionedKeyValueStore::PUT_RETURN_CODE_VALID_TO_UNDEFINED)
///   (-1) when it is the newest.
/// - [`get`](VersionedKeyValueStore::get) gives the newest version, unless
///   it is a tombstone. [`get_as_of`](VersionedKeyValueStore::get_as_of)
///   gives the version valid at a time: within the history retention
///   (`as_of` at least the observed stream time minus the retention), the
///   newest version at or before `as_of`; further back only the newest
///   version is still known, and it is returned if it is old enough.
///
/// The changelog gets every put and delete as Kafka's
/// `ChangeLoggingVersionedKeyValueBytesStore` writes it: the key and value
/// bytes (no value for a tombstone) at the version's timestamp, expired
/// ones included; restoring replays them through the same rules. Versioned
/// stores have no record cache.
///
/// ```
/// use std::time::Duration;
/// use streams_core::state::{Stores, StoreBuilder, VersionedKeyValueStore, VersionedRecord};
/// use streams_core::serde::StringSerde;
/// use streams_core::StreamsConfig;
///
/// let supplier = Stores::persistent_versioned_key_value_store("prices", Duration::from_millis(100))?;
/// let builder = Stores::versioned_key_value_store_builder(supplier, StringSerde, StringSerde);
/// let mut boxed = builder.build(&StreamsConfig::default())?;
/// let store = boxed.as_any_mut().downcast_mut::<VersionedKeyValueStore<String, String>>().ok_or("type")?;
/// let pen = "pen".to_string();
/// assert_eq!(store.put(pen.clone(), Some("1.00".into()), 10)?, -1); // the newest version
/// assert_eq!(store.put(pen.clone(), Some("1.20".into()), 30)?, -1);
/// assert_eq!(store.put(pen.clone(), Some("0.90".into()), 20)?, 30); // valid until 30
/// assert_eq!(store.get(&pen)?, Some(VersionedRecord::new("1.20".to_string(), 30)));
/// assert_eq!(store.get_as_of(&pen, 25)?, Some(VersionedRecord::with_valid_to("0.90".to_string(), 20, 30)));
/// assert_eq!(store.get_as_of(&pen, 5)?, None);
/// store.put("ink".into(), Some("3.00".into()), 200)?; // stream time 200: history back to 100
/// assert_eq!(store.put(pen.clone(), Some("late".into()), 99)?, VersionedKeyValueStore::<String, String>::PUT_RETURN_CODE_NOT_PUT);
/// assert_eq!(store.get_as_of(&pen, 25)?, None); // beyond the history retention
/// assert_eq!(store.get_as_of(&pen, 150)?, Some(VersionedRecord::new("1.20".to_string(), 30)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Keys are ordered by `Ord`, which only `Debug` shows: a versioned store
/// has no range queries.
pub struct VersionedKeyValueStore<K, V> {
    name: String,
    params: VersionedParams,
    /// The largest timestamp put (or restored), Kafka's `observedStreamTime`.
    observed_stream_time: i64,
    keys: BTreeMap<K, Versions<V>>,
    changelog: Changelog<K, V>,
    /// Where expired puts are counted, once the task started.
    context: Option<StoreContext>,
    /// The segment of the oldest time still in the history at the last
    /// sweep of every key.
    swept_segment: i64,
    /// Whether the versions live in RocksDB (opened at `init`).
    persistent: bool,
    /// The changelog topic, which the serdes are called with.
    topic: String,
    #[cfg(feature = "rocksdb")]
    rocks: Option<super::rocksdb::RocksKv>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> VersionedKeyValueStore<K, V> {
    /// What [`put`](Self::put) returns when the new version is the newest:
    /// its validity has no end yet.
    pub const PUT_RETURN_CODE_VALID_TO_UNDEFINED: i64 = -1;
    /// What [`put`](Self::put) returns when the put was older than the
    /// history retention allows, and was not made.
    pub const PUT_RETURN_CODE_NOT_PUT: i64 = i64::MIN;

    pub(crate) fn new(name: &str, params: VersionedParams, changelog: Changelog<K, V>) -> Self {
        VersionedKeyValueStore {
            name: name.to_owned(),
            params,
            observed_stream_time: -1,
            keys: BTreeMap::new(),
            changelog,
            context: None,
            swept_segment: i64::MIN,
            persistent: false,
            topic: format!("{name}-changelog"),
            #[cfg(feature = "rocksdb")]
            rocks: None,
        }
    }

    /// Where the versions live: in RocksDB when `persistent` (an error
    /// without the `rocksdb` feature).
    fn set_persistent(&mut self, persistent: bool) -> Result<()> {
        self.persistent = super::rocksdb_available(&self.name, persistent)?;
        Ok(())
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long versions are kept, in milliseconds.
    pub fn history_retention_ms(&self) -> i64 {
        self.params.history_retention_ms
    }

    /// The segment interval it was built with, in milliseconds.
    pub fn segment_interval_ms(&self) -> i64 {
        self.params.segment_interval_ms
    }

    /// The largest timestamp put so far (-1 before the first).
    pub fn observed_stream_time(&self) -> i64 {
        self.observed_stream_time
    }

    /// Whether the store writes a changelog.
    pub fn logging_enabled(&self) -> bool {
        self.changelog.enabled
    }

    /// The oldest time the history still reaches.
    fn history_start(&self) -> i64 {
        self.observed_stream_time
            .saturating_sub(self.params.history_retention_ms)
    }

    /// Puts `value` (a tombstone for `None`) as the version of `key` from
    /// `timestamp` on, Kafka's `put(key, value, timestamp)`, and writes it
    /// to the changelog at that timestamp. Returns when the new version
    /// ends (the next newer version's timestamp),
    /// [`PUT_RETURN_CODE_VALID_TO_UNDEFINED`](Self::PUT_RETURN_CODE_VALID_TO_UNDEFINED)
    /// when it is the newest, or
    /// [`PUT_RETURN_CODE_NOT_PUT`](Self::PUT_RETURN_CODE_NOT_PUT) when
    /// `timestamp` is older than the history retention allows (then
    /// nothing changes but the changelog, as in Kafka, and the task counts
    /// a dropped record).
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn put(&mut self, key: K, value: Option<V>, timestamp: i64) -> Result<i64> {
        self.changelog.log(&key, value.as_ref(), Some(timestamp))?;
        Ok(match self.apply(key, value, timestamp)? {
            Some(valid_to) => valid_to.unwrap_or(Self::PUT_RETURN_CODE_VALID_TO_UNDEFINED),
            None => {
                self.count_expired();
                Self::PUT_RETURN_CODE_NOT_PUT
            }
        })
    }

    /// Deletes `key` from `timestamp` on (a tombstone version), Kafka's
    /// `delete(key, timestamp)`, and writes the tombstone to the
    /// changelog. Returns the version that was valid at `timestamp`, as
    /// [`get_as_of`](Self::get_as_of) saw it, or `None` when there was
    /// none or the delete was older than the history retention allows
    /// (then nothing changes and the task counts a dropped record).
    ///
    /// # Errors
    /// The changelog serde failed.
    pub fn delete<Q>(&mut self, key: &Q, timestamp: i64) -> Result<Option<VersionedRecord<V>>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        let key = key.to_owned();
        self.changelog.log(&key, None, Some(timestamp))?;
        if timestamp < self.history_start() {
            self.count_expired();
            return Ok(None);
        }
        let existing = self.get_as_of::<K>(&key, timestamp)?;
        self.apply(key, None, timestamp)?;
        Ok(existing)
    }

    /// The newest version of `key` (in any borrowed form of the key type,
    /// `get("a")` on `String` keys), unless it is a tombstone.
    ///
    /// # Errors
    /// A store in RocksDB could not read or decode the key's versions.
    pub fn get<Q>(&self, key: &Q) -> Result<Option<VersionedRecord<V>>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let Some(versions) = self.stored_versions(&key.to_owned())? else {
                return Ok(None);
            };
            return latest(&versions)
                .map(|(ts, bytes)| Ok(VersionedRecord::new(self.decode_value(bytes)?, ts)))
                .transpose();
        }
        Ok(self
            .keys
            .get(key)
            .and_then(latest)
            .map(|(ts, v)| VersionedRecord::new(v.clone(), ts)))
    }

    /// The version of `key` valid at `as_of`, Kafka's `get(key,
    /// asOfTimestamp)`: the newest one at or before `as_of`, with the time
    /// it ended; `None` for a tombstone or no version. Further back than
    /// the history retention only the newest version is known: it is
    /// returned if it is not newer than `as_of`.
    ///
    /// # Errors
    /// A store in RocksDB could not read or decode the key's versions.
    pub fn get_as_of<Q>(&self, key: &Q, as_of: i64) -> Result<Option<VersionedRecord<V>>>
    where
        K: std::borrow::Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        let start = self.history_start();
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let Some(versions) = self.stored_versions(&key.to_owned())? else {
                return Ok(None);
            };
            return version_as_of(&versions, as_of, start)
                .map(|(ts, bytes, valid_to)| {
                    Ok(VersionedRecord {
                        value: self.decode_value(bytes)?,
                        timestamp: ts,
                        valid_to,
                    })
                })
                .transpose();
        }
        Ok(self.keys.get(key).and_then(|versions| {
            version_as_of(versions, as_of, start).map(|(ts, v, valid_to)| VersionedRecord {
                value: v.clone(),
                timestamp: ts,
                valid_to,
            })
        }))
    }

    /// Inserts a version unless it is expired: `None` when expired, else
    /// the timestamp of the next newer version, if any.
    fn apply(&mut self, key: K, value: Option<V>, timestamp: i64) -> Result<Option<Option<i64>>> {
        if timestamp < self.history_start() {
            return Ok(None);
        }
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let start = self.history_start();
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let key_bytes = self.changelog.key_bytes(&self.topic, &key)?;
            let value = value
                .map(|v| self.changelog.value_bytes(&self.topic, &v))
                .transpose()?;
            let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
            let mut versions = match db.get(&key_bytes)? {
                Some(bytes) => decode_versions(&bytes).ok_or_else(|| corrupt_versions(db))?,
                None => Versions::new(),
            };
            let (next, gone) = insert_version(&mut versions, timestamp, value, start);
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            if gone {
                db.delete(&key_bytes)?;
            } else {
                db.put(&key_bytes, &encode_versions(&versions))?;
            }
            self.maybe_sweep()?;
            return Ok(Some(next));
        }
        let versions = self.keys.entry(key.clone()).or_default();
        let (next, gone) = insert_version(versions, timestamp, value, start);
        if gone {
            self.keys.remove(&key);
        }
        self.maybe_sweep()?;
        Ok(Some(next))
    }

    /// Drops what no read can reach any more from every key, each time
    /// the oldest time of the history enters a new segment (where Kafka
    /// drops a whole segment).
    fn maybe_sweep(&mut self) -> Result<()> {
        let start = self.history_start();
        let segment = start.div_euclid(self.params.segment_interval_ms);
        if segment <= self.swept_segment {
            return Ok(());
        }
        self.swept_segment = segment;
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let db = self.rocks.as_mut().ok_or_else(|| not_open(&self.name))?;
            let all = db.range(Bound::Unbounded, Bound::Unbounded, true, |_| true)?;
            for (key, bytes) in all {
                let mut versions = decode_versions(&bytes).ok_or_else(|| corrupt_versions(db))?;
                let before = versions.len();
                if prune(&mut versions, start) {
                    db.delete(&key)?;
                } else if versions.len() != before {
                    db.put(&key, &encode_versions(&versions))?;
                }
            }
            return Ok(());
        }
        self.keys.retain(|_, versions| !prune(versions, start));
        Ok(())
    }

    fn count_expired(&self) {
        if let Some(ctx) = &self.context {
            ctx.count_dropped(&self.name);
        }
    }

    /// Replays changelog records (in offset order) into the store, as
    /// Kafka's `restoreBatch`: each is put at its timestamp (a record
    /// without a value is a tombstone), unless the history retention has
    /// passed it by. Nothing is written to the changelog or counted.
    ///
    /// # Errors
    /// A record without a key, or one the serdes cannot decode (named by
    /// changelog topic and offset).
    pub fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.changelog.topic_or(&self.name);
        for (offset, record) in records.into_iter().enumerate() {
            let offset = offset as i64;
            let Some(key) = &record.key else {
                return Err(super::window::bad_changelog_key(
                    &self.name,
                    &topic,
                    offset,
                    "has no key",
                ));
            };
            let key = self.changelog.decode_key(&topic, offset, key)?;
            let value = record
                .value
                .as_ref()
                .map(|v| self.changelog.decode_value(&topic, offset, v))
                .transpose()?;
            self.apply(key, value, record.timestamp)?;
        }
        Ok(())
    }

    /// Every version of every key still reachable, oldest first per key
    /// (`None` for a tombstone): for tests and debugging. Keys come in
    /// their `Ord` order in memory, by their bytes in RocksDB.
    ///
    /// # Errors
    /// A store in RocksDB could not read or decode its versions.
    pub fn versions(&self) -> Result<Vec<(K, i64, Option<V>)>> {
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
            let mut out = Vec::new();
            for (key, bytes) in db.range(Bound::Unbounded, Bound::Unbounded, true, |_| true)? {
                let k = self
                    .changelog
                    .key_serde
                    .deserialize(&self.topic, &key)
                    .map_err(|e| db.corrupt(e.to_string()))?;
                for (ts, v) in decode_versions(&bytes).ok_or_else(|| corrupt_versions(db))? {
                    let v = v.map(|b| self.decode_value(&b)).transpose()?;
                    out.push((k.clone(), ts, v));
                }
            }
            return Ok(out);
        }
        Ok(self
            .keys
            .iter()
            .flat_map(|(k, vs)| vs.iter().map(move |(&t, v)| (k.clone(), t, v.clone())))
            .collect())
    }
}

/// The RocksDB side of a persistent versioned store.
#[cfg(feature = "rocksdb")]
impl<K: Ord + Clone + 'static, V: Clone + 'static> VersionedKeyValueStore<K, V> {
    /// The versions of `key` in RocksDB, as bytes.
    fn stored_versions(&self, key: &K) -> Result<Option<Versions<Vec<u8>>>> {
        let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
        let key_bytes = self.changelog.key_bytes(&self.topic, key)?;
        db.get(&key_bytes)?
            .map(|bytes| decode_versions(&bytes).ok_or_else(|| corrupt_versions(db)))
            .transpose()
    }

    fn decode_value(&self, bytes: &[u8]) -> Result<V> {
        let db = self.rocks.as_ref().ok_or_else(|| not_open(&self.name))?;
        self.changelog
            .value_serde
            .deserialize(&self.topic, bytes)
            .map_err(|e| db.corrupt(e.to_string()))
    }
}

#[cfg(feature = "rocksdb")]
fn corrupt_versions(db: &super::rocksdb::RocksKv) -> StreamsError {
    db.corrupt("a list of versions cut short (not written by this store)".to_owned())
}

/// A key's versions as RocksDB keeps them: per version, oldest first, its
/// timestamp (8 bytes big-endian), then 0 for a tombstone, or 1 and the
/// value's length (4 bytes big-endian) and bytes.
#[cfg(feature = "rocksdb")]
fn encode_versions(versions: &Versions<Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (ts, value) in versions {
        out.extend_from_slice(&ts.to_be_bytes());
        match value {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                out.extend_from_slice(&u32::try_from(v.len()).unwrap_or(u32::MAX).to_be_bytes());
                out.extend_from_slice(v);
            }
        }
    }
    out
}

/// The versions [`encode_versions`] wrote; `None` when cut short.
#[cfg(feature = "rocksdb")]
fn decode_versions(mut bytes: &[u8]) -> Option<Versions<Vec<u8>>> {
    let mut versions = Versions::new();
    while !bytes.is_empty() {
        let ts = i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
        let value = match bytes.get(8)? {
            0 => {
                bytes = &bytes[9..];
                None
            }
            _ => {
                let len = u32::from_be_bytes(bytes.get(9..13)?.try_into().ok()?) as usize;
                let value = bytes.get(13..13 + len)?.to_vec();
                bytes = &bytes[13 + len..];
                Some(value)
            }
        };
        versions.insert(ts, value);
    }
    Some(versions)
}

/// The newest version, unless it is a tombstone.
fn latest<T>(versions: &Versions<T>) -> Option<(i64, &T)> {
    let (&ts, value) = versions.last_key_value()?;
    Some((ts, value.as_ref()?))
}

/// The version valid at `as_of` once the history starts at `start`: its
/// timestamp, value and the timestamp of the next newer version.
fn version_as_of<T>(
    versions: &Versions<T>,
    as_of: i64,
    start: i64,
) -> Option<(i64, &T, Option<i64>)> {
    if as_of < start {
        let (&ts, value) = versions.last_key_value()?;
        return match value {
            Some(v) if ts <= as_of => Some((ts, v, None)),
            _ => None,
        };
    }
    let (&ts, value) = versions.range(..=as_of).next_back()?;
    let next = versions
        .range((Bound::Excluded(ts), Bound::Unbounded))
        .next()
        .map(|(&t, _)| t);
    Some((ts, value.as_ref()?, next))
}

/// Inserts a version (replacing one at the same timestamp) once the
/// history starts at `start`: the timestamp of the next newer version,
/// and whether nothing readable is left.
fn insert_version<T>(
    versions: &mut Versions<T>,
    timestamp: i64,
    value: Option<T>,
    start: i64,
) -> (Option<i64>, bool) {
    let next = versions
        .range((Bound::Excluded(timestamp), Bound::Unbounded))
        .next()
        .map(|(&t, _)| t);
    versions.insert(timestamp, value);
    (next, prune(versions, start))
}

/// Drops the versions of one key that no read can reach once the history
/// starts at `start`: those older than the newest version at or before
/// `start` (a read further back sees only the newest version). Returns
/// whether nothing readable is left: a lone tombstone at or before
/// `start`.
fn prune<V>(versions: &mut Versions<V>, start: i64) -> bool {
    if let Some((&keep, _)) = versions.range(..=start).next_back() {
        let kept = versions.split_off(&keep);
        *versions = kept;
    }
    versions.len() == 1
        && versions
            .first_key_value()
            .is_some_and(|(&t, v)| v.is_none() && t <= start)
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> StateStore for VersionedKeyValueStore<K, V> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kind(&self) -> StoreKind {
        StoreKind::VersionedKeyValue
    }
    fn store_types(&self) -> String {
        super::key_value_types::<K, V>()
    }
    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let name = self.name.clone();
        self.changelog.init(&name, context);
        self.topic = context.changelog_topic(&name);
        self.context = Some(context.clone());
        #[cfg(feature = "rocksdb")]
        if self.persistent {
            let path = context.state_dir().join("rocksdb").join(&self.name);
            self.rocks = Some(super::rocksdb::RocksKv::open(&self.name, &path, false)?);
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

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VersionedKeyValueStore<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VersionedKeyValueStore")
            .field("name", &self.name)
            .field("history_retention_ms", &self.params.history_retention_ms)
            .field("observed_stream_time", &self.observed_stream_time)
            .field("versions", &self.keys)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> MakeStore for VersionedKeyValueStore<K, V> {
    type Key = K;
    type Value = V;
    type Params = VersionedParams;

    fn make(name: &str, params: &VersionedParams, parts: StoreParts<K, V>) -> Result<Self> {
        let mut store = VersionedKeyValueStore::new(name, *params, parts.changelog);
        store.set_persistent(parts.persistent)?;
        Ok(store)
    }

    fn min_compaction_lag_ms(params: &VersionedParams) -> Option<i64> {
        Some(params.history_retention_ms)
    }
}
