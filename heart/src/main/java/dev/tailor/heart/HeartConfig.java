package dev.tailor.heart;

import dev.tailor.common.Numbers;

/**
 * Every constant of HEART's planning, with the defaults of docs/design.md#heart. Immutable; build one with
 * {@link #builder()} and variants with {@link #toBuilder()}. The constructor checks every field and names it on error.
 *
 * @param alphaMin                    lower clamp of the adaptive EWMA weight α (default 0.2; the
 *                                    paper chose the range by simulation)
 * @param alphaMax                    upper clamp of α (default 0.8). {@code alphaMin = alphaMax = 1}
 *                                    turns the trend off: every round uses only the latest
 *                                    measurement
 * @param trackingSmoothing           β of the Trigg–Leach tracking signal: the weight of the newest
 *                                    forecast error in the smoothed error and the smoothed |error|
 *                                    (default 0.2, the value Trigg and Leach used; our reading)
 * @param slowLinkFilter              whether NTAM prunes slow links before the flow (default off: under
 *                                    queue-aware routing it runs only on a callee planned the paper's
 *                                    way, and it changed no measured P99, docs/heart.md; on in the paper,
 *                                    {@link #PAPER})
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
 * @param spreadScale                 NTAM's entropic transport: the temperature ε of an edge is this
 *                                    many times the callee's expected sojourn time (its CPU per
 *                                    request ÷ (1 − its planned utilisation), share-weighted), and the
 *                                    flow minimises Σ flow × round-trip delay + ε Σ flow log flow
 *                                    over the links the slow-link filter keeps; the filter counts a
 *                                    cluster as slow only when it is more than ε slower on the round
 *                                    trip (default √6 ÷ π ≈ 0.78, the Gumbel scale of an exponential
 *                                    sojourn's spread; 0 = min-cost flow, the paper; our departure)
 * @param latencyOptimalShares        ATPM splits a component's demand by the square-root rule of
 *                                    latency-optimal routing to M/M/1 servers instead of in proportion
 *                                    to capacity, so slow groups get less than their capacity share at
 *                                    low load (default off, as in the paper: with queue-aware routing
 *                                    on it changed no measured P99, docs/heart.md; kept as an option)
 * @param queueAwareRouting           with entropic transport on, NTAM plans all calls into a callee at
 *                                    once and lets each group's M/M/1 queueing cost, instead of a fixed
 *                                    ATPM share, decide how much it takes: a group takes more where its
 *                                    callers are near and less where they are far, as far as the wait
 *                                    it adds is worth the delay it saves; callees are planned callers
 *                                    first, each caller node's supply being what the plan sends there
 *                                    (default on; off = every edge meets the ATPM shares, as in the
 *                                    paper; our departure)
 * @param loadHeadroom                the queue-aware transport plans each callee for (1 + this) × the
 *                                    calls measured into it, at most {@link #MAX_HEADROOM_UTILISATION}
 *                                    of its capacity and never less than the calls measured, so that
 *                                    no group it plans goes beyond its capacity if the load grows by
 *                                    this fraction before the next round (default 0.5; 0 = plan for the
 *                                    measured load only; without queue-aware routing it has no effect;
 *                                    our departure, measured in docs/heart.md)
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
        double minShareOfEqualSplit,
        double spreadScale,
        boolean latencyOptimalShares,
        boolean queueAwareRouting,
        double loadHeadroom) {

    /** What a routing target is. */
    public enum Grouping {
        /** All replicas of a component on one node form one group (HEART, docs/design.md#atpm). */
        NODE,
        /** Every replica is its own group: the "min-cost flow per replica" baseline. */
        REPLICA
    }

    /** Fewest flow units: fewer would leave caller nodes with no unit of flow at all. */
    public static final int MIN_FLOW_UNITS = 1_000;
    /** Most flow units: JGraphT's capacities are ints and its "infinite" capacity is 1e9. */
    public static final int MAX_FLOW_UNITS = 1 << 29;

    /**
     * √6 ÷ π: a Gumbel distribution of scale β has standard deviation πβ ÷ √6, so this is the scale
     * of the Gumbel noise whose spread equals a sojourn time's standard deviation when that equals
     * its mean (M/M/1). See {@link #spreadScale()}.
     */
    public static final double SPREAD_SCALE_GUMBEL = Math.sqrt(6) / Math.PI;

    /** Largest {@link #spreadScale()}: beyond it every plan is an even spread anyway. */
    public static final double MAX_SPREAD_SCALE = 100;

    /** Largest {@link #loadHeadroom()}: ten times the measured load is past any plan worth making. */
    public static final double MAX_LOAD_HEADROOM = 10;

    /**
     * The largest fraction of a callee's capacity {@link #loadHeadroom()} plans for: the queueing cost
     * of a plan at capacity is infinite, so a headroom that would reach it stops here.
     */
    public static final double MAX_HEADROOM_UTILISATION = 0.95;

    /** Most rounds the idle fit may keep per group: the state stays small. */
    public static final int MAX_IDLE_FIT_ROUNDS = 100;

    /**
     * The defaults: the design's constants plus our departures from the paper (outlier filter, idle
     * CPU fit, share floor, spread, queue-aware routing, load headroom; the slow-link filter off;
     * docs/design.md#atpm-departures and #routing-departures). Each departure's reasons and ablation are
     * in docs/heart.md.
     */
    public static final HeartConfig DEFAULTS = builder().build();

    /**
     * The paper's HEART: every departure off (no outlier filter, Σ cpu ÷ Σ requests with idle CPU
     * charged to requests, no share floor, min-cost flow on the ATPM shares, the slow-link filter on),
     * everything else as {@link #DEFAULTS}. Reproduces the
     * paper's behaviour and figures; the simulator's {@code heart-paper} policy.
     */
    public static final HeartConfig PAPER = DEFAULTS.paperVariant();

    public HeartConfig {
        requireUnit("alphaMin", alphaMin, false);
        requireUnit("alphaMax", alphaMax, false);
        if (alphaMin > alphaMax) {
            throw new IllegalArgumentException("alphaMin : " + Numbers.written(alphaMin) + " (expected: <= alphaMax, "
                    + Numbers.written(alphaMax) + ")");
        }
        requireUnit("trackingSmoothing", trackingSmoothing, false);
        requireUnit("batchRemovalMaxFraction", batchRemovalMaxFraction, true);
        requireMillis("slowClusterMinGapMillis", slowClusterMinGapMillis);
        requireMillis("unmeasuredLinkPenaltyMillis", unmeasuredLinkPenaltyMillis);
        if (flowUnits < MIN_FLOW_UNITS || flowUnits > MAX_FLOW_UNITS) {
            throw new IllegalArgumentException(
                    "flowUnits : " + flowUnits + " (expected: " + MIN_FLOW_UNITS + " .. " + MAX_FLOW_UNITS + ")");
        }
        if (grouping == null) {
            throw new IllegalArgumentException("grouping : null (expected: NODE or REPLICA)");
        }
        if (idleFitRounds < 0 || idleFitRounds > MAX_IDLE_FIT_ROUNDS) {
            throw new IllegalArgumentException(
                    "idleFitRounds : " + idleFitRounds + " (expected: 0 (off) .. " + MAX_IDLE_FIT_ROUNDS + ")");
        }
        if (!(idleFitMinRateRatio > 1 && idleFitMinRateRatio <= 1e6)) {
            throw new IllegalArgumentException("idleFitMinRateRatio : " + Numbers.written(idleFitMinRateRatio)
                    + " (expected: a ratio in (1, 1000000])");
        }
        if (!(idleMaxCpuFraction >= 0 && idleMaxCpuFraction < 1)) {
            throw new IllegalArgumentException("idleMaxCpuFraction : " + Numbers.written(idleMaxCpuFraction)
                    + " (expected: a fraction in [0, 1))");
        }
        if (!(minShareOfEqualSplit >= 0 && minShareOfEqualSplit < 1)) {
            throw new IllegalArgumentException("minShareOfEqualSplit : " + Numbers.written(minShareOfEqualSplit)
                    + " (expected: a fraction in [0, 1), 0 = off)");
        }
        if (!(spreadScale >= 0 && spreadScale <= MAX_SPREAD_SCALE)) {
            throw new IllegalArgumentException("spreadScale : " + Numbers.written(spreadScale) + " (expected: "
                    + Numbers.interval(false, 0, MAX_SPREAD_SCALE) + ", 0 = off, min-cost flow)");
        }
        if (!(loadHeadroom >= 0 && loadHeadroom <= MAX_LOAD_HEADROOM)) {
            throw new IllegalArgumentException("loadHeadroom : " + Numbers.written(loadHeadroom)
                    + " (expected: a fraction of the measured load in [0, " + Numbers.written(MAX_LOAD_HEADROOM)
                    + "], 0 = off)");
        }
    }

    /** The configuration of the paper's version of {@code this}: our departures off, see {@link #PAPER}. */
    public HeartConfig paperVariant() {
        return toBuilder()
                .slowLinkFilter(true)
                .outlierFilter(false)
                .idleFitRounds(0)
                .minShareOfEqualSplit(0)
                .spreadScale(0)
                .latencyOptimalShares(false)
                .queueAwareRouting(false)
                .loadHeadroom(0)
                .build();
    }

    /** A builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds a {@link HeartConfig}: named setters over the defaults (the one place they are set), checked
     * together in {@link #build}, so that alphaMin and alphaMax can be set in any order.
     */
    public static final class Builder {
        private double alphaMin = 0.2;
        private double alphaMax = 0.8;
        private double trackingSmoothing = 0.2;
        private boolean slowLinkFilter = false;
        private double batchRemovalMaxFraction = 0.30;
        private double slowClusterMinGapMillis = 0;
        private double unmeasuredLinkPenaltyMillis = 1.0;
        private int flowUnits = 1_000_000;
        private Grouping grouping = Grouping.NODE;
        private boolean parallel = true;
        private boolean outlierFilter = true;
        private int idleFitRounds = 10;
        private double idleFitMinRateRatio = 2.0;
        private double idleMaxCpuFraction = 0.9;
        private double minShareOfEqualSplit = 0.05;
        private double spreadScale = SPREAD_SCALE_GUMBEL;
        private boolean latencyOptimalShares = false;
        private boolean queueAwareRouting = true;
        private double loadHeadroom = 0.5;

        private Builder() {}

        private Builder(HeartConfig from) {
            alphaMin = from.alphaMin;
            alphaMax = from.alphaMax;
            trackingSmoothing = from.trackingSmoothing;
            slowLinkFilter = from.slowLinkFilter;
            batchRemovalMaxFraction = from.batchRemovalMaxFraction;
            slowClusterMinGapMillis = from.slowClusterMinGapMillis;
            unmeasuredLinkPenaltyMillis = from.unmeasuredLinkPenaltyMillis;
            flowUnits = from.flowUnits;
            grouping = from.grouping;
            parallel = from.parallel;
            outlierFilter = from.outlierFilter;
            idleFitRounds = from.idleFitRounds;
            idleFitMinRateRatio = from.idleFitMinRateRatio;
            idleMaxCpuFraction = from.idleMaxCpuFraction;
            minShareOfEqualSplit = from.minShareOfEqualSplit;
            spreadScale = from.spreadScale;
            latencyOptimalShares = from.latencyOptimalShares;
            queueAwareRouting = from.queueAwareRouting;
            loadHeadroom = from.loadHeadroom;
        }

        /** {@link HeartConfig#alphaMin}. */
        public Builder alphaMin(double value) {
            alphaMin = value;
            return this;
        }

        /** {@link HeartConfig#alphaMax}. */
        public Builder alphaMax(double value) {
            alphaMax = value;
            return this;
        }

        /** {@link HeartConfig#trackingSmoothing}. */
        public Builder trackingSmoothing(double value) {
            trackingSmoothing = value;
            return this;
        }

        /** {@link HeartConfig#slowLinkFilter}. */
        public Builder slowLinkFilter(boolean value) {
            slowLinkFilter = value;
            return this;
        }

        /** {@link HeartConfig#batchRemovalMaxFraction}. */
        public Builder batchRemovalMaxFraction(double value) {
            batchRemovalMaxFraction = value;
            return this;
        }

        /** {@link HeartConfig#slowClusterMinGapMillis}. */
        public Builder slowClusterMinGapMillis(double value) {
            slowClusterMinGapMillis = value;
            return this;
        }

        /** {@link HeartConfig#unmeasuredLinkPenaltyMillis}. */
        public Builder unmeasuredLinkPenaltyMillis(double value) {
            unmeasuredLinkPenaltyMillis = value;
            return this;
        }

        /** {@link HeartConfig#flowUnits}. */
        public Builder flowUnits(int value) {
            flowUnits = value;
            return this;
        }

        /** {@link HeartConfig#grouping}. */
        public Builder grouping(Grouping value) {
            grouping = value;
            return this;
        }

        /** {@link HeartConfig#parallel}. */
        public Builder parallel(boolean value) {
            parallel = value;
            return this;
        }

        /** {@link HeartConfig#outlierFilter}. */
        public Builder outlierFilter(boolean value) {
            outlierFilter = value;
            return this;
        }

        /** {@link HeartConfig#idleFitRounds}. */
        public Builder idleFitRounds(int value) {
            idleFitRounds = value;
            return this;
        }

        /** {@link HeartConfig#idleFitMinRateRatio}. */
        public Builder idleFitMinRateRatio(double value) {
            idleFitMinRateRatio = value;
            return this;
        }

        /** {@link HeartConfig#idleMaxCpuFraction}. */
        public Builder idleMaxCpuFraction(double value) {
            idleMaxCpuFraction = value;
            return this;
        }

        /** {@link HeartConfig#minShareOfEqualSplit}. */
        public Builder minShareOfEqualSplit(double value) {
            minShareOfEqualSplit = value;
            return this;
        }

        /** {@link HeartConfig#spreadScale}. */
        public Builder spreadScale(double value) {
            spreadScale = value;
            return this;
        }

        /** {@link HeartConfig#latencyOptimalShares}. */
        public Builder latencyOptimalShares(boolean value) {
            latencyOptimalShares = value;
            return this;
        }

        /** {@link HeartConfig#queueAwareRouting}. */
        public Builder queueAwareRouting(boolean value) {
            queueAwareRouting = value;
            return this;
        }

        /** {@link HeartConfig#loadHeadroom}. */
        public Builder loadHeadroom(double value) {
            loadHeadroom = value;
            return this;
        }

        /**
         * The configuration, checked as the constructor checks it.
         *
         * @throws IllegalArgumentException naming the field, its value and the expected range when a value is NaN,
         *                                  infinite, null or out of range
         */
        public HeartConfig build() {
            return new HeartConfig(
                    alphaMin,
                    alphaMax,
                    trackingSmoothing,
                    slowLinkFilter,
                    batchRemovalMaxFraction,
                    slowClusterMinGapMillis,
                    unmeasuredLinkPenaltyMillis,
                    flowUnits,
                    grouping,
                    parallel,
                    outlierFilter,
                    idleFitRounds,
                    idleFitMinRateRatio,
                    idleMaxCpuFraction,
                    minShareOfEqualSplit,
                    spreadScale,
                    latencyOptimalShares,
                    queueAwareRouting,
                    loadHeadroom);
        }
    }

    private static void requireUnit(String name, double value, boolean zeroAllowed) {
        boolean ok = value <= 1 && (zeroAllowed ? value >= 0 : value > 0);
        if (!ok) {
            throw new IllegalArgumentException(name + " : " + Numbers.written(value) + " (expected: "
                    + Numbers.interval(!zeroAllowed, 0, 1) + ")");
        }
    }

    private static void requireMillis(String name, double value) {
        if (!(value >= 0 && value <= SnapshotValidator.MAX_DELAY_MILLIS)) {
            throw new IllegalArgumentException(name + " : " + Numbers.written(value) + " (expected: ms in [0, 3.6e6])");
        }
    }
}
