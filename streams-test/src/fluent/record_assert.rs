//! [`RecordAssert`]: the checks on one record read from an output topic.

use std::fmt::Debug;

use super::TestOutput;
use super::report::{
    Nullable, decoded_line, expected_actual, fail, header_value, headers, listing_lines,
    record_line,
};
use crate::TestRecord;
use streams_core::config::{
    HEADER_ERRORS_EXCEPTION_MESSAGE_NAME, HEADER_ERRORS_EXCEPTION_NAME, HEADER_ERRORS_OFFSET_NAME,
    HEADER_ERRORS_PARTITION_NAME, HEADER_ERRORS_STACKTRACE_NAME, HEADER_ERRORS_TOPIC_NAME,
};

/// Checks on one record read from an output topic, bakdata's
/// `expectNextRecord()` chain. Each check returns the record again;
/// [`and`](RecordAssert::and) goes back to the topic for the next one.
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::TestTopology;
///
/// let topology = TestTopology::new(|b: &StreamsBuilder| {
///     b.stream::<String, String>("in").map_values(|v| v.repeat(2)).to("out");
/// })?;
/// topology.input().at(42).with_header("source", "test").add("k", "ab");
/// let record = topology
///     .output()
///     .expect_next_record()
///     .has_key("k")
///     .has_value("abab")
///     .has_value_matching(|v| v.len() == 4)
///     .has_timestamp(42)
///     .has_header("source", "test");
/// assert_eq!(record.offset(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordAssert<'t, K, V> {
    output: TestOutput<'t, K, V>,
    offset: i64,
    record: TestRecord<K, V>,
}

impl<K: Debug, V: Debug> std::fmt::Debug for RecordAssert<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordAssert")
            .field("topic", &self.output.topic)
            .field("offset", &self.offset)
            .field("record", &self.record)
            .finish()
    }
}

// Assertions, not builders: each checks on its own and returns `self` only
// so that checks can be chained; dropping the result is intended.
#[allow(clippy::return_self_not_must_use)]
impl<'t, K: Debug + 'static, V: Debug + 'static> RecordAssert<'t, K, V> {
    pub(super) fn new(output: TestOutput<'t, K, V>, offset: i64, record: TestRecord<K, V>) -> Self {
        RecordAssert {
            output,
            offset,
            record,
        }
    }

    /// The record's offset in its topic.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The record.
    pub fn record(&self) -> &TestRecord<K, V> {
        &self.record
    }

    /// The record, taken out.
    pub fn into_record(self) -> TestRecord<K, V> {
        self.record
    }

    /// Back to the topic, for the next record or a list check.
    pub fn and(self) -> TestOutput<'t, K, V> {
        self.output
    }

    #[track_caller]
    fn failed(&self, what: &str, detail: String) -> ! {
        let mut lines = vec![record_line(self.offset, &self.record)];
        lines.extend(self.output.peek().iter().map(decoded_line));
        fail(format!(
            "record at offset {} of topic `{}`: {what}\n{detail}\n\n{}",
            self.offset,
            self.output.topic,
            listing_lines(&self.output.topic, Some(self.offset), lines)
        ))
    }

    /// Checks the key.
    ///
    /// # Panics
    /// If the key differs (or is null).
    #[track_caller]
    pub fn has_key(self, key: impl Into<K>) -> Self
    where
        K: PartialEq,
    {
        let expected = key.into();
        if self.record.key.as_ref() != Some(&expected) {
            self.failed(
                "the key is not the expected one",
                expected_actual(&expected, &Nullable(self.record.key.as_ref())),
            );
        }
        self
    }

    /// Checks that the key is null.
    ///
    /// # Panics
    /// If the key is not null.
    #[track_caller]
    pub fn has_null_key(self) -> Self {
        if let Some(key) = &self.record.key {
            self.failed(
                "the key is not the expected one",
                expected_actual(&Nullable::<K>(None), key),
            );
        }
        self
    }

    /// Checks the value.
    ///
    /// # Panics
    /// If the value differs (or the record is a tombstone).
    #[track_caller]
    pub fn has_value(self, value: impl Into<V>) -> Self
    where
        V: PartialEq,
    {
        let expected = value.into();
        if self.record.value.as_ref() != Some(&expected) {
            self.failed(
                "the value is not the expected one",
                expected_actual(&expected, &Nullable(self.record.value.as_ref())),
            );
        }
        self
    }

    /// Checks that the value passes `predicate`.
    ///
    /// # Panics
    /// If it does not, or the record is a tombstone.
    #[track_caller]
    pub fn has_value_matching(self, predicate: impl FnOnce(&V) -> bool) -> Self {
        let matches = self.record.value.as_ref().is_some_and(predicate);
        if !matches {
            self.failed(
                "the value does not match the predicate",
                format!("value: {:#?}", Nullable(self.record.value.as_ref())),
            );
        }
        self
    }

    /// Checks that the record is a tombstone: its value is null.
    ///
    /// # Panics
    /// If it has a value.
    #[track_caller]
    pub fn is_tombstone(self) -> Self {
        if let Some(value) = &self.record.value {
            self.failed(
                "the value is not the expected one",
                expected_actual(&Nullable::<V>(None), value),
            );
        }
        self
    }

    /// Checks the timestamp (epoch millis).
    ///
    /// # Panics
    /// If it differs.
    #[track_caller]
    pub fn has_timestamp(self, timestamp: i64) -> Self {
        let actual = self.record.timestamp.unwrap_or(-1);
        if actual != timestamp {
            self.failed(
                "the timestamp is not the expected one",
                expected_actual(&timestamp, &actual),
            );
        }
        self
    }

    /// Checks the value of the last header with this key.
    ///
    /// # Panics
    /// If there is no such header or its value differs.
    #[track_caller]
    pub fn has_header(self, key: &str, value: impl AsRef<[u8]>) -> Self {
        let expected = value.as_ref();
        match self.record.headers.last_header(key) {
            Some(h) if h.value.as_deref() == Some(expected) => {}
            Some(h) => self.failed(
                &format!("header `{key}` is not the expected one"),
                format!(
                    "expected: {}\n  actual: {}",
                    header_value(Some(expected)),
                    header_value(h.value.as_deref())
                ),
            ),
            None => self.failed(
                &format!("there is no header `{key}`"),
                format!(
                    "expected: {}\n  actual headers: {}",
                    header_value(Some(expected)),
                    headers(&self.record.headers)
                ),
            ),
        }
        self
    }

    /// Checks a dead letter queue record's error: its
    /// `__streams.errors.exception` header (the Java class name, as
    /// [`StreamsError::exception_class`](streams_core::StreamsError::exception_class)
    /// gives it) and its `__streams.errors.message` header.
    ///
    /// # Panics
    /// If a header is missing or differs; the message shows expected and
    /// actual.
    #[track_caller]
    pub fn has_error(self, exception: &str, message: &str) -> Self {
        self.has_header(HEADER_ERRORS_EXCEPTION_NAME, exception)
            .has_header(HEADER_ERRORS_EXCEPTION_MESSAGE_NAME, message)
    }

    /// Checks where a dead letter queue record's bad record was read: the
    /// `__streams.errors.topic`, `.partition` and `.offset` headers.
    ///
    /// # Panics
    /// If a header is missing or differs.
    #[track_caller]
    pub fn has_error_source(self, topic: &str, partition: i32, offset: i64) -> Self {
        self.has_header(HEADER_ERRORS_TOPIC_NAME, topic)
            .has_header(HEADER_ERRORS_PARTITION_NAME, partition.to_string())
            .has_header(HEADER_ERRORS_OFFSET_NAME, offset.to_string())
    }

    /// Checks that a dead letter queue record's `__streams.errors.stacktrace`
    /// header contains `text`.
    ///
    /// # Panics
    /// If there is no such header or it does not contain `text`.
    #[track_caller]
    pub fn has_error_stacktrace_containing(self, text: &str) -> Self {
        let actual = self
            .record
            .headers
            .last(HEADER_ERRORS_STACKTRACE_NAME)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        match actual {
            Some(a) if a.contains(text) => {}
            Some(a) => self.failed(
                &format!("header `{HEADER_ERRORS_STACKTRACE_NAME}` does not contain the text"),
                format!("expected to contain: {text:?}\n  actual: {a:?}"),
            ),
            None => self.failed(
                &format!("there is no header `{HEADER_ERRORS_STACKTRACE_NAME}`"),
                format!(
                    "expected to contain: {text:?}\n  actual headers: {}",
                    headers(&self.record.headers)
                ),
            ),
        }
        self
    }
}
