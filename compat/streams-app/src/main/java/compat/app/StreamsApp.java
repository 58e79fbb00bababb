package compat.app;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * A Kafka Streams 4.4.0 application with the topologies that streams-kafka runs against the
 * real broker, to run beside ours on the same broker:
 *
 * <pre>
 * StreamsApp BOOTSTRAP APPLICATION_ID CLIENT_ID TOPOLOGY INPUT OUTPUT GUARANTEE COMMIT_MS THREADS STATE_DIR
 * </pre>
 *
 * <p>TOPOLOGY is {@code wordcount} (Kafka's WordCountDemo with the count store named
 * {@code counts-store}, as streams-kafka/tests/real_kafka/streams.rs builds it: the same node
 * names, repartition topic, changelog and serdes, so that either side restores the other's
 * store) or {@code stateless} (filter out the values ending in 7, upper-case the rest: the
 * benchmark's) or {@code windowed} (the word count over one-minute windows). It prints {@code STATE <new state>} on every state change and runs until its
 * stdin says {@code close} or ends; then it closes, leaving the group, and prints {@code CLOSED}.
 */
public final class StreamsApp {
    private StreamsApp() {}

    /** The word count, node for node as streams-kafka's real_kafka tests build it. */
    static Topology wordCount(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.stream(line.split("\\s+")).filter(w -> !w.isEmpty()).toList())
            .groupBy((key, word) -> word)
            .count(Materialized.as("counts-store"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /**
     * The word count over one-minute windows (no grace), the counts under their words: for its
     * windowed changelog ({@code compact,delete} with a retention) and repartition topic.
     */
    static Topology windowed(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(line -> Arrays.stream(line.split("\\s+")).filter(w -> !w.isEmpty()).toList())
            .groupBy((key, word) -> word)
            .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(1)))
            .count(Materialized.as("windowed-counts"))
            .toStream()
            .map((window, count) -> KeyValue.pair(window.key(), count))
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /** The benchmark's stateless topology: filter, then map the values. */
    static Topology stateless(final String input, final String output) {
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .filter((key, value) -> !value.endsWith("7"))
            .mapValues(value -> value.toUpperCase())
            .to(output, Produced.with(Serdes.String(), Serdes.String()));
        return builder.build();
    }

    public static void main(final String[] args) throws Exception {
        if (args.length != 10) {
            System.err.println("usage: StreamsApp BOOTSTRAP APPLICATION_ID CLIENT_ID TOPOLOGY INPUT OUTPUT "
                + "GUARANTEE COMMIT_MS THREADS STATE_DIR");
            System.exit(2);
        }
        final Topology topology = switch (args[3]) {
            case "wordcount" -> wordCount(args[4], args[5]);
            case "stateless" -> stateless(args[4], args[5]);
            case "windowed" -> windowed(args[4], args[5]);
            default -> throw new IllegalArgumentException("unknown topology " + args[3]);
        };
        final Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.CLIENT_ID_CONFIG, args[2]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[6]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[7]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args[8]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[9]);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // As the real_kafka tests' instances: a dead member leaves the group after 6 s.
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), "6000");
        // A trial that reads back every repartition record keeps them
        // (-Drepartition.purge.interval.ms=9223372036854775807: never purged).
        final String purge = System.getProperty("repartition.purge.interval.ms");
        if (purge != null) {
            props.put(StreamsConfig.REPARTITION_PURGE_INTERVAL_MS_CONFIG, purge);
        }

        final KafkaStreams streams = new KafkaStreams(topology, props);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        streams.start();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("close")) {
                break;
            }
        }
        // Leave the group on close (Kafka Streams stays in it by default until its session times
        // out): a member of another assignor left behind makes the next one's JoinGroup fail
        // with INCONSISTENT_GROUP_PROTOCOL, as Kafka Streams' "stream" protocol and librdkafka's
        // "range" have nothing in common.
        streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(60)));
        System.out.println("CLOSED");
        System.out.flush();
        System.exit(0);
    }
}
