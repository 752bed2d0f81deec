package dev.tailor.lab;

import dev.tailor.lab.report.ClusterReport;
import dev.tailor.lab.report.HtmlPages;
import dev.tailor.sim.ScenarioException;
import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.Scenarios;
import dev.tailor.sim.cluster.SeedCells;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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
        List<String> problems = variant.problems();
        if (!problems.isEmpty()) {
            throw new LabException(String.join("; ", problems)
                    .replace("warmupSeconds", "--warmup-seconds")
                    .replace("durationSeconds", "--duration-seconds"));
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
        try {
            return ClusterSweep.run(
                    runs,
                    configs,
                    threads,
                    System::nanoTime,
                    SimulationOutput.progress(err, Terminal.stderrIsTerminal()));
        } catch (IllegalArgumentException e) {
            throw new LabException(e.getMessage());
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
            throw new LabException("cannot write the report to " + dir + ": " + LabException.reason(e), 1, e);
        }
    }
}
