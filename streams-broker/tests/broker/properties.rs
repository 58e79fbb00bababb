//! Property tests over random produce / roll / clean / retain / delete
//! sequences, each checked against a naive model after every step: the
//! records produced, by offset, and the log start offset.

use std::collections::BTreeMap;

use proptest::prelude::*;
use streams_broker::{Cluster, TombstoneRetention, TopicPartition};

use crate::support::{contents, send, topic};

#[derive(Debug, Clone)]
enum Op {
    Produce { key: u8, value: Option<u8> },
    Advance(i64),
    Roll,
    Clean,
    Retain,
    DeleteRecords(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..6, proptest::option::weighted(0.8, any::<u8>()))
            .prop_map(|(key, value)| Op::Produce { key, value }),
        2 => (0i64..400).prop_map(Op::Advance),
        1 => Just(Op::Roll),
        2 => Just(Op::Clean),
        1 => Just(Op::Retain),
        1 => any::<u8>().prop_map(Op::DeleteRecords),
    ]
}

type Model = BTreeMap<i64, (String, Option<String>)>;

fn check(
    cluster: &Cluster,
    tp: &TopicPartition,
    model: &Model,
    last_start: &mut i64,
    last_end: &mut i64,
) {
    let info = cluster.log_info(tp).unwrap();
    assert!(
        info.log_start_offset >= *last_start,
        "the log start offset went back"
    );
    assert!(
        info.log_end_offset >= *last_end,
        "the log end offset went back"
    );
    *last_start = info.log_start_offset;
    *last_end = info.log_end_offset;
    let log = contents(cluster, tp);
    // Offsets strictly increase, and every record is the one produced at
    // its offset: nothing is renumbered or changed.
    for pair in log.windows(2) {
        assert!(pair[0].0 < pair[1].0, "offsets out of order: {log:?}");
    }
    for (offset, key, value) in &log {
        assert!(*offset >= info.log_start_offset && *offset < info.log_end_offset);
        assert_eq!(
            model.get(offset),
            Some(&(key.clone(), value.clone())),
            "offset {offset}"
        );
    }
    // Nothing that is still the latest record of its key above the log
    // start offset is lost, unless it is a tombstone.
    let mut latest: BTreeMap<&str, (i64, &Option<String>)> = BTreeMap::new();
    for (offset, (key, value)) in model.range(info.log_start_offset..) {
        latest.insert(key, (*offset, value));
    }
    for (key, (offset, value)) in latest {
        if value.is_some() {
            assert!(
                log.iter().any(|(o, _, _)| *o == offset),
                "the latest record of {key} (offset {offset}) was lost: {log:?}"
            );
        }
    }
}

fn run(ops: &[Op], retention: TombstoneRetention) {
    let cluster = Cluster::builder()
        .log_cleaner_backoff_ms(150)
        .log_retention_check_interval_ms(250)
        .tombstone_retention(retention)
        .build();
    let tp = topic(
        &cluster,
        "t",
        &[
            ("cleanup.policy", "compact,delete"),
            ("retention.ms", "-1"),
            ("min.cleanable.dirty.ratio", "0.01"),
            ("delete.retention.ms", "300"),
            ("internal.segment.bytes", "400"),
        ],
    );
    let mut model = Model::new();
    let (mut last_start, mut last_end) = (0, 0);
    for op in ops {
        match op {
            Op::Produce { key, value } => {
                let key = format!("k{key}");
                let value = value.map(|v| v.to_string());
                let now = cluster.now_ms();
                let offset = send(&cluster, "t", &key, value.as_deref(), now);
                model.insert(offset, (key, value));
            }
            Op::Advance(ms) => cluster.advance_ms(*ms),
            Op::Roll => cluster.roll(&tp).unwrap(),
            Op::Clean => {
                cluster.run_cleaner();
            }
            Op::Retain => {
                cluster.run_retention();
            }
            Op::DeleteRecords(frac) => {
                let end = cluster.log_info(&tp).unwrap().high_watermark;
                let offset = end * i64::from(*frac) / 255;
                cluster.admin().delete_records_before(&tp, offset).unwrap();
            }
        }
        check(&cluster, &tp, &model, &mut last_start, &mut last_end);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_log_never_loses_renumbers_or_moves_back(ops in proptest::collection::vec(op(), 1..120)) {
        run(&ops, TombstoneRetention::DeleteHorizon);
    }

    #[test]
    fn the_pre_fix_rule_keeps_the_same_promises(ops in proptest::collection::vec(op(), 1..80)) {
        run(&ops, TombstoneRetention::LegacyLastModified);
    }

    /// Cleaning everything cleanable leaves exactly the latest record of
    /// every key before the active segment (a last-value-per-key map).
    #[test]
    fn after_a_full_cleaning_the_log_is_the_latest_value_per_key(
        writes in proptest::collection::vec((0u8..8, any::<u8>()), 1..200)
    ) {
        let cluster = Cluster::builder().log_cleaner_enable(false).build();
        let tp = topic(&cluster, "t", &[("cleanup.policy", "compact"), ("min.cleanable.dirty.ratio", "0.01"), ("internal.segment.bytes", "300")]);
        let mut reference: BTreeMap<String, (i64, String)> = BTreeMap::new();
        for (i, (key, value)) in writes.iter().enumerate() {
            let key = format!("k{key}");
            let offset = send(&cluster, "t", &key, Some(&value.to_string()), i as i64);
            reference.insert(key, (offset, value.to_string()));
        }
        cluster.roll(&tp).unwrap();
        cluster.run_cleaner();
        let mut expected: Vec<(i64, String, Option<String>)> = reference
            .into_iter()
            .map(|(k, (o, v))| (o, k, Some(v)))
            .collect();
        expected.sort();
        prop_assert_eq!(contents(&cluster, &tp), expected);
    }
}
