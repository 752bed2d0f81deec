package dev.tailor.sim.storage;

import dev.tailor.sim.des.EventCalendar;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The shared backend of the storage simulator: {@code parallelism} channels served first come, first
 * served, each request taking the service time drawn for it at arrival ({@link BackendModel}). A
 * request submitted while every channel is busy waits in one FIFO queue.
 *
 * <p>Contract: the latency of each request equals what {@link BackendModel#replay} gives for the same
 * submissions and service times (k-server FCFS), which a test checks. Not thread-safe.
 */
/*
 * Maintainer note. One reusable event per channel, rescheduled for each request it serves, and a
 * stack of free channels: a submission or completion is O(log pending events) in the calendar and
 * allocates nothing. On completion the channel takes the next request of the backend's own queue
 * *before* the listener hears of the completion, because a policy that dispatches on completion
 * (mclock) would otherwise take the freed channel ahead of requests already waiting here. The
 * listener is told before every change of the busy count so that the run's time integrals
 * (utilisation, capacity idle while work waits) are exact to the nanosecond.
 */
final class Backend {

    /** Told before the number of busy channels changes, with the time, so time integrals stay exact. */
    interface Listener {
        void beforeChange(long nowNanos);

        void completed(IoRequest request, long nowNanos);
    }

    private final class Channel extends EventCalendar.Event {
        private final int index;
        private IoRequest request;

        Channel(int index) {
            this.index = index;
        }

        @Override
        protected void fire(long nowNanos) {
            IoRequest done = request;
            listener.beforeChange(nowNanos);
            busy--;
            // The backend's own queue goes first: a policy that dispatches on completion must not
            // overtake requests that already wait here.
            IoRequest next = queue.pollFirst();
            if (next != null) {
                start(this, next, nowNanos);
            } else {
                request = null;
                free[freeCount++] = index;
            }
            done.completionNanos = nowNanos;
            listener.completed(done, nowNanos);
        }
    }

    private final EventCalendar calendar;
    private final Listener listener;
    private final Channel[] channels;
    private final int[] free;
    private int freeCount;
    private int busy;
    private final ArrayDeque<IoRequest> queue = new ArrayDeque<>();

    Backend(EventCalendar calendar, int parallelism, Listener listener) {
        this.calendar = calendar;
        this.listener = listener;
        this.channels = new Channel[parallelism];
        this.free = new int[parallelism];
        for (int i = parallelism - 1; i >= 0; i--) {
            channels[i] = new Channel(i);
            free[freeCount++] = i;
        }
    }

    /** Sends {@code request} to the backend at {@code nowNanos}. */
    void submit(IoRequest request, long nowNanos) {
        if (freeCount > 0) {
            start(channels[free[--freeCount]], request, nowNanos);
        } else {
            queue.addLast(request);
        }
    }

    private void start(Channel channel, IoRequest request, long nowNanos) {
        listener.beforeChange(nowNanos);
        busy++;
        channel.request = request;
        calendar.schedule(channel, nowNanos + request.serviceNanos);
    }

    /** Channels serving a request now. */
    int busy() {
        return busy;
    }

    int parallelism() {
        return channels.length;
    }

    /** Requests waiting for a channel. */
    int queued() {
        return queue.size();
    }

    /** Every request in service or waiting here. */
    void forEachPending(Consumer<IoRequest> action) {
        for (Channel c : channels) {
            if (c.request != null) {
                action.accept(c.request);
            }
        }
        queue.forEach(action);
    }
}
