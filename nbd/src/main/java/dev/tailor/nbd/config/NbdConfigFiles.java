package dev.tailor.nbd.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import dev.tailor.common.LenientTree;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads an {@link NbdConfig} from YAML (JSON is YAML too), or from strict JSON when the file's name ends in
 * {@code .json} (a trailing comma or a comment is a syntax error there, with its line and column), checking
 * it whole: every problem at once, by
 * field, in the user's words (unknown fields with the valid ones, values with what the field takes), each
 * at its line. Relative file paths of exports, and the metrics file, are resolved against the config
 * file's directory; a config read from a file also has its exports' files looked at (a directory, a file
 * missing with no size to create it with, a folder missing), in the same list. No problem hides another: a
 * key written twice, YAML's {@code .nan} or {@code .inf}, and a key written with no value (never taken for
 * its default, which is for a key left out) are each a problem of their field, listed with the rest.
 */
public final class NbdConfigFiles {

    /** {@link StrictReader#yaml()}: JSON is YAML too. */
    private static final ObjectMapper YAML = StrictReader.yaml();

    /** {@link StrictReader#json()}: for a file named {@code .json}, read as the JSON it says it is. */
    private static final ObjectMapper JSON = StrictReader.json();

    /**
     * The readers the fields' lines are found with: as {@link #YAML} and {@link #JSON}, but reading on past a key
     * written twice, which is reported at its line with the file's other problems.
     */
    private static final ObjectMapper YAML_LINES =
            StrictReader.yaml().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private static final ObjectMapper JSON_LINES =
            StrictReader.json().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private NbdConfigFiles() {}

    /**
     * The config in {@code file}, checked as {@link #parse} checks it, and each export's file looked at on the
     * file system ({@link ExportConfig#fileProblems}).
     *
     * @throws IllegalArgumentException naming the file and every problem, each with its field and line
     */
    public static NbdConfig read(Path file) {
        return read(file, false).config();
    }

    /**
     * A config file read for a command line that goes over it ({@code tailor nbd serve --config}).
     *
     * @param config      the config, checked as {@link #read(Path)} checks it but for the problems below
     * @param whileOff    the problems left out: a {@code fairDispatch.depth} or {@code fairDispatch.finishTag:
     *                    true} while the file's door is off, which the command line may settle
     *                    ({@code --fair-dispatch on}); the message {@link #read(Path)} would have thrown (the
     *                    file, the fields, their lines), or {@code null}
     * @param budgetGiven whether the file gives admission a budget ({@code admission.iops},
     *                    {@code megabytesPerSecond} or {@code capacityCostUnitsPerSecond}); without one, the
     *                    default budget applies
     */
    public record ForOptions(NbdConfig config, String whileOff, boolean budgetGiven) {}

    /**
     * {@link #read(Path)}, leaving out the problems of a {@code fairDispatch.depth} or {@code
     * fairDispatch.finishTag: true} while the file's door is off, for the command line to settle or refuse;
     * they are left out only when the file has no other problem.
     *
     * @throws IllegalArgumentException naming the file and every other problem, each with its field and line
     */
    public static ForOptions readForOptions(Path file) {
        return read(file, true);
    }

    private static ForOptions read(Path file, boolean forOptions) {
        String text;
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(file + ": a directory (expected: a YAML or JSON file)");
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(file + ": no such file (expected: a YAML or JSON file)");
        }
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read (" + e.getMessage() + ")");
        }
        Path directory = file.toAbsolutePath().getParent();
        return parse(text, file.toString(), directory, true, forOptions, StrictReader.isJsonFile(file));
    }

    /**
     * Parses and checks a whole config: first its shape (every unknown field and every value of the wrong
     * kind, {@link ConfigShape}), then, for what has the right shape, the values ({@link NbdConfig#problems()}).
     *
     * @param directory what relative export file paths are relative to
     * @throws IllegalArgumentException naming {@code source} and every problem, one a line when there are several
     */
    public static NbdConfig parse(String yaml, String source, Path directory) {
        return parse(yaml, source, directory, false, false, false).config();
    }

    /**
     * {@link #parse(String, String, Path)}, and with {@code files} each export's file looked at on the file
     * system too ({@link ExportConfig#fileProblems}), its problems in the same list; with {@code
     * forOptions} a depth while the door is off set aside ({@link ForOptions#depthWhileOff}) when it is the only
     * problem; with {@code json} parsed as strict JSON, not as YAML.
     */
    private static ForOptions parse(
            String yaml, String source, Path directory, boolean files, boolean forOptions, boolean json) {
        ObjectMapper reader = json ? JSON : YAML;
        ObjectMapper lines = json ? JSON_LINES : YAML_LINES;
        JsonNode tree;
        List<String> problems = new ArrayList<>();
        Map<String, String> nonFinite = Map.of();
        Locations at = Locations.of(lines, yaml);
        // A JSON file on one line: its problems are told at their columns too (YAML is seldom written so).
        Columns columns = json ? Columns.of(lines, yaml) : Columns.NONE;
        try {
            tree = yaml.isBlank() ? null : reader.readTree(yaml);
        } catch (JacksonException e) {
            // A key written twice, or YAML's .nan or .inf: a problem of its field; the rest is still checked.
            LenientTree lenient =
                    StrictReader.problem(e, StrictReader::expected) == null ? null : LenientTree.read(lines, yaml);
            if (lenient == null) {
                // A syntax error after what stopped the strict read: the error to report.
                JacksonException syntax = LenientTree.syntaxError(lines, yaml);
                JacksonException told = syntax != null ? syntax : e;
                throw json ? notJson(source, told) : notYaml(source, told);
            }
            tree = lenient.tree();
            for (LenientTree.Duplicate duplicate : lenient.duplicates()) {
                problems.add(duplicate.problem(columns.at(duplicate.first())).message() + columns.at(duplicate.at()));
            }
            nonFinite = lenient.nonFinite();
        }
        if (tree == null || tree.isMissingNode() || tree.isNull()) {
            throw new IllegalArgumentException(
                    source + ": empty (expected: at least an exports " + (json ? "array" : "list") + ")");
        }
        JsonNode written = tree.deepCopy();
        List<ConfigShape.Problem> shapeProblems = ConfigShape.check(tree, NbdConfig.class, at::written, json);
        JsonNode cleaned = tree;
        for (ConfigShape.Problem p : shapeProblems) {
            problems.add(ownRange(p, cleaned, at) + columns.at(at, p.paths().get(0)));
        }
        Set<String> told = new HashSet<>();
        shapeProblems.forEach(p -> told.addAll(p.paths()));
        if (tree.isObject()) {
            NbdConfig config;
            try {
                config = YAML.treeToValue(tree, NbdConfig.class);
            } catch (JsonMappingException e) {
                // ConfigShape removed everything of the wrong kind; this is a gap in it, said as well as Jackson can.
                String message = e.getCause() instanceof IllegalArgumentException cause
                        ? cause.getMessage()
                        : e.getOriginalMessage();
                problems.add(StrictReader.path(e) + ": " + message);
                throw failure(source, problems);
            } catch (JacksonException e) {
                throw notYaml(source, e);
            }
            config = new NbdConfig(
                    config.address(),
                    config.port(),
                    config.limits(),
                    config.eventLoopThreads(),
                    config.fileIoThreads(),
                    config.fileIo(),
                    config.exports().stream()
                            .map(e -> e == null ? null : e.resolvedAgainst(directory))
                            .toList(),
                    config.admission(),
                    config.loop().resolvedAgainst(directory),
                    NbdConfig.resolvedUnixPath(directory, config.unix()),
                    config.tls().resolvedAgainst(directory),
                    config.fairDispatch());
            List<String> reported =
                    shapeProblems.stream().flatMap(p -> p.paths().stream()).toList();
            List<Problem> whileOff = config.fairDispatch().whileOff(config.admission());
            List<String> whileOffTold = new ArrayList<>();
            List<Problem> backends = backendProblems(written);
            for (Problem problem : config.problems()) {
                // A field removed for its shape may now look missing, and its record incomplete: said once.
                String field = problem.path();
                if (backendProblem(problem)) {
                    continue; // said from the keys as written, below
                }
                if (reported.stream().noneMatch(r -> Problem.related(r, field))) {
                    String value = nonFinite.get(field);
                    Problem shown = value == null ? problem : new Problem(field, value, problem.expected());
                    if (field.equals("exports") && config.exports().isEmpty() && !written.has("exports")) {
                        // Not written at all: not the empty list the config holds for it.
                        shown = new Problem(field, "missing", problem.expected());
                    }
                    problems.add(shown.message() + columns.at(at, field));
                    told.add(field);
                    if (whileOff.contains(problem)) {
                        whileOffTold.add(problems.get(problems.size() - 1));
                    }
                }
            }
            for (Problem problem : backends) {
                problems.add(problem.message() + columns.at(at, problem.path()));
            }
            for (int i = 0; files && i < config.exports().size(); i++) {
                ExportConfig export = config.exports().get(i);
                if (export == null) {
                    continue;
                }
                for (Problem problem : export.fileProblems("exports[" + i + "]")) {
                    String field = problem.path();
                    if (reported.stream().noneMatch(r -> Problem.related(r, field))) {
                        problems.add(problem.message() + columns.at(at, field));
                    }
                }
            }
            if (files && reported.stream().noneMatch(r -> Problem.related(r, "loop.metricsFile"))) {
                for (Problem problem : config.loop().fileProblems()) {
                    problems.add(problem.message() + columns.at(at, problem.path()));
                }
            }
            for (Map.Entry<String, String> value : nonFinite.entrySet()) {
                if (!told.contains(value.getKey())) {
                    // A field whose own check a non-finite number would pass: refused all the same.
                    problems.add(new Problem(value.getKey(), value.getValue(), "a finite number").message()
                            + columns.at(at, value.getKey()));
                }
            }
            JsonNode admission = tree.path("admission");
            boolean budgetGiven = admission.has("iops")
                    || admission.has("megabytesPerSecond")
                    || admission.has("capacityCostUnitsPerSecond");
            if (forOptions && !whileOffTold.isEmpty() && problems.equals(whileOffTold)) {
                return new ForOptions(config, failure(source, problems).getMessage(), budgetGiven);
            }
            if (problems.isEmpty()) {
                return new ForOptions(config, null, budgetGiven);
            }
        }
        throw failure(source, problems);
    }

    /** {@code SOURCE: problem}, or for several {@code SOURCE: N problems:} and one indented line each. */
    private static IllegalArgumentException failure(String source, List<String> problems) {
        return new IllegalArgumentException(Problem.report(source, problems));
    }

    /**
     * A whole number too large for its field's 32 bits, told with the field's own range when the config
     * checks one ({@code port: 99999999999 (expected: 0 to 65535)}): the config is bound once more with
     * the largest (or smallest) value that fits in its place, and its problem for the field, if any,
     * gives the range. Any other problem of shape as it is.
     */
    private static String ownRange(ConfigShape.Problem problem, JsonNode cleaned, Locations at) {
        String path = problem.paths().get(0);
        if (problem.probe() != null) {
            // A field written with no value: what the field takes, in its own check's words.
            String own = ownExpected(cleaned, path, problem.probe());
            return own == null ? problem.message() : new Problem(path, problem.value(), own).message();
        }
        String written = at.written(path);
        if (problem.paths().size() != 1
                || written == null
                || !problem.message().endsWith("(expected: " + ConfigShape.TOO_LARGE + ")")) {
            return problem.message();
        }
        IntNode extreme = IntNode.valueOf(written.startsWith("-") ? Integer.MIN_VALUE : Integer.MAX_VALUE);
        String own = ownExpected(cleaned, path, extreme);
        return own == null ? problem.message() : new Problem(path, written, own).message();
    }

    /**
     * What the config's own check of the field at {@code path} expects, learnt by binding the config once more
     * with {@code probe} in the field's place; {@code null} when that check has nothing to say of it.
     */
    private static String ownExpected(JsonNode cleaned, String path, JsonNode probe) {
        JsonNode copy = cleaned.deepCopy();
        if (!LenientTree.put(copy, path, probe)) {
            return null;
        }
        try {
            for (Problem own : YAML.treeToValue(copy, NbdConfig.class).problems()) {
                if (own.path().equals(path)) {
                    return own.expected();
                }
            }
        } catch (JacksonException | RuntimeException unbindable) {
            // The rest of the config cannot be bound: the plain words stand.
        }
        return null;
    }

    /** Whether {@code problem} is an export's backend count, which {@link #backendProblems} says. */
    private static boolean backendProblem(Problem problem) {
        return problem.path().matches("exports\\[[0-9]+\\]")
                && ("two backends".equals(problem.value()) || "no backend".equals(problem.value()));
    }

    /**
     * Each export's backends as the file writes them, whatever is wrong with their values: {@code file} and
     * {@code upstream} both given is two backends, neither key is none. (A backend refused for its value, or
     * written with none, is said at its own field; the count is not told again.)
     */
    private static List<Problem> backendProblems(JsonNode written) {
        List<Problem> problems = new ArrayList<>();
        JsonNode exports = written.path("exports");
        for (int i = 0; exports.isArray() && i < exports.size(); i++) {
            JsonNode export = exports.get(i);
            if (!export.isObject()) {
                continue;
            }
            if (export.hasNonNull("file") && export.hasNonNull("upstream")) {
                problems.add(new Problem("exports[" + i + "]", "two backends", "exactly one of file or upstream"));
            } else if (!export.has("file") && !export.has("upstream")) {
                problems.add(new Problem("exports[" + i + "]", "no backend", "exactly one of file or upstream"));
            }
        }
        return problems;
    }

    /**
     * Where each field's key starts on its line, for a JSON document written on one line (as some tools write
     * it), where the line alone does not say which field; else none.
     */
    private record Columns(Map<String, Integer> byPath) {

        static final Columns NONE = new Columns(Map.of());

        static Columns of(ObjectMapper reader, String text) {
            Map<String, Integer> columns = new java.util.HashMap<>();
            if (text.strip().indexOf('\n') >= 0) {
                return new Columns(columns);
            }
            try (JsonParser parser = reader.getFactory().createParser(text)) {
                for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
                    // A key, or an item of a list (where an item starts).
                    com.fasterxml.jackson.core.JsonStreamContext context = parser.getParsingContext();
                    if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                        context = context.getParent();
                    }
                    boolean item = token != JsonToken.END_OBJECT
                            && token != JsonToken.END_ARRAY
                            && context != null
                            && context.inArray();
                    if (token == JsonToken.FIELD_NAME || item) {
                        columns.putIfAbsent(
                                StrictReader.path(context),
                                parser.currentTokenLocation().getColumnNr());
                    }
                }
            } catch (IOException | RuntimeException e) {
                // Keep what was read: the reader reports the document's own error.
            }
            return new Columns(columns);
        }

        /** {@code " at line N"} of the field {@code path} (and {@code ", column C"} on one line), or {@code ""}. */
        String at(Locations at, String path) {
            int line = at.line(path);
            if (line <= 0) {
                return "";
            }
            for (String p = path;
                    !p.isEmpty();
                    p = p.substring(0, Math.max(0, Math.max(p.lastIndexOf('.'), p.lastIndexOf('['))))) {
                Integer column = byPath.get(p);
                if (column != null && column > 0) {
                    return " at line " + line + ", column " + column;
                }
            }
            return " at line " + line;
        }

        /** {@code " at line N"}, with the column on one line, of a key at {@code location}. */
        String at(com.fasterxml.jackson.core.JsonLocation location) {
            int line = location.getLineNr();
            return line <= 0 ? "" : " at line " + line + (byPath.isEmpty() ? "" : ", column " + location.getColumnNr());
        }
    }

    /**
     * A {@code .json} file that is not strict JSON: {@code SOURCE: not valid JSON at line L, column C: reason}
     * (a duplicate key, or a number too large, as {@link #notYaml} says them).
     */
    private static IllegalArgumentException notJson(String source, JacksonException e) {
        Problem problem = StrictReader.problem(e, type -> StrictReader.expected(type, true));
        if (problem != null) {
            return new IllegalArgumentException(source + ": " + problem.message() + StrictReader.atLine(e));
        }
        com.fasterxml.jackson.core.JsonLocation location = e.getLocation();
        String where = location == null || location.getLineNr() <= 0
                ? ""
                : " at line " + location.getLineNr()
                        + (location.getColumnNr() > 0 ? ", column " + location.getColumnNr() : "");
        return new IllegalArgumentException(source + ": not valid JSON" + where + ": " + StrictReader.reason(e, true));
    }

    private static IllegalArgumentException notYaml(String source, JacksonException e) {
        // A non-finite float (YAML's .nan and .inf, which Jackson's number parser does not take) or a key
        // written twice: a problem of its field, worded as every other.
        Problem problem = StrictReader.problem(e, StrictReader::expected);
        if (problem != null) {
            return new IllegalArgumentException(source + ": " + problem.message() + StrictReader.atLine(e));
        }
        return new IllegalArgumentException(
                source + ": not valid YAML or JSON" + StrictReader.where(e) + ": " + StrictReader.reason(e));
    }
}
