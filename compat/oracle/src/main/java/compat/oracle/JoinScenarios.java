package compat.oracle;

import java.time.Duration;

import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Joins: stream-table (inner, left), stream-globalTable (inner, left), table-table (inner,
 * left, outer) and windowed stream-stream (inner, left, outer). Joiners concatenate, with
 * Java's "null" for a missing side, so that every result shows which rows it joined.
 */
final class JoinScenarios {
    private JoinScenarios() {}

    /** Orders (customer -> order) and customers (customer -> name), interleaved, with deletes. */
    private static void pipeOrdersAndCustomers(final Golden g) {
        final TestInputTopic<String, String> orders = g.input("orders");
        final TestInputTopic<String, String> customers = g.input("customers");
        orders.pipeInput("c1", "o1", 0L);
        customers.pipeInput("c1", "alice", 1L);
        orders.pipeInput("c1", "o2", 2L);
        customers.pipeInput("c2", "bob", 3L);
        orders.pipeInput("c2", "o3", 4L);
        customers.pipeInput("c1", null, 5L);
        orders.pipeInput("c1", "o4", 6L);
        orders.pipeInput(null, "o5", 7L);
        orders.pipeInput("c2", null, 8L);
        customers.pipeInput("c2", "bobby", 9L);
        orders.pipeInput("c2", "o6", 3L);
        g.output("out");
    }

    /** stream("orders").join(table("customers"), order + "/" + name). */
    @Scenario
    static void stream_table_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> customers = b.table("customers");
        b.<String, String>stream("orders")
            .join(customers, (order, name) -> order + "/" + name)
            .to("out");
        g.start(b.build());
        pipeOrdersAndCustomers(g);
    }

    /** stream("orders").leftJoin(table("customers"), order + "/" + name). */
    @Scenario
    static void stream_table_left_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> customers = b.table("customers");
        b.<String, String>stream("orders")
            .leftJoin(customers, (order, name) -> order + "/" + name)
            .to("out");
        g.start(b.build());
        pipeOrdersAndCustomers(g);
    }

    /**
     * Orders (order -> product id) joined with the global table "products" (product id ->
     * name) by the order's value; inner join to "out-inner", left join to "out-left".
     */
    @Scenario
    static void stream_global_table_joins(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final GlobalKTable<String, String> products = b.globalTable("products");
        final KStream<String, String> orders = b.stream("orders");
        orders.join(products, (order, productId) -> productId, (productId, name) -> productId + ":" + name)
            .to("out-inner");
        orders.leftJoin(products, (order, productId) -> productId, (productId, name) -> productId + ":" + name)
            .to("out-left");
        g.start(b.build());
        final TestInputTopic<String, String> p = g.input("products");
        final TestInputTopic<String, String> o = g.input("orders");
        p.pipeInput("p1", "pen", 0L);
        o.pipeInput("o1", "p1", 1L);
        o.pipeInput("o2", "p2", 2L);
        p.pipeInput("p2", "ink", 3L);
        o.pipeInput("o3", "p2", 4L);
        p.pipeInput("p1", null, 5L);
        o.pipeInput("o4", "p1", 6L);
        o.pipeInput(null, "p2", 7L);
        p.pipeInput("p2", "ink2", 100L);
        o.pipeInput("o5", "p2", 8L);
        g.output("out-inner");
        g.output("out-left");
    }

    /** Updates of tables "left" and "right", interleaved, with deletes of both sides. */
    private static void pipeLeftAndRight(final Golden g) {
        final TestInputTopic<String, String> left = g.input("left");
        final TestInputTopic<String, String> right = g.input("right");
        left.pipeInput("a", "l1", 0L);
        right.pipeInput("a", "r1", 1L);
        right.pipeInput("b", "r2", 2L);
        left.pipeInput("b", "l2", 3L);
        left.pipeInput("a", "l3", 4L);
        right.pipeInput("a", null, 5L);
        left.pipeInput("a", null, 6L);
        left.pipeInput("c", null, 7L);
        right.pipeInput("b", null, 8L);
        left.pipeInput("b", null, 9L);
        right.pipeInput("d", "r4", 10L);
        left.pipeInput("d", "l4", 2L);
        g.output("out");
    }

    /** table("left").join(table("right"), l + "+" + r).toStream().to("out"). */
    @Scenario
    static void table_table_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> left = b.table("left");
        final KTable<String, String> right = b.table("right");
        left.join(right, (l, r) -> l + "+" + r).toStream().to("out");
        g.start(b.build());
        pipeLeftAndRight(g);
    }

    /** table("left").leftJoin(table("right"), l + "+" + r).toStream().to("out"). */
    @Scenario
    static void table_table_left_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> left = b.table("left");
        final KTable<String, String> right = b.table("right");
        left.leftJoin(right, (l, r) -> l + "+" + r).toStream().to("out");
        g.start(b.build());
        pipeLeftAndRight(g);
    }

    /**
     * table("left").outerJoin(table("right"), l + "+" + r, Materialized.as("outer-joined")):
     * the result store's changelog too.
     */
    @Scenario
    static void table_table_outer_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> left = b.table("left");
        final KTable<String, String> right = b.table("right");
        left.outerJoin(right, (l, r) -> l + "+" + r,
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("outer-joined"))
            .toStream()
            .to("out");
        g.start(b.build());
        pipeLeftAndRight(g);
        g.output(StatefulScenarios.changelog("outer-joined"));
    }

    /** The join window of the stream-stream scenarios: 10 ms either way, grace 5 ms. */
    static final JoinWindows WINDOWS = JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5));

    /**
     * Records of streams "left" and "right", in order, with matching pairs, out-of-order
     * records, a record older than the join stores' retention (before + after + grace = 25 ms)
     * and unmatched records whose windows close. (The null-padded results of left/outer joins
     * are not throttled by wall-clock time here: TopologyTestDriver sets Kafka's internal
     * emit interval, 1000 ms in production, to 0.)
     */
    private static void pipeStreamStream(final Golden g) {
        final TestInputTopic<String, String> left = g.input("left");
        final TestInputTopic<String, String> right = g.input("right");
        final Object[][] steps = {
            {left, "k1", "a", 0L},
            {right, "k1", "x", 5L},
            {left, "k1", "b", 12L},
            {right, "k2", "y", 20L},
            {left, "k1", "c", 8L},
            {left, "k1", "d", 2L},
            {right, "k1", "w", 16L},
            {left, "k3", "e", 21L},
            {right, "k4", "z", 22L},
            {left, "k5", "f", 40L},
            {right, "k5", "v", 45L},
            {left, "k1", "h", 15L},
            {left, "k6", "g", 100L},
        };
        for (final Object[] s : steps) {
            @SuppressWarnings("unchecked")
            final TestInputTopic<String, String> topic = (TestInputTopic<String, String>) s[0];
            topic.pipeInput((String) s[1], (String) s[2], (Long) s[3]);
        }
        g.output("out");
    }

    /** stream("left").join(stream("right"), l + "+" + r, WINDOWS). */
    @Scenario
    static void stream_stream_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> left = b.stream("left");
        final KStream<String, String> right = b.stream("right");
        left.join(right, (l, r) -> l + "+" + r, WINDOWS).to("out");
        g.start(b.build());
        pipeStreamStream(g);
    }

    /** stream("left").leftJoin(stream("right"), l + "+" + r, WINDOWS). */
    @Scenario
    static void stream_stream_left_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> left = b.stream("left");
        final KStream<String, String> right = b.stream("right");
        left.leftJoin(right, (l, r) -> l + "+" + r, WINDOWS).to("out");
        g.start(b.build());
        pipeStreamStream(g);
    }

    /** stream("left").outerJoin(stream("right"), l + "+" + r, WINDOWS). */
    @Scenario
    static void stream_stream_outer_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> left = b.stream("left");
        final KStream<String, String> right = b.stream("right");
        left.outerJoin(right, (l, r) -> l + "+" + r, WINDOWS).to("out");
        g.start(b.build());
        pipeStreamStream(g);
    }
}
