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
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The continuous loop: re-plans on pod events and leader election, on the mock API server and a
 * real Prometheus, with the loops' decisions on virtual time ({@link VirtualClock}). Nothing the
 * tests assert depends on how fast the machine is ({@link VirtualLoops}): Prometheus answers from
 * history at the loops' wall instant, moved on with the virtual clock; the clock moves only while
 * no call of the loops (a Lease attempt, a round or re-plan) waits for its answer, and a pod event
 * is awaited as the real answer it is, not by moving the clock until it came.
 */
@EnableKubernetesMockClient(crud = true)
class ControllerLoopTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    /** The Lease duration of the hand-over: renewals every 1.2 s, writes allowed 4 s after one. */
    private static final long LEASE_MILLIS = 6_000;

    private static PrometheusServer prometheus;
    private final VirtualClock clock = new VirtualClock(0);
    /** The loops' wall clock: an instant of Prometheus's history, moved on with {@link #clock}. */
    private final LongSupplier wall = VirtualLoops.wall(clock);

    private final List<ControllerLoop> loops = new CopyOnWriteArrayList<>();

    /**
     * Until {@code condition} holds, within {@code withinMillis} of virtual time: runs what the
     * loops' threads handed back to the scheduler, and when nothing was and no loop waits for the
     * Lease or for its round or re-plan, moves the clock on by {@code stepMillis} (time the loops
     * wait for: the debounce, the Lease's retry period).
     */
    private void stepUntil(
            String what, long stepMillis, long withinMillis, BooleanSupplier condition, Supplier<?> state) {
        VirtualLoops.stepUntil(
                clock,
                what,
                stepMillis,
                withinMillis,
                () -> loops.stream().anyMatch(l -> l.leaseAttemptInFlight() || l.workInFlight()),
                condition,
                state);
    }

    /** Until {@code condition} holds, without moving the clock: for real answers only. */
    private void pump(String what, BooleanSupplier condition, Supplier<?> state) {
        VirtualLoops.pump(clock, what, condition, state);
    }

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
        ShopCluster.create(client);
    }

    private static ControllerConfig config(double roundSeconds) {
        return ControllerConfig.builder()
                .prometheus(VirtualLoops.prometheusConfig(prometheus))
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
        return loop(options, reporter, new ControllerMetrics(wall));
    }

    private ControllerLoop loop(
            ControllerLoop.Options options,
            java.util.function.Consumer<Controller.Round> reporter,
            ControllerMetrics metrics) {
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(
                config, HeartConfig.DEFAULTS, TestPrometheus.client(prometheus), client, AtpmState.EMPTY, null, null);
        ControllerLoop loop = new ControllerLoop(
                controller, metrics, client, config, options, reporter, wall, clock.scheduler(), clock);
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
    void aRoundThatWritesRules_recordsAnEventOnEachRule_andADryRunNone() throws Exception {
        client.events().v1().events().inAnyNamespace().delete();
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        try (ControllerLoop dry =
                loop(new ControllerLoop.Options(true, null, "solo", Duration.ofSeconds(15)), rounds)) {
            dry.start();
            pump("the dry run's first round", () -> dry.rounds() == 1 && !dry.workInFlight(), () -> rounds);
        }
        assertThat(client.events().v1().events().inAnyNamespace().list().getItems())
                .as("a dry run writes nothing, events included")
                .isEmpty();
        try (ControllerLoop loop =
                loop(new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)), rounds)) {
            loop.start();
            pump("the first round", () -> loop.rounds() == 1 && !loop.workInFlight(), () -> rounds);
            Controller.Round round = rounds.get(rounds.size() - 1);
            assertThat(round.failure()).isNull();
            List<String> created = round.changes().stream()
                    .filter(c -> c.action() == Actuator.Action.CREATE)
                    .map(c -> c.namespace() + "/" + c.name())
                    .toList();
            assertThat(created).isNotEmpty();
            // Sent on their own thread: awaited as the real answers they are.
            Await.until(
                    "an event on each rule created",
                    () -> client.events()
                                    .v1()
                                    .events()
                                    .inAnyNamespace()
                                    .list()
                                    .getItems()
                                    .size()
                            >= created.size());
            List<io.fabric8.kubernetes.api.model.events.v1.Event> events =
                    client.events().v1().events().inAnyNamespace().list().getItems();
            assertThat(events)
                    .extracting(e -> e.getMetadata().getNamespace() + "/"
                            + e.getRegarding().getName())
                    .containsExactlyInAnyOrderElementsOf(created);
            assertThat(events).allSatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("RuleCreated");
                assertThat(e.getType()).isEqualTo("Normal");
                assertThat(e.getRegarding().getKind()).isEqualTo("DestinationRule");
                assertThat(e.getReportingController()).isEqualTo(RoundEvents.REPORTING_CONTROLLER);
                assertThat(e.getReportingInstance()).isEqualTo("solo");
                assertThat(e.getNote()).matches("created with \\d+ locality weights");
                assertThat(e.getRegarding().getUid())
                        .as("kubectl describe finds it by")
                        .isNotBlank();
            });
        }
    }

    @Test
    void podLeavingReady_isReplannedBetweenRounds() throws Exception {
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        try (ControllerLoop loop =
                loop(new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)), rounds)) {
            loop.start();
            // The first round is due at once: no virtual time passes while it runs.
            pump(
                    "the first round's rules",
                    () -> cartRule().contains("eu/eu-a/w3=") && loop.rounds() == 1 && !loop.workInFlight(),
                    () -> rounds);
            // The informer's first list: an event for each Ready pod (all of them), whenever its thread
            // gets there; the pod is changed only after, so that its change is an event of its own.
            int readyPods = client.pods()
                    .inNamespace("shop")
                    .withLabel("app")
                    .list()
                    .getItems()
                    .size();
            pump("the informer's first list", () -> loop.podEvents() == readyPods, () -> loop.podEvents() + " events");

            long replansBefore = loop.replans();
            Pod cart = client.pods().inNamespace("shop").withName("cart-w3").get();
            cart.getStatus().getConditions().get(0).setStatus("False");
            client.pods().inNamespace("shop").resource(cart).updateStatus();
            pump(
                    "the informer to hand the change over",
                    () -> loop.podEvents() == readyPods + 1,
                    () -> loop.podEvents() + " events");

            // The next round is an hour away: only an event-driven re-plan can take w3 out. The clock
            // moves 10 ms whenever the loop has nothing to do and waits for no answer, so the re-plan
            // follows within two debounces (one for the first list's events, if they have not been
            // re-planned yet, one for the change).
            stepUntil(
                    "w3 out of the rule after the pod left Ready",
                    10,
                    2 * ControllerLoop.DEBOUNCE_MILLIS + 10,
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
            // On virtual time the delay is from the first event not yet re-planned to the re-plan's
            // end: at least the debounce.
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
        ControllerMetrics metricsA = new ControllerMetrics(wall);
        ControllerMetrics metricsB = new ControllerMetrics(wall);
        ControllerLoop first = loop(
                new ControllerLoop.Options(
                        false, "tailor-system/tailor-heart", "replica-a", Duration.ofMillis(LEASE_MILLIS)),
                round -> events.add("replica-a round " + round.failure()),
                metricsA);
        ControllerLoop second = loop(
                new ControllerLoop.Options(
                        false, "tailor-system/tailor-heart", "replica-b", Duration.ofMillis(LEASE_MILLIS)),
                round -> events.add("replica-b round " + round.failure()),
                metricsB);
        second.onMessage(standbyLog::add);
        try {
            first.start();
            // Its first attempt takes the free Lease, its first round follows at once.
            stepUntil(
                    "replica-a to lead and write",
                    100,
                    LEASE_MILLIS,
                    () -> events.contains("replica-a round null"),
                    () -> events);
            second.start();
            // replica-b has read the Lease and seen replica-a in it: from here on it must not plan.
            stepUntil(
                    "replica-b to stand by",
                    100,
                    LEASE_MILLIS,
                    () -> standbyLog.contains(
                            "Lease tailor-system/tailor-heart: replica-a leads; this replica (replica-b) stands by"),
                    () -> standbyLog);
            // Two retry periods more: replica-b goes on standing by.
            long twoRetriesLater = clock.millis() + 2 * LEASE_MILLIS / 5;
            stepUntil(
                    "two retry periods more",
                    100,
                    2 * LEASE_MILLIS / 5,
                    () -> clock.millis() >= twoRetriesLater,
                    () -> standbyLog);
            assertThat(second.leading()).isFalse();
            assertThat(second.leading()).isFalse();
            // What the lease-flapping alert sums: one acquisition so far, by replica-a.
            assertThat(metricsA.scrape())
                    .contains("tailor_heart_leader 1.0")
                    .contains("tailor_heart_lease_acquisitions_total 1.0");
            assertThat(metricsB.scrape())
                    .contains("tailor_heart_leader 0.0")
                    .contains("tailor_heart_lease_acquisitions_total 0.0");

            // replica-a closes with no call in flight (a call its closing drops would never be answered).
            pump(
                    "replica-a's calls answered",
                    () -> !first.workInFlight() && !first.leaseAttemptInFlight(),
                    () -> events);
            first.close();
            // At replica-b's next attempt once the release is written; should the release go
            // unanswered within the renew deadline (real time), once the Lease has not changed for
            // a lease duration on replica-b's clock.
            stepUntil(
                    "replica-b to take over and write",
                    100,
                    2 * LEASE_MILLIS,
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
        ControllerMetrics metrics = new ControllerMetrics(wall);
        List<Controller.Round> rounds = new CopyOnWriteArrayList<>();
        ControllerConfig config = config(3_600);
        Controller controller = new Controller(
                config, HeartConfig.DEFAULTS, TestPrometheus.client(prometheus), client, AtpmState.EMPTY, null, null);
        try (ControllerLoop loop = new ControllerLoop(
                controller,
                metrics,
                client,
                config,
                new ControllerLoop.Options(false, null, "solo", Duration.ofSeconds(15)),
                rounds::add,
                wall,
                clock.scheduler(),
                clock)) {
            loop.start();
            // The first round is due at once: no virtual time passes while it runs.
            pump("the first round", () -> !rounds.isEmpty(), () -> rounds);
        }
        assertThat(rounds.get(0).failure()).as(rounds.get(0).message()).isNull();
        assertThat(metrics.scrape()).contains("tailor_heart_nodes_missing_locality_labels 1.0");
    }
}
