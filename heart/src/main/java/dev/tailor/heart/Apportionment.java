package dev.tailor.heart;

import dev.tailor.common.Numbers;

/**
 * Integer apportionment by the largest-remainder (Hamilton) method: used to turn fractions into
 * integer flow units for NTAM and into Istio's integer weights that must sum to exactly 100.
 */
public final class Apportionment {

    private Apportionment() {}

    /**
     * Integers proportional to {@code weights} that sum to exactly {@code total}: each weight gets
     * the floor of its exact quota, and the remaining units go to the largest remainders (ties to
     * the lower index). Zero weights get zero.
     *
     * @param weights non-negative finite weights with a positive sum
     * @param total   units to distribute, &gt;= 0
     * @throws IllegalArgumentException naming the weight that is negative or not finite, or when
     *                                  all weights are zero
     */
    public static int[] largestRemainder(double[] weights, int total) {
        return apportion(weights, total, false);
    }

    /**
     * Like {@link #largestRemainder} but every positive weight gets at least one unit (when
     * {@code total} allows), so no positive share disappears by rounding.
     */
    public static int[] largestRemainderAtLeastOne(double[] weights, int total) {
        return apportion(weights, total, true);
    }

    private static int[] apportion(double[] weights, int total, boolean atLeastOne) {
        if (total < 0) {
            throw new IllegalArgumentException("total : " + total + " (expected: >= 0)");
        }
        double max = 0;
        int positive = 0;
        for (int i = 0; i < weights.length; i++) {
            double w = weights[i];
            if (!Double.isFinite(w) || w < 0) {
                throw new IllegalArgumentException(
                        "weights[" + i + "] : " + Numbers.written(w) + " (expected: a finite number >= 0)");
            }
            max = Math.max(max, w);
            if (w > 0) {
                positive++;
            }
        }
        if (!(max > 0)) {
            throw new IllegalArgumentException("weights : all zero (expected: a positive sum)");
        }
        // Scale by the largest weight first: the sum of finite weights can overflow to Infinity.
        double sum = 0;
        for (double w : weights) {
            sum += w / max;
        }
        int[] units = new int[weights.length];
        int reserved = 0;
        if (atLeastOne && positive <= total) {
            for (int i = 0; i < weights.length; i++) {
                if (weights[i] > 0) {
                    units[i] = 1;
                }
            }
            reserved = positive;
        }
        int rest = total - reserved;
        double[] remainder = new double[weights.length];
        int given = 0;
        for (int i = 0; i < weights.length; i++) {
            double quota = weights[i] / max / sum * rest;
            int floor = (int) Math.floor(quota);
            units[i] += floor;
            given += floor;
            remainder[i] = weights[i] > 0 ? quota - floor : -1;
        }
        int left = rest - given;
        if (left > 0) {
            // The largest remainders get one more unit each; ties go to the lower index.
            Integer[] order = new Integer[weights.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            java.util.Arrays.sort(
                    order,
                    (a, b) -> remainder[a] != remainder[b]
                            ? Double.compare(remainder[b], remainder[a])
                            : Integer.compare(a, b));
            for (int k = 0; k < left; k++) {
                units[order[k]]++;
            }
        }
        return units;
    }
}
