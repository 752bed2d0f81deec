package dev.tailor.sim.storage;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import dev.tailor.sim.ScenarioException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads storage scenarios: a bundled one by name, or a YAML file. A file that parses is checked
 * whole and every range or reference problem is reported at once, naming the field; a syntax error,
 * a wrong type, a duplicate key or an unknown field is reported alone (the file cannot be read
 * further). Same rules as the cluster simulator's {@code Scenarios}.
 */
public final class StorageScenarios {

    /** The bundled scenarios. */
    public static final List<String> BUNDLED = List.of("burst-microbench", "deployed-like", "underload", "robustness");

    private static final String RESOURCES = "/dev/tailor/sim/scenarios/storage/";

    private static final ObjectMapper YAML = StrictReader.yaml();

    private StorageScenarios() {}

    /**
     * A scenario as read, with what tells its problems found later, when it is built
     * ({@link StorageSetup#build}), as its reading tells its own: by file and line.
     *
     * @param scenario  the scenario, checked
     * @param source    the file (or bundled name) it was read from
     * @param locations where its fields are in the text
     */
    public record Loaded(StorageScenario scenario, String source, Locations locations) {

        /**
         * {@code SOURCE: path: value as written (expected: ...) at line N}, or {@code SOURCE: N problems:} and one
         * indented line each; each problem's path as in the file ({@link StorageScenario#asInFile}).
         */
        public String report(List<Problem> problems) {
            return locations.report(source, problems);
        }
    }

    /**
     * A bundled scenario by name, else the YAML file at {@code nameOrPath}.
     *
     * @throws ScenarioException if it cannot be read or is invalid
     */
    public static StorageScenario load(String nameOrPath) {
        return read(nameOrPath).scenario();
    }

    /**
     * {@link #load}, with the file's name and locations, for problems found when the scenario is built.
     *
     * @throws ScenarioException if it cannot be read or is invalid
     */
    public static Loaded read(String nameOrPath) {
        return read(nameOrPath, null);
    }

    /**
     * {@link #read(String)}, and with {@code data} (null: not looked at) whether the data files it names are
     * there ({@link StorageSetup#dataFileProblems}), told with its other problems, each at its line.
     *
     * @throws ScenarioException if it cannot be read, is invalid, or names a data file that is not there
     */
    public static Loaded read(String nameOrPath, StorageSetup.DataFiles data) {
        if (BUNDLED.contains(nameOrPath)) {
            String resource = RESOURCES + nameOrPath + ".yaml";
            try (InputStream in = StorageScenarios.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("bundled scenario missing from the jar: " + resource);
                }
                return parseLoaded(new String(in.readAllBytes(), StandardCharsets.UTF_8), nameOrPath, data);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read bundled scenario " + resource, e);
            }
        }
        Path file = Path.of(nameOrPath);
        if (Files.isDirectory(file)) {
            throw new ScenarioException(nameOrPath + ": is a directory (expected: a YAML scenario file)");
        }
        if (!Files.isRegularFile(file)) {
            throw new ScenarioException(
                    nameOrPath + ": " + (Files.exists(file) ? "not a regular file" : "no such bundled scenario or file")
                            + " (expected: one of " + String.join(", ", BUNDLED)
                            + ", or a YAML scenario file)");
        }
        try {
            return parseLoaded(Files.readString(file), file.toString(), data);
        } catch (MalformedInputException e) {
            throw new ScenarioException(file + ": not UTF-8 text (expected: a YAML scenario file)");
        } catch (IOException e) {
            throw new ScenarioException(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** The text of a bundled scenario, for showing or copying it. */
    public static String bundledText(String name) {
        try (InputStream in = StorageScenarios.class.getResourceAsStream(RESOURCES + name + ".yaml")) {
            if (in == null) {
                throw new IllegalArgumentException("scenario: \"" + name + "\" (expected: one of " + BUNDLED + ")");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read bundled scenario " + name, e);
        }
    }

    /** Parses and validates scenario YAML; {@code source} names it in errors. */
    public static StorageScenario parse(String yaml, String source) {
        return parseLoaded(yaml, source).scenario();
    }

    /** {@link #parse}, with the file's name and locations, for problems found when the scenario is built. */
    public static Loaded parseLoaded(String yaml, String source) {
        return parseLoaded(yaml, source, null);
    }

    /**
     * {@link #parseLoaded(String, String)}, and with {@code data} (null: not looked at) whether the data files
     * the scenario names are there, told with its other problems.
     */
    public static Loaded parseLoaded(String yaml, String source, StorageSetup.DataFiles data) {
        StorageScenario scenario;
        try {
            scenario = YAML.readValue(yaml, StorageScenario.class);
        } catch (JacksonException e) {
            throw ScenarioException.unreadable(
                    source,
                    Locations.of(YAML, yaml),
                    e,
                    type -> type != null && type.isEnum() ? "one of its named values" : StrictReader.expected(type));
        }
        if (scenario == null) {
            throw new ScenarioException(source + ": empty (expected: a scenario)");
        }
        Locations locations = Locations.of(YAML, yaml);
        List<Problem> problems = new ArrayList<>(scenario.problems());
        if (data != null) {
            problems.addAll(StorageSetup.dataFileProblems(scenario, data));
        }
        if (!problems.isEmpty()) {
            throw new ScenarioException(locations.report(source, problems));
        }
        return new Loaded(scenario, source, locations);
    }
}
