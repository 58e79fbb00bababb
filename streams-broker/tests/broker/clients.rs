//! The clients: partitioning, groups, commits, resets, configs, errors.

use streams_broker::log::ConfigError;
use streams_broker::partitioner::partition_for_key;
use streams_broker::{
    AlterConfigOp, AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, ListedOffset, NewTopic,
    OffsetSpec, ProducerRecord, TopicPartition,
};

use crate::support::topic;

#[test]
fn keyed_records_land_where_kafkas_partitioner_puts_them() {
    let cluster = Cluster::new();
    cluster.admin().create_topic(NewTopic::new("t", 6)).unwrap();
    let producer = cluster.producer();
    for i in 0..50 {
        let key = format!("key-{i}");
        let sent = producer
            .send(ProducerRecord::new("t", key.clone(), "v"))
            .unwrap();
        assert_eq!(
            sent.partition,
            partition_for_key(key.as_bytes(), 6).unwrap(),
            "{key}"
        );
    }
}

#[test]
fn records_without_keys_stick_to_a_partition_for_a_batch_size() {
    let cluster = Cluster::new();
    cluster.admin().create_topic(NewTopic::new("t", 3)).unwrap();
    let producer = cluster.producer_with(streams_broker::ProducerConfig {
        batch_size: 100,
        ..Default::default()
    });
    let partitions: Vec<i32> = (0..6)
        .map(|_| {
            producer
                .send(ProducerRecord::unkeyed("t", vec![0u8; 40]))
                .unwrap()
                .partition
        })
        .collect();
    // Each record is about 47 bytes: a partition takes records until 100
    // bytes went to it, then the next one takes over.
    // 47-byte records: partition 0 takes three (141 bytes, past 100), then 1.
    assert_eq!(partitions, [0, 0, 0, 1, 1, 1]);
}

#[test]
fn a_group_shares_partitions_out_by_range_and_hands_them_over_when_a_member_leaves() {
    let cluster = Cluster::new();
    cluster.admin().create_topic(NewTopic::new("t", 5)).unwrap();
    let config = ConsumerConfig::new()
        .group_id("g")
        .auto_offset_reset(AutoOffsetReset::Earliest);
    let mut a = cluster.consumer(config.clone().client_id("a"));
    let mut b = cluster.consumer(config.client_id("b"));
    a.subscribe(["t"]).unwrap();
    b.subscribe(["t"]).unwrap();
    let parts = |c: &streams_broker::Consumer| -> Vec<i32> {
        c.assignment().iter().map(|tp| tp.partition).collect()
    };
    // A subscription joins at the next poll: a alone makes generation 1.
    a.poll().unwrap();
    assert_eq!(parts(&a), [0, 1, 2, 3, 4]);
    // b joins; a revokes at its next poll, rejoins at the one after, and
    // as the leader assigns generation 2 by range; b picks its share up.
    b.poll().unwrap();
    a.poll().unwrap();
    assert_eq!(parts(&a), [] as [i32; 0]);
    a.poll().unwrap();
    b.poll().unwrap();
    assert_eq!(parts(&a), [0, 1, 2]);
    assert_eq!(parts(&b), [3, 4]);
    // b leaves with close: a revokes, rejoins and takes everything.
    b.close();
    a.poll().unwrap();
    a.poll().unwrap();
    assert_eq!(parts(&a), [0, 1, 2, 3, 4]);
}

#[test]
fn a_group_restarts_from_its_committed_offsets() {
    let cluster = Cluster::new();
    let tp = topic(&cluster, "t", &[]);
    for i in 0..5 {
        cluster
            .producer()
            .send(ProducerRecord::new("t", "k", format!("{i}")))
            .unwrap();
    }
    let config = ConsumerConfig::new()
        .group_id("g")
        .auto_offset_reset(AutoOffsetReset::Earliest)
        .max_poll_records(3)
        .enable_auto_commit(false);
    let mut first = cluster.consumer(config.clone());
    first.subscribe(["t"]).unwrap();
    assert_eq!(first.poll().unwrap().len(), 3);
    first.commit_sync().unwrap();
    // close leaves the group at once (a drop would be a crash: the group
    // would wait session.timeout.ms for the member).
    first.close();
    let mut second = cluster.consumer(config);
    second.subscribe(["t"]).unwrap();
    let offsets: Vec<i64> = second.poll().unwrap().iter().map(|r| r.offset).collect();
    assert_eq!(offsets, [3, 4]);
    assert_eq!(second.committed(&tp).unwrap(), Some(3));
}

#[test]
fn without_a_committed_offset_reset_none_is_an_error_and_latest_starts_at_the_end() {
    let cluster = Cluster::new();
    let tp = topic(&cluster, "t", &[]);
    cluster
        .producer()
        .send(ProducerRecord::new("t", "k", "v"))
        .unwrap();
    let mut none = cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::None));
    none.assign([tp.clone()]);
    assert_eq!(
        none.poll().unwrap_err(),
        BrokerError::NoOffsetForPartition {
            topic: "t".into(),
            partition: 0
        }
    );
    let mut latest = cluster.consumer(ConsumerConfig::new());
    latest.assign([tp.clone()]);
    assert_eq!(latest.position(&tp).unwrap(), 1);
    assert!(latest.poll().unwrap().is_empty());
    assert_eq!(
        latest.seek(&TopicPartition::new("t", 1), 0).unwrap_err(),
        BrokerError::NotAssigned {
            topic: "t".into(),
            partition: 1
        }
    );
    assert_eq!(
        cluster
            .consumer(ConsumerConfig::new())
            .subscribe(["t"])
            .unwrap_err(),
        BrokerError::GroupIdRequired {
            operation: "subscribe"
        }
    );
}

#[test]
fn log_append_time_topics_stamp_the_brokers_clock() {
    let cluster = Cluster::builder().start_time_ms(1_000).build();
    let tp = topic(
        &cluster,
        "t",
        &[("message.timestamp.type", "LogAppendTime")],
    );
    let sent = cluster
        .producer()
        .send(ProducerRecord::new("t", "k", "v").timestamp(5))
        .unwrap();
    assert_eq!(sent.timestamp, 1_000);
    let mut consumer =
        cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
    consumer.assign([tp]);
    let record = &consumer.poll().unwrap()[0];
    assert_eq!(record.timestamp, 1_000);
    assert_eq!(
        record.timestamp_type,
        streams_broker::record::TimestampType::LogAppendTime
    );
}

#[test]
fn bad_topics_configs_and_records_get_their_own_errors() {
    let cluster = Cluster::new();
    let admin = cluster.admin();
    assert!(matches!(
        admin.create_topic(NewTopic::new("a b", 1)),
        Err(BrokerError::InvalidTopic { .. })
    ));
    assert_eq!(
        admin.create_topic(NewTopic::new("t", 0)),
        Err(BrokerError::InvalidPartitions {
            topic: "t".into(),
            partitions: 0
        })
    );
    assert_eq!(
        admin
            .create_topic(NewTopic::new("t", 1).replication_factor(3))
            .unwrap_err()
            .to_string(),
        "unable to replicate topic t 3 time(s): the target replication factor of 3 cannot be \
         reached because only 1 broker(s) are registered"
    );
    assert_eq!(
        admin.create_topic(NewTopic::new("t", 1).config("min.cleanable.dirty.ratio", "2")),
        Err(BrokerError::InvalidConfig {
            topic: "t".into(),
            source: ConfigError::InvalidValue {
                name: "min.cleanable.dirty.ratio".into(),
                value: "2".into(),
                reason: "Value must be no more than 1".into()
            }
        })
    );
    admin
        .create_topic(NewTopic::new("t", 1).config("max.message.bytes", "100"))
        .unwrap();
    assert_eq!(
        admin.create_topic(NewTopic::new("t", 1)),
        Err(BrokerError::TopicAlreadyExists { topic: "t".into() })
    );
    let producer = cluster.producer();
    assert_eq!(
        producer
            .send(ProducerRecord::new("t", "k", vec![0u8; 100]))
            .unwrap_err(),
        BrokerError::RecordTooLarge {
            topic: "t".into(),
            partition: 0,
            size: 171,
            max: 100
        }
    );
    assert_eq!(
        producer
            .send(ProducerRecord::new("nope", "k", "v"))
            .unwrap_err(),
        BrokerError::UnknownTopic {
            topic: "nope".into()
        }
    );
    assert_eq!(
        producer
            .send(ProducerRecord::new("t", "k", "v").partition(1))
            .unwrap_err(),
        BrokerError::UnknownPartition {
            topic: "t".into(),
            partition: 1,
            partitions: 1
        }
    );
    // Nothing was written by the failures.
    assert_eq!(
        cluster
            .log_info(&TopicPartition::new("t", 0))
            .unwrap()
            .log_end_offset,
        0
    );
}

#[test]
fn configs_are_described_and_altered_incrementally() {
    let cluster = Cluster::new();
    topic(&cluster, "t", &[("retention.ms", "1000")]);
    let admin = cluster.admin();
    let configs = admin.describe_configs("t").unwrap();
    assert_eq!(
        (
            configs["retention.ms"].value.as_str(),
            configs["retention.ms"].is_default
        ),
        ("1000", false)
    );
    assert!(configs["delete.retention.ms"].is_default);
    admin
        .incremental_alter_configs(
            "t",
            [
                AlterConfigOp::Set("cleanup.policy".into(), "compact".into()),
                AlterConfigOp::Delete("retention.ms".into()),
            ],
        )
        .unwrap();
    let configs = admin.describe_configs("t").unwrap();
    assert_eq!(configs["cleanup.policy"].value, "compact");
    assert_eq!(
        (
            configs["retention.ms"].value.as_str(),
            configs["retention.ms"].is_default
        ),
        ("604800000", true)
    );
    assert!(matches!(
        admin.incremental_alter_configs(
            "t",
            [AlterConfigOp::Set("retention.ms".into(), "-9".into())]
        ),
        Err(BrokerError::InvalidConfig { .. })
    ));
    assert_eq!(
        admin.describe_configs("t").unwrap()["retention.ms"].value,
        "604800000"
    );
}

/// `OffsetSpec.maxTimestamp()` (KIP-734), as Kafka 4.4.0 answered it in the
/// real-broker oracle's `delete_records` scenario: the record with the
/// largest timestamp, the first of them on a tie, and offset -1 (here
/// `None`) on an empty log. Found missing by `tests/real_broker`.
#[test]
fn list_offsets_max_timestamp_finds_the_latest_record() {
    let cluster = Cluster::new();
    let tp = topic(&cluster, "max_ts", &[("retention.ms", "-1")]);
    let admin = cluster.admin();
    assert_eq!(
        admin.list_offsets(&tp, OffsetSpec::MaxTimestamp).unwrap(),
        None
    );
    let producer = cluster.producer();
    for (i, ts) in [1_000, 5_000, 3_000, 5_000, 2_000].into_iter().enumerate() {
        let sent = producer
            .send(ProducerRecord::new("max_ts", format!("k{i}"), "v").timestamp(ts))
            .unwrap();
        assert_eq!(sent.offset, i64::try_from(i).unwrap());
    }
    assert_eq!(
        admin.list_offsets(&tp, OffsetSpec::MaxTimestamp).unwrap(),
        Some(ListedOffset {
            offset: 1,
            timestamp: Some(5_000)
        })
    );
}
