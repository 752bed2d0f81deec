package dev.tailor.cli;

import dev.tailor.heart.controller.ControllerConfig;
import dev.tailor.heart.controller.KubeClients;
import dev.tailor.heart.controller.Preflight;
import dev.tailor.heart.controller.PrometheusClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tailor heart check}: what the controller needs from the cluster, checked before installing it. */
@Command(
        name = "check",
        mixinStandardHelpOptions = true,
        versionProvider = Tailor.Version.class,
        usageHelpWidth = 110,
        sortOptions = false,
        description = {
            "Checks what the HEART controller needs before you install it, one line per check (ok, warn, fail):"
                    + " the Kubernetes API answers; the permissions a round uses are granted; Istio serves"
                    + " networking.istio.io/v1 DestinationRules; the application's pods carry the sidecar; every"
                    + " node has the locality labels Istio reads (with the kubectl label commands that add them);"
                    + " Prometheus answers each configured query with data; the delay exporter runs.",
            "",
            "Reads only. The controller runs the same checks when it starts.",
            ""
        },
        footer = {
            "",
            "Examples:",
            "  tailor heart check --config heart.yaml",
            "  tailor heart check --config heart.yaml --as system:serviceaccount:tailor-system:tailor-heart",
            "",
            "Exit codes: 0 no check failed (warnings allowed), 1 some check failed, 2 bad input."
        })
final class CheckCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description = "Controller configuration (YAML, or JSON when named .json), the one the controller will run"
                    + " with.")
    Path config;

    @Option(
            names = "--prometheus",
            paramLabel = "URL",
            description = "Prometheus base URL (overrides the config's" + " prometheus.url).")
    String prometheusUrl;

    @Option(names = "--kubeconfig", paramLabel = "FILE", description = "Kubeconfig to use (its current context).")
    Path kubeconfig;

    @Option(
            names = "--as",
            paramLabel = "USER",
            description = "Check as this user, e.g. the controller's service"
                    + " account system:serviceaccount:tailor-system:tailor-heart (impersonation, like kubectl --as), so the"
                    + " permission check is about its RBAC, not yours.")
    String as;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (as != null && as.isBlank()) {
            // The client would send no Impersonate-User header: the checks would run as the kubeconfig's
            // identity while the first line said "as ".
            throw new CliException("--as: \"" + as + "\" (expected: a user name, e.g."
                    + " system:serviceaccount:tailor-system:tailor-heart)");
        }
        ControllerConfig settings = RunCommand.settings(config, prometheusUrl);
        PrometheusClient prometheus = RunCommand.prometheus(settings);
        try (KubernetesClient kubernetes = UninstallCommand.kubernetes(kubeconfig, as)) {
            err.println("tailor: cluster " + kubernetes.getMasterUrl() + " (" + KubeClients.source(kubeconfig) + ")"
                    + (as == null ? "" : " as " + as));
            List<Preflight.Check> checks = new Preflight(kubernetes, prometheus, settings)
                    .noKubeconfig(KubeClients.noKubeconfig(kubeconfig))
                    .run(Instant.now());
            print(checks, out);
            long failed = checks.stream()
                    .filter(c -> c.status() == Preflight.Status.FAIL)
                    .count();
            long warned = checks.stream()
                    .filter(c -> c.status() == Preflight.Status.WARN)
                    .count();
            out.printf(
                    Locale.ROOT,
                    "%d checks: %d ok, %d warn, %d fail%s%n",
                    checks.size(),
                    checks.size() - failed - warned,
                    warned,
                    failed,
                    failed > 0 ? ": fix the failures before installing (docs/controller.md, Before you install)" : "");
            out.flush();
            return failed > 0 ? 1 : 0;
        }
    }

    /** One line per check, {@code [ok]   name  message}, each fix indented below it. */
    static void print(List<Preflight.Check> checks, PrintWriter out) {
        int width = checks.stream().mapToInt(c -> c.name().length()).max().orElse(0);
        for (Preflight.Check check : checks) {
            out.printf(
                    Locale.ROOT,
                    "%-7s %-" + width + "s  %s%n",
                    "[" + check.status().label() + "]",
                    check.name(),
                    check.message());
            for (String fix : check.fixes()) {
                out.println("        fix: " + fix);
            }
        }
    }
}
