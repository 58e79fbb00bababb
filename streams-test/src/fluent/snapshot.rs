//! [`Snapshot`]: a whole output topic or store as stable, readable text
//! (its `Display`) or as data for insta's YAML and JSON snapshots (its
//! `Serialize`).

use std::fmt::{self, Debug};

use serde::Serialize;
use streams_core::Headers;

use super::report::{fail, header_value};
use crate::TestRecord;

/// What a header's value shows as once redacted.
pub const REDACTED: &str = "[redacted]";

/// A key or a value as a snapshot shows it.
#[derive(Debug, Clone, PartialEq)]
enum Datum {
    Null,
    Debug(String),
    Json(serde_json::Value),
}

impl Datum {
    fn debug<T: Debug>(x: Option<&T>) -> Self {
        x.map_or(Datum::Null, |x| Datum::Debug(format!("{x:?}")))
    }

    #[track_caller]
    fn json<T: Serialize>(x: Option<&T>, what: impl FnOnce() -> String) -> Self {
        match x.map(serde_json::to_value) {
            None => Datum::Null,
            Some(Ok(v)) => Datum::Json(v),
            Some(Err(e)) => fail(format!("{} cannot be turned into JSON: {e}", what())),
        }
    }
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => f.write_str("null"),
            Datum::Debug(s) => f.write_str(s),
            Datum::Json(v) => write!(f, "{v}"),
        }
    }
}

impl Serialize for Datum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Datum::Null => s.serialize_none(),
            Datum::Debug(text) => s.serialize_str(text),
            Datum::Json(v) => v.serialize(s),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    offset: Option<i64>,
    timestamp: Option<i64>,
    key: Datum,
    value: Datum,
    headers: Headers,
}

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Topic(String),
    Store(String),
}

/// A whole output topic or store, for snapshot tests with insta: its
/// [`Display`](fmt::Display) is a stable, readable text for
/// `insta::assert_snapshot!`, its `Serialize` a document for
/// `insta::assert_yaml_snapshot!` (or JSON, RON, ...).
///
/// Made by [`TestOutput::snapshot`](super::TestOutput::snapshot) (keys and
/// values as their `Debug`), [`TestOutput::serde_snapshot`](super::TestOutput::serde_snapshot)
/// (through serde, so that YAML shows their fields), and the same two
/// methods of [`StoreAssert`](super::StoreAssert). A topic snapshot shows
/// each record's offset, timestamp, key, value and headers; a store
/// snapshot each entry's key and value, and its timestamp in a timestamped
/// store.
///
/// # Volatile fields
/// Leave out what changes from run to run, or does not matter to the
/// test, with [`without_timestamps`](Snapshot::without_timestamps),
/// [`without_offsets`](Snapshot::without_offsets),
/// [`without_headers`](Snapshot::without_headers), or
/// [`redact_header`](Snapshot::redact_header) for one header whose value
/// varies (a trace id) while its presence matters. For anything else in
/// a YAML snapshot use insta's own redactions (its `redactions` feature),
/// with selectors such as `".records[].timestamp"` or
/// `".records[].value.created_at"`:
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("in").map_values(|v| v.to_uppercase()).to("out");
/// })?;
/// topology.input().at(1_000).with_header("trace", "4bf92f35").add("a", "x").add("b", "y");
/// insta::assert_snapshot!(topology.output().snapshot().redact_header("trace"), @r#"
/// topic out: 2 records
/// offset 0, timestamp 1000: "a" -> "X", headers [trace="[redacted]"]
/// offset 1, timestamp 1000: "b" -> "Y", headers [trace="[redacted]"]
/// "#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    source: Source,
    entries: Vec<Entry>,
    offsets: bool,
    timestamps: bool,
    headers: bool,
    redacted: Vec<String>,
}

impl Snapshot {
    fn new(source: Source, entries: Vec<Entry>) -> Self {
        Snapshot {
            source,
            entries,
            offsets: true,
            timestamps: true,
            headers: true,
            redacted: Vec::new(),
        }
    }

    pub(crate) fn of_topic_debug<K: Debug, V: Debug>(
        topic: &str,
        records: Vec<(i64, TestRecord<K, V>)>,
    ) -> Self {
        let entries = records
            .into_iter()
            .map(|(offset, r)| Entry {
                offset: Some(offset),
                timestamp: r.timestamp,
                key: Datum::debug(r.key.as_ref()),
                value: Datum::debug(r.value.as_ref()),
                headers: r.headers,
            })
            .collect();
        Snapshot::new(Source::Topic(topic.to_owned()), entries)
    }

    #[track_caller]
    pub(crate) fn of_topic_serde<K: Serialize, V: Serialize>(
        topic: &str,
        records: Vec<(i64, TestRecord<K, V>)>,
    ) -> Self {
        let mut entries = Vec::with_capacity(records.len());
        for (offset, r) in records {
            let at = |part: &str| {
                format!("the {part} of the record at offset {offset} of topic `{topic}`")
            };
            entries.push(Entry {
                offset: Some(offset),
                timestamp: r.timestamp,
                key: Datum::json(r.key.as_ref(), || at("key")),
                value: Datum::json(r.value.as_ref(), || at("value")),
                headers: r.headers,
            });
        }
        Snapshot::new(Source::Topic(topic.to_owned()), entries)
    }

    pub(crate) fn of_store_debug<K: Debug, V: Debug>(
        store: &str,
        entries: &[(K, V, Option<i64>)],
    ) -> Self {
        let entries = entries
            .iter()
            .map(|(k, v, ts)| Entry {
                offset: None,
                timestamp: *ts,
                key: Datum::debug(Some(k)),
                value: Datum::debug(Some(v)),
                headers: Headers::new(),
            })
            .collect();
        Snapshot::new(Source::Store(store.to_owned()), entries)
    }

    #[track_caller]
    pub(crate) fn of_store_serde<K: Serialize + Debug, V: Serialize>(
        store: &str,
        entries: &[(K, V, Option<i64>)],
    ) -> Self {
        let mut out = Vec::with_capacity(entries.len());
        for (k, v, ts) in entries {
            out.push(Entry {
                offset: None,
                timestamp: *ts,
                key: Datum::json(Some(k), || format!("key {k:?} of store `{store}`")),
                value: Datum::json(Some(v), || {
                    format!("the value for key {k:?} of store `{store}`")
                }),
                headers: Headers::new(),
            });
        }
        Snapshot::new(Source::Store(store.to_owned()), out)
    }

    /// Leaves the timestamps out.
    #[must_use]
    pub fn without_timestamps(mut self) -> Self {
        self.timestamps = false;
        self
    }

    /// Leaves the offsets out (for a topic; a store has none).
    #[must_use]
    pub fn without_offsets(mut self) -> Self {
        self.offsets = false;
        self
    }

    /// Leaves the headers out (for a topic; a store has none).
    #[must_use]
    pub fn without_headers(mut self) -> Self {
        self.headers = false;
        self
    }

    /// Shows the value of every header with this key as `[redacted]`.
    #[must_use]
    pub fn redact_header(mut self, key: impl Into<String>) -> Self {
        self.redacted.push(key.into());
        self
    }

    /// How many records (or entries) the snapshot holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the snapshot holds no record (or entry).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn shown_headers(&self, headers: &Headers) -> Vec<(String, String)> {
        if !self.headers {
            return Vec::new();
        }
        headers
            .iter()
            .map(|h| {
                let value = if self.redacted.contains(&h.key) {
                    format!("{REDACTED:?}")
                } else {
                    header_value(h.value.as_deref())
                };
                (h.key.clone(), value)
            })
            .collect()
    }
}

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.entries.len();
        match &self.source {
            Source::Topic(t) => {
                write!(
                    f,
                    "topic {t}: {n} {}",
                    if n == 1 { "record" } else { "records" }
                )?;
            }
            Source::Store(s) => {
                write!(
                    f,
                    "store {s}: {n} {}",
                    if n == 1 { "entry" } else { "entries" }
                )?;
            }
        }
        for e in &self.entries {
            f.write_str("\n")?;
            let mut prefix = Vec::new();
            if let (true, Some(offset)) = (self.offsets, e.offset) {
                prefix.push(format!("offset {offset}"));
            }
            if let (true, Some(ts)) = (self.timestamps, e.timestamp) {
                prefix.push(format!("timestamp {ts}"));
            }
            if !prefix.is_empty() {
                write!(f, "{}: ", prefix.join(", "))?;
            }
            write!(f, "{} -> {}", e.key, e.value)?;
            let headers = self.shown_headers(&e.headers);
            if !headers.is_empty() {
                let shown: Vec<String> = headers.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, ", headers [{}]", shown.join(", "))?;
            }
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct EntryView<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<i64>,
    key: &'a Datum,
    value: &'a Datum,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    headers: Vec<(String, Option<String>)>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum View<'a> {
    Topic {
        topic: &'a str,
        records: Vec<EntryView<'a>>,
    },
    Store {
        store: &'a str,
        entries: Vec<EntryView<'a>>,
    },
}

impl Serialize for Snapshot {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let entries = self
            .entries
            .iter()
            .map(|e| EntryView {
                offset: e.offset.filter(|_| self.offsets),
                timestamp: e.timestamp.filter(|_| self.timestamps),
                key: &e.key,
                value: &e.value,
                headers: if self.headers {
                    e.headers
                        .iter()
                        .map(|h| {
                            let value = if self.redacted.contains(&h.key) {
                                Some(REDACTED.to_owned())
                            } else {
                                h.value
                                    .as_deref()
                                    .map(|v| String::from_utf8_lossy(v).into_owned())
                            };
                            (h.key.clone(), value)
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            })
            .collect();
        match &self.source {
            Source::Topic(topic) => View::Topic {
                topic,
                records: entries,
            },
            Source::Store(store) => View::Store { store, entries },
        }
        .serialize(s)
    }
}
