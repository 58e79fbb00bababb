//! The consumer's waiting poll: Kafka's `poll(timeout)`, whose fetches the
//! broker holds in its fetch purgatory (`DelayedFetch`) until
//! `fetch.min.bytes` are readable below the high watermarks or
//! `fetch.max.wait.ms` passes, on the cluster's clock.
//!
//! ```
//! use streams_broker::{Acks, AutoOffsetReset, Cluster, ConsumerConfig, NewTopic, ProducerConfig, ProducerRecord, TopicPartition};
//!
//! let cluster = Cluster::builder().brokers(2).build();
//! cluster.admin().create_topic(NewTopic::new("t", 1).replication_factor(2))?;
//! cluster.cut_link(1, 2)?; // the follower cannot fetch: nothing commits
//! let leader_only = cluster.producer_with(ProducerConfig::new().acks(Acks::One));
//! leader_only.send(ProducerRecord::new("t", "k", "v"))?;
//!
//! let mut consumer = cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
//! consumer.assign([TopicPartition::new("t", 0)]);
//! // Nothing below the high watermark: the fetch waits fetch.max.wait.ms.
//! assert!(consumer.poll_timeout(500)?.is_empty());
//! assert_eq!(cluster.now_ms(), 500);
//! cluster.restore_link(1, 2)?;
//! // The follower catches up within a fetch interval: the fetch completes.
//! assert_eq!(consumer.poll_timeout(5_000)?.len(), 1);
//! assert_eq!(cluster.now_ms(), 510);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::clients::{Consumer, ConsumerRecord};
use crate::error::Result;
use crate::purgatory::Delayed;
use crate::replication::delayed::DelayedFetch;
use crate::topic_partition::TopicPartition;

impl Consumer {
    /// Polls, waiting up to `timeout_ms` on the cluster's clock for
    /// `fetch.min.bytes` to be readable: each fetch that finds fewer waits
    /// in the broker's fetch purgatory until enough is committed or
    /// `fetch.max.wait.ms` passes, and then returns what there is.
    ///
    /// # Errors
    /// As [`Consumer::poll`].
    pub fn poll_timeout(&mut self, timeout_ms: i64) -> Result<Vec<ConsumerRecord>> {
        let cluster = self.cluster().clone();
        let deadline = cluster.now_ms().saturating_add(timeout_ms.max(0));
        let (min_bytes, max_wait) = (
            self.config().fetch_min_bytes,
            self.config().fetch_max_wait_ms,
        );
        loop {
            let assigned: Vec<TopicPartition> = self.assignment().to_vec();
            let mut positions = Vec::with_capacity(assigned.len());
            for tp in assigned {
                let position = self.position(&tp)?;
                positions.push((tp, position));
            }
            let now = cluster.now_ms();
            let readable = cluster.state().readable_bytes(&positions);
            if readable >= min_bytes || now >= deadline || positions.is_empty() {
                return self.poll();
            }
            let wait = max_wait.min(deadline - now);
            let operation = Delayed::new(DelayedFetch::new(min_bytes, readable), wait);
            {
                let mut state = cluster.state();
                let keys: Vec<TopicPartition> =
                    positions.iter().map(|(tp, _)| tp.clone()).collect();
                let _ = state
                    .fetch_purgatory
                    .try_complete_else_watch(&operation, &keys);
                state.pending_fetches.push((operation.clone(), positions));
            }
            while !operation.is_completed() {
                let step = {
                    let state = cluster.state();
                    let until = operation.deadline_ms().unwrap_or(state.now_ms);
                    state
                        .config
                        .replica_fetch_interval_ms
                        .min(until - state.now_ms)
                        .max(1)
                };
                cluster.advance_ms(step);
            }
            if operation.operation().expired() {
                return self.poll();
            }
        }
    }
}
