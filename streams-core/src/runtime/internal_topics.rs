//! The internal topics an instance needs, as Kafka's
//! `InternalTopicManager` makes them: the topology's topics resolved
//! against the cluster (source patterns, partition counts, the
//! co-partitioning checks), then its repartition topics and changelogs
//! created where they are missing, with Kafka Streams' configs.

use streams_clients::{Admin, ClientConfig, ClientSupplier, NewTopic};

use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::metadata::TopologyMetadata;
use crate::topology::Topology;

/// Resolves `topology` on the cluster of `clients` and creates its
/// internal topics; returns the resolved metadata and the admin client it
/// used (the caller reads the global topics with it).
///
/// # Errors
/// [`RuntimeError::MissingSourceTopics`]; [`RuntimeError::NotCopartitioned`];
/// [`RuntimeError::InvalidInternalTopicPartitions`]; a client's error.
pub(crate) fn prepare(
    topology: &Topology,
    application_id: &str,
    process_id: &str,
    clients: &dyn ClientSupplier,
) -> Result<(TopologyMetadata, Box<dyn Admin>)> {
    let app = application_id.to_owned();
    let mut admin = clients
        .admin(&ClientConfig::new().set("client.id", format!("{process_id}-admin")))
        .map_err(|e| RuntimeError::client("creating the admin client", e))?;
    let mut infos = topology.topics_info(&app);
    if infos.iter().any(|i| !i.source_patterns.is_empty()) {
        let topics = admin
            .list_topics()
            .map_err(|e| RuntimeError::client("listing topics for pattern sources", e))?;
        TopologyMetadata::resolve_source_patterns(&mut infos, &topics, &app);
    }
    let groups: Vec<Vec<String>> = infos
        .iter()
        .flat_map(|i| i.copartition_groups.clone())
        .collect();
    let metadata = TopologyMetadata::resolve(infos, &groups, |topic| {
        admin.partition_count(topic).map_err(|e| {
            RuntimeError::client(format!("reading the partition count of topic {topic}"), e)
        })
    })?;
    // Internal topics, as Kafka's InternalTopicManager makes them.
    let mut wanted: Vec<NewTopic> = Vec::new();
    for info in &metadata.subtopologies {
        for topic in &info.repartition_source_topics {
            let n = metadata.partitions.get(topic).copied().unwrap_or(1);
            wanted.push(
                NewTopic::new(topic, n)
                    .config("cleanup.policy", "delete")
                    .config("segment.bytes", "52428800")
                    .config("retention.ms", "-1")
                    .config("message.timestamp.type", "CreateTime"),
            );
        }
        for (_, topic) in &info.changelog_topics {
            let n = metadata.changelog_partitions(topic).unwrap_or(1);
            let mut new = NewTopic::new(topic, n)
                .config("cleanup.policy", "compact")
                .config("message.timestamp.type", "CreateTime");
            // The store's own configs on top, as Kafka Streams applies
            // `withLoggingEnabled(Map)`.
            for (name, value) in info.changelog_configs.get(topic).into_iter().flatten() {
                new = new.config(name, value);
            }
            wanted.push(new);
        }
    }
    for topic in wanted {
        match admin.partition_count(&topic.name).map_err(|e| {
            RuntimeError::client(
                format!("reading the partition count of topic {}", topic.name),
                e,
            )
        })? {
            Some(n) if n == topic.partitions => {}
            Some(n) => {
                return Err(RuntimeError::InvalidInternalTopicPartitions {
                    topic: topic.name,
                    expected: topic.partitions,
                    actual: n,
                });
            }
            None => match admin.create_topic(&topic) {
                Ok(()) | Err(streams_clients::ClientError::TopicExists { .. }) => {}
                Err(e) => {
                    return Err(RuntimeError::client(
                        format!("creating internal topic {}", topic.name),
                        e,
                    ));
                }
            },
        }
    }
    Ok((metadata, admin))
}
