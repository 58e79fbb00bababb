//! The main example: an order-routing pipeline.
//!
//! Orders arrive as JSON on `orders`, keyed by order id. Cancelled orders
//! are dropped, the rest get a priority flag (100.00 or more) and go to `orders-eu`, `orders-us` or, for any other
//! region, `orders-other`.
//!
//! ```
//! use streams_core::serde::{JsonSerde, StringSerde};
//! use streams_examples::orders::{self, Order, RoutedOrder};
//! use streams_test::TopologyTestDriver;
//!
//! let driver = TopologyTestDriver::new(orders::topology()?)?;
//! let input = driver.create_input_topic("orders", StringSerde, JsonSerde::<Order>::new());
//! let eu = driver.create_output_topic("orders-eu", StringSerde, JsonSerde::<RoutedOrder>::new());
//! input.pipe_key_value("o-1", Order::new("o-1", "alice", "eu", 12_500, "placed"));
//! assert!(eu.read_value().is_some_and(|o| o.priority));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use streams_core::dsl::{Consumed, Produced};
use streams_core::serde::{JsonSerde, StringSerde};
use streams_core::{Result, StreamsBuilder, Topology};

/// An order as the shop writes it to the `orders` topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order id (also the record key).
    pub id: String,
    /// Who ordered.
    pub customer: String,
    /// `eu`, `us`, or anything else.
    pub region: String,
    /// The total, in cents.
    pub amount_cents: i64,
    /// `placed`, `paid`, `cancelled`, ...
    pub status: String,
}

impl Order {
    /// An order, for tests and the example program.
    pub fn new(id: &str, customer: &str, region: &str, amount_cents: i64, status: &str) -> Self {
        Order {
            id: id.to_owned(),
            customer: customer.to_owned(),
            region: region.to_owned(),
            amount_cents,
            status: status.to_owned(),
        }
    }
}

/// An order on its way to a regional topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutedOrder {
    /// The order id.
    pub id: String,
    /// Who ordered.
    pub customer: String,
    /// The total, in cents.
    pub amount_cents: i64,
    /// Whether the total is 100.00 or more.
    pub priority: bool,
}

/// Orders of at least this many cents are priority orders.
pub const PRIORITY_CENTS: i64 = 10_000;

/// The topology: `orders` in, `orders-eu`, `orders-us`, `orders-other` out.
///
/// # Errors
/// None in practice; building a topology returns a `Result`.
pub fn topology() -> Result<Topology> {
    let builder = StreamsBuilder::new();
    let json = JsonSerde::<RoutedOrder>::new;
    let branches = builder
        .stream_with(
            "orders",
            Consumed::with(StringSerde, JsonSerde::<Order>::new()).with_name("orders-source"),
        )
        .named("drop-cancelled")
        .filter_not(|_, order| order.status == "cancelled")
        .named("route-")
        .split()
        .branch(|_, o| o.region == "eu", "eu")
        .branch(|_, o| o.region == "us", "us")
        .default_branch("other");
    for (branch, stream) in branches {
        let region = branch.trim_start_matches("route-").to_owned();
        stream
            .named(format!("enrich-{region}"))
            .map_values(|o| RoutedOrder {
                id: o.id.clone(),
                customer: o.customer.clone(),
                amount_cents: o.amount_cents,
                priority: o.amount_cents >= PRIORITY_CENTS,
            })
            .to_with(
                &format!("orders-{region}"),
                Produced::with(StringSerde, json()).with_name(format!("to-{region}")),
            );
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use streams_test::{TestOutput, TestTopology};

    fn routed(id: &str, customer: &str, amount_cents: i64) -> RoutedOrder {
        RoutedOrder {
            id: id.into(),
            customer: customer.into(),
            amount_cents,
            priority: amount_cents >= PRIORITY_CENTS,
        }
    }

    /// A regional topic, read as routed orders.
    fn region<'t>(t: &'t TestTopology, topic: &str) -> TestOutput<'t, String, RoutedOrder> {
        t.output_with(topic, StringSerde, JsonSerde::<RoutedOrder>::new())
    }

    #[test]
    fn routes_orders_by_region_and_drops_cancelled_ones() -> Result<()> {
        let t = TestTopology::new(topology)?;
        t.input()
            .with_value_serde(JsonSerde::<Order>::new())
            .add("o-1", Order::new("o-1", "alice", "eu", 12_500, "placed"))
            .add("o-2", Order::new("o-2", "bob", "us", 900, "paid"))
            .add("o-3", Order::new("o-3", "carol", "eu", 5_000, "cancelled"))
            .add("o-4", Order::new("o-4", "dan", "apac", 10_000, "placed"));

        region(&t, "orders-eu")
            .expect_records([("o-1", routed("o-1", "alice", 12_500))])
            .expect_no_more_records();
        region(&t, "orders-us")
            .expect_records([("o-2", routed("o-2", "bob", 900))])
            .expect_no_more_records();
        region(&t, "orders-other")
            .expect_records([("o-4", routed("o-4", "dan", 10_000))])
            .expect_no_more_records();
        assert_eq!(
            t.driver()
                .produced_topic_names()
                .into_iter()
                .collect::<Vec<_>>(),
            ["orders-eu", "orders-other", "orders-us"]
        );
        Ok(())
    }

    /// The priority flag, spelled out rather than computed as `routed` does.
    #[test]
    fn priority_starts_at_exactly_one_hundred() -> Result<()> {
        let t = TestTopology::new(topology)?;
        t.input()
            .with_value_serde(JsonSerde::<Order>::new())
            .add("o-1", Order::new("o-1", "alice", "us", 9_999, "placed"))
            .add("o-2", Order::new("o-2", "bob", "us", 10_000, "placed"));
        region(&t, "orders-us")
            .expect_next_record()
            .has_key("o-1")
            .has_value(RoutedOrder {
                id: "o-1".into(),
                customer: "alice".into(),
                amount_cents: 9_999,
                priority: false,
            })
            .and()
            .expect_next_record()
            .has_key("o-2")
            .has_value(RoutedOrder {
                id: "o-2".into(),
                customer: "bob".into(),
                amount_cents: 10_000,
                priority: true,
            })
            .and()
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn node_names_are_the_given_ones() -> Result<()> {
        assert_eq!(
            topology()?.node_names(),
            [
                "orders-source",
                "drop-cancelled",
                "route-",
                "route-eu",
                "route-us",
                "route-other",
                "enrich-eu",
                "to-eu",
                "enrich-other",
                "to-other",
                "enrich-us",
                "to-us"
            ]
        );
        Ok(())
    }

    #[test]
    fn a_tombstone_is_routed_to_the_default_branch() -> Result<()> {
        let t = TestTopology::new(topology)?;
        t.input().add_tombstone("o-9");
        region(&t, "orders-other")
            .expect_next_record()
            .has_key("o-9")
            .is_tombstone()
            .and()
            .expect_no_more_records();
        Ok(())
    }
}
