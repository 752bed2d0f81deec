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
    void builder_defaults_equalTheDefaultsAsTheyWereWrittenOut() {
        // The defaults as the canonical constructor took them before the builder held them.
        AdmissionConfig written = new AdmissionConfig(
                10_000_000L,
                1e9,
                32L << 30,
                1L << 20,
                0.2,
                10,
                50,
                1.0,
                64,
                1.0 / 16,
                IoCostModel.DEFAULT,
                new HeadroomConfig(0.5, 0.2, 0.1, 2.0, 0.5, 3, 20, 100, 1.0),
                true,
                true,
                true,
                true,
                false,
                true,
                true,
                false,
                false,
                false,
                false,
                true,
                false,
                true,
                true,
                true,
                true,
                false,
                false,
                true, // finishTagDoor, on since it met its rule
                true);
        assertThat(AdmissionConfig.builder().build()).isEqualTo(written).isEqualTo(D);
        assertThat(HeadroomConfig.builder().build())
                .isEqualTo(written.headroom())
                .isEqualTo(H);
        assertThat(AdmissionConfig.PAPER)
                .isEqualTo(new AdmissionConfig(
                        10_000_000L,
                        1e9,
                        32L << 30,
                        1L << 20,
                        0.2,
                        10,
                        50,
                        1.0,
                        64,
                        1.0 / 16,
                        IoCostModel.DEFAULT,
                        H,
                        true,
                        true,
                        true,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false,
                        true,
                        false,
                        false,
                        false,
                        false,
                        false,
                        false));
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        AdmissionConfig changed =
                D.toBuilder().reserveFraction(0.3).fifoDeadline(true).build();
        assertThat(changed.reserveFraction()).isEqualTo(0.3);
        assertThat(changed.fifoDeadline()).isTrue();
        assertThat(changed.toBuilder().reserveFraction(0.2).fifoDeadline(false).build())
                .isEqualTo(D);
        assertThat(D.toBuilder().build()).isEqualTo(D);
        assertThat(H.toBuilder().minPredictions(0).build())
                .isEqualTo(new HeadroomConfig(0.5, 0.2, 0.1, 2.0, 0.5, 0, 20, 100, 1.0));
    }

    @Test
    void builder_dependentFields_checkedTogetherInBuild() {
        // A 1 s interval at 1 cost unit per second: each alone would give no budget at the other's default.
        AdmissionConfig slow = AdmissionConfig.builder()
                .capacityCostUnitsPerSecond(1)
                .intervalNanos(1_000_000_000L)
                .build();
        assertThat(slow.budgetCostUnits()).isEqualTo(1);
        // A 4 KiB segment of 4 KiB blocks: the segment alone is smaller than the default block.
        assertThat(AdmissionConfig.builder()
                        .segmentSizeBytes(4096)
                        .blockSizeBytes(4096)
                        .build()
                        .segmentSizeBytes())
                .isEqualTo(4096);
        assertThat(H.toBuilder().calibrationMin(5).calibrationMax(10).build().calibrationMin())
                .isEqualTo(5);
        // The builder checks in build(), naming the field, so a builder left invalid fails there.
        AdmissionConfig.Builder invalid = AdmissionConfig.builder().windowIntervals(0);
        assertThatThrownBy(invalid::build).hasMessage("windowIntervals : 0 (expected: 1 .. 10000)");
        HeadroomConfig.Builder inverted = HeadroomConfig.builder().calibrationMin(3);
        assertThatThrownBy(inverted::build).hasMessage("calibrationMax : 2 (expected: a number in [3, 100])");
    }

    @Test
    void constructor_reserveOutsideUnitInterval_rejectedNamingTheField() {
        assertThatThrownBy(() -> D.toBuilder().reserveFraction(-0.1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("reserveFraction : -0.1 (expected: a number in [0, 1])");
        assertThatThrownBy(() -> D.toBuilder().reserveFraction(1.5).build())
                .hasMessage("reserveFraction : 1.5 (expected: a number in [0, 1])");
        assertThatThrownBy(() -> D.toBuilder().reserveFraction(Double.NaN).build())
                .hasMessage("reserveFraction : NaN (expected: a number in [0, 1])");
        assertThat(D.toBuilder().reserveFraction(0).build().reserveFraction()).isZero();
        assertThat(D.toBuilder().reserveFraction(1).build().reserveFraction()).isEqualTo(1);
    }

    @Test
    void constructor_zeroOrHugeInterval_rejected() {
        assertThatThrownBy(() -> D.toBuilder().intervalNanos(0).build())
                .hasMessage("intervalNanos : 0 (expected: 1000 .. 60000000000)");
        assertThatThrownBy(() -> D.toBuilder().intervalNanos(-10_000_000).build())
                .hasMessageStartingWith("intervalNanos : -10000000");
        assertThatThrownBy(() -> D.toBuilder().intervalNanos(61_000_000_000L).build())
                .hasMessageStartingWith("intervalNanos : 61000000000");
    }

    @Test
    void constructor_capacity_nanNegativeOrBudgetOutOfRange_rejected() {
        assertThatThrownBy(() ->
                        D.toBuilder().capacityCostUnitsPerSecond(Double.NaN).build())
                .hasMessageStartingWith("capacityCostUnitsPerSecond : NaN (expected: a finite number > 0)");
        assertThatThrownBy(() -> D.toBuilder().capacityCostUnitsPerSecond(-1).build())
                .hasMessageStartingWith("capacityCostUnitsPerSecond : -1 ");
        assertThatThrownBy(() -> D.toBuilder()
                        .capacityCostUnitsPerSecond(Double.POSITIVE_INFINITY)
                        .build())
                .hasMessageStartingWith("capacityCostUnitsPerSecond : Infinity");
        // 50 cost units per second give 0.5 per 10 ms interval: no budget at all.
        assertThatThrownBy(() -> D.toBuilder().capacityCostUnitsPerSecond(50).build())
                .hasMessageStartingWith(
                        "capacityCostUnitsPerSecond : 50 (expected: a budget per interval of 1 .. " + "2^50")
                .hasMessageEndingWith(
                        "i.e. a number in [100, 1.125899906842624e17] at intervalNanos 10000000; it gives 0)");
        assertThatThrownBy(() -> D.toBuilder().capacityCostUnitsPerSecond(1e20).build())
                .hasMessageStartingWith("capacityCostUnitsPerSecond : 1e20 ");
    }

    @Test
    void constructor_negativeOrMisalignedSizes_rejected() {
        assertThatThrownBy(() -> D.toBuilder()
                        .segmentSizeBytes(1 << 20)
                        .blockSizeBytes(-1)
                        .build())
                .hasMessageStartingWith("blockSizeBytes : -1");
        assertThatThrownBy(() ->
                        D.toBuilder().segmentSizeBytes(-5).blockSizeBytes(1).build())
                .hasMessageStartingWith("segmentSizeBytes : -5");
        assertThatThrownBy(() ->
                        D.toBuilder().segmentSizeBytes(1000).blockSizeBytes(300).build())
                .hasMessage("segmentSizeBytes : 1000 (expected: a multiple of blockSizeBytes, 300 bytes, at least 300"
                        + " bytes)");
        // In sizes, not a range up to Long.MAX_VALUE (1048576 .. 9223372036854775807).
        assertThatThrownBy(() -> D.toBuilder()
                        .segmentSizeBytes(1024)
                        .blockSizeBytes(1 << 20)
                        .build())
                .hasMessage("segmentSizeBytes : 1024 (expected: a multiple of blockSizeBytes, 1MiB = 1048576 bytes,"
                        + " at least 1MiB)");
        assertThatThrownBy(() -> D.toBuilder().blockSizeBytes(0).build())
                .hasMessage("blockSizeBytes : 0 (expected: at least 1 byte)");
    }

    @Test
    void constructor_otherFields_rejectedNamingTheField() {
        assertThatThrownBy(() -> D.toBuilder().windowIntervals(0).build())
                .hasMessage("windowIntervals : 0 (expected: 1 .. 10000)");
        assertThatThrownBy(() -> D.toBuilder().recoveryWindows(0).build())
                .hasMessage("recoveryWindows : 0 (expected: 1 .. 1000000)");
        assertThatThrownBy(() -> D.toBuilder().hotThresholdRatio(0).build())
                .hasMessageStartingWith("hotThresholdRatio : 0 (expected: a number in (0, 1000000])");
        assertThatThrownBy(() -> D.toBuilder().queueCapacityPerSegment(-1).build())
                .hasMessage("queueCapacityPerSegment : -1 (expected: 0 .. 1000000)");
        assertThatThrownBy(() -> D.toBuilder().queueQuantumFraction(0).build())
                .hasMessageStartingWith("queueQuantumFraction : 0 ");
        assertThatThrownBy(() -> D.toBuilder().costModel(null).build())
                .hasMessageStartingWith("costModel : null (expected:");
        assertThatThrownBy(() -> D.toBuilder().headroom(null).build())
                .hasMessageStartingWith("headroom : null (expected:");
    }

    @Test
    void headroomConfig_badValues_rejectedNamingTheField() {
        assertThatThrownBy(() -> H.toBuilder().safetyFactor(0).build())
                .hasMessage("safetyFactor : 0 (expected: a number in (0, 1])");
        assertThatThrownBy(() -> H.toBuilder().safetyFactor(Double.NaN).build())
                .hasMessage("safetyFactor : NaN (expected: a number in (0, 1])");
        assertThatThrownBy(() -> H.toBuilder().calibrationSmoothing(1.1).build())
                .hasMessageStartingWith("calibrationSmoothing : 1.1");
        assertThatThrownBy(
                        () -> H.toBuilder().calibrationMin(0).calibrationMax(1).build())
                .hasMessageStartingWith("calibrationMin : 0 ");
        assertThatThrownBy(
                        () -> H.toBuilder().calibrationMin(2).calibrationMax(1).build())
                .hasMessage("calibrationMax : 1 (expected: a number in [2, 100])");
        assertThatThrownBy(() -> H.toBuilder().maxPredictionError(-0.1).build())
                .hasMessageStartingWith("maxPredictionError : -0.1");
        assertThatThrownBy(() -> H.toBuilder().minPredictions(-1).build())
                .hasMessageStartingWith("minPredictions : -1");
        assertThatThrownBy(() -> H.toBuilder().minSamples(0).build())
                .hasMessageStartingWith("minSamples : 0 (expected: 1 ..");
        assertThatThrownBy(() -> H.toBuilder().maxWindowIntervals(0).build())
                .hasMessageStartingWith("maxWindowIntervals : 0");
        assertThatThrownBy(() ->
                        H.toBuilder().maxBorrowRatio(Double.POSITIVE_INFINITY).build())
                .hasMessage("maxBorrowRatio : Infinity (expected: a number in [0, 100])");
    }
}
