package dev.tailor.sim.storage;

import dev.tailor.admission.AdmissionStats;
import dev.tailor.admission.IntervalReport;

/** Fills an {@link IntervalSeries} during a run. Not thread-safe. */
final class SeriesRecorder {

    private final int proxy;
    private final long intervalNanos;
    private final int intervals;
    private final float[] steady;
    private final float[] hot;
    private float[] main;
    private float[] reserve;
    private float[] borrowed;
    private float[] repaid;
    private float[] debt;
    private float[] waiting;
    private float[] hotSegments;
    /** The controller's cumulative main, reserve, borrowed and repaid cost at the last boundary. */
    private long[] previous;

    long budgetCostUnits;
    private long firstBurstNanos = -1;
    private final long measuredFromNanos;

    SeriesRecorder(int proxy, long intervalNanos, long endNanos, long measuredFromNanos) {
        this.proxy = proxy;
        this.intervalNanos = intervalNanos;
        this.intervals = (int) (endNanos / intervalNanos) + 1;
        this.steady = new float[intervals];
        this.hot = new float[intervals];
        this.measuredFromNanos = measuredFromNanos;
    }

    int proxy() {
        return proxy;
    }

    void arrival(IoRequest r) {
        int i = (int) Math.min(intervals - 1, r.arrivalNanos / intervalNanos);
        if (r.hot) {
            hot[i] += r.costUnits;
        } else {
            steady[i] += r.costUnits;
        }
        if (r.burst && firstBurstNanos < 0 && r.arrivalNanos >= measuredFromNanos) {
            firstBurstNanos = r.arrivalNanos;
        }
    }

    /**
     * At the boundary {@code nowNanos}: {@code before} is the controller's stats just before it
     * passed the boundary, so their change since the previous boundary is what the interval that
     * just ended drew.
     */
    void pools(long nowNanos, AdmissionStats before, IntervalReport report) {
        if (main == null) {
            main = new float[intervals];
            reserve = new float[intervals];
            borrowed = new float[intervals];
            repaid = new float[intervals];
            debt = new float[intervals];
            waiting = new float[intervals];
            hotSegments = new float[intervals];
            previous = new long[4];
        }
        int ended = (int) Math.min(intervals - 1, nowNanos / intervalNanos - 1);
        main[ended] = before.drawnMainCostUnits() - previous[0];
        reserve[ended] = before.drawnReserveCostUnits() - previous[1];
        borrowed[ended] = before.borrowedCostUnits() - previous[2];
        repaid[ended] = before.repaidCostUnits() - previous[3];
        debt[ended] = before.debtCostUnits();
        waiting[ended] = before.waitingRequests();
        previous[0] = before.drawnMainCostUnits();
        previous[1] = before.drawnReserveCostUnits();
        previous[2] = before.borrowedCostUnits();
        previous[3] = before.repaidCostUnits();
        if (ended + 1 < intervals) {
            hotSegments[ended + 1] = report.hotSegments();
        }
    }

    IntervalSeries finish() {
        return new IntervalSeries(
                proxy,
                intervalNanos,
                budgetCostUnits,
                steady,
                hot,
                main,
                reserve,
                borrowed,
                repaid,
                debt,
                waiting,
                hotSegments,
                firstBurstNanos);
    }
}
