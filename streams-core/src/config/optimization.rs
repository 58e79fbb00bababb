//! `topology.optimization`: which of Kafka's three topology optimizations
//! [`StreamsBuilder::build_with`](crate::StreamsBuilder::build_with)
//! applies, read as Kafka's `StreamsConfig.verifyTopologyOptimizationConfigs`
//! reads it.
//!
//! The value is `none` (the default), `all`, or a comma-separated list of
//! `reuse.ktable.source.topics`, `merge.repartition.topics` and
//! `single.store.self.join` (spaces around the commas are allowed). Any
//! other word, or `none`/`all` next to another, is refused with Kafka's
//! own message:
//!
//! ```
//! use streams_core::config::TopologyOptimizations;
//! use streams_core::StreamsConfig;
//!
//! let both = TopologyOptimizations::parse("merge.repartition.topics, single.store.self.join")?;
//! assert!(both.merge_repartition_topics && both.single_store_self_join);
//! assert!(!both.reuse_ktable_source_topics);
//! assert_eq!(TopologyOptimizations::parse("all")?, TopologyOptimizations::ALL);
//! assert_eq!(both.to_string(), "merge.repartition.topics,single.store.self.join");
//!
//! let config = StreamsConfig::new("app").with_property(StreamsConfig::TOPOLOGY_OPTIMIZATION_CONFIG, "merge");
//! let err = config.topology_optimizations().unwrap_err();
//! assert!(err.to_string().starts_with("Unrecognized config. Acceptable values are:"));
//! assert!(err.to_string().contains("`merge` is not an optimization"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use crate::error::{Result, StreamsError};

/// `all`: every optimization (Kafka's `StreamsConfig.OPTIMIZE`).
pub const OPTIMIZE: &str = "all";
/// `none`: no optimization, the default (Kafka's `StreamsConfig.NO_OPTIMIZATION`).
pub const NO_OPTIMIZATION: &str = "none";
/// `reuse.ktable.source.topics`: a source table's store uses its source
/// topic as its changelog.
pub const REUSE_KTABLE_SOURCE_TOPICS: &str = "reuse.ktable.source.topics";
/// `merge.repartition.topics`: the repartition topics after one key change
/// become one.
pub const MERGE_REPARTITION_TOPICS: &str = "merge.repartition.topics";
/// `single.store.self.join`: a stream joined with itself keeps one window
/// store (KIP-862).
pub const SINGLE_STORE_SELF_JOIN: &str = "single.store.self.join";

/// Which topology optimizations to apply (Kafka's `topology.optimization`).
///
/// ```
/// use streams_core::config::TopologyOptimizations;
///
/// assert_eq!(TopologyOptimizations::default(), TopologyOptimizations::NONE);
/// assert_eq!(TopologyOptimizations::NONE.to_string(), "none");
/// assert_eq!(TopologyOptimizations::ALL.to_string(), "all");
/// let reuse = TopologyOptimizations { reuse_ktable_source_topics: true, ..TopologyOptimizations::NONE };
/// assert_eq!(reuse.to_string(), "reuse.ktable.source.topics");
/// assert_eq!(TopologyOptimizations::parse(&reuse.to_string())?, reuse);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TopologyOptimizations {
    /// `reuse.ktable.source.topics`: the store of a table read from a topic
    /// ([`StreamsBuilder::table`](crate::StreamsBuilder::table)) writes no
    /// `-changelog` topic; it is restored from the source topic.
    pub reuse_ktable_source_topics: bool,
    /// `merge.repartition.topics`: the repartition topics that grouping,
    /// joins and `to_table` add after the same key change become one.
    pub merge_repartition_topics: bool,
    /// `single.store.self.join`: a stream-stream join of a stream with
    /// itself keeps one window store (KIP-862).
    pub single_store_self_join: bool,
}

impl TopologyOptimizations {
    /// `none`: the topology as the DSL built it.
    pub const NONE: Self = TopologyOptimizations {
        reuse_ktable_source_topics: false,
        merge_repartition_topics: false,
        single_store_self_join: false,
    };

    /// `all`: every optimization.
    pub const ALL: Self = TopologyOptimizations {
        reuse_ktable_source_topics: true,
        merge_repartition_topics: true,
        single_store_self_join: true,
    };

    /// Reads a `topology.optimization` value as Kafka does: split at commas
    /// (and the spaces around them), as Java's `split("\\s*,\\s*")` splits
    /// (trailing empty parts dropped); `none` and `all` must stand alone.
    ///
    /// # Errors
    /// [`StreamsError::InvalidTopologyOptimization`] with Kafka's message,
    /// naming the value and the part that is not an optimization.
    pub fn parse(value: &str) -> Result<Self> {
        let parts = java_split_at_commas(value);
        let invalid = |unknown: Option<&str>| StreamsError::InvalidTopologyOptimization {
            value: value.to_owned(),
            unknown: unknown.map(str::to_owned),
        };
        let has = |word: &str| parts.contains(&word);
        if (has(NO_OPTIMIZATION) || has(OPTIMIZE)) && parts.len() > 1 {
            return Err(invalid(None));
        }
        let mut chosen = Self::NONE;
        for part in &parts {
            match *part {
                OPTIMIZE => chosen = Self::ALL,
                NO_OPTIMIZATION => {}
                REUSE_KTABLE_SOURCE_TOPICS => chosen.reuse_ktable_source_topics = true,
                MERGE_REPARTITION_TOPICS => chosen.merge_repartition_topics = true,
                SINGLE_STORE_SELF_JOIN => chosen.single_store_self_join = true,
                other => return Err(invalid(Some(other))),
            }
        }
        Ok(chosen)
    }

    /// Whether no optimization is chosen.
    pub fn is_none(&self) -> bool {
        *self == Self::NONE
    }
}

impl fmt::Display for TopologyOptimizations {
    /// The value that chooses these optimizations: `none`, `all` or the
    /// list, in Kafka's order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::NONE {
            return f.write_str(NO_OPTIMIZATION);
        }
        if *self == Self::ALL {
            return f.write_str(OPTIMIZE);
        }
        let chosen = [
            (self.reuse_ktable_source_topics, REUSE_KTABLE_SOURCE_TOPICS),
            (self.merge_repartition_topics, MERGE_REPARTITION_TOPICS),
            (self.single_store_self_join, SINGLE_STORE_SELF_JOIN),
        ];
        let names: Vec<&str> = chosen
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect();
        f.write_str(&names.join(","))
    }
}

/// Java's `value.split("\\s*,\\s*")`: the parts between commas (with the
/// spaces next to each comma), trailing empty parts removed; a value
/// without a comma is one part, even when empty.
fn java_split_at_commas(value: &str) -> Vec<&str> {
    if !value.contains(',') {
        return vec![value];
    }
    let mut parts: Vec<&str> = value
        .split(',')
        .enumerate()
        .map(|(i, p)| {
            // Only the spaces next to a comma belong to the separator.
            let p = if i == 0 {
                p
            } else {
                p.trim_start_matches(is_java_space)
            };
            p.trim_end_matches(is_java_space)
        })
        .collect();
    // The last part keeps trailing spaces that are not before a comma.
    if let Some(last) = value.rsplit(',').next() {
        let n = parts.len();
        parts[n - 1] = last.trim_start_matches(is_java_space);
    }
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// Java's `\s`: space, tab, newline, vertical tab, form feed, return.
fn is_java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_as_java_does() {
        assert_eq!(java_split_at_commas(""), [""]);
        assert_eq!(java_split_at_commas("all"), ["all"]);
        assert_eq!(java_split_at_commas(" all "), [" all "]);
        assert_eq!(java_split_at_commas("a , b"), ["a", "b"]);
        assert_eq!(java_split_at_commas(" a ,b "), [" a", "b "]);
        assert_eq!(java_split_at_commas("a,"), ["a"]);
        assert_eq!(java_split_at_commas("a,,"), ["a"]);
        assert_eq!(java_split_at_commas(",a"), ["", "a"]);
        assert!(java_split_at_commas(",").is_empty());
        assert!(java_split_at_commas(" , ").is_empty());
    }

    #[test]
    fn reads_values_as_kafka_does() {
        let p = |v| TopologyOptimizations::parse(v);
        assert_eq!(p("none").ok(), Some(TopologyOptimizations::NONE));
        assert_eq!(p("all").ok(), Some(TopologyOptimizations::ALL));
        // An empty list (only commas) chooses nothing, as in Kafka.
        assert_eq!(p(",").ok(), Some(TopologyOptimizations::NONE));
        assert_eq!(
            p("merge.repartition.topics,").ok(),
            Some(TopologyOptimizations {
                merge_repartition_topics: true,
                ..TopologyOptimizations::NONE
            })
        );
        assert_eq!(
            p("reuse.ktable.source.topics,merge.repartition.topics,single.store.self.join").ok(),
            Some(TopologyOptimizations::ALL)
        );
        for bad in [
            "",
            "ALL",
            " all",
            "merge",
            "all,none",
            "none,none",
            "all,merge.repartition.topics",
        ] {
            assert!(p(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn refuses_with_kafkas_messages() {
        let err = TopologyOptimizations::parse("all,none").expect_err("all with none");
        assert_eq!(
            err.to_string(),
            "\"all,none\" is not a valid optimization config. Acceptable values are: \"+NO_OPTIMIZATION+\", \
             \"+OPTIMIZE+\", or a comma separated list of specific optimizations: (\"+REUSE_KTABLE_SOURCE_TOPICS+\", \
             \"+MERGE_REPARTITION_TOPICS+\" + \"SINGLE_STORE_SELF_JOIN+\"). (topology.optimization was \"all,none\": \
             `none` and `all` cannot be combined with other values; use none, all, or a comma-separated list of \
             reuse.ktable.source.topics, merge.repartition.topics and single.store.self.join)"
        );
        let err = TopologyOptimizations::parse("merge.repartition.topics,self.join")
            .expect_err("unknown part");
        assert_eq!(
            err.kafka_message().as_deref(),
            Some(
                "Unrecognized config. Acceptable values are: \"+NO_OPTIMIZATION+\", \"+OPTIMIZE+\", or a comma \
                 separated list of specific optimizations: (\"+REUSE_KTABLE_SOURCE_TOPICS+\", \
                 \"+MERGE_REPARTITION_TOPICS+\" + \"SINGLE_STORE_SELF_JOIN+\")."
            )
        );
        assert!(
            err.to_string()
                .contains("`self.join` is not an optimization")
        );
    }
}
