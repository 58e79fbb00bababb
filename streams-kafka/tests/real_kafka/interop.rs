//! Interop with Kafka Streams itself (issue 17 item 4): a Kafka Streams
//! 4.4.0 application (`compat/streams-app`, `compat.app.StreamsApp`)
//! with the same word count (node names, repartition topic, changelog,
//! serdes) takes turns with ours in one application, on one broker:
//!
//! 1. Kafka Streams counts the first lines and closes: it made the
//!    internal topics and wrote the store's changelog; while it runs,
//!    ours started in the same application (one group) is refused by the
//!    broker (`INCONSISTENT_GROUP_PROTOCOL`: Kafka Streams' `stream`
//!    assignor, librdkafka's `range`) and fails with
//!    `ClientError::InconsistentGroupProtocol`;
//! 2. ours starts, restores the store from that changelog (its restore
//!    listener says so) and counts more lines: the counts go on from
//!    Kafka Streams' (`kafka` 5 before, 7 after);
//! 3. Kafka Streams starts again with an empty state directory, so it
//!    restores the store from the changelog ours wrote last, and counts
//!    the last lines: the counts go on from ours.
//!
//! Each step's output, Kafka Streams' included, is the
//! `TopologyTestDriver`'s for the lines so far, read with this crate's
//! consumer and decoded as ours decodes it.
//!
//! Then the bytes: every record of the repartition topic, the changelog
//! and the output, each attributed to the writer of its step by the
//! partitions' end offsets between the steps, is checked against the
//! format of Kafka Streams' serdes (UTF-8 strings, 8-byte big-endian
//! counts), in the same partition whoever wrote it, with the same
//! timestamp type and headers from ours as from Kafka Streams; each
//! writer's repartition records are exactly the words of its lines, and
//! its last changelog and output value per word the driver's count so far,
//! so each side read the other's bytes (Kafka Streams' changelog into
//! ours, ours into Kafka Streams').

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Failed;
use streams_clients::{ClientConfig, ClientError, ClientSupplier, ConsumerRecord, TopicPartition};
use streams_core::runtime::{RecordingRestoreListener, RuntimeError, State, ThreadedKafkaStreams};

use crate::Env;
use crate::crash::Instance;
use crate::streams::{PARTITIONS, WordCount, driver_counts_of, read_counts, word_count};

/// The three batches: Kafka Streams', ours, Kafka Streams' again.
const FIRST: [&str; 6] = [
    "all streams lead to kafka",
    "hello kafka streams",
    "join kafka summit",
    "kafka streams on a real broker",
    "the same topology in the driver",
    "and on a real kafka broker",
];
const SECOND: [&str; 3] = ["streams of words", "words words words", "kafka kafka"];
const THIRD: [&str; 2] = ["words and kafka", "streams"];

/// `compat/streams-app` built (`mvn process-classes`): its classpath.
fn java_classpath() -> Result<String, Failed> {
    let project = crate::root().join("compat/streams-app");
    let mut mvn = Command::new("mvn");
    mvn.args(["-q", "-B", "-Dstyle.color=never"]);
    if let Ok(extra) = std::env::var("MVN_ARGS") {
        mvn.args(extra.split_whitespace());
    }
    let out = mvn
        .arg("-f")
        .arg(project.join("pom.xml"))
        .arg("process-classes")
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "mvn process-classes of compat/streams-app failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let jars = std::fs::read_to_string(project.join("target/classpath.txt"))?;
    Ok(format!(
        "{}:{}",
        project.join("target/classes").display(),
        jars.trim()
    ))
}

/// Kafka Streams' word count in a JVM of its own, until it is closed.
fn kafka_streams(
    classpath: &str,
    env: &Env,
    app_id: &str,
    client_id: &str,
    wc: &WordCount,
    state_dir: &PathBuf,
) -> Result<Instance, Failed> {
    kafka_streams_of(
        classpath,
        env,
        app_id,
        client_id,
        wc,
        state_dir,
        "wordcount",
    )
}

/// Kafka Streams' `topology` of `compat.app.StreamsApp` in a JVM of its
/// own, until it is closed.
fn kafka_streams_of(
    classpath: &str,
    env: &Env,
    app_id: &str,
    client_id: &str,
    wc: &WordCount,
    state_dir: &PathBuf,
    topology: &str,
) -> Result<Instance, Failed> {
    let mut java = Command::new("java");
    // The interop trial reads every repartition record back at its end:
    // none may be purged meanwhile (Kafka Streams purges what it consumed
    // at its first commit and every repartition.purge.interval.ms).
    java.args(["-Xms128m", "-Xmx512m", "-XX:+UseSerialGC"])
        .arg(format!("-Drepartition.purge.interval.ms={}", i64::MAX))
        .args(["-cp", classpath])
        .arg("compat.app.StreamsApp")
        .args([
            env.bootstrap.as_str(),
            app_id,
            client_id,
            topology,
            &wc.input,
            &wc.output,
            "at_least_once",
            "200",
            "1",
        ])
        .arg(state_dir);
    let mut app = Instance::start(java)?;
    app.expect("Kafka Streams RUNNING", |l| l == "STATE RUNNING")?;
    Ok(app)
}

/// Reads the output until its latest counts are `expected`.
fn until(wc: &WordCount, expected: &BTreeMap<String, i64>, who: &str) -> Result<(), Failed> {
    let mut reader = wc.reader("read_uncommitted")?;
    let mut counts = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while &counts != expected {
        if Instant::now() > deadline {
            return Err(
                format!("{who}: after 60 s the output has {counts:?}, not {expected:?}").into(),
            );
        }
        read_counts(reader.as_mut(), &mut counts)?;
    }
    Ok(())
}

/// The trial: see the [module docs](self).
pub(crate) fn word_count_both_ways(env: &Env) -> Result<(), Failed> {
    let started = Instant::now();
    let classpath = java_classpath()?;
    let wc = WordCount::with_lines(env, "interop", &FIRST)?;
    let app_id = env.name("interop");
    let dirs = std::env::temp_dir().join(format!("{}-state", env.name("interop")));
    let _cleanup = RemoveOnDrop(dirs.clone());

    // 1. Kafka Streams counts the first lines.
    let mut java = kafka_streams(&classpath, env, &app_id, "java-1", &wc, &dirs.join("1"))?;
    until(&wc, &driver_counts_of(&FIRST)?, "Kafka Streams")?;
    refused_by_kafka_streams_group(&wc, &app_id)?;
    java.send("close")?;
    java.expect("Kafka Streams closed", |l| l == "CLOSED")?;
    let topics = [
        format!("{app_id}-counts-store-repartition"),
        format!("{app_id}-counts-store-changelog"),
        wc.output.clone(),
    ];
    let after_java = ends(&wc, &topics)?;

    // 2. Ours restores Kafka Streams' store and counts on.
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let ours = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        // Every repartition record is read back at the end: none purged.
        wc.config(&app_id, "ours")
            .with_property("repartition.purge.interval.ms", i64::MAX.to_string()),
        wc.clients.clone(),
    )?;
    let listener = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    ours.set_global_state_restore_listener(listener.clone());
    ours.start()?;
    wc.produce(FIRST.len(), &SECOND)?;
    let so_far: Vec<&str> = FIRST.iter().chain(&SECOND).copied().collect();
    until(
        &wc,
        &driver_counts_of(&so_far)?,
        &format!("ours ({:?})", ours),
    )
    .map_err(|e| format!("{e:?}; ours: {:?} {:?}", ours.state(), ours.error()))?;
    ours.close()?;
    let restored: usize = listener
        .lock()
        .map_err(|_| "poisoned")?
        .restorations
        .iter()
        .filter(|r| r.partition.topic == format!("{app_id}-counts-store-changelog"))
        .map(|r| r.restored)
        .sum();
    assert!(
        restored > 0,
        "ours restored nothing of Kafka Streams' changelog"
    );
    let after_ours = ends(&wc, &topics)?;

    // 3. Kafka Streams, with no local state, restores ours and counts on.
    let mut java = kafka_streams(&classpath, env, &app_id, "java-2", &wc, &dirs.join("2"))?;
    wc.produce(so_far.len(), &THIRD)?;
    let all: Vec<&str> = so_far.iter().chain(&THIRD).copied().collect();
    let expected = driver_counts_of(&all)?;
    assert_eq!(expected.get("kafka"), Some(&8));
    until(&wc, &expected, "Kafka Streams after ours")?;
    java.send("close")?;
    java.expect("Kafka Streams closed", |l| l == "CLOSED")?;
    let bytes = check_bytes(
        &wc,
        &topics,
        [&after_java, &after_ours],
        [&FIRST, &SECOND, &THIRD],
    )?;
    eprintln!(
        "real_kafka: interop with Kafka Streams 4.4.0: it counted, ours restored {restored} records of its changelog and counted on, it restored ours and counted on; {bytes} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Ours started while Kafka Streams runs the same application (one group,
/// Kafka Streams' `stream` assignor against librdkafka's `range`): the
/// broker refuses our member, and the instance fails with the typed error
/// that says what to do, instead of an untyped poll error.
fn refused_by_kafka_streams_group(wc: &WordCount, app_id: &str) -> Result<(), Failed> {
    let (input, output) = (wc.input.clone(), wc.output.clone());
    let ours = ThreadedKafkaStreams::new(
        move || word_count(&input, &output),
        wc.config(app_id, "ours-mixed"),
        wc.clients.clone(),
    )?;
    ours.start()?;
    let state = ours.wait_for(Duration::from_secs(60), |s| s == State::Error);
    let error = ours.error();
    let _ = ours.close();
    assert_eq!(
        state,
        State::Error,
        "ours in Kafka Streams' group: {error:?}"
    );
    let error = error.ok_or("no error")?;
    match &*error {
        RuntimeError::Client { source, .. } => match &**source {
            ClientError::InconsistentGroupProtocol { group, .. } => {
                assert_eq!(group, app_id);
            }
            other => return Err(format!("not InconsistentGroupProtocol: {other}").into()),
        },
        other => return Err(format!("not a client error: {other}").into()),
    }
    let text = error.to_string();
    assert!(
        text.contains(&format!("group '{app_id}' refused this member"))
            && text.contains("give this application an application.id (group.id) of its own"),
        "{text}"
    );
    Ok(())
}

/// The end offsets of `topics`' partitions.
fn ends(wc: &WordCount, topics: &[String]) -> Result<BTreeMap<TopicPartition, i64>, Failed> {
    let consumer = wc.clients.consumer(&ClientConfig::new())?;
    Ok(consumer.end_offsets(&partitions(topics))?)
}

fn partitions(topics: &[String]) -> Vec<TopicPartition> {
    topics
        .iter()
        .flat_map(|t| (0..PARTITIONS).map(move |p| TopicPartition::new(t, p)))
        .collect()
}

/// Every record of `topics`, in offset order per partition.
fn read_all(wc: &WordCount, topics: &[String]) -> Result<Vec<ConsumerRecord>, Failed> {
    let ends = ends(wc, topics)?;
    let mut reader = wc.clients.consumer(
        &ClientConfig::new()
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", "read_uncommitted"),
    )?;
    reader.assign(&partitions(topics))?;
    let mut records = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut done = true;
        for (tp, end) in &ends {
            if reader.position(tp)? < *end {
                done = false;
            }
        }
        if done {
            return Ok(records);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "read {} records of {topics:?} in 30 s, not all",
                records.len()
            )
            .into());
        }
        records.extend(reader.poll()?.records);
    }
}

/// The UTF-8 string of some bytes.
fn utf8(bytes: Option<&[u8]>, what: &str) -> Result<String, Failed> {
    let bytes = bytes.ok_or_else(|| format!("{what}: null"))?;
    Ok(String::from_utf8(bytes.to_vec()).map_err(|_| format!("{what}: not UTF-8: {bytes:?}"))?)
}

/// An 8-byte big-endian count, as Kafka's `LongSerializer` writes it.
fn count(bytes: Option<&[u8]>, what: &str) -> Result<i64, Failed> {
    let bytes: [u8; 8] = bytes
        .unwrap_or_default()
        .try_into()
        .map_err(|_| format!("{what}: not 8 bytes: {bytes:?}"))?;
    Ok(i64::from_be_bytes(bytes))
}

/// The writers of the steps, in order.
const WRITERS: [&str; 3] = ["Kafka Streams", "ours", "Kafka Streams again"];

/// Checks the bytes of the repartition topic, the changelog and the output
/// (`topics`, in that order) record by record, each record's writer the
/// step whose end offsets (`bounds`) it falls before; returns a summary.
fn check_bytes(
    wc: &WordCount,
    topics: &[String; 3],
    bounds: [&BTreeMap<TopicPartition, i64>; 2],
    batches: [&[&str]; 3],
) -> Result<String, Failed> {
    let writer = |r: &ConsumerRecord| -> usize {
        let tp = TopicPartition::new(&*r.topic, r.partition);
        bounds
            .iter()
            .position(|b| r.offset < b.get(&tp).copied().unwrap_or(0))
            .unwrap_or(2)
    };
    let records = read_all(wc, topics)?;
    // The partition of each word, whoever wrote it and in whichever topic.
    let mut partition_of: BTreeMap<String, i32> = BTreeMap::new();
    // Per topic and writer: the header keys and timestamp types seen.
    let mut shapes: BTreeMap<(usize, usize), std::collections::BTreeSet<String>> = BTreeMap::new();
    // The repartition topic's words per writer, sorted.
    let mut repartitioned: [Vec<String>; 3] = Default::default();
    // Per changelog/output and writer: the last count per word.
    let mut last: BTreeMap<(usize, usize), BTreeMap<String, i64>> = BTreeMap::new();
    // Per changelog/output: the counts per word in offset order.
    let mut sequences: BTreeMap<(usize, String), Vec<i64>> = BTreeMap::new();
    let mut per_writer = [[0usize; 3]; 3];
    for r in &records {
        let topic = topics
            .iter()
            .position(|t| **t == *r.topic)
            .ok_or("a record of another topic")?;
        let w = writer(r);
        per_writer[topic][w] += 1;
        let what = format!(
            "{} of {}@{}/{} ({})",
            "record", r.topic, r.partition, r.offset, WRITERS[w]
        );
        let word = utf8(r.key.as_deref(), &format!("key of {what}"))?;
        let p = *partition_of.entry(word.clone()).or_insert(r.partition);
        assert_eq!(
            r.partition, p,
            "{word:?} in partition {p} elsewhere: {what}"
        );
        let shape = shapes.entry((topic, w)).or_default();
        shape.insert(format!("timestamp type {:?}", r.timestamp_type));
        for h in &r.headers {
            shape.insert(format!("header {}", h.key));
        }
        if topic == 0 {
            // groupBy's repartition record: the word as key and value.
            let value = utf8(r.value.as_deref(), &format!("value of {what}"))?;
            assert_eq!(value, word, "{what}");
            repartitioned[w].push(word);
        } else {
            let n = count(r.value.as_deref(), &format!("value of {what}"))?;
            last.entry((topic, w)).or_default().insert(word.clone(), n);
            sequences.entry((topic, word)).or_default().push(n);
        }
    }
    for (w, batch) in batches.iter().enumerate() {
        let mut words: Vec<String> = batch
            .iter()
            .flat_map(|l| l.split_whitespace().map(str::to_owned))
            .collect();
        words.sort();
        repartitioned[w].sort();
        assert_eq!(
            repartitioned[w], words,
            "repartition records of {}",
            WRITERS[w]
        );
        // The driver's counts after this batch, for the words of this batch.
        let so_far: Vec<&str> = batches[..=w]
            .iter()
            .flat_map(|b| b.iter().copied())
            .collect();
        let driver = driver_counts_of(&so_far)?;
        let expected: BTreeMap<String, i64> = words
            .iter()
            .map(|word| (word.clone(), driver[word]))
            .collect();
        for topic in [1, 2] {
            assert_eq!(
                last.get(&(topic, w)).cloned().unwrap_or_default(),
                expected,
                "last counts in {} written by {}",
                topics[topic],
                WRITERS[w]
            );
        }
    }
    for ((topic, word), counts) in &sequences {
        assert!(
            counts.windows(2).all(|c| c[0] < c[1]),
            "counts of {word:?} in {}: {counts:?}",
            topics[*topic]
        );
    }
    for (topic, name) in topics.iter().enumerate() {
        assert_eq!(
            shapes.get(&(topic, 1)),
            shapes.get(&(topic, 0)),
            "record shapes in {name}: ours vs Kafka Streams'"
        );
        assert_eq!(shapes.get(&(topic, 2)), shapes.get(&(topic, 0)), "{name}");
    }
    Ok(format!(
        "records (Kafka Streams / ours / Kafka Streams) repartition {:?}, changelog {:?}, output {:?}, shapes {:?}",
        per_writer[0],
        per_writer[1],
        per_writer[2],
        shapes.get(&(1, 1))
    ))
}

/// Removes a directory when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The word count over one-minute windows, as `compat.app.StreamsApp`'s
/// `windowed`: a window store's changelog and a repartition topic.
fn windowed_count(input: &str, output: &str) -> streams_core::Result<streams_core::Topology> {
    use streams_core::dsl::{Materialized, Produced, TimeWindows};
    use streams_core::serde::{I64Serde, StringSerde};
    let builder = streams_core::StreamsBuilder::new();
    builder
        .stream::<String, String>(input)
        .flat_map_values(|line: &String| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by(|_, word| word.clone())
        .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?)
        .count_with(Materialized::as_("windowed-counts"))
        .to_stream()
        .map(|k, v| (k.map(|w| w.key.clone()).unwrap_or_default(), *v))
        .to_with(output, Produced::with(StringSerde, I64Serde));
    builder.build()
}

/// The configs Kafka Streams 4.4.0 sets on a repartition topic.
const REPARTITION: [(&str, &str); 4] = [
    ("cleanup.policy", "delete"),
    ("message.timestamp.type", "CreateTime"),
    ("retention.ms", "-1"),
    ("segment.bytes", "52428800"),
];

/// Issue 17 item 3: the internal topics ours creates have the configs and
/// partition counts that Kafka Streams gives them. For the word count and
/// the windowed word count, Kafka Streams and ours run on the same input
/// under two application ids; the configs set on each internal topic
/// (describe-configs, the topic's own entries, not the broker's defaults)
/// are compared, and they are the ones Kafka Streams 4.4.0 sets: a
/// key-value store's changelog compacted, a window store's compacted and
/// deleted after the window's retention plus a day, repartition topics
/// deleted (and purged by the application) with no retention limit.
pub(crate) fn internal_topic_configs(env: &Env) -> Result<(), Failed> {
    let started = Instant::now();
    let classpath = java_classpath()?;
    let wc = WordCount::with_lines(env, "configs", &FIRST)?;
    let dirs = std::env::temp_dir().join(format!("{}-state", env.name("configs")));
    let _cleanup = RemoveOnDrop(dirs.clone());
    type Build = fn(&str, &str) -> streams_core::Result<streams_core::Topology>;
    let cases: [(&str, Build, &str, Vec<(&str, &str)>); 2] = [
        (
            "wordcount",
            word_count,
            "counts-store",
            vec![
                ("cleanup.policy", "compact"),
                ("message.timestamp.type", "CreateTime"),
            ],
        ),
        (
            "windowed",
            windowed_count,
            "windowed-counts",
            vec![
                ("cleanup.policy", "compact,delete"),
                ("message.timestamp.type", "CreateTime"),
                // The window's size (no grace) plus a day.
                ("retention.ms", "86460000"),
            ],
        ),
    ];
    let admin = wc.clients.kafka_admin(&ClientConfig::new())?;
    let mut partitions = wc.clients.admin(&ClientConfig::new())?;
    let mut seen = Vec::new();
    for (topology, build, store, changelog) in cases {
        let java_id = env.name(&format!("configs-{topology}-java"));
        let ours_id = env.name(&format!("configs-{topology}-ours"));
        let mut java = kafka_streams_of(
            &classpath,
            env,
            &java_id,
            "java",
            &wc,
            &dirs.join(topology),
            topology,
        )?;
        let (input, output) = (wc.input.clone(), wc.output.clone());
        let ours = ThreadedKafkaStreams::new(
            move || build(&input, &output),
            wc.config(&ours_id, "ours"),
            wc.clients.clone(),
        )?;
        ours.start()?;
        let state = ours.wait_for(Duration::from_secs(60), |s| {
            s == streams_core::runtime::State::Running
        });
        assert_eq!(
            state,
            streams_core::runtime::State::Running,
            "{topology}: {:?}",
            ours.error()
        );
        java.send("close")?;
        java.expect("Kafka Streams closed", |l| l == "CLOSED")?;
        ours.close()?;

        for (suffix, expected) in [
            (format!("{store}-changelog"), changelog),
            (format!("{store}-repartition"), REPARTITION.to_vec()),
        ] {
            let (theirs, mine) = (format!("{java_id}-{suffix}"), format!("{ours_id}-{suffix}"));
            let java_configs = admin.topic_configs(&theirs)?;
            let our_configs = admin.topic_configs(&mine)?;
            assert_eq!(
                our_configs, java_configs,
                "configs of {mine} (ours) and {theirs} (Kafka Streams)"
            );
            let expected: BTreeMap<String, Option<String>> = expected
                .into_iter()
                .map(|(k, v)| (k.to_owned(), Some(v.to_owned())))
                .collect();
            assert_eq!(java_configs, expected, "Kafka Streams' {theirs}");
            let counts = (
                partitions.partition_count(&mine)?,
                partitions.partition_count(&theirs)?,
            );
            assert_eq!(counts, (Some(PARTITIONS), Some(PARTITIONS)), "{suffix}");
            seen.push(format!("{suffix} {our_configs:?}"));
        }
    }
    eprintln!(
        "real_kafka: internal topics as Kafka Streams 4.4.0 makes them ({PARTITIONS} partitions each): {} ({:.1} s)",
        seen.join("; "),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
