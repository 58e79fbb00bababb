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
    /// Kafka's `Consumed`.
    Consumed
);
serde_options!(
    /// How a sink writes a topic: serdes, the sink node's name and a
    /// stream partitioner, as Kafka's `Produced`.
    Produced,
    partitioner: PartitionerRef<K, V>
);
serde_options!(
    /// How a stream is grouped: serdes for the repartition topic and its
    /// name (`<application.id>-<name>-repartition`), as Kafka's `Grouped`.
    Grouped
);
serde_options!(
    /// How a stream is repartitioned: serdes, the name of the internal
    /// topic (`<application.id>-<name>-repartition`) and a stream
    /// partitioner, as Kafka's `Repartitioned`.
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
    ($name:ident, $doc:literal) => {
        impl<K: 'static, V: 'static> $name<K, V> {
            #[doc = $doc]
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
    "Sends each record to the partitions `partitioner` chooses, as Kafka's \
     `Produced.withStreamPartitioner` (without one, a windowed key goes by its \
     inner key and any other by the producer's default partitioner).\n\n\
     ```\n\
     use streams_core::dsl::Produced;\n\
     let by_length = |_: &str, key: Option<&String>, _: Option<&i64>, n: i32| {\n\
     \x20   key.map(|k| i32::try_from(k.len()).unwrap_or(0) % n)\n\
     };\n\
     let produced = Produced::<String, i64>::as_(\"to-out\").with_stream_partitioner(by_length);\n\
     assert_eq!(produced.name(), Some(\"to-out\"));\n\
     ```"
);
with_stream_partitioner!(
    Repartitioned,
    "Writes the repartition topic's records to the partitions `partitioner` \
     chooses, as Kafka's `Repartitioned.withStreamPartitioner`."
);

/// What `Branched::with_function` applies to a branch.
pub(crate) type ChainFn<K, V> = Rc<dyn Fn(KStream<K, V>) -> Option<KStream<K, V>>>;

/// A branch of [`KStream::split`]: its name and, optionally, a function
/// applied to the branch stream, as Kafka's `Branched`.
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
/// says otherwise (see `dsl::cache` for what the cache does).
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
