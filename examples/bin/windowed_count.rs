//! Runs the windowed page-view count in the test driver: views of three
//! users over twelve minutes, one of them too late for its window, and the
//! one final count per user and 5-minute window that comes out:
//! `cargo run --example windowed_count`.

use streams_core::StreamsConfig;
use streams_core::serde::{I64Serde, StringSerde};
use streams_examples::windowed_count::{self, INPUT, OUTPUT, STORE};
use streams_test::{TestRecord, TopologyTestDriver};

const MIN: i64 = 60_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let driver = TopologyTestDriver::with_config(
        windowed_count::topology()?,
        StreamsConfig::new("page-views-app"),
    )?;
    let views = driver.create_input_topic(INPUT, StringSerde, StringSerde);
    let counts = driver.create_output_topic(OUTPUT, windowed_count::key_serde(), I64Serde);

    // (minute, user, page): the view at minute 2 comes after stream time
    // has reached minute 6, the end of [0, 5) plus the minute of grace.
    let sample = [
        (0, "alice", "/home"),
        (1, "bob", "/home"),
        (4, "alice", "/cart"),
        (5, "alice", "/pay"),
        (6, "bob", "/cart"),
        (2, "carol", "/home"),
        (11, "carol", "/home"),
    ];
    println!("piped into `{INPUT}`:");
    for (minute, user, page) in sample {
        println!("  minute {minute:>2}: {user} viewed {page}");
        views.try_pipe_record(TestRecord::key_value(user, page).at(minute * MIN))?;
        for record in counts.read_records_to_list() {
            let (Some(key), Some(count)) = (record.key, record.value) else {
                continue;
            };
            println!(
                "    `{OUTPUT}`: {} viewed {count} page(s) in minutes [{}, {})",
                key.key,
                key.window.start / MIN,
                key.window.end / MIN
            );
        }
    }

    let store = driver.window_store::<String, i64>(STORE)?;
    println!("store `{STORE}` (the running counts of the windows it still retains):");
    for (key, count) in store.all() {
        println!("  {key} -> {count}");
    }
    println!(
        "dropped records (too late): {}",
        driver.metrics().dropped_records
    );
    Ok(())
}
