package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AtpmTest {

    private static final Heart HEART =
            new Heart(TestSnapshots.PAPER_ROUTING.toBuilder().parallel(false).build());

    private static Map<String, GroupShare> sharesOf(Plan plan, String component) {
        return plan.allocation().shares().stream()
                .filter(c -> c.component().equals(component))
                .findFirst()
                .orElseThrow()
                .groups()
                .stream()
                .collect(java.util.stream.Collectors.toMap(GroupShare::group, g -> g));
    }

    @Test
    void shares_proportionalToCapacity_halfTheLoadTwiceTheShare() {
        // w1 needs 10 ms of CPU per request, w2 20 ms: capacities 100 and 50 requests/s per core,
        // so w1 should get two thirds of b's traffic.
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 1.0, 50.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Map<String, GroupShare> b = sharesOf(HEART.plan(s, AtpmState.EMPTY), "b");
        assertThat(b.get("w1").share()).isCloseTo(2.0 / 3, within(1e-12));
        assertThat(b.get("w2").share()).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(b.get("w1").capacityRequestsPerSecond()).isCloseTo(100, within(1e-9));
        assertThat(b.get("w1").basis()).isEqualTo(GroupShare.Basis.FIRST_MEASUREMENT);
    }

    @Test
    void load_excludesReplicasWithoutRequests_andSumsTheRest() {
        // b-3 idles at 0.3 cores with no requests: it must not make w1 look more expensive.
        // Group w1 = (0.2 + 0.6) / (20 + 60) = 0.01 CPU-s per request, two replicas -> capacity 200.
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.2, 20.0)
                .replica("b-2", "b", "w1", 0.6, 60.0)
                .replica("b-3", "b", "w1", 0.3, 0.0)
                .replica("b-4", "b", "w2", 0.5, 25.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Map<String, GroupShare> b = sharesOf(HEART.plan(s, AtpmState.EMPTY), "b");
        assertThat(b.get("w1").observedLoadCpuSecondsPerRequest()).isCloseTo(0.01, within(1e-15));
        // capacity: 3 replicas / 0.01 = 300; w2: 1 / 0.02 = 50
        assertThat(b.get("w1").capacityRequestsPerSecond()).isCloseTo(300, within(1e-9));
        assertThat(b.get("w1").share()).isCloseTo(300.0 / 350, within(1e-12));
    }

    @Test
    void capacity_usesCpuLimits_whenEveryReplicaHasOne() {
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica(new Replica("b-1", "b", "w1", true, 0.5, 2.0, 50.0))
                .replica(new Replica("b-2", "b", "w2", true, 0.5, 0.5, 50.0))
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Map<String, GroupShare> b = sharesOf(HEART.plan(s, AtpmState.EMPTY), "b");
        // same load 0.01; limits 2 and 0.5 cores -> capacities 200 and 50
        assertThat(b.get("w1").share()).isCloseTo(0.8, within(1e-12));
    }

    @Test
    void ewma_followsDrift_andDampsAlternatingNoise_handComputed() {
        HeartConfig config = TestSnapshots.PAPER_ROUTING;
        // First measurement 0.010: no error seen yet, so the next update uses alpha_min = 0.2.
        GroupEstimate first = new GroupEstimate(0.010, 0, 0, 0.2, 1);
        // Drift up to 0.020: L = 0.2 * 0.02 + 0.8 * 0.01 = 0.012; then e = 0.01, E = 0.002,
        // M = 0.002, signal 1 -> the next update uses alpha 0.8 (clamped).
        GroupEstimate second = Atpm.update(first, 0.020, config);
        assertThat(second.loadCpuSecondsPerRequest()).isCloseTo(0.012, within(1e-15));
        assertThat(second.alpha()).isEqualTo(0.8);
        // Still up, 0.020: L = 0.8 * 0.02 + 0.2 * 0.012 = 0.0184 (the trend is followed); e = 0.008,
        // E = 0.0016 + 0.0016 = 0.0032, M = 0.0032 -> alpha stays 0.8.
        GroupEstimate third = Atpm.update(second, 0.020, config);
        assertThat(third.loadCpuSecondsPerRequest()).isCloseTo(0.0184, within(1e-15));
        assertThat(third.alpha()).isEqualTo(0.8);
        // Reversal to 0.010: L = 0.8 * 0.01 + 0.2 * 0.0184 = 0.01168; e = -0.0084,
        // E = -0.00168 + 0.00256 = 0.00088, M = 0.00168 + 0.00256 = 0.00424, signal 0.2075.
        GroupEstimate fourth = Atpm.update(third, 0.010, config);
        assertThat(fourth.loadCpuSecondsPerRequest()).isCloseTo(0.01168, within(1e-15));
        assertThat(fourth.smoothedError()).isCloseTo(0.00088, within(1e-15));
        assertThat(fourth.smoothedAbsoluteError()).isCloseTo(0.00424, within(1e-15));
        assertThat(fourth.alpha()).isCloseTo(0.00088 / 0.00424, within(1e-12));
        // Back up to 0.020 (alternating noise): the damped weight now barely moves the estimate.
        GroupEstimate fifth = Atpm.update(fourth, 0.020, config);
        assertThat(fifth.loadCpuSecondsPerRequest())
                .isCloseTo(fourth.alpha() * 0.020 + (1 - fourth.alpha()) * 0.01168, within(1e-15));
        assertThat(fifth.measuredRounds()).isEqualTo(5);
    }

    @Test
    void update_higherMeasurementAfterADownwardDrift_neverGivesALowerEstimate() {
        // With the tracking signal of the same round (Trigg-Leach as printed), a larger jump up after
        // a downward drift cancels more of E, lowers alpha and moved the estimate LESS (0.070 gave
        // 0.05667, 0.075 gave 0.05577): a group needing more CPU would have gained traffic. The
        // lagged weight makes the step increasing in the measurement.
        GroupEstimate drifting = new GroupEstimate(0.05, -0.01, 0.01, 0.8, 5);
        GroupEstimate smallerJump = Atpm.update(drifting, 0.070, TestSnapshots.PAPER_ROUTING);
        GroupEstimate largerJump = Atpm.update(drifting, 0.075, TestSnapshots.PAPER_ROUTING);
        assertThat(smallerJump.loadCpuSecondsPerRequest()).isCloseTo(0.8 * 0.070 + 0.2 * 0.05, within(1e-15));
        assertThat(largerJump.loadCpuSecondsPerRequest()).isGreaterThan(smallerJump.loadCpuSecondsPerRequest());
    }

    @Test
    void ewma_alphaOne_usesOnlyTheLatestMeasurement() {
        HeartConfig noTrend =
                TestSnapshots.PAPER_ROUTING.toBuilder().alphaMin(1).alphaMax(1).build();
        GroupEstimate next = Atpm.update(new GroupEstimate(0.010, 0, 0, 1, 1), 0.030, noTrend);
        assertThat(next.loadCpuSecondsPerRequest()).isEqualTo(0.030);
    }

    @Test
    void missingData_knownGroupKeepsItsEstimate_newGroupTakesMeanOfValid() {
        Snapshot round1 = TestSnapshots.builder()
                .nodes("w1", "w2", "w3")
                .replica("b-1", "b", "w1", 0.5, 50.0) // 0.01
                .replica("b-2", "b", "w2", 1.5, 50.0) // 0.03
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan first = HEART.plan(round1, AtpmState.EMPTY);
        // Round 2: w2's metrics are gone (null = no data), and a new replica appears on w3 without data.
        Snapshot round2 = TestSnapshots.builder()
                .nodes("w1", "w2", "w3")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", null, null)
                .replica("b-3", "b", "w3", null, null)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan second = HEART.plan(round2, first.state());
        Map<String, GroupShare> b = sharesOf(second, "b");
        assertThat(b.get("w2").basis()).isEqualTo(GroupShare.Basis.CARRIED);
        assertThat(b.get("w2").loadCpuSecondsPerRequest()).isCloseTo(0.03, within(1e-15));
        assertThat(b.get("w3").basis()).isEqualTo(GroupShare.Basis.MEAN_OF_VALID);
        assertThat(b.get("w3").loadCpuSecondsPerRequest()).isCloseTo(0.02, within(1e-15));
        // capacities 100, 33.3, 50
        assertThat(b.get("w1").share()).isCloseTo(100 / (100 + 100.0 / 3 + 50), within(1e-12));
        // The placeholder is not remembered: w3 starts its own EWMA on its first measurement.
        assertThat(second.state().of("b")).containsOnlyKeys("w1", "w2");
    }

    @Test
    void missingData_noGroupMeasured_splitsEquallyPerReplica() {
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", null, null)
                .replica("b-2", "b", "w1", 0.0, 0.0)
                .replica("b-3", "b", "w2", null, 12.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Map<String, GroupShare> b = sharesOf(HEART.plan(s, AtpmState.EMPTY), "b");
        assertThat(b.get("w1").share()).isCloseTo(2.0 / 3, within(1e-12));
        assertThat(b.get("w2").share()).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(b.values()).allMatch(g -> g.basis() == GroupShare.Basis.EQUAL_SPLIT);
    }

    @Test
    void unreadyReplica_isNotATarget_butItsGroupStateIsKept() {
        Snapshot round1 = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 1.0, 50.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan first = HEART.plan(round1, AtpmState.EMPTY);
        Snapshot round2 = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica(new Replica("b-2", "b", "w2", false, 1.0, null, 50.0))
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan second = HEART.plan(round2, first.state());
        assertThat(sharesOf(second, "b")).containsOnlyKeys("w1");
        assertThat(second.state().of("b")).containsKeys("w1", "w2");
        assertThat(second.allocation().routes().get(0).from().get(0).toReplicas())
                .containsOnlyKeys("b-1");
    }

    @Test
    void squareRootRule_matchesTheClosedForm_andDropsAGroupTooSlowToHelp() {
        double[] share = new double[2];
        assertThat(Atpm.squareRootRule(new double[] {100, 50}, new double[] {1, 1}, new double[2], 60, share))
                .isTrue();
        double theta = 90 / (10 + Math.sqrt(50));
        assertThat(share[0] * 60).isCloseTo(100 - 10 * theta, within(1e-9));
        assertThat(share[1] * 60).isCloseTo(50 - Math.sqrt(50) * theta, within(1e-9));
        // A group of capacity 2 next to one of 100 at demand 10: θ over both is 92 ÷ 11.41 ≈ 8.06, and
        // 2 − √2 θ < 0, so it gets nothing; the other takes all. With a floor it keeps the floor.
        assertThat(Atpm.squareRootRule(new double[] {100, 2}, new double[] {1, 1}, new double[2], 10, share))
                .isTrue();
        assertThat(share).containsExactly(1, 0);
        assertThat(Atpm.squareRootRule(new double[] {100, 2}, new double[] {1, 1}, new double[] {0, 0.01}, 10, share))
                .isTrue();
        assertThat(share[1]).isCloseTo(0.01, within(1e-12));
        assertThat(share[0]).isCloseTo(0.99, within(1e-12));
        // At or beyond capacity the rule does not apply (the caller water-fills by capacity).
        assertThat(Atpm.squareRootRule(new double[] {100, 50}, new double[] {1, 1}, new double[2], 150, share))
                .isFalse();
    }
}
