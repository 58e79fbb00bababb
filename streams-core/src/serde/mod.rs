//! Serdes: how keys and values become bytes on a topic and back.
//!
//! A [`Serde`] serializes and deserializes one type, given the topic name,
//! and returns a [`SerdeError`] instead of panicking on bad bytes. The
//! built-ins are byte-compatible with Kafka's: [`StringSerde`] (UTF-8),
//! [`BytesSerde`], [`I32Serde`], [`I64Serde`] and [`F64Serde`] (big-endian, as
//! Kafka's Integer, Long and Double serdes), [`UnitSerde`], JSON and,
//! with the `avro` feature, Avro and Confluent's wire format with a mock
//! schema registry.
//!
//! A `None` key or value is never passed to a serde: the engine writes and
//! reads it as a null without asking the serde, as Kafka does.
//!
//! Serdes see the record's headers, as Kafka's `serialize(topic, headers,
//! data)` and `deserialize(topic, headers, data)` do: sources call
//! [`Serde::deserialize_owned_with_headers`], sinks
//! [`Serde::serialize_owned_with_headers`] (which may add headers); the
//! defaults ignore the headers. `ConfluentAvroSerde` (feature `avro`) uses them for the
//! schema id in a header (`__value_schema_id`), as newer Confluent serdes
//! can.
//!
//! ```
//! use streams_core::serde::{I64Serde, Serde, StringSerde};
//!
//! assert_eq!(I64Serde.serialize("t", &-2)?, vec![0xff; 7].into_iter().chain([0xfe]).collect::<Vec<_>>());
//! assert_eq!(StringSerde.deserialize("t", "grüße".as_bytes())?, "grüße");
//! let err = I64Serde.deserialize("t", &[1, 2, 3]).unwrap_err();
//! assert_eq!(err.to_string(), "size of data received by I64Serde is 3, not 8");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

pub use crate::error::SerdeError;
use crate::record::Headers;

#[cfg(feature = "avro")]
mod avro;
mod decode;
mod json;
#[cfg(test)]
mod tests;

#[cfg(feature = "avro")]
#[cfg_attr(docsrs, doc(cfg(feature = "avro")))]
pub use avro::{
    AvroSerde, ConfluentAvroSerde, KEY_SCHEMA_ID_HEADER, MockSchemaRegistry, VALUE_SCHEMA_ID_HEADER,
};
pub(crate) use decode::ReadAt;
pub use json::JsonSerde;

/// The Avro crate the Avro serdes use, re-exported so that tests can
/// build schemas without depending on it themselves (feature `avro`).
#[cfg(feature = "avro")]
#[cfg_attr(docsrs, doc(cfg(feature = "avro")))]
pub use apache_avro;

/// Serializes and deserializes values of one type for a topic.
///
/// Implement it for your own formats; the built-ins cover strings, bytes,
/// numbers, unit, JSON and Avro. Implementations must not panic on any
/// input: bad bytes are a [`SerdeError`].
pub trait Serde<T>: Send + Sync + 'static {
    /// Turns a value into bytes for `topic`.
    ///
    /// # Errors
    /// A [`SerdeError`] if the value cannot be written in this format.
    fn serialize(&self, topic: &str, value: &T) -> Result<Vec<u8>, SerdeError>;

    /// Turns bytes read from `topic` into a value.
    ///
    /// # Errors
    /// A [`SerdeError`] if the bytes are not a value of this format.
    fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<T, SerdeError>;

    /// As [`serialize`](Serde::serialize), for a value the caller no
    /// longer needs: a serde whose bytes are the value's own buffer (a
    /// `String`'s UTF-8, a `Vec<u8>`) can hand it over instead of
    /// copying it. It must return the same bytes as `serialize`. The
    /// default calls `serialize`.
    ///
    /// # Errors
    /// As [`serialize`](Serde::serialize).
    fn serialize_owned(&self, topic: &str, value: T) -> Result<Vec<u8>, SerdeError> {
        self.serialize(topic, &value)
    }

    /// As [`deserialize`](Serde::deserialize), for bytes the caller no
    /// longer needs: a serde whose value can own the buffer (a `String`, a
    /// `Vec<u8>`) can take it instead of copying it. It must return what
    /// `deserialize` returns, errors included. The default calls
    /// `deserialize`.
    ///
    /// # Errors
    /// As [`deserialize`](Serde::deserialize).
    fn deserialize_owned(&self, topic: &str, bytes: Vec<u8>) -> Result<T, SerdeError> {
        self.deserialize(topic, &bytes)
    }

    /// As [`serialize`](Serde::serialize), seeing the record's headers,
    /// which it may add to (Kafka's `serialize(topic, headers, data)`; a
    /// Confluent serde can put the schema id in a header). Sinks call this
    /// one (through [`serialize_owned_with_headers`](Serde::serialize_owned_with_headers)).
    /// The default ignores the headers and calls `serialize`.
    ///
    /// ```
    /// use streams_core::serde::{Serde, SerdeError, StringSerde};
    /// use streams_core::Headers;
    ///
    /// /// Upper-case text that says so in a header.
    /// struct Shouting;
    /// impl Serde<String> for Shouting {
    ///     fn serialize(&self, topic: &str, v: &String) -> Result<Vec<u8>, SerdeError> {
    ///         StringSerde.serialize(topic, &v.to_uppercase())
    ///     }
    ///     fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<String, SerdeError> {
    ///         StringSerde.deserialize(topic, bytes)
    ///     }
    ///     fn serialize_with_headers(&self, topic: &str, headers: &mut Headers, v: &String) -> Result<Vec<u8>, SerdeError> {
    ///         headers.add("case", "upper");
    ///         self.serialize(topic, v)
    ///     }
    /// }
    /// let mut headers = Headers::new();
    /// assert_eq!(Shouting.serialize_owned_with_headers("t", &mut headers, "hi".to_string())?, b"HI");
    /// assert_eq!(headers.last("case"), Some(&b"upper"[..]));
    /// assert_eq!(StringSerde.serialize_with_headers("t", &mut headers, &"hi".to_string())?, b"hi");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`serialize`](Serde::serialize).
    fn serialize_with_headers(
        &self,
        topic: &str,
        headers: &mut Headers,
        value: &T,
    ) -> Result<Vec<u8>, SerdeError> {
        let _ = headers;
        self.serialize(topic, value)
    }

    /// As [`deserialize`](Serde::deserialize), seeing the record's headers
    /// (Kafka's `deserialize(topic, headers, data)`). Sources call this
    /// one (through [`deserialize_owned_with_headers`](Serde::deserialize_owned_with_headers)).
    /// The default ignores the headers and calls `deserialize`.
    ///
    /// # Errors
    /// As [`deserialize`](Serde::deserialize).
    fn deserialize_with_headers(
        &self,
        topic: &str,
        headers: &Headers,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        let _ = headers;
        self.deserialize(topic, bytes)
    }

    /// As [`serialize_with_headers`](Serde::serialize_with_headers), for a
    /// value the caller no longer needs. The default calls
    /// `serialize_with_headers`, so a serde that uses headers sees them on
    /// every path; a serde with an owned fast path that ignores headers
    /// (the built-in string and bytes serdes) overrides it to call
    /// [`serialize_owned`](Serde::serialize_owned).
    ///
    /// # Errors
    /// As [`serialize`](Serde::serialize).
    fn serialize_owned_with_headers(
        &self,
        topic: &str,
        headers: &mut Headers,
        value: T,
    ) -> Result<Vec<u8>, SerdeError> {
        self.serialize_with_headers(topic, headers, &value)
    }

    /// As [`deserialize_with_headers`](Serde::deserialize_with_headers),
    /// for bytes the caller no longer needs. The default calls
    /// `deserialize_with_headers`; see
    /// [`serialize_owned_with_headers`](Serde::serialize_owned_with_headers).
    ///
    /// # Errors
    /// As [`deserialize`](Serde::deserialize).
    fn deserialize_owned_with_headers(
        &self,
        topic: &str,
        headers: &Headers,
        bytes: Vec<u8>,
    ) -> Result<T, SerdeError> {
        self.deserialize_with_headers(topic, headers, &bytes)
    }

    /// For a serde of windowed keys, the bytes of the key inside the
    /// window (Kafka's `WindowedSerializer.serializeBaseKey`): a DSL sink
    /// without a stream partitioner partitions windowed keys by them, as
    /// Kafka's `WindowedStreamPartitioner`, so that every window of a key
    /// lands on the key's partition. `None` (the default) for any other
    /// serde.
    fn serialize_base_key(&self, topic: &str, value: &T) -> Option<Result<Vec<u8>, SerdeError>> {
        let _ = (topic, value);
        None
    }

    /// Whether this serde's bytes, compared as unsigned bytes one after
    /// the other (Kafka's `Bytes.compareTo`), order values exactly as
    /// their type's `Ord` does. Kafka's stores order keys by their bytes;
    /// a store whose key serde says `true` orders keys by `Ord` instead
    /// and never keeps their bytes, which is cheaper and gives the same
    /// order. `false` (the default) is always correct.
    ///
    /// `true` for [`StringSerde`] (UTF-8 bytes order as `str` does),
    /// [`BytesSerde`] and [`UnitSerde`]; `false` for the signed numbers
    /// (a negative number's big-endian bytes sort after every positive
    /// one's), JSON and Avro.
    ///
    /// ```
    /// use streams_core::serde::{BytesSerde, I64Serde, JsonSerde, Serde, StringSerde};
    ///
    /// assert!(Serde::<String>::bytes_preserve_order(&StringSerde));
    /// assert!(Serde::<Vec<u8>>::bytes_preserve_order(&BytesSerde));
    /// assert!(!Serde::<i64>::bytes_preserve_order(&I64Serde));
    /// assert!(!Serde::<i64>::bytes_preserve_order(&JsonSerde::<i64>::new()));
    /// // Why I64Serde cannot say so: -1 is 0xff.., after 1's 0x00..01.
    /// assert!(I64Serde.serialize("t", &-1)? > I64Serde.serialize("t", &1)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn bytes_preserve_order(&self) -> bool {
        false
    }
}

impl<T, S: Serde<T> + ?Sized> Serde<T> for Arc<S> {
    fn serialize(&self, topic: &str, value: &T) -> Result<Vec<u8>, SerdeError> {
        (**self).serialize(topic, value)
    }
    fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<T, SerdeError> {
        (**self).deserialize(topic, bytes)
    }
    fn serialize_owned(&self, topic: &str, value: T) -> Result<Vec<u8>, SerdeError> {
        (**self).serialize_owned(topic, value)
    }
    fn deserialize_owned(&self, topic: &str, bytes: Vec<u8>) -> Result<T, SerdeError> {
        (**self).deserialize_owned(topic, bytes)
    }
    fn serialize_with_headers(
        &self,
        topic: &str,
        headers: &mut Headers,
        value: &T,
    ) -> Result<Vec<u8>, SerdeError> {
        (**self).serialize_with_headers(topic, headers, value)
    }
    fn deserialize_with_headers(
        &self,
        topic: &str,
        headers: &Headers,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        (**self).deserialize_with_headers(topic, headers, bytes)
    }
    fn serialize_owned_with_headers(
        &self,
        topic: &str,
        headers: &mut Headers,
        value: T,
    ) -> Result<Vec<u8>, SerdeError> {
        (**self).serialize_owned_with_headers(topic, headers, value)
    }
    fn deserialize_owned_with_headers(
        &self,
        topic: &str,
        headers: &Headers,
        bytes: Vec<u8>,
    ) -> Result<T, SerdeError> {
        (**self).deserialize_owned_with_headers(topic, headers, bytes)
    }
    fn serialize_base_key(&self, topic: &str, value: &T) -> Option<Result<Vec<u8>, SerdeError>> {
        (**self).serialize_base_key(topic, value)
    }
    fn bytes_preserve_order(&self) -> bool {
        (**self).bytes_preserve_order()
    }
}

/// A shared, type-erased serde for `T`.
pub type SerdeRef<T> = Arc<dyn Serde<T>>;

/// UTF-8 strings, as Kafka's `Serdes.String()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StringSerde;

impl Serde<String> for StringSerde {
    fn serialize(&self, _topic: &str, value: &String) -> Result<Vec<u8>, SerdeError> {
        Ok(value.as_bytes().to_vec())
    }
    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<String, SerdeError> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(not_utf8(e)),
        }
    }
    fn serialize_owned(&self, _topic: &str, value: String) -> Result<Vec<u8>, SerdeError> {
        Ok(value.into_bytes())
    }
    fn deserialize_owned(&self, _topic: &str, bytes: Vec<u8>) -> Result<String, SerdeError> {
        String::from_utf8(bytes).map_err(|e| not_utf8(e.utf8_error()))
    }
    fn serialize_owned_with_headers(
        &self,
        topic: &str,
        _headers: &mut Headers,
        value: String,
    ) -> Result<Vec<u8>, SerdeError> {
        self.serialize_owned(topic, value)
    }
    fn deserialize_owned_with_headers(
        &self,
        topic: &str,
        _headers: &Headers,
        bytes: Vec<u8>,
    ) -> Result<String, SerdeError> {
        self.deserialize_owned(topic, bytes)
    }
    fn bytes_preserve_order(&self) -> bool {
        true
    }
}

fn not_utf8(e: std::str::Utf8Error) -> SerdeError {
    SerdeError::new(format!(
        "bytes are not valid UTF-8 ({e}); StringSerde reads UTF-8 text only"
    ))
}

/// Raw bytes, passed through unchanged, as Kafka's `Serdes.ByteArray()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesSerde;

impl Serde<Vec<u8>> for BytesSerde {
    fn serialize(&self, _topic: &str, value: &Vec<u8>) -> Result<Vec<u8>, SerdeError> {
        Ok(value.clone())
    }
    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<Vec<u8>, SerdeError> {
        Ok(bytes.to_vec())
    }
    fn serialize_owned(&self, _topic: &str, value: Vec<u8>) -> Result<Vec<u8>, SerdeError> {
        Ok(value)
    }
    fn deserialize_owned(&self, _topic: &str, bytes: Vec<u8>) -> Result<Vec<u8>, SerdeError> {
        Ok(bytes)
    }
    fn serialize_owned_with_headers(
        &self,
        topic: &str,
        _headers: &mut Headers,
        value: Vec<u8>,
    ) -> Result<Vec<u8>, SerdeError> {
        self.serialize_owned(topic, value)
    }
    fn deserialize_owned_with_headers(
        &self,
        topic: &str,
        _headers: &Headers,
        bytes: Vec<u8>,
    ) -> Result<Vec<u8>, SerdeError> {
        self.deserialize_owned(topic, bytes)
    }
    fn bytes_preserve_order(&self) -> bool {
        true
    }
}

macro_rules! number_serde {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal, $kafka:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;

        impl Serde<$t> for $name {
            fn serialize(&self, _topic: &str, value: &$t) -> Result<Vec<u8>, SerdeError> {
                Ok(value.to_be_bytes().to_vec())
            }
            fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<$t, SerdeError> {
                let arr: [u8; $n] = bytes.try_into().map_err(|_| {
                    SerdeError::new(format!(
                        "size of data received by {} is {}, not {}",
                        stringify!($name),
                        bytes.len(),
                        $n
                    ))
                    .with_kafka_message($kafka)
                })?;
                Ok(<$t>::from_be_bytes(arr))
            }
        }
    };
}

number_serde!(
    /// 32-bit signed integers, 4 bytes big-endian, as Kafka's `Serdes.Integer()`.
    I32Serde, i32, 4, "Size of data received by IntegerDeserializer is not 4"
);
number_serde!(
    /// 64-bit signed integers, 8 bytes big-endian, as Kafka's `Serdes.Long()`.
    I64Serde, i64, 8, "Size of data received by LongDeserializer is not 8"
);
number_serde!(
    /// 64-bit floats, 8 bytes big-endian IEEE 754, as Kafka's `Serdes.Double()`.
    F64Serde, f64, 8, "Size of data received by DoubleDeserializer is not 8"
);

/// The unit type, written as zero bytes: for keys or values that carry no
/// data (Kafka's `Void` serde writes null instead; here a `None` is the
/// null, and `Some(())` is an empty payload).
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitSerde;

impl Serde<()> for UnitSerde {
    fn serialize(&self, _topic: &str, _value: &()) -> Result<Vec<u8>, SerdeError> {
        Ok(Vec::new())
    }
    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<(), SerdeError> {
        if bytes.is_empty() {
            Ok(())
        } else {
            Err(SerdeError::new(format!(
                "UnitSerde expects empty data, but got {} bytes",
                bytes.len()
            )))
        }
    }
    fn bytes_preserve_order(&self) -> bool {
        true
    }
}

/// The built-in serde for a standard type, if there is one: `String`,
/// `Vec<u8>`, `i32`, `i64`, `f64` and `()`.
///
/// The engine uses it when neither the topology nor the config names a
/// serde for a source or sink.
///
/// ```
/// use streams_core::serde::builtin_serde;
/// assert!(builtin_serde::<String>().is_some());
/// assert!(builtin_serde::<u16>().is_none());
/// ```
pub fn builtin_serde<T: 'static>() -> Option<SerdeRef<T>> {
    let id = TypeId::of::<T>();
    let any: Box<dyn Any> = if id == TypeId::of::<String>() {
        Box::new(Arc::new(StringSerde) as SerdeRef<String>)
    } else if id == TypeId::of::<Vec<u8>>() {
        Box::new(Arc::new(BytesSerde) as SerdeRef<Vec<u8>>)
    } else if id == TypeId::of::<i32>() {
        Box::new(Arc::new(I32Serde) as SerdeRef<i32>)
    } else if id == TypeId::of::<i64>() {
        Box::new(Arc::new(I64Serde) as SerdeRef<i64>)
    } else if id == TypeId::of::<f64>() {
        Box::new(Arc::new(F64Serde) as SerdeRef<f64>)
    } else if id == TypeId::of::<()>() {
        Box::new(Arc::new(UnitSerde) as SerdeRef<()>)
    } else {
        return None;
    };
    any.downcast::<SerdeRef<T>>().ok().map(|b| *b)
}

/// A serde whose type is known only at run time, as config defaults are
/// (`default.key.serde`, `default.value.serde`).
#[derive(Clone)]
pub struct AnySerde {
    type_id: TypeId,
    type_name: &'static str,
    serde: Arc<dyn Any + Send + Sync>,
}

impl AnySerde {
    /// Wraps a serde for `T`.
    pub fn new<T: 'static>(serde: impl Serde<T>) -> Self {
        let serde: SerdeRef<T> = Arc::new(serde);
        AnySerde {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            serde: Arc::new(serde),
        }
    }

    /// The serde, if it is one for `T`.
    pub fn typed<T: 'static>(&self) -> Option<SerdeRef<T>> {
        if self.type_id != TypeId::of::<T>() {
            return None;
        }
        self.serde.downcast_ref::<SerdeRef<T>>().cloned()
    }

    /// The name of the type this serde is for.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for AnySerde {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AnySerde<{}>", self.type_name)
    }
}
