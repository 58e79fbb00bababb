//! The processors of windowed aggregations, Kafka's
//! `KStreamWindowAggregate`, `KStreamSlidingWindowAggregate` and
//! `KStreamSessionWindowAggregate` with the default emit strategy
//! (`ON_WINDOW_UPDATE`): every update goes to the store, and the record
//! cache in front of it (`dsl::cache`, on unless disabled) forwards a
//! window's last update of each input record; with caching off, every
//! update. They forward `Record<Windowed<K>, Change<VA>>`.
//!
//! Each keeps its own *observed stream time*, the largest timestamp it
//! has seen; a window is closed once its end plus the grace period is at or
//! before it (for sessions, plus the gap as well). A record for a closed
//! window is dropped and counted in the task's `dropped_records` metric,
//! once per window it misses, as Kafka counts it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::dsl::cache::{self, CacheSlot};
use crate::dsl::{SessionWindows, TimeWindows, Window, Windowed};
use crate::error::{Result, StreamsError};
use crate::processor::{Processor, ProcessorContext};
use crate::record::{Change, Record};

/// How an aggregation starts and grows.
pub(crate) struct AggFns<K, V, VA> {
    /// The aggregate of an empty window: `None` for `reduce`.
    pub(crate) init: Rc<dyn Fn() -> Option<VA>>,
    /// Adds a value to an aggregate (`None` for `reduce`'s first value).
    pub(crate) add: Rc<dyn Fn(&K, &V, Option<VA>) -> VA>,
    /// What a tombstone does to an aggregate, if it is accepted at all:
    /// Kafka's windowed `count` counts records with a null value; the
    /// other aggregations (whose closures see `&V`) drop and count them.
    pub(crate) tombstone: Option<Rc<dyn Fn(Option<VA>) -> VA>>,
}

impl<K, V, VA> Clone for AggFns<K, V, VA> {
    fn clone(&self) -> Self {
        AggFns {
            init: self.init.clone(),
            add: self.add.clone(),
            tombstone: self.tombstone.clone(),
        }
    }
}

impl<K, V, VA> AggFns<K, V, VA> {
    fn accepts(&self, value: Option<&V>) -> bool {
        value.is_some() || self.tombstone.is_some()
    }

    fn apply(&self, key: &K, value: Option<&V>, agg: Option<VA>) -> Option<VA> {
        match value {
            Some(v) => Some((self.add)(key, v, agg)),
            None => self.tombstone.as_ref().map(|t| t(agg)),
        }
    }
}

/// Combines two session aggregates: `merge(key, so far, next)`.
pub(crate) type MergeFn<K, VA> = Rc<dyn Fn(&K, Option<VA>, &VA) -> VA>;

fn windowed_change<K, V, VA>(
    record: &Record<K, V>,
    key: &K,
    window: Window,
    new: Option<VA>,
    old: Option<VA>,
    timestamp: i64,
) -> Record<Windowed<K>, Change<VA>>
where
    K: Clone,
{
    Record {
        key: Some(Windowed::new(key.clone(), window)),
        value: Some(Change::new(new, old)),
        timestamp,
        headers: record.headers.clone(),
    }
}

/// Enables the record cache of a windowed aggregation writing the
/// timestamped window store `store`.
fn enable_window_cache<K: Ord + Clone + 'static, VA: Clone + 'static>(
    ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
    store: &str,
    send_old: bool,
) -> Result<CacheSlot> {
    let enabled = ctx.timestamped_window_store::<K, VA>(store)?.caching;
    let name = store.to_owned();
    cache::enable(
        ctx,
        store,
        enabled,
        send_old,
        cache::value_timestamp,
        // What the cache flushes is logged, also for a window the store
        // has expired (Kafka's changelog layer logs every put).
        move |ctx, key: &Windowed<K>, value| {
            ctx.timestamped_window_store::<K, VA>(&name)?.log_value(
                &key.key,
                key.window.start,
                value,
            )
        },
    )
}

/// The windows a window store's record cache has seen, by key and window
/// start: Kafka's cache keeps flushed entries for reads, so a window the
/// store has already expired is still found (a cogroup's aggregations
/// each close windows by their own stream time, behind the store's).
/// Shared by the processors of one store, as the cache.
pub(crate) type WindowView<K, VA> = Rc<RefCell<BTreeMap<(K, i64), (VA, i64)>>>;

/// The store's window view when its cache is on.
fn window_view<K: Ord + Clone + 'static, VA: Clone + 'static>(
    ctx: &ProcessorContext<'_, Windowed<K>, Change<VA>>,
    store: &str,
    cache: &CacheSlot,
) -> Option<WindowView<K, VA>> {
    cache.get::<Windowed<K>, VA>()?;
    let shared = ctx
        .store_shared(store, "window-view")
        .and_then(|v| v.downcast::<RefCell<BTreeMap<(K, i64), (VA, i64)>>>().ok());
    Some(shared.unwrap_or_else(|| {
        let view: WindowView<K, VA> = Rc::new(RefCell::new(BTreeMap::new()));
        ctx.set_store_shared(store, "window-view", view.clone());
        view
    }))
}

/// The aggregate of `key` in the window at `start`: what the cache has
/// seen, else the store's.
fn window_get<K: Ord + Clone + 'static, VA: Clone + 'static>(
    ctx: &ProcessorContext<'_, Windowed<K>, Change<VA>>,
    store: &str,
    view: Option<&WindowView<K, VA>>,
    key: &K,
    start: i64,
) -> Result<Option<(VA, i64)>> {
    if let Some(found) = view.and_then(|v| v.borrow().get(&(key.clone(), start)).cloned()) {
        return Ok(Some(found));
    }
    let store = ctx.timestamped_window_store::<K, VA>(store)?;
    Ok(store.get(key, start)?.map(|vt| (vt.value, vt.timestamp)))
}

/// Writes a window's new aggregate and forwards the change (`old` is what
/// the forward carries without the cache); with the cache on, writes the
/// store only and leaves the rest to the flush.
#[allow(clippy::too_many_arguments)]
fn write_window<K: Ord + Clone + 'static, V, VA: Clone + 'static>(
    ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
    cache: &CacheSlot,
    view: Option<&WindowView<K, VA>>,
    store: &str,
    record: &Record<K, V>,
    key: &K,
    window: Window,
    old: Option<VA>,
    new: VA,
    new_timestamp: i64,
) -> Result<()> {
    let mut s = ctx.timestamped_window_store::<K, VA>(store)?;
    if let Some(cache) = cache.get::<Windowed<K>, VA>() {
        let viewed = view.and_then(|v| v.borrow().get(&(key.clone(), window.start)).cloned());
        let before = match viewed {
            Some((v, _)) => Some(v),
            None => s.get(key, window.start)?.map(|vt| vt.value),
        };
        s.put_unlogged(key.clone(), new.clone(), new_timestamp, window.start)?;
        drop(s);
        if let Some(view) = view {
            view.borrow_mut()
                .insert((key.clone(), window.start), (new.clone(), new_timestamp));
        }
        cache.borrow_mut().update(
            Cow::Owned(Windowed::new(key.clone(), window)),
            before,
            Some((new, new_timestamp)),
            record.timestamp,
            &record.headers,
            ctx.record_metadata(),
        );
        return Ok(());
    }
    s.put(key.clone(), new.clone(), new_timestamp, window.start)?;
    drop(s);
    ctx.forward(windowed_change(
        record,
        key,
        window,
        Some(new),
        old,
        new_timestamp,
    ))
}

/// `TimeWindowedKStream` aggregations over [`TimeWindows`].
pub(crate) struct TimeWindowAggregate<K, V, VA> {
    pub(crate) store: String,
    pub(crate) windows: TimeWindows,
    pub(crate) fns: AggFns<K, V, VA>,
    pub(crate) send_old: bool,
    pub(crate) observed_stream_time: i64,
    pub(crate) cache: CacheSlot,
    pub(crate) view: Option<WindowView<K, VA>>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    Processor<K, V, Windowed<K>, Change<VA>> for TimeWindowAggregate<K, V, VA>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>) -> Result<()> {
        self.cache = enable_window_cache::<K, VA>(ctx, &self.store, self.send_old)?;
        self.view = window_view(ctx, &self.store, &self.cache);
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(key) = record.key.clone() else {
            ctx.count_dropped_record();
            return Ok(());
        };
        if !self.fns.accepts(record.value.as_ref()) {
            ctx.count_dropped_record();
            return Ok(());
        }
        let timestamp = record.timestamp;
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let close_time = self
            .observed_stream_time
            .saturating_sub(self.windows.grace_ms());
        for window in self.windows.windows_for(timestamp) {
            if window.end <= close_time {
                // Kafka: "Skipping record for expired window."
                ctx.count_dropped_record();
                continue;
            }
            let (old, new, new_timestamp) = {
                let found = window_get(ctx, &self.store, self.view.as_ref(), &key, window.start)?;
                let (old, new_timestamp) = match found {
                    None => ((self.fns.init)(), timestamp),
                    Some((v, t)) => (Some(v), timestamp.max(t)),
                };
                let Some(new) = self.fns.apply(&key, record.value.as_ref(), old.clone()) else {
                    continue;
                };
                (old, new, new_timestamp)
            };
            let old = if self.send_old { old } else { None };
            write_window(
                ctx,
                &self.cache,
                self.view.as_ref(),
                &self.store,
                &record,
                &key,
                window,
                old,
                new,
                new_timestamp,
            )?;
        }
        Ok(())
    }
}

/// An aggregate and the largest record timestamp in it.
type Agg<VA> = (VA, i64);

/// `TimeWindowedKStream` aggregations over sliding windows, Kafka's
/// `KStreamSlidingWindowAggregate` with a store that iterates backwards
/// (`processReverse`), as Kafka's in-memory window store does.
pub(crate) struct SlidingWindowAggregate<K, V, VA> {
    pub(crate) store: String,
    pub(crate) time_difference_ms: i64,
    pub(crate) grace_ms: i64,
    pub(crate) fns: AggFns<K, V, VA>,
    pub(crate) send_old: bool,
    pub(crate) observed_stream_time: i64,
    pub(crate) cache: CacheSlot,
    pub(crate) view: Option<WindowView<K, VA>>,
}

/// The record being aggregated, with its key and value checked.
struct Input<'r, K, V> {
    record: &'r Record<K, V>,
    key: &'r K,
    value: &'r V,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    SlidingWindowAggregate<K, V, VA>
{
    fn window(&self, start: i64) -> Window {
        Window::new(start, start.saturating_add(self.time_difference_ms))
    }

    fn made(&self, timestamp: i64) -> Option<Agg<VA>> {
        (self.fns.init)().map(|v| (v, timestamp))
    }

    /// Kafka's `updateWindowAndForward`.
    fn update(
        &self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        input: &Input<'_, K, V>,
        window: Window,
        agg: Option<Agg<VA>>,
        close_time: i64,
    ) -> Result<()> {
        if window.end < close_time {
            ctx.count_dropped_record();
            return Ok(());
        }
        let timestamp = input.record.timestamp;
        let new_timestamp = agg.as_ref().map_or(timestamp, |(_, t)| timestamp.max(*t));
        let old = agg.map(|(v, _)| v);
        let new = (self.fns.add)(input.key, input.value, old.clone());
        let old = if self.send_old { old } else { None };
        write_window(
            ctx,
            &self.cache,
            self.view.as_ref(),
            &self.store,
            input.record,
            input.key,
            window,
            old,
            new,
            new_timestamp,
        )
    }

    /// Kafka's `createCurrentRecordRightWindow`: a copy of the aggregate
    /// of the records after this one, with no closing check.
    fn create_current_right(
        &self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        input: &Input<'_, K, V>,
        right: Agg<VA>,
    ) -> Result<()> {
        let window = self.window(input.record.timestamp.saturating_add(1));
        write_window(
            ctx,
            &self.cache,
            self.view.as_ref(),
            &self.store,
            input.record,
            input.key,
            window,
            None,
            right.0,
            right.1,
        )
    }

    fn fetch(
        &self,
        ctx: &ProcessorContext<'_, Windowed<K>, Change<VA>>,
        key: &K,
        from: i64,
        to: i64,
        backward: bool,
    ) -> Result<Vec<(i64, Agg<VA>)>> {
        let store = ctx.timestamped_window_store::<K, VA>(&self.store)?;
        let found = store
            .fetch(key, from..=to)?
            .map(|(start, vt)| (start, (vt.value, vt.timestamp)));
        // With the cache, what it has seen wins over the store (Kafka's
        // merged cache and store iterator), expired windows included.
        let found: Vec<(i64, Agg<VA>)> = match &self.view {
            Some(view) => {
                let mut merged: BTreeMap<i64, Agg<VA>> = found.collect();
                let view = view.borrow();
                let range = (key.clone(), from)..=(key.clone(), to);
                for ((_, start), agg) in view.range(range) {
                    merged.insert(*start, agg.clone());
                }
                merged.into_iter().collect()
            }
            None => found.collect(),
        };
        Ok(if backward {
            found.into_iter().rev().collect()
        } else {
            found
        })
    }

    /// Kafka's `processReverse`.
    fn process_reverse(
        &self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        input: &Input<'_, K, V>,
        close_time: i64,
    ) -> Result<()> {
        let timestamp = input.record.timestamp;
        let diff = self.time_difference_ms;
        let mut starts = BTreeSet::new();
        let mut left_agg = None;
        let mut right_agg = None;
        let mut left_created = false;
        let mut right_created = false;
        let mut previous = None;
        let from = timestamp.saturating_sub(diff.saturating_mul(2)).max(0);
        let found = self.fetch(ctx, input.key, from, timestamp.saturating_add(1), true)?;
        for (start, agg) in found {
            starts.insert(start);
            let end = start.saturating_add(diff);
            let max_timestamp = agg.1;
            if start == timestamp.saturating_add(1) {
                right_created = true;
            } else if end > timestamp {
                if right_agg.is_none() {
                    right_agg = Some(agg.clone());
                }
                self.update(ctx, input, self.window(start), Some(agg), close_time)?;
            } else if end == timestamp {
                left_created = true;
                self.update(ctx, input, self.window(start), Some(agg), close_time)?;
                if max_timestamp < timestamp {
                    previous = Some(max_timestamp);
                } else {
                    return Ok(());
                }
            } else {
                left_agg = Some(agg);
                previous = Some(max_timestamp);
                break;
            }
        }
        let state = WindowsFound {
            starts,
            left_agg,
            right_agg,
            left_created,
            right_created,
            previous,
        };
        self.create_windows(ctx, input, close_time, state)
    }

    /// Kafka's `createWindows`.
    fn create_windows(
        &self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        input: &Input<'_, K, V>,
        close_time: i64,
        found: WindowsFound<VA>,
    ) -> Result<()> {
        let timestamp = input.record.timestamp;
        let diff = self.time_difference_ms;
        if let Some(previous) = found.previous {
            let previous_right = previous.saturating_add(1);
            if !found.starts.contains(&previous_right)
                && previous_right.saturating_add(diff) >= timestamp
            {
                let agg = self.made(timestamp);
                self.update(ctx, input, self.window(previous_right), agg, close_time)?;
            }
        }
        if !found.left_created {
            let agg = match (found.previous, found.left_agg) {
                (Some(previous), Some((left, _))) if timestamp.saturating_sub(diff) <= previous => {
                    Some((left, timestamp))
                }
                _ => self.made(timestamp),
            };
            let window = Window::new(timestamp.saturating_sub(diff), timestamp);
            self.update(ctx, input, window, agg, close_time)?;
        }
        if let Some(right) = found.right_agg
            && !found.right_created
            && right.1 > timestamp
        {
            self.create_current_right(ctx, input, right)?;
        }
        Ok(())
    }

    /// Kafka's `processEarly`: records before `time difference` have no
    /// left window of their own (it would start before 0); they all go into
    /// the window `[0, time difference]`.
    fn process_early(
        &self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        input: &Input<'_, K, V>,
        close_time: i64,
    ) -> Result<()> {
        let timestamp = input.record.timestamp;
        let mut combined: Option<(i64, Agg<VA>)> = None;
        let mut right_agg = None;
        let mut right_created = false;
        let mut starts = BTreeSet::new();
        let mut previous = None;
        let found = self.fetch(ctx, input.key, 0, timestamp.saturating_add(1), false)?;
        for (start, agg) in found {
            starts.insert(start);
            let max_timestamp = agg.1;
            if start == 0 {
                if max_timestamp < timestamp {
                    previous = Some(max_timestamp);
                }
                combined = Some((start, agg));
            } else if start <= timestamp {
                right_agg = Some(agg.clone());
                self.update(ctx, input, self.window(start), Some(agg), close_time)?;
            } else if start == timestamp.saturating_add(1) {
                right_created = true;
            } else {
                return Err(StreamsError::processing(format!(
                    "unexpected window with start {start} found when processing record at {timestamp} in a sliding window aggregation"
                )));
            }
        }
        if right_agg.is_none()
            && let Some((_, agg)) = &combined
            && agg.1 > timestamp
        {
            right_agg = Some(agg.clone());
        }
        if let Some(right) = right_agg
            && !right_created
            && right.1 > timestamp
        {
            self.create_current_right(ctx, input, right)?;
        }
        if let Some(previous) = previous {
            let previous_right = previous.saturating_add(1);
            if !starts.contains(&previous_right) {
                let agg = self.made(timestamp);
                self.update(ctx, input, self.window(previous_right), agg, close_time)?;
            }
        }
        match combined {
            None => {
                let agg = self.made(timestamp);
                self.update(ctx, input, self.window(0), agg, close_time)
            }
            Some((start, agg)) => {
                self.update(ctx, input, self.window(start), Some(agg), close_time)
            }
        }
    }
}

/// What the scan of existing windows found, for `createWindows`.
struct WindowsFound<VA> {
    starts: BTreeSet<i64>,
    left_agg: Option<Agg<VA>>,
    right_agg: Option<Agg<VA>>,
    left_created: bool,
    right_created: bool,
    previous: Option<i64>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    Processor<K, V, Windowed<K>, Change<VA>> for SlidingWindowAggregate<K, V, VA>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>) -> Result<()> {
        self.cache = enable_window_cache::<K, VA>(ctx, &self.store, self.send_old)?;
        self.view = window_view(ctx, &self.store, &self.cache);
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        record: Record<K, V>,
    ) -> Result<()> {
        let (Some(key), Some(value)) = (&record.key, &record.value) else {
            // Kafka: "Skipping record due to null key or value."
            ctx.count_dropped_record();
            return Ok(());
        };
        let timestamp = record.timestamp;
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let close_time = self.observed_stream_time.saturating_sub(self.grace_ms);
        if timestamp.saturating_add(self.time_difference_ms) < close_time {
            ctx.count_dropped_record();
            return Ok(());
        }
        let input = Input {
            record: &record,
            key,
            value,
        };
        if timestamp < self.time_difference_ms {
            self.process_early(ctx, &input, close_time)
        } else {
            self.process_reverse(ctx, &input, close_time)
        }
    }
}

/// `SessionWindowedKStream` aggregations, Kafka's `KStreamSessionWindowAggregate`.
pub(crate) struct SessionWindowAggregate<K, V, VA> {
    pub(crate) store: String,
    pub(crate) windows: SessionWindows,
    pub(crate) fns: AggFns<K, V, VA>,
    pub(crate) merge: MergeFn<K, VA>,
    pub(crate) send_old: bool,
    pub(crate) observed_stream_time: i64,
    pub(crate) cache: CacheSlot,
    /// With the record cache on: the sessions written since the task
    /// started and not removed. Kafka's cache keeps flushed entries for
    /// reads (its 10 MB are never full in a test), so sessions the store
    /// has already expired can still be found and merged.
    /// Shared by the processors of one store (a cogroup's), as the cache.
    pub(crate) view: Option<Rc<RefCell<BTreeMap<Windowed<K>, VA>>>>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    SessionWindowAggregate<K, V, VA>
{
    /// The sessions a record of `key` at `timestamp` merges with: from the
    /// store, or, with the cache, from what the cache has seen (by end,
    /// then start, as Kafka's cache orders session keys).
    fn find(
        &self,
        ctx: &ProcessorContext<'_, Windowed<K>, Change<VA>>,
        key: &K,
        earliest_end: i64,
        latest_start: i64,
    ) -> Result<Vec<(Windowed<K>, VA)>> {
        if let Some(view) = &self.view {
            let of_key = Windowed::new(key.clone(), Window::new(i64::MIN, i64::MIN))
                ..=Windowed::new(key.clone(), Window::new(i64::MAX, i64::MAX));
            let mut found: Vec<(Windowed<K>, VA)> = view
                .borrow()
                .range(of_key)
                .filter(|(s, _)| s.window.end >= earliest_end && s.window.start <= latest_start)
                .map(|(s, v)| (s.clone(), v.clone()))
                .collect();
            found.sort_by_key(|(s, _)| (s.window.end, s.window.start));
            return Ok(found);
        }
        let store = ctx.session_store::<K, VA>(&self.store)?;
        Ok(store
            .find_sessions(key, earliest_end, latest_start)?
            .collect())
    }

    /// Writes `value` for `session` (a removal for `None`) and forwards
    /// the change; with the cache on, leaves logging and forwarding to
    /// the flush.
    fn write(
        &mut self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        record: &Record<K, V>,
        session: Windowed<K>,
        value: Option<VA>,
        old: Option<VA>,
    ) -> Result<()> {
        let mut store = ctx.session_store::<K, VA>(&self.store)?;
        if let (Some(cache), Some(view)) = (self.cache.get::<Windowed<K>, VA>(), &self.view) {
            let w = session.window;
            let before = store.fetch_session(&session.key, w.start, w.end)?;
            match &value {
                Some(v) => store.put_unlogged(session.clone(), v.clone())?,
                None => store.remove_unlogged(&session)?,
            }
            drop(store);
            match &value {
                Some(v) => view.borrow_mut().insert(session.clone(), v.clone()),
                None => view.borrow_mut().remove(&session),
            };
            cache.borrow_mut().update(
                Cow::Owned(session),
                before,
                value.map(|v| (v, w.end)),
                record.timestamp,
                &record.headers,
                ctx.record_metadata(),
            );
            return Ok(());
        }
        match &value {
            Some(v) => store.put(session.clone(), v.clone())?,
            None => store.remove(&session)?,
        }
        drop(store);
        let end = session.window.end;
        let old = if self.send_old { old } else { None };
        ctx.forward(Record {
            key: Some(session),
            value: Some(Change::new(value, old)),
            timestamp: end,
            headers: record.headers.clone(),
        })
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static, VA: Clone + 'static>
    Processor<K, V, Windowed<K>, Change<VA>> for SessionWindowAggregate<K, V, VA>
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>) -> Result<()> {
        let enabled = ctx.session_store::<K, VA>(&self.store)?.caching;
        let name = self.store.clone();
        self.cache = cache::enable(
            ctx,
            &self.store,
            enabled,
            self.send_old,
            |session: &Windowed<K>, _, _| session.window.end,
            move |ctx, session: &Windowed<K>, value| {
                ctx.session_store::<K, VA>(&name)?
                    .log_value(session, value.map(|(v, _)| v))
            },
        )?;
        if self.cache.get::<Windowed<K>, VA>().is_some() {
            let shared = ctx
                .store_shared(&self.store, "session-view")
                .and_then(|v| v.downcast::<RefCell<BTreeMap<Windowed<K>, VA>>>().ok());
            let view = shared.unwrap_or_else(|| {
                let view = Rc::new(RefCell::new(BTreeMap::new()));
                ctx.set_store_shared(&self.store, "session-view", view.clone());
                view
            });
            self.view = Some(view);
        }
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, Windowed<K>, Change<VA>>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(key) = &record.key else {
            ctx.count_dropped_record();
            return Ok(());
        };
        if !self.fns.accepts(record.value.as_ref()) {
            ctx.count_dropped_record();
            return Ok(());
        }
        let timestamp = record.timestamp;
        let gap = self.windows.inactivity_gap_ms();
        self.observed_stream_time = self.observed_stream_time.max(timestamp);
        let close_time = self
            .observed_stream_time
            .saturating_sub(self.windows.grace_ms())
            .saturating_sub(gap);
        let new_session = Window::new(timestamp, timestamp);
        let found = self.find(
            ctx,
            key,
            timestamp.saturating_sub(gap),
            timestamp.saturating_add(gap),
        )?;
        let mut agg = (self.fns.init)();
        let mut merged_window = new_session;
        for (session, value) in &found {
            agg = Some((self.merge)(key, agg, value));
            merged_window = Window::new(
                merged_window.start.min(session.window.start),
                merged_window.end.max(session.window.end),
            );
        }
        if merged_window.end < close_time {
            ctx.count_dropped_record();
            return Ok(());
        }
        if merged_window != new_session {
            for (session, value) in found {
                self.write(ctx, &record, session, None, Some(value))?;
            }
        }
        let Some(agg) = self.fns.apply(key, record.value.as_ref(), agg) else {
            return Ok(());
        };
        let session = Windowed::new(key.clone(), merged_window);
        self.write(ctx, &record, session, Some(agg), None)
    }
}
