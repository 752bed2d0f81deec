package dev.tailor.sim.storage;

import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.ScenarioFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Loads storage scenarios: a bundled one by name, or a YAML file (strict JSON when named {@code .json}). Every problem of a file is
 * reported at once, naming the field ({@link ScenarioFiles}): a duplicate key, an unknown field, a
 * wrong type, and every range or reference problem; only a YAML syntax error is reported alone (the
 * file cannot be parsed). Same rules as the cluster simulator's {@code Scenarios}.
 */
public final class StorageScenarios {

    /** The bundled scenarios. */
    public static final List<String> BUNDLED = List.of(
            "burst-microbench", "deployed-like", "underload", "big-requests", "mix50", "mix-many", "robustness");

    /** The bundled scenarios that are families of mixes, each of whose members runs alone as {@code <family>-<mix>}. */
    public static final List<String> FAMILIES = List.of("robustness");

    private static final String RESOURCES = "/dev/tailor/sim/scenarios/storage/";

    private StorageScenarios() {}

    /**
     * A scenario as read, with what tells its problems found later, when it is built
     * ({@link StorageSetup#build}), as its reading tells its own: by file and line.
     *
     * @param scenario  the scenario, checked; for one member of a bundled family, the whole family
     * @param source    the file (or bundled name) it was read from
     * @param locations where its fields are in the text
     * @param mix       the index in {@code scenario}'s mixes of the one member asked for
     *                  ({@code robustness-long-bursts}), or -1: the scenario whole
     */
    public record Loaded(StorageScenario scenario, String source, Locations locations, int mix) {

        /** The scenario whole. */
        public Loaded(StorageScenario scenario, String source, Locations locations) {
            this(scenario, source, locations, -1);
        }

        /**
         * The scenarios it runs as, each with its index in {@code scenario}'s mixes: every mix's
         * ({@link StorageScenario#mixScenarios()}), or the one member's.
         */
        public Map<Integer, StorageScenario> runsAs(StorageScenario variant) {
            List<StorageScenario> all = variant.mixScenarios();
            Map<Integer, StorageScenario> out = new LinkedHashMap<>();
            for (int k = 0; k < all.size(); k++) {
                if (mix < 0 || k == mix) {
                    out.put(k, all.get(k));
                }
            }
            return out;
        }

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
        String family = family(nameOrPath);
        if (family != null) {
            // A known mix is the bundled member, as a bundled name is, whatever files are about; an unknown one
            // may be a file of the user's.
            String mix = nameOrPath.substring(family.length() + 1);
            List<String> names = mixNames(load(family));
            if (names.contains(mix)) {
                Loaded whole = read(family, data);
                return new Loaded(whole.scenario(), whole.source(), whole.locations(), names.indexOf(mix));
            }
            if (!Files.exists(Path.of(nameOrPath))) {
                throw new ScenarioException(nameOrPath + ": no mix \"" + mix + "\" in " + family + " (expected: "
                        + family + "-<mix> with <mix> one of " + String.join(", ", names) + ")");
            }
        }
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
                            + " (expected: one of " + names() + ", or a YAML scenario file)");
        }
        try {
            return parseLoaded(Files.readString(file), file.toString(), data, StrictReader.isJsonFile(file));
        } catch (MalformedInputException e) {
            throw new ScenarioException(file + ": not UTF-8 text (expected: a YAML scenario file)");
        } catch (IOException e) {
            throw new ScenarioException(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /**
     * Whether {@code name} is a bundled scenario or a known mix of a bundled family ({@code robustness-mild}):
     * either is read from the jar, never from a file of that name.
     */
    public static boolean isBundled(String name) {
        if (BUNDLED.contains(name)) {
            return true;
        }
        String family = family(name);
        return family != null && mixNames(load(family)).contains(name.substring(family.length() + 1));
    }

    /**
     * The bundled family {@code name} is a member of ({@code robustness} for {@code robustness-long-bursts}, a
     * known mix or not), or null.
     */
    public static String family(String name) {
        for (String family : FAMILIES) {
            if (name.startsWith(family + "-") && name.length() > family.length() + 1) {
                return family;
            }
        }
        return null;
    }

    /**
     * The bundled scenarios' names, the members of each family told once: {@code burst-microbench, ...,
     * robustness, robustness-<mix> (<mix>: msn-small, mild, ...)}.
     */
    public static String names() {
        StringBuilder text = new StringBuilder(String.join(", ", BUNDLED));
        for (String family : FAMILIES) {
            text.append(", ")
                    .append(family)
                    .append("-<mix> (<mix>: ")
                    .append(String.join(", ", mixNames(load(family))))
                    .append(")");
        }
        return text.toString();
    }

    private static List<String> mixNames(StorageScenario family) {
        return family.mixes().stream().map(StorageScenario.MixSpec::name).toList();
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
        return parseLoaded(yaml, source, data, false);
    }

    /**
     * {@link #parseLoaded(String, String, StorageSetup.DataFiles)}, with {@code json} read as strict JSON and told
     * in JSON's words (an array, true or false).
     */
    static Loaded parseLoaded(String yaml, String source, StorageSetup.DataFiles data, boolean json) {
        ScenarioFiles.Read<StorageScenario> read = ScenarioFiles.read(
                yaml,
                source,
                StorageScenario.class,
                type -> type != null && type.isEnum() ? "one of its named values" : StrictReader.expected(type, json),
                scenario -> {
                    List<Problem> problems = new ArrayList<>(scenario.problems());
                    if (data != null) {
                        problems.addAll(StorageSetup.dataFileProblems(scenario, data));
                    }
                    return problems;
                },
                json);
        return new Loaded(read.scenario(), source, read.locations());
    }
}
