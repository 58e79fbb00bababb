//! The `KafkaStreams` runtime on the simulated cluster: tasks and internal
//! topics as Kafka makes them, instances sharing the work, crashes and
//! rebalances, restoration, at-least-once duplicates, and the errors for
//! bad set-ups.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use streams_core::dsl::Produced;
use streams_core::runtime::{
    KafkaStreams, ProcessingGuarantee, RecordingRestoreListener, RuntimeError, State, TaskId,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::state::TimestampedKeyValueStore;
use streams_core::topology::Topology;
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::app::{AppError, StreamsCluster};

pub(crate) const WORDS: &str = "words";
pub(crate) const COUNTS: &str = "counts";

/// The word count of the issue: lines split into words, counted per word.
pub(crate) fn word_count() -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(WORDS)
        .flat_map_values(|line| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by(|_, w| w.clone())
        .count()
        .to_stream()
        .to_with(COUNTS, Produced::with(StringSerde, I64Serde));
    builder.build().expect("the word count is a valid topology")
}

fn config(guarantee: ProcessingGuarantee) -> StreamsConfig {
    StreamsConfig::new("word-count")
        .with_property("processing.guarantee", guarantee.to_string())
        .with_property("commit.interval.ms", "1000")
}

pub(crate) fn tasks(spec: &[(u32, u32)]) -> Vec<TaskId> {
    spec.iter().map(|&(s, p)| TaskId::new(s, p)).collect()
}

pub(crate) fn app_with_topics(partitions: i32) -> StreamsCluster {
    let app = StreamsCluster::new();
    app.create_topic(WORDS, partitions).unwrap();
    app.create_topic(COUNTS, partitions).unwrap();
    app
}

/// The counts a reference model gives for `lines`.
pub(crate) fn model(lines: &[&str]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for line in lines {
        for w in line.split_whitespace() {
            *counts.entry(w.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

pub(crate) fn send_lines(app: &StreamsCluster, lines: &[&str], from: usize) {
    let producer = app.producer(WORDS, StringSerde, StringSerde);
    for (i, line) in lines.iter().enumerate() {
        let n = from + i;
        producer
            .send(
                &format!("line-{n}"),
                Some(&(*line).to_owned()),
                1_000 + n as i64,
            )
            .unwrap();
    }
}

#[test]
fn tasks_and_internal_topics_are_kafkas() {
    let mut app = app_with_topics(4);
    app.start("a", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap();
    app.run_until_idle().unwrap();
    let a = app.instance("a").unwrap();
    assert_eq!(
        a.active_tasks(),
        tasks(&[
            (0, 0),
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 0),
            (1, 1),
            (1, 2),
            (1, 3)
        ])
    );
    assert_eq!(a.state(), State::Running);
    let admin = app.cluster().admin();
    let repartition = "word-count-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
    let changelog = "word-count-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
    assert_eq!(admin.partition_count(repartition).unwrap(), 4);
    assert_eq!(admin.partition_count(changelog).unwrap(), 4);
    let configs = admin.describe_configs(changelog).unwrap();
    assert_eq!(configs["cleanup.policy"].value, "compact");
    let configs = admin.describe_configs(repartition).unwrap();
    assert_eq!(configs["cleanup.policy"].value, "delete");
    assert_eq!(configs["retention.ms"].value, "-1");
    assert_eq!(TaskId::new(1, 2).to_string(), "1_2");
}

#[test]
fn word_count_over_four_partitions_matches_the_model() {
    let lines = ["kafka streams in rust", "streams of records", "kafka kafka"];
    let mut app = app_with_topics(4);
    app.start("a", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap();
    send_lines(&app, &lines, 0);
    app.run_until_idle().unwrap();
    let counts = app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap();
    assert_eq!(counts, model(&lines));
    // Each count went to the partition of its key (the default partitioner),
    // and the store of each key is in the task of that partition.
    let a = app.instance("a").unwrap();
    let mut from_stores = BTreeMap::new();
    for p in 0..4 {
        let store = a
            .store::<TimestampedKeyValueStore<String, i64>>(
                "KSTREAM-AGGREGATE-STATE-STORE-0000000003",
                TaskId::new(1, p),
            )
            .unwrap();
        for (k, v) in store.all().unwrap() {
            from_stores.insert(k, v.value);
        }
    }
    assert_eq!(from_stores, model(&lines));
}

#[test]
fn repartition_topics_get_the_largest_upstream_partition_count() {
    let builder = StreamsBuilder::new();
    let left = builder.stream::<String, String>("small");
    let right = builder.stream::<String, String>("large");
    left.merge(&right).group_by(|_, v| v.clone()).count();
    let topology = builder.build().unwrap();
    let mut app = StreamsCluster::new();
    app.create_topic("small", 2).unwrap();
    app.create_topic("large", 6).unwrap();
    app.start("a", &topology, StreamsConfig::new("merge"))
        .unwrap();
    let metadata = app.instance("a").unwrap().topology_metadata().unwrap();
    let repartition: Vec<(&String, &i32)> = metadata
        .partitions
        .iter()
        .filter(|(t, _)| t.ends_with("-repartition"))
        .collect();
    assert_eq!(
        repartition,
        [(
            &"merge-KSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition".to_owned(),
            &6
        )]
    );
    // Sub-topology 0 reads both (6 tasks, the first two read both topics).
    assert_eq!(
        metadata.tasks.keys().filter(|t| t.subtopology == 0).count(),
        6
    );
    assert_eq!(metadata.tasks[&TaskId::new(0, 1)].partitions.len(), 2);
    assert_eq!(metadata.tasks[&TaskId::new(0, 4)].partitions.len(), 1);
}

#[test]
fn a_join_of_topics_with_different_partition_counts_is_refused() {
    let builder = StreamsBuilder::new();
    let table = builder.table::<String, String>("customers");
    builder
        .stream::<String, String>("orders")
        .join(&table, |o, c| format!("{o}/{c}"))
        .to("enriched");
    let topology = builder.build().unwrap();
    let mut app = StreamsCluster::new();
    app.create_topic("orders", 3).unwrap();
    app.create_topic("customers", 2).unwrap();
    let err = app
        .start("a", &topology, StreamsConfig::new("join"))
        .unwrap_err();
    let AppError::Runtime { source, .. } = err else {
        panic!("expected a runtime error, got {err}")
    };
    assert!(
        matches!(*source, RuntimeError::NotCopartitioned { .. }),
        "{source}"
    );
    assert_eq!(
        source.to_string(),
        "Invalid topology: Topics not co-partitioned: [customers (2 partitions),orders (3 partitions)]; give them the same number of partitions, or repartition one side (for example with KStream::repartition)"
    );
}

#[test]
fn a_missing_source_topic_is_named() {
    let mut app = StreamsCluster::new();
    app.create_topic(COUNTS, 1).unwrap();
    let err = app
        .start("a", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "instance a: Missing source topics: [\"words\"]; create them (with the partition counts you want) before starting the application"
    );
}

#[test]
fn bad_configs_are_refused_with_kafkas_messages() {
    let clients = Arc::new(streams_broker::clients::api::SimulatedClients::new(
        streams_broker::Cluster::new(),
    ));
    let bad = |config: StreamsConfig| {
        KafkaStreams::new(&word_count(), config, clients.clone())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        bad(StreamsConfig::new("wc").with_property("processing.guarantee", "exactly_once")),
        "Invalid value exactly_once for configuration processing.guarantee: String must be one of: at_least_once, exactly_once_v2"
    );
    assert_eq!(
        bad(StreamsConfig::new("wc").with_property("num.stream.threads", "-1")),
        "Invalid value -1 for configuration num.stream.threads: Value must be at least 1"
    );
    assert!(
        bad(StreamsConfig::new("word count")).starts_with("application.id 'word count' is illegal")
    );
}

#[test]
fn state_listener_sees_kafkas_transitions() {
    let mut app = app_with_topics(2);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    app.start_with(
        "a",
        &word_count(),
        config(ProcessingGuarantee::AtLeastOnce),
        |s| {
            s.set_state_listener(move |new, old| log.lock().unwrap().push((old, new)));
        },
    )
    .unwrap();
    app.run_until_idle().unwrap();
    app.close("a").unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Created, State::Rebalancing),
            (State::Rebalancing, State::Running),
            (State::Running, State::PendingShutdown),
            (State::PendingShutdown, State::NotRunning),
        ]
    );
}

#[test]
fn two_instances_share_the_tasks_and_a_crash_moves_them_with_their_state() {
    let first = ["a b c d", "e f g h"];
    let second = ["a e", "b f"];
    let changelog = "word-count-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
    let mut app = app_with_topics(4);
    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let listener = restores.clone();
    app.start_with(
        "a",
        &word_count(),
        config(ProcessingGuarantee::AtLeastOnce),
        |s| {
            s.set_global_state_restore_listener(listener);
        },
    )
    .unwrap();
    app.start("b", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap();
    send_lines(&app, &first, 0);
    app.run_until_idle().unwrap();
    // Sticky: a had all 8 tasks before b joined and keeps the first 4.
    assert_eq!(
        app.instance("a").unwrap().active_tasks(),
        tasks(&[(0, 0), (0, 1), (0, 2), (0, 3)])
    );
    assert_eq!(
        app.instance("b").unwrap().active_tasks(),
        tasks(&[(1, 0), (1, 1), (1, 2), (1, 3)])
    );
    let logged = app.read(changelog, StringSerde, I64Serde).unwrap().len();
    assert_eq!(logged, 8);
    // b dies; until its session (45 s) times out, its tasks wait.
    app.crash("b").unwrap();
    send_lines(&app, &second, first.len());
    app.run_until_idle().unwrap();
    assert_eq!(app.instance("a").unwrap().active_tasks().len(), 4);
    app.advance(45_000);
    app.run_until_idle().unwrap();
    assert_eq!(app.instance("a").unwrap().active_tasks().len(), 8);
    let counts = app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap();
    let all: Vec<&str> = first.iter().chain(&second).copied().collect();
    assert_eq!(counts, model(&all));
    // a restored each count store twice: when it first had every task
    // (empty changelogs), and when it took them over from b: all 8 records
    // b had logged, 4 partitions from offset 0.
    let restored = restores.lock().unwrap().restorations.clone();
    let partitions: Vec<i32> = restored.iter().map(|r| r.partition.partition).collect();
    assert_eq!(partitions, [0, 1, 2, 3, 0, 1, 2, 3]);
    assert!(
        restored[..4]
            .iter()
            .all(|r| (r.start, r.end, r.restored) == (0, 0, 0))
    );
    let restored = &restored[4..];
    assert!(
        restored
            .iter()
            .all(|r| r.start == 0 && r.partition.topic == changelog)
    );
    assert_eq!(restored.iter().map(|r| r.restored).sum::<usize>(), logged);
}

#[test]
fn a_store_on_another_instance_is_not_local() {
    let mut app = app_with_topics(2);
    app.start("a", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap();
    app.start("b", &word_count(), config(ProcessingGuarantee::AtLeastOnce))
        .unwrap();
    app.run_until_idle().unwrap();
    let a = app.instance("a").unwrap();
    let elsewhere = app.instance("b").unwrap().active_tasks()[0];
    let err = a
        .store::<TimestampedKeyValueStore<String, i64>>(
            "KSTREAM-AGGREGATE-STATE-STORE-0000000003",
            elsewhere,
        )
        .unwrap_err();
    assert!(err.to_string().starts_with(
        "The state store, KSTREAM-AGGREGATE-STATE-STORE-0000000003, may have migrated to another instance"
    ));
}

/// Upper-cases values: stateless, so every record's output is sent at once.
fn upper_case() -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .map_values(|v| v.to_uppercase())
        .to("out");
    builder.build().unwrap()
}

fn send_values(app: &StreamsCluster, topic: &str, values: &[&str]) {
    let producer = app.producer(topic, StringSerde, StringSerde);
    for v in values {
        producer
            .send(&(*v).to_owned(), Some(&(*v).to_owned()), 5)
            .unwrap();
    }
}

fn values_of(app: &StreamsCluster, topic: &str, committed: bool) -> Vec<String> {
    let records = if committed {
        app.read_committed(topic, StringSerde, StringSerde).unwrap()
    } else {
        app.read(topic, StringSerde, StringSerde).unwrap()
    };
    records.into_iter().filter_map(|r| r.value).collect()
}

/// Under at-least-once the records processed since the last commit are
/// processed again by the next owner: their output appears twice, exactly
/// those records, as in Kafka.
#[test]
fn at_least_once_repeats_what_was_processed_after_the_last_commit() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    app.create_topic("out", 1).unwrap();
    let config = || StreamsConfig::new("upper").with_property("commit.interval.ms", "1000");
    app.start("a", &upper_case(), config()).unwrap();
    send_values(&app, "in", &["a", "b", "c"]);
    app.run_until_idle().unwrap(); // processes and commits a, b, c
    send_values(&app, "in", &["d", "e"]);
    app.step().unwrap();
    app.step().unwrap(); // processes d, e; no commit before the interval
    assert!(app.instance("a").unwrap().has_uncommitted());
    assert_eq!(values_of(&app, "out", false), ["A", "B", "C", "D", "E"]);
    app.crash("a").unwrap();
    app.advance(45_000);
    app.start("b", &upper_case(), config()).unwrap();
    app.run_until_idle().unwrap();
    assert_eq!(
        values_of(&app, "out", false),
        ["A", "B", "C", "D", "E", "D", "E"]
    );
}

/// A clean close commits: the next instance repeats nothing.
#[test]
fn a_clean_close_commits_so_nothing_repeats() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    app.create_topic("out", 1).unwrap();
    let config = || StreamsConfig::new("upper").with_property("commit.interval.ms", "1000");
    app.start("a", &upper_case(), config()).unwrap();
    send_values(&app, "in", &["a", "b"]);
    app.step().unwrap();
    app.step().unwrap();
    app.close("a").unwrap();
    app.advance(45_000);
    app.start("b", &upper_case(), config()).unwrap();
    send_values(&app, "in", &["c"]);
    app.run_until_idle().unwrap();
    assert_eq!(values_of(&app, "out", false), ["A", "B", "C"]);
}

/// Under exactly-once the crashed instance's open transaction is aborted
/// (on its 10 s timeout): `read_committed` consumers see each result once,
/// while the log still holds the aborted attempt.
#[test]
fn exactly_once_shows_each_result_once_across_a_crash() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    app.create_topic("out", 1).unwrap();
    let config = || {
        StreamsConfig::new("upper")
            .with_property("processing.guarantee", "exactly_once_v2")
            .with_property("commit.interval.ms", "1000")
    };
    app.start("a", &upper_case(), config()).unwrap();
    send_values(&app, "in", &["a", "b", "c"]);
    app.run_until_idle().unwrap(); // a, b, c in a committed transaction
    send_values(&app, "in", &["d", "e"]);
    app.step().unwrap();
    app.step().unwrap(); // d, e in a's open transaction
    assert_eq!(values_of(&app, "out", true), ["A", "B", "C"]);
    assert_eq!(values_of(&app, "out", false), ["A", "B", "C", "D", "E"]);
    app.crash("a").unwrap();
    app.advance(45_000); // a's session and its transaction's timeout pass
    app.start("b", &upper_case(), config()).unwrap();
    app.run_until_idle().unwrap();
    assert_eq!(values_of(&app, "out", true), ["A", "B", "C", "D", "E"]);
    assert_eq!(
        values_of(&app, "out", false),
        ["A", "B", "C", "D", "E", "D", "E"]
    );
}

mod schedules {
    //! Seeded schedules: instances started, stepped, crashed and restarted
    //! in a random order, the clock moved at random, input produced in
    //! between; at the end every instance is back and the group settles.
    //! A failing case replays exactly (proptest prints it and keeps its
    //! seed in `proptest-regressions/`).

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Action {
        /// Produce the next `n` lines.
        Produce(usize),
        /// Step instance `i` once.
        Step(usize),
        /// Crash instance `i` (if running).
        Crash(usize),
        /// Start instance `i` (if not running).
        Start(usize),
        /// Move the clock.
        Advance(i64),
    }

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            3 => (1usize..4).prop_map(Action::Produce),
            6 => (0usize..3).prop_map(Action::Step),
            1 => (0usize..3).prop_map(Action::Crash),
            2 => (0usize..3).prop_map(Action::Start),
            2 => prop_oneof![Just(300i64), Just(1_500), Just(12_000), Just(46_000)].prop_map(Action::Advance),
        ]
    }

    const LINES: [&str; 6] = ["a b", "b c", "c a a", "d", "a d b", "e e"];
    const NAMES: [&str; 3] = ["x", "y", "z"];

    /// Runs `actions` on a word count with `guarantee`; returns the lines
    /// produced and the app at the end, every instance running and idle.
    fn run(
        actions: &[Action],
        guarantee: ProcessingGuarantee,
        topology: &Topology,
        input: &str,
    ) -> (Vec<&'static str>, StreamsCluster) {
        let mut app = StreamsCluster::new();
        app.create_topic(input, 3).unwrap();
        app.create_topic(COUNTS, 3).unwrap();
        app.create_topic("out", 3).unwrap();
        let producer = app.producer(input, StringSerde, StringSerde);
        let mut produced = Vec::new();
        let start = |app: &mut StreamsCluster, name: &str| {
            if app.instance(name).is_none() {
                app.start(name, topology, config(guarantee)).unwrap();
            }
        };
        start(&mut app, NAMES[0]);
        for a in actions {
            match a {
                Action::Produce(n) => {
                    for _ in 0..*n {
                        let line = LINES[produced.len() % LINES.len()];
                        producer
                            .send(
                                &format!("line-{}", produced.len()),
                                Some(&line.to_owned()),
                                produced.len() as i64,
                            )
                            .unwrap();
                        produced.push(line);
                    }
                }
                Action::Step(i) => {
                    if let Some(s) = app.instance_mut(NAMES[*i]) {
                        s.step().unwrap();
                    }
                }
                Action::Crash(i) => {
                    if app.instance(NAMES[*i]).is_some() {
                        app.crash(NAMES[*i]).unwrap();
                    }
                }
                Action::Start(i) => start(&mut app, NAMES[*i]),
                Action::Advance(ms) => app.advance(*ms),
            }
        }
        for name in NAMES {
            start(&mut app, name);
        }
        app.advance(46_000);
        app.run_until_idle().unwrap();
        (produced, app)
    }

    proptest! {
        // A fixed seed: the same cases every run (change it to explore others).
        #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(0x6b73_7472), ..ProptestConfig::default() })]

        /// Exactly-once: the committed counts equal the model's, and each
        /// key's committed updates only grow (no result twice, none lost),
        /// whatever crashed when.
        #[test]
        fn exactly_once_word_count_equals_the_model(actions in prop::collection::vec(action(), 1..40)) {
            let (lines, app) = run(&actions, ProcessingGuarantee::ExactlyOnceV2, &word_count(), WORDS);
            let counts = app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap();
            prop_assert_eq!(&counts, &model(&lines));
            prop_assert_eq!(&counts, &driver_counts(&lines));
            let mut last: BTreeMap<String, i64> = BTreeMap::new();
            for r in app.read_committed(COUNTS, StringSerde, I64Serde).unwrap() {
                let (k, v) = (r.key.unwrap(), r.value.unwrap());
                let before = last.insert(k.clone(), v).unwrap_or(0);
                prop_assert!(v > before, "{} went from {} to {}", k, before, v);
            }
        }

        /// At-least-once: every input's result is there, some maybe twice;
        /// without the repeats the output is exactly the input's.
        #[test]
        fn at_least_once_loses_nothing_and_repeats_only_whole_records(actions in prop::collection::vec(action(), 1..40)) {
            let (lines, app) = run(&actions, ProcessingGuarantee::AtLeastOnce, &upper_case_keyed(), "in");
            let out = app.read("out", StringSerde, StringSerde).unwrap();
            let mut seen = BTreeMap::new();
            for r in &out {
                *seen.entry((r.key.clone().unwrap(), r.value.clone().unwrap())).or_insert(0) += 1;
            }
            let expected: BTreeMap<(String, String), i32> = lines
                .iter()
                .enumerate()
                .map(|(i, l)| ((format!("line-{i}"), l.to_uppercase()), 1))
                .collect();
            prop_assert_eq!(seen.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
            let duplicates: i32 = seen.values().map(|n| n - 1).sum();
            prop_assert_eq!(usize::try_from(duplicates).unwrap(), out.len() - lines.len());
        }
    }

    /// The same input through Kafka's `TopologyTestDriver` (one task, no
    /// crash): the final count per word.
    fn driver_counts(lines: &[&str]) -> BTreeMap<String, i64> {
        let driver = streams_test::TopologyTestDriver::with_config(
            word_count(),
            StreamsConfig::new("word-count"),
        )
        .unwrap();
        let input = driver.create_input_topic(WORDS, StringSerde, StringSerde);
        let output = driver.create_output_topic(COUNTS, StringSerde, I64Serde);
        for (i, line) in lines.iter().enumerate() {
            input.pipe_key_value_at(format!("line-{i}"), (*line).to_owned(), i as i64);
        }
        output
            .read_key_values_to_map()
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect()
    }

    fn upper_case_keyed() -> Topology {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("in")
            .map_values(|v| v.to_uppercase())
            .to("out");
        builder.build().unwrap()
    }
}

/// `run_until_idle` moves the clock to the end of a task's
/// `max.task.idle.ms` wait: a task that waits for an empty, caught-up
/// partition processes its buffered records once the wait is over.
#[test]
fn run_until_idle_waits_out_max_task_idle_ms() {
    let builder = StreamsBuilder::new();
    let table = builder.table::<String, String>("right");
    builder
        .stream::<String, String>("left")
        .join(&table, |l, r| format!("{l}/{r}"))
        .to("joined");
    let topology = builder.build().unwrap();
    let mut app = StreamsCluster::new();
    for t in ["left", "right", "joined"] {
        app.create_topic(t, 1).unwrap();
    }
    let config = StreamsConfig::new("idle").with_property("max.task.idle.ms", "5000");
    app.start("a", &topology, config).unwrap();
    app.run_until_idle().unwrap();
    send_values(&app, "left", &["x"]);
    let before = app.cluster().now_ms();
    let stats = app.run_until_idle().unwrap();
    // The left record waited for the empty table partition 5 s, then went
    // through the join (no table row: no output) and was committed.
    assert!(stats.advanced_ms >= 5_000, "{stats:?}");
    assert!(app.cluster().now_ms() - before >= 5_000);
    assert!(!app.instance("a").unwrap().has_uncommitted());
    assert_eq!(app.instance("a").unwrap().next_idle_deadline_ms(), None);
}

/// A store's changelog configs (Kafka's `withLoggingEnabled(Map)`) reach
/// the topic the runtime creates, on top of Kafka Streams' own.
#[test]
fn a_stores_changelog_configs_reach_its_topic() {
    use streams_core::Materialized;
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(WORDS)
        .group_by_key()
        .count_with(Materialized::as_("counts-store").with_logging_enabled([
            ("min.compaction.lag.ms", "60000"),
            ("segment.bytes", "1048576"),
        ]));
    let mut app = StreamsCluster::new();
    app.create_topic(WORDS, 2).unwrap();
    app.start("a", &builder.build().unwrap(), StreamsConfig::new("cfg"))
        .unwrap();
    let configs = app
        .cluster()
        .admin()
        .describe_configs("cfg-counts-store-changelog")
        .unwrap();
    assert_eq!(configs["cleanup.policy"].value, "compact");
    assert_eq!(configs["min.compaction.lag.ms"].value, "60000");
    assert_eq!(configs["segment.bytes"].value, "1048576");
}

/// A windowed store's changelog is `compact,delete`, kept a day longer
/// than the store keeps windows (Kafka Streams'
/// `WindowedChangelogTopicConfig` with the default
/// `windowstore.changelog.additional.retention.ms`).
#[test]
fn a_windowed_stores_changelog_is_compact_and_delete() {
    use streams_core::time::TimeWindows;
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(WORDS)
        .group_by_key()
        .windowed_by(
            TimeWindows::of_size_with_no_grace(std::time::Duration::from_secs(10)).unwrap(),
        )
        .count();
    let topology = builder.build().unwrap();
    let mut app = StreamsCluster::new();
    app.create_topic(WORDS, 1).unwrap();
    app.start("a", &topology, StreamsConfig::new("win"))
        .unwrap();
    let info = topology.topics_info("win");
    let (_, changelog) = &info[0].changelog_topics[0];
    let configs = app.cluster().admin().describe_configs(changelog).unwrap();
    assert_eq!(configs["cleanup.policy"].value, "compact,delete");
    assert_eq!(
        configs["retention.ms"].value,
        (10_000 + 86_400_000).to_string()
    );
}
