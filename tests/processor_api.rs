//! The Processor API: `Topology::add_source` / `add_processor` /
//! `add_sink`, forwarding, punctuation by stream time and by wall-clock
//! time, cancellation, `close`, and the record metadata a processor sees.
//!
//! Expected values are those of the oracle's golden files
//! (`compat/golden/papi_*.json`, `punctuate_*.json`,
//! `processor_context_time.json`) and of Kafka's `TopologyTestDriverTest`.

use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::processor::{
    Cancellable, Processor, ProcessorContext, Punctuation, PunctuationType,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Record, Result, StreamsError, Topology, TopologyError};
use streams_test::TopologyTestDriver;

use crate::support::{Log, r, show};

fn read(driver: &TopologyTestDriver, topic: &str) -> Vec<streams_test::TestRecord<String, String>> {
    driver
        .create_output_topic(topic, StringSerde, StringSerde)
        .read_records_to_list()
}

/// The oracle's `UpperProcessor`.
struct Upper;

impl Processor<String, String> for Upper {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let value = record.value.as_ref().map(|v| v.to_uppercase());
        ctx.forward(record.with_value(value))
    }
}

/// The oracle's `papi_basic`.
#[test]
fn source_processor_sink() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("Source", "in")?
        .add_processor("Upper", || Upper, &["Source"])?
        .add_sink::<String, String>("Sink", "out", &["Upper"])?;
    assert_eq!(topology.node_names(), ["Source", "Upper", "Sink"]);
    assert!(topology.contains_node("Upper"));
    assert!(!topology.contains_node("upper"));
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "hello", 0);
    input.pipe_key_value_at("k2", "World", 7);
    assert_eq!(
        read(&driver, "out"),
        [r("k1", "HELLO", 0), r("k2", "WORLD", 7)]
    );
    Ok(())
}

/// The oracle's `RouterProcessor`: "all" goes to every child, numbers to
/// `EvenSink` or `OddSink` by name.
struct Router;

impl Processor<String, String> for Router {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        match record.value.as_deref() {
            Some("all") => ctx.forward(record),
            Some(v) => {
                let n: i64 = v
                    .parse()
                    .map_err(|e| StreamsError::processing(format!("not a number: {e}")))?;
                let child = if n % 2 == 0 { "EvenSink" } else { "OddSink" };
                ctx.forward_to(child, record)
            }
            None => Ok(()),
        }
    }
}

fn router_topology() -> Result<Topology> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("Source", "in")?
        .add_processor("Router", || Router, &["Source"])?
        .add_sink::<String, String>("EvenSink", "out-even", &["Router"])?
        .add_sink::<String, String>("OddSink", "out-odd", &["Router"])?;
    Ok(topology)
}

/// The oracle's `papi_forward_to_named_child`.
#[test]
fn forward_to_all_children_and_to_a_named_child() -> Result<()> {
    let driver = TopologyTestDriver::new(router_topology()?)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "1", 0);
    input.pipe_key_value_at("k2", "2", 1);
    input.pipe_key_value_at("k3", "all", 2);
    input.pipe_key_value_at("k4", "4", 3);
    assert_eq!(
        read(&driver, "out-even"),
        [r("k2", "2", 1), r("k3", "all", 2), r("k4", "4", 3)]
    );
    assert_eq!(
        read(&driver, "out-odd"),
        [r("k1", "1", 0), r("k3", "all", 2)]
    );
    Ok(())
}

/// Forwards every record to a child that does not exist.
struct Misroute;

impl Processor<String, String> for Misroute {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        ctx.forward_to("nope", record)
    }
}

#[test]
fn forward_to_an_unknown_child_is_an_error_naming_it() -> Result<()> {
    let mut topology = Topology::new();
    // A node named `nope` exists, but it is not a child of `Router`; it is
    // the source's first child, so it gets the record before `Router` fails.
    topology
        .add_source::<String, String>("Source", "in")?
        .add_sink::<String, String>("nope", "nope-topic", &["Source"])?
        .add_processor("Router", || Misroute, &["Source"])?
        .add_sink::<String, String>("EvenSink", "out-even", &["Router"])?
        .add_sink::<String, String>("OddSink", "out-odd", &["Router"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let err = input
        .try_pipe_record(streams_test::TestRecord::key_value("k", "v"))
        .expect_err("`nope` is not a child of `Router`");
    match &err {
        StreamsError::UnknownChild {
            node,
            child,
            children,
        } => {
            assert_eq!(node, "Router");
            assert_eq!(child, "nope");
            assert_eq!(children, &["EvenSink", "OddSink"]);
        }
        other => panic!("expected UnknownChild, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        r#"processor `Router` forwarded to child `nope`, which is not one of its children ["EvenSink", "OddSink"]"#
    );
    assert_eq!(read(&driver, "nope-topic"), [r("k", "v", 0)]);
    assert_eq!(
        driver.produced_topic_names(),
        std::collections::BTreeSet::from(["nope-topic".to_owned()])
    );
    Ok(())
}

/// The oracle's `TopicPrefixProcessor`.
struct TopicPrefix;

impl Processor<String, String> for TopicPrefix {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let topic = ctx
            .record_metadata()
            .map_or_else(|| "?".to_owned(), |m| m.topic.to_string());
        let value = format!("{topic}:{}", record.value.clone().unwrap_or_default());
        ctx.forward(record.with_value(Some(value)))
    }
}

/// The oracle's `papi_multiple_parents`.
#[test]
fn processor_with_several_parents() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("SourceA", "in-a")?
        .add_source::<String, String>("SourceB", "in-b")?
        .add_processor("Prefix", || TopicPrefix, &["SourceA", "SourceB"])?
        .add_sink::<String, String>("Sink", "out", &["Prefix"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let a = driver.create_input_topic("in-a", StringSerde, StringSerde);
    let b = driver.create_input_topic("in-b", StringSerde, StringSerde);
    a.pipe_key_value_at("k1", "x", 0);
    b.pipe_key_value_at("k2", "y", 1);
    a.pipe_key_value_at("k3", "z", 2);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "in-a:x", 0),
            r("k2", "in-b:y", 1),
            r("k3", "in-a:z", 2)
        ]
    );
    Ok(())
}

/// The oracle's `LongToStringProcessor`: (value * 2, key) at timestamp + 1000.
struct LongToString;

impl Processor<String, i64, i64, String> for LongToString {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, i64, String>,
        record: Record<String, i64>,
    ) -> Result<()> {
        ctx.forward(Record::new(
            record.value.map(|v| v * 2),
            record.key,
            record.timestamp + 1000,
        ))
    }
}

/// The oracle's `papi_explicit_serdes`.
#[test]
fn explicit_serdes_on_source_and_sink() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source_with_serdes::<String, i64>("Source", "in", StringSerde, I64Serde)?
        .add_processor("Convert", || LongToString, &["Source"])?
        .add_sink_with_serdes::<i64, String>("Sink", "out", I64Serde, StringSerde, &["Convert"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, I64Serde);
    input.pipe_key_value_at("a", 1, 10);
    input.pipe_key_value_at("b", -21, 20);
    let out = driver.create_output_topic("out", I64Serde, StringSerde);
    assert_eq!(
        out.read_records_to_list(),
        [
            streams_test::TestRecord::key_value(2, "a").at(1010),
            streams_test::TestRecord::key_value(-42, "b").at(1020),
        ]
    );
    Ok(())
}

/// The oracle's `SwapAndShiftProcessor`: headers are kept.
struct SwapAndShift;

impl Processor<String, String> for SwapAndShift {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        ctx.forward(Record {
            key: record.value,
            value: record.key,
            timestamp: record.timestamp + 1000,
            headers: record.headers,
        })
    }
}

/// The oracle's `papi_swap_and_shift_timestamp`.
#[test]
fn processor_rewrites_key_value_and_timestamp() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("Source", "in")?
        .add_processor("Swap", || SwapAndShift, &["Source"])?
        .add_sink::<String, String>("Sink", "out", &["Swap"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(
        streams_test::TestRecord::key_value("k1", "v1")
            .with_header("h", "x")
            .at(5),
    );
    input.pipe_key_value_at("k2", "v2", 3);
    assert_eq!(
        read(&driver, "out"),
        [
            r("v1", "k1", 1005).with_header("h", "x"),
            r("v2", "k2", 1003)
        ]
    );
    Ok(())
}

/// The oracle's `HeaderRewriteProcessor`.
struct HeaderRewrite;

impl Processor<String, String> for HeaderRewrite {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let mut headers = record.headers.clone();
        headers.remove("drop").add("seen", "yes");
        ctx.forward(record.with_headers(headers))
    }
}

/// The oracle's `headers_modified_by_processor`.
#[test]
fn processor_rewrites_headers() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("Source", "in")?
        .add_processor("Rewrite", || HeaderRewrite, &["Source"])?
        .add_sink::<String, String>("Sink", "out", &["Rewrite"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(
        streams_test::TestRecord::key_value("k1", "a")
            .with_header("keep", "1")
            .with_header("drop", "2")
            .with_header("keep", "3")
            .at(0),
    );
    input.pipe_key_value_at("k2", "b", 1);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "a", 0)
                .with_header("keep", "1")
                .with_header("keep", "3")
                .with_header("seen", "yes"),
            r("k2", "b", 1).with_header("seen", "yes"),
        ]
    );
    Ok(())
}

/// The oracle's `Ticker`: schedules one punctuation per kind in `init`,
/// forwards every record, and forwards `("tick", "<kind>@<ts>")` at `ts`
/// on each punctuation; cancels a schedule after its `cancel_after`-th
/// punctuation when that is not 0.
struct Ticker {
    log: Log,
    interval: u64,
    kinds: Vec<PunctuationType>,
    cancel_after: usize,
    punctuations: usize,
    handles: Vec<Cancellable>,
}

fn ticker(log: &Log, interval: u64, cancel_after: usize, kinds: &[PunctuationType]) -> Ticker {
    Ticker {
        log: log.clone(),
        interval,
        kinds: kinds.to_vec(),
        cancel_after,
        punctuations: 0,
        handles: Vec::new(),
    }
}

fn label(kind: PunctuationType) -> &'static str {
    match kind {
        PunctuationType::StreamTime => "stream",
        PunctuationType::WallClockTime => "wall",
    }
}

impl Processor<String, String> for Ticker {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, String>) -> Result<()> {
        for &kind in &self.kinds {
            let handle = ctx.schedule(Duration::from_millis(self.interval), kind)?;
            self.handles.push(handle);
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        self.log.push(format!(
            "process {}@{}",
            show(record.key.as_ref()),
            record.timestamp
        ));
        ctx.forward(record)
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        ts: i64,
        p: &Punctuation,
    ) -> Result<()> {
        self.punctuations += 1;
        let label = label(p.kind);
        self.log.push(format!("punctuate {label}@{ts}"));
        ctx.forward(Record::new(
            Some("tick".to_owned()),
            Some(format!("{label}@{ts}")),
            ts,
        ))?;
        if self.cancel_after > 0 && self.punctuations == self.cancel_after {
            self.log.push(format!("cancel {label}"));
            for handle in self.handles.iter().filter(|h| h.id() == p.id) {
                handle.cancel();
            }
        }
        Ok(())
    }
}

fn ticker_driver(
    log: &Log,
    interval: u64,
    cancel_after: usize,
    kinds: &[PunctuationType],
) -> TopologyTestDriver {
    let mut topology = Topology::new();
    let supplier = {
        let log = log.clone();
        let kinds = kinds.to_vec();
        move || ticker(&log, interval, cancel_after, &kinds)
    };
    topology
        .add_source::<String, String>("Source", "in")
        .and_then(|t| t.add_processor("Ticker", supplier, &["Source"]))
        .and_then(|t| t.add_sink::<String, String>("Sink", "out", &["Ticker"]))
        .expect("valid topology");
    TopologyTestDriver::builder(topology)
        .initial_wall_clock_time(0)
        .build()
        .expect("driver starts")
}

fn advance(driver: &TopologyTestDriver, log: &Log, ms: u64) {
    log.push(format!("advanceWallClockTime({ms})"));
    driver.advance_wall_clock_time(Duration::from_millis(ms));
}

/// The oracle's `punctuate_stream_time`: aligned to 0, fires on the first
/// record, receives the current stream time, skips missed ticks, and an
/// out-of-order record does not move stream time back.
#[test]
fn punctuate_by_stream_time() {
    let log = Log::new();
    let driver = ticker_driver(&log, 10, 0, &[PunctuationType::StreamTime]);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for (i, ts) in [0, 5, 10, 25, 31, 29, 40, 100].into_iter().enumerate() {
        input.pipe_key_value_at(format!("r{}", i + 1), format!("v{}", i + 1), ts);
    }
    assert_eq!(
        log.entries(),
        [
            "process r1@0",
            "punctuate stream@0",
            "process r2@5",
            "process r3@10",
            "punctuate stream@10",
            "process r4@25",
            "punctuate stream@25",
            "process r5@31",
            "punctuate stream@31",
            "process r6@29",
            "process r7@40",
            "punctuate stream@40",
            "process r8@100",
            "punctuate stream@100",
        ]
    );
    assert_eq!(
        read(&driver, "out"),
        [
            r("r1", "v1", 0),
            r("tick", "stream@0", 0),
            r("r2", "v2", 5),
            r("r3", "v3", 10),
            r("tick", "stream@10", 10),
            r("r4", "v4", 25),
            r("tick", "stream@25", 25),
            r("r5", "v5", 31),
            r("tick", "stream@31", 31),
            r("r6", "v6", 29),
            r("r7", "v7", 40),
            r("tick", "stream@40", 40),
            r("r8", "v8", 100),
            r("tick", "stream@100", 100),
        ]
    );
    assert_eq!(driver.stream_time(), 100);
}

/// After a gap the next fire time is `t + (missed + 1) * interval`, from
/// the scheduled time `t` that fired: with interval 10, the fire at 71
/// (scheduled 0) sets the next to 80; 95 fires and sets it to 100, so 99
/// does not fire and 100 does.
#[test]
fn stream_time_punctuation_skips_missed_ticks() {
    let log = Log::new();
    let driver = ticker_driver(&log, 10, 0, &[PunctuationType::StreamTime]);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for ts in [71, 95, 99, 100, 109, 135, 139, 140] {
        input.pipe_key_value_at("r", "v", ts);
    }
    let fired: Vec<String> = log
        .entries()
        .into_iter()
        .filter(|e| e.starts_with("punctuate"))
        .collect();
    assert_eq!(
        fired,
        [
            "punctuate stream@71",
            "punctuate stream@95",
            "punctuate stream@100",
            "punctuate stream@135",
            "punctuate stream@140",
        ]
    );
}

/// The oracle's `punctuate_wall_clock`: the first punctuation is due one
/// interval after start, and each advance fires at most once, with the
/// current wall-clock time.
#[test]
fn punctuate_by_wall_clock_time() {
    let log = Log::new();
    let driver = ticker_driver(&log, 10, 0, &[PunctuationType::WallClockTime]);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    advance(&driver, &log, 5);
    advance(&driver, &log, 5);
    advance(&driver, &log, 3);
    input.pipe_key_value_at("r1", "v1", 100);
    advance(&driver, &log, 30);
    advance(&driver, &log, 1);
    advance(&driver, &log, 6);
    advance(&driver, &log, 0);
    advance(&driver, &log, 25);
    assert_eq!(
        log.entries(),
        [
            "advanceWallClockTime(5)",
            "advanceWallClockTime(5)",
            "punctuate wall@10",
            "advanceWallClockTime(3)",
            "process r1@100",
            "advanceWallClockTime(30)",
            "punctuate wall@43",
            "advanceWallClockTime(1)",
            "advanceWallClockTime(6)",
            "punctuate wall@50",
            "advanceWallClockTime(0)",
            "advanceWallClockTime(25)",
            "punctuate wall@75",
        ]
    );
    assert_eq!(
        read(&driver, "out"),
        [
            r("tick", "wall@10", 10),
            r("r1", "v1", 100),
            r("tick", "wall@43", 43),
            r("tick", "wall@50", 50),
            r("tick", "wall@75", 75),
        ]
    );
    assert_eq!(driver.wall_clock_time(), 75);
    assert_eq!(
        driver.stream_time(),
        100,
        "the wall clock does not move stream time"
    );
}

/// The first wall-clock punctuation is at start + interval, also when the
/// driver does not start at 0.
#[test]
fn wall_clock_punctuation_starts_one_interval_after_start() {
    let log = Log::new();
    let mut topology = Topology::new();
    let supplier = {
        let log = log.clone();
        move || ticker(&log, 1_000, 0, &[PunctuationType::WallClockTime])
    };
    topology
        .add_source::<String, String>("Source", "in")
        .and_then(|t| t.add_processor("Ticker", supplier, &["Source"]))
        .and_then(|t| t.add_sink::<String, String>("Sink", "out", &["Ticker"]))
        .expect("valid topology");
    let driver = TopologyTestDriver::builder(topology)
        .initial_wall_clock_time(5_500)
        .build()
        .expect("driver starts");
    driver.advance_wall_clock_time(Duration::from_millis(999));
    assert!(log.entries().is_empty());
    driver.advance_wall_clock_time(Duration::from_millis(1));
    driver.advance_wall_clock_time(Duration::from_millis(10_000));
    assert_eq!(
        log.entries(),
        ["punctuate wall@6500", "punctuate wall@16500"]
    );
}

/// The oracle's `punctuate_cancel`: cancelled on its second call, the
/// punctuation never fires again.
#[test]
fn cancel_stops_a_punctuation() {
    let log = Log::new();
    let driver = ticker_driver(&log, 10, 2, &[PunctuationType::StreamTime]);
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for (i, ts) in [0, 10, 20, 30, 40].into_iter().enumerate() {
        input.pipe_key_value_at(format!("r{}", i + 1), format!("v{}", i + 1), ts);
    }
    assert_eq!(
        log.entries(),
        [
            "process r1@0",
            "punctuate stream@0",
            "process r2@10",
            "punctuate stream@10",
            "cancel stream",
            "process r3@20",
            "process r4@30",
            "process r5@40",
        ]
    );
    assert_eq!(
        read(&driver, "out"),
        [
            r("r1", "v1", 0),
            r("tick", "stream@0", 0),
            r("r2", "v2", 10),
            r("tick", "stream@10", 10),
            r("r3", "v3", 20),
            r("r4", "v4", 30),
            r("r5", "v5", 40),
        ]
    );
}

/// A wall-clock punctuation cancelled on its first call does not fire on
/// later advances.
#[test]
fn cancel_stops_a_wall_clock_punctuation() {
    let log = Log::new();
    let driver = ticker_driver(&log, 10, 1, &[PunctuationType::WallClockTime]);
    advance(&driver, &log, 10);
    advance(&driver, &log, 10);
    advance(&driver, &log, 100);
    assert_eq!(
        log.entries(),
        [
            "advanceWallClockTime(10)",
            "punctuate wall@10",
            "cancel wall",
            "advanceWallClockTime(10)",
            "advanceWallClockTime(100)",
        ]
    );
    assert_eq!(read(&driver, "out"), [r("tick", "wall@10", 10)]);
}

/// The oracle's `punctuate_stream_and_wall`.
#[test]
fn stream_and_wall_clock_punctuations_together() {
    let log = Log::new();
    let driver = ticker_driver(
        &log,
        10,
        0,
        &[PunctuationType::StreamTime, PunctuationType::WallClockTime],
    );
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("r1", "v1", 0);
    advance(&driver, &log, 10);
    input.pipe_key_value_at("r2", "v2", 10);
    input.pipe_key_value_at("r3", "v3", 20);
    advance(&driver, &log, 15);
    input.pipe_key_value_at("r4", "v4", 1000);
    assert_eq!(
        log.entries(),
        [
            "process r1@0",
            "punctuate stream@0",
            "advanceWallClockTime(10)",
            "punctuate wall@10",
            "process r2@10",
            "punctuate stream@10",
            "process r3@20",
            "punctuate stream@20",
            "advanceWallClockTime(15)",
            "punctuate wall@25",
            "process r4@1000",
            "punctuate stream@1000",
        ]
    );
    assert_eq!(
        read(&driver, "out"),
        [
            r("r1", "v1", 0),
            r("tick", "stream@0", 0),
            r("tick", "wall@10", 10),
            r("r2", "v2", 10),
            r("tick", "stream@10", 10),
            r("r3", "v3", 20),
            r("tick", "stream@20", 20),
            r("tick", "wall@25", 25),
            r("r4", "v4", 1000),
            r("tick", "stream@1000", 1000),
        ]
    );
}

/// The oracle's `LateScheduler`: schedules both kinds from `process` on
/// the first record.
struct LateScheduler {
    log: Log,
    scheduled: bool,
}

impl Processor<String, String> for LateScheduler {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        self.log.push(format!(
            "process {}@{}",
            show(record.key.as_ref()),
            record.timestamp
        ));
        if !self.scheduled {
            self.scheduled = true;
            self.log.push("schedule stream+wall 10ms");
            ctx.schedule(Duration::from_millis(10), PunctuationType::StreamTime)?;
            ctx.schedule(Duration::from_millis(10), PunctuationType::WallClockTime)?;
        }
        ctx.forward(record)
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        ts: i64,
        p: &Punctuation,
    ) -> Result<()> {
        let label = label(p.kind);
        self.log.push(format!("punctuate {label}@{ts}"));
        ctx.forward(Record::new(
            Some("tick".to_owned()),
            Some(format!("{label}@{ts}")),
            ts,
        ))
    }
}

/// The oracle's `punctuate_scheduled_in_process`.
#[test]
fn punctuations_scheduled_while_processing() {
    let log = Log::new();
    let mut topology = Topology::new();
    let supplier = {
        let log = log.clone();
        move || LateScheduler {
            log: log.clone(),
            scheduled: false,
        }
    };
    topology
        .add_source::<String, String>("Source", "in")
        .and_then(|t| t.add_processor("LateScheduler", supplier, &["Source"]))
        .and_then(|t| t.add_sink::<String, String>("Sink", "out", &["LateScheduler"]))
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    advance(&driver, &log, 3);
    input.pipe_key_value_at("r1", "v1", 7);
    input.pipe_key_value_at("r2", "v2", 12);
    input.pipe_key_value_at("r3", "v3", 17);
    input.pipe_key_value_at("r4", "v4", 18);
    advance(&driver, &log, 9);
    advance(&driver, &log, 1);
    input.pipe_key_value_at("r5", "v5", 30);
    assert_eq!(
        log.entries(),
        [
            "advanceWallClockTime(3)",
            "process r1@7",
            "schedule stream+wall 10ms",
            "punctuate stream@7",
            "process r2@12",
            "punctuate stream@12",
            "process r3@17",
            "process r4@18",
            "advanceWallClockTime(9)",
            "advanceWallClockTime(1)",
            "punctuate wall@13",
            "process r5@30",
            "punctuate stream@30",
        ]
    );
    assert_eq!(
        read(&driver, "out"),
        [
            r("r1", "v1", 7),
            r("tick", "stream@7", 7),
            r("r2", "v2", 12),
            r("tick", "stream@12", 12),
            r("r3", "v3", 17),
            r("r4", "v4", 18),
            r("tick", "wall@13", 13),
            r("r5", "v5", 30),
            r("tick", "stream@30", 30),
        ]
    );
}

/// What a punctuation is told: its id (the handle's), kind and interval;
/// no record metadata.
struct PunctuationProbe {
    log: Log,
    ids: Vec<u64>,
}

impl Processor<String, String> for PunctuationProbe {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, String>) -> Result<()> {
        let a = ctx.schedule(Duration::from_millis(7), PunctuationType::StreamTime)?;
        let b = ctx.schedule(Duration::from_secs(2), PunctuationType::WallClockTime)?;
        assert_ne!(a.id(), b.id());
        self.ids = vec![a.id(), b.id()];
        Ok(())
    }

    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, String, String>,
        _record: Record<String, String>,
    ) -> Result<()> {
        Ok(())
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        ts: i64,
        p: &Punctuation,
    ) -> Result<()> {
        let which = self
            .ids
            .iter()
            .position(|&id| id == p.id)
            .map_or(-1, |i| i as i64);
        self.log.push(format!(
            "schedule {which} {} every {:?} at {ts}, metadata {:?}, stream time {}, wall clock {}",
            label(p.kind),
            p.interval,
            ctx.record_metadata(),
            ctx.stream_time(),
            ctx.wall_clock_time()
        ));
        Ok(())
    }
}

#[test]
fn punctuate_is_told_which_schedule_fired() {
    let log = Log::new();
    let mut topology = Topology::new();
    let supplier = {
        let log = log.clone();
        move || PunctuationProbe {
            log: log.clone(),
            ids: Vec::new(),
        }
    };
    topology
        .add_source::<String, String>("Source", "in")
        .and_then(|t| t.add_processor("Probe", supplier, &["Source"]))
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "v", 3);
    driver.advance_wall_clock_time(Duration::from_secs(2));
    assert_eq!(
        log.entries(),
        [
            "schedule 0 stream every 7ms at 3, metadata None, stream time 3, wall clock 0",
            "schedule 1 wall every 2s at 2000, metadata None, stream time 3, wall clock 2000",
        ]
    );
}

/// The oracle's `ContextProbe`: record timestamp, stream time, wall
/// clock and record metadata as a processor sees them.
struct ContextProbe;

impl Processor<String, String> for ContextProbe {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let meta = ctx.record_metadata().map_or_else(
            || "no-metadata".to_owned(),
            |m| {
                format!(
                    "topic={},partition={},offset={}",
                    m.topic, m.partition, m.offset
                )
            },
        );
        let value = format!(
            "ts={},st={},wc={},{meta}",
            record.timestamp,
            ctx.stream_time(),
            ctx.wall_clock_time()
        );
        ctx.forward(record.with_value(Some(value)))
    }
}

/// The oracle's `processor_context_time`.
#[test]
fn record_metadata_and_clocks_seen_by_a_processor() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("Source", ["in", "in2"])?
        .add_processor("Probe", || ContextProbe, &["Source"])?
        .add_sink::<String, String>("Sink", "out", &["Probe"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let input2 = driver.create_input_topic("in2", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 5);
    driver.advance_wall_clock_time(Duration::from_millis(100));
    input.pipe_key_value_at("k2", "b", 3);
    input.pipe_key_value_at("k3", "c", 50);
    input2.pipe_key_value_at("k4", "d", 1);
    input.pipe_key_value_at("k5", "e", 60);
    assert_eq!(
        read(&driver, "out"),
        [
            r("k1", "ts=5,st=5,wc=0,topic=in,partition=0,offset=0", 5),
            r("k2", "ts=3,st=5,wc=100,topic=in,partition=0,offset=1", 3),
            r("k3", "ts=50,st=50,wc=100,topic=in,partition=0,offset=2", 50),
            r("k4", "ts=1,st=50,wc=100,topic=in2,partition=0,offset=0", 1),
            r("k5", "ts=60,st=60,wc=100,topic=in,partition=0,offset=3", 60),
        ]
    );
    Ok(())
}

/// Logs its lifecycle and what its context says about it.
struct Lifecycle {
    name: &'static str,
    log: Log,
    fail_close: bool,
}

impl Processor<String, String> for Lifecycle {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, String>) -> Result<()> {
        self.log.push(format!(
            "init {} as {} in {} of {}, children {:?}, stream time {}",
            self.name,
            ctx.node_name(),
            ctx.task_id(),
            ctx.application_id(),
            ctx.children(),
            ctx.stream_time()
        ));
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        self.log.push(format!("process {}", self.name));
        ctx.forward(record)
    }

    fn close(&mut self) -> Result<()> {
        self.log.push(format!("close {}", self.name));
        if self.fail_close {
            return Err(StreamsError::processing(format!(
                "{} cannot close",
                self.name
            )));
        }
        Ok(())
    }
}

fn lifecycle_topology(log: &Log, failing: &'static [&'static str]) -> Result<Topology> {
    let make = |name: &'static str| {
        let log = log.clone();
        move || Lifecycle {
            name,
            log: log.clone(),
            fail_close: failing.contains(&name),
        }
    };
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")?
        .add_processor("p1", make("p1"), &["source"])?
        .add_processor("p2", make("p2"), &["p1"])?
        .add_processor("p3", make("p3"), &["source"])?
        .add_sink::<String, String>("sink", "out", &["p2", "p3"])?;
    Ok(topology)
}

#[test]
fn init_runs_once_per_processor_and_close_closes_every_processor() -> Result<()> {
    let log = Log::new();
    let driver = TopologyTestDriver::builder(lifecycle_topology(&log, &[])?)
        .config(streams_core::StreamsConfig::new("lifecycle-app"))
        .build()?;
    assert_eq!(
        log.entries(),
        [
            r#"init p1 as p1 in 0_0 of lifecycle-app, children ["p2"], stream time -1"#,
            r#"init p2 as p2 in 0_0 of lifecycle-app, children ["sink"], stream time -1"#,
            r#"init p3 as p3 in 0_0 of lifecycle-app, children ["sink"], stream time -1"#,
        ]
    );
    {
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        input.pipe_key_value_at("k", "v", 1);
        assert_eq!(read(&driver, "out"), [r("k", "v", 1), r("k", "v", 1)]);
    }
    driver.close()?;
    assert_eq!(
        log.entries()[3..],
        [
            "process p1",
            "process p2",
            "process p3",
            "close p1",
            "close p2",
            "close p3"
        ]
    );
    Ok(())
}

#[test]
fn close_reports_the_first_failure_and_still_closes_everything() -> Result<()> {
    let log = Log::new();
    let driver = TopologyTestDriver::new(lifecycle_topology(&log, &["p2", "p3"])?)?;
    let err = driver.close().expect_err("p2 and p3 fail to close");
    assert!(
        matches!(&err, StreamsError::Processing { node: Some(node), .. } if node == "p2"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "processor `p2` failed: p2 cannot close");
    assert_eq!(log.entries()[3..], ["close p1", "close p2", "close p3"]);
    Ok(())
}

/// Schedules a punctuation with the interval it is given, in `init`.
struct Scheduler(Duration);

impl Processor<String, String> for Scheduler {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, String>) -> Result<()> {
        ctx.schedule(self.0, PunctuationType::StreamTime)
            .map(|_| ())
    }

    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, String, String>,
        _record: Record<String, String>,
    ) -> Result<()> {
        Ok(())
    }
}

#[test]
fn punctuation_interval_must_be_at_least_one_millisecond() -> Result<()> {
    for interval in [Duration::ZERO, Duration::from_micros(999)] {
        let mut topology = Topology::new();
        topology
            .add_source::<String, String>("source", "in")?
            .add_processor("scheduler", move || Scheduler(interval), &["source"])?;
        let err =
            TopologyTestDriver::new(topology).expect_err("a sub-millisecond interval is refused");
        assert!(
            matches!(
                &err,
                StreamsError::Topology(TopologyError::NonPositiveDuration {
                    what: "a punctuation interval",
                    millis: 0
                })
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "invalid topology: a punctuation interval must be positive, but was 0 ms"
        );
    }
    Ok(())
}

fn topic_by_value(record: &Record<String, String>) -> String {
    format!("to-{}", record.value.as_deref().unwrap_or("none"))
}

#[test]
fn sink_with_a_topic_per_record() -> Result<()> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")?
        .add_sink_with_extractor::<String, String>("sink", topic_by_value, &["source"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 1);
    input.pipe_key_value_at("k2", "b", 2);
    input.pipe_key_value_at("k3", "a", 3);
    assert_eq!(read(&driver, "to-a"), [r("k1", "a", 1), r("k3", "a", 3)]);
    assert_eq!(read(&driver, "to-b"), [r("k2", "b", 2)]);
    Ok(())
}
