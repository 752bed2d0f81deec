package dev.tailor.nbd.server;

import dev.tailor.admission.AdmissionConfig;
import dev.tailor.nbd.protocol.NbdProtocol;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.datapoints.GaugeDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The server's I/O metrics per export and operation, in one prometheus-metrics registry of its own
 * (one per server, so servers in one JVM do not mix), with the library's JVM and process collectors.
 * Served with the loops' metrics on {@code /metrics} ({@link ProxyBackgroundWork#collect()}); the series
 * are documented in docs/nbd.md, "Metrics".
 *
 * <ul>
 *   <li>{@code tailor_nbd_requests_total{export,operation}}: requests finished: answered, errors included, or
 *       dropped because their client went away;</li>
 *   <li>{@code tailor_nbd_request_bytes_total{export,operation}}: bytes of the successful requests: read,
 *       written, trimmed or zeroed (block status and flush: none);</li>
 *   <li>{@code tailor_nbd_request_duration_seconds{export,operation}}: a classic histogram of the time
 *       from a request's header decoded to its reply handed to the socket (waiting for admission, an
 *       older overlapping write, the backend);</li>
 *   <li>{@code tailor_nbd_request_errors_total{export,operation,error}}: error replies sent, by NBD error
 *       ({@code einval}, {@code eperm}, {@code eio}, {@code enospc}, {@code eshutdown}, ...);</li>
 *   <li>{@code tailor_nbd_requests_dropped_total{export,operation}}: requests whose reply could not be sent, their
 *       connection closed first (dropped: the client went away), whether they failed, succeeded or never reached
 *       the backend; not error replies;</li>
 *   <li>{@code tailor_nbd_export_connections{export}}: connections in the transmission phase on the export;</li>
 *   <li>{@code tailor_nbd_slow_requests_total{export,operation}}: requests that took longer than the slow
 *       threshold (decoded to answered); {@code tailor_nbd_slow_request_threshold_seconds}, a gauge, the threshold;</li>
 *   <li>{@code tailor_nbd_slow_segment_requests{export,segment}}: the slow requests of the (export, segment) pairs with
 *       the most of them in the last window (between half the window and the window,
 *       {@code tailor_nbd_slow_segment_window_seconds}), at most {@link #SLOW_SEGMENTS_KEPT} series
 *       ({@link SlowSegments}; {@code segment} is the offset divided by admission's segment size), and
 *       {@code tailor_nbd_slow_segment_overcount} beside each, how much its count may be too high;</li>
 *   <li>{@code tailor_nbd_slow_segment_seen_requests{export,segment}}, {@code
 *       tailor_nbd_slow_segment_admission_wait_seconds{export,segment}} and {@code
 *       tailor_nbd_slow_segment_backend_seconds{export,segment}}: gauges, of the same pairs' slow requests in the
 *       window, those seen while the pair had its counters, and their total time queued in admission and on the
 *       backend; {@code tailor_nbd_slow_segment_admitted_requests{export,segment,class}}: of them, those admitted as
 *       {@code steady}, as {@code hot}, or {@code none} (not through admission);</li>
 *   <li>{@code tailor_nbd_request_loop_unrelated_wait_seconds{export}}: a histogram, per request, of the unrelated
 *       work (statistics, metrics export, health checks, maintenance) its event loop ran while the request waited for
 *       the loop: between its bytes' arrival and its decoding (an upper bound, see docs/nbd.md), between its
 *       completion by the backend and the loop taking it, and between its reply's writing and the flush;</li>
 *   <li>{@code tailor_nbd_request_loop_work_seconds{export}}: a histogram, per request, of the time its event loop
 *       spent on the request's own work: checking and dispatching it, taking its completion, writing its reply, and
 *       its share of the flush;</li>
 *   <li>{@code tailor_nbd_request_loop_wait_seconds{export}}: a histogram, per request, of the wall time it waited for
 *       its event loop where both ends are known: from its completion by the backend to the loop taking it, and from
 *       its reply's writing to the flush (not its arrival: when its bytes arrived is not known). Less the completion
 *       and flush parts of the unrelated wait, it is the time the request waited behind other requests' work and the
 *       scheduler;</li>
 *   <li>{@code tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total{export}}: a counter, the arrival part of
 *       the unrelated wait of the requests traced, so that {@code loop_wait_seconds_sum - (unrelated_wait_seconds_sum -
 *       this)} is exactly their total time waiting behind other requests' work and the scheduler;</li>
 *   <li>{@code tailor_nbd_tls_handshakes_total{result}}: TLS handshakes after {@code STARTTLS}, {@code ok} or
 *       {@code failed};</li>
 *   <li>{@code tailor_nbd_tls_discarded_bytes_total}: plain-text bytes a client sent behind {@code STARTTLS}
 *       before its reply, discarded.</li>
 * </ul>
 *
 * <p>The hot path stays cheap: every export resolves its data points per operation once
 * ({@link ForExport}), so a request costs two clock readings, two counter additions and one histogram
 * observation, without a label lookup. Operations are {@code read}, {@code write}, {@code flush},
 * {@code trim}, {@code write_zeroes}, {@code block_status}, and {@code other} for unknown commands
 * (answered {@code EINVAL}). Threads: any.
 */
public final class IoMetrics {

    /** Latency buckets, seconds: 50 µs to 10 s, about 2.5 per decade (classic, for any Prometheus). */
    static final double[] DURATION_BUCKETS_SECONDS = {
        0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
    };

    /**
     * Buckets of the admission and door waits ({@code tailor_nbd_admission_wait_seconds},
     * {@code tailor_nbd_fair_dispatch_wait_seconds}), seconds, 25 bounds: 0; 100, 250 and 500 µs; from 1 ms to 1 s six
     * per decade, each at most 1.5 times the one below (the E6 series: 1, 1.5, 2.2, 3.3, 4.7, 6.8); then 2.5 and 10 s.
     * From 1 ms to 1 s lie admission's waits (its bound is a call period plus the disk's waiting requests at its
     * baseline: 33 ms for 64 requests at 2,000 IOPS; a loaded machine's 94 to 138 ms) and the door's behind a slow
     * backend, so a quantile interpolated within a bucket, as {@code histogram_quantile} does, is at most 1.5 times
     * off there: waits of 32 ms read a P99 under 33 ms (between the bounds before, 25 and 50 ms, it read 49.75). 0.1 s,
     * the alerts' threshold, is a bound. The bucket 0 holds the requests let through at once, so that a P99 is exactly
     * 0 while fewer than 1 % of an export's requests were held, and {@code 1 - bucket{le=~"0|0\\.0"} / count} is the
     * share held; a held request waits at least one statistics tick (admission) or one backend completion (the door),
     * so its wait is above 0. The text format writes that bound {@code 0.0}, which Prometheus 2 and 3 store as such and
     * the integer-keeping relabelling of Prometheus 3's migration guide turns into {@code 0}, so a query matches both
     * spellings (as in docs/nbd.md); {@code le="0"} alone finds nothing on a default Prometheus.
     */
    static final double[] WAIT_BUCKETS_SECONDS = {
        0, 0.0001, 0.00025, 0.0005, 0.001, 0.0015, 0.0022, 0.0033, 0.0047, 0.0068, 0.01, 0.015, 0.022, 0.033, 0.047,
        0.068, 0.1, 0.15, 0.22, 0.33, 0.47, 0.68, 1, 2.5, 10
    };

    /**
     * A histogram of waits in front of the backend, with {@link #WAIT_BUCKETS_SECONDS}, classic only and without
     * exemplars (nothing in the proxy traces), registered nowhere: its owner ({@link AdmissionDispatcher},
     * {@link FairDispatchDoor}) observes it, and {@link ProxyBackgroundWork#collect()} serves its snapshot. An
     * observation costs two {@code LongAdder} additions, a {@code DoubleAdder} addition, one striped
     * {@code AtomicLong} increment and a scan of the bounds, and allocates nothing once compiled (docs/nbd.md,
     * "Metrics").
     */
    static Histogram waitHistogram(String name, String help, String... labelNames) {
        return Histogram.builder()
                .name(name)
                .help(help)
                .labelNames(labelNames)
                .classicOnly()
                .classicUpperBounds(WAIT_BUCKETS_SECONDS)
                .withoutExemplars()
                .build();
    }

    /**
     * The slow threshold by default, ns: 50 ms, a few times a disk's service time and far above a page-cache
     * request, so that only requests that waited (behind admission, a burst, a stalled loop) count.
     */
    static final long DEFAULT_SLOW_REQUEST_NANOS = 50_000_000L;
    /** Bounds of the slow threshold, ns: more than 0, at most a minute (what the config and options accept). */
    public static final long MAX_SLOW_REQUEST_NANOS = 60_000_000_000L;

    /**
     * The window of the slow top by default, ns: 60 s, a few scrapes long, so the top says which segments are slow now
     * (what it reports covers the last 30 to 60 s).
     */
    static final long DEFAULT_SLOW_WINDOW_NANOS = 60_000_000_000L;

    /** How many (export, segment) pairs the slow-request attribution keeps and reports. */
    static final int SLOW_SEGMENTS_KEPT = 10;
    /**
     * Loop-tracing buckets, seconds: 1 µs to 1 s, about 2.5 per decade. A request that waited behind no unrelated
     * work falls in the first bucket, so that bucket's share is the share of requests the loop did not hold back.
     */
    static final double[] LOOP_BUCKETS_SECONDS = {
        0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
        0.025, 0.05, 0.1, 0.25, 1
    };

    /** The operation label of each command type 0..7, and {@code other}. */
    private static final String[] OPERATIONS = {
        "read", "write", "other", "flush", "trim", "other", "write_zeroes", "block_status"
    };

    private static final String OTHER = "other";

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final LongSupplier nanoClock;
    private final Counter requests;
    private final Counter bytes;
    private final Histogram duration;
    private final Counter errors;
    private final Counter dropped;
    private final Gauge connections;
    private final CounterDataPoint tlsHandshakesOk;
    private final CounterDataPoint tlsHandshakesFailed;
    private final Counter tlsDiscardedBytes;
    private final Counter slowRequests;
    private final Histogram loopUnrelatedWait;
    private final Histogram loopWork;
    private final Histogram loopWait;
    private final Counter loopArrivalUnrelatedWait;
    private final long slowRequestNanos;
    private final SlowSegments slowSegments;

    /**
     * With the default slow threshold and window, and admission's default segment size.
     *
     * @param nanoClock the clock of request durations, in ns ({@code System::nanoTime} in a server)
     * @param jvm       whether to register the JVM and process collectors too
     */
    public IoMetrics(LongSupplier nanoClock, boolean jvm) {
        this(nanoClock, jvm, DEFAULT_SLOW_REQUEST_NANOS, AdmissionConfig.DEFAULTS.segmentSizeBytes());
    }

    /** With the default window of the slow top (tests). */
    IoMetrics(LongSupplier nanoClock, boolean jvm, long slowRequestNanos, long segmentSizeBytes) {
        this(nanoClock, jvm, slowRequestNanos, DEFAULT_SLOW_WINDOW_NANOS, segmentSizeBytes);
    }

    /**
     * @param nanoClock        the clock of request durations and of the slow top's window, in ns
     *                         ({@code System::nanoTime} in a server)
     * @param jvm              whether to register the JVM and process collectors too
     * @param slowRequestNanos a request taking longer than this (ns, decoded to answered) counts as slow, 1 to
     *                         {@link #MAX_SLOW_REQUEST_NANOS}
     * @param slowWindowNanos  the window of the slow top, ns, at least 2 (it reports between half of it and all of it)
     * @param segmentSizeBytes bytes per segment of the slow-request attribution (admission's segment size)
     * @throws IllegalArgumentException when a value is out of range
     */
    public IoMetrics(
            LongSupplier nanoClock, boolean jvm, long slowRequestNanos, long slowWindowNanos, long segmentSizeBytes) {
        if (slowRequestNanos < 1 || slowRequestNanos > MAX_SLOW_REQUEST_NANOS) {
            throw new IllegalArgumentException(
                    "slowRequestNanos: " + slowRequestNanos + " (expected: 1 to " + MAX_SLOW_REQUEST_NANOS + ")");
        }
        this.nanoClock = nanoClock;
        this.slowRequestNanos = slowRequestNanos;
        this.slowSegments = new SlowSegments(SLOW_SEGMENTS_KEPT, segmentSizeBytes, slowWindowNanos);
        requests = Counter.builder()
                .name("tailor_nbd_requests")
                .help("NBD requests finished: answered, errors included, or dropped because their client went away")
                .labelNames("export", "operation")
                .register(registry);
        bytes = Counter.builder()
                .name("tailor_nbd_request_bytes")
                .help("Bytes of successful requests: read, written, trimmed or zeroed")
                .labelNames("export", "operation")
                .register(registry);
        duration = Histogram.builder()
                .name("tailor_nbd_request_duration_seconds")
                .help("Time from a request's header decoded to its reply handed to the socket")
                .labelNames("export", "operation")
                .classicOnly()
                .classicUpperBounds(DURATION_BUCKETS_SECONDS)
                .register(registry);
        errors = Counter.builder()
                .name("tailor_nbd_request_errors")
                .help("Error replies sent, by NBD error")
                .labelNames("export", "operation", "error")
                .register(registry);
        dropped = Counter.builder()
                .name("tailor_nbd_requests_dropped")
                .help("Requests whose reply could not be sent, their connection closed first (dropped: the client"
                        + " went away); not error replies")
                .labelNames("export", "operation")
                .register(registry);
        connections = Gauge.builder()
                .name("tailor_nbd_export_connections")
                .help("Connections in the transmission phase on the export")
                .labelNames("export")
                .register(registry);
        Counter tlsHandshakes = Counter.builder()
                .name("tailor_nbd_tls_handshakes")
                .help("TLS handshakes after STARTTLS, by result")
                .labelNames("result")
                .register(registry);
        tlsHandshakesOk = tlsHandshakes.labelValues("ok");
        tlsHandshakesFailed = tlsHandshakes.labelValues("failed");
        tlsDiscardedBytes = Counter.builder()
                .name("tailor_nbd_tls_discarded_bytes")
                .help("Plain-text bytes sent behind STARTTLS before its reply, discarded unread")
                .register(registry);
        slowRequests = Counter.builder()
                .name("tailor_nbd_slow_requests")
                .help("Requests that took longer than the slow threshold, decoded to answered")
                .labelNames("export", "operation")
                .register(registry);
        GaugeWithCallback.builder()
                .name("tailor_nbd_slow_request_threshold_seconds")
                .help("A request taking longer than this, decoded to answered, counts as slow")
                .callback(callback -> callback.call(slowRequestNanos / 1e9))
                .register(registry);
        GaugeWithCallback.builder()
                .name("tailor_nbd_slow_segment_window_seconds")
                .help("The window of the slow top: the tailor_nbd_slow_segment_* series cover the slow requests of"
                        + " between half of it and all of it, up to now")
                .callback(callback -> callback.call(slowSegments.epochNanos() * 2 / 1e9))
                .register(registry);
        // The slow top's six families from one reading of the top per scrape, so that a scrape's series agree
        // (requests - overcount = seen; the same pairs in every family), and the top is merged once, not six times.
        registry.register((MultiCollector) this::slowTopSnapshots);
        loopUnrelatedWait = Histogram.builder()
                .name("tailor_nbd_request_loop_unrelated_wait_seconds")
                .help("Per request: unrelated work its event loop ran while the request waited for the loop (arrival"
                        + " to decoding, an upper bound; completion to taken; reply to flush)")
                .labelNames("export")
                .classicOnly()
                .classicUpperBounds(LOOP_BUCKETS_SECONDS)
                .register(registry);
        loopWork = Histogram.builder()
                .name("tailor_nbd_request_loop_work_seconds")
                .help("Per request: time its event loop spent on the request's own work (check and dispatch, taking"
                        + " its completion, writing its reply, its share of the flush)")
                .labelNames("export")
                .classicOnly()
                .classicUpperBounds(LOOP_BUCKETS_SECONDS)
                .register(registry);
        loopWait = Histogram.builder()
                .name("tailor_nbd_request_loop_wait_seconds")
                .help("Per request: wall time it waited for its event loop where both ends are known (completion to"
                        + " taken; reply to flush; not arrival), behind unrelated work, other requests' work and the"
                        + " scheduler")
                .labelNames("export")
                .classicOnly()
                .classicUpperBounds(LOOP_BUCKETS_SECONDS)
                .register(registry);
        loopArrivalUnrelatedWait = Counter.builder()
                .name("tailor_nbd_request_loop_arrival_unrelated_wait_seconds")
                .help("The arrival part (arrival to decoding, an upper bound) of the unrelated wait of the requests"
                        + " traced in tailor_nbd_request_loop_unrelated_wait_seconds")
                .labelNames("export")
                .register(registry);
        if (jvm) {
            JvmMetrics.builder().register(registry);
        }
    }

    /** The (export, segment) pairs with the most slow requests in the window, now, most first (reports, tests). */
    public List<SlowSegments.Entry> slowSegments() {
        return slowTop();
    }

    /** The slow threshold, ns. */
    public long slowRequestNanos() {
        return slowRequestNanos;
    }

    /**
     * The {@code tailor_nbd_slow_segment_*} families (but {@code _window_seconds}) of one reading of the slow top;
     * none while it is empty (docs/nbd.md, Metrics: the families appear with the first slow request).
     */
    private MetricSnapshots slowTopSnapshots() {
        List<SlowSegments.Entry> top = slowTop();
        if (top.isEmpty()) {
            return MetricSnapshots.of();
        }
        GaugeSnapshot.Builder requests = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_requests")
                .help("Slow requests of the (export, segment) pairs with the most of them in the window"
                        + " (space-saving top-k: a count is at most its overcount too high)");
        GaugeSnapshot.Builder overcount = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_overcount")
                .help("How much tailor_nbd_slow_segment_requests of the pair may be too high");
        GaugeSnapshot.Builder seen = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_seen_requests")
                .help("Of the pair's slow requests in the window, those seen while it had its counters (requests less"
                        + " overcount): what its times and classes cover");
        GaugeSnapshot.Builder admissionWait = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_admission_wait_seconds")
                .help("Total time the pair's seen slow requests in the window were queued in admission or at the"
                        + " fair dispatch door");
        GaugeSnapshot.Builder backend = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_backend_seconds")
                .help("Total time the pair's seen slow requests in the window spent on the backend");
        GaugeSnapshot.Builder admitted = GaugeSnapshot.builder()
                .name("tailor_nbd_slow_segment_admitted_requests")
                .help("Of the pair's seen slow requests in the window, how many were admitted as steady, as hot, or"
                        + " not through admission (none)");
        for (SlowSegments.Entry entry : top) {
            Labels pair = Labels.of("export", entry.export(), "segment", Long.toString(entry.segment()));
            requests.dataPoint(point(entry.requests(), pair));
            overcount.dataPoint(point(entry.overcount(), pair));
            seen.dataPoint(point(entry.seen(), pair));
            admissionWait.dataPoint(point(entry.admissionWaitNanos() / 1e9, pair));
            backend.dataPoint(point(entry.backendNanos() / 1e9, pair));
            admitted.dataPoint(point(entry.admittedSteady(), pair.add("class", "steady")));
            admitted.dataPoint(point(entry.admittedHot(), pair.add("class", "hot")));
            admitted.dataPoint(
                    point(entry.seen() - entry.admittedSteady() - entry.admittedHot(), pair.add("class", "none")));
        }
        return MetricSnapshots.of(
                requests.build(),
                overcount.build(),
                seen.build(),
                admissionWait.build(),
                backend.build(),
                admitted.build());
    }

    private static GaugeSnapshot.GaugeDataPointSnapshot point(double value, Labels labels) {
        return GaugeSnapshot.GaugeDataPointSnapshot.builder()
                .value(value)
                .labels(labels)
                .build();
    }

    private List<SlowSegments.Entry> slowTop() {
        return slowSegments.top(nanoClock.getAsLong());
    }

    /** A TLS handshake after {@code STARTTLS} ended, successfully or not. */
    void tlsHandshake(boolean success) {
        (success ? tlsHandshakesOk : tlsHandshakesFailed).inc();
    }

    /** {@code bytes} sent behind {@code STARTTLS} before its reply were discarded. */
    void tlsDiscarded(long bytes) {
        tlsDiscardedBytes.inc(bytes);
    }

    /** TLS handshakes so far that ended {@code ok} (true) or {@code failed} (tests). */
    long tlsHandshakes(boolean success) {
        return (long) (success ? tlsHandshakesOk : tlsHandshakesFailed).get();
    }

    /** Plain-text bytes discarded behind {@code STARTTLS} so far (tests). */
    long tlsDiscardedBytes() {
        return (long) tlsDiscardedBytes.get();
    }

    /** The data points of {@code export}, resolved once. */
    ForExport forExport(String export) {
        return new ForExport(export);
    }

    /** The current reading of every series. */
    public MetricSnapshots scrape() {
        return registry.scrape();
    }

    /** The clock reading a request's duration starts from. */
    long nowNanos() {
        return nanoClock.getAsLong();
    }

    private static int index(int command) {
        return command >= 0 && command < OPERATIONS.length ? command : OPERATIONS.length;
    }

    /** The NBD error's label: its errno name in lower case, or {@code error_N}. */
    static String errorLabel(int error) {
        return switch (error) {
            case NbdProtocol.EPERM -> "eperm";
            case NbdProtocol.EIO -> "eio";
            case NbdProtocol.ENOMEM -> "enomem";
            case NbdProtocol.EINVAL -> "einval";
            case NbdProtocol.ENOSPC -> "enospc";
            case NbdProtocol.EOVERFLOW -> "eoverflow";
            case NbdProtocol.ENOTSUP -> "enotsup";
            case NbdProtocol.ESHUTDOWN -> "eshutdown";
            default -> "error_" + error;
        };
    }

    /** One export's data points, per operation (indexed by command type; the last is {@code other}). */
    final class ForExport {
        private final String export;
        private final CounterDataPoint[] requestCounts = new CounterDataPoint[OPERATIONS.length + 1];
        private final CounterDataPoint[] byteCounts = new CounterDataPoint[OPERATIONS.length + 1];
        private final DistributionDataPoint[] durations = new DistributionDataPoint[OPERATIONS.length + 1];
        private final GaugeDataPoint connectionCount;
        private final CounterDataPoint[] slowCounts = new CounterDataPoint[OPERATIONS.length + 1];
        private final CounterDataPoint[] droppedCounts = new CounterDataPoint[OPERATIONS.length + 1];
        private final DistributionDataPoint loopUnrelatedWaitSeconds;
        private final DistributionDataPoint loopWorkSeconds;
        private final DistributionDataPoint loopWaitSeconds;
        private final CounterDataPoint loopArrivalUnrelatedWaitSeconds;

        private ForExport(String export) {
            this.export = export;
            for (int i = 0; i <= OPERATIONS.length; i++) {
                String operation = i < OPERATIONS.length ? OPERATIONS[i] : OTHER;
                requestCounts[i] = requests.labelValues(export, operation);
                byteCounts[i] = bytes.labelValues(export, operation);
                durations[i] = duration.labelValues(export, operation);
                slowCounts[i] = slowRequests.labelValues(export, operation);
                droppedCounts[i] = dropped.labelValues(export, operation);
            }
            connectionCount = connections.labelValues(export);
            loopUnrelatedWaitSeconds = loopUnrelatedWait.labelValues(export);
            loopWorkSeconds = loopWork.labelValues(export);
            loopWaitSeconds = loopWait.labelValues(export);
            loopArrivalUnrelatedWaitSeconds = loopArrivalUnrelatedWait.labelValues(export);
        }

        /** As below, for a request without an offset to attribute (tests). */
        void answered(int command, long startNanos, long bytes, int error) {
            answered(command, startNanos, 0, bytes, error);
        }

        /** As below, for a request without admission or backend time to attribute (tests). */
        void answered(int command, long startNanos, long offsetBytes, long bytes, int error) {
            answered(command, startNanos, offsetBytes, bytes, error, 0, 0, SlowSegments.NOT_ADMITTED, true);
        }

        /**
         * Counts one finished request; one slower than the slow threshold is also attributed to its segment, with
         * where its time went. A request whose reply could not be sent (its connection closed first) counts as
         * dropped, not as an error reply, whatever its outcome.
         *
         * @param command            its command type
         * @param startNanos         {@link #nowNanos()} when its header was decoded
         * @param offsetBytes        its offset (unsigned), for the slow-request attribution
         * @param bytes              bytes read, written, trimmed or zeroed (0 for an error)
         * @param error              the NBD error of its reply, 0 for success
         * @param admissionWaitNanos its time queued in admission, ns
         * @param backendNanos       its time on the backend, ns
         * @param admittedClass      {@link SlowSegments#NOT_ADMITTED}, {@code STEADY} or {@code HOT}
         * @param sent               whether its reply is sent; false when its connection closed first
         */
        void answered(
                int command,
                long startNanos,
                long offsetBytes,
                long bytes,
                int error,
                long admissionWaitNanos,
                long backendNanos,
                int admittedClass,
                boolean sent) {
            int i = index(command);
            requestCounts[i].inc();
            if (bytes > 0) {
                byteCounts[i].inc(bytes);
            }
            long elapsedNanos = nanoClock.getAsLong() - startNanos;
            durations[i].observe(elapsedNanos / 1e9);
            if (!sent) {
                droppedCounts[i].inc();
            } else if (error != 0) {
                errors.labelValues(export, i < OPERATIONS.length ? OPERATIONS[i] : OTHER, errorLabel(error))
                        .inc();
            }
            if (elapsedNanos > slowRequestNanos) {
                slowCounts[i].inc();
                slowSegments.record(
                        startNanos + elapsedNanos,
                        export,
                        offsetBytes,
                        admissionWaitNanos,
                        backendNanos,
                        admittedClass);
            }
        }

        /**
         * Records one request's loop trace (per-request loop tracing).
         *
         * @param unrelatedWaitNanos        unrelated work its loop ran while it waited for the loop (at arrival,
         *                                  completion and flush), ns
         * @param arrivalUnrelatedWaitNanos the arrival part of {@code unrelatedWaitNanos}, ns
         * @param workNanos                 time its loop spent on its own work, ns
         * @param loopWaitNanos             wall time it waited for its loop at completion and flush, ns
         */
        void traced(long unrelatedWaitNanos, long arrivalUnrelatedWaitNanos, long workNanos, long loopWaitNanos) {
            loopUnrelatedWaitSeconds.observe(Math.max(0, unrelatedWaitNanos) / 1e9);
            if (arrivalUnrelatedWaitNanos > 0) {
                loopArrivalUnrelatedWaitSeconds.inc(arrivalUnrelatedWaitNanos / 1e9);
            }
            loopWorkSeconds.observe(Math.max(0, workNanos) / 1e9);
            loopWaitSeconds.observe(Math.max(0, loopWaitNanos) / 1e9);
        }

        /** A connection entered the transmission phase on the export. */
        void connected() {
            connectionCount.inc();
        }

        /** A connection in the transmission phase on the export closed. */
        void disconnected() {
            connectionCount.dec();
        }

        /** Requests finished so far for {@code command}, those dropped included (tests, reports). */
        long requests(int command) {
            return (long) requestCounts[index(command)].get();
        }

        /** Bytes of the successful requests of {@code command} so far. */
        long bytes(int command) {
            return (long) byteCounts[index(command)].get();
        }
    }
}
