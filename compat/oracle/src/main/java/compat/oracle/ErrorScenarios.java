package compat.oracle;

import java.util.regex.Pattern;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Scenarios where the driver throws. "error" holds "ExceptionSimpleName: message" of the
 * exception thrown by the pipe call; outputs produced before (and after) are still recorded.
 */
final class ErrorScenarios {
    private ErrorScenarios() {}

    /** Piping to a topic that no source reads: IllegalArgumentException; the driver stays usable. */
    @Scenario
    static void unknown_topic_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        final TestInputTopic<String, String> nope = g.input("nope");
        in.pipeInput("k1", "a", 0L);
        g.expectError(() -> nope.pipeInput("k2", "b", 1L));
        in.pipeInput("k3", "c", 2L);
        g.output("out");
    }

    /** Pattern source "in-.*": a topic that does not match the pattern is unknown. */
    @Scenario
    static void pattern_unknown_topic_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(Pattern.compile("in-.*")).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> ok = g.input("in-x");
        final TestInputTopic<String, String> bad = g.input("other");
        ok.pipeInput("k1", "a", 0L);
        g.expectError(() -> bad.pipeInput("k2", "b", 1L));
        g.output("out");
    }

    /**
     * Source consumes with a Long value deserializer; a 3-byte value cannot be deserialized and
     * the default (log-and-fail) deserialization handler fails.
     */
    @Scenario
    static void deserialization_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(Serdes.String(), Serdes.Long()))
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build());
        final TestInputTopic<String, byte[]> in = g.input("in", Kind.STRING, Kind.BYTES);
        in.pipeInput("k1", new byte[] {0, 0, 0, 0, 0, 0, 0, 7}, 0L);
        g.expectError(() -> in.pipeInput("k2", new byte[] {1, 2, 3}, 1L));
        g.output("out", Kind.STRING, Kind.LONG);
    }

    /**
     * A record with a negative timestamp: the default timestamp extractor
     * (FailOnInvalidTimestamp) rejects it.
     */
    @Scenario
    static void negative_timestamp_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        g.expectError(() -> in.pipeInput("k2", "b", -1L));
        g.output("out");
    }

    /** An exception thrown by a user lambda (mapValues) surfaces from pipeInput. */
    @Scenario
    static void user_exception_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues(v -> {
            if (v.equals("boom")) {
                throw new IllegalStateException("boom");
            }
            return v;
        }).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        g.expectError(() -> in.pipeInput("k2", "boom", 1L));
        g.output("out");
    }

    /** A topology without any source: the driver starts; piping fails with the unknown-topic error. */
    @Scenario
    static void no_source_unknown_topic_error(final Golden g) {
        g.start(new StreamsBuilder().build());
        final TestInputTopic<String, String> in = g.input("in");
        g.expectError(() -> in.pipeInput("k1", "a", 0L));
    }

    /**
     * A source named "orders.v1" (a plain name with a regex character): piping to "ordersXv1",
     * which the name matches as a regex, fails with Kafka's TopologyException; piping to the
     * named topic works.
     */
    @Scenario
    static void source_name_with_regex_characters_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("orders.v1").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> named = g.input("orders.v1");
        final TestInputTopic<String, String> other = g.input("ordersXv1");
        named.pipeInput("k1", "a", 0L);
        g.expectError(() -> other.pipeInput("k2", "b", 1L));
        named.pipeInput("k3", "c", 2L);
        g.output("out");
    }
}
