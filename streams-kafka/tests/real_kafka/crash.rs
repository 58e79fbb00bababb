//! A killed instance on the real broker (issue 17): an instance in a
//! process of its own ([`crate::instance`]) counts words, commits, counts
//! more without committing, and is killed (`SIGKILL`: no commit, no
//! flush, no leave-group, an open transaction left open). Another
//! instance takes its tasks once its session times out. Under
//! `exactly_once_v2` nothing is lost or repeated: the `read_committed`
//! output is the driver's, every word's counts go up one by one, and the
//! dead instance's output is in the log only as an aborted transaction.
//! Under `at_least_once` nothing is lost and only the uncommitted work is
//! repeated: words that the dead instance counted after its last commit
//! (it split their lines and counted them, both uncommitted) may be
//! counted again, by each of the word count's two sub-topologies at most
//! once more; every other count is exact.
//!
//! The same with the instance closed while its broker is down
//! ([`Ending::ClosedWhileBrokerDown`], run by [`crate::outage`]): its
//! commit fails, typed and in bounded time, and the work it could not
//! commit is its successor's.
//!
//! Under exactly-once the dead instance's uncommitted work is the
//! counting of the second batch of words (its lines were split and
//! committed: the counting sub-topology reads the repartition topic
//! `read_committed`, so it sees the words only after that commit).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::{ClientConfig, ClientSupplier, Consumer, TopicPartition};
use streams_core::runtime::{State, ThreadedKafkaStreams};

use crate::Env;
use crate::broker::Broker;
use crate::instance::{ENV, Spec};
use crate::streams::{LINES, PARTITIONS, WordCount, driver_counts_of, read_counts, word_count};

/// A child process that talks in lines; dropping it kills it.
pub(crate) struct Instance {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Instance {
    /// An instance of the word count in a child process (this binary).
    fn spawn(spec: &Spec) -> Result<Instance, Failed> {
        let mut command = Command::new(std::env::current_exe()?);
        command.env(ENV, spec.encode());
        Self::start(command)
    }

    /// Runs `command` with its stdin, stdout and stderr piped.
    pub(crate) fn start(mut command: Command) -> Result<Instance, Failed> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let errors = Arc::new(Mutex::new(String::new()));
        let sink = errors.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        Ok(Instance {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: errors,
        })
    }

    /// The first line the child prints that `wanted` accepts (within 60 s).
    pub(crate) fn expect(
        &mut self,
        what: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<String, Failed> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return Ok(line),
                Ok(_) => {}
                Err(e) => {
                    let why = match e {
                        RecvTimeoutError::Timeout => "not within 60 s",
                        RecvTimeoutError::Disconnected => "the instance exited",
                    };
                    let stderr = self.stderr.lock().map(|s| s.clone()).unwrap_or_default();
                    return Err(format!("waiting for {what}: {why}; its stderr:\n{stderr}").into());
                }
            }
        }
    }

    /// Waits until the child has processed `n` records.
    fn processed(&mut self, n: u64) -> Result<String, Failed> {
        self.expect(&format!("{n} records processed"), |line| {
            line.strip_prefix("processed ")
                .and_then(|rest| rest.split(' ').next())
                .and_then(|k| k.parse::<u64>().ok())
                .is_some_and(|k| k >= n)
        })
    }

    pub(crate) fn send(&mut self, command: &str) -> Result<(), Failed> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{command}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Asks the child to commit, and waits until it has.
    fn commit(&mut self) -> Result<(), Failed> {
        self.send("commit")?;
        self.expect("a commit", |l| l == "committed")?;
        Ok(())
    }

    /// `SIGKILL`, as a crashed machine or an OOM killer.
    fn kill(mut self) -> Result<(), Failed> {
        self.child.kill()?;
        let status = self.child.wait()?;
        assert!(!status.success(), "killed, not exited: {status}");
        Ok(())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Records a source processed for `lines`: each line, then each word
/// (through the repartition topic).
fn source_records(lines: &[&str]) -> u64 {
    let words: usize = lines.iter().map(|l| l.split_whitespace().count()).sum();
    u64::try_from(lines.len() + words).unwrap_or(u64::MAX)
}

/// Every `(word, count)` of the output, partition by partition in offset
/// order (so each word's counts in the order written), as a consumer with
/// `isolation` reads them.
fn read_all(wc: &WordCount, isolation: &str) -> Result<Vec<(String, i64)>, Failed> {
    let mut reader = wc.reader(isolation)?;
    let partitions: Vec<TopicPartition> = (0..wc.partitions)
        .map(|p| TopicPartition::new(&wc.output, p))
        .collect();
    let ends = reader.end_offsets(&partitions)?;
    let mut out: BTreeMap<i32, Vec<(String, i64)>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut done = true;
        for tp in &partitions {
            done &= reader.position(tp)? >= ends[tp];
        }
        if done {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{isolation}: the output not read to {ends:?} in 30 s").into());
        }
        for r in reader.poll()?.records {
            let key = String::from_utf8(r.key.as_deref().unwrap_or_default().to_vec())?;
            let value: [u8; 8] = r
                .value
                .as_deref()
                .unwrap_or_default()
                .try_into()
                .map_err(|_| format!("count of {key} is not 8 bytes"))?;
            out.entry(r.partition)
                .or_default()
                .push((key, i64::from_be_bytes(value)));
        }
    }
    Ok(out.into_values().flatten().collect())
}

/// The last data record of every partition of some topics, as a
/// `read_committed` consumer finds them, to tell when a group has
/// committed past all of them (under exactly-once a partition ends with a
/// transaction marker, which no consumer commits past).
struct Tail {
    reader: Box<dyn Consumer>,
    partitions: Vec<TopicPartition>,
    last: BTreeMap<TopicPartition, i64>,
}

impl Tail {
    fn new(wc: &WordCount, topics: &[&str]) -> Result<Tail, Failed> {
        let mut reader = wc.clients.consumer(
            &ClientConfig::new()
                .set("auto.offset.reset", "earliest")
                .set("isolation.level", "read_committed"),
        )?;
        let partitions: Vec<TopicPartition> = topics
            .iter()
            .flat_map(|t| (0..PARTITIONS).map(move |p| TopicPartition::new(*t, p)))
            .collect();
        reader.assign(&partitions)?;
        Ok(Tail {
            reader,
            partitions,
            last: BTreeMap::new(),
        })
    }

    /// Whether `group` has committed past every data record there is.
    fn caught_up(&mut self, group: &dyn Consumer) -> Result<bool, Failed> {
        for r in self.reader.poll()?.records {
            self.last
                .insert(TopicPartition::new(&*r.topic, r.partition), r.offset);
        }
        let ends = self.reader.end_offsets(&self.partitions)?;
        for tp in &self.partitions {
            if self.reader.position(tp)? < ends[tp] {
                return Ok(false);
            }
            let needed = self.last.get(tp).map_or(0, |o| o + 1);
            if group.committed(tp)?.unwrap_or(0) < needed {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// How the first instance ends, with uncommitted work.
pub(crate) enum Ending<'a> {
    /// `SIGKILL`.
    Killed,
    /// Its broker stops (`kafka-down --keep`), it is closed meanwhile (its
    /// commit fails, typed and in bounded time), and the broker starts
    /// again (`kafka-up --dir`).
    ClosedWhileBrokerDown(&'a Broker),
}

/// The child's `default.api.timeout.ms`.
const API_TIMEOUT_MS: u64 = 5_000;

/// The first instance counts, commits, counts more and ends as `ending`
/// says; the second takes over and finishes: see the [module docs](self).
pub(crate) fn lost_instance(
    env: &Env,
    name: &str,
    guarantee: &str,
    ending: Ending<'_>,
) -> Result<(), Failed> {
    let eos = guarantee == "exactly_once_v2";
    let isolation = if eos {
        "read_committed"
    } else {
        "read_uncommitted"
    };
    let (first, rest) = LINES.split_at(6);
    let (second, third) = rest.split_at(4);
    let wc = WordCount::with_lines(env, name, first)?;
    let app_id = env.name(name);
    let spec = Spec {
        bootstrap: env.bootstrap.clone(),
        application_id: app_id.clone(),
        client_id: "a".to_owned(),
        input: wc.input.clone(),
        output: wc.output.clone(),
        guarantee: guarantee.to_owned(),
        api_timeout_ms: API_TIMEOUT_MS,
    };
    let started = Instant::now();
    let mut a = Instance::spawn(&spec)?;
    a.expect("a running with the 6 tasks", |l| {
        l == "running 0_0,0_1,0_2,1_0,1_1,1_2"
    })?;
    // Under exactly-once the words reach the counting sub-topology only
    // once the transaction that wrote them to the repartition topic
    // commits: a commits after each sub-topology's share.
    let lines_done = |lines: &[&str]| u64::try_from(lines.len()).unwrap_or(u64::MAX);
    if eos {
        a.processed(lines_done(first))?;
        a.commit()?;
    }
    a.processed(source_records(first))?;
    a.commit()?;

    // Uncommitted work: the second lines counted, their counts written
    // (read_uncommitted sees them, in a's open transaction under EOS).
    wc.produce(first.len(), second)?;
    if eos {
        a.processed(source_records(first) + lines_done(second))?;
        a.commit()?;
    }
    let line = a.processed(source_records(first) + source_records(second))?;
    assert!(line.ends_with("uncommitted=true"), "{line}");
    let before_kill = driver_counts_of(&LINES[..10])?;
    let mut peek = wc.reader("read_uncommitted")?;
    let mut seen = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen != before_kill {
        if Instant::now() > deadline {
            return Err(format!("a's uncommitted counts never showed: {seen:?}").into());
        }
        read_counts(peek.as_mut(), &mut seen)?;
    }
    let how = match ending {
        Ending::Killed => {
            a.kill()?;
            "killed".to_owned()
        }
        Ending::ClosedWhileBrokerDown(broker) => {
            broker.stop_keeping_data()?;
            a.send("close")?;
            let line = a.expect("a's close", |l| l.starts_with("closed "))?;
            let mut fields = line.splitn(4, ' ').skip(1);
            let ms: u64 = fields.next().unwrap_or_default().parse()?;
            let kind = fields.next().unwrap_or_default();
            // The commit of the close could not reach the cluster: a
            // typed, retriable error, within three API timeouts (the
            // flush or the offsets, then the consumer's close).
            assert!(
                matches!(kind, "unreachable" | "timeout"),
                "a's close while the broker was down: {line}"
            );
            assert!(ms < 3 * API_TIMEOUT_MS, "{line}");
            broker.restart()?;
            format!("closed while the broker was down ({kind} after {ms} ms)")
        }
    };
    let killed_at = started.elapsed();

    // b takes over once a's session (6 s) has timed out.
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let config = wc
        .config(&app_id, "b")
        .with_property("processing.guarantee", guarantee)
        .with_property("statestore.cache.max.bytes", "0");
    let b = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        config,
        wc.clients.clone(),
    )?;
    b.start()?;
    wc.produce(first.len() + second.len(), third)?;
    let expected = driver_counts_of(&LINES)?;
    let group = wc
        .clients
        .consumer(&ClientConfig::new().set("group.id", &app_id))?;
    let repartition = format!("{app_id}-counts-store-repartition");
    let mut tail = Tail::new(&wc, &[&wc.input, &repartition])?;
    let mut reader = wc.reader(isolation)?;
    let mut counts = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if Instant::now() > deadline {
            return Err(format!(
                "b (state {}, error {:?}) did not finish in 90 s: {counts:?}, expected {expected:?}",
                b.state(),
                b.error()
            )
            .into());
        }
        read_counts(reader.as_mut(), &mut counts)?;
        let complete = expected
            .iter()
            .all(|(w, n)| counts.get(w).is_some_and(|c| c >= n));
        if complete && tail.caught_up(group.as_ref())? {
            break;
        }
    }
    assert_eq!(b.state(), State::Running);
    b.close()?;
    let took = started.elapsed();

    let records = read_all(&wc, isolation)?;
    let mut last: BTreeMap<String, i64> = BTreeMap::new();
    for (word, count) in &records {
        let previous = last.insert(word.clone(), *count);
        if eos {
            assert!(
                previous.is_none_or(|p| *count == p + 1),
                "{word}: {count} after {previous:?} in the read_committed output: {records:?}"
            );
        }
    }
    if eos {
        assert_eq!(last, expected);
        let everything = read_all(&wc, "read_uncommitted")?;
        assert!(
            everything.len() > records.len(),
            "a's uncommitted counts are in the log, aborted: {} records read uncommitted, {} committed",
            everything.len(),
            records.len()
        );
        eprintln!(
            "real_kafka: instance {how} after {:.1} s, exactly_once_v2: b done after {:.1} s; {} committed output records, {} aborted",
            killed_at.as_secs_f64(),
            took.as_secs_f64(),
            records.len(),
            everything.len() - records.len()
        );
    } else {
        let uncommitted = driver_counts_of(second)?;
        let mut repeated = 0;
        for (word, n) in &expected {
            let got = last.get(word).copied().unwrap_or(0);
            let again = uncommitted.get(word).copied().unwrap_or(0);
            assert!(got >= *n, "{word}: {got} < {n}: lost");
            assert!(
                got <= n + 2 * again,
                "{word}: {got} > {n} + 2 x {again}: repeated more than its uncommitted records"
            );
            repeated += got - n;
        }
        eprintln!(
            "real_kafka: instance {how} after {:.1} s, at_least_once: b done after {:.1} s; {} output records, {repeated} counts repeated (of words a counted uncommitted)",
            killed_at.as_secs_f64(),
            took.as_secs_f64(),
            records.len()
        );
    }
    Ok(())
}

/// Under `exactly_once_v2`: nothing lost, nothing repeated.
pub(crate) fn killed_instance_exactly_once(env: &Env) -> Result<(), Failed> {
    lost_instance(env, "kill-eos", "exactly_once_v2", Ending::Killed)
}

/// Under `at_least_once`: nothing lost; only uncommitted work repeated.
pub(crate) fn killed_instance_at_least_once(env: &Env) -> Result<(), Failed> {
    lost_instance(env, "kill-alos", "at_least_once", Ending::Killed)
}
