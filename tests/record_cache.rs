//! Kafka's record cache as its `TopologyTestDriver` runs it (checked
//! against Kafka 4.4.0 by the oracle, `compat/`): one input record's
//! updates to a key come out once, at the end of that record, with the
//! latest value, its timestamp and the headers of the record that wrote
//! it; the changelog gets one record too. Without the cache (per store or
//! for all) every update comes out. The driver's side of it, a commit
//! after every input record, is on the `streams_test::semantics` page.

use std::collections::HashMap;

use pretty_assertions::assert_eq;
use streams_core::dsl::Materialized;
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Produced, StreamsBuilder, StreamsConfig, Topology};
use streams_test::{KeyValue, TestRecord, TopologyTestDriver};

/// Words per user: `flat_map_values` keeps the key, so `group_by_key`
/// needs no repartition and one line updates its user's count once per
/// word.
fn words_per_user(cached: bool) -> Topology {
    let builder = StreamsBuilder::new();
    let store = Materialized::as_("words");
    let store = if cached {
        store
    } else {
        store.with_caching_disabled()
    };
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .group_by_key()
        .count_with(store)
        .to_stream()
        .to_with("counts", Produced::with(StringSerde, I64Serde));
    builder.build().expect("valid topology")
}

fn run(topology: Topology, config: StreamsConfig) -> (Vec<TestRecord<String, i64>>, usize) {
    let driver = TopologyTestDriver::with_config(topology, config).expect("driver");
    let lines = driver.create_input_topic("lines", StringSerde, StringSerde);
    lines.pipe_record(
        TestRecord::key_value("ann", "a b c")
            .at(5)
            .with_header("trace", "1"),
    );
    lines.pipe_record(TestRecord::key_value("bob", "x").at(7));
    let counts = driver.create_output_topic("counts", StringSerde, I64Serde);
    let changelog = driver.create_output_topic("test-app-words-changelog", StringSerde, I64Serde);
    (counts.read_records_to_list(), changelog.queue_size())
}

#[test]
fn one_record_updating_a_key_three_times_gives_one_result() {
    let (out, logged) = run(words_per_user(true), StreamsConfig::default());
    assert_eq!(
        out,
        [
            TestRecord::key_value("ann", 3)
                .at(5)
                .with_header("trace", "1"),
            TestRecord::key_value("bob", 1).at(7),
        ]
    );
    assert_eq!(logged, 2);
}

#[test]
fn without_the_cache_every_update_comes_out() {
    let every = |out: Vec<TestRecord<String, i64>>| -> Vec<(String, i64)> {
        out.into_iter()
            .map(|r| (r.key.expect("key"), r.value.expect("value")))
            .collect()
    };
    let expected = [("ann", 1), ("ann", 2), ("ann", 3), ("bob", 1)]
        .map(|(k, v)| (k.to_owned(), v))
        .to_vec();
    let (out, logged) = run(words_per_user(false), StreamsConfig::default());
    assert_eq!((every(out), logged), (expected.clone(), 4));
    let config = StreamsConfig::default().with_property("statestore.cache.max.bytes", "0");
    let (out, logged) = run(words_per_user(true), config);
    assert_eq!((every(out), logged), (expected.clone(), 4));
    // The older name of the setting works too.
    let config = StreamsConfig::default().with_property("cache.max.bytes.buffering", "0");
    let (out, logged) = run(words_per_user(true), config);
    assert_eq!((every(out), logged), (expected, 4));
}

#[test]
fn deleting_a_row_that_never_existed_says_nothing() {
    let builder = StreamsBuilder::new();
    builder
        .table_consumed::<String, String>(
            "users",
            streams_core::Consumed::with(StringSerde, StringSerde),
            Materialized::as_("users-store"),
        )
        .to_stream()
        .to("users-out");
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let users = driver.create_input_topic("users", StringSerde, StringSerde);
    users.pipe_tombstone("nobody");
    users.pipe_key_value("ann", "Ann");
    users.pipe_tombstone("ann");
    let out = driver.create_output_topic("users-out", StringSerde, StringSerde);
    assert_eq!(
        out.read_key_values_to_list(),
        [KeyValue::pair("ann", "Ann"), KeyValue::tombstone("ann")]
    );
    let changelog =
        driver.create_output_topic("test-app-users-store-changelog", StringSerde, StringSerde);
    assert_eq!(changelog.queue_size(), 2);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The cache changes how many updates come out, never where they
        /// lead: the table read from the output and the store are the
        /// same with and without it, and the cache never emits more.
        #[test]
        fn the_cache_keeps_the_table_the_same(
            lines in proptest::collection::vec((0..3_u8, proptest::collection::vec(0..4_u8, 0..5)), 0..20)
        ) {
            let mut tables = Vec::new();
            for cached in [true, false] {
                let driver = TopologyTestDriver::new(words_per_user(cached)).expect("driver");
                let input = driver.create_input_topic("lines", StringSerde, StringSerde);
                for (user, words) in &lines {
                    let line: Vec<String> = words.iter().map(|w| format!("w{w}")).collect();
                    input.pipe_key_value(format!("u{user}"), line.join(" "));
                }
                let out = driver.create_output_topic("counts", StringSerde, I64Serde);
                let emitted = out.queue_size();
                let table: HashMap<String, Option<i64>> = out.read_key_values_to_map();
                let store: Vec<(String, i64)> = driver
                    .timestamped_key_value_store::<String, i64>("words")
                    .expect("store")
                    .all()
                    .into_iter()
                    .map(|(k, v)| (k, v.value))
                    .collect();
                tables.push((table, store, emitted));
            }
            let (cached, uncached) = (&tables[0], &tables[1]);
            prop_assert_eq!(&cached.0, &uncached.0);
            prop_assert_eq!(&cached.1, &uncached.1);
            prop_assert!(cached.2 <= uncached.2);
        }
    }
}
