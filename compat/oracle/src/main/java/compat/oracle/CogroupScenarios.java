package compat.oracle;

import java.time.Duration;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Cogroup (KIP-150): grouped streams of different value types aggregated through one store,
 * with Kafka's node names (COGROUPKSTREAM-AGGREGATE-, COGROUPKSTREAM-MERGE-), its store name
 * (COGROUPKSTREAM-AGGREGATE-STATE-STORE-), the repartition of a re-keyed input named after the
 * store, and the windowed and session-windowed forms.
 */
final class CogroupScenarios {
    private CogroupScenarios() {}

    private static Duration ms(final long millis) {
        return Duration.ofMillis(millis);
    }

    /** Pipes (topic, key, value, ts) quadruples; a null value is a tombstone. */
    private static void pipe(final Golden g, final Object... topicKeyValueTs) {
        for (int i = 0; i < topicKeyValueTs.length; i += 4) {
            final TestInputTopic<String, String> in = g.input((String) topicKeyValueTs[i]);
            in.pipeInput((String) topicKeyValueTs[i + 1], (String) topicKeyValueTs[i + 2], (Long) topicKeyValueTs[i + 3]);
        }
    }

    /**
     * Two grouped streams, each appending its tag and value to one string per key; generated
     * names; a null value is dropped. The cache flushes after each record: one update each.
     */
    @Scenario
    static void cogroup_two_streams(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> a = b.<String, String>stream("a").groupByKey();
        final KGroupedStream<String, String> c = b.<String, String>stream("b").groupByKey();
        a.<String>cogroup((k, v, agg) -> agg + "a" + v)
            .cogroup(c, (k, v, agg) -> agg + "b" + v)
            .aggregate(() -> "")
            .toStream()
            .to("out");
        g.start(b.build());
        pipe(g,
            "a", "k1", "1", 0L,
            "b", "k1", "2", 1L,
            "b", "k2", "3", 2L,
            "a", "k1", null, 3L,
            "a", "k2", "4", 4L,
            "b", "k1", "5", 5L);
        g.output("out");
        g.output(StatefulScenarios.changelog("COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002"));
    }

    /**
     * A re-keyed input (groupBy the value's first letter) goes through a repartition topic named
     * after the materialized store; the other input is a Long stream counted by key; Named.as
     * names the aggregation and merge nodes; the cache is off, so every update is forwarded.
     */
    @Scenario
    static void cogroup_repartition_named_materialized_cache_off(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> words = b.<String, String>stream("words")
            .groupBy((k, v) -> v.substring(0, 1));
        final KGroupedStream<String, Long> amounts = b
            .stream("amounts", Consumed.with(Serdes.String(), Serdes.Long()))
            .groupByKey(Grouped.with(Serdes.String(), Serdes.Long()));
        words.<Long>cogroup((k, v, agg) -> agg + v.length())
            .cogroup(amounts, (k, v, agg) -> agg + v)
            .aggregate(() -> 0L, Named.as("score"),
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("scores").withValueSerde(Serdes.Long()))
            .toStream()
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build(), Golden::noCache);
        final TestInputTopic<String, Long> amountsIn = g.input("amounts", Kind.STRING, Kind.LONG);
        final TestInputTopic<String, String> wordsIn = g.input("words");
        wordsIn.pipeInput("x", "apple", 0L);
        amountsIn.pipeInput("a", 100L, 1L);
        wordsIn.pipeInput("y", "banana", 2L);
        wordsIn.pipeInput("z", "avocado", 3L);
        amountsIn.pipeInput("b", 7L, 4L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(StatefulScenarios.repartition("scores"));
        g.output(StatefulScenarios.changelog("scores"), Kind.STRING, Kind.LONG);
    }

    /** Tumbling windows of 10 ms with 5 ms grace over two cogrouped streams; a late record is dropped. */
    @Scenario
    static void cogroup_tumbling_windows(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> a = b.<String, String>stream("a").groupByKey();
        final KGroupedStream<String, String> c = b.<String, String>stream("b").groupByKey();
        a.<String>cogroup((k, v, agg) -> agg + "a" + v)
            .cogroup(c, (k, v, agg) -> agg + "b" + v)
            .windowedBy(TimeWindows.ofSizeAndGrace(ms(10), ms(5)))
            .aggregate(() -> "")
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.String()));
        g.start(b.build());
        pipe(g,
            "a", "k", "1", 1L,
            "b", "k", "2", 8L,
            "b", "k", "3", 12L,
            "a", "k", "4", 9L,
            "a", "k", "5", 22L,
            "b", "k", "6", 3L);
        g.outputTimeWindowed("out", 10L, Kind.STRING);
        g.output(StatefulScenarios.changelog("COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002"), Kind.BYTES, Kind.STRING);
    }

    /** Sliding windows (time difference 5 ms, no grace) over two cogrouped streams. */
    @Scenario
    static void cogroup_sliding_windows(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> a = b.<String, String>stream("a").groupByKey();
        final KGroupedStream<String, String> c = b.<String, String>stream("b").groupByKey();
        a.<String>cogroup((k, v, agg) -> agg + "a" + v)
            .cogroup(c, (k, v, agg) -> agg + "b" + v)
            .windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(ms(5)))
            .aggregate(() -> "")
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 5L), Serdes.String()));
        g.start(b.build());
        pipe(g,
            "a", "k", "1", 10L,
            "b", "k", "2", 13L,
            "a", "k", "3", 20L);
        g.outputTimeWindowed("out", 5L, Kind.STRING);
    }

    /**
     * Session windows (gap 5 ms, grace 3 ms): records of both streams extend and merge one
     * session, the merger concatenating the two sessions' aggregates with "|".
     */
    @Scenario
    static void cogroup_session_windows(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> a = b.<String, String>stream("a").groupByKey();
        final KGroupedStream<String, String> c = b.<String, String>stream("b").groupByKey();
        a.<String>cogroup((k, v, agg) -> agg + "a" + v)
            .cogroup(c, (k, v, agg) -> agg + "b" + v)
            .windowedBy(SessionWindows.ofInactivityGapAndGrace(ms(5), ms(3)))
            .aggregate(() -> "", (k, left, right) -> left + "|" + right)
            .toStream()
            .to("out", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), Serdes.String()));
        g.start(b.build());
        pipe(g,
            "a", "k", "1", 0L,
            "b", "k", "2", 12L,
            "a", "k", "3", 7L,
            "b", "k", "4", 30L);
        g.outputSessionWindowed("out", Kind.STRING);
        g.output(StatefulScenarios.changelog("COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000002"), Kind.BYTES, Kind.STRING);
    }
}
