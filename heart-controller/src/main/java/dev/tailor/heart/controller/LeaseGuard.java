package dev.tailor.heart.controller;

/**
 * Whether a replica can still prove that it holds its Lease: only while less than the renew
 * deadline has passed, on its own monotonic clock, since the start of its last successful renewal
 * (or acquisition), and no read of the Lease has named another holder since. Time comes in as an
 * argument; thread-safe.
 *
 * <p>Why this bound (our reading of the Kubernetes leader-election protocol, as client-go and
 * fabric8 implement it): a renewal writes {@code renewTime} = the instant the attempt started, and
 * another replica takes the Lease only after {@code renewTime + leaseDuration} on its own clock. A
 * replica that stops writing at {@code attemptStart + renewDeadline} therefore stops
 * {@code leaseDuration - renewDeadline} (a third of the lease: 5 s of 15 s by default) before anyone
 * else may start, and that margin absorbs clock skew between the replicas and one write already in
 * flight. Counting from the attempt's start, not its answer, keeps a renewal that was answered late
 * (a stalled API server) from stretching the window.
 */
final class LeaseGuard {

    private final long renewDeadlineMillis;
    private boolean held;
    private long renewedAtMillis;

    /** @param renewDeadlineMillis how long after a renewal's start writes stay allowed, &gt; 0 */
    LeaseGuard(long renewDeadlineMillis) {
        if (renewDeadlineMillis <= 0) {
            throw new IllegalArgumentException("renewDeadlineMillis: " + renewDeadlineMillis + " (expected: > 0)");
        }
        this.renewDeadlineMillis = renewDeadlineMillis;
    }

    /** A renewal (or acquisition) that started at {@code attemptStartedMillis} succeeded. */
    synchronized void renewed(long attemptStartedMillis) {
        renewedAtMillis = held ? Math.max(renewedAtMillis, attemptStartedMillis) : attemptStartedMillis;
        held = true;
    }

    /** The Lease is another's, or was released: nothing may be written until the next renewal. */
    synchronized void lost() {
        held = false;
    }

    /** Whether writes are allowed at {@code nowMillis} (same clock as the renewals). */
    synchronized boolean holds(long nowMillis) {
        return held && nowMillis - renewedAtMillis < renewDeadlineMillis;
    }

    /** Milliseconds from the start of the last successful renewal to {@code nowMillis}, or -1 when not held. */
    synchronized long sinceRenewalMillis(long nowMillis) {
        return held ? nowMillis - renewedAtMillis : -1;
    }

    long renewDeadlineMillis() {
        return renewDeadlineMillis;
    }
}
