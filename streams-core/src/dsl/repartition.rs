//! The repartition plumbing: sending a stream through an internal
//! `<name>-repartition` topic (a filter, a sink and a source, named as
//! Kafka names them), which grouping, joins and `repartition` use after a
//! key change.

use crate::dsl::KStream;
use crate::dsl::processors::PassThrough;
use crate::processor::partitioner::PartitionerRef;
use crate::serde::SerdeRef;
use crate::topology::{NodeKind, SinkTopic, TopicName};

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
    /// numbers of the counter are taken either way.
    pub(crate) fn through_internal_topic(
        &self,
        prefix: &str,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
        partitioner: Option<PartitionerRef<K, V>>,
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
        let parent = self.node_name().to_owned();
        let (ks, vs) = (key_serde.clone(), value_serde.clone());
        self.builder().with_topology(|t| {
            t.add_typed_processor::<K, V, K, V, PassThrough, _>(
                &filter,
                || PassThrough,
                &[&parent],
            )?;
            t.add_typed_sink::<K, V>(
                &sink,
                SinkTopic::Fixed(TopicName::internal(topic.clone())),
                ks,
                vs,
                partitioner,
                &[&filter],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<K, V>(&source, kind, key_serde.clone(), value_serde.clone())
        });
        KStream::new(self.builder().clone(), source, key_serde, value_serde)
    }
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
