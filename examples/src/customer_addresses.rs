//! The latest customer address, and GDPR erasure.
//!
//! Customers' addresses arrive on `customer-addresses`, keyed by customer
//! id; the topology keeps them as a table (the latest address per
//! customer, in the store `customer-addresses-store`, whose changelog is
//! `<application.id>-customer-addresses-store-changelog`) and republishes
//! every change on `latest-addresses`. Orders arrive as JSON on `orders`,
//! keyed by order id; they are re-keyed by customer (through a repartition
//! topic) and joined with the table:
//! - `shipments` (an inner join): orders shipped to the customer's
//!   address at the time of the order;
//! - `order-status` (a left join): every order, with the address or, when
//!   there is none, without one (to be held).
//!
//! A GDPR erasure request is a tombstone for the customer on
//! `customer-addresses`. It removes the row from the table and its store,
//! writes a tombstone to the changelog (so that a restored store does not
//! bring the address back, and compaction removes it from the topic) and
//! forwards a tombstone to `latest-addresses`, so that downstream copies
//! delete it too. Later orders of that customer are not shipped, and show
//! with no address on `order-status`.
//!
//! ```
//! use streams_core::serde::{JsonSerde, StringSerde};
//! use streams_examples::customer_addresses::{self as example, Order, Shipment};
//! use streams_test::{KeyValue, TopologyTestDriver};
//!
//! let driver = TopologyTestDriver::new(example::topology()?)?;
//! let addresses = driver.create_input_topic(example::ADDRESSES, StringSerde, StringSerde);
//! let orders = driver.create_input_topic(example::ORDERS, StringSerde, JsonSerde::<Order>::new());
//! let shipments = driver.create_output_topic(example::SHIPMENTS, StringSerde, JsonSerde::<Shipment>::new());
//! addresses.pipe_key_value("alice", "1 Main St");
//! orders.pipe_key_value("o-1", Order::new("o-1", "alice", "book"));
//! addresses.pipe_tombstone("alice"); // erase alice
//! orders.pipe_key_value("o-2", Order::new("o-2", "alice", "lamp"));
//! assert_eq!(
//!     shipments.read_key_values_to_list(),
//!     [KeyValue::pair("alice", Shipment::new(&Order::new("o-1", "alice", "book"), Some("1 Main St")))]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use streams_core::dsl::{Consumed, Materialized, Produced};
use streams_core::serde::{JsonSerde, StringSerde};
use streams_core::{Result, StreamsBuilder, Topology};

/// The addresses topic: customer id -> address; a tombstone erases.
pub const ADDRESSES: &str = "customer-addresses";
/// The orders topic: order id -> [`Order`].
pub const ORDERS: &str = "orders";
/// Orders shipped to an address: customer id -> [`Shipment`].
pub const SHIPMENTS: &str = "shipments";
/// Every order, with the address if there is one: customer id -> [`Shipment`].
pub const ORDER_STATUS: &str = "order-status";
/// Every change of the address table: customer id -> address, tombstones included.
pub const LATEST_ADDRESSES: &str = "latest-addresses";
/// The store holding the address table.
pub const STORE: &str = "customer-addresses-store";

/// An order as the shop writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// The order id (also the record key).
    pub id: String,
    /// Who ordered.
    pub customer: String,
    /// What was ordered.
    pub item: String,
}

impl Order {
    /// An order.
    pub fn new(id: &str, customer: &str, item: &str) -> Self {
        Order {
            id: id.to_owned(),
            customer: customer.to_owned(),
            item: item.to_owned(),
        }
    }
}

/// An order with the address it ships to, if the customer has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shipment {
    /// The order id.
    pub order: String,
    /// What was ordered.
    pub item: String,
    /// Where it goes; `None` when the customer has no address (never
    /// given, or erased).
    pub address: Option<String>,
}

impl Shipment {
    /// The shipment of `order` to `address`.
    pub fn new(order: &Order, address: Option<&str>) -> Self {
        Shipment {
            order: order.id.clone(),
            item: order.item.clone(),
            address: address.map(str::to_owned),
        }
    }
}

/// The topology. See the [module docs](self).
///
/// # Errors
/// None in practice; building a topology returns a `Result`.
pub fn topology() -> Result<Topology> {
    let builder = StreamsBuilder::new();
    let shipment = || Produced::with(StringSerde, JsonSerde::<Shipment>::new());
    let addresses = builder.table_consumed(
        ADDRESSES,
        Consumed::with(StringSerde, StringSerde),
        Materialized::as_(STORE),
    );
    addresses.clone().to_stream().to(LATEST_ADDRESSES);
    let by_customer = builder
        .stream_with(
            ORDERS,
            Consumed::with(StringSerde, JsonSerde::<Order>::new()),
        )
        .select_key(|_, order| order.customer.clone());
    // Both joins read the same repartition topic, as in Kafka.
    by_customer
        .clone()
        .join(&addresses, |order, address| {
            Shipment::new(order, Some(address))
        })
        .to_with(SHIPMENTS, shipment());
    by_customer
        .left_join(&addresses, |order, address| {
            Shipment::new(order, address.map(String::as_str))
        })
        .to_with(ORDER_STATUS, shipment());
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use streams_core::state::{StoreBuilder, Stores, TimestampedKeyValueStore, ValueAndTimestamp};
    use streams_core::{RawRecord, StreamsConfig};
    use streams_test::{KeyValue, TestInput, TestOutput, TestTopology};

    const APP: &str = "shop";
    const CHANGELOG: &str = "shop-customer-addresses-store-changelog";

    fn shop() -> Result<TestTopology> {
        Ok(TestTopology::new(topology)?.with_config(StreamsConfig::new(APP)))
    }

    fn orders(t: &TestTopology) -> TestInput<'_, String, Order> {
        t.input_with(ORDERS, StringSerde, JsonSerde::<Order>::new())
    }

    fn shipments<'t>(t: &'t TestTopology, topic: &str) -> TestOutput<'t, String, Shipment> {
        t.output_with(topic, StringSerde, JsonSerde::<Shipment>::new())
    }

    /// Pipes an order and returns it, for the expected shipments.
    fn order(orders: &TestInput<'_, String, Order>, id: &str, customer: &str, item: &str) -> Order {
        let order = Order::new(id, customer, item);
        orders.add(id, order.clone());
        order
    }

    #[test]
    fn orders_ship_to_the_latest_address() -> Result<()> {
        let t = shop()?;
        let (addresses, orders) = (t.input_named(ADDRESSES), orders(&t));
        let early = order(&orders, "o-0", "alice", "pen");
        addresses.add("alice", "1 Main St");
        let first = order(&orders, "o-1", "alice", "book");
        addresses.add("alice", "9 Elm Rd");
        let second = order(&orders, "o-2", "alice", "lamp");
        addresses.add("bob", "5 Oak Ave");
        let third = order(&orders, "o-3", "bob", "desk");

        shipments(&t, SHIPMENTS)
            .expect_records([
                ("alice", Shipment::new(&first, Some("1 Main St"))),
                ("alice", Shipment::new(&second, Some("9 Elm Rd"))),
                ("bob", Shipment::new(&third, Some("5 Oak Ave"))),
            ])
            .expect_no_more_records();
        // The order placed before any address shows without one.
        shipments(&t, ORDER_STATUS)
            .expect_records([
                ("alice", Shipment::new(&early, None)),
                ("alice", Shipment::new(&first, Some("1 Main St"))),
                ("alice", Shipment::new(&second, Some("9 Elm Rd"))),
                ("bob", Shipment::new(&third, Some("5 Oak Ave"))),
            ])
            .expect_no_more_records();
        // Every address change is republished.
        t.output_named(LATEST_ADDRESSES)
            .expect_records([
                ("alice", "1 Main St"),
                ("alice", "9 Elm Rd"),
                ("bob", "5 Oak Ave"),
            ])
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn gdpr_erasure_removes_the_customer_everywhere() -> Result<()> {
        let t = shop()?;
        let (addresses, orders) = (t.input_named(ADDRESSES), orders(&t));
        addresses.add("alice", "1 Main St").add("bob", "5 Oak Ave");
        let before = order(&orders, "o-1", "alice", "book");
        shipments(&t, SHIPMENTS)
            .expect_records([("alice", Shipment::new(&before, Some("1 Main St")))])
            .expect_no_more_records();
        shipments(&t, ORDER_STATUS)
            .expect_records([("alice", Shipment::new(&before, Some("1 Main St")))])
            .expect_no_more_records();

        // Erase alice.
        addresses.add_tombstone("alice");

        // The table and its store.
        t.store::<String, String>(STORE)
            .has_no_key("alice")
            .has_entry("bob", "5 Oak Ave")
            .has_size(1);
        // The changelog: a tombstone after the address.
        t.output_named(CHANGELOG)
            .expect_records([
                KeyValue::pair("alice", "1 Main St"),
                KeyValue::pair("bob", "5 Oak Ave"),
                KeyValue::tombstone("alice"),
            ])
            .expect_no_more_records();
        // Downstream: a tombstone on the table's stream.
        t.output_named(LATEST_ADDRESSES)
            .expect_records([
                KeyValue::pair("alice", "1 Main St"),
                KeyValue::pair("bob", "5 Oak Ave"),
                KeyValue::tombstone("alice"),
            ])
            .expect_no_more_records();

        // Later orders: not shipped (inner join), held without an
        // address (left join); bob's still ship.
        let after = order(&orders, "o-2", "alice", "lamp");
        let bobs = order(&orders, "o-3", "bob", "desk");
        shipments(&t, SHIPMENTS)
            .expect_records([("bob", Shipment::new(&bobs, Some("5 Oak Ave")))])
            .expect_no_more_records();
        shipments(&t, ORDER_STATUS)
            .expect_records([
                ("alice", Shipment::new(&after, None)),
                ("bob", Shipment::new(&bobs, Some("5 Oak Ave"))),
            ])
            .expect_no_more_records();

        // A new address after the erasure is a fresh start.
        addresses.add("alice", "2 New St");
        let again = order(&orders, "o-4", "alice", "rug");
        shipments(&t, SHIPMENTS)
            .expect_records([("alice", Shipment::new(&again, Some("2 New St")))])
            .expect_no_more_records();
        Ok(())
    }

    /// A downstream copy of the table, built from `latest-addresses`, has
    /// each customer's latest address and no erased customer.
    #[test]
    fn a_downstream_copy_of_the_table_forgets_an_erased_customer() -> Result<()> {
        let t = shop()?;
        t.input_named(ADDRESSES)
            .add("alice", "1 Main St")
            .add("bob", "5 Oak Ave")
            .add("alice", "9 Elm Rd")
            .add_tombstone("alice")
            .add("carol", "7 Pine Ct")
            .add("bob", "6 Oak Ave");
        t.table_output_named(LATEST_ADDRESSES)
            .has_no_key("alice")
            .has_entry("bob", "6 Oak Ave")
            .has_entry("carol", "7 Pine Ct")
            .has_size(2);
        Ok(())
    }

    /// Restoring a store is below what the fluent layer covers: the raw
    /// changelog is read through the driver and replayed into a new store.
    #[test]
    fn a_store_restored_from_the_changelog_has_no_erased_address() -> Result<()> {
        let t = shop()?;
        t.input_named(ADDRESSES)
            .at(10)
            .add("alice", "1 Main St")
            .at(20)
            .add("bob", "5 Oak Ave")
            .at(30)
            .add("carol", "7 Pine Ct")
            .at(40)
            .add("bob", "6 Oak Ave")
            .add_tombstone("alice");
        t.store::<String, String>(STORE)
            .has_entry_with_timestamp("bob", "6 Oak Ave", 40)
            .has_entry_with_timestamp("carol", "7 Pine Ct", 30)
            .has_size(2);
        let driver = t.driver();
        let original = driver
            .timestamped_key_value_store::<String, String>(STORE)?
            .all();
        let raw = driver.create_output_topic(
            CHANGELOG,
            streams_core::serde::BytesSerde,
            streams_core::serde::BytesSerde,
        );
        let records: Vec<RawRecord> = raw
            .read_records_to_list()
            .into_iter()
            .map(|r| RawRecord::new(r.key, r.value, r.timestamp.unwrap_or(-1)))
            .collect();
        assert_eq!(records.len(), 5);
        let builder = Stores::timestamped_key_value_store_builder::<String, String>(
            STORE,
            StringSerde,
            StringSerde,
        );
        let mut store = builder.build(&StreamsConfig::new(APP))?;
        let restored = store
            .as_any_mut()
            .downcast_mut::<TimestampedKeyValueStore<String, String>>()
            .expect("a timestamped key-value store builder builds one");
        restored.restore(&records)?;
        let restored: Vec<_> = restored.all()?.collect();
        assert_eq!(restored, original);
        assert_eq!(
            restored,
            [
                (
                    "bob".to_owned(),
                    ValueAndTimestamp::new("6 Oak Ave".to_owned(), 40)
                ),
                (
                    "carol".to_owned(),
                    ValueAndTimestamp::new("7 Pine Ct".to_owned(), 30)
                ),
            ]
        );
        Ok(())
    }

    #[test]
    fn both_joins_share_one_repartition_topic() -> Result<()> {
        let t = shop()?;
        t.input_named(ADDRESSES).add("alice", "1 Main St");
        order(&orders(&t), "o-1", "alice", "book");
        assert_eq!(
            t.driver()
                .produced_topic_names()
                .into_iter()
                .collect::<Vec<_>>(),
            [
                LATEST_ADDRESSES,
                ORDER_STATUS,
                SHIPMENTS,
                "shop-KSTREAM-KEY-SELECT-0000000005-repartition",
                CHANGELOG,
            ]
        );
        assert_eq!(
            t.internal_topics(),
            ["shop-KSTREAM-KEY-SELECT-0000000005-repartition", CHANGELOG]
        );
        let topology = topology()?;
        assert_eq!(topology.store_names(), [STORE]);
        for join in ["KSTREAM-JOIN-0000000009", "KSTREAM-LEFTJOIN-0000000014"] {
            assert_eq!(
                topology.node_store_names(join),
                Some(&[STORE.to_owned()][..]),
                "{join}"
            );
        }
        Ok(())
    }
}
