package dev.tailor.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tailor.sim.cluster.RunResult;
import dev.tailor.sim.storage.LatencySummary;
import dev.tailor.sim.storage.StorageRunResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The demo's closing summary, its grouped tables and folded warnings, on made-up results. */
class DemoSummaryTest {

    private static final Map<String, Double> TIMEOUTS = Map.of("paper-dag", 30_000.0, "paper-pairwise", 30_000.0);

    @Test
    void summary_namesTheCellsWhereAPeerWins_andStaysShort() {
        List<RunResult> cluster = new ArrayList<>();
        for (String scenario : List.of("paper-dag", "paper-pairwise")) {
            for (String model : List.of("fluid", "cfs-quota")) {
                for (double rps : List.of(100.0, 400.0)) {
                    boolean prequalWins = scenario.equals("paper-dag") && model.equals("fluid") && rps == 100;
                    cluster.add(run(scenario, model, rps, "heart", 50.0, 0));
                    cluster.add(run(scenario, model, rps, "heart-paper", 60.0, 0));
                    cluster.add(run(scenario, model, rps, "least-request", 100.0, 0));
                    cluster.add(run(scenario, model, rps, "default", 30_015.0, 40));
                    cluster.add(run(scenario, model, rps, "prequal", prequalWins ? 41.0 : 70.0, 0));
                    cluster.add(run(scenario, model, rps, "peak-ewma", 80.0, 0));
                }
            }
        }
        List<StorageRunResult> storage = List.of(
                storage("fifo", 100),
                storage("static-cap", 80),
                storage("mclock", 60),
                storage("segment-admission-paper", 5),
                storage("segment-admission", 10));

        List<String> lines = DemoSummary.lines(cluster, TIMEOUTS, storage, null, null, "skipped (--no-experiments).");

        assertThat(lines.get(0)).isEqualTo("Summary");
        assertThat(lines.size()).isBetween(3, DemoSummary.MAX_LINES);
        assertThat(lines)
                .anyMatch(l -> l.contains("lowest P99 in 7 of 8 cells")
                        && l.contains("a peer wins DAG 100 fluid prequal 41 vs 50."));
        assertThat(lines).anyMatch(l -> l.contains("pairwise 100 RPS 0.66 in the paper, 0.60 / 0.60"));
        assertThat(lines)
                .anyMatch(l -> l.contains("Tailor's segment-admission -90 % (10 ms), best peer mclock -40 % (60 ms),"
                        + " the paper's mechanism -95 %"));
        assertThat(lines).anyMatch(l -> l.contains("Verdict: better than every peer; of the paper's order"));
        assertThat(lines.get(lines.size() - 1)).isEqualTo("  NBD proxy with real clients: skipped (--no-experiments).");
    }

    @Test
    void verdicts_oneForEachComparisonOfTheSummary_withItsFigureTargetAndReason() {
        List<RunResult> cluster = new ArrayList<>();
        for (String scenario : List.of("paper-dag", "paper-pairwise")) {
            for (String model : List.of("fluid", "cfs-quota")) {
                for (double rps : List.of(100.0, 400.0)) {
                    boolean prequalWins = scenario.equals("paper-dag") && model.equals("fluid") && rps == 100;
                    cluster.add(run(scenario, model, rps, "heart", 50.0, 0));
                    cluster.add(
                            run(scenario, model, rps, "heart-paper", scenario.equals("paper-dag") ? 10.0 : 90.0, 0));
                    cluster.add(run(scenario, model, rps, "least-request", 100.0, 0));
                    cluster.add(run(scenario, model, rps, "prequal", prequalWins ? 41.0 : 70.0, 0));
                }
            }
        }
        List<StorageRunResult> storage = List.of(
                storage("fifo", 100),
                storage("static-cap", 80),
                storage("mclock", 60),
                storage("segment-admission-paper", 5),
                storage("segment-admission", 10));

        DemoSummary.Summary summary =
                DemoSummary.of(cluster, TIMEOUTS, storage, null, null, "skipped (--no-experiments).");

        assertThat(summary.lines())
                .isEqualTo(DemoSummary.lines(cluster, TIMEOUTS, storage, null, null, "skipped (--no-experiments)."));
        List<DemoSummary.Verdict> verdicts = summary.verdicts();
        assertThat(verdicts)
                .extracting(DemoSummary.Verdict::mechanism)
                .containsExactly(
                        "heart",
                        "heart",
                        "heart",
                        "heart",
                        "heart",
                        "segment-admission",
                        "segment-admission",
                        "nbd-proxy",
                        "nbd-proxy",
                        "nbd-proxy");
        assertThat(verdicts)
                .allMatch(v -> !v.name().isBlank()
                        && !v.target().isBlank()
                        && !v.reason().isBlank());
        // Tailor's heart: lowest P99 in 7 of 8 cells, the text's "a peer wins ...".
        assertThat(verdicts.get(0))
                .isEqualTo(new DemoSummary.Verdict(
                        "heart",
                        "Tailor's heart against the best of 7 peers, cells with the lowest P99",
                        7.0,
                        "cells",
                        "lowest P99 in all 8 cells",
                        "missed",
                        "a peer wins DAG 100 fluid prequal 41 vs 50; simulated time: the machine's load does not"
                                + " change these"));
        // The paper's HEART over least-request: 0.90 against the paper's 0.66 (pairwise), 0.10 against 0.11 (DAG).
        assertThat(verdicts.get(1).name())
                .isEqualTo(
                        "the paper's HEART (heart-paper) over least-request, P99, pairwise 100 RPS, fluid CPU limit");
        assertThat(verdicts.get(1).figure()).isCloseTo(0.9, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(verdicts.get(1).target()).isEqualTo("<= 0.66 (the paper's: 194 vs 293 ms)");
        assertThat(verdicts.get(1).verdict()).isEqualTo("missed");
        assertThat(verdicts.get(1).reason())
                .startsWith("beats least-request, less strongly than the paper says (90 vs");
        assertThat(verdicts.get(3).name()).contains("DAG 400 RPS, fluid");
        assertThat(verdicts.get(3).verdict()).isEqualTo("met");
        // Segment admission: better than every peer (-90 % against mclock's -40 %), of the paper's order.
        assertThat(verdicts.get(5).figure()).isCloseTo(-90, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(verdicts.get(5).verdict()).isEqualTo("met");
        assertThat(verdicts.get(5).reason())
                .isEqualTo("better than every peer: mclock -40 % (60 ms), Tailor's -90 % (10 ms); simulated"
                        + " time: the machine's load does not change these");
        assertThat(verdicts.get(6).target()).isEqualTo("<= -48.5 % (of the order of the paper's up to -97 %)");
        assertThat(verdicts.get(6).verdict()).isEqualTo("met");
        // The experiments did not run: no data, and why.
        assertThat(verdicts.subList(7, 10))
                .allMatch(v -> v.verdict().equals("no data")
                        && v.figure() == null
                        && v.reason().equals("the experiments skipped (--no-experiments)"));
        // Level with the best peer is not met.
        assertThat(DemoSummary.of(
                                List.of(),
                                TIMEOUTS,
                                List.of(
                                        storage("fifo", 239),
                                        storage("static-cap", 80),
                                        storage("mclock", 3.33),
                                        storage("segment-admission-paper", 14.8),
                                        storage("segment-admission", 3.32)),
                                null,
                                null,
                                "skipped (--no-experiments).")
                        .verdicts())
                .filteredOn(v -> v.name().startsWith("Tailor's segment-admission against the best"))
                .singleElement()
                .satisfies(v -> {
                    assertThat(v.verdict()).isEqualTo("missed");
                    assertThat(v.reason())
                            .startsWith("level with mclock (within 5 %): mclock -99 % (3.33 ms), Tailor's");
                });
    }

    @Test
    void segmentAdmission_withinFivePercentOfTheBestPeer_isLevelWithIt_notBetter() {
        List<String> level = storageVerdict(3.32, 3.33);
        List<String> behind = storageVerdict(3.32, 3.0);
        List<String> better = storageVerdict(3.0, 3.32);

        assertThat(level)
                .anyMatch(l -> l.contains("segment-admission -99 % (3.32 ms), best peer mclock -99 % (3.33 ms)"))
                .anyMatch(l -> l.contains("Verdict: level with mclock (within 5 %); of the paper's order"));
        assertThat(behind).anyMatch(l -> l.contains("Verdict: behind mclock;"));
        assertThat(better).anyMatch(l -> l.contains("Verdict: better than every peer;"));
    }

    @Test
    void storageLines_writeTheBurstMultiplierWithATimesSign_asTheLabelsAndDocsDo() {
        List<StorageRunResult> storage = List.of(
                storage("fifo", 239),
                storage("static-cap", 80),
                storage("mclock", 3.33),
                storage("segment-admission-paper", 14.8),
                storage("segment-admission", 3.32));

        List<String> summary = DemoSummary.lines(List.of(), TIMEOUTS, storage, null, null, "skipped.");
        List<String> table = Demo.storageTable(storage).lines();
        List<DemoSummary.Verdict> verdicts = DemoSummary.of(List.of(), TIMEOUTS, storage, null, null, "skipped.")
                .verdicts();

        // Was "burst-microbench x16" here, where the run labels and the docs say "×16".
        assertThat(summary).anyMatch(l -> l.contains("(burst-microbench ×16; steady tenants' P99.999"));
        assertThat(table).anyMatch(l -> l.contains("burst-microbench ×16, P99.999 vs fifo: steady tenants"));
        assertThat(verdicts).anyMatch(v -> v.name().endsWith("against fifo, burst-microbench ×16"));
        assertThat(String.join("\n", summary) + String.join("\n", table)).doesNotContainPattern("\\bx\\d");
        assertThat(verdicts).noneMatch(v -> v.name().matches(".*\\bx\\d.*"));
    }

    private static List<String> storageVerdict(double oursMillis, double mclockMillis) {
        List<StorageRunResult> storage = List.of(
                storage("fifo", 239),
                storage("static-cap", 80),
                storage("mclock", mclockMillis),
                storage("segment-admission-paper", 14.8),
                storage("segment-admission", oursMillis));
        return DemoSummary.lines(List.of(), TIMEOUTS, storage, null, null, "skipped (--no-experiments).");
    }

    @Test
    void groupedTable_printsATimedOutPercentileAsTimeout() {
        StringWriter text = new StringWriter();
        List<RunResult> runs = List.of(
                run("paper-dag", "fluid", 100, "heart", 50.0, 0),
                run("paper-dag", "fluid", 400, "heart", 60.0, 0),
                run("paper-dag", "fluid", 100, "default", 30_015.0, 9),
                run("paper-dag", "fluid", 400, "default", 30_015.0, 90));
        SimulationOutput.groupedTable(new PrintWriter(text, true), runs, TIMEOUTS);

        List<String> lines = text.toString().lines().toList();
        assertThat(lines.get(0)).isEqualTo("paper-dag · network A · CPU fluid (ms; timeout: slower than 30 s)");
        assertThat(lines).anyMatch(l -> l.startsWith("  default ") && l.contains("timeout") && !l.contains("30015"));
        assertThat(lines).anyMatch(l -> l.startsWith("  heart ") && l.contains(" 50 ") && l.contains(" 60 "));
    }

    @Test
    void foldedWarnings_oneLinePerKindWithItsCount() {
        List<RunResult> runs = new ArrayList<>();
        for (String policy : List.of("default", "locality-first", "wrr-orca")) {
            runs.add(run("paper-dag", "fluid", 400, policy, 30_015.0, 100));
        }
        runs.add(run("paper-dag", "fluid", 400, "heart", 50.0, 0));

        List<String> lines = SimulationOutput.foldedWarnings(runs);

        assertThat(lines)
                .singleElement()
                .satisfies(l -> assertThat(l)
                        .startsWith("3 runs ended with over 1 %")
                        .endsWith("paper-dag fluid 400 default, paper-dag fluid 400 locality-first,"
                                + " paper-dag fluid 400 wrr-orca"));
    }

    /** A run with {@code p99Millis} as every percentile; {@code timeouts} of them also unfinished. */
    private static RunResult run(
            String scenario, String model, double rps, String policy, double p99Millis, long timeouts) {
        return new RunResult(
                scenario,
                "A",
                model,
                policy,
                rps,
                1,
                1_000,
                1_000 - timeouts,
                timeouts,
                0,
                timeouts,
                p99Millis,
                p99Millis,
                p99Millis,
                p99Millis,
                1.0,
                List.of(),
                null,
                0,
                0,
                0,
                null,
                null);
    }

    private static StorageRunResult storage(String policy, double steadyP99999Millis) {
        LatencySummary steady =
                new LatencySummary(100_000, 1.0, 2.0, 3.0, 4.0, steadyP99999Millis, 1.0, steadyP99999Millis);
        return new StorageRunResult(
                "burst-microbench",
                16.0,
                policy,
                1,
                10,
                100_000,
                steady,
                steady,
                steady,
                steady,
                steady,
                steady,
                0,
                0,
                0,
                0,
                0,
                0,
                0,
                null,
                null,
                0,
                0,
                0,
                null,
                null,
                null);
    }
}
