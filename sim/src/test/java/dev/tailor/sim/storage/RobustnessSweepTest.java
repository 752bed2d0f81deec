package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.offset;

import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The robustness sweep: the bundled family of tenant mixes composes deterministically into the
 * scenarios its file describes, a bad mix is named by its field, and the sweep's summary has the
 * shape the command prints (per policy, ratios to fifo and mclock over the cells).
 */
class RobustnessSweepTest {

    private static final List<String> MIXES = List.of(
            "msn-small",
            "mild",
            "one-whale",
            "long-bursts",
            "spikes",
            "many-small",
            "tencent-heavy",
            "busy",
            "four-proxies");

    @Test
    void family_composesOneScenarioPerMix_inOrder_withTheMixFields() {
        StorageScenario family = StorageScenarios.load("robustness");
        List<StorageScenario> mixes = family.mixScenarios();

        assertThat(mixes)
                .extracting(StorageScenario::name)
                .containsExactlyElementsOf(
                        MIXES.stream().map(m -> "robustness-" + m).toList());
        assertThat(mixes)
                .allMatch(m -> m.problems().isEmpty())
                .allMatch(m -> m.mixes().isEmpty())
                .allMatch(m -> m.seed().equals(family.seed()) && m.traces().equals(family.traces()));
        StorageScenario mild = mixes.get(1);
        assertThat(mild.baseUtilizationPercent()).isEqualTo(35.0);
        assertThat(mild.rates().largeClients()).isEqualTo(2);
        assertThat(mild.rates().largeShare()).isEqualTo(0.5);
        assertThat(mild.rates().cloudPhysicsFile()).isEqualTo(family.rates().cloudPhysicsFile());
        assertThat(mixes.get(0).baseUtilizationPercent()).isEqualTo(50.0); // inherited
        assertThat(mixes.get(0).durationSeconds()).isEqualTo(20.0);
        assertThat(mixes.get(2).durationSeconds()).isEqualTo(30.0); // one-whale's own
        // four-proxies is many-small on 4 proxies; every other mix has the family's one.
        StorageScenario fourProxies = mixes.get(8);
        assertThat(fourProxies.proxies()).isEqualTo(4);
        assertThat(fourProxies.tenants()).isEqualTo(mixes.get(5).tenants());
        assertThat(mixes.subList(0, 8)).allMatch(m -> m.proxies() == 1);
        assertThat(family.withDuration(5.0).mixScenarios()).allMatch(m -> m.durationSeconds() == 5.0);
        assertThat(family.withDuration(5.0).mixScenarios().get(8).proxies()).isEqualTo(4);
        // A seed given on the command line reaches every mix.
        assertThat(family.toBuilder().seed(7L).build().mixScenarios()).allMatch(m -> m.seed() == 7L);
        // A scenario without mixes runs as itself.
        StorageScenario deployed = StorageScenarios.load("deployed-like");
        assertThat(deployed.mixScenarios()).containsExactly(deployed);
    }

    @Test
    void family_builtFromTheTraces_isDeterministic_andHasTheMixesShape() throws IOException {
        SharedData.require("block_io");
        StorageScenario family = StorageScenarios.load("robustness");
        List<StorageScenario> mixes = family.mixScenarios();
        for (int i = 0; i < mixes.size(); i++) {
            StorageScenario mix = mixes.get(i);
            StorageSetup a = StorageSetup.build(mix, SharedData::require);
            StorageSetup b = StorageSetup.build(mix, SharedData::require);
            assertThat(a.tenants())
                    .extracting(StorageSetup.Tenant::requestsPerSecond)
                    .containsExactlyElementsOf(b.tenants().stream()
                            .map(StorageSetup.Tenant::requestsPerSecond)
                            .toList());
            int large = mix.rates().largeClients();
            double all = a.tenants().stream()
                    .mapToDouble(StorageSetup.Tenant::requestsPerSecond)
                    .sum();
            double top = a.tenants().subList(0, large).stream()
                    .mapToDouble(StorageSetup.Tenant::requestsPerSecond)
                    .sum();
            assertThat(top / all).as(mix.name()).isCloseTo(mix.rates().largeShare(), offset(1e-9));
            assertThat(a.tenants().subList(0, large)).as(mix.name()).allMatch(StorageSetup.Tenant::hot);
            assertThat(a.tenants().subList(large, a.tenants().size()))
                    .as(mix.name())
                    .noneMatch(StorageSetup.Tenant::hot);
            double load = a.tenants().stream()
                    .mapToDouble(t -> t.requestsPerSecond() * t.meanCostUnits())
                    .sum();
            assertThat(load / 1e9 * 100).as(mix.name()).isCloseTo(mix.baseUtilizationPercent(), offset(1e-6));
        }
    }

    @Test
    void badMix_isNamedByItsField() {
        String text = StorageScenarios.bundledText("robustness")
                .replace(
                        "traces: [tencent, msn],\n         bursts: {meanGapSeconds: 1.0, minMillis: 20",
                        "traces: [tencent, nosuch],\n         bursts: {meanGapSeconds: 1.0, minMillis: 20")
                .replace(
                        "baseUtilizationPercent: 45\n    durationSeconds: 30",
                        "baseUtilizationPercent: -45\n    durationSeconds: 30")
                .replace("- name: spikes", "- name: busy")
                .replace("proxies: 4\n", "proxies: 0\n");
        assertThatThrownBy(() -> StorageScenarios.parse(text, "r.yaml"))
                .hasMessageContaining("mixes[1].tenants[0].traces[1]: \"nosuch\" (expected: one of the traces")
                .hasMessageContaining("mixes[2].baseUtilizationPercent: -45 (expected: a number in (0, 1000])")
                .hasMessageContaining("mixes[7].name: \"busy\" (expected: unique; already used)")
                .hasMessageContaining("mixes[8].proxies: 0 (expected: 1 .. 1000)");
        assertThatThrownBy(() -> StorageScenarios.parse(
                        StorageScenarios.bundledText("robustness")
                                + "tenants: [{name: x, requestsPerSecond: 1, synthetic: {readFraction: 1, sizeBytes: [4096]}}]\n",
                        "r.yaml"))
                .hasMessageContaining("tenants: 1 group(s) (expected: absent when mixes are given");
    }

    @Test
    void mixWithMoreProxiesThanTenants_isNamedByItsField_asIsTheScenariosProxiesAMixTakes() {
        // Was accepted: four-proxies' 16 tenants on 20 proxies left 4 of them idle, with a note only.
        String text = StorageScenarios.bundledText("robustness").replace("proxies: 4\n", "proxies: 20\n");
        assertThatThrownBy(() -> StorageScenarios.parse(text, "r.yaml"))
                .hasMessageContaining("mixes[8].proxies: 20 (expected: 1 .. 16, the mix's tenants)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("mixes[7]"));
        // As many proxies as tenants is allowed: each has one.
        assertThat(StorageScenarios.parse(
                                StorageScenarios.bundledText("robustness").replace("proxies: 4\n", "proxies: 16\n"),
                                "r.yaml")
                        .mixScenarios()
                        .get(8)
                        .proxies())
                .isEqualTo(16);
        // A mix without proxies takes the scenario's: named there, with the mix that has too few tenants.
        String inherited = StorageScenarios.bundledText("robustness")
                .replace("\nproxies: 1\n", "\nproxies: 10\n")
                .replace("    proxies: 4\n", "");
        assertThatThrownBy(() -> StorageScenarios.parse(inherited, "r.yaml"))
                .hasMessageContaining(
                        "proxies: 10 (expected: 1 .. 9, the tenants of mixes[2], which has no proxies of its own)")
                .satisfies(e ->
                        assertThat(e.getMessage()).doesNotContain("mixes[0]").doesNotContain("mixes[8]"));
    }

    @Test
    void summary_ratiosPerPolicyOverCells_worstMedianBest_andTheCellsAboveTheBounds() {
        List<StorageRunResult> results = new ArrayList<>();
        // Three cells: steady P99.999 of fifo, mclock, ours; hot P99 of mclock and ours.
        double[][] cells = {{100, 10, 50, 20, 30}, {40, 20, 20, 10, 10}, {10, 5, 12, 8, 4}};
        for (int c = 0; c < cells.length; c++) {
            double[] v = cells[c];
            results.add(result("mix-" + c, "fifo", v[0], 1));
            results.add(result("mix-" + c, "mclock", v[1], v[3]));
            results.add(result("mix-" + c, "ours", v[2], v[4]));
        }
        results.add(result("mix-3", "ours", 1, 1, 7)); // no peers in this cell: left out of the ratios

        SweepSummary summary = SweepSummary.of(results);

        assertThat(summary.cells()).isEqualTo(4);
        assertThat(summary.policies()).extracting(SweepSummary.Row::policy).containsExactly("fifo", "mclock", "ours");
        SweepSummary.Row fifo = summary.policies().get(0);
        assertThat(fifo.steadyVsFifo().worst()).isEqualTo(1.0);
        assertThat(fifo.aboveFifo()).isEmpty();
        SweepSummary.Row ours = summary.policies().get(2);
        assertThat(ours.steadyVsFifo().cells()).isEqualTo(3);
        assertThat(ours.steadyVsFifo().worst()).isEqualTo(1.2);
        assertThat(ours.steadyVsFifo().worstCell()).isEqualTo("mix-2 seed 1");
        assertThat(ours.steadyVsFifo().median()).isEqualTo(0.5);
        assertThat(ours.steadyVsFifo().best()).isEqualTo(0.5);
        assertThat(ours.aboveFifo()).containsExactly("mix-2 seed 1");
        assertThat(ours.steadyVsMclock().worst()).isEqualTo(5.0);
        assertThat(ours.steadyVsMclock().median()).isEqualTo(2.4);
        assertThat(ours.aboveMclock()).containsExactly("mix-0 seed 1", "mix-2 seed 1");
        assertThat(ours.hotVsMclock().worst()).isEqualTo(1.5);
        assertThat(ours.hotVsMclock().median()).isEqualTo(1.0);
        assertThat(ours.hotVsMclock().best()).isEqualTo(0.5);
        assertThat(ours.worstUnusedPercent()).isEqualTo(3.0);
        assertThat(ours.refusedRequests())
                .as("refused requests have no latency: counted apart")
                .isEqualTo(7);
        assertThat(ours.refusedCells()).containsExactly("mix-3 seed 1");
        assertThat(fifo.refusedRequests()).isZero();
    }

    @Test
    void summary_mclockIsTheBetterOfItsFormsInEachCell() {
        // Cell 0: per client is better (8 against 10); cell 1: per segment (20 against 30). Ours is 16 and 20.
        List<StorageRunResult> results = List.of(
                result("mix-0", "mclock", 10, 100),
                result("mix-0", "mclock-per-client", 8, 50),
                result("mix-0", "ours", 16, 100),
                result("mix-1", "mclock", 20, 40),
                result("mix-1", "mclock-per-client", 30, 10),
                result("mix-1", "ours", 20, 80));

        SweepSummary.Row ours = SweepSummary.of(results).policies().get(2);

        assertThat(ours.steadyVsMclock().worst()).isEqualTo(2.0);
        assertThat(ours.steadyVsMclock().best()).isEqualTo(1.0);
        assertThat(ours.aboveMclock()).containsExactly("mix-0 seed 1");
        // The hot ratio is to the same form's hot P99: 100 ÷ 50 and 80 ÷ 40.
        assertThat(ours.hotVsMclock().worst()).isEqualTo(2.0);
        assertThat(ours.hotVsMclock().best()).isEqualTo(2.0);
    }

    @Test
    void summary_withinBaseline_ratiosOfTheirOwnP99999ToFifoAndTheBetterMclock_unresolvableCellsLeftOut() {
        // Why: the within-baseline columns must compare the within-baseline figure, not the steady tenants'
        // one, against the same peers as the steady columns. Per cell: steady P99.999 of fifo, mclock,
        // mclock-per-client, ours, then the within-baseline P99.999 of the same four (null: too few requests).
        Double[][] cells = {
            {100.0, 10.0, 20.0, 50.0, 80.0, 4.0, 8.0, 2.0},
            {40.0, 30.0, 20.0, 20.0, 10.0, 2.0, 5.0, 3.0},
            {10.0, 5.0, 6.0, 12.0, 10.0, 1.0, 1.0, null}
        };
        List<StorageRunResult> results = new ArrayList<>();
        String[] policies = {"fifo", "mclock", "mclock-per-client", "ours"};
        for (int c = 0; c < cells.length; c++) {
            for (int p = 0; p < policies.length; p++) {
                results.add(result("mix-" + c, policies[p], cells[c][p], 1, 0, cells[c][4 + p]));
            }
        }

        SweepSummary.Row ours = SweepSummary.of(results).policies().get(3);

        // Against fifo: 2 ÷ 80 and 3 ÷ 10; mix-2 has no within-baseline P99.999 of ours.
        assertThat(ours.withinBaselineVsFifo().cells()).isEqualTo(2);
        assertThat(ours.withinBaselineVsFifo().worst()).isEqualTo(0.3);
        assertThat(ours.withinBaselineVsFifo().worstCell()).isEqualTo("mix-1 seed 1");
        assertThat(ours.withinBaselineVsFifo().best()).isEqualTo(0.025);
        // Against mclock, the form with the shorter steady tail: mclock (10) in mix-0, per client (20) in mix-1.
        assertThat(ours.withinBaselineVsMclock().cells()).isEqualTo(2);
        assertThat(ours.withinBaselineVsMclock().worst()).isEqualTo(0.6);
        assertThat(ours.withinBaselineVsMclock().worstCell()).isEqualTo("mix-1 seed 1");
        assertThat(ours.withinBaselineVsMclock().best()).isEqualTo(0.5);
        assertThat(ours.withinBaselineVsMclock().median()).isCloseTo(0.55, org.assertj.core.data.Offset.offset(1e-12));
        // The steady columns are unchanged by it.
        assertThat(ours.steadyVsFifo().worst()).isEqualTo(1.2);
        assertThat(ours.aboveFifo()).containsExactly("mix-2 seed 1");
    }

    private static StorageRunResult result(String scenario, String policy, double steadyP99999, double hotP99) {
        return result(scenario, policy, steadyP99999, hotP99, 0);
    }

    private static StorageRunResult result(
            String scenario, String policy, double steadyP99999, double hotP99, long refused) {
        return result(scenario, policy, steadyP99999, hotP99, refused, steadyP99999);
    }

    private static StorageRunResult result(
            String scenario, String policy, double steadyP99999, double hotP99, long refused, Double withinP99999) {
        LatencySummary steady = new LatencySummary(100_000, 1.0, 2.0, 3.0, 4.0, steadyP99999, 1.0, steadyP99999);
        LatencySummary hot = new LatencySummary(1_000, 1.0, hotP99, null, null, null, 1.0, hotP99);
        LatencySummary within = new LatencySummary(
                withinP99999 == null ? 1_000 : 100_000,
                1.0,
                2.0,
                3.0,
                null,
                withinP99999,
                1.0,
                withinP99999 == null ? 4.0 : withinP99999);
        return new StorageRunResult(
                scenario,
                null,
                policy,
                1,
                20,
                1,
                steady,
                hot,
                steady,
                hot,
                within,
                within,
                1,
                1,
                50,
                "ours".equals(policy) ? 3.0 : 0,
                0,
                refused,
                0,
                null,
                null,
                1,
                1,
                1,
                null,
                null,
                null);
    }
}
