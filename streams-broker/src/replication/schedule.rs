//! Deterministic fault schedules: a seed makes a sequence of faults and
//! produces (stops, restarts, pauses, isolations, cut links, heals,
//! elections, clock moves, sends with every `acks`), run against a
//! three-broker cluster and checked after every step against Kafka's
//! promises:
//!
//! - no record acknowledged with `acks=all` (so while the ISR held at least
//!   `min.insync.replicas`) is lost: the leader holds it at its offset;
//! - a record a consumer read below the high watermark is never replaced
//!   or removed: offsets never renumber;
//! - the leader epoch never decreases.
//!
//! A violation names the seed, the step and the timeline; running the seed
//! again gives the same timeline byte for byte, in the manner of
//! FoundationDB's and TigerBeetle's simulation testing.
//!
//! ```
//! use streams_broker::replication::schedule::{Schedule, run};
//!
//! let schedule = Schedule::generate(42, 60);
//! let first = run(&schedule)?;
//! let again = run(&schedule)?;
//! assert_eq!(first.timeline, again.timeline);
//! assert!(first.checks > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::NewTopic;
use crate::clients::{Acks, ProducerConfig, ProducerRecord};
use crate::cluster::Cluster;
use crate::error::BrokerError;
use crate::replication::BrokerId;
use crate::topic_partition::TopicPartition;

/// The brokers of a schedule's cluster.
pub const BROKERS: i32 = 3;
/// The partitions of its topic.
pub const PARTITIONS: i32 = 2;

/// One step of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Sends one record to a partition with these `acks`.
    Produce {
        /// The partition.
        partition: i32,
        /// The acks.
        acks: Acks,
    },
    /// Stops a broker.
    Stop(BrokerId),
    /// Restarts a stopped broker with its log.
    Restart(BrokerId),
    /// Pauses a broker.
    Pause(BrokerId),
    /// Resumes a paused broker.
    Resume(BrokerId),
    /// Cuts a broker off from the controller.
    Isolate(BrokerId),
    /// Cuts the link between two brokers.
    Cut(BrokerId, BrokerId),
    /// Heals every cut.
    Heal,
    /// Forces an election of a partition, of a broker or of the first in
    /// sync.
    Elect {
        /// The partition.
        partition: i32,
        /// The broker asked for.
        leader: Option<BrokerId>,
    },
    /// Moves the clock.
    Advance(i64),
    /// A consumer reads each partition from its leader up to the high
    /// watermark.
    Consume,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Produce { partition, acks } => {
                write!(f, "produce to t-{partition} with {acks:?}")
            }
            Step::Stop(b) => write!(f, "stop broker {b}"),
            Step::Restart(b) => write!(f, "restart broker {b}"),
            Step::Pause(b) => write!(f, "pause broker {b}"),
            Step::Resume(b) => write!(f, "resume broker {b}"),
            Step::Isolate(b) => write!(f, "isolate broker {b}"),
            Step::Cut(a, b) => write!(f, "cut {a}-{b}"),
            Step::Heal => write!(f, "heal"),
            Step::Elect { partition, leader } => match leader {
                Some(l) => write!(f, "elect broker {l} for t-{partition}"),
                None => write!(f, "elect for t-{partition}"),
            },
            Step::Advance(ms) => write!(f, "advance {ms} ms"),
            Step::Consume => write!(f, "consume"),
        }
    }
}

/// A seeded sequence of steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// The seed it came from.
    pub seed: u64,
    /// The steps.
    pub steps: Vec<Step>,
}

/// A small, fixed pseudo-random generator (xorshift64*), so that a seed
/// means the same schedule everywhere and forever.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn broker(&mut self) -> BrokerId {
        i32::try_from(self.below(3)).unwrap_or(0) + 1
    }
}

impl Schedule {
    /// The schedule of `seed`, `len` steps long.
    pub fn generate(seed: u64, len: usize) -> Self {
        let mut rng = Rng::new(seed);
        let steps = (0..len)
            .map(|_| match rng.below(100) {
                0..=34 => Step::Produce {
                    partition: i32::try_from(rng.below(2)).unwrap_or(0),
                    acks: match rng.below(4) {
                        0 => Acks::Zero,
                        1 => Acks::One,
                        _ => Acks::All,
                    },
                },
                35..=44 => Step::Advance(i64::try_from(rng.below(3_000)).unwrap_or(0) + 1),
                45..=52 => Step::Consume,
                53..=58 => Step::Stop(rng.broker()),
                59..=66 => Step::Restart(rng.broker()),
                67..=71 => Step::Pause(rng.broker()),
                72..=78 => Step::Resume(rng.broker()),
                79..=81 => Step::Isolate(rng.broker()),
                82..=85 => {
                    let a = rng.broker();
                    let b = a % BROKERS + 1;
                    Step::Cut(a, b)
                }
                86..=91 => Step::Heal,
                _ => Step::Elect {
                    partition: i32::try_from(rng.below(2)).unwrap_or(0),
                    leader: if rng.below(2) == 0 {
                        None
                    } else {
                        Some(rng.broker())
                    },
                },
            })
            .collect();
        Self { seed, steps }
    }
}

/// A schedule that ran to its end with every check passing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleRun {
    /// The seed.
    pub seed: u64,
    /// Every step and event, one a line: the same seed gives the same
    /// text.
    pub timeline: String,
    /// How many invariant checks passed.
    pub checks: usize,
    /// How many records `acks=all` acknowledged.
    pub acknowledged: usize,
}

/// A broken promise, with what is needed to replay it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("seed {seed}, step {step} ({what}): {message}\ntimeline:\n{timeline}")]
pub struct Violation {
    /// The seed that replays it.
    pub seed: u64,
    /// The step after which the check failed.
    pub step: usize,
    /// The step.
    pub what: String,
    /// What was broken.
    pub message: String,
    /// The timeline up to there.
    pub timeline: String,
}

fn value_at(records: &[crate::record::LogRecord], offset: i64) -> Option<Vec<u8>> {
    records
        .iter()
        .find(|r| r.offset == offset)
        .map(|r| r.value.as_deref().unwrap_or_default().to_vec())
}

/// Runs `schedule` on a fresh cluster of three brokers (a topic of two
/// partitions, replication factor 3, `min.insync.replicas=2`, leader
/// epochs), checking the promises after every step.
///
/// # Errors
/// The first [`Violation`].
pub fn run(schedule: &Schedule) -> Result<ScheduleRun, Violation> {
    let cluster = Cluster::builder()
        .brokers(usize::try_from(BROKERS).unwrap_or(3))
        .replica_lag_time_max_ms(2_000)
        .broker_session_timeout_ms(3_000)
        .build();
    cluster
        .admin()
        .create_topic(
            NewTopic::new("t", PARTITIONS)
                .replication_factor(3)
                .config("min.insync.replicas", "2"),
        )
        .map_err(|e| Violation {
            seed: schedule.seed,
            step: 0,
            what: "create topic".into(),
            message: e.to_string(),
            timeline: String::new(),
        })?;
    let producers = [Acks::Zero, Acks::One, Acks::All].map(|acks| {
        (
            acks,
            cluster.producer_with(ProducerConfig::new().acks(acks).request_timeout_ms(1_000)),
        )
    });
    let mut lines: Vec<String> = Vec::new();
    let mut seen_events = 0;
    let mut acknowledged: BTreeMap<TopicPartition, BTreeMap<i64, Vec<u8>>> = BTreeMap::new();
    let mut consumed: BTreeMap<TopicPartition, BTreeMap<i64, Vec<u8>>> = BTreeMap::new();
    let mut epochs: BTreeMap<TopicPartition, i32> = BTreeMap::new();
    let mut checks = 0;
    let mut counter = 0u64;
    for (i, step) in schedule.steps.iter().enumerate() {
        lines.push(format!("step {i}: {step}"));
        let outcome: Result<(), BrokerError> = match *step {
            Step::Produce { partition, acks } => {
                counter += 1;
                let value = format!("{}-{counter}", schedule.seed);
                let producer = &producers.iter().find(|(a, _)| *a == acks).map(|(_, p)| p);
                match producer.map(|p| {
                    p.send(ProducerRecord::new("t", "k", value.clone()).partition(partition))
                }) {
                    Some(Ok(sent)) => {
                        lines.push(format!("  sent at offset {}", sent.offset));
                        if acks == Acks::All {
                            acknowledged
                                .entry(TopicPartition::new("t", partition))
                                .or_default()
                                .insert(sent.offset, value.into_bytes());
                        }
                        Ok(())
                    }
                    Some(Err(e)) => Err(e),
                    None => Ok(()),
                }
            }
            Step::Stop(b) => cluster.stop_broker(b),
            Step::Restart(b) => cluster.restart_broker(b, false),
            Step::Pause(b) => cluster.pause_broker(b),
            Step::Resume(b) => cluster.resume_broker(b),
            Step::Isolate(b) => cluster.isolate_broker(b),
            Step::Cut(a, b) => cluster.cut_link(a, b),
            Step::Heal => {
                cluster.heal();
                Ok(())
            }
            Step::Elect { partition, leader } => cluster
                .force_election(&TopicPartition::new("t", partition), leader)
                .map(|_| ()),
            Step::Advance(ms) => {
                cluster.advance_ms(ms);
                Ok(())
            }
            Step::Consume => {
                for p in 0..PARTITIONS {
                    let tp = TopicPartition::new("t", p);
                    let (Ok(state), Ok(records)) =
                        (cluster.partition_state(&tp), cluster.log_records(&tp))
                    else {
                        continue;
                    };
                    let read = consumed.entry(tp).or_default();
                    for r in records.iter().filter(|r| r.offset < state.high_watermark) {
                        read.insert(r.offset, r.value.as_deref().unwrap_or_default().to_vec());
                    }
                }
                Ok(())
            }
        };
        if let Err(e) = outcome {
            lines.push(format!("  -> {e}"));
        }
        let timeline = cluster.timeline();
        for event in &timeline[seen_events..] {
            lines.push(format!("  {event}"));
        }
        seen_events = timeline.len();

        // The promises.
        let fail = |message: String, lines: &[String]| Violation {
            seed: schedule.seed,
            step: i,
            what: step.to_string(),
            message,
            timeline: lines.join("\n"),
        };
        for p in 0..PARTITIONS {
            let tp = TopicPartition::new("t", p);
            let Ok(state) = cluster.partition_state(&tp) else {
                continue;
            };
            let last = epochs.entry(tp.clone()).or_insert(state.leader_epoch);
            if state.leader_epoch < *last {
                return Err(fail(
                    format!(
                        "the leader epoch of {tp} went from {last} to {}",
                        state.leader_epoch
                    ),
                    &lines,
                ));
            }
            *last = state.leader_epoch;
            checks += 1;
            let Some(leader) = state.leader else {
                continue;
            };
            let Ok(records) = cluster.replica_records(&tp, leader) else {
                continue;
            };
            // Every in-sync replica holds the leader's committed records.
            for &member in state.isr.iter().filter(|b| **b != leader) {
                let Ok(theirs) = cluster.replica_records(&tp, member) else {
                    continue;
                };
                for r in records.iter().filter(|r| r.offset < state.high_watermark) {
                    checks += 1;
                    let value = r.value.as_deref().unwrap_or_default().to_vec();
                    if value_at(&theirs, r.offset).as_ref() != Some(&value) {
                        return Err(fail(
                            format!(
                                "in-sync broker {member} does not hold the leader's committed record at {tp} offset {} (high watermark {})",
                                r.offset, state.high_watermark
                            ),
                            &lines,
                        ));
                    }
                }
            }
            for (what, kept) in [("acknowledged", &acknowledged), ("consumed", &consumed)] {
                for (offset, value) in kept.get(&tp).into_iter().flatten() {
                    checks += 1;
                    if value_at(&records, *offset).as_ref() != Some(value) {
                        return Err(fail(
                            format!(
                                "the {what} record at {tp} offset {offset} is not on the leader (broker {leader}) any more: it holds {:?}",
                                value_at(&records, *offset)
                                    .map(|v| String::from_utf8_lossy(&v).into_owned())
                            ),
                            &lines,
                        ));
                    }
                }
            }
        }
    }
    Ok(ScheduleRun {
        seed: schedule.seed,
        timeline: lines.join("\n"),
        checks,
        acknowledged: acknowledged.values().map(BTreeMap::len).sum(),
    })
}
