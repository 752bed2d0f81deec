package dev.tailor.sim.cluster;

import dev.tailor.common.StrictReader;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.ScenarioFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Loads cluster scenarios: a bundled one by name, or a YAML file (strict JSON when named {@code .json}). Every problem of a file is
 * reported at once, naming the field ({@link ScenarioFiles}): a duplicate key, an unknown field, a
 * wrong type, and every range or reference problem; only a YAML syntax error is reported alone (the
 * file cannot be parsed).
 */
public final class Scenarios {

    /** The bundled scenarios: the paper's two, then the dynamic ones (paper-dag with a load change or a fault). */
    public static final List<String> BUNDLED = List.of(
            "paper-pairwise",
            "paper-dag",
            "dyn-load-step",
            "dyn-load-ramp",
            "dyn-noisy-neighbour",
            "dyn-replica-crash",
            "dyn-cold-restart",
            "dyn-antagonist",
            "dyn-metrics-undercount",
            "dyn-calls-overcount",
            "dyn-background-cpu");

    /** The dynamic bundled scenarios. */
    public static final List<String> DYNAMIC = BUNDLED.subList(2, BUNDLED.size());

    private Scenarios() {}

    /**
     * A bundled scenario by name, else the YAML file at {@code nameOrPath}.
     *
     * @throws ScenarioException if it cannot be read or is invalid
     */
    public static ClusterScenario load(String nameOrPath) {
        if (BUNDLED.contains(nameOrPath)) {
            String resource = "/dev/tailor/sim/scenarios/" + nameOrPath + ".yaml";
            try (InputStream in = Scenarios.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("bundled scenario missing from the jar: " + resource);
                }
                return parse(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8), nameOrPath);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read bundled scenario " + resource, e);
            }
        }
        Path file = Path.of(nameOrPath);
        if (Files.isDirectory(file)) {
            throw new ScenarioException(nameOrPath + ": is a directory (expected: a YAML scenario file)");
        }
        if (!Files.isRegularFile(file)) {
            throw new ScenarioException(nameOrPath + ": "
                    + (Files.exists(file) ? "not a regular file" : "no such bundled" + " scenario or file")
                    + " (expected: one of " + BUNDLED + ", or a YAML scenario file)");
        }
        try {
            return parse(Files.readString(file), file.toString(), StrictReader.isJsonFile(file));
        } catch (java.nio.charset.MalformedInputException e) {
            throw new ScenarioException(file + ": not UTF-8 text (expected: a YAML scenario file)");
        } catch (IOException e) {
            throw new ScenarioException(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** Parses and validates scenario YAML; {@code source} names it in errors. */
    public static ClusterScenario parse(String yaml, String source) {
        return parse(yaml, source, false);
    }

    /** {@link #parse(String, String)}, with {@code json} read as strict JSON and told in JSON's words. */
    static ClusterScenario parse(String text, String source, boolean json) {
        return ScenarioFiles.read(
                        text,
                        source,
                        ClusterScenario.class,
                        type -> expected(type, json),
                        ClusterScenario::problems,
                        json)
                .scenario();
    }

    /**
     * What a field of {@code type} takes: the labels users write for the scenario's enums; in a JSON file's words
     * when {@code json} (an array, true or false).
     */
    private static String expected(Class<?> type, boolean json) {
        if (type != null && type.isEnum()) {
            return enumValues(type);
        }
        return StrictReader.expected(type, json);
    }

    /** How to name the values of the scenario's enum fields. */
    private static String enumValues(Class<?> type) {
        return type == ClusterScenario.EventKind.class
                ? "one of " + ClusterScenario.EventKind.labels()
                : "one of fluid, cfs-quota";
    }
}
