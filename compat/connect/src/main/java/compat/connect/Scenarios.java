package compat.connect;

import java.util.Map;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.transforms.Cast;
import org.apache.kafka.connect.transforms.Filter;
import org.apache.kafka.connect.transforms.InsertField;
import org.apache.kafka.connect.transforms.ReplaceField;
import org.apache.kafka.connect.transforms.predicates.HasHeaderKey;
import org.apache.kafka.connect.transforms.predicates.RecordIsTombstone;
import org.apache.kafka.connect.transforms.predicates.TopicNameMatches;

/**
 * The scenarios: each configures a {@link Connector} (the connector "orders-sink" reading
 * "orders", task 0) and the records of one poll. They mirror streams-connect's tests
 * (streams-connect/tests/sink.rs), one failure path each; streams-connect/tests/oracle.rs runs
 * the same ones. The key, value and header converters are StringConverter unless said.
 */
final class Scenarios {
    private Scenarios() {}

    static JsonConverter json(final boolean schemasEnable, final String type) {
        final JsonConverter c = new JsonConverter();
        c.configure(Map.of("schemas.enable", Boolean.toString(schemasEnable), "converter.type", type));
        return c;
    }

    // ---- converters ----

    /** Schemaless JSON values; the middle one does not parse: VALUE_CONVERTER, its headers kept. */
    @Scenario
    static Connector value_converter_bad_json(final Connector c) {
        return c.dlq(true).valueConverter(json(false, "value"))
            .send(1_000, "o-1", "{\"id\":1}")
            .send(1_005, "o-2", "{not json", "trace", "t-9", "empty", null)
            .send(1_005, "o-3", "{\"id\":3}");
    }

    /** Context headers off: the DLQ record is the original (a null key, its header), nothing more. */
    @Scenario
    static Connector value_converter_bad_json_without_context_headers(final Connector c) {
        return c.dlq(false).valueConverter(json(false, "value"))
            .send(1_000, null, "]", "h", "1");
    }

    /** A key converter expecting envelopes (schemas.enable=true) gets plain JSON: KEY_CONVERTER; a tombstone too. */
    @Scenario
    static Connector key_converter_json_without_envelope(final Connector c) {
        return c.dlq(true).keyConverter(json(true, "key"))
            .send(1_000, "{\"id\":\"o-1\"}", "v")
            .send(1_001, "{\"id\":\"o-2\"}", null);
    }

    /** A JSON header converter: one header parses, one does not: HEADER_CONVERTER. */
    @Scenario
    static Connector header_converter_bad_json(final Connector c) {
        return c.dlq(true).headerConverter(json(false, "header"))
            .send(1_000, "k", "v", "good", "1")
            .send(1_000, "k", "v", "bad", "nope");
    }

    /** StringConverter never fails: malformed UTF-8 becomes U+FFFD, nothing reaches the DLQ. */
    @Scenario
    static Connector string_converter_reads_malformed_utf8(final Connector c) {
        c.dlq(true);
        c.sendBytes(1_000, Connector.utf8("k"), new byte[] {(byte) 0xff, 'a'});
        return c;
    }

    // ---- transforms ----

    /** InsertField$Value on a string value (schemaless JSON): TRANSFORMATION, not retried under errors.retry.timeout. */
    @Scenario
    static Connector transformation_insert_field_on_a_string(final Connector c) {
        return c.dlq(true).prop("errors.retry.timeout", "60000").valueConverter(json(false, "value"))
            .transform("insert", InsertField.Value.class, "static.field", "origin", "static.value", "kafka")
            .send(1_000, "o-1", "{\"id\":1}")
            .send(1_000, "o-2", "\"just a string\"");
    }

    /** Cast$Value of the whole value to int32, given a map: Cast's message lists the types it reads. */
    @Scenario
    static Connector transformation_cast_whole_map(final Connector c) {
        return c.dlq(true).valueConverter(json(false, "value"))
            .transform("cast", Cast.Value.class, "spec", "int32")
            .send(1_000, "o-1", "\"7\"")
            .send(1_000, "o-2", "{\"id\":1}");
    }

    /** Cast$Value of a field to int32, given text that is no number. */
    @Scenario
    static Connector transformation_cast_field_not_a_number(final Connector c) {
        return c.dlq(true).valueConverter(json(false, "value"))
            .transform("cast", Cast.Value.class, "spec", "qty:int32")
            .send(1_000, "o-1", "{\"qty\":\"12\"}")
            .send(1_000, "o-2", "{\"qty\":\"abc\"}");
    }

    /** Cast$Value of bytes (JSON with a bytes schema) to string: base64, as Kafka writes byte[]. */
    @Scenario
    static Connector transformation_cast_bytes_to_string(final Connector c) {
        return c.dlq(true).valueConverter(json(true, "value"))
            .transform("cast", Cast.Value.class, "spec", "string")
            .send(1_000, "o-1", "{\"schema\":{\"type\":\"bytes\"},\"payload\":\"aGk=\"}");
    }

    /** Cast$Value of bytes to int32: Kafka reads BYTES, but casts them only to string. */
    @Scenario
    static Connector transformation_cast_bytes_to_int32(final Connector c) {
        return c.dlq(true).valueConverter(json(true, "value"))
            .transform("cast", Cast.Value.class, "spec", "int32")
            .send(1_000, "o-1", "{\"schema\":{\"type\":\"int64\"},\"payload\":5}")
            .send(1_000, "o-2", "{\"schema\":{\"type\":\"bytes\"},\"payload\":\"aGk=\"}");
    }

    /** ReplaceField$Value on a string value. */
    @Scenario
    static Connector transformation_replace_field_on_a_string(final Connector c) {
        return c.dlq(true).valueConverter(json(false, "value"))
            .transform("drop", ReplaceField.Value.class, "exclude", "secret")
            .send(1_000, "o-1", "\"text\"");
    }

    /** JSON with schemas through Cast, ReplaceField and a Filter negated on a topic predicate: no errors. */
    @Scenario
    static Connector json_with_schemas_cast_replace_and_filter(final Connector c) {
        final String envelope = "{\"schema\":{\"type\":\"struct\",\"fields\":["
            + "{\"type\":\"string\",\"optional\":false,\"field\":\"id\"},"
            + "{\"type\":\"int32\",\"optional\":false,\"field\":\"qty\"},"
            + "{\"type\":\"string\",\"optional\":true,\"field\":\"secret\"}],\"optional\":false},"
            + "\"payload\":{\"id\":\"o-1\",\"qty\":3,\"secret\":\"s\"}}";
        return c.dlq(true).prop("topics", "orders,audit-orders").valueConverter(json(true, "value"))
            .transform("cast", Cast.Value.class, "spec", "qty:int64")
            .transform("replace", ReplaceField.Value.class, "exclude", "secret", "renames", "qty:quantity")
            .predicate("isOrders", TopicNameMatches.class, "pattern", "orders")
            .transform("keepOrders", Filter.class, "predicate", "isOrders", "negate", "true")
            .send("orders", 0, 1_000, "o-1", envelope)
            .send("audit-orders", 0, 1_000, "o-1", envelope);
    }

    /** Filter with RecordIsTombstone and with HasHeaderKey: dropped records are not errors. */
    @Scenario
    static Connector filter_tombstones_and_marked_records(final Connector c) {
        return c.dlq(true)
            .predicate("tombstone", RecordIsTombstone.class)
            .predicate("marked", HasHeaderKey.class, "name", "skip")
            .transform("dropTombstones", Filter.class, "predicate", "tombstone")
            .transform("dropMarked", Filter.class, "predicate", "marked")
            .send(1_000, "a", null)
            .send(1_000, "b", "x", "skip", "yes")
            .send(1_000, "c", "y", "keep", "yes");
    }

    /** A custom transform fails with a plain Java exception (IllegalStateException): tolerated as any. */
    @Scenario
    static Connector transformation_custom_exception(final Connector c) {
        return c.dlq(true)
            .transform("boom", Boom.class)
            .send(1_000, "a", "fine")
            .send(1_000, "b", "boom");
    }

    // ---- the sink task ----

    /** The sink reports "reject" as errant (ErrantRecordReporter): TASK_PUT, class SinkTask. */
    @Scenario
    static Connector task_put_errant_record(final Connector c) {
        return c.dlq(true)
            .errant(r -> "reject".equals(r.value()) ? new DataException("the table refused it") : null)
            .send(1_000, "a", "keep")
            .send(1_000, "b", "reject");
    }

    /** An errant record under errors.tolerance=none: in the DLQ, then the task fails. */
    @Scenario
    static Connector task_put_errant_record_tolerance_none(final Connector c) {
        return c.dlq(true).prop("errors.tolerance", "none")
            .errant(r -> new DataException("no"))
            .send(1_000, "a", "x");
    }

    // ---- errors.tolerance=none and the log ----

    /** errors.tolerance=none: the bad value fails the task, after the DLQ; nothing is put. */
    @Scenario
    static Connector tolerance_none_value_converter(final Connector c) {
        return c.dlq(true).prop("errors.tolerance", "none").valueConverter(json(false, "value"))
            .send(1_000, "o-1", "{}")
            .send(1_000, "o-2", "{oops");
    }

    /** errors.log.enable with errors.log.include.messages, no DLQ: Kafka's log line. */
    @Scenario
    static Connector error_log_include_messages(final Connector c) {
        return c.prop("errors.tolerance", "all").prop("errors.log.enable", "true")
            .prop("errors.log.include.messages", "true").valueConverter(json(false, "value"))
            .send(42, "k", "{");
    }

    /** errors.log.enable without the record, beside a DLQ. */
    @Scenario
    static Connector error_log_with_dlq(final Connector c) {
        return c.dlq(true).prop("errors.log.enable", "true")
            .transform("insert", InsertField.Value.class, "static.field", "origin", "static.value", "kafka")
            .send(1_000, "k", "plain text");
    }

    /**
     * The DLQ headers name the partition and offset the record was read at. (One poll holds
     * partition 0's records before partition 2's, as the simulated consumer returns them.)
     */
    @Scenario
    static Connector dlq_names_the_partition(final Connector c) {
        return c.dlq(true).valueConverter(json(false, "value"))
            .send("orders", 0, 1_000, "c", "nope")
            .send("orders", 2, 1_000, "a", "{}")
            .send("orders", 2, 1_000, "b", "nope");
    }

    // ---- retries ----

    /** Six retriable failures, errors.retry.timeout=5000: waits 300, 600, 1200, 2400, then 500 to the deadline; skipped. */
    @Scenario
    static Connector retry_timeout_gives_up_at_the_deadline(final Connector c) {
        return c.dlq(true).prop("errors.retry.timeout", "5000")
            .transform("flaky", Flaky.class, "failures", "6")
            .send(1_000, "a", "retried")
            .send(1_000, "b", "behind it");
    }

    /** Three retriable failures within errors.retry.timeout=6000: the fourth attempt passes. */
    @Scenario
    static Connector retry_succeeds_on_the_fourth_attempt(final Connector c) {
        return c.dlq(true).prop("errors.retry.timeout", "6000")
            .transform("flaky", Flaky.class, "failures", "3")
            .send(1_000, "a", "v");
    }

    /** errors.retry.delay.max.ms=1000, retrying forever: past the maximum Kafka waits a random time below it. */
    @Scenario
    static Connector retry_delay_capped_by_the_maximum(final Connector c) {
        return c.dlq(true).prop("errors.retry.timeout", "-1").prop("errors.retry.delay.max.ms", "1000")
            .transform("flaky", Flaky.class, "failures", "5")
            .send(1_000, "a", "v");
    }

    /** errors.retry.timeout=0 (the default): a retriable error is not retried, the record is skipped. */
    @Scenario
    static Connector retriable_error_not_retried_by_default(final Connector c) {
        return c.dlq(true)
            .transform("flaky", Flaky.class, "failures", "1")
            .send(1_000, "a", "v");
    }

    /** Retries run out under errors.tolerance=none: the task fails. */
    @Scenario
    static Connector retries_exhausted_under_tolerance_none(final Connector c) {
        return c.dlq(true).prop("errors.tolerance", "none").prop("errors.retry.timeout", "1000")
            .transform("flaky", Flaky.class, "failures", "-1")
            .send(1_000, "a", "v");
    }

    /** The task stops during the first backoff: the record is skipped and reported. */
    @Scenario
    static Connector stop_during_a_backoff(final Connector c) {
        return c.dlq(true).prop("errors.retry.timeout", "-1")
            .transform("flaky", Flaky.class, "failures", "-1")
            .stopAtWait(0)
            .send(1_000, "a", "v");
    }
}
