package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * {@link FlowNetwork} and {@link TransportNetwork} on NTAM-shaped problems: uncapacitated links with
 * delays in milliseconds as double costs. The DIMACS tests cover integer costs; these cover the
 * rounding of double costs.
 */
class FlowNetworkTest {

    /** Delays that look harmless but do not add up exactly in binary: 0.1 + 0.2 != 0.3. */
    private static final double[] EVERYDAY_DELAYS = {0.1, 0.2, 0.3, 0.7, 1.1, 2.3, 0.1 + 0.2};

    @Test
    void minCostFlow_oneSourceThreeSinksWithEverydayDelays_sendsExactlyEachDemand() {
        // Regression: JGraphT saturated an unbounded link whose reduced cost rounded to -1e-17 and
        // reported 1e9 units on it, so NTAM's fractions summed to ~1000. With one source there is no
        // choice at all: each link must carry its sink's demand.
        int[] demand = {207_671, 330_496, 461_833};
        TransportNetwork network = new TransportNetwork(new int[] {1_000_000}, demand, new int[] {0, 0, 0},
                new int[] {0, 1, 2}, new double[] {0.3, 2.3, 0.2});
        double[] flow = new double[3];
        double cost = network.minCostFlow(flow);
        assertThat(flow).containsExactly(207_671, 330_496, 461_833);
        assertThat(cost).isCloseTo(207_671 * 0.3 + 330_496 * 2.3 + 461_833 * 0.2, within(1e-6));
    }

    @Test
    void minCostFlow_randomTransportWithEverydayDelays_conservesSupplyAndMatchesTheExactIntegerOptimum() {
        // The flow must meet every supply and demand exactly, and cost what the same problem costs with
        // integer costs (delays in units of 0.1 ms), where no rounding can mislead the solver.
        qt().withExamples(300).forAll(transports()).checkAssert(t -> {
            TransportNetwork network = new TransportNetwork(t.supply, t.demand, t.linkSource, t.linkSink, t.cost);
            double[] flow = new double[t.cost.length];
            double cost = network.minCostFlow(flow);

            long[] out = new long[t.supply.length];
            long[] in = new long[t.demand.length];
            for (int l = 0; l < flow.length; l++) {
                assertThat(flow[l]).as("flow on link %d", l).isBetween(0.0, (double) t.total());
                out[t.linkSource[l]] += (long) flow[l];
                in[t.linkSink[l]] += (long) flow[l];
            }
            assertThat(out).containsExactly(Arrays.stream(t.supply).asLongStream().toArray());
            assertThat(in).containsExactly(Arrays.stream(t.demand).asLongStream().toArray());

            double[] tenths = Arrays.stream(t.cost).map(c -> Math.rint(c * 10)).toArray();
            double exact = new TransportNetwork(t.supply, t.demand, t.linkSource, t.linkSink, tenths)
                    .minCostFlow(new double[t.cost.length]) / 10;
            assertThat(cost).isCloseTo(exact, within(1e-9 * Math.max(1, exact)));
        });
    }

    /** A complete bipartite transport problem: 1–4 sources, 1–4 sinks, 1e6 units, everyday delays. */
    private record Transport(int[] supply, int[] demand, int[] linkSource, int[] linkSink, double[] cost) {

        long total() {
            return Arrays.stream(supply).asLongStream().sum();
        }

        @Override
        public String toString() {
            return "supply " + Arrays.toString(supply) + " demand " + Arrays.toString(demand) + " costs "
                    + Arrays.toString(cost);
        }
    }

    private static Gen<Transport> transports() {
        return in -> {
            int s = integers().between(1, 4).generate(in);
            int g = integers().between(1, 4).generate(in);
            int[] supply = units(in, s);
            int[] demand = units(in, g);
            int[] linkSource = new int[s * g];
            int[] linkSink = new int[s * g];
            double[] cost = new double[s * g];
            for (int a = 0, l = 0; a < s; a++) {
                for (int b = 0; b < g; b++, l++) {
                    linkSource[l] = a;
                    linkSink[l] = b;
                    cost[l] = EVERYDAY_DELAYS[integers().between(0, EVERYDAY_DELAYS.length - 1).generate(in)];
                }
            }
            return new Transport(supply, demand, linkSource, linkSink, cost);
        };
    }

    /** 1,000,000 units split over {@code n} parts, as NTAM quantises a call edge's rate. */
    private static int[] units(org.quicktheories.core.RandomnessSource in, int n) {
        double[] weights = new double[n];
        for (int i = 0; i < n; i++) {
            weights[i] = integers().between(1, 1000).generate(in);
        }
        return Apportionment.largestRemainderAtLeastOne(weights, 1_000_000);
    }
}
