//! Single message transforms (Kafka Connect's `Transformation`) and
//! predicates, with Kafka's semantics and messages: [`InsertField`],
//! [`ReplaceField`], [`Cast`], [`Filter`]; [`TopicNameMatches`],
//! [`HasHeaderKey`], [`RecordIsTombstone`]. A [`TransformStage`] runs a
//! transform only on records its predicate matches (or, with `negate`,
//! does not match), as Kafka's `TransformationStage` does.
//!
//! A transform's error is a `DataException` of stage `TRANSFORMATION`:
//! tolerated under `errors.tolerance=all`, never retried.
//!
//! ```
//! use streams_connect::data::Value;
//! use streams_connect::transforms::{Filter, InsertField, TopicNameMatches, TransformStage, Transformation};
//! use streams_connect::SinkRecord;
//!
//! let insert = InsertField::value().topic_field("source_topic").static_field("origin", "kafka");
//! let record = SinkRecord::new("orders", 0, 5, None)
//!     .with_value(None, Value::Map(vec![(Value::string("id"), Value::Int64(1))]));
//! let out = insert.apply(record.clone())?.expect("kept");
//! assert_eq!(out.value.get("source_topic"), Some(&Value::string("orders")));
//! assert_eq!(out.value.get("origin"), Some(&Value::string("kafka")));
//!
//! // A string where a map is needed: Kafka's message.
//! let text = SinkRecord::new("orders", 0, 6, None).with_value(None, Value::string("x"));
//! assert_eq!(
//!     insert.apply(text).expect_err("fails").message(),
//!     "Only Map objects supported in absence of schema for [field insertion], found: java.lang.String"
//! );
//!
//! // Filter with a predicate drops only what matches.
//! let drop_audit = TransformStage::new(Filter).with_predicate(TopicNameMatches::new("audit-.*")?, false);
//! assert!(drop_audit.apply(SinkRecord::new("audit-1", 0, 0, None))?.is_none());
//! assert!(drop_audit.apply(record)?.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::data::{Field, Schema, SchemaType, Struct, Value};
use crate::error::{ConfigError, ConnectError};
use crate::record::SinkRecord;

/// A transform of one record (`None`: drop it). See the [module docs](self).
pub trait Transformation: Send + fmt::Debug {
    /// Transforms `record`.
    ///
    /// # Errors
    /// A [`ConnectError`], normally a `DataException`.
    fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError>;

    /// The class Kafka's DLQ headers and log name for this transform;
    /// the built-ins give Kafka's Java class names (`...InsertField$Value`).
    fn class_name(&self) -> String {
        std::any::type_name::<Self>().to_owned()
    }
}

/// A condition on a record (Kafka Connect's `Predicate`).
pub trait Predicate: Send + fmt::Debug {
    /// Whether `record` matches.
    fn test(&self, record: &SinkRecord) -> bool;
}

/// A transform with an optional predicate: Kafka's `TransformationStage`.
#[derive(Debug)]
pub struct TransformStage {
    transform: Box<dyn Transformation>,
    predicate: Option<(Box<dyn Predicate>, bool)>,
}

impl TransformStage {
    /// A stage that always runs `transform`.
    pub fn new(transform: impl Transformation + 'static) -> Self {
        Self {
            transform: Box::new(transform),
            predicate: None,
        }
    }

    /// Runs the transform only where `predicate` matches (`negate`: where
    /// it does not).
    #[must_use]
    pub fn with_predicate(mut self, predicate: impl Predicate + 'static, negate: bool) -> Self {
        self.predicate = Some((Box::new(predicate), negate));
        self
    }

    /// The transform's class name.
    pub fn class_name(&self) -> String {
        self.transform.class_name()
    }

    /// Applies the transform if the predicate allows, else passes the
    /// record on unchanged.
    ///
    /// # Errors
    /// The transform's.
    pub fn apply(&self, record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        if let Some((predicate, negate)) = &self.predicate
            && predicate.test(&record) == *negate
        {
            return Ok(Some(record));
        }
        self.transform.apply(record)
    }
}

/// Which part of the record a transform works on (Kafka's `$Key` and
/// `$Value` classes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The key.
    Key,
    /// The value.
    Value,
}

impl Target {
    fn suffix(self) -> &'static str {
        match self {
            Target::Key => "$Key",
            Target::Value => "$Value",
        }
    }

    fn get(self, record: &SinkRecord) -> (&Option<Schema>, &Value) {
        match self {
            Target::Key => (&record.key_schema, &record.key),
            Target::Value => (&record.value_schema, &record.value),
        }
    }

    fn set(self, record: &mut SinkRecord, schema: Option<Schema>, value: Value) {
        match self {
            Target::Key => {
                record.key_schema = schema;
                record.key = value;
            }
            Target::Value => {
                record.value_schema = schema;
                record.value = value;
            }
        }
    }
}

fn require_map<'a>(
    value: &'a Value,
    purpose: &str,
) -> Result<&'a Vec<(Value, Value)>, ConnectError> {
    match value {
        Value::Map(entries) => Ok(entries),
        other => Err(ConnectError::data(format!(
            "Only Map objects supported in absence of schema for [{purpose}], found: {}",
            other.java_class_name()
        ))),
    }
}

fn require_struct<'a>(value: &'a Value, purpose: &str) -> Result<&'a Struct, ConnectError> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "Only Struct objects supported for [{purpose}], found: {}",
            other.java_class_name()
        ))),
    }
}

fn map_put(entries: &mut Vec<(Value, Value)>, key: &str, value: Value) {
    match entries
        .iter_mut()
        .find(|(k, _)| matches!(k, Value::String(s) if s == key))
    {
        Some(entry) => entry.1 = value,
        None => entries.push((Value::string(key), value)),
    }
}

/// Kafka's `InsertField`: adds the record's topic, partition, offset,
/// timestamp or a static value as fields of the key or value (a map
/// without a schema, a struct with one, whose schema gains optional
/// fields). The timestamp is the epoch millisecond as an `INT64` (Kafka
/// inserts a `java.util.Date`, with the `Timestamp` logical schema).
#[derive(Debug, Clone, Default)]
pub struct InsertField {
    target: Option<Target>,
    topic: Option<String>,
    partition: Option<String>,
    offset: Option<String>,
    timestamp: Option<String>,
    static_field: Option<(String, String)>,
}

impl InsertField {
    /// `InsertField$Value`.
    pub fn value() -> Self {
        Self {
            target: Some(Target::Value),
            ..Self::default()
        }
    }

    /// `InsertField$Key`.
    pub fn key() -> Self {
        Self {
            target: Some(Target::Key),
            ..Self::default()
        }
    }

    /// `topic.field`.
    #[must_use]
    pub fn topic_field(mut self, field: impl Into<String>) -> Self {
        self.topic = Some(field.into());
        self
    }

    /// `partition.field`.
    #[must_use]
    pub fn partition_field(mut self, field: impl Into<String>) -> Self {
        self.partition = Some(field.into());
        self
    }

    /// `offset.field`.
    #[must_use]
    pub fn offset_field(mut self, field: impl Into<String>) -> Self {
        self.offset = Some(field.into());
        self
    }

    /// `timestamp.field`.
    #[must_use]
    pub fn timestamp_field(mut self, field: impl Into<String>) -> Self {
        self.timestamp = Some(field.into());
        self
    }

    /// `static.field` and `static.value`.
    #[must_use]
    pub fn static_field(mut self, field: impl Into<String>, value: impl Into<String>) -> Self {
        self.static_field = Some((field.into(), value.into()));
        self
    }

    /// Checks the configuration as Kafka's `configure` does.
    ///
    /// # Errors
    /// `No field insertion configured` when no field is set.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.topic.is_none()
            && self.partition.is_none()
            && self.offset.is_none()
            && self.timestamp.is_none()
            && self.static_field.is_none()
        {
            return Err(ConfigError::Transform {
                message: "No field insertion configured".to_owned(),
            });
        }
        Ok(())
    }

    fn inserts(&self, record: &SinkRecord) -> Vec<(String, Schema, Value)> {
        let mut out = Vec::new();
        if let Some(f) = &self.topic {
            out.push((
                f.clone(),
                Schema::optional_string(),
                Value::string(&record.topic),
            ));
        }
        if let Some(f) = &self.partition {
            out.push((
                f.clone(),
                Schema::optional_int32(),
                Value::Int32(record.kafka_partition),
            ));
        }
        if let Some(f) = &self.offset {
            out.push((
                f.clone(),
                Schema::optional_int64(),
                Value::Int64(record.kafka_offset),
            ));
        }
        if let Some(f) = &self.timestamp {
            out.push((
                f.clone(),
                Schema::optional_int64().named("org.apache.kafka.connect.data.Timestamp"),
                record.timestamp.map_or(Value::Null, Value::Int64),
            ));
        }
        if let Some((f, v)) = &self.static_field {
            out.push((f.clone(), Schema::optional_string(), Value::string(v)));
        }
        out
    }
}

impl Transformation for InsertField {
    fn apply(&self, mut record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        let target = self.target.unwrap_or(Target::Value);
        let inserts = self.inserts(&record);
        let (schema, value) = target.get(&record);
        if value == &Value::Null && schema.is_none() {
            return Ok(Some(record));
        }
        let (schema, value) = match schema {
            None => {
                let mut entries = require_map(value, "field insertion")?.clone();
                for (name, _, v) in inserts {
                    map_put(&mut entries, &name, v);
                }
                (None, Value::Map(entries))
            }
            Some(schema) => {
                if value == &Value::Null {
                    return Ok(Some(record));
                }
                let mut fields = require_struct(value, "field insertion")?.fields.clone();
                let mut schema = schema.clone();
                for (name, field_schema, v) in inserts {
                    schema.fields.push(Field::new(name.clone(), field_schema));
                    fields.push((name, v));
                }
                (Some(schema), Value::Struct(Struct { fields }))
            }
        };
        target.set(&mut record, schema, value);
        Ok(Some(record))
    }

    fn class_name(&self) -> String {
        format!(
            "org.apache.kafka.connect.transforms.InsertField{}",
            self.target.unwrap_or(Target::Value).suffix()
        )
    }
}

/// Kafka's `ReplaceField`: drops fields (`exclude`), keeps only some
/// (`include`), and renames (`renames`, `old:new`), on a map or struct.
#[derive(Debug, Clone)]
pub struct ReplaceField {
    target: Target,
    exclude: Vec<String>,
    include: Vec<String>,
    renames: BTreeMap<String, String>,
}

impl ReplaceField {
    /// `ReplaceField$Value`.
    pub fn value() -> Self {
        Self::of(Target::Value)
    }

    /// `ReplaceField$Key`.
    pub fn key() -> Self {
        Self::of(Target::Key)
    }

    fn of(target: Target) -> Self {
        Self {
            target,
            exclude: Vec::new(),
            include: Vec::new(),
            renames: BTreeMap::new(),
        }
    }

    /// `exclude`.
    #[must_use]
    pub fn exclude<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.exclude = fields.into_iter().map(Into::into).collect();
        self
    }

    /// `include`.
    #[must_use]
    pub fn include<S: Into<String>>(mut self, fields: impl IntoIterator<Item = S>) -> Self {
        self.include = fields.into_iter().map(Into::into).collect();
        self
    }

    /// `renames`, in Kafka's form: `old:new,old2:new2`.
    ///
    /// # Errors
    /// `Invalid rename mapping: x` for an entry that is not `old:new`.
    pub fn renames(mut self, mappings: &str) -> Result<Self, ConfigError> {
        for mapping in mappings.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            let parts: Vec<&str> = mapping.split(':').collect();
            if parts.len() != 2 {
                return Err(ConfigError::Invalid {
                    name: "renames".to_owned(),
                    value: mappings.to_owned(),
                    message: format!("Invalid rename mapping: {mapping}"),
                });
            }
            self.renames
                .insert(parts[0].to_owned(), parts[1].to_owned());
        }
        Ok(self)
    }

    fn keeps(&self, field: &str) -> bool {
        !self.exclude.iter().any(|f| f == field)
            && (self.include.is_empty() || self.include.iter().any(|f| f == field))
    }

    fn renamed<'a>(&'a self, field: &'a str) -> &'a str {
        self.renames.get(field).map_or(field, String::as_str)
    }
}

impl Transformation for ReplaceField {
    fn apply(&self, mut record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        let (schema, value) = self.target.get(&record);
        if value == &Value::Null {
            return Ok(Some(record));
        }
        let (schema, value) = match schema {
            None => {
                let entries = require_map(value, "field replacement")?;
                let kept = entries
                    .iter()
                    .filter_map(|(k, v)| {
                        let name = k.as_str()?;
                        self.keeps(name)
                            .then(|| (Value::string(self.renamed(name)), v.clone()))
                    })
                    .collect();
                (None, Value::Map(kept))
            }
            Some(schema) => {
                let s = require_struct(value, "field replacement")?;
                let mut new_schema = Schema {
                    fields: Vec::new(),
                    ..schema.clone()
                };
                let mut fields = Vec::new();
                for field in &schema.fields {
                    if self.keeps(&field.name) {
                        let name = self.renamed(&field.name).to_owned();
                        new_schema
                            .fields
                            .push(Field::new(name.clone(), field.schema.clone()));
                        fields.push((name, s.get(&field.name).cloned().unwrap_or_default()));
                    }
                }
                (Some(new_schema), Value::Struct(Struct { fields }))
            }
        };
        self.target.set(&mut record, schema, value);
        Ok(Some(record))
    }

    fn class_name(&self) -> String {
        format!(
            "org.apache.kafka.connect.transforms.ReplaceField{}",
            self.target.suffix()
        )
    }
}

/// Kafka's `Cast`: casts the whole key or value, or fields of it, to a
/// primitive type (`int8` ... `float64`, `boolean`, `string`), with Kafka's
/// `spec` syntax (`int32` for the whole value, `age:int32,name:string` for
/// fields) and messages.
#[derive(Debug, Clone)]
pub struct Cast {
    target: Target,
    whole: Option<SchemaType>,
    fields: BTreeMap<String, SchemaType>,
}

fn cast_type(name: &str) -> Result<SchemaType, ConfigError> {
    Ok(match name.trim().to_ascii_lowercase().as_str() {
        "int8" => SchemaType::Int8,
        "int16" => SchemaType::Int16,
        "int32" => SchemaType::Int32,
        "int64" => SchemaType::Int64,
        "float32" => SchemaType::Float32,
        "float64" => SchemaType::Float64,
        "boolean" => SchemaType::Boolean,
        "string" => SchemaType::String,
        _ => {
            return Err(ConfigError::Transform {
                message: format!("Invalid type found in casting spec: {}", name.trim()),
            });
        }
    })
}

impl Cast {
    /// `Cast$Value` with this `spec`.
    ///
    /// # Errors
    /// Kafka's `ConfigException` messages for a bad spec.
    pub fn value(spec: &str) -> Result<Self, ConfigError> {
        Self::parse(Target::Value, spec)
    }

    /// `Cast$Key` with this `spec`.
    ///
    /// # Errors
    /// As [`Cast::value`].
    pub fn key(spec: &str) -> Result<Self, ConfigError> {
        Self::parse(Target::Key, spec)
    }

    fn parse(target: Target, spec: &str) -> Result<Self, ConfigError> {
        let mut whole = None;
        let mut fields = BTreeMap::new();
        let entries: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if entries.is_empty() {
            return Err(ConfigError::Transform {
                message: "Must specify at least one field to cast.".to_owned(),
            });
        }
        for entry in &entries {
            match entry.split_once(':') {
                None => whole = Some(cast_type(entry)?),
                Some((field, kind)) => {
                    fields.insert(field.trim().to_owned(), cast_type(kind)?);
                }
            }
        }
        if whole.is_some() && entries.len() > 1 {
            return Err(ConfigError::Transform {
                message: "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec".to_owned(),
            });
        }
        Ok(Self {
            target,
            whole,
            fields,
        })
    }
}

fn java_double(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// The types Cast reads, as Kafka's `SUPPORTED_CAST_INPUT_TYPES` (an
/// `EnumSet`) prints them.
const CAST_INPUT_TYPES: &str =
    "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]";

/// Java's `NumberFormatException` message for `text` parsed as `to`
/// (`Byte.parseByte`, `Integer.parseInt`, `Double.parseDouble`, ...).
fn number_format_message(text: &str, to: SchemaType) -> String {
    match to {
        SchemaType::Int8 | SchemaType::Int16 if text.parse::<i32>().is_ok() => {
            format!("Value out of range. Value:\"{text}\" Radix:10")
        }
        SchemaType::Float32 | SchemaType::Float64 if text.trim().is_empty() => {
            "empty String".to_owned()
        }
        _ => format!("For input string: \"{text}\""),
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn cast_value(value: &Value, to: SchemaType) -> Result<Value, ConnectError> {
    let out_of_range = |text: &str| {
        ConnectError::data(format!(
            "Value ({text}) was out of range for requested data type"
        ))
        .caused_by(
            "java.lang.NumberFormatException",
            number_format_message(text, to),
        )
    };
    let as_f64 = |v: &Value| -> Option<f64> {
        Some(match v {
            Value::Int8(n) => f64::from(*n),
            Value::Int16(n) => f64::from(*n),
            Value::Int32(n) => f64::from(*n),
            Value::Int64(n) => *n as f64,
            Value::Float32(n) => f64::from(*n),
            Value::Float64(n) => *n,
            Value::Boolean(b) => f64::from(u8::from(*b)),
            _ => return None,
        })
    };
    let as_i64 = |v: &Value| -> Option<i64> {
        Some(match v {
            Value::Int8(n) => i64::from(*n),
            Value::Int16(n) => i64::from(*n),
            Value::Int32(n) => i64::from(*n),
            Value::Int64(n) => *n,
            Value::Float32(n) => *n as i64,
            Value::Float64(n) => *n as i64,
            Value::Boolean(b) => i64::from(*b),
            _ => return None,
        })
    };
    match value {
        Value::Null => return Ok(Value::Null),
        Value::Array(_) | Value::Map(_) | Value::Struct(_) => {
            return Err(ConnectError::data(format!(
                "Cast transformation does not support casting from {}; supported types are {CAST_INPUT_TYPES}",
                match value {
                    Value::Array(_) => "ARRAY",
                    Value::Map(_) => "MAP",
                    _ => "STRUCT",
                }
            )));
        }
        // Kafka reads bytes, but casts them only to a string (base64).
        Value::Bytes(bytes) if to == SchemaType::String => {
            return Ok(Value::String(base64_encode(bytes)));
        }
        _ => {}
    }
    if let Value::String(text) = value {
        let t = text.as_str();
        return Ok(match to {
            SchemaType::Int8 => Value::Int8(t.parse().map_err(|_| out_of_range(t))?),
            SchemaType::Int16 => Value::Int16(t.parse().map_err(|_| out_of_range(t))?),
            SchemaType::Int32 => Value::Int32(t.parse().map_err(|_| out_of_range(t))?),
            SchemaType::Int64 => Value::Int64(t.parse().map_err(|_| out_of_range(t))?),
            SchemaType::Float32 => Value::Float32(t.trim().parse().map_err(|_| out_of_range(t))?),
            SchemaType::Float64 => Value::Float64(t.trim().parse().map_err(|_| out_of_range(t))?),
            SchemaType::Boolean => Value::Boolean(t.eq_ignore_ascii_case("true")),
            _ => Value::String(text.clone()),
        });
    }
    let unexpected = || {
        ConnectError::data(format!(
            "Unexpected type in Cast transformation: class {}",
            value.java_class_name()
        ))
    };
    Ok(match to {
        SchemaType::Int8 => Value::Int8(as_i64(value).ok_or_else(unexpected)? as i8),
        SchemaType::Int16 => Value::Int16(as_i64(value).ok_or_else(unexpected)? as i16),
        SchemaType::Int32 => Value::Int32(as_i64(value).ok_or_else(unexpected)? as i32),
        SchemaType::Int64 => Value::Int64(as_i64(value).ok_or_else(unexpected)?),
        SchemaType::Float32 => Value::Float32(as_f64(value).ok_or_else(unexpected)? as f32),
        SchemaType::Float64 => Value::Float64(as_f64(value).ok_or_else(unexpected)?),
        SchemaType::Boolean => Value::Boolean(match value {
            Value::Boolean(b) => *b,
            other => as_f64(other).ok_or_else(unexpected)? != 0.0,
        }),
        _ => Value::String(match value {
            Value::Boolean(b) => b.to_string(),
            Value::Float32(f) => java_double(f64::from(*f)),
            Value::Float64(f) => java_double(*f),
            other => as_i64(other).ok_or_else(unexpected)?.to_string(),
        }),
    })
}

fn cast_schema(schema: &Schema, to: SchemaType) -> Schema {
    Schema {
        kind: to,
        optional: schema.optional,
        ..Schema::of(to)
    }
}

impl Transformation for Cast {
    fn apply(&self, mut record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        let (schema, value) = self.target.get(&record);
        if value == &Value::Null {
            return Ok(Some(record));
        }
        let (schema, value) = match (self.whole, schema) {
            (Some(to), schema) => (
                schema.as_ref().map(|s| cast_schema(s, to)),
                cast_value(value, to)?,
            ),
            (None, None) => {
                let mut entries = require_map(value, "cast types")?.clone();
                for (field, to) in &self.fields {
                    let current = value.get(field).cloned().unwrap_or_default();
                    map_put(&mut entries, field, cast_value(&current, *to)?);
                }
                (None, Value::Map(entries))
            }
            (None, Some(schema)) => {
                let s = require_struct(value, "cast types")?;
                let mut new_schema = schema.clone();
                let mut fields = s.fields.clone();
                for field in &mut new_schema.fields {
                    if let Some(to) = self.fields.get(&field.name) {
                        field.schema = cast_schema(&field.schema, *to);
                    }
                }
                for (name, v) in &mut fields {
                    if let Some(to) = self.fields.get(name) {
                        *v = cast_value(v, *to)?;
                    }
                }
                (Some(new_schema), Value::Struct(Struct { fields }))
            }
        };
        self.target.set(&mut record, schema, value);
        Ok(Some(record))
    }

    fn class_name(&self) -> String {
        format!(
            "org.apache.kafka.connect.transforms.Cast{}",
            self.target.suffix()
        )
    }
}

/// Kafka's `Filter`: drops every record it sees. Give it a predicate
/// ([`TransformStage::with_predicate`]) to drop only some.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter;

impl Transformation for Filter {
    fn apply(&self, _record: SinkRecord) -> Result<Option<SinkRecord>, ConnectError> {
        Ok(None)
    }

    fn class_name(&self) -> String {
        "org.apache.kafka.connect.transforms.Filter".to_owned()
    }
}

/// Kafka's `TopicNameMatches`: the whole topic name matches `pattern`.
#[derive(Debug, Clone)]
pub struct TopicNameMatches {
    pattern: regex_lite::Regex,
}

impl TopicNameMatches {
    /// Matches topics that `pattern` (a regular expression) matches whole.
    ///
    /// # Errors
    /// An invalid pattern.
    pub fn new(pattern: &str) -> Result<Self, ConfigError> {
        regex_lite::Regex::new(&format!("^(?:{pattern})$"))
            .map(|pattern| Self { pattern })
            .map_err(|e| ConfigError::Invalid {
                name: "pattern".to_owned(),
                value: pattern.to_owned(),
                message: format!("entry must be a valid regular expression: {e}"),
            })
    }
}

impl Predicate for TopicNameMatches {
    fn test(&self, record: &SinkRecord) -> bool {
        self.pattern.is_match(&record.topic)
    }
}

/// Kafka's `HasHeaderKey`: the record has a header of this key.
#[derive(Debug, Clone)]
pub struct HasHeaderKey {
    name: String,
}

impl HasHeaderKey {
    /// Matches records with a header `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

impl Predicate for HasHeaderKey {
    fn test(&self, record: &SinkRecord) -> bool {
        record.headers.iter().any(|h| h.key == self.name)
    }
}

/// Kafka's `RecordIsTombstone`: the value is null.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordIsTombstone;

impl Predicate for RecordIsTombstone {
    fn test(&self, record: &SinkRecord) -> bool {
        record.value == Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_struct() -> SinkRecord {
        let schema = Schema::struct_of([
            Field::new("id", Schema::int64()),
            Field::new("age", Schema::string()),
            Field::new("secret", Schema::string()),
        ]);
        SinkRecord::new("people", 1, 9, Some(5)).with_value(
            Some(schema),
            Value::Struct(Struct::new([
                ("id", Value::Int64(1)),
                ("age", Value::string("42")),
                ("secret", Value::string("x")),
            ])),
        )
    }

    #[test]
    fn replace_field_on_struct_and_map() -> Result<(), Box<dyn std::error::Error>> {
        let replace = ReplaceField::value()
            .exclude(["secret"])
            .renames("id:person_id")?;
        let out = replace.apply(with_struct())?.ok_or("dropped")?;
        let schema = out.value_schema.ok_or("schema")?;
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["person_id", "age"]);
        assert_eq!(out.value.get("person_id"), Some(&Value::Int64(1)));
        let map = SinkRecord::new("t", 0, 0, None).with_value(
            None,
            Value::Map(vec![
                (Value::string("a"), Value::Int64(1)),
                (Value::string("b"), Value::Int64(2)),
            ]),
        );
        let only_b = ReplaceField::value()
            .include(["b"])
            .apply(map)?
            .ok_or("dropped")?;
        assert_eq!(
            only_b.value,
            Value::Map(vec![(Value::string("b"), Value::Int64(2))])
        );
        assert_eq!(
            ReplaceField::value()
                .renames("a")
                .expect_err("fails")
                .to_string(),
            "Invalid value a for configuration renames: Invalid rename mapping: a"
        );
        Ok(())
    }

    #[test]
    fn cast_fields_whole_values_and_failures() -> Result<(), Box<dyn std::error::Error>> {
        let out = Cast::value("age:int32")?
            .apply(with_struct())?
            .ok_or("dropped")?;
        assert_eq!(out.value.get("age"), Some(&Value::Int32(42)));
        assert_eq!(
            out.value_schema
                .and_then(|s| s.field("age").map(|f| f.schema.kind)),
            Some(SchemaType::Int32)
        );
        let whole = SinkRecord::new("t", 0, 0, None).with_value(None, Value::Float64(2.0));
        let out = Cast::value("string")?.apply(whole)?.ok_or("dropped")?;
        assert_eq!(out.value, Value::string("2.0"));
        let bad = SinkRecord::new("t", 0, 0, None).with_value(None, Value::string("abc"));
        let error = Cast::value("int32")?.apply(bad).expect_err("fails");
        assert_eq!(
            error.message(),
            "Value (abc) was out of range for requested data type"
        );
        assert_eq!(
            error.cause(),
            Some((
                "java.lang.NumberFormatException",
                "For input string: \"abc\""
            ))
        );
        let byte = SinkRecord::new("t", 0, 0, None).with_value(None, Value::string("300"));
        assert_eq!(
            Cast::value("int8")?
                .apply(byte)
                .expect_err("fails")
                .cause()
                .map(|c| c.1),
            Some("Value out of range. Value:\"300\" Radix:10")
        );
        Ok(())
    }

    /// Kafka 4.4.0 (compat/connect/golden/transformation_cast_whole_map.json,
    /// transformation_cast_bytes_to_*.json): Cast reads bytes, casting them to
    /// a string only (base64), and names the types it reads as an EnumSet.
    #[test]
    fn cast_reads_bytes_and_lists_kafkas_input_types() -> Result<(), Box<dyn std::error::Error>> {
        let bytes = |b: &[u8]| {
            SinkRecord::new("t", 0, 0, None)
                .with_value(Some(Schema::bytes()), Value::Bytes(b.to_vec()))
        };
        for (raw, encoded) in [
            (&b"hi"[..], "aGk="),
            (b"h", "aA=="),
            (b"hi!", "aGkh"),
            (b"", ""),
        ] {
            let out = Cast::value("string")?.apply(bytes(raw))?.ok_or("dropped")?;
            assert_eq!(out.value, Value::string(encoded));
            assert_eq!(out.value_schema.map(|s| s.kind), Some(SchemaType::String));
        }
        assert_eq!(
            Cast::value("int32")?
                .apply(bytes(b"hi"))
                .expect_err("fails")
                .message(),
            "Unexpected type in Cast transformation: class [B"
        );
        let map = SinkRecord::new("t", 0, 0, None).with_value(None, Value::Map(vec![]));
        assert_eq!(
            Cast::value("int32")?
                .apply(map)
                .expect_err("fails")
                .message(),
            "Cast transformation does not support casting from MAP; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"
        );
        Ok(())
    }

    #[test]
    fn cast_spec_errors() {
        assert_eq!(
            Cast::value("age:decimal").expect_err("fails").to_string(),
            "Invalid type found in casting spec: decimal"
        );
        assert_eq!(
            Cast::value("").expect_err("fails").to_string(),
            "Must specify at least one field to cast."
        );
    }

    #[test]
    fn insert_field_on_struct_and_predicates() -> Result<(), Box<dyn std::error::Error>> {
        let insert = InsertField::value()
            .offset_field("off")
            .partition_field("p");
        let out = insert.apply(with_struct())?.ok_or("dropped")?;
        assert_eq!(out.value.get("off"), Some(&Value::Int64(9)));
        assert_eq!(out.value.get("p"), Some(&Value::Int32(1)));
        assert_eq!(
            insert.class_name(),
            "org.apache.kafka.connect.transforms.InsertField$Value"
        );
        assert_eq!(
            InsertField::value()
                .validate()
                .expect_err("fails")
                .to_string(),
            "No field insertion configured"
        );
        let keep_tombstones = TransformStage::new(Filter).with_predicate(RecordIsTombstone, true);
        assert!(
            keep_tombstones
                .apply(SinkRecord::new("t", 0, 0, None))?
                .is_some()
        );
        assert!(keep_tombstones.apply(with_struct())?.is_none());
        let flagged = TransformStage::new(Filter).with_predicate(HasHeaderKey::new("skip"), false);
        let record = with_struct().with_header("skip", None, Value::Null);
        assert!(flagged.apply(record)?.is_none());
        Ok(())
    }
}
