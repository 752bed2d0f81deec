package dev.tailor.cli;

import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageScenario;
import dev.tailor.sim.storage.StorageSetup;
import dev.tailor.sim.storage.StorageSweep;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tailor demo}: the paper's comparison in the cluster simulator — paper-dag and
 * paper-pairwise on network A at 100 and 400 RPS, every policy, under both CPU-limit models — with
 * our ratios next to the paper's and an HTML report; then a short storage comparison
 * (burst-microbench at ×8 and ×16 bursts, fifo, static-cap, mclock and segment admission, 10 s
 * measured) next to the storage paper's figures.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Reproduces HEART's comparison in the cluster simulator: the paper's DAG and pairwise applications on five"
                    + " heterogeneous workers, at 100 and 400 RPS, under default, least-request, locality-first,"
                    + " wrr-orca, mcf-no-filter and HEART routing, with an ideal CPU limit (fluid) and with Linux CFS"
                    + " throttling (cfs-quota). Then segment admission against fifo, static-cap and mclock on the"
                    + " storage burst microbenchmark. Prints the results next to the papers' figures and writes an"
                    + " HTML report with plots. About 30-40 s on 2 cores.",
            ""
        },
        footer = {"", "More: tailor heart simulate --help; docs/simulator.md."})
final class DemoCommand implements Callable<Integer> {

    /** The paper's figures (HEART, IEEE CLOUD 2025), P99 ms. */
    static final double PAPER_PAIRWISE_HEART = 194;
    static final double PAPER_PAIRWISE_LR = 293;
    static final double PAPER_DAG_HEART = 82;
    static final double PAPER_DAG_LR = 768;
    static final double PAPER_DAG_DEFAULT = 30_620;
    /** The storage paper's figures (NSDI 2026): the largest burst-test reduction, static cap's idle share. */
    static final double PAPER_BURST_REDUCTION_PERCENT = 97;
    static final double PAPER_STATIC_CAP_UNUSED_PERCENT = 27;
    /** The storage part: scenario, variants, policies, measured seconds. */
    static final String STORAGE_SCENARIO = "burst-microbench";
    static final List<Double> STORAGE_MULTIPLIERS = List.of(8.0, 16.0);
    static final List<String> STORAGE_POLICIES = List.of("fifo", "static-cap", "mclock", "segment-admission");
    static final double STORAGE_SECONDS = 10;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--report", paramLabel = "DIR", defaultValue = "tailor-demo",
            description = "Where the HTML report goes (DIR/index.html). Default: ${DEFAULT-VALUE}.")
    Path report;

    @Option(names = "--no-report", description = "Do not write the report.")
    boolean noReport;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "table",
            description = "table or json ({\"results\": [...]}). Default: ${DEFAULT-VALUE}.")
    SimulateCommand.Format format;

    @Option(names = "--threads", paramLabel = "N", description = "Runs in parallel. Default: the number of processors.")
    Integer threads;

    @Option(names = "--duration-seconds", paramLabel = "S",
            description = "Simulated time measured per run. Default: the scenarios' (600).")
    Double durationSeconds;

    @Option(names = "--warmup-seconds", paramLabel = "S",
            description = "Simulated warm-up per run, not measured. Default: the scenarios' (120).")
    Double warmupSeconds;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (noReport && spec.commandLine().getParseResult().hasMatchedOption("--report")) {
            throw new CliException("--no-report and --report: choose one");
        }
        if (!noReport) {
            report = SimulateCommand.checkReportDir(report, "--report");
        }
        int workers = SimulateCommand.workers(threads);
        List<ClusterSweep.Run> runs = new ArrayList<>();
        for (String name : List.of("paper-dag", "paper-pairwise")) {
            ClusterScenario base = SimulateCommand.load(name);
            for (ClusterScenario.CpuModel model : ClusterScenario.CpuModel.values()) {
                ClusterScenario variant = SimulateCommand.variant(base, null, model, warmupSeconds, durationSeconds,
                        "A");
                for (double rps : List.of(100.0, 400.0)) {
                    for (String policy : ClusterSimulation.POLICIES) {
                        runs.add(new ClusterSweep.Run(variant, policy, rps));
                    }
                }
            }
        }
        err.println("tailor: demo: " + runs.size() + " simulated runs (paper-dag and paper-pairwise, network A, 100 and"
                + " 400 RPS, 6 policies, fluid and cfs-quota CPU limits) on " + workers + " thread"
                + (workers == 1 ? "" : "s"));
        List<RunResult> results = SimulateCommand.execute(runs, workers, err);
        List<String> comparison = comparison(results);
        StorageScenario storageScenario = StorageSimulateCommand.variant(
                StorageSimulateCommand.load(STORAGE_SCENARIO), null, null, STORAGE_SECONDS);
        StorageSetup storageSetup = StorageSimulateCommand.setup(storageScenario);
        List<StorageSweep.Run> storageRuns = new ArrayList<>();
        for (StorageSetup variant : storageSetup.variants()) {
            if (STORAGE_MULTIPLIERS.contains(variant.burstMultiplier())) {
                STORAGE_POLICIES.forEach(policy -> storageRuns.add(new StorageSweep.Run(variant, policy)));
            }
        }
        err.println("tailor: demo: " + storageRuns.size() + " storage runs (" + STORAGE_SCENARIO + " at x8 and x16"
                + " bursts, " + String.join(", ", STORAGE_POLICIES) + "; " + SimulationOutput.fmt(STORAGE_SECONDS)
                + " s measured each)");
        List<StorageRunResult> storage = StorageSimulateCommand.execute(storageRuns, workers, err);
        List<String> storageComparison = storageComparison(storage);
        if (format == SimulateCommand.Format.json) {
            out.println(Json.write(Map.of("results", results, "storage", storage)));
        } else {
            SimulationOutput.table(out, results);
            out.println();
            comparison.forEach(out::println);
            out.println();
            out.println(SimulationOutput.speed(results));
            out.println();
            StorageOutput.table(out, storage);
            out.println();
            storageComparison.forEach(out::println);
        }
        SimulationOutput.warnings(results).forEach(w -> err.println("tailor: warning: " + w));
        if (!noReport) {
            List<String> intro = new ArrayList<>();
            intro.add("HEART (IEEE CLOUD 2025) against the routing users would otherwise have, in Tailor's cluster"
                    + " simulator: the paper's DAG and pairwise applications on five workers of per-core speed 1.0,"
                    + " 0.9, 0.7, 0.5 and 0.4, network A (all links 0.1-0.9 ms), seed 20250701.");
            intro.addAll(comparison);
            intro.add("Storage: segment admission on the burst microbenchmark is in storage.html next to this page.");
            Path file = SimulateCommand.writeReport(report, "Tailor demo: HEART in the cluster simulator", intro,
                    results);
            List<String> storageIntro = new ArrayList<>();
            storageIntro.add(storageScenario.description() + "; " + SimulationOutput.fmt(STORAGE_SECONDS)
                    + " s measured per run.");
            storageIntro.addAll(storageComparison);
            try {
                dev.tailor.sim.report.StorageReport.write(report, "storage.html",
                        "Tailor demo: segment admission in the storage simulator", storageIntro, storageSetup.notes(),
                        storage);
            } catch (java.io.IOException e) {
                throw new CliException("cannot write the report to " + report + ": " + Json.reason(e), 1, e);
            }
            err.println("tailor: report written to " + file.toAbsolutePath().normalize() + " and storage.html next to"
                    + " it (open them in a browser)");
        }
        return 0;
    }

    /** Segment admission's figures next to the storage paper's, one line each. */
    static List<String> storageComparison(List<StorageRunResult> storage) {
        List<String> lines = new ArrayList<>();
        lines.add("Against the paper (storage; burst-aware segment admission, NSDI 2026; "
                + SimulationOutput.fmt(STORAGE_SECONDS) + " s runs):");
        String row = "  %-56s %-14s %s";
        lines.add(String.format(Locale.ROOT, row, "", "paper", "ours"));
        double last = STORAGE_MULTIPLIERS.get(STORAGE_MULTIPLIERS.size() - 1);
        for (double m : STORAGE_MULTIPLIERS) {
            StorageRunResult fifo = findStorage(storage, m, "fifo");
            StorageRunResult ours = findStorage(storage, m, "segment-admission");
            String label = STORAGE_SCENARIO + " x" + SimulationOutput.fmt(m) + ", P99.999 vs fifo: ";
            lines.add(String.format(Locale.ROOT, row, label + "steady tenants",
                    m == last ? "up to -" + SimulationOutput.fmt(PAPER_BURST_REDUCTION_PERCENT) + " %" : "",
                    change(ours == null ? null : ours.steady().p99999Millis(),
                            fifo == null ? null : fifo.steady().p99999Millis())));
            lines.add(String.format(Locale.ROOT, row, label + "steady segments", "",
                    change(ours == null ? null : ours.steadySegments().p99999Millis(),
                            fifo == null ? null : fifo.steadySegments().p99999Millis())));
        }
        StorageRunResult cap = findStorage(storage, last, "static-cap");
        StorageRunResult ours = findStorage(storage, last, "segment-admission");
        lines.add(String.format(Locale.ROOT, row, "capacity unused while work waited, static-cap",
                SimulationOutput.fmt(PAPER_STATIC_CAP_UNUSED_PERCENT) + " %",
                cap == null ? "–" : String.format(Locale.ROOT, "%.1f %%", cap.unusedCapacityPercent())));
        lines.add(String.format(Locale.ROOT, row, "capacity unused while work waited, ours", "<= 5 %",
                ours == null ? "–" : String.format(Locale.ROOT, "%.1f %%", ours.unusedCapacityPercent())));
        lines.add("  Steady tenants: without bursts (ground truth); steady segments: those admission's classifier"
                + " called steady on arrival.");
        lines.add("  The deployed comparison (paper: -59.7 % steady-segment P99.999) is"
                + " tailor storage simulate --scenario deployed-like (real traces; docs/storage-simulator.md).");
        return lines;
    }

    private static String change(Double ours, Double baseline) {
        if (ours == null || baseline == null) {
            return "not resolvable";
        }
        return String.format(Locale.ROOT, "%+.0f %% (%s vs %s ms)", 100 * (ours / baseline - 1),
                SimulationOutput.fmt(ours), SimulationOutput.fmt(baseline));
    }

    private static StorageRunResult findStorage(List<StorageRunResult> results, double multiplier, String policy) {
        return results.stream().filter(r -> r.burstMultiplier() != null && r.burstMultiplier() == multiplier
                && r.policy().equals(policy)).findFirst().orElse(null);
    }

    /** Our ratios next to the paper's, one line each. */
    static List<String> comparison(List<RunResult> results) {
        List<String> lines = new ArrayList<>();
        lines.add("Against the paper (P99 latency; HEART paper, IEEE CLOUD 2025):");
        lines.add(String.format(Locale.ROOT, "  %-34s %-22s %-24s %-24s", "", "paper", "fluid CPU limit",
                "cfs-quota CPU limit"));
        lines.add(row("pairwise 100 RPS  HEART / LR", ratio(PAPER_PAIRWISE_HEART, PAPER_PAIRWISE_LR), results,
                "paper-pairwise", 100, "heart", "least-request"));
        lines.add(row("DAG 400 RPS       HEART / LR", ratio(PAPER_DAG_HEART, PAPER_DAG_LR), results, "paper-dag", 400,
                "heart", "least-request"));
        lines.add(row("DAG 400 RPS       HEART / default", ratio(PAPER_DAG_HEART, PAPER_DAG_DEFAULT), results,
                "paper-dag", 400, "heart", "default"));
        StringBuilder gap = new StringBuilder(String.format(Locale.ROOT, "  %-34s %-22s",
                "DAG 400 RPS       HEART CPU gap", "about 3 pp"));
        for (String model : List.of("fluid", "cfs-quota")) {
            RunResult heart = find(results, "paper-dag", model, 400, "heart");
            gap.append(String.format(Locale.ROOT, " %-24s",
                    heart == null ? "–" : SimulationOutput.fmt(heart.cpuGapPercentPoints()) + " pp"));
        }
        lines.add(gap.toString());
        return lines;
    }

    private static String row(String label, String paper, List<RunResult> results, String scenario, double rps,
            String numerator, String denominator) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %-34s %-22s", label, paper));
        for (String model : List.of("fluid", "cfs-quota")) {
            RunResult a = find(results, scenario, model, rps, numerator);
            RunResult b = find(results, scenario, model, rps, denominator);
            line.append(String.format(Locale.ROOT, " %-24s",
                    a == null || b == null || a.p99Millis() == null || b.p99Millis() == null ? "–"
                            : ratio(a.p99Millis(), b.p99Millis())));
        }
        return line.toString();
    }

    private static String ratio(double a, double b) {
        double r = a / b;
        return String.format(Locale.ROOT, r < 0.01 ? "%.4f" : "%.2f", r) + " (" + SimulationOutput.fmt(a) + " vs "
                + SimulationOutput.fmt(b) + ")";
    }

    private static RunResult find(List<RunResult> results, String scenario, String model, double rps, String policy) {
        return results.stream().filter(r -> r.scenario().equals(scenario) && r.cpuModel().equals(model)
                && r.rps() == rps && r.policy().equals(policy)).findFirst().orElse(null);
    }
}
