package dev.tailor.nbd.server;

import dev.tailor.admission.AdmissionStats;
import dev.tailor.common.IoErrors;
import dev.tailor.eventloop.EventLoopMetrics;
import dev.tailor.eventloop.IoPriorityEventLoop;
import dev.tailor.eventloop.IoPriorityEventLoopGroup;
import dev.tailor.nbd.config.BackgroundSettings;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The proxy's own background work, run as <em>unrelated</em> tasks on its event loops
 * (docs/design.md#io-priority-event-loop): what a storage proxy does besides moving requests, and what
 * competes with request I/O for the loop thread.
 *
 * <ul>
 *   <li><b>Per-segment statistics</b>, every {@code statisticsPeriodMicros} (default 1,000) on every
 *       loop: the admission controller's tick (boundaries, reserve lending, queue service), when
 *       admission is on.</li>
 *   <li><b>Metrics export</b>, every {@code metricsPeriodMillis} (default 1,000) on the first loop: the
 *       loops' and admission's counters in the Prometheus text format, written atomically to
 *       {@code metricsFile} when one is configured (node_exporter's textfile collector reads such
 *       files); without one, only the health check's window of ages turns over (the text is rendered
 *       when scraped, not every period for no reader).</li>
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

    /** Text format 0.0.4, the one Prometheus and node_exporter's textfile collector read. */
    private static final PrometheusTextFormatWriter TEXT_FORMAT =
            ExpositionFormats.init().getPrometheusTextFormatWriter();

    private final List<ScheduledFuture<?>> scheduled = new ArrayList<>();
    private final IoPriorityEventLoopGroup loops;
    private final AdmissionDispatcher admission;
    private final FairDispatchDoor door;
    private final ConnectionAdmission connections;
    private final IoMetrics io;
    private final List<Export> exports;
    private final BackgroundSettings config;
    private final LongSupplier nanoClock;
    private final long startedNanos;
    private final LongAdder maintenanceRuns = new LongAdder();
    private final LongAdder healthChecks = new LongAdder();
    private final LongAdder metricsExports = new LongAdder();
    /** Why the last write of the metrics file failed, or null while they succeed (the exporting loop's). */
    private volatile String metricsFileFailure;
    /** Per loop: when its last health check completed (written by that loop's thread only). */
    private final long[] lastHealthCheckNanos;
    /** Per loop: the largest time between two of its health checks since the last metrics export. */
    private final AtomicLong[] healthCheckWindowMaxAgeNanos;
    /** Per loop: that largest time over the last complete metrics period (written by the export). */
    private final AtomicLongArray lastWindowMaxAgeNanos;

    /**
     * Schedules the work on every loop of {@code loops}.
     *
     * @param admission the admission dispatcher, or {@code null} when admission is off
     */
    public ProxyBackgroundWork(
            IoPriorityEventLoopGroup loops,
            AdmissionDispatcher admission,
            List<Export> exports,
            BackgroundSettings config,
            LongSupplier nanoClock) {
        this(loops, admission, exports, config, nanoClock, null);
    }

    /**
     * As above, with the server's connection admission, whose counts go into the metrics.
     *
     * @param connections the server's connection admission, or {@code null}
     */
    ProxyBackgroundWork(
            IoPriorityEventLoopGroup loops,
            AdmissionDispatcher admission,
            List<Export> exports,
            BackgroundSettings config,
            LongSupplier nanoClock,
            ConnectionAdmission connections) {
        this(loops, admission, exports, config, nanoClock, connections, null, null);
    }

    /**
     * As above, with the server's I/O metrics (per export and operation, JVM, process), served after
     * the loops' and admission's, and the fair dispatch door, whose counters go into the metrics.
     *
     * @param io   the I/O metrics, or {@code null}
     * @param door the door, or {@code null} when it is off
     */
    ProxyBackgroundWork(
            IoPriorityEventLoopGroup loops,
            AdmissionDispatcher admission,
            List<Export> exports,
            BackgroundSettings config,
            LongSupplier nanoClock,
            ConnectionAdmission connections,
            IoMetrics io,
            FairDispatchDoor door) {
        this.door = door;
        this.io = io;
        this.connections = connections;
        this.loops = loops;
        this.admission = admission;
        this.exports = List.copyOf(exports);
        this.config = config;
        this.nanoClock = nanoClock;
        int count = loops.loops().size();
        lastHealthCheckNanos = new long[count];
        healthCheckWindowMaxAgeNanos = new AtomicLong[count];
        lastWindowMaxAgeNanos = new AtomicLongArray(count);
        long now = nanoClock.getAsLong();
        startedNanos = now;
        for (int i = 0; i < count; i++) {
            lastHealthCheckNanos[i] = now;
            healthCheckWindowMaxAgeNanos[i] = new AtomicLong();
        }
        boolean first = true;
        int index = 0;
        for (IoPriorityEventLoop loop : loops.loops()) {
            int loopIndex = index++;
            if (admission != null) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(
                        admission::tick,
                        config.statisticsPeriodMicros(),
                        config.statisticsPeriodMicros(),
                        TimeUnit.MICROSECONDS));
            }
            scheduled.add(loop.scheduleHealthCheck(
                    () -> healthCheck(loopIndex), config.healthCheckPeriodMillis(), TimeUnit.MILLISECONDS));
            if (config.maintenanceBusyMicros() > 0) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(
                        () -> startMaintenance(loop),
                        config.maintenancePeriodMicros(),
                        config.maintenancePeriodMicros(),
                        TimeUnit.MICROSECONDS));
            }
            if (first) {
                scheduled.add(loop.scheduleUnrelatedAtFixedRate(
                        this::exportMetrics,
                        config.metricsPeriodMillis(),
                        config.metricsPeriodMillis(),
                        TimeUnit.MILLISECONDS));
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
        for (int i = 0; i < healthCheckWindowMaxAgeNanos.length; i++) {
            lastWindowMaxAgeNanos.set(i, healthCheckWindowMaxAgeNanos[i].getAndSet(0));
        }
        Path file = config.metricsFile();
        if (file != null) {
            String text = renderMetrics();
            System.Logger log = System.getLogger(ProxyBackgroundWork.class.getName());
            try {
                Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
                Files.writeString(tmp, text, StandardCharsets.UTF_8);
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                if (metricsFileFailure != null) {
                    metricsFileFailure = null;
                    log.log(System.Logger.Level.INFO, "writes metrics to " + file + " again");
                }
            } catch (IOException e) {
                // Once per cause, not every period (a warning a second for as long as the folder is gone).
                String reason = IoErrors.reason(e);
                if (!reason.equals(metricsFileFailure)) {
                    metricsFileFailure = reason;
                    log.log(
                            System.Logger.Level.WARNING,
                            "cannot write metrics to " + file + " (" + reason + "); said again when the reason"
                                    + " changes, and once it writes again");
                }
            }
            metricsExports.increment();
        }
    }

    /**
     * The metrics in the Prometheus text exposition format (version 0.0.4), rendered by
     * prometheus-metrics from {@link #collect()}. Reading has no side effects: the
     * {@code _window_max_} gauges cover the last complete metrics period (ended by the last export).
     */
    public String renderMetrics() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            TEXT_FORMAT.write(out, collect());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot render the metrics", e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The content type of {@link #renderMetrics()}, for an HTTP endpoint. */
    public static String metricsContentType() {
        return TEXT_FORMAT.getContentType();
    }

    /**
     * One consistent reading of the loops' and admission's metrics (admission's counters under one
     * lock): per loop (label {@code loop}) the unrelated-task age, health-check ages, dispatch-delay
     * bound (its largest, and a histogram of it) and unrelated tasks run; per export (label {@code export}) the requests of closed
     * connections dropped before they reached the backend and the writes held behind an older
     * overlapping one; with admission on, its pools, queues, per-export counters and wait histogram
     * ({@link AdmissionDispatcher#waitHistogram}); with the fair dispatch door on, its waiting and outstanding
     * requests, per-export counters and wait histogram ({@link FairDispatchDoor#waitHistogram}). Counters are named
     * without {@code _total}; the text format adds it. The {@code _max_} gauges of the waits are maxima since the
     * server started, for reports of a run; the histograms are what to read over a window.
     */
    public MetricSnapshots collect() {
        List<MetricSnapshot> m = new ArrayList<>();
        List<EventLoopMetrics> all = loops.metrics();
        m.add(perLoop(
                gauge("tailor_nbd_loop_oldest_unrelated_task_age_seconds", "Age of the oldest pending unrelated task"),
                all,
                l -> l.oldestUnrelatedAgeNanos() / 1e9));
        m.add(perLoop(
                gauge(
                        "tailor_nbd_loop_health_check_age_seconds",
                        "Time since the loop's last health check ran (NaN before the first)"),
                all,
                l -> {
                    long age = l.lastHealthCheckAgeNanos();
                    return age < 0 ? Double.NaN : age / 1e9;
                }));
        m.add(perLoop(
                gauge("tailor_nbd_loop_health_check_max_age_seconds", "Largest health-check age seen"),
                all,
                l -> l.healthCheckMaxAgeNanos() / 1e9));
        GaugeSnapshot.Builder window = gauge(
                "tailor_nbd_loop_health_check_window_max_age_seconds",
                "Largest time between two health checks in the last complete metrics period");
        for (int i = 0; i < lastWindowMaxAgeNanos.length(); i++) {
            window.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("loop", String.valueOf(i)))
                    .value(lastWindowMaxAgeNanos.get(i) / 1e9)
                    .build());
        }
        m.add(window.build());
        m.add(perLoop(
                gauge("tailor_nbd_loop_io_dispatch_delay_max_seconds", "Upper bound on readable-to-handled, largest"),
                all,
                l -> l.dispatchDelay().maxNanos() / 1e9));
        m.add(dispatchDelays(all));
        CounterSnapshot.Builder tasks = counter("tailor_nbd_loop_unrelated_tasks", "Unrelated tasks run");
        for (int i = 0; i < all.size(); i++) {
            tasks.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                    .labels(Labels.of("loop", String.valueOf(i)))
                    .value(all.get(i).tasks().unrelated())
                    .build());
        }
        m.add(tasks.build());
        CounterSnapshot.Builder dropped = counter(
                "tailor_nbd_export_dropped_requests",
                "Requests of closed connections dropped before they reached the backend");
        CounterSnapshot.Builder held = counter(
                "tailor_nbd_export_writes_held", "Writes that waited for an older overlapping write to complete");
        for (Export e : exports) {
            dropped.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                    .labels(Labels.of("export", e.name()))
                    .value(e.droppedRequests())
                    .build());
            held.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                    .labels(Labels.of("export", e.name()))
                    .value(e.heldWrites())
                    .build());
        }
        m.add(dropped.build());
        m.add(held.build());
        if (connections != null) {
            int[] counts = connections.counts();
            m.add(value("tailor_nbd_connections_open", "Client connections open now", counts[0]));
            m.add(value(
                    "tailor_nbd_connections_handshaking",
                    "Client connections open now that are still in the handshake",
                    counts[1]));
            CounterSnapshot.Builder refusedConnections = counter(
                    "tailor_nbd_connections_refused",
                    "New connections refused at accept, by the limit that refused them");
            for (ConnectionAdmission.Refusal reason : ConnectionAdmission.Refusal.values()) {
                refusedConnections.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .labels(Labels.of("reason", reason.label))
                        .value(connections.refused(reason))
                        .build());
            }
            m.add(refusedConnections.build());
            m.add(total(
                    "tailor_nbd_connections_closed_idle",
                    "Connections closed by the idle timeout",
                    connections.idleClosed()));
            m.add(total(
                    "tailor_nbd_connections_evicted",
                    "Idle handshakes closed to make room for newcomers",
                    connections.evictions()));
        }
        if (admission != null) {
            AdmissionStats s = admission.stats();
            m.add(total("tailor_nbd_admission_admitted", "Requests admitted", s.admittedRequests()));
            m.add(total("tailor_nbd_admission_queued", "Requests that waited for admission", s.queuedRequests()));
            m.add(total("tailor_nbd_admission_refused", "Requests refused (segment queue full)", s.refusedRequests()));
            m.add(value("tailor_nbd_admission_waiting", "Requests waiting for admission now", s.waitingRequests()));
            m.add(total(
                    "tailor_nbd_admission_cancelled",
                    "Waiting requests withdrawn, their connection closed",
                    s.cancelledRequests()));
            m.add(total(
                    "tailor_nbd_admission_admitted_steady", "Requests admitted as steady", s.admittedSteadyRequests()));
            m.add(total("tailor_nbd_admission_intervals", "Admission intervals begun", s.intervalsBegun()));
            m.add(total(
                    "tailor_nbd_admission_budget_cost_units",
                    "Cost units the pools were given",
                    s.budgetIssuedCostUnits()));
            m.add(total(
                    "tailor_nbd_admission_drawn_main_cost_units",
                    "Cost drawn from the main pool",
                    s.drawnMainCostUnits()));
            m.add(total(
                    "tailor_nbd_admission_drawn_reserve_cost_units",
                    "Cost steady segments drew from the reserve",
                    s.drawnReserveCostUnits()));
            m.add(total(
                    "tailor_nbd_admission_lent_reserve_cost_units",
                    "Cost hot segments drew from the lent part of the reserve",
                    s.lentReserveCostUnits()));
            m.add(total(
                    "tailor_nbd_admission_borrowed_cost_units",
                    "Cost borrowed beyond the budget",
                    s.borrowedCostUnits()));
            m.add(total(
                    "tailor_nbd_admission_bursts_borrowing", "Intervals that borrowed headroom", s.burstsBorrowing()));
            m.add(value("tailor_nbd_admission_debt_cost_units", "Debt outstanding now", s.debtCostUnits()));
            List<AdmissionDispatcher.ExportCounters> exports = admission.exportCounters();
            m.add(perExport(
                    counter("tailor_nbd_admission_export_requests", "READs and WRITEs that reached admission"),
                    exports,
                    AdmissionDispatcher.ExportCounters::requests));
            m.add(perExport(
                    counter(
                            "tailor_nbd_admission_export_arrived_hot",
                            "READs and WRITEs that reached admission on hot segments"),
                    exports,
                    AdmissionDispatcher.ExportCounters::arrivedHot));
            m.add(perExport(
                    counter(
                            "tailor_nbd_admission_export_queued",
                            "READs and WRITEs that waited in a segment queue of admission"),
                    exports,
                    AdmissionDispatcher.ExportCounters::queued));
            m.add(perExport(
                    counter(
                            "tailor_nbd_admission_export_refused",
                            "READs and WRITEs admission refused (segment queue full)"),
                    exports,
                    AdmissionDispatcher.ExportCounters::refused));
            m.add(perExport(
                    counter(
                            "tailor_nbd_admission_export_queue_wait_seconds",
                            "Total wait of the queued requests dispatched so far"),
                    exports,
                    e -> e.queueWaitNanos() / 1e9));
            m.add(perExportGauge(
                    gauge(
                            "tailor_nbd_admission_export_queue_wait_max_seconds",
                            "Longest wait of a queued request since the server started (not over a window:"
                                    + " tailor_nbd_admission_wait_seconds is)"),
                    exports,
                    e -> e.maxQueueWaitNanos() / 1e9));
            m.add(perExportGauge(
                    gauge(
                            "tailor_nbd_admission_export_waiting",
                            "READs and WRITEs of the export waiting in a segment queue of admission now (what a"
                                    + " new request of the export waits behind)"),
                    exports,
                    AdmissionDispatcher.ExportCounters::waiting));
            m.add(admission.waitHistogram());
        }
        if (door != null) {
            // One door per backend: its series labelled with the backend's name.
            GaugeSnapshot.Builder waiting =
                    gauge("tailor_nbd_fair_dispatch_waiting", "READs and WRITEs waiting at the backend's door now");
            GaugeSnapshot.Builder outstanding = gauge(
                    "tailor_nbd_fair_dispatch_outstanding",
                    "READs and WRITEs the backend's door let through that have not completed");
            GaugeSnapshot.Builder depth =
                    gauge("tailor_nbd_fair_dispatch_depth", "The most the backend's door lets through at once");
            CounterSnapshot.Builder skipped = counter(
                    "tailor_nbd_fair_dispatch_skipped",
                    "Waiting requests skipped at their turn, their connection closed");
            for (FairDispatchDoor.DoorCounters d : door.doorCounters()) {
                Labels labels = Labels.of("backend", d.backend());
                waiting.dataPoint(level(labels, d.waiting()));
                outstanding.dataPoint(level(labels, d.outstanding()));
                depth.dataPoint(level(labels, d.depth()));
                skipped.dataPoint(point(labels, d.skipped()));
            }
            m.add(waiting.build());
            m.add(outstanding.build());
            m.add(depth.build());
            m.add(skipped.build());
            List<FairDispatchDoor.ExportCounters> exports = door.exportCounters();
            CounterSnapshot.Builder requests =
                    counter("tailor_nbd_fair_dispatch_export_requests", "READs and WRITEs that reached the door");
            CounterSnapshot.Builder waited =
                    counter("tailor_nbd_fair_dispatch_export_waited", "READs and WRITEs that waited at the door");
            CounterSnapshot.Builder waitSeconds = counter(
                    "tailor_nbd_fair_dispatch_export_wait_seconds",
                    "Total wait at the door of the requests let through after waiting");
            GaugeSnapshot.Builder maxWait = gauge(
                    "tailor_nbd_fair_dispatch_export_wait_max_seconds",
                    "Longest wait of a request at the door since the server started (not over a window:"
                            + " tailor_nbd_fair_dispatch_wait_seconds is)");
            for (FairDispatchDoor.ExportCounters e : exports) {
                Labels labels = Labels.of("backend", e.backend(), "export", e.export());
                requests.dataPoint(point(labels, e.requests()));
                waited.dataPoint(point(labels, e.waited()));
                waitSeconds.dataPoint(point(labels, e.waitNanos() / 1e9));
                maxWait.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .labels(labels)
                        .value(e.maxWaitNanos() / 1e9)
                        .build());
            }
            m.add(requests.build());
            m.add(waited.build());
            m.add(waitSeconds.build());
            m.add(maxWait.build());
            m.add(door.waitHistogram());
        }
        if (io != null) {
            io.scrape().forEach(m::add);
        }
        return new MetricSnapshots(m);
    }

    private static GaugeSnapshot.Builder gauge(String name, String help) {
        return GaugeSnapshot.builder().name(name).help(help);
    }

    private static CounterSnapshot.Builder counter(String name, String help) {
        return CounterSnapshot.builder().name(name).help(help);
    }

    /**
     * {@code tailor_nbd_loop_io_dispatch_delay_seconds{loop}}: a classic histogram of the loop's dispatch-delay bound,
     * one observation per poll that dispatched I/O ({@link EventLoopMetrics.DispatchDelay}), in the buckets of
     * {@link EventLoopMetrics.DispatchDelay#BUCKET_BOUNDS_NANOS}: what to read over a window, where the {@code _max_}
     * gauge is since the start. The count is the buckets' sum, so the histogram is consistent in itself.
     */
    private static HistogramSnapshot dispatchDelays(List<EventLoopMetrics> loops) {
        List<Long> boundsNanos = EventLoopMetrics.DispatchDelay.BUCKET_BOUNDS_NANOS;
        double[] bounds = new double[boundsNanos.size() + 1];
        for (int i = 0; i < boundsNanos.size(); i++) {
            bounds[i] = boundsNanos.get(i) / 1e9;
        }
        bounds[boundsNanos.size()] = Double.POSITIVE_INFINITY;
        HistogramSnapshot.Builder histogram = HistogramSnapshot.builder()
                .name("tailor_nbd_loop_io_dispatch_delay_seconds")
                .help("Upper bound on readable-to-handled, per poll that dispatched I/O");
        for (int i = 0; i < loops.size(); i++) {
            EventLoopMetrics.DispatchDelay d = loops.get(i).dispatchDelay();
            long[] counts = d.buckets().stream().mapToLong(Long::longValue).toArray();
            histogram.dataPoint(HistogramSnapshot.HistogramDataPointSnapshot.builder()
                    .labels(Labels.of("loop", String.valueOf(i)))
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(bounds, counts))
                    .sum(d.totalNanos() / 1e9)
                    .build());
        }
        return histogram.build();
    }

    private static GaugeSnapshot perLoop(
            GaugeSnapshot.Builder gauge, List<EventLoopMetrics> loops, ToDoubleFunction<EventLoopMetrics> value) {
        for (int i = 0; i < loops.size(); i++) {
            gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("loop", String.valueOf(i)))
                    .value(value.applyAsDouble(loops.get(i)))
                    .build());
        }
        return gauge.build();
    }

    private static CounterSnapshot perExport(
            CounterSnapshot.Builder counter,
            List<AdmissionDispatcher.ExportCounters> exports,
            ToDoubleFunction<AdmissionDispatcher.ExportCounters> value) {
        for (AdmissionDispatcher.ExportCounters e : exports) {
            counter.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                    .labels(Labels.of("export", e.export()))
                    .value(value.applyAsDouble(e))
                    .build());
        }
        return counter.build();
    }

    private static GaugeSnapshot perExportGauge(
            GaugeSnapshot.Builder gauge,
            List<AdmissionDispatcher.ExportCounters> exports,
            ToDoubleFunction<AdmissionDispatcher.ExportCounters> value) {
        for (AdmissionDispatcher.ExportCounters e : exports) {
            gauge.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                    .labels(Labels.of("export", e.export()))
                    .value(value.applyAsDouble(e))
                    .build());
        }
        return gauge.build();
    }

    private static CounterSnapshot.CounterDataPointSnapshot point(Labels labels, double value) {
        return CounterSnapshot.CounterDataPointSnapshot.builder()
                .labels(labels)
                .value(value)
                .build();
    }

    private static GaugeSnapshot.GaugeDataPointSnapshot level(Labels labels, double value) {
        return GaugeSnapshot.GaugeDataPointSnapshot.builder()
                .labels(labels)
                .value(value)
                .build();
    }

    private static CounterSnapshot total(String name, String help, long value) {
        return counter(name, help)
                .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder()
                        .value(value)
                        .build())
                .build();
    }

    private static GaugeSnapshot value(String name, String help, long value) {
        return gauge(name, help)
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder()
                        .value(value)
                        .build())
                .build();
    }

    /**
     * The first loop whose last health check is older than {@code stalenessNanos} (before its first
     * one: whose work started that long ago), or -1 when none is; for {@link MetricsEndpoint}'s
     * {@code /healthz}. Any thread.
     */
    public int staleLoop(long stalenessNanos) {
        List<EventLoopMetrics> all = loops.metrics();
        long sinceStart = nanoClock.getAsLong() - startedNanos;
        for (int i = 0; i < all.size(); i++) {
            long age = all.get(i).lastHealthCheckAgeNanos();
            if ((age < 0 ? sinceStart : age) > stalenessNanos) {
                return i;
            }
        }
        return -1;
    }

    /** Metrics exports that tried to write the metrics file so far, whether or not they could. */
    public long metricsFileExports() {
        return metricsExports.sum();
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
