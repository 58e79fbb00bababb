//! JSON: any `serde` type as UTF-8 JSON text, as Kafka's `JsonSerializer` and
//! `JsonDeserializer` write and read it.
//!
//! [`JsonSerde`] writes compact JSON (no whitespace) with `serde_json` and
//! reads any valid JSON for the type. Bad input is a [`SerdeError`] that
//! names the type, what `serde_json` expected and where (line and column).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use streams_core::serde::{JsonSerde, Serde};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct Order {
//!     id: u64,
//!     item: String,
//! }
//!
//! let serde = JsonSerde::<Order>::new();
//! let order = Order { id: 7, item: "tea".into() };
//! let bytes = serde.serialize("orders", &order)?;
//! assert_eq!(bytes, br#"{"id":7,"item":"tea"}"#);
//! assert_eq!(serde.deserialize("orders", &bytes)?, order);
//!
//! let err = serde.deserialize("orders", br#"{"item":"tea"}"#).unwrap_err();
//! assert!(err.to_string().contains("missing field `id` at line 1 column 14"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::type_name;
use std::fmt;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Serde, SerdeError};

/// A serde for any `T` that implements `serde`'s `Serialize` and
/// `Deserialize`, writing compact UTF-8 JSON.
///
/// It holds no data: it is `Copy`, `Send` and `Sync` whatever `T` is.
///
/// ```
/// use streams_core::serde::{JsonSerde, Serde};
///
/// let serde = JsonSerde::<Vec<i32>>::new();
/// assert_eq!(serde.serialize("t", &vec![1, 2])?, b"[1,2]");
/// let err = serde.deserialize("t", b"[1,").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "cannot read JSON for type `alloc::vec::Vec<i32>`: EOF while parsing a value at line 1 column 3"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JsonSerde<T> {
    _type: PhantomData<fn() -> T>,
}

impl<T> JsonSerde<T> {
    /// A JSON serde for `T`.
    pub const fn new() -> Self {
        JsonSerde { _type: PhantomData }
    }
}

impl<T> Default for JsonSerde<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for JsonSerde<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for JsonSerde<T> {}

impl<T> fmt::Debug for JsonSerde<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonSerde<{}>", type_name::<T>())
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Serde<T> for JsonSerde<T> {
    fn serialize(&self, _topic: &str, value: &T) -> Result<Vec<u8>, SerdeError> {
        serde_json::to_vec(value).map_err(|e| {
            SerdeError::new(format!(
                "cannot write JSON for type `{}`: {e}",
                type_name::<T>()
            ))
        })
    }

    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<T, SerdeError> {
        serde_json::from_slice(bytes).map_err(|e| {
            SerdeError::new(format!(
                "cannot read JSON for type `{}`: {e}",
                type_name::<T>()
            ))
        })
    }
}
