package dev.tailor.admission;

import dev.tailor.common.Checks;
import org.HdrHistogram.Histogram;

/**
 * How much a burst may borrow: the headroom {@code H}, in cost units, that the backend's measured
 * latency says it can absorb in one interval beyond its current load (docs/design.md#headroom-model).
 *
 * <p><b>Derivation.</b> Treat the backend as an M/M/1 queue with arrival rate λ and service rate μ
 * (requests per second, λ &lt; μ). A request's sojourn time T (queueing plus service) is then
 * exponential with rate μ − λ: {@code P(T > t) = exp(−(μ − λ)·t)}. Its p-quantile solves
 * {@code 1 − p = exp(−(μ − λ)·t_p)}, so {@code t_p = −ln(1 − p) ÷ (μ − λ)}, and for p = 0.95
 * <pre>
 *     μ − λ = ln(20) ÷ t₉₅        (ln 20 ≈ 2.9957; positive, unlike the sign-inconsistent printed form)
 * </pre>
 * μ − λ is the spare service rate in requests per second: the load the backend could add before it
 * saturates. Over one interval Δ it is (μ − λ)·Δ requests, which the mean cost of the requests just
 * completed converts to cost units:
 * <pre>
 *     H = safety × calibration × (μ − λ) × Δ × meanCost
 *       = safety × calibration × ln(20) × (Δ ÷ t₉₅) × meanCost
 * </pre>
 * with t₉₅ and Δ in seconds (or both in nanoseconds: only their ratio matters), μ − λ in requests per
 * second, meanCost in cost units per request, and H in cost units. H is rounded down and capped at
 * {@code maxBorrowRatio × C}.
 *
 * <p><b>Calibration</b> (our reading of "fitted online from predicted vs observed"). A window that
 * measures t₉₅ and the completion rate λ also gives an estimate of the service rate,
 * {@code μ̂ = λ + ln(20) ÷ t₉₅}. If the model is right, μ is the backend's and does not move with
 * the load, so the next window's spare rate is predicted as {@code μ̂ − λ'} from its own completion
 * rate λ', and observed as {@code ln(20) ÷ t₉₅'}. The ratio observed ÷ predicted is the calibration
 * sample (how much of the predicted spare rate showed up) and the relative error
 * |observed − predicted| ÷ max(observed, predicted), in [0, 1], the error sample; both are smoothed
 * (EWMA, weight {@code calibrationSmoothing}, the first sample taken as is), and the calibration is
 * clamped to [{@code calibrationMin}, {@code calibrationMax}]. A prediction of no spare rate at all
 * (λ' ≥ μ̂) counts as error 1 and leaves the calibration alone.
 *
 * <p><b>Fallback to zero.</b> H = 0, so nothing is borrowed, when: the smoothed error exceeds
 * {@code maxPredictionError} (the M/M/1 reading does not fit this backend now); fewer than
 * {@code minPredictions} predictions have been checked; a ticket of the window was completed as
 * dropped (a loss signal); or no window with enough samples completed within
 * {@code maxWindowIntervals} intervals (no recent evidence of headroom).
 *
 * <p><b>Windows.</b> Latencies come from an HdrHistogram interval histogram per boundary. A window
 * closes at the first boundary at which it holds at least {@code minSamples} latencies (a P95 of
 * fewer is little more than the maximum); until then H keeps its last value. Not thread-safe: the
 * {@link AdmissionController} serialises access.
 */
/*
 * Maintainer note. The P95 is HdrHistogram's value at the 95th percentile, exact to its precision
 * (3 significant digits here, < 0.1 %). The histogram is auto-resizing, so any latency in ns fits.
 * A t₉₅ of 0 (all samples 0 ns) would give an infinite spare rate; it is taken as 1 ns, and the cap
 * at maxBorrowRatio × C bounds H anyway. The completion rate of a window is its samples ÷ its
 * duration (the intervals it spans × Δ), and tickets completed as "ignore" are not samples.
 */
final class HeadroomModel {

    /** ln(20) = −ln(1 − 0.95): the M/M/1 sojourn-time quantile factor for p = 0.95. */
    static final double LN_20 = Math.log(20);
    /** Significant digits of the latency histograms. */
    static final int HISTOGRAM_DIGITS = 3;

    private final HeadroomConfig config;
    private final long intervalNanos;
    private final long budgetCostUnits;
    private final Histogram window = new Histogram(HISTOGRAM_DIGITS);
    private long windowCostUnits;
    private long windowDrops;
    private long windowIntervals;

    private boolean havePrevious;
    private double previousServiceRatePerSecond;
    private long predictions;
    private double calibration = 1;
    private double predictionError;
    private long headroomCostUnits;
    private double p95Nanos = Double.NaN;
    private double spareRatePerSecond = Double.NaN;

    /**
     * @param config          the constants
     * @param intervalNanos   Δ in ns
     * @param budgetCostUnits C, for the cap on H
     */
    HeadroomModel(HeadroomConfig config, long intervalNanos, long budgetCostUnits) {
        this.config = config;
        this.intervalNanos = intervalNanos;
        this.budgetCostUnits = budgetCostUnits;
    }

    /**
     * Takes in what completed since the last call and updates H when a window closes.
     *
     * @param latencies  latencies (ns) of tickets completed as success or dropped since the last call
     * @param costUnits  total cost of those tickets
     * @param drops      how many of them were dropped
     * @param intervals  intervals elapsed since the last call, {@code >= 1}
     */
    void observe(Histogram latencies, long costUnits, long drops, long intervals) {
        window.add(latencies);
        windowCostUnits = Checks.saturatedAdd(windowCostUnits, costUnits);
        windowDrops = Checks.saturatedAdd(windowDrops, drops);
        windowIntervals = Checks.saturatedAdd(windowIntervals, intervals);
        long samples = window.getTotalCount();
        if (samples >= config.minSamples()) {
            closeWindow(window.getValueAtPercentile(95.0), samples, windowCostUnits, windowDrops, windowIntervals);
            resetWindow();
        } else if (windowIntervals >= config.maxWindowIntervals()) {
            // No recent evidence: no borrowing, and the next window starts a new prediction chain.
            resetWindow();
            havePrevious = false;
            headroomCostUnits = 0;
            p95Nanos = Double.NaN;
            spareRatePerSecond = Double.NaN;
        }
    }

    /**
     * Updates the model from one closed window: the formulas of the class description.
     *
     * @param p95LatencyNanos t₉₅ of the window in ns, {@code >= 0}
     * @param samples         latencies in the window, {@code >= 1}
     * @param costUnits       total cost of the completed tickets
     * @param drops           tickets completed as dropped
     * @param intervals       intervals the window spans, {@code >= 1}
     */
    void closeWindow(double p95LatencyNanos, long samples, long costUnits, long drops, long intervals) {
        double t95Seconds = Math.max(1, p95LatencyNanos) / 1e9;
        double windowSeconds = (double) intervals * intervalNanos / 1e9;
        double completionRate = samples / windowSeconds;
        double spare = LN_20 / t95Seconds;
        if (havePrevious) {
            double predicted = previousServiceRatePerSecond - completionRate;
            double error;
            if (predicted > 0) {
                error = Math.abs(spare - predicted) / Math.max(spare, predicted);
                double ratio = spare / predicted;
                double smoothed = predictions == 0 ? ratio : smooth(calibration, ratio);
                calibration = Math.clamp(smoothed, config.calibrationMin(), config.calibrationMax());
            } else {
                error = 1;
            }
            predictionError = predictions == 0 ? error : smooth(predictionError, error);
            predictions++;
        }
        havePrevious = true;
        previousServiceRatePerSecond = completionRate + spare;
        p95Nanos = p95LatencyNanos;
        spareRatePerSecond = spare;

        boolean trusted =
                drops == 0 && predictions >= config.minPredictions() && predictionError <= config.maxPredictionError();
        if (!trusted) {
            headroomCostUnits = 0;
            return;
        }
        double meanCost = (double) costUnits / samples;
        double h = config.safetyFactor() * calibration * spare * (intervalNanos / 1e9) * meanCost;
        double cap = config.maxBorrowRatio() * budgetCostUnits;
        headroomCostUnits = (long) Math.floor(Math.min(h, cap));
    }

    private double smooth(double previous, double sample) {
        double beta = config.calibrationSmoothing();
        return (1 - beta) * previous + beta * sample;
    }

    private void resetWindow() {
        window.reset();
        windowCostUnits = 0;
        windowDrops = 0;
        windowIntervals = 0;
    }

    /** H in cost units: what the next burst may borrow. */
    long headroomCostUnits() {
        return headroomCostUnits;
    }

    /** t₉₅ of the last closed window in ns; NaN before the first or after a discarded window. */
    double p95Nanos() {
        return p95Nanos;
    }

    /** μ − λ of the last closed window in requests per second; NaN as for {@link #p95Nanos()}. */
    double spareRatePerSecond() {
        return spareRatePerSecond;
    }

    /** The calibration factor (1 until the first prediction is checked). */
    double calibration() {
        return calibration;
    }

    /** Smoothed relative prediction error in [0, 1] (0 until the first prediction is checked). */
    double predictionError() {
        return predictionError;
    }

    /** Predictions checked so far. */
    long predictions() {
        return predictions;
    }
}
