package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Low traffic must not look slow: CPU = idle + cost × rate, and ATPM used to charge the idle CPU to
 * the requests, so a group with few requests measured a high cost, got fewer requests, and measured
 * a higher cost still. These rounds close the loop: each round a group serves the share the previous
 * round planned for it, and uses idle + cost × that rate of CPU.
 */
class IdleCpuTest {

    /** Every group's true cost, CPU-seconds per request. */
    private static final double COST = 0.004;
    /** w3's replica idles at 3 % of a core (background work); its peers at 0.3 %. */
    private static final double[] IDLE = {0.003, 0.003, 0.03};

    private static final String[] NODES = {"w1", "w2", "w3"};
    /** A low-traffic component: 10 requests/s in all. */
    private static final double DEMAND = 10;

    /** w3's share over {@code rounds} closed-loop rounds, starting from an equal split. */
    static List<Double> w3Shares(HeartConfig config, int rounds) {
        Heart heart = new Heart(config.toBuilder().parallel(false).build());
        double[] share = {1.0 / 3, 1.0 / 3, 1.0 / 3};
        AtpmState state = AtpmState.EMPTY;
        List<Double> w3 = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            TestSnapshots s = TestSnapshots.builder().nodes(NODES);
            for (int g = 0; g < 3; g++) {
                double rate = DEMAND * share[g];
                s.replica(new Replica("b-" + NODES[g], "b", NODES[g], true, IDLE[g] + COST * rate, 1.0, rate));
            }
            Plan plan = heart.plan(
                    s.entry("ingress", "b", DEMAND, "w1", DEMAND)
                            .uniformDelays(0.1, 0.1)
                            .build(),
                    state);
            state = plan.state();
            for (GroupShare group : plan.allocation().shares().get(0).groups()) {
                share[List.of(NODES).indexOf(group.node())] = group.share();
            }
            w3.add(share[2]);
        }
        return w3;
    }

    @Test
    void lowTrafficGroup_idleCpuChargedToRequests_doesNotSpiralTowardsZero() {
        List<Double> fixed = w3Shares(TestSnapshots.PAPER_ROUTING, 16);
        List<Double> paper = w3Shares(HeartConfig.PAPER, 16);
        System.out.println("w3's share by round, idle CPU fitted: " + fixed);
        System.out.println("w3's share by round, the paper's ratio: " + paper);
        // The paper's ATPM: at 10 req/s w3's 0.03 idle cores make its requests look 3x dearer, so it
        // gets less and looks dearer still, round after round.
        assertThat(paper.get(15)).as("the loop this test is about: " + paper).isLessThan(paper.get(0) / 2);
        // Fitted: w3 costs what its peers cost, so once the fit has its rounds it is back near a third
        // (slightly above: the peers' own 0.003 idle cores stay charged, their rates never halved).
        assertThat(fixed.get(15)).as("w3's shares: " + fixed).isGreaterThan(0.3);
        // And it never went below the floor while the fit waited for rounds to compare.
        double floor = TestSnapshots.PAPER_ROUTING.minShareOfEqualSplit() / 3;
        assertThat(fixed).allSatisfy(s -> assertThat(s).isGreaterThanOrEqualTo(floor - 1e-12));
    }

    @Test
    void fit_exactLine_findsTheIdleCores_handComputed() {
        // cpu = 0.03 + 0.004 x rate at rates 20, 20, 10, 10: the four cross pairs have slope 0.004,
        // intercepts 0.03 each; no round is in every pair, so the fit is conclusive.
        List<LoadSample> samples = List.of(
                new LoadSample(20, 0.11, 1),
                new LoadSample(20, 0.11, 1),
                new LoadSample(10, 0.07, 1),
                new LoadSample(10, 0.07, 1));
        assertThat(Atpm.fitIdleCores(samples, 0, TestSnapshots.PAPER_ROUTING)).isCloseTo(0.03, within(1e-12));
    }

    @Test
    void fit_onePairOnly_orEveryPairThroughOneRound_isInconclusive_keepsTheIdleFoundBefore() {
        // A single round with a tenth of the requests and the same CPU would fit a flat line, "all of
        // the CPU is idle", and make the group look ten times cheaper. Every qualifying pair runs
        // through that round, so the fit is inconclusive.
        List<LoadSample> outlier = List.of(
                new LoadSample(20, 0.1, 1),
                new LoadSample(20, 0.1, 1),
                new LoadSample(2, 0.1, 1),
                new LoadSample(20, 0.1, 1));
        assertThat(Atpm.fitIdleCores(outlier, 0.01, TestSnapshots.PAPER_ROUTING))
                .isEqualTo(0.01);
        // Two rounds, one pair: both rounds are in every pair.
        assertThat(Atpm.fitIdleCores(
                        List.of(new LoadSample(20, 0.11, 1), new LoadSample(10, 0.07, 1)),
                        0,
                        TestSnapshots.PAPER_ROUTING))
                .isZero();
        // Rates within the ratio: no pair at all.
        assertThat(Atpm.fitIdleCores(
                        List.of(new LoadSample(20, 0.11, 1), new LoadSample(15, 0.09, 1), new LoadSample(11, 0.074, 1)),
                        0,
                        TestSnapshots.PAPER_ROUTING))
                .isZero();
    }

    @Test
    void load_idleSubtracted_atMostTheConfiguredFractionOfTheCpu() {
        // 0.038 cores at 2 req/s with 0.03 idle: 0.004 per request. With 0.05 idle (more than the
        // round's CPU, a wrong fit) at most 90 % is subtracted: 0.1 x 0.038 / 2.
        LoadSample sample = new LoadSample(2, 0.038, 1);
        assertThat(sample.loadCpuSecondsPerRequest(0.03, 0.9)).isCloseTo(0.004, within(1e-15));
        assertThat(sample.loadCpuSecondsPerRequest(0.05, 0.9)).isCloseTo(0.0019, within(1e-15));
        assertThat(sample.loadCpuSecondsPerRequest(0, 0.9)).isCloseTo(0.019, within(1e-15));
    }
}
