//! The processors behind joins, Kafka's `KStreamKTableJoinProcessor`,
//! `KTableKTable{Inner,Left,Right,Outer}Join` and `KTableKTableJoinMerger`.
//!
//! Joiners are kept in one shape, `Fn(Option<&L>, Option<&R>) ->
//! Option<VR>`, adapted from the user's closure: an inner joiner gives
//! `None` unless both sides are there (which the processors never ask
//! for), so no processor needs to unwrap anything.

use std::rc::Rc;

use std::sync::Arc;

use crate::dsl::cache::{self, CacheSlot};
use crate::dsl::table_processors::{ValueGetter, VersionedValueGetter};
use crate::error::Result;
use crate::processor::{Processor, ProcessorContext};
use crate::record::{Change, Record, RecordMetadata};
use crate::state::{BufferedContext, TimeOrderedStreamBuffer};

/// A joiner of the left value (the side whose update is processed) with
/// the right one (looked up), each possibly missing.
pub(crate) type Joiner<L, R, VR> = Rc<dyn Fn(Option<&L>, Option<&R>) -> Option<VR>>;

/// Kafka's `UNKNOWN` timestamp, for a side that has no row.
const UNKNOWN: i64 = -1;

/// `KStream::join` / `left_join` with a table or a global table: each
/// stream record looks its key (or the key `key_of` computes, for a
/// global table) up in the table; table updates only change the table.
/// A versioned table is read as of the record's timestamp (KIP-914); with
/// a grace period (KIP-923) records first wait in the buffer `buffer`
/// until the stream time has passed them by the grace period, and are
/// then joined in timestamp order.
pub(crate) struct StreamTableJoin<K, V, KT, VT, VR> {
    /// The key to look up; `None` cannot join.
    pub(crate) key_of: Rc<dyn Fn(Option<&K>, &V) -> Option<KT>>,
    pub(crate) getter: ValueGetter<KT, VT>,
    /// The table's rows as of a time, when it is versioned.
    pub(crate) versioned: Option<VersionedValueGetter<KT, VT>>,
    pub(crate) joiner: Joiner<V, VT, VR>,
    pub(crate) left: bool,
    /// The buffer of a join with a grace period.
    pub(crate) buffer: Option<String>,
}

impl<K, V, KT, VT, VR> StreamTableJoin<K, V, KT, VT, VR>
where
    K: Clone + 'static,
    V: 'static,
    KT: 'static,
    VT: 'static,
    VR: Clone + 'static,
{
    /// Kafka's `doJoin`: looks the record's row up and forwards the result.
    fn join(&self, ctx: &mut ProcessorContext<'_, K, VR>, record: Record<K, V>) -> Result<()> {
        let Some(value) = &record.value else {
            return Ok(());
        };
        let mapped = (self.key_of)(record.key.as_ref(), value);
        let other = match (&mapped, &self.versioned) {
            (Some(k), Some(versioned)) => {
                versioned(&ctx.store_lookup(), k, record.timestamp)?.map(|(v, _)| v)
            }
            (Some(k), None) => (self.getter)(&ctx.store_lookup(), k)?.map(|(v, _)| v),
            (None, _) => None,
        };
        if !self.left && other.is_none() {
            return Ok(());
        }
        let joined = (self.joiner)(Some(value), other.as_ref());
        if joined.is_none() {
            return Ok(());
        }
        ctx.forward(record.with_value(joined))
    }
}

impl<K, V, KT, VT, VR> Processor<K, V, K, VR> for StreamTableJoin<K, V, KT, VT, VR>
where
    K: Clone + 'static,
    V: Clone + 'static,
    KT: 'static,
    VT: 'static,
    VR: Clone + 'static,
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        // Kafka's `maybeDropRecord`: a left join keeps a record with a null
        // key (and a value); otherwise a null join key or value is dropped.
        let Some(value) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let mapped = (self.key_of)(record.key.as_ref(), value);
        let keep_null_key = self.left && record.key.is_none();
        if mapped.is_none() && !keep_null_key {
            ctx.count_dropped_record();
            return Ok(());
        }
        let (Some(buffer), Some(key)) = (&self.buffer, &record.key) else {
            // No grace period; or a left join's record without a key,
            // which Kafka's buffer cannot hold (it throws): joined at once.
            return self.join(ctx, record);
        };
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
        let evicted = {
            let mut store = ctx.state_store::<TimeOrderedStreamBuffer<K, V>>(buffer)?;
            if !store.put(key, value, context)? {
                None
            } else {
                Some(store.evict()?)
            }
        };
        let Some(evicted) = evicted else {
            // Later than the grace period allows: joined at once.
            return self.join(ctx, record);
        };
        for (key, value, context) in evicted {
            let metadata = RecordMetadata {
                topic: Arc::from(context.topic.as_str()),
                partition: context.partition,
                offset: context.offset,
            };
            let buffered = Record {
                key: Some(key),
                value: Some(value),
                timestamp: context.timestamp,
                headers: context.headers,
            };
            ctx.with_record_context(Some(&metadata), context.timestamp, |ctx| {
                self.join(ctx, buffered)
            })?;
        }
        Ok(())
    }
}

/// Which of Kafka's four table-table join processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableJoinKind {
    /// `KTableKTableInnerJoin`, either side.
    Inner,
    /// `KTableKTableLeftJoin`: the left side of a left join.
    Left,
    /// `KTableKTableRightJoin`: the right side of a left join (this
    /// processor's updates are the right rows; the looked-up row is left).
    Right,
    /// `KTableKTableOuterJoin`, either side.
    Outer,
}

/// One side of a table-table join: joins each update of its table with
/// the other table's current row.
pub(crate) struct TableTableJoin<K, V1, V2, VR> {
    pub(crate) kind: TableJoinKind,
    /// The other table's row.
    pub(crate) getter: ValueGetter<K, V2>,
    /// This side's value first.
    pub(crate) joiner: Joiner<V1, V2, VR>,
    pub(crate) send_old: bool,
}

impl<K, V1, V2, VR> Processor<K, Change<V1>, K, Change<VR>> for TableTableJoin<K, V1, V2, VR>
where
    K: Clone + 'static,
    V1: 'static,
    V2: 'static,
    VR: Clone + 'static,
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<VR>>,
        record: Record<K, Change<V1>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            // Kafka skips null keys here, with a warning.
            ctx.count_dropped_record();
            return Ok(());
        };
        if !change.is_latest {
            // Kafka's versioned semantics: an out-of-order update of a
            // versioned table is skipped and counted.
            ctx.count_dropped_record();
            return Ok(());
        }
        let other = (self.getter)(&ctx.store_lookup(), key)?;
        let (new_v, old_v) = (change.new.as_ref(), change.old.as_ref());
        let j = |v: Option<&V1>, o: Option<&V2>| (self.joiner)(v, o);
        let (new, old, timestamp) = match self.kind {
            TableJoinKind::Inner => {
                let Some((o, ts)) = &other else {
                    return Ok(());
                };
                let new = new_v.and_then(|v| j(Some(v), Some(o)));
                let old = old_v
                    .filter(|_| self.send_old)
                    .and_then(|v| j(Some(v), Some(o)));
                (new, old, record.timestamp.max(*ts))
            }
            TableJoinKind::Left => {
                if other.is_none() && new_v.is_none() && old_v.is_none() {
                    return Ok(());
                }
                let o = other.as_ref().map(|(o, _)| o);
                let ts = other.as_ref().map_or(UNKNOWN, |(_, ts)| *ts);
                let new = new_v.and_then(|v| j(Some(v), o));
                let old = old_v.filter(|_| self.send_old).and_then(|v| j(Some(v), o));
                (new, old, record.timestamp.max(ts))
            }
            TableJoinKind::Right => {
                let Some((o, ts)) = &other else {
                    return Ok(());
                };
                // The joiner is called even for a missing right value: a
                // deleted right row leaves the left row joined with nothing.
                let new = j(new_v, Some(o));
                let old = if self.send_old {
                    j(old_v, Some(o))
                } else {
                    None
                };
                (new, old, record.timestamp.max(*ts))
            }
            TableJoinKind::Outer => {
                if other.is_none() && new_v.is_none() && old_v.is_none() {
                    return Ok(());
                }
                let o = other.as_ref().map(|(o, _)| o);
                let ts = match &other {
                    Some((_, ts)) => record.timestamp.max(*ts),
                    None => record.timestamp,
                };
                let new = if o.is_some() || new_v.is_some() {
                    j(new_v, o)
                } else {
                    None
                };
                let old = if self.send_old && (o.is_some() || old_v.is_some()) {
                    j(old_v, o)
                } else {
                    None
                };
                (new, old, ts)
            }
        };
        ctx.forward(
            record
                .with_value(Some(Change::new(new, old)))
                .with_timestamp(timestamp),
        )
    }
}

/// Kafka's `KTableKTableJoinMerger`: the two sides' results become one
/// table, kept in a store if the join is materialized.
pub(crate) struct TableJoinMerge {
    pub(crate) store: Option<String>,
    pub(crate) send_old: bool,
    pub(crate) cache: CacheSlot,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> Processor<K, Change<V>> for TableJoinMerge {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<V>>) -> Result<()> {
        if let Some(store) = &self.store {
            self.cache = cache::enable_kv::<K, V>(ctx, store, self.send_old)?;
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            return Ok(());
        };
        let change = if self.send_old {
            change.clone()
        } else {
            Change::new(change.new.clone(), None)
        };
        match &self.store {
            Some(store) => {
                let (key, new, ts) = (key.clone(), change.new.clone(), record.timestamp);
                cache::write_kv(ctx, &self.cache, store, &key, new, ts, &record, |_| {
                    (change, ts)
                })
            }
            None => ctx.forward(record.with_value(Some(change))),
        }
    }
}

/// The getter of an unmaterialized join result: Kafka's
/// `KTableKTable*JoinValueGetter`, joining both sides' current rows.
pub(crate) fn join_getter<K: 'static, V1: 'static, V2: 'static, VR: 'static>(
    kind: TableJoinKind,
    left: ValueGetter<K, V1>,
    right: ValueGetter<K, V2>,
    joiner: Joiner<V1, V2, VR>,
) -> ValueGetter<K, VR> {
    Rc::new(move |lookup, key| {
        let l = left(lookup, key)?;
        let joined = match kind {
            TableJoinKind::Inner => match (l, right(lookup, key)?) {
                (Some((l, lt)), Some((r, rt))) => {
                    joiner(Some(&l), Some(&r)).map(|v| (v, lt.max(rt)))
                }
                _ => None,
            },
            TableJoinKind::Left => match l {
                Some((l, lt)) => {
                    let r = right(lookup, key)?;
                    let ts = r.as_ref().map_or(lt, |(_, rt)| lt.max(*rt));
                    joiner(Some(&l), r.as_ref().map(|(r, _)| r)).map(|v| (v, ts))
                }
                None => None,
            },
            // Kafka's right-join getter: a row wherever the looked-up
            // side has one.
            TableJoinKind::Right => match right(lookup, key)? {
                Some((r, rt)) => {
                    let ts = l.as_ref().map_or(rt, |(_, lt)| rt.max(*lt));
                    joiner(l.as_ref().map(|(v, _)| v), Some(&r)).map(|v| (v, ts))
                }
                None => None,
            },
            TableJoinKind::Outer => {
                let r = right(lookup, key)?;
                if l.is_none() && r.is_none() {
                    None
                } else {
                    let lt = l.as_ref().map_or(UNKNOWN, |(_, t)| *t);
                    let rt = r.as_ref().map_or(UNKNOWN, |(_, t)| *t);
                    joiner(l.as_ref().map(|(v, _)| v), r.as_ref().map(|(v, _)| v))
                        .map(|v| (v, lt.max(rt)))
                }
            }
        };
        Ok(joined)
    })
}
