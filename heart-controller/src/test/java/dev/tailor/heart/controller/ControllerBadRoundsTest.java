package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.ComponentShares;
import dev.tailor.heart.GroupShare;
import dev.tailor.heart.Route;
import dev.tailor.heart.ShareMoveCap;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
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
 * Bad rounds against a real Prometheus loaded with history (promtool backfill), 30 s rounds at past
 * instants, so minutes of metrics need no waiting:
 * <ul>
 *   <li>one round in which cart-w1's request metric shows a tenth of its requests (CPU unchanged);</li>
 *   <li>cart-w3 idling at 0.03 cores while its traffic falls 20 → 10 → 5 → 2 req/s;</li>
 *   <li>cart on w1 alone (w2 and w3 not Ready) asked for more than it can serve.</li>
 * </ul>
 * Every pod serves 20 req/s unless said otherwise; CPU per request as in {@link ShopCluster}.
 */
@EnableKubernetesMockClient(crud = true)
class ControllerBadRoundsTest {

    static KubernetesMockServer server;
    static KubernetesClient client;

    private static final int PHASE_SECONDS = 30;
    private static final int PHASES = 6;
    private static final long START = Instant.now().getEpochSecond() / 5 * 5 - PHASES * PHASE_SECONDS - 120;
    private static final double RPS = ShopCluster.RPS_PER_POD;
    private static PrometheusServer outlier;
    private static PrometheusServer idle;
    private static PrometheusServer slowCart;

    /** The phase (0-based, 30 s each) that {@code t} seconds into the history falls in. */
    private static int phase(double t) {
        return (int) (t / PHASE_SECONDS);
    }

    @BeforeAll
    static void startPrometheus() throws Exception {
        // Phase 3: cart-w1's request counter grows at a tenth of the rate (a scrape gap, a reset).
        outlier = PrometheusServer.start(
                () -> "",
                new PrometheusServer.Options(
                        ShopCluster.history(START, PHASES * PHASE_SECONDS, 5, new ShopCluster.Load() {
                            @Override
                            public double servedPerSecond(String component, String node, double t) {
                                return component.equals("cart") && node.equals("w1") && phase(t) == 3 ? RPS / 10 : RPS;
                            }

                            @Override
                            public double cpuCores(String component, String node, double t) {
                                return ShopCluster.CPU_PER_REQUEST.get(node) * RPS;
                            }
                        }),
                        false));
        // cart costs 0.004 CPU-s per request everywhere; cart-w3 also idles at 0.03 cores and serves
        // 20, 10, 5, 2 req/s in phases 0..3, 2 after: the traffic the paper's ATPM leaves it.
        idle = PrometheusServer.start(
                () -> "",
                new PrometheusServer.Options(
                        ShopCluster.history(START, PHASES * PHASE_SECONDS, 5, new ShopCluster.Load() {
                            @Override
                            public double servedPerSecond(String component, String node, double t) {
                                if (component.equals("cart") && node.equals("w3")) {
                                    return new double[] {20, 10, 5, 2, 2, 2, 2}[phase(t)];
                                }
                                return RPS;
                            }

                            @Override
                            public double cpuCores(String component, String node, double t) {
                                if (component.equals("frontend")) {
                                    return ShopCluster.CPU_PER_REQUEST.get(node) * RPS;
                                }
                                return (node.equals("w3") ? 0.03 : 0) + 0.004 * servedPerSecond(component, node, t);
                            }
                        }),
                        false));
        // cart on w1 needs 0.02 CPU-s per request: 1 core serves 50 req/s, and 60 reach cart.
        slowCart = PrometheusServer.start(
                () -> "",
                new PrometheusServer.Options(
                        ShopCluster.history(START, PHASES * PHASE_SECONDS, 5, new ShopCluster.Load() {
                            @Override
                            public double servedPerSecond(String component, String node, double t) {
                                return RPS;
                            }

                            @Override
                            public double cpuCores(String component, String node, double t) {
                                boolean slow = component.equals("cart") && node.equals("w1");
                                return (slow ? 0.02 : ShopCluster.CPU_PER_REQUEST.get(node)) * RPS;
                            }
                        }),
                        false));
    }

    @AfterAll
    static void stopPrometheus() {
        for (PrometheusServer p : new PrometheusServer[] {outlier, idle, slowCart}) {
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
        client.configMaps().inAnyNamespace().delete();
        ShopCluster.create(client);
    }

    private static ControllerConfig.Prometheus prometheus(PrometheusServer source) {
        return ControllerConfig.Prometheus.builder()
                .url(source.url().toString())
                .timeoutSeconds(TestPrometheus.TIMEOUT_SECONDS)
                .windowSeconds(30.0)
                .delayWindowSeconds(30.0)
                .build();
    }

    private static ControllerConfig.Kubernetes kubernetes(String stateConfigMap) {
        return ControllerConfig.Kubernetes.builder()
                .namespaces(List.of("shop"))
                .stateConfigMap(stateConfigMap)
                .build();
    }

    /** The defaults: outlier filter, idle fit, floor, share cap 0.2, proceed on shortfall. */
    private static ControllerConfig defaults(PrometheusServer source, String stateConfigMap) {
        return ControllerConfig.builder()
                .prometheus(prometheus(source))
                .kubernetes(kubernetes(stateConfigMap))
                .build();
    }

    /** The paper's planner and no share cap: what the controller did before. */
    private static ControllerConfig paper(PrometheusServer source) {
        return ControllerConfig.builder()
                .prometheus(prometheus(source))
                .kubernetes(kubernetes(""))
                .maxShareMovePerRound(1.0)
                .planner(ControllerConfig.Planner.PAPER)
                .build();
    }

    private static Controller controller(ControllerConfig config, PrometheusServer source, String stateConfigMap) {
        return new Controller(
                config,
                config.planner().heartConfig().toBuilder().parallel(false).build(),
                TestPrometheus.client(source.url()),
                client,
                AtpmState.EMPTY,
                stateConfigMap.isEmpty() ? null : new StateStore(client, stateConfigMap),
                null);
    }

    private static Instant endOfPhase(int phase) {
        return Instant.ofEpochSecond(START + (long) PHASE_SECONDS * (phase + 1));
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

    /** The fraction of frontend-on-{@code from}'s calls that go to cart on {@code to}. */
    private static double route(List<Route> routes, String from, String to) {
        return routes.stream()
                .filter(r -> r.callee().equals("cart"))
                .flatMap(r -> r.from().stream())
                .filter(e -> e.fromNode().equals(from))
                .mapToDouble(e -> e.toNodes().getOrDefault(to, 0.0))
                .sum();
    }

    private static List<String> ruleSpecs() {
        return client.genericKubernetesResources(Actuator.DESTINATION_RULE).inAnyNamespace().list().getItems().stream()
                .map(r -> r.getMetadata().getName() + " "
                        + r.getAdditionalProperties().get("spec"))
                .sorted()
                .toList();
    }

    @Test
    void oneRoundWithATenthOfTheRequests_defaults_noShareMovesAndNoRuleIsRewritten() {
        Controller controller = controller(defaults(outlier, ""), outlier, "");
        Controller paper = controller(paper(outlier), outlier, "");
        List<Double> shares = new ArrayList<>();
        List<Double> paperShares = new ArrayList<>();
        List<String> rulesAfterSteadyRounds = null;
        for (int phase = 0; phase < PHASES; phase++) {
            Controller.Round round = controller.round(endOfPhase(phase), false);
            assertThat(round.failure()).as(round.message()).isNull();
            shares.add(share(round, "cart", "w1"));
            paperShares.add(share(paper.round(endOfPhase(phase), true), "cart", "w1"));
            if (phase == 2) {
                rulesAfterSteadyRounds = ruleSpecs();
            }
        }
        System.out.println("cart-w1's share by round, one round at a tenth of its requests: defaults " + shares
                + ", the paper's planner " + paperShares);
        // The paper's planner takes the round in: cart-w1 loses a large part of its share.
        assertThat(paperShares.get(3))
                .as("the swing this test is about: " + paperShares)
                .isLessThan(paperShares.get(2) - 0.15);
        // The defaults: the median of three ignores the round, before and after it.
        for (int phase = 3; phase < PHASES; phase++) {
            assertThat(shares.get(phase)).as("round %d: %s", phase, shares).isCloseTo(shares.get(2), within(1e-6));
        }
        assertThat(ruleSpecs()).isEqualTo(rulesAfterSteadyRounds);
    }

    @Test
    void restartJustBeforeABadRound_theShareCapContinuesFromTheSavedRoutes() {
        String store = "tailor-system/tailor-heart-state";
        Controller before = controller(defaults(outlier, store), outlier, store);
        Controller.Round last = null;
        for (int phase = 0; phase < 3; phase++) {
            last = before.round(endOfPhase(phase), false);
            assertThat(last.failure()).as(last.message()).isNull();
        }
        // A new process (a restart, or another replica taking over) with a planner that swings on the
        // bad round (no outlier filter) and the default cap: its first round is capped all the same.
        ControllerConfig swinging = ControllerConfig.builder()
                .prometheus(prometheus(outlier))
                .kubernetes(kubernetes(store))
                .planner(ControllerConfig.Planner.builder().outlierFilter(false).build())
                .build();
        Controller restarted = controller(swinging, outlier, store);
        Controller.Round round = restarted.round(endOfPhase(3), false);
        assertThat(round.failure()).as(round.message()).isNull();
        double planned = round.plan().allocation().routes().stream()
                .filter(r -> r.callee().equals("cart"))
                .flatMap(r -> r.from().stream())
                .filter(e -> e.fromNode().equals("w1"))
                .mapToDouble(e -> e.toNodes().getOrDefault("w1", 0.0))
                .sum();
        double was = route(last.routes(), "w1", "w1");
        double now = route(round.routes(), "w1", "w1");
        System.out.println(
                "frontend-w1 -> cart-w1 after a restart: was " + was + ", planned " + planned + ", applied " + now);
        assertThat(was - planned)
                .as("the plan must move more than the cap for this test")
                .isGreaterThan(0.3);
        assertThat(Math.abs(now - was)).isLessThanOrEqualTo(ShareMoveCap.DEFAULT_MAX_MOVE + 1e-9);
        assertThat(round.notes())
                .anySatisfy(
                        n -> assertThat(n).contains("frontend -> cart from w1").contains("capped at 0.2"));
    }

    @Test
    void lowTrafficPodWithIdleCpu_defaults_chargeOnlyTheRequests_paperSpirals() {
        Controller controller = controller(defaults(idle, ""), idle, "");
        Controller paper = controller(paper(idle), idle, "");
        List<Double> shares = new ArrayList<>();
        List<Double> paperShares = new ArrayList<>();
        for (int phase = 0; phase < 5; phase++) {
            Controller.Round round = controller.round(endOfPhase(phase), true);
            assertThat(round.failure()).as(round.message()).isNull();
            shares.add(share(round, "cart", "w3"));
            paperShares.add(share(paper.round(endOfPhase(phase), true), "cart", "w3"));
        }
        System.out.println("cart-w3's share by round, 0.03 idle cores, 20 -> 2 req/s: defaults " + shares
                + ", the paper's planner " + paperShares);
        // cart-w3 costs what the others cost (0.004 CPU-s per request): a third is its fair share. The
        // paper's ratio charges the idle CPU to ever fewer requests and cuts it round after round.
        assertThat(paperShares.get(4))
                .as("the loop this test is about: " + paperShares)
                .isLessThan(0.15);
        assertThat(shares.get(4)).as("cart-w3's shares: " + shares).isGreaterThan(0.25);
    }

    private static void notReady(String... pods) {
        for (String pod : pods) {
            String node = pod.substring(pod.indexOf('-') + 1);
            client.pods()
                    .inNamespace("shop")
                    .resource(ShopCluster.pod("shop", pod, "cart", node, false))
                    .update();
        }
    }

    @Test
    void twoOfThreeNodesNotReady_survivorCannotCarryTheDemand_proceeds_andExportsTheShortfall() {
        notReady("cart-w2", "cart-w3");
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);
        Controller.Round round =
                controller(defaults(slowCart, ""), slowCart, "").round(endOfPhase(0), false);
        metrics.record(round);
        assertThat(round.failure()).as(round.message()).isNull();
        assertThat(round.applied()).isTrue();
        // 60 req/s reach cart; cart-w1 serves 50: 10 short, and the log line says so.
        assertThat(round.notes())
                .anySatisfy(
                        n -> assertThat(n).contains("capacity shortfall: cart").contains("short by 10.0 req/s"));
        assertThat(metrics.scrape())
                .contains("tailor_heart_capacity_shortfall_requests_per_second{component=\"cart\"} 10.0")
                .contains("tailor_heart_capacity_shortfall_requests_per_second{component=\"frontend\"} 0.0")
                .contains("tailor_heart_capacity_shortfall_rounds_total 1.0");
    }

    @Test
    void shortfall_hold_keepsTheRulesAndTheState_andCountsIt() {
        ControllerConfig config = ConfigFiles.parse("""
                prometheus: {url: %s, windowSeconds: 30, delayWindowSeconds: 30}
                kubernetes: {namespaces: [shop], stateConfigMap: ""}
                capacityShortfall: hold
                """.formatted(slowCart.url()), "heart.yaml");
        Controller controller = controller(config, slowCart, "");
        Controller.Round first = controller.round(endOfPhase(0), false);
        assertThat(first.failure()).as(first.message()).isNull();
        List<String> rules = ruleSpecs();
        AtpmState state = controller.state();

        notReady("cart-w2", "cart-w3");
        ControllerMetrics metrics = new ControllerMetrics(() -> 0);
        Controller.Round held = controller.round(endOfPhase(1), false);
        metrics.record(held);
        assertThat(held.failure()).isEqualTo(Controller.FailureReason.CAPACITY_SHORTFALL);
        assertThat(held.message()).contains("cart short by 10").contains("hold");
        assertThat(ruleSpecs()).isEqualTo(rules);
        assertThat(controller.state()).isEqualTo(state);
        assertThat(metrics.scrape())
                .contains("tailor_heart_round_failures_total{reason=\"capacity_shortfall\"} 1.0")
                .contains("tailor_heart_capacity_shortfall_requests_per_second{component=\"cart\"} 10.0");
    }
}
