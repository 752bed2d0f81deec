package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * {@link TwoMeans#split} against brute force: every split point tried, each cluster's sum of squared
 * deviations computed directly from its mean. The slow-link filter prunes what this split calls
 * slow, so a wrong split prunes fast links or keeps slow ones.
 */
class TwoMeansTest {

    @Test
    void split_randomDelays_isAMinimumSseSplitBetweenTwoDistinctValues() {
        // The optimum of 1-D 2-means is a contiguous split of the sorted values; the fast prefix-sum
        // version must find the same optimum as trying every split the slow way.
        qt().withExamples(2000).forAll(sortedValues()).checkAssert(sorted -> {
            int split = TwoMeans.split(sorted);
            double[] cost = bruteForceCosts(sorted);
            if (Arrays.stream(sorted).distinct().count() < 2) {
                assertThat(split).as("no split without two distinct values").isEqualTo(-1);
                return;
            }
            assertThat(split).isBetween(1, sorted.length - 1);
            assertThat(sorted[split - 1]).as("equal values stay in one cluster").isLessThan(sorted[split]);
            double best = Arrays.stream(cost).min().orElseThrow();
            double tolerance = 1e-9 * (sse(sorted) + Double.MIN_NORMAL);
            assertThat(cost[split])
                    .as("SSE of the chosen split vs the brute-force minimum")
                    .isLessThanOrEqualTo(best + tolerance);
            // Where the optimum is clear (no other split within rounding of it), it is the same index.
            long nearOptimal =
                    Arrays.stream(cost).filter(c -> c <= best + tolerance).count();
            if (nearOptimal == 1) {
                int bruteForce = 0;
                while (cost[bruteForce] > best + tolerance) {
                    bruteForce++;
                }
                assertThat(split).isEqualTo(bruteForce);
            }
        });
    }

    @Test
    void split_smallIntegersWithExactTies_takesTheLowestOfTheEquallyGoodSplits() {
        // TwoMeans promises ties go to the lowest split (the larger slow cluster, which the filter
        // then removes cautiously, one link at a time). With small integers the SSEs are compared
        // exactly: SSE·k·(n-k) = k(n-k)Σv² - (n-k)·L² - k·R² is an integer.
        qt().withExamples(2000).forAll(smallIntegers()).checkAssert(sorted -> {
            int n = sorted.length;
            int expected = -1;
            long bestNumerator = 0;
            long bestDenominator = 1;
            for (int k = 1; k < n; k++) {
                if (sorted[k - 1] == sorted[k]) {
                    continue;
                }
                long left = 0;
                long right = 0;
                long squares = 0;
                for (int i = 0; i < n; i++) {
                    long v = (long) sorted[i];
                    squares += v * v;
                    if (i < k) {
                        left += v;
                    } else {
                        right += v;
                    }
                }
                long denominator = (long) k * (n - k);
                long numerator = denominator * squares - (n - k) * left * left - k * right * right;
                // numerator / denominator < best, cross-multiplied (all positive denominators)
                if (expected < 0 || numerator * bestDenominator < bestNumerator * denominator) {
                    expected = k;
                    bestNumerator = numerator;
                    bestDenominator = denominator;
                }
            }
            assertThat(TwoMeans.split(sorted)).isEqualTo(expected);
        });
    }

    @Test
    void split_exactTieThatRoundingSeparates_takesTheLowestSplit() {
        // Regression: SSE 7.2 at both k = 4 and k = 5, but the prefix-sum formula computed them an ulp
        // apart and chose 5, against the documented tie rule (and so a smaller slow cluster).
        assertThat(TwoMeans.split(new double[] {0, 1, 1, 2, 3, 4, 5, 5, 6})).isEqualTo(4);
    }

    @Test
    void split_valuesFarFromZero_stillFindsTheMinimumSseSplit() {
        // Regression: on raw values around 1e5, Σv² − (Σv)²/n cancelled to noise and chose k = 3
        // (SSE 6.7e-7) over k = 2 (SSE 5e-7); centring first keeps the optimum.
        double[] sorted = {100_000.000, 100_000.000, 100_000.001, 100_000.002};
        assertThat(TwoMeans.split(sorted)).isEqualTo(2);
    }

    /** SSE of the split at each k (infinite where a split is not allowed: k = 0, k = n, equal neighbours). */
    private static double[] bruteForceCosts(double[] sorted) {
        int n = sorted.length;
        double[] cost = new double[Math.max(n, 1)];
        Arrays.fill(cost, Double.POSITIVE_INFINITY);
        for (int k = 1; k < n; k++) {
            if (sorted[k - 1] != sorted[k]) {
                cost[k] = sse(Arrays.copyOfRange(sorted, 0, k)) + sse(Arrays.copyOfRange(sorted, k, n));
            }
        }
        return cost;
    }

    /** Two-pass: the mean, then the squared deviations from it. */
    private static double sse(double[] values) {
        double mean = Arrays.stream(values).sum() / values.length;
        return Arrays.stream(values).map(v -> (v - mean) * (v - mean)).sum();
    }

    /**
     * Sorted arrays of 0–14 values, of four kinds: a few small integers (many equal values and exact
     * ties), spread-out delays in [0, 150) ms, and near-equal values around 1,000 and 100,000 that
     * stress cancellation in Σv² − (Σv)²/n.
     */
    private static Gen<double[]> sortedValues() {
        Gen<double[]> gen = in -> {
            int n = integers().between(0, 14).generate(in);
            int kind = integers().between(0, 3).generate(in);
            double[] v = new double[n];
            for (int i = 0; i < n; i++) {
                v[i] = switch (kind) {
                    case 0 -> integers().between(0, 4).generate(in);
                    case 1 -> doubles().between(0, 150).generate(in);
                    case 2 -> 1000 + integers().between(0, 20).generate(in) * 0.001;
                    default -> 100_000 + integers().between(0, 20).generate(in) * 0.001;
                };
            }
            Arrays.sort(v);
            return v;
        };
        return gen.describedAs(Arrays::toString);
    }

    private static Gen<double[]> smallIntegers() {
        Gen<double[]> gen = in -> {
            int n = integers().between(0, 14).generate(in);
            double[] v = new double[n];
            for (int i = 0; i < n; i++) {
                v[i] = integers().between(0, 6).generate(in);
            }
            Arrays.sort(v);
            return v;
        };
        return gen.describedAs(Arrays::toString);
    }
}
