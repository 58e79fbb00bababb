package compat.oracle;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * The performance peer of {@code streams-test/benches/stateless.rs}: pipes 1,000,000 string
 * records through {@code filter} + {@code mapValues} in Kafka's own TopologyTestDriver and
 * reads them back, the same workload and data as the Rust benchmark. Warms the JIT up with
 * {@code WARMUP} runs, then prints the best of {@code RUNS} runs as
 * {@code kafka_records_per_second=<n>}.
 *
 * <pre>
 *   java compat.oracle.PerfPeer [WARMUP] [RUNS]
 * </pre>
 */
public final class PerfPeer {
    static final int RECORDS = 1_000_000;

    private PerfPeer() {}

    static boolean keep(final String value) {
        return !value.endsWith("7");
    }

    static int run(final List<String> keys, final List<String> values) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream("input")
            .filter((k, v) -> keep(v))
            .mapValues(v -> v.toUpperCase(java.util.Locale.ROOT))
            .to("output");
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "perf-peer");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        try (TopologyTestDriver driver = new TopologyTestDriver(builder.build(), props, Instant.ofEpochMilli(0))) {
            final TestInputTopic<String, String> input =
                driver.createInputTopic("input", new StringSerializer(), new StringSerializer());
            final TestOutputTopic<String, String> output =
                driver.createOutputTopic("output", new StringDeserializer(), new StringDeserializer());
            for (int i = 0; i < RECORDS; i++) {
                input.pipeInput(keys.get(i), values.get(i));
            }
            final List<KeyValue<String, String>> out = output.readKeyValuesToList();
            return out.size();
        }
    }

    public static void main(final String[] args) {
        final int warmup = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        final int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        final List<String> keys = new ArrayList<>(RECORDS);
        final List<String> values = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            keys.add("key-" + (i % 1000));
            values.add("value number " + i);
        }
        int expected = 0;
        for (final String v : values) {
            if (keep(v)) {
                expected++;
            }
        }
        for (int i = 0; i < warmup; i++) {
            run(keys, values);
        }
        long best = Long.MAX_VALUE;
        for (int i = 0; i < runs; i++) {
            final long start = System.nanoTime();
            final int n = run(keys, values);
            final long elapsed = System.nanoTime() - start;
            if (n != expected) {
                throw new IllegalStateException("expected " + expected + " records, read " + n);
            }
            best = Math.min(best, elapsed);
        }
        final double perSecond = RECORDS / (best / 1e9);
        System.out.printf(java.util.Locale.ROOT, "kafka_records_per_second=%.0f%n", perSecond);
    }
}
