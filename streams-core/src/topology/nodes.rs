//! The nodes at a topology's edges: sources that read serialized records
//! of a topic and forward them typed, sinks that serialize typed records
//! and give them to the record collector, and the source of a global
//! store, which reads its topic without touching stream time, as Kafka's
//! `GlobalStateUpdateTask`.

use std::any::Any;
use std::sync::Arc;

use super::TopicExtractor;
use crate::config::DeserializationHandling;
use crate::error::{RecordPart, Result, StreamsError};
use crate::processor::ProcessorContext;
use crate::processor::node::{ErasedNode, take_record};
use crate::processor::partitioner::PartitionerRef;
use crate::processor::task::TaskState;
use crate::record::{RawRecord, Record, RecordMetadata};
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

    fn process_raw(
        &mut self,
        task: &TaskState,
        me: usize,
        metadata: &RecordMetadata,
        raw: RawRecord,
    ) -> Result<()> {
        let at = ReadAt::from(metadata);
        // The serialized record is not needed after this: serdes may take
        // its buffers (a String keeps the bytes it was written as).
        let RawRecord {
            key,
            value,
            timestamp,
            headers,
        } = raw;
        let decoded = (|| {
            let key = key.map(|b| at.decode(&*self.key, b, RecordPart::Key));
            let key = key.transpose()?;
            let value = value.map(|b| at.decode(&*self.value, b, RecordPart::Value));
            Ok::<_, StreamsError>((key, value.transpose()?))
        })();
        let (key, value) = match decoded {
            Ok(kv) => kv,
            Err(e) => match task.config().deserialization_handling() {
                DeserializationHandling::Fail => return Err(e),
                DeserializationHandling::Continue => {
                    task.count(|m| m.dropped_records += 1);
                    return Ok(());
                }
            },
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
                        task.count(|m| m.dropped_records += 1);
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
            headers,
        } = record;
        let key = match key {
            Some(k) => Some(
                self.key
                    .serialize_owned(topic, k)
                    .map_err(|e| ser_err(RecordPart::Key, e))?,
            ),
            None => None,
        };
        let value = match value {
            Some(v) => Some(
                self.value
                    .serialize_owned(topic, v)
                    .map_err(|e| ser_err(RecordPart::Value, e))?,
            ),
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

    fn process_raw(
        &mut self,
        task: &TaskState,
        me: usize,
        metadata: &RecordMetadata,
        raw: RawRecord,
    ) -> Result<()> {
        let at = ReadAt::from(metadata);
        let key = raw.key.map(|b| at.decode(&*self.key, b, RecordPart::Key));
        let value = raw
            .value
            .map(|b| at.decode(&*self.value, b, RecordPart::Value));
        let (key, value) = (key.transpose(), value.transpose());
        let (key, value) = match key.and_then(|k| value.map(|v| (k, v))) {
            Ok(kv) => kv,
            Err(e) => match task.config().deserialization_handling() {
                DeserializationHandling::Fail => return Err(e),
                DeserializationHandling::Continue => {
                    task.count(|m| m.dropped_records += 1);
                    return Ok(());
                }
            },
        };
        let record = Record {
            key,
            value,
            timestamp: raw.timestamp,
            headers: raw.headers,
        };
        ProcessorContext::<K, V>::new(task, me).forward(record)
    }
}
