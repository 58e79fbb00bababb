//! [`TimeWindowedKStream`]: a grouped stream windowed by time or sliding
//! windows, and its `count`, `reduce` and `aggregate` into a window store.

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use super::windowed_stream::{
    Plan, StoreDef, TimeKind, aggregate_fns, build, count_fns, reduce_fns, retention_ms,
    store_name, window_getter, with_default_value_serde,
};
use crate::dsl::window_processors::{AggFns, SlidingWindowAggregate, TimeWindowAggregate};
use crate::dsl::{KGroupedStream, KTable, Materialized, Windowed, WindowedSerde};
use crate::error::StoreKind;
use crate::serde::I64Serde;
use crate::state::WindowParams;

/// A grouped stream windowed by [`TimeWindows`](crate::dsl::TimeWindows)
/// or [`SlidingWindows`](crate::dsl::SlidingWindows), ready to aggregate,
/// Kafka's `TimeWindowedKStream`.
///
/// Each aggregation keeps its result in a window store named as Kafka
/// names it (`KSTREAM-AGGREGATE-STATE-STORE-0000000001`, or the name given
/// with [`Materialized::as_`]) and returns a `KTable<Windowed<K>, VA>`
/// whose key serde writes windowed keys as Kafka's `TimeWindowedSerde`
/// does. Results carry the largest timestamp of the records in the
/// window and go through Kafka's record cache: one result per window and
/// input record, every update with caching disabled (see the
/// [`dsl`](crate::dsl) docs on the record cache).
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
    pub(super) grouped: KGroupedStream<K, V>,
    pub(super) windows: TimeKind,
    pub(super) retention: Option<Duration>,
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
    /// Names the aggregation node of the next `count`, `reduce` or
    /// `aggregate`, Kafka's forms of them that take a `Named`. As in Kafka
    /// the name takes a number of the counter all the same, and names
    /// neither the store nor the repartition topic.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::StreamsBuilder;
    /// use streams_core::dsl::TimeWindows;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by_key()
    ///     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?)
    ///     .named("clicks-per-minute")
    ///     .count()
    ///     .to_stream()
    ///     .map(|w, n| (w.map(|w| w.key.clone()).unwrap_or_default(), *n))
    ///     .to("counts");
    /// assert!(builder.build()?.node_names().contains(&"clicks-per-minute"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.grouped = self.grouped.named(name);
        self
    }

    /// Keeps the windows for `retention` instead of the default (window
    /// size plus grace period; for sliding windows, twice the time
    /// difference plus grace), as Kafka's `Materialized.withRetention`;
    /// [`Materialized::with_retention`] on the aggregation wins over it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::Materialized;
    /// use streams_core::dsl::TimeWindows;
    /// use streams_test::example;
    ///
    /// let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let clicks = builder.stream::<String, String>("clicks").group_by_key();
    ///     clicks.clone().windowed_by(windows).count_with(Materialized::as_("recent")); // keeps 10 ms
    ///     clicks.windowed_by(windows).with_retention(Duration::from_secs(60)).count_with(Materialized::as_("last-minute"));
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
    /// clicks.pipe_key_value_at("ann", "a", 1);
    /// clicks.pipe_key_value_at("ann", "b", 35);
    /// let ann = "ann".to_owned();
    /// // Stream time 35: the window at 0 is past a retention of 10 ms.
    /// assert_eq!(driver.window_store::<String, i64>("recent")?.fetch(&ann, 0..), [(30, 1)]);
    /// assert_eq!(driver.window_store::<String, i64>("last-minute")?.fetch(&ann, 0..), [(0, 1), (30, 1)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
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
        time_plan(self.windows, self.retention, prefix, store, materialized)
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
                    view: None,
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
                    view: None,
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
    ///
    /// The example of [`TimeWindowedKStream::with_retention`] shows `count_with`.
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
    /// use streams_test::{KeyValue, example};
    ///
    /// let windows = SlidingWindows::of_time_difference_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("pages")
    ///         .group_by_key()
    ///         .windowed_by(windows)
    ///         .reduce(|a, b| format!("{a},{b}"))
    ///         .to_stream()
    ///         .map(|k: Option<&Windowed<String>>, v: &String| {
    ///             let w = k.unwrap().window;
    ///             (format!("{}-{}", w.start, w.end), v.clone())
    ///         })
    ///         .to("recent-pages");
    /// });
    /// let pages = driver.input::<String, String>("pages");
    /// let recent = driver.output::<String, String>("recent-pages");
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
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::Materialized;
    /// use streams_core::dsl::TimeWindows;
    /// use streams_test::example;
    ///
    /// let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, i64>("temperatures")
    ///         .group_by_key()
    ///         .windowed_by(windows)
    ///         // Windows are kept a minute, not just their 10 ms.
    ///         .reduce_with(|a, b| *a.max(b), Materialized::as_("highest").with_retention(Duration::from_secs(60)));
    /// });
    /// let temperatures = driver.input::<String, i64>("temperatures");
    /// temperatures.pipe_key_value_at("room", 20, 1);
    /// temperatures.pipe_key_value_at("room", 23, 4);
    /// temperatures.pipe_key_value_at("room", 21, 12);
    /// let highest = driver.window_store::<String, i64>("highest")?;
    /// assert_eq!(highest.fetch(&"room".to_owned(), 0..), [(0, 23), (10, 21)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
    /// use streams_test::{KeyValue, example};
    ///
    /// let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, i64>("amounts")
    ///         .group_by_key()
    ///         .windowed_by(windows)
    ///         .aggregate(|| 100_i64, |_, amount, total| total + amount)
    ///         .to_stream()
    ///         .map(|k: Option<&Windowed<String>>, v: &i64| (k.unwrap().window.start.to_string(), *v))
    ///         .to("totals");
    /// });
    /// let amounts = driver.input::<String, i64>("amounts");
    /// let totals = driver.output::<String, i64>("totals");
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
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::Materialized;
    /// use streams_core::dsl::TimeWindows;
    /// use streams_test::example;
    ///
    /// // Hopping windows of 10 ms every 5 ms.
    /// let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?.advance_by(Duration::from_millis(5))?;
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("messages").group_by_key().windowed_by(windows).aggregate_with(
    ///         || 0_i64,
    ///         |_, text: &String, chars| chars + text.len() as i64,
    ///         Materialized::as_("chars"),
    ///     );
    /// });
    /// let messages = driver.input::<String, String>("messages");
    /// messages.pipe_key_value_at("ann", "hi", 3); // in [0, 10) only
    /// messages.pipe_key_value_at("ann", "bye", 7); // in [0, 10) and [5, 15)
    /// let chars = driver.window_store::<String, i64>("chars")?;
    /// assert_eq!(chars.fetch(&"ann".to_owned(), 0..), [(0, 5), (5, 3)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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

/// The store and grace period of an aggregation over time or sliding
/// `windows` (its retention: `materialized`'s, else `retention`, else the
/// minimum), shared by [`TimeWindowedKStream`] and the windowed cogroup.
pub(super) fn time_plan<K: 'static, VA>(
    windows: TimeKind,
    retention: Option<Duration>,
    prefix: &'static str,
    store: String,
    materialized: Materialized<K, VA>,
) -> Plan<K, VA> {
    let (size_ms, grace_ms, minimum, what) = match windows {
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
    let given = materialized.retention.or(retention);
    let (retention_ms, invalid) = retention_ms(given, (minimum, what), &store, StoreKind::Window);
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
