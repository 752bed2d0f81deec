package dev.tailor.eventloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.eventloop.PriorityPolicy.Step;
import org.junit.jupiter.api.Test;

/** The policy on hand-computed cases, defaults 10 µs, 0.25, cap 1 ms, hold-back 1 ms. */
class PriorityPolicyTest {

    private static final PriorityPolicy P = PriorityPolicy.DEFAULTS;

    @Test
    void defaults_areDesignValuesAndOurCaps() {
        // The paper gives 10 µs and 0.25 (docs/design.md#io-priority-event-loop); the cap and the hold-back are
        // ours and documented as such.
        assertThat(P).isEqualTo(new PriorityPolicy(10_000, 0.25, 1_000_000, 1_000_000));
    }

    @Test
    void allowanceNanos_noIo_isBase() {
        // An idle loop still gives background work 10 µs per iteration, or it would never run without I/O.
        assertThat(P.allowanceNanos(0)).isEqualTo(10_000);
    }

    @Test
    void allowanceNanos_belowBreakEven_isBase() {
        // 0.25 × 39 µs = 9.75 µs < 10 µs: the base applies; at 40 µs both terms are 10 µs.
        assertThat(P.allowanceNanos(39_000)).isEqualTo(10_000);
        assertThat(P.allowanceNanos(40_000)).isEqualTo(10_000);
    }

    @Test
    void allowanceNanos_aboveBreakEven_isQuarterOfIo() {
        // 0.25 × 100 µs = 25 µs; 0.25 × 1 ms = 250 µs.
        assertThat(P.allowanceNanos(100_000)).isEqualTo(25_000);
        assertThat(P.allowanceNanos(1_000_000)).isEqualTo(250_000);
        assertThat(P.allowanceCapped(1_000_000)).isFalse();
    }

    @Test
    void allowanceNanos_longPause_isCapped() {
        // A 200 ms GC pause inside the I/O phase would earn 50 ms; the cap holds it at 1 ms.
        assertThat(P.allowanceNanos(200_000_000)).isEqualTo(1_000_000);
        assertThat(P.allowanceCapped(200_000_000)).isTrue();
        // Exactly at the cap (4 ms of I/O) the formula and the cap agree; the cap is not "applied".
        assertThat(P.allowanceNanos(4_000_000)).isEqualTo(1_000_000);
        assertThat(P.allowanceCapped(4_000_000)).isFalse();
    }

    @Test
    void allowanceNanos_extremes_stayInRange() {
        // A clock that stepped back gives a negative duration: read as no I/O. Long.MAX_VALUE must not overflow.
        assertThat(P.allowanceNanos(-5_000_000)).isEqualTo(10_000);
        assertThat(P.allowanceNanos(Long.MAX_VALUE)).isEqualTo(1_000_000);
    }

    @Test
    void allowanceNanos_zeroMultiplier_isAlwaysBase() {
        PriorityPolicy flat = P.withIoMultiplier(0);
        assertThat(flat.allowanceNanos(0)).isEqualTo(10_000);
        assertThat(flat.allowanceNanos(1_000_000_000)).isEqualTo(10_000);
        assertThat(flat.allowanceCapped(1_000_000_000)).isFalse();
    }

    @Test
    void next_nothingPending_drained() {
        assertThat(P.next(0, 10_000, -1, false)).isEqualTo(Step.DRAINED);
        assertThat(P.next(50_000, 10_000, -1, true)).isEqualTo(Step.DRAINED);
    }

    @Test
    void next_allowanceLeftNoIo_runs() {
        assertThat(P.next(0, 10_000, 0, false)).isEqualTo(Step.RUN_UNRELATED);
        assertThat(P.next(9_999, 10_000, 0, false)).isEqualTo(Step.RUN_UNRELATED);
    }

    @Test
    void next_allowanceSpent_backToIoEvenIfOverdue() {
        // The allowance binds overdue tasks too: that is what bounds the delay of I/O by allowance + one task.
        assertThat(P.next(10_000, 10_000, 0, false)).isEqualTo(Step.ALLOWANCE_SPENT);
        assertThat(P.next(10_000, 10_000, 5_000_000, true)).isEqualTo(Step.ALLOWANCE_SPENT);
    }

    @Test
    void next_ioFoundTaskNotOverdue_yields() {
        assertThat(P.next(0, 10_000, 999_999, true)).isEqualTo(Step.YIELD_TO_IO);
    }

    @Test
    void next_ioFoundTaskOverdue_runs() {
        // The starvation guard: after 1 ms of waiting, background work runs despite continuous I/O.
        assertThat(P.next(0, 10_000, 1_000_000, true)).isEqualTo(Step.RUN_UNRELATED);
    }

    @Test
    void next_zeroHoldBack_neverYields() {
        assertThat(P.withMaxUnrelatedDelayNanos(0).next(0, 10_000, 0, true)).isEqualTo(Step.RUN_UNRELATED);
    }

    @Test
    void constructor_badValues_namedInMessage() {
        assertThatThrownBy(() -> P.withBaseAllowanceNanos(0))
                .hasMessage("baseAllowanceNanos : 0 (expected: 1 .. 1000000000)");
        assertThatThrownBy(() -> P.withIoMultiplier(Double.NaN))
                .hasMessage("ioMultiplier : NaN (expected: a number in [0, 1000])");
        assertThatThrownBy(() -> P.withIoMultiplier(-0.1))
                .hasMessage("ioMultiplier : -0.1 (expected: a number in [0, 1000])");
        // A cap below the base would make the allowance formula contradictory.
        assertThatThrownBy(() -> P.withMaxAllowanceNanos(9_999))
                .hasMessage("maxAllowanceNanos : 9999 (expected: 10000 .. 10000000000)");
        assertThatThrownBy(() -> P.withMaxUnrelatedDelayNanos(-1))
                .hasMessage("maxUnrelatedDelayNanos : -1 (expected: 0 .. 3600000000000)");
    }

    @Test
    void withers_changeOneField() {
        assertThat(P.withBaseAllowanceNanos(20_000).baseAllowanceNanos()).isEqualTo(20_000);
        assertThat(P.withIoMultiplier(0.5).ioMultiplier()).isEqualTo(0.5);
        assertThat(P.withMaxAllowanceNanos(2_000_000).maxAllowanceNanos()).isEqualTo(2_000_000);
        assertThat(P.withMaxUnrelatedDelayNanos(7).maxUnrelatedDelayNanos()).isEqualTo(7);
        assertThat(P.withIoMultiplier(0.5).withIoMultiplier(0.25)).isEqualTo(P);
    }
}
