//! The processors and stores behind windowed stream-stream joins, Kafka's
//! `KStreamJoinWindow`, `KStreamKStreamJoin{Left,Right}Side` and the
//! "outer shared" store of left and outer joins (KIP-633's fix of
//! spurious null-padded results).
//!
//! Each side's records go through a *windowed* processor, which forwards
//! the record and then keeps it in its side's window store (retaining
//! duplicates, for `before + after + grace`). The side's *join* processor
//! looks the record's key up in the other side's store, within `[ts -
//! before, ts + after]` (mirrored for the right side), and forwards one
//! result per match. A left or outer join keeps a record that found no
//! match in the outer store until its window has closed, and then emits it
//! padded with `None`; a later match removes it from there.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::resolve_serde;
use crate::dsl::join_processors::Joiner;
use crate::error::{RecordPart, Result, StreamsError};
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;
use crate::serde::SerdeRef;
use crate::state::{StateStore, StoreBuilder, StoreContext};

/// The config key of the interval at which left and outer joins look for
/// records whose window closed, in wall-clock milliseconds (Kafka's
/// internal `__emit.interval.ms.kstreams.outer.join.spurious.results.fix__`).
/// Unset, it is 0, as Kafka's `TopologyTestDriver` sets it; a running
/// Kafka Streams application uses 1000: set that to see the delay
/// production has.
pub const OUTER_JOIN_EMIT_INTERVAL_CONFIG: &str =
    "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__";

/// The default of [`OUTER_JOIN_EMIT_INTERVAL_CONFIG`]: Kafka's
/// `TopologyTestDriver` puts 0 when the config has none.
const DEFAULT_EMIT_INTERVAL_MS: i64 = 0;

/// `KStreamJoinWindow`: forwards each record, then keeps it (when it has a
/// key) in its side's window store. A put into an expired window is
/// dropped and counted as Kafka's default (RocksDB) window store counts
/// it: only once the record's whole segment has expired (see
/// [`expired_segment`]); reads never see a record older than the
/// retention either way.
pub(crate) struct JoinWindowProcessor {
    pub(crate) store: String,
}

/// Whether Kafka's default window store (segmented, `segment interval =
/// max(retention / 2, 60 s)`) drops a put at `ts` when its stream time is
/// `observed` (already including `ts`): the record's segment is older than
/// the segment of `observed - retention` (Java's truncating division).
pub(crate) fn expired_segment(ts: i64, observed: i64, retention_ms: i64) -> bool {
    let interval = (retention_ms / 2).max(60_000);
    ts / interval < observed.saturating_sub(retention_ms) / interval
}

impl<K, V> Processor<K, V> for JoinWindowProcessor
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        let kept = record
            .key
            .clone()
            .map(|k| (k, record.value.clone(), record.timestamp));
        ctx.forward(record)?;
        if let Some((key, value, ts)) = kept {
            let mut store = ctx.window_store::<K, V>(&self.store)?;
            let observed = store.observed_stream_time().max(ts);
            let expired = expired_segment(ts, observed, store.retention_ms());
            store.put_option(key, value, ts)?;
            drop(store);
            if expired {
                ctx.count_dropped_record();
            }
        }
        Ok(())
    }
}

/// A value of either side of a join, Kafka's `LeftOrRightValue`.
#[derive(Debug, Clone)]
pub(crate) enum LeftOrRight<V1, V2> {
    Left(V1),
    Right(V2),
}

/// The key of the outer store, Kafka's `TimestampedKeyAndJoinSide`,
/// ordered as Kafka's serialized form: timestamp, then side (right before
/// left), then key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TimestampedKeyAndSide<K> {
    pub(crate) timestamp: i64,
    pub(crate) is_left: bool,
    pub(crate) key: K,
}

/// The outer store of a left or outer stream-stream join: the records
/// that have not joined yet, per timestamp, side and key, and the time
/// tracker both sides share (Kafka keeps it per task beside the store).
/// Its changelog carries Kafka's bytes: the key as timestamp (8 bytes),
/// side (1 byte) and key; the value as Kafka's list serialization of
/// side-tagged values.
pub(crate) struct OuterJoinStore<K, V1, V2> {
    name: String,
    entries: BTreeMap<TimestampedKeyAndSide<K>, Vec<LeftOrRight<V1, V2>>>,
    /// The largest timestamp either side has seen.
    stream_time: i64,
    /// Kafka's `minTime`, a hint of the oldest entry.
    min_time: i64,
    /// The wall-clock time before which no emission is tried.
    next_time_to_emit: i64,
    key_serde: SerdeRef<K>,
    left_serde: SerdeRef<V1>,
    right_serde: SerdeRef<V2>,
    logging: bool,
    sink: Option<(Arc<str>, StoreContext)>,
}

impl<K: Ord + Clone + 'static, V1: Clone + 'static, V2: Clone + 'static> OuterJoinStore<K, V1, V2> {
    fn serialization_error(
        topic: &str,
        part: RecordPart,
        reason: crate::error::SerdeError,
    ) -> StreamsError {
        StreamsError::Serialization {
            topic: topic.to_owned(),
            node: None,
            part,
            reason,
        }
    }

    /// Writes the current list of `key` (a tombstone when it is gone).
    fn log(&self, key: &TimestampedKeyAndSide<K>) -> Result<()> {
        let Some((topic, ctx)) = &self.sink else {
            return Ok(());
        };
        let key_bytes = self
            .key_serde
            .serialize(topic, &key.key)
            .map_err(|e| Self::serialization_error(topic, RecordPart::Key, e))?;
        let mut k = Vec::with_capacity(9 + key_bytes.len());
        k.extend_from_slice(&key.timestamp.to_be_bytes());
        k.push(u8::from(key.is_left));
        k.extend_from_slice(&key_bytes);
        let value = match self.entries.get(key) {
            None => None,
            Some(list) => {
                // Kafka's `ListSerializer`, variable-size strategy: the
                // strategy flag (1), the count, then each entry's length
                // and bytes; an entry is its side (1 left, 0 right) and
                // the value's bytes.
                let count = i32::try_from(list.len()).unwrap_or(i32::MAX);
                let mut v = vec![1_u8];
                v.extend_from_slice(&count.to_be_bytes());
                for entry in list {
                    let (side, bytes) = match entry {
                        LeftOrRight::Left(l) => (1_u8, self.left_serde.serialize(topic, l)),
                        LeftOrRight::Right(r) => (0_u8, self.right_serde.serialize(topic, r)),
                    };
                    let bytes = bytes
                        .map_err(|e| Self::serialization_error(topic, RecordPart::Value, e))?;
                    let len = i32::try_from(bytes.len() + 1).unwrap_or(i32::MAX);
                    v.extend_from_slice(&len.to_be_bytes());
                    v.push(side);
                    v.extend_from_slice(&bytes);
                }
                Some(v)
            }
        };
        ctx.log(topic, Record::new(Some(k), value, ctx.timestamp()));
        Ok(())
    }

    /// Appends a value to `key`'s list (Kafka's `ListValueStore.put`).
    fn append(&mut self, key: TimestampedKeyAndSide<K>, value: LeftOrRight<V1, V2>) -> Result<()> {
        self.entries.entry(key.clone()).or_default().push(value);
        self.log(&key)
    }

    /// Deletes `key`'s list, logging a tombstone whether or not it was
    /// there (Kafka's blind `put(key, null)`).
    fn remove(&mut self, key: &TimestampedKeyAndSide<K>) -> Result<()> {
        self.entries.remove(key);
        self.log(key)
    }

    /// Kafka's `putIfAbsent(key, null)`: deletes `key`'s list when there
    /// is one; nothing otherwise.
    fn remove_if_present(&mut self, key: &TimestampedKeyAndSide<K>) -> Result<()> {
        if self.entries.contains_key(key) {
            self.remove(key)?;
        }
        Ok(())
    }
}

impl<K: 'static, V1: 'static, V2: 'static> StateStore for OuterJoinStore<K, V1, V2> {
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self, context: &StoreContext) -> Result<()> {
        if self.logging {
            self.sink = Some((
                Arc::from(context.changelog_topic(&self.name)),
                context.clone(),
            ));
        }
        Ok(())
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// Builds the outer store of a left or outer join, serdes resolved when
/// the task starts.
pub(crate) struct OuterJoinStoreBuilder<K, V1, V2> {
    pub(crate) name: String,
    pub(crate) key_serde: Option<SerdeRef<K>>,
    pub(crate) left_serde: Option<SerdeRef<V1>>,
    pub(crate) right_serde: Option<SerdeRef<V2>>,
    pub(crate) logging: bool,
}

impl<K, V1, V2> StoreBuilder for OuterJoinStoreBuilder<K, V1, V2>
where
    K: Ord + Clone + 'static,
    V1: Clone + 'static,
    V2: Clone + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn logging_enabled(&self) -> bool {
        self.logging
    }

    fn build(&self, config: &crate::StreamsConfig) -> Result<Box<dyn StateStore>> {
        let node = format!("store {}", self.name);
        Ok(Box::new(OuterJoinStore::<K, V1, V2> {
            name: self.name.clone(),
            entries: BTreeMap::new(),
            stream_time: -1,
            min_time: i64::MAX,
            next_time_to_emit: 0,
            key_serde: resolve_serde(&self.key_serde, config, &node, RecordPart::Key)?,
            left_serde: resolve_serde(&self.left_serde, config, &node, RecordPart::Value)?,
            right_serde: resolve_serde(&self.right_serde, config, &node, RecordPart::Value)?,
            logging: self.logging,
            sink: None,
        }))
    }
}

/// The window settings a join side works with, from its own point of
/// view: the left side looks `before` back and `after` ahead, the right
/// side the other way round.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SideWindows {
    pub(crate) join_before_ms: i64,
    pub(crate) join_after_ms: i64,
    /// The join windows' own `before` and `after`.
    pub(crate) windows_before_ms: i64,
    pub(crate) windows_after_ms: i64,
    pub(crate) grace_ms: i64,
}

/// One side's join processor, Kafka's `KStreamKStreamJoinProcessor`:
/// `VT` is this side's value, `VO` the other's, `V1`/`V2` the left and
/// right values the outer store holds.
pub(crate) struct StreamStreamJoin<VT, VO, V1, V2, VR> {
    pub(crate) other_store: String,
    pub(crate) outer_store: Option<String>,
    pub(crate) windows: SideWindows,
    /// Whether this side's unmatched records are emitted padded with `None`.
    pub(crate) outer: bool,
    pub(crate) is_left: bool,
    pub(crate) joiner: Joiner<VT, VO, VR>,
    pub(crate) wrap: fn(VT) -> LeftOrRight<V1, V2>,
    pub(crate) split: fn(&LeftOrRight<V1, V2>) -> (Option<&VT>, Option<&VO>),
    pub(crate) emit_interval_ms: i64,
}

impl<VT, VO, V1, V2, VR> StreamStreamJoin<VT, VO, V1, V2, VR> {
    /// Kafka's `isOuterJoinWindowOpen`, for an entry at `min_time`.
    fn window_open(&self, is_left: bool, min_time: i64, stream_time: i64) -> bool {
        let look_back = if is_left {
            self.windows.windows_after_ms
        } else {
            self.windows.windows_before_ms
        };
        min_time
            .wrapping_add(look_back)
            .wrapping_add(self.windows.grace_ms)
            >= stream_time
    }
}

impl<K, VT, VO, V1, V2, VR> Processor<K, VT, K, VR> for StreamStreamJoin<VT, VO, V1, V2, VR>
where
    K: Ord + Clone + 'static,
    VT: Clone + 'static,
    VO: Clone + 'static,
    V1: Clone + 'static,
    V2: Clone + 'static,
    VR: Clone + 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, VR>) -> Result<()> {
        let configured = ctx
            .config()
            .properties()
            .get(OUTER_JOIN_EMIT_INTERVAL_CONFIG);
        self.emit_interval_ms = match configured {
            None => DEFAULT_EMIT_INTERVAL_MS,
            Some(v) => v.trim().parse().map_err(|_| StreamsError::InvalidConfig {
                config: OUTER_JOIN_EMIT_INTERVAL_CONFIG,
                value: v.clone(),
                expected: "a number of milliseconds",
            })?,
        };
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, VT>,
    ) -> Result<()> {
        let ts = record.timestamp;
        let mut outer_store = match &self.outer_store {
            Some(name) => Some(ctx.state_store::<OuterJoinStore<K, V1, V2>>(name)?),
            None => None,
        };
        if let Some(store) = outer_store.as_deref_mut() {
            store.stream_time = store.stream_time.max(ts);
        }
        if self.outer && record.key.is_none() && record.value.is_some() {
            drop(outer_store);
            let joined = (self.joiner)(record.value.as_ref(), None);
            return match joined {
                Some(v) => ctx.forward(record.with_value(Some(v))),
                None => Ok(()),
            };
        }
        let (Some(key), Some(value)) = (&record.key, &record.value) else {
            drop(outer_store);
            ctx.count_dropped_record();
            return Ok(());
        };
        // Results are gathered first and forwarded once no store is
        // borrowed; the order is Kafka's.
        let mut out: Vec<(K, VR, i64)> = Vec::new();
        if let Some(store) = outer_store.as_deref_mut()
            && ts == store.stream_time
        {
            self.emit_non_joined(store, ctx.wall_clock_time(), &mut out)?;
        }
        let time_from = ts.saturating_sub(self.windows.join_before_ms).max(0);
        let time_to = ts.saturating_add(self.windows.join_after_ms).max(0);
        let matches: Vec<(i64, VO)> = {
            let other = ctx.window_store::<K, VO>(&self.other_store)?;
            other.fetch(key, time_from..=time_to)?.collect()
        };
        let need_outer = self.outer && matches.is_empty();
        for (other_ts, other_value) in matches {
            if let Some(store) = outer_store.as_deref_mut() {
                store.remove_if_present(&TimestampedKeyAndSide {
                    timestamp: other_ts,
                    is_left: !self.is_left,
                    key: key.clone(),
                })?;
            }
            if let Some(v) = (self.joiner)(Some(value), Some(&other_value)) {
                out.push((key.clone(), v, ts.max(other_ts)));
            }
        }
        if need_outer {
            match outer_store.as_deref_mut() {
                Some(store) if time_to >= store.stream_time => {
                    store.min_time = store.min_time.min(ts);
                    store.append(
                        TimestampedKeyAndSide {
                            timestamp: ts,
                            is_left: self.is_left,
                            key: key.clone(),
                        },
                        (self.wrap)(value.clone()),
                    )?;
                }
                _ => {
                    if let Some(v) = (self.joiner)(Some(value), None) {
                        out.push((key.clone(), v, ts));
                    }
                }
            }
        }
        drop(outer_store);
        let headers = record.headers;
        for (k, v, t) in out {
            ctx.forward(Record {
                key: Some(k),
                value: Some(v),
                timestamp: t,
                headers: headers.clone(),
            })?;
        }
        Ok(())
    }
}

impl<VT, VO, V1, V2, VR> StreamStreamJoin<VT, VO, V1, V2, VR>
where
    VT: Clone + 'static,
    VO: Clone + 'static,
    V1: Clone + 'static,
    V2: Clone + 'static,
{
    /// Kafka's `emitNonJoinedOuterRecords`: emits (padded with `None`)
    /// and removes the waiting records whose window has closed, at most
    /// once per emit interval of wall-clock time.
    fn emit_non_joined<K: Ord + Clone + 'static>(
        &self,
        store: &mut OuterJoinStore<K, V1, V2>,
        wall_clock: i64,
        out: &mut Vec<(K, VR, i64)>,
    ) -> Result<()> {
        // Kafka's arithmetic overflows on its "no entry" minimum and then
        // goes on; so does this.
        if store
            .min_time
            .wrapping_add(self.windows.join_after_ms)
            .wrapping_add(self.windows.grace_ms)
            >= store.stream_time
        {
            return Ok(());
        }
        if wall_clock < store.next_time_to_emit {
            return Ok(());
        }
        store.next_time_to_emit = wall_clock.saturating_add(self.emit_interval_ms);
        store.min_time = i64::MAX;
        let (mut left_open, mut right_open) = (false, false);
        let mut emitted = Vec::new();
        for (entry, values) in &store.entries {
            store.min_time = entry.timestamp;
            if left_open && right_open {
                break;
            }
            if self.window_open(entry.is_left, entry.timestamp, store.stream_time) {
                if entry.is_left {
                    left_open = true;
                } else {
                    right_open = true;
                }
                continue;
            }
            for value in values {
                let (this, other) = (self.split)(value);
                if let Some(v) = (self.joiner)(this, other) {
                    out.push((entry.key.clone(), v, entry.timestamp));
                }
            }
            emitted.push(entry.clone());
        }
        for entry in &emitted {
            store.remove(entry)?;
        }
        Ok(())
    }
}
