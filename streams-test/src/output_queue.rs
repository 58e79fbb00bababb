//! What the driver keeps of an output topic: the records written to it and
//! not yet read, packed back to back in one buffer ([`Packed`]) as they are
//! written, and unpacked ([`OutputRecord`]) only for a reader that wants
//! records so (the fluent assertions).
//!
//! The driver keeps every record of every topic a topology writes
//! (repartition and changelog topics too) for a test that may read it, so
//! a record must cost little: its bytes and a dozen more, and no
//! allocation of its own. [`OutputQueue`] holds both forms and the
//! offsets: records are numbered from 0 in the order they were written,
//! the unpacked ones (if any) older than every packed one, and reading or
//! unpacking never renumbers them. The unit tests below write records of
//! every shape (null and empty keys and values, long ones, headers) and
//! read them back, one by one, all at once, and unpacked.

use std::collections::VecDeque;

use streams_core::{Headers, RawRecord, Record};

/// A record on an output topic, with the offset it was written at,
/// unpacked (see [`Packed`]) for a reader that wants records so.
#[derive(Debug, Clone)]
pub(crate) struct OutputRecord {
    pub(crate) offset: i64,
    pub(crate) record: Record<Payload, Payload>,
}

/// How many bytes a [`Payload`] keeps inline: as many as fit beside the
/// enum's tag in the size of a `Vec`, so that a payload is no larger
/// than a `Vec` (checked below).
const INLINE: usize = 15;
const _: () = assert!(std::mem::size_of::<Option<Payload>>() == std::mem::size_of::<Vec<u8>>());

/// The serialized key or value of an unpacked output record: short ones
/// (most keys, numbers, short strings) inline, so that unpacking costs no
/// allocation for them; longer ones in their own buffer. Reads as a byte
/// slice.
#[derive(Clone)]
pub(crate) enum Payload {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Vec<u8>),
}

impl Payload {
    /// `v` itself, without a copy.
    fn from_vec(v: Vec<u8>) -> Self {
        Payload::Heap(v)
    }

    /// A copy of `b`.
    fn from_slice(b: &[u8]) -> Self {
        if b.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..b.len()].copy_from_slice(b);
            Payload::Inline {
                len: b.len() as u8,
                bytes,
            }
        } else {
            Payload::Heap(b.to_vec())
        }
    }
}

impl std::ops::Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Payload::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Payload::Heap(v) => v,
        }
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl OutputRecord {
    /// A record as it was written, its key and value moved, not copied.
    fn owned(offset: i64, r: RawRecord) -> Self {
        OutputRecord {
            offset,
            record: Record {
                key: r.key.map(Payload::from_vec),
                value: r.value.map(Payload::from_vec),
                timestamp: r.timestamp,
                headers: r.headers,
            },
        }
    }

    /// A copy of a packed record.
    fn unpack(r: &PackedRecord<'_>) -> Self {
        OutputRecord {
            offset: r.offset,
            record: Record {
                key: r.key.map(Payload::from_slice),
                value: r.value.map(Payload::from_slice),
                timestamp: r.timestamp,
                headers: r.headers.clone(),
            },
        }
    }
}

/// A record of a [`Packed`] buffer, borrowed.
#[derive(Debug)]
pub(crate) struct PackedRecord<'a> {
    pub(crate) offset: i64,
    pub(crate) key: Option<&'a [u8]>,
    pub(crate) value: Option<&'a [u8]>,
    pub(crate) timestamp: i64,
    pub(crate) headers: &'a Headers,
}

impl<'a> PackedRecord<'a> {
    /// A view of an unpacked record.
    pub(crate) fn of(r: &'a OutputRecord) -> Self {
        PackedRecord {
            offset: r.offset,
            key: r.record.key.as_deref(),
            value: r.record.value.as_deref(),
            timestamp: r.record.timestamp,
            headers: &r.record.headers,
        }
    }
}

/// No headers, for packed records without any.
static NO_HEADERS: Headers = Headers::new();

/// The bytes a topic's packed buffer starts with.
const FIRST_CAPACITY: usize = 512;

const HAS_KEY: u8 = 1;
const HAS_VALUE: u8 = 2;
const HAS_HEADERS: u8 = 4;

/// The records written to an output topic, packed back to back in one
/// buffer, oldest first: for each, a flags byte, the key's and the value's
/// length (LEB128) and bytes when present, and the timestamp (8 bytes);
/// the headers of the few records that have any are kept beside. A
/// topic's records cost their bytes and a dozen more, and no allocation
/// each: the driver keeps every record of every topic (repartition and
/// changelog topics too) for a test that may read it.
#[derive(Debug, Default)]
pub(crate) struct Packed {
    bytes: Vec<u8>,
    /// Where the first unread record starts.
    read: usize,
    /// How many records are unread.
    len: usize,
    /// The headers of the unread records that have some, oldest first.
    headers: VecDeque<Headers>,
}

impl Packed {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, record: &RawRecord) {
        if self.bytes.capacity() == 0 {
            // A topic's first record: room for a few, so that a small
            // test's topics do not grow their buffers 8 bytes at a time.
            self.bytes.reserve(FIRST_CAPACITY);
        }
        let mut flags = 0;
        if record.key.is_some() {
            flags |= HAS_KEY;
        }
        if record.value.is_some() {
            flags |= HAS_VALUE;
        }
        if !record.headers.is_empty() {
            flags |= HAS_HEADERS;
        }
        self.bytes.push(flags);
        for part in [&record.key, &record.value].into_iter().flatten() {
            let mut n = part.len();
            while n >= 0x80 {
                self.bytes.push((n as u8) | 0x80);
                n >>= 7;
            }
            self.bytes.push(n as u8);
            self.bytes.extend_from_slice(part);
        }
        self.bytes
            .extend_from_slice(&record.timestamp.to_le_bytes());
        if !record.headers.is_empty() {
            self.headers.push_back(record.headers.clone());
        }
        self.len += 1;
    }

    /// The unread records, oldest first, the first at offset `first`.
    pub(crate) fn iter(&self, first: i64) -> PackedIter<'_> {
        PackedIter {
            packed: self,
            at: self.read,
            offset: first,
            headers: 0,
        }
    }

    /// Forgets the oldest unread record.
    pub(crate) fn pop_front(&mut self) {
        let mut iter = self.iter(0);
        if iter.next().is_none() {
            return;
        }
        let (at, headers) = (iter.at, iter.headers);
        self.read = at;
        if headers > 0 {
            self.headers.pop_front();
        }
        self.len -= 1;
        if self.len == 0 {
            self.clear();
        } else if self.read > 4096 && self.read > self.bytes.len() / 2 {
            // Most of the buffer was read: keep only the rest.
            self.bytes.drain(..self.read);
            self.read = 0;
        }
    }

    /// Forgets every record (the buffer is kept for reuse).
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.headers.clear();
        self.read = 0;
        self.len = 0;
    }
}

/// The records of a [`Packed`] buffer, oldest first.
pub(crate) struct PackedIter<'a> {
    packed: &'a Packed,
    at: usize,
    offset: i64,
    /// How many of the packed headers were passed.
    headers: usize,
}

impl<'a> Iterator for PackedIter<'a> {
    type Item = PackedRecord<'a>;

    fn next(&mut self) -> Option<PackedRecord<'a>> {
        let packed = self.packed;
        let flags = *packed.bytes.get(self.at)?;
        self.at += 1;
        // The slices borrow the buffer, not the iterator.
        let mut part = |present: bool| -> Option<&'a [u8]> {
            if !present {
                return None;
            }
            let start = {
                let (mut n, mut shift) = (0_usize, 0);
                loop {
                    let b = packed.bytes[self.at];
                    self.at += 1;
                    n |= usize::from(b & 0x7f) << shift;
                    if b < 0x80 {
                        break;
                    }
                    shift += 7;
                }
                let start = self.at;
                self.at += n;
                start
            };
            Some(&packed.bytes[start..self.at])
        };
        let key = part(flags & HAS_KEY != 0);
        let value = part(flags & HAS_VALUE != 0);
        let mut ts = [0_u8; 8];
        ts.copy_from_slice(&packed.bytes[self.at..self.at + 8]);
        self.at += 8;
        let headers = if flags & HAS_HEADERS != 0 {
            self.headers += 1;
            &packed.headers[self.headers - 1]
        } else {
            &NO_HEADERS
        };
        let offset = self.offset;
        self.offset += 1;
        Some(PackedRecord {
            offset,
            key,
            value,
            timestamp: i64::from_le_bytes(ts),
            headers,
        })
    }
}

/// The records written to one output topic and not yet read: packed as
/// they are written, unpacked into `records` only for a reader that wants
/// them so (the driver's `output_mut`). Every record in `records` is
/// older than every packed one.
///
/// A topic a test reads (it has a `TestOutputTopic`) keeps its records as
/// they were written instead ([`OutputQueue::keep_owned`]): the reader
/// then decodes each key and value from the very buffer the sink's
/// serializer made (a `String` gets its buffer back), without the copy
/// into the packed buffer, the allocation and the copy out of it. That
/// costs memory (a record's two buffers and about 72 bytes, against its
/// bytes and about a dozen packed), which only topics a test reads pay.
#[derive(Debug, Default)]
pub(crate) struct OutputQueue {
    pub(crate) records: VecDeque<OutputRecord>,
    pub(crate) packed: Packed,
    next_offset: i64,
    /// Whether records are kept as written (in `records`), not packed.
    owned: bool,
}

impl OutputQueue {
    /// The offset the next record written to the topic gets.
    pub(crate) fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// How many records are unread.
    pub(crate) fn len(&self) -> usize {
        self.records.len() + self.packed.len()
    }

    /// The offset of the oldest packed record.
    pub(crate) fn first_packed_offset(&self) -> i64 {
        self.next_offset - self.packed.len() as i64
    }

    /// Writes a copy of a record, at the next offset: packed, or cloned
    /// when the queue keeps records as written.
    pub(crate) fn push(&mut self, record: &RawRecord) {
        if self.owned {
            self.push_owned(record.clone());
        } else {
            self.next_offset += 1;
            self.packed.push(record);
        }
    }

    /// Writes a record, at the next offset: kept as it is when the queue
    /// keeps records as written, else packed (and dropped).
    pub(crate) fn push_owned(&mut self, record: RawRecord) {
        if self.owned {
            let offset = self.next_offset;
            self.next_offset += 1;
            self.records.push_back(OutputRecord::owned(offset, record));
        } else {
            self.push(&record);
        }
    }

    /// From now on, keeps the records written as they are (see the type's
    /// docs); those already packed are unpacked, so that every record
    /// stays in `records`, oldest first.
    pub(crate) fn keep_owned(&mut self) {
        self.unpack();
        self.owned = true;
    }

    /// Unpacks every packed record into `records`.
    pub(crate) fn unpack(&mut self) {
        if self.packed.len() == 0 {
            return;
        }
        let first = self.first_packed_offset();
        self.records
            .extend(self.packed.iter(first).map(|r| OutputRecord::unpack(&r)));
        self.packed.clear();
    }

    /// Forgets every unread record.
    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.packed.clear();
    }
}

#[cfg(test)]
mod tests {
    use streams_core::{Headers, RawRecord};

    use super::{INLINE, OutputQueue, PackedRecord, Payload};

    /// Records of every shape: null and empty keys and values, lengths
    /// across the one- and two-byte length encodings, headers on some.
    fn records() -> Vec<RawRecord> {
        let mut state = 7_u64;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        (0..600)
            .map(|i| {
                let bytes = |tag: u8, pick: u64| {
                    let len = [0, 1, 15, 16, 127, 128, 300, 20_000][pick as usize];
                    (0..len).map(|j| tag ^ (j as u8)).collect::<Vec<u8>>()
                };
                let (has_key, key_len) = (next(5) != 0, next(8));
                let (has_value, value_len) = (next(5) != 0, next(8));
                let key = has_key.then(|| bytes(1, key_len));
                let value = has_value.then(|| bytes(2, value_len));
                let mut record = RawRecord::new(key, value, i as i64 * 3 - 5);
                if next(4) == 0 {
                    record.headers = Headers::new().with("h", vec![i as u8]).with("h", "x");
                }
                record
            })
            .collect()
    }

    fn same(view: &PackedRecord<'_>, offset: i64, r: &RawRecord) -> bool {
        view.offset == offset
            && view.key == r.key.as_deref()
            && view.value == r.value.as_deref()
            && view.timestamp == r.timestamp
            && *view.headers == r.headers
    }

    #[test]
    fn packed_records_read_back_as_written() {
        let records = records();
        let mut queue = OutputQueue::default();
        for r in &records {
            queue.push(r);
        }
        assert_eq!(queue.len(), records.len());
        let all: Vec<_> = queue.packed.iter(queue.first_packed_offset()).collect();
        assert_eq!(all.len(), records.len());
        for (i, (view, r)) in all.iter().zip(&records).enumerate() {
            assert!(same(view, i as i64, r), "record {i}");
        }
        // Read one by one (the buffer is compacted on the way), with more
        // written in between.
        for (i, r) in records.iter().enumerate() {
            let front = queue.packed.iter(queue.first_packed_offset()).next();
            assert!(front.is_some_and(|v| same(&v, i as i64, r)), "record {i}");
            queue.packed.pop_front();
            if i % 3 == 0 {
                queue.push(r);
            }
        }
        let rest: Vec<_> = records.iter().step_by(3).collect();
        assert_eq!(queue.len(), rest.len());
        let first = queue.first_packed_offset();
        assert_eq!(first, records.len() as i64);
        for (i, (view, r)) in queue.packed.iter(first).zip(&rest).enumerate() {
            assert!(same(&view, first + i as i64, r), "rewritten record {i}");
        }
        // Unpacked (as the fluent reader sees them): the same records.
        queue.unpack();
        assert_eq!(queue.packed.len(), 0);
        for (i, (out, r)) in queue.records.iter().zip(&rest).enumerate() {
            assert!(
                same(&PackedRecord::of(out), first + i as i64, r),
                "unpacked {i}"
            );
        }
        queue.clear();
        assert_eq!(queue.len(), 0);
        assert_eq!(queue.packed.iter(0).count(), 0);
    }

    #[test]
    fn payloads_up_to_inline_bytes_are_inline_longer_ones_on_the_heap() {
        for len in [0, 1, INLINE - 1, INLINE, INLINE + 1, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let payload = Payload::from_slice(&bytes);
            assert_eq!(&*payload, &bytes[..], "length {len}");
            assert_eq!(
                matches!(payload, Payload::Inline { .. }),
                len <= INLINE,
                "length {len}"
            );
        }
    }

    /// Offsets count every record written: reading from the front, or
    /// unpacking, neither renumbers the rest nor the next record; records
    /// unpacked stay older than those packed after them.
    #[test]
    fn offsets_survive_reads_and_unpacking() {
        let record = |v: &str, ts: i64| RawRecord::new(Some(b"k".to_vec()), Some(v.into()), ts);
        let mut queue = OutputQueue::default();
        assert_eq!((queue.len(), queue.next_offset()), (0, 0));
        queue.push(&record("a", 10));
        queue.push(&record("b", 11));
        queue.packed.pop_front();
        assert_eq!((queue.len(), queue.next_offset()), (1, 2));
        assert_eq!(queue.first_packed_offset(), 1);
        queue.unpack();
        queue.push(&record("c", 12));
        let unpacked: Vec<_> = queue
            .records
            .iter()
            .map(|r| (r.offset, r.record.value.as_deref().map(<[u8]>::to_vec)))
            .collect();
        assert_eq!(unpacked, [(1, Some(b"b".to_vec()))]);
        let packed: Vec<_> = queue
            .packed
            .iter(queue.first_packed_offset())
            .map(|r| (r.offset, r.value.map(<[u8]>::to_vec), r.timestamp))
            .collect();
        assert_eq!(packed, [(2, Some(b"c".to_vec()), 12)]);
        assert_eq!((queue.len(), queue.next_offset()), (2, 3));
        // Popping an empty buffer does nothing.
        queue.clear();
        queue.packed.pop_front();
        assert_eq!((queue.len(), queue.next_offset()), (0, 3));
    }
}
