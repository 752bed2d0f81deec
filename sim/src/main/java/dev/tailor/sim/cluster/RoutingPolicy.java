package dev.tailor.sim.cluster;

/**
 * How a caller's proxy picks the replica of a callee for each call. A policy sees the simulated
 * cluster only as the real one would: its own proxy's counters, and the simulated Prometheus.
 *
 * <p>Driven from the simulation's one thread; implementations need no locking.
 */
interface RoutingPolicy {

    /** Called once, after the cluster is built and before the first request. */
    default void start(ClusterModel model) {}

    /**
     * The replica of {@code callee} that the call from {@code from}, sent at {@code nowNanos}, goes to:
     * one of the callee's endpoints ({@link SimComponent#endpoints}, the ready replicas), or any of its
     * replicas when none is ready.
     */
    SimReplica choose(Proxy from, SimComponent callee, long nowNanos);

    /**
     * The response to a call that {@code from} sent to {@code replica} at {@code sentNanos} reached it
     * at {@code nowNanos} (an error response too: a call lost to a crash is answered when the replica
     * restarts).
     */
    default void onResponse(Proxy from, SimReplica replica, long sentNanos, long nowNanos) {}

    /** Simulated ns between {@link #tick} calls; 0 for none. */
    default long tickIntervalNanos() {
        return 0;
    }

    /** Simulated ns of the first {@link #tick}. */
    default long firstTickNanos() {
        return tickIntervalNanos();
    }

    /** Periodic work: a controller round, a weight update. */
    default void tick(long nowNanos) {}

    /** Planning statistics, for policies that plan in rounds; {@code null} otherwise. */
    default RunResult.Planning planning() {
        return null;
    }
}
