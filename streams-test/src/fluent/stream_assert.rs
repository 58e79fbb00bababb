//! The checks on a whole output topic: [`TestOutput::expect_next_record`]
//! (which hands one record to [`RecordAssert`]), the list checks
//! [`TestOutput::expect_records`] and
//! [`TestOutput::expect_records_in_any_order`], and the counting checks.

use std::fmt::Debug;

use super::RecordAssert;
use super::TestOutput;
use super::output::Next;
use super::report::{Decoded, diff, fail, key_value_lines, listing};
use crate::KeyValue;

/// What [`TestOutput::expect_records`] takes as one expected record: a
/// [`KeyValue`] (for null keys and tombstones) or a `(key, value)` pair
/// of anything that converts into the topic's key and value types.
pub trait IntoKeyValue<K, V> {
    /// The expected key and value.
    fn into_key_value(self) -> KeyValue<K, V>;
}

impl<K, V> IntoKeyValue<K, V> for KeyValue<K, V> {
    fn into_key_value(self) -> KeyValue<K, V> {
        self
    }
}

impl<K, V, A: Into<K>, B: Into<V>> IntoKeyValue<K, V> for (A, B) {
    fn into_key_value(self) -> KeyValue<K, V> {
        KeyValue::pair(self.0, self.1)
    }
}

impl<'t, K: 'static, V: 'static> TestOutput<'t, K, V> {
    /// Reads the next record, to check it with [`RecordAssert`].
    ///
    /// # Panics
    /// If no record is left (`topic `out` has no more records: expected
    /// one at offset 2`), the record cannot be decoded (the serde's error,
    /// with the topic and offset), or the topology never writes the topic.
    #[track_caller]
    pub fn expect_next_record(&self) -> RecordAssert<'t, K, V>
    where
        K: Debug,
        V: Debug,
    {
        match self.take_next() {
            Next::Record(offset, record) => RecordAssert::new(self.clone(), offset, record),
            Next::Empty(offset) => fail(format!(
                "topic `{}` has no more records: expected one at offset {offset}",
                self.topic
            )),
            Next::Undecodable(e) => self.undecodable(e),
        }
    }

    /// Checks that no record is left.
    ///
    /// # Panics
    /// If records are left (the message lists them), or the topology
    /// never writes the topic.
    #[track_caller]
    pub fn expect_no_more_records(&self) -> &Self
    where
        K: Debug,
        V: Debug,
    {
        let left = self.peek();
        if !left.is_empty() {
            fail(format!(
                "expected no more records in topic `{}`, but {} {} left\n\n{}",
                self.topic,
                left.len(),
                if left.len() == 1 { "is" } else { "are" },
                listing(&self.topic, &left)
            ));
        }
        self
    }

    /// Checks how many records are left, without reading them.
    ///
    /// # Panics
    /// If another number is left (the message lists them), or the
    /// topology never writes the topic.
    #[track_caller]
    pub fn has_size(&self, n: usize) -> &Self
    where
        K: Debug,
        V: Debug,
    {
        let left = self.peek();
        if left.len() != n {
            fail(format!(
                "expected {n} {} left in topic `{}`, but there {} {}\n\n{}",
                if n == 1 { "record" } else { "records" },
                self.topic,
                if left.len() == 1 { "is" } else { "are" },
                left.len(),
                listing(&self.topic, &left)
            ));
        }
        self
    }

    /// Reads the next records and checks their keys and values, in order
    /// (timestamps and headers are not compared). More records may be
    /// left: end with [`expect_no_more_records`](TestOutput::expect_no_more_records)
    /// to say there are none.
    ///
    /// # Panics
    /// If fewer records are left, or one differs (the message has a diff
    /// of the lists), or a record cannot be decoded.
    #[track_caller]
    pub fn expect_records<E: IntoKeyValue<K, V>>(
        &self,
        expected: impl IntoIterator<Item = E>,
    ) -> &Self
    where
        K: PartialEq + Debug,
        V: PartialEq + Debug,
    {
        let expected: Vec<KeyValue<K, V>> =
            expected.into_iter().map(|e| e.into_key_value()).collect();
        let expected: Vec<KeyValue<&K, &V>> = expected
            .iter()
            .map(|e| KeyValue::new(e.key.as_ref(), e.value.as_ref()))
            .collect();
        let left = self.peek();
        let from = self.next_offset();
        let actual = self.decoded_window(&left, expected.len());
        if actual.len() < expected.len() || actual != expected {
            let headline = if actual.len() < expected.len() {
                format!(
                    "expected {} records in topic `{}` from offset {from}, but only {} {} left",
                    expected.len(),
                    self.topic,
                    actual.len(),
                    if actual.len() == 1 { "is" } else { "are" }
                )
            } else {
                format!(
                    "the records of topic `{}` from offset {from} are not the expected ones",
                    self.topic
                )
            };
            fail(format!(
                "{headline}\n{}\n\n{}",
                diff(&key_value_lines(&expected), &key_value_lines(&actual)),
                listing(&self.topic, &left)
            ));
        }
        self.take(Some(expected.len()));
        self
    }

    /// Reads the next records and checks their keys and values, in any
    /// order: as many records as expected, each matching one expected
    /// record (duplicates count).
    ///
    /// # Panics
    /// If fewer records are left, or they differ (the message lists the
    /// expected records missing and the records not expected), or a
    /// record cannot be decoded.
    #[track_caller]
    pub fn expect_records_in_any_order<E: IntoKeyValue<K, V>>(
        &self,
        expected: impl IntoIterator<Item = E>,
    ) -> &Self
    where
        K: PartialEq + Debug,
        V: PartialEq + Debug,
    {
        let expected: Vec<KeyValue<K, V>> =
            expected.into_iter().map(|e| e.into_key_value()).collect();
        let expected: Vec<KeyValue<&K, &V>> = expected
            .iter()
            .map(|e| KeyValue::new(e.key.as_ref(), e.value.as_ref()))
            .collect();
        let left = self.peek();
        let from = self.next_offset();
        let actual = self.decoded_window(&left, expected.len());
        let mut missing: Vec<&KeyValue<&K, &V>> = Vec::new();
        let mut unexpected: Vec<&KeyValue<&K, &V>> = actual.iter().collect();
        for e in &expected {
            match unexpected.iter().position(|a| *a == e) {
                Some(i) => {
                    unexpected.remove(i);
                }
                None => missing.push(e),
            }
        }
        if !missing.is_empty() || !unexpected.is_empty() {
            let headline = if actual.len() < expected.len() {
                format!(
                    "expected {} records in topic `{}` from offset {from} in any order, but only {} {} left",
                    expected.len(),
                    self.topic,
                    actual.len(),
                    if actual.len() == 1 { "is" } else { "are" }
                )
            } else {
                format!(
                    "the records of topic `{}` from offset {from} are not the expected ones in any order",
                    self.topic
                )
            };
            fail(format!(
                "{headline}\nmissing: {missing:?}\nunexpected: {unexpected:?}\n\n{}",
                listing(&self.topic, &left)
            ));
        }
        self.take(Some(expected.len()));
        self
    }

    /// The key-values of the first `n` records left; fails on one that
    /// cannot be decoded.
    #[track_caller]
    fn decoded_window<'a>(
        &self,
        left: &'a [Decoded<K, V>],
        n: usize,
    ) -> Vec<KeyValue<&'a K, &'a V>> {
        let mut out = Vec::new();
        for (_, r) in left.iter().take(n) {
            match r {
                Ok(r) => out.push(KeyValue::new(r.key.as_ref(), r.value.as_ref())),
                Err(e) => fail(format!("reading topic `{}` failed: {e}", self.topic)),
            }
        }
        out
    }
}
