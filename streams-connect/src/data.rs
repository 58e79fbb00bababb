//! Connect's data model: a [`Value`] with an optional [`Schema`], as
//! Kafka Connect's `SchemaAndValue`, `Schema` and `Struct` carry it between
//! converters, transforms and the sink task.
//!
//! A value without a schema is "schemaless" (plain JSON, a string): maps
//! stand for objects. A value with a schema is typed: a struct's fields are
//! in its schema's order.
//!
//! ```
//! use streams_connect::data::{Field, Schema, Struct, Value};
//!
//! let schema = Schema::struct_of([Field::new("id", Schema::int32())]);
//! let value = Value::Struct(Struct::new([("id", Value::Int32(7))]));
//! assert_eq!(value.get("id"), Some(&Value::Int32(7)));
//! assert_eq!(schema.field("id").map(|f| &f.schema), Some(&Schema::int32()));
//! assert_eq!(value.java_class_name(), "org.apache.kafka.connect.data.Struct");
//! ```

use std::fmt;

/// A schema's type, by Kafka Connect's `Schema.Type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// `INT8`.
    Int8,
    /// `INT16`.
    Int16,
    /// `INT32`.
    Int32,
    /// `INT64`.
    Int64,
    /// `FLOAT32`.
    Float32,
    /// `FLOAT64`.
    Float64,
    /// `BOOLEAN`.
    Boolean,
    /// `STRING`.
    String,
    /// `BYTES`.
    Bytes,
    /// `ARRAY`.
    Array,
    /// `MAP`.
    Map,
    /// `STRUCT`.
    Struct,
}

impl SchemaType {
    /// Kafka's name (`INT32`, `STRING`, ...), as error messages write it.
    pub fn name(self) -> &'static str {
        match self {
            SchemaType::Int8 => "INT8",
            SchemaType::Int16 => "INT16",
            SchemaType::Int32 => "INT32",
            SchemaType::Int64 => "INT64",
            SchemaType::Float32 => "FLOAT32",
            SchemaType::Float64 => "FLOAT64",
            SchemaType::Boolean => "BOOLEAN",
            SchemaType::String => "STRING",
            SchemaType::Bytes => "BYTES",
            SchemaType::Array => "ARRAY",
            SchemaType::Map => "MAP",
            SchemaType::Struct => "STRUCT",
        }
    }
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A field of a struct schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// The field's schema.
    pub schema: Schema,
}

impl Field {
    /// A field `name` of `schema`.
    pub fn new(name: impl Into<String>, schema: Schema) -> Self {
        Self {
            name: name.into(),
            schema,
        }
    }
}

/// A Connect schema: a type, optionality, an optional name (logical types
/// such as `org.apache.kafka.connect.data.Timestamp`), and the parts of
/// composite types.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// The type.
    pub kind: SchemaType,
    /// Whether a null value is allowed.
    pub optional: bool,
    /// The schema's name, if any.
    pub name: Option<String>,
    /// A struct's fields, in order.
    pub fields: Vec<Field>,
    /// A map's key schema.
    pub key_schema: Option<Box<Schema>>,
    /// An array's element schema, or a map's value schema.
    pub value_schema: Option<Box<Schema>>,
}

macro_rules! primitive {
    ($($(#[$doc:meta])* $name:ident $optional:ident => $kind:ident;)*) => {
        $(
            $(#[$doc])*
            pub fn $name() -> Schema { Schema::of(SchemaType::$kind) }
            #[doc = concat!("As [`Schema::", stringify!($name), "`], optional.")]
            pub fn $optional() -> Schema { Schema::of(SchemaType::$kind).optional() }
        )*
    };
}

impl Schema {
    /// A required schema of `kind` with no name.
    pub fn of(kind: SchemaType) -> Schema {
        Schema {
            kind,
            optional: false,
            name: None,
            fields: Vec::new(),
            key_schema: None,
            value_schema: None,
        }
    }

    primitive! {
        /// `INT8`.
        int8 optional_int8 => Int8;
        /// `INT16`.
        int16 optional_int16 => Int16;
        /// `INT32`.
        int32 optional_int32 => Int32;
        /// `INT64`.
        int64 optional_int64 => Int64;
        /// `FLOAT32`.
        float32 optional_float32 => Float32;
        /// `FLOAT64`.
        float64 optional_float64 => Float64;
        /// `BOOLEAN`.
        boolean optional_boolean => Boolean;
        /// `STRING`.
        string optional_string => String;
        /// `BYTES`.
        bytes optional_bytes => Bytes;
    }

    /// A struct of these fields.
    pub fn struct_of(fields: impl IntoIterator<Item = Field>) -> Schema {
        Schema {
            fields: fields.into_iter().collect(),
            ..Schema::of(SchemaType::Struct)
        }
    }

    /// An array of `items`.
    pub fn array_of(items: Schema) -> Schema {
        Schema {
            value_schema: Some(Box::new(items)),
            ..Schema::of(SchemaType::Array)
        }
    }

    /// A map from `keys` to `values`.
    pub fn map_of(keys: Schema, values: Schema) -> Schema {
        Schema {
            key_schema: Some(Box::new(keys)),
            value_schema: Some(Box::new(values)),
            ..Schema::of(SchemaType::Map)
        }
    }

    /// The same schema, optional.
    #[must_use]
    pub fn optional(mut self) -> Schema {
        self.optional = true;
        self
    }

    /// The same schema, named.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Schema {
        self.name = Some(name.into());
        self
    }

    /// A struct schema's field `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A struct value: field names and values, in the schema's field order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Struct {
    /// The fields, in order.
    pub fields: Vec<(String, Value)>,
}

impl Struct {
    /// A struct of these fields.
    pub fn new<K: Into<String>>(fields: impl IntoIterator<Item = (K, Value)>) -> Self {
        Self {
            fields: fields.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }

    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// A Connect value. `Null` is Java's `null`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// No value.
    #[default]
    Null,
    /// A boolean.
    Boolean(bool),
    /// An 8-bit integer.
    Int8(i8),
    /// A 16-bit integer.
    Int16(i16),
    /// A 32-bit integer.
    Int32(i32),
    /// A 64-bit integer.
    Int64(i64),
    /// A 32-bit float.
    Float32(f32),
    /// A 64-bit float.
    Float64(f64),
    /// A string.
    String(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// An array.
    Array(Vec<Value>),
    /// A map, in insertion order (a schemaless JSON object is a map with
    /// string keys).
    Map(Vec<(Value, Value)>),
    /// A struct.
    Struct(Struct),
}

impl Value {
    /// A string value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// The Java class Kafka Connect holds this value as, as its error
    /// messages name it (`java.lang.String`, `java.util.HashMap`, ...);
    /// `null` for [`Value::Null`].
    pub fn java_class_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Boolean(_) => "java.lang.Boolean",
            Value::Int8(_) => "java.lang.Byte",
            Value::Int16(_) => "java.lang.Short",
            Value::Int32(_) => "java.lang.Integer",
            Value::Int64(_) => "java.lang.Long",
            Value::Float32(_) => "java.lang.Float",
            Value::Float64(_) => "java.lang.Double",
            Value::String(_) => "java.lang.String",
            Value::Bytes(_) => "[B",
            Value::Array(_) => "java.util.ArrayList",
            Value::Map(_) => "java.util.HashMap",
            Value::Struct(_) => "org.apache.kafka.connect.data.Struct",
        }
    }

    /// The value of field or string key `name` of a struct or map.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(s) => s.get(name),
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::String(s) if s == name))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int32(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int64(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Boolean(v)
    }
}

/// A value and its schema (`None`: schemaless), as a converter returns
/// them: Kafka Connect's `SchemaAndValue`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaAndValue {
    /// The schema, if the format has one.
    pub schema: Option<Schema>,
    /// The value.
    pub value: Value,
}

impl SchemaAndValue {
    /// A value with a schema.
    pub fn new(schema: Option<Schema>, value: Value) -> Self {
        Self { schema, value }
    }

    /// A value without a schema.
    pub fn schemaless(value: Value) -> Self {
        Self {
            schema: None,
            value,
        }
    }
}
