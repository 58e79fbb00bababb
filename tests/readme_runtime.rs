// The runtime test shown in README.md, verbatim (checked by `readme_rust_blocks_are_tested`).
use streams_core::dsl::Produced;
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::app::StreamsCluster;

#[test]
fn word_count_survives_a_crash() -> Result<(), Box<dyn std::error::Error>> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|l: &String| l.split(' ').map(str::to_owned).collect::<Vec<_>>())
        .group_by(|_, word| word.clone())
        .count()
        .to_stream()
        .to_with("counts", Produced::with(StringSerde, I64Serde));
    let topology = builder.build()?;

    // Two instances over 4 partitions, exactly once.
    let mut app = StreamsCluster::new();
    app.create_topic("lines", 4)?;
    app.create_topic("counts", 4)?;
    let config =
        StreamsConfig::new("word-count").with_property("processing.guarantee", "exactly_once_v2");
    app.start("a", &topology, config.clone())?;
    app.start("b", &topology, config)?;
    let lines = app.producer("lines", StringSerde, StringSerde);
    lines.send(&"1".to_owned(), Some(&"to be or not to be".to_owned()), 0)?;
    app.run_until_idle()?;

    // b dies mid-stream; after its session times out, a does its work.
    lines.send(&"2".to_owned(), Some(&"to see".to_owned()), 1)?;
    app.crash("b")?;
    app.advance(45_000);
    app.run_until_idle()?;

    let counts = app.latest_by_key("counts", StringSerde, I64Serde)?;
    assert_eq!(counts.get("to"), Some(&3));
    assert_eq!(counts.get("be"), Some(&2));
    assert_eq!(counts.get("see"), Some(&1));
    assert_eq!(app.instance("a").map(|a| a.active_tasks().len()), Some(8));
    Ok(())
}
