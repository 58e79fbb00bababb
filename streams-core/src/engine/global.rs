//! The global side of a task: the source of a global store, which reads
//! its topic without touching stream time, as Kafka's
//! `GlobalStateUpdateTask`.

use std::any::Any;

use super::TaskState;
use super::nodes::ErasedNode;
use crate::config::DeserializationHandling;
use crate::error::{RecordPart, Result, StreamsError};
use crate::processor::ProcessorContext;
use crate::record::{RawRecord, Record, RecordMetadata};
use crate::serde::SerdeRef;

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
        Err(StreamsError::InvalidArgument(format!(
            "global source `{}` reads its topic only; it has no parent",
            task.node_name(me)
        )))
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
        let key = raw
            .key
            .map(|b| self.key.deserialize_owned(&metadata.topic, b))
            .transpose()
            .map_err(|e| decode_err(RecordPart::Key, e));
        let value = raw
            .value
            .map(|b| self.value.deserialize_owned(&metadata.topic, b))
            .transpose()
            .map_err(|e| decode_err(RecordPart::Value, e));
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
