package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.storage.StorageScenarios;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link StorageRuns#notes}: a family of traffic mixes run with several seeds. */
class StorageRunsNotesTest {

    @TempDir
    Path dir;

    @Test
    void notes_eachMixsOnceUnderItsName_aNoteThatDiffersBySeedUnderItsSeed_theSharedOnesOnce() throws IOException {
        StringBuilder csv = new StringBuilder("workload,window_index,ts_us,block_req_count,io_request_size_sum\n");
        for (int w = 1; w <= 20; w++) {
            csv.append("w")
                    .append(w)
                    .append(",0,0,")
                    .append((w * 7919 % 101 + 1) * 1000)
                    .append(',')
                    .append(w * 4096L * 1000)
                    .append('\n');
        }
        Files.writeString(dir.resolve("cp.csv"), csv);
        String tenants = """
                    tenants:
                      - {name: hot, synthetic: {readFraction: 1, sizeBytes: [4096]},
                         bursts: {meanGapSeconds: 1, minMillis: 50, maxMillis: 100, multiplier: 4}}
                      - {name: large, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                      - {name: small, count: 4, synthetic: {readFraction: 1, sizeBytes: [4096]}}
                """;
        String yaml = """
                name: family
                seed: 1
                backend: {parallelism: 24, readBaseMicros: 254, readMicrosPerKiB: 26.98, writeBaseMicros: 50,
                          writeMicrosPerKiB: 0.8, serviceSigma: 0.4}
                baseUtilizationPercent: 50
                rates: {cloudPhysicsFile: cp.csv, largeClients: 2, largeShare: 0.6}
                mixes:
                  - name: calm
                    baseUtilizationPercent: 35
                %s  - name: busy
                %s""".formatted(tenants, tenants);
        Path file = dir.resolve("family.yaml");
        Files.writeString(file, yaml);
        StorageScenarios.Loaded loaded = StorageRuns.load(file.toString(), dir::resolve);

        List<String> notes = StorageRuns.notes(
                StorageRuns.sweep(loaded, List.of(1L, 2L), null, null, List.of("fifo"), dir::resolve)
                        .setups(),
                List.of("fifo"));

        assertThat(notes).doesNotHaveDuplicates().startsWith("backend given in the scenario");
        assertThat(notes.stream().filter(n -> n.contains("offered load")))
                .allMatch(n -> n.matches("family-(calm|busy)( seed [12])?: offered load: .*"))
                .anyMatch(n -> n.startsWith("family-calm seed 1: offered load: 35.0 %"))
                .anyMatch(n -> n.startsWith("family-calm seed 2: offered load: 35.0 %"))
                .anyMatch(n -> n.startsWith("family-busy seed 2: offered load: 50.0 %"));
        assertThat(notes)
                .as("a note every mix shares, as it is")
                .containsOnlyOnce("rates: 6 tenants drawn from cp.csv, the largest 2 carrying 60 %");
    }
}
