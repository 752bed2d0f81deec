package dev.tailor.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.tailor.common.StrictReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.Map;
import java.util.Set;

/**
 * JSON in and out for the CLI: one strict mapper, errors that name the file, the field path, the
 * position and what was expected instead of a Jackson stack trace, and atomic writes.
 */
final class Json {

    /**
     * Reads strictly: unknown fields, duplicate keys, and scalars of the wrong type ("30" for a
     * number, 1 for a boolean, 2.5 for a count) are errors, because a typo must not silently become
     * data. NaN and Infinity literals parse, so the validator can name them.
     */
    static final ObjectMapper MAPPER = StrictReader.json()
            .rebuild()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            // Paths as the user wrote them ("/tmp/x"), not as file:// URIs.
            .addModule(new SimpleModule().addSerializer(Path.class, ToStringSerializer.instance))
            .build();

    private Json() {}

    /** Reads {@code file} as a {@code type}; a missing or malformed file is a {@link CliException}. */
    static <T> T read(Path file, Class<T> type, String what) {
        if (Files.isDirectory(file)) {
            throw new CliException(what + " " + file + ": is a directory (expected: a JSON file)");
        }
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, type, what + " " + file);
        } catch (NoSuchFileException e) {
            throw new CliException(what + " " + file + ": no such file");
        } catch (IOException e) {
            throw new CliException(what + " " + file + ": cannot read (" + reason(e) + ")", e);
        }
    }

    /** Reads {@code in} as a {@code type}; {@code source} names it in error messages. */
    static <T> T read(InputStream in, Class<T> type, String source) {
        try {
            T value = MAPPER.readValue(in, type);
            if (value == null) {
                throw new CliException(source + ": null (expected: a JSON object)");
            }
            return value;
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                throw new CliException(source + ": empty (expected: a JSON object)", e);
            }
            throw new CliException(source + ": " + describe(e), e);
        } catch (IOException e) {
            throw new CliException(source + ": cannot read (" + reason(e) + ")", e);
        }
    }

    /** A one-line description of a Jackson error: field path, what went wrong, expected, position. */
    static String describe(JacksonException e) {
        StringBuilder out = new StringBuilder();
        String path = path(e);
        if (!path.isEmpty()) {
            out.append(path).append(": ");
        }
        if (e instanceof UnrecognizedPropertyException unknown) {
            out.append("unknown field \"")
                    .append(unknown.getPropertyName())
                    .append("\" (expected one of ")
                    .append(sorted(unknown.getKnownPropertyIds()))
                    .append(')');
        } else if (e instanceof ValueInstantiationException) {
            out.append("cannot be read (expected: a JSON object with the documented fields)");
        } else if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
            String message = StrictReader.reason(e);
            if (message.contains("Cannot map `null`") || message.contains("null into type")) {
                out.append("missing (expected: ")
                        .append(expected(mismatch.getTargetType()))
                        .append(')');
            } else {
                out.append("wrong type (expected: ")
                        .append(expected(mismatch.getTargetType()))
                        .append(')');
            }
        } else if (e instanceof JsonEOFException
                || e.getCause() instanceof JsonEOFException
                || String.valueOf(e.getOriginalMessage()).startsWith("Unexpected end-of-input")) {
            out.append("the file ends too early (expected: the rest of the JSON document)");
        } else {
            out.append(StrictReader.reason(e));
        }
        JsonLocation location = e.getLocation();
        if (location != null && location.getLineNr() > 0) {
            out.append(" at line ")
                    .append(location.getLineNr())
                    .append(", column ")
                    .append(location.getColumnNr());
        }
        return out.toString();
    }

    /** The field path, or "" for the document as a whole (the message then starts with what is wrong). */
    private static String path(JacksonException e) {
        return e instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()
                ? StrictReader.path(mapping)
                : "";
    }

    private static String expected(Class<?> type) {
        if (type == Double.class || type == double.class || type == Float.class || type == float.class) {
            return "a number";
        }
        if (type == Long.class || type == long.class || type == Integer.class || type == int.class) {
            return "a whole number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "a JSON array";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "a JSON object of names to values";
        }
        return "a JSON object";
    }

    private static String sorted(Collection<Object> names) {
        return names.stream().map(String::valueOf).sorted().toList().toString();
    }

    /** The operating system's reason for a file error, in words. */
    static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            return fs.getReason();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * Writes {@code value} to {@code file} atomically: a reader never sees half a file, and on
     * failure the old file is untouched. The folder must exist. A replaced file keeps its
     * permissions; a new one is readable by all and writable by its owner (0644).
     *
     * @param option the option that named the file ({@code --out}), which the errors name
     * @throws CliException with exit code 2 naming the option, the file and the system's reason
     */
    static void writeAtomically(String option, Path file, Object value) {
        Path target = file.toAbsolutePath();
        Path dir = target.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new CliException(option + ": cannot write " + file + ": folder " + dir + " does not exist"
                    + " (expected: a file in an existing folder)");
        }
        if (Files.isDirectory(target)) {
            throw new CliException(option + ": cannot write " + file + ": is a directory (expected: a file)");
        }
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
            MAPPER.writeValue(tmp.toFile(), value);
            Set<PosixFilePermission> permissions = Files.exists(target)
                    ? Files.getPosixFilePermissions(target)
                    : PosixFilePermissions.fromString("rw-r--r--");
            Files.setPosixFilePermissions(tmp, permissions);
            try {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (UnsupportedOperationException e) {
            throw new CliException(option + ": cannot write " + file + ": file permissions not supported here", e);
        } catch (IOException e) {
            throw new CliException(option + ": cannot write " + file + ": " + reason(e), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: the temporary file is hidden and named after the target
                }
            }
        }
    }

    /** {@code value} as indented JSON. */
    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }
}
