//! Kafka's `StreamPartitioner`: which partitions of a sink's topic a
//! record goes to, chosen from its typed key and value before they are
//! serialized.

use std::collections::BTreeSet;
use std::rc::Rc;

/// Chooses the partitions of `topic` a sink writes a record to, Kafka's
/// `org.apache.kafka.streams.processor.StreamPartitioner` (with KIP-837's
/// multicast). A sink, a repartition topic
/// ([`Repartitioned::with_stream_partitioner`](crate::dsl::Repartitioned::with_stream_partitioner))
/// or a DSL `to` ([`Produced::with_stream_partitioner`](crate::dsl::Produced::with_stream_partitioner))
/// can be given one; without one the producer's default partitioner
/// places the record by its serialized key.
///
/// [`partitions`](StreamPartitioner::partitions) answers as Kafka's does:
/// `None` leaves the choice to the default partitioner, an empty set drops
/// the record (counted in the task's `dropped_records`, as Kafka's
/// `dropped-records` sensor), and a set of partitions sends a copy of the
/// record to each. `num_partitions` is the topic's partition count: on
/// the runtime the cluster's, in the
/// [`TopologyTestDriver`](https://docs.rs/streams-test) always 1, as in
/// Kafka's driver (whose producer reports one partition for every topic).
///
/// A closure `Fn(&str, Option<&K>, Option<&V>, i32) -> Option<i32>` is a
/// partitioner that picks one partition (Kafka's older `partition` method):
///
/// ```
/// use streams_core::processor::StreamPartitioner;
///
/// // Orders go to the partition of their region, the first letter of the key.
/// let by_region = |_topic: &str, key: Option<&String>, _value: Option<&i64>, n: i32| {
///     key.and_then(|k| k.bytes().next()).map(|b| i32::from(b) % n)
/// };
/// assert_eq!(by_region.partitions("orders", Some(&"a-17".to_string()), Some(&1), 4), Some([1].into()));
/// assert_eq!(by_region.partitions("orders", None, Some(&1), 4), None); // the default partitioner
/// ```
pub trait StreamPartitioner<K, V>: 'static {
    /// The partitions of `topic` (each in `0..num_partitions`) that the
    /// record with `key` and `value` goes to; `None` for the default
    /// partitioner, an empty set to drop the record.
    fn partitions(
        &self,
        topic: &str,
        key: Option<&K>,
        value: Option<&V>,
        num_partitions: i32,
    ) -> Option<BTreeSet<i32>>;
}

impl<K, V, F> StreamPartitioner<K, V> for F
where
    F: Fn(&str, Option<&K>, Option<&V>, i32) -> Option<i32> + 'static,
{
    fn partitions(
        &self,
        topic: &str,
        key: Option<&K>,
        value: Option<&V>,
        num_partitions: i32,
    ) -> Option<BTreeSet<i32>> {
        self(topic, key, value, num_partitions).map(|p| BTreeSet::from([p]))
    }
}

/// A shared stream partitioner, as sinks hold it.
pub(crate) type PartitionerRef<K, V> = Rc<dyn StreamPartitioner<K, V>>;

/// How a task learns a topic's partition count for its stream
/// partitioners: `Ok(None)` when the topic does not exist, `Err` with the
/// reason when the count cannot be found out now. The runtime asks the
/// cluster; see [`StreamTask::set_partition_count_lookup`](crate::engine::StreamTask::set_partition_count_lookup).
pub type PartitionCountLookup = Box<dyn FnMut(&str) -> Result<Option<i32>, String>>;

/// The partition counts a task's sinks have asked for, and where to find
/// the others. Without a lookup every topic has one partition, as in
/// Kafka's `TopologyTestDriver`.
#[derive(Default)]
pub(crate) struct PartitionCounts {
    known: std::collections::HashMap<Box<str>, i32>,
    lookup: Option<PartitionCountLookup>,
}

impl PartitionCounts {
    pub(crate) fn set_lookup(&mut self, lookup: PartitionCountLookup) {
        self.known.clear();
        self.lookup = Some(lookup);
    }

    /// The partition count of `topic`, or why it is not known (the topic
    /// does not exist, or the lookup failed).
    pub(crate) fn count(&mut self, topic: &str) -> Result<i32, String> {
        if let Some(&n) = self.known.get(topic) {
            return Ok(n);
        }
        let Some(lookup) = self.lookup.as_mut() else {
            return Ok(1);
        };
        match lookup(topic)? {
            Some(n) if n > 0 => {
                self.known.insert(topic.into(), n);
                Ok(n)
            }
            _ => Err("this can happen if the topic does not exist".to_owned()),
        }
    }
}
