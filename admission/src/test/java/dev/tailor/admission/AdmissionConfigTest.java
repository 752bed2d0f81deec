package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AdmissionConfigTest {

    private static final AdmissionConfig D = AdmissionConfig.DEFAULTS;
    private static final HeadroomConfig H = HeadroomConfig.DEFAULTS;

    @Test
    void defaults_areDesignMdValues() {
        assertThat(D.intervalNanos()).isEqualTo(10_000_000L);
        assertThat(D.segmentSizeBytes()).isEqualTo(32L << 30);
        assertThat(D.blockSizeBytes()).isEqualTo(1L << 20);
        assertThat(D.reserveFraction()).isEqualTo(0.2);
        assertThat(D.windowIntervals()).isEqualTo(10);
        assertThat(D.recoveryWindows()).isEqualTo(50);
        // 1e9 cost units per second for 10 ms: C = 10^7, and a visit's quantum C / 16.
        assertThat(D.budgetCostUnits()).isEqualTo(10_000_000L);
        assertThat(D.queueQuantumCostUnits()).isEqualTo(625_000L);
    }

    @Test
    void constructor_reserveOutsideUnitInterval_rejectedNamingTheField() {
        assertThatThrownBy(() -> D.withReserveFraction(-0.1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("reserveFraction : -0.1 (expected: 0.0 .. 1.0)");
        assertThatThrownBy(() -> D.withReserveFraction(1.5)).hasMessage("reserveFraction : 1.5 (expected: 0.0 .. 1.0)");
        assertThatThrownBy(() -> D.withReserveFraction(Double.NaN))
                .hasMessage("reserveFraction : NaN (expected: 0.0 .. 1.0)");
        assertThat(D.withReserveFraction(0).reserveFraction()).isZero();
        assertThat(D.withReserveFraction(1).reserveFraction()).isEqualTo(1);
    }

    @Test
    void constructor_zeroOrHugeInterval_rejected() {
        assertThatThrownBy(() -> D.withIntervalNanos(0))
                .hasMessage("intervalNanos : 0 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.withIntervalNanos(-10_000_000)).hasMessageStartingWith("intervalNanos : -10000000");
        assertThatThrownBy(() -> D.withIntervalNanos(61_000_000_000L))
                .hasMessageStartingWith("intervalNanos : 61000000000");
    }

    @Test
    void constructor_capacity_nanNegativeOrBudgetOutOfRange_rejected() {
        assertThatThrownBy(() -> D.withCapacityCostUnitsPerSecond(Double.NaN))
                .hasMessageStartingWith("capacityCostUnitsPerSecond : NaN (expected: > 0.0");
        assertThatThrownBy(() -> D.withCapacityCostUnitsPerSecond(-1))
                .hasMessageStartingWith("capacityCostUnitsPerSecond : -1.0");
        assertThatThrownBy(() -> D.withCapacityCostUnitsPerSecond(Double.POSITIVE_INFINITY))
                .hasMessageStartingWith("capacityCostUnitsPerSecond : Infinity");
        // 50 cost units per second give 0.5 per 10 ms interval: no budget at all.
        assertThatThrownBy(() -> D.withCapacityCostUnitsPerSecond(50))
                .hasMessageStartingWith(
                        "capacityCostUnitsPerSecond : 50.0 (expected: a budget per interval of 1 .. " + "2^50")
                .hasMessageEndingWith("it gives 0.0)");
        assertThatThrownBy(() -> D.withCapacityCostUnitsPerSecond(1e20))
                .hasMessageStartingWith("capacityCostUnitsPerSecond : 1.0E20");
    }

    @Test
    void constructor_negativeOrMisalignedSizes_rejected() {
        assertThatThrownBy(() -> D.withSegmentAndBlockSizeBytes(1 << 20, -1))
                .hasMessageStartingWith("blockSizeBytes : -1");
        assertThatThrownBy(() -> D.withSegmentAndBlockSizeBytes(-5, 1)).hasMessageStartingWith("segmentSizeBytes : -5");
        assertThatThrownBy(() -> D.withSegmentAndBlockSizeBytes(1000, 300))
                .hasMessage("segmentSizeBytes : 1000 (expected: a multiple of blockSizeBytes, 300)");
    }

    @Test
    void constructor_otherFields_rejectedNamingTheField() {
        assertThatThrownBy(() -> D.withWindowIntervals(0)).hasMessage("windowIntervals : 0 (expected: 1 .. 10000)");
        assertThatThrownBy(() -> D.withRecoveryWindows(0)).hasMessage("recoveryWindows : 0 (expected: 1 .. 1000000)");
        assertThatThrownBy(() -> D.withHotThresholdRatio(0))
                .hasMessageStartingWith("hotThresholdRatio : 0.0 (expected: > 0.0");
        assertThatThrownBy(() -> D.withQueueCapacityPerSegment(-1))
                .hasMessage("queueCapacityPerSegment : -1 (expected: 0 .. 1000000)");
        assertThatThrownBy(() -> D.withQueueQuantumFraction(0)).hasMessageStartingWith("queueQuantumFraction : 0.0");
        assertThatThrownBy(() -> D.withCostModel(null)).hasMessageStartingWith("costModel : null (expected:");
        assertThatThrownBy(() -> D.withHeadroom(null)).hasMessageStartingWith("headroom : null (expected:");
    }

    @Test
    void headroomConfig_badValues_rejectedNamingTheField() {
        assertThatThrownBy(() -> H.withSafetyFactor(0)).hasMessage("safetyFactor : 0.0 (expected: > 0.0 .. 1.0)");
        assertThatThrownBy(() -> H.withSafetyFactor(Double.NaN))
                .hasMessage("safetyFactor : NaN (expected: > 0.0 .. 1.0)");
        assertThatThrownBy(() -> H.withCalibrationSmoothing(1.1)).hasMessageStartingWith("calibrationSmoothing : 1.1");
        assertThatThrownBy(() -> H.withCalibrationRange(0, 1)).hasMessageStartingWith("calibrationMin : 0.0");
        assertThatThrownBy(() -> H.withCalibrationRange(2, 1))
                .hasMessage("calibrationMax : 1.0 (expected: 2.0 .. 100.0)");
        assertThatThrownBy(() -> H.withMaxPredictionError(-0.1)).hasMessageStartingWith("maxPredictionError : -0.1");
        assertThatThrownBy(() -> H.withMinPredictions(-1)).hasMessageStartingWith("minPredictions : -1");
        assertThatThrownBy(() -> H.withMinSamples(0)).hasMessageStartingWith("minSamples : 0 (expected: 1 ..");
        assertThatThrownBy(() -> H.withMaxWindowIntervals(0)).hasMessageStartingWith("maxWindowIntervals : 0");
        assertThatThrownBy(() -> H.withMaxBorrowRatio(Double.POSITIVE_INFINITY))
                .hasMessage("maxBorrowRatio : Infinity (expected: 0.0 .. 100.0)");
    }
}
