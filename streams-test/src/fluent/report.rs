//! How failed assertions describe themselves: the topic or store, the
//! position, expected against actual (a pretty_assertions diff when the
//! values span several lines), and what is left to read.

use std::fmt::{self, Debug};

use pretty_assertions::StrComparison;
use streams_core::Headers;

use crate::{KeyValue, TestRecord};

/// How many records or entries a failure message lists before it says
/// how many more there are.
pub(crate) const LISTED: usize = 10;

/// Shows an optional value as its `Debug`, or `null` (keeps `{:#?}`).
pub(crate) struct Nullable<'a, T>(pub(crate) Option<&'a T>);

impl<T: Debug> Debug for Nullable<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(x) => x.fmt(f),
            None => f.write_str("null"),
        }
    }
}

/// `expected: ..` and `actual: ..` on two lines, or a pretty_assertions
/// diff of their `{:#?}` forms when either spans several lines.
pub(crate) fn expected_actual(expected: &dyn Debug, actual: &dyn Debug) -> String {
    let e = format!("{expected:#?}");
    let a = format!("{actual:#?}");
    if e.contains('\n') || a.contains('\n') {
        diff(&e, &a)
    } else {
        format!("expected: {e}\n  actual: {a}")
    }
}

/// A pretty_assertions diff of two texts, expected on the left.
pub(crate) fn diff(expected: &str, actual: &str) -> String {
    let comparison = StrComparison::new(expected, actual).to_string();
    format!(
        "expected (left, <) against actual (right, >):\n{}",
        comparison.trim_end()
    )
}

/// A header value as text when it is UTF-8, else as bytes.
pub(crate) fn header_value(value: Option<&[u8]>) -> String {
    match value {
        None => "null".to_owned(),
        Some(v) => match std::str::from_utf8(v) {
            Ok(s) => format!("{s:?}"),
            Err(_) => format!("{v:?}"),
        },
    }
}

/// Headers as `[key="value", other=null]`.
pub(crate) fn headers(headers: &Headers) -> String {
    let shown: Vec<String> = headers
        .iter()
        .map(|h| format!("{}={}", h.key, header_value(h.value.as_deref())))
        .collect();
    format!("[{}]", shown.join(", "))
}

/// One record on one line: `offset 3: key "a", value 1, timestamp 0`.
pub(crate) fn record_line<K: Debug, V: Debug>(offset: i64, record: &TestRecord<K, V>) -> String {
    let mut line = format!(
        "offset {offset}: key {:?}, value {:?}",
        Nullable(record.key.as_ref()),
        Nullable(record.value.as_ref())
    );
    if let Some(ts) = record.timestamp {
        line.push_str(&format!(", timestamp {ts}"));
    }
    if !record.headers.is_empty() {
        line.push_str(&format!(", headers {}", headers(&record.headers)));
    }
    line
}

/// One line per key-value, for the diff of two lists of records.
pub(crate) fn key_value_lines<K: Debug, V: Debug>(records: &[KeyValue<K, V>]) -> String {
    records
        .iter()
        .map(|r| format!("{r:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A decoded record, or why it could not be decoded.
pub(crate) type Decoded<K, V> = (i64, Result<TestRecord<K, V>, String>);

/// One decoded record on one line, or why it could not be decoded.
pub(crate) fn decoded_line<K: Debug, V: Debug>((offset, record): &Decoded<K, V>) -> String {
    match record {
        Ok(r) => record_line(*offset, r),
        Err(e) => format!("offset {offset}: cannot decode: {e}"),
    }
}

/// The records left in a topic, one per line, at most [`LISTED`].
pub(crate) fn listing<K: Debug, V: Debug>(topic: &str, records: &[Decoded<K, V>]) -> String {
    listing_lines(
        topic,
        records.first().map(|(offset, _)| *offset),
        records.iter().map(decoded_line).collect(),
    )
}

/// Record lines under a heading naming the topic and the first offset.
pub(crate) fn listing_lines(topic: &str, first: Option<i64>, lines: Vec<String>) -> String {
    let Some(first) = first else {
        return format!("topic `{topic}` has no records left");
    };
    let mut out = format!("records left in topic `{topic}` from offset {first}:");
    for line in lines.iter().take(LISTED) {
        out.push_str("\n  ");
        out.push_str(line);
    }
    if lines.len() > LISTED {
        out.push_str(&format!("\n  ... and {} more", lines.len() - LISTED));
    }
    out
}

/// Entries of a table or store, one per line, at most [`LISTED`]:
/// `key -> value` and a suffix (offset or timestamp) per entry.
pub(crate) fn entry_lines<'a, K: Debug + 'a, V: Debug + 'a>(
    entries: impl ExactSizeIterator<Item = (&'a K, &'a V, String)>,
) -> String {
    let total = entries.len();
    let mut out = String::new();
    for (key, value, suffix) in entries.take(LISTED) {
        out.push_str(&format!("\n  {key:?} -> {value:?}{suffix}"));
    }
    if total > LISTED {
        out.push_str(&format!("\n  ... and {} more", total - LISTED));
    }
    out
}

/// Fails the assertion, pointing at the caller's line.
#[track_caller]
pub(crate) fn fail(message: String) -> ! {
    panic!("{message}")
}
