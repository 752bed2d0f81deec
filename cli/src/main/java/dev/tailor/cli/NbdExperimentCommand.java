package dev.tailor.cli;

import dev.tailor.common.Numbers;
import dev.tailor.lab.BurstExperiment;
import dev.tailor.lab.ClusterRuns;
import dev.tailor.lab.ExperimentReport;
import dev.tailor.lab.ExperimentRig;
import dev.tailor.lab.LowLoadExperiment;
import dev.tailor.nbd.config.ByteSize;
import dev.tailor.nbd.config.NbdConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor nbd experiment burst|low-load}: the two experiments with real clients, run
 * against {@code tailor nbd serve} with fio's {@code nbd} engine (and nbdkit as the burst's backend).
 *
 * <p>Maintainer note: the proxy runs as a child JVM ({@code java -cp <this class path> ... nbd serve}),
 * not in this JVM through {@code NbdServer.start}, for three reasons. (1) Each run gets a fresh JVM, as
 * with the scripts this replaces, so both configurations of a round start equally cold: in one JVM the
 * first run would pay for class loading and the JIT (C2 compiles on a 2-core machine compete with the
 * loop thread for tens of seconds at 500 reads per second) and the later ones would not, which biases
 * the low-load comparison towards whichever mode runs second. (2) The proxy's heap, GC pauses and JIT
 * threads are its own, not shared with this driver's fio parsing and plotting. (3) The figures stay
 * comparable with the scripts' earlier ones in README.md and docs/nbd-record.md. The price: metrics come
 * from the proxy's metrics file ({@code loop.metricsFile}), read as the scripts did, not from its
 * objects. Every child (nbdkit, fio, the proxy) is stopped on exit, failure and Ctrl-C
 * ({@link ExperimentRig}).
 */
@Command(
        name = "experiment",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "Experiments with real clients (fio's nbd engine) against tailor nbd serve: segment admission under a"
                    + " bursty tenant (burst) and the I/O-priority event loop at low load (low-load). docs/nbd.md,"
                    + " \"Experiments with real clients\".",
            "",
        },
        subcommands = {
            NbdExperimentCommand.Burst.class,
            NbdExperimentCommand.LowLoad.class,
            CommandLine.HelpCommand.class
        })
final class NbdExperimentCommand extends CommandGroup {

    /**
     * {@code value} if in [min, max], else a {@link CliException} naming the option, its value and the
     * range as the config's messages write it: {@code --runtime: 0 (expected: seconds, a whole number in
     * [1, 86400])}.
     *
     * @param what what the option counts, before the range ({@code "seconds"}); empty for nothing
     */
    static int check(String option, int value, int min, int max, String what) {
        if (value < min || value > max) {
            throw new CliException(
                    option + ": " + value + " (expected: " + prefixed(what, NbdConfig.whole(min, max)) + ")");
        }
        return value;
    }

    /**
     * {@code value} if in [min, max] ({@code (min, max]} when not {@code minInclusive}), else a
     * {@link CliException} naming the option, its value as written and the interval: {@code --reserve: 2
     * (expected: a number in [0, 1])}; NaN fails.
     */
    static double check(String option, double value, double min, boolean minInclusive, double max, String what) {
        if (Double.isNaN(value) || (minInclusive ? value < min : value <= min) || value > max) {
            throw new CliException(option + ": " + Numbers.written(value) + " (expected: "
                    + prefixed(what, Numbers.interval(!minInclusive, min, max)) + ")");
        }
        return value;
    }

    private static String prefixed(String what, String range) {
        return what.isEmpty() ? range : what + ", " + range;
    }

    /** The options both experiments share. */
    abstract static class Common {

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(
                names = "--format",
                paramLabel = "FORMAT",
                defaultValue = "table",
                description = "table (Markdown tables, as in README.md) or json. Default: ${DEFAULT-VALUE}.")
        SharedOptions.Format format;

        @Option(
                names = "--report",
                paramLabel = "DIR",
                description = "Also write DIR/index.html with plots, each plot also a PNG file in DIR.")
        Path report;

        @Option(
                names = "--dir",
                paramLabel = "DIR",
                description = "Work directory: fio's jobs and JSON output, the"
                        + " proxy's config, logs and metrics. Default: bench/target/NAME in a Tailor checkout, else a new"
                        + " temporary directory.")
        Path dir;

        /**
         * The outermost folder {@link #prepare} created for the report, or null: a stop removes the report folder
         * and its parents up to it while they are still empty.
         */
        Path createdFrom;

        /** Checks the report and work directories and the tools; returns the work directory. */
        Path prepare(String name, boolean nbdkit) throws IOException {
            if (report != null) {
                createdFrom = ClusterRuns.Stopping.firstMissing(report);
                report = SharedOptions.checkReportDir(report, "--report");
            }
            Path work = dir == null ? ExperimentRig.defaultDir(name) : ExperimentRig.checkDir(dir);
            ExperimentRig.missingTools(nbdkit).ifPresent(reason -> {
                throw new CliException(reason, 1, null);
            });
            return work;
        }

        /**
         * While open, a Ctrl-C or SIGTERM says on one line how far the command got and what it wrote (its results
         * go out whole or not at all, its report's pages together: {@link #print}, {@link #writeReport}), and removes
         * the report folder it created while still empty (the programs it started are stopped by the rig). Without
         * it the command ended silently and left that folder behind.
         */
        ClusterRuns.Stopping stopping() {
            ClusterRuns.Stopping stopping =
                    ClusterRuns.Stopping.on(spec.commandLine().getErr(), report, createdFrom);
            stopping.during("during the experiment's runs");
            return stopping;
        }

        /** Prints the results whole unless the command is being stopped; whether they were printed. */
        boolean print(ClusterRuns.Stopping stopping, List<String> markdown, Object json) {
            stopping.during("after the experiment's runs, printing its results");
            PrintWriter out = spec.commandLine().getOut();
            String text = format == SharedOptions.Format.json
                    ? Json.write(json) + System.lineSeparator()
                    : markdown.stream()
                            .map(line -> line + System.lineSeparator())
                            .collect(Collectors.joining());
            return stopping.publish("the results printed", () -> {
                out.print(text);
                out.flush();
            });
        }

        /** Writes the report's pages together unless the command is being stopped (see {@link #print}). */
        void writeReport(ClusterRuns.Stopping stopping, String title, ExperimentReport.Section section) {
            if (report == null) {
                return;
            }
            stopping.during("after the experiment's runs, writing the report");
            Path file = stopping.writeReport(
                    report, pages -> ExperimentReport.write(pages, "index.html", title, List.of(section)));
            if (file != null) {
                spec.commandLine()
                        .getErr()
                        .println("tailor: report written to "
                                + file.toAbsolutePath().normalize());
            }
        }
    }

    /** {@code tailor nbd experiment burst}. */
    @Command(
            name = "burst",
            mixinStandardHelpOptions = true,
            versionProvider = Tailor.Version.class,
            usageHelpWidth = 110,
            sortOptions = false,
            description = {
                "Segment admission off vs on, and the fair dispatch door alone, in tailor nbd serve (proxy mode) in"
                        + " front of a scarce backend shared by every tenant: 4 steady fio tenants and 1 bursty one, each its own export. Prints the"
                        + " steady tenants' latency percentiles (fio lat, pooled over tenants and rounds), each run's"
                        + " figures, the bursty tenant's, and admission's counters, as Markdown tables.",
                "",
                "Backend: nbdkit's memory plugin behind the delay filter, --servers threads of --delay-ms each (a"
                        + " k-server FIFO queue), reached through a second nbdkit (nbd plugin, shared=true) so that"
                        + " every tenant's requests share them through one connection. Its capacity is measured"
                        + " first (fio, queue depth 64, 5 s) and admission's budget set to measured IOPS ×"
                        + " --capacity-factor × 117,399 (a 4 KiB random read in admission's cost model).",
                "Tenants: --steady fio jobs (4 KiB random reads, queue depth 4, --steady-iops each) and one bursty"
                        + " job (queue depth --burst-qd, unthrottled for --burst-on ms of I/O, then idle --burst-off"
                        + " ms); one proxy event loop. Each round runs admission off, then on (what Tailor ships),"
                        + " then the fair dispatch door alone (admission off, --fair-dispatch on: what docs/nbd.md"
                        + " recommends for the proxy), a fresh proxy each time; --modes off,on leaves the door out,"
                        + " --modes off,paper,on runs the paper's mechanism instead.",
                "",
                "Takes about (ramp + runtime + " + BurstExperiment.RUN_OVERHEAD_SECONDS + " s) × modes × rounds + "
                        + (1 + 5 + BurstExperiment.FIXED_OVERHEAD_SECONDS) + " s, as its first line says: each run"
                        + " starts a proxy JVM and fio, and the backend is started and measured once. The defaults"
                        + " take about 7 minutes, one round of 2+6 s about 49 s; a busy machine takes longer. Needs"
                        + " fio (with its nbd engine) and nbdkit (memory and nbd plugins, delay filter); Debian: apt"
                        + " install fio nbdkit.",
                ""
            },
            footer = {
                "",
                "Examples:",
                "  tailor nbd experiment burst --rounds 3 --report out/burst    # README's figures, about 11 minutes",
                "  tailor nbd experiment burst --rounds 3 --modes off,paper,on   # shipped vs the paper's, 11 minutes",
                "  tailor nbd experiment burst --rounds 2 --modes off,paper --reserve 0.35",
                "  tailor nbd experiment burst --modes off,on    # admission off vs on only, about 5 minutes",
                "",
                "Exit codes: 0 done, 1 a program is missing or failed (its log is shown), 2 bad option, 130/143 stopped"
                        + " by Ctrl-C/SIGTERM."
            })
    static final class Burst extends Common implements Callable<Integer> {

        @Option(
                names = "--runtime",
                paramLabel = "S",
                defaultValue = "60",
                description = "Seconds measured per run. Default: ${DEFAULT-VALUE}.")
        int runtime;

        @Option(
                names = "--ramp",
                paramLabel = "S",
                defaultValue = "5",
                description = "Seconds of warm-up per run, not measured. Default: ${DEFAULT-VALUE}.")
        int ramp;

        @Option(
                names = "--rounds",
                paramLabel = "N",
                defaultValue = "2",
                description = "Rounds of the --modes. Default: ${DEFAULT-VALUE}.")
        int rounds;

        @Option(
                names = "--steady",
                paramLabel = "N",
                defaultValue = "4",
                description = "Steady tenants. Default: ${DEFAULT-VALUE}.")
        int steady;

        @Option(
                names = "--steady-iops",
                paramLabel = "N",
                defaultValue = "100",
                description = "Reads per second of each steady tenant. Default: ${DEFAULT-VALUE}.")
        int steadyIops;

        @Option(
                names = "--burst-qd",
                paramLabel = "N",
                defaultValue = "256",
                description = "The bursty tenant's queue depth (also admission's queue per segment: nothing is"
                        + " refused). Default: ${DEFAULT-VALUE}.")
        int burstQd;

        @Option(
                names = "--burst-on",
                paramLabel = "MS",
                defaultValue = "100",
                description = "The bursty tenant's I/O time per cycle, ms. Default: ${DEFAULT-VALUE}.")
        int burstOn;

        @Option(
                names = "--burst-off",
                paramLabel = "MS",
                defaultValue = "400",
                description = "Its idle time per cycle, ms. Default: ${DEFAULT-VALUE}.")
        int burstOff;

        @Option(
                names = "--servers",
                paramLabel = "N",
                defaultValue = "8",
                description = "The backend's request threads. Default: ${DEFAULT-VALUE}.")
        int servers;

        @Option(
                names = "--delay-ms",
                paramLabel = "MS",
                defaultValue = "5",
                description = "Each backend request's delay, ms. Default: ${DEFAULT-VALUE}.")
        int delayMs;

        @Option(
                names = "--segment-size",
                paramLabel = "SIZE",
                defaultValue = "256MiB",
                description = "Admission's segment size (each export is 1 GiB). Default: ${DEFAULT-VALUE}.")
        String segmentSize;

        @Option(
                names = "--reserve",
                paramLabel = "R",
                defaultValue = "0.2",
                description = "Admission's reserve fraction (admission.reserveFraction; the paper mode's, since"
                        + " on sizes its reserve from the steady demand). Default: ${DEFAULT-VALUE}.")
        double reserve;

        @Option(
                names = "--modes",
                paramLabel = "LIST",
                defaultValue = "off,on,door",
                split = ",",
                description = "The configurations of each round, in this order: off (no admission), on (what"
                        + " Tailor ships), paper (the paper's mechanism, --admission-variant paper) and door (admission"
                        + " off, the fair dispatch door alone, its depth --servers: --fair-dispatch on)."
                        + " Default: ${DEFAULT-VALUE}.")
        List<String> modes;

        @Option(
                names = "--capacity-factor",
                paramLabel = "F",
                defaultValue = "1.0",
                description = "Admission's budget as a multiple of the measured capacity. Default: ${DEFAULT-VALUE}.")
        double capacityFactor;

        @Override
        public Integer call() throws IOException, InterruptedException {
            BurstExperiment.Settings settings = settings();
            BurstExperiment.Result result;
            try (ClusterRuns.Stopping stopping = stopping()) {
                result = BurstExperiment.run(
                        settings, DemoCommand.SERVE_COMMAND, spec.commandLine().getErr());
                if (!print(stopping, BurstExperiment.markdown(result), BurstExperiment.json(result))) {
                    return 1; // the stop said so
                }
                writeReport(
                        stopping,
                        "Tailor: segment admission with real clients (burst)",
                        ExperimentReport.section(result, "burst"));
            }
            return 0;
        }

        /** The options, checked (exit 2 naming the option), with the tools present (exit 1 naming the missing one). */
        BurstExperiment.Settings settings() throws IOException {
            check("--runtime", runtime, 1, 86_400, "seconds");
            check("--ramp", ramp, 0, 3_600, "seconds");
            check("--rounds", rounds, 1, 100, "");
            check("--steady", steady, 1, 64, "tenants");
            check("--steady-iops", steadyIops, 1, 1_000_000, "reads per second");
            check("--burst-qd", burstQd, 1, 256, "a queue depth (the proxy's maxInFlightRequestsPerConnection)");
            check("--burst-on", burstOn, 1, 60_000, "ms");
            check("--burst-off", burstOff, 0, 60_000, "ms");
            check("--servers", servers, 1, 1_024, "threads");
            check("--delay-ms", delayMs, 0, 10_000, "ms");
            ByteSize segment;
            try {
                segment = ByteSize.parse(segmentSize);
            } catch (IllegalArgumentException e) {
                throw new CliException("--segment-size: " + e.getMessage());
            }
            if (segment.bytes() < (1L << 20) || segment.bytes() % (1L << 20) != 0 || segment.bytes() > (1L << 30)) {
                throw new CliException("--segment-size: " + segmentSize + " (expected: a multiple of admission's 1MiB"
                        + " block, at most the 1GiB export)");
            }
            check("--reserve", reserve, 0, true, 1, "");
            check("--capacity-factor", capacityFactor, 0, false, 100, "");
            for (String mode : modes) {
                if (!BurstExperiment.MODES.contains(mode)) {
                    throw new CliException("--modes: \"" + mode + "\" (expected: a list of off, on, paper and door,"
                            + " e.g. off,paper,on)");
                }
            }
            if (new java.util.HashSet<>(modes).size() != modes.size()) {
                throw new CliException(
                        "--modes: " + String.join(",", modes) + " names one twice (expected: each at" + " most once)");
            }
            Path work = prepare("admission", true);
            return new BurstExperiment.Settings(
                    runtime,
                    ramp,
                    rounds,
                    steady,
                    steadyIops,
                    burstQd,
                    burstOn,
                    burstOff,
                    servers,
                    delayMs,
                    segment,
                    reserve,
                    capacityFactor,
                    work,
                    modes);
        }
    }

    /** {@code tailor nbd experiment low-load}. */
    @Command(
            name = "low-load",
            mixinStandardHelpOptions = true,
            versionProvider = Tailor.Version.class,
            usageHelpWidth = 110,
            sortOptions = false,
            description = {
                "tailor nbd serve --loop fifo vs --loop priority at low load while the proxy's background work runs."
                        + " Prints P50, P99, P99.9 of fio's latency (lat, pooled over the rounds) per loop mode and per"
                        + " run, with the health-check age sampled while fio measured against twice its period, as"
                        + " Markdown tables.",
                "",
                "One export, a 256 MiB file of random data on tmpfs (/dev/shm when writable), one proxy event loop."
                        + " One fio job: 4 KiB random reads, queue depth 1, --iops per second. Meanwhile the loop"
                        + " runs per-segment statistics every 1 ms, the metrics export every second, a health check"
                        + " every --health-ms and the synthetic maintenance: every --period-us, --tasks tasks of"
                        + " --busy-us of CPU each, queued at once. Each round runs fifo, then priority, a fresh proxy"
                        + " each time.",
                "",
                "Takes about (ramp + runtime + " + BurstExperiment.RUN_OVERHEAD_SECONDS + " s) × 2 × rounds: each run"
                        + " starts a proxy JVM and fio. The defaults take about 4 minutes; a busy machine takes longer."
                        + " Needs fio with its nbd engine (Debian: apt install fio).",
                ""
            },
            footer = {
                "",
                "Examples:",
                "  tailor nbd experiment low-load --rounds 3 --report out/low-load  # README's figures, 5 minutes",
                "  tailor nbd experiment low-load --rounds 2 --tasks 8 --busy-us 25 --period-us 1000",
                "",
                "Exit codes: 0 done, 1 a program is missing or failed (its log is shown), 2 bad option, 130/143 stopped"
                        + " by Ctrl-C/SIGTERM."
            })
    static final class LowLoad extends Common implements Callable<Integer> {

        @Option(
                names = "--runtime",
                paramLabel = "S",
                defaultValue = "45",
                description = "Seconds measured per run. Default: ${DEFAULT-VALUE}.")
        int runtime;

        @Option(
                names = "--ramp",
                paramLabel = "S",
                defaultValue = "5",
                description = "Seconds of warm-up per run, not measured. Default: ${DEFAULT-VALUE}.")
        int ramp;

        @Option(
                names = "--rounds",
                paramLabel = "N",
                defaultValue = "2",
                description = "Rounds of (fifo, priority). Default: ${DEFAULT-VALUE}.")
        int rounds;

        @Option(
                names = "--iops",
                paramLabel = "N",
                defaultValue = "500",
                description = "The fio job's reads per second. Default: ${DEFAULT-VALUE}.")
        int iops;

        @Option(
                names = "--tasks",
                paramLabel = "N",
                defaultValue = "100",
                description = "Maintenance tasks per period (loop.maintenanceTasks); 0 turns maintenance off."
                        + " Default: ${DEFAULT-VALUE}.")
        int tasks;

        @Option(
                names = "--busy-us",
                paramLabel = "US",
                defaultValue = "100",
                description = "CPU time of each maintenance task, µs. Default: ${DEFAULT-VALUE}.")
        int busyUs;

        @Option(
                names = "--period-us",
                paramLabel = "US",
                defaultValue = "100000",
                description = "Maintenance period, µs. Default: ${DEFAULT-VALUE} (a 10 ms batch every 100 ms).")
        int periodUs;

        @Option(
                names = "--health-ms",
                paramLabel = "MS",
                defaultValue = "100",
                description = "Health-check period (loop.healthCheckPeriodMillis), ms. Default: ${DEFAULT-VALUE}.")
        int healthMs;

        @Override
        public Integer call() throws IOException, InterruptedException {
            LowLoadExperiment.Settings settings = settings();
            LowLoadExperiment.Result result;
            try (ClusterRuns.Stopping stopping = stopping()) {
                result = LowLoadExperiment.run(
                        settings, DemoCommand.SERVE_COMMAND, spec.commandLine().getErr());
                if (!print(stopping, LowLoadExperiment.markdown(result), LowLoadExperiment.json(result))) {
                    return 1; // the stop said so
                }
                writeReport(
                        stopping,
                        "Tailor: the I/O-priority event loop with a real client (low load)",
                        ExperimentReport.section(result, "low-load"));
            }
            return 0;
        }

        LowLoadExperiment.Settings settings() throws IOException {
            check("--runtime", runtime, 1, 86_400, "seconds");
            check("--ramp", ramp, 0, 3_600, "seconds");
            check("--rounds", rounds, 1, 100, "");
            check("--iops", iops, 1, 1_000_000, "reads per second");
            check("--tasks", tasks, 0, 10_000, "tasks per period (loop.maintenanceTasks; 0: no maintenance)");
            check("--busy-us", busyUs, 0, 1_000_000, "µs (loop.maintenanceBusyMicros)");
            check("--period-us", periodUs, 1, 60_000_000, "µs (loop.maintenancePeriodMicros)");
            check("--health-ms", healthMs, 1, 3_600_000, "ms (loop.healthCheckPeriodMillis)");
            Path work = prepare("eventloop", false);
            return new LowLoadExperiment.Settings(runtime, ramp, rounds, iops, tasks, busyUs, periodUs, healthMs, work);
        }
    }
}
