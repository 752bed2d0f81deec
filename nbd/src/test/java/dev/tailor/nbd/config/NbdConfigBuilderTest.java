package dev.tailor.nbd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tailor.common.Problem;
import dev.tailor.nbd.server.NbdServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The builders: unset fields take the defaults a config file gets, and what they build is checked at start. */
class NbdConfigBuilderTest {

    private static final ExportConfig DISK =
            ExportConfig.file("disk", "acme", 1L << 20, false, Path.of("/tmp/disk.img"));

    @Test
    void unsetFields_takeTheDefaultsOfAConfigFile() {
        NbdConfig built = NbdConfig.builder().exports(DISK).build();
        NbdConfig read = NbdConfigFiles.parse(
                "exports: [{name: disk, tenant: acme, file: /tmp/disk.img, size: 1MiB}]", "test.yaml", Path.of("/"));
        assertThat(built).isEqualTo(read);
        assertThat(built.address()).isEqualTo("127.0.0.1");
        assertThat(built.port()).isEqualTo(NbdConfig.DEFAULT_PORT);
        assertThat(built.fileIoThreads()).isEqualTo(8);
        assertThat(built.limits()).isEqualTo(Limits.DEFAULTS);
        assertThat(built.admission()).isEqualTo(AdmissionSettings.DEFAULTS);
        assertThat(built.loop()).isEqualTo(LoopSettings.DEFAULTS);
        assertThat(built.tls()).isEqualTo(TlsSettings.DEFAULTS);
    }

    @Test
    void defaults_areTodaysValues() {
        Limits limits = Limits.builder().build();
        assertThat(limits.maxRequestSize().bytes()).isEqualTo(32L << 20);
        assertThat(limits.maxInFlightPerConnection().bytes()).isEqualTo(64L << 20);
        assertThat(limits.maxInFlightRequestsPerConnection()).isEqualTo(256);
        assertThat(limits.maxConnections()).isEqualTo(256);
        assertThat(limits.maxHandshakes()).isEqualTo(64);
        assertThat(limits.handshakeTimeoutSeconds()).isEqualTo(10.0);
        assertThat(limits.idleTimeoutSeconds()).isZero();
        assertThat(limits.maxConnectionsPerAddress()).isEqualTo(192);
        // Defaults derived from another field follow it when it is set.
        Limits few = Limits.builder().maxConnections(8).build();
        assertThat(few.maxHandshakes()).isEqualTo(8);
        assertThat(few.maxConnectionsPerAddress()).isEqualTo(6);

        LoopSettings loop = LoopSettings.builder().build();
        assertThat(loop).isEqualTo(new LoopSettings("priority", 1_000, 1_000, null, 100, 1_000, 0, 1, null, 50.0, 60));

        AdmissionSettings admission = AdmissionSettings.builder().build();
        assertThat(admission.enabled()).isFalse();
        assertThat(admission.variant()).isEqualTo(AdmissionSettings.VARIANT_TAILOR);
        assertThat(admission.capacityCostUnitsPerSecond()).isEqualTo(1e9);
        assertThat(admission.reserveFraction()).isEqualTo(0.2);
        assertThat(admission.segmentSize().bytes()).isEqualTo(32L << 30);
        assertThat(admission.blockSize().bytes()).isEqualTo(1L << 20);
        assertThat(admission.queueCapacityPerSegment()).as("follows the limits").isNull();
        assertThat(admission.queueCapacityPerSegment(Limits.DEFAULTS)).isEqualTo(256 * 256);
        assertThat(admission.queueCapacityPerSegment(few)).isEqualTo(256 * 8);

        ExportConfig export =
                ExportConfig.builder().name("d").file(Path.of("d.img")).build();
        assertThat(export.tenant()).isEqualTo("default");
        assertThat(export.readOnly()).isFalse();
        assertThat(export.baseline()).isNull();
    }

    @Test
    void toBuilder_changesOnlyWhatIsSet() {
        NbdConfig config = NbdConfig.builder().port(0).exports(DISK).build();
        NbdConfig changed = config.toBuilder().fileIoThreads(2).build();
        assertThat(changed.fileIoThreads()).isEqualTo(2);
        assertThat(changed.toBuilder().fileIoThreads(8).build()).isEqualTo(config);
        AdmissionSettings budget = AdmissionSettings.DEFAULTS.toBuilder()
                .capacityCostUnitsPerSecond(null)
                .iops(1000.0)
                .build();
        assertThat(budget.budgetInOperatorUnits()).isTrue();
        assertThat(budget.reserveFraction()).isEqualTo(0.2);
    }

    @Test
    void builtValues_areCheckedAtStart_namingTheField() {
        NbdConfig config = NbdConfig.builder()
                .port(0)
                .limits(Limits.builder().maxConnections(0).build())
                .loop(LoopSettings.builder().mode("lifo").build())
                .exports(DISK)
                .build();
        assertThat(config.problems())
                .contains(
                        new Problem("limits.maxConnections", 0, "a whole number >= 1"),
                        new Problem("loop.mode", "\"lifo\"", "priority or fifo"))
                .extracting(Problem::message)
                .anySatisfy(p -> assertThat(p).startsWith("limits.maxConnections: 0 (expected:"))
                .anySatisfy(p -> assertThat(p).startsWith("loop.mode: \"lifo\""));
        assertThatThrownBy(() -> NbdServer.start(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("limits.maxConnections: 0")
                .hasMessageContaining("loop.mode");
    }

    @Test
    void admissionProblems_nameTheFieldTheValueAndWhatWasExpected() {
        NbdConfig budget = NbdConfig.builder()
                .port(0)
                .admission(AdmissionSettings.builder().enabled(true).iops(0.0).build())
                .exports(DISK)
                .build();
        assertThat(budget.problems())
                .containsExactly(
                        new Problem("admission.iops", "0", "4 KiB I/Os per second, a number in [1, 100000000]"));
        NbdConfig reserve = NbdConfig.builder()
                .port(0)
                .admission(AdmissionSettings.builder()
                        .enabled(true)
                        .reserveFraction(2.0)
                        .build())
                .exports(DISK)
                .build();
        assertThat(reserve.problems()).singleElement().satisfies(p -> {
            assertThat(p.path()).isEqualTo("admission.reserveFraction");
            assertThat(p.value()).isEqualTo("2");
            assertThat(p.message()).startsWith("admission.reserveFraction: 2 (expected: ");
        });
    }
}
