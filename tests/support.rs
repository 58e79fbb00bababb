//! Helpers shared by the test modules.

use std::cell::RefCell;
use std::rc::Rc;

use streams_core::Headers;
use streams_test::{KeyValue, TestRecord};

/// A shared, append-only list of observations, for closures and
/// processors to record what they saw (Kafka's tests use lists captured
/// by lambdas the same way).
#[derive(Debug, Clone, Default)]
pub(crate) struct Log(Rc<RefCell<Vec<String>>>);

impl Log {
    /// An empty log.
    pub(crate) fn new() -> Self {
        Log::default()
    }

    /// Appends an entry.
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.borrow_mut().push(entry.into());
    }

    /// Everything logged so far.
    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

/// A key as Kafka's tests print it: `null` when absent.
pub(crate) fn show(key: Option<&String>) -> &str {
    key.map_or("null", String::as_str)
}

/// An output record with a key, a value and a timestamp, no headers.
pub(crate) fn r(key: &str, value: &str, timestamp: i64) -> TestRecord<String, String> {
    rec(Some(key), Some(value), timestamp)
}

/// An output record whose key or value may be null.
pub(crate) fn rec(
    key: Option<&str>,
    value: Option<&str>,
    timestamp: i64,
) -> TestRecord<String, String> {
    TestRecord {
        key: key.map(str::to_owned),
        value: value.map(str::to_owned),
        timestamp: Some(timestamp),
        headers: Headers::new(),
    }
}

/// A key-value pair of strings.
pub(crate) fn kv(key: &str, value: &str) -> KeyValue<String, String> {
    KeyValue::pair(key, value)
}
