//! A sink connector whose transform fails on one record, with
//! `errors.tolerance=all` and a dead letter queue:
//! `cargo run --example connect_dead_letter_queue`.

use streams_examples::connect_dead_letter_queue::{self, DLQ, TOPIC};

fn text(bytes: Option<&[u8]>) -> String {
    bytes.map_or_else(
        || "null".to_owned(),
        |b| String::from_utf8_lossy(b).into_owned(),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let outcome = connect_dead_letter_queue::run()?;
    println!("== the sink task received ({TOPIC})");
    for record in &outcome.delivered {
        println!("  offset {}: {:?}", record.kafka_offset, record.value);
    }
    println!("== the dead letter queue ({DLQ})");
    for dead in &outcome.dead_letters {
        println!(
            "  key {} value {}",
            text(dead.key.as_deref()),
            text(dead.value.as_deref())
        );
        for (key, value) in &dead.headers {
            println!("    {key} = {}", text(value.as_deref()).trim_end());
        }
    }
    println!("== task error metrics");
    for (name, value) in &outcome.metrics {
        println!("  {name} = {value}");
    }
    for line in &outcome.logged {
        println!("== logged: {line}");
    }
    Ok(())
}
