//! The sink pipeline end to end on the simulated cluster, through
//! `streams_test::connect`: every failure path with its exact DLQ record
//! and headers, retries on the mock clock, tolerance none, configuration
//! errors, KAFKA-6738, and a property test that nothing is lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use streams_connect::data::{Field, Schema, Struct, Value};
use streams_connect::json::JsonConverter;
use streams_connect::transforms::{
    Cast, Filter, InsertField, ReplaceField, TopicNameMatches, TransformStage, Transformation,
};
use streams_connect::{ConnectError, PollOutcome, SinkRecord, Stage, TaskError};
use streams_core::serde::StringSerde;
use streams_test::connect::{
    ConnectErrorHeaders, ConnectTestError, DeadLetterRecord, RecordingSink, SinkTestDriver,
    SinkTestDriverBuilder,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const JSON_CONVERTER: &str = "org.apache.kafka.connect.json.JsonConverter";
const DATA_EXCEPTION: &str = "org.apache.kafka.connect.errors.DataException";
const SERIALIZATION_EXCEPTION: &str = "org.apache.kafka.common.errors.SerializationException";
const PARSE_FAILED: &str =
    "Converting byte[] to Kafka Connect data failed due to serialization error: ";

fn props(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut props: Vec<(String, String)> = [
        ("name", "orders-sink"),
        ("topics", "orders"),
        ("errors.tolerance", "all"),
        ("errors.deadletterqueue.topic.name", "dlq"),
        ("errors.deadletterqueue.topic.replication.factor", "1"),
        ("errors.deadletterqueue.context.headers.enable", "true"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    for (k, v) in extra {
        props.retain(|(key, _)| key != k);
        props.push(((*k).to_owned(), (*v).to_owned()));
    }
    props
}

fn json_sink(extra: &[(&str, &str)]) -> SinkTestDriverBuilder {
    SinkTestDriver::builder(props(extra)).value_converter(JsonConverter::schemaless())
}

fn serde_message(bytes: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

/// Every header Kafka writes, in Kafka's order, with its exact bytes.
fn context_headers(
    offset: i64,
    stage: &str,
    class: &str,
    exception: &str,
    message: &str,
    stacktrace: &str,
) -> Vec<(String, Option<Vec<u8>>)> {
    [
        ("__connect.errors.topic", "orders".to_owned()),
        ("__connect.errors.partition", "0".to_owned()),
        ("__connect.errors.offset", offset.to_string()),
        ("__connect.errors.connector.name", "orders-sink".to_owned()),
        ("__connect.errors.task.id", "0".to_owned()),
        ("__connect.errors.stage", stage.to_owned()),
        ("__connect.errors.class.name", class.to_owned()),
        (
            "__connect.errors.exception.class.name",
            exception.to_owned(),
        ),
        ("__connect.errors.exception.message", message.to_owned()),
        (
            "__connect.errors.exception.stacktrace",
            stacktrace.to_owned(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), Some(v.into_bytes())))
    .collect()
}

fn metrics(driver: &SinkTestDriver<RecordingSink>) -> [f64; 6] {
    [
        "total-record-failures",
        "total-record-errors",
        "total-records-skipped",
        "total-retries",
        "deadletterqueue-produce-requests",
        "total-errors-logged",
    ]
    .map(|name| driver.metric(name))
}

#[test]
fn value_converter_failure_goes_to_the_dlq_unchanged_with_kafkas_headers() -> TestResult {
    let mut driver = json_sink(&[]).build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("o-1", r#"{"id":1}"#)?;
    driver.advance_ms(5);
    orders.pipe_raw(
        Some(b"o-2"),
        Some(b"{not json"),
        &[("trace", Some(b"t-9")), ("empty", None)],
    )?;
    orders.pipe_key_value("o-3", r#"{"id":3}"#)?;
    assert_eq!(driver.run()?, PollOutcome::Idle);

    let put: Vec<i64> = driver
        .sink()
        .records()
        .iter()
        .map(|r| r.kafka_offset)
        .collect();
    assert_eq!(put, [0, 2]);
    let stacktrace = format!(
        "{DATA_EXCEPTION}: {PARSE_FAILED}\nCaused by: {SERIALIZATION_EXCEPTION}: {}\n",
        serde_message(b"{not json")
    );
    let mut headers = vec![
        ("trace".to_owned(), Some(b"t-9".to_vec())),
        ("empty".to_owned(), None),
    ];
    headers.extend(context_headers(
        1,
        "VALUE_CONVERTER",
        JSON_CONVERTER,
        DATA_EXCEPTION,
        PARSE_FAILED,
        &stacktrace,
    ));
    let expected = DeadLetterRecord {
        offset: 0,
        timestamp: 5,
        key: Some(b"o-2".to_vec()),
        value: Some(b"{not json".to_vec()),
        headers,
        errors: Some(ConnectErrorHeaders {
            topic: "orders".to_owned(),
            partition: 0,
            offset: 1,
            connector_name: "orders-sink".to_owned(),
            task_id: 0,
            stage: "VALUE_CONVERTER".to_owned(),
            class_name: JSON_CONVERTER.to_owned(),
            exception_class_name: Some(DATA_EXCEPTION.to_owned()),
            exception_message: Some(PARSE_FAILED.to_owned()),
            exception_stacktrace: Some(stacktrace.clone()),
        }),
    };
    assert_eq!(driver.dead_letter_queue()?, [expected]);
    // failures, errors, skipped, retries, DLQ requests, logged
    assert_eq!(metrics(&driver), [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]);
    assert_eq!(driver.metric("sink-record-read-total"), 3.0);
    assert_eq!(driver.metric("sink-record-send-total"), 2.0);
    assert_eq!(driver.metric("last-error-timestamp"), 5.0);
    Ok(())
}

#[test]
fn key_converter_failure_names_the_key_converter() -> TestResult {
    let mut driver = SinkTestDriver::builder(props(&[]))
        .key_converter(JsonConverter::new())
        .build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_raw(Some(br#"{"id":"o-1"}"#), Some(b"v"), &[])?;
    driver.run()?;
    let message = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.";
    let dlq = driver.dead_letter_queue()?;
    assert_eq!(
        dlq[0].headers,
        context_headers(
            0,
            "KEY_CONVERTER",
            JSON_CONVERTER,
            DATA_EXCEPTION,
            message,
            &format!("{DATA_EXCEPTION}: {message}\n")
        )
    );
    assert!(driver.sink().records().is_empty());
    Ok(())
}

#[test]
fn header_converter_failure_names_the_header_converter() -> TestResult {
    let mut driver = SinkTestDriver::builder(props(&[]))
        .header_converter(JsonConverter::schemaless())
        .build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_raw(Some(b"k"), Some(b"v"), &[("good", Some(b"1"))])?;
    orders.pipe_raw(Some(b"k"), Some(b"v"), &[("bad", Some(b"nope"))])?;
    driver.run()?;
    let put = driver.sink().records();
    assert_eq!(put.len(), 1);
    assert_eq!(put[0].headers[0].value, Value::Int64(1));
    let dlq = driver.dead_letter_queue()?;
    let errors = dlq[0].errors.as_ref().ok_or("no context")?;
    assert_eq!(
        (
            errors.offset,
            errors.stage.as_str(),
            errors.class_name.as_str()
        ),
        (1, "HEADER_CONVERTER", JSON_CONVERTER)
    );
    assert_eq!(
        dlq[0].original_headers(),
        [("bad".to_owned(), Some(b"nope".to_vec()))]
    );
    Ok(())
}

#[test]
fn transform_failure_is_tolerated_not_retried() -> TestResult {
    let mut driver = SinkTestDriver::builder(props(&[("errors.retry.timeout", "60000")]))
        .value_converter(JsonConverter::schemaless())
        .transform(TransformStage::new(
            InsertField::value().static_field("origin", "kafka"),
        ))
        .build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("o-1", r#"{"id":1}"#)?;
    orders.pipe_key_value("o-2", r#""just a string""#)?;
    assert_eq!(driver.run()?, PollOutcome::Idle);
    assert_eq!(
        driver.sink().records()[0].value,
        Value::Map(vec![
            (Value::string("id"), Value::Int64(1)),
            (Value::string("origin"), Value::string("kafka"))
        ])
    );
    let message = "Only Map objects supported in absence of schema for [field insertion], found: java.lang.String";
    assert_eq!(
        driver.dead_letter_queue()?[0].headers,
        context_headers(
            1,
            "TRANSFORMATION",
            "org.apache.kafka.connect.transforms.InsertField$Value",
            DATA_EXCEPTION,
            message,
            &format!("{DATA_EXCEPTION}: {message}\n")
        )
    );
    assert_eq!(metrics(&driver), [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]);
    Ok(())
}

#[test]
fn errant_record_from_put_goes_to_the_dlq_as_task_put() -> TestResult {
    let sink = RecordingSink::new().report_errant(|r| {
        (r.value.as_str() == Some("reject")).then(|| ConnectError::data("the table refused it"))
    });
    let mut driver = SinkTestDriver::builder(props(&[])).build(sink)?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "keep")?;
    orders.pipe_key_value("b", "reject")?;
    driver.run()?;
    assert_eq!(driver.sink().records().len(), 1);
    let message = "the table refused it";
    assert_eq!(
        driver.dead_letter_queue()?[0].headers,
        context_headers(
            1,
            "TASK_PUT",
            "org.apache.kafka.connect.sink.SinkTask",
            DATA_EXCEPTION,
            message,
            &format!("{DATA_EXCEPTION}: {message}\n")
        )
    );
    // executeFailed: a failure and a DLQ request; nothing skipped or "errored".
    assert_eq!(metrics(&driver), [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    Ok(())
}

#[test]
fn errant_record_under_tolerance_none_fails_the_task_after_the_dlq() -> TestResult {
    let sink = RecordingSink::new().report_errant(|_| Some(ConnectError::data("no")));
    let mut driver = SinkTestDriver::builder(props(&[("errors.tolerance", "none")])).build(sink)?;
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("a", "x")?;
    let Err(ConnectTestError::Task(error)) = driver.run() else {
        return Err("the task did not fail".into());
    };
    let TaskError::ToleranceExceeded(failure) = *error else {
        return Err(format!("unexpected {error}").into());
    };
    assert_eq!((failure.stage, failure.offset), (Stage::TaskPut, 0));
    assert_eq!(driver.dead_letter_queue()?.len(), 1);
    Ok(())
}

#[test]
fn without_context_headers_the_dlq_record_has_only_the_originals() -> TestResult {
    let mut driver = json_sink(&[("errors.deadletterqueue.context.headers.enable", "false")])
        .build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_raw(None, Some(b"]"), &[("h", Some(b"1"))])?;
    driver.run()?;
    let dlq = driver.dead_letter_queue()?;
    assert_eq!(dlq.len(), 1);
    assert_eq!(
        (dlq[0].key.as_deref(), dlq[0].value.as_deref()),
        (None, Some(&b"]"[..]))
    );
    assert_eq!(dlq[0].headers, [("h".to_owned(), Some(b"1".to_vec()))]);
    assert_eq!(dlq[0].errors, None);
    Ok(())
}

#[test]
fn error_log_writes_kafkas_line_without_a_dlq() -> TestResult {
    let mut driver = SinkTestDriver::builder([
        ("name", "orders-sink"),
        ("topics", "orders"),
        ("errors.tolerance", "all"),
        ("errors.log.enable", "true"),
        ("errors.log.include.messages", "true"),
    ])
    .value_converter(JsonConverter::schemaless())
    .build(RecordingSink::new())?;
    driver.advance_ms(42);
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("k", "{")?;
    driver.run()?;
    assert_eq!(
        driver.worker().logged_errors(),
        [
            "Error encountered in task orders-sink-0. Executing stage 'VALUE_CONVERTER' with class 'org.apache.kafka.connect.json.JsonConverter', where consumed record is {topic='orders', partition=0, offset=0, timestamp=42, timestampType=CreateTime}."
        ]
    );
    assert_eq!(metrics(&driver), [1.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
    assert!(driver.dead_letter_queue()?.is_empty());
    Ok(())
}

#[test]
fn tolerance_none_stops_the_task_naming_topic_partition_offset_and_stage() -> TestResult {
    let mut driver = json_sink(&[("errors.tolerance", "none")]).build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("o-1", "{}")?;
    orders.pipe_key_value("o-2", "{oops")?;
    let Err(error) = driver.run() else {
        return Err("the task did not fail".into());
    };
    assert_eq!(
        error.to_string(),
        format!(
            "Tolerance exceeded in error handler: connector 'orders-sink' task 0, stage VALUE_CONVERTER (class {JSON_CONVERTER}) failed on the record of topic 'orders' partition 0 at offset 1: {DATA_EXCEPTION}: {PARSE_FAILED} (caused by {SERIALIZATION_EXCEPTION}: {}); set errors.tolerance=all to skip such records (with errors.deadletterqueue.topic.name to keep them), or fix the data",
            serde_message(b"{oops")
        )
    );
    // Nothing was put (the batch died with the task), the bad record is in
    // the DLQ anyway, and nothing was committed.
    assert!(driver.sink().records().is_empty());
    assert_eq!(driver.dead_letter_queue()?.len(), 1);
    assert_eq!(metrics(&driver), [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    let Err(again) = driver.run() else {
        return Err("a failed task ran".into());
    };
    assert!(again.to_string().starts_with(
        "connector 'orders-sink' task 0 has failed and cannot run until restarted: Tolerance exceeded"
    ));
    driver.stop()?;
    assert_eq!(
        driver
            .committed_offsets()
            .values()
            .copied()
            .collect::<Vec<_>>(),
        [0]
    );
    Ok(())
}

/// A transform that fails retriably its first `failures` calls.
#[derive(Debug)]
struct Flaky {
    failures: usize,
    calls: Arc<AtomicUsize>,
}

impl Transformation for Flaky {
    fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) < self.failures {
            Err(ConnectError::retriable("lookup service unavailable"))
        } else {
            Ok(Some(record))
        }
    }

    fn class_name(&self) -> String {
        "Flaky".to_owned()
    }
}

fn flaky_driver(
    extra: &[(&str, &str)],
    failures: usize,
) -> Result<(SinkTestDriver<RecordingSink>, Arc<AtomicUsize>), ConnectTestError> {
    let calls = Arc::new(AtomicUsize::new(0));
    let driver = SinkTestDriver::builder(props(extra))
        .transform(TransformStage::new(Flaky {
            failures,
            calls: Arc::clone(&calls),
        }))
        .build(RecordingSink::new())?;
    Ok((driver, calls))
}

#[test]
fn retries_wait_300_600_1200_ms_on_the_mock_clock_and_give_up_at_the_timeout() -> TestResult {
    // Six failures: every attempt record a gets; b, behind it, then passes.
    let (mut driver, calls) = flaky_driver(&[("errors.retry.timeout", "5000")], 6)?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "retried")?;
    orders.pipe_key_value("b", "behind it")?;
    assert_eq!(driver.run()?, PollOutcome::Waiting { until_ms: 300 });
    driver.advance_ms(299);
    assert_eq!(driver.run()?, PollOutcome::Waiting { until_ms: 300 });
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let mut waits = Vec::new();
    let mut outcome = driver.advance_and_run(1)?;
    while let PollOutcome::Waiting { until_ms } = outcome {
        waits.push(until_ms);
        let now = driver.now_ms();
        outcome = driver.advance_and_run(until_ms - now)?;
    }
    // 300 + 600 = 900, + 1200 = 2100, + 2400 = 4500; 4800 more would pass
    // the deadline, so the last wait ends at it.
    assert_eq!(waits, [900, 2_100, 4_500, 5_000]);
    assert_eq!(outcome, PollOutcome::Idle);
    // Attempts at 0, 300, 900, 2100, 4500 (record a) and 5000, then b's once.
    assert_eq!(calls.load(Ordering::SeqCst), 7);
    // Six failed attempts; Kafka counts the last one twice.
    assert_eq!(metrics(&driver), [7.0, 1.0, 1.0, 5.0, 1.0, 0.0]);
    let put: Vec<i64> = driver
        .sink()
        .records()
        .iter()
        .map(|r| r.kafka_offset)
        .collect();
    assert_eq!(put, [1]);
    let message = "lookup service unavailable";
    assert_eq!(
        driver.dead_letter_queue()?[0].headers,
        context_headers(
            0,
            "TRANSFORMATION",
            "Flaky",
            "org.apache.kafka.connect.errors.RetriableException",
            message,
            &format!("org.apache.kafka.connect.errors.RetriableException: {message}\n")
        )
    );
    assert_eq!(driver.metric("last-error-timestamp"), 5_000.0);
    Ok(())
}

#[test]
fn retry_delays_are_capped_by_errors_retry_delay_max_ms() -> TestResult {
    let (mut driver, calls) = flaky_driver(
        &[
            ("errors.retry.timeout", "-1"),
            ("errors.retry.delay.max.ms", "1000"),
        ],
        5,
    )?;
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("a", "v")?;
    let mut gaps = Vec::new();
    let mut outcome = driver.run()?;
    while let PollOutcome::Waiting { until_ms } = outcome {
        gaps.push(until_ms - driver.now_ms());
        let now = driver.now_ms();
        outcome = driver.advance_and_run(until_ms - now)?;
    }
    assert_eq!(gaps, [300, 600, 1_000, 1_000, 1_000]);
    assert_eq!(calls.load(Ordering::SeqCst), 6);
    assert_eq!(driver.sink().records().len(), 1);
    assert_eq!(metrics(&driver), [5.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
    assert!(driver.dead_letter_queue()?.is_empty());
    Ok(())
}

#[test]
fn by_default_a_retriable_error_is_not_retried() -> TestResult {
    let (mut driver, calls) = flaky_driver(&[], 1)?;
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("a", "v")?;
    assert_eq!(driver.run()?, PollOutcome::Idle);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // One failed attempt, counted twice as Kafka does when no retry is left.
    assert_eq!(metrics(&driver), [2.0, 1.0, 1.0, 0.0, 1.0, 0.0]);
    Ok(())
}

#[test]
fn stopping_during_a_backoff_skips_and_reports_the_record() -> TestResult {
    let (mut driver, _) = flaky_driver(&[("errors.retry.timeout", "-1")], usize::MAX)?;
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("a", "v")?;
    assert_eq!(driver.run()?, PollOutcome::Waiting { until_ms: 300 });
    driver.stop()?;
    assert_eq!(metrics(&driver), [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    assert_eq!(driver.dead_letter_queue()?.len(), 1);
    assert!(driver.sink().stopped());
    Ok(())
}

#[test]
fn a_retriable_put_redelivers_the_batch_after_the_tasks_timeout() -> TestResult {
    let sink = RecordingSink::new()
        .fail_retriably(2)
        .redelivery_timeout_ms(1_000);
    let mut driver = SinkTestDriver::builder(props(&[])).build(sink)?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "1")?;
    orders.pipe_key_value("b", "2")?;
    assert_eq!(driver.run()?, PollOutcome::Waiting { until_ms: 1_000 });
    assert_eq!(
        driver.advance_and_run(999)?,
        PollOutcome::Waiting { until_ms: 1_000 }
    );
    assert_eq!(driver.sink().puts(), 1);
    assert_eq!(
        driver.advance_and_run(1)?,
        PollOutcome::Waiting { until_ms: 2_000 }
    );
    orders.pipe_key_value("c", "3")?;
    assert_eq!(driver.advance_and_run(1_000)?, PollOutcome::Idle);
    let put: Vec<i64> = driver
        .sink()
        .records()
        .iter()
        .map(|r| r.kafka_offset)
        .collect();
    assert_eq!(put, [0, 1, 2]);
    assert_eq!(driver.sink().puts(), 4);
    assert_eq!(driver.worker().sink_metrics().redeliveries, 2);
    // Kafka does not count put redeliveries as error-handling retries.
    assert_eq!(metrics(&driver), [0.0; 6]);
    Ok(())
}

#[test]
fn a_non_retriable_put_error_kills_the_task_whatever_the_tolerance() -> TestResult {
    let mut driver =
        SinkTestDriver::builder(props(&[])).build(RecordingSink::new().fail_fatally_at(1))?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "1")?;
    orders.pipe_key_value("b", "2")?;
    let Err(error) = driver.run() else {
        return Err("the task did not fail".into());
    };
    assert_eq!(
        error.to_string(),
        "Exiting WorkerSinkTask due to unrecoverable exception: connector 'orders-sink' task 0, put of 2 records (first: topic 'orders' partition 0 offset 0) failed: org.apache.kafka.connect.errors.ConnectException: the sink cannot write the record at offset 1; fix the sink and restart the task (return a retriable error to have the batch redelivered instead)"
    );
    assert!(driver.dead_letter_queue()?.is_empty());
    Ok(())
}

#[test]
fn offsets_commit_past_skipped_records_on_the_flush_interval_and_at_stop() -> TestResult {
    let mut driver =
        json_sink(&[("offset.flush.interval.ms", "10000")]).build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "{}")?;
    orders.pipe_key_value("b", "bad")?;
    driver.run()?;
    let committed = |d: &SinkTestDriver<RecordingSink>| {
        d.committed_offsets().values().copied().collect::<Vec<_>>()
    };
    assert_eq!(committed(&driver), [0]);
    driver.advance_and_run(10_000)?;
    assert_eq!(committed(&driver), [2]);
    orders.pipe_key_value("c", "{}")?;
    driver.run()?;
    driver.stop()?;
    assert_eq!(committed(&driver), [3]);
    assert!(driver.sink().stopped());
    Ok(())
}

#[test]
fn json_with_schemas_cast_replace_and_filter_with_a_negated_predicate() -> TestResult {
    let mut driver = SinkTestDriver::builder(props(&[("topics", "orders,audit-orders")]))
        .value_converter(JsonConverter::new())
        .transform(TransformStage::new(Cast::value("qty:int64")?))
        .transform(TransformStage::new(
            ReplaceField::value()
                .exclude(["secret"])
                .renames("qty:quantity")?,
        ))
        .transform(
            TransformStage::new(Filter).with_predicate(TopicNameMatches::new("orders")?, true),
        )
        .build(RecordingSink::new())?;
    let envelope = r#"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int32","optional":false,"field":"qty"},{"type":"string","optional":true,"field":"secret"}],"optional":false},"payload":{"id":"o-1","qty":3,"secret":"s"}}"#;
    driver
        .input_topic("orders", StringSerde, StringSerde)
        .pipe_key_value("o-1", envelope)?;
    driver
        .input_topic("audit-orders", StringSerde, StringSerde)
        .pipe_key_value("o-1", envelope)?;
    driver.run()?;
    let put = driver.sink().records();
    assert_eq!(put.len(), 1);
    assert_eq!(put[0].topic, "orders");
    assert_eq!(
        put[0].value,
        Value::Struct(Struct::new([
            ("id", Value::string("o-1")),
            ("quantity", Value::Int64(3))
        ]))
    );
    assert_eq!(
        put[0].value_schema.as_ref().map(|s| s.fields.clone()),
        Some(vec![
            Field::new("id", Schema::string()),
            Field::new("quantity", Schema::int64())
        ])
    );
    assert_eq!(driver.worker().sink_metrics().records_filtered, 1);
    assert_eq!(metrics(&driver), [0.0; 6]);
    Ok(())
}

#[test]
fn configuration_errors_have_kafkas_messages() {
    let error = |extra: &[(&str, &str)]| match json_sink(extra).build(RecordingSink::new()) {
        Ok(_) => "built".to_owned(),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        error(&[("errors.tolerance", "some")]),
        "Invalid value some for configuration errors.tolerance: String must be one of: none, all"
    );
    assert_eq!(
        error(&[("errors.retry.timeout", "soon")]),
        "Invalid value soon for configuration errors.retry.timeout: Not a number of type LONG"
    );
    assert_eq!(
        error(&[("errors.retry.delay.max.ms", "1s")]),
        "Invalid value 1s for configuration errors.retry.delay.max.ms: Not a number of type LONG"
    );
    assert_eq!(
        error(&[("errors.log.enable", "yes")]),
        "Invalid value yes for configuration errors.log.enable: Expected value to be either true or false"
    );
    assert_eq!(
        error(&[("errors.deadletterqueue.topic.replication.factor", "40000")]),
        "Invalid value 40000 for configuration errors.deadletterqueue.topic.replication.factor: Not a number of type SHORT"
    );
    assert_eq!(
        error(&[("errors.deadletterqueue.topic.name", "orders")]),
        "Invalid value orders for configuration topics: The DLQ topic 'orders' may not be included in the list of topics ('topics=[orders]') consumed by the connector"
    );
    assert_eq!(
        error(&[("topics", " ")]),
        "Invalid value   for configuration topics: Must configure one of topics or topics.regex"
    );
    assert_eq!(
        error(&[("name", "")]),
        "Missing required configuration \"name\" which has no default value."
    );
}

#[test]
fn a_dlq_topic_the_cluster_cannot_replicate_fails_the_start() {
    // Kafka's default replication factor, 3, on a single broker.
    let result = json_sink(&[("errors.deadletterqueue.topic.replication.factor", "3")])
        .build(RecordingSink::new());
    let Err(ConnectTestError::Task(error)) = result else {
        panic!("the task started");
    };
    let TaskError::DeadLetterQueue {
        topic, connector, ..
    } = error.as_ref()
    else {
        panic!("unexpected {error}");
    };
    assert_eq!((topic.as_str(), connector.as_str()), ("dlq", "orders-sink"));
    assert!(error.to_string().starts_with(
        "Could not initialize dead letter queue with topic=dlq for connector 'orders-sink' task 0: "
    ));
}

/// KAFKA-6738: a converter error in a sink task killed the task, and the
/// record with it. With KIP-298's errors.tolerance=all and a DLQ, the task
/// goes on and the record is kept, unchanged, with what went wrong.
#[test]
fn kafka_6738_converter_error_in_a_sink_task_goes_to_the_dlq() -> TestResult {
    let mut driver = json_sink(&[]).build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    for (key, value) in [("1", r#"{"n":1}"#), ("2", "not-json"), ("3", r#"{"n":3}"#)] {
        orders.pipe_key_value(key, value)?;
    }
    assert_eq!(driver.run()?, PollOutcome::Idle);
    let put: Vec<&Value> = driver.sink().records().iter().map(|r| &r.value).collect();
    assert_eq!(
        put,
        [
            &Value::Map(vec![(Value::string("n"), Value::Int64(1))]),
            &Value::Map(vec![(Value::string("n"), Value::Int64(3))])
        ]
    );
    let dlq = driver.dead_letter_queue()?;
    assert_eq!(dlq.len(), 1);
    assert_eq!(
        (dlq[0].key.as_deref(), dlq[0].value.as_deref()),
        (Some(&b"2"[..]), Some(&b"not-json"[..]))
    );
    let errors = dlq[0].errors.as_ref().ok_or("no context headers")?;
    assert_eq!(
        (
            errors.stage.as_str(),
            errors.offset,
            errors.exception_class_name.as_deref()
        ),
        ("VALUE_CONVERTER", 1, Some(DATA_EXCEPTION))
    );
    // Before KIP-298 (tolerance none, Kafka's default), the same input stops the task.
    let mut before = json_sink(&[("errors.tolerance", "none")]).build(RecordingSink::new())?;
    let orders = before.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("1", r#"{"n":1}"#)?;
    orders.pipe_key_value("2", "not-json")?;
    assert!(before.run().is_err());
    Ok(())
}

mod nothing_is_lost {
    use proptest::prelude::*;
    use proptest::test_runner::{Config as ProptestConfig, RngSeed};

    use super::*;

    /// What one input record is.
    #[derive(Debug, Clone, Copy)]
    enum Input {
        Good,
        BadBytes,
        FailingTransform,
        ErrantInPut,
    }

    fn input() -> impl Strategy<Value = Input> {
        prop_oneof![
            4 => Just(Input::Good),
            1 => Just(Input::BadBytes),
            1 => Just(Input::FailingTransform),
            1 => Just(Input::ErrantInPut),
        ]
    }

    /// A transform that fails on values holding `"fail"`.
    #[derive(Debug)]
    struct FailOnFlag;

    impl Transformation for FailOnFlag {
        fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
            match record.value.get("fail") {
                Some(_) => Err(ConnectError::data("flagged")),
                None => Ok(Some(record)),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 48,
            rng_seed: RngSeed::Fixed(0x6738),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Each input record ends up put, in the DLQ, or counted as
        /// skipped, and the three add up to the input, whether the DLQ is
        /// there or not and whatever the puts do.
        #[test]
        fn put_plus_dlq_plus_skipped_is_the_input(
            inputs in proptest::collection::vec(input(), 1..40),
            with_dlq in any::<bool>(),
            retriable_puts in 0usize..3,
            batch in 1usize..6,
        ) {
            let batch = batch.to_string();
            let mut extra = vec![("consumer.override.max.poll.records", batch.as_str())];
            if !with_dlq {
                extra.push(("errors.deadletterqueue.topic.name", ""));
            }
            let sink = RecordingSink::new()
                .fail_retriably(retriable_puts)
                .redelivery_timeout_ms(100)
                .report_errant(|r| r.value.get("errant").map(|_| ConnectError::data("errant")));
            let mut driver = json_sink(&extra)
                .transform(TransformStage::new(FailOnFlag))
                .build(sink)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let orders = driver.input_topic("orders", StringSerde, StringSerde);
            for (i, kind) in inputs.iter().enumerate() {
                let value = match kind {
                    Input::Good => format!(r#"{{"i":{i}}}"#),
                    Input::BadBytes => format!("{{{i}"),
                    Input::FailingTransform => format!(r#"{{"i":{i},"fail":true}}"#),
                    Input::ErrantInPut => format!(r#"{{"i":{i},"errant":true}}"#),
                };
                orders.pipe_key_value(i.to_string(), value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let mut outcome = driver.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
            while let PollOutcome::Waiting { until_ms } = outcome {
                let now = driver.now_ms();
                outcome = driver.advance_and_run(until_ms - now).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let put: Vec<i64> = driver.sink().records().iter().map(|r| r.kafka_offset).collect();
            let dlq: Vec<i64> = driver
                .dead_letter_queue()
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .iter()
                .filter_map(|r| r.errors.as_ref().map(|e| e.offset))
                .collect();
            let skipped = driver.metric("total-records-skipped") as usize;
            let errant = inputs.iter().filter(|k| matches!(k, Input::ErrantInPut)).count();
            let bad = inputs.len() - errant - inputs.iter().filter(|k| matches!(k, Input::Good)).count();
            let expected_put: Vec<i64> = inputs
                .iter()
                .enumerate()
                .filter(|(_, k)| matches!(k, Input::Good))
                .map(|(i, _)| i as i64)
                .collect();
            prop_assert_eq!(&put, &expected_put);
            prop_assert_eq!(skipped, bad);
            if with_dlq {
                let mut expected_dlq: Vec<i64> = inputs
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| !matches!(k, Input::Good))
                    .map(|(i, _)| i as i64)
                    .collect();
                let mut sorted = dlq.clone();
                sorted.sort_unstable();
                expected_dlq.sort_unstable();
                prop_assert_eq!(sorted, expected_dlq);
                // put + DLQ = every input, each once
                prop_assert_eq!(put.len() + dlq.len(), inputs.len());
            } else {
                prop_assert!(dlq.is_empty());
                // put + skipped + reported errant = every input
                prop_assert_eq!(put.len() + skipped + errant, inputs.len());
                prop_assert_eq!(driver.metric("total-record-failures") as usize, bad + errant);
            }
            prop_assert_eq!(driver.metric("sink-record-read-total") as usize, inputs.len());
            driver.stop().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let committed: Vec<i64> = driver.committed_offsets().values().copied().collect();
            prop_assert_eq!(committed, vec![inputs.len() as i64]);
        }
    }
}

#[test]
fn a_serde_as_key_converter_reports_the_serdes_reason() -> TestResult {
    use streams_connect::converter::SerdeConverter;
    use streams_core::serde::{I64Serde, Serde};

    let mut driver = SinkTestDriver::builder(props(&[]))
        .key_converter(SerdeConverter::new(I64Serde, |n: i64| {
            (Some(Schema::int64()), Value::Int64(n))
        }))
        .build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_raw(Some(&7i64.to_be_bytes()), Some(b"v"), &[])?;
    orders.pipe_raw(Some(b"abc"), Some(b"v"), &[])?;
    driver.run()?;
    assert_eq!(driver.sink().records()[0].key, Value::Int64(7));
    let reason = match I64Serde.deserialize("orders", b"abc") {
        Ok(n) => format!("decoded {n}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        driver.dead_letter_queue()?[0].headers,
        context_headers(
            1,
            "KEY_CONVERTER",
            "SerdeConverter<i64>",
            DATA_EXCEPTION,
            PARSE_FAILED,
            &format!(
                "{DATA_EXCEPTION}: {PARSE_FAILED}\nCaused by: {SERIALIZATION_EXCEPTION}: {reason}\n"
            )
        )
    );
    Ok(())
}

#[test]
fn a_failed_task_commits_what_it_put_before_the_failure_when_stopped() -> TestResult {
    let mut driver = json_sink(&[("errors.tolerance", "none")]).build(RecordingSink::new())?;
    let orders = driver.input_topic("orders", StringSerde, StringSerde);
    orders.pipe_key_value("a", "{}")?;
    assert_eq!(driver.run()?, PollOutcome::Idle);
    orders.pipe_key_value("b", "{")?;
    assert!(driver.run().is_err());
    driver.stop()?;
    // Offset 0 was put; offset 1 failed and is read again after a restart.
    assert_eq!(
        driver
            .committed_offsets()
            .values()
            .copied()
            .collect::<Vec<_>>(),
        [1]
    );
    Ok(())
}

#[test]
fn every_partition_is_read_and_the_dlq_names_the_partition() -> TestResult {
    let mut driver = json_sink(&[]).partitions(3).build(RecordingSink::new())?;
    for partition in 0..3 {
        let input = driver
            .input_topic("orders", StringSerde, StringSerde)
            .to_partition(partition);
        input.pipe_key_value("k", r#"{"ok":true}"#)?;
        if partition == 2 {
            input.pipe_key_value("k", "{")?;
        }
    }
    driver.run()?;
    let mut read: Vec<(i32, i64)> = driver
        .sink()
        .records()
        .iter()
        .map(|r| (r.kafka_partition, r.kafka_offset))
        .collect();
    read.sort_unstable();
    assert_eq!(read, [(0, 0), (1, 0), (2, 0)]);
    let dlq = driver.dead_letter_queue()?;
    let errors = dlq[0].errors.as_ref().ok_or("no context headers")?;
    assert_eq!((errors.partition, errors.offset), (2, 1));
    driver.stop()?;
    assert_eq!(
        driver
            .committed_offsets()
            .values()
            .copied()
            .collect::<Vec<_>>(),
        [1, 1, 2]
    );
    Ok(())
}
