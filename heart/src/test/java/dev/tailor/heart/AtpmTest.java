package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AtpmTest {

    private static final Heart HEART = new Heart(HeartConfig.DEFAULTS.withParallel(false));

    private static Map<String, GroupShare> sharesOf(Plan plan, String component) {
        return plan.allocation().shares().stream()
                .filter(c -> c.component().equals(component))
                .findFirst().orElseThrow()
                .groups().stream()
                .collect(java.util.stream.Collectors.toMap(GroupShare::group, g -> g));
    }

    @Test
    void shares_proportionalToCapacity_halfTheLoadTwiceTheShare() {
        // w1 needs 10 ms of CPU per request, w2 20 ms: capacities 100 and 50 requests/s per core,
        // so w1 should get two thirds of b's traffic.
        Snapshot s = TestSnapshots.builder().nodes("w1", "w2")
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
        Snapshot s = TestSnapshots.builder().nodes("w1", "w2")
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
        Snapshot s = TestSnapshots.builder().nodes("w1", "w2")
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
        HeartConfig config = HeartConfig.DEFAULTS;
        GroupEstimate first = new GroupEstimate(0.010, 0, 0, 0.2, 1);
        // Drift up: e = 0.01, E = 0.002, M = 0.002, signal 1 -> alpha clamped to 0.8, L = 0.018.
        GroupEstimate second = Atpm.update(first, 0.020, config);
        assertThat(second.alpha()).isEqualTo(0.8);
        assertThat(second.loadCpuSecondsPerRequest()).isCloseTo(0.018, within(1e-15));
        // Reversal: e = -0.008, E = -0.0016 + 0.0016 = 0, M = 0.0016 + 0.0016 = 0.0032,
        // signal 0 -> alpha clamped to 0.2, L = 0.2 * 0.01 + 0.8 * 0.018 = 0.0164.
        GroupEstimate third = Atpm.update(second, 0.010, config);
        assertThat(third.smoothedError()).isCloseTo(0, within(1e-15));
        assertThat(third.smoothedAbsoluteError()).isCloseTo(0.0032, within(1e-15));
        assertThat(third.alpha()).isEqualTo(0.2);
        assertThat(third.loadCpuSecondsPerRequest()).isCloseTo(0.0164, within(1e-15));
        assertThat(third.measuredRounds()).isEqualTo(3);
    }

    @Test
    void update_adaptiveAlpha_higherMeasurementAfterADownwardDriftCanGiveALowerEstimate() {
        // Not monotone, by design of Trigg-Leach as we read it (α uses this round's error): after a
        // downward drift (E = -M) a jump up first cancels E, so α falls as the jump grows. A larger
        // measurement then moves the estimate less. Pinned so that a change to the smoothing is a
        // conscious one: it is why HeartPropertiesTest checks "more CPU, no more share" with history
        // only under a fixed α.
        GroupEstimate drifting = new GroupEstimate(0.05, -0.01, 0.01, 0.8, 5);
        // x = 0.070: e = 0.02,  E = -0.004, M = 0.012, α = 1/3,    L = 0.05 + 0.02 / 3   = 0.05667
        // x = 0.075: e = 0.025, E = -0.003, M = 0.013, α = 3/13,   L = 0.05 + 0.075 / 13 = 0.05577
        GroupEstimate smallerJump = Atpm.update(drifting, 0.070, HeartConfig.DEFAULTS);
        GroupEstimate largerJump = Atpm.update(drifting, 0.075, HeartConfig.DEFAULTS);
        assertThat(smallerJump.loadCpuSecondsPerRequest()).isCloseTo(0.05 + 0.02 / 3, within(1e-15));
        assertThat(largerJump.loadCpuSecondsPerRequest()).isCloseTo(0.05 + 0.075 / 13, within(1e-15));
        assertThat(largerJump.loadCpuSecondsPerRequest()).isLessThan(smallerJump.loadCpuSecondsPerRequest());
    }

    @Test
    void ewma_alphaOne_usesOnlyTheLatestMeasurement() {
        HeartConfig noTrend = HeartConfig.DEFAULTS.withAlphaRange(1, 1);
        GroupEstimate next = Atpm.update(new GroupEstimate(0.010, 0, 0, 1, 1), 0.030, noTrend);
        assertThat(next.loadCpuSecondsPerRequest()).isEqualTo(0.030);
    }

    @Test
    void missingData_knownGroupKeepsItsEstimate_newGroupTakesMeanOfValid() {
        Snapshot round1 = TestSnapshots.builder().nodes("w1", "w2", "w3")
                .replica("b-1", "b", "w1", 0.5, 50.0)    // 0.01
                .replica("b-2", "b", "w2", 1.5, 50.0)    // 0.03
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan first = HEART.plan(round1, AtpmState.EMPTY);
        // Round 2: w2's metrics are gone (null = no data), and a new replica appears on w3 without data.
        Snapshot round2 = TestSnapshots.builder().nodes("w1", "w2", "w3")
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
        Snapshot s = TestSnapshots.builder().nodes("w1", "w2")
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
        Snapshot round1 = TestSnapshots.builder().nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 1.0, 50.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan first = HEART.plan(round1, AtpmState.EMPTY);
        Snapshot round2 = TestSnapshots.builder().nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica(new Replica("b-2", "b", "w2", false, 1.0, null, 50.0))
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.1, 0.1)
                .build();
        Plan second = HEART.plan(round2, first.state());
        assertThat(sharesOf(second, "b")).containsOnlyKeys("w1");
        assertThat(second.state().of("b")).containsKeys("w1", "w2");
        assertThat(second.allocation().routes().get(0).from().get(0).toReplicas()).containsOnlyKeys("b-1");
    }
}
