package dev.tailor.sim.cluster;

/** A component: its replicas, its CPU cost per request and the stages of calls a request makes. */
final class SimComponent {

    final int index;
    final String name;
    /** Mean work of one request, reference-core ns. */
    final double meanWorkNanos;
    /** Stages of calls: {@code calleesByStage[s][k]} is a callee, {@code countsByStage[s][k]} how many calls. */
    int[][] calleesByStage = new int[0][];
    double[][] countsByStage = new double[0][];
    SimReplica[] replicas = new SimReplica[0];
    /** {@code replicasByNode[node]}: this component's replicas on that node (possibly empty). */
    SimReplica[][] replicasByNode;

    SimComponent(int index, String name, double meanWorkNanos, int nodes) {
        this.index = index;
        this.name = name;
        this.meanWorkNanos = meanWorkNanos;
        this.replicasByNode = new SimReplica[nodes][0];
    }

    void add(SimReplica replica) {
        replicas = java.util.Arrays.copyOf(replicas, replicas.length + 1);
        replicas[replicas.length - 1] = replica;
        SimReplica[] onNode = replicasByNode[replica.node.index];
        onNode = java.util.Arrays.copyOf(onNode, onNode.length + 1);
        onNode[onNode.length - 1] = replica;
        replicasByNode[replica.node.index] = onNode;
    }
}
