//! Kafka's `RangeAssignor`: see [`RangeAssignor`].

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use streams_clients::{Assignment, PartitionAssignor, Subscription};

use crate::topic_partition::TopicPartition;

/// Kafka's `RangeAssignor` (protocol name `range`), the default assignor
/// of a subscribed [`Consumer`](crate::Consumer): per topic, the members
/// subscribed to it, in member id order, each take a contiguous range of
/// its partitions, the first ones one partition more when they do not
/// divide evenly.
///
/// ```
/// use std::collections::{BTreeMap, BTreeSet};
/// use streams_broker::RangeAssignor;
/// use streams_clients::{PartitionAssignor, Subscription};
///
/// let subscription = Subscription {
///     topics: BTreeSet::from(["t".to_owned()]),
///     user_data: Default::default(),
///     owned_partitions: Vec::new(),
/// };
/// let members = BTreeMap::from([("a".to_owned(), subscription.clone()), ("b".to_owned(), subscription)]);
/// let assignment = RangeAssignor.assign(&BTreeMap::from([("t".to_owned(), 5)]), &members);
/// let partitions = |m: &str| assignment[m].partitions.iter().map(|tp| tp.partition).collect::<Vec<_>>();
/// assert_eq!(partitions("a"), [0, 1, 2]);
/// assert_eq!(partitions("b"), [3, 4]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeAssignor;

impl PartitionAssignor for RangeAssignor {
    fn name(&self) -> &str {
        "range"
    }

    fn subscription_user_data(&self, _topics: &BTreeSet<String>) -> Bytes {
        Bytes::new()
    }

    fn assign(
        &self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &BTreeMap<String, Subscription>,
    ) -> BTreeMap<String, Assignment> {
        let mut assignment: BTreeMap<String, Assignment> = members
            .keys()
            .map(|m| (m.clone(), Assignment::default()))
            .collect();
        let topics: BTreeSet<&String> = members.values().flat_map(|s| &s.topics).collect();
        for topic in topics {
            let Some(&count) = partitions_per_topic.get(topic) else {
                continue;
            };
            let subscribed: Vec<&String> = members
                .iter()
                .filter(|(_, s)| s.topics.contains(topic))
                .map(|(m, _)| m)
                .collect();
            let m = i32::try_from(subscribed.len()).unwrap_or(i32::MAX);
            if m == 0 {
                continue;
            }
            let (per, extra) = (count / m, count % m);
            for (i, member) in subscribed.into_iter().enumerate() {
                let i = i32::try_from(i).unwrap_or(i32::MAX);
                let start = per * i + i.min(extra);
                let len = per + i32::from(i < extra);
                if let Some(a) = assignment.get_mut(member) {
                    a.partitions.extend(
                        (start..start + len).map(|p| TopicPartition::new(topic.clone(), p)),
                    );
                }
            }
        }
        assignment
    }
}
