package dev.tailor.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChecksTest {

    @Test
    void outOfRange_namesFieldValueAndRange_nanFails() {
        assertThat(Checks.requireRange("threads", 4, 1, 8)).isEqualTo(4);
        assertThatThrownBy(() -> Checks.requireRange("threads", 0, 1, 8)).hasMessage("threads : 0 (expected: 1 .. 8)");
        assertThatThrownBy(() -> Checks.requireRange("share", Double.NaN, 0.0, 1.0))
                .hasMessage("share : NaN (expected: a number in [0, 1])");
        assertThatThrownBy(() -> Checks.requireAboveAtMost("share", 0.0, 0.0, 1.0))
                .hasMessage("share : 0 (expected: a number in (0, 1])");
        assertThatThrownBy(() -> Checks.requireRange("rate", 2.5, 0.0001, 2.25))
                .hasMessage("rate : 2.5 (expected: a number in [0.0001, 2.25])");
        // Double.MAX_VALUE as the upper bound is no bound: only infinity fails it.
        assertThatThrownBy(() -> Checks.requireRange("cost", Double.POSITIVE_INFINITY, 0, Double.MAX_VALUE))
                .hasMessage("cost : Infinity (expected: a finite number >= 0)");
        assertThatThrownBy(() -> Checks.requireAboveAtMost("capacity", -1, 0, Double.MAX_VALUE))
                .hasMessage("capacity : -1 (expected: a finite number > 0)");
        // A real value reads as written: no trailing ".0", no exponent for a large whole number.
        assertThatThrownBy(() -> Checks.requireRange("rate", 1e7, 0, 1e6))
                .hasMessage("rate : 10000000 (expected: a number in [0, 1000000])");
        assertThatThrownBy(() -> Checks.requireAboveAtMost("share", 1.0000001, 0, 1))
                .hasMessage("share : 1.0000001 (expected: a number in (0, 1])");
        assertThatThrownBy(() -> Checks.requireNonNull("clock", null, "a clock"))
                .hasMessage("clock : null (expected: a clock)");
    }

    @Test
    void saturatingArithmetic_stopsAtMax() {
        assertThat(Checks.saturatedAdd(Long.MAX_VALUE - 1, 5)).isEqualTo(Long.MAX_VALUE);
        assertThat(Checks.saturatedMultiply(1L << 40, 1L << 40)).isEqualTo(Long.MAX_VALUE);
        assertThat(Checks.saturatedMultiply(3, 7)).isEqualTo(21);
    }

    @Test
    void problem_message_andReport() {
        assertThat(new Problem("tenants[2].rate", -1.0, "a number > 0").message())
                .isEqualTo("tenants[2].rate: -1 (expected: a number > 0)");
        assertThat(new Problem("", "empty", "a scenario").message())
                .isEqualTo("(top level): empty (expected: a scenario)");
        assertThat(Problem.report("f.yaml", List.of("a: 1 (expected: 2)"))).isEqualTo("f.yaml: a: 1 (expected: 2)");
        assertThat(Problem.report("f.yaml", List.of("a: x", "b: y"))).isEqualTo("f.yaml: 2 problems:\n  a: x\n  b: y");
        // In the order of their lines, the document's own problems first; ties keep the order found.
        assertThat(Problem.report(
                        "f.yaml",
                        List.of("c: 1 (expected: 2) at line 12", "b: x at line 3", "(top level): y", "d: z at line 3")))
                .isEqualTo("f.yaml: 4 problems:\n  (top level): y\n  b: x at line 3\n  d: z at line 3\n"
                        + "  c: 1 (expected: 2) at line 12");
    }
}
