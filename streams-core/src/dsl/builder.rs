//! `StreamsBuilder`: the entry point of the DSL.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use crate::config::StreamsConfig;
use crate::dsl::global::global_table;
use crate::dsl::ktable::source_table;
use crate::dsl::optimize::{OptimizationMetadata, TableSourceDef, optimize};
use crate::dsl::{Consumed, GlobalKTable, KStream, KTable, Materialized};
use crate::error::{Result, StreamsError};
use crate::state::{StoreBuilder, TimestampedKeyValueStore};
use crate::topology::{Topics, Topology};

pub(crate) struct BuilderInner {
    pub(crate) topology: Topology,
    counter: u64,
    error: Option<StreamsError>,
    /// Stream node -> the source of the repartition topic its latest
    /// stream-table join went through (Kafka keeps it on the `KStream` as
    /// `repartitionNode`, so that joining a re-keyed stream twice reuses it).
    join_repartitions: HashMap<String, String>,
    /// What the topology optimizations need to know of the nodes (see
    /// `dsl/optimize`).
    optimization: OptimizationMetadata,
}

/// Builds a [`Topology`] with the DSL, Kafka's `StreamsBuilder`.
///
/// Operators add nodes as they are called, named `PREFIX-0000000007` from
/// one counter shared by all nodes (and, later, stores), exactly as Kafka
/// names them, unless given a name. The first error (a bad pattern, a name
/// used twice) is kept and returned by [`StreamsBuilder::build`], so that
/// operator chains stay free of `?`.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").filter(|_, v| !v.is_empty()).to("out");
/// let topology = builder.build()?;
/// assert_eq!(
///     topology.node_names(),
///     ["KSTREAM-SOURCE-0000000000", "KSTREAM-FILTER-0000000001", "KSTREAM-SINK-0000000002"]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct StreamsBuilder {
    inner: Rc<RefCell<BuilderInner>>,
}

impl Default for StreamsBuilder {
    fn default() -> Self {
        StreamsBuilder::new()
    }
}

impl fmt::Debug for StreamsBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.borrow();
        f.debug_struct("StreamsBuilder")
            .field("topology", &inner.topology)
            .field("error", &inner.error)
            .finish()
    }
}

impl StreamsBuilder {
    /// An empty builder.
    ///
    /// The example of [`StreamsBuilder`] shows it.
    pub fn new() -> Self {
        StreamsBuilder {
            inner: Rc::new(RefCell::new(BuilderInner {
                topology: Topology::new(),
                counter: 0,
                error: None,
                join_repartitions: HashMap::new(),
                optimization: OptimizationMetadata::default(),
            })),
        }
    }

    /// A new generated name: `prefix` and the next counter value, ten digits.
    pub(crate) fn new_name(&self, prefix: &str) -> String {
        let mut inner = self.inner.borrow_mut();
        let n = inner.counter;
        inner.counter += 1;
        numbered(prefix, n)
    }

    /// A new generated store name: `prefix`, `STATE-STORE-` and the next
    /// counter value, as Kafka's `newStoreName`.
    pub(crate) fn new_store_name(&self, prefix: &str) -> String {
        self.new_name(&format!("{prefix}STATE-STORE-"))
    }

    /// The repartition source the last join of stream `node` went through.
    pub(crate) fn join_repartition(&self, node: &str) -> Option<String> {
        self.inner.borrow().join_repartitions.get(node).cloned()
    }

    /// Remembers the repartition source a join of stream `node` went through.
    pub(crate) fn set_join_repartition(&self, node: &str, source: &str) {
        self.inner
            .borrow_mut()
            .join_repartitions
            .insert(node.to_owned(), source.to_owned());
    }

    /// Keeps `error` as the builder's error, unless it has one already.
    pub(crate) fn fail(&self, error: StreamsError) {
        self.with_topology(|_| Err(error));
    }

    /// Fails the builder when `materialized` asks for a versioned store
    /// for `what`, an operator whose result this library cannot keep in
    /// one (Kafka can: its aggregations and table-table joins take a
    /// versioned store too).
    pub(crate) fn refuse_versioned<K, V>(&self, materialized: &Materialized<K, V>, what: &str) {
        if materialized.versioned.is_some() {
            self.fail(StreamsError::VersionedNotSupported {
                what: what.to_owned(),
                reason: "a versioned store is not supported for this operator's result here \
                         (only for source tables, to_table, filter, map_values and foreign-key join results); \
                         materialize it in a key-value store",
            });
        }
    }

    /// Records, for the topology optimizations, what Kafka's graph would
    /// know of a node (see `dsl/optimize`).
    pub(crate) fn record<R>(&self, f: impl FnOnce(&mut OptimizationMetadata) -> R) -> R {
        f(&mut self.inner.borrow_mut().optimization)
    }

    /// Records that node `name` changes the key (Kafka's
    /// `setKeyChangingOperation`).
    pub(crate) fn mark_key_changing(&self, name: &str) {
        self.record(|m| m.key_changing.insert(name.to_owned()));
    }

    /// Records that node `name` changes the value (Kafka's
    /// `setValueChangingOperation`).
    pub(crate) fn mark_value_changing(&self, name: &str) {
        self.record(|m| m.value_changing.insert(name.to_owned()));
    }

    /// Records that node `name` merges streams (Kafka's `setMergeNode`).
    pub(crate) fn mark_merge(&self, name: &str) {
        self.record(|m| m.merges.insert(name.to_owned()));
    }

    /// Runs `f` on the topology under construction, keeping the first error.
    pub(crate) fn with_topology<E: Into<StreamsError>>(
        &self,
        f: impl FnOnce(&mut Topology) -> std::result::Result<(), E>,
    ) {
        let mut inner = self.inner.borrow_mut();
        if let Err(e) = f(&mut inner.topology)
            && inner.error.is_none()
        {
            inner.error = Some(e.into());
        }
    }

    /// A stream of the records of `topics` (one name, several, or
    /// [`Topics::pattern`]) with the default serdes for `K` and `V`.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::Consumed;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>(["en", "nl"]).to("greetings");
    ///     builder
    ///         .stream_with("prices", Consumed::with(StringSerde, I64Serde))
    ///         .filter(|_, price| *price > 10)
    ///         .to("high-prices");
    /// });
    /// let en = driver.input::<String, String>("en");
    /// let nl = driver.input::<String, String>("nl");
    /// let prices = driver.input::<String, i64>("prices");
    /// let greetings = driver.output::<String, String>("greetings");
    /// let high = driver.output::<String, i64>("high-prices");
    /// en.pipe_key_value("1", "hello");
    /// nl.pipe_key_value("2", "hallo");
    /// prices.pipe_key_value("pen", 5);
    /// prices.pipe_key_value("ink", 12);
    /// assert_eq!(
    ///     greetings.read_key_values_to_list(),
    ///     [KeyValue::pair("1", "hello"), KeyValue::pair("2", "hallo")]
    /// );
    /// assert_eq!(high.read_key_values_to_list(), [KeyValue::pair("ink", 12)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream<K: Clone + 'static, V: Clone + 'static>(
        &self,
        topics: impl Into<Topics>,
    ) -> KStream<K, V> {
        self.stream_with(topics, Consumed::default())
    }

    /// A stream of the records of `topics`, read as `consumed` says: its
    /// serdes, and the source node's name (Kafka's `stream(topics,
    /// Consumed)`).
    ///
    /// The example of [`StreamsBuilder::stream`] shows `stream_with` too,
    /// and the one of [`Consumed`] a named source.
    pub fn stream_with<K: Clone + 'static, V: Clone + 'static>(
        &self,
        topics: impl Into<Topics>,
        consumed: Consumed<K, V>,
    ) -> KStream<K, V> {
        // A given name still takes a number, as in Kafka.
        let generated = self.new_name("KSTREAM-SOURCE-");
        let name = consumed.name.clone().unwrap_or(generated);
        let topics = topics.into();
        let (ks, vs) = (consumed.key_serde.clone(), consumed.value_serde.clone());
        self.with_topology(|t| {
            let kind = Topology::source_kind(&name, topics)?;
            t.add_typed_source::<K, V>(&name, kind, ks, vs)
        });
        KStream::new(self.clone(), name, consumed.key_serde, consumed.value_serde)
    }

    /// A table of the records of `topic`: the latest value per key, where
    /// a tombstone deletes, Kafka's `table`. It gets a store only when an
    /// operator needs one; name one with [`StreamsBuilder::table_with`].
    ///
    /// ```
    /// use streams_core::serde::StringSerde;
    /// use streams_core::{Consumed, Materialized};
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.table::<String, String>("users").to_stream().to("user-updates");
    ///     builder.table_with::<String, String>("emails", Materialized::as_("emails"));
    ///     builder.table_consumed("phones", Consumed::with(StringSerde, StringSerde), Materialized::as_("phones"));
    /// });
    /// let users = driver.input::<String, String>("users");
    /// let emails = driver.input::<String, String>("emails");
    /// let phones = driver.input::<String, String>("phones");
    /// let updates = driver.output::<String, String>("user-updates");
    /// users.pipe_key_value("1", "Ann");
    /// users.pipe_key_value("1", "Anna");
    /// users.pipe_tombstone("1");
    /// assert_eq!(
    ///     updates.read_key_values_to_list(),
    ///     [KeyValue::pair("1", "Ann"), KeyValue::pair("1", "Anna"), KeyValue::tombstone("1")]
    /// );
    /// emails.pipe_key_value("1", "ann@example.com");
    /// emails.pipe_key_value("2", "bob@example.com");
    /// emails.pipe_tombstone("2"); // deletes the row
    /// phones.pipe_key_value("1", "555-0100");
    /// let emails = driver.timestamped_key_value_store::<String, String>("emails")?;
    /// assert_eq!(emails.to_map(), [("1".to_string(), "ann@example.com".to_string())].into());
    /// let phones = driver.timestamped_key_value_store::<String, String>("phones")?;
    /// assert_eq!(phones.get(&"1".to_string()).map(|v| v.value), Some("555-0100".to_string()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn table<K: Ord + Clone + 'static, V: Clone + 'static>(&self, topic: &str) -> KTable<K, V> {
        self.table_consumed(topic, Consumed::default(), Materialized::default())
    }

    /// A table of `topic` kept in the store `materialized` describes
    /// (queryable through the driver by its name).
    ///
    /// The example of [`StreamsBuilder::table`] shows `table_with` too.
    pub fn table_with<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        topic: &str,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        self.table_consumed(topic, Consumed::default(), materialized)
    }

    /// A table of `topic`, read as `consumed` says and kept as
    /// `materialized` says. A name in `consumed` names the source, and
    /// the table's node `<name>-table-source`.
    ///
    /// The example of [`StreamsBuilder::table`] shows `table_consumed` too.
    pub fn table_consumed<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        topic: &str,
        consumed: Consumed<K, V>,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        let queryable = materialized.name.is_some();
        let store = match &materialized.name {
            Some(n) => n.clone(),
            None => self.new_store_name(&format!("{topic}-")),
        };
        let source_generated = self.new_name("KSTREAM-SOURCE-");
        let table_generated = self.new_name("KTABLE-SOURCE-");
        let (source, processor) = match &consumed.name {
            Some(n) => (n.clone(), format!("{n}-table-source")),
            None => (source_generated, table_generated),
        };
        let (ks, vs) = (consumed.key_serde.clone(), consumed.value_serde.clone());
        let topics = Topics::from(topic);
        self.with_topology(|t| {
            let kind = Topology::source_kind(&source, topics)?;
            t.add_typed_source::<K, V>(&source, kind, ks, vs)
        });
        let materialized = Materialized {
            key_serde: materialized.key_serde.or(consumed.key_serde),
            value_serde: materialized.value_serde.or(consumed.value_serde),
            ..materialized
        };
        // Kafka's TableSourceNode: with `reuse.ktable.source.topics`, its
        // store (if it has one) logs nothing and restores from `topic`.
        let (m, st) = (materialized.clone(), store.clone());
        self.record(|meta| {
            meta.table_sources.push(TableSourceDef {
                store: store.clone(),
                topic: topic.to_owned(),
                unlogged: Rc::new(move || {
                    Rc::new(
                        m.store_builder::<TimestampedKeyValueStore<K, V>>(&st, (), None)
                            .with_logging(false),
                    ) as Rc<dyn StoreBuilder>
                }),
            });
        });
        source_table(self, &source, processor, store, materialized, queryable)
    }

    /// A global table of `topic`, Kafka's `globalTable`: every record of
    /// the topic goes into a store that every processor can read, at
    /// once, whatever the stream time (see [`GlobalKTable`]). The store is
    /// named `<topic>-STATE-STORE-<n>`.
    ///
    /// ```
    /// use streams_core::serde::StringSerde;
    /// use streams_core::{Consumed, Materialized};
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let rates = builder.global_table::<String, String>("rates");
    ///     assert_eq!(rates.store_name(), "rates-STATE-STORE-0000000000");
    ///     builder.global_table_with::<String, String>("countries", Materialized::as_("countries"));
    ///     builder.global_table_consumed("cities", Consumed::with(StringSerde, StringSerde), Materialized::as_("cities"));
    /// });
    /// let countries = driver.input::<String, String>("countries");
    /// countries.pipe_key_value("NL", "Netherlands");
    /// countries.pipe_key_value("FR", "France");
    /// countries.pipe_tombstone("FR");
    /// driver.input::<String, String>("cities").pipe_key_value("AMS", "Amsterdam");
    /// let countries = driver.timestamped_key_value_store::<String, String>("countries")?;
    /// assert_eq!(countries.to_map(), [("NL".to_string(), "Netherlands".to_string())].into());
    /// let cities = driver.timestamped_key_value_store::<String, String>("cities")?;
    /// assert_eq!(cities.get(&"AMS".to_string()).map(|v| v.value), Some("Amsterdam".to_string()));
    /// // Their records do not move stream time (no stream record yet).
    /// assert_eq!(driver.stream_time(), -1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "globalTable")]
    pub fn global_table<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        topic: &str,
    ) -> GlobalKTable<K, V> {
        self.global_table_consumed(topic, Consumed::default(), Materialized::default())
    }

    /// A global table of `topic` kept in the store `materialized`
    /// describes (queryable through the driver by its name). Logging is
    /// always disabled: the topic is the store's changelog.
    ///
    /// The example of [`StreamsBuilder::global_table`] shows
    /// `global_table_with` too.
    pub fn global_table_with<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        topic: &str,
        materialized: Materialized<K, V>,
    ) -> GlobalKTable<K, V> {
        let consumed = Consumed {
            key_serde: materialized.key_serde.clone(),
            value_serde: materialized.value_serde.clone(),
            name: None,
        };
        self.global_table_consumed(topic, consumed, materialized)
    }

    /// A global table of `topic`, read as `consumed` says (whose serdes
    /// the store uses too) and kept as `materialized` says. A name in
    /// `consumed` names the processor, and the source `<name>-table-source`.
    ///
    /// The example of [`StreamsBuilder::global_table`] shows
    /// `global_table_consumed` too.
    pub fn global_table_consumed<K: Ord + Clone + 'static, V: Clone + 'static>(
        &self,
        topic: &str,
        consumed: Consumed<K, V>,
        materialized: Materialized<K, V>,
    ) -> GlobalKTable<K, V> {
        global_table(self, topic, consumed, materialized)
    }

    /// The topology built so far.
    ///
    /// # Errors
    /// The first error any operator met; co-partitioned repartition topics
    /// given different partition counts. A builder without sources builds
    /// an empty topology, as Kafka's does (a `TopologyTestDriver` runs it
    /// and refuses every pipe as to an unknown topic; `KafkaStreams`
    /// refuses it with [`TopologyError::NoSource`](crate::TopologyError::NoSource)).
    ///
    /// Operators never fail on the spot, as Kafka's throw: the builder
    /// keeps the first error and `build` returns it (and then
    /// [`StreamsError::BuilderFailedEarlier`] on every later call).
    ///
    /// ```
    /// use streams_core::{StreamsBuilder, StreamsError, TopologyError};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("orders").to("audit");
    /// // A second source of a topic: refused (Kafka merges two streams of a topic).
    /// builder.stream::<String, String>("orders").filter(|_, v| !v.is_empty()).to("valid");
    /// let err = builder.build().unwrap_err();
    /// assert!(matches!(&err, StreamsError::Topology(TopologyError::TopicAlreadyRead { topic, .. }) if topic == "orders"));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid topology: topic `orders` is already read by source `KSTREAM-SOURCE-0000000000`; \
    ///      a topic can be read by one source only"
    /// );
    /// assert!(matches!(builder.build(), Err(StreamsError::BuilderFailedEarlier { .. })));
    ///
    /// // A builder without sources builds an empty topology.
    /// assert!(StreamsBuilder::new().build()?.node_names().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(&self) -> Result<Topology> {
        let mut inner = self.inner.borrow_mut();
        if let Some(e) = inner.error.take() {
            // Keep failing on later calls, with the same text.
            inner.error = Some(StreamsError::BuilderFailedEarlier {
                first: e.to_string(),
            });
            return Err(e);
        }
        inner.topology.validate_copartition()?;
        let mut topology = inner.topology.clone();
        topology.decide_null_key_filters();
        Ok(topology)
    }

    /// The topology built so far, with the optimizations `config`'s
    /// `topology.optimization` chooses: Kafka's `build(Properties)`. As in
    /// Kafka, a config given only to the driver or the application
    /// optimizes nothing: pass the same config here.
    ///
    /// | `topology.optimization` | what changes |
    /// | --- | --- |
    /// | `none` (default) | nothing: the topology of [`StreamsBuilder::build`] |
    /// | `reuse.ktable.source.topics` | the store of a table read from a topic writes no `<app>-<store>-changelog`; the topic is its changelog, restored up to the committed offset |
    /// | `merge.repartition.topics` | the repartition topics after one key change become one, right after the key change |
    /// | `single.store.self.join` | a stream joined with itself keeps one window store |
    /// | `all` | all three |
    ///
    /// `describe()` shows Kafka's text for each: the merged repartition
    /// topic is named after the first one (`<topic>-filter`, `-sink`,
    /// `-source`, whatever the old names), and a self-join is one
    /// processor named as the join's merge node. See
    /// [`TopologyOptimizations`](crate::config::TopologyOptimizations) for
    /// the value's syntax.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// let words = builder.stream::<String, String>("words").select_key(|_, w| w.clone());
    /// words.clone().group_by_key().count().to_stream().to("counts");
    /// words.group_by_key().reduce(|a, b| format!("{a}+{b}")).to_stream().to("concatenated");
    /// let config = StreamsConfig::new("app").with_property("topology.optimization", "all");
    ///
    /// // Without optimization, each aggregation has its repartition topic.
    /// let plain = builder.build()?.describe().to_string();
    /// assert_eq!(plain.matches("-repartition)").count(), 2);
    /// // With it, one repartition topic, named after the first.
    /// let topology = builder.build_with(&config)?;
    /// let described = topology.describe().to_string();
    /// assert_eq!(described.matches("-repartition)").count(), 1);
    /// assert!(described.contains(
    ///     "Sink: KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition-sink \
    ///      (topic: KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition)"
    /// ));
    ///
    /// let driver = TopologyTestDriver::with_config(topology, config)?;
    /// let words = driver.create_input_topic("words", StringSerde, StringSerde);
    /// words.pipe_values(["a", "b", "a"]);
    /// let counts = driver.create_output_topic("counts", StringSerde, I64Serde);
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [KeyValue::pair("a", 1), KeyValue::pair("b", 1), KeyValue::pair("a", 2)]
    /// );
    /// let concatenated = driver.create_output_topic("concatenated", StringSerde, StringSerde);
    /// assert_eq!(
    ///     concatenated.read_values_to_list(),
    ///     [Some("a".to_owned()), Some("b".to_owned()), Some("a+a".to_owned())]
    /// );
    /// let repartition_topics: Vec<String> =
    ///     driver.produced_topic_names().into_iter().filter(|t| t.ends_with("-repartition")).collect();
    /// assert_eq!(repartition_topics, ["app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-repartition"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`StreamsBuilder::build`];
    /// [`StreamsError::InvalidTopologyOptimization`] with Kafka's message
    /// for a value that is not `none`, `all` or a list of optimizations;
    /// [`TopologyError::CannotOptimize`](crate::TopologyError::CannotOptimize)
    /// where repartition topics to merge carry other types than the key
    /// change before them forwards.
    #[doc(alias = "build")]
    pub fn build_with(&self, config: &StreamsConfig) -> Result<Topology> {
        let topology = self.build()?;
        let optimizations = config.topology_optimizations()?;
        let mut inner = self.inner.borrow_mut();
        let inner = &mut *inner;
        let counter = &mut inner.counter;
        let mut optimized = optimize(
            &topology,
            &mut inner.optimization,
            optimizations,
            |prefix: &str| {
                let n = *counter;
                *counter += 1;
                numbered(prefix, n)
            },
        )?;
        // A merged repartition topic has the downstream of all it merged.
        optimized.decide_null_key_filters();
        Ok(optimized)
    }
}

/// `prefix` and `n` with at least ten digits (zero-padded), as
/// `format!("{prefix}{n:010}")` writes it, without the formatting
/// machinery: every node of every topology gets such a name.
fn numbered(prefix: &str, mut n: u64) -> String {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let start = at.min(digits.len() - 10);
    let mut name = String::with_capacity(prefix.len() + digits.len() - start);
    name.push_str(prefix);
    name.extend(digits[start..].iter().map(|&d| char::from(d)));
    name
}

#[cfg(test)]
mod numbered_tests {
    #[test]
    fn numbered_names_as_format_writes_them() {
        for n in [0_u64, 7, 10, 999, 1_234_567_890, 12_345_678_901, u64::MAX] {
            assert_eq!(
                super::numbered("KSTREAM-SOURCE-", n),
                format!("KSTREAM-SOURCE-{n:010}")
            );
        }
    }
}
