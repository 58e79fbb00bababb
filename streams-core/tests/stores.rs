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
use streams_core::engine::StreamTask;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I32Serde, I64Serde, JsonSerde, Serde, StringSerde};
use streams_core::state::KeyValueStore;
use streams_core::state::{
    KeyValueStoreBuilder, SessionStoreBuilder, StoreBuilder, TimestampedKeyValueStore,
    WindowStoreBuilder,
};
use streams_core::{Record, StreamsConfig, Topology};
use streams_test::TopologyTestDriver;

type TestResult = Result<(), Box<dyn Error>>;

/// How the suite's stores are built: a backend.
trait Backend {
    /// The config of the drivers (where their state lives).
    fn config(&self) -> StreamsConfig {
        self.config_for("stores")
    }
    /// The config of application `app`.
    fn config_for(&self, app: &str) -> StreamsConfig;
    /// A key-value store builder.
    fn kv<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V>;
    /// A timestamped key-value store builder.
    fn timestamped<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> streams_core::state::BuiltInStoreBuilder<TimestampedKeyValueStore<K, V>>;
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
    /// Whether window and session stores read across keys segment by
    /// segment, then by key bytes (Kafka's RocksDB stores), rather than
    /// by time, then key (its in-memory stores).
    fn segmented(&self) -> bool {
        false
    }
}

/// Kafka's in-memory stores.
struct InMemory;

impl Backend for InMemory {
    fn config_for(&self, app: &str) -> StreamsConfig {
        StreamsConfig::new(app)
    }
    fn kv<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V> {
        streams_core::state::Stores::key_value_store_builder(name, keys, values)
    }
    fn timestamped<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> streams_core::state::BuiltInStoreBuilder<TimestampedKeyValueStore<K, V>> {
        streams_core::state::Stores::timestamped_key_value_store_builder(name, keys, values)
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

/// Kafka's RocksDB stores (feature `rocksdb`), each driver with a state
/// directory of its own under the system's temporary directory (the
/// driver deletes its files when it closes or is dropped).
#[cfg(feature = "rocksdb")]
struct RocksDb {
    dir: std::path::PathBuf,
}

#[cfg(feature = "rocksdb")]
impl RocksDb {
    fn new() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        RocksDb {
            dir: std::env::temp_dir()
                .join(format!("streams-core-stores-{}-{n}", std::process::id())),
        }
    }
}

#[cfg(feature = "rocksdb")]
impl Backend for RocksDb {
    fn config_for(&self, app: &str) -> StreamsConfig {
        StreamsConfig::new(app).with_property("state.dir", self.dir.to_string_lossy())
    }
    fn kv<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> KeyValueStoreBuilder<K, V> {
        streams_core::state::Stores::key_value_store_builder(
            streams_core::state::Stores::persistent_key_value_store(name),
            keys,
            values,
        )
    }
    fn timestamped<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> streams_core::state::BuiltInStoreBuilder<TimestampedKeyValueStore<K, V>> {
        streams_core::state::Stores::timestamped_key_value_store_builder(
            streams_core::state::Stores::persistent_timestamped_key_value_store(name),
            keys,
            values,
        )
    }
    fn window<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        name: &str,
        keys: impl Serde<K>,
        values: impl Serde<V>,
    ) -> WindowStoreBuilder<K, V> {
        streams_core::state::Stores::persistent_window_store_builder(
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
        streams_core::state::Stores::persistent_session_store_builder(
            name,
            Duration::from_secs(1),
            keys,
            values,
        )
    }
    fn segmented(&self) -> bool {
        true
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

/// A window store across keys: by window start, then key bytes (Kafka's
/// in-memory window store), or by key bytes, then window start within a
/// segment (its RocksDB store; one segment here); key ranges compared as
/// bytes.
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
    if b.segmented() {
        assert_eq!(
            shown(window.fetch_all(0..=100)),
            ["0@10", "1@0", "2@0", "10@10", "-10@10", "-2@0", "-1@0"]
        );
        assert_eq!(
            shown(window.fetch_range(1..=-2, 0..=100)),
            ["1@0", "2@0", "10@10", "-10@10", "-2@0"]
        );
    } else {
        assert_eq!(
            shown(window.fetch_all(0..=100)),
            ["1@0", "2@0", "-2@0", "-1@0", "0@10", "10@10", "-10@10"]
        );
        assert_eq!(
            shown(window.fetch_range(1..=-2, 0..=100)),
            ["1@0", "2@0", "-2@0", "10@10", "-10@10"]
        );
    }
    assert_eq!(window.fetch_range(-1..=1, 0..=100), []);
    assert_eq!(window.fetch(&-1, 0..=100), [(0, "v-1".to_owned())]);
    assert_eq!(window.get(&-10, 10), Some("v-10".to_owned()));
    Ok(())
}

/// A session store across keys: by session end, then key bytes (Kafka's
/// in-memory store), or by key bytes within a segment (its RocksDB store).
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
    let all: &[&str] = if b.segmented() {
        &["0@12", "1@1", "2@3", "-2@4", "-1@2"]
    } else {
        &["1@1", "-1@2", "2@3", "-2@4", "0@12"]
    };
    assert_eq!(shown(session.all()), all);
    assert_eq!(shown(session.fetch_range(1..=-2)), ["1@1", "2@3", "-2@4"]);
    assert_eq!(session.fetch_range(-1..=1), []);
    assert_eq!(session.fetch_session(&-2, 4, 4), Some("v-2".to_owned()));
    Ok(())
}

/// A timestamped store keeps each value's timestamp; its value-only view
/// shows the values; a write reaches the changelog at the value's
/// timestamp.
fn timestamped_values_keep_their_timestamps<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.timestamped("ts", I64Serde, StringSerde))])?;
    let ts = driver.timestamped_key_value_store::<i64, String>("ts")?;
    ts.put(-1, "minus".to_owned(), 7)?;
    ts.put(1, "one".to_owned(), 9)?;
    let all: Vec<(i64, String, i64)> = ts
        .all()
        .into_iter()
        .map(|(k, v)| (k, v.value, v.timestamp))
        .collect();
    assert_eq!(all, [(1, "one".to_owned(), 9), (-1, "minus".to_owned(), 7)]);
    assert_eq!(
        driver.key_value_store::<i64, String>("ts")?.get(&-1),
        Some("minus".to_owned())
    );
    assert_eq!(ts.delete(&1)?.map(|v| v.timestamp), Some(9));
    assert_eq!(ts.approximate_num_entries(), 1);
    Ok(())
}

/// What the driver's stores wrote to `topic` so far, as raw records to
/// restore (the driver hands on changelogs at its next record: it pipes
/// one).
fn changelog_of(driver: &TopologyTestDriver, topic: &str) -> Vec<streams_core::RawRecord> {
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_value("x");
    driver
        .create_output_topic(
            topic,
            streams_core::serde::BytesSerde,
            streams_core::serde::BytesSerde,
        )
        .read_records_to_list()
        .into_iter()
        .map(|r| streams_core::RawRecord::new(r.key, r.value, r.timestamp.unwrap_or_default()))
        .collect()
}

/// A store restored from its changelog holds what the original held.
fn a_store_restores_from_its_changelog<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.kv("kv", I64Serde, StringSerde))])?;
    let kv = driver.key_value_store::<i64, String>("kv")?;
    for k in [3, -3, 0] {
        kv.put(k, format!("v{k}"))?;
    }
    kv.delete(&0)?;
    // The driver hands on the changelog at its next record.
    let changelog = changelog_of(&driver, "stores-kv-changelog");
    assert_eq!(changelog.len(), 4);
    let original = kv.all();
    drop(kv);
    drop(driver);
    // A task of another application (a state directory of its own)
    // restores the changelog into the same kind of store.
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "in")?
        .add_processor("noop", || Noop, &["in"])?
        .add_state_store(b.kv("kv", I64Serde, StringSerde), &["noop"])?;
    let task = StreamTask::new(&topology, &b.config_for("restored"), 0)?;
    task.restore_store("kv", &changelog)?;
    let restored: Vec<(i64, String)> = task
        .store::<KeyValueStore<i64, String>>("kv")?
        .all()?
        .collect();
    assert_eq!(restored, original);
    drop(task);
    streams_core::state::clean_state_dir(&b.config_for("restored"))?;
    Ok(())
}

/// A window store restored from its changelog holds what the original
/// held, expiry included.
fn a_window_store_restores_from_its_changelog<B: Backend>(b: &B) -> TestResult {
    let driver = driver(b, vec![store(b.window("w", I64Serde, StringSerde))])?;
    let w = driver.window_store::<i64, String>("w")?;
    for (k, start) in [(3, 0), (-3, 10), (0, 500), (3, 1_200), (1, 2_000)] {
        w.put(k, format!("v{k}@{start}"), start)?;
    }
    let changelog = changelog_of(&driver, "stores-w-changelog");
    assert_eq!(changelog.len(), 5);
    let original = w.all();
    // Stream time 2,000, retention 1 s: the windows at 0 and 10 expired
    // (in either order: by time in memory, by key bytes in one segment).
    let mut live: Vec<(i64, i64)> = original
        .iter()
        .map(|(k, _)| (k.key, k.window.start))
        .collect();
    live.sort_unstable();
    assert_eq!(live, [(1, 2_000), (3, 1_200)]);
    drop(w);
    drop(driver);
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "in")?
        .add_processor("noop", || Noop, &["in"])?
        .add_state_store(b.window("w", I64Serde, StringSerde), &["noop"])?;
    let task = StreamTask::new(&topology, &b.config_for("restored-w"), 0)?;
    task.restore_store("w", &changelog)?;
    let restored: Vec<(Windowed<i64>, String)> = task
        .store::<streams_core::state::WindowStore<i64, String>>("w")?
        .all()?
        .collect();
    assert_eq!(restored, original);
    drop(task);
    streams_core::state::clean_state_dir(&b.config_for("restored-w"))?;
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
            fn timestamped_values_keep_their_timestamps() -> TestResult {
                super::timestamped_values_keep_their_timestamps(&$backend)
            }

            #[test]
            fn window_keys_in_kafkas_order() -> TestResult {
                super::window_keys_in_kafkas_order(&$backend)
            }

            #[test]
            fn session_keys_in_kafkas_order() -> TestResult {
                super::session_keys_in_kafkas_order(&$backend)
            }

            #[test]
            fn a_window_store_restores_from_its_changelog() -> TestResult {
                super::a_window_store_restores_from_its_changelog(&$backend)
            }

            #[test]
            fn a_store_restores_from_its_changelog() -> TestResult {
                super::a_store_restores_from_its_changelog(&$backend)
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

#[cfg(feature = "rocksdb")]
backend_tests!(rocksdb, RocksDb::new());

/// A topology counting words into the key-value store `counts`, of the
/// backend's kind.
#[cfg(feature = "rocksdb")]
fn counting<B: Backend>(b: &B) -> Result<Topology, Box<dyn Error>> {
    struct Count;
    impl Processor<String, String, String, String> for Count {
        fn process(
            &mut self,
            ctx: &mut ProcessorContext<'_, String, String>,
            r: Record<String, String>,
        ) -> streams_core::Result<()> {
            let mut counts = ctx.key_value_store::<String, i64>("counts")?;
            let key = r.key.unwrap_or_default();
            let n = counts.get(&key)?.unwrap_or(0) + 1;
            counts.put(key, n)?;
            Ok(())
        }
    }
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "input-topic")?
        .add_processor("count", || Count, &["in"])?
        .add_state_store(b.kv("counts", StringSerde, I64Serde), &["count"])?;
    Ok(topology)
}

// Kafka's TopologyTestDriverTest.shouldCleanUpPersistentStateStoresOnClose:
// the store's files are under <state.dir>/<application.id>/0_0/rocksdb;
// the driver deletes them at close, and a new driver on the same directory
// starts empty.
#[cfg(feature = "rocksdb")]
#[test]
fn should_clean_up_persistent_state_stores_on_close() -> TestResult {
    let b = RocksDb::new();
    let config = b.config_for("test-TopologyTestDriver-cleanup");
    let files = config
        .state_dir()
        .join("test-TopologyTestDriver-cleanup/0_0/rocksdb/counts");
    let driver = TopologyTestDriver::with_config(counting(&b)?, config.clone())?;
    assert_eq!(
        driver.key_value_store::<String, i64>("counts")?.get("a"),
        None
    );
    driver
        .create_input_topic("input-topic", StringSerde, StringSerde)
        .pipe_key_value("a", "x");
    assert_eq!(
        driver.key_value_store::<String, i64>("counts")?.get("a"),
        Some(1)
    );
    assert!(files.is_dir(), "{files:?}");
    driver.close()?;
    assert!(!files.exists());
    let driver = TopologyTestDriver::with_config(counting(&b)?, config)?;
    assert_eq!(
        driver.key_value_store::<String, i64>("counts")?.get("a"),
        None,
        "closing the prior driver cleaned up this store"
    );
    Ok(())
}

// Bad input: RocksDB cannot open its directory. A second driver of the same
// application and state directory finds it locked by the first; a state
// directory that is a file cannot hold one. The error names the store,
// the path and the reason, and says what to do.
#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_unable_to_open_its_directory_is_a_typed_error() -> TestResult {
    let b = RocksDb::new();
    let first = TopologyTestDriver::with_config(counting(&b)?, b.config())?;
    let err = TopologyTestDriver::with_config(counting(&b)?, b.config())
        .err()
        .ok_or("a second driver must not open the locked store")?;
    let path = b.config().state_dir().join("stores/0_0/rocksdb/counts");
    match &err {
        streams_core::StreamsError::StoreIo {
            store,
            path: p,
            action: "open",
            reason,
        } => {
            assert_eq!((store.as_str(), p), ("counts", &path));
            assert!(reason.contains("lock"), "{reason}");
        }
        other => return Err(format!("unexpected error: {other}").into()),
    }
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "store `counts` cannot open its RocksDB files at {}: ",
            path.display()
        )),
        "{message}"
    );
    assert!(message.ends_with("check that the directory can be created and written (`state.dir`), and that no other driver or application uses the same `state.dir` and `application.id` (RocksDB locks a store's directory)"), "{message}");
    drop(first);

    std::fs::create_dir_all(&b.dir)?;
    let file = b.dir.join("not-a-directory");
    std::fs::write(&file, b"")?;
    let config = StreamsConfig::new("stores").with_property("state.dir", file.to_string_lossy());
    let err = TopologyTestDriver::with_config(counting(&b)?, config).err();
    assert!(
        matches!(
            &err,
            Some(streams_core::StreamsError::StoreIo {
                action: "create its directory",
                ..
            })
        ),
        "{err:?}"
    );
    std::fs::remove_file(file)?;
    Ok(())
}

// The DSL's key-value stores live in RocksDB when the config asks for
// Kafka's RocksDB store suppliers (`dsl.store.suppliers.class`, or the
// older `default.dsl.store = rocksDB`); in memory otherwise.
#[cfg(feature = "rocksdb")]
#[test]
fn the_config_puts_dsl_stores_in_rocksdb() -> TestResult {
    let b = RocksDb::new();
    for (property, value, files) in [
        (
            "dsl.store.suppliers.class",
            "org.apache.kafka.streams.state.BuiltInDslStoreSuppliers$RocksDBDslStoreSuppliers",
            true,
        ),
        ("default.dsl.store", "rocksDB", true),
        ("default.dsl.store", "in_memory", false),
    ] {
        let builder = streams_core::StreamsBuilder::new();
        builder
            .stream::<String, String>("words")
            .group_by_key()
            .count_with(streams_core::Materialized::as_("counts"));
        let config = b.config().with_property(property, value);
        let driver = TopologyTestDriver::with_config(builder.build()?, config.clone())?;
        driver
            .create_input_topic("words", StringSerde, StringSerde)
            .pipe_key_values([("a", "x"), ("a", "y"), ("b", "z")]);
        let counts = driver.key_value_store::<String, i64>("counts")?;
        assert_eq!(counts.all(), [("a".to_owned(), 2), ("b".to_owned(), 1)]);
        let dir = config.state_dir().join("stores/0_0/rocksdb/counts");
        assert_eq!(dir.is_dir(), files, "{property}={value}");
    }
    Ok(())
}

// Without the `rocksdb` feature, a config asking for RocksDB DSL stores is
// refused when the driver builds the store, naming it and the feature.
#[cfg(not(feature = "rocksdb"))]
#[test]
fn rocksdb_dsl_stores_need_the_feature() -> TestResult {
    let builder = streams_core::StreamsBuilder::new();
    builder
        .stream::<String, String>("words")
        .group_by_key()
        .count_with(streams_core::Materialized::as_("counts"));
    let config = StreamsConfig::new("stores").with_property("default.dsl.store", "rocksDB");
    let err = TopologyTestDriver::with_config(builder.build()?, config).err();
    assert!(
        matches!(&err, Some(streams_core::StreamsError::PersistentStoresNotEnabled { store }) if store == "counts"),
        "{err:?}"
    );
    Ok(())
}

// Kafka refuses a `default.dsl.store` other than `rocksDB` or `in_memory`
// (ConfigException "String must be one of: rocksDB, in_memory"), and a
// store suppliers class it cannot load; so does the driver, naming the
// config and the value, when it builds the DSL's stores.
#[test]
fn an_unknown_dsl_store_is_refused() -> TestResult {
    for (property, value) in [
        ("default.dsl.store", "rocksdb-ish"),
        ("dsl.store.suppliers.class", "com.example.MyStores"),
    ] {
        let builder = streams_core::StreamsBuilder::new();
        builder
            .stream::<String, String>("words")
            .group_by_key()
            .count_with(streams_core::Materialized::as_("counts"));
        let config = StreamsConfig::new("stores").with_property(property, value);
        let err = TopologyTestDriver::with_config(builder.build()?, config).err();
        assert!(
            matches!(&err, Some(streams_core::StreamsError::InvalidConfig { config, value: v, .. }) if *config == property && v == value),
            "{err:?}"
        );
    }
    Ok(())
}
