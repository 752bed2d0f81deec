package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;
import static org.assertj.core.data.Percentage.withPercentage;

import dev.tailor.admission.IoCostModel;
import dev.tailor.admission.IoKind;
import dev.tailor.datasets.BlockTrace;
import dev.tailor.testkit.SharedData;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a scenario becomes a run's inputs: cost model, rates, commitments, capacities, data files. */
class StorageSetupTest {

    @Test
    void costModel_anIoCostsItsMeanServiceTimeOverParallelism() {
        // Why: then a backend kept busy serves exactly 10^9 cost units per second for any mix, which is
        // how admission's capacity is set from the backend.
        BackendModel backend = new BackendModel(24, 254, 26.98, 50, 0.8, 0.4);
        IoCostModel cost = StorageSetup.costModel(backend);
        for (int bytes : new int[] {4096, 65536, 1 << 20}) {
            assertThat((double) cost.costUnits(IoKind.READ, bytes))
                    .isCloseTo(backend.meanServiceNanos(bytes, false) / 24, offset(1.0));
            assertThat((double) cost.costUnits(IoKind.WRITE, bytes))
                    .isCloseTo(backend.meanServiceNanos(bytes, true) / 24, offset(1.0));
        }
    }

    @Test
    void build_budgetBelowOneCostUnitPerInterval_isRefusedNamingBothFields() {
        String yaml = StorageScenarios.bundledText("burst-microbench")
                .replace("intervalMillis: 10 ", "intervalMillis: 0.1 ")
                .replace("  reserveFraction: 0.2 ", "  capacityFraction: 0.000001\n  reserveFraction: 0.2 ");
        StorageScenario s = StorageScenarios.parse(yaml, "f.yaml");

        assertThatThrownBy(() -> StorageSetup.build(s, relative -> {
                    throw new AssertionError("no data needed");
                }))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("burst-microbench: admission.capacityFraction: 0.000001 (expected: a budget of at least 1"
                        + " cost unit per interval; with intervalMillis 0.1 it gives proxy 0 0.100 (raise either))");
    }

    @Test
    void validation_writesThatCostNothing_areRefused_notAnEndlessRun() {
        // With a load target, a write-only tenant that costs nothing would scale its rate to infinity.
        String yaml = StorageScenarios.bundledText("burst-microbench")
                .replace("writeBaseMicros: 50", "writeBaseMicros: 0")
                .replace("writeMicrosPerKiB: 0.80", "writeMicrosPerKiB: 0");

        assertThatThrownBy(() -> StorageScenarios.parse(yaml, "f.yaml"))
                .hasMessageContaining(
                        "backend.writeBaseMicros: 0 with writeMicrosPerKiB 0 (expected: writes that take time)");
    }

    @Test
    void validation_calibrationWithExplicitNumbers_namesEveryOne() {
        String withSigma = StorageScenarios.bundledText("deployed-like")
                .replace(
                        "  calibrateFrom: tencent",
                        "  calibrateFrom: tencent\n  serviceSigma: 1.9\n  writeBaseMicros: -5");

        assertThatThrownBy(() -> StorageScenarios.parse(withSigma, "f.yaml"))
                .hasMessageContaining("backend: both calibrateFrom and writeBaseMicros, serviceSigma");
    }

    @Test
    void build_synthetic_ratesScaledToTheBaseLoad_commitmentsAndCapacity() throws IOException {
        StorageSetup setup = StorageSimulationTest.microbench(8, 1);
        double load = 0;
        for (StorageSetup.Tenant t : setup.tenants()) {
            load += t.requestsPerSecond() * t.meanCostUnits() / 1e9;
            assertThat(t.commitmentCostUnitsPerSecond())
                    .isCloseTo(2 * t.requestsPerSecond() * t.meanCostUnits(), withPercentage(1e-9));
        }
        assertThat(load).isCloseTo(0.75, offset(1e-9));
        assertThat(setup.tenants())
                .hasSize(9)
                .filteredOn(StorageSetup.Tenant::hot)
                .hasSize(1);
        assertThat(setup.tenants().get(8).bursts().multiplier()).isEqualTo(8);
        assertThat(setup.proxyCapacityCostUnitsPerSecond(0)).isEqualTo(1e9);
        assertThat(setup.label()).isEqualTo("burst-microbench ×8");
        assertThat(setup.notes()).anyMatch(n -> n.contains("75.0 % of the backend outside bursts"));
        // Commitments of twice the mean at 75 % load: 150 % of the capacity, which the guarantee scales.
        assertThat(setup.notes()).anyMatch(n -> n.startsWith("commitments on proxy 0 add up to 150 % of its capacity"));
    }

    @Test
    void build_manyOvercommittedProxies_oneNoteLine() throws IOException {
        // Why: a scenario may have up to 1,000 proxies, and a note per proxy buried the others.
        StorageSetup setup = StorageSimulationTest.setup(StorageSimulationTest.scenario(
                "proxies: 20\nbaseUtilizationPercent: 75",
                "  - {name: t, count: 20, requestsPerSecond: 100, commitmentRatio: 2,"
                        + " synthetic: {readFraction: 1, sizeBytes: [4096]}}\n"));
        assertThat(setup.notes())
                .filteredOn(n -> n.startsWith("commitments on"))
                .singleElement()
                .satisfies(n -> assertThat(n)
                        .startsWith("commitments on 20 proxies add up to more than their capacity"
                                + " (up to 150 %, proxy "));
    }

    @Test
    void variants_fractionalBurstMultipliers_readInTheProjectsNumberFormat() throws IOException {
        // Why: a variant's label heads its tables and plots and names its cells in the sweep summary; it
        // prints its multiplier as every other number of the text does (Numbers.format), not to two
        // decimals of its own.
        StorageScenario s = StorageScenarios.load("burst-microbench").toBuilder()
                .burstMultipliers(List.of(1.5, 12.5, 16.0))
                .build();
        List<StorageSetup> variants = StorageSimulationTest.setup(s).variants();

        assertThat(variants)
                .extracting(StorageSetup::label)
                .containsExactly("burst-microbench ×1.50", "burst-microbench ×12.5", "burst-microbench ×16");
        assertThat(variants.get(1).notes()).anyMatch(n -> n.endsWith("with bursts (burst multiplier 12.5)"));
    }

    @Test
    void build_proxiesWithoutTenants_areNotedOnce_asRuns() throws IOException {
        String tenant = """
                  - name: t
                    requestsPerSecond: 100
                    proxy: %d
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                """;
        StorageSetup many =
                StorageSimulationTest.setup(StorageSimulationTest.scenario("proxies: 1000", tenant.formatted(0)));
        assertThat(many.notes().stream().filter(n -> n.contains("no tenants")))
                .containsExactly("proxies 1–999 (999 of 1000) have no tenants: they stay idle");
        StorageSetup middle =
                StorageSimulationTest.setup(StorageSimulationTest.scenario("proxies: 5", tenant.formatted(2)));
        assertThat(middle.notes().stream().filter(n -> n.contains("no tenants")))
                .containsExactly("proxies 0, 1, 3, 4 (4 of 5) have no tenants: they stay idle");
        StorageSetup one =
                StorageSimulationTest.setup(StorageSimulationTest.scenario("proxies: 2", tenant.formatted(1)));
        assertThat(one.notes().stream().filter(n -> n.contains("no tenants")))
                .containsExactly("proxy 0 has no tenants: it stays idle");
    }

    @Test
    void build_noCommitmentRatio_fairShareOfTheProxy() throws IOException {
        StorageScenario s = StorageSimulationTest.scenario("proxies: 2\nbaseUtilizationPercent: 50", """
                  - name: t
                    count: 3
                    requestsPerSecond: 1
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                """);
        StorageSetup setup = StorageSimulationTest.setup(s);
        // Proxy 0 has two of the three equal tenants: 2/3 of the capacity, 1/3 each.
        assertThat(setup.proxyCapacityCostUnitsPerSecond(0)).isCloseTo(2e9 / 3, offset(1.0));
        for (StorageSetup.Tenant t : setup.tenants()) {
            assertThat(t.commitmentCostUnitsPerSecond()).isCloseTo(1e9 / 3, offset(1.0));
        }
        assertThat(setup.notes()).noneMatch(n -> n.startsWith("commitments"));
    }

    @Test
    void spread_secondBatches_evenlyOverTheirSecond() {
        // Why: the Tencent trace stamps whole seconds; replayed as stamped, a second's requests would
        // all arrive in the same nanosecond.
        List<BlockTrace.Request> batch =
                List.of(req(0), req(0), req(0), req(0), req(1_000_000_000L), req(1_000_000_000L));
        BlockTrace spread = StorageSetup.spread(BlockTrace.of("t", batch), 1_000_000_000L);
        assertThat(spread.requests())
                .extracting(BlockTrace.Request::arrivalNanos)
                .containsExactly(0L, 250_000_000L, 500_000_000L, 750_000_000L, 1_000_000_000L, 1_500_000_000L);
    }

    private static BlockTrace.Request req(long at) {
        return new BlockTrace.Request(at, 0, 4096, false);
    }

    @Test
    void build_missingData_saysWhereItLooked() {
        StorageScenario deployed = StorageScenarios.load("deployed-like");
        assertThatThrownBy(() -> StorageSetup.build(deployed, relative -> {
                    throw new IllegalArgumentException("dataset not found; looked at [/nowhere/" + relative
                            + "] (expected: set TAILOR_DATA_DIR to the shared data folder)");
                }))
                .hasMessageContaining("looked at [/nowhere/block_io/")
                .hasMessageContaining("TAILOR_DATA_DIR");
    }

    @Test
    void build_deployedLike_realTraces_top3Carry63Percent() throws IOException {
        StorageScenario s = StorageScenarios.load("deployed-like");
        SharedData.require("block_io");
        StorageSetup setup = StorageSetup.build(s, relative -> SharedData.require(relative));

        assertThat(setup.backend().parallelism()).isEqualTo(24);
        assertThat(setup.tenants()).hasSize(12);
        double all = setup.tenants().stream()
                .mapToDouble(StorageSetup.Tenant::requestsPerSecond)
                .sum();
        double top3 = setup.tenants().subList(0, 3).stream()
                .mapToDouble(StorageSetup.Tenant::requestsPerSecond)
                .sum();
        assertThat(top3 / all).isCloseTo(0.63, offset(1e-9));
        assertThat(setup.tenants().subList(0, 3))
                .allMatch(StorageSetup.Tenant::hot)
                .allMatch(t -> t.bursts().maxMillis() < 100);
        assertThat(setup.tenants().subList(3, 12)).noneMatch(StorageSetup.Tenant::hot);
        // Fair-share commitments: 1/12 of the backend each.
        assertThat(setup.tenants()).allMatch(t -> Math.abs(t.commitmentCostUnitsPerSecond() - 1e9 / 12) < 1);
        double load = setup.tenants().stream()
                .mapToDouble(t -> t.requestsPerSecond() * t.meanCostUnits())
                .sum();
        assertThat(load / 1e9).isCloseTo(0.50, offset(1e-9));
        // The Tencent excerpt's whole-second stamps are spread over each second.
        Excerpt.Cursor tencent = setup.tenants().get(1).trace().cursor(1);
        assertThat(tencent.next().arrivalNanos()).isPositive();
    }

    @Test
    void build_severalProxiesWithTenants_noteTheirShares_forSegmentAdmissionRunsOnly() throws IOException {
        // Why: each proxy budgets at least a share of the backend, and with fixed shares (the paper's
        // mechanism, fixed-shares) a busy proxy cannot use another's; a user running several proxies should
        // hear so before reading the idle capacity.
        String tenants = """
                  - {name: t, count: 4, requestsPerSecond: 100, synthetic: {readFraction: 0.7, sizeBytes: [4096]}}
                """;
        StorageSetup four = StorageSimulationTest.setup(
                StorageSimulationTest.scenario("proxies: 4\nbaseUtilizationPercent: 40", tenants));
        assertThat(four.notes())
                .filteredOn(n -> n.contains("share one backend"))
                .singleElement()
                .satisfies(n -> assertThat(n)
                        .startsWith(
                                "4 proxies share one backend, each budgeting at least a share of it (25 / 25 / 25 / 25 %,")
                        .contains("and more while its requests queue little there (admission.targetSlowdown 2)")
                        .contains("fixed-shares, spare-exchange and segment-admission-paper keep the fixed shares"));
        assertThat(four.notes(List.of("fifo", "mclock"))).noneMatch(n -> n.contains("share one backend"));
        assertThat(four.notes(List.of("fifo", "segment-admission", "fixed-shares")))
                .isEqualTo(four.notes());
        // Runs whose admission policies all keep fixed shares are told so, in the same place.
        List<String> fixed = four.notes(List.of("fifo", "spare-exchange", "fixed-shares"));
        assertThat(fixed).hasSameSizeAs(four.notes());
        assertThat(fixed)
                .filteredOn(n -> n.contains("share one backend"))
                .singleElement()
                .satisfies(n -> assertThat(n)
                        .startsWith(
                                "4 proxies share one backend, each budgeting a fixed share of it (25 / 25 / 25 / 25 %,")
                        .contains("a busy proxy holds work while another's share expires unused"));
        // Proxies without tenants share nothing; one proxy with tenants gets no note.
        StorageSetup idleOthers = StorageSimulationTest.setup(StorageSimulationTest.scenario(
                "proxies: 3\nbaseUtilizationPercent: 40", tenants.replace("count: 4,", "count: 4, proxy: 1,")));
        assertThat(idleOthers.notes()).noneMatch(n -> n.contains("share one backend"));
        // Eight equal shares are 12.5 % each, not "13 / 12 / ..." adding up to 101 %.
        StorageSetup eight = StorageSimulationTest.setup(StorageSimulationTest.scenario(
                "proxies: 8\nbaseUtilizationPercent: 40", tenants.replace("count: 4,", "count: 8,")));
        assertThat(eight.notes())
                .anyMatch(n -> n.contains("(12.5 / 12.5 / 12.5 / 12.5 / 12.5 / 12.5 / 12.5 / 12.5 %,"));
        StorageSetup sixteen = StorageSimulationTest.setup(StorageSimulationTest.scenario(
                "proxies: 16\nbaseUtilizationPercent: 40", tenants.replace("count: 4,", "count: 16,")));
        assertThat(sixteen.notes())
                .anyMatch(n -> n.startsWith(
                        "16 proxies share one backend, each budgeting at least a share of it (6.2–6.3 % each,"));
    }

    /**
     * 1 MiB reads (1,258,488 cost units each) on 16 proxies with 10 ms intervals, each proxy's budget
     * about 620,000 per interval: the setup says so; the same tenants on one proxy, or with 4 KiB reads, fit.
     */
    @Test
    void build_aRequestCostingMoreThanAProxysIntervalBudget_isNoted() throws IOException {
        String tenants = """
                  - name: t
                    count: 32
                    requestsPerSecond: 1
                    synthetic: {readFraction: 0.7, sizeBytes: [%d]}
                """;
        StorageSetup sixteen = StorageSimulationTest.setup(
                StorageSimulationTest.scenario("proxies: 16\nbaseUtilizationPercent: 40", tenants.formatted(1 << 20)));
        assertThat(sixteen.notes())
                .filteredOn(n -> n.contains("budget per interval"))
                .singleElement()
                .satisfies(n -> assertThat(n)
                        .startsWith("on 16 of 16 proxies a request can cost more than the proxy's budget per interval")
                        .containsPattern(
                                "proxy \\d+: 6\\d\\d,\\d{3} cost units per 10 ms, its largest request 1,258,488\\)")
                        .contains("segment admission admits such a request beyond its tenant's baseline on its turn,"
                                + " one at a time per proxy (overlapping-advances: while its proxy's advances"
                                + " outstanding are less than its cost)")
                        .contains("segment-admission-paper and no-oversize-advance hold it for 3 intervals or more"));
        // A note on admission's budget, for runs of a segment-admission policy only.
        assertThat(sixteen.notes(List.of("fifo", "mclock"))).noneMatch(n -> n.contains("budget per interval"));
        assertThat(sixteen.notes(List.of("fifo", "no-reserve"))).isEqualTo(sixteen.notes());
        StorageSetup one = StorageSimulationTest.setup(
                StorageSimulationTest.scenario("baseUtilizationPercent: 40", tenants.formatted(1 << 20)));
        assertThat(one.notes()).noneMatch(n -> n.contains("budget per interval"));
        StorageSetup small = StorageSimulationTest.setup(
                StorageSimulationTest.scenario("proxies: 16\nbaseUtilizationPercent: 40", tenants.formatted(4096)));
        assertThat(small.notes()).noneMatch(n -> n.contains("budget per interval"));
    }

    @Test
    void build_provisionedBaseline_isTheCommitment_inCostUnits_andMayNotExceedTheCapacity() throws IOException {
        StorageScenario s = StorageSimulationTest.scenario("", """
                  - name: t
                    requestsPerSecond: 100
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                    baseline: {iops: 3000, mibPerSecond: 50}
                  - name: u
                    requestsPerSecond: 100
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                """);
        StorageSetup setup = StorageSimulationTest.setup(s);
        var cost = setup.costModel();
        assertThat(setup.tenants().get(0).commitmentCostUnitsPerSecond())
                .isCloseTo(
                        3000 * cost.readBaseCostUnits() + 50.0 * (1 << 20) * cost.readCostUnitsPerByte(),
                        withPercentage(1e-9));
        assertThat(setup.tenants().get(1).commitmentCostUnitsPerSecond()).isEqualTo(1e9 / 2); // fair share

        // Above the capacity: told when the scenario is read, the backend being explicit (StorageBuildProblemsTest).
        assertThatThrownBy(() -> StorageSimulationTest.scenario("", """
                  - name: t
                    requestsPerSecond: 100
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                    baseline: {iops: 100000, mibPerSecond: 0}
                """))
                .hasMessageContaining("tenants[0].baseline.iops: 100000 (expected: at most the backend's capacity,"
                        + " 87223: no backend can promise more than it serves) at line 13");
        assertThatThrownBy(() -> StorageSimulationTest.scenario("", """
                  - name: t
                    requestsPerSecond: 100
                    synthetic: {readFraction: 1, sizeBytes: [4096]}
                    commitmentRatio: 2
                    baseline: {iops: -3, mibPerSecond: 1}
                """))
                .hasMessageContaining("tenants[0].baseline.iops: -3 (expected: a number in (0, 100000000])")
                .hasMessageContaining("tenants[0].baseline: given with commitmentRatio 2 (expected: one of them)");
    }
}
