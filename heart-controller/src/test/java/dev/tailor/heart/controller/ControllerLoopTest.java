package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import dev.tailor.testkit.VirtualClock;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The continuous loop: re-plans on pod events and leader election, on the mock API server and a
 * real Prometheus, with the loops' decisions on virtual time ({@link VirtualClock}).
 */
@EnableKubernetesMockClient(crud = true)
class ControllerLoopTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static PrometheusServer prometheus;
    private final VirtualClock clock = new VirtualClock(0);
    private final List<ControllerLoop> loops = new CopyOnWriteArrayList<>();

    /**
     * Until {@code condition} holds: runs what the loops' threads handed back to the scheduler, and
     * when nothing was and no loop waits for the Lease, moves the clock on by {@code stepMillis} (time
     * the loops may be waiting for: the debounce, the Lease's retry period). Bounded by {@link Await}'s
     * timeout.
     */
    private void stepUntil(String what, long stepMillis, BooleanSupplier condition, Supplier<?> state) {
        Await.until(
                what,
                () -> {
                    if (clock.runDueTasks() == 0 && loops.stream().noneMatch(ControllerLoop::leaseAttemptInFlight)) {
                        // To the next task at most, so no decision is taken while a call it waits for is unanswered.
                        long next = clock.nanosToNextTask();
                        long step = TimeUnit.MILLISECONDS.toNanos(stepMillis);
                        clock.advance(next < 0 ? step : Math.min(next, step));
                    }
                    return condition.getAsBoolean();
                },
                () -> "at " + clock.millis() + " ms; " + state.get());
    }

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
        client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .delete();
        client.pods().inAnyNamespace().delete();
        client.nodes().delete();
        ShopCluster.create(client);
    }

    private static ControllerConfig config(double roundSeconds) {
        return ControllerConfig.builder()
                .prometheus(ControllerConfig.Prometheus.builder()
                        .url(prometheus.url().toString())
                        .timeoutSeconds(5.0)
                        .windowSeconds(5.0)
                        .delayWindowSeconds(5.0)
                        .build())
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .stateConfigMap("")
                        .build())
                .roundSeconds(roundSeconds)
                .build();
    }

    private ControllerLoop loop(ControllerLoop.Options options, List<Controller.Round> rounds) {
        return loop(options, rounds::add);
    }

    private ControllerLoop loop(
            ControllerLoop.Options options, java.util.function.Consumer<Controller.Round> reporter) {
        return loop(options, reporter, new ControllerMetrics(System::currentTimeMillis));
    }

    private ControllerLoop loop(
            ControllerLoop.Options options,
            java.util.function.Consumer<Controller.Round> reporter,
            ControllerMetrics metrics) {
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(
                config,
                HeartConfig.DEFAULTS,
                new PrometheusClient(prometheus.url(), Duration.ofSeconds(5)),
                client,
                AtpmState.EMPTY,
                null,
                null);
        ControllerLoop loop = new ControllerLoop(
                controller,
                metrics,
                client,
                config,
                options,
                reporter,
                System::currentTimeMillis,
                clock.scheduler(),
                clock);
        loops.add(loop);
        return loop;
    }

    private static String cartRule() {
        return client
                .genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .list()
                .getItems()
                .stream()
                .filter(r -> r.getMetadata().getName().endsWith("to-cart"))
                .map(GenericKubernetesResource::toString)
                .findFirst()
                .orElse("");
    }

    @Test
    void podLeavingReady_isReplannedBetweenRounds() throws Exception {
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        try (ControllerLoop loop =
                loop(new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)), rounds)) {
            loop.start();
            stepUntil("the first round's rules", 10, () -> cartRule().contains("eu/eu-a/w3="), () -> rounds);

            long replansBefore = loop.replans();
            Pod cart = client.pods().inNamespace("shop").withName("cart-w3").get();
            cart.getStatus().getConditions().get(0).setStatus("False");
            client.pods().inNamespace("shop").resource(cart).updateStatus();

            // The next round is an hour away: only an event-driven re-plan can take w3 out. The clock
            // moves 10 ms whenever the loop has nothing to do, until the informer (a real thread)
            // has handed the event over and the debounce has passed.
            stepUntil(
                    "w3 out of the rule after the pod left Ready",
                    10,
                    () -> !cartRule().contains("eu/eu-a/w3=") && loop.replans() > replansBefore,
                    () -> "rule " + cartRule() + "; replans " + loop.replans() + "; rounds "
                            + rounds.stream()
                                    .map(r -> r.failure() + " " + r.message() + " "
                                            + (r.snapshot() == null
                                                    ? ""
                                                    : r.snapshot().replicas().stream()
                                                            .filter(x -> !x.isReady())
                                                            .toList()))
                                    .toList());
            assertThat(loop.rounds()).isEqualTo(1);
            assertThat(loop.replans()).isPositive();
            // On virtual time the delay is the debounce plus the steps the test took while the
            // informer's thread delivered the event: at least the debounce.
            assertThat(loop.lastReplanDelayMillis()).isGreaterThanOrEqualTo(ControllerLoop.DEBOUNCE_MILLIS);
            assertThat(rounds)
                    .allSatisfy(r -> assertThat(r.failure())
                            .as(String.valueOf(r.message()))
                            .isNull());
        }
    }

    @Test
    void leaderHandOver_theStandbyWritesOnlyAfterTheLeaderLetGo() throws Exception {
        // One timeline of what both replicas did, in the order it happened. A 6 s lease: renewals every
        // 1.2 s (virtual) and writes allowed 4 s after one; the hand-over does not wait for the lease
        // to expire: the leader releases it on close. (That two replicas never lead at once, on a
        // leader cut off from the API server, is LeaseElectorTest's.)
        List<String> events = new CopyOnWriteArrayList<>();
        List<String> standbyLog = new CopyOnWriteArrayList<>();
        ControllerMetrics metricsA = new ControllerMetrics(System::currentTimeMillis);
        ControllerMetrics metricsB = new ControllerMetrics(System::currentTimeMillis);
        ControllerLoop first = loop(
                new ControllerLoop.Options(false, "tailor-system/tailor-heart", "replica-a", Duration.ofSeconds(6)),
                round -> events.add("replica-a round " + round.failure()),
                metricsA);
        ControllerLoop second = loop(
                new ControllerLoop.Options(false, "tailor-system/tailor-heart", "replica-b", Duration.ofSeconds(6)),
                round -> events.add("replica-b round " + round.failure()),
                metricsB);
        second.onMessage(standbyLog::add);
        try {
            first.start();
            stepUntil("replica-a to lead and write", 100, () -> events.contains("replica-a round null"), () -> events);
            second.start();
            // replica-b has read the Lease and seen replica-a in it: from here on it must not plan.
            stepUntil(
                    "replica-b to stand by",
                    100,
                    () -> standbyLog.contains(
                            "Lease tailor-system/tailor-heart: replica-a leads; this replica (replica-b) stands by"),
                    () -> standbyLog);
            // Two retry periods more: replica-b goes on standing by.
            clock.advance(Duration.ofMillis(2_400));
            assertThat(second.leading()).isFalse();
            assertThat(second.leading()).isFalse();
            // What the lease-flapping alert sums: one acquisition so far, by replica-a.
            assertThat(metricsA.scrape())
                    .contains("tailor_heart_leader 1.0")
                    .contains("tailor_heart_lease_acquisitions_total 1.0");
            assertThat(metricsB.scrape())
                    .contains("tailor_heart_leader 0.0")
                    .contains("tailor_heart_lease_acquisitions_total 0.0");

            first.close();
            stepUntil(
                    "replica-b to take over and write",
                    100,
                    () -> events.contains("replica-b round null"),
                    () -> events + "; " + standbyLog);
            assertThat(metricsB.scrape())
                    .contains("tailor_heart_leader 1.0")
                    .contains("tailor_heart_lease_acquisitions_total 1.0");
        } finally {
            first.close();
            second.close();
        }
        // Every round of replica-a came before every round of replica-b: never both.
        List<String> turns = new java.util.ArrayList<>();
        for (String event : events) {
            String replica = event.substring(0, "replica-a".length());
            if (turns.isEmpty() || !turns.get(turns.size() - 1).equals(replica)) {
                turns.add(replica);
            }
        }
        assertThat(turns).as(events.toString()).containsExactly("replica-a", "replica-b");
    }

    @Test
    void nodeWithoutSubzoneLabel_isCountedInTheMetric() throws Exception {
        io.fabric8.kubernetes.api.model.Node w3 = client.nodes().withName("w3").get();
        w3.getMetadata().getLabels().remove("topology.istio.io/subzone");
        client.nodes().resource(w3).update();
        ControllerMetrics metrics = new ControllerMetrics(System::currentTimeMillis);
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(
                config,
                HeartConfig.DEFAULTS,
                new PrometheusClient(prometheus.url(), Duration.ofSeconds(5)),
                client,
                AtpmState.EMPTY,
                null,
                null);
        try (ControllerLoop loop = new ControllerLoop(
                controller,
                metrics,
                client,
                config,
                new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)),
                rounds::add,
                System::currentTimeMillis,
                clock.scheduler(),
                clock)) {
            loop.start();
            stepUntil("the first round", 10, () -> !rounds.isEmpty(), () -> rounds);
        }
        assertThat(rounds.get(0).failure()).as(rounds.get(0).message()).isNull();
        assertThat(metrics.scrape()).contains("tailor_heart_nodes_missing_locality_labels 1.0");
    }
}
