//! The oracle's `StoreScenarios`: Processor API stores, the order in which
//! they give their keys (Kafka's: by serialized bytes), their range and
//! prefix queries.

use std::fmt::Display;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use streams_core::dsl::Windowed;
use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
use streams_core::serde::{I32Serde, I64Serde, JsonSerde, StringSerde};
use streams_core::state::{KeyValueIterator, Stores};
use streams_core::{Record, Result, Topology};

use super::{Recorder, Scenario, ScenarioResult, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[scenario!(store_key_order)];

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
