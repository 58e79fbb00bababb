//! Kafka's record cache in front of the DSL's table and aggregation
//! stores (`CachingKeyValueStore`, `CachingWindowStore`,
//! `CachingSessionStore` with their `TimestampedCacheFlushListener`), as
//! Kafka's `TopologyTestDriver` runs it: on, and flushed after each input
//! record is done (the driver commits after every record).
//!
//! With the cache, an operator writes its store at once (reads see the
//! new value) but neither forwards nor logs: the cache keeps, per key, the
//! store's value before the first write since the last flush and the
//! latest one. At the flush, keys go in the order of their latest write;
//! a key whose value was and is none is skipped, any other writes the
//! latest value to the changelog and forwards `Change(latest, before)` at
//! the latest value's timestamp (the record's for a delete), with the
//! headers of the record that wrote it last. So one input record that
//! updates a key several times gives one result, and deleting a row that
//! never existed gives none.
//!
//! The cache is on for a store built from [`Materialized`] unless
//! [`Materialized::with_caching_disabled`] says otherwise, and off for
//! every store when the config sets `statestore.cache.max.bytes` (or the
//! older `cache.max.bytes.buffering`) to 0.
//!
//! ```
//! use streams_core::dsl::Materialized;
//! use streams_core::{StreamsBuilder, StreamsConfig};
//! use streams_test::{KeyValue, example, example_with_config};
//!
//! let topology = |builder: &StreamsBuilder| {
//!     builder
//!         .stream::<String, String>("lines")
//!         .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
//!         .group_by_key()
//!         .count_with(Materialized::as_("words-per-user"))
//!         .to_stream()
//!         .to("counts");
//! };
//! // Cached (the default): one result per key and input record.
//! let driver = example(topology);
//! driver.input::<String, String>("lines").pipe_key_value("ann", "a b c");
//! let counts = driver.output::<String, i64>("counts");
//! assert_eq!(counts.read_key_values_to_list(), [KeyValue::pair("ann", 3)]);
//! // Without the cache: every update.
//! let config = StreamsConfig::default().with_property("statestore.cache.max.bytes", "0");
//! let driver = example_with_config(config, topology);
//! driver.input::<String, String>("lines").pipe_key_value("ann", "a b c");
//! let counts = driver.output::<String, i64>("counts");
//! assert_eq!(
//!     counts.read_key_values_to_list(),
//!     [KeyValue::pair("ann", 1), KeyValue::pair("ann", 2), KeyValue::pair("ann", 3)]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Materialized`]: crate::dsl::Materialized
//! [`Materialized::with_caching_disabled`]: crate::dsl::Materialized::with_caching_disabled

use std::any::Any;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::StreamsConfig;
use crate::error::Result;
use crate::processor::ProcessorContext;
use crate::record::{Change, Headers, Record, RecordMetadata};

/// Whether the config leaves Kafka's record cache on (see
/// `StreamsConfig::record_cache_enabled`).
pub(crate) fn caching_configured(config: &StreamsConfig) -> bool {
    config.record_cache_enabled()
}

/// One key's pending update.
struct Entry<CK, V> {
    key: CK,
    /// The order of its latest write.
    seq: u64,
    /// The store's value before the first write since the last flush.
    before: Option<V>,
    /// The latest value and its timestamp; `None` for a delete.
    latest: Option<(V, i64)>,
    /// The timestamp, headers and origin of the record that wrote it last.
    timestamp: i64,
    headers: Headers,
    metadata: Option<RecordMetadata>,
}

/// Past this many pending keys, a key is found through an index rather
/// than by scanning them (one input record rarely changes more).
const SCAN_LIMIT: usize = 16;

/// The pending updates of one store, Kafka's `NamedCache` dirty entries.
/// They live in a vector kept between flushes (one input record usually
/// changes a key or two, so nothing is allocated per record), found by a
/// scan, or through an index when there are many.
pub(crate) struct RecordCache<CK, V> {
    entries: Vec<Entry<CK, V>>,
    index: Option<BTreeMap<CK, usize>>,
    seq: u64,
}

/// A flushed update: key, value before, latest value with its timestamp,
/// and the writing record's timestamp, headers and origin.
pub(crate) type Flushed<CK, V> = (
    CK,
    Option<V>,
    Option<(V, i64)>,
    i64,
    Headers,
    Option<RecordMetadata>,
);

impl<CK: Ord + Clone, V> RecordCache<CK, V> {
    fn new() -> Self {
        RecordCache {
            entries: Vec::new(),
            index: None,
            seq: 0,
        }
    }

    fn position(&self, key: &CK) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|e| e.key == *key),
        }
    }

    /// Records a write of `latest` over `before` (the store's value just
    /// before this write). A borrowed key is cloned only when the cache
    /// does not hold it yet.
    pub(crate) fn update(
        &mut self,
        key: Cow<'_, CK>,
        before: Option<V>,
        latest: Option<(V, i64)>,
        timestamp: i64,
        headers: &Headers,
        metadata: Option<RecordMetadata>,
    ) {
        self.seq += 1;
        let seq = self.seq;
        if let Some(i) = self.position(&*key) {
            let entry = &mut self.entries[i];
            entry.seq = seq;
            entry.latest = latest;
            entry.timestamp = timestamp;
            entry.headers = headers.clone();
            entry.metadata = metadata;
            return;
        }
        let key = key.into_owned();
        if self.index.is_none() && self.entries.len() >= SCAN_LIMIT {
            let index = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.key.clone(), i))
                .collect();
            self.index = Some(index);
        }
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.entries.len());
        }
        self.entries.push(Entry {
            key,
            seq,
            before,
            latest,
            timestamp,
            headers: headers.clone(),
            metadata,
        });
    }

    /// Moves the pending updates into `out`, in the order of their latest
    /// write.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<Flushed<CK, V>>) {
        self.index = None;
        self.entries.sort_by_key(|e| e.seq);
        out.extend(self.entries.drain(..).map(|e| {
            (
                e.key,
                e.before,
                e.latest,
                e.timestamp,
                e.headers,
                e.metadata,
            )
        }));
    }
}

/// A processor's handle on its store's cache, type-erased so that the
/// processors keep their shapes; `None` when the cache is off.
#[derive(Clone, Default)]
pub(crate) struct CacheSlot(Option<Rc<dyn Any>>);

impl CacheSlot {
    /// The cache of keys `CK` and values `V`, if on.
    pub(crate) fn get<CK: 'static, V: 'static>(&self) -> Option<&RefCell<RecordCache<CK, V>>> {
        self.0.as_ref()?.downcast_ref()
    }
}

/// Where a flushed change is forwarded in time: the latest value's
/// timestamp, else the writing record's (tables, windows); the session's
/// end (sessions, Kafka's `SessionCacheFlushListener`).
pub(crate) type ForwardAt<CK> = fn(&CK, Option<i64>, i64) -> i64;

/// The latest value's timestamp, else the writing record's.
pub(crate) fn value_timestamp<CK>(_: &CK, latest: Option<i64>, record: i64) -> i64 {
    latest.unwrap_or(record)
}

/// Turns the cache on for a processor forwarding `Change<V>` under keys
/// `CK`, when `enabled` (the store asks for it) and the config allows it:
/// at each commit, `log` writes a flushed key's latest value (or a
/// tombstone) to the store's changelog, and the change is forwarded at
/// `forward_at`.
pub(crate) fn enable<CK, V>(
    ctx: &mut ProcessorContext<'_, CK, Change<V>>,
    store: &str,
    enabled: bool,
    send_old: bool,
    forward_at: ForwardAt<CK>,
    log: impl Fn(&ProcessorContext<'_, CK, Change<V>>, &CK, Option<(&V, i64)>) -> Result<()> + 'static,
) -> Result<CacheSlot>
where
    CK: Ord + Clone + 'static,
    V: Clone + 'static,
{
    if !enabled || !caching_configured(ctx.config()) {
        return Ok(CacheSlot::default());
    }
    // One cache per store, as Kafka's: the processors that write one store
    // (a cogroup's aggregations) share it, and its flush forwards through
    // the first of them (they have the same child).
    if let Some(shared) = ctx.store_shared(store, "record-cache") {
        return Ok(CacheSlot(Some(shared)));
    }
    let cache: Rc<RefCell<RecordCache<CK, V>>> = Rc::new(RefCell::new(RecordCache::new()));
    ctx.set_store_shared(store, "record-cache", cache.clone());
    let flushed = cache.clone();
    let scratch: RefCell<Vec<Flushed<CK, V>>> = RefCell::new(Vec::new());
    ctx.on_commit(store, move |ctx| {
        // The buffer of flushed updates is kept between commits.
        let mut pending = std::mem::take(&mut *scratch.borrow_mut());
        flushed.borrow_mut().drain_into(&mut pending);
        for (key, before, latest, timestamp, headers, metadata) in pending.drain(..) {
            if before.is_none() && latest.is_none() {
                continue;
            }
            let forwarded_at = forward_at(&key, latest.as_ref().map(|(_, t)| *t), timestamp);
            let old = if send_old { before } else { None };
            let record = Record {
                key: Some(key),
                value: Some(Change::new(latest.map(|(v, _)| v), old)),
                timestamp: forwarded_at,
                headers,
            };
            ctx.with_record_context(metadata.as_ref(), timestamp, |ctx| {
                if let (Some(key), Some(change)) = (&record.key, &record.value) {
                    log(ctx, key, change.new.as_ref().map(|v| (v, record.timestamp)))?;
                }
                ctx.forward(record)
            })?;
        }
        *scratch.borrow_mut() = pending;
        Ok(())
    })?;
    Ok(CacheSlot(Some(cache)))
}

/// Enables the cache of a table or aggregation processor writing the
/// timestamped key-value store `store`.
pub(crate) fn enable_kv<K, V>(
    ctx: &mut ProcessorContext<'_, K, Change<V>>,
    store: &str,
    send_old: bool,
) -> Result<CacheSlot>
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
{
    let enabled = ctx.timestamped_key_value_store::<K, V>(store)?.caching;
    let name = store.to_owned();
    enable(
        ctx,
        store,
        enabled,
        send_old,
        value_timestamp,
        move |ctx, key, _| {
            ctx.timestamped_key_value_store::<K, V>(&name)?
                .log_current(key)
        },
    )
}

/// Writes `new` (a delete for `None`) at `value_timestamp` for `key` in the
/// timestamped key-value store `store`, then forwards the change and
/// timestamp `forward` makes of the value the write replaced; with the
/// cache on, writes the store only and leaves logging and forwarding to
/// the flush.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_kv<K, V>(
    ctx: &mut ProcessorContext<'_, K, Change<V>>,
    cache: &CacheSlot,
    store: &str,
    key: &K,
    new: Option<V>,
    value_timestamp: i64,
    record: &Record<K, impl Sized>,
    forward: impl FnOnce(Option<V>) -> (Change<V>, i64),
) -> Result<()>
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
{
    let mut s = ctx.timestamped_key_value_store::<K, V>(store)?;
    if let Some(cache) = cache.get::<K, V>() {
        let before = match &new {
            Some(v) => s.put_unlogged(key, v.clone(), value_timestamp)?,
            None => s.delete_unlogged(key)?,
        };
        drop(s);
        cache.borrow_mut().update(
            Cow::Borrowed(key),
            before.map(|vt| vt.value),
            new.map(|v| (v, value_timestamp)),
            record.timestamp,
            &record.headers,
            ctx.record_metadata(),
        );
        return Ok(());
    }
    let replaced = match new {
        Some(v) => s.put(key.clone(), v, value_timestamp)?,
        None => s.delete(key)?,
    };
    drop(s);
    let (change, timestamp) = forward(replaced.map(|vt| vt.value));
    ctx.forward(Record {
        key: Some(key.clone()),
        value: Some(change),
        timestamp,
        headers: record.headers.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(cache: &mut RecordCache<u32, u32>) -> Vec<(u32, Option<u32>, Option<u32>)> {
        let mut out = Vec::new();
        cache.drain_into(&mut out);
        out.into_iter()
            .map(|(k, before, latest, ..)| (k, before, latest.map(|(v, _)| v)))
            .collect()
    }

    /// Keys come out in the order of their latest write, each once, with
    /// the value before the first write and the latest one; past
    /// `SCAN_LIMIT` keys the index finds them the same way.
    #[test]
    fn flushes_each_key_once_in_the_order_of_its_latest_write() {
        for n in [3_u32, 40] {
            let mut cache = RecordCache::new();
            let h = Headers::new();
            for k in 0..n {
                cache.update(Cow::Owned(k), Some(k), Some((k + 1, 0)), 0, &h, None);
            }
            // Key 1 is written again (last), and deleted after that.
            cache.update(Cow::Owned(1), Some(99), Some((7, 0)), 0, &h, None);
            cache.update(Cow::Owned(1), Some(98), None, 0, &h, None);
            let mut expected: Vec<_> = (0..n)
                .filter(|&k| k != 1)
                .map(|k| (k, Some(k), Some(k + 1)))
                .collect();
            expected.push((1, Some(1), None));
            assert_eq!(keys(&mut cache), expected);
            assert_eq!(keys(&mut cache), []);
            cache.update(Cow::Owned(5), None, Some((1, 0)), 0, &h, None);
            assert_eq!(keys(&mut cache), [(5, None, Some(1))]);
        }
    }
}
