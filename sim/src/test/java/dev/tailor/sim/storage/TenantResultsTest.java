package dev.tailor.sim.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Per-tenant results: each tenant's requests and latency are its share of its class's, measured the
 * same way, under every policy.
 */
class TenantResultsTest {

    @Test
    void tenants_oneEachInTheSetupsOrder_andTheirFiguresAddUpToTheClasses() throws IOException {
        StorageSetup setup = StorageSimulationTest.microbench(16, 1);
        for (String policy : List.of("fifo", "mclock", "segment-admission")) {
            StorageRunResult r = StorageSimulation.run(setup, policy, null);
            assertThat(r.refused()).as(policy).isZero();
            List<StorageRunResult.TenantResult> tenants = r.tenants();
            assertThat(tenants)
                    .extracting(StorageRunResult.TenantResult::name)
                    .containsExactlyElementsOf(setup.tenants().stream()
                            .map(StorageSetup.Tenant::name)
                            .toList());
            for (int i = 0; i < tenants.size(); i++) {
                StorageSetup.Tenant t = setup.tenants().get(i);
                assertThat(tenants.get(i).tenantClass()).isEqualTo(t.hot() ? "hot" : "steady");
                assertThat(tenants.get(i).baselineCostUnitsPerSecond()).isEqualTo(t.commitmentCostUnitsPerSecond());
                assertThat(tenants.get(i).baselineIops()).isNull();
                assertThat(tenants.get(i).requests()).as(t.name()).isPositive();
            }
            assertThat(tenants.stream()
                            .mapToLong(StorageRunResult.TenantResult::requests)
                            .sum())
                    .as(policy)
                    .isEqualTo(r.offeredRequests());
            for (String cls : List.of("steady", "hot")) {
                LatencySummary whole = cls.equals("steady") ? r.steady() : r.hot();
                List<StorageRunResult.TenantResult> of = tenants.stream()
                        .filter(t -> t.tenantClass().equals(cls))
                        .toList();
                assertThat(of).as(cls).isNotEmpty();
                assertThat(of.stream().mapToLong(t -> t.latency().requests()).sum())
                        .as(policy + " " + cls)
                        .isEqualTo(whole.requests());
                // The class's slowest request is one of its tenants'.
                assertThat(of.stream()
                                .mapToDouble(t -> t.latency().maxMillis())
                                .max()
                                .orElseThrow())
                        .as(policy + " " + cls)
                        .isEqualTo(whole.maxMillis());
            }
            long steadyWithin = Math.round(tenants.stream()
                    .filter(t -> t.tenantClass().equals("steady"))
                    .mapToDouble(t -> t.requests() * t.withinBaselinePercent() / 100)
                    .sum());
            assertThat(steadyWithin)
                    .as(policy)
                    .isEqualTo(r.steadyWithinBaseline().requests());
        }
    }

    @Test
    void classOfOneTenant_itsFiguresAreTheClasss_andAProvisionedBaselineIsGivenAsStated() throws IOException {
        StorageScenario s = StorageSimulationTest.scenario("baseUtilizationPercent: 70", """
                  - name: alone
                    requestsPerSecond: 10
                    synthetic: {readFraction: 1.0, sizeBytes: [4096]}
                  - name: bursty
                    requestsPerSecond: 1
                    synthetic: {readFraction: 1.0, sizeBytes: [4096]}
                    bursts: {meanGapSeconds: 0.5, minMillis: 20, maxMillis: 80, multiplier: 8}
                    baseline: {iops: 2000, mibPerSecond: 4}
                """).toBuilder()
                .durationSeconds(3.0)
                .build();
        StorageSetup setup = StorageSimulationTest.setup(s);
        for (String policy : List.of("fifo", "segment-admission")) {
            StorageRunResult r = StorageSimulation.run(setup, policy, null);
            StorageRunResult.TenantResult alone = r.tenants().get(0);
            StorageRunResult.TenantResult bursty = r.tenants().get(1);
            assertThat(alone.latency().p99999Millis()).as(policy).isNotNull();
            assertThat(alone.latency()).as(policy).isEqualTo(r.steady());
            assertThat(bursty.latency()).as(policy).isEqualTo(r.hot());
            assertThat(alone.baselineIops()).isNull();
            assertThat(bursty.baselineIops()).isEqualTo(2000.0);
            assertThat(bursty.baselineMiBPerSecond()).isEqualTo(4.0);
            assertThat(bursty.baselineCostUnitsPerSecond())
                    .isEqualTo(setup.tenants().get(1).commitmentCostUnitsPerSecond());
            // Its rate is above what it was provisioned: the share within baseline says so.
            assertThat(bursty.offeredPercentOfBaseline()).isGreaterThan(100);
            assertThat(bursty.withinBaselinePercent()).isLessThan(100).isPositive();
        }
    }

    @Test
    void json_hasEachTenantsFields_andTheClassesAsBefore() throws IOException {
        StorageRunResult r = StorageSimulation.run(StorageSimulationTest.microbench(4, 0.5), "fifo", null);
        JsonNode json = new ObjectMapper().readTree(new ObjectMapper().writeValueAsString(r));
        assertThat(json.get("steady").get("requests").asLong())
                .isEqualTo(r.steady().requests());
        JsonNode tenants = json.get("tenants");
        assertThat(tenants.size()).isEqualTo(r.tenants().size());
        JsonNode first = tenants.get(0);
        assertThat(first.get("name").asText()).isEqualTo(r.tenants().get(0).name());
        assertThat(first.get("class").asText()).isIn("steady", "hot");
        assertThat(first.has("tenantClass")).isFalse();
        assertThat(first.has("baselineIops")).as("absent unless provisioned so").isFalse();
        for (String field : List.of(
                "proxy",
                "baselineCostUnitsPerSecond",
                "offeredCostUnitsPerSecond",
                "requests",
                "withinBaselinePercent")) {
            assertThat(first.get(field).isNumber()).as(field).isTrue();
        }
        for (String field :
                List.of("requests", "p50Millis", "p99Millis", "p999Millis", "p9999Millis", "p99999Millis")) {
            assertThat(first.get("latency").has(field)).as(field).isTrue();
        }
        // Half a second of one tenant is too few for P99.999: null, as for the classes.
        assertThat(first.get("latency").get("p99999Millis").isNull()).isTrue();
    }
}
