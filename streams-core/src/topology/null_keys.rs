//! Kafka's null-key filters at the DSL's repartition topics: a record
//! without a key is dropped before it is written to a repartition topic,
//! unless a join that keeps records without a key is downstream (a
//! stream-stream left or outer join, a stream-table or stream-global-table
//! left join: KIP-962 relaxed their null-key rules in Kafka 3.7). Kafka
//! writes every repartition node with a filter that keeps everything and
//! decides at build (`InternalStreamsBuilder.rewriteRepartitionNodes`,
//! `NodesWithRelaxedNullKeyJoinDownstream`) which filters drop null keys:
//! those from which no such join can be reached, through any number of
//! repartition topics. `describe()` is the same either way.
//!
//! The DSL adds each repartition filter with
//! [`Topology::add_repartition_filter`] and marks each relaxed join with
//! [`Topology::mark_null_key_relaxed_join`]; `StreamsBuilder::build`
//! calls [`Topology::decide_null_key_filters`] on the topology it hands
//! out, after any optimization.
//!
//! ```
//! use streams_core::serde::StringSerde;
//! use streams_core::StreamsBuilder;
//! use streams_test::TopologyTestDriver;
//!
//! // A key change and `repartition()`: the record whose new key is None
//! // never reaches the repartition topic, as in Kafka.
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("in")
//!     .select_key_nullable(|_, v| v.filter(|v| *v != "none").cloned())
//!     .repartition()
//!     .to("out");
//! let driver = TopologyTestDriver::new(builder.build()?)?;
//! let input = driver.create_input_topic("in", StringSerde, StringSerde);
//! input.pipe_values(["a", "none", "b"]);
//! let out = driver.create_output_topic("out", StringSerde, StringSerde);
//! assert_eq!(out.read_values_to_list(), [Some("a".to_owned()), Some("b".to_owned())]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;

use crate::error::Result;
use crate::error::TopologyError;
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;
use crate::topology::{NodeFactory, Topology, TypeSig, processor_factory};

/// Kafka's `KStreamFilter` of a repartition node: `(k, v) -> true`, or
/// `(k, v) -> k != null` once the build decided so.
struct RepartitionFilter {
    drop_null_keys: bool,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for RepartitionFilter {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        if self.drop_null_keys && record.key.is_none() {
            return Ok(());
        }
        ctx.forward(record)
    }
}

/// The repartition filters of a topology and its relaxed joins.
#[derive(Clone, Default)]
pub(crate) struct NullKeyFilters {
    /// Each filter node's name, the factory that keeps every record and
    /// the one that drops records without a key.
    filters: Vec<(String, NodeFactory, NodeFactory)>,
    /// The nodes of joins that keep records without a key.
    relaxed_joins: Vec<String>,
}

impl Topology {
    /// Adds the filter node of a DSL repartition topic, which keeps every
    /// record until [`Topology::decide_null_key_filters`] decides.
    pub(crate) fn add_repartition_filter<K: Clone + 'static, V: Clone + 'static>(
        &mut self,
        name: &str,
        parents: &[&str],
    ) -> std::result::Result<(), TopologyError> {
        let keep = processor_factory::<K, V, K, V, _, _>(|| RepartitionFilter {
            drop_null_keys: false,
        });
        let drop = processor_factory::<K, V, K, V, _, _>(|| RepartitionFilter {
            drop_null_keys: true,
        });
        self.add_node(
            name,
            super::NodeKind::Processor,
            parents,
            Some(TypeSig::of::<K, V>()),
            Some(TypeSig::of::<K, V>()),
            keep.clone(),
        )?;
        self.null_keys.filters.push((name.to_owned(), keep, drop));
        Ok(())
    }

    /// Marks `node` as a join that keeps records without a key: the
    /// repartition filters upstream of it keep them too.
    pub(crate) fn mark_null_key_relaxed_join(&mut self, node: &str) {
        self.null_keys.relaxed_joins.push(node.to_owned());
    }

    /// Makes each repartition filter drop records without a key unless a
    /// relaxed join is downstream of it, following repartition (and any
    /// internal) topics from the sinks that write them to the sources that
    /// read them.
    pub(crate) fn decide_null_key_filters(&mut self) {
        if self.null_keys.filters.is_empty() {
            return;
        }
        let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
        for index in 0..self.nodes.len() {
            if !self.is_sink(index) {
                for topic in self.internal_topics_of(index) {
                    readers.entry(topic).or_default().push(index);
                }
            }
        }
        let relaxed: Vec<usize> = self
            .null_keys
            .relaxed_joins
            .iter()
            .filter_map(|n| self.index.get(n).copied())
            .collect();
        // Whether a relaxed join is reachable from each node, found once.
        let mut reaches: Vec<Option<bool>> = vec![None; self.nodes.len()];
        let mut decisions = Vec::new();
        for (name, keep, drop) in &self.null_keys.filters {
            let Some(&index) = self.index.get(name) else {
                continue; // rewritten away by an optimization
            };
            let keeps = self.reaches_relaxed(index, &relaxed, &readers, &mut reaches);
            decisions.push((index, if keeps { keep.clone() } else { drop.clone() }));
        }
        for (index, factory) in decisions {
            std::rc::Rc::make_mut(&mut self.nodes[index]).factory = factory;
        }
    }

    /// Whether a node in `relaxed` is `index` or downstream of it.
    fn reaches_relaxed(
        &self,
        index: usize,
        relaxed: &[usize],
        readers: &HashMap<&str, Vec<usize>>,
        reaches: &mut Vec<Option<bool>>,
    ) -> bool {
        if let Some(known) = reaches[index] {
            return known;
        }
        // Not reachable until shown otherwise (also guards a cycle).
        reaches[index] = Some(false);
        let mut next: Vec<usize> = self.nodes[index].children.clone();
        if self.is_sink(index) {
            for topic in self.internal_topics_of(index) {
                next.extend(readers.get(topic).into_iter().flatten());
            }
        }
        let found = relaxed.contains(&index)
            || next
                .into_iter()
                .any(|n| self.reaches_relaxed(n, relaxed, readers, reaches));
        reaches[index] = Some(found);
        found
    }
}
