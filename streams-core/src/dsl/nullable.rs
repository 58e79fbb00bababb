//! The stateless operators in the form Kafka's have, whose closures see a
//! null key and a null value (a tombstone) as `None`: `filter_nullable`,
//! `filter_not_nullable`, `map_values_nullable`, `flat_map_values_nullable`,
//! `map_nullable`, `select_key_nullable`, `peek_nullable` and
//! `foreach_nullable`. They have Kafka's node names, as the friendly forms
//! (whose closures never see a tombstone) do, and may turn a tombstone into
//! a value or a value into a tombstone, as a Java lambda may return `null`.
//!
//! ```
//! use streams_test::{KeyValue, TestRecord, example};
//!
//! let driver = example(|builder| {
//!     builder
//!         .stream::<String, String>("in")
//!         .map_values_nullable(|_, v: Option<&String>| Some(v.map_or("<deleted>".to_owned(), |v| v.to_uppercase())))
//!         .filter_nullable(|k, _| k.is_some())
//!         .to("out");
//! });
//! let input = driver.input::<String, String>("in");
//! input.pipe_key_value("a", "x");
//! input.pipe_record(TestRecord::tombstone("b".to_owned()));
//! input.pipe_record(TestRecord::new(None, Some("no key".to_owned())));
//! assert_eq!(
//!     driver.output::<String, String>("out").read_key_values_to_list(),
//!     [KeyValue::pair("a", "X"), KeyValue::pair("b", "<deleted>")]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::rc::Rc;

use crate::dsl::KStream;
use crate::error::Result;
use crate::processor::{Processor, ProcessorContext};
use crate::record::Record;

/// A closure over a record's key and value, both possibly null.
type NullableFn<K, V, R> = Rc<dyn Fn(Option<&K>, Option<&V>) -> R>;

struct FilterNullable<K, V> {
    predicate: NullableFn<K, V, bool>,
    keep_when: bool,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for FilterNullable<K, V> {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, K, V>, r: Record<K, V>) -> Result<()> {
        if (self.predicate)(r.key.as_ref(), r.value.as_ref()) == self.keep_when {
            ctx.forward(r)
        } else {
            Ok(())
        }
    }
}

struct Inspect<K, V> {
    action: NullableFn<K, V, ()>,
    forward: bool,
}

impl<K: Clone + 'static, V: Clone + 'static> Processor<K, V> for Inspect<K, V> {
    fn process(&mut self, ctx: &mut ProcessorContext<'_, K, V>, r: Record<K, V>) -> Result<()> {
        (self.action)(r.key.as_ref(), r.value.as_ref());
        if self.forward { ctx.forward(r) } else { Ok(()) }
    }
}

/// Each record becomes the (key, value) pairs `mapper` gives.
struct MapNullable<K, V, KR, VR> {
    mapper: NullableFn<K, V, Vec<(Option<KR>, Option<VR>)>>,
}

impl<K: 'static, V: 'static, KR: Clone + 'static, VR: Clone + 'static> Processor<K, V, KR, VR>
    for MapNullable<K, V, KR, VR>
{
    fn process(&mut self, ctx: &mut ProcessorContext<'_, KR, VR>, r: Record<K, V>) -> Result<()> {
        for (key, value) in (self.mapper)(r.key.as_ref(), r.value.as_ref()) {
            ctx.forward(Record {
                key,
                value,
                timestamp: r.timestamp,
                headers: r.headers.clone(),
            })?;
        }
        Ok(())
    }
}

struct MapValuesNullable<K, V, VR> {
    mapper: NullableFn<K, V, Vec<Option<VR>>>,
}

impl<K: Clone + 'static, V: 'static, VR: Clone + 'static> Processor<K, V, K, VR>
    for MapValuesNullable<K, V, VR>
{
    fn process(&mut self, ctx: &mut ProcessorContext<'_, K, VR>, r: Record<K, V>) -> Result<()> {
        let values = (self.mapper)(r.key.as_ref(), r.value.as_ref());
        let template = r.with_value::<VR>(None);
        match values.len() {
            0 => Ok(()),
            1 => ctx.forward(template.with_value(values.into_iter().next().flatten())),
            _ => {
                for value in values {
                    ctx.forward(template.clone().with_value(value))?;
                }
                Ok(())
            }
        }
    }
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Keeps the records for which `predicate` is true, Kafka's `filter`
    /// with a predicate that sees a null key or value (a tombstone is
    /// kept only if the predicate says so). See the [module docs](self).
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     // Kafka's `filter((k, v) -> v != null)`: drop the tombstones.
    ///     builder.stream::<String, String>("in").filter_nullable(|_, v| v.is_some()).to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("a", "x");
    /// input.pipe_tombstone("b");
    /// input.pipe_record(TestRecord::new(None, Some("no key".to_owned())));
    /// assert_eq!(
    ///     driver.output::<String, String>("out").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "x"), KeyValue::new(None, Some("no key".to_owned()))]
    /// );
    /// ```
    #[must_use]
    pub fn filter_nullable(
        mut self,
        predicate: impl Fn(Option<&K>, Option<&V>) -> bool + 'static,
    ) -> Self {
        let name = self.take_name_and_number("KSTREAM-FILTER-");
        let predicate: NullableFn<K, V, bool> = Rc::new(predicate);
        self.add_processor(
            name,
            move || FilterNullable {
                predicate: predicate.clone(),
                keep_when: true,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Keeps the records for which `predicate` is false, Kafka's
    /// `filterNot` with a predicate that sees tombstones.
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("in").filter_not_nullable(|_, v| v.is_none()).to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_record(TestRecord::tombstone("gone".to_owned()));
    /// input.pipe_key_value("kept", "v");
    /// assert_eq!(driver.output::<String, String>("out").read_key_values_to_list(), [KeyValue::pair("kept", "v")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn filter_not_nullable(
        mut self,
        predicate: impl Fn(Option<&K>, Option<&V>) -> bool + 'static,
    ) -> Self {
        let name = self.take_name_and_number("KSTREAM-FILTER-");
        let predicate: NullableFn<K, V, bool> = Rc::new(predicate);
        self.add_processor(
            name,
            move || FilterNullable {
                predicate: predicate.clone(),
                keep_when: false,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Replaces each value, keeping the key, Kafka's
    /// `mapValues(ValueMapperWithKey)` with a mapper that sees a null key
    /// or value and may return `None` (a tombstone). See the
    /// [module docs](self).
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("in")
    ///         // A tombstone becomes a value, and an empty value a tombstone.
    ///         .map_values_nullable(|_, v: Option<&String>| match v {
    ///             None => Some("deleted".to_owned()),
    ///             Some(v) if v.is_empty() => None,
    ///             Some(v) => Some(v.to_uppercase()),
    ///         })
    ///         .to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("a", "x");
    /// input.pipe_tombstone("b");
    /// input.pipe_key_value("c", "");
    /// assert_eq!(
    ///     driver.output::<String, String>("out").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "X"), KeyValue::pair("b", "deleted"), KeyValue::tombstone("c")]
    /// );
    /// ```
    pub fn map_values_nullable<VR: Clone + 'static>(
        mut self,
        mapper: impl Fn(Option<&K>, Option<&V>) -> Option<VR> + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-MAPVALUES-");
        let mapper: NullableFn<K, V, Vec<Option<VR>>> = Rc::new(move |k, v| vec![mapper(k, v)]);
        self.add_processor(
            name,
            move || MapValuesNullable {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Replaces each record by zero or more values (each possibly a
    /// tombstone) with the same key, Kafka's `flatMapValues` with a mapper
    /// that sees tombstones.
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("in")
    ///         .flat_map_values_nullable(|_, v: Option<&String>| match v {
    ///             Some(v) => v.split(',').map(|p| Some(p.to_owned())).collect(),
    ///             None => vec![None, None],
    ///         })
    ///         .to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("k", "a,b");
    /// input.pipe_record(TestRecord::tombstone("t".to_owned()));
    /// assert_eq!(
    ///     driver.output::<String, String>("out").read_key_values_to_list(),
    ///     [KeyValue::pair("k", "a"), KeyValue::pair("k", "b"), KeyValue::tombstone("t"), KeyValue::tombstone("t")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flat_map_values_nullable<VR: Clone + 'static, I: IntoIterator<Item = Option<VR>>>(
        mut self,
        mapper: impl Fn(Option<&K>, Option<&V>) -> I + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-FLATMAPVALUES-");
        let mapper: NullableFn<K, V, Vec<Option<VR>>> =
            Rc::new(move |k, v| mapper(k, v).into_iter().collect());
        self.add_processor(
            name,
            move || MapValuesNullable {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Replaces each record by a new key and value (either may be `None`),
    /// Kafka's `map` with a mapper that sees a null key or value; marks the
    /// stream for repartitioning, as `map` does.
    ///
    /// ```
    /// use streams_test::{TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("in")
    ///         .map_nullable(|k: Option<&String>, v: Option<&String>| (v.cloned(), k.cloned()))
    ///         .to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_record(TestRecord::tombstone("k".to_owned()));
    /// let out = driver.output::<String, String>("out").read_records_to_list();
    /// assert_eq!((out[0].key.as_deref(), out[0].value.as_deref()), (None, Some("k")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn map_nullable<KR: Clone + 'static, VR: Clone + 'static>(
        mut self,
        mapper: impl Fn(Option<&K>, Option<&V>) -> (Option<KR>, Option<VR>) + 'static,
    ) -> KStream<KR, VR> {
        let name = self.take_name_and_number("KSTREAM-MAP-");
        let mapper: NullableFn<K, V, Vec<(Option<KR>, Option<VR>)>> =
            Rc::new(move |k, v| vec![mapper(k, v)]);
        let mut out = self.add_processor(
            name,
            move || MapNullable {
                mapper: mapper.clone(),
            },
            None,
            None,
        );
        out.repartition_required = true;
        out
    }

    /// Gives each record a new key (possibly `None`) computed from a key
    /// and value that may be null, Kafka's `selectKey` with a mapper that
    /// sees tombstones; marks the stream for repartitioning.
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("in")
    ///         .select_key_nullable(|_, v: Option<&String>| Some(v.map_or(0, |v| v.len() as i64)))
    ///         .to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("k", "abc");
    /// input.pipe_record(TestRecord::tombstone("t".to_owned()));
    /// assert_eq!(
    ///     driver.output::<i64, String>("out").read_key_values_to_list(),
    ///     [KeyValue::pair(3, "abc"), KeyValue::tombstone(0)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn select_key_nullable<KR: Clone + 'static>(
        mut self,
        selector: impl Fn(Option<&K>, Option<&V>) -> Option<KR> + 'static,
    ) -> KStream<KR, V> {
        let name = self.take_name_and_number("KSTREAM-KEY-SELECT-");
        let mapper: NullableFn<K, V, Vec<(Option<KR>, Option<V>)>> =
            Rc::new(move |k, v| vec![(selector(k, v), v.cloned())]);
        let mut out = self.add_processor(
            name,
            move || MapNullable {
                mapper: mapper.clone(),
            },
            None,
            self.value_serde.clone(),
        );
        out.repartition_required = true;
        out
    }

    /// Calls `action` on each record, tombstones included, and passes it
    /// on, Kafka's `peek`.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::rc::Rc;
    /// use streams_test::{TestRecord, example};
    ///
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let log = seen.clone();
    /// let driver = example(move |builder| {
    ///     let log = log.clone();
    ///     builder
    ///         .stream::<String, String>("in")
    ///         .peek_nullable(move |k, v| log.borrow_mut().push((k.cloned(), v.cloned())))
    ///         .to("out");
    /// });
    /// driver.input::<String, String>("in").pipe_record(TestRecord::tombstone("k".to_owned()));
    /// assert_eq!(*seen.borrow(), [(Some("k".to_owned()), None)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn peek_nullable(mut self, action: impl Fn(Option<&K>, Option<&V>) + 'static) -> Self {
        let name = self.take_name_and_number("KSTREAM-PEEK-");
        let action: NullableFn<K, V, ()> = Rc::new(action);
        self.add_processor(
            name,
            move || Inspect {
                action: action.clone(),
                forward: true,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Calls `action` on each record, tombstones included, a terminal
    /// operation, Kafka's `foreach`.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::collections::BTreeMap;
    /// use std::rc::Rc;
    /// use streams_test::example;
    ///
    /// // A map kept up to date from a changelog stream: tombstones delete.
    /// let latest = Rc::new(RefCell::new(BTreeMap::new()));
    /// let map = latest.clone();
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("users").foreach_nullable(move |k, v| {
    ///         let mut map = map.borrow_mut();
    ///         match (k, v) {
    ///             (Some(k), Some(v)) => {
    ///                 map.insert(k.clone(), v.clone());
    ///             }
    ///             (Some(k), None) => {
    ///                 map.remove(k);
    ///             }
    ///             (None, _) => {}
    ///         }
    ///     });
    /// });
    /// let users = driver.input::<String, String>("users");
    /// users.pipe_key_values([("1", "ann"), ("2", "bob")]);
    /// users.pipe_tombstone("1");
    /// assert_eq!(*latest.borrow(), BTreeMap::from([("2".to_owned(), "bob".to_owned())]));
    /// ```
    pub fn foreach_nullable(mut self, action: impl Fn(Option<&K>, Option<&V>) + 'static) {
        let name = self.take_name_and_number("KSTREAM-FOREACH-");
        let action: NullableFn<K, V, ()> = Rc::new(action);
        self.add_processor::<K, V, _, _>(
            name,
            move || Inspect {
                action: action.clone(),
                forward: false,
            },
            None,
            None,
        );
    }
}
