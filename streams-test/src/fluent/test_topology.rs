//! [`TestTopology`]: a topology, its config and its driver in one value,
//! with its input and output topics found from the topology itself.

use std::cell::OnceCell;
use std::sync::Arc;

use streams_core::serde::{BytesSerde, Serde, SerdeRef, StringSerde};
use streams_core::state::changelog_topic;
use streams_core::{Result, StreamsBuilder, StreamsConfig, Topology};

use super::report::fail;
use super::{StoreAssert, TableAssert, TestInput, TestOutput};
use crate::{DEFAULT_START_MS, TopologyTestDriver};

/// What [`TestTopology::new`] accepts: a [`Topology`], a
/// `Result<Topology>`, a function returning one (such as an example's
/// `topology` function), or a function that builds on a
/// [`StreamsBuilder`].
///
/// `Marker` only tells the implementations apart; it is inferred.
pub trait IntoTopology<Marker> {
    /// The topology.
    ///
    /// # Errors
    /// Building the topology failed.
    fn into_topology(self) -> Result<Topology>;
}

impl IntoTopology<Topology> for Topology {
    fn into_topology(self) -> Result<Topology> {
        Ok(self)
    }
}

impl IntoTopology<Result<Topology>> for Result<Topology> {
    fn into_topology(self) -> Result<Topology> {
        self
    }
}

impl<F: FnOnce() -> Result<Topology>> IntoTopology<fn() -> Result<Topology>> for F {
    fn into_topology(self) -> Result<Topology> {
        self()
    }
}

impl<F: FnOnce(&StreamsBuilder)> IntoTopology<fn(&StreamsBuilder)> for F {
    fn into_topology(self) -> Result<Topology> {
        let builder = StreamsBuilder::new();
        self(&builder);
        builder.build()
    }
}

/// The part of a [`TestTopology`] that does not depend on its default
/// types, which every handle borrows.
#[derive(Debug)]
pub(crate) struct Harness {
    topology: Topology,
    config: StreamsConfig,
    start_ms: i64,
    driver: OnceCell<TopologyTestDriver>,
}

fn dedup(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

impl Harness {
    pub(crate) fn try_driver(&self) -> Result<&TopologyTestDriver> {
        if let Some(driver) = self.driver.get() {
            return Ok(driver);
        }
        let driver = TopologyTestDriver::builder(self.topology.clone())
            .config(self.config.clone())
            .initial_wall_clock_time(self.start_ms)
            .build()?;
        Ok(self.driver.get_or_init(|| driver))
    }

    #[track_caller]
    pub(crate) fn driver(&self) -> &TopologyTestDriver {
        match self.try_driver() {
            Ok(d) => d,
            Err(e) => fail(format!("starting the test topology failed: {e}")),
        }
    }

    /// The topics sources read by name, internal ones left out.
    pub(crate) fn input_topics(&self) -> Vec<String> {
        dedup(
            self.topology
                .source_topics()
                .into_iter()
                .filter(|t| !t.internal)
                .map(|t| t.name.clone()),
        )
    }

    /// The topics sinks write by name, internal ones left out.
    pub(crate) fn output_topics(&self) -> Vec<String> {
        dedup(
            self.topology
                .sink_topics()
                .into_iter()
                .filter(|t| !t.internal)
                .map(|t| t.name.clone()),
        )
    }

    /// Repartition topics and store changelogs, with their
    /// `application.id` prefix.
    pub(crate) fn internal_topics(&self) -> Vec<String> {
        let app = self.config.application_id();
        let internal = self
            .topology
            .sink_topics()
            .into_iter()
            .chain(self.topology.source_topics())
            .filter(|t| t.internal)
            .map(|t| t.full_name(app));
        let changelogs = self
            .topology
            .store_names()
            .into_iter()
            .map(|s| changelog_topic(app, s));
        dedup(internal.chain(changelogs))
    }

    /// Whether the topology may write `topic`: a sink's topic, a
    /// repartition topic or a changelog.
    pub(crate) fn writes(&self, topic: &str) -> bool {
        self.output_topics().iter().any(|t| t == topic)
            || self.internal_topics().iter().any(|t| t == topic)
    }

    pub(crate) fn is_internal(&self, topic: &str) -> bool {
        self.internal_topics().iter().any(|t| t == topic)
    }

    #[track_caller]
    fn only(&self, topics: Vec<String>, reads: &str, named: &str) -> String {
        match <[String; 1]>::try_from(topics) {
            Ok([topic]) => topic,
            Err(topics) if topics.is_empty() => fail(format!(
                "the topology {reads} no topic by name; name the topic with `{named}`"
            )),
            Err(topics) => fail(format!(
                "the topology {reads} {} topics, {topics:?}; name one with `{named}`",
                topics.len()
            )),
        }
    }
}

/// A topology under test, Kafka's `TopologyTestDriver` behind a fluent
/// front, as bakdata's fluent-kafka-streams-tests `TestTopology`.
///
/// Give it a topology (or a function that builds one); it finds the
/// topics the topology reads and writes, so a test with one input and one
/// output names neither. `K` and `V` are the default key and value types
/// of its input and output handles: `String` unless
/// [`with_default_serdes`](TestTopology::with_default_serdes) says
/// otherwise, and each handle can take other serdes. The driver starts at
/// the first use, with `application.id` `test-app` and the clocks at
/// epoch millisecond 0, unless configured otherwise.
///
/// ```
/// use streams_core::serde::I64Serde;
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|builder: &StreamsBuilder| {
///     builder.stream::<String, String>("words").map_values(|w| w.len() as i64).to("lengths");
/// })?;
/// assert_eq!(topology.input_topics(), ["words"]);
/// topology.input().add("a", "kafka").add("b", "streams");
/// topology
///     .output()
///     .with_value_serde(I64Serde)
///     .expect_next_record().has_key("a").has_value(5)
///     .and().expect_next_record().has_key("b").has_value(7)
///     .and().expect_no_more_records();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TestTopology<K = String, V = String> {
    harness: Harness,
    key_serde: SerdeRef<K>,
    value_serde: SerdeRef<V>,
}

impl<K, V> std::fmt::Debug for TestTopology<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestTopology")
            .field("harness", &self.harness)
            .field("key_type", &std::any::type_name::<K>())
            .field("value_type", &std::any::type_name::<V>())
            .finish()
    }
}

impl TestTopology {
    /// A test topology from a [`Topology`], a `Result<Topology>`, a
    /// function returning one, or a function building on a
    /// [`StreamsBuilder`] (annotate its argument: `|b: &StreamsBuilder|`).
    ///
    /// # Errors
    /// Building the topology failed.
    pub fn new<M>(topology: impl IntoTopology<M>) -> Result<Self> {
        Ok(Self::from_topology(topology.into_topology()?))
    }

    /// A test topology from a built [`Topology`].
    pub fn from_topology(topology: Topology) -> Self {
        TestTopology {
            harness: Harness {
                topology,
                config: StreamsConfig::default(),
                start_ms: DEFAULT_START_MS,
                driver: OnceCell::new(),
            },
            key_serde: Arc::new(StringSerde),
            value_serde: Arc::new(StringSerde),
        }
    }
}

impl<K: 'static, V: 'static> TestTopology<K, V> {
    /// Restarts from scratch: configuration happens before the first use,
    /// and a driver started already is dropped.
    fn reconfigured(mut self, f: impl FnOnce(&mut Harness)) -> Self {
        self.harness.driver = OnceCell::new();
        f(&mut self.harness);
        self
    }

    /// Sets the default serdes: the config's `default.key.serde` and
    /// `default.value.serde` (for sources and sinks given none), and the
    /// serdes of the handles [`input`](TestTopology::input),
    /// [`output`](TestTopology::output) and the others return.
    ///
    /// Like every `with_` method, it configures the topology before it
    /// starts: records piped before are dropped with the driver.
    pub fn with_default_serdes<K2: 'static, V2: 'static>(
        self,
        key_serde: impl Serde<K2>,
        value_serde: impl Serde<V2>,
    ) -> TestTopology<K2, V2> {
        let key_serde: SerdeRef<K2> = Arc::new(key_serde);
        let value_serde: SerdeRef<V2> = Arc::new(value_serde);
        let mut harness = self.harness;
        harness.driver = OnceCell::new();
        harness.config = harness
            .config
            .with_default_key_serde(key_serde.clone())
            .with_default_value_serde(value_serde.clone());
        TestTopology {
            harness,
            key_serde,
            value_serde,
        }
    }

    /// Replaces the config (`application.id`, properties, default serdes
    /// of the topology). Call it before
    /// [`with_default_serdes`](TestTopology::with_default_serdes), which
    /// sets the config's defaults.
    #[must_use]
    pub fn with_config(self, config: StreamsConfig) -> Self {
        self.reconfigured(|h| h.config = config)
    }

    /// Sets one config property, by its Kafka name.
    #[must_use]
    pub fn with_property(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.reconfigured(|h| h.config = h.config.clone().with_property(key, value))
    }

    /// Sets the wall clock's start (epoch millis), also the timestamp of
    /// records added without one before the clock moves.
    #[must_use]
    pub fn with_initial_wall_clock_time(self, epoch_ms: i64) -> Self {
        self.reconfigured(|h| h.start_ms = epoch_ms)
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.harness.topology
    }

    /// The config the driver runs with.
    pub fn config(&self) -> &StreamsConfig {
        &self.harness.config
    }

    /// The driver, started at the first call: the plain API, for what the
    /// fluent one does not cover (the wall clock, metrics, ...).
    ///
    /// # Panics
    /// If the driver cannot start (a missing serde, a failing `init`).
    #[track_caller]
    pub fn driver(&self) -> &TopologyTestDriver {
        self.harness.driver()
    }

    /// The driver, started at the first call, or why it could not start.
    ///
    /// # Errors
    /// As [`DriverBuilder::build`](crate::DriverBuilder::build).
    pub fn try_driver(&self) -> Result<&TopologyTestDriver> {
        self.harness.try_driver()
    }

    /// The topics the topology reads by name, in the order its sources
    /// were added; internal (repartition) topics are left out.
    pub fn input_topics(&self) -> Vec<String> {
        self.harness.input_topics()
    }

    /// The topics the topology's sinks write by name, in the order they
    /// were added; internal (repartition) topics are left out.
    pub fn output_topics(&self) -> Vec<String> {
        self.harness.output_topics()
    }

    /// The internal topics: repartition topics and store changelogs, with
    /// the `application.id` prefix. Read them with
    /// [`output_named`](TestTopology::output_named).
    pub fn internal_topics(&self) -> Vec<String> {
        self.harness.internal_topics()
    }

    /// The topology's one input topic, with the default serdes.
    ///
    /// # Panics
    /// If the topology reads several topics or none by name (the message
    /// lists them): use [`input_named`](TestTopology::input_named).
    #[track_caller]
    pub fn input(&self) -> TestInput<'_, K, V> {
        let topic = self
            .harness
            .only(self.harness.input_topics(), "reads", "input_named");
        self.input_named(&topic)
    }

    /// The input topic `topic`, with the default serdes. A topic the
    /// topology does not read fails at the first record added, with the
    /// topics it does read.
    pub fn input_named(&self, topic: &str) -> TestInput<'_, K, V> {
        TestInput::new(
            &self.harness,
            topic,
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// The input topic `topic`, with these serdes.
    pub fn input_with<K2: 'static, V2: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K2>,
        value_serde: impl Serde<V2>,
    ) -> TestInput<'_, K2, V2> {
        TestInput::new(
            &self.harness,
            topic,
            Arc::new(key_serde),
            Arc::new(value_serde),
        )
    }

    /// The topology's one output topic, with the default serdes.
    ///
    /// # Panics
    /// If the topology writes several topics or none by name (the message
    /// lists them): use [`output_named`](TestTopology::output_named).
    #[track_caller]
    pub fn output(&self) -> TestOutput<'_, K, V> {
        let topic = self
            .harness
            .only(self.harness.output_topics(), "writes", "output_named");
        self.output_named(&topic)
    }

    /// The output topic `topic` (internal ones too, by their full name),
    /// with the default serdes. Asserting on a topic the topology never
    /// writes fails with the topics it does write.
    pub fn output_named(&self, topic: &str) -> TestOutput<'_, K, V> {
        TestOutput::new(
            &self.harness,
            topic,
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// The output topic `topic`, with these serdes.
    pub fn output_with<K2: 'static, V2: 'static>(
        &self,
        topic: &str,
        key_serde: impl Serde<K2>,
        value_serde: impl Serde<V2>,
    ) -> TestOutput<'_, K2, V2> {
        TestOutput::new(
            &self.harness,
            topic,
            Arc::new(key_serde),
            Arc::new(value_serde),
        )
    }

    /// The dead letter queue (`errors.dead.letter.queue.topic.name`,
    /// KIP-1034), read as bytes: each record is a bad record's raw key and
    /// value, with the `__streams.errors.*` headers that
    /// [`RecordAssert::has_error`](super::RecordAssert::has_error) and its
    /// siblings check.
    ///
    /// ```
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    /// use streams_test::TestTopology;
    ///
    /// let topology = TestTopology::new(|b: &StreamsBuilder| {
    ///     b.stream::<String, String>("in").try_map_values(|v| v.parse::<i64>().map(|n| n * 2)).to("out");
    /// })?
    /// .with_config(
    ///     StreamsConfig::new("app")
    ///         .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler)
    ///         .with_dead_letter_queue_topic("dlq"),
    /// );
    /// topology.input().add("a", "1").add("b", "x");
    /// topology
    ///     .dead_letter_queue()
    ///     .expect_next_record()
    ///     .has_key("b")
    ///     .has_value("x")
    ///     .has_error("java.lang.RuntimeException", "invalid digit found in string")
    ///     .has_error_source("in", 0, 1)
    ///     .and()
    ///     .expect_no_more_records();
    /// assert_eq!(topology.driver().metrics().dropped_records, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If the config sets no dead letter queue topic.
    #[track_caller]
    pub fn dead_letter_queue(&self) -> TestOutput<'_, Vec<u8>, Vec<u8>> {
        let Some(topic) = self.harness.config.dead_letter_queue_topic() else {
            fail(
                "the config sets no dead letter queue: set `errors.dead.letter.queue.topic.name` \
                 (StreamsConfig::with_dead_letter_queue_topic)"
                    .to_owned(),
            )
        };
        self.output_with(topic, BytesSerde, BytesSerde)
    }

    /// The one output topic read as a table: the latest value per key.
    /// See [`TestOutput::to_table`].
    ///
    /// # Panics
    /// As [`output`](TestTopology::output) and [`TestOutput::to_table`].
    #[track_caller]
    pub fn table_output(&self) -> TableAssert<K, V>
    where
        K: PartialEq,
    {
        self.output().to_table()
    }

    /// The output topic `topic` read as a table: the latest value per key.
    /// See [`TestOutput::to_table`].
    ///
    /// # Panics
    /// As [`TestOutput::to_table`].
    #[track_caller]
    pub fn table_output_named(&self, topic: &str) -> TableAssert<K, V>
    where
        K: PartialEq,
    {
        self.output_named(topic).to_table()
    }

    /// The key-value or timestamped key-value store `name`, read now.
    /// See [`StoreAssert`].
    ///
    /// # Panics
    /// No such store (the message lists those that exist), or a store of
    /// another kind or other types.
    #[track_caller]
    pub fn store<SK: Ord + Clone + 'static, SV: Clone + 'static>(
        &self,
        name: &str,
    ) -> StoreAssert<SK, SV> {
        StoreAssert::read(self.harness.driver(), name)
    }

    /// Closes the driver, if it started: every processor's `close` runs.
    ///
    /// # Errors
    /// The first error a processor's `close` returned.
    pub fn close(self) -> Result<()> {
        match self.harness.driver.into_inner() {
            Some(driver) => driver.close(),
            None => Ok(()),
        }
    }
}
