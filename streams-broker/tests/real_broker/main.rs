//! A real Kafka 4.4.0 broker as the simulated broker's oracle (issue 11).
//!
//! One trial per scenario of `compat/broker` (see its `SCENARIOS.md`): the
//! Java tool runs the scenario against a genuine broker and writes what
//! Kafka answered as JSON; [`mirror`] replays the same steps, read from that
//! JSON, on a simulated [`streams_broker::Cluster`] on a mock clock and
//! writes its answers in the same shape; [`compare`] normalises both
//! (Kafka's exception classes against our `BrokerError` variants) and diffs
//! them step by step and field by field.
//!
//! The binary starts ONE broker for the whole run (`scripts/kafka-up
//! --parent <this pid>`, so the broker goes with this process even when it
//! is killed) and stops it at the end (`scripts/kafka-down`), also when a
//! trial fails: libtest-mimic catches the trials' panics, and a guard stops
//! the broker when `main` unwinds. Without `java` or `mvn` it says so in one
//! line and passes, except under `CI`, where it fails: the oracle never
//! skips in CI. `KAFKA_BOOTSTRAP=ADDR` uses a broker already running
//! (started with `scripts/kafka-up`) instead of starting one.
//!
//! ```sh
//! cargo test -p streams-broker --test real_broker
//! cargo test -p streams-broker --test real_broker -- tombstone_expires
//! ```
#![allow(clippy::unwrap_used)]

mod broker;
mod compare;
mod mirror;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use libtest_mimic::{Arguments, Failed, Trial};

/// The scenarios of `compat/broker` (`Scenarios.NAMES`), in their order.
/// Checked against the Java tool's `list` at start.
const SCENARIOS: [&str; 8] = [
    "delete_records",
    "consumer_reset_after_delete",
    "delete_records_errors",
    "produce_errors",
    "compaction_keeps_latest",
    "tombstone_expires",
    "partitioner",
    "transactions",
];

/// What every trial needs once the broker is up.
struct Env {
    tool: broker::Tool,
    bootstrap: String,
}

fn root() -> PathBuf {
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
        return false; // no trial here is #[ignore]d
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
    let mut args = Arguments::from_args();
    // The scenarios mostly wait (admin timeouts, max.block.ms, the cleaner's
    // backoff): four at a time fit on two cores, and the run takes about as
    // long as its longest scenario. `--test-threads N` overrides it.
    args.test_threads.get_or_insert(4);
    let env: Arc<OnceLock<Env>> = Arc::new(OnceLock::new());
    let trials: Vec<Trial> = SCENARIOS
        .iter()
        .map(|&name| {
            let env = Arc::clone(&env);
            Trial::test(name, move || {
                let env = env.get().ok_or("the broker is not running")?;
                run_scenario(env, name)
            })
        })
        .collect();

    if args.list || !SCENARIOS.iter().any(|n| selected(&args, n)) {
        return exit(libtest_mimic::run(&args, trials));
    }

    if let Some(missing) = broker::missing_tools() {
        if in_ci() {
            eprintln!(
                "real_broker: FAILED: {missing}; CI is set, and the real-broker oracle never skips in CI (install Java 17+ and Maven 3)"
            );
            return ExitCode::FAILURE;
        }
        println!(
            "real_broker: the real-broker oracle is skipped: {missing} (needs Java 17+ and Maven 3)"
        );
        return ExitCode::SUCCESS;
    }

    let started = Instant::now();
    let tool = match broker::Tool::build(&root()) {
        Ok(tool) => tool,
        Err(e) => {
            eprintln!("real_broker: FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = tool.check_scenario_names(&SCENARIOS) {
        eprintln!("real_broker: FAILED: {e}");
        return ExitCode::FAILURE;
    }
    let guard = match broker::Broker::start(&root()) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("real_broker: FAILED: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "real_broker: Kafka 4.4.0 at {} ({}; ready after {:.1} s)",
        guard.bootstrap(),
        if guard.owned() {
            "started by this run"
        } else {
            "KAFKA_BOOTSTRAP"
        },
        started.elapsed().as_secs_f64()
    );
    let bootstrap = guard.bootstrap().to_owned();
    if env.set(Env { tool, bootstrap }).is_err() {
        unreachable!("the environment is set once");
    }

    let conclusion = libtest_mimic::run(&args, trials);
    drop(guard); // kafka-down, before process::exit skips destructors
    println!(
        "real_broker: {} passed, {} failed, in {:.1} s (broker start and stop included)",
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

/// The scenario's JSON object in the tool's standard output: the JVM may
/// print a warning of its own there (for example about class data sharing
/// on a loaded machine), before or after it.
fn json_part(output: &str) -> &str {
    let start = output
        .find("{\n  \"kafka_version\"")
        .or_else(|| output.find('{'))
        .unwrap_or(0);
    let end = output.rfind('}').map_or(output.len(), |e| e + 1);
    output.get(start..end.max(start)).unwrap_or(output)
}

/// One trial: Kafka's answers, the simulated broker's, and their diff.
fn run_scenario(env: &Env, name: &str) -> Result<(), Failed> {
    let output = env.tool.scenario(&env.bootstrap, name)?;
    let kafka: serde_json::Value = serde_json::from_str(json_part(&output)).map_err(|e| {
        let start: String = output.chars().take(400).collect();
        format!("{name}: the Java tool wrote JSON that does not parse: {e}; its output starts with:\n{start}")
    })?;
    let committed = root()
        .join("compat/broker/observed")
        .join(format!("{name}.json"));
    if let Ok(text) = std::fs::read_to_string(&committed)
        && serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .as_ref()
            != Some(&kafka)
    {
        eprintln!(
            "real_broker: note: {name}: Kafka's fresh answers differ from {} (run compat/broker/scenarios --check)",
            committed.display()
        );
    }
    let steps = kafka["steps"]
        .as_array()
        .ok_or_else(|| format!("{name}: no \"steps\" in Kafka's JSON"))?;
    let simulated = mirror::run(steps).map_err(|e| format!("{name}: {e}"))?;
    compare::scenario(name, steps, &simulated).map_err(Failed::from)
}
