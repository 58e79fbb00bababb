package compat.oracle;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Foreign-key table-table joins (KIP-213): a table of orders (order id -> "product/detail")
 * joined with a table of products (product id -> name) by the product id in the order's value.
 * The extractor returns null for a value without a '/', so null foreign keys show too. Every
 * scenario reads the subscription and response topics (String keys, raw value bytes) and the
 * subscription store's changelog (raw bytes), so that the wire formats are compared byte for
 * byte.
 */
final class ForeignKeyJoinScenarios {
    private ForeignKeyJoinScenarios() {}

    /** The product id before the first '/', or null when there is none. */
    static String productOf(final String order) {
        final int slash = order.indexOf('/');
        return slash < 0 ? null : order.substring(0, slash);
    }

    /**
     * "Orders and products": product and order updates, with an order moving to another product
     * (its old product gets a delete), a product deleted, an order without a product (null
     * foreign key), an order deleted, a delete of an order that never existed, a product with a
     * null key, and an order whose product was null getting one.
     */
    private static void pipeOrdersAndProducts(final Golden g) {
        final TestInputTopic<String, String> orders = g.input("orders");
        final TestInputTopic<String, String> products = g.input("products");
        products.pipeInput("p1", "pen", 0L);
        orders.pipeInput("o1", "p1/a", 1L);
        orders.pipeInput("o2", "p2/b", 2L);
        products.pipeInput("p2", "ink", 3L);
        orders.pipeInput("o1", "p2/c", 4L);
        products.pipeInput("p1", "pencil", 5L);
        orders.pipeInput("o2", "p2/d", 6L);
        products.pipeInput("p2", null, 7L);
        orders.pipeInput("o3", "none", 8L);
        orders.pipeInput("o1", null, 9L);
        orders.pipeInput("o2", "p1/e", 10L);
        orders.pipeInput("o4", "p3/f", 11L);
        products.pipeInput(null, "x", 12L);
        orders.pipeInput("o3", "p1/g", 13L);
        orders.pipeInput("o5", null, 14L);
        products.pipeInput("p1", "pencil", 15L);
        orders.pipeInput("o2", "p1/e", 16L);
        products.pipeInput("p3", "cap", 2L);
    }

    /** The internal topics of a join whose name base is {@code base}, read as raw bytes. */
    private static void internalOutputs(final Golden g, final String registration, final String response,
                                        final String store) {
        g.output("compat-" + registration + "-topic", Kind.STRING, Kind.BYTES);
        g.output("compat-" + response + "-topic", Kind.STRING, Kind.BYTES);
        g.output("compat-" + store + "-changelog", Kind.BYTES, Kind.BYTES);
    }

    /** orders.join(products, productOf, order + "+" + product).toStream().to("out"). */
    @Scenario
    static void fk_inner_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.table("orders");
        final KTable<String, String> products = b.table("products");
        orders.join(products, ForeignKeyJoinScenarios::productOf, (o, p) -> o + "+" + p)
            .toStream()
            .to("out");
        g.start(b.build());
        pipeOrdersAndProducts(g);
        g.output("out");
        internalOutputs(g,
            "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006",
            "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014",
            "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010");
    }

    /** As fk_inner_join with leftJoin: orders without a product join with null. */
    @Scenario
    static void fk_left_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.table("orders");
        final KTable<String, String> products = b.table("products");
        orders.leftJoin(products, ForeignKeyJoinScenarios::productOf, (o, p) -> o + "+" + p)
            .toStream()
            .to("out");
        g.start(b.build());
        pipeOrdersAndProducts(g);
        g.output("out");
        internalOutputs(g,
            "KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006",
            "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014",
            "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010");
    }

    /**
     * The KIP-1104 extractor of key and value, TableJoined.as("fk") naming every node, topic and
     * the subscription store, and Materialized.as("fk-result"): a left join whose result is
     * kept in a store with a changelog.
     */
    @Scenario
    static void fk_left_join_named_materialized(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.table("orders");
        final KTable<String, String> products = b.table("products");
        orders.leftJoin(
                products,
                (orderId, order) -> productOf(order),
                (o, p) -> o + "+" + p,
                TableJoined.as("fk"),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("fk-result"))
            .toStream()
            .to("out");
        g.start(b.build());
        pipeOrdersAndProducts(g);
        g.output("out");
        g.output("compat-fk-result-changelog");
        internalOutputs(g, "fk-subscription-registration", "fk-subscription-response", "fk-subscription-store");
    }

    /**
     * The join's sides are derived tables: the primary side a filter of the orders (orders whose
     * detail is "x" are dropped), the foreign side the products upper-cased (mapValues); the
     * result is filtered again. The joined tables' values are read through their getters.
     */
    @Scenario
    static void fk_join_derived_tables(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.<String, String>table("orders")
            .filter((k, v) -> !v.endsWith("/x"));
        final KTable<String, String> products = b.<String, String>table("products")
            .mapValues(v -> v.toUpperCase(java.util.Locale.ROOT));
        orders.join(products, ForeignKeyJoinScenarios::productOf, (o, p) -> o + "+" + p)
            .filter((k, v) -> !v.startsWith("p3"))
            .toStream()
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> o = g.input("orders");
        final TestInputTopic<String, String> p = g.input("products");
        p.pipeInput("p1", "pen", 0L);
        o.pipeInput("o1", "p1/a", 1L);
        o.pipeInput("o1", "p1/x", 2L);
        o.pipeInput("o2", "p3/b", 3L);
        p.pipeInput("p3", "cap", 4L);
        o.pipeInput("o1", "p1/c", 5L);
        p.pipeInput("p1", "marker", 6L);
        o.pipeInput("o2", "p1/d", 7L);
        g.output("out");
    }

    /** Kafka's dropped-records-total over the driver's task. */
    private static long droppedRecords(final Golden g) {
        double total = 0;
        for (final java.util.Map.Entry<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> e
                : g.driver().metrics().entrySet()) {
            if (e.getKey().name().equals("dropped-records-total")) {
                total += ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return (long) total;
    }

    /** The response bytes the foreign side would send: hash of the primary value, then the foreign value. */
    private static byte[] response(final String primaryValue, final String foreignValue) {
        final long[] hash = org.apache.kafka.streams.state.internals.Murmur3.hash128(
            primaryValue.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        final byte[] value = foreignValue.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(17 + value.length);
        buf.put((byte) 0).putLong(hash[0]).putLong(hash[1]).put(value);
        return buf.array();
    }

    /**
     * The hash check and the dropped-records metric: responses piped straight into the response
     * topic, one for an older value of the order (stale: dropped and counted) and one for its
     * current value (joined), then an order without a product (dropped and counted by the inner
     * join) and a product with a null key (dropped by the table). Observes dropped-records-total
     * after each step.
     */
    @Scenario
    static void fk_join_stale_response_dropped(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.table("orders");
        final KTable<String, String> products = b.table("products");
        orders.join(products, ForeignKeyJoinScenarios::productOf, (o, p) -> o + "+" + p)
            .toStream()
            .to("out");
        g.start(b.build());
        g.observing();
        final TestInputTopic<String, String> o = g.input("orders");
        final TestInputTopic<String, String> p = g.input("products");
        final TestInputTopic<String, byte[]> responses = g.input(
            "compat-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic", Kind.STRING, Kind.BYTES);
        p.pipeInput("p1", "pen", 0L);
        o.pipeInput("o1", "p1/a", 1L);
        g.observe("joined: dropped=" + droppedRecords(g));
        responses.pipeInput("o1", response("p1/old", "forged"), 2L);
        g.observe("stale response: dropped=" + droppedRecords(g));
        responses.pipeInput("o1", response("p1/a", "forged"), 3L);
        g.observe("current response: dropped=" + droppedRecords(g));
        o.pipeInput("o2", "none", 4L);
        g.observe("null foreign key: dropped=" + droppedRecords(g));
        o.pipeInput("o1", "loose", 5L);
        g.observe("foreign key removed: dropped=" + droppedRecords(g));
        p.pipeInput(null, "x", 6L);
        g.observe("null product key: dropped=" + droppedRecords(g));
        g.output("out");
    }
}
