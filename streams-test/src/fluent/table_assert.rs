//! [`TableAssert`]: an output topic folded into a table, bakdata's
//! `tableOutput()`.

use std::fmt::Debug;

use super::report::{entry_lines, expected_actual, fail};
use crate::TestRecord;

/// One key's latest value, and where it was written.
#[derive(Debug, Clone)]
struct Entry<K, V> {
    key: K,
    value: V,
    offset: i64,
}

/// An output topic read as a table: the latest value per key, in the
/// order keys were first seen; a tombstone removes its key. Made by
/// [`TestOutput::to_table`](super::TestOutput::to_table) or
/// [`TestTopology::table_output`](super::TestTopology::table_output),
/// from the records left in the topic then.
///
/// Each check returns the table, so checks chain; failures name the
/// topic, the offset the key was last written at, expected against
/// actual, and list the table.
///
/// ```
/// use streams_core::serde::{I64Serde, StringSerde};
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("words")
///         .group_by_key()
///         .count()
///         .to_stream()
///         .to("counts");
/// })?
/// .with_default_serdes(StringSerde, StringSerde);
/// topology.input().add("kafka", "").add("streams", "").add("kafka", "");
/// let counts = topology.output().with_value_serde(I64Serde).to_table();
/// counts.has_entry("kafka", 2).has_entry("streams", 1).has_no_key("flink").has_size(2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TableAssert<K, V> {
    topic: String,
    entries: Vec<Entry<K, V>>,
}

impl<K: PartialEq, V> TableAssert<K, V> {
    pub(crate) fn fold(topic: &str, records: Vec<(i64, TestRecord<K, V>)>) -> Self {
        let mut entries: Vec<Entry<K, V>> = Vec::new();
        for (offset, record) in records {
            let Some(key) = record.key else { continue };
            let at = entries.iter().position(|e| e.key == key);
            match (at, record.value) {
                (Some(i), Some(value)) => {
                    entries[i].value = value;
                    entries[i].offset = offset;
                }
                (None, Some(value)) => entries.push(Entry { key, value, offset }),
                (Some(i), None) => {
                    entries.remove(i);
                }
                (None, None) => {}
            }
        }
        TableAssert {
            topic: topic.to_owned(),
            entries,
        }
    }

    /// The topic the table was read from.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The value for `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.entry(key).map(|e| &e.value)
    }

    fn entry(&self, key: &K) -> Option<&Entry<K, V>> {
        self.entries.iter().find(|e| e.key == *key)
    }

    /// How many keys the table has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in the order keys were first seen.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.entries.iter().map(|e| (&e.key, &e.value))
    }
}

impl<K: PartialEq + Debug, V: Debug> TableAssert<K, V> {
    fn contents(&self) -> String {
        if self.entries.is_empty() {
            return format!("the table of topic `{}` is empty", self.topic);
        }
        format!(
            "the table of topic `{}` ({} {}, by first-seen key):{}",
            self.topic,
            self.entries.len(),
            if self.entries.len() == 1 {
                "entry"
            } else {
                "entries"
            },
            entry_lines(self.entries.iter().map(|e| (
                &e.key,
                &e.value,
                format!(" (offset {})", e.offset)
            )))
        )
    }

    #[track_caller]
    fn failed(&self, what: String) -> ! {
        fail(format!(
            "table of topic `{}`: {what}\n\n{}",
            self.topic,
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
        let (key, expected) = (key.into(), value.into());
        match self.entry(&key) {
            None => self.failed(format!("no entry for key {key:?}")),
            Some(e) if e.value != expected => self.failed(format!(
                "the value for key {key:?} is not the expected one (last written at offset {})\n{}",
                e.offset,
                expected_actual(&expected, &e.value)
            )),
            Some(_) => self,
        }
    }

    /// Checks that `key` has no entry (never written, or removed by a
    /// tombstone).
    ///
    /// # Panics
    /// If it has one.
    #[track_caller]
    pub fn has_no_key(&self, key: impl Into<K>) -> &Self {
        let key = key.into();
        if let Some(e) = self.entry(&key) {
            self.failed(format!(
                "expected no entry for key {key:?}, but it has {:?} (last written at offset {})",
                e.value, e.offset
            ));
        }
        self
    }

    /// Checks how many keys the table has.
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
}

impl<'a, K: PartialEq, V> IntoIterator for &'a TableAssert<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Box<dyn Iterator<Item = (&'a K, &'a V)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<K, V> IntoIterator for TableAssert<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect::<Vec<_>>()
            .into_iter()
    }
}
