//! Runs the word-count topology in the test driver and prints what goes in,
//! every count update that comes out, and the final counts in the store:
//! `cargo run --example word_count`.

use streams_core::StreamsConfig;
use streams_core::serde::{I64Serde, StringSerde};
use streams_examples::word_count::{self, INPUT, OUTPUT, STORE};
use streams_test::{TestRecord, TopologyTestDriver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let driver = TopologyTestDriver::with_config(
        word_count::topology()?,
        StreamsConfig::new("streams-wordcount"),
    )?;
    let lines = driver.create_input_topic(INPUT, StringSerde, StringSerde);
    let counts = driver.create_output_topic(OUTPUT, StringSerde, I64Serde);

    println!("piped into `{INPUT}`:");
    for line in [
        "All streams lead to Kafka",
        "Hello Kafka Streams",
        "Join Kafka Summit",
    ] {
        println!("  {line}");
        lines.try_pipe_record(TestRecord::value(line))?;
    }

    println!("read from `{OUTPUT}` (every update of a count):");
    for update in counts.read_key_values_to_list() {
        let count = update
            .value
            .map_or_else(|| "null".into(), |c| c.to_string());
        println!("  {} -> {count}", update.key.unwrap_or_default());
    }

    println!("store `{STORE}` (the final count per word):");
    for (word, count) in driver
        .timestamped_key_value_store::<String, i64>(STORE)?
        .to_map()
    {
        println!("  {word} -> {count}");
    }
    Ok(())
}
