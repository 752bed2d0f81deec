package dev.tailor.cli;

import dev.tailor.common.Numbers;
import dev.tailor.datasets.snapshot.OnlineBoutiqueSnapshot;
import dev.tailor.lab.ClusterRuns;
import dev.tailor.lab.LabException;
import dev.tailor.lab.SimulationOutput;
import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.OnlineBoutiqueScenario;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.Scenarios;
import dev.tailor.sim.cluster.SeedCells;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor heart simulate}: HEART against the routing users would otherwise have, simulated. */
@Command(
        name = "simulate",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Runs the cluster simulator: a scenario's heterogeneous nodes and call graph under Poisson load, once per"
                    + " routing policy and request rate, with HEART planning every 30 s through the real planner.",
            "",
            "Policies: default (kube-proxy random), least-request (Envoy P2C), locality-first (OptTraffic-style),"
                    + " wrr-orca (gRPC weighted round robin), mcf-no-filter (min-cost flow, no filter, no trend),"
                    + " heart, prequal (Prequal's probes and hot-cold selection, NSDI 2024), peak-ewma (Linkerd's"
                    + " peak-EWMA power of two choices); heart-paper (the paper's HEART, none of our departures);"
                    + " ablations heart-no-trend, heart-slow-link-filter, heart-no-outlier-filter, heart-no-idle-fit,"
                    + " heart-no-floor, heart-no-share-cap, heart-no-spread,"
                    + " heart-no-queueing, heart-no-headroom.",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart simulate --scenario paper-dag --rps 100,400 --report report/",
            "  tailor heart simulate --dataset my-app/ --entry web-gateway --policies heart,least-request",
            "",
            "Scenario files: docs/simulator.md. Your own application's data: docs/datasets.md.",
            "Exit codes: 0 done, 1 failed while running, 2 bad input, 130/143 stopped by Ctrl-C/SIGTERM."
        })
final class SimulateCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The scenario run when neither --scenario nor --dataset is given. */
    static final String DEFAULT_SCENARIO = "paper-dag";

    @Option(
            names = "--scenario",
            paramLabel = "NAME|FILE",
            description = "Bundled scenario (paper-pairwise, paper-dag; with a load change or a fault: dyn-load-step,"
                    + " dyn-load-ramp, dyn-noisy-neighbour, dyn-replica-crash, dyn-cold-restart, dyn-antagonist,"
                    + " dyn-metrics-undercount, dyn-calls-overcount, dyn-background-cpu),"
                    + " online-boutique (built from the public data in TAILOR_DATA_DIR or ../shared/data), or a YAML"
                    + " scenario file. Default: " + DEFAULT_SCENARIO + ", or the application of --dataset.")
    String scenario;

    /**
     * {@code --dataset} builds the scenario as online-boutique is built, from any folder in the
     * TraStrainer layout; {@code --trace}, {@code --entry} and {@code --latency} also apply to
     * {@code --scenario online-boutique}.
     */
    @CommandLine.Mixin
    DatasetOptions data;

    /** Where a relative --scenario file is read from: the working directory. */
    Path workingDir = Path.of("");

    @Option(
            names = "--minute",
            paramLabel = "WHEN",
            description = "With --dataset or --scenario online-boutique: which sample the scenario is built from, as"
                    + " for heart snapshot dataset: 'busiest' (largest request rate of the entry component), an"
                    + " index from 0, or Unix seconds. Default: busiest.")
    String minute;

    @Option(
            names = "--policies",
            paramLabel = "P",
            split = ",",
            splitSynopsisLabel = ",",
            description = "Policies to compare. Default: the eight of the comparison, the list above from default to"
                    + " peak-ewma (not heart-paper or the ablations).")
    List<String> policies;

    @Option(
            names = "--heart-ablation",
            paramLabel = "WHICH",
            split = ",",
            description = "Also run HEART without a part: no-trend (alpha = 1),"
                    + " no-outlier-filter, no-idle-fit, no-floor, no-share-cap, no-spread (min-cost flow),"
                    + " no-queueing (every edge on the ATPM shares), no-headroom (queue-aware split for the measured"
                    + " load only)"
                    + " (our departures from the paper); or with one: slow-link-filter (the paper's, off in"
                    + " heart); paper: all departures off (heart-paper).")
    List<String> ablations;

    @Option(
            names = "--rps",
            paramLabel = "R",
            split = ",",
            splitSynopsisLabel = ",",
            description = "User requests per second to run at. Default: the scenario's sweep.")
    List<Double> rps;

    @Option(
            names = "--network",
            paramLabel = "N",
            split = ",",
            splitSynopsisLabel = ",",
            description = "The scenario's networks to run on (e.g. A,B). Default: the scenario's own choice.")
    List<String> networks;

    @Option(
            names = "--cpu-model",
            paramLabel = "M",
            split = ",",
            splitSynopsisLabel = ",",
            description = "fluid (an ideal limit) and/or cfs-quota (Linux CFS throttling, 100 ms periods)."
                    + " Default: the scenario's.")
    List<String> cpuModels;

    @CommandLine.Mixin
    SharedOptions.SeedOption seedOption;

    @Option(
            names = "--seeds",
            paramLabel = "N",
            defaultValue = "1",
            description = "Runs every cell N times, with seeds S, S+1, ..., S+N-1 (S: --seed or the scenario's), and"
                    + " reports the median and the spread (min-max, mean) of the P99 over them. Default: 1.")
    int seeds;

    @Option(
            names = "--prequal-q-rif",
            paramLabel = "Q",
            description = "Prequal: the RIF quantile above which a probe is hot. Default: 0.84 (the paper's 2^(-1/4)).")
    Double prequalQRif;

    @Option(
            names = "--prequal-probe-rate",
            paramLabel = "R",
            description = "Prequal: probes sent with each call (r_probe). Default: the paper's 3.")
    Double prequalProbeRate;

    @Option(
            names = "--peak-ewma-decay-seconds",
            paramLabel = "S",
            description = "peak-ewma: decay time of the latency estimate. Default: Linkerd's 10 s.")
    Double peakEwmaDecaySeconds;

    @Option(
            names = "--warmup-seconds",
            paramLabel = "S",
            description = "Simulated warm-up, not measured. Default: the scenario's (120 s in the bundled ones).")
    Double warmupSeconds;

    @Option(
            names = "--duration-seconds",
            paramLabel = "S",
            description = "Simulated time measured after the warm-up. Default: the scenario's (600 s; 480 s in the"
                    + " dyn-* ones).")
    Double durationSeconds;

    @CommandLine.Mixin
    SharedOptions.FormatOption format;

    @CommandLine.Mixin
    SharedOptions.ReportOption reportOption;

    @CommandLine.Mixin
    SharedOptions.ThreadsOption threads;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (seeds < 1 || seeds > 1_000) {
            throw new CliException("--seeds: " + seeds + " (expected: 1 .. 1000)");
        }
        ClusterSimulation.PolicyConfigs configs = configs();
        ClusterScenario base = loadOrBuild(err);
        long firstSeed = seedOption.seed != null ? seedOption.seed : base.seed();
        if (firstSeed > Long.MAX_VALUE - (seeds - 1)) {
            throw new CliException("--seeds: " + seeds + " from seed " + firstSeed + " (expected: seeds S .. S + N - 1"
                    + " up to " + Long.MAX_VALUE + "; a smaller --seed)");
        }
        List<ClusterSweep.Run> runs = plan(base);
        int workers = threads.workers();
        // Created only once every other input is known to be good: bad input writes nothing.
        Path createdFrom = ClusterRuns.Stopping.firstMissing(reportOption.report);
        Path report = reportOption.checked();
        // A stop (Ctrl-C, SIGTERM) says how far the command got and removes the report folder it created; the
        // results go out whole or not at all, and the report's pages together.
        try (ClusterRuns.Stopping stopping = ClusterRuns.Stopping.on(err, runs.size(), report, createdFrom)) {
            err.println("tailor: simulating " + runs.size() + " run" + (runs.size() == 1 ? "" : "s") + " of "
                    + base.name()
                    + " (" + Numbers.written(base.warmupSecondsOr(warmupSeconds)) + " s warm-up + "
                    + Numbers.written(base.durationSecondsOr(durationSeconds))
                    + " s measured each" + (seeds == 1 ? "" : "; seeds " + firstSeed + " .. " + (firstSeed + seeds - 1))
                    + ") on " + workers + " thread" + (workers == 1 ? "" : "s"));
            List<RunResult> results = ClusterRuns.execute(runs, configs, workers, err, stopping);
            stopping.during("printing its results");
            List<SeedCells.Cell> cells = seeds == 1 ? null : SeedCells.of(results);
            StringWriter text = new StringWriter();
            PrintWriter printed = new PrintWriter(text);
            if (format.json()) {
                printed.println(Json.write(Map.of("results", cells == null ? results : cells)));
            } else {
                if (cells == null) {
                    SimulationOutput.table(printed, results);
                } else {
                    SimulationOutput.cellTable(printed, cells);
                }
                printed.println();
                printed.println(SimulationOutput.speed(results));
            }
            printed.flush();
            if (!stopping.publish("the results printed", () -> {
                out.print(text);
                out.flush();
            })) {
                return 1; // the stop said so
            }
            SimulationOutput.warnings(results).forEach(w -> err.println("tailor: warning: " + w));
            String unseen = unseenChanges(base);
            if (unseen != null) {
                err.println("tailor: warning: " + unseen);
            }
            if (report != null) {
                stopping.during("writing the report");
                List<String> intro = new ArrayList<>(List.of(base.description()));
                if (unseen != null) {
                    intro.add("Warning: " + unseen + ".");
                }
                if (cells != null) {
                    intro.add("Every cell ran with " + seeds + " seeds (" + firstSeed + " .. " + (firstSeed + seeds - 1)
                            + "): latencies are the median over the seeds, the P99 spread is min-max (mean), counts"
                            + " are summed; the latency CDFs pool the seeds' requests.");
                }
                Path file = stopping.writeReport(
                        report,
                        pages -> ClusterRuns.writeReport(
                                pages,
                                "Tailor cluster simulation: " + base.name(),
                                intro,
                                results,
                                cells,
                                List.of(base)));
                if (file != null) {
                    err.println("tailor: report written to " + file);
                }
            }
        }
        return 0;
    }

    /**
     * A warning when the runs end before some of the scenario's events or rate changes (a dynamic
     * scenario shortened with {@code --duration-seconds}), else {@code null}.
     */
    private String unseenChanges(ClusterScenario base) {
        double warmup = base.warmupSecondsOr(warmupSeconds);
        double duration = base.durationSecondsOr(durationSeconds);
        List<String> unseen = base.changesFrom(warmup + duration);
        if (unseen.isEmpty()) {
            return null;
        }
        return base.name() + ": the runs end at " + Numbers.written(warmup + duration) + " s ("
                + Numbers.written(warmup) + " s warm-up + " + Numbers.written(duration) + " s measured), before "
                + String.join(", ", unseen) + ", so they never see " + (unseen.size() == 1 ? "it" : "them")
                + ": run longer (--duration-seconds)";
    }

    /** The peers' settings from the options, checked; errors name the option. */
    private ClusterSimulation.PolicyConfigs configs() {
        return ClusterRuns.policyConfigs(prequalQRif, prequalProbeRate, peakEwmaDecaySeconds);
    }

    static ClusterScenario load(String nameOrFile) {
        return load(nameOrFile, null);
    }

    /**
     * The scenario of {@code --scenario}, or built from {@code --dataset}; the data options are an
     * error with any scenario but online-boutique, and {@code --dataset} with any {@code --scenario}.
     */
    private ClusterScenario loadOrBuild(PrintWriter notes) {
        if (data.dataset != null && scenario != null) {
            throw new CliException("--dataset: " + data.dataset + " with --scenario " + scenario + " (expected: one"
                    + " of them; --dataset builds the scenario from the folder)");
        }
        if (scenario != null) {
            String note = BundledOrFile.note(
                    "--scenario",
                    scenario,
                    Scenarios.BUNDLED.contains(scenario) || OnlineBoutiqueScenario.NAME.equals(scenario),
                    workingDir);
            if (note != null) {
                notes.println(note);
            }
        }
        if (data.dataset == null && !OnlineBoutiqueScenario.NAME.equals(scenario)) {
            if (data.given() || minute != null) {
                throw new CliException((data.given() ? data.firstGiven() : "--minute") + ": only with --dataset or"
                        + " --scenario "
                        + OnlineBoutiqueScenario.NAME + " (the scenario is "
                        + (scenario == null ? DEFAULT_SCENARIO : scenario) + ")");
            }
            return load(scenario == null ? DEFAULT_SCENARIO : scenario, notes);
        }
        OnlineBoutiqueSnapshot.Options options = data.options();
        if (minute != null) {
            try {
                options = options.toBuilder()
                        .minute(OnlineBoutiqueSnapshot.Minute.parse(minute))
                        .build();
            } catch (IllegalArgumentException e) {
                throw new CliException(DatasetOptions.optionName(e.getMessage()), e);
            }
        }
        String name =
                data.dataset == null ? OnlineBoutiqueScenario.NAME : ClusterRuns.scenarioName(options.metricsDir());
        try {
            OnlineBoutiqueScenario.Result result = OnlineBoutiqueScenario.build(options, name);
            result.notes().forEach(note -> notes.println("note: " + note));
            return result.scenario();
        } catch (IllegalArgumentException | IOException e) {
            throw data.error(e, options);
        }
    }

    /** A bundled scenario, {@code online-boutique} (built from the public data), or a YAML file. */
    static ClusterScenario load(String nameOrFile, PrintWriter notes) {
        if (OnlineBoutiqueScenario.NAME.equals(nameOrFile)) {
            return ClusterRuns.onlineBoutique(
                    DataDir.require(DatasetOptions.METRICS, null),
                    DataDir.require(DatasetOptions.LATENCY, null),
                    notes);
        }
        try {
            return ClusterRuns.load(nameOrFile, OnlineBoutiqueScenario.NAME);
        } catch (LabException e) {
            Path file = Path.of(nameOrFile);
            String wrong = java.nio.file.Files.isRegularFile(file)
                    ? FileKinds.wrongKind(
                            file,
                            FileKinds.Kind.CLUSTER_SCENARIO,
                            "a cluster scenario: name, seed, nodes, components, entry, ... (docs/simulator.md)")
                    : null;
            if (wrong == null) {
                throw e;
            }
            // A snapshot given as the scenario: said as one, not as every scenario field it lacks.
            throw new CliException("scenario " + nameOrFile + ": " + wrong, e);
        }
    }

    private List<ClusterSweep.Run> plan(ClusterScenario base) {
        return ClusterRuns.sweep(
                base,
                new ClusterRuns.Sweep(
                        policies,
                        ablations,
                        rps,
                        networks,
                        cpuModels,
                        seedOption.seed,
                        seeds,
                        warmupSeconds,
                        durationSeconds));
    }
}
