package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.testkit.AccessReviews;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tailor heart check} end to end: the fabric8 mock API server (answering access reviews) and
 * a real Prometheus scraping the shop cluster's exporters.
 */
@EnableKubernetesMockClient(crud = true)
class CheckCommandTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        prometheus = ShopCluster.prometheus();
        server.expect()
                .post()
                .withPath(AccessReviews.PATH)
                .andReply(201, request -> AccessReviews.answer(request.getUtf8Body(), Set.of()))
                .always();
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @BeforeEach
    void cluster() {
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        client.apps().daemonSets().inAnyNamespace().delete();
        client.apps().deployments().inAnyNamespace().delete();
        client.apiextensions().v1().customResourceDefinitions().delete();
        ShopCluster.create(client);
        ShopCluster.createMesh(client, "1.24.2");
    }

    private Path kubeconfig() throws Exception {
        return ControllerFiles.kubeconfig(dir, client.getMasterUrl().toString());
    }

    private Path config() throws Exception {
        return ControllerFiles.config(dir, prometheus.url().toString());
    }

    @Test
    void check_testCluster_everyLineOk_exit0() throws Exception {
        PlanCommandTest.Result result =
                tailor("heart", "check", "--kubeconfig", kubeconfig().toString(), "--config", config().toString());

        assertThat(result.exitCode()).as(result.out() + result.err()).isZero();
        assertThat(result.out().lines().filter(l -> l.startsWith("[")))
                .hasSize(12)
                .allSatisfy(line -> assertThat(line).startsWith("[ok]"));
        assertThat(result.out())
                .containsPattern("\\[ok] +node-localities +all 3 nodes carry")
                .contains("12 checks: 12 ok, 0 warn, 0 fail");
    }

    @Test
    void check_nodesWithoutSubzone_failsWithTheKubectlCommands_exit1() throws Exception {
        for (String name : ShopCluster.NODES) {
            Node node = client.nodes().withName(name).get();
            Map<String, String> labels = new HashMap<>(node.getMetadata().getLabels());
            labels.remove("topology.istio.io/subzone");
            node.getMetadata().setLabels(labels);
            client.nodes().resource(node).update();
        }

        PlanCommandTest.Result result =
                tailor("heart", "check", "--kubeconfig", kubeconfig().toString(), "--config", config().toString());

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out())
                .containsPattern(
                        "\\[fail] +node-localities +3 node\\(s\\) without" + " topology.istio.io/subzone: w1, w2, w3")
                .contains("        fix: for n in w1 w2 w3; do kubectl label node \"$n\""
                        + " topology.istio.io/subzone=\"$n\"; done")
                .contains("12 checks: 11 ok, 0 warn, 1 fail: fix the failures before installing");
    }

    @Test
    void check_as_impersonatesTheServiceAccount() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "check",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--as",
                "system:serviceaccount:tailor-system:tailor-heart");

        assertThat(result.err()).contains("as system:serviceaccount:tailor-system:tailor-heart");
        // The permission check asks about the service account's RBAC, not the caller's.
        assertThat(server.getLastRequest().getHeader("Impersonate-User"))
                .isEqualTo("system:serviceaccount:tailor-system:tailor-heart");
    }

    @Test
    void check_asEmpty_exit2NamingTheOption_beforeAnyCheck() throws Exception {
        // An empty --as impersonated nobody: the checks ran as the kubeconfig's own identity.
        PlanCommandTest.Result result = tailor(
                "heart", "check", "--kubeconfig", kubeconfig().toString(), "--config", config().toString(), "--as", "");

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.err())
                .isEqualTo("tailor: --as: \"\" (expected: a user name, e.g."
                        + " system:serviceaccount:tailor-system:tailor-heart)\n");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void check_noCluster_saysNoClusterReachable_inOneLine() throws Exception {
        Path nowhere = ControllerFiles.unreachableKubeconfig(dir);

        PlanCommandTest.Result result =
                tailor("heart", "check", "--kubeconfig", nowhere.toString(), "--config", config().toString());

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.out())
                .containsPattern("\\[fail] +kubernetes-api +no cluster reachable:")
                .contains("no cluster reachable:"
                        + " https://no-such-cluster.invalid:6443/: its host name does not resolve");
        assertThat(result.out() + result.err()).doesNotContain("\tat ").doesNotContain("Exception:");
    }

    @Test
    void check_prometheusDown_saysWhyInWords_notWithAnExceptionName() throws Exception {
        int closed;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        Path nowhere = ControllerFiles.unreachableKubeconfig(dir);
        for (String url : List.of("http://127.0.0.1:" + closed, "http://nonexistent.invalid:9090")) {
            Path config = ControllerFiles.config(dir, url);

            PlanCommandTest.Result result =
                    tailor("heart", "check", "--kubeconfig", nowhere.toString(), "--config", config.toString());

            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.out())
                    .contains("Prometheus at " + url + "/ unreachable: "
                            + (url.contains("invalid") ? "its host name does not resolve" : "connection refused"))
                    .doesNotContain("Exception");
        }
    }
}
