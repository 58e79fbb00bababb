//! `TestInputTopic`: pipes typed records into a topic of the driver.

use std::cell::Cell;
use std::time::Duration;

use streams_core::serde::SerdeRef;
use streams_core::{RawRecord, RecordPart, Result, StreamsError};

use crate::{TestRecord, TopologyTestDriver};

/// A typed handle to pipe records into one topic, Kafka's `TestInputTopic`.
///
/// The topic has its own clock: a record piped without a timestamp gets
/// the clock's time, and the clock then moves by the topic's auto-advance
/// step. Records piped with a timestamp, and the `_timed` list forms,
/// leave the clock alone. [`advance_time`](TestInputTopic::advance_time)
/// moves only this clock, never stream time or the wall clock.
///
/// Each `pipe_*` method panics (pointing at the caller) if the record
/// cannot be piped or processing fails; [`try_pipe_record`](TestInputTopic::try_pipe_record)
/// returns the error instead.
///
/// ```
/// use std::time::Duration;
/// use streams_core::serde::StringSerde;
/// use streams_core::StreamsBuilder;
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").to("out");
/// let driver = TopologyTestDriver::new(builder.build()?)?;
/// let input = driver.create_input_topic_with_time("in", StringSerde, StringSerde, 1_000, Duration::from_millis(10));
/// let output = driver.create_output_topic("out", StringSerde, StringSerde);
/// input.pipe_value("a");
/// input.pipe_value("b");
/// input.pipe_value_at("c", 5);
/// let times: Vec<_> = output.read_records_to_list().into_iter().map(|r| r.timestamp).collect();
/// assert_eq!(times, [Some(1_000), Some(1_010), Some(5)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TestInputTopic<'d, K, V> {
    driver: &'d TopologyTestDriver,
    topic: String,
    key_serde: SerdeRef<K>,
    value_serde: SerdeRef<V>,
    current_time: Cell<i64>,
    advance: i64,
    /// The index of the topic's input queue in the driver, once known.
    queue: Cell<Option<usize>>,
}

impl<K, V> std::fmt::Debug for TestInputTopic<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestInputTopic")
            .field("topic", &self.topic)
            .field("current_time", &self.current_time.get())
            .field("auto_advance_ms", &self.advance)
            .finish()
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl<'d, K: 'static, V: 'static> TestInputTopic<'d, K, V> {
    pub(crate) fn new(
        driver: &'d TopologyTestDriver,
        topic: &str,
        key_serde: SerdeRef<K>,
        value_serde: SerdeRef<V>,
        start_ms: i64,
        advance: Duration,
    ) -> Self {
        TestInputTopic {
            driver,
            topic: topic.to_owned(),
            key_serde,
            value_serde,
            current_time: Cell::new(start_ms),
            advance: millis(advance),
            queue: Cell::new(None),
        }
    }

    /// The topic's name.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The time the next record piped without a timestamp gets.
    pub fn current_time(&self) -> i64 {
        self.current_time.get()
    }

    /// Moves this topic's clock forward.
    #[doc(alias = "advanceTime")]
    pub fn advance_time(&self, advance: Duration) {
        self.current_time
            .set(self.current_time.get().saturating_add(millis(advance)));
    }

    fn next_time(&self) -> i64 {
        let t = self.current_time.get();
        self.current_time.set(t.saturating_add(self.advance));
        t
    }

    /// Serializes a record the caller hands over: serdes may reuse its
    /// key's and value's buffers.
    fn serialize(&self, record: TestRecord<K, V>, timestamp: i64) -> Result<RawRecord> {
        let ser_err = |part, reason| StreamsError::Serialization {
            topic: self.topic.clone(),
            node: None,
            part,
            reason,
        };
        // Serdes see (and may add to) the record's headers, as Kafka's
        // `serialize(topic, headers, data)`.
        let mut headers = record.headers;
        let key = match record.key {
            Some(k) => Some(
                self.key_serde
                    .serialize_owned_with_headers(&self.topic, &mut headers, k)
                    .map_err(|e| ser_err(RecordPart::Key, e))?,
            ),
            None => None,
        };
        let value = match record.value {
            Some(v) => Some(
                self.value_serde
                    .serialize_owned_with_headers(&self.topic, &mut headers, v)
                    .map_err(|e| ser_err(RecordPart::Value, e))?,
            ),
            None => None,
        };
        Ok(RawRecord {
            key,
            value,
            timestamp,
            headers,
        })
    }

    /// Pipes a record and processes it, returning any error. A record
    /// without a timestamp gets the topic's clock, which then advances.
    ///
    /// # Errors
    /// No source reads the topic (the error lists those that do), the
    /// timestamp is negative, a serde failed, or processing failed.
    pub fn try_pipe_record(&self, record: TestRecord<K, V>) -> Result<()> {
        let timestamp = match record.timestamp {
            Some(t) => t,
            None => self.next_time(),
        };
        let raw = self.serialize(record, timestamp)?;
        self.driver.pipe_raw_cached(&self.topic, &self.queue, raw)
    }

    #[track_caller]
    fn pipe(&self, record: TestRecord<K, V>) {
        if let Err(e) = self.try_pipe_record(record) {
            panic!("piping a record into topic `{}` failed: {e}", self.topic);
        }
    }

    /// Pipes a record.
    ///
    /// # Panics
    /// As the errors of [`try_pipe_record`](TestInputTopic::try_pipe_record).
    #[track_caller]
    #[doc(alias = "pipeInput")]
    pub fn pipe_record(&self, record: TestRecord<K, V>) {
        self.pipe(record);
    }

    /// Pipes a value with a null key, at the topic's clock.
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record).
    #[track_caller]
    #[doc(alias = "pipeInput")]
    pub fn pipe_value(&self, value: impl Into<V>) {
        self.pipe(TestRecord::new(None, Some(value.into())));
    }

    /// Pipes a value with a null key at a timestamp (epoch millis).
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record).
    #[track_caller]
    #[doc(alias = "pipeInput")]
    pub fn pipe_value_at(&self, value: impl Into<V>, timestamp: i64) {
        self.pipe(TestRecord::new(None, Some(value.into())).at(timestamp));
    }

    /// Pipes a key and a value, at the topic's clock.
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record).
    #[track_caller]
    #[doc(alias = "pipeInput")]
    pub fn pipe_key_value(&self, key: impl Into<K>, value: impl Into<V>) {
        self.pipe(TestRecord::new(Some(key.into()), Some(value.into())));
    }

    /// Pipes a key and a value at a timestamp (epoch millis).
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record).
    #[track_caller]
    #[doc(alias = "pipeInput")]
    pub fn pipe_key_value_at(&self, key: impl Into<K>, value: impl Into<V>, timestamp: i64) {
        self.pipe(TestRecord::new(Some(key.into()), Some(value.into())).at(timestamp));
    }

    /// Pipes a tombstone (a key with no value), at the topic's clock.
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record).
    #[track_caller]
    pub fn pipe_tombstone(&self, key: impl Into<K>) {
        self.pipe(TestRecord::new(Some(key.into()), None));
    }

    /// Pipes records in order.
    ///
    /// # Panics
    /// As [`pipe_record`](TestInputTopic::pipe_record); records before the
    /// failing one are processed.
    #[track_caller]
    #[doc(alias = "pipeRecordList")]
    pub fn pipe_records(&self, records: impl IntoIterator<Item = TestRecord<K, V>>) {
        for r in records {
            self.pipe(r);
        }
    }

    /// Pipes values with null keys, each at the topic's clock.
    ///
    /// # Panics
    /// As [`pipe_records`](TestInputTopic::pipe_records).
    #[track_caller]
    #[doc(alias = "pipeValueList")]
    pub fn pipe_values<T: Into<V>>(&self, values: impl IntoIterator<Item = T>) {
        for v in values {
            self.pipe(TestRecord::new(None, Some(v.into())));
        }
    }

    /// Pipes key-value pairs, each at the topic's clock.
    ///
    /// # Panics
    /// As [`pipe_records`](TestInputTopic::pipe_records).
    #[track_caller]
    #[doc(alias = "pipeKeyValueList")]
    pub fn pipe_key_values<A: Into<K>, B: Into<V>>(&self, pairs: impl IntoIterator<Item = (A, B)>) {
        for (k, v) in pairs {
            self.pipe(TestRecord::new(Some(k.into()), Some(v.into())));
        }
    }

    /// Pipes values with null keys at `start`, `start + advance`, ...,
    /// leaving the topic's clock alone.
    ///
    /// # Panics
    /// As [`pipe_records`](TestInputTopic::pipe_records).
    #[track_caller]
    #[doc(alias = "pipeValueList")]
    pub fn pipe_values_timed<T: Into<V>>(
        &self,
        values: impl IntoIterator<Item = T>,
        start: i64,
        advance: Duration,
    ) {
        let step = millis(advance);
        for (i, v) in values.into_iter().enumerate() {
            let ts = start.saturating_add(step.saturating_mul(i as i64));
            self.pipe(TestRecord::new(None, Some(v.into())).at(ts));
        }
    }

    /// Pipes key-value pairs at `start`, `start + advance`, ..., leaving
    /// the topic's clock alone.
    ///
    /// # Panics
    /// As [`pipe_records`](TestInputTopic::pipe_records).
    #[track_caller]
    #[doc(alias = "pipeKeyValueList")]
    pub fn pipe_key_values_timed<A: Into<K>, B: Into<V>>(
        &self,
        pairs: impl IntoIterator<Item = (A, B)>,
        start: i64,
        advance: Duration,
    ) {
        let step = millis(advance);
        for (i, (k, v)) in pairs.into_iter().enumerate() {
            let ts = start.saturating_add(step.saturating_mul(i as i64));
            self.pipe(TestRecord::new(Some(k.into()), Some(v.into())).at(ts));
        }
    }

    /// As [`pipe_value`](TestInputTopic::pipe_value), returning the error.
    ///
    /// # Errors
    /// As [`try_pipe_record`](TestInputTopic::try_pipe_record).
    pub fn try_pipe_value(&self, value: impl Into<V>) -> Result<()> {
        self.try_pipe_record(TestRecord::new(None, Some(value.into())))
    }

    /// As [`pipe_key_value`](TestInputTopic::pipe_key_value), returning the error.
    ///
    /// # Errors
    /// As [`try_pipe_record`](TestInputTopic::try_pipe_record).
    pub fn try_pipe_key_value(&self, key: impl Into<K>, value: impl Into<V>) -> Result<()> {
        self.try_pipe_record(TestRecord::new(Some(key.into()), Some(value.into())))
    }

    /// As [`pipe_key_value_at`](TestInputTopic::pipe_key_value_at),
    /// returning the error.
    ///
    /// # Errors
    /// As [`try_pipe_record`](TestInputTopic::try_pipe_record).
    pub fn try_pipe_key_value_at(
        &self,
        key: impl Into<K>,
        value: impl Into<V>,
        timestamp: i64,
    ) -> Result<()> {
        self.try_pipe_record(TestRecord::new(Some(key.into()), Some(value.into())).at(timestamp))
    }

    /// As [`pipe_tombstone`](TestInputTopic::pipe_tombstone), returning the error.
    ///
    /// # Errors
    /// As [`try_pipe_record`](TestInputTopic::try_pipe_record).
    pub fn try_pipe_tombstone(&self, key: impl Into<K>) -> Result<()> {
        self.try_pipe_record(TestRecord::new(Some(key.into()), None))
    }

    /// As [`pipe_records`](TestInputTopic::pipe_records), stopping at the
    /// first error: the records before it are processed, the rest not.
    ///
    /// ```
    /// use streams_core::StreamsError;
    /// use streams_test::{TestRecord, example};
    ///
    /// let driver = example(|builder| builder.stream::<String, String>("in").to("out"));
    /// let input = driver.input::<String, String>("in");
    /// let result = input.try_pipe_records([
    ///     TestRecord::key_value("a", "1").at(1),
    ///     TestRecord::key_value("b", "2").at(-5), // a negative timestamp
    ///     TestRecord::key_value("c", "3").at(3),
    /// ]);
    /// assert!(matches!(result, Err(StreamsError::NegativeTimestamp { timestamp: -5, .. })));
    /// assert_eq!(driver.output::<String, String>("out").read_values_to_list(), [Some("1".to_owned())]);
    /// ```
    ///
    /// # Errors
    /// As [`try_pipe_record`](TestInputTopic::try_pipe_record).
    pub fn try_pipe_records(
        &self,
        records: impl IntoIterator<Item = TestRecord<K, V>>,
    ) -> Result<()> {
        records
            .into_iter()
            .try_for_each(|r| self.try_pipe_record(r))
    }
}
