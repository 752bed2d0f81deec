package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.util.Arrays;
import java.util.List;

/**
 * The baseline guarantee's buckets of an {@link AdmissionController}, without admission: says whether a
 * request is within its disk's baseline when it arrives. Per disk, a token bucket at the rate the
 * guarantee meters the disk against (its commitment, default a fair share of the capacity; with
 * {@link AdmissionConfig#scaledBaselines} scaled down with the others when they add up to more than
 * the capacity), one classifier window deep (W·Δ of that rate), full at the start, refilled
 * continuously, and charged each request's cost as the controller charges it (Σ over the segments it
 * touches of the cost model's cost of the bytes there). A request the bucket holds, or any one request
 * when the bucket is full (it then goes below zero), is within its baseline and is taken from it; any
 * other is beyond, and takes nothing.
 *
 * <p>For a simulator that labels every request the same way under every policy, admission or not. The
 * label depends only on the requests that arrive and when, never on what is admitted or when it
 * completes. It meters whether or not the configuration's {@link AdmissionConfig#baselineGuarantee}
 * is on. It refills at each request, as the controller does when {@code acquire} is given the arrival
 * time ({@link AdmissionConfig#baselineRefillOnArrival}, the default): fed the same requests, the two
 * agree request by request. Not thread-safe.
 */
public final class BaselineMeter {

    private final SegmentMap segmentMap;
    private final IoCostModel costModel;
    private final double[] perNano;
    private final double[] depth;
    private final double[] tokens;
    private final long[] refilledNanos;

    /**
     * @param config     the controller's constants (capacity, interval, W, scaled baselines, segment and
     *                   block sizes and cost model are used)
     * @param disks      the virtual disks, numbered in this order, with their commitments
     * @param startNanos the time the buckets are full, in ns on the caller's clock
     * @throws IllegalArgumentException as {@link AdmissionController#AdmissionController} does
     */
    public BaselineMeter(AdmissionConfig config, List<VirtualDisk> disks, long startNanos) {
        Checks.requireNonNull("config", config, "an AdmissionConfig, e.g. AdmissionConfig.DEFAULTS");
        this.segmentMap = new SegmentMap(disks, config.segmentSizeBytes(), config.blockSizeBytes());
        this.costModel = config.costModel();
        double[] perSecond = AdmissionController.guaranteedBaselines(config, segmentMap);
        this.perNano = new double[perSecond.length];
        this.depth = new double[perSecond.length];
        this.tokens = new double[perSecond.length];
        for (int d = 0; d < perSecond.length; d++) {
            perNano[d] = perSecond[d] / 1e9;
            depth[d] = AdmissionController.guaranteeDepth(config, perSecond[d]);
            tokens[d] = depth[d];
        }
        this.refilledNanos = new long[perSecond.length];
        Arrays.fill(refilledNanos, startNanos);
    }

    /**
     * Refills disk {@code disk}'s bucket to {@code nowNanos}, then charges the request {@code [offsetBytes,
     * offsetBytes + lengthBytes)} to it if it holds the request's cost. A time before the disk's last
     * refill refills nothing. O(1) in the number of disks.
     *
     * @return whether the request is within its disk's baseline
     * @throws IllegalArgumentException when the disk does not exist or the range is empty or leaves the
     *                                  disk, as {@link AdmissionController#acquire}
     */
    public boolean within(int disk, IoKind kind, long offsetBytes, long lengthBytes, long nowNanos) {
        Checks.requireNonNull("kind", kind, "READ or WRITE");
        segmentMap.checkRequest(disk, offsetBytes, lengthBytes);
        refill(disk, nowNanos);
        long cost = costUnits(disk, kind, offsetBytes, lengthBytes);
        if (AdmissionController.guaranteeHolds(tokens[disk], depth[disk], cost)) {
            tokens[disk] -= cost;
            return true;
        }
        return false;
    }

    /** The rate of disk {@code disk}'s bucket, cost units per second. */
    public double rateCostUnitsPerSecond(int disk) {
        Checks.requireRange("disk", disk, 0, depth.length - 1);
        return perNano[disk] * 1e9;
    }

    /** The depth of disk {@code disk}'s bucket, cost units. */
    public double depthCostUnits(int disk) {
        Checks.requireRange("disk", disk, 0, depth.length - 1);
        return depth[disk];
    }

    /** What a request costs, as {@link AdmissionController#acquire} charges the guarantee's bucket. */
    private long costUnits(int disk, IoKind kind, long offsetBytes, long lengthBytes) {
        if (segmentMap.singleBlock(offsetBytes, lengthBytes)) {
            return costModel.costUnits(kind, lengthBytes);
        }
        SegmentMap.Span span = segmentMap.span(disk, offsetBytes, lengthBytes);
        long cost = 0;
        for (int i = 0; i < span.parts(); i++) {
            cost = Checks.saturatedAdd(cost, costModel.costUnits(kind, span.bytes(i)));
        }
        return Math.min(cost, IoCostModel.MAX_COST_UNITS);
    }

    private void refill(int disk, long nowNanos) {
        long elapsed = nowNanos - refilledNanos[disk];
        if (elapsed <= 0) {
            return;
        }
        refilledNanos[disk] = nowNanos;
        tokens[disk] = Math.min(depth[disk], tokens[disk] + perNano[disk] * elapsed);
    }
}
