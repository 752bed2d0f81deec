package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.testkit.Await;
import dev.tailor.testkit.VirtualClock;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Leader election on virtual time against the fabric8 mock API server: the replicas' decisions run
 * on one {@link VirtualClock} (the test's thread), their calls to the API server are real. The
 * durations are the controller's defaults (lease 15 s, renew deadline 10 s, retry period 3 s): on
 * virtual time a test of a minute's election takes well under a second of calls.
 */
class LeaseElectorTest {

    private static final String LEASE_PATH =
            "/apis/coordination.k8s.io/v1/namespaces/tailor-system/leases/" + "tailor-heart(\\?.*)?";
    private static final Duration LEASE = Duration.ofSeconds(15);
    private static final Duration RENEW_DEADLINE = Duration.ofSeconds(10);
    private static final Duration RETRY = Duration.ofSeconds(3);
    /** Time moves in steps this long; every call the step started is answered before the next step. */
    private static final Duration STEP = Duration.ofMillis(250);

    private StallingApiServer api;
    private final VirtualClock clock = new VirtualClock(0);
    private final long wallStartMillis = System.currentTimeMillis();
    private final ExecutorService io = Executors.newCachedThreadPool();
    private final List<Replica> replicas = new ArrayList<>();
    /** Every change of leadership, "replica-a leads at 0 ms", in the order they happened. */
    private final List<String> timeline = new CopyOnWriteArrayList<>();
    /** Instants (virtual ms) at which two replicas led at once; empty when election is safe. */
    private final List<String> twoLeaders = new CopyOnWriteArrayList<>();

    /** One replica: its elector and whether its calls are cut off (they hang, so never answered). */
    private final class Replica implements LeaseElector.Listener {
        final String name;
        LeaseElector elector;
        boolean cutOff;
        long ledFromMillis = -1;
        long stoppedAtMillis = -1;

        Replica(String name) {
            this.name = name;
        }

        @Override
        public void startedLeading() {
            ledFromMillis = clock.millis();
            timeline.add(name + " leads at " + clock.millis() + " ms");
            for (Replica other : replicas) {
                if (other != this && other.elector.leading()) {
                    twoLeaders.add(name + " and " + other.name + " at " + clock.millis() + " ms");
                }
            }
        }

        @Override
        public void stoppedLeading(String why) {
            stoppedAtMillis = clock.millis();
            timeline.add(name + " stops at " + clock.millis() + " ms: " + why);
        }

        @Override
        public void newLeader(String identity) {
            timeline.add(name + " sees " + identity + " at " + clock.millis() + " ms");
        }

        @Override
        public void problem(String problem) {
            if (problem != null) {
                timeline.add(name + ": " + problem);
            }
        }
    }

    @BeforeEach
    void server() {
        // Calls cut off stay unanswered for the whole test, however long it takes: no request timeout.
        api = new StallingApiServer(0);
    }

    @AfterEach
    void stop() {
        replicas.forEach(r -> r.elector.stop(Duration.ofMillis(100)));
        io.shutdownNow();
        api.close();
    }

    private Replica start(String name, LeaseElector.RenewDeadline check) {
        Replica replica = new Replica(name);
        replica.elector = new LeaseElector(
                new LeaseLock("tailor-system", "tailor-heart", name),
                api.client(name),
                LEASE,
                RENEW_DEADLINE,
                RETRY,
                clock.scheduler(),
                clock,
                () -> wallStartMillis + clock.millis(),
                io,
                replica,
                check);
        replicas.add(replica);
        replica.elector.start();
        settle();
        return replica;
    }

    /** Cuts {@code replica} off from the API server: its reads and writes of the Lease hang from now on. */
    private void cutOff(Replica replica) {
        for (String method : List.of("GET", "PATCH", "PUT", "POST")) {
            api.stall(method, LEASE_PATH, replica.name);
        }
        replica.cutOff = true;
    }

    /** Runs what the replicas' answered calls handed back, until no replica that is not cut off waits for one. */
    private void settle() {
        Await.until(
                "the replicas' calls to the API server to be answered",
                () -> {
                    clock.runDueTasks();
                    return replicas.stream().noneMatch(r -> !r.cutOff && r.elector.attemptInFlight());
                },
                () -> timeline);
        clock.runDueTasks();
    }

    /** Moves virtual time to {@code millis}, a step at a time, each step's calls answered before the next. */
    private void runUntil(long millis) {
        while (clock.millis() < millis) {
            clock.advance(STEP);
            settle();
        }
    }

    private String holder() {
        Lease lease = api.client
                .resources(Lease.class)
                .inNamespace("tailor-system")
                .withName("tailor-heart")
                .get();
        return lease == null ? null : lease.getSpec().getHolderIdentity();
    }

    /**
     * The leader is cut off from the API server at 5 s (its renewals hang, it can no longer read the
     * Lease) while a standby goes on: the scenario a stalled API server or a network partition makes.
     * Returns the two replicas after 40 s of virtual time.
     */
    private Replica[] leaderCutOff(LeaseElector.RenewDeadline leadersCheck) {
        Replica a = start("replica-a", leadersCheck);
        assertThat(a.elector.leading())
                .as("replica-a takes the free Lease at once: " + timeline)
                .isTrue();
        runUntil(500);
        Replica b = start("replica-b", LeaseElector.RenewDeadline.CHECKED);
        runUntil(5_000);
        assertThat(b.elector.leading())
                .as("replica-b stands by while replica-a renews: " + timeline)
                .isFalse();
        cutOff(a);
        runUntil(40_000);
        return new Replica[] {a, b};
    }

    @Test
    void leaderCutOff_neverTwoLeaders_theStandbyTakesOverAfterTheLeaderStopped() {
        // The property leader election exists for: at no instant do two replicas lead. The leader's
        // last renewal started at 3 s, so it stops at 13 s; the standby saw that renewal at 3.5 s and
        // takes over once the record has not changed for a lease duration, from 18.5 s.
        Replica[] ab = leaderCutOff(LeaseElector.RenewDeadline.CHECKED);
        Replica a = ab[0];
        Replica b = ab[1];

        assertThat(twoLeaders)
                .as("instants with two leaders; timeline " + timeline)
                .isEmpty();
        assertThat(a.stoppedAtMillis).as(timeline.toString()).isEqualTo(13_000);
        assertThat(b.ledFromMillis).as(timeline.toString()).isEqualTo(18_500);
        assertThat(b.ledFromMillis - a.stoppedAtMillis)
                .as("margin for clock skew and a write in flight")
                .isGreaterThanOrEqualTo(LEASE.minus(RENEW_DEADLINE).toMillis());
        assertThat(holder()).isEqualTo("replica-b");
        assertThat(timeline)
                .contains("replica-a stops at 13000 ms: no renewal succeeded within the renew deadline"
                        + " (10.0 s since the last successful one started)");
    }

    @Test
    void leaderCutOff_anElectorIgnoringTheRenewDeadline_isCaughtWithTwoLeaders() {
        // The same scenario with a broken leader that goes on believing it leads while its renewals
        // hang: the check above must see two leaders, or it could not fail.
        Replica[] ab = leaderCutOff(LeaseElector.RenewDeadline.IGNORED_FOR_TESTS);

        assertThat(ab[0].stoppedAtMillis)
                .as("the broken leader never stops: " + timeline)
                .isEqualTo(-1);
        assertThat(twoLeaders).as(timeline.toString()).containsExactly("replica-b and replica-a at 18500 ms");
    }

    @Test
    void stop_releasesTheLease_andTheStandbyTakesItAtItsNextAttempt() {
        // A leader shutting down clears the holder, so the standby need not wait for the lease to expire.
        Replica a = start("replica-a", LeaseElector.RenewDeadline.CHECKED);
        Replica b = start("replica-b", LeaseElector.RenewDeadline.CHECKED);
        runUntil(4_000);
        assertThat(b.elector.leading()).isFalse();

        // The release is a real answer: bounded as any wait for one, a failure's bound only.
        a.elector.stop(Await.DEFAULT_TIMEOUT);
        assertThat(holder()).as("released").isNullOrEmpty();
        runUntil(4_000 + RETRY.toMillis());
        assertThat(b.elector.leading()).as(timeline.toString()).isTrue();
        assertThat(twoLeaders).isEmpty();
    }

    @Test
    void aTakeOverSeenByTheLeader_endsItsLeadershipAtOnce() {
        // Another replica writes the Lease (its clock ran ahead, say): the leader reading it stops at
        // its next attempt, without waiting for its renew deadline.
        Replica a = start("replica-a", LeaseElector.RenewDeadline.CHECKED);
        runUntil(1_000);
        Lease lease = api.client
                .resources(Lease.class)
                .inNamespace("tailor-system")
                .withName("tailor-heart")
                .get();
        lease.getSpec().setHolderIdentity("replica-z");
        api.client
                .resources(Lease.class)
                .inNamespace("tailor-system")
                .resource(lease)
                .update();

        runUntil(3_000);
        assertThat(a.elector.leading()).isFalse();
        assertThat(timeline)
                .contains(
                        "replica-a stops at 3000 ms: the Lease names replica-z", "replica-a sees replica-z at 3000 ms");
    }

    @Test
    void constructor_durationsOutOfOrder_areRefusedByName() {
        assertThatThrownBy(() -> new LeaseElector(
                        new LeaseLock("ns", "name", "me"),
                        api.client,
                        LEASE,
                        LEASE,
                        RETRY,
                        clock.scheduler(),
                        clock,
                        () -> 0L,
                        io,
                        new Replica("me"),
                        LeaseElector.RenewDeadline.CHECKED))
                .hasMessage("leaseDuration : 15 s, renewDeadline : 15 s, retryPeriod : 3 s"
                        + " (expected: leaseDuration > renewDeadline > retryPeriod > 0)");
        assertThat(TimeUnit.NANOSECONDS.toMillis(clock.nanos())).isZero();
    }
}
