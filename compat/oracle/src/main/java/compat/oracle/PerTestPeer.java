package compat.oracle;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The performance peer of {@code streams-test/benches/per_test.rs}: 2,000 tiny word-count
 * tests in Kafka's own TopologyTestDriver, each building its topology ({@code flatMapValues},
 * {@code groupBy}, {@code count} into an in-memory store, {@code toStream}, {@code to}),
 * creating a driver and its two topics, piping the same 5 lines as the Rust benchmark, reading
 * the counts back and closing the driver; and the same tests of one topology built once and
 * handed to every driver. Warms the JIT up with {@code WARMUP} runs of 2,000 tests of each,
 * then prints the best of {@code RUNS} runs as {@code kafka_tests_per_second=<n>} and
 * {@code kafka_built_once_tests_per_second=<n>}, and the records each test read as
 * {@code kafka_records_read=<n>}.
 *
 * <pre>
 *   java compat.oracle.PerTestPeer [WARMUP] [RUNS]
 * </pre>
 */
public final class PerTestPeer {
    static final int TESTS = 2_000;

    /** The lines every test pipes (the same in per_test.rs). */
    static final String[] LINES = {
        "Hello Kafka Streams",
        "All streams lead to Kafka",
        "Join Kafka Summit",
        "the quick brown fox jumps over the lazy dog",
        "a tiny test of the test driver",
    };

    private PerTestPeer() {}

    static Topology topology() {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream("lines")
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.getDefault()).split("\\W+")))
            .groupBy((key, word) -> word)
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts")))
            .toStream()
            .to("counts-out", Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** One test: topology, driver, topics, 5 lines, read, close; returns the records read. */
    static int oneTest() {
        return oneTestOf(topology());
    }

    /** One test of a topology already built: driver, topics, 5 lines, read, close. */
    static int oneTestOf(final Topology topology) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "per-test-peer");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        try (TopologyTestDriver driver = new TopologyTestDriver(topology, props, Instant.ofEpochMilli(0))) {
            final TestInputTopic<String, String> input =
                driver.createInputTopic("lines", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, Long> output =
                driver.createOutputTopic("counts-out", new StringDeserializer(), new LongDeserializer());
            for (final String line : LINES) {
                input.pipeInput(line);
            }
            final List<KeyValue<String, Long>> counts = output.readKeyValuesToList();
            return counts.size();
        }
    }

    static int run() {
        int read = 0;
        for (int i = 0; i < TESTS; i++) {
            read += oneTest();
        }
        return read;
    }

    /** The tests of a suite that builds its topology once and hands it to every driver. */
    static int runBuiltOnce() {
        final Topology built = topology();
        int read = 0;
        for (int i = 0; i < TESTS; i++) {
            read += oneTestOf(built);
        }
        return read;
    }

    /** The best time of {@code runs} runs of {@code run}, checking each read every record. */
    static long bestOf(final int runs, final java.util.function.IntSupplier run, final int expected) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < runs; i++) {
            final long start = System.nanoTime();
            final int read = run.getAsInt();
            final long elapsed = System.nanoTime() - start;
            if (read != expected * TESTS) {
                throw new IllegalStateException("expected " + expected * TESTS + " records, read " + read);
            }
            best = Math.min(best, elapsed);
        }
        return best;
    }

    public static void main(final String[] args) {
        final int warmup = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        final int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        final int expected = oneTest();
        for (int i = 0; i < warmup; i++) {
            run();
            runBuiltOnce();
        }
        final long best = bestOf(runs, PerTestPeer::run, expected);
        final long bestBuiltOnce = bestOf(runs, PerTestPeer::runBuiltOnce, expected);
        System.out.printf(Locale.ROOT, "kafka_tests_per_second=%.0f%n", TESTS / (best / 1e9));
        System.out.printf(Locale.ROOT, "kafka_built_once_tests_per_second=%.0f%n", TESTS / (bestBuiltOnce / 1e9));
        System.out.printf(Locale.ROOT, "kafka_records_read=%d%n", expected);
    }
}
