package dev.tailor.lab;

import dev.tailor.common.Numbers;
import dev.tailor.lab.report.StorageFigures;
import dev.tailor.sim.cluster.ClusterSweep;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.SeedCells;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/** Text tables and the progress bar of {@code tailor heart simulate} and {@code tailor demo}. */
public final class SimulationOutput {

    private SimulationOutput() {}

    /**
     * A progress bar on {@code err} when it is a terminal; otherwise a plain line every tenth of the runs
     * ({@link #progressLine}).
     */
    static ClusterSweep.Progress progress(PrintWriter err, boolean terminal) {
        return progress(err, terminal, false);
    }

    /** As {@link #progress(PrintWriter, boolean)}; with {@code seeds} each run is named with its seed. */
    static ClusterSweep.Progress progress(PrintWriter err, boolean terminal, boolean seeds) {
        return (done, total, run, result) -> progress(
                err,
                terminal,
                done,
                total,
                run.scenario().name() + " "
                        + run.scenario().network() + " "
                        + run.scenario().cpuModel().label() + " " + fmt(run.rps()) + " RPS "
                        + run.policy()
                        + (seeds ? " seed " + run.scenario().seed() : ""));
    }

    /** A frame of the progress bar on a terminal, else a {@link #progressLine}. */
    static void progress(PrintWriter err, boolean terminal, int done, int total, String what) {
        if (terminal) {
            progressBar(err, done, total, what);
        } else {
            progressLine(err, done, total, what);
        }
    }

    /**
     * For standard error that is no terminal (a CI log, a pipe), as build tools print: one whole line,
     * {@code tailor: 24/96 runs done (what)}, when a run finishes a tenth of them (every run of ten or
     * fewer), the last one included; never a carriage return.
     */
    static void progressLine(PrintWriter err, int done, int total, String what) {
        if ((long) done * 10 / total == (long) (done - 1) * 10 / total) {
            return;
        }
        err.println(
                String.format(Locale.ROOT, "tailor: %d/%d run%s done (%s)", done, total, total == 1 ? "" : "s", what));
        err.flush();
    }

    /** One frame of a progress bar, {@code [####....] done/total what}; cleared when done == total. */
    static void progressBar(PrintWriter err, int done, int total, String what) {
        int width = 30;
        int filled = (int) ((long) width * done / total);
        String bar = "#".repeat(filled) + ".".repeat(width - filled);
        err.print(String.format(Locale.ROOT, "\r[%s] %d/%d %-60s", bar, done, total, what));
        if (done == total) {
            err.print("\r" + " ".repeat(width + 75) + "\r");
        }
        err.flush();
    }

    /**
     * One table per (scenario, network, CPU model, rate), one row per policy; plan ms is the median round.
     * An {@code errors} column (user requests failed by a call lost to a crash) appears when any run
     * has some.
     */
    public static void table(PrintWriter out, List<RunResult> results) {
        Map<String, List<RunResult>> groups = new LinkedHashMap<>();
        for (RunResult r : results) {
            groups.computeIfAbsent(heading(r.scenario(), r.network(), r.cpuModel(), r.rps()), k -> new ArrayList<>())
                    .add(r);
        }
        boolean errors = results.stream().anyMatch(r -> r.errors() > 0);
        Percentiles percentiles = new Percentiles();
        boolean first = true;
        for (Map.Entry<String, List<RunResult>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            out.println(group.getKey());
            String col = policyColumn(
                    group.getValue().stream().map(RunResult::policy).toList());
            out.println(String.format(
                    Locale.ROOT,
                    "  " + col + " %9s %9s %9s %9s%s %10s %7s %8s %8s",
                    "policy",
                    "P50 ms",
                    "P99 ms",
                    "P99.9 ms",
                    "timeouts",
                    errors ? String.format(Locale.ROOT, " %9s", "errors") : "",
                    "unfinished",
                    "CPU gap",
                    "max CPU",
                    "plan ms"));
            for (RunResult r : group.getValue()) {
                out.println(String.format(
                        Locale.ROOT,
                        "  " + col + " %9s %9s %9s %9d%s %10d %7s %8s %8s",
                        r.policy(),
                        percentiles.cell(r.p50Millis(), r.requests(), 50),
                        percentiles.cell(r.p99Millis(), r.requests(), 99),
                        percentiles.cell(r.p999Millis(), r.requests(), 99.9),
                        r.timeouts(),
                        errors ? String.format(Locale.ROOT, " %9d", r.errors()) : "",
                        r.unfinished(),
                        withUnit(r.cpuGapPercentPoints(), "pp"),
                        withUnit(maxCpu(r), "%"),
                        r.planning() == null ? "–" : fmt(r.planning().medianMillis())));
            }
        }
        percentiles.legend(out);
    }

    /**
     * The cells of percentiles: {@link StorageFigures#NOT_RESOLVABLE} for one that is {@code null} although
     * requests were measured (too few for it, {@link dev.tailor.sim.storage.LatencySummary#needed}), {@link
     * Numbers#NONE} when none was; remembers the levels it printed as not resolvable for the one legend line.
     */
    static final class Percentiles {
        private final TreeSet<Double> unresolved = new TreeSet<>();

        /** A percentile's cell: its ms, or not resolvable, or {@link Numbers#NONE}. */
        String cell(Double millis, long requests, double levelPercent) {
            return cell(millis, requests, levelPercent, fmt(millis));
        }

        /** As {@link #cell(Double, long, double)}, the value written as {@code text} when there is one. */
        String cell(Double millis, long requests, double levelPercent, String text) {
            if (millis == null && requests > 0) {
                unresolved.add(levelPercent);
                return StorageFigures.NOT_RESOLVABLE;
            }
            return text;
        }

        /** After the tables, a blank line and the legend of not resolvable, when any cell was. */
        void legend(PrintWriter out) {
            if (unresolved.isEmpty()) {
                return;
            }
            out.println();
            out.println(StorageFigures.notResolvable(
                    unresolved.stream().mapToDouble(Double::doubleValue).toArray()));
        }
    }

    /** The format of the policy column: 16 characters, or as wide as the longest policy name. */
    static String policyColumn(List<String> policies) {
        int width =
                Math.max(16, policies.stream().mapToInt(String::length).max().orElse(0));
        return "%-" + width + "s";
    }

    /**
     * The table of a comparison run over several seeds: one row per cell with the medians over the
     * seeds, the P99's spread (min–max and mean), and counts summed over the seeds.
     */
    public static void cellTable(PrintWriter out, List<SeedCells.Cell> cells) {
        Map<String, List<SeedCells.Cell>> groups = new LinkedHashMap<>();
        for (SeedCells.Cell c : cells) {
            groups.computeIfAbsent(
                            heading(c.scenario(), c.network(), c.cpuModel(), c.rps()) + " · "
                                    + c.seeds().size() + " seeds",
                            k -> new ArrayList<>())
                    .add(c);
        }
        Percentiles percentiles = new Percentiles();
        boolean first = true;
        for (Map.Entry<String, List<SeedCells.Cell>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            out.println(group.getKey() + " (latencies: median over the seeds; counts: summed)");
            String col = policyColumn(
                    group.getValue().stream().map(SeedCells.Cell::policy).toList());
            out.println(String.format(
                    Locale.ROOT,
                    "  " + col + " %9s %9s %17s %9s %9s %9s %9s %10s %7s %8s",
                    "policy",
                    "P50 ms",
                    "P99 ms",
                    "P99 min–max",
                    "P99 mean",
                    "P99.9 ms",
                    "timeouts",
                    "errors",
                    "unfinished",
                    "CPU gap",
                    "plan ms"));
            for (SeedCells.Cell c : group.getValue()) {
                Double plan = SeedCells.planMillis(c);
                out.println(String.format(
                        Locale.ROOT,
                        "  " + col + " %9s %9s %17s %9s %9s %9d %9d %10d %7s %8s",
                        c.policy(),
                        percentiles.cell(c.p50Millis(), c.requests(), 50),
                        percentiles.cell(c.p99Millis(), c.requests(), 99),
                        percentiles.cell(c.p99Spread().minMillis(), c.requests(), 99, spread(c.p99Spread())),
                        percentiles.cell(c.p99Spread().meanMillis(), c.requests(), 99),
                        percentiles.cell(c.p999Millis(), c.requests(), 99.9),
                        c.timeouts(),
                        c.errors(),
                        c.unfinished(),
                        withUnit(c.cpuGapPercentPoints(), "pp"),
                        plan == null ? "–" : fmt(plan)));
            }
        }
        percentiles.legend(out);
    }

    /**
     * The demo's tables: one per (scenario, network, CPU model), one row per policy, the rates side by
     * side. A latency at or beyond {@code timeoutMillis} (the request timed out and was recorded at the
     * timeout) prints as {@code timeout}, not as a number.
     *
     * @param timeoutMillis the user-request timeout of each scenario, ms, by scenario name
     */
    static void groupedTable(PrintWriter out, List<RunResult> results, Map<String, Double> timeoutMillis) {
        Map<String, List<RunResult>> groups = new LinkedHashMap<>();
        for (RunResult r : results) {
            groups.computeIfAbsent(
                            r.scenario() + " · network " + r.network() + " · CPU " + r.cpuModel(),
                            k -> new ArrayList<>())
                    .add(r);
        }
        Percentiles percentiles = new Percentiles();
        boolean first = true;
        for (Map.Entry<String, List<RunResult>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            List<RunResult> runs = group.getValue();
            List<Double> rates =
                    runs.stream().map(RunResult::rps).distinct().sorted().toList();
            List<String> policies =
                    runs.stream().map(RunResult::policy).distinct().toList();
            double timeout = timeoutMillis.getOrDefault(runs.get(0).scenario(), Double.NaN);
            out.println(group.getKey() + " (ms; timeout: slower than " + fmt(timeout / 1000) + " s)");
            String col = policyColumn(policies);
            StringBuilder rateLine = new StringBuilder(String.format(Locale.ROOT, "  " + col, ""));
            StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "  " + col, "policy"));
            for (double rps : rates) {
                rateLine.append(String.format(Locale.ROOT, " | %-35s", fmt(rps) + " RPS"));
                header.append(String.format(Locale.ROOT, " | %8s %8s %8s %8s", "P50", "P99", "P99.9", "timeouts"));
            }
            out.println(rateLine.toString().stripTrailing());
            out.println(header);
            for (String policy : policies) {
                StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "  " + col, policy));
                for (double rps : rates) {
                    RunResult r = runs.stream()
                            .filter(x -> x.policy().equals(policy) && x.rps() == rps)
                            .findFirst()
                            .orElse(null);
                    row.append(
                            r == null
                                    ? String.format(Locale.ROOT, " | %8s %8s %8s %8s", "–", "–", "–", "–")
                                    : String.format(
                                            Locale.ROOT,
                                            " | %8s %8s %8s %8d",
                                            percentiles.cell(
                                                    r.p50Millis(), r.requests(), 50, latency(r.p50Millis(), timeout)),
                                            percentiles.cell(
                                                    r.p99Millis(), r.requests(), 99, latency(r.p99Millis(), timeout)),
                                            percentiles.cell(
                                                    r.p999Millis(),
                                                    r.requests(),
                                                    99.9,
                                                    latency(r.p999Millis(), timeout)),
                                            r.timeouts()));
                }
                out.println(row);
            }
        }
        percentiles.legend(out);
    }

    /** A latency in ms, or {@code timeout} when it is at or beyond the timeout. */
    static String latency(Double millis, double timeoutMillis) {
        return millis != null && !Double.isNaN(timeoutMillis) && millis >= timeoutMillis ? "timeout" : fmt(millis);
    }

    /**
     * {@link #warnings}, folded: one line per kind with its count and the runs it concerns, so that a
     * sweep of many overloaded runs says it once.
     */
    static List<String> foldedWarnings(List<RunResult> results) {
        List<String> unfinished = new ArrayList<>();
        List<String> noRound = new ArrayList<>();
        for (RunResult r : results) {
            String run = r.scenario() + " " + r.cpuModel() + " " + fmt(r.rps()) + " " + r.policy();
            if (r.requests() > 0 && r.unfinished() > 0.01 * r.requests()) {
                unfinished.add(run);
            }
            if (r.planning() != null && r.planning().rounds() == 0) {
                noRound.add(run);
            }
        }
        List<String> lines = new ArrayList<>();
        if (!unfinished.isEmpty()) {
            lines.add(unfinished.size() + " run" + (unfinished.size() == 1 ? "" : "s") + " ended with over 1 % of"
                    + " their measured requests in flight (overloaded, or too short); their percentiles are lower"
                    + " bounds: " + String.join(", ", unfinished));
        }
        if (!noRound.isEmpty()) {
            lines.add(noRound.size() + " HEART run" + (noRound.size() == 1 ? "" : "s") + " ended before HEART's first"
                    + " round (30 s) and routed by least-request throughout (run longer): "
                    + String.join(", ", noRound));
        }
        return lines;
    }

    private static String heading(String scenario, String network, String cpuModel, double rps) {
        return scenario + " · network " + network + " · CPU " + cpuModel + " · " + fmt(rps) + " RPS";
    }

    private static double maxCpu(RunResult r) {
        return r.replicas().stream()
                .map(RunResult.ReplicaStats::meanCpuUtilisationPercent)
                .filter(v -> v != null)
                .mapToDouble(Double::doubleValue)
                .max()
                .orElse(Double.NaN);
    }

    /**
     * The simulator's speed over {@code results}: simulated calls (requests served by a replica, as
     * {@code istio_requests_total} counts them) per second of one thread's wall time.
     */
    public static String speed(List<RunResult> results) {
        long calls = 0;
        double wallMillis = 0;
        for (RunResult r : results) {
            calls += r.callsServed();
            wallMillis += r.wallMillis();
        }
        if (wallMillis <= 0) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "simulator speed: %s simulated calls per second of one thread"
                        + " (%,d calls in %.1f s of run time, HEART planning included)",
                StorageOutput.perSecond(calls / wallMillis * 1e3),
                calls,
                wallMillis / 1e3);
    }

    /** Warnings about results that need care: many unfinished requests, HEART runs without rounds. */
    public static List<String> warnings(List<RunResult> results) {
        List<String> warnings = new ArrayList<>();
        // With several seeds a cell's runs differ only by seed: each warning says whose it is.
        boolean seeds = results.stream().map(RunResult::seed).distinct().count() > 1;
        for (RunResult r : results) {
            String run = r.scenario() + " " + r.network() + " " + r.cpuModel() + " " + fmt(r.rps()) + " RPS "
                    + r.policy() + (seeds ? " seed " + r.seed() : "");
            if (r.requests() > 0 && r.unfinished() > 0.01 * r.requests()) {
                warnings.add(String.format(
                        Locale.ROOT,
                        "%s: %d of %d measured requests (%.0f %%) were still in flight at"
                                + " the end; they enter the percentiles at their age so far, a lower bound%s",
                        run,
                        r.unfinished(),
                        r.requests(),
                        100.0 * r.unfinished() / r.requests(),
                        r.timeouts() > 0
                                ? " (the run is overloaded: its queues grow and " + r.timeouts()
                                        + " requests timed out)"
                                : ": run longer"));
            }
            if (r.planning() != null && r.planning().rounds() == 0) {
                warnings.add(run + ": the run ended before HEART's first round (30 s), so it routed by least-request"
                        + " throughout: run longer");
            }
        }
        return warnings;
    }

    private static String withUnit(Double value, String unit) {
        String text = fmt(value);
        return text.equals("–") ? text : text + unit;
    }

    /** {@link Numbers#format}; {@link Numbers#NONE} for {@code null}. */
    /** A spread as {@code min–max}, or a single {@link Numbers#NONE} when no seed has data (not {@code –––}). */
    public static String spread(SeedCells.Spread spread) {
        return spread.minMillis() == null || spread.maxMillis() == null
                ? Numbers.NONE
                : fmt(spread.minMillis()) + "–" + fmt(spread.maxMillis());
    }

    public static String fmt(Double value) {
        return value == null ? Numbers.NONE : Numbers.format(value);
    }
}
