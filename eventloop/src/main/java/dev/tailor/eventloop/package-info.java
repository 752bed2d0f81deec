/**
 * The I/O-priority event loop (docs/design.md#io-priority-event-loop) on Netty 4.2: I/O and I/O-related tasks first,
 * unrelated background work (statistics, monitoring, maintenance, health checks) within an allowance earned by the
 * I/O just done, and a FIFO mode for comparison. Start at {@link dev.tailor.eventloop.IoPriorityEventLoop}; the
 * policy is {@link dev.tailor.eventloop.PriorityPolicy}; docs/eventloop.md explains the mechanism, its formula, its
 * defaults and what is our reading.
 *
 * <p>Time is {@code long} nanoseconds with the unit in every name. The policy is pure (time passed in); the loop reads
 * an injectable clock ({@link dev.tailor.eventloop.EventLoopConfig#nanoClock()}), which also drives Netty's timers
 * on the loop, so tests run on virtual time.
 */
package dev.tailor.eventloop;
