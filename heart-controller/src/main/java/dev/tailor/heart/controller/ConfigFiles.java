package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** Reads a {@link ControllerConfig} from YAML, checking it whole: every problem at once, by field. */
public final class ConfigFiles {

    private static final ObjectMapper YAML = YAMLMapper.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            // A boolean is written true or false, a number as a number: "true", 1 and "30" are refused.
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .build();

    private ConfigFiles() {
    }

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
        } catch (UnrecognizedPropertyException e) {
            throw new IllegalArgumentException(source + ": " + path(e) + ": unknown field (expected one of "
                    + e.getKnownPropertyIds().stream().map(Object::toString).sorted().collect(Collectors.joining(", "))
                    + ")");
        } catch (com.fasterxml.jackson.databind.exc.MismatchedInputException e) {
            if (e.getPath().isEmpty() && e.getOriginalMessage().startsWith("No content")) {
                return ControllerConfig.DEFAULTS;   // only comments: the same as an empty file
            }
            throw new IllegalArgumentException(source + ": " + path(e) + ": " + expected(e.getTargetType()));
        } catch (com.fasterxml.jackson.databind.exc.ValueInstantiationException e) {
            // A record's constructor failed, e.g. on a null list element ("namespaces: [~]").
            throw new IllegalArgumentException(source + ": " + path(e) + ": a value is missing (an empty list entry"
                    + " or ~?)");
        } catch (JsonMappingException e) {
            if (notFinite(e)) {
                throw new IllegalArgumentException(source + ": " + path(e) + ": NaN or infinity"
                        + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr())
                        + " (expected: a finite number)");
            }
            throw new IllegalArgumentException(source + ": " + path(e) + ": " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
            if (notFinite(e)) {
                // YAML's .nan and .inf are valid YAML that Jackson's number parser does not take.
                throw new IllegalArgumentException(source + ": NaN or infinity"
                        + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr())
                        + " (expected: a finite number)");
            }
            throw new IllegalArgumentException(source + ": not valid YAML"
                    + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()) + ": "
                    + e.getOriginalMessage());
        }
        config = config == null ? ControllerConfig.DEFAULTS : config;
        List<String> problems = config.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(source + ": " + String.join("; ", problems));
        }
        return config;
    }

    /** Whether Jackson refused YAML's {@code .nan}, {@code .inf} or {@code -.Inf}: valid YAML, no number here. */
    private static boolean notFinite(JsonProcessingException e) {
        return e.getOriginalMessage() != null
                && e.getOriginalMessage().matches("(?s)Malformed numeric value '[-+]?\\.(?i:nan|inf)'.*");
    }

    /** What a field of {@code type} takes, in words. */
    private static String expected(Class<?> type) {
        if (type == null) {
            return "a value of another kind";
        }
        if (type == Double.class || type == double.class || type == Integer.class || type == Long.class) {
            return "not a number (expected: a number, e.g. 30 or 0.5)";
        }
        if (type == String.class) {
            return "not text (expected: a string)";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "not true or false (expected: true or false)";
        }
        if (type.isEnum()) {
            return "not one of " + java.util.Arrays.stream(type.getEnumConstants()).map(Object::toString)
                    .collect(Collectors.joining(", "));
        }
        if (List.class.isAssignableFrom(type)) {
            return "not a list (expected: a list, e.g. [a, b])";
        }
        return "not what this field holds (expected: a mapping of " + type.getSimpleName() + " fields)";
    }

    private static String path(JsonMappingException e) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getIndex() >= 0) {
                path.append('[').append(ref.getIndex()).append(']');
            } else if (ref.getFieldName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(ref.getFieldName());
            }
        }
        return path.length() == 0 ? "(top level)" : path.toString();
    }
}
