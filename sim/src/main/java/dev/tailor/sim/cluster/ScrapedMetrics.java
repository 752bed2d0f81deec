package dev.tailor.sim.cluster;

import java.util.ArrayList;
import java.util.List;

/**
 * The simulated Prometheus: every scrape interval it samples the cumulative counters a real one
 * would scrape — cAdvisor's CPU seconds per replica, Istio's requests served per replica and calls
 * answered per (caller proxy, callee) — and keeps the samples. Policies read rates over a window
 * from them, never the simulator's internal state.
 */
final class ScrapedMetrics {

    /** One scrape. */
    record Sample(long timeNanos, double[] cpuCoreSeconds, long[] served, long[][] callsByProxy) {}

    private final ClusterModel model;
    private final List<Sample> samples = new ArrayList<>();

    ScrapedMetrics(ClusterModel model) {
        this.model = model;
    }

    void scrape(long nowNanos) {
        SimReplica[] replicas = model.replicas;
        double[] cpu = new double[replicas.length];
        long[] served = new long[replicas.length];
        for (int i = 0; i < replicas.length; i++) {
            cpu[i] = replicas[i].cpuCoreNanosAt(nowNanos) / 1e9;
            served[i] = replicas[i].served - Math.round(replicas[i].uncountedServed);
        }
        long[][] calls = new long[model.proxies.length][];
        for (int p = 0; p < calls.length; p++) {
            Proxy proxy = model.proxies[p];
            calls[p] = proxy.callsAnswered.clone();
            for (int c = 0; c < calls[p].length; c++) {
                calls[p][c] += Math.round(proxy.overcountedCalls[c]);
            }
        }
        samples.add(new Sample(nowNanos, cpu, served, calls));
    }

    /** The latest sample at or before {@code nowNanos}, or {@code null}. */
    Sample latest(long nowNanos) {
        for (int i = samples.size() - 1; i >= 0; i--) {
            if (samples.get(i).timeNanos() <= nowNanos) {
                return samples.get(i);
            }
        }
        return null;
    }

    /**
     * The latest sample at least {@code windowNanos} before {@code end}, or the earliest sample when
     * none is that old; {@code null} if that would be {@code end} itself.
     */
    Sample windowStart(Sample end, long windowNanos) {
        Sample start = null;
        for (Sample sample : samples) {
            if (sample.timeNanos() <= end.timeNanos() - windowNanos || start == null) {
                start = sample;
            }
        }
        return start == null || start == end || start.timeNanos() >= end.timeNanos() ? null : start;
    }
}
