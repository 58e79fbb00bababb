//! The `KafkaStreams` runtime: tasks per sub-topology and partition, shared by the instances of one application.
pub mod assignor;
pub mod task_id;
