//! Replication: the in-sync replicas, `acks`, truncation on rejoin, and
//! the faults' errors.

use streams_broker::{
    Acks, BrokerError, Cluster, NewTopic, ProducerConfig, ProducerRecord, TopicPartition,
};

fn three(configs: &[(&str, &str)]) -> (Cluster, TopicPartition) {
    let cluster = Cluster::builder()
        .brokers(3)
        .replica_lag_time_max_ms(1_000)
        .build();
    let mut topic = NewTopic::new("t", 1).replication_factor(3);
    for (k, v) in configs {
        topic = topic.config(*k, *v);
    }
    cluster.admin().create_topic(topic).unwrap();
    (cluster, TopicPartition::new("t", 0))
}

fn record(i: i64) -> ProducerRecord {
    ProducerRecord::new("t", format!("k{i}"), format!("v{i}")).timestamp(i)
}

#[test]
fn acks_all_completes_when_every_in_sync_replica_has_the_record() {
    let (cluster, tp) = three(&[]);
    let sent = cluster.producer().send(record(0)).unwrap();
    assert_eq!(sent.offset, 0);
    assert_eq!(
        cluster.replica_log_end_offsets(&tp).unwrap(),
        [(1, 1), (2, 1), (3, 1)]
    );
    let state = cluster.partition_state(&tp).unwrap();
    assert_eq!(
        (state.leader, state.leader_epoch, state.high_watermark),
        (Some(1), 0, 1)
    );
    assert_eq!(state.isr, [1, 2, 3]);
    assert_eq!(
        cluster.now_ms(),
        0,
        "healthy followers answer without the clock moving"
    );
}

#[test]
fn a_lagging_follower_leaves_the_isr_and_the_high_watermark_moves_on() {
    let (cluster, tp) = three(&[]);
    cluster.cut_link(1, 3).unwrap();
    // acks=all waits for broker 3 until it leaves the ISR (1000 ms lag).
    let sent = cluster.producer().send(record(0)).unwrap();
    assert_eq!(sent.offset, 0);
    let state = cluster.partition_state(&tp).unwrap();
    assert_eq!(state.isr, [1, 2]);
    assert_eq!(state.high_watermark, 1);
    assert_eq!(cluster.now_ms(), 1_010);
    // Healed, broker 3 catches up and joins again.
    cluster.heal();
    cluster.advance_ms(20);
    assert_eq!(cluster.partition_state(&tp).unwrap().isr, [1, 2, 3]);
    let events: Vec<String> = cluster.timeline().iter().map(|e| e.to_string()).collect();
    assert!(
        events
            .iter()
            .any(|e| e.ends_with("t-0: broker 3 left the ISR, now [1, 2]")),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.ends_with("t-0: broker 3 joined the ISR, now [1, 2, 3]")),
        "{events:#?}"
    );
}

#[test]
fn acks_all_below_min_insync_replicas_is_refused_before_the_append() {
    let (cluster, tp) = three(&[("min.insync.replicas", "2")]);
    cluster.stop_broker(2).unwrap();
    cluster.stop_broker(3).unwrap();
    assert_eq!(cluster.partition_state(&tp).unwrap().isr, [1]);
    assert_eq!(
        cluster.producer().send(record(0)).unwrap_err(),
        BrokerError::NotEnoughReplicas {
            topic: "t".into(),
            partition: 0,
            isr: 1,
            min_isr: 2
        }
    );
    assert_eq!(cluster.replica_log_end_offsets(&tp).unwrap()[0], (1, 0));
    // acks=1 still writes to the leader, but the high watermark stays:
    // with fewer than min.insync.replicas in sync it does not advance.
    let one = cluster.producer_with(ProducerConfig::new().acks(Acks::One));
    assert_eq!(one.send(record(0)).unwrap().offset, 0);
    assert_eq!(cluster.partition_state(&tp).unwrap().high_watermark, 0);
}

#[test]
fn acks_all_times_out_when_the_in_sync_replicas_do_not_answer() {
    let (cluster, _tp) = three(&[("min.insync.replicas", "2")]);
    let cluster = {
        // A longer lag, so that the followers stay in the ISR past the timeout.
        drop(cluster);
        let c = Cluster::builder().brokers(3).build();
        c.admin()
            .create_topic(
                NewTopic::new("t", 1)
                    .replication_factor(3)
                    .config("min.insync.replicas", "2"),
            )
            .unwrap();
        c
    };
    cluster.pause_broker(2).unwrap();
    cluster.pause_broker(3).unwrap();
    let producer = cluster.producer_with(ProducerConfig::new().request_timeout_ms(5_000));
    assert_eq!(
        producer.send(record(0)).unwrap_err(),
        BrokerError::RequestTimedOut {
            topic: "t".into(),
            partition: 0,
            timeout_ms: 5_000
        }
    );
    assert_eq!(cluster.now_ms(), 5_000);
}

/// The high watermark reaching the record completes the send at once (as
/// Kafka's `updateFollowerFetchState` tries the delayed produces): a fence
/// of the follower later in the same round does not turn it into
/// `NOT_ENOUGH_REPLICAS_AFTER_APPEND`.
#[test]
fn acks_all_completes_when_the_follower_fetches_even_if_it_is_fenced_just_after() {
    let cluster = Cluster::builder().brokers(2).build();
    cluster
        .admin()
        .create_topic(
            NewTopic::new("t", 1)
                .replication_factor(2)
                .config("min.insync.replicas", "2"),
        )
        .unwrap();
    let tp = TopicPartition::new("t", 0);
    // Broker 2 is cut off from the controller (fenced at 9000 ms) and,
    // for now, from the leader.
    cluster.isolate_broker(2).unwrap();
    cluster.cut_link(1, 2).unwrap();
    cluster.advance_ms(8_990);
    let pending = cluster.producer().send_async(record(0)).unwrap();
    assert!(pending.poll().is_none());
    cluster.restore_link(1, 2).unwrap();
    // At 9000 broker 2 fetches the record, then the controller fences it.
    cluster.advance_ms(10);
    assert_eq!(pending.poll().unwrap().unwrap().offset, 0);
    let state = cluster.partition_state(&tp).unwrap();
    assert_eq!((state.isr.clone(), state.high_watermark), (vec![1], 1));
}

/// Kafka 3.7+: with the ISR below `min.insync.replicas` the high watermark
/// does not advance, so a send the ISR shrank under waits and times out.
#[test]
fn acks_all_times_out_when_the_isr_falls_below_min_after_the_append() {
    let cluster = Cluster::builder()
        .brokers(2)
        .replica_lag_time_max_ms(1_000)
        .build();
    cluster
        .admin()
        .create_topic(
            NewTopic::new("t", 1)
                .replication_factor(2)
                .config("min.insync.replicas", "2"),
        )
        .unwrap();
    let tp = TopicPartition::new("t", 0);
    cluster.cut_link(1, 2).unwrap();
    let producer = cluster.producer_with(ProducerConfig::new().request_timeout_ms(3_000));
    assert_eq!(
        producer.send(record(0)).unwrap_err(),
        BrokerError::RequestTimedOut {
            topic: "t".into(),
            partition: 0,
            timeout_ms: 3_000
        }
    );
    let state = cluster.partition_state(&tp).unwrap();
    assert_eq!((state.isr.clone(), state.high_watermark), (vec![1], 0));
    // And the next send is refused before the append.
    assert!(matches!(
        producer.send(record(1)),
        Err(BrokerError::NotEnoughReplicas {
            isr: 1,
            min_isr: 2,
            ..
        })
    ));
}

#[test]
fn a_send_in_flight_fails_with_not_leader_when_leadership_moves() {
    let (cluster, tp) = three(&[]);
    cluster.cut_link(1, 2).unwrap();
    cluster.cut_link(1, 3).unwrap();
    let pending = cluster.producer().send_async(record(0)).unwrap();
    cluster.force_election(&tp, Some(2)).unwrap();
    assert_eq!(
        pending.poll().unwrap().unwrap_err(),
        BrokerError::NotLeaderOrFollower {
            topic: "t".into(),
            partition: 0,
            broker: 1
        }
    );
}

#[test]
fn a_restarted_broker_that_lost_unflushed_data_catches_up_from_the_leader() {
    let (cluster, tp) = three(&[]);
    let producer = cluster.producer();
    for i in 0..5 {
        producer.send(record(i)).unwrap();
    }
    cluster.flush_broker(3).unwrap();
    for i in 5..8 {
        producer.send(record(i)).unwrap();
    }
    cluster.stop_broker(3).unwrap();
    cluster.restart_broker(3, true).unwrap();
    assert_eq!(cluster.replica_log_end_offsets(&tp).unwrap()[2], (3, 5));
    cluster.replicate();
    assert_eq!(cluster.replica_log_end_offsets(&tp).unwrap()[2], (3, 8));
    assert_eq!(
        cluster.replica_records(&tp, 3).unwrap(),
        cluster.replica_records(&tp, 1).unwrap()
    );
    assert!(cluster.timeline().iter().any(|e| {
        e.to_string()
            .ends_with("t-0: broker 3 truncated its log from 8 to 5 (lost what was not flushed)")
    }));
}

#[test]
fn with_no_in_sync_replica_alive_the_partition_has_no_leader_unless_unclean_election_is_allowed() {
    for (unclean, expected) in [("false", None), ("true", Some(3))] {
        let (cluster, tp) = three(&[("unclean.leader.election.enable", unclean)]);
        cluster.stop_broker(3).unwrap();
        cluster.producer().send(record(0)).unwrap();
        cluster.stop_broker(1).unwrap();
        cluster.stop_broker(2).unwrap();
        cluster.restart_broker(3, false).unwrap();
        assert_eq!(
            cluster.partition_state(&tp).unwrap().leader,
            expected,
            "unclean={unclean}"
        );
        if expected.is_none() {
            assert_eq!(
                cluster.producer().send(record(1)).unwrap_err(),
                BrokerError::LeaderNotAvailable {
                    topic: "t".into(),
                    partition: 0
                }
            );
        }
    }
}

#[test]
fn faults_on_brokers_that_do_not_exist_or_are_in_the_wrong_state_are_errors() {
    let (cluster, tp) = three(&[]);
    assert_eq!(
        cluster.stop_broker(7).unwrap_err(),
        BrokerError::UnknownBroker {
            broker: 7,
            brokers: 3
        }
    );
    assert_eq!(
        cluster.restart_broker(1, false).unwrap_err().to_string(),
        "broker 1 is running: restart needs it stopped"
    );
    cluster.pause_broker(2).unwrap();
    assert!(matches!(
        cluster.pause_broker(2),
        Err(BrokerError::BrokerState { broker: 2, .. })
    ));
    assert!(matches!(
        cluster.force_election(&tp, Some(9)),
        Err(BrokerError::UnknownBroker { .. })
    ));
    assert_eq!(
        cluster
            .admin()
            .create_topic(NewTopic::new("big", 1).replication_factor(4))
            .unwrap_err(),
        BrokerError::InvalidReplicationFactor {
            topic: "big".into(),
            replication_factor: 4,
            brokers: 3
        }
    );
}

#[test]
fn the_same_faults_give_the_same_timeline() {
    let run = || {
        let (cluster, tp) = three(&[]);
        let producer = cluster.producer();
        producer.send(record(0)).unwrap();
        cluster.pause_broker(2).unwrap();
        cluster.advance_ms(10_000);
        cluster.stop_broker(1).unwrap();
        producer.send(record(1)).unwrap();
        cluster.resume_broker(2).unwrap();
        cluster.restart_broker(1, false).unwrap();
        cluster.advance_ms(100);
        cluster.force_election(&tp, None).unwrap();
        cluster
            .timeline()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = run();
    assert_eq!(first, run());
    assert!(
        first.contains("t-0: broker 3 elected leader, epoch 1"),
        "{first}"
    );
}

mod schedules {
    use proptest::prelude::*;
    use streams_broker::replication::schedule::{Schedule, run};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Seeded fault schedules keep Kafka's promises (acknowledged and
        /// consumed records stay, epochs never go back); a failure prints
        /// the seed and the timeline.
        #[test]
        fn seeded_fault_schedules_keep_kafkas_promises(seed in any::<u64>()) {
            if let Err(violation) = run(&Schedule::generate(seed, 80)) {
                prop_assert!(false, "{violation}");
            }
        }
    }

    #[test]
    fn a_seed_replays_its_timeline_byte_for_byte() {
        for seed in [1, 7, 2024] {
            let schedule = Schedule::generate(seed, 120);
            let (a, b) = (run(&schedule).unwrap(), run(&schedule).unwrap());
            assert_eq!(a.timeline, b.timeline, "seed {seed}");
            assert!(a.acknowledged > 0, "seed {seed} acknowledged nothing");
        }
        assert_ne!(Schedule::generate(1, 50), Schedule::generate(2, 50));
    }
}
