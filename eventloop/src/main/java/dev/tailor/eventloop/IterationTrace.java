package dev.tailor.eventloop;

/**
 * What one iteration of an {@link IoPriorityEventLoop} did, for diagnostics and tests
 * ({@link EventLoopConfig#iterationListener()}). Times are in ns of the loop's clock.
 *
 * @param mode                    the loop's mode
 * @param startNanos              when the iteration began (before its I/O poll)
 * @param ioEvents                I/O events the transport dispatched in this iteration (the poll's and the looks'),
 *                                as counted by its {@link io.netty.channel.IoHandler#run}
 * @param ioTasks                 I/O-related tasks run (Netty's task queue and due timers); in FIFO mode, the tasks
 *                                of the single queue other than unrelated ones
 * @param ioActiveNanos           priority mode: the I/O time the allowance was computed from (the poll's active time,
 *                                the I/O task phase, and I/O work found by the previous iteration's looks); FIFO mode:
 *                                the poll's active time
 * @param allowanceNanos          priority mode: the allowance, {@link PriorityPolicy#allowanceNanos}; FIFO mode: -1
 * @param allowanceCapped         whether the cap set the allowance
 * @param unrelatedRun            unrelated tasks and health checks run
 * @param unrelatedPhaseNanos     priority mode: background time of the unrelated phase (tasks and empty looks at I/O;
 *                                I/O work the looks found is not counted); FIFO mode: the whole task phase
 * @param longestUnrelatedNanos   the longest single unrelated task or health check of this iteration
 * @param endedBy                 priority mode: why the unrelated phase ended; FIFO mode: {@code null}
 */
public record IterationTrace(
        LoopMode mode,
        long startNanos,
        int ioEvents,
        int ioTasks,
        long ioActiveNanos,
        long allowanceNanos,
        boolean allowanceCapped,
        int unrelatedRun,
        long unrelatedPhaseNanos,
        long longestUnrelatedNanos,
        PriorityPolicy.Step endedBy) {}
