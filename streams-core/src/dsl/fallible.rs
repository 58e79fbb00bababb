//! The fallible forms of the stateless operators: `try_map_values`,
//! `try_map`, `try_filter` and `try_flat_map_values`. Their closures return
//! a `Result`; an `Err` is a processing error of the operator's node, which
//! the processing exception handler (`processing.exception.handler`,
//! KIP-1033) answers: fail (the default) or resume, with the record in the
//! dead letter queue if one is set. Node names are those of the infallible
//! forms (`KSTREAM-MAPVALUES-..`, `KSTREAM-MAP-..`, `KSTREAM-FILTER-..`,
//! `KSTREAM-FLATMAPVALUES-..`), as in Kafka, where the lambda throws.
//!
//! ```
//! use streams_core::engine::StreamTask;
//! use streams_core::{RawRecord, StreamsBuilder, StreamsConfig, StreamsError};
//!
//! let builder = StreamsBuilder::new();
//! builder
//!     .stream::<String, String>("in")
//!     .try_map_values(|v| v.parse::<i64>())
//!     .to("out");
//! let mut task = StreamTask::new(&builder.build()?, &StreamsConfig::default(), 0)?;
//! let err = task.process("in", 5, RawRecord::new(None, Some(b"x".to_vec()), 1)).unwrap_err();
//! assert!(matches!(&err, StreamsError::ProcessingFailed { node, origin, .. }
//!     if node == "KSTREAM-MAPVALUES-0000000001" && origin.offset == 5));
//! assert_eq!(
//!     err.to_string(),
//!     "exception caught in process: task 0_0, topic `in`, partition 0, offset 5, processor \
//!      `KSTREAM-MAPVALUES-0000000001`: processor `KSTREAM-MAPVALUES-0000000001` failed: invalid digit found in string"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::rc::Rc;

use crate::dsl::KStream;
use crate::error::{Result, StreamsError};
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;

/// The error type user closures may return: anything that converts into a
/// boxed error (`&str`, `String`, any `std::error::Error`).
pub type UserError = Box<dyn std::error::Error + Send + Sync>;

type TryFn<K, V, R> = Rc<dyn Fn(Option<&K>, &V) -> std::result::Result<R, UserError>>;

fn user_error(source: UserError) -> StreamsError {
    StreamsError::Processing { node: None, source }
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// [`map_values`](KStream::map_values) with a closure that may fail:
    /// an `Err` is a processing error of this node. A tombstone stays a
    /// tombstone (the closure does not see it).
    ///
    /// With the default `processing.exception.handler` an error fails the
    /// pipe, naming the node and the record:
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("in").try_map_values(|v| v.parse::<i64>()).to("numbers");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("a", "12");
    /// let err = input.try_pipe_key_value("b", "twelve").unwrap_err();
    /// assert!(err.to_string().ends_with(
    ///     "processor `KSTREAM-MAPVALUES-0000000001` failed: invalid digit found in string"
    /// ));
    /// assert_eq!(driver.output::<String, i64>("numbers").read_key_values_to_list(), [KeyValue::pair("a", 12)]);
    /// ```
    pub fn try_map_values<VR: Clone + 'static, E: Into<UserError>>(
        mut self,
        mapper: impl Fn(&V) -> std::result::Result<VR, E> + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-MAPVALUES-");
        self.builder().mark_value_changing(&name);
        let mapper: TryFn<K, V, VR> = Rc::new(move |_, v| mapper(v).map_err(Into::into));
        self.add_processor(
            name,
            move || TryMapValues {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// [`map`](KStream::map) with a closure that may fail: an `Err` is a
    /// processing error of this node. Tombstones are dropped and counted,
    /// as by `map`.
    ///
    /// With `LogAndContinueProcessingExceptionHandler`, a failing record is
    /// dropped and counted, and processing goes on:
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_test::{KeyValue, example_with_config};
    ///
    /// let config = StreamsConfig::new("app")
    ///     .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
    /// let driver = example_with_config(config, |builder| {
    ///     builder
    ///         .stream::<String, String>("pairs")
    ///         .try_map(|_, pair| pair.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).ok_or("no `=`"))
    ///         .to("settings");
    /// });
    /// driver.input::<String, String>("pairs").pipe_values(["a=1", "junk", "b=2"]);
    /// assert_eq!(
    ///     driver.output::<String, String>("settings").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "1"), KeyValue::pair("b", "2")]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1);
    /// ```
    pub fn try_map<KR: Clone + 'static, VR: Clone + 'static, E: Into<UserError>>(
        mut self,
        mapper: impl Fn(Option<&K>, &V) -> std::result::Result<(KR, VR), E> + 'static,
    ) -> KStream<KR, VR> {
        let name = self.take_name_and_number("KSTREAM-MAP-");
        let mapper: TryFn<K, V, (KR, VR)> = Rc::new(move |k, v| mapper(k, v).map_err(Into::into));
        let mut out = self.add_processor(
            name,
            move || TryMap {
                mapper: mapper.clone(),
            },
            None,
            None,
        );
        self.builder().mark_key_changing(&out.node);
        out.repartition_required = true;
        out
    }

    /// [`filter`](KStream::filter) with a predicate that may fail: an `Err`
    /// is a processing error of this node. Tombstones pass.
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_test::{KeyValue, example_with_config};
    ///
    /// let config = StreamsConfig::new("app")
    ///     .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
    /// let driver = example_with_config(config, |builder| {
    ///     builder
    ///         .stream::<String, String>("amounts")
    ///         .try_filter(|_, amount| amount.parse::<i64>().map(|n| n >= 100))
    ///         .to("large");
    /// });
    /// let amounts = driver.input::<String, String>("amounts");
    /// amounts.pipe_key_values([("a", "250"), ("b", "7"), ("c", "lots")]);
    /// amounts.pipe_tombstone("d");
    /// assert_eq!(
    ///     driver.output::<String, String>("large").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "250"), KeyValue::tombstone("d")]
    /// );
    /// assert_eq!(driver.dropped_records_by_node().into_iter().collect::<Vec<_>>(), [("KSTREAM-FILTER-0000000001".to_owned(), 1)]);
    /// ```
    #[must_use]
    pub fn try_filter<E: Into<UserError>>(
        mut self,
        predicate: impl Fn(Option<&K>, &V) -> std::result::Result<bool, E> + 'static,
    ) -> Self {
        let name = self.take_name_and_number("KSTREAM-FILTER-");
        let predicate: TryFn<K, V, bool> = Rc::new(move |k, v| predicate(k, v).map_err(Into::into));
        self.add_processor(
            name,
            move || TryFilter {
                predicate: predicate.clone(),
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// [`flat_map_values`](KStream::flat_map_values) with a closure that
    /// may fail: an `Err` is a processing error of this node, and none of
    /// the record's values is forwarded. A tombstone stays a tombstone.
    ///
    /// ```
    /// use streams_core::StreamsConfig;
    /// use streams_core::config::LogAndContinueProcessingExceptionHandler;
    /// use streams_test::{KeyValue, example_with_config};
    ///
    /// let config = StreamsConfig::new("app")
    ///     .with_processing_exception_handler(LogAndContinueProcessingExceptionHandler);
    /// let driver = example_with_config(config, |builder| {
    ///     builder
    ///         .stream::<String, String>("lists")
    ///         .try_flat_map_values(|list| list.split(',').map(str::parse::<i64>).collect::<Result<Vec<_>, _>>())
    ///         .to("numbers");
    /// });
    /// // "3,x" fails as a whole: not even 3 comes out.
    /// driver.input::<String, String>("lists").pipe_key_values([("a", "1,2"), ("b", "3,x")]);
    /// assert_eq!(
    ///     driver.output::<String, i64>("numbers").read_key_values_to_list(),
    ///     [KeyValue::pair("a", 1), KeyValue::pair("a", 2)]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1);
    /// ```
    pub fn try_flat_map_values<
        VR: Clone + 'static,
        I: IntoIterator<Item = VR>,
        E: Into<UserError>,
    >(
        mut self,
        mapper: impl Fn(&V) -> std::result::Result<I, E> + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-FLATMAPVALUES-");
        self.builder().mark_value_changing(&name);
        let mapper: TryFn<K, V, Vec<VR>> = Rc::new(move |_, v| {
            mapper(v)
                .map(|values| values.into_iter().collect())
                .map_err(Into::into)
        });
        self.add_processor(
            name,
            move || TryFlatMapValues {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }
}

struct TryMapValues<K, V, VR> {
    mapper: TryFn<K, V, VR>,
}

impl<K: Clone + 'static, V: 'static, VR: Clone + 'static> Processor<K, V, K, VR>
    for TryMapValues<K, V, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let value = match &record.value {
            Some(v) => Some((self.mapper)(record.key.as_ref(), v).map_err(user_error)?),
            None => None,
        };
        ctx.forward(record.with_value(value))
    }
}

struct TryMap<K, V, KR, VR> {
    mapper: TryFn<K, V, (KR, VR)>,
}

impl<K: 'static, V: 'static, KR: Clone + 'static, VR: Clone + 'static> Processor<K, V, KR, VR>
    for TryMap<K, V, KR, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KR, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let (k, v) = (self.mapper)(record.key.as_ref(), value).map_err(user_error)?;
        ctx.forward(Record {
            key: Some(k),
            value: Some(v),
            timestamp: record.timestamp,
            headers: record.headers,
        })
    }
}

struct TryFilter<K, V> {
    predicate: TryFn<K, V, bool>,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for TryFilter<K, V> {
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, V>,
        record: Record<K, V>,
    ) -> Result<()> {
        let pass = match &record.value {
            Some(v) => (self.predicate)(record.key.as_ref(), v).map_err(user_error)?,
            None => true,
        };
        if pass { ctx.forward(record) } else { Ok(()) }
    }
}

struct TryFlatMapValues<K, V, VR> {
    mapper: TryFn<K, V, Vec<VR>>,
}

impl<K: Clone + 'static, V: 'static, VR: Clone + 'static> Processor<K, V, K, VR>
    for TryFlatMapValues<K, V, VR>
{
    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, V>,
    ) -> Result<()> {
        let Some(value) = &record.value else {
            return ctx.forward(record.with_value(None));
        };
        let values = (self.mapper)(record.key.as_ref(), value).map_err(user_error)?;
        let template = record.with_value::<VR>(None);
        for v in values {
            ctx.forward(Record {
                key: template.key.clone(),
                value: Some(v),
                timestamp: template.timestamp,
                headers: template.headers.clone(),
            })?;
        }
        Ok(())
    }
}
