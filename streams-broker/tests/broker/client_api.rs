//! The client API's traits over the simulated cluster: Kafka's config
//! names, errors by meaning, the producer's sends and flush, assigned
//! consumers, pause, end offsets, and the initial rebalance delay.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use streams_broker::{Cluster, GroupState, RangeAssignor, SimulatedClients};
use streams_clients::{
    ClientConfig, ClientError, ClientSupplier, GroupMetadata, NewTopic, ProducerRecord, Rebalance,
    TopicPartition,
};

fn clients() -> SimulatedClients {
    SimulatedClients::new(Cluster::new())
}

#[test]
fn kafkas_config_names_are_read_and_bad_values_named() {
    let clients = clients();
    let bad = [
        (
            "auto.offset.reset",
            "smallest",
            "expected earliest, latest or none",
        ),
        ("max.poll.records", "0", "expected at least 1"),
        ("max.poll.records", "many", "expected a whole number"),
        ("enable.auto.commit", "yes", "expected true or false"),
        ("session.timeout.ms", "-5", "expected at least 1"),
        (
            "isolation.level",
            "serializable",
            "expected read_uncommitted or read_committed",
        ),
    ];
    for (name, value, reason) in bad {
        let err = clients
            .consumer(&ClientConfig::new().set(name, value))
            .unwrap_err();
        let ClientError::InvalidConfig {
            name: n,
            value: v,
            reason: r,
        } = err
        else {
            panic!("{name}={value}: {err:?}");
        };
        assert_eq!((n.as_str(), v.as_str(), r.as_str()), (name, value, reason));
    }
    let err = clients
        .producer(&ClientConfig::new().set("acks", "2"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value '2' for configuration 'acks': expected all, -1, 0 or 1"
    );
    let err = clients
        .producer(
            &ClientConfig::new()
                .set("transactional.id", "app-0_0")
                .set("transaction.timeout.ms", "0"),
        )
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidConfig { name, .. } if name == "transaction.timeout.ms"),
        "{err:?}"
    );
    // Names the simulated cluster does not use are accepted, as Kafka's
    // clients only warn about them.
    let config = ClientConfig::new()
        .set("bootstrap.servers", "localhost:9092")
        .set("isolation.level", "read_committed")
        .set("acks", "1");
    assert!(clients.consumer(&config).is_ok());
    assert!(clients.producer(&config).is_ok());
}

#[test]
fn the_producer_sends_at_once_and_flush_returns_the_metadata_in_order() {
    let clients = clients();
    let mut admin = clients.admin(&ClientConfig::new()).unwrap();
    admin.create_topic(&NewTopic::new("t", 2)).unwrap();
    let err = admin.create_topic(&NewTopic::new("t", 2)).unwrap_err();
    assert!(matches!(&err, ClientError::TopicExists { topic } if topic == "t"));
    assert_eq!(admin.partition_count("t").unwrap(), Some(2));
    assert_eq!(admin.partition_count("nope").unwrap(), None);

    let mut producer = clients
        .producer(&ClientConfig::new().set("client.id", "p"))
        .unwrap();
    for (p, v) in [(1, "a"), (0, "b"), (1, "c")] {
        producer
            .send(ProducerRecord::new("t", "k", v).partition(p).timestamp(7))
            .unwrap();
    }
    let landed: Vec<(i32, i64, i64)> = producer
        .flush()
        .unwrap()
        .iter()
        .map(|m| (m.partition, m.offset, m.timestamp))
        .collect();
    assert_eq!(landed, [(1, 0, 7), (0, 0, 7), (1, 1, 7)]);
    assert_eq!(producer.flush().unwrap(), []);
    let err = producer
        .send(ProducerRecord::new("nope", "k", "v"))
        .unwrap_err();
    assert!(matches!(
        &err,
        ClientError::UnknownTopicOrPartition { topic, partition: None } if topic == "nope"
    ));
    let err = producer
        .send(ProducerRecord::new("t", "k", "v").partition(5))
        .unwrap_err();
    assert!(matches!(
        &err,
        ClientError::UnknownTopicOrPartition {
            partition: Some(5),
            ..
        }
    ));
    let err = producer.begin_transaction().unwrap_err();
    assert_eq!(
        err.to_string(),
        "p: cannot begin_transaction in state non-transactional (made without a \
         transactional.id); create the producer with a transactional.id to use transactions"
    );
    let group = GroupMetadata {
        group_id: "g".into(),
        generation: 1,
        member_id: "m".into(),
    };
    assert!(matches!(
        producer.send_offsets_to_transaction(&BTreeMap::new(), &group),
        Err(ClientError::InvalidState {
            operation: "send_offsets_to_transaction",
            ..
        })
    ));

    // delete-records through the trait moves the log start offset.
    let tp = TopicPartition::new("t", 1);
    admin
        .delete_records(&BTreeMap::from([(tp.clone(), 1)]))
        .unwrap();
    assert_eq!(clients.cluster().log_info(&tp).unwrap().log_start_offset, 1);
    assert!(matches!(
        admin.delete_records(&BTreeMap::from([(tp, 9)])),
        Err(ClientError::Implementation { .. })
    ));
}

#[test]
fn an_assigned_consumer_reads_pauses_seeks_and_knows_the_end_offsets() {
    let clients = clients();
    let cluster = clients.cluster().clone();
    cluster
        .admin()
        .create_topic(streams_broker::NewTopic::new("t", 2))
        .unwrap();
    let producer = cluster.producer();
    for i in 0..3 {
        for p in 0..2 {
            producer
                .send(ProducerRecord::new("t", "k", format!("{p}-{i}")).partition(p))
                .unwrap();
        }
    }
    let config = ClientConfig::new()
        .set("client.id", "restore")
        .set("auto.offset.reset", "earliest");
    let mut consumer = clients.consumer(&config).unwrap();
    let (t0, t1) = (TopicPartition::new("t", 0), TopicPartition::new("t", 1));
    let err = consumer
        .assign(&[t0.clone(), TopicPartition::new("t", 2)])
        .unwrap_err();
    assert!(matches!(
        err,
        ClientError::UnknownTopicOrPartition {
            partition: Some(2),
            ..
        }
    ));
    assert_eq!(consumer.assignment(), []);
    consumer.assign(&[t0.clone(), t1.clone()]).unwrap();
    assert_eq!(
        consumer.end_offsets(&[t0.clone(), t1.clone()]).unwrap(),
        BTreeMap::from([(t0.clone(), 3), (t1.clone(), 3)])
    );
    consumer.pause(std::slice::from_ref(&t1), true);
    let polled = consumer.poll().unwrap();
    assert_eq!(polled.rebalance, None);
    let values: Vec<Bytes> = polled.records.into_iter().filter_map(|r| r.value).collect();
    assert_eq!(values, ["0-0", "0-1", "0-2"]);
    consumer.pause(std::slice::from_ref(&t1), false);
    consumer.seek(&t1, 2).unwrap();
    let values: Vec<Bytes> = consumer
        .poll()
        .unwrap()
        .records
        .into_iter()
        .filter_map(|r| r.value)
        .collect();
    assert_eq!(values, ["1-2"]);
    assert_eq!(consumer.position(&t1).unwrap(), 3);
    let err = consumer.position(&TopicPartition::new("u", 0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "restore: cannot position in state without an assignment of u-0; \
         assign or subscribe to the partition first"
    );
    // Without a group.id nothing can be committed or subscribed.
    assert!(matches!(
        consumer.commit(&BTreeMap::from([(t0, 1)])),
        Err(ClientError::InvalidState {
            operation: "commit",
            ..
        })
    ));
    assert!(matches!(
        consumer.subscribe(&["t".to_owned()], Arc::new(RangeAssignor)),
        Err(ClientError::InvalidState {
            operation: "subscribe",
            ..
        })
    ));
    assert_eq!(consumer.group_metadata(), None);
}

#[test]
fn a_new_group_waits_its_initial_rebalance_delay_extended_by_each_join() {
    let cluster = Cluster::builder()
        .group_initial_rebalance_delay_ms(3_000)
        .build();
    cluster
        .admin()
        .create_topic(streams_broker::NewTopic::new("t", 2))
        .unwrap();
    let clients = SimulatedClients::new(cluster.clone());
    let config = |client: &str| {
        ClientConfig::new()
            .set("group.id", "g")
            .set("client.id", client)
    };
    let mut a = clients.consumer(&config("a")).unwrap();
    let mut b = clients.consumer(&config("b")).unwrap();
    for c in [&mut a, &mut b] {
        c.subscribe(&["t".to_owned()], Arc::new(RangeAssignor))
            .unwrap();
    }
    assert_eq!(a.poll().unwrap().rebalance, None);
    cluster.advance_ms(1_000);
    assert_eq!(b.poll().unwrap().rebalance, None);
    // At 3 s a member had joined during the delay: it runs 3 s more.
    cluster.advance_ms(4_999);
    let group = cluster.admin().describe_group("g");
    assert_eq!(
        (group.state, group.generation),
        (GroupState::PreparingRebalance, 0)
    );
    cluster.advance_ms(1);
    let group = cluster.admin().describe_group("g");
    assert_eq!(
        (group.state, group.generation),
        (GroupState::CompletingRebalance, 1)
    );
    let generation = |c: &mut Box<dyn streams_clients::Consumer>| match c.poll().unwrap().rebalance
    {
        Some(Rebalance::Assigned {
            partitions,
            generation,
            ..
        }) => (partitions.len(), generation),
        other => panic!("{other:?}"),
    };
    // One generation for both: nobody revokes.
    assert_eq!(generation(&mut a), (1, 1));
    assert_eq!(generation(&mut b), (1, 1));
}

#[test]
fn flush_waits_for_the_in_sync_replicas_of_acks_all_sends() {
    let cluster = Cluster::builder().brokers(3).build();
    let clients = SimulatedClients::new(cluster.clone());
    let mut admin = clients.admin(&ClientConfig::new()).unwrap();
    admin
        .create_topic(&NewTopic::new("t", 1).replication_factor(3))
        .unwrap();
    let mut producer = clients.producer(&ClientConfig::new()).unwrap();
    for v in ["a", "b"] {
        producer.send(ProducerRecord::new("t", "k", v)).unwrap();
    }
    let offsets: Vec<i64> = producer.flush().unwrap().iter().map(|m| m.offset).collect();
    assert_eq!(offsets, [0, 1]);
    // The followers fetched in the replication round flush ran: every
    // replica has both records and the clock did not move.
    let tp = TopicPartition::new("t", 0);
    assert_eq!(
        cluster.replica_log_end_offsets(&tp).unwrap(),
        [(1, 2), (2, 2), (3, 2)]
    );
    assert_eq!(cluster.log_info(&tp).unwrap().high_watermark, 2);
    assert_eq!(cluster.now_ms(), 0);
}

/// `send_all` batches what goes to each partition, as Kafka's
/// accumulator: interleaved records to two partitions become one batch
/// per partition, each in the order sent, with the offsets one-by-one
/// sends would give; flush reports them partition by partition.
#[test]
fn send_all_puts_each_partitions_records_in_one_batch() {
    let cluster = Cluster::new();
    let clients = SimulatedClients::new(cluster.clone());
    clients
        .admin(&ClientConfig::new())
        .unwrap()
        .create_topic(&NewTopic::new("t", 2))
        .unwrap();
    let mut producer = clients.producer(&ClientConfig::new()).unwrap();
    let records: Vec<ProducerRecord> = (0..6)
        .map(|i| {
            ProducerRecord::from_parts("t", None, Some(Bytes::from(format!("v{i}"))))
                .partition(i % 2)
                .timestamp(i64::from(i))
        })
        .collect();
    producer.send_all(records).unwrap();
    let sent = producer.flush().unwrap();
    let placed: Vec<(i32, i64, i64)> = sent
        .iter()
        .map(|m| (m.partition, m.offset, m.timestamp))
        .collect();
    assert_eq!(
        placed,
        [
            (0, 0, 0),
            (0, 1, 2),
            (0, 2, 4),
            (1, 0, 1),
            (1, 1, 3),
            (1, 2, 5)
        ]
    );
    for p in 0..2 {
        let info = cluster.log_info(&TopicPartition::new("t", p)).unwrap();
        let batches: usize = info.segments.iter().map(|s| s.batch_count).sum();
        assert_eq!((batches, info.log_end_offset), (1, 3), "partition {p}");
    }
    // An unknown topic sends nothing and says which.
    let err = producer
        .send_all(vec![ProducerRecord::from_parts("nope", None, None)])
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

/// A partition's records are cut into batches at `batch.size` (16384
/// bytes by default), as Kafka's accumulator starts a new batch there, so
/// that a large flush never makes a batch the broker refuses; a partition
/// the topic does not have is refused before anything is written.
#[test]
fn send_all_cuts_batches_at_batch_size_and_checks_partitions_first() {
    let cluster = Cluster::new();
    let clients = SimulatedClients::new(cluster.clone());
    clients
        .admin(&ClientConfig::new())
        .unwrap()
        .create_topic(&NewTopic::new("big", 1))
        .unwrap();
    let mut producer = clients.producer(&ClientConfig::new()).unwrap();
    // 200 records of 1,000 bytes: 200 KB, more than a 1 MiB batch would
    // need to fail, cut into batches of at most 16 records.
    let records: Vec<ProducerRecord> = (0..200)
        .map(|_| {
            ProducerRecord::from_parts("big", None, Some(Bytes::from(vec![7u8; 1000]))).partition(0)
        })
        .collect();
    producer.send_all(records).unwrap();
    let sent = producer.flush().unwrap();
    assert_eq!(sent.len(), 200);
    assert_eq!(sent.last().map(|m| m.offset), Some(199));
    let info = cluster.log_info(&TopicPartition::new("big", 0)).unwrap();
    let batches: usize = info.segments.iter().map(|s| s.batch_count).sum();
    assert_eq!(
        (batches, info.log_end_offset),
        (13, 200),
        "16 records of about 1 KB a batch"
    );
    // Partition 3 of a 1-partition topic: nothing of the call is written.
    let err = producer
        .send_all(vec![
            ProducerRecord::from_parts("big", None, Some(Bytes::from_static(b"ok"))).partition(0),
            ProducerRecord::from_parts("big", None, Some(Bytes::from_static(b"bad"))).partition(3),
        ])
        .unwrap_err();
    assert!(err.to_string().contains("big"), "{err}");
    let info = cluster.log_info(&TopicPartition::new("big", 0)).unwrap();
    assert_eq!(info.log_end_offset, 200);
}
