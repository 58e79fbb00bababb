//! Records, headers and record metadata.
//!
//! A [`Record`] is what travels between processors: an optional key, an
//! optional value (a `None` value is a *tombstone*), a timestamp in epoch
//! milliseconds and [`Headers`]. Where a record was read from a topic, its
//! [`RecordMetadata`] (topic, partition, offset) says where it came from; a
//! [`ConsumerRecord`] is a record together with that metadata.
//!
//! ```
//! use streams_core::{Headers, Record};
//!
//! let record = Record::new(Some("alice"), Some(3_i64), 1_000)
//!     .with_headers(Headers::new().with("source", "web").with("source", "app"));
//! assert_eq!(record.headers.last("source"), Some(&b"app"[..]));
//! assert_eq!(record.headers.len(), 2);
//! assert!(!record.is_tombstone());
//! assert!(Record::<&str, i64>::new(Some("bob"), None, 5).is_tombstone());
//! ```

pub(crate) mod collector;

use std::fmt;
use std::sync::Arc;

/// One record header: a key and an optional byte value, as Kafka's `Header`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// The header's key. Keys may repeat within [`Headers`].
    pub key: String,
    /// The header's value; `None` is a null header value.
    pub value: Option<Vec<u8>>,
}

impl Header {
    /// A header with a value.
    pub fn new(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Header {
            key: key.into(),
            value: Some(value.into()),
        }
    }

    /// A header whose value is null.
    pub fn null(key: impl Into<String>) -> Self {
        Header {
            key: key.into(),
            value: None,
        }
    }
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            None => write!(f, "{}=null", self.key),
            Some(v) => match std::str::from_utf8(v) {
                Ok(s) => write!(f, "{}={s:?}", self.key),
                Err(_) => write!(f, "{}={v:?}", self.key),
            },
        }
    }
}

/// The ordered headers of a record. Keys may repeat, values may be null,
/// as in Kafka's `Headers`. Empty headers do not allocate, and take one
/// pointer's room in a record.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
// Boxed on purpose: a `Vec` takes three words in every record, a box one.
#[allow(clippy::box_collection)]
pub struct Headers(Option<Box<Vec<Header>>>);

// Every record carries headers, and most have none: keep them small.
const _: () = assert!(std::mem::size_of::<Headers>() == std::mem::size_of::<usize>());

impl Headers {
    /// No headers.
    pub const fn new() -> Self {
        Headers(None)
    }

    /// The headers, to add to. (Invariant: `Some` holds at least one
    /// header, so that equal headers have equal representations.)
    fn list_mut(&mut self) -> &mut Vec<Header> {
        self.0.get_or_insert_with(Box::default)
    }

    fn as_slice(&self) -> &[Header] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    fn from_vec(v: Vec<Header>) -> Self {
        Headers((!v.is_empty()).then(|| Box::new(v)))
    }

    /// Appends a header, keeping any with the same key.
    pub fn add(&mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> &mut Self {
        self.list_mut().push(Header::new(key, value));
        self
    }

    /// Appends a header whose value is null.
    pub fn add_null(&mut self, key: impl Into<String>) -> &mut Self {
        self.list_mut().push(Header::null(key));
        self
    }

    /// Appends a header and returns the headers, for building in one expression.
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.add(key, value);
        self
    }

    /// Appends a header (value and key already a [`Header`]).
    pub fn push(&mut self, header: Header) {
        self.list_mut().push(header);
    }

    /// Removes every header with this key.
    pub fn remove(&mut self, key: &str) -> &mut Self {
        if let Some(list) = &mut self.0 {
            list.retain(|h| h.key != key);
            if list.is_empty() {
                self.0 = None;
            }
        }
        self
    }

    /// The value of the last header with this key; `None` if there is no
    /// such header or its value is null.
    pub fn last(&self, key: &str) -> Option<&[u8]> {
        self.last_header(key).and_then(|h| h.value.as_deref())
    }

    /// The last header with this key, as Kafka's `lastHeader`.
    pub fn last_header(&self, key: &str) -> Option<&Header> {
        self.as_slice().iter().rev().find(|h| h.key == key)
    }

    /// Every header with this key, in order.
    pub fn get_all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Header> + 'a {
        self.as_slice().iter().filter(move |h| h.key == key)
    }

    /// All headers, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Header> {
        self.as_slice().iter()
    }

    /// How many headers there are.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = &'a Header;
    type IntoIter = std::slice::Iter<'a, Header>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Headers {
    type Item = Header;
    type IntoIter = std::vec::IntoIter<Header>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.map(|list| *list).unwrap_or_default().into_iter()
    }
}

impl FromIterator<Header> for Headers {
    fn from_iter<I: IntoIterator<Item = Header>>(iter: I) -> Self {
        Headers::from_vec(iter.into_iter().collect())
    }
}

impl From<Vec<Header>> for Headers {
    fn from(v: Vec<Header>) -> Self {
        Headers::from_vec(v)
    }
}

/// A record as processors see it, Kafka's `api.Record`.
///
/// The fields are public; the `with_*` methods return a changed copy for use
/// in `forward` calls.
#[derive(Clone, PartialEq)]
pub struct Record<K, V> {
    /// The key; `None` is a null key.
    pub key: Option<K>,
    /// The value; `None` is a tombstone.
    pub value: Option<V>,
    /// Epoch milliseconds.
    pub timestamp: i64,
    /// The headers, in order.
    pub headers: Headers,
}

impl<K, V> Record<K, V> {
    /// A record without headers.
    pub fn new(key: Option<K>, value: Option<V>, timestamp: i64) -> Self {
        Record {
            key,
            value,
            timestamp,
            headers: Headers::new(),
        }
    }

    /// Whether the value is `None` (a delete, for tables and changelogs).
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }

    /// The same record with another key (and possibly key type).
    pub fn with_key<K2>(self, key: Option<K2>) -> Record<K2, V> {
        Record {
            key,
            value: self.value,
            timestamp: self.timestamp,
            headers: self.headers,
        }
    }

    /// The same record with another value (and possibly value type).
    pub fn with_value<V2>(self, value: Option<V2>) -> Record<K, V2> {
        Record {
            key: self.key,
            value,
            timestamp: self.timestamp,
            headers: self.headers,
        }
    }

    /// The same record with another timestamp.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The same record with other headers.
    #[must_use]
    pub fn with_headers(mut self, headers: Headers) -> Self {
        self.headers = headers;
        self
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for Record<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Record");
        d.field("key", &self.key)
            .field("value", &self.value)
            .field("timestamp", &self.timestamp);
        if !self.headers.is_empty() {
            d.field("headers", &self.headers);
        }
        d.finish()
    }
}

/// Where a record was read from: topic, partition and offset.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordMetadata {
    /// The topic.
    pub topic: Arc<str>,
    /// The partition.
    pub partition: i32,
    /// The offset within the partition.
    pub offset: i64,
}

impl fmt::Display for RecordMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}@{}", self.topic, self.partition, self.offset)
    }
}

/// A record together with the topic, partition and offset it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerRecord<K, V> {
    /// Where the record came from.
    pub metadata: RecordMetadata,
    /// The record.
    pub record: Record<K, V>,
}

/// A record whose key and value are serialized bytes, as on a topic.
pub type RawRecord = Record<Vec<u8>, Vec<u8>>;

/// An update of a table row, as KTable processors forward it: the new
/// value and, where a downstream operator needs it, the old one. A `None`
/// new value deletes the row.
///
/// `is_latest` is Kafka's `Change.isLatest` (KIP-914): false for an update
/// a versioned table kept as history only, because a newer version was
/// there already. Table-table joins, `group_by` and foreign-key joins drop
/// such updates; `to_stream` passes them on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change<V> {
    /// The value after the update; `None` deletes.
    pub new: Option<V>,
    /// The value before the update, when known and needed.
    pub old: Option<V>,
    /// Whether this update is the row's newest version (always, unless a
    /// versioned table got an out-of-order update).
    pub is_latest: bool,
}

impl<V> Change<V> {
    /// An update from `old` to `new`, the row's newest version.
    pub fn new(new: Option<V>, old: Option<V>) -> Self {
        Change {
            new,
            old,
            is_latest: true,
        }
    }

    /// The same update, marked as the newest version or not.
    #[must_use]
    pub fn with_is_latest(mut self, is_latest: bool) -> Self {
        self.is_latest = is_latest;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{Header, Headers};

    #[test]
    fn headers_that_read_the_same_are_equal() {
        let mut removed = Headers::new().with("a", "1");
        removed.remove("a");
        assert_eq!(removed, Headers::new());
        assert!(removed.is_empty());
        assert_eq!(Headers::from(Vec::new()), Headers::default());
        assert_eq!(
            Vec::<Header>::new().into_iter().collect::<Headers>(),
            Headers::new()
        );
        let built = Headers::from(vec![Header::new("k", "v"), Header::null("n")]);
        let mut added = Headers::new();
        added.add("k", "v").add_null("n");
        assert_eq!(built, added);
        assert_eq!(built.len(), 2);
        assert_eq!(
            built.into_iter().map(|h| h.key).collect::<Vec<_>>(),
            ["k", "n"]
        );
        assert_eq!(Headers::new().into_iter().count(), 0);
    }
}
