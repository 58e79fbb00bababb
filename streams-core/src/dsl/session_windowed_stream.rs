//! [`SessionWindowedKStream`]: a grouped stream windowed by sessions, and
//! its `count`, `reduce` and `aggregate` into a session store.

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use super::windowed_stream::{
    Plan, StoreDef, aggregate_fns, build, count_fns, reduce_fns, retention_ms, session_getter,
    store_name, with_default_value_serde,
};
use crate::dsl::window_processors::{AggFns, MergeFn, SessionWindowAggregate};
use crate::dsl::{KGroupedStream, KTable, Materialized, SessionWindows, Windowed, WindowedSerde};
use crate::error::StoreKind;
use crate::serde::I64Serde;

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
    pub(super) grouped: KGroupedStream<K, V>,
    pub(super) windows: SessionWindows,
    pub(super) retention: Option<Duration>,
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
    /// Names the aggregation node of the next `count`, `reduce` or
    /// `aggregate`, Kafka's forms of them that take a `Named`. As in Kafka
    /// the name takes a number of the counter all the same, and names
    /// neither the store nor the repartition topic.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::StreamsBuilder;
    /// use streams_core::dsl::SessionWindows;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by_key()
    ///     .windowed_by(SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_secs(300))?)
    ///     .named("clicks-per-session")
    ///     .count()
    ///     .to_stream()
    ///     .map(|w, n| (w.map(|w| w.key.clone()).unwrap_or_default(), *n))
    ///     .to("counts");
    /// assert!(builder.build()?.node_names().contains(&"clicks-per-session"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.grouped = self.grouped.named(name);
        self
    }

    /// Keeps sessions for `retention` after they end instead of the
    /// default (gap plus grace period), as Kafka's `Materialized.withRetention`;
    /// [`Materialized::with_retention`] on the aggregation wins over it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::Materialized;
    /// use streams_core::dsl::{SessionWindows, Window, Windowed};
    /// use streams_test::example;
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let clicks = builder.stream::<String, String>("clicks").group_by_key();
    ///     clicks.clone().windowed_by(gap).count_with(Materialized::as_("recent")); // keeps 10 ms
    ///     clicks.windowed_by(gap).with_retention(Duration::from_secs(60)).count_with(Materialized::as_("last-minute"));
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
    /// clicks.pipe_key_value_at("ann", "a", 0);
    /// clicks.pipe_key_value_at("ann", "b", 40); // a new session; the first ended 40 ms ago
    /// let ann = "ann".to_owned();
    /// let session = |start, end| Windowed::new(ann.clone(), Window::new(start, end));
    /// assert_eq!(driver.session_store::<String, i64>("recent")?.fetch(&ann), [(session(40, 40), 1)]);
    /// assert_eq!(
    ///     driver.session_store::<String, i64>("last-minute")?.fetch(&ann),
    ///     [(session(0, 0), 1), (session(40, 40), 1)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
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
        let plan = session_plan(w, self.retention, prefix, store.clone(), materialized);
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
    /// use streams_test::{KeyValue, example};
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("clicks").group_by_key().windowed_by(gap).count().to_stream().to("sessions");
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
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
    ///
    /// The example of [`SessionWindowedKStream::with_retention`] shows `count_with`.
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
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("pages").group_by_key().windowed_by(gap).reduce_with(
    ///         |a, b| format!("{a} > {b}"),
    ///         Materialized::as_("visits").with_retention(Duration::from_secs(60)),
    ///     );
    /// });
    /// let pages = driver.input::<String, String>("pages");
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
    ///
    /// The example of [`SessionWindowedKStream::reduce`] shows `reduce_with`.
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
    /// use streams_core::serde::I64Serde;
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let gap = SessionWindows::of_inactivity_gap_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder.stream::<String, i64>("amounts").group_by_key().windowed_by(gap).aggregate_with(
    ///         || 0_i64,
    ///         |_, amount, total| total + amount,
    ///         |_, one, other| one + other, // merges two sessions
    ///         Materialized::as_("spent").with_value_serde(I64Serde),
    ///     );
    /// });
    /// let amounts = driver.input::<String, i64>("amounts");
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
    ///
    /// The example of [`SessionWindowedKStream::aggregate`] shows `aggregate_with`.
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

/// The store and grace period of an aggregation over session `windows`
/// (its retention: `materialized`'s, else `retention`, else the minimum),
/// shared by [`SessionWindowedKStream`] and the session-windowed cogroup.
pub(super) fn session_plan<K: 'static, VA>(
    w: SessionWindows,
    retention: Option<Duration>,
    prefix: &'static str,
    store: String,
    materialized: Materialized<K, VA>,
) -> Plan<K, VA> {
    let minimum = w.inactivity_gap_ms().saturating_add(w.grace_ms());
    let given = materialized.retention.or(retention);
    let (retention_ms, invalid) = retention_ms(
        given,
        (minimum, "the session inactivity gap plus the grace period"),
        &store,
        StoreKind::Session,
    );
    Plan {
        prefix,
        store,
        materialized,
        store_def: StoreDef::Session { retention_ms },
        grace_ms: w.grace_ms().saturating_add(w.inactivity_gap_ms()),
        windowed_serde: Box::new(WindowedSerde::session_ref),
        invalid,
    }
}
