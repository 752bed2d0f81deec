package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.GroupShare;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Rounds at past instants against a real Prometheus loaded with history (promtool backfill), so
 * that several 30 s rounds of changing metrics need no waiting: a node that slows down over three
 * rounds, and a Prometheus whose answers carry warnings.
 *
 * <p>History: 100 s of the {@link ShopCluster} mesh sampled every 5 s, ending two minutes ago. The
 * app containers on w2 need 0.005 CPU-seconds per request in the first 30 s, 0.010 in the next 30 s
 * and 0.020 after that; w1 and w3 keep 0.004 and 0.010. Rounds read 30 s windows ending at 30, 60
 * and 90 s, one per phase.
 */
@EnableKubernetesMockClient(crud = true)
class ControllerHistoryTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static final int PHASE_SECONDS = 30;
    private static final long START_EPOCH_SECONDS = Instant.now().getEpochSecond() / 5 * 5 - 220;
    private static PrometheusServer prometheus;
    private static PrometheusServer warning;

    @BeforeAll
    static void startPrometheus() throws Exception {
        String history = ShopCluster.history(
                START_EPOCH_SECONDS,
                100,
                5,
                (node, t) -> !node.equals("w2")
                        ? ShopCluster.CPU_PER_REQUEST.get(node)
                        : 0.005 * (1 << Math.min(2, (int) (t / PHASE_SECONDS))));
        prometheus = PrometheusServer.start(() -> "", new PrometheusServer.Options(history, false));
        warning = PrometheusServer.start(() -> "", new PrometheusServer.Options(history, true));
    }

    @AfterAll
    static void stopPrometheus() {
        for (PrometheusServer p : new PrometheusServer[] {prometheus, warning}) {
            if (p != null) {
                p.close();
            }
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

    private static Controller controller(PrometheusServer source, AtpmState state) {
        return controller(source, state, null);
    }

    /**
     * The paper's planner (a node slowing down is followed from its first round) and, unless given,
     * no share cap: these rounds check the trend and the cap themselves; ControllerBadRoundsTest
     * covers the defaults.
     */
    private static Controller controller(PrometheusServer source, AtpmState state, Double maxShareMove) {
        ControllerConfig config = ControllerConfig.builder()
                .prometheus(ControllerConfig.Prometheus.builder()
                        .url(source.url().toString())
                        .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                        .windowSeconds(30.0)
                        .delayWindowSeconds(30.0)
                        .build())
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .stateConfigMap("")
                        .build())
                .maxShareMovePerRound(maxShareMove == null ? 1.0 : maxShareMove)
                .planner(ControllerConfig.Planner.PAPER)
                .build();
        return new Controller(
                config,
                HeartConfig.PAPER.toBuilder().parallel(false).build(),
                TestPrometheus.client(source.url()),
                client,
                state,
                null,
                null);
    }

    private static Instant endOfPhase(int phase) {
        return Instant.ofEpochSecond(START_EPOCH_SECONDS + (long) PHASE_SECONDS * (phase + 1));
    }

    private static double share(Controller.Round round, String component, String node) {
        for (ComponentShares shares : round.plan().allocation().shares()) {
            if (shares.component().equals(component)) {
                return shares.groups().stream()
                        .filter(g -> g.node().equals(node))
                        .mapToDouble(GroupShare::share)
                        .sum();
            }
        }
        throw new AssertionError("no shares for " + component);
    }

    private static List<GenericKubernetesResource> rules() {
        return client.genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inAnyNamespace()
                .list()
                .getItems();
    }

    @Test
    void nodeSlowingDownOverThreeRounds_getsLessEveryRound_andTheRulesFollow() {
        Controller controller = controller(prometheus, AtpmState.EMPTY);
        List<Double> w2Shares = new ArrayList<>();
        List<String> ruleVersions = new ArrayList<>();
        for (int phase = 0; phase < 3; phase++) {
            Controller.Round round = controller.round(endOfPhase(phase), false);
            assertThat(round.failure()).as(round.message()).isNull();
            assertThat(round.applied()).isTrue();
            // What the round measured: w2's CPU per request of this phase.
            double cpu = round.snapshot().replicas().stream()
                    .filter(r -> r.pod().equals("cart-w2"))
                    .findFirst()
                    .orElseThrow()
                    .cpuCores();
            assertThat(cpu / ShopCluster.RPS_PER_POD)
                    .isCloseTo(0.005 * (1 << phase), org.assertj.core.data.Offset.offset(0.0005 * (1 << phase)));
            w2Shares.add(share(round, "cart", "w2"));
            ruleVersions.add(rules().toString());
        }
        System.out.println("w2's share of cart by round: " + w2Shares);
        assertThat(controller.state().rounds()).isEqualTo(3);
        // w2 gets less each round while w1 (unchanged, fastest) keeps more than w2.
        assertThat(w2Shares.get(1)).as("shares of w2 by round: " + w2Shares).isLessThan(w2Shares.get(0));
        assertThat(w2Shares.get(2)).as("shares of w2 by round: " + w2Shares).isLessThan(w2Shares.get(1));
        // Every round rewrote the rules (the weights moved).
        assertThat(ruleVersions).doesNotHaveDuplicates();
    }

    @Test
    void shareCap_routesMoveAtMostTheCapPerRound() {
        Controller free = controller(prometheus, AtpmState.EMPTY);
        Controller capped = controller(prometheus, AtpmState.EMPTY, 0.1);
        List<Double> freeShares = new ArrayList<>();
        List<Double> cappedShares = new ArrayList<>();
        List<List<String>> notes = new ArrayList<>();
        com.fasterxml.jackson.databind.node.ObjectNode lastDesired = null;
        for (int phase = 0; phase < 3; phase++) {
            Controller.Round a = free.round(endOfPhase(phase), true);
            Controller.Round b = capped.round(endOfPhase(phase), true);
            assertThat(b.failure()).as(b.message()).isNull();
            freeShares.add(localShare(a));
            cappedShares.add(localShare(b));
            notes.add(b.notes());
            lastDesired = b.desired().stream()
                    .filter(r -> r.at("/metadata/name").asText().endsWith("to-frontend"))
                    .findFirst()
                    .orElseThrow();
        }
        System.out.println("ingress on w2 -> frontend on w2, free " + freeShares + ", capped at 0.1 " + cappedShares);
        assertThat(freeShares.get(2))
                .as("the test needs a plan that moves more than the cap: " + freeShares)
                .isLessThan(freeShares.get(1) - 0.2);
        // Nothing to cap in the first round; a small move passes; a large one stops at the cap.
        assertThat(cappedShares.get(0)).isEqualTo(freeShares.get(0));
        assertThat(Math.abs(freeShares.get(1) - freeShares.get(0))).isLessThan(0.1);
        assertThat(cappedShares.get(1)).isCloseTo(freeShares.get(1), org.assertj.core.data.Offset.offset(1e-9));
        assertThat(cappedShares.get(2)).isCloseTo(cappedShares.get(1) - 0.1, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(notes.get(2))
                .anySatisfy(n -> assertThat(n)
                        .contains("istio-ingressgateway -> frontend from w2")
                        .contains("capped at 0.1"));
        // The rules carry the capped routes: w2's own locality keeps 87 of the ingress's 100 on w2.
        assertThat(lastDesired.toString())
                .contains("\"from\":\"eu/eu-a/w2\"")
                .contains("\"eu/eu-a/w2\":" + Math.round(cappedShares.get(2) * 100));
    }

    @Test
    void replansAfterACappedRound_moveNoFurtherThanTheRound() {
        // A re-plan redoes the last round with what Kubernetes says now (a pod event), from the same
        // metrics: like the ATPM state, the cap starts from the routes applied before that round, so
        // a burst of pod events cannot walk the routes towards the round's plan one cap step each.
        Controller capped = controller(prometheus, AtpmState.EMPTY, 0.1);
        Controller.Round last = null;
        for (int phase = 0; phase < 3; phase++) {
            last = capped.round(endOfPhase(phase), false);
            assertThat(last.failure()).as(last.message()).isNull();
        }
        double afterTheRound = localShare(last);
        List<GenericKubernetesResource> rules = rules();
        for (int replan = 0; replan < 3; replan++) {
            Controller.Round round = capped.replan(false);
            assertThat(round.failure()).as(round.message()).isNull();
            assertThat(localShare(round))
                    .as("re-plan " + replan)
                    .isCloseTo(afterTheRound, org.assertj.core.data.Offset.offset(1e-9));
        }
        assertThat(rules())
                .as("nothing rewritten: nothing changed in the cluster")
                .isEqualTo(rules);
    }

    /** The fraction of the ingress gateway's calls on w2 that the round sends to frontend on w2. */
    private static double localShare(Controller.Round round) {
        return round.routes().stream()
                .filter(r -> r.callee().equals("frontend"))
                .flatMap(r -> r.from().stream())
                .filter(e -> e.fromNode().equals("w2"))
                .mapToDouble(e -> e.toNodes().getOrDefault("w2", 0.0))
                .sum();
    }

    @Test
    void prometheusAnswersWithWarnings_keepsTheLastRules_andCountsIt() {
        Controller good = controller(prometheus, AtpmState.EMPTY);
        Controller.Round first = good.round(endOfPhase(0), false);
        assertThat(first.failure()).as(first.message()).isNull();
        List<GenericKubernetesResource> before = rules();

        Controller partial = controller(warning, good.state());
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);
        Controller.Round round = partial.round(endOfPhase(1), false);
        metrics.record(round);

        assertThat(round.failure()).isEqualTo(Controller.FailureReason.COMPONENT_WITHOUT_METRICS);
        assertThat(round.notes())
                .anySatisfy(n -> assertThat(n)
                        .contains("Prometheus warned")
                        .contains("remote")
                        .contains("may be partial"));
        assertThat(rules()).isEqualTo(before);
        assertThat(partial.state()).isEqualTo(good.state());
        assertThat(metrics.scrape())
                .contains("tailor_heart_round_failures_total{reason=\"component_without_metrics\"} 1.0");
    }
}
