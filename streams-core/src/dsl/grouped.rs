//! Grouping and aggregation: `KGroupedStream` and `KGroupedTable`.

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use crate::dsl::ktable::{GetterSupplier, KTable, store_getter};
use crate::dsl::table_processors::{StreamAggregate, TableAggregate, TableRepartitionMap};
use crate::dsl::{Grouped, KStream, Materialized, StreamsBuilder};
use crate::record::Change;
use crate::serde::{I64Serde, Serde, SerdeError, SerdeRef};
use crate::state::DslKeyValueStoreBuilder;
use crate::topology::{NodeKind, SinkTopic, TopicName};

/// A stream grouped by key, ready to aggregate, Kafka's `KGroupedStream`.
///
/// If the key was changed upstream (`map`, `select_key`, `flat_map`,
/// `process`, or `group_by`), the records first go through a repartition
/// topic, `<application.id>-<store or grouped name>-repartition`, as in Kafka.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .stream::<String, String>("text")
///     .flat_map_values(|line: &String| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
///     .group_by(|_, word| word.clone())
///     .count()
///     .to_stream()
///     .to("counts");
/// let topology = builder.build()?;
/// assert_eq!(topology.store_names(), ["KSTREAM-AGGREGATE-STATE-STORE-0000000003"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KGroupedStream<K, V> {
    pub(crate) stream: KStream<K, V>,
    pub(crate) grouped: Grouped<K, V>,
    pub(crate) repartition_required: bool,
}

impl<K, V> fmt::Debug for KGroupedStream<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KGroupedStream")
            .field("node", &self.stream.node)
            .field("repartition_required", &self.repartition_required)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Groups the records by their key, Kafka's `groupByKey`.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder.stream::<String, String>("clicks").group_by_key().count().to_stream().to("clicks-per-user");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
    /// let counts = driver.create_output_topic("clicks-per-user", StringSerde, I64Serde);
    /// clicks.pipe_key_value("ann", "home");
    /// clicks.pipe_key_value("bob", "home");
    /// clicks.pipe_key_value("ann", "cart");
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [KeyValue::pair("ann", 1), KeyValue::pair("bob", 1), KeyValue::pair("ann", 2)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_by_key(self) -> KGroupedStream<K, V> {
        self.group_by_key_with(Grouped::default())
    }

    /// As [`KStream::group_by_key`], with serdes and the repartition
    /// topic's name from `grouped`.
    pub fn group_by_key_with(self, grouped: Grouped<K, V>) -> KGroupedStream<K, V> {
        let repartition_required = self.repartition_required;
        KGroupedStream {
            stream: self,
            grouped,
            repartition_required,
        }
    }

    /// Groups the records by a new key, Kafka's `groupBy`: a `select_key`
    /// node (named after `grouped`, if named) and then a repartition.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("text")
    ///     .flat_map_values(|line| line.split(' ').map(str::to_owned).collect::<Vec<_>>())
    ///     .group_by(|_, word| word.clone())
    ///     .count()
    ///     .to_stream()
    ///     .to("word-counts");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let text = driver.create_input_topic("text", StringSerde, StringSerde);
    /// let counts = driver.create_output_topic("word-counts", StringSerde, I64Serde);
    /// text.pipe_value("to be or not to be");
    /// // Each word goes through the repartition topic as a record of its own.
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("to", 1),
    ///         KeyValue::pair("be", 1),
    ///         KeyValue::pair("or", 1),
    ///         KeyValue::pair("not", 1),
    ///         KeyValue::pair("to", 2),
    ///         KeyValue::pair("be", 2),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_by<KR: Ord + Clone + 'static>(
        self,
        selector: impl Fn(Option<&K>, &V) -> KR + 'static,
    ) -> KGroupedStream<KR, V> {
        self.group_by_with(selector, Grouped::default())
    }

    /// As [`KStream::group_by`], with options.
    pub fn group_by_with<KR: Ord + Clone + 'static>(
        mut self,
        selector: impl Fn(Option<&K>, &V) -> KR + 'static,
        grouped: Grouped<KR, V>,
    ) -> KGroupedStream<KR, V> {
        if let Some(n) = &grouped.name {
            self = self.named(n.clone());
        }
        let mut keyed = self.select_key(selector);
        keyed.repartition_required = true;
        KGroupedStream {
            stream: keyed,
            grouped,
            repartition_required: true,
        }
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedStream<K, V> {
    fn store_name<VA>(&self, prefix: &str, materialized: &Materialized<K, VA>) -> String {
        match &materialized.name {
            Some(n) => n.clone(),
            None => self.stream.builder().new_store_name(prefix),
        }
    }

    fn build<VA: Clone + 'static>(
        self,
        prefix: &str,
        store: String,
        materialized: Materialized<K, VA>,
        first: Rc<dyn Fn(&K, &V) -> VA>,
        aggregator: Rc<dyn Fn(&K, &V, VA) -> VA>,
    ) -> KTable<K, VA> {
        let mut stream = self.stream;
        let name = stream.take_name(prefix);
        let key_serde = self.grouped.key_serde.clone().or(stream.key_serde.clone());
        let value_serde = self
            .grouped
            .value_serde
            .clone()
            .or(stream.value_serde.clone());
        if self.repartition_required {
            let base = self.grouped.name.clone().unwrap_or_else(|| store.clone());
            stream = stream.through_internal_topic(&base, key_serde.clone(), value_serde);
        }
        let builder = stream.builder().clone();
        let store_key_serde = materialized.key_serde.clone().or(key_serde.clone());
        let value_serde = materialized.value_serde.clone();
        let send_old = Rc::new(std::cell::Cell::new(false));
        let parent = stream.node_name().to_owned();
        let (flag, sname) = (send_old.clone(), store.clone());
        builder.with_topology(|t| {
            t.add_typed_processor::<K, V, K, Change<VA>, _, _>(
                &name,
                move || StreamAggregate {
                    store: sname.clone(),
                    first: first.clone(),
                    aggregator: aggregator.clone(),
                    send_old: flag.get(),
                    cache: Default::default(),
                },
                &[&parent],
            )?;
            t.add_state_store(
                DslKeyValueStoreBuilder::<K, VA> {
                    name: store.clone(),
                    key_serde: store_key_serde,
                    value_serde: value_serde.clone(),
                    logging: materialized.logging,
                    caching: materialized.caching,
                },
                &[&name],
            )
            .map(|_| ())
        });
        let flag = send_old.clone();
        KTable {
            builder,
            node: name,
            key_serde,
            value_serde,
            store: Some(store.clone()),
            send_old,
            enable_old: Rc::new(move || flag.set(true)),
            getter: store_getter::<K, VA>(store),
            next_name: None,
        }
    }

    /// Counts the records per key, Kafka's `count`. Records with a null
    /// key or value are dropped and counted.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{Materialized, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("clicks")
    ///     .group_by(|_, page| page.clone())
    ///     .count_with(Materialized::as_("clicks-per-page"))
    ///     .to_stream()
    ///     .to("page-counts");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let clicks = driver.create_input_topic("clicks", StringSerde, StringSerde);
    /// let counts = driver.create_output_topic("page-counts", StringSerde, I64Serde);
    /// clicks.pipe_key_value("ann", "home");
    /// clicks.pipe_key_value("bob", "home");
    /// assert_eq!(counts.read_key_values_to_list(), [KeyValue::pair("home", 1), KeyValue::pair("home", 2)]);
    /// let store = driver.timestamped_key_value_store::<String, i64>("clicks-per-page")?;
    /// assert_eq!(store.get(&"home".to_string()).map(|v| v.value), Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(self) -> KTable<K, i64> {
        self.count_with(Materialized::default())
    }

    /// As [`KGroupedStream::count`], with the store from `materialized`.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<K, i64> {
        let materialized = match materialized.value_serde {
            Some(_) => materialized,
            None => materialized.with_value_serde(I64Serde),
        };
        let store = self.store_name("KSTREAM-AGGREGATE-", &materialized);
        self.build(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            Rc::new(|_, _| 1),
            Rc::new(|_, _, count| count + 1),
        )
    }

    /// Combines the values per key, Kafka's `reduce`: the first value is
    /// the aggregate, then `reducer(aggregate, value)`.
    ///
    /// ```
    /// use streams_core::serde::StringSerde;
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("visits")
    ///     .group_by_key()
    ///     .reduce(|path, page| format!("{path} > {page}"))
    ///     .to_stream()
    ///     .to("paths");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let visits = driver.create_input_topic("visits", StringSerde, StringSerde);
    /// let paths = driver.create_output_topic("paths", StringSerde, StringSerde);
    /// visits.pipe_key_value("ann", "home");
    /// visits.pipe_key_value("ann", "cart");
    /// assert_eq!(
    ///     paths.read_key_values_to_list(),
    ///     [KeyValue::pair("ann", "home"), KeyValue::pair("ann", "home > cart")]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(self, reducer: impl Fn(&V, &V) -> V + 'static) -> KTable<K, V> {
        self.reduce_with(reducer, Materialized::default())
    }

    /// As [`KGroupedStream::reduce`], with the store from `materialized`.
    pub fn reduce_with(
        self,
        reducer: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        let materialized = match (
            &materialized.value_serde,
            &self.grouped.value_serde,
            &self.stream.value_serde,
        ) {
            (None, Some(s), _) | (None, None, Some(s)) => {
                let s = s.clone();
                Materialized {
                    value_serde: Some(s),
                    ..materialized
                }
            }
            _ => materialized,
        };
        let store = self.store_name("KSTREAM-REDUCE-", &materialized);
        self.build(
            "KSTREAM-REDUCE-",
            store,
            materialized,
            Rc::new(|_, v: &V| v.clone()),
            Rc::new(move |_, v, agg| reducer(&agg, v)),
        )
    }

    /// Aggregates the values per key, Kafka's `aggregate`: the first value
    /// of a key is added to `initializer()`.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .stream::<String, String>("messages")
    ///     .group_by_key()
    ///     .aggregate(|| 0_i64, |_, text: &String, chars| chars + text.len() as i64)
    ///     .to_stream()
    ///     .to("chars-per-user");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let messages = driver.create_input_topic("messages", StringSerde, StringSerde);
    /// let chars = driver.create_output_topic("chars-per-user", StringSerde, I64Serde);
    /// messages.pipe_key_value("ann", "hi");
    /// messages.pipe_key_value("ann", "bye");
    /// assert_eq!(chars.read_key_values_to_list(), [KeyValue::pair("ann", 2), KeyValue::pair("ann", 5)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> KTable<K, VA> {
        self.aggregate_with(initializer, aggregator, Materialized::default())
    }

    /// As [`KGroupedStream::aggregate`], with the store from `materialized`.
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        aggregator: impl Fn(&K, &V, VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<K, VA> {
        let store = self.store_name("KSTREAM-AGGREGATE-", &materialized);
        let aggregator: Rc<dyn Fn(&K, &V, VA) -> VA> = Rc::new(aggregator);
        let a = aggregator.clone();
        self.build(
            "KSTREAM-AGGREGATE-",
            store,
            materialized,
            Rc::new(move |k, v| a(k, v, initializer())),
            aggregator,
        )
    }
}

/// Whether a repartition prefix is a generated name (`KSTREAM...-0000000007`),
/// in which case the repartition nodes keep their generated names.
pub(crate) fn is_generated_name(prefix: &str) -> bool {
    prefix.starts_with("KSTREAM")
        && prefix.len() > 11
        && prefix.as_bytes()[prefix.len() - 11] == b'-'
        && prefix[prefix.len() - 10..]
            .bytes()
            .all(|b| b.is_ascii_digit())
}

impl<K: Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// Sends the stream through the internal topic `<prefix>-repartition`
    /// with Kafka's node names: generated ones when `prefix` is a
    /// generated name, `<topic>-filter/-sink/-source` otherwise. Three
    /// numbers of the counter are taken either way.
    pub(crate) fn through_internal_topic(
        &self,
        prefix: &str,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> KStream<K, V> {
        let topic = if prefix.ends_with("-repartition") {
            prefix.to_owned()
        } else {
            format!("{prefix}-repartition")
        };
        let gen_sink = self.builder().new_name("KSTREAM-SINK-");
        let gen_filter = self.builder().new_name("KSTREAM-FILTER-");
        let gen_source = self.builder().new_name("KSTREAM-SOURCE-");
        let (sink, filter, source) = if is_generated_name(prefix) {
            (gen_sink, gen_filter, gen_source)
        } else {
            (
                format!("{topic}-sink"),
                format!("{topic}-filter"),
                format!("{topic}-source"),
            )
        };
        let parent = self.node_name().to_owned();
        let (ks, vs) = (key_serde.clone(), value_serde.clone());
        self.builder().with_topology(|t| {
            t.add_typed_processor::<K, V, K, V, crate::dsl::processors::PassThrough, _>(
                &filter,
                || crate::dsl::processors::PassThrough,
                &[&parent],
            )?;
            t.add_typed_sink::<K, V>(
                &sink,
                SinkTopic::Fixed(TopicName::internal(topic.clone())),
                ks,
                vs,
                &[&filter],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<K, V>(&source, kind, key_serde.clone(), value_serde.clone())
        });
        KStream::new(self.builder().clone(), source, key_serde, value_serde)
    }
}

/// Kafka's `ChangedSerializer` wire format, for table updates crossing a
/// repartition topic: `old ++ [0]`, `new ++ [1]`, or
/// `varint(len(new)) ++ new ++ old ++ [2]`.
pub(crate) struct ChangeSerde<V> {
    inner: SerdeRef<V>,
}

fn write_varint(value: i32, out: &mut Vec<u8>) {
    let mut v = ((value << 1) ^ (value >> 31)) as u32;
    while v & !0x7f != 0 {
        out.push(((v & 0x7f) | 0x80) as u8);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8]) -> Result<(i32, usize), SerdeError> {
    let mut value: u32 = 0;
    for (i, &b) in bytes.iter().enumerate().take(5) {
        value |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let decoded = ((value >> 1) as i32) ^ -((value & 1) as i32);
            return Ok((decoded, i + 1));
        }
    }
    Err(SerdeError::new("malformed varint in a table change record"))
}

impl<V: 'static> Serde<Change<V>> for ChangeSerde<V> {
    fn serialize(&self, topic: &str, change: &Change<V>) -> Result<Vec<u8>, SerdeError> {
        match (&change.new, &change.old) {
            (Some(n), Some(o)) => {
                let new = self.inner.serialize(topic, n)?;
                let old = self.inner.serialize(topic, o)?;
                let len =
                    i32::try_from(new.len()).map_err(|_| SerdeError::new("value too large"))?;
                let mut out = Vec::with_capacity(new.len() + old.len() + 6);
                write_varint(len, &mut out);
                out.extend_from_slice(&new);
                out.extend_from_slice(&old);
                out.push(2);
                Ok(out)
            }
            (Some(n), None) => {
                let mut out = self.inner.serialize(topic, n)?;
                out.push(1);
                Ok(out)
            }
            (None, Some(o)) => {
                let mut out = self.inner.serialize(topic, o)?;
                out.push(0);
                Ok(out)
            }
            (None, None) => Err(SerdeError::new(
                "both old and new values are null in a table change, which cannot be written",
            )),
        }
    }

    fn deserialize(&self, topic: &str, bytes: &[u8]) -> Result<Change<V>, SerdeError> {
        let Some((&flag, body)) = bytes.split_last() else {
            return Err(SerdeError::new("empty table change record"));
        };
        match flag {
            0 => Ok(Change::new(
                None,
                Some(self.inner.deserialize(topic, body)?),
            )),
            1 => Ok(Change::new(
                Some(self.inner.deserialize(topic, body)?),
                None,
            )),
            2 => {
                let (len, used) = read_varint(body)?;
                let len = usize::try_from(len)
                    .map_err(|_| SerdeError::new("negative length in a table change"))?;
                let rest = &body[used..];
                if rest.len() < len {
                    return Err(SerdeError::new("truncated table change record"));
                }
                let (new, old) = rest.split_at(len);
                Ok(Change::new(
                    Some(self.inner.deserialize(topic, new)?),
                    Some(self.inner.deserialize(topic, old)?),
                ))
            }
            other => Err(SerdeError::new(format!(
                "unknown table change encoding flag {other}"
            ))),
        }
    }
}

/// A table grouped by a new key, ready to aggregate, Kafka's `KGroupedTable`.
///
/// Each update of the source table reaches the aggregation as the removal
/// of the old row (through the subtractor) and the addition of the new one
/// (through the adder).
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder
///     .table::<String, String>("user-regions")
///     .group_by(|_user, region| (region.clone(), 1_i64))
///     .count()
///     .to_stream()
///     .to("users-per-region");
/// assert_eq!(builder.build()?.store_names().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KGroupedTable<K, V> {
    builder: StreamsBuilder,
    node: String,
    grouped: Grouped<K, V>,
}

impl<K, V> fmt::Debug for KGroupedTable<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KGroupedTable")
            .field("node", &self.node)
            .finish()
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KTable<K, V> {
    /// Re-keys the table for an aggregation, Kafka's `KTable.groupBy`.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, String>("user-regions")
    ///     .group_by(|user, region| (region.clone(), user.clone()))
    ///     .count()
    ///     .to_stream()
    ///     .to("users-per-region");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let regions = driver.create_input_topic("user-regions", StringSerde, StringSerde);
    /// let counts = driver.create_output_topic("users-per-region", StringSerde, I64Serde);
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_key_value("ann", "US"); // leaves EU, joins US
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("EU", 1),
    ///         KeyValue::pair("EU", 2),
    ///         KeyValue::pair("EU", 1),
    ///         KeyValue::pair("US", 1),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group_by<KR: Ord + Clone + 'static, VR: Clone + 'static>(
        self,
        selector: impl Fn(&K, &V) -> (KR, VR) + 'static,
    ) -> KGroupedTable<KR, VR> {
        self.group_by_with(selector, Grouped::default())
    }

    /// As [`KTable::group_by`], with serdes and a name from `grouped`.
    pub fn group_by_with<KR: Ord + Clone + 'static, VR: Clone + 'static>(
        self,
        selector: impl Fn(&K, &V) -> (KR, VR) + 'static,
        grouped: Grouped<KR, VR>,
    ) -> KGroupedTable<KR, VR> {
        let generated = self.builder.new_name("KTABLE-SELECT-");
        let name = grouped.name.clone().unwrap_or(generated);
        self.enable_sending_old_values();
        let selector: Rc<dyn Fn(&K, &V) -> (KR, VR)> = Rc::new(selector);
        let parent = self.node.clone();
        self.builder.with_topology(|t| {
            t.add_typed_processor::<K, Change<V>, KR, Change<VR>, _, _>(
                &name,
                move || TableRepartitionMap {
                    selector: selector.clone(),
                },
                &[&parent],
            )
        });
        KGroupedTable {
            builder: self.builder.clone(),
            node: name,
            grouped,
        }
    }
}

impl<K: Ord + Clone + 'static, V: Clone + 'static> KGroupedTable<K, V> {
    fn build<VA: Clone + 'static>(
        self,
        prefix: &str,
        materialized: Materialized<K, VA>,
        first: Rc<dyn Fn(&K, &V) -> VA>,
        adder: Rc<dyn Fn(&K, &V, VA) -> VA>,
        subtractor: Rc<dyn Fn(&K, &V, VA) -> VA>,
    ) -> KTable<K, VA> {
        // Kafka names the store of every grouped-table operation
        // `KTABLE-AGGREGATE-STATE-STORE-<n>`, a reduce's too (only the node
        // is `KTABLE-REDUCE-<n>`).
        let store = match &materialized.name {
            Some(n) => n.clone(),
            None => self.builder.new_store_name("KTABLE-AGGREGATE-"),
        };
        let named = self.grouped.name.clone();
        let burn_sink = self.builder.new_name("KSTREAM-SINK-");
        let burn_source = self.builder.new_name("KSTREAM-SOURCE-");
        let (sink, source) = match &named {
            Some(n) => (format!("{n}-sink"), format!("{n}-source")),
            None => (burn_sink, burn_source),
        };
        let generated = self.builder.new_name(prefix);
        let name = named.clone().unwrap_or(generated);
        let topic = format!("{}-repartition", named.unwrap_or_else(|| store.clone()));
        let key_serde = self.grouped.key_serde.clone();
        let change_serde: Option<SerdeRef<Change<V>>> = self
            .grouped
            .value_serde
            .clone()
            .map(|inner| Arc::new(ChangeSerde { inner }) as SerdeRef<Change<V>>);
        let store_key_serde = materialized.key_serde.clone().or(key_serde.clone());
        let value_serde = materialized.value_serde.clone();
        let send_old = Rc::new(std::cell::Cell::new(false));
        let (flag, sname, parent) = (send_old.clone(), store.clone(), self.node.clone());
        let change_serde_for_source = change_serde.clone();
        let ks2 = key_serde.clone();
        let (logging, caching) = (materialized.logging, materialized.caching);
        self.builder.with_topology(|t| {
            t.add_typed_sink::<K, Change<V>>(
                &sink,
                SinkTopic::Fixed(TopicName::internal(topic.clone())),
                ks2.clone(),
                change_serde.clone().or_else(|| default_change_serde::<V>()),
                &[&parent],
            )?;
            let kind = NodeKind::Source {
                topics: vec![TopicName::internal(topic.clone())],
                pattern: None,
            };
            t.add_typed_source::<K, Change<V>>(
                &source,
                kind,
                ks2,
                change_serde_for_source.or_else(|| default_change_serde::<V>()),
            )?;
            t.add_typed_processor::<K, Change<V>, K, Change<VA>, _, _>(
                &name,
                move || TableAggregate {
                    store: sname.clone(),
                    first: first.clone(),
                    adder: adder.clone(),
                    subtractor: subtractor.clone(),
                    send_old: flag.get(),
                    cache: Default::default(),
                },
                &[&source],
            )?;
            t.add_state_store(
                DslKeyValueStoreBuilder::<K, VA> {
                    name: store.clone(),
                    key_serde: store_key_serde,
                    value_serde: value_serde.clone(),
                    logging,
                    caching,
                },
                &[&name],
            )
            .map(|_| ())
        });
        let flag = send_old.clone();
        let getter: GetterSupplier<K, VA> = store_getter::<K, VA>(store.clone());
        KTable {
            builder: self.builder,
            node: name,
            key_serde,
            value_serde,
            store: Some(store),
            send_old,
            enable_old: Rc::new(move || flag.set(true)),
            getter,
            next_name: None,
        }
    }

    /// Counts the rows per key, Kafka's `KGroupedTable.count`.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::{Materialized, StreamsBuilder};
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, String>("user-regions")
    ///     .group_by(|user, region| (region.clone(), user.clone()))
    ///     .count_with(Materialized::as_("region-counts"))
    ///     .to_stream()
    ///     .to("users-per-region");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let regions = driver.create_input_topic("user-regions", StringSerde, StringSerde);
    /// let counts = driver.create_output_topic("users-per-region", StringSerde, I64Serde);
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_tombstone("bob"); // a deleted row is subtracted
    /// assert_eq!(
    ///     counts.read_key_values_to_list(),
    ///     [KeyValue::pair("EU", 1), KeyValue::pair("EU", 2), KeyValue::pair("EU", 1)]
    /// );
    /// let store = driver.timestamped_key_value_store::<String, i64>("region-counts")?;
    /// assert_eq!(store.get(&"EU".to_string()).map(|v| v.value), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn count(self) -> KTable<K, i64> {
        self.count_with(Materialized::default())
    }

    /// As [`KGroupedTable::count`], with the store from `materialized`.
    pub fn count_with(self, materialized: Materialized<K, i64>) -> KTable<K, i64> {
        let materialized = match materialized.value_serde {
            Some(_) => materialized,
            None => materialized.with_value_serde(I64Serde),
        };
        self.build(
            "KTABLE-AGGREGATE-",
            materialized,
            Rc::new(|_, _| 1),
            Rc::new(|_, _, c| c + 1),
            Rc::new(|_, _, c| c - 1),
        )
    }

    /// Combines the rows per key: `adder(aggregate, new)` for each added
    /// row and `subtractor(aggregate, old)` for each removed one.
    ///
    /// ```
    /// use streams_core::serde::{I64Serde, StringSerde};
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, i64>("balances") // "region/user" -> balance
    ///     .group_by(|key, balance| (key.split('/').next().unwrap().to_owned(), *balance))
    ///     .reduce(|total, added| total + added, |total, removed| total - removed)
    ///     .to_stream()
    ///     .to("region-totals");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let balances = driver.create_input_topic("balances", StringSerde, I64Serde);
    /// let totals = driver.create_output_topic("region-totals", StringSerde, I64Serde);
    /// balances.pipe_key_value("EU/ann", 10);
    /// balances.pipe_key_value("EU/bob", 5);
    /// balances.pipe_key_value("EU/ann", 7); // subtracts 10, adds 7: one update
    /// assert_eq!(
    ///     totals.read_key_values_to_list(),
    ///     [KeyValue::pair("EU", 10), KeyValue::pair("EU", 15), KeyValue::pair("EU", 12)]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reduce(
        self,
        adder: impl Fn(&V, &V) -> V + 'static,
        subtractor: impl Fn(&V, &V) -> V + 'static,
    ) -> KTable<K, V> {
        self.reduce_with(adder, subtractor, Materialized::default())
    }

    /// As [`KGroupedTable::reduce`], with the store from `materialized`.
    pub fn reduce_with(
        self,
        adder: impl Fn(&V, &V) -> V + 'static,
        subtractor: impl Fn(&V, &V) -> V + 'static,
        materialized: Materialized<K, V>,
    ) -> KTable<K, V> {
        let materialized = match (&materialized.value_serde, &self.grouped.value_serde) {
            (None, Some(s)) => {
                let s = s.clone();
                Materialized {
                    value_serde: Some(s),
                    ..materialized
                }
            }
            _ => materialized,
        };
        self.build(
            "KTABLE-REDUCE-",
            materialized,
            Rc::new(|_, v: &V| v.clone()),
            Rc::new(move |_, v, agg| adder(&agg, v)),
            Rc::new(move |_, v, agg| subtractor(&agg, v)),
        )
    }

    /// Aggregates the rows per key with an adder and a subtractor, Kafka's
    /// `KGroupedTable.aggregate`.
    ///
    /// ```
    /// use streams_core::serde::StringSerde;
    /// use streams_core::StreamsBuilder;
    /// use streams_test::{KeyValue, TopologyTestDriver};
    ///
    /// let builder = StreamsBuilder::new();
    /// builder
    ///     .table::<String, String>("user-regions")
    ///     .group_by(|user, region| (region.clone(), user.clone()))
    ///     .aggregate(
    ///         String::new,
    ///         |_, user, users| if users.is_empty() { user.clone() } else { format!("{users},{user}") },
    ///         |_, user, users| {
    ///             users.split(',').filter(|u| *u != user.as_str()).collect::<Vec<_>>().join(",")
    ///         },
    ///     )
    ///     .to_stream()
    ///     .to("region-users");
    /// let driver = TopologyTestDriver::new(builder.build()?)?;
    /// let regions = driver.create_input_topic("user-regions", StringSerde, StringSerde);
    /// let users = driver.create_output_topic("region-users", StringSerde, StringSerde);
    /// regions.pipe_key_value("ann", "EU");
    /// regions.pipe_key_value("bob", "EU");
    /// regions.pipe_key_value("ann", "US");
    /// assert_eq!(
    ///     users.read_key_values_to_list(),
    ///     [
    ///         KeyValue::pair("EU", "ann"),
    ///         KeyValue::pair("EU", "ann,bob"),
    ///         KeyValue::pair("EU", "bob"),
    ///         KeyValue::pair("US", "ann"),
    ///     ]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn aggregate<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        adder: impl Fn(&K, &V, VA) -> VA + 'static,
        subtractor: impl Fn(&K, &V, VA) -> VA + 'static,
    ) -> KTable<K, VA> {
        self.aggregate_with(initializer, adder, subtractor, Materialized::default())
    }

    /// As [`KGroupedTable::aggregate`], with the store from `materialized`.
    pub fn aggregate_with<VA: Clone + 'static>(
        self,
        initializer: impl Fn() -> VA + 'static,
        adder: impl Fn(&K, &V, VA) -> VA + 'static,
        subtractor: impl Fn(&K, &V, VA) -> VA + 'static,
        materialized: Materialized<K, VA>,
    ) -> KTable<K, VA> {
        let adder: Rc<dyn Fn(&K, &V, VA) -> VA> = Rc::new(adder);
        let a = adder.clone();
        self.build(
            "KTABLE-AGGREGATE-",
            materialized,
            Rc::new(move |k, v| a(k, v, initializer())),
            adder,
            Rc::new(subtractor),
        )
    }
}

/// The change serde over the built-in serde for `V`, if there is one;
/// otherwise the sink and source report the missing serde by name.
fn default_change_serde<V: 'static>() -> Option<SerdeRef<Change<V>>> {
    crate::serde::builtin_serde::<V>()
        .map(|inner| Arc::new(ChangeSerde { inner }) as SerdeRef<Change<V>>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serde::StringSerde;

    #[test]
    fn change_serde_uses_kafkas_wire_format() {
        let serde = ChangeSerde::<String> {
            inner: Arc::new(StringSerde),
        };
        let both = Change::new(Some("ab".to_owned()), Some("c".to_owned()));
        assert_eq!(
            serde.serialize("t", &both).ok(),
            Some(vec![4, b'a', b'b', b'c', 2])
        );
        assert_eq!(
            serde
                .serialize("t", &Change::new(Some("x".to_owned()), None))
                .ok(),
            Some(vec![b'x', 1])
        );
        assert_eq!(
            serde
                .serialize("t", &Change::new(None, Some("y".to_owned())))
                .ok(),
            Some(vec![b'y', 0])
        );
        for change in [
            both,
            Change::new(Some("n".into()), None),
            Change::new(None, Some("o".into())),
        ] {
            let bytes = serde.serialize("t", &change).unwrap_or_default();
            assert_eq!(serde.deserialize("t", &bytes).ok(), Some(change));
        }
        assert!(serde.deserialize("t", &[]).is_err());
        assert!(serde.deserialize("t", &[9]).is_err());
    }

    #[test]
    fn generated_names_are_recognized() {
        assert!(is_generated_name(
            "KSTREAM-AGGREGATE-STATE-STORE-0000000003"
        ));
        assert!(!is_generated_name("counts-store"));
        assert!(!is_generated_name("KSTREAM-X"));
    }
}
