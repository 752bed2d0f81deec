package dev.tailor.heart.controller;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Runs {@link Controller} rounds continuously: a round every {@code roundSeconds}, a re-plan from
 * the last metrics (after a 200 ms debounce) when a pod leaves Ready, is deleted or becomes Ready
 * (informers on the application's pods), and — with a lease — only while this replica leads, so
 * two replicas never both write.
 *
 * <p>Threads: one loop thread runs every round and re-plan (they never overlap); the informers and
 * the leader elector call back on their own threads and only set flags.
 */
public final class ControllerLoop implements AutoCloseable {

    /** Events closer than this are handled by one re-plan. */
    static final long DEBOUNCE_MILLIS = 200;

    /**
     * @param lease          {@code namespace/name} of the Lease for leader election, or {@code null}
     *                       to always lead (one replica)
     * @param identity       this replica's name in the Lease (e.g. the pod name)
     * @param leaseDuration  how long a lease holds without renewal (e.g. 15 s)
     */
    public record Options(boolean dryRun, String lease, String identity, Duration leaseDuration) {
    }

    private final Controller controller;
    private final ControllerMetrics metrics;
    private final KubernetesClient client;
    private final ControllerConfig config;
    private final Options options;
    private final Consumer<Controller.Round> reporter;
    private final LongSupplier epochMillis;
    private final Object monitor = new Object();
    private final Map<String, SharedIndexInformer<Pod>> informers = new LinkedHashMap<>();
    private ResourceEventHandler<Pod> podHandler;
    private volatile Consumer<String> log = message -> { };
    private volatile boolean tookOver;
    private volatile String leader;
    private long nextLeaseCheckMillis;
    private String lastLeaseProblem;
    private final ExecutorService electorThreads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tailor-heart-leader-election");
        t.setDaemon(true);
        return t;
    });
    private Thread thread;
    private CompletableFuture<?> election;
    private volatile boolean leading;
    private volatile boolean running = true;
    private volatile boolean dirty;
    private volatile long lastLoopMillis;
    private volatile long rounds;
    private volatile long replans;
    /** When the first pod event not yet re-planned arrived (epoch ms), or -1. */
    private volatile long eventMillis = -1;
    private volatile long lastReplanDelayMillis = -1;

    public ControllerLoop(Controller controller, ControllerMetrics metrics, KubernetesClient client,
            ControllerConfig config, Options options, Consumer<Controller.Round> reporter, LongSupplier epochMillis) {
        this.controller = controller;
        this.metrics = metrics;
        this.client = client;
        this.config = config;
        this.options = options;
        this.reporter = reporter;
        this.epochMillis = epochMillis;
        this.lastLoopMillis = epochMillis.getAsLong();
        controller.writeGuard(() -> leading && running);
    }

    /** Where the loop says what happens outside rounds (leadership, watch failures); default: nowhere. */
    public void onMessage(Consumer<String> messages) {
        this.log = messages == null ? message -> { } : messages;
    }

    /**
     * Starts leader election, the informers and the loop thread. An API server that cannot be
     * watched does not stop the loop: it is said, and the watch is retried before every round.
     */
    public void start() {
        if (options.lease() == null) {
            leading = true;
        } else {
            String[] lease = options.lease().split("/", 2);
            Duration duration = options.leaseDuration();
            election = new LeaderElector(client, new LeaderElectionConfigBuilder()
                    .withName("tailor-heart")
                    .withLock(new LeaseLock(lease[0], lease[1], options.identity()))
                    .withLeaseDuration(duration)
                    .withRenewDeadline(duration.multipliedBy(2).dividedBy(3))
                    .withRetryPeriod(duration.dividedBy(5))
                    .withReleaseOnCancel()
                    .withLeaderCallbacks(new LeaderCallbacks(this::startLeading, this::stopLeading, this::newLeader))
                    .build(), electorThreads).start();
        }
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
        watchPods(true);
        thread = new Thread(this::loop, "tailor-heart-rounds");
        thread.setDaemon(true);
        thread.start();
    }

    /** Starts the pod informers not running yet; says so when one cannot start (or starts again). */
    private void watchPods(boolean first) {
        for (String namespace : config.kubernetes().namespaces()) {
            if (informers.containsKey(namespace)) {
                continue;
            }
            try {
                informers.put(namespace, client.pods().inNamespace(namespace)
                        .withLabel(config.kubernetes().componentLabel()).inform(podHandler));
                if (!first) {
                    log.accept("watching pods in namespace " + namespace + " again: re-plans on pod events are on");
                }
            } catch (RuntimeException e) {
                if (first) {
                    log.accept("cannot watch pods in namespace " + namespace + " (" + e.getMessage() + "): re-plans on"
                            + " pod events are off until it can; retried before every round");
                }
            }
        }
    }

    /** Whether this replica waits for the lease (started, alive, not leading). */
    public boolean standingBy() {
        return options.lease() != null && thread != null && thread.isAlive() && !leading;
    }

    /** Whether this replica leads (always, without a lease). */
    public boolean leading() {
        return leading;
    }

    /** Whether the loop thread is alive and has looked at its work recently. */
    public boolean alive(long staleMillis) {
        return thread != null && thread.isAlive() && epochMillis.getAsLong() - lastLoopMillis < staleMillis;
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

    private static boolean ready(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null && pod.getStatus() != null
                && pod.getStatus().getConditions() != null && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private void changed() {
        synchronized (monitor) {
            if (eventMillis < 0) {
                eventMillis = epochMillis.getAsLong();
            }
            dirty = true;
            monitor.notifyAll();
        }
    }

    private void startLeading() {
        synchronized (monitor) {
            leading = true;
            tookOver = true;
            monitor.notifyAll();
        }
    }

    private void newLeader(String identity) {
        if (identity != null && !identity.equals(leader)) {
            leader = identity;
            log.accept("Lease " + options.lease() + ": " + (identity.equals(options.identity()) ? "this replica ("
                    + identity + ") leads" : identity + " leads; this replica (" + options.identity() + ") stands by"));
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

    private void stopLeading() {
        leading = false;
    }

    private void loop() {
        long periodMillis = Math.round(config.roundSeconds() * 1000);
        long nextRound = 0;
        while (running) {
            lastLoopMillis = epochMillis.getAsLong();
            try {
                checkLease(lastLoopMillis);
                boolean doRound;
                boolean doReplan;
                synchronized (monitor) {
                    long now = epochMillis.getAsLong();
                    long wait = !leading ? periodMillis : Math.max(0, nextRound - now);
                    if (wait > 0 && !(dirty && leading)) {
                        monitor.wait(Math.min(wait, 1_000));
                    }
                    now = epochMillis.getAsLong();
                    if (tookOver) {
                        tookOver = false;
                        controller.takeOver();   // read the state the last leader saved; forget old routes
                        nextRound = 0;
                    }
                    doRound = leading && now >= nextRound;
                    doReplan = leading && !doRound && dirty;
                    if (doRound) {
                        dirty = false;
                        eventMillis = -1;   // a full round covers the events too
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
                        eventMillis = -1;
                    }
                    Controller.Round round = controller.replan(options.dryRun());
                    if (round != null && leading) {
                        replans++;
                        metrics.countReplan();
                        if (since >= 0) {
                            lastReplanDelayMillis = epochMillis.getAsLong() - since;
                            metrics.recordReplanDelay(lastReplanDelayMillis / 1000.0);
                        }
                        metrics.record(round);
                        metrics.nodesMissingLocalityLabels(controller.nodesMissingLocalityLabels().size());
                        reporter.accept(round);
                    }
                } else if (doRound) {
                    watchPods(false);
                    long now = epochMillis.getAsLong();
                    nextRound = now + periodMillis;
                    Controller.Round round = controller.round(Instant.ofEpochMilli(now), options.dryRun());
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

    /** Stops the loop, the informers, and leadership (releasing the lease). */
    @Override
    public void close() {
        running = false;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        informers.values().forEach(SharedIndexInformer::close);
        if (election != null) {
            election.cancel(true);
        }
        leading = false;
        electorThreads.shutdownNow();
    }
}
