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
    /// estimates it).
    count: u64,
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
    /// Opens (creating it if needed) the database of `store` at `path`.
    pub(crate) fn open(store: &str, path: &Path) -> Result<Self> {
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
        let mut count = 0;
        for entry in db.iterator(IteratorMode::Start) {
            entry.map_err(|e| failed("read", e.into_string()))?;
            count += 1;
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

    /// Sets `key`; returns the old bytes.
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        let old = self.get(key)?;
        self.db
            .put(key, value)
            .map_err(|e| self.failed("write", e))?;
        if old.is_none() {
            self.count += 1;
        }
        Ok(old)
    }

    /// Removes `key`; returns the old bytes.
    pub(crate) fn delete(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let old = self.get(key)?;
        if old.is_some() {
            self.db.delete(key).map_err(|e| self.failed("write", e))?;
            self.count -= 1;
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

    pub(crate) fn len(&self) -> u64 {
        self.count
    }
}
