package dev.tailor.heart.controller;

import java.util.List;
import java.util.Map;

/**
 * What Kubernetes says about the application at one instant: its nodes with the Istio locality
 * keys that rules use for them, and its pods. Built by {@link KubernetesDiscovery}; immutable.
 *
 * @param nodes   node name → the {@code distribute} key of its locality, as {@link IstioLocality#keys}
 *                gives it ({@code region/zone/subzone}, or coarser when Istio cannot tell the node
 *                from others; {@code ""} when Istio gives its pods no region)
 * @param pods    the application's pods and the entry points' pods that are placed on a node
 * @param skipped what was left out or assumed, one line each: pods not placed yet, nodes whose rules
 *                address a whole zone, with the {@code kubectl label} command that fixes it
 * @param nodesMissingLocalityLabels nodes hosting these pods that lack a locality label Istio reads
 * @param localityProblem {@code null}, or why some node hosting these pods has no locality a rule
 *                can name (no rule may be written then)
 */
public record ClusterView(
        Map<String, String> nodes,
        List<PodInfo> pods,
        List<String> skipped,
        List<String> nodesMissingLocalityLabels,
        String localityProblem) {

    public ClusterView {
        nodes = Map.copyOf(nodes);
        pods = List.copyOf(pods);
        skipped = List.copyOf(skipped);
        nodesMissingLocalityLabels = List.copyOf(nodesMissingLocalityLabels);
    }

    /**
     * A pod.
     *
     * @param namespace     its namespace
     * @param name          its name
     * @param component     the value of the component label (= its workload)
     * @param node          the node it runs on
     * @param ready         Ready condition true <em>and</em> not terminating: a terminating pod that
     *                      still reports Ready is not a target
     * @param cpuLimitCores the sum of its app containers' CPU limits, or {@code null} when unset
     * @param entryPoint    whether it belongs to an entry point (e.g. the ingress gateway), whose
     *                      calls Tailor does not route
     */
    public record PodInfo(
            String namespace,
            String name,
            String component,
            String node,
            boolean ready,
            Double cpuLimitCores,
            boolean entryPoint) {

        /** {@code namespace/name}. */
        public String key() {
            return namespace + "/" + name;
        }
    }

    /** The pod {@code namespace/name}, or {@code null}. */
    public PodInfo pod(String namespace, String name) {
        for (PodInfo pod : pods) {
            if (pod.namespace().equals(namespace) && pod.name().equals(name)) {
                return pod;
            }
        }
        return null;
    }
}
