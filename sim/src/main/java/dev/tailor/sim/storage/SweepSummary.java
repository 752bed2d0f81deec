package dev.tailor.sim.storage;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The distribution over a sweep's cells (one cell = one scenario variant on one seed) of each
 * policy's steady tenants' P99.999 against {@code fifo}'s and {@code mclock}'s in the same cell, of
 * its hot tenants' P99 against {@code mclock}'s, and of the P99.999 of steady tenants' requests within
 * their tenant's baseline ({@link StorageRunResult#steadyWithinBaseline}) against fifo's and mclock's:
 * worst, median and best ratio, and the cells where the steady tenants' is worse than the bound. A
 * ratio below 1 is the policy's gain. Cells where a percentile is not resolvable (too few requests)
 * or where the peer did not run are left out and counted. Refused requests have no latency, so each
 * row also counts them and names the cells that had any.
 *
 * @param cells    cells in the results
 * @param policies one row per policy, in the results' order
 */
public record SweepSummary(int cells, List<Row> policies) {

    /** Above this ratio to mclock's steady P99.999 a cell counts as mclock's (the acceptance's goal). */
    public static final double MCLOCK_BOUND = 1.1;

    /**
     * The forms of the mclock peer: per segment and one client per tenant. Each cell's reference is the one
     * with the shorter steady tail of those run, so the peer has its best form in every cell.
     */
    public static final List<String> MCLOCK_FORMS = List.of("mclock", "mclock-per-client");

    /**
     * One policy.
     *
     * @param policy             its name
     * @param steadyVsFifo       steady tenants' P99.999 ÷ fifo's
     * @param steadyVsMclock     steady tenants' P99.999 ÷ mclock's (in each cell the better of
     *                           {@link #MCLOCK_FORMS} run there)
     * @param hotVsMclock        hot tenants' P99 ÷ that mclock's
     * @param withinBaselineVsFifo   steady tenants' requests within their baseline: their P99.999 ÷ fifo's
     *                               (the same requests in both, the label depending on arrivals only)
     * @param withinBaselineVsMclock the same ÷ that mclock's
     * @param worstUnusedPercent the most capacity left idle while work waited in any cell, %
     * @param aboveFifo          cells where its steady P99.999 is above fifo's (ratio > 1)
     * @param aboveMclock        cells where its steady P99.999 is above {@link #MCLOCK_BOUND} × mclock's
     * @param refusedRequests    measured requests it refused, over all cells: they have no latency, so
     *                           the ratios above say nothing of them
     * @param refusedCells       cells where it refused any
     */
    public record Row(
            String policy,
            Ratios steadyVsFifo,
            Ratios steadyVsMclock,
            Ratios hotVsMclock,
            Ratios withinBaselineVsFifo,
            Ratios withinBaselineVsMclock,
            double worstUnusedPercent,
            List<String> aboveFifo,
            List<String> aboveMclock,
            long refusedRequests,
            List<String> refusedCells) {}

    /**
     * Ratios over the cells where both figures exist.
     *
     * @param cells     cells compared
     * @param worst     the largest ratio ({@code null}, as the others, when no cell compared)
     * @param median    the median ratio (mean of the middle two for an even count)
     * @param best      the smallest ratio
     * @param worstCell the cell of the largest, {@code "<scenario> seed <n>"}
     */
    public record Ratios(int cells, Double worst, Double median, Double best, String worstCell) {}

    /** Summarises {@code results}; any mix of scenarios, variants, seeds and policies. */
    public static SweepSummary of(List<StorageRunResult> results) {
        Map<String, Map<String, StorageRunResult>> byCell = new LinkedHashMap<>();
        List<String> policies = new ArrayList<>();
        for (StorageRunResult r : results) {
            byCell.computeIfAbsent(r.label() + " seed " + r.seed(), k -> new LinkedHashMap<>())
                    .put(r.policy(), r);
            if (!policies.contains(r.policy())) {
                policies.add(r.policy());
            }
        }
        List<Row> rows = new ArrayList<>();
        for (String policy : policies) {
            double worstUnused = 0;
            long refused = 0;
            List<String> refusedCells = new ArrayList<>();
            for (Map.Entry<String, Map<String, StorageRunResult>> cell : byCell.entrySet()) {
                StorageRunResult r = cell.getValue().get(policy);
                if (r != null) {
                    worstUnused = Math.max(worstUnused, r.unusedCapacityPercent());
                    refused += r.refused();
                    if (r.refused() > 0) {
                        refusedCells.add(cell.getKey());
                    }
                }
            }
            List<String> aboveFifo = new ArrayList<>();
            List<String> aboveMclock = new ArrayList<>();
            Ratios vsFifo =
                    ratios(byCell, policy, c -> c.get("fifo"), r -> r.steady().p99999Millis(), 1.0, aboveFifo);
            Ratios vsMclock = ratios(
                    byCell,
                    policy,
                    SweepSummary::betterMclock,
                    r -> r.steady().p99999Millis(),
                    MCLOCK_BOUND,
                    aboveMclock);
            Ratios hot = ratios(
                    byCell,
                    policy,
                    SweepSummary::betterMclock,
                    r -> r.hot().p99Millis(),
                    Double.POSITIVE_INFINITY,
                    new ArrayList<>());
            Ratios withinVsFifo = ratios(
                    byCell,
                    policy,
                    c -> c.get("fifo"),
                    r -> r.steadyWithinBaseline().p99999Millis(),
                    Double.POSITIVE_INFINITY,
                    new ArrayList<>());
            Ratios withinVsMclock = ratios(
                    byCell,
                    policy,
                    SweepSummary::betterMclock,
                    r -> r.steadyWithinBaseline().p99999Millis(),
                    Double.POSITIVE_INFINITY,
                    new ArrayList<>());
            rows.add(new Row(
                    policy,
                    vsFifo,
                    vsMclock,
                    hot,
                    withinVsFifo,
                    withinVsMclock,
                    worstUnused,
                    List.copyOf(aboveFifo),
                    List.copyOf(aboveMclock),
                    refused,
                    List.copyOf(refusedCells)));
        }
        return new SweepSummary(byCell.size(), List.copyOf(rows));
    }

    /**
     * The peer's best form in a cell: of {@link #MCLOCK_FORMS} run there, the one whose steady tenants'
     * P99.999 is the shortest (resolvable before not), or null when none ran.
     */
    static StorageRunResult betterMclock(Map<String, StorageRunResult> cell) {
        StorageRunResult best = null;
        for (String form : MCLOCK_FORMS) {
            StorageRunResult r = cell.get(form);
            if (r == null) {
                continue;
            }
            Double mine = r.steady().p99999Millis();
            Double theirs = best == null ? null : best.steady().p99999Millis();
            if (best == null || (mine != null && (theirs == null || mine < theirs))) {
                best = r;
            }
        }
        return best;
    }

    private static Ratios ratios(
            Map<String, Map<String, StorageRunResult>> byCell,
            String policy,
            Function<Map<String, StorageRunResult>, StorageRunResult> peer,
            Function<StorageRunResult, Double> figure,
            double bound,
            List<String> above) {
        List<Double> ratios = new ArrayList<>();
        double worst = Double.NaN;
        String worstCell = null;
        for (Map.Entry<String, Map<String, StorageRunResult>> e : byCell.entrySet()) {
            StorageRunResult mine = e.getValue().get(policy);
            StorageRunResult theirs = peer.apply(e.getValue());
            if (mine == null || theirs == null) {
                continue;
            }
            Double a = figure.apply(mine);
            Double b = figure.apply(theirs);
            if (a == null || b == null || !(b > 0)) {
                continue;
            }
            double ratio = a / b;
            ratios.add(ratio);
            if (ratio > bound) {
                above.add(e.getKey());
            }
            if (!(ratio <= worst)) {
                worst = ratio;
                worstCell = e.getKey();
            }
        }
        if (ratios.isEmpty()) {
            return new Ratios(0, null, null, null, null);
        }
        ratios.sort(null);
        int n = ratios.size();
        double median = n % 2 == 1 ? ratios.get(n / 2) : (ratios.get(n / 2 - 1) + ratios.get(n / 2)) / 2;
        return new Ratios(n, worst, median, ratios.get(0), worstCell);
    }
}
