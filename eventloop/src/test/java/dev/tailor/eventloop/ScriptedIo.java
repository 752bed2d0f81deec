package dev.tailor.eventloop;

import dev.tailor.testkit.VirtualClock;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A transport on virtual time, in place of NIO: I/O events "arrive" at scripted instants, and a poll dispatches those
 * that arrived by the time it looks (up to {@link #MAX_EVENTS_PER_POLL}), each taking its scripted cost of virtual
 * time. A poll allowed to block (by the
 * loop's {@link IoHandlerContext}) moves the clock to the next arrival, the next Netty timer or a wakeup, whichever
 * is first, or to the horizon when there is none. Everything the real transport's select would do, in order, with no
 * thread and no sleep; the loop under test is the real one.
 */
final class ScriptedIo implements IoHandlerFactory {

    /** Events one poll dispatches at most, as NIO handles each ready channel once per select (16 reads at most). */
    static final int MAX_EVENTS_PER_POLL = 16;

    /** An I/O event: it becomes ready at {@code atNanos}; dispatching it takes {@code costNanos}. */
    record Arrival(long atNanos, long costNanos, Runnable onHandled, long seq) {}

    /** What happened to one event: ready, seen by a poll (the poll's start), handled (its dispatch done). */
    record Handled(long arrivedNanos, long noticedNanos, long handledNanos) {
        long noticeDelayNanos() {
            return noticedNanos - arrivedNanos;
        }

        long dispatchDelayNanos() {
            return handledNanos - arrivedNanos;
        }
    }

    private final VirtualClock clock;
    private final PriorityQueue<Arrival> arrivals = new PriorityQueue<>((a, b) ->
            a.atNanos() != b.atNanos() ? Long.compare(a.atNanos(), b.atNanos()) : Long.compare(a.seq(), b.seq()));
    private final List<Handled> handled = new ArrayList<>();
    private volatile boolean wakeupRequested;
    private long seq;
    private long horizonNanos = Long.MAX_VALUE;
    private int polls;
    private int blockingPolls;
    private long blockedNanos;

    ScriptedIo(VirtualClock clock) {
        this.clock = clock;
    }

    /** An event ready at {@code atNanos}, taking {@code costNanos} to dispatch, then running {@code onHandled}. */
    void arrive(long atNanos, long costNanos, Runnable onHandled) {
        arrivals.add(new Arrival(atNanos, costNanos, onHandled, seq++));
    }

    /** Where a poll with nothing to wait for stops waiting (the end of the test's run). */
    void horizon(long atNanos) {
        horizonNanos = atNanos;
    }

    List<Handled> handled() {
        return handled;
    }

    int polls() {
        return polls;
    }

    int blockingPolls() {
        return blockingPolls;
    }

    long blockedNanos() {
        return blockedNanos;
    }

    @Override
    public IoHandler newHandler(ThreadAwareExecutor executor) {
        return new IoHandler() {
            @Override
            public int run(IoHandlerContext context) {
                return poll(context);
            }

            @Override
            public IoRegistration register(IoHandle handle) {
                throw new UnsupportedOperationException("scripted I/O has no channels");
            }

            @Override
            public void wakeup() {
                wakeupRequested = true;
            }

            @Override
            public boolean isCompatible(Class<? extends IoHandle> handleType) {
                return false;
            }
        };
    }

    private int poll(IoHandlerContext context) {
        polls++;
        long now = clock.nanos();
        boolean ready = !arrivals.isEmpty() && arrivals.peek().atNanos() <= now;
        if (!ready && !wakeupRequested && context.canBlock()) {
            long delayNanos = context.delayNanos(now);
            long until = delayNanos >= Long.MAX_VALUE - now ? Long.MAX_VALUE : now + delayNanos;
            if (!arrivals.isEmpty()) {
                until = Math.min(until, arrivals.peek().atNanos());
            }
            until = Math.max(now, Math.min(until, horizonNanos));
            blockingPolls++;
            blockedNanos += until - now;
            clock.advanceTo(until);
        }
        wakeupRequested = false;
        long start = clock.nanos();
        int n = 0;
        while (n < MAX_EVENTS_PER_POLL && !arrivals.isEmpty() && arrivals.peek().atNanos() <= start) {
            Arrival a = arrivals.poll();
            clock.advance(a.costNanos());
            handled.add(new Handled(a.atNanos(), start, clock.nanos()));
            if (a.onHandled() != null) {
                a.onHandled().run();
            }
            n++;
        }
        if (context.shouldReportActiveIoTime()) {
            context.reportActiveIoTime(clock.nanos() - start);
        }
        return n;
    }
}
