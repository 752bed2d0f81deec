package dev.tailor.eventloop;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;

/**
 * Wraps the transport's {@link IoHandler} to learn, for each poll, whether it was allowed to block and how long it
 * spent dispatching (the handler's {@link IoHandlerContext#reportActiveIoTime} report, which NIO gives when asked), so
 * the loop can count a poll's active time as I/O and its wait as idle. Everything else is delegated. Runs on the loop
 * thread only, like the handler.
 */
final class MeasuringIoHandler implements IoHandler {

    /** What the last poll revealed; reset by the loop before each poll. Loop thread only. */
    static final class Probe {
        /** Whether the handler asked and was allowed to block. */
        boolean couldBlock;
        /** Active dispatch time the handler reported, in ns of its own clock; -1 when it reported none. */
        long reportedActiveNanos = -1;

        void reset() {
            couldBlock = false;
            reportedActiveNanos = -1;
        }
    }

    private final IoHandler delegate;
    private final Probe probe;
    private final ReportingContext context = new ReportingContext();

    private MeasuringIoHandler(IoHandler delegate, Probe probe) {
        this.delegate = delegate;
        this.probe = probe;
    }

    /** A factory whose handlers wrap those of {@code delegate} and report into {@code probe}. */
    static IoHandlerFactory factory(IoHandlerFactory delegate, Probe probe) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                return new MeasuringIoHandler(delegate.newHandler(executor), probe);
            }

            @Override
            public boolean isChangingThreadSupported() {
                return delegate.isChangingThreadSupported();
            }
        };
    }

    @Override
    public void initialize() {
        delegate.initialize();
    }

    @Override
    public int run(IoHandlerContext outer) {
        context.outer = outer;
        try {
            return delegate.run(context);
        } finally {
            context.outer = null;
        }
    }

    @Override
    public void prepareToDestroy() {
        delegate.prepareToDestroy();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        return delegate.register(handle);
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return delegate.isCompatible(handleType);
    }

    private final class ReportingContext implements IoHandlerContext {
        IoHandlerContext outer;

        @Override
        public boolean canBlock() {
            boolean canBlock = outer.canBlock();
            if (canBlock) {
                probe.couldBlock = true;
            }
            return canBlock;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return outer.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return outer.deadlineNanos();
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            probe.reportedActiveNanos = Math.max(0, probe.reportedActiveNanos) + Math.max(0, activeNanos);
            outer.reportActiveIoTime(activeNanos);
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return true;
        }
    }
}
