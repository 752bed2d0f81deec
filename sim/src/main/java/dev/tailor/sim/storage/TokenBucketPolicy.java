package dev.tailor.sim.storage;

import dev.tailor.sim.des.EventCalendar;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * {@code token-bucket}: one token bucket per proxy, shared by all its tenants, refilled
 * continuously at the proxy's capacity (cost units per second) and holding at most one interval's
 * worth ({@code depth = capacity × Δ}). A request leaves when the bucket holds its cost and nobody
 * is ahead of it; otherwise it waits in one FIFO queue. It meters the backend's throughput but not
 * who gets it: a burst queues in front of steady tenants here instead of at the backend.
 *
 * <p>Contract: over any span of {@code t} ns the cost dispatched is at most
 * {@code depth + capacity × t ÷ 10⁹} (plus, for a request costing more than the depth, which leaves
 * when the bucket is full, its excess). Requests leave in arrival order.
 */
/*
 * Maintainer note. The bucket is refilled lazily (level + rate × elapsed, capped at the depth) and a
 * wake-up event is scheduled for the exact nanosecond the head request's cost will be there (rounded
 * up), so the simulation needs no ticks and the metering is exact to a nanosecond.
 */
final class TokenBucketPolicy implements StoragePolicy {

    private final Proxy proxy;
    private final double ratePerNano;
    private final double depthCostUnits;
    private final ArrayDeque<IoRequest> queue = new ArrayDeque<>();
    private final EventCalendar.Event wake = new EventCalendar.Event() {
        @Override
        protected void fire(long nowNanos) {
            release(nowNanos);
        }
    };
    private double tokens;
    private long refilledNanos;

    TokenBucketPolicy(Proxy proxy) {
        this.proxy = proxy;
        this.ratePerNano = proxy.capacityCostUnitsPerSecond() / 1e9;
        this.depthCostUnits = Math.max(1, proxy.capacityCostUnitsPerSecond() * proxy.intervalNanos() / 1e9);
        this.tokens = depthCostUnits;
    }

    double depthCostUnits() {
        return depthCostUnits;
    }

    private void refill(long nowNanos) {
        tokens = Math.min(depthCostUnits, tokens + (nowNanos - refilledNanos) * ratePerNano);
        refilledNanos = nowNanos;
    }

    private double needed(IoRequest r) {
        return Math.min(r.costUnits, depthCostUnits);
    }

    @Override
    public void arrive(IoRequest request, long nowNanos) {
        refill(nowNanos);
        if (queue.isEmpty() && tokens >= needed(request)) {
            tokens -= request.costUnits;
            proxy.dispatch(request, nowNanos);
            return;
        }
        queue.addLast(request);
        if (queue.size() == 1) {
            scheduleWake(nowNanos);
        }
    }

    private void release(long nowNanos) {
        refill(nowNanos);
        while (!queue.isEmpty() && tokens >= needed(queue.peekFirst())) {
            IoRequest r = queue.pollFirst();
            tokens -= r.costUnits;
            proxy.dispatch(r, nowNanos);
        }
        if (!queue.isEmpty()) {
            scheduleWake(nowNanos);
        }
    }

    private void scheduleWake(long nowNanos) {
        double missing = needed(queue.peekFirst()) - tokens;
        long delay = Math.max(1, (long) Math.ceil(missing / ratePerNano));
        proxy.calendar().schedule(wake, nowNanos + delay);
    }

    @Override
    public void forEachHeld(Consumer<IoRequest> action) {
        queue.forEach(action);
    }
}
