//! The context a processor runs in.

use std::any::Any;
use std::cell::{Cell, RefMut};
use std::fmt;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

use super::TaskId;
use super::task::TaskState;
use crate::error::{Result, StreamsError, TopologyError};
use crate::record::{Record, RecordMetadata};
use crate::state::{
    KeyValueStore, SessionStore, StateStore, TimestampedKeyValueStore, TimestampedWindowStore,
    VersionedKeyValueStore, WindowStore,
};

/// Which clock drives a punctuation, Kafka's `PunctuationType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PunctuationType {
    /// Stream time: the largest record timestamp seen. Schedules are
    /// aligned to 0 and fire when a record moves stream time to or past the
    /// next boundary; ticks skipped by a jump in stream time are not replayed.
    StreamTime,
    /// Wall-clock time: the driver's mock clock. The first punctuation is
    /// due one interval after scheduling; a punctuation fires at most once
    /// per clock advance, however many intervals it spans.
    WallClockTime,
}

/// A handle on a scheduled punctuation, Kafka's `Cancellable`.
#[derive(Debug, Clone)]
pub struct Cancellable {
    id: u64,
    cancelled: Rc<Cell<bool>>,
}

impl Cancellable {
    pub(crate) fn new(id: u64, cancelled: Rc<Cell<bool>>) -> Self {
        Cancellable { id, cancelled }
    }

    /// Cancels the punctuation: it will not fire again.
    pub fn cancel(&self) {
        self.cancelled.set(true);
    }

    /// The id of the schedule, as passed to [`Processor::punctuate`](super::Processor::punctuate)
    /// in [`Punctuation::id`].
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// What fired: passed to [`Processor::punctuate`](super::Processor::punctuate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Punctuation {
    /// The schedule's id, as returned by [`Cancellable::id`].
    pub id: u64,
    /// The clock that drives it.
    pub kind: PunctuationType,
    /// Its interval.
    pub interval: Duration,
}

/// What a processor can see and do: forward records, schedule
/// punctuations, read the current record's metadata and the clocks.
///
/// `K` and `V` are the types the processor forwards.
pub struct ProcessorContext<'a, K, V> {
    task: &'a TaskState,
    node: usize,
    _types: PhantomData<fn(K, V)>,
}

impl<K, V> fmt::Debug for ProcessorContext<'_, K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessorContext")
            .field("node", &self.node_name())
            .finish_non_exhaustive()
    }
}

impl<'a, K, V> ProcessorContext<'a, K, V> {
    pub(crate) fn new(task: &'a TaskState, node: usize) -> Self {
        ProcessorContext {
            task,
            node,
            _types: PhantomData,
        }
    }

    /// Another context of the same node (a fixed-key processor's view).
    pub(crate) fn reborrow(&self) -> Self {
        ProcessorContext::new(self.task, self.node)
    }

    /// The name of the processor this context belongs to.
    pub fn node_name(&self) -> &str {
        self.task.node_name(self.node)
    }

    /// The names of this processor's children, in the order they were added.
    pub fn children(&self) -> Vec<&str> {
        self.task
            .children(self.node)
            .iter()
            .map(|&c| self.task.node_name(c))
            .collect()
    }

    /// The `application.id`.
    pub fn application_id(&self) -> &str {
        self.task.application_id()
    }

    /// The task this processor runs in.
    pub fn task_id(&self) -> TaskId {
        TaskId::new(
            u32::try_from(self.task.subtopology).unwrap_or(u32::MAX),
            u32::try_from(self.task.partition).unwrap_or(0),
        )
    }

    /// Where the record being processed came from; `None` during
    /// punctuation or `init`.
    #[doc(alias = "recordMetadata")]
    pub fn record_metadata(&self) -> Option<RecordMetadata> {
        self.task.current_metadata()
    }

    /// The current stream time: the largest timestamp of any record
    /// processed so far, or `-1` before the first record.
    #[doc(alias = "currentStreamTimeMs")]
    pub fn stream_time(&self) -> i64 {
        self.task.stream_time()
    }

    /// The current wall-clock time of the (mock) clock, in epoch millis.
    #[doc(alias = "currentSystemTimeMs")]
    pub fn wall_clock_time(&self) -> i64 {
        self.task.wall_clock_time()
    }

    /// Registers `hook` to run at each commit (after each input record and
    /// wall-clock punctuation), ordered with the other hooks by the
    /// position of `store`: the DSL's record caches flush this way.
    pub(crate) fn on_commit(
        &self,
        store: &str,
        hook: impl Fn(&mut ProcessorContext<'_, K, V>) -> Result<()> + 'static,
    ) -> Result<()>
    where
        K: 'static,
        V: 'static,
    {
        self.task.add_commit_hook(
            store,
            self.node,
            std::rc::Rc::new(move |task, node| hook(&mut ProcessorContext::new(task, node))),
        )
    }

    /// What the processors of store `store` share under `kind` (see
    /// `TaskState::store_shared`), if a processor set it.
    pub(crate) fn store_shared(&self, store: &str, kind: &'static str) -> Option<Rc<dyn Any>> {
        self.task
            .store_shared
            .borrow()
            .get(&(store.to_owned(), kind))
            .cloned()
    }

    /// Sets what the processors of store `store` share under `kind`.
    pub(crate) fn set_store_shared(&self, store: &str, kind: &'static str, shared: Rc<dyn Any>) {
        self.task
            .store_shared
            .borrow_mut()
            .insert((store.to_owned(), kind), shared);
    }

    /// Runs `f` as if processing a record from `metadata` at `timestamp`
    /// (what changelog records carry), as a cache flush does.
    pub(crate) fn with_record_context<R>(
        &mut self,
        metadata: Option<&RecordMetadata>,
        timestamp: i64,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let task = self.task;
        task.with_record_context(metadata, timestamp, || f(self))
    }

    /// The configuration the topology runs with, Kafka's `appConfigs()`.
    pub fn config(&self) -> &'a crate::StreamsConfig {
        self.task.config()
    }

    /// The key-value store `name`, which must be connected to this processor.
    ///
    /// # Errors
    /// No such store, not connected, or of another kind or types.
    #[doc(alias = "getStateStore")]
    pub fn key_value_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, KeyValueStore<KS, VS>>> {
        self.store_lookup()
            .typed::<_, KS, VS>("key-value store", name)
    }

    /// The timestamped key-value store `name`, which must be connected to
    /// this processor.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn timestamped_key_value_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedKeyValueStore<KS, VS>>> {
        self.store_lookup()
            .typed::<_, KS, VS>("timestamped key-value store", name)
    }

    /// The versioned key-value store `name`, which must be connected to
    /// this processor (Kafka's `getStateStore` cast to a
    /// `VersionedKeyValueStore`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use streams_core::processor::{Processor, ProcessorContext};
    /// use streams_core::serde::StringSerde;
    /// use streams_core::state::Stores;
    /// use streams_core::{Record, Result, Topology};
    /// use streams_test::TopologyTestDriver;
    ///
    /// /// Keeps each price as a version and forwards the price one
    /// /// millisecond earlier, if there was one.
    /// struct Prices;
    /// impl Processor<String, String, String, String> for Prices {
    ///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, String>, r: Record<String, String>) -> Result<()> {
    ///         let Some(key) = r.key.clone() else { return Ok(()) };
    ///         let before = {
    ///             let mut store = ctx.versioned_key_value_store::<String, String>("prices")?;
    ///             store.put(key, r.value.clone(), r.timestamp)?;
    ///             store.get_as_of(r.key.as_ref().unwrap(), r.timestamp - 1)?
    ///         };
    ///         match before {
    ///             Some(v) => ctx.forward(r.with_value(Some(v.value))),
    ///             None => Ok(()),
    ///         }
    ///     }
    /// }
    /// let supplier = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60))?;
    /// let mut topology = Topology::new();
    /// topology
    ///     .add_source::<String, String>("in", "prices")?
    ///     .add_processor("prices", || Prices, &["in"])?
    ///     .add_state_store(Stores::versioned_key_value_store_builder(supplier, StringSerde, StringSerde), &["prices"])?
    ///     .add_sink::<String, String>("out", "previous", &["prices"])?;
    /// let driver = TopologyTestDriver::new(topology)?;
    /// let prices = driver.create_input_topic("prices", StringSerde, StringSerde);
    /// prices.pipe_key_value_at("pen", "1.00", 10);
    /// prices.pipe_key_value_at("pen", "1.20", 20);
    /// let previous = driver.create_output_topic("previous", StringSerde, StringSerde);
    /// assert_eq!(previous.read_value(), Some("1.00".to_string()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn versioned_key_value_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, VersionedKeyValueStore<KS, VS>>> {
        self.store_lookup()
            .typed::<_, KS, VS>("versioned key-value store", name)
    }

    /// The window store `name`, which must be connected to this processor.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn window_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, WindowStore<KS, VS>>> {
        self.store_lookup().typed::<_, KS, VS>("window store", name)
    }

    /// The timestamped window store `name` (the store of a DSL windowed
    /// aggregation), which must be connected to this processor.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn timestamped_window_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedWindowStore<KS, VS>>> {
        self.store_lookup()
            .typed::<_, KS, VS>("timestamped window store", name)
    }

    /// The session store `name`, which must be connected to this processor.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn session_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, SessionStore<KS, VS>>> {
        self.store_lookup()
            .typed::<_, KS, VS>("session store", name)
    }

    /// The store `name` whatever its type, Kafka's untyped
    /// `getStateStore`: its name and kind, and
    /// [`as_any_mut`](StateStore::as_any_mut) to downcast it yourself
    /// ([`state_store`](ProcessorContext::state_store) downcasts for you).
    ///
    /// ```
    /// use streams_core::processor::{Processor, ProcessorContext};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::{KeyValueStore, StoreKind, Stores};
    /// use streams_core::{Record, Result, Topology};
    /// use streams_test::TopologyTestDriver;
    ///
    /// struct Inspect;
    /// impl Processor<String, String, String, String> for Inspect {
    ///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, String>, r: Record<String, String>) -> Result<()> {
    ///         let mut store = ctx.state_store_dyn("seen")?;
    ///         let kind = store.kind();
    ///         if let Some(seen) = store.as_any_mut().downcast_mut::<KeyValueStore<String, i64>>() {
    ///             seen.put(r.key.clone().unwrap_or_default(), 1)?;
    ///         }
    ///         drop(store);
    ///         ctx.forward(r.with_value(Some(kind.to_string())))
    ///     }
    /// }
    /// let mut topology = Topology::new();
    /// topology
    ///     .add_source::<String, String>("in", "in")?
    ///     .add_processor("inspect", || Inspect, &["in"])?
    ///     .add_state_store(Stores::key_value_store_builder("seen", StringSerde, I64Serde), &["inspect"])?
    ///     .add_sink::<String, String>("out", "out", &["inspect"])?;
    /// let driver = TopologyTestDriver::new(topology)?;
    /// driver.create_input_topic("in", StringSerde, StringSerde).pipe_key_value("a", "x");
    /// assert_eq!(driver.create_output_topic("out", StringSerde, StringSerde).read_value().as_deref(), Some("key-value store"));
    /// assert_eq!(driver.key_value_store::<String, i64>("seen")?.get("a"), Some(1));
    /// # let _ = StoreKind::KeyValue;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// No such store, or not connected to this processor.
    pub fn state_store_dyn(&self, name: &str) -> Result<RefMut<'a, dyn StateStore>> {
        self.task.store_dyn(Some(self.node), name)
    }

    /// The store `name` as type `S`, for stores of any kind, your own too.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    #[doc(alias = "getStateStore")]
    pub fn state_store<S: StateStore>(&self, name: &str) -> Result<RefMut<'a, S>> {
        self.store_lookup().state_store(name)
    }

    /// Store access that does not depend on this context's types, for
    /// DSL value getters.
    pub(crate) fn store_lookup(&self) -> StoreLookup<'a> {
        StoreLookup {
            task: self.task,
            node: self.node,
        }
    }

    /// Counts one record this processor dropped on purpose in the task's
    /// `dropped_records` metric, so that a test can see it was not lost
    /// by accident.
    pub fn count_dropped_record(&mut self) {
        self.task.count_dropped(self.node);
    }

    /// Schedules a punctuation every `interval` on the given clock; the
    /// engine then calls this processor's `punctuate`. Returns a handle
    /// that cancels it.
    ///
    /// # Errors
    /// An interval shorter than 1 ms.
    #[doc(alias = "Punctuator")]
    pub fn schedule(&mut self, interval: Duration, kind: PunctuationType) -> Result<Cancellable> {
        let millis = interval.as_millis();
        if millis < 1 {
            return Err(TopologyError::NonPositiveDuration {
                what: "a punctuation interval",
                millis: millis as i128,
            }
            .into());
        }
        let millis = i64::try_from(millis).map_err(|_| StreamsError::DurationTooLarge {
            what: "punctuation interval",
            duration: interval,
        })?;
        Ok(self.task.schedule(self.node, millis, kind))
    }
}

impl<K: Clone + 'static, V: Clone + 'static> ProcessorContext<'_, K, V> {
    /// Forwards a record to every child of this processor, in the order
    /// they were added. Each child processes it (and forwards further)
    /// before the next child gets it, depth first, as in Kafka.
    ///
    /// # Errors
    /// The first error a child (or a processor further down) returns while
    /// processing the record.
    pub fn forward(&mut self, record: Record<K, V>) -> Result<()> {
        let children = self.task.children(self.node);
        match children.split_last() {
            None => Ok(()),
            Some((&last, rest)) => {
                for &child in rest {
                    self.task.dispatch(child, record.clone())?;
                }
                self.task.dispatch(last, record)
            }
        }
    }

    /// Forwards a record to the child with this name only.
    ///
    /// # Errors
    /// [`StreamsError::UnknownChild`] if there is no such child.
    #[doc(alias = "forward")]
    #[doc(alias = "To.child")]
    pub fn forward_to(&mut self, child: &str, record: Record<K, V>) -> Result<()> {
        let children = self.task.children(self.node);
        match children.iter().find(|&&c| self.task.node_name(c) == child) {
            Some(&c) => self.task.dispatch(c, record),
            None => Err(StreamsError::UnknownChild {
                node: self.node_name().to_owned(),
                child: child.to_owned(),
                children: self.children().into_iter().map(str::to_owned).collect(),
            }),
        }
    }
}

/// Reaches the stores connected to one processor, whatever its types.
#[derive(Clone, Copy)]
pub(crate) struct StoreLookup<'a> {
    task: &'a TaskState,
    node: usize,
}

impl<'a> StoreLookup<'a> {
    /// The store `name` as `S`, a built-in store of `kind` over `KS`, `VS`
    /// (the kind and types name what was asked for in a type error).
    pub(crate) fn typed<S: StateStore, KS, VS>(
        &self,
        kind: &str,
        name: &str,
    ) -> Result<RefMut<'a, S>> {
        self.task.store(Some(self.node), name, || {
            format!("{kind}<{}>", crate::state::key_value_types::<KS, VS>())
        })
    }

    /// The store `name` as type `S`, for stores of any kind.
    pub(crate) fn state_store<S: StateStore>(&self, name: &str) -> Result<RefMut<'a, S>> {
        self.task.store(Some(self.node), name, || {
            crate::error::short_type_name(std::any::type_name::<S>())
        })
    }

    /// The timestamped window store `name`, for the value getters of
    /// windowed tables.
    pub(crate) fn timestamped_window<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedWindowStore<KS, VS>>> {
        self.typed::<_, KS, VS>("timestamped window store", name)
    }

    /// The session store `name`, for the value getters of session tables.
    pub(crate) fn session<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, SessionStore<KS, VS>>> {
        self.typed::<_, KS, VS>("session store", name)
    }

    /// The versioned key-value store `name`, for the value getters of
    /// versioned tables.
    pub(crate) fn versioned<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, VersionedKeyValueStore<KS, VS>>> {
        self.typed::<_, KS, VS>("versioned key-value store", name)
    }

    /// The timestamped key-value store `name`, for the value getters of tables.
    pub(crate) fn timestamped<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedKeyValueStore<KS, VS>>> {
        self.typed::<_, KS, VS>("timestamped key-value store", name)
    }
}
