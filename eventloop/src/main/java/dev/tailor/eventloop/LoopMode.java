package dev.tailor.eventloop;

/**
 * How an {@link IoPriorityEventLoop} orders its work; chosen at construction
 * (docs/design.md#io-priority-event-loop).
 */
public enum LoopMode {
    /**
     * I/O and I/O-related tasks first; unrelated tasks from their own queue within an allowance derived from the
     * time just spent on I/O ({@link PriorityPolicy}), looking at the receive side again before each one.
     */
    PRIORITY,
    /**
     * The baseline: one queue for every task, in submission order, run after each I/O poll as a plain Netty event
     * loop does (up to {@link EventLoopConfig#fifoTaskQuantumNanos()} per iteration, Netty's default 1 s).
     */
    FIFO
}
