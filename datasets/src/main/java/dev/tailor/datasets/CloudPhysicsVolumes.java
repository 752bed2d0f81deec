package dev.tailor.datasets;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Request volume per virtual disk of production VMs in 30-minute windows, read from a CSV in the
 * format of {@code shared/data/block_io/cloudphysics_106vm_features/per_vm_30min_timeseries.csv}
 * (PROVENANCE.md 1.1): columns {@code workload}, {@code window_index}, {@code ts_us},
 * {@code block_req_count}, {@code io_request_size_sum} found by header name (others ignored).
 *
 * <p>Used for the <em>spread</em> of tenant rates, not their timing (30 minutes is far coarser than
 * a 10 ms admission interval): {@link Volume#meanRequestsPerSecond()} is the requests of all
 * windows over the span from the first window's start to the last window's end (idle windows may be
 * missing from the file and count as idle), and {@link Volume#peakToMean()} the busiest window's
 * count over the mean window count.
 *
 * <p>Errors: a missing column, a bad or negative value, or a window index or timestamp that goes
 * backwards within a workload is a {@link DataFileException} naming file, line, column and value.
 */
public final class CloudPhysicsVolumes {

    /** Window length of the dataset, in seconds. */
    public static final double WINDOW_SECONDS = 1_800;

    /**
     * One VM's virtual disk.
     *
     * @param workload              VM id, e.g. {@code w01}
     * @param windows               windows present in the file
     * @param requests              block requests over all windows
     * @param bytes                 bytes over all windows
     * @param meanRequestsPerSecond requests / (span of the windows in seconds)
     * @param peakToMean            busiest window's requests / mean requests per window over the span
     */
    public record Volume(
            String workload, int windows, long requests, long bytes, double meanRequestsPerSecond, double peakToMean) {}

    private final Path file;
    private final List<Volume> volumes;

    private CloudPhysicsVolumes(Path file, List<Volume> volumes) {
        this.file = file;
        this.volumes = Collections.unmodifiableList(volumes);
    }

    /** Reads {@code file}; volumes come out in the order of their first row. */
    public static CloudPhysicsVolumes read(Path file) throws IOException {
        final class Acc {
            int windows;
            long requests;
            long bytes;
            long peak;
            long firstIndex = -1;
            long lastIndex = -1;
            long lastTs = -1;
        }
        Map<String, Acc> byWorkload = new LinkedHashMap<>();
        try (CsvReader csv = CsvReader.open(file)) {
            int workload = csv.column("workload", "the VM id");
            int index = csv.column("window_index", "the 30-minute window number");
            int ts = csv.column("ts_us", "the window's time in µs");
            int count = csv.column("block_req_count", "block requests in the window");
            int size = csv.column("io_request_size_sum", "bytes in the window");
            for (CsvReader.Row row = csv.next(); row != null; row = csv.next()) {
                Acc acc = byWorkload.computeIfAbsent(row.nonEmpty(workload, "a VM id"), w -> new Acc());
                long window = row.integer(index, "a whole window number");
                long micros = row.integer(ts, "a whole number of µs");
                long requests = row.integer(count, "a whole number of requests");
                long bytes = row.integer(size, "a whole number of bytes");
                if (window < 0 || window <= acc.lastIndex) {
                    throw row.bad(
                            index,
                            "window numbers >= 0, increasing within a workload (previous " + acc.lastIndex + ")");
                }
                if (micros < acc.lastTs) {
                    throw row.bad(ts, "times not going backwards within a workload (previous " + acc.lastTs + ")");
                }
                if (requests < 0) {
                    throw row.bad(count, "a count >= 0");
                }
                if (bytes < 0) {
                    throw row.bad(size, "a byte count >= 0");
                }
                if (acc.firstIndex < 0) {
                    acc.firstIndex = window;
                }
                acc.lastIndex = window;
                acc.lastTs = micros;
                acc.windows++;
                acc.requests += requests;
                acc.bytes += bytes;
                acc.peak = Math.max(acc.peak, requests);
            }
        }
        if (byWorkload.isEmpty()) {
            throw DataFileException.badFile(file, "no rows", "one row per (workload, window)");
        }
        List<Volume> volumes = new ArrayList<>();
        byWorkload.forEach((name, acc) -> {
            long span = acc.lastIndex - acc.firstIndex + 1;
            double meanPerWindow = acc.requests / (double) span;
            volumes.add(new Volume(
                    name,
                    acc.windows,
                    acc.requests,
                    acc.bytes,
                    acc.requests / (span * WINDOW_SECONDS),
                    meanPerWindow == 0 ? 0 : acc.peak / meanPerWindow));
        });
        return new CloudPhysicsVolumes(file, volumes);
    }

    public Path file() {
        return file;
    }

    /** The volumes, in file order. */
    public List<Volume> volumes() {
        return volumes;
    }

    /** The volumes with requests, busiest (by mean rate) first. */
    public List<Volume> byRateDescending() {
        List<Volume> sorted = new ArrayList<>(volumes);
        sorted.removeIf(v -> v.requests() == 0);
        sorted.sort(Comparator.comparingDouble(Volume::meanRequestsPerSecond)
                .reversed()
                .thenComparing(Volume::workload));
        return sorted;
    }
}
