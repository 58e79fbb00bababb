//! Windowed aggregation: [`KGroupedStream::windowed_by`],
//! [`TimeWindowedKStream`] (time and sliding windows) and
//! [`SessionWindowedKStream`].
//!
//! Each aggregation keeps its result in a window (or session) store named
//! as Kafka names it (`KSTREAM-AGGREGATE-STATE-STORE-0000000001`, or the
//! name given with [`Materialized::as_`]) and returns a
//! `KTable<Windowed<K>, VA>` whose key serde writes windowed keys as
//! Kafka's windowed serdes do. Results carry the largest timestamp of the
//! records in the window (for sessions, the session's end) and go through
//! Kafka's record cache (see `dsl::cache`): one result per window and input
//! record, or every update when caching is off
//! ([`Materialized::with_caching_disabled`], or a cache size of 0):
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{Materialized, TimeWindows, WindowedSerde};
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_test::example;
//!
//! let minute = TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?;
//! let counts = |materialized: Materialized<String, i64>| {
//!     let driver = example(|builder| {
//!         builder
//!             .stream::<String, String>("clicks")
//!             .flat_map_values(|v: &String| v.split(' ').map(str::to_owned).collect::<Vec<_>>())
//!             .group_by_key()
//!             .windowed_by(minute)
//!             .count_with(materialized)
//!             .to_stream()
//!             .to("counts");
//!     });
//!     driver.input::<String, String>("clicks").pipe_key_value("ann", "a b");
//!     let out = driver.create_output_topic("counts", WindowedSerde::time(StringSerde), I64Serde);
//!     out.read_values_to_list()
//! };
//! assert_eq!(counts(Materialized::as_("cached")), [Some(2)]);
//! assert_eq!(counts(Materialized::as_("uncached").with_caching_disabled()), [Some(1), Some(2)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The store keeps windows for a retention period: the window size (for
//! sliding windows twice the time difference; for sessions the gap) plus
//! the grace period, unless set with `with_retention` (Kafka's
//! `Materialized.withRetention`), which must not be shorter.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::TimeWindows;
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

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::dsl::ktable::GetterSupplier;
use crate::dsl::session_windowed_stream::SessionWindowedKStream;
use crate::dsl::table_processors::ValueGetter;
use crate::dsl::time_windowed_stream::TimeWindowedKStream;
use crate::dsl::window_processors::AggFns;
use crate::dsl::{
    KGroupedStream, KTable, Materialized, SessionWindows, SlidingWindows, TimeWindows, Windowed,
    WindowedSerde,
};
use crate::error::{StoreKind, StreamsError};
use crate::processor::Processor;
use crate::record::Change;
use crate::serde::{SerdeRef, builtin_serde};
use crate::state::{SessionStore, TimestampedWindowStore, WindowParams};
use crate::time::millis;

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
pub(super) enum TimeKind {
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
    /// use streams_test::{KeyValue, example};
    ///
    /// let tumbling = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let hopping = tumbling.advance_by(Duration::from_millis(5))?;
    /// // "user@window start" -> count
    /// let label = |k: Option<&Windowed<String>>, n: &i64| {
    ///     let k = k.unwrap();
    ///     (format!("{}@{}", k.key, k.window.start), *n)
    /// };
    /// let driver = example(|builder| {
    ///     let clicks = builder.stream::<String, String>("clicks");
    ///     clicks.clone().group_by_key().windowed_by(tumbling).count().to_stream().map(label).to("tumbling");
    ///     clicks.group_by_key().windowed_by(hopping).count().to_stream().map(label).to("hopping");
    /// });
    /// let clicks_in = driver.input::<String, String>("clicks");
    /// let tumbling = driver.output::<String, i64>("tumbling");
    /// let hopping = driver.output::<String, i64>("hopping");
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
    #[doc(alias = "windowedBy")]
    pub fn windowed_by<W: WindowedBy<K, V>>(self, windows: W) -> W::Output {
        windows.windowed(self)
    }
}

/// The store's retention: the one given (on the aggregation's
/// `Materialized`, else with `with_retention` on the windowed stream),
/// which must be no smaller than `minimum`, else `minimum`; with the error
/// to report when the topology is built if the given one is too short
/// (the minimum is `minimum`, in words `what`) or does not fit in an `i64`
/// of milliseconds.
pub(super) fn retention_ms(
    given: Option<Duration>,
    (minimum, what): (i64, &'static str),
    store: &str,
    kind: StoreKind,
) -> (i64, Option<StreamsError>) {
    match given.map(|r| millis(r, "retention period")).transpose() {
        Err(e) => (minimum, Some(e)),
        Ok(None) => (minimum, None),
        Ok(Some(r)) if r < minimum => (
            r,
            Some(StreamsError::RetentionTooShort {
                store: store.to_owned(),
                kind,
                retention_ms: r,
                minimum_ms: minimum,
                minimum: what,
            }),
        ),
        Ok(Some(r)) => (r, None),
    }
}

/// Where an aggregation keeps its windows.
pub(super) enum StoreDef {
    Window(WindowParams),
    Session { retention_ms: i64 },
}

/// What every windowed aggregation builds: the processor, its store, and
/// the result table.
pub(super) struct Plan<K, VA> {
    pub(super) prefix: &'static str,
    pub(super) store: String,
    pub(super) materialized: Materialized<K, VA>,
    pub(super) store_def: StoreDef,
    pub(super) grace_ms: i64,
    /// The serde of the result table's keys, from the inner key serde.
    pub(super) windowed_serde: Box<dyn Fn(SerdeRef<K>) -> WindowedSerde<K>>,
    /// An error to report instead (a retention that is too short).
    pub(super) invalid: Option<StreamsError>,
}

pub(super) fn build<K, V, VA, P>(
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
    stream.builder().refuse_versioned(
        &plan.materialized,
        &format!("window store `{}`", plan.store),
    );
    // As Kafka's `NamedInternal.orElseGenerateWithPrefix`: a given name
    // takes a number all the same.
    let name = stream.take_name_and_number(plan.prefix);
    let key_serde = grouped.key_serde.clone().or(stream.key_serde.clone());
    let value_serde = grouped.value_serde.clone().or(stream.value_serde.clone());
    if repartition_required {
        let base = grouped.name.clone().unwrap_or_else(|| plan.store.clone());
        stream = stream.through_internal_topic(&base, key_serde.clone(), value_serde, None);
    }
    let builder = stream.builder().clone();
    let store_key_serde = plan.materialized.key_serde.clone().or(key_serde);
    let table_value_serde = plan.materialized.value_serde.clone();
    let send_old = Rc::new(Cell::new(false));
    let parent = stream.node_name().to_owned();
    let flag = send_old.clone();
    let (store, materialized) = (plan.store.clone(), plan.materialized);
    let ks = store_key_serde.clone();
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
                materialized.store_builder::<TimestampedWindowStore<K, VA>>(
                    &store,
                    params.into(),
                    ks,
                ),
                &[&name],
            )?,
            StoreDef::Session { retention_ms } => t.add_state_store(
                materialized.store_builder::<SessionStore<K, VA>>(
                    &store,
                    Duration::from_millis(retention_ms.unsigned_abs()),
                    ks,
                ),
                &[&name],
            )?,
        };
        t.set_window_grace(&store, grace_ms);
        Ok::<_, StreamsError>(())
    });
    let inner = store_key_serde.or_else(builtin_serde::<K>);
    let windowed_serde = plan.windowed_serde;
    let key_serde = inner.map(|s| Arc::new(windowed_serde(s)) as SerdeRef<Windowed<K>>);
    KTable::new(builder, name, Rc::new(move || send_old.set(true)), getter)
        .with_serdes(key_serde, table_value_serde)
        .with_store(Some(plan.store))
}

pub(super) fn window_getter<K: Ord + Clone + 'static, VA: Clone + 'static>(
    store: String,
) -> GetterSupplier<Windowed<K>, VA> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<Windowed<K>, VA> = Rc::new(move |lookup, key| {
            let store = lookup.timestamped_window::<K, VA>(&name)?;
            Ok(store
                .get(&key.key, key.window.start)?
                .map(|vt| (vt.value, vt.timestamp)))
        });
        (vec![store.clone()], getter)
    })
}

pub(super) fn session_getter<K: Ord + Clone + 'static, VA: Clone + 'static>(
    store: String,
) -> GetterSupplier<Windowed<K>, VA> {
    Rc::new(move || {
        let name = store.clone();
        let getter: ValueGetter<Windowed<K>, VA> = Rc::new(move |lookup, key| {
            let store = lookup.session::<K, VA>(&name)?;
            Ok(store
                .fetch_session(&key.key, key.window.start, key.window.end)?
                .map(|v| (v, key.window.end)))
        });
        (vec![store.clone()], getter)
    })
}

/// The store name of an aggregation: the given one, else a generated one.
pub(super) fn store_name<K, V, VA>(
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
pub(super) fn count_fns<K: 'static, V: 'static>() -> AggFns<K, V, i64> {
    AggFns {
        init: Rc::new(|| Some(0)),
        add: Rc::new(|_, _, c| c.unwrap_or(0) + 1),
        tombstone: Some(Rc::new(|c| c.unwrap_or(0) + 1)),
    }
}

pub(super) fn reduce_fns<K: 'static, V: Clone + 'static>(
    reducer: Rc<dyn Fn(&V, &V) -> V>,
) -> AggFns<K, V, V> {
    AggFns {
        init: Rc::new(|| None),
        add: Rc::new(move |_, v, agg| match agg {
            None => v.clone(),
            Some(agg) => reducer(&agg, v),
        }),
        tombstone: None,
    }
}

pub(super) fn aggregate_fns<K: 'static, V: 'static, VA: 'static>(
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
pub(super) fn with_default_value_serde<K, VA>(
    materialized: Materialized<K, VA>,
    serde: Option<SerdeRef<VA>>,
) -> Materialized<K, VA> {
    Materialized {
        value_serde: materialized.value_serde.or(serde),
        ..materialized
    }
}
