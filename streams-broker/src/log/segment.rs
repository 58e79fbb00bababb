//! One segment of a partition's log (Kafka's `LogSegment`): the batches
//! from its base offset on, in the order they were appended, with the
//! facts the broker decides by: its size in bytes, its largest timestamp
//! (retention), the first batch's timestamp (rolling by `segment.ms`) and
//! its last-modified time (the pre-KIP-534 tombstone horizon).

use crate::record::RecordBatch;

/// A segment: batches from `base_offset` on.
#[derive(Debug, Clone)]
pub struct LogSegment {
    base_offset: i64,
    batches: Vec<RecordBatch>,
    size: usize,
    largest_timestamp: i64,
    first_batch_timestamp: Option<i64>,
    created_ms: i64,
    last_modified_ms: i64,
}

impl LogSegment {
    /// An empty segment starting at `base_offset`, created at `now_ms`.
    pub fn new(base_offset: i64, now_ms: i64) -> Self {
        Self {
            base_offset,
            batches: Vec::new(),
            size: 0,
            largest_timestamp: -1,
            first_batch_timestamp: None,
            created_ms: now_ms,
            last_modified_ms: now_ms,
        }
    }

    /// A segment holding `batches` (as the cleaner writes one), modified
    /// last at `last_modified_ms`.
    pub fn from_batches(
        base_offset: i64,
        batches: Vec<RecordBatch>,
        created_ms: i64,
        last_modified_ms: i64,
    ) -> Self {
        let mut segment = Self::new(base_offset, created_ms);
        for batch in batches {
            segment.push(batch);
        }
        segment.last_modified_ms = last_modified_ms;
        segment
    }

    fn push(&mut self, batch: RecordBatch) {
        self.size += batch.size_in_bytes();
        if self.first_batch_timestamp.is_none() {
            self.first_batch_timestamp = Some(batch.max_timestamp());
        }
        self.largest_timestamp = self.largest_timestamp.max(batch.max_timestamp());
        self.batches.push(batch);
    }

    /// Appends a batch whose offsets the log has assigned.
    pub(crate) fn append(&mut self, batch: RecordBatch, now_ms: i64) {
        self.push(batch);
        self.last_modified_ms = now_ms;
    }

    /// The first offset this segment can hold.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The offset after the last batch, or the base offset when empty
    /// (Kafka's `readNextOffset`).
    pub fn next_offset(&self) -> i64 {
        self.batches
            .last()
            .map_or(self.base_offset, RecordBatch::next_offset)
    }

    /// The batches, oldest first.
    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// The segment's size in bytes: its batches as they are on the wire.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many records the segment holds.
    pub fn record_count(&self) -> usize {
        self.batches.iter().map(|b| b.record_count() as usize).sum()
    }

    /// The largest timestamp of any batch, -1 when empty (retention by
    /// time compares it with `retention.ms`).
    pub fn largest_timestamp(&self) -> i64 {
        self.largest_timestamp
    }

    /// The first batch's max timestamp (Kafka's `rollingBasedTimestamp`).
    pub fn first_batch_timestamp(&self) -> Option<i64> {
        self.first_batch_timestamp
    }

    /// When the segment was created, on the cluster's clock.
    pub fn created_ms(&self) -> i64 {
        self.created_ms
    }

    /// When the segment was last written, on the cluster's clock.
    pub fn last_modified_ms(&self) -> i64 {
        self.last_modified_ms
    }

    /// Kafka's `timeWaitedForRoll`: the incoming batch's timestamp less
    /// the first batch's when that is known, else the time since creation.
    pub fn time_waited_for_roll(&self, now_ms: i64, incoming_max_timestamp: i64) -> i64 {
        match self.first_batch_timestamp {
            Some(ts) if ts >= 0 => incoming_max_timestamp.saturating_sub(ts),
            _ => now_ms.saturating_sub(self.created_ms),
        }
    }

    /// Kafka's `shouldRoll`: the batch does not fit in `segment_bytes`, or
    /// the segment is not empty and has waited `segment_ms`.
    pub fn should_roll(
        &self,
        segment_bytes: i32,
        segment_ms: i64,
        batch_size: usize,
        incoming_max_timestamp: i64,
        now_ms: i64,
    ) -> bool {
        let max = usize::try_from(segment_bytes).unwrap_or(0);
        let too_big = self.size > max.saturating_sub(batch_size);
        too_big
            || (self.size > 0
                && self.time_waited_for_roll(now_ms, incoming_max_timestamp) > segment_ms)
    }
}
