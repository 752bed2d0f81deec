package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.tailor.heart.Apportionment;
import dev.tailor.heart.flow.RandomTransports.Transport;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link SparseMinCostFlow} against OR-tools' min-cost flow over every active link: same optimal
 * cost on every problem, a flow that really is one, whatever the candidates start as. These are the
 * tests that fail if the candidate set, the potentials or the pricing were wrong: a missed link that
 * would lower the cost shows up as a higher cost than the full solve.
 *
 * <p>Seeds are random per run and printed on failure; replay one with {@code -DQT_SEED=<seed>}.
 */
class SparseMinCostFlowTest {

    private static final int EXAMPLES = 400;

    @Test
    void solve_randomTransport_costsExactlyTheFullMinCostFlow() {
        // The contract: optimal over all active links, not just over the candidates. k from 1 (tiny
        // candidate sets, so pricing has to find most of the optimum) to past every link.
        qt().withExamples(EXAMPLES)
                .forAll(
                        RandomTransports.transports(1_000_000, false, 4),
                        integers().between(1, 20))
                .checkAssert((t, k) -> assertOptimalOrBothInfeasible(t, k));
    }

    @Test
    void solve_tiesZeroSuppliesAndFewUnits_costsExactlyTheFullMinCostFlow() {
        // Few units make many equal supplies and degenerate flows; zero supplies and demands make
        // links of capacity 0, which must never be priced in as improving.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(60, true, 3), integers().between(1, 4))
                .checkAssert((t, k) -> assertOptimalOrBothInfeasible(t, k));
    }

    @Test
    void solve_everyLinkActive_completeBipartiteIsAlwaysFeasible() {
        // NTAM's problem before filtering: every pair linked, so a flow always exists, and the sparse
        // solve must never call it infeasible, however few candidates it starts from.
        qt().withExamples(EXAMPLES)
                .forAll(
                        RandomTransports.transports(1_000_000, false, 0),
                        integers().between(1, 3))
                .checkAssert((t, k) -> {
                    double[] flow = new double[t.links()];
                    SparseMinCostFlow.Result result = solve(t, k, flow);
                    assertThat(result.costUnits()).isEqualTo(fullCost(t));
                });
    }

    @Test
    void solve_firstCandidatesCannotCarryAllDemand_growsThemAndStaysOptimal() {
        // Sources s0, s1 (1 unit each), s2 (1); sinks t0, t1, t2 (1 each). With k = 1 the candidates
        // are each node's cheapest link plus the greedy flow's: s0 and s1 then reach only t0, which
        // takes 1 of their 2 units, so OR-tools must say infeasible and k grow. The optimum
        // s0->t0 (0) + s1->t1 (10) + s2->t2 (1) = 11 needs s1->t1, nobody's cheapest link.
        Transport t = new Transport(
                new int[] {1, 1, 1},
                new int[] {1, 1, 1},
                new int[] {0, 1, 2, 2, 1, 0},
                new int[] {0, 0, 1, 2, 1, 2},
                new long[] {0, 0, 0, 1, 10, 20},
                new boolean[] {true, true, true, true, true, true});
        double[] flow = new double[6];
        SparseMinCostFlow.Result result = solve(t, 1, flow);
        assertThat(result.solves())
                .as("one infeasible solve, then one on more candidates")
                .isEqualTo(2);
        assertThat(result.costUnits()).isEqualTo(11).isEqualTo(fullCost(t));
        assertThat(flow).containsExactly(1, 0, 0, 1, 1, 0);
    }

    @Test
    void solve_activeLinksCannotCarryAllDemand_throwsNamingIt() {
        // s1's only link is off: no flow meets its unit, with any candidates.
        Transport t = new Transport(
                new int[] {1, 1}, new int[] {2}, new int[] {0, 1}, new int[] {0, 0}, new long[] {5, 5}, new boolean[] {
                    true, false
                });
        assertThatThrownBy(() -> solve(t, 1, new double[2]))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("infeasible");
    }

    @Test
    void solve_seededRandomProblems_pricingIsNeededAndRestoresTheOptimum() {
        // Guards the guard: on these problems (k = 1, spread costs) the first candidates are feasible
        // but not optimal often enough that a solver that skipped pricing would be caught above. If
        // pricing never added a link here, the property tests would prove little.
        Random random = new Random(20_250_701L);
        int priced = 0;
        for (int n = 0; n < 200; n++) {
            Transport t = seeded(random);
            double[] flow = new double[t.links()];
            SparseMinCostFlow.Result result = solve(t, 1, flow);
            assertThat(result.costUnits()).as("problem %d: %s", n, t).isEqualTo(fullCost(t));
            if (result.pricedIn() > 0) {
                priced++;
            }
        }
        assertThat(priced)
                .as("problems whose optimum needed links added by pricing")
                .isGreaterThan(20);
    }

    @Test
    void solve_allLinksCandidates_givesTheSolverExactlyTheFullProblem() {
        // Small edges (the paper's 5 x 5) have fewer links than k per node: then the sparse solve is
        // the full solve, in one go, and its flow (not just its cost) is a direct solve's.
        qt().withExamples(EXAMPLES)
                .forAll(RandomTransports.transports(1_000_000, false, 4))
                .checkAssert(t -> {
                    FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
                    if (full == null) {
                        return;
                    }
                    double[] flow = new double[t.links()];
                    SparseMinCostFlow.Result result = solve(t, t.links(), flow);
                    assertThat(result.solves()).isEqualTo(1);
                    long[] direct = new long[t.links()];
                    MinCostTransport.solve(
                            t.supply(), t.demand(), t.linkSource(), t.linkSink(), t.costMicros(), t.active(), direct);
                    assertThat(flow)
                            .containsExactly(java.util.Arrays.stream(direct)
                                    .asDoubleStream()
                                    .toArray());
                    assertThat(result.costUnits()).isEqualTo((long) full.cost());
                });
    }

    private static void assertOptimalOrBothInfeasible(Transport t, int k) {
        FlowNetwork.MinCostFlow full = t.fullMinCostFlow();
        double[] flow = new double[t.links()];
        if (full == null) {
            assertThatThrownBy(() -> solve(t, k, flow)).isInstanceOf(IllegalStateException.class);
            return;
        }
        SparseMinCostFlow.Result result = solve(t, k, flow);
        assertThat(result.costUnits()).as("cost, k = %d", k).isEqualTo((long) full.cost());
        assertIsAFlow(t, flow);
        long cost = 0;
        for (int l = 0; l < t.links(); l++) {
            cost += (long) flow[l] * t.costMicros()[l];
        }
        assertThat(cost).as("the flow's own cost").isEqualTo(result.costUnits());
    }

    /** Meets every supply and demand exactly, on active links only, within each link's bound. */
    static void assertIsAFlow(Transport t, double[] flow) {
        long[] out = new long[t.supply().length];
        long[] in = new long[t.demand().length];
        for (int l = 0; l < t.links(); l++) {
            int a = t.linkSource()[l];
            int b = t.linkSink()[l];
            double bound = t.active()[l] ? Math.min(t.supply()[a], t.demand()[b]) : 0;
            assertThat(flow[l]).as("flow on link %d", l).isBetween(0.0, bound).isEqualTo(Math.rint(flow[l]));
            out[a] += (long) flow[l];
            in[b] += (long) flow[l];
        }
        assertThat(out).containsExactly(Arrays.stream(t.supply()).asLongStream().toArray());
        assertThat(in).containsExactly(Arrays.stream(t.demand()).asLongStream().toArray());
    }

    private static SparseMinCostFlow.Result solve(Transport t, int k, double[] flow) {
        return SparseMinCostFlow.solve(
                t.supply(),
                t.demand(),
                t.linkSource(),
                t.linkSink(),
                t.costMicros(),
                t.active(),
                t.linksByCost(),
                k,
                flow);
    }

    private static long fullCost(Transport t) {
        return (long) t.fullMinCostFlow().cost();
    }

    /** 8-12 sources and sinks, every link active, costs spread out: a small NTAM edge. */
    private static Transport seeded(Random random) {
        int s = 8 + random.nextInt(5);
        int g = 8 + random.nextInt(5);
        double[] sw = random.doubles(s, 1, 1000).toArray();
        double[] dw = random.doubles(g, 1, 1000).toArray();
        int links = s * g;
        int[] linkSource = new int[links];
        int[] linkSink = new int[links];
        long[] cost = new long[links];
        for (int l = 0; l < links; l++) {
            linkSource[l] = l / g;
            linkSink[l] = l % g;
            cost[l] = random.nextInt(5_000);
        }
        boolean[] active = new boolean[links];
        Arrays.fill(active, true);
        return new Transport(
                Apportionment.largestRemainderAtLeastOne(sw, 1_000_000),
                Apportionment.largestRemainderAtLeastOne(dw, 1_000_000),
                linkSource,
                linkSink,
                cost,
                active);
    }
}
