package compat.connect;

import java.util.List;
import java.util.Map;

/**
 * Tiny deterministic JSON writer (no dependencies).
 *
 * <p>Layout is identical to Rust's {@code serde_json::to_string_pretty}: 2-space indent,
 * {@code "key": value}, one element per line, empty arrays/objects as {@code []}/{@code {}}.
 * The document ends with a single trailing newline.
 *
 * <p>String escaping: only {@code "} and {@code \} and the control characters U+0000..U+001F
 * are escaped. {@code \n}, {@code \t}, {@code \r} use their short forms; every other control
 * character is written as {@code \}{@code u00xx} (lowercase hex). Everything else, including
 * non-ASCII and U+007F, is written as-is (the file is UTF-8).
 *
 * <p>Supported values: {@code null}, {@link String}, {@link Boolean}, {@link Long},
 * {@link Integer}, finite {@link Double} (written with {@link Double#toString(double)}),
 * {@link List} and {@link Map} (written in the map's iteration order, so use a
 * LinkedHashMap or TreeMap).
 */
final class Json {
    private Json() {}

    static String write(final Object value) {
        final StringBuilder sb = new StringBuilder();
        write(sb, value, 0);
        sb.append('\n');
        return sb.toString();
    }

    private static void indent(final StringBuilder sb, final int level) {
        for (int i = 0; i < level; i++) {
            sb.append("  ");
        }
    }

    private static void write(final StringBuilder sb, final Object value, final int level) {
        if (value == null) {
            sb.append("null");
        } else if (value instanceof String) {
            string(sb, (String) value);
        } else if (value instanceof Boolean) {
            sb.append(value.toString());
        } else if (value instanceof Long || value instanceof Integer) {
            sb.append(value.toString());
        } else if (value instanceof Double) {
            final double d = (Double) value;
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("non-finite double must be encoded as a string: " + d);
            }
            sb.append(Double.toString(d));
        } else if (value instanceof List) {
            final List<?> list = (List<?>) value;
            if (list.isEmpty()) {
                sb.append("[]");
                return;
            }
            sb.append("[\n");
            for (int i = 0; i < list.size(); i++) {
                indent(sb, level + 1);
                write(sb, list.get(i), level + 1);
                if (i + 1 < list.size()) {
                    sb.append(',');
                }
                sb.append('\n');
            }
            indent(sb, level);
            sb.append(']');
        } else if (value instanceof Map) {
            final Map<?, ?> map = (Map<?, ?>) value;
            if (map.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            int i = 0;
            for (final Map.Entry<?, ?> e : map.entrySet()) {
                indent(sb, level + 1);
                string(sb, (String) e.getKey());
                sb.append(": ");
                write(sb, e.getValue(), level + 1);
                if (++i < map.size()) {
                    sb.append(',');
                }
                sb.append('\n');
            }
            indent(sb, level);
            sb.append('}');
        } else {
            throw new IllegalArgumentException("unsupported JSON value type: " + value.getClass());
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static void string(final StringBuilder sb, final String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                default:
                    if (c < 0x20) {
                        sb.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                    } else {
                        if (Character.isSurrogate(c)) {
                            // Only well-formed surrogate pairs are allowed (they become one UTF-8 code point).
                            final boolean ok = Character.isHighSurrogate(c)
                                && i + 1 < s.length()
                                && Character.isLowSurrogate(s.charAt(i + 1));
                            if (!ok) {
                                throw new IllegalArgumentException("lone surrogate in string at index " + i);
                            }
                            sb.append(c).append(s.charAt(++i));
                            break;
                        }
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
