//! Kafka's default partitioner, byte-compatible: a keyed record goes to
//! `toPositive(murmur2(key)) % partitions` (`BuiltInPartitioner.partitionForKey`),
//! so a key lands on the partition a Kafka producer would pick; a record
//! without a key goes to a sticky partition (KIP-794), kept until
//! `batch.size` bytes were produced to it.
//!
//! ```
//! use streams_clients::partitioner::{DefaultPartitioner, murmur2, partition_for_key};
//!
//! assert_eq!(murmur2(b"foobar"), -790332482); // Kafka's UtilsTest
//! assert_eq!(partition_for_key(b"foobar", 6)?, 0); // 1357151166 % 6
//! assert!(partition_for_key(b"foobar", 0).is_err());
//!
//! let mut partitioner = DefaultPartitioner::new(16384);
//! assert_eq!(partitioner.partition(Some(b"foobar"), 100, 6)?, 0);
//! assert_eq!(partitioner.partition(None, 10_000, 3)?, 0);
//! assert_eq!(partitioner.partition(None, 10_000, 3)?, 0); // 20000 bytes >= 16384: switch after this one
//! assert_eq!(partitioner.partition(None, 10_000, 3)?, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

/// Kafka's default `batch.size`: 16384 bytes.
pub const DEFAULT_BATCH_SIZE: usize = 16384;

/// A partition count a topic cannot have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionerError {
    /// Zero or fewer partitions.
    #[error("invalid number of partitions {num_partitions}: a topic has at least one partition")]
    InvalidPartitionCount {
        /// The partition count given.
        num_partitions: i32,
    },
}

fn check(num_partitions: i32) -> Result<(), PartitionerError> {
    if num_partitions <= 0 {
        return Err(PartitionerError::InvalidPartitionCount { num_partitions });
    }
    Ok(())
}

/// The 32-bit murmur2 hash of `data` with Kafka's seed `0x9747b28c`
/// (`Utils.murmur2`), as a Java `int`.
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    // Java's int length: a slice beyond 2 GiB wraps as Java's would never see it.
    let mut h = SEED ^ (data.len() as u32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if let Some(&first) = tail.first() {
        h ^= u32::from(first);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// `n` with its sign bit cleared (`Utils.toPositive`): not `abs`, so that
/// `i32::MIN` maps to 0 rather than overflowing.
pub fn to_positive(n: i32) -> i32 {
    n & 0x7fff_ffff
}

/// The partition Kafka's producer picks for a keyed record:
/// `toPositive(murmur2(key)) % num_partitions`. A partition count of zero
/// or less is an error (Kafka would divide by zero or return a negative
/// partition).
///
/// # Errors
/// [`PartitionerError::InvalidPartitionCount`] if `num_partitions` is
/// zero or less.
pub fn partition_for_key(key: &[u8], num_partitions: i32) -> Result<i32, PartitionerError> {
    check(num_partitions)?;
    Ok(to_positive(murmur2(key)) % num_partitions)
}

/// Sticky partitioning of records without a key (Kafka's
/// `BuiltInPartitioner`, KIP-794): every record goes to the current
/// partition until `batch.size` bytes were produced to it, then the
/// partitioner moves on.
///
/// Kafka picks the next partition at random (weighted by queue sizes when
/// adaptive partitioning has load statistics). Here the choice must be
/// deterministic, so the first partition is 0 and each switch moves to the
/// next partition in order, wrapping: a test can predict every partition,
/// and over many batches the load is as even as Kafka's uniform choice
/// intends. Kafka may also delay a switch while the partition has an
/// unfinished batch (up to twice `batch.size`); a simulated producer sends
/// each batch at once, so the switch happens as soon as `batch.size` is
/// reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StickyPartitioner {
    num_partitions: i32,
    batch_size: usize,
    current: i32,
    produced_bytes: usize,
}

impl StickyPartitioner {
    /// A sticky partitioner over `num_partitions` partitions that switches
    /// after `batch_size` bytes (a `batch.size` of 0 counts as 1, as Kafka's
    /// producer takes `max(1, batch.size)`).
    ///
    /// # Errors
    /// [`PartitionerError::InvalidPartitionCount`] if `num_partitions` is
    /// zero or less.
    pub fn new(
        num_partitions: i32,
        batch_size: usize,
    ) -> Result<StickyPartitioner, PartitionerError> {
        check(num_partitions)?;
        Ok(StickyPartitioner {
            num_partitions,
            batch_size: batch_size.max(1),
            current: 0,
            produced_bytes: 0,
        })
    }

    /// The partition for the next record of `record_size_bytes` bytes; the
    /// bytes count towards that partition, and the partitioner moves to the
    /// next one once `batch.size` is reached.
    pub fn partition(&mut self, record_size_bytes: usize) -> i32 {
        let partition = self.current;
        self.produced_bytes = self.produced_bytes.saturating_add(record_size_bytes);
        if self.produced_bytes >= self.batch_size {
            self.current = (self.current + 1) % self.num_partitions;
            self.produced_bytes = 0;
        }
        partition
    }

    /// The partition the next record goes to.
    pub fn current_partition(&self) -> i32 {
        self.current
    }

    /// The partition count.
    pub fn num_partitions(&self) -> i32 {
        self.num_partitions
    }

    /// The bytes produced to the current partition since the last switch.
    pub fn produced_bytes(&self) -> usize {
        self.produced_bytes
    }
}

/// Kafka's default partitioning for one topic: keyed records by murmur2,
/// records without a key by a [`StickyPartitioner`]. The sticky state is
/// kept per partition count, so a topic whose partitions are increased
/// starts a new sticky sequence, as Kafka's producer does when it sees new
/// metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultPartitioner {
    batch_size: usize,
    sticky: BTreeMap<i32, StickyPartitioner>,
}

impl Default for DefaultPartitioner {
    fn default() -> Self {
        DefaultPartitioner::new(DEFAULT_BATCH_SIZE)
    }
}

impl DefaultPartitioner {
    /// A partitioner whose sticky partitions switch after `batch_size` bytes.
    pub fn new(batch_size: usize) -> DefaultPartitioner {
        DefaultPartitioner {
            batch_size,
            sticky: BTreeMap::new(),
        }
    }

    /// The partition for a record with `key` (or none) of
    /// `record_size_bytes` bytes on a topic of `num_partitions` partitions.
    ///
    /// # Errors
    /// [`PartitionerError::InvalidPartitionCount`] if `num_partitions` is
    /// zero or less.
    pub fn partition(
        &mut self,
        key: Option<&[u8]>,
        record_size_bytes: usize,
        num_partitions: i32,
    ) -> Result<i32, PartitionerError> {
        match key {
            Some(key) => partition_for_key(key, num_partitions),
            None => {
                check(num_partitions)?;
                let sticky = match self.sticky.entry(num_partitions) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert(StickyPartitioner::new(num_partitions, self.batch_size)?)
                    }
                };
                Ok(sticky.partition(record_size_bytes))
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Kafka's `UtilsTest.testMurmur2`.
    #[test]
    fn murmur2_matches_kafka_utils_test() {
        let cases: &[(&[u8], i32)] = &[
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for &(data, expected) in cases {
            assert_eq!(
                murmur2(data),
                expected,
                "murmur2({:?})",
                String::from_utf8_lossy(data)
            );
        }
    }

    #[test]
    fn to_positive_clears_the_sign_bit() {
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(to_positive(5), 5);
        assert_eq!(to_positive(-790332482), 1357151166);
    }

    #[test]
    fn keyed_partitions_follow_murmur2() {
        assert_eq!(partition_for_key(b"foobar", 6), Ok(1357151166 % 6));
        assert_eq!(partition_for_key(b"", 1), Ok(0));
        for n in [0, -1, i32::MIN] {
            let err = partition_for_key(b"k", n).unwrap_err();
            assert_eq!(
                err,
                PartitionerError::InvalidPartitionCount { num_partitions: n }
            );
        }
        assert_eq!(
            PartitionerError::InvalidPartitionCount { num_partitions: 0 }.to_string(),
            "invalid number of partitions 0: a topic has at least one partition"
        );
    }

    #[test]
    fn sticky_partitioner_moves_on_after_batch_size_bytes() {
        let mut p = StickyPartitioner::new(3, 100).unwrap();
        let picks: Vec<i32> = (0..12).map(|_| p.partition(40)).collect();
        // 40, 80, 120 >= 100: three records per partition, in order, wrapping.
        assert_eq!(picks, [0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 0]);
        let mut one = StickyPartitioner::new(1, 0).unwrap();
        assert_eq!(
            (0..3).map(|_| one.partition(0)).collect::<Vec<_>>(),
            [0, 0, 0]
        );
        assert!(StickyPartitioner::new(0, 10).is_err());
        let mut big = StickyPartitioner::new(2, 10).unwrap();
        assert_eq!([big.partition(usize::MAX), big.partition(1)], [0, 1]);
    }

    #[test]
    fn default_partitioner_keeps_sticky_state_per_partition_count() {
        let mut p = DefaultPartitioner::new(10);
        assert_eq!(p.partition(None, 10, 2), Ok(0));
        assert_eq!(p.partition(None, 10, 4), Ok(0));
        assert_eq!(p.partition(None, 10, 2), Ok(1));
        assert_eq!(p.partition(Some(b"foobar"), 10, 6), Ok(0));
        assert!(p.partition(None, 10, 0).is_err());
        assert!(p.partition(Some(b"k"), 10, -3).is_err());
    }
}
