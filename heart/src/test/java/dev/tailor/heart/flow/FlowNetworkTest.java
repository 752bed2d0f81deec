package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.tailor.heart.Apportionment;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;

/**
 * {@link FlowNetwork} and {@link TransportNetwork} on NTAM-shaped problems: uncapacitated links with
 * delays in milliseconds as double costs. The DIMACS tests cover integer costs; these cover delays
 * that do not add up exactly in binary, which JGraphT mis-solved (see FlowNetwork's note).
 */
class FlowNetworkTest {

    /** Delays that look harmless but do not add up exactly in binary: 0.1 + 0.2 != 0.3. */
    private static final double[] EVERYDAY_DELAYS = {0.1, 0.2, 0.3, 0.7, 1.1, 2.3, 0.1 + 0.2};

    @Test
    void minCostFlow_oneSourceThreeSinksWithEverydayDelays_sendsExactlyEachDemand() {
        // Regression: JGraphT saturated an unbounded link whose reduced cost rounded to -1e-17 and
        // reported 1e9 units on it, so NTAM's fractions summed to ~1000. With one source there is no
        // choice at all: each link must carry its sink's demand, and the cost is in exact delays.
        int[] demand = {207_671, 330_496, 461_833};
        TransportNetwork network = new TransportNetwork(
                new int[] {1_000_000}, demand, new int[] {0, 0, 0}, new int[] {0, 1, 2}, new double[] {0.3, 2.3, 0.2});
        double[] flow = new double[3];
        double cost = network.minCostFlow(flow).costMillis();
        assertThat(flow).containsExactly(207_671, 330_496, 461_833);
        assertThat(cost).isCloseTo(207_671 * 0.3 + 330_496 * 2.3 + 461_833 * 0.2, within(1e-6));
    }

    @Test
    void minCostFlow_linksPrunedButMaxFlowFeasible_isNotDeclaredInfeasible() {
        // Regression: after the slow-link filter pruned w0->w3 and w1->w2 (max-flow: all demand met),
        // JGraphT called the rest infeasible with delays 0, 0.1 and 0.10000000000000554 ms, and
        // Heart.plan threw on a valid snapshot.
        double slow = 0.10000000000000554;
        TransportNetwork network = new TransportNetwork(
                new int[] {666_666, 333_334},
                new int[] {261_770, 332_164, 136_255, 269_811},
                new int[] {0, 0, 0, 0, 1, 1, 1, 1},
                new int[] {0, 1, 2, 3, 0, 1, 2, 3},
                new double[] {0, 0.1, slow, slow, 0.1, 0, slow, 0.1});
        network.setActive(3, false);
        network.setActive(6, false);
        assertThat(network.maxFlow(new double[8])).isEqualTo(1_000_000);
        double[] flow = new double[8];
        network.minCostFlow(flow);
        assertThat(flow[3]).isZero();
        assertThat(flow[6]).isZero();
        assertThat(flow[0] + flow[1] + flow[2]).isEqualTo(666_666);
        assertThat(flow[2]).isEqualTo(136_255);
        assertThat(flow[7]).isEqualTo(269_811);
    }

    @Test
    void minCostFlow_randomTransportWithEverydayDelaysAndPrunedLinks_meetsEveryDemandOnActiveLinksOnly() {
        // Whenever max-flow says the active links can carry all demand (NTAM's pruning test), the
        // min-cost flow must find such a flow, exactly meeting supplies and demands, and cost what the
        // same problem costs with delays in whole tenths of a millisecond, scaled back.
        qt().withExamples(300).forAll(transports()).checkAssert(t -> {
            TransportNetwork network = t.network(t.cost);
            if (network.maxFlow(new double[t.cost.length]) != t.total()) {
                return; // pruned too much: NTAM would have restored the link
            }
            double[] flow = new double[t.cost.length];
            double cost = network.minCostFlow(flow).costMillis();

            long[] out = new long[t.supply.length];
            long[] in = new long[t.demand.length];
            for (int l = 0; l < flow.length; l++) {
                assertThat(flow[l]).as("flow on link %d", l).isBetween(0.0, t.active[l] ? (double) t.total() : 0.0);
                out[t.linkSource[l]] += (long) flow[l];
                in[t.linkSink[l]] += (long) flow[l];
            }
            assertThat(out)
                    .containsExactly(Arrays.stream(t.supply).asLongStream().toArray());
            assertThat(in)
                    .containsExactly(Arrays.stream(t.demand).asLongStream().toArray());

            double[] tenths = Arrays.stream(t.cost).map(c -> Math.rint(c * 10)).toArray();
            double exact =
                    t.network(tenths).minCostFlow(new double[t.cost.length]).costMillis() / 10;
            assertThat(cost).isCloseTo(exact, within(1e-9 * Math.max(1, exact)));
        });
    }

    @Test
    void sortedByCost_randomCostsWithTies_ordersAsSortingCostThenIndexKeys() {
        // The slow-link filter's order (and so which links it prunes) must not depend on the sort:
        // ascending cost, ties in link order, for costs up to the 100 s cap (three radix passes).
        qt().withExamples(300)
                .forAll(
                        integers().between(0, 3_000),
                        integers().between(0, 2),
                        integers().between(1, 1_000))
                .checkAssert((n, scale, seed) -> {
                    java.util.Random random = new java.util.Random(seed);
                    long bound = new long[] {50, 60_000, (long) TransportNetwork.MAX_COST_MICROS + 1}[scale];
                    long[] micros = new long[n];
                    for (int i = 0; i < n; i++) {
                        micros[i] = random.nextLong(bound);
                    }
                    long[] keys = new long[n];
                    for (int i = 0; i < n; i++) {
                        keys[i] = micros[i] << 32 | i;
                    }
                    Arrays.sort(keys);
                    int[] expected = Arrays.stream(keys).mapToInt(k -> (int) k).toArray();
                    assertThat(TransportNetwork.sortedByCost(micros)).containsExactly(expected);
                });
    }

    @Test
    void addArc_fractionalCost_isRejectedNamingTheReason() {
        // The solver takes integer costs; silently rounding one would change the problem the caller
        // asked for.
        FlowNetwork network = new FlowNetwork(2);
        assertThatThrownBy(() -> network.addArc(0, 1, 0, 1, 0.1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cost : 0.1 (expected: a whole number");
        assertThatThrownBy(() -> network.addArc(0, 1, 0, 1, 1e12))
                .hasMessageContaining("cost : 1000000000000 (expected");
        assertThat(network.addArc(0, 1, 0, 1, -7)).isZero();
    }

    /**
     * A complete bipartite transport problem: 1–4 sources, 1–4 sinks, 1e6 units, everyday delays, and
     * about one link in four switched off as the slow-link filter would.
     */
    private record Transport(
            int[] supply, int[] demand, int[] linkSource, int[] linkSink, double[] cost, boolean[] active) {

        long total() {
            return Arrays.stream(supply).asLongStream().sum();
        }

        TransportNetwork network(double[] costs) {
            TransportNetwork network = new TransportNetwork(supply, demand, linkSource, linkSink, costs);
            for (int l = 0; l < active.length; l++) {
                network.setActive(l, active[l]);
            }
            return network;
        }

        @Override
        public String toString() {
            return "supply " + Arrays.toString(supply) + " demand " + Arrays.toString(demand) + " costs "
                    + Arrays.toString(cost) + " active " + Arrays.toString(active);
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
            boolean[] active = new boolean[s * g];
            for (int a = 0, l = 0; a < s; a++) {
                for (int b = 0; b < g; b++, l++) {
                    linkSource[l] = a;
                    linkSink[l] = b;
                    cost[l] = EVERYDAY_DELAYS[
                            integers().between(0, EVERYDAY_DELAYS.length - 1).generate(in)];
                    active[l] = integers().between(0, 3).generate(in) > 0;
                }
            }
            return new Transport(supply, demand, linkSource, linkSink, cost, active);
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
