package dev.tailor.admission;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Drives an {@link AdmissionController} in virtual time, one call per millisecond, from 0 to the end of
 * the run inclusive. At each millisecond t, in this order:
 *
 * <ol>
 *   <li>every ticket in flight completes: {@link Ticket#onSuccess} with a latency of 1 ms;
 *   <li>{@link AdmissionController#onInterval onInterval(t)}; the tickets it admits are in flight, and each
 *       that is a tracked request's is recorded as {@linkplain #tracked admitted} at t;
 *   <li>the test's {@link Tick} issues the requests of that millisecond with {@link #acquireTracked} and
 *       {@link #acquireUntracked} (reads). One admitted at once is in flight and, if tracked, recorded as
 *       admitted at t; one queued waits for a later {@code onInterval}; a refused one fails the run.
 * </ol>
 *
 * <p>A tracked request's wait is measured from a reference time: by default the millisecond it was issued.
 * Not thread-safe; one run per driver.
 */
final class VirtualTimeDriver {

    static final long MS = 1_000_000L;

    /** The requests of one millisecond, issued through the driver. */
    @FunctionalInterface
    interface Tick {
        void issue(long ms);
    }

    /**
     * A tracked request, admitted: its ticket, its reference time, when it was admitted (ns of virtual
     * time), and whether it was queued first rather than admitted at once.
     */
    record Admitted(Ticket ticket, long referenceNanos, long admittedNanos, boolean queued) {

        /** How long after its reference time it was admitted, ns (negative: before it). */
        long waitNanos() {
            return admittedNanos - referenceNanos;
        }
    }

    private final AdmissionController controller;
    private final List<Ticket> inFlight = new ArrayList<>();
    private final Map<Ticket, Long> queuedReference = new IdentityHashMap<>();
    private final List<Admitted> tracked = new ArrayList<>();
    private long nowNanos;
    private boolean ran;

    VirtualTimeDriver(AdmissionController controller) {
        this.controller = controller;
    }

    /** Runs milliseconds 0 to {@code endMs} inclusive, calling {@code tick} at each after the interval call. */
    VirtualTimeDriver run(long endMs, Tick tick) {
        if (ran) {
            throw new IllegalStateException("one run per driver");
        }
        ran = true;
        for (long ms = 0; ms <= endMs; ms++) {
            nowNanos = ms * MS;
            for (Ticket done : inFlight) {
                done.onSuccess(MS);
            }
            inFlight.clear();
            for (Ticket admitted : controller.onInterval(nowNanos).admitted()) {
                inFlight.add(admitted);
                Long reference = queuedReference.remove(admitted);
                if (reference != null) {
                    tracked.add(new Admitted(admitted, reference, nowNanos, true));
                }
            }
            tick.issue(ms);
        }
        return this;
    }

    /** The current millisecond, ns of virtual time. */
    long nowNanos() {
        return nowNanos;
    }

    /** Issues a tracked read whose wait counts from now; returns its ticket. */
    Ticket acquireTracked(int disk, long offsetBytes, long lengthBytes) {
        return acquireTracked(disk, offsetBytes, lengthBytes, nowNanos);
    }

    /** Issues a tracked read whose wait counts from {@code referenceNanos}; returns its ticket. */
    Ticket acquireTracked(int disk, long offsetBytes, long lengthBytes, long referenceNanos) {
        return switch (controller.acquire(disk, IoKind.READ, offsetBytes, lengthBytes)) {
            case Admission.Admitted a -> {
                inFlight.add(a.ticket());
                tracked.add(new Admitted(a.ticket(), referenceNanos, nowNanos, false));
                yield a.ticket();
            }
            case Admission.Queued q -> {
                queuedReference.put(q.ticket(), referenceNanos);
                yield q.ticket();
            }
            case Admission.Refused r -> throw new AssertionError(r.message());
        };
    }

    /** Issues a read that is not recorded. */
    void acquireUntracked(int disk, long offsetBytes, long lengthBytes) {
        switch (controller.acquire(disk, IoKind.READ, offsetBytes, lengthBytes)) {
            case Admission.Admitted a -> inFlight.add(a.ticket());
            case Admission.Queued q -> {}
            case Admission.Refused r -> throw new AssertionError(r.message());
        }
    }

    /** The tracked requests admitted so far, in order of admission. */
    List<Admitted> tracked() {
        return Collections.unmodifiableList(tracked);
    }

    /** The tickets of tracked requests still queued. */
    Set<Ticket> trackedStillQueued() {
        return Collections.unmodifiableSet(queuedReference.keySet());
    }

    /**
     * The tests' configuration on this driver: {@code budgetPerInterval} cost units per interval of {@code
     * intervalNanos}, a byte costing one unit (reads and writes alike, no per-request cost), segments and
     * blocks of {@code segmentBytes}, queues that never refuse and no borrowing; the rest as set.
     */
    static AdmissionConfig.Builder byteCostConfig(long budgetPerInterval, long intervalNanos, long segmentBytes) {
        return AdmissionConfig.builder()
                .capacityCostUnitsPerSecond(budgetPerInterval * 1e9 / intervalNanos)
                .segmentSizeBytes(segmentBytes)
                .blockSizeBytes(segmentBytes)
                .costModel(new IoCostModel(0, 1, 0, 1))
                .queueCapacityPerSegment(1_000_000)
                .borrowing(false);
    }

    /** The largest of {@code values}, e.g. waits in ns. */
    static long max(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    /** Whether ticket ids listed in order of admission never go down: no request admitted before an older one. */
    static boolean inArrivalOrder(List<Long> idsByAdmission) {
        for (int i = 1; i < idsByAdmission.size(); i++) {
            if (idsByAdmission.get(i) < idsByAdmission.get(i - 1)) {
                return false;
            }
        }
        return true;
    }
}
