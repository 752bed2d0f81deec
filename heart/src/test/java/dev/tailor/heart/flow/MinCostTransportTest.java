package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.tailor.heart.flow.RandomTransports.Transport;
import org.junit.jupiter.api.Test;

/**
 * {@link MinCostTransport} (successive shortest paths) by hand and against OR-tools' cost scaling,
 * the solver it replaced: the same optimal cost or both infeasible, on random NTAM-shaped transports
 * with ties, zero supplies, switched-off links and negative costs.
 */
class MinCostTransportTest {

    @Test
    void solve_handComputed_twoByTwo() {
        // Supplies 3, 1; demands 2, 2; costs a0-b0 1, a0-b1 4, a1-b0 2, a1-b1 1. Optimum: a0 sends 2 to
        // b0 and 1 to b1, a1 sends 1 to b1: 2 + 4 + 1 = 7; a1 to b0 instead forces a0 to send 2 to b1:
        // 2 + 1 + 8 = 11.
        long[] flow = new long[4];
        long cost = MinCostTransport.solve(
                new int[] {3, 1},
                new int[] {2, 2},
                new int[] {0, 0, 1, 1},
                new int[] {0, 1, 0, 1},
                new long[] {1, 4, 2, 1},
                new boolean[] {true, true, true, true},
                flow);
        assertThat(cost).isEqualTo(7);
        assertThat(flow).containsExactly(2, 1, 0, 1);
    }

    @Test
    void solve_linksThatCannotCarryAllDemand_infeasible() {
        long[] flow = new long[2];
        assertThat(MinCostTransport.solve(
                        new int[] {2, 2},
                        new int[] {2, 2},
                        new int[] {0, 1},
                        new int[] {0, 0},
                        new long[] {1, 1},
                        new boolean[] {true, true},
                        flow))
                .isEqualTo(MinCostTransport.INFEASIBLE);
    }

    @Test
    void solve_randomTransports_costExactlyWhatOrToolsFinds() {
        qt().withFixedSeed(20261203L)
                .withExamples(400)
                .forAll(RandomTransports.transports(1_000_000, false, 4))
                .checkAssert(MinCostTransportTest::assertAsOrTools);
    }

    @Test
    void solve_tiesZeroSuppliesAndNegativeCosts_costExactlyWhatOrToolsFinds() {
        qt().withFixedSeed(20261204L)
                .withExamples(400)
                .forAll(RandomTransports.transports(60, true, 3))
                .checkAssert(t -> {
                    assertAsOrTools(t);
                    long[] negative = t.costMicros().clone();
                    for (int l = 0; l < negative.length; l++) {
                        negative[l] = 500 - negative[l];
                    }
                    assertAsOrTools(
                            new Transport(t.supply(), t.demand(), t.linkSource(), t.linkSink(), negative, t.active()));
                });
    }

    private static void assertAsOrTools(Transport t) {
        FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
        long[] flow = new long[t.links()];
        long cost = MinCostTransport.solve(
                t.supply(), t.demand(), t.linkSource(), t.linkSink(), t.costMicros(), t.active(), flow);
        if (full == null) {
            assertThat(cost).as("infeasible for OR-tools: %s", t).isEqualTo(MinCostTransport.INFEASIBLE);
            return;
        }
        assertThat(cost).as("%s", t).isEqualTo((long) full.cost());
        long[] sent = new long[t.supply().length];
        long[] received = new long[t.demand().length];
        long recomputed = 0;
        for (int l = 0; l < t.links(); l++) {
            assertThat(flow[l]).isGreaterThanOrEqualTo(0);
            if (!t.active()[l]) {
                assertThat(flow[l]).isZero();
            }
            sent[t.linkSource()[l]] += flow[l];
            received[t.linkSink()[l]] += flow[l];
            recomputed += flow[l] * t.costMicros()[l];
        }
        assertThat(recomputed).isEqualTo(cost);
        for (int a = 0; a < sent.length; a++) {
            assertThat(sent[a]).isEqualTo(t.supply()[a]);
        }
        for (int b = 0; b < received.length; b++) {
            assertThat(received[b]).isEqualTo(t.demand()[b]);
        }
    }
}
