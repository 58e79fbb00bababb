//! Helpers shared by the broker tests.

use streams_broker::{Cluster, NewTopic, ProducerRecord, TopicPartition};

/// Creates `topic` with one partition and the given configs.
pub(crate) fn topic(cluster: &Cluster, topic: &str, configs: &[(&str, &str)]) -> TopicPartition {
    let mut new = NewTopic::new(topic, 1);
    for (k, v) in configs {
        new = new.config(*k, *v);
    }
    cluster.admin().create_topic(new).unwrap();
    TopicPartition::new(topic, 0)
}

/// Sends `key` = `value` (a tombstone for `None`) at `timestamp`; returns
/// the offset.
pub(crate) fn send(
    cluster: &Cluster,
    topic: &str,
    key: &str,
    value: Option<&str>,
    timestamp: i64,
) -> i64 {
    let record = match value {
        Some(v) => ProducerRecord::new(topic, key.to_owned(), v.to_owned()),
        None => ProducerRecord::tombstone(topic, key.to_owned()),
    };
    cluster
        .producer()
        .send(record.timestamp(timestamp))
        .unwrap()
        .offset
}

/// The log's records as (offset, key, value) strings.
pub(crate) fn contents(
    cluster: &Cluster,
    tp: &TopicPartition,
) -> Vec<(i64, String, Option<String>)> {
    cluster
        .log_records(tp)
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r.offset,
                r.key
                    .map(|k| String::from_utf8_lossy(&k).into_owned())
                    .unwrap_or_default(),
                r.value.map(|v| String::from_utf8_lossy(&v).into_owned()),
            )
        })
        .collect()
}

/// The log's offsets.
pub(crate) fn offsets(cluster: &Cluster, tp: &TopicPartition) -> Vec<i64> {
    contents(cluster, tp)
        .into_iter()
        .map(|(o, _, _)| o)
        .collect()
}
