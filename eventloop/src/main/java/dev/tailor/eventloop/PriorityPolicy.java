package dev.tailor.eventloop;

import dev.tailor.common.Checks;

/**
 * The I/O-priority policy (docs/design.md#io-priority-event-loop): how long unrelated work may run after each I/O
 * phase, and whether the next unrelated task may start now. Pure: time arrives as arguments in nanoseconds; nothing
 * here reads a clock, so the same object decides in the loop and in a simulation.
 *
 * <p>Contract. The allowance after an I/O phase that took {@code io} ns is
 * {@code A(io) = min(maxAllowanceNanos, max(baseAllowanceNanos, ioMultiplier × io))}, with {@code io < 0} read as 0;
 * so {@code baseAllowanceNanos <= A <= maxAllowanceNanos}, and A is non-decreasing in {@code io}. {@link #next} lets
 * an unrelated task start only while the background time spent so far in the phase is below A, and, when the last look
 * at I/O found work, only if the oldest pending unrelated task has waited at least {@code maxUnrelatedDelayNanos}.
 * Hence (i) background time in one phase is at most {@code A + the longest single unrelated task}, never more than
 * {@code maxAllowanceNanos + one task}; (ii) since {@code A >= 1}, at least one unrelated task runs in every phase in
 * which the oldest pending one is overdue, whatever the I/O load.
 *
 * @param baseAllowanceNanos     the allowance however little I/O there was, in ns, {@code 1 .. 10⁹} (default 10 µs,
 *                               the paper's)
 * @param ioMultiplier           the allowance per ns just spent on I/O, in {@code [0, 1000]} (default 0.25,
 *                               the paper's); 0 makes the allowance the base alone
 * @param maxAllowanceNanos      the cap, in ns, {@code baseAllowanceNanos .. 10¹⁰} (default 1 ms, our reading): a
 *                               long pause inside an I/O phase (a GC, a descheduled thread) is measured as I/O time
 *                               and would otherwise buy {@code ioMultiplier ×} the pause of background work
 * @param maxUnrelatedDelayNanos how long the oldest unrelated task may be held back because I/O keeps arriving, in ns,
 *                               {@code 0 .. 3.6·10¹²} (default 1 ms, our reading); past it, unrelated tasks run
 *                               within the allowance even when I/O is waiting. 0 never holds them back for I/O
 */
/*
 * Maintainer note.
 *
 * The paper gives the allowance formula max(base, multiplier × I/O time) with 10 µs and 0.25, and says the receive
 * side is checked again before each unrelated task once the I/O queue is empty (docs/design.md#io-priority-event-loop).
 * Three things are our reading:
 *
 * 1. The cap. Without it the allowance is unbounded in the I/O time, and the I/O time is measured with a clock, so a
 *    200 ms GC pause while handling one read would grant 50 ms of background work with reads arriving. The cap turns
 *    that into at most maxAllowanceNanos. 1 ms is reached after 4 ms of I/O in a single iteration, which a proxy at
 *    normal load does not see; it is a guess, not a tuned value, and the loop reports how often the cap applied.
 *
 * 2. What happens when the look at I/O finds work. The loop handles that work at once (the look is a non-blocking
 *    poll that also dispatches what it finds) and then, by this policy, returns to the I/O phase rather than starting
 *    the unrelated task; the work found is charged to the next iteration's I/O time. Under continuous I/O every look
 *    finds work, so background tasks would never run: the overdue rule (maxUnrelatedDelayNanos) is the starvation
 *    guard. Once the oldest pending task has waited that long, tasks run within the allowance regardless, so with a
 *    flood of overdue tasks the loop gives background work about multiplier ÷ (1 + multiplier) of its time (20 % at
 *    0.25) and no more, and I/O is still seen again within A + one task.
 *
 * 3. The allowance never preempts: a task that has started runs to completion, so bound (i) has the "+ one task"
 *    term, and long unrelated tasks should be split by their authors.
 *
 * The policy keeps no state; the loop carries the phase's elapsed background time and the allowance between calls.
 */
public record PriorityPolicy(
        long baseAllowanceNanos, double ioMultiplier, long maxAllowanceNanos, long maxUnrelatedDelayNanos) {

    /** Largest base allowance, 1 s. */
    public static final long MAX_BASE_ALLOWANCE_NANOS = 1_000_000_000L;
    /** Largest multiplier. */
    public static final double MAX_IO_MULTIPLIER = 1000;
    /** Largest cap, 10 s. */
    public static final long MAX_ALLOWANCE_CAP_NANOS = 10_000_000_000L;
    /** Largest hold-back for I/O, one hour. */
    public static final long MAX_UNRELATED_DELAY_NANOS = 3_600_000_000_000L;

    /** 10 µs and 0.25 (the paper's); cap 1 ms and hold-back 1 ms (our reading). */
    public static final PriorityPolicy DEFAULTS = new PriorityPolicy(10_000L, 0.25, 1_000_000L, 1_000_000L);

    /**
     * @throws IllegalArgumentException naming the field, its value and the expected range when a value is out of
     *                                  range or NaN, or the cap is below the base
     */
    public PriorityPolicy {
        Checks.requireRange("baseAllowanceNanos", baseAllowanceNanos, 1, MAX_BASE_ALLOWANCE_NANOS);
        Checks.requireRange("ioMultiplier", ioMultiplier, 0, MAX_IO_MULTIPLIER);
        Checks.requireRange("maxAllowanceNanos", maxAllowanceNanos, baseAllowanceNanos, MAX_ALLOWANCE_CAP_NANOS);
        Checks.requireRange("maxUnrelatedDelayNanos", maxUnrelatedDelayNanos, 0, MAX_UNRELATED_DELAY_NANOS);
    }

    /** What the loop does next in an unrelated phase. */
    public enum Step {
        /** Start the oldest pending unrelated task now. */
        RUN_UNRELATED,
        /** Nothing unrelated is pending: the phase ends. */
        DRAINED,
        /** The phase has used its allowance: back to I/O. */
        ALLOWANCE_SPENT,
        /** The last look found I/O work and nothing pending is overdue: back to I/O. */
        YIELD_TO_IO
    }

    /**
     * The allowance earned by an I/O phase, in ns: {@code min(cap, max(base, multiplier × ioActiveNanos))}.
     *
     * @param ioActiveNanos time just spent on I/O (polls that dispatched work and I/O-related tasks), in ns; a
     *                      negative value (a clock that stepped back) counts as 0
     * @return the allowance in ns, within {@code [baseAllowanceNanos, maxAllowanceNanos]}
     */
    public long allowanceNanos(long ioActiveNanos) {
        double earned = ioMultiplier * Math.max(0, ioActiveNanos);
        if (earned >= maxAllowanceNanos) {
            return maxAllowanceNanos;
        }
        return Math.max(baseAllowanceNanos, (long) earned);
    }

    /** Whether the cap, not the formula, set {@link #allowanceNanos} for this I/O time. */
    public boolean allowanceCapped(long ioActiveNanos) {
        return ioMultiplier * Math.max(0, ioActiveNanos) > maxAllowanceNanos;
    }

    /** Whether a task that has waited {@code ageNanos} runs even though I/O work is waiting. */
    public boolean overdue(long ageNanos) {
        return ageNanos >= maxUnrelatedDelayNanos;
    }

    /**
     * The next step of an unrelated phase.
     *
     * @param elapsedNanos          background time spent in this phase so far, in ns (I/O work done by the looks at
     *                              I/O excluded)
     * @param allowanceNanos        this phase's allowance, in ns, from {@link #allowanceNanos}
     * @param oldestPendingAgeNanos how long the oldest pending unrelated task has been due, in ns; negative when none
     *                              is pending
     * @param ioFound               whether the latest look at I/O (I/O-related tasks, then the receive side) found
     *                              work
     * @return {@link Step#DRAINED} when nothing is pending, else {@link Step#ALLOWANCE_SPENT} once
     *         {@code elapsedNanos >= allowanceNanos}, else {@link Step#YIELD_TO_IO} when I/O was found and the oldest
     *         task is not {@linkplain #overdue overdue}, else {@link Step#RUN_UNRELATED}
     */
    public Step next(long elapsedNanos, long allowanceNanos, long oldestPendingAgeNanos, boolean ioFound) {
        if (oldestPendingAgeNanos < 0) {
            return Step.DRAINED;
        }
        if (elapsedNanos >= allowanceNanos) {
            return Step.ALLOWANCE_SPENT;
        }
        if (ioFound && !overdue(oldestPendingAgeNanos)) {
            return Step.YIELD_TO_IO;
        }
        return Step.RUN_UNRELATED;
    }

    /** A copy with another base allowance, in ns. */
    public PriorityPolicy withBaseAllowanceNanos(long nanos) {
        return new PriorityPolicy(nanos, ioMultiplier, maxAllowanceNanos, maxUnrelatedDelayNanos);
    }

    /** A copy with another multiplier. */
    public PriorityPolicy withIoMultiplier(double multiplier) {
        return new PriorityPolicy(baseAllowanceNanos, multiplier, maxAllowanceNanos, maxUnrelatedDelayNanos);
    }

    /** A copy with another cap, in ns. */
    public PriorityPolicy withMaxAllowanceNanos(long nanos) {
        return new PriorityPolicy(baseAllowanceNanos, ioMultiplier, nanos, maxUnrelatedDelayNanos);
    }

    /** A copy with another hold-back for I/O, in ns. */
    public PriorityPolicy withMaxUnrelatedDelayNanos(long nanos) {
        return new PriorityPolicy(baseAllowanceNanos, ioMultiplier, maxAllowanceNanos, nanos);
    }
}
