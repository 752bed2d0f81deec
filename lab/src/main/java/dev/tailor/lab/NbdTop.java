package dev.tailor.lab;

import dev.tailor.common.IoErrors;
import dev.tailor.nbd.config.LoopSettings;
import java.io.IOException;
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
import java.util.regex.Pattern;

/**
 * What {@code tailor nbd top} shows of a running server's {@code /metrics}, like {@code top} for storage
 * engineers: from the difference of two readings, per export the IOPS, throughput, latency percentiles, error
 * replies, requests dropped (their client went away, no reply) and slow requests; admission's decisions and waits
 * (mean and P99 over the interval, from the wait histograms) when it is on; with the fair dispatch door on, per export its door and its wait there (the same); per export the per-request loop tracing
 * (unrelated work waited behind, own work, the wall wait for the loop and its part behind other work); per loop the health-check age and the dispatch-delay bound (P99 over the interval); and,
 * over the server's slow window, the (export, segment) pairs with the most slow requests, with where their time went
 * (admission queue, backend) and the class admission gave them, under the server's slow threshold. docs/nbd.md, "Live
 * view".
 */
public final class NbdTop {

    private static final Pattern HOST_PORT = Pattern.compile("^(\\[[0-9a-fA-F:.]+]|[A-Za-z0-9.-]+):(\\d{1,5})$");
    /** HOST:PORT/PATH without a scheme, as curl takes it: http is meant. */
    private static final Pattern HOST_PORT_PATH =
            Pattern.compile("^(\\[[0-9a-fA-F:.]+]|[A-Za-z0-9.-]+):(\\d{1,5})/[^\\s]*$");
    /** :PORT or :PORT/PATH, as {@code tailor nbd serve --metrics-listen} takes it: its loopback address. */
    private static final Pattern PORT_ONLY = Pattern.compile("^:\\d{1,5}(/[^\\s]*)?$");
    /** How a frame shows the time of a reading. */
    public static final DateTimeFormatter CLOCK =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);
    /** The bucket of the loop-tracing histograms that holds "waited behind nothing" (1 µs). */
    private static final double NO_WAIT_BOUND_SECONDS = 0.000001;

    private NbdTop() {}

    /**
     * {@code --metrics}: a URL, HOST:PORT for {@code http://HOST:PORT/metrics}, or HOST:PORT/PATH for {@code
     * http://HOST:PORT/PATH}; :PORT and :PORT/PATH are on the host {@code tailor nbd serve --metrics-listen} binds
     * :PORT to, its loopback address ({@link LoopSettings#DEFAULT_HOST}), so the same value reads the server.
     */
    public static URI uri(String value) {
        String v = value == null ? "" : value.strip();
        if (PORT_ONLY.matcher(v).matches()) {
            v = LoopSettings.DEFAULT_HOST + v;
        }
        if (HOST_PORT.matcher(v).matches()) {
            v = "http://" + v + "/metrics";
        } else if (HOST_PORT_PATH.matcher(v).matches()) {
            v = "http://" + v;
        }
        try {
            URI uri = new URI(v);
            // The scheme is case-insensitive (RFC 3986, 3.1), as curl takes it; the URL shown is lower case.
            if (uri.getScheme() != null
                    && !uri.getScheme().equals(uri.getScheme().toLowerCase(Locale.ROOT))) {
                uri = new URI(uri.getScheme().toLowerCase(Locale.ROOT)
                        + v.substring(uri.getScheme().length()));
            }
            if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
                // -1: none given, the scheme's; 0 and above 65,535 reach no server (the HTTP client throws on them).
                if (uri.getPort() == 0 || uri.getPort() > 65_535) {
                    throw new LabException("--metrics: \"" + value + "\": port " + uri.getPort()
                            + " (expected: a port in [1, 65535], the one tailor nbd serve --metrics-listen prints)");
                }
                return uri;
            }
        } catch (URISyntaxException e) {
            // named below
        }
        throw new LabException("--metrics: \"" + value + "\" (expected: http://HOST:PORT/metrics or HOST:PORT, the"
                + " address tailor nbd serve --metrics-listen prints; :PORT for " + LoopSettings.DEFAULT_HOST
                + ":PORT, as serve takes it; also HOST:PORT/PATH for http://HOST:PORT/PATH, or any http:// or https://"
                + " URL)");
    }

    /** One reading: the text (null when it failed, with why), and when it was taken. */
    public record Reading(MetricsText text, String error, long nanos) {}

    /** Reads the endpoint; with {@code failHard}, a failure ends the command (exit 1) naming the URL. */
    public static Reading read(HttpClient client, URI uri, boolean failHard) {
        String error;
        try {
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200) {
                return new Reading(MetricsText.parse(response.body()), null, System.nanoTime());
            }
            error = "HTTP " + response.statusCode();
        } catch (IOException e) {
            error = e instanceof java.net.http.HttpTimeoutException
                            && "https".equals(uri.getScheme())
                            && answersPlainHttp(uri)
                    ? "no TLS answer from " + uri.getRawAuthority() + ": it answers plain HTTP (expected: http://"
                            + uri.getRawAuthority() + (uri.getRawPath() == null ? "" : uri.getRawPath()) + ")"
                    : IoErrors.reason(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "interrupted";
        }
        if (failHard) {
            throw new LabException(
                    "--metrics: cannot read " + uri + " (" + error + "; expected: the metrics endpoint"
                            + " of a running tailor nbd serve --metrics-listen)",
                    1,
                    null);
        }
        return new Reading(null, error, System.nanoTime());
    }

    /**
     * Whether the server of an {@code https://} URL whose TLS handshake went unanswered answers a plain HTTP
     * request instead (a plain-HTTP server reads the TLS hello as a request line that never ends, and waits).
     */
    static boolean answersPlainHttp(URI uri) {
        int port = uri.getPort() == -1 ? 443 : uri.getPort();
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(uri.getHost(), port), 2_000);
            socket.setSoTimeout(2_000);
            String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            socket.getOutputStream()
                    .write(("HEAD " + path + " HTTP/1.0\r\nHost: " + uri.getRawAuthority() + "\r\n\r\n")
                            .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            byte[] head = socket.getInputStream().readNBytes(5);
            return "HTTP/".equals(new String(head, java.nio.charset.StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The frame to show after reading {@code current}: the rates since {@code previous} when both have
     * data; the first reading's notice when only {@code current} has; else why there is no data. The
     * caller takes {@code current} as the next {@code previous} when it has data.
     */
    public static List<String> frame(
            URI uri, Reading previous, Reading current, double intervalSeconds, Instant at, int top) {
        if (current.text() != null && previous.text() == null) {
            return List.of(
                    "tailor nbd top · " + uri + " · " + CLOCK.format(at),
                    "",
                    "first reading taken; rates from the next one");
        }
        if (current.text() == null) {
            return List.of(
                    "tailor nbd top · " + uri + " · " + CLOCK.format(at),
                    "",
                    "no data: " + current.error() + "; trying again every " + BurstExperiment.fmtPlain(intervalSeconds)
                            + " s");
        }
        return frame(
                uri.toString(), previous.text(), current.text(), (current.nanos() - previous.nanos()) / 1e9, at, top);
    }

    /**
     * One frame, from two readings {@code elapsedSeconds} apart (rates and percentiles over that interval) and the
     * later one alone (gauges, the slow segments over the server's window). Pure: the tests call it with texts of their own.
     */
    public static List<String> frame(
            String source, MetricsText before, MetricsText now, double elapsedSeconds, Instant at, int top) {
        List<String> lines = new ArrayList<>();
        lines.add("tailor nbd top · " + source + " · " + CLOCK.format(at) + " · rates over the last "
                + String.format(Locale.ROOT, "%.1f", elapsedSeconds) + " s");
        lines.add("");
        List<String> exports = now.labelValues("tailor_nbd_requests_total", "export");
        List<List<String>> rows = new ArrayList<>();
        for (String e : exports) {
            MetricsText.Histogram latency = now.histogram("tailor_nbd_request_duration_seconds", "export", e)
                    .minus(before.histogram("tailor_nbd_request_duration_seconds", "export", e));
            rows.add(List.of(
                    e,
                    fmt(now.sum("tailor_nbd_export_connections", "export", e), 0),
                    fmt(
                            rate(
                                    before,
                                    now,
                                    elapsedSeconds,
                                    "tailor_nbd_requests_total",
                                    "export",
                                    e,
                                    "operation",
                                    "read"),
                            1),
                    fmt(
                            rate(
                                    before,
                                    now,
                                    elapsedSeconds,
                                    "tailor_nbd_requests_total",
                                    "export",
                                    e,
                                    "operation",
                                    "write"),
                            1),
                    fmt(
                            rate(before, now, elapsedSeconds, "tailor_nbd_requests_total", "export", e)
                                    - rate(
                                            before,
                                            now,
                                            elapsedSeconds,
                                            "tailor_nbd_requests_total",
                                            "export",
                                            e,
                                            "operation",
                                            "read")
                                    - rate(
                                            before,
                                            now,
                                            elapsedSeconds,
                                            "tailor_nbd_requests_total",
                                            "export",
                                            e,
                                            "operation",
                                            "write"),
                            1),
                    fmt(
                            rate(
                                            before,
                                            now,
                                            elapsedSeconds,
                                            "tailor_nbd_request_bytes_total",
                                            "export",
                                            e,
                                            "operation",
                                            "read")
                                    / (1 << 20),
                            2),
                    fmt(
                            rate(
                                            before,
                                            now,
                                            elapsedSeconds,
                                            "tailor_nbd_request_bytes_total",
                                            "export",
                                            e,
                                            "operation",
                                            "write")
                                    / (1 << 20),
                            2),
                    fmt(latency.quantile(0.5) * 1e3, 2),
                    fmt(latency.quantile(0.99) * 1e3, 2),
                    fmt(
                            zeroIfAbsent(
                                    rate(before, now, elapsedSeconds, "tailor_nbd_request_errors_total", "export", e)),
                            1),
                    fmt(
                            zeroIfAbsent(rate(
                                    before, now, elapsedSeconds, "tailor_nbd_requests_dropped_total", "export", e)),
                            1),
                    fmt(rate(before, now, elapsedSeconds, "tailor_nbd_slow_requests_total", "export", e), 1),
                    fmt(now.sum("tailor_nbd_requests_total", "export", e), 0)));
        }
        lines.addAll(new TextTable(
                        "Exports (per second; latency: header decoded to reply, over the interval; errors: error replies;"
                                + " dropped: no reply, the client went away):",
                        List.of(
                                "export",
                                "conn",
                                "read/s",
                                "write/s",
                                "other/s",
                                "MiB/s read",
                                "MiB/s write",
                                "P50 ms",
                                "P99 ms",
                                "errors/s",
                                "dropped/s",
                                "slow/s",
                                "requests"),
                        rows,
                        exports.isEmpty()
                                ? List.of("(no export has tailor_nbd_requests_total: is this tailor nbd serve's"
                                        + " /metrics?)")
                                : List.of())
                .lines());

        if (!Double.isNaN(now.sum("tailor_nbd_admission_admitted_total"))) {
            lines.add("");
            List<List<String>> admission = new ArrayList<>();
            for (String e : now.labelValues("tailor_nbd_admission_export_requests_total", "export")) {
                double requests = delta(before, now, "tailor_nbd_admission_export_requests_total", "export", e);
                double queued = delta(before, now, "tailor_nbd_admission_export_queued_total", "export", e);
                double wait = delta(before, now, "tailor_nbd_admission_export_queue_wait_seconds_total", "export", e);
                admission.add(List.of(
                        e,
                        fmt(requests / elapsedSeconds, 1),
                        percent(
                                delta(before, now, "tailor_nbd_admission_export_arrived_hot_total", "export", e),
                                requests),
                        percent(queued, requests),
                        fmt(queued > 0 ? wait / queued * 1e3 : Double.NaN, 2),
                        fmt(waitP99(queued, before, now, "tailor_nbd_admission_wait_seconds", "export", e) * 1e3, 2),
                        fmt(
                                zeroIfAbsent(delta(
                                                before, now, "tailor_nbd_admission_export_refused_total", "export", e))
                                        / elapsedSeconds,
                                1)));
            }
            lines.addAll(new TextTable(
                            "Admission (waiting now: " + fmt(now.sum("tailor_nbd_admission_waiting"), 0)
                                    + "; bursts borrowing/s: "
                                    + fmt(
                                            rate(
                                                    before,
                                                    now,
                                                    elapsedSeconds,
                                                    "tailor_nbd_admission_bursts_borrowing_total"),
                                            1)
                                    + "; on hot segment: arrived while its segment was hot, whatever class"
                                    + " admitted it):",
                            List.of(
                                    "export",
                                    "requests/s",
                                    "on hot segment",
                                    "queued",
                                    "mean wait ms",
                                    "P99 wait ms",
                                    "refused/s"),
                            admission,
                            List.of())
                    .lines());
        }

        if (!now.samples("tailor_nbd_fair_dispatch_export_requests_total").isEmpty()) {
            lines.add("");
            lines.addAll(fairDispatch(before, now, elapsedSeconds));
        }

        if (!now.samples("tailor_nbd_request_loop_unrelated_wait_seconds_count").isEmpty()) {
            lines.add("");
            List<List<String>> loop = new ArrayList<>();
            for (String e : now.labelValues("tailor_nbd_request_loop_unrelated_wait_seconds_count", "export")) {
                MetricsText.Histogram wait = now.histogram(
                                "tailor_nbd_request_loop_unrelated_wait_seconds", "export", e)
                        .minus(before.histogram("tailor_nbd_request_loop_unrelated_wait_seconds", "export", e));
                MetricsText.Histogram work = now.histogram("tailor_nbd_request_loop_work_seconds", "export", e)
                        .minus(before.histogram("tailor_nbd_request_loop_work_seconds", "export", e));
                MetricsText.Histogram loopWait = now.histogram("tailor_nbd_request_loop_wait_seconds", "export", e)
                        .minus(before.histogram("tailor_nbd_request_loop_wait_seconds", "export", e));
                double arrival =
                        delta(before, now, "tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total", "export", e);
                loop.add(List.of(
                        e,
                        fmt(wait.count(), 0),
                        percent(wait.shareAbove(NO_WAIT_BOUND_SECONDS) * 100, 100),
                        fmt(wait.mean() * 1e6, 1),
                        fmt(wait.quantile(0.99) * 1e6, 0),
                        fmt(wait.quantile(0.999) * 1e6, 0),
                        fmt(work.mean() * 1e6, 1),
                        fmt(work.quantile(0.99) * 1e6, 0),
                        fmt(loopWait.mean() * 1e6, 1),
                        fmt(loopWait.quantile(0.99) * 1e6, 0),
                        fmt(behindOtherWorkMeanSeconds(loopWait, wait, arrival) * 1e6, 1)));
            }
            lines.addAll(new TextTable(
                            "Loop tracing per request, over the interval (µs; waited: behind unrelated"
                                    + " work such as statistics, metrics, health checks; loop wait: wall time waiting"
                                    + " for the loop at completion and flush; behind others: that less its unrelated"
                                    + " part):",
                            List.of(
                                    "export",
                                    "requests",
                                    "waited",
                                    "wait mean",
                                    "wait P99",
                                    "wait P99.9",
                                    "own work mean",
                                    "own work P99",
                                    "loop wait mean",
                                    "loop wait P99",
                                    "behind others mean"),
                            loop,
                            List.of())
                    .lines());
        }

        List<String> loops = now.labelValues("tailor_nbd_loop_health_check_age_seconds", "loop");
        if (!loops.isEmpty()) {
            lines.add("");
            List<List<String>> rowsLoop = new ArrayList<>();
            for (String l : loops) {
                rowsLoop.add(List.of(
                        l,
                        fmt(now.sum("tailor_nbd_loop_health_check_age_seconds", "loop", l) * 1e3, 1),
                        fmt(now.sum("tailor_nbd_loop_health_check_window_max_age_seconds", "loop", l) * 1e3, 1),
                        fmt(now.sum("tailor_nbd_loop_oldest_unrelated_task_age_seconds", "loop", l) * 1e3, 2),
                        fmt(rate(before, now, elapsedSeconds, "tailor_nbd_loop_unrelated_tasks_total", "loop", l), 0),
                        fmt(
                                intervalP99(before, now, "tailor_nbd_loop_io_dispatch_delay_seconds", "loop", l) * 1e3,
                                2)));
            }
            lines.addAll(new TextTable(
                            "Event loops (ms; dispatch delay: the P99 over the interval of the bound on readable to"
                                    + " handled, per poll that dispatched I/O):",
                            List.of(
                                    "loop",
                                    "health-check age",
                                    "largest gap (last" + " period)",
                                    "oldest unrelated task",
                                    "unrelated tasks/s",
                                    "dispatch delay P99"),
                            rowsLoop,
                            List.of())
                    .lines());
        }

        lines.add("");
        List<SlowSegment> slow = SlowSegment.of(now);
        List<List<String>> slowRows = new ArrayList<>();
        for (SlowSegment s : slow.subList(0, Math.min(top, slow.size()))) {
            slowRows.add(List.of(
                    s.export(),
                    s.segment(),
                    fmt(s.requests(), 0),
                    fmt(s.overcount(), 0),
                    fmt(s.meanAdmissionWaitMillis(), 1),
                    fmt(s.meanBackendMillis(), 1),
                    fmt(s.hot(), 0),
                    fmt(s.steady(), 0),
                    fmt(s.none(), 0)));
        }
        lines.addAll(new TextTable(
                        slowTitle(now),
                        List.of(
                                "export",
                                "segment",
                                "slow",
                                "overcount",
                                "queued wait",
                                "backend",
                                "admitted hot",
                                "admitted steady",
                                "not via admission"),
                        slowRows,
                        slow.isEmpty() ? List.of("(none yet)") : List.of())
                .lines());
        return lines;
    }

    /**
     * The fair dispatch section (docs/nbd.md, "Fair dispatch"): per export its door (the backend), READs and WRITEs
     * reaching the door per second, the share of them that waited there, their mean wait over the interval (the
     * wait of those let through after waiting, over those that waited) and the P99 wait over the interval (of every
     * one let through, 0 for those let through at once; "–" as the mean when none waited); titled with each door's waiting and outstanding requests
     * now against its depth.
     */
    static List<String> fairDispatch(MetricsText before, MetricsText now, double elapsedSeconds) {
        List<List<String>> rows = new ArrayList<>();
        for (String e : now.labelValues("tailor_nbd_fair_dispatch_export_requests_total", "export")) {
            String door = now.samples("tailor_nbd_fair_dispatch_export_requests_total").stream()
                    .filter(s -> s.label("export").equals(e))
                    .map(s -> s.label("backend"))
                    .findFirst()
                    .orElse("");
            double requests = delta(before, now, "tailor_nbd_fair_dispatch_export_requests_total", "export", e);
            double waited = delta(before, now, "tailor_nbd_fair_dispatch_export_waited_total", "export", e);
            double wait = delta(before, now, "tailor_nbd_fair_dispatch_export_wait_seconds_total", "export", e);
            rows.add(List.of(
                    e,
                    door.isEmpty() ? "–" : door,
                    fmt(requests / elapsedSeconds, 1),
                    percent(waited, requests),
                    fmt(waited > 0 ? wait / waited * 1e3 : Double.NaN, 2),
                    fmt(waitP99(waited, before, now, "tailor_nbd_fair_dispatch_wait_seconds", "export", e) * 1e3, 2)));
        }
        List<String> doors = new ArrayList<>();
        for (String d : now.labelValues("tailor_nbd_fair_dispatch_depth", "backend")) {
            doors.add(d + " " + fmt(now.sum("tailor_nbd_fair_dispatch_waiting", "backend", d), 0) + " / "
                    + fmt(now.sum("tailor_nbd_fair_dispatch_outstanding", "backend", d), 0) + " of "
                    + fmt(now.sum("tailor_nbd_fair_dispatch_depth", "backend", d), 0));
        }
        if (doors.isEmpty()) { // a server from before the doors had a backend label: one door
            doors.add(fmt(now.sum("tailor_nbd_fair_dispatch_waiting"), 0) + " / "
                    + fmt(now.sum("tailor_nbd_fair_dispatch_outstanding"), 0) + " of "
                    + fmt(now.sum("tailor_nbd_fair_dispatch_depth"), 0));
        }
        return new TextTable(
                        "Fair dispatch (per door, waiting now / out now of its depth: " + String.join("; ", doors)
                                + "):",
                        List.of("export", "door", "requests/s", "waited", "mean wait ms", "P99 wait ms"),
                        rows,
                        List.of())
                .lines();
    }

    /**
     * The slow section's title: the server's window and threshold as its gauges say (a server without them, older
     * than these gauges, counted since its start over 50 ms).
     */
    public static String slowTitle(MetricsText m) {
        double threshold = m.sum("tailor_nbd_slow_request_threshold_seconds");
        double window = m.sum("tailor_nbd_slow_segment_window_seconds");
        String over = Double.isNaN(window)
                ? "since the start"
                : "over the last " + BurstExperiment.fmtPlain(window / 2) + " to " + BurstExperiment.fmtPlain(window)
                        + " s";
        String slow = Double.isNaN(threshold) ? "50" : BurstExperiment.fmtPlain(Math.round(threshold * 1e6) / 1e3);
        return "Slow segments " + over + " (slow: over " + slow
                + " ms; top pairs by slow requests; times are means, ms,"
                + " over the requests seen while the pair was in the top; queued wait: in admission or at the fair"
                + " dispatch door; admitted: the class admission gave them, steady within the baseline even on a hot"
                + " segment):";
    }

    /**
     * One (export, segment) pair of the server's slow-request attribution, read from its metrics.
     *
     * @param requests  slow requests (space-saving count)
     * @param overcount how much {@code requests} may be too high
     * @param seen      slow requests recorded while the pair had its counters: what the times and classes cover
     */
    record SlowSegment(
            String export,
            String segment,
            double requests,
            double overcount,
            double seen,
            double admissionWaitSeconds,
            double backendSeconds,
            double steady,
            double hot,
            double none) {

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
                out.add(new SlowSegment(
                        e,
                        seg,
                        s.value(),
                        zeroIfAbsent(m.sum("tailor_nbd_slow_segment_overcount", "export", e, "segment", seg)),
                        m.sum("tailor_nbd_slow_segment_seen_requests", "export", e, "segment", seg),
                        m.sum("tailor_nbd_slow_segment_admission_wait_seconds", "export", e, "segment", seg),
                        m.sum("tailor_nbd_slow_segment_backend_seconds", "export", e, "segment", seg),
                        m.sum(
                                "tailor_nbd_slow_segment_admitted_requests",
                                "export",
                                e,
                                "segment",
                                seg,
                                "class",
                                "steady"),
                        m.sum("tailor_nbd_slow_segment_admitted_requests", "export", e, "segment", seg, "class", "hot"),
                        m.sum(
                                "tailor_nbd_slow_segment_admitted_requests",
                                "export",
                                e,
                                "segment",
                                seg,
                                "class",
                                "none")));
            }
            out.sort(Comparator.comparingDouble(SlowSegment::requests)
                    .reversed()
                    .thenComparing(SlowSegment::export)
                    .thenComparing(SlowSegment::segment));
            return out;
        }
    }

    /**
     * The mean time per request, s, that its loop wait ({@code tailor_nbd_request_loop_wait_seconds}: completion and
     * flush) spent behind other requests' work and the scheduler: the loop wait less the completion and flush parts of
     * the unrelated wait, the whole unrelated wait less {@code arrivalUnrelatedSeconds}, its arrival part
     * ({@code tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total}) over the same requests. NaN without data.
     */
    static double behindOtherWorkMeanSeconds(
            MetricsText.Histogram loopWait, MetricsText.Histogram unrelatedWait, double arrivalUnrelatedSeconds) {
        if (!(loopWait.count() > 0) || Double.isNaN(unrelatedWait.sum()) || Double.isNaN(arrivalUnrelatedSeconds)) {
            return Double.NaN;
        }
        return Math.max(0, loopWait.sum() - (unrelatedWait.sum() - arrivalUnrelatedSeconds)) / loopWait.count();
    }

    /**
     * The P99, s, of a wait histogram ({@code tailor_nbd_admission_wait_seconds}, {@code
     * tailor_nbd_fair_dispatch_wait_seconds}: every request sent on, 0 for one that did not wait; {@code
     * tailor_nbd_loop_io_dispatch_delay_seconds}: every poll that dispatched I/O) over the interval:
     * interpolated in the difference of its buckets between the two readings, as {@code histogram_quantile} does
     * over a rate's window, so a long wait long ago is not in it. NaN with nothing observed in the interval, or
     * from a server without the histogram.
     */
    static double intervalP99(MetricsText before, MetricsText now, String histogram, String... labelPairs) {
        return now.histogram(histogram, labelPairs)
                .minus(before.histogram(histogram, labelPairs))
                .quantile(0.99);
    }

    /**
     * {@link #intervalP99} of a wait histogram, NaN when {@code waited} (the requests that waited in the interval,
     * as the mean beside it counts them) is none: nothing waited, so no wait to show, as the mean shows none, rather
     * than the 0 of those sent on at once. With some waiting, the P99 may still be 0 (fewer than 1 % waited).
     */
    private static double waitP99(
            double waited, MetricsText before, MetricsText now, String histogram, String... labelPairs) {
        return waited > 0 ? intervalP99(before, now, histogram, labelPairs) : Double.NaN;
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

    private static double rate(
            MetricsText before, MetricsText now, double elapsedSeconds, String name, String... labelPairs) {
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
