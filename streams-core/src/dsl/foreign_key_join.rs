//! Foreign-key table-table joins (KIP-213): [`KTable::join_on_foreign_key`]
//! and [`KTable::left_join_on_foreign_key`], which join each row of a
//! table with the row of another table whose key a foreign-key extractor
//! finds in it, with Kafka 4.4's processors, node, store and topic names.
//!
//! How it works, as in Kafka: each update of the primary (this) table
//! sends a *subscription* (its key, the instruction, the murmur3 hash of
//! its value) keyed by the foreign key through
//! `<app>-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-<n>-topic`, which is
//! co-partitioned with the foreign table. There the subscription is kept
//! in the store `KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-<n>` (keys:
//! foreign key length, foreign key, primary key) and answered with the
//! foreign row; an update of the foreign table answers every subscription
//! to its key. Answers go back through
//! `<app>-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-<n>-topic` to the primary
//! row's partition, where one whose hash is not the hash of the row's
//! current value is stale and dropped (counted in `dropped_records`); the
//! others are joined. In the `TopologyTestDriver` both topics are topics
//! records pass through, listed by `produced_topic_names()`.
//!
//! - A row whose foreign key changes unsubscribes from the old one (its
//!   result comes from the new one: the joined value, or for an inner join
//!   a tombstone when the new foreign row does not exist).
//! - A deleted primary row gives a tombstone; a deleted foreign row gives a
//!   tombstone for every row that joined it (inner) or the rows joined
//!   with `None` (left).
//! - An extractor that returns `None` (Kafka's null foreign key): an inner
//!   join drops the row and counts it in `dropped_records` (and deletes an
//!   earlier result); a left join joins it with `None`.
//!
//! Kafka's `TableJoined` ([`TableJoined`]) names every node, topic and the
//! subscription store after one name and gives the partitioners of both
//! topics; `Materialized` keeps the result in a store.

use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use crate::dsl::foreign_key_join_processors::{
    FkJoiner, FkTopics, ForeignTableJoin, Received, ResponseJoin, ResponseRecord,
    ResponseRecordSerde, SubscriptionJoin, SubscriptionReceive, SubscriptionSend,
    primary_partition_of, subscription_value_serde,
};
use crate::dsl::ktable::source_table;
use crate::dsl::{KTable, Materialized};
use crate::processor::StreamPartitioner;
use crate::processor::partitioner::PartitionerRef;
use crate::record::Change;
use crate::serde::SerdeRef;
use crate::state::TimestampedKeyValueStore;
use crate::topology::{NodeKind, SinkTopic, TopicName};

/// How a foreign-key join finds the foreign key in a row, Kafka's
/// `Function<V, KO>` or, since KIP-1104, `BiFunction<K, V, KO>`. `None`
/// is Kafka's null foreign key.
///
/// ```
/// use streams_core::dsl::ForeignKeyExtractor;
///
/// let by_value = ForeignKeyExtractor::<String, String, String>::from_value(|order| {
///     order.split_once('/').map(|(product, _)| product.to_owned())
/// });
/// let by_key = ForeignKeyExtractor::<String, String, String>::from_key_and_value(|id, _| {
///     id.strip_prefix("order-").map(str::to_owned)
/// });
/// assert_eq!(by_value.extract(&"o1".into(), &"p1/red".into()), Some("p1".to_owned()));
/// assert_eq!(by_key.extract(&"order-7".into(), &"x".into()), Some("7".to_owned()));
/// ```
pub struct ForeignKeyExtractor<K, V, KO> {
    f: Rc<dyn Fn(&K, &V) -> Option<KO>>,
}

impl<K, V, KO> Clone for ForeignKeyExtractor<K, V, KO> {
    fn clone(&self) -> Self {
        ForeignKeyExtractor { f: self.f.clone() }
    }
}

impl<K, V, KO> fmt::Debug for ForeignKeyExtractor<K, V, KO> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForeignKeyExtractor")
            .finish_non_exhaustive()
    }
}

impl<K: 'static, V: 'static, KO: 'static> ForeignKeyExtractor<K, V, KO> {
    /// The foreign key from the row's value (Kafka's `Function<V, KO>`).
    pub fn from_value(f: impl Fn(&V) -> Option<KO> + 'static) -> Self {
        ForeignKeyExtractor {
            f: Rc::new(move |_, v| f(v)),
        }
    }

    /// The foreign key from the row's key and value (KIP-1104's
    /// `BiFunction<K, V, KO>`).
    pub fn from_key_and_value(f: impl Fn(&K, &V) -> Option<KO> + 'static) -> Self {
        ForeignKeyExtractor { f: Rc::new(f) }
    }

    /// The foreign key of the row `key`, `value`.
    pub fn extract(&self, key: &K, value: &V) -> Option<KO> {
        (self.f)(key, value)
    }
}

/// Options of a foreign-key join, Kafka's `TableJoined`: a name for its
/// nodes, topics and subscription store (`<name>-subscription-registration-topic`,
/// `<name>-subscription-store`, `<name>-result`, ...), and the partitioners
/// of its two internal topics.
///
/// `partitioner` partitions the primary table's topic (the response topic
/// is partitioned by it too: set it when the primary table was written
/// with a custom partitioner); `other_partitioner` partitions the foreign
/// table's topic (and the subscription topic). Both see the key only
/// (their value is always `None`) and must choose one partition. Without
/// them the subscription topic is partitioned by the foreign key's bytes
/// and a response goes back to the partition of the primary record that
/// subscribed.
///
/// ```
/// use streams_core::dsl::TableJoined;
///
/// let by_length = |_topic: &str, key: Option<&String>, _: Option<&()>, n: i32| key.map(|k| (k.len() as i32) % n);
/// let joined = TableJoined::<String, String>::as_("orders-products")
///     .with_partitioner(by_length)
///     .with_other_partitioner(by_length);
/// assert_eq!(joined.name(), Some("orders-products"));
/// // The same, partitioners first:
/// let joined = TableJoined::<String, String>::with(by_length, by_length).with_name("orders-products");
/// assert_eq!(joined.name(), Some("orders-products"));
/// ```
///
/// The example of [`KTable::join_on_foreign_key_with`] names a join.
pub struct TableJoined<K, KO> {
    name: Option<String>,
    partitioner: Option<PartitionerRef<K, ()>>,
    other_partitioner: Option<PartitionerRef<KO, ()>>,
}

impl<K, KO> Default for TableJoined<K, KO> {
    fn default() -> Self {
        TableJoined {
            name: None,
            partitioner: None,
            other_partitioner: None,
        }
    }
}

impl<K, KO> Clone for TableJoined<K, KO> {
    fn clone(&self) -> Self {
        TableJoined {
            name: self.name.clone(),
            partitioner: self.partitioner.clone(),
            other_partitioner: self.other_partitioner.clone(),
        }
    }
}

impl<K, KO> fmt::Debug for TableJoined<K, KO> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableJoined")
            .field("name", &self.name)
            .field("partitioner", &self.partitioner.is_some())
            .field("other_partitioner", &self.other_partitioner.is_some())
            .finish()
    }
}

impl<K: 'static, KO: 'static> TableJoined<K, KO> {
    /// With these partitioners of the primary and the foreign table's
    /// topics (Kafka's `TableJoined.with`).
    pub fn with(
        partitioner: impl StreamPartitioner<K, ()>,
        other_partitioner: impl StreamPartitioner<KO, ()>,
    ) -> Self {
        TableJoined::default()
            .with_partitioner(partitioner)
            .with_other_partitioner(other_partitioner)
    }

    /// With this name (Kafka's `TableJoined.as`).
    pub fn as_(name: impl Into<String>) -> Self {
        TableJoined::default().with_name(name)
    }

    /// Sets the name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the partitioner of the primary table's topic.
    #[must_use]
    pub fn with_partitioner(mut self, partitioner: impl StreamPartitioner<K, ()>) -> Self {
        self.partitioner = Some(Rc::new(partitioner));
        self
    }

    /// Sets the partitioner of the foreign table's topic.
    #[must_use]
    pub fn with_other_partitioner(mut self, partitioner: impl StreamPartitioner<KO, ()>) -> Self {
        self.other_partitioner = Some(Rc::new(partitioner));
        self
    }

    /// The name, if one was given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// Kafka's `NamedInternal.suffixWithOrElseGet`: the given name with a
/// suffix, or a generated one; a number of the counter is taken either way.
fn suffixed(
    builder: &crate::dsl::StreamsBuilder,
    given: &Option<String>,
    suffix: &str,
    prefix: &str,
) -> String {
    let generated = builder.new_name(prefix);
    match given {
        Some(n) => format!("{n}{suffix}"),
        None => generated,
    }
}

const REGISTRATION: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-";
const RESPONSE: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-";
const PROCESSOR: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-";
const RESOLVER: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-";
const OUTPUT: &str = "KTABLE-FK-JOIN-OUTPUT-";
const STORE: &str = "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-";
const SINK: &str = "KTABLE-SINK-";
const SOURCE: &str = "KTABLE-SOURCE-";

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    /// Kafka's `doJoinOnForeignKey`.
    fn foreign_key_join<KO, VO, VR>(
        mut self,
        other: &KTable<KO, VO>,
        extractor: ForeignKeyExtractor<K, V, KO>,
        joiner: FkJoiner<V, VO, VR>,
        table_joined: TableJoined<K, KO>,
        materialized: Materialized<K, VR>,
        left: bool,
    ) -> KTable<K, VR>
    where
        KO: Ord + Clone + 'static,
        VO: Clone + 'static,
        VR: Clone + 'static,
    {
        let builder = self.builder.clone();
        // Old values of both sides: the foreign side's are Kafka's
        // optimization, the primary side's say which foreign key a row
        // leaves. A source table is materialized for them.
        other.enable_sending_old_values();
        self.enable_sending_old_values();
        let given = table_joined.name.clone().or(self.next_name.take());
        let name = |suffix: &str, prefix: &str| suffixed(&builder, &given, suffix, prefix);
        let subscription_topic =
            format!("{}-topic", name("-subscription-registration", REGISTRATION));
        let send = name("-subscription-registration-processor", REGISTRATION);
        let sub_sink = name("-subscription-registration-sink", SINK);
        let sub_source = name("-subscription-registration-source", SOURCE);
        let store = name("-subscription-store", STORE);
        let receive = name("-subscription-receive", PROCESSOR);
        let join_foreign = name("-subscription-join-foreign", PROCESSOR);
        let foreign_join = name("-foreign-join-subscription", PROCESSOR);
        let response_topic = format!("{}-topic", name("-subscription-response", RESPONSE));
        let resp_sink = name("-subscription-response-sink", SINK);
        let resp_source = name("-subscription-response-source", SOURCE);
        let resolver = name("-subscription-response-resolver", RESOLVER);
        let result = name("-result", OUTPUT);
        let queryable = materialized.name.is_some();
        let result_store = match &materialized.name {
            Some(n) => n.clone(),
            None => builder.new_store_name(OUTPUT),
        };

        let topics = FkTopics {
            subscription: subscription_topic.clone(),
            response: response_topic.clone(),
        };
        let (pk_serde, value_serde) = (self.key_serde.clone(), self.value_serde.clone());
        let (fk_serde, vo_serde) = (other.key_serde.clone(), other.value_serde.clone());
        let (foreign_stores, foreign_getter) = (other.getter)();
        let (primary_stores, primary_getter) = (self.getter)();
        let sub_partitioner: Option<PartitionerRef<KO, Vec<u8>>> =
            table_joined.other_partitioner.clone().map(|p| {
                Rc::new(MultiPartitioner(Rc::new(
                    move |topic: &str, key: Option<&KO>, _: Option<&Vec<u8>>, n: i32| {
                        p.partitions(topic, key, None, n)
                    },
                ))) as PartitionerRef<KO, Vec<u8>>
            });
        let resp_partitioner: PartitionerRef<K, ResponseRecord> =
            match table_joined.partitioner.clone() {
                Some(p) => Rc::new(MultiPartitioner(Rc::new(
                    move |topic: &str, key: Option<&K>, _: Option<&ResponseRecord>, n: i32| {
                        p.partitions(topic, key, None, n)
                    },
                ))),
                None => Rc::new(primary_partition_of::<K>),
            };
        let (this_parent, other_parent) = (self.node.clone(), other.node.clone());
        let extractor = extractor.f;
        builder.with_topology(|t| {
            let (t1, t2, t3, t4, t5) = (
                topics.clone(),
                topics.clone(),
                topics.clone(),
                topics.clone(),
                topics.clone(),
            );
            let (fk1, pk1, vs1) = (fk_serde.clone(), pk_serde.clone(), value_serde.clone());
            t.add_typed_processor::<K, Change<V>, KO, Vec<u8>, _, _>(
                &send,
                move || {
                    SubscriptionSend::new(
                        extractor.clone(),
                        left,
                        (fk1.clone(), pk1.clone(), vs1.clone()),
                        t1.clone(),
                    )
                },
                &[&this_parent],
            )?;
            t.add_typed_sink::<KO, Vec<u8>>(
                &sub_sink,
                SinkTopic::Fixed(TopicName::internal(subscription_topic.clone())),
                fk_serde.clone(),
                Some(subscription_value_serde()),
                sub_partitioner,
                &[&send],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(subscription_topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<KO, Vec<u8>>(
                &sub_source,
                kind,
                fk_serde.clone(),
                Some(subscription_value_serde()),
            )?;
            let (fk2, pk2, store2) = (fk_serde.clone(), pk_serde.clone(), store.clone());
            t.add_typed_processor::<KO, Vec<u8>, KO, Received<K>, _, _>(
                &receive,
                move || SubscriptionReceive {
                    store: store2.clone(),
                    foreign_key_serde: fk2.clone(),
                    primary_key_serde: pk2.clone(),
                    topics: t2.clone(),
                    resolved: None,
                },
                &[&sub_source],
            )?;
            let subscription_store = Materialized::<Vec<u8>, Vec<u8>>::default()
                .with_caching_disabled()
                .store_builder::<TimestampedKeyValueStore<Vec<u8>, Vec<u8>>>(&store, (), None);
            t.add_state_store(subscription_store, &[&receive])?;
            let (getter, vo1) = (foreign_getter.clone(), vo_serde.clone());
            t.add_typed_processor::<KO, Received<K>, K, ResponseRecord, _, _>(
                &join_foreign,
                move || SubscriptionJoin {
                    getter: getter.clone(),
                    foreign_value_serde: vo1.clone(),
                    topics: t3.clone(),
                    resolved: None,
                    _primary: PhantomData,
                },
                &[&receive],
            )?;
            let stores: Vec<&str> = foreign_stores.iter().map(String::as_str).collect();
            t.connect_processor_and_state_stores(&join_foreign, &stores)?;
            let (fk3, pk3, vo2, store3) = (
                fk_serde.clone(),
                pk_serde.clone(),
                vo_serde.clone(),
                store.clone(),
            );
            t.add_typed_processor::<KO, Change<VO>, K, ResponseRecord, _, _>(
                &foreign_join,
                move || ForeignTableJoin {
                    store: store3.clone(),
                    foreign_key_serde: fk3.clone(),
                    primary_key_serde: pk3.clone(),
                    foreign_value_serde: vo2.clone(),
                    topics: t4.clone(),
                    resolved: None,
                },
                &[&other_parent],
            )?;
            t.connect_processor_and_state_stores(&foreign_join, &[&store])?;
            let response_serde: SerdeRef<ResponseRecord> = Arc::new(ResponseRecordSerde);
            t.add_typed_sink::<K, ResponseRecord>(
                &resp_sink,
                SinkTopic::Fixed(TopicName::internal(response_topic.clone())),
                pk_serde.clone(),
                Some(response_serde.clone()),
                Some(resp_partitioner),
                &[&join_foreign, &foreign_join],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(response_topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<K, ResponseRecord>(
                &resp_source,
                kind,
                pk_serde.clone(),
                Some(response_serde),
            )?;
            // Kafka's two co-partition groups: the subscription topic with
            // the foreign table's sources, the response topic with the
            // primary table's.
            t.copartition(&[&other_parent, &sub_source]);
            t.copartition(&[&this_parent, &resp_source]);
            let (getter, vs2, vo3) = (
                primary_getter.clone(),
                value_serde.clone(),
                vo_serde.clone(),
            );
            t.add_typed_processor::<K, ResponseRecord, K, VR, _, _>(
                &resolver,
                move || ResponseJoin {
                    getter: getter.clone(),
                    value_serde: vs2.clone(),
                    foreign_value_serde: vo3.clone(),
                    joiner: joiner.clone(),
                    left,
                    topics: t5.clone(),
                    resolved: None,
                },
                &[&resp_source],
            )?;
            let stores: Vec<&str> = primary_stores.iter().map(String::as_str).collect();
            t.connect_processor_and_state_stores(&resolver, &stores)
                .map(|_| ())
        });
        let materialized = Materialized {
            key_serde: materialized.key_serde.or(self.key_serde.clone()),
            ..materialized
        };
        source_table(
            &builder,
            &resolver,
            result,
            result_store,
            materialized,
            queryable,
        )
    }

    /// Joins each row of this table with the row of `other` whose key
    /// `extractor` finds in it, Kafka's `KTable.join(other,
    /// foreignKeyExtractor, joiner)` (KIP-213): a result row, under this
    /// table's key, wherever both rows exist. See [the module's
    /// notes](crate::dsl#foreign-key-joins) for the internal topics, the
    /// stale-response check and what deletes give.
    ///
    /// A row whose extractor gives `None` is dropped and counted in the
    /// task's `dropped_records` (a row that had a result loses it).
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let orders = builder.table::<String, String>("orders"); // id -> "product/qty"
    ///     let products = builder.table::<String, String>("products"); // id -> name
    ///     orders
    ///         .join_on_foreign_key(
    ///             &products,
    ///             |order| order.split_once('/').map(|(product, _)| product.to_owned()),
    ///             |order, name| format!("{order} of {name}"),
    ///         )
    ///         .to_stream()
    ///         .to("orders-with-products");
    /// });
    /// let orders = driver.input::<String, String>("orders");
    /// let products = driver.input::<String, String>("products");
    /// let out = driver.output::<String, String>("orders-with-products");
    /// products.pipe_key_value("p1", "pen");
    /// orders.pipe_key_value("o1", "p1/2");
    /// orders.pipe_key_value("o2", "p2/1"); // no product p2 yet
    /// products.pipe_key_value("p2", "ink"); // o2 finds it
    /// orders.pipe_key_value("o1", "p2/5"); // o1 moves to p2
    /// products.pipe_tombstone("p2"); // both lose their product
    /// orders.pipe_key_value("o3", "none"); // no foreign key: dropped
    /// assert_eq!(
    ///     out.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("o1", "p1/2 of pen"),
    ///         KeyValue::pair("o2", "p2/1 of ink"),
    ///         KeyValue::pair("o1", "p2/5 of ink"),
    ///         KeyValue::tombstone("o1"),
    ///         KeyValue::tombstone("o2"),
    ///     ]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1);
    /// ```
    pub fn join_on_foreign_key<KO, VO, VR>(
        self,
        other: &KTable<KO, VO>,
        extractor: impl Fn(&V) -> Option<KO> + 'static,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
    ) -> KTable<K, VR>
    where
        KO: Ord + Clone + 'static,
        VO: Clone + 'static,
        VR: Clone + 'static,
    {
        self.join_on_foreign_key_with(
            other,
            ForeignKeyExtractor::from_value(extractor),
            joiner,
            TableJoined::default(),
            Materialized::default(),
        )
    }

    /// As [`KTable::join_on_foreign_key`], with an extractor that may read
    /// the key too (KIP-1104), names and partitioners from `table_joined`,
    /// and the result kept as `materialized` says (Kafka's
    /// `join(other, extractor, joiner, TableJoined, Materialized)`).
    ///
    /// ```
    /// use streams_core::dsl::{ForeignKeyExtractor, Materialized, TableJoined};
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let orders = builder.table::<String, String>("orders"); // "customer:order" -> amount
    ///     let customers = builder.table::<String, String>("customers");
    ///     orders.join_on_foreign_key_with(
    ///         &customers,
    ///         ForeignKeyExtractor::from_key_and_value(|id: &String, _| {
    ///             id.split_once(':').map(|(customer, _)| customer.to_owned())
    ///         }),
    ///         |amount, name| format!("{name} paid {amount}"),
    ///         TableJoined::as_("by-customer"),
    ///         Materialized::as_("paid"),
    ///     );
    /// });
    /// driver.input::<String, String>("customers").pipe_key_value("c1", "Ann");
    /// driver.input::<String, String>("orders").pipe_key_value("c1:o1", "12");
    /// let paid = driver.timestamped_key_value_store::<String, String>("paid")?;
    /// assert_eq!(paid.get(&"c1:o1".to_string()).map(|v| v.value), Some("Ann paid 12".to_string()));
    /// // Every internal topic and store is named after the TableJoined name.
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     [
    ///         "test-app-by-customer-subscription-registration-topic",
    ///         "test-app-by-customer-subscription-response-topic",
    ///         "test-app-by-customer-subscription-store-changelog",
    ///         "test-app-customers-STATE-STORE-0000000003-changelog",
    ///         "test-app-orders-STATE-STORE-0000000000-changelog",
    ///         "test-app-paid-changelog",
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join_on_foreign_key_with<KO, VO, VR>(
        self,
        other: &KTable<KO, VO>,
        extractor: ForeignKeyExtractor<K, V, KO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
        table_joined: TableJoined<K, KO>,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR>
    where
        KO: Ord + Clone + 'static,
        VO: Clone + 'static,
        VR: Clone + 'static,
    {
        let joiner: FkJoiner<V, VO, VR> = Rc::new(move |v, o| v.zip(o).map(|(v, o)| joiner(v, o)));
        self.foreign_key_join(other, extractor, joiner, table_joined, materialized, false)
    }

    /// Joins each row of this table with the row of `other` whose key
    /// `extractor` finds in it, or with `None` when there is no such row
    /// or no foreign key, Kafka's `KTable.leftJoin(other,
    /// foreignKeyExtractor, joiner)`: a result row wherever this table has
    /// one. Deleting a row of this table gives a tombstone.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let orders = builder.table::<String, String>("orders");
    ///     let products = builder.table::<String, String>("products");
    ///     orders
    ///         .left_join_on_foreign_key(
    ///             &products,
    ///             |order| order.split_once('/').map(|(product, _)| product.to_owned()),
    ///             |order, name| format!("{order} of {}", name.map_or("?", String::as_str)),
    ///         )
    ///         .to_stream()
    ///         .to("orders-with-products");
    /// });
    /// let orders = driver.input::<String, String>("orders");
    /// let products = driver.input::<String, String>("products");
    /// let out = driver.output::<String, String>("orders-with-products");
    /// orders.pipe_key_value("o1", "p1/2"); // no product yet
    /// products.pipe_key_value("p1", "pen");
    /// orders.pipe_key_value("o2", "loose"); // no foreign key: joined with None
    /// orders.pipe_tombstone("o1");
    /// assert_eq!(
    ///     out.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("o1", "p1/2 of ?"),
    ///         KeyValue::pair("o1", "p1/2 of pen"),
    ///         KeyValue::pair("o2", "loose of ?"),
    ///         KeyValue::tombstone("o1"),
    ///     ]
    /// );
    /// ```
    pub fn left_join_on_foreign_key<KO, VO, VR>(
        self,
        other: &KTable<KO, VO>,
        extractor: impl Fn(&V) -> Option<KO> + 'static,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
    ) -> KTable<K, VR>
    where
        KO: Ord + Clone + 'static,
        VO: Clone + 'static,
        VR: Clone + 'static,
    {
        self.left_join_on_foreign_key_with(
            other,
            ForeignKeyExtractor::from_value(extractor),
            joiner,
            TableJoined::default(),
            Materialized::default(),
        )
    }

    /// As [`KTable::left_join_on_foreign_key`], with an extractor that may
    /// read the key too (KIP-1104), names and partitioners from
    /// `table_joined`, and the result kept as `materialized` says.
    ///
    /// ```
    /// use streams_core::dsl::{ForeignKeyExtractor, Materialized, TableJoined};
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let orders = builder.table::<String, String>("orders"); // "customer:order" -> amount
    ///     let customers = builder.table::<String, String>("customers");
    ///     orders.left_join_on_foreign_key_with(
    ///         &customers,
    ///         ForeignKeyExtractor::from_key_and_value(|id: &String, _| {
    ///             id.split_once(':').map(|(customer, _)| customer.to_owned())
    ///         }),
    ///         |amount, name| format!("{} paid {amount}", name.map_or("someone", String::as_str)),
    ///         TableJoined::as_("by-customer"),
    ///         Materialized::as_("paid"),
    ///     );
    /// });
    /// driver.input::<String, String>("customers").pipe_key_value("c1", "Ann");
    /// driver.input::<String, String>("orders").pipe_key_values([("c1:o1", "12"), ("c2:o2", "5")]);
    /// let paid = driver.timestamped_key_value_store::<String, String>("paid")?;
    /// assert_eq!(
    ///     paid.to_map(),
    ///     [("c1:o1".to_owned(), "Ann paid 12".to_owned()), ("c2:o2".to_owned(), "someone paid 5".to_owned())].into()
    /// );
    /// assert!(driver.produced_topic_names().contains("test-app-by-customer-subscription-registration-topic"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn left_join_on_foreign_key_with<KO, VO, VR>(
        self,
        other: &KTable<KO, VO>,
        extractor: ForeignKeyExtractor<K, V, KO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
        table_joined: TableJoined<K, KO>,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR>
    where
        KO: Ord + Clone + 'static,
        VO: Clone + 'static,
        VR: Clone + 'static,
    {
        let joiner: FkJoiner<V, VO, VR> = Rc::new(move |v, o| v.map(|v| joiner(v, o)));
        self.foreign_key_join(other, extractor, joiner, table_joined, materialized, true)
    }
}

/// A partitioner of a foreign-key join's topic from a `TableJoined`
/// partitioner, which sees no value.
struct MultiPartitioner<K, V>(
    Rc<dyn Fn(&str, Option<&K>, Option<&V>, i32) -> Option<std::collections::BTreeSet<i32>>>,
);

impl<K: 'static, V: 'static> StreamPartitioner<K, V> for MultiPartitioner<K, V> {
    fn partitions(
        &self,
        topic: &str,
        key: Option<&K>,
        value: Option<&V>,
        num_partitions: i32,
    ) -> Option<std::collections::BTreeSet<i32>> {
        (self.0)(topic, key, value, num_partitions)
    }
}
