package dev.tailor.nbd;

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

/**
 * Reads an {@link NbdConfig} from YAML (JSON is YAML too), checking it whole: every problem at once, by
 * field. Relative file paths of exports are resolved against the config file's directory.
 */
public final class NbdConfigFiles {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

    private NbdConfigFiles() {
    }

    /** @throws IllegalArgumentException naming the file and every problem */
    public static NbdConfig read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + ": cannot read (" + e.getMessage() + ")");
        }
        Path directory = file.toAbsolutePath().getParent();
        return parse(text, file.toString(), directory);
    }

    /**
     * @param directory what relative export file paths are relative to
     * @throws IllegalArgumentException naming {@code source} and every problem
     */
    public static NbdConfig parse(String yaml, String source, Path directory) {
        NbdConfig config;
        try {
            config = yaml.isBlank() ? null : YAML.readValue(yaml, NbdConfig.class);
        } catch (UnrecognizedPropertyException e) {
            throw new IllegalArgumentException(source + ": " + path(e) + ": unknown field (expected one of "
                    + e.getKnownPropertyIds().stream().map(Object::toString).sorted().collect(Collectors.joining(", "))
                    + ")");
        } catch (JsonMappingException e) {
            if (e.getCause() instanceof JsonProcessingException syntax && !(syntax instanceof JsonMappingException)) {
                throw notYaml(source, syntax);
            }
            String message = e.getCause() instanceof IllegalArgumentException cause ? cause.getMessage()
                    : e.getOriginalMessage();
            throw new IllegalArgumentException(source + ": " + path(e) + ": " + message);
        } catch (JsonProcessingException e) {
            throw notYaml(source, e);
        }
        if (config == null) {
            throw new IllegalArgumentException(source + ": empty (expected: at least an exports list)");
        }
        config = new NbdConfig(config.address(), config.port(), config.limits(), config.eventLoopThreads(),
                config.fileIoThreads(), config.exports().stream()
                        .map(e -> e == null ? null : e.resolvedAgainst(directory)).toList());
        List<String> problems = config.problems();
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(source + ": " + String.join("; ", problems));
        }
        return config;
    }

    private static IllegalArgumentException notYaml(String source, JsonProcessingException e) {
        return new IllegalArgumentException(source + ": not valid YAML or JSON"
                + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr()) + ": "
                + e.getOriginalMessage().lines().findFirst().orElse(""));
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
