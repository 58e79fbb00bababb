//! The oracle's `JoinScenarios`: stream-table (inner, left),
//! stream-globalTable (inner, left), table-table (inner, left, outer) and
//! windowed stream-stream (inner, left, outer). Joiners concatenate, with
//! Java's `null` for a missing side.

use std::time::Duration;

use streams_core::StreamsBuilder;
use streams_core::dsl::{JoinWindows, KStream, Materialized};
use streams_test::{TestRecord, TopologyTestDriver};

use super::scenarios_stateful::changelog;
use super::{Recorder, Scenario, ScenarioResult, input, scenario, show};

/// The two streams of the stream-stream scenarios.
type Sides = (KStream<S, S>, KStream<S, S>);

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(stream_table_join),
    scenario!(stream_table_left_join),
    scenario!(stream_global_table_joins),
    scenario!(table_table_join),
    scenario!(table_table_left_join),
    scenario!(table_table_outer_join),
    scenario!(stream_stream_join),
    scenario!(stream_stream_left_join),
    scenario!(stream_stream_outer_join),
];

/// Orders (customer -> order) and customers (customer -> name),
/// interleaved, with deletes; then reads `out`.
fn pipe_orders_and_customers(g: &mut Recorder, driver: &TopologyTestDriver) {
    let orders = input(driver, "orders");
    let customers = input(driver, "customers");
    orders.pipe_key_value_at("c1", "o1", 0);
    customers.pipe_key_value_at("c1", "alice", 1);
    orders.pipe_key_value_at("c1", "o2", 2);
    customers.pipe_key_value_at("c2", "bob", 3);
    orders.pipe_key_value_at("c2", "o3", 4);
    customers.pipe_record(TestRecord::tombstone("c1").at(5));
    orders.pipe_key_value_at("c1", "o4", 6);
    orders.pipe_record(TestRecord::new(None, Some("o5".to_owned())).at(7));
    orders.pipe_record(TestRecord::tombstone("c2").at(8));
    customers.pipe_key_value_at("c2", "bobby", 9);
    orders.pipe_key_value_at("c2", "o6", 3);
    g.output(driver, "out");
}

fn stream_table_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let customers = b.table::<S, S>("customers");
    b.stream::<S, S>("orders")
        .join(&customers, |order, name| format!("{order}/{name}"))
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_orders_and_customers(&mut g, &driver);
    g.finish(driver)
}

fn stream_table_left_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let customers = b.table::<S, S>("customers");
    b.stream::<S, S>("orders")
        .left_join(&customers, |order, name| format!("{order}/{}", show(name)))
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_orders_and_customers(&mut g, &driver);
    g.finish(driver)
}

fn stream_global_table_joins() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let products = b.global_table::<S, S>("products");
    let orders = b.stream::<S, S>("orders");
    orders
        .clone()
        .join_global(
            &products,
            |_, product_id| product_id.clone(),
            |product_id, name| format!("{product_id}:{name}"),
        )
        .to("out-inner");
    orders
        .left_join_global(
            &products,
            |_, product_id| product_id.clone(),
            |product_id, name| format!("{product_id}:{}", show(name)),
        )
        .to("out-left");
    let driver = g.start(b.build()?)?;
    let p = input(&driver, "products");
    let o = input(&driver, "orders");
    p.pipe_key_value_at("p1", "pen", 0);
    o.pipe_key_value_at("o1", "p1", 1);
    o.pipe_key_value_at("o2", "p2", 2);
    p.pipe_key_value_at("p2", "ink", 3);
    o.pipe_key_value_at("o3", "p2", 4);
    p.pipe_record(TestRecord::tombstone("p1").at(5));
    o.pipe_key_value_at("o4", "p1", 6);
    o.pipe_record(TestRecord::new(None, Some("p2".to_owned())).at(7));
    p.pipe_key_value_at("p2", "ink2", 100);
    o.pipe_key_value_at("o5", "p2", 8);
    g.output(&driver, "out-inner");
    g.output(&driver, "out-left");
    g.finish(driver)
}

/// Updates of tables `left` and `right`, interleaved, with deletes of
/// both sides; then reads `out`.
fn pipe_left_and_right(g: &mut Recorder, driver: &TopologyTestDriver) {
    let left = input(driver, "left");
    let right = input(driver, "right");
    left.pipe_key_value_at("a", "l1", 0);
    right.pipe_key_value_at("a", "r1", 1);
    right.pipe_key_value_at("b", "r2", 2);
    left.pipe_key_value_at("b", "l2", 3);
    left.pipe_key_value_at("a", "l3", 4);
    right.pipe_record(TestRecord::tombstone("a").at(5));
    left.pipe_record(TestRecord::tombstone("a").at(6));
    left.pipe_record(TestRecord::tombstone("c").at(7));
    right.pipe_record(TestRecord::tombstone("b").at(8));
    left.pipe_record(TestRecord::tombstone("b").at(9));
    right.pipe_key_value_at("d", "r4", 10);
    left.pipe_key_value_at("d", "l4", 2);
    g.output(driver, "out");
}

fn table_table_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let left = b.table::<S, S>("left");
    let right = b.table::<S, S>("right");
    left.join(&right, |l, r| format!("{l}+{r}"))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_left_and_right(&mut g, &driver);
    g.finish(driver)
}

fn table_table_left_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let left = b.table::<S, S>("left");
    let right = b.table::<S, S>("right");
    left.left_join(&right, |l, r| format!("{l}+{}", show(r)))
        .to_stream()
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_left_and_right(&mut g, &driver);
    g.finish(driver)
}

fn table_table_outer_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let left = b.table::<S, S>("left");
    let right = b.table::<S, S>("right");
    left.outer_join_with(
        &right,
        |l, r| format!("{}+{}", show(l), show(r)),
        Materialized::as_("outer-joined"),
    )
    .to_stream()
    .to("out");
    let driver = g.start(b.build()?)?;
    pipe_left_and_right(&mut g, &driver);
    g.output(&driver, &changelog("outer-joined"));
    g.finish(driver)
}

/// The join window of the stream-stream scenarios: 10 ms either way, grace 5 ms.
fn windows() -> streams_core::Result<JoinWindows> {
    JoinWindows::of_time_difference_and_grace(Duration::from_millis(10), Duration::from_millis(5))
}

/// Streams `left` and `right`, in that order (as the Java scenarios create them).
fn sides(b: &StreamsBuilder) -> Sides {
    (b.stream::<S, S>("left"), b.stream::<S, S>("right"))
}

/// Records of streams `left` and `right`, in order: matching pairs,
/// out-of-order records, a record older than the join stores' retention
/// (before + after + grace = 25 ms) and unmatched records whose windows
/// close; then reads `out`.
fn pipe_stream_stream(g: &mut Recorder, driver: &TopologyTestDriver) {
    let left = input(driver, "left");
    let right = input(driver, "right");
    left.pipe_key_value_at("k1", "a", 0);
    right.pipe_key_value_at("k1", "x", 5);
    left.pipe_key_value_at("k1", "b", 12);
    right.pipe_key_value_at("k2", "y", 20);
    left.pipe_key_value_at("k1", "c", 8);
    left.pipe_key_value_at("k1", "d", 2);
    right.pipe_key_value_at("k1", "w", 16);
    left.pipe_key_value_at("k3", "e", 21);
    right.pipe_key_value_at("k4", "z", 22);
    left.pipe_key_value_at("k5", "f", 40);
    right.pipe_key_value_at("k5", "v", 45);
    left.pipe_key_value_at("k1", "h", 15);
    left.pipe_key_value_at("k6", "g", 100);
    g.output(driver, "out");
}

fn stream_stream_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (left, right) = sides(&b);
    left.join_stream(&right, |l, r| format!("{l}+{r}"), windows()?)
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_stream_stream(&mut g, &driver);
    g.finish(driver)
}

fn stream_stream_left_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (left, right) = sides(&b);
    left.left_join_stream(&right, |l, r| format!("{l}+{}", show(r)), windows()?)
        .to("out");
    let driver = g.start(b.build()?)?;
    pipe_stream_stream(&mut g, &driver);
    g.finish(driver)
}

fn stream_stream_outer_join() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let (left, right) = sides(&b);
    left.outer_join_stream(
        &right,
        |l, r| format!("{}+{}", show(l), show(r)),
        windows()?,
    )
    .to("out");
    let driver = g.start(b.build()?)?;
    pipe_stream_stream(&mut g, &driver);
    g.finish(driver)
}
