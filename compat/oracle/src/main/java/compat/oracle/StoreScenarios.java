package compat.oracle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
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
}
