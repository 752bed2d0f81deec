package dev.tailor.sim.cluster;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.commons.rng.UniformRandomProvider;

/** Draws a run's mean link delays from a scenario's {@link ClusterScenario.NetworkSpec}. */
final class Networks {

    /** Default one-way delay of a call within a node (loopback through two sidecars), ms. */
    static final double SAME_NODE_MILLIS = 0.05;

    private Networks() {}

    /**
     * Mean one-way delays, ns, {@code [from][to]}: the measured ones where the network gives them,
     * else symmetric draws, uniform in the network's ranges in node order (i &lt; j), so the same
     * seed gives the same network for every policy.
     */
    static double[][] meanDelaysNanos(
            ClusterScenario scenario, String network, SimNode[] nodes, UniformRandomProvider rng) {
        ClusterScenario.NetworkSpec spec = scenario.networks().get(network);
        double same = spec.sameNodeMillis() == null ? SAME_NODE_MILLIS : spec.sameNodeMillis();
        Set<String> remote = new HashSet<>(spec.remoteNodes() == null ? List.of() : spec.remoteNodes());
        double[][] delays = new double[nodes.length][nodes.length];
        for (int i = 0; i < nodes.length; i++) {
            delays[i][i] = same * 1e6;
            for (int j = i + 1; j < nodes.length; j++) {
                Double forward = spec.measuredMillis(nodes[i].name, nodes[j].name);
                Double backward = spec.measuredMillis(nodes[j].name, nodes[i].name);
                if (forward != null) {
                    delays[i][j] = forward * 1e6;
                    delays[j][i] = backward * 1e6;
                    continue;
                }
                boolean slow = remote.contains(nodes[i].name) != remote.contains(nodes[j].name);
                List<Double> range = slow ? spec.remoteMillis() : spec.otherMillis();
                double millis = range.get(0) + (range.get(1) - range.get(0)) * rng.nextDouble();
                delays[i][j] = millis * 1e6;
                delays[j][i] = millis * 1e6;
            }
        }
        return delays;
    }
}
