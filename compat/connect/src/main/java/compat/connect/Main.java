package compat.connect;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Runs the scenarios of {@link Scenarios} through Kafka Connect 4.4.0 ({@link Connector}) and
 * writes {@code <outdir>/<scenario>.json} for each.
 *
 * <pre>java -cp ... compat.connect.Main OUTDIR [SCENARIO ...]</pre>
 */
public final class Main {
    private Main() {}

    public static void main(final String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: compat.connect.Main OUTDIR [SCENARIO ...]");
            System.exit(2);
        }
        final Path out = Path.of(args[0]);
        Files.createDirectories(out);
        final List<Method> scenarios = scenarios();
        final List<String> wanted = List.of(args).subList(1, args.length);
        for (final String name : wanted) {
            if (scenarios.stream().noneMatch(m -> m.getName().equals(name))) {
                System.err.println("no scenario " + name);
                System.exit(2);
            }
        }
        int written = 0;
        final long start = System.nanoTime();
        for (final Method m : scenarios) {
            if (!wanted.isEmpty() && !wanted.contains(m.getName())) {
                continue;
            }
            final Connector connector = (Connector) m.invoke(null, new Connector(m.getName()));
            final Map<String, Object> doc = connector.run();
            write(out.resolve(m.getName() + ".json"), Json.write(doc));
            written++;
        }
        System.err.printf("compat/connect: %d scenarios in %.1f s%n", written, (System.nanoTime() - start) / 1e9);
    }

    static List<Method> scenarios() {
        final List<Method> out = new ArrayList<>();
        for (final Method m : Scenarios.class.getDeclaredMethods()) {
            if (m.isAnnotationPresent(Scenario.class) && Modifier.isStatic(m.getModifiers())) {
                out.add(m);
            }
        }
        out.sort(Comparator.comparing(Method::getName));
        return out;
    }

    private static void write(final Path path, final String text) throws IOException {
        Files.writeString(path, text, StandardCharsets.UTF_8);
    }
}
