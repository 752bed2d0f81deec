package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.testkit.VirtualClock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The real loop on virtual time: {@link ScriptedIo} in place of NIO, a {@link VirtualClock} for the loop and its
 * Netty timers, and the test thread as the loop thread. Nothing sleeps; each test is deterministic (seeded).
 */
class IoPriorityEventLoopVirtualTimeTest {

    private static final long START = 1_000_000_000L;
    private static final long US = 1_000L;
    private static final long MS = 1_000_000L;

    private final VirtualClock clock = new VirtualClock(START);
    private final ScriptedIo io = new ScriptedIo(clock);
    private final List<IterationTrace> traces = new ArrayList<>();
    private IoPriorityEventLoop loop;

    private IoPriorityEventLoop newLoop(LoopMode mode, PriorityPolicy policy) {
        loop = IoPriorityEventLoop.drivenByCurrentThread(EventLoopConfig.DEFAULTS.toBuilder()
                .mode(mode)
                .policy(policy)
                .ioHandlerFactory(io)
                .nanoClock(clock)
                .iterationListener(traces::add)
                .build());
        return loop;
    }

    private void runUntil(long atNanos) {
        io.horizon(atNanos);
        while (clock.nanos() < atNanos) {
            loop.runIteration();
        }
    }

    @AfterEach
    void shutDown() {
        if (loop != null) {
            loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            while (!loop.isTerminated()) {
                clock.advance(1); // Netty's shutdown compares time against its timeout: let virtual time pass
                loop.runIteration();
            }
        }
    }

    /**
     * A background flood: a Netty timer every 100 µs tops the unrelated tasks of {@code costNanos} back up to
     * {@code depth} pending, as monitoring and maintenance sources would (they do not resubmit themselves: in FIFO
     * mode a task that resubmits itself keeps Netty's task loop busy for its whole 1 s quantum).
     */
    private void flood(int depth, long costNanos) {
        int[] pending = {0};
        loop.scheduleAtFixedRate(
                () -> {
                    while (pending[0] < depth) {
                        pending[0]++;
                        loop.executeUnrelated(() -> {
                            pending[0]--;
                            clock.advance(costNanos);
                        });
                    }
                },
                0,
                100,
                TimeUnit.MICROSECONDS);
    }

    /** {@code n} unrelated tasks of {@code costNanos}, submitted now. */
    private void batch(int n, long costNanos) {
        for (int i = 0; i < n; i++) {
            loop.executeUnrelated(() -> clock.advance(costNanos));
        }
    }

    /** Poisson I/O arrivals from {@code from} to {@code to}; each handled event queues a 1 µs I/O-related task. */
    private void poissonIo(long from, long to, long meanGapNanos, long costNanos, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long t = from;
        while (true) {
            t += (long) (-Math.log(1 - random.nextDouble()) * meanGapNanos);
            if (t >= to) {
                break;
            }
            io.arrive(t, costNanos, () -> loop.execute(() -> clock.advance(US)));
        }
    }

    /** An I/O event every 2 µs costing 2 µs until {@code to}: the receive side always has work. */
    private int continuousIo(long to) {
        int n = 0;
        for (long t = START; t < to; t += 2 * US) {
            io.arrive(t, 2 * US, null);
            n++;
        }
        return n;
    }

    private long maxNoticeDelay() {
        return io.handled().stream()
                .mapToLong(ScriptedIo.Handled::noticeDelayNanos)
                .max()
                .orElseThrow();
    }

    private long max(java.util.function.ToLongFunction<IterationTrace> f) {
        return traces.stream().mapToLong(f).max().orElseThrow();
    }

    @Test
    void priority_backgroundFlood_ioNoticedWithinAllowancePlusOneTask() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        flood(100, 7 * US);
        poissonIo(START, START + 200 * MS, 20 * US, 2 * US, 7);
        runUntil(START + 200 * MS);

        assertThat(io.handled()).hasSizeGreaterThan(9_000);
        // Per phase: background time never exceeds the allowance plus the one task that was started within it.
        for (IterationTrace t : traces) {
            assertThat(t.unrelatedPhaseNanos())
                    .as("%s", t)
                    .isLessThanOrEqualTo(t.allowanceNanos() + t.longestUnrelatedNanos());
        }
        // Per event: it waits at most for the rest of one I/O phase, then one unrelated phase (allowance + one task),
        // and the I/O the looks inside that phase dispatched.
        long bound = max(IterationTrace::allowanceNanos) + 7 * US + 2 * max(IterationTrace::ioActiveNanos);
        assertThat(maxNoticeDelay()).isLessThanOrEqualTo(bound);
        // The loop's dispatch-delay metric is an upper bound on what the events really saw (readable → handled).
        EventLoopMetrics m = loop.metrics();
        long trueMax = io.handled().stream()
                .mapToLong(ScriptedIo.Handled::dispatchDelayNanos)
                .max()
                .orElseThrow();
        assertThat(m.dispatchDelay().maxNanos()).isBetween(trueMax, trueMax + bound);
        // Background work ran, within the allowance plus at most one task per phase.
        assertThat(m.tasks().unrelated()).isGreaterThan(1_000);
        assertThat(m.allowance().usedNanos())
                .isLessThanOrEqualTo(
                        m.allowance().grantedNanos() + m.allowance().phases() * 7 * US);
    }

    @Test
    void dispatchDelay_bucketsCountEveryPollsBound_soTwoSnapshotsGiveTheBoundsInBetween() {
        // Quiet I/O for 100 ms, then the same I/O behind a FIFO flood: polls wait behind about 100 × 7 µs of tasks.
        newLoop(LoopMode.FIFO, PriorityPolicy.DEFAULTS);
        poissonIo(START, START + 200 * MS, 20 * US, 2 * US, 7);
        runUntil(START + 100 * MS);
        EventLoopMetrics.DispatchDelay quiet = loop.metrics().dispatchDelay();
        flood(100, 7 * US);
        runUntil(START + 200 * MS);
        EventLoopMetrics.DispatchDelay both = loop.metrics().dispatchDelay();

        for (EventLoopMetrics.DispatchDelay d : List.of(quiet, both)) {
            assertThat(d.buckets().stream().mapToLong(Long::longValue).sum())
                    .as("every poll that dispatched, once")
                    .isEqualTo(d.count());
            int highest = d.buckets().size() - 1;
            while (d.buckets().get(highest) == 0) {
                highest--;
            }
            assertThat(IoPriorityEventLoop.dispatchBucket(d.maxNanos()))
                    .as("the largest bound is in the highest bucket used")
                    .isEqualTo(highest);
        }
        List<Long> bounds = EventLoopMetrics.DispatchDelay.BUCKET_BOUNDS_NANOS;
        long quietAbove100us = 0;
        long floodAbove100us = 0;
        long floodPolls = both.count() - quiet.count();
        for (int i = bounds.indexOf(100 * US) + 1; i < both.buckets().size(); i++) {
            quietAbove100us += quiet.buckets().get(i);
            floodAbove100us += both.buckets().get(i) - quiet.buckets().get(i);
        }
        assertThat(quiet.count()).isGreaterThan(1_000);
        assertThat(quietAbove100us).as("quiet: no poll waited").isZero();
        assertThat(floodPolls).isPositive();
        assertThat(floodAbove100us)
                .as("the difference is the flood's polls, nearly all behind the queue")
                .isGreaterThan(floodPolls * 9 / 10);
    }

    @Test
    void dispatchBucket_aBoundOnABucketsUpperBound_isInThatBucket() {
        assertThat(IoPriorityEventLoop.dispatchBucket(0)).isZero();
        assertThat(IoPriorityEventLoop.dispatchBucket(1_000)).isZero();
        assertThat(IoPriorityEventLoop.dispatchBucket(1_001)).isEqualTo(1);
        assertThat(IoPriorityEventLoop.dispatchBucket(250_000)).isEqualTo(7);
        assertThat(IoPriorityEventLoop.dispatchBucket(1_000_000_000)).isEqualTo(17);
        assertThat(IoPriorityEventLoop.dispatchBucket(1_000_000_001)).isEqualTo(18);
        assertThat(EventLoopMetrics.DispatchDelay.BUCKET_BOUNDS_NANOS).hasSize(18);
    }

    @Test
    void fifo_backgroundFlood_ioWaitsBehindTheQueue() {
        // The same scenario in FIFO mode: each poll waits behind the whole flood (about 100 × 7 µs), the delay the
        // priority loop removes; and since one poll dispatches at most 16 events, the I/O falls behind for good.
        // The comparison is the point of the mode.
        newLoop(LoopMode.FIFO, PriorityPolicy.DEFAULTS);
        flood(100, 7 * US);
        poissonIo(START, START + 200 * MS, 20 * US, 2 * US, 7);
        runUntil(START + 200 * MS);

        assertThat(maxNoticeDelay()).isGreaterThanOrEqualTo(100 * 7 * US - 20 * US);
        assertThat(traces).allSatisfy(t -> assertThat(t.allowanceNanos()).isEqualTo(-1));
    }

    @Test
    void priority_continuousIo_healthCheckHeldBackAtMostTheHoldBack() {
        // I/O every 2 µs costing 2 µs: the loop is saturated and every look at I/O finds work. The health check
        // (every 10 ms) is held back by the I/O until it has waited maxUnrelatedDelayNanos (1 ms), then runs: its age
        // stays within period + 1 ms + one iteration, and it is not starved.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        continuousIo(START + 300 * MS);
        List<Long> checks = new ArrayList<>();
        loop.scheduleHealthCheck(
                () -> {
                    checks.add(clock.nanos());
                    clock.advance(5 * US);
                },
                10,
                TimeUnit.MILLISECONDS);
        runUntil(START + 300 * MS);

        assertThat(checks).hasSizeBetween(29, 30);
        EventLoopMetrics m = loop.metrics();
        assertThat(m.healthCheckMaxAgeNanos()).isBetween(10 * MS, 11 * MS + 100 * US);
        // It was held back for I/O (the priority at work), by about the hold-back and not more.
        assertThat(m.unrelatedMaxWaitNanos()).isBetween(1 * MS, 1 * MS + 100 * US);
        assertThat(m.allowance().yieldedToIo()).isGreaterThan(0);
    }

    @Test
    void priority_continuousIoAndFlood_unrelatedAndHealthChecksProgress() {
        // Continuous I/O plus a flood of background tasks and a 1 ms statistics task: everything keeps moving, health
        // checks first among the unrelated tasks.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        int offered = continuousIo(START + 300 * MS);
        flood(50, 7 * US);
        int[] stats = {0};
        loop.scheduleUnrelatedAtFixedRate(
                () -> {
                    stats[0]++;
                    clock.advance(3 * US);
                },
                1,
                1,
                TimeUnit.MILLISECONDS);
        loop.scheduleHealthCheck(() -> clock.advance(5 * US), 10, TimeUnit.MILLISECONDS);
        runUntil(START + 300 * MS);

        EventLoopMetrics m = loop.metrics();
        // The flood is overdue, so every phase runs background work, health checks first: they run within about one
        // iteration of their due time.
        assertThat(m.tasks().healthChecks()).isBetween(29L, 30L);
        assertThat(m.healthCheckMaxAgeNanos()).isLessThanOrEqualTo(10 * MS + 500 * US);
        assertThat(m.tasks().unrelated()).isGreaterThan(1_000);
        // The statistics task queues behind the flood, so some firings are skipped, but it keeps running.
        assertThat(stats[0]).isGreaterThan(100);
        // Background work takes at most about multiplier / (1 + multiplier) = 20 % (plus one task per phase): the
        // I/O, offered at 100 % of the loop, is still served at well over 70 %.
        assertThat(io.handled().size()).isGreaterThan((int) (0.7 * offered));
    }

    @Test
    void priority_longPauseInIoPhase_allowanceCapped() {
        // A 200 ms pause (a GC) while one read is dispatched is measured as I/O time; it must buy at most the cap
        // (1 ms) of background work, not 0.25 × 200 ms = 50 ms.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        io.arrive(START + MS, 200 * MS, () -> batch(1_000, 7 * US));
        runUntil(START + 202 * MS);

        IterationTrace paused = traces.stream()
                .filter(t -> t.ioActiveNanos() >= 200 * MS)
                .findFirst()
                .orElseThrow();
        assertThat(paused.allowanceNanos()).isEqualTo(MS);
        assertThat(paused.allowanceCapped()).isTrue();
        assertThat(paused.unrelatedPhaseNanos()).isLessThanOrEqualTo(MS + 7 * US);
        assertThat(loop.metrics().allowance().cappedPhases()).isEqualTo(1);
    }

    @Test
    void priority_longBlockedWait_notCountedAsIo() {
        // Ten idle seconds in a blocking poll are waiting, not I/O: the read that ends them (1 µs) earns the base
        // allowance, not the cap.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        io.arrive(START + 10_000 * MS, US, () -> batch(10, 7 * US));
        runUntil(START + 10_001 * MS);

        assertThat(io.blockedNanos()).isGreaterThanOrEqualTo(10_000 * MS - 1);
        IterationTrace woken =
                traces.stream().filter(t -> t.ioEvents() == 1).findFirst().orElseThrow();
        assertThat(woken.ioActiveNanos()).isLessThan(10 * US);
        assertThat(woken.allowanceNanos()).isEqualTo(10 * US);
        assertThat(woken.allowanceCapped()).isFalse();
    }

    @Test
    void timers_wokenEarly_fireExactlyOnTime() {
        // A Netty timer (I/O-related) and a periodic unrelated task, both due at 5 ms; I/O wakes the blocked loop at
        // 1 ms, 2.5 ms and 1 ns before the deadline. Neither may fire early, and neither late: after each early
        // wakeup the loop waits again for exactly the time left.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        List<Long> timer = new ArrayList<>();
        List<Long> periodic = new ArrayList<>();
        loop.schedule(() -> timer.add(clock.nanos()), 5, TimeUnit.MILLISECONDS);
        loop.scheduleUnrelatedAtFixedRate(() -> periodic.add(clock.nanos()), 5, 5, TimeUnit.MILLISECONDS);
        io.arrive(START + MS, 0, null);
        io.arrive(START + 2_500 * US, 0, null);
        io.arrive(START + 5 * MS - 1, 0, null);
        runUntil(START + 12 * MS);

        assertThat(timer).containsExactly(START + 5 * MS);
        assertThat(periodic).containsExactly(START + 5 * MS, START + 10 * MS);
        assertThat(io.handled()).hasSize(3);
        assertThat(io.blockingPolls()).isGreaterThanOrEqualTo(5);
    }

    @Test
    void fifo_interleavedSubmissions_runInSubmissionOrder() {
        // FIFO: one queue, as a plain Netty loop; unrelated tasks take their turn among I/O-related ones.
        newLoop(LoopMode.FIFO, PriorityPolicy.DEFAULTS);
        List<String> order = new ArrayList<>();
        loop.execute(() -> order.add("io-1"));
        loop.executeUnrelated(() -> order.add("bg-1"));
        loop.execute(() -> order.add("io-2"));
        loop.executeUnrelated(() -> order.add("bg-2"));
        loop.execute(() -> order.add("io-3"));
        loop.runIteration();

        assertThat(order).containsExactly("io-1", "bg-1", "io-2", "bg-2", "io-3");
        assertThat(loop.metrics().tasks().ioTasks()).isEqualTo(3);
        assertThat(loop.metrics().tasks().unrelated()).isEqualTo(2);
    }

    @Test
    void priority_interleavedSubmissions_ioTasksFirstThenUnrelatedInOrder() {
        // The same submissions in priority mode: I/O-related tasks first, unrelated ones after, each in its order.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        List<String> order = new ArrayList<>();
        loop.execute(() -> order.add("io-1"));
        loop.executeUnrelated(() -> order.add("bg-1"));
        loop.execute(() -> order.add("io-2"));
        loop.executeUnrelated(() -> order.add("bg-2"));
        loop.execute(() -> order.add("io-3"));
        loop.runIteration();

        assertThat(order).containsExactly("io-1", "io-2", "io-3", "bg-1", "bg-2");
    }

    @Test
    void priority_ioTaskArrivingDuringPhase_runsBeforeNextUnrelated() {
        // An I/O-related task submitted by a background task runs before the next background task.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        List<String> order = new ArrayList<>();
        loop.executeUnrelated(() -> {
            order.add("bg-1");
            loop.execute(() -> order.add("io"));
        });
        loop.executeUnrelated(() -> order.add("bg-2"));
        loop.runIteration();
        loop.runIteration();

        assertThat(order).containsExactly("bg-1", "io", "bg-2");
    }

    @Test
    void unrelatedBusyNanos_countsTaskTimeOnly_includingTheTaskRunningNow() {
        // The clock per-request loop tracing reads: it moves only while unrelated tasks run, and a reading taken
        // inside a task (as a backend thread would take it) already includes that task's time so far.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        List<Long> inside = new ArrayList<>();
        loop.execute(() -> clock.advance(30 * US)); // I/O-related: not counted
        loop.executeUnrelated(() -> {
            clock.advance(40 * US);
            inside.add(loop.unrelatedBusyNanos());
            clock.advance(60 * US);
        });
        loop.runIteration();
        clock.advance(5 * MS); // idle: not counted

        assertThat(inside).containsExactly(40 * US);
        assertThat(loop.unrelatedBusyNanos()).isEqualTo(100 * US);
    }

    /**
     * Ten unrelated tasks of 100 µs queued at once, and one I/O event arriving 150 µs into them; returns what the
     * event's handler saw as the unrelated work since the loop last looked at the receive side.
     */
    private long unrelatedWaitOfEventArrivingDuringBatch(LoopMode mode) {
        newLoop(mode, PriorityPolicy.DEFAULTS);
        long[] seen = {-1};
        io.arrive(START + 150 * US, US, () -> seen[0] = loop.unrelatedBusyNanos() - loop.receiveWindowUnrelatedNanos());
        batch(10, 100 * US);
        runUntil(START + 2 * MS);
        assertThat(io.handled()).hasSize(1);
        return seen[0];
    }

    @Test
    void receiveWindow_fifo_chargesTheWholeBatch() {
        // Per-request loop tracing: an event that becomes readable during a batch of background work waits for the
        // rest of the batch on a FIFO loop (850 µs); the window, the unrelated work since the last look at the
        // receive side, bounds it by the whole batch (1 ms).
        assertThat(unrelatedWaitOfEventArrivingDuringBatch(LoopMode.FIFO)).isEqualTo(1_000 * US);
    }

    @Test
    void receiveWindow_priority_chargesAtMostOneTask_andNothingOutsideAPoll() {
        // The same on the priority loop: it looks at the receive side before every background task, so the event
        // waits only for the task running when it arrived (50 µs; the bound: that one task, 100 µs).
        assertThat(unrelatedWaitOfEventArrivingDuringBatch(LoopMode.PRIORITY)).isEqualTo(100 * US);
        // Outside a poll (here, in a task) there is no window: the difference is 0.
        long[] outside = {-1};
        loop.execute(() -> outside[0] = loop.unrelatedBusyNanos() - loop.receiveWindowUnrelatedNanos());
        loop.runIteration();
        assertThat(outside[0]).isZero();
    }
}
