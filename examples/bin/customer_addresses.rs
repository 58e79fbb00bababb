//! Runs the customer-address topology in the test driver: addresses and
//! orders of two customers, then a GDPR erasure of one of them, and what
//! each output topic and the address store hold after it:
//! `cargo run --example customer_addresses`.

use streams_core::StreamsConfig;
use streams_core::serde::{JsonSerde, StringSerde};
use streams_examples::customer_addresses::{
    self as example, ADDRESSES, LATEST_ADDRESSES, ORDER_STATUS, ORDERS, Order, SHIPMENTS, STORE,
    Shipment,
};
use streams_test::{TestRecord, TopologyTestDriver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let driver = TopologyTestDriver::with_config(example::topology()?, StreamsConfig::new("shop"))?;
    let addresses = driver.create_input_topic(ADDRESSES, StringSerde, StringSerde);
    let orders = driver.create_input_topic(ORDERS, StringSerde, JsonSerde::<Order>::new());

    let address = |customer: &str, address: Option<&str>| {
        println!(
            "  `{ADDRESSES}`: {customer} -> {}",
            address.unwrap_or("null (erase)")
        );
        addresses.try_pipe_record(TestRecord::new(
            Some(customer.to_owned()),
            address.map(str::to_owned),
        ))
    };
    let order = |id: &str, customer: &str, item: &str| {
        println!("  `{ORDERS}`: {id} -> {customer} orders a {item}");
        orders.try_pipe_record(TestRecord::key_value(id, Order::new(id, customer, item)))
    };
    println!("piped in:");
    address("alice", Some("1 Main St"))?;
    address("bob", Some("5 Oak Ave"))?;
    order("o-1", "alice", "book")?;
    order("o-2", "bob", "desk")?;
    address("alice", None)?;
    order("o-3", "alice", "lamp")?;

    for topic in [SHIPMENTS, ORDER_STATUS] {
        let output = driver.create_output_topic(topic, StringSerde, JsonSerde::<Shipment>::new());
        println!("read from `{topic}`:");
        for record in output.read_key_values_to_list() {
            let value = record
                .value
                .map(|v| serde_json::to_string(&v))
                .transpose()?;
            println!(
                "  {} -> {}",
                record.key.unwrap_or_default(),
                value.unwrap_or_else(|| "null".into())
            );
        }
    }
    let latest = driver.create_output_topic(LATEST_ADDRESSES, StringSerde, StringSerde);
    println!("read from `{LATEST_ADDRESSES}`:");
    for record in latest.read_key_values_to_list() {
        println!(
            "  {} -> {}",
            record.key.unwrap_or_default(),
            record.value.as_deref().unwrap_or("null (tombstone)")
        );
    }
    println!("store `{STORE}`:");
    for (customer, address) in driver
        .timestamped_key_value_store::<String, String>(STORE)?
        .to_map()
    {
        println!("  {customer} -> {address}");
    }
    Ok(())
}
