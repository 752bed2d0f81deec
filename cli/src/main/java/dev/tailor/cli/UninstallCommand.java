package dev.tailor.cli;

import dev.tailor.heart.controller.Actuator;
import dev.tailor.heart.controller.ConfigFiles;
import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.DestinationRules;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor heart uninstall}: removes every DestinationRule and the state ConfigMap Tailor wrote. */
@Command(
        name = "uninstall",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        description = {
            "Deletes every DestinationRule labelled app.kubernetes.io/managed-by=tailor-heart, in all namespaces, and"
                    + " the controller's state ConfigMap. Istio then routes as it did before HEART. Stop the"
                    + " controller first, or it writes them again.",
            ""
        })
final class UninstallCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Controller configuration (for the state ConfigMap).")
    Path config;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Kubeconfig to use (its current context).")
    Path kubeconfig;

    @Option(names = "--dry-run", description = "List what would be deleted; delete nothing.")
    boolean dryRun;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ControllerConfig settings;
        try {
            settings = config == null ? ControllerConfig.DEFAULTS : ConfigFiles.read(config);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        try (KubernetesClient client = KubeClients.build(kubeconfig)) {
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
            spec.commandLine()
                    .getErr()
                    .println("tailor: " + rules.size() + " DestinationRule(s) " + (dryRun ? "would be" : "were")
                            + " deleted");
            return 0;
        } catch (KubernetesClientException e) {
            throw new CliException("cannot reach the Kubernetes API: " + e.getMessage(), 1, e);
        }
    }
}
