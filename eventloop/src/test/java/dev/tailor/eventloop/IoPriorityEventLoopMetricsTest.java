package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.testkit.VirtualClock;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Metrics, task classes, periodic tasks, errors and shutdown, on virtual time with the test thread as loop thread. */
class IoPriorityEventLoopMetricsTest {

    private static final long START = 5_000_000_000L;
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

    private void terminate() {
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        while (!loop.isTerminated()) {
            clock.advance(1);
            loop.runIteration();
        }
    }

    @AfterEach
    void shutDown() {
        if (loop != null && !loop.isTerminated()) {
            terminate();
        }
    }

    @Test
    void oldestUnrelatedAge_pendingTask_growsUntilRunThenZero() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        loop.executeUnrelated(() -> {});
        clock.advance(3 * MS);
        EventLoopMetrics before = loop.metrics();
        assertThat(before.unrelatedPending()).isEqualTo(1);
        assertThat(before.oldestUnrelatedAgeNanos()).isEqualTo(3 * MS);

        loop.runIteration();
        EventLoopMetrics after = loop.metrics();
        assertThat(after.unrelatedPending()).isZero();
        assertThat(after.oldestUnrelatedAgeNanos()).isZero();
        assertThat(after.unrelatedMaxWaitNanos()).isEqualTo(3 * MS);
        assertThat(after.tasks().unrelated()).isEqualTo(1);
    }

    @Test
    void lastHealthCheckAge_none_minusOne_thenFromSchedulingThenFromCompletion() {
        // -1 says "no health check", so a dashboard can tell it from a fresh one.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        assertThat(loop.metrics().lastHealthCheckAgeNanos()).isEqualTo(-1);

        loop.scheduleHealthCheck(() -> clock.advance(20 * US), 10, TimeUnit.MILLISECONDS);
        clock.advance(4 * MS);
        // Before the first check, the age counts from when it was scheduled: a loop that never runs it ages.
        assertThat(loop.metrics().lastHealthCheckAgeNanos()).isEqualTo(4 * MS);

        runUntil(START + 15 * MS);
        EventLoopMetrics m = loop.metrics();
        assertThat(m.tasks().healthChecks()).isEqualTo(1);
        // Completed at 10 ms + 20 µs; now is 15 ms.
        assertThat(m.lastHealthCheckAgeNanos()).isEqualTo(5 * MS - 20 * US);
        assertThat(m.healthCheckMaxAgeNanos()).isEqualTo(10 * MS + 20 * US);
    }

    @Test
    void taskCounts_eachClassCountedOnce() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        io.arrive(START + MS, US, () -> loop.execute(() -> {}));
        io.arrive(START + 2 * MS, US, null);
        loop.execute(() -> {});
        loop.executeUnrelated(() -> {});
        loop.scheduleUnrelatedAtFixedRate(() -> {}, 1, 1, TimeUnit.MILLISECONDS);
        loop.scheduleHealthCheck(() -> {}, 2, TimeUnit.MILLISECONDS);
        runUntil(START + 4 * MS + 1);

        EventLoopMetrics.TaskCounts c = loop.metrics().tasks();
        // Periodic timers firing are ours, not I/O-related tasks: ioTasks counts the two execute() calls only.
        assertThat(c).isEqualTo(new EventLoopMetrics.TaskCounts(2, 2, 1 + 4, 2, 0, 0, 0));
        assertThat(traces.stream().mapToInt(IterationTrace::ioEvents).sum()).isEqualTo(2);
    }

    @Test
    void failingTask_countedAndLoopGoesOn() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        List<String> ran = new ArrayList<>();
        loop.executeUnrelated(() -> {
            throw new IllegalStateException("boom (expected by the test)");
        });
        loop.executeUnrelated(() -> ran.add("next"));
        loop.runIteration();

        assertThat(ran).containsExactly("next");
        assertThat(loop.metrics().tasks().failures()).isEqualTo(1);
        assertThat(loop.metrics().tasks().unrelated()).isEqualTo(2);
    }

    @Test
    void periodic_previousInstanceStillPending_firingSkipped() {
        // A 1 ms task held back 5 ms by continuous I/O: the firings in between are skipped, never queued, so at most
        // one instance waits and nothing piles up.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS.withMaxUnrelatedDelayNanos(5 * MS));
        for (long t = START; t < START + 20 * MS; t += 2 * US) {
            io.arrive(t, 2 * US, null);
        }
        int[] runs = {0};
        loop.scheduleUnrelatedAtFixedRate(() -> runs[0]++, 1, 1, TimeUnit.MILLISECONDS);
        long[] maxPending = {0};
        io.horizon(START + 20 * MS);
        while (clock.nanos() < START + 20 * MS) {
            loop.runIteration();
            maxPending[0] = Math.max(maxPending[0], loop.metrics().unrelatedPending());
        }

        assertThat(maxPending[0]).isEqualTo(1);
        assertThat(loop.metrics().tasks().periodicSkipped()).isGreaterThan(10);
        // Held back about 5 ms each time: 20 ms give three or four runs, not twenty.
        assertThat(runs[0]).isBetween(3, 4);
    }

    @Test
    void periodic_cancelled_pendingInstanceDoesNotRun() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        int[] runs = {0};
        ScheduledFuture<?> future = loop.scheduleUnrelatedAtFixedRate(() -> runs[0]++, 1, 1, TimeUnit.MILLISECONDS);
        runUntil(START + 3 * MS + 1);
        assertThat(runs[0]).isEqualTo(3);

        // Fire the 4 ms instance (the timer enqueues it) without running it, then cancel.
        clock.advanceTo(START + 4 * MS);
        assertThat(loop.runNonBlockingTasks(0)).isEqualTo(1);
        assertThat(loop.metrics().unrelatedPending()).isEqualTo(1);
        future.cancel(false);
        runUntil(START + 10 * MS);
        assertThat(runs[0]).isEqualTo(3);
        assertThat(loop.metrics().unrelatedPending()).isZero();
    }

    @Test
    void shutdown_pendingDiscardedAndNewRejected() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        int[] runs = {0};
        for (int i = 0; i < 5; i++) {
            loop.executeUnrelated(() -> runs[0]++);
        }
        terminate();

        assertThat(runs[0]).isZero();
        assertThat(loop.metrics().tasks().discarded()).isEqualTo(5);
        assertThat(loop.metrics().unrelatedPending()).isZero();
        assertThatThrownBy(() -> loop.executeUnrelated(() -> {})).isInstanceOf(RejectedExecutionException.class);
        assertThatThrownBy(() -> loop.scheduleHealthCheck(() -> {}, 1, TimeUnit.SECONDS))
                .isInstanceOf(RejectedExecutionException.class);
    }

    @Test
    void fifo_periodicAndHealthChecks_runFromTheirTimersAndAreCounted() {
        newLoop(LoopMode.FIFO, PriorityPolicy.DEFAULTS);
        loop.scheduleUnrelatedAtFixedRate(() -> clock.advance(US), 1, 1, TimeUnit.MILLISECONDS);
        loop.scheduleHealthCheck(() -> {}, 2, TimeUnit.MILLISECONDS);
        loop.executeUnrelated(() -> {});
        runUntil(START + 4 * MS + 1);

        EventLoopMetrics m = loop.metrics();
        assertThat(m.mode()).isEqualTo(LoopMode.FIFO);
        assertThat(m.tasks().unrelated()).isEqualTo(1 + 4);
        assertThat(m.tasks().healthChecks()).isEqualTo(2);
        assertThat(m.tasks().ioTasks()).isZero();
        assertThat(m.lastHealthCheckAgeNanos()).isBetween(0L, US);
        // FIFO has no allowance.
        assertThat(m.allowance()).isEqualTo(new EventLoopMetrics.Allowance(0, 0, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void arguments_bad_rejectedWithNames() {
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        assertThatThrownBy(() -> loop.executeUnrelated(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> loop.scheduleUnrelatedAtFixedRate(() -> {}, -1, 1, TimeUnit.SECONDS))
                .hasMessage("initialDelay : -1 (expected: >= 0)");
        assertThatThrownBy(() -> loop.scheduleUnrelatedAtFixedRate(() -> {}, 0, 0, TimeUnit.SECONDS))
                .hasMessage("period : 0 (expected: > 0)");
        assertThatThrownBy(() -> loop.scheduleHealthCheck(() -> {}, -5, TimeUnit.SECONDS))
                .hasMessage("period : -5 (expected: > 0)");
        assertThatThrownBy(() -> IoPriorityEventLoop.start(null))
                .hasMessage("config : null (expected: an EventLoopConfig, e.g. EventLoopConfig.DEFAULTS)");
    }

    @Test
    void runIteration_otherThread_refused() throws Exception {
        // Thread confinement is enforced, not only documented.
        newLoop(LoopMode.PRIORITY, PriorityPolicy.DEFAULTS);
        Throwable[] thrown = {null};
        Thread other = new Thread(() -> {
            try {
                loop.runIteration();
            } catch (Throwable t) {
                thrown[0] = t;
            }
        });
        other.start();
        other.join();
        assertThat(thrown[0]).isInstanceOf(IllegalStateException.class);
    }
}
