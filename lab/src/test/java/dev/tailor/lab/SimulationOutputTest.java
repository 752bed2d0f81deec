package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.heart.HeartConfig;
import dev.tailor.sim.cluster.ClusterScenario;
import dev.tailor.sim.cluster.ClusterSimulation;
import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.cluster.Scenarios;
import dev.tailor.sim.cluster.SeedCells;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
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

    private static final String LEGEND =
            "n/r = not resolvable: fewer requests than the percentile needs (P99.9: 1,000).";

    /** One node, one component, no calls: 50 requests per second measured for {@code durationSeconds}. */
    private static RunResult singleQueue(String policy, double durationSeconds) {
        ClusterScenario scenario = Scenarios.parse("""
                name: single-queue
                seed: 7
                warmupSeconds: 5
                durationSeconds: %s
                timeoutSeconds: 60
                cpuModel: fluid
                callCostCv: 1.0
                replicaCostVariation: 0
                linkJitter: 0
                nodes: [{name: n1, cores: 4, speedFactor: 1.0}]
                entry: s
                components: [{name: s, cpuMillisPerCall: 5}]
                cpuLimitCores: 1.0
                networks: {flat: {sameNodeMillis: 0, otherMillis: [0, 0]}}
                """.formatted(durationSeconds), "test");
        return ClusterSimulation.run(scenario, policy, 50, HeartConfig.DEFAULTS, null);
    }

    private static List<String> table(List<RunResult> runs) {
        StringWriter text = new StringWriter();
        SimulationOutput.table(new PrintWriter(text, true), runs);
        return text.toString().lines().toList();
    }

    @Test
    void table_aRunOfAboutFiveHundredRequests_printsItsP999AsNotResolvable_withTheLegendOnce() {
        List<RunResult> runs = List.of(singleQueue("default", 10), singleQueue("least-request", 10));
        assertThat(runs).allSatisfy(r -> assertThat(r.requests()).isBetween(100L, 999L));

        List<String> lines = table(runs);

        for (RunResult r : runs) {
            String[] cells = lines.stream()
                    .filter(l -> l.startsWith("  " + r.policy() + " "))
                    .findFirst()
                    .orElseThrow()
                    .trim()
                    .split("\\s+");
            assertThat(cells[1]).isEqualTo(SimulationOutput.fmt(r.p50Millis())).isNotEqualTo("–");
            assertThat(cells[2]).isEqualTo(SimulationOutput.fmt(r.p99Millis())).isNotEqualTo("–");
            assertThat(cells[3]).isEqualTo("n/r");
        }
        assertThat(lines.stream().filter(l -> l.contains("n/r =")).toList()).containsExactly(LEGEND);
        assertThat(lines.get(lines.size() - 1)).isEqualTo(LEGEND);
    }

    @Test
    void table_aRunOfOverAThousandRequests_printsAllThree_noLegend() {
        RunResult run = singleQueue("default", 40);
        assertThat(run.requests()).isGreaterThanOrEqualTo(1_000);

        List<String> lines = table(List.of(run));

        String[] cells = lines.stream()
                .filter(l -> l.startsWith("  default "))
                .findFirst()
                .orElseThrow()
                .trim()
                .split("\\s+");
        assertThat(cells[1]).isEqualTo(SimulationOutput.fmt(run.p50Millis()));
        assertThat(cells[2]).isEqualTo(SimulationOutput.fmt(run.p99Millis()));
        assertThat(cells[3]).isEqualTo(SimulationOutput.fmt(run.p999Millis())).isNotEqualTo("–");
        assertThat(String.join("\n", lines)).doesNotContain("n/r");
    }

    @Test
    void groupedAndCellTables_notResolvableWithRequests_aDashWithNone() {
        RunResult few = made("heart", 100, 500, 20.0, 40.0, null);
        RunResult none = made("heart", 400, 0, null, null, null);

        StringWriter grouped = new StringWriter();
        SimulationOutput.groupedTable(
                new PrintWriter(grouped, true), List.of(few, none), Map.of("paper-dag", 30_000.0));
        String heart = grouped.toString()
                .lines()
                .filter(l -> l.startsWith("  heart "))
                .findFirst()
                .orElseThrow();
        assertThat(heart.split("\\|")[1].trim().split("\\s+")).containsExactly("20", "40", "n/r", "0");
        assertThat(heart.split("\\|")[2].trim().split("\\s+")).containsExactly("–", "–", "–", "0");
        assertThat(grouped.toString().lines().toList()).last().isEqualTo(LEGEND);

        // Over seeds: a seed without the figure is left out of the median; none with it is n/r.
        List<SeedCells.Cell> cells = SeedCells.of(List.of(
                made("heart", 100, 500, 20.0, 40.0, null),
                made("heart", 100, 1_200, 22.0, 44.0, 90.0),
                made("heart", 100, 500, 24.0, 48.0, null),
                made("prequal", 100, 500, 20.0, 40.0, null)));
        assertThat(cells.get(0).p999Millis()).isEqualTo(90.0);
        StringWriter seeds = new StringWriter();
        SimulationOutput.cellTable(new PrintWriter(seeds, true), cells);
        String prequal = seeds.toString()
                .lines()
                .filter(l -> l.startsWith("  prequal "))
                .findFirst()
                .orElseThrow();
        assertThat(prequal.trim().split("\\s+")).startsWith("prequal", "20", "40", "40–40", "40", "n/r");
        assertThat(seeds.toString()).contains(" 90 ");
        assertThat(seeds.toString().lines().toList()).last().isEqualTo(LEGEND);
    }

    /** A made-up run of paper-dag with {@code requests} measured and the given percentiles. */
    private static RunResult made(String policy, double rps, long requests, Double p50, Double p99, Double p999) {
        return new RunResult(
                "paper-dag",
                "A",
                "fluid",
                policy,
                rps,
                1,
                requests,
                requests,
                0,
                0,
                0,
                p50,
                p99,
                p999,
                p50,
                1.0,
                List.of(),
                null,
                0,
                0,
                0,
                null,
                null);
    }
}
