package dev.tailor.heart.controller;

import dev.tailor.heart.Call;
import dev.tailor.heart.LinkDelay;
import dev.tailor.heart.Node;
import dev.tailor.heart.Replica;
import dev.tailor.heart.Snapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Joins what Kubernetes says ({@link ClusterView}) with what Prometheus measured
 * ({@link MetricsReader.Metrics}) into HEART's {@link Snapshot}. Missing metrics stay missing
 * ({@code null}), never zero.
 *
 * <p>Our reading where the paper is silent: a component is the value of the component label and is
 * also its workload's name, which is what Istio's {@code destination_workload} reports; component
 * names must be unique across the configured namespaces. Calls from a pod of an entry point become
 * calls of the entry point (named by its workload) with a per-node split; calls from pods that are
 * neither are left out with a note. Only nodes that host a pod appear; a node pair without a
 * measured delay is left for HEART's unmeasured-link rule, except a node to itself, which takes
 * {@link ControllerConfig#sameNodeDelayMillis()}.
 */
public final class SnapshotAssembler {

    /** The snapshot and what was left out. */
    public record Result(Snapshot snapshot, List<String> notes) {}

    private SnapshotAssembler() {}

    /**
     * @throws IllegalArgumentException if two namespaces have a component of the same name
     */
    public static Result assemble(ClusterView view, MetricsReader.Metrics metrics, ControllerConfig config) {
        List<String> notes = new ArrayList<>(view.skipped());
        notes.addAll(metrics.notes());
        Map<String, String> componentNamespace = new TreeMap<>();
        Set<String> usedNodes = new TreeSet<>();
        List<Replica> replicas = new ArrayList<>();
        List<String> withoutCpu = new ArrayList<>();
        List<String> withoutServed = new ArrayList<>();
        for (ClusterView.PodInfo pod : view.pods()) {
            usedNodes.add(pod.node());
            if (pod.entryPoint()) {
                continue;
            }
            if (pod.ready()) {
                if (unsaid(metrics.cpuCores(), "cpuCores", pod.key(), metrics.notes())) {
                    withoutCpu.add(pod.key());
                }
                if (unsaid(metrics.servedRequestsPerSecond(), "servedRequestsPerSecond", pod.key(), metrics.notes())) {
                    withoutServed.add(pod.key());
                }
            }
            String earlier = componentNamespace.putIfAbsent(pod.component(), pod.namespace());
            if (earlier != null && !earlier.equals(pod.namespace())) {
                throw new IllegalArgumentException(
                        "component " + pod.component() + " exists in namespaces " + earlier + " and " + pod.namespace()
                                + " (expected: component names unique across kubernetes.namespaces)");
            }
            replicas.add(new Replica(
                    pod.name(),
                    pod.component(),
                    pod.node(),
                    pod.ready(),
                    metrics.cpuCores().get(pod.key()),
                    pod.cpuLimitCores(),
                    metrics.servedRequestsPerSecond().get(pod.key())));
        }

        noSeries(notes, "cpuCores", withoutCpu);
        noSeries(notes, "servedRequestsPerSecond", withoutServed);

        Map<List<String>, Double> edgeRate = new TreeMap<>(java.util.Comparator.comparing(Object::toString));
        Map<List<String>, Map<String, Double>> entryByNode =
                new TreeMap<>(java.util.Comparator.comparing(Object::toString));
        metrics.callsPerSecond().forEach((callerKey, byCallee) -> {
            int slash = callerKey.indexOf('/');
            ClusterView.PodInfo caller = view.pod(callerKey.substring(0, slash), callerKey.substring(slash + 1));
            if (caller == null) {
                // A pod discovery left out (not placed yet, on a node not listed) is said so above.
                boolean leftOut = view.skipped().stream().anyMatch(s -> s.startsWith(callerKey + ": "));
                notes.add("calls from " + callerKey
                        + (leftOut
                                ? ": left out with their pod"
                                : ": not a pod of the application or of an entry point: left out"));
                return;
            }
            byCallee.forEach((calleeKey, rate) -> {
                String workload = calleeKey.substring(calleeKey.indexOf('/') + 1);
                String namespace = calleeKey.substring(0, calleeKey.indexOf('/'));
                if (!namespace.equals(componentNamespace.get(workload))) {
                    return; // a call leaving the application (a database, another team's service)
                }
                List<String> edge = List.of(caller.component(), workload);
                edgeRate.merge(edge, rate, Double::sum);
                if (caller.entryPoint()) {
                    entryByNode.computeIfAbsent(edge, k -> new TreeMap<>()).merge(caller.node(), rate, Double::sum);
                }
            });
        });
        List<Call> calls = new ArrayList<>();
        edgeRate.forEach((edge, rate) -> calls.add(new Call(edge.get(0), edge.get(1), rate, entryByNode.get(edge))));

        List<Node> nodes = new ArrayList<>();
        for (String node : usedNodes) {
            nodes.add(new Node(node, view.nodes().get(node), null));
        }
        List<LinkDelay> delays = new ArrayList<>();
        int unmeasured = 0;
        for (String from : usedNodes) {
            for (String to : usedNodes) {
                Double millis =
                        metrics.delayMillis().getOrDefault(from, Map.of()).get(to);
                if (millis == null && from.equals(to)) {
                    millis = config.sameNodeDelayMillis();
                }
                if (millis == null) {
                    unmeasured++;
                    continue;
                }
                delays.add(new LinkDelay(from, to, millis));
            }
        }
        if (unmeasured > 0) {
            notes.add(unmeasured + " node pair(s) have no delay in Prometheus: HEART takes the reverse direction's"
                    + " where that is measured, else the largest measured delay plus its penalty");
        }
        Snapshot snapshot = new Snapshot(config.prometheus().windowSeconds(), nodes, replicas, calls, delays);
        return new Result(snapshot, notes);
    }

    /**
     * Whether a ready pod has no value of {@code query} that nothing has said so for: the answer had series
     * of other pods but none of it. An answer with no usable series at all, and a pod's NaN, are noted by
     * the reader already.
     */
    private static boolean unsaid(Map<String, Double> values, String query, String pod, List<String> readerNotes) {
        return !values.isEmpty()
                && !values.containsKey(pod)
                && readerNotes.stream().noneMatch(n -> n.startsWith(query + " " + pod + ":"));
    }

    private static void noSeries(List<String> notes, String query, List<String> pods) {
        if (!pods.isEmpty()) {
            notes.add(query + ": no series of ready pod(s) " + pods + ": no data for them this round, not zero"
                    + " (is each scraped, with its namespace and pod labels?)");
        }
    }
}
