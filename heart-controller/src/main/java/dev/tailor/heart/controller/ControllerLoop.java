package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 *       allowed only while the elector ({@link LeaseElector}) says this replica leads, less than
 *       {@link Options#renewDeadline()} has passed on this replica's ticker since the start of its
 *       last successful renewal ({@link LeaseGuard}), and — read once before each round's or
 *       re-plan's writes — the Lease names this replica. A renewal that hangs therefore stops the
 *       writes at the deadline, whatever the call is waiting for.</li>
 *   <li><b>Start.</b> {@link #start()} never waits for the API server: rounds discover pods and
 *       nodes by listing them, and the watches behind re-plans start in the background. A watch
 *       without an answer after {@link #WATCH_ANSWER_MILLIS} is said (re-plans are off until it
 *       answers); one that fails is started again before the next round. A watch that ran and stops
 *       for good (fabric8 stops its informer) is said once and started again with backoff
 *       ({@link #REWATCH_FIRST_MILLIS} doubling to {@link #REWATCH_MAX_MILLIS}), and counts as up again
 *       (and the backoff starts over) once the new watch has held for {@link #REWATCH_HOLD_MILLIS}; one down for
 *       {@link #WATCH_ANSWER_MILLIS} while the client retries it is said once, and when it is back.
 *       {@code tailor_heart_pod_watch_up} tells each namespace's watch.</li>
 *   <li><b>Renewal.</b> The lease is acquired and renewed only while the loop can work (no round
 *       has been running for {@link #staleMillis()}, the {@code /healthz} condition), so a stuck
 *       replica lets a standby take over. A replica that lost the lease stands by again and may
 *       take it later.</li>
 * </ul>
 *
 * <p>Time and threads: every decision (when a round or re-plan is due, leadership, the debounce)
 * is a task on one scheduler ({@link ScheduledExecutorService}, one task at a time), and every
 * duration is read from one ticker (monotonic ns); production uses a single-threaded scheduled
 * executor and {@link System#nanoTime()}, tests a virtual clock, so they run on virtual time. The
 * calls that wait for other processes run on the loop's own threads: rounds and re-plans on one
 * ({@code tailor-heart-rounds}, so they never overlap), the Lease's calls on another; each hands
 * its end back to the scheduler. The informers call back on their own threads and only hand the
 * event to the scheduler. The wall clock gives each round's metrics instant, nothing else.
 */
public final class ControllerLoop implements AutoCloseable {

    /** Events closer than this are handled by one re-plan. */
    static final long DEBOUNCE_MILLIS = 200;
    /**
     * A pod watch not started after this long is said to have no answer: fabric8's default
     * connection and request timeouts are 10 s, so a healthy API server has answered by then.
     */
    static final long WATCH_ANSWER_MILLIS = 10_000;
    /**
     * A pod watch that stopped for good (fabric8 gives up on it: its informer stops) is started again
     * after this long, then after twice as long each time it fails again, up to {@link #REWATCH_MAX_MILLIS}:
     * as client-go's informers relist and rewatch with backoff (800 ms to 30 s).
     */
    static final long REWATCH_FIRST_MILLIS = 1_000;

    static final long REWATCH_MAX_MILLIS = 30_000;

    /**
     * How long a watch started again after a stop must hold before the backoff starts over from
     * {@link #REWATCH_FIRST_MILLIS} and the watch counts as up (the gauge, the log line): a watch that keeps
     * stopping right after it starts waits longer each time instead of being listed and watched every second
     * (client-go's backoff manager resets after 2 minutes without a failure too).
     */
    static final long REWATCH_HOLD_MILLIS = 120_000;
    /** How often the scheduler looks at the watches and the loop's liveness. */
    static final long HOUSEKEEPING_MILLIS = 1_000;
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

    /** What runs on the rounds thread. */
    private enum Work {
        ROUND,
        REPLAN
    }

    private final Controller controller;
    private final ControllerMetrics metrics;
    private final KubernetesClient client;
    private final ControllerConfig config;
    private final Options options;
    private final Consumer<Controller.Round> reporter;
    private final LongSupplier epochMillis;
    private final LongSupplier tickerNanos;
    private final ScheduledExecutorService scheduler;
    private final boolean ownScheduler;
    private final LeaseElector.RenewDeadline renewDeadlineCheck;
    private final LeaseGuard guard;
    private final Map<String, PodWatch> watches = new ConcurrentHashMap<>();
    private final Set<String> watchesFailing = ConcurrentHashMap.newKeySet();
    private final ExecutorService roundThread = Executors.newSingleThreadExecutor(daemon("tailor-heart-rounds"));
    private final ExecutorService leaseThreads = Executors.newCachedThreadPool(daemon("tailor-heart-leader-election"));
    private ResourceEventHandler<Pod> podHandler;
    private volatile Consumer<String> log = message -> {};
    /** Kubernetes Events of the rounds; replaced only before {@link #start()}. */
    private RoundEvents events;
    /** Reads each round's events and sends them, so that neither holds up a round. */
    private final ThreadPoolExecutor eventSender = RoundEvents.sender();

    private volatile LeaseElector elector;
    private volatile String leader;
    private volatile boolean renewalRefused;
    private volatile boolean running = true;
    private volatile boolean started;
    private volatile boolean leading;
    /** Whether the Lease named this replica when read for the current round's writes. */
    private volatile boolean holderConfirmed;
    /** The message of the last round or re-plan when it could not read the cluster, else {@code null}. */
    private volatile String lastReadFailure;
    /** Counts the times this replica gained the lease; a round writes only in the term it began in. */
    private volatile long term;

    private volatile long roundTerm;
    private volatile long rounds;
    private volatile long replans;
    private volatile long lastReplanDelayMillis = -1;
    /** Pod events the informers handed to the scheduler. */
    private final AtomicLong podEvents = new AtomicLong();
    /** When the scheduler last looked at its work (ticker ms). */
    private volatile long lastLoopMillis;
    /** The work on the rounds thread and since when (ticker ms), or {@code null}. */
    private volatile Work inFlight;

    private volatile long inFlightSinceMillis;

    // Scheduler state: read and written by tasks on the scheduler only.
    private boolean dirty;
    private boolean roundPending;
    private boolean tookOver;
    /** When the first pod event not yet re-planned arrived (ticker ms), or {@link #NO_EVENT}. */
    private long eventMillis = NO_EVENT;

    private ScheduledFuture<?> roundDue;
    private ScheduledFuture<?> replanDue;
    private ScheduledFuture<?> housekeeping;

    /** Backoff of each namespace's rewatch after a stop (ms), while it has not watched again; scheduler only. */
    private final Map<String, Long> rewatchMillis = new ConcurrentHashMap<>();

    private final Map<String, ScheduledFuture<?>> rewatchDue = new ConcurrentHashMap<>();

    /** A pod watch, when it was started (ticker ms), and what the loop said of it. */
    private static final class PodWatch {
        final SharedIndexInformer<Pod> informer;
        final CompletableFuture<Void> started;
        final long sinceMillis;
        volatile boolean saidNoAnswer;
        /** Since when a started watch has not been watching (ticker ms), or {@link #NO_EVENT}; scheduler only. */
        long notWatchingSinceMillis = NO_EVENT;

        volatile boolean saidDown;
        /** A watch started again after a stop: since when it has been up (ticker ms), or {@link #NO_EVENT}. */
        volatile long heldSinceMillis = NO_EVENT;
        /** Whether the loop closed it (a replaced watch, the loop's end), so that its stop is no news. */
        volatile boolean closedHere;

        PodWatch(SharedIndexInformer<Pod> informer, CompletableFuture<Void> started, long sinceMillis) {
            this.informer = informer;
            this.started = started;
            this.sinceMillis = sinceMillis;
        }

        void close() {
            closedHere = true;
            informer.close();
        }
    }

    /**
     * On real time: a single-threaded scheduled executor of its own ({@code tailor-heart-schedule})
     * and the JVM's monotonic clock ({@link System#nanoTime()}).
     *
     * @param epochMillis wall clock: the instant of each round's metrics (nothing else)
     */
    public ControllerLoop(
            Controller controller,
            ControllerMetrics metrics,
            KubernetesClient client,
            ControllerConfig config,
            Options options,
            Consumer<Controller.Round> reporter,
            LongSupplier epochMillis) {
        this(
                controller,
                metrics,
                client,
                config,
                options,
                reporter,
                epochMillis,
                Executors.newSingleThreadScheduledExecutor(daemon("tailor-heart-schedule")),
                System::nanoTime,
                true,
                LeaseElector.RenewDeadline.CHECKED);
    }

    /**
     * On the time of {@code scheduler} and {@code tickerNanos} (e.g. a virtual clock's): the loop
     * schedules its decisions on {@code scheduler}, which must run one task at a time, and reads
     * every duration from {@code tickerNanos}. {@link #close()} leaves {@code scheduler} running.
     *
     * @param epochMillis wall clock: the instant of each round's metrics (nothing else)
     * @param tickerNanos monotonic clock for durations: round scheduling, the lease, the loop's
     *                    liveness, the watch's answer time and the re-plan delay
     */
    public ControllerLoop(
            Controller controller,
            ControllerMetrics metrics,
            KubernetesClient client,
            ControllerConfig config,
            Options options,
            Consumer<Controller.Round> reporter,
            LongSupplier epochMillis,
            ScheduledExecutorService scheduler,
            LongSupplier tickerNanos) {
        this(
                controller,
                metrics,
                client,
                config,
                options,
                reporter,
                epochMillis,
                scheduler,
                tickerNanos,
                false,
                LeaseElector.RenewDeadline.CHECKED);
    }

    /** As above; {@code check} {@code IGNORED_FOR_TESTS} only to show that a test catches a broken elector. */
    ControllerLoop(
            Controller controller,
            ControllerMetrics metrics,
            KubernetesClient client,
            ControllerConfig config,
            Options options,
            Consumer<Controller.Round> reporter,
            LongSupplier epochMillis,
            ScheduledExecutorService scheduler,
            LongSupplier tickerNanos,
            boolean ownScheduler,
            LeaseElector.RenewDeadline check) {
        this.controller = controller;
        this.metrics = metrics;
        this.client = client;
        this.config = config;
        this.options = options;
        this.reporter = reporter;
        this.epochMillis = epochMillis;
        this.tickerNanos = tickerNanos;
        this.scheduler = scheduler;
        this.ownScheduler = ownScheduler;
        this.renewDeadlineCheck = check;
        this.guard = new LeaseGuard(Math.max(1, options.renewDeadline().toMillis()));
        this.lastLoopMillis = monotonicMillis();
        this.events = new RoundEvents(
                client,
                options.identity(),
                client == null ? null : client.getNamespace(),
                System.getenv("POD_NAME"),
                epochMillis,
                message -> log.accept(message),
                Runnable::run); // already on the events' own thread: recordEvents
        controller.writeGuard(this::mayWrite);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Where the loop says what happens outside rounds (leadership, watch failures); default: nowhere. */
    public void onMessage(Consumer<String> messages) {
        this.log = messages == null ? message -> {} : messages;
    }

    /**
     * Starts the informers (in the background), the round schedule and leader election; returns at
     * once, whatever the API server does. An API server that cannot be watched does not stop the
     * loop: it is said, and the watch is started again before every round (and, after a watch that
     * ran stopped, with backoff).
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
        started = true;
        lastLoopMillis = monotonicMillis();
        housekeeping = scheduler.scheduleAtFixedRate(
                this::housekeeping, HOUSEKEEPING_MILLIS, HOUSEKEEPING_MILLIS, TimeUnit.MILLISECONDS);
        if (options.lease() == null) {
            leading = true;
            metrics.leading(true);
            scheduler.execute(() -> scheduleRound(monotonicMillis()));
        } else {
            String[] lease = options.lease().split("/", 2);
            GuardedLeaseLock lock = new GuardedLeaseLock(
                    new LeaseLock(lease[0], lease[1], options.identity()),
                    guard,
                    this::monotonicMillis,
                    () -> running && alive(staleMillis()),
                    this::renewalRefused);
            LeaseElector created = new LeaseElector(
                    lock,
                    client,
                    options.leaseDuration(),
                    options.renewDeadline(),
                    options.retryPeriod(),
                    scheduler,
                    tickerNanos,
                    epochMillis,
                    leaseThreads,
                    new LeaseElector.Listener() {
                        @Override
                        public void startedLeading() {
                            ControllerLoop.this.startLeading();
                        }

                        @Override
                        public void stoppedLeading(String why) {
                            ControllerLoop.this.stopLeading(why);
                        }

                        @Override
                        public void newLeader(String identity) {
                            ControllerLoop.this.newLeader(identity);
                        }

                        @Override
                        public void problem(String problem) {
                            if (problem != null && !leading) {
                                log.accept("Lease " + options.lease() + ": " + problem + "; this replica cannot"
                                        + " take part in leader election");
                            }
                        }
                    },
                    renewDeadlineCheck);
            elector = created;
            created.start();
        }
    }

    private void renewalRefused() {
        if (!renewalRefused) {
            renewalRefused = true;
            log.accept("not renewing Lease " + options.lease() + ": the round loop has not looked at its work for "
                    + (monotonicMillis() - Math.min(lastLoopMillis, busySinceMillis())) / 1000 + " s (or has stopped);"
                    + " another replica may take over");
        }
    }

    /** Since when the rounds thread has been busy with one piece of work (ticker ms), or now. */
    private long busySinceMillis() {
        return inFlight != null ? inFlightSinceMillis : monotonicMillis();
    }

    /**
     * Starts the pod informers not running yet, without waiting for them: a failed one is replaced
     * (and that said once), one still starting is left to finish.
     */
    private void watchPods() {
        for (String namespace : config.kubernetes().namespaces()) {
            PodWatch watch = watches.get(namespace);
            if (watch != null && watch.started.isCompletedExceptionally()) {
                watch.close();
                watches.remove(namespace, watch);
                watch = null;
            }
            if (watch != null) {
                continue;
            }
            metrics.podWatch(namespace, false);
            try {
                SharedIndexInformer<Pod> informer = client.pods()
                        .inNamespace(namespace)
                        .withLabel(config.kubernetes().componentLabel())
                        .runnableInformer(0);
                informer.addEventHandler(podHandler);
                PodWatch started = new PodWatch(informer, informer.start().toCompletableFuture(), monotonicMillis());
                watches.put(namespace, started);
                started.started.whenComplete((ignored, failure) -> watchStarted(namespace, started, failure));
                informer.stopped().whenComplete((ignored, failure) -> {
                    if (failure != null && !started.closedHere) {
                        // A stop can come before the start has completed (an event it cannot read at once):
                        // it is told once the start has, unless the start failed (told as such).
                        started.started.whenComplete((done, startFailure) -> {
                            if (startFailure == null) {
                                onScheduler(() -> watchStopped(namespace, started, failure));
                            }
                        });
                    }
                });
            } catch (RuntimeException e) {
                watchFailed(namespace, e);
            }
        }
    }

    /** Runs {@code task} on the scheduler, unless the loop is closing. */
    private void onScheduler(Runnable task) {
        try {
            scheduler.execute(task);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void watchStarted(String namespace, PodWatch watch, Throwable failure) {
        if (failure == null) {
            onScheduler(() -> {
                if (watches.get(namespace) != watch) {
                    return; // replaced, or stopped already
                }
                ScheduledFuture<?> due = rewatchDue.remove(namespace);
                if (due != null) {
                    due.cancel(false);
                }
                if (rewatchMillis.containsKey(namespace)) {
                    // Started again after a stop: up once it has held (checkWatches), so that a watch that keeps
                    // stopping backs off and stays reported down.
                    watch.heldSinceMillis = monotonicMillis();
                } else {
                    up(namespace, watch);
                }
            });
        } else {
            watchFailed(namespace, failure);
        }
    }

    /** A watch counts as up: the gauge, and a line when it had been said to be failing or without answer. */
    private void up(String namespace, PodWatch watch) {
        metrics.podWatch(namespace, true);
        if (watchesFailing.remove(namespace) || watch.saidNoAnswer) {
            log.accept("watching pods in namespace " + namespace + " again: re-plans on pod events are on");
        }
    }

    /**
     * On the scheduler: a watch that had started stopped for good (fabric8 stops the informer after an error
     * it does not retry, e.g. a watch event it cannot read): says so once, counts the namespace as not
     * watched, and starts the watch again with backoff ({@link #REWATCH_FIRST_MILLIS} doubling to
     * {@link #REWATCH_MAX_MILLIS}), as informers relist and rewatch.
     */
    private void watchStopped(String namespace, PodWatch watch, Throwable failure) {
        if (!running || watches.get(namespace) != watch) {
            return;
        }
        watch.close();
        watches.remove(namespace, watch);
        metrics.podWatch(namespace, false);
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause()
                : failure;
        long delay = nextRewatch(namespace);
        if (watchesFailing.add(namespace)) {
            log.accept("the watch of pods in namespace " + namespace + " stopped ("
                    + watchFailure(cause, String.valueOf(client.getMasterUrl())) + "): re-plans on pod events are"
                    + " off until it is watched again, in " + delay / 1000 + " s (then backing off to "
                    + REWATCH_MAX_MILLIS / 1000 + " s, and before every round); rounds go on from lists every "
                    + config.roundSeconds() + " s");
        }
    }

    /** Schedules the next attempt to watch {@code namespace} again and returns its delay (ms); scheduler only. */
    private long nextRewatch(String namespace) {
        long delay = rewatchMillis.getOrDefault(namespace, REWATCH_FIRST_MILLIS);
        rewatchMillis.put(namespace, Math.min(2 * delay, REWATCH_MAX_MILLIS));
        ScheduledFuture<?> previous = rewatchDue.put(
                namespace,
                scheduler.schedule(
                        () -> {
                            rewatchDue.remove(namespace);
                            if (running) {
                                watchPods();
                            }
                        },
                        delay,
                        TimeUnit.MILLISECONDS));
        if (previous != null) {
            previous.cancel(false);
        }
        return delay;
    }

    /**
     * Why a watch could not start, in one line: a Kubernetes error as {@link KubernetesErrors#describe}
     * says it, no API server answering as {@code no cluster reachable: <address>: <why>} (the cause is then
     * often a {@code ConnectException} without a message, which was told as "null").
     */
    static String watchFailure(Throwable cause, String master) {
        if (cause instanceof KubernetesClientException k) {
            return KubernetesErrors.describe(k, master);
        }
        if (KubernetesErrors.unreachable(cause)) {
            return "no cluster reachable: " + master + ": " + KubernetesErrors.why(cause);
        }
        return cause.getMessage() == null
                ? cause.getClass().getSimpleName()
                : cause.getMessage().replaceAll("\\s+", " ").strip();
    }

    private void watchFailed(String namespace, Throwable failure) {
        Throwable cause = failure.getCause() != null && failure instanceof java.util.concurrent.CompletionException
                ? failure.getCause()
                : failure;
        metrics.podWatch(namespace, false);
        // A watch started again after a stop that fails to start: the next attempt after a longer wait.
        onScheduler(() -> {
            if (running && rewatchMillis.containsKey(namespace) && !rewatchDue.containsKey(namespace)) {
                nextRewatch(namespace);
            }
        });
        if (watchesFailing.add(namespace)) {
            String why = watchFailure(cause, String.valueOf(client.getMasterUrl()));
            log.accept("cannot watch pods in namespace " + namespace + " (" + why + "): re-plans on"
                    + " pod events are off until it can; retried before every round; rounds go on");
        }
    }

    /**
     * Says once of each watch still without an answer after {@link #WATCH_ANSWER_MILLIS}, and of each
     * started watch that has not been watching for that long (fabric8 retries it: the API server refuses
     * the watch, 403 after a permission was taken away, or cannot be reached), and when it watches again.
     */
    private void checkWatches(long nowMillis) {
        watches.forEach((namespace, watch) -> {
            if (!watch.started.isDone()
                    && !watch.saidNoAnswer
                    && nowMillis - watch.sinceMillis >= WATCH_ANSWER_MILLIS) {
                watch.saidNoAnswer = true;
                log.accept("the watch of pods in namespace " + namespace + " has had no answer for "
                        + (nowMillis - watch.sinceMillis) / 1000 + " s: re-plans on pod events are off until it has;"
                        + " rounds go on from lists every " + config.roundSeconds() + " s");
            }
            if (!watch.started.isDone() || watch.started.isCompletedExceptionally() || watch.closedHere) {
                return;
            }
            if (watch.heldSinceMillis != NO_EVENT && nowMillis - watch.heldSinceMillis >= REWATCH_HOLD_MILLIS) {
                watch.heldSinceMillis = NO_EVENT;
                rewatchMillis.remove(namespace);
                up(namespace, watch);
            }
            if (watch.informer.isWatching()) {
                watch.notWatchingSinceMillis = NO_EVENT;
                if (watch.saidDown) {
                    watch.saidDown = false;
                    metrics.podWatch(namespace, true);
                    log.accept("watching pods in namespace " + namespace + " again: re-plans on pod events are on");
                }
                return;
            }
            if (watch.notWatchingSinceMillis == NO_EVENT) {
                watch.notWatchingSinceMillis = nowMillis;
            }
            if (!watch.saidDown && nowMillis - watch.notWatchingSinceMillis >= WATCH_ANSWER_MILLIS) {
                watch.saidDown = true;
                metrics.podWatch(namespace, false);
                log.accept("the watch of pods in namespace " + namespace + " has been down for "
                        + (nowMillis - watch.notWatchingSinceMillis) / 1000 + " s (the client retries it): re-plans on"
                        + " pod events are off until it is back; rounds go on from lists every " + config.roundSeconds()
                        + " s");
            }
        });
    }

    /** On the scheduler, every {@link #HOUSEKEEPING_MILLIS}: the watches, and that the scheduler runs. */
    private void housekeeping() {
        long now = monotonicMillis();
        lastLoopMillis = now;
        if (inFlight == null) {
            renewalRefused = false; // it works again; say it if it gets stuck once more
        }
        try {
            checkWatches(now);
        } catch (RuntimeException e) {
            // a periodic task that throws is never run again: say it, go on
            log.accept("unexpected: " + e);
        }
    }

    /**
     * Why this replica is not ready, in one line ({@code /readyz} answers 503 with it), or {@code null} when
     * it is: a leader once a round has planned and while its last round or re-plan could read the cluster, a
     * standby while it waits for the Lease; with leader election, either only while its last attempt on the
     * Lease (every retry period) read it and none has been waiting for an answer for the renew deadline. A
     * replica that cannot reach the API server is not ready, whether it leads or stands by, as an operator's
     * readiness tells whether it could do its work now; its liveness ({@link #alive}) does not depend on it.
     */
    public String notReady() {
        if (!started) {
            return "not started";
        }
        if (!running) {
            return "stopping";
        }
        if (options.lease() != null) {
            LeaseElector current = elector;
            String problem = current == null ? null : current.noAccess();
            if (problem == null && (current == null || !current.answered())) {
                return "Lease " + options.lease() + " not read yet";
            }
            if (problem != null) {
                // In the words of the line a standby logs.
                return "Lease " + options.lease() + ": " + problem + "; this replica cannot take part in leader"
                        + " election";
            }
        }
        if (!leading) {
            return null;
        }
        if (!metrics.ready()) {
            return "leading, but no round has planned yet";
        }
        String read = lastReadFailure;
        return read == null ? null : "leading, but the last round could not read the cluster: " + read;
    }

    /** Whether an attempt to acquire or renew the Lease waits for the API server (for tests on virtual time). */
    boolean leaseAttemptInFlight() {
        LeaseElector current = elector;
        return current != null && current.attemptInFlight();
    }

    /**
     * In how long the next attempt to watch {@code namespace} again after a stop is due (ms), or -1 when none
     * waits, for tests on virtual time: that a stop has been handled is a real answer, not a matter of time.
     */
    long rewatchDueMillis(String namespace) {
        ScheduledFuture<?> due = rewatchDue.get(namespace);
        return due == null ? -1 : due.getDelay(TimeUnit.MILLISECONDS);
    }

    /** Whether a round or re-plan runs now, until its end is handed back to the scheduler (for tests). */
    boolean workInFlight() {
        return inFlight != null;
    }

    /**
     * Pod events (a Ready pod added, a pod becoming Ready or not, a pod deleted) the informers have
     * handed to the scheduler so far, for tests on virtual time: that the watch delivered an event
     * is a real answer, not a matter of time passing.
     */
    long podEvents() {
        return podEvents.get();
    }

    /** Whether this replica leads (always, without a lease). For tests. */
    boolean leading() {
        return leading;
    }

    /**
     * Whether the loop works: started, not closed, its scheduler has looked at its work within
     * {@code staleMillis}, and no round or re-plan has been running for that long (ticker).
     */
    public boolean alive(long staleMillis) {
        long now = monotonicMillis();
        return started && running && now - lastLoopMillis < staleMillis && now - busySinceMillis() < staleMillis;
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
        return TimeUnit.NANOSECONDS.toMillis(tickerNanos.getAsLong());
    }

    private static boolean ready(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus() != null
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** On an informer's thread: hands the event to the scheduler. */
    private void changed() {
        try {
            scheduler.execute(this::podEvent);
            podEvents.incrementAndGet();
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** On the scheduler: a pod event; a re-plan follows after the debounce unless a round covers it. */
    private void podEvent() {
        if (!running) {
            return;
        }
        if (eventMillis == NO_EVENT) {
            eventMillis = monotonicMillis();
        }
        dirty = true;
        scheduleReplan();
    }

    private void scheduleReplan() {
        if (leading && dirty && replanDue == null && inFlight == null) {
            // Let a burst of pod events settle into one re-plan.
            replanDue = scheduler.schedule(this::replanDue, DEBOUNCE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    private void scheduleRound(long atMillis) {
        if (roundDue != null) {
            roundDue.cancel(false);
        }
        roundDue = scheduler.schedule(this::roundDue, Math.max(0, atMillis - monotonicMillis()), TimeUnit.MILLISECONDS);
    }

    /** On the scheduler, when a round is due. */
    private void roundDue() {
        roundDue = null;
        if (!running || !leading) {
            return;
        }
        if (inFlight != null) {
            roundPending = true; // right after the work in flight
            return;
        }
        launch(Work.ROUND);
    }

    /** On the scheduler, at the end of a re-plan's debounce. */
    private void replanDue() {
        replanDue = null;
        if (!running || !leading || !dirty || inFlight != null) {
            return;
        }
        launch(Work.REPLAN);
    }

    /** On the scheduler: starts a round or re-plan on the rounds thread (none is in flight). */
    private void launch(Work work) {
        long now = monotonicMillis();
        long since = eventMillis;
        dirty = false;
        eventMillis = NO_EVENT; // a round covers the events too
        roundPending = false;
        if (replanDue != null) {
            // The work covers the events so far: a later event gets a whole debounce of its own.
            replanDue.cancel(false);
            replanDue = null;
        }
        if (work == Work.ROUND) {
            watchPods();
            scheduleRound(now + periodMillis());
        }
        boolean takeOver = tookOver;
        tookOver = false;
        roundTerm = term;
        holderConfirmed = false;
        inFlight = work;
        inFlightSinceMillis = now;
        Instant metricsAt = Instant.ofEpochMilli(epochMillis.getAsLong());
        try {
            roundThread.execute(() -> {
                try {
                    run(work, takeOver, metricsAt, since);
                } finally {
                    try {
                        scheduler.execute(this::finished);
                    } catch (RejectedExecutionException e) {
                        inFlight = null; // closing
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            inFlight = null; // closing
        }
    }

    /** On the rounds thread. */
    private void run(Work work, boolean takeOver, Instant metricsAt, long eventMillis) {
        try {
            if (takeOver) {
                controller.takeOver(); // read the state the last leader saved; forget old routes
            }
            if (work == Work.REPLAN) {
                Controller.Round round = controller.replan(options.dryRun());
                if (round != null && leading) {
                    if (eventMillis != NO_EVENT) {
                        lastReplanDelayMillis = monotonicMillis() - eventMillis;
                        metrics.recordReplanDelay(lastReplanDelayMillis / 1000.0);
                    }
                    replans++; // after its delay: a reader that sees the count sees the delay
                    metrics.countReplan();
                    metrics.record(round);
                    readFailure(round);
                    metrics.nodesMissingLocalityLabels(
                            controller.nodesMissingLocalityLabels().size());
                    reporter.accept(round);
                    recordEvents(round);
                }
            } else {
                Controller.Round round = controller.round(metricsAt, options.dryRun());
                rounds++;
                metrics.record(round);
                readFailure(round);
                metrics.nodesMissingLocalityLabels(
                        controller.nodesMissingLocalityLabels().size());
                reporter.accept(round);
                recordEvents(round);
            }
        } catch (RuntimeException e) {
            // A bug or an unexpected client error must not stop the controller: say it, go on.
            lastReadFailure = ("unexpected: " + e).replaceAll("\\s+", " ").strip();
            reporter.accept(new Controller.Round(
                    false,
                    Controller.FailureReason.KUBERNETES_READ,
                    "unexpected: " + e,
                    null,
                    null,
                    List.of(),
                    List.of(),
                    List.of(),
                    List.of(),
                    0));
        }
    }

    /** On the rounds thread: remembers whether {@code round} could read the cluster (for {@link #notReady}). */
    private void readFailure(Controller.Round round) {
        lastReadFailure = round.failure() == Controller.FailureReason.KUBERNETES_READ
                ? String.valueOf(round.message()).replaceAll("\\s+", " ").strip()
                : null;
    }

    /**
     * On the rounds thread: hands the round to the events' own thread, unless this is a dry run. Reading the
     * round (its rules' weights) and sending its events happen there, one round after the other, so a round
     * ends as soon as it has written its rules.
     */
    private void recordEvents(Controller.Round round) {
        if (!options.dryRun() && client != null) {
            RoundEvents recorder = events;
            eventSender.execute(() -> recorder.after(round));
        }
    }

    /** The pod the rounds' failure events are about, as the downward API's {@code POD_NAME} would name it; before {@link #start()}. */
    void eventsAbout(String podNamespace, String podName) {
        this.events = new RoundEvents(
                client,
                options.identity(),
                podNamespace,
                podName,
                epochMillis,
                message -> log.accept(message),
                Runnable::run); // already on the events' own thread: recordEvents
    }

    /** On the scheduler: the work in flight ended; what waited for it runs now. */
    private void finished() {
        inFlight = null;
        if (!running || !leading) {
            return;
        }
        if (roundPending) {
            launch(Work.ROUND);
        } else {
            scheduleReplan();
        }
    }

    /** On the scheduler: the elector acquired the Lease. */
    private void startLeading() {
        term++;
        lastReadFailure = null; // of another term: the round that starts now tells
        leading = true;
        tookOver = true;
        renewalRefused = false;
        metrics.leading(true);
        scheduleRound(monotonicMillis());
    }

    /** On the scheduler (or closing): the elector says this replica no longer leads. */
    private void stopLeading(String why) {
        leading = false;
        guard.lost();
        metrics.leading(false);
        if (roundDue != null) {
            roundDue.cancel(false);
            roundDue = null;
        }
        if (running) {
            log.accept(
                    "Lease " + options.lease() + ": this replica (" + options.identity() + ") stops leading: " + why);
        }
    }

    private void newLeader(String identity) {
        if (identity != null && !identity.equals(leader)) {
            leader = identity;
            log.accept("Lease " + options.lease() + ": "
                    + (identity.equals(options.identity())
                            ? "this replica (" + identity + ") leads"
                            : identity + " leads; this replica (" + options.identity() + ") stands by"));
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
                log.accept("not writing: Lease " + options.lease() + " names "
                        + (holder == null ? "no holder (or" + " cannot be read)" : holder) + ", not this replica ("
                        + options.identity() + ")");
                return false;
            }
            holderConfirmed = true;
            return leaseProvable(); // the read itself may have taken long
        }
        return true;
    }

    private boolean leaseProvable() {
        long now = monotonicMillis();
        if (guard.holds(now)) {
            return true;
        }
        long since = guard.sinceRenewalMillis(now);
        log.accept("not writing: "
                + (since < 0
                        ? "this replica does not hold Lease " + options.lease()
                        : String.format(
                                Locale.ROOT,
                                "Lease %s was last renewed %.1f s ago, the renew deadline is %.1f s"
                                        + " (renewals fail or hang)",
                                options.lease(),
                                since / 1000.0,
                                guard.renewDeadlineMillis() / 1000.0)));
        return false;
    }

    /** The Lease's holder now, or {@code null} when it has none or cannot be read. */
    private String holder() {
        String[] lease = options.lease().split("/", 2);
        try {
            Lease current = client.resources(Lease.class)
                    .inNamespace(lease[0])
                    .withName(lease[1])
                    .get();
            return current == null || current.getSpec() == null
                    ? null
                    : current.getSpec().getHolderIdentity();
        } catch (KubernetesClientException e) {
            return null;
        }
    }

    /**
     * Stops the schedule, the informers, the rounds thread, and leadership (releasing the lease; a
     * release the API server does not answer is given up after the renew deadline). A round in
     * flight is interrupted and waited for up to 5 s.
     */
    @Override
    public void close() {
        running = false;
        for (ScheduledFuture<?> task : new ScheduledFuture<?>[] {housekeeping, roundDue, replanDue}) {
            if (task != null) {
                task.cancel(false);
            }
        }
        roundThread.shutdownNow();
        try {
            roundThread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        watches.values().forEach(PodWatch::close);
        LeaseElector current = elector;
        if (current != null) {
            current.stop(options.renewDeadline());
        }
        leading = false;
        guard.lost();
        leaseThreads.shutdownNow();
        // The last round's events, if the API server takes them soon; a stop does not wait longer.
        eventSender.shutdown();
        try {
            if (!eventSender.awaitTermination(2, TimeUnit.SECONDS)) {
                eventSender.shutdownNow();
            }
        } catch (InterruptedException e) {
            eventSender.shutdownNow();
            Thread.currentThread().interrupt();
        }
        if (ownScheduler) {
            scheduler.shutdownNow();
        }
    }
}
