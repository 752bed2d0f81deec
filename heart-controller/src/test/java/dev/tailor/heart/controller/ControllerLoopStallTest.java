package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The round loop against an API server that leaves some calls unanswered (renewals of the Lease,
 * the watch of pods), with the loop on a virtual clock: the instants of its rounds and writes are
 * the test's, while the API server, the lease's elector and Prometheus are real. Waits are bounded
 * and only for the loop's own thread to get to its next step.
 */
class ControllerLoopStallTest {

    private static final String LEASE = "tailor-system/tailor-heart";
    private static final String LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/tailor-system/leases/tailor-heart"
            + "(\\?.*)?";
    /** Lease duration of these tests (the smallest the configuration takes). */
    private static final long LEASE_MILLIS = 2_000;
    /** A leader may write for this long after it last renewed the Lease (2/3 of the duration). */
    private static final long RENEW_DEADLINE_MILLIS = LEASE_MILLIS * 2 / 3;
    /**
     * Long enough that the old behaviour (writing until the stalled call fails) shows within it, and
     * that the elector, blocked in a stalled renewal this long, does not give up leadership (on real
     * time) before a test's rounds are done on a busy machine.
     */
    private static final int REQUEST_TIMEOUT_MILLIS = 15_000;

    private static PrometheusServer prometheus;

    private StallingApiServer api;
    /**
     * The virtual clock starts at the wall clock's now, since the rounds ask Prometheus for the
     * metrics at the loop's instant; the tests move it on by seconds at most while Prometheus
     * answers.
     */
    private final long T0 = System.currentTimeMillis();
    private final AtomicLong clock = new AtomicLong(T0);
    /** Every round and re-plan the loop reported, with the virtual instant it was reported at. */
    private final List<Timed> rounds = new CopyOnWriteArrayList<>();
    private final List<String> messages = new CopyOnWriteArrayList<>();

    /** A report; {@code full}: a round, not a re-plan (the pod watch's first events may trigger one). */
    record Timed(long atMillis, Controller.Round round, boolean full) {

        boolean wrote() {
            return round.applied() && round.changes().stream().anyMatch(c -> c.action() != Actuator.Action.UNCHANGED);
        }
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
        api = new StallingApiServer(REQUEST_TIMEOUT_MILLIS);
        ShopCluster.create(api.client);
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private ControllerLoop loop(String lease, String identity, double roundSeconds, Consumer<Controller.Round> also) {
        return loop(lease, identity, roundSeconds, clock::get, also);
    }

    /** A loop whose wall clock is {@code wallMillis} (its monotonic clock is {@link #clock}). */
    private ControllerLoop loop(String lease, String identity, double roundSeconds,
            java.util.function.LongSupplier wallMillis, Consumer<Controller.Round> also) {
        ControllerConfig config = ControllerConfig.builder()
                .prometheus(ControllerConfig.Prometheus.builder().url(prometheus.url().toString()).timeoutSeconds(5.0)
                        .windowSeconds(5.0).delayWindowSeconds(5.0).build())
                .kubernetes(ControllerConfig.Kubernetes.builder().namespaces(List.of("shop")).stateConfigMap("")
                        .build())
                .roundSeconds(roundSeconds).build();
        Controller controller = new Controller(config, HeartConfig.DEFAULTS,
                new PrometheusClient(prometheus.url(), Duration.ofSeconds(5)), api.client, AtpmState.EMPTY, null, null);
        ControllerLoop[] self = new ControllerLoop[1];
        long[] roundsSeen = {0};
        ControllerLoop loop = new ControllerLoop(controller, new ControllerMetrics(clock::get), api.client, config,
                new ControllerLoop.Options(false, lease, identity, Duration.ofMillis(LEASE_MILLIS)), round -> {
                    // Reported on the loop's thread right after it counted the round (or re-plan).
                    boolean full = self[0].rounds() > roundsSeen[0];
                    roundsSeen[0] = self[0].rounds();
                    rounds.add(new Timed(clock.get(), round, full));
                    also.accept(round);
                }, wallMillis, () -> clock.get() * 1_000_000);
        self[0] = loop;
        loop.onMessage(messages::add);
        return loop;
    }

    private boolean await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        return Await.holds(Duration.ofSeconds(20), condition);
    }

    private GenericKubernetesResource cartRule() {
        return api.client.genericKubernetesResources(Actuator.DESTINATION_RULE).inNamespace("shop")
                .withName(DestinationRules.name("frontend", "cart")).get();
    }

    /** Someone changes the rule, so a replica that writes restores it. */
    private void editCartRuleByHand() {
        GenericKubernetesResource rule = cartRule();
        Map<String, Object> loadBalancer = rule.get("spec", "trafficPolicy", "loadBalancer");
        loadBalancer.put("simple", "ROUND_ROBIN");
        api.client.genericKubernetesResources(Actuator.DESTINATION_RULE).inNamespace("shop").resource(rule).update();
    }

    private Object cartBalancing() {
        return cartRule().get("spec", "trafficPolicy", "loadBalancer", "simple");
    }

    /**
     * The loop's next round, after moving the clock to {@code atMillis} (re-plans reported meanwhile
     * are passed over: they write under the same rules, but the test is about the rounds' instants).
     */
    private Timed roundAt(long atMillis) throws InterruptedException {
        int before = rounds.size();
        clock.set(atMillis);
        assertThat(await(() -> rounds.subList(before, rounds.size()).stream().anyMatch(Timed::full)))
                .as("a round at " + (atMillis - T0) + " ms").isTrue();
        return rounds.subList(before, rounds.size()).stream().filter(Timed::full).findFirst().orElseThrow();
    }

    private Lease lease() {
        return api.client.resources(Lease.class).inNamespace("tailor-system").withName("tailor-heart").get();
    }

    /**
     * Makes {@code holder} (or nobody) hold the Lease now, as another replica would. The leading replica
     * renews the Lease concurrently, so an update can meet a newer version (409 Conflict): read and
     * write again, as a real contender does.
     */
    private void setLeaseHolder(String holder) {
        for (int attempt = 1; ; attempt++) {
            Lease lease = lease();
            lease.getSpec().setHolderIdentity(holder);
            if (holder != null) {
                lease.getSpec().setRenewTime(ZonedDateTime.now());
            }
            try {
                api.client.resources(Lease.class).inNamespace("tailor-system").resource(lease).update();
                return;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 20) {
                    throw e;
                }
            }
        }
    }

    @Test
    void renewalsStall_noWriteOnceTheRenewDeadlineHasPassedSinceTheLastRenewal() throws Exception {
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> { })) {
            a.start();
            assertThat(await(() -> !rounds.isEmpty())).as("replica-a leads and plans").isTrue();
            assertThat(rounds.get(0).wrote()).as(String.valueOf(rounds.get(0).round().message())).isTrue();

            // From now on every renewal hangs (reads still work). Renewals so far all ran at T0 on
            // the virtual clock, so the last successful one was at T0.
            StallingApiServer.Stall renewals = api.stall("PATCH", LEASE_PATH);
            assertThat(await(() -> renewals.count() > 0)).as("a renewal is hanging").isTrue();

            editCartRuleByHand();
            Timed justBefore = roundAt(T0 + RENEW_DEADLINE_MILLIS - 1);
            assertThat(justBefore.round().failure()).as(justBefore.round().message()).isNull();
            assertThat(cartBalancing()).as("restored: the lease is still provably held").isEqualTo("LEAST_REQUEST");

            editCartRuleByHand();
            Timed after = roundAt(T0 + RENEW_DEADLINE_MILLIS - 1 + 1_000);
            assertThat(after.round().failure()).isEqualTo(Controller.FailureReason.LOST_LEADERSHIP);
            assertThat(cartBalancing()).as("not written: the renew deadline has passed").isEqualTo("ROUND_ROBIN");
            assertThat(messages).contains("not writing: Lease tailor-system/tailor-heart was last renewed 2.3 s ago,"
                    + " the renew deadline is 1.3 s (renewals fail or hang)");

            // The write instants against the lease timeline: last renewal T0, deadline T0 + 1333 ms.
            // (The hand edit is restored at 1332 ms by that round, or earlier by a re-plan that the
            // pod watch's first events triggered late: either is before the deadline.)
            List<Long> writes = rounds.stream().filter(Timed::wrote).map(t -> t.atMillis() - T0).toList();
            assertThat(writes).as("instants of writes").contains(0L)
                    .allSatisfy(t -> assertThat(t).isLessThan(RENEW_DEADLINE_MILLIS));
        }
    }

    @Test
    void leaseTakenOver_theHolderIsCheckedBeforeTheWrites() throws Exception {
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> { })) {
            a.start();
            assertThat(await(() -> !rounds.isEmpty())).as("replica-a leads and plans").isTrue();
            StallingApiServer.Stall renewals = api.stall("PATCH", LEASE_PATH);
            assertThat(await(() -> renewals.count() > 0)).as("a renewal is hanging").isTrue();

            // replica-b holds the Lease now (its clock ran ahead, say), while replica-a's own clock
            // still says it renewed within the deadline.
            setLeaseHolder("replica-b");

            editCartRuleByHand();
            Timed round = roundAt(T0 + RENEW_DEADLINE_MILLIS - 1);
            assertThat(round.round().failure()).isEqualTo(Controller.FailureReason.LOST_LEADERSHIP);
            assertThat(cartBalancing()).as("not written: the Lease names replica-b").isEqualTo("ROUND_ROBIN");
            assertThat(messages).anySatisfy(m -> assertThat(m).contains("names replica-b, not this replica"));
        }
    }

    @Test
    void leaseLostAndRetakenDuringARound_thatRoundWritesNothing() throws Exception {
        // A round (or re-plan) planned before another replica led must not write after this replica
        // takes the Lease back: it would overwrite what the other wrote meanwhile with a plan (and an
        // ATPM state) from before. The next round, after the take-over, writes again.
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> { })) {
            a.start();
            assertThat(await(() -> a.rounds() == 1)).as("replica-a leads and plans").isTrue();
            editCartRuleByHand();
            // The next call that lists the rules (right before the writes) is slow ...
            StallingApiServer.Hold slow = api.hold("GET",
                    "/apis/networking.istio.io/v1/namespaces/shop/destinationrules\\?.*", "tailor-heart-rounds");
            clock.addAndGet(1_000);
            assertThat(slow.reached().await(20, TimeUnit.SECONDS)).as("the round reached its list").isTrue();
            int before = rounds.size();

            // ... and meanwhile replica-b holds the Lease for a while, then lets it go.
            setLeaseHolder("replica-b");
            assertThat(await(() -> !a.leading())).as("replica-a saw replica-b lead").isTrue();
            setLeaseHolder(null);
            assertThat(await(a::leading)).as("replica-a took the Lease again; " + messages).isTrue();

            slow.released().countDown();
            assertThat(await(() -> rounds.size() > before)).isTrue();
            Controller.Round stale = rounds.get(before).round();
            assertThat(stale.failure()).as(String.valueOf(stale.message())).isEqualTo(
                    Controller.FailureReason.LOST_LEADERSHIP);
            assertThat(messages).anySatisfy(m -> assertThat(m).contains("took it again"));

            clock.addAndGet(1_000);
            assertThat(await(() -> "LEAST_REQUEST".equals(cartBalancing()))).as("the round after the take-over"
                    + " writes").isTrue();
        }
    }

    @Test
    void loopStuck_theLeaseIsNotRenewed_andAStandbyCanTakeOver() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        // The loop's thread stops inside its first round (a stand-in for any hang of its own).
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {
            try {
                stuck.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })) {
            a.start();
            assertThat(await(() -> !rounds.isEmpty())).isTrue();
            assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");

            clock.addAndGet(a.staleMillis());   // three round periods and a minute: /healthz says 503
            assertThat(a.alive(a.staleMillis())).isFalse();

            // replica-a no longer renews the Lease, so a standby takes it once it has expired.
            try (ControllerLoop b = loop(LEASE, "replica-b", 1, round -> { })) {
                b.start();
                assertThat(await(b::leading)).as("replica-b took over; " + messages).isTrue();
                assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-b");
                assertThat(a.leading()).isFalse();
            }
        } finally {
            stuck.countDown();
        }
    }

    @Test
    void wallClockStepsBack_roundsGoOnEveryRoundSeconds() throws Exception {
        // Rounds are timed on the monotonic clock: a wall clock set back (an NTP step, a VM
        // resumed) must not stop them while the replica goes on answering /healthz and renewing.
        AtomicLong wall = new AtomicLong(T0);
        try (ControllerLoop loop = loop(null, "solo", 1, wall::get, round -> { })) {
            loop.start();
            // Rounds, not the re-plans the pod watch's first events may trigger.
            assertThat(await(() -> loop.rounds() == 1)).as("the first round").isTrue();

            wall.addAndGet(-3_600_000);
            clock.addAndGet(1_000);
            assertThat(await(() -> loop.rounds() == 2)).as("a round one period later on the monotonic clock, "
                    + loop.rounds() + " so far").isTrue();
            assertThat(loop.alive(loop.staleMillis())).isTrue();
        }
    }

    @Test
    void watchNeverAnswered_startReturns_roundsGoOn_healthzIsOk() throws Exception {
        StallingApiServer.Stall watch = api.stall("GET", "/api/v1/namespaces/shop/pods\\?.*watch=true.*");
        ControllerMetrics metrics = new ControllerMetrics(clock::get);
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        try (ControllerLoop loop = loop(null, "solo", 3_600, round -> { });
                ControllerServer server = new ControllerServer(loopback, metrics, () -> loop.alive(loop.staleMillis()),
                        () -> true)) {
            CompletableFuture<Void> started = CompletableFuture.runAsync(loop::start);
            started.get(10, TimeUnit.SECONDS);

            assertThat(await(() -> !rounds.isEmpty())).as("a round from lists, without the watch").isTrue();
            assertThat(rounds.get(0).round().failure()).as(rounds.get(0).round().message()).isNull();
            assertThat(rounds.get(0).wrote()).isTrue();
            assertThat(await(() -> watch.count() > 0)).as("the watch was asked for").isTrue();
            HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.port() + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);

            clock.addAndGet(11_000);
            assertThat(await(() -> messages.stream().anyMatch(m -> m.contains("pods in namespace shop")
                    && m.contains("no answer")))).as("messages: " + messages).isTrue();
        }
    }
}
