//! Cogrouping (KIP-150): several grouped streams, each with its own value
//! type and aggregator, aggregated into one table through one store,
//! Kafka's `KGroupedStream::cogroup` and `CogroupedKStream`.
//!
//! Kafka's graph and names: a grouped stream whose key changed goes through
//! a repartition topic named after the store (or its `Grouped` name); each
//! input gets an aggregation node (`COGROUPKSTREAM-AGGREGATE-<n>`, or
//! `<name>-cogroup-agg-<i>`) writing the one store
//! (`COGROUPKSTREAM-AGGREGATE-STATE-STORE-<n>`), and a merge node
//! (`COGROUPKSTREAM-MERGE-<n>`, or `<name>-cogroup-merge`) forwards every
//! update. The inputs must be co-partitioned. Windowed (time, sliding) and
//! session-windowed cogroups work the same way over a window or session
//! store.
//!
//! ```
//! use streams_test::{KeyValue, example};
//!
//! // Per customer: the number of clicks plus the money spent.
//! let driver = example(|builder| {
//!     let clicks = builder.stream::<String, String>("clicks").group_by_key();
//!     let orders = builder.stream::<String, i64>("orders").group_by_key();
//!     clicks
//!         .cogroup(|_, _page: &String, score: i64| score + 1)
//!         .cogroup(orders, |_, amount: &i64, score: i64| score + amount)
//!         .aggregate(|| 0_i64)
//!         .to_stream()
//!         .to("scores");
//! });
//! let clicks = driver.input::<String, String>("clicks");
//! let orders = driver.input::<String, i64>("orders");
//! let scores = driver.output::<String, i64>("scores");
//! clicks.pipe_key_value("ann", "home");
//! orders.pipe_key_value("ann", 10);
//! clicks.pipe_key_value("ann", "cart");
//! assert_eq!(
//!     scores.read_key_values_to_list(),
//!     [KeyValue::pair("ann", 1), KeyValue::pair("ann", 11), KeyValue::pair("ann", 12)]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use super::processors::PassThrough;
use super::session_windowed_stream::session_plan;
use super::time_windowed_stream::time_plan;
use super::windowed_stream::{
    Plan, StoreDef, TimeKind, aggregate_fns, session_getter, window_getter,
};
use crate::dsl::ktable::{GetterSupplier, store_getter};
use crate::dsl::table_processors::StreamAggregate;
use crate::dsl::window_processors::{
    AggFns, SessionWindowAggregate, SlidingWindowAggregate, TimeWindowAggregate,
};
use crate::dsl::{
    KGroupedStream, KTable, Materialized, SessionWindows, SlidingWindows, StreamsBuilder,
    TimeWindows, Windowed,
};
use crate::error::StreamsError;
use crate::record::Change;
use crate::serde::{SerdeRef, builtin_serde};
use crate::state::{SessionStore, TimestampedKeyValueStore, TimestampedWindowStore};
use crate::topology::Topology;

/// What an aggregation node of a cogroup is made from: the store, the
/// initializer, the window kind, and the flag that makes it send old
/// values.
struct AggSpec<VA> {
    store: String,
    initializer: Rc<dyn Fn() -> VA>,
    kind: Kind<VA>,
    send_old: Rc<Cell<bool>>,
}

/// The kind of aggregation: key-value, over time or sliding windows, or
/// over sessions (with the merger of two sessions' aggregates).
#[derive(Clone)]
enum Kind<VA> {
    KeyValue,
    Time(TimeKind),
    Session(SessionWindows, Rc<dyn Fn(&VA, &VA) -> VA>),
}

/// One cogrouped stream, its value type erased: how it reaches the
/// aggregation (through a repartition topic if its key changed), and how
/// its aggregation node is added.
struct Input<K, VA> {
    /// Sends the stream through its repartition topic if it needs one
    /// (named after the store, or its `Grouped` name) and returns the node
    /// its aggregation reads.
    prepare: Box<dyn FnOnce(&str) -> String>,
    /// Adds the aggregation node `name` under `parent`.
    add: Box<dyn FnOnce(&mut Topology, &str, &str, &AggSpec<VA>) -> Result<(), StreamsError>>,
    _key: std::marker::PhantomData<K>,
}

impl<K: Ord + Clone + 'static, VA: Clone + 'static> Input<K, VA> {
    fn new<V: Clone + 'static>(
        grouped: KGroupedStream<K, V>,
        aggregator: Rc<dyn Fn(&K, &V, VA) -> VA>,
    ) -> Self {
        let KGroupedStream {
            stream,
            grouped,
            repartition_required,
        } = grouped;
        let prepare = Box::new(move |store: &str| {
            if repartition_required {
                let key_serde = grouped.key_serde.clone().or(stream.key_serde.clone());
                let value_serde = grouped.value_serde.clone().or(stream.value_serde.clone());
                let base = grouped.name.clone().unwrap_or_else(|| store.to_owned());
                stream
                    .through_internal_topic(&base, key_serde, value_serde, None)
                    .node_name()
                    .to_owned()
            } else {
                stream.node_name().to_owned()
            }
        });
        let add = Box::new(
            move |t: &mut Topology, name: &str, parent: &str, spec: &AggSpec<VA>| {
                let flag = spec.send_old.clone();
                let store = spec.store.clone();
                let initializer = spec.initializer.clone();
                match spec.kind.clone() {
                    Kind::KeyValue => {
                        let a = aggregator.clone();
                        let init = initializer.clone();
                        let first: Rc<dyn Fn(&K, &V) -> VA> = Rc::new(move |k, v| a(k, v, init()));
                        t.add_typed_processor::<K, V, K, Change<VA>, _, _>(
                            name,
                            move || StreamAggregate {
                                store: store.clone(),
                                first: first.clone(),
                                aggregator: aggregator.clone(),
                                send_old: flag.get(),
                                cache: Default::default(),
                            },
                            &[parent],
                        )?;
                    }
                    Kind::Time(TimeKind::Time(windows)) => {
                        let fns = aggregate_fns(initializer, aggregator);
                        t.add_typed_processor::<K, V, Windowed<K>, Change<VA>, _, _>(
                            name,
                            move || TimeWindowAggregate {
                                store: store.clone(),
                                windows,
                                fns: fns.clone(),
                                send_old: flag.get(),
                                observed_stream_time: -1,
                                cache: Default::default(),
                                view: None,
                            },
                            &[parent],
                        )?;
                    }
                    Kind::Time(TimeKind::Sliding(windows)) => {
                        let fns = aggregate_fns(initializer, aggregator);
                        t.add_typed_processor::<K, V, Windowed<K>, Change<VA>, _, _>(
                            name,
                            move || SlidingWindowAggregate {
                                store: store.clone(),
                                time_difference_ms: windows.time_difference_ms(),
                                grace_ms: windows.grace_ms(),
                                fns: fns.clone(),
                                send_old: flag.get(),
                                observed_stream_time: -1,
                                cache: Default::default(),
                                view: None,
                            },
                            &[parent],
                        )?;
                    }
                    Kind::Session(windows, merger) => {
                        let fns: AggFns<K, V, VA> = aggregate_fns(initializer.clone(), aggregator);
                        let merge: super::window_processors::MergeFn<K, VA> =
                            Rc::new(move |_, a, b| merger(&a.unwrap_or_else(|| initializer()), b));
                        t.add_typed_processor::<K, V, Windowed<K>, Change<VA>, _, _>(
                            name,
                            move || SessionWindowAggregate {
                                store: store.clone(),
                                windows,
                                fns: fns.clone(),
                                merge: merge.clone(),
                                send_old: flag.get(),
                                observed_stream_time: -1,
                                cache: Default::default(),
                                view: None,
                            },
                            &[parent],
                        )?;
                    }
                }
                Ok(())
            },
        );
        Input {
            prepare,
            add,
            _key: std::marker::PhantomData,
        }
    }
}

/// Grouped streams cogrouped for one aggregation, Kafka's
/// `CogroupedKStream`: add more with [`cogroup`](Self::cogroup), then
/// [`aggregate`](Self::aggregate) (or window first with
/// [`windowed_by`](Self::windowed_by)). See the [module
/// docs](self).
pub struct CogroupedKStream<K, VA> {
    builder: StreamsBuilder,
    inputs: Vec<Input<K, VA>>,
    name: Option<String>,
}

impl<K, VA> fmt::Debug for CogroupedKStream<K, VA> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CogroupedKStream")
            .field("inputs", &self.inputs.len())
            .field("name", &self.name)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedStream<K, V> {
    /// Starts a cogroup with this grouped stream and its `aggregator`,
    /// Kafka's `cogroup(Aggregator)`: other grouped streams of the same key
    /// type join with [`CogroupedKStream::cogroup`], each with its own
    /// value type, and all update one aggregate per key. Records with a
    /// null key or value are dropped and counted, as by `aggregate`.
    ///
    /// See the [cogroup module docs](crate::dsl::cogroup) for an example.
    pub fn cogroup<VA: Clone + 'static>(
        self,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> CogroupedKStream<K, VA> {
        let builder = self.stream.builder().clone();
        CogroupedKStream {
            builder,
            inputs: vec![Input::new(self, Rc::new(aggregator))],
            name: None,
        }
    }
}

impl<K: Ord + Clone + 'static, VA: Clone + 'static> CogroupedKStream<K, VA> {
    /// Adds `grouped` with its `aggregator`, Kafka's
    /// `cogroup(KGroupedStream, Aggregator)`.
    ///
    /// The example of the [cogroup module](crate::dsl::cogroup) shows it.
    #[must_use]
    pub fn cogroup<V: Clone + 'static>(
        mut self,
        grouped: KGroupedStream<K, V>,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> Self {
        self.inputs.push(Input::new(grouped, Rc::new(aggregator)));
        self
    }

    /// Names the aggregation's nodes, Kafka's `Named` on `aggregate`:
    /// `<name>-cogroup-agg-<i>` for the input `i` and `<name>-cogroup-merge`
    /// (each still takes a number of the counter, as in Kafka).
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// let a = builder.stream::<String, String>("a").group_by_key();
    /// let b = builder.stream::<String, String>("b").group_by_key();
    /// a.cogroup(|_, v: &String, n: usize| n + v.len())
    ///     .cogroup(b, |_, v: &String, n: usize| n + 2 * v.len())
    ///     .named("lengths")
    ///     .aggregate(|| 0);
    /// assert_eq!(
    ///     builder.build()?.node_names(),
    ///     ["KSTREAM-SOURCE-0000000000", "KSTREAM-SOURCE-0000000001", "lengths-cogroup-agg-0",
    ///      "lengths-cogroup-agg-1", "lengths-cogroup-merge"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Aggregates every cogrouped stream into one table, Kafka's
    /// `aggregate(Initializer)`: the first value of a key (from any
    /// stream) is added to `initializer()` by its stream's aggregator. The
    /// store is `COGROUPKSTREAM-AGGREGATE-STATE-STORE-<n>`.
    ///
    /// The example of the [cogroup module](crate::dsl::cogroup) shows it.
    pub fn aggregate(self, initializer: impl Fn() -> VA + 'static) -> KTable<K, VA> {
        self.aggregate_with(initializer, Materialized::default())
    }

    /// As [`aggregate`](Self::aggregate), with the store from
    /// `materialized` (its name, serdes, logging and caching).
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     let a = builder.stream::<String, String>("a").group_by_key();
    ///     let b = builder.stream::<String, String>("b").group_by_key();
    ///     a.cogroup(|_, v: &String, acc: String| format!("{acc}a:{v} "))
    ///         .cogroup(b, |_, v: &String, acc: String| format!("{acc}b:{v} "))
    ///         .aggregate_with(String::new, Materialized::as_("seen"));
    /// });
    /// driver.input::<String, String>("a").pipe_key_value("k", "1");
    /// driver.input::<String, String>("b").pipe_key_value("k", "2");
    /// let store = driver.timestamped_key_value_store::<String, String>("seen")?;
    /// assert_eq!(store.get(&"k".to_string()).map(|v| v.value), Some("a:1 b:2 ".to_string()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate_with(
        self,
        initializer: impl Fn() -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<K, VA> {
        let store = self.store_name(&materialized);
        self.builder
            .refuse_versioned(&materialized, &format!("cogroup store `{store}`"));
        let send_old = Rc::new(Cell::new(false));
        let key_serde = materialized.key_serde.clone();
        let value_serde = materialized.value_serde.clone();
        let spec = AggSpec {
            store: store.clone(),
            initializer: Rc::new(initializer),
            kind: Kind::KeyValue,
            send_old: send_old.clone(),
        };
        let builder = self.builder.clone();
        let merge = self.build(spec, |t, names| {
            t.add_state_store(
                materialized.store_builder::<TimestampedKeyValueStore<K, VA>>(&store, (), None),
                names,
            )
            .map(|_| ())
        });
        KTable::new(
            builder,
            merge,
            Rc::new(move || send_old.set(true)),
            store_getter::<K, VA>(store.clone()),
        )
        .with_serdes(key_serde, value_serde)
        .with_store(Some(store))
    }

    /// Windows the cogroup, Kafka's `windowedBy`: by [`TimeWindows`]
    /// (tumbling or hopping) or [`SlidingWindows`] into a
    /// [`TimeWindowedCogroupedKStream`], by [`SessionWindows`] into a
    /// [`SessionWindowedCogroupedKStream`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::TimeWindows;
    /// use streams_test::{KeyValue, example};
    ///
    /// let ten = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let a = builder.stream::<String, String>("a").group_by_key();
    ///     let b = builder.stream::<String, String>("b").group_by_key();
    ///     a.cogroup(|_, _: &String, n: i64| n + 1)
    ///         .cogroup(b, |_, _: &String, n: i64| n + 100)
    ///         .windowed_by(ten)
    ///         .aggregate(|| 0)
    ///         .to_stream()
    ///         .map(|k, n| (format!("{}@{}", k.unwrap().key, k.unwrap().window.start), *n))
    ///         .to("out");
    /// });
    /// driver.input::<String, String>("a").pipe_key_value_at("k", "x", 1);
    /// driver.input::<String, String>("b").pipe_key_value_at("k", "y", 5);
    /// driver.input::<String, String>("a").pipe_key_value_at("k", "z", 12);
    /// assert_eq!(
    ///     driver.output::<String, i64>("out").read_key_values_to_list(),
    ///     [KeyValue::pair("k@0", 1), KeyValue::pair("k@0", 101), KeyValue::pair("k@10", 1)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Over sessions, with a merger of two sessions' aggregates:
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed};
    /// use streams_test::example;
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let a = builder.stream::<String, String>("a").group_by_key();
    ///     let b = builder.stream::<String, String>("b").group_by_key();
    ///     a.cogroup(|_, v: &String, s: String| s + v)
    ///         .cogroup(b, |_, v: &String, s: String| s + &v.to_uppercase())
    ///         .windowed_by(gap)
    ///         .aggregate_with(
    ///             String::new,
    ///             |a, b| format!("{a}{b}"),
    ///             streams_core::Materialized::as_("sessions").with_retention(Duration::from_secs(1)),
    ///         );
    /// });
    /// driver.input::<String, String>("a").pipe_key_value_at("k", "x", 0);
    /// driver.input::<String, String>("b").pipe_key_value_at("k", "y", 5);
    /// driver.input::<String, String>("a").pipe_key_value_at("k", "z", 40);
    /// let sessions = driver.session_store::<String, String>("sessions")?;
    /// let session = |s, e| Windowed::new("k".to_string(), Window::new(s, e));
    /// assert_eq!(
    ///     sessions.fetch(&"k".to_string()),
    ///     [(session(0, 5), "xY".to_string()), (session(40, 40), "z".to_string())]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn windowed_by<W: CogroupWindowedBy<K, VA>>(self, windows: W) -> W::Output {
        windows.windowed(self)
    }

    fn store_name(&self, materialized: &Materialized<K, VA>) -> String {
        match &materialized.name {
            Some(n) => n.clone(),
            None => self.builder.new_store_name("COGROUPKSTREAM-AGGREGATE-"),
        }
    }

    /// Kafka's `CogroupedStreamAggregateBuilder.build`: the repartitions,
    /// the co-partition group, one aggregation node per input, the store
    /// (`add_store`, given the aggregation nodes), the merge node; returns
    /// the merge node's name.
    fn build(
        self,
        spec: AggSpec<VA>,
        add_store: impl FnOnce(&mut Topology, &[&str]) -> Result<(), StreamsError>,
    ) -> String {
        let builder = self.builder;
        let mut parents = Vec::new();
        let mut adds = Vec::new();
        for input in self.inputs {
            parents.push((input.prepare)(&spec.store));
            adds.push(input.add);
        }
        let named = |suffix: String, prefix: &str| {
            let generated = builder.new_name(prefix);
            match &self.name {
                Some(n) => format!("{n}{suffix}"),
                None => generated,
            }
        };
        let names: Vec<String> = (0..adds.len())
            .map(|i| named(format!("-cogroup-agg-{i}"), "COGROUPKSTREAM-AGGREGATE-"))
            .collect();
        let merge = named("-cogroup-merge".to_owned(), "COGROUPKSTREAM-MERGE-");
        let merge_name = merge.clone();
        builder.with_topology(|t| {
            let parent_refs: Vec<&str> = parents.iter().map(String::as_str).collect();
            // Kafka's ensureCopartitionWith over every input.
            t.copartition(&parent_refs);
            for ((add, name), parent) in adds.into_iter().zip(&names).zip(&parents) {
                add(t, name, parent, &spec)?;
            }
            let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
            add_store(t, &name_refs)?;
            add_merge::<K, VA>(t, &merge_name, &name_refs, &spec)?;
            Ok::<_, StreamsError>(())
        });
        merge
    }
}

/// The merge node: forwards each aggregation's update (Kafka's
/// `KTablePassThrough`), typed by the aggregation's output keys.
fn add_merge<K: Ord + Clone + 'static, VA: Clone + 'static>(
    t: &mut Topology,
    merge: &str,
    parents: &[&str],
    spec: &AggSpec<VA>,
) -> Result<(), StreamsError> {
    match spec.kind {
        Kind::KeyValue => t.add_typed_processor::<K, Change<VA>, K, Change<VA>, _, _>(
            merge,
            || PassThrough,
            parents,
        )?,
        Kind::Time(_) | Kind::Session(..) => t
            .add_typed_processor::<Windowed<K>, Change<VA>, Windowed<K>, Change<VA>, _, _>(
                merge,
                || PassThrough,
                parents,
            )?,
    }
    Ok(())
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::TimeWindows {}
    impl Sealed for super::SlidingWindows {}
    impl Sealed for super::SessionWindows {}
}

/// The window definitions a cogroup can be windowed by: [`TimeWindows`]
/// and [`SlidingWindows`] give a [`TimeWindowedCogroupedKStream`],
/// [`SessionWindows`] a [`SessionWindowedCogroupedKStream`].
pub trait CogroupWindowedBy<K, VA>: private::Sealed {
    /// The windowed cogroup.
    type Output;

    /// Windows `cogrouped`; see [`CogroupedKStream::windowed_by`].
    #[doc(hidden)]
    fn windowed(self, cogrouped: CogroupedKStream<K, VA>) -> Self::Output;
}

impl<K, VA> CogroupWindowedBy<K, VA> for TimeWindows {
    type Output = TimeWindowedCogroupedKStream<K, VA>;
    fn windowed(self, cogrouped: CogroupedKStream<K, VA>) -> Self::Output {
        TimeWindowedCogroupedKStream {
            cogrouped,
            windows: TimeKind::Time(self),
        }
    }
}

impl<K, VA> CogroupWindowedBy<K, VA> for SlidingWindows {
    type Output = TimeWindowedCogroupedKStream<K, VA>;
    fn windowed(self, cogrouped: CogroupedKStream<K, VA>) -> Self::Output {
        TimeWindowedCogroupedKStream {
            cogrouped,
            windows: TimeKind::Sliding(self),
        }
    }
}

impl<K, VA> CogroupWindowedBy<K, VA> for SessionWindows {
    type Output = SessionWindowedCogroupedKStream<K, VA>;
    fn windowed(self, cogrouped: CogroupedKStream<K, VA>) -> Self::Output {
        SessionWindowedCogroupedKStream {
            cogrouped,
            windows: self,
        }
    }
}

/// A cogroup windowed by time or sliding windows, Kafka's
/// `TimeWindowedCogroupedKStream`.
pub struct TimeWindowedCogroupedKStream<K, VA> {
    cogrouped: CogroupedKStream<K, VA>,
    windows: TimeKind,
}

impl<K, VA> fmt::Debug for TimeWindowedCogroupedKStream<K, VA> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeWindowedCogroupedKStream")
            .field("cogrouped", &self.cogrouped)
            .field("windows", &self.windows)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, VA: Clone + 'static> TimeWindowedCogroupedKStream<K, VA> {
    /// Aggregates per key and window, Kafka's `aggregate(Initializer)`.
    ///
    /// The first example of [`CogroupedKStream::windowed_by`] shows it.
    pub fn aggregate(self, initializer: impl Fn() -> VA + 'static) -> KTable<Windowed<K>, VA> {
        self.aggregate_with(initializer, Materialized::default())
    }

    /// As [`aggregate`](Self::aggregate), with the window store from
    /// `materialized` (its retention at least the window size plus the
    /// grace period).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::Materialized;
    /// use streams_core::dsl::TimeWindows;
    /// use streams_test::example;
    ///
    /// let ten = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let views = builder.stream::<String, String>("views").group_by_key();
    ///     let buys = builder.stream::<String, i64>("buys").group_by_key();
    ///     views
    ///         .cogroup(|_, _: &String, score: i64| score + 1)
    ///         .cogroup(buys, |_, amount: &i64, score: i64| score + amount)
    ///         .windowed_by(ten)
    ///         .aggregate_with(|| 0, Materialized::as_("scores").with_retention(Duration::from_secs(60)));
    /// });
    /// driver.input::<String, String>("views").pipe_key_value_at("ann", "home", 1);
    /// driver.input::<String, i64>("buys").pipe_key_value_at("ann", 10, 4);
    /// driver.input::<String, String>("views").pipe_key_value_at("ann", "cart", 12);
    /// let scores = driver.window_store::<String, i64>("scores")?;
    /// assert_eq!(scores.fetch(&"ann".to_owned(), 0..), [(0, 11), (10, 1)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate_with(
        self,
        initializer: impl Fn() -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let store = self.cogrouped.store_name(&materialized);
        let plan = time_plan(
            self.windows,
            None,
            "COGROUPKSTREAM-AGGREGATE-",
            store.clone(),
            materialized,
        );
        windowed(
            self.cogrouped,
            plan,
            initializer,
            Kind::Time(self.windows),
            window_getter::<K, VA>(store),
        )
    }
}

/// A cogroup windowed by sessions, Kafka's `SessionWindowedCogroupedKStream`.
pub struct SessionWindowedCogroupedKStream<K, VA> {
    cogrouped: CogroupedKStream<K, VA>,
    windows: SessionWindows,
}

impl<K, VA> fmt::Debug for SessionWindowedCogroupedKStream<K, VA> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionWindowedCogroupedKStream")
            .field("cogrouped", &self.cogrouped)
            .field("windows", &self.windows)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, VA: Clone + 'static> SessionWindowedCogroupedKStream<K, VA> {
    /// Aggregates per key and session, Kafka's
    /// `aggregate(Initializer, Merger)`: `merger` combines the aggregates
    /// of two sessions that a record joins into one; the merged sessions
    /// are deleted downstream.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed, WindowedSerde};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_test::{KeyValue, example};
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let deposits = builder.stream::<String, i64>("deposits").group_by_key();
    ///     let withdrawals = builder.stream::<String, i64>("withdrawals").group_by_key();
    ///     deposits
    ///         .cogroup(|_, amount: &i64, balance: i64| balance + amount)
    ///         .cogroup(withdrawals, |_, amount: &i64, balance: i64| balance - amount)
    ///         .windowed_by(gap)
    ///         .aggregate(|| 0, |one, other| one + other)
    ///         .to_stream()
    ///         .to("session-balances");
    /// });
    /// driver.input::<String, i64>("deposits").pipe_key_value_at("ann", 5, 0);
    /// driver.input::<String, i64>("withdrawals").pipe_key_value_at("ann", 2, 5); // within the gap: merged
    /// driver.input::<String, i64>("deposits").pipe_key_value_at("ann", 1, 30); // a new session
    /// let out = driver.create_output_topic("session-balances", WindowedSerde::session(StringSerde), I64Serde);
    /// let session = |start, end| Windowed::new("ann".to_owned(), Window::new(start, end));
    /// assert_eq!(
    ///     out.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair(session(0, 0), 5),
    ///         KeyValue::tombstone(session(0, 0)),
    ///         KeyValue::pair(session(0, 5), 3),
    ///         KeyValue::pair(session(30, 30), 1),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate(
        self,
        initializer: impl Fn() -> VA + 'static,
        merger: impl Fn(&VA, &VA) -> VA + 'static,
    ) -> KTable<Windowed<K>, VA> {
        self.aggregate_with(initializer, merger, Materialized::default())
    }

    /// As [`aggregate`](Self::aggregate), with the session store from
    /// `materialized`.
    ///
    /// The second example of [`CogroupedKStream::windowed_by`] shows it.
    pub fn aggregate_with(
        self,
        initializer: impl Fn() -> VA + 'static,
        merger: impl Fn(&VA, &VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let store = self.cogrouped.store_name(&materialized);
        let plan = session_plan(
            self.windows,
            None,
            "COGROUPKSTREAM-AGGREGATE-",
            store.clone(),
            materialized,
        );
        windowed(
            self.cogrouped,
            plan,
            initializer,
            Kind::Session(self.windows, Rc::new(merger)),
            session_getter::<K, VA>(store),
        )
    }
}

/// A windowed cogroup's aggregation: the nodes, its window or session
/// store (with its grace period for `suppress`), the result table.
fn windowed<K: Ord + Clone + 'static, VA: Clone + 'static>(
    cogrouped: CogroupedKStream<K, VA>,
    plan: Plan<K, VA>,
    initializer: impl Fn() -> VA + 'static,
    kind: Kind<VA>,
    getter: GetterSupplier<Windowed<K>, VA>,
) -> KTable<Windowed<K>, VA> {
    let builder = cogrouped.builder.clone();
    let send_old = Rc::new(Cell::new(false));
    let Plan {
        store,
        materialized,
        store_def,
        grace_ms,
        windowed_serde,
        invalid,
        ..
    } = plan;
    cogrouped
        .builder
        .refuse_versioned(&materialized, &format!("windowed cogroup store `{store}`"));
    let key_serde = materialized.key_serde.clone();
    let value_serde = materialized.value_serde.clone();
    let spec = AggSpec {
        store: store.clone(),
        initializer: Rc::new(initializer),
        kind,
        send_old: send_old.clone(),
    };
    let store_name = store.clone();
    let merge = cogrouped.build(spec, move |t, names| {
        if let Some(e) = invalid {
            return Err(e);
        }
        match store_def {
            StoreDef::Window(params) => t.add_state_store(
                materialized.store_builder::<TimestampedWindowStore<K, VA>>(
                    &store_name,
                    params.into(),
                    None,
                ),
                names,
            )?,
            StoreDef::Session { retention_ms } => t.add_state_store(
                materialized.store_builder::<SessionStore<K, VA>>(
                    &store_name,
                    Duration::from_millis(retention_ms.unsigned_abs()),
                    None,
                ),
                names,
            )?,
        };
        t.set_window_grace(&store_name, grace_ms);
        Ok(())
    });
    let inner = key_serde.or_else(builtin_serde::<K>);
    let key_serde = inner.map(|s| Arc::new(windowed_serde(s)) as SerdeRef<Windowed<K>>);
    KTable::new(builder, merge, Rc::new(move || send_old.set(true)), getter)
        .with_serdes(key_serde, value_serde)
        .with_store(Some(store))
}
