package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintWriter;
import java.util.List;

/**
 * What {@code tailor heart uninstall} does: deletes every DestinationRule Tailor manages (labelled
 * {@link DestinationRules#MANAGED_BY_LABEL}) in all namespaces, and the controller's state ConfigMap,
 * printing a line for each; with {@code dryRun} it only prints them.
 */
public final class Uninstall {

    private Uninstall() {}

    /**
     * Deletes (or, with {@code dryRun}, lists) Tailor's rules and state on {@code client}'s cluster.
     *
     * @return how many DestinationRules were (or would be) deleted
     * @throws io.fabric8.kubernetes.client.KubernetesClientException when the API server cannot be reached
     */
    public static int run(KubernetesClient client, ControllerConfig settings, boolean dryRun, PrintWriter out) {
        List<GenericKubernetesResource> rules = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .withLabel(DestinationRules.MANAGED_BY_LABEL, DestinationRules.MANAGED_BY)
                .list()
                .getItems();
        for (GenericKubernetesResource rule : rules) {
            out.println((dryRun ? "would delete" : "delete") + " DestinationRule "
                    + rule.getMetadata().getNamespace() + "/"
                    + rule.getMetadata().getName());
            if (!dryRun) {
                client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace(rule.getMetadata().getNamespace())
                        .withName(rule.getMetadata().getName())
                        .delete();
            }
        }
        String state = settings.kubernetes().stateConfigMap();
        if (!state.isEmpty()) {
            String[] location = state.split("/", 2);
            if (client.configMaps()
                            .inNamespace(location[0])
                            .withName(location[1])
                            .get()
                    != null) {
                out.println((dryRun ? "would delete" : "delete") + " ConfigMap " + state);
                if (!dryRun) {
                    client.configMaps()
                            .inNamespace(location[0])
                            .withName(location[1])
                            .delete();
                }
            }
        }
        return rules.size();
    }
}
