package compat.oracle;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;

/**
 * Topology-shape scenarios: node naming, multiple sources/sinks, pattern sources,
 * repartition topics, fan-out order and feedback loops (output topic = input topic).
 */
final class TopologyScenarios {
    private TopologyScenarios() {}

    /**
     * Named vs generated node names. Named operators (Consumed.as, Named.as, Produced.as) get
     * the given name; the others get generated names from the builder-wide counter.
     */
    @Scenario
    static void named_operators(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.<String, String>as("src"))
            .filter((k, v) -> v.length() > 1, Named.as("keep-long"))
            .mapValues(v -> v.toUpperCase(Locale.ROOT))
            .selectKey((k, v) -> v, Named.as("rekey"))
            .peek((k, v) -> { })
            .to("out", Produced.as("sink"));
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "bb", 1L);
        g.output("out");
    }

    /**
     * Generated names only, with operators that consume several counter values (split, merge),
     * to show how the shared counter advances.
     */
    @Scenario
    static void generated_names(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s1 = b.stream("in1");
        final KStream<String, String> s2 = b.stream("in2");
        s1.merge(s2)
            .filter((k, v) -> !v.isEmpty())
            .split()
            .branch((k, v) -> v.startsWith("a"), Branched.withConsumer(ks -> ks.to("out-a")))
            .defaultBranch(Branched.withConsumer(ks -> ks.mapValues(v -> v + "?").to("out-rest")));
        g.start(b.build());
        final TestInputTopic<String, String> in1 = g.input("in1");
        final TestInputTopic<String, String> in2 = g.input("in2");
        in1.pipeInput("k1", "apple", 0L);
        in2.pipeInput("k2", "kiwi", 1L);
        in2.pipeInput("k3", "", 2L);
        g.output("out-a");
        g.output("out-rest");
    }

    /** Named.as on an operator in the middle of otherwise generated names (counter gaps). */
    @Scenario
    static void mixed_named_and_generated(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .mapValues(v -> v + "1")
            .mapValues(v -> v + "2", Named.as("second"))
            .mapValues(v -> v + "3")
            .filter((k, v) -> true, Named.as("always"))
            .filter((k, v) -> true)
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k", "v", 0L);
        g.output("out");
    }

    /** Pattern source: stream(Pattern.compile("in-.*")). */
    @Scenario
    static void pattern_source(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream(Pattern.compile("in-.*")).mapValues(v -> v + "!").to("out");
        g.start(b.build());
        final TestInputTopic<String, String> a = g.input("in-a");
        final TestInputTopic<String, String> bb = g.input("in-b");
        a.pipeInput("k1", "a1", 0L);
        bb.pipeInput("k2", "b1", 1L);
        a.pipeInput("k3", "a2", 2L);
        g.output("out");
    }

    /**
     * Several sources (one of them subscribing to two topics) and several sinks, including two
     * sinks writing to the same topic.
     */
    @Scenario
    static void multiple_sources_and_sinks(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> a = b.stream("a");
        final KStream<String, String> bs = b.stream("b");
        final KStream<String, String> cd = b.stream(List.of("c", "d"));
        a.filter((k, v) -> v.length() > 1).to("out1");
        a.to("out2");
        bs.mapValues(v -> v.toUpperCase(Locale.ROOT)).to("out1");
        bs.to("out2");
        cd.to("out3");
        g.start(b.build());
        final TestInputTopic<String, String> ta = g.input("a");
        final TestInputTopic<String, String> tb = g.input("b");
        final TestInputTopic<String, String> tc = g.input("c");
        final TestInputTopic<String, String> td = g.input("d");
        ta.pipeInput("ka", "x", 0L);
        ta.pipeInput("ka", "xy", 1L);
        tb.pipeInput("kb", "y", 2L);
        tc.pipeInput("kc", "z", 3L);
        td.pipeInput("kd", "w", 4L);
        tc.pipeInput("kc", "z2", 5L);
        g.output("out1");
        g.output("out2");
        g.output("out3");
    }

    /** Fan-out: three children of one source, two writing the same topic; child order matters. */
    @Scenario
    static void fan_out_order(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> s = b.stream("in");
        s.mapValues(v -> "1:" + v).to("out");
        s.mapValues(v -> "2:" + v).to("out");
        s.filter((k, v) -> v.equals("b")).to("out-b");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "b", 1L);
        g.output("out");
        g.output("out-b");
    }

    /** repartition() with a generated name after selectKey. */
    @Scenario
    static void repartition_unnamed(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .repartition()
            .mapValues(v -> v + "!")
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 0L);
        in.pipeInput("k2", "b", 1L);
        g.output("out");
    }

    /** repartition(Repartitioned.as("rekeyed")). */
    @Scenario
    static void repartition_named(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .repartition(Repartitioned.as("rekeyed"))
            .mapValues(v -> v + "!")
            .to("out");
        g.start(b.build());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput(Golden.record("k1", "a", 0L, Golden.headers("h", "1")));
        in.pipeInput("k2", "b", 1L);
        g.output("out");
    }

    /**
     * Output fed back into an input topic. Reads "a" and "b"; a's records are written (twice)
     * to "b"; b's records go to "out" and, while short, back to "b". The TopologyTestDriver
     * processes re-enqueued records breadth-first (KAFKA-9503), visible in "observed" and in
     * the order of "out".
     */
    @Scenario
    static void feedback_loop(final Golden g) {
        final StreamsBuilder b = new StreamsBuilder();
        b.<String, String>stream("a")
            .peek((k, v) -> g.observe("a:" + v))
            .flatMapValues(v -> List.of(v + "1", v + "2"))
            .to("b");
        final KStream<String, String> bs = b.<String, String>stream("b").peek((k, v) -> g.observe("b:" + v));
        bs.to("out");
        bs.filter((k, v) -> v.length() < 3)
            .flatMapValues(v -> List.of(v + "x", v + "y"))
            .to("b");
        g.start(b.build());
        final TestInputTopic<String, String> a = g.input("a");
        a.pipeInput("k", "p", 0L);
        g.observe("-- second input --");
        a.pipeInput("k", "q", 1L);
        g.output("b");
        g.output("out");
    }
}
