//! Options of DSL operators, mirroring Kafka's `Consumed`, `Produced`,
//! `Repartitioned` and `Branched`.
//!
//! ```
//! use streams_core::dsl::{Consumed, Produced};
//! use streams_core::serde::{I64Serde, StringSerde};
//!
//! let consumed = Consumed::with(StringSerde, I64Serde).with_name("orders-source");
//! assert_eq!(consumed.name(), Some("orders-source"));
//! let produced = Produced::<String, i64>::as_("orders-sink");
//! assert_eq!(produced.name(), Some("orders-sink"));
//! ```

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::dsl::KStream;
use crate::processor::StreamPartitioner;
use crate::processor::partitioner::PartitionerRef;
use crate::serde::{Serde, SerdeRef};
use crate::state::{
    BuiltInStore, BuiltInStoreBuilder, VersionedBytesStoreSupplier, VersionedParams,
};

macro_rules! serde_options {
    ($(#[$doc:meta])* $name:ident $(, $extra:ident: $extra_ty:ty)*) => {
        $(#[$doc])*
        pub struct $name<K, V> {
            pub(crate) key_serde: Option<SerdeRef<K>>,
            pub(crate) value_serde: Option<SerdeRef<V>>,
            pub(crate) name: Option<String>,
            $(pub(crate) $extra: Option<$extra_ty>,)*
        }

        impl<K, V> Default for $name<K, V> {
            fn default() -> Self {
                $name { key_serde: None, value_serde: None, name: None, $($extra: None,)* }
            }
        }

        impl<K, V> Clone for $name<K, V> {
            fn clone(&self) -> Self {
                $name {
                    key_serde: self.key_serde.clone(),
                    value_serde: self.value_serde.clone(),
                    name: self.name.clone(),
                    $($extra: self.$extra.clone(),)*
                }
            }
        }

        impl<K, V> fmt::Debug for $name<K, V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("key_serde", &self.key_serde.is_some())
                    .field("value_serde", &self.value_serde.is_some())
                    .field("name", &self.name)
                    $(.field(stringify!($extra), &self.$extra.is_some()))*
                    .finish()
            }
        }

        impl<K: 'static, V: 'static> $name<K, V> {
            /// With these key and value serdes.
            pub fn with(key_serde: impl Serde<K>, value_serde: impl Serde<V>) -> Self {
                $name {
                    key_serde: Some(Arc::new(key_serde)),
                    value_serde: Some(Arc::new(value_serde)),
                    name: None,
                    $($extra: None,)*
                }
            }

            /// With this name and the default serdes.
            pub fn as_(name: impl Into<String>) -> Self {
                $name { key_serde: None, value_serde: None, name: Some(name.into()), $($extra: None,)* }
            }

            /// Sets the key serde.
            #[must_use]
            pub fn with_key_serde(mut self, serde: impl Serde<K>) -> Self {
                self.key_serde = Some(Arc::new(serde));
                self
            }

            /// Sets the value serde.
            #[must_use]
            pub fn with_value_serde(mut self, serde: impl Serde<V>) -> Self {
                self.value_serde = Some(Arc::new(serde));
                self
            }

            /// Sets the name.
            #[must_use]
            pub fn with_name(mut self, name: impl Into<String>) -> Self {
                self.name = Some(name.into());
                self
            }

            /// The name, if one was given.
            pub fn name(&self) -> Option<&str> {
                self.name.as_deref()
            }
        }
    };
}

serde_options!(
    /// How a source reads a topic: serdes and the source node's name, as
    /// Kafka's `Consumed`. Without serdes a source reads with the config's
    /// default serdes when they are of its types, else with the built-in
    /// serdes of its types ([`builtin_serde`](crate::serde::builtin_serde)).
    /// Kafka's `Consumed` also takes a timestamp extractor and an offset
    /// reset policy, which this one does not have yet: a record keeps the
    /// timestamp it was written with, and the runtime reads a topic without
    /// a committed offset from its earliest one.
    ///
    /// ```
    /// use streams_core::serde::{JsonSerde, StringSerde};
    /// use streams_core::{Consumed, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// // Amounts written as JSON numbers, read by a source with a name:
    /// let amounts = Consumed::with(StringSerde, JsonSerde::<i64>::new()).with_name("amounts-source");
    /// assert_eq!(amounts.name(), Some("amounts-source"));
    /// // `as_` gives the name first; the serdes may follow one by one.
    /// let ids = Consumed::<i64, String>::as_("ids-source")
    ///     .with_key_serde(JsonSerde::new())
    ///     .with_value_serde(StringSerde);
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream_with("amounts", amounts).filter(|_, n| *n > 10).to("large");
    /// builder.stream_with("ids", ids).to("ids-copy");
    /// let topology = builder.build()?;
    /// assert_eq!(
    ///     topology.node_names(),
    ///     ["amounts-source", "KSTREAM-FILTER-0000000001", "KSTREAM-SINK-0000000002", "ids-source", "KSTREAM-SINK-0000000004"]
    /// );
    /// let driver = TopologyTestDriver::new(topology)?;
    /// let input = driver.create_input_topic("amounts", StringSerde, StringSerde); // JSON is text
    /// input.pipe_key_values([("a", "5"), ("b", "12")]);
    /// let large = driver.create_output_topic("large", StringSerde, StringSerde);
    /// assert_eq!(large.read_key_values_to_list(), [KeyValue::pair("b", "12")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Consumed
);
serde_options!(
    /// How a sink writes a topic: serdes, the sink node's name and a
    /// stream partitioner, as Kafka's `Produced`. Serdes not given are the
    /// stream's, else the config's defaults or the built-in ones.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, JsonSerde, StringSerde};
    /// use streams_core::{Produced, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let as_json = Produced::with(StringSerde, JsonSerde::<Vec<i64>>::new()).with_name("json-sink");
    /// assert_eq!(as_json.name(), Some("json-sink"));
    /// let as_long = Produced::<String, i64>::as_("long-sink").with_key_serde(StringSerde).with_value_serde(I64Serde);
    ///
    /// let builder = StreamsBuilder::new();
    /// let words = builder.stream::<String, String>("words");
    /// words.clone().map_values(|w| vec![w.len() as i64]).to_with("lengths-json", as_json);
    /// words.map_values(|w| w.len() as i64).to_with("lengths", as_long);
    /// let topology = builder.build()?;
    /// assert_eq!(topology.node_names()[2], "json-sink");
    /// assert_eq!(topology.node_names()[4], "long-sink");
    ///
    /// let driver = TopologyTestDriver::new(topology)?;
    /// driver.create_input_topic("words", StringSerde, StringSerde).pipe_key_value("k", "kafka");
    /// let json = driver.create_output_topic("lengths-json", StringSerde, StringSerde);
    /// assert_eq!(json.read_key_values_to_list(), [KeyValue::pair("k", "[5]")]);
    /// let long = driver.create_output_topic("lengths", StringSerde, I64Serde);
    /// assert_eq!(long.read_key_values_to_list(), [KeyValue::pair("k", 5)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    Produced,
    partitioner: PartitionerRef<K, V>
);
serde_options!(
    /// How a stream is grouped: serdes for the repartition topic and its
    /// name (`<application.id>-<name>-repartition`), as Kafka's `Grouped`.
    /// The name names the key-selecting node of
    /// [`group_by_with`](KStream::group_by_with) too.
    ///
    /// ```
    /// use streams_core::Grouped;
    /// use streams_core::serde::StringSerde;
    /// use streams_test::{KeyValue, example};
    ///
    /// let by_word = Grouped::<String, String>::as_("by-word").with_key_serde(StringSerde).with_value_serde(StringSerde);
    /// assert_eq!(by_word.name(), Some("by-word"));
    /// let driver = example(|builder| {
    ///     let words = builder.stream::<String, String>("words");
    ///     words.clone().group_by_with(|_, w| w.clone(), by_word).count().to_stream().to("word-counts");
    ///     words
    ///         .select_key(|_, w| w.len().to_string())
    ///         .group_by_key_with(Grouped::with(StringSerde, StringSerde).with_name("by-length"))
    ///         .count()
    ///         .to_stream()
    ///         .to("length-counts");
    /// });
    /// driver.input::<String, String>("words").pipe_values(["a", "bb", "a"]);
    /// assert_eq!(
    ///     driver.output::<String, i64>("word-counts").read_key_values_to_list(),
    ///     [KeyValue::pair("a", 1), KeyValue::pair("bb", 1), KeyValue::pair("a", 2)]
    /// );
    /// assert_eq!(
    ///     driver.output::<String, i64>("length-counts").read_key_values_to_list(),
    ///     [KeyValue::pair("1", 1), KeyValue::pair("2", 1), KeyValue::pair("1", 2)]
    /// );
    /// let repartition_topics: Vec<String> =
    ///     driver.produced_topic_names().into_iter().filter(|t| t.ends_with("-repartition")).collect();
    /// assert_eq!(repartition_topics, ["test-app-by-length-repartition", "test-app-by-word-repartition"]);
    /// ```
    Grouped
);
serde_options!(
    /// How a stream is repartitioned: serdes, the name of the internal
    /// topic (`<application.id>-<name>-repartition`), its partition count
    /// and a stream partitioner, as Kafka's `Repartitioned`.
    ///
    /// ```
    /// use streams_core::dsl::Repartitioned;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_test::{KeyValue, example};
    ///
    /// let by_user = Repartitioned::<String, i64>::as_("by-user").with_key_serde(StringSerde).with_value_serde(I64Serde);
    /// assert_eq!(by_user.name(), Some("by-user"));
    /// let driver = example(|builder| {
    ///     let amounts = builder.stream::<String, i64>("amounts");
    ///     amounts.clone().repartition_with(by_user).to("amounts-by-user");
    ///     amounts
    ///         .repartition_with(Repartitioned::with(StringSerde, I64Serde).with_name("copy"))
    ///         .to("amounts-copy");
    /// });
    /// driver.input::<String, i64>("amounts").pipe_key_value("ann", 5);
    /// assert_eq!(driver.output::<String, i64>("amounts-by-user").read_key_values_to_list(), [KeyValue::pair("ann", 5)]);
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     ["amounts-by-user", "amounts-copy", "test-app-by-user-repartition", "test-app-copy-repartition"]
    /// );
    /// ```
    Repartitioned,
    partitioner: PartitionerRef<K, V>,
    partitions: i32
);

impl<K: 'static, V: 'static> Repartitioned<K, V> {
    /// Gives the repartition topic `partitions` partitions, Kafka's
    /// `Repartitioned.withNumberOfPartitions`: the runtime creates it with
    /// that count instead of the count of its writers' source topics, and
    /// topics co-partitioned with it must agree. The
    /// `TopologyTestDriver` runs one partition whatever the count.
    ///
    /// ```
    /// use streams_core::dsl::Repartitioned;
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .repartition_with(Repartitioned::as_("wide").with_number_of_partitions(12))
    ///     .to("out");
    /// let info = builder.build()?.topics_info("app");
    /// assert_eq!(info[1].enforced_partitions["app-wide-repartition"], 12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_number_of_partitions(mut self, partitions: i32) -> Self {
        self.partitions = Some(partitions);
        self
    }
}

macro_rules! with_stream_partitioner {
    ($name:ident, $(#[$doc:meta])*) => {
        impl<K: 'static, V: 'static> $name<K, V> {
            $(#[$doc])*
            #[must_use]
            pub fn with_stream_partitioner(
                mut self,
                partitioner: impl StreamPartitioner<K, V>,
            ) -> Self {
                self.partitioner = Some(Rc::new(partitioner));
                self
            }
        }
    };
}

with_stream_partitioner!(
    Produced,
    /// Sends each record to the partitions `partitioner` chooses, as Kafka's
    /// `Produced.withStreamPartitioner` (without one, a windowed key goes by its
    /// inner key and any other by the producer's default partitioner). The
    /// `TopologyTestDriver` has one partition; the runtime tells the
    /// partitioner the topic's partition count.
    ///
    /// ```
    /// use streams_core::dsl::Produced;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    /// use streams_test::app::{IsolationLevel, StreamsCluster};
    ///
    /// // Short keys to partition 0, long ones to the last partition.
    /// let by_length = |_: &str, key: Option<&String>, _: Option<&i64>, n: i32| {
    ///     key.map(|k| if k.len() < 4 { 0 } else { n - 1 })
    /// };
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, i64>("in")
    ///     .to_with("out", Produced::with(StringSerde, I64Serde).with_stream_partitioner(by_length));
    /// let mut app = StreamsCluster::new();
    /// app.create_topic("in", 1)?;
    /// app.create_topic("out", 3)?;
    /// app.start("a", &builder.build()?, StreamsConfig::new("app"))?;
    /// let input = app.producer("in", StringSerde, I64Serde);
    /// for key in ["ann", "bob", "carol"] {
    ///     input.send(&key.to_owned(), Some(&1), 0)?;
    /// }
    /// app.run_until_idle()?;
    /// let keys_of = |p| -> Result<Vec<String>, Box<dyn std::error::Error>> {
    ///     let records = app.read_partition("out", p, IsolationLevel::ReadUncommitted, StringSerde, I64Serde)?;
    ///     Ok(records.into_iter().filter_map(|r| r.key).collect())
    /// };
    /// assert_eq!(keys_of(0)?, ["ann", "bob"]);
    /// assert!(keys_of(1)?.is_empty());
    /// assert_eq!(keys_of(2)?, ["carol"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
);
with_stream_partitioner!(
    Repartitioned,
    /// Writes the repartition topic's records to the partitions `partitioner`
    /// chooses, as Kafka's `Repartitioned.withStreamPartitioner`. The
    /// `TopologyTestDriver` has one partition; the runtime tells the
    /// partitioner the topic's partition count.
    ///
    /// ```
    /// use streams_core::dsl::Repartitioned;
    /// use streams_core::runtime::TaskId;
    /// use streams_core::serde::StringSerde;
    /// use streams_core::{StreamsBuilder, StreamsConfig};
    /// use streams_test::app::StreamsCluster;
    ///
    /// // By the first letter of the key: 'a' (97) to 97 % 3 = 1, 'b' to 2, 'c' to 0.
    /// let by_first_letter = |_: &str, key: Option<&String>, _: Option<&String>, n: i32| {
    ///     key.and_then(|k| k.bytes().next()).map(|b| i32::from(b) % n)
    /// };
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .repartition_with(
    ///         Repartitioned::as_("spread").with_number_of_partitions(3).with_stream_partitioner(by_first_letter),
    ///     )
    ///     .to("out");
    /// let mut app = StreamsCluster::new();
    /// app.create_topic("in", 1)?;
    /// app.create_topic("out", 1)?;
    /// app.start("a", &builder.build()?, StreamsConfig::new("app"))?;
    /// let input = app.producer("in", StringSerde, StringSerde);
    /// for key in ["ann", "bob", "cy", "al"] {
    ///     input.send(&key.to_owned(), Some(&"v".to_owned()), 0)?;
    /// }
    /// app.run_until_idle()?;
    /// // Task 1_p reads partition p of `app-spread-repartition` (which is
    /// // purged once committed, as Kafka purges repartition topics).
    /// let a = app.instance("a").unwrap();
    /// let read_by = |p| a.task_metrics(TaskId::new(1, p)).map(|m| m.processed_records);
    /// assert_eq!([read_by(0), read_by(1), read_by(2)], [Some(1), Some(2), Some(1)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
);

/// What `Branched::with_function` applies to a branch.
pub(crate) type ChainFn<K, V> = Rc<dyn Fn(KStream<K, V>) -> Option<KStream<K, V>>>;

/// A branch of [`KStream::split`]: its name and, optionally, a function
/// applied to the branch stream, as Kafka's `Branched`.
///
/// ```
/// use streams_core::dsl::Branched;
/// use streams_test::{KeyValue, example};
///
/// let driver = example(|builder| {
///     let branches = builder
///         .stream::<String, i64>("amounts")
///         .named("amounts-")
///         .split()
///         .branch(|_, v| *v < 0, Branched::as_("refunds"))
///         // A function may take a branch over: it returns nothing to the map.
///         .branch(|_, v| *v == 0, Branched::with_function(|zeros| {
///             zeros.to("zeros");
///             None
///         }))
///         // Or return the stream it made, under the branch's name.
///         .branch(
///             |_, v| *v >= 1000,
///             Branched::with_function(|large| Some(large.map_values(|v| v / 1000))).with_name("thousands"),
///         )
///         .default_branch(Branched::new()); // unnamed: by position, the default is 0
///     assert_eq!(
///         branches.keys().collect::<Vec<_>>(),
///         ["amounts-0", "amounts-refunds", "amounts-thousands"]
///     );
///     branches["amounts-thousands"].clone().to("thousands");
///     branches["amounts-0"].clone().to("other");
/// });
/// driver.input::<String, i64>("amounts").pipe_key_values([("a", -5), ("b", 0), ("c", 3000), ("d", 7)]);
/// assert_eq!(driver.output::<String, i64>("zeros").read_key_values_to_list(), [KeyValue::pair("b", 0)]);
/// assert_eq!(driver.output::<String, i64>("thousands").read_key_values_to_list(), [KeyValue::pair("c", 3)]);
/// assert_eq!(driver.output::<String, i64>("other").read_key_values_to_list(), [KeyValue::pair("d", 7)]);
/// ```
pub struct Branched<K, V> {
    pub(crate) name: Option<String>,
    pub(crate) chain: Option<ChainFn<K, V>>,
}

impl<K, V> fmt::Debug for Branched<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Branched")
            .field("name", &self.name)
            .field("chain", &self.chain.is_some())
            .finish()
    }
}

impl<K, V> Default for Branched<K, V> {
    fn default() -> Self {
        Branched {
            name: None,
            chain: None,
        }
    }
}

impl<K: 'static, V: 'static> Branched<K, V> {
    /// An unnamed branch: it is named after its position (1, 2, ...; the
    /// default branch is 0), appended to the split's name.
    pub fn new() -> Self {
        Branched::default()
    }

    /// A branch with this name, appended to the split's name.
    pub fn as_(name: impl Into<String>) -> Self {
        Branched {
            name: Some(name.into()),
            chain: None,
        }
    }

    /// A branch whose stream goes through `chain`; the branch map holds
    /// what `chain` returns (nothing when it returns `None`), as Kafka's
    /// `Branched.withFunction`.
    pub fn with_function(chain: impl Fn(KStream<K, V>) -> Option<KStream<K, V>> + 'static) -> Self {
        Branched {
            name: None,
            chain: Some(Rc::new(chain)),
        }
    }

    /// Sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

impl<K: 'static, V: 'static> From<&str> for Branched<K, V> {
    fn from(name: &str) -> Self {
        Branched::as_(name)
    }
}

/// How an operator's state store is made: its name (queryable through
/// the driver), serdes and whether it writes a changelog, as Kafka's
/// `Materialized`, and whether Kafka's record cache sits in front of it:
/// on unless [`with_caching_disabled`](Materialized::with_caching_disabled)
/// says otherwise (see [the DSL docs](crate::dsl#the-record-cache) for
/// what the cache does).
///
/// ```
/// use streams_core::Materialized;
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_test::{KeyValue, example};
///
/// // A named store with its serdes, and no changelog:
/// let counts = Materialized::as_("counts").with_key_serde(StringSerde).with_value_serde(I64Serde).with_logging_disabled();
/// assert_eq!(counts.name(), Some("counts"));
/// assert!(!counts.is_versioned());
/// // A generated name with these serdes, the cache turned off and on again:
/// let lengths = Materialized::with(StringSerde, I64Serde).with_caching_disabled().with_caching_enabled();
/// assert_eq!(lengths.name(), None);
/// let driver = example(|builder| {
///     let words = builder.stream::<String, String>("words").group_by_key();
///     words.clone().count_with(counts);
///     words.aggregate_with(|| 0_i64, |_, w: &String, n| n + w.len() as i64, lengths).to_stream().to("lengths");
/// });
/// driver.input::<String, String>("words").pipe_key_values([("k", "ab"), ("k", "c")]);
/// assert_eq!(
///     driver.output::<String, i64>("lengths").read_key_values_to_list(),
///     [KeyValue::pair("k", 2), KeyValue::pair("k", 3)]
/// );
/// let store = driver.timestamped_key_value_store::<String, i64>("counts")?;
/// assert_eq!(store.to_map(), [("k".to_owned(), 2)].into());
/// // Only the store with logging on writes a changelog.
/// assert_eq!(
///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
///     ["lengths", "test-app-KSTREAM-AGGREGATE-STATE-STORE-0000000002-changelog"]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Materialized<K, V> {
    pub(crate) key_serde: Option<SerdeRef<K>>,
    pub(crate) value_serde: Option<SerdeRef<V>>,
    pub(crate) name: Option<String>,
    pub(crate) logging: bool,
    /// Topic configs of the changelog (Kafka's `withLoggingEnabled(Map)`).
    pub(crate) logging_config: std::collections::BTreeMap<String, String>,
    pub(crate) retention: Option<Duration>,
    pub(crate) caching: bool,
    /// A versioned store's settings, when it was made from a
    /// [`VersionedBytesStoreSupplier`].
    pub(crate) versioned: Option<VersionedParams>,
}

impl<K, V> Default for Materialized<K, V> {
    fn default() -> Self {
        Materialized {
            key_serde: None,
            value_serde: None,
            name: None,
            logging: true,
            logging_config: std::collections::BTreeMap::new(),
            retention: None,
            caching: true,
            versioned: None,
        }
    }
}

/// What [`Materialized::as_`] takes: a store name (`&str`, `String`), or
/// a store supplier, whose name the store takes and whose kind it is, as
/// Kafka's `Materialized.as(String)` and
/// `Materialized.as(VersionedBytesStoreSupplier)`.
#[derive(Debug, Clone)]
pub struct MaterializedAs {
    name: String,
    versioned: Option<VersionedParams>,
}

impl From<&str> for MaterializedAs {
    fn from(name: &str) -> Self {
        MaterializedAs {
            name: name.to_owned(),
            versioned: None,
        }
    }
}

impl From<String> for MaterializedAs {
    fn from(name: String) -> Self {
        MaterializedAs {
            name,
            versioned: None,
        }
    }
}

impl From<&String> for MaterializedAs {
    fn from(name: &String) -> Self {
        MaterializedAs::from(name.as_str())
    }
}

impl From<VersionedBytesStoreSupplier> for MaterializedAs {
    fn from(supplier: VersionedBytesStoreSupplier) -> Self {
        MaterializedAs::from(&supplier)
    }
}

impl From<&VersionedBytesStoreSupplier> for MaterializedAs {
    fn from(supplier: &VersionedBytesStoreSupplier) -> Self {
        MaterializedAs {
            name: supplier.name().to_owned(),
            versioned: Some(supplier.params()),
        }
    }
}

impl<K, V> Clone for Materialized<K, V> {
    fn clone(&self) -> Self {
        Materialized {
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            name: self.name.clone(),
            logging: self.logging,
            logging_config: self.logging_config.clone(),
            retention: self.retention,
            caching: self.caching,
            versioned: self.versioned,
        }
    }
}

impl<K, V> fmt::Debug for Materialized<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Materialized")
            .field("name", &self.name)
            .field("logging", &self.logging)
            .field("retention", &self.retention)
            .field("caching", &self.caching)
            .field("versioned", &self.versioned)
            .finish_non_exhaustive()
    }
}

impl<K: 'static, V: 'static> Materialized<K, V> {
    /// A store with this name, or the store a supplier describes (its
    /// name and kind), Kafka's `Materialized.as`. With a
    /// [`VersionedBytesStoreSupplier`] (from
    /// [`Stores::persistent_versioned_key_value_store`](crate::state::Stores::persistent_versioned_key_value_store))
    /// a table keeps its rows in a versioned store (KIP-914): see
    /// [the DSL's versioned tables](crate::dsl#versioned-tables). Versioned
    /// stores have no record cache.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::state::{StoreKind, Stores};
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder.table_with::<String, String>("names", Materialized::as_("names"));
    ///     let prices = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
    ///     builder.table_with::<String, String>("prices", Materialized::as_(prices));
    /// });
    /// let stores = driver.state_stores();
    /// assert_eq!(stores["names"], StoreKind::TimestampedKeyValue);
    /// assert_eq!(stores["prices"], StoreKind::VersionedKeyValue);
    /// ```
    pub fn as_(what: impl Into<MaterializedAs>) -> Self {
        let what = what.into();
        Materialized {
            name: Some(what.name),
            versioned: what.versioned,
            ..Materialized::default()
        }
    }

    /// Whether the store is a versioned one.
    pub fn is_versioned(&self) -> bool {
        self.versioned.is_some()
    }

    /// A store with a generated name and these serdes.
    pub fn with(key_serde: impl Serde<K>, value_serde: impl Serde<V>) -> Self {
        Materialized {
            key_serde: Some(Arc::new(key_serde)),
            value_serde: Some(Arc::new(value_serde)),
            ..Materialized::default()
        }
    }

    /// Sets the key serde.
    #[must_use]
    pub fn with_key_serde(mut self, serde: impl Serde<K>) -> Self {
        self.key_serde = Some(Arc::new(serde));
        self
    }

    /// Sets the value serde.
    #[must_use]
    pub fn with_value_serde(mut self, serde: impl Serde<V>) -> Self {
        self.value_serde = Some(Arc::new(serde));
        self
    }

    /// The store writes no changelog.
    #[must_use]
    pub fn with_logging_disabled(mut self) -> Self {
        self.logging = false;
        self
    }

    /// The store writes a changelog (the default), created by the
    /// `KafkaStreams` runtime with these topic configs on top of Kafka
    /// Streams' own (`cleanup.policy=compact`), Kafka's
    /// `withLoggingEnabled(Map)`.
    ///
    /// ```
    /// use streams_core::{Materialized, StreamsBuilder};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("words")
    ///     .group_by_key()
    ///     .count_with(Materialized::as_("counts").with_logging_enabled([("min.compaction.lag.ms", "60000")]));
    /// let info = builder.build()?.topics_info("app");
    /// assert_eq!(info[0].changelog_configs["app-counts-changelog"]["min.compaction.lag.ms"], "60000");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_logging_enabled<N: Into<String>, T: Into<String>>(
        mut self,
        configs: impl IntoIterator<Item = (N, T)>,
    ) -> Self {
        self.logging = true;
        self.logging_config = configs
            .into_iter()
            .map(|(n, v)| (n.into(), v.into()))
            .collect();
        self
    }

    /// Turns Kafka's record cache off for this store: every update is
    /// forwarded and written to the changelog at once, as Kafka does with
    /// `Materialized.withCachingDisabled()` (or with
    /// `statestore.cache.max.bytes = 0` for every store). With the cache
    /// (the default, as in Kafka's `TopologyTestDriver`), the updates one
    /// input record makes are collected per key and forwarded once that
    /// record is done; see [the DSL docs](crate::dsl#the-record-cache).
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let letters = builder
    ///         .stream::<String, String>("words")
    ///         .flat_map_values(|word| word.chars().map(String::from).collect::<Vec<_>>());
    ///     letters.clone().group_by_key().count().to_stream().to("cached");
    ///     letters
    ///         .group_by_key()
    ///         .count_with(Materialized::default().with_caching_disabled())
    ///         .to_stream()
    ///         .to("uncached");
    /// });
    /// let words = driver.input::<String, String>("words");
    /// let cached = driver.output::<String, i64>("cached");
    /// let uncached = driver.output::<String, i64>("uncached");
    /// words.pipe_key_value("k", "abc"); // one input record, three updates of "k"
    /// assert_eq!(cached.read_key_values_to_list(), [KeyValue::pair("k", 3)]);
    /// assert_eq!(
    ///     uncached.read_key_values_to_list(),
    ///     [KeyValue::pair("k", 1), KeyValue::pair("k", 2), KeyValue::pair("k", 3)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_caching_disabled(mut self) -> Self {
        self.caching = false;
        self
    }

    /// Turns the record cache back on (the default).
    #[must_use]
    pub fn with_caching_enabled(mut self) -> Self {
        self.caching = true;
        self
    }

    /// How long a window or session store keeps windows, Kafka's
    /// `Materialized.withRetention`: at least the window size (sliding:
    /// twice the time difference; session: the inactivity gap) plus the
    /// grace period, else building the topology fails. The default is that
    /// minimum. Key-value stores have no retention and ignore it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{Materialized, TimeWindows};
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by_key()
    ///     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?)
    ///     .count_with(Materialized::as_("counts").with_retention(Duration::from_secs(30)));
    /// let err = builder.build().unwrap_err();
    /// assert!(matches!(
    ///     err,
    ///     streams_core::StreamsError::RetentionTooShort { retention_ms: 30_000, minimum_ms: 60_000, .. }
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = Some(retention);
        self
    }

    /// The store's name, if given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The builder of the store `name` that an operator keeps as this
    /// says: its serdes (the key serde given here, else `key_serde`), its
    /// changelog and its record cache.
    pub(crate) fn store_builder<S>(
        &self,
        name: &str,
        params: S::Params,
        key_serde: Option<SerdeRef<K>>,
    ) -> BuiltInStoreBuilder<S>
    where
        S: BuiltInStore<Key = K, Value = V>,
    {
        let key_serde = self.key_serde.clone().or(key_serde);
        BuiltInStoreBuilder::new(name, params, key_serde, self.value_serde.clone())
            .with_logging(self.logging)
            .with_changelog_config(self.logging_config.clone())
            .with_caching(self.caching)
    }
}
