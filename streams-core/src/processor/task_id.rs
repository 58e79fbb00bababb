//! Task ids: which sub-topology and which partition a task runs, as
//! Kafka's `TaskId` (`org.apache.kafka.streams.processor.TaskId`).
//!
//! A Kafka Streams application runs one task per sub-topology and input
//! partition; the task `1_2` runs sub-topology 1 on partition 2 of its
//! source topics. Task ids name state directories, changelog partitions and
//! thread assignments, and the task assignor sorts by them, so their text
//! and their order are Kafka's (a processor reads its own with
//! [`ProcessorContext::task_id`](super::ProcessorContext::task_id); the
//! runtime's [`runtime::TaskId`](crate::runtime::TaskId) is the same type): `Display` writes `<subtopology>_<partition>`,
//! `FromStr` reads it back, and ids order by sub-topology, then partition.
//!
//! ```
//! use streams_core::processor::TaskId;
//!
//! let task: TaskId = "1_2".parse()?;
//! assert_eq!(task, TaskId::new(1, 2));
//! assert_eq!(task.to_string(), "1_2");
//! assert!(TaskId::new(0, 9) < TaskId::new(1, 0));
//!
//! let err = "1-2".parse::<TaskId>().unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "task id cannot be parsed correctly from `1-2`: expected \
//!      `<subtopology>_<partition>` with two non-negative integers, like `0_1`"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

/// The id of a task: the sub-topology it runs and the partition of the
/// sub-topology's source topics it reads, as Kafka's `TaskId`.
///
/// Ordered as Kafka orders them (`TaskId.compareTo`): by sub-topology, then
/// by partition, so `0_9 < 1_0`. Written and parsed as `0_1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId {
    /// The sub-topology (Kafka's `subtopology()`, once `topicGroupId`).
    pub subtopology: u32,
    /// The partition of the sub-topology's source topics.
    pub partition: u32,
}

impl TaskId {
    /// The task that runs `subtopology` on `partition`.
    #[must_use]
    pub const fn new(subtopology: u32, partition: u32) -> Self {
        TaskId {
            subtopology,
            partition,
        }
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// Text that is not a task id: anything but `<subtopology>_<partition>` with
/// two non-negative integers (Kafka's `TaskIdFormatException`, whose message
/// this extends with the expected form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "task id cannot be parsed correctly from `{text}`: expected \
     `<subtopology>_<partition>` with two non-negative integers, like `0_1`"
)]
pub struct TaskIdFormatError {
    text: String,
}

impl TaskIdFormatError {
    /// The text that did not parse.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl FromStr for TaskId {
    type Err = TaskIdFormatError;

    /// Parses `<subtopology>_<partition>`, as Kafka's `TaskId.parse` does
    /// for a task outside a named topology: the text up to the first `_` is
    /// the sub-topology, the rest the partition, each a decimal integer
    /// that fits in a `u32` (an optional `+` is accepted, as Java's
    /// `Integer.parseInt` accepts it; signs, spaces or a second `_` are not).
    ///
    /// # Errors
    /// [`TaskIdFormatError`], naming the text, when it is not of that form.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || TaskIdFormatError {
            text: text.to_owned(),
        };
        let (subtopology, partition) = text.split_once('_').ok_or_else(error)?;
        Ok(TaskId {
            subtopology: subtopology.parse().map_err(|_| error())?,
            partition: partition.parse().map_err(|_| error())?,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn displays_as_kafka_does() {
        assert_eq!(TaskId::new(0, 1).to_string(), "0_1");
        assert_eq!(TaskId::new(12, 345).to_string(), "12_345");
        assert_eq!(
            format!("{:?}", TaskId::new(1, 2)),
            "TaskId { subtopology: 1, partition: 2 }"
        );
    }

    #[test]
    fn parses_what_it_displays() {
        assert_eq!("1_2".parse::<TaskId>().unwrap(), TaskId::new(1, 2));
        assert_eq!("0_0".parse::<TaskId>().unwrap(), TaskId::new(0, 0));
        assert_eq!("+3_4".parse::<TaskId>().unwrap(), TaskId::new(3, 4));
        assert_eq!(
            "4294967295_7".parse::<TaskId>().unwrap(),
            TaskId::new(u32::MAX, 7)
        );
    }

    #[test]
    fn rejects_text_that_is_not_a_task_id_and_names_it() {
        for bad in [
            "",
            "1",
            "1-2",
            "_",
            "1_",
            "_2",
            "a_2",
            "1_b",
            "1_2_3",
            " 1_2",
            "1_2 ",
            "-1_2",
            "1_-2",
            "4294967296_0",
            "__name__0_1",
        ] {
            let err = bad.parse::<TaskId>().unwrap_err();
            assert_eq!(err.text(), bad);
            assert_eq!(
                err.to_string(),
                format!(
                    "task id cannot be parsed correctly from `{bad}`: expected \
                     `<subtopology>_<partition>` with two non-negative integers, like `0_1`"
                )
            );
        }
    }

    #[test]
    fn orders_by_subtopology_then_partition() {
        let mut ids = [
            TaskId::new(1, 0),
            TaskId::new(0, 10),
            TaskId::new(0, 2),
            TaskId::new(2, 1),
            TaskId::new(1, 3),
        ];
        ids.sort();
        let shown: Vec<String> = ids.iter().map(TaskId::to_string).collect();
        assert_eq!(shown, ["0_2", "0_10", "1_0", "1_3", "2_1"]);
    }

    proptest! {
        #[test]
        fn display_then_parse_is_identity(subtopology: u32, partition: u32) {
            let id = TaskId::new(subtopology, partition);
            prop_assert_eq!(id.to_string().parse::<TaskId>().unwrap(), id);
        }

        #[test]
        fn order_is_lexicographic_on_the_pair(a: (u32, u32), b: (u32, u32)) {
            prop_assert_eq!(TaskId::new(a.0, a.1).cmp(&TaskId::new(b.0, b.1)), a.cmp(&b));
        }
    }
}
