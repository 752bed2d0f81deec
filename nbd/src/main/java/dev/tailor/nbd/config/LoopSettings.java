package dev.tailor.nbd.config;

import static dev.tailor.nbd.config.NbdConfig.quote;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.eventloop.LoopMode;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The event loops (docs/design.md#io-priority-event-loop; docs/eventloop.md) and the proxy's own
 * background work on them (the server's {@code ProxyBackgroundWork}; {@link BackgroundSettings}).
 *
 * @param mode                    {@code priority} (default: I/O first, background work within an
 *                                allowance) or {@code fifo} (one queue, as a plain event loop);
 *                                {@code tailor nbd serve --loop}
 * @param statisticsPeriodMicros  per-segment statistics (admission's tick), µs (default 1,000)
 * @param metricsPeriodMillis     metrics export, ms (default 1,000)
 * @param metricsFile             a file the metrics export writes in the Prometheus text format
 *                                (default none); in a config file, relative to its directory
 * @param healthCheckPeriodMillis health check, ms (default 100)
 * @param maintenancePeriodMicros synthetic maintenance, µs between runs (default 1,000)
 * @param maintenanceBusyMicros   CPU time of one synthetic maintenance task, µs (default 0: off)
 * @param maintenanceTasks        maintenance tasks submitted per run (default 1)
 * @param metricsListen           {@code HOST:PORT} to serve {@code /metrics} and {@code /healthz} on
 *                                over HTTP (default none; port 0 picks a free one; {@code :PORT} is
 *                                {@value #DEFAULT_HOST}:PORT, as for {@code --listen}); {@code tailor nbd
 *                                serve --metrics-listen}; served by the server's {@code MetricsEndpoint}
 * @param slowRequestThresholdMillis a request taking longer than this, decoded to answered, is slow (ms, 0.001 to
 *                                60,000; default {@value #DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS});
 *                                {@code tailor nbd serve --slow-threshold} (docs/nbd.md, "Slow requests")
 * @param slowTopWindowSeconds    the window of the slow top: it reports the slow requests of between half of it
 *                                and all of it, up to now (s, 2 to 86,400; default
 *                                {@value #DEFAULT_SLOW_TOP_WINDOW_SECONDS})
 */
@JsonIgnoreProperties(ignoreUnknown = false)
public record LoopSettings(
        String mode,
        Integer statisticsPeriodMicros,
        Integer metricsPeriodMillis,
        Path metricsFile,
        Integer healthCheckPeriodMillis,
        Integer maintenancePeriodMicros,
        Integer maintenanceBusyMicros,
        Integer maintenanceTasks,
        String metricsListen,
        Double slowRequestThresholdMillis,
        Integer slowTopWindowSeconds) {

    /** The slow threshold by default, ms: far above a page-cache or SSD request, so only requests that waited. */
    public static final double DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS = 50;

    /** The longest slow threshold, ms: a minute. */
    public static final double MAX_SLOW_REQUEST_THRESHOLD_MILLIS = 60_000;

    /** The slow top's window by default, s. */
    public static final int DEFAULT_SLOW_TOP_WINDOW_SECONDS = 60;

    /** What {@code slowRequestThresholdMillis} and {@code --slow-threshold} take, in words. */
    public static final String SLOW_THRESHOLD_EXPECTED =
            "milliseconds, " + Numbers.interval(false, 0.001, MAX_SLOW_REQUEST_THRESHOLD_MILLIS) + ", e.g. 50";

    /** Every default: priority mode, no maintenance, no metrics file or endpoint. */
    public static final LoopSettings DEFAULTS = builder().build();

    /** The address of a listener given as {@code :PORT}: loopback, the server's default address. */
    public static final String DEFAULT_HOST = "127.0.0.1";

    public LoopSettings {
        mode = mode == null ? "priority" : mode;
        statisticsPeriodMicros = statisticsPeriodMicros == null ? 1_000 : statisticsPeriodMicros;
        metricsPeriodMillis = metricsPeriodMillis == null ? 1_000 : metricsPeriodMillis;
        healthCheckPeriodMillis = healthCheckPeriodMillis == null ? 100 : healthCheckPeriodMillis;
        maintenancePeriodMicros = maintenancePeriodMicros == null ? 1_000 : maintenancePeriodMicros;
        maintenanceBusyMicros = maintenanceBusyMicros == null ? 0 : maintenanceBusyMicros;
        maintenanceTasks = maintenanceTasks == null ? 1 : maintenanceTasks;
        slowRequestThresholdMillis =
                slowRequestThresholdMillis == null ? DEFAULT_SLOW_REQUEST_THRESHOLD_MILLIS : slowRequestThresholdMillis;
        slowTopWindowSeconds = slowTopWindowSeconds == null ? DEFAULT_SLOW_TOP_WINDOW_SECONDS : slowTopWindowSeconds;
    }

    /** Whether {@code millis} is a slow threshold the server takes: 1 µs to a minute. */
    public static boolean validSlowThreshold(double millis) {
        return millis >= 0.001 && millis <= MAX_SLOW_REQUEST_THRESHOLD_MILLIS;
    }

    /** The slow threshold, ns (at least 1). */
    public long slowRequestThresholdNanos() {
        return Math.round(slowRequestThresholdMillis * 1e6);
    }

    /** The slow top's window, ns. */
    public long slowTopWindowNanos() {
        return slowTopWindowSeconds * 1_000_000_000L;
    }

    /**
     * The metrics endpoint's address, or {@code null} when there is none.
     *
     * @throws IllegalArgumentException when {@code metricsListen} is not {@code HOST:PORT}
     */
    public InetSocketAddress metricsAddress() {
        MetricsListen parsed = parseMetricsListen();
        if (parsed.problem() != null) {
            throw new IllegalArgumentException(parsed.problem().message());
        }
        return parsed.address();
    }

    /** What {@link #metricsAddress} finds wrong with {@code metricsListen}, or null. */
    private Problem metricsProblem() {
        return parseMetricsListen().problem();
    }

    /** {@code metricsListen} read: its address, or what is wrong with it; both null when there is none. */
    private record MetricsListen(InetSocketAddress address, Problem problem) {}

    private MetricsListen parseMetricsListen() {
        if (metricsListen == null) {
            return new MetricsListen(null, null);
        }
        int colon = metricsListen.lastIndexOf(':');
        String host = colon < 0 ? "" : colon == 0 ? DEFAULT_HOST : metricsListen.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = colon < 0 ? -1 : Integer.parseInt(metricsListen.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (host.isBlank() || port < 0 || port > 65_535) {
            return new MetricsListen(
                    null,
                    new Problem(
                            "loop.metricsListen",
                            quote(metricsListen),
                            "HOST:PORT, e.g. 127.0.0.1:9810; port " + NbdConfig.whole(0, 65_535)));
        }
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            return new MetricsListen(
                    null,
                    new Problem(
                            "loop.metricsListen",
                            quote(metricsListen) + ": " + host + " does not resolve",
                            "an address or host name of this machine"));
        }
        return new MetricsListen(address, null);
    }

    /** This, with a relative metrics file resolved against {@code directory}. */
    LoopSettings resolvedAgainst(Path directory) {
        if (metricsFile == null || metricsFile.isAbsolute()) {
            return this;
        }
        return new LoopSettings(
                mode,
                statisticsPeriodMicros,
                metricsPeriodMillis,
                directory.resolve(metricsFile),
                healthCheckPeriodMillis,
                maintenancePeriodMicros,
                maintenanceBusyMicros,
                maintenanceTasks,
                metricsListen,
                slowRequestThresholdMillis,
                slowTopWindowSeconds);
    }

    /** The loop mode. */
    public LoopMode loopMode() {
        return "fifo".equals(mode) ? LoopMode.FIFO : LoopMode.PRIORITY;
    }

    /** The background work's configuration. */
    public BackgroundSettings background() {
        return new BackgroundSettings(
                statisticsPeriodMicros,
                metricsPeriodMillis,
                metricsFile,
                healthCheckPeriodMillis,
                maintenancePeriodMicros,
                maintenanceBusyMicros,
                maintenanceTasks);
    }

    List<Problem> problems() {
        List<Problem> problems = new ArrayList<>();
        if (!"priority".equals(mode) && !"fifo".equals(mode)) {
            problems.add(new Problem("loop.mode", quote(mode), "priority or fifo"));
        }
        check(problems, "statisticsPeriodMicros", statisticsPeriodMicros, 1, 60_000_000);
        check(problems, "metricsPeriodMillis", metricsPeriodMillis, 1, 3_600_000);
        check(problems, "healthCheckPeriodMillis", healthCheckPeriodMillis, 1, 3_600_000);
        check(problems, "maintenancePeriodMicros", maintenancePeriodMicros, 1, 60_000_000);
        check(problems, "maintenanceBusyMicros", maintenanceBusyMicros, 0, 1_000_000);
        check(problems, "maintenanceTasks", maintenanceTasks, 1, 10_000);
        if (!validSlowThreshold(slowRequestThresholdMillis)) {
            problems.add(new Problem(
                    "loop.slowRequestThresholdMillis",
                    Numbers.written(slowRequestThresholdMillis),
                    SLOW_THRESHOLD_EXPECTED));
        }
        check(problems, "slowTopWindowSeconds", slowTopWindowSeconds, 2, 86_400);
        Problem metrics = metricsProblem();
        if (metrics != null) {
            problems.add(metrics);
        }
        return problems;
    }

    /**
     * What keeps the metrics export from writing {@code metricsFile}, looked at on the file system as it is now: a
     * directory, or a folder that does not exist (the export would fail every period, a warning each time). Empty
     * without a metrics file.
     */
    public List<Problem> fileProblems() {
        List<Problem> problems = new ArrayList<>();
        if (metricsFile == null) {
            return problems;
        }
        String expected = "a file path in an existing folder, e.g. /var/lib/node_exporter/textfile/tailor-nbd.prom";
        Path folder = metricsFile.toAbsolutePath().getParent();
        if (Files.isDirectory(metricsFile)) {
            problems.add(new Problem("loop.metricsFile", metricsFile + " is a directory", expected));
        } else if (folder != null && !Files.isDirectory(folder)) {
            problems.add(new Problem(
                    "loop.metricsFile",
                    metricsFile + ": the folder " + folder
                            + (Files.exists(folder) ? " is not a folder" : " does not exist"),
                    expected));
        }
        return problems;
    }

    private static void check(List<Problem> problems, String field, int value, int min, int max) {
        if (value < min || value > max) {
            problems.add(new Problem("loop." + field, value, NbdConfig.whole(min, max)));
        }
    }

    /** A builder with every field unset: {@link Builder#build} gives the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds {@link LoopSettings}: named setters; a field left unset, or set to {@code null}, takes its default
     * in the canonical constructor, the one place the defaults are set (the constructor YAML and JSON are
     * read with).
     */
    public static final class Builder {
        private String mode;
        private Integer statisticsPeriodMicros;
        private Integer metricsPeriodMillis;
        private Path metricsFile;
        private Integer healthCheckPeriodMillis;
        private Integer maintenancePeriodMicros;
        private Integer maintenanceBusyMicros;
        private Integer maintenanceTasks;
        private String metricsListen;
        private Double slowRequestThresholdMillis;
        private Integer slowTopWindowSeconds;

        private Builder() {}

        private Builder(LoopSettings from) {
            mode = from.mode;
            statisticsPeriodMicros = from.statisticsPeriodMicros;
            metricsPeriodMillis = from.metricsPeriodMillis;
            metricsFile = from.metricsFile;
            healthCheckPeriodMillis = from.healthCheckPeriodMillis;
            maintenancePeriodMicros = from.maintenancePeriodMicros;
            maintenanceBusyMicros = from.maintenanceBusyMicros;
            maintenanceTasks = from.maintenanceTasks;
            metricsListen = from.metricsListen;
            slowRequestThresholdMillis = from.slowRequestThresholdMillis;
            slowTopWindowSeconds = from.slowTopWindowSeconds;
        }

        /** {@link LoopSettings#mode}. */
        public Builder mode(String value) {
            mode = value;
            return this;
        }

        /** {@link LoopSettings#statisticsPeriodMicros}. */
        public Builder statisticsPeriodMicros(Integer value) {
            statisticsPeriodMicros = value;
            return this;
        }

        /** {@link LoopSettings#metricsPeriodMillis}. */
        public Builder metricsPeriodMillis(Integer value) {
            metricsPeriodMillis = value;
            return this;
        }

        /** {@link LoopSettings#metricsFile}. */
        public Builder metricsFile(Path value) {
            metricsFile = value;
            return this;
        }

        /** {@link LoopSettings#healthCheckPeriodMillis}. */
        public Builder healthCheckPeriodMillis(Integer value) {
            healthCheckPeriodMillis = value;
            return this;
        }

        /** {@link LoopSettings#maintenancePeriodMicros}. */
        public Builder maintenancePeriodMicros(Integer value) {
            maintenancePeriodMicros = value;
            return this;
        }

        /** {@link LoopSettings#maintenanceBusyMicros}. */
        public Builder maintenanceBusyMicros(Integer value) {
            maintenanceBusyMicros = value;
            return this;
        }

        /** {@link LoopSettings#maintenanceTasks}. */
        public Builder maintenanceTasks(Integer value) {
            maintenanceTasks = value;
            return this;
        }

        /** {@link LoopSettings#metricsListen}. */
        public Builder metricsListen(String value) {
            metricsListen = value;
            return this;
        }

        /** {@link LoopSettings#slowRequestThresholdMillis}. */
        public Builder slowRequestThresholdMillis(Double value) {
            slowRequestThresholdMillis = value;
            return this;
        }

        /** {@link LoopSettings#slowTopWindowSeconds}. */
        public Builder slowTopWindowSeconds(Integer value) {
            slowTopWindowSeconds = value;
            return this;
        }

        /**
         * The loop settings, each field left unset at its default. Its values are checked where a config file's
         * are,
         * by {@link NbdConfig#problems()} (which the server runs at start), so that every invalid field is
         * listed at once, each as {@code field: value (expected: ...)}.
         */
        public LoopSettings build() {
            return new LoopSettings(
                    mode,
                    statisticsPeriodMicros,
                    metricsPeriodMillis,
                    metricsFile,
                    healthCheckPeriodMillis,
                    maintenancePeriodMicros,
                    maintenanceBusyMicros,
                    maintenanceTasks,
                    metricsListen,
                    slowRequestThresholdMillis,
                    slowTopWindowSeconds);
        }
    }
}
