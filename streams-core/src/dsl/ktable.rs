//! `KTable`: a changelog stream seen as a table, and its operators.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use crate::dsl::table_processors::{
    TableFilter, TableMapValues, TableToStream, ValueGetter, VersionedValueGetter,
};
use crate::dsl::{KStream, Materialized, StreamsBuilder};
use crate::processor::Processor;
use crate::record::Change;
use crate::serde::SerdeRef;
use crate::state::{TimestampedKeyValueStore, VersionedKeyValueStore};

/// What a downstream operator needs from a table it looks rows up in.
pub(crate) type GetterSupplier<K, V> = Rc<dyn Fn() -> (Vec<String>, ValueGetter<K, V>)>;

/// What a stream-table join needs from a versioned table (Kafka's value
/// getter whose `isVersioned()` is true): the versioned stores it reads,
/// each with its history retention, and the getter of a row as of a time.
pub(crate) type VersionedGetterSupplier<K, V> =
    Rc<dyn Fn() -> (Vec<(String, i64)>, VersionedValueGetter<K, V>)>;

/// A table: the latest value per key of a changelog stream, Kafka's
/// `KTable<K, V>`. A `None` value (a tombstone) deletes the row, and every
/// operator passes the delete on.
///
/// Predicates and mappers see rows, never deletes, so they take `&K`
/// and `&V`: a row a filter rejects is deleted downstream.
///
/// ```
/// use streams_core::{Materialized, StreamsBuilder};
///
/// let builder = StreamsBuilder::new();
/// builder
///     .table_with::<String, String>("users", Materialized::as_("users-store"))
///     .filter(|_, country| country == "NL")
///     .to_stream()
///     .to("dutch-users");
/// let topology = builder.build()?;
/// assert_eq!(topology.store_names(), ["users-store"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KTable<K, V> {
    pub(crate) builder: StreamsBuilder,
    pub(crate) node: String,
    pub(crate) key_serde: Option<SerdeRef<K>>,
    pub(crate) value_serde: Option<SerdeRef<V>>,
    /// This table's own store, if it has one.
    pub(crate) store: Option<String>,
    /// Makes this node and its upstream send old values: sets the flag
    /// this node's processor reads when it is built.
    pub(crate) enable_old: Rc<dyn Fn()>,
    /// Reads a row by key, for joins and lookups.
    pub(crate) getter: GetterSupplier<K, V>,
    /// Reads a row by key as of a time, when the table is versioned
    /// (KIP-914): its rows are in a versioned store, or are computed by
    /// filters and mappers from such a table. This is Kafka's
    /// `isVersionedOrVersionedUpstream` of the table's node too.
    pub(crate) versioned: Option<VersionedGetterSupplier<K, V>>,
    pub(crate) next_name: Option<String>,
}

impl<K, V> KTable<K, V> {
    /// The table whose rows the node `node` forwards: `enable_old` makes
    /// that node and the tables it reads forward old values, `getter`
    /// reads a row by key. It has no serdes and no store of its own until
    /// [`with_serdes`](KTable::with_serdes) and
    /// [`with_store`](KTable::with_store) give them.
    pub(crate) fn new(
        builder: StreamsBuilder,
        node: String,
        enable_old: Rc<dyn Fn()>,
        getter: GetterSupplier<K, V>,
    ) -> Self {
        KTable {
            builder,
            node,
            key_serde: None,
            value_serde: None,
            store: None,
            enable_old,
            getter,
            versioned: None,
            next_name: None,
        }
    }

    /// The versioned getter, when the table is versioned.
    #[must_use]
    pub(crate) fn with_versioned(
        mut self,
        versioned: Option<VersionedGetterSupplier<K, V>>,
    ) -> Self {
        self.versioned = versioned;
        self
    }

    /// The serdes of the table's keys and values, where known.
    #[must_use]
    pub(crate) fn with_serdes(
        mut self,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> Self {
        self.key_serde = key_serde;
        self.value_serde = value_serde;
        self
    }

    /// The store holding the table's rows, if it has one.
    #[must_use]
    pub(crate) fn with_store(mut self, store: Option<String>) -> Self {
        self.store = store;
        self
    }
}

impl<K, V> Clone for KTable<K, V> {
    fn clone(&self) -> Self {
        let mut table = KTable::new(
            self.builder.clone(),
            self.node.clone(),
            self.enable_old.clone(),
            self.getter.clone(),
        )
        .with_serdes(self.key_serde.clone(), self.value_serde.clone())
        .with_store(self.store.clone())
        .with_versioned(self.versioned.clone());
        table.next_name = self.next_name.clone();
        table
    }
}

impl<K, V> fmt::Debug for KTable<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KTable")
            .field("node", &self.node)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// A getter that reads rows from a store.
pub(crate) fn store_getter<K: Ord + Clone + 'static, V: Clone + 'static>(
    store: String,
) -> GetterSupplier<K, V> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<K, V> = Rc::new(move |lookup, key| {
            let store = lookup.timestamped::<K, V>(&name)?;
            Ok(store.get_key(key)?.map(|vt| (vt.value, vt.timestamp)))
        });
        (vec![store.clone()], getter)
    })
}

/// A getter of the newest row in a versioned store.
pub(crate) fn versioned_store_getter<K: Ord + Clone + 'static, V: Clone + 'static>(
    store: String,
) -> GetterSupplier<K, V> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<K, V> = Rc::new(move |lookup, key| {
            let store = lookup.versioned::<K, V>(&name)?;
            Ok(store.get(key)?.map(|r| (r.value, r.timestamp)))
        });
        (vec![store.clone()], getter)
    })
}

/// A getter of rows as of a time in the versioned store `store`, which
/// keeps `history_retention_ms` of history.
pub(crate) fn versioned_as_of_getter<K: Ord + Clone + 'static, V: Clone + 'static>(
    store: String,
    history_retention_ms: i64,
) -> VersionedGetterSupplier<K, V> {
    Rc::new(move || {
        let name = store.clone();
        let getter: VersionedValueGetter<K, V> = Rc::new(move |lookup, key, as_of| {
            let store = lookup.versioned::<K, V>(&name)?;
            Ok(store.get_as_of(key, as_of)?.map(|r| (r.value, r.timestamp)))
        });
        (vec![(store.clone(), history_retention_ms)], getter)
    })
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    /// Whether the table is versioned (KIP-914): kept in a versioned
    /// store, or computed without a store of its own (by `filter` or
    /// `map_values`) from a versioned table. A stream joined with it finds
    /// the row as of each record's timestamp. See
    /// [the DSL's versioned tables](crate::dsl#versioned-tables).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::state::Stores;
    /// use streams_core::{Materialized, StreamsBuilder};
    ///
    /// let builder = StreamsBuilder::new();
    /// let history = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60))?;
    /// let prices = builder.table_with::<String, String>("prices", Materialized::as_(history));
    /// assert!(prices.is_versioned());
    /// assert!(prices.clone().filter(|_, v| !v.is_empty()).is_versioned());
    /// // A store of another kind in between ends it.
    /// assert!(!prices.map_values_with(|_, v| v.len() as i64, Materialized::as_("lengths")).is_versioned());
    /// assert!(!builder.table::<String, String>("names").is_versioned());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_versioned(&self) -> bool {
        self.versioned.is_some()
    }

    /// The name of the node whose output this table is.
    ///
    /// ```
    /// use streams_core::{Materialized, StreamsBuilder};
    ///
    /// let builder = StreamsBuilder::new();
    /// // The store's name takes number 0, the source 1, the table's node 2.
    /// let users = builder.table::<String, String>("users");
    /// assert_eq!(users.node_name(), "KTABLE-SOURCE-0000000002");
    /// assert_eq!(users.store_name(), None); // materialized only if an operator needs it
    /// let emails = builder.table_with::<String, String>("emails", Materialized::as_("emails"));
    /// assert_eq!(emails.store_name(), Some("emails"));
    /// // A filter without a store of its own keeps none.
    /// assert_eq!(emails.filter(|_, e| e.contains('@')).store_name(), None);
    /// ```
    pub fn node_name(&self) -> &str {
        &self.node
    }

    /// The name of the store holding this table's rows, if it has one.
    ///
    /// The example of [`KTable::node_name`] shows it too.
    pub fn store_name(&self) -> Option<&str> {
        self.store.as_deref()
    }

    /// Names the node that the next operator on this table adds (Kafka's
    /// `Named.as(..)`). As in Kafka, the operator still takes a number of
    /// the counter, so that naming one node does not renumber the others.
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, String>("users")
    ///     .named("active-users")
    ///     .filter(|_, status| status == "active")
    ///     .to_stream()
    ///     .to("active");
    /// assert_eq!(
    ///     builder.build()?.node_names(),
    ///     [
    ///         "KSTREAM-SOURCE-0000000001",
    ///         "KTABLE-SOURCE-0000000002",
    ///         "active-users",
    ///         "KTABLE-TOSTREAM-0000000004",
    ///         "KSTREAM-SINK-0000000005",
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.next_name = Some(name.into());
        self
    }

    fn take_name_and_number(&mut self, prefix: &str) -> String {
        let generated = self.builder.new_name(prefix);
        self.next_name.take().unwrap_or(generated)
    }

    /// Makes this table (and its upstream) forward old values, as Kafka's
    /// `enableSendingOldValues`; a source table gets materialized for it.
    pub(crate) fn enable_sending_old_values(&self) {
        (self.enable_old)();
    }

    /// Adds a table operator below this table. `versioned` is the getter
    /// as of a time the result has without a store of its own (computed
    /// from this table's, when this one is versioned).
    #[allow(clippy::too_many_arguments)]
    fn add_table_op<VR: Clone + 'static, P, F>(
        &self,
        name: String,
        make: F,
        store: Option<(String, Materialized<K, VR>)>,
        value_serde: Option<SerdeRef<VR>>,
        getter: GetterSupplier<K, VR>,
        versioned: Option<VersionedGetterSupplier<K, VR>>,
    ) -> KTable<K, VR>
    where
        P: Processor<K, Change<V>, K, Change<VR>>,
        F: Fn(bool, Option<String>) -> P + 'static,
    {
        let send_old = Rc::new(Cell::new(false));
        let store_name = store.as_ref().map(|(n, _)| n.clone());
        let store_versioned = store.as_ref().and_then(|(_, m)| m.versioned);
        let parent = self.node.clone();
        let (flag, sname) = (send_old.clone(), store_name.clone());
        let key_serde = self.key_serde.clone();
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, Change<V>, K, Change<VR>, P, _>(
                &name,
                move || make(flag.get(), sname.clone()),
                &[&parent],
            )?;
            match (store, store_versioned) {
                (Some((store, m)), Some(params)) => {
                    t.add_state_store(
                        m.store_builder::<VersionedKeyValueStore<K, VR>>(&store, params, key_serde),
                        &[&name],
                    )?;
                }
                (Some((store, m)), None) => {
                    t.add_state_store(
                        m.store_builder::<TimestampedKeyValueStore<K, VR>>(&store, (), key_serde),
                        &[&name],
                    )?;
                }
                (None, _) => {}
            }
            Ok::<_, crate::StreamsError>(())
        });
        let upstream = self.enable_old.clone();
        let (getter, versioned) = match (&store_name, store_versioned) {
            (Some(s), Some(params)) => (
                versioned_store_getter::<K, VR>(s.clone()),
                Some(versioned_as_of_getter::<K, VR>(
                    s.clone(),
                    params.history_retention_ms,
                )),
            ),
            (Some(s), None) => (store_getter::<K, VR>(s.clone()), None),
            (None, _) => (getter, versioned),
        };
        let enable_old = Rc::new(move || {
            send_old.set(true);
            upstream();
        });
        KTable::new(self.builder.clone(), name, enable_old, getter)
            .with_serdes(self.key_serde.clone(), value_serde)
            .with_store(store_name)
            .with_versioned(versioned)
    }

    /// The store a table operation keeps its result in, and the value
    /// serde `materialized` gives: as Kafka's `filter` and `mapValues`, a
    /// `Materialized` with a name gives a store; one without (serdes only)
    /// takes a store number of the counter and gives no store.
    fn store_for<VR: 'static>(
        &self,
        prefix: &str,
        materialized: Option<Materialized<K, VR>>,
    ) -> (Option<(String, Materialized<K, VR>)>, Option<SerdeRef<VR>>) {
        match materialized {
            None => (None, None),
            Some(m) => {
                let serde = m.value_serde.clone();
                match m.name.clone() {
                    Some(name) => (Some((name, m)), serde),
                    None => {
                        self.builder.new_store_name(prefix);
                        (None, serde)
                    }
                }
            }
        }
    }

    fn filter_impl(
        mut self,
        predicate: impl Fn(&K, &V) -> bool + 'static,
        keep_when: bool,
        materialized: Option<Materialized<K, V>>,
    ) -> Self {
        let (store, given_serde) = self.store_for("KTABLE-FILTER-", materialized);
        let name = self.take_name_and_number("KTABLE-FILTER-");
        let predicate: Rc<dyn Fn(&K, &V) -> bool> = Rc::new(predicate);
        let p = predicate.clone();
        let parent_getter = self.getter.clone();
        let getter: GetterSupplier<K, V> = Rc::new(move || {
            let (stores, inner) = parent_getter();
            let p = p.clone();
            let g: ValueGetter<K, V> = Rc::new(move |lookup, key| {
                Ok(inner(lookup, key)?.filter(|(v, _)| p(key, v) == keep_when))
            });
            (stores, g)
        });
        let versioned = self.versioned.clone().map(|parent| {
            let p = predicate.clone();
            let supplier: VersionedGetterSupplier<K, V> = Rc::new(move || {
                let (stores, inner) = parent();
                let p = p.clone();
                let g: VersionedValueGetter<K, V> = Rc::new(move |lookup, key, as_of| {
                    Ok(inner(lookup, key, as_of)?.filter(|(v, _)| p(key, v) == keep_when))
                });
                (stores, g)
            });
            supplier
        });
        let versioned_semantics = self.versioned.is_some();
        let versioned_store = store.as_ref().is_some_and(|(_, m)| m.is_versioned());
        let vs = given_serde.or_else(|| self.value_serde.clone());
        self.add_table_op(
            name,
            move |send_old, store| TableFilter {
                predicate: predicate.clone(),
                keep_when,
                send_old,
                store,
                cache: Default::default(),
                versioned_store,
                versioned_semantics,
            },
            store,
            vs,
            getter,
            versioned,
        )
    }

    /// Keeps the rows for which `predicate` is true; the others are
    /// deleted downstream, Kafka's `KTable.filter`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let stock = builder.table::<String, i64>("stock");
    ///     stock.clone().filter(|_, n| *n > 0).to_stream().to("in-stock");
    ///     stock.filter_not(|_, n| *n > 0).to_stream().to("sold-out");
    /// });
    /// let stock_in = driver.input::<String, i64>("stock");
    /// let in_stock = driver.output::<String, i64>("in-stock");
    /// let sold_out = driver.output::<String, i64>("sold-out");
    /// stock_in.pipe_key_value("pen", 3);
    /// stock_in.pipe_key_value("pen", 0);
    /// // A row that does not pass is deleted downstream: a tombstone.
    /// assert_eq!(
    ///     in_stock.read_key_values_to_list(),
    ///     [KeyValue::pair("pen", 3), KeyValue::tombstone("pen")]
    /// );
    /// assert_eq!(
    ///     sold_out.read_key_values_to_list(),
    ///     [KeyValue::tombstone("pen"), KeyValue::pair("pen", 0)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn filter(self, predicate: impl Fn(&K, &V) -> bool + 'static) -> Self {
        self.filter_impl(predicate, true, None)
    }

    /// As [`KTable::filter`], keeping the result in a store when
    /// `materialized` has a name (Kafka's: a `Materialized` of serdes only
    /// takes a store number and builds no store).
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let stock = builder.table::<String, i64>("stock");
    ///     let _ = stock.clone().filter_with(|_, n| *n > 0, Materialized::as_("in-stock"));
    ///     let _ = stock.filter_not_with(|_, n| *n > 0, Materialized::as_("sold-out"));
    /// });
    /// let stock = driver.input::<String, i64>("stock");
    /// stock.pipe_key_values([("pen", 3), ("ink", 0), ("cup", 1)]);
    /// stock.pipe_key_value("cup", 0); // no longer in stock: its row moves
    /// let in_stock = driver.timestamped_key_value_store::<String, i64>("in-stock")?;
    /// assert_eq!(in_stock.to_map(), [("pen".to_owned(), 3)].into());
    /// let sold_out = driver.timestamped_key_value_store::<String, i64>("sold-out")?;
    /// assert_eq!(sold_out.to_map(), [("cup".to_owned(), 0), ("ink".to_owned(), 0)].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn filter_with(
        self,
        predicate: impl Fn(&K, &V) -> bool + 'static,
        materialized: Materialized<K, V>,
    ) -> Self {
        self.filter_impl(predicate, true, Some(materialized))
    }

    /// Keeps the rows for which `predicate` is false, Kafka's `filterNot`.
    ///
    /// The example of [`KTable::filter`](crate::dsl::KTable::filter) shows `filter_not` too.
    #[must_use]
    #[doc(alias = "filterNot")]
    pub fn filter_not(self, predicate: impl Fn(&K, &V) -> bool + 'static) -> Self {
        self.filter_impl(predicate, false, None)
    }

    /// As [`KTable::filter_not`], keeping the result in a store.
    ///
    /// The example of [`KTable::filter_with`] shows `filter_not_with` too.
    #[must_use]
    pub fn filter_not_with(
        self,
        predicate: impl Fn(&K, &V) -> bool + 'static,
        materialized: Materialized<K, V>,
    ) -> Self {
        self.filter_impl(predicate, false, Some(materialized))
    }

    fn map_values_impl<VR: Clone + 'static>(
        mut self,
        mapper: impl Fn(&K, &V) -> VR + 'static,
        materialized: Option<Materialized<K, VR>>,
    ) -> KTable<K, VR> {
        let (store, given_serde) = self.store_for("KTABLE-MAPVALUES-", materialized);
        let name = self.take_name_and_number("KTABLE-MAPVALUES-");
        let mapper: Rc<dyn Fn(&K, &V) -> VR> = Rc::new(mapper);
        let m = mapper.clone();
        let parent_getter = self.getter.clone();
        let getter: GetterSupplier<K, VR> = Rc::new(move || {
            let (stores, inner) = parent_getter();
            let m = m.clone();
            let g: ValueGetter<K, VR> =
                Rc::new(move |lookup, key| Ok(inner(lookup, key)?.map(|(v, ts)| (m(key, &v), ts))));
            (stores, g)
        });
        let versioned = self.versioned.clone().map(|parent| {
            let m = mapper.clone();
            let supplier: VersionedGetterSupplier<K, VR> = Rc::new(move || {
                let (stores, inner) = parent();
                let m = m.clone();
                let g: VersionedValueGetter<K, VR> = Rc::new(move |lookup, key, as_of| {
                    Ok(inner(lookup, key, as_of)?.map(|(v, ts)| (m(key, &v), ts)))
                });
                (stores, g)
            });
            supplier
        });
        let versioned_store = store.as_ref().is_some_and(|(_, m)| m.is_versioned());
        let vs = given_serde;
        self.add_table_op(
            name,
            move |send_old, store| TableMapValues {
                mapper: mapper.clone(),
                send_old,
                store,
                cache: Default::default(),
                versioned_store,
            },
            store,
            vs,
            getter,
            versioned,
        )
    }

    /// Maps each row's value, Kafka's `KTable.mapValues`.
    ///
    /// ```
    /// use streams_test::{TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("names")
    ///         .map_values(|_, name| name.len() as i64)
    ///         .to_stream()
    ///         .to("name-lengths");
    /// });
    /// let names = driver.input::<String, String>("names");
    /// let lengths = driver.output::<String, i64>("name-lengths");
    /// names.pipe_key_value_at("1", "Ann", 10);
    /// names.pipe_key_value_at("1", "Anna", 20);
    /// names.pipe_record(TestRecord::tombstone("1").at(30)); // a delete stays one
    /// assert_eq!(
    ///     lengths.read_records_to_list(),
    ///     [
    ///         TestRecord::key_value("1", 3).at(10),
    ///         TestRecord::key_value("1", 4).at(20),
    ///         TestRecord::tombstone("1").at(30),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "mapValues")]
    pub fn map_values<VR: Clone + 'static>(
        self,
        mapper: impl Fn(&K, &V) -> VR + 'static,
    ) -> KTable<K, VR> {
        self.map_values_impl(mapper, None)
    }

    /// As [`KTable::map_values`], keeping the result in a store (when
    /// `materialized` has a name; its serdes are the store's).
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .table::<String, String>("names")
    ///         .map_values_with(|_, name| name.len() as i64, Materialized::as_("name-lengths"))
    ///         .to_stream()
    ///         .to("lengths");
    /// });
    /// let names = driver.input::<String, String>("names");
    /// names.pipe_key_values([("1", "Ann"), ("2", "Bob")]);
    /// names.pipe_tombstone("2");
    /// assert_eq!(
    ///     driver.output::<String, i64>("lengths").read_key_values_to_list(),
    ///     [KeyValue::pair("1", 3), KeyValue::pair("2", 3), KeyValue::tombstone("2")]
    /// );
    /// let lengths = driver.timestamped_key_value_store::<String, i64>("name-lengths")?;
    /// assert_eq!(lengths.to_map(), [("1".to_owned(), 3)].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn map_values_with<VR: Clone + 'static>(
        self,
        mapper: impl Fn(&K, &V) -> VR + 'static,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR> {
        self.map_values_impl(mapper, Some(materialized))
    }

    /// The stream of this table's updates, Kafka's `toStream`: each
    /// update's new value, and a tombstone for each delete.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.table::<String, String>("users").to_stream().to("user-changes");
    /// });
    /// let users = driver.input::<String, String>("users");
    /// let changes = driver.output::<String, String>("user-changes");
    /// users.pipe_key_value("1", "Ann");
    /// users.pipe_tombstone("1");
    /// assert_eq!(changes.read_key_values_to_list(), [KeyValue::pair("1", "Ann"), KeyValue::tombstone("1")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "toStream")]
    pub fn to_stream(mut self) -> KStream<K, V> {
        let name = self.take_name_and_number("KTABLE-TOSTREAM-");
        let parent = self.node.clone();
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, Change<V>, K, V, TableToStream, _>(
                &name,
                || TableToStream,
                &[&parent],
            )
        });
        KStream::new(
            self.builder.clone(),
            name,
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }
}

/// Builds the source table of `builder.table(..)` (and of `to_table` and
/// a foreign-key join's result): a `KTableSource` processor below
/// `source`, with its store when materialized, a versioned one when
/// `materialized` says so (then always materialized).
pub(crate) fn source_table<K: Ord + Clone + 'static, V: Clone + 'static>(
    builder: &StreamsBuilder,
    source: &str,
    processor: String,
    store: String,
    materialized: Materialized<K, V>,
    queryable: bool,
) -> KTable<K, V> {
    let versioned = materialized.versioned;
    let queryable = queryable || versioned.is_some();
    let send_old = Rc::new(Cell::new(false));
    let store_slot: Rc<RefCell<Option<String>>> = Rc::new(RefCell::new(None));
    let (flag, slot) = (send_old.clone(), store_slot.clone());
    let parent = source.to_owned();
    let pname = processor.clone();
    builder.with_topology(|t| {
        t.add_typed_processor::<K, V, K, Change<V>, _, _>(
            &pname,
            move || crate::dsl::table_processors::TableSource {
                store: slot.borrow().clone(),
                send_old: flag.get(),
                cache: Default::default(),
                versioned: versioned.is_some(),
            },
            &[&parent],
        )
    });
    let materialize: Rc<dyn Fn()> = {
        let (builder, slot, store, processor) = (
            builder.clone(),
            store_slot.clone(),
            store.clone(),
            processor.clone(),
        );
        let m = materialized.clone();
        Rc::new(move || {
            if slot.borrow().is_some() {
                return;
            }
            *slot.borrow_mut() = Some(store.clone());
            let m = m.clone();
            builder.with_topology(|t| {
                match m.versioned {
                    Some(params) => t.add_state_store(
                        m.store_builder::<VersionedKeyValueStore<K, V>>(&store, params, None),
                        &[&processor],
                    ),
                    None => t.add_state_store(
                        m.store_builder::<TimestampedKeyValueStore<K, V>>(&store, (), None),
                        &[&processor],
                    ),
                }
                .map(|_| ())
            });
        })
    };
    if queryable {
        materialize();
    }
    let getter_store = store.clone();
    let m2 = materialize.clone();
    let getter: GetterSupplier<K, V> = Rc::new(move || {
        m2();
        match versioned {
            Some(_) => versioned_store_getter::<K, V>(getter_store.clone())(),
            None => store_getter::<K, V>(getter_store.clone())(),
        }
    });
    let versioned_getter = versioned
        .map(|params| versioned_as_of_getter::<K, V>(store.clone(), params.history_retention_ms));
    let enable_old = Rc::new(move || {
        send_old.set(true);
        materialize();
    });
    KTable::new(builder.clone(), processor, enable_old, getter)
        .with_serdes(materialized.key_serde, materialized.value_serde)
        .with_store(if queryable { Some(store) } else { None })
        .with_versioned(versioned_getter)
}
