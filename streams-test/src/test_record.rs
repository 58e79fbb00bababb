//! `TestRecord` and `KeyValue`: records as a test writes and reads them.
//!
//! ```
//! use streams_test::{KeyValue, TestRecord};
//!
//! let record = TestRecord::<String, i64>::key_value("alice", 3).at(1_000).with_header("trace", "t-1");
//! assert_eq!(record.key.as_deref(), Some("alice"));
//! assert_eq!(record.timestamp, Some(1_000));
//! assert_eq!(record.headers.last("trace"), Some(&b"t-1"[..]));
//! assert_eq!(KeyValue::pair("a", 1), KeyValue::new(Some("a"), Some(1)));
//! ```

use std::fmt;

use streams_core::Headers;

/// A record piped into or read from a test topic, Kafka's `TestRecord`.
///
/// The timestamp is optional when piping (the input topic's clock fills
/// it in) and always set on records read from an output topic.
/// Equality compares key, value, timestamp and headers.
#[derive(Clone, PartialEq)]
pub struct TestRecord<K, V> {
    /// The key; `None` is a null key.
    pub key: Option<K>,
    /// The value; `None` is a tombstone.
    pub value: Option<V>,
    /// Epoch milliseconds, if set.
    pub timestamp: Option<i64>,
    /// The headers, in order.
    pub headers: Headers,
}

impl<K, V> TestRecord<K, V> {
    /// A record with this key and value, no timestamp and no headers.
    pub fn new(key: Option<K>, value: Option<V>) -> Self {
        TestRecord {
            key,
            value,
            timestamp: None,
            headers: Headers::new(),
        }
    }

    /// A record with a null key.
    pub fn value(value: impl Into<V>) -> Self {
        TestRecord::new(None, Some(value.into()))
    }

    /// A record with a key and a value.
    pub fn key_value(key: impl Into<K>, value: impl Into<V>) -> Self {
        TestRecord::new(Some(key.into()), Some(value.into()))
    }

    /// A tombstone: a key and no value.
    pub fn tombstone(key: impl Into<K>) -> Self {
        TestRecord::new(Some(key.into()), None)
    }

    /// The same record at this timestamp (epoch millis).
    #[must_use]
    #[doc(alias = "recordTime")]
    pub fn at(mut self, timestamp: i64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// The same record at this timestamp (epoch millis), as Kafka's
    /// `TestRecord(key, value, headers, timestamp)` takes it; the same as
    /// [`at`](TestRecord::at).
    ///
    /// ```
    /// use streams_test::TestRecord;
    ///
    /// let r = TestRecord::<String, String>::key_value("k", "v").with_timestamp(42);
    /// assert_eq!(r.timestamp, Some(42));
    /// assert_eq!(r, TestRecord::key_value("k", "v").at(42));
    /// ```
    #[must_use]
    pub fn with_timestamp(self, timestamp: i64) -> Self {
        self.at(timestamp)
    }

    /// The same record with one more header.
    #[must_use]
    pub fn with_header(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.add(key, value);
        self
    }

    /// The same record with these headers.
    #[must_use]
    pub fn with_headers(mut self, headers: Headers) -> Self {
        self.headers = headers;
        self
    }

    /// The key and value as a [`KeyValue`].
    pub fn key_value_pair(&self) -> KeyValue<K, V>
    where
        K: Clone,
        V: Clone,
    {
        KeyValue::new(self.key.clone(), self.value.clone())
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for TestRecord<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TestRecord");
        d.field("key", &self.key).field("value", &self.value);
        if let Some(ts) = self.timestamp {
            d.field("timestamp", &ts);
        }
        if !self.headers.is_empty() {
            d.field("headers", &self.headers);
        }
        d.finish()
    }
}

/// A key and a value, either of which may be null, Kafka's `KeyValue`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyValue<K, V> {
    /// The key.
    pub key: Option<K>,
    /// The value; `None` is a tombstone.
    pub value: Option<V>,
}

impl<K, V> KeyValue<K, V> {
    /// A key-value from options.
    pub fn new(key: Option<K>, value: Option<V>) -> Self {
        KeyValue { key, value }
    }

    /// A key and a value, both present, as Kafka's `KeyValue.pair`.
    pub fn pair(key: impl Into<K>, value: impl Into<V>) -> Self {
        KeyValue {
            key: Some(key.into()),
            value: Some(value.into()),
        }
    }

    /// A key with no value.
    pub fn tombstone(key: impl Into<K>) -> Self {
        KeyValue {
            key: Some(key.into()),
            value: None,
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for KeyValue<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn show<T: fmt::Debug>(f: &mut fmt::Formatter<'_>, x: Option<&T>) -> fmt::Result {
            match x {
                Some(x) => write!(f, "{x:?}"),
                None => f.write_str("null"),
            }
        }
        f.write_str("KeyValue(")?;
        show(f, self.key.as_ref())?;
        f.write_str(", ")?;
        show(f, self.value.as_ref())?;
        f.write_str(")")
    }
}

impl<K, V> From<(K, V)> for KeyValue<K, V> {
    fn from((k, v): (K, V)) -> Self {
        KeyValue::new(Some(k), Some(v))
    }
}
