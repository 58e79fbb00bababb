//! Word count, Kafka's `WordCountDemo`: lines in, a running count per word
//! out, kept in the store `counts-store`.
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_examples::word_count;
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! let driver = TopologyTestDriver::new(word_count::topology()?)?;
//! let lines = driver.create_input_topic(word_count::INPUT, StringSerde, StringSerde);
//! let counts = driver.create_output_topic(word_count::OUTPUT, StringSerde, I64Serde);
//! lines.pipe_value("Hello");
//! assert_eq!(counts.read_key_value(), KeyValue::pair("hello", 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use streams_core::dsl::{Materialized, Produced};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Result, StreamsBuilder, Topology};

/// The input topic: lines of text.
pub const INPUT: &str = "streams-plaintext-input";
/// The output topic: word -> count.
pub const OUTPUT: &str = "streams-wordcount-output";
/// The store holding the counts.
pub const STORE: &str = "counts-store";

/// Splits a line into lower-case words, as Java's `split("\\W+")`.
pub fn words(line: &str) -> Vec<String> {
    line.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The word-count topology.
///
/// # Errors
/// None in practice; building a topology returns a `Result`.
pub fn topology() -> Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(INPUT)
        .flat_map_values(|line: &String| words(line))
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_(STORE))
        .to_stream()
        .to_with(OUTPUT, Produced::with(StringSerde, I64Serde));
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use streams_core::StreamsConfig;
    use streams_test::{KeyValue, TestTopology, TopologyTestDriver};

    const APP: &str = "streams-wordcount";

    fn word_count() -> Result<TestTopology> {
        Ok(TestTopology::new(topology)?.with_config(StreamsConfig::new(APP)))
    }

    /// Kafka's `WordCountDemoTest.testOneWord`, in the plain driver API as
    /// Kafka writes it: a driver, typed topics, `assert_eq!`. The tests
    /// after it say the same in the fluent style.
    #[test]
    fn one_word() -> Result<()> {
        let driver = TopologyTestDriver::with_config(topology()?, StreamsConfig::new(APP))?;
        let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
        let output = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);
        input.pipe_value("Hello");
        assert_eq!(output.read_key_value(), KeyValue::pair("hello", 1));
        assert!(output.is_empty());
        Ok(())
    }

    #[test]
    fn one_word_fluent() -> Result<()> {
        let t = word_count()?;
        t.input().add_value("Hello");
        t.output()
            .with_value_serde(I64Serde)
            .expect_records([("hello", 1)])
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn greater_number_of_words() -> Result<()> {
        let t = word_count()?;
        t.input()
            .add_value("All streams lead to Kafka")
            .add_value("Hello Kafka Streams")
            .add_value("Join Kafka Summit");
        t.output()
            .with_value_serde(I64Serde)
            .to_table()
            .has_entry("all", 1)
            .has_entry("streams", 2)
            .has_entry("lead", 1)
            .has_entry("to", 1)
            .has_entry("kafka", 3)
            .has_entry("hello", 1)
            .has_entry("join", 1)
            .has_entry("summit", 1)
            .has_size(8);
        Ok(())
    }

    #[test]
    fn every_update_is_forwarded_in_order() -> Result<()> {
        let t = word_count()?;
        t.input().add_value("a b a");
        t.output()
            .with_value_serde(I64Serde)
            .expect_records([("a", 1), ("b", 1), ("a", 2)])
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn store_changelog_and_repartition_topics() -> Result<()> {
        let t = word_count()?;
        t.input().add_value("to be or not to be");
        t.store::<String, i64>(STORE)
            .has_entry("be", 2)
            .has_entry("not", 1)
            .has_entry("or", 1)
            .has_entry("to", 2)
            .has_size(4);
        let changelog = "streams-wordcount-counts-store-changelog";
        let repartition = "streams-wordcount-counts-store-repartition";
        assert_eq!(t.internal_topics(), [repartition, changelog]);
        assert_eq!(
            t.driver()
                .produced_topic_names()
                .into_iter()
                .collect::<Vec<_>>(),
            [changelog, repartition, OUTPUT]
        );
        t.output_named(changelog)
            .with_value_serde(I64Serde)
            .expect_records([
                ("to", 1),
                ("be", 1),
                ("or", 1),
                ("not", 1),
                ("to", 2),
                ("be", 2),
            ])
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn node_names_follow_kafka() -> Result<()> {
        assert_eq!(
            topology()?.node_names(),
            [
                "KSTREAM-SOURCE-0000000000",
                "KSTREAM-FLATMAPVALUES-0000000001",
                "KSTREAM-KEY-SELECT-0000000002",
                "counts-store-repartition-filter",
                "counts-store-repartition-sink",
                "counts-store-repartition-source",
                "KSTREAM-AGGREGATE-0000000003",
                "KTABLE-TOSTREAM-0000000007",
                "KSTREAM-SINK-0000000008"
            ]
        );
        Ok(())
    }
}
