//! The client traits on a real broker: what Kafka answers is what the
//! simulated cluster's clients answer for the same calls.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::{
    Admin, Assignment, ClientConfig, ClientError, ClientSupplier, Consumer, ConsumerRecord,
    NewTopic, PartitionAssignor, Polled, ProducerRecord, Rebalance, Subscription, TopicPartition,
};
use streams_kafka::KafkaClients;

use crate::Env;

/// An assignor for `subscribe`: librdkafka runs its own `range`.
#[derive(Debug)]
pub(crate) struct Unused;

impl PartitionAssignor for Unused {
    fn name(&self) -> &str {
        "range"
    }
    fn subscription_user_data(&self, _: &std::collections::BTreeSet<String>) -> bytes::Bytes {
        bytes::Bytes::new()
    }
    fn assign(
        &self,
        _: &BTreeMap<String, i32>,
        _: &BTreeMap<String, Subscription>,
    ) -> BTreeMap<String, Assignment> {
        BTreeMap::new()
    }
}

pub(crate) fn clients(env: &Env) -> KafkaClients {
    KafkaClients::new(&env.bootstrap)
}

fn create(admin: &mut dyn Admin, topic: &str, partitions: i32) -> Result<(), Failed> {
    admin.create_topic(&NewTopic::new(topic, partitions))?;
    Ok(())
}

/// Polls until `n` records arrived (or `timeout`); the records and the
/// rebalances seen.
pub(crate) fn poll_records(
    consumer: &mut dyn Consumer,
    n: usize,
    timeout: Duration,
) -> Result<(Vec<ConsumerRecord>, Vec<Rebalance>), Failed> {
    let deadline = Instant::now() + timeout;
    let mut records = Vec::new();
    let mut rebalances = Vec::new();
    while records.len() < n {
        if Instant::now() > deadline {
            return Err(format!(
                "{} of {n} records after {timeout:?}; rebalances: {rebalances:?}",
                records.len()
            )
            .into());
        }
        let Polled {
            records: r,
            rebalance,
        } = consumer.poll()?;
        records.extend(r);
        rebalances.extend(rebalance);
    }
    Ok((records, rebalances))
}

fn values(records: &[ConsumerRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned())
        .collect()
}

/// Sends land where they were sent, and `flush` returns their metadata
/// in send order.
pub(crate) fn produce_flush_offsets(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let topic = env.name("produce");
    create(clients.admin(&ClientConfig::new())?.as_mut(), &topic, 2)?;
    let mut producer = clients.producer(&ClientConfig::new().set("client.id", "p"))?;
    for (p, v) in [(0, "a"), (1, "b"), (0, "c"), (0, "d")] {
        producer.send(
            ProducerRecord::new(&topic, "k", v)
                .partition(p)
                .timestamp(1_000),
        )?;
    }
    let metadata = producer.flush()?;
    let landed: Vec<(i32, i64, i64)> = metadata
        .iter()
        .map(|m| (m.partition, m.offset, m.timestamp))
        .collect();
    assert_eq!(
        landed,
        [(0, 0, 1_000), (1, 0, 1_000), (0, 1, 1_000), (0, 2, 1_000)]
    );
    assert!(metadata.iter().all(|m| m.topic == topic));
    // A keyed record goes where Java's murmur2 partitioner puts it:
    // "k" hashes to partition 0 of 2 (as the simulated broker says too).
    producer.send(ProducerRecord::new(&topic, "k", "e"))?;
    assert_eq!(producer.flush()?[0].partition, 0);
    assert!(producer.flush()?.is_empty());
    // A flush returns when the last delivery report is in: rdkafka's own
    // flush waited in 100 ms slices, so that no flush took less than
    // 100 ms; on loopback one takes a few milliseconds (the quickest of 20,
    // so that a busy machine does not make it fail).
    let mut quickest = std::time::Duration::MAX;
    for i in 0..20 {
        producer.send(ProducerRecord::new(&topic, "k", format!("f{i}")))?;
        let started = std::time::Instant::now();
        assert_eq!(producer.flush()?.len(), 1);
        quickest = quickest.min(started.elapsed());
    }
    assert!(
        quickest < std::time::Duration::from_millis(50),
        "the quickest of 20 flushes took {quickest:?}"
    );
    // An unknown partition fails at once (librdkafka knows the topic's
    // partitions by now), naming it.
    let err = producer
        .send(ProducerRecord::new(&topic, "k", "x").partition(7))
        .unwrap_err();
    assert!(
        matches!(err, ClientError::UnknownTopicOrPartition { ref topic, partition: Some(7) } if *topic == topic.clone()),
        "{err}"
    );
    Ok(())
}

/// A group member reads what was produced, commits, and reads its commit
/// back; a new member of the group starts from it.
pub(crate) fn consume_commit_committed(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let topic = env.name("consume");
    create(clients.admin(&ClientConfig::new())?.as_mut(), &topic, 1)?;
    let mut producer = clients.producer(&ClientConfig::new())?;
    for v in ["a", "b", "c"] {
        producer.send(ProducerRecord::new(&topic, "k", v).header("h", v))?;
    }
    producer.flush()?;
    let config = ClientConfig::new()
        .set("group.id", env.name("consume-group"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false");
    let tp = TopicPartition::new(&topic, 0);
    let mut consumer = clients.consumer(&config)?;
    assert!(consumer.group_metadata().is_none());
    consumer.subscribe(std::slice::from_ref(&topic), Arc::new(Unused))?;
    let (records, rebalances) = poll_records(consumer.as_mut(), 3, Duration::from_secs(30))?;
    assert_eq!(values(&records), ["a", "b", "c"]);
    assert_eq!(
        records.iter().map(|r| r.offset).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(records[1].headers[0].key, "h");
    assert_eq!(records[1].headers[0].value.as_deref(), Some(&b"b"[..]));
    assert_eq!(
        rebalances,
        [Rebalance::Assigned {
            partitions: vec![tp.clone()],
            user_data: bytes::Bytes::new(),
            generation: 1
        }]
    );
    assert_eq!(consumer.assignment(), std::slice::from_ref(&tp));
    assert_eq!(consumer.position(&tp)?, 3);
    assert_eq!(
        consumer.end_offsets(std::slice::from_ref(&tp))?,
        BTreeMap::from([(tp.clone(), 3)])
    );
    assert_eq!(consumer.committed(&tp)?, None);
    consumer.commit(&BTreeMap::from([(tp.clone(), 2)]))?;
    assert_eq!(consumer.committed(&tp)?, Some(2));
    consumer.seek(&tp, 1)?;
    assert_eq!(consumer.position(&tp)?, 1);
    let (again, _) = poll_records(consumer.as_mut(), 2, Duration::from_secs(10))?;
    assert_eq!(values(&again), ["b", "c"]);
    let metadata = consumer
        .group_metadata()
        .ok_or("no group metadata after the join")?;
    assert_eq!(
        (metadata.group_id.as_str(), metadata.generation),
        (env.name("consume-group").as_str(), 1)
    );
    consumer.close(true);
    // The next member of the group starts at the committed offset.
    let mut next = clients.consumer(&config)?;
    next.subscribe(std::slice::from_ref(&topic), Arc::new(Unused))?;
    let (rest, _) = poll_records(next.as_mut(), 1, Duration::from_secs(30))?;
    assert_eq!(values(&rest), ["c"]);
    Ok(())
}

/// Waits until the end offset of `tp` under `isolation` is `expected`.
fn wait_for_end(
    clients: &KafkaClients,
    tp: &TopicPartition,
    isolation: &str,
    expected: i64,
) -> Result<(), Failed> {
    let consumer = clients.consumer(&ClientConfig::new().set("isolation.level", isolation))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let end = consumer.end_offsets(std::slice::from_ref(tp))?[tp];
        if end == expected {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{isolation} end offset of {tp} is {end}, not {expected}, after 10 s"
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_all(
    clients: &KafkaClients,
    tp: &TopicPartition,
    isolation: &str,
) -> Result<(Vec<String>, i64, i64), Failed> {
    let mut consumer = clients.consumer(
        &ClientConfig::new()
            .set("isolation.level", isolation)
            .set("auto.offset.reset", "earliest"),
    )?;
    consumer.assign(std::slice::from_ref(tp))?;
    let end = consumer.end_offsets(std::slice::from_ref(tp))?[tp];
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while consumer.position(tp)? < end {
        if Instant::now() > deadline {
            return Err(format!(
                "{isolation}: position {} never reached {end}",
                consumer.position(tp)?
            )
            .into());
        }
        seen.extend(values(&consumer.poll()?.records));
    }
    let position = consumer.position(tp)?;
    Ok((seen, end, position))
}

/// A committed transaction is seen by read_committed, an aborted one is
/// not (read_uncommitted sees both); the end offset under read_committed
/// is the last stable offset, and the position passes the markers.
pub(crate) fn transactions_read_committed(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let topic = env.name("txn");
    create(clients.admin(&ClientConfig::new())?.as_mut(), &topic, 1)?;
    let tp = TopicPartition::new(&topic, 0);
    let mut producer =
        clients.producer(&ClientConfig::new().set("transactional.id", env.name("txn-id")))?;
    producer.init_transactions()?;
    producer.begin_transaction()?;
    producer.send(ProducerRecord::new(&topic, "k", "committed-1").partition(0))?;
    producer.send(ProducerRecord::new(&topic, "k", "committed-2").partition(0))?;
    producer.commit_transaction()?;
    producer.begin_transaction()?;
    producer.send(ProducerRecord::new(&topic, "k", "aborted").partition(0))?;
    producer.flush()?;
    producer.abort_transaction()?;
    producer.begin_transaction()?;
    producer.send(ProducerRecord::new(&topic, "k", "committed-3").partition(0))?;
    producer.commit_transaction()?;
    // Offsets: 0, 1 data, 2 commit marker, 3 aborted, 4 abort marker,
    // 5 data, 6 commit marker. The coordinator writes the markers after
    // commit_transaction returns: the last stable offset gets there soon.
    wait_for_end(&clients, &tp, "read_committed", 7)?;
    let (committed, end, position) = read_all(&clients, &tp, "read_committed")?;
    assert_eq!(committed, ["committed-1", "committed-2", "committed-3"]);
    assert_eq!((end, position), (7, 7));
    let (all, end, _) = read_all(&clients, &tp, "read_uncommitted")?;
    assert_eq!(
        all,
        ["committed-1", "committed-2", "aborted", "committed-3"]
    );
    assert_eq!(end, 7);
    // An open transaction holds the last stable offset back.
    producer.begin_transaction()?;
    producer.send(ProducerRecord::new(&topic, "k", "open").partition(0))?;
    producer.flush()?;
    let reader = clients.consumer(&ClientConfig::new().set("isolation.level", "read_committed"))?;
    assert_eq!(reader.end_offsets(std::slice::from_ref(&tp))?[&tp], 7);
    let uncommitted = clients.consumer(&ClientConfig::new())?;
    assert_eq!(uncommitted.end_offsets(std::slice::from_ref(&tp))?[&tp], 8);
    producer.abort_transaction()?;
    // Transactions on a producer without a transactional.id are refused.
    let mut plain = clients.producer(&ClientConfig::new())?;
    assert!(matches!(
        plain.begin_transaction(),
        Err(ClientError::InvalidState { .. })
    ));
    Ok(())
}

/// Offsets sent to a transaction become the group's committed offsets
/// when it commits, and vanish when it aborts.
pub(crate) fn send_offsets_to_transaction(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let input = env.name("eos-in");
    let output = env.name("eos-out");
    let mut admin = clients.admin(&ClientConfig::new())?;
    create(admin.as_mut(), &input, 1)?;
    create(admin.as_mut(), &output, 1)?;
    let mut producer = clients.producer(&ClientConfig::new())?;
    for v in ["a", "b", "c"] {
        producer.send(ProducerRecord::new(&input, "k", v))?;
    }
    producer.flush()?;
    let mut consumer = clients.consumer(
        &ClientConfig::new()
            .set("group.id", env.name("eos-group"))
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed"),
    )?;
    consumer.subscribe(std::slice::from_ref(&input), Arc::new(Unused))?;
    let (records, _) = poll_records(consumer.as_mut(), 3, Duration::from_secs(30))?;
    let group = consumer
        .group_metadata()
        .ok_or("no group metadata after the join")?;
    let tp = TopicPartition::new(&input, 0);
    let mut txn =
        clients.producer(&ClientConfig::new().set("transactional.id", env.name("eos-id")))?;
    txn.init_transactions()?;
    txn.begin_transaction()?;
    txn.send(ProducerRecord::new(&output, "k", "upper-a"))?;
    txn.send_offsets_to_transaction(&BTreeMap::from([(tp.clone(), 1)]), &group)?;
    txn.commit_transaction()?;
    assert_eq!(consumer.committed(&tp)?, Some(1));
    txn.begin_transaction()?;
    txn.send(ProducerRecord::new(&output, "k", "upper-b"))?;
    txn.flush()?; // in the log, so that the abort writes a marker after it
    txn.send_offsets_to_transaction(
        &BTreeMap::from([(tp.clone(), records.len() as i64)]),
        &group,
    )?;
    txn.abort_transaction()?;
    assert_eq!(consumer.committed(&tp)?, Some(1));
    // 0 upper-a, 1 commit marker, 2 upper-b, 3 abort marker.
    let out_tp = TopicPartition::new(&output, 0);
    wait_for_end(&clients, &out_tp, "read_committed", 4)?;
    let (out, _, _) = read_all(&clients, &out_tp, "read_committed")?;
    assert_eq!(out, ["upper-a"]);
    Ok(())
}

/// A second producer with the same transactional.id fences the first:
/// the zombie's commit is `ProducerFenced`, and nothing of its open
/// transaction is visible.
pub(crate) fn zombie_producer_is_fenced(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let topic = env.name("zombie");
    create(clients.admin(&ClientConfig::new())?.as_mut(), &topic, 1)?;
    let id = env.name("zombie-id");
    let config = ClientConfig::new().set("transactional.id", &id);
    let mut zombie = clients.producer(&config)?;
    zombie.init_transactions()?;
    zombie.begin_transaction()?;
    zombie.send(ProducerRecord::new(&topic, "k", "zombie"))?;
    zombie.flush()?;
    let mut successor = clients.producer(&config)?;
    successor.init_transactions()?;
    successor.begin_transaction()?;
    successor.send(ProducerRecord::new(&topic, "k", "successor"))?;
    successor.commit_transaction()?;
    let err = zombie.commit_transaction().unwrap_err();
    assert!(
        matches!(err, ClientError::ProducerFenced { ref transactional_id, .. } if *transactional_id == id),
        "{err}"
    );
    assert!(err.is_task_migrated());
    // 0 zombie, 1 its abort marker (written before the successor's
    // init_transactions returned), 2 successor, 3 commit marker.
    let tp = TopicPartition::new(&topic, 0);
    wait_for_end(&clients, &tp, "read_committed", 4)?;
    let (seen, _, _) = read_all(&clients, &tp, "read_committed")?;
    assert_eq!(seen, ["successor"]);
    Ok(())
}

/// Topics with configs, partition counts, an existing topic, and
/// delete-records moving the log start offset.
pub(crate) fn admin_topics_and_delete_records(env: &Env) -> Result<(), Failed> {
    let clients = clients(env);
    let mut admin = clients.admin(&ClientConfig::new().set("client.id", "admin"))?;
    let compacted = env.name("admin-compacted");
    admin.create_topic(
        &NewTopic::new(&compacted, 3)
            .config("cleanup.policy", "compact")
            .config("segment.bytes", "52428800"),
    )?;
    assert_eq!(admin.partition_count(&compacted)?, Some(3));
    assert!(matches!(
        admin.create_topic(&NewTopic::new(&compacted, 3)),
        Err(ClientError::TopicExists { ref topic }) if *topic == compacted
    ));
    assert_eq!(admin.partition_count(&env.name("admin-missing"))?, None);
    let listed = admin.list_topics()?;
    assert!(listed.contains(&compacted), "{listed:?}");
    assert!(listed.windows(2).all(|w| w[0] < w[1]), "sorted: {listed:?}");
    assert!(
        !listed.iter().any(|t| t.starts_with("__")),
        "no internal topics: {listed:?}"
    );
    let bad = admin
        .create_topic(&NewTopic::new(env.name("admin-bad"), 1).config("cleanup.policy", "shred"));
    assert!(bad.is_err(), "an invalid config is refused");

    let purged = env.name("admin-purged");
    create(admin.as_mut(), &purged, 1)?;
    let mut producer = clients.producer(&ClientConfig::new())?;
    for v in ["a", "b", "c", "d"] {
        producer.send(ProducerRecord::new(&purged, "k", v))?;
    }
    producer.flush()?;
    let tp = TopicPartition::new(&purged, 0);
    admin.delete_records(&BTreeMap::from([(tp.clone(), 2)]))?;
    let (rest, _, _) = read_all(&clients, &tp, "read_uncommitted")?;
    assert_eq!(rest, ["c", "d"]);
    let beyond = admin.delete_records(&BTreeMap::from([(tp.clone(), 9)]));
    assert!(
        beyond.is_err(),
        "an offset above the high watermark is refused"
    );
    Ok(())
}
