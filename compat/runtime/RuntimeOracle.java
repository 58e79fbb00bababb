/*
 * Kafka 4.4.0 as the oracle for streams-core's runtime::metadata: for each scenario, a topology
 * built with Kafka's DSL and source topics with given partition counts, what Kafka's
 * StreamsPartitionAssignor derives in its steps one and two (assign()): the co-partition groups
 * the DSL registered, the repartition topics with their partition counts (RepartitionTopics with
 * the CopartitionedTopicsEnforcer), the tasks with the partitions each reads (PartitionGrouper),
 * the changelog topics with their partition counts (ChangelogTopics), or the exception that
 * refuses the set-up. Kafka's own classes do the work; only the InternalTopicManager is replaced
 * by one that records the topics it is asked to make ready instead of creating them (no broker).
 * The enforcer's log prefix is empty: a real stream thread's messages start with
 * "stream-thread [<name>] ".
 *
 * Writes one file per scenario, <outdir>/<scenario>.txt, replayed by the integration test
 * tests/compat_runtime.rs.
 *
 * Usage: java -cp <kafka-streams 4.4.0 classpath>:. RuntimeOracle <outdir>
 */

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.TopologyException;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.ChangelogTopics;
import org.apache.kafka.streams.processor.internals.InternalTopicConfig;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder.TopicsInfo;
import org.apache.kafka.streams.processor.internals.PartitionGrouper;
import org.apache.kafka.streams.processor.internals.RepartitionTopics;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.CopartitionedTopicsEnforcer;
import org.apache.kafka.streams.state.Stores;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Collectors;

public final class RuntimeOracle {

    static final String APP = "app";

    /** A scenario: the source topics with their partition counts, and the topology. */
    private record Scenario(String name, Map<String, Integer> topics, Consumer<StreamsBuilder> dsl, Topology papi) {
        Scenario(final String name, final Map<String, Integer> topics, final Consumer<StreamsBuilder> dsl) {
            this(name, topics, dsl, null);
        }
    }

    private static Map<String, Integer> topics(final Object... nameCount) {
        final Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < nameCount.length; i += 2) {
            m.put((String) nameCount[i], (Integer) nameCount[i + 1]);
        }
        return m;
    }

    private static final JoinWindows WINDOW = JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(5));

    private static List<Scenario> scenarios() {
        final List<Scenario> s = new ArrayList<>();
        s.add(new Scenario("word_count", topics("words", 4), b -> b.<String, String>stream("words")
            .flatMapValues(line -> Arrays.asList(line.split(" ")))
            .groupBy((k, w) -> w)
            .count()
            .toStream()
            .to("counts")));
        s.add(new Scenario("missing_source_topic", topics(), b -> b.<String, String>stream("words")
            .groupBy((k, w) -> w)
            .count()));
        s.add(new Scenario("merged_map_group_by", topics("a", 2, "b", 6), b -> b.<String, String>stream("a")
            .merge(b.stream("b"))
            .map((k, v) -> KeyValue.pair(v, k))
            .groupByKey()
            .count()));
        s.add(new Scenario("repartition_chain", topics("in", 3), b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .repartition()
            .selectKey((k, v) -> k + v)
            .groupByKey()
            .count()));
        s.add(new Scenario("repartition_without_count", topics("in", 3), b -> b.<String, String>stream("in")
            .repartition()
            .to("out")));
        s.add(new Scenario("stream_table_join_copartitioned", topics("s", 3, "t", 3), b -> b.<String, String>stream("s")
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("stream_table_join_not_copartitioned", topics("s", 3, "t", 2), b -> b.<String, String>stream("s")
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("stream_table_join_not_copartitioned_with_a_repartition", topics("s", 3, "t", 2, "x", 1), b -> {
            b.<String, String>stream("s").join(b.<String, String>table("t"), (v, t) -> v + t).to("out");
            b.<String, String>stream("x").groupBy((k, v) -> v).count();
        }));
        s.add(new Scenario("stream_table_join_repartitioned_stream", topics("s", 2, "t", 5), b -> b.<String, String>stream("s")
            .selectKey((k, v) -> v)
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("stream_table_join_table_from_aggregate", topics("s", 3, "x", 5), b -> {
            final KTable<String, Long> counts = b.<String, String>stream("x").groupBy((k, v) -> v).count();
            b.<String, String>stream("s").join(counts, (v, n) -> v + n).to("out");
        }));
        s.add(new Scenario("stream_stream_join_after_key_change", topics("l", 2, "r", 5), b -> {
            final KStream<String, String> left = b.<String, String>stream("l").selectKey((k, v) -> v);
            final KStream<String, String> right = b.<String, String>stream("r").selectKey((k, v) -> v);
            left.join(right, (x, y) -> x + y, WINDOW).to("out");
        }));
        s.add(new Scenario("stream_stream_join_one_side_rekeyed", topics("l", 2, "r", 5), b -> {
            final KStream<String, String> left = b.<String, String>stream("l").selectKey((k, v) -> v);
            left.join(b.<String, String>stream("r"), (x, y) -> x + y, WINDOW).to("out");
        }));
        s.add(new Scenario("table_table_join", topics("a", 3, "b", 3), b -> b.<String, String>table("a")
            .join(b.<String, String>table("b"), (x, y) -> x + y)
            .toStream()
            .to("out")));
        s.add(new Scenario("table_table_join_not_copartitioned", topics("a", 3, "b", 4), b -> b.<String, String>table("a")
            .join(b.<String, String>table("b"), (x, y) -> x + y)
            .toStream()
            .to("out")));
        s.add(new Scenario("independent_subtopologies", topics("a", 2, "b", 5), b -> {
            b.<String, String>stream("a").to("x");
            b.<String, String>stream("b").groupByKey().count();
        }));
        s.add(new Scenario("merged_aggregate_different_counts", topics("a", 2, "b", 3), b -> b.<String, String>stream("a")
            .merge(b.stream("b"))
            .groupByKey()
            .count()));
        s.add(new Scenario("repartition_writer_reads_repartition_and_user_topic", topics("a", 2, "b", 6), b -> b.<String, String>stream("b")
            .selectKey((k, v) -> v)
            .repartition()
            .merge(b.stream("a"))
            .selectKey((k, v) -> k + v)
            .groupByKey()
            .count()));
        s.add(new Scenario("stream_table_join_merged_stream", topics("a", 3, "b", 3, "t", 3), b -> b.<String, String>stream("a")
            .merge(b.stream("b"))
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("two_joins_share_a_repartition_topic", topics("s", 2, "t1", 4, "t2", 4), b -> twoJoins(b)));
        s.add(new Scenario("two_joins_share_a_repartition_topic_not_copartitioned", topics("s", 2, "t1", 4, "t2", 3), b -> twoJoins(b)));
        s.add(new Scenario("table_table_join_of_two_aggregates", topics("a", 2, "b", 6), b -> {
            final KTable<String, Long> left = b.<String, String>table("a").groupBy((k, v) -> KeyValue.pair(v, k)).count();
            final KTable<String, Long> right = b.<String, String>table("b").groupBy((k, v) -> KeyValue.pair(v, k)).count();
            left.join(right, (x, y) -> x + y).toStream().to("out");
        }));
        // The aggregate's repartition topic takes 3 or 5 depending on the table topic's name:
        // Kafka visits the sub-topologies in HashSet order and, when it reaches the aggregate's
        // writer before the join's repartition topic has a count, takes the max of what it knows.
        s.add(new Scenario("repartition_after_a_join_with_an_enforced_count", topics("x", 5, "t", 3), b -> joinThenGroup(b, "t")));
        s.add(new Scenario("repartition_after_a_join_with_an_enforced_count_table_a", topics("x", 5, "a", 3), b -> joinThenGroup(b, "a")));
        s.add(new Scenario("stream_stream_outer_join", topics("l", 2, "r", 5), b -> {
            final KStream<String, String> left = b.<String, String>stream("l").selectKey((k, v) -> v);
            left.outerJoin(b.<String, String>stream("r"), (x, y) -> x + y, WINDOW).to("out");
        }));
        s.add(new Scenario("named_internal_topics", topics("in", 3), b -> b.<String, String>stream("in")
            .repartition(Repartitioned.as("through"))
            .groupBy((k, v) -> v, Grouped.as("by-value"))
            .count(Materialized.as("counts"))));
        s.add(new Scenario("windowed_count_suppressed", topics("in", 4), b -> b.<String, String>stream("in")
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
            .count(Materialized.with(Serdes.String(), Serdes.Long()))
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()).withName("final"))));
        s.add(new Scenario("session_windowed_count_after_group_by", topics("in", 2), b -> b.<String, String>stream("in")
            .groupBy((k, v) -> v)
            .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(10)))
            .count()));
        s.add(new Scenario("stream_stream_join_logging_disabled", topics("l", 2, "r", 2), b -> b.<String, String>stream("l")
            .join(b.<String, String>stream("r"), (x, y) -> x + y, WINDOW,
                StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()).withLoggingDisabled())
            .to("out")));
        s.add(new Scenario("stream_table_join_table_logging_disabled", topics("s", 2, "t", 2), b -> b.<String, String>stream("s")
            .join(b.<String, String>table("t", Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("t-store").withLoggingDisabled()),
                (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("global_table_join", topics("s", 3, "g", 1), b -> b.<String, String>stream("s")
            .join(b.<String, String>globalTable("g"), (k, v) -> k, (v, g) -> v + g)
            .to("out")));
        s.add(new Scenario("processor_api_shared_store", topics("a", 2, "b", 3), null, sharedStoreTopology()));
        // Repartitioned.withNumberOfPartitions: an enforced count, kept, flowing downstream, and
        // checked by the CopartitionedTopicsEnforcer.
        s.add(new Scenario("repartition_with_a_given_count", topics("in", 2), b -> b.<String, String>stream("in")
            .repartition(Repartitioned.numberOfPartitions(5))
            .groupByKey()
            .count()));
        s.add(new Scenario("given_count_flows_downstream", topics("in", 2), b -> b.<String, String>stream("in")
            .repartition(Repartitioned.<String, String>as("wide").withNumberOfPartitions(6))
            .selectKey((k, v) -> v)
            .groupByKey()
            .count()));
        s.add(new Scenario("stream_table_join_with_a_given_count", topics("s", 2, "t", 3), b -> b.<String, String>stream("s")
            .repartition(Repartitioned.numberOfPartitions(3))
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("stream_table_join_given_count_mismatch", topics("s", 2, "t", 3), b -> b.<String, String>stream("s")
            .repartition(Repartitioned.numberOfPartitions(4))
            .join(b.<String, String>table("t"), (v, t) -> v + t)
            .to("out")));
        s.add(new Scenario("stream_stream_join_given_counts_differ", topics("l", 2, "r", 2), b -> b.<String, String>stream("l")
            .repartition(Repartitioned.numberOfPartitions(2))
            .join(b.<String, String>stream("r").repartition(Repartitioned.numberOfPartitions(3)), (x, y) -> x + y, WINDOW)
            .to("out")));
        return s;
    }

    /** x re-keyed, joined with the table of `table`, re-keyed again and counted. */
    private static void joinThenGroup(final StreamsBuilder b, final String table) {
        b.<String, String>stream("x")
            .selectKey((k, v) -> v)
            .join(b.<String, String>table(table), (v, t) -> v + t)
            .selectKey((k, v) -> v)
            .groupByKey()
            .count();
    }

    /** One re-keyed stream joined with two tables: both joins read its one repartition topic. */
    private static void twoJoins(final StreamsBuilder b) {
        final KStream<String, String> keyed = b.<String, String>stream("s").selectKey((k, v) -> v);
        keyed.join(b.<String, String>table("t1"), (v, t) -> v + t).to("out1");
        keyed.join(b.<String, String>table("t2"), (v, t) -> v + t).to("out2");
    }

    /** Two sources, a processor under each, both connected to one store. */
    private static Topology sharedStoreTopology() {
        final Topology t = new Topology();
        t.addSource("source-a", "a");
        t.addSource("source-b", "b");
        t.addProcessor("process-a", () -> new NoOp(), "source-a");
        t.addProcessor("process-b", () -> new NoOp(), "source-b");
        t.addStateStore(
            Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("shared"), Serdes.String(), Serdes.String()),
            "process-a",
            "process-b");
        return t;
    }

    private static final class NoOp implements Processor<Object, Object, Object, Object> {
        @Override
        public void process(final Record<Object, Object> record) { }
    }

    /** Records the topics it is asked to make ready (as if it created them all) instead of creating them. */
    private static final class RecordingTopicManager extends InternalTopicManager {
        final TreeMap<String, Integer> made = new TreeMap<>();

        RecordingTopicManager(final StreamsConfig config) {
            super(Time.SYSTEM, null, config);
        }

        @Override
        public Set<String> makeReady(final Map<String, InternalTopicConfig> topics) {
            for (final Map.Entry<String, InternalTopicConfig> e : topics.entrySet()) {
                made.put(e.getKey(), e.getValue().numberOfPartitions().orElse(-1));
            }
            return new HashSet<>(topics.keySet());
        }
    }

    public static void main(final String[] args) throws Exception {
        final Path out = Path.of(args[0]);
        Files.createDirectories(out);
        for (final Scenario s : scenarios()) {
            Files.write(out.resolve(s.name + ".txt"), run(s).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static String run(final Scenario s) throws Exception {
        final StringBuilder w = new StringBuilder();
        w.append("kafka 4.4.0\n");
        w.append("scenario ").append(s.name).append('\n');
        for (final Map.Entry<String, Integer> t : new TreeMap<>(s.topics).entrySet()) {
            w.append("topic ").append(t.getKey()).append(' ').append(t.getValue()).append('\n');
        }
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "oracle:9092");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        final StreamsConfig config = new StreamsConfig(props);
        final Topology topology;
        if (s.papi != null) {
            topology = s.papi;
        } else {
            final StreamsBuilder builder = new StreamsBuilder();
            s.dsl.accept(builder);
            try {
                topology = builder.build();
            } catch (final TopologyException e) {
                // InternalTopologyBuilder.validateCopartition refuses enforced counts that differ.
                w.append("error ").append(e.getClass().getSimpleName()).append(": ").append(e.getMessage()).append('\n');
                return w.toString();
            }
        }
        final Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
        f.setAccessible(true);
        final InternalTopologyBuilder itb = (InternalTopologyBuilder) f.get(topology);
        // As KafkaStreams' constructor does.
        final TopologyMetadata metadata = new TopologyMetadata(itb, config);
        metadata.buildAndRewriteTopology();

        final TreeSet<String> groups = new TreeSet<>();
        for (final Set<String> g : metadata.copartitionGroups()) {
            groups.add(String.join(" ", new TreeSet<>(g)));
        }
        for (final String g : groups) {
            w.append("copartition ").append(g).append('\n');
        }

        final List<PartitionInfo> partitions = new ArrayList<>();
        for (final Map.Entry<String, Integer> t : s.topics.entrySet()) {
            for (int p = 0; p < t.getValue(); p++) {
                partitions.add(new PartitionInfo(t.getKey(), p, null, new Node[0], new Node[0]));
            }
        }
        final Cluster cluster = new Cluster("oracle", List.of(), partitions, Set.of(), Set.of());
        try {
            // StreamsPartitionAssignor.assign, step one: prepareRepartitionTopics.
            final RecordingTopicManager repartitionManager = new RecordingTopicManager(config);
            final RepartitionTopics repartitionTopics = new RepartitionTopics(
                metadata, repartitionManager, new CopartitionedTopicsEnforcer(""), cluster, "");
            repartitionTopics.setup();
            if (!repartitionTopics.missingSourceTopicExceptions().isEmpty()) {
                throw new org.apache.kafka.streams.errors.MissingSourceTopicException(
                    String.format("Missing source topics. %s", new TreeSet<>(repartitionTopics.missingSourceTopics())));
            }
            final Cluster full = cluster.withPartitions(repartitionTopics.topicPartitionsInfo());

            // Step two: the tasks (PartitionGrouper) and the changelogs (ChangelogTopics).
            final Map<Subtopology, TopicsInfo> topicGroups =
                metadata.subtopologyTopicsInfoMapExcluding(repartitionTopics.topologiesWithMissingInputTopics());
            final Map<Subtopology, Set<String>> sourceTopicsByGroup = new HashMap<>();
            for (final Map.Entry<Subtopology, TopicsInfo> e : topicGroups.entrySet()) {
                sourceTopicsByGroup.put(e.getKey(), e.getValue().sourceTopics);
            }
            final Map<TaskId, Set<TopicPartition>> tasks = new PartitionGrouper().partitionGroups(sourceTopicsByGroup, full);
            final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
            for (final TaskId id : tasks.keySet()) {
                tasksForTopicGroup.computeIfAbsent(new Subtopology(id.subtopology(), id.topologyName()), k -> new HashSet<>()).add(id);
            }
            final RecordingTopicManager changelogManager = new RecordingTopicManager(config);
            new ChangelogTopics(changelogManager, topicGroups, tasksForTopicGroup, "").setup();

            for (final Map.Entry<String, Integer> e : repartitionManager.made.entrySet()) {
                w.append("repartition ").append(e.getKey()).append(' ').append(e.getValue()).append('\n');
            }
            for (final Map.Entry<String, Integer> e : changelogManager.made.entrySet()) {
                w.append("changelog ").append(e.getKey()).append(' ').append(e.getValue()).append('\n');
            }
            for (final Map.Entry<TaskId, Set<TopicPartition>> e : new TreeMap<>(tasks).entrySet()) {
                final String read = e.getValue().stream()
                    .sorted((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()))
                    .map(TopicPartition::toString)
                    .collect(Collectors.joining(" "));
                w.append("task ").append(e.getKey()).append(' ').append(read).append('\n');
            }
        } catch (final RuntimeException e) {
            w.append("error ").append(e.getClass().getSimpleName()).append(": ").append(e.getMessage()).append('\n');
        }
        return w.toString();
    }

    private RuntimeOracle() { }
}
