package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Rounds of the controller against a real Prometheus (scraping a test exporter with realistic
 * cAdvisor, Istio and kubenurse series) and the fabric8 mock API server in CRUD mode.
 *
 * <p>The cluster: nodes w1 (fast), w2, w3 (slow); components frontend and cart with one pod per
 * node in namespace shop; the ingress gateway in istio-system on every node. The slow node's pods
 * use more CPU per request, so HEART gives them less.
 */
@EnableKubernetesMockClient(crud = true)
class ControllerRoundTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;
    /** The rounds' instant: one of Prometheus's history, whose metrics do not depend on when it scraped. */
    private static final Instant AT = TestPrometheus.IN_HISTORY;

    @BeforeAll
    static void startPrometheus() throws Exception {
        prometheus = TestPrometheus.shop();
    }

    @AfterAll
    static void stopPrometheus() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @BeforeEach
    void cluster() {
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        client.configMaps().inAnyNamespace().delete();
        ShopCluster.create(client);
    }

    static ControllerConfig config(String prometheusUrl) {
        return ControllerConfig.builder()
                .prometheus(fiveSeconds(prometheusUrl))
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .stateConfigMap("tailor-system/tailor-heart-state")
                        .build())
                .build();
    }

    private static ControllerConfig.Prometheus fiveSeconds(String url) {
        return ControllerConfig.Prometheus.builder()
                .url(url)
                .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                .windowSeconds(5.0)
                .delayWindowSeconds(5.0)
                .build();
    }

    private static Controller controller() {
        return controller(config(prometheus.url().toString()));
    }

    private static Controller controller(ControllerConfig config) {
        return new Controller(
                config,
                HeartConfig.DEFAULTS.toBuilder().parallel(false).build(),
                TestPrometheus.client(prometheus.url()),
                client,
                AtpmState.EMPTY,
                new StateStore(client, "tailor-system/tailor-heart-state"),
                System::nanoTime);
    }

    private static List<GenericKubernetesResource> rules() {
        return client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .list()
                .getItems();
    }

    @Test
    void round_normal_writesOneRulePerCallEdge_slowNodeGetsLess() {
        Controller.Round round = controller().round(AT, false);
        ControllerMetrics metrics = new ControllerMetrics(() -> 5_000);
        metrics.record(round);

        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(round.applied()).isTrue();
        assertThat(metrics.ready()).isTrue();
        assertThat(metrics.scrape())
                .contains("tailor_heart_rule_writes_total{action=\"create\"} 2.0")
                .contains("tailor_heart_last_applied_plan_age_seconds 0.0")
                .contains("tailor_heart_planning_seconds_count 1");
        assertThat(round.changes()).extracting(Actuator.Change::action).containsOnly(Actuator.Action.CREATE);
        List<GenericKubernetesResource> rules = rules();
        assertThat(rules)
                .extracting(r ->
                        r.getMetadata().getNamespace() + "/" + r.getMetadata().getName())
                .containsExactlyInAnyOrder(
                        "istio-system/tailor-heart-istio-ingressgateway-to-frontend",
                        "shop/tailor-heart-frontend-to-cart");
        GenericKubernetesResource ingress = rules.stream()
                .filter(r -> r.getMetadata().getName().endsWith("to-frontend"))
                .findFirst()
                .orElseThrow();
        assertThat(ingress.getMetadata().getLabels())
                .containsEntry(DestinationRules.MANAGED_BY_LABEL, DestinationRules.MANAGED_BY);
        Map<String, Object> spec = ingress.get("spec");
        assertThat(spec).containsEntry("host", "frontend.shop.svc.cluster.local");
        assertThat(ingress.<Object>get("spec", "workloadSelector", "matchLabels", "app"))
                .isEqualTo("istio-ingressgateway");
        assertThat(ingress.<Object>get("spec", "trafficPolicy", "outlierDetection"))
                .isNotNull();
        List<Map<String, Object>> distribute =
                ingress.get("spec", "trafficPolicy", "loadBalancer", "localityLbSetting", "distribute");
        assertThat(distribute).hasSize(3);
        int toSlow = 0;
        int toFast = 0;
        for (Map<String, Object> entry : distribute) {
            @SuppressWarnings("unchecked")
            Map<String, Object> to = (Map<String, Object>) entry.get("to");
            assertThat(to.values().stream()
                            .mapToInt(v -> ((Number) v).intValue())
                            .sum())
                    .isEqualTo(100);
            toSlow += ((Number) to.getOrDefault("eu/eu-a/w3", 0)).intValue();
            toFast += ((Number) to.getOrDefault("eu/eu-a/w1", 0)).intValue();
        }
        // w3's pods need 2.5x the CPU per request of w1's: HEART sends them far less.
        assertThat(toSlow).isLessThan(toFast);
        assertThat(round.snapshot().delays()).anySatisfy(d -> {
            assertThat(d.from()).isEqualTo("w1");
            assertThat(d.to()).isEqualTo("w2");
            assertThat(d.millis()).isBetween(0.5, 1.0); // half of a 1-2 ms probe
        });
    }

    /** The {@code tailor_heart_route_share} series of a scrape: "caller callee from to" → value. */
    private static Map<String, Double> routeShares(String scrape) {
        Map<String, Double> shares = new java.util.TreeMap<>();
        java.util.regex.Pattern series = java.util.regex.Pattern.compile("tailor_heart_route_share\\{(.*)} (\\S+)");
        for (String line : scrape.lines().toList()) {
            java.util.regex.Matcher m = series.matcher(line);
            if (m.matches()) {
                Map<String, String> labels = new java.util.HashMap<>();
                java.util.regex.Matcher label =
                        java.util.regex.Pattern.compile("(\\w+)=\"([^\"]*)\"").matcher(m.group(1));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
                shares.put(
                        labels.get("caller") + " " + labels.get("callee") + " " + labels.get("from_node") + " "
                                + labels.get("to_node"),
                        Double.parseDouble(m.group(2)));
            }
        }
        return shares;
    }

    @Test
    void round_routeShareGauges_perCallerNodeAndCalleeNode_sumToOne_andANodeWithoutReadyReplicaStaysAtZero() {
        Controller controller = controller();
        Controller.Round round = controller.round(AT, false);
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);
        metrics.record(round);

        // Two call edges (ingress -> frontend, frontend -> cart), 3 caller nodes x 3 callee nodes each.
        Map<String, Double> shares = routeShares(metrics.scrape());
        assertThat(shares).hasSize(18);
        for (String from : List.of("w1", "w2", "w3")) {
            double sum = 0;
            for (String to : List.of("w1", "w2", "w3")) {
                sum += shares.get("frontend cart " + from + " " + to);
            }
            assertThat(sum).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-9));
        }
        // w3 needs 2.5x the CPU per request of w1: the gauges show it getting less.
        assertThat(shares.get("frontend cart w1 w3")).isLessThan(shares.get("frontend cart w1 w1"));
        assertThat(metrics.scrape()).contains("tailor_heart_route_share_series_dropped 0.0");

        // cart-w3 leaves Ready: its node drops to 0 at once and its series stay, at 0.
        Pod leaving = client.pods().inNamespace("shop").withName("cart-w3").get();
        leaving.getStatus().getConditions().get(0).setStatus("False");
        client.pods().inNamespace("shop").resource(leaving).updateStatus();
        metrics.record(controller.round(AT, false));
        Map<String, Double> after = routeShares(metrics.scrape());
        assertThat(after)
                .hasSize(18)
                .containsEntry("frontend cart w1 w3", 0.0)
                .containsEntry("frontend cart w3 w3", 0.0);

        // Over the limit a plan exports none of them (a partial set would sum wrong) and says how many.
        ControllerMetrics limited = new ControllerMetrics(() -> 0, 17);
        limited.record(round);
        assertThat(routeShares(limited.scrape())).isEmpty();
        assertThat(limited.scrape()).contains("tailor_heart_route_share_series_dropped 18.0");
    }

    @Test
    void round_entryPointBySelector_itsRuleSelectsTheGatewayByThoseLabels() {
        // A gateway whose pods are known by istio=ingressgateway (the Helm gateway chart's labels),
        // not by the component label: its rule must select exactly those pods, in their namespace.
        for (Pod pod : client.pods().inNamespace("istio-system").list().getItems()) {
            pod.getMetadata().getLabels().put("istio", "ingressgateway");
            pod.getMetadata().getLabels().remove("app");
            client.pods().inNamespace("istio-system").resource(pod).update();
        }
        ControllerConfig config = ControllerConfig.builder()
                .prometheus(fiveSeconds(prometheus.url().toString()))
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .entryPoints(List.of("istio-system/istio=ingressgateway"))
                        .stateConfigMap("tailor-system/tailor-heart-state")
                        .build())
                .build();
        assertThat(config.problems()).isEmpty();

        Controller.Round round = controller(config).round(AT, false);

        assertThat(round.failure()).as(round.message()).isNull();
        GenericKubernetesResource ingress = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("istio-system")
                .withName("tailor-heart-ingressgateway-to-frontend")
                .get();
        assertThat(ingress).isNotNull();
        assertThat(ingress.<Map<String, Object>>get("spec", "workloadSelector", "matchLabels"))
                .containsExactly(Map.entry("istio", "ingressgateway"));
    }

    @Test
    void round_again_isIdempotent_andDryRunWritesNothing() {
        Controller controller = controller();
        Controller.Round first = controller.round(AT, false);
        List<GenericKubernetesResource> before = rules();

        // The same desired rules again: nothing to write.
        assertThat(new Actuator(client, "tailor-heart").plan(first.desired(), List.of("shop", "istio-system")))
                .extracting(Actuator.Change::action)
                .containsOnly(Actuator.Action.UNCHANGED);
        // A second round of the same metrics writes nothing (the resource versions stay).
        Controller.Round second = controller.round(AT, false);
        assertThat(second.failure()).as(second.message()).isNull();
        assertThat(second.changes()).extracting(Actuator.Change::action).containsOnly(Actuator.Action.UNCHANGED);
        assertThat(rules())
                .extracting(r -> r.getMetadata().getResourceVersion())
                .isEqualTo(before.stream()
                        .map(r -> r.getMetadata().getResourceVersion())
                        .toList());

        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
        Controller.Round dry = controller().round(AT, true);
        assertThat(dry.applied()).isFalse();
        assertThat(dry.changes()).extracting(Actuator.Change::action).containsOnly(Actuator.Action.CREATE);
        assertThat(rules()).isEmpty();
        assertThat(before).hasSize(2);
    }

    @Test
    void round_savesTheState_andARestartedControllerContinues() {
        Controller first = controller();
        first.round(AT, false);
        StateStore store = new StateStore(client, "tailor-system/tailor-heart-state");
        StateStore.Loaded loaded = store.load();
        assertThat(loaded.note()).isNull();
        assertThat(loaded.state()).isEqualTo(first.state());
        assertThat(loaded.state().rounds()).isEqualTo(1);

        Controller restarted = new Controller(
                config(prometheus.url().toString()),
                HeartConfig.DEFAULTS,
                TestPrometheus.client(prometheus.url()),
                client,
                loaded.state(),
                store,
                null);
        Controller.Round round = restarted.round(AT, false);
        assertThat(round.plan().state().rounds()).isEqualTo(2);
        assertThat(store.load().state().rounds()).isEqualTo(2);
    }

    @Test
    void stateStore_garbage_startsOverWithANote() {
        client.configMaps()
                .inNamespace("tailor-system")
                .resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("tailor-heart-state")
                        .withNamespace("tailor-system")
                        .endMetadata()
                        .addToData(StateStore.KEY, "{\"rounds\": -4}")
                        .build())
                .createOr(r -> r.update());
        StateStore.Loaded loaded = new StateStore(client, "tailor-system/tailor-heart-state").load();
        assertThat(loaded.state()).isEqualTo(AtpmState.EMPTY);
        assertThat(loaded.note()).contains("is invalid").contains("rounds: -4");
    }

    @Test
    void stateStore_routesOutOfRange_noteEchoesTheFractionsAsWritten() {
        client.configMaps()
                .inNamespace("tailor-system")
                .resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("tailor-heart-state")
                        .withNamespace("tailor-system")
                        .endMetadata()
                        .addToData(StateStore.KEY, "{\"rounds\": 1}")
                        .addToData(
                                StateStore.ROUTES_KEY,
                                "[{\"caller\": \"a\", \"callee\": \"b\", \"fractions\": {\"w1\": {\"w1\": 2,"
                                        + " \"w2\": -0.5}}}]")
                        .build())
                .createOr(r -> r.update());
        StateStore.Loaded loaded = new StateStore(client, "tailor-system/tailor-heart-state").load();
        assertThat(loaded.note())
                .contains("routes in ConfigMap tailor-system/tailor-heart-state are invalid")
                .contains(".fractions.w1.w1: 2 (expected: a fraction in [0, 1])")
                .contains(".fractions.w1.w2: -0.5 (expected: a fraction in [0, 1])");
    }

    @Test
    void round_prometheusDown_keepsTheRulesAndSaysWhy() {
        controller().round(AT, false);
        Controller down = new Controller(
                config("http://127.0.0.1:1"),
                HeartConfig.DEFAULTS,
                TestPrometheus.client(java.net.URI.create("http://127.0.0.1:1")),
                client,
                AtpmState.EMPTY,
                null,
                null);

        List<GenericKubernetesResource> before = rules();
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);
        Controller.Round round = down.round(AT, false);
        metrics.record(round);

        assertThat(round.failure()).isEqualTo(Controller.FailureReason.PROMETHEUS_UNREACHABLE);
        assertThat(round.applied()).isFalse();
        assertThat(rules()).hasSize(2).isEqualTo(before);
        assertThat(metrics.scrape())
                .contains("tailor_heart_round_failures_total{reason=\"prometheus_unreachable\"} 1.0");
    }

    @Test
    void round_componentWithoutMetrics_keepsTheLastPlan() {
        controller().round(AT, false);
        List<GenericKubernetesResource> before = rules();
        // A new component whose pods Prometheus knows nothing about.
        for (String node : List.of("w1", "w2")) {
            client.pods()
                    .inNamespace("shop")
                    .resource(ShopCluster.pod("shop", "ads-" + node, "ads", node, true))
                    .create();
        }
        Controller.Round round = controller().round(AT, false);
        assertThat(round.failure()).isEqualTo(Controller.FailureReason.COMPONENT_WITHOUT_METRICS);
        assertThat(round.message()).contains("[ads]").endsWith("; keeping the last applied plan");
        assertThat(rules()).hasSize(2).isEqualTo(before);

        // A dry run applied nothing, and says so rather than speak of a plan it kept.
        Controller.Round dry = controller().round(AT, true);
        assertThat(dry.failure()).isEqualTo(Controller.FailureReason.COMPONENT_WITHOUT_METRICS);
        assertThat(dry.message())
                .contains("[ads]")
                .endsWith("; dry run: nothing applied")
                .doesNotContain("last applied plan");
    }

    @Test
    void round_terminatingPodStillReady_isNotATarget() {
        Pod leaving = client.pods().inNamespace("shop").withName("cart-w3").get();
        leaving.getMetadata().setDeletionTimestamp("2026-11-29T00:00:00Z");
        client.pods().inNamespace("shop").resource(leaving).update();

        Controller.Round round = controller().round(AT, false);
        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(round.snapshot().replicas())
                .filteredOn(r -> r.pod().equals("cart-w3"))
                .allSatisfy(r -> assertThat(r.ready()).isFalse());
        GenericKubernetesResource cartRule = rules().stream()
                .filter(r -> r.getMetadata().getName().endsWith("to-cart"))
                .findFirst()
                .orElseThrow();
        assertThat(cartRule.toString()).doesNotContain("eu/eu-a/w3=");
    }

    /** The default CPU query, for variations of it. */
    private static final String CPU = ControllerConfig.Queries.builder().build().cpuCores();

    private static ControllerConfig withCpuQuery(String cpuQuery) {
        return ControllerConfig.builder()
                .prometheus(fiveSeconds(prometheus.url().toString()).toBuilder()
                        .queries(ControllerConfig.Queries.builder()
                                .cpuCores(cpuQuery)
                                .build())
                        .build())
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .stateConfigMap("")
                        .build())
                .build();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "NaN    | (%s) * 0 / 0",
                "+Inf   | (%s) / 0",
                "-Inf   | -(%s) / 0",
                "empty  | sum by (namespace, pod) (rate(no_such_metric_total[${window}]))"
            })
    void round_cpuWithoutData_keepsTheLastRules_andCountsIt(String what, String query) {
        controller().round(AT, false);
        List<GenericKubernetesResource> before = rules();
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);

        Controller.Round round = controller(withCpuQuery(query.formatted(CPU))).round(AT, false);
        metrics.record(round);

        assertThat(round.failure()).as(round.message()).isEqualTo(Controller.FailureReason.COMPONENT_WITHOUT_METRICS);
        assertThat(round.notes())
                .as("the notes say why")
                .anySatisfy(n -> assertThat(n).containsAnyOf("no data, not zero", "empty answer"));
        assertThat(rules()).isEqualTo(before);
        assertThat(metrics.scrape())
                .contains("tailor_heart_round_failures_total{reason=\"component_without_metrics\"} 1.0");
    }

    @Test
    void round_onePodInfinite_isNoDataForThatPod_notZero() {
        String query = "(" + CPU + " unless on(pod) label_replace(vector(1), \"pod\", \"cart-w3\", \"\", \"\"))"
                + " or (sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{pod=\"cart-w3\","
                + " container=\"cart\"}[${window}])) / 0)";

        Controller.Round round = controller(withCpuQuery(query)).round(AT, false);

        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(round.notes())
                .anySatisfy(n -> assertThat(n)
                        .contains("shop/cart-w3")
                        .contains("Infinity")
                        .contains("no data, not zero"));
        assertThat(round.snapshot().replicas())
                .filteredOn(r -> r.pod().equals("cart-w3"))
                .singleElement()
                .satisfies(r -> assertThat(r.cpuCores()).isNull());
        assertThat(round.snapshot().replicas())
                .filteredOn(r -> r.pod().equals("cart-w2"))
                .singleElement()
                .satisfies(r -> assertThat(r.cpuCores()).isPositive());
    }

    @Test
    void round_applyConflict_keepsTheStateAndTheOldRule_andTheNextRoundWrites() {
        Controller controller = controller();
        controller.round(AT, false);
        String cartRule = DestinationRules.name("frontend", "cart");
        GenericKubernetesResource before = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .withName(cartRule)
                .get();
        // cart-w3 leaves Ready, so the next plan changes the frontend -> cart rule; the API server
        // answers its write (a server-side apply, a PATCH) with 409 Conflict once.
        Pod leaving = client.pods().inNamespace("shop").withName("cart-w3").get();
        leaving.getStatus().getConditions().get(0).setStatus("False");
        client.pods().inNamespace("shop").resource(leaving).updateStatus();
        server.expect()
                .patch()
                .withPath("/apis/networking.istio.io/v1/namespaces/shop/destinationrules/" + cartRule
                        + "?fieldManager=tailor-heart&force=true")
                .andReturn(
                        409,
                        new StatusBuilder()
                                .withCode(409)
                                .withReason("Conflict")
                                .withMessage("Apply failed with 1 conflict: conflict with \"kubectl\"")
                                .build())
                .once();
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);

        Controller.Round conflicted = controller.round(AT, false);
        metrics.record(conflicted);

        assertThat(conflicted.failure()).as(conflicted.message()).isEqualTo(Controller.FailureReason.KUBERNETES_WRITE);
        assertThat(conflicted.message())
                .contains("PATCH destinationrules.networking.istio.io/" + cartRule
                        + " in shop: 409 Conflict: Apply failed with 1 conflict")
                .doesNotContain("Status(");
        assertThat(controller.state().rounds()).isEqualTo(1);
        assertThat(metrics.scrape()).contains("tailor_heart_round_failures_total{reason=\"kubernetes_write\"} 1.0");
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace("shop")
                        .withName(cartRule)
                        .get()
                        .get("spec")
                        .toString())
                .isEqualTo(before.get("spec").toString())
                .contains("eu/eu-a/w3=");

        Controller.Round next = controller.round(AT, false);
        assertThat(next.failure()).as(next.message()).isNull();
        assertThat(controller.state().rounds()).isEqualTo(2);
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace("shop")
                        .withName(cartRule)
                        .get()
                        .get("spec")
                        .toString())
                .doesNotContain("eu/eu-a/w3=");
    }

    @Test
    void round_ruleEditedByHand_isRestored_andTheDiffShowsTheEdit() {
        Controller controller = controller();
        controller.round(AT, false);
        String cartRule = DestinationRules.name("frontend", "cart");
        GenericKubernetesResource edited = client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .withName(cartRule)
                .get();
        Map<String, Object> loadBalancer = edited.get("spec", "trafficPolicy", "loadBalancer");
        loadBalancer.put("simple", "ROUND_ROBIN");
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .resource(edited)
                .update();

        Controller.Round round = controller.round(AT, true);
        assertThat(round.changes())
                .filteredOn(c -> c.name().equals(cartRule))
                .singleElement()
                .satisfies(c -> {
                    assertThat(c.action()).isEqualTo(Actuator.Action.UPDATE);
                    assertThat(Actuator.diff(c))
                            .contains("-       simple: ROUND_ROBIN", "+       simple: LEAST_REQUEST");
                });
        controller.round(AT, false);
        assertThat(client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                        .inNamespace("shop")
                        .withName(cartRule)
                        .get()
                        .<Object>get("spec", "trafficPolicy", "loadBalancer", "simple"))
                .isEqualTo("LEAST_REQUEST");
    }

    @Test
    void round_leadershipLostBeforeTheWrites_writesNothing() {
        Controller controller = controller();
        controller.writeGuard(() -> false);

        Controller.Round round = controller.round(AT, false);

        assertThat(round.failure()).isEqualTo(Controller.FailureReason.LOST_LEADERSHIP);
        assertThat(round.message()).contains("stopped after 0 of 2 writes");
        assertThat(rules()).isEmpty();
        assertThat(controller.state()).isEqualTo(AtpmState.EMPTY);
    }

    @Test
    void round_readsTheSavedState_andATakeOverReadsItAgain() {
        Controller a = controller();
        Controller b = controller(); // a standby, started before a wrote anything
        a.round(AT, false);
        a.round(AT, false);

        Controller.Round first = b.round(AT, false);
        assertThat(first.plan().state().rounds())
                .as("continues from a's 2 rounds")
                .isEqualTo(3);
        a.takeOver(); // a leads again later: it must not plan from its own round 2
        Controller.Round back = a.round(AT, false);
        assertThat(back.plan().state().rounds()).isEqualTo(4);
    }

    @Test
    void dryRunRounds_eachReadTheStateTheLeaderSaved() {
        // A dry run shows what the running controller's next round would do: every dry round starts
        // from the state (and routes) the leader saved last, not from the dry run's own last round.
        Controller leader = controller();
        Controller dry = controller();
        leader.round(AT, false);
        assertThat(dry.round(AT, true).plan().state().rounds()).isEqualTo(2);
        leader.round(AT, false);
        leader.round(AT, false);

        Controller.Round again = dry.round(AT, true);

        assertThat(again.plan().state().rounds())
                .as("the leader's 3 rounds and this one")
                .isEqualTo(4);
        assertThat(new StateStore(client, "tailor-system/tailor-heart-state")
                        .load()
                        .state()
                        .rounds())
                .as("a dry run saves nothing")
                .isEqualTo(3);
    }

    @Test
    void round_stateUnreadable_changesNothing_andTheNextRoundReadsIt() {
        Controller first = controller();
        first.round(AT, false);
        List<GenericKubernetesResource> before = rules();
        // 403 (RBAC not yet granted, say): the client does not retry it, unlike a 5xx.
        server.expect()
                .get()
                .withPath("/api/v1/namespaces/tailor-system/configmaps/tailor-heart-state")
                .andReturn(
                        403,
                        new StatusBuilder()
                                .withCode(403)
                                .withReason("Forbidden")
                                .withMessage("configmaps is forbidden")
                                .build())
                .once();
        Controller restarted = controller();

        Controller.Round failed = restarted.round(AT, false);

        assertThat(failed.failure()).isEqualTo(Controller.FailureReason.KUBERNETES_READ);
        assertThat(failed.message())
                .contains("cannot read the ATPM state from ConfigMap tailor-system/tailor-heart-state")
                .contains("not planning until it can be read")
                // One line with the verb, the resource, the code and the message; no Status(...) dump.
                .contains("GET configmaps/tailor-heart-state in tailor-system: 403 Forbidden: configmaps is forbidden")
                .doesNotContain("Status(")
                .doesNotContain("\n");
        assertThat(rules()).isEqualTo(before);
        assertThat(new StateStore(client, "tailor-system/tailor-heart-state")
                        .load()
                        .state()
                        .rounds())
                .isEqualTo(1);
        Controller.Round next = restarted.round(AT, false);
        assertThat(next.plan().state().rounds()).isEqualTo(2);
    }

    /** Sets (or, with {@code null}, removes) labels of a node. */
    private static void relabelNode(String node, Map<String, String> labels) {
        io.fabric8.kubernetes.api.model.Node current =
                client.nodes().withName(node).get();
        Map<String, String> now = new java.util.HashMap<>(current.getMetadata().getLabels());
        labels.forEach((key, value) -> {
            if (value == null) {
                now.remove(key);
            } else {
                now.put(key, value);
            }
        });
        current.getMetadata().setLabels(now);
        client.nodes().resource(current).update();
    }

    private static Map<String, String> without(String... keys) {
        Map<String, String> labels = new java.util.HashMap<>();
        for (String key : keys) {
            labels.put(key, null);
        }
        return labels;
    }

    /** The {@code from} keys of rules (JSON trees or as read back), sorted, without repeats. */
    private static List<String> fromKeys(List<?> rules) {
        java.util.TreeSet<String> keys = new java.util.TreeSet<>();
        for (Object rule : rules) {
            com.fasterxml.jackson.databind.JsonNode tree =
                    new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(rule);
            tree.at("/spec/trafficPolicy/loadBalancer/localityLbSetting/distribute")
                    .forEach(entry -> keys.add(entry.get("from").asText()));
        }
        return List.copyOf(keys);
    }

    @Test
    void round_nodeWithoutSubzoneLabel_rulesAddressWhatIstioCanMatch_andTheNoteSaysHowToLabelIt() {
        // w3 in zone eu-b without topology.istio.io/subzone: Istio gives its pods eu/eu-b, so a key
        // eu/eu-b/w3 would never match them (neither the ingress gateway's rule nor frontend's).
        relabelNode("w3", Map.of("topology.kubernetes.io/zone", "eu-b"));
        relabelNode("w3", without("topology.istio.io/subzone"));

        Controller.Round dry = controller().round(AT, true);
        assertThat(dry.failure()).as(dry.message()).isNull();
        assertThat(IstioOracle.problems(client, dry.desired())).isEmpty();
        assertThat(fromKeys(dry.desired())).containsExactly("eu/eu-a/w1", "eu/eu-a/w2", "eu/eu-b");
        assertThat(dry.notes())
                .anySatisfy(n ->
                        assertThat(n).contains("w3").contains("kubectl label node w3 topology.istio.io/subzone=w3"));

        Controller.Round round = controller().round(AT, false);
        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(rules()).hasSize(2);
        assertThat(IstioOracle.problems(client, rules())).isEmpty();
    }

    @Test
    void round_oneNodeOfAZoneWithoutSubzone_theZoneIsOneKey() {
        // Istio refuses eu/eu-a next to eu/eu-a/w1 (they overlap), and eu/eu-a/w1 alone would leave
        // w3's sidecars unmatched: the zone is written as one locality.
        relabelNode("w3", without("topology.istio.io/subzone"));

        Controller.Round round = controller().round(AT, false);

        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(IstioOracle.problems(client, rules())).isEmpty();
        assertThat(fromKeys(rules())).containsExactly("eu/eu-a");
        assertThat(round.notes())
                .anySatisfy(n -> assertThat(n)
                        .contains("w1")
                        .contains("w2")
                        .contains("w3")
                        .contains("eu/eu-a"));
    }

    @Test
    void round_deprecatedFailureDomainLabels_giveTheLocality() {
        for (String node : ShopCluster.NODES) {
            relabelNode(node, without("topology.kubernetes.io/region", "topology.kubernetes.io/zone"));
            relabelNode(
                    node,
                    Map.of(
                            "failure-domain.beta.kubernetes.io/region",
                            "eu",
                            "failure-domain.beta.kubernetes.io/zone",
                            "eu-a"));
        }

        Controller.Round round = controller().round(AT, false);

        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(IstioOracle.problems(client, rules())).isEmpty();
        assertThat(fromKeys(rules())).containsExactly("eu/eu-a/w1", "eu/eu-a/w2", "eu/eu-a/w3");
    }

    @Test
    void round_podLocalityLabel_overridesTheNodes() {
        // Every pod on w1 carries istio-locality (Kubernetes label values take '.' for '/').
        for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
            if (pod.getSpec().getNodeName().equals("w1")) {
                pod.getMetadata().getLabels().put("istio-locality", "eu.eu-c.rack9");
                client.pods()
                        .inNamespace(pod.getMetadata().getNamespace())
                        .resource(pod)
                        .update();
            }
        }

        Controller.Round round = controller().round(AT, false);

        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(IstioOracle.problems(client, rules())).isEmpty();
        assertThat(fromKeys(rules())).containsExactly("eu/eu-a/w2", "eu/eu-a/w3", "eu/eu-c/rack9");
    }

    @Test
    void round_nodeWithoutRegion_keepsTheLastPlan_andSaysWhichLabelsFixIt() {
        controller().round(AT, false);
        List<GenericKubernetesResource> before = rules();
        // No region: Istio gives w2's pods no locality a rule can name (an empty part is refused).
        relabelNode(
                "w2",
                without("topology.kubernetes.io/region", "topology.kubernetes.io/zone", "topology.istio.io/subzone"));
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);

        Controller.Round round = controller().round(AT, false);
        metrics.record(round);

        assertThat(round.failure()).isEqualTo(Controller.FailureReason.NODE_WITHOUT_LOCALITY);
        assertThat(round.message()).contains("w2").contains("kubectl label node w2 topology.kubernetes.io/region=");
        assertThat(rules()).isEqualTo(before);
        assertThat(metrics.scrape())
                .contains("tailor_heart_round_failures_total{reason=\"node_without_locality\"} 1.0");
    }
}
