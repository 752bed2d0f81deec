package dev.tailor.heart.controller;

import java.util.List;
import java.util.Map;

/**
 * What Kubernetes says about the application at one instant: its nodes with their Istio
 * localities, and its pods. Built by {@link KubernetesDiscovery}; immutable.
 *
 * @param nodes   node name → locality {@code region/zone/subzone} (DESIGN.md: node = sub-zone)
 * @param pods    the application's pods and the entry points' pods that are placed on a node
 * @param skipped why some pods were left out (e.g. not scheduled yet), one line each
 */
public record ClusterView(Map<String, String> nodes, List<PodInfo> pods, List<String> skipped) {

    public ClusterView {
        nodes = Map.copyOf(nodes);
        pods = List.copyOf(pods);
        skipped = List.copyOf(skipped);
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
    public record PodInfo(String namespace, String name, String component, String node, boolean ready,
            Double cpuLimitCores, boolean entryPoint) {

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
