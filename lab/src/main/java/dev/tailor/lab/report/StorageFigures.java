package dev.tailor.lab.report;

import dev.tailor.common.Numbers;
import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.SweepSummary;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The figures of storage-simulator runs as the text table and the HTML report both show them: the same
 * strings, the same rounding, the same marks and reasons for a missing value, so the two cannot drift.
 * The text pads these cells into columns; the report puts each in a table cell.
 */
public final class StorageFigures {

    /** A percentile with too few requests behind it (not resolvable). */
    public static final String NOT_RESOLVABLE = "n/r";

    /** A figure the run does not have: a counter of a policy without it, a share of a class with no request. */
    public static final String NONE = Numbers.NONE;

    /** The latency columns of a class, in order. */
    public static final List<String> PERCENTILES = List.of("P50", "P99", "P99.9", "P99.99", "P99.999");

    /** The throughput, capacity and admission columns, in order. */
    public static final List<String> COUNTERS = List.of(
            "req/s",
            "backend",
            "unused",
            "waited",
            "reserve",
            "lent",
            "borrowed",
            "repaid",
            "refused",
            "misclassified");

    /** The sweep summary's ratio columns, in order; each is worst / median / best. */
    public static final List<String> SWEEP_RATIOS = List.of(
            "steady P99.999 ÷ fifo",
            "steady P99.999 ÷ mclock",
            "hot P99 ÷ mclock",
            "within P99.999 ÷ fifo",
            "within P99.999 ÷ mclock");

    /** A row's ratios in the order of {@link #SWEEP_RATIOS}. */
    public static List<SweepSummary.Ratios> sweepRatios(SweepSummary.Row row) {
        return List.of(
                row.steadyVsFifo(),
                row.steadyVsMclock(),
                row.hotVsMclock(),
                row.withinBaselineVsFifo(),
                row.withinBaselineVsMclock());
    }

    private StorageFigures() {}

    /** A class's P50 .. P99.999, ms; {@link #NOT_RESOLVABLE} where too few requests were measured. */
    public static List<String> percentiles(LatencySummary s) {
        return List.of(
                ms(s.p50Millis()), ms(s.p99Millis()), ms(s.p999Millis()), ms(s.p9999Millis()), ms(s.p99999Millis()));
    }

    /** Milliseconds, or {@link #NOT_RESOLVABLE} for null. */
    public static String ms(Double millis) {
        return millis == null ? NOT_RESOLVABLE : number(millis);
    }

    /** The {@link #COUNTERS} of a run; {@link #NONE} for the admission counters of a policy without them. */
    public static List<String> counters(StorageRunResult r) {
        StorageRunResult.AdmissionCounters a = r.admission();
        return List.of(
                String.format(Locale.ROOT, "%.0f", r.throughputRequestsPerSecond()),
                String.format(Locale.ROOT, "%.1f%%", r.backendUtilizationPercent()),
                String.format(Locale.ROOT, "%.1f%%", r.unusedCapacityPercent()),
                String.format(Locale.ROOT, "%.1f%%", r.waitingTimePercent()),
                a == null ? NONE : share(a.reserveDrawnPercent()),
                a == null ? NONE : share(a.reserveLentPercent()),
                a == null ? NONE : share(a.borrowedPercent()),
                a == null ? NONE : share(a.repaidPercent()),
                String.valueOf(r.refused()),
                a == null
                        ? NONE
                        : misclassified(r.steady(), a.steadyAdmittedAsHotPercent())
                                + " / "
                                + misclassified(r.hot(), a.hotAdmittedAsSteadyPercent()));
    }

    /**
     * What the columns of {@code results} mean, one line each; the admission counters' lines (reserve, lent,
     * borrowed and repaid in % of segment admission's budget; misclassified) only when a run has them, that
     * is when a segment-admission policy ran: for any other policy those columns are all {@link #NONE}.
     */
    public static List<String> legend(List<StorageRunResult> results) {
        List<String> legend = new ArrayList<>(legend());
        if (results.stream().allMatch(r -> r.admission() == null)) {
            legend.removeIf(line -> line.startsWith("reserve / lent") || line.startsWith("misclassified ="));
        }
        return legend;
    }

    /** What every column means, one line each, the admission counters' included. */
    static List<String> legend() {
        return List.of(
                "steady/hot tenants = tenants without/with bursts (ground truth); latency = arrival at the proxy to"
                        + " completion at the backend.",
                "steady/hot segments = the class admission's classifier gave the request's segments when it arrived"
                        + " (the paper's measure; it depends on arrivals only, so every policy is measured on the"
                        + " same requests).",
                "within baseline = the request was within its tenant's baseline when it arrived: the shipped"
                        + " segment admission's guarantee bucket (its baseline's rate, W intervals of it deep) held its"
                        + " cost; labelled on arrivals under every policy, so each is measured on the same requests"
                        + " (in brackets: the requests measured; a policy that refused some, which have no latency,"
                        + " gives its own counts after its row).",
                notResolvable(99.99, 99.999),
                "req/s = requests the backend completed within the measured period ÷ its seconds, whenever they"
                        + " arrived: what it served, at most its capacity for the requests served however much is"
                        + " offered (completions in the drain after the period are not counted).",
                "backend = utilisation; unused = share of the backend left idle while requests waited at a proxy;"
                        + " waited = share of time some request waited there.",
                "reserve / lent / borrowed / repaid = cost drawn from the reserve by steady segments, lent from it to"
                        + " hot ones late in intervals, borrowed at bursts' starts, repaid (that borrowing and, in"
                        + " Tailor's variant, the debt of requests the baseline guarantee admitted beyond the pools, and"
                        + " the advances of requests costing more than a budget; so repaid may exceed borrowed), in % of"
                        + " the budget issued (segment-admission policies; "
                        + NONE + " for the others).",
                "misclassified = share of the steady tenants' requests admission classed hot / share of the hot"
                        + " tenants' requests it classed steady, in its own classes against the ground truth ("
                        + NONE + " for a class with no request). Not an error rate: admission classes by commitment,"
                        + " so a bursty tenant's requests within its baseline or outside its bursts are rightly"
                        + " steady (a high second share is expected), and a steady tenant's beyond its baseline"
                        + " are hot by the same rule.");
    }

    /**
     * What {@link #NOT_RESOLVABLE} means, with the requests each of {@code levels} (in %) needs ({@link
     * LatencySummary#needed}): {@code n/r = not resolvable: fewer requests than the percentile needs (P99.99:
     * 10,000, P99.999: 100,000).}
     */
    public static String notResolvable(double... levels) {
        List<String> needs = new ArrayList<>();
        for (double level : levels) {
            needs.add("P" + Numbers.written(level) + ": "
                    + String.format(Locale.ROOT, "%,d", LatencySummary.needed(level)));
        }
        return NOT_RESOLVABLE + " = not resolvable: fewer requests than the percentile needs ("
                + String.join(", ", needs) + ").";
    }

    /**
     * The per-tenant columns before the latency: what a tenant is, the proxy it uses, what it was given and what
     * it sent.
     */
    public static final List<String> TENANT_COLUMNS =
            List.of("tenant", "class", "proxy", "baseline", "offered", "within", "requests");

    /**
     * A tenant's {@link #TENANT_COLUMNS} cells: its name, class, proxy, baseline as the scenario states it (IOPS and
     * MiB/s when provisioned so, else cost units per second, {@code 100 Mcu/s}), its offered cost ÷ baseline and
     * the share of its requests within baseline, and its measured requests.
     */
    public static List<String> tenant(StorageRunResult.TenantResult t) {
        String baseline = t.baselineIops() != null
                ? number(t.baselineIops()) + " IOPS"
                        + (t.baselineMiBPerSecond() != null && t.baselineMiBPerSecond() > 0
                                ? " + " + number(t.baselineMiBPerSecond()) + " MiB/s"
                                : "")
                : number(t.baselineCostUnitsPerSecond() / 1e6) + " Mcu/s";
        return List.of(
                t.name(),
                t.tenantClass(),
                String.valueOf(t.proxy()),
                baseline,
                String.format(Locale.ROOT, "%.0f%%", t.offeredPercentOfBaseline()),
                String.format(Locale.ROOT, "%.1f%%", t.withinBaselinePercent()),
                String.valueOf(t.requests()));
    }

    /** What the per-tenant columns mean. */
    public static List<String> tenantLegend() {
        return List.of(
                "per tenant: class = ground truth (hot: it has bursts); proxy = the proxy it uses, numbered from 0;"
                        + " baseline = its commitment, in IOPS"
                        + " (+ MiB/s) when the scenario provisions it so, else in cost units per second (Mcu/s: millions of"
                        + " them; 1000 Mcu/s = the backend kept busy; by default the proxy's capacity ÷ its tenants); offered = the cost of its"
                        + " measured requests per second, bursts included, ÷ its baseline; within = share of its requests"
                        + " within its baseline when they arrived (as for the within-baseline classes); requests = those"
                        + " that arrived in the measured period; latency as for the classes, "
                        + NOT_RESOLVABLE + " with too few requests.");
    }

    /** The sweep summary's title line. */
    public static String sweepTitle(SweepSummary summary) {
        return "sweep over " + summary.cells() + " cells (scenario variant × seed): ratio to the peer in the same"
                + " cell, worst / median / best (below 1: better than the peer)";
    }

    /** A ratio's worst, median and best, to two decimals; three {@link #NONE} when no cell compared. */
    public static List<String> ratios(SweepSummary.Ratios r) {
        if (r.cells() == 0) {
            return List.of(NONE, NONE, NONE);
        }
        return List.of(ratio(r.worst()), ratio(r.median()), ratio(r.best()));
    }

    /** The most capacity a policy left idle while work waited in any cell. */
    public static String worstUnused(SweepSummary.Row row) {
        return String.format(Locale.ROOT, "%.1f%%", row.worstUnusedPercent());
    }

    /** The cells where a policy's steady P99.999 is above fifo's and above the bound × mclock's. */
    public static String cellsAbove(SweepSummary.Row row) {
        return String.format(
                Locale.ROOT,
                "%s above fifo, %s above %.1f × mclock",
                row.steadyVsFifo().cells() == 0
                        ? NONE
                        : String.valueOf(row.aboveFifo().size()),
                row.steadyVsMclock().cells() == 0
                        ? NONE
                        : String.valueOf(row.aboveMclock().size()),
                SweepSummary.MCLOCK_BOUND);
    }

    /**
     * What follows the sweep summary's table: the cells where a policy's steady tail is above fifo's, the
     * refusals (not in the ratios), and what the columns mean.
     */
    public static List<String> sweepNotes(SweepSummary summary) {
        List<String> notes = new ArrayList<>();
        for (SweepSummary.Row row : summary.policies()) {
            if (!row.aboveFifo().isEmpty()) {
                notes.add(row.policy() + ": steady P99.999 above fifo's in " + String.join(", ", row.aboveFifo()));
            }
        }
        for (SweepSummary.Row row : summary.policies()) {
            if (row.refusedRequests() > 0) {
                notes.add(String.format(
                        Locale.ROOT,
                        "%s: refused %,d requests (no latency, not in the ratios) in %s",
                        row.policy(),
                        row.refusedRequests(),
                        String.join(", ", row.refusedCells())));
            }
        }
        notes.add("unused = the most capacity any cell left idle while work waited (worst cell)");
        notes.add(NONE + " = no cell where both figures exist (the peer not run, or a P99.999 not resolvable: fewer"
                + " than " + String.format(Locale.ROOT, "%,d", LatencySummary.needed(99.999)) + " requests)");
        notes.add("within = steady tenants' requests within their tenant's baseline when they arrived (the same"
                + " requests under every policy)");
        notes.add("mclock = in each cell the better (shorter steady tail) of mclock and mclock-per-client, of"
                + " those run");
        return notes;
    }

    /** A number of the tables: whole when it is, else 3 significant digits down to 2 decimals; {@link #NONE} for NaN. */
    public static String number(double value) {
        return Numbers.format(value);
    }

    private static String ratio(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static String share(double value) {
        return String.format(Locale.ROOT, value < 0.1 && value > 0 ? "%.3f%%" : "%.1f%%", value);
    }

    /** One side of the misclassified column: {@link #NONE} when the class had no measured request. */
    private static String misclassified(LatencySummary measured, double percent) {
        return measured == null || measured.requests() == 0 ? NONE : String.format(Locale.ROOT, "%.0f%%", percent);
    }
}
