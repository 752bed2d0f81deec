package dev.tailor.eventloop;

import dev.tailor.common.Checks;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Everything an {@link IoPriorityEventLoop} is built from. Immutable; build variants with the {@code with*} methods.
 * The constructor checks every field and names it, its value and the expectation on error.
 *
 * @param mode                 {@link LoopMode#PRIORITY} (default) or the {@link LoopMode#FIFO} baseline
 * @param policy               the allowance policy of the priority mode (default {@link PriorityPolicy#DEFAULTS})
 * @param ioTaskQuantumNanos   priority mode: the most time, in ns, one go at the I/O-related task queue may take
 *                             before the receive side is polled again, {@code 1,000 .. 60·10⁹} (default 1 ms, our
 *                             reading: the design runs I/O-related tasks first and says no more; the quantum only
 *                             matters if other threads flood the loop with {@code execute} calls)
 * @param fifoTaskQuantumNanos FIFO mode: the most time, in ns, one iteration spends on the single task queue,
 *                             {@code 1,000 .. 60·10⁹} (default 1 s, Netty 4.2's default
 *                             {@code io.netty.eventLoop.maxTaskProcessingQuantumMs}, so FIFO is a plain Netty loop)
 * @param ioHandlerFactory     the transport (default {@link NioIoHandler#newFactory()}); channels registered on the
 *                             loop must match it (NIO channels for NIO)
 * @param nanoClock            the loop's time source, in ns, monotonic (default {@link System#nanoTime()}); also
 *                             drives Netty's timers on this loop. Must be thread-safe: submitting threads read it to
 *                             stamp tasks. Tests pass a virtual clock with a virtual transport; Netty's NIO transport
 *                             computes its select timeout from {@code System.nanoTime()}, so with NIO keep the default
 * @param threadFactory        makes the loop's thread for {@link IoPriorityEventLoop#start} (default
 *                             {@link #DEFAULT_THREAD_FACTORY})
 * @param iterationListener    called on the loop thread after every iteration with what it did, or {@code null}
 *                             (default) for none; for diagnostics and tests, it must be quick
 */
public record EventLoopConfig(
        LoopMode mode,
        PriorityPolicy policy,
        long ioTaskQuantumNanos,
        long fifoTaskQuantumNanos,
        IoHandlerFactory ioHandlerFactory,
        LongSupplier nanoClock,
        ThreadFactory threadFactory,
        Consumer<IterationTrace> iterationListener) {

    /** Shortest task quantum, 1 µs. */
    public static final long MIN_QUANTUM_NANOS = 1_000L;
    /** Longest task quantum, 60 s. */
    public static final long MAX_QUANTUM_NANOS = 60_000_000_000L;
    /** {@link System#nanoTime()}. */
    public static final LongSupplier SYSTEM_NANO_CLOCK = System::nanoTime;

    /**
     * Netty's thread factory: non-daemon {@code FastThreadLocalThread}s (so Netty's per-thread buffer caches apply)
     * named {@code tailor-eventloop-P-N}.
     */
    public static final ThreadFactory DEFAULT_THREAD_FACTORY = new DefaultThreadFactory("tailor-eventloop");

    /** The defaults (see the parameters). */
    public static final EventLoopConfig DEFAULTS = new EventLoopConfig(
            LoopMode.PRIORITY,
            PriorityPolicy.DEFAULTS,
            1_000_000L,
            1_000_000_000L,
            NioIoHandler.newFactory(),
            SYSTEM_NANO_CLOCK,
            DEFAULT_THREAD_FACTORY,
            null);

    /**
     * @throws IllegalArgumentException naming the field, its value and the expectation when a quantum is out of range
     *                                  or a required field is null
     */
    public EventLoopConfig {
        Checks.requireNonNull("mode", mode, "PRIORITY or FIFO");
        Checks.requireNonNull("policy", policy, "a PriorityPolicy, e.g. PriorityPolicy.DEFAULTS");
        Checks.requireRange("ioTaskQuantumNanos", ioTaskQuantumNanos, MIN_QUANTUM_NANOS, MAX_QUANTUM_NANOS);
        Checks.requireRange("fifoTaskQuantumNanos", fifoTaskQuantumNanos, MIN_QUANTUM_NANOS, MAX_QUANTUM_NANOS);
        Checks.requireNonNull(
                "ioHandlerFactory", ioHandlerFactory, "an IoHandlerFactory, e.g. NioIoHandler.newFactory()");
        Checks.requireNonNull("nanoClock", nanoClock, "a monotonic nanosecond clock, e.g. System::nanoTime");
        Checks.requireNonNull("threadFactory", threadFactory, "a ThreadFactory");
    }

    /** A copy with another mode. */
    public EventLoopConfig withMode(LoopMode value) {
        return new EventLoopConfig(
                value,
                policy,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                nanoClock,
                threadFactory,
                iterationListener);
    }

    /** A copy with another policy. */
    public EventLoopConfig withPolicy(PriorityPolicy value) {
        return new EventLoopConfig(
                mode,
                value,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                nanoClock,
                threadFactory,
                iterationListener);
    }

    /** A copy with another I/O task quantum, in ns. */
    public EventLoopConfig withIoTaskQuantumNanos(long value) {
        return new EventLoopConfig(
                mode,
                policy,
                value,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                nanoClock,
                threadFactory,
                iterationListener);
    }

    /** A copy with another FIFO task quantum, in ns. */
    public EventLoopConfig withFifoTaskQuantumNanos(long value) {
        return new EventLoopConfig(
                mode, policy, ioTaskQuantumNanos, value, ioHandlerFactory, nanoClock, threadFactory, iterationListener);
    }

    /** A copy with another transport. */
    public EventLoopConfig withIoHandlerFactory(IoHandlerFactory value) {
        return new EventLoopConfig(
                mode,
                policy,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                value,
                nanoClock,
                threadFactory,
                iterationListener);
    }

    /** A copy with another clock (ns, monotonic, thread-safe). */
    public EventLoopConfig withNanoClock(LongSupplier value) {
        return new EventLoopConfig(
                mode,
                policy,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                value,
                threadFactory,
                iterationListener);
    }

    /** A copy with another thread factory. */
    public EventLoopConfig withThreadFactory(ThreadFactory value) {
        return new EventLoopConfig(
                mode,
                policy,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                nanoClock,
                value,
                iterationListener);
    }

    /** A copy with another iteration listener ({@code null}: none). */
    public EventLoopConfig withIterationListener(Consumer<IterationTrace> value) {
        return new EventLoopConfig(
                mode,
                policy,
                ioTaskQuantumNanos,
                fifoTaskQuantumNanos,
                ioHandlerFactory,
                nanoClock,
                threadFactory,
                value);
    }
}
