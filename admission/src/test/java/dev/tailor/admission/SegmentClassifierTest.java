package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.List;
import org.junit.jupiter.api.Test;

class SegmentClassifierTest {

    /** Baseline per interval of the hand-computed cases; threshold per window = 10 × 100 = 1,000. */
    private static final long BASELINE = 100;

    private static SegmentClassifier defaults(int segments) {
        double[] thresholds = new double[segments];
        java.util.Arrays.fill(thresholds, BASELINE * 10.0);
        return new SegmentClassifier(10, 50, thresholds);
    }

    @Test
    void stepToTwiceTheBaseline_hotInTheSixthInterval_steadyAtTheFiftyFourthBoundaryAfterTheStep() {
        // W = 10, R = 50, threshold 1,000 per window. Input: 20 intervals of 200 (twice the
        // baseline), then silence.
        // Entry: the window ending with the running interval holds 200·k after k step intervals;
        // 200·5 = 1,000 is not above the threshold, 200·6 = 1,200 is -> hot during interval 6.
        // Exit: j intervals after the step the window holds 200·(10 − j), calm (<= 1,000) from j = 5;
        // 50 calm windows in a row are reached at j = 5 + 49 = 54.
        SegmentClassifier c = defaults(1);
        for (int k = 1; k <= 20; k++) {
            SegmentClass now = c.charge(0, 200);
            assertThat(now).as("interval %d of the step", k).isEqualTo(k < 6 ? SegmentClass.STEADY : SegmentClass.HOT);
            c.endInterval();
        }
        for (int j = 1; j <= 53; j++) {
            c.endInterval();
            assertThat(c.classOf(0)).as("boundary %d after the step", j).isEqualTo(SegmentClass.HOT);
            assertThat(c.calmWindows(0)).as("calm windows at boundary %d", j).isEqualTo(Math.max(0, j - 4));
        }
        c.endInterval();
        assertThat(c.classOf(0)).as("boundary 54 after the step").isEqualTo(SegmentClass.STEADY);
        assertThat(c.hotCount()).isZero();
        // Its window is empty and it is steady: idle, no longer visited at boundaries.
        assertThat(c.activeCount()).isZero();
    }

    @Test
    void relapse_duringRecovery_restartsTheCount() {
        // Hysteresis means "R consecutive calm windows": one window above the threshold in between
        // starts the count again.
        SegmentClassifier c = defaults(1);
        c.charge(0, 5_000);
        assertThat(c.classOf(0)).isEqualTo(SegmentClass.HOT);
        for (int i = 0; i < 10; i++) {
            c.endInterval(); // the 5,000 stays in the window for 10 boundaries
        }
        assertThat(c.calmWindows(0)).isZero();
        for (int i = 0; i < 30; i++) {
            c.endInterval();
        }
        assertThat(c.calmWindows(0)).isEqualTo(30);
        c.charge(0, 1_001);
        c.endInterval();
        assertThat(c.calmWindows(0)).isZero();
        assertThat(c.classOf(0)).isEqualTo(SegmentClass.HOT);
    }

    @Test
    void exactlyTheThreshold_isNotHot() {
        // Hot means strictly above the baseline; a segment using exactly its commitment is steady.
        SegmentClassifier c = defaults(1);
        assertThat(c.charge(0, 1_000)).isEqualTo(SegmentClass.STEADY);
        assertThat(c.charge(0, 1)).isEqualTo(SegmentClass.HOT);
    }

    @Test
    void windowSlidesPerInterval_oldCostLeavesAfterWIntervals() {
        // Sliding, not tumbling: cost charged in interval 1 stays in the window through boundary 10
        // (the window then covers intervals 1 .. 10) and leaves at boundary 11.
        SegmentClassifier c = defaults(2);
        c.charge(1, 900);
        for (int b = 1; b <= 9; b++) {
            c.endInterval();
            assertThat(c.windowCostUnits(1)).isEqualTo(900);
        }
        // 900 in the window plus 101 in the 10th interval: 1,001 > 1,000 -> hot.
        assertThat(c.charge(1, 101)).isEqualTo(SegmentClass.HOT);
        assertThat(c.classOf(0)).isEqualTo(SegmentClass.STEADY);
        c.endInterval();
        assertThat(c.windowCostUnits(1)).isEqualTo(1_001);
        c.endInterval();
        assertThat(c.windowCostUnits(1)).isEqualTo(101);
    }

    @Test
    void constructor_windowTooLongForSoManySegments_rejectedNamingTheField() {
        // 2^20 segments × W = 100 would be 800 MiB of ring: a clear error, not an OutOfMemoryError.
        assertThatThrownBy(() -> new SegmentClassifier(100, 50, new double[1 << 20]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("windowIntervals : 100 (expected: at most 64 for 1048576 segments");
    }

    @Test
    void skipIdleIntervals_onlyWhenNothingIsActive() {
        SegmentClassifier c = defaults(1);
        c.skipIdleIntervals(1_000_000_007L);
        // The shared ring position moved by an amount that is not a multiple of W; an idle ring is
        // all zeros, so a new burst is counted exactly as before.
        for (int k = 1; k <= 6; k++) {
            assertThat(c.charge(0, 200)).isEqualTo(k < 6 ? SegmentClass.STEADY : SegmentClass.HOT);
            c.endInterval();
        }
        assertThatThrownBy(() -> c.skipIdleIntervals(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("skipIdleIntervals : 1 active segments (expected: 0)");
    }

    @Test
    void classOf_randomInput_matchesTheDefinitionRecomputedFromTheRawInput() {
        // Reference model: hot whenever the last W intervals exceed the threshold; a hot segment is
        // steady again exactly at the R-th consecutive calm window; never otherwise.
        qt().withExamples(300)
                .forAll(
                        lists().of(integers().between(0, 400)).ofSizeBetween(1, 400),
                        integers().between(1, 12),
                        integers().between(1, 20))
                .checkAssert((input, w, r) -> check(input, w, r));
    }

    private static void check(List<Integer> input, int w, int r) {
        double threshold = BASELINE * (double) w;
        SegmentClassifier c = new SegmentClassifier(w, r, new double[] {threshold});
        long[] history = new long[input.size()];
        int calmRun = 0;
        boolean wasHot = false;
        for (int t = 0; t < input.size(); t++) {
            history[t] = input.get(t);
            c.charge(0, input.get(t));
            c.endInterval();
            long window = 0;
            for (int i = Math.max(0, t - w + 1); i <= t; i++) {
                window += history[i];
            }
            assertThat(c.windowCostUnits(0)).isEqualTo(window);
            if (window > threshold) {
                assertThat(c.classOf(0))
                        .as("window %d above %s at %d", window, threshold, t)
                        .isEqualTo(SegmentClass.HOT);
                wasHot = true;
                calmRun = 0;
            } else {
                calmRun++;
                SegmentClass expected = wasHot && calmRun < r ? SegmentClass.HOT : SegmentClass.STEADY;
                assertThat(c.classOf(0))
                        .as("calm window %d of %d at %d", calmRun, r, t)
                        .isEqualTo(expected);
                wasHot = expected == SegmentClass.HOT;
            }
        }
    }
}
