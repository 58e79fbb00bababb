package compat.oracle;

import java.time.Duration;

import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Versioned key-value stores (KIP-889) under the DSL: versioned source tables with out-of-order
 * and expired updates (KIP-914), filter and mapValues on them, table-table joins of them, and
 * stream-table joins that read the table as of each stream record's timestamp, without and with
 * a grace period (KIP-923). Every versioned store keeps 100 ms of history. Store contents are
 * observed through the driver's getVersionedKeyValueStore, written "value@timestamp" (Kafka's
 * typed store returns no validTo) or "null".
 */
final class VersionedScenarios {
    private VersionedScenarios() {}

    /** A versioned table's Materialized: Stores.persistentVersionedKeyValueStore(name, 100 ms). */
    private static Materialized<String, String, KeyValueStore<Bytes, byte[]>> versioned(final String name) {
        return Materialized.as(Stores.persistentVersionedKeyValueStore(name, Duration.ofMillis(100)));
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

    private static String show(final VersionedRecord<String> r) {
        return r == null ? "null" : r.value() + "@" + r.timestamp();
    }

    /** Observes get(key) and get(key, asOf) for each asOf, on the versioned store {@code store}. */
    private static void observeStore(final Golden g, final String store, final String key, final long... asOf) {
        final VersionedKeyValueStore<String, String> s = g.driver().getVersionedKeyValueStore(store);
        final StringBuilder line = new StringBuilder(store + " " + key + ": latest=" + show(s.get(key)));
        for (final long t : asOf) {
            line.append(", ").append(t).append("=").append(show(s.get(key, t)));
        }
        g.observe(line.toString());
    }

    /**
     * table("prices", versioned("prices")).toStream().to("out"): in-order updates, an out-of-order
     * one within the history retention (stored, forwarded), one replacing the version at an
     * existing timestamp, an update of another key that moves stream time to 200 (history back to
     * 100), an expired update (dropped and counted), a delete, an out-of-order update after the
     * delete, a delete of a key never seen (forwarded: no cache) and a null key (dropped).
     */
    @Scenario
    static void versioned_table_out_of_order(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.table("prices", versioned("prices")).toStream().to("out");
        g.start(b.build());
        g.observing();
        final TestInputTopic<String, String> prices = g.input("prices");
        prices.pipeInput("k1", "a", 10L);
        prices.pipeInput("k1", "b", 20L);
        prices.pipeInput("k1", "c", 15L);
        prices.pipeInput("k1", "d", 20L);
        observeStore(g, "prices", "k1", 5L, 10L, 14L, 15L, 19L, 20L, 30L);
        prices.pipeInput("k2", "x", 200L);
        prices.pipeInput("k1", "late", 50L);
        g.observe("after expired update: dropped=" + droppedRecords(g));
        observeStore(g, "prices", "k1", 15L, 99L, 100L, 150L);
        prices.pipeInput("k1", null, 210L);
        prices.pipeInput("k1", "e", 205L);
        prices.pipeInput("k3", null, 220L);
        prices.pipeInput(null, "n", 230L);
        observeStore(g, "prices", "k1", 204L, 205L, 209L, 210L, 300L);
        observeStore(g, "prices", "k3", 220L);
        g.observe("end: dropped=" + droppedRecords(g));
        g.output("out");
        g.output("compat-prices-changelog");
    }

    /**
     * Tables derived from a versioned table: an unmaterialized filter left-joined with a plain
     * table (so the filter sends old values), a mapValues materialized in its own versioned store,
     * and an inner table-table join of the versioned table with the plain one. Out-of-order
     * updates reach the filter, the mapValues store and toStream, but the joins drop them.
     */
    @Scenario
    static void versioned_table_derived_tables(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> prices = b.table("prices", versioned("prices"));
        final KTable<String, String> names = b.table("names");
        prices.filter((k, v) -> v.length() <= 2)
            .leftJoin(names, (p, n) -> p + "/" + n)
            .toStream()
            .to("out-filter-left-join");
        prices.mapValues(v -> v.toUpperCase(), versioned("upper"))
            .toStream()
            .to("out-map");
        prices.join(names, (p, n) -> p + "/" + n)
            .toStream()
            .to("out-join");
        g.start(b.build());
        g.observing();
        final TestInputTopic<String, String> p = g.input("prices");
        final TestInputTopic<String, String> n = g.input("names");
        n.pipeInput("k1", "ann", 0L);
        p.pipeInput("k1", "a", 10L);
        p.pipeInput("k1", "bbb", 20L);
        p.pipeInput("k1", "cc", 15L);
        p.pipeInput("k2", "d", 30L);
        p.pipeInput("k1", null, 40L);
        p.pipeInput("k1", "e", 35L);
        p.pipeInput("k2", "ffff", 200L);
        p.pipeInput("k2", "g", 50L);
        n.pipeInput("k2", "bob", 210L);
        g.observe("dropped=" + droppedRecords(g));
        observeStore(g, "upper", "k1", 12L, 15L, 25L, 36L, 45L);
        g.output("out-filter-left-join");
        g.output("out-map");
        g.output("out-join");
        g.output("compat-upper-changelog");
    }

    /** Prices of product "p" and orders of it, as in SCENARIOS.md ("Versioned joins"). */
    private static void pipeVersionedJoin(final Golden g) {
        final TestInputTopic<String, String> prices = g.input("prices");
        final TestInputTopic<String, String> orders = g.input("orders");
        prices.pipeInput("p", "1", 10L);
        prices.pipeInput("p", "2", 20L);
        prices.pipeInput("p", "1.5", 15L);
        orders.pipeInput("p", "o1", 12L);
        orders.pipeInput("p", "o2", 17L);
        orders.pipeInput("p", "o3", 25L);
        orders.pipeInput("p", "o4", 5L);
        orders.pipeInput("q", "o5", 30L);
        prices.pipeInput("p", null, 40L);
        orders.pipeInput("p", "o6", 45L);
        orders.pipeInput("p", "o7", 35L);
        prices.pipeInput("x", "9", 500L);
        orders.pipeInput("p", "o8", 18L);
        orders.pipeInput("p", "o9", 405L);
    }

    /**
     * stream("orders").join / leftJoin a versioned table("prices"): each order joins the price
     * valid at the order's timestamp, including an older version put out of order; an order
     * older than the first price finds none; beyond the history retention only the newest
     * version (a delete here) is known.
     */
    @Scenario
    static void stream_table_join_versioned(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> prices = b.table("prices", versioned("prices"));
        final KStream<String, String> orders = b.stream("orders");
        orders.join(prices, (o, price) -> o + "@" + price).to("out-inner");
        orders.leftJoin(prices, (o, price) -> o + "@" + price).to("out-left");
        g.start(b.build());
        pipeVersionedJoin(g);
        g.output("out-inner");
        g.output("out-left");
    }

    /**
     * The joins of stream_table_join_versioned with a grace period of 10 ms (the inner join
     * unnamed, the left join Joined.as("priced")): orders wait in the join's buffer until stream
     * time passes them by the grace, and then join the price valid at their timestamp, including
     * prices that arrived late; an order older than the grace allows is joined at once. The
     * buffers' changelogs are read as bytes.
     */
    @Scenario
    static void stream_table_join_versioned_grace(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> prices = b.table("prices", versioned("prices"));
        final KStream<String, String> orders = b.stream("orders");
        orders.join(prices, (o, price) -> o + "@" + price,
                Joined.<String, String, String>with(null, null, null).withGracePeriod(Duration.ofMillis(10)))
            .to("out-inner");
        orders.leftJoin(prices, (o, price) -> o + "@" + price,
                Joined.<String, String, String>as("priced").withGracePeriod(Duration.ofMillis(10)))
            .to("out-left");
        g.start(b.build());
        final TestInputTopic<String, String> p = g.input("prices");
        final TestInputTopic<String, String> o = g.input("orders");
        p.pipeInput("p", "1", 0L);
        o.pipeInput("p", "o1", 20L);
        p.pipeInput("p", "2", 15L);
        o.pipeInput(new TestRecord<>("p", "o2", new RecordHeaders().add("h", "x".getBytes()), 25L));
        o.pipeInput("p", "o3", 30L);
        o.pipeInput("q", "o4", 5L);
        o.pipeInput("p", "o5", 25L);
        p.pipeInput("p", "3", 24L);
        o.pipeInput("p", "o6", 40L);
        o.pipeInput("p", null, 41L);
        o.pipeInput("a", "o7", 30L);
        o.pipeInput("p", "o8", 60L);
        g.output("out-inner");
        g.output("out-left");
        g.output("compat-KSTREAM-JOIN-0000000003-Buffer-changelog", Kind.BYTES, Kind.BYTES);
        g.output("compat-priced-Buffer-changelog", Kind.BYTES, Kind.BYTES);
    }

    /**
     * A versioned table grouped by its value and counted (the repartition map skips
     * out-of-order updates), and a stream turned into a versioned table with toTable.
     */
    @Scenario
    static void versioned_table_group_by_and_to_table(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.table("prices", versioned("prices"))
            .groupBy((k, v) -> KeyValue.pair(v, k))
            .count()
            .toStream()
            .to("out-count", Produced.with(Serdes.String(), Serdes.Long()));
        b.<String, String>stream("updates")
            .toTable(versioned("latest"))
            .toStream()
            .to("out-to-table");
        g.start(b.build());
        g.observing();
        final TestInputTopic<String, String> p = g.input("prices");
        final TestInputTopic<String, String> u = g.input("updates");
        p.pipeInput("k1", "a", 10L);
        p.pipeInput("k2", "a", 11L);
        p.pipeInput("k1", "b", 20L);
        p.pipeInput("k1", "c", 15L);
        p.pipeInput("k2", null, 30L);
        p.pipeInput("k2", "b", 25L);
        p.pipeInput("k3", "b", 200L);
        p.pipeInput("k1", "c", 40L);
        u.pipeInput("u1", "x", 5L);
        u.pipeInput("u1", "y", 3L);
        u.pipeInput("u1", null, 8L);
        u.pipeInput("u1", "z", 6L);
        g.observe("dropped=" + droppedRecords(g));
        observeStore(g, "latest", "u1", 2L, 3L, 4L, 5L, 6L, 7L, 8L);
        g.output("out-count", Kind.STRING, Kind.LONG);
        g.output("out-to-table");
        g.output("compat-latest-changelog");
    }

    /**
     * A foreign-key join of versioned tables: orders (order -> "product/detail") and products,
     * both versioned. Out-of-order updates of either side are skipped by the join (and counted).
     */
    @Scenario
    static void versioned_table_foreign_key_join(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KTable<String, String> orders = b.table("orders", versioned("orders"));
        final KTable<String, String> products = b.table("products", versioned("products"));
        orders.join(products, ForeignKeyJoinScenarios::productOf, (o, pr) -> o + "+" + pr)
            .toStream()
            .to("out");
        g.start(b.build());
        g.observing();
        final TestInputTopic<String, String> o = g.input("orders");
        final TestInputTopic<String, String> p = g.input("products");
        p.pipeInput("p1", "pen", 10L);
        p.pipeInput("p2", "ink", 10L);
        o.pipeInput("o1", "p1/a", 20L);
        p.pipeInput("p1", "old pen", 5L);
        o.pipeInput("o1", "p2/b", 15L);
        o.pipeInput("o1", "p2/c", 30L);
        p.pipeInput("p2", "new ink", 40L);
        g.observe("dropped=" + droppedRecords(g));
        g.output("out");
    }
}
