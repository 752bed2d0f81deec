package dev.tailor.heart.flow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The DIMACS reader that {@link DimacsMinCostFlowTest} trusts to hand the solver the right problem. */
class DimacsTest {

    private static final String TINY = """
            c a comment, then a blank line

            p min 3 2
            n 1 5
            n 3 -5
            a 1 2 0 10 3
            a 2 3 1 10 -2
            """;

    @Test
    void parseInstance_tinyInstance_readsOneBasedIdsAsZeroBasedAndEveryField() {
        // An off-by-one in ids or a swapped LOW/CAP column would make every optimum check meaningless.
        Dimacs.Instance p = Dimacs.parseInstance("tiny", TINY);
        assertThat(p.supply()).containsExactly(5, 0, -5);
        assertThat(p.from()).containsExactly(0, 1);
        assertThat(p.to()).containsExactly(1, 2);
        assertThat(p.lower()).containsExactly(0, 1);
        assertThat(p.upper()).containsExactly(10, 10);
        assertThat(p.cost()).containsExactly(3, -2);
        assertThat(p.totalSupply()).isEqualTo(5);
    }

    @Test
    void parseSolution_sAndFLines_mapOntoTheInstancesArcs() {
        // The .sol check compares flows arc by arc; a flow landing on the wrong arc must not pass.
        Dimacs.Solution s = Dimacs.parseSolution("tiny.sol", "c optimal\ns 5\nf 1 2 5\nf 2 3 5\n");
        assertThat(s.cost()).isEqualTo(5);
        long[] flow = Dimacs.parseInstance("tiny", TINY).arcFlows(s);
        assertThat(flow).containsExactly(5, 5);
        assertThat(DimacsMinCostFlowTest.violations(Dimacs.parseInstance("tiny", TINY), flow))
                .isEmpty();
        assertThat(DimacsMinCostFlowTest.cost(Dimacs.parseInstance("tiny", TINY), flow))
                .isEqualTo(5);
    }

    @Test
    void violations_flowThatBreaksABoundOrConservation_isReported() {
        // The feasibility check must be able to fail: 4 units leave node 1 but it supplies 5, and
        // arc 2's lower bound 1 is not met.
        Dimacs.Instance p = Dimacs.parseInstance("tiny", TINY);
        assertThat(DimacsMinCostFlowTest.violations(p, new long[] {4, 0}))
                .anyMatch(v -> v.startsWith("arc 2 (2 -> 3): flow 0 outside [1, 10]"))
                .anyMatch(v -> v.startsWith("node 1: out - in = 4 (expected: supply 5)"));
    }

    @Test
    void parseInstance_malformedLines_namesFileLineAndProblem() {
        // A truncated or mis-typed data file must fail loudly at its line, not solve a different problem.
        assertThatThrownBy(() -> Dimacs.parseInstance("bad", "p min 2 1\na 1 3 0 1 1\n"))
                .hasMessageContaining("bad:2: TO 3 (expected: 1 .. 2)");
        assertThatThrownBy(() -> Dimacs.parseInstance("bad", "p min 2 2\na 1 2 0 1 1\n"))
                .hasMessageContaining("bad: 1 a lines (expected: 2");
        assertThatThrownBy(() -> Dimacs.parseInstance("bad", "a 1 2 0 1 1\n"))
                .hasMessageContaining("bad:1: an a line before the p line");
        assertThatThrownBy(() -> Dimacs.parseInstance("bad", "p min 2 1\na 1 2 0 x 1\n"))
                .hasMessageContaining("bad:2: CAP x is not an integer");
        assertThatThrownBy(() -> Dimacs.parseSolution("bad.sol", "f 1 2 3\n"))
                .hasMessageContaining("bad.sol: no s line");
    }
}
