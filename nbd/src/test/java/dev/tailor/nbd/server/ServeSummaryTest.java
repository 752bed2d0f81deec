package dev.tailor.nbd.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.admission.AdmissionConfig;
import org.junit.jupiter.api.Test;

/** The banner's admission line names the departures a config switched away from its variant's defaults. */
class ServeSummaryTest {

    @Test
    void switchedDepartures_nameWhatDiffersFromTheVariant_andNothingElse() {
        assertThat(ServeSummary.switchedDepartures("tailor", AdmissionConfig.DEFAULTS))
                .isEmpty();
        assertThat(ServeSummary.switchedDepartures("paper", AdmissionConfig.PAPER))
                .isEmpty();
        assertThat(ServeSummary.switchedDepartures(
                        "tailor",
                        AdmissionConfig.DEFAULTS.toBuilder()
                                .diskOrderAcrossGuarantee(false)
                                .build()))
                .isEqualTo(", diskOrderAcrossGuarantee off");
        assertThat(ServeSummary.switchedDepartures(
                        "paper",
                        AdmissionConfig.PAPER.toBuilder()
                                .baselineGuarantee(true)
                                .pacedRelease(true)
                                .build()))
                .isEqualTo(", baselineGuarantee on, pacedRelease on");
    }
}
