//! The word count run by `KafkaStreams` on the simulated cluster, two
//! instances over 4 partitions, one crashing mid-stream, under
//! at-least-once and exactly-once: `cargo run --example runtime_word_count`.

use streams_core::runtime::ProcessingGuarantee;
use streams_examples::runtime_word_count::{self, COMMITTED_LINES, UNCOMMITTED_LINES};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("input, line-0 to line-4 (keyed by line, spread over 4 partitions):");
    for (n, line) in COMMITTED_LINES.iter().chain(&UNCOMMITTED_LINES).enumerate() {
        println!("  line-{n}: {line}");
    }
    println!(
        "each instance: commit.interval.ms {}, session.timeout.ms {}, statestore.cache.max.bytes 0 (each count update is sent at once)",
        runtime_word_count::COMMIT_INTERVAL_MS,
        runtime_word_count::SESSION_TIMEOUT_MS
    );
    for guarantee in [
        ProcessingGuarantee::AtLeastOnce,
        ProcessingGuarantee::ExactlyOnceV2,
    ] {
        for line in runtime_word_count::run(guarantee)?.report() {
            println!("{line}");
        }
    }
    Ok(())
}
