//! The nodes at a topology's edges: sources that read serialized records
//! of a topic and forward them typed, sinks that serialize typed records
//! and give them to the record collector, and the source of a global
//! store, which reads its topic without touching stream time, as Kafka's
//! `GlobalStateUpdateTask`.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::TopicExtractor;
use crate::error::{RecordPart, Result, SerdeError, StreamsError, UserCodePanic};
use crate::processor::ProcessorContext;
use crate::processor::node::{ErasedNode, take_record};
use crate::processor::partitioner::PartitionerRef;
use crate::processor::task::{BadRecord, TaskState};
use crate::record::{RawRecord, Record};
use crate::serde::{ReadAt, SerdeRef};
use streams_clients::partitioner::partition_for_key;

/// Reads serialized records from a topic and forwards them typed.
pub(crate) struct SourceNode<K, V> {
    pub(crate) key: SerdeRef<K>,
    pub(crate) value: SerdeRef<V>,
}

impl<K: Clone + 'static, V: Clone + 'static> ErasedNode for SourceNode<K, V> {
    fn init(&mut self, _task: &TaskState, _me: usize) -> Result<()> {
        Ok(())
    }

    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()> {
        // A source placed under a parent (not possible through the public
        // API) would pass records on unchanged.
        let record = take_record::<K, V>(task, me, record)?;
        ProcessorContext::<K, V>::new(task, me).forward(record)
    }

    fn process_raw(&mut self, task: &TaskState, me: usize, raw: RawRecord) -> Result<()> {
        let keep = task.handlers.keep_source_raw;
        if keep {
            // The handlers may need the serialized record: decode from
            // borrowed bytes and keep it while the record is processed.
            let decoded = decode_borrowed(task, &*self.key, &*self.value, &raw);
            match decoded {
                Ok((key, value)) => {
                    let record = Record {
                        key,
                        value,
                        timestamp: raw.timestamp,
                        headers: raw.headers.clone(),
                    };
                    *task.source_raw.borrow_mut() = Some(raw);
                    task.advance_stream_time(record.timestamp);
                    task.count(|m| m.processed_records += 1);
                    return ProcessorContext::<K, V>::new(task, me).forward(record);
                }
                Err(e) => {
                    let bad = BadRecord {
                        node: me,
                        timestamp: raw.timestamp,
                        headers: &raw.headers,
                        key: raw.key.as_deref(),
                        value: raw.value.as_deref(),
                    };
                    return task.deserialization_failed(&bad, e);
                }
            }
        }
        // The serialized record is not needed after this: serdes may take
        // its buffers (a String keeps the bytes it was written as).
        let RawRecord {
            key,
            value,
            timestamp,
            headers,
        } = raw;
        let position = task.source_position();
        let at = ReadAt::of(position.as_deref());
        let decoded = guard_serde(&at, || {
            let key = key.map(|b| at.decode(&*self.key, b, RecordPart::Key, &headers));
            let key = key.transpose()?;
            let value = value.map(|b| at.decode(&*self.value, b, RecordPart::Value, &headers));
            Ok::<_, StreamsError>((key, value.transpose()?))
        });
        drop(position);
        let (key, value) = match decoded {
            Ok(kv) => kv,
            Err(e) => {
                let bad = BadRecord {
                    node: me,
                    timestamp,
                    headers: &headers,
                    key: None,
                    value: None,
                };
                return task.deserialization_failed(&bad, e);
            }
        };
        task.advance_stream_time(timestamp);
        task.count(|m| m.processed_records += 1);
        let record = Record {
            key,
            value,
            timestamp,
            headers,
        };
        ProcessorContext::<K, V>::new(task, me).forward(record)
    }
}

/// Decodes a record's key and value from borrowed bytes, its errors
/// naming the task's source position (topic, partition, offset).
fn decode_borrowed<K, V>(
    task: &TaskState,
    key_serde: &(impl crate::serde::Serde<K> + ?Sized),
    value_serde: &(impl crate::serde::Serde<V> + ?Sized),
    raw: &RawRecord,
) -> Result<(Option<K>, Option<V>)> {
    let position = task.source_position();
    let at = &ReadAt::of(position.as_deref());
    guard_serde(at, || {
        let key = raw
            .key
            .as_deref()
            .map(|b| at.decode(key_serde, b, RecordPart::Key, &raw.headers));
        let key = key.transpose()?;
        let value = raw
            .value
            .as_deref()
            .map(|b| at.decode(value_serde, b, RecordPart::Value, &raw.headers));
        Ok((key, value.transpose()?))
    })
}

/// Runs a deserializer, turning its panic into a deserialization error of
/// the record read `at` (Kafka hands any exception of a deserializer to the
/// deserialization handler).
fn guard_serde<T>(at: &ReadAt<'_>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let panic = UserCodePanic::from_payload(&*payload);
        Err(StreamsError::Deserialization {
            topic: at.topic.to_owned(),
            partition: at.partition,
            offset: at.offset,
            part: RecordPart::Value,
            reason: SerdeError::new(format!("the deserializer panicked: {}", panic.message)),
        })
    })
}

/// Runs a serializer, turning its panic into a serde error.
fn guard_serialize(f: impl FnOnce() -> Result<Vec<u8>, SerdeError>) -> Result<Vec<u8>, SerdeError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let panic = UserCodePanic::from_payload(&*payload);
        Err(SerdeError::new(format!(
            "the serializer panicked: {}",
            panic.message
        )))
    })
}

/// Where a running sink writes: a topic's full name (the application id
/// applied to an internal topic's), or an extractor that names the topic
/// of each record. Resolved from the topology's [`super::SinkTopic`].
pub(crate) enum ResolvedSinkTopic<K, V> {
    Fixed(Arc<str>),
    Extractor(TopicExtractor<K, V>),
}

/// Serializes typed records and produces them to a topic.
pub(crate) struct SinkNode<K, V> {
    pub(crate) target: ResolvedSinkTopic<K, V>,
    pub(crate) key: SerdeRef<K>,
    pub(crate) value: SerdeRef<V>,
    pub(crate) partitioning: SinkPartitioning<K, V>,
}

/// How a sink chooses the partitions of its records.
pub(crate) enum SinkPartitioning<K, V> {
    /// The producer's default partitioner (a Processor API sink without a
    /// partitioner, a repartition topic's).
    Producer,
    /// A DSL sink without a partitioner: windowed keys by the key inside
    /// the window (Kafka's `WindowedStreamPartitioner`, which
    /// `StreamSinkNode` gives a sink whose key serializer is windowed),
    /// other keys by the producer.
    BaseKeyIfWindowed,
    /// The stream partitioner given.
    Custom(PartitionerRef<K, V>),
}

impl<K, V> Clone for SinkPartitioning<K, V> {
    fn clone(&self) -> Self {
        match self {
            SinkPartitioning::Producer => SinkPartitioning::Producer,
            SinkPartitioning::BaseKeyIfWindowed => SinkPartitioning::BaseKeyIfWindowed,
            SinkPartitioning::Custom(p) => SinkPartitioning::Custom(p.clone()),
        }
    }
}

impl<K, V> From<Option<PartitionerRef<K, V>>> for SinkPartitioning<K, V> {
    fn from(partitioner: Option<PartitionerRef<K, V>>) -> Self {
        partitioner.map_or(SinkPartitioning::Producer, SinkPartitioning::Custom)
    }
}

impl<K: 'static, V: 'static> ErasedNode for SinkNode<K, V> {
    fn init(&mut self, _task: &TaskState, _me: usize) -> Result<()> {
        Ok(())
    }

    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()> {
        let record = take_record::<K, V>(task, me, record)?;
        if task.poisoned() {
            // User code panicked on this record: nothing more of it is produced.
            return Ok(());
        }
        let computed;
        let topic: &str = match &self.target {
            ResolvedSinkTopic::Fixed(t) => t,
            ResolvedSinkTopic::Extractor(f) => {
                computed = f(&record);
                if computed.is_empty() {
                    return Err(StreamsError::EmptyExtractedTopic {
                        node: task.node_name(me).to_owned(),
                    });
                }
                &computed
            }
        };
        if record.timestamp < 0 {
            return Err(StreamsError::NegativeTimestamp {
                topic: topic.to_string(),
                timestamp: record.timestamp,
            });
        }
        // Kafka's RecordCollectorImpl asks the partitioner before it
        // serializes: it sees the typed key and value.
        let partitions = match &self.partitioning {
            SinkPartitioning::Producer => None,
            SinkPartitioning::BaseKeyIfWindowed => match &record.key {
                Some(key) => match self.key.serialize_base_key(topic, key) {
                    Some(base) => {
                        let base = base.map_err(|reason| StreamsError::Serialization {
                            topic: topic.to_string(),
                            node: Some(task.node_name(me).to_owned()),
                            part: RecordPart::Key,
                            reason,
                        })?;
                        let count = task.partition_count(topic)?;
                        let partition = partition_for_key(&base, count).unwrap_or(0);
                        Some(std::collections::BTreeSet::from([partition]))
                    }
                    None => None,
                },
                None => None,
            },
            SinkPartitioning::Custom(partitioner) => {
                let count = task.partition_count(topic)?;
                match partitioner.partitions(
                    topic,
                    record.key.as_ref(),
                    record.value.as_ref(),
                    count,
                ) {
                    Some(set) if set.is_empty() => {
                        task.count_dropped(me);
                        return Ok(());
                    }
                    chosen => chosen,
                }
            }
        };
        let ser_err = |part, reason| StreamsError::Serialization {
            topic: topic.to_string(),
            node: Some(task.node_name(me).to_owned()),
            part,
            reason,
        };
        // The typed record ends here: serdes may turn its key and value
        // into bytes without copying them.
        let Record {
            key,
            value,
            timestamp,
            mut headers,
        } = record;
        let key = match key.map(|k| {
            guard_serialize(|| {
                self.key
                    .serialize_owned_with_headers(topic, &mut headers, k)
            })
        }) {
            Some(Ok(k)) => Some(k),
            Some(Err(e)) => {
                let e = ser_err(RecordPart::Key, e);
                return task.production_failed(me, topic, RecordPart::Key, timestamp, e);
            }
            None => None,
        };
        let value = match value.map(|v| {
            guard_serialize(|| {
                self.value
                    .serialize_owned_with_headers(topic, &mut headers, v)
            })
        }) {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => {
                let e = ser_err(RecordPart::Value, e);
                return task.production_failed(me, topic, RecordPart::Value, timestamp, e);
            }
            None => None,
        };
        let record = Record {
            key,
            value,
            timestamp,
            headers,
        };
        match (partitions, &self.target) {
            (Some(partitions), _) => {
                // A copy per partition (KIP-837's multicast), the last one
                // the record itself.
                let mut partitions = partitions.into_iter().peekable();
                while let Some(partition) = partitions.next() {
                    if partitions.peek().is_some() {
                        task.produce_to_partition(topic, partition, record.clone());
                    } else {
                        task.produce_to_partition(topic, partition, record);
                        break;
                    }
                }
            }
            (None, ResolvedSinkTopic::Fixed(t)) => task.produce(t, record),
            (None, ResolvedSinkTopic::Extractor(_)) => task.produce_named(topic, record),
        }
        Ok(())
    }
}

/// Reads serialized records of a global topic and forwards them typed to
/// the global store's processor. Unlike a stream source, it neither moves
/// stream time nor counts processed records: global records are not the
/// task's records.
pub(crate) struct GlobalSourceNode<K, V> {
    pub(crate) key: SerdeRef<K>,
    pub(crate) value: SerdeRef<V>,
}

impl<K: Clone + 'static, V: Clone + 'static> ErasedNode for GlobalSourceNode<K, V> {
    fn init(&mut self, _task: &TaskState, _me: usize) -> Result<()> {
        Ok(())
    }

    fn process(&mut self, task: &TaskState, me: usize, _record: &mut dyn Any) -> Result<()> {
        Err(StreamsError::GlobalSourceForwardedTo {
            node: task.node_name(me).to_owned(),
        })
    }

    fn process_raw(&mut self, task: &TaskState, me: usize, raw: RawRecord) -> Result<()> {
        let (key, value) = match decode_borrowed(task, &*self.key, &*self.value, &raw) {
            Ok(kv) => kv,
            Err(e) => {
                let bad = BadRecord {
                    node: me,
                    timestamp: raw.timestamp,
                    headers: &raw.headers,
                    key: raw.key.as_deref(),
                    value: raw.value.as_deref(),
                };
                return task.deserialization_failed(&bad, e);
            }
        };
        let RawRecord {
            timestamp, headers, ..
        } = raw;
        let record = Record {
            key,
            value,
            timestamp,
            headers,
        };
        ProcessorContext::<K, V>::new(task, me).forward(record)
    }
}
