//! Fixed-key processors (KIP-820): a [`FixedKeyProcessor`] sees a
//! [`FixedKeyRecord`] and forwards records of the same key, which it cannot
//! change. The DSL's [`KStream::process_values`](crate::dsl::KStream::process_values)
//! runs one (Kafka's `processValues`): since the key cannot change, the
//! stream keeps its partitioning, and no repartition follows.

use std::cell::RefMut;
use std::marker::PhantomData;
use std::time::Duration;

use super::Processor;
use super::TaskId;
use super::context::{Cancellable, ProcessorContext, Punctuation, PunctuationType};
use crate::error::Result;
use crate::record::{Headers, Record, RecordMetadata};
use crate::state::{
    KeyValueStore, SessionStore, StateStore, TimestampedKeyValueStore, TimestampedWindowStore,
    WindowStore,
};

/// A record whose key a [`FixedKeyProcessor`] cannot change, Kafka's
/// `FixedKeyRecord`: the value, timestamp and headers can be replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedKeyRecord<K, V> {
    key: Option<K>,
    value: Option<V>,
    timestamp: i64,
    headers: Headers,
}

impl<K, V> FixedKeyRecord<K, V> {
    pub(crate) fn from_record(record: Record<K, V>) -> Self {
        FixedKeyRecord {
            key: record.key,
            value: record.value,
            timestamp: record.timestamp,
            headers: record.headers,
        }
    }

    fn into_record(self) -> Record<K, V> {
        Record {
            key: self.key,
            value: self.value,
            timestamp: self.timestamp,
            headers: self.headers,
        }
    }

    /// The key; `None` is a null key.
    pub fn key(&self) -> Option<&K> {
        self.key.as_ref()
    }

    /// The value; `None` is a tombstone.
    pub fn value(&self) -> Option<&V> {
        self.value.as_ref()
    }

    /// The timestamp, epoch milliseconds.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The headers.
    pub fn headers(&self) -> &Headers {
        &self.headers
    }

    /// The headers, to change them in place.
    pub fn headers_mut(&mut self) -> &mut Headers {
        &mut self.headers
    }

    /// The same record with another value (of any type).
    #[must_use]
    pub fn with_value<V2>(self, value: Option<V2>) -> FixedKeyRecord<K, V2> {
        FixedKeyRecord {
            key: self.key,
            value,
            timestamp: self.timestamp,
            headers: self.headers,
        }
    }

    /// The same record at another timestamp.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The same record with other headers.
    #[must_use]
    pub fn with_headers(mut self, headers: Headers) -> Self {
        self.headers = headers;
        self
    }
}

/// What a [`FixedKeyProcessor`] reaches, Kafka's
/// `FixedKeyProcessorContext`: a [`ProcessorContext`] whose `forward`
/// takes [`FixedKeyRecord`]s, so that the key stays the one received.
pub struct FixedKeyProcessorContext<'a, K, V> {
    inner: ProcessorContext<'a, K, V>,
}

impl<K, V> std::fmt::Debug for FixedKeyProcessorContext<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedKeyProcessorContext")
            .field("node", &self.inner.node_name())
            .finish()
    }
}

impl<'a, K: 'static, V: 'static> FixedKeyProcessorContext<'a, K, V> {
    /// Forwards a record to every child.
    ///
    /// # Errors
    /// What a child's processing returned.
    pub fn forward(&mut self, record: FixedKeyRecord<K, V>) -> Result<()>
    where
        K: Clone,
        V: Clone,
    {
        self.inner.forward(record.into_record())
    }

    /// Forwards a record to the child named `child` only.
    ///
    /// # Errors
    /// [`StreamsError::UnknownChild`](crate::StreamsError::UnknownChild)
    /// if there is no such child; what its processing returned.
    pub fn forward_to(&mut self, child: &str, record: FixedKeyRecord<K, V>) -> Result<()>
    where
        K: Clone,
        V: Clone,
    {
        self.inner.forward_to(child, record.into_record())
    }

    /// The name of this processor's node.
    pub fn node_name(&self) -> &str {
        self.inner.node_name()
    }

    /// The names of this node's children.
    pub fn children(&self) -> Vec<&str> {
        self.inner.children()
    }

    /// The `application.id`.
    pub fn application_id(&self) -> &str {
        self.inner.application_id()
    }

    /// The task this processor runs in.
    pub fn task_id(&self) -> TaskId {
        self.inner.task_id()
    }

    /// Where the record being processed came from (none in a punctuation).
    pub fn record_metadata(&self) -> Option<RecordMetadata> {
        self.inner.record_metadata()
    }

    /// The task's stream time.
    pub fn stream_time(&self) -> i64 {
        self.inner.stream_time()
    }

    /// The task's wall-clock time.
    pub fn wall_clock_time(&self) -> i64 {
        self.inner.wall_clock_time()
    }

    /// The task's config.
    pub fn config(&self) -> &'a crate::StreamsConfig {
        self.inner.config()
    }

    /// The key-value store `name`, connected to this processor.
    ///
    /// # Errors
    /// As [`ProcessorContext::key_value_store`].
    pub fn key_value_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, KeyValueStore<KS, VS>>> {
        self.inner.key_value_store(name)
    }

    /// The timestamped key-value store `name`.
    ///
    /// # Errors
    /// As [`ProcessorContext::timestamped_key_value_store`].
    pub fn timestamped_key_value_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedKeyValueStore<KS, VS>>> {
        self.inner.timestamped_key_value_store(name)
    }

    /// The window store `name`.
    ///
    /// # Errors
    /// As [`ProcessorContext::window_store`].
    pub fn window_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, WindowStore<KS, VS>>> {
        self.inner.window_store(name)
    }

    /// The timestamped window store `name`.
    ///
    /// # Errors
    /// As [`ProcessorContext::timestamped_window_store`].
    pub fn timestamped_window_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, TimestampedWindowStore<KS, VS>>> {
        self.inner.timestamped_window_store(name)
    }

    /// The session store `name`.
    ///
    /// # Errors
    /// As [`ProcessorContext::session_store`].
    pub fn session_store<KS: Ord + Clone + 'static, VS: Clone + 'static>(
        &self,
        name: &str,
    ) -> Result<RefMut<'a, SessionStore<KS, VS>>> {
        self.inner.session_store(name)
    }

    /// A store of any type, custom ones included.
    ///
    /// # Errors
    /// As [`ProcessorContext::state_store`].
    pub fn state_store<S: StateStore>(&self, name: &str) -> Result<RefMut<'a, S>> {
        self.inner.state_store(name)
    }

    /// Counts a record this processor dropped on purpose.
    pub fn count_dropped_record(&mut self) {
        self.inner.count_dropped_record();
    }

    /// Schedules a punctuation, as [`ProcessorContext::schedule`]; the
    /// engine then calls [`FixedKeyProcessor::punctuate`].
    ///
    /// # Errors
    /// An interval shorter than 1 ms.
    pub fn schedule(&mut self, interval: Duration, kind: PunctuationType) -> Result<Cancellable> {
        self.inner.schedule(interval, kind)
    }
}

/// A processor that cannot change keys, Kafka's
/// `api.FixedKeyProcessor<KIn, VIn, VOut>`: it receives a
/// [`FixedKeyRecord`] and forwards records of the same key through its
/// [`FixedKeyProcessorContext`]. [`KStream::process_values`](crate::dsl::KStream::process_values)
/// runs one (Kafka's `processValues`); the stream keeps its partitioning.
///
/// ```
/// use streams_core::processor::{FixedKeyProcessor, FixedKeyProcessorContext, FixedKeyRecord};
/// use streams_core::Result;
/// use streams_test::{KeyValue, example};
///
/// /// Each value prefixed with its length; tombstones stay tombstones.
/// struct LengthPrefix;
/// impl FixedKeyProcessor<String, String> for LengthPrefix {
///     fn process(
///         &mut self,
///         ctx: &mut FixedKeyProcessorContext<'_, String, String>,
///         record: FixedKeyRecord<String, String>,
///     ) -> Result<()> {
///         let value = record.value().map(|v| format!("{}:{v}", v.len()));
///         ctx.forward(record.with_value(value))
///     }
/// }
///
/// let driver = example(|builder| {
///     builder.stream::<String, String>("in").process_values(|| LengthPrefix).to("out");
/// });
/// driver.input::<String, String>("in").pipe_key_value("k", "abc");
/// assert_eq!(driver.output::<String, String>("out").read_key_values_to_list(), [KeyValue::pair("k", "3:abc")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait FixedKeyProcessor<K, VIn, VOut = VIn>: 'static {
    /// Called once before any record; schedule punctuations here.
    ///
    /// # Errors
    /// An error fails the task's start, reported with the processor's name.
    fn init(&mut self, ctx: &mut FixedKeyProcessorContext<'_, K, VOut>) -> Result<()> {
        let _ = ctx;
        Ok(())
    }

    /// Processes one record.
    ///
    /// # Errors
    /// An error is a processing error of this node (see the processing
    /// exception handler).
    fn process(
        &mut self,
        ctx: &mut FixedKeyProcessorContext<'_, K, VOut>,
        record: FixedKeyRecord<K, VIn>,
    ) -> Result<()>;

    /// Called when a punctuation this processor scheduled fires.
    ///
    /// # Errors
    /// As [`Processor::punctuate`].
    fn punctuate(
        &mut self,
        ctx: &mut FixedKeyProcessorContext<'_, K, VOut>,
        timestamp: i64,
        punctuation: &Punctuation,
    ) -> Result<()> {
        let _ = (ctx, timestamp, punctuation);
        Ok(())
    }

    /// Called once when the task closes.
    ///
    /// # Errors
    /// Reported with the processor's name.
    fn close(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A [`FixedKeyProcessor`] run as a [`Processor`] whose output keys are
/// its input keys.
pub(crate) struct FixedKeyAdapter<P, VIn> {
    pub(crate) inner: P,
    pub(crate) _input: PhantomData<fn(VIn)>,
}

impl<K, VIn, VOut, P> Processor<K, VIn, K, VOut> for FixedKeyAdapter<P, VIn>
where
    K: 'static,
    VIn: 'static,
    VOut: 'static,
    P: FixedKeyProcessor<K, VIn, VOut>,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, VOut>) -> Result<()> {
        self.inner.init(&mut FixedKeyProcessorContext {
            inner: ctx.reborrow(),
        })
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VOut>,
        record: Record<K, VIn>,
    ) -> Result<()> {
        self.inner.process(
            &mut FixedKeyProcessorContext {
                inner: ctx.reborrow(),
            },
            FixedKeyRecord::from_record(record),
        )
    }

    fn punctuate(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VOut>,
        timestamp: i64,
        punctuation: &Punctuation,
    ) -> Result<()> {
        self.inner.punctuate(
            &mut FixedKeyProcessorContext {
                inner: ctx.reborrow(),
            },
            timestamp,
            punctuation,
        )
    }

    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
}
