//! Type-erased nodes: how typed processors, sources and sinks sit in one
//! task and pass typed records without re-serializing.
//!
//! A record travels from a parent to a child as `&mut Option<Record<K, V>>`
//! behind `&mut dyn Any`: the child takes it out after one type check
//! (the types were already checked when the topology was built), so
//! nothing is boxed or serialized between nodes.

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

use super::TaskState;
use crate::config::DeserializationHandling;
use crate::error::{RecordPart, Result, StreamsError};
use crate::processor::{Processor, ProcessorContext, Punctuation};
use crate::record::{RawRecord, Record, RecordMetadata};
use crate::serde::SerdeRef;
use crate::topology::TopicExtractor;

pub(crate) trait ErasedNode {
    fn init(&mut self, task: &TaskState, me: usize) -> Result<()>;
    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()>;
    fn process_raw(
        &mut self,
        task: &TaskState,
        me: usize,
        metadata: &RecordMetadata,
        record: RawRecord,
    ) -> Result<()> {
        let _ = (metadata, record);
        Err(StreamsError::InvalidArgument(format!(
            "node `{}` is not a source and cannot read serialized records",
            task.node_name(me)
        )))
    }
    fn punctuate(&mut self, task: &TaskState, me: usize, now: i64, p: &Punctuation) -> Result<()> {
        let _ = (task, me, now, p);
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}

fn take_record<K: 'static, V: 'static>(
    task: &TaskState,
    me: usize,
    record: &mut dyn Any,
) -> Result<Record<K, V>> {
    record
        .downcast_mut::<Option<Record<K, V>>>()
        .and_then(Option::take)
        .ok_or_else(|| {
            StreamsError::InvalidArgument(format!(
                "node `{}` expected a record of type ({}, {}) but received another type",
                task.node_name(me),
                std::any::type_name::<K>(),
                std::any::type_name::<V>()
            ))
        })
}

/// Names the processor in errors that came from its own code.
fn in_node(task: &TaskState, me: usize, err: StreamsError) -> StreamsError {
    match err {
        StreamsError::Processing { node, source } if node.is_empty() => StreamsError::Processing {
            node: task.node_name(me).to_owned(),
            source,
        },
        other => other,
    }
}

/// A user or DSL processor.
pub(crate) struct ProcessorNode<P, KIn, VIn, KOut, VOut> {
    processor: P,
    name: String,
    _types: PhantomData<fn(KIn, VIn, KOut, VOut)>,
}

impl<P, KIn, VIn, KOut, VOut> ProcessorNode<P, KIn, VIn, KOut, VOut> {
    pub(crate) fn new(processor: P, name: &str) -> Self {
        ProcessorNode {
            processor,
            name: name.to_owned(),
            _types: PhantomData,
        }
    }
}

impl<P, KIn, VIn, KOut, VOut> ErasedNode for ProcessorNode<P, KIn, VIn, KOut, VOut>
where
    P: Processor<KIn, VIn, KOut, VOut>,
    KIn: 'static,
    VIn: 'static,
    KOut: 'static,
    VOut: 'static,
{
    fn init(&mut self, task: &TaskState, me: usize) -> Result<()> {
        let mut ctx = ProcessorContext::new(task, me);
        self.processor
            .init(&mut ctx)
            .map_err(|e| in_node(task, me, e))
    }

    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()> {
        let record = take_record::<KIn, VIn>(task, me, record)?;
        let mut ctx = ProcessorContext::new(task, me);
        self.processor
            .process(&mut ctx, record)
            .map_err(|e| in_node(task, me, e))
    }

    fn punctuate(&mut self, task: &TaskState, me: usize, now: i64, p: &Punctuation) -> Result<()> {
        let mut ctx = ProcessorContext::new(task, me);
        self.processor
            .punctuate(&mut ctx, now, p)
            .map_err(|e| in_node(task, me, e))
    }

    fn close(&mut self) -> Result<()> {
        self.processor.close().map_err(|e| match e {
            StreamsError::Processing { node, source } if node.is_empty() => {
                StreamsError::Processing {
                    node: self.name.clone(),
                    source,
                }
            }
            other => other,
        })
    }
}

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
        let decode_err = |part, reason| StreamsError::Deserialization {
            topic: metadata.topic.to_string(),
            partition: metadata.partition,
            offset: metadata.offset,
            part,
            reason,
        };
        // The serialized record is not needed after this: serdes may take
        // its buffers (a String keeps the bytes it was written as).
        let RawRecord {
            key,
            value,
            timestamp,
            headers,
        } = raw;
        let decoded = (|| {
            let key = match key {
                Some(bytes) => Some(
                    self.key
                        .deserialize_owned(&metadata.topic, bytes)
                        .map_err(|e| decode_err(RecordPart::Key, e))?,
                ),
                None => None,
            };
            let value = match value {
                Some(bytes) => Some(
                    self.value
                        .deserialize_owned(&metadata.topic, bytes)
                        .map_err(|e| decode_err(RecordPart::Value, e))?,
                ),
                None => None,
            };
            Ok::<_, StreamsError>((key, value))
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

/// Where a sink writes.
pub(crate) enum SinkTarget<K, V> {
    Fixed(Arc<str>),
    Extractor(TopicExtractor<K, V>),
}

/// Serializes typed records and produces them to a topic.
pub(crate) struct SinkNode<K, V> {
    pub(crate) target: SinkTarget<K, V>,
    pub(crate) key: SerdeRef<K>,
    pub(crate) value: SerdeRef<V>,
}

impl<K: 'static, V: 'static> ErasedNode for SinkNode<K, V> {
    fn init(&mut self, _task: &TaskState, _me: usize) -> Result<()> {
        Ok(())
    }

    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()> {
        let record = take_record::<K, V>(task, me, record)?;
        let computed;
        let topic: &str = match &self.target {
            SinkTarget::Fixed(t) => t,
            SinkTarget::Extractor(f) => {
                computed = f(&record);
                if computed.is_empty() {
                    return Err(StreamsError::InvalidArgument(format!(
                        "the topic name extractor of sink `{}` returned an empty topic name",
                        task.node_name(me)
                    )));
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
        match &self.target {
            SinkTarget::Fixed(t) => task.produce(t, record),
            SinkTarget::Extractor(_) => task.produce_named(topic, record),
        }
        Ok(())
    }
}
