package dev.tailor.eventloop;

import dev.tailor.common.Checks;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Everything an {@link IoPriorityEventLoop} is built from. Immutable; build one with {@link #builder()} and variants
 * with {@link #toBuilder()}.
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

    /** The defaults (see the parameters; they are set in one place, {@link Builder}). */
    public static final EventLoopConfig DEFAULTS = builder().build();

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

    /** A builder starting from {@link #DEFAULTS}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds an {@link EventLoopConfig}: named setters over the defaults (the one place they are set),
     * checked in {@link #build}.
     */
    public static final class Builder {
        private LoopMode mode = LoopMode.PRIORITY;
        private PriorityPolicy policy = PriorityPolicy.DEFAULTS;
        private long ioTaskQuantumNanos = 1_000_000L;
        private long fifoTaskQuantumNanos = 1_000_000_000L;
        private IoHandlerFactory ioHandlerFactory = NioIoHandler.newFactory();
        private LongSupplier nanoClock = SYSTEM_NANO_CLOCK;
        private ThreadFactory threadFactory = DEFAULT_THREAD_FACTORY;
        private Consumer<IterationTrace> iterationListener = null;

        private Builder() {}

        private Builder(EventLoopConfig from) {
            mode = from.mode;
            policy = from.policy;
            ioTaskQuantumNanos = from.ioTaskQuantumNanos;
            fifoTaskQuantumNanos = from.fifoTaskQuantumNanos;
            ioHandlerFactory = from.ioHandlerFactory;
            nanoClock = from.nanoClock;
            threadFactory = from.threadFactory;
            iterationListener = from.iterationListener;
        }

        /** {@link EventLoopConfig#mode}. */
        public Builder mode(LoopMode value) {
            mode = value;
            return this;
        }

        /** {@link EventLoopConfig#policy}. */
        public Builder policy(PriorityPolicy value) {
            policy = value;
            return this;
        }

        /** {@link EventLoopConfig#ioTaskQuantumNanos}. */
        public Builder ioTaskQuantumNanos(long value) {
            ioTaskQuantumNanos = value;
            return this;
        }

        /** {@link EventLoopConfig#fifoTaskQuantumNanos}. */
        public Builder fifoTaskQuantumNanos(long value) {
            fifoTaskQuantumNanos = value;
            return this;
        }

        /** {@link EventLoopConfig#ioHandlerFactory}. */
        public Builder ioHandlerFactory(IoHandlerFactory value) {
            ioHandlerFactory = value;
            return this;
        }

        /** {@link EventLoopConfig#nanoClock}. */
        public Builder nanoClock(LongSupplier value) {
            nanoClock = value;
            return this;
        }

        /** {@link EventLoopConfig#threadFactory}. */
        public Builder threadFactory(ThreadFactory value) {
            threadFactory = value;
            return this;
        }

        /** {@link EventLoopConfig#iterationListener}. */
        public Builder iterationListener(Consumer<IterationTrace> value) {
            iterationListener = value;
            return this;
        }

        /**
         * The configuration, checked as the constructor checks it.
         *
         * @throws IllegalArgumentException naming the field, its value and the expectation when a quantum is out of
         *                                  range or a required field is null
         */
        public EventLoopConfig build() {
            return new EventLoopConfig(
                    mode,
                    policy,
                    ioTaskQuantumNanos,
                    fifoTaskQuantumNanos,
                    ioHandlerFactory,
                    nanoClock,
                    threadFactory,
                    iterationListener);
        }
    }
}
