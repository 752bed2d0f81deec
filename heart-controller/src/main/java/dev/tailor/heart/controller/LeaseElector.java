package dev.tailor.heart.controller;

import dev.tailor.common.Numbers;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Leader election on a Kubernetes Lease, as client-go's {@code tools/leaderelection} package does it,
 * over fabric8's {@link Lock} (e.g. its {@code LeaseLock}), with its time from an injected ticker and
 * scheduler: acquire (try every {@code retryPeriod} until the Lease is free or its holder's record
 * has not changed for {@code leaseDuration} on this replica's ticker), renew (every
 * {@code retryPeriod}; leadership ends when no renewal started within the last
 * {@code renewDeadline} succeeded), release (on {@link #stop()}, the holder is cleared).
 *
 * <p>Threads: every decision runs on {@code scheduler} (one task at a time, as a single-threaded
 * scheduled executor or a virtual clock runs them); the calls to the API server run on {@code io}
 * and hand their result back to {@code scheduler}, so a call that hangs never delays the renew
 * deadline. At most one attempt is in flight. The listener is called on {@code scheduler}.
 *
 * <p>Maintainer note (our reading of client-go's {@code leaderelection.go}, {@code LeaderElector}:
 * {@code acquire}, {@code renew}, {@code tryAcquireOrRenew}, {@code release}). A contender never
 * trusts the timestamps in the record: it takes over only after the record (holder, times,
 * transitions) has not changed for {@code leaseDuration} on its <i>own</i> clock since it saw it
 * change; so clocks may disagree by any offset, only their rates matter. The leader stops leading
 * at {@code attemptStart + renewDeadline} after its last successful renewal: that renewal's record
 * was seen by a contender no earlier than {@code attemptStart}, so the contender waits until at
 * least {@code attemptStart + leaseDuration}, {@code leaseDuration - renewDeadline} later (5 s of
 * 15 s by default). fabric8's own {@code LeaderElector} compares the record's {@code renewTime}
 * with a static wall clock, so it cannot run on virtual time; this class is the small part of it
 * we need. Departures from client-go: no jitter on the retry period (one attempt per period; a
 * jitter only spreads contenders' load), and an attempt is not started while one hangs (fabric8's
 * locks serialise them anyway).
 */
final class LeaseElector {

    /** Told of leadership changes, on the scheduler. */
    interface Listener {
        /** This replica leads from now on. */
        void startedLeading();

        /** This replica no longer leads; {@code why} says why (for the log). */
        void stoppedLeading(String why);

        /** The Lease names {@code identity} now (another replica or this one), seen for the first time. */
        void newLeader(String identity);

        /**
         * An attempt failed reading or writing the Lease ({@code problem}: "cannot read it (403 ...)"),
         * or works again ({@code null}); said when it changes.
         */
        void problem(String problem);
    }

    /** Whether leadership ends at the renew deadline; {@code false} only to show that a test catches it. */
    enum RenewDeadline {
        CHECKED,
        IGNORED_FOR_TESTS
    }

    private final Lock lock;
    private final KubernetesClient client;
    private final Duration leaseDuration;
    private final long leaseDurationNanos;
    private final long renewDeadlineNanos;
    private final long retryPeriodNanos;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier tickerNanos;
    private final LongSupplier epochMillis;
    private final Executor io;
    private final Listener listener;
    private final RenewDeadline renewDeadline;

    // State below: read and written on the scheduler only (volatile where read elsewhere).
    private volatile boolean leading;
    private volatile boolean stopped;
    private volatile boolean attemptInFlight;
    private ScheduledFuture<?> nextAttempt;
    private ScheduledFuture<?> deadline;
    /** The record as last read or written, and when that was (ticker ns). */
    private volatile LeaderElectionRecord observed;

    private volatile long observedNanos;
    /** The start of the last successful acquisition or renewal (ticker ns). */
    private long renewedAtNanos;

    private String reportedLeader;
    /** The last attempt's problem, or null when it worked (or none has ended yet). */
    private volatile String lastProblem;
    /** Whether some attempt has ended (worked or not). */
    private volatile boolean attemptEnded;
    /** When the attempt in flight started (ticker ns), while {@link #attemptInFlight}. */
    private volatile long attemptStartedNanos;

    /**
     * @param leaseDuration how long a contender waits, after the record last changed, before taking
     *                      the Lease (client-go's {@code LeaseDuration}; 15 s by default)
     * @param renewDeadline how long after the start of its last successful renewal the leader
     *                      stops leading ({@code RenewDeadline}; 10 s), &lt; {@code leaseDuration}
     * @param retryPeriod   between attempts to acquire or renew ({@code RetryPeriod}; 2 s in
     *                      client-go, 3 s here), &lt; {@code renewDeadline}
     * @param tickerNanos   monotonic clock of the decisions
     * @param epochMillis   wall clock, only for the record's {@code acquireTime} and {@code renewTime}
     *                      (read by people and other tools; never by a decision of this class)
     * @throws IllegalArgumentException when the durations are not positive and ordered so
     */
    LeaseElector(
            Lock lock,
            KubernetesClient client,
            Duration leaseDuration,
            Duration renewDeadline,
            Duration retryPeriod,
            ScheduledExecutorService scheduler,
            LongSupplier tickerNanos,
            LongSupplier epochMillis,
            Executor io,
            Listener listener,
            RenewDeadline check) {
        if (retryPeriod.isNegative()
                || retryPeriod.isZero()
                || renewDeadline.compareTo(retryPeriod) <= 0
                || leaseDuration.compareTo(renewDeadline) <= 0) {
            throw new IllegalArgumentException("leaseDuration : " + seconds(leaseDuration) + ", renewDeadline : "
                    + seconds(renewDeadline) + ", retryPeriod : " + seconds(retryPeriod)
                    + " (expected: leaseDuration > renewDeadline > retryPeriod > 0)");
        }
        this.lock = lock;
        this.client = client;
        this.leaseDuration = leaseDuration;
        this.leaseDurationNanos = leaseDuration.toNanos();
        this.renewDeadlineNanos = renewDeadline.toNanos();
        this.retryPeriodNanos = retryPeriod.toNanos();
        this.scheduler = scheduler;
        this.tickerNanos = tickerNanos;
        this.epochMillis = epochMillis;
        this.io = io;
        this.listener = listener;
        this.renewDeadline = check;
    }

    /** Starts trying to acquire the Lease now. Call once. */
    void start() {
        scheduler.execute(this::attempt);
    }

    /** Whether this replica leads (as of the scheduler's last decision). */
    boolean leading() {
        return leading;
    }

    /** Whether an attempt (acquire or renew) is waiting for the API server. */
    boolean attemptInFlight() {
        return attemptInFlight;
    }

    /**
     * Why this replica has no working access to the Lease, in words, or {@code null}: the last
     * attempt's problem ({@code cannot read it (...)}), or an attempt that has had no answer for the
     * renew deadline. A leader and a standby alike, for readiness. May be called from any thread.
     */
    String noAccess() {
        if (attemptInFlight && tickerNanos.getAsLong() - attemptStartedNanos >= renewDeadlineNanos) {
            return String.format(
                    java.util.Locale.ROOT,
                    "the API server has not answered this replica's call for the renew deadline (%.1f s) or longer",
                    renewDeadlineNanos / 1e9);
        }
        return lastProblem;
    }

    /** Whether some attempt has ended, worked or not. May be called from any thread. */
    boolean answered() {
        return attemptEnded;
    }

    private void attempt() {
        nextAttempt = null;
        if (stopped) {
            return;
        }
        if (!attemptInFlight) {
            long startedNanos = tickerNanos.getAsLong();
            attemptStartedNanos = startedNanos;
            attemptInFlight = true;
            try {
                CompletableFuture.supplyAsync(this::tryAcquireOrRenew, io)
                        .whenComplete((outcome, failure) -> handBack(() -> attempted(startedNanos, outcome, failure)));
            } catch (RejectedExecutionException e) {
                attemptInFlight = false; // stopping
                return;
            }
        }
        nextAttempt = scheduler.schedule(this::attempt, retryPeriodNanos, TimeUnit.NANOSECONDS);
    }

    private void handBack(Runnable decision) {
        try {
            scheduler.execute(decision);
        } catch (RejectedExecutionException e) {
            // stopped: nothing to decide any more
        }
    }

    /** What one attempt found: this replica holds the Lease, or {@code holder} does, or it failed. */
    private record Outcome(boolean holds, LeaderElectionRecord record, long observedNanos, String problem) {}

    /**
     * client-go's {@code tryAcquireOrRenew}, on an I/O thread: reads the record; writes it (creating
     * it if absent) when this replica holds it or may take it. The decision whether it may take it
     * reads the state of the scheduler's last decision ({@link #observed}), which does not change
     * while this attempt is in flight.
     */
    private Outcome tryAcquireOrRenew() {
        String me = lock.identity();
        ZonedDateTime now = ZonedDateTime.ofInstant(Instant.ofEpochMilli(epochMillis.getAsLong()), ZoneOffset.UTC);
        LeaderElectionRecord current;
        try {
            current = lock.get(client);
        } catch (KubernetesClientException e) {
            return new Outcome(false, null, 0, "cannot read it (" + words(e, client) + ")");
        }
        long seenNanos = tickerNanos.getAsLong();
        if (current == null) {
            LeaderElectionRecord mine = new LeaderElectionRecord(me, leaseDuration, now, now, 0);
            try {
                lock.create(client, mine);
            } catch (KubernetesClientException e) {
                return new Outcome(
                        false,
                        null,
                        0,
                        "it does not exist yet and this replica cannot create it ("
                                + words(e, client)
                                + "): does its namespace exist, and may this"
                                + " service account create Leases there?");
            }
            return new Outcome(true, mine, tickerNanos.getAsLong(), null);
        }
        String holder = current.getHolderIdentity();
        boolean changed = !current.equals(observed);
        long since = changed ? seenNanos : observedNanos;
        boolean heldByOther = holder != null && !holder.isEmpty() && !holder.equals(me);
        if (heldByOther && seenNanos - since < leaseDurationNanos) {
            return new Outcome(false, current, since, null);
        }
        boolean renewal = me.equals(holder);
        LeaderElectionRecord mine = new LeaderElectionRecord(
                me,
                leaseDuration,
                renewal ? current.getAcquireTime() : now,
                now,
                renewal ? current.getLeaderTransitions() : current.getLeaderTransitions() + 1);
        try {
            lock.update(client, mine);
        } catch (KubernetesClientException e) {
            // A 409 is a contender (or our own earlier attempt) writing first: read again next time.
            return new Outcome(
                    false, current, since, e.getCode() == 409 ? null : "cannot write it (" + words(e, client) + ")");
        }
        return new Outcome(true, mine, tickerNanos.getAsLong(), null);
    }

    /** On the scheduler: the attempt started at {@code startedNanos} ended. */
    private void attempted(long startedNanos, Outcome outcome, Throwable failure) {
        attemptInFlight = false;
        if (stopped) {
            return;
        }
        if (failure != null) {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause()
                    : failure;
            outcome = new Outcome(false, null, 0, oneLine(String.valueOf(cause.getMessage())));
        }
        attemptEnded = true;
        if (!Objects.equals(outcome.problem(), lastProblem)) {
            lastProblem = outcome.problem();
            listener.problem(lastProblem);
        }
        if (outcome.record() != null) {
            if (!outcome.record().equals(observed)) {
                observed = outcome.record();
                observedNanos = outcome.observedNanos();
            }
            String holder = outcome.record().getHolderIdentity();
            if (holder != null && !holder.isEmpty() && !holder.equals(reportedLeader)) {
                reportedLeader = holder;
                listener.newLeader(holder);
            }
        }
        boolean late =
                tickerNanos.getAsLong() - startedNanos >= renewDeadlineNanos && renewDeadline == RenewDeadline.CHECKED;
        if (outcome.holds() && !late) { // a renewal answered after its own deadline proves nothing
            renewedAtNanos = startedNanos;
            if (renewDeadline == RenewDeadline.CHECKED) {
                if (deadline != null) {
                    deadline.cancel(false);
                }
                long left = startedNanos + renewDeadlineNanos - tickerNanos.getAsLong();
                deadline = scheduler.schedule(this::checkDeadline, Math.max(0, left), TimeUnit.NANOSECONDS);
            }
            if (!leading) {
                leading = true;
                listener.startedLeading();
            }
        } else if (leading
                && outcome.record() != null
                && !lock.identity().equals(outcome.record().getHolderIdentity())) {
            stop("the Lease names " + outcome.record().getHolderIdentity());
        }
    }

    /** On the scheduler, at the renew deadline of the last successful renewal. */
    private void checkDeadline() {
        deadline = null;
        long since = tickerNanos.getAsLong() - renewedAtNanos;
        if (leading && since >= renewDeadlineNanos) {
            stop(String.format(
                    java.util.Locale.ROOT,
                    "no renewal succeeded within the renew deadline (%.1f s since"
                            + " the last successful one started)",
                    renewDeadlineNanos / 1e9));
        }
    }

    private void stop(String why) {
        leading = false;
        observed = null; // look at the record afresh: another replica may take it meanwhile
        listener.stoppedLeading(why);
    }

    /**
     * Stops electing: no attempt from now on, leadership ends (the listener is told), and when this
     * replica held the Lease its holder is cleared, so a contender takes it without waiting for it
     * to expire. Returns once the release is answered, or failed, or after {@code timeout} (the
     * Lease then expires by itself). May be called from any thread.
     */
    void stop(Duration timeout) {
        stopped = true;
        ScheduledFuture<?> next = nextAttempt;
        if (next != null) {
            next.cancel(false);
        }
        ScheduledFuture<?> due = deadline;
        if (due != null) {
            due.cancel(false);
        }
        boolean wasLeading = leading;
        leading = false;
        if (!wasLeading) {
            return;
        }
        listener.stoppedLeading("stopping");
        try {
            CompletableFuture.runAsync(this::release, io).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException
                | RejectedExecutionException e) {
            // the release hangs or failed: the Lease expires by itself
        }
    }

    /** client-go's {@code release}: the record without a holder, if it still names this replica. */
    private void release() {
        LeaderElectionRecord current = lock.get(client);
        if (current == null || !lock.identity().equals(current.getHolderIdentity())) {
            return;
        }
        ZonedDateTime now = ZonedDateTime.ofInstant(Instant.ofEpochMilli(epochMillis.getAsLong()), ZoneOffset.UTC);
        lock.update(
                client, new LeaderElectionRecord("", Duration.ofSeconds(1), now, now, current.getLeaderTransitions()));
    }

    /** {@code duration} as a configuration writes it: {@code 2 s}, {@code 0.4 s}, {@code -1.5 s}. */
    private static String seconds(Duration duration) {
        return Numbers.written(PrometheusClient.seconds(duration)) + " s";
    }

    /**
     * A failed call to the Lease in one line, as the rest of the controller says Kubernetes errors
     * ({@code GET leases.coordination.k8s.io/tailor-heart in tailor-system: 403 Forbidden: ...}, or
     * {@code no cluster reachable: <address>: <why>}), not the client's {@code -1 Operation: [get] ... failed.}
     */
    static String words(KubernetesClientException e, KubernetesClient client) {
        return KubernetesErrors.describe(e, String.valueOf(client.getMasterUrl()));
    }

    private static String oneLine(String message) {
        return message == null ? "" : message.replaceAll("\\s+", " ").strip();
    }
}
