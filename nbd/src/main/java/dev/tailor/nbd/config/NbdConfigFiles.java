package dev.tailor.nbd.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads an {@link NbdConfig} from YAML (JSON is YAML too), or from strict JSON when the file's name ends in
 * {@code .json} (a trailing comma or a comment is a syntax error there, with its line and column), checking
 * it whole: every problem at once, by
 * field, in the user's words (unknown fields with the valid ones, values with what the field takes), each
 * at its line. Relative file paths of exports, and the metrics file, are resolved against the config
 * file's directory; a config read from a file also has its exports' files looked at (a directory, a file
 * missing with no size to create it with, a folder missing), in the same list.
 */
public final class NbdConfigFiles {

    /** {@link StrictReader#yaml()}: JSON is YAML too. */
    private static final ObjectMapper YAML = StrictReader.yaml();

    /** {@link StrictReader#json()}: for a file named {@code .json}, read as the JSON it says it is. */
    private static final ObjectMapper JSON = StrictReader.json();

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
     * @param config      the config, checked as {@link #read(Path)} checks it but for one problem
     * @param depthWhileOff the one problem left out: a {@code fairDispatch.depth} while the file's door is
     *                    off, which the command line may settle ({@code --fair-dispatch on}); the message
     *                    {@link #read(Path)} would have thrown (the file, the field, its line), or {@code null}
     * @param budgetGiven whether the file gives admission a budget ({@code admission.iops},
     *                    {@code megabytesPerSecond} or {@code capacityCostUnitsPerSecond}); without one, the
     *                    default budget applies
     */
    public record ForOptions(NbdConfig config, String depthWhileOff, boolean budgetGiven) {}

    /**
     * {@link #read(Path)}, leaving out the problem of a {@code fairDispatch.depth} while the file's door is
     * off, for the command line to settle or refuse; it is left out only when the file has no other problem.
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
        boolean json =
                file.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".json");
        return parse(text, file.toString(), directory, true, forOptions, json);
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
        JsonNode tree;
        try {
            tree = yaml.isBlank() ? null : reader.readTree(yaml);
        } catch (JacksonException e) {
            throw json ? notJson(source, e) : notYaml(source, e);
        }
        if (tree == null || tree.isMissingNode() || tree.isNull()) {
            throw new IllegalArgumentException(source + ": empty (expected: at least an exports list)");
        }
        List<ConfigShape.Problem> shapeProblems = ConfigShape.check(tree, NbdConfig.class);
        Locations at = Locations.of(reader, yaml);
        JsonNode cleaned = tree;
        List<String> problems = new ArrayList<>(shapeProblems.stream()
                .map(p -> ownRange(p, cleaned, at) + atLine(at, p.paths().get(0)))
                .toList());
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
                    config.unix() == null || config.unix().isEmpty()
                            ? config.unix()
                            : directory.resolve(config.unix()).toString(),
                    config.tls().resolvedAgainst(directory),
                    config.fairDispatch());
            List<String> reported =
                    shapeProblems.stream().flatMap(p -> p.paths().stream()).toList();
            List<Problem> whileOff = config.fairDispatch().depthWhileOff(config.admission());
            String depthWhileOff = null;
            for (Problem problem : config.problems()) {
                // A field removed for its shape may now look missing, and its record incomplete: said once.
                String field = problem.path();
                if (reported.stream().noneMatch(r -> related(r, field))) {
                    problems.add(problem.message() + atLine(at, field));
                    if (whileOff.contains(problem)) {
                        depthWhileOff = problems.get(problems.size() - 1);
                    }
                }
            }
            for (int i = 0; files && i < config.exports().size(); i++) {
                ExportConfig export = config.exports().get(i);
                if (export == null) {
                    continue;
                }
                for (Problem problem : export.fileProblems("exports[" + i + "]")) {
                    String field = problem.path();
                    if (reported.stream().noneMatch(r -> related(r, field))) {
                        problems.add(problem.message() + atLine(at, field));
                    }
                }
            }
            JsonNode admission = tree.path("admission");
            boolean budgetGiven = admission.has("iops")
                    || admission.has("megabytesPerSecond")
                    || admission.has("capacityCostUnitsPerSecond");
            if (forOptions && depthWhileOff != null && problems.equals(List.of(depthWhileOff))) {
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

    /** Whether one field path is the other or contains it ({@code exports[0]} and {@code exports[0].size}). */
    private static boolean related(String a, String b) {
        String shorter = a.length() <= b.length() ? a : b;
        String longer = a.length() <= b.length() ? b : a;
        return longer.startsWith(shorter)
                && (longer.length() == shorter.length()
                        || longer.charAt(shorter.length()) == '.'
                        || longer.charAt(shorter.length()) == '[');
    }

    /**
     * A whole number too large for its field's 32 bits, told with the field's own range when the config
     * checks one ({@code port: 99999999999 (expected: 0 to 65535)}): the config is bound once more with
     * the largest (or smallest) value that fits in its place, and its problem for the field, if any,
     * gives the range. Any other problem of shape as it is.
     */
    private static String ownRange(ConfigShape.Problem problem, JsonNode cleaned, Locations at) {
        String path = problem.paths().get(0);
        String written = at.written(path);
        if (problem.paths().size() != 1
                || written == null
                || !problem.message().endsWith("(expected: " + ConfigShape.TOO_LARGE + ")")) {
            return problem.message();
        }
        JsonNode copy = cleaned.deepCopy();
        IntNode extreme = IntNode.valueOf(written.startsWith("-") ? Integer.MIN_VALUE : Integer.MAX_VALUE);
        if (!set(copy, path, extreme)) {
            return problem.message();
        }
        try {
            for (Problem own : YAML.treeToValue(copy, NbdConfig.class).problems()) {
                if (own.path().equals(path)) {
                    return new Problem(path, written, own.expected()).message();
                }
            }
        } catch (JacksonException | RuntimeException unbindable) {
            // The rest of the config cannot be bound: the plain words stand.
        }
        return problem.message();
    }

    /** Puts {@code value} at {@code path} ({@code limits.maxConnections}, {@code exports[0].port}) in {@code tree}. */
    private static boolean set(JsonNode tree, String path, JsonNode value) {
        String[] parts = path.split("\\.|(?=\\[)");
        JsonNode node = tree;
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i];
            boolean last = i == parts.length - 1;
            if (part.startsWith("[") && part.endsWith("]") && node instanceof ArrayNode array) {
                int index = Integer.parseInt(part.substring(1, part.length() - 1));
                if (index >= array.size()) {
                    return false;
                }
                if (last) {
                    array.set(index, value);
                    return true;
                }
                node = array.get(index);
            } else if (node instanceof ObjectNode object) {
                if (last) {
                    object.set(part, value);
                    return true;
                }
                node = object.get(part);
            } else {
                return false;
            }
        }
        return false;
    }

    /** {@code " at line N"} of the field {@code path} in the file, or {@code ""} when not known. */
    private static String atLine(Locations at, String path) {
        int line = at.line(path);
        return line > 0 ? " at line " + line : "";
    }

    /**
     * A {@code .json} file that is not strict JSON: {@code SOURCE: not valid JSON at line L, column C: reason}
     * (a duplicate key, or a number too large, as {@link #notYaml} says them).
     */
    private static IllegalArgumentException notJson(String source, JacksonException e) {
        Problem problem = StrictReader.problem(e, StrictReader::expected);
        if (problem != null) {
            return new IllegalArgumentException(source + ": " + problem.message() + StrictReader.atLine(e));
        }
        com.fasterxml.jackson.core.JsonLocation location = e.getLocation();
        String where = location == null || location.getLineNr() <= 0
                ? ""
                : " at line " + location.getLineNr()
                        + (location.getColumnNr() > 0 ? ", column " + location.getColumnNr() : "");
        return new IllegalArgumentException(source + ": not valid JSON" + where + ": " + StrictReader.reason(e));
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
