package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.tailor.common.Problem;
import dev.tailor.sim.ScenarioException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checks a storage scenario gets when it is built (its data files, a baseline against the backend's
 * capacity) read as its reading's do: by field path, with the value as written and the line in the file,
 * every problem at once.
 */
class StorageBuildProblemsTest {

    @TempDir
    Path dir;

    private static final String HEAD = """
            name: t
            seed: 1
            backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                      writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
            """;

    private static final String SYNTHETIC = "synthetic: {readFraction: 1, sizeBytes: [4096]}";

    @Test
    void baselineAboveAnExplicitBackend_isToldWhenRead_atItsLine_withTheMostItTakes() {
        String yaml = HEAD + """
                tenants:
                  - {name: a, requestsPerSecond: 100, %s}
                  - name: b
                    requestsPerSecond: 100
                    %s
                    baseline:
                      iops: 90000
                      mibPerSecond: 0
                  - name: c
                    requestsPerSecond: 100
                    %s
                    baseline: {iops: 1000, mibPerSecond: 50000}
                """.formatted(SYNTHETIC, SYNTHETIC, SYNTHETIC);

        // Reads of 254 µs (mean ×e^0.08) on 24 channels: 11,465 cost units each, 87,223 a second in 10⁹.
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "s.yaml"))
                .isInstanceOf(ScenarioException.class)
                .hasMessage("s.yaml: 2 problems:\n"
                        + "  tenants[1].baseline.iops: 90000 (expected: at most the backend's capacity, 87223: no"
                        + " backend can promise more than it serves) at line 11\n"
                        + "  tenants[2].baseline.mibPerSecond: 50000 (expected: at most the backend's capacity, 792"
                        + " MiB/s beside 1000 IOPS: no backend can promise more than it serves) at line 16");
    }

    @Test
    void baselineMiBPerSecondAboveTheCapacity_namesTheMiBPerSecondLeftBesideTheIopsWritten() {
        String yaml = HEAD + """
                tenants:
                  - {name: a, requestsPerSecond: 100, %s, baseline: {iops: 80000, mibPerSecond: 999999}}
                  - {name: b, requestsPerSecond: 100, %s, baseline: {iops: 90000, mibPerSecond: 999999}}
                """.formatted(SYNTHETIC, SYNTHETIC);

        // 80,000 reads take 917 of the 1,000 million cost units a second; a MiB read 1.25 million.
        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "s.yaml"))
                .hasMessage("s.yaml: 2 problems:\n"
                        + "  tenants[0].baseline.mibPerSecond: 999999 (expected: at most the backend's capacity, 66"
                        + " MiB/s beside 80000 IOPS: no backend can promise more than it serves) at line 6\n"
                        + "  tenants[1].baseline.mibPerSecond: 999999 (expected: at most the backend's capacity, 801"
                        + " MiB/s beside 1 IOPS: no backend can promise more than it serves) at line 7");
    }

    @Test
    void baselineAboveTheCapacity_beside_itsMiBPerSecond_namesTheIopsLeft() {
        String yaml = HEAD + """
                tenants:
                  - {name: a, requestsPerSecond: 100, %s, baseline: {iops: 80000, mibPerSecond: 100}}
                """.formatted(SYNTHETIC);

        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "s.yaml"))
                .hasMessage("s.yaml: tenants[0].baseline.iops: 80000 (expected: at most the backend's capacity,"
                        + " 76346 beside 100 MiB/s: no backend can promise more than it serves) at line 6");
    }

    @Test
    void baselineWithoutMibPerSecond_saysABaselineGivesBoth() {
        String yaml = HEAD + """
                tenants:
                  - {name: a, requestsPerSecond: 100, %s, baseline: {iops: 100}}
                  - {name: b, requestsPerSecond: 100, %s, baseline: {mibPerSecond: 0}}
                """.formatted(SYNTHETIC, SYNTHETIC);

        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "s.yaml"))
                .hasMessage("s.yaml: 2 problems:\n"
                        + "  tenants[0].baseline.mibPerSecond: missing (expected: a number in [0, 1000000]: a"
                        + " baseline gives both iops and mibPerSecond, 0 for none) at line 6\n"
                        + "  tenants[1].baseline.iops: missing (expected: a number in (0, 100000000]: a baseline"
                        + " gives both iops and mibPerSecond) at line 7");
    }

    @Test
    void build_missingAndMalformedDataFiles_allAtOnce_byFieldAndLine() throws IOException {
        Files.writeString(dir.resolve("garbage.trace"), "not a trace\n");
        String yaml = HEAD + """
                traces:
                  gone: {file: block_io/gone.trace, format: msr-bytes}
                  bad: {file: garbage.trace, format: msr-bytes}
                baseUtilizationPercent: 50
                rates: {cloudPhysicsFile: cp/none.csv, largeClients: 1}
                tenants:
                  - {name: a, count: 2, traces: [gone, bad]}
                """;
        StorageScenarios.Loaded loaded = StorageScenarios.parseLoaded(yaml, "s.yaml");

        ScenarioException e =
                catchThrowableOfType(ScenarioException.class, () -> StorageSetup.build(loaded.scenario(), this::data));

        assertThat(e.problems())
                .extracting(Problem::path)
                .containsExactly("traces.gone.file", "traces.bad.file", "rates.cloudPhysicsFile");
        String report = loaded.report(e.problems());
        assertThat(report.lines().toList())
                .hasSize(4)
                .startsWith("s.yaml: 3 problems:")
                .contains("  traces.gone.file: block_io/gone.trace: not in " + dir
                        + " (expected: a path under the data folder) at line 6")
                .contains("  rates.cloudPhysicsFile: cp/none.csv: not in " + dir
                        + " (expected: a path under the data folder) at line 9");
        assertThat(report.lines().toList().get(2))
                .startsWith("  traces.bad.file: " + dir.resolve("garbage.trace") + " line 1: ")
                .endsWith(" at line 7");
    }

    @Test
    void read_withTheDataFolder_missingDataFilesAreToldWithTheRangeProblems_mixesOwnUnderTheMix() {
        String yaml = HEAD + """
                drainSeconds: -1
                traces:
                  gone: {file: block_io/gone.trace, format: msr-bytes}
                  unused: {file: block_io/unused.trace, format: msr-bytes}
                baseUtilizationPercent: 50
                rates: {cloudPhysicsFile: cp/all.csv, largeClients: 1}
                mixes:
                  - name: one
                    tenants: [{name: a, count: 2, traces: [gone]}]
                  - name: two
                    rates: {cloudPhysicsFile: cp/two.csv}
                    tenants: [{name: a, count: 2, %s}]
                """.formatted(SYNTHETIC);

        assertThatThrownBy(() -> StorageScenarios.parseLoaded(yaml, "s.yaml", this::data))
                .isInstanceOf(ScenarioException.class)
                .hasMessage("s.yaml: 4 problems:\n"
                        + "  drainSeconds: -1 (expected: a number in [0, 3600]) at line 5\n"
                        + "  traces.gone.file: block_io/gone.trace: not in " + dir
                        + " (expected: a path under the data folder) at line 7\n"
                        + "  rates.cloudPhysicsFile: cp/all.csv: not in " + dir
                        + " (expected: a path under the data folder) at line 10\n"
                        + "  mixes[1].rates.cloudPhysicsFile: cp/two.csv: not in " + dir
                        + " (expected: a path under the data folder) at line 15");
        assertThat(StorageScenarios.parseLoaded(yaml.replace("drainSeconds: -1", "drainSeconds: 1"), "s.yaml")
                        .scenario()
                        .drainSeconds())
                .as("without a data folder, the files are not looked at when reading")
                .isEqualTo(1.0);
    }

    @Test
    void asInFile_namesAMixsProblemsUnderTheMix_whereTheMixGivesTheField() {
        String yaml = HEAD + """
                rates: {cloudPhysicsFile: cp/all.csv, largeClients: 1}
                baseUtilizationPercent: 50
                mixes:
                  - name: one
                    tenants: [{name: a, count: 2, %s}]
                  - name: two
                    rates: {cloudPhysicsFile: cp/two.csv}
                    tenants: [{name: a, count: 2, %s}]
                """.formatted(SYNTHETIC, SYNTHETIC);
        StorageScenario s = StorageScenarios.parse(yaml, "s.yaml");
        Problem rates = new Problem("rates.cloudPhysicsFile", "x", "y");
        Problem tenant = new Problem("tenants[0].baseline.iops", 1.0, "y");

        assertThat(s.asInFile(0, rates).path()).isEqualTo("rates.cloudPhysicsFile");
        assertThat(s.asInFile(1, rates).path()).isEqualTo("mixes[1].rates.cloudPhysicsFile");
        assertThat(s.asInFile(0, tenant).path()).isEqualTo("mixes[0].tenants[0].baseline.iops");
        assertThat(s.asInFile(0, new Problem("traces.x.file", "x", "y")).path()).isEqualTo("traces.x.file");
    }

    /** A data folder of this test's directory, saying as the command's does where it looked. */
    private Path data(String relative) {
        Path path = dir.resolve(relative);
        if (!Files.exists(path)) {
            throw new IllegalArgumentException(
                    relative + ": not in " + dir + " (expected: a path under the data" + " folder)");
        }
        return path;
    }
}
