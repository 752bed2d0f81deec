package dev.tailor.lab;

import dev.tailor.common.Numbers;
import dev.tailor.lab.report.StorageFigures;
import dev.tailor.nbd.config.ByteSize;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The burst experiment with real clients: segment admission off vs on, and the fair dispatch door
 * alone, in {@code tailor nbd serve}, proxy mode, in front of a scarce backend shared by every tenant;
 * four steady fio tenants and one bursty one. The same design, defaults and output as
 * {@code bench/run-admission.sh} had, but for the door alone, which the defaults now add:
 *
 * <ul>
 *   <li><b>Backend</b>: nbdkit's memory plugin behind the delay filter, {@code servers} request threads
 *       each holding a request {@code delayMillis} (a k-server FIFO queue), reached through a second
 *       nbdkit (nbd plugin, {@code shared=true}) so that every tenant's requests share those threads
 *       through one connection, in arrival order. Its capacity is measured first (fio, queue depth 64,
 *       4 KiB random reads, 5 s after 1 s) and admission's budget set from it: measured IOPS ×
 *       {@code capacityFactor} × {@link #READ_COST_UNITS}.</li>
 *   <li><b>Tenants</b>, each its own export (a 1 GiB virtual disk of {@code segmentSize} segments) of one
 *       proxy with one event loop: {@code steady} fio jobs (4 KiB random reads, queue depth 4,
 *       {@code steadyIops} each) and one bursty job (queue depth {@code burstQueueDepth}, unthrottled for
 *       {@code burstOnMillis} of I/O, then idle {@code burstOffMillis}).</li>
 *   <li>Each round runs its modes in order, by default admission off, on, then the door alone
 *       (A B C A B C ...), with a fresh proxy each time.</li>
 * </ul>
 *
 * <p>Latency is fio's {@code lat} (submission + completion), read from its latency histograms and pooled
 * over the steady tenants and the rounds ({@link FioLatency}).
 */
public final class BurstExperiment {

    /** A 4 KiB random read in admission's default cost model (blk-iocost's default SSD). */
    static final double READ_COST_UNITS = 117_399;
    /** The percentiles the tables show. */
    static final double[] PERCENTS = {50, 99, 99.9, 99.99};
    /**
     * The configurations a run can have: admission off, on (what Tailor ships, variant {@code tailor}, with
     * its fair dispatch door, the depth the backend's threads),
     * {@code paper} (on, with the paper's mechanism: {@code --admission-variant paper}) and {@code door}
     * (admission off, the fair dispatch door alone, its depth the backend's threads: {@code --fair-dispatch on}).
     */
    public static final List<String> MODES = List.of("off", "on", "paper", "door");
    /**
     * The configurations run unless told otherwise: admission off, on and the fair dispatch door alone,
     * which docs/nbd.md recommends for the proxy.
     */
    static final List<String> DEFAULT_MODES = List.of("off", "on", "door");
    /**
     * What a run costs beyond its ramp and runtime, seconds, as measured on 2 cores at load average 8: the
     * proxy's fresh JVM until it serves (2.5-3.3 s), fio's start, its connections and its end with the json+
     * output (about 1.1 s), the wait for the proxy's next metrics export (every 500 ms) and its stop (about
     * 0.5 s). A busier machine starts a JVM more slowly still.
     */
    public static final int RUN_OVERHEAD_SECONDS = 5;
    /**
     * What the experiment costs once beyond the capacity measurement's 1 + 5 s, seconds: the tools' checks
     * and the two nbdkit servers' start (about 2.5 s with the command's own start), the capacity fio's start
     * and the report's plots (about 2 s).
     */
    public static final int FIXED_OVERHEAD_SECONDS = 4;

    private BurstExperiment() {}

    /**
     * The experiment's settings; the defaults are the script's, plus the door alone among the modes.
     *
     * @param runtimeSeconds   measured seconds per run
     * @param rampSeconds      warm-up seconds per run, not measured
     * @param rounds           rounds of the {@code modes}
     * @param steady           steady tenants
     * @param steadyIops       reads per second of each steady tenant
     * @param burstQueueDepth  the bursty tenant's queue depth (the proxy's default segment queues hold what
     *                         clients may have outstanding, so nothing is refused)
     * @param burstOnMillis    the bursty tenant's I/O time per cycle, ms
     * @param burstOffMillis   its idle time per cycle, ms
     * @param servers          the backend's request threads
     * @param delayMillis      each backend request's delay, ms
     * @param segmentSize      admission's segment size
     * @param reserveFraction  admission's reserve r
     * @param capacityFactor   admission's budget as a multiple of the measured capacity
     * @param dir              the work directory (fio's JSON, configs, logs, metrics)
     * @param modes            the configurations of each round, in the order run (of {@link #MODES})
     */
    public record Settings(
            int runtimeSeconds,
            int rampSeconds,
            int rounds,
            int steady,
            int steadyIops,
            int burstQueueDepth,
            int burstOnMillis,
            int burstOffMillis,
            int servers,
            int delayMillis,
            ByteSize segmentSize,
            double reserveFraction,
            double capacityFactor,
            Path dir,
            List<String> modes) {

        public Settings {
            modes = List.copyOf(modes);
        }

        /** The script's defaults, in {@code dir}. */
        static Settings defaults(Path dir) {
            return new Settings(
                    60, 5, 2, 4, 100, 256, 100, 400, 8, 5, ByteSize.parse("256MiB"), 0.2, 1.0, dir, DEFAULT_MODES);
        }

        /** These settings with shorter runs (the demo's). */
        Settings shortened(int runtime, int ramp, int roundCount) {
            return with(runtime, ramp, roundCount, modes);
        }

        /** These settings with other {@code modes} (of {@link #MODES}), run in that order. */
        Settings withModes(List<String> modeList) {
            return with(runtimeSeconds, rampSeconds, rounds, modeList);
        }

        private Settings with(int runtime, int ramp, int roundCount, List<String> modeList) {
            return new Settings(
                    runtime,
                    ramp,
                    roundCount,
                    steady,
                    steadyIops,
                    burstQueueDepth,
                    burstOnMillis,
                    burstOffMillis,
                    servers,
                    delayMillis,
                    segmentSize,
                    reserveFraction,
                    capacityFactor,
                    dir,
                    modeList);
        }

        /** The modes with admission on ({@code on}, {@code paper}), in the order run. */
        List<String> admissionModes() {
            return modes.stream()
                    .filter(m -> m.equals("on") || m.equals("paper"))
                    .toList();
        }

        /** Seconds the capacity measurement runs: 5, or the run time when that is shorter. */
        int capacitySeconds() {
            return Math.min(5, runtimeSeconds);
        }

        /** The runs: {@code modes} × {@code rounds}, each against a fresh proxy. */
        int runCount() {
            return modes.size() * rounds;
        }

        /**
         * About how long {@link BurstExperiment#run} takes, seconds: each run's ramp and runtime plus {@link
         * BurstExperiment#RUN_OVERHEAD_SECONDS}, then the capacity measurement (1 s of warm-up and {@link
         * #capacitySeconds}) and {@link BurstExperiment#FIXED_OVERHEAD_SECONDS}. The defaults: 430 s; one
         * round of 2 + 6 s: 49 s.
         */
        int estimatedSeconds() {
            return (rampSeconds + runtimeSeconds + RUN_OVERHEAD_SECONDS) * runCount()
                    + 1
                    + capacitySeconds()
                    + FIXED_OVERHEAD_SECONDS;
        }

        /** The steady tenants' export names. */
        List<String> steadyNames() {
            List<String> names = new ArrayList<>();
            for (int i = 1; i <= steady; i++) {
                names.add("steady" + i);
            }
            return names;
        }
    }

    /**
     * One run of fio against one proxy.
     *
     * @param mode    admission off, on, paper or the door alone (of {@link #MODES})
     * @param round   1, 2, ...
     * @param jobs    fio's jobs by name
     * @param metrics the proxy's last metrics export of the run ({@link ProxyMetrics#EMPTY} if none)
     * @param cpuPressurePercent share of the run in which some task on the machine waited for a CPU
     *                           ({@code /proc/pressure/cpu}); NaN where the kernel does not report it
     * @param text    the same export with every label ({@link MetricsText#EMPTY} if none): the slow-request
     *                attribution
     */
    record Run(
            String mode,
            int round,
            Map<String, FioLatency.Job> jobs,
            ProxyMetrics metrics,
            double cpuPressurePercent,
            MetricsText text) {

        Run(String mode, int round, Map<String, FioLatency.Job> jobs, ProxyMetrics metrics, double cpuPressurePercent) {
            this(mode, round, jobs, metrics, cpuPressurePercent, MetricsText.EMPTY);
        }

        /** Slow requests (over 50 ms) of the run by export, all operations; NaN when the proxy counted none. */
        double slowRequests(String export) {
            return text.sum("tailor_nbd_slow_requests_total", "export", export);
        }

        /** The slow-request attribution's top (export, segment) pairs at the end of the run, most first. */
        List<NbdTop.SlowSegment> slowSegments() {
            return NbdTop.SlowSegment.of(text);
        }
    }

    /** How many of the top slow pairs each run's table shows. */
    static final int SLOW_PAIRS_SHOWN = 6;

    /**
     * What the experiment measured.
     *
     * @param capacityIops          the backend's measured reads per second
     * @param capacityCostUnitsPerSecond admission's budget
     * @param runs                  every run, in the order run
     */
    public record Result(Settings settings, long capacityIops, double capacityCostUnitsPerSecond, List<Run> runs) {

        /** The largest CPU pressure of any run, %; NaN when the kernel reports none. */
        double maxCpuPressurePercent() {
            return runs.stream()
                    .mapToDouble(Run::cpuPressurePercent)
                    .filter(p -> !Double.isNaN(p))
                    .max()
                    .orElse(Double.NaN);
        }

        /** The steady tenants' latency in {@code mode}, pooled over tenants and rounds. */
        FioLatency steady(String mode) {
            return FioLatency.pool(runs.stream()
                    .filter(r -> r.mode().equals(mode))
                    .map(r -> FioLatency.pooled(r.jobs(), settings.steadyNames()))
                    .toList());
        }

        /** The bursty tenant's latency in {@code mode}, pooled over rounds. */
        FioLatency bursty(String mode) {
            return FioLatency.pool(runs.stream()
                    .filter(r -> r.mode().equals(mode))
                    .map(r -> FioLatency.pooled(r.jobs(), List.of("bursty")))
                    .toList());
        }

        Run run(String mode, int round) {
            return runs.stream()
                    .filter(r -> r.mode().equals(mode) && r.round() == round)
                    .findFirst()
                    .orElseThrow();
        }
    }

    /**
     * Runs the experiment, about {@link Settings#estimatedSeconds} (which the first progress line gives).
     *
     * @param err progress lines
     * @throws LabException (exit 1) when a program fails, naming it, with the end of its log
     */
    public static Result run(Settings s, List<String> serveCommand, PrintWriter err)
            throws IOException, InterruptedException {
        Path dir = prepare(s.dir(), List.of("run-", "capacity."));
        err.println("tailor: experiment: " + estimate(s));
        err.flush();
        try (ExperimentRig rig = new ExperimentRig(dir, serveCommand)) {
            // The backend: k threads of `delay` ms each, behind one shared connection; the front nbdkit has
            // a thread per request the bursty tenant may have in flight, so its requests queue at the k threads.
            int devicePort = ExperimentRig.freePort();
            Process device = rig.start(
                    "device",
                    List.of(
                            "nbdkit",
                            "-f",
                            "--exit-with-parent",
                            "-i",
                            "127.0.0.1",
                            "-p",
                            Integer.toString(devicePort),
                            "--threads",
                            Integer.toString(s.servers()),
                            "--filter=delay",
                            "memory",
                            "1G",
                            "rdelay=" + s.delayMillis() + "ms"),
                    Map.of());
            rig.awaitPort("device", device, devicePort);
            int backendPort = ExperimentRig.freePort();
            Process backend = rig.start(
                    "backend",
                    List.of(
                            "nbdkit",
                            "-f",
                            "--exit-with-parent",
                            "-i",
                            "127.0.0.1",
                            "-p",
                            Integer.toString(backendPort),
                            "--threads",
                            Integer.toString(s.burstQueueDepth() + 16),
                            "nbd",
                            "hostname=127.0.0.1",
                            "port=" + devicePort,
                            "shared=true"),
                    Map.of());
            rig.awaitPort("backend", backend, backendPort);

            err.println("tailor: experiment: measuring the backend (" + s.servers() + " × " + s.delayMillis()
                    + " ms, nominal " + (s.delayMillis() == 0 ? "unbounded" : s.servers() * 1000 / s.delayMillis())
                    + " IOPS), " + s.capacitySeconds() + " s");
            err.flush();
            Path capacityJson = dir.resolve("capacity.json");
            rig.run(
                    "capacity",
                    List.of(
                            "fio",
                            "--name=capacity",
                            "--ioengine=nbd",
                            "--uri=nbd://127.0.0.1:" + backendPort + "/",
                            "--rw=randread",
                            "--bs=4k",
                            "--iodepth=64",
                            "--size=1G",
                            "--time_based",
                            "--runtime=" + s.capacitySeconds(),
                            "--ramp_time=1",
                            "--output-format=json",
                            "--output=" + capacityJson),
                    Map.of());
            double measured =
                    FioLatency.readJobs(capacityJson).values().iterator().next().iops();
            if (!(measured > 0)) {
                throw new LabException(
                        "the backend served no reads in " + s.capacitySeconds() + " s (fio: " + capacityJson + ")",
                        1,
                        null);
            }
            long capacityIops = Math.round(measured);
            double costUnits = Double.parseDouble(
                    String.format(Locale.ROOT, "%.6g", capacityIops * s.capacityFactor() * READ_COST_UNITS));
            err.println("tailor: experiment: backend serves " + capacityIops + " IOPS; admission budget "
                    + budget(costUnits));
            err.flush();

            List<String> tenants = new ArrayList<>(s.steadyNames());
            tenants.add("bursty");
            Path metricsFile = dir.resolve("metrics.prom");
            Path config = writeConfig(dir, s, costUnits, backendPort, tenants, metricsFile);
            Path jobFile = writeJobs(dir, s, tenants);

            List<Run> runs = new ArrayList<>();
            for (int round = 1; round <= s.rounds(); round++) {
                for (String mode : s.modes()) {
                    String name = "run-" + mode + "-" + round;
                    Files.deleteIfExists(metricsFile);
                    ExperimentRig.Proxy proxy = rig.startProxy(name, config, proxyArguments(mode, s.servers()));
                    err.println("tailor: experiment: round " + round + "/" + s.rounds() + ", "
                            + (mode.equals("door") ? "the door alone (admission off)" : "admission " + mode) + " ("
                            + s.rampSeconds() + "+" + s.runtimeSeconds() + " s)");
                    err.flush();
                    Path json = dir.resolve(name + ".json");
                    long startNanos = System.nanoTime();
                    double psiStart = LowLoadExperiment.cpuPressureMicros();
                    rig.run(
                            name + ".fio",
                            List.of("fio", jobFile.toString(), "--output-format=json+", "--output=" + json),
                            Map.of("PROXY_PORT", Integer.toString(proxy.port())));
                    double pressure = LowLoadExperiment.pressurePercent(
                            psiStart, LowLoadExperiment.cpuPressureMicros(), System.nanoTime() - startNanos);
                    ProxyMetrics metrics = awaitExportAfter(metricsFile, System.currentTimeMillis(), 3_000);
                    MetricsText text = MetricsText.EMPTY;
                    if (Files.exists(metricsFile)) {
                        Path copy = dir.resolve(name + ".prom");
                        Files.copy(metricsFile, copy, StandardCopyOption.REPLACE_EXISTING);
                        text = MetricsText.parse(Files.readString(copy, StandardCharsets.UTF_8));
                    }
                    rig.stop(proxy.process());
                    runs.add(new Run(mode, round, FioLatency.readJobs(json), metrics, pressure, text));
                }
            }
            return new Result(s, capacityIops, costUnits, runs);
        }
    }

    /**
     * The run's plan and time as the first progress line gives it, e.g. "3 runs (1 round of off, on, door) of
     * 2+6 s; about 49 s in all, each run's start and stop included (longer when the machine is busy)".
     */
    static String estimate(Settings s) {
        return s.runCount() + (s.runCount() == 1 ? " run" : " runs") + " (" + s.rounds()
                + (s.rounds() == 1 ? " round" : " rounds") + " of " + String.join(", ", s.modes()) + ") of "
                + s.rampSeconds() + "+" + s.runtimeSeconds() + " s; about " + duration(s.estimatedSeconds())
                + " in all, each run's start and stop included (longer when the machine is busy)";
    }

    /** Seconds as "49 s" below 2 minutes, else in whole minutes: "7 minutes". */
    static String duration(int seconds) {
        return seconds < 120 ? seconds + " s" : Math.round(seconds / 60.0) + " minutes";
    }

    /** The proxy's options for {@code mode}; the door's depth is the backend's {@code servers} threads. */
    static List<String> proxyArguments(String mode, int servers) {
        return switch (mode) {
            case "door" ->
                List.of(
                        "--admission",
                        "off",
                        "--fair-dispatch",
                        "on",
                        "--fair-dispatch-depth",
                        Integer.toString(servers));
            case "off" -> List.of("--admission", "off");
            case "on" ->
                List.of(
                        "--admission",
                        "on",
                        "--admission-variant",
                        "tailor",
                        "--fair-dispatch-depth",
                        Integer.toString(servers));
            case "paper" -> List.of("--admission", "on", "--admission-variant", "paper");
            default -> throw new IllegalArgumentException("mode : \"" + mode + "\" (expected: one of " + MODES + ")");
        };
    }

    /**
     * The work directory, created, with the files of an earlier run (names starting with one of
     * {@code prefixes}) removed.
     */
    static Path prepare(Path dir, List<String> prefixes) throws IOException {
        Files.createDirectories(dir);
        Path absolute = dir.toAbsolutePath().normalize();
        try (var files = Files.list(absolute)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                if (Files.isRegularFile(file) && prefixes.stream().anyMatch(name::startsWith)) {
                    Files.delete(file);
                }
            }
        }
        return absolute;
    }

    /**
     * The metrics export written after {@code afterMillis} (epoch ms), waiting up to {@code timeoutMillis}
     * for it; the last one there is when none comes, {@link ProxyMetrics#EMPTY} when there is none.
     */
    static ProxyMetrics awaitExportAfter(Path metricsFile, long afterMillis, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            if (Files.exists(metricsFile)) {
                FileTime modified = Files.getLastModifiedTime(metricsFile);
                if (modified.toMillis() > afterMillis) {
                    break;
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return Files.exists(metricsFile)
                ? ProxyMetrics.parse(Files.readString(metricsFile, StandardCharsets.UTF_8))
                : ProxyMetrics.EMPTY;
    }

    private static Path writeConfig(
            Path dir, Settings s, double costUnits, int backendPort, List<String> tenants, Path metricsFile)
            throws IOException {
        StringBuilder y = new StringBuilder();
        y.append("eventLoopThreads: 1\n");
        y.append("admission:\n");
        y.append("  capacityCostUnitsPerSecond: ")
                .append(String.format(Locale.ROOT, "%.6g", costUnits))
                .append('\n');
        y.append("  segmentSize: ").append(s.segmentSize()).append('\n');
        y.append("  reserveFraction: ").append(s.reserveFraction()).append('\n');
        y.append("loop:\n");
        y.append("  metricsFile: ").append(metricsFile).append('\n');
        y.append("  metricsPeriodMillis: 500\n");
        y.append("  slowTopWindowSeconds: 86400   # the slow top covers the whole run (at least half the window)\n");
        y.append("exports:\n");
        for (String t : tenants) {
            y.append("  - name: ")
                    .append(t)
                    .append("\n    tenant: ")
                    .append(t)
                    .append("\n    upstream: {host: 127.0.0.1, port: ")
                    .append(backendPort)
                    .append(", connections: 1}\n");
        }
        Path file = dir.resolve("tailor.yaml");
        Files.writeString(file, y, StandardCharsets.UTF_8);
        return file;
    }

    private static Path writeJobs(Path dir, Settings s, List<String> tenants) throws IOException {
        StringBuilder f = new StringBuilder();
        f.append("[global]\nioengine=nbd\nrw=randread\nbs=4k\nsize=1G\ntime_based=1\n");
        f.append("runtime=")
                .append(s.runtimeSeconds())
                .append("\nramp_time=")
                .append(s.rampSeconds())
                .append('\n');
        f.append("lat_percentiles=1   # submission + completion: the nbd engine can spend a request's wait in"
                + " either\npercentile_list=50:99:99.9:99.99\n");
        for (String t : tenants) {
            f.append("\n[")
                    .append(t)
                    .append("]\nuri=nbd://127.0.0.1:${PROXY_PORT}/")
                    .append(t)
                    .append('\n');
            if (t.equals("bursty")) {
                f.append("iodepth=")
                        .append(s.burstQueueDepth())
                        .append("\nthinktime=")
                        .append(s.burstOffMillis())
                        .append("ms\nthinktime_iotime=")
                        .append(s.burstOnMillis())
                        .append("ms\n");
            } else {
                f.append("iodepth=4\nrate_iops=").append(s.steadyIops()).append('\n');
            }
        }
        Path file = dir.resolve("tenants.fio");
        Files.writeString(file, f, StandardCharsets.UTF_8);
        return file;
    }

    /**
     * Admission's budget as the progress line and the tables write it: whole cost units per second with
     * thousands separators ({@code 180,560,000 cost units/s}), not {@code 1.80560e+08}.
     */
    static String budget(double costUnitsPerSecond) {
        return String.format(Locale.ROOT, "%,.0f cost units/s", costUnitsPerSecond);
    }

    /** The Markdown tables the script printed, line by line. */
    public static List<String> markdown(Result r) {
        Settings s = r.settings();
        List<String> steadyNames = s.steadyNames();
        List<String> out = new ArrayList<>();
        out.add(String.format(
                Locale.ROOT,
                "Backend: %d threads × %d ms (nbdkit delay filter, one shared connection),"
                        + " measured %,d IOPS; admission budget %s, reserve %s. %d steady tenants × %d IOPS"
                        + " (4 KiB random reads, QD 4) and one bursty tenant (QD %d, %d ms of I/O then %d ms idle), each its"
                        + " own 1 GiB export (%s segments); one proxy event loop; %d s per run, %d %s of %s"
                        + " (on: what Tailor ships, admission and its fair dispatch door; paper: the paper's mechanism, no"
                        + " door; the reserve applies to paper only, on sizes its own; door: admission off, the door alone;"
                        + " the door's depth is the backend's threads).",
                s.servers(),
                s.delayMillis(),
                r.capacityIops(),
                budget(r.capacityCostUnitsPerSecond()),
                fmtPlain(s.reserveFraction()),
                s.steady(),
                s.steadyIops(),
                s.burstQueueDepth(),
                s.burstOnMillis(),
                s.burstOffMillis(),
                s.segmentSize(),
                s.runtimeSeconds(),
                s.rounds(),
                s.rounds() == 1 ? "round" : "rounds",
                String.join(", ", s.modes())));
        out.add("");
        out.add("Steady tenants' latency (fio lat: submission + completion), pooled over the steady tenants and rounds,"
                + " µs:");
        out.add("");
        out.add("| mode | samples | P50 | P99 | P99.9 | P99.99 | max |");
        out.add("|---|--:|--:|--:|--:|--:|--:|");
        boolean unresolved = false;
        for (String m : s.modes()) {
            FioLatency b = r.steady(m);
            StringBuilder row = new StringBuilder("| " + m + " | " + fmt(b.samples(), 0) + " | ");
            for (double p : PERCENTS) {
                String cell = percentile(b, p);
                unresolved |= cell.equals(NOT_RESOLVABLE);
                row.append(cell).append(" | ");
            }
            out.add(row.append(fmt(b.maxMicros(), 0)).append(" |").toString());
        }
        out.add("");
        List<String[]> pairs = new ArrayList<>();
        for (String m : s.admissionModes()) {
            if (s.modes().contains("off")) {
                pairs.add(new String[] {m, "off"});
            }
        }
        if (s.modes().contains("on") && s.modes().contains("paper")) {
            pairs.add(new String[] {"on", "paper"});
        }
        if (s.modes().contains("door")) {
            for (String m : List.of("off", "on")) {
                if (s.modes().contains(m)) {
                    pairs.add(new String[] {"door", m});
                }
            }
        }
        for (String[] pair : pairs) {
            List<String> changes = new ArrayList<>();
            for (int i = 1; i < PERCENTS.length; i++) {
                String change = change(r.steady(pair[0]), r.steady(pair[1]), PERCENTS[i]);
                unresolved |= change.equals(NOT_RESOLVABLE);
                changes.add("P" + fmtPlain(PERCENTS[i]) + ": " + change);
            }
            String label = pair[0].equals("door")
                    ? "The fair dispatch door alone vs admission " + pair[1]
                    : "Admission " + pair[0] + " vs " + pair[1];
            out.add(label + ", steady tenants: " + String.join(" · ", changes) + ".");
            out.add("");
        }
        out.add("Each run: steady tenants pooled, the bursty tenant alone (µs; IOPS over the run):");
        out.add("");
        out.add("| run | steady samples | steady P99 | P99.9 | P99.99 | steady IOPS | bursty IOPS | bursty P50 | P99 "
                + "| P99.9 | health-check age max ms (since start) | loop dispatch delay max ms (since start) "
                + "| CPU pressure |");
        out.add("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (int round = 1; round <= s.rounds(); round++) {
            for (String m : s.modes()) {
                Run run = r.run(m, round);
                FioLatency b = FioLatency.pooled(run.jobs(), steadyNames);
                FioLatency bb = FioLatency.pooled(run.jobs(), List.of("bursty"));
                double steadyIops = steadyNames.stream()
                        .mapToDouble(n -> run.jobs().get(n).iops())
                        .sum();
                StringBuilder row = new StringBuilder("| " + m + " " + round + " | " + fmt(b.samples(), 0) + " | ");
                for (int i = 1; i < PERCENTS.length; i++) {
                    String cell = percentile(b, PERCENTS[i]);
                    unresolved |= cell.equals(NOT_RESOLVABLE);
                    row.append(cell).append(" | ");
                }
                row.append(fmt(steadyIops, 0))
                        .append(" | ")
                        .append(fmt(run.jobs().get("bursty").iops(), 0))
                        .append(" | ");
                for (int i = 0; i < 3; i++) {
                    String cell = percentile(bb, PERCENTS[i]);
                    unresolved |= cell.equals(NOT_RESOLVABLE);
                    row.append(cell).append(" | ");
                }
                row.append(fmt(run.metrics().get("tailor_nbd_loop_health_check_max_age_seconds", "0") * 1e3, 1))
                        .append(" | ")
                        .append(fmt(run.metrics().get("tailor_nbd_loop_io_dispatch_delay_max_seconds", "0") * 1e3, 1))
                        .append(" | ")
                        .append(
                                Double.isNaN(run.cpuPressurePercent())
                                        ? "–"
                                        : String.format(Locale.ROOT, "%.0f %%", run.cpuPressurePercent()))
                        .append(" |");
                out.add(row.toString());
            }
        }
        if (unresolved) {
            out.add("");
            out.add(NOT_RESOLVABLE_LEGEND);
        }
        out.add("");
        out.add("Admission's counters (the proxy's metrics file at the end of each run with admission on or paper); "
                + "reserve and borrowing in 4 KiB reads' worth of cost; admitted steady, reserve, borrowed and refused"
                + " are server-wide, every tenant's together, so they stand on each run's row of all tenants:");
        out.add("");
        out.add("| run | tenants | requests | arrived hot | waited | mean wait ms | max wait ms "
                + "| admitted steady | reserve drawn | reserve lent to hot | borrowed (bursts) | refused |");
        out.add("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (int round = 1; round <= s.rounds(); round++) {
            for (String mode : s.admissionModes()) {
                ProxyMetrics met = r.run(mode, round).metrics();
                if (met.isEmpty()) {
                    continue;
                }
                List<String> all = new ArrayList<>(steadyNames);
                all.add("bursty");
                for (String label : List.of("steady", "bursty", "all (server-wide)")) {
                    List<String> names = switch (label) {
                        case "steady" -> steadyNames;
                        case "bursty" -> List.of("bursty");
                        default -> all;
                    };
                    double req = sum(met, "requests_total", names);
                    double hot = sum(met, "arrived_hot_total", names);
                    double queued = sum(met, "queued_total", names);
                    double wait = sum(met, "queue_wait_seconds_total", names);
                    double waitMax = names.stream()
                            .mapToDouble(
                                    n -> zeroIfAbsent(met.get("tailor_nbd_admission_export_queue_wait_max_seconds", n)))
                            .max()
                            .orElse(0);
                    String prefix = "tailor_nbd_admission_";
                    String common = names == all
                            ? " | " + fmt(met.get(prefix + "admitted_steady_total"), 0)
                                    + " | "
                                    + fmt(met.get(prefix + "drawn_reserve_cost_units_total") / READ_COST_UNITS, 0)
                                    + " | "
                                    + fmt(met.get(prefix + "lent_reserve_cost_units_total") / READ_COST_UNITS, 0)
                                    + " | " + fmt(met.get(prefix + "borrowed_cost_units_total") / READ_COST_UNITS, 0)
                                    + " (" + fmt(met.get("tailor_nbd_admission_bursts_borrowing_total"), 0) + ")"
                                    + " | " + fmt(met.get("tailor_nbd_admission_refused_total"), 0) + " |"
                            : " | | | | | |";
                    out.add("| " + mode + " " + round + " | " + label + " | " + fmt(req, 0) + " | "
                            + String.format(Locale.ROOT, "%.1f %%", req > 0 ? hot / req * 100 : 0) + " | "
                            + String.format(Locale.ROOT, "%.1f %%", req > 0 ? queued / req * 100 : 0) + " | "
                            + fmt(queued > 0 ? wait / queued * 1e3 : 0, 1) + " | " + fmt(waitMax * 1e3, 1) + common);
                }
            }
        }
        out.addAll(slowAttribution(r));
        return out;
    }

    /**
     * The slow-request attribution of each run (the proxy's metrics at its end): how many requests took over 50 ms,
     * the bursty tenant's share of them, and the top (export, segment) pairs with where their time went.
     */
    static List<String> slowAttribution(Result r) {
        List<String> out = new ArrayList<>();
        if (r.runs().stream().allMatch(run -> run.text().isEmpty())) {
            return out;
        }
        List<String> tenants = new ArrayList<>(r.settings().steadyNames());
        tenants.add("bursty");
        out.add("");
        out.add("Slow-request attribution (the proxy's metrics at the end of each run): requests over 50 ms, header"
                + " decoded to reply, by tenant, and the (export, segment) pairs with the most of them (segment ="
                + " offset ÷ " + r.settings().segmentSize() + "), with the mean time their slow requests spent queued"
                + " in admission and on the backend, and their class when admitted:");
        out.add("");
        out.add("| run | slow requests | bursty's share | top pairs | of them bursty's |");
        out.add("|---|--:|--:|---|--:|");
        for (Run run : r.runs()) {
            double all = tenants.stream()
                    .mapToDouble(t -> zeroIfAbsent(run.slowRequests(t)))
                    .sum();
            double bursty = zeroIfAbsent(run.slowRequests("bursty"));
            List<NbdTop.SlowSegment> top = run.slowSegments();
            List<NbdTop.SlowSegment> shown = top.subList(0, Math.min(SLOW_PAIRS_SHOWN, top.size()));
            long burstyPairs =
                    shown.stream().filter(p -> p.export().equals("bursty")).count();
            out.add("| " + run.mode() + " " + run.round() + " | "
                    + fmt(run.text().isEmpty() ? Double.NaN : all, 0)
                    + " | " + (all > 0 ? String.format(Locale.ROOT, "%.0f %%", bursty / all * 100) : "–") + " | "
                    + (shown.isEmpty()
                            ? "–"
                            : String.join(
                                    ", ",
                                    shown.stream()
                                            .map(p -> p.export() + "/" + p.segment())
                                            .toList()))
                    + " | "
                    + (shown.isEmpty() ? "–" : burstyPairs + " of " + shown.size()) + " |");
        }
        out.add("");
        out.add("Per pair: its slow requests (at most its overcount too high: the space-saving count), and over those"
                + " seen since it entered the top (slow − overcount), the mean queued wait (in admission or at the"
                + " fair dispatch door) and backend time and how"
                + " many were admitted hot, steady or not through admission:");
        out.add("");
        out.add("| run | export | segment | slow | overcount | queued wait ms | backend ms | hot | steady "
                + "| not admitted |");
        out.add("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for (Run run : r.runs()) {
            List<NbdTop.SlowSegment> top = run.slowSegments();
            for (NbdTop.SlowSegment p : top.subList(0, Math.min(SLOW_PAIRS_SHOWN, top.size()))) {
                out.add("| " + run.mode() + " " + run.round() + " | " + p.export() + " | " + p.segment() + " | "
                        + fmt(p.requests(), 0) + " | " + fmt(p.overcount(), 0) + " | "
                        + fmt(p.meanAdmissionWaitMillis(), 1) + " | "
                        + fmt(p.meanBackendMillis(), 1) + " | " + fmt(p.hot(), 0) + " | " + fmt(p.steady(), 0) + " | "
                        + fmt(p.none(), 0) + " |");
            }
        }
        return out;
    }

    private static double sum(ProxyMetrics met, String counter, List<String> exports) {
        return exports.stream()
                .mapToDouble(n -> zeroIfAbsent(met.get("tailor_nbd_admission_export_" + counter, n)))
                .sum();
    }

    private static double zeroIfAbsent(double value) {
        return Double.isNaN(value) ? 0 : value;
    }

    /** A percentile too few samples stand behind (fewer than {@link FioLatency#resolvable} asks): not resolvable. */
    static final String NOT_RESOLVABLE = StorageFigures.NOT_RESOLVABLE;

    /** What {@link #NOT_RESOLVABLE} means, under a table that has one, in the storage simulator's words. */
    static final String NOT_RESOLVABLE_LEGEND = StorageFigures.notResolvable(99.9, 99.99);

    /**
     * A table's percentile cell, µs: {@link #NOT_RESOLVABLE} when too few samples stand behind it ({@link
     * FioLatency#resolvable}), "–" when there are none.
     */
    static String percentile(FioLatency latency, double percent) {
        if (latency.samples() > 0 && !latency.resolvable(percent)) {
            return NOT_RESOLVABLE;
        }
        return fmt(latency.percentileMicros(percent), 0);
    }

    /**
     * {@link #change(double, double)} of a percentile of two histograms; {@link #NOT_RESOLVABLE} when either has
     * samples but too few for it: a change between two slowest samples says nothing of the percentile.
     */
    static String change(FioLatency ours, FioLatency baseline, double percent) {
        if ((ours.samples() > 0 && !ours.resolvable(percent))
                || (baseline.samples() > 0 && !baseline.resolvable(percent))) {
            return NOT_RESOLVABLE;
        }
        return change(ours.percentileMicros(percent), baseline.percentileMicros(percent));
    }

    /** {@code (ours / baseline − 1)} as {@code +12 %}, or "no data" when either is missing. */
    static String change(double ours, double baseline) {
        if (Double.isNaN(ours) || Double.isNaN(baseline) || baseline == 0) {
            return "no data";
        }
        return String.format(Locale.ROOT, "%+.0f %%", (ours / baseline - 1) * 100);
    }

    /** {@code x} with thousands separators and {@code digits} decimals; "–" for no data (NaN). */
    static String fmt(double x, int digits) {
        if (Double.isNaN(x)) {
            return "–";
        }
        // A value that rounds to zero prints as 0, not -0 (a difference of two readings can be a hair below zero).
        return String.format(Locale.ROOT, "%,." + digits + "f", Math.abs(x) < 0.5 * Math.pow(10, -digits) ? 0.0 : x);
    }

    /** A number as written in settings: 0.2, 99.9, 50; "NaN" for NaN ({@link Numbers#written}). */
    public static String fmtPlain(double x) {
        return Numbers.written(x);
    }

    /** The pooled summary of each mode and each run, for {@code --format json}. */
    public static Map<String, Object> json(Result r) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("experiment", "burst");
        out.put("settings", r.settings());
        out.put("capacityIops", r.capacityIops());
        out.put("capacityCostUnitsPerSecond", r.capacityCostUnitsPerSecond());
        Map<String, Object> pooled = new LinkedHashMap<>();
        for (String m : r.settings().modes()) {
            pooled.put(m, Map.of("steady", LatencySummary.of(r.steady(m)), "bursty", LatencySummary.of(r.bursty(m))));
        }
        out.put("pooled", pooled);
        List<Map<String, Object>> runs = new ArrayList<>();
        for (Run run : r.runs()) {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("admission", run.mode());
            each.put("round", run.round());
            each.put(
                    "steady",
                    LatencySummary.of(FioLatency.pooled(run.jobs(), r.settings().steadyNames())));
            each.put(
                    "steadyIops",
                    r.settings().steadyNames().stream()
                            .mapToDouble(n -> run.jobs().get(n).iops())
                            .sum());
            each.put("bursty", LatencySummary.of(run.jobs().get("bursty").latency()));
            each.put("burstyIops", run.jobs().get("bursty").iops());
            each.put(
                    "healthCheckMaxAgeMillisSinceStart",
                    LatencySummary.orNull(
                            run.metrics().get("tailor_nbd_loop_health_check_max_age_seconds", "0") * 1e3));
            each.put(
                    "dispatchDelayMaxMillisSinceStart",
                    LatencySummary.orNull(
                            run.metrics().get("tailor_nbd_loop_io_dispatch_delay_max_seconds", "0") * 1e3));
            each.put("cpuPressurePercent", LatencySummary.orNull(run.cpuPressurePercent()));
            List<String> tenants = new ArrayList<>(r.settings().steadyNames());
            tenants.add("bursty");
            Map<String, Object> slowByTenant = new LinkedHashMap<>();
            tenants.forEach(t -> slowByTenant.put(t, LatencySummary.orNull(run.slowRequests(t))));
            each.put("slowRequests", slowByTenant);
            List<Map<String, Object>> pairs = new ArrayList<>();
            for (NbdTop.SlowSegment p : run.slowSegments()) {
                Map<String, Object> pair = new LinkedHashMap<>();
                pair.put("export", p.export());
                pair.put("segment", p.segment());
                pair.put("slowRequests", LatencySummary.orNull(p.requests()));
                pair.put("overcount", LatencySummary.orNull(p.overcount()));
                pair.put("meanAdmissionWaitMillis", LatencySummary.orNull(p.meanAdmissionWaitMillis()));
                pair.put("meanBackendMillis", LatencySummary.orNull(p.meanBackendMillis()));
                pair.put("admittedHot", LatencySummary.orNull(p.hot()));
                pair.put("admittedSteady", LatencySummary.orNull(p.steady()));
                pair.put("notAdmitted", LatencySummary.orNull(p.none()));
                pairs.add(pair);
            }
            each.put("slowSegments", pairs);
            runs.add(each);
        }
        out.put("runs", runs);
        return out;
    }

    /**
     * Percentiles of one histogram for JSON, µs; null where there is no data, or too few samples for the
     * percentile ({@link FioLatency#resolvable}: not resolvable, "n/r" in the tables).
     *
     * @param samples requests in the histogram
     */
    record LatencySummary(
            long samples, Double p50Micros, Double p99Micros, Double p999Micros, Double p9999Micros, Double maxMicros) {

        static LatencySummary of(FioLatency h) {
            return new LatencySummary(
                    h.samples(),
                    reported(h, 50),
                    reported(h, 99),
                    reported(h, 99.9),
                    reported(h, 99.99),
                    orNull(h.maxMicros()));
        }

        /** P{@code percent} in µs, or null when it has no samples or too few. */
        static Double reported(FioLatency h, double percent) {
            return h.resolvable(percent) ? orNull(h.percentileMicros(percent)) : null;
        }

        static Double orNull(double value) {
            return Double.isNaN(value) ? null : value;
        }
    }
}
