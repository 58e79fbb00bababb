//! The word count of [`word_count`] run by the real
//! runtime, `KafkaStreams`, on the simulated cluster: two instances, `a`
//! and `b`, share its 8 tasks (2 sub-topologies x 4 partitions); `b`
//! crashes after it counted words it had not committed; its session
//! times out on the mock clock, `a` takes its tasks, restores their
//! stores from the changelog and processes `b`'s uncommitted input again.
//! The same input and crash point run twice, under `at_least_once` and
//! `exactly_once_v2`.
//!
//! Under at-least-once `a` restores `b`'s counts including the ones `b`
//! had not committed, then counts the same words again: each of them is
//! counted twice, as Kafka counts them. Under exactly-once `b`'s
//! uncommitted counts were in its open transaction, which is aborted:
//! `a` restores only committed counts, and a `read_committed` consumer
//! sees every count once, the same updates the `TopologyTestDriver` gives.
//!
//! ```
//! use streams_core::runtime::ProcessingGuarantee;
//! use streams_examples::runtime_word_count;
//!
//! let eos = runtime_word_count::run(ProcessingGuarantee::ExactlyOnceV2)?;
//! assert_eq!(eos.updates, eos.driver_updates);
//! let alos = runtime_word_count::run(ProcessingGuarantee::AtLeastOnce)?;
//! assert_eq!(alos.counted_twice().values().sum::<usize>(), 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use streams_core::runtime::{
    KafkaStreams, ProcessingGuarantee, RecordingRestoreListener, Restoration, State, TaskId,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{StreamsConfig, Topology};
use streams_test::app::{AppError, StreamsCluster};
use streams_test::{TestRecord, TopologyTestDriver};

use crate::word_count::{self, INPUT, OUTPUT, STORE};

/// The application id of both instances.
pub const APPLICATION_ID: &str = "streams-wordcount";
/// Partitions of the input and output topics (so 4 tasks per sub-topology).
pub const PARTITIONS: i32 = 4;
/// `commit.interval.ms`, the same under both guarantees.
pub const COMMIT_INTERVAL_MS: i64 = 1_000;
/// `session.timeout.ms` (Kafka's default).
pub const SESSION_TIMEOUT_MS: i64 = 45_000;
/// The lines processed and committed before the crash.
pub const COMMITTED_LINES: [&str; 3] = [
    "All streams lead to Kafka",
    "Hello Kafka Streams",
    "Join Kafka Summit",
];
/// The lines processed after the last commit, when `b` crashes.
pub const UNCOMMITTED_LINES: [&str; 2] = ["Kafka Streams in Rust", "streams of records"];

/// The instance that crashes, and the one that takes over its tasks.
const CRASHED: &str = "b";
const SURVIVOR: &str = "a";

/// The topology: the word count of [`word_count`].
///
/// # Errors
/// None in practice; building a topology returns a `Result`.
pub fn topology() -> streams_core::Result<Topology> {
    word_count::topology()
}

/// The config of each instance: the guarantee, a commit every second, and
/// no record cache, so that every word counted sends its count update at
/// once (with Kafka's default 10 MB cache, `b`'s uncommitted counts would
/// still be in its cache when it dies, and die with it).
pub fn config(guarantee: ProcessingGuarantee) -> StreamsConfig {
    StreamsConfig::new(APPLICATION_ID)
        .with_property("processing.guarantee", guarantee.to_string())
        .with_property("commit.interval.ms", COMMIT_INTERVAL_MS.to_string())
        .with_property("session.timeout.ms", SESSION_TIMEOUT_MS.to_string())
        .with_property("statestore.cache.max.bytes", "0")
}

/// The changelog topic of the count store.
pub fn changelog() -> String {
    format!("{APPLICATION_ID}-{STORE}-changelog")
}

/// What one run did and saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The guarantee it ran with.
    pub guarantee: ProcessingGuarantee,
    /// What happened, one line an event, with the mock clock's time.
    pub timeline: Vec<String>,
    /// The tasks of `a` and of `b` once both had joined.
    pub tasks_before: BTreeMap<String, Vec<TaskId>>,
    /// Count updates `b` had sent but not committed when it crashed.
    pub uncommitted_updates: usize,
    /// When `b` crashed.
    pub crashed_at_ms: i64,
    /// When `a` saw the group rebalance after `b`'s session ended.
    pub session_ended_at_ms: i64,
    /// The tasks of `a` after that rebalance.
    pub tasks_after: Vec<TaskId>,
    /// The restorations `a` made after the crash, one per changelog
    /// partition.
    pub restored: Vec<Restoration>,
    /// The count updates in the output topic, per word in the order of its
    /// partition, as the guarantee's consumer reads them (at-least-once:
    /// `read_uncommitted`; exactly-once: `read_committed`).
    pub updates: BTreeMap<String, Vec<i64>>,
    /// Every record in the output topic's log, aborted ones included.
    pub records_in_log: usize,
    /// The count updates of the same lines in the `TopologyTestDriver`.
    pub driver_updates: BTreeMap<String, Vec<i64>>,
}

impl Run {
    /// The words counted more often than the driver counts them, with
    /// how many times more: the input processed again after the crash.
    pub fn counted_twice(&self) -> BTreeMap<String, usize> {
        self.updates
            .iter()
            .filter_map(|(word, counts)| {
                let expected = self.driver_updates.get(word).map_or(0, Vec::len);
                (counts.len() > expected).then(|| (word.clone(), counts.len() - expected))
            })
            .collect()
    }

    /// Every count update in the output, over all words.
    pub fn update_count(&self) -> usize {
        self.updates.values().map(Vec::len).sum()
    }

    /// The report the example prints: the timeline, then the output.
    pub fn report(&self) -> Vec<String> {
        let mut lines = vec![format!("== {}", self.guarantee)];
        lines.extend(self.timeline.iter().map(|l| format!("  {l}")));
        let twice = self.counted_twice();
        let duplicates: usize = twice.values().sum();
        let (reader, updates) = (
            match self.guarantee {
                ProcessingGuarantee::AtLeastOnce => "read_uncommitted",
                ProcessingGuarantee::ExactlyOnceV2 => "read_committed",
            },
            self.update_count(),
        );
        let driver_total: usize = self.driver_updates.values().map(Vec::len).sum();
        lines.push(if duplicates == 0 {
            format!(
                "  output ({reader}): {updates} count updates of the {} in the log, none twice; the same as the driver's: {}",
                self.records_in_log,
                yes_no(self.updates == self.driver_updates)
            )
        } else {
            format!(
                "  output ({reader}): {updates} count updates, the driver's {driver_total} and {duplicates} more: the words {CRASHED} counted without committing, counted again on top of their restored counts"
            )
        });
        let width = self.updates.keys().map(String::len).max().unwrap_or(0);
        let counts_width = self
            .updates
            .values()
            .map(|c| join(c).len())
            .max()
            .unwrap_or(0);
        for (word, counts) in &self.updates {
            let mut line = format!("    {word:<width$}  {}", join(counts));
            if twice.contains_key(word) {
                line = format!("{line:<w$}", w = width + 6 + counts_width);
            }
            if twice.contains_key(word) {
                let driver = self.driver_updates.get(word).map_or(&[][..], Vec::as_slice);
                line.push_str(&format!("  (driver: {})", join(driver)));
            }
            lines.push(line);
        }
        lines
    }
}

fn records(n: usize) -> String {
    format!("{n} record{}", if n == 1 { "" } else { "s" })
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn join(values: &[i64]) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn task_list(tasks: &[TaskId]) -> String {
    tasks
        .iter()
        .map(TaskId::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn unknown(name: &str) -> AppError {
    AppError::UnknownInstance {
        name: name.to_owned(),
        running: Vec::new(),
    }
}

fn instance<'a>(app: &'a StreamsCluster, name: &str) -> Result<&'a KafkaStreams, AppError> {
    app.instance(name).ok_or_else(|| unknown(name))
}

/// The key of line `n` (the lines spread over the partitions by key).
fn key(n: usize) -> String {
    format!("line-{n}")
}

fn per_word(records: Vec<TestRecord<String, i64>>) -> BTreeMap<String, Vec<i64>> {
    let mut words: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in records {
        if let (Some(k), Some(v)) = (r.key, r.value) {
            words.entry(k).or_default().push(v);
        }
    }
    words
}

/// The same lines through the `TopologyTestDriver` (one task, partition
/// 0), with the same config.
///
/// # Errors
/// None in practice: the topology and the records are valid.
pub fn driver_updates(
    guarantee: ProcessingGuarantee,
) -> streams_core::Result<BTreeMap<String, Vec<i64>>> {
    let driver = TopologyTestDriver::with_config(topology()?, config(guarantee))?;
    let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
    let output = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);
    for (n, line) in COMMITTED_LINES.iter().chain(&UNCOMMITTED_LINES).enumerate() {
        input.try_pipe_record(TestRecord::key_value(key(n), *line))?;
    }
    let mut words: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for kv in output.read_key_values_to_list() {
        if let (Some(k), Some(v)) = (kv.key, kv.value) {
            words.entry(k).or_default().push(v);
        }
    }
    Ok(words)
}

/// Runs the story under `guarantee`.
///
/// # Errors
/// A runtime or cluster error (none is expected).
pub fn run(guarantee: ProcessingGuarantee) -> Result<Run, AppError> {
    let topology = topology()?;
    let mut app = StreamsCluster::new();
    app.create_topic(INPUT, PARTITIONS)?;
    app.create_topic(OUTPUT, PARTITIONS)?;
    let mut timeline = Vec::new();
    let clock = app.cluster().clone();
    let at = move |what: String| format!("{:>6} ms  {what}", clock.now_ms());

    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    for name in [SURVIVOR, CRASHED] {
        let listener = restores.clone();
        let watch = name == SURVIVOR;
        app.start_with(name, &topology, config(guarantee), move |s| {
            if watch {
                s.set_global_state_restore_listener(listener);
            }
        })?;
    }
    timeline.push(at(format!(
        "{SURVIVOR} and {CRASHED} start: application.id {APPLICATION_ID}, {PARTITIONS} partitions, commit.interval.ms {COMMIT_INTERVAL_MS}"
    )));
    app.run_until_idle()?;
    let mut tasks_before = BTreeMap::new();
    for name in [SURVIVOR, CRASHED] {
        let tasks = instance(&app, name)?.active_tasks();
        timeline.push(at(format!("{name} owns {}", task_list(&tasks))));
        tasks_before.insert(name.to_owned(), tasks);
    }
    timeline.push(format!(
        "{:>6}     (task 0_p splits partition p of {INPUT}; task 1_p counts partition p of the repartition topic into {STORE})",
        ""
    ));

    let lines = app.producer(INPUT, StringSerde, StringSerde);
    let now = app.cluster().now_ms();
    for (n, line) in COMMITTED_LINES.iter().enumerate() {
        lines.send(&key(n), Some(&(*line).to_owned()), now)?;
    }
    app.run_until_idle()?;
    let committed = app.read(OUTPUT, StringSerde, I64Serde)?.len();
    timeline.push(at(format!(
        "{} lines processed and committed: {committed} count updates",
        COMMITTED_LINES.len()
    )));

    let now = app.cluster().now_ms();
    for (i, line) in UNCOMMITTED_LINES.iter().enumerate() {
        lines.send(
            &key(COMMITTED_LINES.len() + i),
            Some(&(*line).to_owned()),
            now,
        )?;
    }
    // The crash point, the same under both guarantees: a splits the lines
    // and commits (under exactly-once its transaction, so the words become
    // visible to b); b counts the words, and its commit is not due yet.
    let runtime = |name: &str| {
        let name = name.to_owned();
        move |source| AppError::Runtime {
            instance: name,
            source: Box::new(source),
        }
    };
    let survivor = app
        .instance_mut(SURVIVOR)
        .ok_or_else(|| unknown(SURVIVOR))?;
    survivor.step().map_err(runtime(SURVIVOR))?;
    survivor.commit().map_err(runtime(SURVIVOR))?;
    let crashed = app.instance_mut(CRASHED).ok_or_else(|| unknown(CRASHED))?;
    for _ in 0..2 {
        crashed.step().map_err(runtime(CRASHED))?;
    }
    let uncommitted_updates = app.read(OUTPUT, StringSerde, I64Serde)?.len() - committed;
    timeline.push(at(format!(
        "{} more lines: {SURVIVOR} splits them and commits; {CRASHED} counts their words and sends {uncommitted_updates} count updates{}; its next commit is due at {} ms",
        UNCOMMITTED_LINES.len(),
        match guarantee {
            ProcessingGuarantee::AtLeastOnce => "",
            ProcessingGuarantee::ExactlyOnceV2 => " in its open transaction",
        },
        instance(&app, CRASHED)?.next_commit_ms().unwrap_or_default()
    )));
    let crashed_at_ms = app.cluster().now_ms();
    app.crash(CRASHED)?;
    timeline.push(at(format!(
        "{CRASHED} crashes: no commit, no flush, no leave-group"
    )));

    // a goes on alone (its own tasks have nothing left to do) until the
    // group coordinator ends b's session and a rebalances.
    while instance(&app, SURVIVOR)?.state() != State::Rebalancing {
        app.advance(1_000);
        app.step()?;
    }
    let session_ended_at_ms = app.cluster().now_ms();
    timeline.push(at(format!(
        "{CRASHED}'s session ends (session.timeout.ms {SESSION_TIMEOUT_MS} after its last heartbeat at {crashed_at_ms} ms): the group rebalances"
    )));
    let restored_before = restores
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .restorations
        .len();
    while instance(&app, SURVIVOR)?.state() != State::Running {
        app.step()?;
    }
    let tasks_after = instance(&app, SURVIVOR)?.active_tasks();
    timeline.push(at(format!(
        "{SURVIVOR} owns {}; {CRASHED} owns nothing",
        task_list(&tasks_after)
    )));
    let restored: Vec<Restoration> = restores
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .restorations[restored_before..]
        .to_vec();
    let total: usize = restored.iter().map(|r| r.restored).sum();
    timeline.push(at(format!(
        "{SURVIVOR} restores {STORE} of {CRASHED}'s tasks from {}: {}",
        changelog(),
        match total.checked_sub(committed) {
            Some(0) => format!(
                "{}, the committed ones ({CRASHED}'s aborted transaction takes offsets, restores nothing)",
                records(total)
            ),
            Some(extra) => format!(
                "{}, the {committed} committed and the {extra} {CRASHED} had not committed",
                records(total)
            ),
            None => records(total),
        }
    )));
    for r in &restored {
        timeline.push(format!(
            "{:>6}     partition {}: offsets {}..{}, {}",
            "",
            r.partition.partition,
            r.start,
            r.end,
            records(r.restored)
        ));
    }
    app.run_until_idle()?;
    timeline.push(at(format!(
        "{SURVIVOR} processed {CRASHED}'s input again from its last committed offsets, and committed"
    )));

    let output = match guarantee {
        ProcessingGuarantee::AtLeastOnce => app.read(OUTPUT, StringSerde, I64Serde)?,
        ProcessingGuarantee::ExactlyOnceV2 => app.read_committed(OUTPUT, StringSerde, I64Serde)?,
    };
    Ok(Run {
        guarantee,
        timeline,
        tasks_before,
        uncommitted_updates,
        crashed_at_ms,
        session_ended_at_ms,
        tasks_after,
        restored,
        updates: per_word(output),
        records_in_log: app.read(OUTPUT, StringSerde, I64Serde)?.len(),
        driver_updates: driver_updates(guarantee)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tasks(spec: &[(u32, u32)]) -> Vec<TaskId> {
        spec.iter().map(|&(s, p)| TaskId::new(s, p)).collect()
    }

    fn restorations(run: &Run) -> Vec<(i32, i64, i64, usize)> {
        run.restored
            .iter()
            .map(|r| {
                assert_eq!(
                    (r.partition.topic.as_str(), r.store.as_str()),
                    (changelog().as_str(), STORE)
                );
                (r.partition.partition, r.start, r.end, r.restored)
            })
            .collect()
    }

    /// What both runs share: the assignment, the crash point, the session
    /// timeout on the mock clock and the rebalance.
    fn assert_the_same_story(run: &Run) {
        assert_eq!(
            run.tasks_before,
            BTreeMap::from([
                ("a".to_owned(), tasks(&[(0, 0), (0, 1), (0, 2), (0, 3)])),
                ("b".to_owned(), tasks(&[(1, 0), (1, 1), (1, 2), (1, 3)])),
            ])
        );
        assert_eq!(run.uncommitted_updates, 7);
        assert_eq!(run.crashed_at_ms, 1_001);
        assert_eq!(
            run.session_ended_at_ms,
            run.crashed_at_ms + SESSION_TIMEOUT_MS
        );
        assert_eq!(
            run.tasks_after,
            tasks(&[
                (0, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3)
            ])
        );
    }

    /// Under at-least-once `a` restores `b`'s uncommitted counts (18
    /// records: 11 committed, 7 not) and counts the same 7 words again.
    #[test]
    fn at_least_once_counts_the_uncommitted_words_twice() -> Result<(), AppError> {
        let run = run(ProcessingGuarantee::AtLeastOnce)?;
        assert_the_same_story(&run);
        assert_eq!(
            restorations(&run),
            [(0, 0, 12, 12), (1, 0, 2, 2), (2, 0, 1, 1), (3, 0, 3, 3)]
        );
        assert_eq!(run.update_count(), 25);
        assert_eq!(run.records_in_log, 25);
        assert_eq!(
            run.counted_twice(),
            BTreeMap::from(
                [
                    ("in", 1),
                    ("kafka", 1),
                    ("of", 1),
                    ("records", 1),
                    ("rust", 1),
                    ("streams", 2)
                ]
                .map(|(w, n)| (w.to_owned(), n))
            )
        );
        assert_eq!(run.updates["kafka"], [1, 2, 3, 4, 5]);
        assert_eq!(run.driver_updates["kafka"], [1, 2, 3, 4]);
        assert_eq!(
            run.report(),
            [
                "== at_least_once",
                "       0 ms  a and b start: application.id streams-wordcount, 4 partitions, commit.interval.ms 1000",
                "       0 ms  a owns 0_0 0_1 0_2 0_3",
                "       0 ms  b owns 1_0 1_1 1_2 1_3",
                "             (task 0_p splits partition p of streams-plaintext-input; task 1_p counts partition p of the repartition topic into counts-store)",
                "    1001 ms  3 lines processed and committed: 11 count updates",
                "    1001 ms  2 more lines: a splits them and commits; b counts their words and sends 7 count updates; its next commit is due at 2002 ms",
                "    1001 ms  b crashes: no commit, no flush, no leave-group",
                "   46001 ms  b's session ends (session.timeout.ms 45000 after its last heartbeat at 1001 ms): the group rebalances",
                "   46001 ms  a owns 0_0 0_1 0_2 0_3 1_0 1_1 1_2 1_3; b owns nothing",
                "   46001 ms  a restores counts-store of b's tasks from streams-wordcount-counts-store-changelog: 18 records, the 11 committed and the 7 b had not committed",
                "             partition 0: offsets 0..12, 12 records",
                "             partition 1: offsets 0..2, 2 records",
                "             partition 2: offsets 0..1, 1 record",
                "             partition 3: offsets 0..3, 3 records",
                "   47002 ms  a processed b's input again from its last committed offsets, and committed",
                "  output (read_uncommitted): 25 count updates, the driver's 18 and 7 more: the words b counted without committing, counted again on top of their restored counts",
                "    all      1",
                "    hello    1",
                "    in       1 2          (driver: 1)",
                "    join     1",
                "    kafka    1 2 3 4 5    (driver: 1 2 3 4)",
                "    lead     1",
                "    of       1 2          (driver: 1)",
                "    records  1 2          (driver: 1)",
                "    rust     1 2          (driver: 1)",
                "    streams  1 2 3 4 5 6  (driver: 1 2 3 4)",
                "    summit   1",
                "    to       1",
            ]
        );
        Ok(())
    }

    /// Under exactly-once `b`'s 7 updates were in its open transaction,
    /// which is aborted: the log keeps them (25 records), `a` restores
    /// only the 11 committed counts (the aborted records and the markers
    /// take offsets), and `read_committed` sees the driver's updates.
    #[test]
    fn exactly_once_shows_every_count_once_as_the_driver() -> Result<(), AppError> {
        let run = run(ProcessingGuarantee::ExactlyOnceV2)?;
        assert_the_same_story(&run);
        assert_eq!(
            restorations(&run),
            [(0, 0, 14, 8), (1, 0, 4, 1), (2, 0, 2, 0), (3, 0, 5, 2)]
        );
        assert_eq!(run.updates, run.driver_updates);
        assert_eq!(run.update_count(), 18);
        assert_eq!(run.records_in_log, 25);
        assert!(run.counted_twice().is_empty());
        let report = run.report();
        assert_eq!(
            report[6],
            "    1001 ms  2 more lines: a splits them and commits; b counts their words and sends 7 count updates in its open transaction; its next commit is due at 2002 ms"
        );
        assert_eq!(
            report[10],
            "   46001 ms  a restores counts-store of b's tasks from streams-wordcount-counts-store-changelog: 11 records, the committed ones (b's aborted transaction takes offsets, restores nothing)"
        );
        assert_eq!(
            report[16..],
            [
                "  output (read_committed): 18 count updates of the 25 in the log, none twice; the same as the driver's: yes",
                "    all      1",
                "    hello    1",
                "    in       1",
                "    join     1",
                "    kafka    1 2 3 4",
                "    lead     1",
                "    of       1",
                "    records  1",
                "    rust     1",
                "    streams  1 2 3 4",
                "    summit   1",
                "    to       1",
            ]
        );
        Ok(())
    }

    #[test]
    fn the_driver_counts_each_word_once() -> streams_core::Result<()> {
        let updates = driver_updates(ProcessingGuarantee::AtLeastOnce)?;
        assert_eq!(updates["streams"], [1, 2, 3, 4]);
        assert_eq!(updates.values().map(Vec::len).sum::<usize>(), 18);
        assert_eq!(updates, driver_updates(ProcessingGuarantee::ExactlyOnceV2)?);
        Ok(())
    }
}
