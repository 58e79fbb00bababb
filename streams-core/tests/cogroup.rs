//! Cogroup (KIP-150): ports of Kafka's `CogroupedKStreamImplTest` with its
//! exact `describe()` texts and outputs, and a property test against a
//! model that folds each stream's records into one aggregate per key.

// A failing set-up step fails the test at its line.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::error::Error;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use streams_core::dsl::{Consumed, Grouped, Materialized, Produced};
use streams_core::serde::{I32Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::{KeyValue, TestRecord, TopologyTestDriver};

type TestResult = Result<(), Box<dyn Error>>;
type S = String;

/// Kafka's `STRING_AGGREGATOR`: `aggregate + value`.
fn append(_: &S, v: &S, agg: S) -> S {
    agg + v
}

/// Kafka's `STRING_SUM_AGGREGATOR`: `aggregate + Integer.parseInt(value)`.
fn parse_sum(_: &S, v: &S, agg: i32) -> i32 {
    agg + v.parse::<i32>().unwrap_or(0)
}

/// The records of `topic` as (key, value, timestamp).
fn read<V: 'static + Clone>(
    driver: &TopologyTestDriver,
    topic: &str,
    serde: impl streams_core::serde::Serde<V>,
) -> Vec<(S, V, i64)> {
    driver
        .create_output_topic(topic, StringSerde, serde)
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key.unwrap(), r.value.unwrap(), r.timestamp.unwrap()))
        .collect()
}

fn kvt<V>(k: &str, v: V, t: i64) -> (S, V, i64) {
    (k.to_owned(), v, t)
}

#[test]
fn should_name_processors_and_store_based_on_named_parameter() -> TestResult {
    let b = StreamsBuilder::new();
    let one = b.stream::<S, S>("one").group_by_key();
    let two = b.stream::<S, S>("two").group_by_key();
    one.cogroup(append)
        .cogroup(two, append)
        .named("test")
        .aggregate_with(String::new, Materialized::as_("store"))
        .to_stream()
        .to("output");
    assert_eq!(
        b.build()?.describe().to_string(),
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n\
         \x20     --> test-cogroup-agg-0\n\
         \x20   Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n\
         \x20     --> test-cogroup-agg-1\n\
         \x20   Processor: test-cogroup-agg-0 (stores: [store])\n\
         \x20     --> test-cogroup-merge\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: test-cogroup-agg-1 (stores: [store])\n\
         \x20     --> test-cogroup-merge\n\
         \x20     <-- KSTREAM-SOURCE-0000000001\n\
         \x20   Processor: test-cogroup-merge (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000005\n\
         \x20     <-- test-cogroup-agg-0, test-cogroup-agg-1\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000005 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000006\n\
         \x20     <-- test-cogroup-merge\n\
         \x20   Sink: KSTREAM-SINK-0000000006 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000005\n\n"
    );
    Ok(())
}

#[test]
fn should_name_repartition_topic() -> TestResult {
    let b = StreamsBuilder::new();
    let (one, two) = (b.stream::<S, S>("one"), b.stream::<S, S>("two"));
    let one = one
        .map(|k, v| (v.clone(), k.cloned().unwrap_or_default()))
        .group_by_key_with(Grouped::as_("repartition-test"));
    let two = two.group_by_key();
    one.cogroup(append)
        .cogroup(two, append)
        .aggregate(String::new)
        .to_stream()
        .to("output");
    let text = b.build()?.describe().to_string();
    assert_eq!(
        text,
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n\
         \x20     --> KSTREAM-MAP-0000000002\n\
         \x20   Processor: KSTREAM-MAP-0000000002 (stores: [])\n\
         \x20     --> repartition-test-repartition-filter\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: repartition-test-repartition-filter (stores: [])\n\
         \x20     --> repartition-test-repartition-sink\n\
         \x20     <-- KSTREAM-MAP-0000000002\n\
         \x20   Sink: repartition-test-repartition-sink (topic: repartition-test-repartition)\n\
         \x20     <-- repartition-test-repartition-filter\n\n\
         \x20 Sub-topology: 1\n\
         \x20   Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-0000000008\n\
         \x20   Source: repartition-test-repartition-source (topics: [repartition-test-repartition])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-0000000007\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000009\n\
         \x20     <-- repartition-test-repartition-source\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000009\n\
         \x20     <-- KSTREAM-SOURCE-0000000001\n\
         \x20   Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000010\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000010 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000011\n\
         \x20     <-- COGROUPKSTREAM-MERGE-0000000009\n\
         \x20   Sink: KSTREAM-SINK-0000000011 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000010\n\n"
    );
    Ok(())
}

/// One re-keyed grouped stream in two cogroups: each cogroup has its own
/// repartition topic, named after its own store.
#[test]
fn should_insert_repartition_topics_for_upstream_key_modification_with_grouped_reused_in_same_cogroups()
-> TestResult {
    let b = StreamsBuilder::new();
    let (one, two) = (b.stream::<S, S>("one"), b.stream::<S, S>("two"));
    let one = one
        .map(|k, v| (v.clone(), k.cloned().unwrap_or_default()))
        .group_by_key();
    let two = two.group_by_key();
    let cogrouped_two = one
        .clone()
        .cogroup(append)
        .cogroup(two.clone(), append)
        .aggregate(String::new);
    let cogrouped_one = one
        .cogroup(append)
        .cogroup(two, append)
        .aggregate(String::new);
    cogrouped_one.to_stream().to("output");
    cogrouped_two.to_stream().to("OUTPUT2");
    let text = b.build()?.describe().to_string();
    assert_eq!(
        text,
        "Topologies:\n\
         \x20  Sub-topology: 0\n\
         \x20   Source: KSTREAM-SOURCE-0000000000 (topics: [one])\n\
         \x20     --> KSTREAM-MAP-0000000002\n\
         \x20   Processor: KSTREAM-MAP-0000000002 (stores: [])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter, COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n\
         \x20     <-- KSTREAM-SOURCE-0000000000\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter (stores: [])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink\n\
         \x20     <-- KSTREAM-MAP-0000000002\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter (stores: [])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-sink\n\
         \x20     <-- KSTREAM-MAP-0000000002\n\
         \x20   Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition)\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter\n\
         \x20   Sink: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-sink (topic: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition)\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-filter\n\n\
         \x20 Sub-topology: 1\n\
         \x20   Source: KSTREAM-SOURCE-0000000001 (topics: [two])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-0000000008, COGROUPKSTREAM-AGGREGATE-0000000015\n\
         \x20   Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-0000000007\n\
         \x20   Source: COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-source (topics: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition])\n\
         \x20     --> COGROUPKSTREAM-AGGREGATE-0000000014\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000007 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000009\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-source\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000008 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000003])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000009\n\
         \x20     <-- KSTREAM-SOURCE-0000000001\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000014 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000016\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010-repartition-source\n\
         \x20   Processor: COGROUPKSTREAM-AGGREGATE-0000000015 (stores: [COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000010])\n\
         \x20     --> COGROUPKSTREAM-MERGE-0000000016\n\
         \x20     <-- KSTREAM-SOURCE-0000000001\n\
         \x20   Processor: COGROUPKSTREAM-MERGE-0000000009 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000019\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-0000000007, COGROUPKSTREAM-AGGREGATE-0000000008\n\
         \x20   Processor: COGROUPKSTREAM-MERGE-0000000016 (stores: [])\n\
         \x20     --> KTABLE-TOSTREAM-0000000017\n\
         \x20     <-- COGROUPKSTREAM-AGGREGATE-0000000014, COGROUPKSTREAM-AGGREGATE-0000000015\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000017 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000018\n\
         \x20     <-- COGROUPKSTREAM-MERGE-0000000016\n\
         \x20   Processor: KTABLE-TOSTREAM-0000000019 (stores: [])\n\
         \x20     --> KSTREAM-SINK-0000000020\n\
         \x20     <-- COGROUPKSTREAM-MERGE-0000000009\n\
         \x20   Sink: KSTREAM-SINK-0000000018 (topic: output)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000017\n\
         \x20   Sink: KSTREAM-SINK-0000000020 (topic: OUTPUT2)\n\
         \x20     <-- KTABLE-TOSTREAM-0000000019\n\n"
    );
    Ok(())
}

fn single() -> Result<TopologyTestDriver, Box<dyn Error>> {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("one")
        .group_by_key()
        .cogroup(append)
        .aggregate(String::new)
        .to_stream()
        .to("output");
    Ok(TopologyTestDriver::new(b.build()?)?)
}

#[test]
fn should_cogroup_and_aggregate_single_kstreams() -> TestResult {
    let driver = single()?;
    let one = driver.create_input_topic("one", StringSerde, StringSerde);
    for (k, v) in [("k1", "A"), ("k2", "B"), ("k2", "B"), ("k1", "A")] {
        one.pipe_key_value_at(k, v, 0);
    }
    assert_eq!(
        read(&driver, "output", StringSerde),
        [
            kvt("k1", s("A"), 0),
            kvt("k2", s("B"), 0),
            kvt("k2", s("BB"), 0),
            kvt("k1", s("AA"), 0)
        ]
    );
    Ok(())
}

fn s(v: &str) -> String {
    v.to_owned()
}

#[test]
fn cogroup_handles_null_values() -> TestResult {
    let driver = single()?;
    let one = driver.create_input_topic("one", StringSerde, StringSerde);
    one.pipe_key_value_at("k1", "A", 0);
    one.pipe_key_value_at("k2", "B", 0);
    one.pipe_record(TestRecord::tombstone(s("k2")).at(0));
    one.pipe_key_value_at("k2", "B", 0);
    one.pipe_key_value_at("k1", "A", 0);
    assert_eq!(
        read(&driver, "output", StringSerde),
        [
            kvt("k1", s("A"), 0),
            kvt("k2", s("B"), 0),
            kvt("k2", s("BB"), 0),
            kvt("k1", s("AA"), 0)
        ]
    );
    assert_eq!(driver.metrics().dropped_records, 1);
    Ok(())
}

fn two_streams() -> Result<TopologyTestDriver, Box<dyn Error>> {
    let b = StreamsBuilder::new();
    let one = b.stream::<S, S>("one").group_by_key();
    let two = b.stream::<S, S>("two").group_by_key();
    one.cogroup(append)
        .cogroup(two, append)
        .aggregate(String::new)
        .to_stream()
        .to("output");
    Ok(TopologyTestDriver::new(b.build()?)?)
}

#[test]
fn should_cogroup_and_aggregate_two_kstreams_with_distinct_keys() -> TestResult {
    let driver = two_streams()?;
    let one = driver.create_input_topic("one", StringSerde, StringSerde);
    let two = driver.create_input_topic("two", StringSerde, StringSerde);
    for t in [0, 1, 10, 100] {
        one.pipe_key_value_at("k1", "A", t);
    }
    for t in [100, 200, 1, 500, 500, 100] {
        two.pipe_key_value_at("k2", "B", t);
    }
    assert_eq!(
        read(&driver, "output", StringSerde),
        [
            kvt("k1", s("A"), 0),
            kvt("k1", s("AA"), 1),
            kvt("k1", s("AAA"), 10),
            kvt("k1", s("AAAA"), 100),
            kvt("k2", s("B"), 100),
            kvt("k2", s("BB"), 200),
            kvt("k2", s("BBB"), 200),
            kvt("k2", s("BBBB"), 500),
            kvt("k2", s("BBBBB"), 500),
            kvt("k2", s("BBBBBB"), 500),
        ]
    );
    Ok(())
}

#[test]
fn should_cogroup_and_aggregate_two_kstreams_with_shared_keys() -> TestResult {
    let driver = two_streams()?;
    let one = driver.create_input_topic("one", StringSerde, StringSerde);
    let two = driver.create_input_topic("two", StringSerde, StringSerde);
    for (k, t) in [("k1", 0), ("k2", 1), ("k1", 10), ("k2", 100)] {
        one.pipe_key_value_at(k, "A", t);
    }
    for (k, t) in [
        ("k2", 100),
        ("k2", 200),
        ("k1", 1),
        ("k2", 500),
        ("k1", 500),
        ("k2", 500),
        ("k3", 500),
        ("k2", 100),
    ] {
        two.pipe_key_value_at(k, "B", t);
    }
    let out = read(&driver, "output", StringSerde);
    assert_eq!(
        out[..10],
        [
            kvt("k1", s("A"), 0),
            kvt("k2", s("A"), 1),
            kvt("k1", s("AA"), 10),
            kvt("k2", s("AA"), 100),
            kvt("k2", s("AAB"), 100),
            kvt("k2", s("AABB"), 200),
            kvt("k1", s("AAB"), 10),
            kvt("k2", s("AABBB"), 500),
            kvt("k1", s("AABB"), 500),
            kvt("k2", s("AABBBB"), 500),
        ]
    );
    Ok(())
}

#[test]
fn should_cogroup_streams_with_different_input_types() -> TestResult {
    let b = StreamsBuilder::new();
    let one = b.stream::<S, S>("one").group_by_key();
    let two = b
        .stream_with::<S, i32>("two", Consumed::with(StringSerde, I32Serde))
        .group_by_key();
    one.cogroup(parse_sum)
        .cogroup(two, |_, v: &i32, agg: i32| agg + v)
        .aggregate_with(|| 0, Materialized::as_("store1").with_value_serde(I32Serde))
        .to_stream()
        .to_with("output", Produced::with(StringSerde, I32Serde));
    let driver = TopologyTestDriver::new(b.build()?)?;
    let one = driver.create_input_topic("one", StringSerde, StringSerde);
    let two = driver.create_input_topic("two", StringSerde, I32Serde);
    for (k, t) in [("k1", 0), ("k2", 1), ("k1", 10), ("k2", 100)] {
        one.pipe_key_value_at(k, "1", t);
    }
    for (k, v, t) in [
        ("k2", 2, 100),
        ("k2", 2, 200),
        ("k1", 2, 1),
        ("k2", 2, 500),
        ("k1", 2, 500),
        ("k2", 3, 500),
        ("k3", 2, 500),
        ("k2", 2, 100),
    ] {
        two.pipe_key_value_at(k, v, t);
    }
    let out = read(&driver, "output", I32Serde);
    assert_eq!(
        out[..11],
        [
            kvt("k1", 1, 0),
            kvt("k2", 1, 1),
            kvt("k1", 2, 10),
            kvt("k2", 2, 100),
            kvt("k2", 4, 100),
            kvt("k2", 6, 200),
            kvt("k1", 4, 10),
            kvt("k2", 8, 500),
            kvt("k1", 6, 500),
            kvt("k2", 11, 500),
            kvt("k3", 2, 500),
        ]
    );
    let store = driver.timestamped_key_value_store::<S, i32>("store1")?;
    assert_eq!(
        store.get(&s("k2")).map(|v| (v.value, v.timestamp)),
        Some((13, 500))
    );
    Ok(())
}

/// The cogroup's store is shared by its aggregations: over many records
/// of three streams (keys, values, timestamps at random), the table, its
/// store and its changelog equal a fold of each key's records in order,
/// with the cache on and off.
mod model {
    use super::*;

    #[derive(Debug, Clone)]
    struct In {
        stream: usize,
        key: u8,
        value: Option<u8>,
        ts: i64,
    }

    fn input() -> impl Strategy<Value = In> {
        (
            0_usize..3,
            0_u8..4,
            prop::option::weighted(0.9, 0_u8..10),
            0_i64..50,
        )
            .prop_map(|(stream, key, value, ts)| In {
                stream,
                key,
                value,
                ts,
            })
    }

    fn check(inputs: &[In], cache: bool) -> Result<(), TestCaseError> {
        let b = StreamsBuilder::new();
        let a = b.stream::<S, S>("a").group_by_key();
        let c = b.stream::<S, S>("b").group_by_key();
        let d = b
            .stream_with::<S, i32>("c", Consumed::with(StringSerde, I32Serde))
            .group_by_key();
        a.cogroup(|_, v: &S, agg: S| format!("{agg}a{v}"))
            .cogroup(c, |_, v: &S, agg: S| format!("{agg}b{v}"))
            .cogroup(d, |_, v: &i32, agg: S| format!("{agg}c{v}"))
            .aggregate_with(String::new, Materialized::as_("agg"))
            .to_stream()
            .to("out");
        let mut config = StreamsConfig::new("app");
        if !cache {
            config = config.with_property("statestore.cache.max.bytes", "0");
        }
        let driver =
            TopologyTestDriver::with_config(b.build().expect("builds"), config).expect("starts");
        let topics = (
            driver.create_input_topic("a", StringSerde, StringSerde),
            driver.create_input_topic("b", StringSerde, StringSerde),
            driver.create_input_topic("c", StringSerde, I32Serde),
        );
        let mut model: BTreeMap<S, (S, i64)> = BTreeMap::new();
        let mut updates = Vec::new();
        for i in inputs {
            let key = format!("k{}", i.key);
            match (i.stream, i.value) {
                (0, v) => topics.0.pipe_record(
                    TestRecord::new(Some(key.clone()), v.map(|v| v.to_string())).at(i.ts),
                ),
                (1, v) => topics.1.pipe_record(
                    TestRecord::new(Some(key.clone()), v.map(|v| v.to_string())).at(i.ts),
                ),
                (_, v) => topics
                    .2
                    .pipe_record(TestRecord::new(Some(key.clone()), v.map(i32::from)).at(i.ts)),
            }
            let Some(v) = i.value else { continue };
            let tag = ["a", "b", "c"][i.stream];
            let entry = model.entry(key.clone()).or_insert((String::new(), i.ts));
            entry.0 = format!("{}{tag}{v}", entry.0);
            entry.1 = entry.1.max(i.ts);
            updates.push(KeyValue::pair(key, entry.0.clone()));
        }
        let out = driver.create_output_topic("out", StringSerde, StringSerde);
        prop_assert_eq!(out.read_key_values_to_list(), updates);
        let store = driver
            .timestamped_key_value_store::<S, S>("agg")
            .expect("store");
        let stored: BTreeMap<S, (S, i64)> = store
            .all()
            .into_iter()
            .map(|(k, v)| (k, (v.value, v.timestamp)))
            .collect();
        prop_assert_eq!(stored, model);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, rng_seed: RngSeed::Fixed(0x00c0_6209), ..ProptestConfig::default() })]

        #[test]
        fn cogroup_equals_a_fold_per_key(inputs in prop::collection::vec(input(), 0..40)) {
            check(&inputs, true)?;
            check(&inputs, false)?;
        }
    }
}
