package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The continuous loop: re-plans on pod events and leader election, on the mock API server. */
@EnableKubernetesMockClient(crud = true)
class ControllerLoopTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;

    @BeforeAll
    static void startPrometheus() throws Exception {
        prometheus = ShopCluster.prometheus();
    }

    @AfterAll
    static void stopPrometheus() {
        if (prometheus != null) {
            prometheus.close();
        }
    }

    @BeforeEach
    void cluster() {
        client.genericKubernetesResources(Actuator.DESTINATION_RULE).inAnyNamespace().delete();
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        ShopCluster.create(client);
    }

    private static ControllerConfig config(double roundSeconds) {
        return new ControllerConfig(
                new ControllerConfig.Prometheus(prometheus.url().toString(), 5.0, 5.0, 5.0, null, null, null, null),
                new ControllerConfig.Kubernetes(List.of("shop"), null, null, null, null, ""), roundSeconds, null);
    }

    private static ControllerLoop loop(ControllerLoop.Options options, List<Controller.Round> rounds) {
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(config, HeartConfig.DEFAULTS,
                new PrometheusClient(prometheus.url(), Duration.ofSeconds(5)), client, AtpmState.EMPTY, null, null);
        return new ControllerLoop(controller, new ControllerMetrics(System::currentTimeMillis), client, config, options,
                rounds::add, System::currentTimeMillis);
    }

    private static String cartRule() {
        return client.genericKubernetesResources(Actuator.DESTINATION_RULE).inNamespace("shop").list().getItems()
                .stream().filter(r -> r.getMetadata().getName().endsWith("to-cart"))
                .map(GenericKubernetesResource::toString).findFirst().orElse("");
    }

    @Test
    void podLeavingReady_isReplannedBetweenRounds() throws Exception {
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        try (ControllerLoop loop = loop(new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)), rounds)) {
            loop.start();
            assertThat(prometheus.await(Duration.ofSeconds(20), () -> cartRule().contains("eu/eu-a/w3="))).isTrue();

            Pod cart = client.pods().inNamespace("shop").withName("cart-w3").get();
            cart.getStatus().getConditions().get(0).setStatus("False");
            client.pods().inNamespace("shop").resource(cart).updateStatus();

            // The next round is an hour away: only an event-driven re-plan can take w3 out.
            assertThat(prometheus.await(Duration.ofSeconds(20), () -> !cartRule().contains("eu/eu-a/w3=")))
                    .as("rule after the pod left Ready: " + cartRule() + "; replans " + loop.replans() + "; rounds "
                            + rounds.stream().map(r -> r.failure() + " " + r.message() + " " + (r.snapshot() == null ? ""
                            : r.snapshot().replicas().stream().filter(x -> !x.isReady()).toList())).toList()).isTrue();
            assertThat(loop.rounds()).isEqualTo(1);
            assertThat(loop.replans()).isPositive();
            // Measured, not asserted against a bound (timings belong in reports): event to rules.
            System.out.println("re-plan delay (pod event -> rules written): " + loop.lastReplanDelayMillis() + " ms");
            assertThat(loop.lastReplanDelayMillis()).isGreaterThanOrEqualTo(ControllerLoop.DEBOUNCE_MILLIS);
            assertThat(rounds).allSatisfy(r -> assertThat(r.failure()).as(String.valueOf(r.message())).isNull());
        }
    }

    @Test
    void leaderHandOver_neverTwoLeaders() throws Exception {
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        ControllerLoop.Options a = new ControllerLoop.Options(true, "tailor-system/tailor-heart", "replica-a",
                Duration.ofSeconds(2));
        ControllerLoop.Options b = new ControllerLoop.Options(true, "tailor-system/tailor-heart", "replica-b",
                Duration.ofSeconds(2));
        ControllerLoop first = loop(a, rounds);
        ControllerLoop second = loop(b, rounds);
        try {
            first.start();
            assertThat(prometheus.await(Duration.ofSeconds(20), first::leading)).isTrue();
            second.start();
            boolean[] both = {false};
            prometheus.await(Duration.ofSeconds(4), () -> {
                both[0] |= first.leading() && second.leading();
                return false;
            });
            assertThat(both[0]).as("both replicas led at once").isFalse();
            assertThat(second.leading()).isFalse();

            first.close();
            assertThat(prometheus.await(Duration.ofSeconds(30), second::leading)).as("replica-b took over").isTrue();
        } finally {
            first.close();
            second.close();
        }
    }

    @Test
    void nodeWithoutSubzoneLabel_isCountedInTheMetric() throws Exception {
        io.fabric8.kubernetes.api.model.Node w3 = client.nodes().withName("w3").get();
        w3.getMetadata().getLabels().remove("topology.istio.io/subzone");
        client.nodes().resource(w3).update();
        ControllerMetrics metrics = new ControllerMetrics(System::currentTimeMillis);
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(config, HeartConfig.DEFAULTS,
                new PrometheusClient(prometheus.url(), Duration.ofSeconds(5)), client, AtpmState.EMPTY, null, null);
        try (ControllerLoop loop = new ControllerLoop(controller, metrics, client, config,
                new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)), rounds::add,
                System::currentTimeMillis)) {
            loop.start();
            assertThat(prometheus.await(Duration.ofSeconds(20), () -> !rounds.isEmpty())).isTrue();
        }
        assertThat(rounds.get(0).failure()).as(rounds.get(0).message()).isNull();
        assertThat(metrics.scrape()).contains("tailor_heart_nodes_missing_locality_labels 1.0");
    }
}
