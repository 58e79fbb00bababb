package compat.oracle;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.SessionWindowedDeserializer;
import org.apache.kafka.streams.kstream.TimeWindowedDeserializer;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Everything one scenario records, plus the helpers the scenarios use to drive Kafka's
 * {@link TopologyTestDriver} in a uniform, reproducible way.
 *
 * <p>Life cycle (driven by {@link Main}): the scenario method builds a topology, calls
 * {@link #start}, creates input topics with {@link #input}, pipes records, declares output
 * topics with {@link #output}, and returns. {@link Main} then calls {@link #finish()}, which reads
 * every declared output topic with {@code readRecordsToList()}, captures
 * {@code producedTopicNames()}, and closes the driver.
 */
final class Golden {
    static final String KAFKA_VERSION = "4.4.0";
    static final String APPLICATION_ID = "compat";
    /** Wall-clock start of every driver. */
    static final Instant DRIVER_START = Instant.ofEpochMilli(0);

    final String name;
    private String describe;
    private TopologyTestDriver driver;
    private final Map<String, Reader> outputKinds = new TreeMap<>();
    private final Map<String, List<Object>> outputs = new TreeMap<>();
    private List<String> producedTopics = new ArrayList<>();
    private List<Object> serdeBytes;
    private List<String> observed;
    private String error;

    Golden(final String name) {
        this.name = name;
    }

    /** The configuration every scenario uses unless it says otherwise. */
    static Properties defaultProps() {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APPLICATION_ID);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        return props;
    }

    /**
     * Config change of the {@code *_cache_off} scenarios: {@code statestore.cache.max.bytes = 0}.
     * TopologyTestDriver otherwise runs with Kafka's record cache (10 MB), flushed after each
     * piped record, so that a store's forwarded updates and changelog records pass through it.
     */
    static void noCache(final Properties props) {
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
    }

    /** Records describe() and starts the driver with the default config at wall-clock 0. */
    TopologyTestDriver start(final Topology topology) {
        return start(topology, p -> { });
    }

    TopologyTestDriver start(final Topology topology, final Consumer<Properties> configure) {
        if (driver != null) {
            throw new IllegalStateException("driver already started");
        }
        describe = topology.describe().toString();
        final Properties props = defaultProps();
        configure.accept(props);
        driver = new TopologyTestDriver(topology, props, DRIVER_START);
        return driver;
    }

    TopologyTestDriver driver() {
        return driver;
    }

    /** String/String input topic, start timestamp 0, no auto-advance. */
    TestInputTopic<String, String> input(final String topic) {
        return input(topic, Kind.STRING, Kind.STRING, 0L, 0L);
    }

    <K, V> TestInputTopic<K, V> input(final String topic, final Kind key, final Kind value) {
        return input(topic, key, value, 0L, 0L);
    }

    <K, V> TestInputTopic<K, V> input(final String topic, final Kind key, final Kind value,
                                      final long startMs, final long autoAdvanceMs) {
        return input(topic, key.<K>serializer(), value.<V>serializer(), startMs, autoAdvanceMs);
    }

    <K, V> TestInputTopic<K, V> input(final String topic, final Serializer<K> key, final Serializer<V> value,
                                      final long startMs, final long autoAdvanceMs) {
        return driver.createInputTopic(topic, key, value,
            Instant.ofEpochMilli(startMs), Duration.ofMillis(autoAdvanceMs));
    }

    /** Declares a String/String output topic. */
    void output(final String topic) {
        output(topic, Kind.STRING, Kind.STRING);
    }

    void output(final String topic, final Kind key, final Kind value) {
        declare(topic, new Reader(key.deserializer(), key::toJson, value));
    }

    /**
     * Declares an output topic whose keys are String keys of time windows of {@code sizeMs},
     * written with Kafka's {@code TimeWindowedSerde} (key bytes, then the window start). They are
     * read back with {@code TimeWindowedDeserializer(StringDeserializer, sizeMs)} and written to
     * the golden as {@code Windowed.toString()}: {@code "[key@start/end]"}.
     */
    void outputTimeWindowed(final String topic, final long sizeMs, final Kind value) {
        final Deserializer<Object> keys = cast(new TimeWindowedDeserializer<>(Serdes.String().deserializer(), sizeMs));
        declare(topic, new Reader(keys, Golden::windowedToJson, value));
    }

    /**
     * Declares an output topic whose keys are String keys of session windows, written with
     * Kafka's {@code SessionWindowedSerde} (key bytes, window end, window start); in the golden
     * as {@code "[key@start/end]"}.
     */
    void outputSessionWindowed(final String topic, final Kind value) {
        final Deserializer<Object> keys = cast(new SessionWindowedDeserializer<>(Serdes.String().deserializer()));
        declare(topic, new Reader(keys, Golden::windowedToJson, value));
    }

    private void declare(final String topic, final Reader reader) {
        if (outputKinds.put(topic, reader) != null) {
            throw new IllegalStateException("output declared twice: " + topic);
        }
    }

    @SuppressWarnings("unchecked")
    private static Deserializer<Object> cast(final Deserializer<?> d) {
        return (Deserializer<Object>) d;
    }

    /** A windowed key as {@code Windowed.toString()} prints it, {@code [key@start/end]}. */
    private static Object windowedToJson(final Object windowed) {
        return windowed == null ? null : windowed.toString();
    }

    /** How one declared output topic is read: key deserializer and JSON encoding, value kind. */
    private static final class Reader {
        final Deserializer<Object> key;
        final Function<Object, Object> keyJson;
        final Kind value;

        Reader(final Deserializer<Object> key, final Function<Object, Object> keyJson, final Kind value) {
            this.key = key;
            this.keyJson = keyJson;
            this.value = value;
        }
    }

    /** Appends a line to the "observed" list (side effects seen by peek/foreach/punctuators/...). */
    void observe(final String line) {
        if (observed == null) {
            observed = new ArrayList<>();
        }
        observed.add(line);
    }

    /** Marks the scenario as one that records "observed" even if nothing gets observed. */
    void observing() {
        if (observed == null) {
            observed = new ArrayList<>();
        }
    }

    /** Adds one serde_bytes entry: how Kafka's serializer for {@code kind} encodes {@code value}. */
    void serdeBytes(final Kind kind, final Object value) {
        if (serdeBytes == null) {
            serdeBytes = new ArrayList<>();
        }
        final byte[] bytes = kind.serializer().serialize("topic", value);
        final Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("serde", kind.serdeName);
        entry.put("input", kind.inputText(value));
        entry.put("hex", bytes == null ? null : Kind.hex(bytes));
        serdeBytes.add(entry);
    }

    /** Runs an action that must throw; records "SimpleName: message". */
    void expectError(final Runnable action) {
        try {
            action.run();
        } catch (final RuntimeException e) {
            if (error != null) {
                throw new IllegalStateException("scenario recorded two errors", e);
            }
            error = e.getClass().getSimpleName() + ": " + e.getMessage();
            return;
        }
        throw new IllegalStateException(name + ": expected an exception but none was thrown");
    }

    /** Builds headers from alternating key, value (value may be null) strings. */
    static Headers headers(final String... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("odd number of header strings");
        }
        final RecordHeaders headers = new RecordHeaders();
        for (int i = 0; i < keyValues.length; i += 2) {
            final String v = keyValues[i + 1];
            headers.add(keyValues[i], v == null ? null : v.getBytes(StandardCharsets.UTF_8));
        }
        return headers;
    }

    static <K, V> TestRecord<K, V> record(final K key, final V value, final long ts, final Headers headers) {
        return new TestRecord<>(key, value, headers, ts);
    }

    /** The dead letter queue's stack trace header (KIP-1034). */
    static final String STACKTRACE_HEADER = "__streams.errors.stacktrace";

    private static String firstLine(final String text) {
        if (text == null) {
            return null;
        }
        final int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }

    /** Reads all declared outputs, captures producedTopicNames and closes the driver. */
    void finish() {
        if (driver == null) {
            if (!outputKinds.isEmpty()) {
                throw new IllegalStateException(name + ": outputs declared but no driver started");
            }
            return;
        }
        try {
            for (final Map.Entry<String, Reader> e : outputKinds.entrySet()) {
                final Reader reader = e.getValue();
                final Kind v = reader.value;
                final TestOutputTopic<Object, Object> topic =
                    driver.createOutputTopic(e.getKey(), reader.key, v.deserializer());
                final List<Object> records = new ArrayList<>();
                for (final TestRecord<Object, Object> r : topic.readRecordsToList()) {
                    final Map<String, Object> rec = new LinkedHashMap<>();
                    rec.put("key", reader.keyJson.apply(r.key()));
                    rec.put("value", v.toJson(r.value()));
                    rec.put("timestamp", r.timestamp());
                    final List<Object> hs = new ArrayList<>();
                    for (final Header h : r.headers().toArray()) {
                        final List<Object> pair = new ArrayList<>();
                        pair.add(h.key());
                        // A Java stack trace names the oracle's own lines: only its
                        // first line ("<exception class>: <message>") is kept.
                        pair.add(STACKTRACE_HEADER.equals(h.key())
                            ? firstLine(Kind.headerValue(h.value()))
                            : Kind.headerValue(h.value()));
                        hs.add(pair);
                    }
                    rec.put("headers", hs);
                    records.add(rec);
                }
                outputs.put(e.getKey(), records);
            }
            producedTopics = new ArrayList<>(new TreeSet<>(driver.producedTopicNames()));
        } finally {
            driver.close();
        }
    }

    /** Closes the driver (if any) after a failed scenario, ignoring errors. */
    void finishQuietly() {
        if (driver != null) {
            try {
                driver.close();
            } catch (final RuntimeException ignored) {
                // the scenario failure is what gets reported
            }
            driver = null;
        }
    }

    String toJson() {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kafka_version", KAFKA_VERSION);
        root.put("scenario", name);
        root.put("describe", describe == null ? "" : describe);
        root.put("outputs", outputs);
        root.put("produced_topics", producedTopics);
        if (serdeBytes != null) {
            root.put("serde_bytes", serdeBytes);
        }
        if (observed != null) {
            root.put("observed", observed);
        }
        if (error != null) {
            root.put("error", error);
        }
        return Json.write(root);
    }
}
