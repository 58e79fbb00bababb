//! `GlobalKTable`: a table replicated whole to every instance, and the
//! stream joins that look rows up in it by a key computed from each
//! record, Kafka's `GlobalKTable` and `KStreamGlobalKTableJoin`.
//!
//! A global table's topic is read by its own source outside the
//! sub-topologies: the test driver applies each record to the store at
//! once (it is not queued and does not move stream time), a tombstone
//! deletes the row, and nothing is forwarded, so a global table update
//! never produces a join result. Streams look rows up with a key selector
//! `Fn(Option<&K>, &V) -> KG` (or `-> Option<KG>`, where `None` cannot
//! join), so the stream needs no repartition.
//!
//! ```
//! use streams_core::Materialized;
//! use streams_test::{KeyValue, example};
//!
//! let driver = example(|builder| {
//!     let countries = builder.global_table_with::<String, String>("countries", Materialized::as_("countries"));
//!     builder
//!         .stream::<String, String>("visits") // user -> country code
//!         .join_global(&countries, |_, code| code.clone(), |code, name| format!("{code}: {name}"))
//!         .to("visits-by-country");
//! });
//! let countries_in = driver.input::<String, String>("countries");
//! let visits = driver.input::<String, String>("visits");
//! let out = driver.output::<String, String>("visits-by-country");
//! countries_in.pipe_key_value("NL", "Netherlands");
//! visits.pipe_key_value("ann", "NL");
//! visits.pipe_key_value("bob", "FR"); // no row: an inner join drops it
//! assert_eq!(out.read_key_values_to_list(), [KeyValue::pair("ann", "NL: Netherlands")]);
//! assert_eq!(driver.stream_time(), 0);
//! let store = driver.timestamped_key_value_store::<String, String>("countries")?;
//! assert_eq!(store.get(&"NL".to_string()).map(|v| v.value), Some("Netherlands".to_string()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::dsl::join_processors::{Joiner, StreamTableJoin};
use crate::dsl::ktable::{GetterSupplier, store_getter};
use crate::dsl::table_processors::TableSource;
use crate::dsl::{Consumed, KStream, Materialized, StreamsBuilder};
use crate::error::StreamsError;
use crate::processor::node::{ErasedNode, ProcessorNode};
use crate::record::Change;
use crate::state::{BuiltInStoreBuilder, TimestampedKeyValueStore};
use crate::topology::GlobalStoreParts;

/// A table every instance holds whole, Kafka's `GlobalKTable<K, V>`. Made
/// by [`StreamsBuilder::global_table`]; streams join it with
/// [`KStream::join_global`] and [`KStream::left_join_global`]. Records
/// of its topic fill the store at once, do not move stream time and
/// produce no join results; a tombstone deletes the row. See
/// [the DSL's join section](crate::dsl#joins).
///
/// See the examples of
/// [`StreamsBuilder::global_table`](crate::dsl::StreamsBuilder::global_table)
/// and [`KStream::join_global`](crate::dsl::KStream::join_global).
pub struct GlobalKTable<K, V> {
    store: String,
    queryable: bool,
    getter: GetterSupplier<K, V>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for GlobalKTable<K, V> {
    fn clone(&self) -> Self {
        GlobalKTable {
            store: self.store.clone(),
            queryable: self.queryable,
            getter: self.getter.clone(),
            _types: PhantomData,
        }
    }
}

impl<K, V> fmt::Debug for GlobalKTable<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalKTable")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl<K, V> GlobalKTable<K, V> {
    /// The name of the store given with [`Materialized::as_`], Kafka's
    /// `queryableStoreName()`; `None` when the name was generated.
    ///
    /// ```
    /// use streams_core::{Materialized, StreamsBuilder};
    ///
    /// let builder = StreamsBuilder::new();
    /// let rates = builder.global_table::<String, String>("rates");
    /// assert_eq!((rates.queryable_store_name(), rates.store_name()), (None, "rates-STATE-STORE-0000000000"));
    /// let countries = builder.global_table_with::<String, String>("countries", Materialized::as_("countries"));
    /// assert_eq!((countries.queryable_store_name(), countries.store_name()), (Some("countries"), "countries"));
    /// ```
    #[doc(alias = "queryableStoreName")]
    pub fn queryable_store_name(&self) -> Option<&str> {
        self.queryable.then_some(self.store.as_str())
    }

    /// The name of the store holding the table, given or generated
    /// (`<topic>-STATE-STORE-<n>`).
    ///
    /// The example of [`GlobalKTable::queryable_store_name`] shows it too.
    pub fn store_name(&self) -> &str {
        &self.store
    }
}

/// Builds `builder.global_table(..)`: a store named by `materialized` or
/// `<topic>-STATE-STORE-<n>`, then a source (`KSTREAM-SOURCE-`, or
/// `<name>-table-source`) and a processor (`KTABLE-SOURCE-`, or `<name>`)
/// that puts and deletes rows, added as a global store.
pub(crate) fn global_table<K: Ord + Clone + 'static, V: Clone + 'static>(
    builder: &StreamsBuilder,
    topic: &str,
    consumed: Consumed<K, V>,
    materialized: Materialized<K, V>,
) -> GlobalKTable<K, V> {
    if materialized.is_versioned() {
        // Kafka's `InternalStreamsBuilder.globalTable`.
        builder.fail(StreamsError::VersionedNotSupported {
            what: format!("global table of `{topic}`"),
            reason: "GlobalTables cannot be versioned.",
        });
    }
    let queryable = materialized.name.is_some();
    let store = match &materialized.name {
        Some(n) => n.clone(),
        None => builder.new_store_name(&format!("{topic}-")),
    };
    // Both names take a number, given or not, as in Kafka.
    let source_generated = builder.new_name("KSTREAM-SOURCE-");
    let processor_generated = builder.new_name("KTABLE-SOURCE-");
    let (source, processor) = match &consumed.name {
        Some(n) => (format!("{n}-table-source"), n.clone()),
        None => (source_generated, processor_generated),
    };
    // The serdes of `consumed` win, as in Kafka.
    let key_serde = consumed.key_serde.clone().or(materialized.key_serde);
    let value_serde = consumed.value_serde.clone().or(materialized.value_serde);
    // A global table forwards nothing, so it keeps no record cache (the
    // builder's default); its topic is its changelog.
    let store_builder = BuiltInStoreBuilder::<TimestampedKeyValueStore<K, V>>::new(
        store.clone(),
        (),
        key_serde.clone(),
        value_serde.clone(),
    )
    .with_logging_disabled();
    let store_name = store.clone();
    let processor_factory: crate::topology::NodeFactory = Rc::new(move |_config, node: &str| {
        let table = TableSource {
            store: Some(store_name.clone()),
            send_old: false,
            cache: Default::default(),
            versioned: false,
        };
        Ok(
            Box::new(ProcessorNode::<TableSource, K, V, K, Change<V>>::new(
                table, node,
            )) as Box<dyn ErasedNode>,
        )
    });
    let source_factory: crate::topology::NodeFactory = {
        let (ks, vs) = (consumed.key_serde, consumed.value_serde);
        Rc::new(move |config, node: &str| {
            Ok(Box::new(crate::topology::GlobalSourceNode::<K, V> {
                key: crate::config::resolve_serde(
                    &ks,
                    config,
                    node,
                    crate::error::RecordPart::Key,
                )?,
                value: crate::config::resolve_serde(
                    &vs,
                    config,
                    node,
                    crate::error::RecordPart::Value,
                )?,
            }) as Box<dyn ErasedNode>)
        })
    };
    builder.with_topology(|t| {
        t.add_global_store_parts(GlobalStoreParts {
            source: &source,
            topic,
            processor: &processor,
            store: Rc::new(store_builder),
            source_factory,
            processor_factory,
        })
    });
    GlobalKTable {
        store: store.clone(),
        queryable,
        getter: store_getter::<K, V>(store),
        _types: PhantomData,
    }
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    fn global_join<KG, VG, VR, KO>(
        mut self,
        table: &GlobalKTable<KG, VG>,
        key_selector: impl Fn(Option<&K>, &V) -> KO + 'static,
        joiner: Joiner<V, VG, VR>,
        left: bool,
    ) -> KStream<K, VR>
    where
        KG: 'static,
        VG: 'static,
        VR: Clone + 'static,
        KO: Into<Option<KG>>,
    {
        // Kafka names both joins `KSTREAM-LEFTJOIN-`.
        let name = self.take_name_and_number("KSTREAM-LEFTJOIN-");
        let (_, getter) = (table.getter)();
        let key_of: Rc<dyn Fn(Option<&K>, &V) -> Option<KG>> =
            Rc::new(move |k, v| key_selector(k, v).into());
        if left {
            // Kafka 3.7+: a left join sees records without a key.
            self.builder().with_topology(|t| {
                t.mark_null_key_relaxed_join(&name);
                Ok::<_, StreamsError>(())
            });
        }
        // The result keeps the stream's key, and so its repartition mark
        // (Kafka's `globalTableJoin`), as `add_processor` carries it.
        self.add_processor(
            name,
            move || StreamTableJoin {
                key_of: key_of.clone(),
                getter: getter.clone(),
                versioned: None,
                joiner: joiner.clone(),
                left,
                buffer: None,
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Joins each record with the row of `table` whose key `key_selector`
    /// computes from the record, Kafka's `join(GlobalKTable, ..)`. A record
    /// without a value, whose selector gives `None`, or that finds no row
    /// is dropped (the first two are counted as dropped records); updates
    /// of the table produce nothing. The node is `KSTREAM-LEFTJOIN-<n>`,
    /// as in Kafka.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let products = builder.global_table::<String, String>("products");
    ///     let orders = builder.stream::<String, String>("orders"); // order id -> product id
    ///     orders.clone().join_global(&products, |_, id| id.clone(), |_, name| name.clone()).to("named");
    ///     orders
    ///         .left_join_global(&products, |_, id| id.clone(), |id, name| {
    ///             name.cloned().unwrap_or(format!("#{id}"))
    ///         })
    ///         .to("all-named");
    /// });
    /// let products_in = driver.input::<String, String>("products");
    /// let orders_in = driver.input::<String, String>("orders");
    /// let named = driver.output::<String, String>("named");
    /// let all_named = driver.output::<String, String>("all-named");
    /// products_in.pipe_key_value("p1", "pen");
    /// orders_in.pipe_key_value("o1", "p1");
    /// orders_in.pipe_key_value("o2", "p2"); // no such product
    /// assert_eq!(named.read_key_values_to_list(), [KeyValue::pair("o1", "pen")]);
    /// assert_eq!(
    ///     all_named.read_key_values_to_list(),
    ///     [KeyValue::pair("o1", "pen"), KeyValue::pair("o2", "#p2")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "join")]
    #[doc(alias = "GlobalKTable")]
    pub fn join_global<KG, VG, VR, KO>(
        self,
        table: &GlobalKTable<KG, VG>,
        key_selector: impl Fn(Option<&K>, &V) -> KO + 'static,
        joiner: impl Fn(&V, &VG) -> VR + 'static,
    ) -> KStream<K, VR>
    where
        KG: 'static,
        VG: 'static,
        VR: Clone + 'static,
        KO: Into<Option<KG>>,
    {
        let joiner: Joiner<V, VG, VR> = Rc::new(move |v, g| v.zip(g).map(|(v, g)| joiner(v, g)));
        self.global_join(table, key_selector, joiner, false)
    }

    /// As [`KStream::join_global`], but a record that finds no row is
    /// joined with `None`, Kafka's `leftJoin(GlobalKTable, ..)`. A record
    /// with a key whose selector gives `None` is dropped; a record without
    /// a key is joined even then (with `None`).
    ///
    /// The example of [`KStream::join_global`](crate::dsl::KStream::join_global)
    /// shows this join too.
    #[doc(alias = "leftJoin")]
    pub fn left_join_global<KG, VG, VR, KO>(
        self,
        table: &GlobalKTable<KG, VG>,
        key_selector: impl Fn(Option<&K>, &V) -> KO + 'static,
        joiner: impl Fn(&V, Option<&VG>) -> VR + 'static,
    ) -> KStream<K, VR>
    where
        KG: 'static,
        VG: 'static,
        VR: Clone + 'static,
        KO: Into<Option<KG>>,
    {
        let joiner: Joiner<V, VG, VR> = Rc::new(move |v, g| v.map(|v| joiner(v, g)));
        self.global_join(table, key_selector, joiner, true)
    }
}
