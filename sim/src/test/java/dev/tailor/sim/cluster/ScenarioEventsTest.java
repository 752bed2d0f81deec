package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.tailor.heart.HeartConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What scenario events and rate profiles do to a run, on virtual time. */
class ScenarioEventsTest {

    private static final long MS = 1_000_000;
    private static final long SECOND = ClusterModel.NANOS_PER_SECOND;

    /** One node, a → b, no link jitter, no cost variation: work is exact. */
    private static final String ONE_NODE = """
            name: t
            seed: 7
            warmupSeconds: 0
            durationSeconds: 200
            callCostCv: 0
            replicaCostVariation: 0
            linkJitter: 0
            nodes: [{name: n1, cores: 4, speedFactor: 1}]
            entry: a
            components: [{name: a, cpuMillisPerCall: 1, calls: [[b]]}, {name: b, cpuMillisPerCall: 10}]
            networks: {flat: {otherMillis: [0.1, 0.2]}}
            """;

    /**
     * Runs {@code model} through three 30 s windows of scrapes, before (30-60 s), during (75-105 s) and
     * after (135-165 s) an event from 60 s to 120 s, and returns each window's first and last sample.
     */
    private static List<ScrapedMetrics.Sample[]> beforeDuringAfter(ClusterModel model) {
        long[][] windows = {{30, 60}, {75, 105}, {135, 165}};
        List<ScrapedMetrics.Sample[]> samples = new java.util.ArrayList<>();
        for (long[] window : windows) {
            model.calendar.runUntil(window[1] * SECOND + MS);
            samples.add(new ScrapedMetrics.Sample[] {
                model.metrics.latest(window[0] * SECOND), model.metrics.latest(window[1] * SECOND)
            });
        }
        return samples;
    }

    /** What {@code counter} grew by over each window. */
    private static double[] delta(
            List<ScrapedMetrics.Sample[]> windows, java.util.function.ToDoubleFunction<ScrapedMetrics.Sample> counter) {
        return windows.stream()
                .mapToDouble(w -> counter.applyAsDouble(w[1]) - counter.applyAsDouble(w[0]))
                .toArray();
    }

    private static ClusterModel model(String yaml, RoutingPolicy policy) {
        ClusterModel model = new ClusterModel(Scenarios.parse(yaml, "t.yaml"), "test", policy, 100, () -> 0L);
        return model;
    }

    /** Starts {@code work} reference-ns of CPU at {@code replica} at {@code nowNanos}, as a call would. */
    private static void job(ClusterModel model, SimReplica replica, double work, long nowNanos) {
        UserRequest request = new UserRequest(nowNanos, false);
        request.next = request;
        request.previous = request;
        Visit visit = new Visit(model, request, null, model.proxies[0], replica, nowNanos);
        replica.inFlight++;
        replica.present(visit);
        replica.arrive(visit, work, nowNanos);
    }

    @Test
    void rateProfile_isPiecewiseLinear_withSteps() {
        // 0.5 until 100 s, a step to 1, a ramp down to 0 at 200 s, then 0.
        RateProfile profile = new RateProfile(List.of(
                new ClusterScenario.RatePoint(0.0, 0.5),
                new ClusterScenario.RatePoint(100.0, 0.5),
                new ClusterScenario.RatePoint(100.0, 1.0),
                new ClusterScenario.RatePoint(200.0, 0.0)));
        assertThat(profile.maxFactor()).isEqualTo(1.0);
        assertThat(profile.factorAt(50 * SECOND)).isEqualTo(0.5);
        assertThat(profile.factorAt(100 * SECOND - 1)).isEqualTo(0.5);
        assertThat(profile.factorAt(100 * SECOND)).isEqualTo(1.0);
        assertThat(profile.factorAt(150 * SECOND)).isCloseTo(0.5, within(1e-12));
        assertThat(profile.factorAt(300 * SECOND)).isEqualTo(0.0);
    }

    @Test
    void rateProfile_step_arrivalsFollowTheRate() {
        // No requests for 100 s, then 100 per second: about 10,000 in the 200 s run (Poisson, σ = 100).
        ClusterScenario scenario = Scenarios.parse(ONE_NODE + """
                rpsProfile: [{atSeconds: 100, factor: 0}, {atSeconds: 100, factor: 1}]
                """, "t.yaml");
        RunResult result = ClusterSimulation.run(scenario, "least-request", 100, HeartConfig.DEFAULTS, null);
        assertThat(result.requests()).isBetween(9_600L, 10_400L);
        RunResult again = ClusterSimulation.run(scenario, "least-request", 100, HeartConfig.DEFAULTS, null);
        assertThat(again.latency()).isEqualTo(result.latency());
    }

    @Test
    void nodeSlowdown_halfSpeed_workLeftTakesTwiceAsLong() {
        // 10 ms of work from 0; at 4 ms the node falls to half speed: the 6 ms left take 12 ms, done at 16 ms.
        ClusterModel model = model(ONE_NODE, new DefaultPolicy());
        SimReplica b = model.components[1].replicas[0];
        job(model, b, 10 * MS, 0);
        model.calendar.runUntil(4 * MS);
        model.nodes[0].setSpeedFactor(0.5, 4 * MS);
        model.calendar.runUntil(16 * MS - 1_000);
        assertThat(b.served).isZero();
        model.calendar.runUntil(16 * MS + 1_000);
        assertThat(b.served).isEqualTo(1);
    }

    @Test
    void nodeSlowdown_event_restoresTheSpeedAfterItsDuration() {
        ClusterModel model = model(ONE_NODE + """
                events: [{kind: node-slowdown, node: n1, atSeconds: 10, durationSeconds: 120, speedMultiplier: 0.5}]
                """, new DefaultPolicy());
        model.start();
        model.calendar.runUntil(10 * SECOND);
        assertThat(model.nodes[0].speedFactor).isEqualTo(0.5);
        model.calendar.runUntil(130 * SECOND);
        assertThat(model.nodes[0].speedFactor).isEqualTo(1.0);
    }

    @Test
    void metricsUndercount_scrapesATenthOfTheServedRequests_onlyWhileItLasts_cpuAsMeasured() {
        // b serves every call of a steady stream; from 60 s to 120 s its scraped request counter counts a
        // tenth of them. The scrapes (every 15 s) show a tenth of the rate inside the window, all of it
        // outside, and the CPU the same throughout; the replica itself served every request.
        ClusterModel model = model(ONE_NODE + """
                events: [{kind: metrics-undercount, node: n1, component: b, atSeconds: 60, durationSeconds: 60,
                          countedFraction: 0.1}]
                """, new DefaultPolicy());
        model.start();
        int b = model.components[1].replicas[0].id;
        List<ScrapedMetrics.Sample[]> windows = beforeDuringAfter(model);
        double[] scraped = delta(windows, sample -> sample.served()[b]);
        double[] cpu = delta(windows, sample -> sample.cpuCoreSeconds()[b]);
        assertThat(scraped[0])
                .as("before: %s", java.util.Arrays.toString(scraped))
                .isGreaterThan(1_000);
        assertThat(scraped[1] / scraped[0])
                .as("during: %s", java.util.Arrays.toString(scraped))
                .isCloseTo(0.1, within(0.02));
        assertThat(scraped[2] / scraped[0])
                .as("after: %s", java.util.Arrays.toString(scraped))
                .isCloseTo(1.0, within(0.1));
        assertThat(cpu[1] / cpu[0])
                .as("CPU as measured: %s", java.util.Arrays.toString(cpu))
                .isCloseTo(1.0, within(0.1));
        assertThat(model.components[1].replicas[0].served)
                .as("served, whatever was counted")
                .isGreaterThan((long) (scraped[0] + scraped[1] + scraped[2]));
    }

    @Test
    void callsOvercount_scrapesTheIngressCallsTenTimes_onlyWhileItLasts_servedAsBefore() {
        // The ingress on n1 sends a steady stream into a; from 60 s to 120 s its scraped call counter
        // counts each call ten times. The scrapes show ten times the rate inside the window and the true
        // rate outside; the replicas serve the same requests throughout.
        ClusterModel model = model(ONE_NODE + """
                events: [{kind: calls-overcount, node: n1, atSeconds: 60, durationSeconds: 60, countedFactor: 10}]
                """, new DefaultPolicy());
        model.start();
        int ingress = model.proxies[0].id;
        int a = model.components[0].index;
        int b = model.components[1].replicas[0].id;
        List<ScrapedMetrics.Sample[]> windows = beforeDuringAfter(model);
        double[] scraped = delta(windows, sample -> sample.callsByProxy()[ingress][a]);
        double[] served = delta(windows, sample -> sample.served()[b]);
        assertThat(scraped[0])
                .as("before: %s", java.util.Arrays.toString(scraped))
                .isGreaterThan(1_000);
        assertThat(scraped[1] / scraped[0])
                .as("during: %s", java.util.Arrays.toString(scraped))
                .isCloseTo(10.0, within(1.0));
        assertThat(scraped[2] / scraped[0])
                .as("after: %s", java.util.Arrays.toString(scraped))
                .isCloseTo(1.0, within(0.1));
        assertThat(served[1] / served[0])
                .as("served as before: %s", java.util.Arrays.toString(served))
                .isCloseTo(1.0, within(0.1));
    }

    @Test
    void backgroundCpu_addsItsCoresToTheMeasuredCpu_onlyWhileItLasts_requestsServedAsBefore() {
        // b's replica serves a steady stream; from 60 s to 120 s it also spends 0.2 cores in the
        // background. The scraped CPU over 30 s grows by 0.2 x 30 core-seconds inside the window only,
        // and the requests it serves do not change.
        ClusterModel model = model(ONE_NODE + """
                events: [{kind: background-cpu, node: n1, atSeconds: 60, durationSeconds: 60, cores: 0.2}]
                """, new DefaultPolicy());
        model.start();
        int b = model.components[1].replicas[0].id;
        List<ScrapedMetrics.Sample[]> windows = beforeDuringAfter(model);
        double[] cpu = delta(windows, sample -> sample.cpuCoreSeconds()[b]);
        double[] served = delta(windows, sample -> sample.served()[b]);
        assertThat(cpu[1] - cpu[0])
                .as("during: %s", java.util.Arrays.toString(cpu))
                .isCloseTo(6.0, within(0.5));
        assertThat(cpu[2] - cpu[0])
                .as("after: %s", java.util.Arrays.toString(cpu))
                .isCloseTo(0.0, within(0.5));
        assertThat(served[1] / served[0])
                .as("served as before: %s", java.util.Arrays.toString(served))
                .isCloseTo(1.0, within(0.1));
    }

    @Test
    void cpuAntagonist_takesCoresFromTheNode() {
        // One job at a 1-core replica on 4 cores: with 3.5 cores taken, 0.5 core is left: 10 ms take 20 ms.
        ClusterModel model = model(ONE_NODE, new DefaultPolicy());
        SimReplica b = model.components[1].replicas[0];
        model.nodes[0].setAntagonistCores(3.5, 0);
        job(model, b, 10 * MS, 0);
        model.calendar.runUntil(20 * MS - 1_000);
        assertThat(b.served).isZero();
        model.calendar.runUntil(20 * MS + 1_000);
        assertThat(b.served).isEqualTo(1);
    }

    @Test
    void cpuAntagonist_event_burstsOfTheGivenLength_onlyInsideItsWindow() {
        // Sampled every 100 ms over the run: the antagonist is on only between 50 s and 150 s, in bursts
        // of 2 s separated by gaps of mean 10 s: on about 2 / 12 of the window.
        ClusterModel model = model(ONE_NODE + """
                events: [{kind: cpu-antagonist, node: n1, atSeconds: 50, durationSeconds: 100, cores: 3,
                          burstSeconds: 2, meanGapSeconds: 10}]
                """, new DefaultPolicy());
        model.start();
        int on = 0;
        int onOutside = 0;
        for (long t = 0; t < 200 * SECOND; t += 100 * MS) {
            model.calendar.runUntil(t);
            if (model.nodes[0].antagonistCores > 0) {
                assertThat(model.nodes[0].antagonistCores).isEqualTo(3.0);
                if (t >= 50 * SECOND && t <= 150 * SECOND) {
                    on++;
                } else {
                    onOutside++;
                }
            }
        }
        assertThat(onOutside).isZero();
        assertThat(on).isBetween(40, 400);
    }

    @Test
    void replicaCrash_losesCalls_leavesTheEndpoints_answersTheLostWithErrorsAtRestart() {
        // Five nodes (pairwise), b on w1 crashes at 30 s for 60 s: the kube-proxy-like default keeps
        // sending it a fifth of the calls until its readiness probe fails (30 s later), none from 60 s
        // to 100 s (Ready again 10 s after the restart at 90 s); the lost calls come back as errors.
        ClusterScenario base = Scenarios.load("paper-pairwise").toBuilder()
                .warmupSeconds(0.0)
                .durationSeconds(150.0)
                .network("A")
                .build();
        String yaml = """
                events: [{kind: replica-crash, node: w1, component: b, atSeconds: 30, durationSeconds: 60}]
                """;
        ClusterScenario scenario = withEvents(base, yaml);
        ClusterModel model = new ClusterModel(scenario, "default", new DefaultPolicy(), 100, () -> 0L);
        SimReplica crashed = model.components[1].replicasByNode[0][0];
        model.start();
        model.calendar.runUntil(30 * SECOND + 1);
        assertThat(crashed.down).isTrue();
        assertThat(crashed.inFlight).isZero();
        model.calendar.runUntil(60 * SECOND + 1);
        assertThat(crashed.ready).isFalse();
        assertThat(model.components[1].endpoints).hasSize(4).doesNotContain(crashed);
        long servedAtRestart = crashed.served;
        model.calendar.runUntil(99 * SECOND);
        assertThat(crashed.down).isFalse();
        assertThat(crashed.served).isEqualTo(servedAtRestart); // restarted, not yet Ready: no calls
        model.calendar.runUntil(model.endNanos());
        assertThat(crashed.ready).isTrue();
        assertThat(crashed.served).isGreaterThan(servedAtRestart);
        RunResult result = model.result();
        // 30 s at 20 calls/s: about 600 lost calls, each failing its user request.
        assertThat(result.errors()).isBetween(450L, 750L);
        assertThat(result.unfinished()).isLessThan(20);
        for (Proxy proxy : model.proxies) {
            assertThat(proxy.active[crashed.id]).isLessThanOrEqualTo(5); // the lost calls were released
        }
    }

    @Test
    void replicaCrash_perRequestPolicies_loseFewerCallsThanTheRandomSplit() {
        // Least-request and peak-EWMA see their own calls pile up at the hung replica, Prequal sees its
        // probes go unanswered; the random split sends it a fifth of the calls until it is NotReady.
        ClusterScenario scenario = withEvents(
                Scenarios.load("paper-pairwise").toBuilder()
                        .warmupSeconds(0.0)
                        .durationSeconds(150.0)
                        .network("A")
                        .build(),
                """
                events: [{kind: replica-crash, node: w1, component: b, atSeconds: 30, durationSeconds: 60}]
                """);
        long random = ClusterSimulation.run(scenario, "default", 100, HeartConfig.DEFAULTS, null)
                .errors();
        for (String policy : List.of("least-request", "prequal", "peak-ewma")) {
            long errors = ClusterSimulation.run(scenario, policy, 100, HeartConfig.DEFAULTS, null)
                    .errors();
            assertThat(errors).as(policy).isPositive().isLessThan(random / 2);
        }
    }

    @Test
    void replicaRestart_outOfTheEndpointsWhileDraining_thenBackCold() {
        ClusterScenario scenario = withEvents(
                Scenarios.load("paper-pairwise").toBuilder()
                        .warmupSeconds(0.0)
                        .durationSeconds(150.0)
                        .network("A")
                        .build(),
                """
                events: [{kind: replica-restart, node: w2, component: b, atSeconds: 30, durationSeconds: 20,
                          coldSeconds: 60, coldFactor: 3}]
                """);
        ClusterModel model = new ClusterModel(scenario, "least-request", new LeastRequestPolicy(), 100, () -> 0L);
        SimReplica restarted = model.components[1].replicasByNode[1][0];
        model.start();
        model.calendar.runUntil(30 * SECOND + 50 * MS);
        assertThat(restarted.ready).isFalse();
        long served = restarted.served;
        model.calendar.runUntil(50 * SECOND - 1);
        assertThat(restarted.served).isEqualTo(served); // drained: nothing new arrived
        assertThat(restarted.costMultiplier(50 * SECOND - 1)).isEqualTo(1.0);
        model.calendar.runUntil(50 * SECOND + 1);
        assertThat(restarted.ready).isTrue();
        assertThat(restarted.costMultiplier(50 * SECOND + 1)).isEqualTo(3.0);
        assertThat(restarted.costMultiplier(110 * SECOND + 1)).isEqualTo(1.0);
        model.calendar.runUntil(model.endNanos());
        assertThat(model.result().errors()).isZero();
    }

    /** {@code base} with the events of a YAML fragment. */
    private static ClusterScenario withEvents(ClusterScenario base, String eventsYaml) {
        // The fragment is read against a scenario with the same node and component names.
        ClusterScenario events = Scenarios.parse(
                ONE_NODE.replace(
                                "nodes: [{name: n1, cores: 4, speedFactor: 1}]",
                                "nodes: [{name: w1, cores: 4, speedFactor: 1}, {name: w2, cores: 4, speedFactor: 1}]")
                        + eventsYaml,
                "events.yaml");
        ClusterScenario scenario = base.toBuilder().events(events.events()).build();
        assertThat(scenario.problems()).isEmpty();
        return scenario;
    }
}
