package dev.tailor.sim.cluster;

/**
 * The sidecar proxy through which a caller sends its calls: a replica's Envoy, or the ingress
 * gateway on a node for user requests. It counts its own outstanding requests per destination
 * replica (what Envoy's LEAST_REQUEST sees) and its calls per callee component (what
 * {@code istio_requests_total{reporter="source"}} exports).
 */
final class Proxy {

    final SimNode node;
    /** The calling component, or {@code null} for the ingress gateway. */
    final SimComponent component;
    /** The calling replica, or {@code null} for the ingress gateway. */
    final SimReplica replica;
    /** Index among all proxies: ingress proxies first (one per node), then one per replica. */
    int id;
    /** Outstanding requests from this proxy, per destination replica id. */
    int[] active;
    /** Calls answered, per callee component index. */
    long[] callsAnswered;
    /** Calls the scraped metric counted beyond those answered, per callee (a calls-overcount event). */
    double[] overcountedCalls;
    /** How many times the scraped call metric counts each call: 1 but during a calls-overcount event. */
    double callsCountedFactor = 1;
    /** Per-policy state (e.g. a weighted round-robin scheduler), owned by the policy. */
    Object policyState;
    /** The route table whose locality deadlines {@link #localityDeadlines} holds ({@link RouteTable}). */
    RouteTable localityTable;
    /** Envoy's locality scheduler: per callee component, the deadline of each node of the split. */
    double[][] localityDeadlines;

    Proxy(SimNode node, SimComponent component, SimReplica replica) {
        this.node = node;
        this.component = component;
        this.replica = replica;
    }

    void size(int replicas, int components) {
        active = new int[replicas];
        callsAnswered = new long[components];
        overcountedCalls = new double[components];
    }
}
