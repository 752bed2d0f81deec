package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The cluster simulator's text table. */
class SimulationOutputTest {

    @Test
    void policyColumn_widensForALongPolicyName_soItsRowStaysInLine() {
        assertThat(SimulationOutput.policyColumn(java.util.List.of("heart", "prequal")))
                .isEqualTo("%-16s");
        assertThat(SimulationOutput.policyColumn(java.util.List.of("heart", "heart-slow-link-filter")))
                .isEqualTo("%-22s");
    }

    @Test
    void progress_notATerminal_aWholeLineEveryTenthOfTheRuns_noCarriageReturn() {
        java.io.StringWriter text = new java.io.StringWriter();
        java.io.PrintWriter err = new java.io.PrintWriter(text);
        for (int done = 1; done <= 96; done++) {
            SimulationOutput.progress(err, false, done, 96, "run " + done);
        }

        assertThat(text.toString()).doesNotContain("\r");
        assertThat(text.toString().lines().toList())
                .hasSize(10)
                .startsWith("tailor: 10/96 runs done (run 10)", "tailor: 20/96 runs done (run 20)")
                .endsWith("tailor: 96/96 runs done (run 96)");
    }

    @Test
    void progress_notATerminal_fewRuns_aLineEach() {
        java.io.StringWriter text = new java.io.StringWriter();
        java.io.PrintWriter err = new java.io.PrintWriter(text);
        for (int done = 1; done <= 3; done++) {
            SimulationOutput.progress(err, false, done, 3, "run " + done);
        }

        assertThat(text.toString().lines().toList())
                .containsExactly(
                        "tailor: 1/3 runs done (run 1)",
                        "tailor: 2/3 runs done (run 2)",
                        "tailor: 3/3 runs done (run 3)");
    }

    @Test
    void progress_aTerminal_aBarRedrawnOnOneLine() {
        java.io.StringWriter text = new java.io.StringWriter();
        SimulationOutput.progress(new java.io.PrintWriter(text), true, 1, 4, "run 1");

        assertThat(text.toString())
                .startsWith("\r[#######")
                .contains("1/4 run 1")
                .doesNotContain("\n");
    }
}
