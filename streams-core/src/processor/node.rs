//! Type-erased nodes: how typed processors, sources and sinks sit in one
//! task and pass typed records without re-serializing. The processor
//! node is here; sources and sinks, which know topics, are in the
//! topology (`topology/nodes.rs`).
//!
//! A record travels from a parent to a child as `&mut Option<Record<K, V>>`
//! behind `&mut dyn Any`: the child takes it out after one type check
//! (the types were already checked when the topology was built), so
//! nothing is boxed or serialized between nodes.

use std::any::Any;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::task::TaskState;
use super::{Processor, ProcessorContext, Punctuation};
use crate::error::{Result, StreamsError, UserCodePanic};
use crate::record::{RawRecord, Record};

pub(crate) trait ErasedNode {
    fn init(&mut self, task: &TaskState, me: usize) -> Result<()>;
    fn process(&mut self, task: &TaskState, me: usize, record: &mut dyn Any) -> Result<()>;
    /// Processes a serialized record as a source: the record's origin is
    /// the task's current metadata (see [`TaskState::source_position`]).
    fn process_raw(&mut self, task: &TaskState, me: usize, record: RawRecord) -> Result<()> {
        let _ = record;
        Err(StreamsError::NotASource {
            node: task.node_name(me).to_owned(),
        })
    }
    fn punctuate(&mut self, task: &TaskState, me: usize, now: i64, p: &Punctuation) -> Result<()> {
        let _ = (task, me, now, p);
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}

#[inline]
pub(crate) fn take_record<K: 'static, V: 'static>(
    task: &TaskState,
    me: usize,
    record: &mut dyn Any,
) -> Result<Record<K, V>> {
    match record
        .downcast_mut::<Option<Record<K, V>>>()
        .and_then(Option::take)
    {
        Some(record) => Ok(record),
        None => Err(type_mismatch::<K, V>(task, me)),
    }
}

/// The error of a node handed a record of other types than its own (the
/// types were checked when the topology was built: not reached).
#[cold]
#[inline(never)]
fn type_mismatch<K, V>(task: &TaskState, me: usize) -> StreamsError {
    StreamsError::RecordTypeMismatch {
        node: task.node_name(me).to_owned(),
        expected: format!(
            "{}, {}",
            std::any::type_name::<K>(),
            std::any::type_name::<V>()
        ),
    }
}

/// A caught panic of user code, as the processing error it is reported as.
fn panicked(payload: &(dyn Any + Send)) -> StreamsError {
    StreamsError::Processing {
        node: None,
        source: Box::new(UserCodePanic::from_payload(payload)),
    }
}

/// Names the processor in errors that came from its own code.
fn in_node(task: &TaskState, me: usize, err: StreamsError) -> StreamsError {
    match err {
        StreamsError::Processing { node: None, source } => StreamsError::Processing {
            node: Some(task.node_name(me).to_owned()),
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
        let processor = &mut self.processor;
        let result = catch_unwind(AssertUnwindSafe(|| processor.process(&mut ctx, record)))
            .unwrap_or_else(|payload| {
                // Undo what the record produced so far, as far as the task can.
                task.undo_unit();
                Err(panicked(&*payload))
            });
        match result {
            // The processor's own code failed: the processing handler
            // decides (Kafka's `ProcessorNode.process`). Errors of nodes
            // further down come back named and pass through.
            Err(e @ StreamsError::Processing { node: None, .. }) => {
                task.processing_failed(me, in_node(task, me, e))
            }
            other => other.map_err(|e| in_node(task, me, e)),
        }
    }

    fn punctuate(&mut self, task: &TaskState, me: usize, now: i64, p: &Punctuation) -> Result<()> {
        let mut ctx = ProcessorContext::new(task, me);
        let processor = &mut self.processor;
        let result = catch_unwind(AssertUnwindSafe(|| processor.punctuate(&mut ctx, now, p)))
            .unwrap_or_else(|payload| {
                task.undo_unit();
                Err(panicked(&*payload))
            });
        match result {
            // As Kafka's `ProcessorNode.punctuate`: the processing handler
            // decides, with no record (no topic, partition -1, offset -1).
            Err(e @ StreamsError::Processing { node: None, .. }) => {
                task.processing_failed(me, in_node(task, me, e))
            }
            other => other.map_err(|e| in_node(task, me, e)),
        }
    }

    fn close(&mut self) -> Result<()> {
        self.processor.close().map_err(|e| match e {
            StreamsError::Processing { node: None, source } => StreamsError::Processing {
                node: Some(self.name.clone()),
                source,
            },
            other => other,
        })
    }
}
