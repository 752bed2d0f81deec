package dev.tailor.admission;

import java.util.Arrays;
import java.util.OptionalLong;

/**
 * The least backend latency seen for each kind and size of request, as an estimate of the unqueued
 * service time that {@link LatencyAdaptiveBudget} divides latencies by, for when the backend's own
 * service time is not known (a proxy in front of a real device). The idea is FAST TCP's base RTT (Wei,
 * Jin, Low and Hegde, "FAST TCP: Motivation, Architecture, Algorithms, Performance", IEEE/ACM
 * Transactions on Networking 14(6), 2006, section IV): the least delay seen is the delay without
 * queueing. The storage simulator's ablation {@code measured-base-latency} uses it; measured there, it
 * is well below the mean service time when service times vary, so the budgets stay near their shares
 * (docs/admission-record.md, Estimating the unqueued service time without knowing it). Not used by the NBD
 * proxy for that reason.
 *
 * <p>Requests are grouped by kind and by size rounded down to a power of two (4 KiB and 7 KiB share a
 * class, 8 KiB starts the next), so a large request is not compared with a small one's latency. Our
 * reading where FAST TCP is silent: the classes; and that the minimum is kept for good, as FAST TCP
 * keeps it for a connection's life. Not thread-safe: its caller serialises access.
 */
public final class BaseLatency {

    /** Size classes: 2^0 .. 2^63 bytes, every length a long can hold. */
    private static final int CLASSES = 64;

    /** Per (kind, log2 size), the least latency seen, ns; {@code Long.MAX_VALUE} while none was. */
    private final long[] leastNanos = new long[2 * CLASSES];

    /** No latency seen yet: the first request of each class is its own base. */
    public BaseLatency() {
        Arrays.fill(leastNanos, Long.MAX_VALUE);
    }

    /**
     * Records one completed request and returns the least latency of its class, itself included (so the
     * first of a class, and any new least, is its own base).
     *
     * @param kind         read or write
     * @param lengthBytes  its length, bytes, ≥ 1
     * @param latencyNanos its backend latency, ns; below 1 (a clock that did not move or stepped back)
     *                     counts as 1, so a slowdown over the base stays finite
     * @return the least latency of its class so far, ns, ≥ 1
     * @throws IllegalArgumentException when {@code lengthBytes} is below 1
     */
    public long record(IoKind kind, long lengthBytes, long latencyNanos) {
        int slot = slot(kind, lengthBytes);
        leastNanos[slot] = Math.min(leastNanos[slot], Math.max(1, latencyNanos));
        return leastNanos[slot];
    }

    /**
     * The least latency seen for the class of {@code kind} and {@code lengthBytes}, ns, or empty when none.
     *
     * @throws IllegalArgumentException when {@code lengthBytes} is below 1
     */
    public OptionalLong leastNanos(IoKind kind, long lengthBytes) {
        long least = leastNanos[slot(kind, lengthBytes)];
        return least == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(least);
    }

    private static int slot(IoKind kind, long lengthBytes) {
        if (lengthBytes < 1) {
            throw new IllegalArgumentException("lengthBytes: " + lengthBytes + " (expected: >= 1)");
        }
        return kind.ordinal() * CLASSES + (63 - Long.numberOfLeadingZeros(lengthBytes));
    }
}
