//! `KStream`: a record stream and its stateless operators.

use std::fmt;
use std::rc::Rc;

use crate::dsl::processors::{
    Filter, FlatMap, FlatMapValues, KvFn, Map, MapValues, PassThrough, Peek, SelectKey,
};
use crate::dsl::{Produced, Repartitioned, StreamsBuilder};
use crate::error::TopologyError;
use crate::processor::{FixedKeyAdapter, FixedKeyProcessor, Processor};
use crate::serde::SerdeRef;
use crate::topology::{
    SinkPartitioning, SinkTopic, TopicName, TopicNameExtractor, extractor_parts,
};

/// A stream of records, Kafka's `KStream<K, V>`.
///
/// Every operator adds a node to the topology and returns the stream of
/// its output. Closures see keys as `Option<&K>` and values as `&V`; see
/// the [module docs](crate::dsl) for how tombstones pass through.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("sentences")
///     .flat_map_values(|s: &String| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
///     .named("shout")
///     .map_values(|w| w.to_uppercase())
///     .to("words");
/// assert_eq!(builder.build()?.node_names()[2], "shout");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Repartitioning after a key change
/// A stream whose key may have changed carries a mark, Kafka's
/// `repartitionRequired`: grouping it ([`group_by_key`](KStream::group_by_key))
/// or joining it with a table or a stream first sends it through a
/// repartition topic, so that each key reaches the partition its
/// aggregation or join reads. As in Kafka's `KStreamImpl`:
///
/// | the mark | operators |
/// |---|---|
/// | set | `map`, `flat_map`, `select_key`, `process`, `group_by` |
/// | kept | `filter`, `filter_not`, `peek`, `map_values(_with_key)`, `flat_map_values(_with_key)`, the branches of `split`, `join_global`, `left_join_global` |
/// | either side's | `merge` (marked if this stream or the other is) |
/// | cleared | `repartition(_with)`, `join`/`left_join` with a table, the stream-stream joins, streams from the builder and from `KTable::to_stream` |
///
/// So `map(..).filter(..).group_by_key()` counts through a repartition
/// topic, and `select_key(..).repartition()` does not need a second one:
///
/// ```
/// use streams_core::{KStream, StreamsBuilder};
///
/// /// How many repartition topics counting `op(stream("in"))` by key
/// /// needs (a repartition topic is a sink's `topic: ..-repartition`).
/// fn repartitions(op: impl FnOnce(KStream<String, String>) -> KStream<String, String>) -> usize {
///     let builder = StreamsBuilder::new();
///     op(builder.stream("in")).group_by_key().count();
///     let described = builder.build().unwrap().describe().to_string();
///     described.matches("-repartition)").count()
/// }
/// let rekey = |s: KStream<String, String>| s.select_key(|_, v| v.clone());
/// let table = |s: &KStream<String, String>| s.builder().table::<String, String>("t");
/// let global = |s: &KStream<String, String>| s.builder().global_table::<String, String>("g");
/// // Set by a key change, kept by what follows it:
/// assert_eq!(repartitions(|s| s.filter(|_, _| true)), 0);
/// assert_eq!(repartitions(|s| s.map(|_, v| (v.clone(), v.clone())).filter(|_, _| true)), 1);
/// assert_eq!(repartitions(|s| s.flat_map(|_, v| [(v.clone(), v.clone())]).peek(|_, _| ())), 1);
/// assert_eq!(repartitions(|s| rekey(s).filter_not(|_, v| v.is_empty())), 1);
/// assert_eq!(repartitions(|s| rekey(s).map_values(|v| v.to_uppercase())), 1);
/// assert_eq!(repartitions(|s| rekey(s).flat_map_values(|v| [v.clone()])), 1);
/// assert_eq!(repartitions(|s| rekey(s).split().default_branch("b").remove("KSTREAM-BRANCH-0000000002b").unwrap()), 1);
/// assert_eq!(repartitions(|s| { let g = global(&s); rekey(s).join_global(&g, |_, v| v.clone(), |v, _| v.clone()) }), 1);
/// // Either side's for a merge:
/// assert_eq!(repartitions(|s| s.clone().merge(&rekey(s))), 1);
/// assert_eq!(repartitions(|s| rekey(s.clone()).merge(&s)), 1);
/// assert_eq!(repartitions(|s| s.clone().merge(&s)), 0);
/// // Cleared by a repartition topic: only the one before the join or the explicit one.
/// assert_eq!(repartitions(|s| rekey(s).repartition().filter(|_, _| true)), 1);
/// assert_eq!(repartitions(|s| { let t = table(&s); rekey(s).join(&t, |v, _| v.clone()) }), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The same with the driver: the re-keyed records reach the count through
/// the repartition topic, named after the count's store.
///
/// ```
/// use streams_test::{KeyValue, example};
///
/// let driver = example(|builder| {
///     builder
///         .stream::<String, String>("in")
///         .map(|_, v| (v.chars().take(1).collect::<String>(), v.clone()))
///         .filter(|_, v| v.len() > 1)
///         .group_by_key()
///         .count()
///         .to_stream()
///         .to("out");
/// });
/// let input = driver.input::<String, String>("in");
/// let out = driver.output::<String, i64>("out");
/// input.pipe_key_values([("k1", "ab"), ("k2", "a"), ("k3", "ac")]);
/// assert_eq!(out.read_key_values_to_list(), [KeyValue::pair("a", 1), KeyValue::pair("a", 2)]);
/// assert_eq!(
///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
///     [
///         "out",
///         "test-app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog",
///         "test-app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
///     ]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KStream<K, V> {
    builder: StreamsBuilder,
    pub(crate) node: String,
    pub(crate) key_serde: Option<SerdeRef<K>>,
    pub(crate) value_serde: Option<SerdeRef<V>>,
    pub(crate) next_name: Option<String>,
    /// Whether the key may have changed since the last repartition, so
    /// that grouping needs a repartition topic (Kafka's `repartitionRequired`).
    pub(crate) repartition_required: bool,
}

impl<K, V> Clone for KStream<K, V> {
    fn clone(&self) -> Self {
        KStream {
            builder: self.builder.clone(),
            node: self.node.clone(),
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            next_name: self.next_name.clone(),
            repartition_required: self.repartition_required,
        }
    }
}

impl<K, V> fmt::Debug for KStream<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KStream")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    pub(crate) fn new(
        builder: StreamsBuilder,
        node: String,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> Self {
        KStream {
            builder,
            node,
            key_serde,
            value_serde,
            next_name: None,
            repartition_required: false,
        }
    }

    /// The name of the node whose output this stream is.
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// let words = builder.stream::<String, String>("words");
    /// assert_eq!(words.node_name(), "KSTREAM-SOURCE-0000000000");
    /// let long = words.filter(|_, w| w.len() > 3);
    /// assert_eq!(long.node_name(), "KSTREAM-FILTER-0000000001");
    /// // The builder a stream belongs to, to add what a later operator needs:
    /// let users = long.builder().table::<String, String>("users");
    /// long.join(&users, |word, user| format!("{user}: {word}")).to("out");
    /// assert_eq!(builder.build()?.node_names().len(), 6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn node_name(&self) -> &str {
        &self.node
    }

    /// The builder this stream belongs to.
    ///
    /// The example of [`KStream::node_name`] shows it too.
    pub fn builder(&self) -> &StreamsBuilder {
        &self.builder
    }

    /// Names the node that the next operator on this stream adds (Kafka's
    /// `Named.as(..)`), instead of a generated name. As in Kafka, most
    /// operators still take a number of the shared counter, so that naming
    /// one node does not renumber the others; `process`, `repartition` and
    /// the windowed aggregations take none for a given name
    /// (`NamedInternal.orElseGenerateWithPrefix`).
    ///
    /// ```
    /// use streams_core::StreamsBuilder;
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .named("long-only")
    ///     .filter(|_, v| v.len() > 3)
    ///     .map_values(|v| v.to_uppercase())
    ///     .to("out");
    /// // `long-only` took number 1: the next node is 2.
    /// assert_eq!(
    ///     builder.build()?.node_names(),
    ///     ["KSTREAM-SOURCE-0000000000", "long-only", "KSTREAM-MAPVALUES-0000000002", "KSTREAM-SINK-0000000003"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    #[doc(alias = "Named")]
    #[doc(alias = "withName")]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.next_name = Some(name.into());
        self
    }

    /// The name of the next node: the one given with [`KStream::named`],
    /// else a generated one. As in Kafka, a number of the counter is taken
    /// either way, so that naming one node does not rename the others.
    pub(crate) fn take_name_and_number(&mut self, prefix: &str) -> String {
        let generated = self.builder.new_name(prefix);
        self.next_name.take().unwrap_or(generated)
    }

    /// As `take_name_and_number`, but a given name takes no number (Kafka's
    /// `process` and `repartition`).
    pub(crate) fn take_name_or_number(&mut self, prefix: &str) -> String {
        match self.next_name.take() {
            Some(n) => n,
            None => self.builder.new_name(prefix),
        }
    }

    /// Adds a processor node under this stream and returns its output
    /// stream, which keeps this stream's repartition mark: an operator that
    /// changes the key sets it on the result, one that ends in a
    /// repartition topic clears it.
    pub(crate) fn add_processor<KR, VR, P, F>(
        &self,
        name: String,
        supplier: F,
        key_serde: Option<SerdeRef<KR>>,
        value_serde: Option<SerdeRef<VR>>,
    ) -> KStream<KR, VR>
    where
        KR: Clone + 'static,
        VR: Clone + 'static,
        P: Processor<K, V, KR, VR>,
        F: Fn() -> P + 'static,
    {
        let parent = self.node.clone();
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, V, KR, VR, P, F>(&name, supplier, &[&parent])
        });
        let mut out = KStream::new(self.builder.clone(), name, key_serde, value_serde);
        out.repartition_required = self.repartition_required;
        out
    }

    /// Keeps the records for which `predicate` is true, Kafka's `filter`.
    /// Tombstones pass.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let words = builder.stream::<String, String>("words");
    ///     words.clone().filter(|_, w| w.len() > 3).to("long");
    ///     words.filter_not(|_, w| w.len() > 3).to("short");
    /// });
    /// let words = driver.input::<String, String>("words");
    /// words.pipe_key_values([("a", "hi"), ("b", "hello")]);
    /// words.pipe_tombstone("c"); // the predicates never see it: it passes both
    /// assert_eq!(
    ///     driver.output::<String, String>("long").read_key_values_to_list(),
    ///     [KeyValue::pair("b", "hello"), KeyValue::tombstone("c")]
    /// );
    /// assert_eq!(
    ///     driver.output::<String, String>("short").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "hi"), KeyValue::tombstone("c")]
    /// );
    /// ```
    #[must_use]
    pub fn filter(mut self, predicate: impl Fn(Option<&K>, &V) -> bool + 'static) -> Self {
        let name = self.take_name_and_number("KSTREAM-FILTER-");
        let predicate: KvFn<K, V, bool> = Rc::new(predicate);
        self.add_processor(
            name,
            move || Filter {
                predicate: predicate.clone(),
                keep_when: true,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Keeps the records for which `predicate` is false, Kafka's
    /// `filterNot`. Tombstones pass.
    ///
    /// The example of [`KStream::filter`] shows `filter_not` too.
    #[must_use]
    #[doc(alias = "filterNot")]
    pub fn filter_not(mut self, predicate: impl Fn(Option<&K>, &V) -> bool + 'static) -> Self {
        let name = self.take_name_and_number("KSTREAM-FILTER-");
        let predicate: KvFn<K, V, bool> = Rc::new(predicate);
        self.add_processor(
            name,
            move || Filter {
                predicate: predicate.clone(),
                keep_when: false,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Replaces each value, keeping the key, Kafka's `mapValues`.
    /// A tombstone stays a tombstone.
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("words").map_values(|w| w.len() as i64).to("lengths");
    /// });
    /// let words = driver.input::<String, String>("words");
    /// words.pipe_key_value("a", "kafka");
    /// words.pipe_record(TestRecord::new(None, Some("rust".to_owned()))); // no key: kept
    /// words.pipe_tombstone("a"); // the mapper never sees it
    /// assert_eq!(
    ///     driver.output::<String, i64>("lengths").read_key_values_to_list(),
    ///     [KeyValue::pair("a", 5), KeyValue::new(None, Some(4)), KeyValue::tombstone("a")]
    /// );
    /// ```
    #[doc(alias = "mapValues")]
    pub fn map_values<VR: Clone + 'static>(
        self,
        mapper: impl Fn(&V) -> VR + 'static,
    ) -> KStream<K, VR> {
        self.map_values_with_key(move |_, v| mapper(v))
    }

    /// Replaces each value, computed from key and value, Kafka's
    /// `mapValues(ValueMapperWithKey)`. The key may be `None`; a tombstone
    /// stays a tombstone.
    ///
    /// ```
    /// use streams_test::{KeyValue, TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("greetings")
    ///         .map_values_with_key(|name, greeting| format!("{greeting}, {}", name.map_or("you", String::as_str)))
    ///         .to("addressed");
    /// });
    /// let greetings = driver.input::<String, String>("greetings");
    /// greetings.pipe_key_value("ann", "hello");
    /// greetings.pipe_record(TestRecord::new(None, Some("hi".to_owned())));
    /// assert_eq!(
    ///     driver.output::<String, String>("addressed").read_key_values_to_list(),
    ///     [KeyValue::pair("ann", "hello, ann"), KeyValue::new(None, Some("hi, you".to_owned()))]
    /// );
    /// ```
    #[doc(alias = "mapValues")]
    pub fn map_values_with_key<VR: Clone + 'static>(
        mut self,
        mapper: impl Fn(Option<&K>, &V) -> VR + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-MAPVALUES-");
        self.builder.mark_value_changing(&name);
        let mapper: KvFn<K, V, VR> = Rc::new(mapper);
        self.add_processor(
            name,
            move || MapValues {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Replaces each record by zero or more values with the same key,
    /// Kafka's `flatMapValues`. A tombstone stays one tombstone.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("lines")
    ///         .flat_map_values(|line| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    ///         .to("words");
    /// });
    /// let lines = driver.input::<String, String>("lines");
    /// lines.pipe_key_value("1", "to be");
    /// lines.pipe_key_value("2", ""); // no values: nothing
    /// lines.pipe_tombstone("3"); // one tombstone
    /// assert_eq!(
    ///     driver.output::<String, String>("words").read_key_values_to_list(),
    ///     [KeyValue::pair("1", "to"), KeyValue::pair("1", "be"), KeyValue::tombstone("3")]
    /// );
    /// ```
    #[doc(alias = "flatMapValues")]
    pub fn flat_map_values<VR: Clone + 'static, I: IntoIterator<Item = VR>>(
        self,
        mapper: impl Fn(&V) -> I + 'static,
    ) -> KStream<K, VR> {
        self.flat_map_values_with_key(move |_, v| mapper(v))
    }

    /// As [`KStream::flat_map_values`], from key and value.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, i64>("repeat")
    ///         .flat_map_values_with_key(|k, n| vec![k.cloned().unwrap_or_default(); *n as usize])
    ///         .to("echoes");
    /// });
    /// driver.input::<String, i64>("repeat").pipe_key_values([("ho", 3), ("hey", 0)]);
    /// assert_eq!(
    ///     driver.output::<String, String>("echoes").read_key_values_to_list(),
    ///     [KeyValue::pair("ho", "ho"), KeyValue::pair("ho", "ho"), KeyValue::pair("ho", "ho")]
    /// );
    /// ```
    #[doc(alias = "flatMapValues")]
    pub fn flat_map_values_with_key<VR: Clone + 'static, I: IntoIterator<Item = VR>>(
        mut self,
        mapper: impl Fn(Option<&K>, &V) -> I + 'static,
    ) -> KStream<K, VR> {
        let name = self.take_name_and_number("KSTREAM-FLATMAPVALUES-");
        self.builder.mark_value_changing(&name);
        let mapper: KvFn<K, V, Vec<VR>> = Rc::new(move |k, v| mapper(k, v).into_iter().collect());
        self.add_processor(
            name,
            move || FlatMapValues {
                mapper: mapper.clone(),
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Replaces each record by a new key and value, Kafka's `map`.
    /// Tombstones are dropped and counted. The stream's key may have
    /// changed: a later grouping or join repartitions it.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("emails") // user -> address
    ///         .map(|user, address| {
    ///             let domain = address.split('@').nth(1).unwrap_or("").to_owned();
    ///             (domain, user.cloned().unwrap_or_default())
    ///         })
    ///         .to("users-by-domain");
    /// });
    /// let emails = driver.input::<String, String>("emails");
    /// emails.pipe_key_value("ann", "ann@example.com");
    /// emails.pipe_tombstone("bob"); // no value to map: dropped and counted
    /// assert_eq!(
    ///     driver.output::<String, String>("users-by-domain").read_key_values_to_list(),
    ///     [KeyValue::pair("example.com", "ann")]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1);
    /// ```
    pub fn map<KR: Clone + 'static, VR: Clone + 'static>(
        mut self,
        mapper: impl Fn(Option<&K>, &V) -> (KR, VR) + 'static,
    ) -> KStream<KR, VR> {
        let name = self.take_name_and_number("KSTREAM-MAP-");
        let mapper: KvFn<K, V, (KR, VR)> = Rc::new(mapper);
        let mut out = self.add_processor(
            name,
            move || Map {
                mapper: mapper.clone(),
            },
            None,
            None,
        );
        self.builder.mark_key_changing(&out.node);
        out.repartition_required = true;
        out
    }

    /// Replaces each record by zero or more records, Kafka's `flatMap`.
    /// Tombstones are dropped and counted.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("orders") // order id -> "item,item,..."
    ///         .flat_map(|order, items| {
    ///             let order = order.cloned().unwrap_or_default();
    ///             items.split(',').map(move |item| (item.to_owned(), order.clone())).collect::<Vec<_>>()
    ///         })
    ///         .to("orders-by-item");
    /// });
    /// driver.input::<String, String>("orders").pipe_key_value("o1", "pen,ink");
    /// assert_eq!(
    ///     driver.output::<String, String>("orders-by-item").read_key_values_to_list(),
    ///     [KeyValue::pair("pen", "o1"), KeyValue::pair("ink", "o1")]
    /// );
    /// ```
    #[doc(alias = "flatMap")]
    pub fn flat_map<KR: Clone + 'static, VR: Clone + 'static, I: IntoIterator<Item = (KR, VR)>>(
        mut self,
        mapper: impl Fn(Option<&K>, &V) -> I + 'static,
    ) -> KStream<KR, VR> {
        let name = self.take_name_and_number("KSTREAM-FLATMAP-");
        let mapper: KvFn<K, V, Vec<(KR, VR)>> =
            Rc::new(move |k, v| mapper(k, v).into_iter().collect());
        let mut out = self.add_processor(
            name,
            move || FlatMap {
                mapper: mapper.clone(),
            },
            None,
            None,
        );
        self.builder.mark_key_changing(&out.node);
        out.repartition_required = true;
        out
    }

    /// Gives each record a new key computed from key and value, Kafka's
    /// `selectKey`. Tombstones are dropped and counted.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("orders") // no key -> "customer:item"
    ///         .select_key(|_, order| order.split(':').next().unwrap_or("").to_owned())
    ///         .to("orders-by-customer");
    /// });
    /// let orders = driver.input::<String, String>("orders");
    /// orders.pipe_value("ann:pen");
    /// orders.pipe_tombstone("x"); // dropped and counted
    /// assert_eq!(
    ///     driver.output::<String, String>("orders-by-customer").read_key_values_to_list(),
    ///     [KeyValue::pair("ann", "ann:pen")]
    /// );
    /// assert_eq!(driver.metrics().dropped_records, 1);
    /// ```
    #[doc(alias = "selectKey")]
    pub fn select_key<KR: Clone + 'static>(
        mut self,
        selector: impl Fn(Option<&K>, &V) -> KR + 'static,
    ) -> KStream<KR, V> {
        let name = self.take_name_and_number("KSTREAM-KEY-SELECT-");
        let selector: KvFn<K, V, KR> = Rc::new(selector);
        let mut out = self.add_processor(
            name,
            move || SelectKey {
                selector: selector.clone(),
            },
            None,
            self.value_serde.clone(),
        );
        self.builder.mark_key_changing(&out.node);
        out.repartition_required = true;
        out
    }

    /// Calls `action` on each record and passes it on, Kafka's `peek`.
    /// A tombstone is passed on without a call.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::rc::Rc;
    /// use streams_test::{KeyValue, example};
    ///
    /// let seen = Rc::new(RefCell::new(Vec::new()));
    /// let log = seen.clone();
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("in")
    ///         .peek(move |k, v| log.borrow_mut().push(format!("{k:?}={v}")))
    ///         .to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_key_value("a", "1");
    /// input.pipe_tombstone("b");
    /// assert_eq!(*seen.borrow(), ["Some(\"a\")=1"]);
    /// assert_eq!(
    ///     driver.output::<String, String>("out").read_key_values_to_list(),
    ///     [KeyValue::pair("a", "1"), KeyValue::tombstone("b")]
    /// );
    /// ```
    #[must_use]
    pub fn peek(mut self, action: impl Fn(Option<&K>, &V) + 'static) -> Self {
        let name = self.take_name_and_number("KSTREAM-PEEK-");
        let action: KvFn<K, V, ()> = Rc::new(action);
        self.add_processor(
            name,
            move || Peek {
                action: action.clone(),
                forward: true,
            },
            self.key_serde.clone(),
            self.value_serde.clone(),
        )
    }

    /// Calls `action` on each record, a terminal operation, Kafka's
    /// `foreach`. Tombstones are skipped.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::rc::Rc;
    /// use streams_test::example;
    ///
    /// let totals = Rc::new(RefCell::new(0_i64));
    /// let sum = totals.clone();
    /// let driver = example(|builder| {
    ///     builder.stream::<String, i64>("amounts").foreach(move |_, amount| *sum.borrow_mut() += amount);
    /// });
    /// let amounts = driver.input::<String, i64>("amounts");
    /// amounts.pipe_key_values([("a", 5), ("b", 7)]);
    /// amounts.pipe_tombstone("c");
    /// assert_eq!(*totals.borrow(), 12);
    /// assert!(driver.produced_topic_names().is_empty()); // foreach writes nothing
    /// ```
    pub fn foreach(mut self, action: impl Fn(Option<&K>, &V) + 'static) {
        let name = self.take_name_and_number("KSTREAM-FOREACH-");
        let action: KvFn<K, V, ()> = Rc::new(action);
        self.add_processor::<K, V, _, _>(
            name,
            move || Peek {
                action: action.clone(),
                forward: false,
            },
            None,
            None,
        );
    }

    /// The records of this stream and `other`, Kafka's `merge`, in the
    /// order they are processed.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     let web = builder.stream::<String, String>("web-orders");
    ///     let shop = builder.stream::<String, String>("shop-orders");
    ///     web.merge(&shop).to("orders");
    /// });
    /// driver.input::<String, String>("web-orders").pipe_key_value("o1", "pen");
    /// driver.input::<String, String>("shop-orders").pipe_key_value("o2", "ink");
    /// driver.input::<String, String>("web-orders").pipe_key_value("o3", "cup");
    /// assert_eq!(
    ///     driver.output::<String, String>("orders").read_key_values_to_list(),
    ///     [KeyValue::pair("o1", "pen"), KeyValue::pair("o2", "ink"), KeyValue::pair("o3", "cup")]
    /// );
    /// ```
    #[must_use]
    pub fn merge(mut self, other: &KStream<K, V>) -> Self {
        let name = self.take_name_and_number("KSTREAM-MERGE-");
        self.builder.mark_merge(&name);
        let parents = [self.node.clone(), other.node.clone()];
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, V, K, V, PassThrough, _>(
                &name,
                || PassThrough,
                &[&parents[0], &parents[1]],
            )
        });
        let mut out = KStream::new(
            self.builder.clone(),
            name,
            self.key_serde.clone(),
            self.value_serde.clone(),
        );
        out.repartition_required = self.repartition_required || other.repartition_required;
        out
    }

    /// Attaches a custom processor, Kafka's `process`: it sees every
    /// record as is (tombstones and missing keys too) and may forward any
    /// number of records of new types. The key may have changed, so a
    /// later grouping or join repartitions the stream; use
    /// [`process_values`](KStream::process_values) when the key stays.
    /// The node is `KSTREAM-PROCESSOR-<n>`, or the name given with
    /// [`named`](KStream::named).
    ///
    /// ```
    /// use streams_core::processor::{Processor, ProcessorContext};
    /// use streams_core::{Record, Result};
    /// use streams_test::{KeyValue, example};
    ///
    /// /// Each word of a line becomes a record keyed by the word, with the
    /// /// line's number; a tombstone becomes a `-1`.
    /// struct Words;
    /// impl Processor<i64, String, String, i64> for Words {
    ///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<i64, String>) -> Result<()> {
    ///         match &r.value {
    ///             Some(line) => {
    ///                 for word in line.split(' ') {
    ///                     ctx.forward(Record::new(Some(word.to_owned()), r.key, r.timestamp))?;
    ///                 }
    ///                 Ok(())
    ///             }
    ///             None => ctx.forward(Record::new(Some("<deleted>".to_owned()), Some(-1), r.timestamp)),
    ///         }
    ///     }
    /// }
    /// let driver = example(|builder| {
    ///     builder.stream::<i64, String>("lines").process(|| Words).to("word-lines");
    /// });
    /// let lines = driver.input::<i64, String>("lines");
    /// lines.pipe_key_value(1, "to be");
    /// lines.pipe_tombstone(2);
    /// assert_eq!(
    ///     driver.output::<String, i64>("word-lines").read_key_values_to_list(),
    ///     [KeyValue::pair("to", 1), KeyValue::pair("be", 1), KeyValue::pair("<deleted>", -1)]
    /// );
    /// ```
    ///
    /// A processor reaches the stores connected to it. Kafka's
    /// `process(supplier, "store")` and `StreamsBuilder.addStateStore`
    /// have no counterpart here yet: add the store to the built
    /// [`Topology`](crate::Topology), naming the processor.
    ///
    /// ```
    /// use streams_core::processor::{Processor, ProcessorContext};
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::state::Stores;
    /// use streams_core::{Record, Result, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// /// Numbers each key's records, counting them in the store `seen`.
    /// struct Number;
    /// impl Processor<String, String, String, i64> for Number {
    ///     fn process(&mut self, ctx: &mut ProcessorContext<'_, String, i64>, r: Record<String, String>) -> Result<()> {
    ///         let Some(key) = r.key.clone() else { return Ok(()) };
    ///         let n = {
    ///             let mut seen = ctx.key_value_store::<String, i64>("seen")?;
    ///             let n = seen.get(&key)?.unwrap_or(0) + 1;
    ///             seen.put(key, n)?;
    ///             n
    ///         };
    ///         ctx.forward(r.with_value(Some(n)))
    ///     }
    /// }
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").named("number").process(|| Number).to("numbered");
    /// let mut topology = builder.build()?;
    /// topology.add_state_store(Stores::key_value_store_builder("seen", StringSerde, I64Serde), &["number"])?;
    /// let driver = TopologyTestDriver::new(topology)?;
    /// let input = driver.create_input_topic("in", StringSerde, StringSerde);
    /// input.pipe_key_values([("a", "x"), ("b", "y"), ("a", "z")]);
    /// let numbered = driver.create_output_topic("numbered", StringSerde, I64Serde);
    /// assert_eq!(
    ///     numbered.read_key_values_to_list(),
    ///     [KeyValue::pair("a", 1), KeyValue::pair("b", 1), KeyValue::pair("a", 2)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn process<KR, VR, P>(mut self, supplier: impl Fn() -> P + 'static) -> KStream<KR, VR>
    where
        KR: Clone + 'static,
        VR: Clone + 'static,
        P: Processor<K, V, KR, VR>,
    {
        let name = self.take_name_or_number("KSTREAM-PROCESSOR-");
        let mut out = self.add_processor(name, supplier, None, None);
        out.repartition_required = true;
        out
    }

    /// Attaches a custom processor that keeps each record's key, Kafka's
    /// `processValues` (KIP-820): a [`FixedKeyProcessor`] forwards
    /// [`FixedKeyRecord`](crate::processor::FixedKeyRecord)s, whose key it
    /// cannot change, so the stream keeps its partitioning (a later
    /// grouping or join needs no repartition, unlike after `process`). The
    /// node is `KSTREAM-PROCESSVALUES-<n>`, or the name given with
    /// [`named`](KStream::named). See [`crate::processor::FixedKeyProcessor`]
    /// for an example.
    ///
    /// ```
    /// use streams_core::processor::{FixedKeyProcessor, FixedKeyProcessorContext, FixedKeyRecord};
    /// use streams_core::{Result, StreamsBuilder};
    ///
    /// struct Upper;
    /// impl FixedKeyProcessor<String, String> for Upper {
    ///     fn process(&mut self, ctx: &mut FixedKeyProcessorContext<'_, String, String>, r: FixedKeyRecord<String, String>) -> Result<()> {
    ///         let v = r.value().map(|v| v.to_uppercase());
    ///         ctx.forward(r.with_value(v))
    ///     }
    /// }
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("in").process_values(|| Upper).group_by_key().count();
    /// // No repartition topic: the key did not change.
    /// assert_eq!(
    ///     builder.build()?.node_names(),
    ///     ["KSTREAM-SOURCE-0000000000", "KSTREAM-PROCESSVALUES-0000000001", "KSTREAM-AGGREGATE-0000000003"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "processValues")]
    pub fn process_values<VR, P>(mut self, supplier: impl Fn() -> P + 'static) -> KStream<K, VR>
    where
        VR: Clone + 'static,
        P: FixedKeyProcessor<K, V, VR>,
    {
        let name = self.take_name_or_number("KSTREAM-PROCESSVALUES-");
        self.add_processor(
            name,
            move || FixedKeyAdapter {
                inner: supplier(),
                _input: std::marker::PhantomData,
            },
            self.key_serde.clone(),
            None,
        )
    }

    /// Writes the stream to `topic` with this stream's serdes (or the
    /// defaults), Kafka's `to`. The sink is `KSTREAM-SINK-<n>`, or the
    /// name given with [`named`](KStream::named).
    ///
    /// ```
    /// use streams_test::{TestRecord, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("in").map_values(|v| v.len() as i64).to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// input.pipe_record(TestRecord::key_value("k", "abc").at(42).with_header("trace", "t-1"));
    /// // The record keeps its timestamp and headers; the i64 value is written
    /// // with the built-in serde (8 bytes, big-endian).
    /// assert_eq!(
    ///     driver.output::<String, i64>("out").read_record(),
    ///     TestRecord::key_value("k", 3_i64).at(42).with_header("trace", "t-1")
    /// );
    /// ```
    pub fn to(self, topic: &str) {
        self.to_with(topic, Produced::default());
    }

    /// Writes the stream to `topic` as `produced` says: its serdes (over
    /// the stream's), the sink's name, and a stream partitioner.
    ///
    /// ```
    /// use streams_core::serde::{JsonSerde, StringSerde};
    /// use streams_core::{Produced, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("in")
    ///     .map_values(|v| vec![v.len() as i64])
    ///     .to_with("out", Produced::with(StringSerde, JsonSerde::<Vec<i64>>::new()).with_name("to-out"));
    /// let topology = builder.build()?;
    /// assert_eq!(topology.node_names(), ["KSTREAM-SOURCE-0000000000", "KSTREAM-MAPVALUES-0000000001", "to-out"]);
    /// let driver = TopologyTestDriver::new(topology)?;
    /// let input = driver.create_input_topic("in", StringSerde, StringSerde);
    /// let out = driver.create_output_topic("out", StringSerde, StringSerde); // JSON is text
    /// input.pipe_key_value("k", "abc");
    /// assert_eq!(out.read_key_values_to_list(), [KeyValue::pair("k", "[3]")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_with(mut self, topic: &str, produced: Produced<K, V>) {
        let generated = self.take_name_and_number("KSTREAM-SINK-");
        let name = produced.name.unwrap_or(generated);
        let ks = produced.key_serde.or(self.key_serde.clone());
        let vs = produced.value_serde.or(self.value_serde.clone());
        let parent = self.node.clone();
        let topic = TopicName::external(topic);
        self.builder.with_topology(|t| {
            t.add_typed_sink::<K, V>(
                &name,
                SinkTopic::Fixed(topic),
                ks,
                vs,
                produced.partitioner.map_or(
                    SinkPartitioning::BaseKeyIfWindowed,
                    SinkPartitioning::Custom,
                ),
                &[&parent],
            )
        });
    }

    /// Writes each record to the topic `extractor` names for it, Kafka's
    /// `to(TopicNameExtractor)`: a closure over the [`Record`](crate::Record),
    /// or a [`TopicNameExtractor`] whose `name()` `describe()` shows.
    ///
    /// ```
    /// use streams_core::Record;
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("events")
    ///         .to_dynamic(|r: &Record<String, String>| format!("events-{}", r.key.as_deref().unwrap_or("other")));
    /// });
    /// let events = driver.input::<String, String>("events");
    /// events.pipe_key_value("eu", "e1");
    /// events.pipe_key_value("us", "e2");
    /// events.pipe_value("e3");
    /// assert_eq!(driver.output::<String, String>("events-eu").read_key_values_to_list(), [KeyValue::pair("eu", "e1")]);
    /// assert_eq!(driver.output::<String, String>("events-us").read_key_values_to_list(), [KeyValue::pair("us", "e2")]);
    /// assert_eq!(driver.output::<String, String>("events-other").read_values_to_list(), [Some("e3".to_owned())]);
    /// assert_eq!(driver.produced_topic_names().len(), 3);
    /// ```
    #[doc(alias = "to")]
    #[doc(alias = "TopicNameExtractor")]
    pub fn to_dynamic(self, extractor: impl TopicNameExtractor<K, V>) {
        self.to_dynamic_with(extractor, Produced::default());
    }

    /// As [`KStream::to_dynamic`], with serdes and name from `produced`.
    ///
    /// ```
    /// use streams_core::serde::{JsonSerde, StringSerde};
    /// use streams_core::{Produced, Record};
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, i64>("amounts").to_dynamic_with(
    ///         |r: &Record<String, i64>| if r.value.unwrap_or(0) < 0 { "refunds".to_owned() } else { "payments".to_owned() },
    ///         Produced::with(StringSerde, JsonSerde::<i64>::new()), // amounts as JSON text
    ///     );
    /// });
    /// driver.input::<String, i64>("amounts").pipe_key_values([("a", 5), ("b", -2)]);
    /// assert_eq!(driver.output::<String, String>("payments").read_key_values_to_list(), [KeyValue::pair("a", "5")]);
    /// assert_eq!(driver.output::<String, String>("refunds").read_key_values_to_list(), [KeyValue::pair("b", "-2")]);
    /// ```
    pub fn to_dynamic_with(
        mut self,
        extractor: impl TopicNameExtractor<K, V>,
        produced: Produced<K, V>,
    ) {
        let generated = self.take_name_and_number("KSTREAM-SINK-");
        let name = produced.name.unwrap_or(generated);
        let ks = produced.key_serde.or(self.key_serde.clone());
        let vs = produced.value_serde.or(self.value_serde.clone());
        let parent = self.node.clone();
        let (extractor, shown) = extractor_parts(extractor);
        self.builder.with_topology(|t| {
            t.add_typed_sink::<K, V>(
                &name,
                SinkTopic::Extractor(extractor, shown),
                ks,
                vs,
                produced.partitioner.map_or(
                    SinkPartitioning::BaseKeyIfWindowed,
                    SinkPartitioning::Custom,
                ),
                &[&parent],
            )
        });
    }

    /// Sends the stream through an internal topic, Kafka's `repartition()`:
    /// `<application.id>-KSTREAM-REPARTITION-000000000N-repartition`.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder.stream::<String, String>("in").repartition().to("out");
    /// });
    /// let input = driver.input::<String, String>("in");
    /// let out = driver.output::<String, String>("out");
    /// input.pipe_key_value("k", "v");
    /// assert_eq!(out.read_key_values_to_list(), [KeyValue::pair("k", "v")]);
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     ["out", "test-app-KSTREAM-REPARTITION-0000000001-repartition"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn repartition(self) -> Self {
        self.repartition_with(Repartitioned::default())
    }

    /// As [`KStream::repartition`], with serdes and the topic's name
    /// (`<application.id>-<name>-repartition`) from `repartitioned`, and
    /// its partition count and partitioner for the runtime (the driver
    /// has one partition).
    ///
    /// ```
    /// use streams_core::dsl::Repartitioned;
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, i64>("amounts")
    ///         .select_key(|_, amount| if *amount < 0 { "refund".to_owned() } else { "payment".to_owned() })
    ///         .repartition_with(Repartitioned::with(StringSerde, I64Serde).with_name("by-kind"))
    ///         .to("by-kind");
    /// });
    /// driver.input::<String, i64>("amounts").pipe_key_values([("a", 5), ("b", -2)]);
    /// assert_eq!(
    ///     driver.output::<String, i64>("by-kind").read_key_values_to_list(),
    ///     [KeyValue::pair("payment", 5), KeyValue::pair("refund", -2)]
    /// );
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     ["by-kind", "test-app-by-kind-repartition"]
    /// );
    /// ```
    #[must_use]
    pub fn repartition_with(mut self, repartitioned: Repartitioned<K, V>) -> Self {
        // A given name takes no number here; the topic's nodes take three.
        let base = match repartitioned.name {
            Some(n) => n,
            None => self.take_name_or_number("KSTREAM-REPARTITION-"),
        };
        let ks = repartitioned.key_serde.or(self.key_serde.clone());
        let vs = repartitioned.value_serde.or(self.value_serde.clone());
        let topic = if base.ends_with("-repartition") {
            base.clone()
        } else {
            format!("{base}-repartition")
        };
        if let Some(n) = repartitioned.partitions {
            self.builder.with_topology(|t| {
                if n < 1 {
                    return Err(TopologyError::InvalidPartitionCount {
                        topic: topic.clone(),
                        partitions: n,
                    });
                }
                t.set_repartition_partitions(&topic, n);
                Ok(())
            });
        }
        let mut out = self.through_repartition_topic(&base, ks, vs, repartitioned.partitioner);
        out.key_serde = self.key_serde.clone();
        out.value_serde = self.value_serde.clone();
        out
    }
}
