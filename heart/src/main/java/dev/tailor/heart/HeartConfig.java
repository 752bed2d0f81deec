package dev.tailor.heart;

/**
 * Every constant of HEART's planning, with the defaults of DESIGN.md. Immutable; build variants
 * with the {@code with*} methods. The constructor checks every field and names it on error.
 *
 * @param alphaMin                    lower clamp of the adaptive EWMA weight α (default 0.2; the
 *                                    paper chose the range by simulation)
 * @param alphaMax                    upper clamp of α (default 0.8). {@code alphaMin = alphaMax = 1}
 *                                    turns the trend off: every round uses only the latest
 *                                    measurement
 * @param trackingSmoothing           β of the Trigg–Leach tracking signal: the weight of the newest
 *                                    forecast error in the smoothed error and the smoothed |error|
 *                                    (default 0.2, the value Trigg and Leach used; our reading)
 * @param slowLinkFilter              whether NTAM prunes slow links before min-cost flow (default on)
 * @param batchRemovalMaxFraction     the slow cluster of the 2-means split is removed in one batch
 *                                    when it holds at most this fraction of the links, else one link
 *                                    at a time from the slowest (default 0.30)
 * @param slowClusterMinGapMillis     the slow cluster counts as slow only when its mean delay exceeds
 *                                    the fast cluster's by at least this many ms (default 0: always,
 *                                    as in the paper; e.g. 1 leaves links that differ by fractions of
 *                                    a millisecond alone; our option)
 * @param unmeasuredLinkPenaltyMillis a node pair with no measured delay in either direction is taken
 *                                    at the largest measured delay plus this many ms, so it is used
 *                                    only when nothing measured is feasible (default 1; our choice)
 * @param flowUnits                   NTAM solves integer flows: each call edge's rate is quantised
 *                                    into this many units, so a route fraction is exact to
 *                                    1/flowUnits (default 1,000,000; our choice, the paper is silent)
 * @param grouping                    what forms a routing target: all replicas of a component on one
 *                                    node (HEART) or each replica alone (the per-replica baseline)
 * @param parallel                    compute components and call edges in parallel (default on);
 *                                    results do not depend on it
 */
public record HeartConfig(
        double alphaMin,
        double alphaMax,
        double trackingSmoothing,
        boolean slowLinkFilter,
        double batchRemovalMaxFraction,
        double slowClusterMinGapMillis,
        double unmeasuredLinkPenaltyMillis,
        int flowUnits,
        Grouping grouping,
        boolean parallel) {

    /** What a routing target is. */
    public enum Grouping {
        /** All replicas of a component on one node form one group (HEART, DESIGN.md ATPM). */
        NODE,
        /** Every replica is its own group: the "min-cost flow per replica" baseline. */
        REPLICA
    }

    /** Fewest flow units: fewer would leave caller nodes with no unit of flow at all. */
    public static final int MIN_FLOW_UNITS = 1_000;
    /** Most flow units: JGraphT's capacities are ints and its "infinite" capacity is 1e9. */
    public static final int MAX_FLOW_UNITS = 1 << 29;

    /** DESIGN.md's defaults. */
    public static final HeartConfig DEFAULTS =
            new HeartConfig(0.2, 0.8, 0.2, true, 0.30, 0, 1.0, 1_000_000, Grouping.NODE, true);

    public HeartConfig {
        requireUnit("alphaMin", alphaMin, false);
        requireUnit("alphaMax", alphaMax, false);
        if (alphaMin > alphaMax) {
            throw new IllegalArgumentException("alphaMin : " + alphaMin + " (expected: <= alphaMax, " + alphaMax + ")");
        }
        requireUnit("trackingSmoothing", trackingSmoothing, false);
        requireUnit("batchRemovalMaxFraction", batchRemovalMaxFraction, true);
        requireMillis("slowClusterMinGapMillis", slowClusterMinGapMillis);
        requireMillis("unmeasuredLinkPenaltyMillis", unmeasuredLinkPenaltyMillis);
        if (flowUnits < MIN_FLOW_UNITS || flowUnits > MAX_FLOW_UNITS) {
            throw new IllegalArgumentException("flowUnits : " + flowUnits + " (expected: " + MIN_FLOW_UNITS + " .. "
                    + MAX_FLOW_UNITS + ")");
        }
        if (grouping == null) {
            throw new IllegalArgumentException("grouping : null (expected: NODE or REPLICA)");
        }
    }

    public HeartConfig withAlphaRange(double min, double max) {
        return new HeartConfig(min, max, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel);
    }

    public HeartConfig withTrackingSmoothing(double beta) {
        return new HeartConfig(alphaMin, alphaMax, beta, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel);
    }

    public HeartConfig withSlowLinkFilter(boolean on) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, on, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel);
    }

    public HeartConfig withBatchRemovalMaxFraction(double fraction) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, fraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel);
    }

    public HeartConfig withSlowClusterMinGapMillis(double millis) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                millis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel);
    }

    public HeartConfig withUnmeasuredLinkPenaltyMillis(double millis) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, millis, flowUnits, grouping, parallel);
    }

    public HeartConfig withFlowUnits(int units) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, units, grouping, parallel);
    }

    public HeartConfig withGrouping(Grouping g) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, g, parallel);
    }

    public HeartConfig withParallel(boolean on) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, on);
    }

    private static void requireUnit(String name, double value, boolean zeroAllowed) {
        boolean ok = value <= 1 && (zeroAllowed ? value >= 0 : value > 0);
        if (!ok) {
            throw new IllegalArgumentException(name + " : " + value + " (expected: " + (zeroAllowed ? "0" : "> 0") + " .. 1)");
        }
    }

    private static void requireMillis(String name, double value) {
        if (!(value >= 0 && value <= SnapshotValidator.MAX_DELAY_MILLIS)) {
            throw new IllegalArgumentException(name + " : " + value + " (expected: ms in [0, 3.6e6])");
        }
    }
}
