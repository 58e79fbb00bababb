package compat.oracle;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Timestamps (explicit, auto-advanced), stream-time and wall-clock punctuation, and the time
 * values a processor sees. The driver's wall clock starts at 0 (epoch millis).
 */
final class TimeScenarios {
    private TimeScenarios() {}

    /** Pass-through PAPI topology Source(in) -> Sink(out). */
    private static Topology passThrough() {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addSink("Sink", "out", "Source");
        return t;
    }

    /** Explicit, out-of-order and large timestamps pass through unchanged. */
    @Scenario
    static void timestamps_explicit(final Golden g) {
        g.start(passThrough());
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "a", 1000L);
        in.pipeInput("k2", "b", 0L);
        in.pipeInput("k3", "c", 999_999_999_999L);
        in.pipeInput("k4", "d", 500L);
        in.pipeInput("k5", "e", 500L);
        g.output("out");
    }

    /**
     * Input topic created with start 1000 ms and auto-advance 10 ms. Records without explicit
     * timestamps take the topic's current time, which then advances by 10; explicit timestamps
     * do not move it; advanceTime moves it; pipeKeyValueList with its own start/advance does not.
     */
    @Scenario
    static void timestamps_auto_advance(final Golden g) {
        g.start(passThrough());
        final TestInputTopic<String, String> in = g.input("in", Kind.STRING, Kind.STRING, 1000L, 10L);
        in.pipeInput("k1", "a");                 // 1000
        in.pipeInput("k2", "b");                 // 1010
        in.pipeInput("k3", "c", 5000L);          // 5000 (explicit)
        in.pipeInput("k4", "d");                 // 1020
        in.advanceTime(Duration.ofMillis(100));  // current time 1030 -> 1130
        in.pipeInput("k5", "e");                 // 1130
        in.pipeInput("f");                       // null key, 1140
        in.pipeValueList(List.of("g", "h"));     // null keys, 1150, 1160
        in.pipeKeyValueList(List.of(KeyValue.pair("k8", "i"), KeyValue.pair("k9", "j")),
            Instant.ofEpochMilli(0), Duration.ofMillis(1)); // 0, 1
        in.pipeInput(new TestRecord<>("k10", "k"));        // 1170
        in.pipeInput(new TestRecord<>("k11", "l", Golden.headers("h", "1"))); // 1180
        g.output("out");
    }

    /**
     * A processor that schedules a punctuation in init() and forwards every input record
     * unchanged. The punctuator observes "punctuate <type>@<ts>" and forwards
     * ("tick", "<type>@<ts>") with timestamp ts.
     */
    static final class Ticker implements Processor<String, String, String, String> {
        private final Golden g;
        private final long intervalMs;
        private final PunctuationType[] types;
        private final int cancelAfter;
        private ProcessorContext<String, String> context;
        private int punctuations;

        Ticker(final Golden g, final long intervalMs, final int cancelAfter, final PunctuationType... types) {
            this.g = g;
            this.intervalMs = intervalMs;
            this.cancelAfter = cancelAfter;
            this.types = types;
        }

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
            for (final PunctuationType type : types) {
                final String label = type == PunctuationType.STREAM_TIME ? "stream" : "wall";
                final Cancellable[] handle = new Cancellable[1];
                handle[0] = context.schedule(Duration.ofMillis(intervalMs), type, ts -> {
                    punctuations++;
                    g.observe("punctuate " + label + "@" + ts);
                    context.forward(new Record<>("tick", label + "@" + ts, ts));
                    if (cancelAfter > 0 && punctuations == cancelAfter) {
                        g.observe("cancel " + label);
                        handle[0].cancel();
                    }
                });
            }
        }

        @Override
        public void process(final Record<String, String> record) {
            g.observe("process " + record.key() + "@" + record.timestamp());
            context.forward(record);
        }
    }

    private static Topology tickerTopology(final Golden g, final long intervalMs, final int cancelAfter,
                                           final PunctuationType... types) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Ticker", () -> new Ticker(g, intervalMs, cancelAfter, types), "Source");
        t.addSink("Sink", "out", "Ticker");
        return t;
    }

    /**
     * Stream-time punctuation every 10 ms; records at 0,5,10,25,31,29,40,100 show when ticks
     * fire, that missed intervals are not replayed, and that out-of-order records do not move
     * stream time back.
     */
    @Scenario
    static void punctuate_stream_time(final Golden g) {
        g.start(tickerTopology(g, 10L, 0, PunctuationType.STREAM_TIME));
        final TestInputTopic<String, String> in = g.input("in");
        final long[] times = {0L, 5L, 10L, 25L, 31L, 29L, 40L, 100L};
        for (int i = 0; i < times.length; i++) {
            in.pipeInput("r" + (i + 1), "v" + (i + 1), times[i]);
        }
        g.output("out");
    }

    private static void advance(final Golden g, final long ms) {
        g.observe("advanceWallClockTime(" + ms + ")");
        g.driver().advanceWallClockTime(Duration.ofMillis(ms));
    }

    /**
     * Wall-clock punctuation every 10 ms; the driver starts at wall-clock 0 and is advanced by
     * 5, 5, 3, (record), 30, 1, 6, 0, 25 ms. Each advance fires at most one punctuation per
     * schedule, with the current wall-clock time as timestamp.
     */
    @Scenario
    static void punctuate_wall_clock(final Golden g) {
        g.start(tickerTopology(g, 10L, 0, PunctuationType.WALL_CLOCK_TIME));
        final TestInputTopic<String, String> in = g.input("in");
        advance(g, 5);
        advance(g, 5);
        advance(g, 3);
        in.pipeInput("r1", "v1", 100L);
        advance(g, 30);
        advance(g, 1);
        advance(g, 6);
        advance(g, 0);
        advance(g, 25);
        g.output("out");
    }

    /** Stream-time punctuation every 10 ms, cancelled by the punctuator on its 2nd call. */
    @Scenario
    static void punctuate_cancel(final Golden g) {
        g.start(tickerTopology(g, 10L, 2, PunctuationType.STREAM_TIME));
        final TestInputTopic<String, String> in = g.input("in");
        final long[] times = {0L, 10L, 20L, 30L, 40L};
        for (int i = 0; i < times.length; i++) {
            in.pipeInput("r" + (i + 1), "v" + (i + 1), times[i]);
        }
        g.output("out");
    }

    /** Both schedules (stream first, then wall) on one processor, records and advances interleaved. */
    @Scenario
    static void punctuate_stream_and_wall(final Golden g) {
        g.start(tickerTopology(g, 10L, 0,
            PunctuationType.STREAM_TIME, PunctuationType.WALL_CLOCK_TIME));
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("r1", "v1", 0L);
        advance(g, 10);
        in.pipeInput("r2", "v2", 10L);
        in.pipeInput("r3", "v3", 20L);
        advance(g, 15);
        in.pipeInput("r4", "v4", 1000L);
        g.output("out");
    }

    /**
     * Punctuations scheduled lazily from process() on the first record (ts 7): stream-time
     * 10 ms and wall-clock 10 ms, after the wall clock was advanced to 3.
     */
    static final class LateScheduler implements Processor<String, String, String, String> {
        private final Golden g;
        private ProcessorContext<String, String> context;
        private boolean scheduled;

        LateScheduler(final Golden g) {
            this.g = g;
        }

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            g.observe("process " + record.key() + "@" + record.timestamp());
            if (!scheduled) {
                scheduled = true;
                g.observe("schedule stream+wall 10ms");
                context.schedule(Duration.ofMillis(10), PunctuationType.STREAM_TIME, ts -> {
                    g.observe("punctuate stream@" + ts);
                    context.forward(new Record<>("tick", "stream@" + ts, ts));
                });
                context.schedule(Duration.ofMillis(10), PunctuationType.WALL_CLOCK_TIME, ts -> {
                    g.observe("punctuate wall@" + ts);
                    context.forward(new Record<>("tick", "wall@" + ts, ts));
                });
            }
            context.forward(record);
        }
    }

    /** LateScheduler: schedules stream-time and wall-clock punctuation on the first record. */
    @Scenario
    static void punctuate_scheduled_in_process(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("LateScheduler", () -> new LateScheduler(g), "Source");
        t.addSink("Sink", "out", "LateScheduler");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        advance(g, 3);
        in.pipeInput("r1", "v1", 7L);
        in.pipeInput("r2", "v2", 12L);
        in.pipeInput("r3", "v3", 17L);
        in.pipeInput("r4", "v4", 18L);
        advance(g, 9);
        advance(g, 1);
        in.pipeInput("r5", "v5", 30L);
        g.output("out");
    }

    /**
     * The time values and metadata a processor sees: forwards the value
     * "ts=<record ts>,st=<currentStreamTimeMs>,wc=<currentSystemTimeMs>,topic=<t>,partition=<p>,offset=<o>".
     */
    static final class ContextProbe implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            final String meta = context.recordMetadata()
                .map(m -> "topic=" + m.topic() + ",partition=" + m.partition() + ",offset=" + m.offset())
                .orElse("no-metadata");
            context.forward(record.withValue("ts=" + record.timestamp()
                + ",st=" + context.currentStreamTimeMs()
                + ",wc=" + context.currentSystemTimeMs()
                + "," + meta));
        }
    }

    /** ContextProbe on a source reading "in" and "in2", with a wall-clock advance in between. */
    @Scenario
    static void processor_context_time(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in", "in2");
        t.addProcessor("Probe", ContextProbe::new, "Source");
        t.addSink("Sink", "out", "Probe");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        final TestInputTopic<String, String> in2 = g.input("in2");
        in.pipeInput("k1", "a", 5L);
        g.driver().advanceWallClockTime(Duration.ofMillis(100));
        in.pipeInput("k2", "b", 3L);
        in.pipeInput("k3", "c", 50L);
        in2.pipeInput("k4", "d", 1L);
        in.pipeInput("k5", "e", 60L);
        g.output("out");
    }

    /** Observes each record reaching the sink's parent: "seen:<key>=<value>". */
    private static org.apache.kafka.streams.kstream.ForeachAction<String, String> seen(final Golden g) {
        return (k, v) -> g.observe("seen:" + k + "=" + v);
    }

    /**
     * Kafka's TopologyTestDriverTest.shouldRespectTaskIdling with max.task.idle.ms = 1000: a
     * record waits while the task's other input is empty, until both inputs have records or the
     * wall clock passes the idle deadline.
     */
    @Scenario
    static void task_idling_two_inputs(final Golden g) {
        final org.apache.kafka.streams.StreamsBuilder b = new org.apache.kafka.streams.StreamsBuilder();
        final org.apache.kafka.streams.kstream.KStream<String, String> one = b.stream("input1");
        final org.apache.kafka.streams.kstream.KStream<String, String> two = b.stream("input2");
        one.merge(two).peek(seen(g)).to("output");
        g.start(b.build(), p -> p.put(org.apache.kafka.streams.StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, 1000L));
        final TestInputTopic<String, String> in1 = g.input("input1");
        final TestInputTopic<String, String> in2 = g.input("input2");
        g.observe("pipe input1 A@0");
        in1.pipeInput("A", "alpha", 0L);
        advance(g, 1);
        g.observe("pipe input2 B@5");
        in2.pipeInput("B", "beta", 5L);
        advance(g, 998);
        advance(g, 1);
        g.observe("pipe input1 C@3");
        in1.pipeInput("C", "gamma", 3L);
        g.observe("pipe input2 D@2");
        in2.pipeInput("D", "delta", 2L);
        advance(g, 2000);
        g.output("output");
    }

    /**
     * max.task.idle.ms = 100 with a repartition topic: the driver runs one task over every
     * source topic, the repartition topic included, so a re-keyed record waits in it until the
     * wall clock passes the deadline (or the other input has records).
     */
    @Scenario
    static void task_idling_with_a_repartition_topic(final Golden g) {
        final org.apache.kafka.streams.StreamsBuilder b = new org.apache.kafka.streams.StreamsBuilder();
        b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .groupByKey()
            .count()
            .toStream()
            .mapValues(String::valueOf)
            .peek(seen(g))
            .to("out");
        g.start(b.build(), p -> p.put(org.apache.kafka.streams.StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, 100L));
        final TestInputTopic<String, String> in = g.input("in");
        g.observe("pipe a@0");
        in.pipeInput("k1", "a", 0L);
        advance(g, 50);
        g.observe("pipe b@1");
        in.pipeInput("k2", "b", 1L);
        advance(g, 100);
        advance(g, 100);
        g.observe("pipe a@2");
        in.pipeInput("k3", "a", 2L);
        advance(g, 100);
        g.output("out");
    }
}
