package dev.tailor.sim.storage;

import dev.tailor.admission.FairDispatchQueue;
import java.util.function.Consumer;

/**
 * {@code fair-dispatch} (ours): no admission budget; the proxy keeps at most k requests at the backend
 * (its parallelism, the depth {@code mclock} uses) and lets the waiting ones in by start-time fair
 * queueing over its disks, weighted by their commitments, with a lag of one classifier window
 * ({@link FairDispatchQueue}, docs/admission.md). Every request goes to the backend sooner or later;
 * none is refused. {@code finish-tag-door} (an option, off in {@code fair-dispatch}) is the same door
 * letting the waiting requests in by finish tag (start + cost ÷ weight) instead of start tag
 * ({@link dev.tailor.admission.AdmissionConfig#finishTagDoor}).
 *
 * <p>Configuration (our reading): a disk's weight is its tenant's commitment, as the baseline
 * guarantee and {@code mclock} take it; the lag is the scenario's W·Δ ({@code admission.windowIntervals}
 * × the proxy's interval), the depth of segment admission's baseline bucket, so a tenant that was quiet
 * goes ahead at the door for as much of its baseline as the guarantee would let it send at once.
 */
final class FairDispatchPolicy implements StoragePolicy {

    private final Proxy proxy;
    private final FairDispatchQueue<IoRequest> door;

    FairDispatchPolicy(Proxy proxy) {
        this(proxy, false);
    }

    /** @param finishTag {@code finish-tag-door}: the door lets waiting requests in by finish tag */
    FairDispatchPolicy(Proxy proxy, boolean finishTag) {
        this.proxy = proxy;
        this.door = door(proxy, finishTag);
    }

    /**
     * The door of {@code proxy} as configured above (also the one {@code segment-admission} sends its
     * admitted requests through), ordered by finish tag when {@code finishTag}
     * ({@link dev.tailor.admission.AdmissionConfig#finishTagDoor}).
     */
    static FairDispatchQueue<IoRequest> door(Proxy proxy, boolean finishTag) {
        int disks = proxy.tenants().size();
        double[] weights = new double[disks];
        for (int d = 0; d < disks; d++) {
            weights[d] = proxy.tenants().get(d).commitmentCostUnitsPerSecond(); // a fair share unless set
        }
        double lagSeconds = proxy.setup().scenario().admission().windowIntervals() * (proxy.intervalNanos() / 1e9);
        return new FairDispatchQueue<>(weights, proxy.backendParallelism(), lagSeconds, finishTag);
    }

    @Override
    public void arrive(IoRequest request, long nowNanos) {
        if (door.offer(request.disk, request.costUnits, request)) {
            proxy.dispatch(request, nowNanos);
        }
    }

    @Override
    public void completed(IoRequest request, long nowNanos) {
        IoRequest next = door.completed();
        if (next != null) {
            proxy.dispatch(next, nowNanos);
        }
    }

    @Override
    public void forEachHeld(Consumer<IoRequest> action) {
        door.forEachWaiting(action);
    }
}
