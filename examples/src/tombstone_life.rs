//! The whole life of a GDPR tombstone on a compacted topic of the
//! simulated broker: written, kept by the first cleaning and stamped with
//! a delete horizon, still seen by a consumer that lags less than
//! `delete.retention.ms`, and gone at the first cleaning past the horizon
//! (KIP-534). Beside it, the same writes under the pre-fix rule of
//! KAFKA-8522: steady low-rate writes keep the log dirty, the cleaner
//! re-cleans constantly, and the tombstone never expires.
//!
//! ```
//! use streams_broker::TombstoneRetention;
//! use streams_examples::tombstone_life;
//!
//! let life = tombstone_life::run(TombstoneRetention::DeleteHorizon, 5_000)?;
//! assert_eq!(life.slow_consumer_saw_tombstone, true);
//! assert_eq!(life.gone_at_ms, Some(1_200));
//! let legacy = tombstone_life::run(TombstoneRetention::LegacyLastModified, 5_000)?;
//! assert_eq!(legacy.gone_at_ms, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use streams_broker::{
    AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, NewTopic, ProducerRecord,
    TombstoneRetention, TopicPartition,
};

/// The compacted topic of customer addresses.
pub const TOPIC: &str = "customer-addresses";
/// The topic's `delete.retention.ms`.
pub const DELETE_RETENTION_MS: i64 = 1_000;
/// When the story starts on the cluster's clock (a real-looking time: the
/// pre-fix rule compares file modification times).
pub const START: i64 = 1_700_000_000_000;

/// What happened to the tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TombstoneLife {
    /// Each event, with its time since the start.
    pub timeline: Vec<(i64, String)>,
    /// Whether a consumer that started reading 600 ms after the delete saw
    /// the tombstone.
    pub slow_consumer_saw_tombstone: bool,
    /// When the tombstone was found gone, in ms since the start.
    pub gone_at_ms: Option<i64>,
    /// How many times the cleaner cleaned the topic.
    pub cleanings: usize,
}

/// Runs the story for `duration_ms` under `retention`.
///
/// # Errors
/// A broker error (none is expected).
pub fn run(retention: TombstoneRetention, duration_ms: i64) -> Result<TombstoneLife, BrokerError> {
    let cluster = Cluster::builder()
        .start_time_ms(START)
        .log_cleaner_backoff_ms(100)
        .tombstone_retention(retention)
        .build();
    cluster.admin().create_topic(
        NewTopic::new(TOPIC, 1)
            .config("cleanup.policy", "compact")
            .config("segment.ms", "100")
            .config("min.cleanable.dirty.ratio", "0.01")
            .config("delete.retention.ms", DELETE_RETENTION_MS.to_string()),
    )?;
    let tp = TopicPartition::new(TOPIC, 0);
    let producer = cluster.producer();
    let mut timeline = Vec::new();
    let send = |key: &str, value: Option<&str>, ts: i64| {
        let record = match value {
            Some(v) => ProducerRecord::new(TOPIC, key.to_owned(), v.to_owned()),
            None => ProducerRecord::tombstone(TOPIC, key.to_owned()),
        };
        producer.send(record.timestamp(ts))
    };
    let a = send("alice", Some("1 Main St"), START)?;
    timeline.push((0, format!("alice's address written at offset {}", a.offset)));
    let t = send("alice", None, START + 1)?;
    timeline.push((
        0,
        format!(
            "alice asks to be forgotten: tombstone at offset {}",
            t.offset
        ),
    ));

    let mut slow =
        cluster.consumer(ConsumerConfig::new().auto_offset_reset(AutoOffsetReset::Earliest));
    slow.assign([tp.clone()]);
    let mut slow_saw = false;
    let mut gone = None;
    let mut seen_cleanings = 0;
    let mut i = 0;
    while cluster.now_ms() < START + duration_ms {
        i += 1;
        let now = cluster.now_ms();
        send(
            &format!("customer-{}", i % 4),
            Some("an address"),
            now + 150,
        )?;
        cluster.advance_ms(200);
        let elapsed = cluster.now_ms() - START;
        for c in cluster.cleanings().iter().skip(seen_cleanings) {
            if c.horizons_set > 0 {
                timeline.push((
                    elapsed,
                    format!(
                        "cleaner kept the tombstone and stamped its batch with a delete horizon ({} ms later)",
                        DELETE_RETENTION_MS
                    ),
                ));
            }
            if c.tombstones_removed > 0 {
                timeline.push((
                    elapsed,
                    "cleaner removed the tombstone: its horizon had passed".to_owned(),
                ));
            }
        }
        seen_cleanings = cluster.cleanings().len();
        if elapsed == 600 {
            let read = slow.poll()?;
            slow_saw = read
                .iter()
                .any(|r| r.key.as_deref() == Some(&b"alice"[..]) && r.value.is_none());
            timeline.push((
                elapsed,
                format!(
                    "a slow consumer reads from the start: {} records, the tombstone {}",
                    read.len(),
                    if slow_saw { "among them" } else { "missing" }
                ),
            ));
        }
        let present = cluster
            .log_records(&tp)?
            .iter()
            .any(|r| r.key.as_deref() == Some(&b"alice"[..]));
        if !present && gone.is_none() {
            gone = Some(elapsed);
            timeline.push((
                elapsed,
                "alice is gone from the log: a new consumer never learns of her".to_owned(),
            ));
        }
    }
    if gone.is_none() {
        timeline.push((
            duration_ms,
            format!(
                "after {} cleanings the tombstone is still there ({}x delete.retention.ms)",
                cluster.cleanings().len(),
                duration_ms / DELETE_RETENTION_MS
            ),
        ));
    }
    Ok(TombstoneLife {
        timeline,
        slow_consumer_saw_tombstone: slow_saw,
        gone_at_ms: gone,
        cleanings: cluster.cleanings().len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tombstone_expires_at_the_first_cleaning_past_its_horizon() -> Result<(), BrokerError> {
        let life = run(TombstoneRetention::DeleteHorizon, 3_000)?;
        let events: Vec<(i64, &str)> = life
            .timeline
            .iter()
            .map(|(t, e)| (*t, e.as_str()))
            .collect();
        assert_eq!(
            events,
            [
                (0, "alice's address written at offset 0"),
                (0, "alice asks to be forgotten: tombstone at offset 1"),
                (
                    200,
                    "cleaner kept the tombstone and stamped its batch with a delete horizon (1000 ms later)"
                ),
                (
                    600,
                    "a slow consumer reads from the start: 4 records, the tombstone among them"
                ),
                (
                    1_200,
                    "cleaner removed the tombstone: its horizon had passed"
                ),
                (
                    1_200,
                    "alice is gone from the log: a new consumer never learns of her"
                ),
            ]
        );
        Ok(())
    }

    #[test]
    fn kafka_8522_the_tombstone_never_expires_under_the_pre_fix_rule() -> Result<(), BrokerError> {
        let life = run(TombstoneRetention::LegacyLastModified, 20_000)?;
        assert_eq!(life.gone_at_ms, None);
        assert!(life.slow_consumer_saw_tombstone);
        assert!(life.cleanings >= 50, "{} cleanings", life.cleanings);
        Ok(())
    }
}
