package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.storage.StorageRunResult;
import dev.tailor.sim.storage.SweepSummary;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    void noRequestOnAHotSegment_aLineUnderTheSegmentRowsSaysWhy_asForAnEmptyTenantClass(@TempDir Path dir)
            throws Exception {
        String reason = "no request on a hot segment was measured: in the measured period no segment's cost in a"
                + " window went above admission.hotThresholdRatio × its baseline";
        String table = table(List.of(
                StorageResults.noHotSegments("fifo", 100_000),
                StorageResults.noHotSegments("segment-admission", 100_000)));

        List<String> lines = table.lines().toList();
        int header = lines.indexOf(lines.stream()
                .filter(l -> l.contains("hot segments (0 requests)"))
                .findFirst()
                .orElseThrow());
        assertThat(lines.get(header + 1)).startsWith("  fifo ");
        assertThat(lines.get(header + 2)).startsWith("  segment-admission ");
        assertThat(lines.get(header + 3)).isEqualTo("  " + reason);
        assertThat(table).containsOnlyOnce(reason).doesNotContain("on steady segments only");
        assertThat(table(List.of(run("fifo", 100_000, 0)))).doesNotContain("was measured");

        String html = Files.readString(dev.tailor.lab.report.StorageReport.write(
                dir, "t", List.of(), List.of(), List.of(StorageResults.noHotSegments("fifo", 100_000))));
        assertThat(html)
                .contains("<p class=\"note\">robustness-mild: " + reason + " (its hot segments' columns are n/r).</p>");
    }

    @Test
    void policiesThatMeasuredTheSameRequests_addNothingToTheirRows() {
        String table = table(List.of(run("fifo", 100_000, 0), run("mclock", 100_000, 0)));

        assertThat(table).doesNotContain("measured)");
    }

    @Test
    void aPolicyNameLongerThanTheColumn_widensIt_andEveryRowStaysInLine() {
        // start-tag-door-admission is 24 characters: in a 23-character column its rows stood one to the right.
        String table = table(List.of(run("fifo", 100_000, 0), run("start-tag-door-admission", 100_000, 0)));

        List<String> headers =
                table.lines().filter(line -> line.startsWith("  policy ")).toList();
        assertThat(headers).hasSize(2);
        List<String> fifo = rows(table, "fifo");
        List<String> door = rows(table, "start-tag-door-admission");
        assertThat(fifo).hasSize(4);
        assertThat(door).hasSize(4);
        for (int i = 0; i < 4; i++) {
            // The figures are right-aligned in fixed columns: a row in line with its header is as long as it.
            String header = headers.get(i < 3 ? 0 : 1);
            assertThat(fifo.get(i)).as(fifo.get(i)).hasSameSizeAs(header);
            assertThat(door.get(i)).as(door.get(i)).hasSameSizeAs(header);
        }
        assertThat(door.get(0)).startsWith("  start-tag-door-admission        1        2");
        assertThat(fifo.get(0)).startsWith("  fifo                            1        2");
        // The class headers over the figures move with them.
        assertThat(table).contains("\n  latency ms" + " ".repeat(24 - "latency ms".length() + 1) + "steady tenants (");
    }

    @Test
    void namesThatFitTheColumn_keepItsWidth() {
        String table = table(List.of(run("fifo", 100_000, 0), run("segment-admission-paper", 100_000, 0)));

        assertThat(table)
                .contains("\n  policy                       P50      P99")
                .contains("\n  fifo                           1        2")
                .contains("\n  segment-admission-paper        1        2");
    }

    @Test
    void theSweepSummarysPolicyColumn_widensForALongerName() {
        String name = "a-policy-name-of-thirty-chars";
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            StorageOutput.summary(
                    out,
                    SweepSummary.of(List.of(
                            run("fifo", 100_000, 0),
                            run(name, 100_000, 0),
                            StorageResults.result("fifo", 2, 100_000, 0),
                            StorageResults.result(name, 2, 100_000, 0))));
        }
        List<String> rows = text.toString()
                .lines()
                .filter(line ->
                        line.startsWith("  policy ") || line.startsWith("  fifo ") || line.startsWith("  " + name))
                .toList();
        assertThat(rows).hasSize(3);
        int column = rows.get(0).indexOf("steady P99.999");
        assertThat(column).isEqualTo(2 + name.length() + 1);
        for (String row : rows.subList(1, 3)) {
            assertThat(row.charAt(column - 1)).as(row).isEqualTo(' ');
            assertThat(row.charAt(column)).as(row).isNotEqualTo(' ');
        }
    }

    /** Every row of {@code policy}: its three rows of percentiles, then its counters. */
    private static List<String> rows(String table, String policy) {
        return table.lines()
                .filter(line -> line.startsWith("  " + policy + " "))
                .toList();
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
