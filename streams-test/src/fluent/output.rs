//! [`TestOutput`]: a fluent handle on one output topic, and how it reads
//! the topic's records (decoded with its serdes, shared with every other
//! handle on the topic). The checks on it are in `stream_assert`.

use std::fmt::Debug;
use std::sync::Arc;

use streams_core::serde::{Serde, SerdeRef};
use streams_core::{Result, StreamsError};

use super::Snapshot;
use super::TableAssert;
use super::report::{Decoded, fail};
use super::test_topology::Harness;
use crate::TestRecord;
use crate::output_queue::{OutputQueue, OutputRecord};

/// A fluent handle to read one output topic, bakdata's `TestOutput`.
///
/// Records are read in the order they were written, and a record read is
/// gone from the topic (as with [`TestOutputTopic`](crate::TestOutputTopic);
/// every handle on a topic shares what is left).
/// [`expect_next_record`](TestOutput::expect_next_record) reads one and
/// checks it with [`RecordAssert`](super::RecordAssert); the list forms
/// check several at once.
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
    pub(super) topic: String,
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
pub(super) enum Next<K, V> {
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
        crate::output_topic::decode_record(&self.topic, &self.key_serde, &self.value_serde, out)
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
    pub(super) fn next_offset(&self) -> i64 {
        self.with_queue(|q| match q {
            Some(q) => q.records.front().map_or(q.next_offset(), |r| r.offset),
            None => 0,
        })
    }

    #[track_caller]
    pub(super) fn take_next(&self) -> Next<K, V> {
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
    pub(super) fn take(&self, n: Option<usize>) -> Vec<(i64, TestRecord<K, V>)> {
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
    pub(super) fn undecodable(&self, e: StreamsError) -> ! {
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
