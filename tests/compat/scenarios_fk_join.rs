//! The oracle's `ForeignKeyJoinScenarios`: foreign-key table-table joins
//! (KIP-213) of orders (order id -> "product/detail") with products
//! (product id -> name), with the subscription and response topics and the
//! subscription store's changelog read as raw bytes.

use streams_core::StreamsBuilder;
use streams_core::dsl::{ForeignKeyExtractor, KTable, Materialized, TableJoined};
use streams_core::serde::{BytesSerde, StringSerde};
use streams_test::{TestRecord, TopologyTestDriver};

use super::scenarios_stateful::changelog;
use super::{APPLICATION_ID, Recorder, Scenario, ScenarioResult, input, scenario, show};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(fk_inner_join),
    scenario!(fk_left_join),
    scenario!(fk_left_join_named_materialized),
    scenario!(fk_join_derived_tables),
    scenario!(fk_join_stale_response_dropped),
];

/// The product id before the first '/', `None` (Java's null) without one.
fn product_of(order: &S) -> Option<S> {
    order.split_once('/').map(|(p, _)| p.to_owned())
}

/// "Orders and products" (see SCENARIOS.md).
fn pipe_orders_and_products(driver: &TopologyTestDriver) {
    let orders = input(driver, "orders");
    let products = input(driver, "products");
    products.pipe_key_value_at("p1", "pen", 0);
    orders.pipe_key_value_at("o1", "p1/a", 1);
    orders.pipe_key_value_at("o2", "p2/b", 2);
    products.pipe_key_value_at("p2", "ink", 3);
    orders.pipe_key_value_at("o1", "p2/c", 4);
    products.pipe_key_value_at("p1", "pencil", 5);
    orders.pipe_key_value_at("o2", "p2/d", 6);
    products.pipe_record(TestRecord::tombstone("p2").at(7));
    orders.pipe_key_value_at("o3", "none", 8);
    orders.pipe_record(TestRecord::tombstone("o1").at(9));
    orders.pipe_key_value_at("o2", "p1/e", 10);
    orders.pipe_key_value_at("o4", "p3/f", 11);
    products.pipe_record(TestRecord::new(None, Some("x".to_owned())).at(12));
    orders.pipe_key_value_at("o3", "p1/g", 13);
    orders.pipe_record(TestRecord::tombstone("o5").at(14));
    products.pipe_key_value_at("p1", "pencil", 15);
    orders.pipe_key_value_at("o2", "p1/e", 16);
    products.pipe_key_value_at("p3", "cap", 2);
}

/// The subscription and response topics (String keys, value bytes) and
/// the subscription store's changelog (bytes).
fn internal_outputs(
    g: &mut Recorder,
    driver: &TopologyTestDriver,
    registration: &str,
    response: &str,
    store: &str,
) {
    let topic = |base: &str| format!("{APPLICATION_ID}-{base}-topic");
    g.output_as(driver, &topic(registration), StringSerde, BytesSerde);
    g.output_as(driver, &topic(response), StringSerde, BytesSerde);
    g.output_as(driver, &changelog(store), BytesSerde, BytesSerde);
}

fn tables(b: &StreamsBuilder) -> (KTable<S, S>, KTable<S, S>) {
    (b.table::<S, S>("orders"), b.table::<S, S>("products"))
}

fn fk_inner_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (orders, products) = tables(&b);
    orders
        .join_on_foreign_key(&products, product_of, |o, p| format!("{o}+{p}"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_orders_and_products(&driver);
    g.output(&driver, "out");
    internal_outputs(
        &mut g,
        &driver,
        "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006",
        "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014",
        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010",
    );
    g.finish(driver)
}

fn fk_left_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (orders, products) = tables(&b);
    orders
        .left_join_on_foreign_key(&products, product_of, |o, p| format!("{o}+{}", show(p)))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_orders_and_products(&driver);
    g.output(&driver, "out");
    internal_outputs(
        &mut g,
        &driver,
        "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006",
        "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014",
        "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010",
    );
    g.finish(driver)
}

fn fk_left_join_named_materialized() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (orders, products) = tables(&b);
    orders
        .left_join_on_foreign_key_with(
            &products,
            ForeignKeyExtractor::from_key_and_value(|_id: &S, order: &S| product_of(order)),
            |o, p| format!("{o}+{}", show(p)),
            TableJoined::as_("fk"),
            Materialized::as_("fk-result"),
        )
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_orders_and_products(&driver);
    g.output(&driver, "out");
    g.output(&driver, &changelog("fk-result"));
    internal_outputs(
        &mut g,
        &driver,
        "fk-subscription-registration",
        "fk-subscription-response",
        "fk-subscription-store",
    );
    g.finish(driver)
}

fn fk_join_derived_tables() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let orders = b.table::<S, S>("orders").filter(|_, v| !v.ends_with("/x"));
    let products = b
        .table::<S, S>("products")
        .map_values(|_, v| v.to_uppercase());
    orders
        .join_on_foreign_key(&products, product_of, |o, p| format!("{o}+{p}"))
        .filter(|_, v| !v.starts_with("p3"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let o = input(&driver, "orders");
    let p = input(&driver, "products");
    p.pipe_key_value_at("p1", "pen", 0);
    o.pipe_key_value_at("o1", "p1/a", 1);
    o.pipe_key_value_at("o1", "p1/x", 2);
    o.pipe_key_value_at("o2", "p3/b", 3);
    p.pipe_key_value_at("p3", "cap", 4);
    o.pipe_key_value_at("o1", "p1/c", 5);
    p.pipe_key_value_at("p1", "marker", 6);
    o.pipe_key_value_at("o2", "p1/d", 7);
    g.output(&driver, "out");
    g.finish(driver)
}

/// The bytes of a response answering the primary value whose
/// `Murmur3.hash128` is `hash` (hex) with the foreign value `value`.
fn response(hash: &str, value: &str) -> Vec<u8> {
    let mut bytes = vec![0u8];
    bytes.extend(
        (0..hash.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hash[i..i + 2], 16).unwrap_or_default()),
    );
    bytes.extend_from_slice(value.as_bytes());
    bytes
}

/// Kafka's `Murmur3.hash128` of "p1/old" and "p1/a", as the oracle's
/// `response` computes them.
const HASH_P1_OLD: &str = "7b907feffa731e61334076b269a6f43d";
const HASH_P1_A: &str = "91dbfe22c4ab5374d26b0ba9ebab4e5b";

fn fk_join_stale_response_dropped() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (orders, products) = tables(&b);
    orders
        .join_on_foreign_key(&products, product_of, |o, p| format!("{o}+{p}"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let observed = g.observer();
    let o = input(&driver, "orders");
    let p = input(&driver, "products");
    let responses = driver.create_input_topic_with_time(
        &format!("{APPLICATION_ID}-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic"),
        StringSerde,
        BytesSerde,
        0,
        std::time::Duration::ZERO,
    );
    let dropped = |step: &str| {
        observed.push(format!(
            "{step}: dropped={}",
            driver.metrics().dropped_records
        ))
    };
    p.pipe_key_value_at("p1", "pen", 0);
    o.pipe_key_value_at("o1", "p1/a", 1);
    dropped("joined");
    responses.pipe_key_value_at("o1", response(HASH_P1_OLD, "forged"), 2);
    dropped("stale response");
    responses.pipe_key_value_at("o1", response(HASH_P1_A, "forged"), 3);
    dropped("current response");
    o.pipe_key_value_at("o2", "none", 4);
    dropped("null foreign key");
    o.pipe_key_value_at("o1", "loose", 5);
    dropped("foreign key removed");
    p.pipe_record(TestRecord::new(None, Some("x".to_owned())).at(6));
    dropped("null product key");
    g.output(&driver, "out");
    g.finish(driver)
}
