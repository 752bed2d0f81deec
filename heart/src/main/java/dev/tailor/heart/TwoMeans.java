package dev.tailor.heart;

/**
 * Exact 2-means clustering of one-dimensional values: the split of the sorted values into a low
 * and a high cluster that minimises the total within-cluster sum of squared deviations.
 */
/*
 * Maintainer note. In one dimension the optimal clusters are contiguous in sorted order [1], so
 * trying every split point of the sorted values is exact; prefix sums of v and v² make each try
 * O(1) (SSE of a range = Σv² − (Σv)²/n), O(n) in all after the caller's sort. The values are
 * centred on their mean first: SSE does not change, and the subtraction then cancels far less (raw
 * values around 1e5 chose splits up to 33x worse than optimal). A split is only allowed between two
 * different values, so equal delays never land in different clusters; when all values are equal
 * there is no high cluster. Ties between equally good splits take the lowest one (the larger high
 * cluster), which the caller then treats cautiously (one-by-one removal). Costs within 1e-12 of the
 * total SSE count as tied: rounding alone separates exact ties by an ulp or so (delays 0, 1, 1, 2,
 * 3, 4, 5, 5, 6 tie at 4 and 5, yet computed apart).
 *
 * [1] H. Wang, M. Song, "Ckmeans.1d.dp: Optimal k-means clustering in one dimension by dynamic
 *     programming", The R Journal 3(2), 2011.
 */
final class TwoMeans {

    private TwoMeans() {}

    /**
     * Index of the first value of the high cluster in {@code sorted}, or -1 when there is no split
     * (fewer than two distinct values).
     *
     * @param sorted values in ascending order, all finite
     */
    static int split(double[] sorted) {
        int n = sorted.length;
        if (n < 2 || sorted[0] == sorted[n - 1]) {
            return -1;
        }
        double mean = 0;
        for (double v : sorted) {
            mean += v;
        }
        mean /= n;
        // Prefix sums of the centred values, kept running rather than stored: the same additions in
        // the same order as arrays of them, so the same doubles (a 10,000-link edge saved 160 KB).
        double sumAll = 0;
        double squaresAll = 0;
        for (double x : sorted) {
            double v = x - mean;
            sumAll = sumAll + v;
            squaresAll = squaresAll + v * v;
        }
        double tie = 1e-12 * squaresAll;
        int best = -1;
        double bestCost = Double.POSITIVE_INFINITY;
        double sum = 0;
        double squares = 0;
        for (int k = 1; k < n; k++) {
            double v = sorted[k - 1] - mean;
            sum = sum + v;
            squares = squares + v * v;
            if (sorted[k - 1] == sorted[k]) {
                continue;
            }
            double cost = sse(0, 0, sum, squares, k) + sse(sum, squares, sumAll, squaresAll, n - k);
            if (cost < bestCost - tie) {
                bestCost = cost;
                best = k;
            }
        }
        return best;
    }

    /**
     * SSE of a range from the prefix sums at its ends: Σv² − (Σv)² / count, at least 0.
     */
    private static double sse(double sumFrom, double squaresFrom, double sumTo, double squaresTo, int count) {
        double s = sumTo - sumFrom;
        double cost = squaresTo - squaresFrom - s * s / count;
        return Math.max(0, cost);
    }
}
