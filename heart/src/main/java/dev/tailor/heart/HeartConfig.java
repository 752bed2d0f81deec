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
 * @param outlierFilter               ATPM feeds its EWMA the median of a group's last three
 *                                    measurements instead of the latest one, so one round's outlier
 *                                    (a scrape gap, a counter reset, a burst) moves no estimate; a
 *                                    real change is followed one round later (default on; the paper
 *                                    feeds every measurement; our departure)
 * @param idleFitRounds               how many recent measured rounds of a group ATPM keeps to fit
 *                                    CPU = idle + cost × rate and subtract the idle CPU before
 *                                    dividing by requests, so a group at low traffic does not look
 *                                    slow (default 10 rounds, 5 minutes at 30 s; 0 = off, the
 *                                    paper's Σ cpu ÷ Σ requests; our departure)
 * @param idleFitMinRateRatio         two rounds enter the fit only when one served at least this
 *                                    many times the requests of the other (default 2); closer rates
 *                                    leave the slope to the noise of the measurement
 * @param idleMaxCpuFraction          the idle CPU subtracted is at most this fraction of a round's
 *                                    CPU, bounding how much cheaper a wrong fit can make a group look
 *                                    (default 0.9: at most ten times)
 * @param minShareOfEqualSplit        every group keeps at least this fraction of an equal split per
 *                                    replica (replicas ÷ the component's ready replicas), but never
 *                                    more than its capacity can serve, so a group at a low share
 *                                    still serves requests to measure (default 0.05; 0 = off, the
 *                                    paper; our departure)
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
        boolean parallel,
        boolean outlierFilter,
        int idleFitRounds,
        double idleFitMinRateRatio,
        double idleMaxCpuFraction,
        double minShareOfEqualSplit) {

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

    /** Most rounds the idle fit may keep per group: the state stays small. */
    public static final int MAX_IDLE_FIT_ROUNDS = 100;

    /**
     * The defaults: DESIGN.md's constants plus our departures from the paper (outlier filter, idle
     * CPU fit, share floor). Each departure's reasons and ablation are in docs/heart.md.
     */
    public static final HeartConfig DEFAULTS =
            new HeartConfig(0.2, 0.8, 0.2, true, 0.30, 0, 1.0, 1_000_000, Grouping.NODE, true,
                    true, 10, 2.0, 0.9, 0.05);

    /**
     * The paper's ATPM: every departure off (no outlier filter, Σ cpu ÷ Σ requests with idle CPU
     * charged to requests, no share floor), everything else as {@link #DEFAULTS}. Reproduces the
     * paper's behaviour and figures; the simulator's {@code heart-paper} policy.
     */
    public static final HeartConfig PAPER = DEFAULTS.paperVariant();

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
        if (idleFitRounds < 0 || idleFitRounds > MAX_IDLE_FIT_ROUNDS) {
            throw new IllegalArgumentException("idleFitRounds : " + idleFitRounds + " (expected: 0 (off) .. "
                    + MAX_IDLE_FIT_ROUNDS + ")");
        }
        if (!(idleFitMinRateRatio > 1 && idleFitMinRateRatio <= 1e6)) {
            throw new IllegalArgumentException("idleFitMinRateRatio : " + idleFitMinRateRatio
                    + " (expected: a ratio > 1 and <= 1e6)");
        }
        if (!(idleMaxCpuFraction >= 0 && idleMaxCpuFraction < 1)) {
            throw new IllegalArgumentException("idleMaxCpuFraction : " + idleMaxCpuFraction
                    + " (expected: 0 <= fraction < 1)");
        }
        if (!(minShareOfEqualSplit >= 0 && minShareOfEqualSplit < 1)) {
            throw new IllegalArgumentException("minShareOfEqualSplit : " + minShareOfEqualSplit
                    + " (expected: 0 (off) <= fraction < 1)");
        }
    }

    /** The configuration of the paper's version of {@code this}: our departures off, see {@link #PAPER}. */
    public HeartConfig paperVariant() {
        return withOutlierFilter(false).withIdleFitRounds(0).withMinShareOfEqualSplit(0);
    }

    public HeartConfig withAlphaRange(double min, double max) {
        return new HeartConfig(min, max, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withTrackingSmoothing(double beta) {
        return new HeartConfig(alphaMin, alphaMax, beta, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withSlowLinkFilter(boolean on) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, on, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withBatchRemovalMaxFraction(double fraction) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, fraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withSlowClusterMinGapMillis(double millis) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction, millis,
                unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter, idleFitRounds,
                idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withUnmeasuredLinkPenaltyMillis(double millis) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, millis, flowUnits, grouping, parallel, outlierFilter, idleFitRounds,
                idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withFlowUnits(int units) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, units, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withGrouping(Grouping g) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, g, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withParallel(boolean on) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, on, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withOutlierFilter(boolean on) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, on,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withIdleFitRounds(int rounds) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                rounds, idleFitMinRateRatio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withIdleFitMinRateRatio(double ratio) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, ratio, idleMaxCpuFraction, minShareOfEqualSplit);
    }

    public HeartConfig withIdleMaxCpuFraction(double fraction) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, fraction, minShareOfEqualSplit);
    }

    public HeartConfig withMinShareOfEqualSplit(double fraction) {
        return new HeartConfig(alphaMin, alphaMax, trackingSmoothing, slowLinkFilter, batchRemovalMaxFraction,
                slowClusterMinGapMillis, unmeasuredLinkPenaltyMillis, flowUnits, grouping, parallel, outlierFilter,
                idleFitRounds, idleFitMinRateRatio, idleMaxCpuFraction, fraction);
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
