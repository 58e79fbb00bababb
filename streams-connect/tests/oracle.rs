//! streams-connect against Kafka Connect 4.4.0 as the oracle (issue 15: "the header names and
//! values match Kafka 4.4.0 byte for byte").
//!
//! `compat/connect` runs each scenario through Kafka Connect's own error handling (the
//! `RetryWithToleranceOperator`, `DeadLetterQueueReporter`, `LogReporter`, the converters and
//! transforms, the `WorkerErrantRecordReporter`) and writes `compat/connect/golden/<name>.json`.
//! Here the same scenario runs through [`SinkTestDriver`] on the simulated cluster: the
//! golden's connector properties, its input records byte for byte (same topics, partitions,
//! offsets and timestamps), the converters and transforms the Java scenario configures, and a
//! [`RecordingSink`] that reports what the Java sink reports. What comes out is compared field
//! by field: every dead letter queue record (timestamp, key and value bytes, every header in
//! order with its value; the stack trace header by its first line, and the class of its first
//! `Caused by:`), the records the sink kept (Connect data rendered as the oracle renders it),
//! the error-handling metrics, the retry backoffs, the error log and the task's failure.
//!
//! Differences by design are listed in [`KNOWN_GAPS`] with the reason; each is checked to be
//! exactly the documented difference, so a gap that closes (or changes) fails the test until
//! its entry is updated. `ORACLE_SCENARIO=<part of a name>` runs only matching scenarios;
//! `ORACLE_VERBOSE=1` prints both documents of a scenario that differs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value as Json, json};
use streams_connect::data::{Schema, SchemaType, Value};
use streams_connect::json::JsonConverter;
use streams_connect::transforms::{
    Cast, Filter, HasHeaderKey, InsertField, RecordIsTombstone, ReplaceField, TopicNameMatches,
    TransformStage, Transformation,
};
use streams_connect::{ConnectError, PollOutcome, SinkRecord, TaskError};
use streams_core::serde::StringSerde;
use streams_test::connect::{
    ConnectTestError, DeadLetterRecord, RecordingSink, SinkTestDriver, SinkTestDriverBuilder,
};

type BoxError = Box<dyn std::error::Error>;

/// `__connect.errors.exception.stacktrace`.
const STACKTRACE: &str = "__connect.errors.exception.stacktrace";

/// What a scenario adds to the driver the golden's properties configure.
struct Setup {
    builder: SinkTestDriverBuilder,
    sink: RecordingSink,
    /// Stop the task at this backoff (0-based) instead of waiting it out.
    stop_at_wait: Option<usize>,
}

impl Setup {
    fn new(builder: SinkTestDriverBuilder) -> Self {
        Self {
            builder,
            sink: RecordingSink::new(),
            stop_at_wait: None,
        }
    }
}

type ScenarioFn = fn(SinkTestDriverBuilder) -> Result<Setup, BoxError>;

/// Every scenario of `compat/connect/src/main/java/compat/connect/Scenarios.java`, by name, with
/// what its Java method configures besides the properties.
const SCENARIOS: &[(&str, ScenarioFn)] = &[
    ("dlq_names_the_partition", |b| {
        Ok(Setup::new(b.value_converter(JsonConverter::schemaless())))
    }),
    ("error_log_include_messages", |b| {
        Ok(Setup::new(b.value_converter(JsonConverter::schemaless())))
    }),
    ("error_log_with_dlq", |b| {
        Ok(Setup::new(b.transform(TransformStage::new(
            InsertField::value().static_field("origin", "kafka"),
        ))))
    }),
    ("filter_tombstones_and_marked_records", |b| {
        Ok(Setup::new(
            b.transform(TransformStage::new(Filter).with_predicate(RecordIsTombstone, false))
                .transform(
                    TransformStage::new(Filter).with_predicate(HasHeaderKey::new("skip"), false),
                ),
        ))
    }),
    ("header_converter_bad_json", |b| {
        Ok(Setup::new(b.header_converter(JsonConverter::schemaless())))
    }),
    ("json_with_schemas_cast_replace_and_filter", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::new())
                .transform(TransformStage::new(Cast::value("qty:int64")?))
                .transform(TransformStage::new(
                    ReplaceField::value()
                        .exclude(["secret"])
                        .renames("qty:quantity")?,
                ))
                .transform(
                    TransformStage::new(Filter)
                        .with_predicate(TopicNameMatches::new("orders")?, true),
                ),
        ))
    }),
    ("key_converter_json_without_envelope", |b| {
        Ok(Setup::new(b.key_converter(JsonConverter::new())))
    }),
    ("retriable_error_not_retried_by_default", |b| {
        Ok(Setup::new(b.transform(Flaky::stage(1))))
    }),
    ("retries_exhausted_under_tolerance_none", |b| {
        Ok(Setup::new(b.transform(Flaky::stage(-1))))
    }),
    ("retry_delay_capped_by_the_maximum", |b| {
        Ok(Setup::new(b.transform(Flaky::stage(5))))
    }),
    ("retry_succeeds_on_the_fourth_attempt", |b| {
        Ok(Setup::new(b.transform(Flaky::stage(3))))
    }),
    ("retry_timeout_gives_up_at_the_deadline", |b| {
        Ok(Setup::new(b.transform(Flaky::stage(6))))
    }),
    ("stop_during_a_backoff", |b| {
        Ok(Setup {
            stop_at_wait: Some(0),
            ..Setup::new(b.transform(Flaky::stage(-1)))
        })
    }),
    ("string_converter_reads_malformed_utf8", |b| {
        Ok(Setup::new(b))
    }),
    ("task_put_errant_record", |b| {
        Ok(Setup {
            sink: RecordingSink::new().report_errant(|r| {
                (r.value.as_str() == Some("reject"))
                    .then(|| ConnectError::data("the table refused it"))
            }),
            ..Setup::new(b)
        })
    }),
    ("task_put_errant_record_tolerance_none", |b| {
        Ok(Setup {
            sink: RecordingSink::new().report_errant(|_| Some(ConnectError::data("no"))),
            ..Setup::new(b)
        })
    }),
    ("tolerance_none_value_converter", |b| {
        Ok(Setup::new(b.value_converter(JsonConverter::schemaless())))
    }),
    ("transformation_cast_bytes_to_int32", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::new())
                .transform(TransformStage::new(Cast::value("int32")?)),
        ))
    }),
    ("transformation_cast_bytes_to_string", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::new())
                .transform(TransformStage::new(Cast::value("string")?)),
        ))
    }),
    ("transformation_cast_field_not_a_number", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::schemaless())
                .transform(TransformStage::new(Cast::value("qty:int32")?)),
        ))
    }),
    ("transformation_cast_whole_map", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::schemaless())
                .transform(TransformStage::new(Cast::value("int32")?)),
        ))
    }),
    ("transformation_custom_exception", |b| {
        Ok(Setup::new(b.transform(TransformStage::new(Boom))))
    }),
    ("transformation_insert_field_on_a_string", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::schemaless())
                .transform(TransformStage::new(
                    InsertField::value().static_field("origin", "kafka"),
                )),
        ))
    }),
    ("transformation_replace_field_on_a_string", |b| {
        Ok(Setup::new(
            b.value_converter(JsonConverter::schemaless())
                .transform(TransformStage::new(
                    ReplaceField::value().exclude(["secret"]),
                )),
        ))
    }),
    ("value_converter_bad_json", |b| {
        Ok(Setup::new(b.value_converter(JsonConverter::schemaless())))
    }),
    ("value_converter_bad_json_without_context_headers", |b| {
        Ok(Setup::new(b.value_converter(JsonConverter::schemaless())))
    }),
];

/// The oracle's `compat.connect.Flaky`: fails retriably ("lookup service unavailable") on its
/// first `failures` calls (-1: always), then passes records on.
#[derive(Debug)]
struct Flaky {
    failures: i64,
    calls: AtomicI64,
}

impl Flaky {
    fn stage(failures: i64) -> TransformStage {
        TransformStage::new(Flaky {
            failures,
            calls: AtomicI64::new(0),
        })
    }
}

impl Transformation for Flaky {
    fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        let calls = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if self.failures < 0 || calls <= self.failures {
            return Err(ConnectError::retriable("lookup service unavailable"));
        }
        Ok(Some(record))
    }

    fn class_name(&self) -> String {
        "compat.connect.Flaky".to_owned()
    }
}

/// The oracle's `compat.connect.Boom`: a custom transform whose code fails on the value "boom".
/// Kafka's throws `IllegalStateException("boom")`; a Rust transform can only return one of
/// Connect's three exceptions (see [`KNOWN_GAPS`]): a `ConnectException`, the nearest.
#[derive(Debug)]
struct Boom;

impl Transformation for Boom {
    fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        if record.value.as_str() == Some("boom") {
            return Err(ConnectError::connect("boom"));
        }
        Ok(Some(record))
    }

    fn class_name(&self) -> String {
        "compat.connect.Boom".to_owned()
    }
}

/// A difference from Kafka by design: in `scenario` (`*`: any), the field at `path` differs, and
/// `check(kafka, ours)` says whether it differs exactly as documented.
struct KnownGap {
    scenario: &'static str,
    path: &'static str,
    reason: &'static str,
    check: fn(&Json, &Json) -> bool,
}

/// The differences by design (also in compat/connect/README.md).
const KNOWN_GAPS: &[KnownGap] = &[
    KnownGap {
        scenario: "*",
        path: "metrics.last-error-timestamp",
        reason: "Kafka's ErrorHandlingMetrics reads Time.SYSTEM (the oracle writes \"wall-clock\"); ours reads the client clock, so a test knows the value: the time of the failure on the mock clock",
        check: |kafka, ours| kafka == "wall-clock" && ours.as_i64().is_some_and(|t| t > 0),
    },
    KnownGap {
        scenario: "transformation_custom_exception",
        path: "dlq[0].headers[7][1]",
        reason: "__connect.errors.exception.class.name: a Rust error has no Java class; ConnectError is one of Connect's DataException, RetriableException or ConnectException (what a plain Java exception such as IllegalStateException is handled like), so a custom transform's bug is reported as a ConnectException",
        check: |kafka, ours| {
            kafka == "java.lang.IllegalStateException"
                && ours == "org.apache.kafka.connect.errors.ConnectException"
        },
    },
    KnownGap {
        scenario: "transformation_custom_exception",
        path: "dlq[0].headers[9][1]",
        reason: "the stack trace's first line names that class too",
        check: |kafka, ours| {
            kafka == "java.lang.IllegalStateException: boom"
                && ours == "org.apache.kafka.connect.errors.ConnectException: boom"
        },
    },
    KnownGap {
        scenario: "retry_delay_capped_by_the_maximum",
        path: "retry_waits[2]",
        reason: "past errors.retry.delay.max.ms Kafka waits a random time below the maximum (ThreadLocalRandom); ours waits the maximum, so a test knows each instant",
        check: capped_wait,
    },
    KnownGap {
        scenario: "retry_delay_capped_by_the_maximum",
        path: "retry_waits[3]",
        reason: "as retry_waits[2]",
        check: capped_wait,
    },
    KnownGap {
        scenario: "retry_delay_capped_by_the_maximum",
        path: "retry_waits[4]",
        reason: "as retry_waits[2]",
        check: capped_wait,
    },
];

fn capped_wait(kafka: &Json, ours: &Json) -> bool {
    kafka == "random below 1000" && ours == 1000
}

// ---- the golden files ----

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../compat/connect/golden")
}

fn load(name: &str) -> Result<Json, String> {
    let path = golden_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(text: &str) -> Result<Vec<u8>, String> {
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| format!("bad hex {text:?}"))
        })
        .collect()
}

fn field<'a>(doc: &'a Json, name: &str) -> Result<&'a Json, String> {
    doc.get(name).ok_or_else(|| format!("no field {name:?}"))
}

fn text_field(doc: &Json, name: &str) -> Result<String, String> {
    field(doc, name)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("field {name:?} is not a string"))
}

fn int_field(doc: &Json, name: &str) -> Result<i64, String> {
    field(doc, name)?
        .as_i64()
        .ok_or_else(|| format!("field {name:?} is not an integer"))
}

fn bytes_field(doc: &Json, name: &str) -> Result<Option<Vec<u8>>, String> {
    match field(doc, &format!("{name}_hex"))? {
        Json::Null => Ok(None),
        Json::String(h) => unhex(h).map(Some),
        other => Err(format!("{name}_hex is {other}")),
    }
}

// ---- rendering, as compat/connect/src/main/java/compat/connect/Render.java ----

/// The bytes as UTF-8 text, or null when they are not UTF-8.
fn text(bytes: Option<&[u8]>) -> Json {
    bytes
        .and_then(|b| std::str::from_utf8(b).ok())
        .map_or(Json::Null, |t| json!(t))
}

fn header_text(key: &str, value: Option<&[u8]>) -> Json {
    match value {
        None => Json::Null,
        Some(v) => match std::str::from_utf8(v) {
            Ok(t) if key == STACKTRACE => json!(t.split('\n').next().unwrap_or_default()),
            Ok(t) => json!(t),
            Err(_) => json!(format!("hex:{}", hex(v))),
        },
    }
}

fn render_schema(schema: Option<&Schema>) -> String {
    let Some(s) = schema else {
        return "null".to_owned();
    };
    let mut out = s.kind.name().to_owned();
    match s.kind {
        SchemaType::Struct => {
            let fields: Vec<String> = s
                .fields
                .iter()
                .map(|f| format!("{}:{}", f.name, render_schema(Some(&f.schema))))
                .collect();
            let _ = write!(out, "{{{}}}", fields.join(","));
        }
        SchemaType::Array => {
            let _ = write!(out, "<{}>", render_schema(s.value_schema.as_deref()));
        }
        SchemaType::Map => {
            let _ = write!(
                out,
                "<{},{}>",
                render_schema(s.key_schema.as_deref()),
                render_schema(s.value_schema.as_deref())
            );
        }
        _ => {}
    }
    if s.optional {
        out.push('?');
    }
    out
}

fn render_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Boolean(b) => b.to_string(),
        Value::Int8(n) => format!("{n}i8"),
        Value::Int16(n) => format!("{n}i16"),
        Value::Int32(n) => format!("{n}i32"),
        Value::Int64(n) => format!("{n}i64"),
        Value::Float32(n) => format!("unrendered float {n}"),
        Value::Float64(n) => format!("unrendered double {n}"),
        Value::String(s) => json!(s).to_string(),
        Value::Bytes(b) => format!("bytes:{}", hex(b)),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(render_value).collect();
            format!("[{}]", items.join(","))
        }
        Value::Map(entries) => {
            let sorted: BTreeMap<String, String> = entries
                .iter()
                .map(|(k, v)| (render_value(k), render_value(v)))
                .collect();
            let items: Vec<String> = sorted.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", items.join(","))
        }
        Value::Struct(s) => {
            let items: Vec<String> = s
                .fields
                .iter()
                .map(|(name, v)| format!("{name}={}", render_value(v)))
                .collect();
            format!("Struct{{{}}}", items.join(","))
        }
    }
}

fn render_dlq(r: &DeadLetterRecord) -> Json {
    let headers: Vec<Json> = r
        .headers
        .iter()
        .map(|(k, v)| json!([k, header_text(k, v.as_deref())]))
        .collect();
    json!({
        "topic": "dlq",
        // The reporter leaves the partition to the producer (null), as Kafka's; what we read
        // back is partition 0 of the one-partition DLQ topic.
        "partition": null,
        "timestamp": r.timestamp,
        "key": text(r.key.as_deref()),
        "key_hex": r.key.as_deref().map(hex),
        "value": text(r.value.as_deref()),
        "value_hex": r.value.as_deref().map(hex),
        "headers": headers,
        "stacktrace_cause": first_cause_class(
            r.header(STACKTRACE)
                .and_then(|t| std::str::from_utf8(t).ok())
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("Caused by: "))
        ),
    })
}

/// The class of the first `Caused by:` (its message is the parser's or the runtime's text:
/// Jackson's or `NumberFormatException`'s in Kafka, serde_json's or ours here).
fn first_cause_class<'a>(mut causes: impl Iterator<Item = &'a str>) -> Json {
    causes
        .next()
        .map_or(Json::Null, |c| json!(c.split(": ").next().unwrap_or(c)))
}

fn render_kept(r: &SinkRecord) -> Json {
    let headers: Vec<Json> = r
        .headers
        .iter()
        .map(|h| {
            json!([
                h.key,
                render_schema(h.schema.as_ref()),
                render_value(&h.value)
            ])
        })
        .collect();
    json!({
        "topic": r.topic,
        "partition": r.kafka_partition,
        "offset": r.kafka_offset,
        "timestamp": r.timestamp,
        "key_schema": render_schema(r.key_schema.as_ref()),
        "key": render_value(&r.key),
        "value_schema": render_schema(r.value_schema.as_ref()),
        "value": render_value(&r.value),
        "headers": headers,
    })
}

/// Kafka's failure, as the exception chain the oracle wrote: the error handler's verdict (the
/// kind) and the error it was about.
fn kafka_error(chain: &Json) -> Result<Json, String> {
    let Some(chain) = chain.as_array() else {
        return Ok(Json::Null);
    };
    let lines: Vec<&str> = chain.iter().filter_map(Json::as_str).collect();
    const CONNECT: &str = "org.apache.kafka.connect.errors.ConnectException: ";
    for (i, line) in lines.iter().enumerate() {
        let kind = match line.strip_prefix(CONNECT) {
            Some("Tolerance exceeded in error handler") => "tolerance exceeded",
            Some("Unhandled exception in error handler") => "unhandled",
            _ => continue,
        };
        return Ok(json!({"kind": kind, "error": lines.get(i + 1)}));
    }
    match lines.split_first() {
        Some((first, rest))
            if first.ends_with("Exiting WorkerSinkTask due to unrecoverable exception.") =>
        {
            Ok(json!({"kind": "unrecoverable", "error": rest.first()}))
        }
        _ => Err(format!("an error the harness does not know: {lines:?}")),
    }
}

fn our_error(error: &TaskError) -> Json {
    let describe = |e: &ConnectError| format!("{}: {}", e.exception_class_name(), e.message());
    match error {
        TaskError::ToleranceExceeded(f) => {
            json!({"kind": "tolerance exceeded", "error": describe(&f.error)})
        }
        TaskError::Unhandled(f) => json!({"kind": "unhandled", "error": describe(&f.error)}),
        TaskError::Unrecoverable { error, .. } => {
            json!({"kind": "unrecoverable", "error": describe(error)})
        }
        other => json!({"kind": "other", "error": other.to_string()}),
    }
}

/// The golden's compared fields, in the shape [`run`] gives ours.
fn expected(golden: &Json) -> Result<Json, String> {
    let dlq: Vec<Json> = field(golden, "dlq")?
        .as_array()
        .ok_or("dlq is not a list")?
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let causes = r
                .get("stacktrace_causes")
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(obj) = r.as_object_mut() {
                obj.remove("stacktrace_causes");
                obj.insert(
                    "stacktrace_cause".to_owned(),
                    first_cause_class(causes.iter().filter_map(Json::as_str)),
                );
            }
            r
        })
        .collect();
    Ok(json!({
        "dlq": dlq,
        "sink_kept": field(golden, "sink_kept")?,
        "metrics": field(golden, "metrics")?,
        "retry_waits": field(golden, "retry_waits")?,
        "log": field(golden, "log")?,
        "error": kafka_error(field(golden, "error")?)?,
    }))
}

/// Runs the scenario through streams-connect: the same fields as [`expected`].
fn run(golden: &Json, setup: ScenarioFn) -> Result<Json, String> {
    let props: Vec<(String, String)> = field(golden, "props")?
        .as_object()
        .ok_or("props is not an object")?
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect();
    let inputs = field(golden, "input")?
        .as_array()
        .ok_or("input is not a list")?;
    let mut partitions = 1;
    for input in inputs {
        partitions = partitions.max(int_field(input, "partition")? + 1);
    }
    let builder = SinkTestDriver::builder(props)
        .partitions(i32::try_from(partitions).map_err(|e| e.to_string())?);
    let setup = setup(builder).map_err(|e| format!("setup: {e}"))?;
    let mut driver = setup.builder.build(setup.sink).map_err(|e| e.to_string())?;

    for (i, input) in inputs.iter().enumerate() {
        let timestamp = int_field(input, "timestamp")?;
        let now = driver.now_ms();
        if timestamp < now {
            return Err(format!(
                "input[{i}]: timestamp {timestamp} before the clock {now}"
            ));
        }
        driver.advance_ms(timestamp - now);
        let headers = field(input, "headers")?
            .as_array()
            .ok_or("headers is not a list")?
            .iter()
            .map(|h| {
                let name = h
                    .get(0)
                    .and_then(Json::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let value = h
                    .get(1)
                    .and_then(Json::as_str)
                    .map(|v| v.as_bytes().to_vec());
                (name, value)
            })
            .collect::<Vec<_>>();
        let header_refs: Vec<(&str, Option<&[u8]>)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_deref()))
            .collect();
        let partition = i32::try_from(int_field(input, "partition")?).map_err(|e| e.to_string())?;
        let topic = driver
            .input_topic(&text_field(input, "topic")?, StringSerde, StringSerde)
            .to_partition(partition);
        let offset = topic
            .pipe_raw(
                bytes_field(input, "key")?.as_deref(),
                bytes_field(input, "value")?.as_deref(),
                &header_refs,
            )
            .map_err(|e| e.to_string())?;
        if offset != int_field(input, "offset")? {
            return Err(format!("input[{i}] landed at offset {offset}"));
        }
    }

    let mut waits = Vec::new();
    let mut error = Json::Null;
    let mut outcome = driver.run();
    loop {
        match outcome {
            Ok(PollOutcome::Waiting { until_ms }) => {
                let wait = until_ms - driver.now_ms();
                waits.push(json!(wait));
                if setup.stop_at_wait == Some(waits.len() - 1) {
                    driver.stop().map_err(|e| e.to_string())?;
                    break;
                }
                outcome = driver.advance_and_run(wait);
            }
            Ok(_) => break,
            Err(ConnectTestError::Task(e)) => {
                error = our_error(&e);
                break;
            }
            Err(other) => return Err(other.to_string()),
        }
    }

    let dlq: Vec<Json> = driver
        .dead_letter_queue()
        .map_err(|e| e.to_string())?
        .iter()
        .map(render_dlq)
        .collect();
    let kept: Vec<Json> = driver.sink().records().iter().map(render_kept).collect();
    let mut metrics = serde_json::Map::new();
    for name in [
        "total-record-failures",
        "total-record-errors",
        "total-records-skipped",
        "total-retries",
        "total-errors-logged",
        "deadletterqueue-produce-requests",
        "deadletterqueue-produce-failures",
    ] {
        metrics.insert(name.to_owned(), json!(driver.metric(name)));
    }
    // An integer, as the golden's 0 (or "wall-clock").
    metrics.insert(
        "last-error-timestamp".to_owned(),
        json!(driver.metric("last-error-timestamp") as i64),
    );
    Ok(json!({
        "dlq": dlq,
        "sink_kept": kept,
        "metrics": metrics,
        "retry_waits": waits,
        "log": driver.worker().logged_errors(),
        "error": error,
    }))
}

// ---- the comparison ----

/// Every leaf where `ours` differs from `kafka`, with its path (`dlq[0].headers[9][1]`).
fn diff(path: &str, kafka: &Json, ours: &Json, out: &mut Vec<(String, Json, Json)>) {
    match (kafka, ours) {
        (Json::Object(k), Json::Object(o)) => {
            for (name, kv) in k {
                let p = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                diff(&p, kv, o.get(name).unwrap_or(&Json::Null), out);
            }
            for (name, ov) in o {
                if !k.contains_key(name) {
                    out.push((format!("{path}.{name}"), Json::Null, ov.clone()));
                }
            }
        }
        (Json::Array(k), Json::Array(o)) => {
            for (i, (kv, ov)) in k.iter().zip(o).enumerate() {
                diff(&format!("{path}[{i}]"), kv, ov, out);
            }
            if k.len() != o.len() {
                // The records one side has and the other lacks.
                let common = k.len().min(o.len());
                out.push((
                    format!(
                        "{path}[{common}..] (kafka has {}, ours {})",
                        k.len(),
                        o.len()
                    ),
                    Json::Array(k[common..].to_vec()),
                    Json::Array(o[common..].to_vec()),
                ));
            }
        }
        _ if kafka == ours => {}
        _ => out.push((path.to_owned(), kafka.clone(), ours.clone())),
    }
}

fn selected(name: &str) -> bool {
    std::env::var("ORACLE_SCENARIO").map_or(true, |part| name.contains(&part))
}

fn pretty(value: &Json) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[test]
fn every_scenario_matches_kafka_connect() {
    let mut failures = Vec::new();
    let mut matched = 0;
    let mut with_gaps = 0;
    let mut ran = 0;
    let mut gap_hits = vec![0usize; KNOWN_GAPS.len()];
    for (name, setup) in SCENARIOS {
        if !selected(name) {
            continue;
        }
        ran += 1;
        let result = load(name).and_then(|golden| Ok((expected(&golden)?, run(&golden, *setup)?)));
        let (kafka, ours) = match result {
            Ok(pair) => pair,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut differences = Vec::new();
        diff("", &kafka, &ours, &mut differences);
        let mut unexplained = Vec::new();
        let mut gaps = 0;
        for (path, k, o) in &differences {
            let gap = KNOWN_GAPS
                .iter()
                .enumerate()
                .find(|(_, g)| (g.scenario == "*" || g.scenario == *name) && g.path == path);
            match gap {
                Some((i, gap)) if (gap.check)(k, o) => {
                    gaps += 1;
                    gap_hits[i] += 1;
                }
                Some((_, gap)) => unexplained.push(format!(
                    "  {path}: differs, but not as the known gap says ({}):\n    kafka: {k}\n    ours:  {o}",
                    gap.reason
                )),
                None => unexplained.push(format!("  {path}:\n    kafka: {k}\n    ours:  {o}")),
            }
        }
        // A known gap whose field matches Kafka now: the entry must go.
        for gap in KNOWN_GAPS.iter().filter(|g| g.scenario == *name) {
            if !differences.iter().any(|(p, _, _)| p == gap.path) {
                unexplained.push(format!(
                    "  {}: matches Kafka now; remove its KNOWN_GAPS entry ({})",
                    gap.path, gap.reason
                ));
            }
        }
        if unexplained.is_empty() {
            if gaps == 0 {
                matched += 1;
            } else {
                with_gaps += 1;
            }
        } else {
            let mut report = format!(
                "{name} (compat/connect/golden/{name}.json) differs from Kafka Connect 4.4.0:\n{}",
                unexplained.join("\n")
            );
            if std::env::var_os("ORACLE_VERBOSE").is_some() {
                let _ = write!(
                    report,
                    "\n  --- kafka:\n{}\n  --- ours:\n{}",
                    pretty(&kafka),
                    pretty(&ours)
                );
            }
            failures.push(report);
        }
    }
    eprintln!(
        "connect oracle: {ran} scenarios, {matched} match Kafka Connect 4.4.0 on every field, {with_gaps} on every field but known gaps, {} fail",
        failures.len()
    );
    for (gap, hits) in KNOWN_GAPS.iter().zip(&gap_hits) {
        eprintln!(
            "  known gap ({hits} scenarios): {} {}: {}",
            gap.scenario, gap.path, gap.reason
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} scenarios differ from Kafka Connect:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_golden_file_has_a_scenario_and_back() -> Result<(), BoxError> {
    let mut files: Vec<String> = std::fs::read_dir(golden_dir())?
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_owned)
        })
        .collect();
    files.sort();
    let names: Vec<String> = SCENARIOS.iter().map(|(n, _)| (*n).to_owned()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a scenario is registered twice");
    assert_eq!(
        files, sorted,
        "compat/connect/golden and SCENARIOS list different scenarios"
    );
    Ok(())
}
