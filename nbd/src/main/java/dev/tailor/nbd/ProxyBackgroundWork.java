package dev.tailor.nbd;

import dev.tailor.admission.AdmissionStats;
import dev.tailor.eventloop.EventLoopMetrics;
import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.eventloop.IoPriorityEventLoopGroup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The proxy's own background work, run as <em>unrelated</em> tasks on its event loops (DESIGN.md,
 * I/O-priority event loop; issue 7): what a storage proxy does besides moving requests, and what
 * competes with request I/O for the loop thread.
 *
 * <ul>
 *   <li><b>Per-segment statistics</b>, every {@code statisticsPeriodMicros} (default 1,000) on every
 *       loop: the admission controller's tick (boundaries, reserve lending, queue service), when
 *       admission is on.</li>
 *   <li><b>Metrics export</b>, every {@code metricsPeriodMillis} (default 1,000) on the first loop: the
 *       loops' and admission's counters in the Prometheus text format, written atomically to
 *       {@code metricsFile} when one is configured (node_exporter's textfile collector reads such
 *       files), else only rendered.</li>
 *   <li><b>Health check</b>, every {@code healthCheckPeriodMillis} (default 100) on every loop: looks at
 *       every export's backend; its age is the loop's {@code lastHealthCheckAgeNanos}.</li>
 *   <li><b>Maintenance</b> (synthetic, off by default), every {@code maintenancePeriodMicros} on every
 *       loop: {@code maintenanceBusyMicros} of CPU work, standing in for scrubbing, compaction or
 *       cache upkeep; the low-load experiment turns it on.</li>
 * </ul>
 *
 * <p>In FIFO mode the same tasks go into the loop's single queue, as a plain event loop would run
 * them. Threads: created and started by the server; {@link #close} cancels everything.
 */
public final class ProxyBackgroundWork implements AutoCloseable {

    /**
     * The tasks' periods and the synthetic maintenance load.
     *
     * @param statisticsPeriodMicros  per-segment statistics (admission tick), µs, {@code >= 1}
     * @param metricsPeriodMillis     metrics export, ms, {@code >= 1}
     * @param metricsFile             where to write the metrics, or {@code null} to keep them in memory
     * @param healthCheckPeriodMillis health check, ms, {@code >= 1}
     * @param maintenancePeriodMicros synthetic maintenance period, µs, {@code >= 1}
     * @param maintenanceBusyMicros   CPU time of each maintenance task, µs; 0 turns maintenance off
 * @param maintenanceTasks        maintenance tasks submitted at each run, each its own unrelated task
 *                                (many small tasks queued at once, as per-segment upkeep would be)
     */
    public record Config(long statisticsPeriodMicros, long metricsPeriodMillis, Path metricsFile,
            long healthCheckPeriodMillis, long maintenancePeriodMicros, long maintenanceBusyMicros,
            int maintenanceTasks) {

        /** The defaults: statistics every 1 ms, metrics every 1 s, health every 100 ms, no maintenance. */
        public static final Config DEFAULTS = new Config(1_000, 1_000, null, 100, 1_000, 0, 1);

        public Config {
            requireAtLeast("statisticsPeriodMicros", statisticsPeriodMicros, 1);
            requireAtLeast("metricsPeriodMillis", metricsPeriodMillis, 1);
            requireAtLeast("healthCheckPeriodMillis", healthCheckPeriodMillis, 1);
            requireAtLeast("maintenancePeriodMicros", maintenancePeriodMicros, 1);
            requireAtLeast("maintenanceBusyMicros", maintenanceBusyMicros, 0);
            requireAtLeast("maintenanceTasks", maintenanceTasks, 1);
        }

        private static void requireAtLeast(String field, long value, long min) {
            if (value < min) {
                throw new IllegalArgumentException(field + ": " + value + " (expected: at least " + min + ")");
            }
        }
    }

    private final List<ScheduledFuture<?>> scheduled = new ArrayList<>();
    private final IoPriorityEventLoopGroup loops;
    private final AdmissionDispatcher admission;
    private final List<Export> exports;
    private final Config config;
    private final LongSupplier nanoClock;
    private volatile String lastMetrics = "";
    private final LongAdder maintenanceRuns = new LongAdder();
    private final LongAdder healthChecks = new LongAdder();
    /** Per loop: when its last health check completed (written by that loop's thread only). */
    private final long[] lastHealthCheckNanos;
    /** Per loop: the largest time between two of its health checks since the last metrics export. */
    private final AtomicLong[] healthCheckWindowMaxAgeNanos;

    /**
     * Schedules the work on every loop of {@code loops}.
     *
     * @param admission the admission dispatcher, or {@code null} when admission is off
     */
    public ProxyBackgroundWork(IoPriorityEventLoopGroup loops, AdmissionDispatcher admission, List<Export> exports,
            Config config, LongSupplier nanoClock) {
        this.loops = loops;
        this.admission = admission;
        this.exports = List.copyOf(exports);
        this.config = config;
        this.nanoClock = nanoClock;
        int count = loops.loops().size();
        lastHealthCheckNanos = new long[count];
        healthCheckWindowMaxAgeNanos = new AtomicLong[count];
        long now = nanoClock.getAsLong();
        for (int i = 0; i < count; i++) {
            lastHealthCheckNanos[i] = now;
            healthCheckWindowMaxAgeNanos[i] = new AtomicLong();
        }
        boolean first = true;
        int index = 0;
        for (IoPriorityEventLoop loop : loops.loops()) {
            int loopIndex = index++;
            if (admission != null) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(admission::tick, config.statisticsPeriodMicros(),
                        config.statisticsPeriodMicros(), TimeUnit.MICROSECONDS));
            }
            scheduled.add(loop.scheduleHealthCheck(() -> healthCheck(loopIndex), config.healthCheckPeriodMillis(),
                    TimeUnit.MILLISECONDS));
            if (config.maintenanceBusyMicros() > 0) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(() -> startMaintenance(loop),
                        config.maintenancePeriodMicros(),
                        config.maintenancePeriodMicros(), TimeUnit.MICROSECONDS));
            }
            if (first) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(this::exportMetrics, config.metricsPeriodMillis(),
                        config.metricsPeriodMillis(), TimeUnit.MILLISECONDS));
                first = false;
            }
        }
    }

    private void healthCheck(int loop) {
        for (Export e : exports) {
            e.backend().sizeBytes();
        }
        healthChecks.increment();
        long now = nanoClock.getAsLong();
        healthCheckWindowMaxAgeNanos[loop].accumulateAndGet(now - lastHealthCheckNanos[loop], Math::max);
        lastHealthCheckNanos[loop] = now;
    }

    /** One maintenance run: its tasks, submitted together as separate unrelated tasks. */
    private void startMaintenance(IoPriorityEventLoop loop) {
        maintenance();
        for (int i = 1; i < config.maintenanceTasks(); i++) {
            loop.executeUnrelated(this::maintenance);
        }
    }

    private void maintenance() {
        long until = nanoClock.getAsLong() + config.maintenanceBusyMicros() * 1_000;
        long x = 0;
        while (nanoClock.getAsLong() < until) {
            x += Long.numberOfTrailingZeros(x + 1);
        }
        maintenanceRuns.add(x >= 0 ? 1 : 0);
    }

    private void exportMetrics() {
        String text = renderMetrics();
        lastMetrics = text;
        Path file = config.metricsFile();
        if (file != null) {
            try {
                Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
                Files.writeString(tmp, text, StandardCharsets.UTF_8);
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                System.getLogger(ProxyBackgroundWork.class.getName()).log(System.Logger.Level.WARNING,
                        "cannot write metrics to " + file + ": " + e.getMessage());
            }
        }
    }

    /**
     * The metrics in the Prometheus text exposition format (version 0.0.4). Rendering starts a new
     * window for the {@code _window_max_} gauges: they cover the time since the previous rendering.
     */
    public String renderMetrics() {
        StringBuilder m = new StringBuilder();
        List<EventLoopMetrics> all = loops.metrics();
        gauge(m, "tailor_nbd_loop_oldest_unrelated_task_age_seconds", "Age of the oldest pending unrelated task");
        for (int i = 0; i < all.size(); i++) {
            sample(m, "tailor_nbd_loop_oldest_unrelated_task_age_seconds", i, all.get(i).oldestUnrelatedAgeNanos() / 1e9);
        }
        gauge(m, "tailor_nbd_loop_health_check_age_seconds", "Time since the loop's last health check ran");
        for (int i = 0; i < all.size(); i++) {
            long age = all.get(i).lastHealthCheckAgeNanos();
            sample(m, "tailor_nbd_loop_health_check_age_seconds", i, age < 0 ? Double.NaN : age / 1e9);
        }
        gauge(m, "tailor_nbd_loop_health_check_max_age_seconds", "Largest health-check age seen");
        for (int i = 0; i < all.size(); i++) {
            sample(m, "tailor_nbd_loop_health_check_max_age_seconds", i, all.get(i).healthCheckMaxAgeNanos() / 1e9);
        }
        gauge(m, "tailor_nbd_loop_health_check_window_max_age_seconds",
                "Largest health-check age since the previous metrics export (time between two health checks)");
        for (int i = 0; i < healthCheckWindowMaxAgeNanos.length; i++) {
            sample(m, "tailor_nbd_loop_health_check_window_max_age_seconds", i,
                    healthCheckWindowMaxAgeNanos[i].getAndSet(0) / 1e9);
        }
        gauge(m, "tailor_nbd_loop_io_dispatch_delay_max_seconds", "Upper bound on readable-to-handled, largest");
        for (int i = 0; i < all.size(); i++) {
            sample(m, "tailor_nbd_loop_io_dispatch_delay_max_seconds", i, all.get(i).dispatchDelay().maxNanos() / 1e9);
        }
        counter(m, "tailor_nbd_loop_unrelated_tasks_total", "Unrelated tasks run");
        for (int i = 0; i < all.size(); i++) {
            sample(m, "tailor_nbd_loop_unrelated_tasks_total", i, all.get(i).tasks().unrelated());
        }
        if (admission != null) {
            AdmissionStats s = admission.stats();
            counter(m, "tailor_nbd_admission_admitted_total", "Requests admitted");
            m.append("tailor_nbd_admission_admitted_total ").append(s.admittedRequests()).append('\n');
            counter(m, "tailor_nbd_admission_queued_total", "Requests that waited for admission");
            m.append("tailor_nbd_admission_queued_total ").append(s.queuedRequests()).append('\n');
            counter(m, "tailor_nbd_admission_refused_total", "Requests refused (segment queue full)");
            m.append("tailor_nbd_admission_refused_total ").append(s.refusedRequests()).append('\n');
            gauge(m, "tailor_nbd_admission_waiting", "Requests waiting for admission now");
            m.append("tailor_nbd_admission_waiting ").append(s.waitingRequests()).append('\n');
            total(m, "tailor_nbd_admission_admitted_steady_total", "Requests admitted as steady",
                    s.admittedSteadyRequests());
            total(m, "tailor_nbd_admission_intervals_total", "Admission intervals begun", s.intervalsBegun());
            total(m, "tailor_nbd_admission_budget_cost_units_total", "Cost units the pools were given",
                    s.budgetIssuedCostUnits());
            total(m, "tailor_nbd_admission_drawn_main_cost_units_total", "Cost drawn from the main pool",
                    s.drawnMainCostUnits());
            total(m, "tailor_nbd_admission_drawn_reserve_cost_units_total",
                    "Cost steady segments drew from the reserve", s.drawnReserveCostUnits());
            total(m, "tailor_nbd_admission_lent_reserve_cost_units_total",
                    "Cost hot segments drew from the lent part of the reserve", s.lentReserveCostUnits());
            total(m, "tailor_nbd_admission_borrowed_cost_units_total", "Cost borrowed beyond the budget",
                    s.borrowedCostUnits());
            total(m, "tailor_nbd_admission_bursts_borrowing_total", "Intervals that borrowed headroom",
                    s.burstsBorrowing());
            gauge(m, "tailor_nbd_admission_debt_cost_units", "Debt outstanding now");
            m.append("tailor_nbd_admission_debt_cost_units ").append(s.debtCostUnits()).append('\n');
            List<AdmissionDispatcher.ExportCounters> exports = admission.exportCounters();
            perExport(m, "tailor_nbd_admission_export_requests_total", "READs and WRITEs that reached admission",
                    exports, AdmissionDispatcher.ExportCounters::requests);
            perExport(m, "tailor_nbd_admission_export_arrived_hot_total", "Of them, arrived on hot segments",
                    exports, AdmissionDispatcher.ExportCounters::arrivedHot);
            perExport(m, "tailor_nbd_admission_export_queued_total", "Of them, waited in a segment queue",
                    exports, AdmissionDispatcher.ExportCounters::queued);
            perExport(m, "tailor_nbd_admission_export_refused_total", "Of them, refused (segment queue full)",
                    exports, AdmissionDispatcher.ExportCounters::refused);
            counter(m, "tailor_nbd_admission_export_queue_wait_seconds_total",
                    "Total wait of the queued requests dispatched so far");
            for (AdmissionDispatcher.ExportCounters e : exports) {
                exportSample(m, "tailor_nbd_admission_export_queue_wait_seconds_total", e.export(),
                        e.queueWaitNanos() / 1e9);
            }
            gauge(m, "tailor_nbd_admission_export_queue_wait_max_seconds", "Longest wait of a queued request");
            for (AdmissionDispatcher.ExportCounters e : exports) {
                exportSample(m, "tailor_nbd_admission_export_queue_wait_max_seconds", e.export(),
                        e.maxQueueWaitNanos() / 1e9);
            }
        }
        return m.toString();
    }

    private static void gauge(StringBuilder m, String name, String help) {
        m.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name).append(" gauge\n");
    }

    private static void counter(StringBuilder m, String name, String help) {
        m.append("# HELP ").append(name).append(' ').append(help).append("\n# TYPE ").append(name)
                .append(" counter\n");
    }

    private static void total(StringBuilder m, String name, String help, long value) {
        counter(m, name, help);
        m.append(name).append(' ').append(value).append('\n');
    }

    private static void perExport(StringBuilder m, String name, String help,
            List<AdmissionDispatcher.ExportCounters> exports,
            java.util.function.ToLongFunction<AdmissionDispatcher.ExportCounters> value) {
        counter(m, name, help);
        for (AdmissionDispatcher.ExportCounters e : exports) {
            m.append(name).append("{export=\"").append(escape(e.export())).append("\"} ")
                    .append(value.applyAsLong(e)).append('\n');
        }
    }

    private static void exportSample(StringBuilder m, String name, String export, double value) {
        m.append(name).append("{export=\"").append(escape(export)).append("\"} ")
                .append(String.format(Locale.ROOT, "%.9g", value)).append('\n');
    }

    /** A label value in the text format: backslash, double quote and line feed escaped. */
    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static void sample(StringBuilder m, String name, int loop, double value) {
        m.append(name).append("{loop=\"").append(loop).append("\"} ")
                .append(Double.isNaN(value) ? "NaN" : String.format(Locale.ROOT, "%.9g", value)).append('\n');
    }

    /** The text of the last metrics export (empty before the first). */
    public String lastMetrics() {
        return lastMetrics;
    }

    /** Health checks run so far, all loops. */
    public long healthChecks() {
        return healthChecks.sum();
    }

    /** Maintenance runs so far, all loops. */
    public long maintenanceRuns() {
        return maintenanceRuns.sum();
    }

    @Override
    public void close() {
        scheduled.forEach(f -> f.cancel(false));
    }
}
