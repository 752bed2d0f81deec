package dev.tailor.eventloop;

import java.util.List;

/**
 * A snapshot of an {@link IoPriorityEventLoop}'s counters and gauges ({@link IoPriorityEventLoop#metrics()}), taken
 * from any thread. Counters are cumulative since the loop was created; times are ns of the loop's clock. The fields
 * are read one by one, not atomically together, so two fields of one snapshot may be an iteration apart.
 *
 * @param mode                     the loop's mode
 * @param iterations               iterations run
 * @param tasks                    what ran, by class
 * @param unrelatedPending         unrelated tasks and health checks submitted or due and not yet run
 * @param oldestUnrelatedAgeNanos  now minus the due time of the oldest pending unrelated task or health check; 0 when
 *                                 none is pending (docs/design.md#io-priority-event-loop). In FIFO
 *                                 mode, periodic tasks are counted only once they run, so this covers
 *                                 {@link IoPriorityEventLoop#executeUnrelated} tasks only
 * @param unrelatedMaxWaitNanos    the longest any unrelated task or health check waited from due to start
 * @param lastHealthCheckAgeNanos  now minus the completion of the last health check (or, before the first, the time
 *                                 the first was scheduled); -1 when none was ever scheduled (the other background
 *                                 progress measure of docs/design.md#io-priority-event-loop)
 * @param healthCheckMaxAgeNanos   the largest value {@code lastHealthCheckAgeNanos} reached, measured each time a
 *                                 health check completed; 0 before the first
 * @param allowance                how the priority mode's allowance was granted and used (zeros in FIFO mode)
 * @param dispatchDelay            bounds on the I/O dispatch delay (readable → handled)
 */
public record EventLoopMetrics(
        LoopMode mode,
        long iterations,
        TaskCounts tasks,
        long unrelatedPending,
        long oldestUnrelatedAgeNanos,
        long unrelatedMaxWaitNanos,
        long lastHealthCheckAgeNanos,
        long healthCheckMaxAgeNanos,
        Allowance allowance,
        DispatchDelay dispatchDelay) {

    /**
     * Work run, by class.
     *
     * @param ioEvents        I/O events dispatched by the transport (NIO: selected keys processed)
     * @param ioTasks         I/O-related tasks: Netty's task queue ({@code execute}, channel work from other
     *                        threads, and Netty's own bookkeeping such as registrations) and timers
     *                        ({@code schedule}); never unrelated tasks or the timers that release periodic ones
     * @param unrelated       unrelated tasks run ({@link IoPriorityEventLoop#executeUnrelated} and periodic ones)
     * @param healthChecks    health checks run
     * @param failures        unrelated tasks and health checks that threw (logged, and the loop goes on)
     * @param periodicSkipped periodic firings dropped because the previous firing of the same task had not run yet
     * @param discarded       unrelated tasks still pending when the loop terminated, not run
     */
    public record TaskCounts(
            long ioEvents,
            long ioTasks,
            long unrelated,
            long healthChecks,
            long failures,
            long periodicSkipped,
            long discarded) {}

    /**
     * The priority mode's allowance.
     *
     * @param lastNanos    the allowance of the latest phase that had unrelated work pending
     * @param grantedNanos the sum of the allowances of phases that had unrelated work pending
     * @param usedNanos    the sum of those phases' background time; it can exceed {@code grantedNanos} by at most one
     *                     task per phase, as the allowance never preempts
     * @param phases       phases that had unrelated work pending
     * @param cappedPhases those of them whose allowance the cap set
     * @param yieldedToIo  those that ended because a look found I/O ({@link PriorityPolicy.Step#YIELD_TO_IO})
     * @param spent        those that ended with the allowance spent ({@link PriorityPolicy.Step#ALLOWANCE_SPENT})
     * @param drained      those that ended with nothing left ({@link PriorityPolicy.Step#DRAINED})
     */
    public record Allowance(
            long lastNanos,
            long grantedNanos,
            long usedNanos,
            long phases,
            long cappedPhases,
            long yieldedToIo,
            long spent,
            long drained) {}

    /**
     * Bounds on the I/O dispatch delay (readable → handled). Netty does not tell when a socket became readable, only
     * that a poll found it so. For every poll of the receive side that dispatched events, the loop takes the time from
     * the moment the previous poll's select returned (readiness after it is found by this poll; readiness during this
     * poll's wait wakes it at once) to the start of this poll, plus this poll's active dispatch time (the last event
     * handled waited for those before it). That is an upper bound on readable → handled for the events of the poll,
     * up to the kernel's own wakeup latency. It never counts a blocking poll's wait; when readiness came during that
     * wait, it overstates the delay by at most the busy time just before the poll. It is what the policy bounds.
     * It assumes a poll dispatches what is ready: when one leaves readiness behind (Netty reads at most 16 messages
     * per channel per poll by default), the backlog's queueing is invisible to the loop, and only end-to-end request
     * latency shows it.
     *
     * <p>{@code maxNanos} is since the loop was created; {@code buckets} counts the bounds in
     * {@link #BUCKET_BOUNDS_NANOS}, so that a reader takes the difference of two snapshots for a quantile over the
     * time between them (as {@code histogram_quantile} does over a rate's window).
     *
     * @param receiveChecks polls of the receive side (one per iteration, plus the looks before unrelated tasks)
     * @param count         polls that dispatched at least one event
     * @param lastNanos     the bound for the latest of them
     * @param maxNanos      the largest bound
     * @param totalNanos    the sum of the bounds (mean = total ÷ count)
     * @param buckets       the polls that dispatched, by their bound: entry {@code i} those above bound {@code i - 1}
     *                      of {@link #BUCKET_BOUNDS_NANOS} and at most bound {@code i}, the last those above the
     *                      highest bound (not cumulative; one more entry than bounds). Read one by one, so their sum
     *                      may differ from {@code count} by a poll or two
     */
    public record DispatchDelay(
            long receiveChecks, long count, long lastNanos, long maxNanos, long totalNanos, List<Long> buckets) {

        /**
         * The upper bounds, ns, of the buckets of the dispatch-delay bound: 1 µs to 1 s, about 2.5 per decade (the
         * bounds of the server's per-request loop-tracing histograms).
         */
        public static final List<Long> BUCKET_BOUNDS_NANOS = List.of(
                1_000L,
                2_500L,
                5_000L,
                10_000L,
                25_000L,
                50_000L,
                100_000L,
                250_000L,
                500_000L,
                1_000_000L,
                2_500_000L,
                5_000_000L,
                10_000_000L,
                25_000_000L,
                50_000_000L,
                100_000_000L,
                250_000_000L,
                1_000_000_000L);

        /** Checks the buckets: one more than the bounds; copied, so the record is immutable. */
        public DispatchDelay {
            buckets = List.copyOf(buckets);
            if (buckets.size() != BUCKET_BOUNDS_NANOS.size() + 1) {
                throw new IllegalArgumentException("buckets : " + buckets.size() + " entries (expected: "
                        + (BUCKET_BOUNDS_NANOS.size() + 1) + ", one per bound and one above the highest)");
            }
        }

        /** The mean bound, in ns; 0 before any poll dispatched. */
        public double meanNanos() {
            return count == 0 ? 0 : (double) totalNanos / count;
        }
    }
}
