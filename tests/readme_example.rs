// The test shown in README.md, verbatim (checked by `readme_block_is_this_file`).
use streams_core::StreamsBuilder;
use streams_core::serde::StringSerde;
use streams_test::{KeyValue, TopologyTestDriver};

#[test]
fn shouts_long_words() -> Result<(), Box<dyn std::error::Error>> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("words")
        .filter(|_, word| word.len() > 3)
        .map_values(|word| word.to_uppercase())
        .to("shouts");
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let words = driver.create_input_topic("words", StringSerde, StringSerde);
    let shouts = driver.create_output_topic("shouts", StringSerde, StringSerde);

    words.pipe_key_values([("a", "hi"), ("b", "hello"), ("c", "world")]);

    assert_eq!(
        shouts.read_key_values_to_list(),
        [KeyValue::pair("b", "HELLO"), KeyValue::pair("c", "WORLD")]
    );
    assert!(shouts.is_empty());
    Ok(())
}

#[test]
fn readme_block_is_this_file() {
    let readme = include_str!("../README.md");
    let this = include_str!("readme_example.rs");
    let start = readme.find("```rust\n").map(|i| i + "```rust\n".len());
    let block = start.and_then(|s| readme[s..].find("```").map(|e| &readme[s..s + e]));
    let body = this
        .split_once('\n')
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.split("\n#[test]\nfn readme_block_is_this_file").next());
    assert_eq!(
        block.map(|b| b.trim_end()),
        body.map(|b| b.trim_end()),
        "README.md's test and tests/readme_example.rs differ; keep them the same"
    );
}
