package dev.tailor.sim.storage;

import dev.tailor.admission.SegmentMap;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * {@code mclock}: dmClock-style scheduling per segment [1, 2]. Every segment of the proxy's disks is
 * a client with a reservation {@code r} and a weight {@code w} (cost units per second) and no limit.
 * A request gets tags at arrival, {@code R = max(R' + cost/r, now)} and {@code P = max(P' + cost/w,
 * now)} (R', P' the client's previous tags). While fewer than {@code depth} requests are at the
 * backend, the proxy sends the head request with the smallest R tag if that tag is due
 * (<em>reservation phase</em>), else the head request with the smallest P tag (<em>weight phase</em>),
 * and a weight-phase dispatch moves the client's later R tags back by {@code cost/r}, so that service
 * beyond the reservation is not charged against it.
 *
 * <p>Our reading of the parameters: a segment's reservation and weight are its disk's commitment ÷
 * the disk's segments (striping spreads a disk's load evenly), with the reservations scaled down
 * together when they add up to more than the proxy's capacity, as mClock requires for reservations
 * to be met; {@code depth} is the backend's parallelism, so the backend is kept full without a queue
 * of its own that would undo the ordering.
 *
 * <p>Contract: among the head requests, one whose R tag is due always goes before any that is not;
 * the scheduler is work-conserving up to {@code depth} (it never holds a request while fewer than
 * {@code depth} are outstanding). Within a segment, requests leave in arrival order.
 */
/*
 * Maintainer note. The R-tag adjustment of weight-phase dispatches is kept as one offset per client
 * (effective R = stored R − offset) instead of rewriting every queued tag, so a dispatch costs
 * O(active clients) for the two minimum scans and nothing per queued request. Active clients (those
 * with queued requests) are kept in a dense array with swap-removal; a proxy has tens to hundreds of
 * segments, where a scan beats a heap that must be updated on every tag change.
 *
 * [1] A. Gulati, A. Merchant, P. Varman, "mClock: Handling Throughput Variability for Hypervisor IO
 *     Scheduling", OSDI 2010.
 * [2] Ceph's dmclock library (distributed mClock), the reservation/weight/limit tags per client.
 */
final class MClockPolicy implements StoragePolicy {

    private final Proxy proxy;
    private final SegmentMap segments;
    private final int depth;
    private final double[] nanosPerCostReservation;
    private final double[] nanosPerCostWeight;
    private final double[] lastReservationTag;
    private final double[] lastProportionTag;
    private final double[] reservationOffset;
    private final java.util.List<ArrayDeque<IoRequest>> queues;
    private final int[] active;
    private final int[] activeSlot;
    private int activeCount;
    private int outstanding;
    private long reservationDispatchedCostUnits;
    private long dispatchedCostUnits;

    MClockPolicy(Proxy proxy) {
        this.proxy = proxy;
        StorageScenario s = proxy.setup().scenario();
        this.segments = new SegmentMap(proxy.disks(), s.segmentSizeBytes(), s.blockSizeBytes());
        this.depth = proxy.backendParallelism();
        int n = segments.segmentCount();
        double total = 0;
        for (StorageSetup.Tenant t : proxy.tenants()) {
            total += t.commitmentCostUnitsPerSecond();
        }
        double scale = total > proxy.capacityCostUnitsPerSecond() ? proxy.capacityCostUnitsPerSecond() / total : 1;
        nanosPerCostReservation = new double[n];
        nanosPerCostWeight = new double[n];
        for (int d = 0; d < proxy.tenants().size(); d++) {
            double perSegment = proxy.tenants().get(d).commitmentCostUnitsPerSecond() / segments.segmentCount(d);
            for (int k = 0; k < segments.segmentCount(d); k++) {
                int seg = segments.firstSegment(d) + k;
                nanosPerCostReservation[seg] = 1e9 / Math.max(1e-9, perSegment * scale);
                nanosPerCostWeight[seg] = 1e9 / Math.max(1e-9, perSegment);
            }
        }
        lastReservationTag = new double[n];
        lastProportionTag = new double[n];
        reservationOffset = new double[n];
        queues = new java.util.ArrayList<>(java.util.Collections.nCopies(n, (ArrayDeque<IoRequest>) null));
        active = new int[n];
        activeSlot = new int[n];
        java.util.Arrays.fill(activeSlot, -1);
    }

    /** Share of dispatched cost sent in the reservation phase, in [0, 1] (NaN before any). */
    double reservationShare() {
        return dispatchedCostUnits == 0 ? Double.NaN : reservationDispatchedCostUnits / (double) dispatchedCostUnits;
    }

    @Override
    public void arrive(IoRequest request, long nowNanos) {
        int c = segments.segmentOf(request.disk, request.offsetBytes);
        request.client = c;
        double effective = Math.max(lastReservationTag[c] - reservationOffset[c]
                + request.costUnits * nanosPerCostReservation[c], nowNanos);
        request.reservationTagNanos = effective + reservationOffset[c];
        lastReservationTag[c] = request.reservationTagNanos;
        request.proportionTagNanos = Math.max(lastProportionTag[c] + request.costUnits * nanosPerCostWeight[c],
                nowNanos);
        lastProportionTag[c] = request.proportionTagNanos;
        ArrayDeque<IoRequest> q = queues.get(c);
        if (q == null) {
            q = new ArrayDeque<>();
            queues.set(c, q);
        }
        q.addLast(request);
        if (activeSlot[c] < 0) {
            activeSlot[c] = activeCount;
            active[activeCount++] = c;
        }
        pump(nowNanos);
    }

    @Override
    public void completed(IoRequest request, long nowNanos) {
        outstanding--;
        pump(nowNanos);
    }

    private void pump(long nowNanos) {
        while (outstanding < depth && activeCount > 0) {
            int best = -1;
            double bestTag = Double.POSITIVE_INFINITY;
            for (int i = 0; i < activeCount; i++) {
                int c = active[i];
                double tag = queues.get(c).peekFirst().reservationTagNanos - reservationOffset[c];
                if (tag < bestTag) {
                    bestTag = tag;
                    best = c;
                }
            }
            boolean reservation = bestTag <= nowNanos;
            if (!reservation) {
                bestTag = Double.POSITIVE_INFINITY;
                for (int i = 0; i < activeCount; i++) {
                    int c = active[i];
                    double tag = queues.get(c).peekFirst().proportionTagNanos;
                    if (tag < bestTag) {
                        bestTag = tag;
                        best = c;
                    }
                }
            }
            IoRequest r = queues.get(best).pollFirst();
            if (queues.get(best).isEmpty()) {
                int slot = activeSlot[best];
                int last = active[--activeCount];
                active[slot] = last;
                activeSlot[last] = slot;
                activeSlot[best] = -1;
            }
            if (reservation) {
                reservationDispatchedCostUnits += r.costUnits;
            } else {
                reservationOffset[best] += r.costUnits * nanosPerCostReservation[best];
            }
            dispatchedCostUnits += r.costUnits;
            outstanding++;
            proxy.dispatch(r, nowNanos);
        }
    }

    @Override
    public void forEachHeld(Consumer<IoRequest> action) {
        for (ArrayDeque<IoRequest> q : queues) {
            if (q != null) {
                q.forEach(action);
            }
        }
    }
}
