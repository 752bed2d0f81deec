package dev.tailor.sim.storage;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.tailor.sim.YamlErrors;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Loads storage scenarios: a bundled one by name, or a YAML file. A file that parses is checked
 * whole and every range or reference problem is reported at once, naming the field; a syntax error,
 * a wrong type, a duplicate key or an unknown field is reported alone (the file cannot be read
 * further). Same rules as the cluster simulator's {@code Scenarios}.
 */
public final class StorageScenarios {

    /** The bundled scenarios. */
    public static final List<String> BUNDLED = List.of("burst-microbench", "deployed-like", "underload", "robustness");

    private static final String RESOURCES = "/dev/tailor/sim/scenarios/storage/";

    private static final ObjectMapper YAML = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private StorageScenarios() {
    }

    /**
     * A bundled scenario by name, else the YAML file at {@code nameOrPath}.
     *
     * @throws ScenarioException if it cannot be read or is invalid
     */
    public static StorageScenario load(String nameOrPath) {
        if (BUNDLED.contains(nameOrPath)) {
            String resource = RESOURCES + nameOrPath + ".yaml";
            try (InputStream in = StorageScenarios.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("bundled scenario missing from the jar: " + resource);
                }
                return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), nameOrPath);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read bundled scenario " + resource, e);
            }
        }
        Path file = Path.of(nameOrPath);
        if (Files.isDirectory(file)) {
            throw new ScenarioException(nameOrPath + ": is a directory (expected: a YAML scenario file)");
        }
        if (!Files.isRegularFile(file)) {
            throw new ScenarioException(nameOrPath + ": " + (Files.exists(file) ? "not a regular file"
                    : "no such bundled scenario or file") + " (expected: one of " + String.join(", ", BUNDLED)
                    + ", or a YAML scenario file)");
        }
        try {
            return parse(Files.readString(file), file.toString());
        } catch (MalformedInputException e) {
            throw new ScenarioException(file + ": not UTF-8 text (expected: a YAML scenario file)");
        } catch (IOException e) {
            throw new ScenarioException(file + ": cannot read (" + e.getMessage() + ")");
        }
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
        StorageScenario scenario;
        try {
            scenario = YAML.readValue(yaml, StorageScenario.class);
        } catch (UnrecognizedPropertyException e) {
            throw new ScenarioException(source + ": " + YamlErrors.path(e) + ": unknown field (expected one of "
                    + e.getKnownPropertyIds().stream().map(Object::toString).sorted().collect(Collectors.joining(", "))
                    + ")");
        } catch (InvalidFormatException e) {
            throw new ScenarioException(source + ": " + YamlErrors.path(e) + ": " + e.getValue() + " (expected: "
                    + YamlErrors.expected(e.getTargetType(), "one of its named values") + ")");
        } catch (MismatchedInputException e) {
            if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("No content to map")) {
                throw new ScenarioException(source + ": empty (expected: a scenario)");
            }
            throw new ScenarioException(source + ": " + YamlErrors.path(e) + ": wrong type (expected: "
                    + YamlErrors.expected(e.getTargetType(), "one of its named values") + ")");
        } catch (JacksonException e) {
            String nonFinite = YamlErrors.nonFinite(e);
            if (nonFinite != null) {
                throw new ScenarioException(source + ": " + nonFinite);
            }
            throw new ScenarioException(source + ": not valid YAML" + YamlErrors.where(e) + ": "
                    + e.getOriginalMessage());
        }
        if (scenario == null) {
            throw new ScenarioException(source + ": empty (expected: a scenario)");
        }
        List<String> problems = scenario.problems();
        if (!problems.isEmpty()) {
            throw new ScenarioException(source + ": " + problems.size() + " problem" + (problems.size() == 1 ? "" : "s")
                    + ":\n  " + String.join("\n  ", problems));
        }
        return scenario;
    }



    /** A scenario that cannot be read or is invalid; the message names the file and every problem. */
    public static final class ScenarioException extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        public ScenarioException(String message) {
            super(message);
        }
    }
}
