package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the application's pods and the cluster's nodes with the fabric8 client
 * (docs/design.md#metrics-to-rules). A pod is a target when it is on a node, its Ready condition is
 * true and it is not terminating; a pod not yet on a node is left out with a reason. Nodes get the locality keys of
 * {@link IstioLocality#keys}: Istio's own locality of the pods on them, so that every rule can match.
 */
public final class KubernetesDiscovery {

    private static final String SIDECAR = "istio-proxy";

    private KubernetesDiscovery() {}

    /** Lists nodes and pods once from the API server behind {@code client}. */
    public static ClusterView discover(KubernetesClient client, ControllerConfig.Kubernetes config) {
        return discover(ClusterReader.of(client), config);
    }

    /** Lists nodes and pods once from {@code cluster}: a live API server or a recording. */
    public static ClusterView discover(ClusterReader cluster, ControllerConfig.Kubernetes config) {
        Map<String, Map<String, String>> nodes = new TreeMap<>();
        for (Node node : cluster.nodes()) {
            nodes.put(node.getMetadata().getName(), labels(node.getMetadata().getLabels()));
        }
        List<ClusterView.PodInfo> pods = new ArrayList<>();
        List<IstioLocality.PodOnNode> placed = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (String namespace : config.namespaces()) {
            for (Pod pod : cluster.podsWithLabel(namespace, config.componentLabel())) {
                add(
                        pod,
                        pod.getMetadata().getLabels().get(config.componentLabel()),
                        false,
                        nodes,
                        pods,
                        placed,
                        skipped);
            }
        }
        for (String entry : config.entryPoints()) {
            EntryPoint point = EntryPoint.parse(entry, config.componentLabel());
            for (Pod pod : cluster.podsWithLabels(point.namespace(), point.selector())) {
                add(pod, point.name(), true, nodes, pods, placed, skipped);
            }
        }
        IstioLocality.Keys keys = IstioLocality.keys(nodes, placed);
        skipped.addAll(keys.notes());
        return new ClusterView(keys.keyOfNode(), pods, skipped, keys.nodesMissingLabels(), keys.problem());
    }

    private static Map<String, String> labels(Map<String, String> labels) {
        return labels == null ? Map.of() : labels;
    }

    private static void add(
            Pod pod,
            String component,
            boolean entryPoint,
            Map<String, Map<String, String>> nodes,
            List<ClusterView.PodInfo> pods,
            List<IstioLocality.PodOnNode> placed,
            List<String> skipped) {
        String name = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
        String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (node == null || node.isBlank()) {
            skipped.add(name + ": not scheduled on a node yet");
            return;
        }
        if (!nodes.containsKey(node)) {
            skipped.add(name + ": on node " + node + ", which the node list does not have");
            return;
        }
        boolean terminating = pod.getMetadata().getDeletionTimestamp() != null;
        boolean ready = !terminating
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(conditionStatus(c)));
        pods.add(new ClusterView.PodInfo(
                pod.getMetadata().getNamespace(),
                pod.getMetadata().getName(),
                component,
                node,
                ready,
                cpuLimit(pod),
                entryPoint));
        placed.add(
                new IstioLocality.PodOnNode(name, node, labels(pod.getMetadata().getLabels())));
    }

    private static String conditionStatus(PodCondition condition) {
        return condition.getStatus();
    }

    private static Double cpuLimit(Pod pod) {
        double total = 0;
        boolean any = false;
        for (Container container : pod.getSpec().getContainers()) {
            if (SIDECAR.equals(container.getName())
                    || container.getResources() == null
                    || container.getResources().getLimits() == null) {
                continue;
            }
            Quantity cpu = container.getResources().getLimits().get("cpu");
            if (cpu != null) {
                total += Quantity.getAmountInBytes(cpu).doubleValue();
                any = true;
            }
        }
        return any ? total : null;
    }
}
