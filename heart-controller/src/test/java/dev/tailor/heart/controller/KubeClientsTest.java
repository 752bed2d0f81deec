package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubeClientsTest {

    private static final String EXPECTED =
            "(expected: a kubeconfig whose current-context names one of its contexts, as kubectl config view shows it)";

    @TempDir
    Path dir;

    @Test
    void fromKubeconfig_usableFile_givesItsCurrentContextsServer() throws IOException {
        Path file = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: c, context: {cluster: c, user: u}}]
                current-context: c
                """);

        Config config = KubeClients.fromKubeconfig(file);

        assertThat(config.getMasterUrl()).startsWith("https://10.0.0.1:6443");
    }

    @Test
    void fromKubeconfig_fileWithoutACurrentContext_isRefusedNamingWhy_notLeftToTheDefaultAddress() throws IOException {
        // A cluster recording given as the kubeconfig by mistake: fabric8 alone would try
        // https://kubernetes.default.svc/ and the command would say that no cluster answers there.
        Path recording = Files.writeString(dir.resolve("cluster.yaml"), """
                apiVersion: v1
                kind: List
                items: [{apiVersion: v1, kind: Node, metadata: {name: w1}}]
                """);
        assertThatThrownBy(() -> KubeClients.fromKubeconfig(recording))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--kubeconfig: " + recording + ": no current-context (its contexts: []) " + EXPECTED);

        Path wrongContext = Files.writeString(dir.resolve("wrong"), """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: c, context: {cluster: c, user: u}}, {name: d, context: {cluster: c, user: u}}]
                current-context: prod
                """);
        assertThatThrownBy(() -> KubeClients.fromKubeconfig(wrongContext))
                .hasMessage("--kubeconfig: " + wrongContext + ": current-context \"prod\" is none of its contexts"
                        + " [c, d] " + EXPECTED);
    }

    @Test
    void fromKubeconfig_emptyDirectoryOrNotYaml_isRefusedInOneLine() throws IOException {
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(() -> KubeClients.fromKubeconfig(empty))
                .hasMessage("--kubeconfig: " + empty + ": empty " + EXPECTED);

        assertThatThrownBy(() -> KubeClients.fromKubeconfig(dir))
                .hasMessage("--kubeconfig: " + dir + ": a directory " + EXPECTED);

        Path broken = Files.writeString(dir.resolve("broken"), "clusters: [\n");
        assertThatThrownBy(() -> KubeClients.fromKubeconfig(broken))
                .hasMessageStartingWith("--kubeconfig: " + broken + ": cannot use it (")
                .hasMessageEndingWith("; " + EXPECTED.substring(1))
                .hasMessageNotContaining("\n");

        Path missing = dir.resolve("missing");
        // Worded as KUBECONFIG's is, which said "(no such file)" where this said "(no such file or directory)".
        assertThatThrownBy(() -> KubeClients.fromKubeconfig(missing))
                .hasMessage("--kubeconfig: " + missing + ": cannot use it (no such file)");
    }
}
