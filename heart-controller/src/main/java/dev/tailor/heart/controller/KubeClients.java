package dev.tailor.heart.controller;

import dev.tailor.common.IoErrors;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Kubernetes client of the commands that talk to a cluster. A kubeconfig that cannot be used is an
 * {@link IllegalArgumentException} naming it ({@code --kubeconfig} or {@code KUBECONFIG}).
 */
public final class KubeClients {

    private KubeClients() {}

    /**
     * A client for {@code kubeconfig}'s current context, or, when {@code null}, the usual places
     * (KUBECONFIG, ~/.kube/config, a pod's service account).
     */
    public static KubernetesClient build(Path kubeconfig) {
        return build(kubeconfig, null);
    }

    /** Like {@link #build(Path)}, impersonating {@code as} (a user name, as kubectl's --as) unless null. */
    public static KubernetesClient build(Path kubeconfig, String as) {
        Config config;
        if (kubeconfig != null) {
            try {
                config = Config.fromKubeconfig(Files.readString(kubeconfig));
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("--kubeconfig: " + kubeconfig + ": cannot use it ("
                        + (e instanceof IOException io
                                ? IoErrors.reason(io)
                                : e.getMessage() == null ? "not a kubeconfig it can read" : e.getMessage())
                        + ")");
            }
        } else {
            requireKubeconfigEnvFile();
            config = Config.autoConfigure(null);
        }
        // Three retries (about 1.5 s of back-off), not fabric8's ten (about 20 s): a command that
        // cannot reach the API server should say so promptly; the controller retries every round.
        config.setRequestRetryBackoffLimit(RETRIES);
        if (as != null) {
            config.setImpersonateUsername(as);
        }
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    /**
     * A KUBECONFIG that names no existing file is refused as {@code --kubeconfig} would be, rather
     * than left to the client, which then tries the in-cluster default address.
     */
    private static void requireKubeconfigEnvFile() {
        String env = System.getenv("KUBECONFIG");
        if (env == null || env.isBlank()) {
            return;
        }
        for (String path : env.split(java.io.File.pathSeparator)) {
            if (!path.isBlank() && Files.exists(Path.of(path))) {
                return;
            }
        }
        throw new IllegalArgumentException("KUBECONFIG: " + env + ": cannot use it (no such file"
                + (env.contains(java.io.File.pathSeparator) ? " among them" : "") + ")");
    }

    /** Retries of a failed API request. */
    public static final int RETRIES = 3;

    /** Whether no kubeconfig gives the cluster and this is not a pod: the client then tries a default address. */
    public static boolean noKubeconfig(Path kubeconfig) {
        return source(kubeconfig).startsWith("no kubeconfig") && System.getenv("KUBERNETES_SERVICE_HOST") == null;
    }

    /** Where the cluster address came from, for the first line a command prints. */
    public static String source(Path kubeconfig) {
        if (kubeconfig != null) {
            return "--kubeconfig " + kubeconfig;
        }
        String env = System.getenv("KUBECONFIG");
        if (env != null && !env.isBlank()) {
            return "KUBECONFIG " + env;
        }
        if (Files.isRegularFile(Path.of(System.getProperty("user.home"), ".kube", "config"))) {
            return "~/.kube/config";
        }
        return "no kubeconfig: the pod's service account, or the default address when not in a pod";
    }
}
