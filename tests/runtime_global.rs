//! Global tables on the `KafkaStreams` runtime, as Kafka Streams' global
//! stream thread keeps them: every instance holds the whole table (all
//! partitions of its topic), reads it to the end before its stream
//! threads start (with the restore listener told of each partition), and
//! applies later updates before its tasks' next records; a global topic
//! that does not exist is refused at start, a global record that does not
//! decode stops the instance.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use streams_broker::TopicPartition;
use streams_core::dsl::Materialized;
use streams_core::runtime::{RecordingRestoreListener, Restoration, RuntimeError, State};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::state::TimestampedKeyValueStore;
use streams_core::{StreamsBuilder, StreamsConfig, Topology};
use streams_test::app::{AppError, StreamsCluster};

const STORE: &str = "prices-store";

fn config() -> StreamsConfig {
    StreamsConfig::new("shop").with_property("commit.interval.ms", "1000")
}

/// Orders (key: order id, value: item) priced from the global table of
/// prices (key: item), left-joined so that an unknown item shows.
fn priced_orders() -> Topology {
    let builder = StreamsBuilder::new();
    let prices = builder.global_table_with::<String, i64>(
        "prices",
        Materialized::as_(STORE).with_value_serde(I64Serde),
    );
    builder
        .stream::<String, String>("orders")
        .left_join_global(
            &prices,
            |_, item| item.clone(),
            |item, price| match price {
                Some(p) => format!("{item}@{p}"),
                None => format!("{item}@?"),
            },
        )
        .to("priced");
    builder.build().unwrap()
}

fn prices_in(app: &StreamsCluster, instance: &str) -> BTreeMap<String, i64> {
    app.instance(instance)
        .unwrap()
        .global_store::<TimestampedKeyValueStore<String, i64>>(STORE)
        .unwrap()
        .all()
        .unwrap()
        .map(|(k, v)| (k, v.value))
        .collect()
}

fn priced(app: &StreamsCluster) -> BTreeMap<String, String> {
    app.read("priced", StringSerde, StringSerde)
        .unwrap()
        .into_iter()
        .map(|r| (r.key.unwrap(), r.value.unwrap()))
        .collect()
}

fn cluster() -> StreamsCluster {
    let app = StreamsCluster::new();
    app.create_topic("orders", 2).unwrap();
    app.create_topic("prices", 3).unwrap();
    app.create_topic("priced", 2).unwrap();
    app
}

fn send_prices(app: &StreamsCluster, prices: &[(&str, i64)], ts: i64) {
    let producer = app.producer("prices", StringSerde, I64Serde);
    for (item, price) in prices {
        producer.send(&(*item).to_owned(), Some(price), ts).unwrap();
    }
}

fn send_orders(app: &StreamsCluster, orders: &[(&str, &str)], ts: i64) {
    let producer = app.producer("orders", StringSerde, StringSerde);
    for (id, item) in orders {
        producer
            .send(&(*id).to_owned(), Some(&(*item).to_owned()), ts)
            .unwrap();
    }
}

/// Two instances share the orders' two partitions; each joins against the
/// whole table of prices, whose items sit on all three partitions of its
/// topic; an update reaches both before their next orders.
#[test]
fn every_instance_joins_against_the_whole_global_table() {
    let mut app = cluster();
    send_prices(&app, &[("tea", 3), ("pen", 2), ("ink", 7), ("cup", 5)], 1);
    app.start("a", &priced_orders(), config()).unwrap();
    app.start("b", &priced_orders(), config()).unwrap();
    let all = BTreeMap::from([
        ("cup".to_owned(), 5),
        ("ink".to_owned(), 7),
        ("pen".to_owned(), 2),
        ("tea".to_owned(), 3),
    ]);
    // Read to the end at start, before any step.
    assert_eq!(prices_in(&app, "a"), all);
    assert_eq!(prices_in(&app, "b"), all);
    app.run_until_idle().unwrap();
    let (a, b) = (
        app.instance("a").unwrap().active_tasks(),
        app.instance("b").unwrap().active_tasks(),
    );
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    send_orders(
        &app,
        &[
            ("o1", "tea"),
            ("o2", "pen"),
            ("o3", "ink"),
            ("o4", "cup"),
            ("o5", "mug"),
        ],
        10,
    );
    app.run_until_idle().unwrap();
    assert_eq!(
        priced(&app),
        BTreeMap::from([
            ("o1".to_owned(), "tea@3".to_owned()),
            ("o2".to_owned(), "pen@2".to_owned()),
            ("o3".to_owned(), "ink@7".to_owned()),
            ("o4".to_owned(), "cup@5".to_owned()),
            ("o5".to_owned(), "mug@?".to_owned()),
        ])
    );
    // Both instances processed orders (the partitions are split).
    let outputs_per_partition: Vec<usize> = (0..2)
        .map(|p| {
            app.read_partition(
                "orders",
                p,
                streams_test::app::IsolationLevel::ReadUncommitted,
                StringSerde,
                StringSerde,
            )
            .unwrap()
            .len()
        })
        .collect();
    assert!(
        outputs_per_partition.iter().all(|&n| n > 0),
        "{outputs_per_partition:?}"
    );
    // An update and a new item, then orders for them.
    send_prices(&app, &[("tea", 4), ("mug", 9)], 20);
    app.run_until_idle().unwrap();
    let mut updated = all.clone();
    updated.insert("tea".to_owned(), 4);
    updated.insert("mug".to_owned(), 9);
    assert_eq!(prices_in(&app, "a"), updated);
    assert_eq!(prices_in(&app, "b"), updated);
    send_orders(&app, &[("o6", "tea"), ("o7", "mug"), ("o8", "tea")], 30);
    app.run_until_idle().unwrap();
    let out = priced(&app);
    assert_eq!(out["o6"], "tea@4");
    assert_eq!(out["o7"], "mug@9");
    assert_eq!(out["o8"], "tea@4");
    // A tombstone removes the row everywhere.
    app.producer("prices", StringSerde, I64Serde)
        .send(&"ink".to_owned(), None, 40)
        .unwrap();
    app.run_until_idle().unwrap();
    assert_eq!(prices_in(&app, "a").get("ink"), None);
    assert_eq!(prices_in(&app, "b").get("ink"), None);
}

/// An instance that starts later reads the whole global topic first: the
/// restore listener is told of each of its partitions, from offset 0 to
/// the end, with the records each held.
#[test]
fn a_late_instance_bootstraps_the_global_table_with_restore_callbacks() {
    let mut app = cluster();
    app.start("a", &priced_orders(), config()).unwrap();
    send_prices(
        &app,
        &[("tea", 3), ("pen", 2), ("ink", 7), ("cup", 5), ("tea", 6)],
        1,
    );
    app.run_until_idle().unwrap();
    let listener = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let shared = listener.clone();
    app.start_with("b", &priced_orders(), config(), move |streams| {
        streams.set_global_state_restore_listener(shared);
    })
    .unwrap();
    let expected_table = BTreeMap::from([
        ("cup".to_owned(), 5),
        ("ink".to_owned(), 7),
        ("pen".to_owned(), 2),
        ("tea".to_owned(), 6),
    ]);
    assert_eq!(prices_in(&app, "b"), expected_table);
    let restorations: Vec<Restoration> = listener
        .lock()
        .unwrap()
        .restorations
        .iter()
        .filter(|r| r.store == STORE)
        .cloned()
        .collect();
    assert_eq!(restorations.len(), 3, "{restorations:?}");
    for (p, r) in restorations.iter().enumerate() {
        let tp = TopicPartition::new("prices", i32::try_from(p).unwrap());
        let on_partition = app
            .read_partition(
                "prices",
                tp.partition,
                streams_test::app::IsolationLevel::ReadUncommitted,
                StringSerde,
                I64Serde,
            )
            .unwrap()
            .len();
        assert_eq!(
            r,
            &Restoration {
                partition: tp,
                store: STORE.to_owned(),
                start: 0,
                end: i64::try_from(on_partition).unwrap(),
                restored: on_partition,
            }
        );
    }
    assert_eq!(restorations.iter().map(|r| r.restored).sum::<usize>(), 5);
}

/// Kafka refuses to start without the global topic; so does the runtime,
/// naming it.
#[test]
fn a_missing_global_topic_is_refused_at_start() {
    let mut app = StreamsCluster::new();
    app.create_topic("orders", 2).unwrap();
    let err = app.start("a", &priced_orders(), config()).unwrap_err();
    let AppError::Runtime { source, .. } = err else {
        panic!("expected a runtime error, got {err}")
    };
    assert!(
        matches!(&*source, RuntimeError::MissingSourceTopics { topics } if topics == &["prices".to_owned()]),
        "{source}"
    );
}

/// A global record whose value does not decode (a price that is not 8
/// bytes) stops the instance with an error naming the topic, partition and
/// offset, under the default log-and-fail handling.
#[test]
fn a_global_record_that_does_not_decode_stops_the_instance() {
    let mut app = cluster();
    app.start("a", &priced_orders(), config()).unwrap();
    app.run_until_idle().unwrap();
    app.producer("prices", StringSerde, StringSerde)
        .send(&"tea".to_owned(), Some(&"three".to_owned()), 5)
        .unwrap();
    let err = app.run_until_idle().unwrap_err();
    let AppError::Runtime { source, .. } = err else {
        panic!("expected a runtime error, got {err}")
    };
    let message = source.to_string();
    assert!(
        matches!(*source, RuntimeError::GlobalThread { .. }),
        "{message}"
    );
    assert!(
        message.starts_with(
            "the global stream thread failed: cannot deserialize the value of the record at prices-"
        ),
        "{message}"
    );
    assert!(message.contains("offset 0"), "{message}");
    assert_eq!(app.instance("a").unwrap().state(), State::Error);
}

/// The same bad record already on the topic fails the bootstrap: `start`
/// returns the error and the instance is in ERROR, with no stream thread.
#[test]
fn a_bad_global_record_fails_the_bootstrap_at_start() {
    let app = cluster();
    app.producer("prices", StringSerde, StringSerde)
        .send(&"tea".to_owned(), Some(&"three".to_owned()), 5)
        .unwrap();
    let mut streams = streams_core::runtime::KafkaStreams::new(
        &priced_orders(),
        config(),
        Arc::new(streams_broker::clients::api::SimulatedClients::new(
            app.cluster().clone(),
        )),
    )
    .unwrap();
    let err = streams.start().unwrap_err();
    assert!(matches!(err, RuntimeError::GlobalThread { .. }), "{err}");
    assert_eq!(streams.state(), State::Error);
    assert!(streams.threads().is_empty());
}

/// Under exactly_once_v2 the global consumer reads committed data only,
/// as every Kafka Streams consumer does then: an aborted price never
/// reaches the global table, a committed one does; under at_least_once
/// (read_uncommitted) the aborted one is there too, as in Kafka.
#[test]
fn exactly_once_global_tables_hold_committed_prices_only() {
    use streams_broker::{ProducerConfig, ProducerRecord};
    let mut app = cluster();
    let producer = app
        .cluster()
        .producer_with(ProducerConfig::new().transactional_id("prices-writer"));
    producer.init_transactions().unwrap();
    let price = |item: &str, p: i64| {
        ProducerRecord::new("prices", item.to_owned(), p.to_be_bytes().to_vec()).partition(0)
    };
    producer.begin_transaction().unwrap();
    producer.send(price("tea", 3)).unwrap();
    producer.commit_transaction().unwrap();
    producer.begin_transaction().unwrap();
    producer.send(price("tea", 99)).unwrap();
    producer.send(price("pen", 98)).unwrap();
    producer.abort_transaction().unwrap();
    app.start(
        "eos",
        &priced_orders(),
        config().with_property("processing.guarantee", "exactly_once_v2"),
    )
    .unwrap();
    app.start("alos", &priced_orders(), config()).unwrap();
    assert_eq!(
        prices_in(&app, "eos"),
        BTreeMap::from([("tea".to_owned(), 3)])
    );
    assert_eq!(
        prices_in(&app, "alos"),
        BTreeMap::from([("pen".to_owned(), 98), ("tea".to_owned(), 99)])
    );
}
