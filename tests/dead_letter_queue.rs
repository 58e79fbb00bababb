//! Bad records (issue 15): the deserialization, processing and production
//! exception handlers, by Kafka's config names and by typed builders, the
//! dead letter queue (KIP-1034) with its exact records and headers, the
//! fallible DSL forms, panics in user code, and the dropped-records
//! metric. The oracle scenarios that pin the header bytes to Kafka 4.4.0
//! are in `compat/scenarios_dlq.rs`.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use streams_core::config::{
    DeserializationExceptionHandler, ErrorHandlerContext, FixedProductionExceptionHandler,
    HandlerResult, LogAndContinueExceptionHandler, LogAndContinueProcessingExceptionHandler,
    ProcessingExceptionHandler, Response, maybe_build_dead_letter_queue_records,
};
use streams_core::dsl::{Consumed, Produced};
use streams_core::engine::TaskMetrics;
use streams_core::serde::{BytesSerde, I64Serde, Serde, StringSerde};
use streams_core::{Headers, SerdeError, StreamsBuilder, StreamsConfig, StreamsError, Topology};
use streams_test::{TestRecord, TestTopology, TopologyTestDriver};

type S = String;

/// A record's headers as (key, UTF-8 value) pairs.
fn pairs(headers: &Headers) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|h| {
            let v = h.value.as_deref().map(String::from_utf8_lossy);
            (h.key.clone(), v.map(|v| v.into_owned()).unwrap_or_default())
        })
        .collect()
}

fn p(key: &str, value: &str) -> (String, String) {
    (key.to_owned(), value.to_owned())
}

/// `in` (String, i64) to `out`.
fn longs() -> Topology {
    let b = StreamsBuilder::new();
    b.stream_with::<S, i64>("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    b.build().expect("valid topology")
}

/// `in` to `out` through a mapValues that fails on "boom" and panics on "panic".
fn fallible() -> Topology {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .try_map_values(|v| match v.as_str() {
            "boom" => Err("boom"),
            "panic" => panic!("user code gave up on {v}"),
            _ => Ok(v.to_uppercase()),
        })
        .to("out");
    b.build().expect("valid topology")
}

fn dlq_of(driver: &TopologyTestDriver) -> Vec<TestRecord<Vec<u8>, Vec<u8>>> {
    driver
        .create_output_topic("dlq", BytesSerde, BytesSerde)
        .read_records_to_list()
}

#[test]
fn log_and_continue_sends_the_undecodable_record_to_the_dlq_with_kafkas_headers() {
    let config = StreamsConfig::new("app")
        .with_property(
            "deserialization.exception.handler",
            "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
        )
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(longs(), config).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, BytesSerde);
    input.pipe_key_value_at("k1", 7_i64.to_be_bytes().to_vec(), 0);
    input.pipe_record(
        TestRecord::key_value("k2", vec![1, 2, 3])
            .at(5)
            .with_header("h", "v"),
    );
    input.pipe_key_value_at("k3", 9_i64.to_be_bytes().to_vec(), 6);

    let out = driver.create_output_topic("out", StringSerde, I64Serde);
    assert_eq!(out.read_values_to_list(), [Some(7), Some(9)]);
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    let record = &dlq[0];
    assert_eq!(record.key.as_deref(), Some(&b"k2"[..]));
    assert_eq!(record.value.as_deref(), Some(&[1, 2, 3][..]));
    assert_eq!(record.timestamp, Some(5));
    assert_eq!(
        pairs(&record.headers),
        [
            p("h", "v"),
            p(
                "__streams.errors.exception",
                "org.apache.kafka.common.errors.SerializationException"
            ),
            p(
                "__streams.errors.message",
                "Size of data received by LongDeserializer is not 8"
            ),
            p(
                "__streams.errors.stacktrace",
                "org.apache.kafka.common.errors.SerializationException: Size of data received by \
                 LongDeserializer is not 8\n\
                 \tat KSTREAM-SOURCE-0000000000 (task 0_0, in-0 offset 1)\n\
                 Caused by: cannot deserialize the value of the record at in-0 offset 1: size of data \
                 received by I64Serde is 3, not 8; check the serde configured for this topic\n\
                 Caused by: size of data received by I64Serde is 3, not 8\n"
            ),
            p("__streams.errors.topic", "in"),
            p("__streams.errors.partition", "0"),
            p("__streams.errors.offset", "1"),
        ]
    );
    let metrics = driver.metrics();
    assert_eq!(metrics.dropped_records, 1);
    assert_eq!(metrics.dead_letter_queue_records, 1);
    assert_eq!(metrics.processed_records, 2);
    assert_eq!(metrics.get(TaskMetrics::DROPPED_RECORDS_TOTAL), Some(1));
}

/// As Kafka's `LogAndFailExceptionHandler`: the record reaches the DLQ,
/// then the pipe fails naming the topic, partition and offset.
#[test]
fn log_and_fail_still_sends_the_record_to_the_dlq_before_failing() {
    let config = StreamsConfig::new("app").with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(longs(), config).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, BytesSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value("k", vec![1, 2, 3]).at(1))
        .expect_err("log and fail");
    assert!(
        matches!(&err, StreamsError::Deserialization { topic, partition: 0, offset: 0, .. } if topic == "in"),
        "{err:?}"
    );
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!(
        dlq[0].headers.last("__streams.errors.offset"),
        Some(&b"0"[..])
    );
    assert_eq!(driver.metrics().dropped_records, 0);
}

/// The deprecated `default.deserialization.exception.handler` is still
/// read; a name of no handler fails the driver's start.
#[test]
fn the_deprecated_config_name_works_and_an_unknown_handler_is_refused() {
    let config = StreamsConfig::new("app").with_property(
        "default.deserialization.exception.handler",
        "LogAndContinueExceptionHandler",
    );
    let driver = TopologyTestDriver::with_config(longs(), config).expect("driver starts");
    driver
        .create_input_topic("in", StringSerde, BytesSerde)
        .pipe_key_value_at("k", vec![1], 0);
    assert_eq!(driver.metrics().dropped_records, 1);
    // No DLQ configured: nothing else is produced.
    assert!(driver.produced_topic_names().is_empty());

    let config = StreamsConfig::new("app").with_property("processing.exception.handler", "Ignore");
    let err = TopologyTestDriver::with_config(longs(), config).expect_err("unknown handler");
    assert_eq!(
        err.to_string(),
        "config `processing.exception.handler` must be LogAndFailProcessingExceptionHandler or \
         LogAndContinueProcessingExceptionHandler, but was \"Ignore\"; fix its value in the StreamsConfig"
    );
}

#[test]
#[allow(deprecated)]
fn the_deprecated_deserialization_handling_still_works() {
    use streams_core::DeserializationHandling;
    let config =
        StreamsConfig::new("app").with_deserialization_handling(DeserializationHandling::Continue);
    assert_eq!(
        config.deserialization_handling(),
        DeserializationHandling::Continue
    );
    let driver = TopologyTestDriver::with_config(longs(), config).expect("driver starts");
    driver
        .create_input_topic("in", StringSerde, BytesSerde)
        .pipe_key_value_at("k", vec![1], 0);
    assert_eq!(driver.metrics().dropped_records, 1);
}

#[test]
fn a_failing_closure_under_log_and_continue_goes_to_the_dlq_and_is_counted() {
    let config = StreamsConfig::new("app")
        .with_property(
            "processing.exception.handler",
            "LogAndContinueProcessingExceptionHandler",
        )
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(fallible(), config).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_record(
        TestRecord::key_value("k2", "boom")
            .at(5)
            .with_header("h", "v"),
    );
    input.pipe_key_value_at("k3", "c", 6);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(
        out.read_values_to_list(),
        [Some("A".to_owned()), Some("C".to_owned())]
    );
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].key.as_deref(), Some(&b"k2"[..]));
    assert_eq!(dlq[0].value.as_deref(), Some(&b"boom"[..]));
    assert_eq!(dlq[0].timestamp, Some(5));
    assert_eq!(
        pairs(&dlq[0].headers),
        [
            p("h", "v"),
            p("__streams.errors.exception", "java.lang.RuntimeException"),
            p("__streams.errors.message", "boom"),
            p(
                "__streams.errors.stacktrace",
                "java.lang.RuntimeException: boom\n\
                 \tat KSTREAM-MAPVALUES-0000000001 (task 0_0, in-0 offset 1)\n\
                 Caused by: processor `KSTREAM-MAPVALUES-0000000001` failed: boom\n\
                 Caused by: boom\n"
            ),
            p("__streams.errors.topic", "in"),
            p("__streams.errors.partition", "0"),
            p("__streams.errors.offset", "1"),
        ]
    );
    assert_eq!(driver.metrics().dropped_records, 1);
}

#[test]
fn a_failing_closure_under_the_default_handler_fails_naming_task_node_and_record() {
    let config = StreamsConfig::new("app").with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(fallible(), config).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    let err = input
        .try_pipe_record(TestRecord::key_value("k2", "boom").at(1))
        .expect_err("log and fail");
    assert_eq!(
        err.to_string(),
        "exception caught in process: task 0_0, topic `in`, partition 0, offset 1, processor \
         `KSTREAM-MAPVALUES-0000000001`: processor `KSTREAM-MAPVALUES-0000000001` failed: boom"
    );
    // The record reached the DLQ before the error stopped processing.
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].value.as_deref(), Some(&b"boom"[..]));
    // The driver goes on with the next record, as Kafka's.
    input.pipe_key_value_at("k3", "c", 2);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(
        out.read_values_to_list(),
        [Some("A".to_owned()), Some("C".to_owned())]
    );
}

/// A panic in user code is caught at its node and reported with the
/// node's name: the test run does not crash.
#[test]
fn a_panic_in_user_code_is_a_processing_error_of_its_node() {
    let driver = TopologyTestDriver::new(fallible()).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value("k", "panic").at(1))
        .expect_err("the closure panics");
    assert_eq!(
        err.to_string(),
        "exception caught in process: task 0_0, topic `in`, partition 0, offset 0, processor \
         `KSTREAM-MAPVALUES-0000000001`: processor `KSTREAM-MAPVALUES-0000000001` failed: user code \
         panicked: user code gave up on panic"
    );
    assert_eq!(err.exception_class(), "java.lang.RuntimeException");
    input.pipe_key_value_at("k", "ok", 2);
    assert_eq!(
        driver
            .create_output_topic("out", StringSerde, StringSerde)
            .read_values_to_list(),
        [Some("OK".to_owned())]
    );
}

/// A panic undoes what the record produced so far, in other branches
/// too, and drops what it would still produce: nothing of the record
/// reaches an output topic, only the DLQ.
#[test]
fn nothing_of_a_record_whose_processing_panicked_is_produced() {
    let b = StreamsBuilder::new();
    let stream = b.stream::<S, S>("in");
    stream.clone().to("first");
    stream
        .clone()
        .map_values(|v| {
            assert!(v != "panic", "no panics please");
            v.clone()
        })
        .to("second");
    stream.to("third");
    let config = StreamsConfig::new("app")
        .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler)
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(b.build().expect("valid topology"), config)
        .expect("starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    input.pipe_key_value_at("k2", "panic", 1);
    input.pipe_key_value_at("k3", "b", 2);
    for topic in ["first", "second", "third"] {
        let values = driver
            .create_output_topic(topic, StringSerde, StringSerde)
            .read_values_to_list();
        assert_eq!(
            values,
            [Some("a".to_owned()), Some("b".to_owned())],
            "{topic}"
        );
    }
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!(
        dlq[0].headers.last("__streams.errors.message"),
        Some(&b"user code panicked: no panics please"[..])
    );
    assert_eq!(driver.metrics().dropped_records, 1);
}

/// The fallible forms keep Kafka's node names of the infallible ones.
#[test]
fn the_fallible_forms_are_named_as_the_infallible_ones() {
    let names = |fallible: bool| {
        let b = StreamsBuilder::new();
        let s = b.stream::<S, S>("in");
        if fallible {
            s.try_filter(|_, v| Ok::<_, &str>(!v.is_empty()))
                .try_map(|k, v| Ok::<_, &str>((k.cloned().unwrap_or_default(), v.clone())))
                .try_flat_map_values(|v| Ok::<_, &str>(vec![v.clone()]))
                .try_map_values(|v| Ok::<_, &str>(v.len() as i64))
                .to("out");
        } else {
            s.filter(|_, v| !v.is_empty())
                .map(|k, v| (k.cloned().unwrap_or_default(), v.clone()))
                .flat_map_values(|v| vec![v.clone()])
                .map_values(|v| v.len() as i64)
                .to("out");
        }
        b.build().expect("valid topology").describe().to_string()
    };
    assert_eq!(names(true), names(false));
}

#[test]
fn try_filter_try_map_and_try_flat_map_values_report_their_errors() {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .try_filter(|_, v| {
            if v == "f" {
                Err("filter failed")
            } else {
                Ok(true)
            }
        })
        .try_map(|k, v| {
            if v == "m" {
                Err("map failed".to_owned())
            } else {
                Ok((k.cloned().unwrap_or_default(), v.clone()))
            }
        })
        .try_flat_map_values(|v| {
            if v == "x" {
                Err(std::io::Error::other("flat map failed"))
            } else {
                Ok(vec![v.clone(), v.clone()])
            }
        })
        .to("out");
    let config = StreamsConfig::new("app")
        .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler)
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(b.build().expect("valid topology"), config)
        .expect("starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    for v in ["f", "m", "x", "ok"] {
        input.pipe_key_value_at("k", v, 0);
    }
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(out.read_values_to_list().len(), 2);
    let failures: Vec<(String, String)> = dlq_of(&driver)
        .iter()
        .map(|r| {
            let h = |k| String::from_utf8_lossy(r.headers.last(k).unwrap_or_default()).into_owned();
            (
                h("__streams.errors.message"),
                h("__streams.errors.stacktrace")
                    .lines()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            p(
                "filter failed",
                "\tat KSTREAM-FILTER-0000000001 (task 0_0, in-0 offset 0)"
            ),
            p(
                "map failed",
                "\tat KSTREAM-MAP-0000000002 (task 0_0, in-0 offset 1)"
            ),
            p(
                "flat map failed",
                "\tat KSTREAM-FLATMAPVALUES-0000000003 (task 0_0, in-0 offset 2)"
            ),
        ]
    );
    assert_eq!(driver.metrics().dropped_records, 3);
}

/// A value serde that cannot write "bad".
#[derive(Debug, Clone, Copy)]
struct PickySerde;

impl Serde<String> for PickySerde {
    fn serialize(&self, _topic: &str, value: &String) -> Result<Vec<u8>, SerdeError> {
        if value == "bad" {
            Err(SerdeError::new("cannot write bad"))
        } else {
            Ok(value.as_bytes().to_vec())
        }
    }
    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<String, SerdeError> {
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}

fn picky() -> Topology {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .to_with("out", Produced::with(StringSerde, PickySerde));
    b.build().expect("valid topology")
}

#[test]
fn the_default_production_handler_fails_after_the_dlq_record() {
    let config = StreamsConfig::new("app").with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(picky(), config).expect("starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value("k", "bad").at(3))
        .expect_err("default production handler fails");
    assert_eq!(
        err.to_string(),
        "unable to produce a record to topic `out` (timestamp 3), task 0_0, topic `in`, partition 0, \
         offset 0: cannot serialize the value of a record for topic `out` in node \
         `KSTREAM-SINK-0000000001`: cannot write bad"
    );
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].value.as_deref(), Some(&b"bad"[..]));
    assert_eq!(
        dlq[0].headers.last("__streams.errors.exception"),
        Some(&b"org.apache.kafka.common.errors.SerializationException"[..])
    );
}

#[test]
fn production_continue_skips_and_retry_fails_as_kafka_treats_serialization_errors() {
    for (value, handler) in [
        ("CONTINUE", HandlerResult::Resume),
        ("RETRY", HandlerResult::Retry),
    ] {
        let config = StreamsConfig::new("app").with_property("production.exception.handler", value);
        assert_eq!(
            format!(
                "{:?}",
                config.production_exception_handler().expect("known")
            ),
            format!("{:?}", FixedProductionExceptionHandler(handler))
        );
        let driver = TopologyTestDriver::with_config(picky(), config).expect("starts");
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        let result = input.try_pipe_record(TestRecord::key_value("k", "bad").at(3));
        input.pipe_key_value_at("k", "good", 4);
        let out = driver.create_output_topic("out", StringSerde, StringSerde);
        assert_eq!(out.read_values_to_list(), [Some("good".to_owned())]);
        match handler {
            HandlerResult::Resume => {
                assert!(result.is_ok());
                assert_eq!(driver.metrics().dropped_records, 1);
                assert_eq!(
                    driver.dropped_records_by_node(),
                    [("KSTREAM-SINK-0000000001".to_owned(), 1)].into()
                );
            }
            _ => {
                assert!(matches!(result, Err(StreamsError::ProductionFailed { .. })));
                assert_eq!(driver.metrics().dropped_records, 0);
            }
        }
    }
}

/// What a handler of the user's saw.
#[derive(Debug, Default, Clone)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl ProcessingExceptionHandler for Seen {
    fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> Response {
        let raw = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        self.0.lock().expect("not poisoned").push(format!(
            "{} {}-{}@{} ts {} headers {:?} key {:?} value {:?} node {} task {}: {}",
            ctx.dead_letter_queue_topic.unwrap_or("-"),
            ctx.topic,
            ctx.partition,
            ctx.offset,
            ctx.timestamp,
            pairs(ctx.headers),
            raw(ctx.source_raw_key),
            raw(ctx.source_raw_value),
            ctx.processor_node_id,
            ctx.task_id,
            error.exception_message(),
        ));
        Response::resume_with(maybe_build_dead_letter_queue_records(ctx, error))
    }
}

impl DeserializationExceptionHandler for Seen {
    fn handle_error(&self, ctx: &ErrorHandlerContext<'_>, error: &StreamsError) -> Response {
        ProcessingExceptionHandler::handle_error(self, ctx, error)
    }
}

#[test]
fn a_handler_of_the_users_sees_the_whole_error_context() {
    let seen = Seen::default();
    let config = StreamsConfig::new("app").with_processing_exception_handler(seen.clone());
    let driver = TopologyTestDriver::with_config(fallible(), config).expect("starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_record(
        TestRecord::key_value("k", "boom")
            .at(9)
            .with_header("h", "v"),
    );
    let seen_lines = seen.0.lock().expect("not poisoned").clone();
    assert_eq!(
        seen_lines,
        [
            "- in-0@0 ts 9 headers [(\"h\", \"v\")] key Some(\"k\") value Some(\"boom\") \
             node KSTREAM-MAPVALUES-0000000001 task 0_0: boom"
        ]
    );
    // No DLQ was configured, so the user's handler built none.
    assert!(driver.produced_topic_names().is_empty());
    assert_eq!(driver.metrics().dropped_records, 1);

    let seen = Seen::default();
    let config = StreamsConfig::new("app")
        .with_deserialization_exception_handler(seen.clone())
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(longs(), config).expect("starts");
    driver
        .create_input_topic("in", StringSerde, BytesSerde)
        .pipe_key_value_at("k", b"xy".to_vec(), 4);
    assert_eq!(
        seen.0.lock().expect("not poisoned").clone(),
        [
            "dlq in-0@0 ts 4 headers [] key Some(\"k\") value Some(\"xy\") \
             node KSTREAM-SOURCE-0000000000 task 0_0: Size of data received by LongDeserializer is not 8"
        ]
    );
    assert_eq!(dlq_of(&driver).len(), 1);
}

#[test]
fn the_fluent_dlq_assertions_name_expected_and_actual() {
    let topology = TestTopology::from_topology(fallible()).with_config(
        StreamsConfig::new("app")
            .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler)
            .with_dead_letter_queue_topic("dlq"),
    );
    topology.input().add("k", "boom");
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        topology
            .dead_letter_queue()
            .expect_next_record()
            .has_error_source("in", 0, 0)
            .has_error_stacktrace_containing("KSTREAM-MAPVALUES-0000000001")
            .has_error("java.lang.IllegalStateException", "boom");
    }))
    .expect_err("the class differs");
    let message = failure
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.starts_with(
            "record at offset 0 of topic `dlq`: header `__streams.errors.exception` is not the expected one\n\
             expected: \"java.lang.IllegalStateException\"\n  actual: \"java.lang.RuntimeException\""
        ),
        "{message}"
    );

    let no_dlq = TestTopology::from_topology(fallible());
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        no_dlq.dead_letter_queue();
    }))
    .expect_err("no DLQ configured");
    assert_eq!(
        failure.downcast_ref::<String>().map(String::as_str),
        Some(
            "the config sets no dead letter queue: set `errors.dead.letter.queue.topic.name` \
             (StreamsConfig::with_dead_letter_queue_topic)"
        )
    );
}

#[test]
fn log_and_continue_by_its_type() {
    let config = StreamsConfig::new("app")
        .with_deserialization_exception_handler(LogAndContinueExceptionHandler);
    let driver = TopologyTestDriver::with_config(longs(), config).expect("starts");
    driver
        .create_input_topic("in", StringSerde, BytesSerde)
        .pipe_key_value_at("k", vec![1], 0);
    assert_eq!(driver.metrics().dropped_records, 1);
    assert_eq!(driver.metrics().dead_letter_queue_records, 0);
}

/// Nothing is lost: over random mixes of good records, bad bytes, failing
/// and panicking user code, under each handler with and without a DLQ,
/// every input record is processed (in `out`), in the DLQ, skipped
/// (counted in `dropped-records-total`) or reported by its pipe call, and
/// the DLQ holds exactly the bad ones, by offset.
mod nothing_is_lost {
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;

    use super::*;

    #[derive(Debug, Clone, Copy)]
    enum Input {
        Good(i64),
        BadBytes,
        Fails,
        Panics,
    }

    fn input() -> impl Strategy<Value = Input> {
        prop_oneof![
            4 => (0_i64..1000).prop_map(Input::Good),
            1 => Just(Input::BadBytes),
            1 => Just(Input::Fails),
            1 => Just(Input::Panics),
        ]
    }

    fn topology() -> Topology {
        let b = StreamsBuilder::new();
        b.stream_with::<S, i64>("in", Consumed::with(StringSerde, I64Serde))
            .try_map_values(|v| match *v {
                -1 => Err("negative one".to_owned()),
                -2 => panic!("minus two"),
                v => Ok(v * 2),
            })
            .to_with("out", Produced::with(StringSerde, I64Serde));
        b.build().expect("valid topology")
    }

    fn bytes(input: Input) -> Vec<u8> {
        match input {
            Input::Good(v) => v.to_be_bytes().to_vec(),
            Input::BadBytes => vec![1, 2, 3],
            Input::Fails => (-1_i64).to_be_bytes().to_vec(),
            Input::Panics => (-2_i64).to_be_bytes().to_vec(),
        }
    }

    fn check(inputs: &[Input], resume: bool, dlq: bool) -> std::result::Result<(), TestCaseError> {
        let mut config = StreamsConfig::new("app");
        if resume {
            config = config
                .with_deserialization_exception_handler(LogAndContinueExceptionHandler)
                .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
        }
        if dlq {
            config = config.with_dead_letter_queue_topic("dlq");
        }
        let driver = TopologyTestDriver::with_config(topology(), config).expect("starts");
        let pipe = driver.create_input_topic("in", StringSerde, BytesSerde);
        let mut errors = 0;
        for (i, &input) in inputs.iter().enumerate() {
            let record = TestRecord::key_value(format!("k{i}"), bytes(input)).at(i as i64);
            if pipe.try_pipe_record(record).is_err() {
                errors += 1;
            }
        }
        let out = driver
            .create_output_topic("out", StringSerde, I64Serde)
            .read_values_to_list();
        let dead = if dlq { dlq_of(&driver) } else { Vec::new() };
        let dropped = driver.metrics().dropped_records as usize;
        let good: Vec<Option<i64>> = inputs
            .iter()
            .filter_map(|i| match i {
                Input::Good(v) => Some(Some(v * 2)),
                _ => None,
            })
            .collect();
        let bad: Vec<String> = inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| !matches!(i, Input::Good(_)))
            .map(|(offset, _)| offset.to_string())
            .collect();
        prop_assert_eq!(&out, &good);
        // Each record is processed, or skipped (resume), or reported by
        // its pipe call (fail); with a DLQ, each record not processed is
        // in it.
        prop_assert_eq!(out.len() + dropped + errors, inputs.len());
        if dlq {
            prop_assert_eq!(out.len() + dead.len(), inputs.len());
        }
        prop_assert_eq!(dropped, if resume { bad.len() } else { 0 });
        prop_assert_eq!(errors, if resume { 0 } else { bad.len() });
        // Per node: undecodable records at the source, failing and
        // panicking user code at the map.
        let at = |f: fn(&Input) -> bool| inputs.iter().filter(|i| f(i)).count() as u64;
        let mut by_node = std::collections::BTreeMap::new();
        if resume {
            for (node, n) in [
                (
                    "KSTREAM-SOURCE-0000000000",
                    at(|i| matches!(i, Input::BadBytes)),
                ),
                (
                    "KSTREAM-MAPVALUES-0000000001",
                    at(|i| matches!(i, Input::Fails | Input::Panics)),
                ),
            ] {
                if n > 0 {
                    by_node.insert(node.to_owned(), n);
                }
            }
        }
        prop_assert_eq!(driver.dropped_records_by_node(), by_node);
        if dlq {
            let offsets: Vec<String> = dead
                .iter()
                .map(|r| {
                    String::from_utf8_lossy(
                        r.headers
                            .last("__streams.errors.offset")
                            .unwrap_or_default(),
                    )
                    .into_owned()
                })
                .collect();
            prop_assert_eq!(offsets, bad);
            prop_assert_eq!(
                driver.metrics().dead_letter_queue_records as usize,
                dead.len()
            );
        }
        Ok(())
    }

    proptest! {
        // A fixed seed: the same cases every run (change it to explore others).
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: RngSeed::Fixed(0x0064_6c71), ..ProptestConfig::default() })]

        #[test]
        fn processed_plus_dlq_plus_skipped_is_the_input(inputs in prop::collection::vec(input(), 0..30)) {
            for (resume, dlq) in [(true, true), (true, false), (false, true), (false, false)] {
                check(&inputs, resume, dlq)?;
            }
        }
    }
}

/// As Kafka's `ProcessorNode.punctuate`: an error of a punctuation goes to
/// the processing handler, with no record (a DLQ record of null key and
/// value, a null topic, partition and offset -1).
#[test]
fn a_failing_punctuation_goes_to_the_processing_handler() {
    use std::time::Duration;
    use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
    use streams_core::{Record, Result};

    struct Ticks;
    impl Processor<S, S> for Ticks {
        fn init(&mut self, ctx: &mut ProcessorContext<'_, S, S>) -> Result<()> {
            ctx.schedule(Duration::from_millis(10), PunctuationType::WallClockTime)?;
            Ok(())
        }
        fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
            ctx.forward(r)
        }
        fn punctuate(
            &mut self,
            _: &mut ProcessorContext<'_, S, S>,
            now: i64,
            _: &Punctuation,
        ) -> Result<()> {
            Err(StreamsError::processing(format!("tick at {now} failed")))
        }
    }
    let topology = || {
        let b = StreamsBuilder::new();
        b.stream::<S, S>("in")
            .process::<S, S, _>(|| Ticks)
            .to("out");
        b.build().expect("valid topology")
    };

    let driver = TopologyTestDriver::new(topology()).expect("starts");
    let err = driver
        .try_advance_wall_clock_time(Duration::from_millis(10))
        .expect_err("log and fail");
    assert_eq!(
        err.to_string(),
        "exception caught in process: task 0_0, in a punctuation, processor `KSTREAM-PROCESSOR-0000000001`: \
         processor `KSTREAM-PROCESSOR-0000000001` failed: tick at 10 failed"
    );

    let config = StreamsConfig::new("app")
        .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler)
        .with_dead_letter_queue_topic("dlq");
    let driver = TopologyTestDriver::with_config(topology(), config).expect("starts");
    driver.advance_wall_clock_time(Duration::from_millis(10));
    let dlq = dlq_of(&driver);
    assert_eq!(dlq.len(), 1);
    assert_eq!((dlq[0].key.as_ref(), dlq[0].value.as_ref()), (None, None));
    assert_eq!(dlq[0].timestamp, Some(10));
    let topic = dlq[0]
        .headers
        .last_header("__streams.errors.topic")
        .expect("a topic header");
    assert_eq!(topic.value, None);
    assert_eq!(
        dlq[0].headers.last("__streams.errors.offset"),
        Some(&b"-1"[..])
    );
    assert_eq!(driver.metrics().dropped_records, 1);
}
