//! A sink connector whose transform fails on one record, with
//! `errors.tolerance=all` and a dead letter queue (KIP-298): Kafka
//! Connect's error handling on the simulated cluster.
//!
//! Orders arrive as JSON; a `Cast` transform makes `qty` an `INT32`, an
//! `InsertField` stamps where each record came from. One order says
//! `"qty":"three"`: the cast fails, the worker skips the record, and the
//! dead letter queue receives it exactly as consumed, with the
//! `__connect.errors.*` headers saying which stage, which class and why.
//!
//! ```
//! use streams_examples::connect_dead_letter_queue;
//!
//! let outcome = connect_dead_letter_queue::run()?;
//! assert_eq!(outcome.delivered.len(), 2);
//! assert_eq!(outcome.dead_letters.len(), 1);
//! let errors = outcome.dead_letters[0].errors.as_ref().expect("context headers");
//! assert_eq!((errors.stage.as_str(), errors.offset), ("TRANSFORMATION", 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use streams_connect::SinkRecord;
use streams_connect::json::JsonConverter;
use streams_connect::transforms::{Cast, InsertField, TransformStage};
use streams_core::serde::StringSerde;
use streams_test::connect::{ConnectTestError, DeadLetterRecord, RecordingSink, SinkTestDriver};

/// The topic the connector reads.
pub const TOPIC: &str = "orders";
/// The dead letter queue.
pub const DLQ: &str = "orders-dlq";
/// The orders, as JSON; the second cannot be cast.
pub const ORDERS: [(&str, &str); 3] = [
    ("o-1", r#"{"id":"o-1","qty":"2"}"#),
    ("o-2", r#"{"id":"o-2","qty":"three"}"#),
    ("o-3", r#"{"id":"o-3","qty":"5"}"#),
];

/// What the connector did.
#[derive(Debug)]
pub struct Outcome {
    /// The records the sink task received.
    pub delivered: Vec<SinkRecord>,
    /// The DLQ's records.
    pub dead_letters: Vec<DeadLetterRecord>,
    /// Connect's task error metrics, by name.
    pub metrics: Vec<(&'static str, f64)>,
    /// The error log's lines.
    pub logged: Vec<String>,
}

/// The connector's configuration, by Kafka's names.
pub fn config() -> [(&'static str, &'static str); 8] {
    [
        ("name", "orders-sink"),
        ("topics", TOPIC),
        ("errors.tolerance", "all"),
        ("errors.log.enable", "true"),
        ("errors.deadletterqueue.topic.name", DLQ),
        // The simulated cluster has one broker; Kafka's default is 3.
        ("errors.deadletterqueue.topic.replication.factor", "1"),
        ("errors.deadletterqueue.context.headers.enable", "true"),
        ("offset.flush.interval.ms", "60000"),
    ]
}

/// Runs the connector over [`ORDERS`].
///
/// # Errors
/// A transform's configuration, or the harness's.
pub fn run() -> Result<Outcome, ConnectTestError> {
    let cast = Cast::value("qty:int32")?;
    let stamp = InsertField::value()
        .topic_field("source_topic")
        .offset_field("source_offset");
    stamp.validate()?;
    let mut driver = SinkTestDriver::builder(config())
        .value_converter(JsonConverter::schemaless())
        .transform(TransformStage::new(cast))
        .transform(TransformStage::new(stamp))
        .build(RecordingSink::new())?;
    let orders = driver.input_topic(TOPIC, StringSerde, StringSerde);
    for (key, value) in ORDERS {
        orders.pipe_key_value(key, value)?;
    }
    driver.run()?;
    driver.stop()?;
    let metrics = [
        "total-record-failures",
        "total-records-skipped",
        "total-retries",
        "deadletterqueue-produce-requests",
        "total-errors-logged",
    ]
    .map(|name| (name, driver.metric(name)))
    .to_vec();
    Ok(Outcome {
        delivered: driver.sink().records().to_vec(),
        dead_letters: driver.dead_letter_queue()?,
        metrics,
        logged: driver.worker().logged_errors().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use streams_connect::data::Value;

    use super::*;

    #[test]
    fn the_bad_order_is_in_the_dlq_with_its_headers_and_the_rest_delivered()
    -> Result<(), Box<dyn std::error::Error>> {
        let outcome = run()?;
        let ids: Vec<Option<&Value>> = outcome
            .delivered
            .iter()
            .map(|r| r.value.get("id"))
            .collect();
        assert_eq!(
            ids,
            [Some(&Value::string("o-1")), Some(&Value::string("o-3"))]
        );
        assert_eq!(
            outcome.delivered[1].value.get("qty"),
            Some(&Value::Int32(5))
        );
        assert_eq!(
            outcome.delivered[1].value.get("source_offset"),
            Some(&Value::Int64(2))
        );

        let [dead] = outcome.dead_letters.as_slice() else {
            panic!("expected one dead letter, got {:?}", outcome.dead_letters);
        };
        assert_eq!(dead.key.as_deref(), Some(&b"o-2"[..]));
        assert_eq!(dead.value.as_deref(), Some(ORDERS[1].1.as_bytes()));
        let message = "Value (three) was out of range for requested data type";
        let headers: Vec<(&str, &str)> = dead
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str(),
                    std::str::from_utf8(v.as_deref().unwrap_or_default()).unwrap_or("?"),
                )
            })
            .collect();
        // Java's trace without its frames: the error, then its cause, as Kafka 4.4.0 writes
        // them (compat/connect/golden/transformation_cast_field_not_a_number.json).
        let stacktrace = format!(
            "org.apache.kafka.connect.errors.DataException: {message}\nCaused by: java.lang.NumberFormatException: For input string: \"three\"\n"
        );
        assert_eq!(
            headers,
            [
                ("__connect.errors.topic", "orders"),
                ("__connect.errors.partition", "0"),
                ("__connect.errors.offset", "1"),
                ("__connect.errors.connector.name", "orders-sink"),
                ("__connect.errors.task.id", "0"),
                ("__connect.errors.stage", "TRANSFORMATION"),
                (
                    "__connect.errors.class.name",
                    "org.apache.kafka.connect.transforms.Cast$Value"
                ),
                (
                    "__connect.errors.exception.class.name",
                    "org.apache.kafka.connect.errors.DataException"
                ),
                ("__connect.errors.exception.message", message),
                ("__connect.errors.exception.stacktrace", stacktrace.as_str()),
            ]
        );
        assert_eq!(
            outcome.metrics,
            [
                ("total-record-failures", 1.0),
                ("total-records-skipped", 1.0),
                ("total-retries", 0.0),
                ("deadletterqueue-produce-requests", 1.0),
                ("total-errors-logged", 1.0),
            ]
        );
        assert_eq!(
            outcome.logged,
            [
                "Error encountered in task orders-sink-0. Executing stage 'TRANSFORMATION' with class 'org.apache.kafka.connect.transforms.Cast$Value'."
            ]
        );
        Ok(())
    }
}
