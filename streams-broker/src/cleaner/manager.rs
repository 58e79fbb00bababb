//! Which log to clean and how much of it (Kafka's `LogCleanerManager`):
//! the first dirty offset from the cleaner's checkpoint, the first
//! uncleanable offset (the active segment, the last stable offset and
//! `min.compaction.lag.ms` bound it), the dirty ratio, and whether
//! `max.compaction.lag.ms` forces a cleaning now.

use crate::log::UnifiedLog;

/// The cleanable part of one log, as Kafka's `LogToClean` measures it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogToClean {
    /// Where the dirty part starts: the cleaner's checkpoint, or the log
    /// start offset when there is none or it is out of range.
    pub first_dirty_offset: i64,
    /// The base offset of the first segment the cleaner may not touch.
    pub first_uncleanable_offset: i64,
    /// Bytes of the segments before the first dirty offset.
    pub clean_bytes: u64,
    /// Bytes of the segments from the first dirty offset to the first
    /// uncleanable one.
    pub cleanable_bytes: u64,
    /// Whether a record has waited `max.compaction.lag.ms`.
    pub need_compaction_now: bool,
}

impl LogToClean {
    /// Measures `log` at `now_ms` with the cleaner's checkpoint.
    pub fn measure(log: &UnifiedLog, checkpoint: Option<i64>, now_ms: i64) -> Self {
        let config = log.config();
        let log_start = log.log_start_offset();
        let first_dirty = match checkpoint {
            Some(cp) if cp >= log_start && cp <= log.log_end_offset() => cp,
            _ => log_start,
        };
        let segments = log.segments();
        let active_base = log.active_segment().base_offset();
        let lag = config.min_compaction_lag_ms.max(0);
        // Never at or past the last stable offset (an open transaction's data
        // may still be aborted), which is at most the high watermark.
        let mut first_uncleanable = log.last_stable_offset().min(active_base);
        if lag > 0 {
            let dirty = log.segment_range(first_dirty, active_base);
            if let Some(s) = segments[dirty]
                .iter()
                .find(|s| s.largest_timestamp() > now_ms.saturating_sub(lag))
            {
                first_uncleanable = first_uncleanable.min(s.base_offset());
            }
        }
        let first_uncleanable = first_uncleanable.max(first_dirty);

        // Kafka's calculateCleanableBytes: round the bound down to the base
        // of the (non-active) segment holding it.
        let holding = log.segment_range(first_uncleanable, active_base);
        let uncleanable_base = segments[holding]
            .first()
            .map_or(active_base, |s| s.base_offset());
        let size_of = |range: std::ops::Range<usize>| -> u64 {
            segments[range].iter().map(|s| s.size() as u64).sum()
        };
        let clean_bytes = size_of(0..segments.partition_point(|s| s.base_offset() < first_dirty));
        let cleanable_bytes = if uncleanable_base > first_dirty.min(uncleanable_base) {
            size_of(log.segment_range(first_dirty.min(uncleanable_base), uncleanable_base))
        } else {
            0
        };

        let max_lag = config.max_compaction_lag_ms.max(0);
        let clean_until = now_ms.saturating_sub(max_lag);
        let dirty_non_active = log.segment_range(first_dirty, active_base);
        let earliest_dirty = segments[dirty_non_active]
            .iter()
            .filter_map(|s| s.first_batch_timestamp())
            .filter(|ts| *ts > 0)
            .min();
        let need_compaction_now = earliest_dirty.is_some_and(|ts| ts < clean_until);

        Self {
            first_dirty_offset: first_dirty,
            first_uncleanable_offset: uncleanable_base,
            clean_bytes,
            cleanable_bytes,
            need_compaction_now,
        }
    }

    /// Clean plus cleanable bytes.
    pub fn total_bytes(&self) -> u64 {
        self.clean_bytes + self.cleanable_bytes
    }

    /// The dirty ratio: cleanable bytes over total bytes (0 for an empty
    /// log).
    pub fn cleanable_ratio(&self) -> f64 {
        if self.total_bytes() == 0 {
            0.0
        } else {
            self.cleanable_bytes as f64 / self.total_bytes() as f64
        }
    }

    /// Whether the cleaner would pick this log: it is not empty, and its
    /// dirty ratio is above `min_cleanable_dirty_ratio` or
    /// `max.compaction.lag.ms` has passed with something to clean.
    pub fn is_cleanable(&self, min_cleanable_dirty_ratio: f64) -> bool {
        self.total_bytes() > 0
            && ((self.need_compaction_now && self.cleanable_bytes > 0)
                || self.cleanable_ratio() > min_cleanable_dirty_ratio)
    }
}
