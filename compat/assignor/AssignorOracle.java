/*
 * Kafka 4.4.0's StickyTaskAssignor (org.apache.kafka.streams.processor.assignment.assignors) as
 * the oracle for streams-core's runtime::assignor. Generates seeded random inputs, runs each
 * through Kafka's own class and prints input and result as text (compat/assignor/golden.txt),
 * which streams-core's test `matches_kafka_4_4_on_the_golden_cases` replays.
 *
 * Kafka's assignor iterates HashMaps and HashSets in places (previous active tasks, the standby
 * pass, the stateful tasks of the standby round), so its result there depends on hash codes;
 * the Rust port iterates in sorted order instead. Only inputs on which that order cannot matter
 * are kept: no client claims more previous active tasks than its share, no client could receive
 * more tasks from its previous standbys than its share has room for, and standbys are asked for
 * only when at most one task is stateful. Process ids are new UUID(0, n) with n < 16: a HashSet of
 * those iterates in ascending n, as the Rust side orders them.
 *
 * Usage: java -cp <kafka-streams 4.4.0 classpath>:. AssignorOracle <seed> <cases>
 */

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.DefaultKafkaStreamsState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskInfo;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

public final class AssignorOracle {

    private record Client(int n, int threads, SortedSet<TaskId> active, SortedSet<TaskId> standby) { }

    private record Case(int standbys, TreeMap<TaskId, Boolean> tasks, List<Client> clients) { }

    public static void main(final String[] args) {
        final Random random = new Random(Long.parseLong(args[0]));
        final int wanted = Integer.parseInt(args[1]);
        final StringBuilder out = new StringBuilder();
        int made = 0;
        while (made < wanted) {
            final Case c = generate(random, made % 2 == 1);
            if (!orderFree(c)) {
                continue;
            }
            write(out, "r" + made, c, new StickyTaskAssignor().assign(applicationState(c)));
            made++;
        }
        System.out.print(out);
    }

    /** A random input: 1-3 sub-topologies of 1-6 partitions, 1-6 clients (mostly 2 or more) of 1-3 threads. */
    private static Case generate(final Random random, final boolean withStandbys) {
        final TreeMap<TaskId, Boolean> tasks = new TreeMap<>();
        final int subtopologies = 1 + random.nextInt(3);
        for (int s = 0; s < subtopologies; s++) {
            final boolean stateful = random.nextBoolean();
            final int partitions = 1 + random.nextInt(6);
            for (int p = 0; p < partitions; p++) {
                tasks.put(new TaskId(s, p), stateful);
            }
        }
        final int n = random.nextInt(10) == 0 ? 1 : 2 + random.nextInt(5);
        final List<Client> clients = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            clients.add(new Client(i, 1 + random.nextInt(3), new TreeSet<>(), new TreeSet<>()));
        }
        for (final TaskId task : tasks.keySet()) {
            final int owner = random.nextInt(n + 2); // n and n + 1: no previous owner
            if (owner < n) {
                clients.get(owner).active().add(task);
            }
            // Sometimes a second claim: the client iterated last (the highest n) keeps it.
            if (random.nextInt(100) < 15) {
                clients.get(random.nextInt(n)).active().add(task);
            }
            if (withStandbys) {
                for (final Client c : clients) {
                    if (random.nextInt(100) < 30 && !c.active().contains(task)) {
                        c.standby().add(task);
                    }
                }
            }
        }
        if (random.nextInt(100) < 30) {
            clients.get(0).active().add(new TaskId(7, 7)); // a task that no longer exists
        }
        final long stateful = tasks.values().stream().filter(b -> b).count();
        final int standbys = stateful <= 1 ? random.nextInt(4) : 0;
        return new Case(standbys, tasks, clients);
    }

    /** Whether Kafka's hash-order iteration cannot change the result (see the file comment). */
    private static boolean orderFree(final Case c) {
        final int total = c.tasks().size();
        final int capacity = c.clients().stream().mapToInt(Client::threads).sum();
        final Map<TaskId, Integer> owner = new HashMap<>();
        for (final Client client : c.clients()) {
            for (final TaskId task : client.active()) {
                if (c.tasks().containsKey(task)) {
                    owner.put(task, client.n());
                }
            }
        }
        for (final Client client : c.clients()) {
            final int share = (total * client.threads() + capacity - 1) / capacity;
            final long kept = owner.values().stream().filter(o -> o == client.n()).count();
            final long warm = c.tasks().keySet().stream()
                .filter(t -> !owner.containsKey(t) && client.standby().contains(t))
                .count();
            if (kept + warm > share) {
                return false;
            }
        }
        return true;
    }

    private static ApplicationState applicationState(final Case c) {
        final Map<TaskId, TaskInfo> tasks = new HashMap<>();
        c.tasks().forEach((id, stateful) -> {
            if (stateful) {
                final Set<TaskTopicPartition> changelog = Set.of(new DefaultTaskTopicPartition(
                    new TopicPartition("changelog-" + id.subtopology(), id.partition()), true, true, () -> { }));
                tasks.put(id, new DefaultTaskInfo(id, true, Set.of("store-" + id.subtopology()), changelog));
            } else {
                tasks.put(id, new DefaultTaskInfo(id, false, Set.of(), Set.of()));
            }
        });
        final Map<ProcessId, KafkaStreamsState> states = new HashMap<>();
        for (final Client client : c.clients()) {
            final ProcessId id = new ProcessId(new UUID(0, client.n()));
            states.put(id, new DefaultKafkaStreamsState(id, client.threads(), Map.of(), client.active(),
                client.standby(), new TreeMap<>(), Optional.empty(), Optional.empty(), Optional.empty()));
        }
        final AssignmentConfigs configs = new AssignmentConfigs(
            0L, 1, c.standbys(), 60_000L, List.of(), OptionalInt.empty(), OptionalInt.empty(), "none");
        return new ApplicationState() {
            @Override
            public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) {
                return states;
            }

            @Override
            public AssignmentConfigs assignmentConfigs() {
                return configs;
            }

            @Override
            public Map<TaskId, TaskInfo> allTasks() {
                return tasks;
            }
        };
    }

    private static String tasks(final Set<TaskId> tasks) {
        return new TreeSet<>(tasks).stream().map(TaskId::toString).collect(Collectors.joining(","));
    }

    private static void write(final StringBuilder out, final String name, final Case c,
                              final TaskAssignor.TaskAssignment result) {
        out.append("case ").append(name).append('\n');
        out.append("standbys ").append(c.standbys()).append('\n');
        out.append("tasks");
        c.tasks().forEach((id, stateful) -> out.append(' ').append(id).append(stateful ? ":s" : ":l"));
        out.append('\n');
        for (final Client client : c.clients()) {
            out.append("client ").append(client.n()).append(' ').append(client.threads())
                .append(" A=").append(tasks(client.active()))
                .append(" S=").append(tasks(client.standby())).append('\n');
        }
        final TreeMap<Long, String> lines = new TreeMap<>();
        for (final KafkaStreamsAssignment a : result.assignment()) {
            final Set<TaskId> active = new TreeSet<>();
            final Set<TaskId> standby = new TreeSet<>();
            for (final KafkaStreamsAssignment.AssignedTask t : a.tasks().values()) {
                (t.type() == KafkaStreamsAssignment.AssignedTask.Type.ACTIVE ? active : standby).add(t.id());
            }
            final long n = a.processId().id().getLeastSignificantBits();
            lines.put(n, "expect " + n + " A=" + tasks(active) + " S=" + tasks(standby));
        }
        lines.values().forEach(l -> out.append(l).append('\n'));
        out.append("end\n");
    }
}
