//! The start-up stall of issue 17: a consumer whose partitions are
//! assigned but never fetched, silently, forever. librdkafka's assignment
//! reads a new partition's committed offset with an OffsetFetch of its
//! own before it starts the partition's fetcher, and when that request
//! fails with `NOT_COORDINATOR` or `COORDINATOR_NOT_AVAILABLE` (a
//! coordinator moving or loading: a broker restarting, a busy one, a
//! fresh cluster creating `__consumer_offsets`) it neither retries nor
//! starts the partition (`rd_kafka_assignment_apply_offsets` drops it
//! from its `queried` list, and the consumer error it emits carries a
//! code that reads as transient). This crate's consumer reads the
//! committed offsets itself, asking again on such errors, and assigns
//! every partition with its start offset, so that librdkafka starts all
//! fetchers at once.
//!
//! The same coordinator states refuse a commit for a moment: the
//! consumer commits again until `default.api.timeout.ms`.
//!
//! The errors are injected by librdkafka's own mock cluster
//! (`rdkafka::mocking`), on the first OffsetFetch requests: the trials
//! are deterministic and need no broker.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use rdkafka::mocking::MockCluster;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};
use streams_clients::{
    ClientConfig, ClientError, ClientSupplier, ProducerRecord, Rebalance, TopicPartition,
};
use streams_kafka::KafkaClients;

use crate::Env;
use crate::clients::{Unused, poll_records};

type Mock = MockCluster<'static, rdkafka::producer::DefaultProducerContext>;

/// A mock cluster of one broker with `topic` (2 partitions) holding
/// `k0..k5`, and a supplier for it.
fn cluster(topic: &str) -> Result<(Mock, KafkaClients), Failed> {
    let mock = MockCluster::new(1)?;
    mock.create_topic(topic, 2, 1)?;
    let clients = KafkaClients::new(mock.bootstrap_servers());
    let mut producer = clients.producer(&ClientConfig::new())?;
    for i in 0..6 {
        producer
            .send(ProducerRecord::new(topic, format!("k{i}"), format!("v{i}")).partition(i % 2))?;
    }
    producer.flush()?;
    Ok((mock, clients))
}

/// The first OffsetFetch requests of a group member's assignment fail
/// with the coordinator errors librdkafka does not retry: every record is
/// read all the same.
pub(crate) fn offset_fetch_fails_at_assignment(_: &Env) -> Result<(), Failed> {
    let topic = "stall-in";
    let (mock, clients) = cluster(topic)?;
    let (p0, p1) = (TopicPartition::new(topic, 0), TopicPartition::new(topic, 1));
    // The group committed offset 2 of partition 0 and 3 (its end) of 1.
    let mut committer = clients.consumer(&ClientConfig::new().set("group.id", "stall-group"))?;
    committer.assign(&[p0.clone(), p1.clone()])?;
    committer.commit(&BTreeMap::from([(p0.clone(), 2), (p1.clone(), 3)]))?;
    committer.close(true);
    mock.request_errors(
        RDKafkaApiKey::OffsetFetch,
        &[
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
            RDKafkaRespErr::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
        ],
    );
    let mut consumer = clients.consumer(
        &ClientConfig::new()
            .set("group.id", "stall-group")
            .set("auto.offset.reset", "earliest"),
    )?;
    consumer.subscribe(&[topic.to_owned()], Arc::new(Unused))?;
    let (records, rebalances) = poll_records(consumer.as_mut(), 1, Duration::from_secs(30))?;
    assert!(
        matches!(
            rebalances.as_slice(),
            [Rebalance::Assigned { partitions, .. }] if *partitions == [p0.clone(), p1.clone()]
        ),
        "{rebalances:?}"
    );
    // From the committed offsets: the last record of partition 0 only.
    assert_eq!(
        records
            .iter()
            .map(|r| (r.partition, r.offset, r.value.clone().unwrap_or_default()))
            .collect::<Vec<_>>(),
        [(0, 2, bytes::Bytes::from("v4"))]
    );
    assert_eq!(consumer.position(&p0)?, 3);
    assert_eq!(consumer.position(&p1)?, 3);
    Ok(())
}

/// A consumer outside any group (the runtime's restore consumers, a test's
/// reader) starts its assigned partitions at `auto.offset.reset` without
/// asking a coordinator: it reads with every FindCoordinator failing.
pub(crate) fn unjoined_consumer_needs_no_coordinator(_: &Env) -> Result<(), Failed> {
    let topic = "stall-manual";
    let (mock, clients) = cluster(topic)?;
    mock.request_errors(
        RDKafkaApiKey::FindCoordinator,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE; 200],
    );
    let mut reader = clients.consumer(&ClientConfig::new().set("auto.offset.reset", "earliest"))?;
    reader.assign(&[TopicPartition::new(topic, 0), TopicPartition::new(topic, 1)])?;
    let (records, _) = poll_records(reader.as_mut(), 6, Duration::from_secs(30))?;
    assert_eq!(records.len(), 6);
    Ok(())
}

/// Where the committed offsets cannot be read at all (every OffsetFetch
/// fails), the assigned partitions are never fetched: the poll says so
/// with a typed error once `default.api.timeout.ms` has passed since the
/// assignment, instead of returning nothing forever.
pub(crate) fn unreadable_offsets_fail_the_poll_in_bounded_time(_: &Env) -> Result<(), Failed> {
    let topic = "stall-never";
    let (mock, clients) = cluster(topic)?;
    mock.request_errors(
        RDKafkaApiKey::OffsetFetch,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_COORDINATOR; 2000],
    );
    let mut consumer = clients.consumer(
        &ClientConfig::new()
            .set("group.id", "stall-never-group")
            .set("auto.offset.reset", "earliest")
            .set("default.api.timeout.ms", "2000"),
    )?;
    consumer.subscribe(&[topic.to_owned()], Arc::new(Unused))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut assigned = false;
    let err = loop {
        if Instant::now() > deadline {
            return Err("the poll neither read nor failed in 60 s".into());
        }
        match consumer.poll() {
            Ok(polled) => {
                assert!(polled.records.is_empty(), "read {:?}", polled.records);
                assigned |= matches!(polled.rebalance, Some(Rebalance::Assigned { .. }));
            }
            Err(e) => break e,
        }
    };
    assert!(assigned, "the poll failed before the assignment: {err}");
    match &err {
        ClientError::Timeout {
            operation,
            timeout_ms,
        } => {
            assert_eq!(*timeout_ms, 2000);
            assert!(
                operation.contains("librdkafka started no fetcher for the assigned partition(s) stall-never-0, stall-never-1"),
                "{operation}"
            );
        }
        other => return Err(format!("not a Timeout: {other}").into()),
    }
    Ok(())
}

/// A commit refused by a coordinator that is loading (a broker that has
/// just restarted) is made again until `default.api.timeout.ms`, as
/// Kafka's `commitSync` does, instead of failing the stream thread.
pub(crate) fn commit_retries_a_loading_coordinator(_: &Env) -> Result<(), Failed> {
    let topic = "stall-commit";
    let (mock, clients) = cluster(topic)?;
    let p0 = TopicPartition::new(topic, 0);
    let mut consumer = clients.consumer(
        &ClientConfig::new()
            .set("group.id", "stall-commit-group")
            .set("auto.offset.reset", "earliest"),
    )?;
    consumer.subscribe(&[topic.to_owned()], Arc::new(Unused))?;
    poll_records(consumer.as_mut(), 6, Duration::from_secs(30))?;
    mock.request_errors(
        RDKafkaApiKey::OffsetCommit,
        &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS; 8],
    );
    consumer.commit(&BTreeMap::from([(p0.clone(), 3)]))?;
    assert_eq!(consumer.committed(&p0)?, Some(3));
    Ok(())
}
