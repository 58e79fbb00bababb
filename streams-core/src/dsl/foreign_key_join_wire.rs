//! The wire formats of a foreign-key join's internal topics and store,
//! byte for byte as Kafka 4.4 writes them (`SubscriptionWrapperSerde`,
//! `SubscriptionResponseWrapperSerde`, `CombinedKeySchema`), and the
//! 128-bit murmur3 hash (Kafka's `Murmur3.hash128`, seed 104729) of a
//! primary row's serialized value that lets the primary side drop stale
//! responses.
//!
//! - A subscription (the value on `...-SUBSCRIPTION-REGISTRATION-<n>-topic`
//!   and in the subscription store): one byte `version | 0x80 if no hash`,
//!   the instruction byte, the hash as two big-endian longs (absent when
//!   null), the serialized primary key, and from version 1 on the primary
//!   record's partition as a big-endian int.
//! - A response (`...-SUBSCRIPTION-RESPONSE-<n>-topic`): one byte `version |
//!   0x80 if no hash`, the hash (absent when null), the serialized foreign
//!   value (nothing when null). The primary partition is not written.
//! - A subscription store key (`CombinedKey`): the foreign key's length as a
//!   big-endian int, the foreign key, the primary key; the store is
//!   scanned by the prefix of the first two.

use crate::serde::SerdeError;

/// Kafka's `Murmur3.DEFAULT_SEED`.
const SEED: i64 = 104_729;
const C1: i64 = 0x87c3_7b91_1142_53d5_u64 as i64;
const C2: i64 = 0x4cf5_ad43_2745_937f;

fn fmix64(mut h: i64) -> i64 {
    h ^= ((h as u64) >> 33) as i64;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd_u64 as i64);
    h ^= ((h as u64) >> 33) as i64;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53_u64 as i64);
    h ^= ((h as u64) >> 33) as i64;
    h
}

fn mix_k1(k1: i64) -> i64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: i64) -> i64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// Kafka's `Murmur3.hash128(data)`: MurmurHash3 x64 128-bit with seed
/// 104729, as two signed longs.
pub(crate) fn murmur3_hash128(data: &[u8]) -> [i64; 2] {
    let (mut h1, mut h2) = (SEED, SEED);
    let blocks = data.chunks_exact(16);
    let tail = blocks.remainder();
    for block in blocks {
        let mut word = [0u8; 8];
        word.copy_from_slice(&block[..8]);
        let k1 = i64::from_le_bytes(word);
        word.copy_from_slice(&block[8..]);
        let k2 = i64::from_le_bytes(word);
        h1 ^= mix_k1(k1);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(k2);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let (mut k1, mut k2) = (0i64, 0i64);
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 ^= i64::from(b) << (8 * i);
        } else {
            k2 ^= i64::from(b) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= mix_k2(k2);
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(k1);
    }
    let len = data.len() as i64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    [h1, h2]
}

/// The newest subscription version Kafka 4.4 writes and reads
/// (`SubscriptionWrapper.CURRENT_VERSION`): version 1 adds the primary
/// partition.
pub(crate) const SUBSCRIPTION_VERSION: u8 = 1;

/// The only response version (`SubscriptionResponseWrapper.CURRENT_VERSION`).
pub(crate) const RESPONSE_VERSION: u8 = 0;

/// Kafka's `SubscriptionWrapper.Instruction`: what the foreign side does
/// with a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Instruction {
    /// Forget the subscription, answer nothing (the primary row moved to
    /// another foreign key, whose answer will say what to emit).
    DeleteKeyNoPropagate = 0,
    /// Forget the subscription and answer with no foreign value (the
    /// primary row is gone).
    DeleteKeyAndPropagate = 1,
    /// Subscribe and answer, with no foreign value if there is none.
    PropagateNullIfNoFkValAvailable = 2,
    /// Subscribe and answer only if the foreign row exists.
    PropagateOnlyIfFkValAvailable = 3,
}

impl Instruction {
    fn from_byte(b: u8) -> Result<Self, SerdeError> {
        Ok(match b {
            0 => Instruction::DeleteKeyNoPropagate,
            1 => Instruction::DeleteKeyAndPropagate,
            2 => Instruction::PropagateNullIfNoFkValAvailable,
            3 => Instruction::PropagateOnlyIfFkValAvailable,
            other => {
                return Err(SerdeError::new(format!(
                    "unknown foreign-key join instruction byte {other}"
                )));
            }
        })
    }
}

/// Kafka's `SubscriptionWrapper`, with the primary key kept serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subscription {
    /// The hash of the primary row's serialized value; `None` for a
    /// deleted row.
    pub(crate) hash: Option<[i64; 2]>,
    pub(crate) instruction: Instruction,
    /// The primary key, serialized with the primary table's key serde.
    pub(crate) primary_key: Vec<u8>,
    pub(crate) version: u8,
    /// The partition of the primary record (version 1 on).
    pub(crate) primary_partition: Option<i32>,
}

fn put_hash(out: &mut Vec<u8>, hash: &[i64; 2]) {
    out.extend_from_slice(&hash[0].to_be_bytes());
    out.extend_from_slice(&hash[1].to_be_bytes());
}

fn take<'a>(bytes: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8], SerdeError> {
    if bytes.len() < n {
        return Err(SerdeError::new(format!(
            "truncated foreign-key join record: {what} needs {n} bytes, {} left",
            bytes.len()
        )));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn take_long(bytes: &mut &[u8], what: &str) -> Result<i64, SerdeError> {
    let mut b = [0u8; 8];
    b.copy_from_slice(take(bytes, 8, what)?);
    Ok(i64::from_be_bytes(b))
}

fn take_int(bytes: &mut &[u8], what: &str) -> Result<i32, SerdeError> {
    let mut b = [0u8; 4];
    b.copy_from_slice(take(bytes, 4, what)?);
    Ok(i32::from_be_bytes(b))
}

impl Subscription {
    /// `{version | 0x80 if no hash}{instruction}{hash?}{primary key}{partition (v1)}`.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + 16 + self.primary_key.len() + 4);
        match &self.hash {
            Some(h) => {
                out.push(self.version);
                out.push(self.instruction as u8);
                put_hash(&mut out, h);
            }
            None => {
                out.push(self.version | 0x80);
                out.push(self.instruction as u8);
            }
        }
        out.extend_from_slice(&self.primary_key);
        if self.version > 0 {
            out.extend_from_slice(&self.primary_partition.unwrap_or(-1).to_be_bytes());
        }
        out
    }

    /// Reads what [`Subscription::to_bytes`] writes, any version (a version
    /// this library cannot process is refused by the processor that reads it).
    pub(crate) fn from_bytes(mut bytes: &[u8]) -> Result<Self, SerdeError> {
        let first = take(&mut bytes, 1, "the version byte")?[0];
        let version = first & 0x7f;
        let instruction = Instruction::from_byte(take(&mut bytes, 1, "the instruction")?[0])?;
        let hash = if first & 0x80 == 0 {
            Some([
                take_long(&mut bytes, "the hash")?,
                take_long(&mut bytes, "the hash")?,
            ])
        } else {
            None
        };
        let (primary_key, primary_partition) = if version > 0 {
            let keep = bytes.len().checked_sub(4).ok_or_else(|| {
                SerdeError::new("truncated subscription: no room for the primary partition")
            })?;
            let key = take(&mut bytes, keep, "the primary key")?.to_vec();
            (key, Some(take_int(&mut bytes, "the primary partition")?))
        } else {
            (bytes.to_vec(), None)
        };
        Ok(Subscription {
            hash,
            instruction,
            primary_key,
            version,
            primary_partition,
        })
    }
}

/// Kafka's `SubscriptionResponseWrapper`, with the foreign value kept
/// serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    /// The hash the subscription carried.
    pub(crate) hash: Option<[i64; 2]>,
    /// The foreign row's serialized value, `None` when there is none.
    pub(crate) foreign_value: Option<Vec<u8>>,
    pub(crate) version: u8,
}

impl Response {
    /// `{version | 0x80 if no hash}{hash?}{foreign value?}`.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let value = self.foreign_value.as_deref().unwrap_or_default();
        let mut out = Vec::with_capacity(1 + 16 + value.len());
        match &self.hash {
            Some(h) => {
                out.push(self.version);
                put_hash(&mut out, h);
            }
            None => out.push(self.version | 0x80),
        }
        out.extend_from_slice(value);
        out
    }

    /// Reads what [`Response::to_bytes`] writes; no bytes after the hash
    /// are a null foreign value, as in Kafka.
    pub(crate) fn from_bytes(mut bytes: &[u8]) -> Result<Self, SerdeError> {
        let first = take(&mut bytes, 1, "the version byte")?[0];
        let hash = if first & 0x80 == 0 {
            Some([
                take_long(&mut bytes, "the hash")?,
                take_long(&mut bytes, "the hash")?,
            ])
        } else {
            None
        };
        Ok(Response {
            hash,
            foreign_value: (!bytes.is_empty()).then(|| bytes.to_vec()),
            version: first & 0x7f,
        })
    }
}

/// The subscription store's key prefix for a foreign key: its length as a
/// big-endian int, then its bytes (`CombinedKeySchema.prefixBytes`).
pub(crate) fn combined_key_prefix(foreign_key: &[u8]) -> Vec<u8> {
    let len = i32::try_from(foreign_key.len()).unwrap_or(i32::MAX);
    let mut out = Vec::with_capacity(4 + foreign_key.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(foreign_key);
    out
}

/// The subscription store's key (`CombinedKeySchema.toBytes`): the
/// prefix of the foreign key, then the primary key.
pub(crate) fn combined_key(foreign_key: &[u8], primary_key: &[u8]) -> Vec<u8> {
    let mut out = combined_key_prefix(foreign_key);
    out.extend_from_slice(primary_key);
    out
}

/// The foreign and primary key bytes of a subscription store key.
pub(crate) fn split_combined_key(mut bytes: &[u8]) -> Result<(&[u8], &[u8]), SerdeError> {
    let len = take_int(&mut bytes, "the foreign key length")?;
    let len = usize::try_from(len)
        .map_err(|_| SerdeError::new("negative foreign key length in a subscription key"))?;
    let fk = take(&mut bytes, len, "the foreign key")?;
    Ok((fk, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn murmur3_matches_kafkas_hash128() {
        // From the oracle's subscription records: hash128 of "p1/a" and
        // "p2/b" (the bytes after the version and instruction).
        let h = murmur3_hash128(b"p1/a");
        assert_eq!(
            format!("{:016x}{:016x}", h[0], h[1]),
            "91dbfe22c4ab5374d26b0ba9ebab4e5b"
        );
        let h = murmur3_hash128(b"p2/b");
        assert_eq!(
            format!("{:016x}{:016x}", h[0], h[1]),
            "266c530b9ed24079bdc334c55dbdce12"
        );
        let h = murmur3_hash128(b"p1/old");
        assert_eq!(
            format!("{:016x}{:016x}", h[0], h[1]),
            "7b907feffa731e61334076b269a6f43d"
        );
        // Each tail length and a full block: stable, distinct.
        let data: Vec<u8> = (0u8..40).map(|b| b.wrapping_mul(37)).collect();
        let all: std::collections::BTreeSet<[i64; 2]> = (0..=data.len())
            .map(|n| murmur3_hash128(&data[..n]))
            .collect();
        assert_eq!(all.len(), data.len() + 1);
    }

    #[test]
    fn subscription_bytes_are_kafkas() {
        let s = Subscription {
            hash: Some(murmur3_hash128(b"p1/a")),
            instruction: Instruction::PropagateOnlyIfFkValAvailable,
            primary_key: b"o1".to_vec(),
            version: SUBSCRIPTION_VERSION,
            primary_partition: Some(0),
        };
        assert_eq!(
            hex(&s.to_bytes()),
            "010391dbfe22c4ab5374d26b0ba9ebab4e5b6f3100000000"
        );
        assert_eq!(Subscription::from_bytes(&s.to_bytes()).ok(), Some(s));
        let deleted = Subscription {
            hash: None,
            instruction: Instruction::DeleteKeyAndPropagate,
            primary_key: b"o1".to_vec(),
            version: 1,
            primary_partition: Some(0),
        };
        assert_eq!(hex(&deleted.to_bytes()), "81016f3100000000");
        assert_eq!(
            Subscription::from_bytes(&deleted.to_bytes()).ok(),
            Some(deleted)
        );
        // Version 0 has no partition (SubscriptionWrapperSerdeTest).
        let v0 = Subscription {
            hash: None,
            instruction: Instruction::DeleteKeyNoPropagate,
            primary_key: b"pk".to_vec(),
            version: 0,
            primary_partition: None,
        };
        assert_eq!(hex(&v0.to_bytes()), "80 00 70 6b".replace(' ', ""));
        assert_eq!(Subscription::from_bytes(&v0.to_bytes()).ok(), Some(v0));
        assert!(Subscription::from_bytes(&[1, 9]).is_err());
        assert!(Subscription::from_bytes(&[0x81, 1, 0]).is_err());
        assert!(Subscription::from_bytes(&[1, 1, 0, 0]).is_err());
    }

    #[test]
    fn response_bytes_are_kafkas() {
        let r = Response {
            hash: Some(murmur3_hash128(b"p1/a")),
            foreign_value: Some(b"pen".to_vec()),
            version: RESPONSE_VERSION,
        };
        assert_eq!(
            hex(&r.to_bytes()),
            "0091dbfe22c4ab5374d26b0ba9ebab4e5b70656e"
        );
        assert_eq!(Response::from_bytes(&r.to_bytes()).ok(), Some(r));
        let none = Response {
            hash: None,
            foreign_value: None,
            version: 0,
        };
        assert_eq!(hex(&none.to_bytes()), "80");
        assert_eq!(Response::from_bytes(&[0x80]).ok(), Some(none));
        assert!(Response::from_bytes(&[0, 1, 2]).is_err());
    }

    #[test]
    fn combined_keys_are_prefixed_by_the_foreign_key_length() {
        let key = combined_key(b"p1", b"o1");
        assert_eq!(hex(&key), "0000000270316f31");
        assert!(key.starts_with(&combined_key_prefix(b"p1")));
        assert_eq!(
            split_combined_key(&key).ok(),
            Some((&b"p1"[..], &b"o1"[..]))
        );
        assert!(split_combined_key(&[0, 0, 0, 9, 1]).is_err());
        assert!(split_combined_key(&[0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
