package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Locations;
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
            throw new IllegalArgumentException(file + ": cannot read (" + IoErrors.reason(e) + ")");
        }
        return parse(text, file.toString());
    }

    /**
     * Parses and checks a whole config. A file Jackson cannot read is one problem ({@code SOURCE:
     * field: value as written (expected: ...) at line N}); a file read whole is checked whole: {@code
     * SOURCE: problem at line N} for one, else {@code SOURCE: N problems:} and one indented line each,
     * each value as written.
     *
     * @throws IllegalArgumentException naming {@code source} and every problem
     */
    public static ControllerConfig parse(String yaml, String source) {
        ControllerConfig config;
        try {
            config = yaml.isBlank() ? ControllerConfig.DEFAULTS : YAML.readValue(yaml, ControllerConfig.class);
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                return ControllerConfig.DEFAULTS; // only comments: the same as an empty file
            }
            throw new IllegalArgumentException(source + ": " + unreadable(e, Locations.of(YAML, yaml)));
        }
        config = config == null ? ControllerConfig.DEFAULTS : config;
        List<Problem> problems = config.problems();
        if (!problems.isEmpty()) {
            // SOURCE: N problems: and one indented line each, at its line, its value as written (-5, not -5.0).
            throw new IllegalArgumentException(Locations.of(YAML, yaml).report(source, problems));
        }
        return config;
    }

    /**
     * Why Jackson could not read the file, in the words of every reader ({@link StrictReader#problem}):
     * the field path, the value as written, what the field takes, and the field's own line.
     */
    private static String unreadable(JacksonException e, Locations at) {
        if (e instanceof ValueInstantiationException v) {
            // A record's constructor failed, e.g. on a null list element ("namespaces: [~]").
            return StrictReader.path(v) + ": a value is missing (an empty list entry or ~?)" + at.atLine(e);
        }
        Problem problem = at.problem(e, ConfigFiles::expected);
        if (problem != null) {
            return problem.message() + at.atLine(e);
        }
        if (e instanceof JsonMappingException m && !StrictReader.yamlSyntaxError(e)) {
            return StrictReader.path(m) + ": " + StrictReader.reason(e) + at.atLine(e);
        }
        return "not valid YAML" + at.where(e) + ": " + StrictReader.reason(e);
    }

    /** What a field of {@code type} takes, in words. */
    private static String expected(Class<?> type) {
        if (type == null) {
            return "what the field holds";
        }
        if (type == Double.class || type == double.class || type == Integer.class || type == Long.class) {
            return "a number, e.g. 30 or 0.5";
        }
        if (type == String.class || type == Boolean.class || type == boolean.class || type.isEnum()) {
            return StrictReader.expected(type);
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list, e.g. [a, b]";
        }
        return "a mapping of " + type.getSimpleName() + " fields";
    }
}
