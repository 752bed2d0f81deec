package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.tailor.heart.Apportionment;
import dev.tailor.heart.flow.RandomTransports.Transport;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link TransportSimplex} on problems worked out by hand, and against OR-tools' min-cost flow over
 * every active link on random ones: the same optimal cost (or both infeasible), a flow that really
 * is one, on active links only. Ties, zero supplies, degenerate starts and infeasible link sets are
 * where a network simplex goes wrong (cycling, a wrong leaving arc, a missed infeasibility), so the
 * generators lean on them.
 *
 * <p>Seeds are random per run and printed on failure; replay one with {@code -DQT_SEED=<seed>}.
 */
class TransportSimplexTest {

    private static final int EXAMPLES = 400;

    @Test
    void solve_textbookProblem_findsTheKnownOptimum() {
        // A classic exercise: supplies 7, 9, 18; demands 5, 8, 7, 14. The greedy start, cheapest
        // link first: S3-D2 8 units (cost 8), S1-D4 7 (10), S3-D4 7 (20), S2-D3 7 (40), S3-D1 3 (40),
        // S2-D1 2 (70) = 64 + 70 + 140 + 280 + 120 + 140 = 814. The optimum (MODI by hand) moves S2's
        // last 2 units off the 70 link: S1-D1 5 (19), S1-D4 2 (10), S2-D2 2 (30), S2-D3 7 (40),
        // S3-D2 6 (8), S3-D4 12 (20) = 95 + 20 + 60 + 280 + 48 + 240 = 743, the only flow at that cost.
        Transport t = complete(new int[] {7, 9, 18}, new int[] {5, 8, 7, 14}, new long[][] {
            {19, 30, 50, 10},
            {70, 30, 40, 60},
            {40, 8, 70, 20}
        });
        double[] flow = new double[t.links()];
        TransportSimplex.Result result = solve(t, flow);
        assertThat(result.status()).isEqualTo(TransportSimplex.Status.OPTIMAL);
        assertThat(result.costUnits()).isEqualTo(743).isEqualTo(orTools(t));
        assertThat(result.pivots()).as("the greedy start is not optimal").isPositive();
        assertThat(flow).containsExactly(5, 0, 0, 2, 0, 2, 7, 0, 0, 6, 0, 12);
    }

    @Test
    void solve_supplyEqualsDemandAtTheCheapestLink_leavesTheDegenerateStartForTheOptimum() {
        // Greedy fills s0-t0 (cost 1) with 10 units, which empties s0 and t0 at once: a degenerate
        // start, two trees joined to the root by empty artificial arcs, then s1-t1 (5): 60. The
        // optimum routes around it: s0-t1 (2) and s1-t0 (1), 10 units each = 30; any x units on
        // s0-t0 cost 30 + 3x.
        Transport t = complete(new int[] {10, 10}, new int[] {10, 10}, new long[][] {{1, 2}, {1, 5}});
        double[] flow = new double[4];
        TransportSimplex.Result result = solve(t, flow);
        assertThat(result.costUnits()).isEqualTo(30).isEqualTo(orTools(t));
        assertThat(flow).containsExactly(0, 10, 10, 0);
    }

    @Test
    void solve_greedyStrandsUnits_routesThemAndFindsTheOnlyFlow() {
        // s1-t1 is off. Greedy puts s0's unit on s0-t0 (0) and then finds s0 and t0 empty: s1 and t1
        // are left with a unit each, joined to the root by artificial arcs that carry them. The only
        // flow is s0-t1 (5) + s1-t0 (1) = 6: the simplex has to drive the artificial flow out.
        Transport t = new Transport(
                new int[] {1, 1},
                new int[] {1, 1},
                new int[] {0, 0, 1, 1},
                new int[] {0, 1, 0, 1},
                new long[] {0, 5, 1, 0},
                new boolean[] {true, true, true, false});
        double[] flow = new double[4];
        TransportSimplex.Result result = solve(t, flow);
        assertThat(result.status()).isEqualTo(TransportSimplex.Status.OPTIMAL);
        assertThat(result.costUnits()).isEqualTo(6);
        assertThat(flow).containsExactly(0, 1, 1, 0);
    }

    @Test
    void solve_zeroSupplyAndZeroDemand_sendNothingOverTheirFreeLinks() {
        // s0 supplies nothing and t1 takes nothing, though their links cost 0: the 4 units of s1 can
        // only go to t0, at 7 each.
        Transport t = complete(new int[] {0, 4}, new int[] {4, 0}, new long[][] {{0, 0}, {7, 0}});
        double[] flow = new double[4];
        TransportSimplex.Result result = solve(t, flow);
        assertThat(result.costUnits()).isEqualTo(28);
        assertThat(flow).containsExactly(0, 0, 4, 0);
    }

    @Test
    void solve_everythingZero_isTheEmptyFlow() {
        Transport t = complete(new int[] {0}, new int[] {0}, new long[][] {{3}});
        double[] flow = {99};
        TransportSimplex.Result result = solve(t, flow);
        assertThat(result.status()).isEqualTo(TransportSimplex.Status.OPTIMAL);
        assertThat(result.costUnits()).isZero();
        assertThat(flow).containsExactly(0);
    }

    @Test
    void solve_nodeWithoutActiveLinks_isInfeasible() {
        // s1's only link is off: no flow places its unit.
        Transport t = new Transport(
                new int[] {1, 1}, new int[] {2}, new int[] {0, 1}, new int[] {0, 0}, new long[] {5, 5}, new boolean[] {
                    true, false
                });
        assertThat(solve(t, new double[2]).status()).isEqualTo(TransportSimplex.Status.INFEASIBLE);
    }

    @Test
    void solve_setOfNodesShortThoughEachNodeAloneIsNot_isInfeasible() {
        // Sources a (1), b (3), c (1); sinks x (3), y (1), z (1); links a-y, a-z, b-x, c-x. Every node
        // alone reaches enough on the other side, but y and z (2 units) reach only a (1 unit): a cut
        // of two nodes that the slow-link filter's single-node bound cannot see.
        Transport t = new Transport(
                new int[] {1, 3, 1},
                new int[] {3, 1, 1},
                new int[] {0, 0, 1, 2},
                new int[] {1, 2, 0, 0},
                new long[] {1, 1, 1, 1},
                new boolean[] {true, true, true, true});
        assertThat(solve(t, new double[4]).status()).isEqualTo(TransportSimplex.Status.INFEASIBLE);
        assertThat(t.fullMinCostFlow()).as("OR-tools agrees").isNull();
    }

    @Test
    void solve_negativeCosts_costExactlyWhatOrToolsFinds() {
        // The contract takes any integer costs; shifted below zero, the optimum moves by the shift
        // times the units (every unit crosses exactly one link) and the flow stays optimal.
        qt().withExamples(100)
                .forAll(RandomTransports.transports(1_000, false, 4), integers().between(1, 100_000))
                .checkAssert((t, shift) -> {
                    long[] shifted =
                            Arrays.stream(t.costMicros()).map(c -> c - shift).toArray();
                    Transport negative =
                            new Transport(t.supply(), t.demand(), t.linkSource(), t.linkSink(), shifted, t.active());
                    assertAsOrTools(negative);
                    FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
                    if (full != null) {
                        double[] flow = new double[t.links()];
                        assertThat(solve(negative, flow).costUnits()).isEqualTo((long) full.cost() - shift * t.total());
                    }
                });
    }

    @Test
    void solve_costsTooLargeForExactArithmetic_declines() {
        // Big M is (largest cost + 1) x nodes and must leave room for sums of potentials in a long.
        Transport t = complete(new int[] {1, 1}, new int[] {1, 1}, new long[][] {{1L << 60, 0}, {0, 1}});
        double[] flow = {-1, -1, -1, -1};
        assertThat(solve(t, flow).status()).isEqualTo(TransportSimplex.Status.DECLINED);
        assertThat(flow).as("untouched").containsExactly(-1, -1, -1, -1);
    }

    @Test
    void solve_randomTransport_costsExactlyTheFullMinCostFlow() {
        // The contract on NTAM-shaped problems, up to 12 x 12, about one link in four off (so some
        // active sets are infeasible): same status, same cost as OR-tools over every active link.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(1_000_000, false, 4))
                .checkAssert(TransportSimplexTest::assertAsOrTools);
    }

    @Test
    void solve_tiesZeroSuppliesAndFewUnits_costsExactlyTheFullMinCostFlow() {
        // Few units make many equal supplies and demands, so links that empty both ends and
        // degenerate pivots; zero supplies and demands make links that must stay empty; one link in
        // two off makes infeasible sets common.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(60, true, 2))
                .checkAssert(TransportSimplexTest::assertAsOrTools);
    }

    @Test
    void solve_largerRandomTransports_costsExactlyTheFullMinCostFlow() {
        // Up to 60 x 60 (3,600 links): many pivots, deep trees, several pricing blocks.
        qt().withExamples(60)
                .forAll(RandomTransports.transports(1_000_000, false, 8, 60))
                .checkAssert(TransportSimplexTest::assertAsOrTools);
        qt().withExamples(60)
                .forAll(RandomTransports.transports(200, true, 3, 60))
                .checkAssert(TransportSimplexTest::assertAsOrTools);
    }

    @Test
    void solve_seededRandomProblems_exerciseEveryPath() {
        // Guards the guard: the property tests above prove little unless the simplex really pivots
        // (the greedy start is not optimal), really starts with stranded units, and really meets
        // infeasible link sets. Counted on fixed seeds, so this cannot flake.
        Random random = new Random(20_250_701L);
        int pivoted = 0;
        int degenerate = 0;
        int infeasible = 0;
        for (int n = 0; n < 300; n++) {
            Transport t = seeded(random);
            TransportSimplex.Result result = assertAsOrTools(t);
            pivoted += result.pivots() > 0 ? 1 : 0;
            degenerate += result.degeneratePivots() > 0 ? 1 : 0;
            infeasible += result.status() == TransportSimplex.Status.INFEASIBLE ? 1 : 0;
        }
        // Seen: 280, 242 and 57 of 300.
        assertThat(pivoted).as("problems whose greedy start was not optimal").isGreaterThan(200);
        assertThat(degenerate).as("problems with degenerate pivots").isGreaterThan(150);
        assertThat(infeasible).as("infeasible problems").isGreaterThan(30);
    }

    @Test
    void minCostFlow_transportNetwork_isTheSimplexAtOrToolsCost() {
        // NTAM's path: TransportNetwork solves with the simplex (OR-tools only where it declines, which
        // delays in microseconds never make it do) at the cost OR-tools finds over every active link.
        qt().withExamples(200)
                .forAll(RandomTransports.transports(1_000_000, false, 4))
                .checkAssert(t -> {
                    FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
                    try (TransportNetwork network = t.network()) {
                        assertThat(network.canMeetAllDemandSolving()).isEqualTo(full != null);
                        if (full == null) {
                            return;
                        }
                        double[] flow = new double[t.links()];
                        TransportNetwork.MinCostFlowResult result = network.minCostFlow(flow);
                        assertThat(result.how().orTools()).isNull();
                        long cost = 0;
                        for (int l = 0; l < t.links(); l++) {
                            cost += (long) flow[l] * t.costMicros()[l];
                        }
                        assertThat(cost).isEqualTo((long) full.cost());
                    }
                });
    }

    /** Solves with both and compares; returns the simplex's result. */
    private static TransportSimplex.Result assertAsOrTools(Transport t) {
        FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
        double[] flow = new double[t.links()];
        TransportSimplex.Result result = solve(t, flow);
        if (full == null) {
            assertThat(result.status()).as("OR-tools: infeasible").isEqualTo(TransportSimplex.Status.INFEASIBLE);
            return result;
        }
        assertThat(result.status()).isEqualTo(TransportSimplex.Status.OPTIMAL);
        assertThat(result.costUnits()).as("cost").isEqualTo((long) full.cost());
        SparseMinCostFlowTest.assertIsAFlow(t, flow);
        long cost = 0;
        for (int l = 0; l < t.links(); l++) {
            cost += (long) flow[l] * t.costMicros()[l];
        }
        assertThat(cost).as("the flow's own cost").isEqualTo(result.costUnits());
        return result;
    }

    private static TransportSimplex.Result solve(Transport t, double[] flow) {
        return TransportSimplex.solve(
                t.supply(),
                t.demand(),
                t.linkSource(),
                t.linkSink(),
                t.costMicros(),
                t.active(),
                t.linksByCost(),
                flow);
    }

    private static long orTools(Transport t) {
        return (long) t.fullMinCostFlow().cost();
    }

    /** Every source linked to every sink, link {@code a * sinks + b} costing {@code cost[a][b]}. */
    private static Transport complete(int[] supply, int[] demand, long[][] cost) {
        int links = supply.length * demand.length;
        int[] linkSource = new int[links];
        int[] linkSink = new int[links];
        long[] linkCost = new long[links];
        for (int l = 0; l < links; l++) {
            linkSource[l] = l / demand.length;
            linkSink[l] = l % demand.length;
            linkCost[l] = cost[linkSource[l]][linkSink[l]];
        }
        boolean[] active = new boolean[links];
        Arrays.fill(active, true);
        return new Transport(supply, demand, linkSource, linkSink, linkCost, active);
    }

    /** 2-15 sources and sinks, few units (ties), few distinct costs, one link in three off. */
    private static Transport seeded(Random random) {
        int s = 2 + random.nextInt(14);
        int g = 2 + random.nextInt(14);
        double[] sw = random.doubles(s, 1, 5).toArray();
        double[] dw = random.doubles(g, 1, 5).toArray();
        int units = 3 * Math.max(s, g);
        int links = s * g;
        int[] linkSource = new int[links];
        int[] linkSink = new int[links];
        long[] cost = new long[links];
        boolean[] active = new boolean[links];
        for (int l = 0; l < links; l++) {
            linkSource[l] = l / g;
            linkSink[l] = l % g;
            cost[l] = 100L * random.nextInt(20);
            active[l] = random.nextInt(3) > 0;
        }
        return new Transport(
                Apportionment.largestRemainderAtLeastOne(sw, units),
                Apportionment.largestRemainderAtLeastOne(dw, units),
                linkSource,
                linkSink,
                cost,
                active);
    }
}
