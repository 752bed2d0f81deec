package dev.tailor.sim.cluster;

/**
 * gRPC's {@code weighted_round_robin} with ORCA load reports: every backend reports its QPS and CPU
 * utilisation; every weight update period (1 s) a client computes weight = qps ÷ utilisation per
 * backend; a backend's weight is used only after a blackout period (10 s) of non-zero reports, and
 * backends without a usable weight get the mean of the usable ones (all equal — round robin — while
 * fewer than two are usable). Weights are clamped to [0.1 × max, 10 × mean] as gRPC's static stride
 * scheduler does. Each calling proxy keeps its own earliest-deadline-first schedule, which the stride
 * scheduler approximates; its start is randomised after every update.
 *
 * <p>Our reading of gRFC A58 and grpc-java's {@code WeightedRoundRobinLoadBalancer}; the error
 * penalty is zero (no errors are simulated) and utilisation is the replica's CPU over its limit in
 * the last period.
 */
final class WrrOrcaPolicy implements RoutingPolicy {

    static final long UPDATE_NANOS = ClusterModel.NANOS_PER_SECOND;
    static final long BLACKOUT_NANOS = 10 * ClusterModel.NANOS_PER_SECOND;
    private static final double MAX_RATIO = 10;
    private static final double MIN_RATIO = 0.1;

    private ClusterModel model;
    private double[] weights;
    private long[] nonEmptySinceNanos;
    private double[] lastCpuCoreNanos;
    private long[] lastServed;
    private long epoch;

    /** A proxy's schedule: per callee component, per replica of it, the next deadline. */
    private static final class Schedule {
        final double[][] deadlines;
        /** Per callee, the endpoints version the deadlines were started for (a new list, a new picker). */
        final int[] endpointsVersions;

        long epoch = -1;

        Schedule(ClusterModel model) {
            deadlines = new double[model.components.length][];
            endpointsVersions = new int[model.components.length];
            for (SimComponent component : model.components) {
                deadlines[component.index] = new double[component.replicas.length];
            }
        }
    }

    @Override
    public void start(ClusterModel model) {
        this.model = model;
        int n = model.replicas.length;
        weights = new double[n];
        nonEmptySinceNanos = new long[n];
        java.util.Arrays.fill(nonEmptySinceNanos, -1);
        lastCpuCoreNanos = new double[n];
        lastServed = new long[n];
        for (Proxy proxy : model.proxies) {
            proxy.policyState = new Schedule(model);
        }
    }

    @Override
    public long tickIntervalNanos() {
        return UPDATE_NANOS;
    }

    @Override
    public void tick(long nowNanos) {
        double[] reported = new double[model.replicas.length];
        for (SimReplica replica : model.replicas) {
            double cpu = replica.cpuCoreNanosAt(nowNanos);
            double utilisation = (cpu - lastCpuCoreNanos[replica.id]) / (replica.limitCores * UPDATE_NANOS);
            double qps = (replica.served - lastServed[replica.id]) * 1e9 / UPDATE_NANOS;
            lastCpuCoreNanos[replica.id] = cpu;
            lastServed[replica.id] = replica.served;
            reported[replica.id] = utilisation > 0 && qps > 0 ? qps / utilisation : 0;
            if (reported[replica.id] > 0) {
                if (nonEmptySinceNanos[replica.id] < 0) {
                    nonEmptySinceNanos[replica.id] = nowNanos;
                }
            } else {
                nonEmptySinceNanos[replica.id] = -1;
            }
        }
        for (SimComponent component : model.components) {
            double sum = 0;
            int usable = 0;
            for (SimReplica replica : component.replicas) {
                if (usable(replica, nowNanos, reported)) {
                    sum += reported[replica.id];
                    usable++;
                }
            }
            if (usable < 2) {
                for (SimReplica replica : component.replicas) {
                    weights[replica.id] = 1;
                }
                continue;
            }
            double mean = sum / usable;
            double max = 0;
            for (SimReplica replica : component.replicas) {
                double w = usable(replica, nowNanos, reported) ? reported[replica.id] : mean;
                weights[replica.id] = Math.min(w, MAX_RATIO * mean);
                max = Math.max(max, weights[replica.id]);
            }
            for (SimReplica replica : component.replicas) {
                weights[replica.id] = Math.max(weights[replica.id], MIN_RATIO * max);
            }
        }
        epoch++;
    }

    private boolean usable(SimReplica replica, long nowNanos, double[] reported) {
        return reported[replica.id] > 0
                && nonEmptySinceNanos[replica.id] >= 0
                && nowNanos - nonEmptySinceNanos[replica.id] >= BLACKOUT_NANOS;
    }

    @Override
    public SimReplica choose(Proxy from, SimComponent callee, long nowNanos) {
        Schedule schedule = (Schedule) from.policyState;
        double[] deadlines = schedule.deadlines[callee.index];
        SimReplica[] replicas = callee.replicas;
        if (schedule.epoch != epoch) {
            schedule.epoch = epoch;
            for (double[] perCallee : schedule.deadlines) {
                java.util.Arrays.fill(perCallee, Double.NaN);
            }
        }
        if (schedule.endpointsVersions[callee.index] != callee.endpointsVersion) {
            schedule.endpointsVersions[callee.index] = callee.endpointsVersion;
            java.util.Arrays.fill(deadlines, Double.NaN);
        }
        if (Double.isNaN(deadlines[0])) {
            for (int i = 0; i < replicas.length; i++) {
                deadlines[i] = model.routingRng.nextDouble() / weight(replicas[i]);
            }
        }
        // Only the endpoints are in the picker (all replicas when none is Ready).
        boolean all = callee.endpoints.length == replicas.length;
        int best = -1;
        for (int i = 0; i < replicas.length; i++) {
            if ((all || replicas[i].ready) && (best < 0 || deadlines[i] < deadlines[best])) {
                best = i;
            }
        }
        deadlines[best] += 1 / weight(replicas[best]);
        return replicas[best];
    }

    private double weight(SimReplica replica) {
        double w = weights[replica.id];
        return w > 0 ? w : 1;
    }
}
