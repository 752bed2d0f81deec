package dev.tailor.heart.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** Reads a {@link ControllerConfig} from YAML, checking it whole: every problem at once, by field. */
public final class ConfigFiles {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private ConfigFiles() {
    }

    /**
     * @throws IllegalArgumentException naming the file and every problem
     */
    public static ControllerConfig read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read (" + e.getMessage() + ")");
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
        } catch (JsonMappingException e) {
            throw new IllegalArgumentException(source + ": " + path(e) + ": " + e.getOriginalMessage());
        } catch (JsonProcessingException e) {
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
