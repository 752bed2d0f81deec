package dev.tailor.nbd.server;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import java.util.function.LongSupplier;

/**
 * A request's completion that remembers when it was completed, on whichever thread completed it (a file I/O thread,
 * an upstream connection's loop): the request-timing clock's reading and the connection loop's unrelated busy time
 * ({@code IoPriorityEventLoop#unrelatedBusyNanos}) at that instant. The connection's listener runs later, on its
 * loop; the two readings tell it how long the request was on the backend, how long the completion waited for the loop
 * (wall time) and how much unrelated work the loop did meanwhile (per-request loop tracing, docs/nbd.md "Loop
 * tracing").
 *
 * <p>Threads: completed from any thread; the stamps are plain fields written before the promise's result is
 * published, so the listeners (which run after they see the result) read them. When two threads race to complete
 * it, the stamps may come from the loser, a moment apart from the winner's: harmless for a measurement.
 */
final class TracedPromise extends DefaultPromise<ByteBuf> {

    private final LongSupplier nanoClock;
    private final LongSupplier unrelatedBusyNanos;
    private long completedNanos;
    private long completedUnrelatedNanos;

    /**
     * @param executor           the connection's event loop, where the listeners run
     * @param nanoClock          the request-timing clock ({@link IoMetrics#nowNanos()})
     * @param unrelatedBusyNanos the loop's unrelated busy time, any thread ({@code () -> 0} for another loop)
     */
    TracedPromise(EventExecutor executor, LongSupplier nanoClock, LongSupplier unrelatedBusyNanos) {
        super(executor);
        this.nanoClock = nanoClock;
        this.unrelatedBusyNanos = unrelatedBusyNanos;
    }

    /** The request-timing clock when it was completed; valid once it is done. */
    long completedNanos() {
        return completedNanos;
    }

    /** The loop's unrelated busy time when it was completed; valid once it is done. */
    long completedUnrelatedNanos() {
        return completedUnrelatedNanos;
    }

    private void stamp() {
        if (!isDone()) {
            completedNanos = nanoClock.getAsLong();
            completedUnrelatedNanos = unrelatedBusyNanos.getAsLong();
        }
    }

    @Override
    public Promise<ByteBuf> setSuccess(ByteBuf result) {
        stamp();
        return super.setSuccess(result);
    }

    @Override
    public boolean trySuccess(ByteBuf result) {
        stamp();
        return super.trySuccess(result);
    }

    @Override
    public Promise<ByteBuf> setFailure(Throwable cause) {
        stamp();
        return super.setFailure(cause);
    }

    @Override
    public boolean tryFailure(Throwable cause) {
        stamp();
        return super.tryFailure(cause);
    }
}
