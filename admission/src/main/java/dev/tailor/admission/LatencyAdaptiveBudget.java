package dev.tailor.admission;

/**
 * A proxy's interval budget when several proxies share one backend and none sees the others: it grows
 * while the backend answers this proxy's requests without queueing and shrinks back towards the
 * proxy's fixed share when they queue. The control law is PARDA's window update (Gulati, Ahmad and
 * Waldspurger, "PARDA: Proportional Allocation of Resources for Distributed Storage Access", FAST
 * 2009, section 3, equation 2), applied to the budget in cost units per interval instead of a window
 * of requests in flight:
 * <pre>
 *     B(k+1) = clamp((1 − γ)·B(k) + γ·(𝓛 ÷ L(k) · B(k) + β), floor, ceiling)
 * </pre>
 * where L(k) is the mean slowdown of the requests that completed in interval k (backend latency ÷
 * the request's unqueued service time, dimensionless, ≥ 0), 𝓛 the target slowdown and β the floor
 * (PARDA's per-host share parameter, here the proxy's fixed share). An interval without completions
 * is no data: B holds. With one proxy floor = ceiling and B never moves.
 *
 * <p>Our reading where the paper is silent: the latency is normalised by each request's expected
 * service time (our requests differ in size by three orders of magnitude, PARDA's array latency
 * threshold is in milliseconds for similar requests); the bounds are the proxy's fixed share (so every
 * commitment it makes stays covered) and the whole backend; the update runs at every admission
 * boundary. Not thread-safe: its caller serialises access.
 */
/*
 * Maintainer note. Under sustained congestion (L above 𝓛) the fixed point of the unbounded law is
 * B = β ÷ (1 − 𝓛/L), which is at least β: the clamp at the floor only bites when the slowdown jumps.
 * While L ≤ 𝓛 the budget grows by at least γ·β per interval, so from the floor it reaches the ceiling
 * in at most (ceiling − floor) ÷ (γ·β) intervals. Slowdowns are summed as doubles; a NaN or infinite
 * sample (a zero expected service time) is skipped as no data, never counted as zero.
 */
public final class LatencyAdaptiveBudget {

    /** 𝓛 unless told otherwise: a proxy's requests may take twice their unqueued time (our choice). */
    public static final double DEFAULT_TARGET_SLOWDOWN = 2.0;

    /** γ unless told otherwise (our choice). */
    public static final double DEFAULT_GAMMA = 0.2;

    private final long floorCostUnits;
    private final long ceilingCostUnits;
    private final double targetSlowdown;
    private final double gamma;
    private double budget;
    private double slowdownSum;
    private long samples;

    /**
     * @param floorCostUnits   the proxy's fixed share of the backend per interval (also β), ≥ 1
     * @param ceilingCostUnits the whole backend's per interval, ≥ {@code floorCostUnits}
     * @param targetSlowdown   𝓛: at or below it the budget grows; above it, it settles at
     *                         floor ÷ (1 − 𝓛 ÷ slowdown); &gt; 1
     * @param gamma            γ: the smoothing of the update, in (0, 1]
     * @throws IllegalArgumentException naming the parameter, its value and what was expected
     */
    public LatencyAdaptiveBudget(long floorCostUnits, long ceilingCostUnits, double targetSlowdown, double gamma) {
        if (floorCostUnits < 1) {
            throw new IllegalArgumentException("floorCostUnits: " + floorCostUnits + " (expected: >= 1)");
        }
        if (ceilingCostUnits < floorCostUnits) {
            throw new IllegalArgumentException(
                    "ceilingCostUnits: " + ceilingCostUnits + " (expected: >= floorCostUnits " + floorCostUnits + ")");
        }
        if (!(targetSlowdown > 1) || Double.isInfinite(targetSlowdown)) {
            throw new IllegalArgumentException(
                    "targetSlowdown: " + targetSlowdown + " (expected: a finite number > 1)");
        }
        if (!(gamma > 0 && gamma <= 1)) {
            throw new IllegalArgumentException("gamma: " + gamma + " (expected: a number in (0, 1])");
        }
        this.floorCostUnits = floorCostUnits;
        this.ceilingCostUnits = ceilingCostUnits;
        this.targetSlowdown = targetSlowdown;
        this.gamma = gamma;
        this.budget = floorCostUnits;
    }

    /**
     * Records one completed request.
     *
     * @param latencyNanos  its backend latency (dispatch to completion), ns, ≥ 0
     * @param expectedNanos its unqueued mean service time, ns; not positive or not finite: ignored
     */
    public void onCompletion(long latencyNanos, double expectedNanos) {
        double slowdown = Math.max(0, latencyNanos) / expectedNanos;
        if (expectedNanos > 0 && Double.isFinite(slowdown)) {
            slowdownSum += slowdown;
            samples++;
        }
    }

    /**
     * Ends an interval: updates the budget from the completions recorded since the last call and
     * forgets them.
     *
     * @return the budget for the interval that starts now, cost units, in [floor, ceiling]
     */
    public long onBoundary() {
        if (samples > 0) {
            double slowdown = Math.max(slowdownSum / samples, 1e-9);
            double next = (1 - gamma) * budget + gamma * (targetSlowdown / slowdown * budget + floorCostUnits);
            budget = Math.min(ceilingCostUnits, Math.max(floorCostUnits, next));
            slowdownSum = 0;
            samples = 0;
        }
        return budgetCostUnits();
    }

    /** The current budget, cost units per interval, in [floor, ceiling]. */
    public long budgetCostUnits() {
        return (long) Math.floor(budget);
    }

    /** The fixed share this budget never goes below, cost units per interval. */
    public long floorCostUnits() {
        return floorCostUnits;
    }
}
