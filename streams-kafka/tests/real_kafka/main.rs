//! The client API over rdkafka, end to end against a real Kafka 4.4.0
//! broker (issue 17): the client traits ([`clients`]), the
//! `KafkaStreams` runtime on `KafkaClients` ([`streams`]), an instance
//! killed in a child process ([`crash`]; the child is this binary again,
//! see [`instance`]), a broker stopped and started again mid-run
//! ([`outage`], on a spare broker started alongside the first), and the
//! start-up stall of a consumer whose committed offsets cannot be read
//! ([`stall`], on librdkafka's mock cluster, with injected errors).
//!
//! The binary starts ONE broker for the whole run (`scripts/kafka-up
//! --parent <this pid>`) and stops it at the end (`scripts/kafka-down`),
//! also when a trial fails. Every trial uses topics and groups of its own
//! (named after the run), so trials run in parallel. Without `java` or
//! `mvn` it says so in one line and passes, except under `CI`, where it
//! fails. `KAFKA_BOOTSTRAP=ADDR` uses a broker already running.
//!
//! ```sh
//! cargo test -p streams-kafka --test real_kafka
//! cargo test -p streams-kafka --test real_kafka -- word_count
//! ```
#![allow(clippy::unwrap_used)]

mod broker;
mod clients;
mod crash;
mod instance;
mod interop;
mod outage;
mod security;
mod stall;
mod streams;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Instant;

use libtest_mimic::{Arguments, Failed, Trial};

type SpareBroker = thread::JoinHandle<Result<broker::Broker, String>>;

/// What every trial gets: the broker's address and a prefix for names.
pub(crate) struct Env {
    pub(crate) bootstrap: String,
    pub(crate) run: String,
    /// The broker's SASL_PLAINTEXT listener and its user, if it has one.
    pub(crate) sasl: Option<security::Sasl>,
    /// A second broker, started with the first, for the trial that stops
    /// and restarts its broker (`None` without Java and Maven).
    spare: Mutex<Option<SpareBroker>>,
}

impl Env {
    /// A topic or group name of this run.
    pub(crate) fn name(&self, what: &str) -> String {
        format!("{}-{what}", self.run)
    }

    /// The same run's names on the broker at `bootstrap`.
    pub(crate) fn on(&self, bootstrap: &str) -> Env {
        Env {
            bootstrap: bootstrap.to_owned(),
            run: self.run.clone(),
            sasl: None,
            spare: Mutex::new(None),
        }
    }

    /// The spare broker, once it is up (taken once); `None` when this run
    /// has none.
    pub(crate) fn spare_broker(&self) -> Result<Option<broker::Broker>, Failed> {
        let handle = self.spare.lock().map_err(|_| "poisoned")?.take();
        match handle {
            None => Ok(None),
            Some(h) => Ok(Some(
                h.join()
                    .map_err(|_| "the spare broker's start panicked")??,
            )),
        }
    }
}

type TrialFn = fn(&Env) -> Result<(), Failed>;

/// The trials, in their order.
const TRIALS: [(&str, TrialFn); 21] = [
    (
        "clients::produce_flush_offsets",
        clients::produce_flush_offsets,
    ),
    (
        "clients::consume_commit_committed",
        clients::consume_commit_committed,
    ),
    (
        "clients::transactions_read_committed",
        clients::transactions_read_committed,
    ),
    (
        "clients::send_offsets_to_transaction",
        clients::send_offsets_to_transaction,
    ),
    (
        "clients::zombie_producer_is_fenced",
        clients::zombie_producer_is_fenced,
    ),
    (
        "clients::admin_topics_and_delete_records",
        clients::admin_topics_and_delete_records,
    ),
    (
        "streams::word_count_one_instance",
        streams::word_count_one_instance,
    ),
    (
        "streams::word_count_exactly_once",
        streams::word_count_exactly_once,
    ),
    (
        "streams::word_count_two_instances",
        streams::word_count_two_instances,
    ),
    (
        "streams::rebalance_restores_moved_state",
        streams::rebalance_restores_moved_state,
    ),
    (
        "streams::word_count_two_threads",
        streams::word_count_two_threads,
    ),
    (
        "crash::killed_instance_exactly_once",
        crash::killed_instance_exactly_once,
    ),
    (
        "crash::killed_instance_at_least_once",
        crash::killed_instance_at_least_once,
    ),
    ("outage::broker_down_and_back", outage::broker_down_and_back),
    (
        "stall::offset_fetch_fails_at_assignment",
        stall::offset_fetch_fails_at_assignment,
    ),
    (
        "stall::unjoined_consumer_needs_no_coordinator",
        stall::unjoined_consumer_needs_no_coordinator,
    ),
    (
        "stall::unreadable_offsets_fail_the_poll_in_bounded_time",
        stall::unreadable_offsets_fail_the_poll_in_bounded_time,
    ),
    (
        "stall::commit_retries_a_loading_coordinator",
        stall::commit_retries_a_loading_coordinator,
    ),
    ("security::sasl_plain", security::sasl_plain),
    (
        "interop::word_count_both_ways",
        interop::word_count_both_ways,
    ),
    (
        "interop::internal_topic_configs",
        interop::internal_topic_configs,
    ),
];

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate lives in the workspace")
        .to_path_buf()
}

/// `CI` is set (to anything but empty, `0` or `false`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// Whether libtest's filter rules would run a trial of this name.
fn selected(args: &Arguments, name: &str) -> bool {
    if args.ignored {
        return false;
    }
    let matches = |pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    args.filter.as_deref().is_none_or(matches) && !args.skip.iter().any(|s| matches(s))
}

fn main() -> ExitCode {
    // The crash trials run instances in child processes of this binary.
    if let Ok(spec) = std::env::var(instance::ENV) {
        return instance::main(&spec);
    }
    let mut args = Arguments::from_args();
    // The trials mostly wait for the broker (group joins, transaction
    // markers): all at once fit on two cores.
    args.test_threads.get_or_insert(TRIALS.len());
    let env: Arc<OnceLock<Env>> = Arc::new(OnceLock::new());
    let trials: Vec<Trial> = TRIALS
        .iter()
        .map(|&(name, f)| {
            let env = Arc::clone(&env);
            Trial::test(name, move || {
                let env = env.get().ok_or("the broker is not running")?;
                let started = Instant::now();
                let result = f(env);
                eprintln!(
                    "real_kafka: {name}: {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                result
            })
        })
        .collect();

    if args.list || !TRIALS.iter().any(|(n, _)| selected(&args, n)) {
        return exit(libtest_mimic::run(&args, trials));
    }
    if std::env::var("KAFKA_BOOTSTRAP").is_err()
        && let Some(missing) = broker::missing_tools()
    {
        if in_ci() {
            eprintln!(
                "real_kafka: FAILED: {missing}; CI is set, and the real-broker tests never skip in CI (install Java 17+ and Maven 3)"
            );
            return ExitCode::FAILURE;
        }
        println!(
            "real_kafka: skipped: {missing} (the real-broker tests need Java 17+ and Maven 3, or KAFKA_BOOTSTRAP)"
        );
        return ExitCode::SUCCESS;
    }

    // Every log line from here on, for the check that no secret is in one.
    security::capture_logs();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let run = format!("rk{}-{nanos}", std::process::id());
    // The SASL user's password: made up by this run, never printed.
    let password = format!("pw-{nanos:x}-{:x}", std::process::id());
    let started = Instant::now();
    // The outage trial's broker starts alongside (it needs Java and Maven
    // even with KAFKA_BOOTSTRAP).
    let spare = (selected(&args, "outage::broker_down_and_back")
        && broker::missing_tools().is_none())
    .then(|| thread::spawn(|| broker::Broker::start_own(&root())));
    let guard = match broker::Broker::start(&root(), &format!("alice:{password}")) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("real_kafka: FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "real_kafka: Kafka 4.4.0 at {} ({}; ready after {:.1} s)",
        guard.bootstrap(),
        if guard.owned() {
            "started by this run"
        } else {
            "KAFKA_BOOTSTRAP"
        },
        started.elapsed().as_secs_f64()
    );
    if env
        .set(Env {
            bootstrap: guard.bootstrap().to_owned(),
            run,
            sasl: guard.sasl_bootstrap().map(|bootstrap| security::Sasl {
                bootstrap: bootstrap.to_owned(),
                user: "alice".to_owned(),
                password,
            }),
            spare: Mutex::new(spare),
        })
        .is_err()
    {
        unreachable!("the environment is set once");
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(guard); // kafka-down, before process::exit skips destructors
    println!(
        "real_kafka: {} passed, {} failed, in {:.1} s (broker start and stop included)",
        conclusion.num_passed,
        conclusion.num_failed,
        started.elapsed().as_secs_f64()
    );
    exit(conclusion)
}

fn exit(conclusion: libtest_mimic::Conclusion) -> ExitCode {
    if conclusion.has_failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
