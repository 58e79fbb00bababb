package compat.oracle;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * One scenario per stateless DSL operation. All use String keys/values (default serdes),
 * input topic "in" and output topic "out" unless stated otherwise. Inputs carry explicit
 * timestamps. See compat/SCENARIOS.md for the exact description of each.
 */
final class StatelessScenarios {
    private StatelessScenarios() {}

    /** Pipes (k1,"a",0) (k2,"abcd",1) (k3,"abc",2) (k4,"abcdef",3) into "in". */
    private static void pipeFour(final Golden g) {
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "abcd", 1L);
        in.pipeInput("k3", "abc", 2L);
        in.pipeInput("k4", "abcdef", 3L);
    }

    /** filter keeps values longer than 3 characters. */
    @Scenario
    static void filter(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").filter((k, v) -> v.length() > 3).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /** filterNot drops values starting with "x". */
    @Scenario
    static void filter_not(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").filterNot((k, v) -> v.startsWith("x")).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "xa", 0L);
        in.pipeInput("k2", "b", 1L);
        in.pipeInput("k3", "x", 2L);
        in.pipeInput("k4", "cx", 3L);
        g.output("out");
    }

    /** map swaps key and value. */
    @Scenario
    static void map(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").map((k, v) -> KeyValue.pair(v, k)).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /** mapValues upper-cases the value. */
    @Scenario
    static void map_values(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues(v -> v.toUpperCase(Locale.ROOT)).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /** mapValues with key: value becomes key + "=" + value. */
    @Scenario
    static void map_values_with_key(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues((k, v) -> k + "=" + v).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /** flatMap emits (k,v) then (v,k) for a non-empty value, nothing for an empty one. */
    @Scenario
    static void flat_map(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .flatMap((k, v) -> {
                final List<KeyValue<String, String>> out = new ArrayList<>();
                if (!v.isEmpty()) {
                    out.add(KeyValue.pair(k, v));
                    out.add(KeyValue.pair(v, k));
                }
                return out;
            })
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 10L);
        in.pipeInput("k2", "", 20L);
        in.pipeInput("k3", "bc", 30L);
        g.output("out");
    }

    /** flatMapValues emits each character of the value as its own record (ASCII input). */
    @Scenario
    static void flat_map_values(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .flatMapValues(v -> {
                final List<String> out = new ArrayList<>();
                for (int i = 0; i < v.length(); i++) {
                    out.add(v.substring(i, i + 1));
                }
                return out;
            })
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "ab", 10L);
        in.pipeInput("k2", "", 20L);
        in.pipeInput("k3", "xyz", 30L);
        g.output("out");
    }

    /** selectKey: the new key is the first character of the value. */
    @Scenario
    static void select_key(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").selectKey((k, v) -> v.substring(0, 1)).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /**
     * peek + foreach on the same source: peek observes "peek:k=v" then passes through to "out";
     * foreach observes "foreach:k=v" and has no output. The observed order shows depth-first
     * child order (children in the order they were added).
     */
    @Scenario
    static void peek_and_foreach(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.peek((k, v) -> g.observe("peek:" + k + "=" + v)).to("out");
        s.foreach((k, v) -> g.observe("foreach:" + k + "=" + v));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "b", 1L);
        g.output("out");
    }

    /** foreach only: a topology with no sink at all. */
    @Scenario
    static void foreach_only(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").foreach((k, v) -> g.observe("foreach:" + k + "=" + v));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput(null, "b", 1L);
        in.pipeInput("k3", null, 2L);
    }

    /**
     * split with a name prefix, two named branches (one via Branched.withFunction), and a named
     * default branch. The keys of the returned map are observed.
     */
    @Scenario
    static void split_named_branches(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final Map<String, KStream<String, String>> branches = b.<String, String>stream("in")
            .split(Named.as("split-"))
            .branch((k, v) -> v.startsWith("a"), Branched.as("a"))
            .branch((k, v) -> v.startsWith("b"),
                Branched.withFunction(ks -> ks.mapValues(v -> v.toUpperCase(Locale.ROOT)), "b"))
            .defaultBranch(Branched.as("other"));
        g.observe("branch map keys: " + new TreeSet<>(branches.keySet()));
        branches.get("split-a").to("out-a");
        branches.get("split-b").to("out-b");
        branches.get("split-other").to("out-other");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "apple", 0L);
        in.pipeInput("k2", "banana", 1L);
        in.pipeInput("k3", "cherry", 2L);
        in.pipeInput("k4", "ab", 3L);
        in.pipeInput("k5", "avocado", 4L);
        g.output("out-a");
        g.output("out-b");
        g.output("out-other");
    }

    /**
     * split() without names, branches given as Branched.withConsumer (so they are absent from the
     * returned map), and noDefaultBranch(): unmatched records are dropped.
     */
    @Scenario
    static void split_unnamed_no_default(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final Map<String, KStream<String, String>> branches = b.<String, String>stream("in")
            .split()
            .branch((k, v) -> v.startsWith("a"), Branched.withConsumer(ks -> ks.to("out-a")))
            .branch((k, v) -> v.startsWith("b"), Branched.withConsumer(ks -> ks.to("out-b")))
            .noDefaultBranch();
        g.observe("branch map keys: " + new TreeSet<>(branches.keySet()));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "apple", 0L);
        in.pipeInput("k2", "banana", 1L);
        in.pipeInput("k3", "cherry", 2L);
        g.output("out-a");
        g.output("out-b");
    }

    /**
     * split() without a name, unnamed branches returned in the map (no function/consumer),
     * default branch unnamed. The generated map keys are observed and each branch is sent to
     * its own topic.
     */
    @Scenario
    static void split_generated_branch_names(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final Map<String, KStream<String, String>> branches = b.<String, String>stream("in")
            .split()
            .branch((k, v) -> v.startsWith("a"))
            .branch((k, v) -> v.startsWith("b"))
            .defaultBranch();
        final List<String> keys = new ArrayList<>(new TreeSet<>(branches.keySet()));
        g.observe("branch map keys: " + keys);
        // keys sort as <prefix>1, <prefix>2, <prefix>0 is the default; route by suffix.
        for (final String key : keys) {
            branches.get(key).to("out-" + key.substring(key.length() - 1));
        }
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "apple", 0L);
        in.pipeInput("k2", "banana", 1L);
        in.pipeInput("k3", "cherry", 2L);
        g.output("out-0");
        g.output("out-1");
        g.output("out-2");
    }

    /** merge of two source streams into one sink. */
    @Scenario
    static void merge(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s1 = b.stream("in1");
        final KStream<String, String> s2 = b.stream("in2");
        s1.merge(s2).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in1 = g.input("in1");
        final TestInputTopic<String, String> in2 = g.input("in2");
        in1.pipeInput("a1", "x", 5L);
        in2.pipeInput("b1", "y", 3L);
        in1.pipeInput("a2", "z", 1L);
        in2.pipeInput("b2", "w", 7L);
        g.output("out");
    }

    /** A stream merged with a mapped version of itself: every record comes out twice. */
    @Scenario
    static void merge_with_self_derived(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.merge(s.mapValues(v -> v + "'")).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "b", 1L);
        g.output("out");
    }

    /** Sink with a fixed topic name, plus an explicit null key. */
    @Scenario
    static void to_fixed_topic(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "v1", 100L);
        in.pipeInput(null, "v2", 50L);
        g.output("out");
    }

    /**
     * TopicNameExtractor: the topic is "out-" + first character of the value. Implemented as a
     * class whose toString() is "FirstCharTopicExtractor" because describe() prints the
     * extractor's toString().
     */
    static final class FirstCharTopicExtractor implements TopicNameExtractor<String, String> {
        @Override
        public String extract(final String key, final String value,
                              final org.apache.kafka.streams.processor.RecordContext recordContext) {
            return "out-" + value.substring(0, 1);
        }

        @Override
        public String toString() {
            return "FirstCharTopicExtractor";
        }
    }

    /** to(TopicNameExtractor): each record goes to "out-" + first character of its value. */
    @Scenario
    static void to_topic_name_extractor(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").to(new FirstCharTopicExtractor());
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "x1", 0L);
        in.pipeInput("k2", "y1", 1L);
        in.pipeInput("k3", "x2", 2L);
        in.pipeInput("k4", "z1", 3L);
        g.output("out-x");
        g.output("out-y");
        g.output("out-z");
    }

    /**
     * process() with a custom Processor: for each record forwards (key, value + "@" + timestamp)
     * and then ("count", running count as a string) with the same timestamp.
     */
    static final class CountingProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;
        private long count;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            count++;
            context.forward(record.withValue(record.value() + "@" + record.timestamp()));
            context.forward(new Record<>("count", Long.toString(count), record.timestamp()));
        }
    }

    /** DSL process() with CountingProcessor: two forwards per input record. */
    @Scenario
    static void process_custom_processor(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").process(CountingProcessor::new).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 10L);
        in.pipeInput("k2", "b", 20L);
        in.pipeInput("k3", "c", 15L);
        g.output("out");
    }

    /** processValues() with a FixedKeyProcessor: value becomes "<len>:" + value, forwarded once. */
    static final class LengthPrefixProcessor implements FixedKeyProcessor<String, String, String> {
        private FixedKeyProcessorContext<String, String> context;

        @Override
        public void init(final FixedKeyProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final FixedKeyRecord<String, String> record) {
            context.forward(record.withValue(record.value().length() + ":" + record.value()));
        }
    }

    /** DSL processValues() with LengthPrefixProcessor. */
    @Scenario
    static void process_values_fixed_key(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").processValues(LengthPrefixProcessor::new).to("out");
        g.start(b.build());
        pipeFour(g);
        g.output("out");
    }

    /**
     * Null keys and null values (tombstones): three branches off one source.
     * out-raw: pass-through; out-mapped: mapValues(v -> v == null ? "<null>" : v.toUpperCase());
     * out-filtered: filter((k, v) -> k != null).
     */
    @Scenario
    static void null_keys_and_values(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.to("out-raw");
        s.mapValues(v -> v == null ? "<null>" : v.toUpperCase(Locale.ROOT)).to("out-mapped");
        s.filter((k, v) -> k != null).to("out-filtered");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput(null, "x", 0L);
        in.pipeInput("k2", null, 1L);
        in.pipeInput(null, null, 2L);
        in.pipeInput("k4", "y", 3L);
        g.output("out-raw");
        g.output("out-mapped");
        g.output("out-filtered");
    }

    /** Headers on input records flow unchanged through mapValues to the output. */
    @Scenario
    static void headers_passthrough(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").mapValues(v -> v + "!").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput(Golden.record("k1", "a", 0L, Golden.headers("h1", "v1", "h2", "v2")));
        in.pipeInput(Golden.record("k2", "b", 1L, Golden.headers()));
        in.pipeInput(Golden.record("k3", "c", 2L, Golden.headers("dup", "1", "dup", "2", "nullval", null)));
        in.pipeInput(Golden.record("k4", "d", 3L, Golden.headers("ü", "grüße €")));
        g.output("out");
    }

    /**
     * A processor rewrites headers: copies them, removes every "drop" header, appends
     * ("seen", "yes"), and forwards the record with the new headers.
     */
    static final class HeaderRewriteProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            final Headers headers = new RecordHeaders();
            for (final Header h : record.headers().toArray()) {
                if (!h.key().equals("drop")) {
                    headers.add(h.key(), h.value());
                }
            }
            headers.add("seen", "yes".getBytes(StandardCharsets.UTF_8));
            context.forward(record.withHeaders(headers));
        }
    }

    /** DSL process() with HeaderRewriteProcessor: drops "drop" headers, appends ("seen", "yes"). */
    @Scenario
    static void headers_modified_by_processor(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in").process(HeaderRewriteProcessor::new).to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput(Golden.record("k1", "a", 0L, Golden.headers("keep", "1", "drop", "2", "keep", "3")));
        in.pipeInput(Golden.record("k2", "b", 1L, Golden.headers()));
        g.output("out");
    }

    /** A longer chain of stateless operators, checking composition and ordering. */
    @Scenario
    static void chained_operators(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .filter((k, v) -> !v.isEmpty())
            .mapValues(v -> v.toUpperCase(Locale.ROOT))
            .selectKey((k, v) -> k + "-" + v.length())
            .flatMapValues(v -> List.of(v, v + v))
            .filterNot((k, v) -> v.equals("BB"))
            .map((k, v) -> KeyValue.pair(v, k))
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "", 1L);
        in.pipeInput("k3", "b", 2L);
        in.pipeInput("k4", "cd", 3L);
        g.output("out");
    }
}
