package dev.tailor.cli;

import dev.tailor.heart.Snapshot;
import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The snapshots bundled in the jar, from the repository's {@code examples/} folder: the HEART
 * paper's setting of five heterogeneous workers (docs/examples.md says how they were derived).
 */
final class Examples {

    static final String DEFAULT = "paper-pairwise";

    private static final Map<String, String> DESCRIPTIONS = new TreeMap<>(Map.of(
            "paper-pairwise",
            "pairwise app a -> b at 100 req/s on 5 heterogeneous workers (per-core speed 1.0 .. 0.4),"
                    + " w3 and w5 behind 20-60 ms links",
            "paper-dag",
            "DAG app frontend -> (b | c) -> d -> e at 400 req/s on the same 5 workers and links"));

    private Examples() {}

    static String describe(String name) {
        return DESCRIPTIONS.getOrDefault(name, name);
    }

    /** The example's snapshot; an unknown name is a {@link CliException} listing the known ones. */
    static Snapshot load(String name) {
        if (!DESCRIPTIONS.containsKey(name)) {
            throw new CliException("--example: \"" + name + "\" is not a bundled example (expected one of "
                    + DESCRIPTIONS.keySet() + ")");
        }
        String resource = "/dev/tailor/cli/examples/" + name + ".json";
        try (InputStream in = Examples.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("bundled example missing from the jar: " + resource);
            }
            return Json.read(
                            new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8),
                            Snapshot.class,
                            "bundled example " + name)
                    .value();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read bundled example " + resource, e);
        }
    }

    /** For picocli's completion and help. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return DESCRIPTIONS.keySet().iterator();
        }
    }
}
