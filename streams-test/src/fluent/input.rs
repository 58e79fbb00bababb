//! [`TestInput`]: adds records to an input topic, in chains.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use streams_core::serde::{Serde, SerdeRef};
use streams_core::{Headers, RawRecord, RecordPart, Result, StreamsError};

use super::report::fail;
use super::test_topology::Harness;
use crate::TestRecord;

/// A fluent handle to add records to one input topic, bakdata's
/// `TestInput`.
///
/// Every `add_*` pipes the record at once and processes it (and all it
/// causes) before returning, then returns the handle, so adds chain.
/// [`at`](TestInput::at) and [`with_header`](TestInput::with_header) are
/// sticky: they apply to every record added after them through this
/// handle. A record added before any `at` gets the driver's wall-clock
/// time (the initial wall-clock time until the clock is advanced).
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("in").to("out");
/// })?;
/// topology
///     .input()
///     .add("a", "1")
///     .at(100)
///     .with_header("trace", "t-1")
///     .add("b", "2")
///     .add_value("3")
///     .add_tombstone("a");
/// topology
///     .output()
///     .expect_next_record().has_key("a").has_timestamp(0)
///     .and().expect_next_record().has_key("b").has_timestamp(100).has_header("trace", "t-1")
///     .and().expect_next_record().has_null_key().has_value("3").has_timestamp(100)
///     .and().expect_next_record().has_key("a").is_tombstone()
///     .and().expect_no_more_records();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TestInput<'t, K, V> {
    harness: &'t Harness,
    topic: String,
    key_serde: SerdeRef<K>,
    value_serde: SerdeRef<V>,
    timestamp: Cell<Option<i64>>,
    headers: RefCell<Headers>,
}

impl<K, V> std::fmt::Debug for TestInput<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestInput")
            .field("topic", &self.topic)
            .field("timestamp", &self.timestamp.get())
            .field("headers", &self.headers.borrow())
            .finish()
    }
}

impl<'t, K: 'static, V: 'static> TestInput<'t, K, V> {
    pub(crate) fn new(
        harness: &'t Harness,
        topic: &str,
        key_serde: SerdeRef<K>,
        value_serde: SerdeRef<V>,
    ) -> Self {
        TestInput {
            harness,
            topic: topic.to_owned(),
            key_serde,
            value_serde,
            timestamp: Cell::new(None),
            headers: RefCell::new(Headers::new()),
        }
    }

    /// The topic's name.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The same topic with other serdes (and types); the sticky timestamp
    /// and headers carry over.
    pub fn with_serdes<K2: 'static, V2: 'static>(
        self,
        key_serde: impl Serde<K2>,
        value_serde: impl Serde<V2>,
    ) -> TestInput<'t, K2, V2> {
        TestInput {
            harness: self.harness,
            topic: self.topic,
            key_serde: Arc::new(key_serde),
            value_serde: Arc::new(value_serde),
            timestamp: self.timestamp,
            headers: self.headers,
        }
    }

    /// The same topic with another key serde (and type).
    pub fn with_key_serde<K2: 'static>(self, key_serde: impl Serde<K2>) -> TestInput<'t, K2, V> {
        let value_serde = self.value_serde.clone();
        self.with_serdes(key_serde, value_serde)
    }

    /// The same topic with another value serde (and type).
    pub fn with_value_serde<V2: 'static>(
        self,
        value_serde: impl Serde<V2>,
    ) -> TestInput<'t, K, V2> {
        let key_serde = self.key_serde.clone();
        self.with_serdes(key_serde, value_serde)
    }

    /// Records added from now on get this timestamp (epoch millis).
    pub fn at(&self, timestamp: i64) -> &Self {
        self.timestamp.set(Some(timestamp));
        self
    }

    /// Records added from now on carry this header too (after any added
    /// before).
    pub fn with_header(&self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> &Self {
        self.headers.borrow_mut().add(key, value);
        self
    }

    /// Records added from now on carry no header.
    pub fn without_headers(&self) -> &Self {
        *self.headers.borrow_mut() = Headers::new();
        self
    }

    fn serialize(&self, record: &TestRecord<K, V>, timestamp: i64) -> Result<RawRecord> {
        let err = |part, reason| StreamsError::Serialization {
            topic: self.topic.clone(),
            node: None,
            part,
            reason,
        };
        let mut headers = record.headers.clone();
        let key = match &record.key {
            Some(k) => Some(
                self.key_serde
                    .serialize_with_headers(&self.topic, &mut headers, k)
                    .map_err(|e| err(RecordPart::Key, e))?,
            ),
            None => None,
        };
        let value = match &record.value {
            Some(v) => Some(
                self.value_serde
                    .serialize_with_headers(&self.topic, &mut headers, v)
                    .map_err(|e| err(RecordPart::Value, e))?,
            ),
            None => None,
        };
        Ok(RawRecord::new(key, value, timestamp).with_headers(headers))
    }

    /// Pipes a record and processes it. Its own timestamp wins over the
    /// sticky one; the sticky headers come after its own.
    ///
    /// # Errors
    /// The driver cannot start, the topology does not read the topic
    /// (the error lists the topics it reads), the timestamp is negative,
    /// a serde failed, or processing failed.
    pub fn try_add_record(&self, mut record: TestRecord<K, V>) -> Result<()> {
        let driver = self.harness.try_driver()?;
        let timestamp = record
            .timestamp
            .or(self.timestamp.get())
            .unwrap_or_else(|| driver.wall_clock_time());
        for h in self.headers.borrow().iter() {
            record.headers.push(h.clone());
        }
        let raw = self.serialize(&record, timestamp)?;
        driver.pipe_raw(&self.topic, raw)
    }

    /// Pipes a record (see [`try_add_record`](TestInput::try_add_record)).
    ///
    /// # Panics
    /// As the errors of [`try_add_record`](TestInput::try_add_record).
    #[track_caller]
    pub fn add_record(&self, record: TestRecord<K, V>) -> &Self {
        if let Err(e) = self.try_add_record(record) {
            fail(format!(
                "adding a record to topic `{}` failed: {e}",
                self.topic
            ));
        }
        self
    }

    /// Pipes a key and a value.
    ///
    /// # Panics
    /// As [`add_record`](TestInput::add_record).
    #[track_caller]
    pub fn add(&self, key: impl Into<K>, value: impl Into<V>) -> &Self {
        self.add_record(TestRecord::new(Some(key.into()), Some(value.into())))
    }

    /// Pipes a value with a null key.
    ///
    /// # Panics
    /// As [`add_record`](TestInput::add_record).
    #[track_caller]
    pub fn add_value(&self, value: impl Into<V>) -> &Self {
        self.add_record(TestRecord::new(None, Some(value.into())))
    }

    /// Pipes a tombstone: a key and a null value.
    ///
    /// # Panics
    /// As [`add_record`](TestInput::add_record).
    #[track_caller]
    pub fn add_tombstone(&self, key: impl Into<K>) -> &Self {
        self.add_record(TestRecord::new(Some(key.into()), None))
    }

    /// Pipes key-value pairs, in order.
    ///
    /// # Panics
    /// As [`add_record`](TestInput::add_record); the pairs before the
    /// failing one are processed.
    #[track_caller]
    pub fn add_all<A: Into<K>, B: Into<V>>(
        &self,
        pairs: impl IntoIterator<Item = (A, B)>,
    ) -> &Self {
        for (k, v) in pairs {
            self.add(k, v);
        }
        self
    }
}
