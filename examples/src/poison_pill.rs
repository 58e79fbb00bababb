//! Poison pills: a malformed JSON record and an Avro record with an
//! unknown schema id among good ones, run three ways in the test driver.
//!
//! Orders arrive on two topics, as JSON on `orders-json` and as Confluent
//! Avro on `orders-avro`; the topology merges them and writes one line per
//! order to `order-lines`. Two records cannot be read: `{"id": 2, "qty":`
//! is cut short, and an Avro record names schema id 99, which the registry
//! does not know.
//!
//! - [`Mode::Fail`], Kafka's default (`LogAndFailExceptionHandler`): the
//!   first bad record stops processing with an error naming its topic,
//!   partition and offset.
//! - [`Mode::Continue`] (`LogAndContinueExceptionHandler`): both are
//!   skipped and counted in `dropped-records-total`.
//! - [`Mode::DeadLetterQueue`]: as continue, with
//!   `errors.dead.letter.queue.topic.name` set: both land in the DLQ,
//!   bytes unchanged, with the `__streams.errors.*` headers.
//!
//! ```
//! use streams_examples::poison_pill::{self, Mode};
//!
//! let failed = poison_pill::run(Mode::Fail)?;
//! assert_eq!(failed.lines, ["order 1: 3 x tea"]);
//! assert!(failed.error.as_deref().is_some_and(|e| e.contains("orders-json-0 offset 1")));
//!
//! let skipped = poison_pill::run(Mode::Continue)?;
//! assert_eq!(skipped.lines.len(), 4);
//! assert_eq!(skipped.dropped, 2);
//!
//! let dlq = poison_pill::run(Mode::DeadLetterQueue)?;
//! assert_eq!(dlq.dead_letters.len(), 2);
//! assert_eq!(
//!     dlq.dead_letters[1].headers.last("__streams.errors.message"),
//!     Some(&b"schema id 99 is not registered in the schema registry"[..])
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use streams_core::config::LogAndContinueExceptionHandler;
use streams_core::dsl::Consumed;
use streams_core::serde::{
    BytesSerde, ConfluentAvroSerde, JsonSerde, MockSchemaRegistry, Serde, StringSerde,
};
use streams_core::{Result, StreamsBuilder, StreamsConfig, Topology};
use streams_test::{TestRecord, TopologyTestDriver};

/// The JSON topic.
pub const JSON_TOPIC: &str = "orders-json";
/// The Avro topic.
pub const AVRO_TOPIC: &str = "orders-avro";
/// The output topic.
pub const OUTPUT: &str = "order-lines";
/// The dead letter queue of [`Mode::DeadLetterQueue`].
pub const DLQ: &str = "orders-dlq";

/// The Avro schema of an [`Order`].
pub const ORDER_SCHEMA: &str = r#"{"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"},
    {"name": "item", "type": "string"},
    {"name": "qty", "type": "int"}
]}"#;

/// An order, on either topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: i64,
    /// What was ordered.
    pub item: String,
    /// How many.
    pub qty: i32,
}

/// How the driver treats records it cannot deserialize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Kafka's default: fail on the first one.
    Fail,
    /// Skip them, counted.
    Continue,
    /// Skip them, counted, and send them to [`DLQ`].
    DeadLetterQueue,
}

impl Mode {
    /// The config of this mode, by Kafka's property names.
    pub fn config(self) -> StreamsConfig {
        let config = StreamsConfig::new("poison-pill");
        match self {
            Mode::Fail => config,
            Mode::Continue => config.with_property(
                StreamsConfig::DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndContinueExceptionHandler::JAVA_CLASS,
            ),
            Mode::DeadLetterQueue => config
                .with_deserialization_exception_handler(LogAndContinueExceptionHandler)
                .with_dead_letter_queue_topic(DLQ),
        }
    }
}

/// The topology: both topics merged, one line per order.
///
/// # Errors
/// The topology is invalid (it is not).
pub fn topology(registry: &MockSchemaRegistry) -> Result<Topology> {
    let builder = StreamsBuilder::new();
    let json = builder.stream_with::<String, Order>(
        JSON_TOPIC,
        Consumed::with(StringSerde, JsonSerde::<Order>::new()),
    );
    let avro = builder.stream_with::<String, Order>(
        AVRO_TOPIC,
        Consumed::with(StringSerde, avro_serde(registry)?),
    );
    json.merge(&avro)
        .map_values(|o| format!("order {}: {} x {}", o.id, o.qty, o.item))
        .to(OUTPUT);
    builder.build()
}

fn avro_serde(registry: &MockSchemaRegistry) -> Result<ConfluentAvroSerde<Order>> {
    ConfluentAvroSerde::value_json(registry, ORDER_SCHEMA).map_err(|reason| {
        streams_core::StreamsError::Serialization {
            topic: AVRO_TOPIC.to_owned(),
            node: None,
            part: streams_core::RecordPart::Value,
            reason,
        }
    })
}

/// The input, in the order it is piped: (topic, key, value bytes).
///
/// # Errors
/// An order cannot be written as Avro (it can).
pub fn input(registry: &MockSchemaRegistry) -> Result<Vec<(&'static str, &'static str, Vec<u8>)>> {
    let avro = avro_serde(registry)?;
    let avro_bytes = |o: &Order| {
        avro.serialize(AVRO_TOPIC, o)
            .map_err(|reason| streams_core::StreamsError::Serialization {
                topic: AVRO_TOPIC.to_owned(),
                node: None,
                part: streams_core::RecordPart::Value,
                reason,
            })
    };
    let order = |id, item: &str, qty| Order {
        id,
        item: item.to_owned(),
        qty,
    };
    // Schema id 99 (magic byte 0, then the id), then a datum.
    let mut unknown_schema = vec![0, 0, 0, 0, 99];
    unknown_schema.extend_from_slice(&avro_bytes(&order(5, "jam", 1))?[5..]);
    Ok(vec![
        (
            JSON_TOPIC,
            "o-1",
            br#"{"id":1,"item":"tea","qty":3}"#.to_vec(),
        ),
        (JSON_TOPIC, "o-2", br#"{"id": 2, "qty":"#.to_vec()),
        (
            JSON_TOPIC,
            "o-3",
            br#"{"id":3,"item":"rye","qty":1}"#.to_vec(),
        ),
        (AVRO_TOPIC, "o-4", avro_bytes(&order(4, "oat", 2))?),
        (AVRO_TOPIC, "o-5", unknown_schema),
        (AVRO_TOPIC, "o-6", avro_bytes(&order(6, "fig", 4))?),
    ])
}

/// What one run did.
#[derive(Debug)]
pub struct Outcome {
    /// The lines written to [`OUTPUT`].
    pub lines: Vec<String>,
    /// The error that stopped the run ([`Mode::Fail`]), as text.
    pub error: Option<String>,
    /// The task's `dropped-records-total`.
    pub dropped: u64,
    /// The DLQ's records ([`Mode::DeadLetterQueue`]).
    pub dead_letters: Vec<TestRecord<Vec<u8>, Vec<u8>>>,
}

/// Pipes the input in `mode`; in [`Mode::Fail`] the run stops at the
/// first error.
///
/// # Errors
/// The driver cannot start.
pub fn run(mode: Mode) -> Result<Outcome> {
    let registry = MockSchemaRegistry::new();
    let driver = TopologyTestDriver::with_config(topology(&registry)?, mode.config())?;
    let mut error = None;
    for (topic, key, value) in input(&registry)? {
        let pipe = driver.create_input_topic(topic, StringSerde, BytesSerde);
        if let Err(e) = pipe.try_pipe_record(TestRecord::key_value(key, value).at(0)) {
            error = Some(e.to_string());
            break;
        }
    }
    let lines = driver
        .create_output_topic(OUTPUT, StringSerde, StringSerde)
        .read_values_to_list()
        .into_iter()
        .flatten()
        .collect();
    let dead_letters = match mode {
        Mode::DeadLetterQueue => driver
            .create_output_topic(DLQ, BytesSerde, BytesSerde)
            .read_records_to_list(),
        _ => Vec::new(),
    };
    let dropped = driver.metrics().dropped_records;
    driver.close()?;
    Ok(Outcome {
        lines,
        error,
        dropped,
        dead_letters,
    })
}
