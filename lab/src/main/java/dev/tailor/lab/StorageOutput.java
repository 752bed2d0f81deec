package dev.tailor.lab;

import dev.tailor.lab.report.StorageFigures;
import dev.tailor.lab.report.StorageReport;
import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.StorageSweep;
import dev.tailor.sim.storage.SweepSummary;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/** Text tables and the progress bar of {@code tailor storage simulate}. */
public final class StorageOutput {

    /** What the table prints for a percentile with too few requests behind it. */
    static final String NOT_RESOLVABLE = StorageFigures.NOT_RESOLVABLE;

    private StorageOutput() {}

    /**
     * A progress bar on {@code err} when it is a terminal; otherwise a plain line every tenth of the runs,
     * naming the run that finished it ({@code robustness-long-bursts seed 2 fifo}).
     */
    static StorageSweep.Progress progress(PrintWriter err, boolean terminal) {
        return (done, total, run, result) -> SimulationOutput.progress(
                err,
                terminal,
                done,
                total,
                run.setup().label() + " seed " + run.setup().scenario().seed() + " " + run.policy());
    }

    /**
     * Per scenario variant, the latency by tenant class, by segment class and within the tenant's
     * baseline, then the capacity and admission counters.
     */
    public static void table(PrintWriter out, List<StorageRunResult> results) {
        table(out, results, false);
    }

    /**
     * {@link #table(PrintWriter, List)}, and when {@code perTenant}, after each variant's tables, one row per
     * tenant and policy ({@link #tenants}). The policy column is as wide as the longest policy name of
     * {@code results} (at least {@value #TABLE_POLICY_WIDTH}), so that every row's figures stand under their
     * headers.
     */
    public static void table(PrintWriter out, List<StorageRunResult> results, boolean perTenant) {
        Map<String, List<StorageRunResult>> groups = new LinkedHashMap<>();
        for (StorageRunResult r : results) {
            groups.computeIfAbsent(r.label() + " · seed " + r.seed(), k -> new ArrayList<>())
                    .add(r);
        }
        int policy = policyWidth(results.stream().map(StorageRunResult::policy).toList(), TABLE_POLICY_WIDTH);
        boolean first = true;
        for (Map.Entry<String, List<StorageRunResult>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            List<StorageRunResult> runs = group.getValue();
            out.println(group.getKey() + " · " + fmt(runs.get(0).measuredSeconds()) + " s measured");
            classes(
                    out,
                    policy,
                    runs,
                    "steady tenants (%d requests)",
                    StorageRunResult::steady,
                    "hot tenants (%d requests)",
                    StorageRunResult::hot);
            out.println(String.format(
                    Locale.ROOT,
                    "  %-" + policy + "s %8s %8s %8s %8s %8s  %8s %8s %8s %8s %8s",
                    "policy",
                    "P50",
                    "P99",
                    "P99.9",
                    "P99.99",
                    "P99.999",
                    "P50",
                    "P99",
                    "P99.9",
                    "P99.99",
                    "P99.999"));
            rows(out, policy, runs, StorageRunResult::steady, StorageRunResult::hot);
            String empty = emptyClasses(runs.get(0));
            if (empty != null) {
                out.println("  " + empty);
            }
            classes(
                    out,
                    policy,
                    runs,
                    "steady segments (%d requests)",
                    StorageRunResult::steadySegments,
                    "hot segments (%d requests)",
                    StorageRunResult::hotSegments);
            rows(out, policy, runs, StorageRunResult::steadySegments, StorageRunResult::hotSegments);
            for (boolean steady : new boolean[] {true, false}) {
                String segments = StorageReport.unmeasuredSegments(runs.get(0), steady);
                if (segments != null) {
                    out.println("  " + segments);
                }
            }
            classes(
                    out,
                    policy,
                    runs,
                    "steady tenants within baseline (%d)",
                    StorageRunResult::steadyWithinBaseline,
                    "all within baseline (%d)",
                    StorageRunResult::allWithinBaseline);
            rows(out, policy, runs, StorageRunResult::steadyWithinBaseline, StorageRunResult::allWithinBaseline);
            out.println(counterRow(policy, "policy", StorageFigures.COUNTERS));
            for (StorageRunResult r : runs) {
                out.println(counterRow(policy, r.policy(), StorageFigures.counters(r)));
            }
            if (perTenant) {
                tenants(out, runs);
            }
        }
        out.println();
        legend(results).forEach(out::println);
        if (perTenant) {
            StorageFigures.tenantLegend().forEach(out::println);
        }
    }

    /**
     * One variant's runs per tenant: a row per tenant and policy, the tenant's columns on its first row
     * (every policy sees the same arrivals, so they are the tenant's), then the policy's percentiles.
     */
    static void tenants(PrintWriter out, List<StorageRunResult> runs) {
        List<StorageRunResult.TenantResult> first = runs.get(0).tenants();
        int name = 6;
        for (StorageRunResult.TenantResult t : first) {
            name = Math.max(name, t.name().length());
        }
        int policy = 6;
        for (StorageRunResult r : runs) {
            policy = Math.max(policy, r.policy().length());
        }
        String format = "  %-" + name + "s %-6s %5s %14s %7s %6s %8s  %-" + policy + "s %8s %8s %8s %8s %8s";
        List<Object> header = new ArrayList<>(StorageFigures.TENANT_COLUMNS);
        header.add("policy");
        header.addAll(StorageFigures.PERCENTILES);
        out.println("  per tenant, latency ms");
        out.println(String.format(Locale.ROOT, format, header.toArray()));
        for (int i = 0; i < first.size(); i++) {
            for (int p = 0; p < runs.size(); p++) {
                StorageRunResult r = runs.get(p);
                StorageRunResult.TenantResult t = r.tenants().get(i);
                List<Object> row = new ArrayList<>(
                        p == 0
                                ? StorageFigures.tenant(t)
                                : java.util.Collections.nCopies(StorageFigures.TENANT_COLUMNS.size(), ""));
                row.add(r.policy());
                row.addAll(StorageFigures.percentiles(t.latency()));
                out.println(String.format(Locale.ROOT, format, row.toArray()).stripTrailing());
            }
        }
    }

    /**
     * The sweep's summary (more than one scenario variant or seed): per policy, the distribution over
     * the cells of steady tenants' P99.999 ÷ fifo's and ÷ mclock's, hot tenants' P99 ÷ mclock's, steady
     * tenants' within-baseline requests' P99.999 ÷ fifo's and ÷ mclock's, the worst idle capacity, and the
     * cells where it is above fifo or above 1.1 × mclock.
     */
    public static void summary(PrintWriter out, SweepSummary summary) {
        out.println(StorageFigures.sweepTitle(summary));
        int policy = policyWidth(
                summary.policies().stream().map(SweepSummary.Row::policy).toList(), SUMMARY_POLICY_WIDTH);
        String format = "  %-" + policy + "s %-24s %-24s %-24s %-24s %-24s %8s  %s";
        out.println(String.format(
                Locale.ROOT,
                format,
                "policy",
                StorageFigures.SWEEP_RATIOS.get(0),
                StorageFigures.SWEEP_RATIOS.get(1),
                StorageFigures.SWEEP_RATIOS.get(2),
                StorageFigures.SWEEP_RATIOS.get(3),
                StorageFigures.SWEEP_RATIOS.get(4),
                "unused",
                "cells"));
        for (SweepSummary.Row row : summary.policies()) {
            List<SweepSummary.Ratios> r = StorageFigures.sweepRatios(row);
            out.println(String.format(
                    Locale.ROOT,
                    format,
                    row.policy(),
                    ratios(r.get(0)),
                    ratios(r.get(1)),
                    ratios(r.get(2)),
                    ratios(r.get(3)),
                    ratios(r.get(4)),
                    StorageFigures.worstUnused(row),
                    StorageFigures.cellsAbove(row)));
        }
        StorageFigures.sweepNotes(summary).forEach(line -> out.println("  " + line));
    }

    /** The policy column's width in the tables of {@link #table}: at least this, wider for a longer name. */
    static final int TABLE_POLICY_WIDTH = 23;

    /** The policy column's width in the sweep's {@link #summary}: at least this, wider for a longer name. */
    static final int SUMMARY_POLICY_WIDTH = 24;

    /** A policy column as wide as the longest of {@code policies}, and at least {@code least}, so that rows align. */
    static int policyWidth(List<String> policies, int least) {
        int width = least;
        for (String policy : policies) {
            width = Math.max(width, policy.length());
        }
        return width;
    }

    /** Worst / median / best, or one "–" when no cell compared. */
    private static String ratios(SweepSummary.Ratios r) {
        return r.cells() == 0 ? StorageFigures.NONE : String.join(" / ", StorageFigures.ratios(r));
    }

    /**
     * Why a class's columns are all {@value #NOT_RESOLVABLE} when no request of it was measured, or
     * null when both classes have requests. The classes are the scenario's (ground truth), the same for
     * every policy of a variant; the reason is {@link StorageReport#unmeasured}'s, as in the HTML report.
     */
    static String emptyClasses(StorageRunResult r) {
        if (r.offeredRequests() == 0) {
            return "no request arrived in the " + fmt(r.measuredSeconds()) + " s measured: every figure is "
                    + NOT_RESOLVABLE;
        }
        String steady = StorageReport.unmeasured(r, true);
        return steady != null ? steady : StorageReport.unmeasured(r, false);
    }

    /** What the columns of {@code results} mean, one line each ({@link StorageFigures#legend(List)}). */
    static List<String> legend(List<StorageRunResult> results) {
        return StorageFigures.legend(results);
    }

    private static String percentiles(LatencySummary s) {
        return String.format(
                Locale.ROOT,
                "%8s %8s %8s %8s %8s",
                StorageFigures.percentiles(s).toArray());
    }

    /** The simulator's speed: simulated requests per second of one thread's wall time. */
    public static String speed(List<StorageRunResult> results) {
        long requests = 0;
        double wallMillis = 0;
        for (StorageRunResult r : results) {
            requests += r.simulatedRequests();
            wallMillis += r.wallMillis();
        }
        if (wallMillis <= 0) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "simulator speed: %s simulated requests per second of one thread (%,d requests in %.1f s of run"
                        + " time)",
                perSecond(requests / wallMillis * 1e3),
                requests,
                wallMillis / 1e3);
    }

    /**
     * A rate as people read it: {@code "1.25 million"} from 100,000 per second up, whole numbers with
     * thousands separators below ({@code "3,125"}), so a slow run does not read as {@code "0.00 million"}.
     */
    static String perSecond(double perSecond) {
        return perSecond >= 1e5
                ? String.format(Locale.ROOT, "%.2f million", perSecond / 1e6)
                : String.format(Locale.ROOT, "%,.0f", perSecond);
    }

    /** From this backend utilisation on, unfinished requests are read as a load the backend cannot serve. */
    static final double SATURATED_BACKEND_PERCENT = 90;

    /**
     * Why a run's measured requests may be unfinished, from what it measured: a backend busy nearly all the
     * time (at least {@value #SATURATED_BACKEND_PERCENT} %) means more load than it serves, queues that grow;
     * a backend with room means requests still waiting or in service when the drain after the measured period
     * ended (a request longer than the drain, or one a policy held).
     */
    static String unfinishedCause(StorageRunResult r) {
        String busy = String.format(Locale.ROOT, "the backend was %.1f %% busy", r.backendUtilizationPercent());
        if (r.backendUtilizationPercent() >= SATURATED_BACKEND_PERCENT) {
            return busy + ": more load than it serves, so its queues grow";
        }
        return busy + ", so not a load it cannot serve: they were still waiting or in service when the drain"
                + " after the measured period ended (the scenario's drainSeconds, default 1 s; a longer one"
                + " measures them)";
    }

    /**
     * Warnings about results that need care: unfinished requests, refusals. Each names its run (scenario,
     * the seed when the results hold more than one, policy).
     */
    public static List<String> warnings(List<StorageRunResult> results) {
        List<String> warnings = new ArrayList<>();
        boolean severalSeeds = StorageReport.severalSeeds(results);
        for (StorageRunResult r : results) {
            String run = r.label() + (severalSeeds ? " seed " + r.seed() : "") + " " + r.policy();
            if (r.offeredRequests() > 0 && r.unfinished() > 0.001 * r.offeredRequests()) {
                warnings.add(String.format(
                        Locale.ROOT,
                        "%s: %d of %d measured requests were unfinished at the end;"
                                + " they enter the percentiles at their age, a lower bound (%s)",
                        run,
                        r.unfinished(),
                        r.offeredRequests(),
                        unfinishedCause(r)));
            }
            if (r.refused() > 0) {
                warnings.add(String.format(
                        Locale.ROOT,
                        "%s: %d measured requests were refused (admission queue full)" + " and have no latency",
                        run,
                        r.refused()));
            }
        }
        // A sweep whose runs are all too short for a steady P99.999 has nothing but "–" in its summary.
        long mostSteady = results.stream()
                .filter(r -> r.steady() != null)
                .mapToLong(r -> r.steady().requests())
                .max()
                .orElse(0);
        boolean anySteadyTail =
                results.stream().anyMatch(r -> r.steady() != null && r.steady().p99999Millis() != null);
        if (mostSteady > 0 && !anySteadyTail && SweepSummary.of(results).cells() > 1) {
            warnings.add(String.format(
                    Locale.ROOT,
                    "no run measured the %,d steady-tenant requests a P99.999 needs (the most: %d), so the"
                            + " sweep summary's steady columns are all –; measure longer (--duration-seconds)",
                    LatencySummary.needed(99.999),
                    mostSteady));
        }
        return warnings;
    }

    static String fmt(double value) {
        return SimulationOutput.fmt(value);
    }

    /** One row of the throughput, capacity and admission table: a name, then the {@link StorageFigures#COUNTERS}' cells. */
    private static String counterRow(int policy, String name, List<String> cells) {
        List<Object> row = new ArrayList<>();
        row.add(name);
        row.addAll(cells);
        return String.format(
                Locale.ROOT, "  %-" + policy + "s %9s %8s %8s %8s %9s %8s %9s %8s %8s %13s", row.toArray());
    }

    /** A pair of request classes' header, each with its count ({@link #most}). */
    private static void classes(
            PrintWriter out,
            int policy,
            List<StorageRunResult> runs,
            String leftLabel,
            Function<StorageRunResult, LatencySummary> left,
            String rightLabel,
            Function<StorageRunResult, LatencySummary> right) {
        out.println(String.format(
                Locale.ROOT,
                "  %-" + policy + "s %-44s  %s",
                "latency ms",
                String.format(Locale.ROOT, leftLabel, most(runs, left)),
                String.format(Locale.ROOT, rightLabel, most(runs, right))));
    }

    /** One row per policy of the two classes' percentiles, with its own counts when it measured fewer. */
    private static void rows(
            PrintWriter out,
            int policy,
            List<StorageRunResult> runs,
            Function<StorageRunResult, LatencySummary> left,
            Function<StorageRunResult, LatencySummary> right) {
        for (StorageRunResult r : runs) {
            out.println(String.format(
                            Locale.ROOT,
                            "  %-" + policy + "s %s  %s",
                            r.policy(),
                            percentiles(left.apply(r)),
                            percentiles(right.apply(r)))
                    + fewer(runs, r, left, right));
        }
    }

    /**
     * The most requests any policy measured in a class: every policy sees the same arrivals, so this is the
     * class's count unless every policy refused some.
     */
    private static long most(List<StorageRunResult> runs, Function<StorageRunResult, LatencySummary> of) {
        return runs.stream().mapToLong(r -> of.apply(r).requests()).max().orElse(0);
    }

    /**
     * After a policy's row, its own counts when it measured fewer requests than the header's (it refused
     * some, which have no latency): {@code "  (27228 / 41033 measured)"}; else nothing.
     */
    private static String fewer(
            List<StorageRunResult> runs,
            StorageRunResult r,
            Function<StorageRunResult, LatencySummary> left,
            Function<StorageRunResult, LatencySummary> right) {
        long l = left.apply(r).requests();
        long rr = right.apply(r).requests();
        if (l == most(runs, left) && rr == most(runs, right)) {
            return "";
        }
        return "  (" + l + " / " + rr + " measured)";
    }
}
