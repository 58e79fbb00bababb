//! Segments rolling by size and time, and retention by time and size.

use streams_broker::{Cluster, TopicPartition};

use crate::support::{offsets, send, topic};

#[test]
fn a_segment_rolls_when_the_next_batch_does_not_fit() {
    let cluster = Cluster::new();
    // A record of key "k" and a 10-byte value is a 79-byte batch (61 bytes
    // of header, 18 of record): two fit in 200 bytes, a third does not.
    let tp = topic(&cluster, "t", &[("internal.segment.bytes", "200")]);
    for i in 0..7 {
        send(&cluster, "t", "k", Some("0123456789"), i);
    }
    let batches = cluster.log_batches(&tp).unwrap();
    assert_eq!(batches[0].size_in_bytes(), 79);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!(info.segment_base_offsets(), [0, 2, 4, 6]);
    assert_eq!(
        info.segments
            .iter()
            .map(|s| s.size_bytes)
            .collect::<Vec<_>>(),
        [158, 158, 158, 79]
    );
}

#[test]
fn a_segment_rolls_by_segment_ms_of_record_timestamps_on_the_next_append() {
    let cluster = Cluster::new();
    let tp = topic(&cluster, "t", &[("segment.ms", "1000")]);
    // Kafka compares the incoming batch's timestamp with the segment's
    // first: 1000 is not more than 1000 later than 0, 1001 is.
    for ts in [0, 500, 1000, 1001] {
        send(&cluster, "t", "k", Some("v"), ts);
    }
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 3]
    );
    // Time alone rolls nothing: the roll waits for the next append.
    cluster.advance_ms(10_000);
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 3]
    );
    send(&cluster, "t", "k", Some("v"), 2_500);
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 3, 4]
    );
}

fn retention_cluster() -> (Cluster, TopicPartition) {
    let cluster = Cluster::builder()
        .log_retention_check_interval_ms(1_000)
        .build();
    let tp = topic(
        &cluster,
        "t",
        &[("retention.ms", "5000"), ("segment.ms", "1000")],
    );
    for ts in [0, 2_000, 4_000, 6_000] {
        send(&cluster, "t", "k", Some("v"), ts);
    }
    (cluster, tp)
}

#[test]
fn retention_by_time_deletes_segments_whose_records_are_all_older_than_retention_ms() {
    let (cluster, tp) = retention_cluster();
    assert_eq!(
        cluster.log_info(&tp).unwrap().segment_base_offsets(),
        [0, 1, 2, 3]
    );
    // At 9000 the segments of 0 and 2000 are more than 5000 old; the one of
    // 4000 is exactly 5000 old and stays.
    cluster.advance_ms(9_000);
    assert_eq!(offsets(&cluster, &tp), [2, 3]);
    assert_eq!(cluster.log_info(&tp).unwrap().log_start_offset, 2);
    cluster.advance_ms(1_000);
    assert_eq!(offsets(&cluster, &tp), [3]);
}

#[test]
fn when_every_record_expired_the_active_segment_goes_too_and_a_new_one_starts_at_the_end() {
    let (cluster, tp) = retention_cluster();
    cluster.advance_ms(12_000);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.log_start_offset, info.log_end_offset), (4, 4));
    assert_eq!(info.segment_base_offsets(), [4]);
    assert_eq!(offsets(&cluster, &tp), Vec::<i64>::new());
    // Offsets go on from where they were.
    assert_eq!(send(&cluster, "t", "k", Some("v"), 12_000), 4);
}

#[test]
fn retention_by_size_deletes_the_oldest_segments_while_the_log_stays_above_retention_bytes() {
    let cluster = Cluster::new();
    // One 79-byte batch per segment; five segments are 395 bytes.
    let tp = topic(
        &cluster,
        "t",
        &[
            ("internal.segment.bytes", "100"),
            ("retention.bytes", "200"),
            ("retention.ms", "-1"),
        ],
    );
    for i in 0..5 {
        send(&cluster, "t", "k", Some("0123456789"), i);
    }
    assert_eq!(cluster.log_info(&tp).unwrap().size_bytes, 395);
    // 395 - 200 = 195 bytes too many: two segments (158) go, a third would
    // take the log under the limit.
    assert_eq!(cluster.run_retention(), 2);
    let info = cluster.log_info(&tp).unwrap();
    assert_eq!((info.log_start_offset, info.size_bytes), (2, 237));
}

#[test]
fn compacted_topics_keep_expired_segments_unless_delete_is_in_the_policy() {
    let cluster = Cluster::builder().log_cleaner_enable(false).build();
    let tp = topic(
        &cluster,
        "t",
        &[
            ("cleanup.policy", "compact"),
            ("retention.ms", "10"),
            ("segment.ms", "1"),
        ],
    );
    for ts in [0, 5, 10] {
        send(&cluster, "t", &format!("k{ts}"), Some("v"), ts);
    }
    cluster.advance_ms(1_000);
    assert_eq!(cluster.run_retention(), 0);
    assert_eq!(offsets(&cluster, &tp), [0, 1, 2]);
}
