//! The oracle's `DlqScenarios`: the exception handlers with a dead letter
//! queue (KIP-1034, `errors.dead.letter.queue.topic.name = dlq`). The DLQ
//! is read as any output topic, its headers compared byte for byte (the
//! stack trace header by its first line, see `header_to_golden`).

use streams_core::SerdeError;
use streams_core::dsl::{Consumed, Produced};
use streams_core::serde::{BytesSerde, I64Serde, Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::{TestRecord, TopologyTestDriver};

use super::{Recorder, Scenario, ScenarioResult, config, input, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(dlq_deserialization_continue),
    scenario!(dlq_deserialization_fail_error),
    scenario!(dlq_processing_continue),
    scenario!(dlq_processing_fail_error),
    scenario!(dlq_production_fail_error),
];

const DLQ: &str = "dlq";

fn dlq_config() -> StreamsConfig {
    config().with_property(
        StreamsConfig::ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG,
        DLQ,
    )
}

/// `in` (String, Long) to `out`, and its input topic of raw values.
fn longs(
    g: &mut Recorder,
    config: StreamsConfig,
) -> Result<TopologyTestDriver, streams_core::StreamsError> {
    let b = StreamsBuilder::new();
    b.stream_with::<S, i64>("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    g.start_with(b.build()?, config)
}

/// Java's `mapValues(v -> { if (v.equals("boom")) throw new RuntimeException("boom"); .. })`
/// is a `try_map_values` returning `Err("boom")`: an error of Rust code is
/// reported as `java.lang.RuntimeException`, the class the Java lambda
/// throws.
fn upper(
    g: &mut Recorder,
    config: StreamsConfig,
) -> Result<TopologyTestDriver, streams_core::StreamsError> {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .try_map_values(|v| {
            if v == "boom" {
                Err("boom")
            } else {
                Ok(v.to_uppercase())
            }
        })
        .to("out");
    g.start_with(b.build()?, config)
}

fn dlq_deserialization_continue() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = longs(
        &mut g,
        dlq_config().with_property(
            StreamsConfig::DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
            "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler",
        ),
    )?;
    let i = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        BytesSerde,
        0,
        std::time::Duration::ZERO,
    );
    i.pipe_key_value_at("k1", 7_i64.to_be_bytes().to_vec(), 0);
    i.pipe_record(
        TestRecord::key_value("k2", vec![1, 2, 3])
            .at(5)
            .with_header("h", "v"),
    );
    i.pipe_key_value_at("k3", 9_i64.to_be_bytes().to_vec(), 6);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output_as(&driver, DLQ, StringSerde, BytesSerde);
    g.finish(driver)
}

fn dlq_deserialization_fail_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = longs(&mut g, dlq_config())?;
    let i = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        BytesSerde,
        0,
        std::time::Duration::ZERO,
    );
    i.pipe_key_value_at("k1", 7_i64.to_be_bytes().to_vec(), 0);
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k2", vec![1, 2, 3]).at(1)));
    i.pipe_key_value_at("k3", 9_i64.to_be_bytes().to_vec(), 2);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.output_as(&driver, DLQ, StringSerde, BytesSerde);
    g.finish(driver)
}

/// `try_map_values` returning `Err` for the throwing lambda.
fn dlq_processing_continue() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = upper(
        &mut g,
        dlq_config().with_property(
            StreamsConfig::PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
            "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler",
        ),
    )?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_record(
        TestRecord::key_value("k2", "boom")
            .at(5)
            .with_header("h", "v"),
    );
    i.pipe_key_value_at("k3", "c", 6);
    g.output(&driver, "out");
    g.output(&driver, DLQ);
    g.finish(driver)
}

/// `try_map_values` returning `Err` for the throwing lambda.
fn dlq_processing_fail_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let driver = upper(
        &mut g,
        dlq_config().with_property(
            StreamsConfig::PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
            "org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler",
        ),
    )?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    g.expect_error(i.try_pipe_record(TestRecord::key_value("k2", "boom").at(1)));
    i.pipe_key_value_at("k3", "c", 2);
    g.output(&driver, "out");
    g.output(&driver, DLQ);
    g.finish(driver)
}

/// Java's `picky()` serde: a String serde whose serializer fails on "bad"
/// (Kafka's `SerializationException("cannot write bad")`).
#[derive(Debug, Clone, Copy)]
struct Picky;

impl Serde<String> for Picky {
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

/// The sink's serializer fails on "bad" under the default production
/// handler: the DLQ record, then the error.
fn dlq_production_fail_error() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .to_with("out", Produced::with(StringSerde, Picky));
    let driver = g.start_with(b.build()?, dlq_config())?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    g.expect_error(
        i.try_pipe_record(
            TestRecord::key_value("k2", "bad")
                .at(5)
                .with_header("h", "v"),
        ),
    );
    i.pipe_key_value_at("k3", "c", 6);
    g.output(&driver, "out");
    g.output(&driver, DLQ);
    g.finish(driver)
}
