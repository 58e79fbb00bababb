//! Ports of Kafka's `TopologyTestDriverTest` (streams/test-utils) for
//! stateless topologies, plus the driver semantics of `streams_test::semantics`
//! (produced topic names, feedback of output topics, clocks).
//!
//! Kafka's `MockProcessor` is untyped (`Object`); here it is a byte-array
//! processor, which is what Kafka's tests use it with (byte-array default
//! serdes). Scenarios about state stores, global stores, state
//! directories and task idling have no stateless equivalent here.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
use streams_core::serde::{BytesSerde, F64Serde, I32Serde, I64Serde, StringSerde};
use streams_core::{
    Headers, Record, Repartitioned, Result, StreamsBuilder, StreamsConfig, StreamsError, Topics,
    Topology,
};
use streams_test::{KeyValue, TestRecord, TopologyTestDriver};

use crate::support::{Log, kv, r};

const SOURCE_TOPIC_1: &str = "source-topic-1";
const SOURCE_TOPIC_2: &str = "source-topic-2";
const SINK_TOPIC_1: &str = "sink-topic-1";
const SINK_TOPIC_2: &str = "sink-topic-2";
const APPLICATION_ID: &str = "test-TopologyTestDriver";

fn config() -> StreamsConfig {
    StreamsConfig::new(APPLICATION_ID)
        .with_default_key_serde(BytesSerde)
        .with_default_value_serde(BytesSerde)
}

fn headers() -> Headers {
    Headers::new().with("key", "value")
}

/// Kafka's `testRecord1`: empty key and value, one header, timestamp 42.
fn test_record_1() -> TestRecord<Vec<u8>, Vec<u8>> {
    TestRecord::new(Some(Vec::new()), Some(Vec::new()))
        .with_headers(headers())
        .at(42)
}

/// What Kafka's `MockProcessor` records of each record it processes.
#[derive(Debug, Clone, PartialEq)]
struct Processed {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Headers,
    timestamp: i64,
    offset: i64,
    topic: Option<String>,
}

#[derive(Debug, Default)]
struct MockState {
    initialized: bool,
    closed: bool,
    processed: Vec<Processed>,
    punctuated_at: Vec<i64>,
}

type Mocks = Rc<RefCell<Vec<Rc<RefCell<MockState>>>>>;

/// Kafka's `MockProcessor`: records what it processes, forwards it, and
/// schedules the given punctuations, whose punctuator records the time.
struct MockProcessor {
    state: Rc<RefCell<MockState>>,
    punctuations: Vec<(u64, PunctuationType)>,
}

impl Processor<Vec<u8>, Vec<u8>> for MockProcessor {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, Vec<u8>, Vec<u8>>) -> Result<()> {
        self.state.borrow_mut().initialized = true;
        for &(interval, kind) in &self.punctuations {
            ctx.schedule(Duration::from_millis(interval), kind)?;
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, Vec<u8>, Vec<u8>>,
        record: Record<Vec<u8>, Vec<u8>>,
    ) -> Result<()> {
        let metadata = ctx.record_metadata();
        self.state.borrow_mut().processed.push(Processed {
            key: record.key.clone(),
            value: record.value.clone(),
            headers: record.headers.clone(),
            timestamp: record.timestamp,
            offset: metadata.as_ref().map_or(-1, |m| m.offset),
            topic: metadata.map(|m| m.topic.to_string()),
        });
        ctx.forward(record)
    }

    fn punctuate(
        &mut self,
        _ctx: &mut ProcessorContext<'_, Vec<u8>, Vec<u8>>,
        timestamp: i64,
        _punctuation: &Punctuation,
    ) -> Result<()> {
        self.state.borrow_mut().punctuated_at.push(timestamp);
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        self.state.borrow_mut().closed = true;
        Ok(())
    }
}

/// Kafka's `MockProcessorSupplier`: every processor it makes is added to `mocks`.
fn mock_supplier(
    mocks: &Mocks,
    punctuations: Vec<(u64, PunctuationType)>,
) -> impl Fn() -> MockProcessor + 'static {
    let mocks = mocks.clone();
    move || {
        let state = Rc::new(RefCell::new(MockState::default()));
        mocks.borrow_mut().push(state.clone());
        MockProcessor {
            state,
            punctuations: punctuations.clone(),
        }
    }
}

fn mock(mocks: &Mocks, i: usize) -> Rc<RefCell<MockState>> {
    mocks.borrow()[i].clone()
}

fn setup_source_sink_topology() -> Topology {
    let mut topology = Topology::new();
    topology
        .add_source::<Vec<u8>, Vec<u8>>("source", SOURCE_TOPIC_1)
        .and_then(|t| t.add_sink::<Vec<u8>, Vec<u8>>("sink", SINK_TOPIC_1, &["source"]))
        .expect("valid topology");
    topology
}

fn setup_topology_with_two_subtopologies() -> Topology {
    let mut topology = Topology::new();
    topology
        .add_source::<Vec<u8>, Vec<u8>>("source-1", SOURCE_TOPIC_1)
        .and_then(|t| t.add_sink::<Vec<u8>, Vec<u8>>("sink-1", SINK_TOPIC_1, &["source-1"]))
        .and_then(|t| t.add_source::<Vec<u8>, Vec<u8>>("source-2", SINK_TOPIC_1))
        .and_then(|t| t.add_sink::<Vec<u8>, Vec<u8>>("sink-2", SINK_TOPIC_2, &["source-2"]))
        .expect("valid topology");
    topology
}

fn setup_single_processor_topology(
    mocks: &Mocks,
    punctuations: Vec<(u64, PunctuationType)>,
) -> Topology {
    let mut topology = Topology::new();
    topology
        .add_source::<Vec<u8>, Vec<u8>>("source", SOURCE_TOPIC_1)
        .and_then(|t| t.add_processor("processor", mock_supplier(mocks, punctuations), &["source"]))
        .expect("valid topology");
    topology
}

fn setup_multiple_source_topology(mocks: &Mocks, source_topics: &[&str]) -> Topology {
    let mut topology = Topology::new();
    let mut processors = Vec::new();
    for topic in source_topics {
        let source = format!("{topic}-source");
        let processor = format!("{topic}-processor");
        topology
            .add_source::<Vec<u8>, Vec<u8>>(&source, *topic)
            .and_then(|t| t.add_processor(&processor, mock_supplier(mocks, Vec::new()), &[&source]))
            .expect("valid topology");
        processors.push(processor);
    }
    let parents: Vec<&str> = processors.iter().map(String::as_str).collect();
    topology
        .add_sink::<Vec<u8>, Vec<u8>>("sink-topic", SINK_TOPIC_1, &parents)
        .expect("valid topology");
    topology
}

fn setup_multiple_sources_pattern_topology(mocks: &Mocks, patterns: &[&str]) -> Topology {
    let mut topology = Topology::new();
    let mut processors = Vec::new();
    for pattern in patterns {
        let source = format!("{pattern}-source");
        let processor = format!("{pattern}-processor");
        topology
            .add_source::<Vec<u8>, Vec<u8>>(&source, Topics::pattern(*pattern))
            .and_then(|t| t.add_processor(&processor, mock_supplier(mocks, Vec::new()), &[&source]))
            .expect("valid topology");
        processors.push(processor);
    }
    let parents: Vec<&str> = processors.iter().map(String::as_str).collect();
    topology
        .add_sink::<Vec<u8>, Vec<u8>>("sink-topic", SINK_TOPIC_1, &parents)
        .expect("valid topology");
    topology
}

fn driver(topology: Topology) -> TopologyTestDriver {
    TopologyTestDriver::with_config(topology, config()).expect("driver starts")
}

fn pipe_record(driver: &TopologyTestDriver, topic: &str, record: TestRecord<Vec<u8>, Vec<u8>>) {
    driver
        .create_input_topic(topic, BytesSerde, BytesSerde)
        .pipe_record(record);
}

fn bytes_record(timestamp: i64) -> TestRecord<Vec<u8>, Vec<u8>> {
    TestRecord::new(Some(Vec::new()), Some(Vec::new())).at(timestamp)
}

#[test]
fn should_not_require_parameters() {
    let mocks = Mocks::default();
    let driver = TopologyTestDriver::new(setup_single_processor_topology(&mocks, Vec::new()));
    assert!(driver.is_ok(), "{driver:?}");
}

#[test]
fn should_init_processor() {
    let mocks = Mocks::default();
    let _driver = driver(setup_single_processor_topology(&mocks, Vec::new()));
    assert_eq!(
        mocks.borrow().len(),
        1,
        "the supplier is called once per driver"
    );
    assert!(mock(&mocks, 0).borrow().initialized);
    assert!(!mock(&mocks, 0).borrow().closed);
}

#[test]
fn should_close_processor() {
    let mocks = Mocks::default();
    let driver = driver(setup_single_processor_topology(&mocks, Vec::new()));
    driver.close().expect("close succeeds");
    assert!(mock(&mocks, 0).borrow().closed);
}

#[test]
fn dropping_the_driver_closes_processors() {
    let mocks = Mocks::default();
    drop(driver(setup_single_processor_topology(&mocks, Vec::new())));
    assert!(mock(&mocks, 0).borrow().closed);
}

#[test]
fn should_throw_for_unknown_topic() {
    let driver = driver(setup_source_sink_topology());
    let err = driver
        .pipe_raw("unknownTopic", Record::new(None, None, 0))
        .expect_err("no source reads `unknownTopic`");
    assert!(
        matches!(&err, StreamsError::UnknownTopic { topic, known } if topic == "unknownTopic" && known == &[SOURCE_TOPIC_1]),
        "{err:?}"
    );
}

#[test]
fn should_throw_no_such_element_for_unused_output_topic_with_dynamic_routing() {
    let driver = driver(setup_source_sink_topology());
    let output = driver.create_output_topic("unused-topic", StringSerde, StringSerde);
    assert!(output.is_empty());
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| output.read_record()));
    let message = read
        .expect_err("reading a topic never written fails")
        .downcast::<String>()
        .map(|m| *m)
        .unwrap_or_default();
    assert!(
        message.starts_with("uninitialized topic: unused-topic"),
        "{message}"
    );
}

#[test]
fn should_capture_sink_topic_names_if_written_into() {
    let driver = driver(setup_source_sink_topology());
    assert_eq!(driver.produced_topic_names(), BTreeSet::new());
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    assert_eq!(
        driver.produced_topic_names(),
        BTreeSet::from([SINK_TOPIC_1.to_owned()])
    );
}

/// Kafka's test uses an aggregation and a foreign-key join to create its
/// internal topics; the stateless internal topic is a repartition topic.
#[test]
fn should_capture_internal_topic_names_if_written_into() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<Vec<u8>, Vec<u8>>(SOURCE_TOPIC_1)
        .select_key(|_, v| v.clone())
        .repartition_with(Repartitioned::as_("table1"))
        .to(SINK_TOPIC_1);
    let driver = driver(builder.build().expect("valid topology"));
    assert_eq!(driver.produced_topic_names(), BTreeSet::new());
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    assert_eq!(
        driver.produced_topic_names(),
        BTreeSet::from([
            format!("{APPLICATION_ID}-table1-repartition"),
            SINK_TOPIC_1.to_owned()
        ])
    );
}

/// Kafka's test writes into a global table's topic; here the topic written
/// is read by another stream, which counts the same way.
#[test]
fn should_capture_topic_name_if_written_into_a_source_topic() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<Vec<u8>, Vec<u8>>(SOURCE_TOPIC_1)
        .foreach(|_, _| {});
    builder
        .stream::<Vec<u8>, Vec<u8>>(SOURCE_TOPIC_2)
        .to(SOURCE_TOPIC_1);
    let driver = driver(builder.build().expect("valid topology"));
    assert_eq!(driver.produced_topic_names(), BTreeSet::new());
    pipe_record(&driver, SOURCE_TOPIC_2, test_record_1());
    assert_eq!(
        driver.produced_topic_names(),
        BTreeSet::from([SOURCE_TOPIC_1.to_owned()])
    );
}

#[test]
fn should_process_record_for_topic() {
    let driver = driver(setup_source_sink_topology());
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    let output = driver.create_output_topic(SINK_TOPIC_1, BytesSerde, BytesSerde);
    let record = output.read_record();
    assert_eq!(record.key, Some(Vec::new()));
    assert_eq!(record.value, Some(Vec::new()));
    assert_eq!(record.timestamp, Some(42));
    assert_eq!(record.headers, headers());
    assert!(output.is_empty());
}

#[test]
fn should_set_record_metadata() {
    let mocks = Mocks::default();
    let driver = driver(setup_single_processor_topology(&mocks, Vec::new()));
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    assert_eq!(
        mock(&mocks, 0).borrow().processed,
        [Processed {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: headers(),
            timestamp: 42,
            offset: 0,
            topic: Some(SOURCE_TOPIC_1.to_owned()),
        }]
    );
}

#[test]
fn should_send_record_via_correct_source_topic() {
    let mocks = Mocks::default();
    let driver = driver(setup_multiple_source_topology(
        &mocks,
        &[SOURCE_TOPIC_1, SOURCE_TOPIC_2],
    ));
    let (first, second) = (mock(&mocks, 0), mock(&mocks, 1));
    let input1 = driver.create_input_topic(SOURCE_TOPIC_1, BytesSerde, BytesSerde);
    let input2 = driver.create_input_topic(SOURCE_TOPIC_2, BytesSerde, BytesSerde);

    input1.pipe_record(test_record_1());
    assert_eq!(first.borrow().processed.len(), 1);
    assert_eq!(second.borrow().processed.len(), 0);
    assert_eq!(
        first.borrow().processed[0],
        Processed {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: headers(),
            timestamp: 42,
            offset: 0,
            topic: Some(SOURCE_TOPIC_1.to_owned()),
        }
    );

    input2.pipe_record(bytes_record(43));
    assert_eq!(first.borrow().processed.len(), 1);
    assert_eq!(second.borrow().processed.len(), 1);
    assert_eq!(
        second.borrow().processed[0],
        Processed {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: Headers::new(),
            timestamp: 43,
            offset: 0,
            topic: Some(SOURCE_TOPIC_2.to_owned()),
        }
    );
}

#[test]
fn should_use_sink_specific_serializers() {
    let mut topology = Topology::new();
    topology
        .add_source_with_serdes::<i64, String>("source-1", SOURCE_TOPIC_1, I64Serde, StringSerde)
        .and_then(|t| {
            t.add_source_with_serdes::<i32, f64>("source-2", SOURCE_TOPIC_2, I32Serde, F64Serde)
        })
        .and_then(|t| {
            t.add_sink_with_serdes::<i64, String>(
                "sink-1",
                SINK_TOPIC_1,
                I64Serde,
                StringSerde,
                &["source-1"],
            )
        })
        .and_then(|t| {
            t.add_sink_with_serdes::<i32, f64>(
                "sink-2",
                SINK_TOPIC_2,
                I32Serde,
                F64Serde,
                &["source-2"],
            )
        })
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");

    driver
        .create_input_topic(SOURCE_TOPIC_1, I64Serde, StringSerde)
        .pipe_key_value(42, "anyString");
    let result1 = driver
        .create_output_topic(SINK_TOPIC_1, I64Serde, StringSerde)
        .read_record();
    assert_eq!(result1.key, Some(42));
    assert_eq!(result1.value.as_deref(), Some("anyString"));

    driver
        .create_input_topic(SOURCE_TOPIC_2, I32Serde, F64Serde)
        .pipe_key_value(73, 3.25);
    let result2 = driver
        .create_output_topic(SINK_TOPIC_2, I32Serde, F64Serde)
        .read_record();
    assert_eq!(result2.key, Some(73));
    assert_eq!(result2.value, Some(3.25));
}

#[test]
fn should_forward_records_from_subtopology_to_subtopology() {
    let driver = driver(setup_topology_with_two_subtopologies());
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());

    let sink1 = driver.create_output_topic(SINK_TOPIC_1, BytesSerde, BytesSerde);
    let sink2 = driver.create_output_topic(SINK_TOPIC_2, BytesSerde, BytesSerde);
    let expected = TestRecord::new(Some(Vec::new()), Some(Vec::new()))
        .with_headers(headers())
        .at(42);
    assert_eq!(sink1.read_record(), expected);
    assert_eq!(sink2.read_record(), expected);
    assert!(sink1.is_empty());
    assert!(sink2.is_empty());
    assert_eq!(
        driver.produced_topic_names(),
        BTreeSet::from([SINK_TOPIC_1.to_owned(), SINK_TOPIC_2.to_owned()])
    );
}

#[test]
fn should_punctuate_on_streams_time() {
    let mocks = Mocks::default();
    let driver = driver(setup_single_processor_topology(
        &mocks,
        vec![(10, PunctuationType::StreamTime)],
    ));
    let punctuated = || mock(&mocks, 0).borrow().punctuated_at.clone();
    let steps: [(i64, &[i64]); 11] = [
        (42, &[42]),
        (42, &[42]),
        (51, &[42, 51]),
        (52, &[42, 51]),
        (61, &[42, 51, 61]),
        (65, &[42, 51, 61]),
        (71, &[42, 51, 61, 71]),
        (72, &[42, 51, 61, 71]),
        (95, &[42, 51, 61, 71, 95]),
        (101, &[42, 51, 61, 71, 95, 101]),
        (102, &[42, 51, 61, 71, 95, 101]),
    ];
    for (timestamp, expected) in steps {
        pipe_record(&driver, SOURCE_TOPIC_1, bytes_record(timestamp));
        assert_eq!(punctuated(), expected, "after a record at {timestamp}");
    }
}

#[test]
fn should_punctuate_on_wall_clock_time() {
    let mocks = Mocks::default();
    let driver = TopologyTestDriver::builder(setup_single_processor_topology(
        &mocks,
        vec![(10, PunctuationType::WallClockTime)],
    ))
    .config(config())
    .initial_wall_clock_time(0)
    .build()
    .expect("driver starts");
    let punctuated = || mock(&mocks, 0).borrow().punctuated_at.clone();
    let steps: [(u64, &[i64]); 5] = [
        (5, &[]),
        (9, &[14]),
        (1, &[14]),
        (20, &[14, 35]),
        (5, &[14, 35, 40]),
    ];
    for (advance, expected) in steps {
        driver.advance_wall_clock_time(Duration::from_millis(advance));
        assert_eq!(
            punctuated(),
            expected,
            "after advancing by {advance} to {}",
            driver.wall_clock_time()
        );
    }
    assert_eq!(driver.wall_clock_time(), 40);
}

/// Kafka's `CustomMaxAggregator`, keeping its maxima in the processor
/// instead of a key-value store: flushes every 10 s of stream time and
/// every minute of wall-clock time.
struct MaxAggregator {
    max: BTreeMap<String, i64>,
}

impl Processor<String, i64> for MaxAggregator {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, i64>) -> Result<()> {
        ctx.schedule(Duration::from_secs(60), PunctuationType::WallClockTime)?;
        ctx.schedule(Duration::from_secs(10), PunctuationType::StreamTime)?;
        Ok(())
    }

    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, String, i64>,
        record: Record<String, i64>,
    ) -> Result<()> {
        if let (Some(k), Some(v)) = (record.key, record.value) {
            let entry = self.max.entry(k).or_insert(v);
            *entry = (*entry).max(v);
        }
        Ok(())
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        timestamp: i64,
        _p: &Punctuation,
    ) -> Result<()> {
        for (k, v) in &self.max {
            ctx.forward(Record::new(Some(k.clone()), Some(*v), timestamp))?;
        }
        Ok(())
    }
}

fn max_aggregator_driver() -> TopologyTestDriver {
    let mut topology = Topology::new();
    topology
        .add_source::<String, i64>("sourceProcessor", "input-topic")
        .and_then(|t| {
            t.add_processor(
                "aggregator",
                || MaxAggregator {
                    max: BTreeMap::new(),
                },
                &["sourceProcessor"],
            )
        })
        .and_then(|t| t.add_sink::<String, i64>("sinkProcessor", "result-topic", &["aggregator"]))
        .expect("valid topology");
    let config = StreamsConfig::new(APPLICATION_ID)
        .with_default_key_serde(StringSerde)
        .with_default_value_serde(I64Serde);
    TopologyTestDriver::with_config(topology, config).expect("driver starts")
}

#[test]
fn should_flush_for_first_input_and_punctuate_if_event_time_advances() {
    let driver = max_aggregator_driver();
    let input = driver.create_input_topic("input-topic", StringSerde, I64Serde);
    let result = driver.create_output_topic("result-topic", StringSerde, I64Serde);

    input.pipe_key_value_at("a", 1, 9999);
    assert_eq!(result.read_record(), TestRecord::key_value("a", 1).at(9999));
    assert!(result.is_empty());

    input.pipe_key_value_at("a", 1, 9999);
    assert!(result.is_empty());

    input.pipe_key_value_at("a", 42, 10_000);
    assert_eq!(
        result.read_record(),
        TestRecord::key_value("a", 42).at(10_000)
    );
    assert!(result.is_empty());
}

#[test]
fn should_punctuate_if_wall_clock_time_advances() {
    let driver = max_aggregator_driver();
    let input = driver.create_input_topic("input-topic", StringSerde, I64Serde);
    let result = driver.create_output_topic("result-topic", StringSerde, I64Serde);
    input.pipe_key_value_at("b", 21, 9999);
    assert_eq!(result.read_key_value(), KeyValue::pair("b", 21));

    driver.advance_wall_clock_time(Duration::from_millis(59_999));
    assert!(result.is_empty());
    driver.advance_wall_clock_time(Duration::from_millis(1));
    assert_eq!(
        result.read_record(),
        TestRecord::key_value("b", 21).at(60_000)
    );
    assert!(result.is_empty());
}

#[test]
fn should_process_from_sources_that_match_multiple_pattern() {
    let mocks = Mocks::default();
    let driver = driver(setup_multiple_sources_pattern_topology(
        &mocks,
        &[r"source-topic-\d", "source-topic-[A-Z]"],
    ));
    let (first, second) = (mock(&mocks, 0), mock(&mocks, 1));

    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    assert_eq!(first.borrow().processed.len(), 1);
    assert_eq!(second.borrow().processed.len(), 0);
    assert_eq!(
        first.borrow().processed[0],
        Processed {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: headers(),
            timestamp: 42,
            offset: 0,
            topic: Some(SOURCE_TOPIC_1.to_owned()),
        }
    );

    pipe_record(&driver, "source-topic-Z", bytes_record(43));
    assert_eq!(first.borrow().processed.len(), 1);
    assert_eq!(second.borrow().processed.len(), 1);
    assert_eq!(
        second.borrow().processed[0],
        Processed {
            key: Some(Vec::new()),
            value: Some(Vec::new()),
            headers: Headers::new(),
            timestamp: 43,
            offset: 0,
            topic: Some("source-topic-Z".to_owned()),
        }
    );
}

#[test]
fn should_process_from_source_that_match_pattern() {
    let mut topology = Topology::new();
    topology
        .add_source::<Vec<u8>, Vec<u8>>("source", Topics::pattern(r"source-topic-\d"))
        .and_then(|t| t.add_sink::<Vec<u8>, Vec<u8>>("sink", SINK_TOPIC_1, &["source"]))
        .expect("valid topology");
    let driver = driver(topology);
    pipe_record(&driver, SOURCE_TOPIC_1, test_record_1());
    let record = driver
        .create_output_topic(SINK_TOPIC_1, BytesSerde, BytesSerde)
        .read_record();
    assert_eq!(record.key, Some(Vec::new()));
    assert_eq!(record.value, Some(Vec::new()));
}

/// Kafka's `shouldThrowPatternNotValidForTopicNameException`: a source
/// named `source-topic-\d` (a plain name with regex characters) makes a
/// pipe to `source-topic-1`, which the name matches as a regex, fail with
/// Kafka's error.
#[test]
fn should_throw_pattern_not_valid_for_topic_name_exception() {
    let mut topology = Topology::new();
    topology
        .add_source::<Vec<u8>, Vec<u8>>("source", r"source-topic-\d")
        .and_then(|t| t.add_sink::<Vec<u8>, Vec<u8>>("sink", SINK_TOPIC_1, &["source"]))
        .expect("valid topology");
    let driver = driver(topology);
    let err = driver
        .create_input_topic(SOURCE_TOPIC_1, BytesSerde, BytesSerde)
        .try_pipe_record(test_record_1())
        .expect_err("refused");
    assert_eq!(
        err.to_string(),
        "invalid topology: source topic `source-topic-\\d` cannot contain regex pattern for input record \
         topic `source-topic-1`: its name, read as a regex, matches it; pipe to `source-topic-\\d` itself, \
         or read `source-topic-1` with a pattern source"
    );
    // A topic the name does not match is unknown, as before.
    let err = driver
        .create_input_topic("other", BytesSerde, BytesSerde)
        .try_pipe_record(test_record_1())
        .expect_err("unknown");
    assert!(matches!(err, StreamsError::UnknownTopic { .. }), "{err:?}");
}

/// Kafka's `shouldEnqueueLaterOutputsAfterEarlierOnes`.
struct Recursive;

impl Processor<String, String> for Recursive {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let value = record.value.clone().unwrap_or_default();
        if !value.starts_with("recurse-") {
            ctx.forward_to(
                "recursiveSink",
                record.clone().with_value(Some(format!("recurse-{value}"))),
            )?;
        }
        ctx.forward_to("sink", record)
    }
}

#[test]
fn should_enqueue_later_outputs_after_earlier_ones() {
    let mut topology = Topology::new();
    topology
        .add_source_with_serdes::<String, String>("source", "input", StringSerde, StringSerde)
        .and_then(|t| t.add_processor("recursiveProcessor", || Recursive, &["source"]))
        .and_then(|t| {
            t.add_sink_with_serdes::<String, String>(
                "recursiveSink",
                "input",
                StringSerde,
                StringSerde,
                &["recursiveProcessor"],
            )
        })
        .and_then(|t| {
            t.add_sink_with_serdes::<String, String>(
                "sink",
                "output",
                StringSerde,
                StringSerde,
                &["recursiveProcessor"],
            )
        })
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);

    input.pipe_key_value("B", "beta");
    assert_eq!(
        output.read_key_values_to_list(),
        [kv("B", "beta"), kv("B", "recurse-beta")]
    );
    assert_eq!(
        driver.produced_topic_names(),
        BTreeSet::from(["input".to_owned(), "output".to_owned()])
    );
}

/// The oracle's `feedback_loop` scenario: records written to a topic the
/// topology reads are processed breadth-first (KAFKA-9503).
#[test]
fn feedback_loop_is_processed_breadth_first() {
    let log = Log::new();
    let builder = StreamsBuilder::new();
    let (la, lb) = (log.clone(), log.clone());
    builder
        .stream::<String, String>("a")
        .peek(move |_, v| la.push(format!("a:{v}")))
        .flat_map_values(|v| [format!("{v}1"), format!("{v}2")])
        .to("b");
    let bs = builder
        .stream::<String, String>("b")
        .peek(move |_, v| lb.push(format!("b:{v}")));
    bs.clone().to("out");
    bs.filter(|_, v| v.len() < 3)
        .flat_map_values(|v| [format!("{v}x"), format!("{v}y")])
        .to("b");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let a = driver.create_input_topic("a", StringSerde, StringSerde);
    let b = driver.create_output_topic("b", StringSerde, StringSerde);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);

    a.pipe_key_value_at("k", "p", 0);
    log.push("-- second input --");
    a.pipe_key_value_at("k", "q", 1);

    let expected = [
        r("k", "p1", 0),
        r("k", "p2", 0),
        r("k", "p1x", 0),
        r("k", "p1y", 0),
        r("k", "p2x", 0),
        r("k", "p2y", 0),
        r("k", "q1", 1),
        r("k", "q2", 1),
        r("k", "q1x", 1),
        r("k", "q1y", 1),
        r("k", "q2x", 1),
        r("k", "q2y", 1),
    ];
    assert_eq!(b.read_records_to_list(), expected);
    assert_eq!(out.read_records_to_list(), expected);
    assert_eq!(
        log.entries(),
        [
            "a:p",
            "b:p1",
            "b:p2",
            "b:p1x",
            "b:p1y",
            "b:p2x",
            "b:p2y",
            "-- second input --",
            "a:q",
            "b:q1",
            "b:q2",
            "b:q1x",
            "b:q1y",
            "b:q2x",
            "b:q2y",
        ]
    );
}

#[test]
fn clocks_start_where_the_driver_says() {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    let topology = builder.build().expect("valid topology");

    let default = TopologyTestDriver::new(topology.clone()).expect("driver starts");
    assert_eq!(default.wall_clock_time(), streams_test::DEFAULT_START_MS);
    assert_eq!(default.stream_time(), -1, "no record yet");

    let driver = TopologyTestDriver::builder(topology)
        .initial_wall_clock_time(1_000)
        .build()
        .expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    assert_eq!(driver.wall_clock_time(), 1_000);
    input.pipe_key_value_at("k", "v", 7);
    assert_eq!(driver.stream_time(), 7);
    input.pipe_key_value_at("k", "v", 3);
    assert_eq!(driver.stream_time(), 7, "stream time never goes back");
    driver.advance_wall_clock_time(Duration::from_millis(250));
    assert_eq!(driver.wall_clock_time(), 1_250);
    assert_eq!(
        driver.stream_time(),
        7,
        "the wall clock does not move stream time"
    );
}

/// The oracle's `multiple_sources_and_sinks` scenario.
#[test]
fn multiple_sources_and_sinks() {
    let builder = StreamsBuilder::new();
    let a = builder.stream::<String, String>("a");
    let b = builder.stream::<String, String>("b");
    let cd = builder.stream::<String, String>(["c", "d"]);
    a.clone().filter(|_, v| v.len() > 1).to("out1");
    a.to("out2");
    b.clone().map_values(|v| v.to_uppercase()).to("out1");
    b.to("out2");
    cd.to("out3");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let topic = |t| driver.create_input_topic(t, StringSerde, StringSerde);
    topic("a").pipe_key_value_at("ka", "x", 0);
    topic("a").pipe_key_value_at("ka", "xy", 1);
    topic("b").pipe_key_value_at("kb", "y", 2);
    topic("c").pipe_key_value_at("kc", "z", 3);
    topic("d").pipe_key_value_at("kd", "w", 4);
    topic("c").pipe_key_value_at("kc", "z2", 5);

    let out = |t| {
        driver
            .create_output_topic(t, StringSerde, StringSerde)
            .read_records_to_list()
    };
    assert_eq!(out("out1"), [r("ka", "xy", 1), r("kb", "Y", 2)]);
    assert_eq!(
        out("out2"),
        [r("ka", "x", 0), r("ka", "xy", 1), r("kb", "y", 2)]
    );
    assert_eq!(
        out("out3"),
        [r("kc", "z", 3), r("kd", "w", 4), r("kc", "z2", 5)]
    );
    assert_eq!(driver.metrics().processed_records, 6);
    assert_eq!(driver.metrics().dropped_records, 0);
}

/// Output offsets count per topic from 0, whichever sink wrote.
#[test]
fn output_offsets_are_per_topic() {
    let builder = StreamsBuilder::new();
    let s = builder.stream::<String, String>("in");
    s.clone().to("one");
    s.clone().to("two");
    s.to("one");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("k", "v", 1);
    let one = driver.create_output_topic("one", I64Serde, StringSerde);
    let two = driver.create_output_topic("two", I64Serde, StringSerde);
    // The key "k" is not a long: the failing read names each record's offset.
    let offset_of_failure = |topic: &streams_test::TestOutputTopic<'_, i64, String>| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| topic.read_record()))
            .expect_err("the key is not a long")
            .downcast::<String>()
            .map(|m| *m)
            .unwrap_or_default()
    };
    // A record that does not decode is consumed, as in Kafka's driver.
    assert!(offset_of_failure(&one).contains("at one-0 offset 0"));
    assert!(offset_of_failure(&two).contains("at two-0 offset 0"));
    assert!(offset_of_failure(&one).contains("at one-0 offset 1"));
    assert!(one.is_empty() && two.is_empty());
}

/// Kafka's `shouldRespectTaskIdling`: with `max.task.idle.ms = 1000` a
/// record waits while the task's other input is empty, until both inputs
/// have records or the wall clock passes the idle deadline.
#[test]
fn should_respect_task_idling() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source1", "input1")
        .and_then(|t| t.add_source::<String, String>("source2", "input2"))
        .and_then(|t| t.add_sink::<String, String>("sink", "output", &["source1", "source2"]))
        .expect("valid topology");
    let config = config().with_property("max.task.idle.ms", "1000");
    let driver = TopologyTestDriver::with_config(topology, config).expect("starts");
    let in1 = driver.create_input_topic("input1", StringSerde, StringSerde);
    let in2 = driver.create_input_topic("input2", StringSerde, StringSerde);
    let out = driver.create_output_topic("output", StringSerde, StringSerde);

    in1.pipe_key_value("A", "alpha");
    driver.advance_wall_clock_time(Duration::from_millis(1));
    // Only one input has records, and it has been one ms.
    assert_eq!(out.read_key_values_to_list(), []);

    in2.pipe_key_value("B", "beta");
    // Both inputs have records: A (the earlier) is processed; then only
    // one input has records again, and idling holds B back.
    assert_eq!(
        out.read_key_values_to_list(),
        [KeyValue::pair("A", "alpha")]
    );

    driver.advance_wall_clock_time(Duration::from_secs(1));
    assert_eq!(out.read_key_values_to_list(), [KeyValue::pair("B", "beta")]);
}

/// `max.task.idle.ms` must be a number.
#[test]
fn a_max_task_idle_ms_that_is_not_a_number_is_refused() {
    let config = config().with_property("max.task.idle.ms", "soon");
    let err =
        TopologyTestDriver::with_config(setup_source_sink_topology(), config).expect_err("refused");
    assert!(
        matches!(
            &err,
            StreamsError::InvalidConfig {
                config: "max.task.idle.ms",
                value,
                ..
            } if value == "soon"
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("max.task.idle.ms"), "{err}");
    assert!(err.to_string().contains("soon"), "{err}");
}
