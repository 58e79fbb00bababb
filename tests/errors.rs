//! Bad input and bad topologies: every error names what it is about, and
//! nothing already produced is lost when a later record fails.
//!
//! Kafka's messages for the same situations (from the oracle's golden
//! files) are quoted where the scenario comes from there.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pretty_assertions::assert_eq;
use streams_core::config::LogAndContinueExceptionHandler;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{
    Consumed, Produced, Record, RecordPart, Result, StreamsBuilder, StreamsConfig, StreamsError,
    Topics, Topology, TopologyError,
};
use streams_test::{TestRecord, TopologyTestDriver};

use crate::support::r;

fn passthrough() -> TopologyTestDriver {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts")
}

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the call panics");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    }
}

fn topology_error(result: Result<&mut Topology>) -> TopologyError {
    match result {
        Err(StreamsError::Topology(e)) => e,
        Err(other) => panic!("expected a topology error, got {other:?}"),
        Ok(t) => panic!("expected a topology error, got {t:?}"),
    }
}

// ---------------------------------------------------------------------
// Input that cannot be piped or processed.
// ---------------------------------------------------------------------

/// The oracle's `unknown_topic_error` (Kafka: `IllegalArgumentException:
/// Unknown topic: nope`): the driver stays usable.
#[test]
fn piping_to_a_topic_no_source_reads_lists_the_known_topics() {
    let driver = passthrough();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let nope = driver.create_input_topic("nope", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    let err = nope
        .try_pipe_record(TestRecord::key_value("k2", "b").at(1))
        .expect_err("no source reads `nope`");
    assert!(
        matches!(&err, StreamsError::UnknownTopic { topic, known } if topic == "nope" && known == &["in"]),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        r#"unknown topic: nope; the topology reads ["in"]"#
    );
    input.pipe_key_value_at("k3", "c", 2);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(
        out.read_records_to_list(),
        [r("k1", "a", 0), r("k3", "c", 2)]
    );
    assert_eq!(driver.stream_time(), 2);
}

#[test]
#[should_panic(
    expected = r#"piping a record into topic `nope` failed: unknown topic: nope; the topology reads ["in"]"#
)]
fn piping_to_an_unknown_topic_panics_with_the_known_topics() {
    let driver = passthrough();
    driver
        .create_input_topic("nope", StringSerde, StringSerde)
        .pipe_value("x");
}

/// The oracle's `pattern_unknown_topic_error` (Kafka: `Unknown topic: other`).
#[test]
fn a_topic_the_pattern_does_not_match_is_unknown() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(Topics::pattern("in-.*"))
        .to("out");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    driver
        .create_input_topic("in-x", StringSerde, StringSerde)
        .pipe_key_value_at("k1", "a", 0);
    let err = driver
        .create_input_topic("other", StringSerde, StringSerde)
        .try_pipe_record(TestRecord::key_value("k2", "b").at(1))
        .expect_err("`other` does not match `in-.*`");
    assert!(
        matches!(&err, StreamsError::UnknownTopic { topic, known } if topic == "other" && known == &["in-.*"]),
        "{err:?}"
    );
    // Kafka matches the whole name: "xin-a" and "in" are not read either.
    for topic in ["xin-a", "in"] {
        assert!(
            driver
                .create_input_topic(topic, StringSerde, StringSerde)
                .try_pipe_record(TestRecord::value("c"))
                .is_err(),
            "{topic}"
        );
    }
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(out.read_records_to_list(), [r("k1", "a", 0)]);
}

/// The oracle's `deserialization_error` (Kafka: `StreamsException:
/// Deserialization exception handler is set to fail upon a
/// deserialization error. ...`).
#[test]
fn a_record_the_source_serde_cannot_decode_names_topic_partition_offset_and_reason() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<String, i64>("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, streams_core::serde::BytesSerde);
    input.pipe_key_value_at("k1", vec![0, 0, 0, 0, 0, 0, 0, 7], 0);
    let err = input
        .try_pipe_record(TestRecord::key_value("k2", vec![1, 2, 3]).at(1))
        .expect_err("3 bytes are not a long");
    match &err {
        StreamsError::Deserialization {
            topic,
            partition,
            offset,
            part,
            reason,
        } => {
            assert_eq!(
                (topic.as_str(), *partition, *offset, *part),
                ("in", 0, 1, RecordPart::Value)
            );
            assert_eq!(
                reason.message(),
                "size of data received by I64Serde is 3, not 8"
            );
        }
        other => panic!("expected Deserialization, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "cannot deserialize the value of the record at in-0 offset 1: size of data received by I64Serde is 3, not 8; \
         check the serde configured for this topic"
    );
    let out = driver.create_output_topic("out", StringSerde, I64Serde);
    assert_eq!(
        out.read_records_to_list(),
        [TestRecord::key_value("k1", 7).at(0)]
    );
    assert_eq!(
        driver.stream_time(),
        0,
        "the undecodable record did not move stream time"
    );
}

/// Kafka's log-and-continue handler: the record is skipped and counted.
#[test]
fn undecodable_records_are_skipped_and_counted_when_configured() {
    let builder = StreamsBuilder::new();
    builder
        .stream_with::<String, i64>("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    let config = StreamsConfig::new("continue")
        .with_deserialization_exception_handler(LogAndContinueExceptionHandler);
    let driver = TopologyTestDriver::with_config(builder.build().expect("valid topology"), config)
        .expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, streams_core::serde::BytesSerde);
    input.pipe_key_value_at("k1", vec![1, 2, 3], 5);
    input.pipe_key_value_at("k2", 9_i64.to_be_bytes().to_vec(), 6);
    let out = driver.create_output_topic("out", StringSerde, I64Serde);
    assert_eq!(
        out.read_records_to_list(),
        [TestRecord::key_value("k2", 9).at(6)]
    );
    assert_eq!(driver.metrics().processed_records, 1);
    assert_eq!(driver.metrics().dropped_records, 1);
}

#[test]
fn a_key_the_source_serde_cannot_decode_is_named_as_the_key() {
    let mut topology = Topology::new();
    topology
        .add_source_with_serdes::<i64, String>("source", "in", I64Serde, StringSerde)
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");
    let err = driver
        .create_input_topic("in", StringSerde, StringSerde)
        .try_pipe_record(TestRecord::key_value("abc", "v"))
        .expect_err("3 bytes are not a long");
    assert!(
        matches!(
            &err,
            StreamsError::Deserialization {
                part: RecordPart::Key,
                offset: 0,
                ..
            }
        ),
        "{err:?}"
    );
}

/// The oracle's `negative_timestamp_error` (Kafka:
/// `IllegalArgumentException: Invalid timestamp: -1. ...`).
#[test]
fn a_negative_timestamp_is_rejected_and_earlier_output_kept() {
    let driver = passthrough();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    let message = panic_message(|| input.pipe_key_value_at("k2", "b", -1));
    assert_eq!(
        message,
        "piping a record into topic `in` failed: record timestamp -1 for topic `in` is negative; \
         timestamps are epoch milliseconds >= 0"
    );
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(out.read_records_to_list(), [r("k1", "a", 0)]);
}

/// A processor that shifts timestamps below zero: the sink refuses it.
struct Rewind;

impl Processor<String, String> for Rewind {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        let ts = record.timestamp - 10;
        ctx.forward(record.with_timestamp(ts))
    }
}

#[test]
fn a_sink_refuses_a_negative_timestamp() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .and_then(|t| t.add_processor("rewind", || Rewind, &["source"]))
        .and_then(|t| t.add_sink::<String, String>("sink", "out", &["rewind"]))
        .expect("valid topology");
    let driver = TopologyTestDriver::new(topology).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k", "v", 15);
    let err = input
        .try_pipe_record(TestRecord::key_value("k", "v").at(5))
        .expect_err("5 - 10 is negative");
    assert!(
        matches!(&err, StreamsError::NegativeTimestamp { topic, timestamp: -5 } if topic == "out"),
        "{err:?}"
    );
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    assert_eq!(out.read_records_to_list(), [r("k", "v", 5)]);
}

/// Fails on the value "boom", after forwarding a first record.
struct Boom;

impl Processor<String, String> for Boom {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> Result<()> {
        if record.value.as_deref() == Some("boom") {
            ctx.forward(record.clone().with_value(Some("before-boom".to_owned())))?;
            return Err(StreamsError::processing("boom"));
        }
        ctx.forward(record)
    }
}

/// The oracle's `user_exception_error` (Kafka: `StreamsException:
/// Exception caught in process. taskId=0_0,
/// processor=KSTREAM-MAPVALUES-0000000001, topic=in, partition=0,
/// offset=1`): the error names the processor, and output produced
/// before it, by earlier records or by the failing one, is kept.
#[test]
fn nothing_already_produced_is_lost_when_a_later_record_fails() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .named("boom")
        .process(|| Boom)
        .to("out");
    let driver =
        TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "a", 0);
    assert_eq!(out.queue_size(), 1);

    let err = input
        .try_pipe_record(TestRecord::key_value("k2", "boom").at(1))
        .expect_err("the processor fails");
    // The default processing handler (log and fail) names the task, the
    // record and the node, as Kafka's `Exception caught in process. ..`.
    assert!(
        matches!(&err, StreamsError::ProcessingFailed { node, origin, .. }
            if node == "boom" && origin.offset == 1),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "exception caught in process: task 0_0, topic `in`, partition 0, offset 1, processor `boom`: \
         processor `boom` failed: boom"
    );

    input.pipe_key_value_at("k3", "c", 2);
    assert_eq!(
        out.read_records_to_list(),
        [r("k1", "a", 0), r("k2", "before-boom", 1), r("k3", "c", 2)]
    );
    assert_eq!(driver.produced_topic_names().len(), 1);
}

// ---------------------------------------------------------------------
// Reading output topics.
// ---------------------------------------------------------------------

#[test]
#[should_panic(expected = "empty topic: out")]
fn reading_a_drained_topic_names_it() {
    let driver = passthrough();
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value("k", "v");
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    let _ = out.read_value();
    let _ = out.read_value();
}

#[test]
fn reading_an_uninitialized_topic_names_it_and_the_written_ones() {
    let driver = passthrough();
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value("k", "v");
    let never = driver.create_output_topic("never", StringSerde, StringSerde);
    assert_eq!(
        panic_message(|| {
            let _ = never.read_key_value();
        }),
        r#"uninitialized topic: never; the topology never wrote to it (it writes to ["out"])"#
    );
    let out = driver.create_output_topic("out", StringSerde, StringSerde);
    let _ = out.read_record();
    assert_eq!(
        panic_message(|| {
            let _ = out.read_record();
        }),
        "empty topic: out; every record written to it was already read"
    );
}

#[test]
fn an_undecodable_output_record_names_topic_partition_offset_and_reason_and_is_consumed() {
    let driver = passthrough();
    let input = driver.create_input_topic("in", StringSerde, StringSerde);
    input.pipe_key_value_at("k1", "12345678", 0);
    input.pipe_key_value_at("k2", "123", 1);
    let as_long = driver.create_output_topic("out", StringSerde, I64Serde);
    assert_eq!(as_long.read_value(), Some(i64::from_be_bytes(*b"12345678")));
    let message = panic_message(|| {
        let _ = as_long.read_value();
    });
    assert_eq!(
        message,
        "reading topic `out` failed: cannot deserialize the value of the record at out-0 offset 1: \
         size of data received by I64Serde is 3, not 8; check the serde configured for this topic"
    );
    // Kafka's driver removes a record before it deserializes it.
    assert_eq!(as_long.queue_size(), 0, "the record was consumed");
    assert!(
        driver
            .create_output_topic("out", StringSerde, StringSerde)
            .is_empty()
    );
}

// ---------------------------------------------------------------------
// Topologies that cannot be built.
// ---------------------------------------------------------------------

#[test]
fn duplicate_node_names_are_refused() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .expect("first source");
    let err = topology_error(topology.add_sink::<String, String>("source", "out", &["source"]));
    assert_eq!(
        err,
        TopologyError::DuplicateName {
            name: "source".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "node name `source` is already used by another node; node names must be unique"
    );
    assert_eq!(
        topology.node_names(),
        ["source"],
        "the refused node was not added"
    );
}

#[test]
fn duplicate_names_in_the_dsl_fail_the_build() {
    let builder = StreamsBuilder::new();
    let s = builder.stream::<String, String>("in");
    s.clone().named("twice").filter(|_, _| true).to("a");
    s.named("twice").map_values(|v| v.clone()).to("b");
    let err = builder.build().expect_err("`twice` is used twice");
    assert!(
        matches!(&err, StreamsError::Topology(TopologyError::DuplicateName { name }) if name == "twice"),
        "{err:?}"
    );
    let again = builder.build().expect_err("the builder keeps failing");
    assert!(
        matches!(&again, StreamsError::BuilderFailedEarlier { .. }),
        "{again:?}"
    );
    assert_eq!(
        again.to_string(),
        "this builder failed earlier: invalid topology: node name `twice` is already used by another node; node names must be unique; fix that error and start a new StreamsBuilder"
    );
}

#[test]
fn an_unknown_parent_is_refused() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .expect("source");
    let err =
        topology_error(topology.add_sink::<String, String>("sink", "out", &["source", "ghost"]));
    assert_eq!(
        err,
        TopologyError::UnknownParent {
            node: "sink".into(),
            parent: "ghost".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "node `sink` names parent `ghost`, which does not exist; add parents before their children"
    );
}

#[test]
fn a_processor_or_sink_without_parent_is_refused() {
    let mut topology = Topology::new();
    let err = topology_error(topology.add_sink::<String, String>("sink", "out", &[]));
    assert_eq!(
        err,
        TopologyError::NoParent {
            node: "sink".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "node `sink` has no parent; a processor or sink needs at least one"
    );
}

#[test]
fn a_sink_cannot_be_a_parent() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .and_then(|t| t.add_sink::<String, String>("sink", "out", &["source"]))
        .expect("valid so far");
    let err = topology_error(topology.add_sink::<String, String>("after", "out2", &["sink"]));
    assert_eq!(
        err,
        TopologyError::SinkAsParent {
            node: "after".into(),
            parent: "sink".into()
        }
    );
}

#[test]
fn a_sink_with_no_topic_is_refused() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .expect("source");
    let err = topology_error(topology.add_sink::<String, String>("sink", "", &["source"]));
    assert_eq!(
        err,
        TopologyError::NoTopic {
            kind: "sink",
            node: "sink".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "sink `sink` has no topic; give it at least one topic name"
    );
}

#[test]
fn a_source_with_no_topic_or_an_empty_topic_is_refused() {
    let mut topology = Topology::new();
    let err = topology_error(topology.add_source::<String, String>("source", Vec::<String>::new()));
    assert_eq!(
        err,
        TopologyError::NoTopic {
            kind: "source",
            node: "source".into()
        }
    );
    let err = topology_error(topology.add_source::<String, String>("source", ["in", ""]));
    assert_eq!(
        err,
        TopologyError::EmptyTopic {
            node: "source".into()
        }
    );
}

#[test]
fn an_empty_node_name_is_refused() {
    let mut topology = Topology::new();
    let err = topology_error(topology.add_source::<String, String>("", "in"));
    assert_eq!(err, TopologyError::EmptyName);
}

#[test]
fn a_topic_read_by_two_sources_is_refused() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("first", ["a", "b"])
        .expect("first source");
    let err = topology_error(topology.add_source::<String, String>("second", ["c", "b"]));
    assert_eq!(
        err,
        TopologyError::TopicAlreadyRead {
            topic: "b".into(),
            existing: "first".into()
        }
    );
}

/// A topology without sources: `validate` and the runtime refuse it;
/// `StreamsBuilder::build` and the driver accept it, as Kafka's do, and a
/// pipe fails as to an unknown topic.
#[test]
fn a_topology_without_source() {
    let err = Topology::new().validate().expect_err("no source");
    assert!(
        matches!(err, StreamsError::Topology(TopologyError::NoSource)),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "invalid topology: the topology has no source; add one with `add_source` or `StreamsBuilder::stream`"
    );
    let empty = StreamsBuilder::new()
        .build()
        .expect("Kafka's build accepts it");
    assert_eq!(empty.describe().to_string(), "Topologies:\n ");
    let driver = TopologyTestDriver::new(empty.clone()).expect("Kafka's driver accepts it");
    let err = driver
        .create_input_topic("in", StringSerde, StringSerde)
        .try_pipe_record(TestRecord::key_value("k", "v"))
        .expect_err("unknown topic");
    assert!(
        matches!(&err, StreamsError::UnknownTopic { topic, known } if topic == "in" && known.is_empty()),
        "{err:?}"
    );
    let clients = std::sync::Arc::new(streams_broker::clients::api::SimulatedClients::new(
        streams_broker::Cluster::new(),
    ));
    let err = streams_core::runtime::KafkaStreams::new(&empty, StreamsConfig::new("app"), clients)
        .expect_err("the runtime refuses it");
    assert!(err.to_string().contains("no source"), "{err}");
}

#[test]
fn an_invalid_regex_pattern_is_refused() {
    let mut topology = Topology::new();
    let err =
        topology_error(topology.add_source::<String, String>("source", Topics::pattern("in-(")));
    match &err {
        TopologyError::InvalidPattern {
            node,
            pattern,
            reason,
        } => {
            assert_eq!((node.as_str(), pattern.as_str()), ("source", "in-("));
            assert!(reason.contains("open group without closing"), "{reason}");
        }
        other => panic!("expected InvalidPattern, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("source `source` has an invalid topic pattern `in-(`: "),
        "{err}"
    );

    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(Topics::pattern("["))
        .to("out");
    let err = builder.build().expect_err("`[` is not a regex");
    assert!(
        matches!(&err, StreamsError::Topology(TopologyError::InvalidPattern { node, pattern, .. })
            if node == "KSTREAM-SOURCE-0000000000" && pattern == "["),
        "{err:?}"
    );

    let err = topology_error(topology.add_source::<String, String>("empty", Topics::pattern("")));
    assert_eq!(
        err,
        TopologyError::InvalidPattern {
            node: "empty".into(),
            pattern: String::new(),
            reason: "the pattern is empty".into()
        }
    );
}

/// Reads strings, forwards lengths.
struct Len;

impl Processor<String, String, String, i64> for Len {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        record: Record<String, String>,
    ) -> Result<()> {
        let len = record.value.as_ref().map(|v| v.len() as i64);
        ctx.forward(record.with_value(len))
    }
}

#[test]
fn a_type_mismatch_between_parent_and_child_is_refused() {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("source", "in")
        .and_then(|t| t.add_processor("len", || Len, &["source"]))
        .expect("valid so far");
    let err = topology_error(topology.add_sink::<String, String>("sink", "out", &["len"]));
    assert_eq!(
        err,
        TopologyError::TypeMismatch {
            parent: "len".into(),
            parent_output: "alloc::string::String, i64".into(),
            child: "sink".into(),
            child_input: "alloc::string::String, alloc::string::String".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "node `sink` reads records of type (alloc::string::String, alloc::string::String) but its parent `len` \
         forwards (alloc::string::String, i64); connect nodes whose types agree"
    );
    let err = topology_error(topology.add_processor("len2", || Len, &["len"]));
    assert!(matches!(err, TopologyError::TypeMismatch { .. }), "{err:?}");
    topology
        .add_sink::<String, i64>("sink", "out", &["len"])
        .expect("matching types are accepted");
}

#[test]
fn a_missing_serde_is_reported_when_the_driver_starts() {
    let mut topology = Topology::new();
    topology
        .add_source::<u16, String>("source", "in")
        .expect("the serde is resolved later");
    let err = TopologyTestDriver::new(topology).expect_err("no serde for u16");
    assert!(
        matches!(&err, StreamsError::MissingSerde { node, part: RecordPart::Key, type_name: "u16" } if node == "source"),
        "{err:?}"
    );
}

/// Kafka's `InternalTopicConfig.setNumberOfPartitions`: "Number of
/// partitions must be at least 1." The builder fails naming the topic.
#[test]
fn a_repartition_topic_with_no_partitions_is_refused() {
    let builder = streams_core::StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .repartition_with(
            streams_core::dsl::Repartitioned::as_("wide").with_number_of_partitions(0),
        )
        .to("out");
    let err = builder
        .build()
        .expect_err("a repartition topic of 0 partitions");
    assert_eq!(
        err.to_string(),
        "invalid topology: repartition topic `wide-repartition` was given 0 partitions; Number of partitions must be at least 1"
    );
}

/// A test returning `Result<(), Box<dyn Error>>` prints the error with
/// `Debug`: it shows the message, not the variant's fields (issue 18).
#[test]
fn debug_of_an_error_is_its_message() {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    let driver = TopologyTestDriver::new(builder.build().expect("valid")).expect("starts");
    let err = driver
        .create_input_topic("inn", StringSerde, StringSerde)
        .try_pipe_record(TestRecord::key_value("k", "v"))
        .expect_err("unknown topic");
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert_eq!(
        format!("{boxed:?}"),
        r#"unknown topic: inn; the topology reads ["in"]"#
    );
    assert_eq!(format!("{boxed:?}"), boxed.to_string());
    // The structure is still there to match on.
    let err = *boxed.downcast::<StreamsError>().expect("a StreamsError");
    assert!(matches!(err, StreamsError::UnknownTopic { ref topic, .. } if topic == "inn"));
    let runtime = streams_core::runtime::RuntimeError::MissingSourceTopics {
        topics: vec!["a".into()],
    };
    assert_eq!(format!("{runtime:?}"), runtime.to_string());
    let client = streams_clients::ClientError::TopicExists { topic: "t".into() };
    assert_eq!(format!("{client:?}"), client.to_string());
}
