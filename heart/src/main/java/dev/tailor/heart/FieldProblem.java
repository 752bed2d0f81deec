package dev.tailor.heart;

import dev.tailor.common.Numbers;
import java.util.List;

/**
 * One thing wrong with a snapshot or a state, as a triple: where (a field path such as
 * {@code replicas[3].cpuCores}, the path a JSON reader gives the same field), the value found, and
 * what was expected. The value is the field's own number when the number is what is wrong (so that
 * a reader that has the file can show it as written, {@code -4} rather than {@code -4.0}); otherwise
 * a short description such as {@code "w9" is not a node of this snapshot} or {@code missing}.
 *
 * <p>Heart reads no files; a file reader words these with the line and the text of the file.
 *
 * @param path     the field path; never null
 * @param value    the value found (a {@link Number}, or a description); may be null for a null entry
 * @param expected what the field takes, in words
 */
public record FieldProblem(String path, Object value, String expected) {

    /**
     * {@code path: value (expected: expected)}, e.g. {@code nodes[0].cpuCores: -4 (expected: cores in (0, 1e6], or
     * absent)}; a real value as {@link Numbers#written} writes it ({@code -4}, {@code 1e308}, {@code NaN}).
     */
    public String message() {
        Object shown = value instanceof Double || value instanceof Float
                ? Numbers.written(((Number) value).doubleValue())
                : value;
        return path + ": " + shown + " (expected: " + expected + ")";
    }

    @Override
    public String toString() {
        return message();
    }

    /** The {@link #message()} of each problem, in order. */
    public static List<String> messages(List<FieldProblem> problems) {
        return problems.stream().map(FieldProblem::message).toList();
    }
}
