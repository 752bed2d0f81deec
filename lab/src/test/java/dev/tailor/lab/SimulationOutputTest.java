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
}
