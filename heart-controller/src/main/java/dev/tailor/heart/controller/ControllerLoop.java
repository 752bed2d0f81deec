package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs {@link Controller} rounds continuously: a round every {@code roundSeconds}, a re-plan from
 * the last metrics (after a 200 ms debounce) when a pod leaves Ready, is deleted or becomes Ready
 * (informers on the application's pods), and — with a lease — only while this replica can prove
 * that it holds the lease, so two replicas never both write.
 *
 * <p>Guarantees:
 * <ul>
 *   <li><b>Writes.</b> With a lease, every write (each DestinationRule, and the saved state) is
 *       allowed only while fabric8's elector says this replica leads, less than
 *       {@link Options#renewDeadline()} has passed on this replica's monotonic clock since the
 *       start of its last successful renewal ({@link LeaseGuard}), and — read once before each
 *       round's or re-plan's writes — the Lease names this replica. A renewal that hangs therefore
 *       stops the writes at the deadline, whatever the elector's thread is waiting for.</li>
 *   <li><b>Start.</b> {@link #start()} never waits for the API server: rounds discover pods and
 *       nodes by listing them, and the watches behind re-plans start in the background. A watch
 *       without an answer after {@link #WATCH_ANSWER_MILLIS} is said (re-plans are off until it
 *       answers); one that fails is started again before the next round.</li>
 *   <li><b>Renewal.</b> The lease is acquired and renewed only while the loop can work (its
 *       thread is alive and has looked at its work within {@link #staleMillis()}, the
 *       {@code /healthz} condition), so a stuck replica lets a standby take over. A replica that
 *       lost the lease stands by again and may take it later.</li>
 * </ul>
 *
 * <p>Threads: one loop thread runs every round and re-plan (they never overlap); the informers and
 * the leader elector call back on their own threads and only set flags.
 */
public final class ControllerLoop implements AutoCloseable {

    /** Events closer than this are handled by one re-plan. */
    static final long DEBOUNCE_MILLIS = 200;
    /**
     * A pod watch not started after this long is said to have no answer: fabric8's default
     * connection and request timeouts are 10 s, so a healthy API server has answered by then.
     */
    static final long WATCH_ANSWER_MILLIS = 10_000;
    /** {@link #eventMillis} when no pod event waits for a re-plan (monotonic instants may be negative). */
    private static final long NO_EVENT = Long.MIN_VALUE;

    /**
     * @param lease          {@code namespace/name} of the Lease for leader election, or {@code null}
     *                       to always lead (one replica)
     * @param identity       this replica's name in the Lease (e.g. the pod name)
     * @param leaseDuration  how long a lease holds without renewal (e.g. 15 s)
     */
    public record Options(boolean dryRun, String lease, String identity, Duration leaseDuration) {

        /**
         * How long after the start of its last successful renewal a leader may still write: 2/3
         * of the lease duration (10 s of 15 s, the ratio of client-go's defaults), leaving a third
         * for clock skew and a write in flight before another replica may take the Lease.
         */
        public Duration renewDeadline() {
            return leaseDuration.multipliedBy(2).dividedBy(3);
        }

        /** Between attempts to acquire or renew: 1/5 of the lease duration (3 s of 15 s). */
        public Duration retryPeriod() {
            return leaseDuration.dividedBy(5);
        }
    }

    private final Controller controller;
    private final ControllerMetrics metrics;
    private final KubernetesClient client;
    private final ControllerConfig config;
    private final Options options;
    private final Consumer<Controller.Round> reporter;
    private final LongSupplier epochMillis;
    private final LongSupplier monotonicNanos;
    private final LeaseGuard guard;
    private final Object monitor = new Object();
    private final Map<String, PodWatch> watches = new ConcurrentHashMap<>();
    private final Set<String> watchesFailing = ConcurrentHashMap.newKeySet();
    private ResourceEventHandler<Pod> podHandler;
    private volatile Consumer<String> log = message -> { };
    private volatile boolean tookOver;
    private volatile String leader;
    private long nextLeaseCheckMillis;
    private String lastLeaseProblem;
    private volatile boolean renewalRefused;
    private final ExecutorService electorThreads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tailor-heart-leader-election");
        t.setDaemon(true);
        return t;
    });
    private volatile Thread thread;
    private volatile CompletableFuture<?> election;
    private volatile boolean leading;
    private volatile boolean running = true;
    private volatile boolean dirty;
    /** Whether the Lease named this replica when read for the current round's writes. */
    private volatile boolean holderConfirmed;
    /** Counts the times this replica gained the lease; a round writes only in the term it began in. */
    private volatile long term;
    private volatile long roundTerm;
    private volatile long lastLoopMillis;
    private volatile long rounds;
    private volatile long replans;
    /** When the first pod event not yet re-planned arrived (monotonic ms), or {@link #NO_EVENT}. */
    private volatile long eventMillis = NO_EVENT;
    private volatile long lastReplanDelayMillis = -1;

    /** A pod watch and when it was started (monotonic ms). */
    private record PodWatch(SharedIndexInformer<Pod> informer, CompletableFuture<Void> started, long sinceMillis,
            boolean[] saidNoAnswer) {
    }

    /** With the JVM's monotonic clock ({@link System#nanoTime()}) for the lease and liveness. */
    public ControllerLoop(Controller controller, ControllerMetrics metrics, KubernetesClient client,
            ControllerConfig config, Options options, Consumer<Controller.Round> reporter, LongSupplier epochMillis) {
        this(controller, metrics, client, config, options, reporter, epochMillis, System::nanoTime);
    }

    /**
     * @param epochMillis    wall clock: the instant of each round's metrics (nothing else)
     * @param monotonicNanos monotonic clock for durations: round scheduling, the lease guard, the
     *                       loop's liveness, the watch's answer time and the re-plan delay
     */
    public ControllerLoop(Controller controller, ControllerMetrics metrics, KubernetesClient client,
            ControllerConfig config, Options options, Consumer<Controller.Round> reporter, LongSupplier epochMillis,
            LongSupplier monotonicNanos) {
        this.controller = controller;
        this.metrics = metrics;
        this.client = client;
        this.config = config;
        this.options = options;
        this.reporter = reporter;
        this.epochMillis = epochMillis;
        this.monotonicNanos = monotonicNanos;
        this.guard = new LeaseGuard(Math.max(1, options.renewDeadline().toMillis()));
        this.lastLoopMillis = monotonicMillis();
        controller.writeGuard(this::mayWrite);
    }

    /** Where the loop says what happens outside rounds (leadership, watch failures); default: nowhere. */
    public void onMessage(Consumer<String> messages) {
        this.log = messages == null ? message -> { } : messages;
    }

    /**
     * Starts the informers (in the background), the loop thread and leader election; returns at
     * once, whatever the API server does. An API server that cannot be watched does not stop the
     * loop: it is said, and the watch is started again before every round.
     */
    public void start() {
        podHandler = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                if (ready(pod)) {
                    changed();
                }
            }

            @Override
            public void onUpdate(Pod before, Pod after) {
                if (ready(before) != ready(after)) {
                    changed();
                }
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                changed();
            }
        };
        watchPods();
        if (options.lease() == null) {
            leading = true;
            metrics.leading(true);
        }
        Thread loopThread = new Thread(this::loop, "tailor-heart-rounds");
        loopThread.setDaemon(true);
        thread = loopThread;
        loopThread.start();
        if (options.lease() != null) {
            elect();
        }
    }

    /** Starts a leader elector; when it ends (the lease was lost) and the loop runs, starts another. */
    private void elect() {
        String[] lease = options.lease().split("/", 2);
        GuardedLeaseLock lock = new GuardedLeaseLock(new LeaseLock(lease[0], lease[1], options.identity()), guard,
                this::monotonicMillis, () -> running && alive(staleMillis()), this::renewalRefused);
        CompletableFuture<?> started;
        synchronized (monitor) {
            if (!running) {
                return;
            }
            started = new LeaderElector(client, new LeaderElectionConfigBuilder()
                    .withName("tailor-heart")
                    .withLock(lock)
                    .withLeaseDuration(options.leaseDuration())
                    .withRenewDeadline(options.renewDeadline())
                    .withRetryPeriod(options.retryPeriod())
                    .withReleaseOnCancel()
                    .withLeaderCallbacks(new LeaderCallbacks(this::startLeading, this::stopLeading, this::newLeader))
                    .build(), electorThreads).start();
            election = started;
        }
        started.whenComplete((ignored, failure) -> {
            if (running) {
                try {
                    CompletableFuture.delayedExecutor(options.retryPeriod().toMillis(), TimeUnit.MILLISECONDS,
                            electorThreads).execute(this::elect);
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
        });
    }

    private void renewalRefused() {
        if (!renewalRefused) {
            renewalRefused = true;
            log.accept("not renewing Lease " + options.lease() + ": the round loop has not looked at its work for "
                    + (monotonicMillis() - lastLoopMillis) / 1000 + " s (or has stopped); another replica may take"
                    + " over");
        }
    }

    /**
     * Starts the pod informers not running yet, without waiting for them: a failed one is replaced
     * (and that said once), one still starting is left to finish.
     */
    private void watchPods() {
        for (String namespace : config.kubernetes().namespaces()) {
            PodWatch watch = watches.get(namespace);
            if (watch != null && watch.started().isCompletedExceptionally()) {
                watch.informer().close();
                watches.remove(namespace);
                watch = null;
            }
            if (watch != null) {
                continue;
            }
            try {
                SharedIndexInformer<Pod> informer = client.pods().inNamespace(namespace)
                        .withLabel(config.kubernetes().componentLabel()).runnableInformer(0);
                informer.addEventHandler(podHandler);
                PodWatch started = new PodWatch(informer, informer.start().toCompletableFuture(), monotonicMillis(),
                        new boolean[1]);
                watches.put(namespace, started);
                started.started().whenComplete((ignored, failure) -> watchStarted(namespace, started, failure));
            } catch (RuntimeException e) {
                watchFailed(namespace, e);
            }
        }
    }

    private void watchStarted(String namespace, PodWatch watch, Throwable failure) {
        if (failure == null) {
            if (watchesFailing.remove(namespace) || watch.saidNoAnswer()[0]) {
                log.accept("watching pods in namespace " + namespace + " again: re-plans on pod events are on");
            }
        } else {
            watchFailed(namespace, failure);
        }
    }

    private void watchFailed(String namespace, Throwable failure) {
        Throwable cause = failure.getCause() != null && failure instanceof java.util.concurrent.CompletionException
                ? failure.getCause() : failure;
        if (watchesFailing.add(namespace)) {
            String why = cause instanceof KubernetesClientException k
                    ? KubernetesErrors.describe(k, String.valueOf(client.getMasterUrl()))
                    : String.valueOf(cause.getMessage()).replaceAll("\\s+", " ").strip();
            log.accept("cannot watch pods in namespace " + namespace + " (" + why + "): re-plans on"
                    + " pod events are off until it can; retried before every round; rounds go on");
        }
    }

    /** Says once of each watch still without an answer after {@link #WATCH_ANSWER_MILLIS}. */
    private void checkWatches(long nowMillis) {
        watches.forEach((namespace, watch) -> {
            if (!watch.started().isDone() && !watch.saidNoAnswer()[0]
                    && nowMillis - watch.sinceMillis() >= WATCH_ANSWER_MILLIS) {
                watch.saidNoAnswer()[0] = true;
                log.accept("the watch of pods in namespace " + namespace + " has had no answer for "
                        + (nowMillis - watch.sinceMillis()) / 1000 + " s: re-plans on pod events are off until it has;"
                        + " rounds go on from lists every " + config.roundSeconds() + " s");
            }
        });
    }

    /** Whether this replica waits for the lease (started, alive, not leading). */
    public boolean standingBy() {
        Thread loopThread = thread;
        return options.lease() != null && loopThread != null && loopThread.isAlive() && !leading;
    }

    /** Whether this replica leads (always, without a lease). */
    public boolean leading() {
        return leading;
    }

    /**
     * Whether the loop thread is alive and has looked at its work within {@code staleMillis}
     * (monotonic clock).
     */
    public boolean alive(long staleMillis) {
        Thread loopThread = thread;
        return loopThread != null && loopThread.isAlive() && monotonicMillis() - lastLoopMillis < staleMillis;
    }

    /**
     * How long the loop may go without looking at its work before it counts as stuck: three round
     * periods and a minute. {@code /healthz} answers 503 then, and the lease is not renewed.
     */
    public long staleMillis() {
        return 3 * periodMillis() + 60_000;
    }

    /** Rounds and re-plans run so far. */
    public long rounds() {
        return rounds;
    }

    public long replans() {
        return replans;
    }

    /**
     * Milliseconds from the first pod event of the last re-plan to its end (rules written, or the
     * re-plan's failure), or -1 before the first re-plan. Also observed as
     * {@code tailor_heart_replan_delay_seconds}.
     */
    public long lastReplanDelayMillis() {
        return lastReplanDelayMillis;
    }

    private long periodMillis() {
        return Math.round(config.roundSeconds() * 1000);
    }

    private long monotonicMillis() {
        return TimeUnit.NANOSECONDS.toMillis(monotonicNanos.getAsLong());
    }

    private static boolean ready(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private void changed() {
        synchronized (monitor) {
            if (eventMillis == NO_EVENT) {
                eventMillis = monotonicMillis();
            }
            dirty = true;
            monitor.notifyAll();
        }
    }

    private void startLeading() {
        synchronized (monitor) {
            term++;
            leading = true;
            tookOver = true;
            renewalRefused = false;
            monitor.notifyAll();
        }
        metrics.leading(true);
    }

    private void stopLeading() {
        leading = false;
        guard.lost();
        metrics.leading(false);
    }

    private void newLeader(String identity) {
        if (identity != null && !identity.equals(leader)) {
            leader = identity;
            log.accept("Lease " + options.lease() + ": " + (identity.equals(options.identity()) ? "this replica ("
                    + identity + ") leads" : identity + " leads; this replica (" + options.identity() + ") stands by"));
        }
    }

    /**
     * Asked before every write. Without a lease: while the loop runs. With one: while the elector
     * says this replica leads, has led without a break since the round began (a lease lost and
     * taken back meanwhile does not count: another replica may have written in between), the
     * {@link LeaseGuard} holds at this instant, and the Lease, read once per round (before its first
     * write), names this replica.
     */
    private boolean mayWrite() {
        if (!running || !leading) {
            return false;
        }
        if (options.lease() == null) {
            return true;
        }
        if (term != roundTerm) {
            log.accept("not writing: this replica lost Lease " + options.lease() + " and took it again during this"
                    + " round, which was planned before; the next round starts from what was saved meanwhile");
            return false;
        }
        if (!leaseProvable()) {
            return false;
        }
        if (!holderConfirmed) {
            String holder = holder();
            if (!options.identity().equals(holder)) {
                guard.lost();
                log.accept("not writing: Lease " + options.lease() + " names " + (holder == null ? "no holder (or"
                        + " cannot be read)" : holder) + ", not this replica (" + options.identity() + ")");
                return false;
            }
            holderConfirmed = true;
            return leaseProvable();   // the read itself may have taken long
        }
        return true;
    }

    private boolean leaseProvable() {
        long now = monotonicMillis();
        if (guard.holds(now)) {
            return true;
        }
        long since = guard.sinceRenewalMillis(now);
        log.accept("not writing: " + (since < 0 ? "this replica does not hold Lease " + options.lease()
                : String.format(Locale.ROOT, "Lease %s was last renewed %.1f s ago, the renew deadline is %.1f s"
                + " (renewals fail or hang)", options.lease(), since / 1000.0, guard.renewDeadlineMillis() / 1000.0)));
        return false;
    }

    /** The Lease's holder now, or {@code null} when it has none or cannot be read. */
    private String holder() {
        String[] lease = options.lease().split("/", 2);
        try {
            Lease current = client.resources(Lease.class).inNamespace(lease[0]).withName(lease[1]).get();
            return current == null || current.getSpec() == null ? null : current.getSpec().getHolderIdentity();
        } catch (KubernetesClientException e) {
            return null;
        }
    }

    /**
     * While standing by, reads the Lease now and then, so that a Lease that cannot be read or
     * written (no namespace, no RBAC) is said instead of retried in silence by the elector.
     */
    private void checkLease(long nowMillis) {
        if (options.lease() == null || leading || nowMillis < nextLeaseCheckMillis) {
            return;
        }
        nextLeaseCheckMillis = nowMillis + 2 * options.leaseDuration().toMillis();
        String[] lease = options.lease().split("/", 2);
        String problem;
        try {
            Lease current = client.resources(Lease.class).inNamespace(lease[0]).withName(lease[1]).get();
            problem = current != null ? null : "Lease " + options.lease() + " does not exist yet and this replica has"
                    + " not created it: does namespace " + lease[0] + " exist, and may this service account create"
                    + " Leases there?";
        } catch (KubernetesClientException e) {
            problem = "cannot read Lease " + options.lease() + " (" + e.getCode() + " " + e.getMessage()
                    + "): this replica cannot take part in leader election";
        }
        if (problem != null && !problem.equals(lastLeaseProblem)) {
            log.accept(problem);
        }
        lastLeaseProblem = problem;
    }

    private void loop() {
        long periodMillis = periodMillis();
        // Rounds are timed on the monotonic clock: a wall clock set back must not stop them.
        long nextRound = monotonicMillis();
        while (running) {
            lastLoopMillis = monotonicMillis();
            renewalRefused = false;   // it works again; say it if it gets stuck once more
            try {
                checkLease(lastLoopMillis);
                checkWatches(lastLoopMillis);
                boolean doRound;
                boolean doReplan;
                synchronized (monitor) {
                    long now = monotonicMillis();
                    long wait = !leading ? periodMillis : Math.max(0, nextRound - now);
                    if (wait > 0 && !(dirty && leading)) {
                        monitor.wait(Math.min(wait, 1_000));
                    }
                    now = monotonicMillis();
                    if (tookOver) {
                        tookOver = false;
                        controller.takeOver();   // read the state the last leader saved; forget old routes
                        nextRound = now;
                    }
                    doRound = leading && now - nextRound >= 0;
                    doReplan = leading && !doRound && dirty;
                    roundTerm = term;   // startLeading() changes both under the monitor
                    if (doRound) {
                        dirty = false;
                        eventMillis = NO_EVENT;   // a full round covers the events too
                    } else if (doReplan) {
                        dirty = false;
                    }
                }
                if (doReplan) {
                    Thread.sleep(DEBOUNCE_MILLIS);   // let a burst of pod events settle into one re-plan
                    long since;
                    synchronized (monitor) {
                        dirty = false;
                        since = eventMillis;
                        eventMillis = NO_EVENT;
                    }
                    holderConfirmed = false;
                    Controller.Round round = controller.replan(options.dryRun());
                    if (round != null && leading) {
                        replans++;
                        metrics.countReplan();
                        if (since != NO_EVENT) {
                            lastReplanDelayMillis = monotonicMillis() - since;
                            metrics.recordReplanDelay(lastReplanDelayMillis / 1000.0);
                        }
                        metrics.record(round);
                        metrics.nodesMissingLocalityLabels(controller.nodesMissingLocalityLabels().size());
                        reporter.accept(round);
                    }
                } else if (doRound) {
                    watchPods();
                    nextRound = monotonicMillis() + periodMillis;
                    holderConfirmed = false;
                    Controller.Round round = controller.round(Instant.ofEpochMilli(epochMillis.getAsLong()),
                            options.dryRun());
                    rounds++;
                    metrics.record(round);
                    metrics.nodesMissingLocalityLabels(controller.nodesMissingLocalityLabels().size());
                    reporter.accept(round);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // A bug or an unexpected client error must not stop the controller: say it, go on.
                reporter.accept(new Controller.Round(false, Controller.FailureReason.KUBERNETES_READ,
                        "unexpected: " + e, null, null, List.of(), List.of(), List.of(), List.of(), 0));
            }
        }
    }

    /**
     * Stops the loop, the informers, and leadership (releasing the lease; a release the API server
     * does not answer is given up after the renew deadline).
     */
    @Override
    public void close() {
        running = false;
        Thread loopThread = thread;
        if (loopThread != null) {
            loopThread.interrupt();
            try {
                loopThread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        watches.values().forEach(watch -> watch.informer().close());
        CompletableFuture<?> elector;
        synchronized (monitor) {
            elector = election;
        }
        if (elector != null) {
            try {
                CompletableFuture.runAsync(() -> elector.cancel(true), electorThreads)
                        .get(options.renewDeadline().toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException | RejectedExecutionException e) {
                // the release hangs or failed: the lease expires by itself
            }
        }
        leading = false;
        guard.lost();
        electorThreads.shutdownNow();
    }
}
