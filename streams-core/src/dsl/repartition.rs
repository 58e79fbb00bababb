//! The repartition plumbing: sending a stream through an internal
//! `<name>-repartition` topic (a filter, a sink and a source, named as
//! Kafka names them), which grouping, joins and `repartition` use after a
//! key change.

use std::any::Any;
use std::rc::Rc;

use crate::dsl::KStream;
use crate::dsl::optimize::{MakeRepartition, RepartitionDef, RepartitionNames};
use crate::error::TopologyError;
use crate::processor::partitioner::PartitionerRef;
use crate::serde::SerdeRef;
use crate::topology::{NodeKind, SinkTopic, TopicName, Topology, TypeSig};

/// Whether a repartition prefix is a generated name (`KSTREAM...-0000000007`),
/// in which case the repartition nodes keep their generated names.
pub(crate) fn is_generated_name(prefix: &str) -> bool {
    prefix.starts_with("KSTREAM")
        && prefix.len() > 11
        && prefix.as_bytes()[prefix.len() - 11] == b'-'
        && prefix[prefix.len() - 10..]
            .bytes()
            .all(|b| b.is_ascii_digit())
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Sends the stream through the internal topic `<prefix>-repartition`
    /// with Kafka's node names: generated ones when `prefix` is a
    /// generated name, `<topic>-filter/-sink/-source` otherwise. Three
    /// numbers of the counter are taken either way. A repartition topic of
    /// grouping, joins, `to_table` or cogroup (Kafka's
    /// `OptimizableRepartitionNode`): `merge.repartition.topics` may merge
    /// it with others.
    pub(crate) fn through_internal_topic(
        &self,
        prefix: &str,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
        partitioner: Option<PartitionerRef<K, V>>,
    ) -> KStream<K, V> {
        self.through_topic(prefix, key_serde, value_serde, partitioner, true)
    }

    /// As [`through_internal_topic`](Self::through_internal_topic), for
    /// `repartition()`: a topic no optimization merges (Kafka's
    /// `UnoptimizableRepartitionNode`).
    pub(crate) fn through_repartition_topic(
        &self,
        prefix: &str,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
        partitioner: Option<PartitionerRef<K, V>>,
    ) -> KStream<K, V> {
        self.through_topic(prefix, key_serde, value_serde, partitioner, false)
    }

    fn through_topic(
        &self,
        prefix: &str,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
        partitioner: Option<PartitionerRef<K, V>>,
        optimizable: bool,
    ) -> KStream<K, V> {
        let topic = if prefix.ends_with("-repartition") {
            prefix.to_owned()
        } else {
            format!("{prefix}-repartition")
        };
        let gen_sink = self.builder().new_name("KSTREAM-SINK-");
        let gen_filter = self.builder().new_name("KSTREAM-FILTER-");
        let gen_source = self.builder().new_name("KSTREAM-SOURCE-");
        let (sink, filter, source) = if is_generated_name(prefix) {
            (gen_sink, gen_filter, gen_source)
        } else {
            (
                format!("{topic}-sink"),
                format!("{topic}-filter"),
                format!("{topic}-source"),
            )
        };
        let names = RepartitionNames {
            topic,
            filter,
            sink,
            source,
        };
        let parent = self.node_name().to_owned();
        let (ks, vs) = (key_serde.clone(), value_serde.clone());
        self.builder()
            .with_topology(|t| add_repartition::<K, V>(t, &names, ks, vs, partitioner, &[&parent]));
        let make: MakeRepartition = Rc::new(|t, names, ks, vs, parents| {
            let ks = ks.and_then(|s| s.downcast_ref::<SerdeRef<K>>()).cloned();
            let vs = vs.and_then(|s| s.downcast_ref::<SerdeRef<V>>()).cloned();
            add_repartition::<K, V>(t, names, ks, vs, None, parents)
        });
        let source = names.source.clone();
        self.builder().record(|m| {
            m.repartitions.push(RepartitionDef {
                names,
                optimizable,
                types: TypeSig::of::<K, V>(),
                key_serde: key_serde
                    .as_ref()
                    .map(|s| Rc::new(s.clone()) as Rc<dyn Any>),
                value_serde: value_serde
                    .as_ref()
                    .map(|s| Rc::new(s.clone()) as Rc<dyn Any>),
                make,
            });
        });
        KStream::new(self.builder().clone(), source, key_serde, value_serde)
    }
}

/// Adds a repartition topic's filter, sink and source, as Kafka writes an
/// `OptimizableRepartitionNode`.
fn add_repartition<K: Clone + 'static, V: Clone + 'static>(
    t: &mut Topology,
    names: &RepartitionNames,
    key_serde: Option<SerdeRef<K>>,
    value_serde: Option<SerdeRef<V>>,
    partitioner: Option<PartitionerRef<K, V>>,
    parents: &[&str],
) -> Result<(), TopologyError> {
    t.add_repartition_filter::<K, V>(&names.filter, parents)?;
    t.add_typed_sink::<K, V>(
        &names.sink,
        SinkTopic::Fixed(TopicName::internal(names.topic.clone())),
        key_serde.clone(),
        value_serde.clone(),
        partitioner,
        &[&names.filter],
    )?;
    let kind = NodeKind::Source {
        topics: vec![TopicName::internal(names.topic.clone())],
        pattern: None,
    };
    t.add_typed_source::<K, V>(&names.source, kind, key_serde, value_serde)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_recognized() {
        assert!(is_generated_name(
            "KSTREAM-AGGREGATE-STATE-STORE-0000000003"
        ));
        assert!(!is_generated_name("counts-store"));
        assert!(!is_generated_name("KSTREAM-X"));
    }
}
