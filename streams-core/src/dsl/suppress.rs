//! `KTable::suppress`: holding back a table's updates, Kafka's `Suppressed`.
//!
//! - [`Suppressed::until_window_closes`] emits exactly one final result per
//!   window of a windowed aggregation, once stream time reaches the window's
//!   end plus its grace period (for sessions, plus the gap too); the
//!   deletes of merged sessions are dropped.
//! - [`Suppressed::until_time_limit`] emits a key's latest update once
//!   stream time is `duration` past the record that first buffered it.
//!
//! Updates wait in a buffer store (`KTABLE-SUPPRESS-STATE-STORE-...`, or
//! `<name>-store` for a [named](Suppressed::with_name) suppression) with a
//! changelog. A bounded buffer either emits early or fails when full, as
//! its [`BufferConfig`] says.
//!
//! ```
//! use std::time::Duration;
//! use streams_core::dsl::{BufferConfig, Suppressed, TimeWindows};
//! use streams_core::StreamsBuilder;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("views")
//!     .group_by_key()
//!     .windowed_by(TimeWindows::of_size_and_grace(Duration::from_secs(300), Duration::from_secs(60))?)
//!     .count()
//!     .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()).with_name("final"))
//!     .to_stream()
//!     .to("final-counts");
//! let topology = builder.build()?;
//! assert_eq!(topology.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000001", "final-store"]);
//! assert_eq!(topology.node_names()[2], "final");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use crate::dsl::grace_search::find_window_grace;
use crate::dsl::ktable::GetterSupplier;
use crate::dsl::table_processors::ValueGetter;
use crate::dsl::{KTable, Windowed};
use crate::error::{Result, StreamsError};
use crate::processor::{Processor, ProcessorContext};
use crate::record::{Change, Record};
use crate::state::{BufferedContext, BuiltInStoreBuilder, TimeOrderedKeyValueBuffer, buffer_full};
use crate::time::millis;

/// A buffer's bounds and what happens when they are exceeded. Made by
/// [`BufferConfig::unbounded`], [`BufferConfig::max_records`] or
/// [`BufferConfig::max_bytes`]; see [`StrictBufferConfig`] and
/// [`EagerBufferConfig`].
///
/// See also the examples of [`KTable::suppress`](crate::dsl::KTable::suppress)
/// (unbounded) and
/// [`Suppressed::until_time_limit`](crate::dsl::Suppressed::until_time_limit)
/// (emitting early when full).
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{BufferConfig, Suppressed};
/// use streams_test::example;
///
/// // Strict buffers never emit early (and fail when full); eager ones do.
/// assert_eq!(
///     BufferConfig::from(BufferConfig::max_records(10).with_no_bound()),
///     BufferConfig::from(BufferConfig::unbounded())
/// );
/// assert_eq!(
///     BufferConfig::from(BufferConfig::max_bytes(1_000).with_max_records(10).shut_down_when_full().emit_early_when_full()),
///     BufferConfig::from(BufferConfig::max_records(10).with_max_bytes(1_000))
/// );
/// // At most one key, failing when full, without a changelog:
/// let one_key = BufferConfig::unbounded().with_max_records(1).with_logging_disabled();
/// let driver = example(|builder| {
///     builder
///         .table::<String, String>("status")
///         .suppress(Suppressed::until_time_limit(Duration::from_secs(60), one_key))
///         .to_stream()
///         .to("settled");
/// });
/// let status = driver.input::<String, String>("status");
/// status.pipe_key_value("a", "new");
/// status.pipe_key_value("a", "paid"); // still one key
/// let err = status.try_pipe_key_value("b", "new").unwrap_err();
/// assert!(err.to_string().ends_with(
///     "KTABLE-SUPPRESS-0000000003 buffer exceeded its max capacity. Currently [2/1] records and [80/9223372036854775807] bytes."
/// ));
/// assert!(driver.output::<String, String>("settled").is_empty());
/// assert!(!driver.produced_topic_names().iter().any(|t| t.contains("SUPPRESS")));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferConfig {
    max_records: u64,
    max_bytes: u64,
    emit_when_full: bool,
    logging: bool,
}

impl BufferConfig {
    /// A buffer without bounds, Kafka's `BufferConfig.unbounded()`.
    pub fn unbounded() -> StrictBufferConfig {
        StrictBufferConfig(BufferConfig {
            max_records: u64::MAX,
            max_bytes: u64::MAX,
            emit_when_full: false,
            logging: true,
        })
    }

    /// A buffer of at most `records` keys that emits its oldest entries
    /// early when full, Kafka's `maxRecords`.
    pub fn max_records(records: u64) -> EagerBufferConfig {
        EagerBufferConfig(BufferConfig {
            max_records: records,
            max_bytes: u64::MAX,
            emit_when_full: true,
            logging: true,
        })
    }

    /// A buffer of at most `bytes` (as Kafka estimates them) that emits its
    /// oldest entries early when full, Kafka's `maxBytes`.
    pub fn max_bytes(bytes: u64) -> EagerBufferConfig {
        EagerBufferConfig(BufferConfig {
            max_records: u64::MAX,
            max_bytes: bytes,
            emit_when_full: true,
            logging: true,
        })
    }
}

macro_rules! buffer_config_methods {
    ($name:ident) => {
        impl $name {
            /// At most `records` keys.
            #[must_use]
            pub fn with_max_records(mut self, records: u64) -> Self {
                self.0.max_records = records;
                self
            }

            /// At most `bytes`, as Kafka estimates them.
            #[must_use]
            pub fn with_max_bytes(mut self, bytes: u64) -> Self {
                self.0.max_bytes = bytes;
                self
            }

            /// No bounds: a strict buffer, Kafka's `withNoBound`.
            #[must_use]
            pub fn with_no_bound(self) -> StrictBufferConfig {
                StrictBufferConfig(BufferConfig {
                    max_records: u64::MAX,
                    max_bytes: u64::MAX,
                    emit_when_full: false,
                    ..self.0
                })
            }

            /// When full, fail the task (the results stay strictly final).
            #[must_use]
            pub fn shut_down_when_full(self) -> StrictBufferConfig {
                StrictBufferConfig(BufferConfig {
                    emit_when_full: false,
                    ..self.0
                })
            }

            /// When full, emit the oldest entries early.
            #[must_use]
            pub fn emit_early_when_full(self) -> EagerBufferConfig {
                EagerBufferConfig(BufferConfig {
                    emit_when_full: true,
                    ..self.0
                })
            }

            /// The buffer writes no changelog.
            #[must_use]
            pub fn with_logging_disabled(mut self) -> Self {
                self.0.logging = false;
                self
            }
        }

        impl From<$name> for BufferConfig {
            fn from(config: $name) -> BufferConfig {
                config.0
            }
        }
    };
}

/// A buffer that never emits early: when full, the task fails, so that
/// every result it emits is final. Kafka's `StrictBufferConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrictBufferConfig(BufferConfig);

/// A buffer that emits its oldest entries early when full, Kafka's
/// `EagerBufferConfig`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EagerBufferConfig(BufferConfig);

buffer_config_methods!(StrictBufferConfig);
buffer_config_methods!(EagerBufferConfig);

#[derive(Debug, Clone, Copy)]
enum Until {
    /// Final results: wait for the upstream windows' grace period.
    WindowCloses,
    /// Wait this long past each key's first buffered record.
    TimeLimit(i64),
}

/// How a table's updates are held back, Kafka's `Suppressed`.
///
/// - [`Suppressed::until_window_closes`] emits exactly one final result
///   per window of a windowed aggregation, once stream time reaches the
///   window's end plus its grace period (for sessions, plus the gap too);
///   the deletes of merged sessions are dropped.
/// - [`Suppressed::until_time_limit`] emits a key's latest update once
///   stream time is the time limit past the record that first buffered it.
///
/// Updates wait in a buffer store (`KTABLE-SUPPRESS-STATE-STORE-...`, or
/// `<name>-store` for a [named](Suppressed::with_name) suppression) with a
/// changelog. A bounded buffer either emits early or fails when full, as
/// its [`BufferConfig`] says.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::{BufferConfig, Suppressed, TimeWindows};
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("views")
///     .group_by_key()
///     .windowed_by(TimeWindows::of_size_and_grace(Duration::from_secs(300), Duration::from_secs(60))?)
///     .count()
///     .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
///     .to_stream()
///     .to("final-counts");
/// assert_eq!(builder.build()?.store_names()[1], "KTABLE-SUPPRESS-STATE-STORE-0000000004");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Suppressed<K> {
    name: Option<String>,
    until: Until,
    buffer: BufferConfig,
    /// The buffer time of an update: the window end, or the record time.
    time: Rc<dyn Fn(&K, i64) -> i64>,
    /// A time limit too large for an `i64` of milliseconds, reported when
    /// the topology is built.
    invalid: Option<Duration>,
}

impl<K> fmt::Debug for Suppressed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Suppressed")
            .field("name", &self.name)
            .field("until", &self.until)
            .field("buffer", &self.buffer)
            .finish_non_exhaustive()
    }
}

impl<K> Clone for Suppressed<K> {
    fn clone(&self) -> Self {
        Suppressed {
            name: self.name.clone(),
            until: self.until,
            buffer: self.buffer,
            time: self.time.clone(),
            invalid: self.invalid,
        }
    }
}

impl<K: 'static> Suppressed<Windowed<K>> {
    /// One final result per window: each window's last update, emitted
    /// when stream time reaches the window's end plus the grace period of
    /// the windowed aggregation upstream, Kafka's `untilWindowCloses`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{BufferConfig, Suppressed, TimeWindows, Windowed};
    /// use streams_test::{KeyValue, example};
    ///
    /// let windows = TimeWindows::of_size_and_grace(Duration::from_millis(10), Duration::from_millis(5))?;
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("clicks")
    ///         .group_by_key()
    ///         .windowed_by(windows)
    ///         .count()
    ///         .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()).with_name("final-counts"))
    ///         .to_stream()
    ///         .map(|k: Option<&Windowed<String>>, n: &i64| {
    ///             let k = k.unwrap();
    ///             (format!("{}@{}", k.key, k.window.start), *n)
    ///         })
    ///         .to("final");
    /// });
    /// let clicks = driver.input::<String, String>("clicks");
    /// let finals = driver.output::<String, i64>("final");
    /// clicks.pipe_key_value_at("ann", "a", 1);
    /// clicks.pipe_key_value_at("ann", "b", 8);
    /// clicks.pipe_key_value_at("ann", "c", 12); // [0, 10) ended, but its grace runs to 15
    /// assert!(finals.is_empty());
    /// clicks.pipe_key_value_at("bob", "d", 15); // stream time 15: [0, 10) closes
    /// assert_eq!(finals.read_key_values_to_list(), [KeyValue::pair("ann@0", 2)]);
    /// // The buffer is the store `<name>-store`, with a changelog.
    /// assert!(driver.produced_topic_names().contains("test-app-final-counts-store-changelog"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "untilWindowCloses")]
    pub fn until_window_closes(buffer: StrictBufferConfig) -> Self {
        Suppressed {
            name: None,
            until: Until::WindowCloses,
            buffer: buffer.0,
            time: Rc::new(|key: &Windowed<K>, _| key.window.end),
            invalid: None,
        }
    }
}

impl<K: 'static> Suppressed<K> {
    /// Each key's latest update, emitted once stream time is `time_limit`
    /// past the record that first buffered the key, Kafka's
    /// `untilTimeLimit`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{BufferConfig, Suppressed};
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let buffer = BufferConfig::max_records(2).emit_early_when_full();
    ///     builder
    ///         .table::<String, String>("status")
    ///         .suppress(Suppressed::until_time_limit(Duration::from_millis(10), buffer))
    ///         .to_stream()
    ///         .to("settled");
    /// });
    /// let status = driver.input::<String, String>("status");
    /// let settled = driver.output::<String, String>("settled");
    /// status.pipe_key_value_at("a", "new", 0);
    /// status.pipe_key_value_at("a", "paid", 5); // replaces a's buffered update
    /// assert!(settled.is_empty());
    /// status.pipe_key_value_at("b", "new", 6);
    /// assert!(settled.is_empty());
    /// status.pipe_key_value_at("c", "new", 7); // a third key: emits the oldest early
    /// assert_eq!(settled.read_key_values_to_list(), [KeyValue::pair("a", "paid")]);
    /// status.pipe_key_value_at("d", "new", 16); // 10 ms after b
    /// assert_eq!(settled.read_key_values_to_list(), [KeyValue::pair("b", "new")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn until_time_limit(time_limit: Duration, buffer: impl Into<BufferConfig>) -> Self {
        let (ms, invalid) = match millis(time_limit, "suppression time limit") {
            Ok(ms) => (ms, None),
            Err(_) => (i64::MAX, Some(time_limit)),
        };
        Suppressed {
            name: None,
            until: Until::TimeLimit(ms),
            buffer: buffer.into(),
            time: Rc::new(|_, timestamp| timestamp),
            invalid,
        }
    }

    /// Names the suppression node; its buffer store is `<name>-store`.
    ///
    /// The example of [`Suppressed::until_window_closes`] shows it.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// The processor of `suppress`, Kafka's `KTableSuppressProcessor`.
struct SuppressProcessor<K> {
    store: String,
    wait_ms: i64,
    time: Rc<dyn Fn(&K, i64) -> i64>,
    buffer: BufferConfig,
    safe_to_drop_tombstones: bool,
    observed_stream_time: i64,
}

fn over(config: &BufferConfig, records: usize, bytes: i64) -> bool {
    records as u64 > config.max_records || u64::try_from(bytes).unwrap_or(0) > config.max_bytes
}

impl<K: Ord + Clone + 'static> SuppressProcessor<K> {
    fn emit<V: Clone + 'static>(
        &self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let is_tombstone = record.value.as_ref().is_none_or(|c| c.new.is_none());
        if is_tombstone && self.safe_to_drop_tombstones {
            return Ok(());
        }
        ctx.forward(record)
    }

    /// Evicts while `evict(min time, records, bytes)` holds.
    fn evict_while<V: Clone + 'static>(
        &self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
        evict: impl Fn(i64, usize, i64) -> bool,
    ) -> Result<()> {
        loop {
            let next = ctx
                .state_store::<TimeOrderedKeyValueBuffer<K, V>>(&self.store)?
                .evict_first_if(&evict)?;
            match next {
                Some(record) => self.emit(ctx, record)?,
                None => return Ok(()),
            }
        }
    }

    fn enforce<V: Clone + 'static>(
        &self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
    ) -> Result<()> {
        let expiry = self.observed_stream_time.saturating_sub(self.wait_ms);
        self.evict_while(ctx, |min, _, _| min <= expiry)?;
        let (records, bytes) = {
            let buffer = ctx.state_store::<TimeOrderedKeyValueBuffer<K, V>>(&self.store)?;
            (buffer.num_records(), buffer.buffer_size())
        };
        if !over(&self.buffer, records, bytes) {
            return Ok(());
        }
        if self.buffer.emit_when_full {
            let config = self.buffer;
            return self.evict_while(ctx, move |_, n, b| over(&config, n, b));
        }
        let max = |m: u64| i64::try_from(m).unwrap_or(i64::MAX);
        Err(buffer_full(
            ctx.node_name(),
            records,
            max(self.buffer.max_records),
            bytes,
            max(self.buffer.max_bytes),
        ))
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> Processor<K, Change<V>>
    for SuppressProcessor<K>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            return Ok(());
        };
        self.observed_stream_time = self.observed_stream_time.max(record.timestamp);
        let time = (self.time)(key, record.timestamp);
        let meta = ctx.record_metadata();
        let context = BufferedContext {
            timestamp: record.timestamp,
            offset: meta.as_ref().map_or(-1, |m| m.offset),
            topic: meta
                .as_ref()
                .map_or_else(String::new, |m| m.topic.to_string()),
            partition: meta.as_ref().map_or(-1, |m| m.partition),
            headers: record.headers.clone(),
        };
        ctx.state_store::<TimeOrderedKeyValueBuffer<K, V>>(&self.store)?
            .put(time, key, change, context)?;
        let result = self.enforce(ctx);
        ctx.state_store::<TimeOrderedKeyValueBuffer<K, V>>(&self.store)?
            .flush();
        result
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    /// Holds back this table's updates as `suppressed` says, Kafka's
    /// `suppress`: see [`Suppressed`]. The result table forwards the
    /// updates that leave the buffer, each with the timestamp and headers
    /// it came with.
    ///
    /// `until_window_closes` needs a windowed aggregation upstream; without
    /// one, [`StreamsBuilder::build`](crate::StreamsBuilder::build) fails.
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::dsl::{BufferConfig, Suppressed, TimeWindows, Windowed};
    /// use streams_test::{KeyValue, example};
    ///
    /// let windows = TimeWindows::of_size_with_no_grace(Duration::from_millis(10))?;
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("views")
    ///         .group_by_key()
    ///         .windowed_by(windows)
    ///         .count()
    ///         .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
    ///         .to_stream()
    ///         .map(|k: Option<&Windowed<String>>, n: &i64| {
    ///             let k = k.unwrap();
    ///             (format!("{}@{}", k.key, k.window.start), *n)
    ///         })
    ///         .to("final-counts");
    /// });
    /// let views = driver.input::<String, String>("views");
    /// let counts = driver.output::<String, i64>("final-counts");
    /// views.pipe_key_value_at("ann", "a", 1);
    /// views.pipe_key_value_at("ann", "b", 5);
    /// assert!(counts.is_empty()); // the window [0, 10) is still open
    /// views.pipe_key_value_at("bob", "c", 12); // stream time 12 closes it
    /// assert_eq!(counts.read_key_values_to_list(), [KeyValue::pair("ann@0", 2)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn suppress(mut self, suppressed: Suppressed<K>) -> KTable<K, V> {
        if self.is_versioned() {
            // Kafka's `KTableImpl.suppress` and `enableVersionedSemantics`.
            self.builder.fail(StreamsError::VersionedNotSupported {
                what: format!("suppress of table `{}`", self.node),
                reason: "suppress() is only supported for non-versioned KTables \
                         (note that version semantics might be inherited from upstream)",
            });
        }
        let named = suppressed.name.clone().or_else(|| self.next_name.take());
        let name = match &named {
            Some(n) => n.clone(),
            None => self.builder.new_name("KTABLE-SUPPRESS-"),
        };
        let store = match &suppressed.name {
            Some(n) => format!("{n}-store"),
            None => self.builder.new_store_name("KTABLE-SUPPRESS-"),
        };
        // The buffer keeps the prior value of what it holds (Kafka: "the
        // suppress buffer requires seeing the old values").
        self.enable_sending_old_values();
        let parent = self.node.clone();
        let (key_serde, value_serde) = (self.key_serde.clone(), self.value_serde.clone());
        let Suppressed {
            until,
            buffer,
            time,
            invalid,
            ..
        } = suppressed;
        let sname = store.clone();
        self.builder.with_topology(|t| {
            if let Some(e) = invalid {
                return Err(StreamsError::DurationTooLarge {
                    what: "suppression time limit",
                    duration: e,
                });
            }
            let (wait_ms, safe_to_drop_tombstones) = match until {
                Until::WindowCloses => (find_window_grace(t, &parent)?, true),
                Until::TimeLimit(ms) => (ms, false),
            };
            t.add_typed_processor::<K, Change<V>, K, Change<V>, SuppressProcessor<K>, _>(
                &name,
                move || SuppressProcessor {
                    store: sname.clone(),
                    wait_ms,
                    time: time.clone(),
                    buffer,
                    safe_to_drop_tombstones,
                    observed_stream_time: -1,
                },
                &[&parent],
            )?;
            t.add_state_store(
                BuiltInStoreBuilder::<TimeOrderedKeyValueBuffer<K, V>>::new(
                    store.clone(),
                    (),
                    key_serde,
                    value_serde,
                )
                .with_logging(buffer.logging),
                &[&name],
            )?;
            Ok::<_, StreamsError>(())
        });
        let parent_getter = self.getter.clone();
        let buffer_store = store;
        let getter: GetterSupplier<K, V> = Rc::new(move || {
            let (mut stores, inner) = parent_getter();
            stores.insert(0, buffer_store.clone());
            let name = buffer_store.clone();
            let g: ValueGetter<K, V> = Rc::new(move |lookup, key| {
                let prior = lookup
                    .state_store::<TimeOrderedKeyValueBuffer<K, V>>(&name)?
                    .prior_value_for_buffered(key)?;
                match prior {
                    // Buffered: the table as it was before the buffered
                    // updates, at an unknown time (-1), as Kafka.
                    Some(prior) => Ok(prior.map(|v| (v, -1))),
                    None => inner(lookup, key),
                }
            });
            (stores, g)
        });
        KTable::new(self.builder.clone(), name, self.enable_old.clone(), getter)
            .with_serdes(self.key_serde.clone(), self.value_serde.clone())
    }
}
