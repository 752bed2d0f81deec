package dev.tailor.lab;

import dev.tailor.common.IoErrors;
import dev.tailor.lab.report.ClusterReport;
import dev.tailor.lab.report.HtmlPages;
import dev.tailor.lab.report.StorageReport;
import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageScenario;
import dev.tailor.sim.storage.StorageSetup;
import dev.tailor.sim.storage.StorageSweep;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The demo behind {@code tailor demo}: the paper's comparison in the cluster simulator — paper-dag and
 * paper-pairwise on network A at 100 and 400 RPS, every policy, under both CPU-limit models — with
 * our ratios next to the paper's and an HTML report; then a short storage comparison
 * (burst-microbench at ×8 and ×16 bursts, fifo, static-cap, mclock and segment admission, 10 s
 * measured) next to the storage paper's figures; then, when fio and nbdkit are installed, short runs
 * of the two NBD experiments with real clients ({@code tailor nbd experiment low-load} and {@code burst}
 * with admission off, on and the fair dispatch door alone, one round of
 * {@value #EXPERIMENT_RAMP_SECONDS}+{@value #EXPERIMENT_RUNTIME_SECONDS} s per run, about 75 s with each run's
 * start and stop)
 * next to their targets. {@link #run} runs it; the {@link Outcome} prints it as a table or
 * JSON and writes the report.
 */
public final class Demo {

    /** The paper's figures (HEART, IEEE CLOUD 2025), P99 ms. */
    static final double PAPER_PAIRWISE_HEART = 194;

    static final double PAPER_PAIRWISE_LR = 293;
    static final double PAPER_DAG_HEART = 82;
    static final double PAPER_DAG_LR = 768;
    static final double PAPER_DAG_DEFAULT = 30_620;
    /** The storage paper's figures (NSDI 2026): the largest burst-test reduction, static cap's idle share. */
    static final double PAPER_BURST_REDUCTION_PERCENT = 97;

    static final double PAPER_STATIC_CAP_UNUSED_PERCENT = 27;
    /**
     * The cluster part's policies: the simulator's full comparison (the paper's policies with {@code heart},
     * what Tailor ships, and the per-request peers prequal and peak-ewma) and {@code heart-paper}, the
     * paper's HEART, which the lines against the paper's figures compare.
     */
    static final List<String> DEMO_POLICIES = java.util.stream.Stream.concat(
                    ClusterSimulation.COMPARISON.stream(), java.util.stream.Stream.of(ClusterSimulation.HEART_PAPER))
            .toList();

    /** The storage part: scenario, variants, policies, measured seconds. */
    static final String STORAGE_SCENARIO = "burst-microbench";

    static final List<Double> STORAGE_MULTIPLIERS = List.of(8.0, 16.0);
    static final List<String> STORAGE_POLICIES =
            List.of("fifo", "static-cap", "mclock", "segment-admission-paper", "segment-admission");
    static final double STORAGE_SECONDS = 10;
    /** The NBD experiments' short runs: one round, seconds of warm-up and measured per configuration. */
    static final int EXPERIMENT_RAMP_SECONDS = 2;

    static final int EXPERIMENT_RUNTIME_SECONDS = 6;
    /**
     * The burst test's configurations: admission off, on (with its door) and the fair dispatch door alone,
     * which docs/nbd.md recommends for the proxy; both are compared against off. The experiment's own
     * defaults are the same three.
     */
    static final List<String> EXPERIMENT_BURST_MODES = List.of("off", "on", "door");
    /** The experiments' targets: the paper's deployed low-load P99.9 change; the health-check bound in periods. */
    static final double PAPER_LOW_LOAD_P999_CHANGE_PERCENT = -22;

    static final double HEALTH_CHECK_BOUND_PERIODS = 2;

    private Demo() {}

    /**
     * What to run.
     *
     * @param threads runs in parallel, 1 .. 256
     * @param warmupSeconds simulated warm-up per run, or {@code null} for the scenarios'
     * @param durationSeconds simulated time measured per run, or {@code null} for the scenarios'
     * @param experiments whether to run the NBD experiments with real clients (when fio and nbdkit are there)
     * @param serveCommand the main class and arguments that run {@code tailor nbd serve} on this JVM's class
     *     path, for the experiments' proxy (see {@link ExperimentRig#startProxy})
     */
    public record Options(
            int threads,
            Double warmupSeconds,
            Double durationSeconds,
            boolean experiments,
            List<String> serveCommand) {}

    /**
     * Runs the simulations and, when asked and possible, the NBD experiments; progress and notes go to
     * {@code err}.
     *
     * @throws LabException (exit 2) when an option is out of range; (exit 1) when interrupted
     */
    public static Outcome run(Options options, PrintWriter err) {
        return run(options, err, null);
    }

    /**
     * As {@link #run(Options, PrintWriter)}, telling {@code stopping} (may be null) each stage and its
     * finished runs, so that a stop says how far the demo got.
     */
    public static Outcome run(Options options, PrintWriter err, ClusterRuns.Stopping stopping) {
        int workers = options.threads();
        Plan plan = plan(options);
        List<ClusterSweep.Run> runs = plan.runs();
        Map<String, Double> timeoutMillis = plan.timeoutMillis();
        List<ClusterScenario> scenarios = plan.scenarios();
        err.println("tailor: demo: " + runs.size() + " simulated runs (paper-dag and paper-pairwise, network A, 100 and"
                + " 400 RPS, " + DEMO_POLICIES.size() + " policies, fluid and cfs-quota CPU limits) on " + workers
                + " thread"
                + (workers == 1 ? "" : "s"));
        if (stopping != null) {
            stopping.next(runs.size(), "simulated run");
        }
        List<RunResult> results =
                ClusterRuns.execute(runs, ClusterSimulation.PolicyConfigs.DEFAULTS, workers, err, stopping);
        SimulationOutput.foldedWarnings(results).forEach(w -> err.println("tailor: warning: " + w));
        TextTable comparison = comparisonTable(results);
        StorageScenario storageScenario = StorageRuns.checked(
                StorageRuns.load(STORAGE_SCENARIO).scenario().withDuration(STORAGE_SECONDS));
        StorageSetup storageSetup = StorageRuns.setup(storageScenario, relative -> {
            throw new LabException("the demo's storage scenario reads no data files (asked for " + relative + ")");
        });
        List<StorageSweep.Run> storageRuns = new ArrayList<>();
        for (StorageSetup variant : storageSetup.variants()) {
            if (STORAGE_MULTIPLIERS.contains(variant.burstMultiplier())) {
                STORAGE_POLICIES.forEach(policy -> storageRuns.add(new StorageSweep.Run(variant, policy)));
            }
        }
        err.println("tailor: demo: " + storageRuns.size() + " storage runs (" + STORAGE_SCENARIO + " at ×8 and ×16"
                + " bursts, " + String.join(", ", STORAGE_POLICIES) + "; " + SimulationOutput.fmt(STORAGE_SECONDS)
                + " s measured each)");
        if (stopping != null) {
            stopping.next(storageRuns.size(), "storage run");
        }
        List<StorageRunResult> storage = StorageRuns.execute(storageRuns, workers, err, stopping);
        if (stopping != null) {
            stopping.during(options.experiments() ? "during the NBD experiments" : "before printing its results");
        }
        TextTable storageComparison = storageTable(storage);
        Experiments experiments = options.experiments() ? experiments(options.serveCommand(), err) : null;
        DemoSummary.Summary summary = DemoSummary.of(
                results,
                timeoutMillis,
                storage,
                experiments == null ? null : experiments.lowLoad(),
                experiments == null ? null : experiments.burst(),
                experiments == null
                        ? "skipped (--no-experiments)."
                        : experiments.ran()
                                ? null
                                : experiments.failure() != null
                                        ? "failed: " + experiments.failure()
                                        : "skipped: " + experiments.whyNot() + ".");
        return new Outcome(
                options,
                results,
                timeoutMillis,
                scenarios,
                comparison,
                storageScenario,
                storageSetup,
                storage,
                storageComparison,
                experiments,
                summary.lines(),
                summary.verdicts());
    }

    /**
     * Checks {@code options} as {@link #run} does before it runs anything, so that a caller can refuse bad
     * input before it creates a folder or a file.
     *
     * @throws LabException (exit 2) naming the option out of range, e.g. {@code --duration-seconds: -1 (...)}
     */
    public static void check(Options options) {
        plan(options);
    }

    /** The cluster part's runs, each scenario's timeout (ms, by name) and its scenarios as loaded. */
    private record Plan(
            List<ClusterSweep.Run> runs, Map<String, Double> timeoutMillis, List<ClusterScenario> scenarios) {}

    private static Plan plan(Options options) {
        List<ClusterSweep.Run> runs = new ArrayList<>();
        Map<String, Double> timeoutMillis = new LinkedHashMap<>();
        List<ClusterScenario> scenarios = new ArrayList<>();
        for (String name : List.of("paper-dag", "paper-pairwise")) {
            ClusterScenario base = ClusterRuns.load(name, "");
            scenarios.add(base);
            timeoutMillis.put(name, base.timeoutSeconds() * 1000);
            for (ClusterScenario.CpuModel model : ClusterScenario.CpuModel.values()) {
                ClusterScenario variant =
                        ClusterRuns.variant(base, null, model, options.warmupSeconds(), options.durationSeconds(), "A");
                for (double rps : List.of(100.0, 400.0)) {
                    for (String policy : DEMO_POLICIES) {
                        runs.add(new ClusterSweep.Run(variant, policy, rps));
                    }
                }
            }
        }
        return new Plan(runs, timeoutMillis, scenarios);
    }

    /**
     * What the demo found: the cluster runs, the storage runs, the experiments (or why they did not run),
     * the tables against the papers, the Summary and its comparisons' verdicts.
     */
    public record Outcome(
            Options options,
            List<RunResult> results,
            Map<String, Double> timeoutMillis,
            List<ClusterScenario> scenarios,
            TextTable comparison,
            StorageScenario storageScenario,
            StorageSetup storageSetup,
            List<StorageRunResult> storage,
            TextTable storageComparison,
            Experiments experiments,
            List<String> summary,
            List<DemoSummary.Verdict> verdicts) {

        /** 1 when the experiments failed, else 0. */
        public int exitCode() {
            return experiments != null && experiments.failure() != null ? 1 : 0;
        }

        /**
         * The JSON document: {@code results}, {@code storage}, when they ran {@code experiments}, and
         * {@code verdicts}, the Summary's comparisons ({@link DemoSummary.Verdict}).
         */
        public Map<String, Object> json() {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("results", results);
            json.put("storage", storage);
            if (experiments != null && experiments.ran()) {
                json.put(
                        "experiments",
                        Map.of(
                                "lowLoad",
                                LowLoadExperiment.json(experiments.lowLoad()),
                                "burst",
                                BurstExperiment.json(experiments.burst())));
            }
            json.put("verdicts", verdicts);
            return json;
        }

        /** The tables, the comparisons against the papers and the Summary, as text. */
        public void printTable(PrintWriter out) {
            out.println("HEART in the cluster simulator: P50, P99 and P99.9 latency (ms) per policy");
            out.println();
            SimulationOutput.groupedTable(out, results, timeoutMillis);
            out.println();
            comparison.lines().forEach(out::println);
            out.println();
            out.println(SimulationOutput.speed(results));
            out.println();
            out.println("Segment admission in the storage simulator");
            out.println();
            StorageOutput.table(out, storage);
            out.println();
            storageComparison.lines().forEach(out::println);
            if (experiments != null && experiments.ran()) {
                out.println();
                out.println("The NBD proxy with real clients");
                out.println();
                experimentComparison(experiments.lowLoad(), experiments.burst()).forEach(out::println);
            }
            out.println();
            summary.forEach(out::println);
        }

        /**
         * The three pages in {@code report}: index.html (cluster), storage.html, experiments.html (when the
         * experiments ran); says where on {@code err}.
         *
         * @throws LabException (exit 1) naming the folder and the system's reason
         */
        public void writeReport(Path report, PrintWriter err) {
            writeReport(report, err, null);
        }

        /**
         * As {@link #writeReport(Path, PrintWriter)}; with {@code stopping} (may be null) the pages are written
         * aside and put into {@code report} together ({@link ClusterRuns.Stopping#publishReport}), or not at all
         * when the demo is stopped meanwhile.
         */
        public void writeReport(Path report, PrintWriter err, ClusterRuns.Stopping stopping) {
            Double warmupSeconds = options.warmupSeconds();
            Double durationSeconds = options.durationSeconds();
            boolean ran = experiments != null && experiments.ran();
            String durations = (warmupSeconds == null ? "" : " --warmup-seconds " + SimulationOutput.fmt(warmupSeconds))
                    + (durationSeconds == null ? "" : " --duration-seconds " + SimulationOutput.fmt(durationSeconds));
            List<String> intro = new ArrayList<>();
            intro.add("HEART (IEEE CLOUD 2025) against the routing users would otherwise have, in Tailor's cluster"
                    + " simulator: the paper's DAG and pairwise applications on five workers of per-core speed 1.0,"
                    + " 0.9, 0.7, 0.5 and 0.4, network A (all links 0.1-0.9 ms), seed 20250701.");
            intro.add("");
            intro.addAll(comparison.markdown());
            intro.add("");
            intro.add("Storage: segment admission on the burst microbenchmark is in storage.html next to this page.");
            if (ran) {
                intro.add("Real clients: the I/O-priority event loop and segment admission in tailor nbd serve, driven"
                        + " by fio, are in experiments.html next to this page.");
            }
            List<String> clusterCommands = new ArrayList<>(List.of("./tailor demo" + durations));
            for (String scenario : List.of("paper-dag", "paper-pairwise")) {
                clusterCommands.add("./tailor heart simulate --scenario " + scenario + " --network A --rps 100,400"
                        + " --cpu-model fluid,cfs-quota --policies " + String.join(",", DEMO_POLICIES) + durations);
            }
            List<String> storageIntro = new ArrayList<>();
            storageIntro.add(storageScenario.description() + "; " + SimulationOutput.fmt(STORAGE_SECONDS)
                    + " s measured per run.");
            storageIntro.add("");
            storageIntro.addAll(storageComparison.markdown());
            List<String> storageCommands = List.of(
                    "./tailor demo" + durations,
                    "./tailor storage simulate --scenario "
                            + STORAGE_SCENARIO + " --policies " + String.join(",", STORAGE_POLICIES)
                            + " --duration-seconds "
                            + SimulationOutput.fmt(STORAGE_SECONDS));
            Path file = report.resolve("index.html");
            try {
                Path pages = stopping == null ? report : stopping.staging(report);
                if (pages == null) {
                    return; // stopped before the report: the stop says so
                }
                ClusterReport.write(
                        pages,
                        new HtmlPages.Frame(
                                "Tailor demo: HEART in the cluster simulator", summary, intro, clusterCommands),
                        results,
                        null,
                        scenarios);
                StorageReport.write(
                        pages,
                        "storage.html",
                        new HtmlPages.Frame(
                                "Tailor demo: segment admission in the storage simulator",
                                summary,
                                storageIntro,
                                storageCommands),
                        storageSetup.notes(),
                        storage);
                if (ran) {
                    List<String> experimentIntro =
                            new ArrayList<>(experimentTable(experiments.lowLoad(), experiments.burst())
                                    .markdown());
                    ExperimentReport.write(
                            pages,
                            "experiments.html",
                            new HtmlPages.Frame(
                                    "Tailor demo: the NBD proxy with real clients (short runs)",
                                    summary,
                                    experimentIntro,
                                    List.of(
                                            "./tailor demo",
                                            "./tailor nbd experiment low-load --rounds 3",
                                            "./tailor nbd experiment burst --rounds 3")),
                            List.of(
                                    ExperimentReport.section(experiments.lowLoad(), "low-load"),
                                    ExperimentReport.section(experiments.burst(), "burst")));
                }
                if (stopping != null && !stopping.publishReport(report)) {
                    return; // stopped meanwhile: the stop says so
                }
                if (!ran) {
                    removeEarlierExperiments(report);
                }
            } catch (IOException e) {
                if (stopping != null) {
                    stopping.discardReport();
                }
                throw new LabException("cannot write the report to " + report + ": " + IoErrors.reason(e), 1, e);
            }
            err.println("tailor: report written to " + file.toAbsolutePath().normalize() + " and storage.html"
                    + (ran ? ", experiments.html" : "") + " next to it (open them in a browser)");
        }
    }

    /**
     * The NBD experiments' outcome: both results, or the reason they did not run (tools missing: not a
     * failure) or failed.
     */
    public record Experiments(
            LowLoadExperiment.Result lowLoad, BurstExperiment.Result burst, String failure, String whyNot) {

        public boolean ran() {
            return lowLoad != null && burst != null;
        }
    }

    /** Runs the short NBD experiments when fio and nbdkit are there; says why not when they are not. */
    private static Experiments experiments(List<String> serveCommand, PrintWriter err) {
        Optional<String> missing = ExperimentRig.missingTools(true);
        if (missing.isPresent()) {
            err.println("tailor: demo: skipping the NBD experiments: " + missing.get());
            return new Experiments(null, null, null, missing.get());
        }
        Path work = null;
        try {
            work = Files.createTempDirectory("tailor-demo-experiments-");
            LowLoadExperiment.Settings lowLoadSettings = LowLoadExperiment.Settings.defaults(work.resolve("low-load"))
                    .shortened(EXPERIMENT_RUNTIME_SECONDS, EXPERIMENT_RAMP_SECONDS, 1);
            BurstExperiment.Settings burstSettings = BurstExperiment.Settings.defaults(work.resolve("burst"))
                    .shortened(EXPERIMENT_RUNTIME_SECONDS, EXPERIMENT_RAMP_SECONDS, 1)
                    .withModes(EXPERIMENT_BURST_MODES);
            err.println(experimentsLine(lowLoadSettings, burstSettings));
            LowLoadExperiment.Result lowLoad = LowLoadExperiment.run(lowLoadSettings, serveCommand, err);
            BurstExperiment.Result burst = BurstExperiment.run(burstSettings, serveCommand, err);
            return new Experiments(lowLoad, burst, null, null);
        } catch (LabException | IOException e) {
            String reason = e instanceof IOException io ? IoErrors.reason(io) : e.getMessage();
            err.println("tailor: demo: the NBD experiments failed: " + reason);
            return new Experiments(null, null, reason, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LabException("interrupted", 1, e);
        } finally {
            deleteTree(work);
        }
    }

    /**
     * The line that opens the NBD experiments: their runs and about how long both take, each run's start
     * and stop included (the demo's: about 75 s).
     */
    static String experimentsLine(LowLoadExperiment.Settings lowLoad, BurstExperiment.Settings burst) {
        return "tailor: demo: NBD experiments with real clients (fio, nbdkit; 1 round of " + burst.rampSeconds() + "+"
                + burst.runtimeSeconds() + " s per configuration, about "
                + BurstExperiment.duration(lowLoad.estimatedSeconds() + burst.estimatedSeconds())
                + " with each run's start and stop, longer when the machine is busy)";
    }

    /** The experiments page and its plots, as {@link ExperimentReport} names them for the demo's sections. */
    static final List<String> EXPERIMENT_FILES = List.of(
            "experiments.html",
            "low-load-tail.png",
            "low-load-health-check-age.png",
            "burst-steady-tail.png",
            "burst-bursty-tail.png");

    /**
     * Removes an experiments page an earlier demo left in {@code report} (and its plots): this run's pages do
     * not link it, and its Summary would be another run's.
     */
    static void removeEarlierExperiments(Path report) throws IOException {
        for (String name : EXPERIMENT_FILES) {
            Files.deleteIfExists(report.resolve(name));
        }
    }

    private static void deleteTree(Path dir) {
        try {
            Trees.delete(dir);
        } catch (IOException e) {
            System.err.println("tailor: could not remove " + dir + " (" + e.getMessage() + ")");
        }
    }

    /**
     * CPU pressure (share of a run in which some task waited for a CPU, %) above which the demo warns
     * that its short runs measure the machine more than the proxy: the low-load test alone puts 4-10 %
     * on a quiet 2-core machine, the burst test (a queue depth of 256, nbdkit's threads) 20-25 %; a new
     * user's runs beside another build saw 72-87 % and figures turned upside down.
     */
    static final double BUSY_LOW_LOAD_CPU_PRESSURE_PERCENT = 20;

    static final double BUSY_BURST_CPU_PRESSURE_PERCENT = 50;
    /** "Clearly lower", our reading for a one-round demo: at least this much below admission off. */
    static final double CLEARLY_LOWER_PERCENT = -20;

    /** The NBD experiments' figures next to their targets, one line each, with a verdict. */
    static List<String> experimentComparison(LowLoadExperiment.Result lowLoad, BurstExperiment.Result burst) {
        return experimentTable(lowLoad, burst).lines();
    }

    /** {@link #experimentComparison} as a table. */
    static TextTable experimentTable(LowLoadExperiment.Result lowLoad, BurstExperiment.Result burst) {
        boolean busy = busy(lowLoad, burst);
        List<List<String>> rows = new ArrayList<>();
        FioLatency fifo = lowLoad.pooled("fifo");
        FioLatency priority = lowLoad.pooled("priority");
        double p999Change = changePercent(priority.percentileMicros(99.9), fifo.percentileMicros(99.9));
        rows.add(List.of(
                "low load, P99.9 priority vs fifo loop",
                String.format(Locale.ROOT, "%.0f %% (paper, deployed)", PAPER_LOW_LOAD_P999_CHANGE_PERCENT),
                versus(priority.percentileMicros(99.9), fifo.percentileMicros(99.9), 1, "µs"),
                verdict(p999Change <= PAPER_LOW_LOAD_P999_CHANGE_PERCENT, p999Change, busy)));
        double bound = HEALTH_CHECK_BOUND_PERIODS * lowLoad.settings().healthMillis();
        double ageFifo = lowLoad.maxAgeMillis("fifo");
        double agePriority = lowLoad.maxAgeMillis("priority");
        rows.add(List.of(
                "low load, health-check age max, fifo / priority loop",
                "<= " + BurstExperiment.fmt(bound, 0) + " ms (2 × period)",
                BurstExperiment.fmt(ageFifo, 0) + " / " + BurstExperiment.fmt(agePriority, 0) + " ms",
                verdict(ageFifo <= bound && agePriority <= bound, ageFifo + agePriority, busy)));
        FioLatency off = burst.steady("off");
        double burstPercent = burstPercent(burst);
        for (String mode : List.of("door", "on")) {
            FioLatency steady = burst.steady(mode);
            double ours = Double.isNaN(burstPercent) ? Double.NaN : steady.percentileMicros(burstPercent);
            double baseline = Double.isNaN(burstPercent) ? Double.NaN : off.percentileMicros(burstPercent);
            double change = changePercent(ours, baseline);
            rows.add(List.of(
                    "burst, steady tenants' " + percentileName(burstPercent) + ", "
                            + (mode.equals("door") ? "door alone" : "admission on") + " vs off",
                    "clearly lower (<= " + BurstExperiment.fmt(CLEARLY_LOWER_PERCENT, 0) + " %)",
                    versus(ours, baseline, 1e3, "ms"),
                    verdict(change <= CLEARLY_LOWER_PERCENT, change, busy)));
        }
        List<String> notes = new ArrayList<>();
        long burstSamples = burstSamples(burst);
        notes.add(String.format(
                Locale.ROOT,
                "Samples: low load %,d per loop (P99.9 is about the %s), burst %,d"
                        + " steady reads in the smallest mode (%s).",
                fifo.samples(),
                rank(fifo.samples(), 0.001),
                burstSamples,
                Double.isNaN(burstPercent)
                        ? "too few for P99.9, which needs 1,000"
                        : burstPercent == 99.99
                                ? "P99.99 is about the " + rank(burstSamples, 0.0001)
                                : "P99.9 is about the " + rank(burstSamples, 0.001) + "; P99.99 needs 10,000,"
                                        + " a longer run"));
        double lowLoadPressure = nanToZero(lowLoad.maxCpuPressurePercent());
        double burstPressure = nanToZero(burst.maxCpuPressurePercent());
        if (busy) {
            notes.add(String.format(
                    Locale.ROOT,
                    "Warning: the machine was busy during these runs (CPU pressure up to"
                            + " %.0f %% at low load, %.0f %% in the burst test: some task waited for a CPU that share of the"
                            + " time; on a quiet machine these tests cause about 4-10 %% and 20-25 %%). Short runs on a busy"
                            + " machine measure the machine more than the proxy; these figures say little either way.",
                    lowLoadPressure,
                    burstPressure));
        } else {
            notes.add(String.format(
                    Locale.ROOT,
                    "CPU pressure during the runs: at most %.0f %% at low load, %.0f %%"
                            + " in the burst test (quiet enough); one short round still moves from run to run.",
                    lowLoadPressure,
                    burstPressure));
        }
        notes.add("Burst: the door alone is the fair dispatch door with admission off (--fair-dispatch on), what"
                + " docs/nbd.md recommends for the proxy; admission on has its door behind it. Longer runs of the"
                + " three: tailor nbd experiment burst, whose defaults they are (docs/nbd.md, Fair dispatch).");
        notes.add("The README's figures, on a quiet machine: tailor nbd experiment low-load --rounds 3 and tailor nbd"
                + " experiment burst --rounds 3 (docs/nbd-record.md).");
        return new TextTable(
                "Against the targets (tailor nbd serve with real clients: fio's nbd engine, nbdkit;" + " 1 round, "
                        + EXPERIMENT_RAMP_SECONDS + "+" + EXPERIMENT_RUNTIME_SECONDS + " s per configuration):",
                List.of("", "target", "ours", "verdict"),
                rows,
                notes);
    }

    /**
     * The tail percentile the demo judges the burst test on: P99.99 when every steady histogram it compares
     * (off, on and, when it ran, the door alone) has the 10,000 samples that needs, else P99.9 with 1,000
     * ({@link FioLatency#resolvable}: the rule the experiments' tables and the storage simulator report by);
     * NaN when not even that. One short round has a few thousand, so P99.9.
     */
    static double burstPercent(BurstExperiment.Result burst) {
        for (double percent : new double[] {99.99, 99.9}) {
            boolean resolvable = true;
            for (String mode : List.of("off", "on", "door")) {
                FioLatency steady = burst.steady(mode);
                boolean ran = !mode.equals("door") || steady.samples() > 0;
                resolvable &= !ran || steady.resolvable(percent);
            }
            if (resolvable) {
                return percent;
            }
        }
        return Double.NaN;
    }

    /** The fewest steady samples of the burst test's modes that ran (the door alone only when it did). */
    private static long burstSamples(BurstExperiment.Result burst) {
        long fewest = Math.min(burst.steady("off").samples(), burst.steady("on").samples());
        long door = burst.steady("door").samples();
        return door > 0 ? Math.min(fewest, door) : fewest;
    }

    /** "P99.99", "P99.9"; "P99.9" for NaN, the least the demo would judge on. */
    static String percentileName(double percent) {
        return Double.isNaN(percent) || percent == 99.9 ? "P99.9" : "P99.99";
    }

    /** Whether either experiment's CPU pressure says the machine was busy with other work. */
    static boolean busy(LowLoadExperiment.Result lowLoad, BurstExperiment.Result burst) {
        return nanToZero(lowLoad.maxCpuPressurePercent()) > BUSY_LOW_LOAD_CPU_PRESSURE_PERCENT
                || nanToZero(burst.maxCpuPressurePercent()) > BUSY_BURST_CPU_PRESSURE_PERCENT;
    }

    private static double nanToZero(double x) {
        return Double.isNaN(x) ? 0 : x;
    }

    static double changePercent(double ours, double baseline) {
        return Double.isNaN(ours) || Double.isNaN(baseline) || baseline == 0 ? Double.NaN : (ours / baseline - 1) * 100;
    }

    /** "met", "missed", "no data", or "unreliable" when the machine was too busy for the figure to say either. */
    private static String verdict(boolean met, double value, boolean busy) {
        return Double.isNaN(value) ? "no data" : busy ? "unreliable" : met ? "met" : "missed";
    }

    private static String versus(double ours, double baseline, double divisor, String unit) {
        String change = BurstExperiment.change(ours, baseline);
        if (change.equals("no data")) {
            return change;
        }
        return change + " (" + BurstExperiment.fmt(ours / divisor, 0) + " vs "
                + BurstExperiment.fmt(baseline / divisor, 0) + " " + unit + ")";
    }

    /**
     * Which of {@code samples} the percentile at {@code 1 - tailFraction} is, as {@link FioLatency#percentileMicros}
     * reads it (the ⌈n·q⌉-th smallest): "largest", "3rd-largest".
     */
    static String rank(long samples, double tailFraction) {
        long index = (long) Math.ceil(samples * (1 - tailFraction) - 1e-9);
        long n = Math.max(1, samples - Math.max(1, index) + 1);
        return n == 1 ? "largest" : ordinal(n) + "-largest";
    }

    private static String ordinal(long n) {
        long mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13
                ? "th"
                : switch ((int) (n % 10)) {
                    case 1 -> "st";
                    case 2 -> "nd";
                    case 3 -> "rd";
                    default -> "th";
                };
        return n + suffix;
    }

    /**
     * Segment admission's figures next to the storage paper's, one line each: the paper's mechanism as we
     * reproduce it ({@code segment-admission-paper}) and the one Tailor ships ({@code segment-admission}).
     */
    static List<String> storageComparison(List<StorageRunResult> storage) {
        return storageTable(storage).lines();
    }

    /** {@link #storageComparison} as a table. */
    static TextTable storageTable(List<StorageRunResult> storage) {
        List<List<String>> rows = new ArrayList<>();
        double last = STORAGE_MULTIPLIERS.get(STORAGE_MULTIPLIERS.size() - 1);
        for (double m : STORAGE_MULTIPLIERS) {
            StorageRunResult fifo = findStorage(storage, m, "fifo");
            StorageRunResult paper = findStorage(storage, m, "segment-admission-paper");
            StorageRunResult ours = findStorage(storage, m, "segment-admission");
            Double fifoSteady = fifo == null ? null : fifo.steady().p99999Millis();
            Double fifoSegments = fifo == null ? null : fifo.steadySegments().p99999Millis();
            String label = STORAGE_SCENARIO + " ×" + SimulationOutput.fmt(m) + ", P99.999 vs fifo: ";
            rows.add(List.of(
                    label + "steady tenants",
                    m == last ? "up to -" + SimulationOutput.fmt(PAPER_BURST_REDUCTION_PERCENT) + " %" : "",
                    change(paper == null ? null : paper.steady().p99999Millis(), fifoSteady),
                    change(ours == null ? null : ours.steady().p99999Millis(), fifoSteady)));
            rows.add(List.of(
                    label + "steady segments",
                    "",
                    change(paper == null ? null : paper.steadySegments().p99999Millis(), fifoSegments),
                    change(ours == null ? null : ours.steadySegments().p99999Millis(), fifoSegments)));
        }
        StorageRunResult cap = findStorage(storage, last, "static-cap");
        StorageRunResult paper = findStorage(storage, last, "segment-admission-paper");
        StorageRunResult ours = findStorage(storage, last, "segment-admission");
        rows.add(List.of(
                "capacity unused while work waited, static-cap",
                SimulationOutput.fmt(PAPER_STATIC_CAP_UNUSED_PERCENT) + " %",
                cap == null ? "–" : String.format(Locale.ROOT, "%.1f %% (static-cap)", cap.unusedCapacityPercent()),
                ""));
        rows.add(List.of(
                "capacity unused while work waited, segment admission",
                "<= 5 %",
                paper == null ? "–" : String.format(Locale.ROOT, "%.1f %%", paper.unusedCapacityPercent()),
                ours == null ? "–" : String.format(Locale.ROOT, "%.1f %%", ours.unusedCapacityPercent())));
        List<String> notes = List.of(
                "Steady tenants: without bursts (ground truth); steady segments: those admission's"
                        + " classifier called steady on arrival. Tailor's default is chosen across tenant mixes of real traces"
                        + " (tailor storage simulate --scenario robustness); docs/admission-record.md (Fair dispatch) says where it"
                        + " loses to fifo and to mclock.",
                "The deployed comparison (paper: -59.7 % steady-segment P99.999) is tailor storage simulate --scenario"
                        + " deployed-like (real traces; docs/storage-simulator.md).");
        return new TextTable(
                "Against the paper (storage; burst-aware segment admission, NSDI 2026; "
                        + SimulationOutput.fmt(STORAGE_SECONDS) + " s runs):",
                List.of("", "paper", "paper's mechanism", "Tailor's default"),
                rows,
                notes);
    }

    private static String change(Double ours, Double baseline) {
        if (ours == null || baseline == null) {
            return "not resolvable";
        }
        return String.format(
                Locale.ROOT,
                "%+.0f %% (%s vs %s ms)",
                100 * (ours / baseline - 1),
                SimulationOutput.fmt(ours),
                SimulationOutput.fmt(baseline));
    }

    private static StorageRunResult findStorage(List<StorageRunResult> results, double multiplier, String policy) {
        return results.stream()
                .filter(r -> r.burstMultiplier() != null
                        && r.burstMultiplier() == multiplier
                        && r.policy().equals(policy))
                .findFirst()
                .orElse(null);
    }

    /** Our ratios next to the paper's, one line each. */
    static List<String> comparison(List<RunResult> results) {
        return comparisonTable(results).lines();
    }

    /** {@link #comparison} as a table. */
    static TextTable comparisonTable(List<RunResult> results) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(row(
                "pairwise 100 RPS, HEART / LR",
                ratio(PAPER_PAIRWISE_HEART, PAPER_PAIRWISE_LR),
                results,
                "paper-pairwise",
                100,
                "heart-paper",
                "least-request"));
        rows.add(row(
                "DAG 400 RPS, HEART / LR",
                ratio(PAPER_DAG_HEART, PAPER_DAG_LR),
                results,
                "paper-dag",
                400,
                "heart-paper",
                "least-request"));
        rows.add(row(
                "DAG 400 RPS, HEART / default",
                ratio(PAPER_DAG_HEART, PAPER_DAG_DEFAULT),
                results,
                "paper-dag",
                400,
                "heart-paper",
                "default"));
        List<String> gap = new ArrayList<>(List.of("DAG 400 RPS, HEART CPU gap", "about 3 pp"));
        for (String model : List.of("fluid", "cfs-quota")) {
            RunResult heart = find(results, "paper-dag", model, 400, "heart-paper");
            gap.add(heart == null ? "–" : SimulationOutput.fmt(heart.cpuGapPercentPoints()) + " pp");
        }
        rows.add(gap);
        return new TextTable(
                "Against the paper (P99 latency; HEART paper, IEEE CLOUD 2025), with the paper's HEART"
                        + " (heart-paper):",
                List.of("", "paper", "fluid CPU limit", "cfs-quota CPU limit"),
                rows,
                List.of());
    }

    private static List<String> row(
            String label,
            String paper,
            List<RunResult> results,
            String scenario,
            double rps,
            String numerator,
            String denominator) {
        List<String> row = new ArrayList<>(List.of(label, paper));
        for (String model : List.of("fluid", "cfs-quota")) {
            RunResult a = find(results, scenario, model, rps, numerator);
            RunResult b = find(results, scenario, model, rps, denominator);
            row.add(
                    a == null || b == null || a.p99Millis() == null || b.p99Millis() == null
                            ? "–"
                            : ratio(a.p99Millis(), b.p99Millis()));
        }
        return row;
    }

    private static String ratio(double a, double b) {
        double r = a / b;
        return String.format(Locale.ROOT, r < 0.01 ? "%.4f" : "%.2f", r) + " (" + SimulationOutput.fmt(a) + " vs "
                + SimulationOutput.fmt(b) + ")";
    }

    private static RunResult find(List<RunResult> results, String scenario, String model, double rps, String policy) {
        return results.stream()
                .filter(r -> r.scenario().equals(scenario)
                        && r.cpuModel().equals(model)
                        && r.rps() == rps
                        && r.policy().equals(policy))
                .findFirst()
                .orElse(null);
    }
}
