package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IoCostModelTest {

    @Test
    void costUnits_defaults_blkIocostSsdProfileRoundedUp() {
        // 4 KiB read: 109,016 + 2.0465 × 4,096 = 117,398.464 -> 117,399 (blk-iocost's 1e9 / 8,518 IOPS
        // = 117,398 ns per random 4 KiB read, up to the rounding of the coefficients).
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.READ, 4096)).isEqualTo(117_399);
        // 1 MiB write: 36,006 + 2.3370 × 1,048,576 = 2,486,528.11 -> 2,486,529.
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.WRITE, 1 << 20)).isEqualTo(2_486_529);
        // The other two cells of docs/admission.md's table.
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.READ, 1 << 20)).isEqualTo(2_254_927);
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.WRITE, 4096)).isEqualTo(45_579);
        // No bytes: the base cost alone.
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.WRITE, 0)).isEqualTo(36_006);
    }

    @Test
    void costUnits_freeModel_stillChargesOneUnit() {
        // A zero cost would let requests through without touching the pools.
        assertThat(new IoCostModel(0, 0, 0, 0).costUnits(IoKind.READ, 1 << 20)).isEqualTo(1);
    }

    @Test
    void costUnits_hugeRequest_clampedToMax() {
        assertThat(IoCostModel.DEFAULT.costUnits(IoKind.READ, Long.MAX_VALUE)).isEqualTo(IoCostModel.MAX_COST_UNITS);
        assertThat(new IoCostModel(Double.MAX_VALUE, 1, 0, 0).costUnits(IoKind.READ, 1))
                .isEqualTo(IoCostModel.MAX_COST_UNITS);
    }

    @Test
    void costUnits_readAndWriteUseTheirOwnCoefficients() {
        IoCostModel model = new IoCostModel(10, 1, 100, 2);
        assertThat(model.costUnits(IoKind.READ, 5)).isEqualTo(15);
        assertThat(model.costUnits(IoKind.WRITE, 5)).isEqualTo(110);
    }

    @Test
    void constructorAndCost_badValues_rejectedNamingTheField() {
        assertThatThrownBy(() -> new IoCostModel(Double.NaN, 1, 1, 1))
                .hasMessageStartingWith("readBaseCostUnits : NaN (expected: a finite number >= 0)");
        assertThatThrownBy(() -> new IoCostModel(1, -1, 1, 1))
                .hasMessageStartingWith("readCostUnitsPerByte : -1 (expected: a finite number >= 0)");
        assertThatThrownBy(() -> new IoCostModel(1, 1, Double.POSITIVE_INFINITY, 1))
                .hasMessageStartingWith("writeBaseCostUnits : Infinity");
        assertThatThrownBy(() -> new IoCostModel(1, 1, 1, -0.5)).hasMessageStartingWith("writeCostUnitsPerByte : -0.5");
        assertThatThrownBy(() -> IoCostModel.DEFAULT.costUnits(IoKind.READ, -1))
                .hasMessage("bytes : -1 (expected: >= 0)");
        assertThatThrownBy(() -> IoCostModel.DEFAULT.costUnits(null, 1))
                .hasMessage("kind : null (expected: READ or WRITE)");
    }
}
