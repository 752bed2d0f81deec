package dev.tailor.admission;

import dev.tailor.common.Checks;
import java.util.List;

/**
 * The steady/hot classification of an {@link AdmissionController}, without admission: it charges each
 * request's cost to the segments it touches and says which class the request would have, exactly as
 * a controller with the same configuration and the same requests would (docs/design.md#classifier). For
 * a proxy that runs with admission off but still reports segment classes, and for a simulator that
 * labels every request the same way under every policy.
 *
 * <p>The classification depends only on the requests that arrive, never on what is admitted (the
 * controller charges a request when it arrives, whether admitted, queued or refused), so this class
 * and a controller fed the same requests at the same times agree request by request. Time arrives in
 * {@link #advanceTo}; intervals lie on the grid {@code startNanos + k·Δ}. Not thread-safe.
 */
public final class SegmentClassification {

    private final SegmentMap segmentMap;
    private final IoCostModel costModel;
    private final long intervalNanos;
    private final SegmentClassifier classifier;
    private long intervalStartNanos;

    /**
     * @param config     the controller's constants (the classifier's W, R, threshold ratio, capacity,
     *                   segment and block sizes, cost model are used)
     * @param disks      the virtual disks, numbered in this order
     * @param startNanos start of the first interval, in ns on the caller's clock
     * @throws IllegalArgumentException as {@link AdmissionController#AdmissionController} does
     */
    public SegmentClassification(AdmissionConfig config, List<VirtualDisk> disks, long startNanos) {
        Checks.requireNonNull("config", config, "an AdmissionConfig, e.g. AdmissionConfig.DEFAULTS");
        this.segmentMap = new SegmentMap(disks, config.segmentSizeBytes(), config.blockSizeBytes());
        this.costModel = config.costModel();
        this.intervalNanos = config.intervalNanos();
        this.classifier = new SegmentClassifier(
                config.windowIntervals(), config.recoveryWindows(), AdmissionController.thresholds(config, segmentMap));
        this.intervalStartNanos = startNanos;
    }

    /**
     * Charges the request {@code [offsetBytes, offsetBytes + lengthBytes)} of disk {@code disk} to its
     * segments and returns its class: steady when every segment it touches is steady after the charge.
     *
     * @throws IllegalArgumentException when the disk does not exist or the range is empty or leaves
     *                                  the disk, as {@link AdmissionController#acquire}
     */
    public SegmentClass classify(int disk, IoKind kind, long offsetBytes, long lengthBytes) {
        Checks.requireNonNull("kind", kind, "READ or WRITE");
        segmentMap.checkRequest(disk, offsetBytes, lengthBytes);
        if (segmentMap.singleBlock(offsetBytes, lengthBytes)) {
            return classifier.charge(segmentMap.segmentOf(disk, offsetBytes), costModel.costUnits(kind, lengthBytes));
        }
        SegmentMap.Span span = segmentMap.span(disk, offsetBytes, lengthBytes);
        boolean steady = true;
        for (int i = 0; i < span.parts(); i++) {
            steady &=
                    classifier.charge(span.segment(i), costModel.costUnits(kind, span.bytes(i))) == SegmentClass.STEADY;
        }
        return steady ? SegmentClass.STEADY : SegmentClass.HOT;
    }

    /**
     * Passes every interval boundary up to {@code nowNanos}, sliding the windows; idle stretches in
     * O(1). Time that goes backwards, or has not reached the next boundary, changes nothing.
     *
     * @return the boundaries passed
     */
    public long advanceTo(long nowNanos) {
        long elapsed = nowNanos - intervalStartNanos;
        long intervals = elapsed < intervalNanos ? 0 : elapsed / intervalNanos;
        for (long i = 0; i < intervals; i++) {
            long left = intervals - i;
            if (left > 1 && classifier.activeCount() == 0) {
                classifier.skipIdleIntervals(left - 1);
                i += left - 1;
            }
            classifier.endInterval();
        }
        intervalStartNanos += intervals * intervalNanos;
        return intervals;
    }

    /** The class of global segment {@code segment} now. */
    public SegmentClass segmentClass(int segment) {
        Checks.requireRange("segment", segment, 0, segmentMap.segmentCount() - 1);
        return classifier.classOf(segment);
    }

    /** Segments hot now. */
    public int hotSegments() {
        return classifier.hotCount();
    }

    /** The segment map of the disks. */
    public SegmentMap segmentMap() {
        return segmentMap;
    }
}
