package dev.tailor.admission;

import dev.tailor.common.Checks;

/**
 * Steady/hot classification of segments from the cost they are asked for, with hysteresis
 * (docs/design.md#classifier). A segment becomes {@link SegmentClass#HOT} as soon as its cost over the
 * last {@code W} intervals exceeds its threshold, and returns to {@link SegmentClass#STEADY} only
 * after {@code R} consecutive windows at or below it.
 *
 * <p>Contract. Windows slide by one interval (our reading): at every interval boundary the window
 * is the last {@code W} completed intervals, and each boundary whose window is calm (cost {@code <=}
 * threshold) counts one of the {@code R}; a window above the threshold resets the count. Entry is
 * also checked while an interval runs: the window that ends with the running interval (the last
 * {@code W − 1} completed ones plus the cost so far) turns a segment hot at the request that pushes
 * it over, so a burst is treated as hot from its first interval on. A segment that is steady and
 * whose window holds no cost is idle and costs nothing per interval. Not thread-safe: the
 * {@link AdmissionController} serialises access.
 */
/*
 * Maintainer note.
 *
 * Sliding vs tumbling. The design speaks of the last W intervals and of R consecutive windows without
 * saying whether windows overlap. We slide them per interval: with tumbling windows a burst shorter
 * than W intervals could straddle two windows and stay below the threshold in both, and recovery
 * would take R·W intervals (5 s at the defaults) instead of the R = 50 boundaries (0.5 s) after the
 * window first turns calm. With sliding windows the earliest return to steady after a burst ends is
 * the first boundary whose window no longer holds enough of the burst, plus R − 1 more: for a step of
 * twice the baseline the window turns calm 5 intervals after the step ends (the 5 remaining burst
 * intervals of 10 hold exactly the threshold, which is calm), and the segment is steady at the 54th
 * boundary after it ends. ClassifierTest works this through.
 *
 * Thresholds. The caller passes each segment's threshold in cost units per window: its baseline
 * commitment per interval × W × the hot-threshold ratio. Counting is done in longs (saturating), the
 * comparison in doubles; thresholds are far below 2^53, where that comparison is exact enough.
 *
 * Cost counted. The controller charges a request's cost when it arrives, whether it is admitted,
 * queued or refused: a throttled segment's admitted rate reflects the throttle, not its demand (our
 * reading). Queued requests are not charged again when they are admitted later.
 *
 * Layout. One ring of W longs per segment in a flat array (segment-major), a running window sum, the
 * running interval's cost, the class and the calm count. All rings share one write position
 * (boundary number mod W), which is sound because the ring of an idle segment is all zeros. Only
 * active segments (non-idle) are visited at a boundary, kept in a dense list with swap-removal, so a
 * boundary costs O(active segments), and a controller with thousands of idle segments ticks in O(1).
 */
final class SegmentClassifier {

    /** Most ring slots (segments × W) one classifier keeps: 2²⁶ longs, 512 MiB. */
    static final long MAX_RING_SLOTS = 1L << 26;

    private final int windowIntervals;
    private final int recoveryWindows;
    private final double[] thresholdCostUnits;
    private final long[] ring;
    private final long[] windowSum;
    private final long[] current;
    private final boolean[] hot;
    private final int[] calmWindows;
    private final int[] active;
    private final boolean[] isActive;
    private int activeCount;
    private int hotCount;
    /** Interval boundaries passed so far; boundary t writes slot t mod W. */
    private long boundaries;
    /** {@code boundaries mod W}, kept so that a charge does not divide. */
    private int slot;

    /**
     * @param windowIntervals    W, intervals per window, {@code >= 1}
     * @param recoveryWindows    R, consecutive calm windows to return to steady, {@code >= 1}
     * @param thresholdCostUnits per segment, the cost per window above which it is hot, finite and
     *                           {@code >= 0}; the array is copied
     */
    SegmentClassifier(int windowIntervals, int recoveryWindows, double[] thresholdCostUnits) {
        Checks.requireRange("windowIntervals", windowIntervals, 1, AdmissionConfig.MAX_WINDOW_INTERVALS);
        Checks.requireRange("recoveryWindows", recoveryWindows, 1, AdmissionConfig.MAX_RECOVERY_WINDOWS);
        for (int s = 0; s < thresholdCostUnits.length; s++) {
            Checks.requireRange("thresholdCostUnits[" + s + "]", thresholdCostUnits[s], 0, Double.MAX_VALUE);
        }
        int n = thresholdCostUnits.length;
        if ((long) n * windowIntervals > MAX_RING_SLOTS) {
            throw new IllegalArgumentException("windowIntervals : " + windowIntervals + " (expected: at most "
                    + MAX_RING_SLOTS / Math.max(1, n) + " for " + n + " segments: the classifier keeps W costs per "
                    + "segment, at most " + MAX_RING_SLOTS + " in all)");
        }
        this.windowIntervals = windowIntervals;
        this.recoveryWindows = recoveryWindows;
        this.thresholdCostUnits = thresholdCostUnits.clone();
        this.ring = new long[n * windowIntervals];
        this.windowSum = new long[n];
        this.current = new long[n];
        this.hot = new boolean[n];
        this.calmWindows = new int[n];
        this.active = new int[n];
        this.isActive = new boolean[n];
    }

    /**
     * Adds {@code costUnits} to the running interval of {@code segment} and returns its class after
     * the charge: hot if it was, or if the window ending with the running interval now exceeds the
     * threshold.
     */
    SegmentClass charge(int segment, long costUnits) {
        current[segment] = Checks.saturatedAdd(current[segment], costUnits);
        if (!isActive[segment]) {
            isActive[segment] = true;
            active[activeCount++] = segment;
        }
        if (!hot[segment] && runningWindowCostUnits(segment) > thresholdCostUnits[segment]) {
            hot[segment] = true;
            calmWindows[segment] = 0;
            hotCount++;
        }
        return hot[segment] ? SegmentClass.HOT : SegmentClass.STEADY;
    }

    /** The class of {@code segment} now. */
    SegmentClass classOf(int segment) {
        return hot[segment] ? SegmentClass.HOT : SegmentClass.STEADY;
    }

    /** Whether {@code segment} is steady now. */
    boolean isSteady(int segment) {
        return !hot[segment];
    }

    /**
     * Cost of the window that ends with the running interval: the last W − 1 completed intervals
     * plus the running one so far.
     */
    long runningWindowCostUnits(int segment) {
        long oldest = ring[segment * windowIntervals + slot()];
        return Checks.saturatedAdd(windowSum[segment] - oldest, current[segment]);
    }

    /** Cost of the last W completed intervals of {@code segment}. */
    long windowCostUnits(int segment) {
        return windowSum[segment];
    }

    /** Consecutive calm windows a hot segment has had so far (0 for a steady one). */
    int calmWindows(int segment) {
        return calmWindows[segment];
    }

    /**
     * Ends the running interval: each active segment's window slides by one interval and is judged,
     * and idle segments leave the active list.
     */
    void endInterval() {
        int written = slot;
        for (int i = activeCount - 1; i >= 0; i--) {
            int s = active[i];
            int at = s * windowIntervals + written;
            long sum = windowSum[s] - ring[at] + current[s];
            windowSum[s] = sum < 0 ? Long.MAX_VALUE : sum;
            ring[at] = current[s];
            current[s] = 0;
            if (windowSum[s] > thresholdCostUnits[s]) {
                if (!hot[s]) {
                    hot[s] = true;
                    hotCount++;
                }
                calmWindows[s] = 0;
            } else if (hot[s] && ++calmWindows[s] >= recoveryWindows) {
                hot[s] = false;
                calmWindows[s] = 0;
                hotCount--;
            }
            if (!hot[s] && windowSum[s] == 0) {
                isActive[s] = false;
                active[i] = active[--activeCount];
            }
        }
        boundaries++;
        slot = slot + 1 == windowIntervals ? 0 : slot + 1;
    }

    /**
     * Passes {@code intervals} boundaries at which nothing changes, in O(1).
     *
     * @throws IllegalStateException when a segment is still active
     */
    void skipIdleIntervals(long intervals) {
        if (activeCount != 0) {
            throw new IllegalStateException("skipIdleIntervals : " + activeCount + " active segments (expected: 0)");
        }
        boundaries += intervals;
        slot = (int) Long.remainderUnsigned(boundaries, windowIntervals);
    }

    /** Segments hot now. */
    int hotCount() {
        return hotCount;
    }

    /** Segments not idle (hot, or with cost in the window or the running interval). */
    int activeCount() {
        return activeCount;
    }

    /** Number of segments classified. */
    int segmentCount() {
        return windowSum.length;
    }

    private int slot() {
        return slot;
    }
}
