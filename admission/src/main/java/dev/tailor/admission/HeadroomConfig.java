package dev.tailor.admission;

import dev.tailor.common.Checks;

/**
 * The constants of the headroom model (docs/design.md#headroom-model; the model and its formulas are
 * described on the package-private {@code HeadroomModel} and in docs/admission.md). The design names
 * the safety margin, the online calibration and the error bound but gives no values: every default
 * here is our choice. Immutable; build variants with the {@code with*} methods.
 *
 * @param safetyFactor         share of the predicted spare capacity a burst may borrow, in (0, 1]
 *                             (default 0.5)
 * @param calibrationSmoothing EWMA weight of the newest calibration and error sample, in (0, 1]
 *                             (default 0.2)
 * @param calibrationMin       lower clamp of the calibration factor, {@code > 0} (default 0.1)
 * @param calibrationMax       upper clamp of the calibration factor, {@code >= calibrationMin} and
 *                             {@code <= 100} (default 2)
 * @param maxPredictionError   smoothed relative prediction error above which H = 0, in [0, 1]
 *                             (default 0.5)
 * @param minPredictions       predictions that must have been checked before anything is borrowed,
 *                             {@code 0 .. 1,000,000} (default 3)
 * @param minSamples           latencies a window needs before its P95 is taken, {@code 1 .. 10⁹}
 *                             (default 20: fewer, and the P95 is little more than the maximum)
 * @param maxWindowIntervals   intervals a window may span while collecting {@code minSamples}; past
 *                             it the window is discarded and H = 0, {@code 1 .. 10⁹} (default 100,
 *                             one second at Δ = 10 ms)
 * @param maxBorrowRatio       cap on H as a multiple of the budget C, in [0, 100] (default 1: a
 *                             burst borrows at most one interval's budget)
 */
public record HeadroomConfig(
        double safetyFactor,
        double calibrationSmoothing,
        double calibrationMin,
        double calibrationMax,
        double maxPredictionError,
        int minPredictions,
        int minSamples,
        int maxWindowIntervals,
        double maxBorrowRatio) {

    /** Our defaults (see the parameters). */
    public static final HeadroomConfig DEFAULTS = new HeadroomConfig(0.5, 0.2, 0.1, 2.0, 0.5, 3, 20, 100, 1.0);

    /**
     * @throws IllegalArgumentException naming the field, its value and the expected range when a
     *                                  value is NaN, infinite or out of range
     */
    public HeadroomConfig {
        Checks.requireAboveAtMost("safetyFactor", safetyFactor, 0, 1);
        Checks.requireAboveAtMost("calibrationSmoothing", calibrationSmoothing, 0, 1);
        Checks.requireAboveAtMost("calibrationMin", calibrationMin, 0, 100);
        Checks.requireRange("calibrationMax", calibrationMax, calibrationMin, 100);
        Checks.requireRange("maxPredictionError", maxPredictionError, 0, 1);
        Checks.requireRange("minPredictions", minPredictions, 0, 1_000_000);
        Checks.requireRange("minSamples", minSamples, 1, 1_000_000_000);
        Checks.requireRange("maxWindowIntervals", maxWindowIntervals, 1, 1_000_000_000);
        Checks.requireRange("maxBorrowRatio", maxBorrowRatio, 0, 100);
    }

    public HeadroomConfig withSafetyFactor(double value) {
        return new HeadroomConfig(
                value,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                minPredictions,
                minSamples,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withCalibrationSmoothing(double value) {
        return new HeadroomConfig(
                safetyFactor,
                value,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                minPredictions,
                minSamples,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withCalibrationRange(double min, double max) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                min,
                max,
                maxPredictionError,
                minPredictions,
                minSamples,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withMaxPredictionError(double value) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                value,
                minPredictions,
                minSamples,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withMinPredictions(int value) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                value,
                minSamples,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withMinSamples(int value) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                minPredictions,
                value,
                maxWindowIntervals,
                maxBorrowRatio);
    }

    public HeadroomConfig withMaxWindowIntervals(int value) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                minPredictions,
                minSamples,
                value,
                maxBorrowRatio);
    }

    public HeadroomConfig withMaxBorrowRatio(double value) {
        return new HeadroomConfig(
                safetyFactor,
                calibrationSmoothing,
                calibrationMin,
                calibrationMax,
                maxPredictionError,
                minPredictions,
                minSamples,
                maxWindowIntervals,
                value);
    }
}
