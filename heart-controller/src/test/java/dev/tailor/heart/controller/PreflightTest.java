package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.testkit.AccessReviews;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.URI;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The preflight checks against the fabric8 mock API server (CRUD mode, with answers to access
 * reviews) and a real Prometheus scraping the shop cluster's exporters: the test cluster passes,
 * and each prerequisite taken away fails (or warns) with what to do.
 */
@EnableKubernetesMockClient(crud = true)
class PreflightTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;
    /** Permissions the access reviews deny ("verb resource [namespace]"). */
    private static final Set<String> DENIED = new CopyOnWriteArraySet<>();

    @BeforeAll
    static void start() throws Exception {
        prometheus = ShopCluster.prometheus();
        server.expect()
                .post()
                .withPath(AccessReviews.PATH)
                .andReply(201, request -> AccessReviews.answer(request.getUtf8Body(), DENIED))
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
        DENIED.clear();
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        client.apps().daemonSets().inAnyNamespace().delete();
        client.apps().deployments().inAnyNamespace().delete();
        client.apiextensions().v1().customResourceDefinitions().delete();
        ShopCluster.create(client);
        ShopCluster.createMesh(client, "1.24.2");
    }

    private static ControllerConfig config(String prometheusUrl) {
        // A 10 s rate window: at least 5 scrapes (1 s apart) by the time ShopCluster.prometheus() returns.
        return ControllerConfig.builder()
                .prometheus(ControllerConfig.Prometheus.builder()
                        .url(prometheusUrl)
                        .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                        .windowSeconds(10.0)
                        .delayWindowSeconds(5.0)
                        .build())
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .build())
                .build();
    }

    private static List<Preflight.Check> run(ControllerConfig config) {
        return run(client, config);
    }

    private static List<Preflight.Check> run(KubernetesClient kubernetes, ControllerConfig config) {
        return new Preflight(
                        kubernetes,
                        TestPrometheus.client(URI.create(config.prometheus().url())),
                        config)
                .run(Instant.now());
    }

    private static Preflight.Check check(List<Preflight.Check> checks, String name) {
        return checks.stream()
                .filter(c -> c.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no check " + name + " in " + checks));
    }

    @Test
    void run_testCluster_everyCheckOk() {
        List<Preflight.Check> checks = run(config(prometheus.url().toString()));

        // One line per prerequisite, in the order an operator fixes them.
        assertThat(checks)
                .extracting(Preflight.Check::name)
                .containsExactly(
                        "kubernetes-api",
                        "rbac",
                        "istio",
                        "sidecars",
                        "node-localities",
                        "prometheus",
                        "rate-window",
                        "query cpuCores",
                        "query servedRequestsPerSecond",
                        "query callsPerSecond",
                        "query delaySeconds",
                        "delay-exporter");
        assertThat(checks)
                .allSatisfy(c -> assertThat(c.status()).as(c.toString()).isEqualTo(Preflight.Status.OK));
        assertThat(Preflight.failed(checks)).isFalse();
        assertThat(check(checks, "rbac").message()).contains("all 26 permissions");
        assertThat(check(checks, "istio").message()).contains("serves v1").contains("istiod 1.24.2");
        assertThat(check(checks, "sidecars").message()).contains("6 application pod(s) and 3 entry-point pod(s)");
        assertThat(check(checks, "query cpuCores").message()).contains("covering all 6 application pods");
        assertThat(check(checks, "query delaySeconds").message()).contains("from 3 node(s)");
        assertThat(check(checks, "delay-exporter").message()).contains("kube-system/kubenurse 3 of 3 pods ready");
    }

    @Test
    void run_nodesWithoutSubzoneLabel_failsNamingTheLabelAndTheCommand() {
        // Istio takes the sub-zone only from topology.istio.io/subzone: without it, per-node rules
        // cannot match, and the operator must learn it before installing, with the exact fix.
        for (String name : List.of("w1", "w2", "w3")) {
            Node node = client.nodes().withName(name).get();
            Map<String, String> labels = new HashMap<>(node.getMetadata().getLabels());
            labels.remove(IstioLocality.SUBZONE);
            node.getMetadata().setLabels(labels);
            client.nodes().resource(node).update();
        }

        List<Preflight.Check> checks = run(config(prometheus.url().toString()));

        Preflight.Check localities = check(checks, "node-localities");
        assertThat(localities.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(localities.message())
                .contains("3 node(s) without topology.istio.io/subzone: w1, w2, w3")
                .contains("never the node's name");
        assertThat(localities.fixes())
                .contains("for n in w1 w2 w3; do kubectl label node \"$n\" topology.istio.io/subzone=\"$n\"; done");
        assertThat(Preflight.failed(checks)).isTrue();
    }

    @Test
    void run_nodeWithoutPodsLacksLabels_warnsOnly() {
        client.nodes()
                .resource(new io.fabric8.kubernetes.api.model.NodeBuilder()
                        .withNewMetadata()
                        .withName("spare")
                        .endMetadata()
                        .build())
                .create();

        Preflight.Check localities = check(run(config(prometheus.url().toString())), "node-localities");

        assertThat(localities.status()).isEqualTo(Preflight.Status.WARN);
        assertThat(localities.message())
                .contains("without topology.kubernetes.io/region: spare")
                .contains("no application pod runs there yet");
        assertThat(localities.fixes())
                .contains("kubectl label node spare topology.kubernetes.io/region=<region>"
                        + " topology.kubernetes.io/zone=<zone> topology.istio.io/subzone=spare");
    }

    @Test
    void run_permissionDenied_failsNamingItAndHowToTestIt() {
        DENIED.add("patch destinationrules shop");
        DENIED.add("update leases");
        DENIED.add("create events tailor-system");

        Preflight.Check rbac = check(run(config(prometheus.url().toString())), "rbac");

        assertThat(rbac.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(rbac.message())
                .startsWith("3 of 26 permissions")
                .contains(
                        "patch destinationrules.networking.istio.io in shop",
                        "update leases.coordination.k8s.io/tailor-heart in tailor-system",
                        "create events.events.k8s.io in tailor-system");
        assertThat(rbac.fixes())
                .contains("test one: kubectl auth can-i patch destinationrules.networking.istio.io -n" + " shop");
    }

    @Test
    void run_ownPodNotReadable_failsNamingItAndHowToTestIt() {
        // The Events on the controller's own pod carry its uid, read with get pods in the controller's
        // namespace (the Lease's in the bundled manifests); without it kubectl describe pod shows none.
        DENIED.add("get pods tailor-system");

        Preflight.Check rbac = check(run(config(prometheus.url().toString())), "rbac");

        assertThat(rbac.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(rbac.message())
                .isEqualTo("1 of 26 permissions the controller uses are not granted: get pods in" + " tailor-system");
        assertThat(rbac.fixes()).contains("test one: kubectl auth can-i get pods -n tailor-system");
    }

    @Test
    void run_istioMissingOrOld_fails() {
        client.apiextensions().v1().customResourceDefinitions().delete();
        Preflight.Check missing = check(run(config(prometheus.url().toString())), "istio");
        assertThat(missing.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(missing.message()).contains("destinationrules.networking.istio.io) is not installed");

        client.apps().deployments().inAnyNamespace().delete();
        client.apps().daemonSets().inAnyNamespace().delete();
        ShopCluster.createMesh(client, "1.20.1");
        Preflight.Check old = check(run(config(prometheus.url().toString())), "istio");
        assertThat(old.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(old.message()).contains("istiod 1.20.1 (istio-system/istiod) is older than 1.22");
    }

    @Test
    void run_podWithoutSidecar_failsWithTheInjectionCommand() {
        client.pods().inNamespace("shop").withName("cart-w2").delete();
        Pod bare = ShopCluster.pod("shop", "cart-w2", "cart", "w2", true);
        bare.getSpec().getContainers().removeIf(c -> c.getName().equals("istio-proxy"));
        client.pods().inNamespace("shop").resource(bare).create();

        Preflight.Check sidecars = check(run(config(prometheus.url().toString())), "sidecars");

        assertThat(sidecars.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(sidecars.message())
                .contains("1 of 9 pods have no istio-proxy sidecar")
                .contains("shop/cart-w2");
        assertThat(sidecars.fixes())
                .containsExactly("kubectl label namespace shop istio-injection=enabled"
                        + " --overwrite && kubectl -n shop rollout restart deployment");
    }

    @Test
    void run_queriesWithoutData_failOrWarn_andNoDelayExporterWarns() {
        client.apps().daemonSets().inAnyNamespace().delete();
        ControllerConfig base = config(prometheus.url().toString());
        ControllerConfig.Prometheus p = base.prometheus();
        ControllerConfig config = base.toBuilder()
                .prometheus(p.toBuilder()
                        .queries(ControllerConfig.Queries.builder()
                                .cpuCores("sum by (namespace, pod) (rate(no_such_metric[${window}]))")
                                .delaySeconds("sum by (node, type) (no_such_delay)")
                                .build())
                        .build())
                .build();

        List<Preflight.Check> checks = run(config);

        Preflight.Check cpu = check(checks, "query cpuCores");
        assertThat(cpu.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(cpu.message()).contains("no series").contains("component_without_metrics");
        assertThat(check(checks, "query servedRequestsPerSecond").status()).isEqualTo(Preflight.Status.OK);
        // Without delays HEART still plans (the unmeasured-link rule): a warning, not a failure.
        assertThat(check(checks, "query delaySeconds").status()).isEqualTo(Preflight.Status.WARN);
        Preflight.Check exporter = check(checks, "delay-exporter");
        assertThat(exporter.status()).isEqualTo(Preflight.Status.WARN);
        assertThat(exporter.message()).contains("no kubenurse DaemonSet");
    }

    @Test
    void run_rateWindowOfTwoScrapes_warnsWithTheWindowToSet() {
        // Prometheus scrapes every second here: a 2 s window holds two samples, so rate() flickers.
        ControllerConfig base = config(prometheus.url().toString());
        ControllerConfig.Prometheus p = base.prometheus();
        ControllerConfig config = base.toBuilder()
                .prometheus(p.toBuilder().windowSeconds(2.0).build())
                .build();

        Preflight.Check window = check(run(config), "rate-window");

        assertThat(window.status()).isEqualTo(Preflight.Status.WARN);
        assertThat(window.message()).startsWith("prometheus.windowSeconds 2 holds");
        assertThat(window.fixes())
                .singleElement()
                .asString()
                .startsWith("set prometheus.windowSeconds to at least ")
                .endsWith("(4 × the scrape interval)");
    }

    @Test
    void run_prometheusUnreachable_failsAndSkipsTheQueries() {
        List<Preflight.Check> checks = run(config("http://127.0.0.1:1"));

        Preflight.Check reachable = check(checks, "prometheus");
        assertThat(reachable.status()).isEqualTo(Preflight.Status.FAIL);
        assertThat(reachable.message()).isEqualTo("Prometheus at http://127.0.0.1:1/ unreachable: connection refused");
        assertThat(checks).extracting(Preflight.Check::name).noneMatch(n -> n.startsWith("query "));
    }

    @Test
    void run_noClusterReachable_saysSoInOneLine_andRunsNoKubernetesCheck() {
        io.fabric8.kubernetes.client.Config unresolvable = new io.fabric8.kubernetes.client.ConfigBuilder()
                .withMasterUrl("https://no-such-cluster.invalid:6443")
                .withRequestRetryBackoffLimit(0)
                .build();
        try (KubernetesClient nowhere =
                new KubernetesClientBuilder().withConfig(unresolvable).build()) {
            List<Preflight.Check> checks = run(nowhere, config(prometheus.url().toString()));

            Preflight.Check api = check(checks, "kubernetes-api");
            assertThat(api.status()).isEqualTo(Preflight.Status.FAIL);
            assertThat(api.message())
                    .startsWith("no cluster reachable: https://no-such-cluster.invalid:6443/")
                    .contains("does not resolve")
                    .doesNotContain("\n");
            assertThat(checks)
                    .extracting(Preflight.Check::name)
                    .containsExactly(
                            "kubernetes-api",
                            "prometheus",
                            "rate-window",
                            "query cpuCores",
                            "query servedRequestsPerSecond",
                            "query callsPerSecond",
                            "query delaySeconds");
            assertThat(api.fixes()).singleElement().asString().startsWith("check the kubeconfig's current context");

            // Without any kubeconfig the fix is to provide one, not to check its context.
            Preflight.Check none = check(
                    new Preflight(
                                    nowhere,
                                    TestPrometheus.client(prometheus.url()),
                                    config(prometheus.url().toString()))
                            .noKubeconfig(true)
                            .run(Instant.now()),
                    "kubernetes-api");
            assertThat(none.fixes())
                    .singleElement()
                    .asString()
                    .startsWith("no kubeconfig was found")
                    .doesNotContain("current context");
        }
    }
}
