package dev.tailor.admission;

import dev.tailor.common.Checks;

/**
 * The constants of the headroom model (docs/design.md#headroom-model; the model and its formulas are
 * described on the package-private {@code HeadroomModel} and in docs/admission.md). The design names
 * the safety margin, the online calibration and the error bound but gives no values: every default
 * here is our choice. Immutable; build one with
 * {@link #builder()} and variants with {@link #toBuilder()}.
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

    /** Our defaults (see the parameters; they are set in one place, {@link Builder}). */
    public static final HeadroomConfig DEFAULTS = builder().build();

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

    /** A builder holding the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration's values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Builds a {@link HeadroomConfig}: named setters over the defaults (the one place they are set),
     * checked together in {@link #build}, so the calibration clamps can be set in any order.
     */
    public static final class Builder {
        private double safetyFactor = 0.5;
        private double calibrationSmoothing = 0.2;
        private double calibrationMin = 0.1;
        private double calibrationMax = 2.0;
        private double maxPredictionError = 0.5;
        private int minPredictions = 3;
        private int minSamples = 20;
        private int maxWindowIntervals = 100;
        private double maxBorrowRatio = 1.0;

        private Builder() {}

        private Builder(HeadroomConfig from) {
            safetyFactor = from.safetyFactor;
            calibrationSmoothing = from.calibrationSmoothing;
            calibrationMin = from.calibrationMin;
            calibrationMax = from.calibrationMax;
            maxPredictionError = from.maxPredictionError;
            minPredictions = from.minPredictions;
            minSamples = from.minSamples;
            maxWindowIntervals = from.maxWindowIntervals;
            maxBorrowRatio = from.maxBorrowRatio;
        }

        /** {@link HeadroomConfig#safetyFactor}. */
        public Builder safetyFactor(double value) {
            safetyFactor = value;
            return this;
        }

        /** {@link HeadroomConfig#calibrationSmoothing}. */
        public Builder calibrationSmoothing(double value) {
            calibrationSmoothing = value;
            return this;
        }

        /** {@link HeadroomConfig#calibrationMin}. */
        public Builder calibrationMin(double value) {
            calibrationMin = value;
            return this;
        }

        /** {@link HeadroomConfig#calibrationMax}. */
        public Builder calibrationMax(double value) {
            calibrationMax = value;
            return this;
        }

        /** {@link HeadroomConfig#maxPredictionError}. */
        public Builder maxPredictionError(double value) {
            maxPredictionError = value;
            return this;
        }

        /** {@link HeadroomConfig#minPredictions}. */
        public Builder minPredictions(int value) {
            minPredictions = value;
            return this;
        }

        /** {@link HeadroomConfig#minSamples}. */
        public Builder minSamples(int value) {
            minSamples = value;
            return this;
        }

        /** {@link HeadroomConfig#maxWindowIntervals}. */
        public Builder maxWindowIntervals(int value) {
            maxWindowIntervals = value;
            return this;
        }

        /** {@link HeadroomConfig#maxBorrowRatio}. */
        public Builder maxBorrowRatio(double value) {
            maxBorrowRatio = value;
            return this;
        }

        /**
         * The configuration, checked as the constructor checks it.
         *
         * @throws IllegalArgumentException naming the field, its value and the expected range when a value is NaN,
         *                                  infinite or out of range
         */
        public HeadroomConfig build() {
            return new HeadroomConfig(
                    safetyFactor,
                    calibrationSmoothing,
                    calibrationMin,
                    calibrationMax,
                    maxPredictionError,
                    minPredictions,
                    minSamples,
                    maxWindowIntervals,
                    maxBorrowRatio);
        }
    }
}
