//! Word count over the simulated broker: the driver mirrors its
//! repartition and changelog topics to a [`Cluster`], the log cleaner
//! compacts the counts' changelog to one record per word, the repartition
//! topic is purged with delete-records as Kafka Streams purges it after a
//! commit, and a second driver restores its store from the compacted
//! changelog and counts on from there.
//!
//! ```
//! use streams_examples::compacted_word_count;
//!
//! let run = compacted_word_count::run()?;
//! assert_eq!((run.changelog_before, run.changelog_after), (11, 8));
//! assert_eq!(run.restored, run.original);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use streams_broker::{Cluster, TopicPartition};
use streams_core::StreamsConfig;
use streams_core::serde::{I64Serde, StringSerde};
use streams_test::{TestRecord, TopologyTestDriver};

use crate::word_count::{self, INPUT, OUTPUT, STORE};

/// The application id, which names the internal topics.
pub const APP: &str = "streams-wordcount";
/// The lines piped into the first driver.
pub const LINES: [&str; 3] = [
    "All streams lead to Kafka",
    "Hello Kafka Streams",
    "Join Kafka Summit",
];

/// The store's changelog topic.
pub fn changelog() -> String {
    format!("{APP}-{STORE}-changelog")
}

/// What the run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactedRun {
    /// Records in the changelog before compaction (one per count update).
    pub changelog_before: usize,
    /// Records in the changelog after compaction (one per word).
    pub changelog_after: usize,
    /// The changelog's offsets after compaction, with their gaps.
    pub changelog_offsets: Vec<i64>,
    /// The repartition topic's low watermark after delete-records.
    pub repartition_low_watermark: i64,
    /// The first driver's store.
    pub original: BTreeMap<String, i64>,
    /// The second driver's store, restored from the compacted changelog.
    pub restored: BTreeMap<String, i64>,
    /// What the second driver counted for one more "kafka".
    pub next_kafka_count: Option<i64>,
}

fn driver(cluster: &Cluster) -> Result<TopologyTestDriver, Box<dyn std::error::Error>> {
    Ok(TopologyTestDriver::builder(word_count::topology()?)
        .config(StreamsConfig::new(APP))
        .cluster(cluster.clone())
        .build()?)
}

/// Runs the story.
///
/// # Errors
/// A topology, driver or broker error (none is expected).
pub fn run() -> Result<CompactedRun, Box<dyn std::error::Error>> {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let first = driver(&cluster)?;
    let lines = first.create_input_topic(INPUT, StringSerde, StringSerde);
    for line in LINES {
        lines.try_pipe_record(TestRecord::value(line))?;
    }
    let original = first
        .timestamped_key_value_store::<String, i64>(STORE)?
        .to_map();
    first.close()?;

    let changelog = TopicPartition::new(changelog(), 0);
    let changelog_before = cluster.log_records(&changelog)?.len();
    cluster.roll(&changelog)?;
    cluster.run_cleaner();
    let compacted = cluster.log_records(&changelog)?;

    let repartition = cluster
        .topic_names()
        .into_iter()
        .find(|t| t.ends_with("-repartition"))
        .ok_or("the word count has a repartition topic")?;
    let low = cluster
        .admin()
        .delete_records_before(&TopicPartition::new(repartition, 0), -1)?;

    let second = driver(&cluster)?;
    let restored = second
        .timestamped_key_value_store::<String, i64>(STORE)?
        .to_map();
    let lines = second.create_input_topic(INPUT, StringSerde, StringSerde);
    let counts = second.create_output_topic(OUTPUT, StringSerde, I64Serde);
    lines.try_pipe_record(TestRecord::value("Kafka"))?;
    let next = counts
        .read_key_values_to_list()
        .pop()
        .and_then(|kv| kv.value);
    Ok(CompactedRun {
        changelog_before,
        changelog_after: compacted.len(),
        changelog_offsets: compacted.iter().map(|r| r.offset).collect(),
        repartition_low_watermark: low,
        original,
        restored,
        next_kafka_count: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compacted_changelog_restores_the_counts() -> Result<(), Box<dyn std::error::Error>> {
        let run = run()?;
        // 11 words in, one count update each; 8 distinct words.
        assert_eq!((run.changelog_before, run.changelog_after), (11, 8));
        // all@0 streams@1 lead@2 to@3 kafka@4 hello@5 kafka@6 streams@7
        // join@8 kafka@9 summit@10: the earlier counts of "streams" (1)
        // and "kafka" (4, 6) go, with gaps where they were.
        assert_eq!(run.changelog_offsets, [0, 2, 3, 5, 7, 8, 9, 10]);
        assert_eq!(run.repartition_low_watermark, 11);
        assert_eq!(run.restored, run.original);
        assert_eq!(run.original["kafka"], 3);
        assert_eq!(run.next_kafka_count, Some(4));
        Ok(())
    }
}
