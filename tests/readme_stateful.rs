// The stateful test shown in README.md, verbatim (checked by `readme_rust_blocks_are_tested`).
use std::time::Duration;

use streams_core::StreamsBuilder;
use streams_core::dsl::JoinWindows;
use streams_core::serde::{I64Serde, StringSerde};
use streams_test::{KeyValue, TopologyTestDriver};

#[test]
fn unpaid_orders_and_items_per_order() -> Result<(), Box<dyn std::error::Error>> {
    let builder = StreamsBuilder::new();
    let orders = builder.stream::<String, String>("orders");
    let payments = builder.stream::<String, String>("payments");
    // A windowed left join: an order without a payment within a minute
    // comes out as unpaid once its window has closed.
    let within_a_minute = JoinWindows::of_time_difference_with_no_grace(Duration::from_secs(60))?;
    orders
        .clone()
        .left_join_stream(
            &payments,
            |order, paid| format!("{order}: {}", paid.map_or("unpaid", String::as_str)),
            within_a_minute,
        )
        .to("order-status");
    // Items per order: one order line updates its count once per item, and
    // the record cache hands on one result per line, as Kafka's driver does.
    orders
        .flat_map_values(|items: &String| items.split(',').map(str::to_owned).collect::<Vec<_>>())
        .group_by_key()
        .count()
        .to_stream()
        .to_with("items", streams_core::Produced::with(StringSerde, I64Serde));

    let driver = TopologyTestDriver::new(builder.build()?)?;
    let orders_in = driver.create_input_topic("orders", StringSerde, StringSerde);
    let payments_in = driver.create_input_topic("payments", StringSerde, StringSerde);
    let status = driver.create_output_topic("order-status", StringSerde, StringSerde);
    let items = driver.create_output_topic("items", StringSerde, I64Serde);

    orders_in.pipe_key_value_at("o1", "book,pen,ink", 0);
    orders_in.pipe_key_value_at("o2", "mug", 1_000);
    payments_in.pipe_key_value_at("o2", "card", 2_000);
    assert_eq!(
        status.read_key_values_to_list(),
        [KeyValue::pair("o2", "mug: card")]
    );
    assert_eq!(
        items.read_key_values_to_list(),
        [KeyValue::pair("o1", 3), KeyValue::pair("o2", 1)]
    );
    // Stream time passes o1's window (0 + 60 s): only now is it unpaid.
    orders_in.pipe_key_value_at("o3", "cup", 61_000);
    assert_eq!(
        status.read_key_values_to_list(),
        [KeyValue::pair("o1", "book,pen,ink: unpaid")]
    );
    Ok(())
}
