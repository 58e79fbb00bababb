package compat.oracle;

import java.time.Duration;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.Suppressed.BufferConfig;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Windowed aggregations: tumbling, hopping, sliding and session windows with grace periods
 * (late records dropped), suppress(untilWindowCloses), and the window and session stores'
 * changelogs. Results are written with Kafka's windowed serdes (String inner keys) and read
 * back as {@code "[key@start/end]"}; changelog keys are read as bytes (Kafka's store key
 * layouts).
 */
final class WindowScenarios {
    private WindowScenarios() {}

    private static Duration ms(final long millis) {
        return Duration.ofMillis(millis);
    }

    /** Pipes (key, value, ts) triples to "in". */
    private static void pipe(final Golden g, final Object... keyValueTs) {
        final TestInputTopic<String, String> in = g.input("in");
        for (int i = 0; i < keyValueTs.length; i += 3) {
            in.pipeInput((String) keyValueTs[i], (String) keyValueTs[i + 1], (Long) keyValueTs[i + 2]);
        }
    }

    /**
     * Tumbling windows of 10 ms with 5 ms grace, count: a record at exactly 10 belongs to
     * [10,20); an out-of-order record within the grace period counts; a late one is dropped.
     */
    @Scenario
    static void tumbling_window_count(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(ms(10), ms(5)))
            .count()
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.Long()));
        g.start(b.build());
        pipe(g,
            "a", "1", 0L,
            "a", "2", 9L,
            "a", "3", 10L,
            "b", "4", 12L,
            "a", "5", 7L,
            "a", "6", 20L,
            "a", "7", 4L,
            "a", "8", 14L);
        g.outputTimeWindowed("out", 10L, Kind.LONG);
        g.output(StatefulScenarios.changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"), Kind.BYTES, Kind.LONG);
    }

    /**
     * Aggregations named with Named: a grouped stream's count and reduce, a time-windowed count,
     * a session-windowed reduce and a grouped table's aggregate. Each name takes a number of the
     * counter all the same; the table's also names its repartition sink and source.
     */
    @Scenario
    static void named_aggregations(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> in = b.stream("in");
        in.groupByKey().count(Named.as("plain-count"))
            .toStream().to("counts", Produced.with(Serdes.String(), Serdes.Long()));
        in.groupBy((k, v) -> v).reduce((a, v) -> a + v, Named.as("by-value-reduce"),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("by-value"))
            .toStream().to("reduced");
        in.groupByKey().windowedBy(TimeWindows.ofSizeWithNoGrace(ms(10))).count(Named.as("windowed-count"))
            .toStream().to("windowed", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.Long()));
        in.groupByKey().windowedBy(SessionWindows.ofInactivityGapWithNoGrace(ms(5)))
            .reduce((a, v) -> a + v, Named.as("session-reduce"))
            .toStream().to("sessions", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), Serdes.String()));
        b.<String, String>table("regions").groupBy((k, v) -> KeyValue.pair(v, k))
            .aggregate(() -> "", (k, v, agg) -> agg + "+" + v, (k, v, agg) -> agg + "-" + v, Named.as("region-agg"),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("region-members"))
            .toStream().to("members");
        g.start(b.build());
        pipe(g,
            "a", "x", 1L,
            "b", "y", 3L,
            "a", "x", 4L,
            "a", "z", 12L);
        final TestInputTopic<String, String> regions = g.input("regions");
        regions.pipeInput("ann", "eu", 0L);
        regions.pipeInput("bob", "eu", 1L);
        regions.pipeInput("ann", "us", 2L);
        g.output("counts", Kind.STRING, Kind.LONG);
        g.output("reduced");
        g.outputTimeWindowed("windowed", 10L, Kind.LONG);
        g.outputSessionWindowed("sessions", Kind.STRING);
        g.output("members");
    }

    /** Hopping windows of 10 ms advancing by 5 ms, grace 2 ms, aggregate (concatenation) into "hops". */
    @Scenario
    static void hopping_window_aggregate(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(ms(10), ms(2)).advanceBy(ms(5)))
            .aggregate(() -> "", (k, v, agg) -> agg + v,
                Materialized.<String, String, WindowStore<Bytes, byte[]>>as("hops"))
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.String()));
        g.start(b.build());
        pipe(g,
            "a", "x", 0L,
            "a", "y", 6L,
            "a", "z", 10L,
            "b", "w", 3L,
            "a", "u", 4L,
            "a", "p", 17L,
            "a", "q", 5L,
            "a", "r", 13L);
        g.outputTimeWindowed("out", 10L, Kind.STRING);
        g.output(StatefulScenarios.changelog("hops"), Kind.BYTES, Kind.STRING);
    }

    /** Sliding windows (time difference 10 ms, grace 5 ms), reduce (concatenation). */
    @Scenario
    static void sliding_window_reduce(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(ms(10), ms(5)))
            .reduce((agg, v) -> agg + v)
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.String()));
        g.start(b.build());
        pipe(g,
            "a", "1", 10L,
            "a", "2", 15L,
            "a", "3", 30L,
            "a", "4", 22L,
            "a", "5", 12L,
            "b", "6", 31L,
            "a", "7", 26L);
        g.outputTimeWindowed("out", 10L, Kind.STRING);
    }

    /**
     * Session windows (gap 5 ms, grace 3 ms), count: sessions merge (the merged ones are
     * deleted downstream with tombstones), a late record is dropped.
     */
    @Scenario
    static void session_window_count(final Golden g) {
        sessionWindowCount(g, p -> { });
    }

    /**
     * session_window_count without Kafka's record cache: the record at 16 no longer finds the
     * session [12,12], which the store has expired (retention gap + grace = 8 ms, stream time
     * 20) but the cache still held.
     */
    @Scenario
    static void session_window_count_cache_off(final Golden g) {
        sessionWindowCount(g, Golden::noCache);
    }

    private static void sessionWindowCount(final Golden g, final Consumer<Properties> config) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(SessionWindows.ofInactivityGapAndGrace(ms(5), ms(3)))
            .count()
            .toStream()
            .to("out", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), Serdes.Long()));
        g.start(b.build(), config);
        pipe(g,
            "a", "1", 0L,
            "a", "2", 4L,
            "a", "3", 20L,
            "a", "4", 12L,
            "a", "5", 16L,
            "a", "6", 3L,
            "b", "7", 21L,
            "a", "8", 25L);
        g.outputSessionWindowed("out", Kind.LONG);
        g.output(StatefulScenarios.changelog("KSTREAM-AGGREGATE-STATE-STORE-0000000001"), Kind.BYTES, Kind.LONG);
    }

    /**
     * Tumbling count (10 ms, grace 5 ms) suppressed until the window closes (named "final"):
     * one final result per window once stream time reaches end + grace; the buffer's changelog.
     * The count names its serdes: without them Kafka's suppression buffer serializes the
     * windowed key with the default String serde and fails (ClassCastException).
     */
    @Scenario
    static void suppress_tumbling_final_results(final Golden g) {
        suppressTumblingFinalResults(g, p -> { });
    }

    /**
     * suppress_tumbling_final_results without Kafka's record cache: the count then forwards
     * the initializer's 0 as the old value of a new window, so the buffer's changelog records
     * have a prior value of 0 instead of null.
     */
    @Scenario
    static void suppress_tumbling_final_results_cache_off(final Golden g) {
        suppressTumblingFinalResults(g, Golden::noCache);
    }

    private static void suppressTumblingFinalResults(final Golden g, final Consumer<Properties> config) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(ms(10), ms(5)))
            .count(Materialized.with(Serdes.String(), Serdes.Long()))
            .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName("final"))
            .toStream()
            .to("out", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.Long()));
        g.start(b.build(), config);
        pipe(g,
            "a", "1", 0L,
            "a", "2", 5L,
            "b", "3", 8L,
            "a", "4", 12L,
            "a", "5", 14L,
            "c", "6", 15L,
            "a", "7", 3L,
            "a", "8", 30L);
        g.outputTimeWindowed("out", 10L, Kind.LONG);
        g.output(StatefulScenarios.changelog("final-store"), Kind.BYTES, Kind.BYTES);
    }

    /**
     * Session count (gap 5 ms, grace 2 ms) suppressed until the session closes: end + gap +
     * grace; merged sessions never show. The count names its serdes, as in
     * suppress_tumbling_final_results.
     */
    @Scenario
    static void suppress_session_final_results(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(SessionWindows.ofInactivityGapAndGrace(ms(5), ms(2)))
            .count(Materialized.with(Serdes.String(), Serdes.Long()))
            .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()))
            .toStream()
            .to("out", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), Serdes.Long()));
        g.start(b.build());
        pipe(g,
            "a", "1", 0L,
            "a", "2", 4L,
            "b", "3", 6L,
            "a", "4", 8L,
            "a", "5", 15L,
            "b", "6", 16L,
            "a", "7", 30L);
        g.outputSessionWindowed("out", Kind.LONG);
    }

    /**
     * The bytes of windowed keys: one grouped stream counted in tumbling windows of 10 ms
     * (TimeWindowedSerde: key, start) to "out-time" and in sessions with a 5 ms gap
     * (SessionWindowedSerde: key, end, start) to "out-session", both read as raw bytes.
     */
    @Scenario
    static void windowed_key_bytes(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KGroupedStream<String, String> grouped = b.<String, String>stream("in").groupByKey();
        grouped.windowedBy(TimeWindows.ofSizeWithNoGrace(ms(10)))
            .count()
            .toStream()
            .to("out-time", Produced.with(WindowedSerdes.timeWindowedSerdeFrom(String.class, 10L), Serdes.Long()));
        grouped.windowedBy(SessionWindows.ofInactivityGapWithNoGrace(ms(5)))
            .count()
            .toStream()
            .to("out-session", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), Serdes.Long()));
        g.start(b.build());
        pipe(g,
            "k", "1", 3L,
            "k", "2", 7L,
            "k", "3", 300L);
        g.output("out-time", Kind.BYTES, Kind.LONG);
        g.output("out-session", Kind.BYTES, Kind.LONG);
    }
}
