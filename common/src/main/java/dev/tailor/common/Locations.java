package dev.tailor.common;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Where each field of a JSON or YAML document is: the line of its key (of an item, where the item
 * starts) and a scalar's value as written ({@code -5}, not the {@code -5.0} it was read as), by field
 * path ({@code tenants[2].rate}, as {@link StrictReader#path} and the readers' {@link Problem}s name
 * them). A reader that checks ranges and references after binding words each {@link Problem} with
 * {@link #message}, so that it reads as the binding errors do: {@code path: value (expected: ...) at
 * line N}.
 *
 * <p>Built by reading the text's tokens once more (cheap next to binding); a document that stops
 * parsing part-way keeps the locations read so far.
 */
public final class Locations {

    private static final Locations NONE = new Locations(Map.of(), Map.of(), 0);

    private final Map<String, Integer> lines;
    private final Map<String, String> written;
    private final int stopped;

    private Locations(Map<String, Integer> lines, Map<String, String> written, int stopped) {
        this.lines = lines;
        this.written = written;
        this.stopped = stopped;
    }

    /** No locations known: {@link #message} is then {@link Problem#message()}. */
    public static Locations none() {
        return NONE;
    }

    /** The locations of {@code text}, read with {@code mapper}'s format (JSON or YAML). */
    public static Locations of(ObjectMapper mapper, String text) {
        Map<String, Integer> lines = new HashMap<>();
        Map<String, String> written = new HashMap<>();
        int stopped = 0;
        JsonParser parser = null;
        try {
            parser = mapper.getFactory().createParser(text);
            for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
                int line = parser.currentTokenLocation().getLineNr();
                if (token == JsonToken.FIELD_NAME) {
                    lines.putIfAbsent(StrictReader.path(parser.getParsingContext()), line);
                } else if (token.isScalarValue() || token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                    String path = StrictReader.path(parser.getParsingContext());
                    if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                        path = StrictReader.path(parser.getParsingContext().getParent());
                    }
                    lines.putIfAbsent(path, line);
                    if (token.isScalarValue()) {
                        written.putIfAbsent(path, parser.getText());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // Keep what was read: the binder reports the document's own error.
            stopped = parser == null ? 0 : Math.max(0, parser.currentLocation().getLineNr());
        } finally {
            closeQuietly(parser);
        }
        return new Locations(lines, written, stopped);
    }

    /**
     * The line of {@code path} (from 1): of its key, else of the nearest enclosing field or item that
     * is in the document (a missing field is told at its mapping); 0 when none is known.
     */
    public int line(String path) {
        for (String p = path; p != null && !p.isEmpty(); p = parent(p)) {
            Integer line = lines.get(p);
            if (line != null && line > 0) {
                return line;
            }
        }
        return 0;
    }

    /** The scalar at {@code path} as written in the document, or null when it has none. */
    public String written(String path) {
        return written.get(path);
    }

    /**
     * {@code problem} with its value as written when the value is the field's own scalar (a number or
     * a boolean, which reading reformats); any other value (a description, a quoted string) as is.
     */
    public Problem asWritten(Problem problem) {
        String text = written.get(problem.path());
        return text != null && (problem.value() instanceof Number || problem.value() instanceof Boolean)
                ? new Problem(problem.path(), text, problem.expected())
                : problem;
    }

    /**
     * {@code SOURCE: problem} for one, else {@code SOURCE: N problems:} and one indented line each
     * ({@link Problem#report}), each problem worded by {@link #message}.
     */
    public String report(String source, List<Problem> problems) {
        return Problem.report(source, problems.stream().map(this::message).toList());
    }

    /** {@code path: value as written (expected: ...) at line N}, the line left out when not known. */
    public String message(Problem problem) {
        int line = line(problem.path());
        return asWritten(problem).message() + (line > 0 ? " at line " + line : "");
    }

    /**
     * The line of a binding error: for a field's error, of the field's own key (Jackson reports an
     * unknown field of a record at the end of its mapping, where it stopped buffering the record's
     * fields); a primitive field left out, at the line of its enclosing mapping (of the document's
     * start at the top level); else where Jackson stopped, or where reading this document stopped. 0
     * when none is known.
     */
    public int line(JacksonException e) {
        // A key written twice: where the parser stopped is the second one; the binder's path is its mapping's.
        boolean duplicate =
                e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field");
        if (!duplicate
                && e instanceof JsonMappingException mapping
                && !mapping.getPath().isEmpty()) {
            String path = StrictReader.path(mapping);
            Integer line = lines.get(path);
            if (line != null && line > 0) {
                return line;
            }
            if (missing(e)) {
                // Told when its record was complete, at the record's end: the line of its mapping instead.
                int enclosing = line(path);
                Integer root = lines.get("");
                return enclosing > 0 ? enclosing : root != null && root > 0 ? root : StrictReader.line(e);
            }
        }
        int line = StrictReader.line(e);
        // A limit of Jackson's (a number too long, nesting too deep) has no location: where reading stopped.
        return line > 0 ? line : stopped;
    }

    /**
     * {@link StrictReader#where} for a syntax error, with the line where reading stopped when Jackson
     * does not tell one (a number too long, nesting too deep).
     */
    public String where(JacksonException e) {
        String where = StrictReader.where(e);
        return StrictReader.line(e) == 0 && stopped > 0
                ? " at line " + stopped + where.replace(" at field", ", field").replace(" after field", ", after field")
                : where;
    }

    /** Whether {@code e} is a primitive field without a value (left out, when its key is not in the document). */
    private static boolean missing(JacksonException e) {
        return e instanceof MismatchedInputException
                && String.valueOf(e.getOriginalMessage()).startsWith("Cannot map `null` into type");
    }

    /**
     * {@link StrictReader#problem} for a binding error, with what the document says where Jackson cannot
     * tell: a primitive field whose key is written with {@code null}, {@code ~} or nothing reads as that
     * value, not as {@link StrictReader#MISSING}. {@code null} for an error that is not a field's.
     */
    public Problem problem(JacksonException e, Function<Class<?>, String> expected) {
        Problem problem = StrictReader.problem(e, expected);
        if (problem != null && StrictReader.MISSING.equals(problem.value()) && lines.containsKey(problem.path())) {
            String text = written.get(problem.path());
            return new Problem(problem.path(), text == null || text.isBlank() ? "no value" : text, problem.expected());
        }
        return problem;
    }

    /** {@code " at line N"} for {@link #line(JacksonException)}, or {@code ""}. */
    public String atLine(JacksonException e) {
        int line = line(e);
        return line > 0 ? " at line " + line : "";
    }

    private static void closeQuietly(JsonParser parser) {
        if (parser != null) {
            try {
                parser.close();
            } catch (IOException ignored) {
                // Nothing was written: nothing to lose.
            }
        }
    }

    private static String parent(String path) {
        int cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
        return cut <= 0 ? null : path.substring(0, cut);
    }
}
