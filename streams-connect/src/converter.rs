//! Converters: bytes from Kafka to Connect data (Kafka Connect's
//! `Converter` and `HeaderConverter`). A failure is a `DataException`,
//! which the worker tolerates under `errors.tolerance=all` and never
//! retries; its stage is `KEY_CONVERTER`, `VALUE_CONVERTER` or
//! `HEADER_CONVERTER`.
//!
//! - [`StringConverter`]: UTF-8 text (malformed bytes become U+FFFD, as
//!   Java's decoder does: it never fails).
//! - [`JsonConverter`](crate::json::JsonConverter): JSON, with Kafka's
//!   `{"schema":..,"payload":..}` envelope or without (`schemas.enable`).
//! - [`SerdeConverter`]: any of the project's serdes
//!   (`streams_core::serde`), with a function from its type to Connect data.
//!
//! ```
//! use streams_connect::converter::{Converter, SerdeConverter, StringConverter};
//! use streams_connect::data::{Schema, Value};
//! use streams_core::serde::I64Serde;
//!
//! let text = StringConverter.to_connect_data("t", Some(b"hi"))?;
//! assert_eq!((text.schema, text.value), (Some(Schema::optional_string()), Value::string("hi")));
//!
//! let longs = SerdeConverter::new(I64Serde, |n: i64| (Some(Schema::int64()), Value::Int64(n)));
//! assert_eq!(longs.to_connect_data("t", Some(&7i64.to_be_bytes()))?.value, Value::Int64(7));
//! let bad = longs.to_connect_data("t", Some(b"abc")).unwrap_err();
//! assert!(bad.message().starts_with("Converting byte[] to Kafka Connect data failed due to serialization error"));
//! # Ok::<(), streams_connect::ConnectError>(())
//! ```

use std::fmt;

use streams_core::serde::Serde;

use crate::data::{Schema, SchemaAndValue, Value};
use crate::error::ConnectError;

/// Bytes to Connect data, for a key or a value. See the [module docs](self).
pub trait Converter: Send + fmt::Debug {
    /// Converts `bytes` read from `topic` (`None`: a null key or a
    /// tombstone).
    ///
    /// # Errors
    /// A [`ConnectError`], normally a `DataException`.
    fn to_connect_data(
        &self,
        topic: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError>;

    /// The class Kafka's DLQ headers and log name for this converter;
    /// the built-ins give Kafka's Java class names.
    fn class_name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// Bytes to Connect data, for one header. See the [module docs](self).
pub trait HeaderConverter: Send + fmt::Debug {
    /// Converts the value of header `key` (`None`: a null value).
    ///
    /// # Errors
    /// A [`ConnectError`], normally a `DataException`.
    fn to_connect_header(
        &self,
        topic: &str,
        key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError>;

    /// As [`Converter::class_name`].
    fn class_name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// UTF-8 text, as Kafka's `org.apache.kafka.connect.storage.StringConverter`:
/// an optional string schema, null for null.
#[derive(Debug, Clone, Copy, Default)]
pub struct StringConverter;

impl StringConverter {
    fn convert(bytes: Option<&[u8]>) -> SchemaAndValue {
        SchemaAndValue::new(
            Some(Schema::optional_string()),
            bytes.map_or(Value::Null, |b| {
                Value::String(String::from_utf8_lossy(b).into_owned())
            }),
        )
    }
}

impl Converter for StringConverter {
    fn to_connect_data(
        &self,
        _topic: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        Ok(Self::convert(bytes))
    }

    fn class_name(&self) -> String {
        "org.apache.kafka.connect.storage.StringConverter".to_owned()
    }
}

impl HeaderConverter for StringConverter {
    fn to_connect_header(
        &self,
        _topic: &str,
        _key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        Ok(Self::convert(bytes))
    }

    fn class_name(&self) -> String {
        "org.apache.kafka.connect.storage.StringConverter".to_owned()
    }
}

/// One of the project's serdes as a converter: the serde decodes, `to_data`
/// turns the result into Connect data. A serde error is a `DataException`
/// whose cause is the serde's message.
pub struct SerdeConverter<T> {
    serde: Box<dyn Serde<T>>,
    to_data: Box<dyn Fn(T) -> (Option<Schema>, Value) + Send + Sync>,
}

impl<T> fmt::Debug for SerdeConverter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SerdeConverter")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<T: 'static> SerdeConverter<T> {
    /// A converter that decodes with `serde` and maps with `to_data`.
    pub fn new(
        serde: impl Serde<T>,
        to_data: impl Fn(T) -> (Option<Schema>, Value) + Send + Sync + 'static,
    ) -> Self {
        Self {
            serde: Box::new(serde),
            to_data: Box::new(to_data),
        }
    }

    fn convert(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue, ConnectError> {
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::default());
        };
        let decoded = self.serde.deserialize(topic, bytes).map_err(|e| {
            ConnectError::data(
                "Converting byte[] to Kafka Connect data failed due to serialization error: ",
            )
            .caused_by(
                "org.apache.kafka.common.errors.SerializationException",
                e.to_string(),
            )
        })?;
        let (schema, value) = (self.to_data)(decoded);
        Ok(SchemaAndValue::new(schema, value))
    }
}

impl<T: 'static> Converter for SerdeConverter<T> {
    fn to_connect_data(
        &self,
        topic: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        self.convert(topic, bytes)
    }

    fn class_name(&self) -> String {
        format!("SerdeConverter<{}>", std::any::type_name::<T>())
    }
}

impl<T: 'static> HeaderConverter for SerdeConverter<T> {
    fn to_connect_header(
        &self,
        topic: &str,
        _key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        self.convert(topic, bytes)
    }

    fn class_name(&self) -> String {
        format!("SerdeConverter<{}>", std::any::type_name::<T>())
    }
}
