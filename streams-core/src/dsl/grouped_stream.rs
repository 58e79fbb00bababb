//! Grouping a stream and aggregating it: [`KStream::group_by`] and
//! [`KStream::group_by_key`] give a [`KGroupedStream`], whose `count`,
//! `reduce` and `aggregate` give a table. A key changed upstream sends
//! the records through a repartition topic first (`repartition.rs`).

use std::fmt;
use std::rc::Rc;

use crate::dsl::ktable::{KTable, store_getter};
use crate::dsl::table_processors::StreamAggregate;
use crate::dsl::{Grouped, KStream, Materialized};
use crate::record::Change;
use crate::serde::I64Serde;
use crate::state::TimestampedKeyValueStore;

/// A stream grouped by key, ready to aggregate, Kafka's `KGroupedStream`.
///
/// If the key was changed upstream (`map`, `select_key`, `flat_map`,
/// `process`, or `group_by`), the records first go through a repartition
/// topic, `<application.id>-<store or grouped name>-repartition`, as in Kafka.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("text")
///     .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
///     .group_by(|_, word| word.clone())
///     .count()
///     .to_stream()
///     .to("counts");
/// let topology = builder.build()?;
/// assert_eq!(topology.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000003"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KGroupedStream<K, V> {
    pub(crate) stream: KStream<K, V>,
    pub(crate) grouped: Grouped<K, V>,
    pub(crate) repartition_required: bool,
}

/// A grouped stream can feed several aggregations (Kafka lets one
/// `KGroupedStream` be aggregated, or cogrouped, more than once); each
/// makes its own repartition topic when the key changed upstream.
impl<K, V> Clone for KGroupedStream<K, V> {
    fn clone(&self) -> Self {
        KGroupedStream {
            stream: self.stream.clone(),
            grouped: self.grouped.clone(),
            repartition_required: self.repartition_required,
        }
    }
}

impl<K, V> fmt::Debug for KGroupedStream<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KGroupedStream")
            .field("node", &self.stream.node)
            .field("repartition_required", &self.repartition_required)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Groups the records by their key, Kafka's `groupByKey`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("clicks").group_by_key().count().to_stream().to("clicks-per-user");
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
    /// let counts = driver.output::<String, i64>("clicks-per-user");
    /// clicks.pipe_key_value("ann", "home");
    /// clicks.pipe_key_value("bob", "home");
    /// clicks.pipe_key_value("ann", "cart");
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [KeyValue::pair("ann", 1), KeyValue::pair("bob", 1), KeyValue::pair("ann", 2)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "groupByKey")]
    pub fn group_by_key(self) -> KGroupedStream<K, V> {
        self.group_by_key_with(Grouped::default())
    }

    /// As [`KStream::group_by_key`], with serdes and the repartition
    /// topic's name from `grouped`.
    ///
    /// The example of [`Grouped`] shows `group_by_key_with`.
    pub fn group_by_key_with(self, grouped: Grouped<K, V>) -> KGroupedStream<K, V> {
        let repartition_required = self.repartition_required;
        KGroupedStream {
            stream: self,
            grouped,
            repartition_required,
        }
    }

    /// Groups the records by a new key, Kafka's `groupBy`: a `select_key`
    /// node (named after `grouped`, if named) and then a repartition.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("text")
    ///         .flat_map_values(|line| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
    ///         .group_by(|_, word| word.clone())
    ///         .count()
    ///         .to_stream()
    ///         .to("word-counts");
    /// });
    /// let text = driver.input::<String, String>("text");
    /// let counts = driver.output::<String, i64>("word-counts");
    /// text.pipe_value("to be or not to be");
    /// // Each word goes through the repartition topic as a record of its own.
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("to", 1),
    ///         KeyValue::pair("be", 1),
    ///         KeyValue::pair("or", 1),
    ///         KeyValue::pair("not", 1),
    ///         KeyValue::pair("to", 2),
    ///         KeyValue::pair("be", 2),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "groupBy")]
    pub fn group_by<KR: Ord + Clone + 'static>(
        self,
        selector: impl Fn(Option<&K>, &V) -> KR + 'static,
    ) -> KGroupedStream<KR, V> {
        self.group_by_with(selector, Grouped::default())
    }

    /// As [`KStream::group_by`], with serdes and a name from `grouped`: the
    /// key-selecting node and the repartition topic
    /// (`<application.id>-<name>-repartition`) are named after it.
    ///
    /// The example of [`Grouped`] shows `group_by_with`.
    pub fn group_by_with<KR: Ord + Clone + 'static>(
        mut self,
        selector: impl Fn(Option<&K>, &V) -> KR + 'static,
        grouped: Grouped<KR, V>,
    ) -> KGroupedStream<KR, V> {
        if let Some(n) = &grouped.name {
            self = self.named(n.clone());
        }
        let mut keyed = self.select_key(selector);
        keyed.repartition_required = true;
        KGroupedStream {
            stream: keyed,
            grouped,
            repartition_required: true,
        }
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedStream<K, V> {
    /// Names the aggregation node of the next `count`, `reduce` or
    /// `aggregate`, Kafka's `count(Named)`, `reduce(reducer, Named,
    /// Materialized)` and `aggregate(.., Named, Materialized)`. As in Kafka
    /// the name takes a number of the counter all the same, and names
    /// neither the store (see [`Materialized::as_`]) nor the repartition
    /// topic (see [`Grouped::as_`]).
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by_key()
    ///     .named("clicks-per-user")
    ///     .count()
    ///     .to_stream()
    ///     .to("counts");
    /// assert_eq!(
    ///     builder.build()?.node_names(),
    ///     [
    ///         "KSTREAM-SOURCE-0000000000",
    ///         "clicks-per-user",
    ///         "KTABLE-TOSTREAM-0000000003",
    ///         "KSTREAM-SINK-0000000004",
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.stream.next_name = Some(name.into());
        self
    }

    fn store_name<VA>(&self, prefix: &str, materialized: &Materialized<K, VA>) -> String {
        match &materialized.name {
            Some(n) => n.clone(),
            None => self.stream.builder().new_store_name(prefix),
        }
    }

    fn build<VA: Clone + 'static>(
        self,
        prefix: &str,
        store: String,
        materialized: Materialized<K, VA>,
        first: Rc<dyn Fn(&K, &V) -> VA>,
        aggregator: Rc<dyn Fn(&K, &V, VA) -> VA>,
    ) -> KTable<K, VA> {
        let mut stream = self.stream;
        stream
            .builder()
            .refuse_versioned(&materialized, &format!("aggregation store `{store}`"));
        let name = stream.take_name_and_number(prefix);
        let key_serde = self.grouped.key_serde.clone().or(stream.key_serde.clone());
        let value_serde = self
            .grouped
            .value_serde
            .clone()
            .or(stream.value_serde.clone());
        if self.repartition_required {
            let base = self.grouped.name.clone().unwrap_or_else(|| store.clone());
            stream = stream.through_internal_topic(&base, key_serde.clone(), value_serde, None);
        }
        let builder = stream.builder().clone();
        let value_serde = materialized.value_serde.clone();
        let send_old = Rc::new(std::cell::Cell::new(false));
        let parent = stream.node_name().to_owned();
        let (flag, sname) = (send_old.clone(), store.clone());
        builder.with_topology(|t| {
            t.add_typed_processor::<K, V, K, Change<VA>, _, _>(
                &name,
                move || StreamAggregate {
                    store: sname.clone(),
                    first: first.clone(),
                    aggregator: aggregator.clone(),
                    send_old: flag.get(),
                    cache: Default::default(),
                },
                &[&parent],
            )?;
            t.add_state_store(
                materialized.store_builder::<TimestampedKeyValueStore<K, VA>>(
                    &store,
                    (),
                    key_serde.clone(),
                ),
                &[&name],
            )
            .map(|_| ())
        });
        let getter = store_getter::<K, VA>(store.clone());
        KTable::new(builder, name, Rc::new(move || send_old.set(true)), getter)
            .with_serdes(key_serde, value_serde)
            .with_store(Some(store))
    }

    /// Counts the records per key, Kafka's `count`. Records with a null
    /// key or value are dropped and counted.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("clicks")
    ///         .group_by(|_, page| page.clone())
    ///         .count_with(Materialized::as_("clicks-per-page"))
    ///         .to_stream()
    ///         .to("page-counts");
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
    /// let counts = driver.output::<String, i64>("page-counts");
    /// clicks.pipe_key_value("ann", "home");
    /// clicks.pipe_key_value("bob", "home");
    /// assert_eq!(counts.read_key_values_to_list(), [KeyValue::pair("home", 1), KeyValue::pair("home", 2)]);
    /// let store = driver.timestamped_key_value_store::<String, i64>("clicks-per-page")?;
    /// assert_eq!(store.get(&"home".to_string()).map(|v| v.value), Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(self) -> KTable<K, i64> {
        self.count_impl(Materialized::default())
    }

    /// As [`KGroupedStream::count`], with the store from `materialized`. A
    /// `Materialized` without a name takes one more store number than
    /// `count()`, as Kafka's `count(Materialized)` does (its store is still
    /// generated).
    ///
    /// The example of [`KGroupedStream::count`] shows `count_with`.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<K, i64> {
        if materialized.name.is_none() {
            self.stream.builder().new_store_name("KSTREAM-AGGREGATE-");
        }
        self.count_impl(materialized)
    }

    fn count_impl(self, materialized: Materialized<K, i64>) -> KTable<K, i64> {
        let materialized = match materialized.value_serde {
            Some(_) => materialized,
            None => materialized.with_value_serde(I64Serde),
        };
        let store = self.store_name("KSTREAM-AGGREGATE-", &materialized);
        self.build(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            Rc::new(|_, _| 1),
            Rc::new(|_, _, count| count + 1),
        )
    }

    /// Combines the values per key, Kafka's `reduce`: the first value is
    /// the aggregate, then `reducer(aggregate, value)`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("visits")
    ///         .group_by_key()
    ///         .reduce(|path, page| format!("{path} > {page}"))
    ///         .to_stream()
    ///         .to("paths");
    /// });
    /// let visits = driver.input::<String, String>("visits");
    /// let paths = driver.output::<String, String>("paths");
    /// visits.pipe_key_value("ann", "home");
    /// visits.pipe_key_value("ann", "cart");
    /// assert_eq!(
    ///     paths.read_key_values_to_list(),
    ///     [KeyValue::pair("ann", "home"), KeyValue::pair("ann", "home > cart")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(self, reducer: impl Fn(&V, &V) -> V + 'static) -> KTable<K, V> {
        self.reduce_with(reducer, Materialized::default())
    }

    /// As [`KGroupedStream::reduce`], with the store from `materialized`.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, i64>("bids")
    ///         .group_by_key()
    ///         .reduce_with(|highest, bid| *highest.max(bid), Materialized::as_("highest-bids"));
    /// });
    /// driver.input::<String, i64>("bids").pipe_key_values([("lot-1", 10), ("lot-1", 25), ("lot-2", 5), ("lot-1", 20)]);
    /// let highest = driver.timestamped_key_value_store::<String, i64>("highest-bids")?;
    /// assert_eq!(highest.to_map(), [("lot-1".to_owned(), 25), ("lot-2".to_owned(), 5)].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_with(
        self,
        reducer: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        let materialized = match (
            &materialized.value_serde,
            &self.grouped.value_serde,
            &self.stream.value_serde,
        ) {
            (None, Some(s), _) | (None, None, Some(s)) => {
                let s = s.clone();
                Materialized {
                    value_serde: Some(s),
                    ..materialized
                }
            }
            _ => materialized,
        };
        let store = self.store_name("KSTREAM-REDUCE-", &materialized);
        self.build(
            "KSTREAM-REDUCE-",
            store,
            materialized,
            Rc::new(|_, v: &V| v.clone()),
            Rc::new(move |_, v, agg| reducer(&agg, v)),
        )
    }

    /// Aggregates the values per key, Kafka's `aggregate`: the first value
    /// of a key is added to `initializer()`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("messages")
    ///         .group_by_key()
    ///         .aggregate(|| 0_i64, |_, text: &String, chars| chars + text.len() as i64)
    ///         .to_stream()
    ///         .to("chars-per-user");
    /// });
    /// let messages = driver.input::<String, String>("messages");
    /// let chars = driver.output::<String, i64>("chars-per-user");
    /// messages.pipe_key_value("ann", "hi");
    /// messages.pipe_key_value("ann", "bye");
    /// assert_eq!(chars.read_key_values_to_list(), [KeyValue::pair("ann", 2), KeyValue::pair("ann", 5)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> KTable<K, VA> {
        self.aggregate_with(initializer, aggregator, Materialized::default())
    }

    /// As [`KGroupedStream::aggregate`], with the store from `materialized`
    /// (a value type without a built-in serde needs one here).
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_core::serde::JsonSerde;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("visits").group_by_key().aggregate_with(
    ///         Vec::new,
    ///         |_, page: &String, mut pages: Vec<String>| {
    ///             pages.push(page.clone());
    ///             pages
    ///         },
    ///         Materialized::as_("pages").with_value_serde(JsonSerde::<Vec<String>>::new()),
    ///     );
    /// });
    /// driver.input::<String, String>("visits").pipe_key_values([("ann", "home"), ("ann", "cart")]);
    /// let pages = driver.timestamped_key_value_store::<String, Vec<String>>("pages")?;
    /// assert_eq!(pages.get(&"ann".to_string()).map(|v| v.value), Some(vec!["home".to_owned(), "cart".to_owned()]));
    /// // The changelog holds the JSON the serde wrote.
    /// assert_eq!(
    ///     driver.output::<String, String>("test-app-pages-changelog").read_values_to_list(),
    ///     [Some(r#"["home"]"#.to_owned()), Some(r#"["home","cart"]"#.to_owned())]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<K, VA> {
        let store = self.store_name("KSTREAM-AGGREGATE-", &materialized);
        let aggregator: Rc<dyn Fn(&K, &V, VA) -> VA> = Rc::new(aggregator);
        let a = aggregator.clone();
        self.build(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            Rc::new(move |k, v| a(k, v, initializer())),
            aggregator,
        )
    }
}
