//! Joins of a stream with a table, and of two tables, with Kafka's
//! semantics and node names. Kafka's record cache sits in front of the
//! joined tables' stores (a table update reaches the join when its cache
//! is flushed, after each input record) and of a materialized table-table
//! join's own store, as in Kafka; the stream-stream joins of
//! `stream_join.rs` keep their windows in stores without a cache.
//!
//! - [`KStream::join`] / [`KStream::left_join`] with a [`KTable`]: each
//!   stream record looks its key up in the table (node `KSTREAM-JOIN-<n>`
//!   or `KSTREAM-LEFTJOIN-<n>`, connected to the table's store); table
//!   updates only change the table. A record without a value is dropped
//!   and counted, as one without a key is by an inner join; a left join
//!   joins a record with no key (or no row) with `None`. A stream whose key
//!   changed is first repartitioned, as in Kafka.
//! - [`KTable::join`], [`KTable::left_join`], [`KTable::outer_join`]: an
//!   update of either table is joined with the other's current row (nodes
//!   `KTABLE-JOINTHIS-<n>` and `KTABLE-JOINOTHER-<n>` merged by
//!   `KTABLE-MERGE-<n>`). The result's timestamp is the larger of the two
//!   rows'. Deletes produce tombstones exactly where Kafka's do: an inner
//!   join whenever the other side has a row, a left join when a left row
//!   goes away, an outer join when the last of both rows goes away.
//!
//! Joiners see values only: `Fn(&V, &VO)` for inner joins,
//! `Fn(&V, Option<&VO>)` for left joins and `Fn(Option<&V>, Option<&VO>)`
//! for outer joins, where Kafka would pass `null`.
//!
//! ```
//! use streams_test::{KeyValue, example};
//!
//! let driver = example(|builder| {
//!     let names = builder.table::<String, String>("names");
//!     let emails = builder.table::<String, String>("emails");
//!     names
//!         .left_join(&emails, |name, email| format!("{name} <{}>", email.map_or("?", String::as_str)))
//!         .to_stream()
//!         .to("contacts");
//! });
//! let names_in = driver.input::<String, String>("names");
//! let emails_in = driver.input::<String, String>("emails");
//! let contacts = driver.output::<String, String>("contacts");
//! names_in.pipe_key_value("1", "Ann");
//! emails_in.pipe_key_value("1", "ann@example.com");
//! names_in.pipe_tombstone("1"); // the left row goes: a tombstone
//! assert_eq!(
//!     contacts.read_key_values_to_list(),
//!     [
//!         KeyValue::pair("1", "Ann <?>"),
//!         KeyValue::pair("1", "Ann <ann@example.com>"),
//!         KeyValue::tombstone("1"),
//!     ]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The cache in front of a joined table: a line of three words updates
//! the user's count three times, but the join sees the row once, when the
//! cache flushes after the line; without the cache it joins every update.
//!
//! ```
//! use streams_core::dsl::Materialized;
//! use streams_test::{KeyValue, example};
//!
//! let joined = |counts: Materialized<String, i64>| {
//!     let driver = example(|builder| {
//!         let names = builder.table::<String, String>("names");
//!         builder
//!             .stream::<String, String>("lines")
//!             .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
//!             .group_by_key()
//!             .count_with(counts)
//!             .join(&names, |n, name| format!("{name}: {n}"))
//!             .to_stream()
//!             .to("joined");
//!     });
//!     driver.input::<String, String>("names").pipe_key_value("u1", "Ann");
//!     driver.input::<String, String>("lines").pipe_key_value("u1", "a b a");
//!     driver.output::<String, String>("joined").read_key_values_to_list()
//! };
//! assert_eq!(joined(Materialized::default()), [KeyValue::pair("u1", "Ann: 3")]);
//! assert_eq!(
//!     joined(Materialized::default().with_caching_disabled()),
//!     [KeyValue::pair("u1", "Ann: 1"), KeyValue::pair("u1", "Ann: 2"), KeyValue::pair("u1", "Ann: 3")]
//! );
//! ```

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::dsl::join_processors::{
    Joiner, StreamTableJoin, TableJoinKind, TableJoinMerge, TableTableJoin, join_getter,
};
use crate::dsl::ktable::{GetterSupplier, store_getter};
use crate::dsl::{KStream, KTable, Materialized};
use crate::error::StreamsError;
use crate::record::Change;
use crate::serde::{Serde, SerdeRef};
use crate::state::{BuiltInStoreBuilder, TimeOrderedStreamBuffer, TimestampedKeyValueStore};

/// Options of a stream-table join, Kafka's `Joined`: the serdes of the
/// stream's key and value (for the repartition topic a re-keyed stream
/// goes through, and the buffer of a grace period), a name for the join
/// node, which also names that topic (`<name>-repartition`), and a grace
/// period (KIP-923, for a versioned table only).
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::Joined;
/// use streams_core::serde::StringSerde;
/// use streams_core::StreamsBuilder;
/// use streams_test::{KeyValue, TopologyTestDriver};
///
/// let waiting = Joined::<String, String>::as_("enrich").with_grace_period(Duration::from_millis(10));
/// assert_eq!((waiting.name(), waiting.grace_period()), (Some("enrich"), Some(Duration::from_millis(10))));
/// // A grace period needs a versioned table; this one is not.
/// let joined = Joined::with(StringSerde, StringSerde).with_name("enrich");
/// assert_eq!(joined.grace_period(), None);
///
/// let builder = StreamsBuilder::new();
/// let users = builder.table::<String, String>("users");
/// builder
///     .stream::<String, String>("clicks")
///     .left_join_with(&users, |page, name| format!("{}: {page}", name.map_or("?", String::as_str)), joined)
///     .to("named-clicks");
/// let topology = builder.build()?;
/// assert!(topology.node_names().contains(&"enrich"));
/// let driver = TopologyTestDriver::new(topology)?;
/// let users = driver.create_input_topic("users", StringSerde, StringSerde);
/// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
/// users.pipe_key_value("u1", "Ann");
/// clicks.pipe_key_values([("u1", "home"), ("u2", "cart")]);
/// let named = driver.create_output_topic("named-clicks", StringSerde, StringSerde);
/// assert_eq!(named.read_key_values_to_list(), [KeyValue::pair("u1", "Ann: home"), KeyValue::pair("u2", "?: cart")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Joined<K, V> {
    key_serde: Option<SerdeRef<K>>,
    value_serde: Option<SerdeRef<V>>,
    name: Option<String>,
    grace_period: Option<Duration>,
}

impl<K, V> Default for Joined<K, V> {
    fn default() -> Self {
        Joined {
            key_serde: None,
            value_serde: None,
            name: None,
            grace_period: None,
        }
    }
}

impl<K, V> Clone for Joined<K, V> {
    fn clone(&self) -> Self {
        Joined {
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            name: self.name.clone(),
            grace_period: self.grace_period,
        }
    }
}

impl<K, V> fmt::Debug for Joined<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Joined")
            .field("key_serde", &self.key_serde.is_some())
            .field("value_serde", &self.value_serde.is_some())
            .field("name", &self.name)
            .field("grace_period", &self.grace_period)
            .finish()
    }
}

impl<K: 'static, V: 'static> Joined<K, V> {
    /// With these serdes for the stream's key and value.
    pub fn with(key_serde: impl Serde<K>, value_serde: impl Serde<V>) -> Self {
        Joined {
            key_serde: Some(Arc::new(key_serde)),
            value_serde: Some(Arc::new(value_serde)),
            ..Joined::default()
        }
    }

    /// With this name for the join node (and repartition topic).
    pub fn as_(name: impl Into<String>) -> Self {
        Joined {
            name: Some(name.into()),
            ..Joined::default()
        }
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

    /// Waits for late table updates, Kafka's `Joined.withGracePeriod`
    /// (KIP-923): the join keeps each stream record in a buffer (the
    /// store `<join node>-Buffer`, changelog
    /// `<application.id>-<join node>-Buffer-changelog`) until the stream
    /// time has passed it by `grace_period`, then joins the buffered
    /// records in timestamp order, each with the table's version as of
    /// its timestamp. A record older than that already is joined at once.
    /// The table must be versioned, with a history retention of at least
    /// the grace period; else building the topology fails with Kafka's
    /// message.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::Joined;
    /// use streams_core::state::Stores;
    /// use streams_core::Materialized;
    /// use streams_test::{TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     let prices = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
    ///     let prices = builder.table_with::<String, String>("prices", Materialized::as_(prices));
    ///     builder
    ///         .stream::<String, String>("orders")
    ///         .join_with(&prices, |order, price| format!("{order} at {price}"), Joined::default().with_grace_period(Duration::from_millis(10)))
    ///         .to("priced");
    /// });
    /// let prices = driver.input::<String, String>("prices");
    /// let orders = driver.input::<String, String>("orders");
    /// let priced = driver.output::<String, String>("priced");
    /// prices.pipe_key_value_at("pen", "1.00", 0);
    /// orders.pipe_key_value_at("pen", "order-1", 20); // waits until stream time 30
    /// prices.pipe_key_value_at("pen", "1.20", 15); // late, but in time for order-1
    /// assert!(priced.is_empty());
    /// orders.pipe_key_value_at("pen", "order-2", 30); // releases order-1
    /// assert_eq!(priced.read_record(), TestRecord::key_value("pen", "order-1 at 1.20").at(20));
    /// assert!(priced.is_empty()); // order-2 waits
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_grace_period(mut self, grace_period: Duration) -> Self {
        self.grace_period = Some(grace_period);
        self
    }

    /// The grace period, if one was given.
    pub fn grace_period(&self) -> Option<Duration> {
        self.grace_period
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Kafka's `repartitionForJoin`: this (re-keyed) stream through the
    /// topic `<base>-repartition`. An unnamed join of a stream that an
    /// earlier join already repartitioned reuses that topic (the numbers
    /// of the nodes are still taken).
    pub(crate) fn repartition_for_join(
        &self,
        base: String,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> KStream<K, V> {
        let builder = self.builder().clone();
        match builder.join_repartition(&self.node) {
            Some(source) if base == self.node => {
                for prefix in ["KSTREAM-SINK-", "KSTREAM-FILTER-", "KSTREAM-SOURCE-"] {
                    builder.new_name(prefix);
                }
                KStream::new(builder, source, key_serde, value_serde)
            }
            _ => {
                let s = self.through_internal_topic(&base, key_serde, value_serde, None);
                builder.set_join_repartition(&self.node, s.node_name());
                s
            }
        }
    }

    fn table_join<VT: 'static, VR: Clone + 'static>(
        mut self,
        table: &KTable<K, VT>,
        joiner: Joiner<V, VT, VR>,
        joined: Joined<K, V>,
        left: bool,
    ) -> KStream<K, VR> {
        let prefix = if left {
            "KSTREAM-LEFTJOIN-"
        } else {
            "KSTREAM-JOIN-"
        };
        let buffer_key_serde = joined.key_serde.clone().or(self.key_serde.clone());
        let buffer_value_serde = joined.value_serde.clone().or(self.value_serde.clone());
        let key_serde = joined.key_serde.clone().or(self.key_serde.clone());
        let stream = if self.repartition_required {
            let base = joined.name.clone().unwrap_or_else(|| self.node.clone());
            let value_serde = joined.value_serde.clone().or(self.value_serde.clone());
            self.repartition_for_join(base, key_serde.clone(), value_serde)
        } else {
            self.clone()
        };
        let name = match joined.name {
            Some(n) => {
                self.builder().new_name(prefix);
                n
            }
            None => self.take_name_and_number(prefix),
        };
        let (stores, getter) = (table.getter)();
        let versioned = table.versioned.as_ref().map(|supplier| supplier());
        let buffer = joined.grace_period.map(|grace| {
            let stores = versioned.as_ref().map(|(stores, _)| stores.as_slice());
            let grace_ms = self.check_grace(&name, grace, stores);
            (format!("{name}-Buffer"), grace_ms)
        });
        let versioned_getter = versioned.map(|(_, g)| g);
        let key_of: Rc<dyn Fn(Option<&K>, &V) -> Option<K>> = Rc::new(|k, _| k.cloned());
        let buffer_store = buffer.as_ref().map(|(b, _)| b.clone());
        let mut out = stream.add_processor(
            name.clone(),
            move || StreamTableJoin {
                key_of: key_of.clone(),
                getter: getter.clone(),
                versioned: versioned_getter.clone(),
                joiner: joiner.clone(),
                left,
                buffer: buffer_store.clone(),
            },
            key_serde,
            None,
        );
        // The stream is partitioned like the table now (Kafka's
        // `doStreamTableJoin` returns an unmarked stream).
        out.repartition_required = false;
        let stores: Vec<&str> = stores.iter().map(String::as_str).collect();
        // Kafka's buffer takes the `Joined` serdes, else the stream's.
        let buffer_builder = buffer.map(|(b, grace_ms)| {
            BuiltInStoreBuilder::<TimeOrderedStreamBuffer<K, V>>::new(
                b,
                grace_ms,
                buffer_key_serde,
                buffer_value_serde,
            )
        });
        self.builder().with_topology(|t| {
            // Kafka's ensureCopartitionWith: the stream's and the table's
            // sources must be co-partitioned.
            t.copartition(&[&stream.node, &table.node]);
            if left {
                // Kafka 3.7+: a left join sees records without a key.
                t.mark_null_key_relaxed_join(&name);
            }
            if let Some(b) = buffer_builder {
                t.add_state_store(b, &[&name])?;
            }
            t.connect_processor_and_state_stores(&name, &stores)
                .map(|_| ())
        });
        out
    }

    /// Checks a join's grace period as Kafka's `doStreamTableJoin` and
    /// `StreamTableJoinNode` do: the table must be versioned (`stores`,
    /// with their history retentions, are its versioned stores), and keep
    /// at least the grace period of history; the builder fails otherwise.
    /// Returns the grace period in milliseconds.
    fn check_grace(&self, node: &str, grace: Duration, stores: Option<&[(String, i64)]>) -> i64 {
        let builder = self.builder();
        let Ok(grace_ms) = i64::try_from(grace.as_millis()) else {
            builder.fail(StreamsError::DurationTooLarge {
                what: "join grace period",
                duration: grace,
            });
            return i64::MAX;
        };
        let Some(stores) = stores else {
            builder.fail(StreamsError::JoinGraceOnUnversionedTable {
                node: node.to_owned(),
            });
            return grace_ms;
        };
        for (store, history_retention_ms) in stores {
            if grace_ms > *history_retention_ms {
                builder.fail(StreamsError::JoinGraceExceedsHistoryRetention {
                    node: node.to_owned(),
                    store: store.clone(),
                    grace_ms,
                    history_retention_ms: *history_retention_ms,
                });
            }
        }
        grace_ms
    }

    /// Joins each record with the row of `table` under the same key,
    /// Kafka's `join(KTable, ValueJoiner)`. Records without a key or a
    /// value are dropped and counted; records that find no row are
    /// dropped; table updates produce nothing. A stream whose key changed
    /// goes through a repartition topic first. See
    /// [the DSL's join section](crate::dsl#joins).
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let users = builder.table::<String, String>("users"); // user -> name
    ///     let clicks = builder.stream::<String, String>("clicks"); // user -> page
    ///     clicks.clone().join(&users, |page, name| format!("{name}: {page}")).to("named-clicks");
    ///     clicks
    ///         .left_join(&users, |page, name| format!("{}: {page}", name.map_or("?", String::as_str)))
    ///         .to("all-clicks");
    /// });
    /// let users_in = driver.input::<String, String>("users");
    /// let clicks_in = driver.input::<String, String>("clicks");
    /// let named = driver.output::<String, String>("named-clicks");
    /// let all = driver.output::<String, String>("all-clicks");
    /// clicks_in.pipe_key_value("u1", "home"); // no row yet
    /// users_in.pipe_key_value("u1", "Ann"); // a table update: no result
    /// clicks_in.pipe_key_value("u1", "cart");
    /// assert_eq!(named.read_key_values_to_list(), [KeyValue::pair("u1", "Ann: cart")]);
    /// assert_eq!(
    ///     all.read_key_values_to_list(),
    ///     [KeyValue::pair("u1", "?: home"), KeyValue::pair("u1", "Ann: cart")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join<VT: 'static, VR: Clone + 'static>(
        self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, &VT) -> VR + 'static,
    ) -> KStream<K, VR> {
        self.join_with(table, joiner, Joined::default())
    }

    /// As [`KStream::join`], with serdes and a name from `joined` (and a
    /// grace period, for a versioned table: see
    /// [`Joined::with_grace_period`]).
    ///
    /// ```
    /// use streams_core::dsl::Joined;
    /// use streams_core::serde::StringSerde;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let users = builder.table::<String, String>("users"); // user -> name
    ///     builder
    ///         .stream::<String, String>("clicks") // page -> user
    ///         .select_key(|_, user| user.clone())
    ///         .join_with(&users, |user, name| format!("{name} ({user})"), Joined::with(StringSerde, StringSerde).with_name("clicks-users"))
    ///         .to("named-clicks");
    /// });
    /// driver.input::<String, String>("users").pipe_key_value("u1", "Ann");
    /// driver.input::<String, String>("clicks").pipe_key_value("home", "u1");
    /// assert_eq!(driver.output::<String, String>("named-clicks").read_key_values_to_list(), [KeyValue::pair("u1", "Ann (u1)")]);
    /// // The re-keyed stream went through a repartition topic named after the join.
    /// assert!(driver.produced_topic_names().contains("test-app-clicks-users-repartition"));
    /// ```
    pub fn join_with<VT: 'static, VR: Clone + 'static>(
        self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, &VT) -> VR + 'static,
        joined: Joined<K, V>,
    ) -> KStream<K, VR> {
        let joiner: Joiner<V, VT, VR> = Rc::new(move |v, t| v.zip(t).map(|(v, t)| joiner(v, t)));
        self.table_join(table, joiner, joined, false)
    }

    /// Joins each record with the row of `table` under the same key, or
    /// with `None` when there is none (or the record has no key), Kafka's
    /// `leftJoin(KTable, ValueJoiner)`. Records without a value are
    /// dropped and counted.
    ///
    /// The example of [`KStream::join`](crate::dsl::KStream::join) shows this join too.
    #[doc(alias = "leftJoin")]
    pub fn left_join<VT: 'static, VR: Clone + 'static>(
        self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, Option<&VT>) -> VR + 'static,
    ) -> KStream<K, VR> {
        self.left_join_with(table, joiner, Joined::default())
    }

    /// As [`KStream::left_join`], with serdes and a name from `joined`.
    ///
    /// The example of [`Joined`] shows `left_join_with`.
    pub fn left_join_with<VT: 'static, VR: Clone + 'static>(
        self,
        table: &KTable<K, VT>,
        joiner: impl Fn(&V, Option<&VT>) -> VR + 'static,
        joined: Joined<K, V>,
    ) -> KStream<K, VR> {
        let joiner: Joiner<V, VT, VR> = Rc::new(move |v, t| v.map(|v| joiner(v, t)));
        self.table_join(table, joiner, joined, true)
    }
}

/// Which table-table join: Kafka's `doJoin(leftOuter, rightOuter)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableJoin {
    Inner,
    Left,
    Outer,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    fn table_table_join<VO: Clone + 'static, VR: Clone + 'static>(
        mut self,
        other: &KTable<K, VO>,
        how: TableJoin,
        joiner_this: Joiner<V, VO, VR>,
        joiner_other: Joiner<VO, V, VR>,
        materialized: Option<Materialized<K, VR>>,
    ) -> KTable<K, VR> {
        let builder = self.builder.clone();
        if let Some(m) = &materialized {
            builder.refuse_versioned(m, "a table-table join's result store");
        }
        // Kafka's order of names: the store (`KTABLE-MERGE-STATE-STORE-`),
        // the merge node, then the two sides; a given name takes numbers too.
        let store = materialized.map(|m| {
            let name = match &m.name {
                Some(n) => n.clone(),
                None => builder.new_store_name("KTABLE-MERGE-"),
            };
            (name, m)
        });
        let given = self.next_name.take();
        let generated = builder.new_name("KTABLE-MERGE-");
        let merge = given.clone().unwrap_or(generated);
        if how != TableJoin::Inner {
            self.enable_sending_old_values();
        }
        if how == TableJoin::Outer {
            other.enable_sending_old_values();
        }
        let (this_stores, this_getter) = (self.getter)();
        let (other_stores, other_getter) = (other.getter)();
        let side_name = |suffix: &str, prefix: &str| {
            let generated = builder.new_name(prefix);
            given.as_ref().map_or(generated, |n| format!("{n}{suffix}"))
        };
        let this_name = side_name("-join-this", "KTABLE-JOINTHIS-");
        let other_name = side_name("-join-other", "KTABLE-JOINOTHER-");
        let (this_kind, other_kind) = match how {
            TableJoin::Inner => (TableJoinKind::Inner, TableJoinKind::Inner),
            TableJoin::Left => (TableJoinKind::Left, TableJoinKind::Right),
            TableJoin::Outer => (TableJoinKind::Outer, TableJoinKind::Outer),
        };
        let send_old = Rc::new(Cell::new(false));
        let store_name = store.as_ref().map(|(n, _)| n.clone());
        let key_serde = store
            .as_ref()
            .and_then(|(_, m)| m.key_serde.clone())
            .or(self.key_serde.clone());
        let value_serde = store.as_ref().and_then(|(_, m)| m.value_serde.clone());
        {
            let (this_parent, other_parent) = (self.node.clone(), other.node.clone());
            let (flag_this, flag_other, flag_merge) =
                (send_old.clone(), send_old.clone(), send_old.clone());
            let (getter_for_this, getter_for_other) = (other_getter.clone(), this_getter.clone());
            let (joiner_for_this, merge_store) = (joiner_this.clone(), store_name.clone());
            let store_key_serde = key_serde.clone();
            builder.with_topology(|t| {
                t.add_typed_processor::<K, Change<V>, K, Change<VR>, _, _>(
                    &this_name,
                    move || TableTableJoin {
                        kind: this_kind,
                        getter: getter_for_this.clone(),
                        joiner: joiner_for_this.clone(),
                        send_old: flag_this.get(),
                    },
                    &[&this_parent],
                )?;
                t.add_typed_processor::<K, Change<VO>, K, Change<VR>, _, _>(
                    &other_name,
                    move || TableTableJoin {
                        kind: other_kind,
                        getter: getter_for_other.clone(),
                        joiner: joiner_other.clone(),
                        send_old: flag_other.get(),
                    },
                    &[&other_parent],
                )?;
                t.add_typed_processor::<K, Change<VR>, K, Change<VR>, _, _>(
                    &merge,
                    move || TableJoinMerge {
                        store: merge_store.clone(),
                        send_old: flag_merge.get(),
                        cache: Default::default(),
                    },
                    &[&this_name, &other_name],
                )?;
                // Kafka's ensureCopartitionWith: both tables' sources.
                t.copartition(&[&this_parent, &other_parent]);
                let other_stores: Vec<&str> = other_stores.iter().map(String::as_str).collect();
                t.connect_processor_and_state_stores(&this_name, &other_stores)?;
                let this_stores: Vec<&str> = this_stores.iter().map(String::as_str).collect();
                t.connect_processor_and_state_stores(&other_name, &this_stores)?;
                if let Some((name, m)) = store {
                    t.add_state_store(
                        m.store_builder::<TimestampedKeyValueStore<K, VR>>(
                            &name,
                            (),
                            store_key_serde,
                        ),
                        &[&merge],
                    )?;
                }
                Ok::<_, crate::StreamsError>(())
            });
        }
        let getter: GetterSupplier<K, VR> = match &store_name {
            Some(s) => store_getter::<K, VR>(s.clone()),
            None => {
                let (this_supplier, other_supplier) = (self.getter.clone(), other.getter.clone());
                Rc::new(move || {
                    let (mut stores, g1) = this_supplier();
                    let (more, g2) = other_supplier();
                    for s in more {
                        if !stores.contains(&s) {
                            stores.push(s);
                        }
                    }
                    (stores, join_getter(this_kind, g1, g2, joiner_this.clone()))
                })
            }
        };
        let (this_enable, other_enable) = (self.enable_old.clone(), other.enable_old.clone());
        let enable_old = Rc::new(move || {
            send_old.set(true);
            this_enable();
            other_enable();
        });
        KTable::new(builder, merge, enable_old, getter)
            .with_serdes(key_serde, value_serde)
            .with_store(store_name)
    }

    /// Joins this table with `other` on their keys, Kafka's
    /// `KTable.join`: a row wherever both tables have one. An update of
    /// either side with the other side present gives the joined row (a
    /// delete gives a tombstone, even with no earlier result). See
    /// [the DSL's join section](crate::dsl#joins).
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let names = builder.table::<String, String>("names");
    ///     let emails = builder.table::<String, String>("emails");
    ///     let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "-".into());
    ///     names.clone().join(&emails, |n, e| format!("{n}/{e}")).to_stream().to("inner");
    ///     names.clone().left_join(&emails, move |n, e| format!("{n}/{}", show(e))).to_stream().to("left");
    ///     names.outer_join(&emails, move |n, e| format!("{}/{}", show(n), show(e))).to_stream().to("outer");
    /// });
    /// let names_in = driver.input::<String, String>("names");
    /// let emails_in = driver.input::<String, String>("emails");
    /// let read = |topic| driver.output::<String, String>(topic);
    /// let (inner, left, outer) = (read("inner"), read("left"), read("outer"));
    /// emails_in.pipe_key_value("1", "a@x");
    /// names_in.pipe_key_value("1", "Ann");
    /// names_in.pipe_tombstone("1");
    /// emails_in.pipe_tombstone("1");
    /// assert_eq!(
    ///     inner.read_key_values_to_list(),
    ///     [KeyValue::pair("1", "Ann/a@x"), KeyValue::tombstone("1")]
    /// );
    /// assert_eq!(
    ///     left.read_key_values_to_list(),
    ///     [KeyValue::pair("1", "Ann/a@x"), KeyValue::tombstone("1")]
    /// );
    /// assert_eq!(
    ///     outer.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("1", "-/a@x"),
    ///         KeyValue::pair("1", "Ann/a@x"),
    ///         KeyValue::pair("1", "-/a@x"),
    ///         KeyValue::tombstone("1"),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
    ) -> KTable<K, VR> {
        self.join_impl(other, joiner, None)
    }

    /// As [`KTable::join`], keeping the result in a store.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let names = builder.table::<String, String>("names");
    ///     let emails = builder.table::<String, String>("emails");
    ///     let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "-".into());
    ///     let _ = names.clone().join_with(&emails, |n, e| format!("{n} <{e}>"), Materialized::as_("inner"));
    ///     let _ = names.clone().left_join_with(&emails, move |n, e| format!("{n} <{}>", show(e)), Materialized::as_("left"));
    ///     let _ = names.outer_join_with(&emails, move |n, e| format!("{} <{}>", show(n), show(e)), Materialized::as_("outer"));
    /// });
    /// driver.input::<String, String>("names").pipe_key_values([("1", "Ann"), ("2", "Bob")]);
    /// driver.input::<String, String>("emails").pipe_key_values([("1", "a@x"), ("3", "c@x")]);
    /// let rows = |store: &str| driver.timestamped_key_value_store::<String, String>(store).map(|s| s.to_map());
    /// let row = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    /// assert_eq!(rows("inner")?, [row("1", "Ann <a@x>")].into());
    /// assert_eq!(rows("left")?, [row("1", "Ann <a@x>"), row("2", "Bob <->")].into());
    /// assert_eq!(rows("outer")?, [row("1", "Ann <a@x>"), row("2", "Bob <->"), row("3", "- <c@x>")].into());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR> {
        self.join_impl(other, joiner, Some(materialized))
    }

    fn join_impl<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
        materialized: Option<Materialized<K, VR>>,
    ) -> KTable<K, VR> {
        let joiner = Rc::new(joiner);
        let j = joiner.clone();
        let this: Joiner<V, VO, VR> = Rc::new(move |v, o| v.zip(o).map(|(v, o)| j(v, o)));
        let other_side: Joiner<VO, V, VR> =
            Rc::new(move |o, v| v.zip(o).map(|(v, o)| joiner(v, o)));
        self.table_table_join(other, TableJoin::Inner, this, other_side, materialized)
    }

    /// Joins this table with `other`, keeping every row of this table,
    /// Kafka's `KTable.leftJoin`: a row wherever this table has one,
    /// joined with `other`'s row or `None`. Deleting a row of this table
    /// gives a tombstone.
    ///
    /// The example of [`KTable::join`](crate::dsl::KTable::join) shows this join too.
    #[doc(alias = "leftJoin")]
    pub fn left_join<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
    ) -> KTable<K, VR> {
        self.left_join_impl(other, joiner, None)
    }

    /// As [`KTable::left_join`], keeping the result in a store.
    ///
    /// The example of [`KTable::join_with`] shows `left_join_with` too.
    pub fn left_join_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR> {
        self.left_join_impl(other, joiner, Some(materialized))
    }

    fn left_join_impl<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
        materialized: Option<Materialized<K, VR>>,
    ) -> KTable<K, VR> {
        let joiner = Rc::new(joiner);
        let j = joiner.clone();
        let this: Joiner<V, VO, VR> = Rc::new(move |v, o| v.map(|v| j(v, o)));
        let other_side: Joiner<VO, V, VR> = Rc::new(move |o, v| v.map(|v| joiner(v, o)));
        self.table_table_join(other, TableJoin::Left, this, other_side, materialized)
    }

    /// Joins this table with `other`, keeping every row of both, Kafka's
    /// `KTable.outerJoin`: a row wherever either table has one. Deleting
    /// the last of both rows gives a tombstone.
    ///
    /// The example of [`KTable::join`](crate::dsl::KTable::join) shows this join too.
    #[doc(alias = "outerJoin")]
    pub fn outer_join<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + 'static,
    ) -> KTable<K, VR> {
        self.outer_join_impl(other, joiner, None)
    }

    /// As [`KTable::outer_join`], keeping the result in a store.
    ///
    /// The example of [`KTable::join_with`] shows `outer_join_with` too.
    pub fn outer_join_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + 'static,
        materialized: Materialized<K, VR>,
    ) -> KTable<K, VR> {
        self.outer_join_impl(other, joiner, Some(materialized))
    }

    fn outer_join_impl<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KTable<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + 'static,
        materialized: Option<Materialized<K, VR>>,
    ) -> KTable<K, VR> {
        let joiner = Rc::new(joiner);
        let j = joiner.clone();
        // Kafka never calls an outer joiner with two nulls.
        let this: Joiner<V, VO, VR> = Rc::new(move |v, o| {
            if v.is_none() && o.is_none() {
                None
            } else {
                Some(j(v, o))
            }
        });
        let other_side: Joiner<VO, V, VR> = Rc::new(move |o, v| {
            if v.is_none() && o.is_none() {
                None
            } else {
                Some(joiner(v, o))
            }
        });
        self.table_table_join(other, TableJoin::Outer, this, other_side, materialized)
    }
}
