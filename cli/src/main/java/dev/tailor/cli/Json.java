package dev.tailor.cli;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.tailor.common.IoErrors;
import dev.tailor.common.Locations;
import dev.tailor.common.Problem;
import dev.tailor.common.StrictReader;
import dev.tailor.heart.FieldProblem;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.MalformedInputException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * JSON in and out for the CLI: one strict mapper ({@link StrictReader#json()}), errors that name the
 * file, the field path, the value as written, what was expected and the line ({@link Locations})
 * instead of a Jackson stack trace, and atomic writes.
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

    /**
     * A document read: its value, the name errors give it ({@code snapshot FILE}) and where its fields
     * are, so that problems found after reading (a range, a reference) are told at their line with
     * the value as written.
     */
    record Document<T>(T value, String source, Locations locations) {

        /**
         * {@code SOURCE: path: value as written (expected: ...) at line N} for one problem, else
         * {@code SOURCE: N problems:} and one indented line each.
         */
        String report(List<FieldProblem> problems) {
            return locations.report(
                    source,
                    problems.stream()
                            .map(p -> new Problem(p.path(), p.value(), p.expected()))
                            .toList());
        }
    }

    /**
     * Reads {@code file} as a {@code type} and checks it with {@code check}; a missing or malformed file, or one
     * with problems, is a {@link CliException} naming them all ({@link #read(String, Class, String, Function)}).
     */
    static <T> Document<T> read(Path file, Class<T> type, String what, Function<T, List<FieldProblem>> check) {
        String source = what + " " + file;
        if (Files.isDirectory(file)) {
            throw new CliException(source + ": is a directory (expected: a JSON file)");
        }
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new CliException(source + ": no such file");
        } catch (MalformedInputException e) {
            throw new CliException(source + ": not UTF-8 text (expected: a JSON file)", e);
        } catch (IOException e) {
            throw new CliException(source + ": cannot read (" + IoErrors.reason(e) + ")", e);
        }
        return read(text, type, source, check);
    }

    /** Reads {@code text} as a {@code type} ({@link #read(String, Class, String, Function)}, nothing more checked). */
    static <T> Document<T> read(String text, Class<T> type, String source) {
        return read(text, type, source, value -> List.of());
    }

    /**
     * Reads {@code text} as a {@code type} and checks it with {@code check}; {@code source} names it in error
     * messages, which read as every reader's of the project ({@link StrictReader#problem}): {@code SOURCE: field:
     * value as written (expected: ...) at line N}, the line of the field's own key. Every unknown field and every
     * problem {@code check} finds are told at once, in the order of their lines; a syntax error or a value of the
     * wrong type stops the read and is told alone.
     */
    static <T> Document<T> read(String text, Class<T> type, String source, Function<T, List<FieldProblem>> check) {
        Locations locations = Locations.of(MAPPER, text);
        StrictReader.UnknownFields unknown = new StrictReader.UnknownFields();
        T value;
        try {
            value = unknown.reader(MAPPER, type).readValue(text);
        } catch (JacksonException e) {
            if (StrictReader.empty(e)) {
                throw new CliException(source + ": empty (expected: a JSON object)", e);
            }
            throw new CliException(source + ": " + describe(e, locations), e);
        }
        if (value == null) {
            throw new CliException(source + ": null (expected: a JSON object)");
        }
        List<Problem> problems = new ArrayList<>(unknown.problems());
        for (FieldProblem p : check.apply(value)) {
            problems.add(new Problem(p.path(), p.value(), p.expected()));
        }
        if (!problems.isEmpty()) {
            throw new CliException(locations.report(source, problems));
        }
        return new Document<>(value, source, locations);
    }

    /**
     * A Jackson error in words: a field's problem as {@code field: value as written (expected: ...) at
     * line N}; a syntax error as {@code not valid JSON at line N, field F: reason}.
     */
    static String describe(JacksonException e, Locations locations) {
        Problem problem = locations.problem(e, Json::expected);
        if (problem != null) {
            return problem.message() + locations.atLine(e);
        }
        if (e instanceof ValueInstantiationException v) {
            // A record's constructor refused what it was given (e.g. a null where a list belongs).
            return new Problem(StrictReader.path(v), "cannot be read", "a JSON object with the documented fields")
                            .message()
                    + locations.atLine(e);
        }
        if (e instanceof JsonEOFException
                || e.getCause() instanceof JsonEOFException
                || String.valueOf(e.getOriginalMessage()).startsWith("Unexpected end-of-input")) {
            return "the file ends too early (expected: the rest of the JSON document)" + StrictReader.atLine(e);
        }
        if (e.getCause() instanceof StreamReadException syntax) {
            // A syntax error inside a record, which the binder wrapped with the record's path.
            return "not valid JSON" + StrictReader.where(syntax) + ": " + StrictReader.reason(syntax);
        }
        if (e instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()) {
            return StrictReader.path(mapping) + ": " + StrictReader.reason(e) + locations.atLine(e);
        }
        return "not valid JSON" + locations.where(e) + ": " + StrictReader.reason(e);
    }

    /** What a field of {@code type} takes, in JSON's words for booleans, lists and objects. */
    private static String expected(Class<?> type) {
        if (type == Boolean.class || type == boolean.class) {
            // JSON has no other booleans; YAML's unquoted yes, no, on and off are not JSON.
            return StrictReader.BOOLEAN_JSON;
        }
        if (type == null
                || type.isEnum()
                || type.isPrimitive()
                || Number.class.isAssignableFrom(type)
                || type == String.class) {
            return StrictReader.expected(type);
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "a JSON array";
        }
        if (Map.class.isAssignableFrom(type)) {
            return "a JSON object of names to values";
        }
        return "a JSON object";
    }

    /** What a file written by {@link #writeAtomically} must be, for the messages that refuse one. */
    private static final String EXPECTED_FILE = "expected: a file in an existing folder where files can be created";

    /**
     * Checks up front, before any work, that {@link #writeAtomically} can write {@code file}: the regular file it
     * names (or the file a link names) is in an existing folder, is not a folder itself, and a file can be created
     * next to it (a hidden one is created and removed); a device or FIFO is written through unchecked.
     *
     * @param option the option that named the file ({@code --out}), which the errors name
     * @throws CliException with exit code 2 naming the option, the file as given, the reason and what was expected
     */
    static void checkWritable(String option, Path file) {
        Path target = target(option, file);
        if (target == null) {
            return;
        }
        String unwritable = IoErrors.cannotCreateIn(target.getParent());
        if (unwritable != null) {
            throw new CliException(option + ": cannot write " + file + ": no file can be created in "
                    + target.getParent() + " (" + unwritable + "; " + EXPECTED_FILE + ")");
        }
    }

    /**
     * The regular file {@link #writeAtomically} creates or replaces for {@code file} (absolute; the file a link
     * names), or {@code null} when {@code file} exists and is not a regular file (a device, a FIFO: written
     * through, as a shell's {@code >} does).
     *
     * @throws CliException with exit code 2 when there can be no such file
     */
    private static Path target(String option, Path file) {
        if (file.toString().isEmpty()) {
            throw new CliException(option + ": empty (expected: a file name)");
        }
        Path target = file.toAbsolutePath();
        Path dir = target.getParent();
        if (Files.isDirectory(target)) {
            throw new CliException(option + ": cannot write " + file + ": is a directory (" + EXPECTED_FILE + ")");
        }
        if (Files.exists(target) && !Files.isRegularFile(target)) {
            // A device, a FIFO or a terminal (/dev/stdout, /dev/null): written through, as a shell's > does.
            // Renaming a file over it replaced the device itself, for root even /dev/null.
            return null;
        }
        if (Files.isSymbolicLink(target)) {
            // The file the link names is replaced (or created), not the link.
            try {
                for (int hops = 0; Files.isSymbolicLink(target) && hops < 40; hops++) {
                    target = target.resolveSibling(Files.readSymbolicLink(target))
                            .normalize();
                }
            } catch (IOException e) {
                throw new CliException(
                        option + ": cannot write " + file + ": " + IoErrors.reason(e) + " (" + EXPECTED_FILE + ")", e);
            }
            dir = target.getParent();
            if (dir == null || !Files.isDirectory(dir)) {
                throw new CliException(option + ": cannot write " + file + ": it links to " + target + " in a folder"
                        + " that does not exist (" + EXPECTED_FILE + ")");
            }
            return target;
        }
        requireFolder(option, file, dir);
        return target;
    }

    /** Refuses {@code dir}, the folder {@code file} goes in, when it is not an existing folder. */
    private static void requireFolder(String option, Path file, Path dir) {
        if (dir == null || !Files.isDirectory(dir)) {
            throw new CliException(option + ": cannot write " + file + ": "
                    + (dir != null && Files.exists(dir)
                            ? dir + " is a file, not a folder"
                            : "folder " + dir + " does not exist")
                    + " (" + EXPECTED_FILE + ")");
        }
    }

    /**
     * Checks up front, before any work, that a file can be put at {@code file} by creating one next to it and
     * renaming it there, and removed later (the process ID file of {@code nbd serve}): {@code file} is not empty,
     * not a folder, not a device, FIFO or socket (the rename would replace it, and the removal delete it), and a
     * file can be created in its folder (a hidden one is created and removed). A link is replaced, not followed.
     *
     * @param option the option that named the file ({@code --pid-file}), which the errors name
     * @throws CliException with exit code 2 naming the option, the file as given, the reason and what was expected
     */
    static void checkReplaceable(String option, Path file) {
        if (file.toString().isEmpty()) {
            throw new CliException(option + ": empty (expected: a file name)");
        }
        Path target = file.toAbsolutePath();
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            throw new CliException(option + ": cannot write " + file + ": is a directory (" + EXPECTED_FILE + ")");
        }
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)
                && !Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)
                && !Files.isSymbolicLink(target)) {
            throw new CliException(option + ": cannot write " + file + ": is a device, FIFO or socket, which the file"
                    + " would replace and then delete (" + EXPECTED_FILE + ")");
        }
        Path dir = target.getParent();
        requireFolder(option, file, dir);
        String unwritable = IoErrors.cannotCreateIn(dir);
        if (unwritable != null) {
            throw new CliException(option + ": cannot write " + file + ": no file can be created in " + dir + " ("
                    + unwritable + "; " + EXPECTED_FILE + ")");
        }
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
        Path target = target(option, file);
        if (target == null) {
            writeThrough(option, file, file.toAbsolutePath(), value);
            return;
        }
        Path dir = target.getParent();
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
            throw new CliException(
                    option + ": cannot write " + file + ": " + IoErrors.reason(e) + " (" + EXPECTED_FILE + ")", e);
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

    /** {@code value} written into {@code target}, a file that is not a regular one, as it is. */
    private static void writeThrough(String option, Path file, Path target, Object value) {
        try (OutputStream stream = Files.newOutputStream(target)) {
            MAPPER.writeValue(stream, value);
        } catch (IOException e) {
            throw new CliException(option + ": cannot write " + file + ": " + IoErrors.reason(e), 1, e);
        }
    }

    /**
     * {@code value} as indented JSON, its numbers rounded as a reader compares them ({@link #rounded}): what
     * {@code tailor demo --format json} prints.
     */
    static String writeRounded(Object value) {
        return write(rounded(MAPPER.valueToTree(value)));
    }

    /**
     * {@code tree} with every number rounded by one rule: a whole number without a point ({@code 6}, not
     * {@code 6.0}: counts stay counts); any other to three significant digits, its whole part kept
     * ({@code 1235}, {@code 239}, {@code 12.3}, {@code 1.23}, {@code 0.0123}), as the tables print figures
     * ({@link dev.tailor.common.Numbers#format}) without rounding a small one to zero. Changes {@code tree}.
     */
    static JsonNode rounded(JsonNode tree) {
        if (tree instanceof ObjectNode object) {
            for (Map.Entry<String, JsonNode> field : object.properties()) {
                field.setValue(rounded(field.getValue()));
            }
        } else if (tree instanceof ArrayNode array) {
            for (int i = 0; i < array.size(); i++) {
                array.set(i, rounded(array.get(i)));
            }
        } else if (tree != null && tree.isFloatingPointNumber()) {
            return roundedNumber(tree.doubleValue());
        }
        return tree;
    }

    /** {@code value} by {@link #rounded}'s rule; NaN and the infinities as they are. */
    static JsonNode roundedNumber(double value) {
        if (!Double.isFinite(value)) {
            return DoubleNode.valueOf(value);
        }
        double rounded = Math.abs(value) >= 1000
                ? Math.rint(value)
                : BigDecimal.valueOf(value)
                        .round(new MathContext(3, RoundingMode.HALF_UP))
                        .doubleValue();
        if (rounded == Math.rint(rounded) && Math.abs(rounded) < 1e15) {
            return LongNode.valueOf((long) rounded);
        }
        return DoubleNode.valueOf(rounded);
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
