//! Regression tests named after the Kafka Streams ticket whose bug they
//! reproduce, a bug this library must not have. Each runs the ticket's
//! scenario, or a seeded family of inputs around it, and checks the whole
//! output against a reference model: a plain computation of the expected
//! result, written here without the library. (KAFKA-4492's test lives with
//! the joins it ports, in `streams-core/tests/joins.rs`.)

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_broker::Cluster;
use streams_core::dsl::{
    BufferConfig, JoinWindows, Materialized, Produced, Suppressed, TimeWindows, Window, Windowed,
    WindowedSerde,
};
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::{StreamsBuilder, Topology};
use streams_test::{TestRecord, TopologyTestDriver};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn ms(n: i64) -> Duration {
    Duration::from_millis(n.unsigned_abs())
}

/// A small deterministic generator (a 64-bit LCG), so that every run sees
/// the same inputs.
struct Lcg(u64);

impl Lcg {
    /// A number in `0..bound`.
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % bound
    }

    fn below_i64(&mut self, bound: i64) -> i64 {
        self.below(bound.unsigned_abs()) as i64
    }
}

/// A record read back: key, value, timestamp.
fn triple<K, V>(r: TestRecord<K, V>) -> (K, Option<V>, i64) {
    (
        r.key.expect("every record here has a key"),
        r.value,
        r.timestamp.expect("every record here has a timestamp"),
    )
}

// ---------------------------------------------------------------------
// KAFKA-9503
// ---------------------------------------------------------------------

/// KAFKA-9503, "TopologyTestDriver processes intermediate results in the
/// wrong order": records a topology writes to a topic it also reads were
/// processed depth-first (recursively, as each was written), where Kafka
/// Streams processes them breadth-first, in the order they were written.
///
/// Topology: `a` fans each value out into `v1`, `v2` on `b`; each record
/// of `b` goes to `out`, and while shorter than a limit also back to `b`
/// as `vx`, `vy`. The model is a FIFO queue per piped record.
#[test]
fn kafka_9503_fed_back_records_are_processed_breadth_first() -> TestResult {
    fn model(inputs: &[String], limit: usize) -> Vec<String> {
        let mut seen = Vec::new();
        for v in inputs {
            let mut queue: VecDeque<String> = [format!("{v}1"), format!("{v}2")].into();
            while let Some(b) = queue.pop_front() {
                if b.len() < limit {
                    queue.push_back(format!("{b}x"));
                    queue.push_back(format!("{b}y"));
                }
                seen.push(b);
            }
        }
        seen
    }
    let mut rng = Lcg(9503);
    for limit in 2..6 {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("a")
            .flat_map_values(|v| [format!("{v}1"), format!("{v}2")])
            .to("b");
        let b = builder.stream::<String, String>("b");
        b.clone().to("out");
        b.filter(move |_, v| v.len() < limit)
            .flat_map_values(|v| [format!("{v}x"), format!("{v}y")])
            .to("b");
        let driver = TopologyTestDriver::new(builder.build()?)?;
        let a = driver.create_input_topic("a", StringSerde, StringSerde);
        let out = driver.create_output_topic("out", StringSerde, StringSerde);
        let b_topic = driver.create_output_topic("b", StringSerde, StringSerde);
        let inputs: Vec<String> = (0..1 + rng.below(3))
            .map(|_| ["p", "q", "r"][rng.below(3) as usize].to_owned())
            .collect();
        for (i, v) in inputs.iter().enumerate() {
            a.pipe_key_value_at("k", v.clone(), i as i64);
        }
        let expected: Vec<Option<String>> = model(&inputs, limit).into_iter().map(Some).collect();
        assert_eq!(out.read_values_to_list(), expected, "limit {limit}");
        assert_eq!(b_topic.read_values_to_list(), expected, "limit {limit}");
    }
    Ok(())
}

// ---------------------------------------------------------------------
// Stream-stream joins: KAFKA-4153, KAFKA-10847, KAFKA-13721
// ---------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JoinKind {
    Inner,
    Left,
    Outer,
}

/// One input record of a stream-stream join.
#[derive(Debug, Clone)]
struct Side {
    left: bool,
    key: i32,
    value: String,
    ts: i64,
}

/// In-order input (timestamps never go back, over both sides together):
/// keys 0 to 3, values `L<i>` / `R<i>`, and last a record on each side
/// with key 99 far enough ahead to close every window.
fn join_input(rng: &mut Lcg, n: usize, horizon: i64) -> Vec<Side> {
    let mut ts = 0;
    let mut records: Vec<Side> = (0..n)
        .map(|i| {
            ts += rng.below_i64(4);
            let left = rng.below(2) == 0;
            Side {
                left,
                key: rng.below(4) as i32,
                value: format!("{}{i}", if left { "L" } else { "R" }),
                ts,
            }
        })
        .collect();
    for left in [true, false] {
        records.push(Side {
            left,
            key: 99,
            value: format!("{}end", if left { "L" } else { "R" }),
            ts: ts + horizon,
        });
    }
    records
}

/// The reference model of a stream-stream join: every pair of a left and
/// a right record with the same key whose timestamps are close enough
/// (the right one in `[l - before, l + after]`) joins once, at the larger
/// timestamp; a left (for an outer join, also a right) record that joins
/// nothing at all gives one result padded with `null`, at its own
/// timestamp. Sorted: the model says what comes out, not in which order.
fn join_model(
    records: &[Side],
    before: i64,
    after: i64,
    kind: JoinKind,
) -> Vec<(i32, Option<String>, i64)> {
    let lefts: Vec<&Side> = records.iter().filter(|r| r.left).collect();
    let rights: Vec<&Side> = records.iter().filter(|r| !r.left).collect();
    let mut right_joined = vec![false; rights.len()];
    let mut out = Vec::new();
    for l in &lefts {
        let mut joined = false;
        for (j, r) in rights.iter().enumerate() {
            if r.key == l.key && l.ts - before <= r.ts && r.ts <= l.ts + after {
                out.push((
                    l.key,
                    Some(format!("{}+{}", l.value, r.value)),
                    l.ts.max(r.ts),
                ));
                joined = true;
                right_joined[j] = true;
            }
        }
        if !joined && kind != JoinKind::Inner {
            out.push((l.key, Some(format!("{}+null", l.value)), l.ts));
        }
    }
    if kind == JoinKind::Outer {
        for (r, _) in rights.iter().zip(&right_joined).filter(|(_, j)| !**j) {
            out.push((r.key, Some(format!("null+{}", r.value)), r.ts));
        }
    }
    out.sort();
    out
}

/// Runs a join of `left` and `right` with these windows over seeded
/// in-order inputs and compares it with [`join_model`]. The grace is at
/// least 1 ms so that the model's window bounds are the stores' too: with
/// no grace, a record exactly `before` (or `after`) away from the newest
/// record of its own side is already past the store's retention.
fn check_join(kind: JoinKind, seed: u64, windows: &[(i64, i64, i64)]) -> TestResult {
    let mut rng = Lcg(seed);
    for &(before, after, grace) in windows {
        assert!(grace >= 1, "see check_join's doc");
        for round in 0..12 {
            let builder = StreamsBuilder::new();
            let left = builder.stream::<i32, String>("left");
            let right = builder.stream::<i32, String>("right");
            let join_windows = JoinWindows::of_time_difference_and_grace(ms(0), ms(grace))?
                .before(ms(before))?
                .after(ms(after))?;
            let joined = match kind {
                JoinKind::Inner => {
                    left.join_stream(&right, |l, r| format!("{l}+{r}"), join_windows)
                }
                JoinKind::Left => left.left_join_stream(
                    &right,
                    |l, r: Option<&String>| format!("{l}+{}", r.map_or("null", String::as_str)),
                    join_windows,
                ),
                JoinKind::Outer => left.outer_join_stream(
                    &right,
                    |l: Option<&String>, r: Option<&String>| {
                        let show = |v: Option<&String>| v.map_or("null", String::as_str).to_owned();
                        format!("{}+{}", show(l), show(r))
                    },
                    join_windows,
                ),
            };
            joined.to("out");
            let driver = TopologyTestDriver::new(builder.build()?)?;
            let left_in = driver.create_input_topic("left", I32Serde, StringSerde);
            let right_in = driver.create_input_topic("right", I32Serde, StringSerde);
            let out = driver.create_output_topic("out", I32Serde, StringSerde);
            let records = join_input(&mut rng, 40, before + after + grace + 100);
            for r in &records {
                let topic = if r.left { &left_in } else { &right_in };
                topic.pipe_key_value_at(r.key, r.value.clone(), r.ts);
            }
            let mut actual: Vec<_> = out.read_records_to_list().into_iter().map(triple).collect();
            actual.sort();
            assert_eq!(
                actual,
                join_model(&records, before, after, kind),
                "{kind:?} join, before {before}, after {after}, grace {grace}, round {round}: {records:?}"
            );
        }
    }
    Ok(())
}

/// KAFKA-4153, "Incorrect KStream-KStream join behavior with asymmetric
/// time window": a window with different `before` and `after` bounds was
/// applied mirrored on one side, joining pairs outside it and missing
/// pairs inside. Inner joins over asymmetric windows (one bound 0, or
/// both different), against the pairs the window admits.
#[test]
fn kafka_4153_asymmetric_join_windows_admit_exactly_their_pairs() -> TestResult {
    check_join(
        JoinKind::Inner,
        4153,
        &[(0, 5, 1), (5, 0, 1), (2, 7, 3), (7, 1, 2)],
    )
}

/// KAFKA-10847, "Avoid spurious left/outer join results in stream-stream
/// join": a left (or outer) join emitted a record padded with `null` as
/// soon as it found no match, and then the joined result too when a match
/// came within the window. Now a record is padded only once its window
/// has closed without a match: every left (and, for an outer join, right)
/// record either joins or is padded, never both.
#[test]
fn kafka_10847_left_and_outer_joins_pad_only_records_that_never_join() -> TestResult {
    let windows = [(3, 3, 1), (5, 5, 4), (1, 1, 2)];
    check_join(JoinKind::Left, 10847, &windows)?;
    check_join(JoinKind::Outer, 10848, &windows)
}

/// KAFKA-13721, spurious left/outer join results with asymmetric join
/// windows (its fix: "asymmetric join-windows should not emit spurious
/// left/outer join results"): with `before` and `after` different (one of
/// them 0), the fix of KAFKA-10847 looked back by the wrong bound and
/// still padded records that a match would reach later. Left and outer
/// joins over asymmetric windows, against the model.
#[test]
fn kafka_13721_asymmetric_windows_pad_no_record_that_joins() -> TestResult {
    let windows = [(0, 6, 1), (6, 0, 1), (1, 5, 2), (5, 2, 1)];
    check_join(JoinKind::Left, 13721, &windows)?;
    check_join(JoinKind::Outer, 13722, &windows)
}

// ---------------------------------------------------------------------
// KAFKA-12508
// ---------------------------------------------------------------------

/// KAFKA-12508, "Emit-on-change tables may lose updates on error or
/// restart in at_least_once": KIP-557 made a materialized table source
/// drop an update equal to its row, which could lose updates after a
/// restart; Kafka disabled it, so a table source forwards (and logs)
/// every update, equal or not, in order or not. With the record cache,
/// the one update that gives nothing is the delete of a row that does not
/// exist. First the scenario of Kafka's disabled
/// `testKTableSourceEmitOnChange`, then seeded inputs, against that model.
#[test]
fn kafka_12508_table_source_forwards_updates_equal_to_the_row() -> TestResult {
    /// What the source forwards, and the table after it.
    #[allow(clippy::type_complexity)]
    fn model(
        inputs: &[(String, Option<i32>, i64)],
    ) -> (
        Vec<(String, Option<i32>, i64)>,
        BTreeMap<String, (i32, i64)>,
    ) {
        let mut table = BTreeMap::new();
        let mut forwarded = Vec::new();
        for (k, v, ts) in inputs {
            match v {
                Some(v) => {
                    table.insert(k.clone(), (*v, *ts));
                }
                None if table.remove(k).is_none() => continue,
                None => {}
            }
            forwarded.push((k.clone(), *v, *ts));
        }
        (forwarded, table)
    }
    let run = |inputs: &[(String, Option<i32>, i64)]| -> TestResult {
        let builder = StreamsBuilder::new();
        builder
            .table_with::<String, i32>("topic1", Materialized::as_("store"))
            .to_stream()
            .to("output");
        let driver = TopologyTestDriver::new(builder.build()?)?;
        let input = driver.create_input_topic("topic1", StringSerde, I32Serde);
        let output = driver.create_output_topic("output", StringSerde, I32Serde);
        let changelog =
            driver.create_output_topic("test-app-store-changelog", StringSerde, I32Serde);
        for (k, v, ts) in inputs {
            input.pipe_record(TestRecord::new(Some(k.clone()), *v).at(*ts));
        }
        let (forwarded, table) = model(inputs);
        let read = |topic: &streams_test::TestOutputTopic<'_, String, i32>| -> Vec<_> {
            topic
                .read_records_to_list()
                .into_iter()
                .map(triple)
                .collect()
        };
        assert_eq!(read(&output), forwarded, "{inputs:?}");
        assert_eq!(read(&changelog), forwarded, "{inputs:?}");
        let store: BTreeMap<String, (i32, i64)> = driver
            .timestamped_key_value_store::<String, i32>("store")?
            .all()
            .into_iter()
            .map(|(k, v)| (k, (v.value, v.timestamp)))
            .collect();
        assert_eq!(store, table, "{inputs:?}");
        Ok(())
    };
    let kafka = [
        ("A", 1, 10),
        ("B", 2, 11),
        ("A", 1, 12),
        ("B", 3, 13),
        ("A", 1, 9),
    ];
    run(&kafka.map(|(k, v, ts)| (k.to_owned(), Some(v), ts)))?;
    let mut rng = Lcg(12508);
    for _ in 0..20 {
        let inputs: Vec<(String, Option<i32>, i64)> = (0..30)
            .map(|_| {
                let key = ["A", "B", "C"][rng.below(3) as usize].to_owned();
                let value = (rng.below(4) != 0).then(|| rng.below(2) as i32);
                (key, value, rng.below_i64(20))
            })
            .collect();
        run(&inputs)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------
// KAFKA-4468
// ---------------------------------------------------------------------

/// KAFKA-4468, "Correctly calculate the window end timestamp after read
/// from state stores": a windowed key read back from a window store (or
/// from a windowed topic) had lost its window's end. A hopping-window
/// count's results, read from the output topic and from its store, carry
/// `end = start + size`, with the counts of a naive model that puts each
/// record into every window `[start, start + size)` it falls in, `start`
/// a non-negative multiple of the advance.
#[test]
fn kafka_4468_windows_read_back_end_at_start_plus_size() -> TestResult {
    let mut rng = Lcg(4468);
    for (size, advance) in [(10, 10), (10, 5), (12, 3)] {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("clicks")
            .group_by_key()
            .windowed_by(TimeWindows::of_size_with_no_grace(ms(size))?.advance_by(ms(advance))?)
            .count_with(Materialized::as_("counts").with_retention(Duration::from_secs(3600)))
            .to_stream()
            .to_with(
                "counts-out",
                Produced::with(
                    WindowedSerde::time_with_size(StringSerde, ms(size)),
                    I64Serde,
                ),
            );
        let driver = TopologyTestDriver::new(builder.build()?)?;
        let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
        let out = driver.create_output_topic(
            "counts-out",
            WindowedSerde::time_with_size(StringSerde, ms(size)),
            I64Serde,
        );
        let mut counts: BTreeMap<(String, i64), i64> = BTreeMap::new();
        let mut updates = Vec::new();
        let mut ts = 0;
        for _ in 0..40 {
            ts += rng.below_i64(4);
            let key = ["u1", "u2"][rng.below(2) as usize].to_owned();
            clicks.pipe_key_value_at(key.clone(), "click", ts);
            let first = (ts - size + advance).max(0).div_euclid(advance) * advance;
            for start in (first..=ts).step_by(advance as usize) {
                let count = counts.entry((key.clone(), start)).or_default();
                *count += 1;
                updates.push((
                    Windowed::new(key.clone(), Window::new(start, start + size)),
                    Some(*count),
                    ts,
                ));
            }
        }
        let actual: Vec<_> = out.read_records_to_list().into_iter().map(triple).collect();
        assert_eq!(actual, updates, "size {size}, advance {advance}");
        let stored: Vec<(Windowed<String>, i64)> =
            driver.window_store::<String, i64>("counts")?.all();
        let mut expected: Vec<_> = counts
            .iter()
            .map(|((key, start), n)| {
                (
                    Windowed::new(key.clone(), Window::new(*start, start + size)),
                    *n,
                )
            })
            .collect();
        let mut stored_sorted = stored;
        stored_sorted.sort_by_key(|(w, _)| (w.key.clone(), w.window.start));
        expected.sort_by_key(|(w, _)| (w.key.clone(), w.window.start));
        assert_eq!(stored_sorted, expected, "size {size}, advance {advance}");
    }
    Ok(())
}

// ---------------------------------------------------------------------
// KAFKA-7895
// ---------------------------------------------------------------------

/// The topology of the KAFKA-7895 test: a hopping-window count with
/// grace, its final results only.
fn final_counts(
    size: i64,
    advance: i64,
    grace: i64,
) -> Result<Topology, Box<dyn std::error::Error>> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("events")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(ms(size), ms(grace))?.advance_by(ms(advance))?)
        .count_with(Materialized::as_("counts"))
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()).with_name("final"))
        .to_stream()
        .to_with(
            "final-counts",
            Produced::with(
                WindowedSerde::time_with_size(StringSerde, ms(size)),
                I64Serde,
            ),
        );
    Ok(builder.build()?)
}

/// KAFKA-7895, "Ktable supress operator emitting more than one record for
/// the same key per window": after a restart, `suppress(untilWindowCloses)`
/// reckoned stream time from the restored buffer's changelog records and
/// emitted windows again, or early. The count and its suppression buffer
/// are restored from their changelogs on a simulated cluster between two
/// runs; over both runs each window that closed comes out exactly once,
/// with its final count and the timestamp of its newest record, as a
/// model computes them: a record counts in a window unless the window
/// closed (end + grace at or before stream time) before it came, and a
/// window is final once stream time reaches its end + grace. The second
/// run's records are no older than the first run's newest (a restart
/// here does not carry stream time over).
#[test]
fn kafka_7895_suppress_emits_each_window_once_across_a_restart() -> TestResult {
    type Final = (Windowed<String>, Option<i64>, i64);
    fn model(records: &[(String, i64)], size: i64, advance: i64, grace: i64) -> Vec<Final> {
        let mut windows: BTreeMap<(i64, String), (i64, i64)> = BTreeMap::new();
        let mut stream_time = -1;
        for (key, ts) in records {
            stream_time = stream_time.max(*ts);
            let first = (ts - size + advance).max(0).div_euclid(advance) * advance;
            for start in (first..=*ts).step_by(advance as usize) {
                if start + size + grace > stream_time {
                    let (count, newest) = windows.entry((start, key.clone())).or_insert((0, -1));
                    *count += 1;
                    *newest = (*newest).max(*ts);
                }
            }
        }
        let mut finals: Vec<Final> = windows
            .into_iter()
            .filter(|((start, _), _)| start + size + grace <= stream_time)
            .map(|((start, key), (count, newest))| {
                (
                    Windowed::new(key, Window::new(start, start + size)),
                    Some(count),
                    newest,
                )
            })
            .collect();
        finals.sort_by_key(|(w, _, _)| (w.window.start, w.key.clone()));
        finals
    }
    let mut rng = Lcg(7895);
    for (size, advance, grace) in [(10, 10, 5), (10, 5, 3), (6, 2, 0)] {
        for round in 0..6 {
            let mut newest = 0;
            let mut records: Vec<(String, i64)> = (0..50)
                .map(|_| {
                    newest += rng.below_i64(4);
                    // Now and then a record from a little while ago, some
                    // within the grace period and some beyond it.
                    let ts = if rng.below(4) == 0 {
                        (newest - rng.below_i64(grace + 4)).max(0)
                    } else {
                        newest
                    };
                    (["a", "b"][rng.below(2) as usize].to_owned(), ts)
                })
                .collect();
            // The second run starts at the first run's newest record.
            let half = records.len() / 2;
            let first_newest = records[..half].iter().map(|(_, ts)| *ts).max().unwrap_or(0);
            for (_, ts) in &mut records[half..] {
                *ts = (*ts).max(first_newest);
            }

            let cluster = Cluster::builder().build();
            let mut emitted: Vec<Final> = Vec::new();
            for run in [&records[..half], &records[half..]] {
                let driver = TopologyTestDriver::builder(final_counts(size, advance, grace)?)
                    .cluster(cluster.clone())
                    .build()?;
                let events = driver.create_input_topic("events", StringSerde, StringSerde);
                let out = driver.create_output_topic(
                    "final-counts",
                    WindowedSerde::time_with_size(StringSerde, ms(size)),
                    I64Serde,
                );
                for (key, ts) in run {
                    events.pipe_key_value_at(key.clone(), "e", *ts);
                }
                emitted.extend(out.read_records_to_list().into_iter().map(triple));
                driver.close()?;
            }
            emitted.sort_by_key(|(w, _, _)| (w.window.start, w.key.clone()));
            assert_eq!(
                emitted,
                model(&records, size, advance, grace),
                "size {size}, advance {advance}, grace {grace}, round {round}: {records:?}"
            );
        }
    }
    Ok(())
}
