package dev.tailor.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The files the controller's commands read in tests: kubeconfigs and a heart.yaml for the shop cluster. */
final class ControllerFiles {

    private ControllerFiles() {}

    /** {@code dir/kubeconfig}, whose current context is the API server at {@code masterUrl}, namespace shop. */
    static Path kubeconfig(Path dir, String masterUrl) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                  - name: mock
                    cluster: {server: "%s", insecure-skip-tls-verify: true}
                users:
                  - name: test
                    user: {token: secret}
                contexts:
                  - name: mock
                    context: {cluster: mock, user: test, namespace: shop}
                current-context: mock
                """.formatted(masterUrl.replaceAll("/$", "")));
    }

    /** {@code dir/nowhere}, a kubeconfig whose API server's host name does not resolve. */
    static Path unreachableKubeconfig(Path dir) throws IOException {
        return Files.writeString(dir.resolve("nowhere"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://no-such-cluster.invalid:6443"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: c, context: {cluster: c, user: u}}]
                current-context: c
                """);
    }

    /** {@code dir/heart.yaml}: the Prometheus at {@code prometheusUrl}, short windows, the shop namespace. */
    static Path config(Path dir, String prometheusUrl) throws IOException {
        return Files.writeString(dir.resolve("heart.yaml"), """
                prometheus:
                  url: %s
                  windowSeconds: 10
                  delayWindowSeconds: 5
                kubernetes:
                  namespaces: [shop]
                """.formatted(prometheusUrl));
    }
}
