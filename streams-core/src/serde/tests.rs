//! Tests of the serdes: round-trip properties, the exact bytes Kafka's
//! serializers write, the exact error messages, and Avro schema evolution.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use apache_avro::Schema;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use super::*;

const TOPIC: &str = "orders";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Status {
    New,
    Paid,
    Shipped,
}

/// A record with a field of each common Avro type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: i64,
    qty: i32,
    item: String,
    price: f64,
    paid: bool,
    note: Option<String>,
    tags: Vec<String>,
    status: Status,
    attrs: BTreeMap<String, i64>,
}

const ORDER_SCHEMA: &str = r#"{
    "type": "record",
    "name": "Order",
    "namespace": "test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "qty", "type": "int"},
        {"name": "item", "type": "string"},
        {"name": "price", "type": "double"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": null},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["New", "Paid", "Shipped"]}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}}
    ]
}"#;

/// A struct for JSON, with the shapes JSON has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Event {
    id: u64,
    name: String,
    score: f64,
    flag: bool,
    parent: Option<i32>,
    values: Vec<i16>,
    labels: BTreeMap<String, String>,
    status: Status,
}

const USER_V1: &str = r#"{"type": "record", "name": "User", "namespace": "test", "fields": [
    {"name": "name", "type": "string"},
    {"name": "visits", "type": "int"}
]}"#;

const USER_V2: &str = r#"{"type": "record", "name": "User", "namespace": "test", "fields": [
    {"name": "name", "type": "string"},
    {"name": "visits", "type": "long"},
    {"name": "email", "type": ["null", "string"], "default": null},
    {"name": "level", "type": "int", "default": 1}
]}"#;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct UserV1 {
    name: String,
    visits: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct UserV2 {
    name: String,
    visits: i64,
    email: Option<String>,
    level: i32,
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![Just(Status::New), Just(Status::Paid), Just(Status::Shipped)]
}

fn order() -> impl Strategy<Value = Order> {
    (
        (any::<i64>(), any::<i32>(), any::<String>(), any::<f64>()),
        (
            any::<bool>(),
            proptest::option::of(any::<String>()),
            proptest::collection::vec(any::<String>(), 0..4),
            status(),
            proptest::collection::btree_map(any::<String>(), any::<i64>(), 0..4),
        ),
    )
        .prop_map(
            |((id, qty, item, price), (paid, note, tags, status, attrs))| Order {
                id,
                qty,
                item,
                price,
                paid,
                note,
                tags,
                status,
                attrs,
            },
        )
}

/// Floats that `serde_json` reads back exactly without its
/// `float_roundtrip` feature: by default it parses some long decimals one
/// unit in the last place off (5.7531486848721426e91 reads back as
/// 5.753148684872142e91), where Java's Jackson is exact.
fn json_float() -> impl Strategy<Value = f64> {
    (-(1i32 << 24)..(1i32 << 24), 0..=8i32).prop_map(|(m, e)| f64::from(m) / f64::from(1 << e))
}

fn event() -> impl Strategy<Value = Event> {
    let finite = json_float();
    (
        (any::<u64>(), any::<String>(), finite, any::<bool>()),
        (
            proptest::option::of(any::<i32>()),
            proptest::collection::vec(any::<i16>(), 0..6),
            proptest::collection::btree_map(any::<String>(), any::<String>(), 0..4),
            status(),
        ),
    )
        .prop_map(
            |((id, name, score, flag), (parent, values, labels, status))| Event {
                id,
                name,
                score,
                flag,
                parent,
                values,
                labels,
                status,
            },
        )
}

/// Equal, with the price compared by its bits (so NaN equals itself).
fn assert_same_order(actual: &Order, expected: &Order) {
    assert_eq!(actual.price.to_bits(), expected.price.to_bits());
    assert_eq!(
        Order {
            price: 0.0,
            ..actual.clone()
        },
        Order {
            price: 0.0,
            ..expected.clone()
        }
    );
}

fn order_serde() -> AvroSerde<Order> {
    AvroSerde::parse(ORDER_SCHEMA).unwrap()
}

fn sample_order() -> Order {
    Order {
        id: 1,
        qty: 2,
        item: "tea".into(),
        price: 3.5,
        paid: true,
        note: Some("hot".into()),
        tags: vec!["a".into()],
        status: Status::Paid,
        attrs: BTreeMap::from([("k".into(), 9)]),
    }
}

fn err_text<T: std::fmt::Debug>(result: Result<T, SerdeError>) -> String {
    result.unwrap_err().to_string()
}

fn assert_send_sync<T: Send + Sync + 'static>() {}

// ---------------------------------------------------------------------------
// Round-trip properties.
// ---------------------------------------------------------------------------

proptest! {
    #[test]
    fn string_round_trips(s in any::<String>()) {
        let bytes = StringSerde.serialize(TOPIC, &s).unwrap();
        prop_assert_eq!(&bytes, s.as_bytes());
        prop_assert_eq!(StringSerde.deserialize(TOPIC, &bytes).unwrap(), s);
    }

    #[test]
    fn string_reads_exactly_the_utf8_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
        let result = StringSerde.deserialize(TOPIC, &bytes);
        prop_assert_eq!(result.ok(), String::from_utf8(bytes).ok());
    }

    #[test]
    fn string_owned_forms_match_the_borrowed_ones(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
        let borrowed = StringSerde.deserialize(TOPIC, &bytes).map_err(|e| e.to_string());
        let owned = StringSerde.deserialize_owned(TOPIC, bytes.clone()).map_err(|e| e.to_string());
        prop_assert_eq!(&owned, &borrowed);
        if let Ok(s) = owned {
            prop_assert_eq!(StringSerde.serialize_owned(TOPIC, s.clone()).unwrap(), StringSerde.serialize(TOPIC, &s).unwrap());
        }
        let shared: SerdeRef<String> = std::sync::Arc::new(StringSerde);
        let via_arc = shared.deserialize_owned(TOPIC, bytes).map_err(|e| e.to_string());
        prop_assert_eq!(via_arc, borrowed);
    }

    #[test]
    fn owned_forms_default_to_the_borrowed_ones(n in any::<i64>(), b in proptest::collection::vec(any::<u8>(), 0..16)) {
        prop_assert_eq!(I64Serde.serialize_owned(TOPIC, n).unwrap(), I64Serde.serialize(TOPIC, &n).unwrap());
        prop_assert_eq!(
            I64Serde.deserialize_owned(TOPIC, b.clone()).map_err(|e| e.to_string()),
            I64Serde.deserialize(TOPIC, &b).map_err(|e| e.to_string())
        );
        prop_assert_eq!(BytesSerde.serialize_owned(TOPIC, b.clone()).unwrap(), b.clone());
        prop_assert_eq!(BytesSerde.deserialize_owned(TOPIC, b.clone()).unwrap(), b);
    }

    #[test]
    fn bytes_round_trip(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let bytes = BytesSerde.serialize(TOPIC, &b).unwrap();
        prop_assert_eq!(&bytes, &b);
        prop_assert_eq!(BytesSerde.deserialize(TOPIC, &bytes).unwrap(), b);
    }

    #[test]
    fn i32_round_trips(n in any::<i32>()) {
        let bytes = I32Serde.serialize(TOPIC, &n).unwrap();
        prop_assert_eq!(&bytes, &n.to_be_bytes().to_vec());
        prop_assert_eq!(I32Serde.deserialize(TOPIC, &bytes).unwrap(), n);
    }

    #[test]
    fn i64_round_trips(n in any::<i64>()) {
        let bytes = I64Serde.serialize(TOPIC, &n).unwrap();
        prop_assert_eq!(&bytes, &n.to_be_bytes().to_vec());
        prop_assert_eq!(I64Serde.deserialize(TOPIC, &bytes).unwrap(), n);
    }

    #[test]
    fn f64_round_trips_bit_for_bit(x in any::<f64>()) {
        let bytes = F64Serde.serialize(TOPIC, &x).unwrap();
        prop_assert_eq!(&bytes, &x.to_bits().to_be_bytes().to_vec());
        prop_assert_eq!(F64Serde.deserialize(TOPIC, &bytes).unwrap().to_bits(), x.to_bits());
    }

    #[test]
    fn f64_round_trips_any_bits(bits in any::<u64>()) {
        // Every bit pattern, including NaNs with payloads, survives.
        let x = f64::from_bits(bits);
        let bytes = F64Serde.serialize(TOPIC, &x).unwrap();
        prop_assert_eq!(F64Serde.deserialize(TOPIC, &bytes).unwrap().to_bits(), bits);
    }

    #[test]
    fn numbers_reject_every_other_length(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
        prop_assert_eq!(I32Serde.deserialize(TOPIC, &bytes).is_ok(), bytes.len() == 4);
        prop_assert_eq!(I64Serde.deserialize(TOPIC, &bytes).is_ok(), bytes.len() == 8);
        prop_assert_eq!(F64Serde.deserialize(TOPIC, &bytes).is_ok(), bytes.len() == 8);
        prop_assert_eq!(UnitSerde.deserialize(TOPIC, &bytes).is_ok(), bytes.is_empty());
    }

    #[test]
    fn json_round_trips(e in event()) {
        let serde = JsonSerde::<Event>::new();
        let bytes = serde.serialize(TOPIC, &e).unwrap();
        prop_assert_eq!(serde.deserialize(TOPIC, &bytes).unwrap(), e);
    }

    #[test]
    fn json_never_panics_on_bad_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = JsonSerde::<Event>::new().deserialize(TOPIC, &bytes);
    }

    #[test]
    fn avro_round_trips(o in order()) {
        let serde = order_serde();
        let bytes = serde.serialize(TOPIC, &o).unwrap();
        assert_same_order(&serde.deserialize(TOPIC, &bytes).unwrap(), &o);
    }

    #[test]
    fn avro_never_panics_on_bad_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = order_serde().deserialize(TOPIC, &bytes);
    }

    #[test]
    fn avro_truncated_data_is_an_error(o in order(), cut in any::<prop::sample::Index>()) {
        let serde = order_serde();
        let bytes = serde.serialize(TOPIC, &o).unwrap();
        let cut = cut.index(bytes.len());
        let message = err_text(serde.deserialize(TOPIC, &bytes[..cut]));
        prop_assert!(message.starts_with("cannot read Avro data with schema `test.Order`: "), "{}", message);
    }

    #[test]
    fn confluent_round_trips(o in order(), topic in "[a-z][a-z0-9._-]{0,20}", key in any::<bool>()) {
        let registry = MockSchemaRegistry::new();
        let schema = Schema::parse_str(ORDER_SCHEMA).unwrap();
        let serde = if key {
            ConfluentAvroSerde::<Order>::key(&registry, schema)
        } else {
            ConfluentAvroSerde::<Order>::value(&registry, schema)
        };
        let bytes = serde.serialize(&topic, &o).unwrap();
        prop_assert_eq!(&bytes[..5], &[0, 0, 0, 0, 1]);
        // After the header comes a bare datum, as the raw serde writes it
        // (up to the order of map entries, which apache-avro does not fix).
        assert_same_order(&order_serde().deserialize(&topic, &bytes[5..]).unwrap(), &o);
        if o.attrs.len() < 2 {
            let raw = order_serde().serialize(&topic, &o).unwrap();
            prop_assert_eq!(&bytes[5..], raw.as_slice());
        }
        let subject = format!("{topic}-{}", if key { "key" } else { "value" });
        prop_assert_eq!(registry.subjects(), vec![subject]);
        assert_same_order(&serde.deserialize(&topic, &bytes).unwrap(), &o);
    }

    #[test]
    fn confluent_never_panics_on_bad_bytes(tail in proptest::collection::vec(any::<u8>(), 0..64)) {
        let registry = MockSchemaRegistry::new();
        let serde = ConfluentAvroSerde::<Order>::value_json(&registry, ORDER_SCHEMA).unwrap();
        serde.serialize(TOPIC, &sample_order()).unwrap();
        let mut bytes = vec![0, 0, 0, 0, 1];
        bytes.extend_from_slice(&tail);
        let _ = serde.deserialize(TOPIC, &bytes);
        let _ = serde.deserialize(TOPIC, &tail);
    }
}

#[test]
fn unit_round_trips() {
    let bytes = UnitSerde.serialize(TOPIC, &()).unwrap();
    assert!(bytes.is_empty());
    UnitSerde.deserialize(TOPIC, &bytes).unwrap();
}

#[test]
fn serdes_are_send_and_sync_for_any_type() {
    assert_send_sync::<JsonSerde<std::rc::Rc<u8>>>();
    assert_send_sync::<AvroSerde<std::rc::Rc<u8>>>();
    assert_send_sync::<ConfluentAvroSerde<std::rc::Rc<u8>>>();
    assert_send_sync::<MockSchemaRegistry>();
    let _: SerdeRef<Order> = std::sync::Arc::new(order_serde());
    let _: SerdeRef<Event> = std::sync::Arc::new(JsonSerde::<Event>::default());
}

// ---------------------------------------------------------------------------
// The exact bytes Kafka's serializers write.
// ---------------------------------------------------------------------------

#[test]
fn i32_bytes_are_big_endian() {
    assert_eq!(
        I32Serde.serialize(TOPIC, &-1).unwrap(),
        [0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(I32Serde.serialize(TOPIC, &1).unwrap(), [0, 0, 0, 1]);
    assert_eq!(
        I32Serde.serialize(TOPIC, &0x0102_0304).unwrap(),
        [1, 2, 3, 4]
    );
    assert_eq!(
        I32Serde.deserialize(TOPIC, &[0x80, 0, 0, 0]).unwrap(),
        i32::MIN
    );
}

#[test]
fn i64_bytes_are_big_endian() {
    assert_eq!(
        I64Serde.serialize(TOPIC, &i64::MIN).unwrap(),
        [0x80, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        I64Serde.serialize(TOPIC, &i64::MAX).unwrap(),
        [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        I64Serde.serialize(TOPIC, &1).unwrap(),
        [0, 0, 0, 0, 0, 0, 0, 1]
    );
}

#[test]
fn f64_bytes_are_ieee_754_big_endian() {
    assert_eq!(
        F64Serde.serialize(TOPIC, &1.0).unwrap(),
        [0x3f, 0xf0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        F64Serde.serialize(TOPIC, &-2.5).unwrap(),
        [0xc0, 0x04, 0, 0, 0, 0, 0, 0]
    );
    // Java's Double.doubleToLongBits(Double.NaN) is 0x7ff8000000000000, and
    // so are the bits of Rust's f64::NAN.
    assert_eq!(f64::NAN.to_bits(), 0x7ff8_0000_0000_0000);
    assert_eq!(
        F64Serde.serialize(TOPIC, &f64::NAN).unwrap(),
        [0x7f, 0xf8, 0, 0, 0, 0, 0, 0]
    );
    assert!(
        F64Serde
            .deserialize(TOPIC, &[0x7f, 0xf8, 0, 0, 0, 0, 0, 0])
            .unwrap()
            .is_nan()
    );
    assert_eq!(
        F64Serde.serialize(TOPIC, &f64::NEG_INFINITY).unwrap(),
        [0xff, 0xf0, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn string_bytes_are_utf8() {
    assert!(
        StringSerde
            .serialize(TOPIC, &String::new())
            .unwrap()
            .is_empty()
    );
    assert_eq!(StringSerde.deserialize(TOPIC, &[]).unwrap(), "");
    assert_eq!(
        StringSerde.serialize(TOPIC, &"€".to_owned()).unwrap(),
        [0xe2, 0x82, 0xac]
    );
}

#[test]
fn json_bytes_are_compact() {
    let serde = JsonSerde::<BTreeMap<String, Vec<Option<i32>>>>::new();
    let value = BTreeMap::from([("a".to_owned(), vec![Some(1), None])]);
    assert_eq!(
        serde.serialize(TOPIC, &value).unwrap(),
        br#"{"a":[1,null]}"#
    );
    // Whitespace is fine when reading.
    assert_eq!(
        serde
            .deserialize(TOPIC, b" { \"a\" : [ 1 , null ] } ")
            .unwrap(),
        value
    );
}

#[test]
fn avro_bytes_are_the_bare_datum() {
    let serde = AvroSerde::<UserV1>::parse(USER_V1).unwrap();
    let user = UserV1 {
        name: "ab".into(),
        visits: -3,
    };
    // String: length 2 as zig-zag varint (4), then the bytes; int -3 zig-zags to 5.
    assert_eq!(serde.serialize(TOPIC, &user).unwrap(), [4, b'a', b'b', 5]);
    let long = AvroSerde::<i64>::parse(r#""long""#).unwrap();
    assert_eq!(long.serialize(TOPIC, &64).unwrap(), [0x80, 0x01]);
    assert_eq!(
        long.serialize(TOPIC, &i64::MIN).unwrap(),
        [0xff; 9].into_iter().chain([0x01]).collect::<Vec<_>>()
    );
}

#[test]
fn confluent_bytes_start_with_magic_byte_and_schema_id() {
    let registry = MockSchemaRegistry::new();
    let serde = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    let user = UserV1 {
        name: "ab".into(),
        visits: -3,
    };
    let bytes = serde.serialize("users", &user).unwrap();
    assert_eq!(bytes, [0, 0, 0, 0, 1, 4, b'a', b'b', 5]);
    assert_eq!(registry.subjects(), ["users-value"]);
    assert_eq!(registry.latest("users-value").unwrap().0, 1);

    // A second schema gets id 2 and is written big-endian.
    let other = ConfluentAvroSerde::<String>::key_json(registry.clone(), r#""string""#).unwrap();
    assert_eq!(
        other.serialize("users", &"x".to_owned()).unwrap(),
        [0, 0, 0, 0, 2, 2, b'x']
    );
    assert_eq!(registry.subjects(), ["users-key", "users-value"]);
    assert_eq!(other.subject("users"), "users-key");
    assert_eq!(serde.subject("users"), "users-value");
    assert!(other.is_key());
    assert!(!serde.is_key());

    // Ids above 255 use all four bytes.
    let registry = MockSchemaRegistry::new();
    for n in 0..300 {
        let schema = Schema::parse_str(&format!(
            r#"{{"type": "fixed", "name": "F{n}", "size": 1}}"#
        ))
        .unwrap();
        assert_eq!(registry.register("filler", &schema).unwrap(), n + 1);
    }
    let serde = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    let bytes = serde.serialize("users", &user).unwrap();
    assert_eq!(bytes[..5], [0, 0, 0, 0x01, 0x2d]); // 301
    assert_eq!(serde.deserialize("users", &bytes).unwrap(), user);
}

// ---------------------------------------------------------------------------
// The registry.
// ---------------------------------------------------------------------------

#[test]
fn registry_assigns_global_ids_and_per_subject_versions() {
    let registry = MockSchemaRegistry::new();
    let v1 = Schema::parse_str(USER_V1).unwrap();
    let v2 = Schema::parse_str(USER_V2).unwrap();
    assert_eq!(registry.subjects(), Vec::<String>::new());
    assert_eq!(registry.latest("users-value"), None);
    assert_eq!(registry.versions("users-value"), Vec::<u32>::new());

    assert_eq!(registry.register("users-value", &v1).unwrap(), 1);
    assert_eq!(registry.register("users-value", &v1).unwrap(), 1);
    assert_eq!(registry.versions("users-value"), [1]);
    assert_eq!(registry.register("users-value", &v2).unwrap(), 2);
    assert_eq!(registry.versions("users-value"), [1, 2]);
    // Registering an older schema again returns its id, with no new version.
    assert_eq!(registry.register("users-value", &v1).unwrap(), 1);
    assert_eq!(registry.versions("users-value"), [1, 2]);
    assert_eq!(registry.latest("users-value"), Some((2, v2.clone())));
    assert_eq!(registry.version("users-value", 1), Some((1, v1.clone())));
    assert_eq!(registry.version("users-value", 0), None);
    assert_eq!(registry.version("users-value", 3), None);

    // The same schema under another subject keeps its global id.
    assert_eq!(registry.register("archive-value", &v2).unwrap(), 2);
    assert_eq!(registry.versions("archive-value"), [1]);
    assert_eq!(registry.subjects(), ["archive-value", "users-value"]);
    assert_eq!(registry.id("archive-value", &v2), Some(2));
    assert_eq!(registry.id("archive-value", &v1), None);

    assert_eq!(registry.schema_by_id(1), Some(v1));
    assert_eq!(registry.schema_by_id(2), Some(v2));
    assert_eq!(registry.schema_by_id(0), None);
    assert_eq!(registry.schema_by_id(3), None);
    assert_eq!(registry.schema_by_id(u32::MAX), None);
}

#[test]
fn registry_ignores_schema_whitespace_but_not_defaults() {
    let registry = MockSchemaRegistry::new();
    let compact = Schema::parse_str(
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":1}]}"#,
    )
    .unwrap();
    let spaced = Schema::parse_str("{ \"name\": \"R\",\n \"type\": \"record\", \"fields\": [ {\"type\": \"int\", \"name\": \"a\", \"default\": 1} ] }").unwrap();
    let other_default = Schema::parse_str(
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int","default":2}]}"#,
    )
    .unwrap();
    assert_eq!(registry.register("s", &compact).unwrap(), 1);
    assert_eq!(registry.register("s", &spaced).unwrap(), 1);
    assert_eq!(registry.register("s", &other_default).unwrap(), 2);
}

#[test]
fn registry_clones_share_state_across_threads() {
    let registry = MockSchemaRegistry::new();
    let handles: Vec<_> = (0..8)
        .map(|n| {
            let registry = registry.clone();
            std::thread::spawn(move || {
                let schema = Schema::parse_str(&format!(
                    r#"{{"type": "enum", "name": "E{}", "symbols": ["A"]}}"#,
                    n % 4
                ))
                .unwrap();
                registry.register(&format!("t{n}-value"), &schema).unwrap()
            })
        })
        .collect();
    let mut ids: Vec<u32> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(registry.subjects().len(), 8);
}

#[test]
fn registry_rejects_an_empty_subject() {
    let registry = MockSchemaRegistry::new();
    let schema = Schema::parse_str(r#""int""#).unwrap();
    assert_eq!(
        err_text(registry.register("", &schema)),
        "a schema registry subject must not be empty"
    );
}

#[test]
fn confluent_without_auto_registration_needs_a_registered_schema() {
    let registry = MockSchemaRegistry::new();
    let serde = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1)
        .unwrap()
        .auto_register(false);
    let user = UserV1 {
        name: "a".into(),
        visits: 1,
    };
    assert_eq!(
        err_text(serde.serialize("users", &user)),
        "schema `test.User` is not registered under subject `users-value`, and auto-registration is off; register it first"
    );
    assert!(registry.subjects().is_empty());
    registry
        .register("other", &Schema::parse_str(r#""string""#).unwrap())
        .unwrap();
    registry.register("users-value", serde.schema()).unwrap();
    assert_eq!(
        serde.serialize("users", &user).unwrap()[..5],
        [0, 0, 0, 0, 2]
    );
}

// ---------------------------------------------------------------------------
// Error messages.
// ---------------------------------------------------------------------------

#[test]
fn string_error_names_bad_utf8() {
    assert_eq!(
        err_text(StringSerde.deserialize(TOPIC, &[b'a', 0xff])),
        "bytes are not valid UTF-8 (invalid utf-8 sequence of 1 bytes from index 1); StringSerde reads UTF-8 text only"
    );
}

#[test]
fn number_errors_name_the_wrong_length() {
    assert_eq!(
        err_text(I32Serde.deserialize(TOPIC, &[1, 2, 3])),
        "size of data received by I32Serde is 3, not 4"
    );
    assert_eq!(
        err_text(I64Serde.deserialize(TOPIC, &[0; 9])),
        "size of data received by I64Serde is 9, not 8"
    );
    assert_eq!(
        err_text(F64Serde.deserialize(TOPIC, &[])),
        "size of data received by F64Serde is 0, not 8"
    );
    assert_eq!(
        err_text(UnitSerde.deserialize(TOPIC, &[0])),
        "UnitSerde expects empty data, but got 1 bytes"
    );
}

#[test]
fn json_errors_name_type_problem_and_position() {
    let serde = JsonSerde::<UserV1>::new();
    let ty = std::any::type_name::<UserV1>();
    assert_eq!(
        err_text(serde.deserialize(TOPIC, b"{\"name\": \"a\",")),
        format!("cannot read JSON for type `{ty}`: EOF while parsing a value at line 1 column 13")
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, br#"{"name": "a"}"#)),
        format!("cannot read JSON for type `{ty}`: missing field `visits` at line 1 column 13")
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, b"{\"name\": \"a\",\n\"visits\": \"many\"}")),
        format!(
            "cannot read JSON for type `{ty}`: invalid type: string \"many\", expected i32 at line 2 column 16"
        )
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, b"")),
        format!("cannot read JSON for type `{ty}`: EOF while parsing a value at line 1 column 0")
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, b"nope")),
        format!("cannot read JSON for type `{ty}`: expected ident at line 1 column 2")
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, br#"{"name": "a", "visits": 1} x"#)),
        format!("cannot read JSON for type `{ty}`: trailing characters at line 1 column 28")
    );
}

#[test]
fn json_serialize_error_names_the_type() {
    let serde = JsonSerde::<BTreeMap<Vec<u8>, i32>>::new();
    let value = BTreeMap::from([(vec![1], 1)]);
    assert_eq!(
        err_text(serde.serialize(TOPIC, &value)),
        "cannot write JSON for type `alloc::collections::btree::map::BTreeMap<alloc::vec::Vec<u8>, i32>`: key must be a string"
    );
}

#[test]
fn confluent_errors_name_magic_byte_length_and_schema_id() {
    let registry = MockSchemaRegistry::new();
    let serde = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &[7, 0, 0, 0, 1, 2])),
        "unknown magic byte 7; expected 0 (Confluent wire format)"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, b"hello")),
        "unknown magic byte 104; expected 0 (Confluent wire format)"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &[0, 0, 0])),
        "Confluent Avro data is 3 bytes long, but needs at least 5: a magic byte and a 4-byte schema id"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &[])),
        "Confluent Avro data is 0 bytes long, but needs at least 5: a magic byte and a 4-byte schema id"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &[0, 0, 0, 0, 42, 2, b'a', 2])),
        "schema id 42 is not registered in the schema registry"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &[0, 0, 0, 0, 0])),
        "schema id 0 is not registered in the schema registry"
    );
}

#[test]
fn truncated_avro_is_an_error() {
    let raw = AvroSerde::<UserV1>::parse(USER_V1).unwrap();
    // The name says 2 bytes, but only 1 follows. (apache-avro alone reads
    // a string cut short as a null.)
    assert_eq!(
        err_text(raw.deserialize(TOPIC, &[4, b'a'])),
        "cannot read Avro data with schema `test.User`: the data ends after 2 bytes, in the middle of a value; \
         the data is truncated or was not written with this schema"
    );
    // The int is missing.
    assert_eq!(
        err_text(raw.deserialize(TOPIC, &[2, b'a'])),
        "cannot read Avro data with schema `test.User`: the data ends after 2 bytes, in the middle of a value; \
         the data is truncated or was not written with this schema"
    );
    // A string that is the last field, cut short.
    let name_last = AvroSerde::<UserV1>::parse(
        r#"{"type": "record", "name": "User", "fields": [
            {"name": "visits", "type": "int"}, {"name": "name", "type": "string"}]}"#,
    )
    .unwrap();
    assert_eq!(
        name_last.deserialize(TOPIC, &[2, 4, b'a', b'b']).unwrap(),
        UserV1 {
            name: "ab".into(),
            visits: 1
        }
    );
    assert_eq!(
        err_text(name_last.deserialize(TOPIC, &[2, 4, b'a'])),
        "cannot read Avro data with schema `User`: the data ends after 3 bytes, in the middle of a value; \
         the data is truncated or was not written with this schema"
    );

    let registry = MockSchemaRegistry::new();
    let serde = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    let bytes = serde
        .serialize(
            TOPIC,
            &UserV1 {
                name: "a".into(),
                visits: 1,
            },
        )
        .unwrap();
    assert_eq!(bytes, [0, 0, 0, 0, 1, 2, b'a', 2]);
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &bytes[..bytes.len() - 1])),
        "cannot read Avro data with schema id 1 (`test.User`): the data ends after 2 bytes, in the middle of a value; \
         the data is truncated or was not written with this schema"
    );
    assert_eq!(
        err_text(serde.deserialize(TOPIC, &bytes[..5])),
        "cannot read Avro data with schema id 1 (`test.User`): the data ends after 0 bytes, in the middle of a value; \
         the data is truncated or was not written with this schema"
    );
}

#[test]
fn corrupt_avro_is_an_error() {
    let status = AvroSerde::<Status>::parse(
        r#"{"type": "enum", "name": "Status", "symbols": ["New", "Paid", "Shipped"]}"#,
    )
    .unwrap();
    assert_eq!(status.serialize(TOPIC, &Status::Shipped).unwrap(), [4]);
    // Index 9 of an enum of 3 symbols.
    let message = err_text(status.deserialize(TOPIC, &[18]));
    assert!(
        message.starts_with("cannot read Avro data with schema `Status`: "),
        "{message}"
    );
    assert!(
        message.ends_with("; the data is corrupt or was not written with this schema"),
        "{message}"
    );
    // A string that is not UTF-8.
    let string = AvroSerde::<String>::parse(r#""string""#).unwrap();
    let message = err_text(string.deserialize(TOPIC, &[2, 0xff]));
    assert!(
        message.starts_with("cannot read Avro data with schema \"string\": "),
        "{message}"
    );
    // A negative length.
    let message = err_text(string.deserialize(TOPIC, &[1]));
    assert!(
        message.starts_with("cannot read Avro data with schema \"string\": "),
        "{message}"
    );
}

#[test]
fn left_over_avro_bytes_are_an_error() {
    let raw = AvroSerde::<UserV1>::parse(USER_V1).unwrap();
    assert_eq!(
        err_text(raw.deserialize(TOPIC, &[2, b'a', 2, 0, 0])),
        "2 of 5 bytes are left over after the Avro datum; the data was not written with schema `test.User`"
    );
}

#[test]
fn avro_values_that_do_not_fit_the_schema_are_errors() {
    let ty = std::any::type_name::<UserV1>();
    let as_long = AvroSerde::<String>::parse(r#""long""#).unwrap();
    let message = err_text(as_long.serialize(TOPIC, &"x".to_owned()));
    assert!(
        message.starts_with(
            "a value of type `alloc::string::String` does not match the Avro schema \"long\": "
        ),
        "{message}"
    );

    let missing_field = AvroSerde::<UserV1>::parse(
        r#"{"type": "record", "name": "User", "fields": [
            {"name": "name", "type": "string"},
            {"name": "visits", "type": "int"},
            {"name": "extra", "type": "int"}]}"#,
    )
    .unwrap();
    let message = err_text(missing_field.serialize(
        TOPIC,
        &UserV1 {
            name: "a".into(),
            visits: 1,
        },
    ));
    assert!(
        message.starts_with(&format!(
            "a value of type `{ty}` does not match the Avro schema `User`: "
        )),
        "{message}"
    );

    let unsigned = AvroSerde::<u64>::parse(r#""long""#).unwrap();
    assert_eq!(
        err_text(unsigned.serialize(TOPIC, &u64::MAX)),
        "cannot convert a value of type `u64` to Avro: Failed to serialize value into Avro value: u64 is too large"
    );

    // Data of the right schema but the wrong Rust type.
    let raw = AvroSerde::<UserV1>::parse(
        r#"{"type": "record", "name": "User", "fields": [
        {"name": "name", "type": "string"}]}"#,
    )
    .unwrap();
    let message = err_text(raw.deserialize(TOPIC, &[2, b'a']));
    assert!(
        message.starts_with(&format!(
            "cannot convert Avro data read with schema `User` to type `{ty}`: "
        )),
        "{message}"
    );
}

#[test]
fn longs_too_big_for_an_int_are_errors_not_truncated() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Wide {
        n: i64,
        items: Vec<Option<i64>>,
    }
    let serde = AvroSerde::<Wide>::parse(
        r#"{"type": "record", "name": "Wide", "fields": [
            {"name": "n", "type": "int"},
            {"name": "items", "type": {"type": "array", "items": ["null", "int"]}}]}"#,
    )
    .unwrap();
    let ty = std::any::type_name::<Wide>();
    let fits = Wide {
        n: -5,
        items: vec![None, Some(i64::from(i32::MAX))],
    };
    assert_eq!(
        serde
            .deserialize(TOPIC, &serde.serialize(TOPIC, &fits).unwrap())
            .unwrap(),
        fits
    );
    assert_eq!(
        err_text(serde.serialize(
            TOPIC,
            &Wide {
                n: 1 << 40,
                items: vec![]
            }
        )),
        format!(
            "a value of type `{ty}` does not match the Avro schema `Wide`: the long 1099511627776 in field `n` does not fit the schema's int"
        )
    );
    assert_eq!(
        err_text(serde.serialize(
            TOPIC,
            &Wide {
                n: 0,
                items: vec![None, Some(i64::MIN)]
            }
        )),
        format!(
            "a value of type `{ty}` does not match the Avro schema `Wide`: the long -9223372036854775808 in field `items[1]` does not fit the schema's int"
        )
    );
    let top = AvroSerde::<i64>::parse(r#""int""#).unwrap();
    assert_eq!(
        err_text(top.serialize(TOPIC, &(1 << 31))),
        "a value of type `i64` does not match the Avro schema \"int\": the long 2147483648 does not fit the schema's int"
    );
    assert_eq!(
        top.serialize(TOPIC, &-(1 << 31)).unwrap(),
        [0xff, 0xff, 0xff, 0xff, 0x0f]
    );
}

#[test]
fn recursive_schemas_work() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Node {
        value: i64,
        next: Option<Box<Node>>,
    }
    let serde = AvroSerde::<Node>::parse(
        r#"{"type": "record", "name": "Node", "namespace": "list", "fields": [
            {"name": "value", "type": "int"},
            {"name": "next", "type": ["null", "Node"]}]}"#,
    )
    .unwrap();
    let list = Node {
        value: 1,
        next: Some(Box::new(Node {
            value: 2,
            next: None,
        })),
    };
    let bytes = serde.serialize(TOPIC, &list).unwrap();
    assert_eq!(bytes, [2, 2, 4, 0]);
    assert_eq!(serde.deserialize(TOPIC, &bytes).unwrap(), list);
    let too_big = Node {
        value: 1,
        next: Some(Box::new(Node {
            value: 1 << 33,
            next: None,
        })),
    };
    let message = err_text(serde.serialize(TOPIC, &too_big));
    assert!(
        message
            .ends_with("the long 8589934592 in field `next.value` does not fit the schema's int"),
        "{message}"
    );
}

#[test]
fn optional_enums_and_records_round_trip() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner {
        a: i32,
    }
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Outer {
        status: Option<Status>,
        inner: Option<Inner>,
    }
    let serde = AvroSerde::<Outer>::parse(
        r#"{"type": "record", "name": "Outer", "namespace": "n", "fields": [
            {"name": "status", "type": ["null", {"type": "enum", "name": "Status", "symbols": ["New", "Paid", "Shipped"]}]},
            {"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [{"name": "a", "type": "int"}]}]}]}"#,
    )
    .unwrap();
    for value in [
        Outer {
            status: None,
            inner: None,
        },
        Outer {
            status: Some(Status::Shipped),
            inner: Some(Inner { a: -1 }),
        },
    ] {
        let bytes = serde.serialize(TOPIC, &value).unwrap();
        assert_eq!(serde.deserialize(TOPIC, &bytes).unwrap(), value);
    }
    assert_eq!(
        serde
            .serialize(
                TOPIC,
                &Outer {
                    status: Some(Status::Paid),
                    inner: None
                }
            )
            .unwrap(),
        [2, 2, 0]
    );
}

#[test]
fn panics_in_apache_avro_become_errors() {
    // apache-avro 0.21 unwraps the result of parsing a big decimal when it
    // resolves bytes to one; bad bytes would panic without the serde's guard.
    let registry = MockSchemaRegistry::new();
    let writer = ConfluentAvroSerde::<Vec<u8>>::value_json(&registry, r#""bytes""#).unwrap();
    let bytes = writer.serialize(TOPIC, &vec![1]).unwrap();
    assert_eq!(bytes, [0, 0, 0, 0, 1, 2, 1]);
    let reader = ConfluentAvroSerde::<String>::value_json(
        &registry,
        r#"{"type": "bytes", "logicalType": "big-decimal"}"#,
    )
    .unwrap();
    let message = err_text(reader.deserialize(TOPIC, &bytes));
    assert!(
        message.starts_with(
            "cannot read Avro data with schema id 1 (\"bytes\") as type `alloc::string::String`: panicked: "
        ),
        "{message}"
    );
}

#[test]
fn invalid_schemas_are_errors() {
    let message = err_text(AvroSerde::<i32>::parse(r#"{"type": "nope"}"#));
    assert!(message.starts_with("invalid Avro schema: "), "{message}");
    let message = err_text(ConfluentAvroSerde::<i32>::value_json(
        MockSchemaRegistry::new(),
        "{",
    ));
    assert!(message.starts_with("invalid Avro schema: "), "{message}");
}

// ---------------------------------------------------------------------------
// Schema evolution through the registry.
// ---------------------------------------------------------------------------

#[test]
fn reader_schema_with_added_defaulted_fields_reads_old_data() {
    let registry = MockSchemaRegistry::new();
    let writer = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    let old = writer
        .serialize(
            "users",
            &UserV1 {
                name: "ann".into(),
                visits: 3,
            },
        )
        .unwrap();

    // V2 adds two fields with defaults and promotes `visits` from int to long.
    let reader = ConfluentAvroSerde::<UserV2>::value_json(&registry, USER_V2).unwrap();
    assert_eq!(
        reader.deserialize("users", &old).unwrap(),
        UserV2 {
            name: "ann".into(),
            visits: 3,
            email: None,
            level: 1
        }
    );

    // New data gets a new id and version; old readers read it and drop the
    // fields they do not know. apache-avro reads a long into an int if it
    // fits; one that does not is an error, not a truncated number.
    let new = reader
        .serialize(
            "users",
            &UserV2 {
                name: "bob".into(),
                visits: 4,
                email: Some("b@x".into()),
                level: 2,
            },
        )
        .unwrap();
    assert_eq!(new[..5], [0, 0, 0, 0, 2]);
    assert_eq!(registry.versions("users-value"), [1, 2]);
    assert_eq!(
        writer.deserialize("users", &new).unwrap(),
        UserV1 {
            name: "bob".into(),
            visits: 4
        }
    );
    let big = reader
        .serialize(
            "users",
            &UserV2 {
                name: "cy".into(),
                visits: 1 << 40,
                email: None,
                level: 2,
            },
        )
        .unwrap();
    assert_eq!(
        err_text(writer.deserialize("users", &big)),
        "data written with schema id 2 (`test.User`) cannot be read with the reader schema `test.User`: \
         the long 1099511627776 in field `visits` does not fit the schema's int; the schemas are not compatible"
    );
}

#[test]
fn reader_schema_without_some_fields_reads_new_data() {
    let registry = MockSchemaRegistry::new();
    let wide = ConfluentAvroSerde::<Order>::value_json(&registry, ORDER_SCHEMA).unwrap();
    let bytes = wide.serialize(TOPIC, &sample_order()).unwrap();

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Slim {
        item: String,
        id: i64,
        note: Option<String>,
    }
    let slim = ConfluentAvroSerde::<Slim>::value_json(
        &registry,
        r#"{"type": "record", "name": "Order", "namespace": "test", "fields": [
            {"name": "item", "type": "string"},
            {"name": "id", "type": "long"},
            {"name": "note", "type": ["null", "string"], "default": null}]}"#,
    )
    .unwrap();
    assert_eq!(
        slim.deserialize(TOPIC, &bytes).unwrap(),
        Slim {
            item: "tea".into(),
            id: 1,
            note: Some("hot".into())
        }
    );
}

#[test]
fn reader_schema_with_added_field_without_default_is_an_error() {
    let registry = MockSchemaRegistry::new();
    let writer = ConfluentAvroSerde::<UserV1>::value_json(&registry, USER_V1).unwrap();
    let bytes = writer
        .serialize(
            "users",
            &UserV1 {
                name: "ann".into(),
                visits: 3,
            },
        )
        .unwrap();
    let reader = ConfluentAvroSerde::<UserV2>::value_json(
        &registry,
        r#"{"type": "record", "name": "User", "namespace": "test", "fields": [
            {"name": "name", "type": "string"},
            {"name": "visits", "type": "long"},
            {"name": "email", "type": ["null", "string"]},
            {"name": "level", "type": "int"}]}"#,
    )
    .unwrap();
    let message = err_text(reader.deserialize("users", &bytes));
    assert!(
        message.starts_with(
            "data written with schema id 1 (`test.User`) cannot be read with the reader schema `test.User`: "
        ),
        "{message}"
    );
}

/// Confluent's schema id header: written with a GUID by a header serde,
/// read by any serde (a header, as an id or a GUID, wins over the prefix);
/// each malformed header is a clear error.
#[test]
fn confluent_schema_id_header() {
    let registry = MockSchemaRegistry::new();
    let long = r#""long""#;
    let writer = ConfluentAvroSerde::<i64>::key_json(&registry, long)
        .expect("schema")
        .with_schema_id_in_header(true);
    let reader = ConfluentAvroSerde::<i64>::key_json(&registry, long).expect("schema");
    let mut headers = crate::record::Headers::new();
    let datum = writer
        .serialize_with_headers("t", &mut headers, &-1)
        .expect("writes");
    assert_eq!(datum, [1]); // zig-zag -1
    let header = headers
        .last(KEY_SCHEMA_ID_HEADER)
        .expect("key header")
        .to_vec();
    assert_eq!(header.len(), 17);
    assert_eq!(headers.last(VALUE_SCHEMA_ID_HEADER), None);
    assert_eq!(
        reader.deserialize_with_headers("t", &headers, &datum).ok(),
        Some(-1)
    );
    // The id form (magic byte 0) of the header is read too.
    let by_id = crate::record::Headers::new().with(KEY_SCHEMA_ID_HEADER, vec![0, 0, 0, 0, 1]);
    assert_eq!(
        reader.deserialize_with_headers("t", &by_id, &datum).ok(),
        Some(-1)
    );
    // Without a header, the prefix form is read.
    let prefixed = reader.serialize("t", &-1).expect("writes");
    assert_eq!(prefixed, [0, 0, 0, 0, 1, 1]);
    let none = crate::record::Headers::new();
    assert_eq!(
        reader.deserialize_with_headers("t", &none, &prefixed).ok(),
        Some(-1)
    );
    let bad = |bytes: Vec<u8>| {
        let h = crate::record::Headers::new().with(KEY_SCHEMA_ID_HEADER, bytes);
        err_text(reader.deserialize_with_headers("t", &h, &datum))
    };
    assert_eq!(
        bad(vec![7, 0, 0, 0, 1]),
        "unknown magic byte 7 in header `__key_schema_id`; expected 0 (an id) or 1 (a GUID)"
    );
    assert_eq!(
        bad(vec![1, 0, 0]),
        "header `__key_schema_id` with magic byte 1 is 3 bytes long, too short for its schema id"
    );
    assert_eq!(
        bad([vec![1], vec![9; 16]].concat()),
        "the schema GUID in header `__key_schema_id` is not registered in the schema registry"
    );
    assert_eq!(bad(Vec::new()), "header `__key_schema_id` is empty");
    assert_eq!(
        err_text(writer.serialize("t", &-1)),
        "this serde writes the schema id in header `__key_schema_id`, and no headers were given; \
         serialize with serialize_with_headers"
    );
}
