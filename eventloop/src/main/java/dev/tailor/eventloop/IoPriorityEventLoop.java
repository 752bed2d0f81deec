package dev.tailor.eventloop;

import dev.tailor.common.Checks;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.ManualIoEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The I/O-priority event loop (docs/design.md#io-priority-event-loop): a Netty {@link ManualIoEventLoop}, driven by one
 * thread, that runs I/O and I/O-related tasks first and <em>unrelated</em> tasks (statistics, monitoring,
 * maintenance, health checks) from a second queue, within an allowance earned by the I/O just done
 * ({@link PriorityPolicy}). In {@link LoopMode#FIFO} mode the same class is the baseline: one queue, as a plain Netty
 * loop.
 *
 * <p>It is an {@link io.netty.channel.EventLoop} and an {@link io.netty.channel.EventLoopGroup} of one: register
 * channels of its transport on it ({@code new ServerBootstrap().group(loop).channel(NioServerSocketChannel.class)}),
 * and everything Netty runs for them ({@link #execute}, {@link #schedule}, channel callbacks) is I/O-related.
 * Background work goes through {@link #executeUnrelated}, {@link #scheduleUnrelatedAtFixedRate} and
 * {@link #scheduleHealthCheck}.
 *
 * <p>One iteration in priority mode:
 * <ol>
 *   <li>poll the receive side and dispatch what is ready; the poll blocks only when no work of any kind is pending,
 *       up to the next Netty timer;</li>
 *   <li>run I/O-related tasks (Netty's task queue and due timers), for at most
 *       {@link EventLoopConfig#ioTaskQuantumNanos()};</li>
 *   <li>compute the allowance from the I/O time of steps 1–2 (the poll's active time, not its wait);</li>
 *   <li>run unrelated tasks, health checks first, each in submission (due) order. Before each one: stop if the
 *       allowance is spent; look at I/O (run any I/O-related task that arrived; if none, poll the receive side without
 *       blocking, dispatching what it finds); if that found work, go back to step 1 unless the oldest pending
 *       unrelated task is overdue ({@link PriorityPolicy#maxUnrelatedDelayNanos()}).</li>
 * </ol>
 *
 * <p>Threads. {@link #executeUnrelated}, the scheduling methods, {@link #metrics()} and everything of
 * {@link io.netty.channel.EventLoop} may be called from any thread. {@link #runIteration()} (and the inherited
 * {@code run}/{@code runNow}, which bypass the policy and should not be used) only from the loop's thread: the one
 * {@link #start} created, or the caller of {@link #drivenByCurrentThread}. Unrelated tasks run on the loop thread,
 * never concurrently with I/O; they must not block.
 *
 * <p>Shutdown. {@link #shutdownGracefully} stops the loop as for any Netty loop. Unrelated tasks submitted after it
 * began are rejected with {@link RejectedExecutionException}; those still pending when the loop terminates are not run
 * and are counted as {@link EventLoopMetrics.TaskCounts#discarded()}.
 */
/*
 * Maintainer note.
 *
 * Why a ManualIoEventLoop subclass. Netty 4.2 splits a loop into an IoHandler (the transport: select/epoll and
 * dispatch) and the executor around it. ManualIoEventLoop is that executor with the loop body left to its owner: we
 * call run(wait, -1) to poll I/O only, runNonBlockingTasks(quantum) to run its task queue and due timers, and decide
 * ourselves what comes between. Subclassing (rather than wrapping) makes the loop itself the EventLoop channels see,
 * with Netty's task queue, timers, registration and shutdown unchanged; canBlock() is the one hook ManualIoEventLoop
 * offers, and we use it to forbid a blocking poll while unrelated work is pending.
 *
 * Measuring I/O time. The allowance needs the time spent on I/O, not the time spent waiting for it. A blocking poll
 * mixes both, so the transport's handler is wrapped (MeasuringIoHandler) to ask for its active-time report (NIO
 * reports how long it dispatched selected keys) and to learn whether it was allowed to block. A non-blocking poll is
 * timed with the loop's clock. A blocking poll counts the reported active time, or, for a transport that reports
 * nothing, the whole poll if it dispatched events and nothing if not. Work a look at I/O finds inside the unrelated
 * phase is charged to the next iteration's I/O time and not to the phase's background time.
 *
 * Queues. Unrelated tasks wait in two ConcurrentLinkedQueues (health checks, the rest), stamped with their due time:
 * submission for executeUnrelated, the scheduled instant for periodic tasks. Periodic tasks are Netty timers on this
 * loop that enqueue an instance when they fire (so they wake a blocked poll on time, and early wakeups do not fire
 * them early); an instance is not enqueued while the previous one is still pending (counted as periodicSkipped), so a
 * starved 1 ms statistics task does not pile up thousands of copies. In FIFO mode unrelated tasks go into Netty's one
 * task queue, and periodic ones run straight from their timer, as on a plain loop; the side queue then only serves the
 * age metric.
 *
 * Clock. The policy never reads time; this class reads config.nanoClock() around polls and tasks and passes ns to it.
 * Netty's timers on this loop read the same clock through NanoClockTicker, so tests run everything on virtual time.
 *
 * Counters are written by the loop thread only and read by metrics() from any thread, hence volatile; one writer
 * makes the read-modify-write updates safe.
 *
 * Unrelated busy time (for per-request loop tracing). A request's code reads unrelatedBusyNanos() at two instants and
 * takes the difference: the unrelated work the loop did in between. Readers on other threads (a backend completing a
 * request) must see the total and whether a task is running, and since when, as one value: one volatile long holds
 * either total << 1 (idle) or (taskStart - total) << 1 | 1 (running; the reading is then now - (taskStart - total)).
 * Nanosecond clock readings and totals stay far below 2^62, so the shift loses nothing.
 */
public final class IoPriorityEventLoop extends ManualIoEventLoop {

    private static final System.Logger LOG = System.getLogger(IoPriorityEventLoop.class.getName());
    private static final long NO_HEALTH_CHECK = Long.MIN_VALUE;
    /** {@link EventLoopMetrics.DispatchDelay#BUCKET_BOUNDS_NANOS}, for the loop's lookup. */
    private static final long[] DISPATCH_BOUNDS_NANOS = EventLoopMetrics.DispatchDelay.BUCKET_BOUNDS_NANOS.stream()
            .mapToLong(Long::longValue)
            .toArray();

    private enum Kind {
        UNRELATED,
        HEALTH_CHECK
    }

    private final LoopMode mode;
    private final PriorityPolicy policy;
    private final long ioTaskQuantumNanos;
    private final long fifoTaskQuantumNanos;
    private final LongSupplier nanoClock;
    private final Consumer<IterationTrace> iterationListener;
    private final MeasuringIoHandler.Probe probe;

    // Pending unrelated work in due order; health checks first. Any thread adds; in priority mode only the loop takes.
    private final Queue<UnrelatedTask> healthQueue = new ConcurrentLinkedQueue<>();
    private final Queue<UnrelatedTask> unrelatedQueue = new ConcurrentLinkedQueue<>();
    private final AtomicLong pending = new AtomicLong();
    // Completion of the last health check, or the time the first was scheduled; NO_HEALTH_CHECK before that.
    private final AtomicLong healthReferenceNanos = new AtomicLong(NO_HEALTH_CHECK);

    // Loop-thread state.
    private long carriedIoNanos;
    private long lastPollActiveNanos;
    private long lastSelectReturnNanos;
    private long ownNettyTasks;
    private long iterationLongestUnrelatedNanos;
    private long unrelatedTotalNanos;
    /** The unrelated busy time when the loop last finished a look at the receive side. */
    private long unrelatedAtLastLookNanos;
    /** During a poll: {@link #unrelatedAtLastLookNanos} as it was when the poll began; else -1. */
    private long receiveWindowUnrelatedNanos = -1;

    /** Unrelated busy time, encoded (see the maintainer note): any thread reads, the loop writes. */
    private volatile long unrelatedBusyEncoded;

    // Counters: loop thread writes, any thread reads.
    private volatile long iterations;
    private volatile long ioEvents;
    private volatile long ioTasks;
    private volatile long unrelatedRun;
    private volatile long healthChecksRun;
    private volatile long failures;
    private volatile long periodicSkipped;
    private volatile long discarded;
    private volatile long unrelatedMaxWaitNanos;
    private volatile long healthCheckMaxAgeNanos;
    private volatile long lastAllowanceNanos;
    private volatile long allowanceGrantedNanos;
    private volatile long allowanceUsedNanos;
    private volatile long phases;
    private volatile long cappedPhases;
    private volatile long yieldedToIo;
    private volatile long allowanceSpent;
    private volatile long drained;
    private volatile long receiveChecks;
    private volatile long dispatchCount;
    private volatile long dispatchLastNanos;
    private volatile long dispatchMaxNanos;
    private volatile long dispatchTotalNanos;
    /** The dispatch-delay bounds by bucket ({@link EventLoopMetrics.DispatchDelay#buckets}); loop writes, any reads. */
    private final AtomicLongArray dispatchBuckets = new AtomicLongArray(DISPATCH_BOUNDS_NANOS.length + 1);

    private IoPriorityEventLoop(
            IoEventLoopGroup parent, EventLoopConfig config, Thread owner, MeasuringIoHandler.Probe probe) {
        super(
                parent,
                owner,
                MeasuringIoHandler.factory(config.ioHandlerFactory(), probe),
                new NanoClockTicker(config.nanoClock()));
        this.mode = config.mode();
        this.policy = config.policy();
        this.ioTaskQuantumNanos = config.ioTaskQuantumNanos();
        this.fifoTaskQuantumNanos = config.fifoTaskQuantumNanos();
        this.nanoClock = config.nanoClock();
        this.iterationListener = config.iterationListener();
        this.probe = probe;
        this.lastSelectReturnNanos = nanoClock.getAsLong();
    }

    /**
     * A loop on its own thread (from {@link EventLoopConfig#threadFactory()}), already running. Stop it with
     * {@link #shutdownGracefully}.
     *
     * @throws IllegalArgumentException if {@code config} is null
     */
    public static IoPriorityEventLoop start(EventLoopConfig config) {
        return start(null, config);
    }

    /** {@link #start(EventLoopConfig)} as a member of {@code parent} (its {@link #parent()}), which may be null. */
    static IoPriorityEventLoop start(IoEventLoopGroup parent, EventLoopConfig config) {
        Checks.requireNonNull("config", config, "an EventLoopConfig, e.g. EventLoopConfig.DEFAULTS");
        IoPriorityEventLoop loop = new IoPriorityEventLoop(parent, config, null, new MeasuringIoHandler.Probe());
        Thread thread = config.threadFactory().newThread(loop::runUntilTerminated);
        loop.setOwningThread(thread);
        thread.start();
        return loop;
    }

    /**
     * A loop owned by the calling thread, which drives it by calling {@link #runIteration()} (ManualIoEventLoop
     * style): for callers that own their thread, and for tests on virtual time.
     *
     * @throws IllegalArgumentException if {@code config} is null
     */
    public static IoPriorityEventLoop drivenByCurrentThread(EventLoopConfig config) {
        Checks.requireNonNull("config", config, "an EventLoopConfig, e.g. EventLoopConfig.DEFAULTS");
        return new IoPriorityEventLoop(null, config, Thread.currentThread(), new MeasuringIoHandler.Probe());
    }

    /** The mode chosen at construction. */
    public LoopMode mode() {
        return mode;
    }

    /** The allowance policy (used in priority mode). */
    public PriorityPolicy policy() {
        return policy;
    }

    /**
     * The time this loop has spent running unrelated tasks and health checks since it was created, up to now, in ns of
     * its clock ({@link EventLoopConfig#nanoClock()}), the task running now included up to now. Non-decreasing; the
     * difference of two readings is the unrelated work the loop did in between, which is what a request waiting for the
     * loop in that interval waited behind (per-request loop tracing). Any thread; one volatile read, and a clock
     * reading only while a task runs.
     */
    public long unrelatedBusyNanos() {
        long encoded = unrelatedBusyEncoded;
        return (encoded & 1) == 0 ? encoded >> 1 : now() - (encoded >> 1);
    }

    /**
     * Inside a poll of the receive side (while the transport dispatches what it found, e.g. in a
     * {@code channelRead}): {@link #unrelatedBusyNanos()} as it was when the loop last looked at the receive side
     * before this poll, so that the unrelated work run since, {@code unrelatedBusyNanos() - this}, is an upper bound on
     * what the data being dispatched waited behind (it may have arrived after that work began). Outside a poll (in a
     * task): {@link #unrelatedBusyNanos()}, so that the difference is 0. Loop thread only.
     *
     * @throws IllegalStateException if called from another thread than the loop's
     */
    public long receiveWindowUnrelatedNanos() {
        if (!inEventLoop()) {
            throw new IllegalStateException("receiveWindowUnrelatedNanos() called from "
                    + Thread.currentThread().getName() + " (expected: the loop's own thread)");
        }
        return receiveWindowUnrelatedNanos >= 0 ? receiveWindowUnrelatedNanos : unrelatedTotalNanos;
    }

    /**
     * Submits an unrelated task: it runs on the loop thread, in submission order among unrelated tasks, after the I/O
     * work the policy puts before it (priority mode) or in submission order among all tasks (FIFO mode). Any thread.
     *
     * @throws NullPointerException       if {@code task} is null
     * @throws RejectedExecutionException if the loop is shutting down
     */
    public void executeUnrelated(Runnable task) {
        Objects.requireNonNull(task, "task");
        rejectIfShuttingDown();
        UnrelatedTask entry = new UnrelatedTask(task, Kind.UNRELATED, now(), null);
        pending.incrementAndGet();
        unrelatedQueue.add(entry);
        if (mode == LoopMode.FIFO) {
            try {
                execute(entry);
            } catch (RejectedExecutionException e) {
                if (unrelatedQueue.remove(entry)) {
                    pending.decrementAndGet();
                }
                throw e;
            }
        } else if (!inEventLoop()) {
            wakeup();
        }
    }

    /**
     * Runs an unrelated task periodically: first due {@code initialDelay} from now, then every {@code period} after
     * that first due time (fixed rate, as {@link java.util.concurrent.ScheduledExecutorService#scheduleAtFixedRate}).
     * A firing whose previous instance has not run yet is skipped ({@link EventLoopMetrics.TaskCounts#periodicSkipped})
     * rather than queued behind it. Cancel the returned future to stop it; an instance already pending then does not
     * run. Any thread.
     *
     * @throws NullPointerException       if {@code task} or {@code unit} is null
     * @throws IllegalArgumentException   if {@code initialDelay < 0} or {@code period <= 0}
     * @throws RejectedExecutionException if the loop is shutting down
     */
    public ScheduledFuture<?> scheduleUnrelatedAtFixedRate(
            Runnable task, long initialDelay, long period, TimeUnit unit) {
        return schedulePeriodic(task, Kind.UNRELATED, initialDelay, period, unit);
    }

    /**
     * The health-check hook: runs {@code check} every {@code period} (first after one period) as an unrelated task
     * that goes before other unrelated tasks. Its completions feed
     * {@link EventLoopMetrics#lastHealthCheckAgeNanos()}, which from now on is reported. A check that throws counts as
     * run (and as a failure). Cancel the returned future to stop it. Any thread.
     *
     * @throws NullPointerException       if {@code check} or {@code unit} is null
     * @throws IllegalArgumentException   if {@code period <= 0}
     * @throws RejectedExecutionException if the loop is shutting down
     */
    public ScheduledFuture<?> scheduleHealthCheck(Runnable check, long period, TimeUnit unit) {
        return schedulePeriodic(check, Kind.HEALTH_CHECK, period, period, unit);
    }

    /**
     * One iteration of the loop (see the class description), blocking in the poll only when no work is pending. Once
     * shutdown has begun, it advances Netty's shutdown instead. Loop thread only.
     *
     * @return I/O events dispatched plus tasks run
     * @throws IllegalStateException if called from another thread than the loop's
     */
    public int runIteration() {
        if (!inEventLoop()) {
            throw new IllegalStateException("runIteration() called from "
                    + Thread.currentThread().getName() + " (expected: the loop's own thread)");
        }
        if (isShuttingDown()) {
            int n = runNow();
            if (isTerminated()) {
                discardPending();
            }
            return n;
        }
        iterationLongestUnrelatedNanos = 0;
        int n = mode == LoopMode.PRIORITY ? priorityIteration() : fifoIteration();
        iterations++;
        return n;
    }

    /** A snapshot of the counters and gauges, from any thread. */
    public EventLoopMetrics metrics() {
        long now = now();
        long healthReference = healthReferenceNanos.get();
        return new EventLoopMetrics(
                mode,
                iterations,
                new EventLoopMetrics.TaskCounts(
                        ioEvents, ioTasks, unrelatedRun, healthChecksRun, failures, periodicSkipped, discarded),
                pending.get(),
                Math.max(0, oldestPendingAgeNanos(now)),
                unrelatedMaxWaitNanos,
                healthReference == NO_HEALTH_CHECK ? -1 : Math.max(0, now - healthReference),
                healthCheckMaxAgeNanos,
                new EventLoopMetrics.Allowance(
                        lastAllowanceNanos,
                        allowanceGrantedNanos,
                        allowanceUsedNanos,
                        phases,
                        cappedPhases,
                        yieldedToIo,
                        allowanceSpent,
                        drained),
                new EventLoopMetrics.DispatchDelay(
                        receiveChecks,
                        dispatchCount,
                        dispatchLastNanos,
                        dispatchMaxNanos,
                        dispatchTotalNanos,
                        dispatchBuckets()));
    }

    /**
     * The bucket of a dispatch-delay bound: the first whose upper bound it does not exceed (Prometheus's {@code le}),
     * or the last, above the highest bound.
     */
    static int dispatchBucket(long boundNanos) {
        int bucket = 0;
        while (bucket < DISPATCH_BOUNDS_NANOS.length && boundNanos > DISPATCH_BOUNDS_NANOS[bucket]) {
            bucket++;
        }
        return bucket;
    }

    private List<Long> dispatchBuckets() {
        List<Long> counts = new ArrayList<>(dispatchBuckets.length());
        for (int i = 0; i < dispatchBuckets.length(); i++) {
            counts.add(dispatchBuckets.getAcquire(i));
        }
        return counts;
    }

    /** Priority mode forbids a blocking poll while unrelated work is pending (ManualIoEventLoop's hook). */
    @Override
    protected boolean canBlock() {
        return mode == LoopMode.FIFO || pending.get() == 0;
    }

    private int priorityIteration() {
        long start = now();
        int events = pollReceiveSide(true);
        long afterPoll = now();
        int tasks = runIoTasks();
        long t = now();
        long ioActiveNanos = carriedIoNanos + lastPollActiveNanos + (t - afterPoll);
        carriedIoNanos = 0;
        long allowance = policy.allowanceNanos(ioActiveNanos);
        boolean capped = policy.allowanceCapped(ioActiveNanos);

        // The unrelated phase.
        long phaseStart = t;
        long excludedNanos = 0;
        int ran = 0;
        boolean hadWork = pending.get() > 0;
        PriorityPolicy.Step step;
        for (; ; ) {
            step = policy.next(t - phaseStart - excludedNanos, allowance, oldestPendingAgeNanos(t), false);
            if (step != PriorityPolicy.Step.RUN_UNRELATED) {
                break;
            }
            // Look at I/O before the task: I/O-related tasks first, and once there are none, the receive side.
            long lookStart = t;
            int found = runIoTasks();
            tasks += found;
            if (found == 0) {
                found = pollReceiveSide(false);
                events += found;
            }
            t = now();
            if (found > 0) {
                excludedNanos += t - lookStart;
                carriedIoNanos += t - lookStart;
            }
            step = policy.next(t - phaseStart - excludedNanos, allowance, oldestPendingAgeNanos(t), found > 0);
            if (step != PriorityPolicy.Step.RUN_UNRELATED) {
                break;
            }
            UnrelatedTask task = pollPending();
            if (task == null) {
                step = PriorityPolicy.Step.DRAINED;
                break;
            }
            task.runPriority();
            ran++;
            t = now();
        }
        long phaseNanos = t - phaseStart - excludedNanos;
        if (hadWork) {
            phases++;
            lastAllowanceNanos = allowance;
            allowanceGrantedNanos += allowance;
            allowanceUsedNanos += phaseNanos;
            if (capped) {
                cappedPhases++;
            }
            switch (step) {
                case YIELD_TO_IO -> yieldedToIo++;
                case ALLOWANCE_SPENT -> allowanceSpent++;
                default -> drained++;
            }
        }
        trace(new IterationTrace(
                mode,
                start,
                events,
                tasks,
                ioActiveNanos,
                allowance,
                capped,
                ran,
                phaseNanos,
                iterationLongestUnrelatedNanos,
                step));
        return events + tasks + ran;
    }

    private int fifoIteration() {
        long start = now();
        int events = pollReceiveSide(true);
        long afterPoll = now();
        long ownBefore = ownNettyTasks;
        long unrelatedBefore = unrelatedRun + healthChecksRun;
        int ran = runNonBlockingTasks(fifoTaskQuantumNanos);
        long end = now();
        int tasks = ran - (int) (ownNettyTasks - ownBefore);
        ioTasks += tasks;
        int unrelated = (int) (unrelatedRun + healthChecksRun - unrelatedBefore);
        trace(new IterationTrace(
                mode,
                start,
                events,
                tasks,
                lastPollActiveNanos,
                -1,
                false,
                unrelated,
                end - afterPoll,
                iterationLongestUnrelatedNanos,
                null));
        return events + ran;
    }

    /** Runs Netty's task queue and due timers, counting only the I/O-related ones. */
    private int runIoTasks() {
        long ownBefore = ownNettyTasks;
        int ran = runNonBlockingTasks(ioTaskQuantumNanos);
        int tasks = ran - (int) (ownNettyTasks - ownBefore);
        ioTasks += tasks;
        return tasks;
    }

    /**
     * Polls the receive side and dispatches what is ready; blocks only if allowed and Netty finds nothing pending.
     * Records the poll's active time and the dispatch-delay bound (its largest, sum and bucket).
     */
    private int pollReceiveSide(boolean mayBlock) {
        probe.reset();
        long start = now();
        receiveWindowUnrelatedNanos = unrelatedAtLastLookNanos;
        int events;
        try {
            events = run(mayBlock ? 0 : -1, -1);
        } finally {
            receiveWindowUnrelatedNanos = -1;
            unrelatedAtLastLookNanos = unrelatedTotalNanos;
        }
        long end = now();
        long wallNanos = end - start;
        long activeNanos;
        if (!probe.couldBlock) {
            activeNanos = wallNanos;
        } else if (probe.reportedActiveNanos >= 0) {
            activeNanos = Math.min(probe.reportedActiveNanos, wallNanos);
        } else {
            activeNanos = events > 0 ? wallNanos : 0;
        }
        lastPollActiveNanos = activeNanos;
        receiveChecks++;
        if (events > 0) {
            // Readiness after the previous poll's select returned is found by this one; dispatch ends at `end`.
            long bound = Math.max(0, start - lastSelectReturnNanos) + activeNanos;
            ioEvents += events;
            dispatchCount++;
            dispatchLastNanos = bound;
            dispatchTotalNanos += bound;
            if (bound > dispatchMaxNanos) {
                dispatchMaxNanos = bound;
            }
            int bucket = dispatchBucket(bound);
            // One writer: a plain read and an ordered write suffice.
            dispatchBuckets.setRelease(bucket, dispatchBuckets.getPlain(bucket) + 1);
        }
        lastSelectReturnNanos = end - activeNanos;
        return events;
    }

    private ScheduledFuture<?> schedulePeriodic(
            Runnable task, Kind kind, long initialDelay, long period, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        if (period <= 0) {
            throw new IllegalArgumentException("period : " + period + " (expected: > 0)");
        }
        if (initialDelay < 0) {
            throw new IllegalArgumentException("initialDelay : " + initialDelay + " (expected: >= 0)");
        }
        rejectIfShuttingDown();
        if (kind == Kind.HEALTH_CHECK) {
            healthReferenceNanos.compareAndSet(NO_HEALTH_CHECK, now());
        }
        Periodic periodic = new Periodic(task, kind, unit.toNanos(period), now() + unit.toNanos(initialDelay));
        ScheduledFuture<?> future = scheduleAtFixedRate(periodic, initialDelay, period, unit);
        periodic.future = future;
        return future;
    }

    /** A periodic task's timer fired (loop thread, as a Netty scheduled task). */
    private void firePeriodic(Periodic periodic) {
        assert inEventLoop();
        ownNettyTasks++;
        long dueNanos = periodic.nextDueNanos;
        periodic.nextDueNanos += periodic.periodNanos;
        if (mode == LoopMode.FIFO) {
            runBody(periodic.body, periodic.kind, dueNanos);
            return;
        }
        if (periodic.instancePending) {
            periodicSkipped++;
            return;
        }
        periodic.instancePending = true;
        pending.incrementAndGet();
        (periodic.kind == Kind.HEALTH_CHECK ? healthQueue : unrelatedQueue)
                .add(new UnrelatedTask(periodic.body, periodic.kind, dueNanos, periodic));
    }

    /** Runs one unrelated task or health check and records it (loop thread). */
    private void runBody(Runnable body, Kind kind, long dueNanos) {
        assert inEventLoop();
        long start = now();
        if (start - dueNanos > unrelatedMaxWaitNanos) {
            unrelatedMaxWaitNanos = start - dueNanos;
        }
        unrelatedBusyEncoded = ((start - unrelatedTotalNanos) << 1) | 1;
        try {
            body.run();
        } catch (Throwable t) {
            failures++;
            LOG.log(System.Logger.Level.WARNING, "unrelated task " + body + " threw; the loop goes on", t);
        }
        long end = now();
        unrelatedTotalNanos += Math.max(0, end - start);
        unrelatedBusyEncoded = unrelatedTotalNanos << 1;
        iterationLongestUnrelatedNanos = Math.max(iterationLongestUnrelatedNanos, end - start);
        if (kind == Kind.HEALTH_CHECK) {
            healthChecksRun++;
            long age = end - healthReferenceNanos.get();
            if (age > healthCheckMaxAgeNanos) {
                healthCheckMaxAgeNanos = age;
            }
            healthReferenceNanos.set(end);
        } else {
            unrelatedRun++;
        }
    }

    private UnrelatedTask pollPending() {
        UnrelatedTask task = healthQueue.poll();
        if (task == null) {
            task = unrelatedQueue.poll();
        }
        if (task != null) {
            pending.decrementAndGet();
        }
        return task;
    }

    /** Now minus the earliest due time among the heads of the queues; -1 when both are empty. */
    private long oldestPendingAgeNanos(long now) {
        long age = -1;
        UnrelatedTask health = healthQueue.peek();
        if (health != null) {
            age = Math.max(0, now - health.dueNanos);
        }
        UnrelatedTask other = unrelatedQueue.peek();
        if (other != null) {
            age = Math.max(age, Math.max(0, now - other.dueNanos));
        }
        return age;
    }

    private void discardPending() {
        long n = 0;
        while (pollPending() != null) {
            n++;
        }
        if (n > 0) {
            discarded += n;
        }
    }

    private void rejectIfShuttingDown() {
        if (isShuttingDown()) {
            throw new RejectedExecutionException("event loop is shutting down");
        }
    }

    private void trace(IterationTrace trace) {
        if (iterationListener == null) {
            return;
        }
        try {
            iterationListener.accept(trace);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "iteration listener threw; the loop goes on", e);
        }
    }

    private void runUntilTerminated() {
        try {
            while (!isTerminated()) {
                runIteration();
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "event loop thread stopped by an unexpected error", t);
            throw t;
        } finally {
            discardPending();
        }
    }

    private long now() {
        return nanoClock.getAsLong();
    }

    /** A periodic task's timer body; its fields other than {@code future} are used on the loop thread only. */
    private final class Periodic implements Runnable {
        final Runnable body;
        final Kind kind;
        final long periodNanos;
        long nextDueNanos;
        boolean instancePending;
        volatile ScheduledFuture<?> future;

        Periodic(Runnable body, Kind kind, long periodNanos, long firstDueNanos) {
            this.body = body;
            this.kind = kind;
            this.periodNanos = periodNanos;
            this.nextDueNanos = firstDueNanos;
        }

        @Override
        public void run() {
            firePeriodic(this);
        }

        @Override
        public String toString() {
            return "periodic " + kind + " " + body;
        }
    }

    /** One pending unrelated task or health check, stamped with its due time. */
    private final class UnrelatedTask implements Runnable {
        final Runnable body;
        final Kind kind;
        final long dueNanos;
        final Periodic periodic;

        UnrelatedTask(Runnable body, Kind kind, long dueNanos, Periodic periodic) {
            this.body = body;
            this.kind = kind;
            this.dueNanos = dueNanos;
            this.periodic = periodic;
        }

        /** Priority mode: taken from its queue by the loop. */
        void runPriority() {
            if (periodic != null) {
                periodic.instancePending = false;
                ScheduledFuture<?> future = periodic.future;
                if (future != null && future.isCancelled()) {
                    return;
                }
            }
            runBody(body, kind, dueNanos);
        }

        /** FIFO mode: run from Netty's task queue. */
        @Override
        public void run() {
            ownNettyTasks++;
            if (unrelatedQueue.remove(this)) {
                pending.decrementAndGet();
            }
            runBody(body, kind, dueNanos);
        }

        @Override
        public String toString() {
            return "unrelated " + kind + " " + body;
        }
    }
}
