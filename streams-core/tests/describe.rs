//! `Topology::describe()` against Kafka: every golden file of the oracle
//! (`compat/golden/*.json`, written by Kafka 4.4.0) holds Kafka's
//! `describe()` text for its scenario; each test here builds the same
//! topology as `compat/SCENARIOS.md` says and compares byte for byte,
//! checks that the parser reads the text back, and keeps the text as an
//! inline snapshot. Then the parser's errors and properties, and the DOT
//! and Mermaid renderings.

use std::error::Error;
use std::path::Path;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use streams_core::dsl::{Branched, Consumed, KStream, Produced, Repartitioned};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{BytesSerde, F64Serde, I32Serde, I64Serde, StringSerde};
use streams_core::state::Stores;
use streams_core::topology::{
    Destination, NodeType, ParseError, TopicNameExtractor, TopologyDescription,
};
use streams_core::{Record, StreamsBuilder, Topics, Topology};

type S = String;
type TestResult = Result<(), Box<dyn Error>>;

/// Kafka's `describe()` text for `scenario`, from its golden file.
fn golden(scenario: &str) -> Result<String, Box<dyn Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../compat/golden")
        .join(format!("{scenario}.json"));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    Ok(json["describe"]
        .as_str()
        .ok_or("no describe text")?
        .to_owned())
}

/// Describes `topology`, checks the text against the golden files of
/// `scenarios` and that parsing it gives the description back; returns
/// the text.
fn check(topology: &Topology, scenarios: &[&str]) -> Result<String, Box<dyn Error>> {
    let description = topology.describe();
    let text = description.to_string();
    for scenario in scenarios {
        assert_eq!(text, golden(scenario)?, "scenario {scenario}");
    }
    assert_eq!(TopologyDescription::parse(&text)?, description);
    Ok(text)
}

/// A processor forwarding what it gets.
struct Pass;

impl Processor<String, String> for Pass {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        record: Record<String, String>,
    ) -> streams_core::Result<()> {
        ctx.forward(record)
    }
}

/// The Processor API pipeline `Source` (reading `topics`) -> `name` -> `Sink`.
fn papi_pipeline(topics: impl Into<Topics>, name: &str) -> streams_core::Result<Topology> {
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", topics)?
        .add_processor(name, || Pass, &["Source"])?
        .add_sink::<S, S>("Sink", "out", &[name])?;
    Ok(t)
}

// --- Stateless DSL ---------------------------------------------------------

#[test]
fn source_to_sink() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    let text = check(
        &b.build()?,
        &[
            "to_fixed_topic",
            "unknown_topic_error",
            "negative_timestamp_error",
            "serde_string",
        ],
    )?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-SINK-0000000001
        Sink: KSTREAM-SINK-0000000001 (topic: out)
          <-- KSTREAM-SOURCE-0000000000
    ");
    // The same shape with other serdes.
    let b = StreamsBuilder::new();
    b.stream_with("in", Consumed::with(StringSerde, I64Serde))
        .to_with("out", Produced::with(StringSerde, I64Serde));
    check(&b.build()?, &["deserialization_error"])?;
    let b = StreamsBuilder::new();
    b.stream_with("in", Consumed::with(I32Serde, I32Serde))
        .to_with("out", Produced::with(I32Serde, I32Serde));
    check(&b.build()?, &["serde_integer"])?;
    let b = StreamsBuilder::new();
    b.stream_with("in", Consumed::with(I64Serde, I64Serde))
        .to_with("out", Produced::with(I64Serde, I64Serde));
    check(&b.build()?, &["serde_long"])?;
    let b = StreamsBuilder::new();
    b.stream_with("in", Consumed::with(F64Serde, F64Serde))
        .to_with("out", Produced::with(F64Serde, F64Serde));
    check(&b.build()?, &["serde_double"])?;
    let b = StreamsBuilder::new();
    b.stream_with("in", Consumed::with(BytesSerde, BytesSerde))
        .to_with("out", Produced::with(BytesSerde, BytesSerde));
    check(&b.build()?, &["serde_bytes"])?;
    Ok(())
}

#[test]
fn filter() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").filter(|_, v| v.len() > 3).to("out");
    let text = check(&b.build()?, &["filter"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FILTER-0000000001
        Processor: KSTREAM-FILTER-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-FILTER-0000000001
    ");
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .filter_not(|_, v| v.starts_with('x'))
        .to("out");
    check(&b.build()?, &["filter_not"])?;
    Ok(())
}

#[test]
fn map() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map(|k, v| (v.clone(), k.cloned().unwrap_or_default()))
        .to("out");
    let text = check(&b.build()?, &["map"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MAP-0000000001
        Processor: KSTREAM-MAP-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-MAP-0000000001
    ");
    Ok(())
}

#[test]
fn map_values() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values(|v| v.to_uppercase())
        .to("out");
    let text = check(
        &b.build()?,
        &["map_values", "headers_passthrough", "user_exception_error"],
    )?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MAPVALUES-0000000001
        Processor: KSTREAM-MAPVALUES-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000001
    ");
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values_with_key(|k, v| format!("{}={v}", k.map_or("null", String::as_str)))
        .to("out");
    check(&b.build()?, &["map_values_with_key"])?;
    let b = StreamsBuilder::new();
    b.stream::<S, i64>("in").map_values(|v| v + 1).to("out");
    check(&b.build()?, &["serde_default_from_config"])?;
    Ok(())
}

#[test]
fn flat_map() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .flat_map(|k, v| {
            let k = k.cloned().unwrap_or_default();
            if v.is_empty() {
                vec![]
            } else {
                vec![(k.clone(), v.clone()), (v.clone(), k)]
            }
        })
        .to("out");
    let text = check(&b.build()?, &["flat_map"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FLATMAP-0000000001
        Processor: KSTREAM-FLATMAP-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-FLATMAP-0000000001
    ");
    Ok(())
}

#[test]
fn flat_map_values() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .flat_map_values(|v| v.chars().map(String::from).collect::<Vec<_>>())
        .to("out");
    let text = check(&b.build()?, &["flat_map_values"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FLATMAPVALUES-0000000001
        Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-FLATMAPVALUES-0000000001
    ");
    Ok(())
}

#[test]
fn select_key() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| v.chars().take(1).collect::<String>())
        .to("out");
    let text = check(&b.build()?, &["select_key"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-KEY-SELECT-0000000001
        Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-KEY-SELECT-0000000001
    ");
    Ok(())
}

#[test]
fn peek_and_foreach() -> TestResult {
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().peek(|_, _| {}).to("out");
    s.foreach(|_, _| {});
    let text = check(&b.build()?, &["peek_and_foreach"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-PEEK-0000000001, KSTREAM-FOREACH-0000000003
        Processor: KSTREAM-PEEK-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-FOREACH-0000000003 (stores: [])
          --> none
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-PEEK-0000000001
    ");
    Ok(())
}

#[test]
fn foreach_only() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").foreach(|_, _| {});
    let text = check(&b.build()?, &["foreach_only"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FOREACH-0000000001
        Processor: KSTREAM-FOREACH-0000000001 (stores: [])
          --> none
          <-- KSTREAM-SOURCE-0000000000
    ");
    Ok(())
}

#[test]
fn split_named_branches() -> TestResult {
    let b = StreamsBuilder::new();
    let branches = b
        .stream::<S, S>("in")
        .named("split-")
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::as_("a"))
        .branch(
            |_, v| v.starts_with('b'),
            Branched::with_function(|ks: KStream<S, S>| Some(ks.map_values(|v| v.to_uppercase())))
                .with_name("b"),
        )
        .default_branch(Branched::as_("other"));
    for (name, topic) in [
        ("split-a", "out-a"),
        ("split-b", "out-b"),
        ("split-other", "out-other"),
    ] {
        branches[name].clone().to(topic);
    }
    let text = check(&b.build()?, &["split_named_branches"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> split-
        Processor: split- (stores: [])
          --> split-a, split-b, split-other
          <-- KSTREAM-SOURCE-0000000000
        Processor: split-b (stores: [])
          --> KSTREAM-MAPVALUES-0000000004
          <-- split-
        Processor: KSTREAM-MAPVALUES-0000000004 (stores: [])
          --> KSTREAM-SINK-0000000007
          <-- split-b
        Processor: split-a (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- split-
        Processor: split-other (stores: [])
          --> KSTREAM-SINK-0000000008
          <-- split-
        Sink: KSTREAM-SINK-0000000006 (topic: out-a)
          <-- split-a
        Sink: KSTREAM-SINK-0000000007 (topic: out-b)
          <-- KSTREAM-MAPVALUES-0000000004
        Sink: KSTREAM-SINK-0000000008 (topic: out-other)
          <-- split-other
    ");
    Ok(())
}

#[test]
fn split_unnamed_no_default() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .split()
        .branch(
            |_, v| v.starts_with('a'),
            Branched::with_function(|ks: KStream<S, S>| {
                ks.to("out-a");
                None
            }),
        )
        .branch(
            |_, v| v.starts_with('b'),
            Branched::with_function(|ks: KStream<S, S>| {
                ks.to("out-b");
                None
            }),
        )
        .no_default_branch();
    let text = check(&b.build()?, &["split_unnamed_no_default"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-BRANCH-0000000001
        Processor: KSTREAM-BRANCH-0000000001 (stores: [])
          --> KSTREAM-BRANCH-00000000011, KSTREAM-BRANCH-00000000012
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-BRANCH-00000000011 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-BRANCH-0000000001
        Processor: KSTREAM-BRANCH-00000000012 (stores: [])
          --> KSTREAM-SINK-0000000005
          <-- KSTREAM-BRANCH-0000000001
        Sink: KSTREAM-SINK-0000000003 (topic: out-a)
          <-- KSTREAM-BRANCH-00000000011
        Sink: KSTREAM-SINK-0000000005 (topic: out-b)
          <-- KSTREAM-BRANCH-00000000012
    ");
    Ok(())
}

#[test]
fn split_generated_branch_names() -> TestResult {
    let b = StreamsBuilder::new();
    let branches = b
        .stream::<S, S>("in")
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::new())
        .branch(|_, v| v.starts_with('b'), Branched::new())
        .default_branch(Branched::new());
    for (key, stream) in branches {
        let last = key.chars().last().ok_or("empty branch name")?;
        stream.to(&format!("out-{last}"));
    }
    let text = check(&b.build()?, &["split_generated_branch_names"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-BRANCH-0000000001
        Processor: KSTREAM-BRANCH-0000000001 (stores: [])
          --> KSTREAM-BRANCH-00000000010, KSTREAM-BRANCH-00000000011, KSTREAM-BRANCH-00000000012
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-BRANCH-00000000010 (stores: [])
          --> KSTREAM-SINK-0000000005
          <-- KSTREAM-BRANCH-0000000001
        Processor: KSTREAM-BRANCH-00000000011 (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- KSTREAM-BRANCH-0000000001
        Processor: KSTREAM-BRANCH-00000000012 (stores: [])
          --> KSTREAM-SINK-0000000007
          <-- KSTREAM-BRANCH-0000000001
        Sink: KSTREAM-SINK-0000000005 (topic: out-0)
          <-- KSTREAM-BRANCH-00000000010
        Sink: KSTREAM-SINK-0000000006 (topic: out-1)
          <-- KSTREAM-BRANCH-00000000011
        Sink: KSTREAM-SINK-0000000007 (topic: out-2)
          <-- KSTREAM-BRANCH-00000000012
    ");
    Ok(())
}

#[test]
fn merge() -> TestResult {
    let b = StreamsBuilder::new();
    let s1 = b.stream::<S, S>("in1");
    let s2 = b.stream::<S, S>("in2");
    s1.merge(&s2).to("out");
    let text = check(&b.build()?, &["merge"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in1])
          --> KSTREAM-MERGE-0000000002
        Source: KSTREAM-SOURCE-0000000001 (topics: [in2])
          --> KSTREAM-MERGE-0000000002
        Processor: KSTREAM-MERGE-0000000002 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-SOURCE-0000000000, KSTREAM-SOURCE-0000000001
        Sink: KSTREAM-SINK-0000000003 (topic: out)
          <-- KSTREAM-MERGE-0000000002
    ");
    Ok(())
}

/// The `-->` list of the source is not in final sub-tree order: Kafka
/// fills it while the sizes still grow.
#[test]
fn merge_with_self_derived() -> TestResult {
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    let derived = s.clone().map_values(|v| format!("{v}'"));
    s.merge(&derived).to("out");
    let text = check(&b.build()?, &["merge_with_self_derived"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MERGE-0000000002, KSTREAM-MAPVALUES-0000000001
        Processor: KSTREAM-MAPVALUES-0000000001 (stores: [])
          --> KSTREAM-MERGE-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MERGE-0000000002 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-SOURCE-0000000000, KSTREAM-MAPVALUES-0000000001
        Sink: KSTREAM-SINK-0000000003 (topic: out)
          <-- KSTREAM-MERGE-0000000002
    ");
    Ok(())
}

/// Kafka prints the extractor's `toString()`; ours shows
/// [`TopicNameExtractor::name`], given here as the oracle's class name.
#[test]
fn to_topic_name_extractor() -> TestResult {
    struct FirstCharTopicExtractor;
    impl TopicNameExtractor<S, S> for FirstCharTopicExtractor {
        fn extract(&self, r: &Record<S, S>) -> String {
            let first: String = r.value.as_deref().unwrap_or("").chars().take(1).collect();
            format!("out-{first}")
        }
        fn name(&self) -> String {
            "FirstCharTopicExtractor".to_owned()
        }
    }
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to_dynamic(FirstCharTopicExtractor);
    let text = check(&b.build()?, &["to_topic_name_extractor"])?;
    let parsed = TopologyDescription::parse(&text)?;
    let sink = parsed.node("KSTREAM-SINK-0000000001").ok_or("no sink")?;
    assert_eq!(
        sink.kind(),
        &NodeType::Sink {
            destination: Destination::Extractor("FirstCharTopicExtractor".into())
        }
    );
    // A closure shows as its type's name.
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .to_dynamic(|r: &Record<S, S>| r.key.clone().unwrap_or_default());
    let closure = b.build()?.describe().to_string();
    assert!(
        closure.contains("(extractor class: describe::to_topic_name_extractor::{{closure}})"),
        "{closure}"
    );
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-SINK-0000000001
        Sink: KSTREAM-SINK-0000000001 (extractor class: FirstCharTopicExtractor)
          <-- KSTREAM-SOURCE-0000000000
    ");
    Ok(())
}

#[test]
fn process_custom_processor() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").process(|| Pass).to("out");
    let text = check(
        &b.build()?,
        &["process_custom_processor", "headers_modified_by_processor"],
    )?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-PROCESSOR-0000000001
        Processor: KSTREAM-PROCESSOR-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-PROCESSOR-0000000001
    ");
    Ok(())
}

/// Our DSL has no `processValues` yet: built with the Processor API under
/// the names Kafka's DSL gives.
#[test]
fn process_values_fixed_key() -> TestResult {
    let mut t = Topology::new();
    t.add_source::<S, S>("KSTREAM-SOURCE-0000000000", "in")?
        .add_processor(
            "KSTREAM-PROCESSVALUES-0000000001",
            || Pass,
            &["KSTREAM-SOURCE-0000000000"],
        )?
        .add_sink::<S, S>(
            "KSTREAM-SINK-0000000002",
            "out",
            &["KSTREAM-PROCESSVALUES-0000000001"],
        )?;
    let text = check(&t, &["process_values_fixed_key"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-PROCESSVALUES-0000000001
        Processor: KSTREAM-PROCESSVALUES-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-PROCESSVALUES-0000000001
    ");
    Ok(())
}

#[test]
fn null_keys_and_values() -> TestResult {
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().to("out-raw");
    s.clone().map_values(|v| v.to_uppercase()).to("out-mapped");
    s.filter(|k, _| k.is_some()).to("out-filtered");
    let text = check(&b.build()?, &["null_keys_and_values"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FILTER-0000000004, KSTREAM-MAPVALUES-0000000002, KSTREAM-SINK-0000000001
        Processor: KSTREAM-FILTER-0000000004 (stores: [])
          --> KSTREAM-SINK-0000000005
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000001 (topic: out-raw)
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000003 (topic: out-mapped)
          <-- KSTREAM-MAPVALUES-0000000002
        Sink: KSTREAM-SINK-0000000005 (topic: out-filtered)
          <-- KSTREAM-FILTER-0000000004
    ");
    Ok(())
}

#[test]
fn chained_operators() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .filter(|_, v| !v.is_empty())
        .map_values(|v| v.to_uppercase())
        .select_key(|k, v| format!("{}-{}", k.map_or("null", String::as_str), v.len()))
        .flat_map_values(|v| vec![v.clone(), format!("{v}{v}")])
        .filter_not(|_, v| v == "BB")
        .map(|k, v| (v.clone(), k.cloned().unwrap_or_default()))
        .to("out");
    let text = check(&b.build()?, &["chained_operators"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-FILTER-0000000001
        Processor: KSTREAM-FILTER-0000000001 (stores: [])
          --> KSTREAM-MAPVALUES-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])
          --> KSTREAM-KEY-SELECT-0000000003
          <-- KSTREAM-FILTER-0000000001
        Processor: KSTREAM-KEY-SELECT-0000000003 (stores: [])
          --> KSTREAM-FLATMAPVALUES-0000000004
          <-- KSTREAM-MAPVALUES-0000000002
        Processor: KSTREAM-FLATMAPVALUES-0000000004 (stores: [])
          --> KSTREAM-FILTER-0000000005
          <-- KSTREAM-KEY-SELECT-0000000003
        Processor: KSTREAM-FILTER-0000000005 (stores: [])
          --> KSTREAM-MAP-0000000006
          <-- KSTREAM-FLATMAPVALUES-0000000004
        Processor: KSTREAM-MAP-0000000006 (stores: [])
          --> KSTREAM-SINK-0000000007
          <-- KSTREAM-FILTER-0000000005
        Sink: KSTREAM-SINK-0000000007 (topic: out)
          <-- KSTREAM-MAP-0000000006
    ");
    Ok(())
}

// --- Topology shape --------------------------------------------------------

#[test]
fn named_operators() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream_with::<S, S>("in", Consumed::as_("src"))
        .named("keep-long")
        .filter(|_, v| v.len() > 1)
        .map_values(|v| v.to_uppercase())
        .named("rekey")
        .select_key(|_, v| v.clone())
        .peek(|_, _| {})
        .to_with("out", Produced::as_("sink"));
    let text = check(&b.build()?, &["named_operators"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: src (topics: [in])
          --> keep-long
        Processor: keep-long (stores: [])
          --> KSTREAM-MAPVALUES-0000000002
          <-- src
        Processor: KSTREAM-MAPVALUES-0000000002 (stores: [])
          --> rekey
          <-- keep-long
        Processor: rekey (stores: [])
          --> KSTREAM-PEEK-0000000004
          <-- KSTREAM-MAPVALUES-0000000002
        Processor: KSTREAM-PEEK-0000000004 (stores: [])
          --> sink
          <-- rekey
        Sink: sink (topic: out)
          <-- KSTREAM-PEEK-0000000004
    ");
    Ok(())
}

#[test]
fn generated_names() -> TestResult {
    let b = StreamsBuilder::new();
    let s1 = b.stream::<S, S>("in1");
    let s2 = b.stream::<S, S>("in2");
    s1.merge(&s2)
        .filter(|_, v| !v.is_empty())
        .split()
        .branch(
            |_, v| v.starts_with('a'),
            Branched::with_function(|ks: KStream<S, S>| {
                ks.to("out-a");
                None
            }),
        )
        .default_branch(Branched::with_function(|ks: KStream<S, S>| {
            ks.map_values(|v| format!("{v}?")).to("out-rest");
            None
        }));
    let text = check(&b.build()?, &["generated_names"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in1])
          --> KSTREAM-MERGE-0000000002
        Source: KSTREAM-SOURCE-0000000001 (topics: [in2])
          --> KSTREAM-MERGE-0000000002
        Processor: KSTREAM-MERGE-0000000002 (stores: [])
          --> KSTREAM-FILTER-0000000003
          <-- KSTREAM-SOURCE-0000000000, KSTREAM-SOURCE-0000000001
        Processor: KSTREAM-FILTER-0000000003 (stores: [])
          --> KSTREAM-BRANCH-0000000004
          <-- KSTREAM-MERGE-0000000002
        Processor: KSTREAM-BRANCH-0000000004 (stores: [])
          --> KSTREAM-BRANCH-00000000040, KSTREAM-BRANCH-00000000041
          <-- KSTREAM-FILTER-0000000003
        Processor: KSTREAM-BRANCH-00000000040 (stores: [])
          --> KSTREAM-MAPVALUES-0000000008
          <-- KSTREAM-BRANCH-0000000004
        Processor: KSTREAM-BRANCH-00000000041 (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- KSTREAM-BRANCH-0000000004
        Processor: KSTREAM-MAPVALUES-0000000008 (stores: [])
          --> KSTREAM-SINK-0000000009
          <-- KSTREAM-BRANCH-00000000040
        Sink: KSTREAM-SINK-0000000006 (topic: out-a)
          <-- KSTREAM-BRANCH-00000000041
        Sink: KSTREAM-SINK-0000000009 (topic: out-rest)
          <-- KSTREAM-MAPVALUES-0000000008
    ");
    Ok(())
}

#[test]
fn mixed_named_and_generated() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values(|v| format!("{v}1"))
        .named("second")
        .map_values(|v| format!("{v}2"))
        .map_values(|v| format!("{v}3"))
        .named("always")
        .filter(|_, _| true)
        .filter(|_, _| true)
        .to("out");
    let text = check(&b.build()?, &["mixed_named_and_generated"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MAPVALUES-0000000001
        Processor: KSTREAM-MAPVALUES-0000000001 (stores: [])
          --> second
          <-- KSTREAM-SOURCE-0000000000
        Processor: second (stores: [])
          --> KSTREAM-MAPVALUES-0000000003
          <-- KSTREAM-MAPVALUES-0000000001
        Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])
          --> always
          <-- second
        Processor: always (stores: [])
          --> KSTREAM-FILTER-0000000005
          <-- KSTREAM-MAPVALUES-0000000003
        Processor: KSTREAM-FILTER-0000000005 (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- always
        Sink: KSTREAM-SINK-0000000006 (topic: out)
          <-- KSTREAM-FILTER-0000000005
    ");
    Ok(())
}

#[test]
fn pattern_source() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>(Topics::pattern("in-.*"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let text = check(&b.build()?, &["pattern_source"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: in-.*)
          --> KSTREAM-MAPVALUES-0000000001
        Processor: KSTREAM-MAPVALUES-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000001
    ");
    let b = StreamsBuilder::new();
    b.stream::<S, S>(Topics::pattern("in-.*")).to("out");
    check(&b.build()?, &["pattern_unknown_topic_error"])?;
    Ok(())
}

#[test]
fn multiple_sources_and_sinks() -> TestResult {
    let b = StreamsBuilder::new();
    let a = b.stream::<S, S>("a");
    let bs = b.stream::<S, S>("b");
    let cd = b.stream::<S, S>(["c", "d"]);
    a.clone().filter(|_, v| v.len() > 1).to("out1");
    a.to("out2");
    bs.clone().map_values(|v| v.to_uppercase()).to("out1");
    bs.to("out2");
    cd.to("out3");
    let text = check(&b.build()?, &["multiple_sources_and_sinks"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [a])
          --> KSTREAM-FILTER-0000000003, KSTREAM-SINK-0000000005
        Processor: KSTREAM-FILTER-0000000003 (stores: [])
          --> KSTREAM-SINK-0000000004
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000004 (topic: out1)
          <-- KSTREAM-FILTER-0000000003
        Sink: KSTREAM-SINK-0000000005 (topic: out2)
          <-- KSTREAM-SOURCE-0000000000

      Sub-topology: 1
        Source: KSTREAM-SOURCE-0000000001 (topics: [b])
          --> KSTREAM-MAPVALUES-0000000006, KSTREAM-SINK-0000000008
        Processor: KSTREAM-MAPVALUES-0000000006 (stores: [])
          --> KSTREAM-SINK-0000000007
          <-- KSTREAM-SOURCE-0000000001
        Sink: KSTREAM-SINK-0000000007 (topic: out1)
          <-- KSTREAM-MAPVALUES-0000000006
        Sink: KSTREAM-SINK-0000000008 (topic: out2)
          <-- KSTREAM-SOURCE-0000000001

      Sub-topology: 2
        Source: KSTREAM-SOURCE-0000000002 (topics: [c, d])
          --> KSTREAM-SINK-0000000009
        Sink: KSTREAM-SINK-0000000009 (topic: out3)
          <-- KSTREAM-SOURCE-0000000002
    ");
    Ok(())
}

#[test]
fn fan_out_order() -> TestResult {
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().map_values(|v| format!("1:{v}")).to("out");
    s.clone().map_values(|v| format!("2:{v}")).to("out");
    s.filter(|_, v| v == "b").to("out-b");
    let text = check(&b.build()?, &["fan_out_order"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MAPVALUES-0000000001, KSTREAM-FILTER-0000000005, KSTREAM-MAPVALUES-0000000003
        Processor: KSTREAM-FILTER-0000000005 (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MAPVALUES-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])
          --> KSTREAM-SINK-0000000004
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000001
        Sink: KSTREAM-SINK-0000000004 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000003
        Sink: KSTREAM-SINK-0000000006 (topic: out-b)
          <-- KSTREAM-FILTER-0000000005
    ");
    Ok(())
}

/// The repartition topic shows without the `application.id` prefix and
/// splits the topology in two.
#[test]
fn repartition_unnamed() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .repartition()
        .map_values(|v| format!("{v}!"))
        .to("out");
    let text = check(&b.build()?, &["repartition_unnamed"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-KEY-SELECT-0000000001
        Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
          --> KSTREAM-FILTER-0000000004
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-FILTER-0000000004 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-KEY-SELECT-0000000001
        Sink: KSTREAM-SINK-0000000003 (topic: KSTREAM-REPARTITION-0000000002-repartition)
          <-- KSTREAM-FILTER-0000000004

      Sub-topology: 1
        Source: KSTREAM-SOURCE-0000000005 (topics: [KSTREAM-REPARTITION-0000000002-repartition])
          --> KSTREAM-MAPVALUES-0000000006
        Processor: KSTREAM-MAPVALUES-0000000006 (stores: [])
          --> KSTREAM-SINK-0000000007
          <-- KSTREAM-SOURCE-0000000005
        Sink: KSTREAM-SINK-0000000007 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000006
    ");
    Ok(())
}

#[test]
fn repartition_named() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| v.clone())
        .repartition_with(Repartitioned::as_("rekeyed"))
        .map_values(|v| format!("{v}!"))
        .to("out");
    let text = check(&b.build()?, &["repartition_named"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-KEY-SELECT-0000000001
        Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
          --> rekeyed-repartition-filter
          <-- KSTREAM-SOURCE-0000000000
        Processor: rekeyed-repartition-filter (stores: [])
          --> rekeyed-repartition-sink
          <-- KSTREAM-KEY-SELECT-0000000001
        Sink: rekeyed-repartition-sink (topic: rekeyed-repartition)
          <-- rekeyed-repartition-filter

      Sub-topology: 1
        Source: rekeyed-repartition-source (topics: [rekeyed-repartition])
          --> KSTREAM-MAPVALUES-0000000005
        Processor: KSTREAM-MAPVALUES-0000000005 (stores: [])
          --> KSTREAM-SINK-0000000006
          <-- rekeyed-repartition-source
        Sink: KSTREAM-SINK-0000000006 (topic: out)
          <-- KSTREAM-MAPVALUES-0000000005
    ");
    Ok(())
}

#[test]
fn feedback_loop() -> TestResult {
    let b = StreamsBuilder::new();
    b.stream::<S, S>("a")
        .peek(|_, _| {})
        .flat_map_values(|v| vec![format!("{v}1"), format!("{v}2")])
        .to("b");
    let bs = b.stream::<S, S>("b").peek(|_, _| {});
    bs.clone().to("out");
    bs.filter(|_, v| v.len() < 3)
        .flat_map_values(|v| vec![format!("{v}x"), format!("{v}y")])
        .to("b");
    let text = check(&b.build()?, &["feedback_loop"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [a])
          --> KSTREAM-PEEK-0000000001
        Processor: KSTREAM-PEEK-0000000001 (stores: [])
          --> KSTREAM-FLATMAPVALUES-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-FLATMAPVALUES-0000000002 (stores: [])
          --> KSTREAM-SINK-0000000003
          <-- KSTREAM-PEEK-0000000001
        Sink: KSTREAM-SINK-0000000003 (topic: b)
          <-- KSTREAM-FLATMAPVALUES-0000000002

      Sub-topology: 1
        Source: KSTREAM-SOURCE-0000000004 (topics: [b])
          --> KSTREAM-PEEK-0000000005
        Processor: KSTREAM-PEEK-0000000005 (stores: [])
          --> KSTREAM-FILTER-0000000007, KSTREAM-SINK-0000000006
          <-- KSTREAM-SOURCE-0000000004
        Processor: KSTREAM-FILTER-0000000007 (stores: [])
          --> KSTREAM-FLATMAPVALUES-0000000008
          <-- KSTREAM-PEEK-0000000005
        Processor: KSTREAM-FLATMAPVALUES-0000000008 (stores: [])
          --> KSTREAM-SINK-0000000009
          <-- KSTREAM-FILTER-0000000007
        Sink: KSTREAM-SINK-0000000006 (topic: out)
          <-- KSTREAM-PEEK-0000000005
        Sink: KSTREAM-SINK-0000000009 (topic: b)
          <-- KSTREAM-FLATMAPVALUES-0000000008
    ");
    Ok(())
}

#[test]
fn serde_mixed_types() -> TestResult {
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        reason = "short test strings"
    )]
    s.clone()
        .map(|k, v| (k.map_or(0, String::len) as i32, v.len() as i64))
        .to_with("out-int-long", Produced::with(I32Serde, I64Serde));
    #[allow(clippy::cast_precision_loss, reason = "short test strings")]
    s.map_values(|v| v.len() as f64 / 2.0)
        .to_with("out-double", Produced::with(StringSerde, F64Serde));
    let text = check(&b.build()?, &["serde_mixed_types"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: KSTREAM-SOURCE-0000000000 (topics: [in])
          --> KSTREAM-MAP-0000000001, KSTREAM-MAPVALUES-0000000003
        Processor: KSTREAM-MAP-0000000001 (stores: [])
          --> KSTREAM-SINK-0000000002
          <-- KSTREAM-SOURCE-0000000000
        Processor: KSTREAM-MAPVALUES-0000000003 (stores: [])
          --> KSTREAM-SINK-0000000004
          <-- KSTREAM-SOURCE-0000000000
        Sink: KSTREAM-SINK-0000000002 (topic: out-int-long)
          <-- KSTREAM-MAP-0000000001
        Sink: KSTREAM-SINK-0000000004 (topic: out-double)
          <-- KSTREAM-MAPVALUES-0000000003
    ");
    Ok(())
}

// --- Processor API ---------------------------------------------------------

#[test]
fn papi_pipelines() -> TestResult {
    let text = check(&papi_pipeline("in", "Upper")?, &["papi_basic"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: Source (topics: [in])
          --> Upper
        Processor: Upper (stores: [])
          --> Sink
          <-- Source
        Sink: Sink (topic: out)
          <-- Upper
    ");
    check(
        &papi_pipeline("in", "Swap")?,
        &["papi_swap_and_shift_timestamp"],
    )?;
    check(
        &papi_pipeline("in", "LateScheduler")?,
        &["punctuate_scheduled_in_process"],
    )?;
    check(
        &papi_pipeline("in", "Ticker")?,
        &[
            "punctuate_stream_time",
            "punctuate_wall_clock",
            "punctuate_cancel",
            "punctuate_stream_and_wall",
        ],
    )?;
    check(
        &papi_pipeline(["in", "in2"], "Probe")?,
        &["processor_context_time"],
    )?;
    Ok(())
}

#[test]
fn papi_explicit_serdes() -> TestResult {
    struct Convert;
    impl Processor<String, i64, i64, String> for Convert {
        fn process(
            &mut self,
            ctx: &mut ProcessorContext<'_, i64, String>,
            r: Record<String, i64>,
        ) -> streams_core::Result<()> {
            ctx.forward(Record::new(
                r.value.map(|v| v * 2),
                r.key,
                r.timestamp + 1000,
            ))
        }
    }
    let mut t = Topology::new();
    t.add_source_with_serdes("Source", "in", StringSerde, I64Serde)?
        .add_processor("Convert", || Convert, &["Source"])?
        .add_sink_with_serdes("Sink", "out", I64Serde, StringSerde, &["Convert"])?;
    let text = check(&t, &["papi_explicit_serdes"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: Source (topics: [in])
          --> Convert
        Processor: Convert (stores: [])
          --> Sink
          <-- Source
        Sink: Sink (topic: out)
          <-- Convert
    ");
    Ok(())
}

#[test]
fn papi_pass_through() -> TestResult {
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_sink::<S, S>("Sink", "out", &["Source"])?;
    let text = check(&t, &["timestamps_explicit", "timestamps_auto_advance"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: Source (topics: [in])
          --> Sink
        Sink: Sink (topic: out)
          <-- Source
    ");
    Ok(())
}

#[test]
fn papi_forward_to_named_child() -> TestResult {
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Router", || Pass, &["Source"])?
        .add_sink::<S, S>("EvenSink", "out-even", &["Router"])?
        .add_sink::<S, S>("OddSink", "out-odd", &["Router"])?;
    let text = check(&t, &["papi_forward_to_named_child"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: Source (topics: [in])
          --> Router
        Processor: Router (stores: [])
          --> EvenSink, OddSink
          <-- Source
        Sink: EvenSink (topic: out-even)
          <-- Router
        Sink: OddSink (topic: out-odd)
          <-- Router
    ");
    Ok(())
}

#[test]
fn papi_multiple_parents() -> TestResult {
    let mut t = Topology::new();
    t.add_source::<S, S>("SourceA", "in-a")?
        .add_source::<S, S>("SourceB", "in-b")?
        .add_processor("Prefix", || Pass, &["SourceA", "SourceB"])?
        .add_sink::<S, S>("Sink", "out", &["Prefix"])?;
    let text = check(&t, &["papi_multiple_parents"])?;
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: SourceA (topics: [in-a])
          --> Prefix
        Source: SourceB (topics: [in-b])
          --> Prefix
        Processor: Prefix (stores: [])
          --> Sink
          <-- SourceA, SourceB
        Sink: Sink (topic: out)
          <-- Prefix
    ");
    Ok(())
}

// --- Stores ----------------------------------------------------------------

/// Processors sharing a store are one sub-topology; store lists print in
/// Java `HashSet` order. The expected text is Kafka 4.4.0's for the same
/// `Topology` calls.
#[test]
fn shared_stores_join_sub_topologies() -> TestResult {
    const KAFKA: &str = "Topologies:\n   Sub-topology: 0\n    Source: left (topics: [l])\n      --> count-left\n    Source: right (topics: [r])\n      --> count-right\n    Processor: count-left (stores: [zeta, counts, alpha])\n      --> out\n      <-- left\n    Processor: count-right (stores: [counts])\n      --> out\n      <-- right\n    Sink: out (topic: totals)\n      <-- count-left, count-right\n\n  Sub-topology: 1\n    Source: other (topics: [o])\n      --> copy\n    Sink: copy (topic: o2)\n      <-- other\n\n";
    let mut t = Topology::new();
    t.add_source::<S, S>("left", "l")?
        .add_processor("count-left", || Pass, &["left"])?
        .add_source::<S, S>("right", "r")?
        .add_processor("count-right", || Pass, &["right"])?
        .add_state_store(
            Stores::key_value_store_builder("counts", StringSerde, StringSerde),
            &["count-left", "count-right"],
        )?
        .add_state_store(
            Stores::key_value_store_builder("zeta", StringSerde, StringSerde),
            &["count-left"],
        )?
        .add_state_store(
            Stores::key_value_store_builder("alpha", StringSerde, StringSerde),
            &["count-left"],
        )?
        .add_sink::<S, S>("out", "totals", &["count-left", "count-right"])?
        .add_source::<S, S>("other", "o")?
        .add_sink::<S, S>("copy", "o2", &["other"])?;
    let text = t.describe().to_string();
    assert_eq!(text, KAFKA);
    assert_eq!(TopologyDescription::parse(&text)?, t.describe());
    assert_snapshot!(text, @"
    Topologies:
       Sub-topology: 0
        Source: left (topics: [l])
          --> count-left
        Source: right (topics: [r])
          --> count-right
        Processor: count-left (stores: [zeta, counts, alpha])
          --> out
          <-- left
        Processor: count-right (stores: [counts])
          --> out
          <-- right
        Sink: out (topic: totals)
          <-- count-left, count-right

      Sub-topology: 1
        Source: other (topics: [o])
          --> copy
        Sink: copy (topic: o2)
          <-- other
    ");
    Ok(())
}

// --- The parser ------------------------------------------------------------

fn parse_err(text: &str) -> ParseError {
    match TopologyDescription::parse(text) {
        Ok(d) => panic!("parsed {d:?}"),
        Err(e) => e,
    }
}

#[test]
fn kafka_text_reads_back_as_it_is() -> TestResult {
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../compat/golden"))?
    {
        let path = entry?.path();
        let Some(scenario) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let text = golden(scenario)?;
        if text.is_empty() {
            // A scenario whose build failed (a bad `topology.optimization`)
            // started no driver and described nothing.
            continue;
        }
        assert_eq!(
            TopologyDescription::parse(&text)?.to_string(),
            text,
            "{scenario}"
        );
    }
    Ok(())
}

#[test]
fn parse_errors_name_the_line() {
    let e =
        parse_err("Topologies:\n   Sub-topology: 0\n    Source: s (topics: [t])\n      --> p\n");
    assert_eq!(e.line(), 4);
    assert_eq!(
        e.to_string(),
        "line 4: `s` names `p`, which is not a node of its sub-topology"
    );
    let e = parse_err("Topologies:\n   Sub-topology: 0\n    Stream: s (topics: [t])\n");
    assert!(matches!(e, ParseError::UnknownNodeKind { line: 3, ref kind } if kind == "Stream"));
    let e = parse_err("Topologies:\n   Sub-topology: 0\n    Sink: s (topic: t)\n      --> x\n");
    assert_eq!(
        e.to_string(),
        "line 4: expected a `<--` line, found `--> x`"
    );
    let e = parse_err(
        "Topologies:\n   Sub-topology: 0\n    Source: s (topics: [t])\n      --> none\n   Sub-topology: 0\n",
    );
    assert_eq!(
        e.to_string(),
        "line 5: sub-topology 0 is described a second time"
    );
    let e = parse_err(
        "Topologies:\n   Sub-topology: 0\n    Source: s (topics: [t])\n      --> none\n\n  Sub-topology: 1\n    Source: s (topics: [u])\n      --> none\n",
    );
    assert_eq!(e.to_string(), "line 7: node `s` is described a second time");
    let e = parse_err("Topologies:\n   Sub-topology: 0\n    Processor: p (stores: [a, ])\n");
    assert_eq!(
        e.to_string(),
        "line 3: expected stores `[a, b]` or `[]`, found `Processor: p (stores: [a, ])`"
    );
}

/// A passing processor with several inputs, for random topologies.
fn arbitrary_topology(ops: &[(u8, u32, u32, String)]) -> Topology {
    let mut t = Topology::new();
    let (mut parents, mut processors, mut stores): (Vec<String>, Vec<String>, Vec<String>) =
        Default::default();
    let pick = |from: &[String], seed: u32, n: u32| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for k in 0..n.max(1) {
            let s = &from[(seed.wrapping_mul(31).wrapping_add(k * 7)) as usize % from.len()];
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    };
    for (i, (op, a, b, name)) in ops.iter().enumerate() {
        let name = format!("{name}{i}");
        let added = match op % 10 {
            _ if parents.is_empty() || op % 10 == 0 => {
                let topics = if a % 5 == 0 {
                    Topics::pattern(format!("p{i}-.*"))
                } else {
                    Topics::Names((0..=b % 3).map(|k| format!("t{i}.{k}")).collect())
                };
                t.add_source::<S, S>(&name, topics)
                    .map(|_| parents.push(name.clone()))
            }
            1..=5 => {
                let ps = pick(&parents, *a, b % 3 + 1);
                let ps: Vec<&str> = ps.iter().map(String::as_str).collect();
                t.add_processor(&name, || Pass, &ps).map(|_| {
                    parents.push(name.clone());
                    processors.push(name.clone());
                })
            }
            6 | 7 => {
                let ps = pick(&parents, *a, b % 2 + 1);
                let ps: Vec<&str> = ps.iter().map(String::as_str).collect();
                if b % 4 == 0 {
                    t.add_sink_with_extractor(
                        &name,
                        |r: &Record<S, S>| r.key.clone().unwrap_or_default(),
                        &ps,
                    )
                    .map(|_| ())
                } else {
                    t.add_sink::<S, S>(&name, &format!("out{}", a % 4), &ps)
                        .map(|_| ())
                }
            }
            _ if processors.is_empty() => Ok(()),
            8 => {
                let ps = pick(&processors, *a, b % 3);
                let ps: Vec<&str> = ps.iter().map(String::as_str).collect();
                let store = format!("store-{name}");
                t.add_state_store(
                    Stores::key_value_store_builder(&store, StringSerde, StringSerde),
                    &ps,
                )
                .map(|_| stores.push(store))
            }
            _ if stores.is_empty() => Ok(()),
            _ => {
                let ss = pick(&stores, *b, a % 3 + 1);
                let ss: Vec<&str> = ss.iter().map(String::as_str).collect();
                let p = &processors[*a as usize % processors.len()];
                t.connect_processor_and_state_stores(p, &ss).map(|_| ())
            }
        };
        // A rejected operation (a name clash) leaves the topology as it was.
        let _ = added;
    }
    t
}

fn ops() -> impl Strategy<Value = Vec<(u8, u32, u32, String)>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
            "[A-Za-z0-9._-]{1,8}",
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `parse(print(d)) == d`, and printing again gives the same text.
    #[test]
    fn parse_reads_back_what_display_prints(ops in ops()) {
        let description = arbitrary_topology(&ops).describe();
        let text = description.to_string();
        let parsed = TopologyDescription::parse(&text);
        prop_assert_eq!(parsed.as_ref().map(ToString::to_string), Ok(text));
        prop_assert_eq!(parsed, Ok(description));
    }

    /// Any text: an error or a description, never a panic.
    #[test]
    fn parse_never_panics_on_any_text(text in "\\PC*") {
        let _ = TopologyDescription::parse(&text);
        let _ = TopologyDescription::parse(&format!("Topologies:\n   Sub-topology: 0\n{text}"));
    }

    /// Valid text with lines dropped, repeated or cut: never a panic, and
    /// whatever parses prints and renders.
    #[test]
    fn parse_never_panics_on_damaged_text(
        ops in ops(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..6),
    ) {
        let text = arbitrary_topology(&ops).describe().to_string();
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        for (kind, at, len) in edits {
            let i = at % lines.len().max(1);
            match kind % 4 {
                0 if !lines.is_empty() => { lines.remove(i); }
                1 if !lines.is_empty() => { let l = lines[i].clone(); lines.insert(i, l); }
                2 if !lines.is_empty() => {
                    let cut: String = lines[i].chars().take(len % 40).collect();
                    lines[i] = cut;
                }
                _ if !lines.is_empty() => {
                    let j = len % lines.len();
                    lines.swap(i, j);
                }
                _ => {}
            }
        }
        if let Ok(d) = TopologyDescription::parse(&lines.join("\n")) {
            let _ = (d.to_string(), d.dot().to_string(), d.mermaid().to_string());
        }
    }

    /// Every node shows in both renderings.
    #[test]
    fn renderings_show_every_node(ops in ops()) {
        let description = arbitrary_topology(&ops).describe();
        let (dot, mermaid) = (description.dot().to_string(), description.mermaid().to_string());
        for node in description.subtopologies().iter().flat_map(|s| s.nodes()) {
            let quoted = format!("\"{}\"", node.name());
            prop_assert!(dot.contains(&quoted), "{} not in {}", node.name(), dot);
            prop_assert!(mermaid.contains(&quoted), "{} not in {}", node.name(), mermaid);
        }
    }
}

// --- DOT and Mermaid -------------------------------------------------------

/// Two sub-topologies joined by a repartition topic, a store, a pattern
/// source and an extractor sink.
fn rich_topology() -> Result<Topology, Box<dyn Error>> {
    let mut t = Topology::new();
    t.add_source::<S, S>("orders", "orders")?
        .add_processor("dedupe", || Pass, &["orders"])?
        .add_state_store(
            Stores::key_value_store_builder("seen", StringSerde, StringSerde),
            &["dedupe"],
        )?
        .add_sink::<S, S>("to-repartition", "by-customer", &["dedupe"])?
        .add_source::<S, S>("from-repartition", "by-customer")?
        .add_source::<S, S>("audit", Topics::pattern("audit-.*"))?
        .add_processor("enrich", || Pass, &["from-repartition", "audit"])?
        .add_sink_with_extractor(
            "route",
            |r: &Record<S, S>| r.key.clone().unwrap_or_default(),
            &["enrich"],
        )?;
    Ok(t)
}

#[test]
fn dot_rendering() -> TestResult {
    let description = rich_topology()?.describe();
    assert_snapshot!(description.dot().to_string(), @r##"
    digraph topology {
      graph [fontname="Helvetica", fontsize=11];
      node [fontname="Helvetica", fontsize=10];
      edge [fontname="Helvetica", fontsize=9];
      subgraph cluster_0 {
        label="Sub-topology: 0";
        style=rounded;
        labeljust=l;
        n0 [label="orders", shape=invhouse, style=filled, fillcolor="#d5e8d4"];
        n1 [label="dedupe", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
        n2 [label="to-repartition", shape=house, style=filled, fillcolor="#ffe6cc"];
        n4 [label="seen", shape=cylinder, style=filled, fillcolor="#fff2cc"];
      }
      subgraph cluster_1 {
        label="Sub-topology: 1";
        style=rounded;
        labeljust=l;
        n6 [label="audit", shape=invhouse, style=filled, fillcolor="#d5e8d4"];
        n7 [label="from-repartition", shape=invhouse, style=filled, fillcolor="#d5e8d4"];
        n8 [label="enrich", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
        n9 [label="route", shape=house, style=filled, fillcolor="#ffe6cc"];
      }
      n3 [label="orders", shape=box, style=filled, fillcolor="#eeeeee"];
      n5 [label="by-customer", shape=box, style=filled, fillcolor="#eeeeee"];
      n10 [label="audit-.*", shape=box, style="dashed,filled", fillcolor="#eeeeee"];
      n11 [label="describe::rich_topology::{{closure}}", shape=hexagon, style=filled, fillcolor="#eeeeee"];
      n3 -> n0;
      n0 -> n1;
      n1 -> n4 [style=dashed, arrowhead=none];
      n1 -> n2;
      n2 -> n5;
      n10 -> n6;
      n6 -> n8;
      n5 -> n7;
      n7 -> n8;
      n8 -> n9;
      n9 -> n11;
    }
    "##);
    Ok(())
}

#[test]
fn mermaid_rendering() -> TestResult {
    let description = rich_topology()?.describe();
    assert_snapshot!(description.mermaid().to_string(), @r#"
    flowchart TB
        subgraph s0["Sub-topology: 0"]
            n0(["orders"])
            n1("dedupe")
            n2[["to-repartition"]]
            n4[("seen")]
        end
        subgraph s1["Sub-topology: 1"]
            n6(["audit"])
            n7(["from-repartition"])
            n8("enrich")
            n9[["route"]]
        end
        n3[/"orders"/]
        n5[/"by-customer"/]
        n10[\"audit-.*"\]
        n11{{"describe::rich_topology::{{closure}}"}}
        n3 --> n0
        n0 --> n1
        n1 -.- n4
        n1 --> n2
        n2 --> n5
        n10 --> n6
        n6 --> n8
        n5 --> n7
        n7 --> n8
        n8 --> n9
        n9 --> n11
    "#);
    Ok(())
}

/// What a Kafka user pastes: Java's text, drawn without Java.
#[test]
fn rendering_pasted_java_text() -> TestResult {
    let description = TopologyDescription::parse(&golden("repartition_named")?)?;
    assert_snapshot!(description.mermaid().to_string(), @r#"
    flowchart TB
        subgraph s0["Sub-topology: 0"]
            n0(["KSTREAM-SOURCE-0000000000"])
            n1("KSTREAM-KEY-SELECT-0000000001")
            n2("rekeyed-repartition-filter")
            n3[["rekeyed-repartition-sink"]]
        end
        subgraph s1["Sub-topology: 1"]
            n6(["rekeyed-repartition-source"])
            n7("KSTREAM-MAPVALUES-0000000005")
            n8[["KSTREAM-SINK-0000000006"]]
        end
        n4[/"in"/]
        n5[/"rekeyed-repartition"/]
        n9[/"out"/]
        n4 --> n0
        n0 --> n1
        n1 --> n2
        n2 --> n3
        n3 --> n5
        n5 --> n6
        n6 --> n7
        n7 --> n8
        n8 --> n9
    "#);
    Ok(())
}

/// A clone shares its nodes with the original until one of them changes:
/// a change to either (a new child, a store connected) leaves the other
/// as it was, and both still run (issue 19: `build()` hands out a clone).
#[test]
fn clones_are_independent_after_a_change() -> TestResult {
    let mut original = papi_pipeline("in", "pass")?;
    let before = original.describe().to_string();
    let mut copy = original.clone();
    copy.add_sink::<S, S>("second-sink", "out-2", &["pass"])?
        .add_state_store(
            Stores::key_value_store_builder("seen", StringSerde, StringSerde),
            &["pass"],
        )?;
    assert_eq!(original.describe().to_string(), before);
    assert_eq!(original.node_names(), ["Source", "pass", "Sink"]);
    assert_eq!(original.node_store_names("pass"), Some(&[][..]));
    assert_eq!(original.node_store_names("second-sink"), None);
    assert_eq!(copy.node_names(), ["Source", "pass", "Sink", "second-sink"]);
    assert_eq!(
        copy.node_store_names("pass"),
        Some(&["seen".to_owned()][..])
    );
    assert_eq!(
        copy.describe().to_string(),
        "Topologies:\n   Sub-topology: 0\n    Source: Source (topics: [in])\n      --> pass\n    \
         Processor: pass (stores: [seen])\n      --> Sink, second-sink\n      <-- Source\n    \
         Sink: Sink (topic: out)\n      <-- pass\n    Sink: second-sink (topic: out-2)\n      <-- pass\n\n"
    );
    // And the other way round: the original changes, the copy does not.
    original.add_sink::<S, S>("third-sink", "out-3", &["pass"])?;
    assert_eq!(copy.node_names(), ["Source", "pass", "Sink", "second-sink"]);
    assert_eq!(copy.node_store_names("third-sink"), None);
    // Both run, each with its own sinks.
    for (topology, outputs) in [(original, ["out", "out-3"]), (copy, ["out", "out-2"])] {
        let driver = streams_test::TopologyTestDriver::new(topology)?;
        driver
            .create_input_topic("in", StringSerde, StringSerde)
            .pipe_key_value("k", "v");
        for topic in outputs {
            let out = driver.create_output_topic(topic, StringSerde, StringSerde);
            assert_eq!(out.read_key_values_to_list().len(), 1, "{topic}");
        }
        assert_eq!(driver.produced_topic_names().len(), 2);
    }
    // A builder's topology is unchanged by what is added after build().
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("a").to("b");
    let built = builder.build()?;
    builder.stream::<String, String>("c").to("d");
    assert_eq!(built.node_names().len(), 2);
    assert_eq!(builder.build()?.node_names().len(), 4);
    Ok(())
}
