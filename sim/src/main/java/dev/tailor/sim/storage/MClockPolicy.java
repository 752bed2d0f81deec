package dev.tailor.sim.storage;

import dev.tailor.admission.SegmentMap;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * {@code mclock}: dmClock-style scheduling per segment [1, 2]. Every segment of the proxy's disks is
 * a client with a reservation {@code r} and a weight {@code w} (cost units per second) and no limit.
 * {@code mclock-per-client}: the same with one client per disk (its tenant, as the mClock paper's
 * clients are VMs), reservation and weight the disk's whole commitment.
 * A client's head request is tagged when it becomes the head: {@code R = max(R' + cost/r, now)} and
 * {@code P = max(P' + cost/w, now)}, R' and P' the tags of the client's previous request. While
 * fewer than {@code depth} requests are at the backend, the proxy sends the head with the smallest R
 * tag if that tag is due (<em>reservation phase</em>), else the head with the smallest P tag
 * (<em>weight phase</em>); a weight-phase dispatch takes {@code cost/r} back off the client's R', so
 * that service beyond the reservation is not charged against it.
 *
 * <p>Our reading of the parameters: a segment's reservation and weight are its disk's commitment ÷
 * the disk's segments (striping spreads a disk's load evenly), with the reservations scaled down
 * together when they add up to more than the proxy's capacity, as mClock requires for reservations
 * to be met; {@code depth} is the backend's parallelism, so the backend is kept full without a queue
 * of its own that would undo the ordering.
 *
 * <p>Contract: a head whose R tag is due always goes before any head whose tag is not, and no tag is
 * ever earlier than the moment its request became the head, so a backlogged client cannot bank
 * reservation credit; the scheduler is work-conserving up to {@code depth} (it never holds a request
 * while fewer than {@code depth} are outstanding). Within a segment, requests leave in arrival order.
 */
/*
 * Maintainer note. Tags are computed at the head, not at arrival (Ceph dmclock's "delayed tag
 * calculation"). Tagging at arrival and then moving every queued R tag back by cost/r on each
 * weight-phase dispatch, as the mClock paper describes, lets a client that is served far beyond its
 * reservation push the tags of its long queue into the past (each queued tag was set far ahead at
 * arrival, then moved back once per dispatch while it waited): it then wins every reservation phase.
 * With head tagging the adjustment is one subtraction from R', and max(…, now) keeps it honest.
 *
 * A dispatch costs O(active clients) for the two minimum scans. Active clients (those with queued
 * requests) are kept in a dense array with swap-removal; a proxy has tens to hundreds of segments,
 * where a scan beats a heap that must be updated on every tag change.
 *
 * [1] A. Gulati, A. Merchant, P. Varman, "mClock: Handling Throughput Variability for Hypervisor IO
 *     Scheduling", OSDI 2010.
 * [2] Ceph's dmclock library (distributed mClock), reservation/weight/limit tags per client.
 */
final class MClockPolicy implements StoragePolicy {

    private final Proxy proxy;
    private final SegmentMap segments;
    private final boolean perClient;
    private final int depth;
    private final double[] nanosPerCostReservation;
    private final double[] nanosPerCostWeight;
    /** R' and P' per client: the tags of its last tagged request, ns. */
    private final double[] lastReservationTag;

    private final double[] lastProportionTag;
    private final java.util.List<ArrayDeque<IoRequest>> queues;
    private final int[] active;
    private final int[] activeSlot;
    private int activeCount;
    private int outstanding;
    private long reservationDispatchedCostUnits;
    private long dispatchedCostUnits;

    /**
     * @param perClient one client per disk (its tenant), with the disk's whole commitment as reservation
     *                  and weight ({@code mclock-per-client}); false: one client per segment ({@code mclock})
     */
    MClockPolicy(Proxy proxy, boolean perClient) {
        this.proxy = proxy;
        StorageScenario s = proxy.setup().scenario();
        this.segments = new SegmentMap(proxy.disks(), s.segmentSizeBytes(), s.blockSizeBytes());
        this.perClient = perClient;
        this.depth = proxy.backendParallelism();
        int n = perClient ? proxy.tenants().size() : segments.segmentCount();
        double total = 0;
        for (StorageSetup.Tenant t : proxy.tenants()) {
            total += t.commitmentCostUnitsPerSecond();
        }
        double scale = total > proxy.capacityCostUnitsPerSecond() ? proxy.capacityCostUnitsPerSecond() / total : 1;
        nanosPerCostReservation = new double[n];
        nanosPerCostWeight = new double[n];
        for (int d = 0; d < proxy.tenants().size(); d++) {
            if (perClient) {
                double commitment = proxy.tenants().get(d).commitmentCostUnitsPerSecond();
                nanosPerCostReservation[d] = 1e9 / Math.max(1e-9, commitment * scale);
                nanosPerCostWeight[d] = 1e9 / Math.max(1e-9, commitment);
                continue;
            }
            double perSegment = proxy.tenants().get(d).commitmentCostUnitsPerSecond() / segments.segmentCount(d);
            for (int k = 0; k < segments.segmentCount(d); k++) {
                int seg = segments.firstSegment(d) + k;
                nanosPerCostReservation[seg] = 1e9 / Math.max(1e-9, perSegment * scale);
                nanosPerCostWeight[seg] = 1e9 / Math.max(1e-9, perSegment);
            }
        }
        lastReservationTag = new double[n];
        lastProportionTag = new double[n];
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
        int c = perClient ? request.disk : segments.segmentOf(request.disk, request.offsetBytes);
        request.client = c;
        ArrayDeque<IoRequest> q = queues.get(c);
        if (q == null) {
            q = new ArrayDeque<>();
            queues.set(c, q);
        }
        q.addLast(request);
        if (q.size() == 1) {
            tagHead(c, request, nowNanos);
            activeSlot[c] = activeCount;
            active[activeCount++] = c;
        }
        pump(nowNanos);
    }

    /** Tags {@code head}, which just became the head of client {@code c}'s queue. */
    private void tagHead(int c, IoRequest head, long nowNanos) {
        head.reservationTagNanos =
                Math.max(lastReservationTag[c] + head.costUnits * nanosPerCostReservation[c], nowNanos);
        head.proportionTagNanos = Math.max(lastProportionTag[c] + head.costUnits * nanosPerCostWeight[c], nowNanos);
        lastReservationTag[c] = head.reservationTagNanos;
        lastProportionTag[c] = head.proportionTagNanos;
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
                double tag = queues.get(c).peekFirst().reservationTagNanos;
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
            ArrayDeque<IoRequest> q = queues.get(best);
            IoRequest r = q.pollFirst();
            if (reservation) {
                reservationDispatchedCostUnits += r.costUnits;
            } else {
                lastReservationTag[best] -= r.costUnits * nanosPerCostReservation[best];
            }
            if (q.isEmpty()) {
                int slot = activeSlot[best];
                int last = active[--activeCount];
                active[slot] = last;
                activeSlot[last] = slot;
                activeSlot[best] = -1;
            } else {
                tagHead(best, q.peekFirst(), nowNanos);
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
