//! The order of a store's keys: Kafka's, by their serialized bytes.
//!
//! Kafka's stores hold bytes, and both the in-memory and the RocksDB ones
//! order keys by their serialized bytes, compared as unsigned bytes one
//! after the other (`Bytes.compareTo`). So `range`, `all` and
//! `prefix_scan` of a store of `i64` keys with Kafka's big-endian serde
//! give `0, 1, 2, .., -2, -1` (a negative number starts with `0xff`),
//! and JSON keys come in the order of their text, not of their fields.
//!
//! The stores here hold typed keys. A store whose key serde's bytes order
//! keys as their type's `Ord` does ([`Serde::bytes_preserve_order`]:
//! strings, bytes) orders them by `Ord` and never keeps their bytes; any
//! other keeps each key's bytes beside it, computed once when the key is
//! first stored, and orders by them.
//!
//! [`Serde::bytes_preserve_order`]: crate::serde::Serde::bytes_preserve_order

use std::cmp::Ordering;
use std::fmt;
use std::ops::Bound;

use crate::error::{RecordPart, Result, StreamsError};
use crate::serde::SerdeRef;

/// A key as a store orders it: by its bytes when it has them (a store
/// keeps them for every key or for none), else by `K`'s `Ord`.
#[derive(Clone)]
pub(crate) struct OrderedKey<K> {
    pub(crate) key: K,
    pub(crate) bytes: Option<Box<[u8]>>,
}

impl<K: Ord> Ord for OrderedKey<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.bytes, &other.bytes) {
            (Some(a), Some(b)) => a.cmp(b),
            _ => self.key.cmp(&other.key),
        }
    }
}

impl<K: Ord> PartialOrd for OrderedKey<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K: Ord> PartialEq for OrderedKey<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<K: Ord> Eq for OrderedKey<K> {}

impl<K: fmt::Debug> fmt::Debug for OrderedKey<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.key.fmt(f)
    }
}

/// How one store orders its keys: the key serde, the topic it serializes
/// for (the changelog's, as Kafka's stores serialize keys for it), and
/// whether the bytes are needed at all.
pub(crate) struct KeyOrder<K> {
    serde: SerdeRef<K>,
    by_bytes: bool,
    topic: String,
}

impl<K> Clone for KeyOrder<K> {
    fn clone(&self) -> Self {
        KeyOrder {
            serde: self.serde.clone(),
            by_bytes: self.by_bytes,
            topic: self.topic.clone(),
        }
    }
}

impl<K> fmt::Debug for KeyOrder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyOrder")
            .field("by_bytes", &self.by_bytes)
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

impl<K: 'static> KeyOrder<K> {
    /// The order of keys written with `serde` for `topic`.
    pub(crate) fn new(serde: SerdeRef<K>, topic: String) -> Self {
        KeyOrder {
            by_bytes: !serde.bytes_preserve_order(),
            serde,
            topic,
        }
    }

    /// Whether keys are ordered by their bytes (the serde's bytes do not
    /// order them as `Ord` does).
    pub(crate) fn by_bytes(&self) -> bool {
        self.by_bytes
    }

    /// The topic keys are serialized for: the store's changelog.
    #[cfg_attr(not(feature = "rocksdb"), allow(dead_code))]
    pub(crate) fn topic(&self) -> &str {
        &self.topic
    }

    /// The topic keys are serialized for (set when the store starts).
    pub(crate) fn set_topic(&mut self, topic: String) {
        self.topic = topic;
    }

    /// The serialized key, as Kafka's store holds it.
    pub(crate) fn bytes(&self, key: &K) -> Result<Vec<u8>> {
        self.serde
            .serialize(&self.topic, key)
            .map_err(|reason| StreamsError::Serialization {
                topic: self.topic.clone(),
                node: None,
                part: RecordPart::Key,
                reason,
            })
    }

    /// The key as the store orders it: with its bytes when it orders by
    /// them.
    pub(crate) fn ordered(&self, key: K) -> Result<OrderedKey<K>> {
        let bytes = if self.by_bytes {
            Some(self.bytes(&key)?.into_boxed_slice())
        } else {
            None
        };
        Ok(OrderedKey { key, bytes })
    }

    /// A bound of a key range, as the store orders keys.
    pub(crate) fn bound(&self, bound: Bound<K>) -> Result<Bound<OrderedKey<K>>> {
        Ok(match bound {
            Bound::Included(k) => Bound::Included(self.ordered(k)?),
            Bound::Excluded(k) => Bound::Excluded(self.ordered(k)?),
            Bound::Unbounded => Bound::Unbounded,
        })
    }

    /// The serialized bytes of an ordered key: the ones it carries, else
    /// serialized now.
    #[cfg(feature = "rocksdb")]
    pub(crate) fn bytes_of(&self, key: &OrderedKey<K>) -> Result<Vec<u8>> {
        match &key.bytes {
            Some(bytes) => Ok(bytes.to_vec()),
            None => self.bytes(&key.key),
        }
    }

    /// A key range as bytes, for a RocksDB store (see [`ByteRange`]).
    #[cfg(feature = "rocksdb")]
    pub(crate) fn byte_range(
        &self,
        keys: &(Bound<OrderedKey<K>>, Bound<OrderedKey<K>>),
    ) -> Result<ByteRange> {
        let bytes = |b: &Bound<OrderedKey<K>>| -> Result<Bound<Vec<u8>>> {
            Ok(match b {
                Bound::Included(k) => Bound::Included(self.bytes_of(k)?),
                Bound::Excluded(k) => Bound::Excluded(self.bytes_of(k)?),
                Bound::Unbounded => Bound::Unbounded,
            })
        };
        Ok(ByteRange {
            from: bytes(&keys.0)?,
            to: bytes(&keys.1)?,
        })
    }

    /// A key from bytes, if the bytes are exactly a key's.
    pub(crate) fn key_of(&self, bytes: &[u8]) -> Option<K> {
        let key = self.serde.deserialize(&self.topic, bytes).ok()?;
        (self.serde.serialize(&self.topic, &key).ok()? == bytes).then_some(key)
    }
}

/// Whether a range with these bounds holds nothing for sure: its start is
/// after its end (Kafka's stores then return nothing, with a warning), or
/// both are the same excluded key. `BTreeMap::range` panics on both.
pub(crate) fn empty_range<T: Ord + ?Sized>(start: Bound<&T>, end: Bound<&T>) -> bool {
    match (start, end) {
        (Bound::Included(a), Bound::Included(b))
        | (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => a > b,
        (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}

/// `bound` with its key owned.
pub(crate) fn owned_bound<Q: ToOwned + ?Sized>(bound: Bound<&Q>) -> Bound<Q::Owned> {
    match bound {
        Bound::Included(k) => Bound::Included(k.to_owned()),
        Bound::Excluded(k) => Bound::Excluded(k.to_owned()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// A key range as serialized bytes. Kafka's RocksDB window and session
/// stores take inclusive key bounds (or none); an excluded bound (a Rust
/// range's) is the inclusive one without that key.
#[cfg(feature = "rocksdb")]
pub(crate) struct ByteRange {
    from: Bound<Vec<u8>>,
    to: Bound<Vec<u8>>,
}

#[cfg(feature = "rocksdb")]
impl ByteRange {
    fn inclusive(bound: &Bound<Vec<u8>>) -> Option<&[u8]> {
        match bound {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        }
    }

    /// The first key, inclusive.
    pub(crate) fn first(&self) -> Option<&[u8]> {
        Self::inclusive(&self.from)
    }

    /// The last key, inclusive.
    pub(crate) fn last(&self) -> Option<&[u8]> {
        Self::inclusive(&self.to)
    }

    /// Whether an excluded bound leaves out `key`.
    pub(crate) fn excludes(&self, key: &[u8]) -> bool {
        matches!(&self.from, Bound::Excluded(f) if key == f.as_slice())
            || matches!(&self.to, Bound::Excluded(t) if key == t.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::serde::{I64Serde, StringSerde};

    #[test]
    fn signed_keys_order_by_bytes_strings_by_ord() -> Result<()> {
        let longs = KeyOrder::new(Arc::new(I64Serde), "t".into());
        assert!(longs.by_bytes());
        assert!(longs.ordered(-1)? > longs.ordered(1)?);
        let strings = KeyOrder::new(Arc::new(StringSerde), "t".into());
        assert!(!strings.by_bytes());
        assert_eq!(strings.ordered("a".to_string())?.bytes, None);
        assert!(empty_range(Bound::Included(&2), Bound::Included(&1)));
        assert!(empty_range(Bound::Excluded(&1), Bound::Excluded(&1)));
        assert!(!empty_range(Bound::Included(&1), Bound::Excluded(&1)));
        assert_eq!(longs.key_of(&[0, 0, 0, 0, 0, 0, 0, 7]), Some(7));
        assert_eq!(longs.key_of(&[0, 7]), None);
        Ok(())
    }
}
