package compat.oracle;

import java.util.Locale;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Topologies built with the low-level Processor API ({@code new Topology()}, addSource,
 * addProcessor, addSink) with user-chosen node names.
 */
final class ProcessorApiScenarios {
    private ProcessorApiScenarios() {}

    /** Upper-cases the value and forwards to all children. */
    static final class UpperProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            context.forward(record.withValue(record.value().toUpperCase(Locale.ROOT)));
        }
    }

    /** Source "Source"(in) -> "Upper" -> "Sink"(out). */
    @Scenario
    static void papi_basic(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Upper", UpperProcessor::new, "Source");
        t.addSink("Sink", "out", "Upper");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "hello", 0L);
        in.pipeInput("k2", "World", 7L);
        g.output("out");
    }

    /**
     * Routes to a named child: value "all" is forwarded to every child (forward without a child
     * name); otherwise the value is parsed as an int and forwarded to "EvenSink" or "OddSink".
     */
    static final class RouterProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            if (record.value().equals("all")) {
                context.forward(record);
            } else if (Integer.parseInt(record.value()) % 2 == 0) {
                context.forward(record, "EvenSink");
            } else {
                context.forward(record, "OddSink");
            }
        }
    }

    /** Router forwards by parity to "EvenSink"/"OddSink" by name, or to all children for "all". */
    @Scenario
    static void papi_forward_to_named_child(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Router", RouterProcessor::new, "Source");
        t.addSink("EvenSink", "out-even", "Router");
        t.addSink("OddSink", "out-odd", "Router");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput("k1", "1", 0L);
        in.pipeInput("k2", "2", 1L);
        in.pipeInput("k3", "all", 2L);
        in.pipeInput("k4", "4", 3L);
        g.output("out-even");
        g.output("out-odd");
    }

    /** Prefixes the value with the record's source topic from recordMetadata(). */
    static final class TopicPrefixProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            final String topic = context.recordMetadata().map(m -> m.topic()).orElse("?");
            context.forward(record.withValue(topic + ":" + record.value()));
        }
    }

    /** Two sources ("SourceA"(in-a), "SourceB"(in-b)) feeding one processor "Prefix" -> "Sink"(out). */
    @Scenario
    static void papi_multiple_parents(final Golden g) {
        final Topology t = new Topology();
        t.addSource("SourceA", "in-a");
        t.addSource("SourceB", "in-b");
        t.addProcessor("Prefix", TopicPrefixProcessor::new, "SourceA", "SourceB");
        t.addSink("Sink", "out", "Prefix");
        g.start(t);
        final TestInputTopic<String, String> a = g.input("in-a");
        final TestInputTopic<String, String> bb = g.input("in-b");
        a.pipeInput("k1", "x", 0L);
        bb.pipeInput("k2", "y", 1L);
        a.pipeInput("k3", "z", 2L);
        g.output("out");
    }

    /** Emits the record with key := value, value := key, timestamp := timestamp + 1000. */
    static final class SwapAndShiftProcessor implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> context;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, String> record) {
            context.forward(new Record<>(record.value(), record.key(), record.timestamp() + 1000L, record.headers()));
        }
    }

    /** Emits (value * 2, key) with timestamp + 1000: Long key, String value. */
    static final class LongToStringProcessor implements Processor<String, Long, Long, String> {
        private ProcessorContext<Long, String> context;

        @Override
        public void init(final ProcessorContext<Long, String> context) {
            this.context = context;
        }

        @Override
        public void process(final Record<String, Long> record) {
            context.forward(new Record<>(record.value() * 2, record.key(), record.timestamp() + 1000L));
        }
    }

    /**
     * PAPI with explicit serdes on source (String key, Long value deserializers) and sink
     * (Long key, String value serializers), and a processor that rewrites key/value/timestamp.
     */
    @Scenario
    static void papi_explicit_serdes(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", Serdes.String().deserializer(), Serdes.Long().deserializer(), "in");
        t.addProcessor("Convert", LongToStringProcessor::new, "Source");
        t.addSink("Sink", "out", Serdes.Long().serializer(), Serdes.String().serializer(), "Convert");
        g.start(t);
        final TestInputTopic<String, Long> in = g.input("in", Kind.STRING, Kind.LONG);
        in.pipeInput("a", 1L, 10L);
        in.pipeInput("b", -21L, 20L);
        g.output("out", Kind.LONG, Kind.STRING);
    }

    /** Swap key/value and shift the timestamp by +1000 ms. */
    @Scenario
    static void papi_swap_and_shift_timestamp(final Golden g) {
        final Topology t = new Topology();
        t.addSource("Source", "in");
        t.addProcessor("Swap", SwapAndShiftProcessor::new, "Source");
        t.addSink("Sink", "out", "Swap");
        g.start(t);
        final TestInputTopic<String, String> in = g.input("in");
        in.pipeInput(Golden.record("k1", "v1", 5L, Golden.headers("h", "x")));
        in.pipeInput("k2", "v2", 3L);
        g.output("out");
    }
}
