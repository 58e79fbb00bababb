package compat.oracle;

import static compat.oracle.StatefulScenarios.changelog;
import static compat.oracle.StatefulScenarios.repartition;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The "repartition required" mark of KStreamImpl: which operators keep it after a key change
 * (filter, filterNot, peek, mapValues, flatMapValues, merge, split branches, a global-table
 * join), which set it (map, selectKey, flatMap, process) and which clear it (repartition, a
 * stream-table join, a stream-stream join). Each scenario chains them before groupByKey or a
 * join and reads the repartition topics Kafka builds (or does not build).
 */
final class RepartitionScenarios {
    private RepartitionScenarios() {}

    /** A count materialized as {@code store}, with long values. */
    static Materialized<String, Long, KeyValueStore<Bytes, byte[]>> counts(final String store) {
        return Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(store)
            .withValueSerde(Serdes.Long());
    }

    /** String keys, long values. */
    static Produced<String, Long> longs() {
        return Produced.with(Serdes.String(), Serdes.Long());
    }

    /**
     * map (key = first letter of the value), then filter, filterNot and peek, then
     * groupByKey().count(): the count reads the repartition topic "counts".
     */
    @Scenario
    static void repartition_mark_kept_by_filter_and_peek(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), k + ":" + v))
            .filter((k, v) -> v.length() > 4)
            .filterNot((k, v) -> v.endsWith("x"))
            .peek((k, v) -> g.observe("peek:" + k + "=" + v))
            .groupByKey()
            .count(counts("counts"))
            .toStream()
            .to("out", longs());
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 0L);
        in.pipeInput("k2", "a", 1L);
        in.pipeInput("k3", "abx", 2L);
        in.pipeInput("k4", "ac", 3L);
        in.pipeInput("k5", "bd", 4L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(repartition("counts"));
        g.output(changelog("counts"), Kind.STRING, Kind.LONG);
    }

    /**
     * selectKey, then mapValues and flatMapValues, then an inner and a left join with the table
     * "names": both joins read one repartition topic, named after the flatMapValues node.
     */
    @Scenario
    static void repartition_mark_kept_by_map_values_before_table_joins(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> names = b.table("names");
        final KStream<String, String> s = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1))
            .mapValues(v -> v.toUpperCase(Locale.ROOT))
            .flatMapValues(v -> Arrays.asList(v, v + "!"));
        s.join(names, (v, n) -> v + "/" + n).to("out-inner");
        s.leftJoin(names, (v, n) -> v + "/" + n).to("out-left");
        g.start(b.build());
        final TestInputTopic<String, String> t = g.input("names");
        final TestInputTopic<String, String> in = g.input("in");
        t.pipeInput("a", "ann", 0L);
        in.pipeInput("k1", "ab", 1L);
        in.pipeInput("k2", "bc", 2L);
        t.pipeInput("b", "bob", 3L);
        in.pipeInput("k3", "bd", 4L);
        g.output("out-inner");
        g.output("out-left");
        g.output(repartition("KSTREAM-FLATMAPVALUES-0000000006"));
    }

    /**
     * merge: a stream merged with a re-keyed one is marked (groupByKey repartitions through
     * "merged"), one merged with a plain stream is not ("plain" has no repartition topic).
     */
    @Scenario
    static void repartition_mark_of_merge(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> a = b.stream("a");
        final KStream<String, String> rekeyed = b.<String, String>stream("b")
            .selectKey((k, v) -> v.substring(0, 1));
        final KStream<String, String> c = b.stream("c");
        a.merge(rekeyed).groupByKey().count(counts("merged")).toStream().to("out-merged", longs());
        a.merge(c).groupByKey().count(counts("plain")).toStream().to("out-plain", longs());
        g.start(b.build());
        final TestInputTopic<String, String> ia = g.input("a");
        final TestInputTopic<String, String> ib = g.input("b");
        final TestInputTopic<String, String> ic = g.input("c");
        ia.pipeInput("x", "a1", 0L);
        ib.pipeInput("k1", "x2", 1L);
        ic.pipeInput("x", "c3", 2L);
        ib.pipeInput("k2", "y4", 3L);
        ia.pipeInput("y", "a5", 4L);
        g.output("out-merged", Kind.STRING, Kind.LONG);
        g.output("out-plain", Kind.STRING, Kind.LONG);
        g.output(repartition("merged"));
    }

    /**
     * selectKey, then split into a named "long" branch and a default "short" branch: each branch
     * keeps the mark, so each count reads a repartition topic of its own.
     */
    @Scenario
    static void repartition_mark_kept_by_split_branches(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final Map<String, KStream<String, String>> branches = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1))
            .split(Named.as("split-"))
            .branch((k, v) -> v.length() > 2, Branched.as("long"))
            .defaultBranch(Branched.as("short"));
        branches.get("split-long").groupByKey().count(counts("long")).toStream().to("out-long", longs());
        branches.get("split-short").groupByKey().count(counts("short")).toStream().to("out-short", longs());
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "abc", 0L);
        in.pipeInput("k2", "ab", 1L);
        in.pipeInput("k3", "ade", 2L);
        in.pipeInput("k4", "b", 3L);
        g.output("out-long", Kind.STRING, Kind.LONG);
        g.output("out-short", Kind.STRING, Kind.LONG);
        g.output(repartition("long"));
        g.output(repartition("short"));
    }

    /** Forwards each record with its value's first letter as the key. */
    static final class FirstLetterKey implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            context.forward(record.withKey(record.value().substring(0, 1)));
        }
    }

    /**
     * process() sets the mark (its count reads the repartition topic "processed"); repartition()
     * clears it (after selectKey, repartition and a filter, the count "repartitioned" reads only
     * the repartition topic "rekeyed").
     */
    @Scenario
    static void repartition_mark_set_by_process_cleared_by_repartition(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.process(FirstLetterKey::new)
            .filter((k, v) -> !v.startsWith("c"))
            .groupByKey()
            .count(counts("processed"))
            .toStream()
            .to("out-processed", longs());
        s.selectKey((k, v) -> v.substring(1, 2))
            .repartition(Repartitioned.as("rekeyed"))
            .filter((k, v) -> !v.startsWith("c"))
            .groupByKey()
            .count(counts("repartitioned"))
            .toStream()
            .to("out-repartitioned", longs());
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 0L);
        in.pipeInput("k2", "ba", 1L);
        in.pipeInput("k3", "cb", 2L);
        in.pipeInput("k4", "ab", 3L);
        g.output("out-processed", Kind.STRING, Kind.LONG);
        g.output("out-repartitioned", Kind.STRING, Kind.LONG);
        g.output(repartition("processed"));
        g.output(repartition("rekeyed"));
    }

    /**
     * After selectKey: a stream-table join clears the mark (its count reads no second
     * repartition topic), a global-table join keeps it (its count reads "global").
     */
    @Scenario
    static void repartition_mark_after_table_and_global_joins(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> names = b.table("names");
        final GlobalKTable<String, String> colors = b.globalTable("colors");
        final KStream<String, String> rekeyed = b.<String, String>stream("in")
            .selectKey((k, v) -> v.substring(0, 1));
        rekeyed.join(names, (v, n) -> v + "/" + n)
            .groupByKey()
            .count(counts("joined"))
            .toStream()
            .to("out-joined", longs());
        rekeyed.join(colors, (k, v) -> v, (v, c) -> v + "/" + c)
            .groupByKey()
            .count(counts("global"))
            .toStream()
            .to("out-global", longs());
        g.start(b.build());
        final TestInputTopic<String, String> n = g.input("names");
        final TestInputTopic<String, String> c = g.input("colors");
        final TestInputTopic<String, String> in = g.input("in");
        n.pipeInput("a", "ann", 0L);
        n.pipeInput("b", "bob", 0L);
        c.pipeInput("ab", "red", 0L);
        c.pipeInput("bc", "blue", 0L);
        in.pipeInput("k1", "ab", 1L);
        in.pipeInput("k2", "bc", 2L);
        in.pipeInput("k3", "ab", 3L);
        g.output("out-joined", Kind.STRING, Kind.LONG);
        g.output("out-global", Kind.STRING, Kind.LONG);
        g.output(repartition("KSTREAM-KEY-SELECT-0000000007"));
        g.output(repartition("global"));
    }

    /**
     * map, then filter, then a windowed stream-stream join: the re-keyed left side goes through
     * a repartition topic, the plain right side does not, and the join's result is unmarked
     * (its count reads no repartition topic).
     */
    @Scenario
    static void repartition_mark_filter_before_stream_stream_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> left = b.<String, String>stream("left")
            .map((k, v) -> KeyValue.pair(v.substring(0, 1), v))
            .filter((k, v) -> v.length() > 1);
        final KStream<String, String> right = b.stream("right");
        left.join(right, (l, r) -> l + "+" + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)))
            .groupByKey()
            .count(counts("join-counts"))
            .toStream()
            .to("out", longs());
        g.start(b.build());
        final TestInputTopic<String, String> l = g.input("left");
        final TestInputTopic<String, String> r = g.input("right");
        r.pipeInput("a", "r1", 0L);
        l.pipeInput("k1", "ab", 1L);
        l.pipeInput("k2", "a", 2L);
        r.pipeInput("b", "r2", 3L);
        l.pipeInput("k3", "bc", 4L);
        l.pipeInput("k4", "ad", 30L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(repartition("KSTREAM-FILTER-0000000002"));
    }

    /**
     * Records whose new key is null (values starting with "-"): Kafka drops them before the
     * repartition topics of a count and of repartition() ("moved"), and keeps them before the
     * one of a left join with a table, since that join takes records without a key (KIP-962):
     * its joiner sees them with no row of the table. Kafka decides this at build
     * (InternalStreamsBuilder.rewriteRepartitionNodes); describe() is the same either way.
     */
    @Scenario
    static void null_keys_at_repartition_topics(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> names = b.table("names");
        final KStream<String, String> s = b.<String, String>stream("in")
            .selectKey((k, v) -> v.startsWith("-") ? null : v.substring(0, 1));
        s.groupByKey().count(counts("counts")).toStream().to("out-counts", longs());
        s.repartition(Repartitioned.as("moved")).to("out-moved");
        s.leftJoin(names, (v, n) -> v + "/" + n).to("out-left");
        g.start(b.build());
        final TestInputTopic<String, String> t = g.input("names");
        final TestInputTopic<String, String> in = g.input("in");
        t.pipeInput("a", "ann", 0L);
        in.pipeInput("k1", "ab", 1L);
        in.pipeInput("k2", "-x", 2L);
        in.pipeInput("k3", "bc", 3L);
        in.pipeInput("k4", "-y", 4L);
        in.pipeInput("k5", "ad", 5L);
        g.output("out-counts", Kind.STRING, Kind.LONG);
        g.output("out-moved");
        g.output("out-left");
        g.output(repartition("counts"));
        g.output(repartition("moved"));
        g.output(repartition("KSTREAM-KEY-SELECT-0000000004"));
    }
}
