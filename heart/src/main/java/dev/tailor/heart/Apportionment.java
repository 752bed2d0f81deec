package dev.tailor.heart;

/**
 * Integer apportionment by the largest-remainder (Hamilton) method: used to turn fractions into
 * integer flow units for NTAM and into Istio's integer weights that must sum to exactly 100.
 */
public final class Apportionment {

    private Apportionment() {
    }

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
        double sum = 0;
        int positive = 0;
        for (int i = 0; i < weights.length; i++) {
            double w = weights[i];
            if (!Double.isFinite(w) || w < 0) {
                throw new IllegalArgumentException("weights[" + i + "] : " + w + " (expected: a finite number >= 0)");
            }
            sum += w;
            if (w > 0) {
                positive++;
            }
        }
        if (!(sum > 0)) {
            throw new IllegalArgumentException("weights : all zero (expected: a positive sum)");
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
            double quota = weights[i] / sum * rest;
            int floor = (int) Math.floor(quota);
            units[i] += floor;
            given += floor;
            remainder[i] = weights[i] > 0 ? quota - floor : -1;
        }
        for (int left = rest - given; left > 0; left--) {
            int best = -1;
            for (int i = 0; i < weights.length; i++) {
                if (remainder[i] >= 0 && (best < 0 || remainder[i] > remainder[best])) {
                    best = i;
                }
            }
            units[best]++;
            remainder[best] = -1;
        }
        return units;
    }
}
