package dev.tailor.eventloop;

import dev.tailor.common.Checks;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.IoEventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code n} {@link IoPriorityEventLoop}s, each on its own thread, as one Netty {@link IoEventLoopGroup}: a drop-in for
 * {@code MultiThreadIoEventLoopGroup(n, ...)} where a server spreads its channels over several loops. {@link #next()}
 * hands out the loops round-robin (so does channel registration); each loop keeps its own unrelated queue, so
 * background work for a channel goes to {@code channel.eventLoop()} cast to {@link IoPriorityEventLoop}, or to a loop
 * from {@link #loops()}. Shutting the group down shuts every loop down; its termination future completes when all have
 * terminated. Thread-safe. Source: our addition for the NBD proxy's several I/O threads (docs/design.md#our-readings).
 */
public final class IoPriorityEventLoopGroup extends AbstractEventExecutorGroup implements IoEventLoopGroup {

    /** The most loops a group may have. */
    public static final int MAX_LOOPS = 1024;

    private final List<IoPriorityEventLoop> loops;
    private final AtomicInteger nextIndex = new AtomicInteger();
    private final Promise<Void> terminationFuture = new DefaultPromise<>(GlobalEventExecutor.INSTANCE);

    /**
     * Starts {@code loopCount} loops with {@code config} (threads from its thread factory).
     *
     * @throws IllegalArgumentException if {@code loopCount} is outside {@code 1 .. 1024} or {@code config} is null
     */
    public IoPriorityEventLoopGroup(int loopCount, EventLoopConfig config) {
        Checks.requireRange("loopCount", loopCount, 1, MAX_LOOPS);
        Checks.requireNonNull("config", config, "an EventLoopConfig, e.g. EventLoopConfig.DEFAULTS");
        List<IoPriorityEventLoop> started = new ArrayList<>(loopCount);
        AtomicInteger terminated = new AtomicInteger();
        for (int i = 0; i < loopCount; i++) {
            IoPriorityEventLoop loop = IoPriorityEventLoop.start(this, config);
            started.add(loop);
            loop.terminationFuture().addListener(f -> {
                if (terminated.incrementAndGet() == loopCount) {
                    terminationFuture.setSuccess(null);
                }
            });
        }
        this.loops = Collections.unmodifiableList(started);
    }

    /** The loops, in round-robin order. */
    public List<IoPriorityEventLoop> loops() {
        return loops;
    }

    /** One metrics snapshot per loop, in the order of {@link #loops()}. */
    public List<EventLoopMetrics> metrics() {
        return loops.stream().map(IoPriorityEventLoop::metrics).toList();
    }

    /** The next loop, round-robin. */
    @Override
    public IoPriorityEventLoop next() {
        return loops.get(Math.floorMod(nextIndex.getAndIncrement(), loops.size()));
    }

    /** @deprecated as {@link io.netty.channel.EventLoopGroup#register(Channel, ChannelPromise)}. */
    @Override
    @Deprecated
    public ChannelFuture register(Channel channel, ChannelPromise promise) {
        return next().register(channel, promise);
    }

    @Override
    public Iterator<EventExecutor> iterator() {
        return Collections.<EventExecutor>unmodifiableList(loops).iterator();
    }

    @Override
    public boolean isShuttingDown() {
        return loops.stream().allMatch(IoPriorityEventLoop::isShuttingDown);
    }

    @Override
    public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        for (IoPriorityEventLoop loop : loops) {
            loop.shutdownGracefully(quietPeriod, timeout, unit);
        }
        return terminationFuture;
    }

    @Override
    public Future<?> terminationFuture() {
        return terminationFuture;
    }

    /**
     * @deprecated as {@link io.netty.util.concurrent.EventExecutorGroup#shutdown()}; use {@link #shutdownGracefully}.
     */
    @Override
    @Deprecated
    public void shutdown() {
        for (IoPriorityEventLoop loop : loops) {
            loop.shutdown();
        }
    }

    @Override
    public boolean isShutdown() {
        return loops.stream().allMatch(IoPriorityEventLoop::isShutdown);
    }

    @Override
    public boolean isTerminated() {
        return loops.stream().allMatch(IoPriorityEventLoop::isTerminated);
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminationFuture.await(timeout, unit);
    }
}
