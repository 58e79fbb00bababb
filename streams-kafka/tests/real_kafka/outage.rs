//! The broker goes away mid-run and comes back (issue 17, bad input), on
//! a broker of the trial's own (`scripts/kafka-down --keep`, then
//! `scripts/kafka-up --dir`: same port, same data):
//!
//! - an idle `exactly_once_v2` instance rides it out: it goes
//!   REBALANCING when its group session is lost (librdkafka finds that
//!   out within `session.timeout.ms`), never ERROR; an instance started
//!   meanwhile fails in `default.api.timeout.ms` with a typed error and
//!   goes to ERROR; when the broker is back the first one rejoins, runs
//!   again from its committed offsets and counts the lines written since,
//!   its `read_committed` output the driver's;
//! - an `at_least_once` instance with uncommitted work is closed while the
//!   broker is down: its close fails in bounded time with a typed,
//!   retriable error, and once the broker is back another instance
//!   resumes from the committed offsets, losing nothing
//!   ([`crate::crash::lost_instance`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::ClientError;
use streams_core::runtime::{RuntimeError, State, ThreadedKafkaStreams};
use streams_kafka::KafkaClients;

use crate::Env;
use crate::crash::{Ending, lost_instance};
use crate::streams::{LINES, WordCount, driver_counts_of, read_counts, word_count};

/// Reads `reader` until the counts are `expected`, or fails after `secs`.
fn until_counts(
    reader: &mut dyn streams_clients::Consumer,
    counts: &mut BTreeMap<String, i64>,
    expected: &BTreeMap<String, i64>,
    secs: u64,
    app: &ThreadedKafkaStreams,
) -> Result<(), Failed> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while counts != expected {
        if Instant::now() > deadline {
            return Err(format!(
                "after {secs} s (state {}, error {:?}): {counts:?}, expected {expected:?}",
                app.state(),
                app.error()
            )
            .into());
        }
        read_counts(reader, counts)?;
    }
    Ok(())
}

/// Both scenarios of the [module docs](self), one after the other on the
/// spare broker.
pub(crate) fn broker_down_and_back(env: &Env) -> Result<(), Failed> {
    let Some(broker) = env.spare_broker()? else {
        println!(
            "real_kafka: outage: skipped (stopping a broker needs one of our own: Java 17+ and Maven 3)"
        );
        return Ok(());
    };
    let env = env.on(broker.bootstrap());
    ride_it_out(&env, &broker)?;
    lost_instance(
        &env,
        "down-alos",
        "at_least_once",
        Ending::ClosedWhileBrokerDown(&broker),
    )
}

fn ride_it_out(env: &Env, broker: &crate::broker::Broker) -> Result<(), Failed> {
    let t0 = Instant::now();
    let (first, second) = LINES.split_at(6);
    let wc = WordCount::with_lines(env, "outage", first)?;
    let app_id = env.name("outage");
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let config = wc
        .config(&app_id, "a")
        .with_property("processing.guarantee", "exactly_once_v2");
    let app = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        config,
        wc.clients.clone(),
    )?;
    let states = Arc::new(Mutex::new(Vec::new()));
    let log = states.clone();
    app.set_state_listener(move |new, _| {
        if let Ok(mut l) = log.lock() {
            l.push((new, t0.elapsed()));
        }
    });
    app.start()?;
    let mut reader = wc.reader("read_committed")?;
    let mut counts = BTreeMap::new();
    until_counts(
        reader.as_mut(),
        &mut counts,
        &driver_counts_of(first)?,
        60,
        &app,
    )?;

    let stopped = Instant::now();
    broker.stop_keeping_data()?;
    // librdkafka finds the session lost within session.timeout.ms (6 s):
    // the thread closes its tasks and waits to rejoin.
    let state = app.wait_for(Duration::from_secs(30), |s| s != State::Running);
    let lost_after = stopped.elapsed();
    assert_eq!(state, State::Rebalancing, "error {:?}", app.error());

    // Meanwhile a new instance cannot start: a typed error in
    // default.api.timeout.ms, and ERROR.
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let unreachable = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        wc.config(&app_id, "c"),
        Arc::new(KafkaClients::new(broker.bootstrap()).with("default.api.timeout.ms", "3000")),
    )?;
    let asked = Instant::now();
    let err = unreachable
        .start()
        .err()
        .ok_or("an instance started while the broker was down")?;
    let failed_after = asked.elapsed();
    assert!(
        matches!(
            &err,
            RuntimeError::Client { source, .. }
                if matches!(**source, ClientError::Unreachable { .. } | ClientError::Timeout { .. })
        ),
        "{err}"
    );
    assert!(failed_after < Duration::from_secs(10), "{failed_after:?}");
    assert_eq!(unreachable.state(), State::Error);
    assert_eq!(app.state(), State::Rebalancing, "error {:?}", app.error());

    broker.restart()?;
    let down_for = stopped.elapsed();
    wc.produce(first.len(), second)?;
    until_counts(
        reader.as_mut(),
        &mut counts,
        &driver_counts_of(&LINES)?,
        60,
        &app,
    )?;
    let back_after = stopped.elapsed();
    assert_eq!(
        app.wait_for(Duration::from_secs(10), |s| s == State::Running),
        State::Running
    );
    assert!(app.error().is_none());
    let closing = Instant::now();
    app.close()?;
    let closed_in = closing.elapsed();
    let seen: Vec<State> = states
        .lock()
        .map_err(|_| "poisoned")?
        .iter()
        .map(|s| s.0)
        .collect();
    assert!(
        seen.windows(3)
            .any(|w| w == [State::Running, State::Rebalancing, State::Running]),
        "{seen:?}"
    );
    assert!(!seen.contains(&State::Error), "{seen:?}");
    eprintln!(
        "real_kafka: broker down for {:.1} s: the instance REBALANCING after {:.1} s, a new one ERROR in {:.1} s ({err}); counting again {:.1} s after the stop, closed in {:.1} s",
        down_for.as_secs_f64(),
        lost_after.as_secs_f64(),
        failed_after.as_secs_f64(),
        back_after.as_secs_f64(),
        closed_in.as_secs_f64()
    );
    Ok(())
}
