//! [`TestOutput`] and [`RecordAssert`]: assertions over the records of an
//! output topic, read in order.

use std::fmt::Debug;
use std::sync::Arc;

use streams_core::serde::{Serde, SerdeRef};
use streams_core::{RecordPart, Result, StreamsError};

use super::Snapshot;
use super::TableAssert;
use super::report::{
    Decoded, Nullable, decoded_line, diff, expected_actual, fail, header_value, headers, listing,
    listing_lines, record_line,
};
use super::test_topology::Harness;
use crate::driver::{OutputQueue, OutputRecord};
use crate::{KeyValue, TestRecord};

/// What [`TestOutput::expect_records`] takes as one expected record: a
/// [`KeyValue`] (for null keys and tombstones) or a `(key, value)` pair
/// of anything that converts into the topic's key and value types.
pub trait IntoKeyValue<K, V> {
    /// The expected key and value.
    fn into_key_value(self) -> KeyValue<K, V>;
}

impl<K, V> IntoKeyValue<K, V> for KeyValue<K, V> {
    fn into_key_value(self) -> KeyValue<K, V> {
        self
    }
}

impl<K, V, A: Into<K>, B: Into<V>> IntoKeyValue<K, V> for (A, B) {
    fn into_key_value(self) -> KeyValue<K, V> {
        KeyValue::pair(self.0, self.1)
    }
}

/// A fluent handle to read one output topic, bakdata's `TestOutput`.
///
/// Records are read in the order they were written, and a record read is
/// gone from the topic (as with [`TestOutputTopic`](crate::TestOutputTopic);
/// every handle on a topic shares what is left).
/// [`expect_next_record`](TestOutput::expect_next_record) reads one and
/// checks it with [`RecordAssert`]; the list forms check several at once.
/// Failures name the topic and offset, show expected against actual, and
/// list the records left; they point at the line of the test.
///
/// Cloning is cheap: a clone reads the same topic.
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::{KeyValue, TestTopology};
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("in").filter(|_, v| v != "skip").to("out");
/// })?;
/// topology.input().add("a", "1").add("b", "skip").add("c", "3").add_tombstone("d");
/// let output = topology.output();
/// output.has_size(3);
/// output
///     .expect_records([("a", "1"), ("c", "3")])
///     .expect_records([KeyValue::tombstone("d")])
///     .expect_no_more_records();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TestOutput<'t, K, V> {
    harness: &'t Harness,
    topic: String,
    key_serde: SerdeRef<K>,
    value_serde: SerdeRef<V>,
}

impl<K, V> Clone for TestOutput<'_, K, V> {
    fn clone(&self) -> Self {
        TestOutput {
            harness: self.harness,
            topic: self.topic.clone(),
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
        }
    }
}

impl<K, V> std::fmt::Debug for TestOutput<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestOutput")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

/// The next record of a topic, as read.
enum Next<K, V> {
    Record(i64, TestRecord<K, V>),
    Empty(i64),
    Undecodable(StreamsError),
}

impl<'t, K: 'static, V: 'static> TestOutput<'t, K, V> {
    pub(crate) fn new(
        harness: &'t Harness,
        topic: &str,
        key_serde: SerdeRef<K>,
        value_serde: SerdeRef<V>,
    ) -> Self {
        TestOutput {
            harness,
            topic: topic.to_owned(),
            key_serde,
            value_serde,
        }
    }

    /// The topic's name.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The same topic read with other serdes (and types).
    pub fn with_serdes<K2: 'static, V2: 'static>(
        self,
        key_serde: impl Serde<K2>,
        value_serde: impl Serde<V2>,
    ) -> TestOutput<'t, K2, V2> {
        TestOutput {
            harness: self.harness,
            topic: self.topic,
            key_serde: Arc::new(key_serde),
            value_serde: Arc::new(value_serde),
        }
    }

    /// The same topic read with another key serde (and type).
    pub fn with_key_serde<K2: 'static>(self, key_serde: impl Serde<K2>) -> TestOutput<'t, K2, V> {
        let value_serde = self.value_serde.clone();
        self.with_serdes(key_serde, value_serde)
    }

    /// The same topic read with another value serde (and type).
    pub fn with_value_serde<V2: 'static>(
        self,
        value_serde: impl Serde<V2>,
    ) -> TestOutput<'t, K, V2> {
        let key_serde = self.key_serde.clone();
        self.with_serdes(key_serde, value_serde)
    }

    pub(crate) fn decode(&self, out: &OutputRecord) -> Result<TestRecord<K, V>> {
        let err = |part, reason| StreamsError::Deserialization {
            topic: self.topic.clone(),
            partition: 0,
            offset: out.offset,
            part,
            reason,
        };
        let key = match &out.record.key {
            Some(b) => Some(
                self.key_serde
                    .deserialize(&self.topic, b)
                    .map_err(|e| err(RecordPart::Key, e))?,
            ),
            None => None,
        };
        let value = match &out.record.value {
            Some(b) => Some(
                self.value_serde
                    .deserialize(&self.topic, b)
                    .map_err(|e| err(RecordPart::Value, e))?,
            ),
            None => None,
        };
        Ok(TestRecord {
            key,
            value,
            timestamp: Some(out.record.timestamp),
            headers: out.record.headers.clone(),
        })
    }

    /// Runs `f` on the topic's queue (`None` if nothing was written yet).
    ///
    /// # Panics
    /// If the topology never writes the topic, naming those it writes.
    #[track_caller]
    fn with_queue<R>(&self, f: impl FnOnce(Option<&mut OutputQueue>) -> R) -> R {
        let driver = self.harness.driver();
        let result = driver.with_state(|s| {
            let written = s.produced_topic_names().contains(&self.topic);
            if !written && !self.harness.writes(&self.topic) {
                let mut topics = self.harness.output_topics();
                for t in s.produced_topic_names() {
                    if !topics.contains(t) && !self.harness.is_internal(t) {
                        topics.push(t.clone());
                    }
                }
                return Ok(Err(topics));
            }
            Ok(Ok(f(s.output_mut(&self.topic))))
        });
        match result {
            Ok(Ok(r)) => r,
            Ok(Err(topics)) => fail(format!(
                "topic `{}` is not written by the topology; it writes to {topics:?}",
                self.topic
            )),
            Err(e) => fail(format!("reading topic `{}` failed: {e}", self.topic)),
        }
    }

    /// Every record left, decoded or not, without reading them.
    #[track_caller]
    pub(crate) fn peek(&self) -> Vec<Decoded<K, V>> {
        self.with_queue(|q| match q {
            Some(q) => q
                .records
                .iter()
                .map(|r| (r.offset, self.decode(r).map_err(|e| e.to_string())))
                .collect(),
            None => Vec::new(),
        })
    }

    /// The offset of the next record to read.
    #[track_caller]
    fn next_offset(&self) -> i64 {
        self.with_queue(|q| match q {
            Some(q) => q.records.front().map_or(q.next_offset(), |r| r.offset),
            None => 0,
        })
    }

    #[track_caller]
    fn take_next(&self) -> Next<K, V> {
        self.with_queue(|q| {
            let Some(q) = q else { return Next::Empty(0) };
            let Some(front) = q.records.front() else {
                return Next::Empty(q.next_offset());
            };
            match self.decode(front) {
                Ok(record) => {
                    let offset = front.offset;
                    q.records.pop_front();
                    Next::Record(offset, record)
                }
                Err(e) => Next::Undecodable(e),
            }
        })
    }

    /// Decodes the first `n` records left (or all, if `n` is `None`) and
    /// reads them only if every one decoded.
    #[track_caller]
    fn take(&self, n: Option<usize>) -> Vec<(i64, TestRecord<K, V>)> {
        let result = self.with_queue(|q| {
            let Some(q) = q else { return Ok(Vec::new()) };
            let n = n.unwrap_or(q.records.len()).min(q.records.len());
            let decoded = q
                .records
                .iter()
                .take(n)
                .map(|r| self.decode(r).map(|d| (r.offset, d)))
                .collect::<Result<Vec<_>>>()?;
            q.records.drain(..n);
            Ok(decoded)
        });
        match result {
            Ok(records) => records,
            Err(e) => self.undecodable(e),
        }
    }

    #[track_caller]
    fn undecodable(&self, e: StreamsError) -> ! {
        fail(format!("reading topic `{}` failed: {e}", self.topic))
    }

    /// How many records are left to read.
    ///
    /// # Panics
    /// If the topology never writes the topic.
    #[track_caller]
    pub fn remaining(&self) -> usize {
        self.with_queue(|q| q.map_or(0, |q| q.records.len()))
    }

    /// Reads the next record, to check it with [`RecordAssert`].
    ///
    /// # Panics
    /// If no record is left (`topic `out` has no more records: expected
    /// one at offset 2`), the record cannot be decoded (the serde's error,
    /// with the topic and offset), or the topology never writes the topic.
    #[track_caller]
    pub fn expect_next_record(&self) -> RecordAssert<'t, K, V>
    where
        K: Debug,
        V: Debug,
    {
        match self.take_next() {
            Next::Record(offset, record) => RecordAssert {
                output: self.clone(),
                offset,
                record,
            },
            Next::Empty(offset) => fail(format!(
                "topic `{}` has no more records: expected one at offset {offset}",
                self.topic
            )),
            Next::Undecodable(e) => self.undecodable(e),
        }
    }

    /// Checks that no record is left.
    ///
    /// # Panics
    /// If records are left (the message lists them), or the topology
    /// never writes the topic.
    #[track_caller]
    pub fn expect_no_more_records(&self) -> &Self
    where
        K: Debug,
        V: Debug,
    {
        let left = self.peek();
        if !left.is_empty() {
            fail(format!(
                "expected no more records in topic `{}`, but {} {} left\n\n{}",
                self.topic,
                left.len(),
                if left.len() == 1 { "is" } else { "are" },
                listing(&self.topic, &left)
            ));
        }
        self
    }

    /// Checks how many records are left, without reading them.
    ///
    /// # Panics
    /// If another number is left (the message lists them), or the
    /// topology never writes the topic.
    #[track_caller]
    pub fn has_size(&self, n: usize) -> &Self
    where
        K: Debug,
        V: Debug,
    {
        let left = self.peek();
        if left.len() != n {
            fail(format!(
                "expected {n} {} left in topic `{}`, but there {} {}\n\n{}",
                if n == 1 { "record" } else { "records" },
                self.topic,
                if left.len() == 1 { "is" } else { "are" },
                left.len(),
                listing(&self.topic, &left)
            ));
        }
        self
    }

    /// Reads the next records and checks their keys and values, in order
    /// (timestamps and headers are not compared). More records may be
    /// left: end with [`expect_no_more_records`](TestOutput::expect_no_more_records)
    /// to say there are none.
    ///
    /// # Panics
    /// If fewer records are left, or one differs (the message has a diff
    /// of the lists), or a record cannot be decoded.
    #[track_caller]
    pub fn expect_records<E: IntoKeyValue<K, V>>(
        &self,
        expected: impl IntoIterator<Item = E>,
    ) -> &Self
    where
        K: PartialEq + Debug,
        V: PartialEq + Debug,
    {
        let expected: Vec<KeyValue<K, V>> =
            expected.into_iter().map(|e| e.into_key_value()).collect();
        let expected: Vec<KeyValue<&K, &V>> = expected
            .iter()
            .map(|e| KeyValue::new(e.key.as_ref(), e.value.as_ref()))
            .collect();
        let left = self.peek();
        let from = self.next_offset();
        let actual = self.decoded_window(&left, expected.len());
        if actual.len() < expected.len() || actual != expected {
            let headline = if actual.len() < expected.len() {
                format!(
                    "expected {} records in topic `{}` from offset {from}, but only {} {} left",
                    expected.len(),
                    self.topic,
                    actual.len(),
                    if actual.len() == 1 { "is" } else { "are" }
                )
            } else {
                format!(
                    "the records of topic `{}` from offset {from} are not the expected ones",
                    self.topic
                )
            };
            fail(format!(
                "{headline}\n{}\n\n{}",
                diff(&lines(&expected), &lines(&actual)),
                listing(&self.topic, &left)
            ));
        }
        self.take(Some(expected.len()));
        self
    }

    /// Reads the next records and checks their keys and values, in any
    /// order: as many records as expected, each matching one expected
    /// record (duplicates count).
    ///
    /// # Panics
    /// If fewer records are left, or they differ (the message lists the
    /// expected records missing and the records not expected), or a
    /// record cannot be decoded.
    #[track_caller]
    pub fn expect_records_in_any_order<E: IntoKeyValue<K, V>>(
        &self,
        expected: impl IntoIterator<Item = E>,
    ) -> &Self
    where
        K: PartialEq + Debug,
        V: PartialEq + Debug,
    {
        let expected: Vec<KeyValue<K, V>> =
            expected.into_iter().map(|e| e.into_key_value()).collect();
        let expected: Vec<KeyValue<&K, &V>> = expected
            .iter()
            .map(|e| KeyValue::new(e.key.as_ref(), e.value.as_ref()))
            .collect();
        let left = self.peek();
        let from = self.next_offset();
        let actual = self.decoded_window(&left, expected.len());
        let mut missing: Vec<&KeyValue<&K, &V>> = Vec::new();
        let mut unexpected: Vec<&KeyValue<&K, &V>> = actual.iter().collect();
        for e in &expected {
            match unexpected.iter().position(|a| *a == e) {
                Some(i) => {
                    unexpected.remove(i);
                }
                None => missing.push(e),
            }
        }
        if !missing.is_empty() || !unexpected.is_empty() {
            let headline = if actual.len() < expected.len() {
                format!(
                    "expected {} records in topic `{}` from offset {from} in any order, but only {} {} left",
                    expected.len(),
                    self.topic,
                    actual.len(),
                    if actual.len() == 1 { "is" } else { "are" }
                )
            } else {
                format!(
                    "the records of topic `{}` from offset {from} are not the expected ones in any order",
                    self.topic
                )
            };
            fail(format!(
                "{headline}\nmissing: {missing:?}\nunexpected: {unexpected:?}\n\n{}",
                listing(&self.topic, &left)
            ));
        }
        self.take(Some(expected.len()));
        self
    }

    /// The key-values of the first `n` records left; fails on one that
    /// cannot be decoded.
    #[track_caller]
    fn decoded_window<'a>(
        &self,
        left: &'a [Decoded<K, V>],
        n: usize,
    ) -> Vec<KeyValue<&'a K, &'a V>> {
        let mut out = Vec::new();
        for (_, r) in left.iter().take(n) {
            match r {
                Ok(r) => out.push(KeyValue::new(r.key.as_ref(), r.value.as_ref())),
                Err(e) => fail(format!("reading topic `{}` failed: {e}", self.topic)),
            }
        }
        out
    }

    /// Reads every record left.
    ///
    /// # Panics
    /// If a record cannot be decoded (then none is read), or the topology
    /// never writes the topic.
    #[track_caller]
    pub fn to_list(&self) -> Vec<TestRecord<K, V>> {
        self.take(None).into_iter().map(|(_, r)| r).collect()
    }

    /// Reads every record left and folds them into a table: the latest
    /// value per key, in the order keys were first seen; a tombstone
    /// removes its key (a key written again after it comes last). Records
    /// with a null key are left out, as a `KTable` drops them.
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    /// use streams_test::TestTopology;
    ///
    /// let topology = TestTopology::new(|b: &StreamsBuilder| {
    ///     b.stream::<String, String>("in").to("out");
    /// })?;
    /// topology.input().add("b", "1").add("a", "2").add("b", "3").add("c", "4").add_tombstone("c");
    /// let table = topology.table_output();
    /// table.has_entry("b", "3").has_entry("a", "2").has_no_key("c").has_size(2);
    /// let keys: Vec<&String> = table.iter().map(|(k, _)| k).collect();
    /// assert_eq!(keys, ["b", "a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// As [`to_list`](TestOutput::to_list).
    #[track_caller]
    pub fn to_table(&self) -> TableAssert<K, V>
    where
        K: PartialEq,
    {
        TableAssert::fold(&self.topic, self.take(None))
    }

    /// Reads every record left into a [`Snapshot`] that shows each
    /// record's `Debug` key and value: for `insta::assert_snapshot!`
    /// (text) or `insta::assert_yaml_snapshot!`.
    ///
    /// # Panics
    /// As [`to_list`](TestOutput::to_list).
    #[track_caller]
    pub fn snapshot(&self) -> Snapshot
    where
        K: Debug,
        V: Debug,
    {
        Snapshot::of_topic_debug(&self.topic, self.take(None))
    }

    /// Reads every record left into a [`Snapshot`] that shows keys and
    /// values through serde (as JSON values: struct fields in name order),
    /// so that a YAML or JSON snapshot shows their fields.
    ///
    /// # Panics
    /// As [`to_list`](TestOutput::to_list), or if a key or value cannot
    /// be turned into JSON.
    #[track_caller]
    pub fn serde_snapshot(&self) -> Snapshot
    where
        K: serde::Serialize,
        V: serde::Serialize,
    {
        Snapshot::of_topic_serde(&self.topic, self.take(None))
    }
}

/// One line per key-value, for list diffs.
fn lines<K: Debug, V: Debug>(records: &[KeyValue<K, V>]) -> String {
    records
        .iter()
        .map(|r| format!("{r:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks on one record read from an output topic, bakdata's
/// `expectNextRecord()` chain. Each check returns the record again;
/// [`and`](RecordAssert::and) goes back to the topic for the next one.
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("in").map_values(|v| v.repeat(2)).to("out");
/// })?;
/// topology.input().at(42).with_header("source", "test").add("k", "ab");
/// let record = topology
///     .output()
///     .expect_next_record()
///     .has_key("k")
///     .has_value("abab")
///     .has_value_matching(|v| v.len() == 4)
///     .has_timestamp(42)
///     .has_header("source", "test");
/// assert_eq!(record.offset(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordAssert<'t, K, V> {
    output: TestOutput<'t, K, V>,
    offset: i64,
    record: TestRecord<K, V>,
}

impl<K: Debug, V: Debug> std::fmt::Debug for RecordAssert<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordAssert")
            .field("topic", &self.output.topic)
            .field("offset", &self.offset)
            .field("record", &self.record)
            .finish()
    }
}

impl<'t, K: Debug + 'static, V: Debug + 'static> RecordAssert<'t, K, V> {
    /// The record's offset in its topic.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The record.
    pub fn record(&self) -> &TestRecord<K, V> {
        &self.record
    }

    /// The record, taken out.
    pub fn into_record(self) -> TestRecord<K, V> {
        self.record
    }

    /// Back to the topic, for the next record or a list check.
    pub fn and(self) -> TestOutput<'t, K, V> {
        self.output
    }

    #[track_caller]
    fn failed(&self, what: &str, detail: String) -> ! {
        let mut lines = vec![record_line(self.offset, &self.record)];
        lines.extend(self.output.peek().iter().map(decoded_line));
        fail(format!(
            "record at offset {} of topic `{}`: {what}\n{detail}\n\n{}",
            self.offset,
            self.output.topic,
            listing_lines(&self.output.topic, Some(self.offset), lines)
        ))
    }

    /// Checks the key.
    ///
    /// # Panics
    /// If the key differs (or is null).
    #[track_caller]
    pub fn has_key(self, key: impl Into<K>) -> Self
    where
        K: PartialEq,
    {
        let expected = key.into();
        if self.record.key.as_ref() != Some(&expected) {
            self.failed(
                "the key is not the expected one",
                expected_actual(&expected, &Nullable(self.record.key.as_ref())),
            );
        }
        self
    }

    /// Checks that the key is null.
    ///
    /// # Panics
    /// If the key is not null.
    #[track_caller]
    pub fn has_null_key(self) -> Self {
        if let Some(key) = &self.record.key {
            self.failed(
                "the key is not the expected one",
                expected_actual(&Nullable::<K>(None), key),
            );
        }
        self
    }

    /// Checks the value.
    ///
    /// # Panics
    /// If the value differs (or the record is a tombstone).
    #[track_caller]
    pub fn has_value(self, value: impl Into<V>) -> Self
    where
        V: PartialEq,
    {
        let expected = value.into();
        if self.record.value.as_ref() != Some(&expected) {
            self.failed(
                "the value is not the expected one",
                expected_actual(&expected, &Nullable(self.record.value.as_ref())),
            );
        }
        self
    }

    /// Checks that the value passes `predicate`.
    ///
    /// # Panics
    /// If it does not, or the record is a tombstone.
    #[track_caller]
    pub fn has_value_matching(self, predicate: impl FnOnce(&V) -> bool) -> Self {
        let matches = self.record.value.as_ref().is_some_and(predicate);
        if !matches {
            self.failed(
                "the value does not match the predicate",
                format!("value: {:#?}", Nullable(self.record.value.as_ref())),
            );
        }
        self
    }

    /// Checks that the record is a tombstone: its value is null.
    ///
    /// # Panics
    /// If it has a value.
    #[track_caller]
    pub fn is_tombstone(self) -> Self {
        if let Some(value) = &self.record.value {
            self.failed(
                "the value is not the expected one",
                expected_actual(&Nullable::<V>(None), value),
            );
        }
        self
    }

    /// Checks the timestamp (epoch millis).
    ///
    /// # Panics
    /// If it differs.
    #[track_caller]
    pub fn has_timestamp(self, timestamp: i64) -> Self {
        let actual = self.record.timestamp.unwrap_or(-1);
        if actual != timestamp {
            self.failed(
                "the timestamp is not the expected one",
                expected_actual(&timestamp, &actual),
            );
        }
        self
    }

    /// Checks the value of the last header with this key.
    ///
    /// # Panics
    /// If there is no such header or its value differs.
    #[track_caller]
    pub fn has_header(self, key: &str, value: impl AsRef<[u8]>) -> Self {
        let expected = value.as_ref();
        match self.record.headers.last_header(key) {
            Some(h) if h.value.as_deref() == Some(expected) => {}
            Some(h) => self.failed(
                &format!("header `{key}` is not the expected one"),
                format!(
                    "expected: {}\n  actual: {}",
                    header_value(Some(expected)),
                    header_value(h.value.as_deref())
                ),
            ),
            None => self.failed(
                &format!("there is no header `{key}`"),
                format!(
                    "expected: {}\n  actual headers: {}",
                    header_value(Some(expected)),
                    headers(&self.record.headers)
                ),
            ),
        }
        self
    }
}
