package dev.tailor.sim.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The scenario builder: unset fields take a scenario file's defaults; what it builds is checked as a file is. */
class ClusterScenarioBuilderTest {

    @Test
    void unsetFields_takeTheDefaults() {
        ClusterScenario built = ClusterScenario.builder().name("x").seed(1L).build();
        assertThat(built.description()).isEmpty();
        assertThat(built.warmupSeconds()).isEqualTo(120.0);
        assertThat(built.durationSeconds()).isEqualTo(600.0);
        assertThat(built.timeoutSeconds()).isEqualTo(30.0);
        assertThat(built.cpuModel()).isEqualTo(ClusterScenario.CpuModel.FLUID);
        assertThat(built.cfsPeriodMillis()).isEqualTo(100.0);
        assertThat(built.callCostCv()).isEqualTo(0.5);
        assertThat(built.replicaCostVariation()).isEqualTo(0.12);
        assertThat(built.linkJitter()).isEqualTo(0.1);
        assertThat(built.scrapeIntervalSeconds()).isEqualTo(15.0);
        assertThat(built.replicasPerNode()).isEqualTo(1);
        assertThat(built.cpuLimitCores()).isEqualTo(1.0);
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        ClusterScenario base = Scenarios.load("paper-pairwise");
        ClusterScenario variant =
                base.toBuilder().seed(9L).durationSeconds(60.0).network("A").build();
        assertThat(variant.seed()).isEqualTo(9L);
        assertThat(variant.durationSeconds()).isEqualTo(60.0);
        assertThat(variant.network()).isEqualTo("A");
        assertThat(variant.toBuilder()
                        .seed(base.seed())
                        .durationSeconds(base.durationSeconds())
                        .network(base.network())
                        .build())
                .isEqualTo(base);
    }

    @Test
    void builtValues_areChecked_namingTheField() {
        ClusterScenario bad = Scenarios.load("paper-pairwise").toBuilder()
                .warmupSeconds(-1.0)
                .durationSeconds(Double.NaN)
                .build();
        assertThat(bad.problems())
                .anySatisfy(p -> assertThat(p.message()).startsWith("warmupSeconds: -1"))
                .anySatisfy(p -> assertThat(p.message()).startsWith("durationSeconds: NaN (expected"));
    }
}
