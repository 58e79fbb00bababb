//! The `KafkaStreams` runtime's tasks against Kafka's behaviour: standby
//! replicas and restoration from the standby's position, the
//! `PartitionGroup` order and `max.task.idle.ms` (KIP-695), several stream
//! threads on one instance, the purge of repartition topics after a
//! commit, a zombie under at-least-once, and the errors of misuse.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use streams_broker::{ConsumerConfig, OffsetSpec, ProducerRecord, TopicPartition};
use streams_core::runtime::{
    KafkaStreams, RecordingRestoreListener, Restoration, RuntimeError, State, TaskId,
    ThreadMetadata,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::state::TimestampedKeyValueStore;
use streams_core::topology::Topology;
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::app::{AppError, StreamsCluster};

// The word count, its model and input, shared with the runtime tests.
use super::runtime::{COUNTS, WORDS, app_with_topics, model, send_lines, tasks, word_count};

const STORE: &str = "KSTREAM-AGGREGATE-STATE-STORE-0000000003";
const CHANGELOG: &str = "word-count-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
const REPARTITION: &str = "word-count-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";

fn config() -> StreamsConfig {
    StreamsConfig::new("word-count").with_property("commit.interval.ms", "1000")
}

/// The counts in store `STORE` of `task`, active or standby.
fn counts_in(
    app: &StreamsCluster,
    instance: &str,
    task: TaskId,
    standby: bool,
) -> BTreeMap<String, i64> {
    let streams = app.instance(instance).unwrap();
    let store = if standby {
        streams.standby_store::<TimestampedKeyValueStore<String, i64>>(STORE, task)
    } else {
        streams.store::<TimestampedKeyValueStore<String, i64>>(STORE, task)
    }
    .unwrap();
    store.all().unwrap().map(|(k, v)| (k, v.value)).collect()
}

fn end_offset(app: &StreamsCluster, topic: &str, partition: i32) -> i64 {
    let tp = TopicPartition::new(topic, partition);
    app.cluster()
        .admin()
        .list_offsets(&tp, OffsetSpec::Latest)
        .unwrap()
        .unwrap()
        .offset
}

fn start_offset(app: &StreamsCluster, topic: &str, partition: i32) -> i64 {
    let tp = TopicPartition::new(topic, partition);
    app.cluster()
        .admin()
        .list_offsets(&tp, OffsetSpec::Earliest)
        .unwrap()
        .unwrap()
        .offset
}

fn committed(app: &StreamsCluster, group: &str, topic: &str, partition: i32) -> Option<i64> {
    let consumer = app
        .cluster()
        .consumer(ConsumerConfig::new().group_id(group));
    consumer
        .committed(&TopicPartition::new(topic, partition))
        .unwrap()
}

mod standby {
    use super::*;

    /// With `num.standby.replicas=1` each stateful task has a standby on
    /// the other instance, kept equal to the active's store from the
    /// changelog; when the active's instance dies, the task moves to the
    /// standby's instance and only the changelog's tail after the
    /// standby's position is restored (Kafka's `StoreChangelogReader`
    /// starts from the standby's checkpoint).
    #[test]
    fn a_standby_follows_the_active_and_shortens_the_restore() {
        let first = ["a b c d", "e f g h", "a a"];
        let second = ["a e", "b f b"];
        let config = || config().with_property("num.standby.replicas", "1");
        let mut app = app_with_topics(2);
        let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
        let listener = restores.clone();
        app.start_with("a", &word_count(), config(), |s| {
            s.set_global_state_restore_listener(listener);
        })
        .unwrap();
        app.start("b", &word_count(), config()).unwrap();
        send_lines(&app, &first, 0);
        app.run_until_idle().unwrap();
        let (a, b) = (app.instance("a").unwrap(), app.instance("b").unwrap());
        assert_eq!(a.active_tasks(), tasks(&[(0, 0), (0, 1)]));
        assert_eq!(b.active_tasks(), tasks(&[(1, 0), (1, 1)]));
        // Only stateful tasks have standbys, never on their active's instance.
        assert_eq!(a.standby_tasks(), tasks(&[(1, 0), (1, 1)]));
        assert_eq!(b.standby_tasks(), tasks(&[]));
        assert_eq!(
            a.threads(),
            [ThreadMetadata {
                thread_name: "a-StreamThread-1".to_owned(),
                active_tasks: tasks(&[(0, 0), (0, 1)]),
                standby_tasks: tasks(&[(1, 0), (1, 1)]),
            }]
        );
        for p in 0..2 {
            let task = TaskId::new(1, p);
            let active = counts_in(&app, "b", task, false);
            assert_eq!(counts_in(&app, "a", task, true), active, "task {task}");
        }
        let mut both = counts_in(&app, "b", TaskId::new(1, 0), false);
        both.extend(counts_in(&app, "b", TaskId::new(1, 1), false));
        assert_eq!(both, model(&first));
        // Where a's standbys are: the changelogs' ends now.
        let standby_at: Vec<i64> = (0..2).map(|p| end_offset(&app, CHANGELOG, p)).collect();

        // b processes and commits more, then dies before a's standbys read it.
        send_lines(&app, &second, first.len());
        for _ in 0..3 {
            app.instance_mut("a").unwrap().step().unwrap();
        }
        app.instance_mut("a").unwrap().commit().unwrap();
        for _ in 0..3 {
            app.instance_mut("b").unwrap().step().unwrap();
        }
        app.instance_mut("b").unwrap().commit().unwrap();
        let crashed_at: Vec<i64> = (0..2).map(|p| end_offset(&app, CHANGELOG, p)).collect();
        assert!(
            crashed_at.iter().zip(&standby_at).all(|(c, s)| c > s),
            "{crashed_at:?} {standby_at:?}"
        );
        app.crash("b").unwrap();
        app.advance(45_000);
        app.run_until_idle().unwrap();
        let a = app.instance("a").unwrap();
        assert_eq!(a.active_tasks(), tasks(&[(0, 0), (0, 1), (1, 0), (1, 1)]));
        assert_eq!(a.standby_tasks(), tasks(&[]));
        let restored = restores.lock().unwrap().restorations.clone();
        let last: Vec<&Restoration> = restored[restored.len() - 2..].iter().collect();
        let expected: Vec<Restoration> = (0..2)
            .map(|p| Restoration {
                partition: TopicPartition::new(CHANGELOG, p),
                store: STORE.to_owned(),
                start: standby_at[p as usize],
                end: crashed_at[p as usize],
                restored: usize::try_from(crashed_at[p as usize] - standby_at[p as usize]).unwrap(),
            })
            .collect();
        assert_eq!(last, expected.iter().collect::<Vec<_>>());
        let all: Vec<&str> = first.iter().chain(&second).copied().collect();
        let mut both = counts_in(&app, "a", TaskId::new(1, 0), false);
        both.extend(counts_in(&app, "a", TaskId::new(1, 1), false));
        assert_eq!(both, model(&all));
        assert_eq!(
            app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap(),
            model(&all)
        );
    }
}

mod partition_group {
    //! Kafka's `PartitionGroupTest` semantics on a task that reads two
    //! co-partitioned topics (a merge): the head with the lowest timestamp
    //! goes first; an empty partition is waited for while it has records on
    //! the broker (`max.task.idle.ms` 0 and above), then for
    //! `max.task.idle.ms` once caught up; `-1` never waits.

    use super::*;

    fn merge() -> Topology {
        let builder = StreamsBuilder::new();
        let left = builder.stream::<String, String>("left");
        let right = builder.stream::<String, String>("right");
        left.merge(&right).to("merged");
        builder.build().unwrap()
    }

    /// One instance of the merge, assigned and idle, with `props`.
    fn merge_app(props: &[(&str, &str)]) -> StreamsCluster {
        let mut app = StreamsCluster::new();
        for t in ["left", "right", "merged"] {
            app.create_topic(t, 1).unwrap();
        }
        let mut config = StreamsConfig::new("merge");
        for (k, v) in props {
            config = config.with_property(*k, *v);
        }
        app.start("a", &merge(), config).unwrap();
        app.run_until_idle().unwrap();
        assert_eq!(app.instance("a").unwrap().active_tasks(), tasks(&[(0, 0)]));
        app
    }

    /// Sends `values` to partition 0 of `topic`, each value `<x><ts>`
    /// stamped with its number.
    fn send(app: &StreamsCluster, topic: &str, values: &[&str]) {
        let producer = app.cluster().producer();
        for v in values {
            let ts: i64 = v[1..].parse().unwrap();
            producer
                .send(
                    ProducerRecord::new(topic, v.to_string(), v.to_string())
                        .partition(0)
                        .timestamp(ts),
                )
                .unwrap();
        }
    }

    fn merged(app: &StreamsCluster) -> Vec<String> {
        app.read("merged", StringSerde, StringSerde)
            .unwrap()
            .into_iter()
            .filter_map(|r| r.value)
            .collect()
    }

    /// Steps instance a once; returns the merged output after the step.
    fn step(app: &mut StreamsCluster) -> Vec<String> {
        app.instance_mut("a").unwrap().step().unwrap();
        merged(app)
    }

    fn enrich() -> Topology {
        let builder = StreamsBuilder::new();
        let customers = builder.table::<String, String>("customers");
        builder
            .stream::<String, String>("orders")
            .join(&customers, |o, c| format!("{o}/{c}"))
            .to("enriched");
        builder.build().unwrap()
    }

    /// The join's output when the customer (at 1) and then the order
    /// (at 2) are on the broker before the task polls, one record a poll.
    fn enriched_with_idle(max_task_idle_ms: &str) -> Vec<String> {
        let mut app = StreamsCluster::new();
        for t in ["orders", "customers", "enriched"] {
            app.create_topic(t, 1).unwrap();
        }
        let config = StreamsConfig::new("enrich")
            .with_property("max.poll.records", "1")
            .with_property("max.task.idle.ms", max_task_idle_ms);
        app.start("a", &enrich(), config).unwrap();
        app.run_until_idle().unwrap();
        let producer = app.cluster().producer();
        producer
            .send(
                ProducerRecord::new("customers", "c1", "alice")
                    .partition(0)
                    .timestamp(1),
            )
            .unwrap();
        producer
            .send(
                ProducerRecord::new("orders", "c1", "book")
                    .partition(0)
                    .timestamp(2),
            )
            .unwrap();
        app.run_until_idle().unwrap();
        app.read("enriched", StringSerde, StringSerde)
            .unwrap()
            .into_iter()
            .filter_map(|r| r.value)
            .collect()
    }

    /// KIP-695's case: the order is fetched first; waiting for the table's
    /// partition, which has data on the broker, lets the earlier customer
    /// update go first and the order finds it. Without idling the order is
    /// joined against an empty table and dropped.
    #[test]
    fn a_stream_table_join_waits_for_the_tables_earlier_update() {
        assert_eq!(enriched_with_idle("0"), ["book/alice"]);
        assert_eq!(enriched_with_idle("-1"), Vec::<String>::new());
    }

    #[test]
    fn heads_are_processed_in_timestamp_order_across_partitions() {
        let mut app = merge_app(&[]);
        send(&app, "left", &["l1", "l4", "l6"]);
        send(&app, "right", &["r2", "r3", "r5"]);
        assert_eq!(step(&mut app), ["l1", "r2", "r3", "l4", "r5", "l6"]);
    }

    /// `max.task.idle.ms=0` (the default): with two records per poll the
    /// first poll fetches one partition only; the other is empty but has
    /// records on the broker, so the task waits for them; once a partition
    /// is fetched to its end it is not waited for.
    #[test]
    fn zero_idle_waits_for_data_on_the_broker_only() {
        let mut app = merge_app(&[("max.poll.records", "2")]);
        send(&app, "left", &["l1", "l4", "l6"]);
        send(&app, "right", &["r2", "r3", "r5"]);
        // The first poll fetches right's r2, r3; left has 3 on the broker.
        assert!(step(&mut app).is_empty());
        // Then left's l1, l4 (a task processes at most max.poll.records a
        // round): both partitions have heads, the lower goes first.
        assert_eq!(step(&mut app), ["l1", "r2"]);
        assert_eq!(step(&mut app), ["l1", "r2", "r3", "l4"]);
        assert_eq!(step(&mut app), ["l1", "r2", "r3", "l4", "r5", "l6"]);
        // Nothing more on the broker for right: left goes on alone.
        send(&app, "left", &["l7", "l8"]);
        assert_eq!(step(&mut app)[6..], ["l7", "l8"]);
    }

    /// `max.task.idle.ms=-1`: nothing is waited for, so the records of
    /// the first partition fetched go first, out of timestamp order.
    #[test]
    fn disabled_idling_never_waits() {
        let mut app = merge_app(&[("max.poll.records", "2"), ("max.task.idle.ms", "-1")]);
        send(&app, "left", &["l1", "l4", "l6"]);
        send(&app, "right", &["r2", "r3", "r5"]);
        // The first poll fetches right's r2, r3, processed at once, before
        // left's lower timestamps are even fetched.
        assert_eq!(step(&mut app), ["r2", "r3"]);
        assert_eq!(step(&mut app), ["r2", "r3", "l1", "l4"]);
        assert_eq!(step(&mut app), ["r2", "r3", "l1", "l4", "r5", "l6"]);
    }

    /// A positive `max.task.idle.ms`: a caught-up empty partition is waited
    /// for that long on the clock after the task first found it empty,
    /// then the task processes without it; records arriving on it end the
    /// wait, and the next time it is empty the wait starts again.
    #[test]
    fn positive_idle_waits_that_long_for_a_caught_up_partition() {
        let mut app = merge_app(&[("max.task.idle.ms", "5000")]);
        send(&app, "left", &["l1", "l4"]);
        assert!(step(&mut app).is_empty());
        app.advance(4_999);
        assert!(step(&mut app).is_empty());
        app.advance(1);
        assert_eq!(step(&mut app), ["l1", "l4"]);
        // Both have data again: the lower head first; then left is empty
        // (and caught up), so right's r3 waits 5 s for it.
        send(&app, "right", &["r3"]);
        send(&app, "left", &["l2"]);
        assert_eq!(step(&mut app)[2..], ["l2"]);
        app.advance(5_000);
        assert_eq!(step(&mut app)[3..], ["r3"]);
        // Right is empty now: a new wait of 5 s from when it emptied.
        send(&app, "left", &["l9"]);
        assert_eq!(step(&mut app).len(), 4);
        app.advance(4_999);
        assert_eq!(step(&mut app).len(), 4);
        app.advance(1);
        assert_eq!(step(&mut app)[4..], ["l9"]);
    }
}

mod threads {
    use super::*;

    /// An instance of 2 stream threads and one of 1 share 8 tasks by
    /// thread count (Kafka's assignor balances tasks per thread, so the
    /// 2-thread instance keeps about twice the tasks), each thread has its
    /// own share and its own group member, and the counts equal the
    /// model's.
    #[test]
    fn two_threads_take_twice_the_tasks_of_one() {
        let lines = [
            "kafka streams in rust",
            "streams of records",
            "kafka kafka",
            "a b c d e f",
        ];
        let mut app = app_with_topics(4);
        app.start(
            "a",
            &word_count(),
            config().with_property("num.stream.threads", "2"),
        )
        .unwrap();
        let thread = |name: &str, active: &[(u32, u32)]| ThreadMetadata {
            thread_name: name.to_owned(),
            active_tasks: tasks(active),
            standby_tasks: Vec::new(),
        };
        app.run_until_idle().unwrap();
        // Alone, a's two threads take 4 tasks each.
        assert_eq!(
            app.instance("a").unwrap().threads(),
            [
                thread("a-StreamThread-1", &[(0, 0), (0, 2), (1, 0), (1, 1)]),
                thread("a-StreamThread-2", &[(0, 1), (0, 3), (1, 2), (1, 3)]),
            ]
        );
        app.start("b", &word_count(), config()).unwrap();
        send_lines(&app, &lines, 0);
        app.run_until_idle().unwrap();
        // b joins: a keeps its share by thread count, ceil(8 x 2 / 3) = 6
        // (Kafka 4.4's StickyTaskAssignor), 3 a thread; b's thread takes 2.
        let (a, b) = (app.instance("a").unwrap(), app.instance("b").unwrap());
        assert_eq!(
            a.threads(),
            [
                thread("a-StreamThread-1", &[(0, 0), (0, 2), (1, 0)]),
                thread("a-StreamThread-2", &[(0, 1), (0, 3), (1, 1)]),
            ]
        );
        assert_eq!(b.threads(), [thread("b-StreamThread-1", &[(1, 2), (1, 3)])]);
        assert_eq!(
            app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap(),
            model(&lines)
        );
        // Each thread is a member of the group with its own consumer.
        let mut members: Vec<String> = app
            .cluster()
            .admin()
            .describe_group("word-count")
            .members
            .into_iter()
            .map(|m| m.client_id)
            .collect();
        members.sort();
        assert_eq!(
            members,
            [
                "a-StreamThread-1-consumer",
                "a-StreamThread-2-consumer",
                "b-StreamThread-1-consumer"
            ]
        );
    }
}

mod purge {
    use super::*;

    fn starts(app: &StreamsCluster) -> Vec<i64> {
        (0..2).map(|p| start_offset(app, REPARTITION, p)).collect()
    }

    fn committed_repartition(app: &StreamsCluster) -> Vec<Option<i64>> {
        (0..2)
            .map(|p| committed(app, "word-count", REPARTITION, p))
            .collect()
    }

    /// Kafka Streams deletes the records of repartition topics that its
    /// tasks consumed, after a commit (`maybePurgeCommittedRecords`), at
    /// most every `repartition.purge.interval.ms` (30 s by default): the
    /// log start offsets move to the committed offsets; the user's topics
    /// are never purged.
    #[test]
    fn a_commit_purges_repartition_topics_to_the_committed_offsets() {
        let mut app = app_with_topics(2);
        app.start("a", &word_count(), config()).unwrap();
        app.run_until_idle().unwrap();
        send_lines(&app, &["a b c d e", "f g h"], 0);
        // Split, written to the repartition topic, counted; not committed.
        for _ in 0..3 {
            app.step().unwrap();
        }
        assert!(app.instance("a").unwrap().has_uncommitted());
        let ends: Vec<i64> = (0..2).map(|p| end_offset(&app, REPARTITION, p)).collect();
        assert_eq!(ends.iter().sum::<i64>(), 8);
        assert_eq!(starts(&app), [0, 0]);
        assert_eq!(committed_repartition(&app), [None, None]);
        // The last purge (of nothing) is more than 30 s ago: this commit purges.
        app.advance(30_001);
        app.instance_mut("a").unwrap().commit().unwrap();
        assert_eq!(
            committed_repartition(&app),
            ends.iter().map(|e| Some(*e)).collect::<Vec<_>>()
        );
        assert_eq!(starts(&app), ends);
        for p in 0..2 {
            let info = app
                .cluster()
                .log_info(&TopicPartition::new(REPARTITION, p))
                .unwrap();
            let end = ends[p as usize];
            assert_eq!((info.log_start_offset, info.log_end_offset), (end, end));
        }
        // More input, committed at once: the offsets move, the purge waits.
        send_lines(&app, &["i j k l"], 2);
        for _ in 0..3 {
            app.step().unwrap();
        }
        app.instance_mut("a").unwrap().commit().unwrap();
        let later: Vec<i64> = (0..2).map(|p| end_offset(&app, REPARTITION, p)).collect();
        assert_eq!(later.iter().sum::<i64>(), 12);
        assert_eq!(
            committed_repartition(&app),
            later.iter().map(|e| Some(*e)).collect::<Vec<_>>()
        );
        assert_eq!(starts(&app), ends);
        app.advance(30_000);
        app.instance_mut("a").unwrap().commit().unwrap();
        assert_eq!(starts(&app), ends);
        app.advance(1);
        app.instance_mut("a").unwrap().commit().unwrap();
        assert_eq!(starts(&app), later);
        assert_eq!(
            (0..2)
                .map(|p| start_offset(&app, WORDS, p))
                .collect::<Vec<_>>(),
            [0, 0]
        );
    }
}

mod purge_failure {
    use super::*;

    /// A purge the broker refuses (here: a repartition topic someone made
    /// compacted, so delete-records is a policy violation) is not fatal,
    /// as in Kafka (`maybePurgeCommittedRecords` only logs it): the
    /// instance keeps running and the counts are right.
    #[test]
    fn a_refused_purge_does_not_fail_the_instance() {
        let mut app = app_with_topics(2);
        app.cluster()
            .admin()
            .create_topic(
                streams_broker::NewTopic::new(REPARTITION, 2).config("cleanup.policy", "compact"),
            )
            .unwrap();
        app.start("a", &word_count(), config()).unwrap();
        let lines = ["a b c", "c d"];
        send_lines(&app, &lines, 0);
        app.run_until_idle().unwrap();
        app.advance(30_001);
        app.instance_mut("a").unwrap().commit().unwrap();
        assert_eq!(app.instance("a").unwrap().state(), State::Running);
        assert_eq!(
            start_offset(&app, REPARTITION, 0) + start_offset(&app, REPARTITION, 1),
            0
        );
        assert_eq!(
            app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap(),
            model(&lines)
        );
    }
}

mod zombie {
    use super::*;

    fn upper_case() -> Topology {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("in")
            .map_values(|v| v.to_uppercase())
            .to("out");
        builder.build().unwrap()
    }

    fn config() -> StreamsConfig {
        StreamsConfig::new("upper")
            .with_property("commit.interval.ms", "1000")
            .with_property("max.poll.interval.ms", "10000")
    }

    fn send(app: &StreamsCluster, partition: i32, values: &[&str]) {
        let producer = app.cluster().producer();
        for v in values {
            producer
                .send(
                    ProducerRecord::new("in", v.to_string(), v.to_string())
                        .partition(partition)
                        .timestamp(5),
                )
                .unwrap();
        }
    }

    /// The output values, partition after partition.
    fn out(app: &StreamsCluster) -> Vec<String> {
        app.read("out", StringSerde, StringSerde)
            .unwrap()
            .into_iter()
            .filter_map(|r| r.value)
            .collect()
    }

    /// An instance that stops polling for longer than `max.poll.interval.ms`
    /// leaves the group (Kafka's consumer does so from its heartbeat
    /// thread); its task moves to the other instance, which processes again
    /// what the zombie had not committed (at-least-once duplicates). The
    /// zombie's commit is refused (`CommitFailed`: Kafka's
    /// `TaskMigratedException`); its next poll finds its partitions lost,
    /// it drops its tasks without committing and rejoins, and its late
    /// work leaves nothing in the output but those duplicates.
    #[test]
    fn a_paused_instance_is_kicked_out_and_its_late_commit_refused() {
        let mut app = StreamsCluster::new();
        for t in ["in", "out"] {
            app.create_topic(t, 2).unwrap();
        }
        app.start("a", &upper_case(), config()).unwrap();
        app.start("b", &upper_case(), config()).unwrap();
        app.run_until_idle().unwrap();
        assert_eq!(app.instance("a").unwrap().active_tasks(), tasks(&[(0, 0)]));
        assert_eq!(app.instance("b").unwrap().active_tasks(), tasks(&[(0, 1)]));
        send(&app, 0, &["a", "b"]);
        send(&app, 1, &["x"]);
        app.step().unwrap();
        app.step().unwrap();
        assert_eq!(out(&app), ["A", "B", "X"]);
        assert!(app.instance("a").unwrap().has_uncommitted());
        // a pauses; b goes on polling past a's poll interval.
        for _ in 0..12 {
            app.advance(1_000);
            app.instance_mut("b").unwrap().step().unwrap();
            app.instance_mut("b").unwrap().step().unwrap();
        }
        assert_eq!(
            app.instance("b").unwrap().active_tasks(),
            tasks(&[(0, 0), (0, 1)])
        );
        assert_eq!(out(&app), ["A", "B", "X", "A", "B"]);
        // a wakes up: its commit is refused, it did not move its offsets.
        let err = app.instance_mut("a").unwrap().commit().unwrap_err();
        assert!(err.is_task_migrated(), "{err}");
        assert!(
            err.to_string().starts_with("stream thread a-StreamThread-1: committing offsets: offset commit for group 'upper' failed"),
            "{err}"
        );
        send(&app, 0, &["c"]);
        app.instance_mut("a").unwrap().step().unwrap();
        let a = app.instance("a").unwrap();
        assert_eq!(a.active_tasks(), tasks(&[]));
        assert!(!a.has_uncommitted());
        assert_eq!(a.state(), State::Rebalancing);
        // It rejoins; the group shares the tasks again.
        app.run_until_idle().unwrap();
        assert_eq!(app.instance("a").unwrap().active_tasks().len(), 1);
        assert_eq!(app.instance("b").unwrap().active_tasks().len(), 1);
        assert_eq!(out(&app), ["A", "B", "X", "A", "B", "C"]);
        assert_eq!(committed(&app, "upper", "in", 0), Some(3));
        assert_eq!(committed(&app, "upper", "in", 1), Some(1));
    }
}

mod zombie_exactly_once {
    use super::*;

    fn upper_case() -> Topology {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("in")
            .map_values(|v| v.to_uppercase())
            .to("out");
        builder.build().unwrap()
    }

    fn values(app: &StreamsCluster, committed: bool) -> Vec<String> {
        let records = if committed {
            app.read_committed("out", StringSerde, StringSerde).unwrap()
        } else {
            app.read("out", StringSerde, StringSerde).unwrap()
        };
        records.into_iter().filter_map(|r| r.value).collect()
    }

    /// Under exactly-once a paused instance's open transaction outlives
    /// both its poll interval and its transaction timeout: the
    /// coordinator aborts it, the other instance processes the records
    /// again, and the zombie, when it wakes up, loses its tasks, gets a
    /// new producer (Kafka re-initializes it after losing its tasks) and
    /// rejoins; `read_committed` sees each result once.
    #[test]
    fn a_paused_instance_under_exactly_once_rejoins_and_nothing_repeats() {
        let config = || {
            StreamsConfig::new("upper")
                .with_property("processing.guarantee", "exactly_once_v2")
                .with_property("commit.interval.ms", "1000")
                .with_property("max.poll.interval.ms", "10000")
        };
        let mut app = StreamsCluster::new();
        for t in ["in", "out"] {
            app.create_topic(t, 2).unwrap();
        }
        app.start("a", &upper_case(), config()).unwrap();
        app.start("b", &upper_case(), config()).unwrap();
        app.run_until_idle().unwrap();
        assert_eq!(app.instance("a").unwrap().active_tasks(), tasks(&[(0, 0)]));
        let producer = app.cluster().producer();
        for v in ["a", "b"] {
            producer
                .send(ProducerRecord::new("in", v, v).partition(0).timestamp(5))
                .unwrap();
        }
        app.instance_mut("a").unwrap().step().unwrap();
        assert_eq!(values(&app, false), ["A", "B"]);
        assert_eq!(values(&app, true), Vec::<String>::new());
        // The coordinator looks for timed-out transactions every 10 s
        // (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms):
        // a's, begun at 0 with a 10 s timeout, is aborted at 20 s.
        for _ in 0..20 {
            app.advance(1_000);
            app.instance_mut("b").unwrap().step().unwrap();
            app.instance_mut("b").unwrap().step().unwrap();
        }
        assert_eq!(
            app.instance("b").unwrap().active_tasks(),
            tasks(&[(0, 0), (0, 1)])
        );
        assert_eq!(values(&app, true), ["A", "B"]);
        app.run_until_idle().unwrap();
        assert_eq!(app.instance("a").unwrap().state(), State::Running);
        assert_eq!(app.instance("a").unwrap().active_tasks().len(), 1);
        producer
            .send(
                ProducerRecord::new("in", "c", "c")
                    .partition(0)
                    .timestamp(5),
            )
            .unwrap();
        producer
            .send(
                ProducerRecord::new("in", "d", "d")
                    .partition(1)
                    .timestamp(5),
            )
            .unwrap();
        app.run_until_idle().unwrap();
        let mut committed = values(&app, true);
        committed.sort();
        assert_eq!(committed, ["A", "B", "C", "D"]);
    }
}

mod errors {
    use super::*;

    #[test]
    fn start_twice_is_an_illegal_state() {
        let app = app_with_topics(1);
        let clients = Arc::new(streams_broker::clients::api::SimulatedClients::new(
            app.cluster().clone(),
        ));
        let mut streams = KafkaStreams::new(&word_count(), config(), clients).unwrap();
        streams.start().unwrap();
        let err = streams.start().unwrap_err();
        assert!(
            matches!(
                err,
                RuntimeError::IllegalState {
                    operation: "start",
                    state: State::Rebalancing,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "cannot start: KafkaStreams is in state REBALANCING; an instance starts once; make a new KafkaStreams to start again"
        );
        streams.close().unwrap();
        let err = streams.step().unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot step: KafkaStreams is in state NOT_RUNNING; start the instance first; a closed or failed instance does not run"
        );
        assert!(matches!(
            streams.start().unwrap_err(),
            RuntimeError::IllegalState {
                state: State::NotRunning,
                ..
            }
        ));
        assert!(matches!(
            streams.commit().unwrap_err(),
            RuntimeError::IllegalState {
                operation: "commit",
                ..
            }
        ));
    }

    /// A store asked for on an instance that has the task neither active
    /// nor standby; a task that does not exist at all.
    #[test]
    fn a_store_of_a_task_elsewhere_or_nowhere_is_not_local() {
        let mut app = app_with_topics(2);
        app.start("a", &word_count(), config()).unwrap();
        app.start("b", &word_count(), config()).unwrap();
        app.run_until_idle().unwrap();
        let a = app.instance("a").unwrap();
        assert_eq!(a.active_tasks(), tasks(&[(0, 0), (0, 1)]));
        for task in [TaskId::new(1, 0), TaskId::new(1, 9)] {
            let err = a
                .store::<TimestampedKeyValueStore<String, i64>>(STORE, task)
                .unwrap_err();
            assert!(
                matches!(&err, RuntimeError::StoreNotLocal { store, task: Some(t) } if store == STORE && *t == task),
                "{err}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "The state store, {STORE}, may have migrated to another instance (task {task} is not active here); ask the instance that owns the task (KafkaStreams::tasks lists this one's)"
                )
            );
            let err = a
                .standby_store::<TimestampedKeyValueStore<String, i64>>(STORE, task)
                .unwrap_err();
            assert!(matches!(err, RuntimeError::StoreNotLocal { .. }), "{err}");
        }
        // b has the task: the store is there, of the right name only.
        let b = app.instance("b").unwrap();
        assert!(
            b.store::<TimestampedKeyValueStore<String, i64>>(STORE, TaskId::new(1, 0))
                .is_ok()
        );
        assert!(
            b.store::<TimestampedKeyValueStore<String, i64>>("no-such-store", TaskId::new(1, 0))
                .is_err()
        );
    }

    /// Kafka's `InternalTopicManager` refuses an internal topic that
    /// exists with another partition count than the topology needs.
    #[test]
    fn an_internal_topic_with_the_wrong_partition_count_is_refused() {
        let mut app = app_with_topics(4);
        app.create_topic(REPARTITION, 3).unwrap();
        let err = app.start("a", &word_count(), config()).unwrap_err();
        let AppError::Runtime { source, .. } = err else {
            panic!("expected a runtime error, got {err}")
        };
        assert!(
            matches!(&*source, RuntimeError::InvalidInternalTopicPartitions { topic, expected: 4, actual: 3 } if topic == REPARTITION),
            "{source}"
        );
        assert_eq!(
            source.to_string(),
            format!(
                "Existing internal topic {REPARTITION} has invalid partitions: expected: 4; actual: 3. Use 'org.apache.kafka.tools.StreamsResetter' tool to clean up invalid topics before processing."
            )
        );
        // Nothing was created on the way: the changelog is not there.
        assert!(app.cluster().admin().partition_count(CHANGELOG).is_err());
    }
}

/// KIP-447 on the runtime: a new owner under `exactly_once_v2` does not
/// start from a committed offset that the previous owner's open
/// transaction is about to replace.
mod unstable_offsets {
    use streams_broker::ProducerConfig;
    use streams_clients::GroupMetadata;

    use super::*;

    fn upper() -> Topology {
        let b = StreamsBuilder::new();
        b.stream::<String, String>("in")
            .map_values(|v| v.to_uppercase())
            .to("out");
        b.build().unwrap()
    }

    fn eos() -> StreamsConfig {
        StreamsConfig::new("upper").with_property("processing.guarantee", "exactly_once_v2")
    }

    /// The previous owner (a zombie of another instance) has processed
    /// `a`, `b`, `c`: its transaction holds their results and the offset
    /// 3 for the group, not committed yet. The new owner waits; the
    /// zombie's transaction ends; the new owner goes on from where it
    /// ended: each result once (committed: from 3; aborted: from 0).
    #[test]
    fn a_new_owner_waits_for_the_previous_owners_transaction() {
        for commit in [true, false] {
            let mut app = StreamsCluster::new();
            app.create_topic("in", 1).unwrap();
            app.create_topic("out", 1).unwrap();
            let input = app.producer("in", StringSerde, StringSerde);
            for (i, v) in ["a", "b", "c", "d", "e"].iter().enumerate() {
                input
                    .send(&format!("k{i}"), Some(&(*v).to_owned()), i as i64)
                    .unwrap();
            }
            let zombie = app
                .cluster()
                .producer_with(ProducerConfig::new().transactional_id("upper-old-1"));
            zombie.init_transactions().unwrap();
            zombie.begin_transaction().unwrap();
            for (i, v) in ["A", "B", "C"].iter().enumerate() {
                zombie
                    .send(ProducerRecord::new("out", format!("k{i}"), (*v).to_owned()).partition(0))
                    .unwrap();
            }
            zombie
                .send_offsets_to_transaction(
                    [(TopicPartition::new("in", 0), 3)],
                    &GroupMetadata {
                        group_id: "upper".to_owned(),
                        generation: -1,
                        member_id: String::new(),
                    },
                )
                .unwrap();

            app.start("a", &upper(), eos()).unwrap();
            for _ in 0..20 {
                app.step().unwrap();
            }
            let a = app.instance("a").unwrap();
            assert_eq!(a.state(), State::Running);
            assert_eq!(a.active_tasks(), tasks(&[(0, 0)]));
            assert!(
                !a.has_uncommitted(),
                "nothing processed while the offset is pending"
            );
            assert_eq!(
                app.read("out", StringSerde, StringSerde).unwrap().len(),
                3,
                "only the zombie's records"
            );

            if commit {
                zombie.commit_transaction().unwrap();
            } else {
                zombie.abort_transaction().unwrap();
            }
            app.run_until_idle().unwrap();
            let values: Vec<String> = app
                .read_committed("out", StringSerde, StringSerde)
                .unwrap()
                .into_iter()
                .map(|r| r.value.unwrap())
                .collect();
            assert_eq!(values, ["A", "B", "C", "D", "E"], "committed: {commit}");
            assert_eq!(committed(&app, "upper", "in", 0), Some(5));
        }
    }
}

/// Sources that read a topic pattern, resolved against the cluster's
/// topics when the instance starts.
mod pattern_sources {
    use streams_core::topology::Topics;

    use super::*;

    fn all_orders() -> Topology {
        let b = StreamsBuilder::new();
        b.stream::<String, String>(Topics::pattern("orders-.*"))
            .group_by_key()
            .count()
            .to_stream()
            .to_with(
                "counts",
                streams_core::dsl::Produced::with(StringSerde, I64Serde),
            );
        b.build().unwrap()
    }

    /// The matching topics are the sub-topology's sources: one task per
    /// partition of the largest (3), each reading that partition of every
    /// matched topic; a topic the pattern does not match whole, and the
    /// application's own changelog (whose name matches), are not read.
    #[test]
    fn a_pattern_source_reads_every_matching_topic() {
        let mut app = StreamsCluster::new();
        app.create_topic("orders-eu", 2).unwrap();
        app.create_topic("orders-us", 3).unwrap();
        app.create_topic("orders", 1).unwrap();
        app.create_topic("counts", 1).unwrap();
        for (topic, key) in [
            ("orders-eu", "ann"),
            ("orders-us", "bob"),
            ("orders-eu", "bob"),
            ("orders", "ann"),
        ] {
            app.producer(topic, StringSerde, StringSerde)
                .send(&key.to_owned(), Some(&"x".to_owned()), 0)
                .unwrap();
        }
        let config = StreamsConfig::new("orders-app").with_property("commit.interval.ms", "1000");
        app.start("a", &all_orders(), config).unwrap();
        app.run_until_idle().unwrap();
        let a = app.instance("a").unwrap();
        assert_eq!(a.active_tasks(), tasks(&[(0, 0), (0, 1), (0, 2)]));
        let counts = app.latest_by_key("counts", StringSerde, I64Serde).unwrap();
        assert_eq!(
            counts,
            BTreeMap::from([("ann".to_owned(), 1), ("bob".to_owned(), 2)])
        );
        // The store's changelog matches `orders-.*` but is not a source.
        let changelog = "orders-app-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog";
        assert_eq!(app.cluster().admin().partition_count(changelog).unwrap(), 3);
        // The three matching records, and not the one of `orders`.
        let processed: u64 = (0..3)
            .map(|p| a.task_metrics(TaskId::new(0, p)).unwrap().processed_records)
            .sum();
        assert_eq!(processed, 3);
    }

    /// Kafka's consumer would pick up a topic created later at its next
    /// metadata refresh; this runtime reads the topics that matched when it
    /// started, and a restart reads the new one too.
    #[test]
    fn a_topic_created_after_start_is_read_after_a_restart() {
        let mut app = StreamsCluster::new();
        app.create_topic("orders-eu", 1).unwrap();
        app.create_topic("counts", 1).unwrap();
        let config =
            || StreamsConfig::new("orders-app").with_property("commit.interval.ms", "1000");
        app.start("a", &all_orders(), config()).unwrap();
        app.run_until_idle().unwrap();
        app.create_topic("orders-us", 1).unwrap();
        app.producer("orders-us", StringSerde, StringSerde)
            .send(&"bob".to_owned(), Some(&"x".to_owned()), 0)
            .unwrap();
        app.run_until_idle().unwrap();
        assert!(
            app.read("counts", StringSerde, I64Serde)
                .unwrap()
                .is_empty()
        );
        app.close("a").unwrap();
        app.start("b", &all_orders(), config()).unwrap();
        app.run_until_idle().unwrap();
        let counts = app.latest_by_key("counts", StringSerde, I64Serde).unwrap();
        assert_eq!(counts, BTreeMap::from([("bob".to_owned(), 1)]));
    }
}

/// A cogroup on the runtime: its inputs must be co-partitioned, and its
/// aggregations share one record cache per task, flushed at commits
/// (several updates of a key from both streams between two commits).
mod cogroup {
    use super::*;

    fn cogrouped() -> Topology {
        let b = StreamsBuilder::new();
        let a = b.stream::<String, String>("a").group_by_key();
        let c = b.stream::<String, String>("b").group_by_key();
        a.cogroup(|_, v: &String, agg: String| format!("{agg}a{v}"))
            .cogroup(c, |_, v: &String, agg: String| format!("{agg}b{v}"))
            .aggregate(String::new)
            .to_stream()
            .to("out");
        b.build().unwrap()
    }

    #[test]
    fn a_cogroup_over_two_partitions_equals_the_fold_per_key() {
        let mut app = StreamsCluster::new();
        for topic in ["a", "b", "out"] {
            app.create_topic(topic, 2).unwrap();
        }
        let (a, b) = (
            app.producer("a", StringSerde, StringSerde),
            app.producer("b", StringSerde, StringSerde),
        );
        let mut model: BTreeMap<String, String> = BTreeMap::new();
        for i in 0..40_i64 {
            let key = format!("k{}", i % 5);
            let (producer, tag) = if i % 3 == 0 { (&a, "a") } else { (&b, "b") };
            producer.send(&key, Some(&i.to_string()), i).unwrap();
            let agg = model.entry(key).or_default();
            agg.push_str(&format!("{tag}{i}"));
        }
        let config = StreamsConfig::new("cogroup-app").with_property("commit.interval.ms", "1000");
        app.start("x", &cogrouped(), config).unwrap();
        app.run_until_idle().unwrap();
        assert_eq!(
            app.instance("x").unwrap().active_tasks(),
            tasks(&[(0, 0), (0, 1)])
        );
        // Within a partition, a and b records come in timestamp order (the
        // PartitionGroup), so each key's aggregate is the model's.
        assert_eq!(
            app.latest_by_key("out", StringSerde, StringSerde).unwrap(),
            model
        );
        // The cache flushed once per key and commit: fewer results than
        // the 40 updates.
        let results = app.read("out", StringSerde, StringSerde).unwrap().len();
        assert!(results < 40, "{results} results");
    }

    #[test]
    fn cogrouped_topics_of_different_partition_counts_are_refused() {
        let mut app = StreamsCluster::new();
        app.create_topic("a", 2).unwrap();
        app.create_topic("b", 3).unwrap();
        app.create_topic("out", 2).unwrap();
        let err = app
            .start("x", &cogrouped(), StreamsConfig::new("cogroup-app"))
            .unwrap_err();
        let AppError::Runtime { source, .. } = err else {
            panic!("expected a runtime error, got {err}")
        };
        assert!(
            matches!(&*source, RuntimeError::NotCopartitioned { topics } if topics.len() == 2),
            "{source}"
        );
    }
}

/// A foreign-key table join (KIP-213) on the runtime: the subscription
/// topic is co-partitioned with the foreign table (3 partitions), the
/// response topic with the primary table (2); orders and products on
/// different partitions still find each other.
mod foreign_key_join {
    use super::*;

    fn enriched() -> Topology {
        let b = StreamsBuilder::new();
        // order id -> "product:quantity"; product id -> name.
        let orders = b.table::<String, String>("orders");
        let products = b.table::<String, String>("products");
        orders
            .join_on_foreign_key(
                &products,
                |order: &String| order.split(':').next().map(str::to_owned),
                |order: &String, name: &String| {
                    format!("{} x {name}", order.split(':').nth(1).unwrap_or("?"))
                },
            )
            .to_stream()
            .to("enriched");
        b.build().unwrap()
    }

    #[test]
    fn orders_find_their_products_across_partitions() {
        let mut app = StreamsCluster::new();
        app.create_topic("orders", 2).unwrap();
        app.create_topic("products", 3).unwrap();
        app.create_topic("enriched", 2).unwrap();
        let config = StreamsConfig::new("fk-app").with_property("commit.interval.ms", "1000");
        app.start("x", &enriched(), config).unwrap();
        let (orders, products) = (
            app.producer("orders", StringSerde, StringSerde),
            app.producer("products", StringSerde, StringSerde),
        );
        for p in 0..6 {
            products
                .send(&format!("p{p}"), Some(&format!("name{p}")), 0)
                .unwrap();
        }
        app.run_until_idle().unwrap();
        let mut model = BTreeMap::new();
        for o in 0..12 {
            let p = (o * 5) % 7; // p6 has no product: no result
            orders
                .send(&format!("o{o}"), Some(&format!("p{p}:{o}")), 10 + o)
                .unwrap();
            if p < 6 {
                model.insert(format!("o{o}"), format!("{o} x name{p}"));
            }
        }
        app.run_until_idle().unwrap();
        // A product renamed: its orders are joined again.
        products
            .send(&"p0".to_owned(), Some(&"renamed".to_owned()), 50)
            .unwrap();
        app.run_until_idle().unwrap();
        for (o, v) in model.iter_mut() {
            if v.ends_with("x name0") {
                *v = format!("{} x renamed", &o[1..]);
            }
        }
        assert_eq!(
            app.latest_by_key("enriched", StringSerde, StringSerde)
                .unwrap(),
            model
        );
        let a = app.instance("x").unwrap();
        // 2 tasks of the primary side, 3 of the foreign.
        assert_eq!(a.active_tasks().len(), 5);
        let counts = |topic: &str| app.cluster().admin().partition_count(topic).unwrap();
        assert_eq!(
            counts("fk-app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic"),
            3
        );
        assert_eq!(
            counts("fk-app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic"),
            2
        );
    }
}
