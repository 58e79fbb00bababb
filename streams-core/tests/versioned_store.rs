//! The versioned key-value store (KIP-889): ports of Kafka's
//! `RocksDBVersionedStoreTest` with its exact values (the cases of
//! `get(key, asOfTimestamp)` and `put`/`delete`; the IQv2 range queries
//! have no counterpart here), the changelog and restore as Kafka's
//! `ChangeLoggingVersionedKeyValueBytesStore` and `restoreBatch` make
//! them, the `VersionedKeyValueStoreIntegrationTest` checker, and a
//! property test against a naive model.
//!
//! Kafka's test reads `validTo` from the bytes store; ours returns it
//! from the typed store (`VersionedRecord::valid_to`).

use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use streams_core::processor::{Processor, ProcessorContext};
use streams_core::serde::{I32Serde, I64Serde, StringSerde};
use streams_core::state::{
    StoreBuilder, Stores, VersionedBytesStoreSupplier, VersionedKeyValueStore, VersionedRecord,
};
use streams_core::{RawRecord, Record, StreamsConfig, StreamsError, Topology};
use streams_test::{TestRecord, TopologyTestDriver, VersionedKeyValueStoreView};

type TestResult = Result<(), Box<dyn Error>>;

const STORE_NAME: &str = "myversionedrocks";
const HISTORY_RETENTION: i64 = 300_000;
const GRACE_PERIOD: i64 = HISTORY_RETENTION;
const SEGMENT_INTERVAL: i64 = HISTORY_RETENTION / 3;
const BASE_TIMESTAMP: i64 = 10;
const VALID_TO_UNDEFINED: i64 =
    VersionedKeyValueStore::<String, String>::PUT_RETURN_CODE_VALID_TO_UNDEFINED;
const NOT_PUT: i64 = VersionedKeyValueStore::<String, String>::PUT_RETURN_CODE_NOT_PUT;

/// Does nothing: the store only needs a processor to belong to.
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

fn supplier(history: i64, segment: i64) -> VersionedBytesStoreSupplier {
    VersionedBytesStoreSupplier::of_millis(STORE_NAME, history, Some(segment)).expect("valid")
}

/// A driver whose topology holds the versioned store `myversionedrocks`
/// of String keys and values.
fn driver_with(history: i64) -> TopologyTestDriver {
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "in")
        .and_then(|t| t.add_processor("noop", || Noop, &["in"]))
        .and_then(|t| {
            t.add_state_store(
                Stores::versioned_key_value_store_builder(
                    supplier(history, SEGMENT_INTERVAL),
                    StringSerde,
                    StringSerde,
                ),
                &["noop"],
            )
        })
        .expect("topology");
    TopologyTestDriver::with_config(topology, config()).expect("driver")
}

/// The drivers' config: in memory; with the `rocksdb` feature, Kafka's
/// RocksDB stores (each driver a state directory of its own), so that
/// every port of Kafka's test below runs against the RocksDB store too.
fn config() -> StreamsConfig {
    #[cfg(feature = "rocksdb")]
    {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("versioned-{}-{n}", std::process::id()));
        StreamsConfig::new("app")
            .with_property("default.dsl.store", "rocksDB")
            .with_property("state.dir", dir.to_string_lossy())
    }
    #[cfg(not(feature = "rocksdb"))]
    StreamsConfig::new("app")
}

/// With the `rocksdb` feature the store lives in RocksDB, under the
/// task's directory, and the driver deletes it at close.
#[cfg(feature = "rocksdb")]
#[test]
fn the_store_lives_in_rocksdb() -> TestResult {
    let config = config();
    let dir = config.state_dir().join("app/0_0/rocksdb").join(STORE_NAME);
    let mut topology = Topology::new();
    topology
        .add_source::<String, String>("in", "in")?
        .add_processor("noop", || Noop, &["in"])?
        .add_state_store(
            Stores::versioned_key_value_store_builder(
                supplier(HISTORY_RETENTION, SEGMENT_INTERVAL),
                StringSerde,
                StringSerde,
            ),
            &["noop"],
        )?;
    let driver = TopologyTestDriver::with_config(topology, config)?;
    let store = driver.versioned_key_value_store::<String, String>(STORE_NAME)?;
    store.put("k".into(), Some("v".into()), BASE_TIMESTAMP)?;
    assert_eq!(
        store.versions(),
        [("k".to_owned(), BASE_TIMESTAMP, Some("v".to_owned()))]
    );
    assert!(dir.is_dir(), "{dir:?}");
    driver.close()?;
    assert!(!dir.exists());
    Ok(())
}

struct Fixture {
    driver: TopologyTestDriver,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            driver: driver_with(HISTORY_RETENTION),
        }
    }

    fn store(&self) -> VersionedKeyValueStoreView<'_, String, String> {
        self.driver
            .versioned_key_value_store(STORE_NAME)
            .expect("store")
    }

    #[track_caller]
    fn put(&self, key: &str, value: Option<&str>, timestamp: i64, expected_valid_to: i64) {
        let valid_to = self
            .store()
            .put(key.into(), value.map(String::from), timestamp)
            .expect("put");
        assert_eq!(
            valid_to, expected_valid_to,
            "put({key}, {value:?}, {timestamp})"
        );
    }

    fn delete(&self, key: &str, timestamp: i64) -> Option<VersionedRecord<String>> {
        self.store().delete(key, timestamp).expect("delete")
    }

    #[track_caller]
    fn verify_get(&self, key: &str, value: &str, timestamp: i64) {
        assert_eq!(
            self.store().get(key),
            Some(VersionedRecord::new(value.into(), timestamp))
        );
    }

    #[track_caller]
    fn verify_get_null(&self, key: &str) {
        assert_eq!(self.store().get(key), None);
    }

    #[track_caller]
    fn verify_get_as_of(&self, key: &str, as_of: i64, value: &str, timestamp: i64, valid_to: i64) {
        let expected = if valid_to == VALID_TO_UNDEFINED {
            VersionedRecord::new(value.into(), timestamp)
        } else {
            VersionedRecord::with_valid_to(value.into(), timestamp, valid_to)
        };
        assert_eq!(
            self.store().get_as_of(key, as_of),
            Some(expected),
            "get({key}, {as_of})"
        );
    }

    #[track_caller]
    fn verify_get_as_of_null(&self, key: &str, as_of: i64) {
        assert_eq!(
            self.store().get_as_of(key, as_of),
            None,
            "get({key}, {as_of})"
        );
    }

    #[track_caller]
    fn verify_expired_record_sensor(&self, expected: u64) {
        assert_eq!(self.driver.metrics().dropped_records, expected);
    }
}

#[test]
fn should_put_latest() {
    let f = Fixture::new();
    f.put("k", Some("v"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", Some("v2"), BASE_TIMESTAMP + 1, VALID_TO_UNDEFINED);

    f.verify_get("k", "v2", BASE_TIMESTAMP + 1);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "v", BASE_TIMESTAMP, BASE_TIMESTAMP + 1);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP + 1,
        "v2",
        BASE_TIMESTAMP + 1,
        VALID_TO_UNDEFINED,
    );
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP + 2,
        "v2",
        BASE_TIMESTAMP + 1,
        VALID_TO_UNDEFINED,
    );
}

#[test]
fn should_put_null_as_latest() {
    let f = Fixture::new();
    f.put("k", None, BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", None, BASE_TIMESTAMP + 1, VALID_TO_UNDEFINED);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", BASE_TIMESTAMP);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP + 1);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP + 2);
}

#[test]
fn should_put_older_with_non_null_latest() {
    let f = Fixture::new();
    f.put("k", Some("v"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", Some("v2"), BASE_TIMESTAMP - 2, BASE_TIMESTAMP);
    f.put("k", Some("v1"), BASE_TIMESTAMP - 1, BASE_TIMESTAMP);
    f.put("k", Some("v4"), BASE_TIMESTAMP - 4, BASE_TIMESTAMP - 2);

    f.verify_get("k", "v", BASE_TIMESTAMP);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "v", BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 1,
        "v1",
        BASE_TIMESTAMP - 1,
        BASE_TIMESTAMP,
    );
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 2,
        "v2",
        BASE_TIMESTAMP - 2,
        BASE_TIMESTAMP - 1,
    );
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 3,
        "v4",
        BASE_TIMESTAMP - 4,
        BASE_TIMESTAMP - 2,
    );
}

#[test]
fn should_put_older_with_null_latest() {
    let f = Fixture::new();
    f.put("k", None, BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", Some("v2"), BASE_TIMESTAMP - 2, BASE_TIMESTAMP);
    f.put("k", Some("v1"), BASE_TIMESTAMP - 1, BASE_TIMESTAMP);
    f.put("k", Some("v4"), BASE_TIMESTAMP - 4, BASE_TIMESTAMP - 2);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", BASE_TIMESTAMP);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 1,
        "v1",
        BASE_TIMESTAMP - 1,
        BASE_TIMESTAMP,
    );
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 2,
        "v2",
        BASE_TIMESTAMP - 2,
        BASE_TIMESTAMP - 1,
    );
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 3,
        "v4",
        BASE_TIMESTAMP - 4,
        BASE_TIMESTAMP - 2,
    );
}

#[test]
fn should_put_older_null_with_non_null_latest() {
    let f = Fixture::new();
    f.put("k", Some("v"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", None, BASE_TIMESTAMP - 2, BASE_TIMESTAMP);
    f.put("k", None, BASE_TIMESTAMP - 1, BASE_TIMESTAMP);
    f.put("k", None, BASE_TIMESTAMP - 4, BASE_TIMESTAMP - 2);
    f.put("k", Some("v5"), BASE_TIMESTAMP - 5, BASE_TIMESTAMP - 4);
    f.put("k", Some("v3"), BASE_TIMESTAMP - 3, BASE_TIMESTAMP - 2);
    f.put("k", None, BASE_TIMESTAMP - 6, BASE_TIMESTAMP - 5);

    f.verify_get("k", "v", BASE_TIMESTAMP);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "v", BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 2);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 3,
        "v3",
        BASE_TIMESTAMP - 3,
        BASE_TIMESTAMP - 2,
    );
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 4);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 5,
        "v5",
        BASE_TIMESTAMP - 5,
        BASE_TIMESTAMP - 4,
    );
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 6);
}

#[test]
fn should_put_older_null_with_null_latest() {
    let f = Fixture::new();
    f.put("k", None, BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.put("k", None, BASE_TIMESTAMP - 2, BASE_TIMESTAMP);
    f.put("k", None, BASE_TIMESTAMP - 1, BASE_TIMESTAMP);
    f.put("k", None, BASE_TIMESTAMP - 4, BASE_TIMESTAMP - 2);
    f.put("k", Some("v3"), BASE_TIMESTAMP - 3, BASE_TIMESTAMP - 2);
    f.put("k", Some("v5"), BASE_TIMESTAMP - 5, BASE_TIMESTAMP - 4);
    f.put("k", None, BASE_TIMESTAMP - 6, BASE_TIMESTAMP - 5);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", BASE_TIMESTAMP);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 2);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 3,
        "v3",
        BASE_TIMESTAMP - 3,
        BASE_TIMESTAMP - 2,
    );
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 4);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP - 5,
        "v5",
        BASE_TIMESTAMP - 5,
        BASE_TIMESTAMP - 4,
    );
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 6);
}

#[test]
fn should_put_repeat_timestamp_as_latest() {
    let f = Fixture::new();
    f.put(
        "k",
        Some("to_be_replaced"),
        BASE_TIMESTAMP,
        VALID_TO_UNDEFINED,
    );
    f.put("k", Some("b"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);

    f.verify_get("k", "b", BASE_TIMESTAMP);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "b", BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);

    f.put("k", None, BASE_TIMESTAMP, VALID_TO_UNDEFINED);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", BASE_TIMESTAMP);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);

    f.put("k", None, BASE_TIMESTAMP, VALID_TO_UNDEFINED);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", BASE_TIMESTAMP);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);

    f.put("k", Some("b"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);

    f.verify_get("k", "b", BASE_TIMESTAMP);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "b", BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get_as_of_null("k", BASE_TIMESTAMP - 1);
}

/// The puts of Kafka's `shouldPutRepeatTimestamps`, and of
/// `shouldRestoreWithNullsAndRepeatTimestamps` (the same records).
fn repeat_timestamps() -> Vec<(&'static str, Option<&'static str>, i64, i64)> {
    let si = SEGMENT_INTERVAL;
    vec![
        ("k", Some("to_be_replaced"), si + 20, VALID_TO_UNDEFINED),
        ("k", None, si - 10, si + 20),
        // replace existing null with non-null, with timestamps spanning segments
        ("k", Some("to_be_replaced"), si - 10, si + 20),
        // replace existing non-null with null
        ("k", None, si - 10, si + 20),
        ("k", Some("to_be_replaced"), si - 1, si + 20),
        ("k", Some("to_be_replaced"), si + 1, si + 20),
        // replace existing non-null with null
        ("k", None, si - 1, si + 1),
        // replace existing non-null with null, with timestamps spanning segments
        ("k", None, si + 1, si + 20),
        ("k", None, si + 10, si + 20),
        ("k", None, si + 5, si + 10),
        // replace existing null with non-null
        ("k", Some("vp5"), si + 5, si + 10),
        ("k", Some("to_be_replaced"), si - 5, si - 1),
        // replace existing non-null with non-null
        ("k", Some("vn5"), si - 5, si - 1),
        // replace existing non-null (latest value) with null
        ("k", None, si + 20, VALID_TO_UNDEFINED),
        // replace existing null with null
        ("k", None, si + 20, VALID_TO_UNDEFINED),
        ("k", Some("vn6"), si - 6, si - 5),
    ]
}

/// What `shouldPutRepeatTimestamps` and its restore twin verify.
fn verify_repeat_timestamps(
    f: &dyn Fn(&str, i64) -> Option<VersionedRecord<String>>,
    latest: Option<VersionedRecord<String>>,
) {
    let si = SEGMENT_INTERVAL;
    assert_eq!(latest, None);
    let v = |value: &str, ts, to| Some(VersionedRecord::with_valid_to(value.to_string(), ts, to));
    assert_eq!(f("k", si + 30), None);
    assert_eq!(f("k", si + 15), None);
    assert_eq!(f("k", si + 6), v("vp5", si + 5, si + 10));
    assert_eq!(f("k", si + 2), None);
    assert_eq!(f("k", si), None);
    assert_eq!(f("k", si - 1), None);
    assert_eq!(f("k", si - 5), v("vn5", si - 5, si - 1));
    assert_eq!(f("k", si - 6), v("vn6", si - 6, si - 5));
    assert_eq!(f("k", si - 8), None);
}

#[test]
fn should_put_repeat_timestamps() {
    let f = Fixture::new();
    for (k, v, ts, valid_to) in repeat_timestamps() {
        f.put(k, v, ts, valid_to);
    }
    let store = f.store();
    verify_repeat_timestamps(&|k, t| store.get_as_of(k, t), store.get("k"));
}

#[test]
fn should_put_into_multiple_segments() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", None, si - 20, VALID_TO_UNDEFINED);
    f.put("k", Some("vn10"), si - 10, VALID_TO_UNDEFINED);
    f.put("k", None, si - 1, VALID_TO_UNDEFINED);
    f.put("k", None, si + 1, VALID_TO_UNDEFINED);
    f.put("k", Some("vp10"), si + 10, VALID_TO_UNDEFINED);
    f.put("k", None, si + 20, VALID_TO_UNDEFINED);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", si + 30);
    f.verify_get_as_of("k", si + 15, "vp10", si + 10, si + 20);
    f.verify_get_as_of_null("k", si + 5);
    f.verify_get_as_of_null("k", si + 2);
    f.verify_get_as_of_null("k", si);
    f.verify_get_as_of_null("k", si - 1);
    f.verify_get_as_of("k", si - 5, "vn10", si - 10, si - 1);
    f.verify_get_as_of_null("k", si - 15);
}

#[test]
fn should_move_record_to_older_segment_during_put() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", Some("vp20"), si + 20, VALID_TO_UNDEFINED);
    f.put("k", Some("vp10"), si + 10, si + 20);
    f.put("k", Some("vn10"), si - 10, si + 10);
    f.put("k", Some("vn2"), si - 2, si + 10);
    f.put("k", Some("vn1"), si - 1, si + 10);
    f.put("k", Some("vp1"), si + 1, si + 10);

    f.verify_get("k", "vp20", si + 20);
    f.verify_get_as_of("k", si + 30, "vp20", si + 20, VALID_TO_UNDEFINED);
    f.verify_get_as_of("k", si + 15, "vp10", si + 10, si + 20);
    f.verify_get_as_of("k", si + 5, "vp1", si + 1, si + 10);
    f.verify_get_as_of("k", si, "vn1", si - 1, si + 1);
    f.verify_get_as_of("k", si - 1, "vn1", si - 1, si + 1);
    f.verify_get_as_of("k", si - 2, "vn2", si - 2, si - 1);
    f.verify_get_as_of("k", si - 5, "vn10", si - 10, si - 2);
}

#[test]
fn should_move_record_to_older_segment_with_nulls_during_put() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", None, si + 20, VALID_TO_UNDEFINED);
    f.put("k", None, si - 1, si + 20);
    f.put("k", None, si + 1, si + 20);
    f.put("k", None, si - 10, si - 1);
    f.put("k", None, si + 10, si + 20);
    f.put("k", Some("vp5"), si + 5, si + 10);
    f.put("k", Some("vn5"), si - 5, si - 1);
    f.put("k", Some("vn6"), si - 6, si - 5);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", si + 30);
    f.verify_get_as_of_null("k", si + 15);
    f.verify_get_as_of("k", si + 6, "vp5", si + 5, si + 10);
    f.verify_get_as_of_null("k", si + 2);
    f.verify_get_as_of_null("k", si);
    f.verify_get_as_of_null("k", si - 1);
    f.verify_get_as_of("k", si - 5, "vn5", si - 5, si - 1);
    f.verify_get_as_of("k", si - 6, "vn6", si - 6, si - 5);
    f.verify_get_as_of_null("k", si - 8);
}

#[test]
fn should_fall_through_to_existing_older_segment_as_latest_during_put() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", None, si - 5, VALID_TO_UNDEFINED);
    f.put("k", Some("vn6"), si - 6, si - 5);
    f.put("k", Some("vp20"), si + 20, VALID_TO_UNDEFINED);
    f.put("k", None, si + 10, si + 20);
    f.put("k", None, si - 1, si + 10);
    f.put("k", Some("vn2"), si - 2, si - 1);

    f.verify_get("k", "vp20", si + 20);
    f.verify_get_as_of("k", si + 30, "vp20", si + 20, VALID_TO_UNDEFINED);
    f.verify_get_as_of_null("k", si + 12);
    f.verify_get_as_of_null("k", si);
    f.verify_get_as_of_null("k", si - 1);
    f.verify_get_as_of("k", si - 2, "vn2", si - 2, si - 1);
    f.verify_get_as_of_null("k", si - 5);
    f.verify_get_as_of("k", si - 6, "vn6", si - 6, si - 5);
}

#[test]
fn should_put_non_latest_tombstone_into_new_segment_with_valid_to() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", Some("vp30"), si + 30, VALID_TO_UNDEFINED);
    // this put should result in tombstone with validTo=SEGMENT_INTERVAL+30
    f.put("k", None, si - 10, si + 30);
    f.put("k", Some("vn5"), si - 5, si + 30);
    f.put("k", Some("vn1"), si - 1, si + 30);
    f.put("k", None, si - 2, si - 1);

    f.verify_get("k", "vp30", si + 30);
    f.verify_get_as_of("k", si + 10, "vn1", si - 1, si + 30);
    f.verify_get_as_of("k", si - 1, "vn1", si - 1, si + 30);
    f.verify_get_as_of_null("k", si - 2);
    f.verify_get_as_of("k", si - 5, "vn5", si - 5, si - 2);
    f.verify_get_as_of_null("k", si - 10);
}

#[test]
fn should_delete() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", Some("vp20"), si + 20, VALID_TO_UNDEFINED);
    f.put("k", Some("vp10"), si + 10, si + 20);
    f.put("k", Some("vn10"), si - 10, si + 10);
    f.put("k", Some("vn2"), si - 2, si + 10);

    // delete from segment
    let deleted = f.delete("k", si - 5).expect("deleted");
    assert_eq!(
        (deleted.value.as_str(), deleted.timestamp),
        ("vn10", si - 10)
    );

    // delete existing timestamp
    let deleted = f.delete("k", si + 10).expect("deleted");
    assert_eq!(
        (deleted.value.as_str(), deleted.timestamp),
        ("vp10", si + 10)
    );

    // delete the same timestamp again
    assert_eq!(f.delete("k", si + 10), None);

    // delete from latest value store
    let deleted = f.delete("k", si + 25).expect("deleted");
    assert_eq!(
        (deleted.value.as_str(), deleted.timestamp),
        ("vp20", si + 20)
    );
}

#[test]
fn should_not_put_expired() {
    let f = Fixture::new();
    f.put("k", Some("v"), HISTORY_RETENTION + 10, VALID_TO_UNDEFINED);

    // grace period has not elapsed
    f.put(
        "k1",
        Some("v1"),
        HISTORY_RETENTION + 10 - GRACE_PERIOD,
        VALID_TO_UNDEFINED,
    );
    f.verify_get("k1", "v1", HISTORY_RETENTION + 10 - GRACE_PERIOD);

    // grace period has elapsed, so this put does not take place
    f.put(
        "k2",
        Some("v2"),
        HISTORY_RETENTION + 9 - GRACE_PERIOD,
        NOT_PUT,
    );
    f.verify_get_null("k2");

    f.verify_expired_record_sensor(1);
}

#[test]
fn should_not_delete_expired() {
    let f = Fixture::new();
    f.put("k1", Some("v1"), 1, VALID_TO_UNDEFINED);
    f.put("k2", Some("v2"), 1, VALID_TO_UNDEFINED);
    // use separate key to advance stream time
    f.put(
        "kother",
        Some("vother"),
        HISTORY_RETENTION + 10,
        VALID_TO_UNDEFINED,
    );

    // grace period has not elapsed
    let deleted = f
        .delete("k1", HISTORY_RETENTION + 10 - GRACE_PERIOD)
        .expect("deleted");
    assert_eq!((deleted.value.as_str(), deleted.timestamp), ("v1", 1));
    f.verify_get_null("k1");

    // grace period has elapsed, so this delete does not take place
    // (return value is null even though record exists)
    assert_eq!(f.delete("k2", HISTORY_RETENTION + 9 - GRACE_PERIOD), None);
    f.verify_get("k2", "v2", 1);

    f.verify_expired_record_sensor(1);
}

#[test]
fn should_get_from_older_segments() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    // use a different key to create three different segments
    f.put("ko", None, si - 10, VALID_TO_UNDEFINED);
    f.put("ko", None, 2 * si - 10, VALID_TO_UNDEFINED);
    f.put("ko", None, 3 * si - 10, VALID_TO_UNDEFINED);

    // return null after visiting all segments
    f.verify_get_as_of_null("k", si - 20);

    // insert data to create non-empty (first) segment
    f.put("k", Some("v"), si - 20, VALID_TO_UNDEFINED);
    f.put("k", None, si - 10, VALID_TO_UNDEFINED);

    f.verify_get_as_of_null("k", si - 30);
    f.verify_get_as_of("k", si - 15, "v", si - 20, si - 10);
    f.verify_get_as_of_null("k", si - 5);

    // insert data to create non-empty (third) segment
    f.put("k", Some("v2"), 3 * si - 20, VALID_TO_UNDEFINED);
    f.put("k", None, 3 * si - 10, VALID_TO_UNDEFINED);

    // presence of non-empty later segment does not affect results of getting from earlier segment
    f.verify_get_as_of_null("k", si - 30);
    f.verify_get_as_of("k", si - 15, "v", si - 20, si - 10);
    f.verify_get_as_of_null("k", si - 5);
}

#[test]
fn should_not_get_expired() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", Some("v_old"), 0, VALID_TO_UNDEFINED);
    f.put("k", Some("v"), si - 10, VALID_TO_UNDEFINED);

    // old record has not yet expired
    f.verify_get_as_of("k", si - 11, "v_old", 0, si - 10);

    f.put(
        "ko",
        Some("vo"),
        HISTORY_RETENTION + si - 11,
        VALID_TO_UNDEFINED,
    );

    // old record still has not yet expired
    f.verify_get_as_of("k", si - 11, "v_old", 0, si - 10);

    f.put(
        "ko",
        Some("vo2"),
        HISTORY_RETENTION + si - 10,
        VALID_TO_UNDEFINED,
    );

    // old record is expired now
    f.verify_get_as_of_null("k", si - 11);
}

#[test]
fn should_get_expired_if_latest_value() {
    let f = Fixture::new();
    f.put("k", Some("v"), 1, VALID_TO_UNDEFINED);
    f.put("ko", Some("vo_old"), 1, VALID_TO_UNDEFINED);
    f.put(
        "ko",
        Some("vo_new"),
        HISTORY_RETENTION + 12,
        VALID_TO_UNDEFINED,
    );

    // expired get on key where latest satisfies timestamp bound still returns data
    f.verify_get_as_of("k", 10, "v", 1, VALID_TO_UNDEFINED);

    // same expired get on key where latest value does not satisfy timestamp bound does not return data
    f.verify_get_as_of_null("ko", 10);
}

#[test]
fn should_distinguish_empty_and_null() {
    let f = Fixture::new();
    let si = SEGMENT_INTERVAL;
    f.put("k", None, si + 20, VALID_TO_UNDEFINED);
    f.put("k", None, si - 10, si + 20);
    f.put("k", None, si - 1, si + 20);
    f.put("k", None, si + 1, si + 20);
    f.put("k", None, si + 10, si + 20);
    // empty string is serialized as an empty byte array, which is different from null (tombstone)
    f.put("k", Some(""), si + 5, si + 10);
    f.put("k", Some(""), si - 5, si - 1);
    f.put("k", Some(""), si - 6, si - 5);

    f.verify_get_null("k");
    f.verify_get_as_of_null("k", si + 30);
    f.verify_get_as_of_null("k", si + 15);
    f.verify_get_as_of("k", si + 6, "", si + 5, si + 10);
    f.verify_get_as_of_null("k", si + 2);
    f.verify_get_as_of_null("k", si);
    f.verify_get_as_of_null("k", si - 1);
    f.verify_get_as_of("k", si - 5, "", si - 5, si - 1);
    f.verify_get_as_of("k", si - 6, "", si - 6, si - 5);
    f.verify_get_as_of_null("k", si - 8);
}

#[test]
fn should_allow_zero_history_retention() {
    let f = Fixture {
        driver: driver_with(0),
    };
    // put and get
    f.put("k", Some("v"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get("k", "v", BASE_TIMESTAMP);
    f.verify_get_as_of("k", BASE_TIMESTAMP, "v", BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    // query in "future" is allowed
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP + 1,
        "v",
        BASE_TIMESTAMP,
        VALID_TO_UNDEFINED,
    );

    // update existing record at same timestamp
    f.put("k", Some("updated"), BASE_TIMESTAMP, VALID_TO_UNDEFINED);
    f.verify_get("k", "updated", BASE_TIMESTAMP);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP,
        "updated",
        BASE_TIMESTAMP,
        VALID_TO_UNDEFINED,
    );

    // put new record version
    f.put("k", Some("v2"), BASE_TIMESTAMP + 2, VALID_TO_UNDEFINED);
    f.verify_get("k", "v2", BASE_TIMESTAMP + 2);
    f.verify_get_as_of(
        "k",
        BASE_TIMESTAMP + 2,
        "v2",
        BASE_TIMESTAMP + 2,
        VALID_TO_UNDEFINED,
    );

    // query in past (history retention expired) returns null
    f.verify_get_as_of_null("k", BASE_TIMESTAMP + 1);

    // delete existing key
    f.delete("k", BASE_TIMESTAMP + 3);
    f.verify_get_null("k");

    // put in past (grace period expired) does not update the store
    f.put("k2", Some("v"), BASE_TIMESTAMP + 2, NOT_PUT);
    f.verify_get_null("k2");
    f.verify_expired_record_sensor(1);
}

// --- restore (Kafka's `restoreBatch`) ---

fn changelog_records(data: &[(&str, Option<&str>, i64)]) -> Vec<RawRecord> {
    data.iter()
        .map(|(k, v, ts)| {
            Record::new(
                Some(k.as_bytes().to_vec()),
                v.map(|v| v.as_bytes().to_vec()),
                *ts,
            )
        })
        .collect()
}

/// A store restored from these changelog batches, for `check`.
fn restored(
    batches: &[&[(&str, Option<&str>, i64)]],
    check: impl FnOnce(&VersionedKeyValueStore<String, String>),
) {
    let builder = Stores::versioned_key_value_store_builder(
        supplier(HISTORY_RETENTION, SEGMENT_INTERVAL),
        StringSerde,
        StringSerde,
    );
    let mut boxed = builder.build(&StreamsConfig::default()).expect("build");
    let store = boxed
        .as_any_mut()
        .downcast_mut::<VersionedKeyValueStore<String, String>>()
        .expect("a versioned store");
    for batch in batches {
        store.restore(&changelog_records(batch)).expect("restore");
    }
    check(store);
}

#[test]
fn should_restore() {
    let si = SEGMENT_INTERVAL;
    restored(
        &[&[
            ("k", Some("vp20"), si + 20),
            ("k", Some("vp10"), si + 10),
            ("k", Some("vn10"), si - 10),
            ("k", Some("vn2"), si - 2),
            ("k", Some("vn1"), si - 1),
            ("k", Some("vp1"), si + 1),
        ]],
        |store| {
            let k = "k".to_string();
            let v = |value: &str, ts, to| {
                Some(VersionedRecord::with_valid_to(value.to_string(), ts, to))
            };
            assert_eq!(
                store.get(&k).expect("read"),
                Some(VersionedRecord::new("vp20".into(), si + 20))
            );
            assert_eq!(
                store.get_as_of(&k, si + 30).expect("read"),
                Some(VersionedRecord::new("vp20".into(), si + 20))
            );
            assert_eq!(
                store.get_as_of(&k, si + 15).expect("read"),
                v("vp10", si + 10, si + 20)
            );
            assert_eq!(
                store.get_as_of(&k, si + 5).expect("read"),
                v("vp1", si + 1, si + 10)
            );
            assert_eq!(
                store.get_as_of(&k, si).expect("read"),
                v("vn1", si - 1, si + 1)
            );
            assert_eq!(
                store.get_as_of(&k, si - 1).expect("read"),
                v("vn1", si - 1, si + 1)
            );
            assert_eq!(
                store.get_as_of(&k, si - 2).expect("read"),
                v("vn2", si - 2, si - 1)
            );
            assert_eq!(
                store.get_as_of(&k, si - 5).expect("read"),
                v("vn10", si - 10, si - 2)
            );
        },
    );
}

#[test]
fn should_restore_with_nulls() {
    let si = SEGMENT_INTERVAL;
    restored(
        &[&[
            ("k", None, si + 20),
            ("k", None, si - 1),
            ("k", None, si + 1),
            ("k", None, si - 10),
            ("k", None, si + 10),
            ("k", Some("vp5"), si + 5),
            ("k", Some("vn5"), si - 5),
            ("k", Some("vn6"), si - 6),
        ]],
        |store| {
            let k = "k".to_string();
            let v = |value: &str, ts, to| {
                Some(VersionedRecord::with_valid_to(value.to_string(), ts, to))
            };
            assert_eq!(store.get(&k).expect("read"), None);
            assert_eq!(store.get_as_of(&k, si + 30).expect("read"), None);
            assert_eq!(store.get_as_of(&k, si + 15).expect("read"), None);
            assert_eq!(
                store.get_as_of(&k, si + 6).expect("read"),
                v("vp5", si + 5, si + 10)
            );
            assert_eq!(store.get_as_of(&k, si + 2).expect("read"), None);
            assert_eq!(store.get_as_of(&k, si).expect("read"), None);
            assert_eq!(store.get_as_of(&k, si - 1).expect("read"), None);
            assert_eq!(
                store.get_as_of(&k, si - 5).expect("read"),
                v("vn5", si - 5, si - 1)
            );
            assert_eq!(
                store.get_as_of(&k, si - 6).expect("read"),
                v("vn6", si - 6, si - 5)
            );
            assert_eq!(store.get_as_of(&k, si - 8).expect("read"), None);
        },
    );
}

#[test]
fn should_restore_with_nulls_and_repeat_timestamps() {
    let records: Vec<(&str, Option<&str>, i64)> = repeat_timestamps()
        .into_iter()
        .map(|(k, v, ts, _)| (k, v, ts))
        .collect();
    restored(&[&records], |store| {
        verify_repeat_timestamps(
            &|k, t| store.get_as_of(&k.to_string(), t).expect("read"),
            store.get(&"k".to_string()).expect("read"),
        );
    });
}

#[test]
fn should_restore_multiple_batches() {
    let si = SEGMENT_INTERVAL;
    restored(
        &[
            &[
                ("k", None, si - 20),
                ("k", Some("vn10"), si - 10),
                ("k", None, si - 1),
            ],
            &[
                ("k", None, si + 1),
                ("k", Some("vp10"), si + 10),
                ("k", None, si + 20),
            ],
        ],
        |store| {
            let k = "k".to_string();
            assert_eq!(store.get(&k).expect("read"), None);
            assert_eq!(store.get_as_of(&k, si + 30).expect("read"), None);
            assert_eq!(
                store.get_as_of(&k, si + 15).expect("read"),
                Some(VersionedRecord::with_valid_to(
                    "vp10".into(),
                    si + 10,
                    si + 20
                ))
            );
            for t in [si + 5, si + 2, si, si - 1, si - 15] {
                assert_eq!(store.get_as_of(&k, t).expect("read"), None, "{t}");
            }
            assert_eq!(
                store.get_as_of(&k, si - 5).expect("read"),
                Some(VersionedRecord::with_valid_to(
                    "vn10".into(),
                    si - 10,
                    si - 1
                ))
            );
        },
    );
}

#[test]
fn should_not_restore_expired() {
    restored(
        &[&[
            ("k", Some("v"), HISTORY_RETENTION + 10),
            // grace period has not elapsed
            ("k1", Some("v1"), HISTORY_RETENTION + 10 - GRACE_PERIOD),
            // grace period has elapsed, so this record should not be restored
            ("k2", Some("v2"), HISTORY_RETENTION + 9 - GRACE_PERIOD),
        ]],
        |store| {
            assert_eq!(
                store.get("k").expect("read"),
                Some(VersionedRecord::new("v".into(), HISTORY_RETENTION + 10))
            );
            assert_eq!(
                store.get("k1").expect("read"),
                Some(VersionedRecord::new(
                    "v1".into(),
                    HISTORY_RETENTION + 10 - GRACE_PERIOD
                ))
            );
            assert_eq!(store.get("k2").expect("read"), None);
        },
    );
}

#[test]
fn should_restore_even_if_record_would_be_expired_by_end_of_batch() {
    restored(
        &[&[
            // this record will be older than grace period by the end of the batch, but should still be restored
            ("k2", Some("v2"), HISTORY_RETENTION - GRACE_PERIOD),
            ("k", Some("v"), HISTORY_RETENTION + 10),
        ]],
        |store| {
            assert_eq!(
                store.get("k2").expect("read"),
                Some(VersionedRecord::new(
                    "v2".into(),
                    HISTORY_RETENTION - GRACE_PERIOD
                ))
            );
            assert_eq!(
                store.get("k").expect("read"),
                Some(VersionedRecord::new("v".into(), HISTORY_RETENTION + 10))
            );
        },
    );
}

// --- the changelog, as `ChangeLoggingVersionedKeyValueBytesStore` writes it ---

#[test]
fn every_put_and_delete_is_logged_at_its_version_timestamp_expired_ones_too() -> TestResult {
    let f = Fixture::new();
    f.put("k", Some("a"), 100, VALID_TO_UNDEFINED);
    f.put("k", Some("b"), 50, 100);
    f.put("k", None, 400_000, VALID_TO_UNDEFINED);
    // Expired: not put, still logged (Kafka's logging layer logs every call).
    f.put("k", Some("late"), 1, NOT_PUT);
    f.delete("k", 2);
    f.delete("k", 400_001);
    // As in Kafka's driver, what the test wrote is captured with the next
    // piped record.
    f.driver
        .create_input_topic("in", StringSerde, StringSerde)
        .pipe_key_value("x", "y");
    let changelog = f.driver.create_output_topic::<String, String>(
        &format!("app-{STORE_NAME}-changelog"),
        StringSerde,
        StringSerde,
    );
    assert_eq!(
        changelog.read_records_to_list(),
        [
            TestRecord::key_value("k", "a").at(100),
            TestRecord::key_value("k", "b").at(50),
            TestRecord::tombstone("k").at(400_000),
            TestRecord::key_value("k", "late").at(1),
            TestRecord::tombstone("k").at(2),
            TestRecord::tombstone("k").at(400_001),
        ]
    );
    f.verify_expired_record_sensor(2);
    assert_eq!(
        f.driver.dropped_records_by_node(),
        BTreeMap::from([(STORE_NAME.to_string(), 2)])
    );
    Ok(())
}

#[test]
fn the_changelog_topic_keeps_history_retention_plus_a_day_before_compacting() -> TestResult {
    let supplier =
        Stores::persistent_versioned_key_value_store("s", Duration::from_millis(3_600_000))?;
    let builder =
        Stores::versioned_key_value_store_builder(supplier.clone(), StringSerde, StringSerde);
    // Kafka's `shouldSetChangelogTopicProperties`.
    assert_eq!(
        builder.changelog_config(),
        BTreeMap::from([(
            "min.compaction.lag.ms".to_string(),
            (3_600_000_i64 + 86_400_000).to_string()
        )])
    );
    // A user's own value wins, as in `VersionedChangelogTopicConfig`.
    let builder = Stores::versioned_key_value_store_builder(supplier, StringSerde, StringSerde)
        .with_logging_enabled_and_config([("min.compaction.lag.ms", "5")]);
    assert_eq!(builder.changelog_config()["min.compaction.lag.ms"], "5");
    Ok(())
}

#[test]
fn suppliers_refuse_what_kafka_refuses_with_its_messages() {
    let err = VersionedBytesStoreSupplier::of_millis("s", -1, None).expect_err("must fail");
    assert!(matches!(
        err,
        StreamsError::InvalidVersionedStore { millis: -1, .. }
    ));
    assert!(
        err.to_string()
            .contains("historyRetention cannot be negative"),
        "{err}"
    );
    let err = VersionedBytesStoreSupplier::of_millis("s", 10, Some(0)).expect_err("must fail");
    assert!(
        err.to_string()
            .contains("segmentInterval cannot be zero or negative"),
        "{err}"
    );
    let err = Stores::persistent_versioned_key_value_store_with_segment_interval(
        "s",
        Duration::from_secs(1),
        Duration::ZERO,
    )
    .expect_err("must fail");
    assert!(
        err.to_string()
            .contains("segmentInterval cannot be zero or negative"),
        "{err}"
    );
    let err =
        Stores::persistent_versioned_key_value_store("s", Duration::MAX).expect_err("must fail");
    assert!(matches!(
        err,
        StreamsError::DurationTooLarge {
            what: "history retention",
            ..
        }
    ));
    // Kafka's default segment intervals (`defaultSegmentInterval`).
    for (history, segment) in [
        (0, 2_000),
        (60_000, 20_000),
        (60_001, 20_000),
        (300_000, 60_000),
        (300_001, 60_000),
        (3_600_000, 300_000),
        (3_600_001, 300_000),
        (86_400_000, 3_600_000),
    ] {
        let s = VersionedBytesStoreSupplier::of_millis("s", history, None).expect("valid");
        assert_eq!(s.segment_interval_ms(), segment, "{history}");
    }
}

#[test]
fn the_driver_getter_names_the_kind_of_a_store_asked_for_with_the_wrong_getter() {
    let f = Fixture::new();
    let err = f
        .driver
        .key_value_store::<String, String>(STORE_NAME)
        .expect_err("must fail");
    assert_eq!(
        err.to_string(),
        "store `myversionedrocks` is a versioned key-value store<String, String>, not the KeyValueStore<String, String> asked for; read it with `versioned_key_value_store::<String, String>(\"myversionedrocks\")`"
    );
    let err = f
        .driver
        .versioned_key_value_store::<String, i32>(STORE_NAME)
        .expect_err("must fail");
    assert!(matches!(err, StreamsError::WrongStoreType { .. }), "{err}");
}

// --- Kafka's `VersionedKeyValueStoreIntegrationTest` checker ---

/// The processor of `VersionedKeyValueStoreIntegrationTest`: puts each
/// record (the value "delete" deletes) and checks the store against what
/// it put, forwarding the number of failed checks.
struct ContentChecker {
    data: BTreeMap<i32, BTreeMap<i64, Option<String>>>,
}

impl Processor<i32, String, i32, i32> for ContentChecker {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, i32, i32>,
        r: Record<i32, String>,
    ) -> streams_core::Result<()> {
        let Some(key) = r.key else { return Ok(()) };
        let failed = {
            let mut store = ctx.versioned_key_value_store::<i32, String>("versioned-store")?;
            if r.value.as_deref() == Some("delete") {
                store.delete(&key, r.timestamp)?;
                self.data.entry(key).or_default().insert(r.timestamp, None);
            } else {
                store.put(key, r.value.clone(), r.timestamp)?;
                self.data
                    .entry(key)
                    .or_default()
                    .insert(r.timestamp, r.value.clone());
            }
            let mut failed = 0;
            for (k, versions) in &self.data {
                let matches =
                    |found: Option<VersionedRecord<String>>, v: &Option<String>, t: i64| match v {
                        None => found.is_none(),
                        Some(v) => found.is_some_and(|f| &f.value == v && f.timestamp == t),
                    };
                for (&t, v) in versions {
                    if !matches(store.get_as_of(k, t).expect("read"), v, t) {
                        failed += 1;
                    }
                }
                let (&t, v) = versions.last_key_value().expect("a version");
                if !matches(store.get(k).expect("read"), v, t) {
                    failed += 1;
                }
            }
            failed
        };
        ctx.forward(Record::new(Some(key), Some(failed), r.timestamp))
    }
}

#[test]
fn should_put_get_and_delete() -> TestResult {
    let supplier = Stores::persistent_versioned_key_value_store(
        "versioned-store",
        Duration::from_millis(3_600_000),
    )?;
    let mut topology = Topology::new();
    topology
        .add_source::<i32, String>("in", "input")?
        .add_processor(
            "checker",
            || ContentChecker {
                data: BTreeMap::new(),
            },
            &["in"],
        )?
        .add_state_store(
            Stores::versioned_key_value_store_builder(supplier, I32Serde, StringSerde),
            &["checker"],
        )?
        .add_sink::<i32, i32>("out", "output", &["checker"])?;
    let driver = TopologyTestDriver::new(topology)?;
    let input = driver.create_input_topic("input", I32Serde, StringSerde);
    let base = 1_000;
    let pipe = |ts: i64, values: [Option<&str>; 3]| {
        for (key, v) in (1..).zip(values) {
            input.pipe_record(TestRecord::new(Some(key), v.map(String::from)).at(ts));
        }
    };
    pipe(base, [Some("a0"), Some("b0"), None]);
    pipe(base + 5, [Some("a5"), None, Some("c5")]);
    pipe(base + 2, [Some("a2"), Some("b2"), None]); // out-of-order data
    pipe(base + 5, [Some("a5_new"), Some("b5"), None]); // replace existing records
    pipe(base + 7, [Some("delete"), Some("delete"), Some("delete")]); // delete
    let output = driver.create_output_topic("output", I32Serde, I32Serde);
    let failed: Vec<Option<i32>> = output.read_values_to_list();
    assert_eq!(failed, [Some(0); 15]);
    Ok(())
}

// --- a property test against a naive model ---

/// The naive model: every version of every key, tombstones too, kept
/// forever, and Kafka's rules applied on reads.
#[derive(Default)]
struct Model {
    versions: BTreeMap<i32, BTreeMap<i64, Option<i64>>>,
    stream_time: i64,
    history: i64,
}

impl Model {
    fn expired(&self, ts: i64) -> bool {
        ts < self.stream_time - self.history
    }

    fn put(&mut self, key: i32, value: Option<i64>, ts: i64) -> i64 {
        if self.expired(ts) {
            return i64::MIN;
        }
        self.stream_time = self.stream_time.max(ts);
        let versions = self.versions.entry(key).or_default();
        let next = versions.range(ts + 1..).next().map(|(&t, _)| t);
        versions.insert(ts, value);
        next.unwrap_or(-1)
    }

    fn get(&self, key: i32) -> Option<(i64, i64)> {
        let (&t, v) = self.versions.get(&key)?.last_key_value()?;
        v.map(|v| (v, t))
    }

    fn get_as_of(&self, key: i32, as_of: i64) -> Option<(i64, i64, Option<i64>)> {
        let versions = self.versions.get(&key)?;
        if self.expired(as_of) {
            let (&t, v) = versions.last_key_value()?;
            return v.filter(|_| t <= as_of).map(|v| (v, t, None));
        }
        let (&t, v) = versions.range(..=as_of).next_back()?;
        let next = versions.range(t + 1..).next().map(|(&n, _)| n);
        v.map(|v| (v, t, next))
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(i32, Option<i64>, i64),
    Delete(i32, i64),
    Get(i32),
    GetAsOf(i32, i64),
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0..5_i32;
    let ts = 0..400_i64;
    prop_oneof![
        4 => (key.clone(), proptest::option::weighted(0.8, 0..100_i64), ts.clone())
            .prop_map(|(k, v, t)| Op::Put(k, v, t)),
        1 => (key.clone(), ts.clone()).prop_map(|(k, t)| Op::Delete(k, t)),
        1 => key.clone().prop_map(Op::Get),
        2 => (key, ts).prop_map(|(k, t)| Op::GetAsOf(k, t)),
    ]
}

fn as_model(r: Option<VersionedRecord<i64>>) -> Option<(i64, i64, Option<i64>)> {
    r.map(|r| (r.value, r.timestamp, r.valid_to))
}

proptest! {
    /// Whatever the puts, deletes and reads, with any history retention
    /// and segment interval, the store answers as the model, and a store
    /// restored from its changelog answers the same.
    #[test]
    fn the_store_behaves_as_the_model(
        history in 0..120_i64,
        segment in 1..50_i64,
        ops in proptest::collection::vec(op(), 0..150),
    ) {
        let supplier = VersionedBytesStoreSupplier::of_millis("m", history, Some(segment)).expect("valid");
        let mut boxed = Stores::versioned_key_value_store_builder(supplier, I32Serde, I64Serde)
            .with_logging_disabled()
            .build(&StreamsConfig::default())
            .expect("build");
        let store = boxed.as_any_mut().downcast_mut::<VersionedKeyValueStore<i32, i64>>().expect("versioned");
        let mut model = Model { history, stream_time: -1, ..Model::default() };
        let mut changelog = Vec::new();
        for op in ops {
            match op {
                Op::Put(k, v, t) => {
                    changelog.push(Record::new(Some(k.to_be_bytes().to_vec()), v.map(|v| v.to_be_bytes().to_vec()), t));
                    prop_assert_eq!(store.put(k, v, t).expect("put"), model.put(k, v, t));
                }
                Op::Delete(k, t) => {
                    changelog.push(Record::new(Some(k.to_be_bytes().to_vec()), None, t));
                    let expected = if model.expired(t) { None } else { model.get_as_of(k, t) };
                    // Kafka's delete returns what `get(key, timestamp)` saw.
                    prop_assert_eq!(as_model(store.delete(&k, t).expect("delete")), expected);
                    model.put(k, None, t);
                }
                Op::Get(k) => {
                    prop_assert_eq!(store.get(&k).expect("read").map(|r| (r.value, r.timestamp)), model.get(k));
                }
                Op::GetAsOf(k, t) => {
                    prop_assert_eq!(as_model(store.get_as_of(&k, t).expect("read")), model.get_as_of(k, t));
                }
            }
            prop_assert_eq!(store.observed_stream_time(), model.stream_time);
        }
        let mut restored = Stores::versioned_key_value_store_builder(
            VersionedBytesStoreSupplier::of_millis("m", history, Some(segment)).expect("valid"),
            I32Serde,
            I64Serde,
        )
        .build(&StreamsConfig::default())
        .expect("build");
        let restored = restored.as_any_mut().downcast_mut::<VersionedKeyValueStore<i32, i64>>().expect("versioned");
        restored.restore(&changelog).expect("restore");
        for k in 0..5 {
            prop_assert_eq!(restored.get(&k).expect("read"), store.get(&k).expect("read"));
            for t in (-1..420).step_by(7) {
                prop_assert_eq!(restored.get_as_of(&k, t).expect("read"), store.get_as_of(&k, t).expect("read"), "{} as of {}", k, t);
            }
        }
    }
}
