//! The Processor API: processors, their context, and punctuation.
//!
//! A [`Processor`] receives typed [`Record`]s one at a time and may
//! [`forward`](ProcessorContext::forward) records to its children, all of
//! them or one by name. It can [`schedule`](ProcessorContext::schedule) a
//! punctuation by stream time (driven by record timestamps) or by wall-clock
//! time (driven by the clock a test controls); the engine then calls
//! [`Processor::punctuate`].
//!
//! ```
//! use streams_core::processor::{Processor, ProcessorContext};
//! use streams_core::{Record, Result, Topology};
//!
//! /// Forwards each value's length.
//! struct Len;
//! impl Processor<String, String, String, i64> for Len {
//!     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, String>) -> Result<()> {
//!         let len = r.value.as_ref().map(|v| v.len() as i64);
//!         ctx.forward(r.with_value(len))
//!     }
//! }
//!
//! let mut topology = Topology::new();
//! topology
//!     .add_source::<String, String>("source", "words")?
//!     .add_processor("len", || Len, &["source"])?
//!     .add_sink::<String, i64>("sink", "lengths", &["len"])?;
//! assert_eq!(topology.node_names(), ["source", "len", "sink"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod context;
mod fixed_key;
pub(crate) mod node;
pub(crate) mod partitioner;
mod punctuation_queue;
pub(crate) mod task;
pub mod task_id;

pub(crate) use context::StoreLookup;
pub use context::{Cancellable, ProcessorContext, Punctuation, PunctuationType};
pub(crate) use fixed_key::FixedKeyAdapter;
pub use fixed_key::{FixedKeyProcessor, FixedKeyProcessorContext, FixedKeyRecord};
pub use partitioner::{PartitionCountLookup, StreamPartitioner};
pub use task_id::TaskId;

use crate::error::Result;
use crate::record::Record;

/// A processor of records, Kafka's `api.Processor<KIn, VIn, KOut, VOut>`.
///
/// The engine calls [`init`](Processor::init) once before the first
/// record, [`process`](Processor::process) for each record that reaches
/// the processor, [`punctuate`](Processor::punctuate) for each scheduled
/// punctuation that fires, and [`close`](Processor::close) when the task
/// closes. Errors returned are reported with the processor's name.
pub trait Processor<KIn, VIn, KOut = KIn, VOut = VIn>: 'static {
    /// Called once before any record; schedule punctuations here.
    ///
    /// # Errors
    /// An error fails the task's start; it is reported with the
    /// processor's name.
    fn init(&mut self, ctx: &mut ProcessorContext<'_, KOut, VOut>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }

    /// Processes one record.
    ///
    /// # Errors
    /// An error stops the processing of the record; it is reported with
    /// the processor's name.
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KOut, VOut>,
        record: Record<KIn, VIn>,
    ) -> Result<()>;

    /// Called when a punctuation scheduled by this processor fires, with the
    /// current stream time (for [`PunctuationType::StreamTime`]) or wall-clock
    /// time (for [`PunctuationType::WallClockTime`]).
    ///
    /// # Errors
    /// An error stops the punctuation; it is reported with the
    /// processor's name.
    #[doc(alias = "Punctuator")]
    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, KOut, VOut>,
        timestamp: i64,
        punctuation: &Punctuation,
    ) -> Result<()> {
        let _ = (ctx, timestamp, punctuation);
        Ok(())
    }

    /// Called once when the task closes.
    ///
    /// # Errors
    /// An error is reported with the processor's name; the task closes
    /// its other processors all the same.
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}
