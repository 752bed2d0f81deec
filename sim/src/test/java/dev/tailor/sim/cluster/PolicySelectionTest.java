package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Each policy's choice statistics, on the five-worker pairwise cluster without running it. */
class PolicySelectionTest {

    private static final int PICKS = 50_000;

    private static ClusterModel model(RoutingPolicy policy) {
        ClusterModel model = new ClusterModel(Scenarios.load("paper-pairwise"), "test", policy, 100, () -> 0L);
        policy.start(model);
        return model;
    }

    private static int[] counts(ClusterModel model, Proxy from, SimComponent callee, int picks) {
        int[] counts = new int[model.replicas.length];
        for (int i = 0; i < picks; i++) {
            counts[model.policy.choose(from, callee, 0).id]++;
        }
        return counts;
    }

    @Test
    void default_isUniformOverReplicas() {
        ClusterModel model = model(new DefaultPolicy());
        SimComponent b = model.components[1];
        int[] counts = counts(model, model.proxies[0], b, PICKS);
        for (SimReplica replica : b.replicas) {
            assertThat(counts[replica.id] / (double) PICKS).isCloseTo(0.2, within(0.01));
        }
    }

    @Test
    void leastRequest_avoidsBusyReplica_asPowerOfTwoChoices() {
        // P2C with replacement picks the one busy replica only when both draws hit it: 1/25.
        ClusterModel model = model(new LeastRequestPolicy());
        SimComponent b = model.components[1];
        Proxy from = model.proxies[0];
        SimReplica busy = b.replicas[2];
        from.active[busy.id] = 10;
        int[] counts = counts(model, from, b, PICKS);
        assertThat(counts[busy.id] / (double) PICKS).isCloseTo(1.0 / 25, within(0.005));
    }

    @Test
    void leastRequest_countsOnlyTheCallingProxysRequests() {
        // Envoy knows its own outstanding requests only: another proxy's load changes nothing.
        ClusterModel model = model(new LeastRequestPolicy());
        SimComponent b = model.components[1];
        model.proxies[1].active[b.replicas[2].id] = 10;
        int[] counts = counts(model, model.proxies[0], b, PICKS);
        assertThat(counts[b.replicas[2].id] / (double) PICKS).isCloseTo(0.2, within(0.01));
    }

    @Test
    void routeTable_splitsByWeight_deterministically() {
        // Envoy's locality scheduler is earliest-deadline-first: over any window the picks follow
        // the weights within one pick per locality.
        ClusterModel model = model(new DefaultPolicy());
        SimComponent b = model.components[1];
        Proxy from = model.proxies[0];
        RouteTable table = new RouteTable(model.components.length, model.nodes.length);
        table.set(RouteTable.slot(from), b.index, from.node.index, new double[] {0.5, 0.3, 0.2, 0, 0});
        int[] counts = new int[model.replicas.length];
        for (int i = 0; i < 1_000; i++) {
            counts[table.pick(from, b, model.routingRng).id]++;
        }
        assertThat(counts[b.replicasByNode[0][0].id]).isBetween(499, 501);
        assertThat(counts[b.replicasByNode[1][0].id]).isBetween(299, 301);
        assertThat(counts[b.replicasByNode[2][0].id]).isBetween(199, 201);
        assertThat(counts[b.replicasByNode[3][0].id] + counts[b.replicasByNode[4][0].id])
                .isZero();
    }

    @Test
    void wrrOrca_weightsQpsOverUtilisation_afterTheBlackout() {
        WrrOrcaPolicy policy = new WrrOrcaPolicy();
        ClusterModel model = model(policy);
        SimComponent b = model.components[1];
        Proxy from = model.proxies[0];
        // Every second each replica serves 100 requests; replica 0 at 25 % CPU, the others at 50 %:
        // weights 400 vs 200, so replica 0 gets 2 / 6 of the calls once its weight is usable.
        for (int second = 1; second <= 12; second++) {
            for (SimReplica replica : b.replicas) {
                replica.served += 100;
                replica.cpuCoreNanos += (replica == b.replicas[0] ? 0.25 : 0.5) * 1e9;
            }
            for (SimReplica replica : model.components[0].replicas) {
                replica.served += 100;
                replica.cpuCoreNanos += 0.5e9;
            }
            policy.tick(second * WrrOrcaPolicy.UPDATE_NANOS);
            if (second == 5) {
                // Still in the 10 s blackout: round robin.
                int[] early = counts(model, from, b, 5_000);
                assertThat(early[b.replicas[0].id]).isBetween(999, 1_001);
            }
        }
        int[] counts = counts(model, from, b, 6_000);
        assertThat(counts[b.replicas[0].id]).isBetween(1_999, 2_001);
        assertThat(counts[b.replicas[1].id]).isBetween(999, 1_001);
    }

    @Test
    void localityFirst_keepsTrafficLocalUpToAnEqualShare_thenNearest() {
        // Ingress traffic measured only on w1 (100 calls/s): w1's frontend replica can take an equal
        // fifth (20 %), the rest must spill to the other nodes, nearest first.
        LocalityFirstPolicy policy = new LocalityFirstPolicy();
        ClusterModel model = model(policy);
        SimComponent a = model.components[0];
        Proxy ingressW1 = model.proxies[0];
        model.metrics.scrape(0);
        ingressW1.callsAnswered[a.index] += 3_000;
        model.metrics.scrape(30 * ClusterModel.NANOS_PER_SECOND);
        policy.tick(30 * ClusterModel.NANOS_PER_SECOND + 1);

        int[] counts = counts(model, ingressW1, a, 10_000);
        assertThat(counts[a.replicasByNode[0][0].id]).isBetween(1_990, 2_010);
        // Nodes with no measured traffic keep their calls local.
        int[] fromW2 = counts(model, model.proxies[1], a, 1_000);
        assertThat(fromW2[a.replicasByNode[1][0].id]).isEqualTo(1_000);
    }
}
