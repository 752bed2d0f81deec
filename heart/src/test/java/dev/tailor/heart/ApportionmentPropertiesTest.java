package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * {@link Apportionment} against exact arithmetic: quotas computed in {@link BigDecimal} from the
 * doubles as given, so the test does not share the implementation's rounding.
 */
class ApportionmentPropertiesTest {

    private static final MathContext PRECISION = new MathContext(60);

    @Test
    void largestRemainder_randomWeights_sumsToTotalAndEachPartIsFloorOrCeilOfItsQuota() {
        // Istio rejects weights that do not sum to exactly 100, and NTAM's supplies must equal its
        // demands unit for unit; a part beyond floor/ceil of its quota would distort the shares.
        qt().withExamples(3000).forAll(weights(), totals()).checkAssert((weights, total) -> {
            int[] parts = Apportionment.largestRemainder(weights, total);
            assertThat(Arrays.stream(parts).asLongStream().sum()).isEqualTo((long) total);
            BigDecimal[] quota = quotas(weights, total);
            for (int i = 0; i < weights.length; i++) {
                BigDecimal floor = quota[i].setScale(0, RoundingMode.FLOOR);
                BigDecimal ceil = quota[i].setScale(0, RoundingMode.CEILING);
                assertThat(BigDecimal.valueOf(parts[i]))
                        .as("part %d of quota %s", i, quota[i])
                        .isBetween(floor, ceil);
                if (weights[i] == 0) {
                    assertThat(parts[i]).as("a zero weight gets nothing").isZero();
                }
            }
        });
    }

    @Test
    void largestRemainder_randomWeights_leftoverUnitsGoToTheLargestRemainders() {
        // Hamilton's rule itself: no part rounded down may have a clearly larger remainder than a part
        // rounded up (clearly: beyond 1e-9, so rounding of doubles cannot decide it).
        qt().withExamples(3000).forAll(weights(), totals()).checkAssert((weights, total) -> {
            int[] parts = Apportionment.largestRemainder(weights, total);
            BigDecimal[] quota = quotas(weights, total);
            double smallestRoundedUp = Double.POSITIVE_INFINITY;
            double largestRoundedDown = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < weights.length; i++) {
                BigDecimal floor = quota[i].setScale(0, RoundingMode.FLOOR);
                double remainder = quota[i].subtract(floor).doubleValue();
                if (remainder == 0 || weights[i] == 0) {
                    continue;
                }
                if (parts[i] > floor.intValueExact()) {
                    smallestRoundedUp = Math.min(smallestRoundedUp, remainder);
                } else {
                    largestRoundedDown = Math.max(largestRoundedDown, remainder);
                }
            }
            assertThat(largestRoundedDown).isLessThanOrEqualTo(smallestRoundedUp + 1e-9);
        });
    }

    @Test
    void largestRemainderAtLeastOne_randomWeights_sumsToTotalAndNoPositiveWeightGetsZero() {
        // NTAM quantises supplies and demands with this: a caller node or callee group with a tiny
        // positive share must keep at least one unit, or it silently drops out of the flow problem.
        qt().withExamples(3000).forAll(weights(), totals()).checkAssert((weights, total) -> {
            int[] parts = Apportionment.largestRemainderAtLeastOne(weights, total);
            assertThat(Arrays.stream(parts).asLongStream().sum()).isEqualTo((long) total);
            long positive = Arrays.stream(weights).filter(w -> w > 0).count();
            BigDecimal[] quota = quotas(weights, (int) (positive <= total ? total - positive : total));
            for (int i = 0; i < weights.length; i++) {
                if (weights[i] == 0) {
                    assertThat(parts[i]).isZero();
                    continue;
                }
                int reserved = positive <= total ? 1 : 0;
                assertThat(parts[i]).as("part %d", i).isGreaterThanOrEqualTo(reserved);
                // Beyond the reserved unit, the rest is apportioned like largestRemainder.
                assertThat(BigDecimal.valueOf(parts[i] - reserved))
                        .isBetween(
                                quota[i].setScale(0, RoundingMode.FLOOR), quota[i].setScale(0, RoundingMode.CEILING));
            }
        });
    }

    /** Exact quota w_i · total / Σw, to 60 significant digits. */
    private static BigDecimal[] quotas(double[] weights, int total) {
        BigDecimal sum = BigDecimal.ZERO;
        for (double w : weights) {
            sum = sum.add(new BigDecimal(w));
        }
        BigDecimal[] quota = new BigDecimal[weights.length];
        for (int i = 0; i < weights.length; i++) {
            quota[i] = new BigDecimal(weights[i])
                    .multiply(BigDecimal.valueOf(total))
                    .divide(sum, PRECISION);
        }
        return quota;
    }

    /**
     * 1–12 weights: zeros, small integers (equal weights, exact ties of remainders) and doubles over
     * nine orders of magnitude; at least one positive.
     */
    private static Gen<double[]> weights() {
        Gen<double[]> gen = in -> {
            int n = integers().between(1, 12).generate(in);
            double[] w = new double[n];
            for (int i = 0; i < n; i++) {
                int kind = integers().between(0, 3).generate(in);
                w[i] = switch (kind) {
                    case 0 -> 0;
                    case 1 -> integers().between(1, 5).generate(in);
                    case 2 -> doubles().between(0, 1).generate(in);
                    default -> Math.pow(10, doubles().between(-6, 3).generate(in));
                };
            }
            if (Arrays.stream(w).allMatch(x -> x == 0)) {
                w[n - 1] = 1;
            }
            return w;
        };
        return gen.describedAs(Arrays::toString);
    }

    /** Totals as used: 100 (Istio weights), 10^6 (NTAM units), and small ones with many ties. */
    private static Gen<Integer> totals() {
        return in -> switch (integers().between(0, 3).generate(in)) {
            case 0 -> 100;
            case 1 -> 1_000_000;
            default -> integers().between(0, 20).generate(in);
        };
    }

    @Test
    void badWeight_isEchoedAsWritten() {
        assertThatThrownBy(() -> Apportionment.largestRemainder(new double[] {1, -1e7}, 3))
                .hasMessageContaining("weights[1] : -10000000 (expected: a finite number >= 0)");
    }
}
