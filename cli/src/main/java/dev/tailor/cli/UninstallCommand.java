package dev.tailor.cli;

import dev.tailor.heart.controller.ConfigFiles;
import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.KubeClients;
import dev.tailor.heart.controller.KubernetesErrors;
import dev.tailor.heart.controller.Uninstall;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.PrintWriter;
import java.nio.file.Path;
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
        sortOptions = false,
        description = {
            "Deletes every DestinationRule labelled app.kubernetes.io/managed-by=tailor-heart, in all namespaces, and"
                    + " the controller's state ConfigMap. Istio then routes as it did before HEART. Stop the"
                    + " controller first, or it writes them again.",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart uninstall --config heart.yaml --dry-run   # list what would be deleted",
            "  tailor heart uninstall --config heart.yaml",
            "",
            "Exit codes: 0 done, 1 the cluster did not answer or refused, 2 bad input."
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
        try (KubernetesClient client = kubernetes(kubeconfig, null)) {
            try {
                int rules = Uninstall.run(client, settings, dryRun, out);
                spec.commandLine()
                        .getErr()
                        .println("tailor: " + rules + " DestinationRule(s) " + (dryRun ? "would be" : "were")
                                + " deleted");
                return 0;
            } catch (KubernetesClientException e) {
                // One line, as heart run and check say it: the verb and resource and the API server's answer, or
                // which address did not answer and why (not the client's "Operation: [list] ... failed.").
                String why = KubernetesErrors.describe(e, String.valueOf(client.getMasterUrl()));
                if (KubernetesErrors.unreachable(e) && KubeClients.noKubeconfig(kubeconfig)) {
                    why += "; no kubeconfig was found (no --kubeconfig, KUBECONFIG or ~/.kube/config, and not in a"
                            + " pod): point KUBECONFIG or --kubeconfig at your cluster's";
                }
                throw new CliException(why, 1, e);
            }
        }
    }

    /** {@link KubeClients#build(Path, String)}, a kubeconfig it cannot use a {@link CliException}. */
    static KubernetesClient kubernetes(Path kubeconfig, String as) {
        try {
            return KubeClients.build(kubeconfig, as);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
    }
}
