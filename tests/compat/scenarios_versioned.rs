//! The oracle's `VersionedScenarios`: versioned key-value stores (KIP-889)
//! under the DSL, versioned source tables with out-of-order and expired
//! updates (KIP-914), tables derived from them, and stream-table joins
//! that read the table as of each record's timestamp, without and with a
//! grace period (KIP-923). Every versioned store keeps 100 ms of history.

use std::time::Duration;

use streams_core::StreamsBuilder;
use streams_core::dsl::{Joined, Materialized, Produced};
use streams_core::serde::{BytesSerde, I64Serde, StringSerde};
use streams_core::state::{Stores, VersionedRecord};
use streams_test::{TestRecord, TopologyTestDriver};

use super::scenarios_stateful::changelog;
use super::{Observer, Recorder, Scenario, ScenarioResult, input, scenario, show};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(versioned_table_out_of_order),
    scenario!(versioned_table_derived_tables),
    scenario!(stream_table_join_versioned),
    scenario!(stream_table_join_versioned_grace),
    scenario!(versioned_table_group_by_and_to_table),
    scenario!(versioned_table_foreign_key_join),
];

/// A versioned table's `Materialized`, as the oracle's `versioned(name)`:
/// `Stores::persistent_versioned_key_value_store(name, 100 ms)`.
fn versioned(name: &str) -> Materialized<S, S> {
    let supplier = Stores::persistent_versioned_key_value_store(name, Duration::from_millis(100))
        .expect("a valid history retention");
    Materialized::as_(supplier)
}

/// "value@timestamp", or "null", as the oracle shows a `VersionedRecord`.
fn shown(r: Option<VersionedRecord<S>>) -> String {
    r.map_or_else(
        || "null".to_owned(),
        |r| format!("{}@{}", r.value, r.timestamp),
    )
}

/// The oracle's `observeStore`: get(key) and get(key, asOf) for each asOf.
fn observe_store(
    observed: &Observer,
    driver: &TopologyTestDriver,
    store: &str,
    key: &str,
    as_of: &[i64],
) -> Result<(), Box<dyn std::error::Error>> {
    let s = driver.versioned_key_value_store::<S, S>(store)?;
    let key = key.to_owned();
    let mut line = format!("{store} {key}: latest={}", shown(s.get(&key)));
    for t in as_of {
        line.push_str(&format!(", {t}={}", shown(s.get_as_of(&key, *t))));
    }
    observed.push(line);
    Ok(())
}

fn versioned_table_out_of_order() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table_with::<S, S>("prices", versioned("prices"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let observed = g.observer();
    let prices = input(&driver, "prices");
    prices.pipe_key_value_at("k1", "a", 10);
    prices.pipe_key_value_at("k1", "b", 20);
    prices.pipe_key_value_at("k1", "c", 15);
    prices.pipe_key_value_at("k1", "d", 20);
    observe_store(
        &observed,
        &driver,
        "prices",
        "k1",
        &[5, 10, 14, 15, 19, 20, 30],
    )?;
    prices.pipe_key_value_at("k2", "x", 200);
    prices.pipe_key_value_at("k1", "late", 50);
    observed.push(format!(
        "after expired update: dropped={}",
        driver.metrics().dropped_records
    ));
    observe_store(&observed, &driver, "prices", "k1", &[15, 99, 100, 150])?;
    prices.pipe_record(TestRecord::tombstone("k1").at(210));
    prices.pipe_key_value_at("k1", "e", 205);
    prices.pipe_record(TestRecord::tombstone("k3").at(220));
    prices.pipe_record(TestRecord::new(None, Some("n".to_owned())).at(230));
    observe_store(
        &observed,
        &driver,
        "prices",
        "k1",
        &[204, 205, 209, 210, 300],
    )?;
    observe_store(&observed, &driver, "prices", "k3", &[220])?;
    observed.push(format!("end: dropped={}", driver.metrics().dropped_records));
    g.output(&driver, "out");
    g.output(&driver, &changelog("prices"));
    g.finish(driver)
}

fn versioned_table_derived_tables() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let prices = b.table_with::<S, S>("prices", versioned("prices"));
    let names = b.table::<S, S>("names");
    prices
        .clone()
        .filter(|_, v| v.encode_utf16().count() <= 2)
        .left_join(&names, |p, n| format!("{p}/{}", show(n)))
        .to_stream()
        .to("out-filter-left-join");
    prices
        .clone()
        .map_values_with(|_, v| v.to_uppercase(), versioned("upper"))
        .to_stream()
        .to("out-map");
    prices
        .join(&names, |p, n| format!("{p}/{n}"))
        .to_stream()
        .to("out-join");
    let driver = g.start(b.build()?)?;
    let observed = g.observer();
    let p = input(&driver, "prices");
    let n = input(&driver, "names");
    n.pipe_key_value_at("k1", "ann", 0);
    p.pipe_key_value_at("k1", "a", 10);
    p.pipe_key_value_at("k1", "bbb", 20);
    p.pipe_key_value_at("k1", "cc", 15);
    p.pipe_key_value_at("k2", "d", 30);
    p.pipe_record(TestRecord::tombstone("k1").at(40));
    p.pipe_key_value_at("k1", "e", 35);
    p.pipe_key_value_at("k2", "ffff", 200);
    p.pipe_key_value_at("k2", "g", 50);
    n.pipe_key_value_at("k2", "bob", 210);
    observed.push(format!("dropped={}", driver.metrics().dropped_records));
    observe_store(&observed, &driver, "upper", "k1", &[12, 15, 25, 36, 45])?;
    g.output(&driver, "out-filter-left-join");
    g.output(&driver, "out-map");
    g.output(&driver, "out-join");
    g.output(&driver, &changelog("upper"));
    g.finish(driver)
}

/// Prices of product "p" and orders of it ("Versioned joins" in
/// SCENARIOS.md).
fn pipe_versioned_join(driver: &TopologyTestDriver) {
    let prices = input(driver, "prices");
    let orders = input(driver, "orders");
    prices.pipe_key_value_at("p", "1", 10);
    prices.pipe_key_value_at("p", "2", 20);
    prices.pipe_key_value_at("p", "1.5", 15);
    orders.pipe_key_value_at("p", "o1", 12);
    orders.pipe_key_value_at("p", "o2", 17);
    orders.pipe_key_value_at("p", "o3", 25);
    orders.pipe_key_value_at("p", "o4", 5);
    orders.pipe_key_value_at("q", "o5", 30);
    prices.pipe_record(TestRecord::tombstone("p").at(40));
    orders.pipe_key_value_at("p", "o6", 45);
    orders.pipe_key_value_at("p", "o7", 35);
    prices.pipe_key_value_at("x", "9", 500);
    orders.pipe_key_value_at("p", "o8", 18);
    orders.pipe_key_value_at("p", "o9", 405);
}

fn stream_table_join_versioned() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let prices = b.table_with::<S, S>("prices", versioned("prices"));
    let orders = b.stream::<S, S>("orders");
    orders
        .clone()
        .join(&prices, |o, price| format!("{o}@{price}"))
        .to("out-inner");
    orders
        .left_join(&prices, |o, price| format!("{o}@{}", show(price)))
        .to("out-left");
    let driver = g.start(b.build()?)?;
    pipe_versioned_join(&driver);
    g.output(&driver, "out-inner");
    g.output(&driver, "out-left");
    g.finish(driver)
}

fn stream_table_join_versioned_grace() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let prices = b.table_with::<S, S>("prices", versioned("prices"));
    let orders = b.stream::<S, S>("orders");
    let grace = Duration::from_millis(10);
    orders
        .clone()
        .join_with(
            &prices,
            |o, price| format!("{o}@{price}"),
            Joined::default().with_grace_period(grace),
        )
        .to("out-inner");
    orders
        .left_join_with(
            &prices,
            |o, price| format!("{o}@{}", show(price)),
            Joined::as_("priced").with_grace_period(grace),
        )
        .to("out-left");
    let driver = g.start(b.build()?)?;
    let p = input(&driver, "prices");
    let o = input(&driver, "orders");
    p.pipe_key_value_at("p", "1", 0);
    o.pipe_key_value_at("p", "o1", 20);
    p.pipe_key_value_at("p", "2", 15);
    o.pipe_record(
        TestRecord::key_value("p", "o2")
            .at(25)
            .with_header("h", "x"),
    );
    o.pipe_key_value_at("p", "o3", 30);
    o.pipe_key_value_at("q", "o4", 5);
    o.pipe_key_value_at("p", "o5", 25);
    p.pipe_key_value_at("p", "3", 24);
    o.pipe_key_value_at("p", "o6", 40);
    o.pipe_record(TestRecord::tombstone("p").at(41));
    o.pipe_key_value_at("a", "o7", 30);
    o.pipe_key_value_at("p", "o8", 60);
    g.output(&driver, "out-inner");
    g.output(&driver, "out-left");
    for store in ["KSTREAM-JOIN-0000000003-Buffer", "priced-Buffer"] {
        g.output_as(&driver, &changelog(store), BytesSerde, BytesSerde);
    }
    g.finish(driver)
}

fn versioned_table_group_by_and_to_table() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.table_with::<S, S>("prices", versioned("prices"))
        .group_by(|k, v| (v.clone(), k.clone()))
        .count()
        .to_stream()
        .to_with("out-count", Produced::with(StringSerde, I64Serde));
    b.stream::<S, S>("updates")
        .to_table_with(versioned("latest"))
        .to_stream()
        .to("out-to-table");
    let driver = g.start(b.build()?)?;
    let observed = g.observer();
    let p = input(&driver, "prices");
    let u = input(&driver, "updates");
    p.pipe_key_value_at("k1", "a", 10);
    p.pipe_key_value_at("k2", "a", 11);
    p.pipe_key_value_at("k1", "b", 20);
    p.pipe_key_value_at("k1", "c", 15);
    p.pipe_record(TestRecord::tombstone("k2").at(30));
    p.pipe_key_value_at("k2", "b", 25);
    p.pipe_key_value_at("k3", "b", 200);
    p.pipe_key_value_at("k1", "c", 40);
    u.pipe_key_value_at("u1", "x", 5);
    u.pipe_key_value_at("u1", "y", 3);
    u.pipe_record(TestRecord::tombstone("u1").at(8));
    u.pipe_key_value_at("u1", "z", 6);
    observed.push(format!("dropped={}", driver.metrics().dropped_records));
    observe_store(&observed, &driver, "latest", "u1", &[2, 3, 4, 5, 6, 7, 8])?;
    g.output_as(&driver, "out-count", StringSerde, I64Serde);
    g.output(&driver, "out-to-table");
    g.output(&driver, &changelog("latest"));
    g.finish(driver)
}

/// The product id before the first '/', as the oracle's `productOf`.
fn product_of(order: &S) -> Option<S> {
    order.split_once('/').map(|(p, _)| p.to_owned())
}

fn versioned_table_foreign_key_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let orders = b.table_with::<S, S>("orders", versioned("orders"));
    let products = b.table_with::<S, S>("products", versioned("products"));
    orders
        .join_on_foreign_key(&products, product_of, |o, pr| format!("{o}+{pr}"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    let observed = g.observer();
    let o = input(&driver, "orders");
    let p = input(&driver, "products");
    p.pipe_key_value_at("p1", "pen", 10);
    p.pipe_key_value_at("p2", "ink", 10);
    o.pipe_key_value_at("o1", "p1/a", 20);
    p.pipe_key_value_at("p1", "old pen", 5);
    o.pipe_key_value_at("o1", "p2/b", 15);
    o.pipe_key_value_at("o1", "p2/c", 30);
    p.pipe_key_value_at("p2", "new ink", 40);
    observed.push(format!("dropped={}", driver.metrics().dropped_records));
    g.output(&driver, "out");
    g.finish(driver)
}
