package dev.tailor.datasets;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One volume's block I/O trace: requests in arrival order, read from the formats of
 * {@code shared/data/block_io} (PROVENANCE.md 1.3–1.5). Any file of the same format works.
 *
 * <ul>
 *   <li>{@link Format#MSN_SECTORS} (MSN file server excerpt, 1.3): space-separated
 *       {@code time_ms disk_id offset size rw}, offset and size in 512-byte sectors, rw 1 = read;</li>
 *   <li>{@link Format#MSR_BYTES} (MSR Cambridge excerpts, 1.4): space-separated
 *       {@code time_ms dev offset_bytes size_bytes rw};</li>
 *   <li>{@link Format#TENCENT_REPLAY} (Tencent CBS replayed excerpt, 1.5): comma-separated
 *       {@code ts_ms,latency_us,io_type,size_bytes,offset_bytes,submit_ts_ms,size_bytes_replayed},
 *       io_type 1 = read; {@code latency_us} is the device latency measured in the replay, from
 *       {@code submit_ts_ms}, the replay's actual submission time.</li>
 * </ul>
 * No header in any of them. Requests are put in arrival order (a stable sort: the Tencent replay
 * has two lines stamped a second earlier than the batch around them; {@link #reordered()} counts
 * such lines) and times taken relative to the earliest, so a trace starts at 0 ns.
 *
 * <p>Errors: a missing file, a line with the wrong number of fields, a value that is not what its
 * column holds (a negative offset, a zero or negative size, rw other than 0/1, a negative time) is a
 * {@link DataFileException} naming file, line, column and value; failures of the file system are
 * {@link IOException}s. Immutable.
 */
public final class BlockTrace {

    /** Bytes per sector in the sector-addressed formats. */
    public static final int SECTOR_BYTES = 512;

    /** The trace formats, see the class comment. */
    public enum Format {
        MSN_SECTORS(" ", List.of("time_ms", "disk_id", "offset_sectors", "size_sectors", "rw")),
        MSR_BYTES(" ", List.of("time_ms", "dev", "offset_bytes", "size_bytes", "rw")),
        TENCENT_REPLAY(
                ",",
                List.of(
                        "ts_ms",
                        "latency_us",
                        "io_type",
                        "size_bytes",
                        "offset_bytes",
                        "submit_ts_ms",
                        "size_bytes_replayed"));

        private final Pattern separator;
        private final List<String> columns;

        Format(String separator, List<String> columns) {
            this.separator = Pattern.compile(separator.equals(" ") ? "\\s+" : separator);
            this.columns = columns;
        }

        /** The column names, as PROVENANCE.md gives them (the files have no header). */
        public List<String> columns() {
            return columns;
        }
    }

    /**
     * One request.
     *
     * @param arrivalNanos       arrival time since the trace's first request, ns
     * @param offsetBytes        byte offset on the volume
     * @param lengthBytes        request size in bytes, &gt; 0
     * @param write              true for a write
     * @param deviceLatencyNanos the latency recorded for it (Tencent replay only), ns, or -1 when the
     *                           trace records none
     * @param submitNanos        when the replay submitted it (Tencent replay only), ns since the
     *                           trace's first arrival, or -1
     */
    public record Request(
            long arrivalNanos,
            long offsetBytes,
            int lengthBytes,
            boolean write,
            long deviceLatencyNanos,
            long submitNanos) {

        /** A request of a trace that records no latency. */
        public Request(long arrivalNanos, long offsetBytes, int lengthBytes, boolean write) {
            this(arrivalNanos, offsetBytes, lengthBytes, write, -1, -1);
        }
    }

    private final Path file;
    private final Format format;
    private final List<Request> requests;
    private final int reordered;

    private BlockTrace(Path file, Format format, List<Request> requests, int reordered) {
        this.file = file;
        this.format = format;
        this.requests = Collections.unmodifiableList(requests);
        this.reordered = reordered;
    }

    /**
     * Reads {@code file} in {@code format}.
     *
     * @throws DataFileException when the file is missing, empty or not in the format
     */
    public static BlockTrace read(Path file, Format format) throws IOException {
        CsvReader.requireRegularFile(file, "a block I/O trace, " + format + " " + format.columns());
        List<Request> requests = new ArrayList<>();
        List<Double> arrivalMillis = new ArrayList<>();
        List<Double> submitMillis = new ArrayList<>();
        int reordered = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            long lineNumber = 0;
            double lastMillis = Double.NEGATIVE_INFINITY;
            String line;
            while ((line = in.readLine()) != null) {
                lineNumber++;
                String trimmed = line.strip();
                if (trimmed.isEmpty()) {
                    continue;
                }
                String[] fields = format.separator.split(trimmed, -1);
                if (fields.length != format.columns.size()) {
                    throw DataFileException.badLine(
                            file,
                            lineNumber,
                            fields.length + " fields",
                            format.columns.size() + " fields " + format.columns + " (" + format + ")");
                }
                Fields f = new Fields(file, lineNumber, format.columns, fields);
                double millis = f.millis(0);
                requests.add(
                        switch (format) {
                            case MSN_SECTORS ->
                                new Request(
                                        0,
                                        f.whole(2, 0) * SECTOR_BYTES,
                                        size(f, 3, f.whole(3, 1) * SECTOR_BYTES),
                                        f.readFlag(4) == 0);
                            case MSR_BYTES ->
                                new Request(0, f.whole(2, 0), size(f, 3, f.whole(3, 1)), f.readFlag(4) == 0);
                            case TENCENT_REPLAY ->
                                new Request(
                                        0,
                                        f.whole(4, 0),
                                        size(f, 3, f.whole(3, 1)),
                                        f.readFlag(2) == 0,
                                        Math.round(f.millis(1) * 1_000),
                                        0);
                        });
                arrivalMillis.add(millis);
                submitMillis.add(format == Format.TENCENT_REPLAY ? f.millis(5) : Double.NaN);
                if (millis < lastMillis) {
                    reordered++;
                } else {
                    lastMillis = millis;
                }
            }
        }
        if (requests.isEmpty()) {
            throw DataFileException.badFile(file, "no requests", "one request per line, " + format.columns());
        }
        Integer[] order = new Integer[requests.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, java.util.Comparator.comparingDouble(arrivalMillis::get)); // stable
        double firstMillis = arrivalMillis.get(order[0]);
        List<Request> sorted = new ArrayList<>(order.length);
        for (int i : order) {
            Request r = requests.get(i);
            double submitted = submitMillis.get(i);
            sorted.add(new Request(
                    Math.round((arrivalMillis.get(i) - firstMillis) * 1e6),
                    r.offsetBytes(),
                    r.lengthBytes(),
                    r.write(),
                    r.deviceLatencyNanos(),
                    Double.isNaN(submitted) ? -1 : Math.round((submitted - firstMillis) * 1e6)));
        }
        return new BlockTrace(file, format, sorted, reordered);
    }

    /**
     * A trace built in memory, e.g. a synthetic workload; {@code name} stands for the file in
     * messages.
     *
     * @param requests at least one, in arrival order, the first at 0 ns
     * @throws IllegalArgumentException when the list is empty, out of order or does not start at 0
     */
    public static BlockTrace of(String name, List<Request> requests) {
        if (requests.isEmpty() || requests.get(0).arrivalNanos() != 0) {
            throw new IllegalArgumentException(name + ": "
                    + (requests.isEmpty()
                            ? "no requests"
                            : "first arrival at " + requests.get(0).arrivalNanos() + " ns")
                    + " (expected: requests from 0 ns)");
        }
        for (int i = 1; i < requests.size(); i++) {
            if (requests.get(i).arrivalNanos() < requests.get(i - 1).arrivalNanos()) {
                throw new IllegalArgumentException(
                        name + ": request " + i + " arrives before the one before it" + " (expected: arrival order)");
            }
        }
        return new BlockTrace(Path.of(name), Format.MSR_BYTES, new ArrayList<>(requests), 0);
    }

    private static int size(Fields f, int column, long bytes) {
        if (bytes > Integer.MAX_VALUE) {
            throw f.bad(column, "a request size below 2 GiB");
        }
        return (int) bytes;
    }

    /** The file read. */
    public Path file() {
        return file;
    }

    public Format format() {
        return format;
    }

    /** Requests in arrival order; at least one. */
    public List<Request> requests() {
        return requests;
    }

    /** Lines stamped earlier than a line before them in the file (moved into arrival order). */
    public int reordered() {
        return reordered;
    }

    /** Arrival of the last request, ns since the first. */
    public long durationNanos() {
        return requests.get(requests.size() - 1).arrivalNanos();
    }

    /** Mean arrival rate over the trace, requests per second (0 for a single instant). */
    public double requestsPerSecond() {
        long nanos = durationNanos();
        return nanos == 0 ? 0 : (requests.size() - 1) / (nanos / 1e9);
    }

    /** The fields of one line, with checks that name the column. */
    private record Fields(Path file, long line, List<String> columns, String[] values) {

        private static final Pattern DECIMAL = Pattern.compile("\\d+(\\.\\d*)?|\\.\\d+");
        private static final Pattern WHOLE = Pattern.compile("\\d{1,18}");

        /** A non-negative decimal (a time in ms or a latency in µs). */
        double millis(int column) {
            if (!DECIMAL.matcher(values[column]).matches()) {
                throw bad(column, "a number >= 0");
            }
            return Double.parseDouble(values[column]);
        }

        /** A whole number >= {@code min}. */
        long whole(int column, long min) {
            if (!WHOLE.matcher(values[column]).matches() || Long.parseLong(values[column]) < min) {
                throw bad(column, "a whole number >= " + min);
            }
            return Long.parseLong(values[column]);
        }

        /** 1 = read, 0 = write. */
        int readFlag(int column) {
            return switch (values[column]) {
                case "1" -> 1;
                case "0" -> 0;
                default -> throw bad(column, "1 for a read or 0 for a write");
            };
        }

        DataFileException bad(int column, String expected) {
            return DataFileException.badValue(file, line, columns.get(column), values[column], expected);
        }
    }
}
