//! The life of a GDPR tombstone on a compacted topic, with Kafka's fix
//! (KIP-534) and with the KAFKA-8522 bug it fixed:
//! `cargo run --example tombstone_life`.

use streams_broker::TombstoneRetention;
use streams_examples::tombstone_life;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (title, retention, duration) in [
        (
            "Kafka 3.1+ (KIP-534: delete horizon per batch)",
            TombstoneRetention::DeleteHorizon,
            3_000,
        ),
        (
            "before KIP-534 (KAFKA-8522)",
            TombstoneRetention::LegacyLastModified,
            20_000,
        ),
    ] {
        println!(
            "== {title}, delete.retention.ms={}",
            tombstone_life::DELETE_RETENTION_MS
        );
        let life = tombstone_life::run(retention, duration)?;
        for (at, event) in &life.timeline {
            println!("  +{at:>6} ms  {event}");
        }
    }
    Ok(())
}
