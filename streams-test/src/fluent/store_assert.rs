//! [`StoreAssert`]: the fluent checks of a table, over a state store.

use std::fmt::Debug;

use streams_core::state::StoreKind;

use super::Snapshot;
use super::report::{entry_lines, expected_actual, fail};
use crate::TopologyTestDriver;

/// The entries of a key-value or timestamped key-value store, read when
/// made by [`TestTopology::store`](super::TestTopology::store), with the
/// checks of [`TableAssert`](super::TableAssert) (and timestamps, for a
/// timestamped store). Read the store again after piping more.
///
/// Failures name the store, show expected against actual, and list the
/// store's entries in Kafka's key order (by the keys' bytes).
///
/// ```
/// use streams_core::dsl::Materialized;
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("clicks")
///         .group_by_key()
///         .count_with(Materialized::as_("clicks-per-user"));
/// })?;
/// topology.input().at(5).add("alice", "/").at(9).add("bob", "/").add("alice", "/cart");
/// topology
///     .store::<String, i64>("clicks-per-user")
///     .has_entry("alice", 2)
///     .has_entry_with_timestamp("bob", 1, 9)
///     .has_no_key("carol")
///     .has_size(2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct StoreAssert<K, V> {
    name: String,
    kind: StoreKind,
    entries: Vec<(K, V, Option<i64>)>,
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> StoreAssert<K, V> {
    #[track_caller]
    pub(crate) fn read(driver: &TopologyTestDriver, name: &str) -> Self {
        let kind = driver.state_stores().get(name).copied();
        let entries = match kind {
            Some(StoreKind::TimestampedKeyValue) => {
                match driver.timestamped_key_value_store::<K, V>(name) {
                    Ok(store) => store
                        .all()
                        .into_iter()
                        .map(|(k, v)| (k, v.value, Some(v.timestamp)))
                        .collect(),
                    Err(e) => fail(format!("reading store `{name}` failed: {e}")),
                }
            }
            Some(StoreKind::KeyValue) | None => match driver.key_value_store::<K, V>(name) {
                Ok(store) => store.all().into_iter().map(|(k, v)| (k, v, None)).collect(),
                Err(e) => fail(format!("reading store `{name}` failed: {e}")),
            },
            Some(other) => fail(format!(
                "store `{name}` is a {other}; store checks read key-value and timestamped key-value stores"
            )),
        };
        StoreAssert {
            name: name.to_owned(),
            kind: kind.unwrap_or(StoreKind::KeyValue),
            entries,
        }
    }
}

impl<K: Ord, V> StoreAssert<K, V> {
    /// The store's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The store's kind.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The entry of `key` (entries are in Kafka's order, by the keys'
    /// bytes, not by `Ord`: searched one by one).
    fn entry(&self, key: &K) -> Option<&(K, V, Option<i64>)> {
        self.entries.iter().find(|(k, _, _)| k == key)
    }

    /// The value for `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.entry(key).map(|(_, v, _)| v)
    }

    /// The timestamp of `key`'s value, in a timestamped store.
    pub fn timestamp(&self, key: &K) -> Option<i64> {
        self.entry(key).and_then(|(_, _, ts)| *ts)
    }

    /// How many entries the store has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the store has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in Kafka's key order (by the keys' serialized bytes).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.entries.iter().map(|(k, v, _)| (k, v))
    }
}

impl<K: Ord + Debug, V: Debug> StoreAssert<K, V> {
    fn contents(&self) -> String {
        if self.entries.is_empty() {
            return format!("store `{}` is empty", self.name);
        }
        format!(
            "store `{}` ({} {}, in key order):{}",
            self.name,
            self.entries.len(),
            if self.entries.len() == 1 {
                "entry"
            } else {
                "entries"
            },
            entry_lines(self.entries.iter().map(|(k, v, ts)| {
                (
                    k,
                    v,
                    ts.map_or_else(String::new, |ts| format!(", timestamp {ts}")),
                )
            }))
        )
    }

    #[track_caller]
    fn failed(&self, what: String) -> ! {
        fail(format!(
            "store `{}`: {what}\n\n{}",
            self.name,
            self.contents()
        ))
    }

    /// Checks that `key` has `value`.
    ///
    /// # Panics
    /// If the key is missing or has another value.
    #[track_caller]
    pub fn has_entry(&self, key: impl Into<K>, value: impl Into<V>) -> &Self
    where
        V: PartialEq,
    {
        self.has_entry_ref(&key.into(), value.into());
        self
    }

    /// Checks that `key` has `value` at `timestamp`, in a timestamped
    /// store.
    ///
    /// # Panics
    /// If the key is missing, has another value or timestamp, or the store
    /// is not timestamped.
    #[track_caller]
    pub fn has_entry_with_timestamp(
        &self,
        key: impl Into<K>,
        value: impl Into<V>,
        timestamp: i64,
    ) -> &Self
    where
        V: PartialEq,
    {
        let key = key.into();
        self.has_entry_ref(&key, value.into());
        match self.entry(&key).and_then(|(_, _, ts)| *ts) {
            None => self.failed(format!(
                "the store is a {}, with no timestamps; check values with `has_entry`",
                self.kind
            )),
            Some(ts) if ts != timestamp => self.failed(format!(
                "the timestamp for key {key:?} is not the expected one\n{}",
                expected_actual(&timestamp, &ts)
            )),
            Some(_) => self,
        }
    }

    #[track_caller]
    fn has_entry_ref(&self, key: &K, expected: V)
    where
        V: PartialEq,
    {
        match self.entry(key) {
            None => self.failed(format!("no entry for key {key:?}")),
            Some((_, v, _)) if *v != expected => self.failed(format!(
                "the value for key {key:?} is not the expected one\n{}",
                expected_actual(&expected, v)
            )),
            Some(_) => {}
        }
    }

    /// Checks that `key` has no entry.
    ///
    /// # Panics
    /// If it has one.
    #[track_caller]
    pub fn has_no_key(&self, key: impl Into<K>) -> &Self {
        let key = key.into();
        if let Some((_, v, _)) = self.entry(&key) {
            self.failed(format!(
                "expected no entry for key {key:?}, but it has {v:?}"
            ));
        }
        self
    }

    /// Checks how many entries the store has.
    ///
    /// # Panics
    /// If it has another number.
    #[track_caller]
    pub fn has_size(&self, n: usize) -> &Self {
        if self.entries.len() != n {
            self.failed(format!(
                "expected {n} {}, but there {} {}",
                if n == 1 { "entry" } else { "entries" },
                if self.entries.len() == 1 { "is" } else { "are" },
                self.entries.len()
            ));
        }
        self
    }

    /// The entries as a [`Snapshot`] showing `Debug` keys and values (and
    /// timestamps, for a timestamped store), in key order.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::of_store_debug(&self.name, &self.entries)
    }

    /// The entries as a [`Snapshot`] showing keys and values through
    /// serde (as JSON values: struct fields in name order), so that a YAML
    /// or JSON snapshot shows their fields.
    ///
    /// # Panics
    /// If a key or value cannot be turned into JSON.
    #[track_caller]
    pub fn serde_snapshot(&self) -> Snapshot
    where
        K: serde::Serialize,
        V: serde::Serialize,
    {
        Snapshot::of_store_serde(&self.name, &self.entries)
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a StoreAssert<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}
