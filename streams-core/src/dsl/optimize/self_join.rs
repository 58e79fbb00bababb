//! `single.store.self.join` (KIP-862): Kafka's `rewriteSingleStoreSelfJoin`
//! and its `KStreamKStreamSelfJoin` processor.
//!
//! A stream-stream join whose two sides are the same stream (`s.join_stream(&s, ..)`,
//! after the same repartition topic if any) keeps one window store: the
//! this-side windowed node stays (`KSTREAM-WINDOWED-`, with
//! `KSTREAM-JOINTHIS-<n>-store`), and one processor, named as the join's
//! merge node (`KSTREAM-MERGE-<n>`), joins each record with the records
//! of that store, both ways, and with itself. The other windowed node, the
//! two join nodes and the merge go, and with them the other side's store
//! and, for left and outer joins, the shared outer store: as in Kafka, a
//! left or outer self-join becomes this inner self-join (every record
//! matches at least itself), and a record without a key or value is
//! dropped and counted, even in a left or outer join.

use std::any::Any;
use std::collections::HashSet;

use crate::dsl::join_processors::Joiner;
use crate::dsl::optimize::OptimizationMetadata;
use crate::dsl::optimize::graph::{Graph, Unit};
use crate::error::Result;
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;

/// Rewrites each self-join of `graph`; returns the stores no node uses
/// any more.
pub(super) fn rewrite(graph: &mut Graph, meta: &OptimizationMetadata) -> HashSet<String> {
    let mut dropped = HashSet::new();
    for (j, join) in meta.stream_joins.iter().enumerate() {
        if join.make_self_join.is_none() {
            continue;
        }
        let ids: Vec<Option<usize>> = [
            &join.this_windowed,
            &join.other_windowed,
            &join.this_join,
            &join.other_join,
            &join.merge,
        ]
        .iter()
        .map(|name| graph.find_node(name))
        .collect();
        let [
            Some(this_windowed),
            Some(other_windowed),
            Some(this_join),
            Some(other_join),
            Some(merge),
        ] = ids[..]
        else {
            continue;
        };
        // Kafka's test: the join node has one parent, both sides' stream.
        let (this_parents, other_parents) =
            (graph.parents(this_windowed), graph.parents(other_windowed));
        if this_parents.len() != 1 || this_parents != other_parents {
            continue;
        }
        let parent = this_parents[0];
        graph.remove_child(parent, other_windowed);
        let self_join = graph.add(
            Unit::SelfJoin { join: j },
            join.merge.clone(),
            graph.priority(this_join),
        );
        graph.add_child(this_windowed, self_join);
        // The merge's children read from the self-join, in the merge's
        // place among their parents.
        for child in graph.children(merge).to_vec() {
            graph.add_child(self_join, child);
            graph.remove_child(merge, child);
        }
        for gone in [other_windowed, this_join, other_join, merge] {
            graph.clear_children(gone);
            for p in graph.parents(gone).to_vec() {
                graph.remove_child(p, gone);
            }
            graph.remove(gone);
        }
        dropped.insert(join.other_store.clone());
        if let Some(outer) = &join.outer_store {
            dropped.insert(outer.clone());
        }
    }
    dropped
}

/// Kafka's `KStreamKStreamSelfJoin`: joins each record with the records
/// of its key in the one window store (which the windowed node before it
/// fills after forwarding), first as the left side, then as the right
/// side, and with itself, in the order an inner join of the stream with
/// itself gives. `V` and `VO` are the same type (the store's value type);
/// the join is built only then.
pub(crate) struct StreamStreamSelfJoin<V, VO, VR> {
    pub(crate) store: String,
    /// The join windows' `before` and `after`.
    pub(crate) before_ms: i64,
    pub(crate) after_ms: i64,
    /// `before + after + grace`: a record older than this behind stream
    /// time does not join itself.
    pub(crate) retention_ms: i64,
    pub(crate) joiner: Joiner<V, VO, VR>,
    /// The largest timestamp seen (Kafka's `TimeTracker`).
    pub(crate) stream_time: i64,
}

impl<K, V, VO, VR> Processor<K, V, K, VR> for StreamStreamSelfJoin<V, VO, VR>
where
    K: Ord + Clone + 'static,
    V: Clone + 'static,
    VO: Clone + 'static,
    VR: Clone + 'static,
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let (Some(key), Some(value)) = (&record.key, &record.value) else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let as_other = |v: &V| (v as &dyn Any).downcast_ref::<VO>().cloned();
        let Some(value_as_other) = as_other(value) else {
            return Ok(());
        };
        let ts = record.timestamp;
        let self_value = (self.joiner)(Some(value), Some(&value_as_other));
        self.stream_time = self.stream_time.max(ts);
        let emit_self = ts > self.stream_time - self.retention_ms + 1;
        let (this_side, other_side): (Vec<(i64, V)>, Vec<(i64, V)>) = {
            let store = ctx.window_store::<K, V>(&self.store)?;
            let fetch = |before: i64, after: i64| -> Result<Vec<(i64, V)>> {
                let from = ts.saturating_sub(before).max(0);
                let to = ts.saturating_add(after).max(0);
                Ok(store.fetch(key, from..=to)?.collect())
            };
            (
                fetch(self.before_ms, self.after_ms)?,
                fetch(self.after_ms, self.before_ms)?,
            )
        };
        let mut out: Vec<(Option<VR>, i64)> = Vec::new();
        for (other_ts, other) in &this_side {
            let Some(other) = as_other(other) else {
                continue;
            };
            out.push(((self.joiner)(Some(value), Some(&other)), ts.max(*other_ts)));
        }
        let mut emitted_self = false;
        for (other_ts, other) in &other_side {
            let max_ts = ts.max(*other_ts);
            if ts < max_ts && !emitted_self && emit_self {
                emitted_self = true;
                out.push((self_value.clone(), ts));
            }
            out.push(((self.joiner)(Some(other), Some(&value_as_other)), max_ts));
        }
        if !emitted_self && emit_self {
            out.push((self_value, ts));
        }
        for (joined, timestamp) in out {
            if let Some(v) = joined {
                ctx.forward(Record {
                    key: Some(key.clone()),
                    value: Some(v),
                    timestamp,
                    headers: record.headers.clone(),
                })?;
            }
        }
        Ok(())
    }
}
