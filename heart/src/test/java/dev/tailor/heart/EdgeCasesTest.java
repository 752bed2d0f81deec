package dev.tailor.heart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Inputs a new user fed the planner that once crashed it or gave a wrong plan with exit 0. */
class EdgeCasesTest {

    private static final Heart HEART =
            new Heart(TestSnapshots.PAPER_ROUTING.toBuilder().parallel(false).build());

    @Test
    void largestRemainder_hugeFiniteWeights_doNotOverflow() {
        // 1e308 + 1e308 is Infinity: the quotas were all 0 and the leftover loop indexed -1.
        int[] units = Apportionment.largestRemainder(new double[] {1e308, 1e308, 5e307}, 100);
        assertThat(units).containsExactly(40, 40, 20);
        assertThat(Arrays.stream(units).sum()).isEqualTo(100);
    }

    @Test
    void validate_implausibleMagnitudes_areNamedInsteadOfOverflowing() {
        // A rate of 1e308 req/s made a load of 4e-306 CPU-s per request, infinite capacity and NaN shares.
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 1e308)
                .replica("b-2", "b", "w2", 2e6, 50.0)
                .entry("ingress", "b", 100, "w1", 1e308)
                .delay("w1", "w2", 1e308)
                .build();
        assertThat(SnapshotValidator.validate(s))
                .anySatisfy(p -> assertThat(p)
                        .startsWith("replicas[0].requestsPerSecond: 1e308 (expected: requests per second in [0, 1e9]"))
                .anySatisfy(p -> assertThat(p).startsWith("replicas[1].cpuCores: 2000000 (expected: cores in [0, 1e6]"))
                .anySatisfy(p -> assertThat(p).startsWith("calls[0].byCallerNode.w1: 1e308 ("))
                .anySatisfy(p -> assertThat(p).startsWith("delays[0].millis: 1e308 ("));
    }

    @Test
    void validate_callToAComponentWithoutReplicas_suggestsOnlyComponentsWithAReadyReplica() {
        // b has a replica, but not a ready one: it is flagged itself, and was offered as a callee.
        Snapshot s = new Snapshot(
                60.0,
                List.of(new Node("w1", null, 4.0)),
                List.of(
                        new Replica("a-1", "a", "w1", null, 0.5, null, 10.0),
                        new Replica("b-1", "b", "w1", false, 0.5, null, 10.0)),
                List.of(new Call("a", "b", 1.0, null), new Call("a", "zz", 1.0, null)),
                List.of());
        assertThat(SnapshotValidator.validate(s))
                .contains("calls[1].callee: \"zz\" has no replicas in this snapshot (expected: one of [a])")
                .anySatisfy(p -> assertThat(p).startsWith("replicas[1].component: \"b\" has no ready replica"));

        Snapshot noneReady = new Snapshot(
                60.0,
                List.of(new Node("w1", null, 4.0)),
                List.of(new Replica("b-1", "b", "w1", false, 0.5, null, 10.0)),
                List.of(new Call("ingress", "zz", 1.0, Map.of("w1", 1.0))),
                List.of());
        assertThat(SnapshotValidator.validate(noneReady))
                .contains("calls[0].callee: \"zz\" has no replicas in this snapshot (expected: a component with a"
                        + " ready replica; none has one)");
    }

    @Test
    void atpm_loadBelowOneNanosecondPerRequest_isNoData_notInfiniteCapacity() {
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 1e-12, 1e6)
                .replica("b-2", "b", "w2", 0.5, 50.0)
                .entry("ingress", "b", 100, "w1", 100)
                .uniformDelays(0.05, 0.4)
                .build();
        ComponentShares b = HEART.plan(s, AtpmState.EMPTY).allocation().shares().get(0);
        assertThat(b.groups()).allSatisfy(g -> assertThat(g.share()).isBetween(0.0, 1.0));
        assertThat(b.groups().get(0).basis()).isEqualTo(GroupShare.Basis.MEAN_OF_VALID);
    }

    @Test
    void plan_noDelaysMeasured_keepsEveryCallOnItsOwnNode() {
        // With "delays": [] every pair used to tie at 0 ms and calls crossed nodes for no reason.
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 0.5, 50.0)
                .entry("ingress", "b", 100, "w1", 50, "w2", 50)
                .build();
        Plan plan = HEART.plan(s, AtpmState.EMPTY);
        for (NodeRoute from : plan.allocation().routes().get(0).from()) {
            assertThat(from.toNodes()).containsOnlyKeys(from.fromNode());
        }
        assertThat(plan.allocation().notes()).anySatisfy(n -> assertThat(n).contains("no delay was measured at all"));
    }

    @Test
    void plan_onlySameNodeDelaysMeasured_unmeasuredPairsAreSlowerThanAnyMeasured() {
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 0.5, 50.0)
                .entry("ingress", "b", 100, "w1", 70, "w2", 30)
                .delay("w1", "w1", 0.05)
                .delay("w2", "w2", 0.05)
                .build();
        Route route = HEART.plan(s, AtpmState.EMPTY).allocation().routes().get(0);
        Map<String, NodeRoute> from = Map.of(
                route.from().get(0).fromNode(),
                route.from().get(0),
                route.from().get(1).fromNode(),
                route.from().get(1));
        // Only w1's surplus (20 of 70) crosses; w2 keeps everything local.
        assertThat(from.get("w1").toNodes().get("w2")).isCloseTo(20.0 / 70, within(1e-6));
        assertThat(from.get("w2").toNodes()).containsOnlyKeys("w2");
        // 0.05 measured + 1 ms penalty: 70% local at 0.05 ms, 20% at 1.05 ms, 10% local.
        assertThat(route.meanDelayMillis()).isCloseTo(0.8 * 0.05 + 0.2 * 1.05, within(1e-6));
    }

    @Test
    void filter_minGap_leavesLinksThatDifferByFractionsOfAMillisecondAlone() {
        Snapshot s = TestSnapshots.builder()
                .nodes("w1", "w2", "w3")
                .replica("b-1", "b", "w1", 0.5, 50.0)
                .replica("b-2", "b", "w2", 0.5, 50.0)
                .replica("b-3", "b", "w3", 0.5, 50.0)
                .entry("ingress", "b", 90, "w1", 60, "w2", 20, "w3", 10)
                .uniformDelays(0.05, 0.3)
                .build();
        Route paperDefault =
                HEART.plan(s, AtpmState.EMPTY).allocation().routes().get(0);
        Route withGap = new Heart(TestSnapshots.PAPER_ROUTING.toBuilder()
                        .slowClusterMinGapMillis(1)
                        .build())
                .plan(s, AtpmState.EMPTY)
                .allocation()
                .routes()
                .get(0);
        assertThat(paperDefault.prunedLinks()).isNotEmpty();
        assertThat(withGap.prunedLinks()).isEmpty();
        assertThat(withGap.explain()).anySatisfy(line -> assertThat(line).contains("nothing pruned"));
    }

    @Test
    void config_tooFewFlowUnits_areRejected_becauseCallerNodesWouldGetNoUnit() {
        // With flowUnits 1 a caller node could get zero units and an empty route (fractions summing to 0).
        assertThatThrownBy(() ->
                        TestSnapshots.PAPER_ROUTING.toBuilder().flowUnits(1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flowUnits : 1 (expected: 1000 ..");
    }
}
