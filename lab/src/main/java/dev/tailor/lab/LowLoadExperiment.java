package dev.tailor.lab;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The low-load experiment with a real client: {@code tailor nbd serve --loop fifo} vs
 * {@code --loop priority} while the proxy's background work runs. The same design, defaults and output
 * as {@code bench/run-eventloop.sh} had:
 *
 * <ul>
 *   <li>One export, a 256 MiB file of random data on tmpfs ({@code /dev/shm} when writable, else the work
 *       directory), one proxy event loop, 2 file I/O threads. One fio job: 4 KiB random reads, queue
 *       depth 1, {@code iops} per second.</li>
 *   <li>The loop's background work: per-segment statistics every 1 ms, the metrics export every second,
 *       a health check every {@code healthMillis}, and the synthetic maintenance: every
 *       {@code periodMicros}, {@code tasks} tasks of {@code busyMicros} of CPU each, queued at once.</li>
 *   <li>Each round runs fifo, then priority (A B A B ...), a fresh proxy each time.</li>
 * </ul>
 *
 * <p>The health-check age is sampled while fio runs: the metrics file is read every 100 ms, and of each
 * export its {@code tailor_nbd_loop_health_check_window_max_age_seconds} (the largest gap between two
 * health checks since the previous export) counts when the export's one-second window lies inside fio's
 * measured time ({@link MeasuredTime}). The bound is twice the period.
 */
public final class LowLoadExperiment {

    static final double[] PERCENTS = {50, 99, 99.9};
    static final List<String> MODES = List.of("fifo", "priority");
    /** The file the client reads. */
    static final long FILE_BYTES = 256L << 20;

    private static final Pattern WINDOW_MAX_AGE =
            Pattern.compile("(?m)^tailor_nbd_loop_health_check_window_max_age_seconds\\{loop=\"0\"} (\\S+)$");

    private LowLoadExperiment() {}

    /**
     * The experiment's settings; the defaults are the script's.
     *
     * @param runtimeSeconds measured seconds per run
     * @param rampSeconds    warm-up seconds per run, not measured
     * @param rounds         rounds of (fifo, priority)
     * @param iops           the fio job's reads per second
     * @param tasks          maintenance tasks per period; 0 turns maintenance off
     * @param busyMicros     CPU time of each maintenance task, µs
     * @param periodMicros   maintenance period, µs
     * @param healthMillis   health-check period, ms
     * @param dir            the work directory
     */
    public record Settings(
            int runtimeSeconds,
            int rampSeconds,
            int rounds,
            int iops,
            int tasks,
            int busyMicros,
            int periodMicros,
            int healthMillis,
            Path dir) {

        static Settings defaults(Path dir) {
            return new Settings(45, 5, 2, 500, 100, 100, 100_000, 100, dir);
        }

        Settings shortened(int runtime, int ramp, int roundCount) {
            return new Settings(runtime, ramp, roundCount, iops, tasks, busyMicros, periodMicros, healthMillis, dir);
        }

        /** Whether the synthetic maintenance runs. */
        boolean maintenance() {
            return tasks > 0 && busyMicros > 0;
        }

        /** The health-check bound: twice the period, ms. */
        double boundMillis() {
            return 2.0 * healthMillis;
        }

        /**
         * About how long {@link LowLoadExperiment#run} takes, seconds: each run's ramp and runtime plus {@link
         * BurstExperiment#RUN_OVERHEAD_SECONDS} (the proxy's fresh JVM, fio's start and end, the export after
         * fio's last second, the proxy's stop), and 1 s once to write the data file. The defaults: 221 s; one
         * round of 2 + 6 s: 27 s.
         */
        int estimatedSeconds() {
            return (rampSeconds + runtimeSeconds + BurstExperiment.RUN_OVERHEAD_SECONDS) * MODES.size() * rounds + 1;
        }
    }

    /**
     * One health-check window seen while fio measured.
     *
     * @param secondsIntoMeasurement when the export was seen, s after fio's warm-up ended
     * @param maxAgeMillis           the largest gap between two health checks in that window, ms
     */
    record AgeSample(double secondsIntoMeasurement, double maxAgeMillis) {}

    /**
     * One run.
     *
     * @param latency                 the job's read latency
     * @param iops                    its reads per second
     * @param ages                    the health-check windows that ended while fio measured
     * @param sinceStartMaxAgeMillis  the largest health-check age since the proxy started, ms (NaN: none)
     * @param cpuPressurePercent      share of the run in which some task on the machine waited for a CPU
     *                                ({@code /proc/pressure/cpu}); NaN where the kernel does not report it
     */
    record Run(
            String mode,
            int round,
            FioLatency latency,
            double iops,
            List<AgeSample> ages,
            double sinceStartMaxAgeMillis,
            double cpuPressurePercent,
            LoopTrace loopTrace) {

        Run(
                String mode,
                int round,
                FioLatency latency,
                double iops,
                List<AgeSample> ages,
                double sinceStartMaxAgeMillis,
                double cpuPressurePercent) {
            this(mode, round, latency, iops, ages, sinceStartMaxAgeMillis, cpuPressurePercent, LoopTrace.NONE);
        }

        /** The largest health-check age while fio measured, ms; NaN when no window was seen. */
        double maxAgeMillis() {
            return ages.stream().mapToDouble(AgeSample::maxAgeMillis).max().orElse(Double.NaN);
        }
    }

    /**
     * The proxy's per-request loop tracing inside fio's measured time (the difference of the first and the last
     * metrics export written inside it), for the export {@code disk}: the unrelated work each request waited behind,
     * its own loop work, its wall wait for the loop at completion and flush, and the arrival part of the unrelated
     * wait (s, NaN without the counter), which makes the loop wait's part behind other requests' work exact
     * ({@link #behindOtherWorkMeanSeconds}).
     */
    record LoopTrace(
            MetricsText.Histogram unrelatedWait,
            MetricsText.Histogram work,
            MetricsText.Histogram loopWait,
            double arrivalUnrelatedSeconds) {

        static final LoopTrace NONE = new LoopTrace(
                MetricsText.Histogram.NONE, MetricsText.Histogram.NONE, MetricsText.Histogram.NONE, Double.NaN);

        /** From the export taken when fio's measurement began to the last one. */
        static LoopTrace between(MetricsText before, MetricsText after) {
            String wait = "tailor_nbd_request_loop_unrelated_wait_seconds";
            String work = "tailor_nbd_request_loop_work_seconds";
            String loopWait = "tailor_nbd_request_loop_wait_seconds";
            String arrival = "tailor_nbd_request_loop_arrival_unrelated_wait_seconds_total";
            return new LoopTrace(
                    after.histogram(wait, "export", "disk").minus(before.histogram(wait, "export", "disk")),
                    after.histogram(work, "export", "disk").minus(before.histogram(work, "export", "disk")),
                    after.histogram(loopWait, "export", "disk").minus(before.histogram(loopWait, "export", "disk")),
                    after.sum(arrival, "export", "disk") - zeroIfNaN(before.sum(arrival, "export", "disk")));
        }

        LoopTrace plus(LoopTrace other) {
            return new LoopTrace(
                    unrelatedWait.plus(other.unrelatedWait()),
                    work.plus(other.work()),
                    loopWait.plus(other.loopWait()),
                    Double.isNaN(arrivalUnrelatedSeconds)
                            ? other.arrivalUnrelatedSeconds()
                            : Double.isNaN(other.arrivalUnrelatedSeconds())
                                    ? arrivalUnrelatedSeconds
                                    : arrivalUnrelatedSeconds + other.arrivalUnrelatedSeconds());
        }

        /** The loop wait's mean part behind other requests' work and the scheduler, s; NaN without data. */
        double behindOtherWorkMeanSeconds() {
            return NbdTop.behindOtherWorkMeanSeconds(loopWait, unrelatedWait, arrivalUnrelatedSeconds);
        }

        private static double zeroIfNaN(double value) {
            return Double.isNaN(value) ? 0 : value;
        }
    }

    public record Result(Settings settings, List<Run> runs) {

        /** {@code mode}'s loop tracing, pooled over the rounds. */
        LoopTrace loopTrace(String mode) {
            return runs.stream()
                    .filter(r -> r.mode().equals(mode))
                    .map(Run::loopTrace)
                    .reduce(LoopTrace.NONE, LoopTrace::plus);
        }

        FioLatency pooled(String mode) {
            return FioLatency.pool(runs.stream()
                    .filter(r -> r.mode().equals(mode))
                    .map(Run::latency)
                    .toList());
        }

        /** The largest CPU pressure of any run, %; NaN when the kernel reports none. */
        double maxCpuPressurePercent() {
            return runs.stream()
                    .mapToDouble(Run::cpuPressurePercent)
                    .filter(p -> !Double.isNaN(p))
                    .max()
                    .orElse(Double.NaN);
        }

        /** The largest health-check age in {@code mode}'s runs while fio measured, ms; NaN when none. */
        double maxAgeMillis(String mode) {
            return runs.stream()
                    .filter(r -> r.mode().equals(mode))
                    .mapToDouble(Run::maxAgeMillis)
                    .filter(x -> !Double.isNaN(x))
                    .max()
                    .orElse(Double.NaN);
        }

        Run run(String mode, int round) {
            return runs.stream()
                    .filter(r -> r.mode().equals(mode) && r.round() == round)
                    .findFirst()
                    .orElseThrow();
        }
    }

    /**
     * Runs the experiment, about {@link Settings#estimatedSeconds}.
     *
     * @throws LabException (exit 1) when a program fails, naming it, with the end of its log
     */
    public static Result run(Settings s, List<String> serveCommand, PrintWriter err)
            throws IOException, InterruptedException {
        Path dir = BurstExperiment.prepare(s.dir(), List.of("run-"));
        try (ExperimentRig rig = new ExperimentRig(dir, serveCommand)) {
            Path shm = Path.of("/dev/shm");
            Path file = Files.isDirectory(shm) && Files.isWritable(shm)
                    ? Files.createTempFile(shm, "tailor-eventloop.", "")
                    : Files.createTempFile(dir, "disk.", "");
            rig.deleteOnClose(file);
            err.println("tailor: experiment: writing 256 MiB of random data to " + file);
            err.flush();
            rig.run(
                    "fill",
                    List.of(
                            "fio",
                            "--name=fill",
                            "--filename=" + file,
                            "--rw=write",
                            "--bs=1M",
                            "--size=256M",
                            "--refill_buffers",
                            "--output=/dev/null"),
                    Map.of());
            Path metricsFile = dir.resolve("metrics.prom");
            Path config = dir.resolve("tailor.yaml");
            Files.writeString(
                    config,
                    """
                    eventLoopThreads: 1     # one loop: the client and the proxy share two cores with other work
                    fileIoThreads: 2
                    loop:
                      metricsFile: %s
                      metricsPeriodMillis: 1000
                      healthCheckPeriodMillis: %d
                      maintenanceTasks: %d
                      maintenanceBusyMicros: %d
                      maintenancePeriodMicros: %d
                    exports:
                      - name: disk
                        file: %s
                    """.formatted(
                                    metricsFile,
                                    s.healthMillis(),
                                    Math.max(1, s.tasks()),
                                    s.maintenance() ? s.busyMicros() : 0,
                                    s.periodMicros(),
                                    file),
                    StandardCharsets.UTF_8);
            Path jobFile = dir.resolve("client.fio");
            Files.writeString(
                    jobFile, """
                    [global]
                    ioengine=nbd
                    uri=nbd://127.0.0.1:${PROXY_PORT}/disk
                    rw=randread
                    bs=4k
                    size=256M
                    iodepth=1
                    rate_iops=%d
                    time_based=1
                    runtime=%d
                    ramp_time=%d
                    lat_percentiles=1   # submission + completion: the nbd engine can spend a request's wait in either
                    percentile_list=50:99:99.9
                    [client]
                    """.formatted(s.iops(), s.runtimeSeconds(), s.rampSeconds()), StandardCharsets.UTF_8);

            List<Run> runs = new ArrayList<>();
            for (int round = 1; round <= s.rounds(); round++) {
                for (String mode : MODES) {
                    String name = "run-" + mode + "-" + round;
                    Files.deleteIfExists(metricsFile);
                    ExperimentRig.Proxy proxy = rig.startProxy(name, config, List.of("--loop", mode));
                    Sampler sampler = new Sampler(metricsFile, dir.resolve(name + ".samples"));
                    sampler.start();
                    err.println("tailor: experiment: round " + round + "/" + s.rounds() + ", loop " + mode + " ("
                            + s.rampSeconds() + "+" + s.runtimeSeconds() + " s)");
                    err.flush();
                    Path json = dir.resolve(name + ".json");
                    long startNanos = System.nanoTime();
                    double psiStart = cpuPressureMicros();
                    rig.run(
                            name + ".fio",
                            List.of("fio", jobFile.toString(), "--output-format=json+", "--output=" + json),
                            Map.of("PROXY_PORT", Integer.toString(proxy.port())));
                    long endNanos = System.nanoTime();
                    long endEpochMillis = System.currentTimeMillis();
                    double psiEnd = cpuPressureMicros();
                    // The export after fio's last second, for the health-check age since the proxy started.
                    sampler.awaitSampleAfter(endNanos + TimeUnit.MILLISECONDS.toNanos(1_000), 2_500);
                    sampler.close();
                    rig.stop(proxy.process());
                    FioLatency.Job job = FioLatency.readJobs(json).get("client");
                    if (job == null) {
                        throw new LabException("fio's output " + json + " has no job \"client\"", 1, null);
                    }
                    MeasuredTime measured = MeasuredTime.of(
                            startNanos,
                            endNanos,
                            endEpochMillis,
                            job.endEpochMillis(),
                            job.runtimeMillis(),
                            s.runtimeSeconds());
                    double sinceStart = Double.NaN;
                    for (Sampler.Sample sample : sampler.samples()) {
                        double max = ProxyMetrics.parse(sample.text())
                                .get("tailor_nbd_loop_health_check_max_age_seconds", "0");
                        if (!Double.isNaN(max)) {
                            sinceStart = max * 1e3;
                        }
                    }
                    double pressure = pressurePercent(psiStart, psiEnd, endNanos - startNanos);
                    runs.add(new Run(
                            mode,
                            round,
                            job.latency(),
                            job.iops(),
                            ages(sampler.samples(), measured),
                            sinceStart,
                            pressure,
                            loopTrace(sampler.samples(), measured)));
                }
            }
            return new Result(s, runs);
        }
    }

    /**
     * fio's measured time on the sampler's clock ({@link System#nanoTime}): from the end of its warm-up to the end
     * of its measurement.
     */
    record MeasuredTime(long fromNanos, long toNanos) {

        /**
         * Where fio measured, from when its process ran and what it wrote.
         *
         * <p>Not from the process's start plus the warm-up: fio takes a while before its warm-up begins (start-up,
         * the NBD connection), and a second of warm-up then fell inside the window. fio 3.33's JSON has no start
         * time for a job (later versions add {@code job_start}), but it is written right after the job ends, with
         * the wall-clock time in {@code timestamp_ms} (about 25 ms after the last measured read in a check
         * against fio's per-request log), and the job's measured time in {@code read.runtime}. So the measurement ended
         * {@code exitEpochMillis - fioEndEpochMillis} before fio's process had exited, and began
         * {@code fioRuntimeMillis} before that. Only that short span between fio's output and its exit is read on
         * the wall clock, so a clock step is unlikely to fall in it; an end outside the process's run (a step,
         * or no {@code timestamp_ms}) is taken as the exit, the latest the measurement can have ended, and without
         * {@code read.runtime} the job's {@code runtime} setting is used. The start is never before the process's.
         *
         * @param startNanos        when fio's process was started
         * @param exitNanos         when it had exited
         * @param exitEpochMillis   the wall clock at {@code exitNanos}, ms since the epoch
         * @param fioEndEpochMillis fio's {@code timestamp_ms}; NaN when absent
         * @param fioRuntimeMillis  the job's {@code read.runtime}, ms; NaN when absent
         * @param runtimeSeconds    the job's {@code runtime} setting
         */
        static MeasuredTime of(
                long startNanos,
                long exitNanos,
                long exitEpochMillis,
                double fioEndEpochMillis,
                double fioRuntimeMillis,
                int runtimeSeconds) {
            double endNanos = exitNanos - (exitEpochMillis - fioEndEpochMillis) * 1e6;
            long to = endNanos >= startNanos && endNanos <= exitNanos ? Math.round(endNanos) : exitNanos;
            double runtimeNanos = fioRuntimeMillis > 0 ? fioRuntimeMillis * 1e6 : runtimeSeconds * 1e9;
            return new MeasuredTime(Math.max(startNanos, to - Math.round(runtimeNanos)), to);
        }

        /**
         * Whether an export the sampler saw at {@code seenNanos} was written inside: the sampler reads the file about
         * every {@link Sampler#POLL_NANOS}, so the export was written about that long before it was seen at most.
         */
        boolean holds(long seenNanos) {
            return seenNanos - Sampler.POLL_NANOS >= fromNanos && seenNanos <= toNanos;
        }

        /** Seconds from the start of the measurement to {@code nanos}. */
        double secondsInto(long nanos) {
            return (nanos - fromNanos) / 1e9;
        }
    }

    /**
     * The health-check windows inside fio's measured time: of each export written inside it at least one metrics
     * period (1 s) after it began, so that its window lies inside too, the window's largest health-check age.
     */
    static List<AgeSample> ages(List<Sampler.Sample> samples, MeasuredTime measured) {
        List<AgeSample> out = new ArrayList<>();
        for (Sampler.Sample sample : samples) {
            Matcher w = WINDOW_MAX_AGE.matcher(sample.text());
            if (w.find()
                    && measured.holds(sample.nanos())
                    && measured.secondsInto(sample.nanos() - Sampler.POLL_NANOS) >= 1) {
                out.add(new AgeSample(measured.secondsInto(sample.nanos()), Double.parseDouble(w.group(1)) * 1e3));
            }
        }
        return List.copyOf(out);
    }

    /**
     * The loop tracing between the first and the last export written inside fio's measured time, so that every
     * request counted was one fio measured; {@link LoopTrace#NONE} without two such exports.
     */
    static LoopTrace loopTrace(List<Sampler.Sample> samples, MeasuredTime measured) {
        List<Sampler.Sample> inside =
                samples.stream().filter(x -> measured.holds(x.nanos())).toList();
        if (inside.size() < 2) {
            return LoopTrace.NONE;
        }
        return LoopTrace.between(
                MetricsText.parse(inside.get(0).text()),
                MetricsText.parse(inside.get(inside.size() - 1).text()));
    }

    /**
     * The share of {@code elapsedNanos} in which some task waited for a CPU, %, from two readings of
     * {@link #cpuPressureMicros()}; NaN when either is missing.
     */
    static double pressurePercent(double startMicros, double endMicros, long elapsedNanos) {
        return endMicros >= startMicros && elapsedNanos > 0
                ? (endMicros - startMicros) / 1e6 / (elapsedNanos / 1e9) * 100
                : Double.NaN;
    }

    /** Total µs some task waited for a CPU ({@code /proc/pressure/cpu}, "some ... total="); NaN when absent. */
    static double cpuPressureMicros() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/pressure/cpu"))) {
                Matcher m = Pattern.compile("^some .*total=(\\d+)$").matcher(line.strip());
                if (m.matches()) {
                    return Double.parseDouble(m.group(1));
                }
            }
        } catch (IOException | RuntimeException e) {
            // no pressure stall information on this kernel
        }
        return Double.NaN;
    }

    /**
     * Reads the metrics file every 100 ms on its own thread and keeps each new export with the time it
     * was seen ({@link System#nanoTime}); also appends them to a file, as the script's sampler did.
     */
    static final class Sampler implements AutoCloseable {

        /** How often the metrics file is read, ns. */
        static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

        record Sample(long nanos, String text) {}

        private final Path metricsFile;
        private final Path log;
        private final List<Sample> samples = new CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean stopped;

        Sampler(Path metricsFile, Path log) {
            this.metricsFile = metricsFile;
            this.log = log;
            this.thread = new Thread(this::loop, "tailor-experiment-sampler");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void loop() {
            String last = null;
            StringBuilder record = new StringBuilder();
            while (!stopped) {
                String text = null;
                try {
                    text = Files.exists(metricsFile) ? Files.readString(metricsFile, StandardCharsets.UTF_8) : null;
                } catch (IOException e) {
                    // replaced while read: the next look gets it
                }
                if (text != null && !text.isEmpty() && !text.equals(last)) {
                    long now = System.nanoTime();
                    samples.add(new Sample(now, text));
                    record.append("@ ").append(now).append('\n').append(text);
                    last = text;
                }
                LockSupport.parkNanos(POLL_NANOS);
            }
            try {
                Files.writeString(log, record, StandardCharsets.UTF_8);
            } catch (IOException e) {
                System.err.println("tailor: could not write " + log + " (" + e.getMessage() + ")");
            }
        }

        /** Waits up to {@code timeoutMillis} for a sample seen after {@code nanos}. */
        void awaitSampleAfter(long nanos, long timeoutMillis) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            while (System.nanoTime() < deadline && samples.stream().noneMatch(x -> x.nanos() > nanos)) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
            }
        }

        List<Sample> samples() {
            return List.copyOf(samples);
        }

        @Override
        public void close() throws InterruptedException {
            stopped = true;
            thread.join();
        }
    }

    /** The Markdown tables the script printed, line by line. */
    public static List<String> markdown(Result r) {
        Settings s = r.settings();
        List<String> out = new ArrayList<>();
        String maintenance = s.maintenance()
                ? String.format(
                        Locale.ROOT,
                        "%d tasks × %d µs every %s ms (%.0f %% of the loop)",
                        s.tasks(),
                        s.busyMicros(),
                        BurstExperiment.fmtPlain(s.periodMicros() / 1000.0),
                        (double) s.tasks() * s.busyMicros() / s.periodMicros() * 100)
                : "off";
        out.add("One fio job, 4 KiB random reads at queue depth 1, " + s.iops() + " IOPS, from a file on tmpfs through"
                + " one proxy event loop; maintenance " + maintenance + "; statistics every 1 ms, health check every "
                + s.healthMillis() + " ms; " + s.runtimeSeconds() + " s per run, " + s.rounds()
                + (s.rounds() == 1 ? " round" : " rounds") + " of fifo, priority.");
        out.add("");
        out.add("Latency (fio lat: submission + completion), pooled over the rounds, µs:");
        out.add("");
        out.add("| loop | samples | P50 | P99 | P99.9 | max | health-check age max, ms (bound: 2 × period) |");
        out.add("|---|--:|--:|--:|--:|--:|--:|");
        boolean unresolved = false;
        for (String m : MODES) {
            FioLatency b = r.pooled(m);
            StringBuilder row = new StringBuilder("| " + m + " | " + BurstExperiment.fmt(b.samples(), 0) + " | ");
            for (double p : PERCENTS) {
                String cell = BurstExperiment.percentile(b, p);
                unresolved |= cell.equals(BurstExperiment.NOT_RESOLVABLE);
                row.append(cell).append(" | ");
            }
            row.append(BurstExperiment.fmt(b.maxMicros(), 0))
                    .append(" | ")
                    .append(BurstExperiment.fmt(r.maxAgeMillis(m), 1))
                    .append(" (")
                    .append(BurstExperiment.fmt(s.boundMillis(), 0))
                    .append(") |");
            out.add(row.toString());
        }
        out.add("");
        List<String> changes = new ArrayList<>();
        for (double p : PERCENTS) {
            String change = BurstExperiment.change(r.pooled("priority"), r.pooled("fifo"), p);
            unresolved |= change.equals(BurstExperiment.NOT_RESOLVABLE);
            changes.add("P" + BurstExperiment.fmtPlain(p) + ": " + change);
        }
        out.add("Priority vs FIFO: " + String.join(" · ", changes) + " (pooled).");
        out.add("");
        out.add("Each run (µs; health-check age: the largest in the metrics windows while fio measured, and since the "
                + "proxy started; CPU pressure: share of the run some task on the machine waited for a CPU):");
        out.add("");
        out.add("| run | samples | IOPS | P50 | P99 | P99.9 | max | health-check age max ms | since start ms | windows "
                + "| CPU pressure |");
        out.add("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (int round = 1; round <= s.rounds(); round++) {
            for (String m : MODES) {
                Run run = r.run(m, round);
                StringBuilder row = new StringBuilder("| " + m + " " + round + " | "
                        + BurstExperiment.fmt(run.latency().samples(), 0) + " | " + BurstExperiment.fmt(run.iops(), 0)
                        + " | ");
                for (double p : PERCENTS) {
                    String cell = BurstExperiment.percentile(run.latency(), p);
                    unresolved |= cell.equals(BurstExperiment.NOT_RESOLVABLE);
                    row.append(cell).append(" | ");
                }
                row.append(BurstExperiment.fmt(run.latency().maxMicros(), 0))
                        .append(" | ")
                        .append(BurstExperiment.fmt(run.maxAgeMillis(), 1))
                        .append(" | ")
                        .append(BurstExperiment.fmt(run.sinceStartMaxAgeMillis(), 1))
                        .append(" | ")
                        .append(run.ages().size())
                        .append(" | ")
                        .append(
                                Double.isNaN(run.cpuPressurePercent())
                                        ? "–"
                                        : String.format(Locale.ROOT, "%.0f %%", run.cpuPressurePercent()))
                        .append(" |");
                out.add(row.toString());
            }
        }
        List<String> pairs = new ArrayList<>();
        for (int round = 1; round <= s.rounds(); round++) {
            String change = BurstExperiment.change(
                    r.run("priority", round).latency(), r.run("fifo", round).latency(), 99.9);
            unresolved |= change.equals(BurstExperiment.NOT_RESOLVABLE);
            pairs.add(change);
        }
        out.add("");
        out.add("P99.9 priority vs FIFO, round by round: " + String.join(", ", pairs) + ".");
        if (unresolved) {
            out.add("");
            out.add(dev.tailor.lab.report.StorageFigures.notResolvable(99, 99.9));
        }
        if (MODES.stream()
                .anyMatch(m -> !Double.isNaN(r.loopTrace(m).unrelatedWait().count()))) {
            out.add("");
            out.add("Loop tracing per request (the proxy's histograms between the first and the last metrics export"
                    + " inside fio's measured time, pooled over the rounds;"
                    + " µs, percentiles within the histogram's buckets): the unrelated work — statistics, metrics,"
                    + " health checks, maintenance — each request waited behind on its event loop, the loop's"
                    + " time on the request's own work, the wall time it waited for its loop at completion and flush"
                    + " (loop wait; arrival not included), and of that the part behind other requests' work and the"
                    + " scheduler (the loop wait less its unrelated part):");
            out.add("");
            out.add("| loop | requests | waited behind unrelated work | wait mean | wait P99 | wait P99.9 "
                    + "| own work mean | own work P99 | loop wait mean | loop wait P99 | behind other work mean |");
            out.add("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
            for (String m : MODES) {
                LoopTrace t = r.loopTrace(m);
                MetricsText.Histogram w = t.unrelatedWait();
                double waited = w.shareAbove(0.000001);
                out.add("| " + m + " | " + BurstExperiment.fmt(w.count(), 0) + " | "
                        + (Double.isNaN(waited) ? "–" : String.format(Locale.ROOT, "%.1f %%", waited * 100)) + " | "
                        + BurstExperiment.fmt(w.mean() * 1e6, 1) + " | "
                        + BurstExperiment.fmt(w.quantile(0.99) * 1e6, 0) + " | "
                        + BurstExperiment.fmt(w.quantile(0.999) * 1e6, 0) + " | "
                        + BurstExperiment.fmt(t.work().mean() * 1e6, 1) + " | "
                        + BurstExperiment.fmt(t.work().quantile(0.99) * 1e6, 0) + " | "
                        + BurstExperiment.fmt(t.loopWait().mean() * 1e6, 1) + " | "
                        + BurstExperiment.fmt(t.loopWait().quantile(0.99) * 1e6, 0) + " | "
                        + BurstExperiment.fmt(t.behindOtherWorkMeanSeconds() * 1e6, 1) + " |");
            }
        }
        return out;
    }

    /** The pooled summary of each mode and each run, for {@code --format json}. */
    public static Map<String, Object> json(Result r) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("experiment", "low-load");
        out.put("settings", r.settings());
        out.put("healthCheckBoundMillis", r.settings().boundMillis());
        Map<String, Object> pooled = new LinkedHashMap<>();
        for (String m : MODES) {
            Map<String, Object> mode = new LinkedHashMap<>();
            mode.put("latency", BurstExperiment.LatencySummary.of(r.pooled(m)));
            mode.put("healthCheckMaxAgeMillis", BurstExperiment.LatencySummary.orNull(r.maxAgeMillis(m)));
            mode.put("loopTrace", loopTraceJson(r.loopTrace(m)));
            pooled.put(m, mode);
        }
        out.put("pooled", pooled);
        List<Map<String, Object>> runs = new ArrayList<>();
        for (Run run : r.runs()) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("loop", run.mode());
            each.put("round", run.round());
            each.put("latency", BurstExperiment.LatencySummary.of(run.latency()));
            each.put("iops", run.iops());
            each.put("healthCheckMaxAgeMillis", BurstExperiment.LatencySummary.orNull(run.maxAgeMillis()));
            each.put(
                    "healthCheckMaxAgeMillisSinceStart",
                    BurstExperiment.LatencySummary.orNull(run.sinceStartMaxAgeMillis()));
            each.put("healthCheckWindows", run.ages());
            each.put("cpuPressurePercent", BurstExperiment.LatencySummary.orNull(run.cpuPressurePercent()));
            each.put("loopTrace", loopTraceJson(run.loopTrace()));
            runs.add(each);
        }
        out.put("runs", runs);
        return out;
    }

    /** Loop tracing for JSON: µs, null where there is no data. */
    static Map<String, Object> loopTraceJson(LoopTrace t) {
        Map<String, Object> out = new LinkedHashMap<>();
        MetricsText.Histogram w = t.unrelatedWait();
        out.put("requests", BurstExperiment.LatencySummary.orNull(w.count()));
        out.put("waitedShare", BurstExperiment.LatencySummary.orNull(w.shareAbove(0.000001)));
        out.put("unrelatedWaitMeanMicros", BurstExperiment.LatencySummary.orNull(w.mean() * 1e6));
        out.put("unrelatedWaitP99Micros", BurstExperiment.LatencySummary.orNull(w.quantile(0.99) * 1e6));
        out.put("unrelatedWaitP999Micros", BurstExperiment.LatencySummary.orNull(w.quantile(0.999) * 1e6));
        out.put(
                "ownWorkMeanMicros",
                BurstExperiment.LatencySummary.orNull(t.work().mean() * 1e6));
        out.put(
                "ownWorkP99Micros",
                BurstExperiment.LatencySummary.orNull(t.work().quantile(0.99) * 1e6));
        out.put(
                "loopWaitMeanMicros",
                BurstExperiment.LatencySummary.orNull(t.loopWait().mean() * 1e6));
        out.put(
                "loopWaitP99Micros",
                BurstExperiment.LatencySummary.orNull(t.loopWait().quantile(0.99) * 1e6));
        out.put(
                "behindOtherWorkMeanMicros",
                BurstExperiment.LatencySummary.orNull(t.behindOtherWorkMeanSeconds() * 1e6));
        return out;
    }
}
