//! One partition's log (Kafka's `UnifiedLog`): segments in offset order,
//! the log start offset, the log end offset and the high watermark, and
//! the operations that move them: append, roll, read, retention and
//! delete-records.
//!
//! Offsets are given by the log, one per record, and never renumbered:
//! the cleaner leaves gaps, retention and delete-records move the log start
//! offset forward, never back.
//!
//! Transactions: the log keeps its producers' state
//! ([`ProducerStateManager`]): a batch of a fenced epoch or out of sequence
//! is refused, and the last stable offset ([`UnifiedLog::last_stable_offset`])
//! is the first offset of the earliest open transaction, or the high
//! watermark; `read_committed` fetches read below it.

use crate::error::{BrokerError, Result};
use crate::log::producer_state::{AbortedTxn, ProducerStateError, ProducerStateManager};
use crate::log::{LeaderEpochCache, LogConfig, LogSegment};
use crate::record::{LogRecord, RecordBatch, TimestampType};
use crate::topic_partition::TopicPartition;

/// What an append did (Kafka's `LogAppendInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppendInfo {
    /// The offset of the batch's first record.
    pub first_offset: i64,
    /// The offset of the batch's last record.
    pub last_offset: i64,
    /// The batch's largest timestamp, as stored.
    pub max_timestamp: i64,
    /// The broker's time stamped on the batch, for `LogAppendTime` topics.
    pub log_append_time: Option<i64>,
    /// How many records the batch held.
    pub record_count: i32,
}

/// Why segments were deleted by [`UnifiedLog::delete_old_segments`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentDeletions {
    /// Segments wholly below the log start offset.
    pub log_start_offset_breached: usize,
    /// Segments removed to bring the log under `retention.bytes`.
    pub size_breached: usize,
    /// Segments whose records are all older than `retention.ms`.
    pub time_breached: usize,
}

impl SegmentDeletions {
    /// All segments deleted.
    pub fn total(&self) -> usize {
        self.log_start_offset_breached + self.size_breached + self.time_breached
    }
}

/// A partition's log.
#[derive(Debug, Clone)]
pub struct UnifiedLog {
    topic_partition: TopicPartition,
    config: LogConfig,
    segments: Vec<LogSegment>,
    log_start_offset: i64,
    log_end_offset: i64,
    high_watermark: i64,
    leader_epoch: i32,
    epoch_cache: LeaderEpochCache,
    producer_state: ProducerStateManager,
}

impl UnifiedLog {
    /// An empty log with one empty segment at offset 0.
    pub fn new(topic_partition: TopicPartition, config: LogConfig, now_ms: i64) -> Self {
        Self {
            topic_partition,
            config,
            segments: vec![LogSegment::new(0, now_ms)],
            log_start_offset: 0,
            log_end_offset: 0,
            high_watermark: 0,
            leader_epoch: 0,
            epoch_cache: LeaderEpochCache::default(),
            producer_state: ProducerStateManager::default(),
        }
    }

    /// The topic and partition.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.topic_partition
    }

    /// The log's topic configs.
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    pub(crate) fn set_config(&mut self, config: LogConfig) {
        self.config = config;
    }

    /// The first offset a consumer may read.
    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// The offset the next record will get.
    pub fn log_end_offset(&self) -> i64 {
        self.log_end_offset
    }

    /// The offset up to which records are committed and readable (the log
    /// end offset on a single broker).
    pub fn high_watermark(&self) -> i64 {
        self.high_watermark
    }

    /// The last stable offset (LSO): the first offset of the earliest
    /// transaction that is open or whose marker is not yet below the high
    /// watermark, else the high watermark. `read_committed` consumers read
    /// below it.
    pub fn last_stable_offset(&self) -> i64 {
        self.first_unstable_offset()
            .map_or(self.high_watermark, |o| o.min(self.high_watermark))
    }

    /// The first unstable offset, if a transaction is open or unreplicated;
    /// never below the log start offset (delete-records may remove an open
    /// transaction's first records, as Kafka's
    /// `maybeIncrementFirstUnstableOffset` allows for).
    pub fn first_unstable_offset(&self) -> Option<i64> {
        self.producer_state
            .first_unstable_offset(self.high_watermark)
            .map(|o| o.max(self.log_start_offset))
    }

    /// The producers' state: epochs, sequences, open transactions and the
    /// aborted-transactions index.
    pub fn producer_state(&self) -> &ProducerStateManager {
        &self.producer_state
    }

    /// The aborted transactions a fetch of `[start_offset, upper_bound)`
    /// must skip (Kafka's `collectAbortedTransactions`).
    pub fn collect_aborted_transactions(
        &self,
        start_offset: i64,
        upper_bound: i64,
    ) -> Vec<AbortedTxn> {
        self.producer_state
            .aborted_transactions(start_offset, upper_bound)
    }

    /// The leader epoch stamped on appended batches.
    pub fn leader_epoch(&self) -> i32 {
        self.leader_epoch
    }

    /// The segments, oldest first; never empty, the last is the active one.
    pub fn segments(&self) -> &[LogSegment] {
        &self.segments
    }

    /// The active segment, the one appends go to.
    pub fn active_segment(&self) -> &LogSegment {
        // `segments` is never empty: every operation that removes segments
        // rolls a new one first.
        &self.segments[self.segments.len() - 1]
    }

    fn active_segment_mut(&mut self) -> &mut LogSegment {
        let last = self.segments.len() - 1;
        &mut self.segments[last]
    }

    /// The log's size in bytes.
    pub fn size(&self) -> usize {
        self.segments.iter().map(LogSegment::size).sum()
    }

    fn error_out_of_range(&self, offset: i64) -> BrokerError {
        BrokerError::OffsetOutOfRange {
            topic: self.topic_partition.topic.clone(),
            partition: self.topic_partition.partition,
            offset,
            log_start_offset: self.log_start_offset,
            high_watermark: self.high_watermark,
        }
    }

    /// Appends a batch as the leader: checks its size against
    /// `max.message.bytes`, assigns offsets from the log end offset, stamps
    /// the leader epoch (and the broker's time on `LogAppendTime` topics),
    /// rolls the active segment when the batch does not fit or it has
    /// waited `segment.ms`, and moves the log end offset and the high
    /// watermark past it.
    ///
    /// A batch with a producer id is checked against the producer's state
    /// first (fenced epochs, sequences) and then updates it: a
    /// transactional batch opens its producer's transaction, a marker
    /// closes it.
    ///
    /// # Errors
    /// [`BrokerError::RecordTooLarge`] for a batch above
    /// `max.message.bytes`, [`BrokerError::InvalidProducerEpoch`] for a
    /// zombie's batch, [`BrokerError::OutOfOrderSequence`]; nothing is
    /// appended then.
    pub fn append_as_leader(&mut self, batch: RecordBatch, now_ms: i64) -> Result<LogAppendInfo> {
        let info = self.append_as_replicated_leader(batch, now_ms)?;
        self.high_watermark = self.log_end_offset;
        self.producer_state
            .on_high_watermark_update(self.high_watermark);
        Ok(info)
    }

    /// [`append_as_leader`](UnifiedLog::append_as_leader) without moving the
    /// high watermark: with followers, it moves when they have the records.
    pub(crate) fn append_as_replicated_leader(
        &mut self,
        batch: RecordBatch,
        now_ms: i64,
    ) -> Result<LogAppendInfo> {
        let size = batch.size_in_bytes();
        if size > usize::try_from(self.config.max_message_bytes).unwrap_or(0) {
            return Err(BrokerError::RecordTooLarge {
                topic: self.topic_partition.topic.clone(),
                partition: self.topic_partition.partition,
                size,
                max: self.config.max_message_bytes,
            });
        }
        if let Err(err) = self.producer_state.check(&batch) {
            let (topic, partition) = (
                self.topic_partition.topic.clone(),
                self.topic_partition.partition,
            );
            return Err(match err {
                ProducerStateError::InvalidProducerEpoch {
                    producer_id,
                    epoch,
                    current_epoch,
                } => BrokerError::InvalidProducerEpoch {
                    topic,
                    partition,
                    producer_id,
                    epoch,
                    current_epoch,
                },
                ProducerStateError::OutOfOrderSequence {
                    producer_id,
                    expected,
                    got,
                } => BrokerError::OutOfOrderSequence {
                    topic,
                    partition,
                    producer_id,
                    expected,
                    got,
                },
            });
        }
        // Offsets and the leader epoch are written into the batch itself
        // when the producer handed over its only reference (no copy).
        let mut batch = batch.into_stamped(self.log_end_offset, self.leader_epoch);
        let mut log_append_time = None;
        if self.config.message_timestamp_type == TimestampType::LogAppendTime {
            batch = batch.with_log_append_time(now_ms);
            log_append_time = Some(now_ms);
        }
        self.maybe_roll(size, batch.max_timestamp(), now_ms);
        let info = LogAppendInfo {
            first_offset: batch.base_offset(),
            last_offset: batch.last_offset(),
            max_timestamp: batch.max_timestamp(),
            log_append_time,
            record_count: batch.record_count(),
        };
        self.epoch_cache
            .assign(self.leader_epoch, batch.base_offset());
        self.log_end_offset = batch.next_offset();
        self.producer_state.update(&batch);
        self.active_segment_mut().append(batch, now_ms);
        Ok(info)
    }

    /// Appends batches fetched from the leader as they are (offsets and
    /// leader epochs kept), as a follower does; batches at or below the log
    /// end offset are skipped.
    pub(crate) fn append_as_follower(&mut self, batches: &[RecordBatch], now_ms: i64) {
        for batch in batches {
            // A batch that starts below the log end offset cannot be
            // appended in part (Kafka raises UnexpectedAppendOffset).
            if batch.base_offset() < self.log_end_offset {
                continue;
            }
            self.maybe_roll(batch.size_in_bytes(), batch.max_timestamp(), now_ms);
            self.epoch_cache
                .assign(batch.partition_leader_epoch(), batch.base_offset());
            self.log_end_offset = batch.next_offset();
            // A follower keeps its producers' state as the leader does, so
            // that it knows the open transactions if it becomes leader.
            self.producer_state.update(batch);
            self.active_segment_mut().append(batch.clone(), now_ms);
        }
    }

    /// Removes every batch from `offset` on (a follower truncating to where
    /// its log and the leader's agree); the high watermark and the log
    /// start offset stay at or below the new end.
    pub(crate) fn truncate_to(&mut self, offset: i64, now_ms: i64) {
        if offset >= self.log_end_offset {
            // No records to remove, but an epoch that starts here and wrote
            // nothing may conflict with the leader's (Kafka's truncateTo
            // always truncates the epoch cache).
            self.epoch_cache
                .truncate_from_end(offset.max(self.log_start_offset));
            return;
        }
        let offset = offset.max(self.log_start_offset);
        let keep = self
            .segments
            .partition_point(|s| s.base_offset() < offset)
            .max(1);
        self.segments.truncate(keep);
        let last = &self.segments[keep - 1];
        // Batches are whole: one that straddles the offset goes too.
        let kept: Vec<RecordBatch> = last
            .batches()
            .iter()
            .filter(|b| b.next_offset() <= offset)
            .cloned()
            .collect();
        let rebuilt = LogSegment::from_batches(last.base_offset(), kept, last.created_ms(), now_ms);
        self.segments[keep - 1] = rebuilt;
        self.log_end_offset = self.segments[keep - 1]
            .next_offset()
            .max(self.log_start_offset);
        self.high_watermark = self.high_watermark.min(self.log_end_offset);
        self.epoch_cache.truncate_from_end(self.log_end_offset);
        // Kafka reloads the producer state after a truncation; here it is
        // rebuilt from the batches left (the aborted-transactions index
        // below the cut is kept, as Kafka keeps its index files).
        let end = self.log_end_offset;
        self.producer_state = ProducerStateManager::rebuild(
            &self.producer_state,
            end,
            self.segments.iter().flat_map(|s| s.batches().iter()),
        );
        self.producer_state
            .on_high_watermark_update(self.high_watermark);
    }

    /// The leader-epoch cache.
    pub fn epoch_cache(&self) -> &LeaderEpochCache {
        &self.epoch_cache
    }

    /// This log's answer to `OffsetsForLeaderEpoch(epoch)`.
    pub fn end_offset_for_epoch(&self, epoch: i32) -> Option<(i32, i64)> {
        self.epoch_cache.end_offset_for(epoch, self.log_end_offset)
    }

    /// Takes over as leader in `epoch`: its appends carry the epoch, and
    /// the epoch starts at the log end offset (Kafka's `makeLeader`).
    pub(crate) fn become_leader(&mut self, epoch: i32) {
        self.leader_epoch = epoch;
        self.epoch_cache.assign(epoch, self.log_end_offset);
    }

    pub(crate) fn set_high_watermark(&mut self, hw: i64) {
        self.high_watermark = hw.clamp(0, self.log_end_offset);
        self.producer_state
            .on_high_watermark_update(self.high_watermark);
    }

    /// The batches from `start_offset` up to the log end offset (what a
    /// follower fetches), at most `max_records` records.
    ///
    /// # Errors
    /// [`BrokerError::OffsetOutOfRange`] outside the log.
    pub(crate) fn read_for_follower(
        &self,
        start_offset: i64,
        max_records: usize,
    ) -> Result<Vec<RecordBatch>> {
        if start_offset < self.log_start_offset || start_offset > self.log_end_offset {
            return Err(self.error_out_of_range(start_offset));
        }
        let mut out = Vec::new();
        let mut records = 0usize;
        let first = self
            .segments
            .partition_point(|s| s.next_offset() <= start_offset);
        for segment in &self.segments[first..] {
            let batches = segment.batches();
            let from = batches.partition_point(|b| b.next_offset() <= start_offset);
            for batch in &batches[from..] {
                if records >= max_records {
                    return Ok(out);
                }
                records += batch.record_count() as usize;
                out.push(batch.clone());
            }
        }
        Ok(out)
    }

    fn maybe_roll(&mut self, batch_size: usize, incoming_max_timestamp: i64, now_ms: i64) {
        let (bytes, ms) = (self.config.segment_bytes, self.config.segment_ms);
        if self
            .active_segment()
            .should_roll(bytes, ms, batch_size, incoming_max_timestamp, now_ms)
        {
            self.roll(now_ms);
        }
    }

    /// Starts a new active segment at the log end offset (nothing happens
    /// when the active segment is empty).
    pub fn roll(&mut self, now_ms: i64) {
        if self.active_segment().size() == 0 {
            return;
        }
        self.segments
            .push(LogSegment::new(self.log_end_offset, now_ms));
    }

    /// The batches a fetch from `start_offset` returns: those holding
    /// offsets from `start_offset` up to the high watermark, until
    /// `max_records` records at or after `start_offset` are covered.
    /// A fetch at the high watermark returns nothing.
    ///
    /// # Errors
    /// [`BrokerError::OffsetOutOfRange`] when `start_offset` is below the
    /// log start offset or above the log end offset.
    pub fn read(&self, start_offset: i64, max_records: usize) -> Result<Vec<RecordBatch>> {
        Ok(self
            .read_batches(start_offset, max_records)?
            .into_iter()
            .cloned()
            .collect())
    }

    /// [`read`](UnifiedLog::read), the batches borrowed from the log (the
    /// consumer decodes them under the cluster's lock, without a clone).
    pub(crate) fn read_batches(
        &self,
        start_offset: i64,
        max_records: usize,
    ) -> Result<Vec<&RecordBatch>> {
        self.read_batches_below(start_offset, max_records, self.high_watermark)
    }

    /// [`read_batches`](UnifiedLog::read_batches) up to `max_offset` (at
    /// most the high watermark): the last stable offset for a
    /// `read_committed` fetch.
    pub(crate) fn read_batches_below(
        &self,
        start_offset: i64,
        max_records: usize,
        max_offset: i64,
    ) -> Result<Vec<&RecordBatch>> {
        let max_offset = max_offset.min(self.high_watermark);
        if start_offset < self.log_start_offset || start_offset > self.log_end_offset {
            return Err(self.error_out_of_range(start_offset));
        }
        let mut out = Vec::new();
        let mut records = 0usize;
        let first = self
            .segments
            .partition_point(|s| s.next_offset() <= start_offset);
        for segment in &self.segments[first..] {
            let batches = segment.batches();
            let from = batches.partition_point(|b| b.next_offset() <= start_offset);
            for batch in &batches[from..] {
                if batch.next_offset() > max_offset || records >= max_records {
                    return Ok(out);
                }
                let skipped = if batch.base_offset() < start_offset {
                    batch
                        .record_keys()
                        .take_while(|r| r.offset < start_offset)
                        .count()
                } else {
                    0
                };
                records += (batch.record_count() as usize).saturating_sub(skipped);
                out.push(batch);
            }
        }
        Ok(out)
    }

    /// Every record the log holds from the log start offset, in offset
    /// order (for tests and inspection).
    pub fn records(&self) -> Vec<LogRecord> {
        self.segments
            .iter()
            .flat_map(|s| s.batches().iter())
            .filter(|b| !b.is_control())
            .flat_map(RecordBatch::records)
            .filter(|r| r.offset >= self.log_start_offset)
            .collect()
    }

    /// Moves the log start offset to `offset` if that is higher (Kafka's
    /// `maybeIncrementLogStartOffset`); returns the log start offset.
    ///
    /// # Errors
    /// [`BrokerError::OffsetOutOfRange`] when `offset` is above the high
    /// watermark; nothing changes then.
    pub fn maybe_increment_log_start_offset(&mut self, offset: i64) -> Result<i64> {
        if offset > self.high_watermark {
            return Err(self.error_out_of_range(offset));
        }
        if offset > self.log_start_offset {
            self.log_start_offset = offset;
            self.producer_state.on_log_start_offset(offset);
        }
        Ok(self.log_start_offset)
    }

    /// The first offset whose record has a timestamp at or after
    /// `timestamp`, with that record's timestamp (Kafka's
    /// `fetchOffsetByTimestamp`); `None` when no record is that late.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<(i64, i64)> {
        self.segments
            .iter()
            .filter(|s| s.largest_timestamp() >= timestamp)
            .flat_map(|s| s.batches().iter())
            .filter(|b| !b.is_control() && b.max_timestamp() >= timestamp)
            .flat_map(RecordBatch::records)
            .find(|r| r.offset >= self.log_start_offset && r.timestamp >= timestamp)
            .map(|r| (r.offset, r.timestamp))
    }

    /// The offset and timestamp of the record with the largest timestamp,
    /// as Kafka's `fetchOffsetByTimestamp(MAX_TIMESTAMP)` finds it: the
    /// first batch whose max timestamp is the log's largest, and in it the
    /// first record with that timestamp. Like Kafka, it looks at every
    /// batch the log still holds. `None` for a log without records.
    pub fn offset_of_max_timestamp(&self) -> Option<(i64, i64)> {
        let mut best: Option<&RecordBatch> = None;
        for batch in self
            .segments
            .iter()
            .flat_map(|s| s.batches().iter())
            .filter(|b| !b.is_control() && b.record_count() > 0)
        {
            if best.is_none_or(|b| batch.max_timestamp() > b.max_timestamp()) {
                best = Some(batch);
            }
        }
        let batch = best?;
        let max = batch.max_timestamp();
        batch
            .records()
            .find(|r| r.timestamp == max)
            .map(|r| (r.offset, r.timestamp))
    }

    /// Runs retention as Kafka's `deleteOldSegments` does: segments wholly
    /// below the log start offset always go; with `delete` in
    /// `cleanup.policy`, the oldest segments go while the log is larger than
    /// `retention.bytes`, and while all their records are older than
    /// `retention.ms`. A segment at or above the high watermark is never
    /// deleted; when every segment goes, an empty one is rolled first, so
    /// the log start offset becomes the log end offset.
    pub fn delete_old_segments(&mut self, now_ms: i64) -> SegmentDeletions {
        let mut deletions = SegmentDeletions {
            log_start_offset_breached: self.delete_log_start_offset_breached(now_ms),
            ..SegmentDeletions::default()
        };
        if self.config.cleanup_policy.delete() {
            deletions.size_breached = self.delete_size_breached(now_ms);
            deletions.time_breached = self.delete_time_breached(now_ms);
        }
        deletions
    }

    fn delete_log_start_offset_breached(&mut self, now_ms: i64) -> usize {
        let log_start = self.log_start_offset;
        self.delete_segments_while(now_ms, |segment, next| {
            let _ = segment;
            next.is_some_and(|n| n.base_offset() <= log_start)
        })
    }

    fn delete_size_breached(&mut self, now_ms: i64) -> usize {
        let retention = self.config.retention_bytes;
        let size = i64::try_from(self.size()).unwrap_or(i64::MAX);
        if retention < 0 || size < retention {
            return 0;
        }
        let mut diff = size - retention;
        self.delete_segments_while(now_ms, move |segment, _| {
            let segment_size = i64::try_from(segment.size()).unwrap_or(i64::MAX);
            if diff - segment_size >= 0 {
                diff -= segment_size;
                true
            } else {
                false
            }
        })
    }

    fn delete_time_breached(&mut self, now_ms: i64) -> usize {
        let retention = self.config.retention_ms;
        if retention < 0 {
            return 0;
        }
        self.delete_segments_while(now_ms, |segment, _| {
            now_ms.saturating_sub(segment.largest_timestamp()) > retention
        })
    }

    /// Kafka's `deletableSegments` + `deleteSegments`: the leading segments
    /// for which `predicate` holds, below the high watermark, never an empty
    /// active segment.
    fn delete_segments_while(
        &mut self,
        now_ms: i64,
        mut predicate: impl FnMut(&LogSegment, Option<&LogSegment>) -> bool,
    ) -> usize {
        let mut deletable = 0;
        for (i, segment) in self.segments.iter().enumerate() {
            let next = self.segments.get(i + 1);
            let is_last_and_empty = next.is_none() && segment.size() == 0;
            let upper_bound = next.map_or(self.log_end_offset, LogSegment::base_offset);
            let eligible = self.high_watermark >= upper_bound && predicate(segment, next);
            if eligible && !is_last_and_empty {
                deletable += 1;
            } else {
                break;
            }
        }
        if deletable == 0 {
            return 0;
        }
        if deletable == self.segments.len() {
            self.segments
                .push(LogSegment::new(self.log_end_offset, now_ms));
        }
        self.segments.drain(..deletable);
        let new_start = self.segments[0].base_offset();
        if new_start > self.log_start_offset {
            self.log_start_offset = new_start;
            self.producer_state.on_log_start_offset(new_start);
        }
        deletable
    }

    /// Replaces the segments whose base offsets are in `replaced` (a
    /// contiguous run, as the cleaner groups them) with `cleaned`.
    pub(crate) fn replace_segments(
        &mut self,
        first_index: usize,
        count: usize,
        cleaned: LogSegment,
    ) {
        self.segments
            .splice(first_index..first_index + count, std::iter::once(cleaned));
    }

    /// The cleaner's rewrite of the aborted-transactions index for the
    /// offsets `[from, to)` it cleaned.
    pub(crate) fn on_cleaned(&mut self, from: i64, to: i64, kept: &[AbortedTxn]) {
        self.producer_state.on_cleaned(from, to, kept);
    }

    /// The indexes of the segments that overlap offsets `[from, to)`.
    pub(crate) fn segment_range(&self, from: i64, to: i64) -> std::ops::Range<usize> {
        // Kafka's `logSegments(from, to)`: from the segment holding `from`
        // (the last one based at or below it) to the last based below `to`.
        let start = self
            .segments
            .partition_point(|s| s.base_offset() <= from)
            .saturating_sub(1);
        let end = self.segments.partition_point(|s| s.base_offset() < to);
        start..end.max(start)
    }
}
