//! Transactions (KIP-98, KIP-447): markers that take offsets, the last
//! stable offset, `read_committed` against `read_uncommitted`, fencing by
//! epoch, the coordinator's timeout abort on the mock clock, offsets sent
//! to a transaction, a leader change in the middle of a transaction, and a
//! property test against a model of committed transactions.

use proptest::prelude::*;
use streams_broker::record::ControlRecordType;
use streams_broker::{
    AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, IsolationLevel, NewTopic, OffsetSpec,
    Producer, ProducerConfig, ProducerRecord, TopicPartition, TransactionConfig,
    TransactionManagerState, TransactionState,
};
use streams_clients::GroupMetadata;

fn cluster_with(topic: &str, partitions: i32) -> Cluster {
    let cluster = Cluster::new();
    cluster
        .admin()
        .create_topic(NewTopic::new(topic, partitions))
        .unwrap();
    cluster
}

fn transactional(cluster: &Cluster, id: &str) -> Producer {
    let producer = cluster.producer_with(ProducerConfig::new().transactional_id(id));
    producer.init_transactions().unwrap();
    producer
}

fn send(producer: &Producer, topic: &str, value: &str) -> i64 {
    producer
        .send(ProducerRecord::new(topic, "k", value.to_owned()).partition(0))
        .unwrap()
        .offset
}

/// Everything a consumer at `level` reads of `tp` from the start, as
/// (offset, value).
fn read(cluster: &Cluster, tp: &TopicPartition, level: IsolationLevel) -> Vec<(i64, String)> {
    let mut consumer = cluster.consumer(
        ConsumerConfig::new()
            .auto_offset_reset(AutoOffsetReset::Earliest)
            .isolation_level(level),
    );
    consumer.assign([tp.clone()]);
    let mut out = Vec::new();
    loop {
        let records = consumer.poll().unwrap();
        if records.is_empty() {
            return out;
        }
        out.extend(records.into_iter().map(|r| {
            (
                r.offset,
                String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned(),
            )
        }));
    }
}

fn markers(cluster: &Cluster, tp: &TopicPartition) -> Vec<(i64, ControlRecordType)> {
    cluster
        .log_batches(tp)
        .unwrap()
        .iter()
        .filter_map(|b| b.control_record_type().map(|t| (b.base_offset(), t)))
        .collect()
}

/// Runs a transaction of `count` records and commits or aborts it.
fn transaction(producer: &Producer, topic: &str, name: &str, count: usize, commit: bool) {
    producer.begin_transaction().unwrap();
    for i in 0..count {
        send(producer, topic, &format!("{name}{i}"));
    }
    if commit {
        producer.commit_transaction().unwrap();
    } else {
        producer.abort_transaction().unwrap();
    }
}

#[test]
fn committed_10_aborted_5_committed_1_leave_markers_at_10_16_18_and_a_high_watermark_of_19() {
    let cluster = cluster_with("out", 1);
    let tp = TopicPartition::new("out", 0);
    let producer = transactional(&cluster, "tx");
    transaction(&producer, "out", "a", 10, true);
    transaction(&producer, "out", "b", 5, false);

    // The third transaction open: the LSO is its first offset, 17.
    producer.begin_transaction().unwrap();
    assert_eq!(send(&producer, "out", "c0"), 17);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.high_watermark, info.last_stable_offset), (18, 17));
    assert_eq!(read(&cluster, &tp, IsolationLevel::ReadCommitted).len(), 10);
    producer.commit_transaction().unwrap();

    assert_eq!(
        markers(&cluster, &tp),
        [
            (10, ControlRecordType::Commit),
            (16, ControlRecordType::Abort),
            (18, ControlRecordType::Commit)
        ]
    );
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!(
        (
            info.log_end_offset,
            info.high_watermark,
            info.last_stable_offset
        ),
        (19, 19, 19)
    );
    let committed = read(&cluster, &tp, IsolationLevel::ReadCommitted);
    let expected: Vec<(i64, String)> = (0..10)
        .map(|i| (i, format!("a{i}")))
        .chain([(17, "c0".to_owned())])
        .collect();
    assert_eq!(committed, expected);
    let uncommitted = read(&cluster, &tp, IsolationLevel::ReadUncommitted);
    let offsets: Vec<i64> = uncommitted.iter().map(|(o, _)| *o).collect();
    assert_eq!(
        offsets,
        (0..10).chain(11..16).chain([17]).collect::<Vec<_>>(),
        "read_uncommitted sees the aborted records but no marker"
    );

    let dump = cluster.dump_log(&tp).unwrap().to_string();
    assert!(dump.starts_with(
        "Dumping out-0 (log start offset 0, log end offset 19, high watermark 19, last stable offset 19)\n"
    ));
    assert!(dump.contains(
        "baseOffset: 16 lastOffset: 16 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 2 partitionLeaderEpoch: 0 isTransactional: true isControl: true"
    ));
    assert!(dump.contains(
        "| offset: 16 CreateTime: 0 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT coordinatorEpoch: 0"
    ));
    // The data batches carry the producer id, epoch and sequences.
    assert!(dump.contains(
        "baseOffset: 12 lastOffset: 12 count: 1 baseSequence: 1 lastSequence: 1 producerId: 0 producerEpoch: 1 partitionLeaderEpoch: 0 isTransactional: true isControl: false"
    ));
    // Transactions V2: each end bumps the epoch, the marker carries the new
    // one and the next transaction's sequences start at 0 in it, as Kafka
    // 4.4.0 wrote this log (base offset, epoch, base sequence, control).
    let headers: Vec<(i64, i16, i32, bool)> = cluster
        .log_batches(&tp)
        .unwrap()
        .iter()
        .filter(|b| b.is_control() || b.base_sequence() == 0)
        .map(|b| {
            (
                b.base_offset(),
                b.producer_epoch(),
                b.base_sequence(),
                b.is_control(),
            )
        })
        .collect();
    assert_eq!(
        headers,
        [
            (0, 0, 0, false),
            (10, 1, -1, true),
            (11, 1, 0, false),
            (16, 2, -1, true),
            (17, 2, 0, false),
            (18, 3, -1, true)
        ]
    );
}

#[test]
fn read_committed_stops_at_the_last_stable_offset_and_seeks_to_it_as_the_end() {
    let cluster = cluster_with("t", 1);
    let tp = TopicPartition::new("t", 0);
    let plain = cluster.producer();
    plain
        .send(ProducerRecord::new("t", "k", "plain").partition(0))
        .unwrap();
    let producer = transactional(&cluster, "tx");
    producer.begin_transaction().unwrap();
    send(&producer, "t", "open0");
    send(&producer, "t", "open1");
    // A non-transactional record after the open transaction: below the
    // high watermark, above the LSO.
    plain
        .send(
            ProducerRecord::new("t", "k", "after")
                .partition(0)
                .timestamp(50),
        )
        .unwrap();
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.high_watermark, info.last_stable_offset), (4, 1));
    // ListOffsets LATEST: the LSO for read_committed, the HW otherwise.
    let latest = |isolation| {
        cluster
            .admin()
            .list_offsets_with(&tp, OffsetSpec::Latest, isolation)
            .unwrap()
            .map(|o| o.offset)
    };
    assert_eq!(latest(IsolationLevel::ReadCommitted), Some(1));
    assert_eq!(latest(IsolationLevel::ReadUncommitted), Some(4));
    // By timestamp, read_committed finds nothing at or past the LSO.
    let by_time = |isolation| {
        cluster
            .admin()
            .list_offsets_with(&tp, OffsetSpec::Timestamp(10), isolation)
            .unwrap()
            .map(|o| o.offset)
    };
    assert_eq!(by_time(IsolationLevel::ReadUncommitted), Some(3));
    assert_eq!(by_time(IsolationLevel::ReadCommitted), None);
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted),
        [(0, "plain".to_owned())]
    );
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadUncommitted).len(),
        4
    );

    let mut latest = cluster.consumer(
        ConsumerConfig::new()
            .auto_offset_reset(AutoOffsetReset::Latest)
            .isolation_level(IsolationLevel::ReadCommitted),
    );
    latest.assign([tp.clone()]);
    assert_eq!(latest.position(&tp).unwrap(), 1, "latest is the LSO");
    latest.seek_to_end(&tp).unwrap();
    assert_eq!(latest.position(&tp).unwrap(), 1);

    producer.commit_transaction().unwrap();
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 5);
    let records: Vec<i64> = latest.poll().unwrap().iter().map(|r| r.offset).collect();
    assert_eq!(records, [1, 2, 3]);
}

#[test]
fn a_zombie_with_the_old_epoch_can_neither_send_nor_commit() {
    let cluster = cluster_with("t", 2);
    let tp = TopicPartition::new("t", 0);
    let config = ProducerConfig::new().transactional_id("app-0_0");
    let zombie = cluster.producer_with(config.clone());
    zombie.init_transactions().unwrap();
    assert_eq!(zombie.producer_id_and_epoch(), Some((0, 0)));
    zombie.begin_transaction().unwrap();
    send(&zombie, "t", "z0");

    let successor = cluster.producer_with(config);
    successor.init_transactions().unwrap();
    // The zombie's open transaction was aborted with epoch 1; the successor has 2.
    assert_eq!(successor.producer_id_and_epoch(), Some((0, 2)));
    assert_eq!(markers(&cluster, &tp), [(1, ControlRecordType::Abort)]);
    let described = cluster.describe_transaction("app-0_0").unwrap();
    assert_eq!(
        (described.state, described.producer_epoch),
        (TransactionState::Empty, 2)
    );

    // A partition already in its transaction: the log refuses the old epoch.
    let err = zombie
        .send(ProducerRecord::new("t", "k", "z1").partition(0))
        .unwrap_err();
    let fenced = BrokerError::ProducerFenced {
        transactional_id: "app-0_0".to_owned(),
        producer_id: 0,
        epoch: 0,
        current_epoch: 1,
    };
    assert_eq!(err, fenced);
    assert_eq!(
        err.to_string(),
        "producer with transactionalId 'app-0_0' and (producerId=0, epoch=0) has been fenced by another producer with the same transactionalId (epoch 1): close it; a new producer must call init_transactions"
    );
    assert_eq!(
        zombie.transaction_state(),
        Some(TransactionManagerState::FatalError)
    );
    // Fatal from now on: commit and abort give the same error.
    assert_eq!(zombie.commit_transaction().unwrap_err(), fenced);
    assert_eq!(zombie.abort_transaction().unwrap_err(), fenced);

    successor.begin_transaction().unwrap();
    send(&successor, "t", "s0");
    successor.commit_transaction().unwrap();
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted),
        [(2, "s0".to_owned())]
    );
}

#[test]
fn a_zombie_commit_after_the_successor_started_is_fenced_by_the_coordinator() {
    let cluster = cluster_with("t", 1);
    let config = ProducerConfig::new().transactional_id("tx");
    let zombie = cluster.producer_with(config.clone());
    zombie.init_transactions().unwrap();
    zombie.begin_transaction().unwrap();
    let successor = cluster.producer_with(config);
    successor.init_transactions().unwrap();
    // Nothing sent yet: the send's AddPartitionsToTxn is refused.
    let err = zombie
        .send(ProducerRecord::new("t", "k", "v").partition(0))
        .unwrap_err();
    assert!(matches!(
        err,
        BrokerError::ProducerFenced {
            epoch: 0,
            current_epoch: 1,
            ..
        }
    ));
}

#[test]
fn calls_out_of_order_are_typed_errors_naming_the_state() {
    let cluster = cluster_with("t", 1);
    let producer = cluster.producer_with(ProducerConfig::new().transactional_id("tx"));
    let state_of = |err: BrokerError| match err {
        BrokerError::InvalidTxnState {
            operation, state, ..
        } => (operation, state),
        other => panic!("not an InvalidTxnState: {other}"),
    };
    assert_eq!(
        state_of(producer.begin_transaction().unwrap_err()),
        ("begin_transaction", "UNINITIALIZED")
    );
    assert_eq!(
        state_of(
            producer
                .send(ProducerRecord::new("t", "k", "v"))
                .unwrap_err()
        ),
        ("send", "UNINITIALIZED")
    );
    producer.init_transactions().unwrap();
    assert_eq!(
        state_of(producer.init_transactions().unwrap_err()),
        ("init_transactions", "READY")
    );
    let err = producer
        .send(ProducerRecord::new("t", "k", "v"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "TransactionalId tx: cannot send in state READY: call begin_transaction first"
    );
    assert_eq!(
        state_of(producer.commit_transaction().unwrap_err()),
        ("commit_transaction", "READY")
    );
    assert_eq!(
        state_of(producer.abort_transaction().unwrap_err()),
        ("abort_transaction", "READY")
    );
    producer.begin_transaction().unwrap();
    let err = producer.begin_transaction().unwrap_err();
    assert_eq!(
        err.to_string(),
        "TransactionalId tx: cannot begin_transaction in state IN_TRANSACTION: commit_transaction or abort_transaction the open transaction first"
    );
    // An empty transaction commits without the coordinator.
    producer.commit_transaction().unwrap();
    assert_eq!(
        producer.transaction_state(),
        Some(TransactionManagerState::Ready)
    );
    assert_eq!(
        cluster.describe_transaction("tx").unwrap().state,
        TransactionState::Empty
    );

    let plain = cluster.producer();
    assert_eq!(
        plain.begin_transaction().unwrap_err(),
        BrokerError::TransactionalIdRequired {
            operation: "begin_transaction"
        }
    );
    assert_eq!(plain.transaction_state(), None);

    let too_long = cluster.producer_with(
        ProducerConfig::new()
            .transactional_id("long")
            .transaction_timeout_ms(900_001),
    );
    assert_eq!(
        too_long.init_transactions().unwrap_err(),
        BrokerError::InvalidTransactionTimeout {
            transactional_id: "long".to_owned(),
            timeout_ms: 900_001,
            max_ms: 900_000
        }
    );
}

#[test]
fn the_coordinator_aborts_a_transaction_past_its_timeout_and_refuses_the_late_commit() {
    let cluster = Cluster::builder()
        .transaction_config(TransactionConfig {
            abort_timed_out_transaction_cleanup_interval_ms: 1_000,
            ..TransactionConfig::default()
        })
        .build();
    cluster.admin().create_topic(NewTopic::new("t", 1)).unwrap();
    let tp = TopicPartition::new("t", 0);
    let producer = cluster.producer_with(
        ProducerConfig::new()
            .transactional_id("slow")
            .transaction_timeout_ms(5_000),
    );
    producer.init_transactions().unwrap();
    producer.begin_transaction().unwrap();
    send(&producer, "t", "late");
    assert_eq!(
        cluster.describe_transaction("slow").unwrap().txn_start_ms,
        0
    );

    // Checks at 1 s .. 5 s find it within its timeout (started at 0,
    // aborted once older than 5000 ms): the check at 6 s aborts it.
    cluster.advance_ms(5_999);
    assert_eq!(
        cluster.describe_transaction("slow").unwrap().state,
        TransactionState::Ongoing
    );
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 0);
    cluster.advance_ms(1);
    let described = cluster.describe_transaction("slow").unwrap();
    assert_eq!(
        (described.state, described.producer_epoch),
        (TransactionState::CompleteAbort, 1)
    );
    assert_eq!(markers(&cluster, &tp), [(1, ControlRecordType::Abort)]);
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 2);
    assert!(read(&cluster, &tp, IsolationLevel::ReadCommitted).is_empty());

    // Kafka 4.4.0 answers the late commit INVALID_TXN_STATE, fatal for
    // the producer: every later call fails the same way.
    let err = producer.commit_transaction().unwrap_err();
    let refused = BrokerError::InvalidTxnTransition {
        transactional_id: "slow".to_owned(),
        state: "CompleteAbort".to_owned(),
        operation: "commit",
    };
    assert_eq!(err, refused);
    assert_eq!(
        producer.transaction_state(),
        Some(TransactionManagerState::FatalError)
    );
    assert_eq!(producer.abort_transaction().unwrap_err(), refused);
    assert_eq!(producer.begin_transaction().unwrap_err(), refused);
    assert_eq!(markers(&cluster, &tp).len(), 1, "nothing was committed");
}

#[test]
fn offsets_sent_to_a_transaction_are_the_groups_only_after_it_commits() {
    let cluster = cluster_with("in", 1);
    cluster
        .admin()
        .create_topic(NewTopic::new("out", 1))
        .unwrap();
    let input = TopicPartition::new("in", 0);
    let mut consumer = cluster.consumer(
        ConsumerConfig::new()
            .group_id("app")
            .enable_auto_commit(false),
    );
    consumer.subscribe(["in"]).unwrap();
    consumer.poll().unwrap();
    let metadata = consumer.group_metadata().unwrap();
    assert!(metadata.generation >= 1 && !metadata.member_id.is_empty());

    let producer = transactional(&cluster, "app-0_0");
    producer.begin_transaction().unwrap();
    send(&producer, "out", "r");
    producer
        .send_offsets_to_transaction([(input.clone(), 7)], &metadata)
        .unwrap();
    assert_eq!(
        consumer.committed(&input).unwrap(),
        None,
        "not before the commit"
    );
    producer.commit_transaction().unwrap();
    assert_eq!(consumer.committed(&input).unwrap(), Some(7));

    // Aborted: discarded.
    producer.begin_transaction().unwrap();
    producer
        .send_offsets_to_transaction([(input.clone(), 9)], &metadata)
        .unwrap();
    producer.abort_transaction().unwrap();
    assert_eq!(consumer.committed(&input).unwrap(), Some(7));

    // A generation the group has moved past is refused; only an abort is left.
    producer.begin_transaction().unwrap();
    let stale = GroupMetadata {
        generation: metadata.generation - 1,
        ..metadata.clone()
    };
    let err = producer
        .send_offsets_to_transaction([(input.clone(), 11)], &stale)
        .unwrap_err();
    assert_eq!(
        err,
        BrokerError::IllegalGeneration {
            group: "app".to_owned(),
            member: metadata.member_id.clone(),
            generation: metadata.generation - 1,
            current: metadata.generation
        }
    );
    assert_eq!(
        producer.transaction_state(),
        Some(TransactionManagerState::AbortableError)
    );
    assert!(matches!(
        producer.commit_transaction().unwrap_err(),
        BrokerError::InvalidTxnState {
            state: "ABORTABLE_ERROR",
            ..
        }
    ));
    let unknown = GroupMetadata {
        member_id: "nobody".to_owned(),
        ..metadata.clone()
    };
    assert!(matches!(
        producer.send_offsets_to_transaction([(input.clone(), 11)], &unknown),
        Err(BrokerError::InvalidTxnState { .. })
    ));
    producer.abort_transaction().unwrap();
    producer.begin_transaction().unwrap();
    assert_eq!(
        producer
            .send_offsets_to_transaction([(input.clone(), 11)], &unknown)
            .unwrap_err(),
        BrokerError::UnknownMemberId {
            group: "app".to_owned(),
            member: "nobody".to_owned()
        }
    );
    producer.abort_transaction().unwrap();
    // Group id only (generation -1): not checked.
    producer.begin_transaction().unwrap();
    producer
        .send_offsets_to_transaction(
            [(input.clone(), 12)],
            &GroupMetadata {
                group_id: "app".to_owned(),
                generation: -1,
                member_id: String::new(),
            },
        )
        .unwrap();
    producer.commit_transaction().unwrap();
    assert_eq!(consumer.committed(&input).unwrap(), Some(12));
}

#[test]
fn a_follower_that_becomes_leader_knows_the_open_transaction() {
    let cluster = Cluster::builder().brokers(3).build();
    cluster
        .admin()
        .create_topic(NewTopic::new("t", 1).replication_factor(3))
        .unwrap();
    let tp = TopicPartition::new("t", 0);
    let producer = transactional(&cluster, "tx");
    transaction(&producer, "t", "a", 2, true);
    producer.begin_transaction().unwrap();
    send(&producer, "t", "open");
    cluster.replicate();
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 3);

    let leader = cluster.partition_state(&tp).unwrap().leader.unwrap();
    cluster.stop_broker(leader).unwrap();
    let state = cluster.partition_state(&tp).unwrap();
    assert_ne!(state.leader, Some(leader));
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.high_watermark, info.last_stable_offset), (4, 3));
    assert_eq!(read(&cluster, &tp, IsolationLevel::ReadCommitted).len(), 2);

    // The marker goes to the new leader; the transaction commits there.
    producer.commit_transaction().unwrap();
    cluster.replicate();
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.high_watermark, info.last_stable_offset), (5, 5));
    let committed = read(&cluster, &tp, IsolationLevel::ReadCommitted);
    assert_eq!(committed.last(), Some(&(3, "open".to_owned())));
    assert_eq!(committed.len(), 3);
}

#[test]
fn a_marker_the_leader_cannot_take_is_written_later_and_the_lso_waits_for_it() {
    let cluster = cluster_with("t", 1);
    let tp = TopicPartition::new("t", 0);
    let producer = transactional(&cluster, "tx");
    producer.begin_transaction().unwrap();
    send(&producer, "t", "v");
    cluster.pause_broker(1).unwrap();
    // Decided: the commit returns; the marker waits for the leader.
    producer.commit_transaction().unwrap();
    let described = cluster.describe_transaction("tx").unwrap();
    assert_eq!(described.state, TransactionState::PrepareCommit);
    assert_eq!(described.pending_markers.len(), 1);
    // The next transaction of the id waits for it too.
    producer.begin_transaction().unwrap();
    assert_eq!(
        producer
            .send(ProducerRecord::new("t", "k", "w").partition(0))
            .unwrap_err(),
        BrokerError::ConcurrentTransactions {
            transactional_id: "tx".to_owned(),
            pending: 1
        }
    );
    cluster.resume_broker(1).unwrap();
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 0);
    // The coordinator's next periodic look (10 s) writes it.
    cluster.advance_ms(10_000);
    let described = cluster.describe_transaction("tx").unwrap();
    assert_eq!(described.state, TransactionState::CompleteCommit);
    assert_eq!(markers(&cluster, &tp), [(1, ControlRecordType::Commit)]);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.high_watermark, info.last_stable_offset), (2, 2));
    // The transaction opened meanwhile goes on.
    assert_eq!(send(&producer, "t", "w"), 2);
    producer.commit_transaction().unwrap();
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted),
        [(0, "v".to_owned()), (2, "w".to_owned())]
    );
}

#[test]
fn the_client_api_producer_is_transactional_with_a_transactional_id() {
    use streams_broker::SimulatedClients;
    use streams_clients::{ClientConfig, ClientError, ClientSupplier};

    let cluster = cluster_with("t", 1);
    let tp = TopicPartition::new("t", 0);
    let clients = SimulatedClients::new(cluster.clone());
    let config = ClientConfig::new()
        .set("client.id", "p")
        .set("transactional.id", "app-0_0");
    let mut zombie = clients.producer(&config).unwrap();
    zombie.init_transactions().unwrap();
    zombie.begin_transaction().unwrap();
    zombie
        .send(streams_clients::ProducerRecord::new("t", "k", "aborted").partition(0))
        .unwrap();
    zombie.abort_transaction().unwrap();
    zombie.begin_transaction().unwrap();
    zombie
        .send(streams_clients::ProducerRecord::new("t", "k", "committed").partition(0))
        .unwrap();
    // commit flushes the pending send first.
    zombie.commit_transaction().unwrap();
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted),
        [(2, "committed".to_owned())]
    );

    zombie.begin_transaction().unwrap();
    let mut successor = clients.producer(&config).unwrap();
    successor.init_transactions().unwrap();
    zombie
        .send(streams_clients::ProducerRecord::new("t", "k", "late").partition(0))
        .unwrap_err();
    let err = zombie.commit_transaction().unwrap_err();
    assert!(
        matches!(&err, ClientError::ProducerFenced { transactional_id, .. } if transactional_id == "app-0_0"),
        "{err:?}"
    );
    let err = successor.commit_transaction().unwrap_err();
    assert!(
        matches!(&err, ClientError::InvalidState { operation: "commit_transaction", state, .. } if state == "READY"),
        "{err:?}"
    );
}

#[test]
fn delete_records_past_an_open_transactions_start_moves_the_lso_with_the_log_start() {
    let cluster = cluster_with("t", 1);
    let tp = TopicPartition::new("t", 0);
    let producer = transactional(&cluster, "tx");
    producer.begin_transaction().unwrap();
    send(&producer, "t", "open0"); // 0
    send(&producer, "t", "open1"); // 1
    cluster
        .producer()
        .send(ProducerRecord::new("t", "k", "plain").partition(0))
        .unwrap(); // 2
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 0);
    assert_eq!(cluster.admin().delete_records_before(&tp, 1).unwrap(), 1);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.log_start_offset, info.last_stable_offset), (1, 1));
    assert!(read(&cluster, &tp, IsolationLevel::ReadCommitted).is_empty());
    producer.commit_transaction().unwrap();
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted),
        [(1, "open1".to_owned()), (2, "plain".to_owned())]
    );
}

fn compacted(cluster: &Cluster) -> TopicPartition {
    cluster
        .admin()
        .create_topic(
            NewTopic::new("c", 1)
                .config("cleanup.policy", "compact")
                .config("segment.ms", "100")
                .config("min.cleanable.dirty.ratio", "0.01")
                .config("delete.retention.ms", "1000"),
        )
        .unwrap();
    TopicPartition::new("c", 0)
}

fn send_at(producer: &Producer, key: &str, value: &str, timestamp: i64) -> i64 {
    producer
        .send(
            ProducerRecord::new("c", key.to_owned(), value.to_owned())
                .partition(0)
                .timestamp(timestamp),
        )
        .unwrap()
        .offset
}

fn data_offsets(cluster: &Cluster, tp: &TopicPartition) -> Vec<i64> {
    cluster
        .log_records(tp)
        .unwrap()
        .iter()
        .map(|r| r.offset)
        .collect()
}

#[test]
fn compaction_removes_aborted_data_then_the_marker_after_delete_retention_ms() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = compacted(&cluster);
    let producer = transactional(&cluster, "tx");
    let plain = cluster.producer();
    producer.begin_transaction().unwrap();
    send_at(&producer, "a", "1", 0); // 0
    send_at(&producer, "b", "1", 0); // 1
    producer.abort_transaction().unwrap(); // marker 2
    producer.begin_transaction().unwrap();
    send_at(&producer, "c", "1", 0); // 3
    producer.commit_transaction().unwrap(); // marker 4
    cluster.advance_ms(200);
    send_at(&plain, "d", "1", 200); // 5, rolls

    // The aborted records go; their marker stays (its batches were read).
    let cleaned = cluster.run_cleaner();
    assert_eq!(cleaned.len(), 1);
    assert_eq!(data_offsets(&cluster, &tp), [3, 5]);
    assert_eq!(
        markers(&cluster, &tp),
        [
            (2, ControlRecordType::Abort),
            (4, ControlRecordType::Commit)
        ]
    );
    assert_eq!(read(&cluster, &tp, IsolationLevel::ReadCommitted).len(), 2);

    // Next cleaning: the abort marker's transaction has no data left, so
    // it gets a delete horizon of now + delete.retention.ms and stays.
    cluster.advance_ms(200);
    send_at(&plain, "e", "1", 400); // 6, rolls
    cluster.run_cleaner();
    let batches = cluster.log_batches(&tp).unwrap();
    let abort = batches.iter().find(|b| b.base_offset() == 2).unwrap();
    assert_eq!(abort.delete_horizon_ms(), Some(400 + 1_000));
    // The commit marker's transaction still has its record: no horizon.
    let commit = batches.iter().find(|b| b.base_offset() == 4).unwrap();
    assert_eq!(commit.delete_horizon_ms(), None);

    // Past the horizon, the next cleaning removes the abort marker.
    cluster.advance_ms(1_000);
    send_at(&plain, "f", "1", 1_400); // 7, rolls
    cluster.run_cleaner();
    assert_eq!(markers(&cluster, &tp), [(4, ControlRecordType::Commit)]);
    assert_eq!(data_offsets(&cluster, &tp), [3, 5, 6, 7]);
    assert_eq!(
        read(&cluster, &tp, IsolationLevel::ReadCommitted)
            .iter()
            .map(|(o, _)| *o)
            .collect::<Vec<_>>(),
        [3, 5, 6, 7]
    );
}

#[test]
fn the_cleaner_does_not_clean_past_the_last_stable_offset() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = compacted(&cluster);
    let producer = transactional(&cluster, "tx");
    let plain = cluster.producer();
    send_at(&plain, "x", "0", 0); // 0
    producer.begin_transaction().unwrap();
    send_at(&producer, "x", "1", 0); // 1: an open transaction
    cluster.advance_ms(200);
    send_at(&plain, "y", "1", 200); // 2, rolls
    cluster.advance_ms(200);
    send_at(&plain, "z", "1", 400); // 3, rolls
    assert_eq!(cluster.log_info(&tp).unwrap().last_stable_offset, 1);
    cluster.run_cleaner();
    // Nothing at or past the LSO was cleaned: x=0 is still the value a
    // read_committed consumer sees.
    assert_eq!(data_offsets(&cluster, &tp), [0, 1, 2, 3]);

    producer.abort_transaction().unwrap(); // marker 4
    cluster.advance_ms(200);
    send_at(&plain, "w", "1", 600); // 5, rolls
    cluster.run_cleaner();
    // The aborted x=1 goes, and x=0 stays: aborted data is not in the map.
    assert_eq!(data_offsets(&cluster, &tp), [0, 2, 3, 5]);
}

#[derive(Debug, Clone)]
enum Op {
    /// A transaction of this many records, committed or not.
    Transaction(u8, bool),
    /// Non-transactional records on partition 1.
    Plain(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6, any::<bool>()).prop_map(|(n, c)| Op::Transaction(n, c)),
        1 => (1u8..4).prop_map(Op::Plain),
    ]
}

proptest! {
    /// For any sequence of committed and aborted transactions (and plain
    /// writes to another partition), a read_committed consumer gets
    /// exactly the committed transactions' records in offset order, a
    /// read_uncommitted one every data record, and the high watermark is
    /// the data records plus one marker per non-empty transaction.
    #[test]
    fn read_committed_gets_exactly_the_committed_records(ops in proptest::collection::vec(op(), 1..25)) {
        let cluster = cluster_with("t", 2);
        let tp0 = TopicPartition::new("t", 0);
        let tp1 = TopicPartition::new("t", 1);
        let producer = transactional(&cluster, "tx");
        let plain = cluster.producer();
        let mut committed = Vec::new();
        let (mut data, mut marker_count, mut plain_count) = (0_i64, 0_i64, 0_i64);
        for (t, op) in ops.into_iter().enumerate() {
            match op {
                Op::Transaction(n, commit) => {
                    producer.begin_transaction().unwrap();
                    for i in 0..n {
                        let value = format!("t{t}-{i}");
                        let offset = send(&producer, "t", &value);
                        prop_assert_eq!(offset, data + marker_count);
                        if commit {
                            committed.push((offset, value));
                        }
                        data += 1;
                    }
                    if commit {
                        producer.commit_transaction().unwrap();
                    } else {
                        producer.abort_transaction().unwrap();
                    }
                    marker_count += i64::from(n > 0);
                }
                Op::Plain(n) => {
                    for i in 0..n {
                        plain
                            .send(ProducerRecord::new("t", "p", format!("p{i}")).partition(1))
                            .unwrap();
                        plain_count += 1;
                    }
                }
            }
        }
        let info = cluster.log_info(&tp0).unwrap();
        prop_assert_eq!(info.high_watermark, data + marker_count);
        prop_assert_eq!(info.last_stable_offset, info.high_watermark);
        prop_assert_eq!(read(&cluster, &tp0, IsolationLevel::ReadCommitted), committed);
        prop_assert_eq!(read(&cluster, &tp0, IsolationLevel::ReadUncommitted).len() as i64, data);
        prop_assert_eq!(read(&cluster, &tp1, IsolationLevel::ReadCommitted).len() as i64, plain_count);
        prop_assert_eq!(cluster.log_info(&tp1).unwrap().high_watermark, plain_count);
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// Producer 0 or 1 sends this many records in its transaction (opened
    /// first when none is).
    Send(usize, u8),
    /// Producer 0 or 1 commits (true) or aborts its transaction, if open.
    End(usize, bool),
    /// Non-transactional records on the same partition.
    Plain(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0usize..2, 1u8..4).prop_map(|(p, n)| Step::Send(p, n)),
        2 => (0usize..2, any::<bool>()).prop_map(|(p, c)| Step::End(p, c)),
        1 => (1u8..3).prop_map(Step::Plain),
    ]
}

/// The model of one partition: every data record with whether it is
/// committed yet, and each producer's open transaction.
#[derive(Default)]
struct Model {
    /// offset -> (value, committed)
    records: std::collections::BTreeMap<i64, (String, bool)>,
    /// Per producer: the offsets of its open transaction's records.
    open: [Option<Vec<i64>>; 2],
    markers: i64,
}

proptest! {
    /// Two transactional producers and a plain one interleaved on one
    /// partition: after every step the LSO is the first offset of the
    /// earliest open transaction (else the high watermark), the high
    /// watermark counts every record and marker, and a read_committed
    /// consumer gets exactly the plain and committed records below the
    /// LSO, in offset order.
    #[test]
    fn interleaved_transactions_on_one_partition_match_the_model(steps in proptest::collection::vec(step(), 1..30)) {
        let cluster = cluster_with("t", 1);
        let tp = TopicPartition::new("t", 0);
        let producers = [transactional(&cluster, "p0"), transactional(&cluster, "p1")];
        let plain = cluster.producer();
        let mut model = Model::default();
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Step::Send(p, n) => {
                    if model.open[p].is_none() {
                        producers[p].begin_transaction().unwrap();
                        model.open[p] = Some(Vec::new());
                    }
                    for j in 0..n {
                        let value = format!("s{i}-{j}");
                        let offset = send(&producers[p], "t", &value);
                        model.records.insert(offset, (value, false));
                        model.open[p].as_mut().unwrap().push(offset);
                    }
                }
                Step::End(p, commit) => {
                    if let Some(offsets) = model.open[p].take() {
                        if commit {
                            producers[p].commit_transaction().unwrap();
                        } else {
                            producers[p].abort_transaction().unwrap();
                        }
                        for o in offsets {
                            model.records.get_mut(&o).unwrap().1 = commit;
                        }
                        model.markers += 1;
                    }
                }
                Step::Plain(n) => {
                    for j in 0..n {
                        let value = format!("p{i}-{j}");
                        let offset = plain
                            .send(ProducerRecord::new("t", "k", value.clone()).partition(0))
                            .unwrap()
                            .offset;
                        model.records.insert(offset, (value, true));
                    }
                }
            }
            let hw = i64::try_from(model.records.len()).unwrap() + model.markers;
            let lso = model
                .open
                .iter()
                .flatten()
                .filter_map(|offsets| offsets.first().copied())
                .min()
                .unwrap_or(hw);
            let info = cluster.log_info(&tp).unwrap();
            prop_assert_eq!((info.high_watermark, info.last_stable_offset), (hw, lso));
            let expected: Vec<(i64, String)> = model
                .records
                .iter()
                .filter(|(o, (_, committed))| **o < lso && *committed)
                .map(|(o, (v, _))| (*o, v.clone()))
                .collect();
            prop_assert_eq!(read(&cluster, &tp, IsolationLevel::ReadCommitted), expected);
            let all: Vec<i64> = model.records.keys().copied().collect();
            let uncommitted: Vec<i64> = read(&cluster, &tp, IsolationLevel::ReadUncommitted)
                .into_iter()
                .map(|(o, _)| o)
                .collect();
            prop_assert_eq!(uncommitted, all);
        }
    }
}

/// A consumer of group `app` assigned `in-0` by hand, at `level`.
fn member(cluster: &Cluster, level: IsolationLevel) -> streams_broker::Consumer {
    let mut consumer = cluster.consumer(
        ConsumerConfig::new()
            .group_id("app")
            .enable_auto_commit(false)
            .auto_offset_reset(AutoOffsetReset::Earliest)
            .isolation_level(level),
    );
    consumer.assign([TopicPartition::new("in", 0)]);
    consumer
}

fn polled_offsets(consumer: &mut streams_broker::Consumer) -> Vec<i64> {
    consumer
        .poll()
        .unwrap()
        .into_iter()
        .map(|r| r.offset)
        .collect()
}

/// KIP-447: a `read_committed` member does not start from a committed
/// offset that an open transaction is about to replace (Kafka's
/// `UNSTABLE_OFFSET_COMMIT` for an OffsetFetch with `require_stable`): it
/// waits until the transaction commits (and starts from the new offset),
/// aborts (the old one), or times out. Without the wait a new owner would
/// re-process what the old owner's transaction is about to commit.
#[test]
fn kip_447_a_read_committed_member_waits_for_an_offset_pending_in_a_transaction() {
    let cluster = Cluster::builder()
        .transaction_config(TransactionConfig {
            abort_timed_out_transaction_cleanup_interval_ms: 1_000,
            ..TransactionConfig::default()
        })
        .build();
    cluster
        .admin()
        .create_topic(NewTopic::new("in", 1))
        .unwrap();
    let input = TopicPartition::new("in", 0);
    let plain = cluster.producer();
    for i in 0..6 {
        plain
            .send(ProducerRecord::new("in", "k", format!("r{i}")).partition(0))
            .unwrap();
    }
    member(&cluster, IsolationLevel::ReadUncommitted)
        .commit_offsets([(input.clone(), 2)])
        .unwrap();
    let group_only = GroupMetadata {
        group_id: "app".to_owned(),
        generation: -1,
        member_id: String::new(),
    };
    let unstable = BrokerError::UnstableOffsetCommit {
        group: "app".to_owned(),
        topic: "in".to_owned(),
        partition: 0,
    };

    // Committed: the waiting member starts at the transaction's offset.
    let old_owner = transactional(&cluster, "app-old-owner");
    old_owner.begin_transaction().unwrap();
    old_owner
        .send_offsets_to_transaction([(input.clone(), 5)], &group_only)
        .unwrap();
    let mut new_owner = member(&cluster, IsolationLevel::ReadCommitted);
    assert_eq!(new_owner.committed(&input).unwrap_err(), unstable);
    assert_eq!(new_owner.position(&input).unwrap_err(), unstable);
    assert_eq!(polled_offsets(&mut new_owner), Vec::<i64>::new(), "waits");
    // read_uncommitted does not ask for stable offsets (Kafka's default).
    let mut uncommitted = member(&cluster, IsolationLevel::ReadUncommitted);
    assert_eq!(uncommitted.committed(&input).unwrap(), Some(2));
    assert_eq!(polled_offsets(&mut uncommitted), [2, 3, 4, 5]);
    old_owner.commit_transaction().unwrap();
    assert_eq!(new_owner.committed(&input).unwrap(), Some(5));
    assert_eq!(polled_offsets(&mut new_owner), [5]);

    // Aborted: the old committed offset stands.
    old_owner.begin_transaction().unwrap();
    old_owner
        .send_offsets_to_transaction([(input.clone(), 6)], &group_only)
        .unwrap();
    let mut next = member(&cluster, IsolationLevel::ReadCommitted);
    assert_eq!(polled_offsets(&mut next), Vec::<i64>::new());
    old_owner.abort_transaction().unwrap();
    assert_eq!(polled_offsets(&mut next), [5]);

    // Timed out: the coordinator aborts it (60 s, checked each second),
    // and the wait ends with the old offset.
    let zombie = transactional(&cluster, "app-zombie");
    zombie.begin_transaction().unwrap();
    zombie
        .send_offsets_to_transaction([(input.clone(), 6)], &group_only)
        .unwrap();
    let mut last = member(&cluster, IsolationLevel::ReadCommitted);
    cluster.advance_ms(60_000);
    assert_eq!(last.committed(&input).unwrap_err(), unstable);
    assert_eq!(polled_offsets(&mut last), Vec::<i64>::new());
    cluster.advance_ms(1_000);
    assert_eq!(last.committed(&input).unwrap(), Some(5));
    assert_eq!(polled_offsets(&mut last), [5]);
}
