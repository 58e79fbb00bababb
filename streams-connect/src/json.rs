//! Kafka Connect's `org.apache.kafka.connect.json.JsonConverter`, from
//! bytes to Connect data.
//!
//! With `schemas.enable=true` (Kafka's default, [`JsonConverter::new`])
//! every message is an envelope of exactly two fields,
//! `{"schema": .., "payload": ..}`; the schema is Kafka's JSON schema
//! (`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}]}`).
//! With `schemas.enable=false` ([`JsonConverter::schemaless`]) the message
//! is plain JSON: objects become maps, integers `INT64`, other numbers
//! `FLOAT64`. Bad JSON and a missing envelope are `DataException`s with
//! Kafka's messages.
//!
//! ```
//! use streams_connect::converter::Converter;
//! use streams_connect::data::{Value, SchemaType};
//! use streams_connect::json::JsonConverter;
//!
//! let with_schema = JsonConverter::new();
//! let converted = with_schema.to_connect_data("t", Some(br#"{"schema":{"type":"int32"},"payload":5}"#))?;
//! assert_eq!(converted.schema.map(|s| s.kind), Some(SchemaType::Int32));
//! assert_eq!(converted.value, Value::Int32(5));
//!
//! let plain = with_schema.to_connect_data("t", Some(br#"{"id":5}"#)).expect_err("fails");
//! assert!(plain.message().starts_with("JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields"));
//!
//! let schemaless = JsonConverter::schemaless().to_connect_data("t", Some(br#"{"id":5}"#))?;
//! assert_eq!(schemaless.value.get("id"), Some(&Value::Int64(5)));
//! assert_eq!(
//!     JsonConverter::schemaless().to_connect_data("t", Some(b"{oops")).expect_err("fails").message(),
//!     "Converting byte[] to Kafka Connect data failed due to serialization error: "
//! );
//! # Ok::<(), streams_connect::ConnectError>(())
//! ```

use serde_json::Value as Json;

use crate::converter::{Converter, HeaderConverter};
use crate::data::{Field, Schema, SchemaAndValue, SchemaType, Struct, Value};
use crate::error::ConnectError;

/// Kafka's JSON converter. See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonConverter {
    schemas_enable: bool,
}

impl Default for JsonConverter {
    /// `schemas.enable=true`, Kafka's default.
    fn default() -> Self {
        Self::new()
    }
}

impl JsonConverter {
    /// `schemas.enable=true` (Kafka's default): envelopes only.
    pub fn new() -> Self {
        Self {
            schemas_enable: true,
        }
    }

    /// `schemas.enable=false`: plain JSON.
    pub fn schemaless() -> Self {
        Self {
            schemas_enable: false,
        }
    }

    /// The converter for Kafka's `schemas.enable` setting.
    pub fn with_schemas_enable(schemas_enable: bool) -> Self {
        Self { schemas_enable }
    }

    /// Whether envelopes are expected.
    pub fn schemas_enable(&self) -> bool {
        self.schemas_enable
    }

    fn convert(&self, bytes: Option<&[u8]>) -> Result<SchemaAndValue, ConnectError> {
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::default());
        };
        let json: Json = serde_json::from_slice(bytes).map_err(|e| {
            ConnectError::data(
                "Converting byte[] to Kafka Connect data failed due to serialization error: ",
            )
            .caused_by(
                "org.apache.kafka.common.errors.SerializationException",
                e.to_string(),
            )
        })?;
        if !self.schemas_enable {
            return Ok(SchemaAndValue::schemaless(schemaless(&json)));
        }
        let envelope = match &json {
            Json::Object(map)
                if map.len() == 2 && map.contains_key("schema") && map.contains_key("payload") =>
            {
                map
            }
            _ => {
                return Err(ConnectError::data(
                    "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.",
                ));
            }
        };
        let payload = &envelope["payload"];
        match &envelope["schema"] {
            Json::Null => Ok(SchemaAndValue::schemaless(schemaless(payload))),
            schema => {
                let schema = as_connect_schema(schema)?;
                let value = with_schema(&schema, payload)?;
                Ok(SchemaAndValue::new(Some(schema), value))
            }
        }
    }
}

impl Converter for JsonConverter {
    fn to_connect_data(
        &self,
        _topic: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        self.convert(bytes)
    }

    fn class_name(&self) -> String {
        "org.apache.kafka.connect.json.JsonConverter".to_owned()
    }
}

impl HeaderConverter for JsonConverter {
    fn to_connect_header(
        &self,
        _topic: &str,
        _key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue, ConnectError> {
        self.convert(bytes)
    }

    fn class_name(&self) -> String {
        "org.apache.kafka.connect.json.JsonConverter".to_owned()
    }
}

fn schemaless(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int64(i),
            None => Value::Float64(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(schemaless).collect()),
        Json::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::String(k.clone()), schemaless(v)))
                .collect(),
        ),
    }
}

/// Kafka's `asConnectSchema`: a JSON schema to a Connect schema.
fn as_connect_schema(json: &Json) -> Result<Schema, ConnectError> {
    let Some(kind) = json.get("type") else {
        return Err(ConnectError::data("Schema must contain 'type' field"));
    };
    let kind = kind.as_str().unwrap_or_default();
    let mut schema = match kind {
        "boolean" => Schema::boolean(),
        "int8" => Schema::int8(),
        "int16" => Schema::int16(),
        "int32" => Schema::int32(),
        "int64" => Schema::int64(),
        "float" => Schema::float32(),
        "double" => Schema::float64(),
        "bytes" => Schema::bytes(),
        "string" => Schema::string(),
        "array" => {
            let items = json.get("items").ok_or_else(|| {
                ConnectError::data("Array schema did not specify the element type")
            })?;
            Schema::array_of(as_connect_schema(items)?)
        }
        "map" => {
            let keys = json
                .get("keys")
                .ok_or_else(|| ConnectError::data("Map schema did not specify the key type"))?;
            let values = json
                .get("values")
                .ok_or_else(|| ConnectError::data("Map schema did not specify the value type"))?;
            Schema::map_of(as_connect_schema(keys)?, as_connect_schema(values)?)
        }
        "struct" => {
            let Some(Json::Array(fields)) = json.get("fields") else {
                return Err(ConnectError::data(
                    "Struct schema's \"fields\" argument is not an array.",
                ));
            };
            let mut out = Vec::with_capacity(fields.len());
            for field in fields {
                let Some(Json::String(name)) = field.get("field") else {
                    return Err(ConnectError::data(
                        "Struct schema's field name not specified properly",
                    ));
                };
                out.push(Field::new(name.clone(), as_connect_schema(field)?));
            }
            Schema::struct_of(out)
        }
        other => return Err(ConnectError::data(format!("Unknown schema type: {other}"))),
    };
    if json.get("optional").and_then(Json::as_bool) == Some(true) {
        schema.optional = true;
    }
    if let Some(Json::String(name)) = json.get("name") {
        schema.name = Some(name.clone());
    }
    Ok(schema)
}

fn mismatch(schema: &Schema, json: &Json) -> ConnectError {
    let found = match json {
        Json::Null => "NULL",
        Json::Bool(_) => "BOOLEAN",
        Json::Number(_) => "NUMBER",
        Json::String(_) => "STRING",
        Json::Array(_) => "ARRAY",
        Json::Object(_) => "OBJECT",
    };
    ConnectError::data(format!(
        "Invalid JSON for {} schema: expected a matching JSON value but found {found}",
        schema.kind
    ))
}

/// Kafka's `convertToConnect` with a schema.
fn with_schema(schema: &Schema, json: &Json) -> Result<Value, ConnectError> {
    if json.is_null() {
        return if schema.optional {
            Ok(Value::Null)
        } else {
            Err(ConnectError::data(
                "Conversion error: null value for field that is required and has no default value",
            ))
        };
    }
    let int = |json: &Json| json.as_i64().ok_or_else(|| mismatch(schema, json));
    let out_of_range = || {
        ConnectError::data(format!(
            "Invalid JSON for {} schema: {json} is out of range",
            schema.kind
        ))
    };
    Ok(match schema.kind {
        SchemaType::Boolean => {
            Value::Boolean(json.as_bool().ok_or_else(|| mismatch(schema, json))?)
        }
        SchemaType::Int8 => Value::Int8(i8::try_from(int(json)?).map_err(|_| out_of_range())?),
        SchemaType::Int16 => Value::Int16(i16::try_from(int(json)?).map_err(|_| out_of_range())?),
        SchemaType::Int32 => Value::Int32(i32::try_from(int(json)?).map_err(|_| out_of_range())?),
        SchemaType::Int64 => Value::Int64(int(json)?),
        SchemaType::Float32 => {
            Value::Float32(json.as_f64().ok_or_else(|| mismatch(schema, json))? as f32)
        }
        SchemaType::Float64 => Value::Float64(json.as_f64().ok_or_else(|| mismatch(schema, json))?),
        SchemaType::String => Value::String(
            json.as_str()
                .ok_or_else(|| mismatch(schema, json))?
                .to_owned(),
        ),
        SchemaType::Bytes => {
            let text = json.as_str().ok_or_else(|| mismatch(schema, json))?;
            Value::Bytes(
                base64_decode(text).ok_or_else(|| ConnectError::data("Invalid bytes field"))?,
            )
        }
        SchemaType::Array => {
            let Json::Array(items) = json else {
                return Err(mismatch(schema, json));
            };
            let item_schema = schema.value_schema.as_deref().unwrap_or(schema);
            Value::Array(
                items
                    .iter()
                    .map(|item| with_schema(item_schema, item))
                    .collect::<Result<_, _>>()?,
            )
        }
        SchemaType::Map => {
            let (Some(keys), Some(values)) = (&schema.key_schema, &schema.value_schema) else {
                return Err(mismatch(schema, json));
            };
            if keys.kind == SchemaType::String {
                let Json::Object(map) = json else {
                    return Err(ConnectError::data(format!(
                        "Maps with string fields should be encoded as JSON objects, but found {}",
                        node_type(json)
                    )));
                };
                Value::Map(
                    map.iter()
                        .map(|(k, v)| Ok((Value::String(k.clone()), with_schema(values, v)?)))
                        .collect::<Result<_, ConnectError>>()?,
                )
            } else {
                let Json::Array(entries) = json else {
                    return Err(ConnectError::data(format!(
                        "Maps with non-string fields should be encoded as JSON array of tuples, but found {}",
                        node_type(json)
                    )));
                };
                let mut out = Vec::with_capacity(entries.len());
                for entry in entries {
                    let Json::Array(pair) = entry else {
                        return Err(ConnectError::data(format!(
                            "Found invalid map entry instead of array tuple: {}",
                            node_type(entry)
                        )));
                    };
                    if pair.len() != 2 {
                        return Err(ConnectError::data(format!(
                            "Found invalid map entry, expected length 2 but found :{}",
                            pair.len()
                        )));
                    }
                    out.push((with_schema(keys, &pair[0])?, with_schema(values, &pair[1])?));
                }
                Value::Map(out)
            }
        }
        SchemaType::Struct => {
            let Json::Object(map) = json else {
                return Err(ConnectError::data(format!(
                    "Structs should be encoded as JSON objects, but found {}",
                    node_type(json)
                )));
            };
            let mut fields = Vec::with_capacity(schema.fields.len());
            for field in &schema.fields {
                let value =
                    with_schema(&field.schema, map.get(&field.name).unwrap_or(&Json::Null))?;
                fields.push((field.name.clone(), value));
            }
            Value::Struct(Struct { fields })
        }
    })
}

/// Jackson's `JsonNodeType` names, as Kafka's messages print them.
fn node_type(json: &Json) -> &'static str {
    match json {
        Json::Null => "NULL",
        Json::Bool(_) => "BOOLEAN",
        Json::Number(_) => "NUMBER",
        Json::String(_) => "STRING",
        Json::Array(_) => "ARRAY",
        Json::Object(_) => "OBJECT",
    }
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let sextet = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= sextet(c)? << (18 - 6 * i);
        }
        let full = acc.to_be_bytes();
        out.extend_from_slice(&full[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_envelope_and_bytes() {
        let converter = JsonConverter::new();
        let converted = converter
            .convert(Some(
                br#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"field":"b"},{"type":"string","optional":true,"field":"n"}],"optional":false,"name":"order"},"payload":{"id":1,"b":"aGk="}}"#,
            ))
            .expect("converts");
        let schema = converted.schema.expect("schema");
        assert_eq!(schema.name.as_deref(), Some("order"));
        assert_eq!(
            converted.value,
            Value::Struct(Struct::new([
                ("id", Value::Int32(1)),
                ("b", Value::Bytes(b"hi".to_vec())),
                ("n", Value::Null)
            ]))
        );
    }

    #[test]
    fn required_null_and_out_of_range_fail() {
        let converter = JsonConverter::new();
        let err = converter
            .convert(Some(br#"{"schema":{"type":"int32"},"payload":null}"#))
            .expect_err("fails");
        assert_eq!(
            err.message(),
            "Conversion error: null value for field that is required and has no default value"
        );
        let err = converter
            .convert(Some(br#"{"schema":{"type":"int8"},"payload":300}"#))
            .expect_err("fails");
        assert_eq!(
            err.message(),
            "Invalid JSON for INT8 schema: 300 is out of range"
        );
        let err = converter
            .convert(Some(br#"{"schema":{"type":"nope"},"payload":1}"#))
            .expect_err("fails");
        assert_eq!(err.message(), "Unknown schema type: nope");
        assert_eq!(
            converter.convert(None).expect("null"),
            SchemaAndValue::default()
        );
    }

    #[test]
    fn base64_round_values() {
        assert_eq!(base64_decode("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(base64_decode("aGVsbG8h"), Some(b"hello!".to_vec()));
        assert_eq!(base64_decode("a"), None);
        assert_eq!(base64_decode("**"), None);
    }
}
