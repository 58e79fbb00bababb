//! `TestOutputTopic`: reads typed records the topology wrote to a topic.

use std::collections::HashMap;
use std::hash::Hash;

use streams_core::serde::SerdeRef;
use streams_core::{RecordPart, Result, StreamsError};

use crate::output_queue::{OutputRecord, PackedRecord, Payload};
use crate::{KeyValue, TestRecord, TopologyTestDriver};

/// Kafka's `RecordBatch.NO_TIMESTAMP`: a record produced without a timestamp.
const NO_TIMESTAMP: i64 = -1;

/// A typed handle to read one output topic, Kafka's `TestOutputTopic`.
///
/// Reads consume records in the order they were written. Each read has a
/// failing form (`read_value`, ...) that panics on an empty topic, pointing
/// at the caller, and a `try_` form that returns `None` instead. A record
/// that the serdes cannot decode is taken from the topic and the read
/// panics with its topic, partition, offset and the serde's reason, as
/// Kafka's driver removes a record before it deserializes it (a list read
/// has consumed the records before the bad one too).
///
/// Values are `Option<V>`: `None` is a tombstone, as Kafka's `null`.
///
/// ```
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::StreamsBuilder;
/// use streams_test::{KeyValue, TopologyTestDriver};
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, i64>("in").to("out");
/// let driver = TopologyTestDriver::new(builder.build()?)?;
/// let input = driver.create_input_topic("in", StringSerde, I64Serde);
/// let output = driver.create_output_topic("out", StringSerde, I64Serde);
/// input.pipe_key_value("a", 1);
/// input.pipe_key_value("b", 2);
/// input.pipe_tombstone("a");
/// assert_eq!(output.queue_size(), 3);
/// assert_eq!(output.read_key_value(), KeyValue::pair("a", 1));
/// let table = output.read_table();
/// assert_eq!(table.len(), 1);
/// assert_eq!(table["b"], 2);
/// assert_eq!(output.try_read_value()?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TestOutputTopic<'d, K, V> {
    driver: &'d TopologyTestDriver,
    topic: String,
    key_serde: SerdeRef<K>,
    value_serde: SerdeRef<V>,
}

impl<K: 'static, V: 'static> std::fmt::Debug for TestOutputTopic<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestOutputTopic")
            .field("topic", &self.topic)
            .field("queue_size", &self.queue_size())
            .finish()
    }
}

enum Read<T> {
    Got(T),
    Empty,
    Uninitialized(Vec<String>),
}

impl<'d, K: 'static, V: 'static> TestOutputTopic<'d, K, V> {
    pub(crate) fn new(
        driver: &'d TopologyTestDriver,
        topic: &str,
        key_serde: SerdeRef<K>,
        value_serde: SerdeRef<V>,
    ) -> Self {
        // The driver keeps this topic's records as written, for this
        // handle to decode without copies (a closed driver has none).
        let _ = driver.with_state(|s| {
            s.will_read(topic);
            Ok(())
        });
        TestOutputTopic {
            driver,
            topic: topic.to_owned(),
            key_serde,
            value_serde,
        }
    }

    /// The topic's name.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// How many records are waiting to be read.
    #[doc(alias = "getQueueSize")]
    pub fn queue_size(&self) -> usize {
        self.driver
            .with_state(|s| Ok(s.output_packed(&self.topic).map_or(0, |q| q.len())))
            .unwrap_or(0)
    }

    /// Whether no record is waiting to be read.
    #[doc(alias = "isEmpty")]
    pub fn is_empty(&self) -> bool {
        self.queue_size() == 0
    }

    fn decode(&self, out: &PackedRecord<'_>) -> Result<TestRecord<K, V>> {
        decode_view(&self.topic, &self.key_serde, &self.value_serde, out)
    }

    /// Decodes a record taken from the topic: its key and value buffers go
    /// to the serdes, which may keep them (a `String` does).
    fn decode_owned(&self, out: OutputRecord) -> Result<TestRecord<K, V>> {
        let topic = &self.topic;
        let err = |part, reason| StreamsError::Deserialization {
            topic: topic.clone(),
            partition: 0,
            offset: out.offset,
            part,
            reason,
        };
        let record = out.record;
        let headers = &record.headers;
        let key = match record.key {
            Some(Payload::Heap(b)) => Some(
                self.key_serde
                    .deserialize_owned_with_headers(topic, headers, b)
                    .map_err(|e| err(RecordPart::Key, e))?,
            ),
            Some(b) => Some(
                self.key_serde
                    .deserialize_with_headers(topic, headers, &b)
                    .map_err(|e| err(RecordPart::Key, e))?,
            ),
            None => None,
        };
        let value = match record.value {
            Some(Payload::Heap(b)) => Some(
                self.value_serde
                    .deserialize_owned_with_headers(topic, headers, b)
                    .map_err(|e| err(RecordPart::Value, e))?,
            ),
            Some(b) => Some(
                self.value_serde
                    .deserialize_with_headers(topic, headers, &b)
                    .map_err(|e| err(RecordPart::Value, e))?,
            ),
            None => None,
        };
        Ok(TestRecord {
            key,
            value,
            timestamp: (record.timestamp != NO_TIMESTAMP).then_some(record.timestamp),
            headers: record.headers,
        })
    }

    /// Removes the next record and decodes it: a record that does not
    /// decode is gone too, as in Kafka's driver.
    fn next(&self) -> Result<Read<TestRecord<K, V>>> {
        self.driver.with_state(|s| {
            if let Some(q) = s.output_packed(&self.topic) {
                // Unpacked records (kept as written for this reader, or
                // left by the fluent reader) come first.
                if let Some(front) = q.records.pop_front() {
                    return self.decode_owned(front).map(Read::Got);
                }
                let first = q.first_packed_offset();
                let decoded = q.packed.iter(first).next().map(|front| self.decode(&front));
                return match decoded {
                    Some(decoded) => {
                        q.packed.pop_front();
                        decoded.map(Read::Got)
                    }
                    None => Ok(Read::Empty),
                };
            }
            if s.produced_topic_names().contains(&self.topic) {
                Ok(Read::Empty)
            } else {
                Ok(Read::Uninitialized(s.sink_topics()))
            }
        })
    }

    /// Reads every waiting record into `T`, one after the other as Kafka's
    /// `readRecordsToList` does: at a record that does not decode, the
    /// records before it and that record are gone, the rest stay.
    fn all_as<T>(&self, f: impl Fn(TestRecord<K, V>) -> T) -> Result<Vec<T>> {
        self.driver
            .with_state(|s| match s.output_packed(&self.topic) {
                Some(q) => {
                    let mut decoded = Vec::with_capacity(q.len());
                    while let Some(front) = q.records.pop_front() {
                        decoded.push(f(self.decode_owned(front)?));
                    }
                    loop {
                        let first = q.first_packed_offset();
                        let Some(record) = q.packed.iter(first).next().map(|r| self.decode(&r))
                        else {
                            break;
                        };
                        q.packed.pop_front();
                        decoded.push(f(record?));
                    }
                    Ok(decoded)
                }
                None => Ok(Vec::new()),
            })
    }

    fn try_next(&self) -> Result<Option<TestRecord<K, V>>> {
        match self.next()? {
            Read::Got(r) => Ok(Some(r)),
            Read::Empty | Read::Uninitialized(_) => Ok(None),
        }
    }

    #[track_caller]
    fn must_next(&self) -> TestRecord<K, V> {
        match self.next() {
            Ok(Read::Got(r)) => r,
            Ok(Read::Empty) => panic!(
                "empty topic: {}; every record written to it was already read",
                self.topic
            ),
            Ok(Read::Uninitialized(sinks)) => panic!(
                "uninitialized topic: {}; the topology never wrote to it (it writes to {sinks:?})",
                self.topic
            ),
            Err(e) => panic!("reading topic `{}` failed: {e}", self.topic),
        }
    }

    #[track_caller]
    fn must_all(&self) -> Vec<TestRecord<K, V>> {
        self.must_all_as(|r| r)
    }

    #[track_caller]
    fn must_all_as<T>(&self, f: impl Fn(TestRecord<K, V>) -> T) -> Vec<T> {
        match self.all_as(f) {
            Ok(v) => v,
            Err(e) => panic!(
                "reading topic `{}` failed: {e}; that record and those before it were consumed, as in Kafka's driver",
                self.topic
            ),
        }
    }

    /// Reads the next record's value (`None` for a tombstone).
    ///
    /// # Panics
    /// If the topic is empty (`empty topic: out`) or was never written
    /// (`uninitialized topic: out`, listing the topics that were), or the
    /// record cannot be decoded.
    #[track_caller]
    #[doc(alias = "readValue")]
    #[doc(alias = "readOutput")]
    pub fn read_value(&self) -> Option<V> {
        self.must_next().value
    }

    /// Reads the next record's value, `Ok(None)` if the topic is empty;
    /// the inner `None` is a tombstone.
    ///
    /// # Errors
    /// [`StreamsError::Deserialization`] if the record cannot be decoded
    /// (it is consumed, as in Kafka's driver), naming its topic, offset and
    /// the serde's reason.
    pub fn try_read_value(&self) -> Result<Option<Option<V>>> {
        Ok(self.try_next()?.map(|r| r.value))
    }

    /// Reads the next record's key and value.
    ///
    /// # Panics
    /// As [`read_value`](TestOutputTopic::read_value).
    #[track_caller]
    #[doc(alias = "readKeyValue")]
    #[doc(alias = "readOutput")]
    pub fn read_key_value(&self) -> KeyValue<K, V> {
        let r = self.must_next();
        KeyValue::new(r.key, r.value)
    }

    /// Reads the next record's key and value, `Ok(None)` if the topic is
    /// empty.
    ///
    /// # Errors
    /// As [`try_read_value`](TestOutputTopic::try_read_value).
    pub fn try_read_key_value(&self) -> Result<Option<KeyValue<K, V>>> {
        Ok(self.try_next()?.map(|r| KeyValue::new(r.key, r.value)))
    }

    /// Reads the next record whole: key, value, timestamp and headers.
    ///
    /// # Panics
    /// As [`read_value`](TestOutputTopic::read_value).
    #[track_caller]
    #[doc(alias = "readRecord")]
    #[doc(alias = "readOutput")]
    pub fn read_record(&self) -> TestRecord<K, V> {
        self.must_next()
    }

    /// Reads the next record whole, `Ok(None)` if the topic is empty.
    ///
    /// # Errors
    /// As [`try_read_value`](TestOutputTopic::try_read_value).
    pub fn try_read_record(&self) -> Result<Option<TestRecord<K, V>>> {
        self.try_next()
    }

    /// Reads every waiting record's value; empty if there are none.
    ///
    /// # Panics
    /// If a record cannot be decoded (then none is consumed).
    #[track_caller]
    #[doc(alias = "readValuesToList")]
    pub fn read_values_to_list(&self) -> Vec<Option<V>> {
        self.must_all_as(|r| r.value)
    }

    /// Reads every waiting record's key and value.
    ///
    /// # Panics
    /// As [`read_values_to_list`](TestOutputTopic::read_values_to_list).
    #[track_caller]
    #[doc(alias = "readKeyValuesToList")]
    pub fn read_key_values_to_list(&self) -> Vec<KeyValue<K, V>> {
        self.must_all_as(|r| KeyValue::new(r.key, r.value))
    }

    /// Reads every waiting record whole.
    ///
    /// # Panics
    /// As [`read_values_to_list`](TestOutputTopic::read_values_to_list).
    #[track_caller]
    #[doc(alias = "readRecordsToList")]
    pub fn read_records_to_list(&self) -> Vec<TestRecord<K, V>> {
        self.must_all()
    }

    /// Reads every waiting record into a map of the last value per key,
    /// as Kafka's `readKeyValuesToMap`: a tombstone keeps its key, with
    /// `None`.
    ///
    /// # Panics
    /// If a record has a null key (a map has no place for it), or as
    /// [`read_values_to_list`](TestOutputTopic::read_values_to_list).
    #[track_caller]
    #[doc(alias = "readKeyValuesToMap")]
    pub fn read_key_values_to_map(&self) -> HashMap<K, Option<V>>
    where
        K: Hash + Eq,
    {
        let mut map = HashMap::new();
        for r in self.must_all() {
            match r.key {
                Some(k) => {
                    map.insert(k, r.value);
                }
                None => panic!(
                    "null keys are not allowed in read_key_values_to_map: topic `{}` has a record with a null key; read it with read_key_values_to_list",
                    self.topic
                ),
            }
        }
        map
    }

    /// Reads every waiting record into a table: the last value per key,
    /// where a tombstone removes the key.
    ///
    /// # Panics
    /// As [`read_key_values_to_map`](TestOutputTopic::read_key_values_to_map).
    #[track_caller]
    pub fn read_table(&self) -> HashMap<K, V>
    where
        K: Hash + Eq,
    {
        self.read_key_values_to_map()
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect()
    }
}

/// Decodes a record kept on `topic` with these serdes; a failure names the
/// topic, offset and part.
pub(crate) fn decode_record<K: 'static, V: 'static>(
    topic: &str,
    key_serde: &SerdeRef<K>,
    value_serde: &SerdeRef<V>,
    out: &OutputRecord,
) -> Result<TestRecord<K, V>> {
    decode_view(topic, key_serde, value_serde, &PackedRecord::of(out))
}

/// As [`decode_record`], for a record packed or not.
fn decode_view<K: 'static, V: 'static>(
    topic: &str,
    key_serde: &SerdeRef<K>,
    value_serde: &SerdeRef<V>,
    out: &PackedRecord<'_>,
) -> Result<TestRecord<K, V>> {
    let err = |part, reason| StreamsError::Deserialization {
        topic: topic.to_owned(),
        partition: 0,
        offset: out.offset,
        part,
        reason,
    };
    let key = match out.key {
        Some(b) => Some(
            key_serde
                .deserialize_with_headers(topic, out.headers, b)
                .map_err(|e| err(RecordPart::Key, e))?,
        ),
        None => None,
    };
    let value = match out.value {
        Some(b) => Some(
            value_serde
                .deserialize_with_headers(topic, out.headers, b)
                .map_err(|e| err(RecordPart::Value, e))?,
        ),
        None => None,
    };
    Ok(TestRecord {
        key,
        value,
        // Kafka's `NO_TIMESTAMP`: a record written without one (the
        // suppression buffer's changelog) reads as none, as in Kafka.
        timestamp: (out.timestamp != NO_TIMESTAMP).then_some(out.timestamp),
        headers: out.headers.clone(),
    })
}
