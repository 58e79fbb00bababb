package compat.oracle;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Serde byte encodings ("serde_bytes": Kafka's serializer applied directly to each value) and
 * the same values round-tripped through a pass-through topology typed with that serde
 * (key = index of the value as the same type where possible).
 */
final class SerdeScenarios {
    private SerdeScenarios() {}

    static final List<String> STRINGS = Arrays.asList(
        "",
        "hello",
        "grüße €",
        "\uD83D\uDE00",                         // U+1F600 (emoji, 4 UTF-8 bytes)
        "tab\tnl\ncr\rctl\u0001\u001f",
        "quote\"back\\slash/",
        null
    );

    /** String serde (UTF-8); topology stream("in").to("out") with keys "k0".."k6". */
    @Scenario
    static void serde_string(final Golden g) {
        for (final String s : STRINGS) {
            g.serdeBytes(Kind.STRING, s);
        }
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        for (int i = 0; i < STRINGS.size(); i++) {
            in.pipeInput("k" + i, STRINGS.get(i), i);
        }
        // A non-ASCII key too.
        in.pipeInput("ключ", "значение", 100L);
        g.output("out");
    }

    /** Pass-through typed with the same serde for key and value; key = value's index. */
    private static <T> void roundTrip(final Golden g, final Kind kind, final List<T> values,
                                      final java.util.function.IntFunction<T> keyOf) {
        for (final T v : values) {
            g.serdeBytes(kind, v);
        }
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(kind.<T>serde(), kind.<T>serde()))
            .to("out", Produced.with(kind.<T>serde(), kind.<T>serde()));
        g.start(b.build());
        final TestInputTopic<T, T> in = g.input("in", kind, kind);
        for (int i = 0; i < values.size(); i++) {
            in.pipeInput(keyOf.apply(i), values.get(i), i);
        }
        g.output("out", kind, kind);
    }

    /** Integer serde (4 bytes big-endian). */
    @Scenario
    static void serde_integer(final Golden g) {
        roundTrip(g, Kind.INTEGER,
            Arrays.asList(0, 1, -1, 256, Integer.MIN_VALUE, Integer.MAX_VALUE, null),
            i -> i);
    }

    /** Long serde (8 bytes big-endian). */
    @Scenario
    static void serde_long(final Golden g) {
        roundTrip(g, Kind.LONG,
            Arrays.asList(0L, 1L, -1L, 256L, Long.MIN_VALUE, Long.MAX_VALUE, null),
            i -> (long) i);
    }

    /** Double serde (IEEE 754 binary64, big-endian). */
    @Scenario
    static void serde_double(final Golden g) {
        roundTrip(g, Kind.DOUBLE,
            Arrays.asList(0.0, -0.0, 1.5, 0.1, Double.NaN, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, null),
            i -> (double) i);
    }

    /** ByteArray serde (identity). */
    @Scenario
    static void serde_bytes(final Golden g) {
        final List<byte[]> values = new ArrayList<>();
        values.add(new byte[0]);
        values.add(new byte[] {0x00, (byte) 0xff});
        values.add(new byte[] {0x68, 0x69});
        values.add(null);
        roundTrip(g, Kind.BYTES, values, i -> new byte[] {(byte) i});
    }

    /**
     * Changing types inside a topology: String/String input, then
     * map((k, v) -> (k.length(), (long) v.length())) to "out-int-long" with Integer/Long serdes,
     * and mapValues(v -> v.length() / 2.0) to "out-double" with String/Double serdes.
     */
    @Scenario
    static void serde_mixed_types(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.map((k, v) -> KeyValue.pair(k.length(), (long) v.length()))
            .to("out-int-long", Produced.with(Serdes.Integer(), Serdes.Long()));
        s.mapValues(v -> v.length() / 2.0)
            .to("out-double", Produced.with(Serdes.String(), Serdes.Double()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k", "abc", 0L);
        in.pipeInput("key", "", 1L);
        g.output("out-int-long", Kind.INTEGER, Kind.LONG);
        g.output("out-double", Kind.STRING, Kind.DOUBLE);
    }

    /**
     * Default serdes from config: default.value.serde = LongSerde (key stays String);
     * stream("in").mapValues(v -> v + 1).to("out") uses the defaults everywhere.
     */
    @Scenario
    static void serde_default_from_config(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, Long>stream("in").mapValues(v -> v + 1).to("out");
        g.start(b.build(), p -> p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG,
            Serdes.LongSerde.class.getName()));
        final TestInputTopic<String, Long> in = g.input("in", Kind.STRING, Kind.LONG);
        in.pipeInput("k1", 41L, 0L);
        in.pipeInput("k2", -1L, 1L);
        g.output("out", Kind.STRING, Kind.LONG);
    }
}
