//! `KafkaStreams` on `KafkaClients` against the real broker: a word count
//! over 3 partitions gives the `TopologyTestDriver`'s final counts for the
//! same input, with one instance, under exactly-once, and with two
//! instances sharing the tasks.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::{
    ClientConfig, ClientSupplier, Consumer, NewTopic, ProducerRecord, TopicPartition,
};
use streams_core::dsl::{Materialized, Produced};
use streams_core::runtime::{
    KafkaStreams, RecordingRestoreListener, Restoration, State, TaskId, ThreadedKafkaStreams,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig, Topology};
use streams_kafka::KafkaClients;
use streams_test::TopologyTestDriver;

use crate::Env;

pub(crate) const PARTITIONS: i32 = 3;

/// The lines every word count reads.
pub(crate) const LINES: [&str; 12] = [
    "all streams lead to kafka",
    "hello kafka streams",
    "join kafka summit",
    "kafka streams on a real broker",
    "the same topology in the driver",
    "and on a real kafka broker",
    "streams of words",
    "words words words",
    "a b c",
    "c b a",
    "hello again",
    "kafka",
];

/// Kafka's `WordCountDemo` over `input`, writing `output`.
fn topology(input: &str, output: &str) -> Result<Topology, Failed> {
    Ok(word_count(input, output)?)
}

/// [`topology`] as a topology supplier builds it.
pub(crate) fn word_count(input: &str, output: &str) -> streams_core::Result<Topology> {
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

/// The driver's final counts for [`LINES`].
fn driver_counts() -> Result<BTreeMap<String, i64>, Failed> {
    driver_counts_of(&LINES)
}

/// The driver's final counts for `lines`, keyed `line-<i>`.
pub(crate) fn driver_counts_of(lines: &[&str]) -> Result<BTreeMap<String, i64>, Failed> {
    let driver = TopologyTestDriver::new(topology("lines", "counts")?)?;
    let input = driver.create_input_topic("lines", StringSerde, StringSerde);
    let output = driver.create_output_topic("counts", StringSerde, I64Serde);
    for (i, line) in lines.iter().enumerate() {
        input.pipe_key_value(format!("line-{i}"), *line);
    }
    Ok(output.read_table().into_iter().collect())
}

/// The topics of one word count, with its lines produced.
pub(crate) struct WordCount {
    pub(crate) input: String,
    pub(crate) output: String,
    pub(crate) partitions: i32,
    pub(crate) topology: Topology,
    pub(crate) clients: Arc<KafkaClients>,
}

impl WordCount {
    fn new(env: &Env, name: &str) -> Result<WordCount, Failed> {
        Self::with_lines(env, name, &LINES)
    }

    /// The topics, with `lines` produced as `line-<i>`.
    pub(crate) fn with_lines(env: &Env, name: &str, lines: &[&str]) -> Result<WordCount, Failed> {
        Self::with_partitions(env, name, lines, PARTITIONS)
    }

    /// The topics with `partitions` partitions, with `lines` produced.
    fn with_partitions(
        env: &Env,
        name: &str,
        lines: &[&str],
        partitions: i32,
    ) -> Result<WordCount, Failed> {
        let clients = Arc::new(KafkaClients::new(&env.bootstrap));
        Self::make(env, name, lines, partitions, clients)
    }

    /// [`with_lines`](Self::with_lines) through `clients`.
    pub(crate) fn with_clients(
        env: &Env,
        name: &str,
        lines: &[&str],
        clients: Arc<KafkaClients>,
    ) -> Result<WordCount, Failed> {
        Self::make(env, name, lines, PARTITIONS, clients)
    }

    fn make(
        env: &Env,
        name: &str,
        lines: &[&str],
        partitions: i32,
        clients: Arc<KafkaClients>,
    ) -> Result<WordCount, Failed> {
        let input = env.name(&format!("{name}-lines"));
        let output = env.name(&format!("{name}-counts"));
        let mut admin = clients.admin(&ClientConfig::new())?;
        admin.create_topic(&NewTopic::new(&input, partitions))?;
        admin.create_topic(&NewTopic::new(&output, partitions))?;
        let mut producer = clients.producer(&ClientConfig::new())?;
        for (i, line) in lines.iter().enumerate() {
            producer.send(ProducerRecord::new(
                &input,
                format!("line-{i}"),
                line.to_string(),
            ))?;
        }
        let landed = producer.flush()?;
        let used: std::collections::BTreeSet<i32> = landed.iter().map(|m| m.partition).collect();
        assert_eq!(
            used.len(),
            usize::try_from(partitions)?,
            "the lines spread over the {partitions} partitions"
        );
        Ok(WordCount {
            topology: topology(&input, &output)?,
            input,
            output,
            partitions,
            clients,
        })
    }

    /// Produces `lines` as `line-<first>`, `line-<first + 1>`, ...
    pub(crate) fn produce(&self, first: usize, lines: &[&str]) -> Result<(), Failed> {
        let mut producer = self.clients.producer(&ClientConfig::new())?;
        for (i, line) in lines.iter().enumerate() {
            producer.send(ProducerRecord::new(
                &self.input,
                format!("line-{}", first + i),
                line.to_string(),
            ))?;
        }
        producer.flush()?;
        Ok(())
    }

    pub(crate) fn config(&self, app: &str, instance: &str) -> StreamsConfig {
        StreamsConfig::new(app)
            .with_property("client.id", instance)
            .with_property("commit.interval.ms", "200")
            .with_property("session.timeout.ms", "6000")
    }

    /// A reader of the whole output topic.
    pub(crate) fn reader(&self, isolation: &str) -> Result<Box<dyn Consumer>, Failed> {
        let mut reader = self.clients.consumer(
            &ClientConfig::new()
                .set("auto.offset.reset", "earliest")
                .set("isolation.level", isolation),
        )?;
        let partitions: Vec<TopicPartition> = (0..self.partitions)
            .map(|p| TopicPartition::new(&self.output, p))
            .collect();
        reader.assign(&partitions)?;
        Ok(reader)
    }
}

/// The latest count per word in what `reader` read so far.
pub(crate) fn read_counts(
    reader: &mut dyn Consumer,
    counts: &mut BTreeMap<String, i64>,
) -> Result<usize, Failed> {
    let polled = reader.poll()?;
    for r in &polled.records {
        let key = String::from_utf8(r.key.as_deref().unwrap_or_default().to_vec())?;
        let bytes: [u8; 8] = r
            .value
            .as_deref()
            .unwrap_or_default()
            .try_into()
            .map_err(|_| format!("count of {key} is not 8 bytes"))?;
        counts.insert(key, i64::from_be_bytes(bytes));
    }
    Ok(polled.records.len())
}

/// Steps `apps` in turn until the output has `expected` (or 60 s).
fn run_until(
    apps: &mut [&mut KafkaStreams],
    reader: &mut dyn Consumer,
    expected: &BTreeMap<String, i64>,
) -> Result<(usize, Duration), Failed> {
    let started = Instant::now();
    let mut counts = BTreeMap::new();
    let mut records = 0;
    let mut steps = 0;
    while &counts != expected {
        if started.elapsed() > Duration::from_secs(60) {
            let states: Vec<State> = apps.iter().map(|a| a.state()).collect();
            return Err(format!(
                "after 60 s and {steps} steps (states {states:?}), the output has {counts:?}, not {expected:?}"
            )
            .into());
        }
        for app in apps.iter_mut() {
            app.step()?;
        }
        steps += 1;
        records += read_counts(reader, &mut counts)?;
    }
    Ok((records, started.elapsed()))
}

fn all_tasks() -> Vec<TaskId> {
    (0..2)
        .flat_map(|s| (0..3).map(move |p| TaskId::new(s, p)))
        .collect()
}

/// One instance, at-least-once: every task, and the driver's counts.
pub(crate) fn word_count_one_instance(env: &Env) -> Result<(), Failed> {
    let expected = driver_counts()?;
    assert_eq!(expected.get("kafka"), Some(&6));
    let wc = WordCount::new(env, "wc1")?;
    let mut app = KafkaStreams::new(
        &wc.topology,
        wc.config(&env.name("wc1"), "a"),
        wc.clients.clone(),
    )?;
    app.start()?;
    let mut reader = wc.reader("read_uncommitted")?;
    let (records, took) = run_until(&mut [&mut app], reader.as_mut(), &expected)?;
    assert_eq!(app.state(), State::Running);
    assert_eq!(app.active_tasks(), all_tasks());
    assert!(app.standby_tasks().is_empty());
    eprintln!(
        "real_kafka: word count, one instance: {} words in {:.1} s ({records} output records)",
        expected.len(),
        took.as_secs_f64()
    );
    app.close()?;
    assert_eq!(app.state(), State::NotRunning);
    Ok(())
}

/// One instance under exactly_once_v2: read_committed sees the driver's
/// counts, and the committed offsets are the input's ends.
pub(crate) fn word_count_exactly_once(env: &Env) -> Result<(), Failed> {
    let expected = driver_counts()?;
    let wc = WordCount::new(env, "wc-eos")?;
    let app_id = env.name("wc-eos");
    let config = wc
        .config(&app_id, "a")
        .with_property("processing.guarantee", "exactly_once_v2");
    let mut app = KafkaStreams::new(&wc.topology, config, wc.clients.clone())?;
    app.start()?;
    let mut reader = wc.reader("read_committed")?;
    let (records, took) = run_until(&mut [&mut app], reader.as_mut(), &expected)?;
    app.close()?;
    eprintln!(
        "real_kafka: word count, exactly_once_v2: {} words in {:.1} s ({records} output records)",
        expected.len(),
        took.as_secs_f64()
    );
    // The input offsets were committed with the transactions.
    let group = wc
        .clients
        .consumer(&ClientConfig::new().set("group.id", &app_id))?;
    let ends = group.end_offsets(
        &(0..PARTITIONS)
            .map(|p| TopicPartition::new(&wc.input, p))
            .collect::<Vec<_>>(),
    )?;
    // Offsets committed in a transaction show once its markers are
    // written, which the coordinator does after commit_transaction returns.
    let deadline = Instant::now() + Duration::from_secs(10);
    for (tp, end) in ends {
        while group.committed(&tp)? != Some(end) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(group.committed(&tp)?, Some(end), "committed offset of {tp}");
    }
    Ok(())
}

/// Two instances share the tasks (range assignment: each gets some, none
/// twice) and together give the driver's counts.
pub(crate) fn word_count_two_instances(env: &Env) -> Result<(), Failed> {
    let expected = driver_counts()?;
    let wc = WordCount::new(env, "wc2")?;
    let app_id = env.name("wc2");
    let mut a = KafkaStreams::new(&wc.topology, wc.config(&app_id, "a"), wc.clients.clone())?;
    let mut b = KafkaStreams::new(&wc.topology, wc.config(&app_id, "b"), wc.clients.clone())?;
    a.start()?;
    b.start()?;
    // Both join before the lines are counted to the end: step until both
    // run with tasks.
    let started = Instant::now();
    while !(a.state() == State::Running
        && b.state() == State::Running
        && a.active_tasks().len() + b.active_tasks().len() == 6)
    {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "no shared assignment after 60 s: a {:?} {:?}, b {:?} {:?}",
                a.state(),
                a.active_tasks(),
                b.state(),
                b.active_tasks()
            )
            .into());
        }
        a.step()?;
        b.step()?;
    }
    let mut reader = wc.reader("read_uncommitted")?;
    let (records, took) = run_until(&mut [&mut a, &mut b], reader.as_mut(), &expected)?;
    let (ta, tb) = (a.active_tasks(), b.active_tasks());
    assert!(!ta.is_empty() && !tb.is_empty(), "a {ta:?}, b {tb:?}");
    let mut all: Vec<TaskId> = ta.iter().chain(&tb).copied().collect();
    all.sort();
    assert_eq!(all, all_tasks());
    let names = |ts: &[TaskId]| {
        ts.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    eprintln!(
        "real_kafka: word count, two instances (a {}, b {}): {} words in {:.1} s ({records} output records)",
        names(&ta),
        names(&tb),
        expected.len(),
        took.as_secs_f64()
    );
    a.close()?;
    b.close()?;
    Ok(())
}

/// An instance joins a running one: the eager rebalance moves tasks to
/// it, it restores their counts from the changelog, and the counts go on
/// from there (the driver's counts for all the lines, not a fresh count).
pub(crate) fn rebalance_restores_moved_state(env: &Env) -> Result<(), Failed> {
    let (first, second) = LINES.split_at(6);
    let wc = WordCount::with_lines(env, "wc-move", first)?;
    let app_id = env.name("wc-move");
    let mut a = KafkaStreams::new(&wc.topology, wc.config(&app_id, "a"), wc.clients.clone())?;
    a.start()?;
    let mut reader = wc.reader("read_uncommitted")?;
    run_until(&mut [&mut a], reader.as_mut(), &driver_counts_of(first)?)?;
    a.commit()?;
    assert_eq!(a.active_tasks(), all_tasks());

    let listener = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let mut b = KafkaStreams::new(&wc.topology, wc.config(&app_id, "b"), wc.clients.clone())?;
    b.set_global_state_restore_listener(listener.clone());
    b.start()?;
    let started = Instant::now();
    while !(a.state() == State::Running
        && b.state() == State::Running
        && a.active_tasks().len() + b.active_tasks().len() == 6
        && !b.active_tasks().is_empty())
    {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "no shared assignment after 60 s: a {:?} {:?}, b {:?} {:?}",
                a.state(),
                a.active_tasks(),
                b.state(),
                b.active_tasks()
            )
            .into());
        }
        a.step()?;
        b.step()?;
    }
    let restored: Vec<Restoration> = listener
        .lock()
        .map_err(|_| "restore listener poisoned")?
        .restorations
        .clone();
    let changelog = format!("{app_id}-counts-store-changelog");
    assert!(
        restored
            .iter()
            .all(|r| r.partition.topic == changelog && r.store == "counts-store"),
        "{restored:?}"
    );
    let total: usize = restored.iter().map(|r| r.restored).sum();
    assert!(
        total > 0,
        "b restored nothing of its tasks {:?}: {restored:?}",
        b.active_tasks()
    );
    for r in &restored {
        assert_eq!((r.start, r.restored as i64 <= r.end), (0, true), "{r:?}");
    }

    wc.produce(first.len(), second)?;
    // A new reader: the whole output, the first half's counts too.
    let mut reader = wc.reader("read_uncommitted")?;
    let (records, took) = run_until(&mut [&mut a, &mut b], reader.as_mut(), &driver_counts()?)?;
    eprintln!(
        "real_kafka: word count, a task moved to b with {total} restored records: {} words in {:.1} s ({records} output records)",
        driver_counts()?.len(),
        took.as_secs_f64()
    );
    a.close()?;
    b.close()?;
    Ok(())
}

/// The names of this process's threads (Linux cuts them at 15 bytes).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim_end().to_owned())
        .collect()
}

/// `num.stream.threads=2` on the real cluster: two OS threads, each a
/// member of the group with a topology from the supplier, share the 8
/// tasks of a word count over 4 partitions and give the driver's counts;
/// `close` joins them.
pub(crate) fn word_count_two_threads(env: &Env) -> Result<(), Failed> {
    let expected = driver_counts()?;
    let wc = WordCount::with_partitions(env, "wc-threads", &LINES, 4)?;
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let config = wc
        .config(&env.name("wc-threads"), "wc4t")
        .with_property("num.stream.threads", "2");
    let app = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        config,
        wc.clients.clone(),
    )?;
    let started = Instant::now();
    app.start()?;
    let mut reader = wc.reader("read_uncommitted")?;
    let mut counts = BTreeMap::new();
    let mut records = 0;
    while counts != expected {
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "after 60 s (state {}, threads {:?}, error {:?}), the output has {counts:?}, not {expected:?}",
                app.state(),
                app.threads(),
                app.error()
            )
            .into());
        }
        records += read_counts(reader.as_mut(), &mut counts)?;
    }
    let took = started.elapsed();
    // Both threads joined the group before the first rebalance settled,
    // or the second one's join moved tasks to it: wait for the split (the
    // counts can be complete while the second thread still takes up its
    // half of the assignment).
    let split = Instant::now() + Duration::from_secs(30);
    let (state, threads) = loop {
        let state = app.wait_for(Duration::from_secs(1), |s| s == State::Running);
        let threads = app.threads();
        let each = threads.len() == 2 && threads.iter().all(|t| !t.active_tasks.is_empty());
        if (state == State::Running && each) || Instant::now() > split {
            break (state, threads);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(state, State::Running, "{threads:?}");
    assert!(
        threads.len() == 2 && threads.iter().all(|t| !t.active_tasks.is_empty()),
        "each thread has tasks: {threads:?}"
    );
    let all: Vec<TaskId> = (0..2)
        .flat_map(|s| (0..4).map(move |p| TaskId::new(s, p)))
        .collect();
    assert_eq!(app.active_tasks(), all);
    let ours = |names: &[String]| {
        names
            .iter()
            .filter(|n| n.starts_with("wc4t-Stream"))
            .count()
    };
    assert_eq!(ours(&thread_names()), 2, "{:?}", thread_names());
    app.close()?;
    assert_eq!(app.state(), State::NotRunning);
    assert_eq!(
        ours(&thread_names()),
        0,
        "close joined: {:?}",
        thread_names()
    );
    eprintln!(
        "real_kafka: word count, 2 stream threads ({}): {} words in {:.1} s ({records} output records)",
        threads
            .iter()
            .map(|t| format!(
                "{}: {}",
                t.thread_name,
                t.active_tasks
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ))
            .collect::<Vec<_>>()
            .join("; "),
        expected.len(),
        took.as_secs_f64()
    );
    Ok(())
}
