package dev.tailor.heart.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The lease guard and the lock that feeds it, on a virtual clock. */
class LeaseGuardTest {

    @Test
    void holds_untilTheRenewDeadlineFromTheAttemptsStart_notAtIt() {
        // A renewal that started at 1000 and was answered at 1900 allows writes until 1000 + 1333,
        // not 1900 + 1333: a late answer must not stretch the window others rely on.
        LeaseGuard guard = new LeaseGuard(1_333);
        assertThat(guard.holds(0)).as("never renewed").isFalse();
        guard.renewed(1_000);

        assertThat(guard.holds(1_900)).isTrue();
        assertThat(guard.holds(1_000 + 1_332)).isTrue();
        assertThat(guard.holds(1_000 + 1_333)).isFalse();
        assertThat(guard.sinceRenewalMillis(2_000)).isEqualTo(1_000);
    }

    @Test
    void lost_closesUntilTheNextRenewal_andAnOlderAttemptNeverMovesTheStartBack() {
        LeaseGuard guard = new LeaseGuard(1_000);
        guard.renewed(5_000);
        guard.renewed(4_000); // an older attempt answered last
        assertThat(guard.holds(5_999)).isTrue();

        guard.lost();
        assertThat(guard.holds(5_001)).isFalse();
        assertThat(guard.sinceRenewalMillis(5_001)).isEqualTo(-1);
        guard.renewed(6_000);
        assertThat(guard.holds(6_500)).isTrue();
    }

    @Test
    void constructor_nonPositiveDeadline_isRefusedByName() {
        assertThatThrownBy(() -> new LeaseGuard(0)).hasMessageContaining("renewDeadlineMillis: 0 (expected: > 0)");
    }

    /** A Lease kept in memory, for the lock's calls. */
    private static final class MemoryLock implements Lock {
        LeaderElectionRecord record;

        @Override
        public LeaderElectionRecord get(KubernetesClient client) {
            return record;
        }

        @Override
        public void create(KubernetesClient client, LeaderElectionRecord leaderElectionRecord) {
            record = leaderElectionRecord;
        }

        @Override
        public void update(KubernetesClient client, LeaderElectionRecord leaderElectionRecord) {
            record = leaderElectionRecord;
        }

        @Override
        public String identity() {
            return "replica-a";
        }

        @Override
        public String describe() {
            return "LeaseLock: tailor-system - tailor-heart (replica-a)";
        }
    }

    private static LeaderElectionRecord held(String holder) {
        ZonedDateTime now = ZonedDateTime.now();
        return new LeaderElectionRecord(holder, Duration.ofSeconds(15), now, now, 0);
    }

    @Test
    void lock_recordsTheAttemptsStart_refusesWhileUnableToWork_andAnotherHolderCloses() {
        MemoryLock lease = new MemoryLock();
        LeaseGuard guard = new LeaseGuard(10_000);
        AtomicLong clock = new AtomicLong(100);
        boolean[] able = {true};
        int[] refusals = {0};
        GuardedLeaseLock lock = new GuardedLeaseLock(lease, guard, clock::get, () -> able[0], () -> refusals[0]++);

        lock.get(null); // the attempt starts at 100 ...
        clock.set(7_000); // ... and its write is answered at 7000
        lock.create(null, held("replica-a"));
        assertThat(guard.holds(100 + 9_999)).isTrue();
        assertThat(guard.holds(100 + 10_000)).isFalse();

        able[0] = false;
        lock.get(null);
        assertThatThrownBy(() -> lock.update(null, held("replica-a")))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("the round loop cannot work");
        assertThat(refusals[0]).isEqualTo(1);
        assertThat(guard.sinceRenewalMillis(7_000))
                .as("the refused renewal counts for nothing")
                .isEqualTo(6_900);

        lease.record = held("replica-b");
        lock.get(null);
        assertThat(guard.holds(7_001))
                .as("a read naming another holder closes the guard")
                .isFalse();
    }
}
