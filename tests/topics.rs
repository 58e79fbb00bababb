//! Ports of Kafka's `TestTopicsTest` (streams/test-utils), plus the
//! test-topic semantics of `streams_test::semantics` (topic clocks, list
//! reads, maps and tables, headers).
//!
//! Kafka's setup: `input` is copied to `output1` with byte-array serdes,
//! and `output1` (also read by the topology) is mapped to `output2` with
//! key and value swapped, `Long`/`String` in and `String`/`Long` out.
//! The swap is a processor here so that a null key becomes a null value,
//! as Kafka's `map((k, v) -> new KeyValue<>(v, k))` does.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::{
    Consumed, Headers, Produced, Record, RecordPart, Result, StreamsBuilder, StreamsConfig,
    StreamsError,
};
use streams_test::{KeyValue, TestRecord, TopologyTestDriver};

use crate::support::{r, rec};

const INPUT_TOPIC: &str = "input";
const OUTPUT_TOPIC: &str = "output1";
const INPUT_TOPIC_MAP: &str = OUTPUT_TOPIC;
const OUTPUT_TOPIC_MAP: &str = "output2";

/// `Instant.parse("2019-06-01T10:00:00Z")` in epoch millis.
const TEST_BASE_TIME: i64 = 1_559_383_200_000;

/// Swaps key and value, nulls included.
struct Swap;

impl Processor<i64, String, String, i64> for Swap {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        record: Record<i64, String>,
    ) -> Result<()> {
        ctx.forward(Record {
            key: record.value,
            value: record.key,
            timestamp: record.timestamp,
            headers: record.headers,
        })
    }
}

fn setup() -> TopologyTestDriver {
    let builder = StreamsBuilder::new();
    builder
        .stream::<Vec<u8>, Vec<u8>>(INPUT_TOPIC)
        .to(OUTPUT_TOPIC);
    builder
        .stream_with::<i64, String>(INPUT_TOPIC_MAP, Consumed::with(I64Serde, StringSerde))
        .process(|| Swap)
        .to_with(OUTPUT_TOPIC_MAP, Produced::with(StringSerde, I64Serde));
    let config = StreamsConfig::new("test-topics")
        .with_default_key_serde(BytesSerde)
        .with_default_value_serde(BytesSerde);
    TopologyTestDriver::with_config(builder.build().expect("valid topology"), config)
        .expect("driver starts")
}

fn words() -> Vec<String> {
    ["This", "is", "an", "example"].map(String::from).to_vec()
}

fn long_string_record(key: Option<i64>, value: &str, timestamp: i64) -> TestRecord<i64, String> {
    TestRecord {
        key,
        value: Some(value.to_owned()),
        timestamp: Some(timestamp),
        headers: Headers::new(),
    }
}

fn string_long_record(key: &str, value: i64, timestamp: i64) -> TestRecord<String, i64> {
    TestRecord::<String, i64>::key_value(key, value).at(timestamp)
}

#[test]
fn test_value() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, StringSerde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, StringSerde, StringSerde);
    input.pipe_value("Hello");
    assert_eq!(output.read_value(), Some("Hello".to_owned()));
    assert!(output.is_empty());
}

#[test]
fn test_value_list() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, StringSerde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, StringSerde, StringSerde);
    input.pipe_values(words());
    let expected: Vec<Option<String>> = words().into_iter().map(Some).collect();
    assert_eq!(output.read_values_to_list(), expected);
}

#[test]
fn test_key_value() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    input.pipe_key_value(1, "Hello");
    assert_eq!(output.read_key_value(), KeyValue::pair(1, "Hello"));
    assert!(output.is_empty());
}

#[test]
fn test_key_value_list() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    input.pipe_key_values((0_i64..).zip(words()));
    let expected: Vec<KeyValue<String, i64>> = words()
        .into_iter()
        .zip(0_i64..)
        .map(KeyValue::from)
        .collect();
    assert_eq!(output.read_key_values_to_list(), expected);
}

#[test]
fn test_key_values_to_map() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    input.pipe_key_values((0_i64..).zip(words()));
    let expected: HashMap<String, Option<i64>> =
        words().into_iter().zip((0_i64..).map(Some)).collect();
    assert_eq!(output.read_key_values_to_map(), expected);
}

#[test]
#[should_panic(
    expected = "null keys are not allowed in read_key_values_to_map: topic `output1` has a record with a null key"
)]
fn test_key_values_to_map_with_null() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    input.pipe_value("value");
    let _ = output.read_key_values_to_map();
}

#[test]
fn test_key_value_list_duration() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    let advance = Duration::from_secs(15);
    input.pipe_key_values_timed((0_i64..).zip(words()), TEST_BASE_TIME, advance);
    let expected = vec![
        string_long_record("This", 0, TEST_BASE_TIME),
        string_long_record("is", 1, TEST_BASE_TIME + 15_000),
        string_long_record("an", 2, TEST_BASE_TIME + 30_000),
        string_long_record("example", 3, TEST_BASE_TIME + 45_000),
    ];
    assert_eq!(output.read_records_to_list(), expected);
}

#[test]
fn test_record_list() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    let inputs: Vec<TestRecord<i64, String>> = (0_i64..)
        .zip(words())
        .map(|(i, w)| TestRecord::key_value(i, w).at(TEST_BASE_TIME + i * 15_000))
        .collect();
    input.pipe_records(inputs);
    let expected = vec![
        string_long_record("This", 0, TEST_BASE_TIME),
        string_long_record("is", 1, TEST_BASE_TIME + 15_000),
        string_long_record("an", 2, TEST_BASE_TIME + 30_000),
        string_long_record("example", 3, TEST_BASE_TIME + 45_000),
    ];
    assert_eq!(output.read_records_to_list(), expected);
}

#[test]
fn test_timestamp() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    let mut base_time = 3;
    input.pipe_record(TestRecord::new(None, Some("Hello".to_owned())).at(base_time));
    assert_eq!(
        output.read_record(),
        long_string_record(None, "Hello", base_time)
    );

    base_time += 1;
    input.pipe_key_value_at(2, "Kafka", base_time);
    assert_eq!(
        output.read_record(),
        long_string_record(Some(2), "Kafka", 4)
    );

    input.pipe_key_value_at(2, "Kafka", TEST_BASE_TIME);
    assert_eq!(
        output.read_record(),
        long_string_record(Some(2), "Kafka", TEST_BASE_TIME)
    );

    let one_day = 24 * 60 * 60 * 1000;
    let record_instant = TEST_BASE_TIME + one_day;
    input.pipe_values_timed(
        ["Advancing", "time"],
        record_instant,
        Duration::from_secs(15),
    );
    assert_eq!(
        output.read_record(),
        long_string_record(None, "Advancing", record_instant)
    );
    assert_eq!(
        output.read_record(),
        long_string_record(None, "time", record_instant + 15_000)
    );
}

#[test]
fn test_with_headers() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    let mut headers = Headers::new();
    headers
        .add("foo", "value")
        .add_null("bar")
        .add(r#""A\u00ea\u00f1\u00fcC""#, "value");

    input.pipe_record(TestRecord::key_value(1, "Hello").with_headers(headers.clone()));
    let first = output.read_record();
    assert_eq!(first.key, Some(1));
    assert_eq!(first.value.as_deref(), Some("Hello"));
    assert_eq!(first.headers, headers);

    input.pipe_record(
        TestRecord::key_value(2, "Kafka")
            .with_headers(headers.clone())
            .at(4),
    );
    assert_eq!(
        output.read_record(),
        TestRecord::key_value(2, "Kafka")
            .with_headers(headers)
            .at(4)
    );
}

#[test]
fn test_start_timestamp() {
    let driver = setup();
    let input = driver.create_input_topic_with_time(
        INPUT_TOPIC,
        I64Serde,
        StringSerde,
        TEST_BASE_TIME,
        Duration::ZERO,
    );
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    input.pipe_key_value(1, "Hello");
    assert_eq!(
        output.read_record(),
        long_string_record(Some(1), "Hello", TEST_BASE_TIME)
    );
    input.pipe_key_value(2, "World");
    assert_eq!(
        output.read_record(),
        long_string_record(Some(2), "World", TEST_BASE_TIME)
    );
    input.advance_time(Duration::from_secs(2));
    input.pipe_key_value(3, "Kafka");
    assert_eq!(
        output.read_record(),
        long_string_record(Some(3), "Kafka", TEST_BASE_TIME + 2_000)
    );
}

#[test]
fn test_timestamp_auto_advance() {
    let driver = setup();
    let input = driver.create_input_topic_with_time(
        INPUT_TOPIC,
        I64Serde,
        StringSerde,
        TEST_BASE_TIME,
        Duration::from_secs(2),
    );
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    input.pipe_value("Hello");
    assert_eq!(
        output.read_record(),
        long_string_record(None, "Hello", TEST_BASE_TIME)
    );
    input.pipe_key_value(2, "Kafka");
    assert_eq!(
        output.read_record(),
        long_string_record(Some(2), "Kafka", TEST_BASE_TIME + 2_000)
    );
}

#[test]
fn test_multiple_topics() {
    let driver = setup();
    let input1 = driver.create_input_topic(INPUT_TOPIC, I64Serde, StringSerde);
    let input2 = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output1 = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    let output2 = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);

    input1.pipe_key_value(1, "Hello");
    assert_eq!(output1.read_key_value(), KeyValue::pair(1, "Hello"));
    assert_eq!(output2.read_key_value(), KeyValue::pair("Hello", 1));
    assert!(output1.is_empty());
    assert!(output2.is_empty());

    input2.pipe_key_value(1, "Hello");
    // A record piped into `output1` is not readable on `output1`.
    assert_eq!(output2.read_key_value(), KeyValue::pair("Hello", 1));
    assert!(output1.is_empty());
    assert!(output2.is_empty());
}

#[test]
#[should_panic(expected = "uninitialized topic: no-exist")]
fn test_non_existing_output_topic() {
    let driver = setup();
    let output = driver.create_output_topic("no-exist", I64Serde, StringSerde);
    let _ = output.read_record();
}

#[test]
#[should_panic(expected = "uninitialized topic: output1")]
fn test_non_used_output_topic() {
    let driver = setup();
    let output = driver.create_output_topic(OUTPUT_TOPIC, I64Serde, StringSerde);
    let _ = output.read_record();
}

#[test]
#[should_panic(expected = "empty topic: output1")]
fn test_empty_topic() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, StringSerde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, StringSerde, StringSerde);
    input.pipe_value("Hello");
    assert_eq!(output.read_value(), Some("Hello".to_owned()));
    let _ = output.read_record();
}

#[test]
fn test_non_existing_input_topic() {
    let driver = setup();
    let input = driver.create_input_topic("no-exist", I64Serde, StringSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value(1, "Hello"))
        .expect_err("no source reads `no-exist`");
    match &err {
        StreamsError::UnknownTopic { topic, known } => {
            assert_eq!(topic, "no-exist");
            assert_eq!(known, &["input", "output1"]);
        }
        other => panic!("expected UnknownTopic, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        r#"unknown topic: no-exist; the topology reads ["input", "output1"]"#
    );
}

#[test]
#[should_panic(expected = "piping a record into topic `no-exist` failed: unknown topic: no-exist")]
fn test_non_existing_input_topic_panics() {
    let driver = setup();
    let input = driver.create_input_topic("no-exist", I64Serde, StringSerde);
    input.pipe_key_value(1, "Hello");
}

#[test]
fn test_wrong_serde() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, StringSerde, StringSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value("1L", "Hello"))
        .expect_err("a 2-byte key is not a long");
    match &err {
        StreamsError::Deserialization {
            topic,
            partition,
            offset,
            part,
            reason,
        } => {
            assert_eq!(topic, "output1");
            assert_eq!(*partition, 0);
            assert_eq!(*offset, 0);
            assert_eq!(*part, RecordPart::Key);
            assert_eq!(
                reason.message(),
                "size of data received by I64Serde is 2, not 8"
            );
        }
        other => panic!("expected Deserialization, got {other:?}"),
    }
}

#[test]
fn test_negative_timestamp_is_rejected() {
    // Kafka's `testDuration` and `testNegativeAdvance` cannot be written:
    // `std::time::Duration` cannot be negative. A negative record
    // timestamp is the remaining way to go back in time.
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC, StringSerde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC, StringSerde, StringSerde);
    let err = input
        .try_pipe_record(TestRecord::key_value("k", "v").at(-1))
        .expect_err("negative timestamps are invalid");
    assert!(
        matches!(&err, StreamsError::NegativeTimestamp { topic, timestamp: -1 } if topic == "input"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "record timestamp -1 for topic `input` is negative; timestamps are epoch milliseconds >= 0"
    );
    assert!(output.is_empty());
    assert_eq!(driver.stream_time(), -1);
}

#[test]
fn test_input_to_string() {
    let driver = setup();
    let input = driver.create_input_topic("topicName", StringSerde, StringSerde);
    let shown = format!("{input:?}");
    assert!(shown.contains("TestInputTopic"), "{shown}");
    assert!(shown.contains(r#"topic: "topicName""#), "{shown}");
}

#[test]
#[should_panic(
    expected = "reading topic `output2` failed: cannot deserialize the key of the record at output2-0 offset 0: size of data received by I64Serde is 5, not 8"
)]
fn test_output_wrong_serde() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, I64Serde, StringSerde);
    input.pipe_key_value(1, "Hello");
    let _ = output.read_key_value();
}

/// Kafka's `testOutputWrongSerde`, and what the failing reads leave: as
/// Kafka's driver removes a record before it deserializes it, a record that
/// cannot be decoded is consumed by the failing read, and a list read has
/// consumed the records before it.
#[test]
fn test_output_wrong_serde_consumes_the_record() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let wrong = driver.create_output_topic(OUTPUT_TOPIC_MAP, I64Serde, StringSerde);
    let right = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    input.pipe_key_value_at(1, "Hello", 9);
    input.pipe_key_value_at(2, "World", 10);
    input.pipe_key_value_at(3, "Again", 11);
    input.pipe_key_value_at(4, "Last", 12);

    assert!(catch_unwind(AssertUnwindSafe(|| wrong.read_key_value())).is_err());
    assert_eq!(
        wrong.queue_size(),
        3,
        "the failing read consumed its record"
    );
    let err = wrong
        .try_read_value()
        .expect_err("the key is a string, not a long");
    assert!(
        matches!(&err, StreamsError::Deserialization { offset: 1, .. }),
        "{err:?}"
    );
    assert_eq!(wrong.queue_size(), 2);
    assert_eq!(right.read_record(), string_long_record("Again", 3, 11));
    assert!(catch_unwind(AssertUnwindSafe(|| wrong.read_records_to_list())).is_err());
    assert_eq!(
        wrong.queue_size(),
        0,
        "the list read consumed up to the bad record"
    );
}

#[test]
fn test_output_to_string() {
    let driver = setup();
    let output = driver.create_output_topic(OUTPUT_TOPIC, StringSerde, StringSerde);
    let shown = format!("{output:?}");
    assert!(shown.contains("TestOutputTopic"), "{shown}");
    assert!(shown.contains(r#"topic: "output1""#), "{shown}");
    assert!(shown.contains("queue_size: 0"), "{shown}");
}

#[test]
fn test_records_to_list() {
    let driver = setup();
    let input = driver.create_input_topic(INPUT_TOPIC_MAP, I64Serde, StringSerde);
    let output = driver.create_output_topic(OUTPUT_TOPIC_MAP, StringSerde, I64Serde);
    input.pipe_key_values_timed(
        (0_i64..).zip(words()),
        TEST_BASE_TIME,
        Duration::from_secs(15),
    );
    let expected: Vec<TestRecord<String, i64>> = (0_i64..)
        .zip(words())
        .map(|(i, w)| string_long_record(&w, i, TEST_BASE_TIME + i * 15_000))
        .collect();
    assert_eq!(output.read_records_to_list(), expected);
}

// ---------------------------------------------------------------------
// Beyond TestTopicsTest: the test-topic semantics of `streams_test::semantics`.
// ---------------------------------------------------------------------

/// `in` copied to `out`, strings by default.
fn passthrough() -> TopologyTestDriver {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts")
}

/// The oracle's `timestamps_auto_advance` scenario: a topic clock starting
/// at 1000 with a 10 ms step.
#[test]
fn topic_clock_moves_only_for_pipes_without_timestamp() {
    let driver = passthrough();
    let input = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        StringSerde,
        1000,
        Duration::from_millis(10),
    );
    let output = driver.create_output_topic("out", StringSerde, StringSerde);

    input.pipe_key_value("k1", "a");
    input.pipe_key_value("k2", "b");
    input.pipe_key_value_at("k3", "c", 5000);
    input.pipe_key_value("k4", "d");
    assert_eq!(input.current_time(), 1030);
    input.advance_time(Duration::from_millis(100));
    assert_eq!(input.current_time(), 1130);
    input.pipe_key_value("k5", "e");
    input.pipe_value("f");
    input.pipe_values(["g", "h"]);
    input.pipe_key_values_timed([("k8", "i"), ("k9", "j")], 0, Duration::from_millis(1));
    input.pipe_record(TestRecord::key_value("k10", "k"));
    input.pipe_record(TestRecord::key_value("k11", "l").with_header("h", "1"));

    assert_eq!(
        output.read_records_to_list(),
        [
            r("k1", "a", 1000),
            r("k2", "b", 1010),
            r("k3", "c", 5000),
            r("k4", "d", 1020),
            r("k5", "e", 1130),
            rec(None, Some("f"), 1140),
            rec(None, Some("g"), 1150),
            rec(None, Some("h"), 1160),
            r("k8", "i", 0),
            r("k9", "j", 1),
            r("k10", "k", 1170),
            r("k11", "l", 1180).with_header("h", "1"),
        ]
    );
    assert_eq!(input.current_time(), 1190);
}

#[test]
fn advance_time_moves_neither_stream_time_nor_wall_clock() {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    let driver = TopologyTestDriver::builder(builder.build().expect("valid topology"))
        .initial_wall_clock_time(500)
        .build()
        .expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    assert_eq!(
        input.current_time(),
        500,
        "a topic clock starts at the driver's start time"
    );
    input.advance_time(Duration::from_secs(60));
    assert_eq!(input.current_time(), 60_500);
    assert_eq!(driver.stream_time(), -1);
    assert_eq!(driver.wall_clock_time(), 500);
    input.pipe_value("x");
    assert_eq!(driver.stream_time(), 60_500);
    assert_eq!(driver.wall_clock_time(), 500);
}

#[test]
fn list_reads_of_empty_or_unwritten_topics_are_empty() {
    let driver = passthrough();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let written = driver.create_output_topic("out", StringSerde, StringSerde);
    let never = driver.create_output_topic("never-written", StringSerde, StringSerde);

    assert_eq!(never.queue_size(), 0);
    assert!(never.is_empty());
    assert_eq!(never.try_read_record().ok(), Some(None));
    assert_eq!(never.try_read_value().ok(), Some(None));
    assert_eq!(never.try_read_key_value().ok(), Some(None));
    assert_eq!(never.read_values_to_list(), Vec::<Option<String>>::new());
    assert_eq!(
        never.read_key_values_to_list(),
        Vec::<KeyValue<String, String>>::new()
    );
    assert_eq!(
        never.read_records_to_list(),
        Vec::<TestRecord<String, String>>::new()
    );
    assert_eq!(never.read_key_values_to_map(), HashMap::new());
    assert_eq!(never.read_table(), HashMap::new());

    input.pipe_key_value("k", "v");
    assert_eq!(written.queue_size(), 1);
    assert_eq!(
        written.read_key_values_to_list(),
        [KeyValue::pair("k", "v")]
    );
    assert_eq!(written.queue_size(), 0);
    assert_eq!(written.read_values_to_list(), Vec::<Option<String>>::new());
    assert_eq!(written.try_read_record().ok(), Some(None));
}

#[test]
fn map_keeps_tombstones_and_table_drops_them() {
    let builder = StreamsBuilder::new();
    builder.stream::<String, i64>("in").to("out");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, I64Serde);
    let as_map = driver.create_output_topic("out", StringSerde, I64Serde);
    input.pipe_key_value("a", 1);
    input.pipe_key_value("b", 2);
    input.pipe_key_value("a", 3);
    input.pipe_tombstone("b");
    input.pipe_tombstone("c");
    let expected: HashMap<String, Option<i64>> = HashMap::from([
        ("a".to_owned(), Some(3)),
        ("b".to_owned(), None),
        ("c".to_owned(), None),
    ]);
    assert_eq!(as_map.read_key_values_to_map(), expected);

    input.pipe_key_value("a", 1);
    input.pipe_key_value("b", 2);
    input.pipe_key_value("a", 3);
    input.pipe_tombstone("b");
    input.pipe_tombstone("c");
    input.pipe_key_value("c", 4);
    let table: HashMap<String, i64> = HashMap::from([("a".to_owned(), 3), ("c".to_owned(), 4)]);
    assert_eq!(as_map.read_table(), table);
}

#[test]
fn tombstones_read_as_none_values() {
    let driver = passthrough();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let output = driver.create_output_topic("out", StringSerde, StringSerde);
    input.pipe_tombstone("gone");
    assert_eq!(output.try_read_value().ok(), Some(Some(None)));
    input.pipe_tombstone("gone");
    assert_eq!(output.read_key_value(), KeyValue::tombstone("gone"));
    input.pipe_tombstone("gone");
    assert_eq!(output.read_value(), None);
    assert!(output.is_empty());
}

/// The oracle's `headers_passthrough` scenario: ordered headers, repeated
/// keys and null values reach the output unchanged.
#[test]
fn headers_are_ordered_may_repeat_and_may_be_null() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .map_values(|v| format!("{v}!"))
        .to("out");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let output = driver.create_output_topic("out", StringSerde, StringSerde);

    let first = Headers::new().with("h1", "v1").with("h2", "v2");
    let mut third = Headers::new().with("dup", "1").with("dup", "2");
    third.add_null("nullval");
    let fourth = Headers::new().with("ü", "grüße €");
    input.pipe_record(
        TestRecord::key_value("k1", "a")
            .with_headers(first.clone())
            .at(0),
    );
    input.pipe_record(TestRecord::key_value("k2", "b").at(1));
    input.pipe_record(
        TestRecord::key_value("k3", "c")
            .with_headers(third.clone())
            .at(2),
    );
    input.pipe_record(
        TestRecord::key_value("k4", "d")
            .with_headers(fourth.clone())
            .at(3),
    );

    let out = output.read_records_to_list();
    assert_eq!(
        out,
        [
            r("k1", "a!", 0).with_headers(first),
            r("k2", "b!", 1),
            r("k3", "c!", 2).with_headers(third),
            r("k4", "d!", 3).with_headers(fourth),
        ]
    );
    let dups: Vec<_> = out[2]
        .headers
        .get_all("dup")
        .map(|h| h.value.clone())
        .collect();
    assert_eq!(dups, [Some(b"1".to_vec()), Some(b"2".to_vec())]);
    assert_eq!(out[2].headers.last("dup"), Some(&b"2"[..]));
    assert_eq!(out[2].headers.last("nullval"), None);
    assert!(out[2].headers.last_header("nullval").is_some());
}

/// Serdes see the record's headers on both sides (Kafka's
/// `serialize(topic, headers, data)`): a Confluent Avro serde that writes
/// the schema id in a header works from the input topic through a source
/// and a sink to the output topic, whose record carries the header.
#[test]
fn serdes_see_headers_end_to_end() {
    use streams_core::dsl::{Consumed, Produced};
    use streams_core::serde::{ConfluentAvroSerde, MockSchemaRegistry, VALUE_SCHEMA_ID_HEADER};

    let registry = MockSchemaRegistry::new();
    let long = || {
        ConfluentAvroSerde::<i64>::value_json(&registry, r#""long""#)
            .expect("schema")
            .with_schema_id_in_header(true)
    };
    let builder = streams_core::StreamsBuilder::new();
    builder
        .stream_with::<String, i64>("in", Consumed::with(StringSerde, long()))
        .map_values(|n| n * 10)
        .to_with("out", Produced::with(StringSerde, long()));
    let driver = TopologyTestDriver::new(builder.build().expect("valid")).expect("starts");
    let input = driver.create_input_topic("in", StringSerde, long());
    input.pipe_key_value("k", 4);
    let raw = driver
        .create_output_topic("out", StringSerde, BytesSerde)
        .read_record();
    assert_eq!(raw.value, Some(vec![80])); // the datum alone: zig-zag 40
    // The input's header travels with the record, and the sink adds its own.
    let headers: Vec<&str> = raw.headers.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(headers, [VALUE_SCHEMA_ID_HEADER, VALUE_SCHEMA_ID_HEADER]);
    input.pipe_key_value("k", 5);
    let typed = driver.create_output_topic("out", StringSerde, long());
    assert_eq!(typed.read_value(), Some(50));
}
