package compat.oracle;

import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * Stateful DSL and store scenarios: word count, aggregations of grouped streams and grouped
 * tables, tables with tombstones, and the contents of repartition and changelog topics.
 * Internal topics are read like any output topic: {@code compat-<store>-changelog},
 * {@code compat-<name>-repartition}.
 */
final class StatefulScenarios {
    private StatefulScenarios() {}

    /** Changelog topic of a store, as the driver names it. */
    static String changelog(final String store) {
        return Golden.APPLICATION_ID + "-" + store + "-changelog";
    }

    /** Repartition topic with the given base name, as the driver names it. */
    static String repartition(final String base) {
        return Golden.APPLICATION_ID + "-" + base + "-repartition";
    }

    /**
     * Word count: lines are lower-cased and split on single spaces, grouped by word (a
     * repartition topic named after the store), counted in the store "counts".
     */
    @Scenario
    static void word_count(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("text")
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split(" ")))
            .groupBy((k, word) -> word)
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"))
            .toStream()
            .to("counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("text");
        in.pipeInput("l1", "the quick brown fox", 0L);
        in.pipeInput("l2", "the lazy dog", 5L);
        in.pipeInput("l3", "The Fox", 10L);
        in.pipeInput("l4", "dog eat dog", 15L);
        g.output("counts-out", Kind.STRING, Kind.LONG);
        g.output(repartition("counts"));
        g.output(changelog("counts"), Kind.STRING, Kind.LONG);
    }

    /**
     * groupByKey().count() with generated names; a null key and a null value are dropped.
     */
    @Scenario
    static void count_group_by_key(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .count()
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("a", "1", 0L);
        in.pipeInput("b", "2", 1L);
        in.pipeInput("a", "3", 2L);
        in.pipeInput(null, "4", 3L);
        in.pipeInput("a", null, 4L);
        in.pipeInput("b", "5", 5L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"), Kind.STRING, Kind.LONG);
    }

    /** groupBy(first letter of the key, Grouped.as("by-initial")).reduce(a + "+" + v) into "reduced". */
    @Scenario
    static void reduce_grouped_named(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupBy((k, v) -> k.substring(0, 1), Grouped.as("by-initial"))
            .reduce((agg, v) -> agg + "+" + v,
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("reduced"))
            .toStream()
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("apple", "1", 0L);
        in.pipeInput("banana", "2", 1L);
        in.pipeInput("avocado", "3", 2L);
        in.pipeInput("blueberry", "4", 3L);
        in.pipeInput("apricot", "5", 4L);
        g.output("out");
        g.output(repartition("by-initial"));
        g.output(changelog("reduced"));
    }

    /**
     * selectKey then groupByKey(Grouped.with(String, String)): the repartition topic is named
     * after the store "lengths"; aggregate sums value lengths into a Long.
     */
    @Scenario
    static void aggregate_after_select_key(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1))
            .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
            .aggregate(() -> 0L, (k, v, agg) -> agg + v.length(),
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("lengths")
                    .withValueSerde(Serdes.Long()))
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "xy", 0L);
        in.pipeInput("k2", "z", 1L);
        in.pipeInput("k3", "xyz", 2L);
        in.pipeInput("k4", "zz", 3L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(repartition("lengths"));
        g.output(changelog("lengths"), Kind.STRING, Kind.LONG);
    }

    /**
     * An unmaterialized table through filter, filterNot and mapValues to a stream: rows a filter
     * rejects and deletes (tombstones) become tombstones downstream.
     */
    @Scenario
    static void table_tombstones_filter_map_values(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>table("in")
            .filter((k, v) -> v.length() > 1)
            .filterNot((k, v) -> v.startsWith("x"))
            .mapValues(v -> v.toUpperCase(Locale.ROOT))
            .toStream()
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("a", "aa", 0L);
        in.pipeInput("b", "b", 1L);
        in.pipeInput("a", null, 2L);
        in.pipeInput("c", "xc", 3L);
        in.pipeInput("c", "cc", 4L);
        in.pipeInput("d", null, 5L);
        in.pipeInput("c", "c", 6L);
        in.pipeInput(null, "nk", 7L);
        in.pipeInput("a", "aaa", 8L);
        g.output("out");
    }

    /**
     * A materialized source table ("table-store"): its updates as a stream, and its changelog,
     * with deletes of present and absent keys. With Kafka's record cache (the driver's default)
     * the delete of the absent key "c" is neither forwarded nor logged.
     */
    @Scenario
    static void table_materialized_changelog(final Golden g) {
        tableMaterializedChangelog(g, p -> { });
    }

    /**
     * table_materialized_changelog without Kafka's record cache: the delete of the absent key
     * "c" is then forwarded and written to the changelog too.
     */
    @Scenario
    static void table_materialized_changelog_cache_off(final Golden g) {
        tableMaterializedChangelog(g, Golden::noCache);
    }

    private static void tableMaterializedChangelog(final Golden g, final Consumer<Properties> config) {
        final StreamsBuilder b = new StreamsBuilder();
        b.table("in", Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("table-store"))
            .toStream()
            .to("out");
        g.start(b.build(), config);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("a", "1", 0L);
        in.pipeInput("b", "2", 1L);
        in.pipeInput("a", "3", 2L);
        in.pipeInput("a", null, 3L);
        in.pipeInput("c", null, 4L);
        in.pipeInput("b", null, 5L);
        in.pipeInput("a", "4", 6L);
        g.output("out");
        g.output(changelog("table-store"));
    }

    /**
     * Processor API with an in-memory key-value store "kv" (String/String, logging on). Value
     * "DEL" deletes the key; "?x" is putIfAbsent(key, "x"); anything else is put(key, value). The
     * processor forwards what happened and the store's contents in key order.
     */
    static final class KvProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, String> store;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            this.store = context.getStateStore("kv");
        }

        @Override
        public void process(final Record<String, String> record) {
            final String v = record.value();
            final String what;
            if (v.equals("DEL")) {
                what = "delete -> " + store.delete(record.key());
            } else if (v.startsWith("?")) {
                what = "putIfAbsent " + v.substring(1) + " -> " + store.putIfAbsent(record.key(), v.substring(1));
            } else {
                store.put(record.key(), v);
                what = "put " + v;
            }
            final StringBuilder contents = new StringBuilder("[");
            try (KeyValueIterator<String, String> it = store.all()) {
                while (it.hasNext()) {
                    final KeyValue<String, String> kv = it.next();
                    if (contents.length() > 1) {
                        contents.append(", ");
                    }
                    contents.append(kv.key).append('=').append(kv.value);
                }
            }
            context.forward(record.withValue(what + " " + contents.append(']')));
        }
    }

    /** Source(in) -> Store (KvProcessor, store "kv") -> Sink(out); the changelog of "kv". */
    @Scenario
    static void kv_store_changelog_deletes(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Store", KvProcessor::new, "Source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("kv"),
            Serdes.String(), Serdes.String()), "Store");
        t.addSink("Sink", "out", "Store");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("a", "1", 0L);
        in.pipeInput("b", "2", 1L);
        in.pipeInput("a", "DEL", 2L);
        in.pipeInput("c", "DEL", 3L);
        in.pipeInput("b", "?9", 4L);
        in.pipeInput("a", "?5", 5L);
        in.pipeInput("b", "3", 6L);
        in.pipeInput("b", "DEL", 7L);
        g.output("out");
        g.output(changelog("kv"));
    }

    /**
     * A table of user -> region regrouped by region and counted ("region-counts"): a user moving
     * region is subtracted from the old one and added to the new one; the repartition topic
     * carries Kafka's change encoding (read as bytes).
     */
    @Scenario
    static void table_group_by_count(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>table("user-regions")
            .groupBy((user, region) -> KeyValue.pair(region, user))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("region-counts"))
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("user-regions");
        in.pipeInput("alice", "eu", 0L);
        in.pipeInput("bob", "us", 1L);
        in.pipeInput("carol", "eu", 2L);
        in.pipeInput("alice", "us", 3L);
        in.pipeInput("bob", null, 4L);
        in.pipeInput("dave", null, 5L);
        in.pipeInput("carol", "eu", 6L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(repartition("region-counts"), Kind.STRING, Kind.BYTES);
        g.output(changelog("region-counts"), Kind.STRING, Kind.LONG);
    }

    /** A Long table regrouped by the key's first letter, reduced with + and - (generated names). */
    @Scenario
    static void table_group_by_reduce(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.table("amounts", Consumed.with(Serdes.String(), Serdes.Long()))
            .groupBy((k, v) -> KeyValue.pair(k.substring(0, 1), v), Grouped.with(Serdes.String(), Serdes.Long()))
            .reduce((agg, v) -> agg + v, (agg, v) -> agg - v)
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, Long> in = g.input("amounts", Kind.STRING, Kind.LONG);
        in.pipeInput("a1", 10L, 0L);
        in.pipeInput("a2", 5L, 1L);
        in.pipeInput("b1", 7L, 2L);
        in.pipeInput("a1", 20L, 3L);
        in.pipeInput("a2", null, 4L);
        in.pipeInput("b1", null, 5L);
        in.pipeInput("b2", 1L, 6L);
        g.output("out", Kind.STRING, Kind.LONG);
    }

    /**
     * A table regrouped with a named Grouped ("by-region") and counted with generated names:
     * the select node takes the Grouped's name, the repartition topic too, while the repartition
     * sink, source and the count node are generated (the aggregation has no Named of its own).
     */
    @Scenario
    static void table_group_by_named_grouped(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>table("user-regions")
            .groupBy((user, region) -> KeyValue.pair(region, user),
                Grouped.with("by-region", Serdes.String(), Serdes.String()))
            .count()
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("user-regions");
        in.pipeInput("alice", "eu", 0L);
        in.pipeInput("bob", "us", 1L);
        in.pipeInput("alice", "us", 2L);
        in.pipeInput("bob", null, 3L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(repartition("by-region"), Kind.STRING, Kind.BYTES);
        g.output(changelog("KTABLE-AGGREGATE-STATE-STORE-0000000004"), Kind.STRING, Kind.LONG);
    }

    /**
     * A table regrouped by the value's first letter and aggregated into strings, so that the
     * order of subtractor ("-") and adder ("+") calls shows.
     */
    @Scenario
    static void table_group_by_aggregate(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>table("in")
            .groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), k + "=" + v))
            .aggregate(() -> "", (k, v, agg) -> agg + "+" + v, (k, v, agg) -> agg + "-" + v,
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("agg"))
            .toStream()
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a1", 0L);
        in.pipeInput("k2", "a2", 1L);
        in.pipeInput("k1", "b1", 2L);
        in.pipeInput("k2", "a3", 3L);
        in.pipeInput("k2", null, 4L);
        in.pipeInput("k3", "b3", 5L);
        g.output("out");
        g.output(changelog("agg"));
    }

    /**
     * One stream as two tables: toTable() (no store: every update and delete is forwarded) and
     * toTable(Named.as("latest"), Materialized.as("latest-store")) (a store with the record
     * cache and a changelog). Tombstones delete, a null key is dropped.
     */
    @Scenario
    static void to_table_plain_and_named_materialized(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.toTable().toStream().to("out");
        s.toTable(Named.as("latest"),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("latest-store"))
            .toStream()
            .to("out-materialized");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("a", "1", 0L);
        in.pipeInput("b", "2", 1L);
        in.pipeInput("a", "3", 2L);
        in.pipeInput("a", null, 3L);
        in.pipeInput("c", null, 4L);
        in.pipeInput(null, "nk", 5L);
        in.pipeInput("b", "4", 6L);
        in.pipeInput("a", "5", 3L);
        g.output("out");
        g.output("out-materialized");
        g.output(changelog("latest-store"));
    }

    /**
     * map to (first letter, key:value), then filter, then toTable(Materialized.as("by-initial")):
     * the key change sends the records through KSTREAM-TOTABLE-0000000003-repartition first.
     */
    @Scenario
    static void to_table_after_key_change(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), k + ":" + v))
            .filter((k, v) -> !v.endsWith("x"))
            .toTable(Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("by-initial"))
            .toStream()
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "apple", 0L);
        in.pipeInput("k2", "banana", 1L);
        in.pipeInput("k3", "avocado", 2L);
        in.pipeInput("k4", "box", 3L);
        in.pipeInput("k5", "blueberry", 4L);
        in.pipeInput("k6", "apricot", 1L);
        g.output("out");
        g.output(repartition("KSTREAM-TOTABLE-0000000003"));
        g.output(changelog("by-initial"));
    }

    /**
     * Anonymous Materialized (serdes only) on a table filter and a count: each takes a store
     * name number (Kafka's MaterializedInternal), the filter builds no store, the count keeps
     * its generated store.
     */
    @Scenario
    static void anonymous_materialized_takes_a_number(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>table("t")
            .filter((k, v) -> !v.isEmpty(), Materialized.with(Serdes.String(), Serdes.String()))
            .mapValues(v -> v + "!")
            .toStream()
            .to("out-table");
        b.<String, String>stream("s")
            .groupByKey()
            .count(Materialized.with(Serdes.String(), Serdes.Long()))
            .toStream()
            .to("out-count", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        g.input("t").pipeInput("a", "x", 0L);
        g.input("t").pipeInput("b", "", 1L);
        g.input("s").pipeInput("a", "1", 2L);
        g.input("s").pipeInput("a", "2", 3L);
        g.output("out-table");
        g.output("out-count", Kind.STRING, Kind.LONG);
    }
}
