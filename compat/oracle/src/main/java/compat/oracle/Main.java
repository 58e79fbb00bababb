package compat.oracle;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Runs every scenario through Kafka's TopologyTestDriver and writes one golden file per
 * scenario.
 *
 * <pre>
 *   java compat.oracle.Main [OUT_DIR] [SCENARIO ...]
 * </pre>
 * OUT_DIR defaults to {@code compat/golden} (relative to the working directory). With
 * scenario names, only those run. Files are written as {@code OUT_DIR/<scenario>.json}.
 */
public final class Main {
    /** Every scenario family; each {@code @Scenario} method in them is one scenario. */
    static final List<Class<?>> FAMILIES = List.of(
        StatelessScenarios.class,
        TopologyScenarios.class,
        ProcessorApiScenarios.class,
        TimeScenarios.class,
        SerdeScenarios.class,
        ErrorScenarios.class,
        DlqScenarios.class,
        StatefulScenarios.class,
        JoinScenarios.class,
        ForeignKeyJoinScenarios.class,
        WindowScenarios.class,
        RepartitionScenarios.class,
        CogroupScenarios.class,
        VersionedScenarios.class,
        OptimizationScenarios.class,
        StoreScenarios.class
    );

    private Main() {}

    public static void main(final String[] args) throws Exception {
        final String actualVersion = kafkaVersion();
        if (!Golden.KAFKA_VERSION.equals(actualVersion)) {
            throw new IllegalStateException("expected Kafka " + Golden.KAFKA_VERSION + " on the classpath, got " + actualVersion);
        }
        final Path outDir = Paths.get(args.length > 0 ? args[0] : "compat/golden");
        final Set<String> only = new HashSet<>(Arrays.asList(args).subList(Math.min(1, args.length), args.length));

        final TreeMap<String, Method> scenarios = new TreeMap<>();
        for (final Class<?> family : FAMILIES) {
            for (final Method m : family.getDeclaredMethods()) {
                if (!m.isAnnotationPresent(Scenario.class)) {
                    continue;
                }
                if (!Modifier.isStatic(m.getModifiers())
                    || m.getParameterCount() != 1
                    || m.getParameterTypes()[0] != Golden.class) {
                    throw new IllegalStateException("bad scenario signature: " + m);
                }
                if (!m.getName().matches("[a-z][a-z0-9_]*")) {
                    throw new IllegalStateException("scenario name must be snake_case: " + m.getName());
                }
                if (scenarios.put(m.getName(), m) != null) {
                    throw new IllegalStateException("duplicate scenario name: " + m.getName());
                }
            }
        }
        if (!scenarios.keySet().containsAll(only)) {
            final Set<String> unknown = new HashSet<>(only);
            unknown.removeAll(scenarios.keySet());
            throw new IllegalArgumentException("unknown scenarios: " + unknown);
        }

        Files.createDirectories(outDir);
        final List<String> written = new ArrayList<>();
        for (final Method m : scenarios.values()) {
            if (!only.isEmpty() && !only.contains(m.getName())) {
                continue;
            }
            final Golden g = new Golden(m.getName());
            try {
                m.setAccessible(true);
                m.invoke(null, g);
            } catch (final InvocationTargetException e) {
                g.finishQuietly();
                throw new IllegalStateException("scenario " + m.getName() + " failed", e.getCause());
            }
            g.finish();
            write(outDir.resolve(m.getName() + ".json"), g.toJson());
            written.add(m.getName());
        }
        System.out.println("wrote " + written.size() + " golden files to " + outDir);
    }

    /** The version in kafka-clients' kafka/kafka-version.properties resource. */
    private static String kafkaVersion() throws IOException {
        try (InputStream in = Main.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            final Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        }
    }

    private static void write(final Path file, final String content) throws IOException {
        Files.write(file, content.getBytes(StandardCharsets.UTF_8));
    }
}
