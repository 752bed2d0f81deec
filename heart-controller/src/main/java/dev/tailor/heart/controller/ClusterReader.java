package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;

/**
 * What a round reads from Kubernetes: the nodes, the pods of a namespace chosen by their labels, and
 * the DestinationRules Tailor owns. {@link #of(KubernetesClient)} reads a live API server;
 * {@link RecordedCluster} reads objects saved with {@code kubectl get ... -o yaml}, so a round can be
 * tried without a cluster. Calls may throw {@link io.fabric8.kubernetes.client.KubernetesClientException}.
 */
public interface ClusterReader {

    /** Every node. */
    List<Node> nodes();

    /** The pods in {@code namespace} that carry the label {@code key} (any value). */
    List<Pod> podsWithLabel(String namespace, String key);

    /** The pods in {@code namespace} whose labels include every entry of {@code labels}. */
    List<Pod> podsWithLabels(String namespace, Map<String, String> labels);

    /**
     * The DestinationRules in {@code namespace} labelled {@value DestinationRules#MANAGED_BY_LABEL}={@value
     * DestinationRules#MANAGED_BY}.
     */
    List<GenericKubernetesResource> ownedRules(String namespace);

    /** Where the objects come from, for messages: the API server's URL, or the recording's file. */
    String address();

    /** The live cluster behind {@code client}; the label selections are the API server's. */
    static ClusterReader of(KubernetesClient client) {
        return new ClusterReader() {
            @Override
            public List<Node> nodes() {
                return client.nodes().list().getItems();
            }

            @Override
            public List<Pod> podsWithLabel(String namespace, String key) {
                return client.pods()
                        .inNamespace(namespace)
                        .withLabel(key)
                        .list()
                        .getItems();
            }

            @Override
            public List<Pod> podsWithLabels(String namespace, Map<String, String> labels) {
                return client.pods()
                        .inNamespace(namespace)
                        .withLabels(labels)
                        .list()
                        .getItems();
            }

            @Override
            public List<GenericKubernetesResource> ownedRules(String namespace) {
                return client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace(namespace)
                        .withLabel(DestinationRules.MANAGED_BY_LABEL, DestinationRules.MANAGED_BY)
                        .list()
                        .getItems();
            }

            @Override
            public String address() {
                return String.valueOf(client.getMasterUrl());
            }
        };
    }
}
