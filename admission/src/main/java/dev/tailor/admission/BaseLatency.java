package dev.tailor.admission;

import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The least backend latency seen for each kind and size of request, as an estimate of the unqueued
 * service time that {@link LatencyAdaptiveBudget} divides latencies by, for when the backend's own
 * service time is not known (a proxy in front of a real device). The idea is FAST TCP's base RTT (Wei,
 * Jin, Low and Hegde, "FAST TCP: Motivation, Architecture, Algorithms, Performance", IEEE/ACM
 * Transactions on Networking 14(6), 2006, section IV): the least delay seen is the delay without
 * queueing. The storage simulator's ablation {@code measured-base-latency} uses it; measured there, it
 * is well below the mean service time when service times vary, so the budgets stay near their shares
 * (docs/admission.md, Estimating the unqueued service time without knowing it). Not used by the NBD
 * proxy for that reason.
 *
 * <p>Requests are grouped by kind and by size rounded down to a power of two (4 KiB and 7 KiB share a
 * class, 8 KiB starts the next), so a large request is not compared with a small one's latency. Our
 * reading where FAST TCP is silent: the classes; and that the minimum is kept for the proxy's lifetime,
 * as FAST TCP keeps it for a connection's. A backend that becomes slower for good then looks congested
 * (its slowdown stays above 1), which only holds a budget nearer its floor; one whose least latency
 * was an outlier (a page-cache hit) does the same. Thread-safe: {@link #slowdown} may run on any
 * thread.
 */
/*
 * Maintainer note. One AtomicLongArray slot per (kind, log2 size) holds the least latency in ns, Long.MAX_VALUE
 * while none was seen; the update is a CAS loop that only ever lowers a slot, so concurrent recorders
 * converge on the least of their samples. A zero latency (a clock that did not move) is kept as 1 ns so the
 * slowdown stays finite.
 */
public final class BaseLatency {

    /** Size classes: 2^0 .. 2^63 bytes, every length a long can hold. */
    private static final int CLASSES = 64;

    private final AtomicLongArray leastNanos = new AtomicLongArray(2 * CLASSES);

    /** No latency seen yet: the first request of each class is its own base. */
    public BaseLatency() {
        for (int i = 0; i < leastNanos.length(); i++) {
            leastNanos.set(i, Long.MAX_VALUE);
        }
    }

    /**
     * Records one completed request and returns its slowdown against the least latency of its class,
     * itself included (so the first of a class, and any new least, has slowdown 1).
     *
     * @param kind          read or write
     * @param lengthBytes   its length, bytes, ≥ 1
     * @param latencyNanos  its backend latency, ns; a negative one (a clock that stepped back) counts as 0
     * @return latency ÷ least latency of its class, dimensionless, ≥ 1
     * @throws IllegalArgumentException when {@code lengthBytes} is below 1
     */
    public double slowdown(IoKind kind, long lengthBytes, long latencyNanos) {
        if (lengthBytes < 1) {
            throw new IllegalArgumentException("lengthBytes: " + lengthBytes + " (expected: >= 1)");
        }
        long latency = Math.max(1, latencyNanos);
        int slot = kind.ordinal() * CLASSES + (63 - Long.numberOfLeadingZeros(lengthBytes));
        long least = leastNanos.get(slot);
        while (latency < least) {
            if (leastNanos.compareAndSet(slot, least, latency)) {
                least = latency;
                break;
            }
            least = leastNanos.get(slot);
        }
        return (double) latency / least;
    }

    /**
     * The least latency seen for the class of {@code kind} and {@code lengthBytes}, ns, or empty when none.
     *
     * @throws IllegalArgumentException when {@code lengthBytes} is below 1
     */
    public OptionalLong leastNanos(IoKind kind, long lengthBytes) {
        if (lengthBytes < 1) {
            throw new IllegalArgumentException("lengthBytes: " + lengthBytes + " (expected: >= 1)");
        }
        long least = leastNanos.get(kind.ordinal() * CLASSES + (63 - Long.numberOfLeadingZeros(lengthBytes)));
        return least == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(least);
    }
}
