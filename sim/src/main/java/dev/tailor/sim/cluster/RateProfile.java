package dev.tailor.sim.cluster;

import java.util.List;

/**
 * A scenario's {@code rpsProfile}: the factor on the run's rate at each instant, piecewise linear
 * between the points, constant before the first and after the last; two points at one instant make a
 * step (the later one holds from that instant on).
 *
 * <p>Queried with non-decreasing times during a run, so it keeps a cursor; O(1) amortised per query.
 */
final class RateProfile {

    private final long[] atNanos;
    private final double[] factors;
    private final double maxFactor;
    private int cursor;

    /** @param points a valid profile (see {@link ClusterScenario#problems()}): times non-decreasing */
    RateProfile(List<ClusterScenario.RatePoint> points) {
        atNanos = new long[points.size()];
        factors = new double[points.size()];
        double max = 0;
        for (int i = 0; i < points.size(); i++) {
            atNanos[i] = ClusterModel.seconds(points.get(i).atSeconds());
            factors[i] = points.get(i).factor();
            max = Math.max(max, factors[i]);
        }
        maxFactor = max;
    }

    /** The highest factor of the profile. */
    double maxFactor() {
        return maxFactor;
    }

    /** The factor at {@code tNanos}; calls must come with non-decreasing times. */
    double factorAt(long tNanos) {
        while (cursor + 1 < atNanos.length && atNanos[cursor + 1] <= tNanos) {
            cursor++;
        }
        if (tNanos < atNanos[0]) {
            return factors[0];
        }
        if (cursor + 1 == atNanos.length) {
            return factors[cursor];
        }
        double fraction = (double) (tNanos - atNanos[cursor]) / (atNanos[cursor + 1] - atNanos[cursor]);
        return factors[cursor] + fraction * (factors[cursor + 1] - factors[cursor]);
    }
}
