//! Delete-records (Kafka's `deleteRecords`, KAFKA-5925's ground): the log
//! start offset moves forward only, within the high watermark, and
//! consumers below it reset.

use streams_broker::{
    AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, OffsetSpec, TopicPartition,
};

use crate::support::{offsets, send, topic};

fn ten_records() -> (Cluster, TopicPartition) {
    let cluster = Cluster::new();
    let tp = topic(&cluster, "t", &[("segment.ms", "1")]);
    for i in 0..10 {
        send(&cluster, "t", &format!("k{i}"), Some("v"), i * 10);
    }
    (cluster, tp)
}

#[test]
fn delete_records_below_at_and_above_the_high_watermark() {
    let (cluster, tp) = ten_records();
    let admin = cluster.admin();
    assert_eq!(admin.delete_records_before(&tp, 4).unwrap(), 4);
    assert_eq!(offsets(&cluster, &tp), [4, 5, 6, 7, 8, 9]);
    // Lower than the start: nothing moves back.
    assert_eq!(admin.delete_records_before(&tp, 2).unwrap(), 4);
    // Above the high watermark: an error, and nothing changes.
    assert_eq!(
        admin.delete_records_before(&tp, 11).unwrap_err(),
        BrokerError::OffsetOutOfRange {
            topic: "t".into(),
            partition: 0,
            offset: 11,
            log_start_offset: 4,
            high_watermark: 10
        }
    );
    assert_eq!(cluster.log_info(&tp).unwrap().log_start_offset, 4);
    // -1 is the high watermark.
    assert_eq!(admin.delete_records_before(&tp, -1).unwrap(), 10);
    assert_eq!(offsets(&cluster, &tp), Vec::<i64>::new());
    assert_eq!(
        admin
            .list_offsets(&tp, OffsetSpec::Earliest)
            .unwrap()
            .map(|o| o.offset),
        Some(10)
    );
}

#[test]
fn segments_below_the_new_log_start_offset_go_at_the_next_retention_check() {
    let (cluster, tp) = ten_records();
    cluster.admin().delete_records_before(&tp, 4).unwrap();
    assert_eq!(cluster.log_info(&tp).unwrap().segments.len(), 10);
    assert_eq!(cluster.run_retention(), 4);
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [4, 5, 6, 7, 8, 9]
    );
}

#[test]
fn delete_records_per_partition_with_their_own_errors() {
    let (cluster, tp) = ten_records();
    topic(&cluster, "compacted", &[("cleanup.policy", "compact")]);
    let results = cluster.admin().delete_records([
        (tp.clone(), 3),
        (TopicPartition::new("compacted", 0), 0),
        (TopicPartition::new("t", 3), 0),
        (TopicPartition::new("missing", 0), 0),
    ]);
    assert_eq!(results[&tp], Ok(3));
    assert_eq!(
        results[&TopicPartition::new("compacted", 0)],
        Err(BrokerError::PolicyViolation {
            topic: "compacted".into(),
            partition: 0,
            policy: "compact".into()
        })
    );
    assert_eq!(
        results[&TopicPartition::new("t", 3)],
        Err(BrokerError::UnknownPartition {
            topic: "t".into(),
            partition: 3,
            partitions: 1
        })
    );
    assert_eq!(
        results[&TopicPartition::new("missing", 0)],
        Err(BrokerError::UnknownTopic {
            topic: "missing".into()
        })
    );
    assert_eq!(
        results[&TopicPartition::new("compacted", 0)]
            .clone()
            .unwrap_err()
            .to_string(),
        "records of partition compacted-0 can not be deleted due to the configured policy \
         (cleanup.policy=compact); add delete to the topic's cleanup.policy to allow it"
    );
}

fn consumer_at_2(
    cluster: &Cluster,
    tp: &TopicPartition,
    reset: AutoOffsetReset,
) -> streams_broker::Consumer {
    let mut consumer = cluster.consumer(ConsumerConfig::new().auto_offset_reset(reset));
    consumer.assign([tp.clone()]);
    consumer.seek(tp, 2).unwrap();
    consumer
}

#[test]
fn a_consumer_below_the_new_log_start_offset_applies_its_reset_policy() {
    let (cluster, tp) = ten_records();
    let mut earliest = consumer_at_2(&cluster, &tp, AutoOffsetReset::Earliest);
    let mut latest = consumer_at_2(&cluster, &tp, AutoOffsetReset::Latest);
    let mut none = consumer_at_2(&cluster, &tp, AutoOffsetReset::None);
    cluster.admin().delete_records_before(&tp, 6).unwrap();

    let read: Vec<i64> = earliest.poll().unwrap().iter().map(|r| r.offset).collect();
    assert_eq!(read, [6, 7, 8, 9]);
    assert!(latest.poll().unwrap().is_empty());
    assert_eq!(latest.position(&tp).unwrap(), 10);
    assert_eq!(
        none.poll().unwrap_err(),
        BrokerError::OffsetOutOfRange {
            topic: "t".into(),
            partition: 0,
            offset: 2,
            log_start_offset: 6,
            high_watermark: 10
        }
    );
    // The failed consumer can seek and go on.
    none.seek_to_beginning(&tp).unwrap();
    assert_eq!(none.poll().unwrap().len(), 4);
}
