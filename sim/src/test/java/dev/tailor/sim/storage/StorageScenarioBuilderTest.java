package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The scenario builders: unset fields take a scenario file's defaults; what they build is checked as a file is. */
class StorageScenarioBuilderTest {

    @Test
    void admissionSpec_unsetFields_takeTheDefaults() {
        StorageScenario.AdmissionSpec spec =
                StorageScenario.AdmissionSpec.builder().build();
        assertThat(spec).isEqualTo(StorageScenario.AdmissionSpec.DEFAULTS);
        assertThat(spec).isEqualTo(new StorageScenario.AdmissionSpec(1.0, 0.2, 4096, 10, 50, 1.0, 10, 2.0));
        assertThat(StorageScenario.builder().build().admission()).isEqualTo(spec);
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        StorageScenario base = StorageScenarios.load("burst-microbench");
        StorageScenario variant = base.toBuilder().seed(9L).warmupSeconds(1.0).build();
        assertThat(variant.seed()).isEqualTo(9L);
        assertThat(variant.warmupSeconds()).isEqualTo(1.0);
        assertThat(variant.toBuilder()
                        .seed(base.seed())
                        .warmupSeconds(base.warmupSeconds())
                        .build())
                .isEqualTo(base);
    }

    @Test
    void builtValues_areChecked_namingTheField() {
        StorageScenario bad = StorageScenarios.load("burst-microbench").toBuilder()
                .admission(StorageScenario.AdmissionSpec.builder()
                        .reserveFraction(1.5)
                        .windowIntervals(0)
                        .build())
                .build();
        assertThat(bad.problems())
                .anySatisfy(p -> assertThat(p.message()).startsWith("admission.reserveFraction: 1.5"))
                .anySatisfy(p -> assertThat(p.message()).startsWith("admission.windowIntervals: 0"));
    }
}
