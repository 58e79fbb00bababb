//! Avro: `serde` types as Avro binary data, raw or in Confluent's wire format.
//!
//! - [`AvroSerde`] writes a bare Avro datum (no container-file header, no
//!   schema id) with one fixed schema, for topics whose producers and
//!   consumers agree on the schema out of band.
//! - [`ConfluentAvroSerde`] writes what Confluent's `KafkaAvroSerializer`
//!   writes: the magic byte `0`, the schema id as 4 bytes big-endian, then
//!   the Avro datum. Schemas live in a [`MockSchemaRegistry`], the in-memory
//!   registry that Java tests get from a `mock://` schema registry URL.
//!   Reading resolves the writer's schema (found by the id in the data) to
//!   the serde's own reader schema, so schemas can evolve as Avro allows.
//!
//! Values go through `apache_avro::to_value` and `apache_avro::from_value`:
//! a Rust struct is an Avro record with fields of the same names, an
//! `Option` is a union with `"null"`, a unit-only enum is an Avro enum.
//! Anything that does not fit the schema (including a `long` too big for an
//! `int` field, which `apache-avro` alone would truncate), and any truncated
//! or corrupt data, is a [`SerdeError`], never a panic.
//!
//! Avro maps are written in no fixed order (`apache-avro` holds them in a
//! `HashMap`), so a value with a map of two or more entries may give
//! different bytes each time it is serialized; it still reads back the
//! same. Avoid such maps in keys, whose bytes choose the partition.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use streams_core::serde::{AvroSerde, ConfluentAvroSerde, MockSchemaRegistry, Serde};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct Order {
//!     id: i64,
//!     item: String,
//! }
//!
//! const SCHEMA: &str = r#"{"type": "record", "name": "Order", "fields": [
//!     {"name": "id", "type": "long"},
//!     {"name": "item", "type": "string"}
//! ]}"#;
//!
//! // A bare datum: zig-zag varint 7 (0x0e), then the string's length 3 (0x06) and bytes.
//! let raw = AvroSerde::<Order>::parse(SCHEMA)?;
//! let order = Order { id: 7, item: "tea".into() };
//! assert_eq!(raw.serialize("orders", &order)?, [0x0e, 0x06, b't', b'e', b'a']);
//!
//! // Confluent's wire format: magic byte, schema id 1, the same datum.
//! let registry = MockSchemaRegistry::new();
//! let confluent = ConfluentAvroSerde::<Order>::value_json(&registry, SCHEMA)?;
//! let bytes = confluent.serialize("orders", &order)?;
//! assert_eq!(bytes, [0, 0, 0, 0, 1, 0x0e, 0x06, b't', b'e', b'a']);
//! assert_eq!(registry.subjects(), ["orders-value"]);
//! assert_eq!(confluent.deserialize("orders", &bytes)?, order);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::any::type_name;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use apache_avro::Schema;
use apache_avro::schema::{ResolvedSchema, SchemaKind};
use apache_avro::types::Value;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Serde, SerdeError};

/// The first byte of Confluent's wire format.
const MAGIC_BYTE: u8 = 0;

/// The magic byte and the 4-byte schema id.
const HEADER_LEN: usize = 5;

fn parse_schema(schema_json: &str) -> Result<Schema, SerdeError> {
    Schema::parse_str(schema_json).map_err(|e| SerdeError::new(format!("invalid Avro schema: {e}")))
}

/// The text that identifies a schema in the registry: its full JSON form,
/// which (unlike the parsing canonical form) keeps defaults, so schemas that
/// differ only in a default get different ids, as in Confluent's registry.
fn schema_text(schema: &Schema) -> String {
    serde_json::to_string(schema).unwrap_or_else(|_| format!("{schema:?}"))
}

/// A short name for a schema in messages: the full name of a named schema,
/// the JSON of any other.
fn schema_label(schema: &Schema) -> String {
    match schema.name() {
        Some(name) => format!("`{}`", name.fullname(None)),
        None => schema_text(schema),
    }
}

/// Runs `f`, turning a panic inside it (in `apache-avro` or in a `serde`
/// implementation) into an error, so that no input makes a serde panic.
fn catch_panic<R>(
    context: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<R, SerdeError>,
) -> Result<R, SerdeError> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Err(SerdeError::new(format!(
            "{}: panicked: {reason}",
            context()
        )))
    })
}

/// An integer that does not fit where the schema puts it, and where.
struct Narrowing {
    /// Path segments, innermost first.
    path: Vec<String>,
    value: i64,
}

impl Narrowing {
    fn describe(mut self) -> String {
        self.path.reverse();
        let place = if self.path.is_empty() {
            String::new()
        } else {
            format!(" in field `{}`", self.path.concat().trim_start_matches('.'))
        };
        format!(
            "the long {}{place} does not fit the schema's int",
            self.value
        )
    }
}

/// Finds a `long` where the schema has an `int` that cannot hold it.
///
/// `apache-avro` resolves such a long to an int by truncating it (writing
/// `2^40` as `0`), so the serdes check first and report an error instead.
struct RangeCheck<'s> {
    root: &'s Schema,
    names: OnceCell<Option<ResolvedSchema<'s>>>,
}

impl<'s> RangeCheck<'s> {
    fn run(value: &Value, schema: &'s Schema) -> Result<(), String> {
        let check = RangeCheck {
            root: schema,
            names: OnceCell::new(),
        };
        check.check(value, schema, 0).map_err(Narrowing::describe)
    }

    fn lookup(&self, schema: &'s Schema) -> Option<&'s Schema> {
        match schema {
            Schema::Ref { name } => {
                let names = self
                    .names
                    .get_or_init(|| ResolvedSchema::try_from(self.root).ok());
                names.as_ref()?.get_names().get(name).copied()
            }
            other => Some(other),
        }
    }

    fn check(&self, value: &Value, schema: &'s Schema, depth: usize) -> Result<(), Narrowing> {
        // Recursive schemas nest values, not schemas; values are finite, but
        // keep the stack bounded all the same.
        if depth > 1_000 {
            return Ok(());
        }
        let Some(schema) = self.lookup(schema) else {
            return Ok(());
        };
        let inner = |segment: String, value: &Value, schema: &'s Schema| {
            self.check(value, schema, depth + 1).map_err(|mut n| {
                n.path.push(segment);
                n
            })
        };
        match (value, schema) {
            (Value::Union(_, value), _) => self.check(value, schema, depth + 1),
            (Value::Long(n), Schema::Int | Schema::Date | Schema::TimeMillis) => {
                if i32::try_from(*n).is_ok() {
                    Ok(())
                } else {
                    Err(Narrowing {
                        path: Vec::new(),
                        value: *n,
                    })
                }
            }
            (_, Schema::Union(union)) => {
                // The branch resolution picks: the one of the value's own
                // kind, else the first that can take it.
                let kind = SchemaKind::from(value);
                let branches = union.variants();
                let own = branches
                    .iter()
                    .find(|b| self.lookup(b).is_some_and(|b| SchemaKind::from(b) == kind));
                let branch = own.or_else(|| match value {
                    Value::Long(_) => branches.iter().find(|b| {
                        matches!(
                            self.lookup(b).map(SchemaKind::from),
                            Some(
                                SchemaKind::Int
                                    | SchemaKind::Date
                                    | SchemaKind::TimeMillis
                                    | SchemaKind::Float
                                    | SchemaKind::Double
                            )
                        )
                    }),
                    _ => None,
                });
                match branch {
                    Some(branch) => self.check(value, branch, depth + 1),
                    None => Ok(()),
                }
            }
            (Value::Record(fields), Schema::Record(record)) => {
                for (name, value) in fields {
                    if let Some(field) = record.lookup.get(name).and_then(|&i| record.fields.get(i))
                    {
                        inner(format!(".{name}"), value, &field.schema)?;
                    }
                }
                Ok(())
            }
            (Value::Array(items), Schema::Array(array)) => {
                for (i, value) in items.iter().enumerate() {
                    inner(format!("[{i}]"), value, &array.items)?;
                }
                Ok(())
            }
            (Value::Map(entries), Schema::Map(map)) => {
                for (key, value) in entries {
                    inner(format!("[{key:?}]"), value, &map.types)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Turns a value into an Avro datum of `schema`.
fn encode<T: Serialize>(schema: &Schema, value: &T) -> Result<Vec<u8>, SerdeError> {
    let context = || {
        format!(
            "cannot write a value of type `{}` as Avro with schema {}",
            type_name::<T>(),
            schema_label(schema)
        )
    };
    catch_panic(context, || {
        let value = apache_avro::to_value(value).map_err(|e| {
            SerdeError::new(format!(
                "cannot convert a value of type `{}` to Avro: {e}",
                type_name::<T>()
            ))
        })?;
        let mismatch = |reason: &dyn fmt::Display| {
            SerdeError::new(format!(
                "a value of type `{}` does not match the Avro schema {}: {reason}",
                type_name::<T>(),
                schema_label(schema)
            ))
        };
        RangeCheck::run(&value, schema).map_err(|e| mismatch(&e))?;
        let value = value.resolve(schema).map_err(|e| mismatch(&e))?;
        apache_avro::to_avro_datum(schema, value)
            .map_err(|e| SerdeError::new(format!("{}: {e}", context())))
    })
}

/// Reads from a slice and notes whether a read ever asked for more bytes
/// than were left.
///
/// `apache-avro` decodes a string cut short by the end of the data as a
/// null instead of failing; this is how the serdes notice.
struct EndTracker<'a> {
    rest: &'a [u8],
    ran_out: bool,
}

impl Read for EndTracker<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.len() > self.rest.len() {
            self.ran_out = true;
        }
        self.rest.read(buf)
    }
}

/// Reads one Avro datum written with `writer`, resolves it to `reader` if
/// given, and converts it to `T`. All of `bytes` must be the datum.
fn decode<T: DeserializeOwned>(
    writer: &Schema,
    reader: Option<&Schema>,
    bytes: &[u8],
    writer_desc: impl Fn() -> String,
) -> Result<T, SerdeError> {
    let context = || {
        format!(
            "cannot read Avro data with {} as type `{}`",
            writer_desc(),
            type_name::<T>()
        )
    };
    catch_panic(context, || {
        let mut input = EndTracker {
            rest: bytes,
            ran_out: false,
        };
        let decoded = apache_avro::from_avro_datum(writer, &mut input, None);
        if input.ran_out {
            return Err(SerdeError::new(format!(
                "cannot read Avro data with {}: the data ends after {} byte{}, in the middle of a value; \
                 the data is truncated or was not written with this schema",
                writer_desc(),
                bytes.len(),
                if bytes.len() == 1 { "" } else { "s" }
            )));
        }
        let value = decoded.map_err(|e| {
            SerdeError::new(format!(
                "cannot read Avro data with {}: {e}; the data is corrupt or was not written with this schema",
                writer_desc()
            ))
        })?;
        if !input.rest.is_empty() {
            return Err(SerdeError::new(format!(
                "{} of {} bytes are left over after the Avro datum; the data was not written with {}",
                input.rest.len(),
                bytes.len(),
                writer_desc()
            )));
        }
        let value = match reader {
            Some(reader) => {
                let incompatible = |reason: &dyn fmt::Display| {
                    SerdeError::new(format!(
                        "data written with {} cannot be read with the reader schema {}: {reason}; \
                         the schemas are not compatible",
                        writer_desc(),
                        schema_label(reader)
                    ))
                };
                RangeCheck::run(&value, reader).map_err(|e| incompatible(&e))?;
                value.resolve(reader).map_err(|e| incompatible(&e))?
            }
            None => value,
        };
        apache_avro::from_value::<T>(&value).map_err(|e| {
            SerdeError::new(format!(
                "cannot convert Avro data read with {} to type `{}`: {e}",
                writer_desc(),
                type_name::<T>()
            ))
        })
    })
}

/// Raw Avro binary data with one schema: the bare datum, with no header and
/// no schema id, for `T: Serialize + DeserializeOwned`.
///
/// Writing checks the value against the schema (and converts, for example,
/// an `i32` to a `long` or an `Option` to a union); reading expects exactly
/// one datum and nothing after it.
///
/// ```
/// use streams_core::serde::{AvroSerde, Serde};
///
/// let serde = AvroSerde::<i64>::parse(r#""long""#)?;
/// assert_eq!(serde.serialize("t", &-1)?, [0x01]); // zig-zag varint
/// assert_eq!(serde.deserialize("t", &[0x96, 0x01])?, 75);
/// assert!(serde.deserialize("t", &[0x96]).is_err()); // truncated
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AvroSerde<T> {
    schema: Schema,
    _type: PhantomData<fn() -> T>,
}

impl<T> AvroSerde<T> {
    /// A serde that writes and reads data of `schema`.
    pub fn new(schema: Schema) -> Self {
        AvroSerde {
            schema,
            _type: PhantomData,
        }
    }

    /// A serde for the schema given as Avro schema JSON; an error if the
    /// JSON is not a valid schema.
    ///
    /// # Errors
    /// A [`SerdeError`] if `schema_json` is not a valid Avro schema.
    pub fn parse(schema_json: &str) -> Result<Self, SerdeError> {
        parse_schema(schema_json).map(Self::new)
    }

    /// The schema data is written and read with.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }
}

impl<T> Clone for AvroSerde<T> {
    fn clone(&self) -> Self {
        Self::new(self.schema.clone())
    }
}

impl<T> fmt::Debug for AvroSerde<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("AvroSerde<{}>", type_name::<T>()))
            .field("schema", &schema_text(&self.schema))
            .finish()
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Serde<T> for AvroSerde<T> {
    fn serialize(&self, _topic: &str, value: &T) -> Result<Vec<u8>, SerdeError> {
        encode(&self.schema, value)
    }

    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<T, SerdeError> {
        decode(&self.schema, None, bytes, || {
            format!("schema {}", schema_label(&self.schema))
        })
    }
}

#[derive(Default)]
struct RegistryState {
    /// The schema with id `i` is at index `i - 1`.
    schemas: Vec<Arc<Schema>>,
    /// Ids by [`schema_text`].
    ids: HashMap<String, u32>,
    /// For each subject, the id of each version; version `v` is at `v - 1`.
    subjects: BTreeMap<String, Vec<u32>>,
}

impl RegistryState {
    fn schema(&self, id: u32) -> Option<&Arc<Schema>> {
        let index = usize::try_from(id).ok()?.checked_sub(1)?;
        self.schemas.get(index)
    }

    fn id_in_subject(&self, subject: &str, text: &str) -> Option<u32> {
        let id = *self.ids.get(text)?;
        self.subjects.get(subject)?.contains(&id).then_some(id)
    }
}

/// An in-memory schema registry, as Confluent's `MockSchemaRegistryClient`
/// (a `mock://` registry URL): schemas get global ids from 1 up, and each
/// subject keeps its versions from 1 up.
///
/// Registering a schema that the subject already has returns its id
/// without a new version; a schema already registered under another
/// subject gets the id it already has, as in Confluent's registry. Schemas
/// are the same when their JSON forms are (whitespace and field order of
/// the schema JSON do not matter; defaults and names do). No compatibility
/// checks are made.
///
/// Clones share the same registry; it is `Send` and `Sync`.
///
/// ```
/// use apache_avro::Schema;
/// use streams_core::serde::MockSchemaRegistry;
///
/// let registry = MockSchemaRegistry::new();
/// let string = Schema::parse_str(r#""string""#)?;
/// let long = Schema::parse_str(r#""long""#)?;
/// assert_eq!(registry.register("words-key", &string)?, 1);
/// assert_eq!(registry.register("words-value", &long)?, 2);
/// assert_eq!(registry.register("words-key", &string)?, 1); // already there
/// assert_eq!(registry.register("counts-key", &string)?, 1); // same schema, same id
/// assert_eq!(registry.subjects(), ["counts-key", "words-key", "words-value"]);
/// assert_eq!(registry.latest("words-value"), Some((2, long)));
/// assert_eq!(registry.versions("words-key"), [1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct MockSchemaRegistry {
    state: Arc<Mutex<RegistryState>>,
}

impl MockSchemaRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, RegistryState> {
        // No code panics while holding the lock, so a poisoned state is intact.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `schema` under `subject` and returns its id.
    ///
    /// If the subject has the schema already, its id is returned and no
    /// version is added; otherwise the schema becomes the subject's next
    /// version, with the id it already has under another subject or a new
    /// one. An error if the subject is empty or the registry is full.
    ///
    /// # Errors
    /// A [`SerdeError`] if `subject` is empty or the registry is full.
    pub fn register(&self, subject: &str, schema: &Schema) -> Result<u32, SerdeError> {
        self.register_text(subject, schema_text(schema), schema)
    }

    fn register_text(
        &self,
        subject: &str,
        text: String,
        schema: &Schema,
    ) -> Result<u32, SerdeError> {
        if subject.is_empty() {
            return Err(SerdeError::new(
                "a schema registry subject must not be empty",
            ));
        }
        let mut state = self.lock();
        if let Some(id) = state.id_in_subject(subject, &text) {
            return Ok(id);
        }
        let id = match state.ids.get(&text) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(state.schemas.len() + 1)
                    .ok()
                    .filter(|&id| id <= i32::MAX as u32)
                    .ok_or_else(|| {
                        SerdeError::new("the schema registry is full; no schema id is left")
                    })?;
                state.schemas.push(Arc::new(schema.clone()));
                state.ids.insert(text, id);
                id
            }
        };
        state
            .subjects
            .entry(subject.to_owned())
            .or_default()
            .push(id);
        Ok(id)
    }

    /// The id of `schema` if it is registered under `subject`.
    pub fn id(&self, subject: &str, schema: &Schema) -> Option<u32> {
        self.lock().id_in_subject(subject, &schema_text(schema))
    }

    /// The schema with this id, if one is registered.
    pub fn schema_by_id(&self, id: u32) -> Option<Schema> {
        self.lock().schema(id).map(|s| Schema::clone(s))
    }

    fn schema_arc(&self, id: u32) -> Option<Arc<Schema>> {
        self.lock().schema(id).cloned()
    }

    /// The id and schema of the latest version of `subject`, if it has any.
    pub fn latest(&self, subject: &str) -> Option<(u32, Schema)> {
        let state = self.lock();
        let id = *state.subjects.get(subject)?.last()?;
        state.schema(id).map(|s| (id, Schema::clone(s)))
    }

    /// The id and schema of version `version` (from 1) of `subject`.
    pub fn version(&self, subject: &str, version: u32) -> Option<(u32, Schema)> {
        let state = self.lock();
        let index = usize::try_from(version).ok()?.checked_sub(1)?;
        let id = *state.subjects.get(subject)?.get(index)?;
        state.schema(id).map(|s| (id, Schema::clone(s)))
    }

    /// The version numbers of `subject`: `1..=n`, empty for an unknown subject.
    pub fn versions(&self, subject: &str) -> Vec<u32> {
        let count = self.lock().subjects.get(subject).map_or(0, Vec::len);
        (1..=count).filter_map(|v| u32::try_from(v).ok()).collect()
    }

    /// All subjects with at least one version, sorted.
    pub fn subjects(&self) -> Vec<String> {
        self.lock().subjects.keys().cloned().collect()
    }

    /// The GUID of the schema with this id, as newer Confluent registries
    /// give every schema (and as a schema id header carries it). This mock
    /// derives it from the id: `00000000-0000-4000-8000-` and the id as 12
    /// hex digits (a version-4 UUID layout, deterministic for tests).
    ///
    /// ```
    /// use streams_core::serde::MockSchemaRegistry;
    ///
    /// let registry = MockSchemaRegistry::new();
    /// let id = registry.register("t-value", &apache_avro::Schema::parse_str(r#""long""#)?)?;
    /// let guid = registry.guid(id).expect("registered");
    /// assert_eq!(guid[..8], [0, 0, 0, 0, 0, 0, 0x40, 0]);
    /// assert_eq!(registry.id_by_guid(&guid), Some(id));
    /// assert_eq!(registry.guid(99), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn guid(&self, id: u32) -> Option<[u8; 16]> {
        self.lock().schema(id)?;
        let mut guid = [0_u8; 16];
        guid[6] = 0x40;
        guid[8] = 0x80;
        guid[12..].copy_from_slice(&id.to_be_bytes());
        Some(guid)
    }

    /// The id of the schema with this GUID (see [`guid`](Self::guid)).
    pub fn id_by_guid(&self, guid: &[u8; 16]) -> Option<u32> {
        let id = u32::from_be_bytes([guid[12], guid[13], guid[14], guid[15]]);
        (self.guid(id).as_ref() == Some(guid)).then_some(id)
    }
}

/// Confluent's header of a key's schema id (`SchemaId.KEY_SCHEMA_ID_HEADER`).
pub const KEY_SCHEMA_ID_HEADER: &str = "__key_schema_id";
/// Confluent's header of a value's schema id (`SchemaId.VALUE_SCHEMA_ID_HEADER`).
pub const VALUE_SCHEMA_ID_HEADER: &str = "__value_schema_id";

impl From<&MockSchemaRegistry> for MockSchemaRegistry {
    fn from(registry: &MockSchemaRegistry) -> Self {
        registry.clone()
    }
}

impl fmt::Debug for MockSchemaRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("MockSchemaRegistry")
            .field("schemas", &state.schemas.len())
            .field("subjects", &state.subjects)
            .finish()
    }
}

/// Avro in Confluent's wire format, as `KafkaAvroSerializer` and
/// `KafkaAvroDeserializer` write and read it: the magic byte `0`, the
/// writer's schema id as 4 bytes big-endian, then the Avro datum.
///
/// Subjects follow Confluent's default `TopicNameStrategy`: `<topic>-key`
/// for a key serde ([`key`](Self::key)), `<topic>-value` for a value serde
/// ([`value`](Self::value)). Serializing registers the serde's schema under
/// the topic's subject first (`auto.register.schemas=true`, the default;
/// see [`auto_register`](Self::auto_register)). Deserializing looks up the
/// writer's schema by the id in the data, in any subject, and resolves the
/// data to the serde's schema, so a reader schema may, for example, add a
/// field with a default. The datum must fill the rest of the data: bytes
/// left over after it are an error (Java's deserializer ignores them).
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use streams_core::serde::{ConfluentAvroSerde, MockSchemaRegistry, Serde};
///
/// #[derive(Serialize, Deserialize)]
/// struct UserV1 { name: String }
///
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// struct User { name: String, age: i32 }
///
/// let registry = MockSchemaRegistry::new();
/// let v1 = ConfluentAvroSerde::<UserV1>::value_json(&registry,
///     r#"{"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}"#)?;
/// let bytes = v1.serialize("users", &UserV1 { name: "ann".into() })?;
/// assert_eq!(bytes[..5], [0, 0, 0, 0, 1]); // magic byte, schema id 1
///
/// // A newer reader schema with a field that has a default reads old data.
/// let v2 = ConfluentAvroSerde::<User>::value_json(&registry,
///     r#"{"type": "record", "name": "User", "fields": [
///         {"name": "name", "type": "string"},
///         {"name": "age", "type": "int", "default": -1}]}"#)?;
/// assert_eq!(v2.deserialize("users", &bytes)?, User { name: "ann".into(), age: -1 });
///
/// let err = v2.deserialize("users", &[7, 0, 0, 0, 1]).unwrap_err();
/// assert_eq!(err.to_string(), "unknown magic byte 7; expected 0 (Confluent wire format)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ConfluentAvroSerde<T> {
    registry: MockSchemaRegistry,
    schema: Schema,
    schema_text: String,
    is_key: bool,
    auto_register: bool,
    schema_id_in_header: bool,
    _type: PhantomData<fn() -> T>,
}

impl<T> ConfluentAvroSerde<T> {
    fn with_part(registry: MockSchemaRegistry, schema: Schema, is_key: bool) -> Self {
        ConfluentAvroSerde {
            registry,
            schema_text: schema_text(&schema),
            schema,
            is_key,
            auto_register: true,
            schema_id_in_header: false,
            _type: PhantomData,
        }
    }

    /// Writes the schema id in a record header instead of before the
    /// datum, as Confluent's `HeaderSchemaIdSerializer` does
    /// (`value.schema.id.serializer`): the header [`VALUE_SCHEMA_ID_HEADER`]
    /// (or [`KEY_SCHEMA_ID_HEADER`]) holds the magic byte `1` and the
    /// schema's 16-byte GUID, and the data is the Avro datum alone. Reading
    /// accepts both forms whatever this says (Confluent's
    /// `DualSchemaIdDeserializer`): a schema id header (its GUID, or a
    /// magic byte `0` and a 4-byte id) wins over the data's prefix.
    ///
    /// ```
    /// use streams_core::serde::{ConfluentAvroSerde, MockSchemaRegistry, Serde, VALUE_SCHEMA_ID_HEADER};
    /// use streams_core::Headers;
    ///
    /// let registry = MockSchemaRegistry::new();
    /// let header_serde = ConfluentAvroSerde::<i64>::value_json(&registry, r#""long""#)?.with_schema_id_in_header(true);
    /// let mut headers = Headers::new();
    /// let bytes = header_serde.serialize_with_headers("t", &mut headers, &7)?;
    /// assert_eq!(bytes, [14]); // the datum alone (zig-zag 7)
    /// let header = headers.last(VALUE_SCHEMA_ID_HEADER).expect("written");
    /// assert_eq!(header[0], 1); // a GUID
    /// assert_eq!(&header[1..], registry.guid(1).expect("registered"));
    /// // A prefix-writing serde reads it back through the header.
    /// let prefix_serde = ConfluentAvroSerde::<i64>::value_json(&registry, r#""long""#)?;
    /// assert_eq!(prefix_serde.deserialize_with_headers("t", &headers, &bytes)?, 7);
    /// // Without headers there is nowhere to write the id.
    /// assert!(header_serde.serialize("t", &7).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_schema_id_in_header(mut self, in_header: bool) -> Self {
        self.schema_id_in_header = in_header;
        self
    }

    fn id_header(&self) -> &'static str {
        if self.is_key {
            KEY_SCHEMA_ID_HEADER
        } else {
            VALUE_SCHEMA_ID_HEADER
        }
    }

    /// The writer's schema id a schema id header names (Confluent's
    /// `SchemaId.fromBytes`: magic byte `0` and a 4-byte id, or `1` and a
    /// 16-byte GUID).
    fn id_from_header(&self, header: &[u8]) -> Result<u32, SerdeError> {
        let name = self.id_header();
        match header.split_first() {
            Some((0, id)) if id.len() >= 4 => Ok(u32::from_be_bytes([id[0], id[1], id[2], id[3]])),
            Some((1, guid)) if guid.len() >= 16 => {
                let mut g = [0_u8; 16];
                g.copy_from_slice(&guid[..16]);
                self.registry.id_by_guid(&g).ok_or_else(|| {
                    SerdeError::new(format!(
                        "the schema GUID in header `{name}` is not registered in the schema registry"
                    ))
                })
            }
            Some((magic @ (0 | 1), _)) => Err(SerdeError::new(format!(
                "header `{name}` with magic byte {magic} is {} bytes long, too short for its schema id",
                header.len()
            ))),
            Some((magic, _)) => Err(SerdeError::new(format!(
                "unknown magic byte {magic} in header `{name}`; expected 0 (an id) or 1 (a GUID)"
            ))),
            None => Err(SerdeError::new(format!("header `{name}` is empty"))),
        }
    }

    fn decode_with(&self, id: u32, datum: &[u8]) -> Result<T, SerdeError>
    where
        T: DeserializeOwned,
    {
        let writer = self.registry.schema_arc(id).ok_or_else(|| {
            SerdeError::new(format!(
                "schema id {id} is not registered in the schema registry"
            ))
        })?;
        decode(&writer, Some(&self.schema), datum, || {
            format!("schema id {id} ({})", schema_label(&writer))
        })
    }

    /// A serde for record values, with subject `<topic>-value`, writing and
    /// reading with `schema`. Pass the registry or a reference to it.
    pub fn value(registry: impl Into<MockSchemaRegistry>, schema: Schema) -> Self {
        Self::with_part(registry.into(), schema, false)
    }

    /// A serde for record keys, with subject `<topic>-key`, writing and
    /// reading with `schema`. Pass the registry or a reference to it.
    pub fn key(registry: impl Into<MockSchemaRegistry>, schema: Schema) -> Self {
        Self::with_part(registry.into(), schema, true)
    }

    /// As [`value`](Self::value), with the schema given as Avro schema
    /// JSON; an error if it is not a valid schema.
    ///
    /// # Errors
    /// A [`SerdeError`] if `schema_json` is not a valid Avro schema.
    pub fn value_json(
        registry: impl Into<MockSchemaRegistry>,
        schema_json: &str,
    ) -> Result<Self, SerdeError> {
        Ok(Self::value(registry, parse_schema(schema_json)?))
    }

    /// As [`key`](Self::key), with the schema given as Avro schema JSON; an
    /// error if it is not a valid schema.
    ///
    /// # Errors
    /// A [`SerdeError`] if `schema_json` is not a valid Avro schema.
    pub fn key_json(
        registry: impl Into<MockSchemaRegistry>,
        schema_json: &str,
    ) -> Result<Self, SerdeError> {
        Ok(Self::key(registry, parse_schema(schema_json)?))
    }

    /// Whether serializing registers the schema under the topic's subject
    /// (`true`, the default, as `auto.register.schemas`). With `false`, the
    /// schema must have been registered under that subject already, and
    /// serializing is an error otherwise.
    #[must_use]
    pub fn auto_register(mut self, auto_register: bool) -> Self {
        self.auto_register = auto_register;
        self
    }

    /// The schema subject for `topic`: `<topic>-key` or `<topic>-value`.
    pub fn subject(&self, topic: &str) -> String {
        let part = if self.is_key { "key" } else { "value" };
        format!("{topic}-{part}")
    }

    /// Whether this serde is for keys (else for values).
    pub fn is_key(&self) -> bool {
        self.is_key
    }

    /// The serde's schema: written with, and read into.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The registry schemas are registered in and looked up from.
    pub fn registry(&self) -> &MockSchemaRegistry {
        &self.registry
    }

    fn schema_id(&self, topic: &str) -> Result<u32, SerdeError> {
        let subject = self.subject(topic);
        if self.auto_register {
            self.registry
                .register_text(&subject, self.schema_text.clone(), &self.schema)
        } else {
            self.registry
                .lock()
                .id_in_subject(&subject, &self.schema_text)
                .ok_or_else(|| {
                    SerdeError::new(format!(
                        "schema {} is not registered under subject `{subject}`, and auto-registration is off; \
                         register it first",
                        schema_label(&self.schema)
                    ))
                })
        }
    }
}

impl<T> Clone for ConfluentAvroSerde<T> {
    fn clone(&self) -> Self {
        ConfluentAvroSerde {
            registry: self.registry.clone(),
            schema: self.schema.clone(),
            schema_text: self.schema_text.clone(),
            is_key: self.is_key,
            auto_register: self.auto_register,
            schema_id_in_header: self.schema_id_in_header,
            _type: PhantomData,
        }
    }
}

impl<T> fmt::Debug for ConfluentAvroSerde<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(&format!("ConfluentAvroSerde<{}>", type_name::<T>()))
            .field("part", &if self.is_key { "key" } else { "value" })
            .field("schema", &schema_text(&self.schema))
            .field("auto_register", &self.auto_register)
            .field("schema_id_in_header", &self.schema_id_in_header)
            .finish()
    }
}

impl<T: Serialize + DeserializeOwned + 'static> Serde<T> for ConfluentAvroSerde<T> {
    fn serialize_with_headers(
        &self,
        topic: &str,
        headers: &mut crate::record::Headers,
        value: &T,
    ) -> Result<Vec<u8>, SerdeError> {
        if !self.schema_id_in_header {
            return self.serialize(topic, value);
        }
        let datum = encode(&self.schema, value)?;
        let id = self.schema_id(topic)?;
        let guid = self.registry.guid(id).ok_or_else(|| {
            SerdeError::new(format!("schema id {id} has no GUID in the schema registry"))
        })?;
        let mut header = Vec::with_capacity(17);
        header.push(1);
        header.extend_from_slice(&guid);
        headers.add(self.id_header(), header);
        Ok(datum)
    }

    fn deserialize_with_headers(
        &self,
        topic: &str,
        headers: &crate::record::Headers,
        bytes: &[u8],
    ) -> Result<T, SerdeError> {
        match headers.last(self.id_header()) {
            Some(header) => self.decode_with(self.id_from_header(header)?, bytes),
            None => self.deserialize(topic, bytes),
        }
    }

    fn serialize(&self, topic: &str, value: &T) -> Result<Vec<u8>, SerdeError> {
        if self.schema_id_in_header {
            return Err(SerdeError::new(format!(
                "this serde writes the schema id in header `{}`, and no headers were given; \
                 serialize with serialize_with_headers",
                self.id_header()
            )));
        }
        let datum = encode(&self.schema, value)?;
        let id = self.schema_id(topic)?;
        let mut bytes = Vec::with_capacity(HEADER_LEN + datum.len());
        bytes.push(MAGIC_BYTE);
        bytes.extend_from_slice(&id.to_be_bytes());
        bytes.extend_from_slice(&datum);
        Ok(bytes)
    }

    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<T, SerdeError> {
        if let Some(&magic) = bytes.first().filter(|&&b| b != MAGIC_BYTE) {
            return Err(SerdeError::new(format!(
                "unknown magic byte {magic}; expected {MAGIC_BYTE} (Confluent wire format)"
            )));
        }
        let Some((header, datum)) = bytes.split_first_chunk::<HEADER_LEN>() else {
            return Err(SerdeError::new(format!(
                "Confluent Avro data is {} bytes long, but needs at least {HEADER_LEN}: \
                 a magic byte and a 4-byte schema id",
                bytes.len()
            )));
        };
        let id = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        self.decode_with(id, datum)
    }
}
