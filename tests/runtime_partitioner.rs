//! Stream partitioners on the `KafkaStreams` runtime, as Kafka's
//! `RecordCollectorImpl.send` applies them: a sink's partitioner sees the
//! typed key and value and the topic's partition count; `None` leaves the
//! record to the producer's default partitioner, an empty set drops it
//! (counted), several partitions get a copy each (KIP-837). A
//! repartition topic's partitioner decides which task aggregates a key; a
//! DSL sink of windowed keys partitions by the key inside the window
//! (Kafka's `WindowedStreamPartitioner`); a partitioner writing to a topic
//! that does not exist fails with Kafka's message.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_broker::partitioner::partition_for_key;
use streams_core::dsl::{Produced, Repartitioned};
use streams_core::processor::StreamPartitioner;
use streams_core::runtime::{RuntimeError, State, TaskId};
use streams_core::serde::{I64Serde, Serde, StringSerde};
use streams_core::state::TimestampedKeyValueStore;
use streams_core::time::{TimeWindows, Windowed, WindowedSerde};
use streams_core::{StreamsBuilder, StreamsConfig, Topology};
use streams_test::app::{AppError, IsolationLevel, StreamsCluster};

fn config() -> StreamsConfig {
    StreamsConfig::new("partitioned").with_property("commit.interval.ms", "1000")
}

/// The keys of each partition of `topic`, in offset order.
fn keys_by_partition(app: &StreamsCluster, topic: &str, partitions: i32) -> Vec<Vec<String>> {
    (0..partitions)
        .map(|p| {
            app.read_partition(
                topic,
                p,
                IsolationLevel::ReadUncommitted,
                StringSerde,
                StringSerde,
            )
            .unwrap()
            .into_iter()
            .map(|r| r.key.unwrap())
            .collect()
        })
        .collect()
}

/// Keys "a…" to partition 0, "b…" to every partition, "c…" nowhere, any
/// other to the producer's default partitioner.
struct ByFirstLetter;

impl StreamPartitioner<String, String> for ByFirstLetter {
    fn partitions(
        &self,
        _topic: &str,
        key: Option<&String>,
        _value: Option<&String>,
        num_partitions: i32,
    ) -> Option<BTreeSet<i32>> {
        match key.and_then(|k| k.chars().next()) {
            Some('a') => Some([0].into()),
            Some('b') => Some((0..num_partitions).collect()),
            Some('c') => Some(BTreeSet::new()),
            _ => None,
        }
    }
}

fn pass_through(produced: Produced<String, String>) -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .to_with("out", produced);
    builder.build().unwrap()
}

fn send(app: &StreamsCluster, topic: &str, keys: &[&str]) {
    let producer = app.producer(topic, StringSerde, StringSerde);
    for (i, key) in keys.iter().enumerate() {
        let ts = i64::try_from(i).unwrap() * 10;
        producer
            .send(&(*key).to_owned(), Some(&format!("v{i}")), ts)
            .unwrap();
    }
}

/// One partition, every partition, none, and the default: each as
/// Kafka's `RecordCollectorImpl` sends it.
#[test]
fn a_sink_partitioner_picks_one_all_or_no_partition() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    app.create_topic("out", 3).unwrap();
    let topology = pass_through(Produced::default().with_stream_partitioner(ByFirstLetter));
    app.start("a", &topology, config()).unwrap();
    send(&app, "in", &["a1", "b1", "c1", "zebra", "a2"]);
    app.run_until_idle().unwrap();
    // The default partitioner places "zebra" by its bytes' murmur2.
    let zebra = partition_for_key(b"zebra", 3).unwrap();
    let mut expected = vec![
        vec!["a1".to_owned(), "b1".to_owned()],
        vec!["b1".to_owned()],
        vec!["b1".to_owned()],
    ];
    expected[usize::try_from(zebra).unwrap()].push("zebra".to_owned());
    expected[0].push("a2".to_owned());
    assert_eq!(keys_by_partition(&app, "out", 3), expected);
    // "c1" went nowhere: dropped, and counted as Kafka's
    // dropped-records sensor counts it.
    let streams = app.instance("a").unwrap();
    assert_eq!(
        streams
            .task_metrics(TaskId::new(0, 0))
            .unwrap()
            .dropped_records,
        1
    );
}

/// A closure partitioner sees the topic's partition count on the
/// cluster (the driver would tell it 1).
#[test]
fn a_closure_partitioner_sees_the_cluster_partition_count() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 2).unwrap();
    app.create_topic("out", 5).unwrap();
    let last = |_: &str, _: Option<&String>, _: Option<&String>, n: i32| Some(n - 1);
    let topology = pass_through(Produced::default().with_stream_partitioner(last));
    app.start("a", &topology, config()).unwrap();
    send(&app, "in", &["k1", "k2", "k3", "k4"]);
    app.run_until_idle().unwrap();
    let by_partition = keys_by_partition(&app, "out", 5);
    assert!(
        by_partition[..4].iter().all(Vec::is_empty),
        "{by_partition:?}"
    );
    let mut last: Vec<_> = by_partition[4].clone();
    last.sort();
    assert_eq!(last, ["k1", "k2", "k3", "k4"]);
}

/// A repartition topic's partitioner decides which task aggregates a
/// key: every word to partition 1, so task 1_1 counts them all and
/// task 1_0 none.
#[test]
fn a_repartition_partitioner_decides_which_task_aggregates() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 2).unwrap();
    app.create_topic("counts", 2).unwrap();
    let builder = StreamsBuilder::new();
    let one = |_: &str, _: Option<&String>, _: Option<&String>, _: i32| Some(1);
    builder
        .stream::<String, String>("in")
        .repartition_with(Repartitioned::as_("words").with_stream_partitioner(one))
        .group_by_key()
        .count()
        .to_stream()
        .to_with("counts", Produced::with(StringSerde, I64Serde));
    let topology = builder.build().unwrap();
    app.start("a", &topology, config()).unwrap();
    send(&app, "in", &["x", "y", "x", "z", "x"]);
    app.run_until_idle().unwrap();
    app.advance(1_001);
    app.run_until_idle().unwrap();
    let streams = app.instance("a").unwrap();
    let store = "KSTREAM-AGGREGATE-STATE-STORE-0000000004";
    let counts = |task| -> BTreeMap<String, i64> {
        streams
            .store::<TimestampedKeyValueStore<String, i64>>(store, task)
            .unwrap()
            .all()
            .unwrap()
            .map(|(k, v)| (k, v.value))
            .collect()
    };
    assert_eq!(counts(TaskId::new(1, 0)), BTreeMap::new());
    assert_eq!(
        counts(TaskId::new(1, 1)),
        BTreeMap::from([
            ("x".to_owned(), 3),
            ("y".to_owned(), 1),
            ("z".to_owned(), 1)
        ])
    );
    let repartition = app
        .read_partition(
            "partitioned-words-repartition",
            0,
            IsolationLevel::ReadUncommitted,
            StringSerde,
            StringSerde,
        )
        .unwrap_or_default();
    assert!(repartition.is_empty(), "{repartition:?}");
}

/// Kafka's `StreamSinkNode` gives a DSL sink whose key serde is
/// windowed a `WindowedStreamPartitioner`: each window of a key goes to
/// the partition of the key itself, not of the windowed key's bytes.
#[test]
fn windowed_keys_go_to_the_partition_of_their_inner_key() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    app.create_topic("out", 4).unwrap();
    let size = Duration::from_millis(100);
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(size).unwrap())
        .count()
        .to_stream()
        .to_with(
            "out",
            Produced::with(WindowedSerde::time_with_size(StringSerde, size), I64Serde),
        );
    let topology = builder.build().unwrap();
    app.start("a", &topology, config()).unwrap();
    let keys = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
    // Each key in two windows: [0, 100) and [100, 200).
    let producer = app.producer("in", StringSerde, StringSerde);
    for (i, key) in keys.iter().chain(keys.iter()).enumerate() {
        let ts = if i < keys.len() { 10 } else { 150 };
        producer
            .send(&(*key).to_owned(), Some(&"v".to_owned()), ts)
            .unwrap();
    }
    app.run_until_idle().unwrap();
    app.advance(1_001);
    app.run_until_idle().unwrap();
    let windowed = WindowedSerde::time_with_size(StringSerde, size);
    let mut seen = 0;
    let mut differs = false;
    for p in 0..4 {
        let records = app
            .read_partition(
                "out",
                p,
                IsolationLevel::ReadUncommitted,
                WindowedSerde::time_with_size(StringSerde, size),
                I64Serde,
            )
            .unwrap();
        for r in records {
            let key: Windowed<String> = r.key.unwrap();
            assert_eq!(
                partition_for_key(key.key.as_bytes(), 4).unwrap(),
                p,
                "{key:?} on partition {p}"
            );
            let full = windowed.serialize("out", &key).unwrap();
            differs |= partition_for_key(&full, 4).unwrap() != p;
            seen += 1;
        }
    }
    assert_eq!(seen, 12);
    // The producer's partitioner would have put some elsewhere.
    assert!(differs);
}

/// Kafka's `RecordCollectorImpl`: "Could not get partition information
/// for topic ... for task ... This can happen if the topic does not
/// exist." The instance stops with the error; nothing is committed.
#[test]
fn a_partitioner_writing_to_a_missing_topic_fails_naming_topic_and_task() {
    let mut app = StreamsCluster::new();
    app.create_topic("in", 1).unwrap();
    let topology = pass_through(Produced::default().with_stream_partitioner(ByFirstLetter));
    app.start("a", &topology, config()).unwrap();
    send(&app, "in", &["a1"]);
    let err = app.run_until_idle().unwrap_err();
    let AppError::Runtime { source, .. } = err else {
        panic!("expected a runtime error, got {err}")
    };
    let message = source.to_string();
    assert!(
            message.contains(
                "could not get partition information for topic `out` for task 0_0: this can happen if the topic does not exist; create the topic"
            ),
            "{message}"
        );
    assert!(!matches!(*source, RuntimeError::InvalidConfig { .. }));
    assert_eq!(app.instance("a").unwrap().state(), State::Error);
}

/// In the `TopologyTestDriver`, as in Kafka's (whose producer reports one
/// partition for every topic), a partitioner is told of one partition; an
/// empty choice still drops the record, and several partitions still give
/// a copy each.
#[test]
fn in_the_driver_a_partitioner_sees_one_partition() {
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let counts = seen.clone();
    let by_letter = move |topic: &str, key: Option<&String>, v: Option<&String>, n: i32| {
        counts.borrow_mut().push(n);
        ByFirstLetter.partitions(topic, key, v, n)
    };
    let driver = streams_test::TopologyTestDriver::new(pass_through(
        Produced::default().with_stream_partitioner(ByFirstLetterThen(by_letter)),
    ))
    .unwrap();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    for key in ["a1", "b1", "c1", "zebra"] {
        input.pipe_key_value(key, "v");
    }
    let keys: Vec<String> = out
        .read_key_values_to_list()
        .into_iter()
        .map(|kv| kv.key.unwrap())
        .collect();
    assert_eq!(keys, ["a1", "b1", "zebra"]);
    assert_eq!(*seen.borrow(), [1, 1, 1, 1]);
    assert_eq!(driver.metrics().dropped_records, 1);
}

/// A partitioner made of a closure returning a set of partitions.
struct ByFirstLetterThen<F>(F);

impl<F> StreamPartitioner<String, String> for ByFirstLetterThen<F>
where
    F: Fn(&str, Option<&String>, Option<&String>, i32) -> Option<BTreeSet<i32>> + 'static,
{
    fn partitions(
        &self,
        topic: &str,
        key: Option<&String>,
        value: Option<&String>,
        num_partitions: i32,
    ) -> Option<BTreeSet<i32>> {
        (self.0)(topic, key, value, num_partitions)
    }
}
