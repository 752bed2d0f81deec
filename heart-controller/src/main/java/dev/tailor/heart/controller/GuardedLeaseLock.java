package dev.tailor.heart.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * fabric8's Lease lock for the {@link LeaseElector}, which tells a {@link LeaseGuard} when this
 * replica renewed the Lease (the instant its attempt started, on the loop's clock) and when a read
 * showed another holder, and which refuses to acquire or renew while the replica cannot work.
 *
 * <p>The elector calls {@link #get} and then {@link #create} or {@link #update}, one attempt at a
 * time; one instance serves one elector.
 */
final class GuardedLeaseLock implements Lock {

    private final Lock lease;
    private final LeaseGuard guard;
    private final LongSupplier clockMillis;
    private final BooleanSupplier mayRenew;
    private final Runnable refused;
    private long attemptMillis;

    /**
     * @param lease       the Lease lock to delegate to
     * @param guard       told of renewals and of other holders
     * @param clockMillis the monotonic clock of {@code guard}
     * @param mayRenew    whether this replica can work (else acquiring and renewing throw)
     * @param refused     called when an acquisition or renewal is refused
     */
    GuardedLeaseLock(
            Lock lease, LeaseGuard guard, LongSupplier clockMillis, BooleanSupplier mayRenew, Runnable refused) {
        this.lease = lease;
        this.guard = guard;
        this.clockMillis = clockMillis;
        this.mayRenew = mayRenew;
        this.refused = refused;
    }

    @Override
    public LeaderElectionRecord get(KubernetesClient client) {
        attemptMillis = clockMillis.getAsLong();
        LeaderElectionRecord record = lease.get(client);
        if (record != null && !identity().equals(record.getHolderIdentity())) {
            guard.lost();
        }
        return record;
    }

    @Override
    public void create(KubernetesClient client, LeaderElectionRecord record) {
        refuseUnlessAbleToWork(record);
        lease.create(client, record);
        written(record);
    }

    @Override
    public void update(KubernetesClient client, LeaderElectionRecord record) {
        refuseUnlessAbleToWork(record);
        lease.update(client, record);
        written(record);
    }

    private void refuseUnlessAbleToWork(LeaderElectionRecord record) {
        if (identity().equals(record.getHolderIdentity()) && !mayRenew.getAsBoolean()) {
            refused.run();
            throw new KubernetesClientException(
                    "not acquiring or renewing " + describe() + ": the round loop cannot work");
        }
    }

    private void written(LeaderElectionRecord record) {
        if (identity().equals(record.getHolderIdentity())) {
            guard.renewed(attemptMillis);
        } else {
            guard.lost(); // released
        }
    }

    @Override
    public String identity() {
        return lease.identity();
    }

    @Override
    public String describe() {
        return lease.describe();
    }
}
