package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class HeadroomModelTest {

    private static final long INTERVAL_NANOS = 10_000_000L;
    private static final double LN20 = Math.log(20);

    private static HeadroomModel model(HeadroomConfig config, long budget) {
        return new HeadroomModel(config, INTERVAL_NANOS, budget);
    }

    @Test
    void closeWindow_formula_safetyTimesCalibrationTimesSpareRateTimesIntervalTimesMeanCost() {
        // t95 = 2 ms -> μ − λ = ln 20 / 0.002 s = 1,497.9 requests/s; over Δ = 10 ms that is 14.979
        // requests; mean cost 100,000 cost units; safety 0.5, calibration 1:
        // H = 0.5 × 1 × 14.979 × 100,000 = 748,933.07 -> 748,933 cost units.
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build(), 10_000_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.spareRatePerSecond()).isCloseTo(LN20 / 0.002, within(1e-9));
        assertThat(m.headroomCostUnits()).isEqualTo(748_933);
    }

    @Test
    void closeWindow_cappedAtMaxBorrowRatioTimesBudget() {
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build(), 500_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.headroomCostUnits()).isEqualTo(500_000);
        HeadroomModel half = model(
                HeadroomConfig.DEFAULTS.toBuilder()
                        .minPredictions(0)
                        .maxBorrowRatio(0.5)
                        .build(),
                500_000);
        half.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(half.headroomCostUnits()).isEqualTo(250_000);
    }

    @Test
    void calibration_fittedFromPredictedVersusObservedSpareRate() {
        // Window 1: λ = 100 samples / 0.01 s = 10,000/s, t95 = 2 ms: s = 1,497.87/s, μ̂ = 11,497.87/s.
        // Window 2: same λ, t95 = 3 ms: observed s = 998.58/s, predicted μ̂ − λ = 1,497.87/s.
        //   ratio 2/3 (first sample, taken as is), error |998.58 − 1,497.87| / 1,497.87 = 1/3.
        //   H = 0.5 × (2/3) × 998.58 × 0.01 × 100,000 = 332,859.
        // Window 3: same λ, t95 = 6 ms: observed 499.29/s, predicted (10,000 + 998.58) − 10,000.
        //   ratio 1/2, error 1/2; calibration 0.8 × 2/3 + 0.2 × 1/2 = 0.6333,
        //   error 0.8 × 1/3 + 0.2 × 1/2 = 0.3667 <= 0.5: still trusted.
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(1).build(), 10_000_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.headroomCostUnits()).as("no prediction checked yet").isZero();
        m.closeWindow(3_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.calibration()).isCloseTo(2.0 / 3, within(1e-12));
        assertThat(m.predictionError()).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(m.headroomCostUnits()).isEqualTo((long) Math.floor(0.5 * (2.0 / 3) * LN20 / 0.003 * 0.01 * 1e5));
        m.closeWindow(6_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.calibration()).isCloseTo(0.8 * 2 / 3 + 0.2 * 0.5, within(1e-12));
        assertThat(m.predictionError()).isCloseTo(0.8 / 3 + 0.2 * 0.5, within(1e-12));
        assertThat(m.headroomCostUnits())
                .isEqualTo((long) Math.floor(0.5 * (0.8 * 2 / 3 + 0.1) * LN20 / 0.006 * 0.01 * 1e5));
        assertThat(m.predictions()).isEqualTo(2);
    }

    @Test
    void predictionError_aboveBound_fallsBackToZero() {
        // Window 2 completes 12,000/s, more than the 11,497.87/s service rate window 1 implied: the
        // model predicted no spare capacity yet latency says there is some -> error 1 > 0.5 -> H = 0.
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(1).build(), 10_000_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        m.closeWindow(2_000_000, 120, 12_000_000, 0, 1);
        assertThat(m.predictionError()).isEqualTo(1.0);
        assertThat(m.calibration()).as("no ratio without a positive prediction").isEqualTo(1.0);
        assertThat(m.headroomCostUnits()).isZero();
    }

    @Test
    void drops_inTheWindow_fallBackToZero() {
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build(), 10_000_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 1, 1);
        assertThat(m.headroomCostUnits()).isZero();
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.headroomCostUnits()).isPositive();
    }

    @Test
    void observe_fromHistogram_p95WithinPrecisionAndWindowWaitsForMinSamples() {
        // 10 latencies per interval, 20 needed: the first boundary only collects, the second closes a
        // window spanning 2 intervals (λ = 20 / 0.02 s). 19 at 1 ms and one at 50 ms: the P95 is the
        // 19th of 20, 1 ms (to HdrHistogram's 3 significant digits).
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build(), 10_000_000);
        Histogram first = new Histogram(3);
        for (int i = 0; i < 10; i++) {
            first.recordValue(1_000_000);
        }
        m.observe(first, 10 * 50_000L, 0, 1);
        assertThat(m.p95Nanos()).isNaN();
        assertThat(m.headroomCostUnits()).isZero();
        Histogram second = new Histogram(3);
        for (int i = 0; i < 9; i++) {
            second.recordValue(1_000_000);
        }
        second.recordValue(50_000_000);
        m.observe(second, 10 * 50_000L, 0, 1);
        assertThat(m.p95Nanos()).isCloseTo(1_000_000, within(1_000.0));
        // H = 0.5 × ln 20 × (10 ms / 1 ms) × 50,000 = 748,933 (to the histogram's precision).
        assertThat((double) m.headroomCostUnits()).isCloseTo(0.5 * LN20 * 10 * 50_000, within(800.0));
    }

    @Test
    void observe_tooFewSamplesForTooLong_discardsTheWindowAndStopsBorrowing() {
        HeadroomModel m = model(
                HeadroomConfig.DEFAULTS.toBuilder()
                        .minPredictions(0)
                        .maxWindowIntervals(3)
                        .build(),
                10_000_000);
        m.closeWindow(2_000_000, 100, 10_000_000, 0, 1);
        assertThat(m.headroomCostUnits()).isPositive();
        Histogram few = new Histogram(3);
        few.recordValue(1_000_000);
        m.observe(few, 1, 0, 1);
        m.observe(few, 1, 0, 1);
        assertThat(m.headroomCostUnits()).as("kept while the window fills").isPositive();
        m.observe(few, 1, 0, 1);
        assertThat(m.headroomCostUnits()).as("3 intervals without 20 samples").isZero();
        assertThat(m.p95Nanos()).isNaN();
    }

    @Test
    void closeWindow_zeroLatency_takenAsOneNanosecondAndCapped() {
        HeadroomModel m =
                model(HeadroomConfig.DEFAULTS.toBuilder().minPredictions(0).build(), 1_000);
        m.closeWindow(0, 100, 100, 0, 1);
        assertThat(m.spareRatePerSecond()).isCloseTo(LN20 * 1e9, within(1e-3));
        assertThat(m.headroomCostUnits()).isEqualTo(1_000);
    }
}
