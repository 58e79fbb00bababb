//! The buffer of `suppress`, Kafka's `InMemoryTimeOrderedKeyValueChangeBuffer`.
//!
//! It holds the latest table update per key, ordered by a *buffer time*
//! (the window end for final results, the record time for a time limit)
//! and then by the key's serialized bytes, until the suppress operator
//! evicts it. A key updated again keeps its first buffer time (Kafka's
//! "non-resetting" semantics). Each entry remembers the record context it
//! came with (timestamp, topic, partition, offset and headers): an evicted
//! record is forwarded with its own timestamp and headers.
//!
//! Its changelog has Kafka's format (version 3, header `v` = `[3]`): the
//! key's bytes, and as the value the record context, the prior, old and
//! new values (each a 4-byte length and its bytes, `-1` for none and `-2`
//! for an old value equal to the prior one) and the buffer time; an
//! eviction writes a tombstone. Kafka writes the changed keys at each
//! commit; here they are written when the operator finishes a record, one
//! record per changed key, in key order.
//!
//! ```
//! use streams_core::dsl::{BufferConfig, Suppressed, TimeWindows};
//! use streams_core::StreamsBuilder;
//! use std::time::Duration;
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("views")
//!     .group_by_key()
//!     .windowed_by(TimeWindows::of_size_with_no_grace(Duration::from_secs(60))?)
//!     .count()
//!     .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
//!     .to_stream()
//!     .to("final-counts");
//! let topology = builder.build()?;
//! assert_eq!(topology.store_names()[1], "KTABLE-SUPPRESS-STATE-STORE-0000000004");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use super::{Changelog, MakeStore, StateStore, StoreContext, StoreParts};
use crate::error::{Result, StreamsError};
use crate::record::{Change, Header, Headers, RawRecord, Record};

const NULL_VALUE_SENTINEL: i32 = -1;
const OLD_PREV_DUPLICATE_VALUE_SENTINEL: i32 = -2;

/// Where a buffered record came from, Kafka's `ProcessorRecordContext`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BufferedContext {
    pub(crate) timestamp: i64,
    pub(crate) offset: i64,
    pub(crate) topic: String,
    pub(crate) partition: i32,
    pub(crate) headers: Headers,
}

impl BufferedContext {
    fn serialize(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.extend_from_slice(&self.offset.to_be_bytes());
        put_bytes(out, Some(self.topic.as_bytes()));
        out.extend_from_slice(&self.partition.to_be_bytes());
        put_len(out, self.headers.len());
        for h in self.headers.iter() {
            put_bytes(out, Some(h.key.as_bytes()));
            put_bytes(out, h.value.as_deref());
        }
    }

    fn deserialize(r: &mut Reader<'_>) -> Option<Self> {
        let timestamp = r.i64()?;
        let offset = r.i64()?;
        let topic = String::from_utf8(r.bytes()??.to_vec()).ok()?;
        let partition = r.i32()?;
        let count = usize::try_from(r.i32()?).ok()?;
        let mut headers = Vec::new();
        for _ in 0..count {
            let key = String::from_utf8(r.bytes()??.to_vec()).ok()?;
            let value = r.bytes()?.map(<[u8]>::to_vec);
            headers.push(Header { key, value });
        }
        Some(BufferedContext {
            timestamp,
            offset,
            topic,
            partition,
            headers: headers.into_iter().collect(),
        })
    }

    /// Kafka's `residentMemorySizeEstimate`, in UTF-16 units for strings.
    fn size_estimate(&self) -> i64 {
        let mut size = 8 + 8 + self.topic.encode_utf16().count() as i64 + 4;
        for h in self.headers.iter() {
            size += h.key.encode_utf16().count() as i64;
            size += h.value.as_ref().map_or(0, |v| v.len() as i64);
        }
        size
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    let len = i32::try_from(len).unwrap_or(i32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) => {
            put_len(out, b.len());
            out.extend_from_slice(b);
        }
        None => out.extend_from_slice(&NULL_VALUE_SENTINEL.to_be_bytes()),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Some(head)
    }

    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A length-prefixed byte string; `Some(None)` for the null sentinel.
    fn bytes(&mut self) -> Option<Option<&'a [u8]>> {
        let len = self.i32()?;
        if len == NULL_VALUE_SENTINEL {
            return Some(None);
        }
        let len = usize::try_from(len).ok()?;
        Some(Some(self.take(len)?))
    }
}

/// One buffered update, Kafka's `BufferValue`: serialized values and the
/// context of the record that brought it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BufferValue {
    pub(super) prior: Option<Vec<u8>>,
    pub(super) old: Option<Vec<u8>>,
    pub(super) new: Option<Vec<u8>>,
    /// Whether `old` is the prior value itself (Kafka compares the arrays
    /// by identity when estimating the size).
    pub(super) old_is_prior: bool,
    pub(super) context: BufferedContext,
}

impl BufferValue {
    fn size_estimate(&self) -> i64 {
        let len = |b: &Option<Vec<u8>>| b.as_ref().map_or(0, |b| b.len() as i64);
        len(&self.prior)
            + if self.old_is_prior { 0 } else { len(&self.old) }
            + len(&self.new)
            + self.context.size_estimate()
    }

    /// The changelog value: Kafka's `BufferValue.serialize` and the buffer time.
    pub(super) fn serialize(&self, time: i64) -> Vec<u8> {
        let mut out = Vec::new();
        self.context.serialize(&mut out);
        put_bytes(&mut out, self.prior.as_deref());
        match &self.old {
            None => out.extend_from_slice(&NULL_VALUE_SENTINEL.to_be_bytes()),
            Some(old) if self.prior.as_ref() == Some(old) => {
                out.extend_from_slice(&OLD_PREV_DUPLICATE_VALUE_SENTINEL.to_be_bytes());
            }
            Some(old) => put_bytes(&mut out, Some(old)),
        }
        put_bytes(&mut out, self.new.as_deref());
        out.extend_from_slice(&time.to_be_bytes());
        out
    }

    pub(super) fn deserialize(bytes: &[u8]) -> Option<(BufferValue, i64)> {
        let mut r = Reader { bytes };
        let context = BufferedContext::deserialize(&mut r)?;
        let prior = r.bytes()?.map(<[u8]>::to_vec);
        let (old, old_is_prior) = match r.i32()? {
            NULL_VALUE_SENTINEL => (None, false),
            OLD_PREV_DUPLICATE_VALUE_SENTINEL => (prior.clone(), true),
            len => (Some(r.take(usize::try_from(len).ok()?)?.to_vec()), false),
        };
        let new = r.bytes()?.map(<[u8]>::to_vec);
        let time = r.i64()?;
        if !r.bytes.is_empty() {
            return None;
        }
        Some((
            BufferValue {
                prior,
                old,
                new,
                old_is_prior,
                context,
            },
            time,
        ))
    }
}

/// The buffer of a `suppress` operator, Kafka's
/// `InMemoryTimeOrderedKeyValueChangeBuffer`.
///
/// It holds the latest table update per key, ordered by a *buffer time*
/// (the window end for final results, the record time for a time limit)
/// and then by the key's serialized bytes, until the suppress operator
/// evicts it. A key updated again keeps its first buffer time. Each entry
/// remembers the record context it came with (timestamp, topic,
/// partition, offset and headers): an evicted record is forwarded with its
/// own timestamp and headers.
///
/// Its changelog has Kafka's format (version 3, header `v` = `[3]`): the
/// key's bytes, and as the value the record context, the prior, old and
/// new values and the buffer time; an eviction writes a tombstone. Kafka
/// writes the changed keys at each commit; here they are written when the
/// operator finishes a record, one record per changed key, in key order.
pub struct TimeOrderedKeyValueBuffer<K, V> {
    name: String,
    /// (buffer time, serialized key) -> update.
    sorted: BTreeMap<(i64, Vec<u8>), BufferValue>,
    /// Serialized key -> its buffer time.
    index: HashMap<Vec<u8>, i64>,
    dirty: DirtyKeys,
    mem_size: i64,
    changelog: Changelog<K, V>,
}

impl<K, V> fmt::Debug for TimeOrderedKeyValueBuffer<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeOrderedKeyValueBuffer")
            .field("name", &self.name)
            .field("records", &self.sorted.len())
            .field("bytes", &self.mem_size)
            .finish_non_exhaustive()
    }
}

/// Kafka's `computeRecordSize`.
fn record_size(key: &[u8], value: &BufferValue) -> i64 {
    8 + key.len() as i64 + value.size_estimate()
}

impl<K: 'static, V: 'static> TimeOrderedKeyValueBuffer<K, V> {
    pub(crate) fn new(name: &str, changelog: Changelog<K, V>) -> Self {
        TimeOrderedKeyValueBuffer {
            name: name.to_owned(),
            sorted: BTreeMap::new(),
            index: HashMap::new(),
            dirty: DirtyKeys::default(),
            mem_size: 0,
            changelog,
        }
    }

    fn topic(&self) -> String {
        self.changelog.topic_or(&self.name)
    }

    fn value_bytes(&self, topic: &str, v: Option<&V>) -> Result<Option<Vec<u8>>> {
        v.map(|v| self.changelog.value_bytes(topic, v)).transpose()
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many keys are buffered.
    pub fn num_records(&self) -> usize {
        self.index.len()
    }

    /// The estimated size of what is buffered, in bytes, as Kafka counts it.
    pub fn buffer_size(&self) -> i64 {
        self.mem_size
    }

    /// The smallest buffer time, or `i64::MAX` when empty.
    pub fn min_timestamp(&self) -> i64 {
        self.sorted.keys().next().map_or(i64::MAX, |(t, _)| *t)
    }

    /// Buffers an update of `key` at `time`, keeping the first buffer time
    /// and prior value of a key already buffered.
    pub(crate) fn put(
        &mut self,
        time: i64,
        key: &K,
        change: &Change<V>,
        context: BufferedContext,
    ) -> Result<()> {
        let topic = self.topic();
        let key = self.changelog.key_bytes(&topic, key)?;
        let new = self.value_bytes(&topic, change.new.as_ref())?;
        let old = self.value_bytes(&topic, change.old.as_ref())?;
        let previous = self.index.get(&key).copied();
        let (prior, old_is_prior) = match previous.and_then(|t| self.sorted.get(&(t, key.clone())))
        {
            Some(buffered) => (buffered.prior.clone(), false),
            None => (old.clone(), old.is_some()),
        };
        let value = BufferValue {
            prior,
            old,
            new,
            old_is_prior,
            context,
        };
        let size = record_size(&key, &value);
        match previous {
            None => {
                self.index.insert(key.clone(), time);
                self.mem_size += size;
                self.sorted.insert((time, key.clone()), value);
            }
            Some(t) => {
                let removed = self.sorted.insert((t, key.clone()), value);
                self.mem_size += size - removed.map_or(0, |r| record_size(&key, &r));
            }
        }
        if self.changelog.enabled {
            self.dirty.insert(&key);
        }
        Ok(())
    }

    /// Removes the first entry (smallest buffer time, then key bytes) if
    /// `evict(min time, records, bytes)` says so, and returns it as the
    /// record to forward: its key, `Change(new, old)`, and the timestamp
    /// and headers it was buffered with.
    pub(crate) fn evict_first_if(
        &mut self,
        evict: impl FnOnce(i64, usize, i64) -> bool,
    ) -> Result<Option<Record<K, Change<V>>>> {
        if !evict(self.min_timestamp(), self.num_records(), self.mem_size) {
            return Ok(None);
        }
        let Some(((_, key), value)) = self.sorted.pop_first() else {
            return Ok(None);
        };
        self.index.remove(&key);
        self.mem_size -= record_size(&key, &value);
        let topic = self.topic();
        let decoded_key = self.changelog.decode_key(&topic, -1, &key)?;
        let decode = |b: &Option<Vec<u8>>| {
            b.as_ref()
                .map(|b| self.changelog.decode_value(&topic, -1, b))
                .transpose()
        };
        let change = Change::new(decode(&value.new)?, decode(&value.old)?);
        if self.changelog.enabled {
            self.dirty.insert(&key);
        }
        Ok(Some(Record {
            key: Some(decoded_key),
            value: Some(change),
            timestamp: value.context.timestamp,
            headers: value.context.headers,
        }))
    }

    /// The prior value of a buffered key (what the table held before the
    /// buffered updates), Kafka's `priorValueForBuffered`: `None` when the
    /// key is not buffered, `Some(None)` when it had no prior value.
    pub(crate) fn prior_value_for_buffered(&self, key: &K) -> Result<Option<Option<V>>> {
        let topic = self.topic();
        let key = self.changelog.key_bytes(&topic, key)?;
        let Some(&time) = self.index.get(&key) else {
            return Ok(None);
        };
        let prior = self.sorted.get(&(time, key)).and_then(|v| v.prior.clone());
        Ok(Some(
            prior
                .map(|b| self.changelog.decode_value(&topic, -1, &b))
                .transpose()?,
        ))
    }

    /// Writes every key changed since the last flush to the changelog: its
    /// buffered update, or a tombstone if it was evicted.
    pub(crate) fn flush(&mut self) {
        let Some((topic, ctx)) = &self.changelog.sink else {
            self.dirty.drain();
            return;
        };
        for key in self.dirty.drain() {
            let value = self
                .index
                .get(&key)
                .and_then(|&t| self.sorted.get(&(t, key.clone())).map(|v| v.serialize(t)));
            let headers = match value {
                Some(_) => Headers::new().with("v", [3_u8]),
                None => Headers::new(),
            };
            // Kafka sends these records without a timestamp.
            ctx.log(
                topic,
                Record {
                    key: Some(key),
                    value,
                    timestamp: NO_TIMESTAMP,
                    headers,
                },
            );
        }
    }

    /// Replays changelog records (in offset order) into the buffer.
    ///
    /// # Errors
    /// A record without a key, or a value that is not Kafka's version 3
    /// buffer format (named by changelog topic and offset).
    pub fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.topic();
        for (offset, record) in records.into_iter().enumerate() {
            let Some(key) = &record.key else {
                return Err(super::window::bad_changelog_key(
                    &self.name,
                    &topic,
                    offset as i64,
                    "has no key",
                ));
            };
            if let Some(t) = self.index.remove(key)
                && let Some(removed) = self.sorted.remove(&(t, key.clone()))
            {
                self.mem_size -= record_size(key, &removed);
            }
            let Some(bytes) = &record.value else {
                continue;
            };
            let (value, time) = BufferValue::deserialize(bytes).ok_or_else(|| {
                super::window::bad_changelog_key(
                    &self.name,
                    &topic,
                    offset as i64,
                    "is not a version 3 suppression buffer record",
                )
            })?;
            self.mem_size += record_size(key, &value);
            self.index.insert(key.clone(), time);
            self.sorted.insert((time, key.clone()), value);
        }
        Ok(())
    }
}

impl<K: 'static, V: 'static> StateStore for TimeOrderedKeyValueBuffer<K, V> {
    fn name(&self) -> &str {
        &self.name
    }
    fn init(&mut self, context: &StoreContext) -> Result<()> {
        let name = self.name.clone();
        self.changelog.init(&name, context);
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn restore_changelog(&mut self, records: &[RawRecord]) -> Result<bool> {
        self.restore(records)?;
        Ok(true)
    }
}

impl<K: 'static, V: 'static> MakeStore for TimeOrderedKeyValueBuffer<K, V> {
    type Key = K;
    type Value = V;
    type Params = ();

    fn make(name: &str, (): &(), parts: StoreParts<K, V>) -> Result<Self> {
        Ok(TimeOrderedKeyValueBuffer::new(name, parts.changelog))
    }
}

/// An error for a buffer that grew past its bounds with the shut-down
/// strategy, in Kafka's words.
pub(crate) fn buffer_full(
    node: &str,
    records: usize,
    max_records: i64,
    bytes: i64,
    max_bytes: i64,
) -> StreamsError {
    StreamsError::processing(format!(
        "{node} buffer exceeded its max capacity. Currently [{records}/{max_records}] records and [{bytes}/{max_bytes}] bytes."
    ))
}

/// Kafka's `RecordBatch.NO_TIMESTAMP`: the buffer's changelog records
/// carry none.
pub(super) const NO_TIMESTAMP: i64 = -1;

/// The keys changed since the last flush, iterated as Kafka iterates its
/// `HashSet<Bytes>` of them, so that the changelog gets them in Kafka's
/// order: by hash bucket (`Arrays.hashCode` of the bytes, spread as
/// `HashMap` does, over a table of 16 buckets that doubles past 3/4 full
/// and never shrinks), then in insertion order.
#[derive(Debug)]
struct DirtyKeys {
    keys: Vec<Vec<u8>>,
    members: BTreeSet<Vec<u8>>,
    buckets: usize,
}

impl Default for DirtyKeys {
    fn default() -> Self {
        DirtyKeys {
            keys: Vec::new(),
            members: BTreeSet::new(),
            buckets: 16,
        }
    }
}

impl DirtyKeys {
    fn insert(&mut self, key: &[u8]) {
        if self.members.insert(key.to_vec()) {
            self.keys.push(key.to_vec());
            if self.keys.len() * 4 > self.buckets * 3 {
                self.buckets *= 2;
            }
        }
    }

    /// Java's `HashMap` bucket of `key`.
    fn bucket(&self, key: &[u8]) -> usize {
        let h = key.iter().fold(1_i32, |h, &b| {
            h.wrapping_mul(31).wrapping_add(i32::from(b as i8))
        });
        let spread = (h ^ ((h as u32) >> 16) as i32) as u32;
        spread as usize & (self.buckets - 1)
    }

    /// The keys in Kafka's iteration order; the set is left empty (with
    /// its table size, as `HashSet.clear` keeps it).
    fn drain(&mut self) -> Vec<Vec<u8>> {
        let mut keys = std::mem::take(&mut self.keys);
        self.members.clear();
        keys.sort_by_cached_key(|k| self.bucket(k));
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::collector::RecordCollector;
    use crate::serde::{I64Serde, StringSerde};
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    /// The order Java 17's `HashSet<Bytes>` gave for these keys: 20 keys
    /// (the table grows to 32 buckets), then 3 more after `clear()`.
    #[test]
    fn dirty_keys_come_out_in_kafkas_hash_set_order() {
        let mut dirty = DirtyKeys::default();
        for i in 0..20 {
            dirty.insert(format!("key-{i}").as_bytes());
        }
        let names = |keys: Vec<Vec<u8>>| -> Vec<String> {
            keys.into_iter()
                .map(|k| String::from_utf8_lossy(&k).into_owned())
                .collect()
        };
        assert_eq!(
            names(dirty.drain()),
            [
                "key-7", "key-8", "key-9", "key-0", "key-1", "key-2", "key-3", "key-11", "key-4",
                "key-10", "key-5", "key-6", "key-15", "key-14", "key-13", "key-12", "key-19",
                "key-18", "key-17", "key-16"
            ]
        );
        for key in ["a", "zz", "key-7"] {
            dirty.insert(key.as_bytes());
        }
        assert_eq!(names(dirty.drain()), ["a", "key-7", "zz"]);
    }

    fn buffer() -> (
        TimeOrderedKeyValueBuffer<String, i64>,
        Rc<RefCell<RecordCollector>>,
    ) {
        let produced = Rc::new(RefCell::new(RecordCollector::default()));
        let ctx = StoreContext::new(produced.clone(), Rc::new(Cell::new(0)), "app");
        let mut b = TimeOrderedKeyValueBuffer::new(
            "buf",
            Changelog::new(Arc::new(StringSerde), Arc::new(I64Serde)),
        );
        let _ = b.init(&ctx);
        (b, produced)
    }

    fn context(ts: i64) -> BufferedContext {
        BufferedContext {
            timestamp: ts,
            offset: 3,
            topic: "topic".into(),
            partition: 0,
            headers: Headers::new().with("h", "x"),
        }
    }

    #[test]
    fn keeps_first_time_and_prior_value_and_evicts_in_order() -> Result<()> {
        let (mut b, _) = buffer();
        b.put(5, &"b".into(), &Change::new(Some(1), None), context(5))?;
        b.put(3, &"a".into(), &Change::new(Some(1), Some(0)), context(3))?;
        b.put(9, &"a".into(), &Change::new(Some(2), Some(1)), context(9))?;
        assert_eq!(b.num_records(), 2);
        assert_eq!(b.min_timestamp(), 3);
        assert_eq!(b.prior_value_for_buffered(&"a".into())?, Some(Some(0)));
        assert_eq!(b.prior_value_for_buffered(&"b".into())?, Some(None));
        assert_eq!(b.prior_value_for_buffered(&"c".into())?, None);
        let first = b
            .evict_first_if(|t, _, _| t <= 3)?
            .ok_or_else(|| StreamsError::processing("none"))?;
        assert_eq!(first.key.as_deref(), Some("a"));
        assert_eq!(first.value, Some(Change::new(Some(2), Some(1))));
        // Forwarded with the context of the last update.
        assert_eq!(first.timestamp, 9);
        assert_eq!(first.headers.last("h"), Some(&b"x"[..]));
        assert!(b.evict_first_if(|t, _, _| t <= 3)?.is_none());
        Ok(())
    }

    #[test]
    fn changelog_round_trips_in_kafkas_format() -> Result<()> {
        let (mut b, produced) = buffer();
        b.put(5, &"k".into(), &Change::new(Some(2), Some(1)), context(5))?;
        b.put(7, &"j".into(), &Change::new(Some(4), None), context(7))?;
        b.flush();
        let records: Vec<RawRecord> = produced
            .borrow()
            .records()
            .iter()
            .map(|p| p.record.clone())
            .collect();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].key.as_deref(), Some(&b"j"[..]));
        assert_eq!(records[1].headers.last("v"), Some(&[3_u8][..]));
        let mut expected = Vec::new();
        expected.extend_from_slice(&5_i64.to_be_bytes()); // context timestamp
        expected.extend_from_slice(&3_i64.to_be_bytes()); // offset
        expected.extend_from_slice(&5_i32.to_be_bytes());
        expected.extend_from_slice(b"topic");
        expected.extend_from_slice(&0_i32.to_be_bytes()); // partition
        expected.extend_from_slice(&1_i32.to_be_bytes()); // one header
        expected.extend_from_slice(&1_i32.to_be_bytes());
        expected.extend_from_slice(b"h");
        expected.extend_from_slice(&1_i32.to_be_bytes());
        expected.extend_from_slice(b"x");
        expected.extend_from_slice(&8_i32.to_be_bytes()); // prior
        expected.extend_from_slice(&1_i64.to_be_bytes());
        expected.extend_from_slice(&(-2_i32).to_be_bytes()); // old == prior
        expected.extend_from_slice(&8_i32.to_be_bytes()); // new
        expected.extend_from_slice(&2_i64.to_be_bytes());
        expected.extend_from_slice(&5_i64.to_be_bytes()); // buffer time
        assert_eq!(records[1].value.as_deref(), Some(&expected[..]));
        let mut restored = buffer().0;
        restored.restore(&records)?;
        assert_eq!(restored.num_records(), 2);
        assert_eq!(restored.buffer_size(), b.buffer_size());
        assert_eq!(restored.sorted, b.sorted);
        // An eviction is a tombstone.
        b.evict_first_if(|_, _, _| true)?;
        b.flush();
        let tombstone = produced.borrow().records().last().map(|p| p.record.clone());
        assert_eq!(tombstone.and_then(|r| r.value), None);
        Ok(())
    }

    #[test]
    fn restore_rejects_garbage() {
        let (mut b, _) = buffer();
        let bad = RawRecord::new(Some(b"k".to_vec()), Some(vec![1, 2, 3]), 0);
        assert!(matches!(
            b.restore([&bad]),
            Err(crate::StreamsError::InvalidChangelogRecord {
                offset: 0,
                reason: "is not a version 3 suppression buffer record",
                ..
            })
        ));
    }
}
