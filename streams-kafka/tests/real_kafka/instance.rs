//! An instance of the word count in a process of its own, for the trials
//! that kill one ([`crate::crash`]): this test binary, started again with
//! [`ENV`] set, runs a stepped `KafkaStreams` until it is killed or its
//! stdin closes (its parent is gone), and talks in lines.
//!
//! On stdout: `running <tasks>` when it runs with a new set of tasks,
//! `processed <n> uncommitted=<bool>` when the records its tasks
//! processed change, `committed` after a commit asked for. On stdin:
//! `commit` commits now. `commit.interval.ms` is an hour, so nothing is
//! committed unless asked: what it processes afterwards is uncommitted
//! work when the parent kills it.

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
    let spec = Spec::decode(spec).ok_or("a spec of 6 tab-separated fields")?;
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
    let clients = Arc::new(KafkaClients::new(&spec.bootstrap));
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
            Ok(other) => return Err(format!("unknown command {other:?}").into()),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => {
                app.close()?;
                return Ok(());
            }
        }
    }
}
