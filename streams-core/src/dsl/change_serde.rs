//! Kafka's `ChangedSerializer` wire format: how a table update (a
//! [`Change`]: new and old value) crosses a repartition topic.

use std::sync::Arc;

use crate::record::Change;
use crate::serde::{Serde, SerdeError, SerdeRef};

/// Kafka's `ChangedSerializer` wire format, for table updates crossing a
/// repartition topic: `old ++ [0]`, `new ++ [1]`, or
/// `varint(len(new)) ++ new ++ old ++ [2]`.
pub(crate) struct ChangeSerde<V> {
    pub(crate) inner: SerdeRef<V>,
}

fn write_varint(value: i32, out: &mut Vec<u8>) {
    let mut v = ((value << 1) ^ (value >> 31)) as u32;
    while v & !0x7f != 0 {
        out.push(((v & 0x7f) | 0x80) as u8);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8]) -> Result<(i32, usize), SerdeError> {
    let mut value: u32 = 0;
    for (i, &b) in bytes.iter().enumerate().take(5) {
        value |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let decoded = ((value >> 1) as i32) ^ -((value & 1) as i32);
            return Ok((decoded, i + 1));
        }
    }
    Err(SerdeError::new("malformed varint in a table change record"))
}

impl<V: 'static> Serde<Change<V>> for ChangeSerde<V> {
    fn serialize(&self, topic: &str, change: &Change<V>) -> Result<Vec<u8>, SerdeError> {
        match (&change.new, &change.old) {
            (Some(n), Some(o)) => {
                let new = self.inner.serialize(topic, n)?;
                let old = self.inner.serialize(topic, o)?;
                let len =
                    i32::try_from(new.len()).map_err(|_| SerdeError::new("value too large"))?;
                let mut out = Vec::with_capacity(new.len() + old.len() + 6);
                write_varint(len, &mut out);
                out.extend_from_slice(&new);
                out.extend_from_slice(&old);
                out.push(2);
                Ok(out)
            }
            (Some(n), None) => {
                let mut out = self.inner.serialize(topic, n)?;
                out.push(1);
                Ok(out)
            }
            (None, Some(o)) => {
                let mut out = self.inner.serialize(topic, o)?;
                out.push(0);
                Ok(out)
            }
            (None, None) => Err(SerdeError::new(
                "both old and new values are null in a table change, which cannot be written",
            )),
        }
    }

    fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<Change<V>, SerdeError> {
        let Some((&flag, body)) = bytes.split_last() else {
            return Err(SerdeError::new("empty table change record"));
        };
        match flag {
            0 => Ok(Change::new(
                None,
                Some(self.inner.deserialize(topic, body)?),
            )),
            1 => Ok(Change::new(
                Some(self.inner.deserialize(topic, body)?),
                None,
            )),
            2 => {
                let (len, used) = read_varint(body)?;
                let len = usize::try_from(len)
                    .map_err(|_| SerdeError::new("negative length in a table change"))?;
                let rest = &body[used..];
                if rest.len() < len {
                    return Err(SerdeError::new("truncated table change record"));
                }
                let (new, old) = rest.split_at(len);
                Ok(Change::new(
                    Some(self.inner.deserialize(topic, new)?),
                    Some(self.inner.deserialize(topic, old)?),
                ))
            }
            other => Err(SerdeError::new(format!(
                "unknown table change encoding flag {other}"
            ))),
        }
    }
}

/// The change serde over the built-in serde for `V`, if there is one;
/// otherwise the sink and source report the missing serde by name.
pub(crate) fn default_change_serde<V: 'static>() -> Option<SerdeRef<Change<V>>> {
    crate::serde::builtin_serde::<V>()
        .map(|inner| Arc::new(ChangeSerde { inner }) as SerdeRef<Change<V>>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::StringSerde;

    #[test]
    fn change_serde_uses_kafkas_wire_format() {
        let serde = ChangeSerde::<String> {
            inner: Arc::new(StringSerde),
        };
        let both = Change::new(Some("ab".to_owned()), Some("c".to_owned()));
        assert_eq!(
            serde.serialize("t", &both).ok(),
            Some(vec![4, b'a', b'b', b'c', 2])
        );
        assert_eq!(
            serde
                .serialize("t", &Change::new(Some("x".to_owned()), None))
                .ok(),
            Some(vec![b'x', 1])
        );
        assert_eq!(
            serde
                .serialize("t", &Change::new(None, Some("y".to_owned())))
                .ok(),
            Some(vec![b'y', 0])
        );
        for change in [
            both,
            Change::new(Some("n".into()), None),
            Change::new(None, Some("o".into())),
        ] {
            let bytes = serde.serialize("t", &change).unwrap_or_default();
            assert_eq!(serde.deserialize("t", &bytes).ok(), Some(change));
        }
        assert!(serde.deserialize("t", &[]).is_err());
        assert!(serde.deserialize("t", &[9]).is_err());
    }
}
