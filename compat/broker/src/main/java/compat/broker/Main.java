package compat.broker;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.internals.AppInfoParser;

/**
 * The broker oracle tool. Commands:
 *
 * <pre>
 *   golden DIR                        write DIR/batches.json and DIR/partitions.json (no broker needed)
 *   scenarios BOOTSTRAP OUT_DIR [NAME ...]   run the broker scenarios (all, or the named ones) against
 *                                     a real broker and write OUT_DIR/NAME.json for each
 *   scenario BOOTSTRAP NAME           run one scenario and print its JSON on stdout
 *   list                              print the scenario names, one per line
 *   ports N                           print N free TCP ports on 127.0.0.1, one per line (for kafka-up)
 *   ready BOOTSTRAP TIMEOUT_S         wait until the broker accepts a topic (creates and deletes
 *                                     the topic "kafka-up-ready"); exit 1 on timeout (for kafka-up)
 * </pre>
 */
public final class Main {
    static final String KAFKA_VERSION = "4.4.0";

    private Main() {}

    public static void main(final String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        final List<String> rest = Arrays.asList(args).subList(1, args.length);
        switch (args[0]) {
            case "golden" -> {
                checkVersion();
                if (rest.size() != 1) {
                    usage();
                }
                Golden.write(Paths.get(rest.get(0)));
            }
            case "scenarios" -> {
                checkVersion();
                if (rest.size() < 2) {
                    usage();
                }
                final Path out = Paths.get(rest.get(1));
                Files.createDirectories(out);
                final List<String> names = rest.size() > 2 ? rest.subList(2, rest.size()) : Scenarios.NAMES;
                for (final String name : names) {
                    final long start = System.nanoTime();
                    final String json = Scenarios.run(rest.get(0), name);
                    Files.writeString(out.resolve(name + ".json"), json, StandardCharsets.UTF_8);
                    System.err.printf("scenario %s: %.1f s%n", name, (System.nanoTime() - start) / 1e9);
                }
            }
            case "scenario" -> {
                checkVersion();
                if (rest.size() != 2) {
                    usage();
                }
                System.out.print(Scenarios.run(rest.get(0), rest.get(1)));
            }
            case "list" -> Scenarios.NAMES.forEach(System.out::println);
            case "ports" -> {
                final int n = rest.size() == 1 ? Integer.parseInt(rest.get(0)) : 1;
                // Hold all sockets open until every port is chosen, so the N ports differ.
                final List<ServerSocket> sockets = new ArrayList<>();
                try {
                    for (int i = 0; i < n; i++) {
                        sockets.add(new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1")));
                    }
                    for (final ServerSocket s : sockets) {
                        System.out.println(s.getLocalPort());
                    }
                } finally {
                    for (final ServerSocket s : sockets) {
                        s.close();
                    }
                }
            }
            case "ready" -> {
                if (rest.size() != 2) {
                    usage();
                }
                System.exit(ready(rest.get(0), Long.parseLong(rest.get(1))) ? 0 : 1);
            }
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: compat.broker.Main golden DIR | scenarios BOOTSTRAP OUT_DIR [NAME ...] | "
            + "scenario BOOTSTRAP NAME | list | ports N | ready BOOTSTRAP TIMEOUT_S");
        System.exit(2);
    }

    private static void checkVersion() {
        final String v = AppInfoParser.getVersion();
        if (!KAFKA_VERSION.equals(v)) {
            throw new IllegalStateException("expected kafka-clients " + KAFKA_VERSION + " on the classpath, got " + v);
        }
    }

    /** Creates (then deletes) a 1-partition topic; retries until it works or the deadline passes. */
    static boolean ready(final String bootstrap, final long timeoutS) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 15_000);
        String last = "no attempt";
        while (System.nanoTime() < deadline) {
            try (Admin admin = Admin.create(p)) {
                while (System.nanoTime() < deadline) {
                    try {
                        try {
                            admin.createTopics(List.of(new NewTopic("kafka-up-ready", 1, (short) 1)))
                                .all().get(15, TimeUnit.SECONDS);
                        } catch (final java.util.concurrent.ExecutionException e) {
                            if (!(e.getCause() instanceof TopicExistsException)) {
                                throw e;
                            }
                        }
                        admin.deleteTopics(List.of("kafka-up-ready")).all().get(15, TimeUnit.SECONDS);
                        return true;
                    } catch (final Exception e) {
                        last = (e.getCause() != null ? e.getCause() : e).toString();
                        Thread.sleep(500);
                    }
                }
            } catch (final Exception e) {
                last = e.toString();
                Thread.sleep(500);
            }
        }
        System.err.println("ready: broker at " + bootstrap + " did not accept a topic within " + timeoutS + " s: " + last);
        return false;
    }
}
