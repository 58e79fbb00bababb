//! The fluent layer: every assertion passes on a matching topic, table or
//! store, and fails with a tested message that points at the test's line.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use pretty_assertions::assert_eq;
use serde::{Deserialize, Serialize};
use streams_core::dsl::{Consumed, Materialized, Produced};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I64Serde, JsonSerde, StringSerde};
use streams_core::state::Stores;
use streams_core::{Record, Result, StreamsBuilder, StreamsConfig, Topology};
use streams_test::{KeyValue, TestRecord, TestTopology};

// ---------------------------------------------------------------------------
// Capturing failures: the message (without colours) and the line it names.

thread_local! {
    static LOCATION: Cell<Option<(&'static str, u32)>> = const { Cell::new(None) };
}

/// Runs `f`, which must panic, and returns its message, ANSI colours
/// removed, after checking that the panic points at this file.
#[track_caller]
fn failure(f: impl FnOnce()) -> String {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                // Files named by `file!()` are 'static; keep the name only.
                let file: &'static str = Box::leak(l.file().to_owned().into_boxed_str());
                LOCATION.with(|c| c.set(Some((file, l.line()))));
            }
            previous(info);
        }));
    });
    LOCATION.with(|c| c.set(None));
    let Err(payload) = catch_unwind(AssertUnwindSafe(f)) else {
        panic!("the assertion should have failed");
    };
    let location = LOCATION.with(Cell::get);
    let (file, _) = location.unwrap_or(("<none>", 0));
    assert!(
        file.ends_with("tests/fluent.rs"),
        "the failure should point at the test, but points at {file}"
    );
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    strip_ansi(&message)
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Topologies.

/// `in` -> upper-case values -> `out`.
fn upper() -> Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .map_values(|v| v.to_uppercase())
        .to("out");
    builder.build()
}

fn topology() -> TestTopology {
    TestTopology::from_topology(upper().expect("the topology builds"))
}

/// `x` and `y` -> `left` and `right`.
fn two_by_two(b: &StreamsBuilder) {
    b.stream::<String, String>("x").to("left");
    b.stream::<String, String>("y").to("right");
}

/// Word counts in the timestamped store `counts`, written to `counts-out`.
fn counts(b: &StreamsBuilder) {
    b.stream::<String, String>("words")
        .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
        .group_by(|_, w| w.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: String,
    amount: i64,
    priority: bool,
}

fn order(id: &str, amount: i64, priority: bool) -> Order {
    Order {
        id: id.to_owned(),
        amount,
        priority,
    }
}

/// Orders in, priority flag set at 100 and more.
fn orders(b: &StreamsBuilder) {
    b.stream_with(
        "orders",
        Consumed::with(StringSerde, JsonSerde::<Order>::new()),
    )
    .map_values(|o: &Order| Order {
        priority: o.amount >= 100,
        ..o.clone()
    })
    .to_with(
        "flagged",
        Produced::with(StringSerde, JsonSerde::<Order>::new()),
    );
}

/// A processor keeping the last value per key in the plain key-value store `last`.
struct Remember;

impl Processor<String, i64, String, i64> for Remember {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        r: Record<String, i64>,
    ) -> Result<()> {
        if let (Some(k), Some(v)) = (r.key, r.value) {
            ctx.key_value_store::<String, i64>("last")?.put(k, v)?;
        }
        Ok(())
    }
}

fn remember() -> Result<Topology> {
    let mut topology = Topology::new();
    topology
        .add_source_with_serdes("in", "numbers", StringSerde, I64Serde)?
        .add_processor("remember", || Remember, &["in"])?
        .add_state_store(
            Stores::key_value_store_builder("last", StringSerde, I64Serde),
            &["remember"],
        )?;
    Ok(topology)
}

// ---------------------------------------------------------------------------
// The test topology: construction, topics, inputs.

#[test]
fn new_takes_a_topology_a_result_a_function_or_a_builder_function() -> Result<()> {
    let from_topology = TestTopology::new(upper()?)?;
    let from_result = TestTopology::new(upper())?;
    let from_fn = TestTopology::new(upper)?;
    let from_builder = TestTopology::new(|b: &StreamsBuilder| {
        b.stream::<String, String>("in").to("out");
    })?;
    for t in [from_topology, from_result, from_fn, from_builder] {
        assert_eq!(t.input_topics(), ["in"]);
        assert_eq!(t.output_topics(), ["out"]);
        assert_eq!(t.config().application_id(), "test-app");
    }
    Ok(())
}

#[test]
fn topics_are_found_and_internal_ones_hidden() -> Result<()> {
    let t = TestTopology::new(counts)?.with_config(StreamsConfig::new("wc"));
    assert_eq!(t.input_topics(), ["words"]);
    assert_eq!(t.output_topics(), ["counts-out"]);
    assert_eq!(
        t.internal_topics(),
        ["wc-counts-repartition", "wc-counts-changelog"]
    );
    t.input().add_value("a b a");
    t.output_named("wc-counts-changelog")
        .with_value_serde(I64Serde)
        .expect_records([("a", 1), ("b", 1), ("a", 2)]);
    Ok(())
}

#[test]
fn input_without_a_name_fails_listing_the_topics_read() -> Result<()> {
    let t = TestTopology::new(two_by_two)?;
    assert_eq!(
        failure(|| {
            t.input();
        }),
        "the topology reads 2 topics, [\"x\", \"y\"]; name one with `input_named`"
    );
    t.input_named("y").add("k", "v");
    t.output_named("right").expect_next_record().has_value("v");
    Ok(())
}

#[test]
fn output_without_a_name_fails_listing_the_topics_written() -> Result<()> {
    let t = TestTopology::new(two_by_two)?;
    assert_eq!(
        failure(|| {
            t.output();
        }),
        "the topology writes 2 topics, [\"left\", \"right\"]; name one with `output_named`"
    );
    Ok(())
}

#[test]
fn output_without_a_name_fails_when_sinks_choose_topics() -> Result<()> {
    let t = TestTopology::new(|b: &StreamsBuilder| {
        b.stream::<String, String>("in")
            .to_dynamic(|r: &Record<String, String>| {
                format!("to-{}", r.value.clone().unwrap_or_default())
            });
    })?;
    assert_eq!(
        failure(|| {
            t.output();
        }),
        "the topology writes no topic by name; name the topic with `output_named`"
    );
    t.input().add("k", "a");
    t.output_named("to-a").expect_next_record().has_key("k");
    assert_eq!(
        failure(|| {
            t.output_named("to-b").expect_next_record();
        }),
        "topic `to-b` is not written by the topology; it writes to [\"to-a\"]"
    );
    Ok(())
}

#[test]
fn a_topic_the_topology_never_writes_fails_naming_those_it_writes() {
    let t = topology();
    t.input().add("k", "v");
    assert_eq!(
        failure(|| {
            t.output_named("outt").expect_next_record();
        }),
        "topic `outt` is not written by the topology; it writes to [\"out\"]"
    );
}

#[test]
fn a_topic_the_topology_does_not_read_fails_at_the_first_add() {
    let t = topology();
    assert_eq!(
        failure(|| {
            t.input_named("inn").add("k", "v");
        }),
        "adding a record to topic `inn` failed: unknown topic: inn; the topology reads [\"in\"]"
    );
}

#[test]
fn a_topology_that_cannot_start_says_why() -> Result<()> {
    let t = TestTopology::new(|b: &StreamsBuilder| {
        b.stream::<String, u16>("in").to("out");
    })?;
    let expected = "node `KSTREAM-SOURCE-0000000000` needs a value serde for type `u16`, and none was given; \
                    pass one (for example `Consumed::with(..)` or `Produced::with(..)`) or set a default serde for this type in the config";
    assert_eq!(
        t.try_driver().map(|_| ()).map_err(|e| e.to_string()),
        Err(expected.to_owned())
    );
    assert_eq!(
        failure(|| {
            t.driver();
        }),
        format!("starting the test topology failed: {expected}")
    );
    Ok(())
}

#[test]
fn at_and_headers_are_sticky_and_records_keep_their_own() {
    let t = topology();
    t.input()
        .add("a", "1")
        .at(100)
        .with_header("trace", "t-1")
        .add("b", "2")
        .add_value("3")
        .without_headers()
        .add_tombstone("c")
        .add_record(
            TestRecord::key_value("d", "4")
                .at(7)
                .with_header("own", "h"),
        )
        .add_all([("e", "5"), ("f", "6")]);
    t.output()
        .expect_next_record()
        .has_key("a")
        .has_value("1")
        .has_timestamp(0)
        .and()
        .expect_next_record()
        .has_key("b")
        .has_timestamp(100)
        .has_header("trace", "t-1")
        .and()
        .expect_next_record()
        .has_null_key()
        .has_value("3")
        .has_timestamp(100)
        .and()
        .expect_next_record()
        .has_key("c")
        .is_tombstone()
        .has_timestamp(100)
        .and()
        .expect_next_record()
        .has_key("d")
        .has_timestamp(7)
        .has_header("own", "h")
        .and()
        .expect_records([("e", "5"), ("f", "6")])
        .expect_no_more_records();
}

#[test]
fn records_without_a_timestamp_get_the_wall_clock() {
    let t = topology().with_initial_wall_clock_time(1_000);
    t.input().add("a", "x");
    t.driver()
        .advance_wall_clock_time(std::time::Duration::from_millis(500));
    t.input().add("b", "y");
    t.output()
        .expect_next_record()
        .has_timestamp(1_000)
        .and()
        .expect_next_record()
        .has_timestamp(1_500);
}

#[test]
fn serdes_per_topic_override_the_defaults() -> Result<()> {
    let t = TestTopology::new(|b: &StreamsBuilder| {
        b.stream::<String, i64>("numbers")
            .map_values(|n| n * 10)
            .to("tens");
    })?;
    t.input_with("numbers", StringSerde, I64Serde).add("a", 4);
    t.input().with_value_serde(I64Serde).add("b", 5);
    t.output_with("tens", StringSerde, I64Serde)
        .expect_records([("a", 40)]);
    t.output()
        .with_value_serde(I64Serde)
        .expect_records([("b", 50)]);
    Ok(())
}

#[test]
fn default_serdes_set_the_handles_types_and_the_config() -> Result<()> {
    let t = TestTopology::new(|b: &StreamsBuilder| {
        b.stream::<String, i64>("numbers").to("copy");
    })?
    .with_default_serdes(StringSerde, I64Serde);
    assert!(t.config().default_value_serde().is_some());
    t.input().add("a", 1).add("b", 2);
    t.output().expect_records([("a", 1), ("b", 2)]);
    Ok(())
}

// ---------------------------------------------------------------------------
// Stream assertions: each passes, then fails with its message.

#[test]
fn has_key() {
    let t = topology();
    t.input().add("a", "x").add("b", "y");
    t.output().expect_next_record().has_key("a");
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_key("c");
        }),
        "record at offset 1 of topic `out`: the key is not the expected one\n\
         expected: \"c\"\n  \
         actual: \"b\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0"
    );
}

#[test]
fn has_null_key() {
    let t = topology();
    t.input().add_value("x").add("b", "y");
    t.output().expect_next_record().has_null_key();
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_null_key();
        }),
        "record at offset 1 of topic `out`: the key is not the expected one\n\
         expected: null\n  \
         actual: \"b\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0"
    );
}

#[test]
fn has_value() {
    let t = topology();
    t.input().add("a", "x").add("b", "y").add("c", "z");
    t.output().expect_next_record().has_value("X");
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_key("b").has_value("y");
        }),
        "record at offset 1 of topic `out`: the value is not the expected one\n\
         expected: \"y\"\n  \
         actual: \"Y\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0\n  \
         offset 2: key \"c\", value \"Z\", timestamp 0"
    );
}

#[test]
fn has_value_of_a_structured_type_shows_a_diff() -> Result<()> {
    let t = TestTopology::new(orders)?.with_default_serdes(StringSerde, JsonSerde::<Order>::new());
    t.input()
        .add("o-1", order("o-1", 150, false))
        .add("o-2", order("o-2", 20, false));
    t.output()
        .expect_next_record()
        .has_value(order("o-1", 150, true));
    assert_eq!(
        failure(|| {
            t.output()
                .expect_next_record()
                .has_value(order("o-2", 20, true));
        }),
        "record at offset 1 of topic `flagged`: the value is not the expected one\n\
         expected (left, <) against actual (right, >):\n\
         Diff < left / right > :\n \
         Order {\n \
             \x20   id: \"o-2\",\n \
             \x20   amount: 20,\n\
         <    priority: true,\n\
         >    priority: false,\n \
         }\n\
         \n\
         records left in topic `flagged` from offset 1:\n  \
         offset 1: key \"o-2\", value Order { id: \"o-2\", amount: 20, priority: false }, timestamp 0"
    );
    Ok(())
}

#[test]
fn has_value_matching() {
    let t = topology();
    t.input().add("a", "x").add("b", "y").add_tombstone("c");
    t.output()
        .expect_next_record()
        .has_value_matching(|v| v == "X");
    assert_eq!(
        failure(|| {
            t.output()
                .expect_next_record()
                .has_value_matching(|v| v.is_empty());
        }),
        "record at offset 1 of topic `out`: the value does not match the predicate\n\
         value: \"Y\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0\n  \
         offset 2: key \"c\", value null, timestamp 0"
    );
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_value_matching(|_| true);
        }),
        "record at offset 2 of topic `out`: the value does not match the predicate\n\
         value: null\n\
         \n\
         records left in topic `out` from offset 2:\n  \
         offset 2: key \"c\", value null, timestamp 0"
    );
}

#[test]
fn is_tombstone() {
    let t = topology();
    t.input().add_tombstone("a").add("b", "y");
    t.output().expect_next_record().has_key("a").is_tombstone();
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().is_tombstone();
        }),
        "record at offset 1 of topic `out`: the value is not the expected one\n\
         expected: null\n  \
         actual: \"Y\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0"
    );
}

#[test]
fn has_timestamp() {
    let t = topology();
    t.input().at(10).add("a", "x").at(20).add("b", "y");
    t.output().expect_next_record().has_timestamp(10);
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_timestamp(10);
        }),
        "record at offset 1 of topic `out`: the timestamp is not the expected one\n\
         expected: 10\n  \
         actual: 20\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 20"
    );
}

#[test]
fn has_header() {
    let t = topology();
    t.input()
        .with_header("trace", "t-1")
        .add("a", "x")
        .without_headers()
        .with_header("trace", "t-2")
        .add("b", "y")
        .without_headers()
        .add("c", "z");
    t.output().expect_next_record().has_header("trace", "t-1");
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_header("trace", "t-1");
        }),
        "record at offset 1 of topic `out`: header `trace` is not the expected one\n\
         expected: \"t-1\"\n  \
         actual: \"t-2\"\n\
         \n\
         records left in topic `out` from offset 1:\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0, headers [trace=\"t-2\"]\n  \
         offset 2: key \"c\", value \"Z\", timestamp 0"
    );
    assert_eq!(
        failure(|| {
            t.output().expect_next_record().has_header("trace", "t-1");
        }),
        "record at offset 2 of topic `out`: there is no header `trace`\n\
         expected: \"t-1\"\n  \
         actual headers: []\n\
         \n\
         records left in topic `out` from offset 2:\n  \
         offset 2: key \"c\", value \"Z\", timestamp 0"
    );
}

#[test]
fn and_chains_to_the_next_record() {
    let t = topology();
    t.input().add("a", "x").add("b", "y");
    let record = t
        .output()
        .expect_next_record()
        .has_key("a")
        .and()
        .expect_next_record()
        .has_key("b");
    assert_eq!(record.offset(), 1);
    assert_eq!(record.record().value.as_deref(), Some("Y"));
    assert_eq!(record.into_record(), TestRecord::key_value("b", "Y").at(0));
}

#[test]
fn expect_next_record_on_an_empty_topic() {
    let t = topology();
    assert_eq!(
        failure(|| {
            t.output().expect_next_record();
        }),
        "topic `out` has no more records: expected one at offset 0"
    );
    t.input().add("a", "x").add("b", "y");
    t.output().expect_next_record().and().expect_next_record();
    assert_eq!(
        failure(|| {
            t.output().expect_next_record();
        }),
        "topic `out` has no more records: expected one at offset 2"
    );
}

#[test]
fn expect_next_record_with_the_wrong_serde_gives_the_decode_error() {
    let t = topology();
    t.input().add("a", "hello");
    assert_eq!(
        failure(|| {
            t.output().with_value_serde(I64Serde).expect_next_record();
        }),
        "reading topic `out` failed: cannot deserialize the value of the record at out-0 offset 0: \
         size of data received by I64Serde is 5, not 8; check the serde configured for this topic"
    );
    // The record is still there, for the right serde.
    t.output().expect_next_record().has_value("HELLO");
}

#[test]
fn list_checks_with_the_wrong_serde_give_the_decode_error() {
    let t = topology();
    t.input().add("a", "hello");
    let expected = "reading topic `out` failed: cannot deserialize the value of the record at out-0 offset 0: \
                    size of data received by I64Serde is 5, not 8; check the serde configured for this topic";
    let out = t.output().with_value_serde(I64Serde);
    assert_eq!(
        failure(|| {
            out.expect_records([("a", 1)]);
        }),
        expected
    );
    assert_eq!(
        failure(|| {
            out.to_list();
        }),
        expected
    );
    assert_eq!(
        failure(|| {
            out.to_table();
        }),
        expected
    );
    assert_eq!(
        failure(|| {
            out.snapshot();
        }),
        expected
    );
}

#[test]
fn expect_no_more_records() {
    let t = topology();
    t.output().expect_no_more_records();
    t.input().add("a", "x").add_value("y").add_tombstone("c");
    assert_eq!(
        failure(|| {
            t.output().expect_no_more_records();
        }),
        "expected no more records in topic `out`, but 3 are left\n\
         \n\
         records left in topic `out` from offset 0:\n  \
         offset 0: key \"a\", value \"X\", timestamp 0\n  \
         offset 1: key null, value \"Y\", timestamp 0\n  \
         offset 2: key \"c\", value null, timestamp 0"
    );
}

#[test]
fn has_size() {
    let t = topology();
    t.output().has_size(0);
    t.input().add("a", "x").add("b", "y");
    t.output().has_size(2).has_size(2);
    assert_eq!(
        failure(|| {
            t.output().has_size(3);
        }),
        "expected 3 records left in topic `out`, but there are 2\n\
         \n\
         records left in topic `out` from offset 0:\n  \
         offset 0: key \"a\", value \"X\", timestamp 0\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0"
    );
    t.output().expect_next_record().and().expect_next_record();
    assert_eq!(
        failure(|| {
            t.output().has_size(1);
        }),
        "expected 1 record left in topic `out`, but there are 0\n\
         \n\
         topic `out` has no records left"
    );
}

#[test]
fn failure_listings_stop_after_ten_records() {
    let t = topology();
    t.input()
        .add_all((0..13).map(|i| (format!("k{i}"), format!("v{i}"))));
    let message = failure(|| {
        t.output().expect_no_more_records();
    });
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + 1 + 10 + 1);
    assert_eq!(
        lines[3],
        "  offset 0: key \"k0\", value \"V0\", timestamp 0"
    );
    assert_eq!(
        lines[12],
        "  offset 9: key \"k9\", value \"V9\", timestamp 0"
    );
    assert_eq!(lines[13], "  ... and 3 more");
}

#[test]
fn expect_records_in_order() {
    let t = topology();
    t.input()
        .add("a", "x")
        .add_value("y")
        .add_tombstone("c")
        .add("d", "w");
    t.output().expect_records([("a", "X")]).expect_records([
        KeyValue::new(None, Some("Y".to_owned())),
        KeyValue::tombstone("c"),
    ]);
    assert_eq!(
        failure(|| {
            t.output().expect_records([("d", "W"), ("e", "V")]);
        }),
        "expected 2 records in topic `out` from offset 3, but only 1 is left\n\
         expected (left, <) against actual (right, >):\n\
         Diff < left / right > :\n \
         KeyValue(\"d\", \"W\")\n\
         <KeyValue(\"e\", \"V\")\n\
         \n\
         records left in topic `out` from offset 3:\n  \
         offset 3: key \"d\", value \"W\", timestamp 0"
    );
}

#[test]
fn expect_records_that_differ_show_a_diff() {
    let t = topology();
    t.input().add("a", "x").add("b", "y").add("c", "z");
    assert_eq!(
        failure(|| {
            t.output().expect_records([("a", "X"), ("b", "Q")]);
        }),
        "the records of topic `out` from offset 0 are not the expected ones\n\
         expected (left, <) against actual (right, >):\n\
         Diff < left / right > :\n \
         KeyValue(\"a\", \"X\")\n\
         <KeyValue(\"b\", \"Q\")\n\
         >KeyValue(\"b\", \"Y\")\n\
         \n\
         records left in topic `out` from offset 0:\n  \
         offset 0: key \"a\", value \"X\", timestamp 0\n  \
         offset 1: key \"b\", value \"Y\", timestamp 0\n  \
         offset 2: key \"c\", value \"Z\", timestamp 0"
    );
}

#[test]
fn expect_records_in_any_order() {
    let t = topology();
    t.input()
        .add("a", "x")
        .add("b", "y")
        .add("a", "x")
        .add("c", "z");
    t.output()
        .expect_records_in_any_order([("a", "X"), ("a", "X"), ("b", "Y")])
        .expect_records_in_any_order([("c", "Z")])
        .expect_no_more_records();
    t.input().add("a", "x").add("b", "y");
    assert_eq!(
        failure(|| {
            t.output()
                .expect_records_in_any_order([("b", "Y"), ("a", "Y")]);
        }),
        "the records of topic `out` from offset 4 are not the expected ones in any order\n\
         missing: [KeyValue(\"a\", \"Y\")]\n\
         unexpected: [KeyValue(\"a\", \"X\")]\n\
         \n\
         records left in topic `out` from offset 4:\n  \
         offset 4: key \"a\", value \"X\", timestamp 0\n  \
         offset 5: key \"b\", value \"Y\", timestamp 0"
    );
    assert_eq!(
        failure(|| {
            t.output()
                .expect_records_in_any_order([("b", "Y"), ("a", "X"), ("c", "Z")]);
        }),
        "expected 3 records in topic `out` from offset 4 in any order, but only 2 are left\n\
         missing: [KeyValue(\"c\", \"Z\")]\n\
         unexpected: []\n\
         \n\
         records left in topic `out` from offset 4:\n  \
         offset 4: key \"a\", value \"X\", timestamp 0\n  \
         offset 5: key \"b\", value \"Y\", timestamp 0"
    );
}

#[test]
fn to_list_reads_every_record_left() {
    let t = topology();
    t.input().at(5).add("a", "x").add_tombstone("b");
    assert_eq!(
        t.output().to_list(),
        [
            TestRecord::key_value("a", "X").at(5),
            TestRecord::tombstone("b").at(5)
        ]
    );
    assert_eq!(t.output().to_list(), []);
    assert_eq!(t.output().remaining(), 0);
}

// ---------------------------------------------------------------------------
// Table assertions.

fn table_topology() -> TestTopology {
    let t = topology();
    t.input()
        .add("b", "1")
        .add("a", "2")
        .add("b", "3")
        .add("c", "4")
        .add_tombstone("c")
        .add_value("no key")
        .add("d", "5")
        .add_tombstone("a")
        .add("a", "6");
    t
}

#[test]
fn table_output_folds_to_the_latest_value_per_key_in_first_seen_order() {
    let t = table_topology();
    let table = t.table_output();
    assert_eq!(table.topic(), "out");
    assert_eq!(table.len(), 3);
    assert_eq!(table.get(&"b".to_owned()), Some(&"3".to_owned()));
    let entries: Vec<(&String, &String)> = table.iter().collect();
    assert_eq!(
        entries,
        [
            (&"b".to_owned(), &"3".to_owned()),
            (&"d".to_owned(), &"5".to_owned()),
            (&"a".to_owned(), &"6".to_owned())
        ]
    );
    let keys: Vec<String> = (&table).into_iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, ["b", "d", "a"]);
    let owned: Vec<(String, String)> = table.into_iter().collect();
    assert_eq!(owned[0], ("b".to_owned(), "3".to_owned()));
    // The topic was read.
    t.output().expect_no_more_records();
    assert!(t.table_output().is_empty());
}

const TABLE: &str = "the table of topic `out` (3 entries, by first-seen key):\n  \
                     \"b\" -> \"3\" (offset 2)\n  \
                     \"d\" -> \"5\" (offset 6)\n  \
                     \"a\" -> \"6\" (offset 8)";

#[test]
fn table_has_entry() {
    let table = table_topology().table_output();
    table.has_entry("b", "3").has_entry("a", "6");
    assert_eq!(
        failure(|| {
            table.has_entry("b", "1");
        }),
        format!(
            "table of topic `out`: the value for key \"b\" is not the expected one (last written at offset 2)\n\
             expected: \"1\"\n  \
             actual: \"3\"\n\
             \n\
             {TABLE}"
        )
    );
    assert_eq!(
        failure(|| {
            table.has_entry("c", "4");
        }),
        format!("table of topic `out`: no entry for key \"c\"\n\n{TABLE}")
    );
}

#[test]
fn table_has_no_key() {
    let table = table_topology().table_output();
    table.has_no_key("c").has_no_key("zzz");
    assert_eq!(
        failure(|| {
            table.has_no_key("d");
        }),
        format!(
            "table of topic `out`: expected no entry for key \"d\", but it has \"5\" (last written at offset 6)\n\n{TABLE}"
        )
    );
}

#[test]
fn table_has_size() {
    let t = table_topology();
    let table = t.table_output_named("out");
    table.has_size(3);
    assert_eq!(
        failure(|| {
            table.has_size(2);
        }),
        format!("table of topic `out`: expected 2 entries, but there are 3\n\n{TABLE}")
    );
    assert_eq!(
        failure(|| {
            t.table_output().has_size(1);
        }),
        "table of topic `out`: expected 1 entry, but there are 0\n\nthe table of topic `out` is empty"
    );
}

// ---------------------------------------------------------------------------
// Store assertions.

#[test]
fn key_value_store_checks() -> Result<()> {
    let t = TestTopology::new(remember)?.with_default_serdes(StringSerde, I64Serde);
    t.input().add("b", 2).add("a", 1).add("b", 3);
    let store = t.store::<String, i64>("last");
    assert_eq!(store.name(), "last");
    assert_eq!(store.len(), 2);
    assert_eq!(store.get(&"b".to_owned()), Some(&3));
    assert_eq!(store.timestamp(&"b".to_owned()), None);
    let entries: Vec<(&String, &i64)> = store.iter().collect();
    assert_eq!(entries, [(&"a".to_owned(), &1), (&"b".to_owned(), &3)]);
    store
        .has_entry("a", 1)
        .has_entry("b", 3)
        .has_no_key("c")
        .has_size(2);
    let contents = "store `last` (2 entries, in key order):\n  \"a\" -> 1\n  \"b\" -> 3";
    assert_eq!(
        failure(|| {
            store.has_entry("b", 2);
        }),
        format!(
            "store `last`: the value for key \"b\" is not the expected one\n\
             expected: 2\n  \
             actual: 3\n\n{contents}"
        )
    );
    assert_eq!(
        failure(|| {
            store.has_entry("c", 2);
        }),
        format!("store `last`: no entry for key \"c\"\n\n{contents}")
    );
    assert_eq!(
        failure(|| {
            store.has_no_key("a");
        }),
        format!("store `last`: expected no entry for key \"a\", but it has 1\n\n{contents}")
    );
    assert_eq!(
        failure(|| {
            store.has_size(3);
        }),
        format!("store `last`: expected 3 entries, but there are 2\n\n{contents}")
    );
    assert_eq!(
        failure(|| {
            store.has_entry_with_timestamp("a", 1, 0);
        }),
        format!(
            "store `last`: the store is a key-value store, with no timestamps; check values with `has_entry`\n\n{contents}"
        )
    );
    Ok(())
}

#[test]
fn timestamped_store_checks() -> Result<()> {
    let t = TestTopology::new(counts)?;
    t.input().at(5).add_value("a b").at(9).add_value("a");
    let store = t.store::<String, i64>("counts");
    store
        .has_entry("a", 2)
        .has_entry_with_timestamp("a", 2, 9)
        .has_entry_with_timestamp("b", 1, 5);
    assert_eq!(store.timestamp(&"a".to_owned()), Some(9));
    let contents = "store `counts` (2 entries, in key order):\n  \"a\" -> 2, timestamp 9\n  \"b\" -> 1, timestamp 5";
    assert_eq!(
        failure(|| {
            store.has_entry_with_timestamp("a", 2, 5);
        }),
        format!(
            "store `counts`: the timestamp for key \"a\" is not the expected one\n\
             expected: 5\n  \
             actual: 9\n\n{contents}"
        )
    );
    assert_eq!(
        failure(|| {
            store.has_entry_with_timestamp("a", 3, 9);
        }),
        format!(
            "store `counts`: the value for key \"a\" is not the expected one\n\
             expected: 3\n  \
             actual: 2\n\n{contents}"
        )
    );
    Ok(())
}

#[test]
fn store_with_an_unknown_name_or_other_types_fails() -> Result<()> {
    let t = TestTopology::new(counts)?;
    assert_eq!(
        failure(|| {
            t.store::<String, i64>("count");
        }),
        "reading store `count` failed: no store named `count`; the stores are [\"counts\"]"
    );
    // The driver's error names the store's types and the getter to call.
    assert_eq!(
        failure(|| {
            t.store::<String, String>("counts");
        }),
        "reading store `counts` failed: store `counts` is a timestamped key-value store<String, i64>, \
         not the TimestampedKeyValueStore<String, String> asked for; read it with \
         `timestamped_key_value_store::<String, i64>(\"counts\")`, or \
         `key_value_store::<String, i64>(\"counts\")` for its values only"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Snapshots.

#[test]
fn topic_snapshot_as_text() {
    let t = topology();
    t.input()
        .at(10)
        .add("a", "x")
        .with_header("trace", "t-1")
        .add_value("y")
        .add_tombstone("c");
    insta::assert_snapshot!(t.output().snapshot(), @r#"
    topic out: 3 records
    offset 0, timestamp 10: "a" -> "X"
    offset 1, timestamp 10: null -> "Y", headers [trace="t-1"]
    offset 2, timestamp 10: "c" -> null, headers [trace="t-1"]
    "#);
    // The snapshot read the topic.
    insta::assert_snapshot!(t.output().snapshot(), @"topic out: 0 records");
}

#[test]
fn topic_snapshot_without_volatile_fields() {
    let t = topology();
    t.input()
        .at(10)
        .with_header("trace", "4bf92f3577b34da6")
        .with_header("source", "test")
        .add("a", "x");
    let snapshot = t.output().snapshot();
    assert_eq!(snapshot.len(), 1);
    insta::assert_snapshot!(snapshot.clone().without_timestamps().without_offsets().without_headers(), @r#"
    topic out: 1 record
    "a" -> "X"
    "#);
    insta::assert_snapshot!(snapshot.clone().without_offsets().redact_header("trace"), @r#"
    topic out: 1 record
    timestamp 10: "a" -> "X", headers [trace="[redacted]", source="test"]
    "#);
}

#[test]
fn topic_snapshot_as_yaml_shows_the_fields_of_serde_values() -> Result<()> {
    let t = TestTopology::new(orders)?.with_default_serdes(StringSerde, JsonSerde::<Order>::new());
    t.input()
        .with_header("trace", "t-1")
        .add("o-1", order("o-1", 150, false))
        .add_tombstone("o-2");
    insta::assert_yaml_snapshot!(t.output().serde_snapshot(), @r#"
    topic: flagged
    records:
      - offset: 0
        timestamp: 0
        key: o-1
        value:
          amount: 150
          id: o-1
          priority: true
        headers:
          - - trace
            - t-1
      - offset: 1
        timestamp: 0
        key: o-2
        value: ~
        headers:
          - - trace
            - t-1
    "#);
    Ok(())
}

#[test]
fn topic_snapshot_with_insta_redactions() {
    let t = topology();
    t.input().at(1_234).add("a", "x").at(5_678).add("b", "y");
    insta::assert_yaml_snapshot!(t.output().serde_snapshot(), {
        ".records[].timestamp" => "[timestamp]",
    }, @r#"
    topic: out
    records:
      - offset: 0
        timestamp: "[timestamp]"
        key: a
        value: X
      - offset: 1
        timestamp: "[timestamp]"
        key: b
        value: Y
    "#);
}

#[test]
fn store_snapshots() -> Result<()> {
    let t = TestTopology::new(counts)?;
    t.input().at(5).add_value("b a").at(9).add_value("a");
    let store = t.store::<String, i64>("counts");
    insta::assert_snapshot!(store.snapshot(), @r#"
    store counts: 2 entries
    timestamp 9: "a" -> 2
    timestamp 5: "b" -> 1
    "#);
    insta::assert_snapshot!(store.snapshot().without_timestamps(), @r#"
    store counts: 2 entries
    "a" -> 2
    "b" -> 1
    "#);
    insta::assert_yaml_snapshot!(store.serde_snapshot(), @r#"
    store: counts
    entries:
      - timestamp: 9
        key: a
        value: 2
      - timestamp: 5
        key: b
        value: 1
    "#);
    Ok(())
}

// ---------------------------------------------------------------------------
// streams-test/docs/FLUENT.md's example: the word count test, plain and fluent.

mod word_count {
    use streams_core::dsl::{Materialized, Produced};
    use streams_core::serde::{I64Serde, StringSerde};
    use streams_core::{Result, StreamsBuilder, Topology};

    pub(crate) const INPUT: &str = "streams-plaintext-input";
    pub(crate) const OUTPUT: &str = "streams-wordcount-output";
    pub(crate) const STORE: &str = "counts-store";

    pub(crate) fn topology() -> Result<Topology> {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>(INPUT)
            .flat_map_values(|line: &String| {
                line.to_lowercase()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .group_by(|_, word| word.clone())
            .count_with(Materialized::as_(STORE))
            .to_stream()
            .to_with(OUTPUT, Produced::with(StringSerde, I64Serde));
        builder.build()
    }
}

#[test]
fn counts_words_plain() -> Result<()> {
    use streams_test::TopologyTestDriver;
    use word_count::{INPUT, OUTPUT, STORE};

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
    let store = driver.timestamped_key_value_store::<String, i64>(STORE)?;
    assert_eq!(store.get(&"a".to_string()).map(|v| v.value), Some(2));
    Ok(())
}

#[test]
fn counts_words_fluent() -> Result<()> {
    use word_count::STORE;

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
