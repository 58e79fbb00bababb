//! The Rust side of the compatibility suite: every scenario of the Kafka
//! oracle (`compat/oracle/`, described in `compat/SCENARIOS.md`) written
//! with our API, one function per Java scenario with the same name, run
//! in our `TopologyTestDriver` and compared field by field with the golden
//! file Kafka 4.4's own driver wrote (`compat/golden/<scenario>.json`).
//!
//! - [`every_scenario_matches_its_golden_file`] runs all scenarios and
//!   reports every failure by name at the end, with the topic, the first
//!   differing record and both sides.
//! - [`every_golden_file_has_a_scenario_and_back`] fails by name for a
//!   golden file without a scenario, or a scenario without a golden file.
//! - [`KNOWN_GAPS`] lists what cannot pass yet and why. The harness prints
//!   it on every run (on stderr, past the test output capture), and a gap
//!   that no longer shows is a failure, so the list stays honest.
//!   [`ADAPTED`] lists the scenarios written differently from the Java
//!   ones because of a difference by design, also printed.
//!
//! Set `COMPAT_SCENARIO=<part of a name>` to run only matching scenarios.

mod scenarios_cogroup;
mod scenarios_dlq;
mod scenarios_errors;
mod scenarios_fk_join;
mod scenarios_joins;
mod scenarios_optimization;
mod scenarios_processor_api;
mod scenarios_repartition;
mod scenarios_serde;
mod scenarios_stateful;
mod scenarios_stateless;
mod scenarios_stores;
mod scenarios_time;
mod scenarios_topology;
mod scenarios_versioned;
mod scenarios_windows;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::{Value, json};
use streams_core::dsl::Windowed;
use streams_core::serde::{BytesSerde, F64Serde, I32Serde, I64Serde, Serde, StringSerde};
use streams_core::{Header, StreamsConfig, StreamsError, Topology};
use streams_test::{TestInputTopic, TopologyTestDriver};

/// Where the golden files are.
const GOLDEN_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/golden");

/// The oracle's `application.id` (internal topic names start with it).
pub(crate) const APPLICATION_ID: &str = "compat";

/// What a scenario function returns.
pub(crate) type ScenarioResult = Result<Outcome, Box<dyn Error>>;

/// One scenario: its name (the Java method's and the golden file's) and
/// the function that runs it.
#[derive(Clone, Copy)]
pub(crate) struct Scenario {
    /// The scenario's name.
    pub name: &'static str,
    /// Builds the topology, drives it, and returns what happened.
    pub run: fn() -> ScenarioResult,
}

/// `scenario!(f)`: the function `f`, registered under its own name.
macro_rules! scenario {
    ($f:ident) => {
        $crate::compat::Scenario {
            name: stringify!($f),
            run: $f,
        }
    };
}
pub(crate) use scenario;

/// Every scenario, grouped like the Java classes.
fn registry() -> Vec<Scenario> {
    [
        scenarios_stateless::SCENARIOS,
        scenarios_topology::SCENARIOS,
        scenarios_processor_api::SCENARIOS,
        scenarios_time::SCENARIOS,
        scenarios_serde::SCENARIOS,
        scenarios_errors::SCENARIOS,
        scenarios_dlq::SCENARIOS,
        scenarios_stateful::SCENARIOS,
        scenarios_joins::SCENARIOS,
        scenarios_fk_join::SCENARIOS,
        scenarios_windows::SCENARIOS,
        scenarios_repartition::SCENARIOS,
        scenarios_cogroup::SCENARIOS,
        scenarios_versioned::SCENARIOS,
        scenarios_optimization::SCENARIOS,
        scenarios_stores::SCENARIOS,
    ]
    .concat()
}

/// A field of the golden format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Field {
    /// `describe`: `Topology::describe()` as text.
    Describe,
    /// The node names in the golden's `describe`, against our
    /// `Topology::node_names()` (checked while `describe` cannot be).
    NodeNames,
    /// `outputs`: the records of each declared output topic.
    Outputs,
    /// `produced_topics`: every topic the driver saw written.
    ProducedTopics,
    /// `serde_bytes`: how serializers encode values.
    SerdeBytes,
    /// `observed`: side effects of lambdas and punctuators, in order.
    Observed,
    /// `error`: the kind of error a pipe call returned.
    Error,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Describe => "describe",
            Field::NodeNames => "describe (node names)",
            Field::Outputs => "outputs",
            Field::ProducedTopics => "produced_topics",
            Field::SerdeBytes => "serde_bytes",
            Field::Observed => "observed",
            Field::Error => "error",
        })
    }
}

/// A field of a scenario that is known not to match Kafka yet.
pub(crate) struct KnownGap {
    /// The scenario.
    pub scenario: &'static str,
    /// The field that differs.
    pub field: Field,
    /// Why, and where in our code.
    pub reason: &'static str,
}

/// What cannot pass yet. Each entry must still differ: a gap that starts
/// passing fails the suite until it is removed from this list. An entry
/// for a field the scenario did not record is shown as "not compared yet".
/// Keep `compat/README.md` ("Rust side") in step.
///
/// A gap in the node names covers the scenario's `describe` too (see
/// [`KnownGap::covers`]); every scenario that starts its driver through
/// [`Recorder::start`] records its `describe` (see [`describe_of`]), and
/// the harness reports any that did not as one line.
pub(crate) const KNOWN_GAPS: &[KnownGap] = &[];

impl KnownGap {
    /// Whether this gap explains a difference in `field`: a gap in the node
    /// names explains a different `describe` too.
    fn covers(&self, field: Field) -> bool {
        self.field == field || (self.field == Field::NodeNames && field == Field::Describe)
    }

    /// Whether `compared` holds a field this gap is about.
    fn checked(&self, compared: &BTreeSet<Field>) -> bool {
        compared.iter().any(|&f| self.covers(f))
    }
}

/// Scenarios written differently from their Java method because of a
/// difference by design in our library; they are expected to pass.
pub(crate) const ADAPTED: &[(&str, &str)] = &[];

/// `Topology::describe()` as text: every scenario records it through
/// [`Recorder::start`], and the harness compares it with the golden's
/// byte for byte (where a scenario records none, it compares the node
/// names of the golden's `describe` instead, [`Field::NodeNames`]).
fn describe_of(topology: &Topology) -> Option<String> {
    Some(topology.describe().to_string())
}

// ---------------------------------------------------------------------------
// What a scenario returns, and the recorder that builds it.
// ---------------------------------------------------------------------------

/// The kind of error a pipe call returned. Texts differ from Java's
/// exception messages by design, so only the kind is compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// Piping to a topic no source reads (Java: `IllegalArgumentException: Unknown topic: ..`).
    UnknownTopic,
    /// A record that could not be deserialized (Java: `StreamsException: Deserialization exception handler ..`).
    Deserialization,
    /// A negative record timestamp (Java: `IllegalArgumentException: Invalid timestamp: ..`).
    NegativeTimestamp,
    /// A processor failed (Java: `StreamsException: Exception caught in process. ..`).
    ProcessingFailure,
    /// A sink could not serialize a record (Java: `StreamsException: Unable to serialize record. ..`).
    ProductionFailure,
    /// A source topic's name matched the piped topic as a regex (Java:
    /// `TopologyException: Invalid topology: Topology add source of type String for topic: ..`).
    SourceTopicMatchesAsRegex,
    /// `merge.repartition.topics` cannot reach a key change from one of its
    /// repartition topics (Java: `StreamsException: Found a null
    /// keyChangingChild node for ..`).
    NoKeyChangingChild,
    /// A config value Kafka's `StreamsConfig` refuses, with Kafka's
    /// message, compared exactly (Java: `ConfigException: <message>`).
    Config(String),
    /// Anything else, with its text.
    Other(String),
}

impl ErrorKind {
    /// The kind of one of our errors.
    fn of(error: &StreamsError) -> Self {
        match error {
            StreamsError::UnknownTopic { .. } => ErrorKind::UnknownTopic,
            StreamsError::Deserialization { .. } => ErrorKind::Deserialization,
            StreamsError::NegativeTimestamp { .. } => ErrorKind::NegativeTimestamp,
            StreamsError::Processing { .. } | StreamsError::ProcessingFailed { .. } => {
                ErrorKind::ProcessingFailure
            }
            StreamsError::ProductionFailed { .. } => ErrorKind::ProductionFailure,
            StreamsError::Topology(streams_core::TopologyError::SourceTopicMatchesAsRegex {
                ..
            }) => ErrorKind::SourceTopicMatchesAsRegex,
            StreamsError::Topology(streams_core::TopologyError::CannotOptimize {
                reason, ..
            }) if reason.contains("Found a null keyChangingChild node") => {
                ErrorKind::NoKeyChangingChild
            }
            StreamsError::InvalidTopologyOptimization { .. } => {
                ErrorKind::Config(error.kafka_message().unwrap_or_default())
            }
            other => ErrorKind::Other(format!("{other:?}")),
        }
    }

    /// The kind of a golden `error` text (`SimpleClassName: message`).
    fn of_java(text: &str) -> Self {
        if text.starts_with("IllegalArgumentException: Unknown topic: ") {
            ErrorKind::UnknownTopic
        } else if text.starts_with("StreamsException: Deserialization exception handler") {
            ErrorKind::Deserialization
        } else if text.starts_with("IllegalArgumentException: Invalid timestamp: ") {
            ErrorKind::NegativeTimestamp
        } else if text.starts_with("StreamsException: Exception caught in process.") {
            ErrorKind::ProcessingFailure
        } else if text.starts_with("StreamsException: Unable to serialize record.") {
            ErrorKind::ProductionFailure
        } else if text.starts_with(
            "TopologyException: Invalid topology: Topology add source of type String for topic: ",
        ) {
            ErrorKind::SourceTopicMatchesAsRegex
        } else if text.starts_with("StreamsException: Found a null keyChangingChild node for ") {
            ErrorKind::NoKeyChangingChild
        } else if let Some(message) = text.strip_prefix("ConfigException: ") {
            ErrorKind::Config(message.to_owned())
        } else {
            ErrorKind::Other(text.to_owned())
        }
    }
}

/// An error a scenario met, with our text (shown, not compared).
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    /// Its kind.
    pub kind: ErrorKind,
    /// Our message.
    pub message: String,
}

/// What a scenario did, in the golden file's shape.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// `describe()`, when our library can give it.
    pub describe: Option<String>,
    /// `Topology::node_names()` of the topology the driver ran.
    pub node_names: Option<Vec<String>>,
    /// The records of each declared output topic, each encoded as the
    /// golden encodes it (`{"key", "value", "timestamp", "headers"}`).
    pub outputs: BTreeMap<String, Vec<Value>>,
    /// Every topic the driver saw written, sorted.
    pub produced_topics: Vec<String>,
    /// `{"serde", "input", "hex"}` entries, in serde scenarios only.
    pub serde_bytes: Option<Vec<Value>>,
    /// Side effects, in scenarios that observe any.
    pub observed: Option<Vec<String>>,
    /// The error of the one failing pipe call, in error scenarios.
    pub error: Option<Failure>,
}

/// A shared, append-only list of observations for closures and
/// processors (the Java scenarios' `g.observe(..)`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Observer(Rc<RefCell<Vec<String>>>);

impl Observer {
    /// Appends a line.
    pub(crate) fn push(&self, line: impl Into<String>) {
        self.0.borrow_mut().push(line.into());
    }

    fn lines(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

/// Builds a scenario's [`Outcome`], as the oracle's `Golden` class does:
/// [`start`](Recorder::start) the driver, pipe, declare the outputs (read
/// at once, after all input), then [`finish`](Recorder::finish).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    outcome: Outcome,
    observer: Option<Observer>,
}

/// The oracle's config: `application.id = compat`, String default serdes.
pub(crate) fn config() -> StreamsConfig {
    let config = StreamsConfig::new(APPLICATION_ID)
        .with_default_key_serde(StringSerde)
        .with_default_value_serde(StringSerde);
    dsl_stores(config)
}

/// With the `rocksdb` feature and `COMPAT_DSL_STORE=rocksDB`, the DSL's
/// stores live in RocksDB, as Kafka's oracle's do (Kafka's default), under
/// a state directory of this process's own.
fn dsl_stores(config: StreamsConfig) -> StreamsConfig {
    match std::env::var("COMPAT_DSL_STORE") {
        Ok(store) if cfg!(feature = "rocksdb") => {
            let dir = std::env::temp_dir().join(format!("compat-dsl-{}", std::process::id()));
            config
                .with_property("default.dsl.store", store)
                .with_property("state.dir", dir.to_string_lossy())
        }
        _ => config,
    }
}

/// The config of the `*_cache_off` scenarios, as the oracle's
/// `Golden.noCache`: [`config`] with `statestore.cache.max.bytes = 0`,
/// which turns the record cache off on both sides: every update of a DSL
/// store is forwarded at once.
pub(crate) fn no_cache() -> StreamsConfig {
    config().with_property("statestore.cache.max.bytes", "0")
}

/// A String/String input topic starting at 0 with no auto-advance, as the
/// oracle's `g.input(topic)`.
pub(crate) fn input<'d>(
    driver: &'d TopologyTestDriver,
    topic: &str,
) -> TestInputTopic<'d, String, String> {
    driver.create_input_topic_with_time(
        topic,
        StringSerde,
        StringSerde,
        0,
        std::time::Duration::ZERO,
    )
}

/// Java's `v.substring(0, 1)` (empty for an empty string).
pub(crate) fn first_char(v: &str) -> String {
    v.chars().take(1).collect()
}

/// The oracle's `counts(store)`: a count materialized as `store`.
pub(crate) fn counts(store: &str) -> streams_core::dsl::Materialized<String, i64> {
    streams_core::dsl::Materialized::as_(store).with_value_serde(I64Serde)
}

/// The oracle's `longs()`: string keys, long values.
pub(crate) fn longs() -> streams_core::Produced<String, i64> {
    streams_core::Produced::with(StringSerde, I64Serde)
}

/// A key or value as Java concatenation prints it: `null` when absent.
pub(crate) fn show(x: Option<&String>) -> &str {
    x.map_or("null", String::as_str)
}

/// Java's `String.length()`: UTF-16 code units.
pub(crate) fn jlen(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Java's `List.toString()` of strings: `[a, b]`.
pub(crate) fn java_list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let items: Vec<&str> = items.into_iter().map(String::as_str).collect();
    format!("[{}]", items.join(", "))
}

impl Recorder {
    /// An empty recorder.
    pub(crate) fn new() -> Self {
        Recorder::default()
    }

    /// The scenario's observer; the scenario has an `observed` list from now on.
    pub(crate) fn observer(&mut self) -> Observer {
        self.observer.get_or_insert_with(Observer::default).clone()
    }

    /// Records `describe()` and starts the driver with [`config`] at wall-clock 0.
    pub(crate) fn start(&mut self, topology: Topology) -> Result<TopologyTestDriver, StreamsError> {
        self.start_with(topology, config())
    }

    /// As [`start`](Recorder::start), with another config.
    pub(crate) fn start_with(
        &mut self,
        topology: Topology,
        config: StreamsConfig,
    ) -> Result<TopologyTestDriver, StreamsError> {
        self.outcome.describe = describe_of(&topology);
        self.outcome.node_names = Some(
            topology
                .node_names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        );
        TopologyTestDriver::builder(topology)
            .config(config)
            .initial_wall_clock_time(0)
            .build()
    }

    /// Reads the String/String output topic `topic` whole.
    pub(crate) fn output(&mut self, driver: &TopologyTestDriver, topic: &str) {
        self.output_as(driver, topic, StringSerde, StringSerde);
    }

    /// Reads the output topic `topic` whole with these serdes.
    pub(crate) fn output_as<K: Golden, V: Golden>(
        &mut self,
        driver: &TopologyTestDriver,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) {
        let records = driver
            .create_output_topic(topic, key_serde, value_serde)
            .read_records_to_list()
            .into_iter()
            .map(|r| {
                json!({
                    "key": r.key.as_ref().map_or(Value::Null, Golden::to_golden),
                    "value": r.value.as_ref().map_or(Value::Null, Golden::to_golden),
                    "timestamp": r.timestamp,
                    "headers": r.headers.iter().map(header_to_golden).collect::<Vec<_>>(),
                })
            })
            .collect();
        let previous = self.outcome.outputs.insert(topic.to_owned(), records);
        assert!(previous.is_none(), "output declared twice: {topic}");
    }

    /// Adds a `serde_bytes` entry: how `serde` encodes `value`.
    pub(crate) fn serde_bytes<T: Golden>(&mut self, serde: &impl Serde<T>, value: Option<&T>) {
        let entry = match value {
            Some(v) => {
                let hex = match serde.serialize("topic", v) {
                    Ok(bytes) => Value::String(hex(&bytes)),
                    Err(e) => Value::String(format!("<serialize failed: {e}>")),
                };
                json!({"serde": T::SERDE_NAME, "input": v.input_text(), "hex": hex})
            }
            None => json!({"serde": T::SERDE_NAME, "input": null, "hex": null}),
        };
        self.outcome
            .serde_bytes
            .get_or_insert_with(Vec::new)
            .push(entry);
    }

    /// Records the error of a call that must fail (the oracle's `expectError`).
    /// A call that succeeds records nothing, which then differs from the golden.
    pub(crate) fn expect_error(&mut self, result: Result<(), StreamsError>) {
        if let Err(e) = result {
            assert!(
                self.outcome.error.is_none(),
                "scenario recorded two errors; the second: {e}"
            );
            self.outcome.error = Some(Failure {
                kind: ErrorKind::of(&e),
                message: e.to_string(),
            });
        }
    }

    /// The outcome of a scenario that started no driver (its error came
    /// first): no `describe`, outputs or produced topics.
    pub(crate) fn finish_without_driver(mut self) -> Outcome {
        // The oracle writes an empty `describe` when no driver started.
        self.outcome.describe = Some(String::new());
        self.outcome.observed = self.observer.map(|o| o.lines());
        self.outcome
    }

    /// Captures the produced topics, closes the driver and returns the outcome.
    pub(crate) fn finish(mut self, driver: TopologyTestDriver) -> ScenarioResult {
        self.outcome.produced_topics = driver.produced_topic_names().into_iter().collect();
        driver.close()?;
        self.outcome.observed = self.observer.map(|o| o.lines());
        Ok(self.outcome)
    }
}

// ---------------------------------------------------------------------------
// Encoding keys and values as the golden files do.
// ---------------------------------------------------------------------------

/// A key or value type of the scenarios, and its golden encoding.
pub(crate) trait Golden: 'static {
    /// The `serde` name in `serde_bytes` entries.
    const SERDE_NAME: &'static str;
    /// The JSON encoding of a (non-null) key or value.
    fn to_golden(&self) -> Value;
    /// The `input` text of a `serde_bytes` entry: Java's `toString()`.
    fn input_text(&self) -> String;
}

impl Golden for String {
    const SERDE_NAME: &'static str = "string";
    fn to_golden(&self) -> Value {
        Value::String(self.clone())
    }
    fn input_text(&self) -> String {
        self.clone()
    }
}

impl Golden for i32 {
    const SERDE_NAME: &'static str = "integer";
    fn to_golden(&self) -> Value {
        Value::from(*self)
    }
    fn input_text(&self) -> String {
        self.to_string()
    }
}

impl Golden for i64 {
    const SERDE_NAME: &'static str = "long";
    fn to_golden(&self) -> Value {
        Value::from(*self)
    }
    fn input_text(&self) -> String {
        self.to_string()
    }
}

impl Golden for f64 {
    const SERDE_NAME: &'static str = "double";
    fn to_golden(&self) -> Value {
        if self.is_nan() {
            Value::from("NaN")
        } else if self.is_infinite() {
            Value::from(if *self > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            Value::from(*self)
        }
    }
    fn input_text(&self) -> String {
        java_double(*self)
    }
}

impl Golden for Vec<u8> {
    const SERDE_NAME: &'static str = "bytes";
    fn to_golden(&self) -> Value {
        Value::String(format!("hex:{}", hex(self)))
    }
    fn input_text(&self) -> String {
        format!("hex:{}", hex(self))
    }
}

/// A windowed String key (read with our `WindowedSerde`), written as the
/// oracle writes Kafka's `Windowed.toString()`: `[key@start/end]`.
impl Golden for Windowed<String> {
    const SERDE_NAME: &'static str = "windowed";
    fn to_golden(&self) -> Value {
        Value::String(self.to_string())
    }
    fn input_text(&self) -> String {
        self.to_string()
    }
}

/// The serdes of the scenarios' key and value types, so that generic
/// helpers can name them.
pub(crate) trait KindSerde: Serde<Self::T> + Copy {
    /// The type it serializes.
    type T: Golden + Clone;
}

impl KindSerde for StringSerde {
    type T = String;
}
impl KindSerde for I32Serde {
    type T = i32;
}
impl KindSerde for I64Serde {
    type T = i64;
}
impl KindSerde for F64Serde {
    type T = f64;
}
impl KindSerde for BytesSerde {
    type T = Vec<u8>;
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A header as the golden writes it: `[key, UTF-8 value | "hex:.." | null]`.
fn header_to_golden(h: &Header) -> Value {
    let value = match &h.value {
        None => Value::Null,
        Some(bytes) => match std::str::from_utf8(bytes) {
            // The oracle keeps a dead letter queue's stack trace to its
            // first line (`<exception class>: <message>`): Java's trace
            // names Java's frames, ours the node and the causes.
            Ok(s) if h.key == streams_core::config::HEADER_ERRORS_STACKTRACE_NAME => {
                Value::from(s.lines().next().unwrap_or_default())
            }
            Ok(s) => Value::from(s),
            Err(_) => Value::String(format!("hex:{}", hex(bytes))),
        },
    };
    json!([h.key, value])
}

/// Java's `Double.toString` (JDK 19+): the shortest decimal that reads
/// back as `d`, with at least two significant digits in scientific form,
/// plain for 1e-3 <= |d| < 1e7 and `d.dddE<n>` otherwise.
pub(crate) fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sign = if d < 0.0 { "-" } else { "" };
    let a = d.abs();
    // Shortest round-trip digits; with one digit, Java picks the closest
    // two-digit decimal instead (4.9E-324, not 5.0E-324).
    let mut sci = format!("{a:e}");
    if !sci.contains('.') {
        sci = format!("{a:.1e}");
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if (1e-3..1e7).contains(&a) {
        let point = exp + 1; // digits before the decimal point
        let (int, frac) = if point <= 0 {
            (
                "0".to_owned(),
                format!("{}{digits}", "0".repeat(point.unsigned_abs() as usize)),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            let (i, f) = digits.split_at(point as usize);
            (i.to_owned(), f.to_owned())
        };
        let frac = if frac.is_empty() {
            "0".to_owned()
        } else {
            frac
        };
        format!("{sign}{int}.{frac}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

// ---------------------------------------------------------------------------
// Comparison.
// ---------------------------------------------------------------------------

/// One field of one scenario that differs from the golden.
struct Mismatch {
    field: Field,
    /// What differs, readable: the topic, the first differing record, both sides.
    detail: String,
}

/// JSON equality where numbers that are doubles compare bit for bit
/// (so `-0.0` differs from `0.0`) and integers compare as integers.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                x.is_f64() == y.is_f64()
                    && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
            } else {
                x == y
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Text whose `Debug` is the text itself, for line diffs.
struct Raw(String);

impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("<{e}>"))
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// A line diff, Kafka's side on the left.
fn diff(kafka: &str, ours: &str) -> String {
    let diff = pretty_assertions::Comparison::new(&Raw(kafka.to_owned()), &Raw(ours.to_owned()))
        .to_string();
    let mut out = String::from("      diff (< Kafka / ours >):\n");
    for line in diff.lines() {
        let _ = writeln!(out, "        {line}");
    }
    out
}

/// Compares two lists element by element, naming the first difference.
fn compare_lists(what: &str, kafka: &[Value], ours: &[Value]) -> Option<String> {
    if kafka.len() == ours.len() && kafka.iter().zip(ours).all(|(a, b)| same(a, b)) {
        return None;
    }
    let mut s = String::new();
    let first = kafka
        .iter()
        .zip(ours)
        .position(|(a, b)| !same(a, b))
        .unwrap_or(kafka.len().min(ours.len()));
    let _ = writeln!(
        s,
        "    {what}: first difference at #{first} (0-based); Kafka has {} entries, ours {}",
        kafka.len(),
        ours.len()
    );
    let side = |v: Option<&Value>| v.map_or("<none>".to_owned(), compact);
    let _ = writeln!(s, "      Kafka: {}", side(kafka.get(first)));
    let _ = writeln!(s, "      ours:  {}", side(ours.get(first)));
    // The diff shows a window around the first difference.
    let (lo, hi) = (first.saturating_sub(2), first + 3);
    let window =
        |list: &[Value]| Value::Array(list[lo.min(list.len())..hi.min(list.len())].to_vec());
    let _ = writeln!(s, "      entries #{lo}..#{} of both sides:", hi - 1);
    s.push_str(&diff(&pretty(&window(kafka)), &pretty(&window(ours))));
    Some(s)
}

/// The node names in a `describe()` text (`Source: <name> (..`,
/// `Processor: ..`, `Sink: ..` lines), sorted.
fn described_node_names(describe: &str) -> Vec<String> {
    let mut names: Vec<String> = describe
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            ["Source: ", "Processor: ", "Sink: "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
                .and_then(|rest| rest.rsplit_once(" ("))
                .map(|(name, _)| name.to_owned())
        })
        .collect();
    names.sort();
    names
}

/// The fields of `outcome` that were compared with the `golden` file's,
/// and those that differ.
fn compare(golden: &Value, outcome: &Outcome) -> (BTreeSet<Field>, Vec<Mismatch>) {
    let mut compared = BTreeSet::from([
        Field::Outputs,
        Field::ProducedTopics,
        Field::SerdeBytes,
        Field::Observed,
        Field::Error,
    ]);
    let mut out = Vec::new();
    let mut push = |field, detail: String| out.push(Mismatch { field, detail });

    // describe: only when the scenario could give one; else the node names.
    let kafka_describe = golden["describe"].as_str().unwrap_or_default();
    if let Some(ours) = &outcome.describe {
        compared.insert(Field::Describe);
        if kafka_describe != ours {
            push(
                Field::Describe,
                format!("    describe() differs\n{}", diff(kafka_describe, ours)),
            );
        }
    } else if let Some(ours) = &outcome.node_names {
        compared.insert(Field::NodeNames);
        let kafka = described_node_names(kafka_describe);
        let mut ours = ours.clone();
        ours.sort();
        if kafka != ours {
            let only = |a: &[String], b: &[String]| -> Vec<String> {
                a.iter().filter(|n| !b.contains(n)).cloned().collect()
            };
            push(
                Field::NodeNames,
                format!(
                    "    node names differ (sorted)\n      only in Kafka's describe(): {:?}\n      only in ours:               {:?}\n",
                    only(&kafka, &ours),
                    only(&ours, &kafka)
                ),
            );
        }
    }

    // outputs, topic by topic.
    let empty = serde_json::Map::new();
    let kafka_outputs = golden["outputs"].as_object().unwrap_or(&empty);
    let kafka_topics: BTreeSet<&str> = kafka_outputs.keys().map(String::as_str).collect();
    let our_topics: BTreeSet<&str> = outcome.outputs.keys().map(String::as_str).collect();
    let mut detail = String::new();
    if kafka_topics != our_topics {
        let _ = writeln!(
            detail,
            "    declared output topics differ: Kafka {kafka_topics:?}, ours {our_topics:?}"
        );
    }
    for topic in kafka_topics.intersection(&our_topics) {
        let kafka = kafka_outputs[*topic]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if let Some(d) = compare_lists(&format!("topic `{topic}`"), kafka, &outcome.outputs[*topic])
        {
            detail.push_str(&d);
        }
    }
    if !detail.is_empty() {
        push(Field::Outputs, detail);
    }

    // produced_topics.
    let kafka: Vec<Value> = golden["produced_topics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ours: Vec<Value> = outcome.produced_topics.iter().map(|t| json!(t)).collect();
    if let Some(d) = compare_lists("produced_topics", &kafka, &ours) {
        push(Field::ProducedTopics, d);
    }

    // serde_bytes and observed: present in both or in neither.
    let optional = |key: &str, ours: Option<Vec<Value>>| -> Option<String> {
        match (golden.get(key).and_then(Value::as_array), ours) {
            (None, None) => None,
            (Some(_), None) => Some(format!("    Kafka has `{key}`, ours has none\n")),
            (None, Some(_)) => Some(format!("    ours has `{key}`, Kafka has none\n")),
            (Some(k), Some(o)) => compare_lists(key, k, &o),
        }
    };
    if let Some(d) = optional("serde_bytes", outcome.serde_bytes.clone()) {
        push(Field::SerdeBytes, d);
    }
    let observed = outcome
        .observed
        .as_ref()
        .map(|lines| lines.iter().map(|l| json!(l)).collect());
    if let Some(d) = optional("observed", observed) {
        push(Field::Observed, d);
    }

    // error: the kind only.
    let kafka = golden.get("error").and_then(Value::as_str);
    match (kafka, &outcome.error) {
        (None, None) => {}
        (Some(k), None) => push(
            Field::Error,
            format!("    Kafka failed with `{k}`, ours did not fail\n"),
        ),
        (None, Some(o)) => push(
            Field::Error,
            format!(
                "    ours failed ({:?}: {}), Kafka did not\n",
                o.kind, o.message
            ),
        ),
        (Some(k), Some(o)) => {
            let kind = ErrorKind::of_java(k);
            if kind != o.kind {
                push(
                    Field::Error,
                    format!(
                        "    error kinds differ\n      Kafka: {kind:?} (`{k}`)\n      ours:  {:?} (`{}`)\n",
                        o.kind, o.message
                    ),
                );
            }
        }
    }
    (compared, out)
}

// ---------------------------------------------------------------------------
// Running.
// ---------------------------------------------------------------------------

fn golden_path(name: &str) -> PathBuf {
    Path::new(GOLDEN_DIR).join(format!("{name}.json"))
}

/// The names of the golden files, sorted.
fn golden_names() -> Result<BTreeSet<String>, String> {
    let dir = std::fs::read_dir(GOLDEN_DIR)
        .map_err(|e| format!("cannot read the golden directory {GOLDEN_DIR}: {e}"))?;
    let mut names = BTreeSet::new();
    for entry in dir {
        let path = entry
            .map_err(|e| format!("cannot list {GOLDEN_DIR}: {e}"))?
            .path();
        if path.extension().is_some_and(|e| e == "json")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.insert(stem.to_owned());
        }
    }
    Ok(names)
}

fn load_golden(name: &str) -> Result<Value, String> {
    let path = golden_path(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("no golden file {}: {e}", path.display()))?;
    let golden: Value = serde_json::from_str(&text)
        .map_err(|e| format!("golden file {} is not valid JSON: {e}", path.display()))?;
    match golden["scenario"].as_str() {
        Some(n) if n == name => Ok(golden),
        other => Err(format!(
            "golden file {} names scenario {other:?}, not `{name}`",
            path.display()
        )),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "<non-string panic>".to_owned())
}

/// Writes to the real stderr, past the test harness's output capture, so
/// that the known gaps show on every run.
fn print_visible(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

#[test]
fn every_scenario_matches_its_golden_file() {
    let only = std::env::var("COMPAT_SCENARIO").ok();
    let selected = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    let scenarios: Vec<Scenario> = registry()
        .into_iter()
        .filter(|s| selected(s.name))
        .collect();

    let mut failures: Vec<String> = Vec::new();
    let mut expected: Vec<String> = Vec::new();
    let mut passed = 0;
    let mut describe_missing = 0;
    let mut not_compared: Vec<String> = Vec::new();
    for scenario in &scenarios {
        let golden = match load_golden(scenario.name) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{}: {e}", scenario.name));
                continue;
            }
        };
        let outcome = match catch_unwind(AssertUnwindSafe(scenario.run)) {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => {
                failures.push(format!(
                    "{}: the scenario failed to run: {e}",
                    scenario.name
                ));
                continue;
            }
            Err(payload) => {
                failures.push(format!(
                    "{}: the scenario panicked: {}",
                    scenario.name,
                    panic_text(&*payload)
                ));
                continue;
            }
        };
        if outcome.describe.is_none() {
            describe_missing += 1;
        }
        let (compared, mismatches) = compare(&golden, &outcome);
        let gaps: Vec<&KnownGap> = KNOWN_GAPS
            .iter()
            .filter(|g| g.scenario == scenario.name)
            .collect();
        let mut unexpected = String::new();
        for m in &mismatches {
            match gaps.iter().find(|g| g.covers(m.field)) {
                Some(_) => expected.push(format!(
                    "{} / {}: differs as listed in KNOWN_GAPS\n{}",
                    scenario.name, m.field, m.detail
                )),
                None => {
                    let _ = write!(unexpected, "  field `{}`:\n{}", m.field, m.detail);
                }
            }
        }
        for gap in &gaps {
            if !gap.checked(&compared) {
                not_compared.push(format!("{} / {}", gap.scenario, gap.field));
            } else if !mismatches.iter().any(|m| gap.covers(m.field)) {
                let _ = writeln!(
                    unexpected,
                    "  field `{}` now matches Kafka, but KNOWN_GAPS says it differs ({}); remove the entry (and its line in compat/README.md)",
                    gap.field, gap.reason
                );
            }
        }
        if unexpected.is_empty() {
            if mismatches.is_empty() {
                passed += 1;
            }
        } else {
            failures.push(format!(
                "{} (golden {}):\n{unexpected}",
                scenario.name,
                golden_path(scenario.name).display()
            ));
        }
    }

    // The visible report: known gaps and adaptations, on every run.
    let mut report = String::new();
    let _ = writeln!(
        report,
        "\n==== compat: {} scenarios run against Kafka 4.4.0 golden files: {passed} match on every compared field, {} differ only as listed in KNOWN_GAPS, {} failing",
        scenarios.len(),
        scenarios.len() - passed - failures.len(),
        failures.len()
    );
    let _ = writeln!(
        report,
        "known gaps (expected to differ; see compat/README.md):"
    );
    if describe_missing > 0 {
        let _ = writeln!(
            report,
            "  - describe: not compared in {describe_missing} scenario(s): they did not start their driver through Recorder::start"
        );
    }
    for gap in KNOWN_GAPS.iter().filter(|g| selected(g.scenario)) {
        let key = format!("{} / {}", gap.scenario, gap.field);
        let note = if not_compared.contains(&key) {
            " (not compared yet)"
        } else {
            ""
        };
        let _ = writeln!(report, "  - {key}{note}: {}", gap.reason);
    }
    let _ = writeln!(
        report,
        "adapted scenarios (differences by design, expected to pass):"
    );
    for (name, how) in ADAPTED.iter().filter(|(n, _)| selected(n)) {
        let _ = writeln!(report, "  - {name}: {how}");
    }
    let _ = writeln!(
        report,
        "error scenarios compare the kind of error only (unknown topic, deserialization, negative timestamp, processing failure, a merge of repartition topics without a key-changing child), not Java's text; a ConfigException (topology.optimization) is compared with Kafka's message exactly"
    );
    if std::env::var_os("COMPAT_VERBOSE").is_some() {
        for e in &expected {
            report.push_str(e);
        }
    }
    let _ = writeln!(report, "====");
    print_visible(&report);

    assert!(
        failures.is_empty(),
        "{} compat scenario(s) differ from Kafka:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_golden_file_has_a_scenario_and_back() {
    let goldens = match golden_names() {
        Ok(n) => n,
        Err(e) => panic!("{e}"),
    };
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for s in registry() {
        if !names.insert(s.name) {
            problems.push(format!("scenario `{}` is registered twice", s.name));
        }
    }
    for name in &names {
        if !goldens.contains(*name) {
            problems.push(format!(
                "scenario `{name}` has no golden file {}",
                golden_path(name).display()
            ));
        }
    }
    for golden in &goldens {
        let needs_absent_feature =
            !cfg!(feature = "rocksdb") && scenarios_stores::NEED_ROCKSDB.contains(&golden.as_str());
        if !names.contains(golden.as_str()) && !needs_absent_feature {
            problems.push(format!(
                "golden file {} has no Rust scenario `{golden}`",
                golden_path(golden).display()
            ));
        }
    }
    for gap in KNOWN_GAPS {
        if !names.contains(gap.scenario) {
            problems.push(format!(
                "KNOWN_GAPS names unknown scenario `{}`",
                gap.scenario
            ));
        }
    }
    for (name, _) in ADAPTED {
        if !names.contains(name) {
            problems.push(format!("ADAPTED names unknown scenario `{name}`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn java_double_matches_double_to_string() {
    for (d, text) in [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (1e7, "1.0E7"),
        (1.25e-5, "1.25E-5"),
        (f64::MIN_POSITIVE * f64::EPSILON, "4.9E-324"),
        (f64::MAX, "1.7976931348623157E308"),
        (-2.5, "-2.5"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ] {
        assert_eq!(java_double(d), text, "{d:e}");
    }
}
