//! Partition logs, as Kafka's broker stores them: a [`UnifiedLog`] per
//! partition made of [`LogSegment`]s, configured by a [`LogConfig`].
//!
//! ```
//! use streams_broker::log::{LogConfig, UnifiedLog};
//! use streams_broker::record::{Record, RecordBatchBuilder};
//! use streams_broker::TopicPartition;
//!
//! let config = LogConfig::from_pairs([("internal.segment.bytes", "200")])?;
//! let mut log = UnifiedLog::new(TopicPartition::new("t", 0), config, 0);
//! for i in 0..4 {
//!     let mut batch = RecordBatchBuilder::new(0);
//!     batch.append(&Record::new(Some(b"k".to_vec()), Some(vec![0; 60]), i));
//!     log.append_as_leader(batch.build()?, i)?;
//! }
//! // Each batch is 61 + 72 bytes: one per segment of 200 bytes.
//! assert_eq!(log.segments().len(), 4);
//! assert_eq!((log.log_start_offset(), log.log_end_offset()), (0, 4));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod leader_epoch;
mod producer_state;
mod segment;
mod unified_log;

pub use config::{
    CONFIG_NAMES, CleanupPolicy, ConfigError, LogConfig, MIN_INTERNAL_SEGMENT_BYTES,
    MIN_SEGMENT_BYTES,
};
pub use leader_epoch::{EpochEntry, LeaderEpochCache};
pub use producer_state::{
    AbortedTxn, ProducerStateEntry, ProducerStateError, ProducerStateManager,
};
pub use segment::LogSegment;
pub use unified_log::{LogAppendInfo, SegmentDeletions, UnifiedLog};
