package dev.tailor.heart.controller;

import dev.tailor.heart.controller.PrometheusClient.InstantVector;
import dev.tailor.heart.controller.PrometheusClient.PrometheusException;
import dev.tailor.heart.controller.PrometheusClient.Series;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads one round's metrics from Prometheus: the four queries of {@link ControllerConfig.Queries},
 * evaluated at one instant, mapped to pods, call edges and node pairs.
 *
 * <p><b>No data is never zero.</b> A NaN or ±Inf value, a series missing from the answer, a series
 * without the labels it needs, and every series of an answer that carried warnings (partial data)
 * are absent from the result — the planner then applies its missing-data rules. A series with fewer
 * than two samples in the rate window has no rate and is missing, which is how stale series drop
 * out. Each case is noted. An unreachable Prometheus or a failed query is a
 * {@link PrometheusException}: the round keeps the last plan.
 */
public final class MetricsReader {

    /**
     * One round's metrics.
     *
     * @param cpuCores                {@code namespace/pod} → cores
     * @param servedRequestsPerSecond {@code namespace/pod} → requests/s served
     * @param callsPerSecond          caller {@code namespace/pod} → callee {@code namespace/workload} → calls/s
     * @param delayMillis             from node → to node → one-way ms
     * @param notes                   what was dropped and why
     */
    public record Metrics(
            Map<String, Double> cpuCores,
            Map<String, Double> servedRequestsPerSecond,
            Map<String, Map<String, Double>> callsPerSecond,
            Map<String, Map<String, Double>> delayMillis,
            List<String> notes) {}

    private final PrometheusClient prometheus;
    private final ControllerConfig config;

    public MetricsReader(PrometheusClient prometheus, ControllerConfig config) {
        this.prometheus = prometheus;
        this.config = config;
    }

    /**
     * Runs the four queries at {@code time}.
     *
     * @throws PrometheusException if any query fails; nothing is returned then
     */
    public Metrics read(Instant time) throws PrometheusException {
        ControllerConfig.Queries queries = config.prometheus().queries();
        ControllerConfig.Labels labels = config.prometheus().labels();
        List<String> notes = new ArrayList<>();

        Map<String, Double> cpu = new TreeMap<>();
        for (Series s : usable("cpuCores", queries.cpuCores(), time, notes)) {
            String pod = podKey(s, labels, "cpuCores", notes);
            if (pod != null && finite(s, "cpuCores " + pod, notes)) {
                cpu.merge(pod, s.value(), Double::sum);
            }
        }
        Map<String, Double> served = new TreeMap<>();
        for (Series s : usable("servedRequestsPerSecond", queries.servedRequestsPerSecond(), time, notes)) {
            String pod = podKey(s, labels, "servedRequestsPerSecond", notes);
            if (pod != null && finite(s, "servedRequestsPerSecond " + pod, notes)) {
                served.merge(pod, s.value(), Double::sum);
            }
        }
        Map<String, Map<String, Double>> calls = new TreeMap<>();
        for (Series s : usable("callsPerSecond", queries.callsPerSecond(), time, notes)) {
            String pod = podKey(s, labels, "callsPerSecond", notes);
            String workload = s.label(labels.destinationWorkload());
            String workloadNamespace = s.label(labels.destinationWorkloadNamespace());
            if (pod == null) {
                continue;
            }
            if (workload == null || workload.isEmpty() || "unknown".equals(workload)) {
                notes.add("callsPerSecond: a series of " + pod + " has no " + labels.destinationWorkload()
                        + " label (calls to outside the mesh?): left out");
                continue;
            }
            String callee = (workloadNamespace == null || workloadNamespace.isEmpty()
                            ? s.label(labels.namespace())
                            : workloadNamespace)
                    + "/" + workload;
            if (finite(s, "callsPerSecond " + pod + " -> " + callee, notes)) {
                calls.computeIfAbsent(pod, k -> new TreeMap<>()).merge(callee, s.value(), Double::sum);
            }
        }
        Map<String, Map<String, Double>> delays = new TreeMap<>();
        String prefix = config.prometheus().delayTargetPrefix();
        for (Series s : usable("delaySeconds", queries.delaySeconds(), time, notes)) {
            String from = s.label(labels.delayFromNode());
            String target = s.label(labels.delayTarget());
            if (from == null || target == null || !target.startsWith(prefix)) {
                notes.add("delaySeconds: a series without " + labels.delayFromNode() + " or a " + labels.delayTarget()
                        + " starting with " + prefix + " (" + s.labels() + "): left out");
                continue;
            }
            String to = target.substring(prefix.length());
            if (finite(s, "delaySeconds " + from + " -> " + to, notes) && s.value() >= 0) {
                delays.computeIfAbsent(from, k -> new TreeMap<>())
                        .put(to, s.value() * 1_000 * config.prometheus().delayOneWayFraction());
            }
        }
        return new Metrics(cpu, served, calls, delays, notes);
    }

    /** The query's series, or none when the answer carried warnings (partial data: no data). */
    private List<Series> usable(String name, String template, Instant time, List<String> notes)
            throws PrometheusException {
        InstantVector vector = prometheus.query(config.query(template), time);
        if (!vector.warnings().isEmpty()) {
            notes.add(name + ": Prometheus warned " + vector.warnings() + ": the answer may be partial, so all "
                    + vector.series().size() + " series count as no data this round");
            return List.of();
        }
        if (vector.series().isEmpty()) {
            notes.add(name + ": empty answer: no data for any " + (name.equals("delaySeconds") ? "node pair" : "pod")
                    + " this round");
        }
        return vector.series();
    }

    private static String podKey(Series s, ControllerConfig.Labels labels, String query, List<String> notes) {
        String namespace = s.label(labels.namespace());
        String pod = s.label(labels.pod());
        if (namespace == null || pod == null) {
            notes.add(query + ": a series without " + labels.namespace() + " and " + labels.pod() + " labels ("
                    + s.labels() + "): left out; keep them in the query's 'by (...)'");
            return null;
        }
        return namespace + "/" + pod;
    }

    private static boolean finite(Series s, String what, List<String> notes) {
        if (Double.isFinite(s.value())) {
            return true;
        }
        notes.add(what + ": " + s.value() + ": no data, not zero");
        return false;
    }
}
