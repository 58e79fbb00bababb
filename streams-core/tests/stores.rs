//! The stores' contract, one suite run against every backend: keys in
//! Kafka's order (by their serialized bytes), ranges, reverse ranges and
//! prefix scans as Kafka's `KeyValueStore` gives them, window and session
//! stores across keys, look-ups by a borrowed key, and a property test
//! against Kafka's model of a store, a `BTreeMap` of the keys' bytes.
//!
//! Each test is generic over a [`Backend`] (how the store is built and
//! what the driver is configured with); `backend_tests!` instantiates
//! the suite for each backend.

use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use streams_core::dsl::{Window, Windowed};
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I32Serde, I64Serde, JsonSerde, Serde, StringSerde};
use streams_core::state::{
    KeyValueStoreBuilder, SessionStoreBuilder, StoreBuilder, WindowStoreBuilder,
};
use streams_core::{Record, StreamsConfig, Topology};
use streams_test::TopologyTestDriver;

type TestResult = Result<(), Box<dyn Error>>;

/// How the suite's stores are built: a backend.
trait Backend {
    /// The config of the drivers (where their state lives).
    fn config(&self) -> StreamsConfig;
    /// A key-value store builder.
    fn kv<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V>;
    /// A window store builder keeping 10 ms windows for a second.
    fn window<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> WindowStoreBuilder<K, V>;
    /// A session store builder keeping sessions for a second.
    fn session<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> SessionStoreBuilder<K, V>;
}

/// Kafka's in-memory stores.
struct InMemory;

impl Backend for InMemory {
    fn config(&self) -> StreamsConfig {
        StreamsConfig::new("stores")
    }
    fn kv<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V> {
        streams_core::state::Stores::key_value_store_builder(name, keys, values)
    }
    fn window<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> WindowStoreBuilder<K, V> {
        streams_core::state::Stores::window_store_builder(
            name,
            Duration::from_secs(1),
            Duration::from_millis(10),
            false,
            keys,
            values,
        )
    }
    fn session<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> SessionStoreBuilder<K, V> {
        streams_core::state::Stores::session_store_builder(
            name,
            Duration::from_secs(1),
            keys,
            values,
        )
    }
}

/// Does nothing: the stores only need a processor to belong to.
struct Noop;
impl Processor<String, String, String, String> for Noop {
    fn process(
        &mut self,
        _: &mut ProcessorContext<'_, String, String>,
        _: Record<String, String>,
    ) -> streams_core::Result<()> {
        Ok(())
    }
}

/// A driver whose topology holds `stores`, read and written through the
/// driver's views.
fn driver<B: Backend>(
    b: &B,
    stores: Vec<Box<dyn FnOnce(&mut Topology) -> streams_core::Result<()>>>,
) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "in")?
        .add_processor("noop", || Noop, &["in"])?;
    for add in stores {
        add(&mut topology)?;
    }
    Ok(TopologyTestDriver::with_config(topology, b.config())?)
}

/// Adds a store built by `builder` to the no-op processor.
fn store(
    builder: impl StoreBuilder + 'static,
) -> Box<dyn FnOnce(&mut Topology) -> streams_core::Result<()>> {
    Box::new(move |t: &mut Topology| t.add_state_store(builder, &["noop"]).map(|_| ()))
}

/// The oracle's JSON key `{"id":n}`: Kafka orders its text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Id {
    id: i64,
}

fn keys<K: Clone, V>(entries: &[(K, V)]) -> Vec<K> {
    entries.iter().map(|(k, _)| k.clone()).collect()
}

/// `i64` keys with Kafka's big-endian serde: negatives after positives,
/// ranges compared as bytes, prefix scans by a shorter serializer (the
/// values `store_key_order` shows Kafka 4.4.0 giving). Ranges such as
/// `1..=-1` are not empty here: bounds compare as bytes, as in Kafka.
#[allow(clippy::reversed_empty_ranges)]
fn long_keys_in_kafkas_byte_order<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.kv("kv", I64Serde, StringSerde))])?;
    let kv = driver.key_value_store::<i64, String>("kv")?;
    for k in [1, -1, 2, -2, 0, 10, -10, 4_294_967_296, -4_294_967_297] {
        kv.put(k, format!("v{k}"))?;
    }
    let ordered = [0, 1, 2, 10, 4_294_967_296, -4_294_967_297, -10, -2, -1];
    assert_eq!(keys(&kv.all()), ordered);
    let mut reversed = ordered;
    reversed.reverse();
    assert_eq!(keys(&kv.reverse_all()), reversed);
    assert_eq!(kv.range(-1..=1), []);
    assert_eq!(keys(&kv.range(1..=-1)), ordered[1..]);
    assert_eq!(keys(&kv.range(..=2)), [0, 1, 2]);
    assert_eq!(keys(&kv.range(-2..)), [-2, -1]);
    assert_eq!(
        keys(&kv.reverse_range(0..=-2)),
        [-2, -10, -4_294_967_297, 4_294_967_296, 10, 2, 1, 0]
    );
    assert_eq!(keys(&kv.prefix_scan(&-2, I32Serde)), [-4_294_967_297]);
    assert_eq!(keys(&kv.prefix_scan(&0, I32Serde)), [0, 1, 2, 10]);
    // Exclusive bounds are compared as bytes too.
    assert_eq!(keys(&kv.range(0..2)), [0, 1]);
    assert_eq!(kv.get(&-10), Some("v-10".to_owned()));
    Ok(())
}

/// JSON keys are in the order of their text: `{"id":10}` before
/// `{"id":2}`, negatives first (`-` sorts before digits).
fn json_keys_in_text_order<B: Backend>(b: &B) -> TestResult {
    let driver = driver(
        b,
        vec![store(b.kv("json", JsonSerde::<Id>::new(), I64Serde))],
    )?;
    let json = driver.key_value_store::<Id, i64>("json")?;
    for id in [2, 10, -1, 1, -2, 0] {
        json.put(Id { id }, id)?;
    }
    let order: Vec<i64> = json.all().into_iter().map(|(_, v)| v).collect();
    assert_eq!(order, [-1, -2, 0, 10, 1, 2]);
    assert_eq!(json.get(&Id { id: 10 }), Some(10));
    Ok(())
}

/// String keys: UTF-8 bytes order as `str` does; look-ups and deletes by
/// `&str`; a prefix scan.
fn string_keys_by_borrowed_form<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.kv("text", StringSerde, I64Serde))])?;
    let text = driver.key_value_store::<String, i64>("text")?;
    for (i, k) in ["b", "a\u{e9}", "Z", "ab", "\u{e9}", "a"]
        .into_iter()
        .enumerate()
    {
        text.put(k.to_owned(), i as i64)?;
    }
    assert_eq!(
        keys(&text.all()),
        ["Z", "a", "ab", "a\u{e9}", "b", "\u{e9}"]
    );
    assert_eq!(text.get("ab"), Some(3));
    assert_eq!(
        keys(&text.prefix_scan(&"a".to_owned(), StringSerde)),
        ["a", "ab", "a\u{e9}"]
    );
    assert_eq!(text.delete("ab")?, Some(3));
    assert_eq!(text.get("ab"), None);
    assert_eq!(
        keys(&text.range("a".to_owned()..="b".to_owned())),
        ["a", "a\u{e9}", "b"]
    );
    Ok(())
}

/// A window store across keys: by window start, then key bytes; key
/// ranges compared as bytes (Kafka's in-memory window store).
#[allow(clippy::reversed_empty_ranges)]
fn window_keys_in_kafkas_order<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.window("window", I64Serde, StringSerde))])?;
    let window = driver.window_store::<i64, String>("window")?;
    for (k, t) in [
        (1, 1),
        (-1, 2),
        (2, 3),
        (-2, 4),
        (0, 12),
        (10, 13),
        (-10, 14),
    ] {
        window.put(k, format!("v{k}"), t / 10 * 10)?;
    }
    let shown = |found: Vec<(Windowed<i64>, String)>| -> Vec<String> {
        found
            .into_iter()
            .map(|(w, _)| format!("{}@{}", w.key, w.window.start))
            .collect()
    };
    assert_eq!(
        shown(window.fetch_all(0..=100)),
        ["1@0", "2@0", "-2@0", "-1@0", "0@10", "10@10", "-10@10"]
    );
    assert_eq!(
        shown(window.fetch_range(1..=-2, 0..=100)),
        ["1@0", "2@0", "-2@0", "10@10", "-10@10"]
    );
    assert_eq!(window.fetch_range(-1..=1, 0..=100), []);
    assert_eq!(window.fetch(&-1, 0..=100), [(0, "v-1".to_owned())]);
    assert_eq!(window.get(&-10, 10), Some("v-10".to_owned()));
    Ok(())
}

/// A session store across keys: by session end, then key bytes.
#[allow(clippy::reversed_empty_ranges)]
fn session_keys_in_kafkas_order<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.session("session", I64Serde, StringSerde))])?;
    let session = driver.session_store::<i64, String>("session")?;
    for (k, t) in [(1, 1), (-1, 2), (2, 3), (-2, 4), (0, 12)] {
        session.put(Windowed::new(k, Window::new(t, t)), format!("v{k}"))?;
    }
    let shown = |found: Vec<(Windowed<i64>, String)>| -> Vec<String> {
        found
            .into_iter()
            .map(|(w, _)| format!("{}@{}", w.key, w.window.end))
            .collect()
    };
    assert_eq!(shown(session.all()), ["1@1", "-1@2", "2@3", "-2@4", "0@12"]);
    assert_eq!(shown(session.fetch_range(1..=-2)), ["1@1", "2@3", "-2@4"]);
    assert_eq!(session.fetch_range(-1..=1), []);
    assert_eq!(session.fetch_session(&-2, 4, 4), Some("v-2".to_owned()));
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Put(i64, u8),
    Delete(i64),
    Range(i64, i64),
    Prefix(i32),
}

fn op() -> impl Strategy<Value = Op> {
    let key = prop_oneof![
        -3..3_i64,
        Just(i64::MIN),
        Just(i64::MAX),
        Just(1 << 32),
        Just(-(1 << 32))
    ];
    prop_oneof![
        4 => (key.clone(), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key.clone().prop_map(Op::Delete),
        1 => (key.clone(), key).prop_map(|(a, b)| Op::Range(a, b)),
        1 => prop_oneof![Just(0_i32), Just(-1), Just(1), Just(i32::MIN)].prop_map(Op::Prefix),
    ]
}

/// Runs `ops` on an `i64` store and on Kafka's model (a `BTreeMap` of the
/// keys' big-endian bytes), comparing after each: contents in order,
/// ranges (empty when the start's bytes are after the end's) in both
/// directions, prefix scans.
fn matches_kafkas_model<B: Backend>(b: &B, ops: &[Op]) -> Result<(), TestCaseError> {
    let fail = |e: Box<dyn Error>| TestCaseError::fail(e.to_string());
    let driver = driver(b, vec![store(b.kv("kv", I64Serde, I64Serde))]).map_err(fail)?;
    let kv = driver
        .key_value_store::<i64, i64>("kv")
        .map_err(|e| fail(e.into()))?;
    let mut model: BTreeMap<Vec<u8>, (i64, i64)> = BTreeMap::new();
    let bytes = |k: i64| k.to_be_bytes().to_vec();
    for op in ops {
        match *op {
            Op::Put(k, v) => {
                let old = kv.put(k, i64::from(v)).map_err(|e| fail(e.into()))?;
                prop_assert_eq!(old, model.insert(bytes(k), (k, i64::from(v))).map(|e| e.1));
            }
            Op::Delete(k) => {
                let old = kv.delete(&k).map_err(|e| fail(e.into()))?;
                prop_assert_eq!(old, model.remove(&bytes(k)).map(|e| e.1));
            }
            Op::Range(a, z) => {
                let expected: Vec<(i64, i64)> = if bytes(a) <= bytes(z) {
                    model.range(bytes(a)..=bytes(z)).map(|(_, e)| *e).collect()
                } else {
                    Vec::new()
                };
                prop_assert_eq!(kv.range(a..=z), expected.clone());
                let mut reversed = expected;
                reversed.reverse();
                prop_assert_eq!(kv.reverse_range(a..=z), reversed);
            }
            Op::Prefix(p) => {
                let prefix = p.to_be_bytes();
                let expected: Vec<(i64, i64)> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, e)| *e)
                    .collect();
                prop_assert_eq!(kv.prefix_scan(&p, I32Serde), expected);
            }
        }
        prop_assert_eq!(kv.all(), model.values().copied().collect::<Vec<_>>());
        prop_assert_eq!(kv.approximate_num_entries(), model.len() as u64);
    }
    Ok(())
}

macro_rules! backend_tests {
    ($module:ident, $backend:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn long_keys_in_kafkas_byte_order() -> TestResult {
                super::long_keys_in_kafkas_byte_order(&$backend)
            }

            #[test]
            fn json_keys_in_text_order() -> TestResult {
                super::json_keys_in_text_order(&$backend)
            }

            #[test]
            fn string_keys_by_borrowed_form() -> TestResult {
                super::string_keys_by_borrowed_form(&$backend)
            }

            #[test]
            fn window_keys_in_kafkas_order() -> TestResult {
                super::window_keys_in_kafkas_order(&$backend)
            }

            #[test]
            fn session_keys_in_kafkas_order() -> TestResult {
                super::session_keys_in_kafkas_order(&$backend)
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]
                /// A store of `i64` keys behaves as Kafka's model of it,
                /// a `BTreeMap` of the keys' serialized bytes.
                #[test]
                fn matches_kafkas_model(ops in proptest::collection::vec(op(), 0..60)) {
                    super::matches_kafkas_model(&$backend, &ops)?;
                }
            }
        }
    };
}

backend_tests!(in_memory, InMemory);
