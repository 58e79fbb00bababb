//! Task ids, as Kafka's `TaskId`: the type lives with the Processor API
//! ([`crate::processor::TaskId`], which a processor's context hands out);
//! the runtime uses the same.
//!
//! ```
//! use streams_core::runtime::task_id::TaskId;
//!
//! let task: TaskId = "1_2".parse()?;
//! assert_eq!(task, streams_core::processor::TaskId::new(1, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::processor::task_id::{TaskId, TaskIdFormatError};
