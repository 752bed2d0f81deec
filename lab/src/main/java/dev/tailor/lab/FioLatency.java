package dev.tailor.lab;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tailor.common.Checks;
import dev.tailor.sim.storage.LatencySummary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * fio's read latency as a histogram, from its {@code --output-format=json+} output: the bins of
 * {@code jobs[].read.lat_ns.bins} (latency in ns → requests), which fio keeps about 1.5 % wide
 * ({@code lat_percentiles=1}: submission + completion). Histograms of several jobs and runs are pooled
 * by adding their bins. A histogram without samples has no percentiles: {@link #percentileMicros}
 * returns NaN, "no data", never 0.
 *
 * <p>Percentiles are read as the experiments' scripts did: the smallest bin at or below which at least
 * p % of the samples lie ({@code need = total × p / 100}, the first bin whose running count reaches it).
 * Immutable.
 */
final class FioLatency {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Bin (latency, ns) → requests, ascending. */
    private final NavigableMap<Long, Long> bins;

    private final long samples;

    private FioLatency(NavigableMap<Long, Long> bins) {
        this.bins = Collections.unmodifiableNavigableMap(bins);
        this.samples = bins.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The histogram with no samples. */
    static final FioLatency EMPTY = new FioLatency(new TreeMap<>());

    /** A histogram of these bins (latency ns → requests); bins with 0 requests are dropped. */
    static FioLatency of(Map<Long, Long> binsNanos) {
        TreeMap<Long, Long> copy = new TreeMap<>();
        binsNanos.forEach((ns, count) -> {
            if (count < 0 || ns < 0) {
                throw new IllegalArgumentException("bin " + ns + " ns: " + count + " (expected: at least 0)");
            }
            if (count > 0) {
                copy.merge(ns, count, Long::sum);
            }
        });
        return new FioLatency(copy);
    }

    /** These histograms added bin by bin. */
    static FioLatency pool(Collection<FioLatency> histograms) {
        TreeMap<Long, Long> sum = new TreeMap<>();
        for (FioLatency h : histograms) {
            h.bins.forEach((ns, count) -> sum.merge(ns, count, Long::sum));
        }
        return new FioLatency(sum);
    }

    /** Requests in the histogram. */
    long samples() {
        return samples;
    }

    /** The bins, latency in ns → requests, ascending. */
    NavigableMap<Long, Long> binsNanos() {
        return bins;
    }

    /**
     * The p-th percentile in µs: the smallest bin with at least p % of the samples at or below it; NaN
     * when there are no samples.
     *
     * @param percent p, in (0, 100]
     */
    double percentileMicros(double percent) {
        Checks.requireAboveAtMost("percent", percent, 0, 100);
        double need = samples * percent / 100.0;
        long seen = 0;
        for (Map.Entry<Long, Long> bin : bins.entrySet()) {
            seen += bin.getValue();
            if (seen >= need) {
                return bin.getKey() / 1e3;
            }
        }
        return Double.NaN;
    }

    /**
     * Whether P{@code percent} has enough samples behind it to be reported: at least ceil(1 ÷ (1 − q)) of them
     * (1,000 for P99.9, 10,000 for P99.99), so that at least one lies at or beyond it, as the storage simulator
     * reports its percentiles ({@link dev.tailor.sim.storage.LatencySummary#needed}); below that, it is only the
     * slowest sample or near it. A histogram without samples has none to report either.
     */
    boolean resolvable(double percent) {
        return samples > 0 && samples >= LatencySummary.needed(percent);
    }

    /** The largest bin in µs; NaN when there are no samples. */
    double maxMicros() {
        return bins.isEmpty() ? Double.NaN : bins.lastKey() / 1e3;
    }

    /**
     * One fio run's jobs by name, in the file's order, from fio's JSON output. Text before the first
     * {@code '{'} (fio prints warnings there) is skipped.
     *
     * @throws IOException if the file cannot be read or is not fio's JSON (the message names the file)
     */
    static Map<String, Job> readJobs(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return parseJobs(text);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@link #readJobs} on text.
     *
     * @throws IllegalArgumentException if the text is not fio's JSON output with {@code jobs[].read}
     */
    static Map<String, Job> parseJobs(String text) {
        int start = text.indexOf('{');
        if (start < 0) {
            throw new IllegalArgumentException("no JSON object in fio's output");
        }
        JsonNode root;
        try {
            root = MAPPER.readTree(text.substring(start));
        } catch (JacksonException e) {
            throw new IllegalArgumentException("not fio's JSON output (" + e.getOriginalMessage() + ")", e);
        }
        JsonNode jobs = root.path("jobs");
        if (!jobs.isArray()) {
            throw new IllegalArgumentException("no \"jobs\" list in fio's JSON output");
        }
        double endEpochMillis =
                root.path("timestamp_ms").isNumber() ? root.path("timestamp_ms").asDouble() : Double.NaN;
        Map<String, Job> out = new LinkedHashMap<>();
        for (JsonNode job : jobs) {
            String name = job.path("jobname").asText(null);
            JsonNode read = job.path("read");
            if (name == null || !read.isObject()) {
                throw new IllegalArgumentException("a job without \"jobname\" or \"read\" in fio's JSON output");
            }
            Map<Long, Long> bins = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it =
                            read.path("lat_ns").path("bins").fields();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> bin = it.next();
                try {
                    bins.merge(Long.parseLong(bin.getKey()), bin.getValue().asLong(), Long::sum);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(
                            "job " + name + ": latency bin \"" + bin.getKey() + "\" (expected: a number of ns)", e);
                }
            }
            double iops = read.path("iops").isNumber() ? read.path("iops").asDouble() : Double.NaN;
            double runtimeMillis =
                    read.path("runtime").isNumber() ? read.path("runtime").asDouble() : Double.NaN;
            out.put(name, new Job(name, of(bins), iops, runtimeMillis, endEpochMillis));
        }
        return out;
    }

    /** The named jobs' histograms pooled; a {@link IllegalArgumentException} names a missing job. */
    static FioLatency pooled(Map<String, Job> jobs, List<String> names) {
        List<FioLatency> parts = new ArrayList<>();
        for (String name : names) {
            Job job = jobs.get(name);
            if (job == null) {
                throw new IllegalArgumentException("no fio job " + name + " (jobs: " + jobs.keySet() + ")");
            }
            parts.add(job.latency());
        }
        return pool(parts);
    }

    /**
     * One fio job's reads.
     *
     * @param name           fio's {@code jobname}
     * @param latency        its reads' latency histogram
     * @param iops           its reads per second over the measured time (fio's {@code read.iops}); NaN when absent
     * @param runtimeMillis  its reads' measured time, ms, warm-up excluded (fio's {@code read.runtime}); NaN when
     *                       absent
     * @param endEpochMillis when fio wrote the output, ms since the epoch (its {@code timestamp_ms}): just after
     *                       the jobs ended; NaN when absent
     */
    record Job(String name, FioLatency latency, double iops, double runtimeMillis, double endEpochMillis) {

        Job(String name, FioLatency latency, double iops) {
            this(name, latency, iops, Double.NaN, Double.NaN);
        }
    }
}
