package compat.oracle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.WindowStore;

/**
 * State stores as the Processor API sees them: the order in which Kafka's stores give their
 * keys (by serialized bytes), their range and prefix queries.
 */
final class StoreScenarios {
    private StoreScenarios() {}

    /**
     * Writes each record into five in-memory stores (Long keys: a key-value, a window and a
     * session store; String keys: "text" keyed by the record's value and "json" keyed by the JSON
     * text {"id":key}); a wall-clock punctuation (every 1000 ms) forwards, for each query, one
     * record to "order": key = the query, value = the keys it returned, comma-separated.
     */
    static final class KeyOrderProcessor implements Processor<Long, String, String, String> {
        private ProcessorContext<String, String> context;
        private KeyValueStore<Long, String> kv;
        private WindowStore<Long, String> window;
        private SessionStore<Long, String> session;
        private KeyValueStore<String, String> text;
        private KeyValueStore<String, String> json;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            kv = context.getStateStore("kv");
            window = context.getStateStore("window");
            session = context.getStateStore("session");
            text = context.getStateStore("text");
            json = context.getStateStore("json");
            context.schedule(Duration.ofMillis(1000), PunctuationType.WALL_CLOCK_TIME, this::dump);
        }

        @Override
        public void process(final Record<Long, String> r) {
            kv.put(r.key(), r.value());
            window.put(r.key(), r.value(), r.timestamp() / 10 * 10);
            session.put(new Windowed<>(r.key(), new SessionWindow(r.timestamp(), r.timestamp())), r.value());
            text.put(r.value(), String.valueOf(r.key()));
            json.put("{\"id\":" + r.key() + "}", r.value());
        }

        private static <K, V> String keys(final KeyValueIterator<K, V> it, final Function<K, String> show) {
            final List<String> out = new ArrayList<>();
            try (it) {
                while (it.hasNext()) {
                    final KeyValue<K, V> kv = it.next();
                    out.add(show.apply(kv.key));
                }
            }
            return String.join(",", out);
        }

        private static String windowed(final Windowed<Long> w) {
            return w.key() + "@" + w.window().start() + "/" + w.window().end();
        }

        private void emit(final long ts, final String query, final String result) {
            context.forward(new Record<>(query, result, ts));
        }

        private void dump(final long ts) {
            emit(ts, "kv.all", keys(kv.all(), String::valueOf));
            emit(ts, "kv.reverseAll", keys(kv.reverseAll(), String::valueOf));
            emit(ts, "kv.range(-1,1)", keys(kv.range(-1L, 1L), String::valueOf));
            emit(ts, "kv.range(1,-1)", keys(kv.range(1L, -1L), String::valueOf));
            emit(ts, "kv.range(null,2)", keys(kv.range(null, 2L), String::valueOf));
            emit(ts, "kv.range(-2,null)", keys(kv.range(-2L, null), String::valueOf));
            emit(ts, "kv.reverseRange(0,-2)", keys(kv.reverseRange(0L, -2L), String::valueOf));
            emit(ts, "kv.prefixScan(int -2)", keys(kv.prefixScan(-2, Serdes.Integer().serializer()), String::valueOf));
            emit(ts, "kv.prefixScan(int 0)", keys(kv.prefixScan(0, Serdes.Integer().serializer()), String::valueOf));
            emit(ts, "window.fetchAll(0,100)", keys(window.fetchAll(0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "window.backwardFetchAll(0,100)", keys(window.backwardFetchAll(0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "window.fetch(1,-2,0,100)", keys(window.fetch(1L, -2L, 0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "window.fetch(-1,1,0,100)", keys(window.fetch(-1L, 1L, 0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "window.fetch(-1,0,100)", keys(window.fetch(-1L, 0L, 100L), String::valueOf));
            emit(ts, "session.fetch(1,-2)", keys(session.fetch(1L, -2L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "session.findSessions(-1,1,0,100)", keys(session.findSessions(-1L, 1L, 0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "session.findSessions(0,-1,0,100)", keys(session.findSessions(0L, -1L, 0L, 100L), StoreScenarios.KeyOrderProcessor::windowed));
            emit(ts, "text.all", keys(text.all(), s -> s));
            emit(ts, "text.range(a,b)", keys(text.range("a", "b"), s -> s));
            emit(ts, "text.prefixScan(a)", keys(text.prefixScan("a", Serdes.String().serializer()), s -> s));
            emit(ts, "json.all", keys(json.all(), s -> s));
        }
    }

    /**
     * Kafka's stores order keys by their serialized bytes: Long keys with negatives (big-endian
     * two's complement, so 0, 1, 2, .., -2, -1), a range whose start's bytes come after its end's
     * (empty), prefix scans with a shorter serializer, window and session stores across keys,
     * UTF-8 text and JSON text ({"id":10} before {"id":2}).
     */
    @Scenario
    static void store_key_order(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", Serdes.Long().deserializer(), Serdes.String().deserializer(), "in");
        t.addProcessor("Order", KeyOrderProcessor::new, "Source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("kv"), Serdes.Long(), Serdes.String()), "Order");
        t.addStateStore(Stores.windowStoreBuilder(
            Stores.inMemoryWindowStore("window", Duration.ofMillis(1000), Duration.ofMillis(10), false),
            Serdes.Long(), Serdes.String()), "Order");
        t.addStateStore(Stores.sessionStoreBuilder(
            Stores.inMemorySessionStore("session", Duration.ofMillis(1000)), Serdes.Long(), Serdes.String()), "Order");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("text"), Serdes.String(), Serdes.String()), "Order");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("json"), Serdes.String(), Serdes.String()), "Order");
        t.addSink("Sink", "order", Serdes.String().serializer(), Serdes.String().serializer(), "Order");
        g.start(t);
        final TestInputTopic<Long, String> in = g.input("in", Kind.LONG, Kind.STRING);
        in.pipeInput(1L, "a", 1L);
        in.pipeInput(-1L, "ab", 2L);
        in.pipeInput(2L, "b", 3L);
        in.pipeInput(-2L, "\u00e9", 4L);
        in.pipeInput(0L, "Z", 12L);
        in.pipeInput(10L, "abc", 13L);
        in.pipeInput(-10L, "aa", 14L);
        in.pipeInput(4294967296L, "b\u00e9", 15L);
        in.pipeInput(-4294967297L, "a\u00e9", 16L);
        g.driver().advanceWallClockTime(Duration.ofMillis(1000));
        g.output("order");
    }

    /**
     * Writes each record into Kafka's RocksDB window and session stores (retention 200 s: segments
     * of 100 s); a record with key 999 forwards, per query, the entries it returned to "order" at
     * that record's timestamp instead.
     */
    static final class PersistentOrderProcessor implements Processor<Long, String, String, String> {
        private ProcessorContext<String, String> context;
        private WindowStore<Long, String> window;
        private WindowStore<Long, ValueAndTimestamp<String>> timestamped;
        private SessionStore<Long, String> session;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            window = context.getStateStore("window");
            timestamped = context.getStateStore("timestamped");
            session = context.getStateStore("session");
        }

        @Override
        public void process(final Record<Long, String> r) {
            if (r.key() == 999L) {
                dump(r.timestamp());
                return;
            }
            final long start = r.timestamp() / 10 * 10;
            window.put(r.key(), r.value(), start);
            timestamped.put(r.key(), ValueAndTimestamp.make(r.value(), r.timestamp()), start);
            session.put(new Windowed<>(r.key(), new SessionWindow(Math.max(0L, r.timestamp() - 3), r.timestamp())), r.value());
        }

        private static <K, V> String entries(final KeyValueIterator<K, V> it, final Function<K, String> show) {
            final List<String> out = new ArrayList<>();
            try (it) {
                while (it.hasNext()) {
                    final KeyValue<K, V> kv = it.next();
                    final Object v = kv.value instanceof ValueAndTimestamp
                        ? ((ValueAndTimestamp<?>) kv.value).value() + "/" + ((ValueAndTimestamp<?>) kv.value).timestamp()
                        : kv.value;
                    out.add(show.apply(kv.key) + "=" + v);
                }
            }
            return String.join(",", out);
        }

        private static String windowed(final Windowed<Long> w) {
            return w.key() + "@" + w.window().start() + "/" + w.window().end();
        }

        private void emit(final long ts, final String query, final String result) {
            context.forward(new Record<>(query, result, ts));
        }

        private void dump(final long ts) {
            emit(ts, "window.all", entries(window.all(), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "window.backwardAll", entries(window.backwardAll(), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "window.fetchAll(0,200000)", entries(window.fetchAll(0L, 200000L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "window.fetch(1,-2,0,400000)", entries(window.fetch(1L, -2L, 0L, 400000L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "window.backwardFetch(0,10,0,400000)", entries(window.backwardFetch(0L, 10L, 0L, 400000L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "window.fetch(1,0,400000)", entries(window.fetch(1L, 0L, 400000L), String::valueOf));
            emit(ts, "window.fetch(-1,0,400000)", entries(window.fetch(-1L, 0L, 400000L), String::valueOf));
            emit(ts, "window.fetch(2,0)", String.valueOf(window.fetch(2L, 0L)));
            emit(ts, "timestamped.all", entries(timestamped.all(), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "session.fetch(1,-2)", entries(session.fetch(1L, -2L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "session.fetch(-1)", entries(session.fetch(-1L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "session.findSessions(0,10,0,400000)", entries(session.findSessions(0L, 10L, 0L, 400000L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "session.backwardFindSessions(1,100000,400000)", entries(session.backwardFindSessions(1L, 100000L, 400000L), StoreScenarios.PersistentOrderProcessor::windowed));
            emit(ts, "session.fetchSession(2,2,5)", String.valueOf(session.fetchSession(2L, 2L, 5L)));
        }
    }

    /**
     * Kafka's RocksDB window and session stores (Stores.persistentWindowStore and friends) give
     * their entries segment by segment, then by the serialized key and time: not by time, then
     * key, as the in-memory stores do. Retention 200 s (segments of 100 s): records in three
     * segments, then stream time 250 s (entries before 50,001 no longer read though their segment
     * lives), then 310 s (the first segment dropped; a put into it dropped too).
     */
    @Scenario
    static void persistent_store_order(final Golden g) {
        final Duration retention = Duration.ofSeconds(200);
        final Topology t = new Topology();
        t.addSource("Source", Serdes.Long().deserializer(), Serdes.String().deserializer(), "in");
        t.addProcessor("Order", PersistentOrderProcessor::new, "Source");
        t.addStateStore(Stores.windowStoreBuilder(
            Stores.persistentWindowStore("window", retention, Duration.ofMillis(10), false),
            Serdes.Long(), Serdes.String()), "Order");
        t.addStateStore(Stores.timestampedWindowStoreBuilder(
            Stores.persistentTimestampedWindowStore("timestamped", retention, Duration.ofMillis(10), false),
            Serdes.Long(), Serdes.String()), "Order");
        t.addStateStore(Stores.sessionStoreBuilder(
            Stores.persistentSessionStore("session", retention), Serdes.Long(), Serdes.String()), "Order");
        t.addSink("Sink", "order", Serdes.String().serializer(), Serdes.String().serializer(), "Order");
        g.start(t);
        final TestInputTopic<Long, String> in = g.input("in", Kind.LONG, Kind.STRING);
        in.pipeInput(1L, "a", 1L);
        in.pipeInput(-1L, "ab", 2L);
        in.pipeInput(2L, "b", 5L);
        in.pipeInput(-2L, "c", 4L);
        in.pipeInput(0L, "Z", 12L);
        in.pipeInput(10L, "abc", 13L);
        in.pipeInput(-10L, "aa", 14L);
        in.pipeInput(1L, "a2", 100005L);
        in.pipeInput(-1L, "x", 150000L);
        in.pipeInput(2L, "late", 7L);
        in.pipeInput(0L, "z2", 199999L);
        in.pipeInput(999L, "dump", 199999L);
        in.pipeInput(3L, "d", 250000L);
        in.pipeInput(999L, "dump", 250000L);
        in.pipeInput(4L, "e", 310000L);
        in.pipeInput(5L, "f", 120000L);
        in.pipeInput(6L, "gone", 50000L);
        in.pipeInput(999L, "dump", 310000L);
        g.output("order");
    }

    /** A store of the test's own: counts the records it is told about. */
    static final class CounterStore implements StateStore {
        private final String name;
        private boolean open;
        long count;

        CounterStore(final String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void init(final StateStoreContext context, final StateStore root) {
            context.register(root, (key, value) -> { });
            open = true;
        }

        @Override
        public void close() {
            open = false;
        }

        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public boolean isOpen() {
            return open;
        }
    }

    /** Builds {@link CounterStore}s without logging. */
    static final class CounterStoreBuilder implements StoreBuilder<CounterStore> {
        private final String name;

        CounterStoreBuilder(final String name) {
            this.name = name;
        }

        @Override
        public StoreBuilder<CounterStore> withCachingEnabled() {
            return this;
        }

        @Override
        public StoreBuilder<CounterStore> withCachingDisabled() {
            return this;
        }

        @Override
        public StoreBuilder<CounterStore> withLoggingEnabled(final java.util.Map<String, String> config) {
            return this;
        }

        @Override
        public StoreBuilder<CounterStore> withLoggingDisabled() {
            return this;
        }

        @Override
        public CounterStore build() {
            return new CounterStore(name);
        }

        @Override
        public java.util.Map<String, String> logConfig() {
            return java.util.Map.of();
        }

        @Override
        public boolean loggingEnabled() {
            return false;
        }

        @Override
        public String name() {
            return name;
        }
    }

    /** Tells the store "counter" about every record, and writes it to "plain". */
    static final class CountingProcessor implements Processor<String, String, String, String> {
        private CounterStore counter;
        private KeyValueStore<String, Long> plain;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            counter = context.getStateStore("counter");
            plain = context.getStateStore("plain");
        }

        @Override
        public void process(final Record<String, String> r) {
            counter.count++;
            plain.put(r.key(), counter.count);
        }
    }

    private static String show(final Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof ValueAndTimestamp) {
            final ValueAndTimestamp<?> vt = (ValueAndTimestamp<?>) o;
            return vt.value() + "@" + vt.timestamp();
        }
        if (o instanceof StateStore) {
            return "store " + ((StateStore) o).name();
        }
        return String.valueOf(o);
    }

    private static <K, V> String entries(final KeyValueIterator<K, V> it) {
        final List<String> out = new ArrayList<>();
        try (it) {
            while (it.hasNext()) {
                final KeyValue<K, V> kv = it.next();
                out.add(show(kv.key) + "=" + show(kv.value));
            }
        }
        return "[" + String.join(", ", out) + "]";
    }

    private static void attempt(final Golden g, final String what, final java.util.function.Supplier<Object> get) {
        try {
            g.observe(what + " -> " + show(get.get()));
        } catch (final RuntimeException e) {
            g.observe(what + " -> " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /**
     * Which of the driver's store getters reads which kind of store, as Kafka's
     * TopologyTestDriver has them: getKeyValueStore gives a timestamped store's values only (a
     * count's, a table's, a global table's), getWindowStore a timestamped window store's,
     * a getter of another kind gives null, getStateStore refuses every built-in store with a
     * message naming its getter and gives a store of the test's own; writing through the
     * value-only view of a timestamped store without a changelog stores the value with
     * timestamp -1; a plain store's changelog gets the test's writes at the last record's time.
     */
    @Scenario
    static void driver_store_getters(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in").groupByKey().count(Materialized.as("counts"));
        b.stream("quiet-in").groupByKey().count(Materialized.<Object, Long, KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("quiet")
            .withLoggingDisabled().withCachingDisabled());
        b.table("names", Materialized.as("names-store"));
        b.globalTable("countries", Materialized.as("countries-store"));
        b.stream("clicks").groupByKey()
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)))
            .count(Materialized.as("windowed"));
        b.stream("visits").groupByKey()
            .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(10)))
            .count(Materialized.as("sessions"));
        final Topology t = b.build();
        t.addSource("Events", "events");
        t.addProcessor("Counting", CountingProcessor::new, "Events");
        t.addStateStore(new CounterStoreBuilder("counter"), "Counting");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("plain"), Serdes.String(), Serdes.Long()), "Counting");
        final TopologyTestDriver d = g.start(t);
        g.input("in").pipeInput("a", "x", 5L);
        g.input("in").pipeInput("a", "y", 7L);
        g.input("names").pipeInput("n", "Ann", 3L);
        g.input("countries").pipeInput("fr", "France", 4L);
        g.input("clicks").pipeInput("a", "x", 12L);
        g.input("visits").pipeInput("a", "x", 20L);
        g.input("events").pipeInput("e", "x", 1L);
        g.input("events").pipeInput("f", "x", 2L);

        attempt(g, "getKeyValueStore(counts).get(a)", () -> d.<String, Long>getKeyValueStore("counts").get("a"));
        attempt(g, "getKeyValueStore(counts).all()", () -> entries(d.<String, Long>getKeyValueStore("counts").all()));
        attempt(g, "getTimestampedKeyValueStore(counts).get(a)", () -> d.<String, Long>getTimestampedKeyValueStore("counts").get("a"));
        attempt(g, "getKeyValueStore(names-store).get(n)", () -> d.<String, String>getKeyValueStore("names-store").get("n"));
        attempt(g, "getKeyValueStore(countries-store).get(fr)", () -> d.<String, String>getKeyValueStore("countries-store").get("fr"));
        attempt(g, "getTimestampedKeyValueStore(countries-store).get(fr)", () -> d.<String, String>getTimestampedKeyValueStore("countries-store").get("fr"));
        attempt(g, "getKeyValueStore(plain).all()", () -> entries(d.<String, Long>getKeyValueStore("plain").all()));
        attempt(g, "getTimestampedKeyValueStore(plain)", () -> d.getTimestampedKeyValueStore("plain"));
        attempt(g, "getKeyValueStore(windowed)", () -> d.getKeyValueStore("windowed"));
        attempt(g, "getKeyValueStore(sessions)", () -> d.getKeyValueStore("sessions"));
        attempt(g, "getKeyValueStore(counter)", () -> d.getKeyValueStore("counter"));
        attempt(g, "getWindowStore(windowed).fetch(a,10)", () -> d.<String, Long>getWindowStore("windowed").fetch("a", 10L));
        attempt(g, "getTimestampedWindowStore(windowed).fetch(a,10)", () -> d.<String, Long>getTimestampedWindowStore("windowed").fetch("a", 10L));
        attempt(g, "getWindowStore(counts)", () -> d.getWindowStore("counts"));
        attempt(g, "getSessionStore(sessions).fetch(a)", () -> entries(d.<String, Long>getSessionStore("sessions").fetch("a")));
        attempt(g, "getSessionStore(windowed)", () -> d.getSessionStore("windowed"));
        attempt(g, "getVersionedKeyValueStore(counts)", () -> d.getVersionedKeyValueStore("counts"));
        for (final String store : List.of("counts", "names-store", "countries-store", "plain", "windowed", "sessions", "counter", "missing")) {
            attempt(g, "getStateStore(" + store + ")", () -> d.getStateStore(store));
        }
        attempt(g, "counter.count", () -> ((CounterStore) d.getStateStore("counter")).count);
        attempt(g, "getKeyValueStore(quiet).put(z,5)", () -> {
            d.<String, Long>getKeyValueStore("quiet").put("z", 5L);
            return "done";
        });
        attempt(g, "getTimestampedKeyValueStore(quiet).get(z)", () -> d.<String, Long>getTimestampedKeyValueStore("quiet").get("z"));
        attempt(g, "getKeyValueStore(quiet).delete(z)", () -> d.<String, Long>getKeyValueStore("quiet").delete("z"));
        attempt(g, "getKeyValueStore(plain).put(q,5)", () -> {
            d.<String, Long>getKeyValueStore("plain").put("q", 5L);
            return "done";
        });
        attempt(g, "getKeyValueStore(plain).delete(e)", () -> d.<String, Long>getKeyValueStore("plain").delete("e"));
        // The driver hands on what the stores wrote when it next processes a record.
        g.input("names").pipeInput("m", "Max", 30L);
        g.output("compat-counts-changelog", Kind.STRING, Kind.LONG);
        g.output("compat-plain-changelog", Kind.STRING, Kind.LONG);
    }

    /**
     * Counts words (and deletes the words written "-word") in five stores of the Processor API:
     * key-value, timestamped key-value, window and session stores built with
     * withCachingEnabled(), and an uncached key-value store; forwards what each store gives back
     * for the word right after the write (the cache is read first).
     */
    static final class CachedWordsProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private KeyValueStore<String, Long> counts;
        private KeyValueStore<String, Long> uncached;
        private KeyValueStore<String, ValueAndTimestamp<Long>> timestamped;
        private WindowStore<String, Long> windows;
        private SessionStore<String, Long> sessions;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            counts = context.getStateStore("counts");
            uncached = context.getStateStore("uncached");
            timestamped = context.getStateStore("ts-counts");
            windows = context.getStateStore("windows");
            sessions = context.getStateStore("sessions");
        }

        @Override
        public void process(final Record<String, String> r) {
            final long start = r.timestamp() / 10 * 10;
            for (final String word : r.value().split(" ")) {
                if (word.startsWith("-")) {
                    final String key = word.substring(1);
                    final Long old = counts.delete(key);
                    uncached.delete(key);
                    timestamped.delete(key);
                    windows.put(key, null, start);
                    sessions.remove(new Windowed<>(key, new SessionWindow(r.timestamp(), r.timestamp())));
                    context.forward(r.withKey(key).withValue("deleted " + old + ", now " + counts.get(key)));
                    continue;
                }
                final Long old = counts.get(word);
                final long count = old == null ? 1L : old + 1L;
                counts.put(word, count);
                uncached.put(word, count);
                timestamped.put(word, ValueAndTimestamp.make(count, r.timestamp()));
                windows.put(word, count, start);
                sessions.put(new Windowed<>(word, new SessionWindow(r.timestamp(), r.timestamp())), count);
                context.forward(r.withKey(word).withValue(counts.get(word) + " " + timestamped.get(word).timestamp()
                    + " " + windows.fetch(word, start) + " " + sessions.fetchSession(word, r.timestamp(), r.timestamp())));
            }
        }
    }

    /**
     * Processor API stores built withCachingEnabled(): a processor reads its writes at once; the
     * changelog gets one record per key changed by a record, its latest value, at the commit after
     * the record (Kafka's driver commits after each), keys in the order of their latest write; a
     * delete logs a tombstone, also for a key never written; nothing is forwarded by the cache.
     * An uncached store beside it logs every write.
     */
    @Scenario
    static void papi_store_caching(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Words", CachedWordsProcessor::new, "Source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("counts"), Serdes.String(), Serdes.Long())
            .withCachingEnabled(), "Words");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("uncached"), Serdes.String(), Serdes.Long()), "Words");
        t.addStateStore(Stores.timestampedKeyValueStoreBuilder(Stores.inMemoryKeyValueStore("ts-counts"), Serdes.String(), Serdes.Long())
            .withCachingEnabled(), "Words");
        t.addStateStore(Stores.windowStoreBuilder(
            Stores.inMemoryWindowStore("windows", Duration.ofMillis(1000), Duration.ofMillis(10), false),
            Serdes.String(), Serdes.Long()).withCachingEnabled(), "Words");
        t.addStateStore(Stores.sessionStoreBuilder(
            Stores.inMemorySessionStore("sessions", Duration.ofMillis(1000)), Serdes.String(), Serdes.Long())
            .withCachingEnabled(), "Words");
        t.addSink("Sink", "out", "Words");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k", "a b a", 1L);
        in.pipeInput("k", "b c", 12L);
        in.pipeInput("k", "-a -never c", 13L);
        g.output("out");
        g.output("compat-counts-changelog", Kind.STRING, Kind.LONG);
        g.output("compat-uncached-changelog", Kind.STRING, Kind.LONG);
        g.output("compat-ts-counts-changelog", Kind.STRING, Kind.LONG);
        g.output("compat-windows-changelog", Kind.BYTES, Kind.LONG);
        g.output("compat-sessions-changelog", Kind.BYTES, Kind.LONG);
    }
}
