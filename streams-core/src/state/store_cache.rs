//! Kafka's record cache in front of a Processor API store built with
//! [`with_caching_enabled`](super::BuiltInStoreBuilder::with_caching_enabled)
//! (`CachingKeyValueStore`, `CachingWindowStore`, `CachingSessionStore`
//! without a flush listener).
//!
//! Kafka's caching store keeps writes in its cache, where reads find them,
//! and hands them to the store underneath (whose logging layer writes the
//! changelog) when the task commits, which Kafka's driver does after each
//! record: one changelog record per key changed since the last commit, its
//! latest value (a tombstone for a delete, even of a key the store never
//! had), at the timestamp of the record that wrote it, keys in the order
//! of their latest write. Nothing is forwarded: only the DSL sets a flush
//! listener (the DSL's own cache is `crate::dsl::cache`).
//!
//! Here the store underneath changes at once (reads see the write, as
//! they would through the cache) and the changelog waits: each store keeps
//! its pending writes in a [`PendingWrites`], which its
//! [`StateStore::commit`](super::StateStore::commit) writes out.

use std::collections::BTreeMap;

/// One key's pending write: its latest value (`None` for a delete) and the
/// timestamp of the record that wrote it.
struct Pending<S> {
    seq: u64,
    value: Option<S>,
    timestamp: i64,
}

/// The writes a caching store has not logged yet, by key, kept in the
/// order of each key's latest write (Kafka's `NamedCache` dirty keys).
pub(crate) struct PendingWrites<CK, S> {
    by_key: BTreeMap<CK, Pending<S>>,
    seq: u64,
}

impl<CK: Ord, S> PendingWrites<CK, S> {
    pub(crate) fn new() -> Self {
        PendingWrites {
            by_key: BTreeMap::new(),
            seq: 0,
        }
    }

    /// Records a write of `value` (`None`: a delete) to `key` by a record
    /// at `timestamp`; it is now the key's latest.
    pub(crate) fn write(&mut self, key: CK, value: Option<S>, timestamp: i64) {
        self.seq += 1;
        self.by_key.insert(
            key,
            Pending {
                seq: self.seq,
                value,
                timestamp,
            },
        );
    }

    /// The pending writes, in the order of their latest write, taken out.
    pub(crate) fn drain(&mut self) -> Vec<(CK, Option<S>, i64)> {
        let mut out: Vec<(u64, CK, Option<S>, i64)> = std::mem::take(&mut self.by_key)
            .into_iter()
            .map(|(k, p)| (p.seq, k, p.value, p.timestamp))
            .collect();
        out.sort_by_key(|(seq, ..)| *seq);
        out.into_iter().map(|(_, k, v, t)| (k, v, t)).collect()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::PendingWrites;

    #[test]
    fn each_key_once_in_the_order_of_its_latest_write() {
        let mut pending = PendingWrites::new();
        pending.write("a", Some(1), 10);
        pending.write("b", Some(2), 11);
        pending.write("a", None, 12);
        pending.write("c", Some(3), 13);
        assert_eq!(
            pending.drain(),
            [("b", Some(2), 11), ("a", None, 12), ("c", Some(3), 13)]
        );
        assert!(pending.is_empty());
    }
}
