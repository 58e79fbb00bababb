//! SASL/PLAIN on the real broker (issue 17, security): the broker of the
//! run has a `SASL_PLAINTEXT` listener (`scripts/kafka-up --sasl`) with a
//! user whose password is made up by this run. With the right password a
//! word count runs through it and gives the driver's counts; with a wrong
//! one the application fails to start with a typed
//! `ClientError::Authentication` within seconds and is in state ERROR, and
//! a consumer's poll and a transactional producer's
//! `init_transactions` fail the same way. Neither password appears in a
//! `Debug` or `Display` of the clients, the application or the errors,
//! nor in any log line of librdkafka (which this binary captures, with
//! librdkafka's `security`, `broker` and `conf` debug logs on for the
//! refused clients).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::{ClientConfig, ClientError, ClientSupplier, TopicPartition};
use streams_core::runtime::{RuntimeError, State, ThreadedKafkaStreams};
use streams_kafka::KafkaClients;

use crate::Env;
use crate::streams::{LINES, WordCount, driver_counts_of, read_counts, word_count};

/// The SASL listener of the run's broker and its user.
pub(crate) struct Sasl {
    pub(crate) bootstrap: String,
    pub(crate) user: String,
    pub(crate) password: String,
}

/// Every log line of the process (the `log` crate's), for the check that
/// no secret is in one.
static LINES_LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        if let Ok(mut lines) = LINES_LOGGED.lock() {
            lines.push(format!(
                "{} {}: {}",
                record.level(),
                record.target(),
                record.args()
            ));
        }
    }

    fn flush(&self) {}
}

/// Captures every log line of the process from now on.
pub(crate) fn capture_logs() {
    static CAPTURE: Capture = Capture;
    if log::set_logger(&CAPTURE).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}

fn clients(sasl: &Sasl, password: &str) -> KafkaClients {
    KafkaClients::new(&sasl.bootstrap)
        .with("security.protocol", "SASL_PLAINTEXT")
        .with("sasl.mechanism", "PLAIN")
        .with("sasl.username", &sasl.user)
        .with("sasl.password", password)
}

/// The trial: see the [module docs](self).
pub(crate) fn sasl_plain(env: &Env) -> Result<(), Failed> {
    let Some(sasl) = &env.sasl else {
        println!(
            "real_kafka: security: skipped (KAFKA_BOOTSTRAP names a broker without the run's SASL listener)"
        );
        return Ok(());
    };
    let wrong = format!("{}-wrong", sasl.password);

    // The right password: a word count through the SASL listener.
    let env_sasl = env.on(&sasl.bootstrap);
    let right = Arc::new(clients(sasl, &sasl.password));
    let wc = WordCount::with_clients(&env_sasl, "sasl", &LINES, right.clone())?;
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let app = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        wc.config(&env.name("sasl"), "a"),
        right.clone(),
    )?;
    app.start()?;
    let expected = driver_counts_of(&LINES)?;
    let mut reader = wc.reader("read_uncommitted")?;
    let mut counts = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while counts != expected {
        if Instant::now() > deadline {
            return Err(format!(
                "SASL word count: after 60 s (state {}, error {:?}): {counts:?}",
                app.state(),
                app.error()
            )
            .into());
        }
        read_counts(reader.as_mut(), &mut counts)?;
    }
    let shown_app = format!("{app:?} {right:?}");
    app.close()?;

    // A wrong password: typed errors, ERROR, in bounded time.
    let refused = Arc::new(
        clients(sasl, &wrong)
            .with("debug", "security,broker,conf")
            .with("default.api.timeout.ms", "10000"),
    );
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let denied = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        wc.config(&env.name("sasl-denied"), "d"),
        refused.clone(),
    )?;
    let asked = Instant::now();
    let err = denied
        .start()
        .err()
        .ok_or("an application started with a wrong password")?;
    let refused_in = asked.elapsed();
    assert!(
        matches!(&err, RuntimeError::Client { source, .. } if matches!(**source, ClientError::Authentication { .. })),
        "{err}"
    );
    assert!(refused_in < Duration::from_secs(8), "{refused_in:?}: {err}");
    assert_eq!(denied.state(), State::Error);

    let mut consumer = refused.consumer(
        &ClientConfig::new()
            .set("group.id", env.name("sasl-denied"))
            .set("client.id", "denied-consumer"),
    )?;
    consumer.assign(&[TopicPartition::new(&wc.input, 0)])?;
    let polled = (0..100)
        .find_map(|_| consumer.poll().err())
        .ok_or("100 polls with a wrong password and no error")?;
    assert!(
        matches!(polled, ClientError::Authentication { .. }),
        "{polled}"
    );
    let mut producer = refused.producer(
        &ClientConfig::new()
            .set("transactional.id", env.name("sasl-denied-tx"))
            .set("client.id", "denied-producer"),
    )?;
    let asked = Instant::now();
    let init = producer
        .init_transactions()
        .err()
        .ok_or("init_transactions with a wrong password")?;
    assert!(matches!(init, ClientError::Authentication { .. }), "{init}");
    assert!(
        asked.elapsed() < Duration::from_secs(8),
        "{:?}",
        asked.elapsed()
    );

    // No secret anywhere.
    let shown = [
        shown_app,
        format!("{denied:?} {refused:?} {consumer:?} {producer:?}"),
        format!("{err} {err:?} {polled} {polled:?} {init} {init:?}"),
        format!("{:?}", denied.error()),
    ];
    for text in &shown {
        for secret in [&sasl.password, &wrong] {
            assert!(!text.contains(secret.as_str()), "a password in: {text}");
        }
    }
    let logged = LINES_LOGGED.lock().map_err(|_| "poisoned")?.clone();
    for line in &logged {
        for secret in [&sasl.password, &wrong] {
            assert!(
                !line.contains(secret.as_str()),
                "a password in the log line: {line}"
            );
        }
    }
    let about_it = logged
        .iter()
        .filter(|l| l.contains("SASL") || l.to_ascii_lowercase().contains("authentication"))
        .count();
    assert!(
        about_it > 0,
        "no log line about the authentication: {logged:?}"
    );
    eprintln!(
        "real_kafka: SASL/PLAIN: the driver's counts with the right password; a wrong one refused in {:.1} s ({err}); {} log lines, {about_it} about SASL, none with a password",
        refused_in.as_secs_f64(),
        logged.len()
    );
    Ok(())
}
