//! Property tests: invariants of the driver, the test topics and
//! punctuation that hold for any input.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use streams_core::processor::{Processor, ProcessorContext, Punctuation, PunctuationType};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Record, Result, StreamsBuilder, Topology};
use streams_test::{KeyValue, TestRecord, TopologyTestDriver};

use crate::support::Log;

fn identity_driver() -> TopologyTestDriver {
    let builder = StreamsBuilder::new();
    builder.stream::<String, String>("in").to("out");
    TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts")
}

fn key() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[a-e]{1,2}")
}

fn value() -> impl Strategy<Value = Option<String>> {
    proptest::option::weighted(0.8, "\\PC{0,8}")
}

/// The punctuation model of `streams_test::semantics`: aligned to 0, fires on the
/// first record at or past the next boundary with the current stream time,
/// missed ticks skipped.
fn model_stream_punctuations(timestamps: &[i64], interval: i64) -> Vec<i64> {
    let mut next = 0;
    let mut stream_time = -1;
    let mut fired = Vec::new();
    for &ts in timestamps {
        stream_time = stream_time.max(ts);
        if stream_time >= next {
            fired.push(stream_time);
            let missed = (stream_time - next) / interval;
            next += (missed + 1) * interval;
        }
    }
    fired
}

/// Logs the time of every punctuation of one stream-time schedule.
struct StreamTicker {
    log: Log,
    interval: u64,
}

impl Processor<String, String> for StreamTicker {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, String, String>) -> Result<()> {
        ctx.schedule(
            Duration::from_millis(self.interval),
            PunctuationType::StreamTime,
        )
        .map(|_| ())
    }

    fn process(
        &mut self,
        _ctx: &mut ProcessorContext<'_, String, String>,
        _record: Record<String, String>,
    ) -> Result<()> {
        Ok(())
    }

    fn punctuate(
        &mut self,
        _ctx: &mut ProcessorContext<'_, String, String>,
        ts: i64,
        _p: &Punctuation,
    ) -> Result<()> {
        self.log.push(ts.to_string());
        Ok(())
    }
}

/// Logs the offset and topic of every record.
struct OffsetProbe {
    log: Log,
}

impl Processor<String, String> for OffsetProbe {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, String, String>,
        _record: Record<String, String>,
    ) -> Result<()> {
        let m = ctx
            .record_metadata()
            .expect("a record being processed has metadata");
        self.log.push(format!("{}@{}", m.topic, m.offset));
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Through an identity topology, records come out in order, with the
    /// same keys, values, timestamps and headers; stream time is the
    /// largest timestamp.
    #[test]
    fn identity_topology_preserves_records(
        records in proptest::collection::vec((key(), value(), 0_i64..1_000_000_000_000, proptest::option::of("[a-z]{1,3}")), 0..24)
    ) {
        let driver = identity_driver();
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        let output = driver.create_output_topic("out", StringSerde, StringSerde);
        let piped: Vec<TestRecord<String, String>> = records
            .iter()
            .map(|(k, v, ts, h)| {
                let r = TestRecord::new(k.clone(), v.clone()).at(*ts);
                match h {
                    Some(h) => r.with_header(h.clone(), h.as_bytes()),
                    None => r,
                }
            })
            .collect();
        input.pipe_records(piped.clone());
        prop_assert_eq!(output.read_records_to_list(), piped);
        prop_assert!(output.is_empty());
        let max = records.iter().map(|(_, _, ts, _)| *ts).max().unwrap_or(-1);
        prop_assert_eq!(driver.stream_time(), max);
        prop_assert_eq!(driver.metrics().processed_records, records.len() as u64);
    }

    /// `read_table` is the fold of the records into a map where the last
    /// value per key wins and a tombstone removes the key;
    /// `read_key_values_to_map` keeps the tombstoned keys with `None`.
    #[test]
    fn read_table_is_the_last_value_per_key_without_tombstones(
        records in proptest::collection::vec(("[a-e]", proptest::option::weighted(0.7, any::<i64>())), 0..32)
    ) {
        let builder = StreamsBuilder::new();
        builder.stream::<String, i64>("in").to("out");
        let driver = TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
        let input = driver.create_input_topic("in", StringSerde, I64Serde);
        let output = driver.create_output_topic("out", StringSerde, I64Serde);

        let mut table: HashMap<String, i64> = HashMap::new();
        let mut map: HashMap<String, Option<i64>> = HashMap::new();
        for (k, v) in &records {
            match v {
                Some(v) => { table.insert(k.clone(), *v); }
                None => { table.remove(k); }
            }
            map.insert(k.clone(), *v);
        }

        input.pipe_records(records.iter().map(|(k, v)| TestRecord::new(Some(k.clone()), *v)));
        prop_assert_eq!(output.read_table(), table);
        input.pipe_records(records.iter().map(|(k, v)| TestRecord::new(Some(k.clone()), *v)));
        prop_assert_eq!(output.read_key_values_to_map(), map);
        prop_assert!(output.is_empty());
    }

    /// `filter` and `filter_not` with the same predicate split the values
    /// between them, each keeping the input order.
    #[test]
    fn filter_and_filter_not_partition_the_stream(
        values in proptest::collection::vec("[a-z]{0,6}", 0..24),
        threshold in 0_usize..7
    ) {
        let builder = StreamsBuilder::new();
        let s = builder.stream::<String, String>("in");
        s.clone().filter(move |_, v| v.len() >= threshold).to("kept");
        s.filter_not(move |_, v| v.len() >= threshold).to("dropped");
        let driver = TopologyTestDriver::new(builder.build().expect("valid topology")).expect("driver starts");
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        input.pipe_values(values.clone());
        let kept = driver.create_output_topic("kept", StringSerde, StringSerde).read_values_to_list();
        let dropped = driver.create_output_topic("dropped", StringSerde, StringSerde).read_values_to_list();
        let (expect_kept, expect_dropped): (Vec<String>, Vec<String>) =
            values.into_iter().partition(|v| v.len() >= threshold);
        prop_assert_eq!(kept, expect_kept.into_iter().map(Some).collect::<Vec<_>>());
        prop_assert_eq!(dropped, expect_dropped.into_iter().map(Some).collect::<Vec<_>>());
    }

    /// Records piped without a timestamp get `start + i * step`.
    #[test]
    fn topic_clock_auto_advances(start in 0_i64..1_000_000, step in 0_u64..10_000, n in 0_usize..16) {
        let driver = identity_driver();
        let input = driver.create_input_topic_with_time("in", StringSerde, StringSerde, start, Duration::from_millis(step));
        let output = driver.create_output_topic("out", StringSerde, StringSerde);
        input.pipe_values((0..n).map(|i| i.to_string()));
        let times: Vec<Option<i64>> = output.read_records_to_list().into_iter().map(|r| r.timestamp).collect();
        let expected: Vec<Option<i64>> = (0..n as i64).map(|i| Some(start + i * step as i64)).collect();
        prop_assert_eq!(times, expected);
        prop_assert_eq!(input.current_time(), start + n as i64 * step as i64);
    }

    /// Stream-time punctuation follows the model for any timestamps,
    /// in order or not.
    #[test]
    fn stream_time_punctuation_follows_the_model(
        timestamps in proptest::collection::vec(0_i64..500, 1..40),
        interval in 1_u64..60
    ) {
        let log = Log::new();
        let supplier = {
            let log = log.clone();
            move || StreamTicker { log: log.clone(), interval }
        };
        let mut topology = Topology::new();
        topology
            .add_source::<String, String>("source", "in")
            .and_then(|t| t.add_processor("ticker", supplier, &["source"]))
            .expect("valid topology");
        let driver = TopologyTestDriver::new(topology).expect("driver starts");
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        for &ts in &timestamps {
            input.pipe_value_at("v", ts);
        }
        let fired: Vec<i64> = log.entries().iter().map(|e| e.parse().expect("a number")).collect();
        prop_assert_eq!(fired, model_stream_punctuations(&timestamps, interval as i64));
    }

    /// Offsets count from 0 per input topic, whatever the interleaving.
    #[test]
    fn input_offsets_count_per_topic(topics in proptest::collection::vec(prop_oneof![Just("a"), Just("b")], 0..20)) {
        let log = Log::new();
        let supplier = {
            let log = log.clone();
            move || OffsetProbe { log: log.clone() }
        };
        let mut topology = Topology::new();
        topology
            .add_source::<String, String>("source", ["a", "b"])
            .and_then(|t| t.add_processor("probe", supplier, &["source"]))
            .expect("valid topology");
        let driver = TopologyTestDriver::new(topology).expect("driver starts");
        let mut counts: HashMap<&str, i64> = HashMap::new();
        let mut expected = Vec::new();
        for topic in &topics {
            let offset = counts.entry(topic).or_insert(0);
            expected.push(format!("{topic}@{offset}"));
            *offset += 1;
            driver.create_input_topic(topic, StringSerde, StringSerde).pipe_value_at("v", 1);
        }
        prop_assert_eq!(log.entries(), expected);
    }

    /// `read_key_values_to_list` and `read_values_to_list` agree with
    /// `read_records_to_list` on the same output.
    #[test]
    fn list_reads_agree(records in proptest::collection::vec((key(), value()), 0..16)) {
        let driver = identity_driver();
        let input = driver.create_input_topic("in", StringSerde, StringSerde);
        let output = driver.create_output_topic("out", StringSerde, StringSerde);
        let piped = || records.iter().map(|(k, v)| TestRecord::new(k.clone(), v.clone()));
        input.pipe_records(piped());
        let full = output.read_records_to_list();
        input.pipe_records(piped());
        let pairs = output.read_key_values_to_list();
        input.pipe_records(piped());
        let values = output.read_values_to_list();
        prop_assert_eq!(
            pairs,
            full.iter().map(|r| KeyValue::new(r.key.clone(), r.value.clone())).collect::<Vec<_>>()
        );
        prop_assert_eq!(values, full.iter().map(|r| r.value.clone()).collect::<Vec<_>>());
    }
}

#[test]
fn the_punctuation_model_matches_kafkas_test() {
    // Kafka's `shouldPunctuateOnStreamsTime`, checked against the model
    // that the property test uses.
    assert_eq!(
        model_stream_punctuations(&[42, 42, 51, 52, 61, 65, 71, 72, 95, 101, 102], 10),
        [42, 51, 61, 71, 95, 101]
    );
}
