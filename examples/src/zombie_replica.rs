//! KAFKA-6880, the zombie replica, on a three-broker simulated cluster,
//! with the ticket's offsets: in epoch 0 broker 1 leads at 50, broker 2 has
//! 50, broker 3 has 40, and the high watermark is 40. Broker 2 pauses (a
//! long GC pause) and misses the election of broker 3; broker 1 leads again
//! later; broker 2 comes back believing epoch 0.
//!
//! With leader epochs (KIP-101/KIP-320, Kafka since 2.0) the zombie is
//! fenced (`FENCED_LEADER_EPOCH`), learns epoch 2, truncates to where epoch
//! 0 ended on the leader (40), and its ten uncommitted records never reach
//! a consumer. Under the pre-KIP-101 rules it fetches on from offset 50,
//! keeps them, rejoins the ISR with a log that diverges from the leader's,
//! and when it later leads, consumers read them in place of acknowledged
//! records.
//!
//! ```
//! use streams_broker::ReplicationMode;
//! use streams_examples::zombie_replica;
//!
//! let fixed = zombie_replica::run(ReplicationMode::LeaderEpochs)?;
//! assert!(fixed.read_after_failover.iter().all(|v| !v.starts_with("uncommitted")));
//! let legacy = zombie_replica::run(ReplicationMode::LegacyHighWatermark)?;
//! assert_eq!(legacy.read_after_failover[0], "uncommitted-40");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use streams_broker::record::Record;
use streams_broker::{
    Acks, AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, NewTopic, ProducerConfig,
    ReplicationMode, TopicPartition,
};

/// The topic.
pub const TOPIC: &str = "payments";

/// What the story produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZombieStory {
    /// The cluster's timeline, one line an event.
    pub timeline: Vec<String>,
    /// Each broker's log end offset before broker 2 resumes, by broker.
    pub before_resume: Vec<(i32, i64)>,
    /// Each broker's log end offset after, by broker.
    pub after_resume: Vec<(i32, i64)>,
    /// The values broker 2 holds at offsets 40 to 49 after it came back.
    pub zombie_40_to_49: Vec<String>,
    /// The values the leader holds at offsets 40 to 49.
    pub leader_40_to_49: Vec<String>,
    /// What a consumer reads from offset 40 on after brokers 1 and 3 stop
    /// and broker 2 leads.
    pub read_after_failover: Vec<String>,
}

fn values(records: &[streams_broker::record::LogRecord], from: i64, to: i64) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.offset >= from && r.offset < to)
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

fn batch(prefix: &str, range: std::ops::Range<i64>) -> Vec<Record> {
    range
        .map(|i| Record::new(Some(format!("k{i}")), Some(format!("{prefix}-{i}")), i))
        .collect()
}

/// Runs the story under `mode`.
///
/// # Errors
/// A broker error (none is expected).
pub fn run(mode: ReplicationMode) -> Result<ZombieStory, BrokerError> {
    let cluster = Cluster::builder().brokers(3).replication_mode(mode).build();
    cluster
        .admin()
        .create_topic(NewTopic::new(TOPIC, 1).replication_factor(3))?;
    let tp = TopicPartition::new(TOPIC, 0);
    let all = cluster.producer();
    let leader_only = cluster.producer_with(ProducerConfig::new().acks(Acks::One));

    // Epoch 0: 40 records everywhere; then broker 3 falls behind and ten
    // more reach brokers 1 and 2 only: the high watermark stays 40.
    all.send_batch(&tp, batch("committed", 0..40))?;
    cluster.cut_link(1, 3)?;
    for record in batch("uncommitted", 40..50) {
        leader_only.send_batch(&tp, [record])?;
    }
    cluster.replicate();

    // Broker 2 pauses and is fenced; broker 1 stops: broker 3 leads.
    cluster.pause_broker(2)?;
    cluster.advance_ms(10_000);
    cluster.stop_broker(1)?;

    // Broker 1 comes back and follows broker 3; epoch 1 writes 15 records.
    cluster.heal();
    cluster.restart_broker(1, false)?;
    cluster.replicate();
    for record in batch("epoch1", 40..55) {
        all.send_batch(&tp, [record])?;
    }

    // Broker 1 leads again (epoch 2); broker 2 wakes up in epoch 0.
    cluster.force_election(&tp, Some(1))?;
    let before_resume = cluster.replica_log_end_offsets(&tp)?;
    cluster.resume_broker(2)?;
    cluster.replicate();
    cluster.replicate();
    let after_resume = cluster.replica_log_end_offsets(&tp)?;
    let zombie_40_to_49 = values(&cluster.replica_records(&tp, 2)?, 40, 50);
    let leader_40_to_49 = values(&cluster.replica_records(&tp, 1)?, 40, 50);

    // Brokers 1 and 3 stop: broker 2, in the ISR, leads.
    cluster.stop_broker(1)?;
    cluster.stop_broker(3)?;
    let mut consumer = cluster.consumer(
        ConsumerConfig::new()
            .auto_offset_reset(AutoOffsetReset::Earliest)
            .max_poll_records(100),
    );
    consumer.assign([tp.clone()]);
    consumer.seek(&tp, 40)?;
    let read: Vec<String> = consumer
        .poll()?
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect();

    Ok(ZombieStory {
        timeline: cluster.timeline().iter().map(ToString::to_string).collect(),
        before_resume,
        after_resume,
        zombie_40_to_49,
        leader_40_to_49,
        read_after_failover: read,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn epoch1(range: std::ops::Range<i64>) -> Vec<String> {
        range.map(|i| format!("epoch1-{i}")).collect()
    }

    #[test]
    fn kafka_6880_the_zombie_is_fenced_and_truncates_to_the_end_of_epoch_0()
    -> Result<(), BrokerError> {
        let story = run(ReplicationMode::LeaderEpochs)?;
        assert_eq!(story.before_resume, [(1, 55), (2, 50), (3, 55)]);
        assert_eq!(story.after_resume, [(1, 55), (2, 55), (3, 55)]);
        assert_eq!(story.zombie_40_to_49, epoch1(40..50));
        assert_eq!(story.leader_40_to_49, epoch1(40..50));
        assert_eq!(story.read_after_failover, epoch1(40..55));
        let events: Vec<&str> = story.timeline.iter().map(|l| l.trim_start()).collect();
        let tail: Vec<&str> = events
            .iter()
            .skip_while(|e| !e.contains("broker 2 resumed"))
            .copied()
            .collect();
        assert_eq!(
            tail[..5],
            [
                "10000 ms  broker 2 resumed",
                "10000 ms  payments-0: broker 2 fetched from broker 1 with epoch 0: FENCED_LEADER_EPOCH (leader epoch 2)",
                "10000 ms  payments-0: broker 2 learns leader 1, epoch 2",
                "10000 ms  payments-0: broker 2 truncated its log from 50 to 40 (the leader's epoch 0 ends at 40)",
                "10000 ms  payments-0: broker 2 joined the ISR, now [1, 2, 3]",
            ]
        );
        Ok(())
    }

    #[test]
    fn kafka_6880_before_kip_101_the_zombie_diverges_and_its_records_reach_consumers()
    -> Result<(), BrokerError> {
        let story = run(ReplicationMode::LegacyHighWatermark)?;
        assert_eq!(story.before_resume, [(1, 55), (2, 50), (3, 55)]);
        assert_eq!(story.after_resume, [(1, 55), (2, 55), (3, 55)]);
        let uncommitted: Vec<String> = (40..50).map(|i| format!("uncommitted-{i}")).collect();
        assert_eq!(story.zombie_40_to_49, uncommitted);
        assert_eq!(story.leader_40_to_49, epoch1(40..50));
        // Acknowledged records 40..49 of epoch 1 are lost; the zombie's
        // never-committed ones are read in their place.
        let mut expected = uncommitted;
        expected.extend(epoch1(50..55));
        assert_eq!(story.read_after_failover, expected);
        assert!(
            story
                .timeline
                .iter()
                .all(|l| !l.contains("FENCED_LEADER_EPOCH"))
        );
        Ok(())
    }
}
