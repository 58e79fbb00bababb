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
    use streams_test::{KeyValue, TestInputTopic, TestOutputTopic, TopologyTestDriver};

    const APP: &str = "shop";
    const CHANGELOG: &str = "shop-customer-addresses-store-changelog";

    fn driver() -> Result<TopologyTestDriver> {
        TopologyTestDriver::with_config(topology()?, StreamsConfig::new(APP))
    }

    struct Topics<'d> {
        addresses: TestInputTopic<'d, String, String>,
        orders: TestInputTopic<'d, String, Order>,
        shipments: TestOutputTopic<'d, String, Shipment>,
        status: TestOutputTopic<'d, String, Shipment>,
        latest: TestOutputTopic<'d, String, String>,
        changelog: TestOutputTopic<'d, String, String>,
    }

    fn topics(driver: &TopologyTestDriver) -> Topics<'_> {
        let shipments =
            |t| driver.create_output_topic(t, StringSerde, JsonSerde::<Shipment>::new());
        Topics {
            addresses: driver.create_input_topic(ADDRESSES, StringSerde, StringSerde),
            orders: driver.create_input_topic(ORDERS, StringSerde, JsonSerde::<Order>::new()),
            shipments: shipments(SHIPMENTS),
            status: shipments(ORDER_STATUS),
            latest: driver.create_output_topic(LATEST_ADDRESSES, StringSerde, StringSerde),
            changelog: driver.create_output_topic(CHANGELOG, StringSerde, StringSerde),
        }
    }

    fn order(t: &Topics<'_>, id: &str, customer: &str, item: &str) -> Order {
        let order = Order::new(id, customer, item);
        t.orders.pipe_key_value(id, order.clone());
        order
    }

    #[test]
    fn orders_ship_to_the_latest_address() -> Result<()> {
        let driver = driver()?;
        let t = topics(&driver);
        let early = order(&t, "o-0", "alice", "pen");
        t.addresses.pipe_key_value("alice", "1 Main St");
        let first = order(&t, "o-1", "alice", "book");
        t.addresses.pipe_key_value("alice", "9 Elm Rd");
        let second = order(&t, "o-2", "alice", "lamp");
        t.addresses.pipe_key_value("bob", "5 Oak Ave");
        let third = order(&t, "o-3", "bob", "desk");
        assert_eq!(
            t.shipments.read_key_values_to_list(),
            [
                KeyValue::pair("alice", Shipment::new(&first, Some("1 Main St"))),
                KeyValue::pair("alice", Shipment::new(&second, Some("9 Elm Rd"))),
                KeyValue::pair("bob", Shipment::new(&third, Some("5 Oak Ave"))),
            ]
        );
        // The order placed before any address shows without one.
        assert_eq!(
            t.status.read_key_values_to_list(),
            [
                KeyValue::pair("alice", Shipment::new(&early, None)),
                KeyValue::pair("alice", Shipment::new(&first, Some("1 Main St"))),
                KeyValue::pair("alice", Shipment::new(&second, Some("9 Elm Rd"))),
                KeyValue::pair("bob", Shipment::new(&third, Some("5 Oak Ave"))),
            ]
        );
        // Address changes do not ship anything by themselves.
        assert_eq!(t.latest.read_key_values_to_list().len(), 3);
        Ok(())
    }

    #[test]
    fn gdpr_erasure_removes_the_customer_everywhere() -> Result<()> {
        let driver = driver()?;
        let t = topics(&driver);
        t.addresses.pipe_key_value("alice", "1 Main St");
        t.addresses.pipe_key_value("bob", "5 Oak Ave");
        let before = order(&t, "o-1", "alice", "book");
        t.shipments.read_key_values_to_list();
        t.status.read_key_values_to_list();

        // Erase alice.
        t.addresses.pipe_tombstone("alice");

        // The table and its store.
        let store = driver.timestamped_key_value_store::<String, String>(STORE)?;
        assert_eq!(store.get(&"alice".to_owned()), None);
        assert_eq!(
            store.to_map().into_iter().collect::<Vec<_>>(),
            [("bob".to_owned(), "5 Oak Ave".to_owned())]
        );
        // The changelog: a tombstone after the address.
        assert_eq!(
            t.changelog.read_key_values_to_list(),
            [
                KeyValue::pair("alice", "1 Main St"),
                KeyValue::pair("bob", "5 Oak Ave"),
                KeyValue::tombstone("alice"),
            ]
        );
        // Downstream: a tombstone on the table's stream.
        assert_eq!(
            t.latest.read_key_values_to_list(),
            [
                KeyValue::pair("alice", "1 Main St"),
                KeyValue::pair("bob", "5 Oak Ave"),
                KeyValue::tombstone("alice"),
            ]
        );

        // Later orders: not shipped (inner join), held without an
        // address (left join); bob's still ship.
        let after = order(&t, "o-2", "alice", "lamp");
        let bobs = order(&t, "o-3", "bob", "desk");
        assert_eq!(
            t.shipments.read_key_values_to_list(),
            [KeyValue::pair(
                "bob",
                Shipment::new(&bobs, Some("5 Oak Ave"))
            )]
        );
        assert_eq!(
            t.status.read_key_values_to_list(),
            [
                KeyValue::pair("alice", Shipment::new(&after, None)),
                KeyValue::pair("bob", Shipment::new(&bobs, Some("5 Oak Ave"))),
            ]
        );
        assert_ne!(before, after);

        // A new address after the erasure is a fresh start.
        t.addresses.pipe_key_value("alice", "2 New St");
        let again = order(&t, "o-4", "alice", "rug");
        assert_eq!(
            t.shipments.read_key_values_to_list(),
            [KeyValue::pair(
                "alice",
                Shipment::new(&again, Some("2 New St"))
            )]
        );
        Ok(())
    }

    #[test]
    fn a_store_restored_from_the_changelog_has_no_erased_address() -> Result<()> {
        let driver = driver()?;
        let t = topics(&driver);
        t.addresses.pipe_key_value_at("alice", "1 Main St", 10);
        t.addresses.pipe_key_value_at("bob", "5 Oak Ave", 20);
        t.addresses.pipe_key_value_at("carol", "7 Pine Ct", 30);
        t.addresses.pipe_key_value_at("bob", "6 Oak Ave", 40);
        t.addresses.pipe_tombstone("alice");
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
            .ok_or_else(|| streams_core::StreamsError::InvalidArgument("not timestamped".into()))?;
        restored.restore(&records)?;
        let restored: Vec<_> = restored
            .all()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
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
        let driver = driver()?;
        let t = topics(&driver);
        t.addresses.pipe_key_value("alice", "1 Main St");
        order(&t, "o-1", "alice", "book");
        assert_eq!(
            driver
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
