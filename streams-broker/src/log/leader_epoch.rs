//! The leader-epoch cache (Kafka's `LeaderEpochFileCache`): for every
//! leader epoch a replica has data from, the first offset written in it.
//! A follower asks the leader for the end offset of its last epoch
//! (`OffsetsForLeaderEpoch`, KIP-101/KIP-279) and truncates there instead of
//! to its high watermark, so that a replica never keeps records that the
//! leader of a later epoch does not have.
//!
//! ```
//! use streams_broker::log::LeaderEpochCache;
//!
//! let mut cache = LeaderEpochCache::default();
//! cache.assign(0, 0);
//! cache.assign(2, 40);
//! // Epoch 0 ended where epoch 2 began; epoch 1 never wrote, so it ends
//! // there too, as the largest epoch at or below it (0).
//! assert_eq!(cache.end_offset_for(0, 55), Some((0, 40)));
//! assert_eq!(cache.end_offset_for(1, 55), Some((0, 40)));
//! assert_eq!(cache.end_offset_for(2, 55), Some((2, 55))); // the latest: the log end
//! assert_eq!(cache.end_offset_for(3, 55), None); // newer than any: undefined
//! ```

/// One entry: an epoch and the first offset written in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    /// The leader epoch.
    pub epoch: i32,
    /// The first offset of the epoch.
    pub start_offset: i64,
}

/// A replica's leader epochs, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaderEpochCache {
    entries: Vec<EpochEntry>,
}

impl LeaderEpochCache {
    /// Records that `epoch` starts at `start_offset`; an epoch at or below
    /// the latest is ignored (epochs only grow), and earlier entries that
    /// start at or after `start_offset` go (Kafka keeps the cache monotonic:
    /// an epoch that wrote nothing leaves no entry).
    pub fn assign(&mut self, epoch: i32, start_offset: i64) {
        if self.latest_epoch().is_none_or(|latest| epoch > latest) {
            self.entries.retain(|e| e.start_offset < start_offset);
            self.entries.push(EpochEntry {
                epoch,
                start_offset,
            });
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    /// The latest epoch, if any data was written.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.epoch)
    }

    /// Kafka's `endOffsetFor`: the largest epoch at or below `requested`
    /// with the offset where the next epoch starts (the log end offset for
    /// the latest epoch); `None` (Kafka's undefined epoch and offset) when
    /// `requested` is newer than every epoch but the latest... is not the
    /// latest and no later epoch exists.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> Option<(i32, i64)> {
        if requested < 0 {
            return None;
        }
        if self.latest_epoch() == Some(requested) {
            return Some((requested, log_end_offset));
        }
        let higher = self.entries.iter().find(|e| e.epoch > requested)?;
        let floor = self.entries.iter().rev().find(|e| e.epoch <= requested);
        Some((floor.map_or(requested, |f| f.epoch), higher.start_offset))
    }

    /// Drops the epochs that start at or after `end_offset` (a truncation
    /// of the log's end).
    pub fn truncate_from_end(&mut self, end_offset: i64) {
        self.entries.retain(|e| e.start_offset < end_offset);
    }
}
