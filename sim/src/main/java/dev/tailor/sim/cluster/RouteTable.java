package dev.tailor.sim.cluster;

import org.apache.commons.rng.UniformRandomProvider;

/**
 * Per (caller, callee, caller node): how the caller node's calls split over the callee's nodes, as
 * Istio's {@code localityLbSetting.distribute} has Envoy apply it; inside the chosen node, Envoy's
 * LEAST_REQUEST picks the replica (power of two choices on the proxy's own active requests).
 * Filled once, then read; a policy swaps in a new table each round.
 *
 * <p>Envoy picks a locality by weight with an earliest-deadline-first scheduler (each pick of
 * locality k moves its deadline by 1 / weight_k), not by a random draw, so each proxy keeps its own
 * deadlines here, started at random offsets when a new table arrives — as Envoy randomises the start
 * of a new scheduler. A deterministic interleaving spreads a proxy's calls more evenly in time than
 * independent draws, which matters for queueing at the callee.
 */
final class RouteTable {

    /** {@code cumulative[callerSlot][callee][fromNode]}: cumulative fractions over {@code nodes[..]}. */
    private final double[][][][] cumulative;

    private final int[][][][] nodesOf;

    RouteTable(int components, int nodes) {
        cumulative = new double[components + 1][components][nodes][];
        nodesOf = new int[components + 1][components][nodes][];
    }

    /** Caller slot: 0 for the ingress, component index + 1 otherwise. */
    static int slot(Proxy proxy) {
        return proxy.component == null ? 0 : proxy.component.index + 1;
    }

    /**
     * Sets the split of calls from caller slot {@code caller} on node {@code fromNode} to
     * {@code callee}: {@code fractionByNode[n]} ≥ 0, need not be normalised; all zero clears it.
     */
    void set(int caller, int callee, int fromNode, double[] fractionByNode) {
        int count = 0;
        double total = 0;
        for (double f : fractionByNode) {
            if (f > 0) {
                count++;
                total += f;
            }
        }
        if (count == 0) {
            cumulative[caller][callee][fromNode] = null;
            nodesOf[caller][callee][fromNode] = null;
            return;
        }
        double[] cum = new double[count];
        int[] at = new int[count];
        double sum = 0;
        int k = 0;
        for (int n = 0; n < fractionByNode.length; n++) {
            if (fractionByNode[n] > 0) {
                sum += fractionByNode[n] / total;
                cum[k] = sum;
                at[k++] = n;
            }
        }
        cum[count - 1] = 1.0;
        cumulative[caller][callee][fromNode] = cum;
        nodesOf[caller][callee][fromNode] = at;
    }

    boolean has(int caller, int callee, int fromNode) {
        return cumulative[caller][callee][fromNode] != null;
    }

    /**
     * A replica for the call, or {@code null} when this table has no split for it or none of the split's
     * nodes has a Ready replica of the callee. A node of the split without Ready replicas is skipped, as
     * Envoy gives a locality without healthy hosts no weight.
     */
    SimReplica pick(Proxy from, SimComponent callee, UniformRandomProvider rng) {
        double[] cum = cumulative[slot(from)][callee.index][from.node.index];
        if (cum == null) {
            return null;
        }
        int[] at = nodesOf[slot(from)][callee.index][from.node.index];
        SimReplica[][] byNode =
                callee.endpoints.length == callee.replicas.length ? callee.replicasByNode : callee.endpointsByNode;
        int k = 0;
        if (cum.length == 1 && byNode[at[0]].length == 0) {
            return null;
        }
        if (cum.length > 1) {
            if (from.localityTable != this) {
                from.localityTable = this;
                from.localityDeadlines = new double[cumulative[0].length][];
            }
            double[] deadlines = from.localityDeadlines[callee.index];
            if (deadlines == null) {
                deadlines = from.localityDeadlines[callee.index] = new double[cum.length];
                for (int i = 0; i < cum.length; i++) {
                    deadlines[i] = rng.nextDouble() / weight(cum, i);
                }
            }
            k = -1;
            for (int i = 0; i < cum.length; i++) {
                if (byNode[at[i]].length > 0 && (k < 0 || deadlines[i] < deadlines[k])) {
                    k = i;
                }
            }
            if (k < 0) {
                return null;
            }
            deadlines[k] += 1 / weight(cum, k);
        }
        SimReplica[] group = byNode[at[k]];
        return group.length == 0 ? null : LeastRequestPolicy.powerOfTwo(from, group, rng);
    }

    private static double weight(double[] cumulative, int i) {
        return i == 0 ? cumulative[0] : cumulative[i] - cumulative[i - 1];
    }
}
