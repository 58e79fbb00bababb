//! The oracle's `StatelessScenarios`: one scenario per stateless DSL
//! operation. String keys and values, input `in`, output `out` unless
//! said otherwise; every input record has an explicit timestamp.

use streams_core::dsl::{Branched, KStream};
use streams_core::processor::{
    FixedKeyProcessor, FixedKeyProcessorContext, FixedKeyRecord, Processor, ProcessorContext,
};
use streams_core::{Headers, Record, Result, StreamsBuilder};
use streams_test::{TestRecord, TopologyTestDriver};

use super::{
    Recorder, Scenario, ScenarioResult, first_char, input, java_list, jlen, scenario, show,
};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(filter),
    scenario!(filter_not),
    scenario!(map),
    scenario!(map_values),
    scenario!(map_values_with_key),
    scenario!(flat_map),
    scenario!(flat_map_values),
    scenario!(select_key),
    scenario!(peek_and_foreach),
    scenario!(foreach_only),
    scenario!(split_named_branches),
    scenario!(split_unnamed_no_default),
    scenario!(split_generated_branch_names),
    scenario!(merge),
    scenario!(merge_with_self_derived),
    scenario!(to_fixed_topic),
    scenario!(to_topic_name_extractor),
    scenario!(process_custom_processor),
    scenario!(process_values_fixed_key),
    scenario!(null_keys_and_values),
    scenario!(headers_passthrough),
    scenario!(headers_modified_by_processor),
    scenario!(chained_operators),
];

/// Pipes (k1,"a",0) (k2,"abcd",1) (k3,"abc",2) (k4,"abcdef",3) into `in`.
fn pipe_four(driver: &TopologyTestDriver) {
    let i = input(driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "abcd", 1);
    i.pipe_key_value_at("k3", "abc", 2);
    i.pipe_key_value_at("k4", "abcdef", 3);
}

/// A Java key that every input of the scenario has (Java would pass `null` on).
fn key(k: Option<&S>) -> S {
    k.cloned()
        .expect("every input record of this scenario has a key")
}

fn filter() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").filter(|_, v| jlen(v) > 3).to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

fn filter_not() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .filter_not(|_, v| v.starts_with('x'))
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "xa", 0);
    i.pipe_key_value_at("k2", "b", 1);
    i.pipe_key_value_at("k3", "x", 2);
    i.pipe_key_value_at("k4", "cx", 3);
    g.output(&driver, "out");
    g.finish(driver)
}

fn map() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map(|k, v| (v.clone(), key(k)))
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

fn map_values() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values(|v| v.to_uppercase())
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

fn map_values_with_key() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values_with_key(|k, v| format!("{}={v}", show(k)))
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

fn flat_map() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .flat_map(|k, v| {
            if v.is_empty() {
                vec![]
            } else {
                vec![(key(k), v.clone()), (v.clone(), key(k))]
            }
        })
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 10);
    i.pipe_key_value_at("k2", "", 20);
    i.pipe_key_value_at("k3", "bc", 30);
    g.output(&driver, "out");
    g.finish(driver)
}

fn flat_map_values() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .flat_map_values(|v: &S| v.chars().map(String::from).collect::<Vec<_>>())
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "ab", 10);
    i.pipe_key_value_at("k2", "", 20);
    i.pipe_key_value_at("k3", "xyz", 30);
    g.output(&driver, "out");
    g.finish(driver)
}

fn select_key() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .select_key(|_, v| first_char(v))
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

fn peek_and_foreach() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    let o = obs.clone();
    s.clone()
        .peek(move |k, v| o.push(format!("peek:{}={v}", show(k))))
        .to("out");
    s.foreach(move |k, v| obs.push(format!("foreach:{}={v}", show(k))));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "b", 1);
    g.output(&driver, "out");
    g.finish(driver)
}

/// Java's `foreach` lambda sees null keys and null values: our
/// `foreach_nullable`.
fn foreach_only() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").foreach_nullable(move |k, v| {
        obs.push(format!("foreach:{}={}", show(k), show(v)));
    });
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_record(TestRecord::new(None, Some("b".to_owned())).at(1));
    i.pipe_record(TestRecord::new(Some("k3".to_owned()), None).at(2));
    g.finish(driver)
}

/// Removes a branch from the map `split` returned.
fn branch(
    branches: &mut std::collections::BTreeMap<S, KStream<S, S>>,
    name: &str,
) -> std::result::Result<KStream<S, S>, String> {
    branches
        .remove(name)
        .ok_or_else(|| format!("no branch `{name}` in {:?}", branches.keys()))
}

fn split_named_branches() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let mut branches = b
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
    obs.push(format!("branch map keys: {}", java_list(branches.keys())));
    branch(&mut branches, "split-a")?.to("out-a");
    branch(&mut branches, "split-b")?.to("out-b");
    branch(&mut branches, "split-other")?.to("out-other");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "apple", 0);
    i.pipe_key_value_at("k2", "banana", 1);
    i.pipe_key_value_at("k3", "cherry", 2);
    i.pipe_key_value_at("k4", "ab", 3);
    i.pipe_key_value_at("k5", "avocado", 4);
    g.output(&driver, "out-a");
    g.output(&driver, "out-b");
    g.output(&driver, "out-other");
    g.finish(driver)
}

/// `Branched.withConsumer` is a function that returns no stream.
fn split_unnamed_no_default() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let branches = b
        .stream::<S, S>("in")
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
    obs.push(format!("branch map keys: {}", java_list(branches.keys())));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "apple", 0);
    i.pipe_key_value_at("k2", "banana", 1);
    i.pipe_key_value_at("k3", "cherry", 2);
    g.output(&driver, "out-a");
    g.output(&driver, "out-b");
    g.finish(driver)
}

fn split_generated_branch_names() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    let branches = b
        .stream::<S, S>("in")
        .split()
        .branch(|_, v| v.starts_with('a'), Branched::new())
        .branch(|_, v| v.starts_with('b'), Branched::new())
        .default_branch(Branched::new());
    obs.push(format!("branch map keys: {}", java_list(branches.keys())));
    // Sorted keys (a BTreeMap): <prefix>0 (default), <prefix>1, <prefix>2.
    for (key, stream) in branches {
        let last: String = key.chars().last().into_iter().collect();
        stream.to(&format!("out-{last}"));
    }
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "apple", 0);
    i.pipe_key_value_at("k2", "banana", 1);
    i.pipe_key_value_at("k3", "cherry", 2);
    g.output(&driver, "out-0");
    g.output(&driver, "out-1");
    g.output(&driver, "out-2");
    g.finish(driver)
}

fn merge() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s1 = b.stream::<S, S>("in1");
    let s2 = b.stream::<S, S>("in2");
    s1.merge(&s2).to("out");
    let driver = g.start(b.build()?)?;
    let in1 = input(&driver, "in1");
    let in2 = input(&driver, "in2");
    in1.pipe_key_value_at("a1", "x", 5);
    in2.pipe_key_value_at("b1", "y", 3);
    in1.pipe_key_value_at("a2", "z", 1);
    in2.pipe_key_value_at("b2", "w", 7);
    g.output(&driver, "out");
    g.finish(driver)
}

fn merge_with_self_derived() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    // Java evaluates the argument first: mapValues is the source's first child.
    let derived = s.clone().map_values(|v| format!("{v}'"));
    s.merge(&derived).to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "b", 1);
    g.output(&driver, "out");
    g.finish(driver)
}

fn to_fixed_topic() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "v1", 100);
    i.pipe_value_at("v2", 50);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `FirstCharTopicExtractor`: `"out-" + value.substring(0, 1)`,
/// named as Kafka prints it.
struct FirstCharTopicExtractor;

impl streams_core::topology::TopicNameExtractor<S, S> for FirstCharTopicExtractor {
    fn extract(&self, r: &Record<S, S>) -> S {
        format!("out-{}", first_char(show(r.value.as_ref())))
    }

    fn name(&self) -> String {
        "FirstCharTopicExtractor".to_owned()
    }
}

fn to_topic_name_extractor() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to_dynamic(FirstCharTopicExtractor);
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "x1", 0);
    i.pipe_key_value_at("k2", "y1", 1);
    i.pipe_key_value_at("k3", "x2", 2);
    i.pipe_key_value_at("k4", "z1", 3);
    g.output(&driver, "out-x");
    g.output(&driver, "out-y");
    g.output(&driver, "out-z");
    g.finish(driver)
}

/// The oracle's `CountingProcessor`: forwards (key, value@timestamp), then
/// ("count", running count) with the same timestamp and no headers.
#[derive(Default)]
struct CountingProcessor {
    count: u64,
}

impl Processor<S, S> for CountingProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        self.count += 1;
        let ts = r.timestamp;
        let value = format!("{}@{ts}", show(r.value.as_ref()));
        ctx.forward(r.with_value(Some(value)))?;
        ctx.forward(Record::new(
            Some("count".to_owned()),
            Some(self.count.to_string()),
            ts,
        ))
    }
}

fn process_custom_processor() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .process::<S, S, _>(CountingProcessor::default)
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 10);
    i.pipe_key_value_at("k2", "b", 20);
    i.pipe_key_value_at("k3", "c", 15);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `LengthPrefixProcessor` (a FixedKeyProcessor): the value
/// becomes `<length>:<value>`, the key stays.
struct LengthPrefixProcessor;

impl FixedKeyProcessor<S, S> for LengthPrefixProcessor {
    fn process(
        &mut self,
        ctx: &mut FixedKeyProcessorContext<'_, S, S>,
        r: FixedKeyRecord<S, S>,
    ) -> Result<()> {
        let value = r.value().map(|v| format!("{}:{v}", jlen(v)));
        ctx.forward(r.with_value(value))
    }
}

fn process_values_fixed_key() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .process_values(|| LengthPrefixProcessor)
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_four(&driver);
    g.output(&driver, "out");
    g.finish(driver)
}

/// Java's `mapValues(v -> v == null ? "<null>" : v.toUpperCase())` and
/// `filter((k, v) -> k != null)`, whose lambdas see null values: our
/// `*_nullable` forms.
fn null_keys_and_values() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone().to("out-raw");
    s.clone()
        .map_values_nullable(|_, v: Option<&S>| {
            Some(v.map_or_else(|| "<null>".to_owned(), |v| v.to_uppercase()))
        })
        .to("out-mapped");
    s.filter_nullable(|k, _| k.is_some()).to("out-filtered");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_record(TestRecord::new(None, Some("x".to_owned())).at(0));
    i.pipe_record(TestRecord::new(Some("k2".to_owned()), None).at(1));
    i.pipe_record(TestRecord::new(None, None).at(2));
    i.pipe_key_value_at("k4", "y", 3);
    g.output(&driver, "out-raw");
    g.output(&driver, "out-mapped");
    g.output(&driver, "out-filtered");
    g.finish(driver)
}

fn headers_passthrough() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .map_values(|v| format!("{v}!"))
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    let rec = |k: &str, v: &str, ts| TestRecord::<S, S>::key_value(k, v).at(ts);
    i.pipe_record(
        rec("k1", "a", 0)
            .with_header("h1", "v1")
            .with_header("h2", "v2"),
    );
    i.pipe_record(rec("k2", "b", 1).with_headers(Headers::new()));
    let mut dup = Headers::new();
    dup.add("dup", "1").add("dup", "2").add_null("nullval");
    i.pipe_record(rec("k3", "c", 2).with_headers(dup));
    i.pipe_record(rec("k4", "d", 3).with_header("ü", "grüße €"));
    g.output(&driver, "out");
    g.finish(driver)
}

/// The oracle's `HeaderRewriteProcessor`: copies the headers without any
/// `drop` header, appends `seen: yes`.
struct HeaderRewriteProcessor;

impl Processor<S, S> for HeaderRewriteProcessor {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let mut headers: Headers = r
            .headers
            .iter()
            .filter(|h| h.key != "drop")
            .cloned()
            .collect();
        headers.add("seen", "yes");
        ctx.forward(r.with_headers(headers))
    }
}

fn headers_modified_by_processor() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .process::<S, S, _>(|| HeaderRewriteProcessor)
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_record(
        TestRecord::<S, S>::key_value("k1", "a")
            .at(0)
            .with_header("keep", "1")
            .with_header("drop", "2")
            .with_header("keep", "3"),
    );
    i.pipe_record(TestRecord::<S, S>::key_value("k2", "b").at(1));
    g.output(&driver, "out");
    g.finish(driver)
}

fn chained_operators() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .filter(|_, v| !v.is_empty())
        .map_values(|v| v.to_uppercase())
        .select_key(|k, v| format!("{}-{}", show(k), jlen(v)))
        .flat_map_values(|v: &S| vec![v.clone(), format!("{v}{v}")])
        .filter_not(|_, v| v == "BB")
        .map(|k, v| (v.clone(), key(k)))
        .to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k1", "a", 0);
    i.pipe_key_value_at("k2", "", 1);
    i.pipe_key_value_at("k3", "b", 2);
    i.pipe_key_value_at("k4", "cd", 3);
    g.output(&driver, "out");
    g.finish(driver)
}
