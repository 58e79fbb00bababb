//! The real-broker benchmark's driver (`compat/realbench/run` runs it in a
//! release build): ours and Kafka Streams (`compat/streams-app`) on the
//! same broker, the same input, the same topology, timed end to end.
//!
//! ```text
//! realbench produce BOOTSTRAP INPUT RECORDS PARTITIONS
//! realbench run BOOTSTRAP ours|java TOPOLOGY GUARANTEE INPUT RECORDS PARTITIONS COMMIT_MS [CLASSPATH]
//! realbench app BOOTSTRAP APPLICATION_ID TOPOLOGY INPUT OUTPUT GUARANTEE COMMIT_MS
//! ```
//!
//! `produce` creates INPUT and writes RECORDS records (key `i`, value three
//! words `w<n>` of a thousand, from a fixed generator). `run` creates a
//! fresh output topic, starts the application in a process of its own
//! (ours: `realbench app`, running until its stdin says `close`; Kafka
//! Streams: `compat.app.StreamsApp` in a JVM) under a fresh application
//! id, and reads the output until it is complete: for
//! `stateless` (filter out the values ending in 7, upper-case the rest)
//! every record that passes the filter, for `wordcount` the latest count of
//! every word summing to the input's words (each word at its final count).
//! It prints one line, `RESULT <impl> <topology> <guarantee> <seconds>
//! <records/s> <seconds to the first output record> <application CPU
//! seconds> <broker CPU seconds>`, the time from just before the start
//! (process start-up included) to the last output record, and the CPU time
//! (user + system, `/proc/PID/stat`) that the application's process and,
//! when `BROKER_PID` names it, the broker spent meanwhile.
//!
//! For hunting a stall (issue 17), in the environment: `REALBENCH_RDKAFKA`
//! (`name=value,...`, librdkafka settings of ours and of the reader, such
//! as `debug=cgrp,fetch`), `REALBENCH_LOG=FILE` (their log lines: ours to
//! FILE, the reader's to FILE.reader), `REALBENCH_TIMEOUT_S` (how long
//! `run` waits for the complete output, 180 s), `REALBENCH_THREADS` (our
//! stream threads, 1).

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use streams_clients::{ClientConfig, ClientSupplier, NewTopic, ProducerRecord, TopicPartition};
use streams_core::dsl::{Materialized, Produced};
use streams_core::runtime::{State, ThreadedKafkaStreams};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig, Topology};
use streams_kafka::KafkaClients;

type Error = Box<dyn std::error::Error>;

/// The value of record `i`: three words of a thousand.
fn line(i: u64) -> String {
    let word = |n: u64| {
        // splitmix64: a fixed, well-spread sequence.
        let mut z = i
            .wrapping_mul(3)
            .wrapping_add(n)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % 1000
    };
    format!("w{} w{} w{}", word(0), word(1), word(2))
}

/// The stateless topology: filter out the values ending in 7, upper-case
/// the rest (as `compat.app.StreamsApp`'s `stateless`).
fn stateless(input: &str, output: &str) -> streams_core::Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(input)
        .filter(|_, value| !value.ends_with('7'))
        .map_values(|value: &String| value.to_uppercase())
        .to(output);
    builder.build()
}

/// Kafka's `WordCountDemo` (as `compat.app.StreamsApp`'s `wordcount`).
fn word_count(input: &str, output: &str) -> streams_core::Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(input)
        .flat_map_values(|line: &String| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts-store"))
        .to_stream()
        .to_with(output, Produced::with(StringSerde, I64Serde));
    builder.build()
}

fn produce(bootstrap: &str, input: &str, records: u64, partitions: i32) -> Result<(), Error> {
    let clients = KafkaClients::new(bootstrap)
        .with("linger.ms", "20")
        .with("batch.size", "1000000");
    let mut admin = clients.admin(&ClientConfig::new())?;
    admin.create_topic(&NewTopic::new(input, partitions))?;
    let mut producer = clients.producer(&ClientConfig::new())?;
    let started = Instant::now();
    for i in 0..records {
        producer.send(ProducerRecord::new(input, i.to_string(), line(i)))?;
        if i % 100_000 == 99_999 {
            producer.flush()?;
        }
    }
    producer.flush()?;
    eprintln!(
        "realbench: {records} records produced to {input} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// What the output must hold once complete.
enum Expected {
    /// This many records.
    Records(u64),
    /// Latest counts summing to this many words.
    Words(i64),
}

fn expected(topology: &str, records: u64) -> Result<Expected, Error> {
    match topology {
        "stateless" => Ok(Expected::Records(
            (0..records).filter(|&i| !line(i).ends_with('7')).count() as u64,
        )),
        "wordcount" => Ok(Expected::Words(i64::try_from(records)? * 3)),
        other => Err(format!("unknown topology {other}").into()),
    }
}

/// CPU seconds (user + system) that process `pid` has spent so far.
fn cpu_seconds(pid: u32) -> Result<f64, Error> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The fields after the command (in parentheses, maybe with spaces).
    let rest = stat.rsplit_once(')').ok_or("no ) in /proc/PID/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of the whole line, 12 and 13 here.
    let ticks: f64 = fields.get(11).ok_or("short stat")?.parse::<f64>()?
        + fields.get(12).ok_or("short stat")?.parse::<f64>()?;
    let per_second = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(100.0);
    Ok(ticks / per_second)
}

/// Clients of `bootstrap` with the librdkafka settings of
/// `REALBENCH_RDKAFKA` (`name=value,...`; `debug=cgrp,fetch` is one
/// setting), for experiments.
fn clients_with_env(bootstrap: &str) -> KafkaClients {
    let mut clients = KafkaClients::new(bootstrap);
    if let Ok(settings) = std::env::var("REALBENCH_RDKAFKA") {
        // A piece without `=` continues the value before it, as in
        // `debug=cgrp,fetch`.
        let mut pairs: Vec<(String, String)> = Vec::new();
        for piece in settings.split(',').filter(|s| !s.is_empty()) {
            match (piece.split_once('='), pairs.last_mut()) {
                (Some((name, value)), _) => pairs.push((name.to_owned(), value.to_owned())),
                (None, Some((_, value))) => {
                    value.push(',');
                    value.push_str(piece);
                }
                (None, None) => {}
            }
        }
        for (name, value) in &pairs {
            clients = clients.with(name.as_str(), value.as_str());
        }
    }
    clients
}

/// Writes every `log` record (librdkafka's lines among them, at the
/// level of its `debug` setting) to the file named by `REALBENCH_LOG`, each
/// with the seconds since the start and its thread.
struct FileLog {
    file: std::sync::Mutex<std::fs::File>,
    started: Instant,
}

impl log::Log for FileLog {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        if let Ok(mut file) = self.file.lock() {
            let _ = writeln!(
                file,
                "{:>9.3} {:?} {} {}",
                self.started.elapsed().as_secs_f64(),
                std::thread::current().name().unwrap_or("-"),
                record.level(),
                record.args()
            );
        }
    }

    fn flush(&self) {}
}

fn log_to_file(suffix: &str) -> Result<(), Error> {
    if let Ok(path) = std::env::var("REALBENCH_LOG") {
        let path = format!("{path}{suffix}");
        let file = std::fs::File::create(path)?;
        let logger: &'static FileLog = Box::leak(Box::new(FileLog {
            file: std::sync::Mutex::new(file),
            started: Instant::now(),
        }));
        log::set_logger(logger).map_err(|e| e.to_string())?;
        log::set_max_level(log::LevelFilter::Debug);
    }
    Ok(())
}

/// Ours as Kafka Streams' `StreamsApp` runs: until stdin says `close`.
fn app(
    bootstrap: &str,
    app_id: &str,
    topology: &str,
    input: &str,
    output: &str,
    guarantee: &str,
    commit_ms: &str,
) -> Result<(), Error> {
    if topology != "stateless" && topology != "wordcount" {
        return Err(format!("unknown topology {topology}").into());
    }
    log_to_file("")?;
    let (input, output, topology) = (input.to_owned(), output.to_owned(), topology.to_owned());
    let config = StreamsConfig::new(app_id)
        .with_property("client.id", "ours")
        .with_property("processing.guarantee", guarantee)
        .with_property("commit.interval.ms", commit_ms)
        // REALBENCH_THREADS: stream threads (1), for experiments.
        .with_property(
            "num.stream.threads",
            std::env::var("REALBENCH_THREADS").unwrap_or_else(|_| "1".to_owned()),
        );
    let app = ThreadedKafkaStreams::new(
        move || match topology.as_str() {
            "stateless" => stateless(&input, &output),
            _ => word_count(&input, &output),
        },
        config,
        Arc::new(clients_with_env(bootstrap)),
    )?;
    app.start()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.map_or(true, |l| l.trim() == "close") {
                break;
            }
        }
        let _ = tx.send(());
    });
    while rx.try_recv().is_err() {
        if app.wait_for(Duration::from_millis(200), |s| s == State::Error) == State::Error {
            return Err(format!("ours failed: {:?}", app.error()).into());
        }
    }
    app.close()?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run(
    bootstrap: &str,
    which: &str,
    topology: &str,
    guarantee: &str,
    input: &str,
    records: u64,
    partitions: i32,
    commit_ms: &str,
    classpath: Option<&str>,
) -> Result<(), Error> {
    let expected = expected(topology, records)?;
    let tag = format!(
        "{which}-{topology}-{guarantee}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis()
    );
    let (app_id, output) = (format!("realbench-{tag}"), format!("realbench-out-{tag}"));
    // The reader's log (REALBENCH_LOG), with the application's librdkafka settings.
    log_to_file(".reader")?;
    let clients = Arc::new(clients_with_env(bootstrap));
    clients
        .admin(&ClientConfig::new())?
        .create_topic(&NewTopic::new(&output, partitions))?;
    let isolation = if guarantee == "at_least_once" {
        "read_uncommitted"
    } else {
        "read_committed"
    };
    let mut reader = clients.consumer(
        &ClientConfig::new()
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", isolation)
            .set("max.poll.records", "10000"),
    )?;
    let tps: Vec<TopicPartition> = (0..partitions)
        .map(|p| TopicPartition::new(&output, p))
        .collect();
    reader.assign(&tps)?;

    let broker = std::env::var("BROKER_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok());
    let broker_before = broker.map(cpu_seconds).transpose()?;
    let started = Instant::now();
    let mut command = match which {
        "ours" => {
            let mut command = Command::new(std::env::current_exe()?);
            command.args([
                "app", bootstrap, &app_id, topology, input, &output, guarantee, commit_ms,
            ]);
            command
        }
        "java" => {
            let classpath = classpath.ok_or("java needs the classpath")?;
            let state_dir = std::env::temp_dir().join(&app_id);
            let mut command = Command::new("java");
            command
                .args(["-Xms512m", "-Xmx1g", "-cp", classpath])
                .arg("compat.app.StreamsApp")
                .args([
                    bootstrap, &app_id, "java", topology, input, &output, guarantee, commit_ms, "1",
                ])
                .arg(&state_dir);
            command
        }
        other => return Err(format!("unknown implementation {other}").into()),
    };
    let mut app = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    let pid = app.id();
    let mut first = None;
    let mut seen = 0u64;
    let mut counts: HashMap<Vec<u8>, i64> = HashMap::new();
    let mut sum = 0i64;
    // REALBENCH_TIMEOUT_S: how long to wait for the complete output (180 s).
    let limit = std::env::var("REALBENCH_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(180);
    let deadline = started + Duration::from_secs(limit);
    loop {
        let done = match expected {
            Expected::Records(n) => seen >= n,
            Expected::Words(n) => sum >= n,
        };
        if done {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{tag}: incomplete after {limit} s ({seen} records)").into());
        }
        if let Some(status) = app.try_wait()? {
            return Err(format!("{which} exited: {status}").into());
        }
        let polled = reader.poll()?;
        if !polled.records.is_empty() && first.is_none() {
            first = Some(started.elapsed());
        }
        for r in polled.records {
            seen += 1;
            if let Expected::Words(_) = expected {
                let bytes: [u8; 8] = r
                    .value
                    .as_deref()
                    .unwrap_or_default()
                    .try_into()
                    .map_err(|_| "a count is not 8 bytes")?;
                let count = i64::from_be_bytes(bytes);
                let key = r.key.map(|k| k.to_vec()).unwrap_or_default();
                let before = counts.insert(key, count).unwrap_or(0);
                sum += count - before;
            }
        }
    }
    let took = started.elapsed();
    let cpu = cpu_seconds(pid)?;
    let broker_cpu = match (broker, broker_before) {
        (Some(pid), Some(before)) => cpu_seconds(pid)? - before,
        _ => f64::NAN,
    };
    if let Some(stdin) = app.stdin.as_mut() {
        writeln!(stdin, "close")?;
    }
    app.wait()?;
    let rate = records as f64 / took.as_secs_f64();
    println!(
        "RESULT {which} {topology} {guarantee} {:.2} {rate:.0} {:.2} {cpu:.2} {broker_cpu:.2}",
        took.as_secs_f64(),
        first.unwrap_or_default().as_secs_f64()
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    match a.as_slice() {
        ["produce", bootstrap, input, records, partitions] => {
            produce(bootstrap, input, records.parse()?, partitions.parse()?)
        }
        ["app", bootstrap, app_id, topology, input, output, guarantee, commit_ms] => {
            app(bootstrap, app_id, topology, input, output, guarantee, commit_ms)
        }
        [
            "run",
            bootstrap,
            which,
            topology,
            guarantee,
            input,
            records,
            partitions,
            commit_ms,
            rest @ ..,
        ] => run(
            bootstrap,
            which,
            topology,
            guarantee,
            input,
            records.parse()?,
            partitions.parse()?,
            commit_ms,
            rest.first().copied(),
        ),
        _ => Err("usage: realbench produce BOOTSTRAP INPUT RECORDS PARTITIONS | realbench app BOOTSTRAP APPLICATION_ID TOPOLOGY INPUT OUTPUT GUARANTEE COMMIT_MS | realbench run BOOTSTRAP ours|java TOPOLOGY GUARANTEE INPUT RECORDS PARTITIONS COMMIT_MS [CLASSPATH]".into()),
    }
}
