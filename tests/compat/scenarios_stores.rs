//! The oracle's `StoreScenarios`: Processor API stores, the order in which
//! they give their keys (Kafka's: by serialized bytes), their range and
//! prefix queries.

use std::any::Any;
use std::fmt::Display;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use streams_core::dsl::{Materialized, SessionWindows, TimeWindows, Windowed};
use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
use streams_core::serde::{BytesSerde, I32Serde, I64Serde, JsonSerde, StringSerde};
use streams_core::state::{KeyValueIterator, StateStore, StoreBuilder, Stores, ValueAndTimestamp};
use streams_core::{Record, Result, StreamsBuilder, StreamsConfig, StreamsError, Topology};

use super::{Observer, Recorder, Scenario, ScenarioResult, input, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(store_key_order),
    scenario!(driver_store_getters),
    scenario!(papi_store_caching),
    #[cfg(feature = "rocksdb")]
    scenario!(persistent_store_order),
];

/// Scenarios that need RocksDB (the `rocksdb` feature of this crate): not
/// registered without it, so their golden files are not missing scenarios.
pub(super) const NEED_ROCKSDB: &[&str] = &["persistent_store_order"];

/// The oracle's JSON key `{"id":n}`, whose text is what Kafka orders.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Id {
    id: i64,
}

/// The oracle's `KeyOrderProcessor`: writes each record into five stores;
/// a wall-clock punctuation forwards, per query, the keys it returned.
struct KeyOrder;

fn keys<K, V>(found: KeyValueIterator<K, V>, show: impl Fn(K) -> String) -> String {
    found.map(|(k, _)| show(k)).collect::<Vec<_>>().join(",")
}

fn num<K: Display>(k: K) -> String {
    k.to_string()
}

fn windowed(w: Windowed<i64>) -> String {
    format!("{}@{}/{}", w.key, w.window.start, w.window.end)
}

impl Processor<i64, S, S, S> for KeyOrder {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, S, S>) -> Result<()> {
        ctx.schedule(Duration::from_millis(1000), PunctuationType::WallClockTime)?;
        Ok(())
    }

    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<i64, S>) -> Result<()> {
        let (Some(k), Some(v)) = (r.key, r.value) else {
            return Ok(());
        };
        let t = r.timestamp;
        ctx.key_value_store::<i64, S>("kv")?.put(k, v.clone())?;
        ctx.window_store::<i64, S>("window")?
            .put(k, v.clone(), t / 10 * 10)?;
        ctx.session_store::<i64, S>("session")?.put(
            Windowed::new(k, streams_core::dsl::Window::new(t, t)),
            v.clone(),
        )?;
        ctx.key_value_store::<S, S>("text")?
            .put(v.clone(), k.to_string())?;
        ctx.key_value_store::<Id, S>("json")?.put(Id { id: k }, v)?;
        Ok(())
    }

    // Bounds such as `1..=-1` compare as bytes, as in Kafka: not empty.
    #[allow(clippy::reversed_empty_ranges)]
    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, S, S>,
        ts: i64,
        _: &Punctuation,
    ) -> Result<()> {
        let mut out: Vec<(&str, String)> = Vec::new();
        {
            let kv = ctx.key_value_store::<i64, S>("kv")?;
            out.push(("kv.all", keys(kv.all()?, num)));
            out.push(("kv.reverseAll", keys(kv.reverse_all()?, num)));
            out.push(("kv.range(-1,1)", keys(kv.range(-1..=1)?, num)));
            out.push(("kv.range(1,-1)", keys(kv.range(1..=-1)?, num)));
            out.push(("kv.range(null,2)", keys(kv.range(..=2)?, num)));
            out.push(("kv.range(-2,null)", keys(kv.range(-2..)?, num)));
            out.push((
                "kv.reverseRange(0,-2)",
                keys(kv.reverse_range(0..=-2)?, num),
            ));
            out.push((
                "kv.prefixScan(int -2)",
                keys(kv.prefix_scan(&-2, I32Serde)?, num),
            ));
            out.push((
                "kv.prefixScan(int 0)",
                keys(kv.prefix_scan(&0, I32Serde)?, num),
            ));
        }
        {
            let window = ctx.window_store::<i64, S>("window")?;
            out.push((
                "window.fetchAll(0,100)",
                keys(window.fetch_all(0..=100)?, windowed),
            ));
            out.push((
                "window.backwardFetchAll(0,100)",
                keys(window.backward_fetch_all(0..=100)?, windowed),
            ));
            out.push((
                "window.fetch(1,-2,0,100)",
                keys(window.fetch_range(1..=-2, 0..=100)?, windowed),
            ));
            out.push((
                "window.fetch(-1,1,0,100)",
                keys(window.fetch_range(-1..=1, 0..=100)?, windowed),
            ));
            out.push((
                "window.fetch(-1,0,100)",
                keys(window.fetch(&-1, 0..=100)?, num),
            ));
        }
        {
            let session = ctx.session_store::<i64, S>("session")?;
            out.push((
                "session.fetch(1,-2)",
                keys(session.fetch_range(1..=-2)?, windowed),
            ));
            out.push((
                "session.findSessions(-1,1,0,100)",
                keys(session.find_sessions_in_range(-1..=1, 0, 100)?, windowed),
            ));
            out.push((
                "session.findSessions(0,-1,0,100)",
                keys(session.find_sessions_in_range(0..=-1, 0, 100)?, windowed),
            ));
        }
        {
            let text = ctx.key_value_store::<S, S>("text")?;
            let same = |k: S| k;
            out.push(("text.all", keys(text.all()?, same)));
            out.push((
                "text.range(a,b)",
                keys(text.range("a".to_owned()..="b".to_owned())?, same),
            ));
            out.push((
                "text.prefixScan(a)",
                keys(text.prefix_scan(&"a".to_owned(), StringSerde)?, same),
            ));
        }
        {
            let json = ctx.key_value_store::<Id, S>("json")?;
            let text = |k: Id| format!("{{\"id\":{}}}", k.id);
            out.push(("json.all", keys(json.all()?, text)));
        }
        for (query, result) in out {
            ctx.forward(Record::new(Some(query.to_owned()), Some(result), ts))?;
        }
        Ok(())
    }
}

fn store_key_order() -> ScenarioResult {
    let mut g = Recorder::new();
    let second = Duration::from_millis(1000);
    let mut t = Topology::new();
    t.add_source_with_serdes::<i64, S>("Source", "in", I64Serde, StringSerde)?
        .add_processor("Order", || KeyOrder, &["Source"])?
        .add_state_store(
            Stores::key_value_store_builder("kv", I64Serde, StringSerde),
            &["Order"],
        )?
        .add_state_store(
            Stores::window_store_builder(
                "window",
                second,
                Duration::from_millis(10),
                false,
                I64Serde,
                StringSerde,
            ),
            &["Order"],
        )?
        .add_state_store(
            Stores::session_store_builder("session", second, I64Serde, StringSerde),
            &["Order"],
        )?
        .add_state_store(
            Stores::key_value_store_builder("text", StringSerde, StringSerde),
            &["Order"],
        )?
        .add_state_store(
            Stores::key_value_store_builder("json", JsonSerde::<Id>::new(), StringSerde),
            &["Order"],
        )?
        .add_sink_with_serdes::<S, S>("Sink", "order", StringSerde, StringSerde, &["Order"])?;
    let driver = g.start(t)?;
    let i = driver.create_input_topic_with_time("in", I64Serde, StringSerde, 0, Duration::ZERO);
    for (k, v, ts) in [
        (1_i64, "a", 1),
        (-1, "ab", 2),
        (2, "b", 3),
        (-2, "\u{e9}", 4),
        (0, "Z", 12),
        (10, "abc", 13),
        (-10, "aa", 14),
        (4_294_967_296, "b\u{e9}", 15),
        (-4_294_967_297, "a\u{e9}", 16),
    ] {
        i.pipe_key_value_at(k, v, ts);
    }
    driver.try_advance_wall_clock_time(second)?;
    g.output(&driver, "order");
    g.finish(driver)
}

/// The oracle's `CounterStore`: counts the records it is told about.
struct Counter {
    count: u64,
}

impl StateStore for Counter {
    fn name(&self) -> &str {
        "counter"
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The oracle's `CounterStoreBuilder`, without logging.
struct CounterBuilder;

impl StoreBuilder for CounterBuilder {
    fn name(&self) -> &str {
        "counter"
    }
    fn logging_enabled(&self) -> bool {
        false
    }
    fn build(&self, _: &StreamsConfig) -> Result<Box<dyn StateStore>> {
        Ok(Box::new(Counter { count: 0 }))
    }
}

/// The oracle's `CountingProcessor`: tells `counter` about every record
/// and writes its count to `plain`.
struct Counting;

impl Processor<S, S, S, S> for Counting {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let count = {
            let mut counter = ctx.state_store::<Counter>("counter")?;
            counter.count += 1;
            counter.count
        };
        if let Some(k) = r.key {
            ctx.key_value_store::<S, i64>("plain")?
                .put(k, count as i64)?;
        }
        Ok(())
    }
}

fn timestamped<V: Display>(v: ValueAndTimestamp<V>) -> String {
    format!("{}@{}", v.value, v.timestamp)
}

fn entries<K: Display, V: Display>(found: Vec<(K, V)>) -> String {
    let shown: Vec<String> = found.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", shown.join(", "))
}

/// The oracle's `attempt`: what the getter gave, `null` where Kafka's gives
/// null (a getter of another kind, an unknown store), Kafka's exception
/// where it throws.
fn attempt(obs: &Observer, what: &str, got: std::result::Result<String, StreamsError>) {
    let shown = match got {
        Ok(s) => s,
        Err(StreamsError::WrongStoreType { .. } | StreamsError::UnknownStore { .. }) => {
            "null".to_owned()
        }
        Err(e @ StreamsError::BuiltInStore { .. }) => format!(
            "IllegalArgumentException: {}",
            e.kafka_message().unwrap_or_default()
        ),
        Err(e) => format!("error: {e}"),
    };
    obs.push(format!("{what} -> {shown}"));
}

fn option<V: Display>(v: Option<V>) -> String {
    v.map_or_else(|| "null".to_owned(), |v| v.to_string())
}

fn driver_store_getters() -> ScenarioResult {
    let mut g = Recorder::new();
    let obs = g.observer();
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in")
        .group_by_key()
        .count_with(Materialized::as_("counts"));
    b.stream::<S, S>("quiet-in").group_by_key().count_with(
        Materialized::as_("quiet")
            .with_logging_disabled()
            .with_caching_disabled(),
    );
    b.table_with::<S, S>("names", Materialized::as_("names-store"));
    b.global_table_with::<S, S>("countries", Materialized::as_("countries-store"));
    b.stream::<S, S>("clicks")
        .group_by_key()
        .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_millis(
            10,
        ))?)
        .count_with(Materialized::as_("windowed"));
    b.stream::<S, S>("visits")
        .group_by_key()
        .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(
            Duration::from_millis(10),
        )?)
        .count_with(Materialized::as_("sessions"));
    let mut t = b.build()?;
    t.add_source::<S, S>("Events", "events")?
        .add_processor("Counting", || Counting, &["Events"])?
        .add_state_store(CounterBuilder, &["Counting"])?
        .add_state_store(
            Stores::key_value_store_builder("plain", StringSerde, I64Serde),
            &["Counting"],
        )?;
    let d = g.start(t)?;
    input(&d, "in").pipe_key_value_at("a", "x", 5);
    input(&d, "in").pipe_key_value_at("a", "y", 7);
    input(&d, "names").pipe_key_value_at("n", "Ann", 3);
    input(&d, "countries").pipe_key_value_at("fr", "France", 4);
    input(&d, "clicks").pipe_key_value_at("a", "x", 12);
    input(&d, "visits").pipe_key_value_at("a", "x", 20);
    input(&d, "events").pipe_key_value_at("e", "x", 1);
    input(&d, "events").pipe_key_value_at("f", "x", 2);

    let a = &obs;
    attempt(
        a,
        "getKeyValueStore(counts).get(a)",
        d.key_value_store::<S, i64>("counts")
            .map(|s| option(s.get("a"))),
    );
    attempt(
        a,
        "getKeyValueStore(counts).all()",
        d.key_value_store::<S, i64>("counts")
            .map(|s| entries(s.all())),
    );
    attempt(
        a,
        "getTimestampedKeyValueStore(counts).get(a)",
        d.timestamped_key_value_store::<S, i64>("counts")
            .map(|s| option(s.get("a").map(timestamped))),
    );
    attempt(
        a,
        "getKeyValueStore(names-store).get(n)",
        d.key_value_store::<S, S>("names-store")
            .map(|s| option(s.get("n"))),
    );
    attempt(
        a,
        "getKeyValueStore(countries-store).get(fr)",
        d.key_value_store::<S, S>("countries-store")
            .map(|s| option(s.get("fr"))),
    );
    attempt(
        a,
        "getTimestampedKeyValueStore(countries-store).get(fr)",
        d.timestamped_key_value_store::<S, S>("countries-store")
            .map(|s| option(s.get("fr").map(timestamped))),
    );
    attempt(
        a,
        "getKeyValueStore(plain).all()",
        d.key_value_store::<S, i64>("plain")
            .map(|s| entries(s.all())),
    );
    attempt(
        a,
        "getTimestampedKeyValueStore(plain)",
        d.timestamped_key_value_store::<S, i64>("plain")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getKeyValueStore(windowed)",
        d.key_value_store::<S, i64>("windowed")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getKeyValueStore(sessions)",
        d.key_value_store::<S, i64>("sessions")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getKeyValueStore(counter)",
        d.key_value_store::<S, i64>("counter")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getWindowStore(windowed).fetch(a,10)",
        d.window_store::<S, i64>("windowed")
            .map(|s| option(s.get("a", 10))),
    );
    attempt(
        a,
        "getTimestampedWindowStore(windowed).fetch(a,10)",
        d.timestamped_window_store::<S, i64>("windowed")
            .map(|s| option(s.get("a", 10).map(timestamped))),
    );
    attempt(
        a,
        "getWindowStore(counts)",
        d.window_store::<S, i64>("counts")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getSessionStore(sessions).fetch(a)",
        d.session_store::<S, i64>("sessions")
            .map(|s| entries(s.fetch("a"))),
    );
    attempt(
        a,
        "getSessionStore(windowed)",
        d.session_store::<S, i64>("windowed")
            .map(|s| format!("store {}", s.name())),
    );
    attempt(
        a,
        "getVersionedKeyValueStore(counts)",
        d.versioned_key_value_store::<S, i64>("counts")
            .map(|s| format!("store {}", s.name())),
    );
    for store in [
        "counts",
        "names-store",
        "countries-store",
        "plain",
        "windowed",
        "sessions",
        "counter",
        "missing",
    ] {
        attempt(
            a,
            &format!("getStateStore({store})"),
            d.state_store(store).map(|s| format!("store {}", s.name())),
        );
    }
    attempt(
        a,
        "counter.count",
        d.state_store("counter")
            .and_then(|s| s.with(|c: &mut Counter| c.count.to_string())),
    );
    attempt(
        a,
        "getKeyValueStore(quiet).put(z,5)",
        d.key_value_store::<S, i64>("quiet")
            .and_then(|s| s.put("z".to_owned(), 5))
            .map(|_| "done".to_owned()),
    );
    attempt(
        a,
        "getTimestampedKeyValueStore(quiet).get(z)",
        d.timestamped_key_value_store::<S, i64>("quiet")
            .map(|s| option(s.get("z").map(timestamped))),
    );
    attempt(
        a,
        "getKeyValueStore(quiet).delete(z)",
        d.key_value_store::<S, i64>("quiet")
            .and_then(|s| s.delete("z"))
            .map(option),
    );
    attempt(
        a,
        "getKeyValueStore(plain).put(q,5)",
        d.key_value_store::<S, i64>("plain")
            .and_then(|s| s.put("q".to_owned(), 5))
            .map(|_| "done".to_owned()),
    );
    attempt(
        a,
        "getKeyValueStore(plain).delete(e)",
        d.key_value_store::<S, i64>("plain")
            .and_then(|s| s.delete("e"))
            .map(option),
    );
    // The driver hands on what the stores wrote when it next processes a record.
    input(&d, "names").pipe_key_value_at("m", "Max", 30);
    g.output_as(&d, "compat-counts-changelog", StringSerde, I64Serde);
    g.output_as(&d, "compat-plain-changelog", StringSerde, I64Serde);
    g.finish(d)
}

/// The oracle's `CachedWordsProcessor`: counts words (deletes the words
/// written `-word`) in five stores, four of them cached, and forwards what
/// the stores give back right after each write.
struct CachedWords;

impl Processor<S, S, S, S> for CachedWords {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<S, S>) -> Result<()> {
        let ts = r.timestamp;
        let start = ts / 10 * 10;
        let session = |k: &str| Windowed::new(k.to_owned(), streams_core::dsl::Window::new(ts, ts));
        for word in r.value.clone().unwrap_or_default().split(' ') {
            let shown = if let Some(key) = word.strip_prefix('-') {
                let old = ctx.key_value_store::<S, i64>("counts")?.delete(key)?;
                ctx.key_value_store::<S, i64>("uncached")?.delete(key)?;
                ctx.timestamped_key_value_store::<S, i64>("ts-counts")?
                    .delete(key)?;
                ctx.window_store::<S, i64>("windows")?.delete(key, start)?;
                ctx.session_store::<S, i64>("sessions")?
                    .remove(&session(key))?;
                let now = ctx.key_value_store::<S, i64>("counts")?.get(key)?;
                (
                    key.to_owned(),
                    format!("deleted {}, now {}", option(old), option(now)),
                )
            } else {
                let count = ctx
                    .key_value_store::<S, i64>("counts")?
                    .get(word)?
                    .unwrap_or(0)
                    + 1;
                ctx.key_value_store::<S, i64>("counts")?
                    .put(word.to_owned(), count)?;
                ctx.key_value_store::<S, i64>("uncached")?
                    .put(word.to_owned(), count)?;
                ctx.timestamped_key_value_store::<S, i64>("ts-counts")?
                    .put(word.to_owned(), count, ts)?;
                ctx.window_store::<S, i64>("windows")?
                    .put(word.to_owned(), count, start)?;
                ctx.session_store::<S, i64>("sessions")?
                    .put(session(word), count)?;
                let shown = format!(
                    "{} {} {} {}",
                    option(ctx.key_value_store::<S, i64>("counts")?.get(word)?),
                    ctx.timestamped_key_value_store::<S, i64>("ts-counts")?
                        .get(word)?
                        .map_or(-1, |v| v.timestamp),
                    option(ctx.window_store::<S, i64>("windows")?.get(word, start)?),
                    option(
                        ctx.session_store::<S, i64>("sessions")?
                            .fetch_session(word, ts, ts)?
                    ),
                );
                (word.to_owned(), shown)
            };
            ctx.forward(Record {
                key: Some(shown.0),
                value: Some(shown.1),
                timestamp: ts,
                headers: r.headers.clone(),
            })?;
        }
        Ok(())
    }
}

fn papi_store_caching() -> ScenarioResult {
    let mut g = Recorder::new();
    let second = Duration::from_millis(1000);
    let mut t = Topology::new();
    t.add_source::<S, S>("Source", "in")?
        .add_processor("Words", || CachedWords, &["Source"])?
        .add_state_store(
            Stores::key_value_store_builder("counts", StringSerde, I64Serde).with_caching_enabled(),
            &["Words"],
        )?
        .add_state_store(
            Stores::key_value_store_builder("uncached", StringSerde, I64Serde),
            &["Words"],
        )?
        .add_state_store(
            Stores::timestamped_key_value_store_builder("ts-counts", StringSerde, I64Serde)
                .with_caching_enabled(),
            &["Words"],
        )?
        .add_state_store(
            Stores::window_store_builder(
                "windows",
                second,
                Duration::from_millis(10),
                false,
                StringSerde,
                I64Serde,
            )
            .with_caching_enabled(),
            &["Words"],
        )?
        .add_state_store(
            Stores::session_store_builder("sessions", second, StringSerde, I64Serde)
                .with_caching_enabled(),
            &["Words"],
        )?
        .add_sink::<S, S>("Sink", "out", &["Words"])?;
    let driver = g.start(t)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k", "a b a", 1);
    i.pipe_key_value_at("k", "b c", 12);
    i.pipe_key_value_at("k", "-a -never c", 13);
    g.output(&driver, "out");
    g.output_as(&driver, "compat-counts-changelog", StringSerde, I64Serde);
    g.output_as(&driver, "compat-uncached-changelog", StringSerde, I64Serde);
    g.output_as(&driver, "compat-ts-counts-changelog", StringSerde, I64Serde);
    g.output_as(&driver, "compat-windows-changelog", BytesSerde, I64Serde);
    g.output_as(&driver, "compat-sessions-changelog", BytesSerde, I64Serde);
    g.finish(driver)
}

/// The oracle's `PersistentOrderProcessor`: writes each record into
/// RocksDB window, timestamped window and session stores; a record with
/// key 999 forwards, per query, what it returned.
#[cfg(feature = "rocksdb")]
struct PersistentOrder;

#[cfg(feature = "rocksdb")]
fn shown<K, V: Display>(found: KeyValueIterator<K, V>, show: impl Fn(K) -> String) -> String {
    found
        .map(|(k, v)| format!("{}={v}", show(k)))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(feature = "rocksdb")]
impl Processor<i64, S, S, S> for PersistentOrder {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, S, S>, r: Record<i64, S>) -> Result<()> {
        let (Some(k), Some(v)) = (r.key, r.value) else {
            return Ok(());
        };
        let t = r.timestamp;
        if k == 999 {
            return self.dump(ctx, t);
        }
        let start = t / 10 * 10;
        ctx.window_store::<i64, S>("window")?
            .put(k, v.clone(), start)?;
        ctx.timestamped_window_store::<i64, S>("timestamped")?
            .put(k, v.clone(), t, start)?;
        ctx.session_store::<i64, S>("session")?.put(
            Windowed::new(k, streams_core::dsl::Window::new((t - 3).max(0), t)),
            v,
        )?;
        Ok(())
    }
}

#[cfg(feature = "rocksdb")]
impl PersistentOrder {
    #[allow(clippy::reversed_empty_ranges)]
    fn dump(&self, ctx: &mut ProcessorContext<'_, S, S>, ts: i64) -> Result<()> {
        let mut out: Vec<(&str, String)> = Vec::new();
        {
            let w = ctx.window_store::<i64, S>("window")?;
            out.push(("window.all", shown(w.all()?, windowed)));
            out.push(("window.backwardAll", shown(w.backward_all()?, windowed)));
            out.push((
                "window.fetchAll(0,200000)",
                shown(w.fetch_all(0..=200_000)?, windowed),
            ));
            out.push((
                "window.fetch(1,-2,0,400000)",
                shown(w.fetch_range(1..=-2, 0..=400_000)?, windowed),
            ));
            out.push((
                "window.backwardFetch(0,10,0,400000)",
                shown(w.backward_fetch_range(0..=10, 0..=400_000)?, windowed),
            ));
            out.push((
                "window.fetch(1,0,400000)",
                shown(w.fetch(&1, 0..=400_000)?, num),
            ));
            out.push((
                "window.fetch(-1,0,400000)",
                shown(w.fetch(&-1, 0..=400_000)?, num),
            ));
            out.push((
                "window.fetch(2,0)",
                w.get(&2, 0)?.unwrap_or_else(|| "null".to_owned()),
            ));
        }
        {
            let w = ctx.timestamped_window_store::<i64, S>("timestamped")?;
            let all = w
                .all()?
                .map(|(k, v)| format!("{}={}/{}", windowed(k), v.value, v.timestamp))
                .collect::<Vec<_>>()
                .join(",");
            out.push(("timestamped.all", all));
        }
        {
            let s = ctx.session_store::<i64, S>("session")?;
            out.push((
                "session.fetch(1,-2)",
                shown(s.fetch_range(1..=-2)?, windowed),
            ));
            out.push(("session.fetch(-1)", shown(s.fetch(&-1)?, windowed)));
            out.push((
                "session.findSessions(0,10,0,400000)",
                shown(s.find_sessions_in_range(0..=10, 0, 400_000)?, windowed),
            ));
            out.push((
                "session.backwardFindSessions(1,100000,400000)",
                shown(s.backward_find_sessions(&1, 100_000, 400_000)?, windowed),
            ));
            out.push((
                "session.fetchSession(2,2,5)",
                s.fetch_session(&2, 2, 5)?
                    .unwrap_or_else(|| "null".to_owned()),
            ));
        }
        for (query, result) in out {
            ctx.forward(Record::new(Some(query.to_owned()), Some(result), ts))?;
        }
        Ok(())
    }
}

#[cfg(feature = "rocksdb")]
fn persistent_store_order() -> ScenarioResult {
    let mut g = Recorder::new();
    let retention = Duration::from_secs(200);
    let size = Duration::from_millis(10);
    let mut t = Topology::new();
    t.add_source_with_serdes::<i64, S>("Source", "in", I64Serde, StringSerde)?
        .add_processor("Order", || PersistentOrder, &["Source"])?
        .add_state_store(
            Stores::persistent_window_store_builder(
                "window",
                retention,
                size,
                false,
                I64Serde,
                StringSerde,
            ),
            &["Order"],
        )?
        .add_state_store(
            Stores::persistent_timestamped_window_store_builder(
                "timestamped",
                retention,
                size,
                false,
                I64Serde,
                StringSerde,
            ),
            &["Order"],
        )?
        .add_state_store(
            Stores::persistent_session_store_builder("session", retention, I64Serde, StringSerde),
            &["Order"],
        )?
        .add_sink_with_serdes::<S, S>("Sink", "order", StringSerde, StringSerde, &["Order"])?;
    let dir = std::env::temp_dir().join(format!("compat-persistent-{}", std::process::id()));
    let config = super::config().with_property("state.dir", dir.to_string_lossy());
    let driver = g.start_with(t, config)?;
    let i = driver.create_input_topic_with_time("in", I64Serde, StringSerde, 0, Duration::ZERO);
    for (k, v, ts) in [
        (1_i64, "a", 1),
        (-1, "ab", 2),
        (2, "b", 5),
        (-2, "c", 4),
        (0, "Z", 12),
        (10, "abc", 13),
        (-10, "aa", 14),
        (1, "a2", 100_005),
        (-1, "x", 150_000),
        (2, "late", 7),
        (0, "z2", 199_999),
        (999, "dump", 199_999),
        (3, "d", 250_000),
        (999, "dump", 250_000),
        (4, "e", 310_000),
        (5, "f", 120_000),
        (6, "gone", 50_000),
        (999, "dump", 310_000),
    ] {
        i.pipe_key_value_at(k, v, ts);
    }
    g.output(&driver, "order");
    g.finish(driver)
}
