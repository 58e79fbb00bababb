//! What the driver's retained records cost in memory. The driver keeps
//! every record written to every topic (output, repartition, changelog)
//! until a test reads it, so a test that pipes much and reads little holds
//! all of it. Two workloads, each piped without reading:
//!
//! - stateless: 1,000,000 string records through `filter` + `map_values`
//!   (the `stateless` benchmark's data, made one at a time so that the
//!   inputs take no memory), 900,000 kept on the output topic;
//! - word count: 100,000 lines of 10 words (the `word_count` benchmark's),
//!   each word leaving a repartition, a changelog and an output record.
//!
//! For each: the heap the driver holds afterwards (bytes allocated minus
//! bytes freed, counted by `stats_alloc` as the global allocator), per
//! retained record and against the records' own key and value bytes; and
//! the peak resident memory while piping (`VmHWM` of `/proc/self/status`,
//! reset through `/proc/self/clear_refs` before, what `/usr/bin/time -v`
//! reports as the maximum resident set size), less the resident memory
//! before. The retained records are then read back, to check them. Each
//! workload runs in a process of its own
//! (`STREAMS_BENCH_MEMORY=stateless` or `=word-count` runs one).
//!
//! Run: `cargo bench -p streams-test --bench memory` (Linux for the
//! resident figures; the heap figures anywhere).

use std::alloc::System;
use std::hint::black_box;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use streams_core::StreamsBuilder;
use streams_core::dsl::{Materialized, Produced};
use streams_core::serde::{I64Serde, StringSerde};
use streams_test::TopologyTestDriver;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const RECORDS: usize = 1_000_000;
const LINES: usize = 100_000;

/// A field of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`), where there is one.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets `VmHWM` to the current resident size (Linux 4.0 and later).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Heap bytes held now against the start of `region`.
fn held(region: &Region<'_, System>) -> i64 {
    let change = region.change();
    change.bytes_allocated as i64 - change.bytes_deallocated as i64
}

/// Runs `pipe` (which returns how many records it left retained and their
/// key and value bytes) and prints what it held and its peak.
fn measure(what: &str, pipe: impl FnOnce() -> (usize, usize)) {
    reset_peak();
    let rss_before = status_kib("VmRSS:");
    let region = Region::new(GLOBAL);
    let (records, payload) = pipe();
    let bytes = held(&region);
    let peak = status_kib("VmHWM:");
    println!(
        "{what}: {records} records retained, {:.1} MB of heap: {:.1} bytes a record \
         (their keys and values: {:.1} bytes a record on average)",
        bytes as f64 / 1e6,
        bytes as f64 / records as f64,
        payload as f64 / records as f64,
    );
    if let (Some(before), Some(peak)) = (rss_before, peak) {
        println!(
            "{what}: peak resident memory while piping {:.1} MB above the {:.1} MB before \
             (VmHWM: the maximum resident set size /usr/bin/time -v reports, here over the piping alone)",
            peak.saturating_sub(before) as f64 / 1024.0,
            before as f64 / 1024.0,
        );
    }
}

fn keep(value: &str) -> bool {
    !value.ends_with('7')
}

fn stateless() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("input")
        .filter(|_, v| keep(v))
        .map_values(|v| v.to_ascii_uppercase())
        .to("output");
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let input = driver.create_input_topic("input", StringSerde, StringSerde);
    let output = driver.create_output_topic("output", StringSerde, StringSerde);
    measure("stateless, 1M records piped", || {
        let (mut kept, mut payload) = (0, 0);
        for i in 0..RECORDS {
            let (key, value) = (format!("key-{}", i % 1000), format!("value number {i}"));
            if keep(&value) {
                kept += 1;
                payload += key.len() + value.len();
            }
            input.pipe_key_value(key, value);
        }
        (kept, payload)
    });
    let read = output.read_key_values_to_list();
    assert_eq!(read.len(), RECORDS / 10 * 9);
    black_box(read);
}

/// The `word_count` benchmark's lines: 10 words each from a 5,000-word vocabulary.
fn line(state: &mut u64) -> String {
    (0..10)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            format!("Word{}", *state % 5_000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn word_count() {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>("lines")
        .flat_map_values(|line: &String| line.split(' ').map(str::to_lowercase).collect::<Vec<_>>())
        .group_by(|_, word| word.clone())
        .count_with(Materialized::as_("counts"))
        .to_stream()
        .to_with("counts-out", Produced::with(StringSerde, I64Serde));
    let driver = TopologyTestDriver::new(builder.build().expect("topology")).expect("driver");
    let input = driver.create_input_topic("lines", StringSerde, StringSerde);
    let output = driver.create_output_topic("counts-out", StringSerde, I64Serde);
    measure(
        "word count, 1M words piped (repartition, changelog and output records, the store)",
        || {
            let mut state: u64 = 0x2545_f491_4f6c_dd1d;
            let mut payload = 0;
            for _ in 0..LINES {
                let line = line(&mut state);
                // Per word: the repartition record (word, word), the
                // changelog and the output record (word, 8-byte count).
                payload += line
                    .split(' ')
                    .map(|w| 2 * w.len() + 2 * (w.len() + 8))
                    .sum::<usize>();
                input.pipe_value(line);
            }
            (3 * LINES * 10, payload)
        },
    );
    assert_eq!(output.read_key_values_to_list().len(), LINES * 10);
}

/// Each workload runs in a process of its own (this program again, with
/// `STREAMS_BENCH_MEMORY` naming it), so that neither finds the other's
/// freed memory to reuse.
fn main() {
    match std::env::var("STREAMS_BENCH_MEMORY").as_deref() {
        Ok("stateless") => stateless(),
        Ok("word-count") => word_count(),
        _ => {
            let me = std::env::current_exe().expect("this program's path");
            for workload in ["stateless", "word-count"] {
                let status = std::process::Command::new(&me)
                    .env("STREAMS_BENCH_MEMORY", workload)
                    .status()
                    .expect("run a workload");
                assert!(status.success(), "{workload}: {status}");
            }
        }
    }
}
