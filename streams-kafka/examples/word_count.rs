//! The production word count shown in README.md ("Going to production"), verbatim (checked by `readme_rust_blocks_are_tested`).
use std::sync::{Arc, mpsc};
use std::time::Duration;

use streams_core::dsl::{Materialized, Produced};
use streams_core::runtime::{State, ThreadedKafkaStreams};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig, Topology};
use streams_kafka::KafkaClients;

/// The topology, the same as in its tests; called once per stream thread.
fn topology() -> streams_core::Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("word-counts", Produced::with(StringSerde, I64Serde));
    builder.build()
}

/// `cargo run -p streams-kafka --example word_count -- HOST:PORT`; the
/// topics `lines` and `word-counts` must exist. Enter stops it.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bootstrap = std::env::args().nth(1).unwrap_or("127.0.0.1:9092".into());
    let config = StreamsConfig::new("word-count")
        .with_property("client.id", "word-count-1") // one per instance
        .with_property("num.stream.threads", "2")
        .with_property("processing.guarantee", "exactly_once_v2");
    let mut clients = KafkaClients::new(bootstrap);
    if let Ok(password) = std::env::var("KAFKA_SASL_PASSWORD") {
        clients = clients
            .with("security.protocol", "SASL_PLAINTEXT")
            .with("sasl.mechanism", "PLAIN")
            .with("sasl.username", std::env::var("KAFKA_SASL_USERNAME")?)
            .with("sasl.password", password);
    }
    let app = ThreadedKafkaStreams::new(topology, config, Arc::new(clients))?;
    app.set_state_listener(|new, old| eprintln!("word-count: {old} -> {new}"));
    app.start()?;

    let (enter, stop) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_line(&mut String::new());
        let _ = enter.send(());
    });
    while stop.try_recv().is_err() && app.state() != State::Error {
        app.wait_for(Duration::from_secs(1), |s| s == State::Error);
    }
    app.close()?; // commits and joins the stream threads
    match app.error() {
        Some(failure) => Err(failure.to_string().into()),
        None => Ok(()),
    }
}
