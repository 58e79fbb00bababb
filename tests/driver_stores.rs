//! Ports of Kafka's `TopologyTestDriverTest` store cases: which getter
//! reads which kind of store (`shouldReturnCorrectStoreTypeOnly`: a
//! timestamped store through `key_value_store` and `window_store` for its
//! values, nothing through a getter of another kind), built-in stores
//! refused by `state_store` with Kafka's message
//! (`shouldThrowIfBuiltInStoreIsAccessedWithUntypedMethod`), every store
//! listed (`shouldReturnAllStores`), a global table's store
//! (`shouldFeedStoreFromGlobalKTable`), and a store a test fills before
//! the first record, read in punctuations (`CustomMaxAggregator`:
//! `shouldFlushStoreForFirstInput` and its siblings). Then what Kafka's
//! tests leave out: writes through a value-only view, stores of your own.
//!
//! Kafka's tests return `null` from a getter of another kind; ours return
//! [`StreamsError::WrongStoreType`].

use std::any::Any;
use std::time::Duration;

use pretty_assertions::assert_eq;
use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::state::{StateStore, StoreBuilder, StoreKind, Stores};
use streams_core::{
    Materialized, Record, Result, StreamsBuilder, StreamsConfig, StreamsError, Topology,
};
use streams_test::TopologyTestDriver;

type B = Vec<u8>;

/// Does nothing: the stores only need a processor to belong to.
struct Void;
impl Processor<B, B, (), ()> for Void {
    fn process(&mut self, _: &mut ProcessorContext<'_, (), ()>, _: Record<B, B>) -> Result<()> {
        Ok(())
    }
}

/// Kafka's `addStoresToTopology` with in-memory suppliers: every kind of
/// store on processor `processor`, and two global stores.
fn topology_with_every_kind() -> Result<Topology> {
    let second = Duration::from_millis(1000);
    let hundred = Duration::from_millis(100);
    let mut t = Topology::new();
    t.add_source::<B, B>("source", "input-topic")?
        .add_processor("processor", || Void, &["source"])?
        .add_state_store(
            Stores::key_value_store_builder("keyValueStore", BytesSerde, BytesSerde),
            &["processor"],
        )?
        .add_state_store(
            Stores::timestamped_key_value_store_builder(
                "keyValueTimestampStore",
                BytesSerde,
                BytesSerde,
            ),
            &["processor"],
        )?
        .add_state_store(
            Stores::versioned_key_value_store_builder(
                Stores::persistent_versioned_key_value_store("keyValueVersionedStore", second)?,
                BytesSerde,
                BytesSerde,
            ),
            &["processor"],
        )?
        .add_state_store(
            Stores::window_store_builder(
                "windowStore",
                second,
                hundred,
                false,
                BytesSerde,
                BytesSerde,
            ),
            &["processor"],
        )?
        .add_state_store(
            Stores::timestamped_window_store_builder(
                "windowTimestampStore",
                second,
                hundred,
                false,
                BytesSerde,
                BytesSerde,
            ),
            &["processor"],
        )?
        .add_state_store(
            Stores::session_store_builder("sessionStore", second, BytesSerde, BytesSerde),
            &["processor"],
        )?
        .add_global_store::<B, B, _>(
            Stores::key_value_store_builder("globalKeyValueStore", BytesSerde, BytesSerde)
                .with_logging_disabled(),
            "sourceDummy1",
            "topicDummy1",
            "processorDummy1",
            || Void,
        )?
        .add_global_store::<B, B, _>(
            Stores::timestamped_key_value_store_builder(
                "globalKeyValueTimestampStore",
                BytesSerde,
                BytesSerde,
            )
            .with_logging_disabled(),
            "sourceDummy2",
            "topicDummy2",
            "processorDummy2",
            || Void,
        )?;
    Ok(t)
}

/// Which getters a store answers, in the order `key_value_store`,
/// `timestamped_key_value_store`, `versioned_key_value_store`,
/// `window_store`, `timestamped_window_store`, `session_store`.
fn answers(driver: &TopologyTestDriver, name: &str) -> [bool; 6] {
    [
        driver.key_value_store::<B, B>(name).is_ok(),
        driver.timestamped_key_value_store::<B, B>(name).is_ok(),
        driver.versioned_key_value_store::<B, B>(name).is_ok(),
        driver.window_store::<B, B>(name).is_ok(),
        driver.timestamped_window_store::<B, B>(name).is_ok(),
        driver.session_store::<B, B>(name).is_ok(),
    ]
}

// Kafka's shouldReturnCorrectInMemoryStoreTypeOnly (versioned stores have
// no in-memory supplier in Kafka; ours is in memory, so it is checked too).
#[test]
fn should_return_correct_in_memory_store_type_only() -> Result<()> {
    let driver = TopologyTestDriver::new(topology_with_every_kind()?)?;
    let (t, f) = (true, false);
    assert_eq!(answers(&driver, "keyValueStore"), [t, f, f, f, f, f]);
    assert_eq!(
        answers(&driver, "keyValueTimestampStore"),
        [t, t, f, f, f, f]
    );
    assert_eq!(
        answers(&driver, "keyValueVersionedStore"),
        [f, f, t, f, f, f]
    );
    assert_eq!(answers(&driver, "windowStore"), [f, f, f, t, f, f]);
    assert_eq!(answers(&driver, "windowTimestampStore"), [f, f, f, t, t, f]);
    assert_eq!(answers(&driver, "sessionStore"), [f, f, f, f, f, t]);
    assert_eq!(answers(&driver, "globalKeyValueStore"), [t, f, f, f, f, f]);
    assert_eq!(
        answers(&driver, "globalKeyValueTimestampStore"),
        [t, t, f, f, f, f]
    );
    // A getter of another kind names the store's kind.
    let err = driver.session_store::<B, B>("windowTimestampStore").err();
    assert!(
        matches!(
            err,
            Some(StreamsError::WrongStoreType {
                actual: StoreKind::TimestampedWindow,
                ..
            })
        ),
        "{err:?}"
    );
    Ok(())
}

// Kafka's shouldThrowIfInMemoryBuiltInStoreIsAccessedWithUntypedMethod,
// with Kafka's messages exactly (`kafka_message`), global stores too.
#[test]
fn should_throw_if_in_memory_built_in_store_is_accessed_with_untyped_method() -> Result<()> {
    let driver = TopologyTestDriver::new(topology_with_every_kind()?)?;
    for (store, kind, getter) in [
        ("keyValueStore", "key-value store", "getKeyValueStore"),
        (
            "keyValueTimestampStore",
            "timestamped key-value store",
            "getTimestampedKeyValueStore",
        ),
        (
            "keyValueVersionedStore",
            "versioned key-value store",
            "getVersionedKeyValueStore",
        ),
        ("windowStore", "window store", "getWindowStore"),
        (
            "windowTimestampStore",
            "timestamped window store",
            "getTimestampedWindowStore",
        ),
        ("sessionStore", "session store", "getSessionStore"),
        ("globalKeyValueStore", "key-value store", "getKeyValueStore"),
        (
            "globalKeyValueTimestampStore",
            "timestamped key-value store",
            "getTimestampedKeyValueStore",
        ),
    ] {
        let err = driver
            .state_store(store)
            .expect_err("a built-in store is refused");
        assert_eq!(
            err.kafka_message().as_deref(),
            Some(
                format!("Store {store} is a {kind} and should be accessed via `{getter}()`")
                    .as_str()
            )
        );
        assert!(matches!(err, StreamsError::BuiltInStore { .. }));
    }
    let err = driver
        .state_store("keyValueTimestampStore")
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some(
            "store `keyValueTimestampStore` is a timestamped key-value store, not a store of your own: read it with `timestamped_key_value_store::<K, V>(\"keyValueTimestampStore\")`"
        )
    );
    assert!(matches!(
        driver.state_store("missing"),
        Err(StreamsError::UnknownStore { .. })
    ));
    Ok(())
}

// Kafka's shouldReturnAllStores and shouldReturnAllStoresNames.
#[test]
fn should_return_all_stores() -> Result<()> {
    let mut t = Topology::new();
    t.add_source::<B, B>("source", "source-topic-1")?
        .add_processor("processor", || Void, &["source"])?
        .add_state_store(
            Stores::key_value_store_builder("store", BytesSerde, BytesSerde),
            &["processor"],
        )?
        .add_global_store::<B, B, _>(
            Stores::key_value_store_builder("globalStore", BytesSerde, BytesSerde)
                .with_logging_disabled(),
            "sourceProcessorName",
            "globalTopicName",
            "globalProcessorName",
            || Void,
        )?;
    let driver = TopologyTestDriver::new(t)?;
    let stores = driver.state_stores();
    assert_eq!(
        stores.into_iter().collect::<Vec<_>>(),
        [
            ("globalStore".to_owned(), StoreKind::KeyValue),
            ("store".to_owned(), StoreKind::KeyValue)
        ]
    );
    Ok(())
}

// Kafka's shouldFeedStoreFromGlobalKTable: a global table's store, read
// through `key_value_store` (its values).
#[test]
fn should_feed_store_from_global_ktable() -> Result<()> {
    let builder = StreamsBuilder::new();
    builder.global_table_with::<String, String>("topic", Materialized::as_("globalStore"));
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let global = driver.key_value_store::<String, String>("globalStore")?;
    assert!(global.is_timestamped());
    driver
        .create_input_topic("topic", StringSerde, StringSerde)
        .pipe_key_value("k1", "value1");
    assert_eq!(global.get("k1"), Some("value1".to_owned()));
    Ok(())
}

/// Kafka's `CustomMaxAggregator`: keeps the largest value per key in
/// `aggStore`, and forwards the whole store every minute of wall-clock
/// time and every ten seconds of stream time.
struct CustomMaxAggregator;

impl Processor<String, i64, String, i64> for CustomMaxAggregator {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, i64>) -> Result<()> {
        ctx.schedule(Duration::from_secs(60), PunctuationType::WallClockTime)?;
        ctx.schedule(Duration::from_secs(10), PunctuationType::StreamTime)?;
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        r: Record<String, i64>,
    ) -> Result<()> {
        let (Some(k), Some(v)) = (r.key, r.value) else {
            return Ok(());
        };
        let mut store = ctx.key_value_store::<String, i64>("aggStore")?;
        if store.get(&k)?.is_none_or(|old| v > old) {
            store.put(k, v)?;
        }
        Ok(())
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, i64>,
        ts: i64,
        _: &Punctuation,
    ) -> Result<()> {
        let all = ctx.key_value_store::<String, i64>("aggStore")?.all()?;
        for (k, v) in all {
            ctx.forward(Record::new(Some(k), Some(v), ts))?;
        }
        Ok(())
    }
}

/// Kafka's `setup()`: the aggregator with `aggStore` filled with `a = 21`
/// by the test before any record.
fn max_aggregator() -> Result<TopologyTestDriver> {
    let mut t = Topology::new();
    t.add_source_with_serdes::<String, i64>(
        "sourceProcessor",
        "input-topic",
        StringSerde,
        I64Serde,
    )?
    .add_processor("aggregator", || CustomMaxAggregator, &["sourceProcessor"])?
    .add_state_store(
        Stores::key_value_store_builder("aggStore", StringSerde, I64Serde),
        &["aggregator"],
    )?
    .add_sink_with_serdes::<String, i64>(
        "sinkProcessor",
        "result-topic",
        StringSerde,
        I64Serde,
        &["aggregator"],
    )?;
    let driver = TopologyTestDriver::with_config(t, StreamsConfig::new("test-TopologyTestDriver"))?;
    driver
        .key_value_store::<String, i64>("aggStore")?
        .put("a".to_owned(), 21)?;
    Ok(driver)
}

fn results(driver: &TopologyTestDriver) -> Vec<(String, i64)> {
    driver
        .create_output_topic("result-topic", StringSerde, I64Serde)
        .read_key_values_to_list()
        .into_iter()
        .map(|kv| (kv.key.unwrap_or_default(), kv.value.unwrap_or_default()))
        .collect()
}

// Kafka's shouldFlushStoreForFirstInput, shouldNotUpdateStoreForSmallerValue,
// shouldNotUpdateStoreForLargerValue, shouldUpdateStoreForNewKey.
#[test]
fn should_flush_and_update_store() -> Result<()> {
    let pipe = |driver: &TopologyTestDriver, k: &str, v: i64| {
        driver
            .create_input_topic("input-topic", StringSerde, I64Serde)
            .pipe_key_value_at(k, v, 9999);
    };
    let driver = max_aggregator()?;
    pipe(&driver, "a", 1);
    assert_eq!(
        driver.key_value_store::<String, i64>("aggStore")?.get("a"),
        Some(21)
    );
    assert_eq!(results(&driver), [("a".to_owned(), 21)]);

    let driver = max_aggregator()?;
    pipe(&driver, "a", 42);
    assert_eq!(
        driver.key_value_store::<String, i64>("aggStore")?.get("a"),
        Some(42)
    );
    assert_eq!(results(&driver), [("a".to_owned(), 42)]);

    let driver = max_aggregator()?;
    pipe(&driver, "b", 21);
    assert_eq!(
        driver.key_value_store::<String, i64>("aggStore")?.get("b"),
        Some(21)
    );
    assert_eq!(
        results(&driver),
        [("a".to_owned(), 21), ("b".to_owned(), 21)]
    );
    Ok(())
}

// Kafka's shouldPunctuateIfWallClockTimeAdvances.
#[test]
fn should_punctuate_if_wall_clock_time_advances() -> Result<()> {
    let driver = max_aggregator()?;
    driver.advance_wall_clock_time(Duration::from_millis(60_000));
    assert_eq!(results(&driver), [("a".to_owned(), 21)]);
    Ok(())
}

/// A store of the test's own: counts what it is told.
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

/// Counts records in `counter`, reached untyped (Kafka's `getStateStore`)
/// and downcast.
struct Count;

impl Processor<B, B, (), ()> for Count {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, (), ()>, _: Record<B, B>) -> Result<()> {
        let mut store = ctx.state_store_dyn("counter")?;
        assert_eq!((store.name(), store.kind()), ("counter", StoreKind::Custom));
        if let Some(counter) = store.as_any_mut().downcast_mut::<Counter>() {
            counter.count += 1;
        }
        Ok(())
    }
}

// A store of one's own, reached untyped from a processor and from the
// driver, and downcast; the wrong type is an error that names it.
#[test]
fn a_store_of_your_own_is_reached_untyped_and_downcast() -> Result<()> {
    let mut t = Topology::new();
    t.add_source::<B, B>("source", "in")?
        .add_processor("count", || Count, &["source"])?
        .add_state_store(CounterBuilder, &["count"])?;
    let driver = TopologyTestDriver::new(t)?;
    let input = driver.create_input_topic("in", BytesSerde, BytesSerde);
    input.pipe_value(vec![1]);
    input.pipe_value(vec![2]);
    let counter = driver.state_store("counter")?;
    assert_eq!(counter.name(), "counter");
    assert_eq!(counter.with(|c: &mut Counter| c.count)?, 2);
    assert_eq!(counter.with_dyn(|s| s.kind())?, StoreKind::Custom);
    let err = counter
        .with(|_: &mut streams_core::state::KeyValueStore<B, B>| ())
        .err();
    assert!(
        matches!(
            err,
            Some(StreamsError::WrongStoreType {
                actual: StoreKind::Custom,
                ..
            })
        ),
        "{err:?}"
    );
    Ok(())
}

// Writing through the value-only view, as Kafka's facade: the value gets
// timestamp -1, which a store without a changelog keeps, and which a
// logged store refuses (Kafka's producer refuses a changelog record at a
// negative timestamp: Kafka fails at the next commit with "Failed to
// flush cache of store", or at once without the cache).
#[test]
fn writes_through_a_value_only_view_get_timestamp_minus_one() -> Result<()> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("in")
        .group_by_key()
        .count_with(Materialized::as_("counts"));
    builder
        .stream::<String, String>("quiet")
        .group_by_key()
        .count_with(Materialized::as_("quiet-counts").with_logging_disabled());
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let quiet = driver.key_value_store::<String, i64>("quiet-counts")?;
    assert_eq!(quiet.put("z".to_owned(), 5)?, None);
    let stored = driver
        .timestamped_key_value_store::<String, i64>("quiet-counts")?
        .get("z");
    assert_eq!(stored.map(|v| (v.value, v.timestamp)), Some((5, -1)));
    assert_eq!(quiet.delete("z")?, Some(5));

    let counts = driver.key_value_store::<String, i64>("counts")?;
    let err = counts.put("z".to_owned(), 5).err();
    assert!(
        matches!(err, Some(StreamsError::NegativeChangelogTimestamp { ref topic, timestamp: -1 }) if topic == "test-app-counts-changelog"),
        "{err:?}"
    );
    assert_eq!(counts.get("z"), None, "nothing was written");
    // With a timestamp, through the timestamped view, it is written.
    let timestamped = driver.timestamped_key_value_store::<String, i64>("counts")?;
    timestamped.put("z".to_owned(), 5, 30)?;
    assert_eq!(counts.get("z"), Some(5));
    // The driver hands on what the stores wrote when it next processes a
    // record, as Kafka's does.
    let changelog = driver.create_output_topic("test-app-counts-changelog", StringSerde, I64Serde);
    assert!(changelog.is_empty());
    driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value_at("b", "x", 40);
    let written = changelog.read_record();
    assert_eq!(
        (written.key.as_deref(), written.value, written.timestamp),
        (Some("z"), Some(5), Some(30))
    );
    Ok(())
}

// Kafka's shouldAllowPrePopulatingStatesStoresWithCachingEnabled: a test
// fills a cached Processor API store before the first record; the write
// waits in the cache and reaches the changelog at the commit after the
// next record, at the timestamp of the record context of the write (0
// before any record).
#[test]
fn should_allow_pre_populating_state_stores_with_caching_enabled() -> Result<()> {
    let mut t = Topology::new();
    t.add_source_with_serdes::<String, i64>(
        "sourceProcessor",
        "input-topic",
        StringSerde,
        I64Serde,
    )?
    .add_processor("aggregator", || CustomMaxAggregator, &["sourceProcessor"])?
    .add_state_store(
        Stores::key_value_store_builder("aggStore", StringSerde, I64Serde).with_caching_enabled(),
        &["aggregator"],
    )?;
    let driver = TopologyTestDriver::with_config(t, StreamsConfig::new("app"))?;
    let store = driver.key_value_store::<String, i64>("aggStore")?;
    store.put("a".to_owned(), 21)?;
    assert_eq!(store.get("a"), Some(21));
    driver
        .create_input_topic("input-topic", StringSerde, I64Serde)
        .pipe_key_value_at("a", 42, 9999);
    driver
        .create_input_topic("input-topic", StringSerde, I64Serde)
        .pipe_key_value_at("b", 1, 10_000);
    let changelog = driver
        .create_output_topic("app-aggStore-changelog", StringSerde, I64Serde)
        .read_records_to_list()
        .into_iter()
        .map(|r| (r.key.unwrap_or_default(), r.value, r.timestamp))
        .collect::<Vec<_>>();
    // The test's put (timestamp 0) and the record's put of the same key
    // were cached together: one record, the latest value.
    assert_eq!(
        changelog,
        [
            ("a".to_owned(), Some(42), Some(9999)),
            ("b".to_owned(), Some(1), Some(10_000))
        ]
    );
    Ok(())
}

// `statestore.cache.max.bytes = 0` turns a Processor API store's cache off,
// as Kafka's: every write reaches the changelog at once.
#[test]
fn a_cache_size_of_zero_turns_the_store_cache_off() -> Result<()> {
    let mut t = Topology::new();
    t.add_source_with_serdes::<String, i64>(
        "sourceProcessor",
        "input-topic",
        StringSerde,
        I64Serde,
    )?
    .add_processor("aggregator", || CustomMaxAggregator, &["sourceProcessor"])?
    .add_state_store(
        Stores::key_value_store_builder("aggStore", StringSerde, I64Serde).with_caching_enabled(),
        &["aggregator"],
    )?;
    let config = StreamsConfig::new("app").with_property("statestore.cache.max.bytes", "0");
    let driver = TopologyTestDriver::with_config(t, config)?;
    let input = driver.create_input_topic("input-topic", StringSerde, I64Serde);
    input.pipe_key_value_at("a", 1, 1);
    input.pipe_key_value_at("a", 2, 2);
    let changelog = driver.create_output_topic("app-aggStore-changelog", StringSerde, I64Serde);
    assert_eq!(changelog.read_values_to_list(), [Some(1), Some(2)]);
    Ok(())
}

/// Puts each record's value in the window store `windows` twice (window
/// start 0): the value, then the value plus one.
struct WindowPut;

impl Processor<String, i64, (), ()> for WindowPut {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, (), ()>,
        r: Record<String, i64>,
    ) -> Result<()> {
        if let (Some(k), Some(v)) = (r.key, r.value) {
            let mut windows = ctx.window_store::<String, i64>("windows")?;
            windows.put(k.clone(), v, 0)?;
            windows.put(k, v + 1, 0)?;
        }
        Ok(())
    }
}

// A window store that keeps duplicates has no cache, as Kafka's
// `WindowStoreBuilder` disables it ("Disabling caching for .. since store
// was configured to retain duplicates"): each put is logged; one without
// duplicates logs the latest value once per commit.
#[test]
fn a_window_store_keeping_duplicates_has_no_cache() -> Result<()> {
    for (dups, expected) in [(true, vec![Some(1), Some(2)]), (false, vec![Some(2)])] {
        let mut t = Topology::new();
        t.add_source_with_serdes::<String, i64>("source", "in", StringSerde, I64Serde)?
            .add_processor("put", || WindowPut, &["source"])?
            .add_state_store(
                Stores::window_store_builder(
                    "windows",
                    Duration::from_secs(1),
                    Duration::from_millis(10),
                    dups,
                    StringSerde,
                    I64Serde,
                )
                .with_caching_enabled(),
                &["put"],
            )?;
        let driver = TopologyTestDriver::with_config(t, StreamsConfig::new("app"))?;
        driver
            .create_input_topic("in", StringSerde, I64Serde)
            .pipe_key_value_at("a", 1, 2);
        let changelog = driver.create_output_topic("app-windows-changelog", BytesSerde, I64Serde);
        assert_eq!(
            changelog.read_values_to_list(),
            expected,
            "duplicates: {dups}"
        );
    }
    Ok(())
}
