//! Windowed aggregation: [`KGroupedStream::windowed_by`],
//! [`TimeWindowedKStream`] (time and sliding windows) and
//! [`SessionWindowedKStream`].
//!
//! Each aggregation keeps its result in a window (or session) store named
//! as Kafka names it (`KSTREAM-AGGREGATE-STATE-STORE-0000000001`, or the
//! name given with [`Materialized::as_`]) and returns a
//! `KTable<Windowed<K>, VA>` whose key serde writes windowed keys as
//! Kafka's windowed serdes do. Every update is forwarded (the test driver
//! has no cache), with the largest timestamp of the records in the window
//! (for sessions, the session's end).
//!
//! The store keeps windows for a retention period: the window size (for
//! sliding windows twice the time difference; for sessions the gap) plus
//! the grace period, unless set with `with_retention` (Kafka's
//! `Materialized.withRetention`), which must not be shorter.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{TimeWindows, Windowed};
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("clicks")
//!     .group_by_key()
//!     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?)
//!     .count()
//!     .to_stream()
//!     .map_values(|count| count.to_string())
//!     .to("clicks-per-minute");
//! let topology = builder.build()?;
//! assert_eq!(topology.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000001"]);
//! assert_eq!(topology.node_names()[1], "KSTREAM-AGGREGATE-0000000002");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;

use crate::dsl::ktable::GetterSupplier;
use crate::dsl::table_processors::ValueGetter;
use crate::dsl::window_processors::{
    AggFns, MergeFn, SessionWindowAggregate, SlidingWindowAggregate, TimeWindowAggregate,
};
use crate::dsl::{
    KGroupedStream, KTable, Materialized, SessionWindows, SlidingWindows, TimeWindows, Windowed,
    WindowedSerde,
};
use crate::error::{Result, StreamsError};
use crate::processor::Processor;
use crate::record::Change;
use crate::serde::{I64Serde, SerdeRef, builtin_serde};
use crate::state::{DslSessionStoreBuilder, DslWindowStoreBuilder, StoreBuilder, WindowParams};
use crate::time::millis;
use crate::topology::Topology;

thread_local! {
    /// The grace period of each windowed aggregation's store builder, for
    /// `suppress(until_window_closes(..))`, which finds the windowed
    /// aggregation upstream as Kafka's `GraphGraceSearchUtil` does. An entry
    /// is matched by the identity of the live store builder, so it can
    /// never be confused with another topology's.
    static GRACE: RefCell<Vec<(Weak<dyn StoreBuilder>, i64)>> = const { RefCell::new(Vec::new()) };
}

/// Remembers the grace period of the windowed aggregation whose store is
/// `store` in `topology`.
fn register_grace(topology: &Topology, store: &str, grace_ms: i64) {
    let Some(builder) = topology.store_builders().iter().find(|b| b.name() == store) else {
        return;
    };
    let weak = Rc::downgrade(builder);
    GRACE.with(|g| {
        let mut g = g.borrow_mut();
        g.retain(|(w, _)| w.strong_count() > 0);
        g.push((weak, grace_ms));
    });
}

/// The grace period of the windowed aggregation that `node` is, if it is one.
fn grace_of(topology: &Topology, node: usize) -> Option<i64> {
    let def = topology.nodes().get(node)?;
    GRACE.with(|g| {
        let g = g.borrow();
        def.stores.iter().find_map(|store| {
            let builder = topology
                .store_builders()
                .iter()
                .find(|b| b.name() == store)?;
            g.iter().find_map(|(w, grace)| {
                let live = w.upgrade()?;
                std::ptr::addr_eq(Rc::as_ptr(&live), Rc::as_ptr(builder)).then_some(*grace)
            })
        })
    })
}

/// The grace period that closes windows at `node`: that of the windowed
/// aggregation upstream of it (the largest, over several parents), Kafka's
/// `findAndVerifyWindowGrace`.
pub(crate) fn find_window_grace(topology: &Topology, node: &str) -> Result<i64> {
    fn search(topology: &Topology, node: usize, chain: &str, depth: usize) -> Result<i64> {
        if let Some(grace) = grace_of(topology, node) {
            return Ok(grace);
        }
        let Some(def) = topology.nodes().get(node) else {
            return Err(not_windowed(chain));
        };
        let chain = if chain.is_empty() {
            def.name.clone()
        } else {
            format!("{}->{chain}", def.name)
        };
        if def.parents.is_empty() || depth > topology.nodes().len() {
            return Err(not_windowed(&chain));
        }
        let mut inherited = -1;
        for &parent in &def.parents {
            inherited = inherited.max(search(topology, parent, &chain, depth + 1)?);
        }
        Ok(inherited)
    }
    let index = topology
        .nodes()
        .iter()
        .position(|n| n.name == node)
        .ok_or_else(|| not_windowed(node))?;
    search(topology, index, "", 0)
}

fn not_windowed(chain: &str) -> StreamsError {
    StreamsError::InvalidArgument(format!(
        "window close time is only defined for windowed computations; got [{chain}]"
    ))
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::TimeWindows {}
    impl Sealed for super::SlidingWindows {}
    impl Sealed for super::SessionWindows {}
}

/// The window definitions a grouped stream can be windowed by:
/// [`TimeWindows`] and [`SlidingWindows`] give a [`TimeWindowedKStream`],
/// [`SessionWindows`] a [`SessionWindowedKStream`].
pub trait WindowedBy<K, V>: private::Sealed {
    /// The windowed stream.
    type Output;

    /// Windows `grouped`; see [`KGroupedStream::windowed_by`].
    #[doc(hidden)]
    fn windowed(self, grouped: KGroupedStream<K, V>) -> Self::Output;
}

#[derive(Debug, Clone, Copy)]
enum TimeKind {
    Time(TimeWindows),
    Sliding(SlidingWindows),
}

impl<K, V> WindowedBy<K, V> for TimeWindows {
    type Output = TimeWindowedKStream<K, V>;
    fn windowed(self, grouped: KGroupedStream<K, V>) -> Self::Output {
        TimeWindowedKStream {
            grouped,
            windows: TimeKind::Time(self),
            retention: None,
        }
    }
}

impl<K, V> WindowedBy<K, V> for SlidingWindows {
    type Output = TimeWindowedKStream<K, V>;
    fn windowed(self, grouped: KGroupedStream<K, V>) -> Self::Output {
        TimeWindowedKStream {
            grouped,
            windows: TimeKind::Sliding(self),
            retention: None,
        }
    }
}

impl<K, V> WindowedBy<K, V> for SessionWindows {
    type Output = SessionWindowedKStream<K, V>;
    fn windowed(self, grouped: KGroupedStream<K, V>) -> Self::Output {
        SessionWindowedKStream {
            grouped,
            windows: self,
            retention: None,
        }
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedStream<K, V> {
    /// Windows the grouped stream for a windowed aggregation, Kafka's
    /// `windowedBy`: by [`TimeWindows`] (tumbling or hopping) or
    /// [`SlidingWindows`] into a [`TimeWindowedKStream`], by
    /// [`SessionWindows`] into a [`SessionWindowedKStream`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{TimeWindows, Windowed};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// let clicks = builder.stream::<String, String>("clicks");
    /// let tumbling = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let hopping = tumbling.advance_by(Duration::from_millis(5))?;
    /// // "user@window start" -> count
    /// let label = |k: Option<&Windowed<String>>, n: &i64| {
    ///     let k = k.unwrap();
    ///     (format!("{}@{}", k.key, k.window.start), *n)
    /// };
    /// clicks.clone().group_by_key().windowed_by(tumbling).count().to_stream().map(label).to("tumbling");
    /// clicks.group_by_key().windowed_by(hopping).count().to_stream().map(label).to("hopping");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let clicks_in = driver.create_input_topic("clicks", StringSerde, StringSerde);
    /// let tumbling = driver.create_output_topic("tumbling", StringSerde, I64Serde);
    /// let hopping = driver.create_output_topic("hopping", StringSerde, I64Serde);
    /// clicks_in.pipe_key_value_at("ann", "a", 3);
    /// clicks_in.pipe_key_value_at("ann", "b", 7);
    /// clicks_in.pipe_key_value_at("ann", "c", 12);
    /// assert_eq!(
    ///     tumbling.read_key_values_to_list(),
    ///     [KeyValue::pair("ann@0", 1), KeyValue::pair("ann@0", 2), KeyValue::pair("ann@10", 1)]
    /// );
    /// // Windows [0, 10), [5, 15) and [10, 20).
    /// assert_eq!(
    ///     hopping.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("ann@0", 1),
    ///         KeyValue::pair("ann@0", 2),
    ///         KeyValue::pair("ann@5", 1),
    ///         KeyValue::pair("ann@5", 2),
    ///         KeyValue::pair("ann@10", 1),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn windowed_by<W: WindowedBy<K, V>>(self, windows: W) -> W::Output {
        windows.windowed(self)
    }
}

/// Where an aggregation keeps its windows.
enum StoreDef {
    Window(WindowParams),
    Session { retention_ms: i64 },
}

/// What every windowed aggregation builds: the processor, its store, and
/// the result table.
struct Plan<K, VA> {
    prefix: &'static str,
    store: String,
    materialized: Materialized<K, VA>,
    store_def: StoreDef,
    grace_ms: i64,
    /// The serde of the result table's keys, from the inner key serde.
    windowed_serde: Box<dyn Fn(SerdeRef<K>) -> WindowedSerde<K>>,
    /// An error to report instead (a retention that is too short).
    invalid: Option<StreamsError>,
}

fn build<K, V, VA, P>(
    grouped: KGroupedStream<K, V>,
    plan: Plan<K, VA>,
    make: impl Fn(bool) -> P + 'static,
    getter: GetterSupplier<Windowed<K>, VA>,
) -> KTable<Windowed<K>, VA>
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
    VA: Clone + 'static,
    P: Processor<K, V, Windowed<K>, Change<VA>>,
{
    let KGroupedStream {
        mut stream,
        grouped,
        repartition_required,
    } = grouped;
    // As Kafka's `NamedInternal.orElseGenerateWithPrefix`: a given name
    // takes no number.
    let name = stream.take_name_or_generate(plan.prefix);
    let key_serde = grouped.key_serde.clone().or(stream.key_serde.clone());
    let value_serde = grouped.value_serde.clone().or(stream.value_serde.clone());
    if repartition_required {
        let base = grouped.name.clone().unwrap_or_else(|| plan.store.clone());
        stream = stream.through_internal_topic(&base, key_serde.clone(), value_serde);
    }
    let builder = stream.builder().clone();
    let store_key_serde = plan.materialized.key_serde.clone().or(key_serde);
    let table_value_serde = plan.materialized.value_serde.clone();
    let send_old = Rc::new(Cell::new(false));
    let parent = stream.node_name().to_owned();
    let flag = send_old.clone();
    let (store, logging, caching) = (
        plan.store.clone(),
        plan.materialized.logging,
        plan.materialized.caching,
    );
    let (ks, vs) = (store_key_serde.clone(), table_value_serde.clone());
    let (invalid, store_def, grace_ms) = (plan.invalid, plan.store_def, plan.grace_ms);
    builder.with_topology(|t| {
        if let Some(e) = invalid {
            return Err(e);
        }
        t.add_typed_processor::<K, V, Windowed<K>, Change<VA>, P, _>(
            &name,
            move || make(flag.get()),
            &[&parent],
        )?;
        match store_def {
            StoreDef::Window(params) => t.add_state_store(
                DslWindowStoreBuilder::<K, VA> {
                    name: store.clone(),
                    params,
                    key_serde: ks,
                    value_serde: vs,
                    logging,
                    caching,
                },
                &[&name],
            )?,
            StoreDef::Session { retention_ms } => t.add_state_store(
                DslSessionStoreBuilder::<K, VA> {
                    name: store.clone(),
                    retention_ms,
                    key_serde: ks,
                    value_serde: vs,
                    logging,
                    caching,
                },
                &[&name],
            )?,
        };
        register_grace(t, &store, grace_ms);
        Ok::<_, StreamsError>(())
    });
    let inner = store_key_serde.or_else(builtin_serde::<K>);
    let windowed_serde = plan.windowed_serde;
    let flag = send_old.clone();
    KTable {
        builder,
        node: name,
        key_serde: inner.map(|s| Arc::new(windowed_serde(s)) as SerdeRef<Windowed<K>>),
        value_serde: table_value_serde,
        store: Some(plan.store),
        send_old,
        enable_old: Rc::new(move || flag.set(true)),
        getter,
        next_name: None,
    }
}

fn window_getter<K: Ord + Clone + 'static, VA: Clone + 'static>(
    store: String,
) -> GetterSupplier<Windowed<K>, VA> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<Windowed<K>, VA> = Rc::new(move |lookup, key| {
            let store = lookup.timestamped_window::<K, VA>(&name)?;
            Ok(store
                .get(&key.key, key.window.start)
                .map(|vt| (vt.value.clone(), vt.timestamp)))
        });
        (vec![store.clone()], getter)
    })
}

fn session_getter<K: Ord + Clone + 'static, VA: Clone + 'static>(
    store: String,
) -> GetterSupplier<Windowed<K>, VA> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<Windowed<K>, VA> = Rc::new(move |lookup, key| {
            let store = lookup.session::<K, VA>(&name)?;
            Ok(store
                .fetch_session(&key.key, key.window.start, key.window.end)
                .map(|v| (v.clone(), key.window.end)))
        });
        (vec![store.clone()], getter)
    })
}

/// The store name of an aggregation: the given one, else a generated one.
fn store_name<K, V, VA>(
    grouped: &KGroupedStream<K, V>,
    prefix: &str,
    materialized: &Materialized<K, VA>,
) -> String
where
    K: Clone + 'static,
    V: Clone + 'static,
{
    match &materialized.name {
        Some(n) => n.clone(),
        None => grouped.stream.builder().new_store_name(prefix),
    }
}

/// The count functions: a null value counts too, as in Kafka.
fn count_fns<K: 'static, V: 'static>() -> AggFns<K, V, i64> {
    AggFns {
        init: Rc::new(|| Some(0)),
        add: Rc::new(|_, _, c| c.unwrap_or(0) + 1),
        tombstone: Some(Rc::new(|c| c.unwrap_or(0) + 1)),
    }
}

fn reduce_fns<K: 'static, V: Clone + 'static>(reducer: Rc<dyn Fn(&V, &V) -> V>) -> AggFns<K, V, V> {
    AggFns {
        init: Rc::new(|| None),
        add: Rc::new(move |_, v, agg| match agg {
            None => v.clone(),
            Some(agg) => reducer(&agg, v),
        }),
        tombstone: None,
    }
}

fn aggregate_fns<K: 'static, V: 'static, VA: 'static>(
    initializer: Rc<dyn Fn() -> VA>,
    aggregator: Rc<dyn Fn(&K, &V, VA) -> VA>,
) -> AggFns<K, V, VA> {
    let init = initializer.clone();
    AggFns {
        init: Rc::new(move || Some(init())),
        add: Rc::new(move |k, v, agg| aggregator(k, v, agg.unwrap_or_else(|| initializer()))),
        tombstone: None,
    }
}

/// `materialized` with `serde` as its value serde, unless it has one.
fn with_default_value_serde<K, VA>(
    materialized: Materialized<K, VA>,
    serde: Option<SerdeRef<VA>>,
) -> Materialized<K, VA> {
    Materialized {
        value_serde: materialized.value_serde.or(serde),
        ..materialized
    }
}

/// A grouped stream windowed by [`TimeWindows`] or [`SlidingWindows`],
/// ready to aggregate, Kafka's `TimeWindowedKStream`.
///
/// Each aggregation keeps its result in a window store named as Kafka
/// names it (`KSTREAM-AGGREGATE-STATE-STORE-0000000001`, or the name given
/// with [`Materialized::as_`]) and returns a `KTable<Windowed<K>, VA>`
/// whose key serde writes windowed keys as Kafka's `TimeWindowedSerde`
/// does. Every update is forwarded (the test driver has no cache), with
/// the largest timestamp of the records in the window.
///
/// The store keeps windows for a retention period: the window size (for
/// sliding windows, twice the time difference) plus the grace period,
/// unless set with [`with_retention`](TimeWindowedKStream::with_retention)
/// (Kafka's `Materialized.withRetention`), which must not be shorter.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::SlidingWindows;
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("clicks")
///     .group_by_key()
///     .windowed_by(SlidingWindows::of_time_difference_with_no_grace(Duration::from_secs(10))?)
///     .reduce(|a, b| format!("{a},{b}"))
///     .to_stream()
///     .to_with("recent", streams_core::Produced::with(
///         streams_core::dsl::WindowedSerde::time(streams_core::serde::StringSerde),
///         streams_core::serde::StringSerde,
///     ));
/// assert_eq!(builder.build()?.store_names(), ["KSTREAM-REDUCE-STATE-STORE-0000000001"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TimeWindowedKStream<K, V> {
    grouped: KGroupedStream<K, V>,
    windows: TimeKind,
    retention: Option<Duration>,
}

impl<K, V> fmt::Debug for TimeWindowedKStream<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeWindowedKStream")
            .field("grouped", &self.grouped)
            .field("windows", &self.windows)
            .field("retention", &self.retention)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> TimeWindowedKStream<K, V> {
    /// Keeps the windows for `retention` instead of the default (window
    /// size plus grace period; for sliding windows, twice the time
    /// difference plus grace), as Kafka's `Materialized.withRetention`;
    /// [`Materialized::with_retention`] on the aggregation wins over it.
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = Some(retention);
        self
    }

    fn plan<VA>(
        &self,
        prefix: &'static str,
        store: String,
        materialized: Materialized<K, VA>,
    ) -> Plan<K, VA> {
        let retention = materialized
            .retention
            .or(self.retention)
            .map(|r| millis(r, "retention period"))
            .transpose();
        let (size_ms, grace_ms, minimum, what) = match self.windows {
            TimeKind::Time(w) => (
                w.size_ms(),
                w.grace_ms(),
                w.size_ms().saturating_add(w.grace_ms()),
                "its window size plus the grace period",
            ),
            TimeKind::Sliding(w) => (
                w.time_difference_ms(),
                w.grace_ms(),
                w.time_difference_ms()
                    .saturating_mul(2)
                    .saturating_add(w.grace_ms()),
                "2 * time difference plus the grace period",
            ),
        };
        let (retention_ms, invalid) = match retention {
            Err(e) => (minimum, Some(e)),
            Ok(None) => (minimum, None),
            Ok(Some(r)) if r < minimum => (
                r,
                Some(StreamsError::InvalidArgument(format!(
                    "the retention period of the window store {store} must be no smaller than {what}; \
                     got size=[{size_ms}], grace=[{grace_ms}], retention=[{r}]"
                ))),
            ),
            Ok(Some(r)) => (r, None),
        };
        Plan {
            prefix,
            store,
            materialized,
            store_def: StoreDef::Window(WindowParams {
                retention_ms,
                window_size_ms: size_ms,
                retain_duplicates: false,
            }),
            grace_ms,
            windowed_serde: Box::new(move |inner| WindowedSerde::time_with_size_ms(inner, size_ms)),
            invalid,
        }
    }

    fn aggregate_impl<VA: Clone + 'static>(
        self,
        prefix: &'static str,
        store: String,
        materialized: Materialized<K, VA>,
        fns: AggFns<K, V, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let plan = self.plan(prefix, store.clone(), materialized);
        let getter = window_getter::<K, VA>(store.clone());
        match self.windows {
            TimeKind::Time(windows) => build(
                self.grouped,
                plan,
                move |send_old| TimeWindowAggregate {
                    store: store.clone(),
                    windows,
                    fns: fns.clone(),
                    send_old,
                    observed_stream_time: -1,
                    cache: Default::default(),
                },
                getter,
            ),
            TimeKind::Sliding(windows) => build(
                self.grouped,
                plan,
                move |send_old| SlidingWindowAggregate {
                    store: store.clone(),
                    time_difference_ms: windows.time_difference_ms(),
                    grace_ms: windows.grace_ms(),
                    fns: fns.clone(),
                    send_old,
                    observed_stream_time: -1,
                    cache: Default::default(),
                },
                getter,
            ),
        }
    }

    /// Counts the records per key and window, Kafka's `count()`. Records
    /// with a null key are dropped and counted; a record with a null value
    /// is counted, as Kafka's windowed count does (except over sliding
    /// windows, which drop it). `reduce` and `aggregate`, whose closures
    /// see `&V`, drop and count records with a null value.
    ///
    /// See the example of
    /// [`KGroupedStream::windowed_by`](crate::dsl::KGroupedStream::windowed_by),
    /// with tumbling and hopping windows.
    pub fn count(self) -> KTable<Windowed<K>, i64> {
        let materialized = Materialized::default().with_value_serde(I64Serde);
        let store = store_name(&self.grouped, "KSTREAM-AGGREGATE-", &materialized);
        self.aggregate_impl("KSTREAM-AGGREGATE-", store, materialized, count_fns())
    }

    /// As [`TimeWindowedKStream::count`], with the store from
    /// `materialized`. An unnamed store uses one more number of the name
    /// counter, as in Kafka.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<Windowed<K>, i64> {
        self.burn_name_for_count(&materialized);
        let materialized = with_default_value_serde(materialized, Some(Arc::new(I64Serde)));
        let store = store_name(&self.grouped, "KSTREAM-AGGREGATE-", &materialized);
        self.aggregate_impl("KSTREAM-AGGREGATE-", store, materialized, count_fns())
    }

    fn burn_name_for_count(&self, materialized: &Materialized<K, i64>) {
        // Kafka's `count(Materialized)` burns a store name for topology
        // compatibility, for time windows only.
        if materialized.name.is_none() && matches!(self.windows, TimeKind::Time(_)) {
            self.grouped
                .stream
                .builder()
                .new_store_name("KSTREAM-AGGREGATE-");
        }
    }

    /// Combines the values per key and window, Kafka's `reduce`: the first
    /// value is the aggregate, then `reducer(aggregate, value)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SlidingWindows, Windowed};
    /// use streams_core::serde::StringSerde;
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("pages")
    ///     .group_by_key()
    ///     .windowed_by(SlidingWindows::of_time_difference_with_no_grace(Duration::from_millis(10))?)
    ///     .reduce(|a, b| format!("{a},{b}"))
    ///     .to_stream()
    ///     .map(|k: Option<&Windowed<String>>, v: &String| {
    ///         let w = k.unwrap().window;
    ///         (format!("{}-{}", w.start, w.end), v.clone())
    ///     })
    ///     .to("recent-pages");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let pages = driver.create_input_topic("pages", StringSerde, StringSerde);
    /// let recent = driver.create_output_topic("recent-pages", StringSerde, StringSerde);
    /// pages.pipe_key_value_at("ann", "home", 20);
    /// pages.pipe_key_value_at("ann", "cart", 25);
    /// pages.pipe_key_value_at("ann", "pay", 40);
    /// // Each record's window ends at it; "cart" also fills the window just
    /// // after "home" (21-31).
    /// assert_eq!(
    ///     recent.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("10-20", "home"),
    ///         KeyValue::pair("21-31", "cart"),
    ///         KeyValue::pair("15-25", "home,cart"),
    ///         KeyValue::pair("30-40", "pay"),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(self, reducer: impl Fn(&V, &V) -> V + 'static) -> KTable<Windowed<K>, V> {
        self.reduce_with(reducer, Materialized::default())
    }

    /// As [`TimeWindowedKStream::reduce`], with the store from `materialized`.
    pub fn reduce_with(
        self,
        reducer: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<Windowed<K>, V> {
        let serde = self.grouped.grouped.value_serde.clone().or(self
            .grouped
            .stream
            .value_serde
            .clone());
        let materialized = with_default_value_serde(materialized, serde);
        let store = store_name(&self.grouped, "KSTREAM-REDUCE-", &materialized);
        self.aggregate_impl(
            "KSTREAM-REDUCE-",
            store,
            materialized,
            reduce_fns(Rc::new(reducer)),
        )
    }

    /// Aggregates the values per key and window, Kafka's `aggregate`: each
    /// window starts from `initializer()`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{TimeWindows, Windowed};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, i64>("amounts")
    ///     .group_by_key()
    ///     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?)
    ///     .aggregate(|| 100_i64, |_, amount, total| total + amount)
    ///     .to_stream()
    ///     .map(|k: Option<&Windowed<String>>, v: &i64| (k.unwrap().window.start.to_string(), *v))
    ///     .to("totals");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let amounts = driver.create_input_topic("amounts", StringSerde, I64Serde);
    /// let totals = driver.create_output_topic("totals", StringSerde, I64Serde);
    /// amounts.pipe_key_value_at("ann", 5, 1);
    /// amounts.pipe_key_value_at("ann", 7, 2);
    /// amounts.pipe_key_value_at("ann", 1, 15); // a new window starts from 100
    /// assert_eq!(
    ///     totals.read_key_values_to_list(),
    ///     [KeyValue::pair("0", 105), KeyValue::pair("0", 112), KeyValue::pair("10", 101)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> KTable<Windowed<K>, VA> {
        self.aggregate_with(initializer, aggregator, Materialized::default())
    }

    /// As [`TimeWindowedKStream::aggregate`], with the store from `materialized`.
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let store = store_name(&self.grouped, "KSTREAM-AGGREGATE-", &materialized);
        self.aggregate_impl(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            aggregate_fns(Rc::new(initializer), Rc::new(aggregator)),
        )
    }
}

/// A grouped stream windowed by [`SessionWindows`], ready to aggregate,
/// Kafka's `SessionWindowedKStream`.
///
/// A record joins every session of its key that ends no earlier than
/// `gap` before it and starts no later than `gap` after it; when that
/// merges sessions, each merged session is deleted downstream (a
/// tombstone at its end time) before the merged one is forwarded.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::SessionWindows;
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("clicks")
///     .group_by_key()
///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_secs(300))?)
///     .count()
///     .to_stream()
///     .to("sessions");
/// assert_eq!(builder.build()?.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000001"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SessionWindowedKStream<K, V> {
    grouped: KGroupedStream<K, V>,
    windows: SessionWindows,
    retention: Option<Duration>,
}

impl<K, V> fmt::Debug for SessionWindowedKStream<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionWindowedKStream")
            .field("grouped", &self.grouped)
            .field("windows", &self.windows)
            .field("retention", &self.retention)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> SessionWindowedKStream<K, V> {
    /// Keeps sessions for `retention` after they end instead of the
    /// default (gap plus grace period), as Kafka's `Materialized.withRetention`;
    /// [`Materialized::with_retention`] on the aggregation wins over it.
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = Some(retention);
        self
    }

    fn aggregate_impl<VA: Clone + 'static>(
        self,
        prefix: &'static str,
        store: String,
        materialized: Materialized<K, VA>,
        fns: AggFns<K, V, VA>,
        merge: MergeFn<K, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let w = self.windows;
        let minimum = w.inactivity_gap_ms().saturating_add(w.grace_ms());
        let (retention_ms, invalid) = match materialized
            .retention
            .or(self.retention)
            .map(|r| millis(r, "retention period"))
            .transpose()
        {
            Err(e) => (minimum, Some(e)),
            Ok(None) => (minimum, None),
            Ok(Some(r)) if r < minimum => (
                r,
                Some(StreamsError::InvalidArgument(format!(
                    "the retention period of the session store {store} must be no smaller than the session \
                     inactivity gap plus the grace period; got gap=[{}], grace=[{}], retention=[{r}]",
                    w.inactivity_gap_ms(),
                    w.grace_ms()
                ))),
            ),
            Ok(Some(r)) => (r, None),
        };
        let plan = Plan {
            prefix,
            store: store.clone(),
            materialized,
            store_def: StoreDef::Session { retention_ms },
            grace_ms: w.grace_ms().saturating_add(w.inactivity_gap_ms()),
            windowed_serde: Box::new(WindowedSerde::session_ref),
            invalid,
        };
        let getter = session_getter::<K, VA>(store.clone());
        build(
            self.grouped,
            plan,
            move |send_old| SessionWindowAggregate {
                store: store.clone(),
                windows: w,
                fns: fns.clone(),
                merge: merge.clone(),
                send_old,
                observed_stream_time: -1,
                cache: Default::default(),
                view: None,
            },
            getter,
        )
    }

    /// Counts the records per key and session, Kafka's `count()`. Records
    /// with a null key are dropped and counted; a null value is counted, as
    /// in Kafka (`reduce` and `aggregate` drop and count it).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed, WindowedSerde};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{Produced, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by_key()
    ///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?)
    ///     .count()
    ///     .to_stream()
    ///     .to_with("sessions", Produced::with(WindowedSerde::session(StringSerde), I64Serde));
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
    /// let sessions = driver.create_output_topic("sessions", WindowedSerde::session(StringSerde), I64Serde);
    /// let session = |start, end| Windowed::new("ann".to_string(), Window::new(start, end));
    /// clicks.pipe_key_value_at("ann", "a", 0);
    /// clicks.pipe_key_value_at("ann", "b", 5); // within the gap: the sessions merge
    /// clicks.pipe_key_value_at("ann", "c", 30); // a new session
    /// assert_eq!(
    ///     sessions.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair(session(0, 0), 1),
    ///         KeyValue::tombstone(session(0, 0)),
    ///         KeyValue::pair(session(0, 5), 2),
    ///         KeyValue::pair(session(30, 30), 1),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(self) -> KTable<Windowed<K>, i64> {
        let materialized = Materialized::default().with_value_serde(I64Serde);
        self.count_impl(materialized)
    }

    /// As [`SessionWindowedKStream::count`], with the store from
    /// `materialized`. An unnamed store uses one more number of the name
    /// counter, as in Kafka.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<Windowed<K>, i64> {
        if materialized.name.is_none() {
            self.grouped
                .stream
                .builder()
                .new_store_name("KSTREAM-AGGREGATE-");
        }
        let materialized = with_default_value_serde(materialized, Some(Arc::new(I64Serde)));
        self.count_impl(materialized)
    }

    fn count_impl(self, materialized: Materialized<K, i64>) -> KTable<Windowed<K>, i64> {
        let store = store_name(&self.grouped, "KSTREAM-AGGREGATE-", &materialized);
        self.aggregate_impl(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            count_fns(),
            Rc::new(|_, a, b| a.unwrap_or(0) + b),
        )
    }

    /// Combines the values per key and session, Kafka's `reduce`; merged
    /// sessions are combined with the reducer too.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed};
    /// use streams_core::serde::StringSerde;
    /// use streams_core::{Materialized, StreamsBuilder};
    /// use streams_test::TopologyTestDriver;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("pages")
    ///     .group_by_key()
    ///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?)
    ///     .reduce_with(
    ///         |a, b| format!("{a} > {b}"),
    ///         Materialized::as_("visits").with_retention(Duration::from_secs(60)),
    ///     );
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let pages = driver.create_input_topic("pages", StringSerde, StringSerde);
    /// pages.pipe_key_value_at("ann", "home", 0);
    /// pages.pipe_key_value_at("ann", "cart", 5);
    /// pages.pipe_key_value_at("ann", "home", 30);
    /// let visits = driver.session_store::<String, String>("visits")?;
    /// let session = |start, end| Windowed::new("ann".to_string(), Window::new(start, end));
    /// assert_eq!(
    ///     visits.fetch(&"ann".to_string()),
    ///     [(session(0, 5), "home > cart".to_string()), (session(30, 30), "home".to_string())]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(self, reducer: impl Fn(&V, &V) -> V + 'static) -> KTable<Windowed<K>, V> {
        self.reduce_with(reducer, Materialized::default())
    }

    /// As [`SessionWindowedKStream::reduce`], with the store from `materialized`.
    pub fn reduce_with(
        self,
        reducer: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<Windowed<K>, V> {
        let serde = self.grouped.grouped.value_serde.clone().or(self
            .grouped
            .stream
            .value_serde
            .clone());
        let materialized = with_default_value_serde(materialized, serde);
        let store = store_name(&self.grouped, "KSTREAM-REDUCE-", &materialized);
        let reducer: Rc<dyn Fn(&V, &V) -> V> = Rc::new(reducer);
        let r = reducer.clone();
        self.aggregate_impl(
            "KSTREAM-REDUCE-",
            store,
            materialized,
            reduce_fns(reducer),
            Rc::new(move |_, a, b| match a {
                None => b.clone(),
                Some(a) => r(&a, b),
            }),
        )
    }

    /// Aggregates the values per key and session, Kafka's `aggregate`:
    /// each session starts from `initializer()`, and when sessions merge,
    /// `merger(key, one, other)` combines their aggregates.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{Materialized, StreamsBuilder};
    /// use streams_test::TopologyTestDriver;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, i64>("amounts")
    ///     .group_by_key()
    ///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?)
    ///     .aggregate_with(
    ///         || 0_i64,
    ///         |_, amount, total| total + amount,
    ///         |_, one, other| one + other, // merges two sessions
    ///         Materialized::as_("spent").with_value_serde(I64Serde),
    ///     );
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let amounts = driver.create_input_topic("amounts", StringSerde, I64Serde);
    /// amounts.pipe_key_value_at("ann", 5, 0);
    /// amounts.pipe_key_value_at("ann", 7, 18);
    /// amounts.pipe_key_value_at("ann", 1, 9); // bridges both sessions: they merge
    /// let spent = driver.session_store::<String, i64>("spent")?;
    /// let session = |start, end| Windowed::new("ann".to_string(), Window::new(start, end));
    /// assert_eq!(spent.fetch(&"ann".to_string()), [(session(0, 18), 13)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
        merger: impl Fn(&K, &VA, &VA) -> VA + 'static,
    ) -> KTable<Windowed<K>, VA> {
        self.aggregate_with(initializer, aggregator, merger, Materialized::default())
    }

    /// As [`SessionWindowedKStream::aggregate`], with the store from `materialized`.
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
        merger: impl Fn(&K, &VA, &VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<Windowed<K>, VA> {
        let store = store_name(&self.grouped, "KSTREAM-AGGREGATE-", &materialized);
        let initializer: Rc<dyn Fn() -> VA> = Rc::new(initializer);
        let init = initializer.clone();
        self.aggregate_impl(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            aggregate_fns(initializer, Rc::new(aggregator)),
            Rc::new(move |k, a, b| merger(k, &a.unwrap_or_else(|| init()), b)),
        )
    }
}
