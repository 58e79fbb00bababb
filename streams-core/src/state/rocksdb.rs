//! A key-value store's bytes in RocksDB (feature `rocksdb`), as Kafka's
//! `RocksDBStore` keeps them: one database per store, under the task's
//! state directory (`<state.dir>/<application.id>/<task>/rocksdb/<store>`),
//! keys in RocksDB's default order, which is Kafka's (unsigned bytes).
//!
//! The typed stores keep their keys' and values' serialized bytes here
//! (a timestamped value as Kafka writes it: the timestamp as 8 bytes
//! big-endian, then the value) and decode what they read.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use rocksdb::{DB, Direction, IteratorMode, Options};

use crate::error::{Result, StreamsError};

/// One store's RocksDB database.
pub(crate) struct RocksKv {
    db: DB,
    store: String,
    path: PathBuf,
    /// How many keys the database holds, kept exact (Kafka's RocksDB store
    /// estimates it) when the store asks for it (a key-value store's
    /// `approximate_num_entries`); `None` for stores that never ask (window,
    /// session and versioned stores), whose writes then read nothing first.
    count: Option<u64>,
}

impl std::fmt::Debug for RocksKv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksKv")
            .field("store", &self.store)
            .field("path", &self.path)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl RocksKv {
    /// Opens (creating it if needed) the database of `store` at `path`,
    /// keeping the count of its keys when `counted`.
    pub(crate) fn open(store: &str, path: &Path, counted: bool) -> Result<Self> {
        let failed = |action: &'static str, reason: String| StreamsError::StoreIo {
            store: store.to_owned(),
            path: path.to_path_buf(),
            action,
            reason,
        };
        std::fs::create_dir_all(path).map_err(|e| failed("create its directory", e.to_string()))?;
        let mut options = Options::default();
        options.create_if_missing(true);
        let db = DB::open(&options, path).map_err(|e| failed("open", e.into_string()))?;
        let mut count = None;
        if counted {
            let mut n = 0;
            for entry in db.iterator(IteratorMode::Start) {
                entry.map_err(|e| failed("read", e.into_string()))?;
                n += 1;
            }
            count = Some(n);
        }
        Ok(RocksKv {
            db,
            store: store.to_owned(),
            path: path.to_path_buf(),
            count,
        })
    }

    fn failed(&self, action: &'static str, reason: rocksdb::Error) -> StreamsError {
        StreamsError::StoreIo {
            store: self.store.clone(),
            path: self.path.clone(),
            action,
            reason: reason.into_string(),
        }
    }

    /// An error for bytes read back that the store's serdes cannot decode.
    pub(crate) fn corrupt(&self, reason: String) -> StreamsError {
        StreamsError::StoreIo {
            store: self.store.clone(),
            path: self.path.clone(),
            action: "decode what it read from",
            reason,
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db.get(key).map_err(|e| self.failed("read", e))
    }

    /// Sets `key`; returns the old bytes when the keys are counted (else
    /// `None`: nothing is read before the write).
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        let old = match self.count {
            Some(_) => self.get(key)?,
            None => None,
        };
        self.db
            .put(key, value)
            .map_err(|e| self.failed("write", e))?;
        if let (Some(count), None) = (&mut self.count, &old) {
            *count += 1;
        }
        Ok(old)
    }

    /// Removes `key`; returns the old bytes when the keys are counted
    /// (else `None`: nothing is read before the delete).
    pub(crate) fn delete(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some(count) = self.count else {
            self.db.delete(key).map_err(|e| self.failed("write", e))?;
            return Ok(None);
        };
        let old = self.get(key)?;
        if old.is_some() {
            self.db.delete(key).map_err(|e| self.failed("write", e))?;
            self.count = Some(count - 1);
        }
        Ok(old)
    }

    /// The entries whose keys are between `start` and `end`, in key order
    /// (the reverse when not `forward`); `take_while` ends the scan.
    pub(crate) fn range(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        forward: bool,
        mut take_while: impl FnMut(&[u8]) -> bool,
    ) -> Result<Vec<(Box<[u8]>, Box<[u8]>)>> {
        let below_end = |k: &[u8]| match end {
            Bound::Included(e) => k <= e,
            Bound::Excluded(e) => k < e,
            Bound::Unbounded => true,
        };
        let above_start = |k: &[u8]| match start {
            Bound::Included(s) => k >= s,
            Bound::Excluded(s) => k > s,
            Bound::Unbounded => true,
        };
        let mode = match (forward, start, end) {
            (true, Bound::Included(s) | Bound::Excluded(s), _) => {
                IteratorMode::From(s, Direction::Forward)
            }
            (true, Bound::Unbounded, _) => IteratorMode::Start,
            (false, _, Bound::Included(e) | Bound::Excluded(e)) => {
                IteratorMode::From(e, Direction::Reverse)
            }
            (false, _, Bound::Unbounded) => IteratorMode::End,
        };
        let mut out = Vec::new();
        for entry in self.db.iterator(mode) {
            let (k, v) = entry.map_err(|e| self.failed("read", e))?;
            let inside = if forward {
                below_end(&k)
            } else {
                above_start(&k)
            };
            if !inside || !take_while(&k) {
                break;
            }
            if above_start(&k) && below_end(&k) {
                out.push((k, v));
            }
        }
        Ok(out)
    }

    /// How many keys the database holds (0 when they are not counted).
    pub(crate) fn len(&self) -> u64 {
        self.count.unwrap_or(0)
    }
}

impl RocksKv {
    /// Removes every key in `[from, to)` (counting them first only when
    /// the keys are counted).
    fn delete_range(&mut self, from: &[u8], to: &[u8]) -> Result<()> {
        if let Some(count) = self.count {
            let gone = self
                .range(Bound::Included(from), Bound::Excluded(to), true, |_| true)?
                .len() as u64;
            if gone == 0 {
                return Ok(());
            }
            self.count = Some(count - gone);
        }
        let mut batch = rocksdb::WriteBatch::default();
        batch.delete_range(from, to);
        self.db.write(batch).map_err(|e| self.failed("write", e))
    }
}

/// How a segmented store reads its keys, Kafka's `KeySchema`: a window
/// store's keys are `[key][window start][sequence number]`, a session
/// store's `[key][session end][session start]`, and the timestamp that
/// picks a key's segment is the window start or the session end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeySchema {
    /// Kafka's `WindowKeySchema`.
    Window,
    /// Kafka's `SessionKeySchema`.
    Session,
}

impl KeySchema {
    /// The bytes after the record key.
    pub(crate) fn suffix_len(self) -> usize {
        match self {
            KeySchema::Window => 12,
            KeySchema::Session => 16,
        }
    }

    /// The record key's bytes of a store key (empty if too short).
    pub(crate) fn key_bytes(self, store_key: &[u8]) -> &[u8] {
        &store_key[..store_key.len().saturating_sub(self.suffix_len())]
    }

    /// The timestamp that picks a store key's segment: the window start,
    /// or the session end.
    pub(crate) fn segment_timestamp(self, store_key: &[u8]) -> i64 {
        let at = store_key.len().saturating_sub(self.suffix_len());
        crate::time::read_i64(store_key, at).unwrap_or(-1)
    }

    /// The second timestamp of a session key: its start.
    fn session_start(store_key: &[u8]) -> i64 {
        crate::time::read_i64(store_key, store_key.len().saturating_sub(8)).unwrap_or(-1)
    }

    /// Whether a store key is one a fetch over these keys and times
    /// returns, Kafka's `hasNextCondition`: a window's start within `[from,
    /// to]`; a session ending at or after `from` and starting at or before
    /// `to`.
    fn matches(
        self,
        store_key: &[u8],
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        from: i64,
        to: i64,
    ) -> bool {
        let key = self.key_bytes(store_key);
        if key_from.is_some_and(|f| key < f) || key_to.is_some_and(|t| key > t) {
            return false;
        }
        let time = self.segment_timestamp(store_key);
        match self {
            KeySchema::Window => time >= from && time <= to,
            KeySchema::Session => time >= from && Self::session_start(store_key) <= to,
        }
    }

    /// The first store key a fetch of exactly `key` can return, Kafka's
    /// `lowerRangeFixedSize`.
    fn lower_fixed(self, key: &[u8], from: i64) -> Vec<u8> {
        let mut out = key.to_vec();
        match self {
            KeySchema::Window => {
                out.extend_from_slice(&from.max(0).to_be_bytes());
                out.extend_from_slice(&0_i32.to_be_bytes());
            }
            KeySchema::Session => {
                out.extend_from_slice(&from.max(0).to_be_bytes());
                out.extend_from_slice(&0_i64.to_be_bytes());
            }
        }
        out
    }

    /// The last store key a fetch of exactly `key` can return, Kafka's
    /// `upperRangeFixedSize`.
    fn upper_fixed(self, key: &[u8], to: i64) -> Vec<u8> {
        let mut out = key.to_vec();
        out.extend_from_slice(&self.max_suffix(to));
        out
    }

    fn max_suffix(self, to: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.suffix_len());
        match self {
            KeySchema::Window => {
                out.extend_from_slice(&to.to_be_bytes());
                out.extend_from_slice(&i32::MAX.to_be_bytes());
            }
            KeySchema::Session => {
                out.extend_from_slice(&i64::MAX.to_be_bytes());
                out.extend_from_slice(&to.to_be_bytes());
            }
        }
        out
    }

    /// The first store key of a fetch from `key` on, Kafka's
    /// `lowerRange`: the key and a suffix of zeros.
    fn lower(self, key: &[u8]) -> Vec<u8> {
        let mut out = key.to_vec();
        out.resize(key.len() + self.suffix_len(), 0);
        out
    }

    /// The last store key of a fetch up to `key`, Kafka's `upperRange`
    /// (`OrderedBytes.upperRange`): the key's bytes while they are not
    /// below the suffix's first byte (at least one), then the largest
    /// suffix, so that longer keys starting with `key` are left to the
    /// key check.
    fn upper(self, key: &[u8], to: i64) -> Vec<u8> {
        let suffix = self.max_suffix(to);
        let first = suffix[0];
        let mut out = Vec::with_capacity(key.len() + suffix.len());
        if first == 0 {
            out.extend_from_slice(key);
        } else {
            for (i, &b) in key.iter().enumerate() {
                if i >= 1 && b < first {
                    break;
                }
                out.push(b);
            }
        }
        out.extend_from_slice(&suffix);
        out
    }
}

/// The bytes of a window or session store in RocksDB, segmented by time as
/// Kafka's `AbstractRocksDBSegmentedBytesStore` keeps them: a key lives in
/// the segment `timestamp / segment interval` of its window start (session
/// end); a put whose segment is older than the one of `stream time -
/// retention` is dropped, and creating a segment drops every segment
/// older than that. Reads go segment by segment, oldest first, and within
/// one by the store keys' bytes; they skip what is older than `stream time
/// - retention + 1` even while its segment lives.
///
/// Kafka keeps each segment in a RocksDB database of its own
/// (`<store>.<segment start>`); here the segments share the store's
/// database, each under an 8-byte prefix (the segment id, sign bit
/// flipped, big-endian): the same reads, one directory.
pub(crate) struct RocksSegmented {
    db: RocksKv,
    schema: KeySchema,
    retention_ms: i64,
    segment_interval_ms: i64,
    /// The live segments' ids.
    segments: std::collections::BTreeSet<i64>,
    observed_stream_time: i64,
}

impl std::fmt::Debug for RocksSegmented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksSegmented")
            .field("db", &self.db)
            .field("schema", &self.schema)
            .field("segment_interval_ms", &self.segment_interval_ms)
            .field("segments", &self.segments)
            .finish_non_exhaustive()
    }
}

/// A segment's key prefix: its id, sign bit flipped, big-endian, so that
/// prefixes sort as ids.
fn segment_prefix(segment: i64) -> [u8; 8] {
    ((segment as u64) ^ (1 << 63)).to_be_bytes()
}

fn with_prefix(segment: i64, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + key.len());
    out.extend_from_slice(&segment_prefix(segment));
    out.extend_from_slice(key);
    out
}

/// Kafka's segment interval for window and session stores:
/// `max(retention / 2, 60 s)`.
pub(crate) fn default_segment_interval(retention_ms: i64) -> i64 {
    (retention_ms / 2).max(60_000)
}

impl RocksSegmented {
    /// Opens (creating it if needed) the database of `store` at `path`;
    /// segments found there are live again until a put drops them.
    pub(crate) fn open(
        store: &str,
        path: &Path,
        schema: KeySchema,
        retention_ms: i64,
        segment_interval_ms: i64,
    ) -> Result<Self> {
        let db = RocksKv::open(store, path, false)?;
        let mut segments = std::collections::BTreeSet::new();
        let mut stream_time = -1;
        for (k, _) in db.range(Bound::Unbounded, Bound::Unbounded, true, |_| true)? {
            if let Some(prefix) = k.get(..8) {
                let mut id = [0_u8; 8];
                id.copy_from_slice(prefix);
                segments.insert((u64::from_be_bytes(id) ^ (1 << 63)) as i64);
                stream_time = stream_time.max(schema.segment_timestamp(&k[8..]));
            }
        }
        Ok(RocksSegmented {
            db,
            schema,
            retention_ms,
            segment_interval_ms: segment_interval_ms.max(1),
            segments,
            observed_stream_time: stream_time,
        })
    }

    /// The store's database, for its errors.
    pub(crate) fn db(&self) -> &RocksKv {
        &self.db
    }

    fn segment_id(&self, timestamp: i64) -> i64 {
        timestamp / self.segment_interval_ms
    }

    /// The earliest timestamp reads return.
    fn min_live_timestamp(&self) -> i64 {
        self.observed_stream_time
            .saturating_sub(self.retention_ms)
            .saturating_add(1)
    }

    /// Writes `value` at `store_key` (removes it for `None`), Kafka's
    /// `put`: moves stream time; `false` when the key's segment has
    /// expired and nothing was written.
    pub(crate) fn put(&mut self, store_key: &[u8], value: Option<&[u8]>) -> Result<bool> {
        let timestamp = self.schema.segment_timestamp(store_key);
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let segment = self.segment_id(timestamp);
        let min_live = self.segment_id(self.observed_stream_time.saturating_sub(self.retention_ms));
        if segment < min_live {
            return Ok(false);
        }
        self.segments.insert(segment);
        let expired: Vec<i64> = self.segments.range(..min_live).copied().collect();
        for old in expired {
            self.db
                .delete_range(&segment_prefix(old), &segment_prefix(old.saturating_add(1)))?;
            self.segments.remove(&old);
        }
        let key = with_prefix(segment, store_key);
        match value {
            Some(v) => {
                self.db.put(&key, v)?;
            }
            None => {
                self.db.delete(&key)?;
            }
        }
        Ok(true)
    }

    /// Removes `store_key` from its segment if that lives, Kafka's
    /// `remove`: moves stream time, creates and drops no segment.
    pub(crate) fn remove(&mut self, store_key: &[u8]) -> Result<()> {
        let timestamp = self.schema.segment_timestamp(store_key);
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let segment = self.segment_id(timestamp);
        if self.segments.contains(&segment) {
            self.db.delete(&with_prefix(segment, store_key))?;
        }
        Ok(())
    }

    /// The bytes at `store_key`, unless older than the retention.
    pub(crate) fn get(&self, store_key: &[u8]) -> Result<Option<Vec<u8>>> {
        let timestamp = self.schema.segment_timestamp(store_key);
        if timestamp < self.min_live_timestamp() {
            return Ok(None);
        }
        let segment = self.segment_id(timestamp);
        if !self.segments.contains(&segment) {
            return Ok(None);
        }
        self.db.get(&with_prefix(segment, store_key))
    }

    /// The live segments between the segments of `from` and `to`, in
    /// time order (the reverse when not `forward`).
    fn segments(&self, from: i64, to: i64, forward: bool) -> Vec<i64> {
        let (lo, hi) = (self.segment_id(from), self.segment_id(to));
        if lo > hi {
            return Vec::new();
        }
        let mut ids: Vec<i64> = self.segments.range(lo..=hi).copied().collect();
        if !forward {
            ids.reverse();
        }
        ids
    }

    /// Kafka's `SegmentIterator`: in each segment, the store keys between
    /// `lo` and `hi` (inclusive; `None`: the segment's first or last),
    /// that the schema's condition keeps.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        segments: Vec<i64>,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
        forward: bool,
        keys: (Option<&[u8]>, Option<&[u8]>),
        from: i64,
        to: i64,
    ) -> Result<Vec<(Box<[u8]>, Box<[u8]>)>> {
        let mut out = Vec::new();
        for segment in segments {
            let start = match lo {
                Some(k) => with_prefix(segment, k),
                None => segment_prefix(segment).to_vec(),
            };
            let (end, end_bound) = match hi {
                Some(k) => (with_prefix(segment, k), true),
                None => (segment_prefix(segment.saturating_add(1)).to_vec(), false),
            };
            let end = if end_bound {
                Bound::Included(end.as_slice())
            } else {
                Bound::Excluded(end.as_slice())
            };
            for (k, v) in self
                .db
                .range(Bound::Included(start.as_slice()), end, forward, |_| true)?
            {
                let store_key = &k[8..];
                if self.schema.matches(store_key, keys.0, keys.1, from, to) {
                    out.push((store_key.into(), v));
                }
            }
        }
        Ok(out)
    }

    /// The entries of exactly `key` in `[from, to]` (window starts; for
    /// sessions: ending at or after `from`, starting at or before `to`),
    /// Kafka's `fetch(key, from, to)`.
    pub(crate) fn fetch_key(
        &self,
        key: &[u8],
        from: i64,
        to: i64,
        forward: bool,
    ) -> Result<Vec<(Box<[u8]>, Box<[u8]>)>> {
        let from = from.max(self.min_live_timestamp());
        let segments = match self.schema {
            KeySchema::Window if to < from => return Ok(Vec::new()),
            KeySchema::Window => self.segments(from, to, forward),
            KeySchema::Session => self.segments(from, i64::MAX, forward),
        };
        let (lo, hi) = (
            self.schema.lower_fixed(key, from),
            self.schema.upper_fixed(key, to),
        );
        self.scan(
            segments,
            Some(&lo),
            Some(&hi),
            forward,
            (Some(key), Some(key)),
            from,
            to,
        )
    }

    /// The entries of the keys between `key_from` and `key_to` (by bytes;
    /// `None`: unbounded) in `[from, to]`, Kafka's `fetch(keyFrom, keyTo,
    /// from, to)`; nothing when `key_from`'s bytes come after `key_to`'s.
    pub(crate) fn fetch_keys(
        &self,
        key_from: Option<&[u8]>,
        key_to: Option<&[u8]>,
        from: i64,
        to: i64,
        forward: bool,
    ) -> Result<Vec<(Box<[u8]>, Box<[u8]>)>> {
        if let (Some(f), Some(t)) = (key_from, key_to)
            && f > t
        {
            return Ok(Vec::new());
        }
        let from = from.max(self.min_live_timestamp());
        let segments = match self.schema {
            KeySchema::Window if to < from => return Ok(Vec::new()),
            KeySchema::Window => self.segments(from, to, forward),
            KeySchema::Session => self.segments(from, i64::MAX, forward),
        };
        let lo = key_from.map(|k| self.schema.lower(k));
        let hi = key_to.map(|k| self.schema.upper(k, to));
        self.scan(
            segments,
            lo.as_deref(),
            hi.as_deref(),
            forward,
            (key_from, key_to),
            from,
            to,
        )
    }

    /// Every entry of the live segments from `from`'s to `to`'s whose
    /// timestamp is in `[from, to]`, Kafka's `fetchAll(from, to)` (`all()`
    /// is `fetch_all(0, i64::MAX)`).
    pub(crate) fn fetch_all(
        &self,
        from: i64,
        to: i64,
        forward: bool,
    ) -> Result<Vec<(Box<[u8]>, Box<[u8]>)>> {
        let from = from.max(self.min_live_timestamp());
        if to < from {
            return Ok(Vec::new());
        }
        let segments = self.segments(from, to, forward);
        self.scan(segments, None, None, forward, (None, None), from, to)
    }
}
