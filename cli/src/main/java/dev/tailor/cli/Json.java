package dev.tailor.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.stream.Collectors;

/**
 * JSON in and out for the CLI: one mapper configured once, and errors that name the file, the field
 * path and the position instead of a Jackson stack trace.
 */
final class Json {

    /**
     * Reads strictly: unknown fields are errors (a typo must not silently become "no data"), and
     * NaN / Infinity literals parse so the validator can name them.
     */
    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .build();

    private Json() {
    }

    /** Reads {@code file} as a {@code type}; a missing or malformed file is a {@link CliException}. */
    static <T> T read(Path file, Class<T> type, String what) {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, type, what + " " + file);
        } catch (NoSuchFileException e) {
            throw new CliException(what + " " + file + ": no such file");
        } catch (IOException e) {
            throw new CliException(what + " " + file + ": cannot read (" + e.getMessage() + ")", e);
        }
    }

    /** Reads {@code in} as a {@code type}; {@code source} names it in error messages. */
    static <T> T read(InputStream in, Class<T> type, String source) {
        try {
            T value = MAPPER.readValue(in, type);
            if (value == null) {
                throw new CliException(source + ": empty (expected: a JSON object)");
            }
            return value;
        } catch (JacksonException e) {
            throw new CliException(source + ": " + describe(e), e);
        } catch (IOException e) {
            throw new CliException(source + ": cannot read (" + e.getMessage() + ")", e);
        }
    }

    /** A one-line description of a Jackson error: field path, position, and what went wrong. */
    static String describe(JacksonException e) {
        StringBuilder out = new StringBuilder();
        if (e instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()) {
            String path = mapping.getPath().stream()
                    .map(ref -> ref.getFieldName() != null ? "." + ref.getFieldName() : "[" + ref.getIndex() + "]")
                    .collect(Collectors.joining());
            out.append(path.startsWith(".") ? path.substring(1) : path).append(": ");
        }
        if (e instanceof UnrecognizedPropertyException unknown) {
            out.append("unknown field \"").append(unknown.getPropertyName()).append("\" (expected one of ")
                    .append(unknown.getKnownPropertyIds()).append(')');
        } else {
            String message = e.getOriginalMessage();
            int cut = message.indexOf('\n');
            out.append(cut >= 0 ? message.substring(0, cut) : message);
        }
        JsonLocation location = e.getLocation();
        if (location != null && location.getLineNr() > 0) {
            out.append(" at line ").append(location.getLineNr()).append(", column ").append(location.getColumnNr());
        }
        return out.toString();
    }

    /** Writes {@code value} to {@code file} atomically: a reader never sees half a file. */
    static void writeAtomically(Path file, Object value) {
        Path dir = file.toAbsolutePath().getParent();
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
            try {
                MAPPER.writeValue(tmp.toFile(), value);
                try {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new CliException("cannot write " + file + " (" + e.getMessage() + ")", 1, e);
        }
    }

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }
}
