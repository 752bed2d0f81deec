package dev.tailor.sim.cluster;

/**
 * A component: its replicas, its CPU cost per request and the stages of calls a request makes.
 *
 * <p>Its <em>endpoints</em> are the replicas that are Ready, what Kubernetes puts in the Service's
 * EndpointSlice and the mesh gives every proxy: a replica that crashed and failed its readiness probes,
 * or one being restarted, is not among them. Policies route over the endpoints; when none is Ready they
 * fall back to all replicas (a call then goes somewhere rather than nowhere).
 */
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
    /** The Ready replicas, in replica order; all replicas when none is Ready. */
    SimReplica[] endpoints = new SimReplica[0];
    /** {@code endpointsByNode[node]}: the Ready replicas on that node (possibly empty). */
    SimReplica[][] endpointsByNode;
    /** Incremented whenever the endpoints change, so policies can drop state about departed replicas. */
    int endpointsVersion;

    SimComponent(int index, String name, double meanWorkNanos, int nodes) {
        this.index = index;
        this.name = name;
        this.meanWorkNanos = meanWorkNanos;
        this.replicasByNode = new SimReplica[nodes][0];
        this.endpointsByNode = new SimReplica[nodes][0];
    }

    void add(SimReplica replica) {
        replicas = java.util.Arrays.copyOf(replicas, replicas.length + 1);
        replicas[replicas.length - 1] = replica;
        SimReplica[] onNode = replicasByNode[replica.node.index];
        onNode = java.util.Arrays.copyOf(onNode, onNode.length + 1);
        onNode[onNode.length - 1] = replica;
        replicasByNode[replica.node.index] = onNode;
        updateEndpoints();
    }

    /** Recomputes the endpoints from the replicas' readiness. */
    void updateEndpoints() {
        int ready = 0;
        for (SimReplica replica : replicas) {
            if (replica.ready) {
                ready++;
            }
        }
        if (ready == 0) {
            endpoints = replicas.clone();
        } else {
            endpoints = new SimReplica[ready];
            int k = 0;
            for (SimReplica replica : replicas) {
                if (replica.ready) {
                    endpoints[k++] = replica;
                }
            }
        }
        for (int n = 0; n < replicasByNode.length; n++) {
            SimReplica[] onNode = replicasByNode[n];
            int count = 0;
            for (SimReplica replica : onNode) {
                if (replica.ready) {
                    count++;
                }
            }
            SimReplica[] readyOnNode = new SimReplica[count];
            int k = 0;
            for (SimReplica replica : onNode) {
                if (replica.ready) {
                    readyOnNode[k++] = replica;
                }
            }
            endpointsByNode[n] = readyOnNode;
        }
        endpointsVersion++;
    }
}
