package dev.tailor.datasets;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A careful reader of the simple comma-separated files of the datasets: a header line, then one
 * record per line, no quoting. Columns are found by header name, never by position. Every problem
 * becomes a {@link DataFileException} naming the file, the line, the column and the value.
 *
 * <p>Blank lines are skipped; a UTF-8 byte-order mark before the header is ignored; fields are
 * trimmed. A double quote anywhere is refused (quoted fields are not part of these formats).
 */
final class CsvReader implements Closeable {

    /** A decimal number as the datasets write it: no hex, no type suffix, no thousands separator. */
    private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?");

    private static final Pattern INTEGER = Pattern.compile("[+-]?\\d{1,18}");

    private final Path file;
    private final BufferedReader in;
    private final List<String> header;
    private final Map<String, Integer> columns = new LinkedHashMap<>();
    private long lineNumber = 1;

    private CsvReader(Path file, BufferedReader in) throws IOException {
        this.file = file;
        this.in = in;
        String first = in.readLine();
        if (first == null) {
            throw DataFileException.badFile(file, "empty, no header line", "a header line of comma-separated names");
        }
        if (first.startsWith("\uFEFF")) {
            first = first.substring(1);
        }
        if (first.indexOf('"') >= 0) {
            throw DataFileException.badLine(
                    file, 1, "a double quote in the header", "plain comma-separated names, no quoting");
        }
        header = List.of(trimAll(first.split(",", -1)));
        for (int i = 0; i < header.size(); i++) {
            if (columns.putIfAbsent(header.get(i), i) != null) {
                throw DataFileException.badValue(
                        file, 1, header.get(i), header.get(i), "each column name once in the header");
            }
        }
    }

    /** Opens a plain-text UTF-8 file; a missing file is a {@link DataFileException}. */
    static CsvReader open(Path file) throws IOException {
        requireRegularFile(file, "a comma-separated text file");
        return new CsvReader(file, Files.newBufferedReader(file, StandardCharsets.UTF_8));
    }

    /** Reads {@code in} (already decoded, e.g. from a gzip stream) and names {@code file} in messages. */
    static CsvReader of(Path file, BufferedReader in) throws IOException {
        return new CsvReader(file, in);
    }

    /** Throws a {@link DataFileException} unless {@code file} is an existing regular file. */
    static void requireRegularFile(Path file, String expected) {
        if (!Files.isRegularFile(file)) {
            throw DataFileException.badFile(file, Files.exists(file) ? "not a regular file" : "no such file", expected);
        }
    }

    Path file() {
        return file;
    }

    /** Index of the column named {@code name}; a missing column names {@code expected} (what it holds). */
    int column(String name, String expected) {
        Integer index = columns.get(name);
        if (index == null) {
            throw DataFileException.missingColumn(file, name, expected + "; the header has " + header);
        }
        return index;
    }

    /** The next record, or {@code null} at the end of the file. */
    Row next() throws IOException {
        while (true) {
            String line = in.readLine();
            if (line == null) {
                return null;
            }
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            if (line.indexOf('"') >= 0) {
                throw DataFileException.badLine(
                        file, lineNumber, "a double quote", "plain comma-separated values, no quoting");
            }
            String[] fields = trimAll(line.split(",", -1));
            if (fields.length != header.size()) {
                throw DataFileException.badLine(
                        file,
                        lineNumber,
                        fields.length + " fields",
                        header.size() + " fields, one per header column " + header);
            }
            return new Row(lineNumber, fields);
        }
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    private static String[] trimAll(String[] fields) {
        for (int i = 0; i < fields.length; i++) {
            fields[i] = fields[i].strip();
        }
        return fields;
    }

    /** One record; accessors take column indices from {@link #column} and explain bad values. */
    final class Row {

        private final long line;
        private final String[] fields;

        private Row(long line, String[] fields) {
            this.line = line;
            this.fields = fields;
        }

        long line() {
            return line;
        }

        String text(int column) {
            return fields[column];
        }

        /** A non-empty text value. */
        String nonEmpty(int column, String expected) {
            String value = fields[column];
            if (value.isEmpty()) {
                throw bad(column, expected);
            }
            return value;
        }

        /** A finite number. */
        double number(int column, String expected) {
            String value = fields[column];
            if (!DECIMAL.matcher(value).matches()) {
                throw bad(column, expected);
            }
            return Double.parseDouble(value);
        }

        /** A whole number. */
        long integer(int column, String expected) {
            String value = fields[column];
            if (!INTEGER.matcher(value).matches()) {
                throw bad(column, expected);
            }
            return Long.parseLong(value);
        }

        /**
         * A measurement that is {@code >= 0}, or {@code null} for "no data": NaN, ±Inf (any spelling
         * Python, pandas or Java writes) or an empty cell. Never turns "no data" into zero.
         */
        Double measurement(int column, String expected) {
            String value = fields[column];
            if (isNoData(value)) {
                return null;
            }
            if (!DECIMAL.matcher(value).matches()) {
                throw bad(column, expected + ", or NaN for no data");
            }
            double d = Double.parseDouble(value);
            if (d < 0) {
                throw bad(column, expected + " (>= 0), or NaN for no data");
            }
            return d;
        }

        DataFileException bad(int column, String expected) {
            return DataFileException.badValue(file, line, header.get(column), fields[column], expected);
        }
    }

    static boolean isNoData(String value) {
        if (value.isEmpty()) {
            return true;
        }
        String v = value.toLowerCase(Locale.ROOT);
        if (v.startsWith("+") || v.startsWith("-")) {
            v = v.substring(1);
        }
        return v.equals("nan") || v.equals("inf") || v.equals("infinity");
    }
}
