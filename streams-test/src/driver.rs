//! `TopologyTestDriver`: runs a topology in memory, synchronously.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use streams_core::engine::{SourceId, StreamTask, TaskMetrics};
use streams_core::serde::Serde;
use streams_core::{RawRecord, Result, StreamsConfig, StreamsError, Topology};

#[cfg(feature = "cluster")]
use crate::cluster::ClusterMirror;
use crate::output_queue::OutputQueue;
use crate::{TestInputTopic, TestOutputTopic};

/// Where the clocks start when a test does not say: epoch millisecond 0.
/// (Kafka starts at the machine's current time; a fixed start makes every
/// run of a test the same.)
pub const DEFAULT_START_MS: i64 = 0;

#[derive(Debug)]
struct InputQueue {
    topic: Arc<str>,
    /// The source that reads the topic.
    source: SourceId,
    records: VecDeque<(i64, RawRecord)>,
    next_offset: i64,
}

/// Where the records written to an output topic go besides the topic
/// itself, decided once when the topic is first written.
#[derive(Debug, Clone, Copy)]
enum FeedBack {
    /// Nowhere: no source reads the topic.
    None,
    /// Into the input queue at this index (a source reads the topic).
    Stream(usize),
    /// Into the global store that reads the topic, at once.
    Global,
}

#[derive(Debug)]
struct Output {
    topic: Arc<str>,
    queue: OutputQueue,
    feed_back: FeedBack,
}

pub(crate) struct DriverState {
    task: StreamTask,
    /// Queued records per input topic, in the order topics were first seen.
    queues: Vec<InputQueue>,
    /// How many records all input queues hold.
    queued: usize,
    /// Output topics, in the order they were first written.
    outputs: Vec<Output>,
    /// The output of each of the task's produced-topic numbers, once seen
    /// (`usize::MAX` before): records are routed by number, not by name.
    output_of_topic: Vec<usize>,
    produced_buffer: Vec<(usize, RawRecord)>,
    produced_topics: BTreeSet<String>,
    /// Topics a test reads (it created a `TestOutputTopic` for them) not
    /// written yet: their outputs will keep records as written.
    read_topics: Vec<String>,
    wall_clock: i64,
    /// The next offset of each global topic piped to or written.
    global_offsets: Vec<(Arc<str>, i64)>,
    /// The cluster that output, repartition and changelog records are also
    /// appended to, if the driver was given one.
    #[cfg(feature = "cluster")]
    cluster: Option<ClusterMirror>,
    /// `max.task.idle.ms`: how long the task waits, on the wall clock, for
    /// an input partition that has no record while others have some.
    max_task_idle_ms: i64,
    /// The task's input partitions as Kafka's driver has them (each source
    /// topic, and one per pattern), with the wall-clock deadline of an
    /// empty one's idling (Kafka's `PartitionGroup.idlePartitionDeadlines`).
    idle_partitions: Vec<(String, Option<i64>)>,
}

impl DriverState {
    pub(crate) fn task(&self) -> &StreamTask {
        &self.task
    }

    /// The records written to `topic` and not yet read, if it was ever
    /// written, every one in `records`.
    pub(crate) fn output_mut(&mut self, topic: &str) -> Option<&mut OutputQueue> {
        let queue = self.output_packed(topic)?;
        queue.unpack();
        Some(queue)
    }

    /// The records written to `topic` and not yet read, if it was ever
    /// written, the newest ones still packed.
    pub(crate) fn output_packed(&mut self, topic: &str) -> Option<&mut OutputQueue> {
        self.outputs
            .iter_mut()
            .find(|o| &*o.topic == topic)
            .map(|o| &mut o.queue)
    }

    /// A test reads `topic` (it has a `TestOutputTopic`): its output keeps
    /// records as written, for the reader to decode without copies (see
    /// [`OutputQueue::keep_owned`]).
    pub(crate) fn will_read(&mut self, topic: &str) {
        match self.outputs.iter_mut().find(|o| &*o.topic == topic) {
            Some(output) => output.queue.keep_owned(),
            None => {
                if !self.read_topics.iter().any(|t| t == topic) {
                    self.read_topics.push(topic.to_owned());
                }
            }
        }
    }

    pub(crate) fn produced_topic_names(&self) -> &BTreeSet<String> {
        &self.produced_topics
    }

    /// Topics a sink can write (fixed sink topics); for error messages.
    pub(crate) fn sink_topics(&self) -> Vec<String> {
        let mut all: BTreeSet<String> = self.task.sink_topics().iter().cloned().collect();
        all.extend(self.produced_topics.iter().cloned());
        all.into_iter().collect()
    }

    fn known_topics(&self) -> Vec<String> {
        self.task
            .source_topics()
            .into_iter()
            .chain(self.task.source_patterns())
            .chain(self.task.global_topics())
            .map(str::to_owned)
            .collect()
    }

    /// Processes a record of a global store's topic at once, as Kafka's
    /// driver does: not queued, stream time untouched, no punctuation.
    fn process_global(&mut self, topic: &str, record: RawRecord) -> Result<()> {
        let offset = match self.global_offsets.iter_mut().find(|(t, _)| &**t == topic) {
            Some((_, next)) => {
                *next += 1;
                *next - 1
            }
            None => {
                self.global_offsets.push((Arc::from(topic), 1));
                0
            }
        };
        self.task.process_global(topic, offset, record)
    }

    /// Queues a record for an input topic and processes everything that
    /// can be processed.
    pub(crate) fn pipe(&mut self, topic: &str, record: RawRecord) -> Result<()> {
        // A topic piped before has its queue: no need to ask the task again.
        if let Some(i) = self.queues.iter().position(|q| &*q.topic == topic) {
            return self.pipe_to_queue(i, record);
        }
        if let Some(source) = self.task.source_name_read_as_regex(topic) {
            return Err(streams_core::TopologyError::SourceTopicMatchesAsRegex {
                source_topic: source.to_owned(),
                topic: topic.to_owned(),
            }
            .into());
        }
        if self.task.reads_global(topic) {
            if record.timestamp < 0 {
                return Err(StreamsError::NegativeTimestamp {
                    topic: topic.to_owned(),
                    timestamp: record.timestamp,
                });
            }
            let result = self.process_global(topic, record);
            self.capture_outputs()?;
            return result;
        }
        if !self.task.reads(topic) {
            return Err(StreamsError::UnknownTopic {
                topic: topic.to_owned(),
                known: self.known_topics(),
            });
        }
        match self.try_queue_index(topic) {
            Some(i) => self.pipe_to_queue(i, record),
            None => Err(StreamsError::UnknownTopic {
                topic: topic.to_owned(),
                known: self.known_topics(),
            }),
        }
    }

    /// Pipes a record to the input queue at index `i`: when nothing else
    /// waits (no queued record, no output to capture first), it is
    /// processed at once, as it would be first anyway.
    fn pipe_to_queue(&mut self, i: usize, record: RawRecord) -> Result<()> {
        if record.timestamp < 0 {
            return Err(StreamsError::NegativeTimestamp {
                topic: self.queues[i].topic.to_string(),
                timestamp: record.timestamp,
            });
        }
        if self.queued == 0 && !self.task.has_produced() && self.max_task_idle_ms <= 0 {
            let queue = &mut self.queues[i];
            let offset = queue.next_offset;
            queue.next_offset += 1;
            self.process_one(i, offset, record)?;
            // `process_one` captured what the record produced: with no
            // record fed back, there is nothing left to do.
            if self.queued == 0 {
                return Ok(());
            }
        } else {
            self.enqueue(i, record);
        }
        self.complete_all_processable_work()
    }

    /// As [`pipe`](DriverState::pipe), remembering in `queue` the index
    /// of the topic's input queue once it has one, so that the next
    /// records of the topic (piped with the same `queue`) skip the look-up
    /// by name.
    pub(crate) fn pipe_cached(
        &mut self,
        topic: &str,
        queue: &Cell<Option<usize>>,
        record: RawRecord,
    ) -> Result<()> {
        if let Some(i) = queue.get() {
            return self.pipe_to_queue(i, record);
        }
        let result = self.pipe(topic, record);
        queue.set(self.queues.iter().position(|q| &*q.topic == topic));
        result
    }

    /// The index of the input queue of `topic`, a topic the task reads,
    /// created empty if needed; `None` if no source reads it.
    fn try_queue_index(&mut self, topic: &str) -> Option<usize> {
        match self.queues.iter().position(|q| &*q.topic == topic) {
            Some(i) => Some(i),
            None => {
                let source = self.task.source_id(topic)?;
                self.queues.push(InputQueue {
                    topic: Arc::from(topic),
                    source,
                    records: VecDeque::new(),
                    next_offset: 0,
                });
                Some(self.queues.len() - 1)
            }
        }
    }

    fn enqueue(&mut self, i: usize, record: RawRecord) {
        let q = &mut self.queues[i];
        q.records.push_back((q.next_offset, record));
        q.next_offset += 1;
        self.queued += 1;
    }

    /// Processes one record of the input queue at index `i`, then
    /// stream-time punctuation, then captures what was produced (kept even
    /// if processing failed).
    fn process_one(&mut self, i: usize, offset: i64, record: RawRecord) -> Result<()> {
        let queue = &self.queues[i];
        let result = self
            .task
            .process_from(queue.source, &queue.topic, offset, record)
            .and_then(|()| self.task.maybe_punctuate_stream_time().map(|_| ()))
            // Kafka's driver commits after each record: the record caches flush.
            .and_then(|()| self.task.commit());
        let captured = self.capture_outputs();
        result?;
        captured
    }

    /// Moves what sinks produced to the output topics, and feeds records
    /// written to topics the topology reads back into their queues (and
    /// records written to a global store's topic into the store, at once).
    fn capture_outputs(&mut self) -> Result<()> {
        if !self.task.has_produced() {
            return Ok(());
        }
        let mut produced = std::mem::take(&mut self.produced_buffer);
        self.task.take_produced_numbered(&mut produced);
        let mut first_error = None;
        for (topic, record) in produced.drain(..) {
            let index = match self.output_of_topic.get(topic) {
                Some(&i) if i != usize::MAX => i,
                _ => self.output_of_topic_number(topic),
            };
            #[cfg(feature = "cluster")]
            if let Some(cluster) = &mut self.cluster
                && let Err(e) = cluster.append(&self.outputs[index].topic, &record)
                && first_error.is_none()
            {
                first_error = Some(e);
            }
            let output = &mut self.outputs[index];
            match output.feed_back {
                // The topic keeps the record.
                FeedBack::None => output.queue.push_owned(record),
                // The topic keeps a copy; a record fed back is read again.
                FeedBack::Stream(queue) => {
                    output.queue.push(&record);
                    self.enqueue(queue, record);
                }
                // Every output is captured; the first failure is reported.
                FeedBack::Global => {
                    output.queue.push(&record);
                    let topic = self.outputs[index].topic.clone();
                    if let Err(e) = self.process_global(&topic, record)
                        && first_error.is_none()
                    {
                        first_error = Some(e);
                    }
                }
            }
        }
        self.produced_buffer = produced;
        first_error.map_or(Ok(()), Err)
    }

    /// The index of the output of the task's produced topic `number`.
    fn output_of_topic_number(&mut self, number: usize) -> usize {
        let topic = self
            .task
            .produced_topic(number)
            .unwrap_or_else(|| Arc::from(""));
        let index = self.output_index(&topic);
        if self.output_of_topic.len() <= number {
            self.output_of_topic.resize(number + 1, usize::MAX);
        }
        self.output_of_topic[number] = index;
        index
    }

    /// The index of the output of `topic`, created (with where its records
    /// go besides) when the topic is first written.
    fn output_index(&mut self, topic: &Arc<str>) -> usize {
        if let Some(i) = self.outputs.iter().position(|o| o.topic == *topic) {
            return i;
        }
        self.produced_topics.insert(topic.to_string());
        let feed_back = if self.task.reads_global(topic) {
            FeedBack::Global
        } else {
            match self.try_queue_index(topic) {
                Some(queue) => FeedBack::Stream(queue),
                None => FeedBack::None,
            }
        };
        let mut queue = OutputQueue::default();
        if let Some(i) = self.read_topics.iter().position(|t| **t == **topic) {
            self.read_topics.swap_remove(i);
            queue.keep_owned();
        }
        self.outputs.push(Output {
            topic: topic.clone(),
            queue,
            feed_back,
        });
        self.outputs.len() - 1
    }

    /// Whether the task may process now, Kafka's
    /// `PartitionGroup.readyToProcess` in its driver (every partition
    /// fetched, lag 0): with `max.task.idle.ms` above 0, an empty input
    /// partition holds processing back until the wall clock reaches its
    /// deadline (set when it is first seen empty, cleared when it has
    /// records), partitions looked at in the topology's source order.
    fn ready_to_process(&mut self) -> bool {
        if self.max_task_idle_ms <= 0 {
            return true;
        }
        let wall = self.wall_clock;
        for p in 0..self.idle_partitions.len() {
            let name = &self.idle_partitions[p].0;
            let buffered = self.queues.iter().any(|q| {
                !q.records.is_empty()
                    && (&*q.topic == name || self.task.source_pattern_of(&q.topic) == Some(name))
            });
            let deadline = &mut self.idle_partitions[p].1;
            if buffered {
                *deadline = None;
                continue;
            }
            let at = *deadline.get_or_insert(wall.saturating_add(self.max_task_idle_ms));
            if wall < at {
                return false;
            }
        }
        true
    }

    /// Processes queued records until none is left (or, with
    /// `max.task.idle.ms`, until the task must wait for an empty input):
    /// the one with the smallest timestamp first (then the queue seen
    /// first), each followed by stream-time punctuation and output
    /// capture, as Kafka's driver. Outputs produced before an error are
    /// kept.
    fn complete_all_processable_work(&mut self) -> Result<()> {
        self.capture_outputs()?;
        while self.queued > 0 && self.ready_to_process() {
            let next = self
                .queues
                .iter()
                .enumerate()
                .filter_map(|(i, q)| q.records.front().map(|(_, r)| (r.timestamp, i)))
                .min();
            let Some((_, i)) = next else { return Ok(()) };
            let Some((offset, record)) = self.queues[i].records.pop_front() else {
                return Ok(());
            };
            self.queued -= 1;
            self.process_one(i, offset, record)?;
        }
        Ok(())
    }

    pub(crate) fn advance_wall_clock(&mut self, advance: Duration) -> Result<()> {
        let millis =
            i64::try_from(advance.as_millis()).map_err(|_| StreamsError::DurationTooLarge {
                what: "wall-clock advance",
                duration: advance,
            })?;
        self.wall_clock = self.wall_clock.saturating_add(millis);
        let result = self
            .task
            .maybe_punctuate_wall_clock(self.wall_clock)
            .and_then(|_| self.task.commit());
        let captured = self.capture_outputs();
        result?;
        captured?;
        self.complete_all_processable_work()
    }
}

/// Runs a [`Topology`] in memory, synchronously and deterministically,
/// Kafka's `TopologyTestDriver`.
///
/// Create typed input and output topics with
/// [`create_input_topic`](TopologyTestDriver::create_input_topic) and
/// [`create_output_topic`](TopologyTestDriver::create_output_topic); both
/// borrow the driver, so any number can be used at once. Each piped record
/// is processed to completion before the pipe returns: through every
/// processor, then stream-time punctuation, then any records written to
/// topics the topology itself reads are processed too (smallest timestamp
/// first). The wall clock moves only when
/// [`advance_wall_clock_time`](TopologyTestDriver::advance_wall_clock_time)
/// is called. All topics have one partition, 0.
///
/// ```
/// use streams_core::serde::StringSerde;
/// use streams_core::StreamsBuilder;
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
/// let driver = TopologyTestDriver::new(builder.build()?)?;
/// let input = driver.create_input_topic("in", StringSerde, StringSerde);
/// let output = driver.create_output_topic("out", StringSerde, StringSerde);
/// input.pipe_key_value("k", "hello");
/// assert_eq!(output.read_value(), Some("HELLO".to_string()));
/// assert!(output.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TopologyTestDriver {
    state: RefCell<Option<DriverState>>,
    start_ms: i64,
}

impl std::fmt::Debug for TopologyTestDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.state.borrow() {
            Some(s) => f
                .debug_struct("TopologyTestDriver")
                .field("task", &s.task)
                .field("wall_clock", &s.wall_clock)
                .field("produced_topics", &s.produced_topics)
                .finish_non_exhaustive(),
            None => f.write_str("TopologyTestDriver(closed)"),
        }
    }
}

/// Builds a [`TopologyTestDriver`] with a config and a start time.
///
/// ```
/// use streams_core::{StreamsBuilder, StreamsConfig};
/// use streams_test::TopologyTestDriver;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").to("out");
/// let driver = TopologyTestDriver::builder(builder.build()?)
///     .config(StreamsConfig::new("my-app"))
///     .initial_wall_clock_time(1_000)
///     .build()?;
/// assert_eq!(driver.wall_clock_time(), 1_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DriverBuilder {
    topology: Topology,
    config: StreamsConfig,
    start_ms: i64,
    #[cfg(feature = "cluster")]
    cluster: Option<streams_broker::Cluster>,
}

impl DriverBuilder {
    /// Sets the config (`application.id`, default serdes, ...).
    #[must_use]
    pub fn config(mut self, config: StreamsConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets the wall clock's start, in epoch millis; also the default
    /// start time of input topics.
    #[must_use]
    pub fn initial_wall_clock_time(mut self, epoch_ms: i64) -> Self {
        self.start_ms = epoch_ms;
        self
    }

    /// Mirrors the driver's topics to a simulated cluster (see
    /// [`crate::cluster`]): records captured for output, repartition and
    /// changelog topics are also appended to the cluster, and stores whose
    /// changelog topic the cluster has are restored from it at build.
    #[must_use]
    #[cfg(feature = "cluster")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
    pub fn cluster(mut self, cluster: streams_broker::Cluster) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Builds the driver: instantiates and initializes every processor,
    /// and restores stores from the cluster's changelogs if it has one.
    ///
    /// # Errors
    /// An invalid topology, a missing serde, a failing `init`, or a
    /// changelog record a store cannot decode.
    pub fn build(self) -> Result<TopologyTestDriver> {
        let task = StreamTask::new(&self.topology, &self.config, self.start_ms)?;
        let max_task_idle_ms = match self.config.properties().get("max.task.idle.ms") {
            None => 0,
            Some(v) => v.trim().parse::<i64>().map_err(|_| StreamsError::InvalidConfig {
                config: "max.task.idle.ms",
                value: v.clone(),
                expected: "a whole number of milliseconds (0, the default, does not wait; -1 disables idling)",
            })?,
        };
        let idle_partitions = task
            .source_topics()
            .into_iter()
            .chain(task.source_patterns())
            .map(|t| (t.to_owned(), None))
            .collect();
        #[cfg(feature = "cluster")]
        let cluster = self.cluster.map(ClusterMirror::new);
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &cluster {
            // A source store (`reuse.ktable.source.topics`) comes back from
            // its table's topic, the others from their changelogs.
            let sources: std::collections::BTreeMap<String, String> = self
                .topology
                .topics_info(task.application_id())
                .into_iter()
                .flat_map(|info| info.source_changelog_topics)
                .collect();
            for store in task.store_names() {
                let (topic, from_source) = match sources.get(&store) {
                    Some(topic) => (topic.clone(), true),
                    None => (
                        streams_core::state::changelog_topic(task.application_id(), &store),
                        false,
                    ),
                };
                if let Some(mut records) = cluster.read_all(&topic)? {
                    if from_source {
                        records.retain(|r| r.key.is_some());
                    }
                    task.restore_store(&store, &records)?;
                }
            }
        }
        Ok(TopologyTestDriver {
            state: RefCell::new(Some(DriverState {
                task,
                queues: Vec::new(),
                queued: 0,
                outputs: Vec::new(),
                output_of_topic: Vec::new(),
                produced_buffer: Vec::new(),
                produced_topics: BTreeSet::new(),
                read_topics: Vec::new(),
                wall_clock: self.start_ms,
                global_offsets: Vec::new(),
                #[cfg(feature = "cluster")]
                cluster,
                max_task_idle_ms,
                idle_partitions,
            })),
            start_ms: self.start_ms,
        })
    }
}

impl TopologyTestDriver {
    /// A driver with the default config (`application.id` `test-app`, no
    /// default serdes) and clocks starting at [`DEFAULT_START_MS`].
    ///
    /// # Errors
    /// As [`DriverBuilder::build`].
    pub fn new(topology: Topology) -> Result<Self> {
        Self::builder(topology).build()
    }

    /// A driver with this config.
    ///
    /// # Errors
    /// As [`DriverBuilder::build`].
    pub fn with_config(topology: Topology, config: StreamsConfig) -> Result<Self> {
        Self::builder(topology).config(config).build()
    }

    /// A builder, to set the config and the start time.
    pub fn builder(topology: Topology) -> DriverBuilder {
        DriverBuilder {
            topology,
            config: StreamsConfig::default(),
            start_ms: DEFAULT_START_MS,
            #[cfg(feature = "cluster")]
            cluster: None,
        }
    }

    pub(crate) fn with_state<T>(&self, f: impl FnOnce(&mut DriverState) -> Result<T>) -> Result<T> {
        let mut guard = self
            .state
            .try_borrow_mut()
            .map_err(|_| StreamsError::DriverInUse)?;
        match guard.as_mut() {
            Some(state) => f(state),
            None => Err(StreamsError::Closed("test driver")),
        }
    }

    /// A typed handle to pipe records into `topic`, with its own clock
    /// starting at the driver's start time and not advancing by itself.
    /// Piping to a topic that no source reads fails with the topics that
    /// exist.
    #[doc(alias = "createInputTopic")]
    pub fn create_input_topic<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> TestInputTopic<'_, K, V> {
        TestInputTopic::new(
            self,
            topic,
            Arc::new(key_serde),
            Arc::new(value_serde),
            self.start_ms,
            Duration::ZERO,
        )
    }

    /// As [`create_input_topic`](TopologyTestDriver::create_input_topic),
    /// with a start time for the topic's clock (epoch millis) and a step it
    /// advances by after each record piped without a timestamp.
    pub fn create_input_topic_with_time<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
        start_ms: i64,
        auto_advance: Duration,
    ) -> TestInputTopic<'_, K, V> {
        TestInputTopic::new(
            self,
            topic,
            Arc::new(key_serde),
            Arc::new(value_serde),
            start_ms,
            auto_advance,
        )
    }

    /// A typed handle to read what the topology wrote to `topic`.
    #[doc(alias = "createOutputTopic")]
    pub fn create_output_topic<K: 'static, V: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
    ) -> TestOutputTopic<'_, K, V> {
        TestOutputTopic::new(self, topic, Arc::new(key_serde), Arc::new(value_serde))
    }

    /// Pipes one serialized record into `topic` and processes it (and
    /// everything it causes) to completion.
    ///
    /// # Errors
    /// An unknown topic, a negative timestamp, or any processing error.
    #[doc(alias = "pipeInput")]
    pub fn pipe_raw(&self, topic: &str, record: RawRecord) -> Result<()> {
        self.with_state(|s| s.pipe(topic, record))
    }

    /// As [`pipe_raw`](TopologyTestDriver::pipe_raw), for a topic handle
    /// that remembers its input queue in `queue`.
    pub(crate) fn pipe_raw_cached(
        &self,
        topic: &str,
        queue: &Cell<Option<usize>>,
        record: RawRecord,
    ) -> Result<()> {
        self.with_state(|s| s.pipe_cached(topic, queue, record))
    }

    /// Advances the mock wall clock, firing wall-clock punctuations that
    /// are due (each at most once), then processes whatever they caused.
    ///
    /// # Errors
    /// Any error a punctuation or processor returned.
    pub fn try_advance_wall_clock_time(&self, advance: Duration) -> Result<()> {
        self.with_state(|s| s.advance_wall_clock(advance))
    }

    /// As [`try_advance_wall_clock_time`](TopologyTestDriver::try_advance_wall_clock_time).
    ///
    /// # Panics
    /// If a punctuation or processor fails, with its error.
    #[track_caller]
    #[doc(alias = "advanceWallClockTime")]
    pub fn advance_wall_clock_time(&self, advance: Duration) {
        if let Err(e) = self.try_advance_wall_clock_time(advance) {
            panic!("advancing the wall clock by {advance:?} failed: {e}");
        }
    }

    /// The wall clock's current time, in epoch millis.
    pub fn wall_clock_time(&self) -> i64 {
        self.with_state(|s| Ok(s.wall_clock))
            .unwrap_or(self.start_ms)
    }

    /// The current stream time: the largest timestamp processed, or `-1`.
    pub fn stream_time(&self) -> i64 {
        self.with_state(|s| Ok(s.task.stream_time())).unwrap_or(-1)
    }

    /// The names of every topic the topology has written to, internal
    /// (`-repartition`, `-changelog`) ones included, sorted.
    #[doc(alias = "producedTopicNames")]
    pub fn produced_topic_names(&self) -> BTreeSet<String> {
        self.with_state(|s| Ok(s.produced_topics.clone()))
            .unwrap_or_default()
    }

    /// Counters of processed and dropped records.
    pub fn metrics(&self) -> TaskMetrics {
        self.with_state(|s| Ok(s.task.metrics()))
            .unwrap_or_default()
    }

    /// Where [`TaskMetrics::dropped_records`] came from: each node that
    /// dropped records, by name, with how many (the source of an
    /// undecodable record, the processor whose user code failed or that
    /// dropped a late record, the sink that could not serialize). The
    /// counts add up to `metrics().dropped_records`.
    ///
    /// ```
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    /// use streams_core::serde::StringSerde;
    /// use streams_test::TopologyTestDriver;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .try_map_values(|v| v.parse::<i64>().map(|n| (n * 2).to_string()))
    ///     .to("out");
    /// let config = StreamsConfig::new("app")
    ///     .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
    /// let driver = TopologyTestDriver::with_config(builder.build()?, config)?;
    /// let input = driver.create_input_topic("in", StringSerde, StringSerde);
    /// input.pipe_values(["1", "x", "y"]);
    /// assert_eq!(driver.metrics().dropped_records, 2);
    /// assert_eq!(
    ///     driver.dropped_records_by_node().into_iter().collect::<Vec<_>>(),
    ///     [("KSTREAM-MAPVALUES-0000000001".to_string(), 2)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dropped_records_by_node(&self) -> std::collections::BTreeMap<String, u64> {
        self.with_state(|s| Ok(s.task.dropped_records_by_node()))
            .unwrap_or_default()
    }

    /// Closes every processor and drops all state, Kafka's `close()`.
    /// Topic handles borrow the driver, so none can outlive this call.
    /// Dropping the driver closes it too, but cannot report errors.
    ///
    /// When the topology has persistent (RocksDB) stores, their files go
    /// too: the driver deletes the application's state directory,
    /// `<state.dir>/<application.id>`, as Kafka's does at close, so a new
    /// driver on the same directory starts empty. (Dropping the driver
    /// deletes it as well; Kafka's leaves it when not closed.)
    ///
    /// # Errors
    /// The first error a processor's `close` returned (all are closed), or
    /// the state directory could not be deleted.
    pub fn close(self) -> Result<()> {
        let state = self.state.borrow_mut().take();
        match state {
            Some(s) => finish(s),
            None => Ok(()),
        }
    }
}

/// Closes the task, drops its stores (a RocksDB store closes its files)
/// and deletes the state directory if any store kept files there.
fn finish(mut state: DriverState) -> Result<()> {
    let persistent = state.task.has_persistent_stores();
    let config = state.task.config().clone();
    let closed = state.task.close();
    drop(state);
    if persistent {
        streams_core::state::clean_state_dir(&config).map_err(|e| {
            StreamsError::StateDirCleanup {
                path: config.state_dir().join(config.application_id()),
                reason: e.to_string(),
            }
        })?;
    }
    closed
}

impl Drop for TopologyTestDriver {
    fn drop(&mut self) {
        if let Some(state) = self.state.get_mut().take() {
            // Processors are closed on drop too, as the driver's resources
            // end here; errors cannot be reported from drop.
            let _ = finish(state);
        }
    }
}
