package dev.tailor.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import org.junit.jupiter.api.Test;

class LatencyAdaptiveBudgetTest {

    private static final long SHARE = 1_000_000;
    private static final long WHOLE = 4_000_000;

    @Test
    void unqueuedBackend_growsByAtLeastGammaTimesTheShare_upToTheWholeBackend() {
        LatencyAdaptiveBudget budget = new LatencyAdaptiveBudget(SHARE, WHOLE, 2.0, 0.2);
        assertThat(budget.budgetCostUnits()).isEqualTo(SHARE);

        budget.onCompletion(100_000, 100_000); // slowdown 1: no queueing
        // (1 − 0.2)·1e6 + 0.2·(2/1·1e6 + 1e6) = 0.8e6 + 0.6e6
        assertThat(budget.onBoundary()).isEqualTo(1_400_000);

        for (int i = 0; i < 20; i++) {
            budget.onCompletion(50_000, 100_000);
            budget.onBoundary();
        }
        assertThat(budget.budgetCostUnits()).isEqualTo(WHOLE);
    }

    @Test
    void queueingBackend_shrinksTheBudgetBack_neverBelowTheShare() {
        LatencyAdaptiveBudget budget = new LatencyAdaptiveBudget(SHARE, WHOLE, 2.0, 0.2);
        for (int i = 0; i < 20; i++) {
            budget.onCompletion(1, 100_000);
            budget.onBoundary();
        }
        assertThat(budget.budgetCostUnits()).isEqualTo(WHOLE);

        budget.onCompletion(800_000, 100_000); // slowdown 8
        // 0.8·4e6 + 0.2·(2/8·4e6 + 1e6) = 3.2e6 + 0.4e6
        assertThat(budget.onBoundary()).isEqualTo(3_600_000);
        for (int i = 0; i < 50; i++) {
            budget.onCompletion(10_000_000, 100_000); // slowdown 100
            budget.onBoundary();
        }
        // the fixed point β ÷ (1 − 𝓛/L) = 1e6 ÷ 0.98, just above the share
        assertThat(budget.budgetCostUnits()).isBetween(SHARE, 1_030_000L);
    }

    @Test
    void anIntervalWithoutCompletions_isNoData_andHoldsTheBudget() {
        LatencyAdaptiveBudget budget = new LatencyAdaptiveBudget(SHARE, WHOLE, 2.0, 0.2);
        budget.onCompletion(100_000, 100_000);
        long grown = budget.onBoundary();
        assertThat(budget.onBoundary()).isEqualTo(grown);
        budget.onCompletion(100_000, 0); // no expected service time: no sample
        budget.onCompletion(100_000, Double.NaN);
        assertThat(budget.onBoundary()).isEqualTo(grown);
    }

    @Test
    void theMeanSlowdownOfTheInterval_drivesTheUpdate() {
        LatencyAdaptiveBudget a = new LatencyAdaptiveBudget(SHARE, WHOLE, 2.0, 0.2);
        a.onCompletion(100_000, 100_000); // 1
        a.onCompletion(300_000, 100_000); // 3: mean 2, at the target
        // 0.8·1e6 + 0.2·(1·1e6 + 1e6): grows by γ·β only
        assertThat(a.onBoundary()).isEqualTo(1_200_000);
    }

    @Test
    void oneProxy_floorEqualsCeiling_neverMoves() {
        LatencyAdaptiveBudget budget = new LatencyAdaptiveBudget(SHARE, SHARE, 2.0, 0.2);
        budget.onCompletion(1, 100_000);
        assertThat(budget.onBoundary()).isEqualTo(SHARE);
        budget.onCompletion(100_000_000, 100_000);
        assertThat(budget.onBoundary()).isEqualTo(SHARE);
    }

    @Test
    void anySequenceOfLatencies_keepsTheBudgetWithinShareAndWholeBackend() {
        qt().forAll(lists().of(integers().between(-1, 5_000_000)).ofSizeBetween(0, 200))
                .checkAssert(latencies -> {
                    LatencyAdaptiveBudget budget = new LatencyAdaptiveBudget(SHARE, WHOLE, 2.0, 0.2);
                    for (int latency : latencies) {
                        if (latency < 0) {
                            long b = budget.onBoundary();
                            assertThat(b).isBetween(SHARE, WHOLE);
                        } else {
                            budget.onCompletion(latency, 100_000);
                        }
                    }
                    assertThat(budget.onBoundary()).isBetween(SHARE, WHOLE);
                });
    }

    @Test
    void badParameters_areNamed() {
        assertThatThrownBy(() -> new LatencyAdaptiveBudget(0, WHOLE, 2, 0.2))
                .hasMessage("floorCostUnits: 0 (expected: >= 1)");
        assertThatThrownBy(() -> new LatencyAdaptiveBudget(SHARE, SHARE - 1, 2, 0.2))
                .hasMessage("ceilingCostUnits: 999999 (expected: >= floorCostUnits 1000000)");
        assertThatThrownBy(() -> new LatencyAdaptiveBudget(SHARE, WHOLE, 1, 0.2))
                .hasMessage("targetSlowdown: 1.0 (expected: a finite number > 1)");
        assertThatThrownBy(() -> new LatencyAdaptiveBudget(SHARE, WHOLE, Double.NaN, 0.2))
                .hasMessage("targetSlowdown: NaN (expected: a finite number > 1)");
        assertThatThrownBy(() -> new LatencyAdaptiveBudget(SHARE, WHOLE, 2, 0))
                .hasMessage("gamma: 0.0 (expected: a number in (0, 1])");
    }
}
