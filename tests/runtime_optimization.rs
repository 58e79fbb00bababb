//! `reuse.ktable.source.topics` on the `KafkaStreams` runtime: a source
//! table's store creates and writes no changelog, and a task that moves
//! restores it from the table's topic up to the group's committed offset
//! (Kafka's source-topic changelogs), then processes the rest; a standby
//! follows the topic only up to that offset.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use streams_broker::{OffsetSpec, TopicPartition};
use streams_core::runtime::{RecordingRestoreListener, Restoration};
use streams_core::serde::StringSerde;
use streams_core::topology::Topology;
use streams_core::{Materialized, StreamsBuilder, StreamsConfig};
use streams_test::app::StreamsCluster;

type S = String;

const APP: &str = "reuse";
const CHANGELOG: &str = "reuse-users-store-changelog";

/// Clicks joined with the table of users, built with `optimization`.
fn clicks(optimization: &str) -> (Topology, StreamsConfig) {
    let config = StreamsConfig::new(APP)
        .with_property("commit.interval.ms", "1000")
        .with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, optimization);
    let builder = StreamsBuilder::new();
    let users = builder.table_with::<S, S>("users", Materialized::as_("users-store"));
    builder
        .stream::<S, S>("clicks")
        .join(&users, |click, user| format!("{user}:{click}"))
        .to("out");
    (builder.build_with(&config).unwrap(), config)
}

fn app() -> StreamsCluster {
    let app = StreamsCluster::new();
    for topic in ["users", "clicks", "out"] {
        app.create_topic(topic, 2).unwrap();
    }
    app
}

fn send(app: &StreamsCluster, topic: &str, records: &[(&str, &str)], from_ts: i64) {
    let producer = app.producer(topic, StringSerde, StringSerde);
    for (i, (k, v)) in records.iter().enumerate() {
        producer
            .send(&(*k).to_owned(), Some(&(*v).to_owned()), from_ts + i as i64)
            .unwrap();
    }
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

#[test]
fn the_source_topic_is_the_changelog_and_a_moved_task_restores_from_it() {
    let (topology, config) = clicks("reuse.ktable.source.topics");
    let info = topology.topics_info(APP);
    assert_eq!(
        info[0].source_changelog_topics,
        [("users-store".to_owned(), "users".to_owned())]
    );
    assert!(info.iter().all(|i| i.changelog_topics.is_empty()));

    let mut app = app();
    app.start("a", &topology, config.clone()).unwrap();
    let first = [("u1", "ann"), ("u2", "bob"), ("u3", "cid"), ("u4", "dan")];
    send(&app, "users", &first, 0);
    app.run_until_idle().unwrap();
    // Committed: what a processed of the table's topic.
    let committed: Vec<i64> = (0..2).map(|p| end_offset(&app, "users", p)).collect();
    assert_eq!(committed.iter().sum::<i64>(), 4);
    assert!(!app.cluster().topic_names().contains(&CHANGELOG.to_owned()));

    // Two updates a never processes: it dies first.
    send(&app, "users", &[("u1", "anna"), ("u5", "eve")], 10);
    app.crash("a").unwrap();
    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let listener = restores.clone();
    app.start_with("b", &topology, config, |s| {
        s.set_global_state_restore_listener(listener);
    })
    .unwrap();
    app.advance(45_000);
    app.run_until_idle().unwrap();
    send(
        &app,
        "clicks",
        &[
            ("u1", "c1"),
            ("u2", "c2"),
            ("u3", "c3"),
            ("u4", "c4"),
            ("u5", "c5"),
        ],
        100,
    );
    app.run_until_idle().unwrap();

    // b restored each partition of `users` up to a's committed offset and
    // processed the two updates after it.
    let restored = restores.lock().unwrap().restorations.clone();
    let expected: Vec<Restoration> = (0..2)
        .map(|p| Restoration {
            partition: TopicPartition::new("users", p),
            store: "users-store".to_owned(),
            start: 0,
            end: committed[p as usize],
            restored: usize::try_from(committed[p as usize]).unwrap(),
        })
        .collect();
    assert_eq!(restored, expected);
    let out = app.latest_by_key("out", StringSerde, StringSerde).unwrap();
    let want: BTreeMap<S, S> = [
        ("u1", "anna:c1"),
        ("u2", "bob:c2"),
        ("u3", "cid:c3"),
        ("u4", "dan:c4"),
        ("u5", "eve:c5"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(out, want);
    assert!(!app.cluster().topic_names().contains(&CHANGELOG.to_owned()));
}

#[test]
fn without_the_optimization_the_store_has_its_changelog() {
    let (topology, config) = clicks("none");
    let info = topology.topics_info(APP);
    assert!(info[0].source_changelog_topics.is_empty());
    let mut app = app();
    app.start("a", &topology, config).unwrap();
    send(&app, "users", &[("u1", "ann"), ("u2", "bob")], 0);
    app.run_until_idle().unwrap();
    assert!(app.cluster().topic_names().contains(&CHANGELOG.to_owned()));
    let logged: i64 = (0..2).map(|p| end_offset(&app, CHANGELOG, p)).sum();
    assert_eq!(logged, 2);
}

#[test]
fn a_standby_of_a_source_store_stops_at_the_committed_offset() {
    let (topology, config) = clicks("all");
    let config = config.with_property("num.standby.replicas", "1");
    let mut app = app();
    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let listener = restores.clone();
    app.start_with("a", &topology, config.clone(), |s| {
        s.set_global_state_restore_listener(listener);
    })
    .unwrap();
    app.start("b", &topology, config).unwrap();
    let users: Vec<String> = (1..=8).map(|i| format!("u{i}")).collect();
    let rows = |suffix: &str| -> Vec<(String, String)> {
        users
            .iter()
            .map(|u| (u.clone(), format!("{u}{suffix}")))
            .collect()
    };
    let send_rows = |app: &StreamsCluster, rows: &[(String, String)], ts: i64| {
        let pairs: Vec<(&str, &str)> = rows.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        send(app, "users", &pairs, ts);
    };
    send_rows(&app, &rows("-1"), 0);
    app.run_until_idle().unwrap();
    let (a, b) = (app.instance("a").unwrap(), app.instance("b").unwrap());
    let on_b = b.active_tasks();
    assert_eq!(on_b.len(), 1);
    assert_eq!(a.standby_tasks(), on_b);
    let p = i32::try_from(on_b[0].partition).unwrap();
    let committed = end_offset(&app, "users", p);
    assert!(committed > 0, "partition {p} of users is empty");
    // New rows: a's standby sees them on the topic, but b dies before
    // processing them, so the standby must not apply them (b's task
    // restarts from the committed offset and processes them again).
    send_rows(&app, &rows("-2"), 10);
    for _ in 0..3 {
        app.instance_mut("a").unwrap().step().unwrap();
    }
    assert!(end_offset(&app, "users", p) > committed);
    app.crash("b").unwrap();
    app.advance(45_000);
    app.run_until_idle().unwrap();
    // The take-over starts where the standby stopped, at b's committed
    // offset, and restores nothing more.
    let restored = restores.lock().unwrap().restorations.clone();
    let last = restored.last().unwrap();
    assert_eq!(
        last,
        &Restoration {
            partition: TopicPartition::new("users", p),
            store: "users-store".to_owned(),
            start: committed,
            end: committed,
            restored: 0,
        }
    );
    let clicks: Vec<(String, String)> = users.iter().map(|u| (u.clone(), "c".to_owned())).collect();
    let pairs: Vec<(&str, &str)> = clicks
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    send(&app, "clicks", &pairs, 100);
    app.run_until_idle().unwrap();
    let out = app.latest_by_key("out", StringSerde, StringSerde).unwrap();
    let want: BTreeMap<S, S> = users
        .iter()
        .map(|u| (u.clone(), format!("{u}-2:c")))
        .collect();
    assert_eq!(out, want);
}
