package dev.tailor.datasets;

import java.nio.file.Path;

/**
 * A dataset file that cannot be read as its format says: missing, a missing column, a row of the
 * wrong width, or a value that is not what the column holds. The message names the file, the line
 * (1-based, the header is line 1), the column, the value and what was expected, e.g.
 * {@code .../frontend-579b9bff58-svcgr_metric.csv line 17, column CpuUsage(m): "abc" (expected: a number)}.
 *
 * <p>Unchecked, a kind of {@link IllegalArgumentException}: the input is wrong, not the program.
 * Failures of the file system itself stay {@link java.io.IOException}s.
 */
public final class DataFileException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long line;
    private final String column;
    private final String value;

    private DataFileException(Path file, long line, String column, String value, String message) {
        super(message);
        this.file = file;
        this.line = line;
        this.column = column;
        this.value = value;
    }

    /** A value of one cell: {@code file line N, column C: "value" (expected: ...)}. */
    public static DataFileException badValue(Path file, long line, String column, String value, String expected) {
        return new DataFileException(
                file,
                line,
                column,
                value,
                file + " line " + line + ", column " + column + ": " + quote(value) + " (expected: " + expected + ")");
    }

    /** A problem of a whole line: {@code file line N: problem (expected: ...)}. */
    public static DataFileException badLine(Path file, long line, String problem, String expected) {
        return new DataFileException(
                file, line, null, null, file + " line " + line + ": " + problem + " (expected: " + expected + ")");
    }

    /** A column the header lacks: {@code file line 1, column C: missing from the header (expected: ...)}. */
    public static DataFileException missingColumn(Path file, String column, String expected) {
        return new DataFileException(
                file,
                1,
                column,
                null,
                file + " line 1, column " + column + ": missing from the header (expected: " + expected + ")");
    }

    /** A problem of the file as a whole: missing, empty, not gzip. */
    public static DataFileException badFile(Path file, String problem, String expected) {
        return new DataFileException(file, 0, null, null, file + ": " + problem + " (expected: " + expected + ")");
    }

    /** The file the problem is in. */
    public Path file() {
        return file;
    }

    /** 1-based line number (the header is line 1), or 0 when the problem is the whole file. */
    public long line() {
        return line;
    }

    /** The column's header name, or {@code null} when the problem is not one cell. */
    public String column() {
        return column;
    }

    /** The offending cell as read, or {@code null}. */
    public String value() {
        return value;
    }

    private static String quote(String s) {
        return s == null ? "null" : "\"" + s + "\"";
    }
}
