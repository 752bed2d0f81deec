package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads a {@link ControllerConfig} from YAML, checking it whole: every problem at once, by field. */
public final class ConfigFiles {

    /** {@link StrictReader#yaml()}: a boolean is written true or false, a number as a number. */
    private static final ObjectMapper YAML = StrictReader.yaml();

    private ConfigFiles() {}

    /**
     * @throws IllegalArgumentException naming the file and every problem
     */
    public static ControllerConfig read(Path file) {
        String text;
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(file + ": a directory (expected: a YAML file)");
        }
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(file + ": no such file (expected: a YAML file)");
        }
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read (" + e + ")");
        }
        return parse(text, file.toString());
    }

    /** @throws IllegalArgumentException naming {@code source} and every problem */
    public static ControllerConfig parse(String yaml, String source) {
        ControllerConfig config;
        try {
            config = yaml.isBlank() ? ControllerConfig.DEFAULTS : YAML.readValue(yaml, ControllerConfig.class);
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                return ControllerConfig.DEFAULTS; // only comments: the same as an empty file
            }
            throw new IllegalArgumentException(source + ": " + unreadable(e));
        }
        config = config == null ? ControllerConfig.DEFAULTS : config;
        List<String> problems = config.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(source + ": " + String.join("; ", problems));
        }
        return config;
    }

    /** Why Jackson could not read the file, with the field path and line ({@link StrictReader}). */
    private static String unreadable(JacksonException e) {
        if (e instanceof ValueInstantiationException v) {
            // A record's constructor failed, e.g. on a null list element ("namespaces: [~]").
            return StrictReader.path(v) + ": a value is missing (an empty list entry or ~?)" + StrictReader.atLine(e);
        }
        if (e instanceof MismatchedInputException m && !(e instanceof UnrecognizedPropertyException)) {
            return wrongKind(StrictReader.path(m), m.getTargetType()).message() + StrictReader.atLine(e);
        }
        String nonFinite = StrictReader.nonFiniteValue(e);
        if (nonFinite != null) {
            // YAML's .nan and .inf are valid YAML that Jackson's number parser does not take.
            String field = StrictReader.parserPath(e);
            return (field.isEmpty() ? "" : field + ": ") + "NaN or infinity" + StrictReader.atLine(e)
                    + " (expected: a finite number)";
        }
        Problem problem = StrictReader.problem(e, StrictReader::expected);
        if (problem != null) {
            return problem.message() + StrictReader.atLine(e);
        }
        if (e instanceof JsonMappingException m) {
            return StrictReader.path(m) + ": " + StrictReader.reason(e) + StrictReader.atLine(e);
        }
        return "not valid YAML" + StrictReader.where(e) + ": " + StrictReader.reason(e);
    }

    /** A value of the wrong kind for a field of {@code type}: what it is not, and what it takes. */
    private static Problem wrongKind(String path, Class<?> type) {
        if (type == null) {
            return new Problem(path, "a value of another kind", "what the field holds");
        }
        if (type == Double.class || type == double.class || type == Integer.class || type == Long.class) {
            return new Problem(path, "not a number", "a number, e.g. 30 or 0.5");
        }
        if (type == String.class) {
            return new Problem(path, "not text", "a string");
        }
        if (type == Boolean.class || type == boolean.class) {
            return new Problem(path, "not true or false", "true or false");
        }
        if (type.isEnum()) {
            return new Problem(path, "not one of them", StrictReader.expected(type));
        }
        if (List.class.isAssignableFrom(type)) {
            return new Problem(path, "not a list", "a list, e.g. [a, b]");
        }
        return new Problem(path, "not what this field holds", "a mapping of " + type.getSimpleName() + " fields");
    }
}
