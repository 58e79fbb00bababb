package compat.connect;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.runtime.errors.DeadLetterQueueReporter;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * How records, Connect data and errors are written into the golden files (the Rust test reads
 * them the same way; see README.md, "The golden files").
 */
final class Render {
    private Render() {}

    /** A consumed record: where, when, and its bytes. */
    static Map<String, Object> consumerRecord(final ConsumerRecord<byte[], byte[]> r) {
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", r.topic());
        out.put("partition", (long) r.partition());
        out.put("offset", r.offset());
        out.put("timestamp", r.timestamp());
        bytes(out, "key", r.key());
        bytes(out, "value", r.value());
        out.put("headers", headers(r.headers(), false));
        return out;
    }

    /**
     * A DLQ record as DeadLetterQueueReporter sent it: topic, partition (null: the producer's
     * partitioner picks), timestamp (null: none), key and value, every header in order. The
     * stack trace header is cut to its first line (Java frames name Java classes); its
     * "Caused by:" lines are listed apart, each to its first line.
     */
    static Map<String, Object> producerRecord(final ProducerRecord<byte[], byte[]> r) {
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", r.topic());
        out.put("partition", r.partition() == null ? null : (Object) (long) r.partition());
        out.put("timestamp", r.timestamp());
        bytes(out, "key", r.key());
        bytes(out, "value", r.value());
        out.put("headers", headers(r.headers(), true));
        final Header trace = r.headers().lastHeader(DeadLetterQueueReporter.ERROR_HEADER_EXCEPTION_STACK_TRACE);
        final List<Object> causes = new ArrayList<>();
        if (trace != null && trace.value() != null) {
            for (final String line : Connector.text(trace.value()).split("\n")) {
                if (line.startsWith("Caused by: ")) {
                    causes.add(line.substring("Caused by: ".length()));
                }
            }
        }
        out.put("stacktrace_causes", causes);
        return out;
    }

    private static void bytes(final Map<String, Object> out, final String name, final byte[] bytes) {
        out.put(name, bytes == null ? null : Connector.text(bytes));
        out.put(name + "_hex", Connector.hex(bytes));
    }

    private static List<Object> headers(final Iterable<Header> headers, final boolean cutTrace) {
        final List<Object> out = new ArrayList<>();
        for (final Header h : headers) {
            final List<Object> pair = new ArrayList<>();
            pair.add(h.key());
            String value = null;
            if (h.value() != null) {
                value = Connector.text(h.value());
                if (value == null) {
                    value = "hex:" + Connector.hex(h.value());
                } else if (cutTrace && h.key().equals(DeadLetterQueueReporter.ERROR_HEADER_EXCEPTION_STACK_TRACE)) {
                    value = firstLine(value);
                }
            }
            pair.add(value);
            out.add(pair);
        }
        return out;
    }

    static String firstLine(final String s) {
        final int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** A record the sink task kept, its Connect data rendered by {@link #value} and {@link #schema}. */
    static Map<String, Object> sinkRecord(final SinkRecord r) {
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", r.topic());
        out.put("partition", (long) r.kafkaPartition());
        out.put("offset", r.kafkaOffset());
        out.put("timestamp", r.timestamp());
        out.put("key_schema", schema(r.keySchema()));
        out.put("key", value(r.key()));
        out.put("value_schema", schema(r.valueSchema()));
        out.put("value", value(r.value()));
        final List<Object> headers = new ArrayList<>();
        for (final org.apache.kafka.connect.header.Header h : r.headers()) {
            headers.add(List.of(h.key(), schema(h.schema()), value(h.value())));
        }
        out.put("headers", headers);
        return out;
    }

    /**
     * A schema as text: its type, "?" when optional, and for a struct its fields in order
     * ({@code STRUCT{id:STRING,qty:INT64?}}), for an array its items ({@code ARRAY<INT64>}),
     * for a map its key and value ({@code MAP<STRING,INT64>}); "null" for none.
     */
    static String schema(final Schema s) {
        if (s == null) {
            return "null";
        }
        final StringBuilder sb = new StringBuilder(s.type().name());
        switch (s.type()) {
            case STRUCT -> {
                sb.append('{');
                boolean first = true;
                for (final Field f : s.fields()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    sb.append(f.name()).append(':').append(schema(f.schema()));
                }
                sb.append('}');
            }
            case ARRAY -> sb.append('<').append(schema(s.valueSchema())).append('>');
            case MAP -> sb.append('<').append(schema(s.keySchema())).append(',').append(schema(s.valueSchema())).append('>');
            default -> { }
        }
        if (s.isOptional()) {
            sb.append('?');
        }
        return sb.toString();
    }

    /**
     * A Connect value as text: null, true/false, integers with their width ({@code 3i32}),
     * strings JSON-quoted, bytes as {@code bytes:<hex>}, arrays {@code [a,b]}, maps with their
     * entries sorted by rendered key ({@code {"a":1i64}}), structs with their fields in schema
     * order ({@code Struct{id="o-1",qty=3i64}}). The scenarios have no floating-point values.
     */
    static String value(final Object v) {
        if (v == null) {
            return "null";
        } else if (v instanceof Boolean) {
            return v.toString();
        } else if (v instanceof Byte) {
            return v + "i8";
        } else if (v instanceof Short) {
            return v + "i16";
        } else if (v instanceof Integer) {
            return v + "i32";
        } else if (v instanceof Long) {
            return v + "i64";
        } else if (v instanceof String s) {
            final StringBuilder sb = new StringBuilder();
            Json.string(sb, s);
            return sb.toString();
        } else if (v instanceof byte[] b) {
            return "bytes:" + Connector.hex(b);
        } else if (v instanceof ByteBuffer b) {
            final byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            return "bytes:" + Connector.hex(copy);
        } else if (v instanceof List<?> list) {
            final List<String> items = new ArrayList<>();
            for (final Object item : list) {
                items.add(value(item));
            }
            return "[" + String.join(",", items) + "]";
        } else if (v instanceof Map<?, ?> map) {
            final TreeMap<String, String> sorted = new TreeMap<>();
            for (final Map.Entry<?, ?> e : map.entrySet()) {
                sorted.put(value(e.getKey()), value(e.getValue()));
            }
            final List<String> items = new ArrayList<>();
            sorted.forEach((k, val) -> items.add(k + ":" + val));
            return "{" + String.join(",", items) + "}";
        } else if (v instanceof Struct s) {
            final List<String> items = new ArrayList<>();
            for (final Field f : s.schema().fields()) {
                items.add(f.name() + "=" + value(s.getWithoutDefault(f.name())));
            }
            return "Struct{" + String.join(",", items) + "}";
        }
        throw new IllegalArgumentException("no rendering for " + v.getClass());
    }

    /** An exception and its causes, each as Throwable.toString() gives its first line. */
    static List<Object> chain(final Throwable t) {
        final List<Object> out = new ArrayList<>();
        for (Throwable c = t; c != null; c = c.getCause()) {
            out.add(firstLine(c.toString()));
        }
        return out;
    }
}
