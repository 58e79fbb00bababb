//! The plain-and-fluent test shown in README.md, verbatim (checked by `readme_rust_blocks_are_tested`).
use streams_core::StreamsConfig;
use streams_core::serde::{I64Serde, StringSerde};
use streams_examples::word_count::{self, INPUT, OUTPUT, STORE};
use streams_test::{KeyValue, TestTopology, TopologyTestDriver};

#[test]
fn counts_words_plain() -> streams_core::Result<()> {
    let driver = TopologyTestDriver::with_config(
        word_count::topology()?,
        StreamsConfig::new("streams-wordcount"),
    )?;
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
    assert!(output.is_empty());
    // The count's store, its values only, as Kafka's getKeyValueStore.
    let store = driver.key_value_store::<String, i64>(STORE)?;
    assert_eq!(store.get("a"), Some(2));
    Ok(())
}

#[test]
fn counts_words_fluent() -> streams_core::Result<()> {
    let topology = TestTopology::new(word_count::topology)?;
    topology.input().add_value("a b a");
    topology
        .output()
        .with_value_serde(I64Serde)
        .expect_records([("a", 1), ("b", 1), ("a", 2)])
        .expect_no_more_records();
    topology
        .store::<String, i64>(STORE)
        .has_entry("a", 2)
        .has_size(2);
    Ok(())
}

#[test]
fn readme_rust_blocks_are_tested() {
    // Every ```rust block of the README is the body of one of these files,
    // each compiled and run as a test (the last one compiled as an example
    // of streams-kafka: it needs a real cluster), in this order.
    let tested = [
        (
            "tests/readme_example.rs",
            include_str!("../../tests/readme_example.rs"),
        ),
        (
            "examples/tests/readme_fluent.rs",
            include_str!("readme_fluent.rs"),
        ),
        (
            "tests/readme_stateful.rs",
            include_str!("../../tests/readme_stateful.rs"),
        ),
        (
            "tests/readme_runtime.rs",
            include_str!("../../tests/readme_runtime.rs"),
        ),
        (
            "streams-kafka/examples/word_count.rs",
            include_str!("../../streams-kafka/examples/word_count.rs"),
        ),
    ];
    let readme = include_str!("../../README.md");
    let blocks: Vec<&str> = readme
        .split("```rust\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(block, _)| block.trim_end()))
        .collect();
    let bodies: Vec<&str> = tested
        .iter()
        .map(|(_, file)| {
            let body = file.split_once('\n').map_or("", |(_, rest)| rest);
            let body = body.split("\n#[test]\nfn readme_").next().unwrap_or(body);
            body.trim_end()
        })
        .collect();
    assert_eq!(
        blocks,
        bodies,
        "README.md's rust blocks and {:?} differ; keep them the same",
        tested.map(|(name, _)| name)
    );
}
