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
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

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
                    stopping.done.set(done);
                }
                shown.finished(done, total, run, result);
            });
        } catch (IllegalArgumentException e) {
            throw new LabException(e.getMessage());
        }
    }

    /**
     * While open, a Ctrl-C or SIGTERM (the JVM then exits 130 or 143) says how many runs were done and
     * that nothing was written, since the results and the report come when every run is done, and
     * removes the report folder the command created for them while it is still empty. Without it the
     * command ended silently and left that folder behind.
     */
    public static final class Stopping implements AutoCloseable {

        private final AtomicInteger done = new AtomicInteger();
        private final Thread hook;

        private Stopping(PrintWriter err, int total, Path createdReport) {
            boolean terminal = Terminal.stderrIsTerminal();
            this.hook = new Thread(() -> {
                if (terminal) {
                    err.println(); // after the progress bar's line
                }
                err.println("tailor: stopped after " + done.get() + " of " + total + " run" + (total == 1 ? "" : "s")
                        + "; nothing written (the results" + (createdReport == null ? "" : " and the report")
                        + " come when every run is done)");
                err.flush();
                if (createdReport != null) {
                    try {
                        Files.deleteIfExists(createdReport);
                    } catch (IOException notEmptyOrGone) {
                        // Something else was put there meanwhile: it stays.
                    }
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);
        }

        /**
         * Opened before the command says it starts the runs.
         *
         * @param createdReport the report folder when this command created it, else {@code null}
         */
        public static Stopping on(PrintWriter err, int total, Path createdReport) {
            return new Stopping(err, total, createdReport);
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
            throw new LabException("the sweep has " + count + " runs (" + networkNames.size() + " networks x "
                    + models.size() + " CPU models x " + rates.size() + " rates x " + uniquePolicies.size()
                    + " policies" + (seeds == 1 ? "" : " x " + seeds + " seeds") + "; expected: at most " + MAX_RUNS
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
