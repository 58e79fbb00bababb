//! `ThreadedKafkaStreams` on the simulated cluster: stream threads that
//! are OS threads, each with a topology of its own from the supplier. The
//! interleaving is the operating system's, so these tests check only what
//! every interleaving gives: the final counts, each thread with tasks, the
//! states, a failing thread taking the instance to ERROR, a close that
//! joins. The same runtime runs on the real broker in
//! `streams-kafka/tests/real_kafka`.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use streams_broker::clients::api::SimulatedClients;
use streams_core::dsl::Produced;
use streams_core::runtime::{RuntimeError, State, TaskId, ThreadedKafkaStreams};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::topology::Topology;
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::app::StreamsCluster;

use crate::runtime::{COUNTS, WORDS, app_with_topics, model, send_lines};

/// The word count of `runtime`, as a supplier's result.
fn word_count() -> streams_core::Result<Topology> {
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
    builder.build()
}

fn threaded(
    app: &StreamsCluster,
    supplier: impl Fn() -> streams_core::Result<Topology> + Send + Sync + 'static,
    guarantee: &str,
) -> ThreadedKafkaStreams {
    let config = StreamsConfig::new("word-count")
        .with_property("client.id", "a")
        .with_property("num.stream.threads", "2")
        .with_property("processing.guarantee", guarantee)
        .with_property("commit.interval.ms", "100");
    let clients = Arc::new(SimulatedClients::new(app.cluster().clone()));
    ThreadedKafkaStreams::new(supplier, config, clients).unwrap()
}

/// Moves the mock clock (so that commits come due) until `done` or 30 s.
fn until(app: &StreamsCluster, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not after 30 s: {what}"
        );
        app.cluster().advance_ms(50);
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn two_threads_count_words(guarantee: &str) {
    let app = app_with_topics(4);
    let lines = [
        "kafka streams in rust",
        "streams of records",
        "kafka kafka",
        "threads of their own",
        "one topology per thread",
    ];
    let expected = model(&lines);
    let streams = threaded(&app, word_count, guarantee);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    streams.set_state_listener(move |new, old| log.lock().unwrap().push((old, new)));
    streams.start().unwrap();
    until(&app, "both threads running with tasks", || {
        streams.state() == State::Running
            && streams.threads().iter().all(|t| !t.active_tasks.is_empty())
            && streams.active_tasks().len() == 8
    });
    let threads = streams.threads();
    assert_eq!(
        threads
            .iter()
            .map(|t| t.thread_name.as_str())
            .collect::<Vec<_>>(),
        ["a-StreamThread-1", "a-StreamThread-2"]
    );
    let all: Vec<TaskId> = (0..2)
        .flat_map(|s| (0..4).map(move |p| TaskId::new(s, p)))
        .collect();
    assert_eq!(streams.active_tasks(), all, "every task once: {threads:?}");

    send_lines(&app, &lines, 0);
    until(&app, "the model's counts", || {
        app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap() == expected
    });
    streams.close().unwrap();
    assert_eq!(streams.state(), State::NotRunning);
    assert!(streams.error().is_none());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first(), Some(&(State::Created, State::Rebalancing)));
    assert_eq!(
        &seen[seen.len() - 2..],
        [
            (State::Running, State::PendingShutdown),
            (State::PendingShutdown, State::NotRunning)
        ]
    );
    // The close committed: a new instance finds nothing left to count.
    let counts: BTreeMap<String, i64> = app.latest_by_key(COUNTS, StringSerde, I64Serde).unwrap();
    assert_eq!(counts, expected);
}

#[test]
fn two_threads_count_words_at_least_once() {
    two_threads_count_words("at_least_once");
}

#[test]
fn two_threads_count_words_exactly_once() {
    two_threads_count_words("exactly_once_v2");
}

/// A record that fails with `LogAndFail` (the default) kills its thread;
/// the other closes, the instance goes to ERROR and says why.
#[test]
fn a_failing_thread_takes_the_instance_to_error() {
    let app = app_with_topics(2);
    let supplier = || {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>(WORDS)
            .try_map_values(|line: &String| {
                if line == "poison" {
                    Err("a poison pill")
                } else {
                    Ok(line.clone())
                }
            })
            .to(COUNTS);
        builder.build()
    };
    let streams = threaded(&app, supplier, "at_least_once");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    streams.set_state_listener(move |new, _| log.lock().unwrap().push(new));
    streams.start().unwrap();
    send_lines(&app, &["fine", "poison"], 0);
    until(&app, "ERROR", || streams.state() == State::Error);
    let error = streams.error().unwrap();
    assert!(matches!(*error, RuntimeError::Task { .. }), "{error}");
    assert!(error.to_string().contains("a poison pill"), "{error}");
    assert!(
        seen.lock()
            .unwrap()
            .ends_with(&[State::PendingError, State::Error]),
        "{seen:?}"
    );
    streams.close().unwrap();
    assert_eq!(streams.state(), State::NotRunning);
}

/// Every call of the supplier must build the same topology.
#[test]
fn a_supplier_building_another_topology_is_refused() {
    let app = app_with_topics(2);
    let calls = AtomicUsize::new(0);
    let supplier = move || {
        let builder = StreamsBuilder::new();
        let words = builder.stream::<String, String>(WORDS);
        if calls.fetch_add(1, Ordering::SeqCst) >= 2 {
            words.filter(|_, _| true).to(COUNTS);
        } else {
            words.to(COUNTS);
        }
        builder.build()
    };
    let streams = threaded(&app, supplier, "at_least_once");
    streams.start().unwrap();
    until(&app, "ERROR", || streams.state() == State::Error);
    let error = streams.error().unwrap();
    assert!(
        matches!(*error, RuntimeError::TopologySupplierMismatch { .. }),
        "{error}"
    );
}

/// A set-up error of `start` is returned and leaves the instance in ERROR.
#[test]
fn start_without_source_topics_is_an_error() {
    let app = StreamsCluster::new();
    let streams = threaded(&app, word_count, "at_least_once");
    let err = streams.start().unwrap_err();
    assert!(
        matches!(err, RuntimeError::MissingSourceTopics { .. }),
        "{err}"
    );
    assert_eq!(streams.state(), State::Error);
    assert!(matches!(
        streams.start(),
        Err(RuntimeError::IllegalState { .. })
    ));
    streams.close().unwrap();
    assert_eq!(streams.state(), State::NotRunning);
}
