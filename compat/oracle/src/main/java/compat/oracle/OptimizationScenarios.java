package compat.oracle;

import static compat.oracle.RepartitionScenarios.counts;
import static compat.oracle.RepartitionScenarios.longs;
import static compat.oracle.StatefulScenarios.changelog;
import static compat.oracle.StatefulScenarios.repartition;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * topology.optimization: Kafka applies it when the topology is built with the config,
 * {@code StreamsBuilder.build(Properties)}, so each scenario builds with the same properties it
 * starts the driver with. reuse.ktable.source.topics (a source table's store writes no
 * changelog), merge.repartition.topics (one repartition topic per key change, named after the
 * first), single.store.self.join (KIP-862: a stream joined with itself keeps one store), and
 * the ConfigException of a bad value.
 */
final class OptimizationScenarios {
    private OptimizationScenarios() {}

    /** The config change that sets topology.optimization to {@code value}. */
    static Consumer<Properties> optimize(final String value) {
        return p -> p.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, value);
    }

    /** Builds with the default properties plus topology.optimization = {@code value}. */
    static Topology build(final StreamsBuilder b, final String value) {
        final Properties props = Golden.defaultProps();
        optimize(value).accept(props);
        return b.build(props);
    }

    /**
     * reuse.ktable.source.topics: the table "users" (store "users-store") and the generated
     * store of the table "cities" (needed by the join) write no changelog; the toTable store
     * "latest" (not a source table) still does. Clicks join both tables.
     */
    @Scenario
    static void optimize_reuse_ktable_source_topics(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> users = b.table("users",
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("users-store"));
        final KTable<String, String> cities = b.table("cities");
        final KStream<String, String> clicks = b.stream("clicks");
        clicks.join(users, (c, u) -> u + " clicked " + c)
            .leftJoin(cities, (s, city) -> s + " in " + city)
            .to("out");
        clicks.toTable(Materialized.as("latest")).toStream().to("out-latest");
        g.start(build(b, StreamsConfig.REUSE_KTABLE_SOURCE_TOPICS),
            optimize(StreamsConfig.REUSE_KTABLE_SOURCE_TOPICS));
        final TestInputTopic<String, String> u = g.input("users");
        final TestInputTopic<String, String> c = g.input("cities");
        final TestInputTopic<String, String> k = g.input("clicks");
        u.pipeInput("u1", "ann", 0L);
        c.pipeInput("u1", "Oslo", 1L);
        k.pipeInput("u1", "home", 2L);
        u.pipeInput("u2", "bob", 3L);
        k.pipeInput("u2", "cart", 4L);
        u.pipeInput("u1", null, 5L);
        k.pipeInput("u1", "exit", 6L);
        g.output("out");
        g.output("out-latest");
        g.output(changelog("users-store"));
        g.output(changelog("cities-STATE-STORE-0000000002"));
        g.output(changelog("latest"));
    }

    /**
     * merge.repartition.topics after one map: a count, a filter-peek-reduce, a toTable and a
     * stream-table join, each needing a repartition topic, share the first one ("counts"); the
     * filter and the peek now run after it.
     */
    @Scenario
    static void optimize_merge_repartition_topics(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> names = b.table("names");
        final KStream<String, String> mapped = b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), k + ":" + v));
        mapped.groupByKey(Grouped.as("counts")).count(counts("count-store"))
            .toStream().to("out-counts", longs());
        mapped.filter((k, v) -> !v.endsWith("x"))
            .peek((k, v) -> g.observe("peek:" + k + "=" + v))
            .groupByKey()
            .reduce((a, v) -> a + "+" + v, Materialized.as("reduce-store"))
            .toStream().to("out-reduced");
        mapped.toTable(Named.as("latest"), Materialized.as("latest-store")).toStream().to("out-latest");
        mapped.join(names, (v, n) -> v + "/" + n).to("out-joined");
        g.start(build(b, StreamsConfig.MERGE_REPARTITION_TOPICS),
            optimize(StreamsConfig.MERGE_REPARTITION_TOPICS));
        final TestInputTopic<String, String> n = g.input("names");
        final TestInputTopic<String, String> in = g.input("in");
        n.pipeInput("a", "ann", 0L);
        in.pipeInput("k1", "ab", 1L);
        in.pipeInput("k2", "ax", 2L);
        in.pipeInput("k3", "bc", 3L);
        n.pipeInput("b", "bob", 4L);
        in.pipeInput("k4", "bd", 5L);
        g.output("out-counts", Kind.STRING, Kind.LONG);
        g.output("out-reduced");
        g.output("out-latest");
        g.output("out-joined");
        g.output(repartition("counts"));
    }

    /**
     * merge.repartition.topics after a merge of two maps (Kafka's
     * RepartitionWithMergeOptimizingTest): both counts read one topic "long-groupByKey".
     */
    @Scenario
    static void optimize_merge_repartition_topics_after_merge(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> a = b.<String, String>stream("inA")
            .map((k, v) -> KeyValue.pair(v.split(":")[0], v), Named.as("mappedA"));
        final KStream<String, String> c = b.<String, String>stream("inB")
            .map((k, v) -> KeyValue.pair(v.split(":")[0], v), Named.as("mappedB"));
        final KStream<String, String> merged = a.merge(c, Named.as("merged"));
        merged.groupByKey(Grouped.as("long-groupByKey"))
            .count(Named.as("long-count"), counts("long-store"))
            .toStream().to("out-long", longs());
        merged.groupByKey(Grouped.as("string-groupByKey"))
            .count(Named.as("string-count"), counts("string-store"))
            .toStream().mapValues(v -> "n=" + v).to("out-string");
        g.start(build(b, StreamsConfig.OPTIMIZE), optimize(StreamsConfig.OPTIMIZE));
        final TestInputTopic<String, String> ia = g.input("inA");
        final TestInputTopic<String, String> ib = g.input("inB");
        ia.pipeInput("x", "A:1", 0L);
        ib.pipeInput("y", "B:2", 1L);
        ia.pipeInput("z", "A:3", 2L);
        ib.pipeInput("w", "A:4", 3L);
        g.output("out-long", Kind.STRING, Kind.LONG);
        g.output("out-string");
        g.output(repartition("long-groupByKey"));
    }

    /**
     * merge.repartition.topics where nothing merges: after selectKey, a mapValues keeps its
     * count's repartition topic apart (Kafka's StreamsGraphTest), and a lone count's repartition
     * topic is written again, its nodes renamed after the topic.
     */
    @Scenario
    static void optimize_merge_single_repartition_and_map_values(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> keyed = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1));
        keyed.mapValues(v -> v.toUpperCase(Locale.ROOT)).groupByKey().count()
            .toStream().to("out-upper", longs());
        keyed.flatMapValues(v -> Arrays.asList(v.split(" "))).groupByKey()
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)))
            .count().toStream()
            .to("out-windowed", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.Long()));
        b.<String, String>stream("other").selectKey((k, v) -> v).groupByKey().count()
            .toStream().to("out-other", longs());
        g.start(build(b, StreamsConfig.OPTIMIZE), optimize(StreamsConfig.OPTIMIZE));
        final TestInputTopic<String, String> in = g.input("in");
        final TestInputTopic<String, String> other = g.input("other");
        in.pipeInput("k1", "ab cd", 1L);
        in.pipeInput("k2", "ae", 2L);
        other.pipeInput("k3", "x", 3L);
        other.pipeInput("k4", "x", 4L);
        g.output("out-upper", Kind.STRING, Kind.LONG);
        g.outputTimeWindowed("out-windowed", 10L, Kind.LONG);
        g.output("out-other", Kind.STRING, Kind.LONG);
    }

    /**
     * single.store.self.join: a stream inner-joined with itself within 100 ms keeps one window
     * store and one join processor named after the merge node.
     */
    @Scenario
    static void optimize_single_store_self_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.join(s, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(100)))
            .to("out");
        g.start(build(b, StreamsConfig.SINGLE_STORE_SELF_JOIN),
            optimize(StreamsConfig.SINGLE_STORE_SELF_JOIN));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("A", "1", 1L);
        in.pipeInput("B", "1", 2L);
        in.pipeInput("A", "2", 3L);
        in.pipeInput("B", "2", 4L);
        in.pipeInput("B", "3", 5L);
        in.pipeInput("A", "3", 150L);
        in.pipeInput("A", "0", 40L);
        g.output("out");
        g.output(changelog("KSTREAM-JOINTHIS-0000000003-store"), Kind.BYTES, Kind.STRING);
    }

    /**
     * single.store.self.join on a left join with grace: it becomes the inner self-join (no outer
     * store, no null-padded results), and a record without a key is dropped.
     */
    @Scenario
    static void optimize_self_join_left_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.leftJoin(s, (l, r) -> l + "/" + r,
                JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)),
                StreamJoined.as("self"))
            .to("out");
        g.start(build(b, StreamsConfig.OPTIMIZE), optimize(StreamsConfig.OPTIMIZE));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("A", "1", 0L);
        in.pipeInput(null, "x", 1L);
        in.pipeInput("A", "2", 8L);
        in.pipeInput("B", "1", 30L);
        in.pipeInput("A", "3", 12L);
        in.pipeInput("A", "4", 50L);
        g.output("out");
    }

    /**
     * all, on a re-keyed stream joined with itself: the join's one repartition topic is written
     * again after the selectKey, and the join over it is a self-join.
     */
    @Scenario
    static void optimize_self_join_after_repartition(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> keyed = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1));
        keyed.join(keyed, (l, r) -> l + "&" + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(5)))
            .to("out");
        g.start(build(b, StreamsConfig.OPTIMIZE), optimize(StreamsConfig.OPTIMIZE));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 0L);
        in.pipeInput("k2", "ac", 3L);
        in.pipeInput("k3", "bd", 4L);
        g.output("out");
        g.output(repartition("KSTREAM-KEY-SELECT-0000000001"));
    }

    /**
     * The optimizations apply at build(props): the same "all" given only to the driver changes
     * nothing (two repartition topics, two join stores).
     */
    @Scenario
    static void optimize_config_only_at_driver_changes_nothing(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> keyed = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1));
        keyed.groupByKey().count(counts("first")).toStream().to("out-first", longs());
        keyed.groupByKey().count(counts("second")).toStream().to("out-second", longs());
        g.start(b.build(), optimize(StreamsConfig.OPTIMIZE));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 0L);
        in.pipeInput("k2", "ac", 1L);
        g.output("out-first", Kind.STRING, Kind.LONG);
        g.output("out-second", Kind.STRING, Kind.LONG);
    }

    /** An unknown optimization: build(props) throws Kafka's ConfigException. */
    @Scenario
    static void optimize_unknown_value_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in").to("out");
        g.expectError(() -> build(b, "merge.repartition.topics, self.join"));
    }

    /** "all" or "none" next to another value: Kafka's other ConfigException. */
    @Scenario
    static void optimize_all_with_none_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in").to("out");
        g.expectError(() -> build(b, "all,none"));
    }

    /**
     * merge.repartition.topics for a stream-stream join of a mapped stream with its own
     * filtered copy, a count and a cogroup: the join's left and right repartition topics, the
     * count's and the cogroup's all become "joined-left".
     */
    @Scenario
    static void optimize_merge_repartition_topics_join_and_cogroup(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> mapped = b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), k + ":" + v));
        mapped.join(mapped.filter((k, v) -> !v.endsWith("x")), (l, r) -> l + "&" + r,
                JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)), StreamJoined.as("joined"))
            .to("out-joined");
        mapped.groupByKey().count(counts("counts")).toStream().to("out-counts", longs());
        mapped.groupByKey()
            .cogroup((String k, String v, String agg) -> agg + v.length())
            .aggregate(() -> "", Materialized.as("lengths"))
            .toStream().to("out-lengths");
        g.start(build(b, StreamsConfig.MERGE_REPARTITION_TOPICS),
            optimize(StreamsConfig.MERGE_REPARTITION_TOPICS));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 0L);
        in.pipeInput("k22", "ac", 3L);
        in.pipeInput("k3", "bx", 4L);
        in.pipeInput("k4", "ad", 20L);
        g.output("out-joined");
        g.output("out-counts", Kind.STRING, Kind.LONG);
        g.output("out-lengths");
        g.output(repartition("KSTREAM-MAP-0000000001"));
    }

    /**
     * merge.repartition.topics where one node leads to two repartition topics (map, then a
     * peek with two counts below it; split branches do the same): moving the peek for the first
     * topic leaves the second without a way back to the map, and Kafka 4.4 fails the build
     * ("Found a null keyChangingChild node").
     */
    @Scenario
    static void optimize_merge_shared_child_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> peeked = b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), v))
            .peek((k, v) -> { });
        peeked.groupByKey().count(counts("c1")).toStream().to("o1", longs());
        peeked.groupByKey().count(counts("c2")).toStream().to("o2", longs());
        g.expectError(() -> build(b, StreamsConfig.MERGE_REPARTITION_TOPICS));
    }
}
