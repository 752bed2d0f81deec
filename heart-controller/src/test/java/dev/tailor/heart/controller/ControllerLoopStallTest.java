package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.AtpmState;
import dev.tailor.heart.HeartConfig;
import dev.tailor.testkit.Await;
import dev.tailor.testkit.PrometheusServer;
import dev.tailor.testkit.ShopCluster;
import dev.tailor.testkit.VirtualClock;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
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
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The round loop against an API server that leaves some calls unanswered (renewals of the Lease,
 * the watch of pods), with the loop on virtual time: its decisions (rounds, re-plans, the Lease's
 * acquisitions, renewals and renew deadline) run on a {@link VirtualClock} moved by the test, while
 * the API server and Prometheus are real. Nothing the tests assert depends on how fast the machine
 * is: a stalled call hangs until the test ends (no request timeout), a held call until the test
 * releases it, Prometheus answers from history loaded before the tests (the loops' wall clock is a
 * fixed instant of it moved on with the virtual clock, not the time of its scrapes), and waits are
 * for conditions, bounded in virtual time where virtual time moves. Only each wait for a real answer
 * is bounded in real time ({@link Await}): a failure's bound, never a timing target.
 */
class ControllerLoopStallTest {

    private static final String LEASE = "tailor-system/tailor-heart";
    /** The metric of the watch of pods in namespace shop. */
    private static final String WATCH_UP = "tailor_heart_pod_watch_up{watched_namespace=\"shop\"}";
    /** A started replica's metric line while it stands by, waiting for the Lease (1.0 while it holds it). */
    private static final String STANDING_BY = "\ntailor_heart_leader 0.0\n";

    private static final String LEASE_PATH =
            "/apis/coordination.k8s.io/v1/namespaces/tailor-system/leases/tailor-heart" + "(\\?.*)?";
    /** Lease duration of these tests (the smallest the configuration takes). */
    private static final long LEASE_MILLIS = 2_000;
    /** A leader may write for this long after it last renewed the Lease (2/3 of the duration). */
    private static final long RENEW_DEADLINE_MILLIS = LEASE_MILLIS * 2 / 3;
    /**
     * None: a stalled call (a renewal, the watch) hangs until the test ends, whatever real time the
     * test takes, so no outcome depends on when a real-time timeout would end it (a renewal that
     * failed after it, say, lets the elector read the Lease again and act on what it names).
     */
    private static final int REQUEST_TIMEOUT_MILLIS = 0;

    private static PrometheusServer prometheus;

    private StallingApiServer api;
    /** The loop's ticker and scheduler; the tests' instants are its milliseconds (0 at the start). */
    private final VirtualClock clock = new VirtualClock(0);
    /**
     * The wall clock of the loops: an instant of Prometheus's history, moved on with the virtual clock
     * (the rounds ask Prometheus for the metrics at the loop's instant; no test moves it beyond the
     * history's end).
     */
    private final long wallStartMillis = VirtualLoops.WALL_START_MILLIS;
    /** Every round and re-plan the loop reported, with the virtual instant it was reported at. */
    private final List<Timed> rounds = new CopyOnWriteArrayList<>();

    private final List<String> messages = new CopyOnWriteArrayList<>();
    private final List<ControllerLoop> loops = new CopyOnWriteArrayList<>();

    /** A report; {@code full}: a round, not a re-plan (the pod watch's first events may trigger one). */
    record Timed(long atMillis, Controller.Round round, boolean full) {

        boolean wrote() {
            return round.applied() && round.changes().stream().anyMatch(c -> c.action() != Actuator.Action.UNCHANGED);
        }
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
        api = new StallingApiServer(REQUEST_TIMEOUT_MILLIS);
        ShopCluster.create(api.client);
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private ControllerLoop loop(String lease, String identity, double roundSeconds, Consumer<Controller.Round> also) {
        return loop(lease, identity, roundSeconds, also, new ControllerMetrics(clock::millis));
    }

    /** A loop that records its metrics in {@code metrics}. */
    private ControllerLoop loop(
            String lease,
            String identity,
            double roundSeconds,
            Consumer<Controller.Round> also,
            ControllerMetrics metrics) {
        return loop(lease, identity, roundSeconds, () -> wallStartMillis + clock.millis(), also, metrics);
    }

    /** A loop whose wall clock is {@code wallMillis} (its ticker and scheduler are {@link #clock}'s). */
    private ControllerLoop loop(
            String lease,
            String identity,
            double roundSeconds,
            java.util.function.LongSupplier wallMillis,
            Consumer<Controller.Round> also) {
        return loop(lease, identity, roundSeconds, wallMillis, also, new ControllerMetrics(clock::millis));
    }

    private ControllerLoop loop(
            String lease,
            String identity,
            double roundSeconds,
            java.util.function.LongSupplier wallMillis,
            Consumer<Controller.Round> also,
            ControllerMetrics metrics) {
        return loop(lease, identity, roundSeconds, wallMillis, also, metrics, api.client);
    }

    /** A loop that calls the API server with {@code client} (e.g. {@link StallingApiServer#client(String)}'s). */
    private ControllerLoop loop(
            String lease,
            String identity,
            double roundSeconds,
            java.util.function.LongSupplier wallMillis,
            Consumer<Controller.Round> also,
            ControllerMetrics metrics,
            io.fabric8.kubernetes.client.KubernetesClient client) {
        ControllerConfig config = ControllerConfig.builder()
                .prometheus(VirtualLoops.prometheusConfig(prometheus))
                .kubernetes(ControllerConfig.Kubernetes.builder()
                        .namespaces(List.of("shop"))
                        .stateConfigMap("")
                        .build())
                .roundSeconds(roundSeconds)
                .build();
        Controller controller = new Controller(
                config, HeartConfig.DEFAULTS, TestPrometheus.client(prometheus), client, AtpmState.EMPTY, null, null);
        ControllerLoop[] self = new ControllerLoop[1];
        long[] roundsSeen = {0};
        ControllerLoop loop = new ControllerLoop(
                controller,
                metrics,
                client,
                config,
                new ControllerLoop.Options(false, lease, identity, Duration.ofMillis(LEASE_MILLIS)),
                round -> {
                    // Reported on the loop's thread right after it counted the round (or re-plan).
                    boolean full = self[0].rounds() > roundsSeen[0];
                    roundsSeen[0] = self[0].rounds();
                    rounds.add(new Timed(clock.millis(), round, full));
                    also.accept(round);
                },
                wallMillis,
                clock.scheduler(),
                clock);
        self[0] = loop;
        loops.add(loop);
        loop.onMessage(messages::add);
        return loop;
    }

    /**
     * Runs what the loop's threads handed back to the scheduler until {@code condition} holds,
     * without moving the clock (the loop's calls are real; waiting for them is bounded).
     */
    private void pump(String what, BooleanSupplier condition) {
        VirtualLoops.pump(
                clock,
                what,
                condition,
                () -> "messages " + messages + "; rounds "
                        + rounds.stream()
                                .map(t -> t.atMillis() + " ms " + t.round().failure())
                                .toList());
    }

    /**
     * Moves the clock on by {@code stepMillis} each time the loops' calls handed nothing back and
     * none waits for the Lease, until {@code condition} holds, and fails once {@code withinMillis} of
     * virtual time have passed without it: for waits that need both virtual time (the Lease's retry
     * period) and real answers. Each wait for the real answers is bounded on its own ({@link Await}),
     * not the whole: how many answers a span of virtual time needs is the loops' schedule (a Lease
     * attempt every retry period), how long they take is the machine's.
     */
    private void stepUntil(String what, long stepMillis, long withinMillis, BooleanSupplier condition) {
        VirtualLoops.stepUntil(
                clock,
                what,
                stepMillis,
                withinMillis,
                () -> loops.stream().anyMatch(ControllerLoop::leaseAttemptInFlight),
                condition,
                () -> "messages " + messages);
    }

    private GenericKubernetesResource cartRule() {
        return api.client
                .genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .withName(DestinationRules.name("frontend", "cart"))
                .get();
    }

    /** Someone changes the rule, so a replica that writes restores it. */
    private void editCartRuleByHand() {
        GenericKubernetesResource rule = cartRule();
        Map<String, Object> loadBalancer = rule.get("spec", "trafficPolicy", "loadBalancer");
        loadBalancer.put("simple", "ROUND_ROBIN");
        api.client
                .genericKubernetesResources(Actuator.DESTINATION_RULE)
                .inNamespace("shop")
                .resource(rule)
                .update();
    }

    private Object cartBalancing() {
        return cartRule().get("spec", "trafficPolicy", "loadBalancer", "simple");
    }

    /**
     * The loop's next round, after moving the clock to {@code atMillis} (re-plans reported meanwhile
     * are passed over: they write under the same rules, but the test is about the rounds' instants).
     */
    private Timed roundAt(long atMillis) {
        int before = rounds.size();
        clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(atMillis));
        pump(
                "a round at " + atMillis + " ms",
                () -> rounds.subList(before, rounds.size()).stream().anyMatch(Timed::full));
        return rounds.subList(before, rounds.size()).stream()
                .filter(Timed::full)
                .findFirst()
                .orElseThrow();
    }

    private Lease lease() {
        return api.client
                .resources(Lease.class)
                .inNamespace("tailor-system")
                .withName("tailor-heart")
                .get();
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
                api.client
                        .resources(Lease.class)
                        .inNamespace("tailor-system")
                        .resource(lease)
                        .update();
                return;
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 20) {
                    throw e;
                }
            }
        }
    }

    @Test
    void renewalsStall_noWriteOnceTheRenewDeadlineHasPassedSinceTheLastRenewal() {
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {})) {
            a.start();
            pump("replica-a leads and plans", () -> !rounds.isEmpty());
            assertThat(rounds.get(0).wrote())
                    .as(String.valueOf(rounds.get(0).round().message()))
                    .isTrue();

            // From now on every renewal hangs (reads still work). The only successful renewal so far
            // was the acquisition at 0 ms; the next attempt, at 400 ms, hangs.
            StallingApiServer.Stall renewals = api.stall("PATCH", LEASE_PATH);
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(400));
            pump("a renewal is hanging", () -> renewals.count() > 0);

            editCartRuleByHand();
            Timed justBefore = roundAt(RENEW_DEADLINE_MILLIS - 1);
            assertThat(justBefore.round().failure())
                    .as(justBefore.round().message())
                    .isNull();
            assertThat(cartBalancing())
                    .as("restored: the lease is still provably held")
                    .isEqualTo("LEAST_REQUEST");

            // At the renew deadline the elector stops leading: no round from then on.
            editCartRuleByHand();
            int before = rounds.size();
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(RENEW_DEADLINE_MILLIS - 1 + 1_000));
            pump("replica-a stops leading", () -> !a.leading());
            assertThat(rounds.subList(before, rounds.size()))
                    .as("no round after the deadline")
                    .isEmpty();
            assertThat(cartBalancing())
                    .as("not written: the renew deadline has passed")
                    .isEqualTo("ROUND_ROBIN");
            assertThat(messages)
                    .contains(
                            "Lease tailor-system/tailor-heart: this replica (replica-a) stops leading:"
                                    + " no renewal succeeded within the renew deadline (1.3 s since the last successful one started)");

            // The write instants against the lease timeline: last renewal 0 ms, deadline 1333 ms.
            List<Long> writes =
                    rounds.stream().filter(Timed::wrote).map(Timed::atMillis).toList();
            assertThat(writes)
                    .as("instants of writes")
                    .contains(0L)
                    .allSatisfy(t -> assertThat(t).isLessThan(RENEW_DEADLINE_MILLIS));
        }
    }

    @Test
    void roundInFlightAcrossTheRenewDeadline_writesNothingAfterIt() {
        // The elector's deadline ends leadership between rounds; a round already running when it
        // passes must stop writing too (the guard before each write).
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {})) {
            a.start();
            pump("replica-a leads and plans", () -> a.rounds() == 1 && !a.workInFlight());
            StallingApiServer.Stall renewals = api.stall("PATCH", LEASE_PATH);
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(400));
            pump("a renewal is hanging", () -> renewals.count() > 0);
            editCartRuleByHand();
            StallingApiServer.Hold slow = api.hold(
                    "GET", "/apis/networking.istio.io/v1/namespaces/shop/destinationrules\\?.*", "tailor-heart-rounds");
            int before = rounds.size();
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(1_000));
            Await.until(
                    "the round at 1000 ms to reach its list of rules",
                    () -> slow.reached().getCount() == 0);

            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(RENEW_DEADLINE_MILLIS + 100));
            assertThat(a.leading()).isFalse();
            slow.released().countDown();
            // The work held may be a re-plan (pod events that arrived late on a loaded machine start one
            // before the round): it ends unreported once leadership is gone, so wait for the end itself.
            pump("the work in flight to end", () -> !a.workInFlight());
            assertThat(rounds.subList(before, rounds.size()))
                    .as("a round that ended after the deadline failed for it")
                    .allSatisfy(
                            t -> assertThat(t.round().failure()).isEqualTo(Controller.FailureReason.LOST_LEADERSHIP));
            assertThat(cartBalancing()).isEqualTo("ROUND_ROBIN");
        }
    }

    @Test
    void leaseTakenOver_theHolderIsCheckedBeforeTheWrites() {
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {})) {
            a.start();
            pump("replica-a leads and plans", () -> !rounds.isEmpty());
            StallingApiServer.Stall renewals = api.stall("PATCH", LEASE_PATH);
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(400));
            pump("a renewal is hanging", () -> renewals.count() > 0);

            // replica-b holds the Lease now (its clock ran ahead, say), while replica-a's own clock
            // still says it renewed within the deadline, and its elector has not read the Lease since.
            setLeaseHolder("replica-b");

            editCartRuleByHand();
            Timed round = roundAt(RENEW_DEADLINE_MILLIS - 1);
            assertThat(round.round().failure()).isEqualTo(Controller.FailureReason.LOST_LEADERSHIP);
            assertThat(cartBalancing())
                    .as("not written: the Lease names replica-b")
                    .isEqualTo("ROUND_ROBIN");
            assertThat(messages).anySatisfy(m -> assertThat(m).contains("names replica-b, not this replica"));
        }
    }

    @Test
    void leaseLostAndRetakenDuringARound_thatRoundWritesNothing() throws Exception {
        // A round (or re-plan) planned before another replica led must not write after this replica
        // takes the Lease back: it would overwrite what the other wrote meanwhile with a plan (and an
        // ATPM state) from before. The next round, after the take-over, writes again.
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {})) {
            a.start();
            pump("replica-a leads and plans", () -> a.rounds() == 1 && !a.workInFlight());
            editCartRuleByHand();
            // The next call that lists the rules (right before the writes) is slow ...
            StallingApiServer.Hold slow = api.hold(
                    "GET", "/apis/networking.istio.io/v1/namespaces/shop/destinationrules\\?.*", "tailor-heart-rounds");
            clock.advanceTo(TimeUnit.MILLISECONDS.toNanos(1_000));
            assertThat(slow.reached().await(20, TimeUnit.SECONDS))
                    .as("the round reached its list")
                    .isTrue();
            int before = rounds.size();

            // ... and meanwhile replica-b holds the Lease for a while, then lets it go.
            setLeaseHolder("replica-b");
            // Its next attempt (a retry period later) reads the Lease.
            stepUntil("replica-a to see replica-b lead", 100, LEASE_MILLIS, () -> !a.leading());
            setLeaseHolder(null);
            stepUntil("replica-a to take the Lease again", 100, LEASE_MILLIS, a::leading);

            slow.released().countDown();
            pump("the held round to end", () -> rounds.size() > before);
            Controller.Round stale = rounds.get(before).round();
            assertThat(stale.failure())
                    .as(String.valueOf(stale.message()))
                    .isEqualTo(Controller.FailureReason.LOST_LEADERSHIP);
            assertThat(messages).anySatisfy(m -> assertThat(m).contains("took it again"));

            pump("the round after the take-over to write", () -> "LEAST_REQUEST".equals(cartBalancing()));
        }
    }

    @Test
    void loopStuck_theLeaseIsNotRenewed_andAStandbyCanTakeOver() {
        CountDownLatch stuck = new CountDownLatch(1);
        // The loop's rounds thread stops inside its first round (a stand-in for any hang of its own).
        try (ControllerLoop a = loop(LEASE, "replica-a", 1, round -> {
            try {
                stuck.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        })) {
            a.start();
            pump("replica-a's first round", () -> !rounds.isEmpty());
            assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");

            // Three round periods and a minute: /healthz says 503, and the Lease is not renewed.
            stepUntil("replica-a to count as stuck", 1_000, a.staleMillis() + 1_000, () -> !a.alive(a.staleMillis()));
            // Renewals are refused now: leadership ends at the renew deadline of the last one.
            stepUntil("replica-a to stop leading", 100, LEASE_MILLIS, () -> !a.leading());
            assertThat(messages)
                    .anySatisfy(m -> assertThat(m)
                            .startsWith("not renewing Lease tailor-system/"
                                    + "tailor-heart: the round loop has not looked at its work for"));

            // A standby takes the Lease once it has not been renewed for a lease duration.
            try (ControllerLoop b = loop(LEASE, "replica-b", 1, round -> {})) {
                b.start();
                // Once the record has not changed for a lease duration on replica-b's clock, at an attempt.
                stepUntil("replica-b to take over", 100, 2 * LEASE_MILLIS, b::leading);
                assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-b");
                assertThat(a.leading()).isFalse();
            }
        } finally {
            stuck.countDown();
        }
    }

    @Test
    void wallClockStepsBack_roundsGoOnEveryRoundSeconds() {
        // Rounds are timed on the ticker: a wall clock set back (an NTP step, a VM resumed) must not
        // stop them while the replica goes on answering /healthz and renewing.
        AtomicLong wall = new AtomicLong(wallStartMillis);
        try (ControllerLoop loop = loop(null, "solo", 1, wall::get, round -> {})) {
            loop.start();
            // Rounds, not the re-plans the pod watch's first events may trigger.
            pump("the first round", () -> loop.rounds() == 1);

            wall.addAndGet(-3_600_000);
            clock.advance(Duration.ofSeconds(1));
            pump("a round one period later on the ticker", () -> loop.rounds() == 2);
            assertThat(loop.alive(loop.staleMillis())).isTrue();
        }
    }

    @Test
    void watchNeverAnswered_startReturns_roundsGoOn_healthzIsOk() throws Exception {
        StallingApiServer.Stall watch = api.stall("GET", "/api/v1/namespaces/shop/pods\\?.*watch=true.*");
        ControllerMetrics metrics = new ControllerMetrics(clock::millis);
        InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        try (ControllerLoop loop = loop(null, "solo", 3_600, round -> {});
                ControllerServer server =
                        new ControllerServer(loopback, metrics, () -> loop.alive(loop.staleMillis()), loop::notReady)) {
            CompletableFuture<Void> started = CompletableFuture.runAsync(loop::start);
            started.get(10, TimeUnit.SECONDS);

            pump("a round from lists, without the watch", () -> !rounds.isEmpty());
            assertThat(rounds.get(0).round().failure())
                    .as(rounds.get(0).round().message())
                    .isNull();
            assertThat(rounds.get(0).wrote()).isTrue();
            pump("the watch to be asked for", () -> watch.count() > 0);
            HttpResponse<String> health = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/healthz"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            // Rounds go on from lists: the replica does its work, so it is ready.
            assertThat(get(server, "/readyz")).isEqualTo("200 ok\n");

            clock.advance(Duration.ofSeconds(11));
            assertThat(messages)
                    .anySatisfy(m ->
                            assertThat(m).contains("pods in namespace shop").contains("no answer"));
        }
    }

    /** {@code path} of {@code server}: its status and body, as "503 why\n". */
    private static String get(ControllerServer server, String path) throws Exception {
        HttpResponse<String> answer = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        return answer.statusCode() + " " + answer.body();
    }

    private ControllerServer server(ControllerLoop loop) throws Exception {
        return new ControllerServer(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                new ControllerMetrics(clock::millis),
                () -> loop.alive(loop.staleMillis()),
                loop::notReady);
    }

    @Test
    void standbyCutOffFromTheApiServer_isNotReady_afterTheRenewDeadline_andStaysLive() throws Exception {
        // Readiness tells whether a replica could do its work now: a standby that cannot reach the API
        // server could not take over. Was: 200 on any standby. Its liveness is not affected (a restart
        // does not bring the API server back).
        KubernetesClient clientB = api.client("replica-b");
        ControllerMetrics metricsB = new ControllerMetrics(clock::millis);
        try (ControllerLoop a = loop(LEASE, "replica-a", 3_600, round -> {});
                ControllerLoop b = loop(
                        LEASE,
                        "replica-b",
                        3_600,
                        () -> wallStartMillis + clock.millis(),
                        round -> {},
                        metricsB,
                        clientB);
                ControllerServer serverA = server(a);
                ControllerServer serverB = server(b)) {
            assertThat(get(serverB, "/readyz")).isEqualTo("503 not started\n");
            a.start();
            pump("replica-a leads and plans", () -> a.rounds() == 1 && !a.workInFlight());
            assertThat(get(serverA, "/readyz")).isEqualTo("200 ok\n");
            b.start();
            pump("replica-b reads the Lease", () -> !b.leaseAttemptInFlight() && b.notReady() == null);
            assertThat(get(serverB, "/readyz")).isEqualTo("200 ok\n");
            assertThat(metricsB.scrape()).contains(STANDING_BY);

            // From now on replica-b's reads of the Lease are never answered (replica-a's are), as when it is cut
            // off from the API server. The clock stands still from replica-b's next attempt until its read has
            // arrived, so the attempt hangs from the instant it started.
            StallingApiServer.Stall cutOff = api.stall("GET", LEASE_PATH, "replica-b");
            VirtualLoops.stepUntil(
                    clock,
                    "replica-b's next attempt on the Lease to hang",
                    100,
                    LEASE_MILLIS,
                    () -> a.leaseAttemptInFlight() || (b.leaseAttemptInFlight() && cutOff.count() == 0),
                    () -> cutOff.count() > 0,
                    () -> "messages " + messages);
            long hangsFrom = clock.millis();
            assertThat(b.notReady()).as("a call just made").isNull();
            VirtualLoops.stepUntil(
                    clock,
                    "replica-b not ready",
                    100,
                    2 * LEASE_MILLIS,
                    a::leaseAttemptInFlight,
                    () -> b.notReady() != null,
                    () -> "messages " + messages);
            assertThat(clock.millis() - hangsFrom).isGreaterThanOrEqualTo(RENEW_DEADLINE_MILLIS);
            assertThat(get(serverB, "/readyz"))
                    .isEqualTo("503 Lease tailor-system/tailor-heart: the API server has not answered this replica's"
                            + " call for the renew deadline (1.3 s) or longer; this replica cannot take part in leader"
                            + " election\n");
            assertThat(get(serverB, "/healthz")).isEqualTo("200 ok\n");
            assertThat(metricsB.scrape()).contains(STANDING_BY);
            assertThat(a.leading()).isTrue();
            assertThat(get(serverA, "/readyz")).isEqualTo("200 ok\n");
        }
    }

    @Test
    void leaseRefused_theLeaderIsNotReady_asAStandbyAfterTheDeadlineToo_untilAnsweredAgain() throws Exception {
        ControllerMetrics metrics = new ControllerMetrics(clock::millis);
        try (ControllerLoop a = loop(LEASE, "replica-a", 3_600, round -> {}, metrics);
                ControllerServer server = server(a)) {
            a.start();
            pump("replica-a leads and plans", () -> a.rounds() == 1 && !a.workInFlight());
            assertThat(get(server, "/readyz")).isEqualTo("200 ok\n");
            assertThat(metrics.scrape()).contains("\ntailor_heart_leader 1.0\n").doesNotContain(STANDING_BY);

            // The API server refuses the Lease to this replica (its Role lost it, say).
            String status = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"message\":\"leases.coordination.k8s.io \\\"tailor-heart\\\" is forbidden\","
                    + "\"reason\":\"Forbidden\",\"code\":403}";
            StallingApiServer.Answer refused = api.answer(
                    "GET",
                    LEASE_PATH,
                    request -> new MockResponse().setResponseCode(403).setBody(status));
            stepUntil("the next attempt refused", 100, LEASE_MILLIS, () -> a.notReady() != null);
            // Still the leader (its last renewal is within the renew deadline), but not ready.
            assertThat(a.leading()).isTrue();
            String leaderWhy = get(server, "/readyz");
            assertThat(leaderWhy)
                    .startsWith("503 Lease tailor-system/tailor-heart: cannot read it (")
                    .contains("403")
                    .endsWith("); this replica cannot take part in leader election\n");
            assertThat(get(server, "/healthz")).isEqualTo("200 ok\n");

            stepUntil("replica-a to stop leading", 100, LEASE_MILLIS, () -> !a.leading());
            assertThat(metrics.scrape()).contains(STANDING_BY);
            assertThat(get(server, "/readyz")).isEqualTo(leaderWhy);
            assertThat(get(server, "/healthz")).isEqualTo("200 ok\n");

            // Answered again: its next attempt finds the Lease still naming it, and it leads again.
            api.release(refused);
            stepUntil("replica-a ready again", 100, LEASE_MILLIS, () -> a.notReady() == null);
            assertThat(a.leading()).isTrue();
            assertThat(get(server, "/readyz")).isEqualTo("200 ok\n");
        }
    }

    @Test
    void oneReplica_roundsThatCannotReadTheCluster_makeItNotReady_untilOneCan() throws Exception {
        // Without leader election the rounds are the replica's only calls to the API server.
        try (ControllerLoop solo = loop(null, "solo", 1, round -> {});
                ControllerServer server = server(solo)) {
            solo.start();
            pump("a round", () -> solo.rounds() == 1 && !solo.workInFlight());
            assertThat(get(server, "/readyz")).isEqualTo("200 ok\n");

            String status = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"message\":\"nodes is forbidden\",\"reason\":\"Forbidden\",\"code\":403}";
            StallingApiServer.Answer refused = api.answer(
                    "GET",
                    "/api/v1/nodes.*",
                    request -> new MockResponse().setResponseCode(403).setBody(status));
            Timed failed = roundAt(1_000);
            assertThat(failed.round().failure()).isEqualTo(Controller.FailureReason.KUBERNETES_READ);
            pump("the round's end", () -> !solo.workInFlight());
            assertThat(get(server, "/readyz"))
                    .isEqualTo("503 leading, but the last round could not read the cluster: "
                            + failed.round().message().replaceAll("\\s+", " ").strip() + "\n");
            assertThat(get(server, "/healthz")).isEqualTo("200 ok\n");

            api.release(refused);
            Timed next = roundAt(2_000);
            assertThat(next.round().failure()).as(next.round().message()).isNull();
            pump("the round's end", () -> !solo.workInFlight());
            assertThat(get(server, "/readyz")).isEqualTo("200 ok\n");
        }
    }

    /** Answers the watches of pods with a WebSocket of the test's, completing {@code socket} with the first. */
    private StallingApiServer.Answer answerPodWatches(CompletableFuture<WebSocket> socket) {
        return api.answer(
                "GET",
                "/api/v1/namespaces/shop/pods\\?.*watch=true.*",
                request -> new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
                    @Override
                    public void onOpen(WebSocket webSocket, io.fabric8.mockwebserver.http.Response response) {
                        socket.complete(webSocket);
                    }
                }));
    }

    @Test
    void watchStoppedForGood_isSaidOnce_reported_andWatchedAgainWithBackoff() throws Exception {
        // Every watch of pods is a WebSocket the test opens (the first one it drives), never the mock API
        // server's own: closing that one while it sends can block the server's event loop at shutdown.
        CompletableFuture<WebSocket> socket = new CompletableFuture<>();
        StallingApiServer.Answer watches = answerPodWatches(socket);
        ControllerMetrics metrics = new ControllerMetrics(clock::millis);
        try (ControllerLoop loop = loop(null, "solo", 3_600, round -> {}, metrics)) {
            loop.start();
            pump("a round from lists", () -> !rounds.isEmpty());
            WebSocket watch = socket.get(30, TimeUnit.SECONDS);
            pump("the watch running", () -> metrics.scrape().contains(WATCH_UP + " 1.0"));

            // fabric8 cannot read the event and gives up on the watch: its informer stops for good
            // (Watcher.onClose(WatcherException)), as after any error it does not retry.
            watch.send("this is not a watch event");
            // Was: one fabric8 WARN line, and the loop went on as if re-plans on pod events were on.
            pump(
                    "the loop to say the watch stopped",
                    () -> messages.stream()
                            .anyMatch(m -> m.startsWith("the watch of pods in namespace shop stopped (")));
            assertThat(messages)
                    .filteredOn(m -> m.contains("namespace shop stopped"))
                    .singleElement()
                    .satisfies(m -> assertThat(m)
                            .contains("re-plans on pod events are off until it is watched again, in 1 s")
                            .contains("rounds go on from lists every 3600.0 s"));
            assertThat(metrics.scrape()).contains(WATCH_UP + " 0.0");

            // Watched again after the backoff's first second, from a fresh list, as informers do; up again once
            // the new watch has held for two minutes.
            clock.advance(Duration.ofMillis(ControllerLoop.REWATCH_FIRST_MILLIS));
            pump("the watch started again", () -> watches.count() >= 2);
            long again = clock.millis();
            for (int second = 0;
                    !messages.contains("watching pods in namespace shop again: re-plans on pod events are on");
                    second++) {
                // Virtual time may run ahead of the new watch's real start, which starts the hold: bounded loosely.
                assertThat(second).as("seconds held").isLessThan(3_600);
                clock.advance(Duration.ofMillis(ControllerLoop.HOUSEKEEPING_MILLIS));
                pump("housekeeping", () -> true);
            }
            assertThat(clock.millis() - again).isGreaterThanOrEqualTo(ControllerLoop.REWATCH_HOLD_MILLIS);
            assertThat(metrics.scrape()).contains(WATCH_UP + " 1.0");
            assertThat(watches.count()).isEqualTo(2);
            assertThat(loop.rounds()).isEqualTo(1);
        }
    }

    @Test
    void watchThatKeepsStopping_isWatchedAgainAfterDoublingWaits_upTo30s_andStaysReportedDown() throws Exception {
        // Every watch of pods gets an event fabric8 cannot read as soon as it opens: each stops right after it
        // starts (or before its start has completed), never holding long enough to count as up.
        StallingApiServer.Answer watches = api.answer(
                "GET",
                "/api/v1/namespaces/shop/pods\\?.*watch=true.*",
                request -> new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
                    @Override
                    public void onOpen(WebSocket webSocket, io.fabric8.mockwebserver.http.Response response) {
                        webSocket.send("this is not a watch event");
                    }
                }));
        ControllerMetrics metrics = new ControllerMetrics(clock::millis);
        try (ControllerLoop loop = loop(null, "solo", 3_600, round -> {}, metrics)) {
            loop.start();
            pump("a round from lists", () -> !rounds.isEmpty());
            long[] waits = {1_000, 2_000, 4_000, 8_000, 16_000, ControllerLoop.REWATCH_MAX_MILLIS, 30_000};
            for (long wait : waits) {
                int seen = watches.count();
                // The clock moves only once the loop has handled the stop: the wait is counted from it.
                pump("the stop of watch " + seen + " handled", () -> loop.rewatchDueMillis("shop") >= 0);
                assertThat(loop.rewatchDueMillis("shop"))
                        .as("wait after stop %d", seen)
                        .isEqualTo(wait);
                clock.advance(Duration.ofMillis(wait - 1));
                pump("the wait", () -> true);
                assertThat(watches.count())
                        .as("watches 1 ms before the wait after stop %d ends", seen)
                        .isEqualTo(seen);
                assertThat(metrics.scrape()).contains(WATCH_UP + " 0.0");
                clock.advance(Duration.ofMillis(1));
                pump("the watch after " + wait + " ms", () -> watches.count() > seen);
            }
            assertThat(watches.count()).isEqualTo(1 + waits.length);
            assertThat(messages)
                    .filteredOn(m -> m.contains("namespace shop stopped"))
                    .singleElement()
                    .satisfies(m -> assertThat(m).contains("in 1 s (then backing off to 30 s"));
            assertThat(messages).noneMatch(m -> m.startsWith("watching pods in namespace shop again"));
            assertThat(loop.rounds()).isEqualTo(1);
        }
    }

    @Test
    void watchRefusedWith403_whileTheClientRetriesIt_isSaidAndReported_untilItWatchesAgain() throws Exception {
        CompletableFuture<WebSocket> socket = new CompletableFuture<>();
        StallingApiServer.Answer firstWatch = answerPodWatches(socket);
        ControllerMetrics metrics = new ControllerMetrics(clock::millis);
        try (ControllerLoop loop = loop(null, "solo", 3_600, round -> {}, metrics)) {
            loop.start();
            pump("a round from lists", () -> !rounds.isEmpty());
            WebSocket watch = socket.get(30, TimeUnit.SECONDS);
            api.release(firstWatch);
            pump("the watch running", () -> metrics.scrape().contains(WATCH_UP + " 1.0"));

            // The service account loses its right to watch pods: the watch ends with a 403, and every new one
            // is refused.
            String status = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                    + "\"message\":\"pods is forbidden: cannot watch resource pods in namespace shop\","
                    + "\"reason\":\"Forbidden\",\"code\":403}";
            StallingApiServer.Answer forbidden = api.answer(
                    "GET",
                    "/api/v1/namespaces/shop/pods\\?.*watch=true.*",
                    request -> new MockResponse().setResponseCode(403).setBody(status));
            watch.send("{\"type\":\"ERROR\",\"object\":" + status + "}");
            Await.until("the watch refused", () -> forbidden.count() > 0);
            // The client retries it on its own; the loop says so once it has been down for 10 s.
            for (int second = 0; second <= ControllerLoop.WATCH_ANSWER_MILLIS / 1000; second++) {
                clock.advance(Duration.ofSeconds(1));
                pump("housekeeping", () -> true);
            }
            assertThat(messages)
                    .filteredOn(m -> m.startsWith("the watch of pods in namespace shop"))
                    .singleElement()
                    .satisfies(m -> assertThat(m)
                            .contains("has been down for 10 s")
                            .contains("re-plans on pod events are off until it is back"));
            assertThat(metrics.scrape()).contains(WATCH_UP + " 0.0");

            // Allowed again: the client's next retry watches (a WebSocket the test opens, as in the test above),
            // and the loop says so.
            answerPodWatches(new CompletableFuture<>());
            api.release(forbidden);
            Await.until(
                    "the loop to say the watch is back",
                    () -> {
                        clock.advance(Duration.ofSeconds(1));
                        clock.runDueTasks();
                        return messages.contains(
                                "watching pods in namespace shop again: re-plans on pod events are on");
                    },
                    () -> "messages " + messages);
            assertThat(metrics.scrape()).contains(WATCH_UP + " 1.0");
        }
    }
}
