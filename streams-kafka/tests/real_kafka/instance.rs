//! An instance of the word count in a process of its own, for the trials
//! that kill one ([`crate::crash`]): this test binary, started again with
//! [`ENV`] set, runs a stepped `KafkaStreams` until it is killed or its
//! stdin closes (its parent is gone), and talks in lines.
//!
//! On stdout: `running <tasks>` when it runs with a new set of tasks,
//! `processed <n> uncommitted=<bool>` when the records its tasks
//! processed change, `committed` after a commit asked for, `closed <ms>
//! ok` or `closed <ms> <error kind> <message>` after a close asked for
//! (then it exits). On stdin: `commit` commits now, `close` closes.
//! `commit.interval.ms` is an hour, so nothing is committed unless asked:
//! what it processes afterwards is uncommitted work when the parent kills
//! it (or closes it while the broker is down).

use std::io::BufRead;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc::{self, TryRecvError};

use streams_core::StreamsConfig;
use streams_core::runtime::{KafkaStreams, State, TaskId};
use streams_kafka::KafkaClients;

/// Set (to a [`Spec`]) in the environment of a child instance.
pub(crate) const ENV: &str = "REAL_KAFKA_INSTANCE";

/// What the child runs, passed in [`ENV`] as tab-separated fields.
pub(crate) struct Spec {
    pub(crate) bootstrap: String,
    pub(crate) application_id: String,
    pub(crate) client_id: String,
    pub(crate) input: String,
    pub(crate) output: String,
    pub(crate) guarantee: String,
    /// `default.api.timeout.ms` of its clients.
    pub(crate) api_timeout_ms: u64,
}

impl Spec {
    pub(crate) fn encode(&self) -> String {
        [
            &self.bootstrap,
            &self.application_id,
            &self.client_id,
            &self.input,
            &self.output,
            &self.guarantee,
            &self.api_timeout_ms.to_string(),
        ]
        .map(String::as_str)
        .join("\t")
    }

    fn decode(spec: &str) -> Option<Spec> {
        let f: Vec<&str> = spec.split('\t').collect();
        let [
            bootstrap,
            application_id,
            client_id,
            input,
            output,
            guarantee,
            api_timeout_ms,
        ] = f[..]
        else {
            return None;
        };
        Some(Spec {
            bootstrap: bootstrap.to_owned(),
            application_id: application_id.to_owned(),
            client_id: client_id.to_owned(),
            input: input.to_owned(),
            output: output.to_owned(),
            guarantee: guarantee.to_owned(),
            api_timeout_ms: api_timeout_ms.parse().ok()?,
        })
    }
}

/// The child's `main`.
pub(crate) fn main(spec: &str) -> ExitCode {
    match run(spec) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("instance: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(spec: &str) -> Result<(), Box<dyn std::error::Error>> {
    let spec = Spec::decode(spec).ok_or("a spec of 7 tab-separated fields")?;
    let (tx, commands) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                return;
            }
        }
        // The parent closed stdin or died: drop the sender.
    });
    let topology = crate::streams::word_count(&spec.input, &spec.output)?;
    let config = StreamsConfig::new(&spec.application_id)
        .with_property("client.id", &spec.client_id)
        .with_property("processing.guarantee", &spec.guarantee)
        .with_property("commit.interval.ms", "3600000")
        .with_property("session.timeout.ms", "6000")
        .with_property("statestore.cache.max.bytes", "0");
    let clients = Arc::new(
        KafkaClients::new(&spec.bootstrap)
            .with("default.api.timeout.ms", spec.api_timeout_ms.to_string()),
    );
    let mut app = KafkaStreams::new(&topology, config, clients)?;
    app.start()?;
    let mut tasks: Vec<TaskId> = Vec::new();
    let mut processed = 0;
    loop {
        app.step()?;
        let now = app.active_tasks();
        if app.state() == State::Running && now != tasks {
            let names: Vec<String> = now.iter().map(ToString::to_string).collect();
            println!("running {}", names.join(","));
            tasks = now;
        }
        let n: u64 = tasks
            .iter()
            .filter_map(|&t| app.task_metrics(t))
            .map(|m| m.processed_records)
            .sum();
        if n != processed {
            processed = n;
            println!("processed {n} uncommitted={}", app.has_uncommitted());
        }
        match commands.try_recv() {
            Ok(command) if command == "commit" => {
                app.commit()?;
                println!("committed");
            }
            Ok(command) if command == "close" => {
                let started = std::time::Instant::now();
                let closed = app.close();
                let ms = started.elapsed().as_millis();
                match closed {
                    Ok(()) => println!("closed {ms} ok"),
                    Err(e) => println!("closed {ms} {} {e}", kind(&e)),
                }
                return Ok(());
            }
            Ok(other) => return Err(format!("unknown command {other:?}").into()),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                app.close()?;
                return Ok(());
            }
        }
    }
}

/// The client error's kind in a runtime error, for the parent to match.
fn kind(e: &streams_core::runtime::RuntimeError) -> &'static str {
    use streams_clients::ClientError;
    match e {
        streams_core::runtime::RuntimeError::Client { source, .. } => match **source {
            ClientError::Unreachable { .. } => "unreachable",
            ClientError::Timeout { .. } => "timeout",
            _ => "client",
        },
        _ => "runtime",
    }
}
