//! Runs the order-routing topology in the test driver and prints what goes
//! in and what comes out: `cargo run --example orders`.

use std::time::Duration;

use streams_core::serde::{JsonSerde, StringSerde};
use streams_examples::orders::{self, Order, RoutedOrder};
use streams_test::TopologyTestDriver;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let driver = TopologyTestDriver::new(orders::topology()?)?;
    // The orders arrive one second apart, from 2026-01-01T00:00:00Z.
    let input = driver.create_input_topic_with_time(
        "orders",
        StringSerde,
        JsonSerde::<Order>::new(),
        1_767_225_600_000,
        Duration::from_secs(1),
    );
    let orders = [
        Order::new("o-1", "alice", "eu", 12_500, "placed"),
        Order::new("o-2", "bob", "us", 900, "paid"),
        Order::new("o-3", "carol", "eu", 5_000, "cancelled"),
        Order::new("o-4", "dan", "apac", 10_000, "placed"),
        Order::new("o-5", "erin", "us", 25_000, "paid"),
    ];
    println!("piped into `orders`:");
    for order in orders {
        println!("  {} -> {}", order.id, serde_json::to_string(&order)?);
        input.try_pipe_record(streams_test::TestRecord::key_value(order.id.clone(), order))?;
    }
    for topic in ["orders-eu", "orders-us", "orders-other"] {
        let output =
            driver.create_output_topic(topic, StringSerde, JsonSerde::<RoutedOrder>::new());
        println!("read from `{topic}`:");
        for record in output.read_records_to_list() {
            let value = record
                .value
                .map(|v| serde_json::to_string(&v))
                .transpose()?;
            println!(
                "  {} -> {} (at {} ms)",
                record.key.unwrap_or_default(),
                value.unwrap_or_else(|| "null".into()),
                record.timestamp.unwrap_or_default()
            );
        }
    }
    println!("dropped records: {}", driver.metrics().dropped_records);
    Ok(())
}
