package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.storage.StorageRunResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class StorageOutputTableTest {

    @Test
    void aPolicyThatRefusedSome_givesItsOwnCountsAfterItsRow_theHeaderTheClasssCount() {
        String table = table(List.of(run("fifo", 100_000, 0), run("segment-admission", 90_000, 10_000)));

        assertThat(table)
                .contains("steady tenants (100000 requests)")
                .contains("hot tenants (100000 requests)")
                .doesNotContain("(90000 requests)");
        assertThat(lines(table, "segment-admission"))
                .hasSize(3)
                .allSatisfy(line -> assertThat(line).endsWith("  (90000 / 90000 measured)"));
        assertThat(lines(table, "fifo"))
                .hasSize(3)
                .noneSatisfy(line -> assertThat(line).contains("measured)"));
    }

    @Test
    void policiesThatMeasuredTheSameRequests_addNothingToTheirRows() {
        String table = table(List.of(run("fifo", 100_000, 0), run("mclock", 100_000, 0)));

        assertThat(table).doesNotContain("measured)");
    }

    private static List<String> lines(String table, String policy) {
        return table.lines()
                .filter(line -> line.startsWith("  " + policy + " "))
                .filter(line -> !line.contains("%"))
                .toList();
    }

    private static String table(List<StorageRunResult> runs) {
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            StorageOutput.table(out, runs);
        }
        return text.toString();
    }

    private static StorageRunResult run(String policy, long requests, long refused) {
        return StorageResults.result(policy, 1, requests, refused);
    }
}
