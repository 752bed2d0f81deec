package dev.tailor.heart.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.tailor.common.IoErrors;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
            config = fromKubeconfig(kubeconfig);
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

    /** What a kubeconfig file must be, for the messages that refuse one. */
    private static final String EXPECTED_KUBECONFIG =
            "expected: a kubeconfig whose current-context names one of its contexts, as kubectl config view shows it";

    /**
     * The client configuration of {@code file}'s current context. A file that cannot be read, is empty or
     * is not YAML, or whose current-context names none of its contexts (a cluster.yaml or heart.yaml given
     * by mistake, say), is refused naming it, rather than left to the client, which would then quietly try
     * the in-cluster default address.
     */
    static Config fromKubeconfig(Path file) {
        String where = "--kubeconfig: " + file + ": ";
        if (Files.isDirectory(file)) {
            throw new IllegalArgumentException(where + "a directory (" + EXPECTED_KUBECONFIG + ")");
        }
        if (!Files.exists(file)) {
            // Worded as a KUBECONFIG that names no file is (requireKubeconfigEnvFile).
            throw new IllegalArgumentException(where + "cannot use it (no such file)");
        }
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(where + "cannot use it (" + IoErrors.reason(e) + ")");
        }
        if (text.isBlank()) {
            throw new IllegalArgumentException(where + "empty (" + EXPECTED_KUBECONFIG + ")");
        }
        Config config;
        try {
            config = Config.fromKubeconfig(text);
        } catch (RuntimeException e) {
            String why = e.getMessage() == null ? "not a kubeconfig it can read" : e.getMessage();
            throw new IllegalArgumentException(
                    where + "cannot use it (" + why.strip().replaceAll("\\s+", " ") + "; " + EXPECTED_KUBECONFIG + ")");
        }
        if (config.getCurrentContext() == null) {
            throw new IllegalArgumentException(where + noCurrentContext(text) + " (" + EXPECTED_KUBECONFIG + ")");
        }
        return config;
    }

    /**
     * Why a kubeconfig that parsed has no current context: {@code current-context "x" is none of its
     * contexts [a, b]}, or {@code no current-context (its contexts: [])}.
     */
    private static String noCurrentContext(String text) {
        JsonNode root;
        try {
            root = new YAMLMapper().readTree(text);
        } catch (IOException | RuntimeException e) {
            return "no current context";
        }
        List<String> names = new ArrayList<>();
        if (root != null && root.get("contexts") instanceof ArrayNode contexts) {
            contexts.forEach(context -> {
                if (context.hasNonNull("name")) {
                    names.add(context.get("name").asText());
                }
            });
        }
        JsonNode current = root == null ? null : root.get("current-context");
        if (current == null || !current.isValueNode() || current.asText().isEmpty()) {
            return "no current-context (its contexts: " + names + ")";
        }
        return "current-context \"" + current.asText() + "\" is none of its contexts " + names;
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
