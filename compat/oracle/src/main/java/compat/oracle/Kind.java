package compat.oracle;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The key/value types used by the scenarios, with the Kafka serde for each and the rule for
 * encoding a (deserialized) value in the golden JSON:
 *
 * <ul>
 *   <li>STRING: JSON string.</li>
 *   <li>INTEGER, LONG: JSON number (integer).</li>
 *   <li>DOUBLE: JSON number written with Java's {@code Double.toString} (e.g. {@code 1.5},
 *       {@code -0.0}, {@code 4.9E-324}); NaN and the infinities, which JSON cannot represent,
 *       are the JSON strings {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}.</li>
 *   <li>BYTES: JSON string {@code "hex:<lowercase hex>"} ({@code "hex:"} for an empty array).</li>
 * </ul>
 * A null key or value is always JSON {@code null}.
 */
enum Kind {
    STRING("string", Serdes.String()),
    INTEGER("integer", Serdes.Integer()),
    LONG("long", Serdes.Long()),
    DOUBLE("double", Serdes.Double()),
    BYTES("bytes", Serdes.ByteArray());

    final String serdeName;
    private final Serde<?> serde;

    Kind(final String serdeName, final Serde<?> serde) {
        this.serdeName = serdeName;
        this.serde = serde;
    }

    @SuppressWarnings("unchecked")
    <T> Serde<T> serde() {
        return (Serde<T>) serde;
    }

    <T> Serializer<T> serializer() {
        return this.<T>serde().serializer();
    }

    <T> Deserializer<T> deserializer() {
        return this.<T>serde().deserializer();
    }

    /** JSON encoding of a deserialized key or value of this kind. */
    Object toJson(final Object v) {
        if (v == null) {
            return null;
        }
        switch (this) {
            case STRING:
                return (String) v;
            case INTEGER:
                return (long) (Integer) v;
            case LONG:
                return (Long) v;
            case DOUBLE:
                return doubleToJson((Double) v);
            case BYTES:
                return "hex:" + hex((byte[]) v);
            default:
                throw new AssertionError(this);
        }
    }

    /** Canonical textual form of an input value (the "input" field of serde_bytes). */
    String inputText(final Object v) {
        if (v == null) {
            return null;
        }
        switch (this) {
            case STRING:
                return (String) v;
            case INTEGER:
            case LONG:
            case DOUBLE:
                return v.toString();
            case BYTES:
                return "hex:" + hex((byte[]) v);
            default:
                throw new AssertionError(this);
        }
    }

    static Object doubleToJson(final double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (d == Double.POSITIVE_INFINITY) {
            return "Infinity";
        }
        if (d == Double.NEGATIVE_INFINITY) {
            return "-Infinity";
        }
        return d;
    }

    static String hex(final byte[] bytes) {
        final StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (final byte b : bytes) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    /** Header values: the UTF-8 string, or "hex:..." if the bytes are not valid UTF-8, or null. */
    static String headerValue(final byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
        } catch (final CharacterCodingException e) {
            return "hex:" + hex(bytes);
        }
    }
}
