//! [`KafkaConsumer`]: the client API's [`Consumer`] over rdkafka's
//! `BaseConsumer`, with a `ConsumerContext` whose rebalance callback
//! records what the group did, for [`poll`](Consumer::poll) to report as
//! [`Rebalance`] events.
//!
//! The rebalance protocol is Kafka's classic one with librdkafka's eager
//! `range` assignor (`partition.assignment.strategy=range`): librdkafka
//! cannot run a custom assignor, so the [`PartitionAssignor`] given to
//! [`subscribe`](Consumer::subscribe) is not run, and
//! [`Rebalance::Assigned`] carries EMPTY `user_data` (a Streams runtime
//! derives its tasks from the partitions). A revocation is reported as
//! [`Rebalance::Revoked`] while the partitions are still this member's:
//! librdkafka waits for the unassignment until the next poll, so the
//! caller's commit in between is accepted, as Kafka's
//! `onPartitionsRevoked` commit is. Partitions lost with the member's
//! session are [`Rebalance::Lost`]. The `generation` of an assignment and
//! the `member_id` of [`GroupMetadata`] are this consumer's own (librdkafka
//! does not expose the broker's); they identify the consumer to a
//! [`KafkaProducer`](crate::KafkaProducer)'s
//! `send_offsets_to_transaction`, which passes librdkafka's real group
//! metadata on.
//!
//! Every assigned partition starts fetching at once, at an offset this
//! consumer reads first (the group's committed offset, else
//! `auto.offset.reset`; outside a group `auto.offset.reset` alone): left
//! to itself, librdkafka reads the committed offset with an OffsetFetch of
//! its own and, when that fails with `NOT_COORDINATOR` or
//! `COORDINATOR_NOT_AVAILABLE`, never starts the partition (issue 17's
//! start-up stall). Within a group's rebalance callback the consumer asks
//! for 3 s at most (the poll running the callback waits meanwhile) and
//! leaves an offset it could not read to librdkafka's own OffsetFetch.
//! Should a partition still not be fetching
//! `default.api.timeout.ms` after its assignment, the poll fails with
//! [`ClientError::Timeout`] naming it, rather than returning nothing
//! forever.
//!
//! A poll waits up to the supplier's poll timeout for the first record,
//! then takes what is there, up to `max.poll.records`. After an
//! [`assign`](Consumer::assign) or [`seek`](Consumer::seek) of a consumer
//! outside a group, the next poll waits (up to `default.api.timeout.ms`)
//! until it reads something or reaches the end offsets, so that a
//! restoration reading up to an end offset does not stop at a fetch that
//! is still on its way.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{
    BaseConsumer, CommitMode, Consumer as _, ConsumerContext, ConsumerGroupMetadata,
};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Headers as _};
use rdkafka::statistics::Statistics;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Message, Offset, Timestamp, TopicPartitionList};
use streams_clients::{
    ClientError, Consumer, ConsumerRecord, GroupMetadata, Header, PartitionAssignor, Polled,
    Rebalance, Result, TimestampType, TopicPartition,
};

use crate::error::{client_error, code_of, is_authentication, is_stale_member};
use crate::health::{Health, LogContext};

/// What the rebalance callback saw.
#[derive(Debug)]
enum Event {
    Assigned(Vec<TopicPartition>),
    Revoked(Vec<TopicPartition>),
    Lost(Vec<TopicPartition>),
}

/// The consumer's context: records rebalances for `poll`, and the end
/// offsets its fetches learned (from librdkafka's statistics) for
/// [`current_lags`](Consumer::current_lags).
#[derive(Debug, Default)]
pub(crate) struct RebalanceContext {
    events: Mutex<VecDeque<Event>>,
    /// Set while closing: revocations are acted on at once.
    closing: AtomicBool,
    /// Whether the end offset is the last stable one (read_committed).
    read_committed: bool,
    /// Each fetched partition's end offset, as of the last statistics.
    ends: Mutex<HashMap<TopicPartition, i64>>,
    /// The consumer's name, for its log lines.
    client: String,
    /// Where its log lines and errors go.
    health: Arc<Health>,
    /// Where a partition without a committed offset starts
    /// (`auto.offset.reset`), and how long asking for committed offsets
    /// may take (`default.api.timeout.ms`).
    start: StartPolicy,
    /// Each partition's fetch state (librdkafka's `fetch_state`: `none`
    /// until its fetcher starts), as of the last statistics.
    fetch_states: Mutex<HashMap<TopicPartition, String>>,
    /// When the last statistics came.
    stats_at: Mutex<Option<Instant>>,
}

/// How long the rebalance callback reads committed offsets before it
/// leaves the rest to librdkafka.
const REBALANCE_OFFSETS_BUDGET: Duration = Duration::from_secs(3);

/// Where newly assigned partitions start.
#[derive(Debug, Clone, Copy)]
struct StartPolicy {
    /// `auto.offset.reset=earliest` (else latest).
    earliest: bool,
    /// `default.api.timeout.ms`.
    timeout: Duration,
}

impl Default for StartPolicy {
    fn default() -> Self {
        StartPolicy {
            earliest: false,
            timeout: Duration::from_secs(30),
        }
    }
}

impl StartPolicy {
    /// Where a partition without a committed offset starts.
    fn reset(self) -> Offset {
        if self.earliest {
            Offset::Beginning
        } else {
            Offset::End
        }
    }

    /// `partitions` with the offsets their fetchers start at: the
    /// group's committed offset, else `auto.offset.reset`; asked here
    /// (retried on errors that pass, for `budget` at most), so
    /// that librdkafka starts every fetcher at once. Given a partition
    /// without an offset, librdkafka's assignment sends an OffsetFetch of
    /// its own first, and after some errors (`NOT_COORDINATOR`,
    /// `COORDINATOR_NOT_AVAILABLE` from a coordinator that moves or
    /// loads, a partition-level error) it neither retries nor starts the
    /// partition: it stays assigned and is never fetched, silently (its
    /// `assignment.queried` list is dropped; see librdkafka's
    /// `rd_kafka_assignment_apply_offsets`). A partition whose committed
    /// offset could not be read in time is left to librdkafka
    /// (`Offset::Stored`), and to the poll's check that every assigned
    /// partition is fetched ([`KafkaConsumer::check_fetching`]).
    fn start_offsets<C: ConsumerContext>(
        self,
        consumer: &BaseConsumer<C>,
        partitions: &[TopicPartition],
        group: bool,
        budget: Duration,
    ) -> TopicPartitionList {
        let mut start: HashMap<&TopicPartition, Offset> = HashMap::new();
        if !group {
            // Outside a group nothing is committed: auto.offset.reset.
            for tp in partitions {
                start.insert(tp, self.reset());
            }
        }
        let deadline = Instant::now() + budget.min(self.timeout);
        while start.len() < partitions.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let mut ask = TopicPartitionList::with_capacity(partitions.len());
            for tp in partitions.iter().filter(|tp| !start.contains_key(tp)) {
                ask.add_partition(&tp.topic, tp.partition);
            }
            match consumer.committed_offsets(ask, left.min(Duration::from_secs(5))) {
                Ok(answer) => {
                    for e in answer.elements() {
                        let Some(tp) = partitions
                            .iter()
                            .find(|tp| tp.partition == e.partition() && tp.topic == e.topic())
                        else {
                            continue;
                        };
                        if e.error().is_err() {
                            // A partition-level error: asked again.
                            continue;
                        }
                        let offset = match e.offset() {
                            Offset::Offset(o) if o >= 0 => Offset::Offset(o),
                            _ => self.reset(),
                        };
                        start.insert(tp, offset);
                    }
                    drop(answer);
                }
                Err(e) if code_of(&e).is_some_and(retriable_offset_fetch) => {}
                Err(_) => break,
            }
            if start.len() < partitions.len() {
                std::thread::sleep(Duration::from_millis(100).min(left));
            }
        }
        let mut tpl = TopicPartitionList::with_capacity(partitions.len());
        for tp in partitions {
            let offset = start.get(tp).copied().unwrap_or(Offset::Stored);
            // The offsets are valid (absolute or logical): this cannot fail.
            let _ = tpl.add_partition_offset(&tp.topic, tp.partition, offset);
        }
        tpl
    }
}

/// Whether a failed OffsetFetch may be asked again: the coordinator is
/// moving or loading, a transaction holds the offset (KIP-447), a timeout.
fn retriable_offset_fetch(code: RDKafkaErrorCode) -> bool {
    transient(code)
        || matches!(
            code,
            RDKafkaErrorCode::CoordinatorLoadInProgress
                | RDKafkaErrorCode::WaitingForCoordinator
                | RDKafkaErrorCode::UnstableOffsetCommit
                | RDKafkaErrorCode::TimedOutQueue
        )
}

fn partitions_of(tpl: &TopicPartitionList) -> Vec<TopicPartition> {
    let mut v: Vec<TopicPartition> = tpl
        .elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect();
    v.sort();
    v
}

impl ClientContext for RebalanceContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.health.on_log(&self.client, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.health.on_error(&self.client, &error, reason);
    }

    /// librdkafka's statistics (every `statistics.interval.ms`): keeps
    /// each partition's end offset from the fetch responses, the high
    /// watermark or (read_committed) the last stable offset, as Kafka's
    /// consumer keeps them for `currentLag`.
    fn stats(&self, statistics: Statistics) {
        let (Ok(mut ends), Ok(mut states)) = (self.ends.lock(), self.fetch_states.lock()) else {
            return;
        };
        states.clear();
        for (name, topic) in &statistics.topics {
            for (&partition, p) in &topic.partitions {
                if partition < 0 {
                    continue;
                }
                let tp = TopicPartition::new(name, partition);
                let end = if self.read_committed {
                    p.ls_offset
                } else {
                    p.hi_offset
                };
                if end >= 0 {
                    ends.insert(tp.clone(), end);
                }
                states.insert(tp, p.fetch_state.clone());
            }
        }
        drop((ends, states));
        if let Ok(mut at) = self.stats_at.lock() {
            *at = Some(Instant::now());
        }
    }
}

impl ConsumerContext for RebalanceContext {
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        let partitions = partitions_of(tpl);
        let event = match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                if self.closing.load(Ordering::SeqCst) {
                    let _ = consumer.unassign();
                    return;
                }
                // Every fetcher starts at once, at an offset known here
                // (see StartPolicy::start_offsets).
                // Within the rebalance callback the wait is short (the
                // poll that runs it is blocked meanwhile): an offset not
                // read by then is left to librdkafka's own OffsetFetch
                // (which waits out a pending transaction's unstable
                // offsets), and to the poll's check that every assigned
                // partition is fetched.
                let start =
                    self.start
                        .start_offsets(consumer, &partitions, true, REBALANCE_OFFSETS_BUDGET);
                match consumer.assign(&start) {
                    Ok(()) => Event::Assigned(partitions),
                    Err(_) => {
                        let _ = consumer.unassign();
                        Event::Lost(partitions)
                    }
                }
            }
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => {
                if self.closing.load(Ordering::SeqCst) {
                    let _ = consumer.unassign();
                    return;
                }
                if consumer.assignment_lost() {
                    let _ = consumer.unassign();
                    Event::Lost(partitions)
                } else {
                    // Unassigned by the next poll, after the caller's commit.
                    Event::Revoked(partitions)
                }
            }
            _ => {
                let _ = consumer.unassign();
                Event::Lost(partitions)
            }
        };
        if let Ok(mut events) = self.events.lock() {
            events.push_back(event);
        }
    }
}

type Native = BaseConsumer<RebalanceContext>;

/// Whether a fetch error is one librdkafka recovers from by itself.
fn transient(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::UnknownTopicOrPartition
            | RDKafkaErrorCode::UnknownTopic
            | RDKafkaErrorCode::UnknownPartition
            | RDKafkaErrorCode::LeaderNotAvailable
            | RDKafkaErrorCode::NotLeaderForPartition
            | RDKafkaErrorCode::FencedLeaderEpoch
            | RDKafkaErrorCode::UnknownLeaderEpoch
            | RDKafkaErrorCode::NotCoordinator
            | RDKafkaErrorCode::CoordinatorNotAvailable
            | RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::OperationTimedOut
    )
}

/// The supplier's consumers by member id, so that a producer can send
/// offsets with a consumer's librdkafka group metadata.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    consumers: Mutex<HashMap<String, Weak<Native>>>,
}

impl Registry {
    pub(crate) fn group_metadata(&self, member_id: &str) -> Option<ConsumerGroupMetadata> {
        let consumers = self.consumers.lock().ok()?;
        consumers.get(member_id)?.upgrade()?.group_metadata()
    }

    fn insert(&self, member_id: &str, consumer: &Arc<Native>) {
        if let Ok(mut consumers) = self.consumers.lock() {
            consumers.retain(|_, c| c.strong_count() > 0);
            consumers.insert(member_id.to_owned(), Arc::downgrade(consumer));
        }
    }

    fn remove(&self, member_id: &str) {
        if let Ok(mut consumers) = self.consumers.lock() {
            consumers.remove(member_id);
        }
    }
}

/// Settings of a consumer besides librdkafka's.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) client: String,
    pub(crate) member_id: String,
    pub(crate) group_id: Option<String>,
    pub(crate) max_poll_records: usize,
    pub(crate) poll_timeout: Duration,
    pub(crate) api_timeout: Duration,
    pub(crate) earliest: bool,
}

/// A consumer on a real cluster. See the [module docs](self).
pub struct KafkaConsumer {
    inner: Option<Arc<Native>>,
    /// Asks for watermarks on connections of its own: the broker answers
    /// one request per connection at a time, so a ListOffsets behind the
    /// consumer's long-polling fetch would wait `fetch.wait.max.ms`.
    offsets: OnceLock<Result<BaseConsumer<LogContext>, String>>,
    offsets_config: rdkafka::ClientConfig,
    settings: Settings,
    registry: Arc<Registry>,
    health: Arc<Health>,
    subscribed: bool,
    manual: bool,
    generation: i32,
    joined: bool,
    /// A revocation reported, to act on at the next poll.
    pending_unassign: bool,
    /// Positions set by `seek`, with librdkafka's position at the time.
    sought: HashMap<TopicPartition, (i64, Option<i64>)>,
    /// Where a partition's reading starts, until a record is read.
    starts: HashMap<TopicPartition, i64>,
    /// Assigned or sought outside a group since the last poll.
    fresh: bool,
    paused: BTreeSet<TopicPartition>,
    topics: HashMap<String, Arc<str>>,
    /// When the group last assigned partitions, until every one of them
    /// is seen fetching (see [`check_fetching`](Self::check_fetching)).
    assigned_at: Option<Instant>,
}

impl std::fmt::Debug for KafkaConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaConsumer")
            .field("client", &self.settings.client)
            .field("group_id", &self.settings.group_id)
            .field("member_id", &self.settings.member_id)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl KafkaConsumer {
    pub(crate) fn new(
        config: &rdkafka::ClientConfig,
        settings: Settings,
        registry: Arc<Registry>,
        health: Arc<Health>,
    ) -> Result<Self> {
        let mut config = config.clone();
        if settings.group_id.is_some() && config.get("statistics.interval.ms").is_none() {
            // The end offsets for current_lags, ten times a second.
            config.set("statistics.interval.ms", "100");
        }
        let context = RebalanceContext {
            read_committed: config.get("isolation.level") == Some("read_committed"),
            client: settings.client.clone(),
            health: health.clone(),
            start: StartPolicy {
                earliest: settings.earliest,
                timeout: settings.api_timeout,
            },
            ..RebalanceContext::default()
        };
        let inner: Native = config.create_with_context(context).map_err(|e| {
            client_error(
                &settings.client,
                settings.api_timeout,
                "creating the consumer",
                None,
                e,
            )
        })?;
        let inner = Arc::new(inner);
        registry.insert(&settings.member_id, &inner);
        let mut offsets_config = config.clone();
        // A group id of its own (never joined, nothing committed), so
        // that librdkafka hands the side client's errors to its poll.
        offsets_config
            .remove("group.instance.id")
            .remove("statistics.interval.ms")
            .set(
                "group.id",
                format!("streams-kafka-end-offsets-{}", settings.member_id),
            )
            .set("enable.auto.commit", "false");
        Ok(KafkaConsumer {
            inner: Some(inner),
            offsets: OnceLock::new(),
            offsets_config,
            settings,
            registry,
            health,
            subscribed: false,
            manual: false,
            generation: 0,
            joined: false,
            pending_unassign: false,
            sought: HashMap::new(),
            starts: HashMap::new(),
            fresh: false,
            paused: BTreeSet::new(),
            topics: HashMap::new(),
            assigned_at: None,
        })
    }

    fn native(&self, operation: &'static str) -> Result<&Arc<Native>> {
        self.inner
            .as_ref()
            .ok_or_else(|| ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation,
                state: "closed".to_owned(),
                hint: "create a new consumer",
            })
    }

    /// `err` of `operation` as the client API's error (an authentication
    /// the cluster refused, when the call failed for want of a broker).
    fn error(&self, operation: &str, tp: Option<&TopicPartition>, err: KafkaError) -> ClientError {
        self.health.refine(
            &self.settings.client,
            client_error(
                &self.settings.client,
                self.settings.api_timeout,
                operation,
                tp.map(|tp| (tp.topic.as_str(), Some(tp.partition))),
                err,
            ),
        )
    }

    /// The low and high watermarks of `tp` (the high one is the last
    /// stable offset under read_committed), asked on the side client.
    fn watermarks(&self, tp: &TopicPartition) -> Result<(i64, i64)> {
        self.native("end_offsets")?;
        let side = self.offsets.get_or_init(|| {
            let context = LogContext {
                client: format!("{}-end-offsets", self.settings.client),
                health: self.health.clone(),
            };
            self.offsets_config
                .create_with_context(context)
                .map_err(|e| e.to_string())
        });
        let side = side.as_ref().map_err(|e| ClientError::Implementation {
            client: self.settings.client.clone(),
            source: format!("creating the client that reads end offsets: {e}").into(),
        })?;
        // A leader moving or a broker restarting answers for a while with
        // errors that pass: ask again until default.api.timeout.ms, as
        // Kafka's consumer does.
        let deadline = Instant::now() + self.settings.api_timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let slice = left.min(Duration::from_millis(500));
            let err = match side.fetch_watermarks(&tp.topic, tp.partition, slice) {
                Ok(marks) => return Ok(marks),
                Err(e) => e,
            };
            self.health.drain(side);
            self.health.check(&self.settings.client)?;
            match code_of(&err) {
                Some(code) if transient(code) && left > slice => {
                    std::thread::sleep(Duration::from_millis(100).min(left));
                }
                Some(code) if transient(code) => {
                    return Err(ClientError::Timeout {
                        operation: format!("{}: end offset of {tp} ({err})", self.settings.client),
                        timeout_ms: self.timeout_ms(),
                    });
                }
                _ => return Err(self.error("end_offsets", Some(tp), err)),
            }
        }
    }

    fn timeout_ms(&self) -> i64 {
        i64::try_from(self.settings.api_timeout.as_millis()).unwrap_or(i64::MAX)
    }

    /// librdkafka's position of every assigned partition that has one.
    fn native_positions(&self) -> HashMap<TopicPartition, i64> {
        let Some(inner) = &self.inner else {
            return HashMap::new();
        };
        let Ok(tpl) = inner.position() else {
            return HashMap::new();
        };
        tpl.elements()
            .iter()
            .filter_map(|e| match e.offset() {
                Offset::Offset(o) => Some((TopicPartition::new(e.topic(), e.partition()), o)),
                _ => None,
            })
            .collect()
    }

    fn record(&mut self, m: &BorrowedMessage<'_>) -> ConsumerRecord {
        let topic = self
            .topics
            .entry(m.topic().to_owned())
            .or_insert_with(|| Arc::from(m.topic()))
            .clone();
        let (timestamp, timestamp_type) = match m.timestamp() {
            Timestamp::CreateTime(t) => (t, TimestampType::CreateTime),
            Timestamp::LogAppendTime(t) => (t, TimestampType::LogAppendTime),
            Timestamp::NotAvailable => (-1, TimestampType::CreateTime),
        };
        let headers = m
            .headers()
            .map(|hs| {
                hs.iter()
                    .map(|h| Header {
                        key: h.key.to_owned(),
                        value: h.value.map(Bytes::copy_from_slice),
                    })
                    .collect()
            })
            .unwrap_or_default();
        ConsumerRecord {
            topic,
            partition: m.partition(),
            offset: m.offset(),
            timestamp,
            timestamp_type,
            key: m.key().map(Bytes::copy_from_slice),
            value: m.payload().map(Bytes::copy_from_slice),
            headers,
            leader_epoch: -1,
        }
    }

    /// Whether some assigned partition has records past its position.
    fn lagging(&mut self) -> Result<bool> {
        let assigned = self.assignment();
        if assigned.is_empty() {
            return Ok(false);
        }
        let ends = self.end_offsets(&assigned)?;
        for tp in &assigned {
            if self.paused.contains(tp) {
                continue;
            }
            let pos = self.position(tp)?;
            if ends.get(tp).is_some_and(|&end| pos < end) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The bound on a silent stall after a rebalance: once the group
    /// assigned partitions, each must be seen fetching (librdkafka's
    /// `fetch_state` past `none` in its statistics) within
    /// `default.api.timeout.ms`, or the poll fails with
    /// [`ClientError::Timeout`] naming them. librdkafka reports nothing
    /// when it does not start a partition's fetcher (see
    /// `StartPolicy::start_offsets`): without this a stream thread would
    /// poll its idle assignment forever.
    fn check_fetching(&mut self) -> Result<()> {
        let Some(assigned_at) = self.assigned_at else {
            return Ok(());
        };
        let Some(inner) = &self.inner else {
            return Ok(());
        };
        let context = inner.context();
        let stats_at = context.stats_at.lock().ok().and_then(|at| *at);
        if stats_at.is_none_or(|at| at < assigned_at) {
            return Ok(());
        }
        let assigned = self.assignment();
        let (mut idle, mut started) = (Vec::new(), 0);
        {
            let Ok(states) = context.fetch_states.lock() else {
                return Ok(());
            };
            for tp in &assigned {
                match states.get(tp).map(String::as_str) {
                    Some("none") => idle.push(tp.to_string()),
                    Some(_) => started += 1,
                    None => {}
                }
            }
        }
        if started == assigned.len() {
            // Every assigned partition is fetching (or paused by the
            // caller after it started): nothing more to watch.
            self.assigned_at = None;
            return Ok(());
        }
        if assigned_at.elapsed() < self.settings.api_timeout {
            return Ok(());
        }
        self.assigned_at = None;
        if idle.is_empty() {
            // Not in the statistics: nothing known to be stalled.
            return Ok(());
        }
        Err(ClientError::Timeout {
            operation: format!(
                "{}: poll: librdkafka started no fetcher for the assigned partition(s) {} (their committed offsets could not be read)",
                self.settings.client,
                idle.join(", ")
            ),
            timeout_ms: self.timeout_ms(),
        })
    }

    fn take_event(&self) -> Option<Event> {
        self.inner
            .as_ref()
            .and_then(|c| c.context().events.lock().ok()?.pop_front())
    }
}

impl Consumer for KafkaConsumer {
    fn assign(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        let inner = self.native("assign")?.clone();
        // Each fetcher starts at once at an offset known here: librdkafka
        // would otherwise ask the group's coordinator first (the made-up
        // group of a consumer outside any), and may never start a
        // partition whose OffsetFetch failed (see StartPolicy::start_offsets).
        let tpl = inner.context().start.start_offsets(
            &inner,
            partitions,
            self.settings.group_id.is_some(),
            self.settings.api_timeout,
        );
        inner
            .assign(&tpl)
            .map_err(|e| self.error("assign", partitions.first(), e))?;
        drop(tpl);
        self.manual = !partitions.is_empty();
        self.sought.clear();
        self.starts.clear();
        self.paused.clear();
        self.fresh = self.manual;
        Ok(())
    }

    fn subscribe(
        &mut self,
        topics: &[String],
        _assignor: Arc<dyn PartitionAssignor>,
    ) -> Result<()> {
        if self.settings.group_id.is_none() {
            return Err(ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation: "subscribe",
                state: "without a group.id".to_owned(),
                hint: "set group.id in the consumer's config",
            });
        }
        let inner = self.native("subscribe")?.clone();
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        inner
            .subscribe(&names)
            .map_err(|e| self.error("subscribe", None, e))?;
        self.subscribed = true;
        Ok(())
    }

    fn poll(&mut self) -> Result<Polled> {
        let inner = self.native("poll")?.clone();
        if !self.subscribed && !self.manual {
            return Err(ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation: "poll",
                state: "neither subscribed nor assigned".to_owned(),
                hint: "subscribe or assign partitions first",
            });
        }
        if self.pending_unassign {
            self.pending_unassign = false;
            inner
                .unassign()
                .map_err(|e| self.error("unassign after a revocation", None, e))?;
            self.sought.clear();
            self.starts.clear();
            self.paused.clear();
        }
        let mut wait = self.settings.poll_timeout;
        let mut until_caught_up = false;
        if self.fresh {
            self.fresh = false;
            if self.lagging()? {
                wait = self.settings.api_timeout;
                until_caught_up = true;
            }
        }
        let deadline = Instant::now() + wait;
        let mut records = Vec::new();
        loop {
            let slice = if records.is_empty() {
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(if until_caught_up {
                        self.settings.poll_timeout
                    } else {
                        wait
                    })
            } else {
                Duration::ZERO
            };
            match inner.poll(slice) {
                Some(Ok(m)) => {
                    let r = self.record(&m);
                    drop(m);
                    let tp = TopicPartition::new(&*r.topic, r.partition);
                    self.sought.remove(&tp);
                    self.starts.remove(&tp);
                    records.push(r);
                    if records.len() >= self.settings.max_poll_records {
                        break;
                    }
                    continue;
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(KafkaError::MessageConsumption(code))) if transient(code) => {
                    // librdkafka retries these itself (a topic created a
                    // moment ago, a leader moving), as Kafka's consumer does.
                }
                Some(Err(e)) => {
                    // An offset out of range with no reset, a refused
                    // authorization, a fatal error: the poll fails.
                    let code = code_of(&e);
                    if code.is_some_and(is_authentication) {
                        self.health.refused(&e.to_string());
                    }
                    if code == Some(RDKafkaErrorCode::InconsistentGroupProtocol) {
                        // librdkafka would try to join again and again.
                        return Err(ClientError::InconsistentGroupProtocol {
                            group: self.settings.group_id.clone().unwrap_or_default(),
                            detail: format!("{}: {e}", self.settings.client),
                        });
                    }
                    return Err(self.error("poll", None, e));
                }
                None => {}
            }
            if let Some(event) = self.take_event() {
                let rebalance = match event {
                    Event::Assigned(partitions) => {
                        self.generation += 1;
                        self.joined = true;
                        self.assigned_at = Some(Instant::now());
                        self.sought.clear();
                        self.starts.clear();
                        self.paused.clear();
                        Rebalance::Assigned {
                            partitions,
                            user_data: Bytes::new(),
                            generation: self.generation,
                        }
                    }
                    Event::Revoked(partitions) => {
                        self.pending_unassign = true;
                        self.assigned_at = None;
                        return Ok(Polled {
                            records: Vec::new(),
                            rebalance: Some(Rebalance::Revoked(partitions)),
                        });
                    }
                    Event::Lost(partitions) => {
                        self.joined = false;
                        self.assigned_at = None;
                        return Ok(Polled {
                            records: Vec::new(),
                            rebalance: Some(Rebalance::Lost(partitions)),
                        });
                    }
                };
                return Ok(Polled {
                    records,
                    rebalance: Some(rebalance),
                });
            }
            if !records.is_empty() || Instant::now() >= deadline {
                break;
            }
            if until_caught_up && !self.lagging()? {
                break;
            }
        }
        if records.is_empty() {
            self.check_fetching()?;
        }
        Ok(Polled {
            records,
            rebalance: None,
        })
    }

    fn assignment(&self) -> Vec<TopicPartition> {
        self.inner
            .as_ref()
            .and_then(|c| c.assignment().ok())
            .map(|tpl| partitions_of(&tpl))
            .unwrap_or_default()
    }

    fn position(&mut self, partition: &TopicPartition) -> Result<i64> {
        let native = self.native_positions().get(partition).copied();
        if let Some(&(offset, at_seek)) = self.sought.get(partition) {
            return Ok(match native {
                // librdkafka read on since the seek (data or control records).
                Some(n) if Some(n) != at_seek => n,
                _ => offset,
            });
        }
        if let Some(n) = native {
            return Ok(n);
        }
        if !self.assignment().contains(partition) {
            return Err(ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation: "position",
                state: format!("without an assignment of {partition}"),
                hint: "assign or subscribe to the partition first",
            });
        }
        if let Some(&start) = self.starts.get(partition) {
            return Ok(start);
        }
        // Nothing read yet: reading starts at the committed offset, else
        // where auto.offset.reset says.
        let committed = if self.settings.group_id.is_some() {
            self.committed(partition)?
        } else {
            None
        };
        let start = match committed {
            Some(c) => c,
            None => {
                let (low, high) = self.watermarks(partition)?;
                if self.settings.earliest { low } else { high }
            }
        };
        self.starts.insert(partition.clone(), start);
        Ok(start)
    }

    fn seek(&mut self, partition: &TopicPartition, offset: i64) -> Result<()> {
        let inner = self.native("seek")?.clone();
        let before = self.native_positions().get(partition).copied();
        let sought = inner.seek(
            &partition.topic,
            partition.partition,
            Offset::Offset(offset),
            self.settings.api_timeout,
        );
        if let Err(e) = sought {
            if !self.manual {
                return Err(self.error("seek", Some(partition), e));
            }
            // A partition assigned a moment ago may not be fetching yet:
            // assign again with the offset.
            let assigned = self.assignment();
            let positions = self.native_positions();
            let mut tpl = TopicPartitionList::with_capacity(assigned.len());
            for tp in &assigned {
                let at = if tp == partition {
                    Offset::Offset(offset)
                } else {
                    self.sought
                        .get(tp)
                        .map(|s| s.0)
                        .or_else(|| positions.get(tp).copied())
                        .map_or_else(
                            || match self.settings.group_id {
                                Some(_) => Offset::Stored,
                                None => inner.context().start.reset(),
                            },
                            Offset::Offset,
                        )
                };
                tpl.add_partition_offset(&tp.topic, tp.partition, at)
                    .map_err(|e| self.error("seek", Some(tp), e))?;
            }
            inner
                .assign(&tpl)
                .map_err(|e| self.error("seek", Some(partition), e))?;
        }
        self.sought.insert(partition.clone(), (offset, before));
        self.fresh = self.manual;
        Ok(())
    }

    fn pause(&mut self, partitions: &[TopicPartition], paused: bool) {
        let Some(inner) = &self.inner else {
            return;
        };
        let mut tpl = TopicPartitionList::with_capacity(partitions.len());
        for tp in partitions {
            tpl.add_partition(&tp.topic, tp.partition);
        }
        let done = if paused {
            inner.pause(&tpl)
        } else {
            inner.resume(&tpl)
        };
        if done.is_ok() {
            for tp in partitions {
                if paused {
                    self.paused.insert(tp.clone());
                } else {
                    self.paused.remove(tp);
                }
            }
        }
    }

    fn commit(&mut self, offsets: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        let group = self
            .settings
            .group_id
            .clone()
            .ok_or_else(|| ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation: "commit",
                state: "without a group.id".to_owned(),
                hint: "set group.id in the consumer's config",
            })?;
        if offsets.is_empty() {
            return Ok(());
        }
        let inner = self.native("commit")?.clone();
        let mut tpl = TopicPartitionList::with_capacity(offsets.len());
        for (tp, offset) in offsets {
            tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*offset))
                .map_err(|e| self.error("commit", Some(tp), e))?;
        }
        // A coordinator that is loading or has just moved (a broker
        // restarting) refuses the commit for a moment: commit again until
        // default.api.timeout.ms, as Kafka's commitSync does. An
        // unreachable one fails at once (Unreachable, retriable).
        let deadline = Instant::now() + self.settings.api_timeout;
        let result = loop {
            let result = inner.commit(&tpl, CommitMode::Sync);
            match &result {
                Err(e)
                    if code_of(e).is_some_and(|c| {
                        matches!(
                            c,
                            RDKafkaErrorCode::CoordinatorLoadInProgress
                                | RDKafkaErrorCode::NotCoordinator
                        )
                    }) && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                _ => break result,
            }
        };
        drop(tpl);
        result.map_err(|e| match code_of(&e) {
            Some(c) if is_stale_member(c) || c == RDKafkaErrorCode::State => {
                ClientError::CommitFailed {
                    group,
                    detail: e.to_string(),
                }
            }
            _ => self.error("commit", offsets.keys().next(), e),
        })
    }

    fn committed(&self, partition: &TopicPartition) -> Result<Option<i64>> {
        if self.settings.group_id.is_none() {
            return Err(ClientError::InvalidState {
                client: self.settings.client.clone(),
                operation: "committed",
                state: "without a group.id".to_owned(),
                hint: "set group.id in the consumer's config",
            });
        }
        let inner = self.native("committed")?;
        let mut tpl = TopicPartitionList::with_capacity(1);
        tpl.add_partition(&partition.topic, partition.partition);
        // The list is dropped here, before the consumer can be: a list
        // from committed() that outlives its consumer hangs the drop.
        let answer = inner
            .committed_offsets(tpl, self.settings.api_timeout)
            .map_err(|e| self.error("committed", Some(partition), e))?;
        let offset = answer
            .find_partition(&partition.topic, partition.partition)
            .map(|e| e.offset());
        drop(answer);
        Ok(match offset {
            Some(Offset::Offset(o)) => Some(o),
            _ => None,
        })
    }

    fn end_offsets(&self, partitions: &[TopicPartition]) -> Result<BTreeMap<TopicPartition, i64>> {
        // The ListOffsets request carries the consumer's isolation level:
        // under read_committed the high end is the last stable offset.
        partitions
            .iter()
            .map(|tp| Ok((tp.clone(), self.watermarks(tp)?.1)))
            .collect()
    }

    /// From the end offsets of the last fetch responses (librdkafka's
    /// statistics, every 100 ms) and the consumer's position: no request
    /// to the cluster, so a round of the runtime does not wait on it, nor
    /// fail while a broker is away. A partition not fetched yet is left
    /// out (its lag is not known).
    fn current_lags(
        &mut self,
        partitions: &[TopicPartition],
    ) -> Result<BTreeMap<TopicPartition, i64>> {
        let Some(inner) = &self.inner else {
            return Ok(BTreeMap::new());
        };
        let ends = inner
            .context()
            .ends
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default();
        let positions = self.native_positions();
        let mut lags = BTreeMap::new();
        for tp in partitions {
            let Some(&end) = ends.get(tp) else {
                continue;
            };
            let native = positions.get(tp).copied();
            let position = match (self.sought.get(tp), native) {
                (Some(&(offset, at_seek)), n) => match n {
                    Some(n) if Some(n) != at_seek => n,
                    _ => offset,
                },
                (None, Some(n)) => n,
                (None, None) => match self.starts.get(tp) {
                    Some(&start) => start,
                    None => continue,
                },
            };
            lags.insert(tp.clone(), (end - position).max(0));
        }
        Ok(lags)
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        let group_id = self.settings.group_id.clone()?;
        if !self.joined {
            return None;
        }
        Some(GroupMetadata {
            group_id,
            generation: self.generation,
            member_id: self.settings.member_id.clone(),
        })
    }

    fn close(&mut self, _leave_group: bool) {
        // librdkafka's close always leaves the group (without a
        // group.instance.id): a closed member is gone at once.
        if let Some(inner) = self.inner.take() {
            inner.context().closing.store(true, Ordering::SeqCst);
            if std::mem::take(&mut self.pending_unassign) {
                let _ = inner.unassign();
            }
            self.registry.remove(&self.settings.member_id);
            drop(inner);
        }
    }
}

impl Drop for KafkaConsumer {
    fn drop(&mut self) {
        self.close(true);
    }
}
