//! The driver over the simulated broker: a store restored from its
//! compacted changelog equals the store that wrote it, for any input,
//! whatever the cleaner's delete horizon.

use std::collections::BTreeMap;

use proptest::prelude::*;
use streams_broker::{Cluster, TopicPartition};
use streams_core::dsl::Materialized;
use streams_core::serde::StringSerde;
use streams_core::{StreamsBuilder, Topology};
use streams_test::{TestRecord, TopologyTestDriver};

const STORE: &str = "latest";
const CHANGELOG: &str = "test-app-latest-changelog";

/// The latest value per key, kept by a reduce (a stream aggregation: input
/// tombstones are dropped, as Kafka drops them).
fn table() -> Topology {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .group_by_key()
        .reduce_with(|_, new| new.clone(), Materialized::as_(STORE));
    builder.build().expect("valid topology")
}

fn store_of(driver: &TopologyTestDriver) -> BTreeMap<String, String> {
    driver
        .timestamped_key_value_store::<String, String>(STORE)
        .expect("the store exists")
        .to_map()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_store_restored_from_a_compacted_changelog_equals_the_store_that_wrote_it(
        writes in proptest::collection::vec(("[a-f]", proptest::option::weighted(0.75, "[a-z]{1,4}")), 1..80),
        delete_retention_ms in 0i64..3,
    ) {
        let cluster = Cluster::builder().log_cleaner_enable(false).build();
        let first = TopologyTestDriver::builder(table()).cluster(cluster.clone()).build().expect("driver");
        let input = first.create_input_topic("in", StringSerde, StringSerde);
        for (i, (key, value)) in writes.iter().enumerate() {
            input.pipe_record(TestRecord::new(Some(key.clone()), value.clone()).at(i as i64));
        }
        let written = store_of(&first);
        first.close().expect("close");

        let changelog = TopicPartition::new(CHANGELOG, 0);
        // No value ever reached the store: no changelog to compact.
        prop_assume!(cluster.topic_names().iter().any(|t| t == CHANGELOG));
        cluster.admin().incremental_alter_configs(CHANGELOG, [
            streams_broker::AlterConfigOp::Set("min.cleanable.dirty.ratio".into(), "0.01".into()),
            streams_broker::AlterConfigOp::Set("delete.retention.ms".into(), delete_retention_ms.to_string()),
        ]).expect("configs");
        cluster.roll(&changelog).expect("roll");
        cluster.run_cleaner();
        // Past the horizon, a second cleaning of a dirty log removes the
        // tombstones too: the restored store must not care.
        cluster.advance_ms(10);
        cluster.producer().send(streams_broker::ProducerRecord::new(CHANGELOG, "zz-unrelated", "x")).expect("send");
        cluster.roll(&changelog).expect("roll");
        cluster.run_cleaner();
        let after = cluster.log_records(&changelog).expect("records");
        // Compaction left at most one record per key.
        let mut keys: Vec<_> = after.iter().map(|r| r.key.clone()).collect();
        keys.dedup();
        prop_assert_eq!(keys.len(), after.len());

        let second = TopologyTestDriver::builder(table()).cluster(cluster.clone()).build().expect("driver");
        let mut restored = store_of(&second);
        restored.remove("zz-unrelated");
        prop_assert_eq!(restored, written);
    }
}
