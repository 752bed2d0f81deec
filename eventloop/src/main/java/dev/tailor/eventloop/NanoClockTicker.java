package dev.tailor.eventloop;

import io.netty.util.concurrent.Ticker;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Netty's {@link Ticker} over the loop's nanosecond clock, so Netty's timers on the loop ({@code schedule},
 * {@code scheduleAtFixedRate}) run on the same time as the policy, virtual time included.
 *
 * <p>Netty's convention (as its system ticker): {@link #nanoTime()} counts from {@link #initialNanoTime()}, while a
 * transport asks {@code IoHandlerContext.delayNanos(now)} with an absolute reading of the clock
 * ({@code System.nanoTime()} for NIO), from which Netty subtracts {@link #initialNanoTime()}. So
 * {@code nanoTime() = clock − initial}.
 */
final class NanoClockTicker implements Ticker {

    private final LongSupplier nanoClock;
    private final long initialNanoTime;

    NanoClockTicker(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.initialNanoTime = nanoClock.getAsLong();
    }

    @Override
    public long initialNanoTime() {
        return initialNanoTime;
    }

    @Override
    public long nanoTime() {
        return nanoClock.getAsLong() - initialNanoTime;
    }

    /** Real sleep: the loop never sleeps through its ticker (Netty's shutdown waits on its own). */
    @Override
    public void sleep(long delay, TimeUnit unit) throws InterruptedException {
        unit.sleep(delay);
    }
}
