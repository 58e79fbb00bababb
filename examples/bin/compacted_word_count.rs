//! Word count whose changelog is compacted on the simulated broker and
//! restored into a new driver: `cargo run --example compacted_word_count`.

use streams_examples::compacted_word_count::{self, LINES};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("lines counted by the first driver: {LINES:?}");
    let run = compacted_word_count::run()?;
    println!("store of the first driver: {:?}", run.original);
    println!(
        "changelog `{}`: {} records before compaction, {} after, at offsets {:?}",
        compacted_word_count::changelog(),
        run.changelog_before,
        run.changelog_after,
        run.changelog_offsets
    );
    println!(
        "repartition topic purged with delete-records: low watermark {}",
        run.repartition_low_watermark
    );
    println!(
        "store of the second driver, restored from the compacted changelog: {:?}",
        run.restored
    );
    println!(
        "one more \"Kafka\" in the second driver counts {}",
        run.next_kafka_count
            .map_or("nothing".to_owned(), |c| c.to_string())
    );
    Ok(())
}
