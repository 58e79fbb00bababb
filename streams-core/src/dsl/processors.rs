//! The processors behind the stateless DSL operators.
//!
//! User closures see keys as `Option<&K>` (null keys are common on
//! streams) and values as `&V`. A tombstone (a `None` value) never reaches
//! a user closure: operators that keep the key forward it unchanged (as a
//! tombstone of the new value type), `foreach` skips it, and operators that
//! must compute a new key from the value (`map`, `flat_map`, `select_key`)
//! drop it and count it in the task's `dropped_records` metric.

use std::rc::Rc;

use crate::error::Result;
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;

/// A user closure over a record's key and value.
pub(crate) type KvFn<K, V, R> = Rc<dyn Fn(Option<&K>, &V) -> R>;

pub(crate) type Predicate<K, V> = KvFn<K, V, bool>;

pub(crate) struct Filter<K, V> {
    pub(crate) predicate: Predicate<K, V>,
    pub(crate) keep_when: bool,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for Filter<K, V> {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        let pass = match &record.value {
            Some(v) => (self.predicate)(record.key.as_ref(), v) == self.keep_when,
            None => true,
        };
        if pass { ctx.forward(record) } else { Ok(()) }
    }
}

pub(crate) struct MapValues<K, V, VR> {
    pub(crate) mapper: KvFn<K, V, VR>,
}

impl<K: Clone + 'static, V: 'static, VR: Clone + 'static> Processor<K, V, K, VR>
    for MapValues<K, V, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let value = record
            .value
            .as_ref()
            .map(|v| (self.mapper)(record.key.as_ref(), v));
        ctx.forward(record.with_value(value))
    }
}

pub(crate) struct FlatMapValues<K, V, VR> {
    pub(crate) mapper: KvFn<K, V, Vec<VR>>,
}

impl<K: Clone + 'static, V: 'static, VR: Clone + 'static> Processor<K, V, K, VR>
    for FlatMapValues<K, V, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            return ctx.forward(record.with_value(None));
        };
        let values = (self.mapper)(record.key.as_ref(), value);
        let template = record.with_value::<VR>(None);
        for v in values {
            ctx.forward(Record {
                key: template.key.clone(),
                value: Some(v),
                timestamp: template.timestamp,
                headers: template.headers.clone(),
            })?;
        }
        Ok(())
    }
}

pub(crate) struct FlatMap<K, V, KR, VR> {
    pub(crate) mapper: KvFn<K, V, Vec<(KR, VR)>>,
}

impl<K: 'static, V: 'static, KR: Clone + 'static, VR: Clone + 'static> Processor<K, V, KR, VR>
    for FlatMap<K, V, KR, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KR, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        for (k, v) in (self.mapper)(record.key.as_ref(), value) {
            ctx.forward(Record {
                key: Some(k),
                value: Some(v),
                timestamp: record.timestamp,
                headers: record.headers.clone(),
            })?;
        }
        Ok(())
    }
}

pub(crate) struct Map<K, V, KR, VR> {
    pub(crate) mapper: KvFn<K, V, (KR, VR)>,
}

impl<K: 'static, V: 'static, KR: Clone + 'static, VR: Clone + 'static> Processor<K, V, KR, VR>
    for Map<K, V, KR, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KR, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let (k, v) = (self.mapper)(record.key.as_ref(), value);
        ctx.forward(Record {
            key: Some(k),
            value: Some(v),
            timestamp: record.timestamp,
            headers: record.headers,
        })
    }
}

pub(crate) struct SelectKey<K, V, KR> {
    pub(crate) selector: KvFn<K, V, KR>,
}

impl<K: 'static, V: Clone + 'static, KR: Clone + 'static> Processor<K, V, KR, V>
    for SelectKey<K, V, KR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KR, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let key = (self.selector)(record.key.as_ref(), value);
        ctx.forward(record.with_key(Some(key)))
    }
}

pub(crate) struct Peek<K, V> {
    pub(crate) action: KvFn<K, V, ()>,
    pub(crate) forward: bool,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for Peek<K, V> {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        if let Some(v) = &record.value {
            (self.action)(record.key.as_ref(), v);
        }
        if self.forward {
            ctx.forward(record)
        } else {
            Ok(())
        }
    }
}

/// Forwards every record unchanged (merge, branch children, repartition filter).
pub(crate) struct PassThrough;

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for PassThrough {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        ctx.forward(record)
    }
}

pub(crate) struct Branch<K, V> {
    pub(crate) predicates: Rc<Vec<Predicate<K, V>>>,
    /// One child per predicate, then the default branch's child if any.
    pub(crate) children: Rc<Vec<String>>,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for Branch<K, V> {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        if let Some(v) = &record.value {
            for (i, p) in self.predicates.iter().enumerate() {
                if p(record.key.as_ref(), v) {
                    return ctx.forward_to(&self.children[i], record);
                }
            }
        }
        match self.children.get(self.predicates.len()) {
            Some(default) => ctx.forward_to(default, record),
            None => {
                if record.value.is_none() {
                    ctx.count_dropped_record();
                }
                Ok(())
            }
        }
    }
}
