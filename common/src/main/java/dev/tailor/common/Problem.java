package dev.tailor.common;

import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One thing wrong with an input, as every error message of the project states it: where (a field
 * path such as {@code tenants[2].rate}, an option such as {@code --nodes}, or {@link #TOP_LEVEL}), the
 * value found (as the user wrote it, or what was found instead, such as {@code "unknown field"}), and
 * what was expected. {@link #message()} is the one line users read:
 * {@code tenants[2].rate: -1 (expected: a number > 0)}.
 *
 * @param path     where the value is; never null
 * @param value    the value as found, or a short description of what was found; may be null. A real
 *                 value (a {@code double}, or a list of them) reads as a user writes it
 *                 ({@link Numbers#written}): {@code 0}, not {@code 0.0}; {@code NaN} for NaN
 * @param expected what the field takes, in words ({@code "a whole number"}, {@code "one of a, b"})
 */
public record Problem(String path, Object value, String expected) {

    /** The path of a problem with the document as a whole. */
    public static final String TOP_LEVEL = "(top level)";

    public Problem {
        path = path == null || path.isEmpty() ? TOP_LEVEL : path;
    }

    /** The value of a field the document's type does not have; its expectation lists the fields. */
    public static final String UNKNOWN_FIELD = "unknown field";

    /**
     * {@code path: value (expected: expected)}; an unknown field reads {@code path: unknown field
     * (expected one of a, b)}, as the project's messages always have.
     */
    public String message() {
        return path + ": " + shown(value) + (UNKNOWN_FIELD.equals(value) ? " (expected " : " (expected: ") + expected
                + ")";
    }

    /** {@code value} as a message shows it: a real number as written, a list item by item, else as is. */
    private static Object shown(Object value) {
        if (value instanceof Double d) {
            return Numbers.written(d);
        }
        if (value instanceof List<?> list) {
            return "["
                    + String.join(
                            ", ",
                            list.stream().map(v -> String.valueOf(shown(v))).toList()) + "]";
        }
        return value;
    }

    /**
     * Whether one field path is the other or contains it ({@code exports[0]} and {@code exports[0].size}, not
     * {@code exports[0].sizeBytes}): a problem of one may be the consequence of the other's.
     */
    public static boolean related(String a, String b) {
        String shorter = a.length() <= b.length() ? a : b;
        String longer = a.length() <= b.length() ? b : a;
        return longer.startsWith(shorter)
                && (longer.length() == shorter.length()
                        || longer.charAt(shorter.length()) == '.'
                        || longer.charAt(shorter.length()) == '[');
    }

    @Override
    public String toString() {
        return message();
    }

    /** The messages of {@code problems} on one line, separated by {@code "; "}. */
    public static String join(List<Problem> problems) {
        return String.join("; ", problems.stream().map(Problem::message).toList());
    }

    /**
     * The messages of several problems: {@code SOURCE: problem} for one, else {@code SOURCE: N problems:}
     * and one indented line each, the layout every config reader reports with. Messages that end
     * {@code at line N} are listed in the order of their lines, after those without a line (problems
     * with the document as a whole), so a reader fixes the file from the top down; messages on the same
     * line, and those without one, keep the order they were found in.
     */
    public static String report(String source, List<String> messages) {
        List<String> inLineOrder = messages.stream()
                .sorted(Comparator.comparingLong(Problem::lineOf))
                .toList();
        return source + ": "
                + (inLineOrder.size() == 1
                        ? inLineOrder.get(0)
                        : inLineOrder.size() + " problems:\n  " + String.join("\n  ", inLineOrder));
    }

    private static final Pattern AT_LINE = Pattern.compile(" at line (\\d{1,9})$");

    /** The line a message ends with ({@code ... at line 12}), 0 when it names none. */
    private static long lineOf(String message) {
        Matcher at = AT_LINE.matcher(message);
        return at.find() ? Long.parseLong(at.group(1)) : 0;
    }
}
