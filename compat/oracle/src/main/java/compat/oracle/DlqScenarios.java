package compat.oracle;

import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler;
import org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The exception handlers with a dead letter queue (KIP-1034,
 * errors.dead.letter.queue.topic.name = "dlq"): the bad record goes to "dlq" with its raw key,
 * value, headers and timestamp and the __streams.errors.* headers (the stack trace header is
 * kept to its first line, see Golden). The lambdas throw RuntimeException, the class the Rust
 * side reports for every error of user code.
 */
final class DlqScenarios {
    private DlqScenarios() {}

    static final String DLQ = "dlq";

    /** A value Long cannot read, under LogAndContinueExceptionHandler: skipped, and in the DLQ. */
    @Scenario
    static void dlq_deserialization_continue(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(Serdes.String(), Serdes.Long()))
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build(), p -> {
            p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, DLQ);
            p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndContinueExceptionHandler.class.getName());
        });
        final TestInputTopic<String, byte[]> in = g.input("in", Kind.STRING, Kind.BYTES);
        in.pipeInput("k1", new byte[] {0, 0, 0, 0, 0, 0, 0, 7}, 0L);
        in.pipeInput(Golden.record("k2", new byte[] {1, 2, 3}, 5L, Golden.headers("h", "v")));
        in.pipeInput("k3", new byte[] {0, 0, 0, 0, 0, 0, 0, 9}, 6L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(DLQ, Kind.STRING, Kind.BYTES);
    }

    /** The default LogAndFailExceptionHandler with a DLQ: the pipe fails; a record piped after it is processed. */
    @Scenario
    static void dlq_deserialization_fail_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(Serdes.String(), Serdes.Long()))
            .to("out", Produced.with(Serdes.String(), Serdes.Long()));
        g.start(b.build(), p -> p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, DLQ));
        final TestInputTopic<String, byte[]> in = g.input("in", Kind.STRING, Kind.BYTES);
        in.pipeInput("k1", new byte[] {0, 0, 0, 0, 0, 0, 0, 7}, 0L);
        g.expectError(() -> in.pipeInput("k2", new byte[] {1, 2, 3}, 1L));
        in.pipeInput("k3", new byte[] {0, 0, 0, 0, 0, 0, 0, 9}, 2L);
        g.output("out", Kind.STRING, Kind.LONG);
        g.output(DLQ, Kind.STRING, Kind.BYTES);
    }

    /** mapValues throws on "boom", under LogAndContinueProcessingExceptionHandler: skipped, and in the DLQ. */
    @Scenario
    static void dlq_processing_continue(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues(v -> {
            if (v.equals("boom")) {
                throw new RuntimeException("boom");
            }
            return v.toUpperCase();
        }).to("out");
        g.start(b.build(), p -> {
            p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, DLQ);
            p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndContinueProcessingExceptionHandler.class.getName());
        });
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput(Golden.record("k2", "boom", 5L, Golden.headers("h", "v")));
        in.pipeInput("k3", "c", 6L);
        g.output("out");
        g.output(DLQ);
    }

    /** mapValues throws on "boom", under LogAndFailProcessingExceptionHandler: the pipe fails; a record piped after it is processed. */
    @Scenario
    static void dlq_processing_fail_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues(v -> {
            if (v.equals("boom")) {
                throw new RuntimeException("boom");
            }
            return v.toUpperCase();
        }).to("out");
        g.start(b.build(), p -> {
            p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, DLQ);
            p.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_CLASS_CONFIG,
                LogAndFailProcessingExceptionHandler.class.getName());
        });
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        g.expectError(() -> in.pipeInput("k2", "boom", 1L));
        in.pipeInput("k3", "c", 2L);
        g.output("out");
        g.output(DLQ);
    }

    /** A String serde whose serializer throws SerializationException("cannot write bad") on "bad". */
    static Serde<String> picky() {
        final Serializer<String> ser = (topic, v) -> {
            if ("bad".equals(v)) {
                throw new SerializationException("cannot write bad");
            }
            return v == null ? null : v.getBytes(StandardCharsets.UTF_8);
        };
        final Deserializer<String> de = (topic, bytes) ->
            bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        return Serdes.serdeFrom(ser, de);
    }

    /**
     * The sink's value serializer fails on "bad", under the default production handler
     * (DefaultProductionExceptionHandler): the DLQ record first, then the pipe fails; a record
     * piped after it is processed.
     */
    @Scenario
    static void dlq_production_fail_error(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to("out", Produced.with(Serdes.String(), picky()));
        g.start(b.build(), p -> p.put(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG, DLQ));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        g.expectError(() -> in.pipeInput(Golden.record("k2", "bad", 5L, Golden.headers("h", "v"))));
        in.pipeInput("k3", "c", 6L);
        g.output("out");
        g.output(DLQ);
    }
}
