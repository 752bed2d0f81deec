package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import dev.tailor.common.IoErrors;
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
import java.util.function.Function;

/**
 * Reads a {@link ControllerConfig} from YAML, or from strict JSON when the file's name ends in {@code .json} (a
 * trailing comma or a comment is a syntax error there), checking it whole: every problem at once, by field, as
 * the scenario files and the NBD config are read, in the words of the file's format (a JSON file's take an
 * object, an array, true or false; a YAML file's a mapping, a list, and YAML's booleans too); no problem hides
 * another.
 */
public final class ConfigFiles {

    /**
     * {@link StrictReader#yaml()}: a boolean is written unquoted ({@link StrictReader#BOOLEAN}), a number as a
     * number.
     */
    private static final ObjectMapper YAML = StrictReader.yaml();

    /** As {@link #YAML}, reading on past a key written twice, which is told with the file's other problems. */
    private static final ObjectMapper LINES =
            StrictReader.yaml().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** {@link StrictReader#json()}: for a file named {@code .json}, read as the JSON it says it is. */
    private static final ObjectMapper JSON = StrictReader.json();

    /** As {@link #JSON}, reading on past a key written twice, as {@link #LINES}. */
    private static final ObjectMapper JSON_LINES =
            StrictReader.json().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private ConfigFiles() {}

    /**
     * @throws IllegalArgumentException naming the file and every problem
     */
    public static ControllerConfig read(Path file) {
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
            throw new IllegalArgumentException(file + ": cannot read (" + IoErrors.reason(e) + ")");
        }
        return parse(text, file.toString(), StrictReader.isJsonFile(file));
    }

    /**
     * Parses and checks a whole config, telling every problem at once, one line each in the order of their
     * lines ({@code SOURCE: problem at line N} for one, else {@code SOURCE: N problems:} and one indented line
     * each, each value as written): a key written twice (the first value is the one checked), YAML's {@code
     * .nan} or {@code .inf}, an unknown field, a value of the wrong type, and every range problem of the rest.
     * Only a file that cannot be parsed at all (a YAML syntax error, a second document) stops at its first
     * error.
     *
     * <p>A file a strict read takes is bound as it always was. Any other is read leniently ({@link LenientTree})
     * and bound again and again, each field Jackson refuses told and taken out, until the rest binds; the
     * config's own checks then run on the rest, the problems of a field taken out (or of what holds it) left
     * out, as they would only repeat it.
     *
     * @throws IllegalArgumentException naming {@code source} and every problem
     */
    public static ControllerConfig parse(String yaml, String source) {
        return parse(yaml, source, false);
    }

    /**
     * {@link #parse(String, String)}, with {@code json} parsed as strict JSON and its problems told in JSON's
     * words (an object, an array, true or false), not as YAML.
     */
    static ControllerConfig parse(String yaml, String source, boolean json) {
        if (yaml.isBlank()) {
            return ControllerConfig.DEFAULTS;
        }
        ObjectMapper reader = json ? JSON : YAML;
        ObjectMapper lines = json ? JSON_LINES : LINES;
        Function<Class<?>, String> expected = type -> expected(type, json);
        Locations at = Locations.of(lines, yaml);
        List<String> messages = new ArrayList<>();
        Set<String> takenOut = new HashSet<>();
        Map<String, String> nonFinite = Map.of();
        ControllerConfig config;
        try {
            config = reader.readValue(yaml, ControllerConfig.class);
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                return ControllerConfig.DEFAULTS; // only comments: the same as an empty file
            }
            LenientTree lenient = LenientTree.read(lines, yaml);
            if (lenient == null || lenient.tree() == null || !lenient.tree().isObject()) {
                JacksonException syntax = LenientTree.syntaxError(lines, yaml);
                throw new IllegalArgumentException(
                        source + ": " + unreadable(syntax != null ? syntax : e, at, expected, json));
            }
            for (LenientTree.Duplicate duplicate : lenient.duplicates()) {
                messages.add(
                        duplicate.problem(atLine(duplicate.first().getLineNr())).message()
                                + atLine(duplicate.at().getLineNr()));
            }
            nonFinite = lenient.nonFinite();
            config = bind(reader, lenient.tree(), source, at, expected, json, nonFinite, messages, takenOut);
        }
        config = config == null ? ControllerConfig.DEFAULTS : config;
        for (Problem problem : LenientTree.problems(config.problems(), nonFinite, takenOut)) {
            // Its value as written: -5, not -5.0; .nan, not NaN.
            messages.add(at.message(problem));
        }
        if (!messages.isEmpty()) {
            throw new IllegalArgumentException(Problem.report(source, messages));
        }
        return config;
    }

    /**
     * {@code tree} bound as a config, each field Jackson refuses told in {@code messages} and taken out of the
     * tree (an item of a list left as null, so that the others keep their index); a field of the wrong type is
     * added to {@code takenOut}, an unknown one is not (taking it out changes nothing else).
     */
    private static ControllerConfig bind(
            ObjectMapper reader,
            JsonNode tree,
            String source,
            Locations at,
            Function<Class<?>, String> expected,
            boolean json,
            Map<String, String> nonFinite,
            List<String> messages,
            Set<String> takenOut) {
        Set<String> removed = new HashSet<>();
        while (true) {
            try {
                return reader.treeToValue(tree, ControllerConfig.class);
            } catch (JsonMappingException e) {
                String path;
                Problem problem = e instanceof ValueInstantiationException ? null : at.problem(e, expected);
                if (problem == null) {
                    path = StrictReader.path(e);
                    messages.add(unreadable(e, at, expected, json));
                } else {
                    path = problem.path();
                    if (nonFinite.containsKey(path)) {
                        problem = new Problem(path, nonFinite.get(path), problem.expected());
                    }
                    messages.add(problem.message() + at.atLine(e));
                }
                if (!removed.add(path) || Problem.TOP_LEVEL.equals(path) || !LenientTree.put(tree, path, null)) {
                    // Nothing left to take out (the document as a whole, or a value refused twice).
                    throw new IllegalArgumentException(Problem.report(source, messages));
                }
                if (problem == null || !Problem.UNKNOWN_FIELD.equals(problem.value())) {
                    takenOut.add(path);
                }
            } catch (JacksonException | IllegalArgumentException e) {
                messages.add(Problem.TOP_LEVEL + ": " + e.getMessage());
                throw new IllegalArgumentException(Problem.report(source, messages));
            }
        }
    }

    private static String atLine(int line) {
        return line > 0 ? " at line " + line : "";
    }

    /**
     * Why Jackson could not read the file, in the words of every reader ({@link StrictReader#problem}):
     * the field path, the value as written, what the field takes ({@code expected}), and the field's own line;
     * in JSON's words when {@code json}.
     */
    private static String unreadable(
            JacksonException e, Locations at, Function<Class<?>, String> expected, boolean json) {
        if (e instanceof ValueInstantiationException v) {
            // A record's constructor failed, e.g. on a null list element ("namespaces: [~]").
            return StrictReader.path(v) + ": a value is missing ("
                    + (json ? "a null array entry?" : "an empty list entry or ~?") + ")" + at.atLine(e);
        }
        Problem problem = at.problem(e, expected);
        if (problem != null) {
            return problem.message() + at.atLine(e);
        }
        if (e instanceof JsonMappingException m && !StrictReader.yamlSyntaxError(e)) {
            return StrictReader.path(m) + ": " + StrictReader.reason(e, json) + at.atLine(e);
        }
        return "not valid " + (json ? "JSON" : "YAML") + at.where(e) + ": " + StrictReader.reason(e, json);
    }

    /**
     * What a field of {@code type} takes, in words: in a JSON file's when {@code json} (an object, an array, true
     * or false), else in YAML's (a mapping, a list, and YAML's booleans too).
     */
    private static String expected(Class<?> type, boolean json) {
        if (type == null) {
            return "what the field holds";
        }
        if (type == Double.class || type == double.class || type == Integer.class || type == Long.class) {
            return "a number, e.g. 30 or 0.5";
        }
        if (type == String.class || type == Boolean.class || type == boolean.class || type.isEnum()) {
            return StrictReader.expected(type, json);
        }
        if (List.class.isAssignableFrom(type)) {
            return json ? "an array, e.g. [\"a\", \"b\"]" : "a list, e.g. [a, b]";
        }
        return (json ? "an object of " : "a mapping of ") + type.getSimpleName() + " fields";
    }
}
