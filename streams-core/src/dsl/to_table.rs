//! [`KStream::to_table`]: a stream read as a table, Kafka's
//! `KStream.toTable`. Each record is the latest value of its key, a
//! tombstone deletes the row and a record without a key is dropped (and
//! counted), as for a table read from a topic with
//! [`StreamsBuilder::table`](crate::dsl::StreamsBuilder::table): the same
//! `KTableSource` processor, under a node named `KSTREAM-TOTABLE-<n>`.
//!
//! After a key change (the stream's repartition mark, see [`KStream`]) the
//! records first go through the internal topic
//! `<application.id>-<node>-repartition`, as in Kafka.

use crate::dsl::ktable::source_table;
use crate::dsl::{KStream, KTable, Materialized};

/// Kafka's `KStreamImpl.TO_KTABLE_NAME`.
const TO_KTABLE_NAME: &str = "KSTREAM-TOTABLE-";

impl<K: Ord + Clone + 'static, V: Clone + 'static> KStream<K, V> {
    /// The stream as a table, Kafka's `toTable()`: each record updates its
    /// key's row, a tombstone deletes it, a record without a key is
    /// dropped and counted in `dropped_records`. The node is
    /// `KSTREAM-TOTABLE-<n>`, or the name given with
    /// [`named`](KStream::named) (Kafka's `toTable(Named)`).
    ///
    /// As a table read from a topic, it has a store
    /// (`KSTREAM-TOTABLE-STATE-STORE-<n>`) only when an operator needs one
    /// (a join, or a downstream operator that needs old values); use
    /// [`to_table_with`](KStream::to_table_with) to keep and query one.
    /// A key changed upstream sends the records through the repartition
    /// topic `<application.id>-<node>-repartition` first.
    ///
    /// ```
    /// use streams_test::{KeyValue, example};
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("logins")
    ///         .to_table()
    ///         .to_stream()
    ///         .to("latest-login");
    ///     // Re-keyed: the table reads the repartition topic.
    ///     builder
    ///         .stream::<String, String>("devices")
    ///         .select_key(|_, device| device.clone())
    ///         .named("by-device")
    ///         .to_table()
    ///         .to_stream()
    ///         .to("device-owners");
    /// });
    /// let logins = driver.input::<String, String>("logins");
    /// let latest = driver.output::<String, String>("latest-login");
    /// logins.pipe_key_value("ann", "10:00");
    /// logins.pipe_tombstone("ann"); // deletes the row: a tombstone downstream
    /// assert_eq!(
    ///     latest.read_key_values_to_list(),
    ///     [KeyValue::pair("ann", "10:00"), KeyValue::tombstone("ann")]
    /// );
    /// driver.input::<String, String>("devices").pipe_key_value("ann", "phone");
    /// assert_eq!(
    ///     driver.output::<String, String>("device-owners").read_key_values_to_list(),
    ///     [KeyValue::pair("phone", "phone")]
    /// );
    /// assert!(driver.produced_topic_names().contains("test-app-by-device-repartition"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[doc(alias = "toTable")]
    pub fn to_table(self) -> KTable<K, V> {
        let materialized = Materialized {
            key_serde: self.key_serde.clone(),
            value_serde: self.value_serde.clone(),
            ..Materialized::default()
        };
        self.to_table_with(materialized)
    }

    /// As [`KStream::to_table`], with the table kept in the store
    /// `materialized` describes, Kafka's `toTable(Materialized)` (and,
    /// after [`named`](KStream::named), `toTable(Named, Materialized)`).
    /// A store with a name is always kept and can be queried; without a
    /// name it is `KSTREAM-TOTABLE-STATE-STORE-<n>`, kept only when an
    /// operator needs it. The store uses `materialized`'s serdes (else the
    /// defaults), the repartition topic and the table those, else the
    /// stream's.
    ///
    /// ```
    /// use streams_core::Materialized;
    /// use streams_test::example;
    ///
    /// let driver = example(|builder| {
    ///     builder
    ///         .stream::<String, String>("prices")
    ///         .to_table_with(Materialized::as_("latest-prices"));
    /// });
    /// let prices = driver.input::<String, String>("prices");
    /// prices.pipe_key_value("pen", "1.50");
    /// prices.pipe_key_value("ink", "4.00");
    /// prices.pipe_key_value("pen", "1.75");
    /// prices.pipe_tombstone("ink");
    /// let store = driver.timestamped_key_value_store::<String, String>("latest-prices")?;
    /// assert_eq!(store.to_map(), [("pen".to_string(), "1.75".to_string())].into());
    /// assert_eq!(
    ///     driver.produced_topic_names().into_iter().collect::<Vec<_>>(),
    ///     ["test-app-latest-prices-changelog"]
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_table_with(mut self, materialized: Materialized<K, V>) -> KTable<K, V> {
        // The order Kafka takes counter numbers in: the node (a given name
        // takes one too), the store, then the repartition topic's three nodes.
        let name = self.take_name_and_number(TO_KTABLE_NAME);
        let queryable = materialized.name.is_some();
        let store = match &materialized.name {
            Some(n) => n.clone(),
            None => self.builder().new_store_name(TO_KTABLE_NAME),
        };
        let key_serde = materialized.key_serde.clone().or(self.key_serde.clone());
        let value_serde = materialized
            .value_serde
            .clone()
            .or(self.value_serde.clone());
        let parent = if self.repartition_required {
            self.through_internal_topic(&name, key_serde.clone(), value_serde.clone(), None)
        } else {
            self
        };
        source_table(
            parent.builder(),
            parent.node_name(),
            name,
            store,
            materialized,
            queryable,
        )
        .with_serdes(key_serde, value_serde)
    }
}
