//! The buffer of a stream-table join with a grace period: see
//! [`TimeOrderedStreamBuffer`].

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;

use super::time_ordered_buffer::{BufferValue, NO_TIMESTAMP};
use super::{BufferedContext, Changelog, MakeStore, StateStore, StoreContext, StoreParts};
use crate::error::Result;
use crate::record::{Headers, RawRecord, Record};

/// The first byte of Kafka's time-first window keys.
const TIME_FIRST_PREFIX: u8 = 0;

/// Kafka's `TimeFirstWindowKeySchema.toStoreKeyBinary`.
fn store_key(timestamp: i64, key: &[u8], seqnum: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 8 + key.len() + 4);
    out.push(TIME_FIRST_PREFIX);
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&seqnum.to_be_bytes());
    out
}

/// The timestamp and key bytes of a time-first store key.
fn split_store_key(bytes: &[u8]) -> Option<(i64, &[u8])> {
    if bytes.len() < 13 || bytes[0] != TIME_FIRST_PREFIX {
        return None;
    }
    let timestamp = i64::from_be_bytes(bytes[1..9].try_into().ok()?);
    Some((timestamp, &bytes[9..bytes.len() - 4]))
}

/// The buffer of a stream-table join with a grace period (KIP-923),
/// Kafka's `RocksDBTimeOrderedKeyValueBuffer`, in memory here.
///
/// It holds stream records, every one (a key may be buffered many
/// times), ordered by timestamp, then by the key's serialized bytes, then
/// by a sequence number, until the stream time has passed them by the
/// grace period: it refuses a record already that old (the join joins it
/// at once), and after each record it takes in it hands out, in that
/// order, every record whose timestamp is at most the buffer's stream
/// time minus the grace period. The buffer's stream time is the largest
/// timestamp it was given.
///
/// Its changelog has Kafka's bytes: the key is the time-first store key
/// (`0x00`, the timestamp as 8 big-endian bytes, the key's bytes, the
/// sequence number as 4), the value Kafka's `BufferValue` (the record
/// context with timestamp, offset, topic, partition and headers; no prior
/// and no old value; the value's bytes) followed by 8 zero bytes; the
/// records carry no timestamp and no headers. An eviction writes a
/// tombstone for the key. Each put and eviction is logged at once.
///
/// ```
/// use std::time::Duration;
/// use streams_core::dsl::Joined;
/// use streams_core::state::Stores;
/// use streams_core::{Materialized, StreamsBuilder};
///
/// let builder = StreamsBuilder::new();
/// let prices = Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60))?;
/// let table = builder.table_with::<String, String>("prices", Materialized::as_(prices));
/// builder
///     .stream::<String, String>("orders")
///     .join_with(&table, |order, price| format!("{order}@{price}"), Joined::default().with_grace_period(Duration::from_secs(10)))
///     .to("priced");
/// let topology = builder.build()?;
/// assert_eq!(topology.store_names(), ["prices", "KSTREAM-JOIN-0000000003-Buffer"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TimeOrderedStreamBuffer<K, V> {
    name: String,
    grace_ms: i64,
    /// The largest timestamp put, Kafka's store `observedStreamTime`.
    observed_stream_time: i64,
    /// Kafka's `seqnum`: incremented before each put, kept positive.
    seqnum: i32,
    /// Time-first store key -> the buffered record.
    entries: BTreeMap<Vec<u8>, BufferValue>,
    changelog: Changelog<K, V>,
}

impl<K, V> fmt::Debug for TimeOrderedStreamBuffer<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimeOrderedStreamBuffer")
            .field("name", &self.name)
            .field("grace_ms", &self.grace_ms)
            .field("observed_stream_time", &self.observed_stream_time)
            .field("records", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl<K: 'static, V: 'static> TimeOrderedStreamBuffer<K, V> {
    pub(crate) fn new(name: &str, grace_ms: i64, changelog: Changelog<K, V>) -> Self {
        TimeOrderedStreamBuffer {
            name: name.to_owned(),
            grace_ms,
            observed_stream_time: -1,
            seqnum: 0,
            entries: BTreeMap::new(),
            changelog,
        }
    }

    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many records are buffered.
    pub fn num_records(&self) -> usize {
        self.entries.len()
    }

    /// The grace period, in milliseconds.
    pub fn grace_ms(&self) -> i64 {
        self.grace_ms
    }

    /// The largest timestamp buffered so far (-1 before the first).
    pub fn observed_stream_time(&self) -> i64 {
        self.observed_stream_time
    }

    /// The timestamp up to which records leave the buffer.
    fn evict_up_to(&self) -> i64 {
        self.observed_stream_time.saturating_sub(self.grace_ms)
    }

    /// Buffers a record of `key` and `value` that came with `context`
    /// (whose timestamp is the record's), unless the grace period has
    /// passed it already: then returns false, for the caller to process it
    /// at once, as Kafka's `put` does.
    ///
    /// # Errors
    /// The changelog serdes failed.
    pub(crate) fn put(&mut self, key: &K, value: &V, context: BufferedContext) -> Result<bool> {
        if self.evict_up_to() > context.timestamp {
            return Ok(false);
        }
        self.seqnum = self.seqnum.wrapping_add(1) & i32::MAX;
        let topic = self.changelog.topic_or(&self.name);
        let key_bytes = self.changelog.key_bytes(&topic, key)?;
        let value_bytes = self.changelog.value_bytes(&topic, value)?;
        let store_key = store_key(context.timestamp, &key_bytes, self.seqnum);
        self.observed_stream_time = self.observed_stream_time.max(context.timestamp);
        let buffered = BufferValue {
            prior: None,
            old: None,
            new: Some(value_bytes),
            old_is_prior: false,
            context,
        };
        // Kafka logs the value with a buffer time of 0 after it.
        self.log(&store_key, Some(buffered.serialize(0)));
        self.entries.insert(store_key, buffered);
        Ok(true)
    }

    /// Takes out, in order, every record whose timestamp is at most the
    /// buffer's stream time minus the grace period, each with the context
    /// it was buffered with, logging a tombstone for each.
    ///
    /// # Errors
    /// A buffered key or value the serdes cannot read back.
    pub(crate) fn evict(&mut self) -> Result<Vec<(K, V, BufferedContext)>> {
        let up_to = self.evict_up_to();
        let topic = self.changelog.topic_or(&self.name);
        let mut evicted = Vec::new();
        while let Some(entry) = self.entries.first_entry() {
            let Some((timestamp, key)) = split_store_key(entry.key()) else {
                break;
            };
            if timestamp > up_to {
                break;
            }
            let key = self.changelog.decode_key(&topic, -1, key)?;
            let (store_key, buffered) = entry.remove_entry();
            self.log(&store_key, None);
            if let Some(bytes) = &buffered.new {
                let value = self.changelog.decode_value(&topic, -1, bytes)?;
                evicted.push((key, value, buffered.context));
            }
        }
        Ok(evicted)
    }

    fn log(&self, key: &[u8], value: Option<Vec<u8>>) {
        if let Some((topic, ctx)) = &self.changelog.sink {
            // Kafka sends these records without a timestamp or headers.
            ctx.log(
                topic,
                Record {
                    key: Some(key.to_vec()),
                    value,
                    timestamp: NO_TIMESTAMP,
                    headers: Headers::new(),
                },
            );
        }
    }

    /// Replays changelog records (in offset order) into the buffer.
    ///
    /// # Errors
    /// A record whose key is not a time-first store key or whose value is
    /// not Kafka's buffer format (named by changelog topic and offset).
    pub fn restore<'a>(&mut self, records: impl IntoIterator<Item = &'a RawRecord>) -> Result<()> {
        let topic = self.changelog.topic_or(&self.name);
        for (offset, record) in records.into_iter().enumerate() {
            let bad = |reason| {
                super::window::bad_changelog_key(&self.name, &topic, offset as i64, reason)
            };
            let Some(key) = &record.key else {
                return Err(bad("has no key"));
            };
            let Some((timestamp, _)) = split_store_key(key) else {
                return Err(bad("has no time-first buffer key"));
            };
            match &record.value {
                None => {
                    self.entries.remove(key);
                }
                Some(bytes) => {
                    let (value, _) = BufferValue::deserialize(bytes)
                        .ok_or_else(|| bad("is not a stream-table join buffer record"))?;
                    self.observed_stream_time = self.observed_stream_time.max(timestamp);
                    self.entries.insert(key.clone(), value);
                }
            }
        }
        Ok(())
    }
}

impl<K: 'static, V: 'static> StateStore for TimeOrderedStreamBuffer<K, V> {
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

impl<K: 'static, V: 'static> MakeStore for TimeOrderedStreamBuffer<K, V> {
    type Key = K;
    type Value = V;
    /// The grace period, in milliseconds.
    type Params = i64;

    fn make(name: &str, grace_ms: &i64, parts: StoreParts<K, V>) -> Result<Self> {
        Ok(TimeOrderedStreamBuffer::new(
            name,
            *grace_ms,
            parts.changelog,
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    use super::*;
    use crate::record::collector::RecordCollector;
    use crate::serde::StringSerde;

    fn buffer(
        grace: i64,
    ) -> (
        TimeOrderedStreamBuffer<String, String>,
        Rc<RefCell<RecordCollector>>,
    ) {
        let produced = Rc::new(RefCell::new(RecordCollector::default()));
        let ctx = StoreContext::new(produced.clone(), Rc::new(Cell::new(0)), "app");
        let mut b = TimeOrderedStreamBuffer::new(
            "j-Buffer",
            grace,
            Changelog::new(Arc::new(StringSerde), Arc::new(StringSerde)),
        );
        let _ = b.init(&ctx);
        (b, produced)
    }

    fn context(ts: i64) -> BufferedContext {
        BufferedContext {
            timestamp: ts,
            offset: 7,
            topic: "s".into(),
            partition: 0,
            headers: Headers::new().with("h", "x"),
        }
    }

    #[test]
    fn records_leave_in_timestamp_then_key_then_arrival_order_once_the_grace_passes() -> Result<()>
    {
        let (mut b, _) = buffer(5);
        assert!(b.put(&"b".into(), &"b10".into(), context(10))?);
        assert!(b.put(&"a".into(), &"a10".into(), context(10))?);
        assert!(b.put(&"a".into(), &"a10-again".into(), context(10))?);
        assert!(b.put(&"a".into(), &"a6".into(), context(6))?);
        assert_eq!(b.evict()?.len(), 0);
        assert!(b.put(&"c".into(), &"c15".into(), context(15))?);
        let keys = |v: Vec<(String, String, BufferedContext)>| {
            v.into_iter()
                .map(|(_, v, c)| (v, c.timestamp))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(b.evict()?),
            [
                ("a6".to_string(), 6),
                ("a10".to_string(), 10),
                ("a10-again".to_string(), 10),
                ("b10".to_string(), 10)
            ]
        );
        // Too late for the buffer: the caller joins it at once.
        assert!(!b.put(&"d".into(), &"d9".into(), context(9))?);
        assert!(b.put(&"d".into(), &"d10".into(), context(10))?);
        assert_eq!(keys(b.evict()?), [("d10".to_string(), 10)]);
        assert_eq!(b.num_records(), 1);
        Ok(())
    }

    #[test]
    fn the_changelog_has_kafkas_keys_and_values_and_restores() -> Result<()> {
        let (mut b, produced) = buffer(0);
        b.put(&"k".into(), &"v".into(), context(10))?;
        b.evict()?;
        let records: Vec<RawRecord> = produced
            .borrow_mut()
            .take_records()
            .into_iter()
            .map(|p| p.record)
            .collect();
        let key = [
            vec![0],
            10_i64.to_be_bytes().to_vec(),
            b"k".to_vec(),
            1_i32.to_be_bytes().to_vec(),
        ]
        .concat();
        let mut value = Vec::new();
        value.extend_from_slice(&10_i64.to_be_bytes()); // timestamp
        value.extend_from_slice(&7_i64.to_be_bytes()); // offset
        value.extend_from_slice(&1_i32.to_be_bytes());
        value.extend_from_slice(b"s"); // topic
        value.extend_from_slice(&0_i32.to_be_bytes()); // partition
        value.extend_from_slice(&1_i32.to_be_bytes()); // one header
        value.extend_from_slice(&1_i32.to_be_bytes());
        value.extend_from_slice(b"h");
        value.extend_from_slice(&1_i32.to_be_bytes());
        value.extend_from_slice(b"x");
        value.extend_from_slice(&(-1_i32).to_be_bytes()); // no prior value
        value.extend_from_slice(&(-1_i32).to_be_bytes()); // no old value
        value.extend_from_slice(&1_i32.to_be_bytes());
        value.extend_from_slice(b"v");
        value.extend_from_slice(&0_i64.to_be_bytes());
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].key.as_deref(), Some(&key[..]));
        assert_eq!(records[0].value.as_deref(), Some(&value[..]));
        assert_eq!(
            (records[0].timestamp, records[0].headers.len()),
            (NO_TIMESTAMP, 0)
        );
        assert_eq!(
            (records[1].key.as_deref(), records[1].value.as_deref()),
            (Some(&key[..]), None)
        );

        let (mut restored, _) = buffer(0);
        restored.restore(&records[..1])?;
        assert_eq!(restored.num_records(), 1);
        assert_eq!(restored.observed_stream_time(), 10);
        restored.restore(&records[1..])?;
        assert_eq!(restored.num_records(), 0);
        Ok(())
    }
}
