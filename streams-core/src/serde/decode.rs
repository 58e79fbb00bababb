//! Decoding the key or value of a record that was read somewhere: at a
//! source (a topic, a repartition topic, a global store's topic) or from a
//! store's changelog. One helper, so that every failure names the same
//! things, as Kafka's `StreamsException` for a record it cannot
//! deserialize does: the topic, partition and offset, the part, and the
//! serde's reason.

use std::borrow::Cow;

use super::Serde;
use crate::error::{RecordPart, StreamsError};
use crate::record::{Headers, RecordMetadata};

/// Where a serialized record was read, which a decoding error names.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadAt<'a> {
    pub(crate) topic: &'a str,
    pub(crate) partition: i32,
    pub(crate) offset: i64,
}

impl ReadAt<'_> {
    /// Where nothing says the record was read (no topic, partition and
    /// offset -1).
    pub(crate) const NOWHERE: ReadAt<'static> = ReadAt {
        topic: "",
        partition: -1,
        offset: -1,
    };

    /// Where `metadata` says the record was read, or [`ReadAt::NOWHERE`].
    pub(crate) fn of(metadata: Option<&RecordMetadata>) -> ReadAt<'_> {
        metadata.map_or(ReadAt::NOWHERE, ReadAt::from)
    }
}

impl<'a> From<&'a RecordMetadata> for ReadAt<'a> {
    fn from(metadata: &'a RecordMetadata) -> Self {
        ReadAt {
            topic: &metadata.topic,
            partition: metadata.partition,
            offset: metadata.offset,
        }
    }
}

impl ReadAt<'_> {
    /// Decodes the `part` (key or value) bytes of the record read here
    /// with `serde`, which sees the record's `headers`. Owned bytes go to
    /// [`Serde::deserialize_owned_with_headers`] (a serde may keep the
    /// buffer), borrowed ones to [`Serde::deserialize_with_headers`].
    ///
    /// # Errors
    /// [`StreamsError::Deserialization`] naming the record and the part.
    pub(crate) fn decode<'b, T>(
        &self,
        serde: &(impl Serde<T> + ?Sized),
        bytes: impl Into<Cow<'b, [u8]>>,
        part: RecordPart,
        headers: &Headers,
    ) -> Result<T, StreamsError> {
        match bytes.into() {
            Cow::Owned(bytes) => serde.deserialize_owned_with_headers(self.topic, headers, bytes),
            Cow::Borrowed(bytes) => serde.deserialize_with_headers(self.topic, headers, bytes),
        }
        .map_err(|reason| StreamsError::Deserialization {
            topic: self.topic.to_owned(),
            partition: self.partition,
            offset: self.offset,
            part,
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::{I64Serde, StringSerde};

    const AT: ReadAt<'static> = ReadAt {
        topic: "orders",
        partition: 2,
        offset: 41,
    };

    #[test]
    fn owned_and_borrowed_bytes_decode_alike() {
        let owned = AT.decode(
            &StringSerde,
            b"abc".to_vec(),
            RecordPart::Key,
            &Headers::new(),
        );
        let borrowed = AT.decode(&StringSerde, &b"abc"[..], RecordPart::Key, &Headers::new());
        assert_eq!(owned.ok().as_deref(), Some("abc"));
        assert_eq!(borrowed.ok().as_deref(), Some("abc"));
    }

    #[test]
    fn a_failure_names_the_record_and_the_part() {
        let err = AT.decode(
            &I64Serde,
            &[1_u8, 2, 3][..],
            RecordPart::Value,
            &Headers::new(),
        );
        assert!(matches!(
            &err,
            Err(StreamsError::Deserialization { topic, partition: 2, offset: 41, part: RecordPart::Value, .. })
                if topic == "orders"
        ));
        assert_eq!(
            err.err().map(|e| e.to_string()).unwrap_or_default(),
            "cannot deserialize the value of the record at orders-2 offset 41: \
             size of data received by I64Serde is 3, not 8; \
             check the serde configured for this topic"
        );
    }
}
