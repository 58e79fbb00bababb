//! The log cleaner: latest value per key with offsets kept, the bounds of
//! the cleanable range, tombstones and their horizons (KAFKA-8522 and its
//! fix, KIP-534), and ports of Kafka's `LogCleanerTest`.

use streams_broker::log::LogConfig;
use streams_broker::{
    AutoOffsetReset, Cluster, ConsumerConfig, TombstoneRetention, TopicPartition,
};

use crate::support::{contents, offsets, send, topic};

const COMPACT: (&str, &str) = ("cleanup.policy", "compact");
const EAGER: (&str, &str) = ("min.cleanable.dirty.ratio", "0.01");

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[test]
fn compaction_keeps_the_latest_record_per_key_at_its_offset_and_never_the_active_segment() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(&cluster, "t", &[COMPACT, EAGER, ("segment.ms", "100")]);
    for (i, (k, v)) in [
        ("a", "1"),
        ("b", "1"),
        ("a", "2"),
        ("c", "1"),
        ("b", "2"),
        ("a", "3"),
    ]
    .into_iter()
    .enumerate()
    {
        send(&cluster, "t", k, Some(v), i as i64);
    }
    // Everything sits in the active segment: nothing is cleanable.
    assert!(cluster.run_cleaner().is_empty());
    send(&cluster, "t", "a", Some("4"), 1_000); // rolls: offsets 0..=5 are now cleanable
    let results = cluster.run_cleaner();
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].first_dirty_offset, results[0].end_offset),
        (0, 6)
    );
    assert_eq!(
        contents(&cluster, &tp),
        [
            (3, "c".into(), s("1")),
            (4, "b".into(), s("2")),
            (5, "a".into(), s("3")),
            (6, "a".into(), s("4")),
        ]
    );
    // The log end offset and the next offset are untouched.
    assert_eq!(cluster.log_info(&tp).unwrap().log_end_offset, 7);
    assert_eq!(send(&cluster, "t", "d", Some("1"), 1_001), 7);
}

#[test]
fn a_log_is_cleaned_only_above_its_dirty_ratio() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            COMPACT,
            ("min.cleanable.dirty.ratio", "0.9"),
            ("segment.ms", "1"),
        ],
    );
    for i in 0..4 {
        send(&cluster, "t", "k", Some("v"), i * 10);
    }
    // Three dirty segments of four: 0.75 is not above 0.9.
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!(info.dirty_ratio, 1.0);
    assert!(!cluster.run_cleaner().is_empty());
    send(&cluster, "t", "k", Some("v"), 100);
    send(&cluster, "t", "k", Some("v"), 200);
    let info = cluster.log_info(&tp).unwrap();
    assert!(
        info.dirty_ratio > 0.0 && info.dirty_ratio <= 0.9,
        "{}",
        info.dirty_ratio
    );
    assert!(cluster.run_cleaner().is_empty());
}

#[test]
fn min_compaction_lag_keeps_recent_segments_dirty() {
    let cluster = Cluster::builder().log_cleaner_backoff_ms(1_000).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            COMPACT,
            EAGER,
            ("segment.ms", "100"),
            ("min.compaction.lag.ms", "10000"),
        ],
    );
    send(&cluster, "t", "k", Some("old"), 0);
    send(&cluster, "t", "k", Some("new"), 200); // rolls
    send(&cluster, "t", "x", Some("x"), 400); // rolls
    cluster.advance_ms(9_000);
    assert_eq!(
        offsets(&cluster, &tp),
        [0, 1, 2],
        "records younger than the lag stay"
    );
    // At 10 000 only the segment of 0 is old enough: it is cleaned alone
    // and keeps its record (the newer value is in the uncleanable part).
    cluster.advance_ms(1_000);
    assert_eq!(offsets(&cluster, &tp), [0, 1, 2]);
    assert_eq!(cluster.log_info(&tp).unwrap().first_dirty_offset, 1);
    // At 11 000 the segment of 200 is too: the old value goes.
    cluster.advance_ms(1_000);
    assert_eq!(offsets(&cluster, &tp), [1, 2]);
}

#[test]
fn max_compaction_lag_forces_a_cleaning_below_the_dirty_ratio() {
    let cluster = Cluster::builder().log_cleaner_backoff_ms(1_000).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            COMPACT,
            ("min.cleanable.dirty.ratio", "1"),
            ("segment.ms", "100"),
            ("max.compaction.lag.ms", "5000"),
        ],
    );
    send(&cluster, "t", "k", Some("old"), 1);
    send(&cluster, "t", "k", Some("new"), 200);
    send(&cluster, "t", "x", Some("x"), 400);
    cluster.advance_ms(5_000);
    assert_eq!(
        offsets(&cluster, &tp),
        [0, 1, 2],
        "a ratio of 1 is never exceeded"
    );
    cluster.advance_ms(1_000); // 6000 - 5000 > 1: the first dirty segment waited too long
    assert_eq!(offsets(&cluster, &tp), [1, 2]);
}

const START: i64 = 1_000_000;

/// Steady low-rate writes to a compacted topic cleaned constantly: the
/// scenario of KAFKA-8522. Returns the time the tombstone for "gdpr" went,
/// if it did within `duration_ms`.
fn tombstone_life(retention: TombstoneRetention, duration_ms: i64) -> (Cluster, Option<i64>) {
    // The clock starts at a real-looking time: the pre-fix rule compares
    // last-modified times with a horizon that is 0 before the first
    // cleaning, which a file's modification time always exceeds.
    let cluster = Cluster::builder()
        .start_time_ms(START)
        .log_cleaner_backoff_ms(100)
        .tombstone_retention(retention)
        .build();
    let tp = topic(
        &cluster,
        "customers",
        &[
            COMPACT,
            EAGER,
            ("segment.ms", "100"),
            ("delete.retention.ms", "1000"),
        ],
    );
    send(&cluster, "customers", "gdpr", Some("secret address"), START);
    send(&cluster, "customers", "gdpr", None, START + 1);
    let mut gone = None;
    let mut i = 0;
    while cluster.now_ms() < START + duration_ms {
        i += 1;
        let now = cluster.now_ms();
        send(
            &cluster,
            "customers",
            &format!("other-{}", i % 5),
            Some("x"),
            now + 150,
        );
        cluster.advance_ms(200);
        let has_tombstone = contents(&cluster, &tp)
            .iter()
            .any(|(_, k, v)| k == "gdpr" && v.is_none());
        if !has_tombstone && gone.is_none() {
            gone = Some(cluster.now_ms() - START);
        }
    }
    (cluster, gone)
}

#[test]
fn kafka_8522_tombstones_survive_forever_under_the_pre_kip_534_rule() {
    let (cluster, gone) = tombstone_life(TombstoneRetention::LegacyLastModified, 20_000);
    assert_eq!(
        gone, None,
        "the tombstone should outlive 20 delete.retention.ms periods"
    );
    // The old value is gone, the tombstone is not.
    let tp = TopicPartition::new("customers", 0);
    let gdpr: Vec<_> = contents(&cluster, &tp)
        .into_iter()
        .filter(|(_, k, _)| k == "gdpr")
        .collect();
    assert_eq!(gdpr, [(1, "gdpr".into(), None)]);
    assert!(
        cluster.cleanings().len() > 50,
        "cleaned {} times",
        cluster.cleanings().len()
    );
}

#[test]
fn kafka_8522_fixed_a_tombstone_goes_at_the_first_cleaning_past_its_horizon() {
    let (cluster, gone) = tombstone_life(TombstoneRetention::DeleteHorizon, 20_000);
    // The first write of the loop rolls the tombstone's segment; the first
    // cleaning (at 100 ms) keeps the tombstone and stamps its batch with a
    // horizon of 100 + 1000; the cleaning at 1100 removes it (seen at 1200).
    let cleanings = cluster.cleanings();
    assert_eq!(cleanings[0].horizons_set, 1);
    let removed = cleanings
        .iter()
        .position(|c| c.tombstones_removed > 0)
        .unwrap();
    // Each write rolls a segment, so the log is dirty every 200 ms: the
    // cleanings at 100, 300, 500, 700 and 900 kept it.
    assert_eq!(removed, 5);
    assert_eq!(gone, Some(1_200));
    assert_eq!(
        cluster
            .cleanings()
            .iter()
            .map(|c| c.tombstones_removed)
            .sum::<usize>(),
        1
    );
}

#[test]
fn a_consumer_lagging_less_than_delete_retention_still_sees_the_tombstone() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            COMPACT,
            EAGER,
            ("segment.ms", "100"),
            ("delete.retention.ms", "1000"),
        ],
    );
    send(&cluster, "t", "alice", Some("street 1"), 0);
    send(&cluster, "t", "alice", None, 1);
    send(&cluster, "t", "bob", Some("x"), 200); // rolls
    cluster.run_cleaner();
    // The slow consumer starts reading within delete.retention.ms.
    cluster.advance_ms(900);
    let mut slow =
        cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
    slow.assign([tp.clone()]);
    let seen: Vec<(i64, bool)> = slow
        .poll()
        .unwrap()
        .iter()
        .map(|r| (r.offset, r.value.is_none()))
        .collect();
    assert_eq!(seen, [(1, true), (2, false)]);
    let horizon = cluster.log_batches(&tp).unwrap()[0].delete_horizon_ms();
    assert_eq!(horizon, Some(1_000));
    // Past the horizon, with new writes to make the log dirty, it goes.
    cluster.advance_ms(200);
    send(&cluster, "t", "bob", Some("y"), 400);
    send(&cluster, "t", "carol", Some("z"), 600); // rolls
    assert!(cluster.run_cleaner()[0].tombstones_removed == 1);
    assert_eq!(offsets(&cluster, &tp), [3, 4]);
    // After compaction removed offset 0 the log start offset stays 0.
    assert_eq!(cluster.log_info(&tp).unwrap().log_start_offset, 0);
}

#[test]
fn with_no_new_writes_a_tombstone_stays_past_its_horizon() {
    let cluster = Cluster::builder().log_cleaner_backoff_ms(100).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            COMPACT,
            EAGER,
            ("segment.ms", "100"),
            ("delete.retention.ms", "1000"),
        ],
    );
    send(&cluster, "t", "alice", Some("street 1"), 0);
    send(&cluster, "t", "alice", None, 1);
    send(&cluster, "t", "bob", Some("x"), 200);
    cluster.advance_ms(60_000);
    assert_eq!(
        contents(&cluster, &tp),
        [(1, "alice".into(), None), (2, "bob".into(), s("x"))]
    );
    assert_eq!(cluster.cleanings().len(), 1);
}

/// `LogCleanerTest.testCleanTombstone`: a tombstone with an old timestamp
/// is kept (its horizon counts from the cleaning, not from the record).
#[test]
fn log_cleaner_test_clean_tombstone() {
    let cluster = Cluster::builder()
        .log_cleaner_enable(false)
        .start_time_ms(1_000_000_000)
        .build();
    let tp = topic(&cluster, "t", &[COMPACT, EAGER]);
    let day = LogConfig::default().delete_retention_ms;
    let now = cluster.now_ms();
    send(&cluster, "t", "0", Some("0"), now + day + 10_000);
    cluster.roll(&tp).unwrap();
    cluster.run_cleaner();
    send(&cluster, "t", "0", None, now - day - 10_000);
    cluster.roll(&tp).unwrap();
    cluster.run_cleaner();
    assert_eq!(
        cluster.log_batches(&tp).unwrap()[0].last_offset(),
        1,
        "the tombstone should be retained"
    );
    send(&cluster, "t", "1", Some("1"), now);
    cluster.roll(&tp).unwrap();
    cluster.run_cleaner();
    assert_eq!(
        cluster.log_batches(&tp).unwrap()[0].last_offset(),
        1,
        "the tombstone should be retained"
    );
}

/// `LogCleanerTest.testCleanSegmentsRetainingLastEmptyBatch` and
/// `testCleaningWithUnkeyedMessages`: unkeyed records are removed, and the
/// last batch of the cleaned range stays as an empty batch so that its
/// offsets stay known.
#[test]
fn log_cleaner_test_unkeyed_records_go_and_the_last_batch_stays_empty() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(&cluster, "t", &[COMPACT, EAGER]);
    send(&cluster, "t", "k0", Some("v"), 0);
    cluster.roll(&tp).unwrap();
    cluster
        .producer()
        .send(streams_broker::ProducerRecord::unkeyed("t", "no key").timestamp(1))
        .unwrap();
    cluster.roll(&tp).unwrap();
    send(&cluster, "t", "k1", Some("v"), 2);
    let result = &cluster.run_cleaner()[0];
    assert_eq!((result.records_read, result.records_retained), (2, 1));
    let batches = cluster.log_batches(&tp).unwrap();
    let shape: Vec<(i64, i64, i32)> = batches
        .iter()
        .map(|b| (b.base_offset(), b.last_offset(), b.record_count()))
        .collect();
    assert_eq!(shape, [(0, 0, 1), (1, 1, 0), (2, 2, 1)]);
    assert_eq!(offsets(&cluster, &tp), [0, 2]);
}

/// `LogCleanerTest.testLogToClean`: with the checkpoint at the active
/// segment, the cleaner's total bytes are the log less the active segment.
#[test]
fn log_cleaner_test_log_to_clean() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(&cluster, "t", &[COMPACT, ("internal.segment.bytes", "100")]);
    for i in 0..6 {
        send(&cluster, "t", "1", Some(&"0".repeat(25)), i);
    }
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!(info.segments.len(), 6);
    let log_size: usize = info.segments.iter().map(|s| s.size_bytes).sum();
    assert_eq!(info.size_bytes, log_size);
    // Every non-active segment is dirty: ratio 1.
    assert_eq!(info.dirty_ratio, 1.0);
    cluster.run_cleaner();
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!(info.first_dirty_offset, 5);
    assert_eq!(info.dirty_ratio, 0.0);
}

/// `LogCleanerTest.testSegmentGrouping`: segments are merged while their
/// sizes before cleaning add up to at most `segment.bytes`.
#[test]
fn log_cleaner_test_segment_grouping_merges_small_segments() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    // 79-byte batches, three per 300-byte segment.
    let tp = topic(
        &cluster,
        "t",
        &[COMPACT, EAGER, ("internal.segment.bytes", "300")],
    );
    for i in 0..9 {
        send(&cluster, "t", "k", Some("0123456789"), i);
    }
    send(&cluster, "t", "x", Some("0123456789"), 9);
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 3, 6, 9]
    );
    let first = &cluster.run_cleaner()[0];
    assert_eq!(
        (first.segments_before, first.segments_after),
        (3, 3),
        "237-byte segments do not merge"
    );
    assert_eq!(offsets(&cluster, &tp), [8, 9]);
    // Now small, the cleaned segments merge at the next cleaning.
    for i in 0..3 {
        send(&cluster, "t", "y", Some("0123456789"), 10 + i);
    }
    // The three cleaned segments (0 + 0 + 79 bytes before this cleaning)
    // merge; the full one of 9 (237 bytes) would not fit with them.
    let second = &cluster.run_cleaner()[0];
    assert_eq!(
        (second.segments_before, second.segments_after),
        (4, 2),
        "{second:?}"
    );
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 9, 12]
    );
}
