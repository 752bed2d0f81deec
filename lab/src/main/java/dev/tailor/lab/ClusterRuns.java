package dev.tailor.lab;

import dev.tailor.common.IoErrors;
import dev.tailor.common.Numbers;
import dev.tailor.common.Problem;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import dev.tailor.heart.HeartConfig;
import dev.tailor.lab.report.ClusterReport;
import dev.tailor.lab.report.HtmlPages;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.OnlineBoutiqueScenario;
import dev.tailor.sim.cluster.PeakEwmaConfig;
import dev.tailor.sim.cluster.PrequalConfig;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.Scenarios;
import dev.tailor.sim.cluster.SeedCells;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * The cluster simulator's runs as the commands and the demo make them: a scenario loaded and varied
 * with errors named by the options that caused them, a sweep run with progress on standard error,
 * and the HTML report. Every failure is a {@link LabException}.
 */
public final class ClusterRuns {

    private ClusterRuns() {}

    /**
     * A bundled scenario ({@link Scenarios#BUNDLED}) or a YAML scenario file.
     *
     * @param otherNames further names the caller accepts, listed in the error for an unknown name
     * @throws LabException (exit 2) naming {@code --scenario} for an unknown name, or the scenario's problems
     */
    public static ClusterScenario load(String nameOrFile, String otherNames) {
        if (!Scenarios.BUNDLED.contains(nameOrFile) && !Files.exists(Path.of(nameOrFile))) {
            throw new LabException("--scenario: " + nameOrFile + ": no such scenario or file (expected: one of "
                    + String.join(", ", Scenarios.BUNDLED) + (otherNames.isEmpty() ? "" : ", " + otherNames)
                    + ", or a YAML scenario file)");
        }
        try {
            return Scenarios.load(nameOrFile);
        } catch (ScenarioException e) {
            throw new LabException("scenario " + e.getMessage());
        }
    }

    /**
     * {@code base} with the run's options ({@code null}: the scenario's), checked.
     *
     * @throws LabException (exit 2) with every problem, named by its option ({@code --warmup-seconds})
     */
    public static ClusterScenario variant(
            ClusterScenario base,
            Long seed,
            ClusterScenario.CpuModel model,
            Double warmupSeconds,
            Double durationSeconds,
            String network) {
        ClusterScenario.Builder builder = base.toBuilder();
        if (seed != null) {
            builder.seed(seed);
        }
        if (model != null) {
            builder.cpuModel(model);
        }
        if (warmupSeconds != null) {
            builder.warmupSeconds(warmupSeconds);
        }
        if (durationSeconds != null) {
            builder.durationSeconds(durationSeconds);
        }
        if (network != null) {
            builder.network(network);
        }
        ClusterScenario variant = builder.build();
        List<Problem> problems = variant.problems();
        if (!problems.isEmpty()) {
            throw new LabException(
                    Problem.join(problems.stream().map(ClusterRuns::asOption).toList()));
        }
        return variant;
    }

    /** {@link #execute(List, ClusterSimulation.PolicyConfigs, int, PrintWriter)} with the policies' defaults. */
    public static List<RunResult> execute(List<ClusterSweep.Run> runs, int threads, PrintWriter err) {
        return execute(runs, ClusterSimulation.PolicyConfigs.DEFAULTS, threads, err);
    }

    /**
     * Runs the sweep on {@code threads} threads, with a progress bar on {@code err} when it is a terminal.
     *
     * @throws LabException (exit 2) when a run's settings are rejected
     */
    public static List<RunResult> execute(
            List<ClusterSweep.Run> runs, ClusterSimulation.PolicyConfigs configs, int threads, PrintWriter err) {
        return execute(runs, configs, threads, err, null);
    }

    /**
     * As {@link #execute(List, ClusterSimulation.PolicyConfigs, int, PrintWriter)}, counting the finished
     * runs in {@code stopping} (may be null), which tells them if the command is stopped.
     */
    public static List<RunResult> execute(
            List<ClusterSweep.Run> runs,
            ClusterSimulation.PolicyConfigs configs,
            int threads,
            PrintWriter err,
            Stopping stopping) {
        // With several seeds a cell's runs differ only by seed: each progress line says whose it is.
        boolean seeds = runs.stream().map(r -> r.scenario().seed()).distinct().count() > 1;
        ClusterSweep.Progress shown = SimulationOutput.progress(err, Terminal.stderrIsTerminal(), seeds);
        try {
            return ClusterSweep.run(runs, configs, threads, System::nanoTime, (done, total, run, result) -> {
                if (stopping != null) {
                    stopping.done(done);
                }
                shown.finished(done, total, run, result);
            });
        } catch (IllegalArgumentException e) {
            throw new LabException(e.getMessage());
        }
    }

    /**
     * While open, a Ctrl-C or SIGTERM (the JVM then exits 130 or 143) says on one line how far the command
     * got and that nothing was written, since the results and the report come when every run is done, and
     * removes the report folder the command created for them while it is still empty. Without it the
     * command ended silently and left that folder behind.
     *
     * <p>A command of several stages of runs (the demo) names each ({@link #next}) and says what it does
     * between them ({@link #during}); the line then says what every stage finished. Its output goes out
     * through {@link #publish} and its report through {@link #staging} and {@link #publishReport}: a stop
     * either waits for them to be out whole or keeps them from going out at all, so it never leaves half of
     * them, nor a report folder whose pages are partly of this run.
     */
    public static final class Stopping implements AutoCloseable {

        /** How long a stop waits for output being published before it says its line anyway. */
        private static final long PUBLISH_WAIT_SECONDS = 5;

        private final AtomicInteger done = new AtomicInteger();
        private final PrintWriter err;
        /** The report folder asked for, or null. */
        private final Path report;
        /**
         * The outermost folder the command created for {@link #report} ({@link #report} itself or one of its
         * parents), or null: a stop removes {@link #report} and its parents up to it while they are empty.
         */
        private final Path createdFrom;

        private final Thread hook;
        private final ReentrantLock lock = new ReentrantLock();
        private final boolean terminal = Terminal.stderrIsTerminal();
        /** What earlier stages finished, e.g. "the 72 simulated runs". */
        private final List<String> finished = new CopyOnWriteArrayList<>();

        /** The runs of the current stage, and what they are ("simulated run"), or null between stages. */
        private volatile int total;

        private volatile String what;
        /** Between stages of runs: what the command does ("during the NBD experiments"), or null. */
        private volatile String during;
        /** What {@link #publish} and {@link #publishReport} put out so far. Guarded by lock. */
        private final List<String> published = new ArrayList<>();

        private boolean reportPublished;
        /** A report being written and not yet published, or null. Guarded by lock. */
        private Path staging;
        /** Set by the stop: nothing is published after it. Guarded by lock. */
        private boolean stopped;

        private Stopping(PrintWriter err, int total, String what, Path report, Path createdFrom) {
            this.err = err;
            this.total = total;
            this.what = what;
            this.report = report;
            this.createdFrom = createdFrom;
            this.hook = new Thread(this::stop, "tailor-stopped");
            Runtime.getRuntime().addShutdownHook(hook);
        }

        /**
         * Opened before the command says it starts the runs.
         *
         * @param report the report folder asked for, or {@code null}
         * @param createdFrom the outermost folder the command created for it ({@link #firstMissing} before creating
         *     it), or {@code null} when it existed
         */
        public static Stopping on(PrintWriter err, int total, Path report, Path createdFrom) {
            return new Stopping(err, total, "run", report, report == null ? null : createdFrom);
        }

        /**
         * Opened before a command of several stages starts, each named by {@link #next} or {@link #during}.
         *
         * @param report the report folder asked for, or {@code null}
         * @param createdFrom the outermost folder the command created for it ({@link #firstMissing} before
         *     creating it; a stop removes the report folder and its parents up to it while they are empty), or
         *     {@code null}
         */
        public static Stopping on(PrintWriter err, Path report, Path createdFrom) {
            return new Stopping(err, 0, null, report, report == null ? null : createdFrom);
        }

        /**
         * The outermost of {@code folder} and its parents that does not exist yet (what creating {@code folder}
         * creates from), or {@code null} when {@code folder} is null or exists.
         */
        public static Path firstMissing(Path folder) {
            if (folder == null || Files.exists(folder)) {
                return null;
            }
            Path missing = folder.toAbsolutePath();
            while (missing.getParent() != null && !Files.exists(missing.getParent())) {
                missing = missing.getParent();
            }
            return missing;
        }

        /** The runs counted so far, if any, are all done; {@code total} runs of a kind ({@code what}) follow. */
        public synchronized void next(int total, String what) {
            finishStage();
            done.set(0);
            this.total = total;
            this.what = what;
        }

        /** The runs counted so far, if any, are all done; the command goes on with {@code stage} ("during ..."). */
        public synchronized void during(String stage) {
            finishStage();
            during = stage;
        }

        private void finishStage() {
            if (what != null) {
                finished.add("the " + total + " " + plural(total, what));
            }
            what = null;
            during = null;
        }

        /** Counts a finished run of the current stage. */
        void done(int runs) {
            done.set(runs);
        }

        private static String plural(int n, String what) {
            return what + (n == 1 ? "" : "s");
        }

        /**
         * Puts out {@code output} (standard output, say) whole unless the command is being stopped; a stop
         * that comes meanwhile waits for it.
         *
         * @param what what it is, for the stop's line ("the results printed")
         * @return whether it was put out
         */
        public boolean publish(String what, Runnable output) {
            lock.lock();
            try {
                if (stopped) {
                    return false;
                }
                output.run();
                published.add(what);
                return true;
            } finally {
                lock.unlock();
            }
        }

        /**
         * A new hidden folder in {@code report} (created if needed) to write the report's pages to: {@link
         * #publishReport} moves them into {@code report}; a stop before that removes it.
         *
         * @return the folder, or null once the command is being stopped: then nothing is created, so that a
         *         report folder the stop removed does not come back (the caller writes no pages)
         * @throws IOException when it cannot be created
         */
        public Path staging(Path report) throws IOException {
            lock.lock();
            try {
                if (stopped) {
                    return null;
                }
                Files.createDirectories(report);
                staging = Files.createTempDirectory(report, ".writing-");
                return staging;
            } finally {
                lock.unlock();
            }
        }

        /**
         * Moves the pages written to {@link #staging} into {@code report}, each replacing the page of that
         * name, and removes the staging folder, unless the command is being stopped; a stop that comes
         * meanwhile waits for the pages.
         *
         * @return whether the report was published
         * @throws IOException when a page cannot be moved
         */
        public boolean publishReport(Path report) throws IOException {
            lock.lock();
            try {
                if (stopped || staging == null) {
                    return false;
                }
                try (Stream<Path> pages = Files.list(staging)) {
                    for (Path page : pages.sorted().toList()) {
                        Files.move(
                                page,
                                report.resolve(page.getFileName().toString()),
                                StandardCopyOption.REPLACE_EXISTING,
                                StandardCopyOption.ATOMIC_MOVE);
                    }
                }
                Files.delete(staging);
                staging = null;
                published.add("the report written");
                reportPublished = true;
                return true;
            } finally {
                lock.unlock();
            }
        }

        /**
         * The report's pages, written by {@code write} into {@link #staging} (it returns the page to name, its
         * index.html), published into {@code report} together ({@link #publishReport}); that page in {@code report},
         * or null when a stop came meanwhile (the stop says so). Pages whose writing failed are removed.
         *
         * @throws LabException (exit 1) naming the folder and the system's reason
         */
        public Path writeReport(Path report, Pages write) {
            try {
                Path pages = staging(report);
                if (pages == null) {
                    return null; // stopped: the stop says so
                }
                Path page = write.into(pages);
                return publishReport(report) ? report.resolve(page.getFileName().toString()) : null;
            } catch (IOException e) {
                discardReport();
                throw new LabException("cannot write the report to " + report + ": " + IoErrors.reason(e), 1, e);
            } catch (RuntimeException e) {
                discardReport();
                throw e;
            }
        }

        /** What writes a report's pages into a folder, returning the one to name. */
        @FunctionalInterface
        public interface Pages {
            Path into(Path dir) throws IOException;
        }

        /** Removes the pages written to {@link #staging} without publishing them (their writing failed). */
        public void discardReport() {
            lock.lock();
            try {
                deleteTree(staging);
                staging = null;
            } finally {
                lock.unlock();
            }
        }

        /** What the shutdown hook does; package-private for the tests. */
        void stop() {
            boolean locked;
            try {
                locked = lock.tryLock(PUBLISH_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                locked = false;
            }
            try {
                stopped = true;
                if (terminal) {
                    err.println(); // after the progress bar's line
                }
                err.println(line(locked));
                err.flush();
                if (locked) {
                    deleteTree(staging);
                }
                if (createdFrom != null && report != null && !reportPublished) {
                    removeCreated(report.toAbsolutePath(), createdFrom);
                }
            } finally {
                if (locked) {
                    lock.unlock();
                }
            }
        }

        /** What the stop says: how far the command got, and what it wrote. */
        private String line(boolean locked) {
            if (!locked) {
                return "tailor: stopped while writing its output, which may be incomplete";
            }
            String after;
            boolean betweenStages;
            synchronized (this) {
                betweenStages = what == null && during != null;
                List<String> got = new ArrayList<>(finished);
                if (what != null) {
                    got.add(done.get() + " of " + total + " " + plural(total, what));
                }
                after = (got.isEmpty() ? "" : "after " + String.join(" and ", got))
                        + (during == null ? "" : (got.isEmpty() ? "" : ", ") + during)
                        + (got.isEmpty() && during == null ? "before its runs" : "");
            }
            if (published.isEmpty()) {
                return "tailor: stopped " + after + "; nothing written (the results"
                        + (report == null ? "" : " and the report")
                        + (betweenStages ? " go out whole or not at all)" : " come when every run is done)");
            }
            return "tailor: stopped " + after + "; " + String.join(" and ", published)
                    + (report == null || reportPublished ? "" : ", no report written (its pages come all together)");
        }

        /** Removes {@code folder} and its parents up to {@code createdFrom}, each while it is empty. */
        private static void removeCreated(Path folder, Path createdFrom) {
            for (Path dir = folder; dir != null && dir.startsWith(createdFrom); dir = dir.getParent()) {
                try {
                    Files.deleteIfExists(dir);
                } catch (IOException notEmptyOrGone) {
                    return; // Something else was put there meanwhile: it, and the folders around it, stay.
                }
            }
        }

        private static void deleteTree(Path dir) {
            try {
                Trees.delete(dir);
            } catch (IOException e) {
                // Being written meanwhile, or gone: a hidden folder, not a report.
            }
        }

        @Override
        public void close() {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook runs or has run.
            }
        }
    }

    /**
     * The report; {@code cells} (several seeds per cell) add the P99's spread, or {@code null} for one seed;
     * {@code scenarios} give the timeout drawn on the latency CDFs and the nodes' speeds.
     *
     * @return the index.html written
     * @throws LabException (exit 1) naming the folder and the system's reason
     */
    public static Path writeReport(
            Path dir,
            String title,
            List<String> intro,
            List<RunResult> results,
            List<SeedCells.Cell> cells,
            List<ClusterScenario> scenarios) {
        try {
            return ClusterReport.write(dir, HtmlPages.Frame.of(title, intro), results, cells, scenarios);
        } catch (IOException e) {
            throw new LabException("cannot write the report to " + dir + ": " + IoErrors.reason(e), 1, e);
        }
    }

    /**
     * {@code problem} of a run option the user gave as an option: its path, a scenario field, named by
     * the option ({@code warmupSeconds} as {@code --warmup-seconds}), with a number as the user wrote it:
     * {@code -1}, not the {@code -1.0} it was read as.
     */
    static Problem asOption(Problem problem) {
        String option = switch (problem.path()) {
            case "warmupSeconds" -> "--warmup-seconds";
            case "durationSeconds" -> "--duration-seconds";
            default -> problem.path();
        };
        Object value = problem.value() instanceof Double d ? Numbers.written(d) : problem.value();
        return new Problem(option, value, problem.expected());
    }

    /** Most runs one sweep makes: beyond it a typo (a long rps list) would run for hours. */
    public static final int MAX_RUNS = 10_000;

    /**
     * What a sweep varies, as the options gave it; {@code null}: the comparison's policies, no ablation,
     * the scenario's rates, network, CPU model, seed, warm-up and duration.
     *
     * @param seeds runs of every cell, with seeds S, S+1, ... (S: {@code seed} or the scenario's)
     */
    public record Sweep(
            List<String> policies,
            List<String> ablations,
            List<Double> rps,
            List<String> networks,
            List<String> cpuModels,
            Long seed,
            int seeds,
            Double warmupSeconds,
            Double durationSeconds) {}

    /**
     * The runs of a sweep over {@code base}: every network × CPU model × rate × policy × seed.
     *
     * @throws LabException (exit 2) naming the option of an unknown name or a value out of range, or
     *     when the sweep has more than {@link #MAX_RUNS} runs
     */
    public static List<ClusterSweep.Run> sweep(ClusterScenario base, Sweep sweep) {
        List<String> policies = sweep.policies();
        List<String> ablations = sweep.ablations();
        List<Double> rps = sweep.rps();
        List<String> networks = sweep.networks();
        List<String> cpuModels = sweep.cpuModels();
        int seeds = sweep.seeds();
        List<String> policyNames = new ArrayList<>(
                policies == null
                        ? ClusterSimulation.COMPARISON
                        : checkNames("--policies", policies, ClusterSimulation.policyNames()));
        if (ablations != null) {
            for (String ablation : checkNames(
                    "--heart-ablation",
                    ablations,
                    List.of(
                            "no-trend",
                            "slow-link-filter",
                            "no-outlier-filter",
                            "no-idle-fit",
                            "no-floor",
                            "no-share-cap",
                            "no-spread",
                            "no-queueing",
                            "no-headroom",
                            "paper"))) {
                policyNames.add("heart-" + ablation);
            }
        }
        List<String> uniquePolicies = new ArrayList<>(new LinkedHashSet<>(policyNames));
        List<Double> rates = new ArrayList<>(new LinkedHashSet<>(rps != null ? rps : base.rps()));
        if (rates.isEmpty()) {
            throw new LabException("--rps: missing (the scenario has no rps sweep; give e.g. --rps 100,400)");
        }
        for (double r : rates) {
            if (!(r > 0 && r <= 1e6)) {
                throw new LabException("--rps: " + Numbers.written(r) + " (expected: requests per second in (0, 1e6])");
            }
        }
        List<String> networkNames =
                new ArrayList<>(new LinkedHashSet<>(networks == null ? List.of(base.network()) : networks));
        for (String network : networkNames) {
            if (!base.networks().containsKey(network)) {
                throw new LabException("--network: \"" + network + "\" (expected: one of the scenario's "
                        + base.networks().keySet() + ")");
            }
        }
        List<ClusterScenario.CpuModel> models = new ArrayList<>();
        for (String label :
                new LinkedHashSet<>(cpuModels == null ? List.of(base.cpuModel().label()) : cpuModels)) {
            ClusterScenario.CpuModel model = ClusterScenario.CpuModel.ofLabel(label);
            if (model == null) {
                throw new LabException("--cpu-model: \"" + label + "\" (expected: fluid or cfs-quota)");
            }
            models.add(model);
        }
        long count = (long) networkNames.size() * models.size() * rates.size() * uniquePolicies.size() * seeds;
        if (count > MAX_RUNS) {
            throw new LabException("the sweep has " + count + " runs (" + networkNames.size() + " networks × "
                    + models.size() + " CPU models × " + rates.size() + " rates × " + uniquePolicies.size()
                    + " policies" + (seeds == 1 ? "" : " × " + seeds + " seeds") + "; expected: at most " + MAX_RUNS
                    + ")");
        }
        long firstSeed = sweep.seed() != null ? sweep.seed() : base.seed();
        List<ClusterSweep.Run> runs = new ArrayList<>();
        for (String network : networkNames) {
            for (ClusterScenario.CpuModel model : models) {
                List<ClusterScenario> variants = new ArrayList<>();
                for (int k = 0; k < seeds; k++) {
                    variants.add(variant(
                            base,
                            seeds == 1 ? sweep.seed() : Long.valueOf(firstSeed + k),
                            model,
                            sweep.warmupSeconds(),
                            sweep.durationSeconds(),
                            network));
                }
                for (double r : rates) {
                    for (String policy : uniquePolicies) {
                        for (ClusterScenario variant : variants) {
                            runs.add(new ClusterSweep.Run(variant, policy, r));
                        }
                    }
                }
            }
        }
        return runs;
    }

    /**
     * {@code requested} without repeats, in order; a {@link LabException} naming {@code option} and
     * every name not in {@code known} at once (not only the first).
     */
    public static List<String> checkNames(String option, List<String> requested, List<String> known) {
        List<String> unknown = requested.stream()
                .filter(name -> !known.contains(name))
                .distinct()
                .toList();
        if (!unknown.isEmpty()) {
            throw new LabException(option + ": "
                    + unknown.stream()
                            .map(name -> "\"" + name + "\"")
                            .collect(java.util.stream.Collectors.joining(", "))
                    + (unknown.size() == 1 ? " is" : " are")
                    + " not known (expected: some of " + String.join(", ", known) + ")");
        }
        return new ArrayList<>(new LinkedHashSet<>(requested));
    }

    /**
     * The peers' settings: Prequal's q_rif and probe rate, peak-EWMA's decay time ({@code null}: the
     * defaults); HEART's are the defaults.
     *
     * @throws LabException (exit 2) naming the option ({@code --prequal-q-rif}) of a value out of range
     */
    public static ClusterSimulation.PolicyConfigs policyConfigs(
            Double prequalQRif, Double prequalProbeRate, Double peakEwmaDecaySeconds) {
        PrequalConfig prequal = PrequalConfig.DEFAULTS;
        PeakEwmaConfig peakEwma = PeakEwmaConfig.DEFAULTS;
        try {
            if (prequalQRif != null) {
                prequal = prequal.withQRif(prequalQRif);
            }
        } catch (IllegalArgumentException e) {
            throw new LabException(
                    "--prequal-q-rif: " + Numbers.written(prequalQRif) + " (expected: a quantile in (0, 1])");
        }
        try {
            if (prequalProbeRate != null) {
                prequal = prequal.withProbesPerQuery(prequalProbeRate);
            }
        } catch (IllegalArgumentException e) {
            throw new LabException("--prequal-probe-rate: " + Numbers.written(prequalProbeRate)
                    + " (expected: probes per call in (0, 16])");
        }
        try {
            if (peakEwmaDecaySeconds != null) {
                peakEwma = new PeakEwmaConfig(peakEwmaDecaySeconds, peakEwma.defaultRttMillis());
            }
        } catch (IllegalArgumentException e) {
            throw new LabException("--peak-ewma-decay-seconds: " + Numbers.written(peakEwmaDecaySeconds)
                    + " (expected: seconds in (0, 3600])");
        }
        return new ClusterSimulation.PolicyConfigs(HeartConfig.DEFAULTS, prequal, peakEwma);
    }

    /**
     * The online-boutique scenario, built from the public data ({@code metrics}, the TraStrainer
     * folder, and {@code latency}, the ping times); its notes go to {@code notes} unless null.
     *
     * @throws LabException exit 2 for data the builder refuses, 1 when it cannot be read
     */
    public static ClusterScenario onlineBoutique(Path metrics, Path latency, PrintWriter notes) {
        try {
            OnlineBoutiqueScenario.Result result =
                    OnlineBoutiqueScenario.build(OnlineBoutiqueSnapshot.Options.defaults(metrics).toBuilder()
                            .latencyFile(latency)
                            .build());
            if (notes != null) {
                result.notes().forEach(note -> notes.println("note: " + note));
            }
            return result.scenario();
        } catch (IllegalArgumentException e) {
            throw new LabException(e.getMessage(), e);
        } catch (IOException e) {
            throw new LabException("cannot read the OnlineBoutique dataset (" + e + ")", 1, e);
        }
    }

    /** A scenario name from a folder's name: letters, digits, '-' and '_' kept, anything else '-'. */
    public static String scenarioName(Path dir) {
        Path name = dir.toAbsolutePath().normalize().getFileName();
        String text = name == null ? "" : name.toString().replaceAll("[^A-Za-z0-9_-]", "-");
        return text.isEmpty() ? "dataset" : text;
    }
}
