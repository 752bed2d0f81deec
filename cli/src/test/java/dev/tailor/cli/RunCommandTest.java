package dev.tailor.cli;

import static dev.tailor.cli.PlanCommandTest.tailor;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.controller.Actuator;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tailor heart run --once} end to end: a real Prometheus and the fabric8 mock API server. */
@EnableKubernetesMockClient(crud = true)
class RunCommandTest {

    /**
     * How long the other replica's Lease lasts from its renewal "now": an hour, so that it is still held
     * when the run reads it, however slowly a loaded machine gets there (the controller's 15 s would not be).
     */
    private static final int HELD_SECONDS = 3600;

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        prometheus = ShopCluster.prometheus();
        ShopCluster.create(client);
        ShopCluster.createMesh(client, "1.24.2");
        server.expect()
                .post()
                .withPath(dev.tailor.testkit.AccessReviews.PATH)
                .andReply(
                        201,
                        request -> dev.tailor.testkit.AccessReviews.answer(request.getUtf8Body(), java.util.Set.of()))
                .always();
    }

    @AfterAll
    static void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @BeforeEach
    void noRules() {
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
    }

    private Path kubeconfig() throws Exception {
        return ControllerFiles.kubeconfig(dir, client.getMasterUrl().toString());
    }

    private Path config() throws Exception {
        return ControllerFiles.config(dir, prometheus.url().toString());
    }

    @Test
    void runOnceDryRun_printsThePlanAsADiff_andWritesNothing() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run");

        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.err())
                .contains("round 1 planned in")
                .contains("6 ready replicas, 2 call edges")
                .contains("2 rule(s) would change")
                // The checks of `tailor heart check` run first; their summary says how many passed.
                .contains("tailor: start-up checks: ");
        assertThat(result.out())
                .contains("create DestinationRule istio-system/tailor-heart-istio-ingressgateway-to-frontend")
                .contains("create DestinationRule shop/tailor-heart-frontend-to-cart")
                .contains("+ spec:")
                .contains("+   host: cart.shop.svc.cluster.local")
                .contains("from: eu/eu-a/w3");
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inAnyNamespace()
                        .list()
                        .getItems())
                .isEmpty();
    }

    @Test
    void runOnceDryRun_logFormatJson_everyStderrLineIsAJsonObject() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run",
                "--log-format",
                "json");

        assertThat(result.exitCode()).as(result.err()).isZero();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> lines = result.err().lines().toList();
        assertThat(lines).isNotEmpty();
        List<String> messages = new java.util.ArrayList<>();
        for (String line : lines) {
            com.fasterxml.jackson.databind.JsonNode event = json.readTree(line);
            assertThat(event.isObject()).as(line).isTrue();
            assertThat(event.get("level").asText()).as(line).isIn("ERROR", "WARN", "INFO");
            assertThat(event.get("time").asText()).as(line).endsWith("Z");
            messages.add(event.get("message").asText());
        }
        assertThat(messages)
                .anyMatch(m -> m.startsWith("cluster "))
                .anyMatch(m -> m.matches("round \\d+ planned in .*"))
                .anyMatch(m -> m.equals("start-up checks: 12 of 12 ok"));
        // The plan itself is the command's output, not a log line.
        assertThat(result.out()).contains("create DestinationRule shop/tailor-heart-frontend-to-cart");
    }

    @Test
    void runOnceDryRun_outputYamlWithJsonLogs_stdoutIsTheRules_stderrStaysJson() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run",
                "--output",
                "yaml",
                "--log-format",
                "json");

        assertThat(result.exitCode()).as(result.err()).isZero();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String line : result.err().lines().toList()) {
            assertThat(json.readTree(line).isObject()).as(line).isTrue();
        }
        assertThat(result.err()).contains("2 DestinationRule(s) printed as YAML");
        List<String> names = new java.util.ArrayList<>();
        try (var documents = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper()
                .readerFor(com.fasterxml.jackson.databind.JsonNode.class)
                .<com.fasterxml.jackson.databind.JsonNode>readValues(result.out())) {
            for (com.fasterxml.jackson.databind.JsonNode rule : documents.readAll()) {
                assertThat(rule.get("kind").asText()).isEqualTo("DestinationRule");
                names.add(rule.at("/metadata/namespace").asText() + "/"
                        + rule.at("/metadata/name").asText());
            }
        }
        assertThat(names)
                .containsExactlyInAnyOrder(
                        "shop/tailor-heart-frontend-to-cart",
                        "istio-system/tailor-heart-istio-ingressgateway-to-frontend");
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inAnyNamespace()
                        .list()
                        .getItems())
                .isEmpty();
    }

    @Test
    void runOnce_writesTheRules_thenNothingChanges() throws Exception {
        PlanCommandTest.Result first = tailor(
                "heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", config().toString(), "--once");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).contains("create DestinationRule shop/tailor-heart-frontend-to-cart");

        PlanCommandTest.Result dry = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run");
        assertThat(dry.exitCode()).as(dry.err()).isZero();
        assertThat(dry.out()).doesNotContain("create DestinationRule");
    }

    @Test
    void runOnce_prometheusDown_exit1AndSaysTheRulesStay() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--prometheus",
                "http://127.0.0.1:1",
                "--once");
        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err())
                .contains("round failed (prometheus_unreachable)")
                .contains("the DestinationRules already applied stay");
    }

    @Test
    void uninstall_removesOnlyTailorsRulesAndTheState() throws Exception {
        assertThat(tailor(
                                "heart",
                                "run",
                                "--kubeconfig",
                                kubeconfig().toString(),
                                "--config",
                                config().toString(),
                                "--once")
                        .exitCode())
                .isZero();
        // Someone else's rule must survive.
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .resource(new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
                        .withApiVersion("networking.istio.io/v1")
                        .withKind("DestinationRule")
                        .withNewMetadata()
                        .withName("theirs")
                        .withNamespace("shop")
                        .endMetadata()
                        .build())
                .create();

        PlanCommandTest.Result dry =
                tailor("heart", "uninstall", "--kubeconfig", kubeconfig().toString(), "--dry-run");
        assertThat(dry.out()).contains("would delete DestinationRule shop/tailor-heart-frontend-to-cart");
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inAnyNamespace()
                        .list()
                        .getItems())
                .hasSize(3);

        PlanCommandTest.Result result =
                tailor("heart", "uninstall", "--kubeconfig", kubeconfig().toString());
        assertThat(result.exitCode()).as(result.err()).isZero();
        assertThat(result.out()).contains("delete ConfigMap tailor-system/tailor-heart-state");
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inAnyNamespace()
                        .list()
                        .getItems())
                .extracting(r -> r.getMetadata().getName())
                .containsExactly("theirs");
    }

    @Test
    void uninstall_noClusterAnswers_saysSoInOneLine() throws Exception {
        Path nowhere = ControllerFiles.kubeconfig(dir, "https://127.0.0.1:1/");
        PlanCommandTest.Result result = tailor("heart", "uninstall", "--kubeconfig", nowhere.toString(), "--dry-run");
        assertThat(result.exitCode()).isEqualTo(1);
        // Was "cannot reach the Kubernetes API: Operation: [list]  for kind: [DestinationRule]  with name: [null] ...".
        assertThat(result.err())
                .startsWith("tailor: no cluster reachable: https://127.0.0.1:1/: ")
                .doesNotContain("Operation: [list]")
                .doesNotContain("[null]");
        assertThat(result.out()).isEmpty();
    }

    @Test
    void run_badConfig_exit2NamingTheField() throws Exception {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, "prometheus:\n  url: ftp://x\n  windowSeconds: -3\nroundSecs: 3\n");
        PlanCommandTest.Result result =
                tailor("heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", file.toString(), "--once");
        assertThat(result.exitCode()).isEqualTo(2);
        // An unknown field no longer hides the other problems: every one, one line each, in line order.
        assertThat(result.err())
                .isEqualTo("tailor: " + file + ": 3 problems:\n"
                        + "  prometheus.url: \"ftp://x\" (expected: an http:// or https:// URL with a host, e.g."
                        + " http://prometheus.istio-system:9090) at line 2\n"
                        + "  prometheus.windowSeconds: -3 (expected: a number in [1, 3600]) at line 3\n"
                        + "  roundSecs: unknown field (expected one of capacityShortfall,"
                        + " kubernetes, maxShareMovePerRound, planner, prometheus, roundSeconds, sameNodeDelayMillis)"
                        + " at line 4\n");
        Files.writeString(file, "prometheus:\n  url: ftp://x\n  windowSeconds: -3\n");
        result = tailor("heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", file.toString(), "--once");
        assertThat(result.exitCode()).isEqualTo(2);
        // A usage error before the controller starts: no log line's time stamp, one line per problem, -3 as typed.
        assertThat(result.err())
                .isEqualTo("tailor: " + file + ": 2 problems:\n"
                        + "  prometheus.url: \"ftp://x\" (expected: an http:// or https:// URL with a host, e.g."
                        + " http://prometheus.istio-system:9090) at line 2\n"
                        + "  prometheus.windowSeconds: -3 (expected: a number in [1, 3600]) at line 3\n");
    }

    @Test
    void runOnce_whileAnotherReplicaHoldsTheLease_refusesToWrite() throws Exception {
        client.resources(io.fabric8.kubernetes.api.model.coordination.v1.Lease.class)
                .inNamespace("tailor-system")
                .resource(new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
                        .withNewMetadata()
                        .withName("tailor-heart")
                        .withNamespace("tailor-system")
                        .endMetadata()
                        .withNewSpec()
                        .withHolderIdentity("tailor-heart-7d9f-abcde")
                        .withLeaseDurationSeconds(HELD_SECONDS)
                        .withRenewTime(java.time.ZonedDateTime.now())
                        .endSpec()
                        .build())
                .create();
        try {
            PlanCommandTest.Result result = tailor(
                    "heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", config().toString(), "--once");
            assertThat(result.exitCode()).isEqualTo(1);
            assertThat(result.err())
                    .contains("Lease tailor-system/tailor-heart is held by tailor-heart-7d9f-abcde")
                    .contains("use --dry-run");
            assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                            .inAnyNamespace()
                            .list()
                            .getItems())
                    .isEmpty();
            // A dry run still works: it writes nothing and takes no lease.
            PlanCommandTest.Result dry = tailor(
                    "heart",
                    "run",
                    "--kubeconfig",
                    kubeconfig().toString(),
                    "--config",
                    config().toString(),
                    "--once",
                    "--dry-run");
            assertThat(dry.exitCode()).as(dry.err()).isZero();
        } finally {
            client.resources(io.fabric8.kubernetes.api.model.coordination.v1.Lease.class)
                    .inNamespace("tailor-system")
                    .withName("tailor-heart")
                    .delete();
        }
    }

    private static final String LEASE_PATH =
            "/apis/coordination.k8s.io/v1/namespaces/tailor-system/leases/tailor-heart";

    private static io.fabric8.kubernetes.api.model.coordination.v1.Lease leaseHeldBy(String holder) {
        return new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
                .withNewMetadata()
                .withName("tailor-heart")
                .withNamespace("tailor-system")
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity(holder)
                .withLeaseDurationSeconds(HELD_SECONDS)
                .withRenewTime(java.time.ZonedDateTime.now())
                .endSpec()
                .build();
    }

    /** Reads the Lease until the one-shot answers set up for it are used up (at most {@code n}). */
    private static void useUpLeaseAnswers(int n) {
        for (int i = 0; i < n; i++) {
            try {
                client.resources(io.fabric8.kubernetes.api.model.coordination.v1.Lease.class)
                        .inNamespace("tailor-system")
                        .withName("tailor-heart")
                        .get();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                // a one-shot error answer
            }
        }
    }

    @Test
    void runOnce_leaseUnreadable_refusesToWrite() throws Exception {
        // Without read access to the Lease, --once cannot tell whether a controller is running.
        server.expect()
                .get()
                .withPath(LEASE_PATH)
                .andReturn(
                        403,
                        new io.fabric8.kubernetes.api.model.StatusBuilder()
                                .withCode(403)
                                .withMessage("leases.coordination.k8s.io is forbidden")
                                .build())
                .once();
        try {
            PlanCommandTest.Result result = tailor(
                    "heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", config().toString(), "--once");
            assertThat(result.exitCode()).as(result.err()).isEqualTo(1);
            assertThat(result.err())
                    .contains("cannot read Lease tailor-system/tailor-heart")
                    .contains("403")
                    .contains("--dry-run");
            assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                            .inAnyNamespace()
                            .list()
                            .getItems())
                    .isEmpty();
        } finally {
            useUpLeaseAnswers(1);
        }
    }

    @Test
    void runOnce_aControllerTakesTheLeaseDuringTheRound_stopsWriting() throws Exception {
        // Free when --once starts, held by a controller by the time the round writes.
        server.expect()
                .get()
                .withPath(LEASE_PATH)
                .andReturn(
                        404,
                        new io.fabric8.kubernetes.api.model.StatusBuilder()
                                .withCode(404)
                                .build())
                .once();
        server.expect()
                .get()
                .withPath(LEASE_PATH)
                .andReturn(200, leaseHeldBy("tailor-heart-7d9f-abcde"))
                .once();
        try {
            PlanCommandTest.Result result = tailor(
                    "heart", "run", "--kubeconfig", kubeconfig().toString(), "--config", config().toString(), "--once");
            assertThat(result.exitCode()).as(result.err()).isEqualTo(1);
            assertThat(result.err())
                    .contains("round failed (lost_leadership)")
                    .contains("Lease tailor-system/tailor-heart is held by tailor-heart-7d9f-abcde");
            assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                            .inAnyNamespace()
                            .list()
                            .getItems())
                    .isEmpty();
        } finally {
            useUpLeaseAnswers(2);
        }
    }

    @Test
    void run_badMetricsAddress_exit2UpFront_onceOrNot_writingNothing() throws Exception {
        String expected = "tailor: --metrics-address: \"1.2.3.4:99999\" (expected: HOST:PORT, the port in [0, 65535],"
                + " e.g. 0.0.0.0:9464)\n";
        // With --once the address was never looked at: accepted silently, and the round wrote its rules.
        PlanCommandTest.Result once = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--metrics-address",
                "1.2.3.4:99999",
                "--once");
        assertThat(once.exitCode()).as(once.err()).isEqualTo(2);
        assertThat(once.err()).isEqualTo(expected);
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inAnyNamespace()
                        .list()
                        .getItems())
                .isEmpty();
        // Running continuously it was refused only after the client and the planner's warm-up: a kubeconfig
        // that does not exist, read first, would have been told instead.
        for (String address : List.of("1.2.3.4:99999", "9464", ":9464", "host:port")) {
            PlanCommandTest.Result loop = tailor(
                    "heart",
                    "run",
                    "--kubeconfig",
                    dir.resolve("absent-kubeconfig").toString(),
                    "--config",
                    config().toString(),
                    "--metrics-address",
                    address);
            assertThat(loop.exitCode()).as(loop.err()).isEqualTo(2);
            assertThat(loop.err()).as(address).startsWith("tailor: --metrics-address: \"" + address + "\" (expected:");
        }
    }

    @Test
    void run_prometheusUrlWithoutHost_exit2() throws Exception {
        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                kubeconfig().toString(),
                "--config",
                config().toString(),
                "--prometheus",
                "http://",
                "--once");
        assertThat(result.exitCode()).as(result.err()).isEqualTo(2);
        assertThat(result.err())
                .contains("prometheus.url: \"http://\" (expected: an http:// or https:// URL with a host");
    }

    @Test
    void runOnce_noClusterReachable_saysSo_insteadOfTheClientsException() throws Exception {
        Path nowhere = ControllerFiles.unreachableKubeconfig(dir);

        PlanCommandTest.Result result = tailor(
                "heart",
                "run",
                "--kubeconfig",
                nowhere.toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run");

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.err())
                .contains("ERROR tailor: no cluster reachable: https://no-such-cluster.invalid:6443/:"
                        + " its host name does not resolve")
                .doesNotContain("cannot read the ATPM state")
                .doesNotContain("\tat ");

        // In JSON, the refusal is a JSON line like the others.
        PlanCommandTest.Result json = tailor(
                "heart",
                "run",
                "--kubeconfig",
                nowhere.toString(),
                "--config",
                config().toString(),
                "--once",
                "--dry-run",
                "--log-format",
                "json");
        assertThat(json.exitCode()).isEqualTo(1);
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        List<com.fasterxml.jackson.databind.JsonNode> lines = new java.util.ArrayList<>();
        for (String line : json.err().lines().toList()) {
            lines.add(mapper.readTree(line));
        }
        assertThat(lines.get(lines.size() - 1).get("level").asText()).isEqualTo("ERROR");
        assertThat(lines.get(lines.size() - 1).get("message").asText()).startsWith("no cluster reachable: ");
    }
}
