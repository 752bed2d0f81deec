package dev.tailor.sim;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.LenientTree;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads a scenario file, cluster or storage, and tells every problem it has at once, one line each in the
 * order of their lines: a key written twice (the first value is the one checked), YAML's {@code .nan} or
 * {@code .inf}, an unknown field, a value of the wrong type (a text where a number belongs, a list where a
 * mapping does), and every range or reference problem of the rest. No problem hides another; only a file
 * that cannot be parsed at all (a YAML syntax error, a second document) stops at its first error.
 *
 * <p>A file a strict read ({@link StrictReader#yaml()}) takes is bound as it always was. Any other is read
 * leniently ({@link LenientTree}) and bound again and again, each field Jackson refuses told and taken out,
 * until the rest binds; the scenario's own checks then run on the rest, the problems of a field taken out
 * (or of what holds it) left out, as they would only repeat it.
 *
 * <p>A file named {@code .json} is read as strict JSON ({@link StrictReader#json()}), and its problems told in
 * JSON's words: an array, an object, each key once per object.
 */
public final class ScenarioFiles {

    private static final ObjectMapper YAML = StrictReader.yaml();

    /** As {@link #YAML}, reading on past a key written twice, which is told with the file's other problems. */
    private static final ObjectMapper LINES =
            StrictReader.yaml().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** {@link StrictReader#json()}: for a file named {@code .json}, read as the JSON it says it is. */
    private static final ObjectMapper JSON = StrictReader.json();

    /** As {@link #JSON}, reading on past a key written twice, as {@link #LINES}. */
    private static final ObjectMapper JSON_LINES =
            StrictReader.json().copy().disable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private ScenarioFiles() {}

    /**
     * A scenario file read and checked.
     *
     * @param scenario  the scenario, with no problem
     * @param locations where its fields are in the text
     */
    public record Read<T>(T scenario, Locations locations) {}

    /**
     * {@code text} read as a {@code type} and checked with {@code check}.
     *
     * @param source   names the file in the message
     * @param expected what a field of a Java type takes, in words
     * @param check    the scenario's range and reference problems, by field path
     * @throws ScenarioException naming {@code source} and every problem, each with its field, value as written,
     *                           what was expected and its line; for a file that cannot be parsed, its syntax error
     */
    public static <T> Read<T> read(
            String text,
            String source,
            Class<T> type,
            Function<Class<?>, String> expected,
            Function<T, List<Problem>> check) {
        return read(text, source, type, expected, check, false);
    }

    /**
     * {@link #read(String, String, Class, Function, Function)}, with {@code json} parsed as strict JSON (a trailing
     * comma or a comment is a syntax error), not as YAML, and its problems told in JSON's words (an array, an
     * object, each key once per object): {@code expected} then gives JSON's words too.
     */
    public static <T> Read<T> read(
            String text,
            String source,
            Class<T> type,
            Function<Class<?>, String> expected,
            Function<T, List<Problem>> check,
            boolean json) {
        ObjectMapper reader = json ? JSON : YAML;
        ObjectMapper lines = json ? JSON_LINES : LINES;
        Locations locations = Locations.of(lines, text);
        List<String> messages = new ArrayList<>();
        Set<String> takenOut = new HashSet<>();
        Map<String, String> nonFinite = Map.of();
        T scenario;
        try {
            scenario = reader.readValue(text, type);
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                throw empty(source);
            }
            LenientTree lenient = LenientTree.read(lines, text);
            if (lenient == null || lenient.tree() == null || !lenient.tree().isObject()) {
                JacksonException syntax = LenientTree.syntaxError(lines, text);
                throw ScenarioException.unreadable(source, locations, syntax != null ? syntax : e, expected, json);
            }
            for (LenientTree.Duplicate duplicate : lenient.duplicates()) {
                messages.add(
                        duplicate.problem(atLine(duplicate.first().getLineNr())).message()
                                + atLine(duplicate.at().getLineNr()));
            }
            nonFinite = lenient.nonFinite();
            scenario = bind(
                    reader, lenient.tree(), type, source, locations, expected, json, nonFinite, messages, takenOut);
        }
        if (scenario == null) {
            throw empty(source);
        }
        for (Problem problem : LenientTree.problems(check.apply(scenario), nonFinite, takenOut)) {
            messages.add(locations.message(problem));
        }
        if (!messages.isEmpty()) {
            throw new ScenarioException(Problem.report(source, messages));
        }
        return new Read<>(scenario, locations);
    }

    /**
     * {@code tree} bound as a {@code type}, each field Jackson refuses told in {@code messages} and taken out of
     * the tree (an item of a list left as null, so that the others keep their index); a field of the wrong
     * type is added to {@code takenOut}, an unknown one is not (taking it out changes nothing else).
     */
    private static <T> T bind(
            ObjectMapper reader,
            JsonNode tree,
            Class<T> type,
            String source,
            Locations locations,
            Function<Class<?>, String> expected,
            boolean json,
            Map<String, String> nonFinite,
            List<String> messages,
            Set<String> takenOut) {
        Set<String> removed = new HashSet<>();
        while (true) {
            try {
                return reader.treeToValue(tree, type);
            } catch (JsonMappingException e) {
                Problem problem = locations.problem(e, expected);
                if (problem == null) {
                    messages.add(StrictReader.path(e) + ": " + StrictReader.reason(e, json) + locations.atLine(e));
                    throw new ScenarioException(Problem.report(source, messages));
                }
                String path = problem.path();
                if (nonFinite.containsKey(path)) {
                    problem = new Problem(path, nonFinite.get(path), problem.expected());
                }
                messages.add(locations.message(problem));
                if (!removed.add(path) || !remove(tree, path)) {
                    // Nothing left to take out (the document as a whole, or a value refused twice).
                    throw new ScenarioException(Problem.report(source, messages));
                }
                if (!Problem.UNKNOWN_FIELD.equals(problem.value())) {
                    takenOut.add(path);
                }
            } catch (JacksonException | IllegalArgumentException e) {
                messages.add(Problem.TOP_LEVEL + ": " + e.getMessage());
                throw new ScenarioException(Problem.report(source, messages));
            }
        }
    }

    /** Takes the field at {@code path} ({@code tenants[0].rate}) out of {@code tree}; whether it was there. */
    private static boolean remove(JsonNode tree, String path) {
        return !Problem.TOP_LEVEL.equals(path) && LenientTree.put(tree, path, null);
    }

    private static String atLine(int line) {
        return line > 0 ? " at line " + line : "";
    }

    private static ScenarioException empty(String source) {
        return new ScenarioException(source + ": empty (expected: a scenario)");
    }
}
