//! Windowed stream-stream joins, Kafka's `KStream.join`, `leftJoin` and
//! `outerJoin` with another `KStream` and [`JoinWindows`], with Kafka's
//! semantics (including KIP-633's delayed null-padded results), node
//! names, stores and changelogs.
//!
//! Two records join when their keys are equal and their timestamps are
//! close enough: a left record at `t` joins right records in `[t - before,
//! t + after]`. Each record is kept in its side's window store (retaining
//! duplicates) for `before + after + grace`, so that records of the other
//! side arriving later, even out of order within the grace period, still
//! find it. A result's timestamp is the larger of the two records'.
//!
//! - [`KStream::join_stream`]: one result per pair that matches.
//! - [`KStream::left_join_stream`]: as inner, and a left record that never
//!   found a match is emitted joined with `None` once its window has
//!   closed (stream time past `t + after + grace`), not at once: a match
//!   may still come.
//! - [`KStream::outer_join_stream`]: the same for both sides.
//!
//! Records whose window closed are looked for only when a record advances
//! stream time (of either side), and, as in Kafka, at most once per
//! [`OUTER_JOIN_EMIT_INTERVAL_CONFIG`] of *wall-clock* time. Unset, the
//! interval is 0 (every such record looks), as Kafka's
//! `TopologyTestDriver` sets it; a running Kafka Streams application uses
//! 1000 ms. Set it to 1000 to reproduce production's delay: the driver's
//! wall clock only moves when a test moves it, so after one look the next
//! happens only after `advance_wall_clock_time`.
//!
//! Records without a key or a value cannot join: they are dropped and
//! counted, except that a left (outer) join emits a keyless left (either)
//! record at once, joined with `None`. A record older than a store's
//! retention never joins; it is counted as dropped when Kafka's default
//! (RocksDB, segmented) window store would count it: once its whole
//! segment (`max(retention / 2, 60 s)` wide) has expired. With no grace,
//! note that a record exactly `before` (or `after`) away from the newest
//! record of its side is already outside the retention, as in Kafka.
//!
//! The nodes are Kafka's: `KSTREAM-WINDOWED-<n>` per side, then
//! `KSTREAM-JOINTHIS-<n>`/`KSTREAM-JOINOTHER-<n>` (`KSTREAM-OUTERTHIS-`
//! for the left side of an outer join, `KSTREAM-OUTEROTHER-` for the right
//! side of a left or outer join), merged by `KSTREAM-MERGE-<n>`; the
//! stores are `<this node>-store`, `<other node>-store` and, for left and
//! outer joins, `KSTREAM-OUTERSHARED-<n>-store`, all with changelogs.
//! [`StreamJoined`] names them and sets serdes. A re-keyed stream is
//! repartitioned first.
//!
//! See [`KStream::join_stream`] for an example.

use std::any::TypeId;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::dsl::KStream;
use crate::dsl::join_processors::Joiner;
use crate::dsl::optimize::StreamJoinDef;
use crate::dsl::optimize::self_join::StreamStreamSelfJoin;
use crate::dsl::processors::PassThrough;
pub use crate::dsl::stream_join_processors::OUTER_JOIN_EMIT_INTERVAL_CONFIG;
use crate::dsl::stream_join_processors::{
    JoinWindowProcessor, LeftOrRight, OuterJoinStoreBuilder, SideWindows, StreamStreamJoin,
};
use crate::error::{Result, StreamsError};
use crate::serde::{Serde, SerdeRef};
use crate::state::{BuiltInStoreBuilder, WindowParams, WindowSettings, WindowStore};
use crate::time::millis;
use crate::topology::Topology;

/// How close in time two records must be to join, Kafka's `JoinWindows`:
/// a left record at `t` joins right records in `[t - before, t + after]`
/// (`before = after =` the time difference unless set apart), and a
/// record waits `grace` after its window for out-of-order matches.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::JoinWindows;
///
/// let w = JoinWindows::of_time_difference_and_grace(Duration::from_millis(10), Duration::from_millis(5))?
///     .after(Duration::from_millis(20))?;
/// assert_eq!((w.before_ms(), w.after_ms(), w.grace_ms(), w.size_ms()), (10, 20, 5, 30));
/// // Right records at most 2 ms before a left one, or 10 ms after; no grace.
/// let w = JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(10))?
///     .before(Duration::from_millis(2))?;
/// assert_eq!((w.before_ms(), w.after_ms(), w.grace_ms(), w.size_ms()), (2, 10, 0, 12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinWindows {
    before_ms: i64,
    after_ms: i64,
    grace_ms: i64,
}

impl JoinWindows {
    /// Records join within `time_difference` of each other, either way,
    /// and out-of-order records are accepted for `grace` after a window
    /// ends, Kafka's `ofTimeDifferenceAndGrace`.
    ///
    /// # Errors
    /// A duration too large for an `i64` of milliseconds.
    pub fn of_time_difference_and_grace(
        time_difference: Duration,
        grace: Duration,
    ) -> Result<Self> {
        let d = millis(time_difference, "join window time difference")?;
        let grace_ms = millis(grace, "join window grace period")?;
        Self::checked(d, d, grace_ms)
    }

    /// As [`JoinWindows::of_time_difference_and_grace`] with no grace,
    /// Kafka's `ofTimeDifferenceWithNoGrace`.
    ///
    /// # Errors
    /// A duration too large for an `i64` of milliseconds.
    pub fn of_time_difference_with_no_grace(time_difference: Duration) -> Result<Self> {
        Self::of_time_difference_and_grace(time_difference, Duration::ZERO)
    }

    /// How far back from a left record right records join, Kafka's
    /// `before(..)`.
    ///
    /// # Errors
    /// A duration too large for an `i64` of milliseconds.
    pub fn before(self, time_difference: Duration) -> Result<Self> {
        let before_ms = millis(time_difference, "join window before")?;
        Self::checked(before_ms, self.after_ms, self.grace_ms)
    }

    /// How far ahead of a left record right records join, Kafka's
    /// `after(..)`.
    ///
    /// # Errors
    /// A duration too large for an `i64` of milliseconds.
    pub fn after(self, time_difference: Duration) -> Result<Self> {
        let after_ms = millis(time_difference, "join window after")?;
        Self::checked(self.before_ms, after_ms, self.grace_ms)
    }

    fn checked(before_ms: i64, after_ms: i64, grace_ms: i64) -> Result<Self> {
        if before_ms
            .checked_add(after_ms)
            .and_then(|size| size.checked_add(grace_ms))
            .is_none()
        {
            return Err(StreamsError::JoinWindowsOverflow {
                before_ms,
                after_ms,
                grace_ms,
            });
        }
        Ok(JoinWindows {
            before_ms,
            after_ms,
            grace_ms,
        })
    }

    /// Milliseconds a right record may be before a left one.
    pub fn before_ms(&self) -> i64 {
        self.before_ms
    }

    /// Milliseconds a right record may be after a left one.
    pub fn after_ms(&self) -> i64 {
        self.after_ms
    }

    /// The grace period in milliseconds.
    pub fn grace_ms(&self) -> i64 {
        self.grace_ms
    }

    /// `before + after`, Kafka's `size()`: the window size of the join's
    /// stores, whose retention is `size + grace`.
    pub fn size_ms(&self) -> i64 {
        self.before_ms + self.after_ms
    }
}

/// Options of a stream-stream join, Kafka's `StreamJoined`: the serdes of
/// the key, this stream's value and the other stream's value (for the
/// stores, their changelogs and any repartition topic), a name for the
/// join's nodes (`<name>-this-windowed`, `<name>-other-windowed`,
/// `<name>-this-join` or `-outer-this-join`, `<name>-other-join` or
/// `-outer-other-join`, `<name>-merge`, and repartition topics
/// `<name>-left-repartition` / `<name>-right-repartition`), a base name
/// for the stores (`<store>-this-join-store`, ...), and logging.
///
/// ```
/// use std::time::Duration;
/// use streams_core::StreamsBuilder;
/// use streams_core::dsl::{JoinWindows, StreamJoined};
/// use streams_core::serde::StringSerde;
///
/// let within = JoinWindows::of_time_difference_with_no_grace(Duration::from_secs(60))?;
/// let builder = StreamsBuilder::new();
/// let orders = builder.stream::<String, String>("orders");
/// let payments = builder.stream::<String, String>("payments");
/// // Names for the nodes, a base name for the stores, no changelogs:
/// let paid = StreamJoined::with(StringSerde, StringSerde, StringSerde)
///     .with_name("paid")
///     .with_store_name("paid")
///     .with_logging_disabled();
/// orders.clone().left_join_stream_with(&payments, |o, p| format!("{o}: {}", p.is_some()), within, paid).to("paid");
/// // The stores named by `as_`, the serdes one by one:
/// let either = StreamJoined::as_("either")
///     .with_key_serde(StringSerde)
///     .with_value_serde(StringSerde)
///     .with_other_value_serde(StringSerde);
/// orders.outer_join_stream_with(&payments, |o, p| format!("{}/{}", o.is_some(), p.is_some()), within, either).to("either");
/// let topology = builder.build()?;
/// assert_eq!(
///     topology.store_names(),
///     [
///         "paid-this-join-store",
///         "paid-outer-other-join-store",
///         "paid-left-shared-join-store",
///         "either-outer-this-join-store",
///         "either-outer-other-join-store",
///         "either-outer-shared-join-store",
///     ]
/// );
/// assert!(topology.node_names().contains(&"paid-merge"));
/// // Only the second join's stores write changelogs.
/// let info = topology.topics_info("app");
/// let changelogs: Vec<&str> = info[0].changelog_topics.iter().map(|(_, topic)| topic.as_str()).collect();
/// assert_eq!(
///     changelogs,
///     [
///         "app-either-outer-this-join-store-changelog",
///         "app-either-outer-other-join-store-changelog",
///         "app-either-outer-shared-join-store-changelog",
///     ]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StreamJoined<K, V, VO> {
    key_serde: Option<SerdeRef<K>>,
    value_serde: Option<SerdeRef<V>>,
    other_value_serde: Option<SerdeRef<VO>>,
    name: Option<String>,
    store_name: Option<String>,
    logging: bool,
}

impl<K, V, VO> Default for StreamJoined<K, V, VO> {
    fn default() -> Self {
        StreamJoined {
            key_serde: None,
            value_serde: None,
            other_value_serde: None,
            name: None,
            store_name: None,
            logging: true,
        }
    }
}

impl<K, V, VO> Clone for StreamJoined<K, V, VO> {
    fn clone(&self) -> Self {
        StreamJoined {
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            other_value_serde: self.other_value_serde.clone(),
            name: self.name.clone(),
            store_name: self.store_name.clone(),
            logging: self.logging,
        }
    }
}

impl<K, V, VO> fmt::Debug for StreamJoined<K, V, VO> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamJoined")
            .field("key_serde", &self.key_serde.is_some())
            .field("value_serde", &self.value_serde.is_some())
            .field("other_value_serde", &self.other_value_serde.is_some())
            .field("name", &self.name)
            .field("store_name", &self.store_name)
            .field("logging", &self.logging)
            .finish()
    }
}

impl<K: 'static, V: 'static, VO: 'static> StreamJoined<K, V, VO> {
    /// With these serdes, Kafka's `StreamJoined.with(keySerde, valueSerde,
    /// otherValueSerde)`.
    pub fn with(
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
        other_value_serde: impl Serde<VO>,
    ) -> Self {
        StreamJoined {
            key_serde: Some(Arc::new(key_serde)),
            value_serde: Some(Arc::new(value_serde)),
            other_value_serde: Some(Arc::new(other_value_serde)),
            ..StreamJoined::default()
        }
    }

    /// With this base name for the stores, Kafka's `StreamJoined.as(..)`.
    pub fn as_(store_name: impl Into<String>) -> Self {
        StreamJoined::default().with_store_name(store_name)
    }

    /// Names the join's nodes (and repartition topics).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Names the join's stores.
    #[must_use]
    pub fn with_store_name(mut self, store_name: impl Into<String>) -> Self {
        self.store_name = Some(store_name.into());
        self
    }

    /// Sets the key serde.
    #[must_use]
    pub fn with_key_serde(mut self, serde: impl Serde<K>) -> Self {
        self.key_serde = Some(Arc::new(serde));
        self
    }

    /// Sets this stream's value serde.
    #[must_use]
    pub fn with_value_serde(mut self, serde: impl Serde<V>) -> Self {
        self.value_serde = Some(Arc::new(serde));
        self
    }

    /// Sets the other stream's value serde.
    #[must_use]
    pub fn with_other_value_serde(mut self, serde: impl Serde<VO>) -> Self {
        self.other_value_serde = Some(Arc::new(serde));
        self
    }

    /// Turns the stores' changelogs off.
    #[must_use]
    pub fn with_logging_disabled(mut self) -> Self {
        self.logging = false;
        self
    }
}

/// Which stream-stream join: Kafka's `KStreamImplJoin(leftOuter, rightOuter)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamJoinKind {
    Inner,
    Left,
    Outer,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Joins this stream with `other` within `windows`, Kafka's
    /// `join(KStream, ValueJoiner, JoinWindows)`: one result per pair of
    /// records with equal keys close enough in time. See the
    /// [DSL docs](crate::dsl#stream-stream-joins).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::JoinWindows;
    /// use streams_test::{TestRecord, example};
    ///
    /// let windows = JoinWindows::of_time_difference_and_grace(
    ///     Duration::from_millis(100),
    ///     Duration::from_millis(0),
    /// )?;
    /// let driver = example(|builder| {
    ///     let clicks = builder.stream::<String, String>("clicks");
    ///     let views = builder.stream::<String, String>("views");
    ///     clicks
    ///         .join_stream(&views, |click, view| format!("{click}/{view}"), windows)
    ///         .to("clicked-views");
    /// });
    /// let clicks_in = driver.input::<String, String>("clicks");
    /// let views_in = driver.input::<String, String>("views");
    /// let out = driver.output::<String, String>("clicked-views");
    /// views_in.pipe_key_value_at("u1", "home", 1_000);
    /// clicks_in.pipe_key_value_at("u1", "buy", 1_050); // 50 ms later: joins
    /// clicks_in.pipe_key_value_at("u1", "later", 1_200); // 200 ms later: no
    /// // One result, at the later of the two timestamps.
    /// assert_eq!(
    ///     out.read_records_to_list(),
    ///     [TestRecord::key_value("u1", "buy/home").at(1_050)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "join")]
    pub fn join_stream<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
        windows: JoinWindows,
    ) -> KStream<K, VR> {
        self.join_stream_with(other, joiner, windows, StreamJoined::default())
    }

    /// As [`KStream::join_stream`], with serdes and names from `joined`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{JoinWindows, StreamJoined};
    /// use streams_test::{KeyValue, example};
    ///
    /// let within = JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(100))?;
    /// let driver = example(|builder| {
    ///     let clicks = builder.stream::<String, String>("clicks");
    ///     let views = builder.stream::<String, String>("views");
    ///     clicks
    ///         .join_stream_with(&views, |c, v| format!("{c}/{v}"), within, StreamJoined::as_("clicks-views"))
    ///         .to("clicked-views");
    /// });
    /// driver.input::<String, String>("views").pipe_key_value_at("u1", "home", 1_000);
    /// driver.input::<String, String>("clicks").pipe_key_value_at("u1", "buy", 1_050);
    /// assert_eq!(driver.output::<String, String>("clicked-views").read_key_values_to_list(), [KeyValue::pair("u1", "buy/home")]);
    /// // Both window stores, named after the StreamJoined, write changelogs.
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     [
    ///         "clicked-views",
    ///         "test-app-clicks-views-other-join-store-changelog",
    ///         "test-app-clicks-views-this-join-store-changelog",
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn join_stream_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(&V, &VO) -> VR + 'static,
        windows: JoinWindows,
        joined: StreamJoined<K, V, VO>,
    ) -> KStream<K, VR> {
        let joiner: Joiner<V, VO, VR> = Rc::new(move |v, o| v.zip(o).map(|(v, o)| joiner(v, o)));
        self.stream_join(other, joiner, windows, joined, StreamJoinKind::Inner)
    }

    /// Joins this stream with `other` within `windows`, Kafka's
    /// `leftJoin(KStream, ValueJoiner, JoinWindows)`: as
    /// [`KStream::join_stream`], and each record of this stream that
    /// found no match is joined with `None` once its window has closed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::JoinWindows;
    /// use streams_test::{KeyValue, example};
    ///
    /// let within_a_minute = JoinWindows::of_time_difference_with_no_grace(Duration::from_secs(60))?;
    /// let driver = example(|builder| {
    ///     let orders = builder.stream::<String, String>("orders");
    ///     let payments = builder.stream::<String, String>("payments");
    ///     orders
    ///         .left_join_stream(&payments, |o, p| format!("{o}: {}", p.map_or("unpaid", String::as_str)), within_a_minute)
    ///         .to("order-status");
    /// });
    /// let orders_in = driver.input::<String, String>("orders");
    /// let payments_in = driver.input::<String, String>("payments");
    /// let status = driver.output::<String, String>("order-status");
    /// orders_in.pipe_key_value_at("o1", "book", 0);
    /// orders_in.pipe_key_value_at("o2", "pen", 1_000);
    /// payments_in.pipe_key_value_at("o2", "card", 2_000);
    /// assert_eq!(status.read_key_values_to_list(), [KeyValue::pair("o2", "pen: card")]);
    /// // Stream time passes o1's window (0 + 60 s): only now is it unpaid.
    /// orders_in.pipe_key_value_at("o3", "ink", 61_000);
    /// assert_eq!(status.read_key_values_to_list(), [KeyValue::pair("o1", "book: unpaid")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "leftJoin")]
    pub fn left_join_stream<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
        windows: JoinWindows,
    ) -> KStream<K, VR> {
        self.left_join_stream_with(other, joiner, windows, StreamJoined::default())
    }

    /// As [`KStream::left_join_stream`], with serdes and names from `joined`.
    ///
    /// The example of [`StreamJoined`] shows `left_join_stream_with`.
    pub fn left_join_stream_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(&V, Option<&VO>) -> VR + 'static,
        windows: JoinWindows,
        joined: StreamJoined<K, V, VO>,
    ) -> KStream<K, VR> {
        let joiner: Joiner<V, VO, VR> = Rc::new(move |v, o| v.map(|v| joiner(v, o)));
        self.stream_join(other, joiner, windows, joined, StreamJoinKind::Left)
    }

    /// Joins this stream with `other` within `windows`, Kafka's
    /// `outerJoin(KStream, ValueJoiner, JoinWindows)`: as
    /// [`KStream::join_stream`], and each record of either stream that
    /// found no match is joined with `None` once its window has closed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::JoinWindows;
    /// use streams_test::{KeyValue, example};
    ///
    /// let windows = JoinWindows::of_time_difference_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     let left = builder.stream::<String, String>("left");
    ///     let right = builder.stream::<String, String>("right");
    ///     let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "-".into());
    ///     left.outer_join_stream(&right, move |l, r| format!("{}/{}", show(l), show(r)), windows)
    ///         .to("both");
    /// });
    /// let left_in = driver.input::<String, String>("left");
    /// let right_in = driver.input::<String, String>("right");
    /// let both = driver.output::<String, String>("both");
    /// left_in.pipe_key_value_at("a", "L", 0);
    /// right_in.pipe_key_value_at("b", "R", 5);
    /// right_in.pipe_key_value_at("c", "later", 100); // both windows have closed
    /// assert_eq!(
    ///     both.read_key_values_to_list(),
    ///     [KeyValue::pair("a", "L/-"), KeyValue::pair("b", "-/R")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "outerJoin")]
    pub fn outer_join_stream<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + 'static,
        windows: JoinWindows,
    ) -> KStream<K, VR> {
        self.outer_join_stream_with(other, joiner, windows, StreamJoined::default())
    }

    /// As [`KStream::outer_join_stream`], with serdes and names from `joined`.
    ///
    /// The example of [`StreamJoined`] shows `outer_join_stream_with`.
    pub fn outer_join_stream_with<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: impl Fn(Option<&V>, Option<&VO>) -> VR + 'static,
        windows: JoinWindows,
        joined: StreamJoined<K, V, VO>,
    ) -> KStream<K, VR> {
        let joiner: Joiner<V, VO, VR> = Rc::new(move |v, o| Some(joiner(v, o)));
        self.stream_join(other, joiner, windows, joined, StreamJoinKind::Outer)
    }

    /// Kafka's `KStreamImpl.doJoin` and `KStreamImplJoin.join`.
    fn stream_join<VO: Clone + 'static, VR: Clone + 'static>(
        self,
        other: &KStream<K, VO>,
        joiner: Joiner<V, VO, VR>,
        windows: JoinWindows,
        joined: StreamJoined<K, V, VO>,
        kind: StreamJoinKind,
    ) -> KStream<K, VR> {
        let builder = self.builder().clone();
        let name = joined.name.clone();
        let key_serde = joined.key_serde.clone().or(self.key_serde.clone());
        let value_serde = joined.value_serde.clone().or(self.value_serde.clone());
        let other_value_serde = joined
            .other_value_serde
            .clone()
            .or(other.value_serde.clone());
        let this = if self.repartition_required {
            let base = name
                .as_ref()
                .map_or_else(|| self.node.clone(), |n| format!("{n}-left"));
            self.repartition_for_join(base, key_serde.clone(), value_serde.clone())
        } else {
            self.clone()
        };
        let that = if other.repartition_required {
            let base = name
                .as_ref()
                .map_or_else(|| other.node.clone(), |n| format!("{n}-right"));
            other.repartition_for_join(base, key_serde.clone(), other_value_serde.clone())
        } else {
            other.clone()
        };
        let (left_outer, right_outer) = match kind {
            StreamJoinKind::Inner => (false, false),
            StreamJoinKind::Left => (true, false),
            StreamJoinKind::Outer => (true, true),
        };
        // Kafka's order of names: both windowed nodes, both join nodes,
        // the merge; a given name takes the numbers too.
        let named = |suffix: &str, generated: String| match &name {
            Some(n) => format!("{n}{suffix}"),
            None => generated,
        };
        let this_windowed = named("-this-windowed", builder.new_name("KSTREAM-WINDOWED-"));
        let other_windowed = named("-other-windowed", builder.new_name("KSTREAM-WINDOWED-"));
        let (this_prefix, this_suffix) = if right_outer {
            ("KSTREAM-OUTERTHIS-", "-outer-this-join")
        } else {
            ("KSTREAM-JOINTHIS-", "-this-join")
        };
        let (other_prefix, other_suffix) = if left_outer {
            ("KSTREAM-OUTEROTHER-", "-outer-other-join")
        } else {
            ("KSTREAM-JOINOTHER-", "-other-join")
        };
        let this_generated = builder.new_name(this_prefix);
        let other_generated = builder.new_name(other_prefix);
        let this_join = named(this_suffix, this_generated.clone());
        let other_join = named(other_suffix, other_generated.clone());
        let merge = named("-merge", builder.new_name("KSTREAM-MERGE-"));
        let store_base = joined.store_name.clone();
        let store_of = |suffix: &str, generated: &str| match &store_base {
            Some(s) => format!("{s}{suffix}-store"),
            None => format!("{generated}-store"),
        };
        let this_store = store_of(this_suffix, &this_generated);
        let other_store = store_of(other_suffix, &other_generated);
        let outer_store = left_outer.then(|| match &store_base {
            Some(s) if right_outer => format!("{s}-outer-shared-join-store"),
            Some(s) => format!("{s}-left-shared-join-store"),
            None => format!(
                "KSTREAM-OUTERSHARED-{}-store",
                &this_generated[this_prefix.len()..]
            ),
        });
        // Each side's window store: retaining duplicates, retention
        // `before + after + grace`, window size `before + after`.
        let settings = WindowSettings::from(WindowParams {
            retention_ms: windows.size_ms() + windows.grace_ms(),
            window_size_ms: windows.size_ms(),
            retain_duplicates: true,
        });
        let left_windows = SideWindows {
            join_before_ms: windows.before_ms,
            join_after_ms: windows.after_ms,
            windows_before_ms: windows.before_ms,
            windows_after_ms: windows.after_ms,
            grace_ms: windows.grace_ms,
        };
        let right_windows = SideWindows {
            join_before_ms: windows.after_ms,
            join_after_ms: windows.before_ms,
            ..left_windows
        };
        let reversed: Joiner<VO, V, VR> = {
            let joiner = joiner.clone();
            Rc::new(move |o, v| joiner(v, o))
        };
        let logging = joined.logging;
        let (this_parent, other_parent) = (this.node.clone(), that.node.clone());
        // Kafka's StreamStreamJoinNode keeps the self-join form of the
        // join, which `single.store.self.join` may choose.
        let make_self_join = (TypeId::of::<V>() == TypeId::of::<VO>()).then(|| {
            let (merge, windowed, store) =
                (merge.clone(), this_windowed.clone(), this_store.clone());
            let joiner = joiner.clone();
            let (before_ms, after_ms) = (windows.before_ms, windows.after_ms);
            let retention_ms = windows.size_ms() + windows.grace_ms();
            Rc::new(move |t: &mut Topology| -> Result<()> {
                let (s, j) = (store.clone(), joiner.clone());
                t.add_typed_processor::<K, V, K, VR, _, _>(
                    &merge,
                    move || StreamStreamSelfJoin::<V, VO, VR> {
                        store: s.clone(),
                        before_ms,
                        after_ms,
                        retention_ms,
                        joiner: j.clone(),
                        stream_time: -1,
                    },
                    &[&windowed],
                )?;
                t.connect_processor_and_state_stores(&merge, &[&store])?;
                Ok(())
            }) as Rc<dyn Fn(&mut Topology) -> Result<()>>
        });
        builder.record(|m| {
            m.stream_joins.push(StreamJoinDef {
                this_windowed: this_windowed.clone(),
                other_windowed: other_windowed.clone(),
                this_join: this_join.clone(),
                other_join: other_join.clone(),
                merge: merge.clone(),
                other_store: other_store.clone(),
                outer_store: outer_store.clone(),
                make_self_join,
            });
        });
        builder.with_topology(|t| {
            // Kafka's ensureCopartitionWith: both sides' sources.
            t.copartition(&[&this_parent, &other_parent]);
            let store = this_store.clone();
            t.add_typed_processor::<K, V, K, V, _, _>(
                &this_windowed,
                move || JoinWindowProcessor {
                    store: store.clone(),
                },
                &[&this_parent],
            )?;
            let store = other_store.clone();
            t.add_typed_processor::<K, VO, K, VO, _, _>(
                &other_windowed,
                move || JoinWindowProcessor {
                    store: store.clone(),
                },
                &[&other_parent],
            )?;
            let (store, outer) = (other_store.clone(), outer_store.clone());
            t.add_typed_processor::<K, V, K, VR, _, _>(
                &this_join,
                move || StreamStreamJoin::<V, VO, V, VO, VR> {
                    other_store: store.clone(),
                    outer_store: outer.clone(),
                    windows: left_windows,
                    outer: left_outer,
                    is_left: true,
                    joiner: joiner.clone(),
                    wrap: LeftOrRight::Left,
                    split: |v| match v {
                        LeftOrRight::Left(l) => (Some(l), None),
                        LeftOrRight::Right(r) => (None, Some(r)),
                    },
                    emit_interval_ms: 0,
                },
                &[&this_windowed],
            )?;
            let (store, outer) = (this_store.clone(), outer_store.clone());
            t.add_typed_processor::<K, VO, K, VR, _, _>(
                &other_join,
                move || StreamStreamJoin::<VO, V, V, VO, VR> {
                    other_store: store.clone(),
                    outer_store: outer.clone(),
                    windows: right_windows,
                    outer: right_outer,
                    is_left: false,
                    joiner: reversed.clone(),
                    wrap: LeftOrRight::Right,
                    split: |v| match v {
                        LeftOrRight::Left(l) => (None, Some(l)),
                        LeftOrRight::Right(r) => (Some(r), None),
                    },
                    emit_interval_ms: 0,
                },
                &[&other_windowed],
            )?;
            t.add_typed_processor::<K, VR, K, VR, _, _>(
                &merge,
                || PassThrough,
                &[&this_join, &other_join],
            )?;
            if left_outer || right_outer {
                // Kafka 3.7+: left and outer joins see records without a
                // key (the merge stands for a self-join's one node).
                for node in [&this_join, &other_join, &merge] {
                    t.mark_null_key_relaxed_join(node);
                }
            }
            t.add_state_store(
                BuiltInStoreBuilder::<WindowStore<K, V>>::new(
                    this_store.clone(),
                    settings,
                    key_serde.clone(),
                    value_serde.clone(),
                )
                .with_logging(logging),
                &[&this_windowed, &other_join],
            )?;
            t.add_state_store(
                BuiltInStoreBuilder::<WindowStore<K, VO>>::new(
                    other_store.clone(),
                    settings,
                    key_serde.clone(),
                    other_value_serde.clone(),
                )
                .with_logging(logging),
                &[&other_windowed, &this_join],
            )?;
            if let Some(outer) = &outer_store {
                t.add_state_store(
                    OuterJoinStoreBuilder::<K, V, VO> {
                        name: outer.clone(),
                        key_serde: key_serde.clone(),
                        left_serde: value_serde.clone(),
                        right_serde: other_value_serde.clone(),
                        logging,
                    },
                    &[&this_join, &other_join],
                )?;
            }
            Ok::<_, StreamsError>(())
        });
        KStream::new(builder, merge, joined.key_serde, None)
    }
}
