//! The processors behind KTables and aggregations. They forward
//! `Record<K, Change<V>>`: the new value of a row and, when a downstream
//! operator asked for it, the old one (Kafka's `sendOldValues`). With the
//! record cache on (see `crate::dsl::cache`) the ones with a store leave
//! forwarding to the cache's flush.

use std::rc::Rc;

use crate::dsl::cache::{self, CacheSlot};
use crate::error::Result;
use crate::processor::{Processor, ProcessorContext};
use crate::record::{Change, Record};
use crate::state::VersionedKeyValueStore;

/// A table's current value for a key, as a downstream operator (a join)
/// reads it: from a store, or computed through filters and mappers from
/// one.
pub(crate) type ValueGetter<K, V> =
    Rc<dyn Fn(&crate::processor::StoreLookup<'_>, &K) -> Result<Option<(V, i64)>>>;

/// A versioned table's value for a key as of a time, Kafka's
/// `KTableValueGetter.get(key, asOfTimestamp)` of a getter whose
/// `isVersioned()` is true: from a versioned store, or computed through
/// filters and mappers from one.
pub(crate) type VersionedValueGetter<K, V> =
    Rc<dyn Fn(&crate::processor::StoreLookup<'_>, &K, i64) -> Result<Option<(V, i64)>>>;

/// Kafka's `KeyValueStoreWrapper.put` on a versioned store and the
/// `TimestampedTupleForwarder` after it (versioned stores have no cache):
/// puts `new` at the record's timestamp and, unless the put was too old
/// to be made, forwards `Change(new, old)`, where `old` is the store's
/// newest value before the put when `send_old`. The change is the newest
/// version when the put was.
fn put_versioned_and_forward<K, V, VIn>(
    ctx: &mut ProcessorContext<'_, K, Change<V>>,
    store: &str,
    record: Record<K, VIn>,
    key: &K,
    new: Option<V>,
    send_old: bool,
) -> Result<()>
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
{
    let (old, put) = {
        let mut store = ctx.versioned_key_value_store::<K, V>(store)?;
        let old = if send_old {
            store.get(key)?.map(|r| r.value)
        } else {
            None
        };
        (old, store.put(key.clone(), new.clone(), record.timestamp)?)
    };
    if put == VersionedKeyValueStore::<K, V>::PUT_RETURN_CODE_NOT_PUT {
        return Ok(());
    }
    let is_latest = put == VersionedKeyValueStore::<K, V>::PUT_RETURN_CODE_VALID_TO_UNDEFINED;
    ctx.forward(record.with_value(Some(Change::new(new, old).with_is_latest(is_latest))))
}

/// `builder.table(..)`: stores each row (if materialized) and forwards
/// the change. In a versioned store (KIP-914) an update older than the
/// row's newest version only adds history: it is forwarded marked as not
/// the newest, with the newest value as the old one; an update older than
/// the history retention is dropped.
pub(crate) struct TableSource {
    pub(crate) store: Option<String>,
    pub(crate) send_old: bool,
    pub(crate) cache: CacheSlot,
    /// Whether the store is a versioned one.
    pub(crate) versioned: bool,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> Processor<K, V, K, Change<V>> for TableSource {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<V>>) -> Result<()> {
        if let Some(store) = &self.store
            && !self.versioned
        {
            self.cache = cache::enable_kv::<K, V>(ctx, store, self.send_old)?;
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<V>>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(key) = &record.key else {
            // Kafka skips null keys on tables, with a warning.
            ctx.count_dropped_record();
            return Ok(());
        };
        let Some(store) = &self.store else {
            let new = record.value.clone();
            return ctx.forward(record.with_value(Some(Change::new(new, None))));
        };
        if self.versioned {
            let (key, new) = (key.clone(), record.value.clone());
            return put_versioned_and_forward(ctx, store, record, &key, new, self.send_old);
        }
        let send_old = self.send_old;
        let new = record.value.clone();
        let forwarded = new.clone();
        cache::write_kv(
            ctx,
            &self.cache,
            store,
            key,
            new,
            record.timestamp,
            &record,
            |old| {
                let old = if send_old { old } else { None };
                (Change::new(forwarded, old), record.timestamp)
            },
        )
    }
}

/// Writes a table operator's result to its own store, if it has one,
/// and forwards `change` (with the cache on, the flush forwards).
fn write_result<K: Ord + Clone + 'static, V: Clone + 'static>(
    ctx: &mut ProcessorContext<'_, K, Change<V>>,
    cache: &CacheSlot,
    store: &Option<String>,
    record: Record<K, Change<V>>,
    key: &K,
    change: Change<V>,
) -> Result<()> {
    match store {
        Some(store) => {
            let new = change.new.clone();
            let ts = record.timestamp;
            cache::write_kv(ctx, cache, store, key, new, ts, &record, |_| (change, ts))
        }
        None => ctx.forward(record.with_value(Some(change))),
    }
}

/// `KTable::filter` / `filter_not`: a row that fails the predicate is
/// deleted downstream.
pub(crate) struct TableFilter<K, V> {
    pub(crate) predicate: Rc<dyn Fn(&K, &V) -> bool>,
    pub(crate) keep_when: bool,
    pub(crate) send_old: bool,
    pub(crate) store: Option<String>,
    pub(crate) cache: CacheSlot,
    /// Whether its own store is a versioned one.
    pub(crate) versioned_store: bool,
    /// Kafka's `useVersionedSemantics`: the table filtered is versioned
    /// (or reads one without a store of another kind between them), so a
    /// change that was and stays filtered out is still forwarded.
    pub(crate) versioned_semantics: bool,
}

impl<K, V> TableFilter<K, V> {
    fn compute(&self, key: &K, value: Option<&V>) -> bool {
        value.is_some_and(|v| (self.predicate)(key, v) == self.keep_when)
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> Processor<K, Change<V>> for TableFilter<K, V> {
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<V>>) -> Result<()> {
        if let Some(store) = &self.store
            && !self.versioned_store
        {
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
        let new = if self.compute(key, change.new.as_ref()) {
            change.new.clone()
        } else {
            None
        };
        let key = key.clone();
        if let (Some(store), true) = (&self.store, self.versioned_store) {
            // Kafka's old value of a materialized filter: its store's.
            let old = if self.send_old {
                ctx.versioned_key_value_store::<K, V>(store)?
                    .get(&key)?
                    .map(|r| r.value)
            } else {
                None
            };
            if !self.versioned_semantics && self.send_old && old.is_none() && new.is_none() {
                return Ok(());
            }
            let store = store.clone();
            return put_versioned_and_forward(ctx, &store, record, &key, new, self.send_old);
        }
        let old = if self.send_old && self.compute(&key, change.old.as_ref()) {
            change.old.clone()
        } else {
            None
        };
        if !self.versioned_semantics && self.send_old && old.is_none() && new.is_none() {
            // Nothing was there and nothing is: nothing to say.
            return Ok(());
        }
        // A store of its own makes this the newest version; without one
        // the change is what it was upstream.
        let is_latest = self.store.is_some() || change.is_latest;
        write_result(
            ctx,
            &self.cache,
            &self.store,
            record,
            &key,
            Change::new(new, old).with_is_latest(is_latest),
        )
    }
}

/// `KTable::map_values`.
pub(crate) struct TableMapValues<K, V, VR> {
    pub(crate) mapper: Rc<dyn Fn(&K, &V) -> VR>,
    pub(crate) send_old: bool,
    pub(crate) store: Option<String>,
    pub(crate) cache: CacheSlot,
    /// Whether its own store is a versioned one.
    pub(crate) versioned_store: bool,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VR: Clone + 'static>
    Processor<K, Change<V>, K, Change<VR>> for TableMapValues<K, V, VR>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<VR>>) -> Result<()> {
        if let Some(store) = &self.store
            && !self.versioned_store
        {
            self.cache = cache::enable_kv::<K, VR>(ctx, store, self.send_old)?;
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<VR>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            return Ok(());
        };
        let new = change.new.as_ref().map(|v| (self.mapper)(key, v));
        let key = key.clone();
        if let (Some(store), true) = (&self.store, self.versioned_store) {
            let store = store.clone();
            return put_versioned_and_forward(ctx, &store, record, &key, new, self.send_old);
        }
        let old = if self.send_old {
            change.old.as_ref().map(|v| (self.mapper)(&key, v))
        } else {
            None
        };
        let is_latest = self.store.is_some() || change.is_latest;
        let record = record.with_value(None::<Change<VR>>);
        write_result(
            ctx,
            &self.cache,
            &self.store,
            record,
            &key,
            Change::new(new, old).with_is_latest(is_latest),
        )
    }
}

/// `KTable::to_stream`: the new value of each update (a tombstone for a delete).
pub(crate) struct TableToStream;

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, Change<V>, K, V> for TableToStream {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let new = record.value.as_ref().and_then(|c| c.new.clone());
        ctx.forward(record.with_value(new))
    }
}

/// `KGroupedStream::aggregate` (and `count`, `reduce`): one row per key.
pub(crate) struct StreamAggregate<K, V, VA> {
    pub(crate) store: String,
    /// The first aggregate of a key, from its first value: the
    /// initializer applied and then the aggregator (or, for `reduce`, the
    /// value itself).
    pub(crate) first: Rc<dyn Fn(&K, &V) -> VA>,
    pub(crate) aggregator: Rc<dyn Fn(&K, &V, VA) -> VA>,
    pub(crate) send_old: bool,
    pub(crate) cache: CacheSlot,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    Processor<K, V, K, Change<VA>> for StreamAggregate<K, V, VA>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<VA>>) -> Result<()> {
        self.cache = cache::enable_kv::<K, VA>(ctx, &self.store, self.send_old)?;
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<VA>>,
        record: Record<K, V>,
    ) -> Result<()> {
        let (Some(key), Some(value)) = (&record.key, &record.value) else {
            // Kafka skips a null key or value here, with a warning.
            ctx.count_dropped_record();
            return Ok(());
        };
        let (new, old, timestamp) = {
            let store = ctx.timestamped_key_value_store::<K, VA>(&self.store)?;
            match store.get_key(key)? {
                None => ((self.first)(key, value), None, record.timestamp),
                Some(old) => (
                    (self.aggregator)(key, value, old.value.clone()),
                    Some(old.value),
                    record.timestamp.max(old.timestamp),
                ),
            }
        };
        let old = if self.send_old { old } else { None };
        let forwarded = new.clone();
        cache::write_kv(
            ctx,
            &self.cache,
            &self.store,
            key,
            Some(new),
            timestamp,
            &record,
            |_| (Change::new(Some(forwarded), old), timestamp),
        )
    }
}

/// `KTable::group_by`: re-keys each update, sending the old row's
/// removal and the new row's addition (one change when the key stays).
pub(crate) struct TableRepartitionMap<K, V, KR, VR> {
    pub(crate) selector: Rc<dyn Fn(&K, &V) -> (KR, VR)>,
}

impl<K: 'static, V: 'static, KR: Clone + PartialEq + 'static, VR: Clone + 'static>
    Processor<K, Change<V>, KR, Change<VR>> for TableRepartitionMap<K, V, KR, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KR, Change<VR>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            return Ok(());
        };
        if !change.is_latest {
            // Kafka's versioned semantics: an out-of-order update of a
            // versioned table changes no group.
            return Ok(());
        }
        let new = change.new.as_ref().map(|v| (self.selector)(key, v));
        let old = change.old.as_ref().map(|v| (self.selector)(key, v));
        let at = |k: KR, c: Change<VR>| Record {
            key: Some(k),
            value: Some(c),
            timestamp: record.timestamp,
            headers: record.headers.clone(),
        };
        match (old, new) {
            (Some((ok, ov)), Some((nk, nv))) if ok == nk => {
                ctx.forward(at(nk, Change::new(Some(nv), Some(ov))))
            }
            (old, new) => {
                if let Some((ok, ov)) = old {
                    ctx.forward(at(ok, Change::new(None, Some(ov))))?;
                }
                if let Some((nk, nv)) = new {
                    ctx.forward(at(nk, Change::new(Some(nv), None)))?;
                }
                Ok(())
            }
        }
    }
}

/// `KGroupedTable::aggregate` (and `count`, `reduce`): subtracts the old
/// value, adds the new one.
pub(crate) struct TableAggregate<K, V, VA> {
    pub(crate) store: String,
    /// The aggregate of a key that has none, from its first value: the
    /// adder applied to the initializer (or, for `reduce`, the value).
    pub(crate) first: Rc<dyn Fn(&K, &V) -> VA>,
    pub(crate) adder: Rc<dyn Fn(&K, &V, VA) -> VA>,
    pub(crate) subtractor: Rc<dyn Fn(&K, &V, VA) -> VA>,
    pub(crate) send_old: bool,
    pub(crate) cache: CacheSlot,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    Processor<K, Change<V>, K, Change<VA>> for TableAggregate<K, V, VA>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, Change<VA>>) -> Result<()> {
        self.cache = cache::enable_kv::<K, VA>(ctx, &self.store, self.send_old)?;
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, Change<VA>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let (new, old, timestamp) = {
            let store = ctx.timestamped_key_value_store::<K, VA>(&self.store)?;
            let old = store.get_key(key)?;
            let mut timestamp = record.timestamp;
            let intermediate = match (&change.old, &old) {
                (Some(ov), Some(agg)) => {
                    timestamp = timestamp.max(agg.timestamp);
                    Some((self.subtractor)(key, ov, agg.value.clone()))
                }
                _ => old.as_ref().map(|agg| agg.value.clone()),
            };
            let new = match &change.new {
                Some(nv) => {
                    if let Some(agg) = &old {
                        timestamp = timestamp.max(agg.timestamp);
                    }
                    Some(match intermediate {
                        Some(agg) => (self.adder)(key, nv, agg),
                        None => (self.first)(key, nv),
                    })
                }
                None => intermediate,
            };
            (new, old.map(|o| o.value), timestamp)
        };
        let old = if self.send_old { old } else { None };
        let forwarded = new.clone();
        cache::write_kv(
            ctx,
            &self.cache,
            &self.store,
            key,
            new,
            timestamp,
            &record,
            |_| (Change::new(forwarded, old), timestamp),
        )
    }
}
