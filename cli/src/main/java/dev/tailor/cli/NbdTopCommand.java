package dev.tailor.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor nbd top}: a live view of a running server's {@code /metrics}, like {@code top} for storage
 * engineers. Every {@code --interval} it reads the endpoint and shows, from the difference with the previous
 * reading: per export the IOPS, throughput, latency percentiles, errors and slow requests; admission's decisions and
 * waits when it is on; per export the per-request loop tracing (unrelated work waited behind, own work); per loop
 * the health-check age and the dispatch-delay bound; and, since the start, the (export, segment) pairs with the most
 * slow requests, with where their time went (admission queue, backend) and their class when admitted. {@code --once}
 * prints one frame (two readings an interval apart) and exits, for scripts. docs/nbd.md, "Live view".
 */
@Command(
        name = "top",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "A live view of a running tailor nbd serve, from its metrics endpoint (--metrics-listen): IOPS, MiB/s and"
                    + " latency per export, admission's waits, per-request loop tracing, and the segments with the"
                    + " most slow requests (where their time went: admission queue or backend; their class when"
                    + " admitted). Rates and percentiles cover the last interval; the slow segments, the server's"
                    + " life. Ctrl-C ends it. docs/nbd.md, \"Live view\".",
            "",
        })
final class NbdTopCommand implements Callable<Integer> {

    private static final Pattern HOST_PORT = Pattern.compile("^(\\[[0-9a-fA-F:.]+]|[A-Za-z0-9.-]+):(\\d{1,5})$");
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);
    /** The bucket of the loop-tracing histograms that holds "waited behind nothing" (1 µs). */
    private static final double NO_WAIT_BOUND_SECONDS = 0.000001;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--metrics", paramLabel = "URL", required = true, description = "The server's metrics endpoint:"
            + " http://HOST:PORT/metrics, or HOST:PORT for that (what tailor nbd serve --metrics-listen prints).")
    String metrics;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2", description = "Seconds between"
            + " readings, 0.1 to 3600. Default: ${DEFAULT-VALUE}.")
    double intervalSeconds;

    @Option(names = "--once", description = "Print one frame (two readings an interval apart) and exit.")
    boolean once;

    @Option(names = "--top", paramLabel = "N", defaultValue = "10", description = "Slow segments shown, 1 to 100"
            + " (the server keeps 10). Default: ${DEFAULT-VALUE}.")
    int top;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        URI uri = uri(metrics);
        NbdExperimentCommand.check("--interval", intervalSeconds, 0.1, true, 3600, "0.1 to 3600 seconds");
        NbdExperimentCommand.check("--top", top, 1, 100, " segments");
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long intervalNanos = (long) (intervalSeconds * 1e9);
        Reading previous = read(client, uri, once);
        boolean terminal = !once && System.console() != null;
        while (true) {
            LockSupport.parkNanos(intervalNanos);
            if (Thread.currentThread().isInterrupted()) {
                return 0;
            }
            Reading current = read(client, uri, once);
            List<String> lines;
            if (current.text() != null && previous.text() == null) {
                lines = List.of("tailor nbd top · " + uri + " · " + CLOCK.format(Instant.now()), "",
                        "first reading taken; rates from the next one");
                previous = current;
            } else if (current.text() == null) {
                lines = List.of("tailor nbd top · " + uri + " · " + CLOCK.format(Instant.now()),
                        "", "no data: " + current.error() + "; trying again every "
                                + BurstExperiment.fmtPlain(intervalSeconds) + " s");
            } else {
                lines = frame(uri.toString(), previous.text(), current.text(),
                        (current.nanos() - previous.nanos()) / 1e9, Instant.now(), top);
                previous = current;
            }
            if (terminal) {
                out.print("\033[H\033[2J");
            }
            lines.forEach(out::println);
            if (!terminal && !once) {
                out.println();
            }
            out.flush();
            if (once) {
                return 0;
            }
        }
    }

    /** {@code --metrics}: a URL, or HOST:PORT for {@code http://HOST:PORT/metrics}. */
    static URI uri(String value) {
        String v = value == null ? "" : value.strip();
        if (HOST_PORT.matcher(v).matches()) {
            v = "http://" + v + "/metrics";
        }
        try {
            URI uri = new URI(v);
            if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // named below
        }
        throw new CliException("--metrics: \"" + value + "\" (expected: http://HOST:PORT/metrics or HOST:PORT, the"
                + " address tailor nbd serve --metrics-listen prints)");
    }

    /** One reading: the text (null when it failed, with why), and when it was taken. */
    record Reading(MetricsText text, String error, long nanos) {
    }

    /** Reads the endpoint; with {@code failHard}, a failure ends the command (exit 1) naming the URL. */
    static Reading read(HttpClient client, URI uri, boolean failHard) {
        String error;
        try {
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200) {
                return new Reading(MetricsText.parse(response.body()), null, System.nanoTime());
            }
            error = "HTTP " + response.statusCode();
        } catch (IOException e) {
            error = Json.reason(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "interrupted";
        }
        if (failHard) {
            throw new CliException("--metrics: cannot read " + uri + " (" + error + "; expected: the metrics endpoint"
                    + " of a running tailor nbd serve --metrics-listen)", 1, null);
        }
        return new Reading(null, error, System.nanoTime());
    }

    /**
     * One frame, from two readings {@code elapsedSeconds} apart (rates and percentiles over that interval) and the
     * later one alone (gauges, the slow segments since the start). Pure: the tests call it with texts of their own.
     */
    static List<String> frame(String source, MetricsText before, MetricsText now, double elapsedSeconds, Instant at,
            int top) {
        List<String> lines = new ArrayList<>();
        lines.add("tailor nbd top · " + source + " · " + CLOCK.format(at) + " · rates over the last "
                + String.format(Locale.ROOT, "%.1f", elapsedSeconds) + " s");
        lines.add("");
        List<String> exports = now.labelValues("tailor_nbd_requests_total", "export");
        List<List<String>> rows = new ArrayList<>();
        for (String e : exports) {
            MetricsText.Histogram latency = now.histogram("tailor_nbd_request_duration_seconds", "export", e)
                    .minus(before.histogram("tailor_nbd_request_duration_seconds", "export", e));
            rows.add(List.of(e, fmt(now.sum("tailor_nbd_export_connections", "export", e), 0),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e, "operation",
                            "read"), 1),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e, "operation",
                            "write"), 1),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e)
                            - rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e,
                                    "operation", "read")
                            - rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e,
                                    "operation", "write"), 1),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_request_bytes_total", "export", e, "operation",
                            "read") / (1 << 20), 2),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_request_bytes_total", "export", e, "operation",
                            "write") / (1 << 20), 2),
                    fmt(latency.quantile(0.5) * 1e3, 2), fmt(latency.quantile(0.99) * 1e3, 2),
                    fmt(zeroIfAbsent(rate(before, now, elapsedSeconds, "tailor_nbd_request_errors_total", "export",
                            e)), 1),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_slow_requests_total", "export", e), 1),
                    fmt(now.sum("tailor_nbd_requests_total", "export", e), 0)));
        }
        lines.addAll(new TextTable("Exports (per second; latency: header decoded to reply, over the interval):",
                List.of("export", "conn", "read/s", "write/s", "other/s", "MiB/s read", "MiB/s write", "P50 ms",
                        "P99 ms", "errors/s", "slow/s", "requests"), rows,
                exports.isEmpty() ? List.of("(no export has tailor_nbd_requests_total: is this tailor nbd serve's"
                        + " /metrics?)") : List.of()).lines());

        if (!Double.isNaN(now.sum("tailor_nbd_admission_admitted_total"))) {
            lines.add("");
            List<List<String>> admission = new ArrayList<>();
            for (String e : now.labelValues("tailor_nbd_admission_export_requests_total", "export")) {
                double requests = delta(before, now, "tailor_nbd_admission_export_requests_total", "export", e);
                double queued = delta(before, now, "tailor_nbd_admission_export_queued_total", "export", e);
                double wait = delta(before, now, "tailor_nbd_admission_export_queue_wait_seconds_total", "export", e);
                admission.add(List.of(e, fmt(requests / elapsedSeconds, 1),
                        percent(delta(before, now, "tailor_nbd_admission_export_arrived_hot_total", "export", e),
                                requests),
                        percent(queued, requests), fmt(queued > 0 ? wait / queued * 1e3 : Double.NaN, 2),
                        fmt(now.sum("tailor_nbd_admission_export_queue_wait_max_seconds", "export", e) * 1e3, 1),
                        fmt(zeroIfAbsent(delta(before, now, "tailor_nbd_admission_export_refused_total", "export", e))
                                / elapsedSeconds, 1)));
            }
            lines.addAll(new TextTable("Admission (waiting now: " + fmt(now.sum("tailor_nbd_admission_waiting"), 0)
                    + "; bursts borrowing/s: " + fmt(rate(before, now, elapsedSeconds,
                            "tailor_nbd_admission_bursts_borrowing_total"), 1) + "):",
                    List.of("export", "requests/s", "arrived hot", "queued", "mean wait ms", "max wait ms (life)",
                            "refused/s"), admission, List.of()).lines());
        }

        if (!now.samples("tailor_nbd_request_loop_unrelated_wait_seconds_count").isEmpty()) {
            lines.add("");
            List<List<String>> loop = new ArrayList<>();
            for (String e : now.labelValues("tailor_nbd_request_loop_unrelated_wait_seconds_count", "export")) {
                MetricsText.Histogram wait = now.histogram("tailor_nbd_request_loop_unrelated_wait_seconds", "export",
                        e).minus(before.histogram("tailor_nbd_request_loop_unrelated_wait_seconds", "export", e));
                MetricsText.Histogram work = now.histogram("tailor_nbd_request_loop_work_seconds", "export", e)
                        .minus(before.histogram("tailor_nbd_request_loop_work_seconds", "export", e));
                loop.add(List.of(e, fmt(wait.count(), 0), percent(wait.shareAbove(NO_WAIT_BOUND_SECONDS) * 100, 100),
                        fmt(wait.mean() * 1e6, 1), fmt(wait.quantile(0.99) * 1e6, 0), fmt(wait.quantile(0.999) * 1e6,
                                0), fmt(work.mean() * 1e6, 1), fmt(work.quantile(0.99) * 1e6, 0)));
            }
            lines.addAll(new TextTable("Loop tracing per request, over the interval (µs; waited: behind unrelated"
                    + " work such as statistics, metrics, health checks):",
                    List.of("export", "requests", "waited", "wait mean", "wait P99", "wait P99.9", "own work mean",
                            "own work P99"), loop, List.of()).lines());
        }

        List<String> loops = now.labelValues("tailor_nbd_loop_health_check_age_seconds", "loop");
        if (!loops.isEmpty()) {
            lines.add("");
            List<List<String>> rowsLoop = new ArrayList<>();
            for (String l : loops) {
                rowsLoop.add(List.of(l, fmt(now.sum("tailor_nbd_loop_health_check_age_seconds", "loop", l) * 1e3, 1),
                        fmt(now.sum("tailor_nbd_loop_health_check_window_max_age_seconds", "loop", l) * 1e3, 1),
                        fmt(now.sum("tailor_nbd_loop_oldest_unrelated_task_age_seconds", "loop", l) * 1e3, 2),
                        fmt(rate(before, now, elapsedSeconds, "tailor_nbd_loop_unrelated_tasks_total", "loop", l), 0),
                        fmt(now.sum("tailor_nbd_loop_io_dispatch_delay_max_seconds", "loop", l) * 1e3, 2)));
            }
            lines.addAll(new TextTable("Event loops (ms):", List.of("loop", "health-check age", "largest gap (last"
                    + " period)", "oldest unrelated task", "unrelated tasks/s", "dispatch delay max (life)"),
                    rowsLoop, List.of()).lines());
        }

        lines.add("");
        List<SlowSegment> slow = SlowSegment.of(now);
        List<List<String>> slowRows = new ArrayList<>();
        for (SlowSegment s : slow.subList(0, Math.min(top, slow.size()))) {
            slowRows.add(List.of(s.export(), s.segment(), fmt(s.requests(), 0), fmt(s.overcount(), 0),
                    fmt(s.meanAdmissionWaitMillis(), 1), fmt(s.meanBackendMillis(), 1), fmt(s.hot(), 0),
                    fmt(s.steady(), 0), fmt(s.none(), 0)));
        }
        lines.addAll(new TextTable("Slow segments since the start (slow: over 50 ms; top pairs by slow requests;"
                + " times are means, ms, over the requests seen since the pair entered the top):",
                List.of("export", "segment", "slow", "overcount", "admission wait", "backend", "hot", "steady",
                        "not admitted"), slowRows,
                slow.isEmpty() ? List.of("(none yet)") : List.of()).lines());
        return lines;
    }

    /**
     * One (export, segment) pair of the server's slow-request attribution, read from its metrics.
     *
     * @param requests  slow requests (space-saving count)
     * @param overcount how much {@code requests} may be too high
     * @param seen      slow requests recorded since the pair took its place: what the times and classes cover
     */
    record SlowSegment(String export, String segment, double requests, double overcount, double seen,
            double admissionWaitSeconds, double backendSeconds, double steady, double hot, double none) {

        double meanAdmissionWaitMillis() {
            return seen > 0 ? admissionWaitSeconds / seen * 1e3 : Double.NaN;
        }

        double meanBackendMillis() {
            return seen > 0 ? backendSeconds / seen * 1e3 : Double.NaN;
        }

        /** The pairs in {@code m}, most slow requests first. */
        static List<SlowSegment> of(MetricsText m) {
            List<SlowSegment> out = new ArrayList<>();
            for (MetricsText.Sample s : m.samples("tailor_nbd_slow_segment_requests")) {
                String e = s.label("export");
                String seg = s.label("segment");
                out.add(new SlowSegment(e, seg, s.value(),
                        zeroIfAbsent(m.sum("tailor_nbd_slow_segment_overcount", "export", e, "segment", seg)),
                        m.sum("tailor_nbd_slow_segment_admission_wait_seconds_count", "export", e, "segment", seg),
                        m.sum("tailor_nbd_slow_segment_admission_wait_seconds_sum", "export", e, "segment", seg),
                        m.sum("tailor_nbd_slow_segment_backend_seconds_sum", "export", e, "segment", seg),
                        m.sum("tailor_nbd_slow_segment_admitted_requests", "export", e, "segment", seg, "class",
                                "steady"),
                        m.sum("tailor_nbd_slow_segment_admitted_requests", "export", e, "segment", seg, "class", "hot"),
                        m.sum("tailor_nbd_slow_segment_admitted_requests", "export", e, "segment", seg, "class",
                                "none")));
            }
            out.sort(Comparator.comparingDouble(SlowSegment::requests).reversed()
                    .thenComparing(SlowSegment::export).thenComparing(SlowSegment::segment));
            return out;
        }
    }

    private static double delta(MetricsText before, MetricsText now, String name, String... labelPairs) {
        double b = before.sum(name, labelPairs);
        double n = now.sum(name, labelPairs);
        if (Double.isNaN(n)) {
            return Double.NaN;
        }
        // A counter that appeared since the earlier reading (its first error, say), or restarted, counts from 0.
        return Double.isNaN(b) || n < b ? n : n - b;
    }

    private static double rate(MetricsText before, MetricsText now, double elapsedSeconds, String name,
            String... labelPairs) {
        return elapsedSeconds > 0 ? delta(before, now, name, labelPairs) / elapsedSeconds : Double.NaN;
    }

    private static double zeroIfAbsent(double value) {
        return Double.isNaN(value) ? 0 : value;
    }

    private static String percent(double part, double whole) {
        return whole > 0 && !Double.isNaN(part) ? String.format(Locale.ROOT, "%.1f %%", part / whole * 100) : "–";
    }

    private static String fmt(double x, int digits) {
        return BurstExperiment.fmt(x, digits);
    }
}
