package dev.tailor.sim.cluster;

/**
 * A worker node of the simulated cluster: cores shared by the replicas on it. Scenario events may slow
 * its cores for a while (a noisy neighbour) or take some of them (a CPU antagonist outside the pods:
 * the replicas share what is left).
 *
 * <p>Maintainer note: when the replicas together want more cores than the node has, the cores are
 * shared max-min fairly (equal CPU weights, as CFS gives containers with equal requests): a replica
 * wanting less than an equal share gets what it wants, the rest split the remainder. A node has a
 * handful of replicas, so a sort-free water-filling over them is cheaper than anything clever.
 */
final class SimNode {

    final int index;
    final String name;
    final String locality;
    final double cores;
    /** Work a core does per ns, relative to the reference core; a noisy neighbour lowers it for a while. */
    double speedFactor;
    /** Cores taken by a co-located antagonist outside the simulated pods (0 when none). */
    double antagonistCores;

    SimReplica[] replicas = new SimReplica[0];
    private double[] want = new double[0];
    private boolean[] satisfied = new boolean[0];

    SimNode(int index, String name, String locality, double cores, double speedFactor) {
        this.index = index;
        this.name = name;
        this.locality = locality;
        this.cores = cores;
        this.speedFactor = speedFactor;
    }

    void add(SimReplica replica) {
        replicas = java.util.Arrays.copyOf(replicas, replicas.length + 1);
        replicas[replicas.length - 1] = replica;
        want = new double[replicas.length];
        satisfied = new boolean[replicas.length];
    }

    /** The node's per-core speed becomes {@code newSpeedFactor} at {@code nowNanos} (a noisy neighbour). */
    void setSpeedFactor(double newSpeedFactor, long nowNanos) {
        for (SimReplica replica : replicas) {
            replica.beforeSpeedChange(nowNanos);
        }
        speedFactor = newSpeedFactor;
        for (SimReplica replica : replicas) {
            replica.afterSpeedChange(nowNanos);
        }
    }

    /** An antagonist takes {@code newAntagonistCores} of the node's cores from {@code nowNanos} on. */
    void setAntagonistCores(double newAntagonistCores, long nowNanos) {
        antagonistCores = newAntagonistCores;
        reallocate(null, nowNanos);
    }

    /**
     * Recomputes every replica's cores after {@code changed} changed its number of requests or its
     * throttling; reschedules the replicas whose speed changed. Each replica must be advanced to
     * {@code nowNanos} before its rate changes, which {@link SimReplica#setCores} does.
     */
    void reallocate(SimReplica changed, long nowNanos) {
        double total = 0;
        for (int i = 0; i < replicas.length; i++) {
            want[i] = replicas[i].wantCores();
            total += want[i];
        }
        double cores = Math.max(0, this.cores - antagonistCores);
        if (total <= cores) {
            for (int i = 0; i < replicas.length; i++) {
                replicas[i].setCores(want[i], nowNanos, replicas[i] == changed);
            }
            return;
        }
        // Water-filling: raise a common level until the cores are used up.
        double left = cores;
        int unsatisfied = replicas.length;
        boolean[] done = satisfied;
        java.util.Arrays.fill(done, false);
        boolean progress = true;
        while (progress && unsatisfied > 0) {
            progress = false;
            double level = left / unsatisfied;
            for (int i = 0; i < replicas.length; i++) {
                if (!done[i] && want[i] <= level) {
                    done[i] = true;
                    left -= want[i];
                    unsatisfied--;
                    progress = true;
                }
            }
        }
        double level = unsatisfied == 0 ? 0 : left / unsatisfied;
        for (int i = 0; i < replicas.length; i++) {
            replicas[i].setCores(done[i] ? want[i] : level, nowNanos, replicas[i] == changed);
        }
    }
}
