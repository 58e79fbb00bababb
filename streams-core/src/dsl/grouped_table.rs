//! Grouping a table by a new key and aggregating it: [`KTable::group_by`]
//! gives a [`KGroupedTable`], whose `count`, `reduce` and `aggregate`
//! take each update as the removal of the old row and the addition of
//! the new one. The updates cross a repartition topic in Kafka's
//! `Change` wire format (`change_serde.rs`).

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::dsl::change_serde::{ChangeSerde, default_change_serde};
use crate::dsl::ktable::{GetterSupplier, KTable, store_getter};
use crate::dsl::table_processors::{TableAggregate, TableRepartitionMap};
use crate::dsl::{Grouped, Materialized, StreamsBuilder};
use crate::record::Change;
use crate::serde::{I64Serde, SerdeRef};
use crate::state::TimestampedKeyValueStore;
use crate::topology::{NodeKind, SinkTopic, TopicName};

/// A table grouped by a new key, ready to aggregate, Kafka's `KGroupedTable`.
///
/// Each update of the source table reaches the aggregation as the removal
/// of the old row (through the subtractor) and the addition of the new one
/// (through the adder).
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .table::<String, String>("user-regions")
///     .group_by(|_user, region| (region.clone(), 1_i64))
///     .count()
///     .to_stream()
///     .to("users-per-region");
/// assert_eq!(builder.build()?.store_names().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KGroupedTable<K, V> {
    builder: StreamsBuilder,
    node: String,
    grouped: Grouped<K, V>,
    /// The name of the next aggregation, from [`KGroupedTable::named`].
    next_name: Option<String>,
}

impl<K, V> fmt::Debug for KGroupedTable<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KGroupedTable")
            .field("node", &self.node)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    /// Re-keys the table for an aggregation, Kafka's `KTable.groupBy`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("user-regions")
    ///         .group_by(|user, region| (region.clone(), user.clone()))
    ///         .count()
    ///         .to_stream()
    ///         .to("users-per-region");
    /// });
    /// let regions = driver.input::<String, String>("user-regions");
    /// let counts = driver.output::<String, i64>("users-per-region");
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_key_value("ann", "US"); // leaves EU, joins US
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("EU", 1),
    ///         KeyValue::pair("EU", 2),
    ///         KeyValue::pair("EU", 1),
    ///         KeyValue::pair("US", 1),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_by<KR: Ord + Clone + 'static, VR: Clone + 'static>(
        self,
        selector: impl Fn(&K, &V) -> (KR, VR) + 'static,
    ) -> KGroupedTable<KR, VR> {
        self.group_by_with(selector, Grouped::default())
    }

    /// As [`KTable::group_by`], with serdes and a name from `grouped`.
    ///
    /// The serdes write the repartition topic (the values as Kafka's
    /// `Change` of new and old value):
    ///
    /// ```
    /// use streams_core::Grouped;
    /// use streams_core::serde::{JsonSerde, StringSerde};
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("user-regions")
    ///         .group_by_with(
    ///             |user, region| (region.clone(), vec![user.clone()]),
    ///             Grouped::with(StringSerde, JsonSerde::<Vec<String>>::new()),
    ///         )
    ///         .count()
    ///         .to_stream()
    ///         .to("users-per-region");
    /// });
    /// driver.input::<String, String>("user-regions").pipe_key_values([("ann", "EU"), ("bob", "US")]);
    /// assert_eq!(
    ///     driver.output::<String, i64>("users-per-region").read_key_values_to_list(),
    ///     [KeyValue::pair("EU", 1), KeyValue::pair("US", 1)]
    /// );
    /// assert!(driver.produced_topic_names().contains("test-app-KTABLE-AGGREGATE-STATE-STORE-0000000004-repartition"));
    /// ```
    pub fn group_by_with<KR: Ord + Clone + 'static, VR: Clone + 'static>(
        self,
        selector: impl Fn(&K, &V) -> (KR, VR) + 'static,
        grouped: Grouped<KR, VR>,
    ) -> KGroupedTable<KR, VR> {
        // Kafka names the select node after the `Grouped`, else
        // `KTABLE-SELECT-<n>`; either way a number is taken.
        let generated = self.builder.new_name("KTABLE-SELECT-");
        let name = grouped.name.clone().unwrap_or(generated);
        self.enable_sending_old_values();
        let selector: Rc<dyn Fn(&K, &V) -> (KR, VR)> = Rc::new(selector);
        let parent = self.node.clone();
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, Change<V>, KR, Change<VR>, _, _>(
                &name,
                move || TableRepartitionMap {
                    selector: selector.clone(),
                },
                &[&parent],
            )
        });
        KGroupedTable {
            builder: self.builder.clone(),
            node: name,
            grouped,
            next_name: None,
        }
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedTable<K, V> {
    /// Names the next `count`, `reduce` or `aggregate`, Kafka's forms of
    /// them that take a `Named`: the aggregation node is `name`, the
    /// repartition topic's sink and source `<name>-sink` and
    /// `<name>-source`. As in Kafka each takes a number of the counter all
    /// the same; the store is named by [`Materialized::as_`] and the
    /// repartition topic by [`Grouped::as_`] (else the store's name).
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, String>("user-regions")
    ///     .group_by(|user, region| (region.clone(), user.clone()))
    ///     .named("users-per-region")
    ///     .count()
    ///     .to_stream()
    ///     .to("counts");
    /// let topology = builder.build()?;
    /// let names = topology.node_names();
    /// for name in ["users-per-region-sink", "users-per-region-source", "users-per-region"] {
    ///     assert!(names.contains(&name), "{name} in {names:?}");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.next_name = Some(name.into());
        self
    }

    fn build<VA: Clone + 'static>(
        self,
        prefix: &str,
        materialized: Materialized<K, VA>,
        first: Rc<dyn Fn(&K, &V) -> VA>,
        adder: Rc<dyn Fn(&K, &V, VA) -> VA>,
        subtractor: Rc<dyn Fn(&K, &V, VA) -> VA>,
    ) -> KTable<K, VA> {
        self.builder
            .refuse_versioned(&materialized, "a grouped table's aggregation store");
        // Kafka names the store of every grouped-table operation
        // `KTABLE-AGGREGATE-STATE-STORE-<n>`, a reduce's too (only the node
        // is `KTABLE-REDUCE-<n>`).
        let store = match &materialized.name {
            Some(n) => n.clone(),
            None => self.builder.new_store_name("KTABLE-AGGREGATE-"),
        };
        // As Kafka's `KGroupedTableImpl.doAggregate`: the repartition sink,
        // source and the aggregation node take their names from the
        // aggregation's own `Named` (`<name>-sink`, `<name>-source` and
        // the name; each takes a number all the same); the `Grouped`'s
        // name names the select node before and the repartition topic,
        // which is otherwise the store's.
        let generated_sink = self.builder.new_name("KSTREAM-SINK-");
        let generated_source = self.builder.new_name("KSTREAM-SOURCE-");
        let generated = self.builder.new_name(prefix);
        let (sink, source, name) = match self.next_name.clone() {
            Some(n) => (format!("{n}-sink"), format!("{n}-source"), n),
            None => (generated_sink, generated_source, generated),
        };
        let topic = format!(
            "{}-repartition",
            self.grouped.name.clone().unwrap_or_else(|| store.clone())
        );
        let key_serde = self.grouped.key_serde.clone();
        let change_serde: Option<SerdeRef<Change<V>>> = self
            .grouped
            .value_serde
            .clone()
            .map(|inner| Arc::new(ChangeSerde { inner }) as SerdeRef<Change<V>>);
        let value_serde = materialized.value_serde.clone();
        let send_old = Rc::new(std::cell::Cell::new(false));
        let (flag, sname, parent) = (send_old.clone(), store.clone(), self.node.clone());
        let change_serde_for_source = change_serde.clone();
        let ks2 = key_serde.clone();
        self.builder.with_topology(|t| {
            t.add_typed_sink::<K, Change<V>>(
                &sink,
                SinkTopic::Fixed(TopicName::internal(topic.clone())),
                ks2.clone(),
                change_serde.clone().or_else(|| default_change_serde::<V>()),
                None,
                &[&parent],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<K, Change<V>>(
                &source,
                kind,
                ks2,
                change_serde_for_source.or_else(|| default_change_serde::<V>()),
            )?;
            t.add_typed_processor::<K, Change<V>, K, Change<VA>, _, _>(
                &name,
                move || TableAggregate {
                    store: sname.clone(),
                    first: first.clone(),
                    adder: adder.clone(),
                    subtractor: subtractor.clone(),
                    send_old: flag.get(),
                    cache: Default::default(),
                },
                &[&source],
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
        let getter: GetterSupplier<K, VA> = store_getter::<K, VA>(store.clone());
        let enable_old = Rc::new(move || send_old.set(true));
        KTable::new(self.builder, name, enable_old, getter)
            .with_serdes(key_serde, value_serde)
            .with_store(Some(store))
    }

    /// Counts the rows per key, Kafka's `KGroupedTable.count`.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("user-regions")
    ///         .group_by(|user, region| (region.clone(), user.clone()))
    ///         .count_with(Materialized::as_("region-counts"))
    ///         .to_stream()
    ///         .to("users-per-region");
    /// });
    /// let regions = driver.input::<String, String>("user-regions");
    /// let counts = driver.output::<String, i64>("users-per-region");
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_tombstone("bob"); // a deleted row is subtracted
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [KeyValue::pair("EU", 1), KeyValue::pair("EU", 2), KeyValue::pair("EU", 1)]
    /// );
    /// let store = driver.timestamped_key_value_store::<String, i64>("region-counts")?;
    /// assert_eq!(store.get(&"EU".to_string()).map(|v| v.value), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(self) -> KTable<K, i64> {
        self.count_with(Materialized::default())
    }

    /// As [`KGroupedTable::count`], with the store from `materialized`.
    ///
    /// The example of [`KGroupedTable::count`] shows `count_with`.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<K, i64> {
        let materialized = match materialized.value_serde {
            Some(_) => materialized,
            None => materialized.with_value_serde(I64Serde),
        };
        self.build(
            "KTABLE-AGGREGATE-",
            materialized,
            Rc::new(|_, _| 1),
            Rc::new(|_, _, c| c + 1),
            Rc::new(|_, _, c| c - 1),
        )
    }

    /// Combines the rows per key: `adder(aggregate, new)` for each added
    /// row and `subtractor(aggregate, old)` for each removed one.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, i64>("balances") // "region/user" -> balance
    ///         .group_by(|key, balance| (key.split('/').next().unwrap().to_owned(), *balance))
    ///         .reduce(|total, added| total + added, |total, removed| total - removed)
    ///         .to_stream()
    ///         .to("region-totals");
    /// });
    /// let balances = driver.input::<String, i64>("balances");
    /// let totals = driver.output::<String, i64>("region-totals");
    /// balances.pipe_key_value("EU/ann", 10);
    /// balances.pipe_key_value("EU/bob", 5);
    /// balances.pipe_key_value("EU/ann", 7); // subtracts 10, adds 7: one update
    /// assert_eq!(
    ///     totals.read_key_values_to_list(),
    ///     [KeyValue::pair("EU", 10), KeyValue::pair("EU", 15), KeyValue::pair("EU", 12)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(
        self,
        adder: impl Fn(&V, &V) -> V + 'static,
        subtractor: impl Fn(&V, &V) -> V + 'static,
    ) -> KTable<K, V> {
        self.reduce_with(adder, subtractor, Materialized::default())
    }

    /// As [`KGroupedTable::reduce`], with the store from `materialized`.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, i64>("balances") // "region/user" -> balance
    ///         .group_by(|key, balance| (key.split('/').next().unwrap_or("").to_owned(), *balance))
    ///         .reduce_with(|total, added| total + added, |total, removed| total - removed, Materialized::as_("totals"));
    /// });
    /// let balances = driver.input::<String, i64>("balances");
    /// balances.pipe_key_values([("EU/ann", 10), ("EU/bob", 5), ("US/cy", 7)]);
    /// balances.pipe_tombstone("EU/ann"); // subtracted
    /// let totals = driver.timestamped_key_value_store::<String, i64>("totals")?;
    /// assert_eq!(totals.to_map(), [("EU".to_owned(), 5), ("US".to_owned(), 7)].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce_with(
        self,
        adder: impl Fn(&V, &V) -> V + 'static,
        subtractor: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        let materialized = match (&materialized.value_serde, &self.grouped.value_serde) {
            (None, Some(s)) => {
                let s = s.clone();
                Materialized {
                    value_serde: Some(s),
                    ..materialized
                }
            }
            _ => materialized,
        };
        self.build(
            "KTABLE-REDUCE-",
            materialized,
            Rc::new(|_, v: &V| v.clone()),
            Rc::new(move |_, v, agg| adder(&agg, v)),
            Rc::new(move |_, v, agg| subtractor(&agg, v)),
        )
    }

    /// Aggregates the rows per key with an adder and a subtractor, Kafka's
    /// `KGroupedTable.aggregate`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("user-regions")
    ///         .group_by(|user, region| (region.clone(), user.clone()))
    ///         .aggregate(
    ///             String::new,
    ///             |_, user, users| if users.is_empty() { user.clone() } else { format!("{users},{user}") },
    ///             |_, user, users| {
    ///                 users.split(',').filter(|u| *u != user.as_str()).collect::<Vec<_>>().join(",")
    ///             },
    ///         )
    ///         .to_stream()
    ///         .to("region-users");
    /// });
    /// let regions = driver.input::<String, String>("user-regions");
    /// let users = driver.output::<String, String>("region-users");
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_key_value("ann", "US");
    /// assert_eq!(
    ///     users.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("EU", "ann"),
    ///         KeyValue::pair("EU", "ann,bob"),
    ///         KeyValue::pair("EU", "bob"),
    ///         KeyValue::pair("US", "ann"),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        adder: impl Fn(&K, &V, VA) -> VA + 'static,
        subtractor: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> KTable<K, VA> {
        self.aggregate_with(initializer, adder, subtractor, Materialized::default())
    }

    /// As [`KGroupedTable::aggregate`], with the store from `materialized`.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("user-regions")
    ///         .group_by(|user, region| (region.clone(), user.len() as i64))
    ///         .aggregate_with(|| 0_i64, |_, len, sum| sum + len, |_, len, sum| sum - len, Materialized::as_("name-letters"));
    /// });
    /// let regions = driver.input::<String, String>("user-regions");
    /// regions.pipe_key_values([("ann", "EU"), ("bob", "EU"), ("carol", "US")]);
    /// regions.pipe_key_value("bob", "US"); // leaves EU, joins US
    /// let letters = driver.timestamped_key_value_store::<String, i64>("name-letters")?;
    /// assert_eq!(letters.to_map(), [("EU".to_owned(), 3), ("US".to_owned(), 8)].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        adder: impl Fn(&K, &V, VA) -> VA + 'static,
        subtractor: impl Fn(&K, &V, VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<K, VA> {
        let adder: Rc<dyn Fn(&K, &V, VA) -> VA> = Rc::new(adder);
        let a = adder.clone();
        self.build(
            "KTABLE-AGGREGATE-",
            materialized,
            Rc::new(move |k, v| a(k, v, initializer())),
            adder,
            Rc::new(subtractor),
        )
    }
}
