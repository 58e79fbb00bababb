//! Kafka's zig-zag variable-length integers (`ByteUtils.writeVarint`,
//! `writeVarlong`, `readVarint`, `readVarlong`), as the v2 record format
//! uses them for every record field but the attributes byte.

/// Zig-zag encodes a 32-bit value: small magnitudes, positive or negative,
/// become small unsigned numbers (`0 -> 0, -1 -> 1, 1 -> 2, ...`).
#[inline]
fn zigzag32(value: i32) -> u32 {
    ((value << 1) ^ (value >> 31)) as u32
}

/// Zig-zag encodes a 64-bit value.
#[inline]
fn zigzag64(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// How many 7-bit groups an unsigned value needs (at least one).
#[inline]
fn unsigned_size(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// The encoded size of `value` as a varint (`ByteUtils.sizeOfVarint`): 1 to 5 bytes.
#[inline]
pub(super) fn size_of_varint(value: i32) -> usize {
    unsigned_size(u64::from(zigzag32(value)))
}

/// The encoded size of `value` as a varlong (`ByteUtils.sizeOfVarlong`): 1 to 10 bytes.
#[inline]
pub(super) fn size_of_varlong(value: i64) -> usize {
    unsigned_size(zigzag64(value))
}

#[inline]
fn put_unsigned(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `value` as a zig-zag varint.
#[inline]
pub(super) fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_unsigned(out, u64::from(zigzag32(value)));
}

/// Appends `value` as a zig-zag varlong.
#[inline]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn put_varlong(out: &mut Vec<u8>, value: i64) {
    put_unsigned(out, zigzag64(value));
}

/// Reads a zig-zag varint at `*pos`, advancing it. `None` when the input
/// ends first or the varint runs past 5 bytes (Kafka's
/// `illegalVarintException`); as Kafka's reader, bits of the fifth byte
/// beyond the 32 are dropped.
#[inline]
pub(super) fn read_varint(data: &[u8], pos: &mut usize) -> Option<i32> {
    let mut raw: u32 = 0;
    for i in 0..5 {
        let byte = *data.get(*pos)?;
        *pos += 1;
        raw |= u32::from(byte & 0x7f).wrapping_shl(7 * i);
        if byte & 0x80 == 0 {
            return Some(((raw >> 1) as i32) ^ -((raw & 1) as i32));
        }
    }
    None
}

/// Reads a zig-zag varlong at `*pos`, advancing it. `None` when the input
/// ends first or the varlong runs past 10 bytes.
#[inline]
pub(super) fn read_varlong(data: &[u8], pos: &mut usize) -> Option<i64> {
    let mut raw: u64 = 0;
    for i in 0..10 {
        let byte = *data.get(*pos)?;
        *pos += 1;
        raw |= u64::from(byte & 0x7f).wrapping_shl(7 * i);
        if byte & 0x80 == 0 {
            return Some(((raw >> 1) as i64) ^ -((raw & 1) as i64));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expectations of Kafka's `ByteUtilsTest.testVarintSerde` and
    /// `testVarlongSerde`.
    #[test]
    fn varints_match_kafka_byte_utils_test() {
        let cases: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (63, &[0x7e]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (-65, &[0x81, 0x01]),
            (8191, &[0xfe, 0x7f]),
            (-8192, &[0xff, 0x7f]),
            (8192, &[0x80, 0x80, 0x01]),
            (-8193, &[0x81, 0x80, 0x01]),
            (1048575, &[0xfe, 0xff, 0x7f]),
            (-1048576, &[0xff, 0xff, 0x7f]),
            (1048576, &[0x80, 0x80, 0x80, 0x01]),
            (-1048577, &[0x81, 0x80, 0x80, 0x01]),
            (134217727, &[0xfe, 0xff, 0xff, 0x7f]),
            (-134217728, &[0xff, 0xff, 0xff, 0x7f]),
            (134217728, &[0x80, 0x80, 0x80, 0x80, 0x01]),
            (-134217729, &[0x81, 0x80, 0x80, 0x80, 0x01]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for &(value, bytes) in cases {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(out, bytes, "varint {value}");
            assert_eq!(size_of_varint(value), bytes.len());
            let mut pos = 0;
            assert_eq!(read_varint(bytes, &mut pos), Some(value));
            assert_eq!(pos, bytes.len());

            let mut out = Vec::new();
            put_varlong(&mut out, i64::from(value));
            assert_eq!(out, bytes, "varlong {value}");
            assert_eq!(size_of_varlong(i64::from(value)), bytes.len());
            let mut pos = 0;
            assert_eq!(read_varlong(bytes, &mut pos), Some(i64::from(value)));
        }
        let long_cases: &[(i64, &[u8])] = &[
            (
                i64::MAX,
                &[0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
            (
                i64::MIN,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ];
        for &(value, bytes) in long_cases {
            let mut out = Vec::new();
            put_varlong(&mut out, value);
            assert_eq!(out, bytes);
            assert_eq!(size_of_varlong(value), 10);
            let mut pos = 0;
            assert_eq!(read_varlong(bytes, &mut pos), Some(value));
        }
    }

    #[test]
    fn overlong_and_truncated_varints_are_rejected() {
        let mut pos = 0;
        assert_eq!(
            read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], &mut pos),
            None
        );
        let mut pos = 0;
        assert_eq!(read_varint(&[0x80], &mut pos), None);
        let mut pos = 0;
        assert_eq!(read_varlong(&[0xff; 11], &mut pos), None);
        let mut pos = 0;
        assert_eq!(read_varlong(&[], &mut pos), None);
    }
}
