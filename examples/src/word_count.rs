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
    use std::collections::HashMap;
    use streams_core::StreamsConfig;
    use streams_test::{KeyValue, TopologyTestDriver};

    fn driver() -> Result<TopologyTestDriver> {
        TopologyTestDriver::with_config(topology()?, StreamsConfig::new("streams-wordcount"))
    }

    #[test]
    fn one_word() -> Result<()> {
        let driver = driver()?;
        let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
        let output = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);
        input.pipe_value("Hello");
        assert_eq!(output.read_key_value(), KeyValue::pair("hello", 1));
        assert!(output.is_empty());
        Ok(())
    }

    #[test]
    fn greater_number_of_words() -> Result<()> {
        let driver = driver()?;
        let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
        let output = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);
        input.pipe_values([
            "All streams lead to Kafka",
            "Hello Kafka Streams",
            "Join Kafka Summit",
        ]);
        let expected: HashMap<String, Option<i64>> = [
            ("all", 1),
            ("streams", 2),
            ("lead", 1),
            ("to", 1),
            ("kafka", 3),
            ("hello", 1),
            ("join", 1),
            ("summit", 1),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Some(v)))
        .collect();
        assert_eq!(output.read_key_values_to_map(), expected);
        Ok(())
    }

    #[test]
    fn every_update_is_forwarded_in_order() -> Result<()> {
        let driver = driver()?;
        let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
        let output = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);
        input.pipe_value("a b a");
        assert_eq!(
            output.read_key_values_to_list(),
            [
                KeyValue::pair("a", 1),
                KeyValue::pair("b", 1),
                KeyValue::pair("a", 2)
            ]
        );
        Ok(())
    }

    #[test]
    fn store_changelog_and_repartition_topics() -> Result<()> {
        let driver = driver()?;
        let input = driver.create_input_topic(INPUT, StringSerde, StringSerde);
        input.pipe_value("to be or not to be");
        let store = driver.timestamped_key_value_store::<String, i64>(STORE)?;
        assert_eq!(
            store.to_map().into_iter().collect::<Vec<_>>(),
            [
                ("be".to_owned(), 2),
                ("not".to_owned(), 1),
                ("or".to_owned(), 1),
                ("to".to_owned(), 2)
            ]
        );
        assert_eq!(
            driver
                .produced_topic_names()
                .into_iter()
                .collect::<Vec<_>>(),
            [
                "streams-wordcount-counts-store-changelog",
                "streams-wordcount-counts-store-repartition",
                OUTPUT
            ]
        );
        let changelog = driver.create_output_topic(
            "streams-wordcount-counts-store-changelog",
            StringSerde,
            I64Serde,
        );
        assert_eq!(changelog.read_key_values_to_list().len(), 6);
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
